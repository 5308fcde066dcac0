/* syntax.h: stablehlo/-internal declarations shared by the lexer (lexer.re),
 * the grammar (mlir.y), the parse driver (parse.c) and the translation to HLO
 * text (lower*.c, types.c, dense.c).
 *
 * The grammar builds a generic tree of MLIR text: operations (results, name,
 * items), and items that are tokens or bracketed groups ( ) [ ] < > { } where
 * a { } is either an attribute dictionary or a region of blocks of
 * operations. What an operation's items mean (operands, attributes, types,
 * pretty or generic syntax) is decided by the translation, per op. Context
 * the grammar cannot see (where an operation starts, whether '{' opens a
 * region or a dictionary, a block header's ':') is decided by the driver.
 * Everything lives in one arena. Not part of any contract.
 */
#ifndef HLORUN_STABLEHLO_SYNTAX_H
#define HLORUN_STABLEHLO_SYNTAX_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/arena.h"
#include "common/diag.h"

typedef struct ShToken {
  int kind;          /* SH_* from the generated mlir.h; 0 = end of input */
  uint32_t off, len; /* bytes of the token in the source */
  bool bol;          /* first token on its line */
} ShToken;

/* Nesting deeper than this is an error (keeps recursion bounded). */
enum { SH_MAX_DEPTH = 200 };

typedef struct ShLexer {
  const char *src;   /* NUL-terminated */
  size_t len, pos;
  bool bol;
} ShLexer;

/* Next token; kind 0 at the end, -1 on a lexing error (*errmsg set). */
int shx_next(ShLexer *L, ShToken *t, const char **errmsg);
const char *shx_kind_name(int kind);

/* Node kinds beyond token kinds. */
enum {
  SHN_TOKEN = 1,  /* tok: one token */
  SHN_PAREN,      /* ( kids ) */
  SHN_BRACKET,    /* [ kids ] */
  SHN_ANGLE,      /* < kids > */
  SHN_DICT,       /* { kids } an attribute dictionary */
  SHN_REGION,     /* { blocks } */
  SHN_OP,         /* an operation */
  SHN_BLOCK,      /* ^label(args): ops, or the region's unlabelled entry block */
  SHN_CHUNK       /* a file part between "// -----" lines: ops */
};

typedef struct ShNode {
  int kind;
  ShToken tok;              /* SHN_TOKEN: the token; others: the opening token */
  struct ShNode *kids;      /* first child */
  struct ShNode *last;      /* last child (appending) */
  struct ShNode *next;      /* sibling */
  int nkids;
  /* SHN_OP */
  ShToken name;             /* op name token (bare or quoted) */
  struct ShNode *results;   /* SHN_TOKEN list of RESULT tokens, or NULL */
  /* SHN_BLOCK */
  struct ShNode *args;      /* SHN_PAREN of the block header, or NULL */
} ShNode;

typedef struct ShParser {
  HlcArena *arena;
  const char *src;
  size_t len;
  const char *file;
  HlcDiags *diags;
  bool stop;
  ShNode *top;              /* SHN_TOKEN list of SHN_CHUNK */
} ShParser;

ShNode *shn_new(ShParser *P, int kind, const ShToken *t);
ShNode *shn_append(ShNode *list, ShNode *kid);   /* returns list */
void shp_error(ShParser *P, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Parse the whole text into chunks (P->top). 0 on success, else -1 with
 * positioned errors. */
int shp_parse(ShParser *P);
#endif
