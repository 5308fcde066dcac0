#!/bin/sh
# End-to-end tests of finding what goes wrong (spec/cli.md): --ulp as a
# tolerance of every comparison, and --reference REF (the first divergence
# between two runs). Every expected line is worked out by hand in the
# comments; each planted bug has its negative (a correct pair says none).
# Run by `make check`; srcdir and ./hlorun come from the environment.
set -u
srcdir=${srcdir:-.}
d=$srcdir/tests/diverge
s=$srcdir/samples
H=${HLORUN:-./hlorun}
hl_name=diverge
. "$srcdir/tests/lib/harness.sh"

# ---- --ulp ------------------------------------------------------------------
# f32: 1.00000024 is 1 + 2*2^-23, two values above 1; the smallest subnormal
# 1.4e-45 and its negative are two apart across zero; -0 and 0 are zero apart;
# inf equals inf. So --ulp 1 fails [0] and [2], --ulp 2 passes all.
echo 'f32[4] {1, -0, 1.4e-45, inf}' > "$tmp/g32.txt"
echo 'f32[4] {1.00000024, 0, -1.4e-45, inf}' > "$tmp/w32.txt"
run ulp-f32-1 1 "$d/copy_f32.hlo" "$tmp/g32.txt" --expect "$tmp/w32.txt" --ulp 1 &&
  has ulp-f32-1 "$tmp/err" "mismatch: 2 of 4 elements differ (50%; f32[4]; ulp=1)" &&
  has ulp-f32-1-at "$tmp/err" "at [2]  got 1.4013e-45  want -1.4013e-45"
run ulp-f32-2 0 "$d/copy_f32.hlo" "$tmp/g32.txt" --expect "$tmp/w32.txt" --ulp 2 &&
  echo "ok: ulp-f32-2"
# Without --ulp the default f32 tolerance (1e-4) passes them all too, and
# --ulp 0 (equal values) fails the same two.
run ulp-f32-0 1 "$d/copy_f32.hlo" "$tmp/g32.txt" --expect "$tmp/w32.txt" --ulp 0 &&
  has ulp-f32-0 "$tmp/err" "2 of 4 elements differ"
# Non-finite against finite always differs, however many ulps (inf is the
# next bit pattern after the largest float); NaN matches NaN.
echo 'f32[4] {inf, nan, 3.40282347e+38, 1}' > "$tmp/g.txt"
echo 'f32[4] {3.40282347e+38, nan, inf, 1}' > "$tmp/w.txt"
run ulp-nonfinite 1 "$d/copy_f32.hlo" "$tmp/g.txt" --expect "$tmp/w.txt" --ulp 1000000 &&
  has ulp-nonfinite "$tmp/err" "2 of 4 elements differ" &&
  has ulp-nonfinite-at "$tmp/err" "at [0]  got inf             want 3.40282347e+38"
# f16: 1 + 2^-10 is one value above 1; 65504 (the largest) against inf
# differs; 1 + 2^-9 is two above 1. --ulp 1: [1] and [3] differ.
echo 'f16[4] {1, 65504, -0, 1}' > "$tmp/g.txt"
echo 'f16[4] {1.0009765625, inf, 0, 1.001953125}' > "$tmp/w.txt"
run ulp-f16 1 "$d/copy_f16.hlo" "$tmp/g.txt" --expect "$tmp/w.txt" --ulp 1 &&
  has ulp-f16 "$tmp/err" "2 of 4 elements differ (50%; f16[4]; ulp=1)" &&
  has ulp-f16-at1 "$tmp/err" "at [1]  got 65504  want inf"
# bf16: above 1 values are 2^-7 apart, below 1 2^-8: 1.0078125 and 0.99609375
# are one value from 1, 1.015625 and 0.9921875 two.
echo 'bf16[4] {1, 1, 1, 1}' > "$tmp/g.txt"
echo 'bf16[4] {1.0078125, 1.015625, 0.99609375, 0.9921875}' > "$tmp/w.txt"
run ulp-bf16-1 1 "$d/copy_bf16.hlo" "$tmp/g.txt" --expect "$tmp/w.txt" --ulp 1 &&
  has ulp-bf16-1 "$tmp/err" "2 of 4 elements differ (50%; bf16[4]; ulp=1)"
run ulp-bf16-2 0 "$d/copy_bf16.hlo" "$tmp/g.txt" --expect "$tmp/w.txt" --ulp 2 && echo "ok: ulp-bf16-2"
# --ulp with --atol: an element passes by either.
echo 'f32[4] {1, 2, 3, 4}' > "$tmp/g.txt"
echo 'f32[4] {1.5, 2, 3, 4}' > "$tmp/w.txt"
run ulp-or-atol 0 "$d/copy_f32.hlo" "$tmp/g.txt" --expect "$tmp/w.txt" --ulp 1 --atol 0.5 &&
  echo "ok: ulp-or-atol"
run ulp-not-atol 1 "$d/copy_f32.hlo" "$tmp/g.txt" --expect "$tmp/w.txt" --ulp 1 --atol 0.4 &&
  has ulp-not-atol "$tmp/err" "(25%; f32[4]; rtol=0 atol=0.4 ulp=1)"
# Suites pass --ulp to their cases: off_by_one's 33 against 34 lies in
# [32, 64), where f32 values are 2^-18 apart: 2^18 = 262144 values.
run ulp-suite-pass 0 --suite --ulp 262144 "$srcdir/tests/suite-broken/off_by_one" &&
  has ulp-suite-pass "$tmp/out" "1 passed, 0 failed"
run ulp-suite-fail 1 --suite --ulp 262143 "$srcdir/tests/suite-broken/off_by_one" &&
  has ulp-suite-fail "$tmp/out" "at [2] got 33 want 34"
# Malformed counts are usage errors.
run ulp-bad-word 2 "$d/copy_f32.hlo" "$tmp/g.txt" --ulp x &&
  has ulp-bad-word "$tmp/err" "--ulp: bad count 'x' (a non-negative integer)"
run ulp-bad-negative 2 "$d/copy_f32.hlo" "$tmp/g.txt" --ulp=-1 &&
  has ulp-bad-negative "$tmp/err" "--ulp: bad count '-1'"

# ---- --reference: two versions of a module ------------------------------------
# v1 computes b = a*x, v2 (the reference) b = a*a, with a = 2x; c and d depend
# on b. x = {1,2,3}: b is {2,8,18} against {4,16,36}: 3 of 3 differ, the
# largest error 18 at [2]. The first divergence is b, not c or d.
run ref-version 1 --reference "$d/v2.hlo" "$d/v1.hlo" "$d/x3.txt" &&
  has ref-version-result "$tmp/out" "f32[3] {-1, -6, -15}" &&
  has ref-version-mismatch "$tmp/err" "v2.hlo: mismatch: 3 of 3 elements differ" &&
  has ref-version "$tmp/err" "first divergence: b (multiply, line 8) against the reference's b ($d/v2.hlo line 7): 3 of 3 elements differ; largest absolute error 18 at [2]; first at [0]: got 2, reference 4" &&
  has ref-version-count "$tmp/err" "of 4 instructions with a counterpart (0 without)"
run ref-version-none 0 --reference "$d/v1.hlo" "$d/v1.hlo" "$d/x3.txt" &&
  has ref-version-none "$tmp/err" "first divergence: none" &&
  has ref-version-none-count "$tmp/err" "compared 4 values of 4 instructions"

# ---- --reference: before and after optimization --------------------------------
# samples/cpu_before_opt.hlo is cpu_after_opt.hlo before fusion (other names;
# pairs by metadata). after_opt_bug.hlo swaps subtract.37's operands inside
# fused_computation.2: max - s instead of s - max. Each row's largest element
# gives 0 either way, so 128 - 8 rows = 120 elements differ, each negated.
ins="$s/cpu_after_opt.in0.txt $s/cpu_after_opt.in1.txt"
# shellcheck disable=SC2086
run ref-fusion 1 --reference "$s/cpu_before_opt.hlo" "$d/after_opt_bug.hlo" $ins &&
  has ref-fusion "$tmp/err" "first divergence: subtract.37 (subtract, line 60) against the reference's sub.38 ($s/cpu_before_opt.hlo line 68): 120 of 128 elements differ" &&
  has ref-fusion-negated "$tmp/err" "first at [0,0]: got 0.0717000365, reference -0.0717000365"
# The correct pair: no divergence. 12 of the after-optimization module's 25
# compared instructions have a counterpart (the loop's multiply, add and
# counter, the condition's compare, the first fusion's multiply, the three
# reductions, subtract, exponential, divide, the while); the 21 values are
# 3 iterations x 3 body values, 4 condition checks, and 8 others.
# shellcheck disable=SC2086
run ref-fusion-none 0 --reference "$s/cpu_before_opt.hlo" "$s/cpu_after_opt.hlo" $ins &&
  has ref-fusion-none "$tmp/err" "first divergence: none" &&
  has ref-fusion-none-count "$tmp/err" "compared 21 values of 12 instructions with a counterpart (13 without)"
# The before-optimization module computes the same result as its golden.
# shellcheck disable=SC2086
run before-opt-golden 0 "$s/cpu_before_opt.hlo" $ins --expect "$s/cpu_after_opt.expected.txt" &&
  echo "ok: before-opt-golden"

# ---- --reference: one wrong loop iteration -------------------------------------
# loop_bad.hlo multiplies by 3 instead of 2 on iteration 2 only: y there is
# {12,24,36,48} against {8,16,24,32} (x = {1,2,3,4}, doubled twice before).
run ref-loop 1 --reference "$d/loop_ok.hlo" "$d/loop_bad.hlo" "$d/x4.txt" &&
  has ref-loop "$tmp/err" "first divergence: y (multiply, line 15, iteration 2) against the reference's y ($d/loop_ok.hlo line 11): 4 of 4 elements differ; largest absolute error 16 at [3]; first at [0]: got 12, reference 8" &&
  has ref-loop-unpaired "$tmp/err" "(3 without)"
run ref-loop-none 0 --reference "$d/loop_ok.hlo" "$d/loop_ok.hlo" "$d/x4.txt" &&
  has ref-loop-none "$tmp/err" "first divergence: none"
# A small memory budget is not an option of the command; the library's parts
# are covered by tests/check_diverge.

# ---- --reference: bad input --------------------------------------------------------
run ref-params 2 --reference "$d/ref_s32.hlo" "$d/v1.hlo" "$d/x3.txt" &&
  has ref-params "$tmp/err" "error: parameter 0 differs: f32[3] in the module $d/v1.hlo, s32[3] in the reference $d/ref_s32.hlo" &&
  lacks ref-params-nothing-ran "$tmp/out" "f32[3]"
run ref-fails 2 --reference "$d/ref_fails.hlo" "$d/v1.hlo" "$d/x3.txt" &&
  has ref-fails "$tmp/err" "error: the reference $d/ref_fails.hlo failed:" &&
  has ref-fails-where "$tmp/err" "ref_fails.hlo:7:8: error: custom-call target \"no_such_handler\" (line 7) has no handler" &&
  lacks ref-fails-not-none "$tmp/err" "first divergence"
run module-fails 2 --reference "$d/v1.hlo" "$d/ref_fails.hlo" "$d/x3.txt" &&
  has module-fails "$tmp/err" "error: the module $d/ref_fails.hlo failed:"
run ref-missing 2 --reference "$tmp/nonexistent.hlo" "$d/v1.hlo" "$d/x3.txt" && echo "ok: ref-missing"
run ref-trace 2 --reference "$d/v1.hlo" --trace "$d/v1.hlo" "$d/x3.txt" &&
  has ref-trace "$tmp/err" "--trace cannot be used with --reference"

# ---- --reference-custom-call ---------------------------------------------------
# loop_cc.hlo applies custom call "scale" then the built-in MoveToHost (the
# identity) four times to x = {1,2,3,4}. times2_buggy multiplies by 3 when
# x[0] == 4, which is the third call (x[0] = 1, 2, 4, 8): iteration 2, where
# h is {12,24,36,48} against times2's {8,16,24,32}.
L=tests/diverge/.libs/libdiverge_handlers.so
if [ -f "$L" ]; then
  run refcc-loop 1 --custom-call "scale=$L:times2_buggy" --reference-custom-call "scale=$L:times2" \
      --dump-custom-calls "$tmp/dcc" "$d/loop_cc.hlo" "$d/x4.txt" &&
    has refcc-loop "$tmp/err" "first divergence: h (custom-call, line 11, iteration 2) against the reference's h ($d/loop_cc.hlo line 11): 4 of 4 elements differ; largest absolute error 16 at [3]; first at [0]: got 12, reference 8" &&
    has refcc-loop-case "$tmp/err" "the diverging call: $tmp/dcc/call-0000"
  # The case replays the call on its operands {4,8,12,16} with this run's
  # binding (from its args file): got 12 where the reference gave 8.
  run refcc-replay 1 --replay "$tmp/dcc/call-0000" &&
    has refcc-replay "$tmp/err" "at [0]  got 12  want 8"
  # ... and passes with the reference's handler (options on the command line win).
  run refcc-replay-fixed 0 --replay "$tmp/dcc/call-0000" --custom-call "scale=$L:times2" &&
    echo "ok: refcc-replay-fixed"
  run refcc-none 0 --custom-call "scale=$L:times2" --reference-custom-call "scale=$L:times2" \
      "$d/loop_cc.hlo" "$d/x4.txt" &&
    has refcc-none "$tmp/err" "first divergence: none"
  # TARGET=builtin: identity_buggy adds 1 to y[1] when x[0] == 4: the second
  # MoveToHost call (iteration 1, operand h = {4,8,12,16}): 9 against 8.
  run refcc-builtin 1 --custom-call "scale=$L:times2" --custom-call "MoveToHost=$L:identity_buggy" \
      --reference-custom-call MoveToHost=builtin --dump-custom-calls "$tmp/dcc2" \
      "$d/loop_cc.hlo" "$d/x4.txt" &&
    has refcc-builtin "$tmp/err" "first divergence: y (custom-call, line 12, iteration 1) against the reference's y ($d/loop_cc.hlo line 12): 1 of 4 elements differ; largest absolute error 1 at [1]; first at [1]: got 9, reference 8"
  run refcc-no-builtin 2 --custom-call "scale=$L:times2" --reference-custom-call scale=builtin \
      "$d/loop_cc.hlo" "$d/x4.txt" &&
    has refcc-no-builtin "$tmp/err" "--reference-custom-call scale=builtin: hlorun has no built-in implementation of custom-call target \"scale\""
  # The reference fails: its handler does not exist in the library.
  run refcc-ref-fails 2 --custom-call "scale=$L:times2" --reference-custom-call "scale=$L:no_such_symbol" \
      "$d/loop_cc.hlo" "$d/x4.txt" &&
    lacks refcc-ref-fails "$tmp/err" "first divergence"
  run refcc-malformed 2 --reference-custom-call scale "$d/loop_cc.hlo" "$d/x4.txt" &&
    has refcc-malformed "$tmp/err" "--reference-custom-call: expected TARGET=LIB.so[:SYMBOL] or TARGET=builtin, got 'scale'"
else
  fail "$L was not built"
fi

# ---- --determinism ------------------------------------------------------------------
# unstable adds 1 from its fifth call on: run 0 makes calls 0-3, so run 1's
# first call (iteration 0 of the loop) differs on the same operand bits.
if [ -f "$L" ]; then
  run det-unstable 1 --determinism 3 --custom-call "scale=$L:unstable" "$d/loop_cc.hlo" "$d/x4.txt" &&
    has det-unstable "$tmp/err" "first nondeterministic: h (custom-call, line 11, iteration 0): its result's bits differ between run 0 (1 thread) and run 1 (" &&
    has det-unstable-same-operands "$tmp/err" "for the same operand bits"
  # times2 keeps no state: 4 iterations x (h, y, next) + 5 checks + the loop = 18 steps.
  run det-stable 0 --determinism 3 --custom-call "scale=$L:times2" "$d/loop_cc.hlo" "$d/x4.txt" &&
    has det-stable "$tmp/err" "deterministic: 3 runs agree (threads 1, " &&
    has det-stable-steps "$tmp/err" "; 18 steps each)"
fi
# Kernels give the same bits under every thread count (spec/cli.md).
# shellcheck disable=SC2086
run det-kernels 0 --determinism 4 "$s/cpu_after_opt.hlo" $ins &&
  has det-kernels "$tmp/err" "deterministic: 4 runs agree"
run det-bad 2 --determinism 1 "$d/v1.hlo" "$d/x3.txt" &&
  has det-bad "$tmp/err" "--determinism: bad run count '1' (2 to 64)"
run det-bad-word 2 --determinism many "$d/v1.hlo" "$d/x3.txt" &&
  has det-bad-word "$tmp/err" "--determinism: bad run count 'many'"

finish
