#!/bin/sh
# End-to-end tests of --passes DIR (spec/cli.md, "Every pass of a dump"):
# hand-made pass dumps of one module, named as xla/service/dump.cc names
# them. f(x) = 2x + 1 at every stage, x = {1, 2, 3, 4}: {3, 5, 7, 9}.
# passes_bad: the cse pass (step 0002) rewrites add(m, c) as add(m, m):
# 4x = {4, 8, 12, 16}; the fusion and after-optimizations stages carry the
# bug on. passes_ok: the same steps done right; its before-optimizations
# stage calls a custom call without a handler and its layout step does not
# verify: both are listed and skipped.
set -u
srcdir=${srcdir:-.}
d=$srcdir/tests/diverge
H=${HLORUN:-./hlorun}
hl_name=passes
. "$srcdir/tests/lib/harness.sh"

echo 'f32[4] {1, 2, 3, 4}' > "$tmp/x.txt"
b=$d/passes_bad
# Stages in step order: before_optimizations, 0000 .. 0003, then
# cpu_after_optimizations (6; the buffer-assignment file is not a stage).
# cse's result differs from the baseline at all 4 elements, the largest
# error at [3] (16 - 9 = 7); within the stage, m = add(x, x) agrees with
# algsimp's and a is the first divergence: got 4, reference 3 at [0].
run passes-bad 1 --passes "$b" "$tmp/x.txt" &&
  has passes-bad-count "$tmp/err" "passes: $b: 6 stages of module_0003.jit_f" &&
  has passes-bad-baseline "$tmp/err" "baseline: module_0003.jit_f.before_optimizations.txt" &&
  has passes-bad "$tmp/err" "first divergent pass: cse (module_0003.jit_f.0002.simplification.after_cse.before_fusion.txt)" &&
  has passes-bad-result "$tmp/err" "mismatch: 4 of 4 elements differ (100%; f32[4]; rtol=0.0001 atol=0.0001)" &&
  has passes-bad-largest "$tmp/err" "largest absolute error 7 at [3]" &&
  has passes-bad-first "$tmp/err" "first divergence: a (add, line 10) against the reference's a ($b/module_0003.jit_f.0001.simplification.after_algsimp.before_cse.txt line 10): 4 of 4 elements differ; largest absolute error 7 at [3]; first at [0]: got 4, reference 3" &&
  lacks passes-bad-stops "$tmp/err" "stage module_0003.jit_f.0003" &&
  lacks passes-bad-not-a-stage "$tmp/err" "buffer-assignment"

g=$d/passes_ok
run passes-ok 0 --passes "$g" "$tmp/x.txt" &&
  has passes-ok "$tmp/err" "first divergent pass: none (5 stages ran, 2 skipped)" &&
  has passes-ok-skip-first "$tmp/err" "skipped: module_0003.jit_f.before_optimizations.txt: it does not run:" &&
  has passes-ok-why "$tmp/err" "custom-call target \"no_handler_anywhere\" (line 7) has no handler" &&
  has passes-ok-baseline "$tmp/err" "baseline: module_0003.jit_f.0000.pipeline-start.after_pipeline-start.before_algsimp.txt (the first stage, module_0003.jit_f.before_optimizations.txt, cannot run)" &&
  has passes-ok-skip-verify "$tmp/err" "skipped: module_0003.jit_f.0003.layout.after_layout.before_fusion.txt: the module does not load or verify:"

# Two modules in one directory: an error listing them, or a choice.
mkdir "$tmp/two"
cp "$g"/*.txt "$tmp/two/"
cp "$b/module_0003.jit_f.before_optimizations.txt" "$tmp/two/module_0007.jit_g.before_optimizations.txt"
cp "$b/module_0003.jit_f.0002.simplification.after_cse.before_fusion.txt" "$tmp/two/module_0007.jit_g.0000.simplification.after_cse.before_fusion.txt"
run passes-two 2 --passes "$tmp/two" "$tmp/x.txt" &&
  has passes-two "$tmp/err" "holds the dumps of 2 modules: choose one with --passes-module NAME:" &&
  has passes-two-f "$tmp/err" "  module_0003.jit_f (NAME jit_f)" &&
  has passes-two-g "$tmp/err" "  module_0007.jit_g (NAME jit_g)"
run passes-pick-g 1 --passes "$tmp/two" --passes-module jit_g "$tmp/x.txt" &&
  has passes-pick-g "$tmp/err" "first divergent pass: cse (module_0007.jit_g.0000.simplification.after_cse.before_fusion.txt)"
run passes-pick-f 0 --passes "$tmp/two" --passes-module module_0003.jit_f "$tmp/x.txt" &&
  has passes-pick-f "$tmp/err" "first divergent pass: none (5 stages ran, 2 skipped)"
run passes-pick-none 2 --passes "$tmp/two" --passes-module jit_h "$tmp/x.txt" &&
  has passes-pick-none "$tmp/err" "--passes-module jit_h: no such module in $tmp/two; it holds:"

# Stages after SPMD partitioning run on their devices (cli.md's multi-device
# rules): samples/spmd's MLP before partitioning (global shapes, shardings
# only: one device) and after it for 2 x 4 partitions (partition-id,
# all-reduce, all-gather: 8 devices), on the same global inputs. Right, they
# agree (samples/spmd/mlp_2x4.expected.txt is both results). Run as one
# device, the partitioned stage could not take the global inputs (f32[8,16]
# for its f32[4,16] x) and was skipped.
sp=$srcdir/samples/spmd
mkdir "$tmp/spmd"
cp "$sp/mlp_global.hlo" "$tmp/spmd/module_0001.jit_mlp.before_optimizations.txt"
cp "$sp/mlp_2x4.hlo" "$tmp/spmd/module_0001.jit_mlp.0004.spmd.after_spmd-partitioner.before_algsimp.txt"
cp "$sp/mlp_2x4.hlo" "$tmp/spmd/module_0001.jit_mlp.cpu_after_optimizations.txt"
ins="$sp/mlp.in0.txt $sp/mlp.in1.txt $sp/mlp.in2.txt $sp/mlp.in3.txt"
run passes-spmd 0 --passes "$tmp/spmd" $ins &&
  has passes-spmd "$tmp/err" "first divergent pass: none (3 stages ran, 0 skipped)" &&
  has passes-spmd-devices "$tmp/err" "stage module_0001.jit_mlp.0004.spmd.after_spmd-partitioner.before_algsimp.txt (spmd-partitioner) on 8 devices" &&
  lacks passes-spmd-one "$tmp/err" "stage module_0001.jit_mlp.before_optimizations.txt (before_optimizations) on"
run passes-spmd-random 0 --passes "$tmp/spmd" --random &&
  has passes-spmd-random "$tmp/err" "first divergent pass: none (3 stages ran, 0 skipped)"
# A partitioner bug: partition 7 (data 1, model 3) slices the bias at 16,
# not 24: hidden units 24..31 of rows 4..7 get the wrong bias, so rows 4..7
# of the result differ after the all-reduce and rows 0..3 do not. The
# stages ran on different device counts: no instruction-by-instruction
# comparison, said so.
mkdir "$tmp/spmd_bad"
cp "$tmp/spmd/module_0001.jit_mlp.before_optimizations.txt" "$tmp/spmd_bad/"
for f in module_0001.jit_mlp.0004.spmd.after_spmd-partitioner.before_algsimp.txt \
         module_0001.jit_mlp.cpu_after_optimizations.txt; do
  sed 's/{0, 8, 16, 24, 0, 8, 16, 24}/{0, 8, 16, 24, 0, 8, 16, 16}/' "$sp/mlp_2x4.hlo" > "$tmp/spmd_bad/$f"
done
run passes-spmd-bad 1 --passes "$tmp/spmd_bad" $ins &&
  has passes-spmd-bad "$tmp/err" "first divergent pass: spmd-partitioner (module_0001.jit_mlp.0004.spmd.after_spmd-partitioner.before_algsimp.txt)" &&
  has passes-spmd-bad-why "$tmp/err" "no instruction-by-instruction search between it and the stage before: it ran on 8 devices, the stage before on 1 (a stage before SPMD partitioning runs as one device on the global values" &&
  lacks passes-spmd-bad-rows "$tmp/err" "at [0," && lacks passes-spmd-bad-rows "$tmp/err" "at [1," &&
  lacks passes-spmd-bad-rows "$tmp/err" "at [2," && lacks passes-spmd-bad-rows "$tmp/err" "at [3,"
# A partitioned stage that cannot run on its devices (a custom call without
# a handler before the all-gather) is listed with why, and skipped.
mkdir "$tmp/spmd_cc"
cp "$tmp/spmd/module_0001.jit_mlp.before_optimizations.txt" "$tmp/spmd_cc/"
sed 's/^  ROOT y = f32\[8,16\]{1,0} all-gather(ar)/  cc = f32[4,16]{1,0} custom-call(ar), custom_call_target="no_handler_anywhere"\n  ROOT y = f32[8,16]{1,0} all-gather(cc)/' \
  "$sp/mlp_2x4.hlo" > "$tmp/spmd_cc/module_0001.jit_mlp.0004.spmd.after_spmd-partitioner.before_algsimp.txt"
run passes-spmd-cc 0 --passes "$tmp/spmd_cc" $ins &&
  has passes-spmd-cc "$tmp/err" "skipped: module_0001.jit_mlp.0004.spmd.after_spmd-partitioner.before_algsimp.txt: it does not run on its 8 devices:" &&
  has passes-spmd-cc-why "$tmp/err" "custom-call target \"no_handler_anywhere\" (line 34) has no handler" &&
  has passes-spmd-cc-none "$tmp/err" "first divergent pass: none (1 stage ran, 1 skipped)"

# Bad input.
mkdir "$tmp/empty"
run passes-empty 2 --passes "$tmp/empty" "$tmp/x.txt" &&
  has passes-empty "$tmp/err" "no XLA pass dumps (module_NNNN.NAME.*.txt) in the directory"
run passes-missing 2 --passes "$tmp/nothere" "$tmp/x.txt" &&
  has passes-missing "$tmp/err" "--passes $tmp/nothere: cannot read the directory"
run passes-module-alone 2 --passes-module jit_f "$b/module_0003.jit_f.before_optimizations.txt" "$tmp/x.txt" &&
  has passes-module-alone "$tmp/err" "--passes-module goes with --passes DIR"
run passes-with-ref 2 --passes "$b" --reference "$b/module_0003.jit_f.before_optimizations.txt" "$tmp/x.txt" &&
  has passes-with-ref "$tmp/err" "--passes DIR takes INPUTs only"
# Inputs that fit no stage: every stage is skipped, an error.
echo 'f32[3] {1, 2, 3}' > "$tmp/x3.txt"
run passes-no-stage 2 --passes "$b" "$tmp/x3.txt" &&
  has passes-no-stage "$tmp/err" "--passes $b: none of the 6 stages can run"

finish
