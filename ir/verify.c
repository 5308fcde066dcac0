/* verify.c: hlp_verify, the shape verifier over a parsed module (spec
 * section 10, "not checked by the parser"), and the helpers the opcode
 * families (verify_*.c) share: shape construction in a scratch arena,
 * comparisons, dimension-list checks, called-computation signatures and
 * reducer signatures, and messages.
 *
 * The rules are XLA's (shape inference + HLO verifier with its default
 * options): a module XLA accepts must verify clean here, so where XLA is
 * lenient (the result type of dot/convolution, float precision of reduction
 * accumulators, unknown custom calls) this is too. Layouts are ignored.
 * Parameter numbering and the entry_computation_layout are already checked by
 * the parser (lower.c, attrs.c); they are checked again here so that a module
 * built or edited in memory gets the same guarantees.
 */
#include "ir/verify.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/print.h"

/* ---- Scratch memory and messages ---------------------------------------------- */

void *hlv_alloc(HlvCtx *V, size_t n) {
  void *p = hlc_arena_alloc(&V->arena, n ? n : 1);
  if (!p) longjmp(V->oom, 1);
  return p;
}

HloShape *hlv_array(HlvCtx *V, HloDtype t, int32_t rank, const int64_t *dims) {
  HloShape *s = hlv_alloc(V, sizeof *s);
  s->dtype = t;
  s->rank = rank;
  s->dims = hlv_alloc(V, (size_t)(rank > 0 ? rank : 1) * sizeof *s->dims);
  if (rank > 0 && dims) memcpy(s->dims, dims, (size_t)rank * sizeof *dims);
  return s;
}

HloShape *hlv_scalar(HlvCtx *V, HloDtype t) { return hlv_array(V, t, 0, NULL); }

HloShape *hlv_tuple(HlvCtx *V, int32_t n) {
  HloShape *s = hlv_alloc(V, sizeof *s);
  s->dtype = HLO_TUPLE;
  s->ntuple = n;
  s->tuple = hlv_alloc(V, (size_t)(n > 0 ? n : 1) * sizeof *s->tuple);
  return s;
}

HloShape *hlv_copy(HlvCtx *V, const HloShape *s) {
  if (s->dtype == HLO_TUPLE) {
    HloShape *t = hlv_tuple(V, s->ntuple);
    for (int32_t i = 0; i < s->ntuple; i++) t->tuple[i] = *hlv_copy(V, &s->tuple[i]);
    return t;
  }
  HloShape *c = hlv_array(V, s->dtype, s->rank, s->dims);
  c->dynamic = s->dynamic;
  return c;
}

static const char *buf_done(HlvCtx *V, HlcText *b) {
  if (b->oom) { free(b->p); longjmp(V->oom, 1); }
  char *s = hlc_arena_strndup(&V->arena, b->p ? b->p : "", b->n);
  free(b->p);
  if (!s) longjmp(V->oom, 1);
  return s;
}

const char *hlv_str(HlvCtx *V, const HloShape *s) {
  HlcText b = {0};
  hlp_print_shape(&b, s, false);
  return buf_done(V, &b);
}

const char *hlv_list_str(HlvCtx *V, const HloI64s *d) {
  HlcText b = {0};
  hlc_text_puts(&b, "{");
  for (int32_t i = 0; i < d->n; i++) hlc_text_printf(&b, "%s%lld", i ? "," : "", (long long)d->v[i]);
  hlc_text_puts(&b, "}");
  return buf_done(V, &b);
}

HlvResult hlv_fail(HlvCtx *V, const HloInstr *ins, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const HloModule *m = V->m;
  hlc_diag_at(V->diags, HLC_ERROR, m->filename, m->source, m->source_len, ins->off, "%s '%s': %s",
              hlp_opcode_name(ins->op), ins->name ? ins->name : "?", msg);
  V->errors++;
  return HLV_ERR;
}

/* ---- Comparisons -------------------------------------------------------------------- */

bool hlv_same_type_fp(HloDtype a, HloDtype b) {
  return a == b || (hlc_dtype_is_float(a) && hlc_dtype_is_float(b));
}

bool hlv_same_dims(const HloShape *a, const HloShape *b) {
  if (a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i] && a->dims[i] >= 0 && b->dims[i] >= 0) return false;
  return true;
}

bool hlv_compatible(const HloShape *a, const HloShape *b, bool ignore_fp) {
  if (a->dtype == HLO_TUPLE || b->dtype == HLO_TUPLE) {
    if (a->dtype != b->dtype || a->ntuple != b->ntuple) return false;
    for (int32_t i = 0; i < a->ntuple; i++)
      if (!hlv_compatible(&a->tuple[i], &b->tuple[i], ignore_fp)) return false;
    return true;
  }
  if (!(ignore_fp ? hlv_same_type_fp(a->dtype, b->dtype) : a->dtype == b->dtype)) return false;
  if (!hlv_is_array(a)) return true;
  return hlv_same_dims(a, b);
}

HlvResult hlv_expect(HlvCtx *V, const HloInstr *ins, const HloShape *inferred, bool ignore_fp) {
  if (hlv_compatible(&ins->shape, inferred, ignore_fp)) return HLV_OK;
  return hlv_fail(V, ins, "result shape %s does not match the inferred %s", hlv_str(V, &ins->shape),
                  hlv_str(V, inferred));
}

bool hlv_need_array(HlvCtx *V, const HloInstr *ins, int k) {
  if (k < ins->nops && hlv_is_array(&ins->ops[k]->shape)) return true;
  if (k >= ins->nops) hlv_fail(V, ins, "missing operand %d", k);
  else hlv_fail(V, ins, "operand %d must be an array, got %s", k, hlv_str(V, &ins->ops[k]->shape));
  return false;
}

bool hlv_dims_ok(HlvCtx *V, const HloInstr *ins, const char *what, const HloI64s *d, int64_t rank,
                 bool sorted) {
  for (int32_t i = 0; i < d->n; i++) {
    if (d->v[i] < 0 || d->v[i] >= rank) {
      hlv_fail(V, ins, "%s %s: dimension %lld is out of range for rank %lld", what,
               hlv_list_str(V, d), (long long)d->v[i], (long long)rank);
      return false;
    }
    for (int32_t j = 0; j < i; j++)
      if (d->v[j] == d->v[i]) {
        hlv_fail(V, ins, "%s %s: dimension %lld is repeated", what, hlv_list_str(V, d),
                 (long long)d->v[i]);
        return false;
      }
    if (sorted && i > 0 && d->v[i] < d->v[i - 1]) {
      hlv_fail(V, ins, "%s %s must be sorted", what, hlv_list_str(V, d));
      return false;
    }
  }
  return true;
}

/* ---- Called computations ------------------------------------------------------------------ */

HloComputation *hlv_called(const HloInstr *ins, HloCallRole role) {
  for (int32_t i = 0; i < ins->ncalled; i++)
    if (ins->called[i].role == role) return ins->called[i].comp;
  return NULL;
}

bool hlv_signature(HlvCtx *V, const HloInstr *ins, const char *role, const HloComputation *comp,
                   int32_t n, const HloShape *const *param_shapes, const HloShape *want_root,
                   bool ignore_fp) {
  if (!comp) {
    hlv_fail(V, ins, "missing %s computation", role);
    return false;
  }
  if (comp->nparams != n) {
    hlv_fail(V, ins, "%s computation '%s' takes %d parameter%s, expected %d", role, comp->name,
             (int)comp->nparams, comp->nparams == 1 ? "" : "s", (int)n);
    return false;
  }
  for (int32_t i = 0; param_shapes && i < n; i++) {
    const HloShape *p = &comp->params[i]->shape;
    if (param_shapes[i] && !hlv_compatible(p, param_shapes[i], ignore_fp)) {
      hlv_fail(V, ins, "%s computation '%s' parameter %d has shape %s, expected %s", role,
               comp->name, (int)i, hlv_str(V, p), hlv_str(V, param_shapes[i]));
      return false;
    }
  }
  if (want_root && !hlv_compatible(&comp->root->shape, want_root, ignore_fp)) {
    hlv_fail(V, ins, "%s computation '%s' returns %s, expected %s", role, comp->name,
             hlv_str(V, &comp->root->shape), hlv_str(V, want_root));
    return false;
  }
  return true;
}

bool hlv_reducer(HlvCtx *V, const HloInstr *ins, const char *role, const HloComputation *comp,
                 int32_t k, const HloDtype *init_types, const HloDtype *input_types, HloDtype *acc) {
  if (!hlv_signature(V, ins, role, comp, 2 * k, NULL, NULL, false)) return false;
  const HloShape *r = &comp->root->shape;
  bool shape_ok = k == 1 ? hlv_is_scalar(r) : r->dtype == HLO_TUPLE && r->ntuple == k;
  for (int32_t i = 0; shape_ok && k > 1 && i < k; i++) shape_ok = hlv_is_scalar(&r->tuple[i]);
  if (!shape_ok) {
    hlv_fail(V, ins, "%s computation '%s' must return %s, returns %s", role, comp->name,
             k == 1 ? "a scalar" : "a tuple of scalars, one per input", hlv_str(V, r));
    return false;
  }
  for (int32_t i = 0; i < k; i++) {
    const HloShape *a = k == 1 ? r : &r->tuple[i];
    if (init_types && !hlv_same_type_fp(a->dtype, init_types[i])) {
      hlv_fail(V, ins, "%s computation '%s' accumulator %d is %s but init value %d is %s", role,
               comp->name, (int)i, hlc_dtype_name(a->dtype), (int)i, hlc_dtype_name(init_types[i]));
      return false;
    }
    if (input_types && !hlv_same_type_fp(a->dtype, input_types[i])) {
      hlv_fail(V, ins, "%s computation '%s' accumulator %d is %s but input %d is %s", role,
               comp->name, (int)i, hlc_dtype_name(a->dtype), (int)i,
               hlc_dtype_name(input_types[i]));
      return false;
    }
    for (int32_t j = i; j < 2 * k; j += k) {
      const HloShape *p = &comp->params[j]->shape;
      if (!hlv_compatible(p, a, false)) {
        hlv_fail(V, ins, "%s computation '%s' parameter %d has shape %s, expected %s", role,
                 comp->name, (int)j, hlv_str(V, p), hlv_str(V, a));
        return false;
      }
    }
    if (acc) acc[i] = a->dtype;
  }
  return true;
}

/* Strided bound of a padded, dilated window dimension (0 when the window
 * does not fit at all). */
int64_t hlv_window_out(int64_t in, const HloWindowDim *w) {
  int64_t base = 0, padded, win = 0;
  if (in > 0 && (!hlv_mul(in - 1, w->lhs_dilate, &base) || !hlv_add(base, 1, &base))) return -1;
  if (!hlv_add(base, w->pad_lo, &padded) || !hlv_add(padded, w->pad_hi, &padded)) return -1;
  if (w->size > 0 && (!hlv_mul(w->size - 1, w->rhs_dilate, &win) || !hlv_add(win, 1, &win)))
    return -1;
  if (padded < win || w->stride <= 0) return 0;
  return (padded - win) / w->stride + 1;
}

/* ---- Driver ------------------------------------------------------------------------------- */

static bool has_unbounded(const HloShape *s) {
  if (s->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < s->ntuple; i++)
      if (has_unbounded(&s->tuple[i])) return true;
    return false;
  }
  for (int32_t i = 0; i < s->rank; i++)
    if (s->dims[i] < 0) return true;
  return false;
}

static HlvResult verify_instr(HlvCtx *V, const HloInstr *ins) {
  /* Unbounded dynamic dimensions ('?') make sizes unknown: XLA's static rules
   * do not apply, only the operand count (checked by the parser). */
  if (has_unbounded(&ins->shape)) return HLV_OK;
  for (int32_t i = 0; i < ins->nops; i++)
    if (has_unbounded(&ins->ops[i]->shape)) return HLV_OK;
  HlvResult (*const fam[])(HlvCtx *, const HloInstr *) = {hlv_elementwise, hlv_data, hlv_index,
                                                          hlv_reduce, hlv_linalg, hlv_control};
  for (size_t f = 0; f < sizeof fam / sizeof fam[0]; f++) {
    HlvResult r = fam[f](V, ins);
    if (r != HLV_NOT_MINE) return r;
  }
  return HLV_OK;   /* custom-call, infeed, ...: nothing to infer */
}

static void verify_params(HlvCtx *V, const HloComputation *c) {
  int32_t np = 0;
  for (int32_t i = 0; i < c->ninstrs; i++) np += c->instrs[i]->op == HLO_OP_PARAMETER;
  for (int32_t i = 0; i < c->ninstrs; i++) {
    const HloInstr *p = c->instrs[i];
    if (p->op != HLO_OP_PARAMETER) continue;
    if (p->parameter_number < 0 || p->parameter_number >= np || np != c->nparams ||
        c->params[p->parameter_number] != p)
      hlv_fail(V, p, "parameter number %lld: computation '%s' must number its %d parameters 0..%d",
               (long long)p->parameter_number, c->name, (int)np, (int)np - 1);
  }
}

static void verify_entry_layout(HlvCtx *V) {
  const HloModule *m = V->m;
  const HloComputation *e = m->entry;
  if (!e || !m->entry_layout) return;
  uint32_t off = e->off;
  for (int32_t i = 0; i < m->nattrs; i++)
    if (strcmp(m->attrs[i].name, "entry_computation_layout") == 0) off = m->attrs[i].off;
  const HloShape *ps = m->entry_layout;
  const char *why = NULL;
  char detail[64] = "";
  if (ps->dtype != HLO_TUPLE || ps->ntuple != e->nparams) {
    why = "parameter count";
  } else {
    for (int32_t q = 0; q < e->nparams && !why; q++)
      if (!hlv_compatible(&ps->tuple[q], &e->params[q]->shape, false)) {
        why = "parameter";
        snprintf(detail, sizeof detail, " %d", (int)q);
      }
    if (!why && m->entry_result_layout &&
        !hlv_compatible(m->entry_result_layout, &e->root->shape, false))
      why = "result";
  }
  if (why) {
    hlc_diag_at(V->diags, HLC_ERROR, m->filename, m->source, m->source_len, off,
                "entry_computation_layout %s%s does not match the entry computation '%s'", why,
                detail, e->name);
    V->errors++;
  }
}

int hlp_verify(const HloModule *m, HlcDiags *diags) {
  if (!m) return -1;
  HlvCtx V = {.m = m, .diags = diags};
  hlc_arena_init(&V.arena);
  if (setjmp(V.oom)) {
    hlc_diag(diags, HLC_ERROR, "out of memory verifying the module");
    hlc_arena_free(&V.arena);
    return -1;
  }
  for (int32_t c = 0; c < m->ncomps; c++) {
    const HloComputation *comp = m->comps[c];
    verify_params(&V, comp);
    for (int32_t i = 0; i < comp->ninstrs; i++) verify_instr(&V, comp->instrs[i]);
  }
  verify_entry_layout(&V);
  hlc_arena_free(&V.arena);
  return V.errors ? -1 : 0;
}
