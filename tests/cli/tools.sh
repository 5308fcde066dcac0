#!/bin/sh
# End-to-end tests of hlorun's golden-suite and debugging tools: --suite
# (samples/suite passes; tests/suite-broken fails with the expected report),
# --record, --junit, the --expect report, --trace, --check-nan, --stats,
# --dump-custom-calls + --replay, --only-instruction, --ffi-members,
# --ffi-all-stages and the
# positioned custom-call errors. Run by `make check`; srcdir and the built
# ./hlorun come from the environment automake sets.
set -u
srcdir=${srcdir:-.}
d=$srcdir/tests/cli
H=${HLORUN:-./hlorun}
libs=samples/plugins/.libs
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-tools.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run NAME WANT_RC ARGS...: stdout in $tmp/out, stderr in $tmp/err.
run() {
  name=$1 rc_want=$2
  shift 2
  "$H" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" != "$rc_want" ]; then
    fail "$name: exit $rc, want $rc_want"; cat "$tmp/out" "$tmp/err"; return 1
  fi
  return 0
}
# has NAME FILE TEXT: FILE holds the fixed string TEXT.
has() {
  grep -qF -- "$3" "$2" || { fail "$1: no '$3' in $(basename "$2")"; cat "$2"; return 1; }
  echo "ok: $1"
}

# ---- Suites -----------------------------------------------------------------
run suite-samples 0 --suite -j2 "$srcdir/samples/suite" &&
  has suite-samples "$tmp/out" "5 passed, 0 failed"

# The broken suite: one mismatch, one error; exit 1; one line per failure.
run suite-broken 1 --suite -j2 --junit "$tmp/report.xml" "$srcdir/tests/suite-broken"
has suite-broken-mismatch "$tmp/out" \
  "FAIL $srcdir/tests/suite-broken/off_by_one: mismatch: 1 of 4 elements differ (25%; f32[4]; rtol=0.0001 atol=0.0001); at [2] got 33 want 34 abs err 1 rel err 0.0294"
has suite-broken-error "$tmp/out" \
  "FAIL $srcdir/tests/suite-broken/unbound_target: exit 2: $srcdir/tests/suite-broken/unbound_target/module.hlo:6:8: error: custom-call target \"no_such_target\" (line 6) has no handler"
has suite-broken-summary "$tmp/out" "0 passed, 2 failed"
[ "$(wc -l < "$tmp/out")" = 3 ] || fail "suite-broken: not one line per failing case"
has junit-counts "$tmp/report.xml" '<testsuites tests="2" failures="1" errors="1"'
has junit-failure "$tmp/report.xml" '<failure type="mismatch" message="mismatch: 1 of 4 elements differ'
has junit-error "$tmp/report.xml" '<error type="error" message="exit 2: '

# A directory where MODULE goes means --suite; -v shows the whole report.
run suite-implicit 1 -v "$srcdir/tests/suite-broken/off_by_one"
has suite-verbose "$tmp/out" "      at [2]  got 33  want 34  abs err 1  rel err 0.0294"

# Per-case tolerance: a loose tolerance file makes the broken case pass.
cp -r "$srcdir/tests/suite-broken/off_by_one" "$tmp/loose"
chmod -R u+w "$tmp/loose"
echo "atol=1.5  # one unit off is fine here" > "$tmp/loose/tolerance"
run suite-tolerance 0 --suite "$tmp/loose" && has suite-tolerance "$tmp/out" "1 passed, 0 failed"
echo '{"compare": "close", "tolerance": {"atol": 0.5, "rtol": 0}}' > "$tmp/loose/case.json"
rm "$tmp/loose/tolerance"
run suite-case-json 1 --suite "$tmp/loose" && has suite-case-json "$tmp/out" "rtol=0 atol=0.5"
# case.json is read by jansson: a syntax error names its line and column,
# a duplicate key and a tolerance that is not a number are errors.
printf '{"compare": "close",\n "rtol": 0.1,,}\n' > "$tmp/loose/case.json"
run case-json-syntax 2 --suite "$tmp/loose" && has case-json-syntax "$tmp/err" "case.json:2:14: "
echo '{"rtol": 0.1, "rtol": 0.2}' > "$tmp/loose/case.json"
run case-json-dup 2 --suite "$tmp/loose" && has case-json-dup "$tmp/err" "duplicate object key"
echo '{"tolerance": {"atol": "big"}}' > "$tmp/loose/case.json"
run case-json-type 2 --suite "$tmp/loose" && has case-json-type "$tmp/err" 'case.json: "atol" must be a number >= 0'

# --record rewrites the wrong golden (atomically: no temporary left) and
# says so; a case without a golden gets one; then the suite passes.
mkdir "$tmp/rec"
cp -r "$srcdir/tests/suite-broken/off_by_one" "$srcdir/samples/suite/while_tuple" "$tmp/rec/"
chmod -R u+w "$tmp/rec"
rm "$tmp/rec/while_tuple/expected.npz"
run no-golden 1 --suite "$tmp/rec/while_tuple" &&
  has no-golden "$tmp/out" "no golden output (expected.npy, .npz or .txt); record one with --record"
run record 0 --suite --record "$tmp/rec"
has record-rewrote "$tmp/out" "recorded $tmp/rec/off_by_one/expected.txt (was: mismatch: 1 of 4 elements differ"
has record-new "$tmp/out" "recorded $tmp/rec/while_tuple/expected.npz (new golden output)"
has record-summary "$tmp/out" "2 golden files rewritten"
printf 'f32[4] {11, 22, 33, 44}\n' > "$tmp/want.txt"
cmp -s "$tmp/rec/off_by_one/expected.txt" "$tmp/want.txt" || fail "record: wrong golden text"
ls -a "$tmp/rec/off_by_one" "$tmp/rec/while_tuple" | grep -q record && fail "record: temporary file left"
# The recorded tuple golden holds the hand-computed values (4, {16, 32, 48}):
# print it through an identity module.
printf 'HloModule id\n\nENTRY main {\n  ROOT p = (s32[], f32[3]) parameter(0)\n}\n' > "$tmp/id.hlo"
printf '(s32[] 4, f32[3] {16, 32, 48})\n' > "$tmp/want.txt"
run record-npz 0 "$tmp/id.hlo" "$tmp/rec/while_tuple/expected.npz" &&
  { cmp -s "$tmp/out" "$tmp/want.txt" && echo "ok: record-npz" || { fail "record-npz"; cat "$tmp/out"; }; }
run record-again 0 --suite "$tmp/rec" && has record-again "$tmp/out" "2 passed, 0 failed"

# Progress line (forced: stderr is not a terminal here).
run suite-progress 0 --suite --progress "$srcdir/samples/suite/predict" &&
  has suite-progress "$tmp/err" "[1/1] 0 failed"
# A case running past --timeout is killed and counted as failed (a loop of
# 4 million iterations, far longer than 0.05 s).
mkdir -p "$tmp/slow/loop"
cat > "$tmp/slow/loop/module.hlo" <<'EOF'
HloModule slow
cond {
  i = s32[] parameter(0)
  n = s32[] constant(4000000)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  i = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT i1 = s32[] add(i, one)
}
ENTRY main {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
EOF
printf 's32[] 4000000\n' > "$tmp/slow/loop/expected.txt"
run suite-timeout 1 --suite --timeout 0.05 "$tmp/slow" &&
  has suite-timeout "$tmp/out" "FAIL $tmp/slow/loop: timed out after 0.05 s"

# A single run with the progress thread (too short to draw anything).
run progress-run 0 --progress "$d/add.hlo" "$d/a.txt" "$d/b.txt" &&
  { cmp -s "$tmp/out" "$d/sum.txt" && echo "ok: progress-run" || fail "progress-run: result"; }
run suite-conflict 2 --suite --trace "$srcdir/samples/suite" &&
  has suite-conflict "$tmp/err" "--trace cannot be used with --suite"

# ---- The --expect report ----------------------------------------------------
run expect-report 1 --expect "$d/sum_off.txt" "$d/add.hlo" "$d/a.txt" "$d/b.txt"
cat > "$tmp/report.txt" <<EOF
$d/sum_off.txt: mismatch: 1 of 2 elements differ (50%; f32[2]; rtol=0.0001 atol=0.0001)
  largest absolute error 1 at [1]; largest relative error 0.0435 at [1]
  at [1]  got 22  want 23  abs err 1  rel err 0.0435
EOF
cmp -s "$tmp/err" "$tmp/report.txt" && echo "ok: expect-report" ||
  { fail "expect-report: report differs"; diff "$tmp/report.txt" "$tmp/err"; }

# ---- Debugging --------------------------------------------------------------
cat > "$tmp/nan.hlo" <<'EOF'
HloModule nan_sample

ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  q = f32[4] divide(x, y)
  l = f32[4] log(q)
  ROOT r = f32[4] add(l, x)
}
EOF
printf 'f32[4] {1, 0, 2, -1}\n' > "$tmp/x.txt"
printf 'f32[4] {1, 0, 1, 1}\n' > "$tmp/y.txt"
# x / y = {1, 0/0 = NaN, 2, -1}: the divide makes the first NaN.
run check-nan 2 --check-nan "$tmp/nan.hlo" "$tmp/x.txt" "$tmp/y.txt"
has check-nan "$tmp/err" \
  "$tmp/nan.hlo:6: check-nan: q (divide) produced 1 NaN; none of its operands held a NaN or an infinity"
has check-nan-operand "$tmp/err" "operand 1: y = f32[4]  min=0 max=1 mean=0.75 nan=0 inf=0  {1, 0, 1, 1}"
[ -s "$tmp/out" ] && fail "check-nan: printed a result"
# hlorun fuses the elementwise chain divide -> log -> add; tracing turns that
# off and sees all five instructions.
run trace-unfused 0 --trace "$tmp/nan.hlo" "$tmp/x.txt" "$tmp/y.txt"
[ "$(grep -c '^trace:' "$tmp/err")" = 5 ] && echo "ok: trace-unfused" ||
  { fail "trace-unfused: want 5 lines"; cat "$tmp/err"; }
# Without NaNs, --check-nan changes nothing.
run check-nan-clean 0 --check-nan "$d/add.hlo" "$d/a.txt" "$d/b.txt"

# --trace: every instruction; a filter keeps matching names or opcodes.
run trace 0 --trace "$d/add.hlo" "$d/a.txt" "$d/b.txt"
has trace "$tmp/err" "trace: sum = add f32[2] (line 6)  min=11 max=22 mean=16.5 nan=0 inf=0  {11, 22}"
[ "$(grep -c '^trace:' "$tmp/err")" = 3 ] || fail "trace: want 3 lines"
run trace-filter 0 --trace='par*' "$d/add.hlo" "$d/a.txt" "$d/b.txt"
[ "$(grep -c '^trace:' "$tmp/err")" = 2 ] || fail "trace-filter: glob should keep the 2 parameters"
run trace-substring 0 --trace=su "$d/add.hlo" "$d/a.txt" "$d/b.txt"
[ "$(grep -c '^trace:' "$tmp/err")" = 1 ] && has trace-substring "$tmp/err" "trace: sum = add"
# Loop bodies are traced, indented, with their computation's name.
run trace-nested 0 --trace=i1 "$srcdir/samples/suite/while_tuple/module.hlo" \
  "$srcdir/samples/suite/while_tuple/in0.txt"
[ "$(grep -c 'trace:   body/i1 = add s32\[\]' "$tmp/err")" = 4 ] && echo "ok: trace-nested" ||
  { fail "trace-nested: want 4 body/i1 lines"; cat "$tmp/err"; }

# --stats: per-opcode counts (2 parameters, 1 add), peak memory.
run stats 0 --stats "$d/add.hlo" "$d/a.txt" "$d/b.txt"
grep -Eq '^stats: parameter +2 ' "$tmp/err" && grep -Eq '^stats: add +1 ' "$tmp/err" &&
  grep -Eq '^stats: total +3 ' "$tmp/err" && has stats "$tmp/err" "peak memory" ||
  { fail "stats: counts"; cat "$tmp/err"; }

# --only-instruction: the log alone, fed its operand: log {1, 0, 2, 1}.
printf 'f32[4] {1, 0, 2, 1}\n' > "$tmp/l_in.txt"
run only-instruction 0 --only-instruction l "$tmp/nan.hlo" "$tmp/l_in.txt"
printf 'f32[4] {0, -inf, 0.693147182, 0}\n' > "$tmp/want.txt"
cmp -s "$tmp/out" "$tmp/want.txt" && echo "ok: only-instruction" ||
  { fail "only-instruction: wrong result"; cat "$tmp/out"; }
run only-print 0 --only-instruction q --print "$tmp/nan.hlo"
has only-print "$tmp/out" "ROOT %q = f32[4]{0} divide(%operand.0, %operand.1)"
run only-missing 2 --only-instruction nope "$tmp/nan.hlo" &&
  has only-missing "$tmp/err" "has no instruction named 'nope'"

# --dump-custom-calls, then --replay one call alone.
cat > "$tmp/cc.hlo" <<'EOF'
HloModule cc_sample

ENTRY main {
  p = f32[2,4] parameter(0)
  x = f32[2,4] multiply(p, p)
  s = f32[2,4] custom-call(x), custom_call_target="Sharding", sharding={replicated}
  ROOT t = (f32[2,2], s32[2,2]) custom-call(s), custom_call_target="TopK"
}
EOF
printf 'f32[2,4] {{1, 5, 3, -5}, {-1, 0, 2, -3}}\n' > "$tmp/p.txt"
run dump 0 --dump-custom-calls "$tmp/dump" "$tmp/cc.hlo" "$tmp/p.txt"
for f in call-0000/module.hlo call-0000/in0.npy call-0000/expected.npy call-0000/call.txt \
         call-0001/in0.npy call-0001/expected.npz call-0001/args; do
  [ -f "$tmp/dump/$f" ] || fail "dump: no $f"
done
has dump-call-txt "$tmp/dump/call-0001/call.txt" "target: TopK"
has dump-call-hlo "$tmp/dump/call-0001/call.txt" \
  'hlo: ROOT %t = (f32[2,2]{1,0}, s32[2,2]{1,0}) custom-call(%operand.0), custom_call_target="TopK"'
# The operand of TopK is x = p*p = {{1, 25, 9, 25}, {1, 0, 4, 9}}: top 2 per row.
printf '(f32[2,2] {{25, 25}, {9, 4}}, s32[2,2] {{1, 3}, {3, 2}})\n' > "$tmp/want.txt"
run replay 0 --replay "$tmp/dump/call-0001"
cmp -s "$tmp/out" "$tmp/want.txt" && echo "ok: replay" || { fail "replay: wrong result"; cat "$tmp/out"; }
# A dump directory is a suite case too.
run dump-suite 0 --suite "$tmp/dump" && has dump-suite "$tmp/out" "2 passed, 0 failed"
# Replay compares with the recorded result: a changed golden is a mismatch.
printf '(f32[2,2] {{25, 25}, {9, 5}}, s32[2,2] {{1, 3}, {3, 2}})\n' > "$tmp/dump/call-0001/expected.txt"
rm "$tmp/dump/call-0001/expected.npz"
run replay-mismatch 1 --replay "$tmp/dump/call-0001" &&
  has replay-mismatch "$tmp/err" "at {0}[1,1]  got 4  want 5"

# Typed FFI stages: XLA:CPU's order by default (instantiate, then execute:
# this bundle's execute then misses the prepare state), XLA:GPU's with
# --ffi-all-stages (states 100, 100+1, 101+1, first execution).
ffitest=tests/.libs/libffitest.so
if [ -f "$ffitest" ]; then
  printf 'HloModule s\nENTRY main {\n  ROOT r = s64[4] custom-call(), custom_call_target="staged", api_version=API_VERSION_TYPED_FFI\n}\n' >"$tmp/staged.hlo"
  run stages-cpu 2 --plugin "$ffitest" "$tmp/staged.hlo" &&
    has stages-cpu "$tmp/err" "State_Get: no prepare state is set"
  run stages-all 0 --ffi-all-stages --plugin "$ffitest" "$tmp/staged.hlo" &&
    has stages-all "$tmp/out" "s64[4] {100, 101, 102, 1}"
fi

if [ -f "$libs/libaffine.so" ]; then
  # A handler from a library: the dump records the binding (absolute path)
  # in args, so --replay needs no --custom-call.
  run dump-plugin 0 --dump-custom-calls "$tmp/dump2" \
    --custom-call "affine=$libs/libaffine.so:sample_affine" "$srcdir/samples/ffi_affine.hlo"
  has dump-plugin-args "$tmp/dump2/call-0000/args" "--custom-call=affine=$(cd "$libs" && pwd)/libaffine.so:sample_affine"
  has dump-plugin-attrs "$tmp/dump2/call-0000/call.txt" 'mode: string "negate"'
  (cd "$tmp" && "$OLDPWD/$H" --replay dump2/call-0000 >out 2>err)
  [ $? = 0 ] && cmp -s "$tmp/out" "$srcdir/samples/ffi_affine.expected" && echo "ok: replay-plugin" ||
    { fail "replay-plugin"; cat "$tmp/out" "$tmp/err"; }
  # --ffi-members: the handler gets the instruction's members as an attribute.
  run ffi-members 0 --explain-custom-calls --ffi-members=affine \
    --custom-call "affine=$libs/libaffine.so:sample_affine" "$srcdir/samples/ffi_affine.hlo" &&
    has ffi-members "$tmp/out" "hlorun.instruction"
  run ffi-members-off 0 --explain-custom-calls \
    --custom-call "affine=$libs/libaffine.so:sample_affine" "$srcdir/samples/ffi_affine.hlo"
  grep -q "hlorun.instruction" "$tmp/out" && fail "ffi-members-off: attribute without opt-in"
  run ffi-members-run 0 --ffi-members --custom-call "affine=$libs/libaffine.so:sample_affine" \
    --expect "$srcdir/samples/ffi_affine.expected" "$srcdir/samples/ffi_affine.hlo"
  # A malformed backend_config fails before running, with a caret at the spot.
  sed 's/scale = 2.000000e+00 : f32/scale = 2 : i77/' "$srcdir/samples/ffi_affine.hlo" > "$tmp/bad_cc.hlo"
  run bad-config 2 --custom-call "affine=$libs/libaffine.so:sample_affine" "$tmp/bad_cc.hlo"
  col=$(sed -n 8p "$tmp/bad_cc.hlo" | awk '{print index($0, "i77")}')   # the bad type
  has bad-config "$tmp/err" "$tmp/bad_cc.hlo:8:$col: error: unsupported type 'i77'"
  grep -q '^ *\^$' "$tmp/err" || fail "bad-config: no caret line"
else
  echo "skip: plugin tests ($libs/libaffine.so not built)"
fi

[ "$fails" = 0 ] && echo "all tool tests passed"
[ "$fails" = 0 ]
