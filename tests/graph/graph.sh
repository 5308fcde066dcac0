#!/bin/sh
# --graph: every sample module drawn as .dot (valid for Graphviz's dot when
# it is installed) and as .svg with one node per instruction of the module;
# --stats times and colours, --graph-filter neighbourhoods, --graph-collapse,
# custom-call targets and bindings, and the errors. Instruction counts are
# taken from the module text (lines "NAME = ..." inside computations), not
# from hlorun. Run by `make check` (TESTS).
set -u
srcdir=${srcdir:-.}
H=${HLORUN:-./hlorun}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-graph.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
have_dot=no
command -v dot >/dev/null 2>&1 && have_dot=yes
[ $have_dot = yes ] || echo "note: Graphviz's dot is not installed (Debian package 'graphviz'): .svg checks skipped"

# Instructions of a module: "[ROOT] NAME = ..." lines (any indentation).
count_instructions() {
  grep -cE '^[[:space:]]*(ROOT[[:space:]]+)?%?[A-Za-z0-9_.-]+[[:space:]]*=[[:space:]]' "$1"
}
# Nodes of an SVG written by dot: one <g ... class="node"> each.
count_svg_nodes() { grep -c 'class="node"' "$1"; }
# Nodes of a DOT file written by hlorun: "nN [label=..." lines.
count_dot_nodes() { grep -cE '^[[:space:]]*n[0-9]+ \[label=' "$1"; }

for f in "$srcdir"/samples/*.hlo "$srcdir"/samples/suite/*/module.hlo; do
  want=$(count_instructions "$f")
  if ! "$H" --graph "$tmp/g.dot" "$f" 2>"$tmp/err"; then fail "$f: --graph .dot failed"; cat "$tmp/err"; continue; fi
  got=$(count_dot_nodes "$tmp/g.dot")
  [ "$got" = "$want" ] || { fail "$f: .dot has $got nodes, the module $want instructions"; continue; }
  if [ $have_dot = yes ]; then
    dot -Tsvg "$tmp/g.dot" >/dev/null 2>"$tmp/err" || { fail "$f: dot rejects the .dot"; cat "$tmp/err"; continue; }
    "$H" --graph "$tmp/g.svg" "$f" 2>"$tmp/err" || { fail "$f: --graph .svg failed"; cat "$tmp/err"; continue; }
    got=$(count_svg_nodes "$tmp/g.svg")
    [ "$got" = "$want" ] || { fail "$f: .svg has $got nodes, the module $want instructions"; continue; }
  fi
  ok "$f: $want instructions, $want nodes"
done

q=$srcdir/samples/quickstart.hlo
# Neighbourhood of add.6 (add(dot.3, broadcast.5), used by maximum.9): one
# step reaches exactly those four; two steps add dot.3's operands
# Arg_0.1 and constant.2, broadcast.5's constant.4 and maximum.9's
# broadcast.8 -- everything but constant.7.
node_names() { sed -n 's/^ *n[0-9]* \[label="\([^\\]*\)\\n.*/\1/p' "$1" | sort | tr '\n' ' '; }
"$H" --graph "$tmp/f1.dot" --graph-filter add.6:1 "$q"
got=$(node_names "$tmp/f1.dot")
[ "$got" = "add.6 broadcast.5 dot.3 maximum.9 " ] && ok "filter depth 1" || fail "filter depth 1: $got"
"$H" --graph "$tmp/f2.dot" --graph-filter add.6 "$q"
got=$(node_names "$tmp/f2.dot")
[ "$got" = "Arg_0.1 add.6 broadcast.5 broadcast.8 constant.2 constant.4 dot.3 maximum.9 " ] \
  && ok "filter default depth 2" || fail "filter depth 2: $got"
grep -q 'n[0-9]* -> n[0-9]*' "$tmp/f1.dot" && ok "filter keeps edges" || fail "filter: no edges"

# --stats: unfused, every instruction runs once and shows a time and a
# share; the shares add up to 100% (to rounding) and each node gets a fill
# colour.
HLORUN_FUSION=0 "$H" --stats --graph "$tmp/s.dot" "$q" "$srcdir/samples/quickstart.in0.txt" >"$tmp/out" 2>"$tmp/err" \
  || { fail "stats graph: exit $?"; cat "$tmp/err"; }
timed=$(grep -cE '[0-9] (ns|us|ms) \([0-9.]+%\)' "$tmp/s.dot")
coloured=$(grep -c 'fillcolor="[0-9.]* [0-9.]* 1.000"' "$tmp/s.dot")
sum=$(sed -n 's/.*[num]s (\([0-9.]*\)%).*/\1/p' "$tmp/s.dot" | awk '{s += $1} END {printf "%.0f", s}')
[ "$timed" = 9 ] && [ "$coloured" = 9 ] && [ "$sum" -ge 99 ] && [ "$sum" -le 101 ] \
  && ok "stats: 9 timed, coloured nodes, shares sum to $sum%" \
  || fail "stats: $timed timed, $coloured coloured, shares sum $sum"
grep -q '^stats: total' "$tmp/err" && ok "stats table still printed" || fail "stats table missing"
# The run's result is still printed: relu(x.W + b) worked by hand in the sample.
grep -q '{ *0, 3.3 *}, *{ *0, 3.175 *}' "$tmp/out" && ok "stats graph prints the result" \
  || { fail "stats graph result"; cat "$tmp/out"; }

# Fused (the default), relu's chain broadcast.5 -> add.6 -> maximum.9
# (with broadcast.8) runs as one step timed at maximum.9.
"$H" --stats --graph "$tmp/fz.dot" "$q" "$srcdir/samples/quickstart.in0.txt" >/dev/null 2>&1
grep -q 'maximum.9.*s (.*ends a fused elementwise chain' "$tmp/fz.dot" \
  && [ "$(grep -c 'no time of its own' "$tmp/fz.dot")" = 3 ] && ok "fused chain timed at its end" \
  || fail "fused chain labels"

# A loop body's instructions run once per iteration: "in N runs".
"$H" --stats --graph "$tmp/w.dot" --random "$srcdir/samples/cpu_after_opt.hlo" >/dev/null 2>&1
grep -q 'in 3 runs' "$tmp/w.dot" && ok "loop body counts runs" || fail "loop body: no 'in 3 runs'"

# Custom calls show target and binding: built-ins, and an unbound target.
"$H" --graph "$tmp/c.dot" "$srcdir/samples/ffi_builtins.hlo"
grep -q 'target: Sharding\\nbinding: built-in' "$tmp/c.dot" && ok "built-in binding shown" \
  || fail "built-in binding"
"$H" --graph "$tmp/u.dot" "$srcdir/samples/ffi_affine.hlo"
grep -q 'target: affine\\nbinding: NOT BOUND' "$tmp/u.dot" && ok "unbound target shown" \
  || fail "unbound target"

# --graph-collapse: fusion bodies left out, so only the instructions of
# the other computations are drawn, and fusion nodes say how many they hold.
c=$srcdir/samples/cpu_after_opt.hlo
want=$(awk '/^%fused_computation/ {skip = 1} /^}/ {skip = 0}
            !skip && /^[[:space:]]*(ROOT[[:space:]]+)?%?[A-Za-z0-9_.-]+[[:space:]]*=[[:space:]]/ {n++}
            END {print n}' "$c")
"$H" --graph "$tmp/k.dot" --graph-collapse "$c"
got=$(count_dot_nodes "$tmp/k.dot")
[ "$got" = "$want" ] && ok "collapse: $want nodes" || fail "collapse: $got nodes, want $want"
grep -q 'fused: 6 instructions' "$tmp/k.dot" && ok "collapse: fusion size shown" || fail "collapse: no size"
# Collapsed and timed, a fusion's node carries its body's time: the shares
# of the drawn nodes still add up to 100% (the reducers' bodies, never run
# as steps of their own, have none).
"$H" --stats --graph "$tmp/kt.dot" --graph-collapse --random "$c" >/dev/null 2>&1
sum=$(sed -n 's/.*[num]s (\([0-9.]*\)%).*/\1/p' "$tmp/kt.dot" | awk '{s += $1} END {printf "%.0f", s}')
[ "$sum" -ge 98 ] && [ "$sum" -le 102 ] && ok "collapse: shares sum to $sum%" || fail "collapse: shares sum to $sum%"
if [ $have_dot = yes ]; then
  dot -Tsvg "$tmp/k.dot" >/dev/null 2>&1 && ok "collapse: valid dot" || fail "collapse: dot rejects it"
fi

# Errors (exit 2, a message naming the problem).
expect_error() {
  name=$1 msg=$2
  shift 2
  "$@" >/dev/null 2>"$tmp/err"
  rc=$?
  [ $rc = 2 ] && grep -q -- "$msg" "$tmp/err" && ok "$name" || { fail "$name: exit $rc"; cat "$tmp/err"; }
}
expect_error "unknown format" "unknown picture format" "$H" --graph "$tmp/x.pdf" "$q"
expect_error "unknown instruction" "no instruction named 'nope'" "$H" --graph "$tmp/x.dot" --graph-filter nope "$q"
expect_error "bad depth" "bad depth 'x'" "$H" --graph "$tmp/x.dot" --graph-filter add.6:x "$q"
expect_error "unwritable" "No such file or directory" "$H" --graph "$tmp/no/such/dir.dot" "$q"
mkdir "$tmp/empty"
expect_error "no graphviz" "Debian package 'graphviz'" env PATH="$tmp/empty" "$H" --graph "$tmp/x.svg" "$q"

echo "$fails failure(s)"
[ $fails = 0 ]
