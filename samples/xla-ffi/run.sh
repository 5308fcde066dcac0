#!/bin/bash
# run.sh XLA_INCLUDE [HLORUN]: build the handlers of this directory against
# XLA's own FFI headers (XLA_INCLUDE/xla/ffi/api/{c_api,api,ffi}.h, any API
# version 0.1..0.3) with a plain c++ -shared, run every module here through
# hlorun and compare with the .expected files; failing handlers must exit 2
# with their message. Not run by `make check`: XLA's headers are not shipped
# with hlorun. Ends with "N passed, N failed".
set -u
inc=${1:?usage: run.sh XLA_INCLUDE [HLORUN]}
here=$(cd "$(dirname "$0")" && pwd)
H=${2:-$here/../../hlorun}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here"
minor=$(sed -n 's/^#define XLA_FFI_API_MINOR \([0-9]*\).*/\1/p' "$inc/xla/ffi/api/c_api.h")
CXX=${CXX:-c++}
$CXX -std=c++17 -O1 -shared -fPIC -w -I"$inc" handlers.cc -o "$tmp/xf.so" || exit 2
$CXX -std=c++17 -O1 -shared -fPIC legacy.cc -o "$tmp/lg.so" || exit 2
if [ "$minor" -ge 2 ]; then
  $CXX -std=c++17 -O1 -shared -fPIC -w -I"$inc" static_reg.cc -o "$tmp/xs.so" || exit 2
fi
pass=0; fail=0
ok()  { echo "PASS: $*"; pass=$((pass+1)); }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
expect() {   # LABEL EXPECTED ARGS...
  label=$1; want=$2; shift 2
  out=$("$H" "$@" --expect "$want" 2>&1); rc=$?
  if [ $rc = 0 ]; then ok "$label"; else bad "$label (exit $rc)"; echo "$out" | head -5; fi
}
expect_err() {   # LABEL MESSAGE ARGS...: exit 2 and the handler's message
  label=$1; msg=$2; shift 2
  out=$("$H" "$@" 2>&1); rc=$?
  case "$rc:$out" in 2:*"$msg"*) ok "$label" ;; *) bad "$label (exit $rc)"; echo "$out" | head -5 ;; esac
}
L=$tmp/xf.so
v="0.$minor"
expect "$v scalar attributes" affine.expected --custom-call xf_affine=$L affine.hlo x4.txt
expect "$v every attribute kind" attrs.expected --custom-call xf_attrs=$L attrs.hlo
expect "$v quoted backend_config" attrs.expected --custom-call xf_attrs=$L attrs_quoted.hlo
expect "$v Dictionary" dict.expected --custom-call xf_dict=$L dict.hlo
expect "$v fallible handler, success" fail.expected --custom-call xf_fail=$L fail.hlo pos4.txt
expect_err "$v Error::InvalidArgument" "xf_fail: element 2 is negative" --custom-call xf_fail=$L fail.hlo x4.txt
expect "$v Future + ThreadPool" async.expected --custom-call xf_async=$L async.hlo x4.txt
expect_err "$v Future error" "xf_async: failed on a worker" --custom-call xf_async=$L async_fail.hlo x4.txt
expect "$v ThreadPool fan-out" pool.expected --custom-call xf_pool=$L pool.hlo x4.txt
expect "$v ScratchAllocator" scratch.expected --custom-call xf_scratch=$L scratch.hlo x4.txt
expect "$v RemainingArgs/Rets" remaining.expected --custom-call xf_remaining=$L remaining.hlo
expect "$v tuple result" minmax.expected --custom-call xf_minmax=$L minmax.hlo
expect "$v tokens" token.expected --custom-call xf_token=$L token.hlo x4.txt
expect "$v bf16/f16/c64/pred" types.expected --custom-call xf_types=$L types.hlo
expect "$v stateful bundle via --plugin" counter.expected --plugin $L:xf_plugin_init counter.hlo
expect_err "$v wrong buffer dtype" "Wrong buffer dtype: expected F32 but got S32" --custom-call xf_affine=$L affine_s32.hlo s4i.txt
expect_err "$v wrong attribute type" "Wrong scalar data type: expected F32 but got S32" --custom-call xf_affine=$L affine_badattr.hlo x4.txt
expect_err "$v missing attribute" "Wrong number of attributes: expected 2 but got 1" --custom-call xf_affine=$L affine_missing.hlo x4.txt
if [ "$minor" -ge 2 ]; then
  expect "$v s4 buffer" s4.expected --custom-call xf_s4=$L s4.hlo
  expect "$v RunId, DeviceOrdinal" runinfo.expected --custom-call xf_runinfo=$L runinfo.hlo
  # Its execute reads the prepare stage's state: XLA:CPU never runs prepare,
  # so it needs the XLA:GPU stage order.
  expect "$v static registration, prepare-stage state" xs.expected --ffi-all-stages --plugin "$tmp/xs.so" xs.hlo x4.txt
  expect_err "$v prepare state missing as on XLA:CPU" "failed" --plugin "$tmp/xs.so" xs.hlo x4.txt
fi
expect "legacy v1, tuple operand" lg1.expected --custom-call lg_add=$tmp/lg.so lg1.hlo x4.txt
expect "legacy v2" lg2.expected --custom-call lg_checked=$tmp/lg.so lg2.hlo pos4.txt
expect_err "legacy v2 failure" "lg_checked: negative input at 2" --custom-call lg_checked=$tmp/lg.so lg2.hlo x4.txt
expect "legacy v3, opaque, tuple result" lg3.expected --custom-call lg_opaque=$tmp/lg.so lg3.hlo x4.txt
expect_err "legacy v3 failure" "lg_opaque: empty opaque" --custom-call lg_opaque=$tmp/lg.so lg3_empty.hlo x4.txt
echo "$pass passed, $fail failed"
[ $fail = 0 ]
