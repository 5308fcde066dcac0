#!/bin/sh
# End-to-end tests of --reference and --passes on many devices (spec/cli.md,
# "Finding what goes wrong" and "Running on many devices"): both modules run
# on one grid, every device's instructions are compared with their
# counterparts on the same device, and the line names the device. Every
# expected value is worked out by hand in the comments (tests/diverge/md/*.hlo
# say what each module computes); each planted bug has its negative.
# Run by `make check`; srcdir and ./hlorun come from the environment.
set -u
srcdir=${srcdir:-.}
m=$srcdir/tests/diverge/md
sp=$srcdir/samples/spmd
H=${HLORUN:-./hlorun}
hl_name=md
. "$srcdir/tests/lib/harness.sh"

# ---- --reference on 2 replicas -------------------------------------------------
# ok.hlo (the reference), p = {1, 2}: q = {1, 4}, ar = {2, 8}, rf = the
# replica id: device 0 {2, 8}, device 1 {3, 9}. The negative: none, and each
# device's result printed as a plain run prints it.
run md-none 0 --reference "$m/ok.hlo" --per-device-outputs "$m/ok.hlo" "$m/p2.txt" &&
  has md-none "$tmp/err" "first divergence: none" &&
  has md-none-grid "$tmp/err" "comparing on 2 devices (2 replicas x 1 partition)" &&
  has md-none-count "$tmp/err" "compared 12 values of 6 instructions with a counterpart (0 without) on 2 devices" &&
  has md-none-d0 "$tmp/out" "device 0: f32[2] {2, 8}" &&
  has md-none-d1 "$tmp/out" "device 1: f32[2] {3, 9}"

# dev1.hlo: rf = convert(2 * replica-id): 0 on device 0 (as the reference),
# 2 instead of 1 on device 1, after the all-reduce. Device 0 agrees
# everywhere; device 1's first divergence is rf (line 19 of dev1.hlo, line
# 17 of ok.hlo; its operand m2 has no counterpart); its result is
# {2 + 2, 8 + 2} = {4, 10} against {3, 9}.
run md-dev1 1 --reference "$m/ok.hlo" --per-device-outputs "$m/dev1.hlo" "$m/p2.txt" &&
  has md-dev1 "$tmp/err" "first divergence: rf (convert, line 19) on device 1 against the reference's rf ($m/ok.hlo line 17): 1 of 1 elements differ; largest absolute error 1 at []; first at []: got 2, reference 1; 1 of 2 devices diverge" &&
  has md-dev1-result "$tmp/err" "$m/ok.hlo: device 1: mismatch: 2 of 2 elements differ" &&
  has md-dev1-at "$tmp/err" "at [1]  got 10  want 9" &&
  lacks md-dev1-d0 "$tmp/err" "device 0: mismatch" &&
  has md-dev1-unpaired "$tmp/err" "(1 without) on 2 devices" &&
  has md-dev1-d1 "$tmp/out" "device 1: f32[2] {4, 10}"

# both.hlo: rf = convert(replica-id + 1): 1 instead of 0 on device 0, 2
# instead of 1 on device 1. Both devices diverge at rf; the lowest-numbered
# device's is named.
run md-both 1 --reference "$m/ok.hlo" --per-device-outputs "$m/both.hlo" "$m/p2.txt" &&
  has md-both "$tmp/err" "first divergence: rf (convert, line 19) on device 0 against the reference's rf ($m/ok.hlo line 17): 1 of 1 elements differ; largest absolute error 1 at []; first at []: got 1, reference 0; 2 of 2 devices diverge" &&
  has md-both-r0 "$tmp/err" "$m/ok.hlo: device 0: mismatch: 2 of 2 elements differ" &&
  has md-both-r1 "$tmp/err" "$m/ok.hlo: device 1: mismatch: 2 of 2 elements differ"

# pre.hlo: q = (p + replica-id) * p: {1, 4} on device 0 (as the reference),
# {2, 6} instead of {1, 4} on device 1, before the all-reduce, which then
# makes {3, 10} instead of {2, 8} on both devices. Device 0's first
# divergence is the all-reduce (its operand q agreed on device 0, but not on
# device 1): device 1's q is named, the cause, not the collective. Errors
# {1, 2}: the largest 2 at [1].
run md-pre 1 --reference "$m/ok.hlo" --per-device-outputs "$m/pre.hlo" "$m/p2.txt" &&
  has md-pre "$tmp/err" "first divergence: q (multiply, line 19) on device 1 against the reference's q ($m/ok.hlo line 14): 2 of 2 elements differ; largest absolute error 2 at [1]; first at [0]: got 2, reference 1; 2 of 2 devices diverge" &&
  lacks md-pre-not-ar "$tmp/err" "first divergence: ar" &&
  has md-pre-d0 "$tmp/out" "device 0: f32[2] {3, 10}"

# --report: the same as JSON (device of the divergence, devices, how many
# diverged; result mismatches 2 + 2 over both devices).
py=${PYTHON3:-python3}
command -v "$py" >/dev/null 2>&1 || py=/usr/bin/python3
run md-report 1 --report "$tmp/r.json" --reference "$m/ok.hlo" --per-device-outputs "$m/pre.hlo" "$m/p2.txt" &&
  if "$py" "$srcdir/tests/diverge/jsonfields.py" "$tmp/r.json" devices=2 devices_diverged=2 \
       first_divergence.device=1 'first_divergence.instruction="q"' first_divergence.line=19 \
       result.mismatches=4 >"$tmp/fields" 2>&1; then echo "ok: md-report"
  else fail md-report; cat "$tmp/fields"; fi

# The same search carried in f64: ok.hlo's values are exact in f32, so the
# module agrees with itself in f64 on both devices.
run md-f64 0 --reference-precision f64 --per-device-outputs "$m/ok.hlo" "$m/p2.txt" &&
  has md-f64 "$tmp/err" "first divergence: none" &&
  has md-f64-grid "$tmp/err" "compared 12 values of 6 instructions with a counterpart (0 without) on 2 devices"

# --reference-custom-call on 2 replicas (cc.hlo, p = {1, 2, 3, 4}): the
# module binds "scale" to times2_buggy, the reference to times2. Device 1's
# call sees v[0] = 4 and multiplies by 3: {12, 15, 18, 21} against {8, 10,
# 12, 14}, largest error 7 at [3]; the all-reduce passes it to device 0,
# whose first divergence is that collective: device 1's call is named. The
# result: device 0's h {2, 4, 6, 8} plus device 1's {12, 15, 18, 21} =
# {14, 19, 24, 29}, against {2, 4, 6, 8} + {8, 10, 12, 14} = {10, 14, 18,
# 22}, the same on both devices, so printed once.
L=tests/diverge/.libs/libdiverge_handlers.so
if [ -f "$L" ]; then
  run md-cc 1 --custom-call "scale=$L:times2_buggy" --reference-custom-call "scale=$L:times2" \
      "$m/cc.hlo" "$srcdir/tests/diverge/x4.txt" &&
    has md-cc "$tmp/err" "first divergence: h (custom-call, line 21, call 0) on device 1 against the reference's h ($m/cc.hlo line 21): 4 of 4 elements differ; largest absolute error 7 at [3]; first at [0]: got 12, reference 8; 2 of 2 devices diverge" &&
    has md-cc-note "$tmp/err" "note: the diverging call is not written as a case: it ran on device 1 of 2" &&
    has md-cc-out "$tmp/out" "f32[4] {14, 19, 24, 29}"
  run md-cc-none 0 --custom-call "scale=$L:times2" --reference-custom-call "scale=$L:times2" \
      "$m/cc.hlo" "$srcdir/tests/diverge/x4.txt" &&
    has md-cc-none "$tmp/err" "first divergence: none" &&
    has md-cc-none-out "$tmp/out" "f32[4] {10, 14, 18, 22}"
else
  fail "$L was not built"
fi

# Bad input: a reference on another grid is an error naming both, before
# anything runs.
sed 's/replica_count=2/replica_count=4/' "$m/ok.hlo" > "$tmp/ok4.hlo"
run md-grid 2 --reference "$tmp/ok4.hlo" "$m/dev1.hlo" "$m/p2.txt" &&
  has md-grid "$tmp/err" "error: the module $m/dev1.hlo runs on 2 replicas x 1 partition, the reference $tmp/ok4.hlo on 4 x 1: both must run on one grid" &&
  lacks md-grid-ran "$tmp/err" "first divergence"

# ---- --reference on 2 partitions --------------------------------------------------
# passes/'s stage 0000: p (f32[4] {1, 2, 3, 4} split in halves) squared,
# summed per partition (5, 25), all-reduced: 30. Stage 0001 adds p + p
# instead: device 0's y = {2, 4} against {1, 4} (1 of 2 differ), device 1's
# {6, 8} against {9, 16}; the result 2*(1+2+3+4) = 20 on both. The global
# result is assembled by the ROOT (replicated) and printed once.
s0=$m/passes/module_0001.jit_g.0000.spmd.after_spmd-partitioning.before_algsimp.txt
s1=$m/passes/module_0001.jit_g.0001.simplification.after_algsimp.before_cse.txt
run md-part 1 --reference "$s0" "$s1" "$srcdir/tests/diverge/x4.txt" &&
  has md-part "$tmp/err" "first divergence: y (add, line 11) on device 0 against the reference's y ($s0 line 11): 1 of 2 elements differ; largest absolute error 1 at [0]; first at [0]: got 2, reference 1; 2 of 2 devices diverge" &&
  has md-part-grid "$tmp/err" "comparing on 2 devices (1 replica x 2 partitions)" &&
  has md-part-out "$tmp/out" "f32[] 20"
run md-part-none 0 --reference "$s0" "$s0" "$srcdir/tests/diverge/x4.txt" &&
  has md-part-none "$tmp/err" "first divergence: none" &&
  has md-part-none-out "$tmp/out" "f32[] 30"

# Each module's own shardings split the global inputs: a reference whose p
# is split the other way round ({devices=[2]1,0}: device 0 gets {3, 4},
# device 1 {1, 2}) squares other values on each device (device 0: {1, 4}
# against {9, 16}), though the sums, and so the results, agree (30).
sed 's/sharding={devices=\[2\]0,1}/sharding={devices=[2]1,0}/' "$s0" > "$tmp/swapped.hlo"
run md-part-own-sharding 0 --reference "$tmp/swapped.hlo" "$s0" "$srcdir/tests/diverge/x4.txt" &&
  has md-part-own-sharding "$tmp/err" "first divergence: y (multiply, line 11) on device 0 against the reference's y ($tmp/swapped.hlo line 11): 2 of 2 elements differ; largest absolute error 12 at [1]; first at [0]: got 1, reference 9; 2 of 2 devices diverge" &&
  has md-part-own-sharding-out "$tmp/out" "f32[] 30"

# ---- --passes with partitioned stages ------------------------------------------------
# passes/: before_optimizations (global, one device: 1+4+9+16 = 30), 0000
# after spmd-partitioning (2 devices, 30), 0001 after algsimp (the bug: 20).
# algsimp is the divergent pass; it and the stage before ran on one grid, so
# their instructions are compared device by device (as md-part above).
run md-passes 1 --passes "$m/passes" "$srcdir/tests/diverge/x4.txt" &&
  has md-passes "$tmp/err" "first divergent pass: algsimp (module_0001.jit_g.0001.simplification.after_algsimp.before_cse.txt)" &&
  has md-passes-first "$tmp/err" "first divergence: y (add, line 11) on device 0 against the reference's y ($s0 line 11): 1 of 2 elements differ; largest absolute error 1 at [0]; first at [0]: got 2, reference 1; 2 of 2 devices diverge"
# passes_spmd/: the partitioner itself is wrong (p + p): its stage and the
# one before (not yet partitioned, one device) have no counterparts device
# by device: the results are compared, and the command says why no more.
run md-passes-spmd 1 --passes "$m/passes_spmd" "$srcdir/tests/diverge/x4.txt" &&
  has md-passes-spmd "$tmp/err" "first divergent pass: spmd-partitioning (module_0001.jit_g.0000.spmd.after_spmd-partitioning.before_algsimp.txt)" &&
  has md-passes-spmd-why "$tmp/err" "no instruction-by-instruction search between it and the stage before: it ran on 2 devices, the stage before on 1" &&
  lacks md-passes-spmd-first "$tmp/err" "first divergence:"

# passes_shmap/: a shard_map before partitioning (manual regions: on its 2
# devices, global values) and a partitioned stage without collectives (told
# by the inputs' global shapes): both run on 2 devices with the same global
# inputs; the partitioner's stage multiplies by 3, not 2, and is named.
sed 's/constant(3)/constant(2)/' "$m/passes_shmap/module_0001.jit_g.0000.spmd.after_spmd-partitioning.before_algsimp.txt" \
  >"$tmp/shmap_ok.txt" && mkdir -p "$tmp/shmap_ok" &&
  cp "$m/passes_shmap/module_0001.jit_g.before_optimizations.txt" "$tmp/shmap_ok/" &&
  cp "$tmp/shmap_ok.txt" "$tmp/shmap_ok/module_0001.jit_g.0000.spmd.after_spmd-partitioning.before_algsimp.txt"
run md-passes-shmap-ok 0 --passes "$tmp/shmap_ok" "$srcdir/tests/diverge/x4.txt" &&
  has md-passes-shmap-ok "$tmp/err" "first divergent pass: none (2 stages ran, 0 skipped)"
run md-passes-shmap 1 --passes "$m/passes_shmap" "$srcdir/tests/diverge/x4.txt" &&
  has md-passes-shmap-grid "$tmp/err" "stage module_0001.jit_g.0000.spmd.after_spmd-partitioning.before_algsimp.txt (spmd-partitioning) on 2 devices" &&
  has md-passes-shmap "$tmp/err" "first divergent pass: spmd-partitioning (module_0001.jit_g.0000.spmd.after_spmd-partitioning.before_algsimp.txt)"

# samples/spmd's MLP on 2 x 4 partitions: partition p slices the bias at
# offsets[p] = {0, 8, 16, 24, 0, 8, 16, 24}[p]; a stage that has 16 for
# partition 7 (d = 1, m = 3) is wrong on device 7 first (at = {16}, not
# {24}); the all-reduce over {4..7} carries it to devices 4-6 and the
# all-gather over {m, m + 4} to 0-3, where the first divergence is at a
# collective: device 7's dynamic-slice is named, 8 of 8 devices diverge.
mkdir "$tmp/mlp"
cp "$sp/mlp_global.hlo" "$tmp/mlp/module_0001.jit_mlp.before_optimizations.txt"
cp "$sp/mlp_2x4.hlo" "$tmp/mlp/module_0001.jit_mlp.0004.spmd.after_spmd-partitioner.before_algsimp.txt"
sed 's/{0, 8, 16, 24, 0, 8, 16, 24}/{0, 8, 16, 24, 0, 8, 16, 16}/' "$sp/mlp_2x4.hlo" \
  > "$tmp/mlp/module_0001.jit_mlp.cpu_after_optimizations.txt"
ins="$sp/mlp.in0.txt $sp/mlp.in1.txt $sp/mlp.in2.txt $sp/mlp.in3.txt"
# shellcheck disable=SC2086
run md-mlp 1 --passes "$tmp/mlp" $ins &&
  has md-mlp "$tmp/err" "first divergent pass: cpu_after_optimizations (module_0001.jit_mlp.cpu_after_optimizations.txt)" &&
  has md-mlp-first "$tmp/err" "first divergence: at (dynamic-slice, line 23) on device 7 against the reference's at ($tmp/mlp/module_0001.jit_mlp.0004.spmd.after_spmd-partitioner.before_algsimp.txt line 23): 1 of 1 elements differ; largest absolute error 8 at [0]; first at [0]: got 16, reference 24; 8 of 8 devices diverge"
# Its negative: the right stage twice.
cp "$sp/mlp_2x4.hlo" "$tmp/mlp/module_0001.jit_mlp.cpu_after_optimizations.txt"
# shellcheck disable=SC2086
run md-mlp-none 0 --reference "$sp/mlp_2x4.hlo" "$tmp/mlp/module_0001.jit_mlp.cpu_after_optimizations.txt" $ins &&
  has md-mlp-none "$tmp/err" "first divergence: none" &&
  has md-mlp-none-grid "$tmp/err" "comparing on 8 devices (1 replica x 8 partitions)"

finish
