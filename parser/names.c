/* names.c: the parser's name tables (computations and instructions by
 * name): small string -> pointer hash tables in the module arena, and the
 * two lookups attrs.c makes while lower.c fills them. */
#include "parser/syntax.h"
#include <string.h>

static uint64_t hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

void *hlp_names_get(const HlpNames *m, const char *s, size_t n) {
  if (!m || !m->cap) return NULL;
  for (size_t i = hash(s, n) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (!m->k[i]) return NULL;
    if (strlen(m->k[i]) == n && memcmp(m->k[i], s, n) == 0) return m->v[i];
  }
}

void hlp_names_put(HlpParser *P, HlpNames *m, const char *key, void *val) {
  if (2 * (m->n + 1) > m->cap) {
    HlpNames g = {0};
    g.cap = m->cap ? m->cap * 2 : 64;
    g.k = hlp_alloc(P, g.cap * sizeof *g.k);
    g.v = hlp_alloc(P, g.cap * sizeof *g.v);
    for (size_t i = 0; i < m->cap; i++)
      if (m->k[i]) hlp_names_put(P, &g, m->k[i], m->v[i]);
    *m = g;
  }
  size_t n = strlen(key);
  for (size_t i = hash(key, n) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (!m->k[i]) { m->k[i] = key; m->v[i] = val; m->n++; return; }
  }
}

HloComputation *hlp_find_comp(HlpParser *P, const char *name, size_t n) {
  return hlp_names_get(P->comps_map, name, n);
}

HloInstr *hlp_find_instr(HlpParser *P, const char *name, size_t n) {
  return hlp_names_get(P->instrs_map, name, n);
}
