#!/bin/sh
# The built-in XLA:GPU targets (targets/gpu/): every case of tests/gpu/calls
# (a GPU custom call as XLA:GPU prints it) and of tests/gpu/twins (the same
# computation in standard HLO) must match its numpy-derived expected.txt
# (tools/gpu_cases.py); bad backend_configs fail with errors that name the
# instruction and the field; --explain-custom-calls says which calls run.
# Run by `make check`.
set -u
srcdir=${srcdir:-.}
H=${HLORUN:-./hlorun}
d=$srcdir/tests/gpu
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-gpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$H" --suite -j2 "$d/calls" "$d/twins" >"$tmp/out" 2>&1 || { fail "suite"; cat "$tmp/out"; }
grep -q " 0 failed" "$tmp/out" && echo "ok: $(cat "$tmp/out")"

# bad NAME TARGET RESULT OPERANDS CONFIG TEXT: the call fails (exit 2) with
# TEXT in its message, before anything runs.
bad() {
  name=$1 target=$2 result=$3 ops=$4 config=$5 want=$6
  {
    echo "HloModule $name"
    echo "ENTRY e {"
    echo "  a = f32[2,3]{1,0} parameter(0)"
    echo "  b = f32[3,4]{1,0} parameter(1)"
    echo "  v = f32[4]{0} parameter(2)"
    echo "  ROOT cc = $result custom-call($ops), custom_call_target=\"$target\", backend_config=$config"
    echo "}"
  } >"$tmp/$name.hlo"
  "$H" --random "$tmp/$name.hlo" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" != 2 ]; then fail "$name: exit $rc, want 2"; cat "$tmp/out" "$tmp/err"; return; fi
  grep -qF -- "$want" "$tmp/err" || { fail "$name: no '$want' in"; cat "$tmp/err"; return; }
  echo "ok: $name"
}
G='"__cublas$lt$matmul"'
DN='"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}'
T='(f32[2,4]{1,0}, s8[16]{0})'
bad not-json '__cublas$lt$matmul' "$T" 'a, b' '{"gemm_backend_config":{"alpha_real":1,}}' \
  '%cc: backend_config is not valid JSON'
bad no-dnums '__cublas$lt$matmul' "$T" 'a, b' '{"gemm_backend_config":{"alpha_real":1}}' \
  '%cc: backend_config: missing required field gemm_backend_config.dot_dimension_numbers'
bad no-alpha '__cublas$gemm' "$T" 'a, b' "{\"gemm_backend_config\":{$DN}}" \
  '%cc: backend_config: missing required field gemm_backend_config.alpha_real'
bad bad-epilogue '__cublas$lt$matmul' "$T" 'a, b' "{\"gemm_backend_config\":{\"alpha_real\":1,$DN,\"epilogue\":\"SWISH\"}}" \
  'backend_config field gemm_backend_config.epilogue: expected one of DEFAULT, BIAS, RELU'
bad beta-no-c '__cublas$lt$matmul' "$T" 'a, b' "{\"gemm_backend_config\":{\"alpha_real\":1,\"beta\":1,$DN}}" \
  '%cc: has 2 operands; beta=1 and epilogue DEFAULT need 3 (a, b, C)'
bad wrong-dims '__cublas$lt$matmul' "$T" 'a, b' '{"gemm_backend_config":{"alpha_real":1,"dot_dimension_numbers":{"lhs_contracting_dimensions":["0"],"rhs_contracting_dimensions":["0"]}}}' \
  'gemm_backend_config.dot_dimension_numbers.lhs_contracting_dimensions: contracting dimension sizes differ (2 vs 3)'
bad wrong-result '__cublas$lt$matmul' '(f32[4,2]{1,0}, s8[16]{0})' 'a, b' "{\"gemm_backend_config\":{\"alpha_real\":1,$DN}}" \
  'gives a result of shape f32[2,4], but the instruction'"'"'s result is f32[4,2]'
bad bias-length '__cublas$lt$matmul' "$T" 'a, b, a' "{\"gemm_backend_config\":{\"alpha_real\":1,$DN,\"epilogue\":\"BIAS\"}}" \
  'operand 2 (the bias of epilogue BIAS) is f32[2,3]; it must be 1-D of length 4'
bad gemm-epilogue '__cublas$gemm' "$T" 'a, b, v' "{\"gemm_backend_config\":{\"alpha_real\":1,$DN,\"epilogue\":\"BIAS\"}}" \
  'gemm_backend_config.epilogue: __cublas$gemm has no epilogue'
bad int-as-text '__cublas$gemm' "$T" 'a, b' '{"gemm_backend_config":{"alpha_real":1,"dot_dimension_numbers":{"lhs_contracting_dimensions":["one"]}}}' \
  'gemm_backend_config.dot_dimension_numbers.lhs_contracting_dimensions[0]: expected an integer'
bad algorithm '__cublas$gemm' "$T" 'a, b' "{\"gemm_backend_config\":{\"alpha_real\":1,$DN,\"precision_config\":{\"algorithm\":\"ALG_DOT_F16_F16_F16\"}}}" \
  'precision_config.algorithm: ALG_DOT_F16_F16_F16 is not supported (ALG_UNSET, ALG_DOT_F32_F32_F32, ALG_DOT_F64_F64_F64, ALG_DOT_BF16_BF16_F32, ALG_DOT_BF16_BF16_F32_X3/X6/X9, ALG_DOT_F16_F16_F32, ALG_DOT_TF32_TF32_F32 are): cuBLAS accumulates it in f16 in an unspecified order'
# Complex gemms and the remaining gemm fields (issue 21, part 3).
cbad() {
  name=$1 target=$2 types=$3 extra=$4 config=$5 want=$6
  set -- $types
  {
    echo "HloModule $name"
    echo "ENTRY e {"
    echo "  a = $1[2,3]{1,0} parameter(0)"
    echo "  b = $2[3,4]{1,0} parameter(1)"
    echo "  v = $3[4]{0} parameter(2)"
    echo "  ROOT cc = ($3[2,4]{1,0}, s8[16]{0}) custom-call(a, b$extra), custom_call_target=\"$target\", backend_config=$config"
    echo "}"
  } >"$tmp/$name.hlo"
  "$H" --random "$tmp/$name.hlo" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" != 2 ]; then fail "$name: exit $rc, want 2"; cat "$tmp/out" "$tmp/err"; return; fi
  grep -qF -- "$want" "$tmp/err" || { fail "$name: no '$want' in"; cat "$tmp/err"; return; }
  echo "ok: $name"
}
cbad complex-epilogue '__cublas$lt$matmul' 'c64 c64 c64' ', v' "{\"gemm_backend_config\":{\"alpha_real\":1,$DN,\"epilogue\":\"BIAS\"}}" \
  "%cc: backend_config field gemm_backend_config.epilogue: a complex gemm has no epilogue (cuBLASLt's epilogues take real types only"
cbad complex-mixed '__cublas$gemm' 'c64 c128 c64' '' "{\"gemm_backend_config\":{\"alpha_real\":1,$DN}}" \
  '%cc: a complex gemm takes operands and a result of one complex type (c64 or c128); operand 1 is c128 and the result c64'
cbad real-alpha-imag '__cublas$gemm' 'f32 f32 f32' '' "{\"gemm_backend_config\":{\"alpha_real\":1,\"alpha_imag\":0.5,$DN}}" \
  '%cc: backend_config field gemm_backend_config.alpha_imag is 0.5: a f32 gemm takes a real alpha (expected 0'
cbad s8-to-s8 '__cublas$lt$matmul' 's8 s8 s8' '' "{\"gemm_backend_config\":{\"alpha_real\":1,$DN}}" \
  '%cc: an integer gemm is s8 x s8 -> s32 or f32 (matmul_utils.cc RunGemm), not s8 x s8 -> s8'
cbad x3-bf16 '__cublas$gemm' 'bf16 bf16 f32' '' "{\"gemm_backend_config\":{\"alpha_real\":1,$DN,\"precision_config\":{\"algorithm\":\"ALG_DOT_BF16_BF16_F32_X3\"}}}" \
  'precision_config.algorithm: ALG_DOT_BF16_BF16_F32_X3 takes f32 operands'
bad conv-scale '__cudnn$convForward' '(f32[2,3]{1,0}, u8[0]{0})' 'a, b' '{"cudnn_conv_backend_config":{"activation_mode":"kNone"}}' \
  'missing required field cudnn_conv_backend_config.conv_result_scale'
bad fmha-dropout '__cudnn$fmhaSoftmaxDropout' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' '{"cudnn_fmha_backend_config":{"fmha_scale":1,"dropout_rate":0.1,"bmm1_dot_dimension_numbers":{},"bmm2_dot_dimension_numbers":{}}}' \
  "cudnn_fmha_backend_config.dropout_rate is 0.1: dropout draws from cuDNN's Philox stream"
bad fmha-bwd-dropout '__cudnn$fmhaSoftmaxDropoutBackward' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' '{"cudnn_fmha_backend_config":{"fmha_scale":1,"dropout_rate":0.25,"bmm1_grad_gemm1_dot_dimension_numbers":{},"bmm1_grad_gemm2_dot_dimension_numbers":{},"bmm2_grad_gemm1_dot_dimension_numbers":{},"bmm2_grad_gemm2_dot_dimension_numbers":{}}}' \
  "cudnn_fmha_backend_config.dropout_rate is 0.25: dropout draws from cuDNN's Philox stream"
bad fmha-bwd-dnums '__cudnn$fmhaSoftmaxBackward' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' '{"cudnn_fmha_backend_config":{"fmha_scale":1,"bmm1_dot_dimension_numbers":{},"bmm2_dot_dimension_numbers":{}}}' \
  'backend_config: missing required field cudnn_fmha_backend_config.bmm1_grad_gemm1_dot_dimension_numbers'
bad fmha-mask '__cudnn$fmhaSoftmax' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' '{"cudnn_fmha_backend_config":{"fmha_scale":1,"mask_type":"ALIBI_X","bmm1_dot_dimension_numbers":{},"bmm2_dot_dimension_numbers":{}}}' \
  'cudnn_fmha_backend_config.mask_type: expected one of NO_MASK, PADDING, CAUSAL, PADDING_CAUSAL, ALIBI'
# Packed and paged attention (forward only).
GK='"bmm1_grad_gemm1_dot_dimension_numbers":{},"bmm1_grad_gemm2_dot_dimension_numbers":{},"bmm2_grad_gemm1_dot_dimension_numbers":{},"bmm2_grad_gemm2_dot_dimension_numbers":{}'
bad fmha-packed-arity '__cudnn$fmhaSoftmax' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' '{"cudnn_fmha_backend_config":{"fmha_scale":1,"max_seg_per_batch":2,"bmm1_dot_dimension_numbers":{},"bmm2_dot_dimension_numbers":{}}}' \
  '%cc: has 3 operands and 2 results; __cudnn$fmhaSoftmax with packed attention (max_seg_per_batch > 1) takes (q, k, v, q_seqlen, kv_seqlen, q_offsets, kv_offsets) and gives (O[, stats], u8 workspace)'
bad fmha-paged-arity '__cudnn$fmhaSoftmax' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' '{"cudnn_fmha_backend_config":{"fmha_scale":1,"is_paged_attention":true,"bmm1_dot_dimension_numbers":{},"bmm2_dot_dimension_numbers":{}}}' \
  'takes (q, k, v, q_seqlen, kv_seqlen, page_table_k, page_table_v)'
bad fmha-packed-bias '__cudnn$fmhaScaleBiasSoftmax' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' '{"cudnn_fmha_backend_config":{"fmha_scale":1,"max_seg_per_batch":2,"bmm1_dot_dimension_numbers":{},"bmm2_dot_dimension_numbers":{}}}' \
  '%cc: hlorun runs packed attention (max_seg_per_batch > 1) without a bias only'
bad fmha-packed-bwd '__cudnn$fmhaSoftmaxBackward' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' "{\"cudnn_fmha_backend_config\":{\"fmha_scale\":1,\"max_seg_per_batch\":2,$GK}}" \
  '%cc: has 3 operands and 2 results; __cudnn$fmhaSoftmaxBackward with packed attention (max_seg_per_batch > 1) takes (q, k, v, stats, dO, O, q_seqlen, kv_seqlen, q_offsets, kv_offsets) and gives (dQ, dK, dV, u8 workspace)'
bad fmha-paged-bwd '__cudnn$fmhaSoftmaxBackward' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' "{\"cudnn_fmha_backend_config\":{\"fmha_scale\":1,\"is_paged_attention\":true,$GK}}" \
  "cudnn_fmha_backend_config.is_paged_attention: XLA's backward attention graph takes no page tables"
bad fmha-f8-packed '__cudnn$fmhaSoftmaxF8' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' '{"cudnn_fmha_backend_config":{"fmha_scale":1,"max_seg_per_batch":2,"bmm1_dot_dimension_numbers":{},"bmm2_dot_dimension_numbers":{}}}' \
  "cudnn_fmha_backend_config.max_seg_per_batch: XLA's F8 attention graphs have no packed or paged layout"
bad grouped-beta '__cublas$lt$groupedMatmul' '(f32[2,4]{1,0}, s8[16]{0})' 'a, b, v' '{"grouped_gemm_backend_config":{"gemm_backend_config":{"alpha_real":1,"beta":1},"ragged_dot_dimension_numbers":{"dot_dimension_numbers":{}}}}' \
  'grouped_gemm_backend_config.gemm_backend_config.beta is 1: a grouped matmul has no C operand and no complex alpha (expected 0)'
bad grouped-no-ragged '__cublas$lt$groupedMatmul' '(f32[2,4]{1,0}, s8[16]{0})' 'a, b, v' '{"grouped_gemm_backend_config":{"gemm_backend_config":{"alpha_real":1}}}' \
  'backend_config: missing required field grouped_gemm_backend_config.ragged_dot_dimension_numbers'
bad f8-scale '__cublas$lt$matmul$f8' "$T" 'a, b, v, v' "{\"gemm_backend_config\":{\"alpha_real\":1,$DN}}" \
  'operand 2 (a_scale) must be an f32 scalar'
# __cudnn$fmhaSoftmaxBackwardF8: the config, the arity, the f8 types, the shapes.
bad f8-bwd-dnums '__cudnn$fmhaSoftmaxBackwardF8' '(f32[2,3]{1,0}, u8[0]{0})' 'a' '{"cudnn_fmha_backend_config":{"fmha_scale":1,"bmm1_dot_dimension_numbers":{},"bmm2_dot_dimension_numbers":{}}}' \
  '%cc: backend_config: missing required field cudnn_fmha_backend_config.bmm1_grad_gemm1_dot_dimension_numbers'
bad f8-bwd-arity '__cudnn$fmhaSoftmaxBackwardF8' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' "{\"cudnn_fmha_backend_config\":{\"fmha_scale\":1,$GK}}" \
  '%cc: has 3 operands and 2 results; __cudnn$fmhaSoftmaxBackwardF8 takes (q, k, v, O, dO, stats, descale_q, descale_k, descale_v, descale_s, descale_o, descale_dO, descale_dP, scale_s, scale_dP, scale_dQ, scale_dK, scale_dV) and gives (dQ, dK, dV, amax_dQ, amax_dK, amax_dV, amax_dP, u8 workspace)'
A18='a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a'
R8='(f32[2,3]{1,0}, f32[2,3]{1,0}, f32[2,3]{1,0}, f32[2,3]{1,0}, f32[2,3]{1,0}, f32[2,3]{1,0}, f32[2,3]{1,0}, u8[0]{0})'
bad f8-bwd-type '__cudnn$fmhaSoftmaxBackwardF8' "$R8" "$A18" "{\"cudnn_fmha_backend_config\":{\"fmha_scale\":1,$GK}}" \
  '%cc: operand 0 (q) is f32: q, k, v, O, dO, dQ, dK and dV must share one f8 type (f8e4m3fn or f8e5m2'
bad f8-bwd-mask '__cudnn$fmhaSoftmaxBackwardF8' "$R8" "$A18" "{\"cudnn_fmha_backend_config\":{\"fmha_scale\":1,\"mask_type\":\"PADDING_CAUSAL\",$GK}}" \
  "%cc: backend_config field cudnn_fmha_backend_config.mask_type: XLA's F8 attention graph has only NO_MASK and CAUSAL"
# shapes that contradict each other (the generated causal case, edited)
m=$d/calls/fmha_f8_bwd_causal/module.hlo
f8bwd() {
  name=$1 from=$2 to=$3 want=$4
  sed "s/$from/$to/" "$m" >"$tmp/$name.hlo"
  "$H" --random "$tmp/$name.hlo" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" != 2 ]; then fail "$name: exit $rc, want 2"; cat "$tmp/out" "$tmp/err"; return; fi
  grep -qF -- "$want" "$tmp/err" || { fail "$name: no '$want' in"; cat "$tmp/err"; return; }
  echo "ok: $name"
}
f8bwd f8-bwd-stats '%stats = f32\[1,2,5\]' '%stats = f32[1,2,4]' \
  '%cc: operand 5 (stats) must be f32 with the scores'"'"' shape less the key dimension'
f8bwd f8-bwd-scale '%scale_dQ = f32\[1,1,1,1\]' '%scale_dQ = f32[1,2,1,1]' \
  '%cc: operand 15 (scale_dQ) must be one f32 (f32[1,1,1,1])'
f8bwd f8-bwd-O '%O = f8e4m3fn\[1,5,2,4\]' '%O = f8e4m3fn[1,5,2,3]' \
  '%cc: operand 3 (the forward output O) must have dO'"'"'s shape'
# packed and paged operands that do not fit (the generated cases, edited)
m=$d/calls/fmha_packed_causal_stats/module.hlo
f8bwd packed-offsets '%q_offsets = s32\[2,3\]' '%q_offsets = s32[2,2]' \
  '%cc: operand 5 (q_offsets) must be s32 with at least 5 elements (the element offset of each of the 4 segments, and one more)'
f8bwd packed-seqlen '%kv_seqlen = s32\[2,2\]' '%kv_seqlen = s32[2,3]' \
  '%cc: operand 4 (kv_seqlen) must be s32 with 4 elements (one length per segment: batch times max_seg_per_batch)'
f8bwd packed-stats '"max_seg_per_batch":2' '"max_seg_per_batch":3' \
  '%cc: result 1 (stats) must be f32[6,2,6] (one row per segment, head and query)'
m=$d/calls/fmha_bwd_packed_causal/module.hlo
f8bwd packed-bwd-stats '%stats = f32\[4,2,6\]' '%stats = f32[2,2,6]' \
  '%cc: operand 3 (stats) must be f32[4,2,6] (one row per segment, head and query)'
f8bwd packed-bwd-O '%O = f32\[2,6,2,3\]' '%O = f32[2,6,2,4]' \
  '%cc: q, k, v, dO and O do not agree on the batch, heads, sequence or head sizes (O must have dO'"'"'s shape)'
m=$d/calls/fmha_paged_stats/module.hlo
f8bwd paged-table '%page_table_v = s32\[2,1,3,1\]' '%page_table_v = s32[2,3,1,1]' \
  '%cc: operand 6 (page_table_v) must be s32[2,1,nb,1] (one page index per logical block of each batch), as page_table_k'
F8C='{"cudnn_fmha_backend_config":{"fmha_scale":1,"mask_type":"PADDING","bmm1_dot_dimension_numbers":{},"bmm2_dot_dimension_numbers":{}}}'
bad f8-fwd-mask '__cudnn$fmhaSoftmaxF8' 'f32[2,3]{1,0}' 'a' "$F8C" \
  "%cc: backend_config field cudnn_fmha_backend_config.mask_type: XLA's F8 attention graph has only NO_MASK and CAUSAL"
bad f8-fwd-arity '__cudnn$fmhaSoftmaxF8' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' "$(echo "$F8C" | sed 's/PADDING/CAUSAL/')" \
  '%cc: has 3 operands and 2 results; __cudnn$fmhaSoftmaxF8 takes (q, k, v, descale_q, descale_k, descale_v, descale_s, scale_s, scale_o)'
NC='"cudnn_norm_backend_config"'
bad norm-eps '__cudnn$norm' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' "{$NC:{\"kind\":\"LAYER_FWD_INFER\"}}" \
  '%cc: backend_config: missing required field cudnn_norm_backend_config.epsilon'
bad norm-kind '__cudnn$norm' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' "{$NC:{\"epsilon\":0.001,\"kind\":\"RMS_FWD\"}}" \
  'backend_config field cudnn_norm_backend_config.kind: expected one of LAYER_FWD_INFER, LAYER_FWD_TRAIN, LAYER_BWD'
bad norm-arity '__cudnn$norm' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' "{$NC:{\"epsilon\":0.001,\"kind\":\"LAYER_BWD\"}}" \
  'has 3 operands and 2 results; kind LAYER_BWD takes (x, scale, dy, mean, norm_factor) and gives (dx, dscale, dbias, u8 workspace)'
bad norm-scale '__cudnn$norm' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a' "{$NC:{\"epsilon\":0.001}}" \
  'operand 1 (scale) does not fit x (f32): it must have x'"'"'s shape with dimension 0 of size 1'
# __cublas$lt$matmul$mx: (lhs, rhs, lhs_scale, rhs_scale), a scaled-dot.
mxbad() {
  name=$1 ls=$2 result=$3 config=$4 want=$5
  {
    echo "HloModule $name"
    echo "ENTRY e {"
    echo "  l = f8e4m3fn[16,64]{1,0} parameter(0)"
    echo "  r = f8e4m3fn[16,64]{1,0} parameter(1)"
    echo "  ls = $ls parameter(2)"
    echo "  rs = f8e8m0fnu[16,2]{1,0} parameter(3)"
    echo "  ROOT cc = ($result, s8[16]{0}) custom-call(l, r, ls, rs), custom_call_target=\"__cublas\$lt\$matmul\$mx\", backend_config={\"gemm_backend_config\":{\"alpha_real\":1,\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],\"rhs_contracting_dimensions\":[\"1\"]}$config}}"
    echo "}"
  } >"$tmp/$name.hlo"
  "$H" --random "$tmp/$name.hlo" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" != 2 ]; then fail "$name: exit $rc, want 2"; cat "$tmp/out" "$tmp/err"; return; fi
  grep -qF -- "$want" "$tmp/err" || { fail "$name: no '$want' in"; cat "$tmp/err"; return; }
  echo "ok: $name"
}
S2='f8e8m0fnu[16,2]{1,0}'
mxbad mx-scale-mode "$S2" 'f32[16,16]{1,0}' '' \
  '%cc: backend_config field gemm_backend_config.scale_mode is 0: an MX gemm is block-scaled (expected 2)'
mxbad mx-scale-shape 'f8e8m0fnu[16,3]{1,0}' 'f32[16,16]{1,0}' ',"scale_mode":2' \
  "%cc: operand 2 (lhs scale) is f8e8m0fnu[16,3] for lhs f8e4m3fn[16,64]: a scale must be a float of the operand's rank whose every dimension divides the operand's"
mxbad mx-beta "$S2" 'f32[16,16]{1,0}' ',"scale_mode":2,"beta":1' \
  '%cc: backend_config field gemm_backend_config.beta is 1: an MX gemm has no C operand'
mxbad mx-result "$S2" 'f32[16,8]{1,0}' ',"scale_mode":2' \
  "gives a result of shape f32[16,16], but the instruction's result is f32[16,8]"
mxbad mx-epilogue "$S2" 'f32[16,16]{1,0}' ',"scale_mode":2,"epilogue":"RELU"' \
  'gemm_backend_config.epilogue: an MX gemm takes DEFAULT'
# __cudnn$convForwardGraph: a graph that does not fit the call.
gbad() {
  name=$1 ops=$2 result=$3 graph=$4 want=$5
  {
    echo "HloModule $name"
    echo "ENTRY e {"
    echo "  x = f8e4m3fn[1,4,4,3]{3,2,1,0} parameter(0)"
    echo "  w = f8e4m3fn[4,3,3,3]{3,2,1,0} parameter(1)"
    echo "  s = f32[] parameter(2)"
    echo "  ROOT cc = ($result, u8[0]{0}) custom-call($ops), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_o01i->b01f, custom_call_target=\"__cudnn\$convForwardGraph\", backend_config={\"cudnn_conv_backend_config\":{$graph}}"
    echo "}"
  } >"$tmp/$name.hlo"
  "$H" --random "$tmp/$name.hlo" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" != 2 ]; then fail "$name: exit $rc, want 2"; cat "$tmp/out" "$tmp/err"; return; fi
  grep -qF -- "$want" "$tmp/err" || { fail "$name: no '$want' in"; cat "$tmp/err"; return; }
  echo "ok: $name"
}
Y8='f8e4m3fn[1,4,4,4]{3,2,1,0}'
gbad graph-missing 'x, w' "$Y8" '"conv_result_scale":1' \
  '%cc: backend_config: missing required field cudnn_conv_backend_config.serialized_graph (a string)'
gbad graph-syntax 'x, w, s' "$Y8" '"conv_result_scale":1,"serialized_graph":"1:[f32]conv();2:[f8e4m3fn]scale(1)"' \
  "%cc: backend_config field cudnn_conv_backend_config.serialized_graph: expected ';' at offset 34"
gbad graph-unknown-op 'x, w, s' "$Y8" '"conv_result_scale":1,"serialized_graph":"1:[f32]conv();2:[f8e4m3fn]swish(1);"' \
  'serialized_graph: unknown op (conv, add, min, max, elu, relu, scale, invscale, amax are known)'
gbad graph-uid 'x, w, s' "$Y8" '"conv_result_scale":1,"serialized_graph":"1:[f32]conv();2:[f8e4m3fn]scale(7);"' \
  'serialized_graph: operand UID names no earlier op'
gbad graph-amax-operand 'x, w, s' "$Y8" '"conv_result_scale":1,"serialized_graph":"1:[f32]conv();2:[f32]amax(1);3:[f8e4m3fn]scale(2);"' \
  'serialized_graph: an amax result (a scalar output) cannot be an operand'
gbad graph-operands 'x, w' "$Y8" '"conv_result_scale":1,"serialized_graph":"1:[f32]conv();2:[f8e4m3fn]scale(1);"' \
  '%cc: backend_config field cudnn_conv_backend_config.serialized_graph: op 2 (scale) needs operand 2, but the call has 2 operands'
gbad graph-scalar 'x, w, x' "$Y8" '"conv_result_scale":1,"serialized_graph":"1:[f32]conv();2:[f8e4m3fn]scale(1);"' \
  '%cc: operand 2 (read by op 2, scale, of serialized_graph) is f8e4m3fn[1,4,4,3]; it must be a scalar'
gbad graph-result-type 'x, w, s' 'f32[1,4,4,4]{3,2,1,0}' '"conv_result_scale":1,"serialized_graph":"1:[f32]conv();2:[f8e4m3fn]scale(1);"' \
  '%cc: result 0 is f32[1,4,4,4], but serialized_graph op 2 (scale) gives f8e4m3fn[1,4,4,4]'
gbad graph-amax-missing 'x, w, s' "$Y8" '"conv_result_scale":1,"serialized_graph":"1:[f32]conv();2:[f8e4m3fn]scale(1);3:[f32]amax(1);"' \
  '%cc: result 1 is u8[0], but serialized_graph op 3 (amax) gives f32[]'
gbad graph-scaled 'x, w, s' "$Y8" '"conv_result_scale":2,"serialized_graph":"1:[f32]conv();2:[f8e4m3fn]scale(1);"' \
  'cudnn_conv_backend_config.conv_result_scale is 2: a graph convolution takes 1'
bad block-scale '__cudnn$blockScaledDot' '(f32[2,3]{1,0}, u8[0]{0})' 'a, a, a, a' '{}' \
  'the block size is not in the backend_config (block_scaled_dot_backend_config.block_size) and the types (f32 input, f32 scale) are neither MXFP8'
bad triton '__gpu$xla.gpu.triton' 'f32[2,3]{1,0}' 'a' '{name = "k", ir = "tt.func"}' \
  'cannot run on a CPU'

# A grouped backward convolution whose shapes do not fit its groups.
cat >"$tmp/grp.hlo" <<'HLO'
HloModule grp
ENTRY e {
  dy = f32[1,6,4,4]{3,2,1,0} parameter(0)
  w = f32[6,2,3,3]{3,2,1,0} parameter(1)
  cc = (f32[1,5,4,4]{3,2,1,0}, u8[0]{0}) custom-call(dy, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=2, custom_call_target="__cudnn$convBackwardInput", backend_config={"cudnn_conv_backend_config":{"conv_result_scale":1}}
  ROOT r = f32[1,5,4,4]{3,2,1,0} get-tuple-element(cc), index=0
}
HLO
"$H" --random "$tmp/grp.hlo" >"$tmp/out" 2>"$tmp/err"
if [ $? = 2 ] && grep -qF "%cc: feature_group_count=2 does not fit the forward convolution: x has 5 features" "$tmp/err"; then
  echo "ok: conv-groups-mismatch"
else
  fail "conv-groups-mismatch"; cat "$tmp/err"
fi

# --explain-custom-calls says, before running, which calls can run.
cat >"$tmp/mix.hlo" <<'HLO'
HloModule mix
ENTRY e {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[3,4]{1,0} parameter(1)
  g = (f32[2,4]{1,0}, s8[16]{0}) custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"alpha_real":1,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
  ROOT t = f32[2,3]{1,0} custom-call(a), custom_call_target="__gpu$xla.gpu.triton", backend_config={name = "k"}
}
HLO
"$H" --explain-custom-calls "$tmp/mix.hlo" >"$tmp/out" 2>"$tmp/err"
if grep -qF "  runs: yes" "$tmp/out" && grep -qF "  runs: NO: " "$tmp/out" &&
   grep -qF "binding: built-in: XLA:GPU, built-in typed FFI handler" "$tmp/out"; then
  echo "ok: explain"
else
  fail "explain"; cat "$tmp/out" "$tmp/err"
fi

# The targets issue 21 added say they run; the refused ones say why not.
for t in norm_infer_f32 norm_train_f32 norm_bwd_f32 fmha_padding_causal_f32 fmha_bwd_f32 \
         fmha_bwd_bias_dbias_f16 conv_bwd_input_grouped_f32 conv_bwd_filter_grouped_f32 \
         grouped_rows_f32 block_mxfp8_f32 block_nvfp4_f32 gemm_c64 lt_c128_imag_alpha \
         gemm_s8_f32_beta gemm_alg_x3_f32 convgraph_bias_relu_amax_f8 \
         mx_fp8_f32 fmha_window_padding_causal_f32 fmha_bwd_window_causal_f32 \
         fmha_f8_causal_stats fmha_f8_bwd_causal fmha_packed_causal_stats fmha_paged_stats \
         fmha_bwd_packed_causal; do
  "$H" --explain-custom-calls "$d/calls/$t/module.hlo" >"$tmp/out" 2>&1
  grep -qF "  runs: yes" "$tmp/out" && echo "ok: explain $t" || { fail "explain $t"; cat "$tmp/out"; }
done
for t in '__cudnn$convReorderFilter'; do
  printf 'HloModule m\nENTRY e {\n  a = f32[2,3]{1,0} parameter(0)\n  ROOT c = f32[2,3]{1,0} custom-call(a), custom_call_target="%s", backend_config={}\n}\n' "$t" >"$tmp/r.hlo"
  "$H" --explain-custom-calls "$tmp/r.hlo" >"$tmp/out" 2>&1
  grep -qF "  runs: NO: " "$tmp/out" && echo "ok: explain refuses $t" || { fail "explain refuses $t"; cat "$tmp/out"; }
done

# The hand-written XLA:GPU dump (samples/gpu/): every call runs, and the
# block's output matches numpy's (samples/gpu/goldens.py).
s=$srcdir/samples/gpu/transformer_block
if "$H" --expect "$s.expected.txt" --rtol 1e-5 --atol 1e-6 "$s.hlo" "$s.inputs.npz" >"$tmp/out" 2>&1; then
  echo "ok: transformer_block"
else
  fail "transformer_block"; cat "$tmp/out"
fi
"$H" --explain-custom-calls "$s.hlo" >"$tmp/out" 2>&1
n=$(grep -c "^  runs: yes$" "$tmp/out")
[ "$n" = 6 ] && echo "ok: transformer_block explain" || { fail "transformer_block explain: $n of 6 run"; cat "$tmp/out"; }
grep -qF 'fusion %triton_softmax (line 85), kind=kCustom, backend kind "__triton"' "$tmp/out" &&
  grep -qF '  runs: yes, evaluated from its fused computation %triton_softmax_computation (its tiling' "$tmp/out" &&
  echo "ok: explain kCustom fusion" || { fail "explain kCustom fusion"; cat "$tmp/out"; }

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
