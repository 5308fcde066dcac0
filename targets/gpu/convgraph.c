/* convgraph.c: the pointwise graph of __cudnn$convForwardGraph.
 *
 * XLA's CudnnFusedConvRewriter (F8GraphConv, cudnn_fused_conv_rewriter.cc)
 * fuses the ops after an f8 convolution into
 * cudnn_conv_backend_config.serialized_graph,
 *   "UID:[type]conv();UID:[type]op(in-graph operand UIDs);..."
 * and cuda_dnn.cc (GetGenericCudnnOperationGraph) runs it:
 *  - the first op is the convolution (accumulated in f32), the only one;
 *  - each later op reads the ops whose UIDs it lists; scale and invscale
 *    (x * s, x / s) with one listed operand take the next external scalar
 *    operand, add/min/max with one listed operand the next external tensor
 *    operand (shaped like the convolution's result); with two listed
 *    operands they combine those; relu is max(x, 0), elu x > 0 ? x :
 *    expm1(x), amax the max of |x| (a scalar);
 *  - the call's operands are (x, w, the external operands in graph order);
 *    its results are the ops no later op reads, in graph order, then the
 *    u8 scratch (gpu_conv_runner.cc: operands, then output and aux bufs);
 *  - pointwise math is f32; each op's result is stored in its [type]. An
 *    f8 type saturates to the type's finite range: the rewriter only fuses
 *    a convert that follows a clamp to that range (IsSaturatingCastToF8).
 * Not here: the convolution itself (conv.c). */
#include "targets/gpu/gpu.h"
#include <stdlib.h>
#include <string.h>

enum { GRAPH_MAX_OPS = 64 };

typedef struct GraphOp {
  int64_t uid;
  HloDtype type;
  char name[16];
  int64_t in[2];        /* listed operand UIDs */
  int nin;
  int seq_in[2];        /* their positions in the graph */
  bool is_virtual;      /* read by a later op */
  int value;            /* the module value computed for it */
} GraphOp;

static int graph_fail(GpuCall *c, const char *g, size_t at, const char *what) {
  return hlt_gpu_fail(c,
                      "backend_config field cudnn_conv_backend_config.serialized_graph: %s at "
                      "offset %zu of \"%s\" (expected UID:[type]op(UIDs); items)",
                      what, at, g);
}

static int parse_graph(GpuCall *c, const char *g, GraphOp *ops, int *nops) {
  size_t p = 0, n = strlen(g);
  int k = 0;
  while (p < n) {
    if (k == GRAPH_MAX_OPS) return graph_fail(c, g, p, "too many ops");
    GraphOp *o = &ops[k];
    memset(o, 0, sizeof *o);
    char *end;
    o->uid = strtoll(g + p, &end, 10);
    if (end == g + p || *end != ':' || end[1] != '[') return graph_fail(c, g, p, "bad UID");
    const char *t = end + 2, *te = strchr(t, ']');
    if (!te) return graph_fail(c, g, (size_t)(t - g), "unterminated [type]");
    o->type = hlc_dtype_from_name(t, (size_t)(te - t));
    /* cuda_dnn.cc PrimitiveTypeStringToDnnType takes these five. */
    if (o->type != HLO_F8E4M3FN && o->type != HLO_F8E5M2 && o->type != HLO_BF16 &&
        o->type != HLO_F16 && o->type != HLO_F32)
      return graph_fail(c, g, (size_t)(t - g), "type is not f8e4m3fn, f8e5m2, bf16, f16 or f32");
    const char *nm = te + 1, *lp = strchr(nm, '(');
    if (!lp || lp == nm || (size_t)(lp - nm) >= sizeof o->name)
      return graph_fail(c, g, (size_t)(nm - g), "bad op name");
    memcpy(o->name, nm, (size_t)(lp - nm));
    const char *q = lp + 1;
    while (*q != ')') {
      if (o->nin == 2) return graph_fail(c, g, (size_t)(q - g), "more than two operand UIDs");
      int64_t u = strtoll(q, &end, 10);
      if (end == q) return graph_fail(c, g, (size_t)(q - g), "bad operand UID");
      int j = 0;
      while (j < k && ops[j].uid != u) j++;
      if (j == k) return graph_fail(c, g, (size_t)(q - g), "operand UID names no earlier op");
      if (!strcmp(ops[j].name, "amax"))
        return graph_fail(c, g, (size_t)(q - g), "an amax result (a scalar output) cannot be an operand");
      ops[j].is_virtual = true;
      o->seq_in[o->nin] = j;
      o->in[o->nin++] = u;
      q = end;
      if (*q == ',') q++;
      else if (*q != ')') return graph_fail(c, g, (size_t)(q - g), "expected ',' or ')'");
    }
    if (q[1] != ';') return graph_fail(c, g, (size_t)(q + 1 - g), "expected ';'");
    bool conv = !strcmp(o->name, "conv");
    if (conv != (k == 0)) return graph_fail(c, g, p, "the convolution must be the first op and the only one");
    if (conv && o->nin) return graph_fail(c, g, p, "conv() takes no operands");
    if (!conv && !o->nin) return graph_fail(c, g, p, "a pointwise op needs an operand UID");
    static const char *const known[] = {"conv", "add", "min", "max", "elu", "relu", "scale",
                                        "invscale", "amax"};
    bool ok = false;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) ok |= !strcmp(o->name, known[i]);
    if (!ok) return graph_fail(c, g, (size_t)(nm - g), "unknown op (conv, add, min, max, elu, relu, scale, invscale, amax are known)");
    bool unary = !strcmp(o->name, "elu") || !strcmp(o->name, "relu") || !strcmp(o->name, "amax");
    if (unary && o->nin != 1) return graph_fail(c, g, p, "elu, relu and amax take one operand");
    p = (size_t)(q + 2 - g);
    k++;
  }
  if (!k) return graph_fail(c, g, 0, "empty graph");
  *nops = k;
  return 0;
}

/* Store v as type t (f8: saturating) and widen it back to the compute type. */
static int store_as(GpuMod *m, HloDtype t, int v) {
  if (t == m->ct) return v;
  if (t == HLO_F8E4M3FN || t == HLO_F8E5M2) {
    double mx = t == HLO_F8E4M3FN ? 448 : 57344;
    int lo = hlt_gpu_splat(m, -mx), hi = hlt_gpu_splat(m, mx);
    int w = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "clamp(");
    hlc_text_printf(&m->t, "v%d, v%d, v%d)\n", lo, v, hi);
    v = w;
  }
  int n = hlt_gpu_emit(m, t, m->dims, m->rank, "convert(");
  hlc_text_printf(&m->t, "v%d)\n", v);
  int w = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "convert(");
  hlc_text_printf(&m->t, "v%d)\n", n);
  return w;
}

int hlt_gpu_conv_graph(GpuCall *c, GpuMod *m, const char *graph, int y, int *outs, int *nouts) {
  GraphOp ops[GRAPH_MAX_OPS];
  int n = 0;
  if (parse_graph(c, graph, ops, &n)) return -1;
  int next_operand = 2, nres = 0;
  for (int k = 0; k < n; k++) {
    GraphOp *o = &ops[k];
    int a = o->nin ? ops[o->seq_in[0]].value : y, v;
    if (k == 0) v = y;
    else if (!strcmp(o->name, "relu"))
      v = hlt_gpu_binary(m, "maximum", a, hlt_gpu_splat(m, 0));
    else if (!strcmp(o->name, "elu")) {
      int zero = hlt_gpu_splat(m, 0);
      int pos = hlt_gpu_emit(m, HLO_PRED, m->dims, m->rank, "compare(");
      hlc_text_printf(&m->t, "v%d, v%d), direction=GT\n", a, zero);
      int e = hlt_gpu_unary(m, "exponential-minus-one", a);
      v = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "select(");
      hlc_text_printf(&m->t, "v%d, v%d, v%d)\n", pos, a, e);
    } else if (!strcmp(o->name, "amax")) {
      int ab = hlt_gpu_unary(m, "abs", a);
      int z = hlt_gpu_emit(m, m->ct, NULL, 0, "constant(0)\n");
      int64_t all[GPU_MAX_RANK];
      for (int i = 0; i < m->rank; i++) all[i] = i;
      v = hlt_gpu_emit(m, m->ct, NULL, 0, "reduce(");
      hlc_text_printf(&m->t, "v%d, v%d), dimensions=", ab, z);
      hlt_gpu_text_list(&m->t, all, m->rank);
      hlc_text_printf(&m->t, ", to_apply=max\n");
    } else {
      bool scalar = !strcmp(o->name, "scale") || !strcmp(o->name, "invscale");
      const char *op = !strcmp(o->name, "add") ? "add" : !strcmp(o->name, "min") ? "minimum"
                       : !strcmp(o->name, "max") ? "maximum"
                       : !strcmp(o->name, "scale") ? "multiply" : "divide";
      int b;
      if (o->nin == 2) b = ops[o->seq_in[1]].value;
      else {
        if (next_operand >= c->nops)
          return hlt_gpu_fail(c,
                              "backend_config field cudnn_conv_backend_config.serialized_graph: "
                              "op %lld (%s) needs operand %d, but the call has %d operands",
                              (long long)o->uid, o->name, next_operand, c->nops);
        const GpuLeaf *l = &c->ops[next_operand];
        bool ok = scalar ? l->rank == 0 : l->rank == m->rank;
        for (int i = 0; ok && !scalar && i < m->rank; i++) ok = l->dims[i] == m->dims[i];
        if (!ok) {
          HlcText s = {0};
          hlt_gpu_text_shape(&s, l->dtype, l->dims, l->rank);
          hlt_gpu_fail(c,
                       "operand %d (read by op %lld, %s, of serialized_graph) is %s; it must be "
                       "%s",
                       next_operand, (long long)o->uid, o->name, s.p ? s.p : "?",
                       scalar ? "a scalar" : "shaped like the convolution's result");
          free(s.p);
          return -1;
        }
        int p = hlt_gpu_operand(m, l, next_operand++, GPU_ROUND_NONE);
        if (scalar) {
          b = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "broadcast(");
          hlc_text_printf(&m->t, "v%d), dimensions={}\n", p);
        } else {
          b = p;
        }
      }
      v = hlt_gpu_binary(m, op, a, b);
    }
    bool is_amax = !strcmp(o->name, "amax");
    if (!is_amax) v = store_as(m, o->type, v);
    else if (o->type != HLO_F32)
      return hlt_gpu_fail(c,
                          "backend_config field cudnn_conv_backend_config.serialized_graph: "
                          "amax op %lld must be [f32]",
                          (long long)o->uid);
    o->value = v;
    if (!o->is_virtual) {
      if (nres == GPU_MAX_LEAVES) return hlt_gpu_fail(c, "too many graph results");
      outs[nres++] = v;
      /* The result leaf must be the op's tensor (or scalar) in its type
       * (too few results are reported below). */
      if (nres > c->nres) continue;
      const GpuLeaf *r = &c->res[nres - 1];
      bool shape_ok = is_amax ? r->rank == 0 : r->rank == m->rank;
      for (int i = 0; shape_ok && !is_amax && i < m->rank; i++) shape_ok = r->dims[i] == m->dims[i];
      if (!shape_ok || r->dtype != o->type) {
        HlcText s = {0}, w = {0};
        hlt_gpu_text_shape(&s, r->dtype, r->dims, r->rank);
        hlt_gpu_text_shape(&w, o->type, m->dims, is_amax ? 0 : m->rank);
        hlt_gpu_fail(c, "result %d is %s, but serialized_graph op %lld (%s) gives %s", nres - 1,
                     s.p ? s.p : "?", (long long)o->uid, o->name, w.p ? w.p : "?");
        free(s.p);
        free(w.p);
        return -1;
      }
    }
  }
  if (next_operand != c->nops)
    return hlt_gpu_fail(c,
                        "has %d operands; (x, w) and serialized_graph's external operands make %d",
                        c->nops, next_operand);
  if (c->nres != nres && c->nres != nres + 1)
    return hlt_gpu_fail(c,
                        "has %d results; serialized_graph gives %d (the ops no other op reads) and "
                        "an optional u8 scratch",
                        c->nres, nres);
  *nouts = nres;
  return 0;
}
