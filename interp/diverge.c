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
 * Many devices (run->replicas x run->partitions > 1): both modules run on
 * the grid (hlo_execute_devices); occurrences, positions and windows are
 * kept per device, and device d's values pair only with the reference's on
 * device d. The first divergence is the first in execution order on the
 * lowest-numbered device that has one, unless it is at a collective while
 * another device's is not (the collective may only pass that device's
 * divergence on: its operands agreed on its own device, not on all). The
 * executor hands the observer one event at a time (observe.c), so the engine needs no lock of its own.
 *
 * Not here: pairing instructions (counterpart.c), element comparison
 * (compare.c), printing (the command line). */
#include "interp/diverge.h"
#include "interp/plan.h"
#include "ir/collective.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Found {
  int64_t seq;               /* position among the module's compared values */
  int32_t id;                /* module-side id */
  int64_t occ;
  HliCompareSummary sum;
} Found;

/* One device's place in this part: positions among its compared values,
 * the window of the reference's values held, and its first divergence. */
typedef struct DevState {
  int64_t seq_a, seq_b;
  int64_t lo, hi;            /* this part's window of the reference's compared values */
  bool full;                 /* the budget filled up: there is another part */
  Found best;                /* best.seq < 0: nothing found yet on this device */
} DevState;

typedef struct Engine {
  HliSide a, b;              /* module, reference */
  const HloCompareOptions *cmp;
  int ndev;
  DevState *dev;             /* owned: by device */
  int best_dev;              /* the device whose divergence best_v holds, -1 none */
  int best_key;              /* its rank: lower is named first (on_module) */
  int64_t *occ_a, *occ_b;    /* runs of each instruction so far in this run, by
                                device * side's n + id */
  HliHeld held;              /* reference values held (held.c) */
  size_t budget;
  bool budget_from_peak;     /* budget follows the reference run's peak */
  const HloExecutable *ref_exe;
  bool stop_when_full;       /* (parts after the first) stop the reference then */
  bool stop_when_drained;    /* (parts after the first) stop the module when done */
  int64_t compared;
  HliValue *best_v, *best_rv;/* owned: best_dev's values in the module and the reference */
  bool nomem;
  bool widened;              /* the reference is the module carried in f64 */
} Engine;

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
  int dev = e->device;
  DevState *s = &g->dev[dev];
  int64_t occ = g->occ_b[(size_t)dev * (size_t)g->b.n + (size_t)id]++;
  int64_t seq = s->seq_b++;
  if (seq < s->lo || s->full) return 0;
  const HliValue *v = (const HliValue *)e->result;
  size_t budget = g->budget;
  if (g->budget_from_peak && g->ref_exe) {
    size_t peak = (size_t)hlo_executable_peak_memory(g->ref_exe);
    if (peak > budget) budget = peak;
  }
  if (g->held.nheld > 0 && g->held.bytes + value_bytes(v) > budget) {
    s->full = true;
    s->hi = seq;
    return g->stop_when_full ? 1 : 0;
  }
  HliValue *c = hli_value_new(NULL, v->shape);
  if (!c || hli_held_put(&g->held, dev, id, occ, c)) {
    hli_value_unref(NULL, c);
    g->nomem = true;
    return 1;
  }
  hli_value_copy_into(c, v);
  g->held.bytes += value_bytes(c) - c->nbytes;   /* tuples: their leaves */
  return 0;
}

/* Does ins's value come from other devices (a collective's, a recv's, a
 * manual region's assembled result)? */
static bool takes_other_devices(const HloInstr *ins) {
  if (hlp_manual_edge(ins) == HLP_SHARD_TO_FULL) return true;
  HloOpcode op = ins->op;
  switch (op) {
  case HLO_OP_REPLICA_ID: case HLO_OP_PARTITION_ID: return false;
  case HLO_OP_ALL_GATHER_DONE: case HLO_OP_ALL_REDUCE_DONE: case HLO_OP_COLLECTIVE_PERMUTE_DONE:
  case HLO_OP_RECV_DONE: return true;
  default: return hlp_is_device_dependent(op);
  }
}

/* The module's side: compare each value whose counterpart is held. */
static int on_module(const HloEvent *e, void *user) {
  Engine *g = user;
  const HloInstr *ins = (const HloInstr *)e->instruction;
  int32_t id = hli_side_id(&g->a, ins);
  if (id < 0 || !(g->a.flags[id] & HLI_SIDE_COMPARABLE) || g->a.pair[id] < 0 || !e->result) return 0;
  int dev = e->device;
  DevState *s = &g->dev[dev];
  int64_t occ = g->occ_a[(size_t)dev * (size_t)g->a.n + (size_t)id]++;
  int64_t seq = s->seq_a++;
  HliHeldEntry *h = hli_held_find(&g->held, dev, g->a.pair[id], occ);
  if (!h) return 0;
  if (s->best.seq < 0 || seq < s->best.seq) {
    HliCompareSummary sum;
    const HliValue *v = (const HliValue *)e->result;
    if (hli_compare_values(v, h->v, g->cmp, 1, &sum, NULL) != 0) {
      g->nomem = true;
      return 1;
    }
    g->compared++;
    if (sum.bad > 0) {
      s->best = (Found){seq, id, occ, sum};
      /* Keep both values of the divergence named (one instruction's worth):
       * the lowest device's, except that a collective's value may come from
       * another device's divergence, so one not at a collective goes first. */
      int key = (takes_other_devices(ins) ? g->ndev : 0) + dev;
      if (g->best_dev < 0 || dev == g->best_dev || key < g->best_key) {
        g->best_key = key;
        HliValue *c = hli_value_new(NULL, v->shape);
        if (!c) { g->nomem = true; return 1; }
        hli_value_copy_into(c, v);
        hli_value_unref(NULL, g->best_v);
        hli_value_unref(NULL, g->best_rv);
        g->best_v = c;
        g->best_rv = hli_value_ref(h->v);
        g->best_dev = dev;
      }
    }
  }
  g->held.bytes -= value_bytes(h->v) - h->v->nbytes;
  hli_held_drop(&g->held, h);
  return g->stop_when_drained && g->held.nheld == 0 ? 1 : 0;
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

/* One run of exe on every device (results[d]), observed by fn; the engine
 * may stop a one-device run on purpose. */
static HloStatus observed_run(HloExecutable *exe, HloObserver fn, Engine *g,
                              HloBuffer *const *inputs, int n, HloBuffer **res) {
  HloCtx *ctx = exe->ctx;
  int before = ctx->diags.n;
  HloStatus st = hlo_executable_set_observer(exe, fn, g, HLO_OBSERVE_AFTER | HLO_OBSERVE_NO_OPERANDS);
  if (st != HLO_OK) return st;
  st = g->ndev > 1 ? hlo_execute_devices(exe, inputs, n, res) : hlo_execute(exe, inputs, n, res);
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
  HloBuffer **res_a, **res_b;/* owned, on many devices: every device's results */
  int64_t *res_bad;          /* owned, on many devices: result mismatches by device */
} Report;

static void describe(Engine *g, Report *r, const char *ref_file) {
  HloDivergence *d = &r->pub;
  HlcText b = {0};
  if (g->best_dev < 0) {
    hlc_text_puts(&b, "first divergence: none");
  } else {
    const Found *f = &g->dev[g->best_dev].best;
    const HloInstr *ins = g->a.ins[f->id], *cp = g->b.ins[g->a.pair[f->id]];
    bool loop = g->a.flags[f->id] & HLI_SIDE_IN_LOOP;
    d->found = 1;
    d->device = g->best_dev;
    for (int k = 0; k < g->ndev; k++) d->devices_diverged += g->dev[k].best.seq >= 0;
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
    hlc_text_puts(&b, ")");
    if (g->ndev > 1) hlc_text_printf(&b, " on device %d", d->device);
    if (ref_file)
      hlc_text_printf(&b, " against the reference's %s (%s line %d)", cp->name, ref_file,
                     (int)cp->line);
    else
      hlc_text_puts(&b, " against its value carried in f64");
    hlc_text_printf(&b, ": %lld of %lld elements differ", (long long)f->sum.bad,
                   (long long)f->sum.total);
    if (f->sum.max_abs_at[0])
      hlc_text_printf(&b, "; largest absolute error %g at %s", f->sum.max_abs, f->sum.max_abs_at);
    hlc_text_printf(&b, "; first at %s: got %s, reference %s", f->sum.first_at, f->sum.first_got,
                   f->sum.first_want);
    if (g->ndev > 1)
      hlc_text_printf(&b, "; %d of %d devices diverge", d->devices_diverged, g->ndev);
  }
  hlc_text_put(&b, "", 1);
  r->line = b.p;
  d->line = r->line ? r->line : "first divergence: ?";
}

/* The results, as --expect compares them: on many devices device by
 * device, the report's lines naming the device. -1: out of memory. */
static int compare_results(Engine *g, Report *r, const HloCompareOptions *cmp) {
  HloDivergence *d = &r->pub;
  HlcText all = {0};
  int max_report = cmp->max_report > 0 ? cmp->max_report : 5;
  for (int k = 0; k < g->ndev; k++) {
    const HliValue *x = d->device_results[k]->v, *y = d->device_reference_results[k]->v;
    int64_t *bad = g->ndev > 1 ? &r->res_bad[k] : &d->result_mismatches;
    if (!(g->widened ? hli_shape_widens(x->shape, y->shape) : hlp_shape_compatible(x->shape, y->shape))) {
      *bad = -1;
      if (g->ndev > 1) {
        HlcText p = {0}, q = {0};
        hlp_print_shape(&p, x->shape, false);
        hlp_print_shape(&q, y->shape, false);
        hlc_text_printf(&all, "device %d: mismatch: the result has shape %s, the reference's %s\n",
                       k, p.p ? p.p : "?", q.p ? q.p : "?");
        hlc_text_free(&p);
        hlc_text_free(&q);
      }
      d->result_mismatches = -1;
      continue;
    }
    HliCompareSummary sum;
    HlcText rep = {0};
    if (hli_compare_values(x, y, cmp, max_report, &sum, &rep) != 0) {
      hlc_text_free(&rep);
      hlc_text_free(&all);
      return -1;
    }
    *bad = sum.bad;
    if (g->ndev == 1) {
      r->result_report = rep.p;
      d->result_report = sum.bad ? r->result_report : NULL;
      return 0;
    }
    if (sum.bad) {
      hlc_text_printf(&all, "device %d: %s", k, rep.p ? rep.p : "mismatch\n");
      if (d->result_mismatches >= 0) d->result_mismatches += sum.bad;
    }
    hlc_text_free(&rep);
  }
  if (all.p) hlc_text_put(&all, "", 1);
  r->result_report = all.p;
  d->result_report = r->result_report;
  return 0;
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
  HloRunOptions ro = {0};
  ro.struct_size = sizeof ro;
  if (o.run) memcpy(&ro, o.run, o.run->struct_size < sizeof ro ? o.run->struct_size : sizeof ro);
  ro.struct_size = sizeof ro;
  ro.no_fusion = 1;
  /* One device unless the caller gives a grid (0 is 1 here, not the
   * module's own: the inputs must be every device's). */
  if (ro.replicas < 1) ro.replicas = 1;
  if (ro.partitions < 1) ro.partitions = 1;
  if ((int64_t)ro.replicas * ro.partitions > 65536)
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "%d replicas x %d partitions: too many devices",
                        ro.replicas, ro.partitions);
  int ndev = ro.replicas * ro.partitions;
  if (ndev > 1 && hlo_process_count() > 1)
    return hli_api_fail(ctx, HLO_UNSUPPORTED, "comparing two runs instruction by instruction on "
                        "%d devices runs in one process, not under MPI (%d processes)", ndev,
                        hlo_process_count());
  HloBuffer *const *rinputs = o.reference_inputs ? o.reference_inputs : inputs;
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

  Report *r = calloc(1, sizeof *r);
  Engine *g = calloc(1, sizeof *g);
  HloExecutable *ea = NULL, *eb = NULL;
  HloBuffer **ra = NULL, **rb = NULL;
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
  d->num_devices = ndev;
  d->device_results = &d->result;
  d->device_reference_results = &d->reference_result;
  d->device_result_mismatches = &d->result_mismatches;
  g->cmp = &cmp;
  g->ndev = ndev;
  g->best_dev = -1;
  g->budget = o.memory_budget ? (size_t)o.memory_budget : (size_t)64 << 20;
  g->budget_from_peak = o.memory_budget == 0;
  g->widened = wide != NULL;
  if (hli_sides_build(m, ref, g->widened, &g->a, &g->b) != 0 ||
      !(g->dev = calloc((size_t)ndev, sizeof *g->dev)) ||
      !(g->occ_a = calloc((size_t)ndev * (size_t)g->a.n + 1, sizeof *g->occ_a)) ||
      !(g->occ_b = calloc((size_t)ndev * (size_t)g->b.n + 1, sizeof *g->occ_b)) ||
      !(ra = calloc((size_t)ndev, sizeof *ra)) || !(rb = calloc((size_t)ndev, sizeof *rb)) ||
      (ndev > 1 && !(r->res_bad = calloc((size_t)ndev, sizeof *r->res_bad)))) {
    st = hli_api_fail(ctx, HLO_NOMEM, "out of memory");
    goto out;
  }
  for (int k = 0; k < ndev; k++) g->dev[k].best.seq = -1;
  d->paired = g->a.npaired;
  d->unpaired = g->a.nunpaired;
  if ((st = hlo_compile(rctx, ref, &ro, &eb)) != HLO_OK) { d->failed_side = 2; goto out; }
  if ((st = hlo_compile(ctx, m, &ro, &ea)) != HLO_OK) { d->failed_side = 1; goto out; }
  g->ref_exe = eb;
  for (int part = 0;; part++) {
    memset(g->occ_a, 0, (size_t)ndev * (size_t)g->a.n * sizeof *g->occ_a);
    memset(g->occ_b, 0, (size_t)ndev * (size_t)g->b.n * sizeof *g->occ_b);
    for (int k = 0; k < ndev; k++) {
      g->dev[k].seq_a = g->dev[k].seq_b = 0;
      g->dev[k].full = false;
    }
    /* Stopping one device would leave the others waiting in a collective:
     * runs on many devices go to their end. */
    g->stop_when_full = g->stop_when_drained = part > 0 && ndev == 1;
    st = observed_run(eb, on_reference, g, rinputs, n, rb);
    if (st != HLO_OK) { d->failed_side = 2; goto out; }
    if (part == 0) {
      /* Later parts: as much as the whole reference run needed. */
      if (g->budget_from_peak && hlo_executable_peak_memory(eb) > g->budget)
        g->budget = (size_t)hlo_executable_peak_memory(eb);
    }
    if (g->held.nheld > 0 || part == 0) {
      st = observed_run(ea, on_module, g, inputs, n, ra);
      if (st != HLO_OK) { d->failed_side = 1; goto out; }
    }
    if (part == 0) {         /* the results: the first part's */
      if (ndev == 1) {
        d->result = ra[0];
        d->reference_result = rb[0];
        ra[0] = rb[0] = NULL;
      } else {
        r->res_a = ra;
        r->res_b = rb;
        ra = rb = NULL;
        if (!(ra = calloc((size_t)ndev, sizeof *ra)) || !(rb = calloc((size_t)ndev, sizeof *rb))) {
          st = hli_api_fail(ctx, HLO_NOMEM, "out of memory");
          goto out;
        }
        d->device_results = r->res_a;
        d->device_reference_results = r->res_b;
        d->device_result_mismatches = r->res_bad;
        d->result = r->res_a[0];
        d->reference_result = r->res_b[0];
      }
    }
    for (int k = 0; part > 0 && k < ndev; k++) {
      hlo_buffer_free(ra[k]);
      hlo_buffer_free(rb[k]);
      ra[k] = rb[k] = NULL;
    }
    hli_held_clear(&g->held);
    d->runs = part + 1;
    /* The next part: from where each device's budget ran out. */
    bool more = false;
    for (int k = 0; k < ndev; k++) {
      DevState *s = &g->dev[k];
      s->lo = s->full ? s->hi : INT64_MAX;
      more |= s->full;
    }
    if (!more) break;
  }
  d->values_compared = g->compared;
  if (compare_results(g, r, &cmp) != 0) {
    st = hli_api_fail(ctx, HLO_NOMEM, "out of memory");
    goto out;
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
  hli_held_clear(&g->held);
  hli_value_unref(NULL, g->best_v);
  hli_value_unref(NULL, g->best_rv);
  free(g->held.slots);
  free(g->dev);
  free(g->occ_a);
  free(g->occ_b);
  hli_side_free(&g->a);
  hli_side_free(&g->b);
  free(g);
  /* Results a failed or later part left (the first part's are the report's). */
  for (int k = 0; k < ndev && ra && rb; k++) {
    hlo_buffer_free(ra[k]);
    hlo_buffer_free(rb[k]);
  }
  free(ra);
  free(rb);
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
  if (r->res_a) {
    for (int k = 0; k < d->num_devices; k++) {
      hlo_buffer_free(r->res_a[k]);
      hlo_buffer_free(r->res_b[k]);
    }
  } else {
    hlo_buffer_free(d->result);
    hlo_buffer_free(d->reference_result);
  }
  free(r->res_a);
  free(r->res_b);
  free(r->res_bad);
  hlo_buffer_free(d->value);
  hlo_buffer_free(d->reference_value);
  free(r->result_report);
  free(r->line);
  free(r->max_abs_at);
  hlo_module_free(r->wide);
  free(r);
}
