#!/bin/sh
# scaled-dot (interp/kernels/scaled_dot.c): the cases of tests/scaled_dot/
# cases (tools/gen_scaled_dot_cases.py, numpy after XLA's definition) must
# match exactly; scales that do not fit their operands are refused by the
# verifier, a scalar scale other than 1 at run time, each naming the
# instruction. Run by make check.
set -u
srcdir=${srcdir:-.}
H=${HLORUN:-./hlorun}
d=$srcdir/tests/scaled_dot
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-scaled-dot.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$H" --suite "$d/cases" >"$tmp/out" 2>&1 && grep -q " 0 failed" "$tmp/out" &&
  echo "ok: cases: $(tail -1 "$tmp/out")" || { fail "cases"; cat "$tmp/out"; }

# bad NAME WANT LHS_SCALE_SHAPE: lhs f8e4m3fn[4,64], rhs f8e5m2[64,3],
# rhs scale f8e8m0fnu[2,3]; exit 2 with WANT in standard error.
bad() {
  name=$1 want=$2
  cat >"$tmp/$name.hlo" <<HLO
HloModule $name
ENTRY e {
  a = f8e4m3fn[4,64] parameter(0)
  b = f8e5m2[64,3] parameter(1)
  sa = $3 parameter(2)
  sb = f8e8m0fnu[2,3] parameter(3)
  ROOT r = f32[4,3] scaled-dot(a, b, sa, sb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
HLO
  "$H" --random "$tmp/$name.hlo" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" != 2 ]; then fail "$name: exit $rc, want 2"; cat "$tmp/err"; return; fi
  grep -qF -- "$want" "$tmp/err" || { fail "$name: no '$want' in"; cat "$tmp/err"; return; }
  echo "ok: $name"
}
bad scale-not-dividing 'lhs_scale f8e8m0fnu[4,3] does not fit lhs f8e4m3fn[4,64]: its dimension 1 (3) does not divide the operand'"'"'s (64)' 'f8e8m0fnu[4,3]'
bad scale-rank 'lhs_scale f8e8m0fnu[2] must be a scalar or have the rank of lhs f8e4m3fn[4,64]' 'f8e8m0fnu[2]'
# --random draws a scalar scale other than 1: refused at run time.
bad scalar-scale 'lhs_scale is the scalar' 'f32[]'
grep -qF 'scaled-dot' "$tmp/err" || { fail "scalar-scale: the instruction is not named"; cat "$tmp/err"; }
[ "$fails" = 0 ]
