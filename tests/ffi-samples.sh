#!/bin/sh
# ffi-samples.sh: run every FFI sample module (samples/ffi_*.hlo) through
# ./hlorun with its handler from samples/plugins/ and compare the result with
# the golden output next to it (--expect). Also checks the errors a user
# sees for an unbound target and a failing legacy handler.
# Skips (exit 77) only while ./hlorun has not been built.
srcdir=${srcdir:-.}
HLORUN=./hlorun
[ -x "$HLORUN" ] || { echo "ffi-samples: ./hlorun is not built; skipping"; exit 77; }
libs=samples/plugins/.libs
fail=0

run() {   # NAME BINDING-OPTIONS...
  name=$1; shift
  if out=$("$HLORUN" "$@" --expect "$srcdir/samples/$name.expected" "$srcdir/samples/$name.hlo" 2>&1); then
    echo "PASS: $name"
  else
    echo "FAIL: $name"; echo "$out"; fail=1
  fi
}

run ffi_affine --custom-call "affine=$libs/libaffine.so:sample_affine"
run ffi_affine_quoted --custom-call "affine=$libs/libaffine.so:sample_affine"
run ffi_window_sum --custom-call "window_sum=$libs/libwindow_sum.so:sample_window_sum"
run ffi_repeat_v3 --custom-call "repeat=$libs/librepeat_v3.so:sample_repeat_v3"
run ffi_counter --plugin "$libs/libcounter_plugin.so"
run ffi_builtins

# An unbound target: exit 2, the message names the target, its line and the fix.
out=$("$HLORUN" "$srcdir/samples/ffi_affine.hlo" 2>&1); rc=$?
case "$rc:$out" in
  2:*'custom-call target "affine" (line 8) has no handler; bind one with --custom-call affine=LIB.so[:SYMBOL]'*)
    echo "PASS: unbound target" ;;
  *) echo "FAIL: unbound target (exit $rc)"; echo "$out"; fail=1 ;;
esac

# The explanation lists the decoded attributes with their types.
out=$("$HLORUN" --explain-custom-calls --custom-call "affine=$libs/libaffine.so:sample_affine" \
      "$srcdir/samples/ffi_affine_quoted.hlo" 2>&1)
case "$out" in
  *'mode: string "negate"'*'scale: f32 2'*'binding: '*'libaffine.so:sample_affine'*)
    echo "PASS: explain" ;;
  *) echo "FAIL: explain"; echo "$out"; fail=1 ;;
esac
exit $fail
