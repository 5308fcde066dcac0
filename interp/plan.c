/* plan.c: compile one computation into an execution plan (plan.h).
 *
 * Done once per computation and run: find the instructions the root needs
 * (dead values are never computed, unless the instruction has a side effect),
 * pick how each one runs (a kernel from hli_op_table(), or one of the steps
 * the executor does itself without copying: parameters, constants, tuples,
 * get-tuple-element, views for reshape/bitcast), run every kernel's plan-time
 * check, and compute each value's last use so it is released right after.
 * Chains of elementwise instructions become one fused step (fuse.c): their
 * inner values get no step and no slot value; so do a dot and a row group
 * that a second dot consumes (fuse_chain.c).
 * Running plans is exec.c's job. */
#include "interp/plan.h"
#include <string.h>

/* Instructions whose effect is not their value: they run even when unused. */
static bool has_side_effect(const HloInstr *ins) {
  switch (ins->op) {
  case HLO_OP_CUSTOM_CALL: return ins->has_side_effect;
  case HLO_OP_OUTFEED: case HLO_OP_SEND: case HLO_OP_SEND_DONE:
  case HLO_OP_INFEED: case HLO_OP_RECV: case HLO_OP_RECV_DONE:
    return true;
  default: return false;
  }
}

/* minor_to_major absent or {rank-1, ..., 0}, no tiling: row-major bytes. */
static bool default_layout(const HloShape *s) {
  if (s->layout_tail && strstr(s->layout_tail, "T(")) return false;
  if (!s->minor_to_major) return true;
  for (int32_t i = 0; i < s->rank; i++)
    if (s->minor_to_major[i] != s->rank - 1 - i) return false;
  return true;
}

static bool whole_bytes(HloDtype t) { return hlc_dtype_bits(t) == 8 * (int)hlc_dtype_size(t); }

/* bitcast is a pure reinterpretation of the bytes when both sides are
 * row-major in memory and hold the same number of bytes. */
static bool bitcast_is_view(const HloInstr *ins) {
  const HloShape *a = &ins->ops[0]->shape, *b = &ins->shape;
  if (!hlc_dtype_is_array(a->dtype) || !hlc_dtype_is_array(b->dtype)) return false;
  if (a->dtype != b->dtype && !(whole_bytes(a->dtype) && whole_bytes(b->dtype))) return false;
  if ((size_t)hlp_shape_elements(a) * hlc_dtype_size(a->dtype) !=
      (size_t)hlp_shape_elements(b) * hlc_dtype_size(b->dtype))
    return false;
  return default_layout(a) && default_layout(b);
}

static bool same_array_type(const HloShape *a, const HloShape *b) {
  return hlc_dtype_is_array(a->dtype) && hlp_shape_compatible(a, b);
}

/* A value for a constant: a copy of the literal, made once. */
static HliValue *make_constant(HliExec *x, const HloInstr *ins, const HloShape *s,
                               const HloLiteral *lit, uint64_t seed) {
  HliValue *v = hli_value_new(NULL, s);
  if (!v) { hli_fail_nomem(x, ins, "out of memory for the constant"); return NULL; }
  if (s->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < v->ntuple; i++) {
      const HloLiteral *el = lit && i < lit->ntuple ? &lit->tuple[i] : NULL;
      HliValue *e = make_constant(x, ins, &s->tuple[i], el, seed * 31 + (uint64_t)i + 1);
      if (!e) { hli_value_unref(NULL, v); return NULL; }
      hli_value_unref(NULL, v->tuple[i]);
      v->tuple[i] = e;
    }
    return v;
  }
  if (!hlc_dtype_is_array(s->dtype) || v->nbytes == 0) return v;
  if (!lit || lit->elided || !lit->data) {
    if (!x->random_constants) {
      hli_value_unref(NULL, v);
      hli_fail(x, ins, "the constant's values are elided ({...}); run with --random to fill "
                       "elided constants with pseudo-random values");
      return NULL;
    }
    if (!x->warned_elided && x->diags) {
      x->warned_elided = true;
      hlc_diag(x->diags, HLC_WARNING,
               "%s:%d: constant %s has elided values ({...}); filling elided constants with "
               "pseudo-random values", x->module && x->module->filename ? x->module->filename
               : "<input>", ins->line, ins->name ? ins->name : "?");
    }
    hli_fill_random(v, x->random_seed ^ (seed * 0x9e3779b97f4a7c15ull));
    return v;
  }
  if (lit->nbytes != v->nbytes) {
    hli_value_unref(NULL, v);
    hli_fail(x, ins, "the constant's literal has %zu bytes, its shape needs %zu", lit->nbytes,
             v->nbytes);
    return NULL;
  }
  memcpy(v->data, lit->data, v->nbytes);
  return v;
}

/* How ins runs: one of the executor's own steps, or its kernel. */
static int choose_step(HliExec *x, const HloInstr *ins, HliStep *st) {
  const HliOpEntry *table = hli_op_table();
  const HliOpEntry *e = &table[ins->op];
  switch (ins->op) {
  case HLO_OP_PARAMETER:
    st->kind = HLI_STEP_PARAM;
    st->index = ins->parameter_number;
    if (st->index < 0 || st->index >= ins->parent->nparams)
      return hli_fail(x, ins, "parameter number %lld out of range", (long long)st->index);
    return 0;
  case HLO_OP_CONSTANT:
    st->kind = HLI_STEP_CONST;
    st->constant = make_constant(x, ins, &ins->shape, ins->literal, (uint64_t)ins->index + 1);
    return st->constant ? 0 : -1;
  case HLO_OP_TUPLE:
    st->kind = HLI_STEP_TUPLE;
    return 0;
  case HLO_OP_GET_TUPLE_ELEMENT:
    st->kind = HLI_STEP_GTE;
    st->index = ins->tuple_index;
    if (ins->nops != 1 || ins->ops[0]->shape.dtype != HLO_TUPLE || st->index < 0 ||
        st->index >= ins->ops[0]->shape.ntuple)
      return hli_fail(x, ins, "tuple index %lld out of range", (long long)st->index);
    return 0;
  case HLO_OP_RESHAPE:
    /* Values are logical row-major, so a reshape never moves elements. */
    if (ins->nops == 1 && hlc_dtype_is_array(ins->shape.dtype) &&
        ins->ops[0]->shape.dtype == ins->shape.dtype &&
        hlp_shape_elements(&ins->ops[0]->shape) == hlp_shape_elements(&ins->shape)) {
      st->kind = HLI_STEP_VIEW;
      return 0;
    }
    break;
  case HLO_OP_BITCAST:
    if (ins->nops == 1 && bitcast_is_view(ins)) { st->kind = HLI_STEP_VIEW; return 0; }
    break;
  case HLO_OP_COPY:
  case HLO_OP_OPT_BARRIER:
    /* Layouts are not materialised: a copy to the same type is the same value. */
    if (ins->nops == 1 && (same_array_type(&ins->ops[0]->shape, &ins->shape) ||
                           (ins->op == HLO_OP_OPT_BARRIER &&
                            hlp_shape_compatible(&ins->ops[0]->shape, &ins->shape)))) {
      st->kind = HLI_STEP_ALIAS;
      return 0;
    }
    break;
  case HLO_OP_ADD_DEPENDENCY:
    if (!e->run && ins->nops >= 1) { st->kind = HLI_STEP_ALIAS; return 0; }
    break;
  case HLO_OP_AFTER_ALL:
    if (!e->run) { st->kind = HLI_STEP_TOKEN; return 0; }
    break;
  default:
    break;
  }
  if (!e->run)
    return hli_unsupported(x, ins, "opcode %s has no kernel in hlorun", hlp_opcode_name(ins->op));
  if (e->check && e->check(x, ins) != 0) {
    /* Make sure the failure names the instruction even if the check forgot. */
    if (x->diags && x->diags->nerrors == 0)
      hli_unsupported(x, ins, "%s with these operands or attributes", hlp_opcode_name(ins->op));
    return -1;
  }
  st->kind = HLI_STEP_KERNEL;
  st->run = e->run;
  return 0;
}

/* An iota whose every user is a kernel step that makes the iota's values
 * itself (an argmax's indices: hli_kernel_reads) need not run: its slot
 * stays NULL. Observed runs still run it, so observers see every operand. */
static void mark_lazy(HliPlan *p) {
  for (int32_t s = 0; s < p->nsteps; s++) {
    HliStep *st = &p->steps[s];
    st->lazy = false;
    if (st->kind != HLI_STEP_KERNEL || st->ins->op != HLO_OP_IOTA || st->out == p->root) continue;
    bool used = false, read = false;
    for (int32_t t = s + 1; t < p->nsteps && !read; t++) {
      const HliStep *u = &p->steps[t];
      for (int32_t k = 0; k < u->nops && !read; k++) {
        if (u->ops[k] != st->out) continue;
        used = true;
        read = u->kind != HLI_STEP_KERNEL || hli_kernel_reads(u->ins, k);
      }
    }
    st->lazy = used && !read;
  }
}

/* In-place updates: a step may write its result into operand k's buffer
 * when the operand dies here (the executor also checks at run time that
 * nothing else references it): dynamic-update-slice and single-operand
 * scatter into their operand, elementwise ops and fused groups into an
 * operand of the result's type and size. */
static void choose_reuse(HliStep *st) {
  const HloInstr *ins = st->ins;
  st->reuse = 0;
  if (st->kind != HLI_STEP_KERNEL && st->kind != HLI_STEP_FUSED) return;
  if (!hlc_dtype_is_array(ins->shape.dtype)) return;
  int64_t n = hlp_shape_elements(&ins->shape);
  int32_t first = 0, last = st->nops - 1;
  if (st->kind == HLI_STEP_KERNEL) {
    if (ins->op == HLO_OP_DYNAMIC_UPDATE_SLICE || (ins->op == HLO_OP_SCATTER && ins->nops == 3))
      last = 0;
    else if (!hli_fuse_is_elementwise(ins))
      return;
  }
  for (int32_t k = first; k <= last && k < 32; k++) {
    int32_t slot = st->ops[k];
    const HloShape *s = &st->ins->parent->instrs[slot]->shape;
    if (s->dtype != ins->shape.dtype || hlp_shape_elements(s) != n) continue;
    bool dies = false, again = false;
    for (int32_t f = 0; f < st->nfree; f++) dies = dies || st->frees[f] == slot;
    /* An update-in-place kernel must not read the buffer through another operand. */
    for (int32_t j = 0; j < st->nops; j++)
      again = again || (j != k && st->ops[j] == slot && st->kind == HLI_STEP_KERNEL &&
                        !hli_fuse_is_elementwise(ins));
    if (dies && !again) st->reuse |= (uint32_t)1 << k;
  }
}

HliPlan *hli_plan_build(HliExec *x, const HloComputation *c) {
  HlcArena *A = &x->plan_arena;
  int32_t n = c->ninstrs;
  if (!c->root || n <= 0) {
    hli_fail(x, NULL, "computation %s has no instructions", c->name ? c->name : "?");
    return NULL;
  }
  HliPlan *p = hlc_arena_alloc(A, sizeof *p);
  bool *live = hlc_arena_alloc(A, (size_t)n);
  int32_t *last = hlc_arena_alloc(A, (size_t)n * sizeof *last);
  if (!p || !live || !last) goto nomem;
  p->comp = c;
  p->nslots = n;
  p->root = c->root->index;

  /* Liveness: walk backwards from the root (text order is dependency order). */
  for (int32_t i = 0; i < n; i++)
    if (c->instrs[i] == c->root || has_side_effect(c->instrs[i])) live[i] = true;
  for (int32_t i = n - 1; i >= 0; i--) {
    const HloInstr *ins = c->instrs[i];
    if (ins->index != i) {
      hli_fail(x, ins, "instruction index %d does not match its position %d", ins->index, i);
      return NULL;
    }
    if (!live[i]) continue;
    for (int32_t k = 0; k < ins->nops; k++) {
      if (ins->ops[k]->parent != c || ins->ops[k]->index >= i) {
        hli_fail(x, ins, "operand %d is not defined before its use", k);
        return NULL;
      }
      live[ins->ops[k]->index] = true;
    }
    for (int32_t k = 0; k < ins->ncontrol; k++)
      if (ins->control_preds[k]->parent == c && ins->control_preds[k]->index < i)
        live[ins->control_preds[k]->index] = true;
  }

  /* Fused groups: members inside a group are not steps of their own. */
  HliFusion fu;
  if (hli_fuse_plan(x, c, live, A, &fu) != 0) goto nomem;
  /* Chains (a dot, a row group, a dot): the first dot and the group get no
   * step; the last dot's step runs all three. */
  const HliChain **chain = hlc_arena_alloc(A, (size_t)n * sizeof *chain);
  bool *absorbed = hlc_arena_alloc(A, (size_t)n);
  if (!chain || !absorbed || hli_chain_plan(x, c, live, &fu, A, chain, absorbed) != 0)
    goto nomem;
  bool *step = hlc_arena_alloc(A, (size_t)n);
  if (!step) goto nomem;
  int32_t nsteps = 0;
  for (int32_t i = 0; i < n; i++) {
    step[i] = live[i] && !fu.internal[i] && !absorbed[i];
    nsteps += step[i];
  }
  p->steps = hlc_arena_alloc(A, (size_t)nsteps * sizeof *p->steps);
  if (!p->steps) goto nomem;

  /* Last use of every slot, as a step number; -1 = never used. */
  for (int32_t i = 0; i < n; i++) last[i] = -1;
  int32_t s = 0;
  for (int32_t i = 0; i < n; i++) {
    if (!step[i]) continue;
    const HloInstr *ins = c->instrs[i];
    HliStep *st = &p->steps[s];
    const HliFused *f = fu.group[i];
    const HliChain *ch = chain[i];
    st->ins = ins;
    st->out = i;
    st->nops = ch ? hli_chain_ninputs(ch) : f ? hli_fused_ninputs(f) : ins->nops;
    st->ops = hlc_arena_alloc(A, (size_t)(st->nops ? st->nops : 1) * sizeof *st->ops);
    if (!st->ops) goto nomem;
    for (int32_t k = 0; k < st->nops; k++) {
      st->ops[k] = ch ? hli_chain_inputs(ch)[k] : f ? hli_fused_inputs(f)[k] : ins->ops[k]->index;
      last[st->ops[k]] = s;
    }
    last[i] = last[i] > s ? last[i] : s;   /* produced here: at least this step */
    p->nsteps = ++s;                       /* steps so far own their constants */
    if (ch) {
      st->kind = HLI_STEP_CHAIN;
      st->chain = ch;
    } else if (f) {
      st->kind = HLI_STEP_FUSED;
      st->fused = f;
    } else if (choose_step(x, ins, st) != 0) {
      hli_plan_release(x, p);
      return NULL;
    }
    /* Kernel, fused and tuple steps gather their operands into inbuf. */
    if (st->nops > p->max_ops) p->max_ops = st->nops;
  }
  last[p->root] = nsteps;   /* the result outlives the run */

  /* Hand every slot's release to the step of its last use. */
  int32_t *nfree = hlc_arena_alloc(A, (size_t)(nsteps ? nsteps : 1) * sizeof *nfree);
  if (!nfree) goto nomem_release;
  for (int32_t i = 0; i < n; i++)
    if (step[i] && last[i] < nsteps) nfree[last[i]]++;
  for (s = 0; s < nsteps; s++) {
    p->steps[s].frees = hlc_arena_alloc(A, (size_t)(nfree[s] ? nfree[s] : 1) * sizeof(int32_t));
    if (!p->steps[s].frees) goto nomem_release;
  }
  for (int32_t i = 0; i < n; i++)
    if (step[i] && last[i] < nsteps) {
      HliStep *st = &p->steps[last[i]];
      st->frees[st->nfree++] = i;
    }

  for (s = 0; s < nsteps; s++) choose_reuse(&p->steps[s]);
  mark_lazy(p);

  p->slots = hlc_arena_alloc(A, (size_t)n * sizeof *p->slots);
  p->inbuf = hlc_arena_alloc(A, (size_t)(p->max_ops ? p->max_ops : 1) * sizeof *p->inbuf);
  if (!p->slots || !p->inbuf) goto nomem_release;
  return p;

nomem_release:
  hli_plan_release(x, p);
nomem:
  hli_fail_nomem(x, NULL, "out of memory planning computation %s", c->name ? c->name : "?");
  return NULL;
}

void hli_plan_release(HliExec *x, HliPlan *p) {
  (void)x;
  if (!p) return;
  for (int32_t s = 0; s < p->nsteps; s++) {
    hli_value_unref(NULL, p->steps[s].constant);
    p->steps[s].constant = NULL;
  }
}
