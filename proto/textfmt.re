/* textfmt.re: protocol-buffer text format (.pbtxt, as protoc and XLA's
 * dumps write it) to the binary wire format, driven by protobuf-c's
 * descriptors of proto/hlo.proto; everything after that is the binary path.
 *
 * protobuf-c has no text-format reader. This one takes what TextFormat
 * prints and parses: `name: value`, `name { ... }` / `name < ... >`, lists
 * `name: [a, b]`, enum names, `nan`/`inf`, C escapes in strings (octal, hex),
 * adjacent strings concatenated, `#` comments, ',' or ';' between fields.
 * Fields the schema does not declare (and `[type/name]` extensions) are
 * skipped, as a binary reader skips unknown fields. Errors are positioned
 * (FILE:LINE:COL) and name the message and field.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <protobuf-c/protobuf-c.h>
#include "proto/proto.h"
#include "proto/hlo.pb-c.h"
#include "ir/print.h"

enum { T_EOF, T_IDENT, T_NUMBER, T_STRING, T_PUNCT };

typedef struct Tok { int kind; size_t off, len; } Tok;

typedef struct Tx {
  const char *src;     /* NUL-terminated copy */
  size_t len, pos;
  const char *file;
  HlcDiags *d;
  bool failed;
  Tok peeked;
  bool has_peek;
} Tx;

__attribute__((format(printf, 3, 4))) static int tx_error(Tx *x, size_t off, const char *fmt, ...) {
  if (x->failed) return -1;
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  hlc_diag_at(x->d, HLC_ERROR, x->file, x->src, x->len, off, "%s", msg);
  x->failed = true;
  return -1;
}

/*!re2c
  re2c:define:YYCTYPE = "unsigned char";
  re2c:yyfill:enable = 0;
  re2c:eof = 0;
  id = [a-zA-Z_][a-zA-Z0-9_]*;
  dec = [0-9]+;
  num = (dec ("." [0-9]*)? | "." [0-9]+) ([eE] [+-]? dec)? [fF]? | "0" [xX] [0-9a-fA-F]+;
  sq = "'" ([^'\\\n\x00] | "\\" [^\x00])* "'";
  dq = "\"" ([^"\\\n\x00] | "\\" [^\x00])* "\"";
*/

static Tok lex(Tx *x) {
  const unsigned char *base = (const unsigned char *)x->src, *YYCURSOR, *YYMARKER, *YYLIMIT;
  (void)YYMARKER;
  YYLIMIT = base + x->len;
  for (;;) {
    YYCURSOR = base + x->pos;
    size_t start = x->pos;
    Tok t = {T_PUNCT, start, 1};
    /*!re2c
      $ { t.kind = T_EOF; t.len = 0; return t; }
      [ \t\r\n\f\v]+ { x->pos = (size_t)(YYCURSOR - base); continue; }
      "#" [^\n\x00]* { x->pos = (size_t)(YYCURSOR - base); continue; }
      id { t.kind = T_IDENT; goto done; }
      num { t.kind = T_NUMBER; goto done; }
      sq | dq { t.kind = T_STRING; goto done; }
      [{}<>:[\],;/.-] { goto done; }
      * {
        tx_error(x, start, "unexpected character in protocol-buffer text");
        t.kind = T_EOF;
        return t;
      }
    */
  done:
    x->pos = (size_t)(YYCURSOR - base);
    t.len = x->pos - start;
    return t;
  }
}

static Tok next(Tx *x) {
  if (x->has_peek) { x->has_peek = false; return x->peeked; }
  return lex(x);
}

static Tok peek(Tx *x) {
  if (!x->has_peek) { x->peeked = lex(x); x->has_peek = true; }
  return x->peeked;
}

static bool is_punct(Tx *x, Tok t, char c) { return t.kind == T_PUNCT && x->src[t.off] == c; }
static bool is_word(Tx *x, Tok t, const char *w) {
  return t.kind == T_IDENT && strlen(w) == t.len && strncasecmp(x->src + t.off, w, t.len) == 0;
}

/* ---- Wire output -------------------------------------------------------------- */

static void put_varint(HlcText *b, uint64_t v) {
  char tmp[10];
  size_t n = 0;
  do {
    tmp[n] = (char)(v & 0x7f);
    v >>= 7;
    if (v) tmp[n] |= (char)0x80;
    n++;
  } while (v);
  hlc_text_put(b, tmp, n);
}

static void put_key(HlcText *b, uint32_t field, int wt) { put_varint(b, (uint64_t)field << 3 | (uint64_t)wt); }

/* ---- Values ------------------------------------------------------------------- */

/* The bytes of one quoted string (escapes decoded) appended to out. */
static int decode_string(Tx *x, Tok t, HlcText *out) {
  const char *s = x->src + t.off + 1, *e = x->src + t.off + t.len - 1;
  while (s < e) {
    char c = *s++;
    if (c != '\\') { hlc_text_put(out, &c, 1); continue; }
    c = *s++;
    unsigned v = 0;
    switch (c) {
    case 'n': v = '\n'; break; case 'r': v = '\r'; break; case 't': v = '\t'; break;
    case 'a': v = '\a'; break; case 'b': v = '\b'; break; case 'f': v = '\f'; break;
    case 'v': v = '\v'; break; case '\\': case '\'': case '"': case '?': v = (unsigned char)c; break;
    case 'x': case 'X': {
      int k = 0;
      while (k < 2 && s < e && strchr("0123456789abcdefABCDEF", *s) && *s) {
        v = v * 16 + (unsigned)(*s <= '9' ? *s - '0' : (*s | 32) - 'a' + 10);
        s++, k++;
      }
      if (!k) return tx_error(x, (size_t)(s - x->src), "\\x needs a hexadecimal digit");
      break;
    }
    default:
      if (c >= '0' && c <= '7') {
        v = (unsigned)(c - '0');
        for (int k = 0; k < 2 && s < e && *s >= '0' && *s <= '7'; k++) v = v * 8 + (unsigned)(*s++ - '0');
        if (v > 255) return tx_error(x, (size_t)(s - x->src), "octal escape above \\377");
        break;
      }
      return tx_error(x, (size_t)(s - 1 - x->src), "unknown escape '\\%c'", c);
    }
    char b = (char)v;
    hlc_text_put(out, &b, 1);
  }
  return 0;
}

/* An integer (with an optional leading '-') or an enum value's name. */
static int scalar_int(Tx *x, const ProtobufCFieldDescriptor *fd, const char *msgname, uint64_t *out) {
  Tok t = next(x);
  bool neg = false;
  if (is_punct(x, t, '-')) { neg = true; t = next(x); }
  if (fd->type == PROTOBUF_C_TYPE_ENUM && t.kind == T_IDENT && !neg) {
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)t.len, x->src + t.off);
    const ProtobufCEnumValue *ev =
        protobuf_c_enum_descriptor_get_value_by_name(fd->descriptor, name);
    if (!ev) return tx_error(x, t.off, "%s.%s: '%s' is not a value of %s", msgname, fd->name, name,
                             ((const ProtobufCEnumDescriptor *)fd->descriptor)->name);
    *out = (uint64_t)(int64_t)ev->value;
    return 0;
  }
  if (fd->type == PROTOBUF_C_TYPE_BOOL && t.kind == T_IDENT) {
    if (is_word(x, t, "true") || is_word(x, t, "t")) { *out = 1; return 0; }
    if (is_word(x, t, "false") || is_word(x, t, "f")) { *out = 0; return 0; }
  }
  if (t.kind != T_NUMBER) return tx_error(x, t.off, "%s.%s: expected an integer", msgname, fd->name);
  char buf[64];
  snprintf(buf, sizeof buf, "%.*s", (int)(t.len < 63 ? t.len : 63), x->src + t.off);
  char *end;
  unsigned long long v = strtoull(buf, &end, 0);
  if (*end || strchr(buf, '.') || (strchr(buf, 'e') && buf[1] != 'x' && buf[1] != 'X'))
    return tx_error(x, t.off, "%s.%s: '%s' is not an integer", msgname, fd->name, buf);
  bool is32 = fd->type == PROTOBUF_C_TYPE_INT32 || fd->type == PROTOBUF_C_TYPE_UINT32 ||
              fd->type == PROTOBUF_C_TYPE_ENUM;
  bool is_signed = fd->type == PROTOBUF_C_TYPE_INT32 || fd->type == PROTOBUF_C_TYPE_INT64 ||
                   fd->type == PROTOBUF_C_TYPE_ENUM;
  if ((neg && !is_signed) || (is32 && !neg && v > (is_signed ? 0x7fffffffull : 0xffffffffull)) ||
      (is32 && neg && v > 0x80000000ull) || (!is32 && is_signed && !neg && v > 0x7fffffffffffffffull) ||
      (neg && v > 0x8000000000000000ull) || (fd->type == PROTOBUF_C_TYPE_BOOL && v > 1))
    return tx_error(x, t.off, "%s.%s: %s%s is out of range", msgname, fd->name, neg ? "-" : "", buf);
  *out = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  return 0;
}

static int scalar_float(Tx *x, const ProtobufCFieldDescriptor *fd, const char *msgname, double *out) {
  Tok t = next(x);
  bool neg = false;
  if (is_punct(x, t, '-')) { neg = true; t = next(x); }
  double v;
  if (t.kind == T_IDENT && (is_word(x, t, "inf") || is_word(x, t, "infinity"))) v = INFINITY;
  else if (t.kind == T_IDENT && is_word(x, t, "nan")) v = NAN;
  else if (t.kind == T_NUMBER) {
    char buf[128];
    snprintf(buf, sizeof buf, "%.*s", (int)(t.len < 127 ? t.len : 127), x->src + t.off);
    size_t n = strlen(buf);
    if (n && (buf[n - 1] == 'f' || buf[n - 1] == 'F') && !(n > 1 && (buf[1] == 'x' || buf[1] == 'X'))) buf[n - 1] = 0;
    char *end;
    v = strtod(buf, &end);
    if (*end) return tx_error(x, t.off, "%s.%s: '%s' is not a number", msgname, fd->name, buf);
  } else {
    return tx_error(x, t.off, "%s.%s: expected a number", msgname, fd->name);
  }
  *out = neg ? -v : v;
  return 0;
}

static int parse_fields(Tx *x, const ProtobufCMessageDescriptor *d, char close, HlcText *out, int depth);

/* One value of field fd (after the ':' if any) appended as wire bytes. */
static int one_value(Tx *x, const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *fd,
                     HlcText *out, int depth) {
  Tok t = peek(x);
  if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
    next(x);
    if (!is_punct(x, t, '{') && !is_punct(x, t, '<'))
      return tx_error(x, t.off, "%s.%s: expected '{' (a %s message)", d->name, fd->name,
                      ((const ProtobufCMessageDescriptor *)fd->descriptor)->name);
    HlcText sub = {0};
    int rc = parse_fields(x, fd->descriptor, is_punct(x, t, '{') ? '}' : '>', &sub, depth + 1);
    if (rc == 0) {
      put_key(out, fd->id, 2);
      put_varint(out, sub.n);
      if (sub.n) hlc_text_put(out, sub.p, sub.n);
    }
    free(sub.p);
    return rc;
  }
  switch (fd->type) {
  case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_BYTES: {
    HlcText s = {0};
    if (t.kind != T_STRING) return tx_error(x, t.off, "%s.%s: expected a string", d->name, fd->name);
    while (peek(x).kind == T_STRING)
      if (decode_string(x, next(x), &s) != 0) { free(s.p); return -1; }
    put_key(out, fd->id, 2);
    put_varint(out, s.n);
    if (s.n) hlc_text_put(out, s.p, s.n);
    free(s.p);
    return 0;
  }
  case PROTOBUF_C_TYPE_FLOAT: case PROTOBUF_C_TYPE_DOUBLE: {
    double v;
    if (scalar_float(x, fd, d->name, &v) != 0) return -1;
    if (fd->type == PROTOBUF_C_TYPE_FLOAT) {
      float f = (float)v;
      put_key(out, fd->id, 5);
      hlc_text_put(out, (const char *)&f, 4);
    } else {
      put_key(out, fd->id, 1);
      hlc_text_put(out, (const char *)&v, 8);
    }
    return 0;
  }
  default: {
    uint64_t v;
    if (scalar_int(x, fd, d->name, &v) != 0) return -1;
    if (fd->type == PROTOBUF_C_TYPE_INT32 || fd->type == PROTOBUF_C_TYPE_ENUM)
      v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;   /* negative int32s take 10 bytes */
    switch (fd->type) {
    case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SINT64:
      put_key(out, fd->id, 0);
      put_varint(out, (v << 1) ^ (uint64_t)((int64_t)v >> 63));
      return 0;
    case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_SFIXED32: {
      uint32_t w = (uint32_t)v;
      put_key(out, fd->id, 5);
      hlc_text_put(out, (const char *)&w, 4);
      return 0;
    }
    case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_SFIXED64:
      put_key(out, fd->id, 1);
      hlc_text_put(out, (const char *)&v, 8);
      return 0;
    default:
      put_key(out, fd->id, 0);
      put_varint(out, v);
      return 0;
    }
  }
  }
}

/* Skip a value of a field the schema does not declare. */
static int skip_value(Tx *x, int depth) {
  if (depth > 100) return tx_error(x, peek(x).off, "values nested more than 100 deep");
  Tok t = next(x);
  if (is_punct(x, t, '{') || is_punct(x, t, '<') || is_punct(x, t, '[')) {
    char close = is_punct(x, t, '{') ? '}' : is_punct(x, t, '<') ? '>' : ']';
    for (;;) {
      Tok u = peek(x);
      if (u.kind == T_EOF) return tx_error(x, t.off, "unclosed '%c'", x->src[t.off]);
      if (is_punct(x, u, close)) { next(x); return 0; }
      if (u.kind == T_PUNCT && strchr("{<[", x->src[u.off])) { if (skip_value(x, depth + 1)) return -1; }
      else next(x);
    }
  }
  if (is_punct(x, t, '-')) t = next(x);
  if (t.kind == T_STRING) while (peek(x).kind == T_STRING) next(x);
  if (t.kind == T_EOF || t.kind == T_PUNCT) return tx_error(x, t.off, "expected a value");
  return 0;
}

static int parse_fields(Tx *x, const ProtobufCMessageDescriptor *d, char close, HlcText *out, int depth) {
  if (depth > 100) return tx_error(x, peek(x).off, "%s: messages nested more than 100 deep", d->name);
  for (;;) {
    Tok t = next(x);
    if (x->failed) return -1;
    if (t.kind == T_EOF) {
      if (close) return tx_error(x, t.off, "%s: expected '%c' before the end of the file", d->name, close);
      return 0;
    }
    if (close && is_punct(x, t, close)) return 0;
    const ProtobufCFieldDescriptor *fd = NULL;
    if (is_punct(x, t, '[')) {   /* an extension or Any type URL: skipped */
      Tok u;
      do u = next(x); while (u.kind != T_EOF && !is_punct(x, u, ']'));
      if (u.kind == T_EOF) return tx_error(x, t.off, "unclosed '['");
    } else if (t.kind == T_IDENT) {
      char name[128];
      snprintf(name, sizeof name, "%.*s", (int)(t.len < 127 ? t.len : 127), x->src + t.off);
      fd = protobuf_c_message_descriptor_get_field_by_name(d, name);
    } else {
      return tx_error(x, t.off, "%s: expected a field name", d->name);
    }
    bool colon = is_punct(x, peek(x), ':');
    if (colon) next(x);
    Tok v = peek(x);
    if (!fd) {
      if (!colon && !is_punct(x, v, '{') && !is_punct(x, v, '<'))
        return tx_error(x, v.off, "%s: expected ':' or '{' after a field name", d->name);
      if (skip_value(x, depth) != 0) return -1;
    } else if (fd->type != PROTOBUF_C_TYPE_MESSAGE && !colon) {
      return tx_error(x, v.off, "%s.%s: expected ':'", d->name, fd->name);
    } else if (is_punct(x, v, '[')) {   /* a list of values */
      next(x);
      if (fd->label != PROTOBUF_C_LABEL_REPEATED)
        return tx_error(x, v.off, "%s.%s: a list for a field that is not repeated", d->name, fd->name);
      if (is_punct(x, peek(x), ']')) next(x);
      else
        for (;;) {
          if (one_value(x, d, fd, out, depth) != 0) return -1;
          Tok s = next(x);
          if (is_punct(x, s, ']')) break;
          if (!is_punct(x, s, ',')) return tx_error(x, s.off, "%s.%s: expected ',' or ']'", d->name, fd->name);
        }
    } else if (one_value(x, d, fd, out, depth) != 0) {
      return -1;
    }
    Tok sep = peek(x);
    if (is_punct(x, sep, ',') || is_punct(x, sep, ';')) next(x);
  }
}

/* ---- Entry points ------------------------------------------------------------- */

static size_t skip_space_comments(const char *s, size_t n, size_t i) {
  for (;;) {
    while (i < n && strchr(" \t\r\n\f\v", s[i]) && s[i]) i++;
    if (i < n && s[i] == '#') { while (i < n && s[i] != '\n') i++; continue; }
    return i;
  }
}

/* A top-level field name of line-start form `name {`, `name <` or `name:`. */
static bool has_top_field(const char *s, size_t n, const char *name) {
  size_t k = strlen(name);
  for (size_t i = 0; i + k < n; i++) {
    if ((i == 0 || s[i - 1] == '\n') && memcmp(s + i, name, k) == 0) {
      size_t j = i + k;
      while (j < n && (s[j] == ' ' || s[j] == '\t')) j++;
      if (j < n && (s[j] == '{' || s[j] == '<' || s[j] == ':')) return true;
    }
  }
  return false;
}

const ProtobufCMessageDescriptor *hpb_text_message(const void *data, size_t len) {
  const char *s = data;
  for (size_t b = 0; b < len && b < 4096; b++)   /* binary, not text */
    if ((unsigned char)s[b] < 0x09 || ((unsigned char)s[b] > 0x0d && (unsigned char)s[b] < 0x20)) return NULL;
  size_t i = skip_space_comments(s, len, 0), j = i;
  while (j < len && (s[j] == '_' || (s[j] >= 'a' && s[j] <= 'z') || (s[j] >= '0' && s[j] <= '9'))) j++;
  if (j == i || (s[i] >= '0' && s[i] <= '9')) return NULL;
  size_t k = j;
  while (k < len && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r' || s[k] == '\n')) k++;
  if (k >= len || (s[k] != ':' && s[k] != '{' && s[k] != '<')) return NULL;
  size_t n = j - i;
#define IS(w) (n == strlen(w) && memcmp(s + i, w, n) == 0)
  if (IS("hlo") || IS("execution_platform")) return &xla__hlo_snapshot__descriptor;
  if (IS("arguments") || IS("result"))
    return has_top_field(s, len, "hlo") ? &xla__hlo_snapshot__descriptor
                                        : &xla__run_hlo_module_iteration_literals__descriptor;
  if (IS("hlo_module") || IS("partitions"))
    return has_top_field(s, len, "partitions") ? &xla__hlo_unoptimized_snapshot__descriptor
                                               : &xla__hlo_proto__descriptor;
  if (IS("iterations")) return &xla__run_hlo_module_literals__descriptor;
  if (IS("shape") || IS("tuple_literals")) return &xla__literal_proto__descriptor;
  if (IS("name") || IS("entry_computation_name") || IS("computations") || IS("host_program_shape") ||
      IS("id") || IS("entry_computation_id") || IS("schedule") || IS("input_output_alias"))
    return &xla__hlo_module_proto__descriptor;
#undef IS
  return NULL;
}

int hpb_text_to_binary(const void *data, size_t len, const char *filename, HlcDiags *diags,
                       char **bin, size_t *bin_len) {
  const ProtobufCMessageDescriptor *d = hpb_text_message(data, len);
  *bin = NULL;
  *bin_len = 0;
  if (!d) return -1;
  char *copy = malloc(len + 1);
  if (!copy) { hlc_diag(diags, HLC_ERROR, "%s: out of memory", filename); return -1; }
  memcpy(copy, data, len);
  copy[len] = 0;
  Tx x = {.src = copy, .len = len, .file = filename, .d = diags};
  if (memchr(copy, 0, len)) tx_error(&x, (size_t)((char *)memchr(copy, 0, len) - copy), "NUL byte in protocol-buffer text");
  HlcText out = {0};
  int rc = x.failed ? -1 : parse_fields(&x, d, 0, &out, 0);
  free(copy);
  if (rc == 0 && out.oom) { hlc_diag(diags, HLC_ERROR, "%s: out of memory", filename); rc = -1; }
  if (rc != 0) { free(out.p); return -1; }
  if (!out.p) out.p = calloc(1, 1);
  *bin = out.p;
  *bin_len = out.n;
  return 0;
}
