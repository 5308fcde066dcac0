#!/bin/sh
# End-to-end tests of the machine-readable forms of finding what goes wrong:
# --report FILE (JSON, doc/divergence.md "Reports as JSON") for --reference,
# --reference-precision f64, --passes and --determinism; --reference-memory;
# and suite cases that carry a reference.hlo (the FAIL line and the JUnit
# failure message carry the first divergence). Fields are read with
# python3's json and xml modules (tests/diverge/jsonfields.py) and checked
# against values worked out by hand in the comments (the same planted bugs
# as run.sh, passes.sh and precision.sh).
set -u
srcdir=${srcdir:-.}
d=$srcdir/tests/diverge
H=${HLORUN:-./hlorun}
hl_name=report
. "$srcdir/tests/lib/harness.sh"
py=${PYTHON3:-python3}
command -v "$py" >/dev/null 2>&1 || py=/usr/bin/python3
# fields NAME FILE PATH=VALUE...: the report's fields hold those values.
fields() {
  name=$1
  shift
  if "$py" "$d/jsonfields.py" "$@" >"$tmp/fields" 2>&1; then echo "ok: $name"
  else fail "$name"; cat "$tmp/fields"; fi
}

# ---- --reference: two versions of a module --------------------------------------
# v1: a = 2x, b = a*x = 2x^2 = {2,8,18} for x = {1,2,3}; v2: b = a*a = 4x^2 =
# {4,16,36}: 3 of 3 differ, the largest error 36 - 18 = 18 at [2]. b is line
# 8 of v1.hlo, its counterpart line 7 of v2.hlo. The results d = -(b - x):
# {-1,-6,-15} against {-3,-14,-33}: all 3 differ. Paired: a, b, c, d (x is
# a parameter), none unpaired; compared: a and b, 2 values (values after
# the first divergence are not compared), in one run of each module.
run ref-json 1 --report "$tmp/r.json" --reference "$d/v2.hlo" "$d/v1.hlo" "$d/x3.txt" &&
  fields ref-json "$tmp/r.json" 'schema="hlorun-report/1"' 'mode="reference"' \
    'status="differ"' 'exit=1' "module=\"$d/v1.hlo\"" "reference=\"$d/v2.hlo\"" \
    'result.mismatches=3' 'result.shapes_differ=false' \
    'first_divergence.instruction="b"' 'first_divergence.opcode="multiply"' \
    'first_divergence.computation="main"' 'first_divergence.line=8' \
    'first_divergence.iteration=null' 'first_divergence.call=null' \
    'first_divergence.counterpart.instruction="b"' 'first_divergence.counterpart.line=7' \
    "first_divergence.counterpart.module=\"$d/v2.hlo\"" \
    'first_divergence.mismatches=3' 'first_divergence.elements=3' \
    'first_divergence.max_abs_error=18' 'first_divergence.max_abs_at="[2]"' \
    'line~=first divergence: b (multiply, line 8)' \
    'values_compared=2' 'paired=4' 'unpaired=0' 'runs=1' 'failed_side?'
# The correct pair: everything agrees, no divergence.
run ref-json-none 0 --report "$tmp/n.json" --reference "$d/v1.hlo" "$d/v1.hlo" "$d/x3.txt" &&
  fields ref-json-none "$tmp/n.json" 'status="agree"' 'exit=0' 'result.mismatches=0' \
    'result.shapes_differ=false' 'first_divergence=null' 'line="first divergence: none"' \
    'values_compared=4'

# ---- one wrong loop iteration ---------------------------------------------------------
# loop_bad multiplies by 3 on iteration 2: y = {12,24,36,48} against
# {8,16,24,32}; the largest error 48 - 32 = 16 at [3]. y is line 15 of
# loop_bad.hlo, line 11 of loop_ok.hlo. The result, after the 4th iteration
# doubles again: {24,...} against {16,...}: 4 elements differ.
run loop-json 1 --report "$tmp/l.json" --reference "$d/loop_ok.hlo" "$d/loop_bad.hlo" "$d/x4.txt" &&
  fields loop-json "$tmp/l.json" 'first_divergence.instruction="y"' \
    'first_divergence.computation="body"' 'first_divergence.line=15' \
    'first_divergence.iteration=2' 'first_divergence.call=null' \
    'first_divergence.counterpart.line=11' 'first_divergence.max_abs_error=16' \
    'first_divergence.max_abs_at="[3]"' 'first_divergence.mismatches=4' 'result.mismatches=4'

# ---- --reference-memory: a small budget reruns, the answer stays ----------------
# 16 bytes hold one f32[4] value at a time, fewer than the loop's values
# (every iteration's y, next, ... ): the runs repeat, part by part, and the
# earliest divergence over all parts is the same y at iteration 2.
run loop-budget 1 --report "$tmp/b.json" --reference-memory 16 \
    --reference "$d/loop_ok.hlo" "$d/loop_bad.hlo" "$d/x4.txt" &&
  has loop-budget "$tmp/err" "first divergence: y (multiply, line 15, iteration 2)" &&
  has loop-budget-runs "$tmp/err" "runs of each module" &&
  fields loop-budget-json "$tmp/b.json" 'first_divergence.iteration=2' 'first_divergence.line=15'
"$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["runs"] > 1 else 1)' \
  "$tmp/b.json" && echo "ok: loop-budget-reruns" || fail "loop-budget-reruns: runs is not > 1"
# The default budget (at least 64 MiB) holds all: one run each.
fields loop-default-runs "$tmp/l.json" 'runs=1'
# Sizes as --max-memory takes them; bad ones and a budget with nothing to
# compare are usage errors.
run budget-suffix 0 --reference-memory 1K --reference "$d/v1.hlo" "$d/v1.hlo" "$d/x3.txt" &&
  has budget-suffix "$tmp/err" "first divergence: none"
run budget-bad 2 --reference-memory 12Q --reference "$d/v1.hlo" "$d/v1.hlo" "$d/x3.txt" &&
  has budget-bad "$tmp/err" "--reference-memory: bad size '12Q' (bytes, or with K, M, G)"
run budget-zero 2 --reference-memory 0 --reference "$d/v1.hlo" "$d/v1.hlo" "$d/x3.txt" &&
  has budget-zero "$tmp/err" "--reference-memory: bad size '0'"
run budget-alone 2 --reference-memory 64M "$d/v1.hlo" "$d/x3.txt" &&
  has budget-alone "$tmp/err" "--reference-memory goes with --reference"
run report-alone 2 --report "$tmp/x.json" "$d/v1.hlo" "$d/x3.txt" &&
  has report-alone "$tmp/err" "--report goes with --reference" &&
  [ ! -e "$tmp/x.json" ] && echo "ok: report-alone-no-file"

# ---- a run that fails: which side, status error ------------------------------------
run fails-json 2 --report "$tmp/f.json" --reference "$d/ref_fails.hlo" "$d/v1.hlo" "$d/x3.txt" &&
  fields fails-json "$tmp/f.json" 'status="error"' 'exit=2' 'failed_side="reference"' \
    'first_divergence?'
# An unwritable report is an error, not a silent success.
run report-unwritable 2 --report "$tmp/no/such/dir/r.json" --reference "$d/v1.hlo" "$d/v1.hlo" "$d/x3.txt" &&
  has report-unwritable "$tmp/err" "--report: cannot write $tmp/no/such/dir/r.json"

# ---- --reference-precision f64 -----------------------------------------------------
# precision.sh's f16 overflow: s = x*x = 90000 > 65504 is inf at [1]; inf
# against a finite value has no finite error: max_abs_error null.
echo 'f16[3] {2, 300, 0.5}' > "$tmp/x16.txt"
run f64-json 1 --report "$tmp/p.json" --reference-precision f64 "$d/f16_overflow.hlo" "$tmp/x16.txt" &&
  fields f64-json "$tmp/p.json" 'mode="reference-precision"' 'first_divergence.instruction="s"' \
    'first_divergence.line=7' 'first_divergence.mismatches=1' 'first_divergence.elements=3' \
    'first_divergence.max_abs_error=null' 'result.mismatches=1'

# ---- --passes ---------------------------------------------------------------------
# passes.sh's dumps: passes_bad's cse (step 0002) breaks the module. Stages
# tried, in step order: before_optimizations (the baseline), 0000, 0001,
# 0002 (divergent: 4 of 4 result elements); a = add(m, m) (line 10) is the
# first divergence against the stage before, algsimp's, error 16 - 9 = 7 at [3].
echo 'f32[4] {1, 2, 3, 4}' > "$tmp/x.txt"
b=$d/passes_bad
run passes-json 1 --report "$tmp/s.json" --passes "$b" "$tmp/x.txt" &&
  fields passes-json "$tmp/s.json" 'mode="passes"' 'status="differ"' "directory=\"$b\"" \
    'module="module_0003.jit_f"' 'baseline="module_0003.jit_f.before_optimizations.txt"' \
    'ran=4' 'skipped=0' 'stages[0].pass="before_optimizations"' 'stages[0].ran=true' \
    'stages[3].file="module_0003.jit_f.0002.simplification.after_cse.before_fusion.txt"' \
    'stages[4]?' 'first_divergent_pass.pass="cse"' \
    'first_divergent_pass.file="module_0003.jit_f.0002.simplification.after_cse.before_fusion.txt"' \
    'first_divergent_pass.result_mismatches=4' \
    'first_divergent_pass.against="module_0003.jit_f.0001.simplification.after_algsimp.before_cse.txt"' \
    'first_divergent_pass.first_divergence.instruction="a"' \
    'first_divergent_pass.first_divergence.line=10' \
    'first_divergent_pass.first_divergence.max_abs_error=7' \
    'first_divergent_pass.first_divergence.max_abs_at="[3]"'
# passes_ok: before_optimizations cannot run (a custom call without a
# handler) and the layout step does not verify: skipped, with why; 5 ran.
g=$d/passes_ok
run passes-ok-json 0 --report "$tmp/o.json" --passes "$g" "$tmp/x.txt" &&
  fields passes-ok-json "$tmp/o.json" 'status="agree"' 'first_divergent_pass=null' \
    'ran=5' 'skipped=2' 'stages[0].ran=false' 'stages[0].skipped="does_not_run"' \
    'stages[4].pass="layout"' 'stages[4].skipped="does_not_verify"' 'stages[1].skipped=null' \
    'baseline="module_0003.jit_f.0000.pipeline-start.after_pipeline-start.before_algsimp.txt"'

# ---- --determinism ----------------------------------------------------------------
# run.sh's handlers: unstable adds 1 from its fifth call on, so run 1's first
# call (h, line 11, iteration 0) differs for the same operand bits.
# times2 keeps no state: 18 steps each, first_nondeterministic null.
L=tests/diverge/.libs/libdiverge_handlers.so
if [ -f "$L" ]; then
  run det-json 1 --report "$tmp/d.json" --determinism 3 --custom-call "scale=$L:unstable" \
      "$d/loop_cc.hlo" "$d/x4.txt" &&
    fields det-json "$tmp/d.json" 'mode="determinism"' 'status="differ"' 'runs=3' \
      'threads[0]=1' 'first_nondeterministic.instruction="h"' \
      'first_nondeterministic.opcode="custom-call"' 'first_nondeterministic.line=11' \
      'first_nondeterministic.iteration=0' 'first_nondeterministic.run=1' \
      'first_nondeterministic.cause="result_differs"'
  # --reference-custom-call: run.sh's times2_buggy is wrong on the third
  # call (iteration 2): h = {12,24,36,48} against times2's {8,16,24,32},
  # the largest error 48 - 32 = 16 at [3]; the reference is MODULE itself.
  run refcc-json 1 --report "$tmp/c.json" --custom-call "scale=$L:times2_buggy" \
      --reference-custom-call "scale=$L:times2" --dump-custom-calls "$tmp/dcc" \
      "$d/loop_cc.hlo" "$d/x4.txt" &&
    fields refcc-json "$tmp/c.json" 'mode="reference-custom-call"' \
      "reference=\"$d/loop_cc.hlo\"" 'first_divergence.instruction="h"' \
      'first_divergence.opcode="custom-call"' 'first_divergence.iteration=2' \
      'first_divergence.max_abs_error=16' 'first_divergence.max_abs_at="[3]"'
  run det-json-ok 0 --report "$tmp/e.json" --determinism 3 --custom-call "scale=$L:times2" \
      "$d/loop_cc.hlo" "$d/x4.txt" &&
    fields det-json-ok "$tmp/e.json" 'status="agree"' 'first_nondeterministic=null' \
      'steps=18' 'threads[0]=1' 'threads[3]?'
else
  fail "$L was not built"
fi

# ---- suites: a case that carries reference.hlo --------------------------------------
# bad: v1 against its reference v2 (no golden file needed): the results
# differ (exit 1); the FAIL line and the JUnit failure message carry the
# first divergence. good: v1 against itself passes.
mkdir -p "$tmp/suite/bad" "$tmp/suite/good"
cp "$d/v1.hlo" "$tmp/suite/bad/module.hlo"
cp "$d/v2.hlo" "$tmp/suite/bad/reference.hlo"
cp "$d/x3.txt" "$tmp/suite/bad/in0.txt"
cp "$d/v1.hlo" "$tmp/suite/good/module.hlo"
cp "$d/v1.hlo" "$tmp/suite/good/reference.hlo"
cp "$d/x3.txt" "$tmp/suite/good/in0.txt"
run suite-ref 1 --suite --junit "$tmp/j.xml" "$tmp/suite" &&
  has suite-ref "$tmp/out" "FAIL $tmp/suite/bad: mismatch: 3 of 3 elements differ" &&
  has suite-ref-divergence "$tmp/out" "; first divergence: b (multiply, line 8) against the reference's b ($tmp/suite/bad/reference.hlo line 7): 3 of 3 elements differ; largest absolute error 18 at [2]" &&
  has suite-ref-count "$tmp/out" "1 passed, 1 failed" &&
  lacks suite-ref-good "$tmp/out" "FAIL $tmp/suite/good"
if "$py" -c '
import sys, xml.etree.ElementTree as ET
cases = {c.get("name"): c for c in ET.parse(sys.argv[1]).getroot().iter("testcase")}
f = cases["bad"].find("failure")
ok = (f is not None and f.get("type") == "mismatch"
      and "first divergence: b (multiply, line 8)" in f.get("message")
      and "largest absolute error 18 at [2]" in f.get("message")
      and cases["good"].find("failure") is None and len(cases) == 2)
sys.exit(0 if ok else 1)' "$tmp/j.xml"; then echo "ok: suite-ref-junit"
else fail "suite-ref-junit"; cat "$tmp/j.xml"; fi
# --replay runs the case alone, with its reference.
run replay-ref 1 --replay "$tmp/suite/bad" &&
  has replay-ref "$tmp/err" "first divergence: b (multiply, line 8)"
# --record leaves a reference-only case without a golden file.
run suite-record 1 --suite --record "$tmp/suite" &&
  [ ! -e "$tmp/suite/bad/expected.npy" ] && echo "ok: suite-record-no-golden"
run suite-report 2 --suite --report "$tmp/x.json" "$tmp/suite" &&
  has suite-report "$tmp/err" "--report goes with --reference"
run suite-reference 2 --suite --reference "$d/v1.hlo" "$tmp/suite" &&
  has suite-reference "$tmp/err" "--reference (a case carries its own reference.hlo) cannot be used with --suite"

finish
