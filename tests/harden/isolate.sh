#!/bin/sh
# isolate.sh: crash-proof custom calls (--isolate-custom-calls). Each
# misbehaving handler of tests/harden/crashy.c (segfault, abort, endless
# loop, exit(3), an error through the status) must fail the run with exit 2
# and a message naming the target, the instruction and its line, and what
# happened; crashes must leave the inputs for replay. Without isolation, a
# crash is still reported (target, instruction, signal) with exit 2. A well-behaved handler
# must give the same result isolated and not, and the FFI samples must pass
# isolated too.
srcdir=${srcdir:-.}
HLORUN=./hlorun
[ -x "$HLORUN" ] || { echo "isolate: ./hlorun is not built; skipping"; exit 77; }
lib=$PWD/tests/.libs/libcrashy.so
libs=samples/plugins/.libs
d=$srcdir/tests/harden
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-isolate.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
# A handler calling exit() runs LeakSanitizer's exit check in the worker in
# sanitizer builds; what the parent must report is the exit status.
# ASan's own SIGSEGV handler would turn the deliberate crash into an error
# exit; the test is about how the parent reports a real signal.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:handle_segv=0
export ASAN_OPTIONS

check() {   # NAME WANT-EXIT OUTPUT-PATTERN (case glob) -- HLORUN ARGS
  name=$1 want=$2 pat=$3; shift 4
  out=$("$HLORUN" "$@" 2>&1); rc=$?
  case "$rc:$out" in
    "$want:"$pat) echo "PASS: $name" ;;
    *) echo "FAIL: $name (exit $rc, want $want)"; echo "$out"; fail=1 ;;
  esac
}

# Not isolated, a crashing handler takes the process down, but the command
# still says which handler crashed, with what, and how to contain it: exit 2.
inproc='hlorun: error: the handler of custom-call target "twice" (instruction c, *call.hlo line 5) crashed with signal'
check in-process-segfault 2 "$inproc 11 (Segmentation fault); run with --isolate-custom-calls*" -- \
  --custom-call "twice=$lib:crash_segv" "$d/call.hlo" "$d/x.txt"
check in-process-abort 2 "$inproc 6 (Aborted); run with --isolate-custom-calls*" -- \
  --custom-call "twice=$lib:crash_abort" "$d/call.hlo" "$d/x.txt"

iso="--isolate-custom-calls --crash-dir $tmp"
where='*call.hlo:5:*error: in c (custom-call): the handler of custom-call target "twice"'
check segfault 2 "$where crashed with signal 11 (Segmentation fault) in its isolated worker process; its inputs are saved for replay in $tmp/hlorun-crash-twice-*/*" -- \
  $iso --custom-call "twice=$lib:crash_segv" "$d/call.hlo" "$d/x.txt"
check abort 2 "$where crashed with signal 6 (Aborted) in its isolated worker process*" -- \
  $iso --custom-call "twice=$lib:crash_abort" "$d/call.hlo" "$d/x.txt"
check hang 2 "$where did not finish within 1 seconds and was killed (--custom-call-timeout)*" -- \
  $iso --custom-call-timeout 1 --custom-call "twice=$lib:crash_loop" "$d/call.hlo" "$d/x.txt"
check exit 2 "$where exited the process with status 3 instead of returning*" -- \
  $iso --custom-call "twice=$lib:crash_exit" "$d/call.hlo" "$d/x.txt"
check run-timeout 2 '*error: in c (custom-call): time limit of 1 seconds exceeded (--timeout) while the custom call to "twice" was running*' -- \
  $iso --timeout 1 --custom-call "twice=$lib:crash_loop" "$d/call.hlo" "$d/x.txt"
n=$(ls "$tmp" | wc -l)
check error 2 '*call_v2.hlo:5:*error: in c (custom-call): handler of custom-call target "twice" failed: crash_error: refusing on purpose*' -- \
  $iso --custom-call "twice=$lib:crash_error" "$d/call_v2.hlo" "$d/x.txt"
[ "$(ls "$tmp" | wc -l)" = "$n" ] && echo "PASS: an error saves nothing" || { echo "FAIL: an error saved inputs"; fail=1; }

# The segfault's directory: the operand, the description, a replay module
# that runs (with a good handler) to 2*x.
dir=$(dirname "$(grep -l 'Segmentation fault' "$tmp"/hlorun-crash-twice-*/call.txt | head -n 1)")
if [ -f "$dir/in0.npy" ] && grep -q '^target: twice$' "$dir/call.txt" &&
   grep -q '^api_version: 1 (API_VERSION_ORIGINAL)$' "$dir/call.txt" &&
   grep -q 'Segmentation fault' "$dir/call.txt" &&
   "$HLORUN" --custom-call "twice=$lib:twice" --expect "$d/want_v2.txt" "$dir/replay.hlo" "$dir/in0.npy"; then
  echo "PASS: replay directory"
else
  echo "FAIL: replay directory $dir"; ls -l "$dir"; cat "$dir/call.txt" "$dir/replay.hlo"; fail=1
fi

# Well-behaved: the same output isolated and in-process.
a=$("$HLORUN" --custom-call "twice=$lib:twice" "$d/call.hlo" "$d/x.txt" 2>&1)
b=$("$HLORUN" $iso --custom-call "twice=$lib:twice" "$d/call.hlo" "$d/x.txt" 2>&1)
if [ "$a" = "$b" ] && [ "$a" = "$(cat "$d/want.txt")" ]; then echo "PASS: identical isolated"
else echo "FAIL: isolated '$b' vs in-process '$a'"; fail=1; fi
# A handler that writes into its input cannot change the caller's value.
check scribble 0 'f32?4? {3, 6, 9, 12}' -- $iso --custom-call "twice=$lib:crash_scribble" "$d/call.hlo" "$d/x.txt"

# The FFI samples (typed handlers with attributes, a plugin with stages, a
# legacy v3 tuple result, built-ins) pass isolated.
for s in "ffi_affine --custom-call affine=$libs/libaffine.so:sample_affine" \
         "ffi_window_sum --custom-call window_sum=$libs/libwindow_sum.so:sample_window_sum" \
         "ffi_repeat_v3 --custom-call repeat=$libs/librepeat_v3.so:sample_repeat_v3" \
         "ffi_counter --plugin $libs/libcounter_plugin.so" "ffi_builtins"; do
  set -- $s
  name=$1; shift
  check "isolated $name" 0 '*' -- $iso "$@" --expect "$srcdir/samples/$name.expected" "$srcdir/samples/$name.hlo"
done
[ -z "$(ls "$tmp" | grep -v hlorun-crash-twice)" ] || { echo "FAIL: unexpected crash directories"; ls "$tmp"; fail=1; }
exit $fail
