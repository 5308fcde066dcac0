/* syntax.h: parser-internal declarations shared by the lexer (lexer.re), the
 * grammar (hlo.y), the lowering to IR (lower.c, attrs.c, literal.c, shape.c)
 * and the printer (print.c).
 *
 * The grammar builds a thin syntax tree (Syn* below) whose leaves are already
 * IR objects (HloShape, HloVal item trees); lowering then resolves names and
 * turns attribute item trees into typed HloInstr fields. Everything lives in
 * the module arena. Not part of any contract: only parser/ uses it.
 */
#ifndef HLORUN_PARSER_SYNTAX_H
#define HLORUN_PARSER_SYNTAX_H
#include <stdbool.h>
#include <setjmp.h>
#include <stdint.h>
#include "common/diag.h"
#include "ir/ir.h"
#include "ir/print.h"

/* ---- Tokens -------------------------------------------------------------- */

typedef struct HlxToken {
  int kind;          /* TK_* from the generated hlo.h; 0 = end of input */
  uint32_t off, len; /* bytes of the token in the source */
  bool ws;           /* whitespace or a comment precedes the token */
} HlxToken;

/* Nesting of ( [ { deeper than this is an error (keeps recursion bounded). */
enum { HLX_MAX_DEPTH = HLO_MAX_NESTING };

struct HlpParser;
typedef void (*HlxErrorFn)(struct HlpParser *P, size_t off, const char *msg);

typedef struct HlxLexer {
  const char *src;        /* NUL-terminated copy of the input */
  size_t len;
  size_t pos;             /* next byte to read */
  int last;               /* kind of the previous token */
  int depth;              /* open brackets of any kind */
  int fa_depth;           /* depth inside frontend_attributes={...}, or -1 */
  bool raw_next;          /* the next '{' starts a raw dictionary (spec 1.9) */
  struct HlpParser *P;    /* for errors */
  HlxErrorFn error;       /* reports a lexing error at a source offset */
} HlxLexer;

/* error: how a lexing error is reported (text.c passes hlp_error's; the
 * lexer sits below the parser's helpers and never calls them). */
void hlx_init(HlxLexer *L, struct HlpParser *P, const char *src, size_t len, HlxErrorFn error);
/* Next token; kind 0 at the end. On a lexing error records it and returns -1. */
int hlx_next(HlxLexer *L, HlxToken *t);
/* C-unescape s[0..n) into out (which has room for n bytes; may be NULL to
 * only validate). Returns the decoded length, or -1 with *bad set to the
 * offset (within s) of the invalid escape. */
long hlx_unescape(const char *s, size_t n, char *out, size_t *bad);
/* Name of a token kind for messages ("'{'", "integer", ...). */
const char *hlx_kind_name(int kind);

/* ---- Lists ---------------------------------------------------------------- */

typedef struct HlpNode { void *p; struct HlpNode *next; } HlpNode;
typedef struct HlpList {
  HlpNode *head, *tail;
  int32_t n;
  bool comma;        /* a ',' was seen since the last item (item lists) */
  uint32_t comma_off;   /* offset of that ',' */
  uint32_t stray_comma; /* 1 + offset of the first ',' not between two items
                           (leading, doubled or trailing), 0 if none; operand
                           lists reject it, literal bodies tolerate it */
} HlpList;

/* 1 + offset of the first misplaced ',' of an item list (leading, doubled or
 * trailing), 0 if the commas only separate items. */
static inline uint32_t hlp_list_stray_comma(const HlpList *l) {
  if (l->stray_comma) return l->stray_comma;
  return l->comma ? l->comma_off + 1 : 0;
}

/* ---- Syntax tree ---------------------------------------------------------- */

typedef struct SynAttr { HlxToken name; HlpList vals; /* HloVal* */ } SynAttr;

typedef struct SynInstr {
  bool root;
  HlxToken name;      /* DEFNAME token (name, optional '%', '=' included) */
  HloShape *shape;    /* NULL if omitted */
  HlxToken opcode;
  uint32_t lparen;    /* offset of '(' */
  HlpList ops;        /* HloVal* items between the parentheses */
  HlpList attrs;      /* SynAttr* */
} SynInstr;

typedef struct SynParam { HlxToken name; HloShape *shape; } SynParam;

typedef struct SynComp {
  bool entry;
  HlxToken name;
  bool has_sig;
  HlpList params;     /* SynParam* */
  HloShape *result;   /* signature result shape */
  uint32_t result_off;
  HlpList instrs;     /* SynInstr* */
  HlpList attrs;      /* SynAttr* (execution_thread) */
  uint32_t lbrace;
} SynComp;

typedef struct SynModule {
  bool has_header;
  HlxToken name;
  HlpList attrs;      /* SynAttr* (one value each) */
  bool has_sfi;
  HlpList sfi[4];     /* HloVal* items of FileNames..StackFrames */
  HlpList comps;      /* SynComp* */
} SynModule;

/* ---- Parser state ---------------------------------------------------------- */

typedef struct HlpParser {
  HloModule *m;
  HlcArena *A;
  HlcDiags *diags;
  const char *file;
  const char *src;
  size_t len;
  int nerr;            /* errors reported by this parse */
  bool stop;           /* stop feeding tokens */
  SynModule syn;
  int anon_count;      /* inline computations / anonymous instructions */
  /* lowering state */
  HloComputation *cur; /* computation being lowered */
  HlpList pending_comps; /* HloComputation* made while lowering (inline, async) */
  jmp_buf oom;         /* hlp_alloc jumps here when memory runs out */
  void *lemon;         /* the lemon parser, freed on every exit path */
  struct HlpNames *comps_map;  /* lower.c: computations by name */
  struct HlpNames *instrs_map; /* lower.c: the instructions of the computation
                                  being lowered, by name */
  void *ctx;           /* lower.c: the computation being lowered */
  /* lower.c's hlp_lower_inline, for attrs.c's inline computation bodies
   * (nested attributes recurse into the lowering: passed down, not called). */
  struct HloComputation *(*lower_inline)(struct HlpParser *P, HloVal *v);
  HlpList warned;      /* unknown attribute names already warned about */
  HlpList async_comps; /* HloComputation* wrapped by an async-start so far */
  uint32_t *line_starts; /* owned (malloc): offsets of line starts, built lazily */
  size_t nlines;
} HlpParser;

void hlp_error(HlpParser *P, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void hlp_warning(HlpParser *P, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* True the first time a key is seen (warn once per unknown name). */
bool hlp_first_warning(HlpParser *P, const char *key);
/* 1-based line of a source offset (binary search in a line table). */
int32_t hlp_line_of(HlpParser *P, size_t off);
/* XLA's Shardy round-trip manual edges: their shardings from frontend
 * attributes (sdy_edges.c). 0, or -1 after errors. */
int hlp_lower_sdy_edges(HlpParser *P);
void *hlp_alloc(HlpParser *P, size_t n);     /* arena, zeroed; never NULL (aborts parse) */
char *hlp_strndup(HlpParser *P, const char *s, size_t n);
void hlp_list_push(HlpParser *P, HlpList *l, void *p);
void **hlp_list_array(HlpParser *P, const HlpList *l);

/* Grammar helpers (parse.c). */
HloVal *hlp_val_tok(HlpParser *P, HlxToken t);
/* Value of an INT token (errors reported by the lexer; 0 if bad). */
int64_t hlp_tok_i64(HlpParser *P, HlxToken t);
HloVal *hlp_val_group(HlpParser *P, HloValKind k, HlxToken open, HlpList *items);
HloVal *hlp_val_attr(HlpParser *P, HlxToken name, HloVal *v);
HloVal *hlp_val_shape(HlpParser *P, HloShape *s, HlxToken first);
HloVal *hlp_val_comp(HlpParser *P, HlxToken open, HlpList *instrs);
void hlp_items_push(HlpParser *P, HlpList *l, HloVal *v);
HloShape *hlp_shape_array(HlpParser *P, HlxToken type, HlpList *dims, HloShape *layout);
HloShape *hlp_shape_tuple(HlpParser *P, HlpList *elems);
HloShape *hlp_shape_layout(HlpParser *P, HlxToken open, HlpList *m2m, HlpList *tail);

/* Grammar entry points (hlo.c, generated). */
void *hlp_ParseAlloc(void *(*)(size_t));
void hlp_Parse(void *, int, HlxToken, HlpParser *);
void hlp_ParseFree(void *, void (*)(void *));

/* Name tables (names.c): string -> pointer, in the arena. */
typedef struct HlpNames { const char **k; void **v; size_t cap, n; } HlpNames;
void *hlp_names_get(const HlpNames *m, const char *s, size_t n);   /* NULL: absent (m may be NULL) */
void hlp_names_put(HlpParser *P, HlpNames *m, const char *key, void *val);
/* The computation of that name, and the instruction of that name in the
 * computation being lowered (for control-predecessors). */
HloComputation *hlp_find_comp(HlpParser *P, const char *name, size_t n);
HloInstr *hlp_find_instr(HlpParser *P, const char *name, size_t n);

/* Lowering (lower.c): syntax tree -> IR. 0 on success. */
int hlp_lower(HlpParser *P);
/* Lowering of one computation's body, also used for inline computations. */
HloComputation *hlp_lower_inline(HlpParser *P, HloVal *v);

/* Attributes (attrs.c): fill the typed fields of ins from its attributes. */
int hlp_lower_attrs(HlpParser *P, HloInstr *ins, SynInstr *si);
int hlp_lower_module_attrs(HlpParser *P);

/* Literals (literal.c): parse items against shape into a literal. */
HloLiteral *hlp_literal(HlpParser *P, const HloShape *shape, HloVal **items, int32_t n,
                        uint32_t off);

/* Shapes (shape.c). */
void hlp_fill_layout(HlpParser *P, HloShape *s);
HloShape *hlp_shape_copy(HlpParser *P, const HloShape *s);
HloShape *hlp_shape_make(HlpParser *P, HloDtype t, int32_t rank, const int64_t *dims);
/* Shape from attribute items starting at items[*i]; advances *i. NULL on error. */
HloShape *hlp_shape_from_items(HlpParser *P, HloVal **items, int32_t n, int32_t *i);

#endif
