/* mlir.y: lemon grammar of MLIR text as a generic tree (syntax.h).
 *
 * A file is chunks ("// -----" between them) of operations. An operation is
 * its results, its name and a sequence of items: tokens and bracketed groups;
 * a { } is a dictionary or a region of blocks (the driver, parse.c, tells
 * which, and marks where each operation starts). Which items are operands,
 * attributes and types is for the translation to decide per op: the pretty
 * syntaxes differ from op to op, the generic syntax is one of them.
 * All nodes live in the parser's arena: no destructors.
 */
%include {
#include "stablehlo/syntax.h"
#include <assert.h>
#include <stdlib.h>
#include <string.h>
}

%name shp_Parse
%token_prefix SH_
%token_type {ShToken}
%extra_argument {ShParser *P}
%stack_size 1000
%start_symbol file

%syntax_error {
  if (!P->stop) {
    if (TOKEN.kind == 0)
      shp_error(P, P->len, "unexpected end of input (an unclosed bracket or region?)");
    else
      shp_error(P, TOKEN.off, "unexpected %s", shx_kind_name(TOKEN.kind));
  }
  P->stop = true;
}
%stack_overflow {
  shp_error(P, 0, "input nested too deeply");
  P->stop = true;
}
%parse_failure { P->stop = true; }
%default_destructor { (void)P; (void)yypminor; }

%token OPSTART OPNAME ALIAS RESULT VALUE BLOCKID BLOCKCOLON SYMBOL HASHID BANGID BAREID ATTRKEY.
%token STRING INT FLOAT HEX DIMS SPLIT.
%token COLON COMMA EQ ARROW PUNCT LPAREN RPAREN LBRACKET RBRACKET LANGLE RANGLE DICTOPEN
       REGIONOPEN RBRACE.

%type chunks {ShNode *}
%type ops {ShNode *}
%type op {ShNode *}
%type results {ShNode *}
%type items {ShNode *}
%type item {ShNode *}
%type region {ShNode *}
%type tok {ShToken}

file ::= chunks(C). { P->top = C; }

chunks(A) ::= ops(O). { O->kind = SHN_CHUNK; A = shn_append(shn_new(P, 0, NULL), O); }
chunks(A) ::= chunks(L) SPLIT ops(O). { O->kind = SHN_CHUNK; A = shn_append(L, O); }

ops(A) ::= . { A = shn_new(P, SHN_BLOCK, NULL); }
ops(A) ::= ops(L) op(O). { A = shn_append(L, O); }

op(A) ::= OPSTART results(R) EQ OPNAME(N) items(I). { A = I; A->kind = SHN_OP; A->name = N; A->tok = N; A->results = R; }
op(A) ::= OPSTART OPNAME(N) items(I). { A = I; A->kind = SHN_OP; A->name = N; A->tok = N; }
op(A) ::= OPSTART ALIAS(N) EQ items(I). { A = I; A->kind = SHN_OP; A->name = N; A->tok = N; }

results(A) ::= RESULT(T). { A = shn_append(shn_new(P, 0, &T), shn_new(P, SHN_TOKEN, &T)); }
results(A) ::= results(L) COMMA RESULT(T). { A = shn_append(L, shn_new(P, SHN_TOKEN, &T)); }

items(A) ::= . { A = shn_new(P, 0, NULL); }
items(A) ::= items(L) item(X). { A = shn_append(L, X); }

item(A) ::= tok(T). { A = shn_new(P, SHN_TOKEN, &T); }
item(A) ::= LPAREN(T) items(I) RPAREN. { A = I; A->kind = SHN_PAREN; A->tok = T; }
item(A) ::= LBRACKET(T) items(I) RBRACKET. { A = I; A->kind = SHN_BRACKET; A->tok = T; }
item(A) ::= LANGLE(T) items(I) RANGLE. { A = I; A->kind = SHN_ANGLE; A->tok = T; }
item(A) ::= DICTOPEN(T) items(I) RBRACE. { A = I; A->kind = SHN_DICT; A->tok = T; }
item(A) ::= REGIONOPEN(T) region(R) RBRACE. { A = R; A->kind = SHN_REGION; A->tok = T; }

tok(A) ::= VALUE(T). { A = T; }
tok(A) ::= SYMBOL(T). { A = T; }
tok(A) ::= HASHID(T). { A = T; }
tok(A) ::= BANGID(T). { A = T; }
tok(A) ::= BAREID(T). { A = T; }
tok(A) ::= ATTRKEY(T). { A = T; }
tok(A) ::= STRING(T). { A = T; }
tok(A) ::= INT(T). { A = T; }
tok(A) ::= FLOAT(T). { A = T; }
tok(A) ::= HEX(T). { A = T; }
tok(A) ::= DIMS(T). { A = T; }
tok(A) ::= COLON(T). { A = T; }
tok(A) ::= COMMA(T). { A = T; }
tok(A) ::= EQ(T). { A = T; }
tok(A) ::= ARROW(T). { A = T; }
tok(A) ::= PUNCT(T). { A = T; }

/* A region: its entry block (perhaps unlabelled), then labelled blocks. */
region(A) ::= ops(O). { A = shn_append(shn_new(P, 0, NULL), O); }
region(A) ::= region(L) BLOCKID(B) items(H) BLOCKCOLON ops(O). {
  O->tok = B;
  O->args = H->kids && H->kids->kind == SHN_PAREN ? H->kids : NULL;
  /* an empty unlabelled entry block before the first label is dropped */
  if (L->nkids == 1 && L->kids->nkids == 0 && L->kids->tok.kind == 0) { L->kids = L->last = NULL; L->nkids = 0; }
  A = shn_append(L, O);
}
