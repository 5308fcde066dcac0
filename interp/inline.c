/* inline.c: a module's fusions inlined into their callers
 * (hli_inline_fusions_text), so the reducer can cut inside a fusion as in
 * any computation.
 *
 * Every fusion instruction of a computation that is not itself a fusion's
 * body is printed as the instructions of its fused computation: a fused
 * parameter reads the fusion's operand of its number, the fused ROOT takes
 * the fusion's name (its users read it unchanged). A fused computation
 * that nothing else calls goes; its instructions keep their names when
 * these are unique in the module, others get NAME.FUSION (then a number).
 * A fusion whose fused ROOT is a parameter (an array) becomes a copy of
 * the fusion's operand of that number (nothing inside to rename). A fusion
 * inside a fused computation stays one in this pass: the reducer inlines
 * again until none is left (reduce.c), so nested fusions come out too.
 *
 * Not here: checking that the inlined module still shows the condition (the
 * reducer runs it). */
#include "interp/api.h"
#include "ir/print.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Inline {
  const HloModule *m;
  const char **sorted;       /* every instruction name, sorted */
  int64_t nnames;
  bool *skip;                /* per computation: a fused one left out */
  bool oom;
} Inline;

static int cmp_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* How many instructions of the module are named name. */
static int64_t name_count(const Inline *in, const char *name) {
  const char **p = bsearch(&name, in->sorted, (size_t)in->nnames, sizeof *in->sorted, cmp_name);
  if (!p) return 0;
  const char **a = p, **z = p;
  while (a > in->sorted && strcmp(a[-1], name) == 0) a--;
  while (z + 1 < in->sorted + in->nnames && strcmp(z[1], name) == 0) z++;
  return z - a + 1;
}

static const HloComputation *fused_comp(const HloInstr *ins) {
  for (int32_t k = 0; k < ins->ncalled; k++)
    if (ins->called[k].role == HLO_CALL_CALLS) return ins->called[k].comp;
  return NULL;
}

/* The fused computation ins is replaced by, or NULL. */
static const HloComputation *inlined(const HloInstr *ins) {
  const HloComputation *f = ins->op == HLO_OP_FUSION && !ins->parent->is_fusion_body
                                ? fused_comp(ins) : NULL;
  if (!f || !f->root) return NULL;
  /* A parameter ROOT is printed as a copy: arrays only (a tuple has no copy). */
  if (f->root->op == HLO_OP_PARAMETER &&
      (f->root->shape.dtype == HLO_TUPLE || f->root->shape.dtype == HLO_TOKEN))
    return NULL;
  return f;
}

/* The fusion ins of f whose ROOT is its parameter p: ins as a copy of its
 * operand p (the same value; the fusion's attributes go with it). */
static bool copy_of_operand(HlcText *b, const HloInstr *ins, const HloComputation *f) {
  int64_t p = f->root->parameter_number;
  if (p < 0 || p >= ins->nops) return false;
  hlc_text_printf(b, "  %s%%%s = ", ins->is_root ? "ROOT " : "", ins->name);
  hlp_print_shape(b, &ins->shape, true);
  hlc_text_printf(b, " copy(%%%s)\n", ins->ops[p]->name);
  return true;
}

static int32_t comp_index(const HloModule *m, const HloComputation *c) {
  for (int32_t k = 0; k < m->ncomps; k++)
    if (m->comps[k] == c) return k;
  return -1;
}

static bool inline_fusion(HlcText *b, const HloInstr *ins, void *user) {
  Inline *in = user;
  const HloComputation *f = inlined(ins);
  if (!f) return false;
  if (f->root->op == HLO_OP_PARAMETER) {
    if (!copy_of_operand(b, ins, f)) in->oom = true;
    return true;
  }
  bool gone = in->skip[comp_index(in->m, f)];
  char **names = calloc((size_t)f->ninstrs + 1, sizeof *names);
  const char **ops = NULL;
  int32_t maxops = 0;
  for (int32_t i = 0; i < f->ninstrs; i++)
    if (f->instrs[i]->nops > maxops) maxops = f->instrs[i]->nops;
  ops = malloc(((size_t)maxops + 1) * sizeof *ops);
  bool ok = names && ops;
  for (int32_t i = 0; ok && i < f->ninstrs; i++) {
    const HloInstr *u = f->instrs[i];
    if (u->op == HLO_OP_PARAMETER) {
      int64_t p = u->parameter_number;
      ok = p >= 0 && p < ins->nops && (names[i] = strdup(ins->ops[p]->name)) != NULL;
      continue;
    }
    if (u == f->root) {
      ok = (names[i] = strdup(ins->name)) != NULL;
    } else if (gone && name_count(in, u->name) == 1) {
      ok = (names[i] = strdup(u->name)) != NULL;
    } else {
      /* NAME.FUSION, numbered until no instruction has it. */
      char *t = NULL;
      for (int k = 0; ok && (!t || name_count(in, t) > 0); k++) {
        free(t);
        HlcText nt = {0};
        hlc_text_printf(&nt, k ? "%s.%s.%d" : "%s.%s", u->name, ins->name, k);
        ok = !nt.oom && nt.p;
        t = nt.p;
      }
      names[i] = t;
    }
    for (int32_t k = 0; ok && k < u->nops; k++) ops[k] = names[u->ops[k]->index];
    if (ok) hlp_print_instr_as(b, u, names[i], u == f->root && ins->is_root, ops);
  }
  for (int32_t i = 0; names && i < f->ninstrs; i++) free(names[i]);
  free(names);
  free(ops);
  if (!ok) in->oom = true;
  return true;
}

char *hli_inline_fusions_text(const HloModule *m, bool *changed) {
  *changed = false;
  Inline in = {.m = m};
  /* A fused computation goes when only inlined fusions call it. */
  bool *called = calloc((size_t)m->ncomps + 1, sizeof *called);
  in.skip = calloc((size_t)m->ncomps + 1, sizeof *in.skip);
  if (!called || !in.skip) { free(called); free(in.skip); return NULL; }
  for (int32_t c = 0; c < m->ncomps; c++)
    for (int32_t i = 0; i < m->comps[c]->ninstrs; i++) {
      const HloInstr *u = m->comps[c]->instrs[i];
      const HloComputation *f = inlined(u);
      if (f) *changed = true;
      if (f) in.skip[comp_index(m, f)] = true;
      for (int32_t k = 0; !f && k < u->ncalled; k++) called[comp_index(m, u->called[k].comp)] = true;
      in.nnames++;
    }
  for (int32_t c = 0; c < m->ncomps; c++) in.skip[c] = in.skip[c] && !called[c];
  free(called);
  in.sorted = *changed ? malloc(((size_t)in.nnames + 1) * sizeof *in.sorted) : NULL;
  if (!in.sorted) { free(in.skip); return NULL; }
  int64_t n = 0;
  for (int32_t c = 0; c < m->ncomps; c++)
    for (int32_t i = 0; i < m->comps[c]->ninstrs; i++) in.sorted[n++] = m->comps[c]->instrs[i]->name;
  qsort(in.sorted, (size_t)n, sizeof *in.sorted, cmp_name);
  char *text = hlp_print_hooked(m, NULL, 0, inline_fusion, &in, in.skip);
  free(in.sorted);
  free(in.skip);
  if (in.oom) {
    free(text);
    return NULL;
  }
  return text;
}
