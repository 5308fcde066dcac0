/* exec.c: the executor: a cache of plans per computation and the loop that
 * runs a plan (hli_call). Planning is plan.c's job; values are value.c's.
 *
 * Running a plan allocates nothing but the value buffers of kernel results
 * (and value headers): slots and operand arrays belong to the plan and are
 * reused; each value is released right after its last user ran. */
#include "interp/plan.h"
#include "common/numeric.h"
#include <stdlib.h>
#include <string.h>

void hli_exec_init(HliExec *x, const HloModule *m, HlcDiags *diags) {
  memset(x, 0, sizeof *x);
  x->module = m;
  x->diags = diags;
  x->nthreads = 1;
  x->rng_state = 0x853c49e6748fea9bull;
  hlc_arena_init(&x->plan_arena);
}

void hli_exec_free(HliExec *x) {
  for (int32_t i = 0; i < x->nplans_cap; i++) hli_plan_release(x, x->plans ? x->plans[i] : NULL);
  free(x->plans);
  x->plans = NULL;
  x->nplans = x->nplans_cap = 0;
  hlc_arena_free(&x->plan_arena);
  hli_value_cache_free(x);
}

/* ---- Plan cache -------------------------------------------------------- */

static size_t hash_ptr(const void *p, int32_t cap) {
  uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
  return (size_t)(h >> 32) & (size_t)(cap - 1);
}

static HliPlan *cache_find(HliExec *x, const HloComputation *c) {
  if (!x->nplans_cap) return NULL;
  for (size_t i = hash_ptr(c, x->nplans_cap);; i = (i + 1) & (size_t)(x->nplans_cap - 1)) {
    HliPlan *p = x->plans[i];
    if (!p || p->comp == c) return p;
  }
}

static int cache_put(HliExec *x, HliPlan *p) {
  if (2 * (x->nplans + 1) > x->nplans_cap) {
    int32_t cap = x->nplans_cap ? 2 * x->nplans_cap : 16;
    HliPlan **t = calloc((size_t)cap, sizeof *t);
    if (!t) return -1;
    for (int32_t i = 0; i < x->nplans_cap; i++) {
      HliPlan *q = x->plans[i];
      if (!q) continue;
      size_t j = hash_ptr(q->comp, cap);
      while (t[j]) j = (j + 1) & (size_t)(cap - 1);
      t[j] = q;
    }
    free(x->plans);
    x->plans = t;
    x->nplans_cap = cap;
  }
  size_t j = hash_ptr(p->comp, x->nplans_cap);
  while (x->plans[j]) j = (j + 1) & (size_t)(x->nplans_cap - 1);
  x->plans[j] = p;
  x->nplans++;
  return 0;
}

HliPlan *hli_plan_get(HliExec *x, const HloComputation *c) {
  HliPlan *p = cache_find(x, c);
  if (p) return p;
  p = hli_plan_build(x, c);
  if (!p) return NULL;
  if (cache_put(x, p) != 0) {
    hli_plan_release(x, p);
    hli_fail_nomem(x, NULL, "out of memory");
    return NULL;
  }
  return p;
}

static int prepare_rec(HliExec *x, const HloComputation *c, int depth) {
  if (cache_find(x, c)) return 0;
  if (depth > 1000) return hli_fail(x, NULL, "computations call each other too deeply");
  HliPlan *p = hli_plan_get(x, c);
  if (!p) return -1;
  for (int32_t s = 0; s < p->nsteps; s++) {
    const HloInstr *ins = p->steps[s].ins;
    for (int32_t k = 0; k < ins->ncalled; k++)
      if (ins->called[k].comp && prepare_rec(x, ins->called[k].comp, depth + 1) != 0) return -1;
  }
  return 0;
}

int hli_exec_prepare(HliExec *x, const HloComputation *c) {
  if (hli_check_call_graph(x, c) != 0) return -1;   /* limits.c: no recursion */
  return prepare_rec(x, c, 0);
}

/* ---- Running ----------------------------------------------------------- */

static int errors(HliExec *x) { return x->diags ? x->diags->nerrors : 0; }

/* taken: NULL, or (donated arguments) which have been moved into slots. */
static HliValue *run_step(HliExec *x, const HliStep *st, HliValue **slots, HliValue **in,
                          HliValue *const *args, bool *taken) {
  const HloInstr *ins = st->ins;
  switch (st->kind) {
  case HLI_STEP_PARAM:
    if (taken && !taken[st->index]) {   /* donated: move the reference */
      taken[st->index] = true;
      return args[st->index];
    }
    return hli_value_ref(args[st->index]);
  case HLI_STEP_CONST:
    return hli_value_ref(st->constant);
  case HLI_STEP_ALIAS:
    return hli_value_ref(slots[st->ops[0]]);
  case HLI_STEP_GTE: {
    HliValue *t = slots[st->ops[0]];
    if (t->dtype != HLO_TUPLE || st->index >= t->ntuple) {
      hli_fail(x, ins, "operand is not a tuple with element %lld", (long long)st->index);
      return NULL;
    }
    return hli_value_ref(t->tuple[st->index]);
  }
  case HLI_STEP_TUPLE: {
    for (int32_t k = 0; k < st->nops; k++) in[k] = slots[st->ops[k]];
    HliValue *v = hli_value_tuple(x, &ins->shape, in, st->nops);
    if (!v) hli_fail_nomem(x, ins, "out of memory");
    return v;
  }
  case HLI_STEP_VIEW: {
    HliValue *v = hli_value_view(x, slots[st->ops[0]], &ins->shape);
    if (!v) hli_fail_nomem(x, ins, "out of memory");
    return v;
  }
  case HLI_STEP_TOKEN: {
    HliValue *v = hli_value_new(x, &ins->shape);
    if (!v) hli_fail_nomem(x, ins, "out of memory");
    return v;
  }
  case HLI_STEP_KERNEL:
  case HLI_STEP_FUSED:
  case HLI_STEP_CHAIN:
    break;
  }
  /* Limits (limits.c): the deadline, and the instruction that memory and
   * time errors name. */
  if (x->deadline != 0 && hli_check_deadline(x, ins) != 0) return NULL;
  const HloInstr *outer = x->cur;
  x->cur = ins;
  int before = errors(x);
  HliValue *out = NULL;
  /* In place: the operand dies here and nobody else holds it (a tuple, a
   * view, the caller or a constant would hold another reference). Not
   * while an observer that reads the operands after the step watches. */
  bool keep = x->no_inplace || (x->obs && hli_obs_keeps_operands(x->obs));
  for (uint32_t m = keep ? 0 : st->reuse; m && !out; m &= m - 1) {
    HliValue *v = slots[st->ops[__builtin_ctz(m)]];
    if (v->refs == 1 && v->owns_data && !v->base && v->dtype == ins->shape.dtype &&
        v->nelem == hlp_shape_elements(&ins->shape)) {
      out = hli_value_ref(v);
      out->shape = &ins->shape;
      out->rank = ins->shape.rank;
      out->dims = ins->shape.dims;
    }
  }
  if (!out) out = hli_value_new(x, &ins->shape);
  if (!out) {
    if (errors(x) == before)
      hli_fail(x, ins, "cannot allocate the result (%s)", hlc_dtype_name(ins->shape.dtype));
    x->cur = outer;
    return NULL;
  }
  for (int32_t k = 0; k < st->nops; k++) in[k] = slots[st->ops[k]];
  int rc = st->kind == HLI_STEP_FUSED ? hli_fused_run(x, st->fused, in, out)
         : st->kind == HLI_STEP_CHAIN ? hli_chain_run(x, st->chain, in, out)
                                      : st->run(x, ins, in, out);
  if (rc != 0) {
    hli_value_unref(x, out);
    if (errors(x) == before) hli_fail(x, ins, "the kernel failed");
    x->cur = outer;
    return NULL;
  }
  x->cur = outer;
  return out;
}

static int plan_run(HliExec *x, HliPlan *p, HliValue *const *args, HliValue **result,
                    bool donate) {
  HliValue **slots = p->slots, **in = p->inbuf;
  int32_t np = p->comp->nparams;
  bool taken_local[16] = {false}, *taken = NULL;
  if (donate) {
    taken = np <= 16 ? taken_local : calloc((size_t)np, sizeof *taken);
    if (!taken) {
      for (int32_t i = 0; i < np; i++) hli_value_unref(x, args[i]);
      return hli_fail_nomem(x, NULL, "out of memory");
    }
  }
  bool fresh = p->busy;   /* re-entered (a kernel running this plan again) */
  if (fresh) {
    slots = calloc((size_t)p->nslots + (size_t)p->max_ops + 1, sizeof *slots);
    if (!slots) {
      for (int32_t i = 0; donate && i < np; i++) hli_value_unref(x, args[i]);
      if (taken && taken != taken_local) free(taken);
      return hli_fail_nomem(x, NULL, "out of memory");
    }
    in = slots + p->nslots;
  }
  p->busy = true;
  int rc = 0;
  for (int32_t s = 0; s < p->nsteps; s++) {
    const HliStep *st = &p->steps[s];
    if (!st->lazy || x->obs) {   /* lazy: nobody reads the value unless observed */
      if (x->obs && hli_observe(x, p, s, slots, in, NULL) != 0) { rc = -1; break; }
      HliValue *v = run_step(x, st, slots, in, args, taken);
      if (!v) { rc = -1; break; }
      slots[st->out] = v;
      if (x->obs && hli_observe(x, p, s, slots, in, v) != 0) { rc = -1; break; }
    }
    for (int32_t f = 0; f < st->nfree; f++) {
      hli_value_unref(x, slots[st->frees[f]]);
      slots[st->frees[f]] = NULL;
    }
  }
  if (rc == 0) {
    *result = slots[p->root];
    slots[p->root] = NULL;
  } else {
    *result = NULL;
    for (int32_t i = 0; i < p->nslots; i++)
      if (slots[i]) { hli_value_unref(x, slots[i]); slots[i] = NULL; }
  }
  if (fresh) free(slots);
  else p->busy = false;
  if (donate) {   /* arguments no step took (dead parameters, or a failure) */
    for (int32_t i = 0; i < np; i++)
      if (!taken[i]) hli_value_unref(x, args[i]);
    if (taken != taken_local) free(taken);
  }
  return rc;
}

int hli_plan_run(HliExec *x, HliPlan *p, HliValue *const *args, HliValue **result) {
  return plan_run(x, p, args, result, false);
}

int hli_call(HliExec *x, const HloComputation *c, HliValue *const *args, HliValue **result) {
  *result = NULL;
  if (!x || !c) return hli_fail(x, NULL, "cannot run a computation without an executor");
  HliPlan *p = hli_plan_get(x, c);
  if (!p) return -1;
  return hli_plan_run(x, p, args, result);
}

int hli_call_donate(HliExec *x, const HloComputation *c, HliValue *const *args,
                    HliValue **result) {
  *result = NULL;
  HliPlan *p = x && c ? hli_plan_get(x, c) : NULL;
  if (!p) {
    for (int32_t i = 0; c && i < c->nparams; i++) hli_value_unref(x, args[i]);
    return x && c ? -1 : hli_fail(x, NULL, "cannot run a computation without an executor");
  }
  return plan_run(x, p, args, result, true);
}

/* ---- Deterministic pseudo-random values -------------------------------- */

static uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in [-1, 1) with 24 random bits: exactly representable in f32 and
 * wider, and the same on every machine. */
static double unit(uint64_t r) { return (double)(int64_t)(r >> 40) / 8388608.0 - 1.0; }

#define FILL_LOOP(T, EXPR)                                                   \
  do {                                                                       \
    T *d = (T *)v->data;                                                     \
    for (int64_t i = 0; i < n; i++) {                                        \
      uint64_t r = mix64(seed ^ mix64((uint64_t)i));                         \
      d[i] = (T)(EXPR);                                                      \
    }                                                                        \
  } while (0)

void hli_fill_random(HliValue *v, uint64_t seed) {
  if (!v) return;
  if (v->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < v->ntuple; i++) hli_fill_random(v->tuple[i], mix64(seed + (uint64_t)i + 1));
    return;
  }
  if (!hlc_dtype_is_array(v->dtype) || !v->data) return;
  int64_t n = v->nelem;
  HloDtype t = v->dtype;
  int bits = hlc_dtype_bits(t);
  switch (hlc_dtype_kind(t)) {
  case HLO_KIND_PRED:
    FILL_LOOP(uint8_t, (r >> 63) & 1);
    break;
  case HLO_KIND_SINT: {
    /* Small values: [-8, 8), or the type's whole range if narrower. */
    int64_t span = bits >= 4 ? 16 : (int64_t)1 << bits;
    switch (hlc_dtype_size(t)) {
    case 1: FILL_LOOP(int8_t, (int64_t)(r >> 59) % span - span / 2); break;
    case 2: FILL_LOOP(int16_t, (int64_t)(r >> 59) % span - span / 2); break;
    case 4: FILL_LOOP(int32_t, (int64_t)(r >> 59) % span - span / 2); break;
    default: FILL_LOOP(int64_t, (int64_t)(r >> 59) % span - span / 2); break;
    }
    break;
  }
  case HLO_KIND_UINT: {
    uint64_t span = bits >= 4 ? 16 : (uint64_t)1 << bits;
    switch (hlc_dtype_size(t)) {
    case 1: FILL_LOOP(uint8_t, (r >> 59) % span); break;
    case 2: FILL_LOOP(uint16_t, (r >> 59) % span); break;
    case 4: FILL_LOOP(uint32_t, (r >> 59) % span); break;
    default: FILL_LOOP(uint64_t, (r >> 59) % span); break;
    }
    break;
  }
  case HLO_KIND_FLOAT:
    if (t == HLO_F32) FILL_LOOP(float, unit(r));
    else if (t == HLO_F64) FILL_LOOP(double, unit(r));
    else if (hlc_dtype_size(t) == 2) FILL_LOOP(uint16_t, hlc_float_bits_from_f64(t, unit(r)));
    else FILL_LOOP(uint8_t, hlc_float_bits_from_f64(t, unit(r)));
    break;
  case HLO_KIND_COMPLEX:
    n *= 2;   /* real and imaginary parts alike */
    if (t == HLO_C64) FILL_LOOP(float, unit(r));
    else FILL_LOOP(double, unit(r));
    break;
  default:
    break;
  }
}
