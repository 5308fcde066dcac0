/* hlo.y: lemon grammar of HLO text (spec hlo-text.md, appendix A).
 *
 * It builds the syntax tree of syntax.h: module header, stack-frame index,
 * computations with optional signatures, instructions. Operand lists and
 * attribute values are not interpreted here: they use one generic item
 * grammar (tokens, strings, raw dictionaries, {..} [..] (..) groups,
 * name=value pairs, array shapes) and lowering (lower.c, attrs.c) decides
 * what each item means. This keeps the grammar small and LALR(1)-clean.
 * Context decisions the grammar cannot make (instruction names vs attribute
 * names, layout braces, raw dictionaries) are made by the lexer.
 * All semantic values live in the module arena: no destructors.
 */
%include {
#include "parser/syntax.h"
#include <assert.h>
#include <stdlib.h>
#include <string.h>
}

%name hlp_Parse
%token_prefix TK_
%token_type {HlxToken}
%extra_argument {HlpParser *P}
%stack_size 2000
%start_symbol module

%syntax_error {
  if (!P->stop) {
    if (TOKEN.kind == 0)
      hlp_error(P, P->len, "unexpected end of input");
    else
      hlp_error(P, TOKEN.off, "unexpected %s", hlx_kind_name(TOKEN.kind));
  }
  P->stop = true;
}
%stack_overflow {
  hlp_error(P, 0, "input nested too deeply");
  P->stop = true;
}
%parse_failure { P->stop = true; }
/* Values live in the arena: nothing to free (this also keeps lemon's
 * destructor function from having an unused parser argument). */
%default_destructor { (void)P; (void)yypminor; }

%token KW_HLOMODULE KW_ENTRY KW_ROOT KW_FILENAMES KW_FUNCTIONNAMES KW_FILELOCATIONS
       KW_STACKFRAMES.
%token NAME CNAME DEFNAME ATTRNAME IDENT TYPE BUFSHAPE.
%token INT DECIMAL NEGINF DXD PAD DIMLABELS STRING RAWDICT.
%token EQ COMMA COLON STAR QUESTION HASH PLUS TILDE LBRACKET RBRACKET LBRACE LLBRACE
       RBRACE LPAREN RPAREN ELLIPSIS ARROW LEQ.

%type items {HlpList}
%type instrs {HlpList}
%type iattrs {HlpList}
%type mattrs {HlpList}
%type cattrs {HlpList}
%type params {HlpList}
%type params_opt {HlpList}
%type avalue {HlpList}
%type sitems {HlpList}
%type dims {HlpList}
%type dims_opt {HlpList}
%type lints {HlpList}
%type shapes {HlpList}
%type shapes_opt {HlpList}
%type item {HloVal *}
%type sitem {HloVal *}
%type shape {HloShape *}
%type shape_opt {HloShape *}
%type ashape {HloShape *}
%type layout_opt {HloShape *}
%type dim {int64_t *}
%type instr {SynInstr *}
%type comp {SynComp *}
%type root_opt {bool}
%type entry_opt {bool}
%type cname {HlxToken}
%type mname {HlxToken}
%type tokitem {HlxToken}

/* ---- Module -------------------------------------------------------------- */

module ::= header sfi comps.

header ::= .
header ::= KW_HLOMODULE mname(N) mattrs(A). {
  P->syn.has_header = true; P->syn.name = N; P->syn.attrs = A;
}
mname(R) ::= NAME(N). { R = N; }
mname(R) ::= IDENT(N). { R = N; }
mname(R) ::= CNAME(N). { R = N; }

mattrs(R) ::= . { memset(&R, 0, sizeof R); }
mattrs(R) ::= mattrs(L) COMMA ATTRNAME(N) item(V). {
  SynAttr *a = hlp_alloc(P, sizeof *a);
  a->name = N;
  hlp_items_push(P, &a->vals, V);
  R = L; hlp_list_push(P, &R, a);
}

sfi ::= .
sfi ::= KW_FILENAMES sitems(A) KW_FUNCTIONNAMES sitems(B) KW_FILELOCATIONS sitems(C)
        KW_STACKFRAMES sitems(D). {
  P->syn.has_sfi = true;
  P->syn.sfi[0] = A; P->syn.sfi[1] = B; P->syn.sfi[2] = C; P->syn.sfi[3] = D;
}
sitems(R) ::= . { memset(&R, 0, sizeof R); }
sitems(R) ::= sitems(L) sitem(V). { R = L; hlp_items_push(P, &R, V); }
sitems(R) ::= sitems(L) COMMA. { R = L; R.comma = true; }
sitem(R) ::= INT(T). { R = hlp_val_tok(P, T); }
sitem(R) ::= STRING(T). { R = hlp_val_tok(P, T); }
sitem(R) ::= LBRACE(O) items(I) RBRACE. { R = hlp_val_group(P, HLO_VAL_BRACE, O, &I); }

comps ::= comp(C). { hlp_list_push(P, &P->syn.comps, C); }
comps ::= comps comp(C). { hlp_list_push(P, &P->syn.comps, C); }

/* ---- Computations ---------------------------------------------------------- */

comp(R) ::= entry_opt(E) cname(N) LBRACE(B) instrs(I) RBRACE cattrs(A). {
  R = hlp_alloc(P, sizeof *R);
  R->entry = E; R->name = N; R->instrs = I; R->attrs = A; R->lbrace = B.off;
}
comp(R) ::= entry_opt(E) cname(N) LPAREN params_opt(S) RPAREN ARROW(W) shape(T)
            LBRACE(B) instrs(I) RBRACE cattrs(A). {
  R = hlp_alloc(P, sizeof *R);
  R->entry = E; R->name = N; R->instrs = I; R->attrs = A; R->lbrace = B.off;
  R->has_sig = true; R->params = S; R->result = T; R->result_off = W.off + W.len;
}
entry_opt(R) ::= . { R = false; }
entry_opt(R) ::= KW_ENTRY. { R = true; }
cname(R) ::= NAME(N). { R = N; }
cname(R) ::= IDENT(N). { R = N; }

params_opt(R) ::= . { memset(&R, 0, sizeof R); }
params_opt(R) ::= params(L). { R = L; }
params(R) ::= CNAME(N) shape(S). {
  SynParam *p = hlp_alloc(P, sizeof *p);
  p->name = N; p->shape = S;
  memset(&R, 0, sizeof R); hlp_list_push(P, &R, p);
}
params(R) ::= params(L) COMMA CNAME(N) shape(S). {
  SynParam *p = hlp_alloc(P, sizeof *p);
  p->name = N; p->shape = S;
  R = L; hlp_list_push(P, &R, p);
}

cattrs(R) ::= . { memset(&R, 0, sizeof R); }
cattrs(R) ::= cattrs(L) COMMA ATTRNAME(N) STRING(V). {
  SynAttr *a = hlp_alloc(P, sizeof *a);
  a->name = N;
  hlp_items_push(P, &a->vals, hlp_val_tok(P, V));
  R = L; hlp_list_push(P, &R, a);
}

/* ---- Instructions ---------------------------------------------------------- */

instrs(R) ::= instr(I). { memset(&R, 0, sizeof R); hlp_list_push(P, &R, I); }
instrs(R) ::= instrs(L) instr(I). { R = L; hlp_list_push(P, &R, I); }

instr(R) ::= root_opt(O) DEFNAME(N) shape_opt(S) IDENT(C) LPAREN(L) items(I) RPAREN
             iattrs(A). {
  R = hlp_alloc(P, sizeof *R);
  R->root = O; R->name = N; R->shape = S; R->opcode = C; R->lparen = L.off;
  R->ops = I; R->attrs = A;
}
root_opt(R) ::= . { R = false; }
root_opt(R) ::= KW_ROOT. { R = true; }
shape_opt(R) ::= . { R = NULL; }
shape_opt(R) ::= shape(S). { R = S; }

iattrs(R) ::= . { memset(&R, 0, sizeof R); }
iattrs(R) ::= iattrs(L) COMMA ATTRNAME(N) avalue(V). {
  SynAttr *a = hlp_alloc(P, sizeof *a);
  a->name = N; a->vals = V;
  R = L; hlp_list_push(P, &R, a);
}
avalue(R) ::= item(V). { memset(&R, 0, sizeof R); hlp_items_push(P, &R, V); }
avalue(R) ::= avalue(L) item(V). { R = L; hlp_items_push(P, &R, V); }

/* ---- Shapes ------------------------------------------------------------------ */

shape(R) ::= ashape(S). { R = S; }
shape(R) ::= LPAREN shapes_opt(L) RPAREN. { R = hlp_shape_tuple(P, &L); }
shape(R) ::= BUFSHAPE shape(S) RPAREN. { R = S; if (R) R->is_buffer = true; }
shapes_opt(R) ::= . { memset(&R, 0, sizeof R); }
shapes_opt(R) ::= shapes(L). { R = L; }
shapes(R) ::= shape(S). { memset(&R, 0, sizeof R); hlp_list_push(P, &R, S); }
shapes(R) ::= shapes(L) COMMA shape(S). { R = L; hlp_list_push(P, &R, S); }

ashape(R) ::= TYPE(T) LBRACKET dims_opt(D) RBRACKET layout_opt(L). {
  R = hlp_shape_array(P, T, &D, L);
}
dims_opt(R) ::= . { memset(&R, 0, sizeof R); }
dims_opt(R) ::= dims(L). { R = L; }
dims(R) ::= dim(D). { memset(&R, 0, sizeof R); hlp_list_push(P, &R, D); }
dims(R) ::= dims(L) COMMA dim(D). { R = L; hlp_list_push(P, &R, D); }
/* A dim is {extent, HLO_DIM_* flag, offset}. */
dim(R) ::= INT(T). {
  R = hlp_alloc(P, 3 * sizeof *R);
  R[0] = hlp_tok_i64(P, T); R[1] = HLO_DIM_STATIC; R[2] = T.off;
}
dim(R) ::= LEQ INT(T). {
  R = hlp_alloc(P, 3 * sizeof *R);
  R[0] = hlp_tok_i64(P, T); R[1] = HLO_DIM_BOUNDED; R[2] = T.off;
}
dim(R) ::= QUESTION(T). {
  R = hlp_alloc(P, 3 * sizeof *R);
  R[0] = -1; R[1] = HLO_DIM_UNBOUNDED; R[2] = T.off;
}

layout_opt(R) ::= . { R = NULL; }
layout_opt(R) ::= LLBRACE(O) lints(M) RBRACE. { R = hlp_shape_layout(P, O, &M, NULL); }
layout_opt(R) ::= LLBRACE(O) lints(M) COLON items(T) RBRACE. {
  R = hlp_shape_layout(P, O, &M, &T);
}
lints(R) ::= . { memset(&R, 0, sizeof R); }
lints(R) ::= INT(T). { memset(&R, 0, sizeof R); hlp_list_push(P, &R, hlp_val_tok(P, T)); }
lints(R) ::= lints(L) COMMA INT(T). { R = L; hlp_list_push(P, &R, hlp_val_tok(P, T)); }

/* ---- Generic items (operand lists and attribute values) ------------------- */

items(R) ::= . { memset(&R, 0, sizeof R); }
items(R) ::= items(L) item(V). { R = L; hlp_items_push(P, &R, V); }
items(R) ::= items(L) COMMA(C). {
  R = L;
  if ((R.comma || R.n == 0) && !R.stray_comma) R.stray_comma = C.off + 1;
  R.comma = true;
  R.comma_off = C.off;
}

item(R) ::= tokitem(T). { R = hlp_val_tok(P, T); }
item(R) ::= LBRACE(O) items(I) RBRACE. { R = hlp_val_group(P, HLO_VAL_BRACE, O, &I); }
item(R) ::= LBRACE(O) instrs(I) RBRACE. { R = hlp_val_comp(P, O, &I); }
item(R) ::= LBRACKET(O) items(I) RBRACKET. { R = hlp_val_group(P, HLO_VAL_BRACKET, O, &I); }
item(R) ::= LPAREN(O) items(I) RPAREN. { R = hlp_val_group(P, HLO_VAL_PAREN, O, &I); }
item(R) ::= ATTRNAME(N) item(V). { R = hlp_val_attr(P, N, V); }
item(R) ::= TYPE(T) LBRACKET dims_opt(D) RBRACKET layout_opt(L). {
  R = hlp_val_shape(P, hlp_shape_array(P, T, &D, L), T);
}

tokitem(R) ::= NAME(T). { R = T; }
tokitem(R) ::= CNAME(T). { R = T; }
tokitem(R) ::= IDENT(T). { R = T; }
tokitem(R) ::= INT(T). { R = T; }
tokitem(R) ::= DECIMAL(T). { R = T; }
tokitem(R) ::= NEGINF(T). { R = T; }
tokitem(R) ::= DXD(T). { R = T; }
tokitem(R) ::= PAD(T). { R = T; }
tokitem(R) ::= DIMLABELS(T). { R = T; }
tokitem(R) ::= STRING(T). { R = T; }
tokitem(R) ::= RAWDICT(T). { R = T; }
tokitem(R) ::= EQ(T). { R = T; }
tokitem(R) ::= COLON(T). { R = T; }
tokitem(R) ::= STAR(T). { R = T; }
tokitem(R) ::= QUESTION(T). { R = T; }
tokitem(R) ::= HASH(T). { R = T; }
tokitem(R) ::= PLUS(T). { R = T; }
tokitem(R) ::= TILDE(T). { R = T; }
tokitem(R) ::= ELLIPSIS(T). { R = T; }
tokitem(R) ::= ARROW(T). { R = T; }
tokitem(R) ::= LEQ(T). { R = T; }
