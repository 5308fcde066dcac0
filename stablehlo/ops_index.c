/* ops_index.c: gather, scatter and convolution, whose dimension numbers are
 * structured attributes (#stablehlo.gather<...>, #stablehlo.scatter<...>,
 * #stablehlo.conv<...> or the pretty "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]").
 */
#include <stdlib.h>
#include <string.h>
#include "stablehlo/lower.h"
#include "stablehlo/ops.h"
#include "stablehlo/mlir.h"

static bool is(const ShOp *op, const char *w) {
  size_t n = strlen(w);
  if (op->nlen == n && memcmp(op->name, w, n) == 0) return true;
  return n > 10 && memcmp(w, "stablehlo.", 10) == 0 && op->nlen == n - 5 && memcmp(op->name, "mhlo.", 5) == 0 &&
         memcmp(op->name + 5, w + 10, n - 10) == 0;
}

static void put_field(Lower *C, HlcText *b, ShAttr *a, const char *field, const char *hlo, bool always) {
  int64_t v[SH_MAX_RANK];
  int n = sh_struct_ints(C, a, field, v, SH_MAX_RANK);
  if (n > 0 || always) hlc_text_printf(b, ", %s=%s", hlo, sh_ints_text(C, v, n > 0 ? n : 0));
}

static int64_t field_int(Lower *C, ShOp *op, ShAttr *a, const char *field) {
  int64_t v[SH_MAX_RANK];
  int n = sh_struct_ints(C, a, field, v, SH_MAX_RANK);
  if (n == 0) return 0;   /* MLIR omits the default, 0 */
  if (n != 1) sh_fail(C, op->node, "%.*s: bad %s", (int)op->nlen, op->name, field);
  return v[0];
}

/* A dynamic op's operand i as the constant integers XLA's shape
 * refinement folds into the static op's attribute (n of them). */
static void refined_operand(Lower *C, ShOp *op, int i, const char *what, int64_t *v, int n) {
  if (op->noperands <= i || sh_const_ints(C, op->operands[i], v, n) != n)
    sh_fail(C, op->node, "%.*s: its %s must be a constant of %d integers (XLA refines only that to a static %s)",
            (int)op->nlen, op->name, what, n, op->nlen > 18 && memcmp(op->name, "stablehlo.dynamic_", 18) == 0 ? op->name + 18 : "op");
}

static int op_gather(Lower *C, ShOp *op) {
  int64_t ss[SH_MAX_RANK];
  int nss = 0;
  bool dynamic = is(op, "stablehlo.dynamic_gather");
  if (dynamic) {   /* slice sizes as operand 2 */
    nss = op->noperands >= 1 ? op->operands[0]->type->rank : 0;
    refined_operand(C, op, 2, "slice_sizes", ss, nss);
    op->noperands = 2;
  }
  sh_need_operands(C, op, 2);
  ShAttr *a = sh_attr(op, "dimension_numbers");
  if (!a) sh_fail(C, op->node, "stablehlo.gather: missing dimension_numbers");
  if (!dynamic) nss = sh_need_ints(C, op, ss, SH_MAX_RANK, "slice_sizes", NULL);
  HlcText b = {0};
  put_field(C, &b, a, "offset_dims", "offset_dims", true);
  put_field(C, &b, a, "collapsed_slice_dims", "collapsed_slice_dims", true);
  put_field(C, &b, a, "operand_batching_dims", "operand_batching_dims", false);
  put_field(C, &b, a, "start_indices_batching_dims", "start_indices_batching_dims", false);
  put_field(C, &b, a, "start_index_map", "start_index_map", true);
  hlc_text_printf(&b, ", index_vector_dim=%lld, slice_sizes=%s", (long long)field_int(C, op, a, "index_vector_dim"),
             sh_ints_text(C, ss, nss));
  if (sh_attr_bool(C, op, "indices_are_sorted", false)) hlc_text_puts(&b, ", indices_are_sorted=true");
  sh_simple(C, op, "gather", sh_strdup(C, b.p, b.n));
  hlc_text_free(&b);
  return 0;
}

static int op_scatter(Lower *C, ShOp *op) {
  if (op->noperands < 3 || op->noperands % 2 == 0) sh_fail(C, op->node, "stablehlo.scatter: expected inputs, indices, updates");
  if (op->nregions != 1) sh_fail(C, op->node, "stablehlo.scatter: expected one region");
  ShAttr *a = sh_attr(op, "scatter_dimension_numbers");
  if (!a) sh_fail(C, op->node, "stablehlo.scatter: missing scatter_dimension_numbers");
  const char *body = sh_region_lower(C, op->regions[0], "region_update", SHR_PARAMS, NULL, NULL, 0, NULL, NULL);
  HlcText b = {0};
  put_field(C, &b, a, "update_window_dims", "update_window_dims", true);
  put_field(C, &b, a, "inserted_window_dims", "inserted_window_dims", true);
  put_field(C, &b, a, "input_batching_dims", "input_batching_dims", false);
  put_field(C, &b, a, "scatter_indices_batching_dims", "scatter_indices_batching_dims", false);
  put_field(C, &b, a, "scatter_dims_to_operand_dims", "scatter_dims_to_operand_dims", true);
  hlc_text_printf(&b, ", index_vector_dim=%lld", (long long)field_int(C, op, a, "index_vector_dim"));
  if (sh_attr_bool(C, op, "indices_are_sorted", false)) hlc_text_puts(&b, ", indices_are_sorted=true");
  if (sh_attr_bool(C, op, "unique_indices", false)) hlc_text_puts(&b, ", unique_indices=true");
  hlc_text_printf(&b, ", to_apply=%s", body);
  const char *attrs = sh_strdup(C, b.p, b.n);
  hlc_text_free(&b);
  if (op->nresults == 1) {
    sh_simple(C, op, "scatter", attrs);
  } else {
    ShType *tt = sh_tuple_type(C, op->results, op->nresults);
    const char *t = sh_emit(C, tt, "scatter", sh_operand_list(C, op, 0, op->noperands), attrs, op->metadata);
    sh_bind_tuple_results(C, op, t, tt);
  }
  return 0;
}

/* "[b, 0, 1, f]" -> "b01f" */
static void labels(Lower *C, ShNode *br, HlcText *b) {
  if (!br || br->kind != SHN_BRACKET) sh_fail(C, br, "convolution: expected [..] dimension labels");
  for (ShNode *k = br->kids; k; k = k->next) {
    if (sh_is(C, k, SH_COMMA, NULL)) continue;
    size_t n;
    const char *s = sh_text(C, k, &n);
    hlc_text_put(b, s, n);
  }
}

/* dim_labels from "[..]x[..]->[..]" items starting at n. */
static const char *dim_labels_pretty(Lower *C, ShNode *n) {
  HlcText b = {0};
  labels(C, n, &b);
  hlc_text_puts(&b, "_");
  if (!n->next || !sh_is(C, n->next, SH_BAREID, "x")) sh_fail(C, n, "convolution: expected [..]x[..]->[..]");
  labels(C, n->next->next, &b);
  hlc_text_puts(&b, "->");
  ShNode *o = n->next->next ? n->next->next->next : NULL;
  if (!o || !sh_is(C, o, SH_ARROW, NULL)) sh_fail(C, n, "convolution: expected [..]x[..]->[..]");
  labels(C, o->next, &b);
  const char *r = sh_strdup(C, b.p, b.n);
  hlc_text_free(&b);
  return r;
}

/* Label positions of "raw" conv dimension numbers. */
static const char *dim_labels_raw(Lower *C, ShOp *op, ShAttr *a, int rank) {
  char in[SH_MAX_RANK + 1], ke[SH_MAX_RANK + 1], out[SH_MAX_RANK + 1];
  memset(in, '?', sizeof in); memset(ke, '?', sizeof ke); memset(out, '?', sizeof out);
  in[rank] = ke[rank] = out[rank] = 0;
  int64_t v[SH_MAX_RANK];
  struct { const char *f; char *s; char c; } one[] = {
    {"input_batch_dimension", in, 'b'}, {"input_feature_dimension", in, 'f'},
    {"kernel_input_feature_dimension", ke, 'i'}, {"kernel_output_feature_dimension", ke, 'o'},
    {"output_batch_dimension", out, 'b'}, {"output_feature_dimension", out, 'f'}};
  for (size_t i = 0; i < sizeof one / sizeof *one; i++) {
    if (sh_struct_ints(C, a, one[i].f, v, SH_MAX_RANK) != 1 || v[0] < 0 || v[0] >= rank)
      sh_fail(C, op->node, "convolution: bad or missing %s", one[i].f);
    one[i].s[v[0]] = one[i].c;
  }
  const char *sp[] = {"input_spatial_dimensions", "kernel_spatial_dimensions", "output_spatial_dimensions"};
  char *ss[] = {in, ke, out};
  for (int j = 0; j < 3; j++) {
    int n = sh_struct_ints(C, a, sp[j], v, SH_MAX_RANK);
    for (int i = 0; i < n; i++) {
      if (v[i] < 0 || v[i] >= rank || i > 9) sh_fail(C, op->node, "convolution: bad %s", sp[j]);
      ss[j][v[i]] = (char)('0' + i);
    }
  }
  return sh_fmt(C, "%s_%s->%s", in, ke, out);
}

static int op_convolution(Lower *C, ShOp *op) {
  bool dynamic = is(op, "stablehlo.dynamic_conv");   /* padding as operand 2 */
  int64_t dpad[2 * SH_MAX_RANK];
  if (dynamic) {
    int ns = op->noperands >= 1 ? op->operands[0]->type->rank - 2 : 0;
    refined_operand(C, op, 2, "padding", dpad, 2 * (ns > 0 ? ns : 0));
    op->noperands = 2;
  }
  sh_need_operands(C, op, 2);
  int rank = op->operands[0]->type->rank;
  const ShType *kt = op->operands[1]->type;
  int ns = rank - 2;
  if (ns < 0 || ns > 9) sh_fail(C, op->node, "convolution: unsupported rank %d", rank);
  const char *dl = NULL;
  ShAttr *dn = sh_attr(op, "dimension_numbers");
  if (!dn) dn = sh_attr(op, "dim_numbers");
  if (!dn || !dn->val) sh_fail(C, op->node, "convolution: missing dimension_numbers");
  if (dn->val->kind == SHN_BRACKET) {
    dl = dim_labels_pretty(C, dn->val);
  } else if (dn->val->next && dn->val->next->kind == SHN_ANGLE && dn->val->next->kids &&
             dn->val->next->kids->kind == SHN_BRACKET) {
    dl = dim_labels_pretty(C, dn->val->next->kids);
  } else {
    dl = dim_labels_raw(C, op, dn, rank);
  }
  /* kernel spatial sizes from the labels */
  const char *kl = strchr(dl, '_') + 1;
  int64_t size[SH_MAX_RANK], stride[SH_MAX_RANK], lo[SH_MAX_RANK], hi[SH_MAX_RANK], ld[SH_MAX_RANK], rd[SH_MAX_RANK],
      rev[SH_MAX_RANK], pad[2 * SH_MAX_RANK];
  for (int i = 0; i < rank && kl[i] && kl[i] != '-'; i++)
    if (kl[i] >= '0' && kl[i] <= '9') size[kl[i] - '0'] = kt->dims[i];
  for (int i = 0; i < ns; i++) stride[i] = ld[i] = rd[i] = 1, lo[i] = hi[i] = rev[i] = 0;
  /* pretty "window = {stride = [..], pad = [[..]], lhs_dilate = [..], rhs_dilate = [..], reverse = [..]}" */
  ShAttr *w = sh_attr(op, "window");
  ShOp wop;
  ShOp *src = op;
  const char *ks[5] = {"window_strides", "padding", "lhs_dilation", "rhs_dilation", "window_reversal"};
  if (w && w->val && w->val->kind == SHN_DICT) {
    memset(&wop, 0, sizeof wop);
    wop.name = op->name;
    wop.nlen = op->nlen;
    wop.node = op->node;
    sh_dict_attrs(C, &wop, w->val);
    src = &wop;
    ks[0] = "stride"; ks[1] = "pad"; ks[2] = "lhs_dilate"; ks[3] = "rhs_dilate"; ks[4] = "reverse";
  }
  int64_t *dst[5] = {stride, pad, ld, rd, rev};
  for (int j = 0; j < 5; j++) {
    int n = sh_attr_ints(C, src, ks[j], dst[j], 2 * SH_MAX_RANK);
    if (n >= 0 && n != (j == 1 ? 2 * ns : ns)) sh_fail(C, op->node, "convolution: %s: expected %d values", ks[j], j == 1 ? 2 * ns : ns);
    if (j == 1 && n >= 0)
      for (int i = 0; i < ns; i++) lo[i] = pad[2 * i], hi[i] = pad[2 * i + 1];
  }
  if (dynamic)
    for (int i = 0; i < ns; i++) lo[i] = dpad[2 * i], hi[i] = dpad[2 * i + 1];
  bool any_rev = false;
  for (int i = 0; i < ns; i++) any_rev |= rev[i] != 0;
  const char *win = sh_window_text(C, size, ns, stride, lo, hi, ld, rd, any_rev ? rev : NULL);
  int64_t fg = sh_attr_int(C, op, "feature_group_count", 1), bg = sh_attr_int(C, op, "batch_group_count", 1);
  sh_simple(C, op, "convolution", sh_fmt(C, ", window=%s, dim_labels=%s%s%s", win, dl,
                                         fg != 1 ? sh_fmt(C, ", feature_group_count=%lld", (long long)fg) : "",
                                         bg != 1 ? sh_fmt(C, ", batch_group_count=%lld", (long long)bg) : ""));
  return 0;
}

int sh_lower_index_op(Lower *C, ShOp *op) {
  if (is(op, "stablehlo.gather") || is(op, "stablehlo.dynamic_gather")) return op_gather(C, op);
  if (is(op, "stablehlo.dynamic_conv")) return op_convolution(C, op);
  if (is(op, "stablehlo.scatter")) return op_scatter(C, op);
  if (is(op, "stablehlo.convolution")) return op_convolution(C, op);
  return sh_lower_call_op(C, op);
}
