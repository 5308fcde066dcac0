/* diverge.c: running a module beside a reference and naming the first
 * instruction whose value differs (hlo_compare_runs; hlorun --reference).
 *
 * Both runs are watched through the run path's observer (observe.c),
 * never inside kernels. The reference runs first; the values of its
 * instructions that have a counterpart in the module are copied as they
 * are made, keyed by (instruction, occurrence), until memory_budget bytes
 * are held. Then the module runs; each value whose reference counterpart
 * is held is compared at once, and the reference's copy freed. A value
 * differs when an element is outside tolerance; the first divergence is
 * the first differing value in the module's execution order. (Its operands
 * ran before it, so all of those with counterparts agreed.) When the budget
 * did not hold every reference value, both runs are repeated for the next
 * part, and the earliest divergence over all parts wins: memory stays at
 * about both runs' own plus the budget, never every intermediate of both.
 *
 * Occurrences: an instruction in a loop body runs once per iteration; its
 * K-th run pairs with its counterpart's K-th run. So a custom call is
 * compared per call.
 *
 * Not here: pairing instructions (counterpart.c), element comparison
 * (compare.c), printing (the command line). */
#include "interp/diverge.h"
#include "interp/plan.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One held reference value: instruction id (reference side), occurrence. */
typedef struct Held {
  int32_t id;                /* -1: empty slot; -2: deleted */
  int64_t occ;
  HliValue *v;               /* owned copy */
} Held;

typedef struct Found {
  int64_t seq;               /* position among the module's compared values */
  int32_t id;                /* module-side id */
  int64_t occ;
  HliCompareSummary sum;
} Found;

typedef struct Engine {
  HliSide a, b;              /* module, reference */
  const HloCompareOptions *cmp;
  int64_t *occ_a, *occ_b;    /* runs of each instruction so far in this run */
  /* Held reference values: open addressing over (id, occ). */
  Held *held;
  size_t cap, nheld, nused;  /* slots, live entries, slots not empty */
  size_t held_bytes, budget;
  bool budget_from_peak;     /* budget follows the reference run's peak */
  const HloExecutable *ref_exe;
  /* This part's window of the reference's compared values: [lo, hi). */
  int64_t lo, hi, seq_b;
  bool full;                 /* the budget filled up: there is another part */
  bool stop_when_full;       /* (parts after the first) stop the reference then */
  bool stop_when_drained;    /* (parts after the first) stop the module when done */
  int64_t seq_a, compared;
  Found best;                /* best.seq < 0: nothing found yet */
  HliValue *best_v, *best_rv;/* owned: its values in the module and the reference */
  bool nomem;
  bool widened;              /* the reference is the module carried in f64 */
} Engine;

static uint64_t key_hash(int32_t id, int64_t occ) {
  uint64_t h = (uint64_t)(uint32_t)id * 0x9e3779b97f4a7c15ull ^ (uint64_t)occ * 0xc2b2ae3d27d4eb4full;
  return h ^ (h >> 29);
}

static Held *held_find(Engine *g, int32_t id, int64_t occ) {
  if (!g->cap) return NULL;
  for (size_t k = key_hash(id, occ) & (g->cap - 1);; k = (k + 1) & (g->cap - 1)) {
    Held *h = &g->held[k];
    if (h->id == -1) return NULL;
    if (h->id == id && h->occ == occ) return h;
  }
}

static int held_grow(Engine *g) {
  size_t cap = g->cap ? 2 * g->cap : 64;
  Held *n = malloc(cap * sizeof *n);
  if (!n) return -1;
  for (size_t k = 0; k < cap; k++) n[k].id = -1;
  for (size_t k = 0; k < g->cap; k++) {
    Held *h = &g->held[k];
    if (h->id < 0) continue;
    size_t j = key_hash(h->id, h->occ) & (cap - 1);
    while (n[j].id != -1) j = (j + 1) & (cap - 1);
    n[j] = *h;
  }
  free(g->held);
  g->held = n;
  g->cap = cap;
  g->nused = g->nheld;
  return 0;
}

static int held_put(Engine *g, int32_t id, int64_t occ, HliValue *v) {
  if (2 * (g->nused + 1) > g->cap && held_grow(g)) return -1;
  size_t k = key_hash(id, occ) & (g->cap - 1);
  while (g->held[k].id != -1) k = (k + 1) & (g->cap - 1);
  g->held[k] = (Held){id, occ, v};
  g->nheld++;
  g->nused++;
  g->held_bytes += v->nbytes;
  return 0;
}

static void held_drop(Engine *g, Held *h) {
  g->held_bytes -= h->v->nbytes;
  hli_value_unref(NULL, h->v);
  h->v = NULL;
  h->id = -2;
  g->nheld--;
}

static void held_clear(Engine *g) {
  for (size_t k = 0; k < g->cap; k++) {
    if (g->held[k].id >= 0) hli_value_unref(NULL, g->held[k].v);
    g->held[k].id = -1;
  }
  g->nheld = g->nused = 0;
  g->held_bytes = 0;
}

/* Bytes of a value, tuples' leaves included. */
static size_t value_bytes(const HliValue *v) {
  if (v->dtype != HLO_TUPLE) return v->nbytes;
  size_t n = 0;
  for (int32_t i = 0; i < v->ntuple; i++) n += value_bytes(v->tuple[i]);
  return n;
}

/* The reference's side: hold the values of this part's window. */
static int on_reference(const HloEvent *e, void *user) {
  Engine *g = user;
  const HloInstr *ins = (const HloInstr *)e->instruction;
  int32_t id = hli_side_id(&g->b, ins);
  if (id < 0 || !(g->b.flags[id] & HLI_SIDE_COMPARABLE) || g->b.pair[id] < 0 || !e->result) return 0;
  int64_t occ = g->occ_b[id]++;
  int64_t seq = g->seq_b++;
  if (seq < g->lo || g->full) return 0;
  const HliValue *v = (const HliValue *)e->result;
  size_t budget = g->budget;
  if (g->budget_from_peak && g->ref_exe) {
    size_t peak = (size_t)hlo_executable_peak_memory(g->ref_exe);
    if (peak > budget) budget = peak;
  }
  if (g->nheld > 0 && g->held_bytes + value_bytes(v) > budget) {
    g->full = true;
    g->hi = seq;
    return g->stop_when_full ? 1 : 0;
  }
  HliValue *c = hli_value_new(NULL, v->shape);
  if (!c || held_put(g, id, occ, c)) {
    hli_value_unref(NULL, c);
    g->nomem = true;
    return 1;
  }
  hli_value_copy_into(c, v);
  g->held_bytes += value_bytes(c) - c->nbytes;   /* tuples: their leaves */
  return 0;
}

/* The module's side: compare each value whose counterpart is held. */
static int on_module(const HloEvent *e, void *user) {
  Engine *g = user;
  const HloInstr *ins = (const HloInstr *)e->instruction;
  int32_t id = hli_side_id(&g->a, ins);
  if (id < 0 || !(g->a.flags[id] & HLI_SIDE_COMPARABLE) || g->a.pair[id] < 0 || !e->result) return 0;
  int64_t occ = g->occ_a[id]++;
  int64_t seq = g->seq_a++;
  Held *h = held_find(g, g->a.pair[id], occ);
  if (!h) return 0;
  if (g->best.seq < 0 || seq < g->best.seq) {
    HliCompareSummary sum;
    const HliValue *v = (const HliValue *)e->result;
    if (hli_compare_values(v, h->v, g->cmp, 1, &sum, NULL) != 0) {
      g->nomem = true;
      return 1;
    }
    g->compared++;
    if (sum.bad > 0) {
      /* Keep both values of the divergence (one instruction's worth). */
      HliValue *c = hli_value_new(NULL, v->shape);
      if (!c) { g->nomem = true; return 1; }
      hli_value_copy_into(c, v);
      hli_value_unref(NULL, g->best_v);
      hli_value_unref(NULL, g->best_rv);
      g->best_v = c;
      g->best_rv = hli_value_ref(h->v);
      g->best = (Found){seq, id, occ, sum};
    }
  }
  g->held_bytes -= value_bytes(h->v) - h->v->nbytes;
  held_drop(g, h);
  return g->stop_when_drained && g->nheld == 0 ? 1 : 0;
}

/* Forget the diagnostics recorded after the first n (a run this engine
 * stopped on purpose records "stopped by an observer"). */
static void drop_diags(HlcDiags *d, int n) {
  while (d->n > n) {
    HlcDiag *x = &d->v[--d->n];
    if (x->sev == HLC_ERROR) d->nerrors--;
    else if (x->sev == HLC_WARNING) d->nwarnings--;
    free(x->text);
    free(x->message);
  }
}

static HloStatus check_params(HloCtx *ctx, const HloModule *m, const HloModule *ref) {
  const HloComputation *a = m->entry, *b = ref->entry;
  if (a->nparams != b->nparams)
    return hli_api_fail(ctx, HLO_TYPE_MISMATCH, "the reference's ENTRY %s takes %d parameter%s, "
                        "the module's ENTRY %s takes %d", b->name, b->nparams,
                        b->nparams == 1 ? "" : "s", a->name, a->nparams);
  for (int32_t i = 0; i < a->nparams; i++) {
    if (hlp_shape_compatible(&a->params[i]->shape, &b->params[i]->shape)) continue;
    HlcText x = {0}, y = {0};
    hlp_print_shape(&x, &a->params[i]->shape, false);
    hlp_print_shape(&y, &b->params[i]->shape, false);
    hli_api_fail(ctx, HLO_TYPE_MISMATCH, "parameter %d differs: the module's %s is %s, the "
                 "reference's %s is %s", (int)i, a->params[i]->name, x.p ? x.p : "?",
                 b->params[i]->name, y.p ? y.p : "?");
    hlc_text_free(&x);
    hlc_text_free(&y);
    return HLO_TYPE_MISMATCH;
  }
  return HLO_OK;
}

/* One run of exe, observed by fn; stop: the engine may stop it on purpose. */
static HloStatus observed_run(HloExecutable *exe, HloObserver fn, Engine *g,
                              HloBuffer *const *inputs, int n, HloBuffer **res) {
  HloCtx *ctx = exe->ctx;
  int before = ctx->diags.n;
  HloStatus st = hlo_executable_set_observer(exe, fn, g, HLO_OBSERVE_AFTER | HLO_OBSERVE_NO_OPERANDS);
  if (st != HLO_OK) return st;
  st = hlo_execute(exe, inputs, n, res);
  hlo_executable_set_observer(exe, NULL, NULL, 0);
  if (g->nomem) {
    drop_diags(&ctx->diags, before);
    return hli_api_fail(ctx, HLO_NOMEM, "out of memory while comparing the runs");
  }
  if (st == HLO_STOPPED) {   /* on purpose: the part was done */
    drop_diags(&ctx->diags, before);
    return HLO_OK;
  }
  return st;
}

static char *dup_text(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* The report and the strings it holds (borrowed by the public struct). */
typedef struct Report {
  HloDivergence pub;
  char *result_report, *line, *max_abs_at;
  HloModule *wide;           /* owned: the reference carried in f64, or NULL */
} Report;

static void describe(Engine *g, Report *r, const char *ref_file) {
  HloDivergence *d = &r->pub;
  HlcText b = {0};
  if (g->best.seq < 0) {
    hlc_text_puts(&b, "first divergence: none");
  } else {
    const Found *f = &g->best;
    const HloInstr *ins = g->a.ins[f->id], *cp = g->b.ins[g->a.pair[f->id]];
    bool loop = g->a.flags[f->id] & HLI_SIDE_IN_LOOP;
    d->found = 1;
    d->instruction = (const HloInstruction *)ins;
    d->counterpart = (const HloInstruction *)cp;
    d->iteration = loop ? f->occ : -1;
    d->call = !loop && ins->op == HLO_OP_CUSTOM_CALL ? f->occ : -1;
    d->mismatches = f->sum.bad;
    d->elements = f->sum.total;
    d->max_abs_error = f->sum.max_abs_at[0] ? f->sum.max_abs : NAN;
    r->max_abs_at = dup_text(f->sum.max_abs_at[0] ? f->sum.max_abs_at : f->sum.first_at);
    d->max_abs_at = r->max_abs_at;
    hlc_text_printf(&b, "first divergence: %s (%s, line %d", ins->name, hlp_opcode_name(ins->op),
                   (int)ins->line);
    if (d->iteration >= 0) hlc_text_printf(&b, ", iteration %lld", (long long)d->iteration);
    if (d->call >= 0) hlc_text_printf(&b, ", call %lld", (long long)d->call);
    if (ref_file)
      hlc_text_printf(&b, ") against the reference's %s (%s line %d)", cp->name, ref_file,
                     (int)cp->line);
    else
      hlc_text_puts(&b, ") against its value carried in f64");
    hlc_text_printf(&b, ": %lld of %lld elements differ", (long long)f->sum.bad,
                   (long long)f->sum.total);
    if (f->sum.max_abs_at[0])
      hlc_text_printf(&b, "; largest absolute error %g at %s", f->sum.max_abs, f->sum.max_abs_at);
    hlc_text_printf(&b, "; first at %s: got %s, reference %s", f->sum.first_at, f->sum.first_got,
                   f->sum.first_want);
  }
  hlc_text_put(&b, "", 1);
  r->line = b.p;
  d->line = r->line ? r->line : "first divergence: ?";
}

HloStatus hlo_compare_runs(HloCtx *ctx, const HloModule *m, const HloModule *ref,
                           HloBuffer *const *inputs, int n, const HloDivergenceOptions *opts,
                           HloDivergence **out) {
  if (!ctx || !m || !out || (n > 0 && !inputs)) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  HloDivergenceOptions o = {0};
  o.struct_size = sizeof o;
  if (opts) memcpy(&o, opts, opts->struct_size < sizeof o ? opts->struct_size : sizeof o);
  HloCtx *rctx = o.reference_ctx ? o.reference_ctx : ctx;
  HloModule *wide = NULL;    /* --reference-precision f64: m carried in f64 */
  if (o.reference_precision) {
    if (o.reference_precision != HLO_TYPE_F64)
      return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "reference precision %s: only f64 is supported",
                          hlc_dtype_name(hlc_dtype_from_xla_code((int)o.reference_precision)));
    if (!(wide = hli_widen_module(m, &ctx->diags)))
      return ctx->diags.nerrors ? HLO_PARSE_ERROR
                                : hli_api_fail(ctx, HLO_NOMEM, "out of memory widening the module");
    ref = wide;
  }
  if (!ref) return HLO_INVALID_ARGUMENT;
  HloStatus st = check_params(ctx, m, ref);
  if (st != HLO_OK) { hlo_module_free(wide); return st; }
  HloCompareOptions cmp = {sizeof cmp, -1, -1, 0, 0};
  if (o.compare)
    memcpy(&cmp, o.compare, o.compare->struct_size < sizeof cmp ? o.compare->struct_size : sizeof cmp);
  cmp.struct_size = sizeof cmp;
  HloRunOptions ro = {0};
  ro.struct_size = sizeof ro;
  if (o.run) memcpy(&ro, o.run, o.run->struct_size < sizeof ro ? o.run->struct_size : sizeof ro);
  ro.struct_size = sizeof ro;
  ro.no_fusion = 1;
  ro.replicas = ro.partitions = 1;

  Report *r = calloc(1, sizeof *r);
  Engine *g = calloc(1, sizeof *g);
  HloExecutable *ea = NULL, *eb = NULL;
  if (!r || !g) {
    free(r);
    free(g);
    hlo_module_free(wide);
    return hli_api_fail(ctx, HLO_NOMEM, "out of memory");
  }
  HloDivergence *d = &r->pub;
  d->struct_size = sizeof *d;
  d->iteration = d->call = -1;
  d->max_abs_error = NAN;
  g->cmp = &cmp;
  g->best.seq = -1;
  g->budget = o.memory_budget ? (size_t)o.memory_budget : (size_t)64 << 20;
  g->budget_from_peak = o.memory_budget == 0;
  g->widened = wide != NULL;
  if (hli_sides_build(m, ref, g->widened, &g->a, &g->b) != 0 ||
      !(g->occ_a = calloc((size_t)g->a.n + 1, sizeof *g->occ_a)) ||
      !(g->occ_b = calloc((size_t)g->b.n + 1, sizeof *g->occ_b))) {
    st = hli_api_fail(ctx, HLO_NOMEM, "out of memory");
    goto out;
  }
  d->paired = g->a.npaired;
  d->unpaired = g->a.nunpaired;
  if ((st = hlo_compile(rctx, ref, &ro, &eb)) != HLO_OK) { d->failed_side = 2; goto out; }
  if ((st = hlo_compile(ctx, m, &ro, &ea)) != HLO_OK) { d->failed_side = 1; goto out; }
  g->ref_exe = eb;
  for (int part = 0;; part++) {
    memset(g->occ_a, 0, (size_t)g->a.n * sizeof *g->occ_a);
    memset(g->occ_b, 0, (size_t)g->b.n * sizeof *g->occ_b);
    g->seq_a = g->seq_b = 0;
    g->full = false;
    g->stop_when_full = g->stop_when_drained = part > 0;
    HloBuffer *rb = NULL, *ra = NULL;
    st = observed_run(eb, on_reference, g, inputs, n, &rb);
    if (st != HLO_OK) { d->failed_side = 2; goto out; }
    if (part == 0) {
      d->reference_result = rb;
      /* Later parts: as much as the whole reference run needed. */
      if (g->budget_from_peak && hlo_executable_peak_memory(eb) > g->budget)
        g->budget = (size_t)hlo_executable_peak_memory(eb);
    } else {
      hlo_buffer_free(rb);
    }
    if (g->nheld > 0 || part == 0) {
      st = observed_run(ea, on_module, g, inputs, n, &ra);
      if (st != HLO_OK) { d->failed_side = 1; goto out; }
      if (part == 0) d->result = ra;
      else hlo_buffer_free(ra);
    }
    held_clear(g);
    d->runs = part + 1;
    if (!g->full) break;
    g->lo = g->hi;
  }
  d->values_compared = g->compared;
  /* The results, as --expect compares them. */
  if (!(g->widened ? hli_shape_widens(d->result->v->shape, d->reference_result->v->shape)
                   : hlp_shape_compatible(d->result->v->shape, d->reference_result->v->shape))) {
    d->result_mismatches = -1;
  } else {
    HliCompareSummary sum;
    HlcText rep = {0};
    if (hli_compare_values(d->result->v, d->reference_result->v, &cmp,
                           cmp.max_report > 0 ? cmp.max_report : 5, &sum, &rep) != 0) {
      st = hli_api_fail(ctx, HLO_NOMEM, "out of memory");
      goto out;
    }
    d->result_mismatches = sum.bad;
    r->result_report = rep.p;
    d->result_report = sum.bad ? r->result_report : NULL;
  }
  describe(g, r, g->widened ? NULL : ref->filename);
  if (g->best_v) {
    HliValue *v = g->best_v, *rv = g->best_rv;
    g->best_v = g->best_rv = NULL;
    if ((st = hli_make_buffer(ctx, v, v->shape, &d->value)) != HLO_OK) {
      hli_value_unref(NULL, rv);
      goto out;
    }
    if ((st = hli_make_buffer(ctx, rv, rv->shape, &d->reference_value)) != HLO_OK) goto out;
  }
  st = HLO_OK;
out:
  if (g->cap) held_clear(g);
  hli_value_unref(NULL, g->best_v);
  hli_value_unref(NULL, g->best_rv);
  free(g->held);
  free(g->occ_a);
  free(g->occ_b);
  hli_side_free(&g->a);
  hli_side_free(&g->b);
  free(g);
  hlo_executable_free(ea);
  hlo_executable_free(eb);
  r->wide = wide;            /* values and counterpart borrow its shapes and instructions */
  if (st != HLO_OK && !d->failed_side) {
    hlo_divergence_free(d);
    return st;
  }
  *out = d;
  return st;
}

void hlo_divergence_free(HloDivergence *d) {
  if (!d) return;
  Report *r = (Report *)d;
  hlo_buffer_free(d->result);
  hlo_buffer_free(d->reference_result);
  hlo_buffer_free(d->value);
  hlo_buffer_free(d->reference_value);
  free(r->result_report);
  free(r->line);
  free(r->max_abs_at);
  hlo_module_free(r->wide);
  free(r);
}
