/* literal.c: constant bodies (spec section 7) parsed against their shape
 * into dense, logical row-major element memory (formats of common/numeric.h).
 *
 * Checks brace nesting and element counts against the dims exactly, value
 * ranges per element type (including the u64 "-1" quirk), NaN payloads, pred
 * words, complex pairs and tuples. "{...}" marks the data as elided.
 * Does not print literals (print.c does).
 */
#include "parser/syntax.h"
#include "common/numeric.h"
#include "hlo.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Lit {
  HlpParser *P;
  const HloShape *shape;
  unsigned char *data;
  size_t esize;
  int64_t next;      /* next element index (row-major) */
} Lit;

static bool is_tok(const HloVal *v, int tok) { return v->kind == HLO_VAL_TOKEN && v->tok == tok; }

static void store_bits(void *p, size_t size, uint64_t b) {
  switch (size) {
  case 1: { uint8_t x = (uint8_t)b; memcpy(p, &x, 1); break; }
  case 2: { uint16_t x = (uint16_t)b; memcpy(p, &x, 2); break; }
  case 4: { uint32_t x = (uint32_t)b; memcpy(p, &x, 4); break; }
  default: memcpy(p, &b, 8); break;
  }
}

/* IEEE-like formats whose NaN payload can be written nan(0x..). */
static bool ieee_bits(HloDtype t, int *ebits, int *mbits) {
  switch (t) {
  case HLO_F16: *ebits = 5; *mbits = 10; return true;
  case HLO_BF16: *ebits = 8; *mbits = 7; return true;
  case HLO_F32: *ebits = 8; *mbits = 23; return true;
  case HLO_F64: *ebits = 11; *mbits = 52; return true;
  case HLO_F8E5M2: *ebits = 5; *mbits = 2; return true;
  case HLO_F8E4M3: *ebits = 4; *mbits = 3; return true;
  case HLO_F8E3M4: *ebits = 3; *mbits = 4; return true;
  default: return false;
  }
}

/* One float value of type t (real types) into bits. */
static int float_value(Lit *L, HloDtype t, const HloVal *v, uint64_t *bits) {
  HlpParser *P = L->P;
  double x;
  if (is_tok(v, TK_INT) || (is_tok(v, TK_DECIMAL) && !strstr(v->text, "nan"))) {
    x = strtod(v->text, NULL);
    if (isinf(x) || !hlc_value_fits(t, x)) {
      hlp_error(P, v->off, "value %s is out of range for literal's primitive type %s", v->text,
                hlc_dtype_name(t));
      return -1;
    }
  } else if (is_tok(v, TK_IDENT) && strcmp(v->text, "inf") == 0) {
    x = INFINITY;
  } else if (is_tok(v, TK_NEGINF)) {
    x = -INFINITY;
  } else if (is_tok(v, TK_DECIMAL)) {
    /* nan, -nan, nan(0x..), -nan(0x..) */
    bool neg = v->text[0] == '-';
    const char *pl = strchr(v->text, '(');
    if (pl) {
      int eb, mb;
      uint64_t payload = 0;
      bool over = false;
      for (const char *s = pl + 3; *s && *s != ')'; s++) {
        int d = *s <= '9' ? *s - '0' : (*s | 0x20) - 'a' + 10;
        if (payload >> 60) over = true;
        payload = payload * 16 + (uint64_t)d;
      }
      if (!ieee_bits(t, &eb, &mb)) {
        hlp_error(P, v->off, "NaN payloads are not supported for %s", hlc_dtype_name(t));
        return -1;
      }
      if (over || payload == 0 || (mb < 64 && payload >> mb)) {
        hlp_error(P, v->off, "NaN payload %s does not fit %s", pl, hlc_dtype_name(t));
        return -1;
      }
      *bits = ((uint64_t)neg << (eb + mb)) | ((((uint64_t)1 << eb) - 1) << mb) | payload;
      return 0;
    }
    x = neg ? -NAN : NAN;
  } else {
    hlp_error(P, v->off, "expected a number for %s", hlc_dtype_name(t));
    return -1;
  }
  if ((isnan(x) || isinf(x)) && !hlc_value_fits(t, x)) {
    hlp_error(P, v->off, "%s cannot represent %s", hlc_dtype_name(t), v->text);
    return -1;
  }
  *bits = hlc_float_bits_from_f64(t, x);
  /* The conversion may not keep the sign of NaN: set it as written. */
  if (isnan(x) && signbit(x)) {
    int eb, mb;
    if (ieee_bits(t, &eb, &mb)) *bits |= (uint64_t)1 << (eb + mb);
  }
  return 0;
}

static int elem(Lit *L, const HloVal *v, void *dst) {
  HlpParser *P = L->P;
  HloDtype t = L->shape->dtype;
  HloKind k = hlc_dtype_kind(t);
  if (k == HLO_KIND_PRED) {
    int64_t b = -1;
    if (is_tok(v, TK_IDENT) && strcmp(v->text, "true") == 0) b = 1;
    else if (is_tok(v, TK_IDENT) && strcmp(v->text, "false") == 0) b = 0;
    else if (is_tok(v, TK_INT) && (strcmp(v->text, "0") == 0 || strcmp(v->text, "1") == 0))
      b = v->text[0] - '0';
    if (b < 0) {
      hlp_error(P, v->off, "expected true, false, 0 or 1 for pred");
      return -1;
    }
    *(uint8_t *)dst = (uint8_t)b;
    return 0;
  }
  if (k == HLO_KIND_SINT || k == HLO_KIND_UINT) {
    if (!is_tok(v, TK_INT)) {
      hlp_error(P, v->off, "expected an integer for %s", hlc_dtype_name(t));
      return -1;
    }
    bool neg = v->text[0] == '-';
    uint64_t u = 0;
    for (size_t i = neg; i < v->len; i++) u = u * 10 + (uint64_t)(v->text[i] - '0');
    int64_t s = neg ? (int64_t)(0 - u) : (int64_t)u;
    bool ok;
    if (t == HLO_U64) ok = true;   /* INT is a 64-bit pattern: -1 is 2^64-1 */
    else if (!neg && u > (uint64_t)INT64_MAX) ok = false;
    else ok = hlc_int_fits(t, s, true);
    if (!ok) {
      hlp_error(P, v->off, "value %s is out of range for literal's primitive type %s", v->text,
                hlc_dtype_name(t));
      return -1;
    }
    store_bits(dst, L->esize, (uint64_t)s);
    return 0;
  }
  if (k == HLO_KIND_FLOAT) {
    uint64_t b;
    if (float_value(L, t, v, &b)) return -1;
    store_bits(dst, L->esize, b);
    return 0;
  }
  if (k == HLO_KIND_COMPLEX) {
    HloDtype part = t == HLO_C64 ? HLO_F32 : HLO_F64;
    size_t ps = L->esize / 2;
    if (v->kind == HLO_VAL_PAREN && v->nitems == 2 && v->items[1]->sep == 2) {
      uint64_t re, im;
      if (float_value(L, part, v->items[0], &re) || float_value(L, part, v->items[1], &im)) return -1;
      store_bits(dst, ps, re);
      store_bits((unsigned char *)dst + ps, ps, im);
      return 0;
    }
    hlp_error(P, v->off, "expected a complex value (re, im)");
    return -1;
  }
  hlp_error(P, v->off, "%s values cannot be written as literals", hlc_dtype_name(t));
  return -1;
}

/* Nested braces: level-th dimension of the shape. */
static int fill(Lit *L, const HloVal *v, int32_t level, int64_t *index) {
  HlpParser *P = L->P;
  const HloShape *s = L->shape;
  if (level == s->rank) {
    if (v->kind == HLO_VAL_BRACE) {
      hlp_error(P, v->off, "too many levels of braces for a rank-%d literal", (int)s->rank);
      return -1;
    }
    unsigned char scratch[16];   /* a dry run (no data yet) parses into this */
    void *dst = L->data ? (void *)(L->data + (size_t)L->next * L->esize) : scratch;
    L->next++;
    return elem(L, v, dst);
  }
  if (v->kind != HLO_VAL_BRACE) {
    hlp_error(P, v->off, "expected '{' for dimension %d of the literal", (int)level);
    return -1;
  }
  if (v->nitems != s->dims[level]) {
    char where[128] = "";
    size_t o = 0;
    for (int32_t i = 0; i < level && o + 24 < sizeof where; i++)
      o += (size_t)snprintf(where + o, sizeof where - o, "[%lld]", (long long)index[i]);
    hlp_error(P, v->off, "expects %lld elements in the %s%sliteral, but sees %d",
              (long long)s->dims[level], where, level ? " element of the " : "",
              (int)v->nitems);
    return -1;
  }
  for (int32_t i = 0; i < v->nitems; i++) {
    if (i && v->items[i]->sep != 2) {
      hlp_error(P, v->items[i]->off, "expected ',' between literal elements");
      return -1;
    }
    index[level] = i;
    if (fill(L, v->items[i], level + 1, index)) return -1;
  }
  return 0;
}

static bool is_elided(const HloVal *v) {
  return v->kind == HLO_VAL_BRACE && v->nitems == 1 && is_tok(v->items[0], TK_ELLIPSIS);
}

enum { DRY_RUN_BYTES = 1 << 20 };

static HloLiteral *array_literal(HlpParser *P, const HloShape *shape, const HloVal *v) {
  HloLiteral *lit = hlp_alloc(P, sizeof *lit);
  lit->shape = shape;
  if (!hlc_dtype_is_array(shape->dtype)) {
    hlp_error(P, v->off, "%s constants are not supported", hlc_dtype_name(shape->dtype));
    return NULL;
  }
  size_t es = hlc_dtype_size(shape->dtype);
  int64_t n = 1;
  for (int32_t i = 0; i < shape->rank; i++) {
    if (shape->dynamic && shape->dynamic[i]) {
      hlp_error(P, v->off, "constants with dynamic dimensions are not supported");
      return NULL;
    }
    if (shape->dims[i] && n > ((int64_t)1 << 40) / shape->dims[i]) {
      hlp_error(P, v->off, "literal too large");
      return NULL;
    }
    n *= shape->dims[i];
  }
  lit->nbytes = (size_t)n * es;
  if (is_elided(v)) {
    lit->elided = true;   /* no data: the executor fills the value, or refuses */
    return lit;
  }
  int64_t index[HLX_MAX_DEPTH + 1];
  if (shape->rank > HLX_MAX_DEPTH) {
    hlp_error(P, v->off, "literal rank too large");
    return NULL;
  }
  /* One scalar for an array shape (f32[3] constant(1)): XLA's parser takes
   * it for every element. The declared size is bounded first: a scalar must
   * not make a huge constant out of a few bytes of text. */
  if (shape->rank > 0 && v->kind != HLO_VAL_BRACE) {
    if (lit->nbytes > ((size_t)1 << 30)) {
      hlp_error(P, v->off, "a scalar literal for an array of %zu bytes (more than 1 GiB)", lit->nbytes);
      return NULL;
    }
    HloShape scalar = *shape;
    scalar.rank = 0;
    scalar.dims = NULL;
    scalar.dynamic = NULL;
    scalar.minor_to_major = NULL;
    unsigned char one[16];
    Lit S = {P, &scalar, one, es, 0};
    if (fill(&S, v, 0, index)) return NULL;
    lit->data = hlp_alloc(P, lit->nbytes ? lit->nbytes : 1);
    for (int64_t k = 0; k < n; k++) memcpy((unsigned char *)lit->data + (size_t)k * es, one, es);
    return lit;
  }
  /* A large declared size is only allocated once the text has been checked
   * against it (a dry run): f32[11111111114] constant({1, 2}) is an error,
   * not a 44 GB allocation. */
  Lit L = {P, shape, NULL, es, 0};
  if (lit->nbytes > DRY_RUN_BYTES && fill(&L, v, 0, index)) return NULL;
  lit->data = hlp_alloc(P, lit->nbytes);
  L.data = lit->data;
  L.next = 0;
  if (fill(&L, v, 0, index)) return NULL;
  return lit;
}

static HloLiteral *literal_of(HlpParser *P, const HloShape *shape, HloVal **items, int32_t n,
                              uint32_t off, int depth);

static HloLiteral *tuple_literal(HlpParser *P, const HloShape *shape, const HloVal *v, int depth) {
  if (v->kind != HLO_VAL_PAREN) {
    hlp_error(P, v->off, "expected '(' for a tuple literal");
    return NULL;
  }
  HloLiteral *lit = hlp_alloc(P, sizeof *lit);
  lit->shape = shape;
  lit->ntuple = shape->ntuple;
  lit->tuple = hlp_alloc(P, (size_t)(shape->ntuple ? shape->ntuple : 1) * sizeof *lit->tuple);
  int32_t i = 0;
  for (int32_t e = 0; e < shape->ntuple; e++) {
    if (i >= v->nitems) {
      hlp_error(P, v->off, "tuple literal has fewer elements than its shape (%d)", (int)shape->ntuple);
      return NULL;
    }
    if (e && v->items[i]->sep != 2) {
      hlp_error(P, v->items[i]->off, "expected ',' between tuple literal elements");
      return NULL;
    }
    int32_t j = i + 1;
    while (j < v->nitems && v->items[j]->sep != 2) j++;
    HloLiteral *el = literal_of(P, &shape->tuple[e], v->items + i, j - i, v->items[i]->off, depth + 1);
    if (!el) return NULL;
    lit->tuple[e] = *el;
    i = j;
  }
  if (i != v->nitems) {
    hlp_error(P, v->items[i]->off, "tuple literal has more elements than its shape (%d)",
              (int)shape->ntuple);
    return NULL;
  }
  return lit;
}

static HloLiteral *literal_of(HlpParser *P, const HloShape *shape, HloVal **items, int32_t n,
                              uint32_t off, int depth) {
  if (depth > HLX_MAX_DEPTH) {
    hlp_error(P, off, "literal nested too deeply");
    return NULL;
  }
  /* An element written with its own shape (custom-call literal= tuples). */
  if (n == 2 && (items[0]->kind == HLO_VAL_SHAPE)) {
    if (!hlp_shape_compatible(items[0]->shape, shape)) {
      hlp_error(P, items[0]->off, "literal element shape does not match");
      return NULL;
    }
    items++;
    n--;
  }
  if (n != 1) {
    hlp_error(P, n ? items[1]->off : off, n ? "unexpected item in literal" : "expected a literal");
    return NULL;
  }
  if (shape->dtype == HLO_TUPLE) return tuple_literal(P, shape, items[0], depth);
  return array_literal(P, shape, items[0]);
}

HloLiteral *hlp_literal(HlpParser *P, const HloShape *shape, HloVal **items, int32_t n,
                        uint32_t off) {
  return literal_of(P, shape, items, n, off, 0);
}
