#!/bin/sh
# valgrind.sh: `make valgrind` (not part of `make check`): a representative
# set of Check suites and command-line runs under valgrind memcheck. Any
# invalid access, use of uninitialised memory or leak fails (exit 1).
# Check's fork mode is off so valgrind sees each test's frees.
# Usage: tests/harden/valgrind.sh [SUITE...] (default: the set below).
srcdir=${srcdir:-.}
command -v valgrind >/dev/null || { echo "valgrind: not installed (apt-get install valgrind)"; exit 77; }
VG="valgrind -q --error-exitcode=1 --leak-check=full --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible --track-origins=yes"
suites=${*:-"check_core check_io check_harden check_ffi check_ffi_attrs check_parser check_control check_sort"}
fail=0
export CK_FORK=no
for s in $suites; do
  if CK_DEFAULT_TIMEOUT=600 ./libtool --mode=execute $VG "./tests/$s" >"$s.valgrind.log" 2>&1; then
    echo "PASS: $s"
  else
    echo "FAIL: $s (see $s.valgrind.log)"; tail -n 40 "$s.valgrind.log"; fail=1
  fi
done
lib=$PWD/tests/.libs/libcrashy.so
d=$srcdir/tests/harden
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-vg.XXXXXX")
cli() {   # NAME ARGS...: the command under valgrind; its exit status is not judged
  name=$1; shift
  ./libtool --mode=execute $VG ./hlorun "$@" >"$tmp/out" 2>"$tmp/err"
  if grep -q '^==[0-9]*==' "$tmp/err"; then echo "FAIL: cli $name"; cat "$tmp/err"; fail=1
  else echo "PASS: cli $name"; fi
}
cli run "$srcdir/tests/cli/add.hlo" "$srcdir/tests/cli/a.txt" "$srcdir/tests/cli/b.txt"
cli npz -o "$tmp/r.npz" "$srcdir/tests/cli/pair.hlo" --random
cli print --print "$srcdir/samples/scan.hlo"
cli parse-error "$srcdir/tests/cli/bad.hlo"
cli custom-call --custom-call "twice=$lib:twice" "$d/call.hlo" "$d/x.txt"
cli max-iterations --max-iterations 10 "$d/endless.hlo" "$d/x.txt"
cli samples-while --random "$srcdir/samples/mlp_train_step.hlo"
rm -rf "$tmp"
exit $fail
