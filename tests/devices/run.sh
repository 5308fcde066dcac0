#!/bin/sh
# Multi-device runs end to end (spec/cli.md, "Running on many devices"):
# every collective and group mode against per-device results worked out by
# hand (the comments of each module), sharded inputs and assembled results,
# per-device inputs and outputs, the MLP sample against its unpartitioned
# twin, and the errors that must end a run at once (never a hang). When
# Open MPI's mpirun is on PATH and hlorun has the MPI transport, the same
# runs under mpirun -np 2 and -np 4 must give the threaded run's bytes.
set -u
# mpirun forwards its standard input to rank 0: read none, so that a loop
# feeding its caller's input (while read ...; do ...; done) is not cut short.
exec </dev/null
srcdir=${srcdir:-.}
d=$srcdir/tests/devices
s=$srcdir/samples/spmd
H=${HLORUN:-./hlorun}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-devices.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Open MPI's session directory of our own: mpirun jobs of other tests
# running at the same time raced on the shared /tmp/ompi.HOST.UID (a start
# failed with "mkdir: File exists").
OMPI_MCA_orte_tmpdir_base=$tmp; export OMPI_MCA_orte_tmpdir_base
pass=0 fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; pass=$((pass + 1)); }

# MPI runs as root need Open MPI's consent; more ranks than cores need --oversubscribe.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# When configure built the MPI transport and found mpirun (make check
# passes HLORUN_MPIRUN), the MPI runs are required: a broken mpirun fails
# here rather than skipping them. HLORUN_MPI=no skips them on purpose.
MPI=""
if [ "${HLORUN_MPI:-yes}" = no ]; then
  echo "note: HLORUN_MPI=no: the MPI runs are skipped"
elif command -v mpirun >/dev/null 2>&1 && [ "$(timeout 60 mpirun -np 2 "$H" --version 2>/dev/null | head -1)" ] &&
   timeout 60 mpirun -np 2 "$H" --per-device-outputs "$d/modes.hlo" 2>/dev/null | cmp -s - "$d/modes.expected"; then
  MPI=yes
elif [ "${HLORUN_MPIRUN:-no}" != no ]; then
  fail "the build has the MPI transport, but 'mpirun -np 2 hlorun --per-device-outputs modes.hlo' does not give modes.expected"
else
  echo "note: mpirun or the MPI transport is missing: the MPI runs are skipped"
fi

# run NAME WANT_RC STDOUT_WANT_FILE_OR_- STDERR_GREP_OR_- ARGS...: threaded,
# then (MPI) under mpirun -np 2 and -np 4 (up to $NDEV, the module's device
# count, when set; none when NDEV=1) with the same exit status and stdout.
NDEV=4
run() {
  name=$1 rc_want=$2 out_want=$3 err_want=$4
  shift 4
  for np in 0 2 4; do
    [ "$np" = 0 ] || { [ -n "$MPI" ] && [ "$np" -le "$NDEV" ]; } || continue
    if [ "$np" = 0 ]; then timeout 120 "$H" "$@" >"$tmp/out" 2>"$tmp/err"
    else timeout 120 mpirun -np "$np" "$H" "$@" >"$tmp/out" 2>"$tmp/err"; fi
    rc=$?
    label="$name${np#0}"; [ "$np" = 0 ] || label="$name (mpirun -np $np)"
    if [ "$rc" = 124 ]; then fail "$label: timed out"; continue; fi
    # mpirun passes on a rank's failure as its own non-zero status.
    if { [ "$np" = 0 ] && [ "$rc" != "$rc_want" ]; } ||
       { [ "$rc_want" = 0 ] && [ "$rc" != 0 ]; } || { [ "$rc_want" != 0 ] && [ "$rc" = 0 ]; }; then
      fail "$label: exit $rc, want $rc_want"; sed 's/^/  /' "$tmp/err" | head -8; continue
    fi
    if [ "$out_want" != - ] && ! cmp -s "$tmp/out" "$out_want"; then
      fail "$label: stdout differs"; diff "$tmp/out" "$out_want" | head -8; continue
    fi
    if [ "$err_want" != - ] && ! grep -q -- "$err_want" "$tmp/err"; then
      fail "$label: stderr lacks '$err_want'"; sed 's/^/  /' "$tmp/err" | head -8; continue
    fi
    ok "$label"
  done
}

# Per-device results worked out by hand (see each module's comment).
for m in collectives modes forms mesh; do
  run "$m" 0 "$d/$m.expected" - --per-device-outputs "$d/$m.hlo"
done
# 64 devices as an 8x8 mesh, whose results awk works out from the formulas
# in the module's comment; under mpirun -np 4, 16 devices per process.
awk 'BEGIN { for (p = 0; p < 64; p++) { r = int(p / 8); c = p % 8; g = "";
  for (k = 0; k < 8; k++) g = g (k ? ", " : "") 8 * r + k;
  printf "device %d: (s32[] %d, s32[] %d, s32[8] {%s}, s32[] %d)\n", p, 64 * r + 28, 8 * c + 224, g, (p + 56) % 64 } }' \
  >"$tmp/mesh64.expected"
run mesh64 0 "$tmp/mesh64.expected" - --per-device-outputs "$d/mesh64.hlo"
# The in-place collective-permute (slices between buffers, a device no pair
# targets keeps its buffer) and its start/done with tuple buffers.
run inplace 0 "$d/inplace.expected" - --per-device-outputs "$d/inplace.hlo"
# Through XLA's proto (slice_sizes become dynamic_slice_sizes back to back).
timeout 60 "$H" --write-proto "$tmp/inplace.pb" "$d/inplace.hlo" 2>/dev/null &&
  timeout 60 "$H" --per-device-outputs "$tmp/inplace.pb" 2>/dev/null | cmp -s - "$d/inplace.expected" &&
  ok inplace-proto || fail "inplace-proto: the proto's run differs"
# Its offsets are checked where they are used, never clamped; the sizes
# and forms before anything runs.
NDEV=2
run inplace-out-offset 2 - "device 1: in cp (collective-permute): output offset 4 of dimension 0 (buffer 0) puts the slice of 2 outside the buffer's 5" "$d/inplace_oob_out.hlo"
run inplace-in-offset 2 - "device 0: in cp (collective-permute): input offset -1 of dimension 0 (buffer 0) puts the slice of 2 outside the buffer's 3" "$d/inplace_oob_in.hlo"
run inplace-slice-too-big 2 - "in cp (collective-permute): slice size 6 of dimension 0 (buffer 0) does not fit the input (3) and the output (5)" "$d/inplace_too_big.hlo"
run inplace-offset-sets 2 - "in cp (collective-permute): not supported: several offset sets per buffer (2 for buffer 0)" "$d/inplace_sets.hlo"
NDEV=4
# The mesh form's groups written out give the same results.
run mesh-explicit 0 "$d/mesh.expected" - --per-device-outputs "$d/mesh_explicit.hlo"
NDEV=2
run validation 0 "$d/validation.expected" - --per-device-outputs "$d/validation.hlo"
# reduce-scatter over a non-leading dimension: a block per outer step.
run scatter-dims 0 "$d/scatter_dims.expected" - --per-device-outputs "$d/scatter_dims.hlo"
# A global input split by its sharding, the result assembled by the ROOT's.
NDEV=2
run sharded 0 "$d/sharded.expected" - "$d/sharded.hlo" "$d/sharded.in0.txt"
run sharded-wrong-shape 2 - "takes its global shape f32\[4\]" "$d/sharded.hlo" "$d/ident.in0.txt"
# A replicated result that differs between devices is an error, not one device's value.
run replicated-differs 2 - "hold different values" "$d/modes.hlo"
# --output-sharding assembles it instead: 4 devices' s32[] ... tuples cannot
# be tiled, so use the sharded module with its result read as replicated.
run output-sharding 2 - "devices 0 and 1 hold different values" --output-sharding='{replicated}' "$d/sharded.hlo" "$d/sharded.in0.txt"

NDEV=4
# Per-device outputs as a .npz, fed back as per-device inputs.
timeout 60 "$H" --per-device-outputs -o "$tmp/id.npz" "$d/ident.hlo" "$d/ident.in0.txt" &&
  timeout 60 "$H" --per-device-inputs --per-device-outputs "$d/ident.hlo" "$tmp/id.npz" >"$tmp/out" &&
  printf 'device 0: s32[3] {5, 6, 7}\ndevice 1: s32[3] {7, 8, 9}\n' | cmp -s - "$tmp/out" &&
  ok per-device-inputs || fail "per-device-inputs: $(cat "$tmp/out")"
NDEV=2
run per-device-expect 0 - - --per-device-outputs --expect "$tmp/id.npz" "$d/ident.hlo" "$d/ident.in0.txt"
timeout 60 "$H" --per-device-outputs -o "$tmp/forms.npz" "$d/forms.hlo" || fail "forms -o"
NDEV=4
run per-device-tuple-expect 0 - - --per-device-outputs --expect "$tmp/forms.npz" "$d/forms.hlo"
NDEV=2
run per-device-expect-mismatch 1 - "id.npz\[d1\]" --per-device-outputs --expect "$tmp/id.npz" "$d/ident.hlo" "$tmp/id.npz" --per-device-inputs

# The MLP sample after SPMD partitioning (2 x 4 mesh) gives its
# unpartitioned twin's result for the same global inputs; the twin, whose
# header says num_partitions=8 but which depends on no device, runs once.
NDEV=8
timeout 60 "$H" --random=7 -o "$tmp/twin.npy" "$s/mlp_global.hlo" 2>"$tmp/err" || fail "mlp twin: $(cat "$tmp/err")"
run mlp-2x4 0 - - --random=7 --expect "$tmp/twin.npy" --rtol 1e-5 --atol 1e-6 "$s/mlp_2x4.hlo"
run mlp-golden 0 - - --expect "$s/mlp_2x4.expected.txt" --rtol 1e-5 --atol 1e-6 "$s/mlp_2x4.hlo" \
  "$s/mlp.in0.txt" "$s/mlp.in1.txt" "$s/mlp.in2.txt" "$s/mlp.in3.txt"
# The MLP as JAX's Shardy lowering of jit with NamedShardings: not yet
# partitioned, so it runs once and gives mlp_global.hlo's bits.
timeout 60 "$H" -o "$tmp/sdy.npy" "$s/mlp_sdy.mlir" "$s/mlp.in0.txt" "$s/mlp.in1.txt" "$s/mlp.in2.txt" \
  "$s/mlp.in3.txt" 2>"$tmp/err" && timeout 60 "$H" -o "$tmp/global.npy" "$s/mlp_global.hlo" "$s/mlp.in0.txt" \
  "$s/mlp.in1.txt" "$s/mlp.in2.txt" "$s/mlp.in3.txt" && cmp -s "$tmp/sdy.npy" "$tmp/global.npy" &&
  ok "mlp-sdy: mlp_global.hlo's bits" || fail "mlp-sdy: $(cat "$tmp/err")"
# The same MLP as StableHLO, a Shardy manual computation (JAX's shard_map)
# on the 2 x 4 mesh: the regions' shards, the psum across processes, and
# the same global result.
run mlp-shmap 0 - - --expect "$s/mlp_2x4.expected.txt" --rtol 1e-5 --atol 1e-6 "$s/mlp_shmap.mlir" \
  "$s/mlp.in0.txt" "$s/mlp.in1.txt" "$s/mlp.in2.txt" "$s/mlp.in3.txt"
# One .npz for every parameter, by the rules of one device (arr_0, arr_1,
# ... feed the parameters from the INPUT's own on): written by a module
# that returns its four global inputs, checked against numpy's golden.
cat >"$tmp/pack.hlo" <<'HLO'
HloModule pack
ENTRY e {
  x = f32[8,16] parameter(0)
  w1 = f32[16,32] parameter(1)
  b1 = f32[32] parameter(2)
  w2 = f32[32,16] parameter(3)
  ROOT t = (f32[8,16], f32[16,32], f32[32], f32[32,16]) tuple(x, w1, b1, w2)
}
HLO
sed -e 's/w2 = f32\[32,16\] parameter(3)//' -e 's/, f32\[32,16\])/)/g' -e 's/, w2)/)/' \
  "$tmp/pack.hlo" >"$tmp/pack3.hlo"
timeout 60 "$H" -o "$tmp/mlp_all.npz" "$tmp/pack.hlo" "$s/mlp.in0.txt" "$s/mlp.in1.txt" \
  "$s/mlp.in2.txt" "$s/mlp.in3.txt" || fail "pack the MLP's inputs"
timeout 60 "$H" -o "$tmp/mlp_first3.npz" "$tmp/pack3.hlo" "$s/mlp.in0.txt" "$s/mlp.in1.txt" \
  "$s/mlp.in2.txt" || fail "pack three of the MLP's inputs"
golden="--expect $s/mlp_2x4.expected.txt --rtol 1e-5 --atol 1e-6"
# shellcheck disable=SC2086
{
  run mlp-one-npz 0 - - $golden "$s/mlp_2x4.hlo" "$tmp/mlp_all.npz"
  run mlp-npz-then-input 0 - - $golden "$s/mlp_2x4.hlo" "$tmp/mlp_first3.npz" "$s/mlp.in3.txt"
  run mlp-global-one-npz 0 - - $golden "$s/mlp_global.hlo" "$tmp/mlp_all.npz"
  run mlp-npz-too-many 2 - "mlp_all.npz holds 4 arrays but the module takes 4 parameters (1 of them already given)" \
    $golden "$s/mlp_2x4.hlo" "$s/mlp.in0.txt" "$tmp/mlp_all.npz"
  run mlp-npz-too-few 2 - "takes 4 parameters, but 3 inputs were given" "$s/mlp_2x4.hlo" "$tmp/mlp_first3.npz"
}
# A member of the wrong shape is named with its member.
run mlp-npz-wrong-member 2 - "input 1 (.*mlp_first3.npz\[arr_0\], parameter w1)" "$s/mlp_2x4.hlo" \
  "$s/mlp.in0.txt" "$tmp/mlp_first3.npz"
# Bit-identical across thread counts and transports.
for t in 1 3; do
  timeout 60 "$H" --threads $t --random=7 -o "$tmp/t$t.npy" "$s/mlp_2x4.hlo" || fail "mlp --threads $t"
done
cmp -s "$tmp/t1.npy" "$tmp/t3.npy" && ok "mlp bits: 1 and 3 threads" || fail "mlp bits differ between 1 and 3 threads"
if [ -n "$MPI" ]; then
  for np in 2 3 4 8; do
    timeout 120 mpirun -np $np "$H" --random=7 -o "$tmp/np$np.npy" "$s/mlp_2x4.hlo" &&
      cmp -s "$tmp/t1.npy" "$tmp/np$np.npy" && ok "mlp bits: mpirun -np $np" || fail "mlp bits differ under mpirun -np $np"
  done
fi

# All-reduces across processes fold as they travel (devices/chain.c): the
# threaded run's bits with interleaved rank orders, several chunks, bf16
# and a to_apply without typed loops.
timeout 60 "$H" --random=5 -o "$tmp/chain.npz" "$d/chain.hlo" || fail "chain (threads)"
if [ -n "$MPI" ]; then
  for np in 2 3 4; do
    timeout 120 mpirun -np $np "$H" --random=5 -o "$tmp/chain$np.npz" "$d/chain.hlo" &&
      cmp -s "$tmp/chain.npz" "$tmp/chain$np.npz" && ok "chain bits: mpirun -np $np" ||
      fail "chain bits differ under mpirun -np $np"
  done
fi

# Manual regions (JAX's shard_map) in a module not yet partitioned: global
# input and result, the regions' bodies on shards (values in manual.hlo).
NDEV=4
m=$d/manual.hlo
run manual 0 "$d/manual.expected" - "$m" "$d/manual.in0.txt"
# Without a header the grid is the regions' shardings' 4 partitions.
sed 's/, num_partitions=4//' "$m" >"$tmp/manual_nohdr.hlo"
run manual-inferred 0 "$d/manual.expected" "1 replica x 4 partitions, so it runs on 4 devices" \
  "$tmp/manual_nohdr.hlo" "$d/manual.in0.txt"
# Manual over one axis of a 2 x 4 mesh (StableHLO, Shardy): the other axis
# replicates the body; the result comes back as column blocks.
NDEV=8
run manual-one-axis 0 "$d/manual_partial.expected" - "$d/manual_partial.mlir"
# A region inside a region: the inner one assembles from the devices of
# the same outer shard.
NDEV=4
run manual-nested 0 "$d/manual_nested.expected" - "$d/manual_nested.mlir"
# The same as XLA exports it to HLO: partially manual shard sides, and the
# inner region's global side inside the outer one's manual subgroup.
run manual-nested-hlo 0 "$d/manual_nested.expected" - "$d/manual_nested.hlo"
# And in a dump made with Shardy: the inner region's shardings name only
# its own axis; the outer one's comes from where it sits.
run manual-nested-sdy 0 "$d/manual_nested.expected" - "$d/manual_sdy_nested.hlo"
NDEV=4
# JAX's shard_map lowered without Shardy: custom calls whose shardings are
# the ops' mhlo.sharding attributes.
NDEV=2
run manual-gspmd 0 "$d/manual_gspmd.expected" - "$d/manual_gspmd.mlir"
NDEV=4
# The same in an HLO dump made with Shardy (the round trip's
# xla.sdy.GlobalToLocalShape / LocalToGlobalShape, shardings as Shardy
# strings in frontend attributes): a batched product over 4 devices.
NDEV=4
run manual-sdy 0 "$d/manual_sdy.expected" "runs on 4 devices" "$d/manual_sdy.hlo" "$d/manual_sdy.in0.txt" \
  "$d/manual_sdy.in1.txt"
# As the binary proto XLA dumps (--xla_dump_hlo_as_proto): the frontend
# attributes carry the shardings through.
timeout 60 "$H" --write-proto "$tmp/manual_sdy.pb" "$d/manual_sdy.hlo" 2>/dev/null ||
  fail "manual-sdy: --write-proto"
run manual-sdy-proto 0 "$d/manual_sdy.expected" - "$tmp/manual_sdy.pb" "$d/manual_sdy.in0.txt" "$d/manual_sdy.in1.txt"
sed 's/, frontend_attributes={xla.sdy.meshes=[^}]*}}$//' "$d/manual_sdy.hlo" >"$tmp/manual_sdy_nomesh.hlo"
run manual-sdy-no-mesh 2 - "xla.sdy.GlobalToLocalShape: the module's frontend attribute xla.sdy.meshes names no mesh" \
  --random "$tmp/manual_sdy_nomesh.hlo"
sed 's/manual_axes{\\"<axis 0xfffeaa4e91c0>\\"}>",xla.sdy.out/manual_axes{\\"nope\\"}>",xla.sdy.out/' \
  "$d/manual_sdy.hlo" >"$tmp/manual_sdy_axis.hlo"
run manual-sdy-bad-axis 2 - "LocalToGlobalShape: xla.sdy.manual_axes: mesh @mesh has no axis \"nope\"" \
  --random "$tmp/manual_sdy_axis.hlo"
# Manual over "a" of an "a" x "b" mesh: "b" in a sharding replicates (each
# body sees 2 whole rows), and each value has its own sharding (y whole).
# x = {{0..3},{4..7},{8..11},{12..15}}, y = {{1,2,3,4},{5,6,7,8}}: each
# half of x times y, worked out by hand.
cat >"$tmp/manual_sdy2.hlo" <<'HLO'
HloModule sdy2, frontend_attributes={xla.sdy.meshes="{mesh = #sdy.mesh<[\"a\"=2, \"b\"=2]>}"}
body {
  p = s32[2,4] parameter(0)
  q = s32[2,4] parameter(1)
  ROOT r = s32[2,4] multiply(p, q)
}
ENTRY e {
  x = s32[4,4] parameter(0)
  y = s32[2,4] parameter(1)
  l = (s32[2,4], s32[2,4]) custom-call(x, y), custom_call_target="xla.sdy.GlobalToLocalShape", frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"a\"}, {\"b\"}]>, <@mesh, [{}, {}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"a\"}>"}
  l0 = s32[2,4] get-tuple-element(l), index=0
  l1 = s32[2,4] get-tuple-element(l), index=1
  c = s32[2,4] call(l0, l1), to_apply=body
  ROOT g = s32[4,4] custom-call(c), custom_call_target="xla.sdy.LocalToGlobalShape", frontend_attributes={xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{\"a\"}, {\"b\"}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"a\"}>"}
}
HLO
printf 's32[4,4] {{0,1,2,3},{4,5,6,7},{8,9,10,11},{12,13,14,15}}\n' >"$tmp/sdy2_x.txt"
printf 's32[2,4] {{1,2,3,4},{5,6,7,8}}\n' >"$tmp/sdy2_y.txt"
printf 's32[4,4] {{0, 2, 6, 12}, {20, 30, 42, 56}, {8, 18, 30, 44}, {60, 78, 98, 120}}\n' >"$tmp/sdy2.expected"
run manual-sdy-free-axis 0 "$tmp/sdy2.expected" - "$tmp/manual_sdy2.hlo" "$tmp/sdy2_x.txt" "$tmp/sdy2_y.txt"
# The input is global: the parameter's own shape, never split.
run manual-input-global 2 - "parameter x" "$m" "$d/ident.in0.txt"
# Partitions holding copies of one tile that disagree (no all-reduce in
# region 1): an error at the region's end naming them, not one of them.
sed 's/s1 = s32\[2,2\] all-reduce(mp).*/s1 = s32[2,2] copy(mp)/' "$m" >"$tmp/manual_differs.hlo"
run manual-differs 2 - "in r1 (custom-call): SPMDShardToFullShape: partitions 0 and 1 hold copies of the same tile {0, 0} of value 0 that differ" \
  "$tmp/manual_differs.hlo" "$d/manual.in0.txt"
NDEV=1
run manual-too-few 2 - "names partition 3, but this run has 2 partitions.*num_partitions=4" \
  --partitions 2 "$m" "$d/manual.in0.txt"
sed 's/xs = s32\[4,2\] copy(x), sharding=[^ ]* last_tile_dim_replicate}/xs = s32[4,2] copy(x)/' "$m" >"$tmp/manual_nosharding.hlo"
run manual-no-sharding 2 - "SPMDFullToShardShape needs the sharding of its global side (its operand's), which gives the tiles; xs has none" \
  "$tmp/manual_nosharding.hlo" "$d/manual.in0.txt"
# A shard side written as manual subgroups over whole shards (XLA's form for
# regions manual over some axes) is the same region; one that splits the
# shard further is not supported.
sed 's/m = s32\[2,2\] custom-call(xs), custom_call_target="SPMDFullToShardShape", sharding={manual}/m = s32[2,2] custom-call(xs), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,1,4]<=[4] last_tile_dims={manual}}/' \
  "$m" >"$tmp/manual_subgroup.hlo"
run manual-subgroup 0 "$d/manual.expected" - "$tmp/manual_subgroup.hlo" "$d/manual.in0.txt"
sed 's/m = s32\[2,2\] custom-call(xs), custom_call_target="SPMDFullToShardShape", sharding={manual}/m = s32[2,2] custom-call(xs), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,2,2]<=[4] last_tile_dims={manual}}/' \
  "$m" >"$tmp/manual_partial.hlo"
run manual-partial 2 - "not supported: SPMDFullToShardShape with a partially manual sharding that splits the shard further" \
  "$tmp/manual_partial.hlo" "$d/manual.in0.txt"
# 5 rows in 2 tiles: XLA pads the last shard; hlorun refuses, before it
# reads past the value.
cat >"$tmp/manual_uneven.hlo" <<'HLO'
HloModule manual_uneven, num_partitions=2
ENTRY e {
  x = s32[5,2] parameter(0)
  xs = s32[5,2] copy(x), sharding={devices=[2,1]<=[2]}
  m = s32[3,2] custom-call(xs), custom_call_target="SPMDFullToShardShape", sharding={manual}
  ROOT r = s32[5,2] custom-call(m), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1]<=[2]}
}
HLO
run manual-uneven 2 - "dimension 0 is 5 globally and 3 per shard, which 2 tiles do not make" --random "$tmp/manual_uneven.hlo"
# A shard shape its sharding does not make (its global side split over
# axes the shard is not): named as such.
sed -e 's/s32\[5,2\]/s32[4,2]/g' -e 's/m = s32\[3,2\]/m = s32[1,2]/' "$tmp/manual_uneven.hlo" >"$tmp/manual_mismatch.hlo"
run manual-mismatch 2 - "dimension 0 is 4 globally and 1 per shard, but its sharding splits it into 2 tiles of 2" \
  --random "$tmp/manual_mismatch.hlo"

# Errors: positioned, exit 2, never a hang.
NDEV=2
run skip-in-branch 2 - "device 1 .*finished its program without reaching it" "$d/skip_in_branch.hlo"
run recv-never-sent 2 - "device 1.* finished its program without" "$d/recv_never_sent.hlo"
# (Under MPI a deadlock across processes ends by --timeout, or by
# HLORUN_MPI_WAIT_LIMIT seconds without a message.)
run deadlock 2 - "in rd (recv-done)" --timeout 10 "$d/deadlock.hlo"
# Bad groups are refused before anything runs: tests/verify/collective_*.hlo.
NDEV=3
run inferred-grid 0 - "runs on 3 devices" --random --per-device-outputs "$d/inferred.hlo"
NDEV=1
run permute-pairs-at-run-time 2 - "names replica 2, but there are 2" --replicas 2 --random "$d/inferred.hlo"
# --max-memory counts the devices of a process together: 8 devices of 256 KB
# results exceed 1 MB where one device fits.
NDEV=1
run memory-one-device 0 - - --replicas 1 --max-memory 1M --random "$d/memory.hlo"
timeout 60 "$H" --max-memory 1M --random "$d/memory.hlo" >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "devices of this process together" "$tmp/err" && ok memory-together ||
  { fail "memory-together"; cat "$tmp/err"; }

echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
