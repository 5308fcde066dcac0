#!/bin/sh
# Snapshot arguments decoded from the file's bytes straight into their
# buffers (proto/read.c decode_literal, literal.c hpb_elems_decode; the file's
# payloads read on demand by interp/files.c hli_file_open). Files come from
# stream_cases.py:
#  - one HloSnapshot holding a LiteralProto of every element type (the
#    lit_*.pb files: packed bf16/f16/f8, sub-byte one per byte, complex,
#    preds and s32/s64/u32/u64 varints, a column-major layout, a tuple) gives
#    the same bytes (-o .npz) as the same values read from literal text;
#  - large arrays (each more than one 4 MiB decode run: runs and dropped
#    pages are crossed) as snapshot arguments and as LiteralProto INPUTs give
#    the bytes of the same values read from .npy: f32, s32 varints with
#    negatives, a column-major bf16 array, and a tuple of the first two;
#  - broken literals, as snapshot arguments and as INPUTs, fail with exit 2
#    and the message and field (bad.list), sizes checked before anything is
#    allocated (a shape of 2^40 elements over 16 bytes);
#  - a snapshot cut inside its argument fails with exit 2.
set -u
top=${abs_top_builddir:-$(pwd)}
src=${srcdir:-.}/tests/proto
hlorun="$top/hlorun"
gen="python3 $src/stream_cases.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Every element type.
$gen all "$src" "$tmp" || fail "stream_cases.py all"
"$hlorun" --write-proto "$tmp/all.pb" "$tmp/all.hlo" || fail "--write-proto all.hlo"
set --
for n in $(cat "$tmp/all.args"); do set -- "$@" "$src/lit_$n.pb"; done
$gen snap "$tmp/all.pb" "$tmp/all.snap.pb" "$@" || fail "stream_cases.py snap"
set --
for n in $(cat "$tmp/all.args"); do set -- "$@" "$src/lit_$n.txt"; done
"$hlorun" -o "$tmp/want.npz" "$tmp/all.hlo" "$@" || fail "all.hlo with literal text"
"$hlorun" -o "$tmp/got.npz" "$tmp/all.snap.pb" || fail "all.snap.pb"
cmp -s "$tmp/want.npz" "$tmp/got.npz" || fail "every element type: the snapshot's arguments differ from the text's"
"$hlorun" --expect "$tmp/want.npz" "$tmp/all.snap.pb" || fail "every element type: --expect"

# Large arrays.
$gen big "$tmp" || fail "stream_cases.py big"
one() {   # NAME SHAPE [ROOT-LINE]: module of one parameter
  printf 'HloModule %s\n\nENTRY %%m {\n  %%p = %s parameter(0)\n%s\n}\n' "$1" "$2" \
    "${3:-  ROOT %c = $2 copy(%p)}" >"$tmp/$1.hlo"
  "$hlorun" --write-proto "$tmp/$1.mod.pb" "$tmp/$1.hlo" || fail "--write-proto $1.hlo"
}
one big_f32 'f32[1200000]'
one big_s32 's32[1100000]'
one big_bf16_cm 'bf16[700,900]' '  ROOT %b = u16[700,900] bitcast-convert(%p)'
printf 'HloModule u\n\nENTRY %%m {\n  %%p = u16[700,900] parameter(0)\n  ROOT %%c = u16[700,900] copy(%%p)\n}\n' >"$tmp/u16.hlo"
for b in big_f32 big_s32 big_bf16_cm; do
  if [ $b = big_bf16_cm ]; then "$hlorun" -o "$tmp/$b.want.npy" "$tmp/u16.hlo" "$tmp/$b.npy"
  else "$hlorun" -o "$tmp/$b.want.npy" "$tmp/$b.hlo" "$tmp/$b.npy"; fi || fail "$b from .npy"
  $gen snap "$tmp/$b.mod.pb" "$tmp/$b.snap.pb" "$tmp/$b.pb"
  "$hlorun" -o "$tmp/$b.got.npy" "$tmp/$b.snap.pb" || fail "$b snapshot"
  cmp -s "$tmp/$b.want.npy" "$tmp/$b.got.npy" || fail "$b: the snapshot's argument differs from the .npy"
  "$hlorun" -o "$tmp/$b.in.npy" "$tmp/$b.hlo" "$tmp/$b.pb" || fail "$b LiteralProto INPUT"
  cmp -s "$tmp/$b.want.npy" "$tmp/$b.in.npy" || fail "$b: the LiteralProto INPUT differs from the .npy"
done
# A tuple argument whose elements are the two arrays above.
printf 'HloModule t\n\nENTRY %%m {\n  %%p = (f32[1200000], s32[1100000]) parameter(0)\n  %%a = f32[1200000] get-tuple-element(%%p), index=0\n  %%b = s32[1100000] get-tuple-element(%%p), index=1\n  ROOT %%t = (f32[1200000], s32[1100000]) tuple(%%a, %%b)\n}\n' >"$tmp/tuple.hlo"
printf 'HloModule t2\n\nENTRY %%m {\n  %%a = f32[1200000] parameter(0)\n  %%b = s32[1100000] parameter(1)\n  ROOT %%t = (f32[1200000], s32[1100000]) tuple(%%a, %%b)\n}\n' >"$tmp/tuple2.hlo"
"$hlorun" -o "$tmp/tuple.want.npz" "$tmp/tuple2.hlo" "$tmp/big_f32.npy" "$tmp/big_s32.npy" || fail "tuple from .npy"
"$hlorun" --write-proto "$tmp/tuple.mod.pb" "$tmp/tuple.hlo" || fail "--write-proto tuple.hlo"
$gen snap "$tmp/tuple.mod.pb" "$tmp/tuple.snap.pb" "$tmp/big_tuple.pb"
"$hlorun" -o "$tmp/tuple.got.npz" "$tmp/tuple.snap.pb" || fail "tuple snapshot"
cmp -s "$tmp/tuple.want.npz" "$tmp/tuple.got.npz" || fail "tuple: the snapshot's argument differs from the .npy files"
# Cut inside the argument's elements: the snapshot is not well formed.
head -c 3000000 "$tmp/big_f32.snap.pb" >"$tmp/cut.pb"
out=$("$hlorun" "$tmp/cut.pb" 2>&1); rc=$?
[ $rc -eq 2 ] && case "$out" in *"field 2 (wire type length-delimited) at byte"*"truncated"*) true ;; *) false ;; esac ||
  fail "cut snapshot: exit $rc: $out"

# Broken literals.
$gen bad "$tmp" || fail "stream_cases.py bad"
while IFS='	' read -r name shape msg inmsg; do
  case "$shape" in
    '('*) one "bad_$name" "$shape" "  ROOT %c = f32[2] get-tuple-element(%p), index=0" ;;
    *) one "bad_$name" "$shape" "  ROOT %c = $shape copy(%p)" ;;
  esac
  $gen snap "$tmp/bad_$name.mod.pb" "$tmp/bad_$name.snap.pb" "$tmp/$name.pb"
  out=$("$hlorun" "$tmp/bad_$name.snap.pb" 2>&1); rc=$?
  [ $rc -eq 2 ] && case "$out" in *"xla.HloSnapshot.arguments[0]: $msg"*) true ;; *) false ;; esac ||
    fail "$name as a snapshot argument: exit $rc: $out (want: $msg)"
  out=$("$hlorun" "$tmp/bad_$name.hlo" "$tmp/$name.pb" 2>&1); rc=$?
  [ $rc -eq 2 ] && case "$out" in *"$inmsg"*) true ;; *) false ;; esac ||
    fail "$name as an INPUT: exit $rc: $out (want: $inmsg)"
done <"$tmp/bad.list"

[ $fails -eq 0 ] && echo "streamed snapshot tests passed"
# 0 or 1, never the count: automake reads 77 as a skip, and 256 wraps to 0.
[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
