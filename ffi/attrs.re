/* attrs.re: re2c lexer for backend_config attribute dictionaries (MLIR
 * attribute syntax): punctuation, numbers, strings, identifiers. Tokens are
 * {kind, off, len}; string escapes are checked and decoded by the parser
 * (attrs.c), which also owns every error message. The input must be
 * NUL-terminated at s[len]; a NUL byte before that is an error token.
 * Not here: grammar, values, conversions (attrs.c). */
#include "ffi/internal.h"

/*!re2c
  re2c:define:YYCTYPE = "unsigned char";
  re2c:yyfill:enable = 0;
  re2c:flags:tags = 0;

  digit  = [0-9];
  hex    = [0-9a-fA-F];
  ident  = [a-zA-Z_] [a-zA-Z0-9_$.]*;
  exp    = [eE] [+-]? digit+;
  strch  = [^"\\\x00\n\r] | "\\" [^\x00\n\r];
*/

static HlfTok tok(HlfTokKind k, size_t off, size_t end) { return (HlfTok){k, off, end - off}; }

HlfTok hlf_lex(const char *s, size_t len, size_t pos) {
  const unsigned char *base = (const unsigned char *)s;
  const unsigned char *YYCURSOR, *YYMARKER, *start;
  YYCURSOR = base + pos;
  (void)YYMARKER;
loop:
  start = YYCURSOR;
  /*!re2c
    "\x00"                  { if ((size_t)(start - base) >= len) return tok(HLF_T_EOF, len, len);
                              return tok(HLF_T_ERROR, start - base, YYCURSOR - base); }
    [ \t\n\r]+              { goto loop; }
    "//" [^\x00\n]*         { goto loop; }
    "{"                     { return tok(HLF_T_LBRACE, start - base, YYCURSOR - base); }
    "}"                     { return tok(HLF_T_RBRACE, start - base, YYCURSOR - base); }
    "["                     { return tok(HLF_T_LBRACK, start - base, YYCURSOR - base); }
    "]"                     { return tok(HLF_T_RBRACK, start - base, YYCURSOR - base); }
    "<"                     { return tok(HLF_T_LT, start - base, YYCURSOR - base); }
    ">"                     { return tok(HLF_T_GT, start - base, YYCURSOR - base); }
    ","                     { return tok(HLF_T_COMMA, start - base, YYCURSOR - base); }
    "="                     { return tok(HLF_T_EQ, start - base, YYCURSOR - base); }
    ":"                     { return tok(HLF_T_COLON, start - base, YYCURSOR - base); }
    "-"                     { return tok(HLF_T_MINUS, start - base, YYCURSOR - base); }
    digit+                  { return tok(HLF_T_INT, start - base, YYCURSOR - base); }
    "0x" hex+               { return tok(HLF_T_HEX, start - base, YYCURSOR - base); }
    digit+ "." digit* exp?  { return tok(HLF_T_FLOAT, start - base, YYCURSOR - base); }
    ["] strch* ["]          { return tok(HLF_T_STRING, start - base, YYCURSOR - base); }
    ["] strch*              { return tok(HLF_T_BADSTRING, start - base, YYCURSOR - base); }
    ident                   { return tok(HLF_T_IDENT, start - base, YYCURSOR - base); }
    "@" (ident | ["] strch* ["]) { return tok(HLF_T_SYMBOL, start - base, YYCURSOR - base); }
    "#"                     { return tok(HLF_T_HASH, start - base, YYCURSOR - base); }
    *                       { return tok(HLF_T_ERROR, start - base, YYCURSOR - base); }
  */
}

HlfTok hlf_lex_dim(const char *s, size_t len, size_t pos) {
  const unsigned char *base = (const unsigned char *)s;
  const unsigned char *YYCURSOR, *YYMARKER, *start;
  YYCURSOR = base + pos;
  while (*YYCURSOR == ' ' || *YYCURSOR == '\t' || *YYCURSOR == '\n' || *YYCURSOR == '\r')
    YYCURSOR++;
  start = YYCURSOR;
  /*!re2c
    (digit+ | "?") "x"      { return tok(HLF_T_DIM, start - base, YYCURSOR - base); }
    *                       { return hlf_lex(s, len, pos); }
  */
}
