#!/bin/sh
# No two files of cli/, ffi/ or parser/ call each other both ways
# (tools/check-calls.sh over the objects make built), and the check fails,
# with the exact report, on a pair planted on purpose; a function calling
# itself, or a one-way call, is no pair.
set -u
srcdir=${srcdir:-.}
check="$(cd "$srcdir" && pwd)/tools/check-calls.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-calls.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The objects of a folder's sources (stale objects of deleted sources left
# in an incremental build are not read): libtool's PIC objects, the plain
# ones of a static-only build, or the hlorun command's (cli/hlorun-NAME.o).
objects() {
  for src in "$srcdir/$1"/*.c "$1"/*.c; do
    [ -e "$src" ] || continue
    name=${src##*/}
    name=${name%.c}
    for o in "$1/.libs/$name.o" "$1/$name.o" "$1/hlorun-$name.o"; do
      [ -e "$o" ] && { echo "$o"; break; }
    done
  done | sort -u
}

for dir in cli ffi parser; do
  objs=$(objects "$dir")
  if [ -z "$objs" ]; then fail "$dir: no objects (build first)"; continue; fi
  # shellcheck disable=SC2086 # one object a word
  if sh "$check" $objs >"$tmp/out" 2>&1; then echo "ok: $dir/ files call one way"
  else fail "$dir/ files call each other:"; cat "$tmp/out"; fi
done

# Planted: a.c and b.c call each other; c.c calls a.c only; d.c recurses.
CC=${CC:-cc}
mkdir "$tmp/p"
printf 'int fb(int);\nint fa(int x) { return x ? fb(x - 1) : 0; }\n' >"$tmp/p/a.c"
printf 'int fa(int);\nint fb(int x) { return x ? fa(x - 1) : 1; }\n' >"$tmp/p/b.c"
printf 'int fa(int);\nint fc(int x) { return fa(x); }\n' >"$tmp/p/c.c"
printf 'int fd(int x) { return x ? fd(x - 1) : 2; }\n' >"$tmp/p/d.c"
for f in a b c d; do
  (cd "$tmp" && $CC -c -o "p/$f.o" "p/$f.c") || fail "cannot compile p/$f.c with $CC"
done
(cd "$tmp" && sh "$check" p/a.o p/b.o p/c.o p/d.o) >"$tmp/out" 2>&1
rc=$?
cat >"$tmp/want" <<'EOF'
p/a.c and p/b.c call each other: p/a.c uses fb, p/b.c uses fa
check-calls: 1 pair of files calling each other
EOF
if [ "$rc" != 1 ]; then fail "planted pair: exit $rc, want 1"; cat "$tmp/out"
elif ! diff -u "$tmp/want" "$tmp/out"; then fail "planted pair: report differs"
else echo "ok: a planted pair of files calling each other fails"; fi
(cd "$tmp" && sh "$check" p/c.o p/a.o p/d.o) >"$tmp/out" 2>&1
rc=$?
if [ "$rc" != 0 ] || [ -s "$tmp/out" ]; then fail "one-way calls and recursion: exit $rc"; cat "$tmp/out"
else echo "ok: one-way calls and recursion pass"; fi

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
