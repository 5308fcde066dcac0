/* conv.c: cuDNN convolutions (__cudnn$convForward, convBackwardInput,
 * convBackwardFilter, convBiasActivationForward) as standard HLO.
 *
 * Every kind carries the forward convolution y = conv(x, w) on the
 * instruction: window, dim_labels (x_w->y) and feature_group_count
 * (gpu_conv_runner.cc, GetGpuConvConfig). CudnnConvBackendConfig gives
 * conv_result_scale, side_input_scale, activation_mode, leakyrelu_alpha.
 *   forward:        (x, w) -> y = scale * conv(x, w)
 *   backward input: (dy, w) -> dx, the adjoint of x -> conv(x, w): a
 *                   convolution of dy, dilated by the stride, with the
 *                   spatially reversed kernel whose feature roles swap
 *   backward filter:(x, dy) -> dw, the adjoint of w -> conv(x, w): a
 *                   convolution of x with dy as the kernel, batch and
 *                   feature roles swapped, the stride becoming the kernel
 *                   dilation
 *   bias-activation:(x, w, bias, [side]) -> act(scale * conv(x, w)
 *                   + side_input_scale * side + bias along y's feature dim)
 * Results (value, u8 scratch). Floats are computed in f32 (f64 for f64) and
 * rounded once. Grouped backward convolutions (feature_group_count G on the
 * call, the forward's groups): backward input runs a G-group transposed
 * convolution whose kernel takes w's output features per group as input
 * features and x's features (group-major) as output features; backward
 * filter pairs x's g-th feature group with dy's (batch_group_count G).
 *   forward graph:  (x, w, graph operands...) -> the graph's results: the
 *                   forward convolution, then serialized_graph's pointwise
 *                   ops (convgraph.c)
 * Integer (int8x4/int8x32) convolutions and the filter reorderings are
 * refused with the reason.
 * Not here: the gemm targets (gemm.c). */
#include "targets/gpu/gpu.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { CONV_FWD, CONV_BWD_INPUT, CONV_BWD_FILTER, CONV_BIAS_ACT, CONV_GRAPH };

/* stream_executor.dnn.ActivationMode. */
enum { ACT_NONE, ACT_SIGMOID, ACT_RELU, ACT_RELU6, ACT_RELUX, ACT_TANH, ACT_BANDPASS, ACT_ELU,
       ACT_LEAKY_RELU, ACT_GELU_EXACT, ACT_COUNT };
static const char *const act_names[ACT_COUNT] = {
    "kNone", "kSigmoid", "kRelu", "kRelu6", "kReluX", "kTanh", "kBandPass", "kElu",
    "kLeakyRelu", "kGeluExact"};

/* dim_labels "b01f_01io->b01f": the three label strings. */
typedef struct Labels { char in[GPU_MAX_RANK + 1], ker[GPU_MAX_RANK + 1], out[GPU_MAX_RANK + 1]; } Labels;

static int split_labels(GpuCall *c, Labels *l) {
  const char *s = c->dim_labels;
  if (!s) return hlt_gpu_fail(c, "needs dim_labels (the forward convolution's)");
  const char *u = strchr(s, '_'), *a = strstr(s, "->");
  size_t n0 = u ? (size_t)(u - s) : 0, n1 = u && a > u ? (size_t)(a - u - 1) : 0;
  size_t n2 = a ? strlen(a + 2) : 0;
  if (!u || !a || a < u || !n0 || n0 > GPU_MAX_RANK || !n1 || n1 > GPU_MAX_RANK || !n2 ||
      n2 > GPU_MAX_RANK || n0 != n1 || n0 != n2)
    return hlt_gpu_fail(c, "dim_labels=%s: expected IN_KERNEL->OUT of equal ranks", s);
  memcpy(l->in, s, n0); l->in[n0] = 0;
  memcpy(l->ker, u + 1, n1); l->ker[n1] = 0;
  memcpy(l->out, a + 2, n2); l->out[n2] = 0;
  return 0;
}

/* Copy of labels with characters a and b exchanged. */
static void swap2(char *dst, const char *src, char a, char b) {
  size_t i = 0;
  for (; src[i]; i++) dst[i] = src[i] == a ? b : src[i] == b ? a : src[i];
  dst[i] = 0;
}

/* Position of label ch (a letter, or spatial digit k as '0'+k) in s. */
static int pos(const char *s, char ch) {
  const char *p = strchr(s, ch);
  return p ? (int)(p - s) : -1;
}

/* ", window={...}" (with rhs_reversal when rev), or nothing for a
 * convolution without spatial dimensions: XLA prints no window then, and
 * "window={size= ...}" with empty lists does not parse. */
static void window_text(HlcText *t, int n, const int64_t *size, const int64_t *stride,
                        const int64_t *lo, const int64_t *hi, const int64_t *lhs_dil,
                        const int64_t *rhs_dil, bool rev) {
  static const char *const keys[] = {"size=", " stride=", " pad=", " lhs_dilate=", " rhs_dilate="};
  const int64_t *v[] = {size, stride, NULL, lhs_dil, rhs_dil};
  if (n == 0) return;
  hlc_text_printf(t, ", window={");
  for (int k = 0; k < 5; k++) {
    hlc_text_printf(t, "%s", keys[k]);
    for (int i = 0; i < n; i++) {
      if (k == 2)
        hlc_text_printf(t, "%s%lld_%lld", i ? "x" : "", (long long)lo[i], (long long)hi[i]);
      else
        hlc_text_printf(t, "%s%lld", i ? "x" : "", (long long)v[k][i]);
    }
  }
  if (rev) {
    hlc_text_printf(t, " rhs_reversal=");
    for (int i = 0; i < n; i++) hlc_text_printf(t, "%s1", i ? "x" : "");
  }
  hlc_text_printf(t, "}");
}

/* The activation of convBiasActivationForward on value x. */
static int activation(GpuMod *m, int act, double leaky_alpha, int x) {
  switch (act) {
    case ACT_SIGMOID:
      return hlt_gpu_unary(m, "logistic", x);
    case ACT_RELU:
      return hlt_gpu_binary(m, "maximum", x, hlt_gpu_splat(m, 0));
    case ACT_RELU6: {
      int lo = hlt_gpu_splat(m, 0), hi = hlt_gpu_splat(m, 6);
      int v = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "clamp(");
      hlc_text_printf(&m->t, "v%d, v%d, v%d)\n", lo, x, hi);
      return v;
  }
  case ACT_TANH:
    return hlt_gpu_unary(m, "tanh", x);
  case ACT_ELU: case ACT_LEAKY_RELU: {
    int zero = hlt_gpu_splat(m, 0);
    int neg = hlt_gpu_emit(m, HLO_PRED, m->dims, m->rank, "compare(");
    hlc_text_printf(&m->t, "v%d, v%d), direction=LT\n", x, zero);
    int low = act == ACT_ELU ? hlt_gpu_unary(m, "exponential-minus-one", x)
                             : hlt_gpu_binary(m, "multiply", x, hlt_gpu_splat(m, leaky_alpha));
    int v = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "select(");
    hlc_text_printf(&m->t, "v%d, v%d, v%d)\n", neg, low, x);
    return v;
  }
  case ACT_GELU_EXACT: {
    /* 0.5 x (1 + erf(x / sqrt 2)) */
    int e = hlt_gpu_unary(m, "erf", hlt_gpu_binary(m, "multiply", x, hlt_gpu_splat(m, M_SQRT1_2)));
    return hlt_gpu_binary(m, "multiply", hlt_gpu_binary(m, "multiply", x, hlt_gpu_splat(m, 0.5)),
                          hlt_gpu_binary(m, "add", e, hlt_gpu_splat(m, 1)));
  }
  default: return x;
  }
}

static bool same_shape(const GpuLeaf *a, const GpuLeaf *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

char *hlt_gpu_build_conv(GpuCall *c) {
  const char *t = c->target;
  int kind = !strcmp(t, "__cudnn$convForward") ? CONV_FWD
             : !strcmp(t, "__cudnn$convBackwardInput") ? CONV_BWD_INPUT
             : !strcmp(t, "__cudnn$convBackwardFilter") ? CONV_BWD_FILTER
             : !strcmp(t, "__cudnn$convForwardGraph") ? CONV_GRAPH : CONV_BIAS_ACT;
  json_t *g = hlt_gpu_config_section(c, "cudnn_conv_backend_config", "conv_result_scale");
  double scale, side_scale, leaky;
  int act;
  Labels l;
  if (!g ||
      hlt_gpu_json_double_req(c, g, "conv_result_scale",
                              "cudnn_conv_backend_config.conv_result_scale", &scale) ||
      hlt_gpu_json_double(c, g, "side_input_scale", "cudnn_conv_backend_config.side_input_scale", 0,
                          &side_scale) ||
      hlt_gpu_json_double(c, g, "leakyrelu_alpha", "cudnn_conv_backend_config.leakyrelu_alpha", 0,
                          &leaky) ||
      hlt_gpu_json_enum(c, g, "activation_mode", "cudnn_conv_backend_config.activation_mode",
                        act_names, ACT_COUNT, ACT_NONE, &act) ||
      split_labels(c, &l))
    return NULL;
  json_t *graph = json_object_get(g, "serialized_graph");
  if (json_is_true(json_object_get(g, "reordered_int8_nchw_vect"))) {
    hlt_gpu_fail(c,
                 "backend_config field cudnn_conv_backend_config.reordered_int8_nchw_vect: "
                 "reordered int8 filters are not supported");
    return NULL;
  }
  if ((kind == CONV_GRAPH) != (graph != NULL) || (graph && !json_is_string(graph))) {
    hlt_gpu_fail(c, kind == CONV_GRAPH
                        ? "backend_config: missing required field "
                          "cudnn_conv_backend_config.serialized_graph (a string)"
                        : "backend_config field cudnn_conv_backend_config."
                          "serialized_graph: only __cudnn$convForwardGraph takes a graph");
    return NULL;
  }
  /* gpu_conv_runner.cc RunGpuConvGraph refuses a scaled convolution. */
  if (kind == CONV_GRAPH && scale != 1) {
    hlt_gpu_fail(c,
                 "backend_config field cudnn_conv_backend_config.conv_result_scale is %g: a "
                 "graph convolution takes 1 (its scales are graph ops)",
                 scale);
    return NULL;
  }
  if (kind != CONV_BIAS_ACT && act != ACT_NONE) {
    hlt_gpu_fail(c,
                 "backend_config field cudnn_conv_backend_config.activation_mode: %s takes no "
                 "activation (got %s)",
                 t, act_names[act]);
    return NULL;
  }
  if (act == ACT_RELUX || act == ACT_BANDPASS) {
    hlt_gpu_fail(c,
                 "backend_config field cudnn_conv_backend_config.activation_mode: %s is not "
                 "supported (its parameters are not in the config)",
                 act_names[act]);
    return NULL;
  }
  int want_ops = kind == CONV_BIAS_ACT ? (c->nops == 4 ? 4 : 3) : kind == CONV_GRAPH ? c->nops : 2;
  if (c->nops < 2 || c->nops != want_ops || c->nres < 1 || (c->nres > 2 && kind != CONV_GRAPH)) {
    hlt_gpu_fail(c, "has %d operands and %d results; %s takes %s and gives (value, u8 scratch)",
                 c->nops, c->nres, t,
                 kind == CONV_BIAS_ACT     ? "(x, w, bias[, side_input])"
                 : kind == CONV_BWD_INPUT  ? "(dy, w)"
                 : kind == CONV_BWD_FILTER ? "(x, dy)"
                                           : "(x, w)");
    return NULL;
  }
  if (kind == CONV_BIAS_ACT && c->nops == 3 && side_scale != 0) {
    hlt_gpu_fail(c,
                 "backend_config field cudnn_conv_backend_config.side_input_scale is %g but there "
                 "is no side input operand",
                 side_scale);
    return NULL;
  }
  const GpuLeaf *o0 = &c->ops[0], *o1 = &c->ops[1], *r = &c->res[0];
  if (!hlc_dtype_is_float(o0->dtype) || !hlc_dtype_is_float(o1->dtype) ||
      !hlc_dtype_is_float(r->dtype)) {
    hlt_gpu_fail(c, "integer (int8) cuDNN convolutions are not supported; operands %s, %s",
                 hlc_dtype_name(o0->dtype), hlc_dtype_name(o1->dtype));
    return NULL;
  }
  int ns = (int)strlen(l.in) - 2;
  if (c->wrank != ns) {
    hlt_gpu_fail(c, "window has %d dimensions; dim_labels=%s has %d spatial ones", c->wrank,
                 c->dim_labels, ns);
    return NULL;
  }
  bool any_rev = false, all_rev = true;
  for (int i = 0; i < ns; i++) {
    any_rev |= c->wrev[i] != 0;
    all_rev &= c->wrev[i] != 0;
    if (c->wlhs_dil[i] != 1 && kind != CONV_FWD && kind != CONV_BIAS_ACT) {
      hlt_gpu_fail(c, "window: lhs_dilate must be 1 for %s", t);
      return NULL;
    }
  }
  if (any_rev && !all_rev) {
    hlt_gpu_fail(c, "window: rhs_reversal must be all or none (cuDNN)");
    return NULL;
  }
  int64_t G = c->feature_group_count;
  if ((kind == CONV_BWD_INPUT || kind == CONV_BWD_FILTER) && G != 1) {
    /* The forward conv's groups: x's features and w's output features
     * split into G groups (w's input-feature dimension is one group's). */
    const GpuLeaf *xl0 = kind == CONV_BWD_INPUT ? r : o0, *wl0 = kind == CONV_BWD_INPUT ? o1 : r;
    int pf = pos(l.in, 'f'), po = pos(l.ker, 'o'), pi = pos(l.ker, 'i');
    if (G < 1 || pf < 0 || po < 0 || pi < 0 || pf >= xl0->rank || po >= wl0->rank ||
        pi >= wl0->rank || wl0->dims[po] % G || xl0->dims[pf] != wl0->dims[pi] * G) {
      hlt_gpu_fail(c,
                   "feature_group_count=%lld does not fit the forward convolution: x has %lld "
                   "features, w %lld output and %lld input features (x's features must be G times "
                   "w's input features, and G must divide w's output features)",
                   (long long)G, (long long)(pf >= 0 && pf < xl0->rank ? xl0->dims[pf] : -1),
                   (long long)(po >= 0 && po < wl0->rank ? wl0->dims[po] : -1),
                   (long long)(pi >= 0 && pi < wl0->rank ? wl0->dims[pi] : -1));
      return NULL;
    }
  }
  /* The tensor shaped like the forward result y, and x's spatial sizes:
   * the window must map one onto the other. */
  const GpuLeaf *yl = kind == CONV_BWD_INPUT ? o0 : kind == CONV_BWD_FILTER ? o1 : r;
  const GpuLeaf *xl = kind == CONV_BWD_INPUT ? r : o0;
  for (int i = 0; i < ns; i++) {
    int px = pos(l.in, (char)('0' + i)), py = pos(l.out, (char)('0' + i));
    if (px < 0 || py < 0 || px >= xl->rank || py >= yl->rank) {
      hlt_gpu_fail(c, "dim_labels=%s: spatial dimension %d is missing", c->dim_labels, i);
      return NULL;
    }
    int64_t in = (xl->dims[px] - 1) * c->wlhs_dil[i] + 1 + c->wpad_lo[i] + c->wpad_hi[i];
    int64_t keff = (c->wsize[i] - 1) * c->wrhs_dil[i] + 1;
    int64_t o = in < keff ? 0 : (in - keff) / c->wstride[i] + 1;
    if (o != yl->dims[py]) {
      hlt_gpu_fail(c,
                   "window dimension %d (size %lld, stride %lld, pad %lld_%lld) maps x's %lld "
                   "elements to %lld, but the %s has %lld",
                   i, (long long)c->wsize[i], (long long)c->wstride[i], (long long)c->wpad_lo[i],
                   (long long)c->wpad_hi[i], (long long)xl->dims[px], (long long)o,
                   kind == CONV_BWD_INPUT || kind == CONV_BWD_FILTER ? "dy operand" : "result",
                   (long long)yl->dims[py]);
      return NULL;
    }
  }
  GpuMod m = {0};
  m.ct = (o0->dtype == HLO_F64 || o1->dtype == HLO_F64 || r->dtype == HLO_F64) ? HLO_F64 : HLO_F32;
  m.rank = r->rank;
  memcpy(m.dims, r->dims, sizeof m.dims);
  hlc_text_printf(&m.t, "HloModule gpu_equivalent\n\n");
  if (kind == CONV_GRAPH)   /* for amax */
    hlc_text_printf(&m.t,
                 "max {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
                 "  ROOT r = %s[] maximum(a, b)\n}\n\n",
                 hlc_dtype_name(m.ct), hlc_dtype_name(m.ct), hlc_dtype_name(m.ct));
  hlc_text_printf(&m.t, "ENTRY e {\n");
  int v0 = hlt_gpu_operand(&m, o0, 0, GPU_ROUND_NONE),
      v1 = hlt_gpu_operand(&m, o1, 1, GPU_ROUND_NONE);
  int64_t lo[GPU_MAX_RANK] = {0}, hi[GPU_MAX_RANK] = {0}, ones[GPU_MAX_RANK], size[GPU_MAX_RANK] = {0};
  for (int i = 0; i < ns; i++) ones[i] = 1;
  int y;
  if (kind == CONV_FWD || kind == CONV_BIAS_ACT || kind == CONV_GRAPH) {
    y = hlt_gpu_emit(&m, m.ct, r->dims, r->rank, "convolution(");
    hlc_text_printf(&m.t, "v%d, v%d)", v0, v1);
    window_text(&m.t, ns, c->wsize, c->wstride, c->wpad_lo, c->wpad_hi, c->wlhs_dil, c->wrhs_dil,
                any_rev);
    hlc_text_printf(&m.t, ", dim_labels=%s, feature_group_count=%lld\n", c->dim_labels,
                 (long long)c->feature_group_count);
  } else if (kind == CONV_BWD_INPUT) {
    /* dx = conv(dy dilated by the stride, reversed w with in/out swapped). */
    const GpuLeaf *w = o1;
    int64_t rdims[GPU_MAX_RANK];
    int nr = 0;
    for (int i = 0; i < ns; i++) rdims[nr++] = pos(l.ker, (char)('0' + i));
    int wr = v1;
    const int64_t *wdims = w->dims;
    int64_t cd[GPU_MAX_RANK];
    char gker[GPU_MAX_RANK + 1];
    if (G != 1) {
      /* Grouped: the transposed convolution has G groups too; its kernel
       * takes one group's output features of w as input features and all of
       * x's features (group-major) as output features: w in canonical order
       * [O, I, spatial] -> [G, O/G, I, ...] -> [O/G, G, I, ...] ->
       * [O/G, G*I, ...] with labels "io01..". */
      int64_t perm[GPU_MAX_RANK], d5[GPU_MAX_RANK + 1];
      int64_t O = w->dims[pos(l.ker, 'o')], I = w->dims[pos(l.ker, 'i')];
      perm[0] = pos(l.ker, 'o');
      perm[1] = pos(l.ker, 'i');
      for (int i = 0; i < ns; i++) perm[2 + i] = rdims[i];
      for (int i = 0; i < w->rank; i++) cd[i] = w->dims[perm[i]];
      int t0 = hlt_gpu_emit(&m, m.ct, cd, w->rank, "transpose(");
      hlc_text_printf(&m.t, "v%d), dimensions=", v1);
      hlt_gpu_text_list(&m.t, perm, w->rank);
      hlc_text_printf(&m.t, "\n");
      d5[0] = G; d5[1] = O / G;
      for (int i = 1; i < w->rank; i++) d5[i + 1] = cd[i];
      int t1 = hlt_gpu_emit(&m, m.ct, d5, w->rank + 1, "reshape(");
      hlc_text_printf(&m.t, "v%d)\n", t0);
      int64_t sw = d5[0], p5[GPU_MAX_RANK + 1];
      d5[0] = d5[1]; d5[1] = sw;
      for (int i = 0; i <= w->rank; i++) p5[i] = i;
      p5[0] = 1; p5[1] = 0;
      int t2 = hlt_gpu_emit(&m, m.ct, d5, w->rank + 1, "transpose(");
      hlc_text_printf(&m.t, "v%d), dimensions=", t1);
      hlt_gpu_text_list(&m.t, p5, w->rank + 1);
      hlc_text_printf(&m.t, "\n");
      cd[0] = O / G; cd[1] = G * I;
      wr = hlt_gpu_emit(&m, m.ct, cd, w->rank, "reshape(");
      hlc_text_printf(&m.t, "v%d)\n", t2);
      wdims = cd;
      gker[0] = 'i'; gker[1] = 'o';
      for (int i = 0; i < ns; i++) { gker[2 + i] = (char)('0' + i); rdims[i] = 2 + i; }
      gker[2 + ns] = 0;
    }
    if (!any_rev) {
      int src = wr;
      wr = hlt_gpu_emit(&m, m.ct, wdims, w->rank, "reverse(");
      hlc_text_printf(&m.t, "v%d), dimensions=", src);
      hlt_gpu_text_list(&m.t, rdims, nr);
      hlc_text_printf(&m.t, "\n");
    }
    for (int i = 0; i < ns; i++) {
      int64_t I = r->dims[pos(l.in, (char)('0' + i))], O = o0->dims[pos(l.out, (char)('0' + i))];
      int64_t keff = (c->wsize[i] - 1) * c->wrhs_dil[i] + 1;
      lo[i] = keff - 1 - c->wpad_lo[i];
      hi[i] = I - 1 - (O - 1) * c->wstride[i] + c->wpad_lo[i];
      size[i] = c->wsize[i];
    }
    char ker[GPU_MAX_RANK + 1];
    if (G != 1) memcpy(ker, gker, sizeof ker);
    else swap2(ker, l.ker, 'i', 'o');
    y = hlt_gpu_emit(&m, m.ct, r->dims, r->rank, "convolution(");
    hlc_text_printf(&m.t, "v%d, v%d)", v0, wr);
    window_text(&m.t, ns, size, ones, lo, hi, c->wstride, c->wrhs_dil, false);
    hlc_text_printf(&m.t, ", dim_labels=%s_%s->%s", l.out, ker, l.in);
    if (G != 1) hlc_text_printf(&m.t, ", feature_group_count=%lld", (long long)G);
    hlc_text_printf(&m.t, "\n");
  } else {
    /* dw = conv(x with batch/feature swapped, dy as the kernel). */
    char in[GPU_MAX_RANK + 1], ker[GPU_MAX_RANK + 1], out[GPU_MAX_RANK + 1];
    swap2(in, l.in, 'b', 'f');
    size_t k = 0;
    for (; l.out[k]; k++) ker[k] = l.out[k] == 'b' ? 'i' : l.out[k] == 'f' ? 'o' : l.out[k];
    ker[k] = 0;
    for (k = 0; l.ker[k]; k++) out[k] = l.ker[k] == 'i' ? 'b' : l.ker[k] == 'o' ? 'f' : l.ker[k];
    out[k] = 0;
    for (int i = 0; i < ns; i++) {
      int64_t I = o0->dims[pos(l.in, (char)('0' + i))], O = o1->dims[pos(l.out, (char)('0' + i))];
      size[i] = O;
      lo[i] = c->wpad_lo[i];
      hi[i] = (c->wsize[i] - 1) * c->wrhs_dil[i] + (O - 1) * c->wstride[i] + 1 - I - c->wpad_lo[i];
    }
    y = hlt_gpu_emit(&m, m.ct, r->dims, r->rank, "convolution(");
    hlc_text_printf(&m.t, "v%d, v%d)", v0, v1);
    window_text(&m.t, ns, size, c->wrhs_dil, lo, hi, ones, c->wstride, false);
    hlc_text_printf(&m.t, ", dim_labels=%s_%s->%s", in, ker, out);
    /* Grouped: x's features (the batch here) in G groups, group g paired
     * with dy's g-th group of features. */
    if (G != 1) hlc_text_printf(&m.t, ", batch_group_count=%lld", (long long)G);
    hlc_text_printf(&m.t, "\n");
    if (any_rev) {
      int64_t rdims[GPU_MAX_RANK];
      for (int i = 0; i < ns; i++) rdims[i] = pos(l.ker, (char)('0' + i));
      int w = hlt_gpu_emit(&m, m.ct, r->dims, r->rank, "reverse(");
      hlc_text_printf(&m.t, "v%d), dimensions=", y);
      hlt_gpu_text_list(&m.t, rdims, ns);
      hlc_text_printf(&m.t, "\n");
      y = w;
    }
  }
  if (scale != 1) y = hlt_gpu_binary(&m, "multiply", y, hlt_gpu_splat(&m, scale));
  if (kind == CONV_BIAS_ACT) {
    const GpuLeaf *bias = &c->ops[2];
    int fdim = pos(l.out, 'f');
    if (bias->rank != 1 || bias->dims[0] != r->dims[fdim]) {
      hlt_gpu_fail(c, "operand 2 (bias) must be 1-D of length %lld, the output features",
                   (long long)r->dims[fdim]);
      free(m.t.p);
      return NULL;
    }
    if (c->nops == 4) {
      if (!same_shape(&c->ops[3], r)) {
        hlt_gpu_fail(c, "operand 3 (side input) must have the result's shape");
        free(m.t.p);
        return NULL;
      }
      int side = hlt_gpu_operand(&m, &c->ops[3], 3, GPU_ROUND_NONE);
      if (side_scale != 1)
        side = hlt_gpu_binary(&m, "multiply", side, hlt_gpu_splat(&m, side_scale));
      y = hlt_gpu_binary(&m, "add", y, side);
    }
    int vb = hlt_gpu_operand(&m, bias, 2, GPU_ROUND_NONE);
    int bb = hlt_gpu_emit(&m, m.ct, m.dims, m.rank, "broadcast(");
    hlc_text_printf(&m.t, "v%d), dimensions={%d}\n", vb, fdim);
    y = activation(&m, act, leaky, hlt_gpu_binary(&m, "add", y, bb));
  }
  if (kind == CONV_GRAPH) {
    int outs[GPU_MAX_LEAVES], n;
    if (hlt_gpu_conv_graph(c, &m, json_string_value(graph), y, outs, &n)) {
      free(m.t.p);
      return NULL;
    }
    if (hlt_gpu_finish(&m, c->res, outs, n)) {
      free(m.t.p);
      hlt_gpu_fail(c, "out of memory");
      return NULL;
    }
    return m.t.p;
  }
  if (hlt_gpu_finish(&m, c->res, &y, 1)) {
    free(m.t.p);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.p;
}
