#!/bin/sh
# errors.sh: bad calls of jaxlib's LAPACK targets (a shape the target cannot
# take, an attribute outside jaxlib's enum or of the wrong type, an operand
# of the wrong type, out-of-range gehrd bounds, mismatched batches) exit 2
# with the message in tests/lapack/errors/NAME.err (the error line after
# FILE:LINE:COL:), never a wrong answer or a crash.
srcdir=${srcdir:-.}
HLORUN=${HLORUN:-./hlorun}
[ -x "$HLORUN" ] || { echo "SKIP: $HLORUN not built"; exit 77; }
fail=0
for hlo in "$srcdir"/tests/lapack/errors/*.hlo; do
  name=$(basename "$hlo" .hlo)
  out=$("$HLORUN" --random "$hlo" 2>&1 >/dev/null); rc=$?
  got=$(printf '%s\n' "$out" | head -1 | sed 's/^[^ ]* //')
  want=$(cat "$srcdir/tests/lapack/errors/$name.err")
  if [ $rc -eq 2 ] && [ "$got" = "$want" ]; then
    echo "PASS: $name"
  else
    echo "FAIL: $name (exit $rc)"; echo "  got:  $got"; echo "  want: $want"; fail=1
  fi
done

# HLORUN_LAPACK picks the library loaded on the first call: one that cannot
# be opened, or that lacks a routine, fails the call with exit 2 and names
# it; naming Debian's LAPACK explicitly runs the sample to its expected value.
lstsq="$srcdir/samples/lapack_lstsq.hlo $srcdir/samples/lapack_lstsq.in0.npy $srcdir/samples/lapack_lstsq.in1.npy"
check_env() {   # NAME VALUE WANTED-SUBSTRING
  out=$(HLORUN_LAPACK="$2" "$HLORUN" $lstsq 2>&1 >/dev/null); rc=$?
  case "$out" in
    *"$3"*) [ $rc -eq 2 ] && { echo "PASS: $1"; return; } ;;
  esac
  echo "FAIL: $1 (exit $rc)"; echo "  got:  $out"; echo "  want: $3"; fail=1
}
check_env lapack_env_missing /nonexistent/liblapack.so \
  "lapack_dgeqrf_ffi: cannot load HLORUN_LAPACK='/nonexistent/liblapack.so' (/nonexistent/liblapack.so: cannot open shared object file"
check_env lapack_env_not_lapack libz.so.1 \
  "lapack_dgeqrf_ffi: the LAPACK library loaded (libz.so.1) has no routine 'strsm_'"
if HLORUN_LAPACK=liblapack.so.3 "$HLORUN" $lstsq --expect "$srcdir/samples/lapack_lstsq.expected.npy" \
     >/dev/null 2>&1; then
  echo "PASS: lapack_env_named"
else
  echo "FAIL: lapack_env_named"; fail=1
fi
exit $fail
