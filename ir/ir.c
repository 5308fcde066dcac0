/* ir.c: small queries over the IR (opcode names, shape predicates). */
#include "ir/ir.h"
#include <stdlib.h>
#include <string.h>

static const char *const opcode_names[HLO_NUM_OPCODES] = {
#define OPCODE(id, text, arity, shape_opt) text,
#include "ir/opcodes.def"
#undef OPCODE
};

const char *hlp_opcode_name(HloOpcode op) {
  return (unsigned)op < HLO_NUM_OPCODES ? opcode_names[op] : "?";
}

int hlp_opcode_from_name(const char *s, size_t n) {
  for (int i = 0; i < HLO_NUM_OPCODES; i++)
    if (strlen(opcode_names[i]) == n && memcmp(opcode_names[i], s, n) == 0) return i;
  return -1;
}

int64_t hlp_shape_elements(const HloShape *s) {
  /* Saturates at INT64_MAX: a shape read from a file may declare dims whose
   * product overflows before a later zero dim makes it empty. */
  for (int32_t i = 0; i < s->rank; i++)
    if (s->dims[i] <= 0) return 0;
  int64_t n = 1;
  for (int32_t i = 0; i < s->rank; i++)
    n = n > INT64_MAX / s->dims[i] ? INT64_MAX : n * s->dims[i];
  return n;
}

bool hlp_shape_compatible(const HloShape *a, const HloShape *b) {
  if (a->dtype != b->dtype) return false;
  if (a->dtype == HLO_TUPLE) {
    if (a->ntuple != b->ntuple) return false;
    for (int32_t i = 0; i < a->ntuple; i++)
      if (!hlp_shape_compatible(&a->tuple[i], &b->tuple[i])) return false;
    return true;
  }
  if (a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

bool hlp_shape_equal(const HloShape *a, const HloShape *b) {
  if (!hlp_shape_compatible(a, b)) return false;
  if (a->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < a->ntuple; i++)
      if (!hlp_shape_equal(&a->tuple[i], &b->tuple[i])) return false;
    return true;
  }
  if (!a->minor_to_major != !b->minor_to_major) return false;
  if (a->minor_to_major &&
      memcmp(a->minor_to_major, b->minor_to_major, (size_t)a->rank * sizeof(int64_t)) != 0)
    return false;
  const char *ta = a->layout_tail ? a->layout_tail : "", *tb = b->layout_tail ? b->layout_tail : "";
  return strcmp(ta, tb) == 0;
}

/* Index of c in m->comps, or -1. */
static int32_t comp_index(const HloModule *m, const HloComputation *c) {
  for (int32_t k = 0; k < m->ncomps; k++)
    if (m->comps[k] == c) return k;
  return -1;
}

bool *hlp_reachable(const HloModule *m, const HloComputation *const *roots, int32_t nroots) {
  bool *seen = calloc((size_t)m->ncomps + 1, sizeof *seen);
  int32_t *stack = malloc(((size_t)m->ncomps + 1) * sizeof *stack);
  if (!seen || !stack) { free(seen); free(stack); return NULL; }
  int32_t sp = 0;
  /* Marked when pushed, so each computation is on the stack at most once. */
  for (int32_t i = 0; i < nroots; i++) {
    int32_t k = comp_index(m, roots[i]);
    if (k >= 0 && !seen[k]) { seen[k] = true; stack[sp++] = k; }
  }
  while (sp) {
    const HloComputation *c = m->comps[stack[--sp]];
    for (int32_t i = 0; i < c->ninstrs; i++)
      for (int32_t j = 0; j < c->instrs[i]->ncalled; j++) {
        int32_t k = comp_index(m, c->instrs[i]->called[j].comp);
        if (k >= 0 && !seen[k]) { seen[k] = true; stack[sp++] = k; }
      }
  }
  free(stack);
  return seen;
}

void hlp_module_free(HloModule *m) {
  if (!m) return;
  hlc_arena_free(&m->arena);
  free(m);
}
