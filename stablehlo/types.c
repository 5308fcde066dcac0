/* types.c: MLIR types (tensor<2x3xf32>, tuple<...>, !stablehlo.token,
 * complex<f32>) as HLO shapes.
 *
 * Element types map one to one (StableHLO's spec, "Types"; XLA's
 * ConvertTensorShapeToType): iN -> sN (i1 -> pred), uiN -> uN, the f8 family
 * by name, complex<f32/f64> -> c64/c128. What HLO cannot hold (dynamic `?`
 * and unranked `*` dimensions, bounds encodings, quantized and other dialect
 * types) is an error naming it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stablehlo/lower.h"
#include "stablehlo/mlir.h"

static const struct { const char *mlir; HloDtype dt; } elem_types[] = {
  {"i1", HLO_PRED}, {"i2", HLO_S2}, {"i4", HLO_S4}, {"i8", HLO_S8}, {"i16", HLO_S16}, {"i32", HLO_S32},
  {"i64", HLO_S64}, {"ui1", HLO_U1}, {"ui2", HLO_U2}, {"ui4", HLO_U4}, {"ui8", HLO_U8}, {"ui16", HLO_U16},
  {"ui32", HLO_U32}, {"ui64", HLO_U64}, {"f16", HLO_F16}, {"bf16", HLO_BF16}, {"f32", HLO_F32},
  {"f64", HLO_F64}, {"f8E5M2", HLO_F8E5M2}, {"f8E4M3", HLO_F8E4M3}, {"f8E4M3FN", HLO_F8E4M3FN},
  {"f8E4M3B11FNUZ", HLO_F8E4M3B11FNUZ}, {"f8E3M4", HLO_F8E3M4}, {"f8E5M2FNUZ", HLO_F8E5M2FNUZ},
  {"f8E4M3FNUZ", HLO_F8E4M3FNUZ}, {"f8E8M0FNU", HLO_F8E8M0FNU}, {"f4E2M1FN", HLO_F4E2M1FN},
  {"si8", HLO_S8}, {"si16", HLO_S16}, {"si32", HLO_S32}, {"si64", HLO_S64},
};

HloDtype sh_elem_type(const char *s, size_t n) {
  for (size_t i = 0; i < sizeof elem_types / sizeof *elem_types; i++)
    if (strlen(elem_types[i].mlir) == n && memcmp(elem_types[i].mlir, s, n) == 0) return elem_types[i].dt;
  return HLO_DTYPE_INVALID;
}

ShType *sh_scalar_type(Lower *C, HloDtype dt) {
  ShType *t = hlc_arena_alloc(C->arena, sizeof *t);
  memset(t, 0, sizeof *t);
  t->kind = SHT_TENSOR;
  t->dt = dt;
  return t;
}

/* An element type at *n: a word, or complex<...>. */
static HloDtype elem_at(Lower *C, ShNode **n, const ShNode *ctx) {
  ShNode *w = *n;
  if (!w) sh_fail(C, ctx, "expected an element type");
  size_t len;
  const char *s = sh_text(C, w, &len);
  if (w->kind == SHN_TOKEN && w->tok.kind == SH_BAREID && len == 7 && memcmp(s, "complex", 7) == 0 && w->next &&
      w->next->kind == SHN_ANGLE) {
    ShNode *in = w->next->kids;
    HloDtype e = elem_at(C, &in, w);
    *n = w->next->next;
    if (e == HLO_F32) return HLO_C64;
    if (e == HLO_F64) return HLO_C128;
    sh_fail(C, w, "complex element type complex<%s> has no HLO counterpart (only complex<f32> and complex<f64>)",
            hlc_dtype_name(e));
  }
  if (w->kind == SHN_TOKEN && w->tok.kind == SH_BANGID) {
    if (len >= 6 && memcmp(s, "!quant", 6) == 0)
      sh_fail(C, w, "quantized element type %.*s is not supported (HLO has no quantized types)", (int)len, s);
    sh_fail(C, w, "element type %.*s is not supported", (int)len, s);
  }
  if (w->kind != SHN_TOKEN || w->tok.kind != SH_BAREID) sh_fail(C, w, "expected an element type");
  HloDtype dt = sh_elem_type(s, len);
  if (dt == HLO_DTYPE_INVALID) {
    if (len >= 5 && memcmp(s, "index", 5) == 0) sh_fail(C, w, "element type index is not supported");
    sh_fail(C, w, "element type %.*s is not supported", (int)len, s);
  }
  *n = w->next;
  return dt;
}

ShType *sh_parse_type(Lower *C, ShNode **pn) {
  ShNode *n = *pn;
  if (!n) sh_fail_off(C, C->P->len, "expected a type");
  size_t len;
  const char *s = sh_text(C, n, &len);
  ShType *t = hlc_arena_alloc(C->arena, sizeof *t);
  memset(t, 0, sizeof *t);
  if (n->kind == SHN_TOKEN && n->tok.kind == SH_BANGID) {
    if ((len == 16 && memcmp(s, "!stablehlo.token", 16) == 0) || (len == 11 && memcmp(s, "!mhlo.token", 11) == 0)) {
      t->kind = SHT_TOKEN;
      *pn = n->next;
      return t;
    }
    sh_fail(C, n, "type %.*s is not supported", (int)len, s);
  }
  if (n->kind == SHN_PAREN) {   /* "(tensor<f32>)" around one type */
    ShNode *in = n->kids;
    ShType *r = sh_parse_type(C, &in);
    if (in) sh_fail(C, in, "expected ')' after a type");
    *pn = n->next;
    return r;
  }
  if (n->kind != SHN_TOKEN || n->tok.kind != SH_BAREID) sh_fail(C, n, "expected a type");
  bool is_tensor = len == 6 && memcmp(s, "tensor", 6) == 0;
  bool is_tuple = len == 5 && memcmp(s, "tuple", 5) == 0;
  if ((is_tensor || is_tuple) && (!n->next || n->next->kind != SHN_ANGLE))
    sh_fail(C, n, "expected '<' after %.*s", (int)len, s);
  if (is_tuple) {
    t->kind = SHT_TUPLE;
    ShNode *in = n->next->kids;
    ShType *tmp[256];
    while (in) {
      if (t->n >= 256) sh_fail(C, in, "tuple with more than 256 elements");
      tmp[t->n++] = sh_parse_type(C, &in);
      if (in && in->kind == SHN_TOKEN && in->tok.kind == SH_COMMA) in = in->next;
    }
    t->elems = hlc_arena_memdup(C->arena, tmp, sizeof(ShType *) * (size_t)(t->n ? t->n : 1));
    *pn = n->next->next;
    return t;
  }
  if (!is_tensor) {   /* a bare element type: a scalar (attributes "1 : i64") */
    ShNode *w = n;
    t->dt = elem_at(C, &w, n);
    t->kind = SHT_TENSOR;
    *pn = w;
    return t;
  }
  ShNode *in = n->next->kids;
  t->kind = SHT_TENSOR;
  if (in && in->kind == SHN_TOKEN && in->tok.kind == SH_DIMS) {
    size_t dl;
    const char *d = sh_text(C, in, &dl);
    for (size_t i = 0; i < dl;) {
      if (d[i] == '?') sh_fail(C, in, "dynamic dimension '?' is not supported (HLO needs static shapes)");
      if (d[i] == '*') sh_fail(C, in, "unranked tensor type is not supported (HLO needs static shapes)");
      int64_t v = 0;
      while (i < dl && d[i] >= '0' && d[i] <= '9') {
        if (v > (INT64_MAX - 9) / 10) sh_fail(C, in, "dimension too large");
        v = v * 10 + (d[i++] - '0');
      }
      if (t->rank >= SH_MAX_RANK) sh_fail(C, in, "more than %d dimensions", SH_MAX_RANK);
      t->dims[t->rank++] = v;
      i++;   /* 'x' */
    }
    in = in->next;
  }
  t->dt = elem_at(C, &in, n);
  if (in && in->kind == SHN_TOKEN && in->tok.kind == SH_COMMA) {
    size_t el;
    const char *e = in->next ? sh_text(C, in->next, &el) : "";
    if (in->next && el >= 17 && memcmp(e, "#stablehlo.bounds", 17) == 0)
      sh_fail(C, in->next, "bounded dynamic shape (#stablehlo.bounds) is not supported");
    if (in->next && el >= 12 && memcmp(e, "#sparse", 7) == 0) sh_fail(C, in->next, "sparse tensor encoding is not supported");
    sh_fail(C, in, "tensor encodings are not supported");
  }
  if (in) sh_fail(C, in, "unexpected item in a tensor type");
  *pn = n->next->next;
  return t;
}

void sh_put_type(HlcText *b, const ShType *t) {
  if (t->kind == SHT_TOKEN) { hlc_text_puts(b, "token[]"); return; }
  if (t->kind == SHT_TUPLE) {
    hlc_text_puts(b, "(");
    for (int i = 0; i < t->n; i++) {
      if (i) hlc_text_puts(b, ", ");
      sh_put_type(b, t->elems[i]);
    }
    hlc_text_puts(b, ")");
    return;
  }
  hlc_text_puts(b, hlc_dtype_name(t->dt));
  hlc_text_puts(b, "[");
  for (int i = 0; i < t->rank; i++) hlc_text_printf(b, "%s%lld", i ? "," : "", (long long)t->dims[i]);
  hlc_text_puts(b, "]");
}

int64_t sh_type_elems(const ShType *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) {
    if (t->dims[i] != 0 && n > INT64_MAX / t->dims[i]) return INT64_MAX;
    n *= t->dims[i];
  }
  return n;
}

bool sh_type_eq(const ShType *a, const ShType *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == SHT_TOKEN) return true;
  if (a->kind == SHT_TUPLE) {
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n; i++)
      if (!sh_type_eq(a->elems[i], b->elems[i])) return false;
    return true;
  }
  if (a->dt != b->dt || a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}
