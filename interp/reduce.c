/* reduce.c: shrinking a module while a condition holds (hlo_module_reduce:
 * hlorun --reduce, hlorun.reduce).
 *
 * One run finds the focus (the instruction the condition is about and
 * which of its runs), a second keeps the real value of every instruction of
 * the focus's computation up to that run. A candidate is a set of kept
 * instructions of that computation: its module (hli_submodule_text, as
 * --extract cuts) has the focus as ROOT, the kept instructions of its
 * operand cone, constants, and every other value it reads as a parameter
 * fed by the value it had, or a constant holding it when it has at most
 * CONST_MAX elements (printed exactly: XLA's round-trip form, NaN payloads
 * and infinities included). The search is fixed (deterministic): the whole
 * cone, a tuple focus's outputs one at a time, the cone within 0, 1, 2, 4,
 * ... operand steps (big cuts first), ddmin over the kept instructions,
 * then the attributes that may not matter (metadata, frontend_attributes,
 * backend_config but a custom call's) left out, all at once, else one kind
 * at a time. Fusions are inlined first (inline.c; nested ones pass after
 * pass) when the inlined module still shows the condition.
 *
 * Not here: the conditions themselves (the caller's predicate), writing
 * the case directory. */
#include "interp/api.h"
#include "ir/print.h"
#include "parser/parser.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int comp_index(const HloModule *m, const HloComputation *c) {
  for (int32_t k = 0; k < m->ncomps; k++)
    if (m->comps[k] == c) return k;
  return -1;
}

static int count_instrs(const HloModule *m) {
  int n = 0;
  for (int32_t k = 0; k < m->ncomps; k++) n += m->comps[k]->ninstrs;
  return n;
}

static bool finite_value(const HloValue *v) {
  HloValueSummary s = {sizeof s, 0, 0, 0, 0, 0, 0};
  hlo_value_summarize(v, &s);
  return s.num_nan + s.num_inf == 0;
}

/* ---- Run 1: find the focus ---- */

typedef struct Find {
  const HloModule *m;
  HloReduceFocus mode;
  int64_t **runs;            /* per computation, per instruction: BEFORE events seen */
  const HloInstr *last;      /* the latest BEFORE (FAILURE: the one that failed) */
  int64_t last_run;
  const HloInstr *hit;       /* NAN: the first maker of a non-finite value */
  int64_t hit_run;
} Find;

static int find_event(const HloEvent *e, void *user) {
  Find *f = user;
  const HloInstr *ins = (const HloInstr *)e->instruction;
  int c = comp_index(f->m, ins->parent);
  if (c < 0 || e->device != 0) return 0;
  if (e->phase == HLO_OBSERVE_BEFORE) {
    f->last = ins;
    f->last_run = f->runs[c][ins->index]++;
    return 0;
  }
  /* --check-nan's test (cli/debug.c): a non-finite result of finite operands. */
  if (f->mode != HLO_REDUCE_FOCUS_NAN || ins->op == HLO_OP_PARAMETER || ins->op == HLO_OP_CONSTANT)
    return 0;
  if (finite_value(e->result)) return 0;
  for (int k = 0; k < e->num_operands; k++)
    if (!finite_value(e->operands[k])) return 0;
  f->hit = ins;
  f->hit_run = f->runs[c][ins->index] - 1;
  return 1;
}

static HloStatus run_observed(HloCtx *ctx, const HloModule *m, HloBuffer *const *in, int n,
                              double timeout, HloObserver fn, void *user) {
  HloRunOptions ro = {.struct_size = sizeof ro, .timeout = timeout, .no_fusion = 1,
                      .replicas = 1, .partitions = 1};
  HloExecutable *exe = NULL;
  HloStatus st = hlo_compile(ctx, m, &ro, &exe);
  if (st != HLO_OK) return st;
  st = hlo_executable_set_observer(exe, fn, user, HLO_OBSERVE_BEFORE | HLO_OBSERVE_AFTER);
  HloBuffer *res = NULL;
  if (st == HLO_OK) st = hlo_execute(exe, in, n, &res);
  hlo_buffer_free(res);
  hlo_executable_free(exe);
  return st;
}

static HloStatus find_focus(HloCtx *ctx, const HloModule *m, HloBuffer *const *in, int n,
                            const HloReduceOptions *o, const HloInstr **focus, int64_t *run) {
  Find f = {.m = m, .mode = o->focus};
  f.runs = calloc((size_t)m->ncomps + 1, sizeof *f.runs);
  bool ok = f.runs != NULL;
  for (int32_t k = 0; ok && k < m->ncomps; k++)
    ok = (f.runs[k] = calloc((size_t)m->comps[k]->ninstrs + 1, sizeof **f.runs)) != NULL;
  HloStatus st = ok ? run_observed(ctx, m, in, n, o->timeout, find_event, &f) : HLO_NOMEM;
  for (int32_t k = 0; f.runs && k < m->ncomps; k++) free(f.runs[k]);
  free(f.runs);
  if (!ok) return HLO_NOMEM;
  hlo_ctx_clear_diagnostics(ctx);
  if (o->focus == HLO_REDUCE_FOCUS_NAN && f.hit) {
    *focus = f.hit;
    *run = f.hit_run;
    return HLO_OK;
  }
  if (o->focus == HLO_REDUCE_FOCUS_FAILURE && st != HLO_OK && st != HLO_STOPPED && f.last) {
    *focus = f.last;
    *run = f.last_run;
    return HLO_OK;
  }
  return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "reduce: the run of %s %s: nothing to reduce",
                      m->filename ? m->filename : "the module",
                      o->focus == HLO_REDUCE_FOCUS_NAN
                          ? "makes no NaN or infinity out of finite operands"
                          : "does not fail");
}

/* ---- Run 2: the values of the focus's computation at its run ---- */

typedef struct Capture {
  HloCtx *ctx;
  const HloInstr *focus;
  int64_t run, seen;
  HloBuffer **vals;          /* per instruction of the focus's computation: latest value */
  bool reached, failed;
} Capture;

static int capture_event(const HloEvent *e, void *user) {
  Capture *k = user;
  const HloInstr *ins = (const HloInstr *)e->instruction;
  if (e->device != 0 || ins->parent != k->focus->parent) return 0;
  if (e->phase == HLO_OBSERVE_BEFORE) {
    if (ins != k->focus || k->seen++ != k->run) return 0;
    k->reached = true;
    return 1;   /* every operand has its value: the focus itself need not run */
  }
  HloBuffer *b = NULL;
  if (hlo_value_to_buffer(k->ctx, e->result, &b) != HLO_OK) { k->failed = true; return 1; }
  hlo_buffer_free(k->vals[ins->index]);
  k->vals[ins->index] = b;
  return 0;
}

/* ---- Small cut values as constants ---- */

/* A cut value with at most this many elements becomes a constant: the case
 * is one self-contained module, still short enough to read. */
enum { CONST_MAX = 16 };

/* The literal text of ins's value b (as inside constant(...)), or NULL when
 * it stays a parameter: a tuple, a token, a dynamic shape, more than
 * CONST_MAX elements. */
static char *literal_text(const HloInstr *ins, const HloBuffer *b) {
  const HloShape *sh = &ins->shape;
  if (!b || sh->dtype == HLO_TUPLE || sh->dtype == HLO_TOKEN || sh->dynamic ||
      hlo_buffer_tuple_size(b) > 0 || hlc_dtype_from_xla_code((int)hlo_buffer_type(b)) != sh->dtype)
    return NULL;
  int64_t n = hlp_shape_elements(sh);
  if (n > CONST_MAX || hlo_buffer_num_elements(b) != n) return NULL;
  HloLiteral l = {.shape = sh, .data = (void *)hlo_buffer_data(b), .nbytes = hlo_buffer_nbytes(b)};
  HlcText t = {0};
  hlp_print_literal(&t, &l);
  if (t.oom || !t.p) { hlc_text_free(&t); return NULL; }
  return t.p;
}

/* ---- Candidates ---- */

typedef struct Search {
  HloCtx *ctx;
  const HloModule *m;
  const HloComputation *c;
  const HloInstr *root;      /* the candidates' ROOT: the focus, or one of its operands */
  unsigned char *mask;       /* root a tuple: its operands kept (NULL: all) */
  HloBuffer **vals;
  char **lits;               /* per instruction: literal_text of its value, or NULL */
  unsigned drop;             /* attributes left out (HLP_DROP_*) */
  HloReducePredicate pred;
  void *user;
  const HloReduceOptions *o;
  int max, tried, best_size; /* best_size: instructions of best's module, 0 none yet */
  uint64_t *seen;            /* hashes of the role arrays tried */
  int nseen, capseen;
  int32_t *dist;
  const HloInstr **queue;
  unsigned char *best;       /* roles of the smallest candidate that held */
  unsigned best_drop;        /* and its attributes left out */
  bool stop;                 /* pred asked to stop, or out of memory */
} Search;

/* Roles of the cone of root through keep (NULL: everything) within depth
 * operand steps; the number of kept instructions. */
static int cone(Search *s, const unsigned char *keep, int depth, unsigned char *role) {
  const HloComputation *c = s->c;
  memset(role, HLI_SUB_NONE, (size_t)c->ninstrs);
  int32_t head = 0, tail = 0;
  int kept = 1;
  role[s->root->index] = HLI_SUB_KEEP;
  s->dist[s->root->index] = 0;
  s->queue[tail++] = s->root;
  while (head < tail) {
    const HloInstr *u = s->queue[head++];
    for (int32_t k = 0; k < u->nops; k++) {
      const HloInstr *o = u->ops[k];
      if (role[o->index] != HLI_SUB_NONE || (u == s->root && s->mask && !s->mask[k])) continue;
      bool in = o->op == HLO_OP_CONSTANT ||
                (o->op != HLO_OP_PARAMETER && (!keep || keep[o->index] == HLI_SUB_KEEP) &&
                 s->dist[u->index] < depth);
      role[o->index] = in ? HLI_SUB_KEEP : HLI_SUB_CUT;
      if (!in || o->op == HLO_OP_CONSTANT) continue;
      kept++;
      s->dist[o->index] = s->dist[u->index] + 1;
      s->queue[tail++] = o;
    }
  }
  return kept;
}

static uint64_t hash_roles(const Search *s, const unsigned char *role) {
  uint64_t h = (1469598103934665603ull ^ s->drop) * 1099511628211ull;
  h = (h ^ (uint64_t)s->root->index) * 1099511628211ull;
  for (int32_t i = 0; i < s->c->ninstrs; i++) h = (h ^ role[i]) * 1099511628211ull;
  for (int32_t k = 0; s->mask && k < s->root->nops; k++) h = (h ^ s->mask[k]) * 1099511628211ull;
  return h;
}

/* Build the candidate of role: its module and inputs (borrowed from vals).
 * NULL module when it cannot be built (a value that never ran). */
static HloStatus build(Search *s, const unsigned char *role, unsigned drop, HloModule **mod,
                       HloBuffer ***in, int *n) {
  *mod = NULL;
  *in = NULL;
  *n = 0;
  const HloInstr **cut = NULL;
  int ncut = 0;
  const char *why;
  HliSubOpts so = {.lit = (const char *const *)s->lits, .drop = drop, .root_ops = s->mask};
  char *text = hli_submodule_text(s->m, s->root, role, &so, &cut, &ncut, &why);
  if (!text) return hli_api_fail(s->ctx, HLO_ERROR, "reduce: cannot cut the module: %s", why);
  HloBuffer **v = malloc(((size_t)ncut + 1) * sizeof *v);
  bool ok = v != NULL;
  for (int k = 0; ok && k < ncut; k++) ok = (v[k] = s->vals[cut[k]->index]) != NULL;
  free(cut);
  char fname[300];
  snprintf(fname, sizeof fname, "%s (reduced)", s->m->filename ? s->m->filename : "<input>");
  HloStatus st = ok ? hlo_module_parse(s->ctx, text, strlen(text), fname, mod) : HLO_OK;
  free(text);
  if (!ok || st != HLO_OK) {
    free(v);
    hlo_ctx_clear_diagnostics(s->ctx);
    return HLO_OK;   /* not a candidate */
  }
  *in = v;
  *n = ncut;
  return HLO_OK;
}

/* Run the candidate of role once: 1 it holds (it becomes the best), 0 not
 * (or not tried: seen before, over the budget, not buildable). */
static int try_roles(Search *s, const unsigned char *role) {
  int32_t n = s->c->ninstrs;
  if (s->stop || s->tried >= s->max) return 0;
  uint64_t h = hash_roles(s, role);
  for (int i = 0; i < s->nseen; i++)
    if (s->seen[i] == h) return 0;
  if (s->nseen == s->capseen) {
    int cap = s->capseen ? 2 * s->capseen : 64;
    uint64_t *p = realloc(s->seen, (size_t)cap * sizeof *p);
    if (!p) { s->stop = true; return 0; }
    s->seen = p;
    s->capseen = cap;
  }
  s->seen[s->nseen++] = h;
  HloModule *mod;
  HloBuffer **in;
  int nin;
  if (build(s, role, s->drop, &mod, &in, &nin) != HLO_OK) { s->stop = true; return 0; }
  if (!mod) return 0;
  int size = count_instrs(mod);
  int r = s->pred(mod, in, nin, s->user);
  s->tried++;
  hlo_module_free(mod);
  free(in);
  if (r < 0) s->stop = true;
  /* Every candidate is a cut of the current one: one that holds replaces it. */
  if (r > 0) {
    if (role != s->best) memcpy(s->best, role, (size_t)n);
    s->best_drop = s->drop;
    s->best_size = size;
  }
  if (s->o->progress) s->o->progress(s->user, s->tried, s->best_size);
  return r > 0;
}

/* ddmin over the kept instructions of s->best (root and constants aside):
 * remove chunks, halving them down to single instructions. */
static void ddmin(Search *s, unsigned char *role, int32_t *list) {
  int32_t n = s->c->ninstrs;
  unsigned char *keep = malloc((size_t)n + 1);
  if (!keep) { s->stop = true; return; }
  int parts = 2;
  for (;;) {
    int32_t len = 0;
    for (int32_t i = 0; i < n; i++)
      if (s->best[i] == HLI_SUB_KEEP && s->c->instrs[i] != s->root &&
          s->c->instrs[i]->op != HLO_OP_CONSTANT)
        list[len++] = i;
    if (len == 0 || s->stop || s->tried >= s->max) break;
    if (parts > len) parts = len;
    int32_t chunk = (len + parts - 1) / parts;
    bool progress = false;
    for (int32_t b = 0; b < len && !progress; b += chunk) {
      memcpy(keep, s->best, (size_t)n);
      for (int32_t i = b; i < b + chunk && i < len; i++) keep[list[i]] = HLI_SUB_NONE;
      cone(s, keep, INT_MAX, role);
      progress = try_roles(s, role);
    }
    if (progress) { parts = parts > 2 ? parts - 1 : 2; continue; }
    if (parts >= len) break;   /* single instructions tried: done */
    parts = 2 * parts < len ? 2 * parts : len;
  }
  free(keep);
}

/* ROOT a tuple: its outputs the condition does not need go, one at a time
 * in order (at least one stays); one left, the ROOT becomes that value
 * itself when the condition still holds. */
static void drop_outputs(Search *s, unsigned char *role) {
  const HloInstr *t = s->root;
  if (t->op != HLO_OP_TUPLE || t->nops == 0 || s->stop) return;
  if (!(s->mask = malloc((size_t)t->nops))) { s->stop = true; return; }
  memset(s->mask, 1, (size_t)t->nops);
  int32_t left = t->nops;
  for (int32_t k = 0; k < t->nops && left > 1; k++) {
    s->mask[k] = 0;
    cone(s, s->best, INT_MAX, role);
    if (try_roles(s, role)) left--;
    else s->mask[k] = 1;
  }
  int32_t k = 0;
  while (k < t->nops && !s->mask[k]) k++;
  if (left != 1 || t->ops[k]->op == HLO_OP_PARAMETER) return;
  unsigned char *mask = s->mask;
  s->mask = NULL;
  s->root = t->ops[k];
  cone(s, s->best, INT_MAX, role);
  if (try_roles(s, role)) {
    free(mask);
  } else {
    s->root = t;
    s->mask = mask;
  }
}

static HloStatus search(Search *s) {
  int32_t n = s->c->ninstrs;
  unsigned char *role = malloc((size_t)n + 1);
  int32_t *list = malloc(((size_t)n + 1) * sizeof *list);
  s->dist = malloc(((size_t)n + 1) * sizeof *s->dist);
  s->queue = malloc(((size_t)n + 1) * sizeof *s->queue);
  s->best = calloc((size_t)n + 1, 1);
  HloStatus st = HLO_NOMEM;
  if (!role || !list || !s->dist || !s->queue || !s->best) goto out;
  cone(s, NULL, INT_MAX, role);
  st = HLO_OK;
  if (!try_roles(s, role)) goto out;   /* the whole cone does not hold */
  drop_outputs(s, role);
  cone(s, s->best, INT_MAX, role);
  int maxd = 0;
  for (int32_t i = 0; i < n; i++)
    if (role[i] == HLI_SUB_KEEP && s->c->instrs[i]->op != HLO_OP_CONSTANT && s->dist[i] > maxd)
      maxd = s->dist[i];   /* constants are kept without a distance */
  for (int d = 0; d < maxd; d = d ? 2 * d : 1) {
    cone(s, NULL, d, role);
    if (try_roles(s, role)) break;
  }
  ddmin(s, role, list);
  /* Attributes: all three kinds at once, else one at a time. */
  static const unsigned drops[] = {HLP_DROP_METADATA | HLP_DROP_FRONTEND | HLP_DROP_BACKEND,
                                   HLP_DROP_METADATA, HLP_DROP_FRONTEND, HLP_DROP_BACKEND};
  for (size_t k = 0; k < sizeof drops / sizeof *drops && s->best_drop != drops[0]; k++) {
    s->drop = s->best_drop | drops[k];
    if (s->drop != s->best_drop) try_roles(s, s->best);
  }
out:
  free(role);
  free(list);
  free(s->dist);
  free(s->queue);
  s->dist = NULL;
  s->queue = NULL;
  return st;
}

/* ---- The whole reduction ---- */

static void free_vals(HloBuffer **v, int32_t n) {
  for (int32_t i = 0; v && i < n; i++) hlo_buffer_free(v[i]);
  free(v);
}

static void free_lits(char **l, int32_t n) {
  for (int32_t i = 0; l && i < n; i++) free(l[i]);
  free(l);
}

/* Search the computation of focus at its run-th run; s->best_size 0 when
 * not even its whole cone holds. */
static HloStatus reduce_at(Search *s, HloBuffer *const *in, int n, const HloInstr *focus,
                           int64_t run) {
  s->c = focus->parent;
  s->root = focus;
  free(s->mask);
  s->mask = NULL;
  s->best_size = 0;
  Capture k = {.ctx = s->ctx, .focus = focus, .run = run};
  k.vals = calloc((size_t)s->c->ninstrs + 1, sizeof *k.vals);
  if (!k.vals) return HLO_NOMEM;
  run_observed(s->ctx, s->m, in, n, s->o->timeout, capture_event, &k);
  hlo_ctx_clear_diagnostics(s->ctx);
  /* A run that fails before ENTRY's ROOT still gave the values before the
   * failure (candidates that need others cannot be built); a focus inside
   * must be reached, or the values are not those of its run. */
  if (k.failed || (!k.reached && focus != s->m->entry->root)) {
    free_vals(k.vals, s->c->ninstrs);
    return k.failed ? HLO_NOMEM : HLO_OK;
  }
  s->vals = k.vals;
  s->lits = calloc((size_t)s->c->ninstrs + 1, sizeof *s->lits);
  if (!s->lits) return HLO_NOMEM;
  for (int32_t i = 0; i < s->c->ninstrs; i++) s->lits[i] = literal_text(s->c->instrs[i], k.vals[i]);
  free(s->best);
  s->best = NULL;
  s->drop = s->best_drop = 0;
  return search(s);
}

/* m with its fusions inlined, when that still shows the condition (one
 * candidate more); NULL otherwise (m has none, or it does not hold). A pass
 * inlines the fusions outside fused computations; a nested fusion comes
 * out into its caller and is inlined by the next pass (at most
 * INLINE_PASSES: fusions nest a few deep). */
enum { INLINE_PASSES = 16 };

static HloModule *inlined_module(Search *s, HloBuffer *const *in, int n) {
  HloModule *mod = NULL;
  const HloModule *from = s->m;
  char fname[300];
  snprintf(fname, sizeof fname, "%s (fusions inlined)", s->m->filename ? s->m->filename : "<input>");
  for (int pass = 0; pass < INLINE_PASSES; pass++) {
    bool changed;
    char *text = hli_inline_fusions_text(from, &changed);
    if (!text) break;   /* none left (or out of memory: the last pass stands) */
    HloModule *next = NULL;
    if (hlo_module_parse(s->ctx, text, strlen(text), fname, &next) != HLO_OK) {
      hlo_ctx_clear_diagnostics(s->ctx);
      next = NULL;
    }
    free(text);
    if (!next) break;
    hlo_module_free(mod);
    from = mod = next;
  }
  int r = mod ? s->pred(mod, in, n, s->user) : 0;
  s->tried += mod != NULL;
  if (r < 0) s->stop = true;
  if (r <= 0) {
    hlo_module_free(mod);
    return NULL;
  }
  return mod;
}

HloStatus hlo_module_reduce(HloCtx *ctx, const HloModule *m, HloBuffer *const *inputs, int n,
                            const HloReduceOptions *opt, HloReducePredicate pred, void *user,
                            HloReduceResult *out) {
  if (!ctx || !m || !opt || !pred || !out || (n > 0 && !inputs)) return HLO_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  Search s = {.ctx = ctx, .m = m, .pred = pred, .user = user, .o = opt,
              .max = opt->max_candidates > 0 ? opt->max_candidates : 300};
  out->before = count_instrs(m);
  /* The original, twice: the condition must hold, and hold again. */
  int r1 = pred(m, inputs, n, user), r2 = r1 > 0 ? pred(m, inputs, n, user) : r1;
  s.tried = r1 > 0 ? 2 : 1;
  out->tried = s.tried;
  if (r1 < 0 || r2 < 0) return hli_api_fail(ctx, HLO_ERROR, "reduce: the condition failed to run");
  if (r1 == 0)
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "reduce: the condition does not hold on %s: "
                        "nothing to reduce", m->filename ? m->filename : "the module");
  if (r2 == 0)
    return hli_api_fail(ctx, HLO_ERROR, "reduce: the condition held on %s once and not when run "
                        "again: its outcome is not reproducible, nothing reduced",
                        m->filename ? m->filename : "the module");
  HloModule *flat = inlined_module(&s, inputs, n);
  if (s.stop) return hli_api_fail(ctx, HLO_ERROR, "reduce: the condition failed to run");
  /* A named focus renamed by the inlining (inside a fusion, its name not
   * unique): the search stays on the module as it is. */
  if (flat && opt->focus == HLO_REDUCE_FOCUS_NAMED && opt->focus_name &&
      !hlo_module_find_instruction(flat, opt->focus_name)) {
    hlo_module_free(flat);
    flat = NULL;
  }
  if (flat) m = s.m = flat;
  const HloInstr *focus = m->entry->root;
  int64_t run = 0;
  HloStatus st = HLO_OK;
  if (opt->focus == HLO_REDUCE_FOCUS_NAN || opt->focus == HLO_REDUCE_FOCUS_FAILURE) {
    st = find_focus(ctx, m, inputs, n, opt, &focus, &run);
  } else if (opt->focus == HLO_REDUCE_FOCUS_NAMED) {
    focus = opt->focus_name
                ? (const HloInstr *)hlo_module_find_instruction(m, opt->focus_name) : NULL;
    run = opt->focus_run;
    if (!focus)
      st = hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "reduce: no instruction named '%s'",
                        opt->focus_name ? opt->focus_name : "");
  }
  if (st != HLO_OK) {
    hlo_module_free(flat);
    return st;
  }
  if (focus->op == HLO_OP_PARAMETER || focus->op == HLO_OP_CONSTANT) focus = m->entry->root;
  st = reduce_at(&s, inputs, n, focus, run);
  /* The focus's cone alone loses the condition: the whole ENTRY, cut down. */
  if (st == HLO_OK && s.best_size == 0 && !s.stop && focus != m->entry->root) {
    free_vals(s.vals, s.c->ninstrs);
    free_lits(s.lits, s.c->ninstrs);
    s.vals = NULL;
    s.lits = NULL;
    focus = m->entry->root;
    run = 0;
    st = reduce_at(&s, inputs, n, focus, run);
  }
  snprintf(out->focus, sizeof out->focus, "%s", focus->name);
  out->focus_run = run;
  if (st == HLO_OK && s.stop)
    st = hli_api_fail(ctx, HLO_ERROR, "reduce: stopped (the condition failed to run)");
  if (st == HLO_OK && s.best_size == 0)
    st = hli_api_fail(ctx, HLO_ERROR, "reduce: no cut of the module around %s keeps the condition",
                      focus->name);
  if (st == HLO_OK) {
    /* The smallest candidate, built again and checked once more. */
    HloBuffer **in = NULL;
    int nin = 0;
    st = build(&s, s.best, s.best_drop, &out->module, &in, &nin);
    if (st == HLO_OK && !out->module) st = hli_api_fail(ctx, HLO_ERROR, "reduce: cannot rebuild");
    int r = st == HLO_OK ? pred(out->module, in, nin, user) : 0;
    s.tried += st == HLO_OK;
    if (st == HLO_OK && r <= 0) {
      st = hli_api_fail(ctx, HLO_ERROR, "reduce: the smallest module found (%d instructions) "
                        "does not reproduce the condition when run again; nothing written",
                        s.best_size);
    }
    if (st == HLO_OK) {
      /* Its inputs move from the kept values into the result. */
      out->inputs = calloc((size_t)nin + 1, sizeof *out->inputs);
      if (!out->inputs) st = HLO_NOMEM;
      for (int i = 0; st == HLO_OK && i < nin; i++)
        for (int32_t j = 0; j < s.c->ninstrs; j++)
          if (s.vals[j] && s.vals[j] == in[i]) { out->inputs[i] = in[i]; s.vals[j] = NULL; }
      out->ninputs = nin;
      out->after = count_instrs(out->module);
    }
    free(in);
  }
  out->tried = s.tried;
  free_vals(s.vals, s.c ? s.c->ninstrs : 0);
  free_lits(s.lits, s.c ? s.c->ninstrs : 0);
  free(s.best);
  free(s.mask);
  free(s.seen);
  hlo_module_free(flat);
  if (st != HLO_OK) {
    hlo_module_free(out->module);
    for (int i = 0; out->inputs && i < out->ninputs; i++) hlo_buffer_free(out->inputs[i]);
    free(out->inputs);
    out->module = NULL;
    out->inputs = NULL;
    out->ninputs = 0;
  }
  return st;
}

void hlo_reduce_result_free(HloReduceResult *r) {
  if (!r) return;
  hlo_module_free(r->module);
  for (int i = 0; r->inputs && i < r->ninputs; i++) hlo_buffer_free(r->inputs[i]);
  free(r->inputs);
  r->module = NULL;
  r->inputs = NULL;
  r->ninputs = 0;
}
