/* ops_collective.c: StableHLO's collectives as XLA's translation writes them
 * (xla/hlo/translate/mhlo_to_hlo): all_reduce, all_gather, reduce_scatter,
 * all_to_all, collective_permute, collective_broadcast. replica_groups and
 * source_target_pairs keep their order (-1 pads a short group and is
 * dropped); a channel_handle with handle > 0 becomes channel_id (no
 * channel: cross-replica; with one: cross-replica-and-partition, or
 * flattened ids with use_global_device_ids), as the spec's modes say.
 */
#include <string.h>
#include "stablehlo/lower.h"
#include "stablehlo/ops.h"
#include "stablehlo/mlir.h"

static bool is(const ShOp *op, const char *w) {
  size_t n = strlen(w);
  return op->nlen == n && memcmp(op->name, w, n) == 0;
}

/* dense<[[a, b], [c, d]]> as "{{a,b},{c,d}}" (-1 entries dropped). */
static const char *groups_text(Lower *C, ShOp *op, const char *key, bool required) {
  ShAttr *a = sh_attr(op, key);
  if (!a || !a->val) {
    if (required) sh_fail(C, op->node, "%.*s: missing %s", (int)op->nlen, op->name, key);
    return NULL;
  }
  if (!sh_is(C, a->val, SH_BAREID, "dense") || !a->val->next || a->val->next->kind != SHN_ANGLE)
    sh_fail(C, a->val, "%.*s: %s must be dense<[[...], ...]>", (int)op->nlen, op->name, key);
  ShNode *outer = a->val->next->kids;
  HlcText b = {0};
  hlc_text_puts(&b, "{");
  int ng = 0;
  if (outer && outer->kind == SHN_BRACKET) {
    for (ShNode *g = outer->kids; g; g = g->next) {
      if (sh_is(C, g, SH_COMMA, NULL)) continue;
      if (g->kind != SHN_BRACKET) {
        hlc_text_free(&b);
        sh_fail(C, g, "%.*s: %s must be a 2-D list of device ids", (int)op->nlen, op->name, key);
      }
      int64_t v[4096];
      int n;
      sh_int_list(C, g, v, 4096, &n);
      hlc_text_puts(&b, ng++ ? ",{" : "{");
      int k = 0;
      for (int i = 0; i < n; i++)
        if (v[i] >= 0) hlc_text_printf(&b, "%s%lld", k++ ? "," : "", (long long)v[i]);
      hlc_text_puts(&b, "}");
    }
  }
  hlc_text_puts(&b, "}");
  if (b.oom) sh_fail_off(C, 0, "out of memory");
  const char *s = sh_strdup(C, b.p, b.n);
  hlc_text_free(&b);
  return s;
}

/* ", replica_groups=..., channel_id=N, use_global_device_ids=true" */
static const char *common_attrs(Lower *C, ShOp *op, bool groups) {
  const char *g = groups ? groups_text(C, op, "replica_groups", false) : NULL;
  int64_t h[1] = {0};
  ShAttr *ch = sh_attr(op, "channel_handle");
  if (ch && sh_struct_ints(C, ch, "handle", h, 1) != 1)
    sh_fail(C, ch->val ? ch->val : op->node, "%.*s: channel_handle needs handle = N", (int)op->nlen, op->name);
  bool global = sh_attr_bool(C, op, "use_global_device_ids", false);
  return sh_fmt(C, "%s%s%s%s", g ? ", replica_groups=" : "", g ? g : "",
                h[0] > 0 ? sh_fmt(C, ", channel_id=%lld", (long long)h[0]) : "",
                global ? ", use_global_device_ids=true" : "");
}

/* The op as one instruction (a tuple of its results when it has several). */
static const char *emit_all(Lower *C, ShOp *op, ShType **types, const char *opcode, const char *attrs) {
  if (op->noperands < 1) sh_fail(C, op->node, "%.*s: expected operands", (int)op->nlen, op->name);
  if (op->noperands == 1) return sh_emit(C, types[0], opcode, sh_operand_list(C, op, 0, 1), attrs, op->metadata);
  ShType *tt = sh_tuple_type(C, types, op->noperands);
  return sh_emit(C, tt, opcode, sh_operand_list(C, op, 0, op->noperands), attrs, op->metadata);
}

static void bind_all(Lower *C, ShOp *op, const char *v) {
  if (op->nresults != op->noperands)
    sh_fail(C, op->node, "%.*s: %d results for %d operands", (int)op->nlen, op->name, op->nresults, op->noperands);
  if (op->nresults == 1) sh_bind_result(C, op, 0, v, op->results[0]);
  else sh_bind_tuple_results(C, op, v, sh_tuple_type(C, op->results, op->nresults));
}

static const char *reducer(Lower *C, ShOp *op) {
  if (op->nregions != 1) sh_fail(C, op->node, "%.*s: expected one region", (int)op->nlen, op->name);
  return sh_region_lower(C, op->regions[0], "region", SHR_PARAMS, NULL, NULL, 0, NULL, NULL);
}

static int64_t dim_attr(Lower *C, ShOp *op, const char *key) {
  int64_t d = sh_attr_int(C, op, key, -1);
  int rank = op->operands[0]->type->rank;
  if (d < 0 || d >= rank) sh_fail(C, op->node, "%.*s: %s %lld out of range for rank %d", (int)op->nlen, op->name,
                                  key, (long long)d, rank);
  return d;
}

/* all_to_all with split_dimension s != concat_dimension c: an HLO all-to-all
 * along s (block j of the result came from peer j), then block j moved
 * from s to the front of c: reshape s into (k, n/k), transpose k before c,
 * reshape into the result (k outer in c, as concatenation in peer order). */
static const char *regroup(Lower *C, const char *v, const ShType *in, const ShType *out, int64_t s, int64_t c,
                           int64_t k) {
  ShType *split = shx_like(C, in, in->dt);
  split->rank = in->rank + 1;
  for (int i = 0, o = 0; i < in->rank; i++) {
    if (i == s) { split->dims[o++] = k; split->dims[o++] = in->dims[i] / k; }
    else split->dims[o++] = in->dims[i];
  }
  const char *r = sh_emit(C, split, "reshape", v, NULL, NULL);
  int64_t cpos = c < s ? c : c + 1, perm[SH_MAX_RANK + 1];
  int np = 0;
  for (int i = 0; i < split->rank; i++) {
    if (i == s) continue;
    if (i == cpos) perm[np++] = s;
    perm[np++] = i;
  }
  ShType *moved = shx_like(C, split, in->dt);
  for (int i = 0; i < np; i++) moved->dims[i] = split->dims[perm[i]];
  const char *t = sh_emit(C, moved, "transpose", r, sh_fmt(C, ", dimensions=%s", sh_ints_text(C, perm, np)), NULL);
  return sh_emit(C, out, "reshape", t, NULL, NULL);
}

/* Variadic all_to_all exchanges each operand alike: one array all-to-all
 * per operand (XLA's tuple form moves the same blocks). */
static int op_all_to_all(Lower *C, ShOp *op) {
  if (op->noperands < 1) sh_fail(C, op->node, "stablehlo.all_to_all: expected operands");
  if (op->nresults != op->noperands) sh_fail(C, op->node, "stablehlo.all_to_all: one result per operand expected");
  int64_t s = dim_attr(C, op, "split_dimension"), c = dim_attr(C, op, "concat_dimension");
  int64_t k = sh_attr_int(C, op, "split_count", -1);
  if (k <= 0) sh_fail(C, op->node, "stablehlo.all_to_all: missing split_count");
  const char *attrs = sh_fmt(C, "%s, dimensions={%lld}", common_attrs(C, op, true), (long long)s);
  for (int i = 0; i < op->noperands; i++) {
    ShType *in = op->operands[i]->type;
    if (in->dims[s] % k != 0)
      sh_fail(C, op->node, "stablehlo.all_to_all: dimension %lld of operand %d is not a multiple of split_count %lld",
              (long long)s, i, (long long)k);
    const char *v = sh_emit(C, in, "all-to-all", op->operands[i]->hlo, attrs, op->metadata);
    sh_bind_result(C, op, i, s == c ? v : regroup(C, v, in, op->results[i], s, c, k), op->results[i]);
  }
  return 0;
}

int sh_lower_collective_op(Lower *C, ShOp *op) {
  if (is(op, "stablehlo.all_reduce")) {
    const char *f = reducer(C, op);
    bind_all(C, op, emit_all(C, op, op->results, "all-reduce", sh_fmt(C, "%s, to_apply=%s", common_attrs(C, op, true), f)));
    return 0;
  }
  if (is(op, "stablehlo.reduce_scatter")) {
    const char *f = reducer(C, op);
    int64_t d = dim_attr(C, op, "scatter_dimension");
    bind_all(C, op, emit_all(C, op, op->results, "reduce-scatter",
                             sh_fmt(C, "%s, dimensions={%lld}, to_apply=%s", common_attrs(C, op, true), (long long)d, f)));
    return 0;
  }
  if (is(op, "stablehlo.all_gather")) {
    int64_t d = dim_attr(C, op, "all_gather_dim");
    bind_all(C, op, emit_all(C, op, op->results, "all-gather",
                             sh_fmt(C, "%s, dimensions={%lld}", common_attrs(C, op, true), (long long)d)));
    return 0;
  }
  if (is(op, "stablehlo.all_to_all")) return op_all_to_all(C, op);
  if (is(op, "stablehlo.collective_permute")) {
    const char *pairs = groups_text(C, op, "source_target_pairs", true);
    sh_need_operands(C, op, 1);
    bind_all(C, op, emit_all(C, op, op->results, "collective-permute",
                             sh_fmt(C, ", source_target_pairs=%s%s", pairs, common_attrs(C, op, false))));
    return 0;
  }
  if (is(op, "stablehlo.collective_broadcast")) {
    if (sh_attr(op, "has_dynamic_root"))
      sh_fail(C, op->node, "stablehlo.collective_broadcast with has_dynamic_root has no HLO form (XLA's "
              "collective-broadcast takes its root from replica_groups)");
    sh_need_operands(C, op, 1);
    bind_all(C, op, emit_all(C, op, op->results, "collective-broadcast", common_attrs(C, op, true)));
    return 0;
  }
  return -1;
}
