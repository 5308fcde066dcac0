#!/bin/sh
# End-to-end tests of --reference-precision f64 (spec/cli.md, "Finding what
# goes wrong"; doc/divergence.md, "Carried in f64"): the module against
# itself with every float carried in f64. Every expected line is worked out
# by hand in the comments; each planted problem has its negative.
# Run by `make check`; srcdir and ./hlorun come from the environment.
set -u
srcdir=${srcdir:-.}
d=$srcdir/tests/diverge
H=${HLORUN:-./hlorun}
hl_name=precision
. "$srcdir/tests/lib/harness.sh"

# ---- f16 overflow -------------------------------------------------------------
# x = {2, 300, 0.5}: s = x*x = {4, 90000, 0.25}; 90000 > 65504 (f16's largest
# finite value), so s[1] is inf in f16 and 90000 in f64: a non-finite value
# against a finite one differs. s (line 7) is named, not h or r downstream.
# The result r = sqrt(s/2): [1] is inf against sqrt(45000) = 212.13203435596427.
echo 'f16[3] {2, 300, 0.5}' > "$tmp/x.txt"
run f16-overflow 1 --reference-precision f64 "$d/f16_overflow.hlo" "$tmp/x.txt" &&
  has f16-overflow "$tmp/err" "first divergence: s (multiply, line 7) against its value carried in f64: 1 of 3 elements differ; first at [1]: got inf, reference 90000" &&
  has f16-overflow-result "$tmp/err" "the f64 reference: mismatch: 1 of 3 elements differ (33.3%; f16[3]; rtol=0.005 atol=0.005)" &&
  has f16-overflow-result-at "$tmp/err" "at [1]  got inf  want 212.13203435596427" &&
  has f16-overflow-printed "$tmp/out" "f16[3] {1.4141, inf, 0.35352}"
# However many ulps: inf against a finite value still differs.
run f16-overflow-ulp 1 --reference-precision f64 --ulp 1000000 "$d/f16_overflow.hlo" "$tmp/x.txt" &&
  has f16-overflow-ulp "$tmp/err" "first divergence: s (multiply, line 7)"
# The negative: x = {2, 100, 0.5}: s = {4, 10000, 0.25} and h = {2, 5000,
# 0.125} are exact in f16 (10000 = 625 * 2^4, 11 significant bits); r's
# roundings (sqrt 2 = 1.41421356 -> 1.4140625) are within f16's 5e-3.
echo 'f16[3] {2, 100, 0.5}' > "$tmp/x2.txt"
run f16-exact 0 --reference-precision f64 "$d/f16_overflow.hlo" "$tmp/x2.txt" &&
  has f16-exact "$tmp/err" "first divergence: none" &&
  has f16-exact-count "$tmp/err" "compared 3 values of 3 instructions with a counterpart (0 without)"
# --ulp 1 (tolerances 0) compares with the f64 value rounded to f16: sqrt 2,
# sqrt 5000 = 70.7106781 and sqrt 0.125 = 0.35355339 round to 1448 * 2^-10,
# 1131 * 2^-4 and 1448 * 2^-12, which f16's sqrt gives: 0 ulps apart.
run f16-exact-ulp 0 --reference-precision f64 --ulp 1 "$d/f16_overflow.hlo" "$tmp/x2.txt" &&
  has f16-exact-ulp "$tmp/err" "first divergence: none"
# ... but without the ulp test, tolerance 0 sees every rounding of r:
# 1.4140625 against 1.4142135623730951.
run f16-exact-tol0 1 --reference-precision f64 --rtol 0 --atol 0 "$d/f16_overflow.hlo" "$tmp/x2.txt" &&
  has f16-exact-tol0 "$tmp/err" "first divergence: r (sqrt, line 11) against its value carried in f64: 3 of 3 elements differ" &&
  has f16-exact-tol0-at "$tmp/err" "got 1.4141, reference 1.4142135623730951"

# ---- bf16 cancellation ----------------------------------------------------------
# a = {256, 3}, b = {1, 1}: s = a + b; 257 needs 9 significant bits, bf16
# has 8: the tie rounds to even, 256 (f64: 257, |256 - 257| = 1 within bf16's
# 0.05 + 0.05 * 257, so s agrees). d = s - a cancels: 0 against 1, outside
# 0.05 + 0.05 * 1. d is named, not s. [1]: 3 + 1 - 3 = 1 exactly.
echo 'bf16[2] {256, 3}' > "$tmp/a.txt"
echo 'bf16[2] {1, 1}' > "$tmp/b.txt"
echo 'bf16[2] {2, 1}' > "$tmp/b2.txt"
run bf16-cancel 1 --reference-precision f64 "$d/bf16_cancel.hlo" "$tmp/a.txt" "$tmp/b.txt" &&
  has bf16-cancel "$tmp/err" "first divergence: d (subtract, line 10) against its value carried in f64: 1 of 2 elements differ; largest absolute error 1 at [0]; first at [0]: got 0, reference 1" &&
  has bf16-cancel-printed "$tmp/out" "bf16[2] {0, 1}"
# The negative: b = {2, 1}: 258 = 129 * 2 is exact in bf16; d = {2, 1}.
run bf16-exact 0 --reference-precision f64 "$d/bf16_cancel.hlo" "$tmp/a.txt" "$tmp/b2.txt" &&
  has bf16-exact "$tmp/err" "first divergence: none"

# ---- Explicit converts round in the reference too -------------------------------
# x = {1000, 0.1} (f32): h = convert to f16 rounds 0.1 to 0.0999755859375
# in both runs (the module's own rounding); y = h * h: 1000000 overflows f16.
echo 'f32[2] {1000, 0.1}' > "$tmp/c1.txt"
run convert-y 1 --reference-precision f64 "$d/f16_convert.hlo" "$tmp/c1.txt" &&
  has convert-y "$tmp/err" "first divergence: y (multiply, line 8) against its value carried in f64: 1 of 2 elements differ; first at [0]: got inf, reference 1000000"
# x = {100000, 0.1}: the convert itself overflows to inf, in the reference
# too (an explicit rounding is the module's meaning), so nothing diverges.
echo 'f32[2] {100000, 0.1}' > "$tmp/c2.txt"
run convert-explicit 0 --reference-precision f64 "$d/f16_convert.hlo" "$tmp/c2.txt" &&
  has convert-explicit "$tmp/err" "first divergence: none" &&
  has convert-explicit-out "$tmp/out" "f32[2] {inf, 0.00999450684}"

# ---- What keeps its own type -------------------------------------------------------
# x = {1.5, 3}: y = twice(x) = {3, 6}; f16 3 is 0x4200 = 16896, 6 is 0x4600
# = 17920; +1 gives 3 + 2^-9 and 6 + 2^-8; reduce-precision to 2 mantissa
# bits gives 3 and 6 again. Bits, reduce-precision and bitcast take the
# module's types in the reference: the same values, and all 8 compared
# instructions (y, t, bits, up, z, w, rp, bc) have a counterpart.
echo 'f16[2] {1.5, 3}' > "$tmp/k.txt"
run keep-types 0 --reference-precision f64 "$d/keep_types.hlo" "$tmp/k.txt" &&
  has keep-types "$tmp/err" "first divergence: none" &&
  has keep-types-count "$tmp/err" "compared 8 values of 8 instructions with a counterpart (0 without)" &&
  has keep-types-out "$tmp/out" "(s16[2] {16896, 17920}, f32[1,2] {{3, 6}})"

# A custom call in a loop keeps f32 (converts around it, per call): times2
# doubles x = {1,2,3,4} four times, exactly, in both runs: 16 * x. The 18
# values: h, y, next per iteration (12), lt 5 times, the loop once.
L=tests/diverge/.libs/libdiverge_handlers.so
if [ -f "$L" ]; then
  run custom-call-loop 0 --reference-precision f64 --custom-call "scale=$L:times2" "$d/loop_cc.hlo" "$d/x4.txt" &&
    has custom-call-loop "$tmp/err" "first divergence: none" &&
    has custom-call-loop-count "$tmp/err" "compared 18 values of 5 instructions with a counterpart (0 without)" &&
    has custom-call-loop-out "$tmp/out" "f32[4] {16, 32, 48, 64}"
else
  fail "$L was not built"
fi

# ---- Bad input ---------------------------------------------------------------------
run precision-f32 2 --reference-precision f32 "$d/f16_overflow.hlo" "$tmp/x.txt" &&
  has precision-f32 "$tmp/err" "--reference-precision: expected f64 (the only precision a reference carries), got 'f32'"
run precision-with-ref 2 --reference-precision f64 --reference "$d/f16_overflow.hlo" "$d/f16_overflow.hlo" "$tmp/x.txt" &&
  has precision-with-ref "$tmp/err" "--reference-precision f64 compares the module with itself: it cannot be used with --reference or --reference-custom-call"
run precision-determinism 2 --reference-precision f64 --determinism 2 "$d/f16_overflow.hlo" "$tmp/x.txt" &&
  has precision-determinism "$tmp/err" "--determinism cannot be used with --reference"
lacks precision-determinism-runs "$tmp/err" "first divergence"

finish
