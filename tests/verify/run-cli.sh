#!/bin/sh
# The hlorun command verifies modules before printing (--print; --print --lenient
# reports them as warnings, tests/xla-parser/run.sh) and before
# running: a module with a wrong result shape exits 2 with the positioned
# error, and a valid module still runs. srcdir and ./hlorun come from the
# environment automake sets.
set -u
srcdir=${srcdir:-.}
d=$srcdir/tests/verify
H=${HLORUN:-./hlorun}
case $H in /*) ;; *) H=$(pwd)/$H ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-verify.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
want="elementwise_shape.hlo:5:8: error: add 'r': result shape f32[3,2] does not match the inferred f32[2,3]"
echo 'f32[2,3] {{1, 2, 3}, {4, 5, 6}}' >"$tmp/x.txt"

for mode in --print run; do
  if [ "$mode" = run ]; then
    (cd "$d" && "$H" elementwise_shape.hlo "$tmp/x.txt" "$tmp/x.txt") >"$tmp/out" 2>"$tmp/err"
  else
    (cd "$d" && "$H" --print elementwise_shape.hlo) >"$tmp/out" 2>"$tmp/err"
  fi
  rc=$?
  if [ "$rc" != 2 ]; then echo "FAIL: $mode: exit $rc, want 2"; cat "$tmp/err"; fails=$((fails + 1)); continue; fi
  if [ "$(head -n 1 "$tmp/err")" != "$want" ]; then
    echo "FAIL: $mode: first error line is:"; head -n 1 "$tmp/err"; fails=$((fails + 1)); continue
  fi
  [ -s "$tmp/out" ] && { echo "FAIL: $mode: printed something on stdout"; fails=$((fails + 1)); continue; }
  echo "ok: $mode"
done
# The same module with the right result shape runs.
sed 's/f32\[3,2\] add/f32[2,3] add/' "$d/elementwise_shape.hlo" >"$tmp/good.hlo"
if "$H" "$tmp/good.hlo" "$tmp/x.txt" "$tmp/x.txt" >"$tmp/out" 2>"$tmp/err" &&
   grep -q "f32\[2,3\] {{2, 4, 6}, {8, 10, 12}}" "$tmp/out"; then
  echo "ok: valid module runs"
else
  echo "FAIL: valid module"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1))
fi
exit $((fails != 0))
