/* lexer.re: re2c lexer for HLO text (spec hlo-text.md section 1).
 *
 * Bytes -> tokens {kind, off, len}. Makes the context decisions the grammar
 * cannot: an identifier directly followed by ':' is a CNAME and by '=' an
 * ATTRNAME; a name followed by optional blanks and a single '=' is a DEFNAME
 * (an instruction definition); a type name followed by '[' is a TYPE; 'b('
 * starts a buffer shape; '{' right after ']' and before a digit or ':' opens
 * a layout (LLBRACE); '{' right after backend_config= or a key inside
 * frontend_attributes={...} is captured verbatim as RAWDICT (spec 1.9).
 * Does not decode numbers or strings beyond validating them (parse.c does).
 * The input is a NUL-terminated copy without interior NULs (checked by the
 * caller), so the terminating NUL is the only sentinel.
 */
#include "parser/syntax.h"
#include "hlo.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void hlx_init(HlxLexer *L, HlpParser *P, const char *src, size_t len, HlxErrorFn error) {
  memset(L, 0, sizeof *L);
  L->error = error;
  L->src = src;
  L->len = len;
  L->fa_depth = -1;
  L->P = P;
}

const char *hlx_kind_name(int k) {
  switch (k) {
  case 0: return "end of input";
  case TK_KW_HLOMODULE: return "'HloModule'";
  case TK_KW_ENTRY: return "'ENTRY'";
  case TK_KW_ROOT: return "'ROOT'";
  case TK_KW_FILENAMES: return "'FileNames'";
  case TK_KW_FUNCTIONNAMES: return "'FunctionNames'";
  case TK_KW_FILELOCATIONS: return "'FileLocations'";
  case TK_KW_STACKFRAMES: return "'StackFrames'";
  case TK_NAME: return "name";
  case TK_CNAME: return "name with ':'";
  case TK_DEFNAME: return "instruction definition";
  case TK_ATTRNAME: return "attribute name";
  case TK_IDENT: return "identifier";
  case TK_TYPE: return "element type";
  case TK_BUFSHAPE: return "buffer shape";
  case TK_INT: return "integer";
  case TK_DECIMAL: return "number";
  case TK_NEGINF: return "'-inf'";
  case TK_DXD: return "dimension list";
  case TK_PAD: return "padding";
  case TK_DIMLABELS: return "dimension labels";
  case TK_STRING: return "string";
  case TK_RAWDICT: return "raw dictionary";
  case TK_EQ: return "'='";
  case TK_COMMA: return "','";
  case TK_COLON: return "':'";
  case TK_STAR: return "'*'";
  case TK_QUESTION: return "'?'";
  case TK_HASH: return "'#'";
  case TK_PLUS: return "'+'";
  case TK_TILDE: return "'~'";
  case TK_LBRACKET: return "'['";
  case TK_RBRACKET: return "']'";
  case TK_LBRACE: case TK_LLBRACE: return "'{'";
  case TK_RBRACE: return "'}'";
  case TK_LPAREN: return "'('";
  case TK_RPAREN: return "')'";
  case TK_ELLIPSIS: return "'...'";
  case TK_ARROW: return "'->'";
  case TK_LEQ: return "'<='";
  default: return "token";
  }
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static size_t put_utf8(char *out, uint32_t cp) {
  unsigned char b[4];
  size_t n;
  if (cp < 0x80) { b[0] = (unsigned char)cp; n = 1; }
  else if (cp < 0x800) { b[0] = (unsigned char)(0xC0 | (cp >> 6)); b[1] = (unsigned char)(0x80 | (cp & 0x3F)); n = 2; }
  else if (cp < 0x10000) {
    b[0] = (unsigned char)(0xE0 | (cp >> 12)); b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    b[2] = (unsigned char)(0x80 | (cp & 0x3F)); n = 3;
  } else {
    b[0] = (unsigned char)(0xF0 | (cp >> 18)); b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)); b[3] = (unsigned char)(0x80 | (cp & 0x3F)); n = 4;
  }
  if (out) memcpy(out, b, n);
  return n;
}

long hlx_unescape(const char *s, size_t n, char *out, size_t *bad) {
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    char c = s[i];
    if (c != '\\') { if (out) out[o] = c; o++; i++; continue; }
    size_t start = i++;
    if (i >= n) { *bad = start; return -1; }
    c = s[i++];
    char v;
    switch (c) {
    case 'n': v = '\n'; break;
    case 't': v = '\t'; break;
    case 'r': v = '\r'; break;
    case '\\': v = '\\'; break;
    case '"': v = '"'; break;
    case '\'': v = '\''; break;
    case '?': v = '?'; break;
    case 'a': v = '\a'; break;
    case 'b': v = '\b'; break;
    case 'f': v = '\f'; break;
    case 'v': v = '\v'; break;
    case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
      unsigned x = (unsigned)(c - '0');
      for (int k = 0; k < 2 && i < n && s[i] >= '0' && s[i] <= '7'; k++) x = x * 8 + (unsigned)(s[i++] - '0');
      if (x > 255) { *bad = start; return -1; }
      v = (char)x;
      break;
    }
    case 'x': {
      unsigned x = 0;
      int k = 0;
      while (i < n && hexval(s[i]) >= 0 && k < 2) { x = x * 16 + (unsigned)hexval(s[i++]); k++; }
      if (k == 0) { *bad = start; return -1; }
      v = (char)x;
      break;
    }
    case 'u': case 'U': {
      int want = c == 'u' ? 4 : 8;
      uint32_t cp = 0;
      for (int k = 0; k < want; k++) {
        if (i >= n || hexval(s[i]) < 0) { *bad = start; return -1; }
        cp = cp * 16 + (uint32_t)hexval(s[i++]);
      }
      if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) { *bad = start; return -1; }
      o += put_utf8(out ? out + o : NULL, cp);
      continue;
    }
    default: *bad = start; return -1;
    }
    if (out) out[o] = v;
    o++;
  }
  return (long)o;
}

static const struct { const char *w; int kind; } keywords[] = {
  {"HloModule", TK_KW_HLOMODULE}, {"ENTRY", TK_KW_ENTRY}, {"ROOT", TK_KW_ROOT},
  {"FileNames", TK_KW_FILENAMES}, {"FunctionNames", TK_KW_FUNCTIONNAMES},
  {"FileLocations", TK_KW_FILELOCATIONS}, {"StackFrames", TK_KW_STACKFRAMES},
};

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Offset of the next non-blank byte at or after p (comments are not skipped:
 * printers never put one between a name and its '='). */
static size_t skip_blanks(const HlxLexer *L, size_t p) {
  while (p < L->len && is_blank(L->src[p])) p++;
  return p;
}

/* After an identifier-like word ending at e: a single '=' after blanks? */
static bool def_follows(const HlxLexer *L, size_t e) {
  size_t p = skip_blanks(L, e);
  return p < L->len && L->src[p] == '=' && (p + 1 >= L->len || L->src[p + 1] != '=');
}

/* Skip a raw {...} dictionary starting at p ('{'); returns the end offset or
 * 0 if it is not terminated. */
static size_t raw_end(const HlxLexer *L, size_t p) {
  int depth = 0;
  const char *s = L->src;
  for (; p < L->len; p++) {
    if (s[p] == '"') {
      for (p++; p < L->len && s[p] != '"'; p++)
        if (s[p] == '\\') p++;
      if (p >= L->len) return 0;
    } else if (s[p] == '{') {
      depth++;
    } else if (s[p] == '}') {
      if (--depth == 0) return p + 1;
    }
  }
  return 0;
}

static int lex_error(HlxLexer *L, size_t off, const char *msg) {
  L->error(L->P, off, msg);
  return -1;
}

/* Validates an INT token's range (up to UINT64_MAX, down to INT64_MIN). */
static bool int_in_range(const char *s, size_t n) {
  bool neg = s[0] == '-';
  uint64_t v = 0;
  for (size_t i = neg; i < n; i++) {
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  return !neg || v <= (uint64_t)INT64_MAX + 1;
}

static int finish(HlxLexer *L, HlxToken *t, int kind, size_t start, size_t end) {
  t->kind = kind;
  t->off = (uint32_t)start;
  t->len = (uint32_t)(end - start);
  L->pos = end;
  L->last = kind;
  return kind;
}

/* An identifier-like word s[start..e) not followed by ':' or '='. */
static int word(HlxLexer *L, HlxToken *t, size_t start, size_t e) {
  const char *s = L->src + start;
  size_t n = e - start;
  if (def_follows(L, e)) {
    size_t p = skip_blanks(L, e);
    return finish(L, t, TK_DEFNAME, start, p + 1);
  }
  if (n == 1 && s[0] == 'b' && e < L->len && L->src[e] == '(') {
    L->depth++;
    return finish(L, t, TK_BUFSHAPE, start, e + 1);
  }
  HloDtype dt = hlc_dtype_from_name(s, n);
  if (dt != HLO_DTYPE_INVALID && dt != HLO_TUPLE) {
    size_t p = skip_blanks(L, e);
    if (p < L->len && L->src[p] == '[') return finish(L, t, TK_TYPE, start, e);
  }
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
    if (strlen(keywords[i].w) == n && memcmp(keywords[i].w, s, n) == 0)
      return finish(L, t, keywords[i].kind, start, e);
  return finish(L, t, TK_IDENT, start, e);
}

static int open_bracket(HlxLexer *L, HlxToken *t, int kind, size_t start) {
  if (++L->depth > HLX_MAX_DEPTH)
    return lex_error(L, start, "nesting deeper than 256 levels");
  return finish(L, t, kind, start, start + 1);
}

static int close_bracket(HlxLexer *L, HlxToken *t, int kind, size_t start) {
  if (L->depth > 0) L->depth--;
  if (kind == TK_RBRACE && L->fa_depth >= 0 && L->depth < L->fa_depth) L->fa_depth = -1;
  return finish(L, t, kind, start, start + 1);
}

/*!re2c

  id      = [A-Za-z_][A-Za-z0-9_.\-]*;
  dig     = [0-9];
  exp     = [eE] [+\-]? dig+;
  dec     = "-"? (dig+ "." dig* exp? | dig+ exp) | "-." dig+ exp?;
  lbl1    = [0-9bf?]{2,};
  lbl2    = [0-9io?]{2,};
  dlabels = lbl1 "_" lbl2 "->" lbl1;
  dxd     = dig+ ("x" dig+)+;
  pad1    = "-"? dig+ "_" "-"? dig+ ("_" "-"? dig+)?;
  pad     = pad1 ("x" pad1)*;
  hex     = [0-9a-fA-F];
  nanp    = "nan(0x" hex+ ")";
  blank   = [ \t\r\n];
*/

int hlx_next(HlxLexer *L, HlxToken *t) {
  const unsigned char *base = (const unsigned char *)L->src;
  const unsigned char *YYCURSOR, *YYMARKER = NULL, *YYLIMIT = base + L->len;
  bool ws = false;
  t->ws = false;
loop:
  if (L->raw_next) {
    size_t p = L->pos;
    L->raw_next = false;
    if (p < L->len && L->src[p] == '{') {
      size_t e = raw_end(L, p);
      if (!e) return lex_error(L, p, "unterminated '{' dictionary");
      t->ws = ws;
      return finish(L, t, TK_RAWDICT, p, e);
    }
  }
  YYCURSOR = base + L->pos;
  size_t start = L->pos;
  t->ws = ws;
  /*!re2c
    re2c:define:YYCTYPE = "unsigned char";
    re2c:yyfill:enable = 0;
    re2c:eof = 0;

    $ { t->kind = 0; t->off = (uint32_t)L->len; t->len = 0; L->last = 0; return 0; }

    blank+ { L->pos = (size_t)(YYCURSOR - base); ws = true; goto loop; }
    "//" [^\n\r\x00]* { L->pos = (size_t)(YYCURSOR - base); ws = true; goto loop; }
    "/*" {
      const char *e = memmem(L->src + start + 2, L->len - start - 2, "*/", 2);
      if (!e) return lex_error(L, start, "unterminated comment");
      L->pos = (size_t)(e - L->src) + 2;
      ws = true;
      goto loop;
    }

    "%" id "=" {
      size_t e = (size_t)(YYCURSOR - base);
      if (e < L->len && L->src[e] == '=') return lex_error(L, start, "unexpected '=='");
      return finish(L, t, TK_DEFNAME, start, e);
    }
    "%" id {
      size_t e = (size_t)(YYCURSOR - base);
      if (def_follows(L, e)) return finish(L, t, TK_DEFNAME, start, skip_blanks(L, e) + 1);
      return finish(L, t, TK_NAME, start, e);
    }
    "%" { return lex_error(L, start, "'%' must be followed by a name"); }

    id ":" { return finish(L, t, TK_CNAME, start, (size_t)(YYCURSOR - base)); }
    id "=" {
      size_t e = (size_t)(YYCURSOR - base);
      size_t n = e - 1 - start;
      const char *s = L->src + start;
      if (e < L->len && L->src[e] == '{') {
        if (n == 14 && memcmp(s, "backend_config", 14) == 0) L->raw_next = true;
        else if (n == 19 && memcmp(s, "frontend_attributes", 19) == 0) L->fa_depth = L->depth + 1;
        else if (L->fa_depth >= 0 && L->depth == L->fa_depth) L->raw_next = true;
      }
      return finish(L, t, TK_ATTRNAME, start, e);
    }
    dlabels { return finish(L, t, TK_DIMLABELS, start, (size_t)(YYCURSOR - base)); }
    "nan" | nanp | "-nan" | "-" nanp {
      return finish(L, t, TK_DECIMAL, start, (size_t)(YYCURSOR - base));
    }
    "-inf" { return finish(L, t, TK_NEGINF, start, (size_t)(YYCURSOR - base)); }
    id { return word(L, t, start, (size_t)(YYCURSOR - base)); }

    dec { return finish(L, t, TK_DECIMAL, start, (size_t)(YYCURSOR - base)); }
    dxd { return finish(L, t, TK_DXD, start, (size_t)(YYCURSOR - base)); }
    pad { return finish(L, t, TK_PAD, start, (size_t)(YYCURSOR - base)); }
    "-"? dig+ {
      size_t e = (size_t)(YYCURSOR - base);
      if (!int_in_range(L->src + start, e - start)) return lex_error(L, start, "integer out of range");
      return finish(L, t, TK_INT, start, e);
    }

    ["] ([^"\\\x00] | "\\" [^\x00])* ["] | ['] ([^'\\\x00] | "\\" [^\x00])* ['] {
      size_t e = (size_t)(YYCURSOR - base), bad;
      if (hlx_unescape(L->src + start + 1, e - start - 2, NULL, &bad) < 0)
        return lex_error(L, start + 1 + bad, "invalid escape sequence in string");
      return finish(L, t, TK_STRING, start, e);
    }
    ["'] { return lex_error(L, start, "unterminated string"); }

    "->" { return finish(L, t, TK_ARROW, start, start + 2); }
    "<=" { return finish(L, t, TK_LEQ, start, start + 2); }
    "..." { return finish(L, t, TK_ELLIPSIS, start, start + 3); }
    "=" { return finish(L, t, TK_EQ, start, start + 1); }
    "," { return finish(L, t, TK_COMMA, start, start + 1); }
    ":" { return finish(L, t, TK_COLON, start, start + 1); }
    "*" { return finish(L, t, TK_STAR, start, start + 1); }
    "?" { return finish(L, t, TK_QUESTION, start, start + 1); }
    "#" { return finish(L, t, TK_HASH, start, start + 1); }
    "+" { return finish(L, t, TK_PLUS, start, start + 1); }
    "~" { return finish(L, t, TK_TILDE, start, start + 1); }
    "[" { return open_bracket(L, t, TK_LBRACKET, start); }
    "(" { return open_bracket(L, t, TK_LPAREN, start); }
    "{" {
      if (L->last == TK_RBRACKET) {
        size_t p = skip_blanks(L, start + 1);
        char c = p < L->len ? L->src[p] : 0;
        if ((c >= '0' && c <= '9') || c == ':') return open_bracket(L, t, TK_LLBRACE, start);
      }
      return open_bracket(L, t, TK_LBRACE, start);
    }
    "]" { return close_bracket(L, t, TK_RBRACKET, start); }
    ")" { return close_bracket(L, t, TK_RPAREN, start); }
    "}" { return close_bracket(L, t, TK_RBRACE, start); }

    * { return lex_error(L, start, "unexpected character"); }
  */
}
