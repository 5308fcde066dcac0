#!/bin/sh
# --expect with NaNs: NaN matches NaN, but a NaN on one side only (the
# result NaN and the golden finite, or the reverse) is a mismatch whatever
# the tolerances, in f32 and in f16 (read through its bits). The module
# divides x by y: 0/0 is NaN, 1/0 infinity, 4/2 = 2.
set -u
H=${HLORUN:-./hlorun}
[ -x "$H" ] || { echo "SKIP: $H not built"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-expect-nan.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

for t in f32 f16; do
  printf 'HloModule d\n\nENTRY e {\n  x = %s[3] parameter(0)\n  y = %s[3] parameter(1)\n  ROOT q = %s[3] divide(x, y)\n}\n' \
    $t $t $t > "$tmp/div.hlo"
  printf '%s[3] {0, 1, 4}\n' $t > "$tmp/x_nan.txt"      # result {NaN, 1, 2}
  printf '%s[3] {1, 1, 4}\n' $t > "$tmp/x_fin.txt"      # result {1, 1, 2}
  printf '%s[3] {1, 1, 4}\n' $t > "$tmp/x_inf.txt"
  printf '%s[3] {0, 1, 2}\n' $t > "$tmp/y.txt"
  printf '%s[3] {1, 1, 2}\n' $t > "$tmp/y1.txt"
  printf '%s[3] {nan, 1, 2}\n' $t > "$tmp/g_nan.txt"
  printf '%s[3] {0, 1, 2}\n' $t > "$tmp/g_zero.txt"
  printf '%s[3] {1, 1, 2}\n' $t > "$tmp/g_one.txt"

  # expect NAME WANT_RC GREP_OR_- GOLDEN X Y [OPTIONS...]
  expect() {
    name="$t $1" rc_want=$2 grep_want=$3 g=$4 x=$5 y=$6
    shift 6
    "$H" "$@" --expect "$tmp/$g" "$tmp/div.hlo" "$tmp/$x" "$tmp/$y" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc = "$rc_want" ] || { fail "$name: exit $rc, want $rc_want"; cat "$tmp/err"; return; }
    if [ "$grep_want" != - ] && ! grep -q -- "$grep_want" "$tmp/err"; then
      fail "$name: the report lacks '$grep_want'"; cat "$tmp/err"; return
    fi
    echo "ok: $name"
  }
  expect "NaN matches NaN" 0 - g_nan.txt x_nan.txt y.txt
  expect "NaN matches NaN, tolerances 0" 0 - g_nan.txt x_nan.txt y.txt --rtol 0 --atol 0
  expect "result NaN, golden finite" 1 "1 of 3 elements differ" g_zero.txt x_nan.txt y.txt
  grep -q "at \[0\]  got -\{0,1\}nan  want 0" "$tmp/err" || fail "$t result NaN: no report of [0]"
  expect "result NaN, golden finite, loose" 1 "1 of 3 elements differ" g_one.txt x_nan.txt y.txt \
    --rtol 1e6 --atol 1e6
  expect "result finite, golden NaN" 1 "1 of 3 elements differ" g_nan.txt x_fin.txt y1.txt
  grep -q "at \[0\]  got 1  want -\{0,1\}nan" "$tmp/err" || fail "$t golden NaN: no report of [0]"
  expect "result finite, golden NaN, loose" 1 "1 of 3 elements differ" g_nan.txt x_fin.txt y1.txt \
    --rtol 1e6 --atol 1e6
  expect "result infinite, golden NaN" 1 "1 of 3 elements differ" g_nan.txt x_inf.txt y.txt
done

[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all --expect NaN tests passed"
