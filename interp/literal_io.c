/* literal_io.c: values as HLO literal text, the way XLA prints literals:
 *   f32[2,2] {{1, 2}, {3, 4}}     f32[] 1.5     pred[2] {true, false}
 *   c64[1] {(1, 2)}               (f32[] 1, s32[2] {1, 2})
 * Writing prints no layout; reading accepts one (f32[2]{0} {1, 2}) and
 * skips comments such as XLA's /(*)index=5*(/) in long tuples. Element text
 * comes from hlc_format_element (common/numeric.c) so every place prints
 * numbers alike. Not here: .npy/.npz (npy.c), files. */
#include "interp/valio.h"
#include "common/numeric.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shapes ---------------------------------------------------------------- */

HloShape *hli_shape_clone(HlcArena *a, const HloShape *s) {
  HloShape *c = hlc_arena_alloc(a, sizeof *c);
  if (!c) return NULL;
  c->dtype = s->dtype;
  c->rank = s->rank;
  c->is_buffer = s->is_buffer;
  if (s->rank > 0) {
    c->dims = hlc_arena_memdup(a, s->dims, (size_t)s->rank * sizeof *s->dims);
    if (!c->dims) return NULL;
  }
  if (s->dtype == HLO_TUPLE) {
    c->ntuple = s->ntuple;
    c->tuple = hlc_arena_alloc(a, (size_t)(s->ntuple ? s->ntuple : 1) * sizeof *c->tuple);
    if (!c->tuple) return NULL;
    for (int32_t i = 0; i < s->ntuple; i++) {
      HloShape *e = hli_shape_clone(a, &s->tuple[i]);
      if (!e) return NULL;
      c->tuple[i] = *e;
    }
  }
  return c;
}

/* ---- writing --------------------------------------------------------------- */

static void write_elems(const HliValue *v, HlcText *b, int32_t dim, int64_t *off) {
  if (v->rank == 0 || dim == v->rank) {
    char tmp[128];
    size_t es = hlc_dtype_size(v->dtype);
    hlc_format_element(v->dtype, (const char *)v->data + (size_t)*off * es, tmp, sizeof tmp);
    hlc_text_puts(b, tmp);
    (*off)++;
    return;
  }
  hlc_text_put(b, "{", 1);
  for (int64_t i = 0; i < v->dims[dim]; i++) {
    if (i) hlc_text_puts(b, ", ");
    write_elems(v, b, dim + 1, off);
  }
  hlc_text_put(b, "}", 1);
}

enum { MAX_EMPTY_GROUPS = 1 << 20 };

bool hli_literal_too_large(const HliValue *v) {
  if (v->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < v->ntuple; i++)
      if (hli_literal_too_large(v->tuple[i])) return true;
    return false;
  }
  if (!hlc_dtype_is_array(v->dtype) || v->nelem != 0) return false;
  int64_t groups = 1;
  for (int32_t d = 0; d < v->rank && v->dims[d] != 0; d++) {
    if (v->dims[d] > MAX_EMPTY_GROUPS / groups) return true;
    groups *= v->dims[d];
  }
  return false;
}

int hli_literal_write(const HliValue *v, HlcText *b) {
  if (hli_literal_too_large(v)) return -1;
  if (v->dtype == HLO_TUPLE) {
    hlc_text_put(b, "(", 1);
    for (int32_t i = 0; i < v->ntuple; i++) {
      if (i) hlc_text_puts(b, ", ");
      hli_literal_write(v->tuple[i], b);
    }
    hlc_text_put(b, ")", 1);
    return b->oom ? -1 : 0;
  }
  hlp_print_shape(b, v->shape, false);
  if (!hlc_dtype_is_array(v->dtype)) return b->oom ? -1 : 0;
  hlc_text_put(b, " ", 1);
  int64_t off = 0;
  write_elems(v, b, 0, &off);
  return b->oom ? -1 : 0;
}

/* ---- reading --------------------------------------------------------------- */

typedef struct Rd {
  const char *s, *p, *end;
  const char *what;
  HlcDiags *d;
  HlcArena *arena;
  bool failed;
  bool mismatch;             /* the error is a shape or type mismatch */
  int depth;                 /* tuple nesting: bounded, the reader recurses */
} Rd;

/* Deeper tuple nesting than any real value has; the bound keeps hostile
 * input from exhausting the stack. */
enum { RD_MAX_DEPTH = 64 };

static void rd_error(Rd *r, const char *msg, const char *at) {
  if (r->failed) return;
  r->failed = true;
  int line = 1, col = 1;
  hlc_line_col(r->s, (size_t)(r->end - r->s), (size_t)(at - r->s), &line, &col);
  hlc_diag(r->d, HLC_ERROR, "%s:%d:%d: %s", r->what, line, col, msg);
}

/* The value does not have the expected shape or type. */
static void rd_mismatch(Rd *r, const char *msg, const char *at) {
  if (!r->failed) r->mismatch = true;
  rd_error(r, msg, at);
}

static void skip_ws(Rd *r) {
  for (;;) {
    while (r->p < r->end && isspace((unsigned char)*r->p)) r->p++;
    if (r->end - r->p >= 2 && r->p[0] == '/' && r->p[1] == '*') {
      const char *q = r->p + 2;
      while (q + 1 < r->end && !(q[0] == '*' && q[1] == '/')) q++;
      r->p = q + 1 < r->end ? q + 2 : r->end;
      continue;
    }
    return;
  }
}

static bool accept(Rd *r, char c) {
  skip_ws(r);
  if (r->p < r->end && *r->p == c) { r->p++; return true; }
  return false;
}

static bool expect(Rd *r, char c) {
  if (accept(r, c)) return true;
  char msg[64];
  snprintf(msg, sizeof msg, "expected '%c'", c);
  rd_error(r, msg, r->p);
  return false;
}

/* dtype[dims]{layout}: into sh (dims in the arena). */
static bool read_array_shape(Rd *r, HloShape *sh) {
  skip_ws(r);
  const char *w = r->p;
  while (r->p < r->end && (isalnum((unsigned char)*r->p) || *r->p == '_')) r->p++;
  sh->dtype = hlc_dtype_from_name(w, (size_t)(r->p - w));
  if ((int)sh->dtype < 0 || sh->dtype == HLO_TUPLE) {
    rd_error(r, "expected an element type (f32, s32, pred, ...)", w);
    return false;
  }
  if (r->p >= r->end || *r->p != '[') { rd_error(r, "expected '[' after the element type", r->p); return false; }
  r->p++;
  int64_t dims[64];
  int32_t rank = 0;
  skip_ws(r);
  while (r->p < r->end && *r->p != ']') {
    if (r->end - r->p >= 2 && r->p[0] == '<' && r->p[1] == '=') r->p += 2;
    /* Digits by hand: the text is not NUL-terminated, so no strtoll. */
    const char *e = r->p;
    int64_t v = 0;
    while (e < r->end && *e >= '0' && *e <= '9' && v <= (INT64_MAX - 9) / 10) v = v * 10 + (*e++ - '0');
    if (e == r->p || (e < r->end && *e >= '0' && *e <= '9') || rank >= 64) {
      rd_error(r, "bad dimension", r->p);
      return false;
    }
    dims[rank++] = v;
    r->p = e;
    skip_ws(r);
    if (r->p < r->end && *r->p == ',') { r->p++; skip_ws(r); }
  }
  if (!expect(r, ']')) return false;
  sh->rank = rank;
  if (rank) {
    sh->dims = hlc_arena_memdup(r->arena, dims, (size_t)rank * sizeof *dims);
    if (!sh->dims) { rd_error(r, "out of memory", r->p); return false; }
  }
  /* A layout directly after ']' ({1,0}, possibly with :T(...) tails), only
   * when element values still follow. */
  if (rank > 0 && r->p < r->end && *r->p == '{') {
    const char *q = r->p + 1;
    int depth = 1;
    while (q < r->end && depth) { if (*q == '{') depth++; else if (*q == '}') depth--; q++; }
    const char *after = q;
    while (after < r->end && isspace((unsigned char)*after)) after++;
    bool simple = true;
    for (const char *c = r->p + 1; c < q - 1; c++)
      if (*c == '{') simple = false;
    if (simple && after < r->end && *after == '{') r->p = q;
  }
  return true;
}

static const char *token_end(const char *p, const char *end) {
  const char *q = p;
  while (q < end && (isalnum((unsigned char)*q) || *q == '.' || *q == '-' || *q == '+' || *q == '_'))
    q++;
  if (q < end && *q == '(' && q - p >= 3 && strncasecmp(q - 3, "nan", 3) == 0) {
    while (q < end && *q != ')') q++;
    if (q < end) q++;
  }
  return q;
}

static bool parse_float(Rd *r, double *out, float *outf, bool want_f32) {
  skip_ws(r);
  const char *q = token_end(r->p, r->end);
  if (q == r->p || q - r->p > 200) { rd_error(r, "expected a number", r->p); return false; }
  char tmp[208];
  memcpy(tmp, r->p, (size_t)(q - r->p));
  tmp[q - r->p] = 0;
  char *e;
  if (want_f32) *outf = strtof(tmp, &e);
  else *out = strtod(tmp, &e);
  if (*e) { rd_error(r, "bad floating-point number", r->p); return false; }
  r->p = q;
  return true;
}

static bool read_element(Rd *r, HloDtype t, void *dst) {
  skip_ws(r);
  HloKind k = hlc_dtype_kind(t);
  if (k == HLO_KIND_COMPLEX) {
    if (!expect(r, '(')) return false;
    if (t == HLO_C64) {
      float *f = dst;
      if (!parse_float(r, NULL, &f[0], true) || !expect(r, ',') || !parse_float(r, NULL, &f[1], true))
        return false;
    } else {
      double *f = dst;
      if (!parse_float(r, &f[0], NULL, false) || !expect(r, ',') || !parse_float(r, &f[1], NULL, false))
        return false;
    }
    return expect(r, ')');
  }
  if (k == HLO_KIND_FLOAT) {
    if (t == HLO_F32) return parse_float(r, NULL, dst, true);
    double v;
    if (!parse_float(r, &v, NULL, false)) return false;
    if (t == HLO_F64) { memcpy(dst, &v, 8); return true; }
    uint64_t bits = hlc_float_bits_from_f64(t, v);
    if (hlc_dtype_size(t) == 2) { uint16_t h = (uint16_t)bits; memcpy(dst, &h, 2); }
    else *(uint8_t *)dst = (uint8_t)bits;
    return true;
  }
  const char *q = token_end(r->p, r->end);
  size_t n = (size_t)(q - r->p);
  if (k == HLO_KIND_PRED) {
    int v = -1;
    if (n == 4 && memcmp(r->p, "true", 4) == 0) v = 1;
    else if (n == 5 && memcmp(r->p, "false", 5) == 0) v = 0;
    else if (n == 1 && (*r->p == '0' || *r->p == '1')) v = *r->p - '0';
    if (v < 0) { rd_error(r, "expected true or false", r->p); return false; }
    *(uint8_t *)dst = (uint8_t)v;
    r->p = q;
    return true;
  }
  if (k != HLO_KIND_SINT && k != HLO_KIND_UINT) { rd_error(r, "values of this type cannot be read", r->p); return false; }
  char tmp[64];
  if (n == 0 || n >= sizeof tmp) { rd_error(r, "expected an integer", r->p); return false; }
  memcpy(tmp, r->p, n);
  tmp[n] = 0;
  char *e;
  int bits = hlc_dtype_bits(t);
  errno = 0;
  bool ok;
  uint64_t raw;
  if (k == HLO_KIND_SINT) {
    long long v = strtoll(tmp, &e, 0);
    long long lo = bits >= 64 ? INT64_MIN : -(1ll << (bits - 1));
    long long hi = bits >= 64 ? INT64_MAX : (1ll << (bits - 1)) - 1;
    ok = !*e && !errno && v >= lo && v <= hi;
    raw = (uint64_t)v;
  } else {
    unsigned long long v = strtoull(tmp, &e, 0);
    unsigned long long hi = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
    ok = !*e && !errno && tmp[0] != '-' && v <= hi;
    raw = v;
  }
  if (!ok) {
    char msg[128];
    snprintf(msg, sizeof msg, "'%s' is not a %s value", tmp, hlc_dtype_name(t));
    rd_error(r, msg, r->p);
    return false;
  }
  switch (hlc_dtype_size(t)) {
  case 1: { uint8_t x = (uint8_t)raw; memcpy(dst, &x, 1); break; }
  case 2: { uint16_t x = (uint16_t)raw; memcpy(dst, &x, 2); break; }
  case 4: { uint32_t x = (uint32_t)raw; memcpy(dst, &x, 4); break; }
  default: memcpy(dst, &raw, 8); break;
  }
  r->p = q;
  return true;
}

/* Nested braces for dims[dim..]; elements land at *off in row-major order. */
static bool read_nest(Rd *r, HliValue *v, int32_t dim, int64_t *off) {
  if (!expect(r, '{')) return false;
  size_t es = hlc_dtype_size(v->dtype);
  for (int64_t i = 0; i < v->dims[dim]; i++) {
    if (i && !expect(r, ',')) return false;
    if (dim + 1 == v->rank) {
      if (!read_element(r, v->dtype, (char *)v->data + (size_t)*off * es)) return false;
      (*off)++;
    } else if (!read_nest(r, v, dim + 1, off)) {
      return false;
    }
  }
  accept(r, ',');
  if (!accept(r, '}')) {
    char msg[96];
    snprintf(msg, sizeof msg, "expected '}': dimension %d has %lld elements", (int)dim,
             (long long)v->dims[dim]);
    rd_error(r, msg, r->p);
    return false;
  }
  return true;
}

/* Read a literal's shape (recursively for tuples). */
static HloShape *read_shape(Rd *r) {
  HloShape *sh = hlc_arena_alloc(r->arena, sizeof *sh);
  if (!sh) { rd_error(r, "out of memory", r->p); return NULL; }
  skip_ws(r);
  if (r->p < r->end && *r->p == '(') {
    rd_error(r, "internal: tuple shape", r->p);
    return NULL;
  }
  return read_array_shape(r, sh) ? sh : NULL;
}

static HliValue *read_literal(Rd *r, const HloShape *want);
static HliValue *read_tuple_elems(Rd *r, const HloShape *want, const char *start);

static HliValue *read_tuple(Rd *r, const HloShape *want) {
  const char *start = r->p;
  if (r->depth >= RD_MAX_DEPTH) {
    rd_error(r, "tuples nested more than 64 deep", r->p);
    return NULL;
  }
  r->depth++;
  HliValue *t = read_tuple_elems(r, want, start);
  r->depth--;
  return t;
}

static HliValue *read_tuple_elems(Rd *r, const HloShape *want, const char *start) {
  r->p++;   /* '(' */
  HliValue *elems[1024];
  int32_t n = 0;
  skip_ws(r);
  while (!r->failed && !accept(r, ')')) {
    if (n && !expect(r, ',')) break;
    skip_ws(r);
    if (r->p < r->end && *r->p == ')') { r->p++; goto done; }
    if (n >= 1024) { rd_error(r, "tuple too long", r->p); break; }
    const HloShape *ws = NULL;
    if (want) {
      if (want->dtype != HLO_TUPLE || n >= want->ntuple) { rd_error(r, "more tuple elements than expected", r->p); break; }
      ws = &want->tuple[n];
    }
    HliValue *e = read_literal(r, ws);
    if (!e) break;
    elems[n++] = e;
  }
  if (r->failed) goto fail;
done:
  if (want && (want->dtype != HLO_TUPLE || n != want->ntuple)) {
    rd_mismatch(r, "the tuple's element count does not match the expected shape", start);
    goto fail;
  }
  HloShape *sh = (HloShape *)want;
  if (!sh) {
    sh = hlc_arena_alloc(r->arena, sizeof *sh);
    HloShape *ts = hlc_arena_alloc(r->arena, (size_t)(n ? n : 1) * sizeof *ts);
    if (!sh || !ts) { rd_error(r, "out of memory", r->p); goto fail; }
    sh->dtype = HLO_TUPLE;
    sh->ntuple = n;
    sh->tuple = ts;
    for (int32_t i = 0; i < n; i++) ts[i] = *elems[i]->shape;
  }
  HliValue *t = hli_value_tuple(NULL, sh, elems, n);
  for (int32_t i = 0; i < n; i++) hli_value_unref(NULL, elems[i]);
  if (!t) rd_error(r, "out of memory", r->p);
  return t;
fail:
  for (int32_t i = 0; i < n; i++) hli_value_unref(NULL, elems[i]);
  return NULL;
}

static HliValue *read_literal(Rd *r, const HloShape *want) {
  skip_ws(r);
  if (r->p < r->end && *r->p == '(') return read_tuple(r, want);
  const char *start = r->p;
  HloShape *sh = read_shape(r);
  if (!sh) return NULL;
  if (want) {
    if (!hlp_shape_compatible(sh, want)) {
      HlcText a = {0}, b = {0};
      hlp_print_shape(&a, sh, false);
      hlp_print_shape(&b, want, false);
      char msg[512];
      snprintf(msg, sizeof msg, "literal of shape %s does not match the expected %s",
               a.p ? a.p : "?", b.p ? b.p : "?");
      hlc_text_free(&a);
      hlc_text_free(&b);
      rd_mismatch(r, msg, start);
      return NULL;
    }
    sh = (HloShape *)want;
  }
  /* Every element takes at least one byte of text: refuse a declared size
   * the text cannot hold before allocating it (f32[999999999] {1}). */
  if (hlc_dtype_is_array(sh->dtype)) {
    int64_t n = 1;
    for (int32_t i = 0; i < sh->rank; i++)
      n = sh->dims[i] && n > INT64_MAX / sh->dims[i] ? INT64_MAX : n * sh->dims[i];
    if (n > r->end - r->p) {
      rd_error(r, "the literal declares more elements than its text holds", start);
      return NULL;
    }
  }
  HliValue *v = hli_value_new(NULL, sh);
  if (!v) { rd_error(r, "out of memory", r->p); return NULL; }
  if (!hlc_dtype_is_array(sh->dtype)) return v;
  int64_t off = 0;
  bool ok = sh->rank == 0 ? read_element(r, sh->dtype, v->data) : read_nest(r, v, 0, &off);
  if (!ok) { hli_value_unref(NULL, v); return NULL; }
  return v;
}

int hli_literal_read(const char *text, size_t len, const HloShape *want, HlcArena *arena,
                     const char *what, HlcDiags *d, HliValue **out) {
  HlcArena local;
  hlc_arena_init(&local);
  Rd r = {text, text, text + len, what ? what : "<literal>", d, arena ? arena : &local, false, false, 0};
  if (!arena && !want) {
    hlc_arena_free(&local);
    hlc_diag(d, HLC_ERROR, "%s: internal: no shape and no arena", r.what);
    return -1;
  }
  *out = read_literal(&r, want);
  if (*out) {
    skip_ws(&r);
    if (r.p < r.end) {
      rd_error(&r, "unexpected text after the literal", r.p);
      hli_value_unref(NULL, *out);
      *out = NULL;
    }
  }
  hlc_arena_free(&local);   /* only used for shapes we then replace by want */
  return *out ? 0 : r.mismatch ? HLI_READ_MISMATCH : -1;
}
