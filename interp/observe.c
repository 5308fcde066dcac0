/* observe.c: watching a run, for the debugging tools of the command line
 * (--trace, --check-nan, --stats, --dump-custom-calls, progress).
 *
 * The executor's run loop calls hli_observe around every step when an
 * observer is set (exec.c); this file keeps the stack of running
 * instructions (depth, caller, start time), turns a step into the public
 * HloEvent and calls the user's HloObserver. It also implements the public
 * read-only views of values (HloValue) and instructions (HloInstruction) and
 * value summaries (min, max, mean, NaN and infinity counts).
 *
 * Not here: printing (the command line does it), the run loop itself. */
#include "interp/api.h"
#include "interp/plan.h"
#include "interp/valio.h"
#include "common/numeric.h"
#include "interp/comm.h"
#include <pthread.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct ObsFrame {
  const HloInstr *ins;       /* borrowed: the running instruction */
  uint64_t t0;               /* its start, ns */
} ObsFrame;

struct HliObs {
  HloObserver fn;            /* the user's callback */
  void *user;
  unsigned phases;           /* HLO_OBSERVE_* bits wanted by fn */
  ObsFrame *stack;           /* owned: instructions running, outermost first */
  int32_t depth, cap;
  int32_t max_depth;         /* deepest depth observed; -1: all */
  bool stopped;              /* fn asked to stop the current run */
};

static pthread_mutex_t device_events = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Views are the executor's own objects: the public handle types are never
 * defined, only converted. */
static const HliValue *V(const HloValue *v) { return (const HliValue *)v; }
static const HloInstr *I(const HloInstruction *i) { return (const HloInstr *)i; }
static const HloInstruction *PI(const HloInstr *i) { return (const HloInstruction *)i; }

static int deliver(HliExec *x, HliObs *o, const HliPlan *p, int32_t s, int32_t nops,
                   HliValue **in, HliValue *result, uint64_t elapsed) {
  const HliStep *st = &p->steps[s];
  const HloInstr *ins = st->ins;
  HloEvent e = {0};
  e.struct_size = sizeof e;
  e.phase = result ? HLO_OBSERVE_AFTER : HLO_OBSERVE_BEFORE;
  e.instruction = PI(ins);
  e.name = ins->name;
  e.opcode = hlp_opcode_name(ins->op);
  e.computation = ins->parent && ins->parent->name ? ins->parent->name : "?";
  e.line = ins->line;
  e.depth = o->depth - (result ? 0 : 1);
  e.caller = e.depth > 0 ? PI(o->stack[e.depth - 1].ins) : NULL;
  e.step = s;
  e.num_steps = p->nsteps;
  e.num_operands = nops;
  e.operands = nops ? (const HloValue *const *)in : NULL;
  e.result = (const HloValue *)result;
  e.elapsed_ns = elapsed;
  e.fused = st->kind == HLI_STEP_FUSED ? 1 : st->kind == HLI_STEP_CHAIN ? 2 : 0;
  const HliDevice *d = x->device;
  e.device = d ? (int)(d->replica * d->npartitions + d->partition) : 0;
  /* The devices of a run are threads; the user's observer sees one event
   * at a time. */
  if (d) pthread_mutex_lock(&device_events);
  int stop = o->fn(&e, o->user);
  if (d) pthread_mutex_unlock(&device_events);
  if (stop == 0) return 0;
  o->stopped = true;
  return hli_fail(x, ins, "the run was stopped here by an observer");
}

int hli_observe(HliExec *x, const HliPlan *p, int32_t s, HliValue *const *slots, HliValue **in,
                HliValue *result) {
  HliObs *o = x->obs;
  const HliStep *st = &p->steps[s];
  if (!result) {
    if (o->depth == o->cap) {
      int32_t cap = o->cap ? 2 * o->cap : 16;
      ObsFrame *ns = realloc(o->stack, (size_t)cap * sizeof *ns);
      if (!ns) return hli_fail_nomem(x, st->ins, "out of memory");
      o->stack = ns;
      o->cap = cap;
    }
    o->stack[o->depth++] = (ObsFrame){st->ins, 0};
    /* Too deep to be observed: only the frame is kept (no clock, no call). */
    if (o->max_depth >= 0 && o->depth - 1 > o->max_depth) return 0;
    int rc = 0;
    if (o->phases & HLO_OBSERVE_BEFORE) {
      for (int32_t k = 0; k < st->nops; k++) in[k] = slots[st->ops[k]];
      rc = deliver(x, o, p, s, st->nops, in, NULL, 0);
    }
    if (o->phases & HLO_OBSERVE_AFTER)
      o->stack[o->depth - 1].t0 = now_ns();   /* the observer's own time is not the step's */
    return rc;
  }
  /* Unwind to this step's frame (a failed nested run may have left frames). */
  while (o->depth > 0 && o->stack[o->depth - 1].ins != st->ins) o->depth--;
  uint64_t t0 = o->depth > 0 ? o->stack[o->depth - 1].t0 : 0;
  if (o->depth > 0) o->depth--;
  if (!(o->phases & HLO_OBSERVE_AFTER) || (o->max_depth >= 0 && o->depth > o->max_depth)) return 0;
  uint64_t t1 = now_ns();
  /* Operands updated in place are the result now: none are shown. */
  int32_t nops = hli_obs_keeps_operands(o) ? st->nops : 0;
  for (int32_t k = 0; k < nops; k++) in[k] = slots[st->ops[k]];
  return deliver(x, o, p, s, nops, in, result, t0 ? t1 - t0 : 0);
}

bool hli_obs_keeps_operands(const HliObs *o) {
  return !(o->phases & HLO_OBSERVE_NO_OPERANDS);
}

void hli_obs_free(HliObs *o) {
  if (!o) return;
  free(o->stack);
  free(o);
}

HloStatus hlo_executable_set_observer(HloExecutable *e, HloObserver fn, void *user,
                                      unsigned phases) {
  if (!e) return HLO_INVALID_ARGUMENT;
  if (!fn) {
    hli_obs_free(e->obs);
    e->obs = NULL;
    e->x.obs = NULL;
    return HLO_OK;
  }
  if (!e->obs) {
    if (!(e->obs = calloc(1, sizeof *e->obs))) return hli_api_fail(e->ctx, HLO_NOMEM, "out of memory");
    e->obs->max_depth = -1;
  }
  e->obs->fn = fn;
  e->obs->user = user;
  e->obs->phases = phases;
  e->x.obs = e->obs;
  return HLO_OK;
}

HloStatus hlo_executable_set_observer_depth(HloExecutable *e, int max_depth) {
  if (!e || !e->obs) return HLO_INVALID_ARGUMENT;
  e->obs->max_depth = max_depth < 0 ? -1 : max_depth;
  return HLO_OK;
}

HloStatus hli_obs_copy(HloExecutable *dst, const HloExecutable *src) {
  if (!src->obs) return hlo_executable_set_observer(dst, NULL, NULL, 0);
  HloStatus st = hlo_executable_set_observer(dst, src->obs->fn, src->obs->user, src->obs->phases);
  if (st == HLO_OK) dst->obs->max_depth = src->obs->max_depth;
  return st;
}

void hli_obs_reset(HliObs *o) {
  if (o) { o->depth = 0; o->stopped = false; }
}

bool hli_obs_stopped(const HliObs *o) { return o && o->stopped; }


/* ---- Instructions ---------------------------------------------------------- */

const HloInstruction *hlo_module_find_instruction(const HloModule *m, const char *name) {
  if (!m || !name) return NULL;
  if (m->entry)
    for (int32_t i = 0; i < m->entry->ninstrs; i++)
      if (strcmp(m->entry->instrs[i]->name, name) == 0) return PI(m->entry->instrs[i]);
  for (int32_t c = 0; c < m->ncomps; c++)
    for (int32_t i = 0; i < m->comps[c]->ninstrs; i++)
      if (strcmp(m->comps[c]->instrs[i]->name, name) == 0) return PI(m->comps[c]->instrs[i]);
  return NULL;
}

const char *hlo_instruction_name(const HloInstruction *i) { return i ? I(i)->name : NULL; }
const char *hlo_instruction_opcode(const HloInstruction *i) {
  return i ? hlp_opcode_name(I(i)->op) : NULL;
}
const char *hlo_instruction_computation(const HloInstruction *i) {
  return i && I(i)->parent ? I(i)->parent->name : NULL;
}
int hlo_instruction_line(const HloInstruction *i) { return i ? I(i)->line : 0; }
int hlo_instruction_num_operands(const HloInstruction *i) { return i ? I(i)->nops : 0; }
const HloInstruction *hlo_instruction_operand(const HloInstruction *i, int k) {
  return i && k >= 0 && k < I(i)->nops ? PI(I(i)->ops[k]) : NULL;
}
const char *hlo_instruction_custom_call_target(const HloInstruction *i) {
  return i && I(i)->op == HLO_OP_CUSTOM_CALL ? I(i)->custom_call_target : NULL;
}

/* ---- Values ---------------------------------------------------------------- */

HloElementType hlo_value_type(const HloValue *v) {
  return v ? (HloElementType)hlc_dtype_xla_code(V(v)->dtype) : HLO_TYPE_INVALID;
}
int hlo_value_rank(const HloValue *v) { return v && hlc_dtype_is_array(V(v)->dtype) ? V(v)->rank : 0; }
const int64_t *hlo_value_dims(const HloValue *v) { return v ? V(v)->dims : NULL; }
int64_t hlo_value_num_elements(const HloValue *v) {
  return v && hlc_dtype_is_array(V(v)->dtype) ? V(v)->nelem : 0;
}
const void *hlo_value_data(const HloValue *v) { return v ? V(v)->data : NULL; }
int hlo_value_tuple_size(const HloValue *v) {
  return v && V(v)->dtype == HLO_TUPLE ? V(v)->ntuple : 0;
}
const HloValue *hlo_value_tuple_element(const HloValue *v, int i) {
  if (!v || V(v)->dtype != HLO_TUPLE || i < 0 || i >= V(v)->ntuple) return NULL;
  return (const HloValue *)V(v)->tuple[i];
}

static size_t copy_out(HlcText *b, char *buf, size_t cap) {
  size_t n = b->p ? b->n : 0;
  if (buf && cap) {
    size_t k = n < cap - 1 ? n : cap - 1;
    if (k) memcpy(buf, b->p, k);
    buf[k] = 0;
  }
  hlc_text_free(b);
  return n;
}

size_t hlo_value_shape_text(const HloValue *v, char *buf, size_t cap) {
  HlcText b = {0};
  if (v) hlp_print_shape(&b, V(v)->shape, false);
  return copy_out(&b, buf, cap);
}

HloStatus hlo_value_to_buffer(HloCtx *ctx, const HloValue *v, HloBuffer **out) {
  if (!v || !out) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  HliValue *c = hli_value_new(NULL, V(v)->shape);
  if (!c) return hli_api_fail(ctx, HLO_NOMEM, "out of memory");
  hli_value_copy_into(c, V(v));
  return hli_make_buffer(ctx, c, V(v)->shape, out);
}

/* Running statistics; typed loops per element kind. */
typedef struct Acc { int64_t n, nan, inf, fin; double min, max, sum; } Acc;

static inline void acc_add(Acc *a, double d) {
  a->n++;
  if (isnan(d)) { a->nan++; return; }
  if (isinf(d)) { a->inf++; return; }
  if (a->fin == 0 || d < a->min) a->min = d;
  if (a->fin == 0 || d > a->max) a->max = d;
  a->fin++;
  a->sum += d;
}

#define ACC_LOOP(T, N, EXPR)                                        \
  do {                                                              \
    const T *d = (const T *)p;                                      \
    for (int64_t i = 0; i < (N); i++) acc_add(a, (double)(EXPR));   \
  } while (0)

static void acc_leaf(Acc *a, const HliValue *v) {
  if (v->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < v->ntuple; i++) acc_leaf(a, v->tuple[i]);
    return;
  }
  if (!hlc_dtype_is_array(v->dtype) || !v->data) return;
  const void *p = v->data;
  int64_t n = v->nelem;
  HloDtype t = v->dtype;
  switch (hlc_dtype_kind(t)) {
  case HLO_KIND_FLOAT:
    if (t == HLO_F32) ACC_LOOP(float, n, d[i]);
    else if (t == HLO_F64) ACC_LOOP(double, n, d[i]);
    else if (hlc_dtype_size(t) == 2) ACC_LOOP(uint16_t, n, hlc_float_bits_to_f64(t, d[i]));
    else ACC_LOOP(uint8_t, n, hlc_float_bits_to_f64(t, d[i]));
    break;
  case HLO_KIND_COMPLEX:
    if (t == HLO_C64) ACC_LOOP(float, 2 * n, d[i]);
    else ACC_LOOP(double, 2 * n, d[i]);
    break;
  default: {
    if (t == HLO_U64) { ACC_LOOP(uint64_t, n, d[i]); break; }
    /* Other integers and pred fit int64. */
    size_t es = hlc_dtype_size(t);
    for (int64_t i = 0; i < n; i++) acc_add(a, (double)hlc_load_i64(t, (const char *)p + (size_t)i * es));
    break;
  }
  }
}

void hlo_value_summarize(const HloValue *v, HloValueSummary *s) {
  if (!s) return;
  size_t sz = s->struct_size && s->struct_size < sizeof *s ? s->struct_size : sizeof *s;
  Acc a = {0};
  if (v) acc_leaf(&a, V(v));
  HloValueSummary r = {sizeof r, a.n, a.nan, a.inf, NAN, NAN, NAN};
  if (a.fin) { r.min = a.min; r.max = a.max; r.mean = a.sum / (double)a.fin; }
  r.struct_size = sz;
  memcpy(s, &r, sz);
}

static void format_leaf(HlcText *b, const HliValue *v, int *left, bool *more) {
  if (v->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < v->ntuple && !*more; i++) format_leaf(b, v->tuple[i], left, more);
    return;
  }
  if (!hlc_dtype_is_array(v->dtype) || !v->data) return;
  size_t es = hlc_dtype_size(v->dtype);
  for (int64_t i = 0; i < v->nelem; i++) {
    if (*left <= 0) { *more = true; return; }
    char t[128];
    hlc_format_element(v->dtype, (const char *)v->data + (size_t)i * es, t, sizeof t);
    if (b->n) hlc_text_puts(b, ", ");
    hlc_text_puts(b, t);
    (*left)--;
  }
}

size_t hlo_value_format_elements(const HloValue *v, int max_elements, char *buf, size_t cap) {
  HlcText b = {0};
  int left = max_elements;
  bool more = false;
  if (v) format_leaf(&b, V(v), &left, &more);
  if (more) hlc_text_puts(&b, b.n ? ", ..." : "...");
  return copy_out(&b, buf, cap);
}
