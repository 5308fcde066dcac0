#!/bin/sh
# jaxlib's CPU kernels that are not LAPACK (targets/cpu/tridiagonal.c,
# sparse.c) and JAX's host callbacks (targets/callback.c). The cases of
# tests/jaxlib/cases (tools/gen_jaxlib_cases.py: numpy, JAX's own test
# values, and values worked out by hand in tests/jaxlib/README) run as a
# suite; bad operands fail with exit 2 and a message naming the call and
# the operand; a host callback without results prints its operands on
# standard error, one with results fails saying how to bind it.
set -u
srcdir=${srcdir:-.}
H=${HLORUN:-./hlorun}
d=$srcdir/tests/jaxlib
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-jaxlib.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

"$H" --suite "$d/cases" >"$tmp/out" 2>&1 && grep -q " 0 failed" "$tmp/out" &&
  ok "cases: $(tail -1 "$tmp/out")" || { fail "cases"; cat "$tmp/out"; }

# expect NAME RC STDERR_TEXT MODULE_TEXT: run the module (--random fills its
# parameters); exit RC and TEXT (fixed string) in standard error.
expect() {
  name=$1 rc_want=$2 want=$3
  printf '%s\n' "$4" >"$tmp/$name.hlo"
  "$H" --random "$tmp/$name.hlo" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" != "$rc_want" ]; then fail "$name: exit $rc, want $rc_want"; cat "$tmp/err"; return; fi
  grep -qF -- "$want" "$tmp/err" || { fail "$name: no '$want' in"; cat "$tmp/err"; return; }
  ok "$name"
}
TD='custom_call_target="tridiagonal_solve_perturbed_ffi", api_version=API_VERSION_TYPED_FFI'
expect td-length 2 'operand 1 (d) must be f32[4]' "HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  d = f32[3] parameter(1)
  b = f32[4,2] parameter(2)
  ROOT x = f32[4,2] custom-call(a, d, a, b), $TD
}"
expect td-type 2 'tridiagonal_solve_perturbed_ffi: operand 1 must be f32, f64, c64 or c128' "HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  b = s32[4,2] parameter(1)
  ROOT x = s32[4,2] custom-call(a, a, a, b), $TD
}"
CSR='custom_call_target="cpu_csr_sparse_dense_ffi", api_version=API_VERSION_TYPED_FFI'
expect csr-index 2 'operand 2 (indices) entry 1 is column 7, outside the 3 columns' "HloModule m
ENTRY e {
  data = f32[2] constant({1, 2})
  ptr = s32[3] constant({0, 1, 2})
  idx = s32[2] constant({0, 7})
  rhs = f32[3,2] parameter(0)
  ROOT y = f32[2,2] custom-call(data, ptr, idx, rhs), $CSR
}"
expect csr-indptr 2 'operand 1 (indptr) entry 2 is 1: entries must rise' "HloModule m
ENTRY e {
  data = f32[2] constant({1, 2})
  ptr = s32[3] constant({0, 2, 1})
  idx = s32[2] constant({0, 1})
  rhs = f32[3] parameter(0)
  ROOT y = f32[2] custom-call(data, ptr, idx, rhs), $CSR
}"
expect csr-lengths 2 'data and indices of one length' "HloModule m
ENTRY e {
  data = f32[3] constant({1, 2, 3})
  ptr = s64[3] constant({0, 1, 2})
  idx = s64[2] constant({0, 1})
  rhs = f32[3] parameter(0)
  ROOT y = f32[2] custom-call(data, ptr, idx, rhs), $CSR
}"

# Host callbacks. jax.debug.print(x, big) dumps as a typed FFI call on a
# token; its operands go to standard error, the large one summarized.
CB='custom_call_target="xla_ffi_python_cpu_callback", api_version=API_VERSION_TYPED_FFI, custom_call_has_side_effect=true'
cat >"$tmp/print.hlo" <<HLO
HloModule print
ENTRY e {
  x = f32[3] constant({1, -2.5, 3})
  big = s32[2000] iota(), iota_dimension=0
  t0 = token[] after-all()
  t1 = (token[]) custom-call(t0, x, big), $CB, backend_config={index = 2 : ui64}
  ROOT r = f32[3] add(x, x)
}
HLO
"$H" "$tmp/print.hlo" >"$tmp/out" 2>"$tmp/err"
rc=$?
want_out='f32[3] {2, -5, 6}'
if [ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = "$want_out" ] &&
   grep -qF 'xla_ffi_python_cpu_callback: host callback 2 (jax.debug.print or jax.debug.callback): its Python function, and a print'"'"'s format string, stayed in the process that dumped the module' "$tmp/err" &&
   grep -qxF '  operand 0: token' "$tmp/err" &&
   grep -qxF '  operand 1: f32[3] {1, -2.5, 3}' "$tmp/err" &&
   grep -qxF '  operand 2: s32[2000] (2000 elements, summarized) min=0 max=1999 mean=999.5 nan=0 inf=0 {0, 1, 2, 3, 4, 5, 6, 7, ...}' "$tmp/err"; then
  ok "debug print"
else
  fail "debug print: exit $rc"; cat "$tmp/out" "$tmp/err"
fi
# The older target: operand 0 is the function's descriptor, not printed.
cat >"$tmp/legacy.hlo" <<HLO
HloModule legacy
ENTRY e {
  desc = u64[] constant(94371527305728)
  x = s32[2] constant({7, 8})
  ROOT t = () custom-call(desc, x), custom_call_target="xla_python_cpu_callback", api_version=API_VERSION_STATUS_RETURNING, custom_call_has_side_effect=true
}
HLO
"$H" "$tmp/legacy.hlo" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 0 ] && grep -qF 'xla_python_cpu_callback: host callback (jax.debug.print' "$tmp/err" &&
   grep -qxF '  operand 0: s32[2] {7, 8}' "$tmp/err" && ! grep -q 'operand 1' "$tmp/err"; then
  ok "legacy callback"
else
  fail "legacy callback: exit $rc"; cat "$tmp/out" "$tmp/err"
fi
# A callback with results (jax.pure_callback) is an error saying how to bind it.
expect pure-callback 2 'host callback 0 returns 1 value (jax.pure_callback or io_callback)' "HloModule pure
ENTRY e {
  x = f32[3] parameter(0)
  ROOT y = f32[3] custom-call(x), $CB, backend_config={index = 0 : ui64}
}"
grep -qF -- '--custom-call xla_ffi_python_cpu_callback=LIB.so[:SYMBOL]' "$tmp/err" &&
  grep -qF 'hlorun.bind("xla_ffi_python_cpu_callback", fn)' "$tmp/err" && ok "pure-callback binding hint" ||
  { fail "pure-callback binding hint"; cat "$tmp/err"; }

[ "$fails" = 0 ]
