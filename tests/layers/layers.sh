#!/bin/sh
# The layer check (tools/check-layers.sh), run by `make check`: the sources
# as they are must pass it, and it must fail, with the exact report, on each
# kind of violation planted on purpose: an include up the layers (planted in
# a copy of the real sources), a private header reached from outside its
# folder, two folders of one layer including each other, a folder without a
# layer, and allow-list entries that name no issue or match nothing.
set -u
srcdir=${srcdir:-.}
check="$srcdir/tools/check-layers.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-layers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect NAME WANT_RC WANT_FILE ARGS...: the script's exit and whole output.
expect() {
  name=$1 rc_want=$2 want=$3
  shift 3
  sh "$check" "$@" >"$tmp/out" 2>&1
  rc=$?
  if [ "$rc" != "$rc_want" ]; then
    fail "$name: exit $rc, want $rc_want"; cat "$tmp/out"; return
  fi
  if ! diff -u "$want" "$tmp/out"; then fail "$name: report differs"; return; fi
  echo "ok: $name"
}

# 1. The real sources (with the allow-list of violations being removed).
: >"$tmp/empty"
expect "the sources keep their layers" 0 "$tmp/empty" "$srcdir"

# 2. A copy of the real sources with one include up the layers planted in
#    common/ (the bottom floor including the command's header).
real="$tmp/real"
mkdir "$real"
dirs=$(cd "$srcdir" && for d in cli targets api devices interp ffi parser proto stablehlo ir common \
  include; do [ -d "$d" ] && echo "$d"; done)
# shellcheck disable=SC2086 # $dirs: one folder a word
(cd "$srcdir" && find $dirs tools/layers-allow.txt -type f \( -name '*.[ch]' -o -name '*.re' \
   -o -name '*.y' -o -name '*.def' -o -name '*.inc' -o -name '*.txt' \) | tar -cf - -T -) |
  (cd "$real" && tar -xf -) || fail "copying the sources"
for f in "$real"/common/*.c; do planted=${f#"$real"/}; break; done
printf '#include "cli/cli.h"\n' >>"$real/$planted"
cat >"$tmp/want" <<EOF
$planted: #include "cli/cli.h": common/ (common) must not include cli/ (cli), a higher layer
check-layers: 1 problem (the layers: README, "Layers")
EOF
expect "an include up the layers planted in $planted fails" 1 "$tmp/want" "$real"

# 3. A small tree of one's own: every other kind of violation.
t="$tmp/tree"
mkdir -p "$t/common" "$t/ir" "$t/parser" "$t/proto" "$t/ffi" "$t/interp" "$t/tools"
printf '/* a.h: common helpers. */\n' >"$t/common/a.h"
printf '#include "common/a.h"\n' >"$t/ir/ir.c"
printf '/* syntax.h: the parser'"'"'s own. Not a contract: only parser/ uses it. */\n' \
  >"$t/parser/syntax.h"
printf '#include "syntax.h"\n#include "ir/ir.h"\n' >"$t/parser/parse.c"
printf '/* ir.h */\n' >"$t/ir/ir.h"
printf '/* internal.h: what ffi/ shares. */\n' >"$t/ffi/internal.h"
printf '#include "ffi/internal.h"\n#include "parser/syntax.h"\n' >"$t/interp/run.c"
printf '#include "proto/proto.h"\n' >"$t/parser/lower.c"
printf '/* proto.h */\n#include "parser/parser.h"\n' >"$t/proto/proto.h"
printf '/* parser.h */\n' >"$t/parser/parser.h"
: >"$t/tools/layers-allow.txt"
cat >"$tmp/want" <<'EOF'
interp/run.c: #include "ffi/internal.h": ffi/internal.h is private to ffi/ (interp/run.c is outside it)
interp/run.c: #include "parser/syntax.h": parser/syntax.h is private to parser/ (interp/run.c is outside it)
parser/lower.c: #include "proto/proto.h": parser/ (front-end) and proto/ (front-end) include each other (proto/proto.h includes parser/parser.h)
proto/proto.h: #include "parser/parser.h": proto/ (front-end) and parser/ (front-end) include each other (parser/lower.c includes proto/proto.h)
check-layers: 4 problems (the layers: README, "Layers")
EOF
expect "private headers and two front ends including each other fail" 1 "$tmp/want" "$t"

# The same violations allowed, one entry without an issue, one stale entry.
cat >"$t/tools/layers-allow.txt" <<'EOF'
# Known violations being removed.
interp/run.c ffi/internal.h   # issue 31: planted
interp/run.c parser/syntax.h   # issue 31: planted
parser/lower.c proto/proto.h   # issue 31: planted
proto/proto.h parser/parser.h
ir/ir.c common/b.h   # issue 31: never was
EOF
cat >"$tmp/want" <<'EOF'
tools/layers-allow.txt:5: names no issue ("FILE INCLUDE  # issue N: why"): proto/proto.h parser/parser.h
tools/layers-allow.txt:6: ir/ir.c common/b.h: no such violation any more: remove the line
check-layers: 2 problems (the layers: README, "Layers")
EOF
expect "allow-list entries without an issue or without a violation fail" 1 "$tmp/want" "$t"

# Every entry in order: clean. The allow-list can also be given with -a.
sed -i -e '/^proto/s/$/   # issue 31: planted/' -e '/never was/d' "$t/tools/layers-allow.txt"
mv "$t/tools/layers-allow.txt" "$tmp/allow.txt"
expect "allowed violations pass (-a ALLOW)" 0 "$tmp/empty" -a "$tmp/allow.txt" "$t"

# A folder of sources with no layer.
mkdir "$t/api2"
printf 'int x;\n' >"$t/api2/x.c"
cat >"$tmp/want" <<'EOF'
check-layers: api2/ holds sources but has no layer: add it to the table in tools/check-layers.sh (and to README and doc/layers.dot)
check-layers: 1 problem (the layers: README, "Layers")
EOF
expect "a folder of sources without a layer fails" 1 "$tmp/want" -a "$tmp/allow.txt" "$t"

# A header internal to two folders of one floor (the run path's
# interp/api.h): included from either, clean; from a third folder, private.
t2="$tmp/tree2"
mkdir -p "$t2/interp" "$t2/devices" "$t2/targets" "$t2/tools"
printf '/* api.h: the handles (internal to interp/ and devices/). */\n' >"$t2/interp/api.h"
printf '#include "interp/api.h"\n' >"$t2/interp/run.c"
printf '#include "interp/api.h"\n' >"$t2/devices/run.c"
: >"$t2/tools/layers-allow.txt"
expect "a header internal to interp/ and devices/ included from both passes" 0 "$tmp/empty" "$t2"
printf '#include "interp/api.h"\n' >"$t2/targets/ctx.c"
cat >"$tmp/want" <<'EOF'
targets/ctx.c: #include "interp/api.h": interp/api.h is private to interp/ and devices/ (targets/ctx.c is outside it)
check-layers: 1 problem (the layers: README, "Layers")
EOF
expect "a header internal to interp/ and devices/ included from targets/ fails" 1 "$tmp/want" "$t2"

# 4. The picture: doc/layers.dot draws every folder of the table that
#    exists, and nothing else but include/; its arrows run down the
#    table's ranks; doc/layers.svg was drawn from it (the same nodes and
#    visible arrows).
dotfile="$srcdir/doc/layers.dot"
sh "$check" -l >"$tmp/table"
(cd "$srcdir" && while read -r dir _; do
   [ -d "$dir" ] && echo "$dir"
 done) <"$tmp/table" | sort >"$tmp/want"
sed -n 's/^[[:space:]]*\([a-z]*\) \[label=.*/\1/p' "$dotfile" | grep -v '^include$' | sort >"$tmp/got"
if diff -u "$tmp/want" "$tmp/got"; then echo "ok: doc/layers.dot draws the folders of the table"
else fail "doc/layers.dot and the table of tools/check-layers.sh name other folders (give each" \
  "folder a node in doc/layers.dot, then redraw: dot -Tsvg doc/layers.dot -o doc/layers.svg)"; fi
sed -n 's/^[[:space:]]*\([a-z]*\) -> \([a-z]*\);$/\1 \2/p' "$dotfile" >"$tmp/edges"
up=$(awk 'NR == FNR { rank[$1] = $2; next }
          ($1 in rank) && ($2 in rank) && rank[$1] < rank[$2] { print $1 " -> " $2 }' \
       "$tmp/table" "$tmp/edges")
if [ -z "$up" ]; then echo "ok: the picture's arrows run down the layers"
else fail "doc/layers.dot draws arrows up the layers: $up"; fi
{ sed -n 's/^[[:space:]]*\([a-z]*\) \[label=.*/\1/p' "$dotfile"
  sed 's/ /->/' "$tmp/edges"; } | sort >"$tmp/want"
grep -o '<title>[^<]*</title>' "$srcdir/doc/layers.svg" | sed -e 's/<[^>]*>//g' -e 's/&#45;&gt;/->/' |
  grep -v '^layers$' | grep -v '^cluster_' | sort >"$tmp/got"
if diff -u "$tmp/want" "$tmp/got"; then echo "ok: doc/layers.svg is drawn from doc/layers.dot"
else fail "doc/layers.svg is not doc/layers.dot's picture: redraw it (dot -Tsvg doc/layers.dot -o doc/layers.svg)"; fi

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
