#!/bin/sh
# --write-proto over the repository's modules (samples/, tests/golden/): for
# each one that verifies and has no custom call,
#  - text -> proto -> module -> proto gives the same bytes (a fixpoint);
#  - the proto runs to the same result, bit for bit, as the text it came
#    from (--random=3 draws the same inputs for both: same shapes);
# A module the writer refuses must be refused with an error saying what
# cannot be written, nothing else.
set -u
top=${abs_top_builddir:-$(pwd)}
src=${srcdir:-.}
hlorun="$top/hlorun"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# Every 25th golden case (a spread of kinds, in seconds rather than minutes).
i=0
for f in "$src"/samples/*.hlo "$src"/tests/golden/*/case.hlo; do
  i=$((i + 1))
  case "$f" in */tests/golden/*) [ $((i % 25)) -eq 0 ] || continue ;; esac
  grep -q custom-call "$f" && continue
  "$hlorun" --print "$f" >"$tmp/t0" 2>/dev/null || continue
  if ! "$hlorun" --write-proto "$tmp/p1" "$f" 2>"$tmp/err"; then
    grep -q "cannot be written" "$tmp/err" || fail "$f: $(cat "$tmp/err")"
    continue
  fi
  n=$((n + 1))
  "$hlorun" --write-proto "$tmp/p2" "$tmp/p1" 2>/dev/null || { fail "$f: the written proto does not read back"; continue; }
  cmp -s "$tmp/p1" "$tmp/p2" || fail "$f: proto -> module -> proto is not the same bytes"
  a=$("$hlorun" --random=3 "$f" 2>&1); b=$("$hlorun" --random=3 "$tmp/p1" 2>&1)
  [ "$a" = "$b" ] || fail "$f: the proto runs to a different result"
done
echo "$n modules written and read back"
[ "$n" -ge 25 ] || fail "only $n modules were checked"
[ $fails -eq 0 ] && echo "round-trip tests passed"
# 0 or 1, never the count: automake reads 77 as a skip, and 256 wraps to 0.
[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
