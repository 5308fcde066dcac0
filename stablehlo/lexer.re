/* lexer.re: re2c lexer for MLIR text (StableHLO, CHLO, MHLO, func, check,
 * sdy as JAX, XLA and StableHLO's tests print them).
 *
 * Bytes -> tokens {kind, off, len, bol}. Makes the decisions that need a
 * look past the token: a value name followed by '=' (or by ", %x ... =") is
 * a RESULT, a word or string followed by a single '=' is an ATTRKEY; "4x2x"
 * in a tensor type is one DIMS token ("0xf32" too, although it reads as a
 * hex number). A "// -----" line is a SPLIT; other comments are skipped.
 * The input is NUL-terminated (the only sentinel); NUL bytes inside are
 * refused by the caller.
 */
#include "stablehlo/syntax.h"
#include "stablehlo/mlir.h"
#include <string.h>

const char *shx_kind_name(int k) {
  switch (k) {
  case 0: return "end of input";
  case SH_RESULT: return "result name";
  case SH_VALUE: return "value name";
  case SH_BLOCKID: return "block label";
  case SH_SYMBOL: return "symbol";
  case SH_HASHID: return "attribute alias";
  case SH_BANGID: return "type alias";
  case SH_BAREID: return "identifier";
  case SH_ATTRKEY: return "attribute name";
  case SH_OPNAME: return "operation name";
  case SH_STRING: return "string";
  case SH_INT: return "integer";
  case SH_FLOAT: return "number";
  case SH_HEX: return "hex number";
  case SH_DIMS: return "dimensions";
  case SH_COLON: case SH_BLOCKCOLON: return "':'";
  case SH_COMMA: return "','";
  case SH_EQ: return "'='";
  case SH_ARROW: return "'->'";
  case SH_LPAREN: return "'('";
  case SH_RPAREN: return "')'";
  case SH_LBRACKET: return "'['";
  case SH_RBRACKET: return "']'";
  case SH_LANGLE: return "'<'";
  case SH_RANGLE: return "'>'";
  case SH_DICTOPEN: case SH_REGIONOPEN: return "'{'";
  case SH_RBRACE: return "'}'";
  case SH_SPLIT: return "'// -----'";
  case SH_OPSTART: return "operation";
  default: return "token";
  }
}

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static size_t skip_blanks(const ShLexer *L, size_t p) {
  while (p < L->len && blank(L->src[p])) p++;
  return p;
}

/* A single '=' (not "==") at p after blanks? */
static bool eq_at(const ShLexer *L, size_t p) {
  p = skip_blanks(L, p);
  return p < L->len && L->src[p] == '=' && (p + 1 >= L->len || L->src[p + 1] != '=');
}

static bool suffix_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '.' || c == '-';
}

/* After a value name ending at p: "(:N)? (, %name(:N)?)* =" makes it a result. */
static bool result_follows(const ShLexer *L, size_t p) {
  const char *s = L->src;
  for (int guard = 0; guard < 4096; guard++) {
    if (p < L->len && s[p] == ':') {
      size_t q = p + 1;
      while (q < L->len && s[q] >= '0' && s[q] <= '9') q++;
      if (q == p + 1) return false;
      p = q;
    }
    if (eq_at(L, p)) return true;
    p = skip_blanks(L, p);
    if (p >= L->len || s[p] != ',') return false;
    p = skip_blanks(L, p + 1);
    if (p >= L->len || s[p] != '%') return false;
    p++;
    size_t q = p;
    while (q < L->len && suffix_char(s[q])) q++;
    if (q == p) return false;
    p = q;
  }
  return false;
}

/* "0x" followed by an element type ("tensor<0xf32>"), not a hex number. */
static bool zero_dim_before_type(const ShLexer *L, size_t start) {
  if (start == 0 || (L->src[start - 1] != '<' && L->src[start - 1] != 'x')) return false;
  static const char *const types[] = {"f16", "f32", "f64", "bf16", "f8", "f4"};
  const char *p = L->src + start + 2;
  for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
    size_t n = strlen(types[i]);
    if (strncmp(p, types[i], n) != 0) continue;
    char c = p[n];
    if (n == 2) return true;   /* f8E4M3FN, f4E2M1FN */
    if (!suffix_char(c) || c == '.' || c == '-') return true;
  }
  return false;
}

int shx_next(ShLexer *L, ShToken *t, const char **errmsg) {
  const char *s = L->src;
  for (;;) {
    const char *YYCURSOR = s + L->pos, *YYMARKER = YYCURSOR;
    const char *start = YYCURSOR;
    size_t off = L->pos;
    bool bol = L->bol;
#define TOK(k) do { L->pos = (size_t)(YYCURSOR - s); L->bol = false; t->kind = (k); t->off = (uint32_t)off; \
                    t->len = (uint32_t)(YYCURSOR - start); t->bol = bol; return (k); } while (0)
    /*!re2c
      re2c:define:YYCTYPE = "unsigned char";
      re2c:yyfill:enable = 0;
      re2c:flags:utf-8 = 0;

      bare    = [a-zA-Z_] [a-zA-Z0-9_$.]*;
      suffix  = [0-9]+ | [a-zA-Z_$.\-] [a-zA-Z0-9_$.\-]*;
      str     = "\"" ([^"\\\n\x00] | "\\" [^\x00\n])* "\"";
      digits  = [0-9]+;
      exp     = [eE] [+-]? digits;

      "\x00" { if ((size_t)(YYCURSOR - s) > L->len) { L->pos = L->len; t->kind = 0; t->off = (uint32_t)L->len;
               t->len = 0; t->bol = bol; return 0; }
               *errmsg = "NUL byte in the input"; t->off = (uint32_t)off; return -1; }
      "\n" { L->pos = (size_t)(YYCURSOR - s); L->bol = true; continue; }
      [ \t\r]+ { L->pos = (size_t)(YYCURSOR - s); continue; }
      "//" [ \t]* "-----" [^\n\x00]* { TOK(SH_SPLIT); }
      "//" [^\n\x00]* { L->pos = (size_t)(YYCURSOR - s); continue; }
      "{-#" { *errmsg = "dialect resources ({-# ... #-}) are not supported"; t->off = (uint32_t)off; return -1; }

      "%" suffix ("#" digits)? {
        size_t e = (size_t)(YYCURSOR - s);
        if (memchr(start, '#', (size_t)(YYCURSOR - start)) == NULL && result_follows(L, e)) {
          /* a "%0:2" result count belongs to the result token */
          if (s[e] == ':') { e++; while (s[e] >= '0' && s[e] <= '9') e++; YYCURSOR = s + e; }
          TOK(SH_RESULT);
        }
        TOK(SH_VALUE);
      }
      "^" suffix { TOK(SH_BLOCKID); }
      "@" (suffix | str) { TOK(SH_SYMBOL); }
      "#" (bare | digits) { TOK(SH_HASHID); }
      "!" bare { TOK(SH_BANGID); }
      bare { if (eq_at(L, (size_t)(YYCURSOR - s))) TOK(SH_ATTRKEY); TOK(SH_BAREID); }
      str { if (eq_at(L, (size_t)(YYCURSOR - s))) TOK(SH_ATTRKEY); TOK(SH_STRING); }
      ((digits | "?" | "*") "x")+ { TOK(SH_DIMS); }
      "-"? digits { TOK(SH_INT); }
      "-"? digits "." [0-9]* exp? | "-"? digits exp { TOK(SH_FLOAT); }
      "0x" [0-9a-fA-F]+ {
        if (zero_dim_before_type(L, off)) { YYCURSOR = start + 2; TOK(SH_DIMS); }
        TOK(SH_HEX);
      }
      "->" { TOK(SH_ARROW); }
      ":" { TOK(SH_COLON); }
      "," { TOK(SH_COMMA); }
      "=" { TOK(SH_EQ); }
      "(" { TOK(SH_LPAREN); }
      ")" { TOK(SH_RPAREN); }
      "[" { TOK(SH_LBRACKET); }
      "]" { TOK(SH_RBRACKET); }
      "<" { TOK(SH_LANGLE); }
      ">" { TOK(SH_RANGLE); }
      "{" { TOK(SH_DICTOPEN); }
      "}" { TOK(SH_RBRACE); }
      "?" | "*" | "+" | "-" | "|" { TOK(SH_PUNCT); }
      "\"" { *errmsg = "unterminated string"; t->off = (uint32_t)off; return -1; }
      * { *errmsg = "unexpected character"; t->off = (uint32_t)off; return -1; }
    */
#undef TOK
  }
}
