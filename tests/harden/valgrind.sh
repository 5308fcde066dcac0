#!/bin/sh
# valgrind.sh: `make valgrind` (not part of `make check`): every test program
# of the suite, every module in samples/ and a set of command-line error
# paths under valgrind memcheck. Any invalid access, use of uninitialised
# memory or leak (definite, indirect or possible) fails (exit 1). It does not
# judge results beyond what each program checks itself (the samples are also
# run with --expect on their golden output).
#
# Usage: tests/harden/valgrind.sh PROGRAM...   (make passes $(check_PROGRAMS))
#   VALGRIND_ONLY="check_core check_io"  run only these programs (basenames)
#                                         or runs (names as printed)
#   VALGRIND_PARTS="programs samples cli" run only these parts (default all)
# Run from the build directory. Logs: tests/harden/vg/NAME.log.
#
# Check suites run with fork mode off (CK_FORK=no) so valgrind sees every
# test's frees; Check then enforces no timeouts, so slow tests only take
# long. The fuzz replay programs take their regression directory.
srcdir=${srcdir:-.}
command -v valgrind >/dev/null || { echo "valgrind: not installed (apt-get install valgrind)"; exit 77; }
supp=
[ -f "$srcdir/tests/harden/valgrind.supp" ] && supp="--suppressions=$srcdir/tests/harden/valgrind.supp"
# Without --track-origins (it makes memcheck ~1.5x slower and finds nothing
# more): a program that fails is run again with it, so its log says where
# an uninitialised value came from.
VG="valgrind -q --error-exitcode=1 --leak-check=full --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible $supp"
parts=${VALGRIND_PARTS:-programs samples cli}
logs=tests/harden/vg
mkdir -p "$logs"
fail=0; nprog=0; ntests=0; nruns=0
start=$(date +%s)

want() {   # PART: is this part selected?
  case " $parts " in *" $1 "*) return 0 ;; esac; return 1
}
only() {   # BASENAME: is this program selected?
  [ -z "$VALGRIND_ONLY" ] && return 0
  case " $VALGRIND_ONLY " in *" $1 "*) return 0 ;; esac; return 1
}

# ---- every test program --------------------------------------------------
# One program: its log, a PASS/FAIL line, and "STATUS TESTS" in NAME.status.
vg_program() {
  prog=$1
  base=$(basename "$prog" .exe)
  args=
  case $base in
    fuzz_replay_*)   # a replay driver: its regression inputs, if any
      dir=$srcdir/tests/fuzz-regressions/${base#fuzz_replay_}
      [ -n "$(ls "$dir" 2>/dev/null)" ] || { echo "SKIP: $base (no regression inputs)"; return 0; }
      args=$dir ;;
  esac
  vg=$VG
  t0=$(date +%s)
  # shellcheck disable=SC2086
  if CK_FORK=no ./libtool --mode=execute $vg "./$prog" $args >"$logs/$base.log" 2>&1; then
    st=PASS
  else
    st=FAIL
    # shellcheck disable=SC2086
    CK_FORK=no ./libtool --mode=execute $VG --track-origins=yes "./$prog" $args >>"$logs/$base.log" 2>&1
  fi
  n=$(sed -n 's/.*Checks: \([0-9]*\),.*/\1/p' "$logs/$base.log" | tail -n 1)
  [ -n "$n" ] || n=$(ls "$args" 2>/dev/null | wc -l)   # replay: one test per input
  echo "$st $n" >"$logs/$base.status"
  echo "$st: $base ($n tests, $(( $(date +%s) - t0 ))s)"
  [ $st = PASS ] || tail -n 40 "$logs/$base.log"
}
# The script runs itself with --program for each one, VALGRIND_JOBS (default:
# one per core) at a time: memcheck runs a program on one core.
if [ "${1:-}" = --program ]; then
  vg_program "$2"
  exit 0
fi
# The slowest programs start first, so that no long one starts last while
# the other cores have nothing left to do (their order: slowest first).
SLOW="check_fuse check_control check_dot check_elementwise check_fft check_numeric"
if want programs; then
  for prog in "$@"; do
    base=$(basename "$prog" .exe)
    rm -f "$logs/$base.status"
    only "$base" || continue
    rank=99; i=0
    for s in $SLOW; do i=$((i + 1)); [ "$s" = "$base" ] && rank=$i; done
    echo "$rank $prog"
  done | sort -n -s -k1,1 | cut -d' ' -f2- |
    xargs -P "${VALGRIND_JOBS:-$(nproc)}" -I PROG sh "$0" --program PROG
  for prog in "$@"; do
    base=$(basename "$prog" .exe)
    [ -f "$logs/$base.status" ] || continue
    read -r st n <"$logs/$base.status"
    nprog=$((nprog + 1)); ntests=$((ntests + n))
    [ "$st" = PASS ] || fail=1
  done
fi

# ---- command-line runs ---------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-vg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# run NAME WANT-EXIT ARGS...: ./hlorun ARGS under valgrind; it must exit with
# WANT-EXIT (or any status for "-") and valgrind must report nothing.
run() {
  name=$1; want_rc=$2; shift 2
  only "$name" || return 0
  ./libtool --mode=execute $VG --error-exitcode=99 ./hlorun "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  nruns=$((nruns + 1))
  if grep -q '^==[0-9]*==' "$tmp/err" || [ $rc = 99 ]; then
    echo "FAIL: $name (valgrind)"; fail=1
    ./libtool --mode=execute $VG --track-origins=yes --error-exitcode=99 ./hlorun "$@" >/dev/null 2>"$tmp/err"
    cat "$tmp/err"
  elif [ "$want_rc" != - ] && [ "$rc" != "$want_rc" ]; then
    echo "FAIL: $name (exit $rc, want $want_rc)"; tail -n 20 "$tmp/err"; fail=1
  else
    echo "PASS: $name"
  fi
}

# The command-line runs go on while the samples run (each run is one
# process on one core): a second copy of this script does them.
clipid=
if want samples && want cli; then
  VALGRIND_PARTS=cli sh "$0" >"$logs/cli.out" 2>&1 &
  clipid=$!
  parts=samples
fi

S=$srcdir/samples
if want samples; then
  libs=samples/plugins/.libs
  for m in "$S"/*.hlo; do
    mod=$(basename "$m" .hlo)
    case $mod in
      ffi_affine|ffi_affine_quoted) bind="--custom-call affine=$libs/libaffine.so:sample_affine" ;;
      ffi_window_sum) bind="--custom-call window_sum=$libs/libwindow_sum.so:sample_window_sum" ;;
      ffi_repeat_v3) bind="--custom-call repeat=$libs/librepeat_v3.so:sample_repeat_v3" ;;
      ffi_counter) bind="--plugin $libs/libcounter_plugin.so" ;;
      *) bind= ;;   # ffi_builtins and the plain modules need no binding
    esac
    # A before-optimization twin takes its after-optimization module's files.
    case $mod in cpu_before_opt) files=cpu_after_opt ;; *) files=$mod ;; esac
    exp=
    for e in "$S/$files.expected.txt" "$S/$files.expected" "$S/$files.expected.npy" "$S/$files.expected.npz"; do [ -f "$e" ] && { exp="--expect $e"; break; }; done
    ins=$(ls "$S/$files".in[0-9]*.txt "$S/$files".in[0-9]*.npy 2>/dev/null | sort -V)
    # shellcheck disable=SC2086
    if [ -n "$ins" ]; then
      run "sample $mod" 0 $bind $exp "$m" $ins
      run "sample $mod --random" 0 $bind --random "$m"
    else
      run "sample $mod" 0 $bind $exp "$m"
    fi
  done
  run "sample suite" 0 --suite "$S/suite"
  # Eight devices as threads: the communicator and the collectives.
  run "sample spmd/mlp_2x4" 0 --expect "$S/spmd/mlp_2x4.expected.txt" --rtol 0 --atol 0 \
    "$S/spmd/mlp_2x4.hlo" "$S/spmd/mlp.in0.txt" "$S/spmd/mlp.in1.txt" "$S/spmd/mlp.in2.txt" \
    "$S/spmd/mlp.in3.txt"
  # Manual regions: shards by sharding, tiles assembled over the exchange.
  run "sample spmd/mlp_shmap" 0 --expect "$S/spmd/mlp_2x4.expected.txt" --rtol 1e-5 --atol 1e-6 \
    "$S/spmd/mlp_shmap.mlir" "$S/spmd/mlp.in0.txt" "$S/spmd/mlp.in1.txt" "$S/spmd/mlp.in2.txt" \
    "$S/spmd/mlp.in3.txt"
  run "devices manual" 0 --expect "$srcdir/tests/devices/manual.expected" "$srcdir/tests/devices/manual.hlo" \
    "$srcdir/tests/devices/manual.in0.txt"
  run "devices forms" 0 --per-device-outputs "$srcdir/tests/devices/forms.hlo"
  run "devices deadlock" 2 "$srcdir/tests/devices/deadlock.hlo"
  # The in-place collective-permute, its offset errors, and 64 devices.
  run "devices inplace" 0 --per-device-outputs "$srcdir/tests/devices/inplace.hlo"
  run "devices inplace output offset" 2 "$srcdir/tests/devices/inplace_oob_out.hlo"
  run "devices inplace input offset" 2 "$srcdir/tests/devices/inplace_oob_in.hlo"
  run "devices inplace offset sets" 2 "$srcdir/tests/devices/inplace_sets.hlo"
  run "devices mesh64" 0 --per-device-outputs "$srcdir/tests/devices/mesh64.hlo"
  # samples/xla-ffi: the legacy-API handlers build without XLA's headers;
  # the typed-FFI ones (handlers.cc, static_reg.cc) need them, so are left
  # to samples/xla-ffi/run.sh.
  X=$S/xla-ffi
  if command -v "${CXX:-c++}" >/dev/null &&
     "${CXX:-c++}" -std=c++17 -O1 -g -shared -fPIC "$X/legacy.cc" -o "$tmp/lg.so" 2>"$tmp/err"; then
    run "sample xla-ffi/lg1" 0 --expect "$X/lg1.expected" --custom-call "lg_add=$tmp/lg.so" "$X/lg1.hlo" "$X/x4.txt"
    run "sample xla-ffi/lg2" 0 --expect "$X/lg2.expected" --custom-call "lg_checked=$tmp/lg.so" "$X/lg2.hlo" "$X/pos4.txt"
    run "sample xla-ffi/lg2 failure" 2 --custom-call "lg_checked=$tmp/lg.so" "$X/lg2.hlo" "$X/x4.txt"
    run "sample xla-ffi/lg3" 0 --expect "$X/lg3.expected" --custom-call "lg_opaque=$tmp/lg.so" "$X/lg3.hlo" "$X/x4.txt"
    run "sample xla-ffi/lg3 failure" 2 --custom-call "lg_opaque=$tmp/lg.so" "$X/lg3_empty.hlo" "$X/x4.txt"
  else
    echo "SKIP: samples/xla-ffi legacy handlers (no C++ compiler)"
  fi
fi

if want cli; then
  C=$srcdir/tests/cli
  d=$srcdir/tests/harden
  lib=$PWD/tests/.libs/libcrashy.so
  run "cli literal inputs" 0 "$C/add.hlo" "$C/a.txt" "$C/b.txt"
  run "cli npz output" 0 -o "$tmp/r.npz" "$C/pair.hlo" --random
  run "cli npy input" 0 -o "$tmp/r.npy" "$S/suite/softplus_npy/module.hlo" "$S/suite/softplus_npy/in0.npy"
  run "cli print" 0 --print "$S/scan.hlo"
  run "cli custom call" 0 --custom-call "twice=$lib:twice" "$d/call.hlo" "$d/x.txt"
  run "cli parse error" 2 "$C/bad.hlo"
  run "cli missing module" 2 "$tmp/none.hlo"
  run "cli missing input" 2 "$C/add.hlo" "$C/a.txt" "$tmp/none.txt"
  run "cli too few inputs" 2 "$C/add.hlo" "$C/a.txt"
  run "cli wrong input type" 2 "$C/add.hlo" "$C/a.txt" "$C/b_s32.txt"
  run "cli unbound custom call" 2 "$S/ffi_affine.hlo"
  run "cli missing plugin" 2 --custom-call "twice=$tmp/none.so:twice" "$d/call.hlo" "$d/x.txt"
  run "cli max-iterations" 2 --max-iterations 10 "$d/endless.hlo" "$d/x.txt"
  run "cli max-memory" 2 --max-memory 1K --random "$S/mlp_train_step.hlo"
  run "cli bad option" 2 --no-such-option "$C/add.hlo"
  run "cli verifier" 2 --random "$srcdir/tests/verify/elementwise_shape.hlo"
  run "cli verifier --print" 2 --print "$srcdir/tests/verify/while_body.hlo"
  run "cli isolated custom call" 0 --isolate-custom-calls --crash-dir "$tmp" --custom-call "twice=$lib:twice" "$d/call.hlo" "$d/x.txt"
  run "cli isolated handler error" 2 --isolate-custom-calls --crash-dir "$tmp" --custom-call "twice=$lib:crash_error" "$d/call_v2.hlo" "$d/x.txt"
  run "cli unwritable output" 2 -o "$tmp/no/dir/r.npy" "$C/add.hlo" "$C/a.txt" "$C/b.txt"
  run "cli extract in a loop" 0 --random --extract 'body/y@2:1' "$tmp/extract" "$srcdir/tests/repro/loop.hlo"
  run "cli extract unknown name" 2 --random --extract mm "$tmp/extract2" "$srcdir/tests/repro/loop.hlo"
  # The first divergence on many devices (tests/diverge/md.sh).
  M=$srcdir/tests/diverge/md
  G=$M/passes/module_0001.jit_g
  run "cli reference on 2 replicas" 1 --reference "$M/ok.hlo" --per-device-outputs "$M/pre.hlo" "$M/p2.txt"
  run "cli reference f64 on 2 replicas" 0 --reference-precision f64 --per-device-outputs "$M/ok.hlo" "$M/p2.txt"
  run "cli reference on 2 partitions" 1 --reference "$G.0000.spmd.after_spmd-partitioning.before_algsimp.txt" "$G.0001.simplification.after_algsimp.before_cse.txt" "$srcdir/tests/diverge/x4.txt"
  sed 's/replica_count=2/replica_count=4/' "$M/ok.hlo" > "$tmp/ok4.hlo"
  run "cli reference on another grid" 2 --reference "$tmp/ok4.hlo" "$M/dev1.hlo" "$M/p2.txt"
  run "cli passes on 2 partitions" 1 --passes "$M/passes" "$srcdir/tests/diverge/x4.txt"
  run "cli passes partitioner" 1 --passes "$M/passes_spmd" "$srcdir/tests/diverge/x4.txt"
fi

if [ -n "$clipid" ]; then
  wait "$clipid" || fail=1
  cat "$logs/cli.out"
fi

secs=$(( $(date +%s) - start ))
echo "valgrind: $nprog programs ($ntests tests), $nruns command-line runs, ${secs}s"
exit $fail
