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
exit $fail
