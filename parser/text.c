/* text.c: hlp_parse, HLO text -> IR: runs the lexer (lexer.re) into the
 * lemon grammar (hlo.y), then hands the syntax tree to the lowering
 * (lower.c). The one entry point of the parser.
 */
#include "parser/parser.h"
#include "parser/syntax.h"
#include "hlo.h"
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

static void lex_error(HlpParser *P, size_t off, const char *msg) { hlp_error(P, off, "%s", msg); }

HloModule *hlp_parse(const char *text, size_t len, const char *filename, HlcDiags *diags) {
  HloModule *volatile m = calloc(1, sizeof *m);
  if (!m) return NULL;
  hlc_arena_init(&m->arena);
  HlpParser *volatile P = calloc(1, sizeof *P);
  if (!P) { free(m); return NULL; }
  P->m = m;
  P->A = &m->arena;
  P->diags = diags;
  P->file = filename ? filename : "<input>";
  volatile bool ok = false;
  if (setjmp(P->oom)) {
    hlc_diag(diags, HLC_ERROR, "out of memory while parsing");
    goto done;
  }
  char *src = hlp_alloc(P, len + 1);
  memcpy(src, text, len);
  src[len] = 0;
  m->source = src;
  m->source_len = len;
  m->filename = hlp_strndup(P, P->file, strlen(P->file));
  m->replica_count = m->num_partitions = 1;
  P->src = src;
  P->len = len;
  if (len >= UINT32_MAX) {
    hlc_diag(diags, HLC_ERROR, "%s: input larger than 4 GiB", P->file);
    goto done;
  }
  const char *nul = memchr(src, 0, len);
  if (nul) {
    hlp_error(P, (size_t)(nul - src), "NUL byte in input");
    goto done;
  }
  P->lemon = hlp_ParseAlloc(malloc);
  if (!P->lemon) longjmp(P->oom, 1);
  HlxLexer L;
  hlx_init(&L, P, src, len, lex_error);
  HlxToken t;
  for (;;) {
    int k = hlx_next(&L, &t);
    if (k < 0 || P->stop) break;
    hlp_Parse(P->lemon, k, t, P);
    if (P->stop || k == 0) break;
  }
  if (P->nerr) goto done;
  if (hlp_lower(P) != 0 || P->nerr) goto done;
  ok = true;
done:
  if (P->lemon) hlp_ParseFree(P->lemon, free);
  free(P->line_starts);
  free(P);
  if (!ok) { hlp_module_free(m); return NULL; }
  return m;
}

