/* determinism.c: running a module several times under different thread
 * counts and naming the first instruction whose bits differ between runs
 * although its operands' bits did not (hlo_check_determinism; hlorun
 * --determinism N).
 *
 * Each run is watched by the run path's observer (observe.c): before a
 * step its operands are hashed, after it its result; the first run keeps
 * the list of (instruction, operand hash, result hash) in execution order
 * (24 bytes a step, never the values), later runs compare step by step and
 * stop at the first difference. A result that differs while the operands
 * agreed names a nondeterministic instruction (a racy custom-call handler,
 * a kernel whose order of summation follows the thread count); operands
 * that differ first mean the difference came from somewhere not observed.
 *
 * Not here: making the contexts (each run's thread count is its
 * context's), printing. */
#include "interp/diverge.h"
#include <stdlib.h>
#include <string.h>

typedef struct Step {
  const HloInstr *ins;
  uint64_t ops, res;         /* hashes of the operands' and the result's bits */
} Step;

typedef struct Watch {
  HliSide side;              /* ids and loop flags of the module's instructions */
  Step *steps;               /* owned: the first run's steps */
  size_t n, cap;
  uint64_t *ops_at;          /* owned: operand hash per open depth */
  int32_t nops_at;
  int64_t *occ;              /* owned: runs of each instruction in this run */
  int run;                   /* 0: recording */
  size_t pos;                /* later runs: next step to compare */
  bool differs, other_path, nomem;
  Step got;                  /* the differing step of the later run */
  int64_t occurrence;
} Watch;

/* A 64-bit hash of a value's bits (tuples: their leaves in order). */
static uint64_t mix(uint64_t h, uint64_t w) {
  h ^= w * 0x9e3779b97f4a7c15ull;
  h = (h << 27 | h >> 37) * 0xc2b2ae3d27d4eb4full;
  return h;
}

static uint64_t hash_value(uint64_t h, const HliValue *v) {
  if (!v) return mix(h, 1);
  if (v->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < v->ntuple; i++) h = hash_value(h, v->tuple[i]);
    return mix(h, (uint64_t)v->ntuple);
  }
  if (!hlc_dtype_is_array(v->dtype) || !v->data) return mix(h, 2);
  const unsigned char *p = v->data;
  size_t n = v->nbytes, i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = mix(h, w);
  }
  uint64_t tail = 0;
  if (i < n) memcpy(&tail, p + i, n - i);
  return mix(mix(h, tail), n);
}

static int on_step(const HloEvent *e, void *user) {
  Watch *w = user;
  if (e->depth < 0) return 0;
  if (e->depth >= w->nops_at) {
    int32_t n = e->depth + 16;
    uint64_t *ns = realloc(w->ops_at, (size_t)n * sizeof *ns);
    if (!ns) { w->nomem = true; return 1; }
    w->ops_at = ns;
    w->nops_at = n;
  }
  if (e->phase == HLO_OBSERVE_BEFORE) {
    uint64_t h = 0x51ed270b27a3f1e5ull;
    for (int k = 0; k < e->num_operands; k++) h = hash_value(h, (const HliValue *)e->operands[k]);
    w->ops_at[e->depth] = h;
    return 0;
  }
  const HloInstr *ins = (const HloInstr *)e->instruction;
  int32_t id = hli_side_id(&w->side, ins);
  if (id < 0 || !(w->side.flags[id] & HLI_SIDE_COMPARABLE)) return 0;
  int64_t occ = w->occ[id]++;
  Step s = {ins, w->ops_at[e->depth], hash_value(0x2545f4914f6cdd1dull, (const HliValue *)e->result)};
  if (w->run == 0) {
    if (w->n == w->cap) {
      size_t cap = w->cap ? 2 * w->cap : 256;
      Step *ns = realloc(w->steps, cap * sizeof *ns);
      if (!ns) { w->nomem = true; return 1; }
      w->steps = ns;
      w->cap = cap;
    }
    w->steps[w->n++] = s;
    return 0;
  }
  const Step *want = w->pos < w->n ? &w->steps[w->pos] : NULL;
  w->pos++;
  if (want && want->ins == s.ins && want->ops == s.ops && want->res == s.res) return 0;
  w->differs = true;
  w->other_path = !want || want->ins != s.ins;
  w->got = s;
  w->occurrence = occ;
  return 1;
}

HloStatus hlo_check_determinism(HloCtx *const *ctxs, int nruns, const HloModule *m,
                                HloBuffer *const *inputs, int n, const HloRunOptions *opts,
                                HloDeterminism *out) {
  if (!ctxs || nruns < 2 || !m || !out || (n > 0 && !inputs)) return HLO_INVALID_ARGUMENT;
  HloCtx *ctx = ctxs[0];
  HloDeterminism r = {0};
  r.struct_size = sizeof r;
  r.iteration = r.call = -1;
  size_t sz = out->struct_size && out->struct_size < sizeof r ? out->struct_size : sizeof r;
  HloRunOptions ro = {0};
  if (opts) memcpy(&ro, opts, opts->struct_size < sizeof ro ? opts->struct_size : sizeof ro);
  ro.struct_size = sizeof ro;
  ro.no_fusion = 1;
  ro.replicas = ro.partitions = 1;
  Watch *w = calloc(1, sizeof *w);
  HliSide other = {0};
  HloStatus st = HLO_OK;
  if (!w || hli_sides_build(m, m, false, &w->side, &other) != 0 ||
      !(w->occ = calloc((size_t)w->side.n + 1, sizeof *w->occ))) {
    st = hli_api_fail(ctx, HLO_NOMEM, "out of memory");
    goto out;
  }
  for (int k = 0; k < nruns && !w->differs; k++) {
    HloExecutable *e = NULL;
    HloBuffer *res = NULL;
    w->run = k;
    w->pos = 0;
    memset(w->occ, 0, (size_t)w->side.n * sizeof *w->occ);
    HloCtx *c = ctxs[k] ? ctxs[k] : ctx;
    int before = c->diags.n;
    st = hlo_compile(c, m, &ro, &e);
    if (st == HLO_OK)
      st = hlo_executable_set_observer(e, on_step, w, HLO_OBSERVE_BEFORE | HLO_OBSERVE_AFTER |
                                                       HLO_OBSERVE_NO_OPERANDS);
    if (st == HLO_OK) st = hlo_execute(e, inputs, n, &res);
    hlo_buffer_free(res);
    hlo_executable_free(e);
    r.runs = k + 1;
    if (w->nomem) { st = hli_api_fail(ctx, HLO_NOMEM, "out of memory"); goto out; }
    if (st == HLO_STOPPED && w->differs) {
      /* Stopped here on purpose: forget "stopped by an observer". */
      while (c->diags.n > before) {
        HlcDiag *x = &c->diags.v[--c->diags.n];
        if (x->sev == HLC_ERROR) c->diags.nerrors--;
        else if (x->sev == HLC_WARNING) c->diags.nwarnings--;
        free(x->text);
        free(x->message);
      }
      st = HLO_OK;
    }
    if (st != HLO_OK) { r.failed_run = k + 1; goto out; }
    if (!w->differs && k > 0 && w->pos != w->n) {   /* the later run made fewer steps */
      w->differs = w->other_path = true;
    }
  }
  r.deterministic = !w->differs;
  if (w->differs) {
    r.run = r.runs - 1;
    r.different_path = w->other_path;
    r.operands_differ = !w->other_path && w->steps[w->pos - 1].ops != w->got.ops;
    if (w->got.ins) {
      int32_t id = hli_side_id(&w->side, w->got.ins);
      bool loop = id >= 0 && (w->side.flags[id] & HLI_SIDE_IN_LOOP);
      r.instruction = (const HloInstruction *)w->got.ins;
      r.iteration = loop ? w->occurrence : -1;
      r.call = !loop && w->got.ins->op == HLO_OP_CUSTOM_CALL ? w->occurrence : -1;
    }
  }
  r.steps = (int64_t)w->n;
out:
  if (w) {
    hli_side_free(&w->side);
    hli_side_free(&other);
    free(w->steps);
    free(w->ops_at);
    free(w->occ);
    free(w);
  }
  r.struct_size = sz;
  memcpy(out, &r, sz);
  return st;
}
