#!/bin/sh
# XLA protocol-buffer inputs end to end. The files are written by
# tools/gen_proto_tests.py (XLA's ToProto conventions; results from numpy):
#  - the module read from HloModuleProto, HloProto and HloSnapshot prints the
#    same canonical text as the HLO text written for it (zoo.hlo);
#  - the snapshot replays its arguments and matches its recorded result
#    (--expect SNAPSHOT), which numpy computed;
#  - LiteralProto files are INPUTs (and a shape mismatch is an error);
#  - every broken file fails with exit 2 and the message and field listed
#    in bad-cases.txt.
set -u
top=${abs_top_builddir:-$(pwd)}
src=${srcdir:-.}/tests/proto
hlorun="$top/hlorun"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$hlorun" --print "$src/zoo.hlo" >"$tmp/want.txt" || fail "--print zoo.hlo"
for f in zoo.module.pb zoo.hloproto.pb zoo.snapshot.pb; do
  if "$hlorun" --print "$src/$f" >"$tmp/got.txt"; then
    cmp -s "$tmp/want.txt" "$tmp/got.txt" || { fail "--print $f differs from zoo.hlo"; diff "$tmp/want.txt" "$tmp/got.txt" | head; }
  else
    fail "--print $f"
  fi
done
# More instruction kinds and fields (convolution, gather, pad, reduce-window,
# fusion, conditional, sort, custom-call, shardings, metadata, frontend
# attributes, control predecessors, result accuracy, ...).
"$hlorun" --print "$src/zoo2.hlo" >"$tmp/want2.txt" || fail "--print zoo2.hlo"
"$hlorun" --print "$src/zoo2.module.pb" >"$tmp/got2.txt" || fail "--print zoo2.module.pb"
cmp -s "$tmp/want2.txt" "$tmp/got2.txt" || { fail "zoo2.module.pb differs from zoo2.hlo"; diff "$tmp/want2.txt" "$tmp/got2.txt" | head; }
# Printed text parses back to the same text (proto -> text -> text).
"$hlorun" --print "$tmp/got.txt" >"$tmp/again.txt" 2>&1 && cmp -s "$tmp/got.txt" "$tmp/again.txt" || fail "print of print"

"$hlorun" --expect "$src/zoo.snapshot.pb" "$src/zoo.snapshot.pb" || fail "snapshot replay against its result"
"$hlorun" --expect "$src/zoo.snapshot.pb" "$src/zoo.hlo" "$src/zoo.arg0.literal.pb" "$src/zoo.arg1.literal.pb" \
  || fail "text module with LiteralProto inputs against the snapshot's result"
out=$("$hlorun" "$src/zoo.hlo" "$src/zoo.arg1.literal.pb" "$src/zoo.arg0.literal.pb" 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "the literal is f32\[3,2\], expected f32\[2,3\]" || fail "literal shape mismatch: rc=$rc $out"
out=$("$hlorun" --expect "$src/zoo.module.pb" "$src/zoo.snapshot.pb" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "--expect on a module proto: rc=$rc"

# LiteralProto of every element type: the value read from the proto prints
# as the literal text the generator wrote (spaces aside), and equals what the
# text literal reader makes of that text.
for name in $(cat "$src/literal-cases.txt"); do
  got=$("$hlorun" "$src/lit_$name.hlo" "$src/lit_$name.pb" 2>&1) || fail "lit_$name.pb: $got"
  txt=$("$hlorun" "$src/lit_$name.hlo" "$src/lit_$name.txt" 2>&1) || fail "lit_$name.txt: $txt"
  [ "$got" = "$txt" ] || fail "lit_$name: proto gives $got, text gives $txt"
  [ "$(printf %s "$got" | tr -d ' \n')" = "$(tr -d ' \n' <"$src/lit_$name.txt")" ] ||
    fail "lit_$name: proto gives $got, want $(cat "$src/lit_$name.txt")"
done
# run_hlo_module's RunHloModuleLiterals: the arguments of its first iteration
# as INPUT, its result for --expect.
"$hlorun" --expect "$src/zoo.literals.pb" "$src/zoo.hlo" "$src/zoo.literals.pb" || fail "RunHloModuleLiterals"

# Protocol-buffer text format: run_hlo_module literals written as TextFormat
# prints them; and a module from XLA's own tests whose operand ids are local
# ids (xla/hlo/ir/hlo_module_test.cc): add.comp2's operands are arg1.comp2
# then arg0.comp2 there, and the module is one XLA only loads unverified (a
# 1-tuple shape with 2 operands), so hlorun stops at that instruction.
"$hlorun" --expect "$src/zoo.literals.pbtxt" "$src/zoo.hlo" "$src/zoo.literals.pbtxt" || fail "RunHloModuleLiterals text"
out=$("$hlorun" --print "$src/xla_nonconsecutive_ids.pbtxt" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "xla_nonconsecutive_ids.pbtxt: exit $rc"
case "$out" in *"%add.comp2 = (s32[]) tuple(%arg1.comp2, %arg0.comp2)"*) ;; *) fail "xla_nonconsecutive_ids.pbtxt: $out" ;; esac

# Real files from XLA's tests (tests/proto/xla/README). The literals file
# is one f32[2,2] {{0.1, 0.2}, {0.3, 0.4}} argument: negated, the signs
# flip. The unoptimized snapshot's module, read from its text proto (ids,
# operand ids, the iota sharding, the s64 literal 2, metadata), prints as
# the HLO below, worked out from the pbtxt by hand. Run without INPUTs, its
# two partitions' s64[4,1] arguments {0..3} and {4..7} are the halves of the
# parameter sharded {devices=[2,1]<=[2]}: the global argument is 0..7, the
# result twice that; the same partitions given with the sharding removed
# (replicated) disagree, which is an error, as are shards whose count does
# not fit their shape.
printf 'HloModule m\nENTRY e {\n  x = f32[2,2] parameter(0)\n  ROOT n = f32[2,2] negate(x)\n}\n' >"$tmp/neg.hlo"
got=$("$hlorun" "$tmp/neg.hlo" "$src/xla/input_literal_f32_2_2.pbtxt" 2>&1)
[ "$got" = "f32[2,2] {{-0.1, -0.2}, {-0.3, -0.4}}" ] || fail "input_literal_f32_2_2.pbtxt: $got"
"$hlorun" --print "$src/xla/sharded_unoptimized_hlo_snapshot.pbtxt" >"$tmp/unopt.txt" 2>&1 ||
  fail "sharded_unoptimized_hlo_snapshot.pbtxt: --print exit $?"
cat >"$tmp/unopt.want" <<'HLO'
HloModule jit__lambda_, entry_computation_layout={(s64[8,1]{1,0})->s64[8,1]{1,0}}

ENTRY %main.5 (Arg_0.1: s64[8,1]) -> s64[8,1] {
  %Arg_0.1 = s64[8,1]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}, metadata={op_name="x"}
  %constant.2 = s64[] constant(2)
  %broadcast.3 = s64[8,1]{1,0} broadcast(%constant.2), dimensions={}
  ROOT %multiply.4 = s64[8,1]{1,0} multiply(%Arg_0.1, %broadcast.3), metadata={op_name="jit(<lambda>)/jit(main)/mul" source_file="third_party/py/jax/tests/pjit_test.py" source_line=3599 stack_frame_id=10}
}

HLO
cmp -s "$tmp/unopt.want" "$tmp/unopt.txt" || { fail "sharded_unoptimized_hlo_snapshot.pbtxt: --print"; diff "$tmp/unopt.want" "$tmp/unopt.txt" | head; }
got=$("$hlorun" "$src/xla/sharded_unoptimized_hlo_snapshot.pbtxt" 2>&1)
[ "$got" = "s64[8,1] {{0}, {2}, {4}, {6}, {8}, {10}, {12}, {14}}" ] || fail "unoptimized snapshot replay: $got"
printf 's64[8,1] {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}\n' >"$tmp/arg8.txt"
got=$("$hlorun" "$src/xla/sharded_unoptimized_hlo_snapshot.pbtxt" "$tmp/arg8.txt" 2>&1)
[ "$got" = "s64[8,1] {{0}, {2}, {4}, {6}, {8}, {10}, {12}, {14}}" ] || fail "unoptimized snapshot with an INPUT: $got"
awk 'BEGIN{skip=0} /^      sharding \{/{skip=1} skip&&/^      \}/{skip=0; next} !skip' \
  "$src/xla/sharded_unoptimized_hlo_snapshot.pbtxt" >"$tmp/repl.pbtxt"
out=$("$hlorun" "$tmp/repl.pbtxt" 2>&1); rc=$?
[ $rc -eq 2 ] && case "$out" in *"parameter Arg_0.1 is replicated (it has no tiled sharding), but devices 0 and 1 hold different values of it"*) true ;; *) false ;; esac ||
  fail "unoptimized snapshot, replicated parameter: exit $rc: $out"
sed 's/dimensions: 4/dimensions: 3/' "$src/xla/sharded_unoptimized_hlo_snapshot.pbtxt" >"$tmp/bad3.pbtxt"
out=$("$hlorun" "$tmp/bad3.pbtxt" 2>&1); rc=$?
[ $rc -eq 2 ] && case "$out" in *"xla.HloUnoptimizedSnapshot.partitions[0].arguments[0]: xla.LiteralProto.s64s: 4 elements"*) true ;; *) false ;; esac ||
  fail "unoptimized snapshot, bad shard: exit $rc: $out"
# Partition 1's shard cut to s64[2,1] (partition 0's is s64[4,1]): an
# error naming both shapes; each tile is copied with partition 0's dims, so
# this read past partition 1's buffer before.
awk 'NR > 316 && /dimensions: 4/ && !done { sub(/4/, "2"); done = 1 } /s64s: [67]$/ { next } { print }' \
  "$src/xla/sharded_unoptimized_hlo_snapshot.pbtxt" >"$tmp/uneven.pbtxt"
out=$("$hlorun" "$tmp/uneven.pbtxt" 2>&1); rc=$?
[ $rc -eq 2 ] && case "$out" in *"parameter Arg_0.1: partition 1's shard is s64[2,1], but partition 0's is s64[4,1]"*) true ;; *) false ;; esac ||
  fail "unoptimized snapshot, uneven shards: exit $rc: $out"

# XLA's binary test protos (tests/proto/xla/README). hlo_opt_hlo_protobinary.pb
# is the HloProto behind xla/hlo/tools/tests/hlo_opt_hlo_protobinary_to_hlotext.hlo,
# whose FileCheck lines say the printed text has a line with ENTRY and mod1,
# and next to it the line `ROOT {{.*}} = s8[] constant(0)`; run, it is the
# s8 0. snapshot.mlir.pb is the HloSnapshot of mlir_bisect's snapshot.mlir
# test (arguments only, no hlo): its CHECK lines give the two s32 3x1
# arguments as dense<[[2], [-4], [5]]> and dense<[[0], [7], [-5]]>; it
# records no result, and holds no module to print.
"$hlorun" --print "$src/xla/hlo_opt_hlo_protobinary.pb" >"$tmp/protobinary.txt" 2>&1 ||
  fail "hlo_opt_hlo_protobinary.pb: --print exit $?"
awk 'want { ok = $0 ~ /ROOT .* = s8\[\] constant\(0\)/; exit }
     /ENTRY/ && /mod1/ { want = 1 }
     END { exit !ok }' "$tmp/protobinary.txt" ||
  { fail "hlo_opt_hlo_protobinary.pb: --print does not match XLA's CHECK lines"; cat "$tmp/protobinary.txt"; }
got=$("$hlorun" "$src/xla/hlo_opt_hlo_protobinary.pb" 2>&1)
[ "$got" = "s8[] 0" ] || fail "hlo_opt_hlo_protobinary.pb: run: $got"
printf 'HloModule m\nENTRY e {\n  a = s32[3,1] parameter(0)\n  b = s32[3,1] parameter(1)\n  ROOT t = (s32[3,1], s32[3,1]) tuple(a, b)\n}\n' >"$tmp/bisect.hlo"
got=$("$hlorun" "$tmp/bisect.hlo" "$src/xla/snapshot.mlir.pb" 2>&1)
[ "$got" = "(s32[3,1] {{2}, {-4}, {5}}, s32[3,1] {{0}, {7}, {-5}})" ] || fail "snapshot.mlir.pb: $got"
out=$("$hlorun" --expect "$src/xla/snapshot.mlir.pb" "$tmp/bisect.hlo" "$src/xla/snapshot.mlir.pb" 2>&1); rc=$?
[ $rc -eq 2 ] && case "$out" in *"holds no recorded result"*) true ;; *) false ;; esac ||
  fail "snapshot.mlir.pb --expect: exit $rc: $out"
out=$("$hlorun" --print "$src/xla/snapshot.mlir.pb" 2>&1); rc=$?
[ $rc -eq 2 ] && case "$out" in *"holds arguments but no module"*) true ;; *) false ;; esac ||
  fail "snapshot.mlir.pb --print: exit $rc: $out"

# --write-proto: text -> HloModuleProto -> text. The written proto, decoded
# by check_written.py (its own wire decoder, not hlorun's reader), holds what
# zoo.hlo says under XLA's ToProto conventions. Read back, it prints the text
# of zoo*.hlo exactly, plus the entry_computation_layout XLA's
# host_program_shape always adds (written out here from the ENTRY's
# parameters and ROOT, default layouts); written again from the module read
# back, it is the same bytes; and it runs to the snapshot's recorded result.
"$hlorun" --write-proto "$tmp/zoo.pb" "$src/zoo.hlo" || fail "--write-proto zoo.hlo"
python3 "$src/check_written.py" "$tmp/zoo.pb" || fail "zoo.pb: the written fields"
layout_zoo='entry_computation_layout={(f32[2,3]{1,0}, f32[3,2]{1,0})->(f32[2,2]{1,0}, s32[2,2]{1,0}, f32[2,3]{1,0})}'
layout_zoo2='entry_computation_layout={(f32[4]{0}, f32[1,5,5,2]{3,2,1,0}, f32[3,3,2,4]{3,2,1,0}, s32[2,1]{1,0}, pred[])->(f32[2,2]{1,0}, f32[1,5,5,4]{3,2,1,0}, f32[2]{0}, (f32[4]{0}, s32[4]{0}), u32[4]{0}, (u64[2]{0}, u32[4]{0}), (f32[2]{0}, s32[2]{0}), f32[4]{0})}'
for z in zoo zoo2; do
  eval "layout=\$layout_$z"
  "$hlorun" --write-proto "$tmp/$z.pb" "$src/$z.hlo" || fail "--write-proto $z.hlo"
  "$hlorun" --print "$src/$z.hlo" | sed "1s/\$/, $layout/" >"$tmp/$z.want"
  "$hlorun" --print "$tmp/$z.pb" >"$tmp/$z.got" || fail "--print of the written $z.pb"
  cmp -s "$tmp/$z.want" "$tmp/$z.got" || { fail "$z.hlo -> proto -> text differs"; diff "$tmp/$z.want" "$tmp/$z.got" | head; }
  "$hlorun" --write-proto "$tmp/$z.again.pb" "$tmp/$z.pb" || fail "--write-proto of the read-back $z.pb"
  cmp -s "$tmp/$z.pb" "$tmp/$z.again.pb" || fail "$z: proto -> module -> proto is not the same bytes"
done
"$hlorun" --expect "$src/zoo.snapshot.pb" "$tmp/zoo.pb" "$src/zoo.arg0.literal.pb" "$src/zoo.arg1.literal.pb" \
  || fail "the written zoo.pb against the snapshot's result"
# The other direction: XLA-convention protos written by the generator
# survive proto -> text -> proto -> text.
"$hlorun" --write-proto "$tmp/m2.pb" "$src/zoo2.module.pb" || fail "--write-proto zoo2.module.pb"
"$hlorun" --print "$tmp/m2.pb" | sed "1s/, entry_computation_layout=.*//" >"$tmp/m2.txt"
cmp -s "$tmp/m2.txt" "$tmp/want2.txt" || fail "zoo2.module.pb -> text -> proto -> text differs"
# Module-config attributes have no HloModuleProto field: said, and left out.
printf 'HloModule cfg, replica_count=2\n\nENTRY %%m {\n  ROOT %%p = f32[2] parameter(0)\n}\n' >"$tmp/cfg.hlo"
out=$("$hlorun" --write-proto "$tmp/cfg.pb" "$tmp/cfg.hlo" 2>&1); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "no field for replica_count" || fail "replica_count note: rc=$rc $out"
# An attribute no proto field holds is an error naming instruction and attribute.
printf 'HloModule e\n\nENTRY %%m {\n  ROOT %%c = f32[2] constant({...})\n}\n' >"$tmp/elided.hlo"
out=$("$hlorun" --write-proto "$tmp/e.pb" "$tmp/elided.hlo" 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "instruction c: an elided literal" || fail "elided literal: rc=$rc $out"

# LiteralProto inputs large enough for the reader's no-copy path (the element
# field read in place from the file's bytes), and one whose elements are split
# over two fields (the full-unpack fallback): sums worked out in big_literal.py.
python3 "$src/big_literal.py" "$tmp" || fail "big_literal.py"
cat >"$tmp/add.hlo" <<'HLO'
HloModule s

%add {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

HLO
{ cat "$tmp/add.hlo"; printf '%s\n' 'ENTRY %m {' '  %p = f32[1100] parameter(0)' '  %z = f32[] constant(0)' \
  '  ROOT %r = f32[] reduce(%p, %z), dimensions={0}, to_apply=%add' '}'; } >"$tmp/sum.hlo"
{ cat "$tmp/add.hlo"; printf '%s\n' 'ENTRY %m {' '  %p = bf16[3000] parameter(0)' '  %c = f32[3000] convert(%p)' \
  '  %z = f32[] constant(0)' '  ROOT %r = f32[] reduce(%c, %z), dimensions={0}, to_apply=%add' '}'; } >"$tmp/sumb.hlo"
for f in f32 f32split; do
  got=$("$hlorun" "$tmp/sum.hlo" "$tmp/$f.pb" 2>&1)
  [ "$got" = "f32[] 302225" ] || fail "$f.pb: $got, want f32[] 302225"
done
got=$("$hlorun" "$tmp/sumb.hlo" "$tmp/bf16.pb" 2>&1)
[ "$got" = "f32[] 4500" ] || fail "bf16.pb: $got, want f32[] 4500"

while IFS='	' read -r name expect; do
  out=$("$hlorun" --print "$src/$name" 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "$name: exit $rc, want 2"
  case "$out" in *"$expect"*) ;; *) fail "$name: got: $out"; echo "  want: $expect" ;; esac
done <"$src/bad-cases.txt"

[ $fails -eq 0 ] && echo "proto tests passed"
# 0 or 1, never the count: automake reads 77 as a skip, and 256 wraps to 0.
[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
