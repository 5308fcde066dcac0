/* attrs.c: backend_config -> FFI attributes. A recursive-descent parser over
 * the tokens of attrs.re for MLIR's attribute-dictionary syntax, building a
 * tree of HlfAttr in an arena (entries sorted by name at every level), and
 * the conversion of that tree into nested XLA_FFI_Attrs structs.
 *
 * Accepted values (spec/ffi.md 3.8): true/false; integers (decimal or hex)
 * with an optional type (iN/siN/uiN, N in 8..64; i1 -> pred); floats with an
 * optional f16/bf16/f32/f64 type (hex bit patterns only when typed as a
 * float); untyped integers are i64 and untyped floats f64, as in MLIR;
 * "strings" with \" \\ \n \t \XX escapes; nested dictionaries;
 * array<T: ...> for T in i8..i64/f32/f64; dense<...> : tensor<...> for int
 * and float element types. Everything else is an error at its offset.
 * i1, f16 and bf16 scalars go beyond what XLA converts (it rejects them).
 *
 * Also: mapping an offset in the decoded backend_config back to the HLO
 * source through the quoted form's escapes. Not here: the lexer (attrs.re).
 */
#include "ffi/internal.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = 64, MAX_ELEMENTS = 1 << 26 };

typedef struct P {
  HlcArena *a;
  const char *s;      /* NUL-terminated copy of the text */
  size_t len;
  size_t pos;         /* end of the last consumed token */
  HlfTok t;           /* lookahead */
  size_t err_off;
  char *err;          /* first error (malloc'd) */
  int depth;
} P;

static void advance(P *p) {
  p->pos = p->t.off + p->t.len;
  p->t = hlf_lex(p->s, p->len, p->pos);
}

static int fail(P *p, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(P *p, size_t off, const char *fmt, ...) {
  if (p->err) return -1;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&p->err, fmt, ap) < 0) p->err = NULL;
  va_end(ap);
  if (!p->err) p->err = strdup("out of memory");
  p->err_off = off;
  return -1;
}

static bool is_word(const P *p, const HlfTok *t, const char *w) {
  size_t n = strlen(w);
  return t->kind == HLF_T_IDENT && t->len == n && memcmp(p->s + t->off, w, n) == 0;
}

/* Describe the lookahead for "expected X, got Y" messages. */
static const char *tok_desc(const P *p, char *buf, size_t n) {
  switch (p->t.kind) {
  case HLF_T_EOF: return "end of backend_config";
  case HLF_T_BADSTRING: return "an unterminated string";
  case HLF_T_STRING: return "a string";
  default:
    snprintf(buf, n, "'%.*s'", (int)(p->t.len > 20 ? 20 : p->t.len), p->s + p->t.off);
    return buf;
  }
}

static int expect(P *p, HlfTokKind k, const char *what) {
  if (p->t.kind == k) { advance(p); return 0; }
  char b[40];
  return fail(p, p->t.off, "expected %s, got %s", what, tok_desc(p, b, sizeof b));
}

/* ---- Names and types ---------------------------------------------------- */

int hlf_name_cmp(const char *a, size_t na, const char *b, size_t nb) {
  int c = memcmp(a, b, na < nb ? na : nb);   /* memcmp compares unsigned bytes */
  if (c) return c;
  return na < nb ? -1 : na > nb ? 1 : 0;
}

typedef enum { TY_SIGNLESS, TY_SIGNED, TY_UNSIGNED, TY_FLOAT } TyKind;
typedef struct Ty { TyKind kind; int bits; XLA_FFI_DataType dtype; } Ty;

static const struct { const char *name; Ty ty; } type_names[] = {
  {"i1", {TY_SIGNLESS, 1, XLA_FFI_DataType_PRED}},
  {"i8", {TY_SIGNLESS, 8, XLA_FFI_DataType_S8}},
  {"i16", {TY_SIGNLESS, 16, XLA_FFI_DataType_S16}},
  {"i32", {TY_SIGNLESS, 32, XLA_FFI_DataType_S32}},
  {"i64", {TY_SIGNLESS, 64, XLA_FFI_DataType_S64}},
  {"si8", {TY_SIGNED, 8, XLA_FFI_DataType_S8}},
  {"si16", {TY_SIGNED, 16, XLA_FFI_DataType_S16}},
  {"si32", {TY_SIGNED, 32, XLA_FFI_DataType_S32}},
  {"si64", {TY_SIGNED, 64, XLA_FFI_DataType_S64}},
  {"ui8", {TY_UNSIGNED, 8, XLA_FFI_DataType_U8}},
  {"ui16", {TY_UNSIGNED, 16, XLA_FFI_DataType_U16}},
  {"ui32", {TY_UNSIGNED, 32, XLA_FFI_DataType_U32}},
  {"ui64", {TY_UNSIGNED, 64, XLA_FFI_DataType_U64}},
  {"f16", {TY_FLOAT, 16, XLA_FFI_DataType_F16}},
  {"bf16", {TY_FLOAT, 16, XLA_FFI_DataType_BF16}},
  {"f32", {TY_FLOAT, 32, XLA_FFI_DataType_F32}},
  {"f64", {TY_FLOAT, 64, XLA_FFI_DataType_F64}},
};

const char *hlf_ffi_dtype_name(XLA_FFI_DataType t) {
  if (t == XLA_FFI_DataType_PRED) return "i1";
  for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
    if (type_names[i].ty.dtype == t && type_names[i].ty.kind != TY_SIGNED) return type_names[i].name;
  return "?";
}

static size_t dtype_size(XLA_FFI_DataType t) {
  switch (t) {
  case XLA_FFI_DataType_PRED: case XLA_FFI_DataType_S8: case XLA_FFI_DataType_U8: return 1;
  case XLA_FFI_DataType_S16: case XLA_FFI_DataType_U16: case XLA_FFI_DataType_F16:
  case XLA_FFI_DataType_BF16: return 2;
  case XLA_FFI_DataType_S32: case XLA_FFI_DataType_U32: case XLA_FFI_DataType_F32: return 4;
  default: return 8;
  }
}

/* Parse the type name at the lookahead (an identifier). */
static int parse_type(P *p, Ty *ty) {
  if (p->t.kind != HLF_T_IDENT) {
    char b[40];
    return fail(p, p->t.off, "expected a type, got %s", tok_desc(p, b, sizeof b));
  }
  for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
    if (is_word(p, &p->t, type_names[i].name)) {
      *ty = type_names[i].ty;
      advance(p);
      return 0;
    }
  return fail(p, p->t.off, "unsupported type '%.*s' (FFI attributes take i1, i8..i64, si8..si64, "
              "ui8..ui64, f16, bf16, f32, f64)", (int)p->t.len, p->s + p->t.off);
}

/* ---- Numbers ------------------------------------------------------------ */

/* A number literal: optional '-', then an INT, HEX or FLOAT token. */
typedef struct Lit { bool neg; HlfTok t; size_t off; } Lit;

static int parse_lit(P *p, Lit *l) {
  l->off = p->t.off;
  l->neg = false;
  if (p->t.kind == HLF_T_MINUS) { l->neg = true; advance(p); }
  if (p->t.kind != HLF_T_INT && p->t.kind != HLF_T_HEX && p->t.kind != HLF_T_FLOAT) {
    char b[40];
    return fail(p, p->t.off, "expected a number, got %s", tok_desc(p, b, sizeof b));
  }
  l->t = p->t;
  advance(p);
  return 0;
}

/* Magnitude of an INT or HEX literal; -1 if it does not fit 64 bits. */
static int lit_magnitude(P *p, const Lit *l, uint64_t *out) {
  const char *s = p->s + l->t.off;
  size_t n = l->t.len;
  uint64_t v = 0;
  if (l->t.kind == HLF_T_HEX) {
    for (size_t i = 2; i < n; i++) {
      if (v >> 60) return fail(p, l->off, "integer literal %.*s does not fit in 64 bits", (int)n, s);
      int c = s[i];
      v = v * 16 + (uint64_t)(c <= '9' ? c - '0' : (c | 32) - 'a' + 10);
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      uint64_t d = (uint64_t)(s[i] - '0');
      if (v > (UINT64_MAX - d) / 10)
        return fail(p, l->off, "integer literal %.*s does not fit in 64 bits", (int)n, s);
      v = v * 10 + d;
    }
  }
  *out = v;
  return 0;
}

static void store_int(void *dst, XLA_FFI_DataType t, uint64_t bits) {
  switch (dtype_size(t)) {
  case 1: { uint8_t v = (uint8_t)bits; memcpy(dst, &v, 1); break; }
  case 2: { uint16_t v = (uint16_t)bits; memcpy(dst, &v, 2); break; }
  case 4: { uint32_t v = (uint32_t)bits; memcpy(dst, &v, 4); break; }
  default: memcpy(dst, &bits, 8);
  }
}

/* IEEE-style narrow float (with infinities) from a double, round to nearest
 * even. *ovf when a finite value overflows. */
static uint64_t narrow_bits(double v, int ebits, int mbits, bool *ovf) {
  uint64_t sign = signbit(v) ? 1 : 0, out;
  int bias = (1 << (ebits - 1)) - 1;
  v = fabs(v);
  if (isnan(v)) {
    out = ((uint64_t)((1 << ebits) - 1) << mbits) | (1ull << (mbits - 1));
  } else if (isinf(v)) {
    out = (uint64_t)((1 << ebits) - 1) << mbits;
  } else if (v == 0) {
    out = 0;
  } else {
    int e;
    frexp(v, &e);
    int ex = e - 1;                          /* v = 1.f * 2^ex */
    if (ex < 1 - bias) {                     /* subnormal (may round up to the smallest normal) */
      out = (uint64_t)nearbyint(ldexp(v, mbits - (1 - bias)));
    } else {
      double r = nearbyint(ldexp(v, mbits - ex));
      if (r >= ldexp(1, mbits + 1)) { r /= 2; ex++; }
      if (ex > bias) {
        *ovf = true;
        out = (uint64_t)((1 << ebits) - 1) << mbits;
      } else {
        out = ((uint64_t)(ex + bias) << mbits) | ((uint64_t)r - (1ull << mbits));
      }
    }
  }
  return (sign << (ebits + mbits)) | out;
}

/* Convert literal l to type ty into dst. */
static int convert_lit(P *p, const Lit *l, const Ty *ty, void *dst) {
  const char *txt = p->s + l->t.off;
  int n = (int)l->t.len;
  if (ty->kind == TY_FLOAT) {
    if (l->t.kind == HLF_T_INT)
      return fail(p, l->off, "unexpected decimal integer literal for a floating point value "
                  "(add a trailing '.', e.g. %.*s.0)", n, txt);
    if (l->t.kind == HLF_T_HEX) {              /* a bit pattern */
      uint64_t bits;
      if (lit_magnitude(p, l, &bits)) return -1;
      if (l->neg) return fail(p, l->off, "a hexadecimal float bit pattern cannot be negative");
      if (ty->bits < 64 && bits >> ty->bits)
        return fail(p, l->off, "hexadecimal float literal %.*s does not fit in %d bits", n, txt,
                    ty->bits);
      store_int(dst, ty->dtype, bits);
      return 0;
    }
    double v = strtod(txt, NULL);
    if (l->neg) v = -v;
    if (isinf(v)) return fail(p, l->off, "float literal %.*s is out of range", n, txt);
    bool ovf = false;
    if (ty->dtype == XLA_FFI_DataType_F64) {
      memcpy(dst, &v, 8);
    } else if (ty->dtype == XLA_FFI_DataType_F32) {
      float f = (float)v;
      ovf = isinf(f);
      memcpy(dst, &f, 4);
    } else {
      uint16_t h = (uint16_t)(ty->dtype == XLA_FFI_DataType_F16 ? narrow_bits(v, 5, 10, &ovf)
                                                                 : narrow_bits(v, 8, 7, &ovf));
      memcpy(dst, &h, 2);
    }
    if (ovf)
      return fail(p, l->off, "float literal %.*s is out of range for %s", n, txt,
                  hlf_ffi_dtype_name(ty->dtype));
    return 0;
  }
  if (l->t.kind == HLF_T_FLOAT)
    return fail(p, l->off, "floating point literal %.*s is not valid for integer type %s", n, txt,
                hlf_ffi_dtype_name(ty->dtype));
  uint64_t m;
  if (lit_magnitude(p, l, &m)) return -1;
  int b = ty->bits;
  uint64_t smax = b == 64 ? (uint64_t)INT64_MAX : (1ull << (b - 1)) - 1;   /* signed max */
  uint64_t umax = b == 64 ? UINT64_MAX : (1ull << b) - 1;
  bool ok;
  if (ty->kind == TY_UNSIGNED) ok = !l->neg || m == 0 ? m <= umax : false;
  else if (ty->kind == TY_SIGNED) ok = l->neg ? m <= smax + 1 : m <= smax;
  else ok = l->neg ? m <= smax + 1 : m <= umax;    /* signless: either reading */
  if (b == 1) ok = m <= 1;
  if (!ok)
    return fail(p, l->off, "integer literal %s%.*s is out of range for %si%d", l->neg ? "-" : "",
                n, txt, ty->kind == TY_SIGNED ? "s" : ty->kind == TY_UNSIGNED ? "u" : "", b);
  uint64_t bits = l->neg ? (uint64_t)0 - m : m;
  if (b == 1) bits &= 1;
  store_int(dst, ty->dtype, bits);
  return 0;
}

/* ---- Strings ------------------------------------------------------------ */

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  c |= 32;
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decode the string token t (quotes included); escapes \" \\ \n \t \XX. */
static int decode_string(P *p, const HlfTok *t, const char **out, size_t *outlen) {
  const char *s = p->s + t->off + 1;
  size_t n = t->len - 2;
  char *d = hlc_arena_alloc(p->a, n + 1);
  if (!d) return fail(p, t->off, "out of memory");
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '\\') { d[k++] = s[i]; continue; }
    size_t at = t->off + 1 + i;
    char c = s[i + 1];
    if (c == '"' || c == '\\') d[k++] = c, i++;
    else if (c == 'n') d[k++] = '\n', i++;
    else if (c == 't') d[k++] = '\t', i++;
    else if (i + 2 < n && hexval(c) >= 0 && hexval(s[i + 2]) >= 0) {
      d[k++] = (char)(hexval(c) * 16 + hexval(s[i + 2]));
      i += 2;
    } else {
      return fail(p, at, "unknown escape in string literal: '\\%c' (use \\\", \\\\, \\n, \\t or "
                  "\\XX with two hex digits)", c);
    }
  }
  d[k] = 0;
  *out = d;
  *outlen = k;
  return 0;
}

/* ---- Values ------------------------------------------------------------- */

static int parse_value(P *p, HlfAttr *v);

/* A growable list of literals (array<>, dense<>). */
typedef struct Lits { Lit *v; size_t n, cap; } Lits;
static int lits_push(P *p, Lits *ls, const Lit *l) {
  if (ls->n == ls->cap) {
    size_t cap = ls->cap ? 2 * ls->cap : 16;
    if (cap > MAX_ELEMENTS) return fail(p, l->off, "too many elements (limit %d)", MAX_ELEMENTS);
    Lit *nv = realloc(ls->v, cap * sizeof *nv);
    if (!nv) return fail(p, l->off, "out of memory");
    ls->v = nv;
    ls->cap = cap;
  }
  ls->v[ls->n++] = *l;
  return 0;
}

/* Element types of array<> and dense<>: what XLA turns into FFI arrays. */
static int check_array_type(P *p, const Ty *ty, size_t off, const char *what) {
  if (ty->bits == 1 || (ty->kind == TY_FLOAT && ty->bits == 16))
    return fail(p, off, "%s of %s is not supported as an FFI attribute (use i8..i64, ui8..ui64 "
                "in dense<>, f32 or f64)", what, hlf_ffi_dtype_name(ty->dtype));
  return 0;
}

static int convert_all(P *p, const Lits *ls, const Ty *ty, HlfAttr *v, size_t count) {
  size_t es = dtype_size(ty->dtype);
  v->type = XLA_FFI_AttrType_ARRAY;
  v->dtype = ty->dtype;
  v->count = count;
  v->data = hlc_arena_alloc(p->a, count * es + 1);
  if (!v->data) return fail(p, p->t.off, "out of memory");
  for (size_t i = 0; i < ls->n; i++)
    if (convert_lit(p, &ls->v[i], ty, (char *)v->data + i * es)) return -1;
  for (size_t i = ls->n; i < count; i++)   /* splat */
    memcpy((char *)v->data + i * es, v->data, es);
  return 0;
}

/* array<T> or array<T: e, e, ...> */
static int parse_array(P *p, HlfAttr *v) {
  size_t off = p->t.off;
  advance(p);
  if (expect(p, HLF_T_LT, "'<' after 'array'")) return -1;
  Ty ty;
  size_t toff = p->t.off;
  if (parse_type(p, &ty) || check_array_type(p, &ty, toff, "array<>")) return -1;
  if (ty.kind != TY_SIGNLESS && ty.kind != TY_FLOAT)
    return fail(p, toff, "array<> takes signless integer or float elements (i8..i64, f32, f64)");
  Lits ls = {0};
  int rc = 0;
  if (p->t.kind == HLF_T_COLON) {
    advance(p);
    for (;;) {
      Lit l;
      if ((rc = parse_lit(p, &l)) || (rc = lits_push(p, &ls, &l))) break;
      if (p->t.kind == HLF_T_COMMA) { advance(p); continue; }
      break;
    }
  }
  if (!rc) rc = expect(p, HLF_T_GT, "',' or '>' in array<>");
  /* Decimal integers are fine in float arrays (MLIR reads them as values). */
  if (!rc && ty.kind == TY_FLOAT)
    for (size_t i = 0; i < ls.n; i++)
      if (ls.v[i].t.kind == HLF_T_INT) ls.v[i].t.kind = HLF_T_FLOAT;
  if (!rc) rc = convert_all(p, &ls, &ty, v, ls.n);
  free(ls.v);
  (void)off;
  return rc;
}

/* Nested [ ... ] lists of literals inside dense<>, flattened. */
static int parse_dense_list(P *p, Lits *ls, int depth) {
  if (depth > MAX_DEPTH) return fail(p, p->t.off, "dense<> literal nested too deeply");
  if (p->t.kind != HLF_T_LBRACK) {
    Lit l;
    if (is_word(p, &p->t, "true") || is_word(p, &p->t, "false"))
      return fail(p, p->t.off, "dense<> of i1 (booleans) is not supported as an FFI attribute");
    return parse_lit(p, &l) || lits_push(p, ls, &l) ? -1 : 0;
  }
  advance(p);
  if (p->t.kind == HLF_T_RBRACK) { advance(p); return 0; }
  for (;;) {
    if (parse_dense_list(p, ls, depth + 1)) return -1;
    if (p->t.kind == HLF_T_COMMA) { advance(p); continue; }
    return expect(p, HLF_T_RBRACK, "',' or ']' in dense<> literal");
  }
}

/* dense<...> : tensor<DIMSxT> (or vector<>) */
static int parse_dense(P *p, HlfAttr *v) {
  advance(p);
  if (expect(p, HLF_T_LT, "'<' after 'dense'")) return -1;
  Lits ls = {0};
  HlfTok hexstr = {HLF_T_EOF, 0, 0};
  int rc = 0;
  if (p->t.kind == HLF_T_STRING) {          /* dense<"0x0102..."> raw bytes */
    hexstr = p->t;
    advance(p);
  } else if (p->t.kind != HLF_T_GT) {
    rc = parse_dense_list(p, &ls, 0);
  }
  if (!rc) rc = expect(p, HLF_T_GT, "'>' closing dense<");
  if (!rc) rc = expect(p, HLF_T_COLON, "':' and a tensor type after dense<...>");
  if (!rc && !is_word(p, &p->t, "tensor") && !is_word(p, &p->t, "vector")) {
    char b[40];
    rc = fail(p, p->t.off, "expected tensor<...> after dense<...> :, got %s", tok_desc(p, b, sizeof b));
  }
  size_t count = 1;
  Ty ty;
  if (!rc) {
    advance(p);
    rc = expect(p, HLF_T_LT, "'<' after tensor");
  }
  while (!rc) {
    HlfTok d = hlf_lex_dim(p->s, p->len, p->pos);
    if (d.kind != HLF_T_DIM) break;
    if (p->s[d.off] == '?') { rc = fail(p, d.off, "dynamic dimensions are not allowed in dense<>"); break; }
    uint64_t n = strtoull(p->s + d.off, NULL, 10);
    if (n > MAX_ELEMENTS || count * n > MAX_ELEMENTS) {
      rc = fail(p, d.off, "tensor too large for an attribute (limit %d elements)", MAX_ELEMENTS);
      break;
    }
    count *= (size_t)n;
    p->pos = d.off + d.len;
    p->t = hlf_lex(p->s, p->len, p->pos);
  }
  size_t toff = p->t.off;
  if (!rc) rc = parse_type(p, &ty) || check_array_type(p, &ty, toff, "dense<>");
  if (!rc) rc = expect(p, HLF_T_GT, "'>' closing tensor<");
  if (!rc && hexstr.len) {
    const char *bytes;
    size_t nb;
    size_t es = dtype_size(ty.dtype);
    if (decode_string(p, &hexstr, &bytes, &nb)) { rc = -1; goto out; }
    if (nb < 2 || bytes[0] != '0' || (bytes[1] | 32) != 'x' || (nb - 2) % 2) {
      rc = fail(p, hexstr.off, "dense<\"...\"> must hold 0x followed by hex byte pairs");
      goto out;
    }
    size_t raw = (nb - 2) / 2;
    if (raw != count * es && raw != es) {
      rc = fail(p, hexstr.off, "dense<\"0x...\"> holds %zu bytes; tensor needs %zu", raw, count * es);
      goto out;
    }
    v->type = XLA_FFI_AttrType_ARRAY;
    v->dtype = ty.dtype;
    v->count = count;
    unsigned char *dst = hlc_arena_alloc(p->a, count * es + 1);
    if (!dst) { rc = fail(p, hexstr.off, "out of memory"); goto out; }
    for (size_t i = 0; i < raw; i++) {
      int hi = hexval(bytes[2 + 2 * i]), lo = hexval(bytes[3 + 2 * i]);
      if (hi < 0 || lo < 0) { rc = fail(p, hexstr.off, "bad hex digit in dense<\"0x...\">"); goto out; }
      dst[i] = (unsigned char)(hi * 16 + lo);
    }
    for (size_t i = 1; raw == es && i < count; i++) memcpy(dst + i * es, dst, es);
    v->data = dst;
  } else if (!rc) {
    if (ls.n != count && !(ls.n == 1 && count > 0))
      rc = fail(p, toff, "dense<> has %zu elements but its tensor type has %zu", ls.n, count);
    if (!rc && ty.kind == TY_FLOAT)
      for (size_t i = 0; i < ls.n; i++)
        if (ls.v[i].t.kind == HLF_T_INT) ls.v[i].t.kind = HLF_T_FLOAT;
    if (!rc) rc = convert_all(p, &ls, &ty, v, count);
  }
out:
  free(ls.v);
  return rc;
}

static int parse_number(P *p, HlfAttr *v) {
  Lit l;
  if (parse_lit(p, &l)) return -1;
  Ty ty;
  if (p->t.kind == HLF_T_COLON) {
    advance(p);
    if (parse_type(p, &ty)) return -1;
  } else if (l.t.kind == HLF_T_FLOAT) {
    ty = (Ty){TY_FLOAT, 64, XLA_FFI_DataType_F64};      /* MLIR's default float type */
  } else if (l.t.kind == HLF_T_HEX) {
    ty = (Ty){TY_SIGNLESS, 64, XLA_FFI_DataType_S64};
  } else {
    ty = (Ty){TY_SIGNLESS, 64, XLA_FFI_DataType_S64};   /* MLIR's default integer type */
  }
  v->type = XLA_FFI_AttrType_SCALAR;
  v->dtype = ty.dtype;
  v->data = hlc_arena_alloc(p->a, 8);
  if (!v->data) return fail(p, l.off, "out of memory");
  return convert_lit(p, &l, &ty, v->data);
}

static int parse_dict(P *p, HlfAttr *d);

static int parse_value(P *p, HlfAttr *v) {
  char b[40];
  switch (p->t.kind) {
  case HLF_T_LBRACE:
    return parse_dict(p, v);
  case HLF_T_STRING:
    v->type = XLA_FFI_AttrType_STRING;
    if (decode_string(p, &p->t, &v->str, &v->count)) return -1;
    advance(p);
    return 0;
  case HLF_T_BADSTRING:
    return fail(p, p->t.off, "unterminated string literal (expected '\"')");
  case HLF_T_MINUS: case HLF_T_INT: case HLF_T_HEX: case HLF_T_FLOAT:
    return parse_number(p, v);
  case HLF_T_IDENT:
    if (is_word(p, &p->t, "true") || is_word(p, &p->t, "false")) {
      v->type = XLA_FFI_AttrType_SCALAR;
      v->dtype = XLA_FFI_DataType_PRED;
      v->data = hlc_arena_alloc(p->a, 8);
      if (!v->data) return fail(p, p->t.off, "out of memory");
      *(uint8_t *)v->data = is_word(p, &p->t, "true");
      advance(p);
      if (p->t.kind == HLF_T_COLON) {          /* `true : i1` is the same bool */
        advance(p);
        Ty ty;
        size_t toff = p->t.off;
        if (parse_type(p, &ty)) return -1;
        if (ty.bits != 1) return fail(p, toff, "true/false take type i1, not %s", hlf_ffi_dtype_name(ty.dtype));
      }
      return 0;
    }
    if (is_word(p, &p->t, "array")) return parse_array(p, v);
    if (is_word(p, &p->t, "dense")) return parse_dense(p, v);
    if (is_word(p, &p->t, "unit"))
      return fail(p, p->t.off, "unit attributes are not supported as FFI attributes");
    return fail(p, p->t.off, "unsupported attribute value '%.*s' (FFI attributes are numbers, "
                "true/false, strings, array<>, dense<> and dictionaries)", (int)p->t.len,
                p->s + p->t.off);
  case HLF_T_LBRACK:
    return fail(p, p->t.off, "array attributes [...] are not supported as FFI attributes; "
                "use array<i64: ...> or dense<...>");
  case HLF_T_SYMBOL:
    return fail(p, p->t.off, "symbol references are not supported as FFI attributes");
  case HLF_T_HASH:
    return fail(p, p->t.off, "dialect attributes and aliases (#...) are not supported as FFI attributes");
  default:
    return fail(p, p->t.off, "expected an attribute value, got %s", tok_desc(p, b, sizeof b));
  }
}

static int entry_cmp(const void *x, const void *y) {
  const HlfAttr *a = x, *b = y;
  int c = hlf_name_cmp(a->name, a->name_len, b->name, b->name_len);
  return c ? c : (a->off < b->off ? -1 : a->off > b->off);
}

/* { name = value, ... } -> sorted DICTIONARY */
static int parse_dict(P *p, HlfAttr *d) {
  if (++p->depth > MAX_DEPTH) return fail(p, p->t.off, "dictionary nested too deeply");
  if (expect(p, HLF_T_LBRACE, "'{' (backend_config must be an attribute dictionary)")) return -1;
  HlfAttr *v = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  if (p->t.kind == HLF_T_RBRACE) advance(p);
  else for (;;) {
    HlfAttr e;
    memset(&e, 0, sizeof e);
    e.off = (uint32_t)p->t.off;
    if (p->t.kind == HLF_T_IDENT) {
      e.name = p->s + p->t.off;
      e.name_len = p->t.len;
      advance(p);
    } else if (p->t.kind == HLF_T_STRING) {
      if ((rc = decode_string(p, &p->t, &e.name, &e.name_len))) break;
      advance(p);
    } else {
      char b[40];
      rc = fail(p, p->t.off, "expected an attribute name, got %s", tok_desc(p, b, sizeof b));
      break;
    }
    if (p->t.kind != HLF_T_EQ) {
      if (p->t.kind == HLF_T_COMMA || p->t.kind == HLF_T_RBRACE)
        rc = fail(p, e.off, "attribute '%.*s' has no value (unit attributes are not supported "
                  "as FFI attributes)", (int)e.name_len, e.name);
      else
        rc = expect(p, HLF_T_EQ, "'=' after the attribute name");
      break;
    }
    advance(p);
    if ((rc = parse_value(p, &e))) break;
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      HlfAttr *nv = realloc(v, cap * sizeof *nv);
      if (!nv) { rc = fail(p, e.off, "out of memory"); break; }
      v = nv;
    }
    v[n++] = e;
    if (p->t.kind == HLF_T_COMMA) { advance(p); continue; }
    rc = expect(p, HLF_T_RBRACE, "',' or '}' in attribute dictionary");
    break;
  }
  if (!rc && n) {
    qsort(v, n, sizeof *v, entry_cmp);
    for (size_t i = 1; i < n && !rc; i++)
      if (hlf_name_cmp(v[i - 1].name, v[i - 1].name_len, v[i].name, v[i].name_len) == 0)
        rc = fail(p, v[i].off > v[i - 1].off ? v[i].off : v[i - 1].off,
                  "duplicate attribute name '%.*s'", (int)v[i].name_len, v[i].name);
  }
  if (!rc) {
    d->type = XLA_FFI_AttrType_DICTIONARY;
    d->count = n;
    d->items = n ? hlc_arena_memdup(p->a, v, n * sizeof *v) : NULL;
    if (n && !d->items) rc = fail(p, p->pos, "out of memory");
  }
  free(v);
  p->depth--;
  return rc;
}

int hlf_attrs_parse(HlcArena *a, const char *text, size_t len, HlfAttr *root, size_t *err_off,
                    char **err) {
  memset(root, 0, sizeof *root);
  root->type = XLA_FFI_AttrType_DICTIONARY;
  *err = NULL;
  *err_off = 0;
  P p;
  memset(&p, 0, sizeof p);
  p.a = a;
  p.len = len;
  /* A NUL-terminated copy (the text may hold NUL bytes: the lexer flags them). */
  char *c = hlc_arena_alloc(a, len + 1);
  if (!c) { *err = strdup("out of memory"); return -1; }
  if (len) memcpy(c, text, len);
  p.s = c;
  p.t = hlf_lex(p.s, p.len, 0);
  if (p.t.kind == HLF_T_EOF) return 0;             /* empty config: no attributes */
  if (parse_dict(&p, root) == 0 && p.t.kind != HLF_T_EOF) {
    char b[40];
    fail(&p, p.t.off, "unexpected %s after the attribute dictionary", tok_desc(&p, b, sizeof b));
  }
  if (p.err) {
    *err = p.err;
    *err_off = p.err_off;
    memset(root, 0, sizeof *root);
    root->type = XLA_FFI_AttrType_DICTIONARY;
    return -1;
  }
  return 0;
}

int hlf_attrs_insert(HlcArena *a, HlfAttr *d, const HlfAttr *e) {
  size_t i = 0;
  while (i < d->count) {
    int c = hlf_name_cmp(d->items[i].name, d->items[i].name_len, e->name, e->name_len);
    if (c == 0) return -1;
    if (c > 0) break;
    i++;
  }
  HlfAttr *v = hlc_arena_alloc(a, (d->count + 1) * sizeof *v);
  if (!v) return -1;
  if (i) memcpy(v, d->items, i * sizeof *v);
  v[i] = *e;
  if (d->count > i) memcpy(v + i + 1, d->items + i, (d->count - i) * sizeof *v);
  d->items = v;
  d->count++;
  return 0;
}

/* ---- Tree -> FFI structs ------------------------------------------------- */

XLA_FFI_Attrs *hlf_attrs_to_ffi(HlcArena *a, const HlfAttr *d) {
  XLA_FFI_Attrs *out = hlc_arena_alloc(a, sizeof *out);
  size_t n = d->count;
  if (!out) return NULL;
  out->struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  out->size = (int64_t)n;
  if (!n) return out;
  out->types = hlc_arena_alloc(a, n * sizeof *out->types);
  out->names = hlc_arena_alloc(a, n * sizeof *out->names);
  out->attrs = hlc_arena_alloc(a, n * sizeof *out->attrs);
  XLA_FFI_ByteSpan *names = hlc_arena_alloc(a, n * sizeof *names);
  if (!out->types || !out->names || !out->attrs || !names) return NULL;
  for (size_t i = 0; i < n; i++) {
    const HlfAttr *e = &d->items[i];
    names[i] = (XLA_FFI_ByteSpan){e->name, e->name_len};
    out->names[i] = &names[i];
    out->types[i] = e->type;
    void *payload = NULL;
    switch (e->type) {
    case XLA_FFI_AttrType_SCALAR: {
      XLA_FFI_Scalar *s = hlc_arena_alloc(a, sizeof *s);
      if (s) *s = (XLA_FFI_Scalar){e->dtype, e->data};
      payload = s;
      break;
    }
    case XLA_FFI_AttrType_ARRAY: {
      XLA_FFI_Array *arr = hlc_arena_alloc(a, sizeof *arr);
      if (arr) *arr = (XLA_FFI_Array){e->dtype, e->count, e->data};
      payload = arr;
      break;
    }
    case XLA_FFI_AttrType_STRING: {
      XLA_FFI_ByteSpan *sp = hlc_arena_alloc(a, sizeof *sp);
      if (sp) *sp = (XLA_FFI_ByteSpan){e->str, e->count};
      payload = sp;
      break;
    }
    case XLA_FFI_AttrType_DICTIONARY:
      payload = hlf_attrs_to_ffi(a, e);
      break;
    }
    if (!payload) return NULL;
    out->attrs[i] = payload;
  }
  return out;
}

/* ---- Source offsets through the quoted form's escapes ------------------- */

/* Length in the source of the C escape at s[0] == '\\', and how many
 * decoded bytes it stands for (\u and \U become UTF-8). */
static size_t escape_len(const char *s, size_t avail, size_t *nbytes) {
  *nbytes = 1;
  if (avail < 2) return avail;
  char c = s[1];
  size_t i = 2;
  if (c >= '0' && c <= '7') {
    while (i < 4 && i < avail && s[i] >= '0' && s[i] <= '7') i++;
  } else if (c == 'x') {
    while (i < avail && hexval(s[i]) >= 0) i++;
  } else if (c == 'u' || c == 'U') {
    size_t want = c == 'u' ? 4 : 8;
    uint32_t cp = 0;
    while (i < 2 + want && i < avail && hexval(s[i]) >= 0) cp = cp * 16 + (uint32_t)hexval(s[i++]);
    *nbytes = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return i;
}

size_t hlf_config_source_offset(const HloModule *m, const HloInstr *ins, size_t raw_off) {
  size_t start = ins->backend_config_off;
  if (!m || !m->source || start > m->source_len) return start;
  if (!ins->backend_config_quoted) {
    size_t o = start + raw_off;
    return o > m->source_len ? m->source_len : o;
  }
  const char *s = m->source;
  size_t i = start, k = 0;
  while (k < raw_off && i < m->source_len) {
    size_t nb = 1;
    size_t step = s[i] == '\\' ? escape_len(s + i, m->source_len - i, &nb) : 1;
    if (k + nb > raw_off) break;    /* inside a multi-byte escape: point at it */
    i += step;
    k += nb;
  }
  return i;
}
