/* dense.c: dense<...> element attributes as HLO literal text, and integer
 * list attributes (array<i64: ...>, dense<[...]>, [..]).
 *
 * Each element is decoded into hlorun's memory form (common/numeric.h) and
 * printed the way XLA prints literals (hlc_format_element), so hex bit
 * patterns (0x7FC00000, NaN payloads) and decimal values of narrow floats
 * come out exactly. A dense<"0x..."> hex string holds the raw little-endian
 * elements (one byte per element for types narrower than a byte).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/numeric.h"
#include "stablehlo/lower.h"
#include "stablehlo/mlir.h"

static int hexdig(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static uint64_t hex_bits(Lower *C, const ShNode *n) {
  size_t len;
  const char *s = sh_text(C, n, &len);
  uint64_t v = 0;
  if (len > 18) sh_fail(C, n, "hex value %.*s has more than 64 bits", (int)len, s);
  for (size_t i = 2; i < len; i++) v = v * 16 + (uint64_t)hexdig(s[i]);
  return v;
}

static void store_bits(void *p, size_t size, uint64_t b) {
  switch (size) {
  case 1: { uint8_t x = (uint8_t)b; memcpy(p, &x, 1); break; }
  case 2: { uint16_t x = (uint16_t)b; memcpy(p, &x, 2); break; }
  case 4: { uint32_t x = (uint32_t)b; memcpy(p, &x, 4); break; }
  default: memcpy(p, &b, 8); break;
  }
}

/* One real element of type dt from token n into p. */
static void real_elem(Lower *C, const ShNode *n, HloDtype dt, void *p) {
  if (n->kind != SHN_TOKEN) sh_fail(C, n, "expected a number in a dense literal of %s", hlc_dtype_name(dt));
  size_t len;
  const char *s = sh_text(C, n, &len);
  char tmp[64];
  if (len >= sizeof tmp) sh_fail(C, n, "number too long");
  memcpy(tmp, s, len);
  tmp[len] = 0;
  HloKind k = hlc_dtype_kind(dt);
  if (n->tok.kind == SH_BAREID && (strcmp(tmp, "true") == 0 || strcmp(tmp, "false") == 0)) {
    if (k == HLO_KIND_FLOAT) sh_fail(C, n, "%s in a dense literal of %s", tmp, hlc_dtype_name(dt));
    hlc_store_i64(dt, p, tmp[0] == 't');
    return;
  }
  if (n->tok.kind == SH_HEX) {
    uint64_t b = hex_bits(C, n);
    if (k == HLO_KIND_FLOAT) store_bits(p, hlc_dtype_size(dt), b);
    else hlc_store_i64(dt, p, (int64_t)b);
    return;
  }
  if (n->tok.kind != SH_INT && n->tok.kind != SH_FLOAT)
    sh_fail(C, n, "expected a number in a dense literal of %s", hlc_dtype_name(dt));
  if (k == HLO_KIND_FLOAT) {
    double x = strtod(tmp, NULL);
    store_bits(p, hlc_dtype_size(dt), hlc_float_bits_from_f64(dt, x));
    return;
  }
  if (n->tok.kind == SH_FLOAT) sh_fail(C, n, "%s is not an integer (element type %s)", tmp, hlc_dtype_name(dt));
  errno = 0;
  int64_t v;
  if (tmp[0] == '-') {
    v = strtoll(tmp, NULL, 10);
    if (errno || (k == HLO_KIND_UINT)) sh_fail(C, n, "%s is out of range for %s", tmp, hlc_dtype_name(dt));
  } else {
    v = (int64_t)strtoull(tmp, NULL, 10);
    if (errno) sh_fail(C, n, "%s is out of range for %s", tmp, hlc_dtype_name(dt));
  }
  if (k == HLO_KIND_PRED) {
    if (v != 0 && v != 1) sh_fail(C, n, "%s is not a boolean", tmp);
  } else if (!hlc_int_fits(dt, v, tmp[0] == '-')) {
    sh_fail(C, n, "%s is out of range for %s", tmp, hlc_dtype_name(dt));
  }
  hlc_store_i64(dt, p, v);
}

static void elem(Lower *C, const ShNode *n, HloDtype dt, void *p) {
  if (hlc_dtype_is_complex(dt)) {
    HloDtype part = dt == HLO_C64 ? HLO_F32 : HLO_F64;
    size_t ps = hlc_dtype_size(part);
    if (n->kind != SHN_PAREN || n->nkids != 3) sh_fail(C, n, "expected (re, im) in a complex dense literal");
    real_elem(C, n->kids, part, p);
    real_elem(C, n->kids->next->next, part, (char *)p + ps);
    return;
  }
  real_elem(C, n, dt, p);
}

typedef struct Flat { const ShNode **v; int64_t n, cap; } Flat;

static void flatten(Lower *C, const ShNode *n, Flat *f, int depth) {
  if (depth > SH_MAX_RANK) sh_fail(C, n, "dense literal nested too deeply");
  for (const ShNode *k = n->kids; k; k = k->next) {
    if (k->kind == SHN_TOKEN && k->tok.kind == SH_COMMA) continue;
    if (k->kind == SHN_BRACKET) { flatten(C, k, f, depth + 1); continue; }
    if (f->n == f->cap) {
      int64_t cap = f->cap ? f->cap * 2 : 64;
      const ShNode **v = hlc_arena_alloc(C->arena, sizeof *v * (size_t)cap);
      if (f->n) memcpy(v, f->v, sizeof *v * (size_t)f->n);
      f->v = v;
      f->cap = cap;
    }
    f->v[f->n++] = k;
  }
}

/* An array without elements: "{ {}, {} }" down to the first zero dimension. */
static void put_empty(HlcText *out, const ShType *t, int d) {
  hlc_text_puts(out, "{");
  if (t->dims[d] != 0 && d + 1 < t->rank)
    for (int64_t i = 0; i < t->dims[d]; i++) {
      if (i) hlc_text_puts(out, ", ");
      put_empty(out, t, d + 1);
    }
  hlc_text_puts(out, "}");
}

/* Write elements (memory form, row-major) as an HLO literal body. */
static void put_literal(HlcText *out, const ShType *t, const unsigned char *data, size_t esize) {
  char tmp[128];
  if (t->rank == 0) {
    hlc_format_element(t->dt, data, tmp, sizeof tmp);
    hlc_text_puts(out, tmp);
    return;
  }
  int64_t idx[SH_MAX_RANK] = {0};
  int64_t total = sh_type_elems(t);
  if (total == 0) {
    put_empty(out, t, 0);
    return;
  }
  for (int d = 0; d < t->rank; d++) hlc_text_puts(out, "{");
  for (int64_t e = 0; e < total; e++) {
    hlc_format_element(t->dt, data + (size_t)e * esize, tmp, sizeof tmp);
    hlc_text_puts(out, tmp);
    int d = t->rank - 1;
    while (d >= 0 && ++idx[d] == t->dims[d]) { idx[d] = 0; d--; }
    if (e + 1 == total) break;
    int closed = t->rank - 1 - d;
    for (int k = 0; k < closed; k++) hlc_text_puts(out, "}");
    hlc_text_puts(out, ", ");
    for (int k = 0; k < closed; k++) hlc_text_puts(out, "{");
  }
  for (int d = 0; d < t->rank; d++) hlc_text_puts(out, "}");
}

int sh_dense_literal(Lower *C, const ShNode *angle, const ShType *t, HlcText *out, bool *splat) {
  if (t->kind != SHT_TENSOR) sh_fail(C, angle, "dense literal of a non-tensor type");
  size_t esize = hlc_dtype_size(t->dt);
  int64_t total = sh_type_elems(t);
  if (total > ((int64_t)1 << 34) / (int64_t)esize) sh_fail(C, angle, "dense literal too large");
  *splat = false;
  const ShNode *k = angle->kids;
  if (k && k->kind == SHN_TOKEN && k->tok.kind == SH_STRING) {
    size_t len;
    char *s = sh_string(C, k, &len);
    if (len < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || len % 2)
      sh_fail(C, k, "expected a hex string \"0x...\" in dense<>");
    size_t nbytes = (len - 2) / 2;
    unsigned char *raw = hlc_arena_alloc(C->arena, nbytes ? nbytes : 1);
    for (size_t i = 0; i < nbytes; i++) {
      int hi = hexdig(s[2 + 2 * i]), lo = hexdig(s[3 + 2 * i]);
      if (hi < 0 || lo < 0) sh_fail(C, k, "bad hex digit in dense<\"0x...\">");
      raw[i] = (unsigned char)(hi * 16 + lo);
    }
    size_t stored = t->dt == HLO_PRED ? 1 : esize;
    if (nbytes == stored && total != 1) {
      *splat = true;
      ShType s0 = *t;
      s0.rank = 0;
      put_literal(out, &s0, raw, esize);
      return 0;
    }
    if ((int64_t)nbytes != total * (int64_t)stored)
      sh_fail(C, k, "dense<\"0x...\"> holds %zu bytes; %s needs %lld", nbytes, "the type",
              (long long)(total * (int64_t)stored));
    if (hlc_dtype_bits(t->dt) < 8 && t->dt != HLO_PRED)
      for (size_t i = 0; i < nbytes; i++) hlc_store_i64(t->dt, raw + i, hlc_dtype_kind(t->dt) == HLO_KIND_SINT
                                                                          ? (int64_t)(int8_t)raw[i] : raw[i]);
    put_literal(out, t, raw, esize);
    return 0;
  }
  Flat f = {0};
  if (k && k->kind == SHN_BRACKET) {
    flatten(C, angle, &f, 0);
  } else if (k) {
    if (k->next) sh_fail(C, k->next, "unexpected item in dense<>");
    f.v = hlc_arena_alloc(C->arena, sizeof *f.v);
    f.v[0] = k;
    f.n = 1;
  }
  unsigned char *data;
  if (f.n == 1 && (!k || k->kind != SHN_BRACKET || total == 1)) {
    data = hlc_arena_alloc(C->arena, esize);
    memset(data, 0, esize);
    elem(C, f.v[0], t->dt, data);
    ShType s0 = *t;
    s0.rank = 0;
    if (total != 1) *splat = true;
    put_literal(out, total == 1 ? t : &s0, data, esize);
    return 0;
  }
  if (f.n != total)
    sh_fail(C, angle, "dense literal has %lld elements; its type has %lld", (long long)f.n, (long long)total);
  data = hlc_arena_alloc(C->arena, esize * (size_t)(total ? total : 1));
  memset(data, 0, esize * (size_t)(total ? total : 1));
  for (int64_t i = 0; i < total; i++) elem(C, f.v[i], t->dt, data + (size_t)i * esize);
  put_literal(out, t, data, esize);
  return 0;
}

static int ints_of(Lower *C, const ShNode *n, int64_t *v, int max, int *count, int depth) {
  if (depth > 8) sh_fail(C, n, "integer list nested too deeply");
  for (const ShNode *k = n->kids; k; k = k->next) {
    if (k->kind == SHN_TOKEN && (k->tok.kind == SH_COMMA || k->tok.kind == SH_COLON)) continue;
    if (k->kind == SHN_BRACKET) { ints_of(C, k, v, max, count, depth + 1); continue; }
    if (k == n->kids && k->kind == SHN_TOKEN && k->tok.kind == SH_BAREID &&
        ((k->next && k->next->kind == SHN_TOKEN && k->next->tok.kind == SH_COLON) || !k->next))
      continue;   /* array<i64: ...>'s (or an empty array<i64>'s) element type */
    size_t len;
    const char *s = sh_text(C, k, &len);
    if (*count >= max) sh_fail(C, k, "more than %d values in a list", max);
    if (k->kind == SHN_TOKEN && k->tok.kind == SH_INT) v[(*count)++] = strtoll(s, NULL, 10);
    else if (k->kind == SHN_TOKEN && k->tok.kind == SH_BAREID && len == 4 && memcmp(s, "true", 4) == 0) v[(*count)++] = 1;
    else if (k->kind == SHN_TOKEN && k->tok.kind == SH_BAREID && len == 5 && memcmp(s, "false", 5) == 0) v[(*count)++] = 0;
    else sh_fail(C, k, "expected an integer");
  }
  return 0;
}

int sh_int_list(Lower *C, const ShNode *n, int64_t *v, int max, int *count) {
  *count = 0;
  size_t len;
  const char *s = sh_text(C, n, &len);
  if (n->kind == SHN_TOKEN && n->tok.kind == SH_BAREID && ((len == 5 && memcmp(s, "array", 5) == 0) ||
                                                           (len == 5 && memcmp(s, "dense", 5) == 0))) {
    if (!n->next || n->next->kind != SHN_ANGLE) sh_fail(C, n, "expected '<' after %.*s", (int)len, s);
    return ints_of(C, n->next, v, max, count, 0);
  }
  if (n->kind == SHN_BRACKET) return ints_of(C, n, v, max, count, 0);
  if (n->kind == SHN_TOKEN && n->tok.kind == SH_INT) {
    v[(*count)++] = strtoll(s, NULL, 10);
    return 0;
  }
  sh_fail(C, n, "expected a list of integers");
}
