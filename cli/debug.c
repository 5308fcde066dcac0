/* debug.c: observing one run of the hlorun command: --trace[=FILTER],
 * --check-nan, --stats, --dump-custom-calls DIR, and the progress line on a
 * terminal. One observer (hlo_executable_set_observer) serves them all;
 * everything is printed to standard error, dumps go to files.
 *
 * Not here: the observation hook itself (the library), option parsing. */
#include "cli.h"
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct OpStat { const char *opcode; int64_t count; uint64_t self_ns; } OpStat;

/* What a call site's dump shares across its executions (a custom call in a
 * loop body runs many times; its module is built once). */
typedef struct Site {
  const HloInstruction *ins;
  char *text;                 /* module.hlo, or NULL if it could not be built */
  size_t len;
  char *explain;              /* --explain-custom-calls of that module, or NULL */
  bool tuple;                 /* the call's result is a tuple */
} Site;

struct Debug {
  const Opts *o;
  int ndev;                   /* devices of the run; lines name the device when > 1 */
  HloCtx *ctx;
  const HloModule *m;
  bool stopped;               /* --check-nan stopped the run */
  /* --stats */
  OpStat *ops;
  int nops, capops;
  uint64_t *child_ns;         /* per depth: time of finished callees */
  GraphTimes *times;          /* --graph with --stats: self time per instruction */
  bool graph_failed;          /* the picture could not be written */
  int nchild;
  /* Another observer of the run, called first (--extract). */
  HloObserver also;
  void *also_user;
  /* --dump-custom-calls */
  int ncalls;                 /* custom calls dumped so far */
  char *call_dir;             /* the dump directory of the running call */
  Site *sites;
  int nsites;
  bool dump_failed;           /* warned once */
  const HloInstruction *only; /* dump only this call site's run number only_run */
  int64_t only_run, only_seen;
  /* Progress: a thread redraws the line every 100 ms from what the
   * observer last saw at ENTRY level (nested instructions are not observed
   * for it, so a loop-heavy run is barely slowed down). */
  bool progress;
  pthread_t thread;
  bool thread_started;
  pthread_mutex_t lock;       /* guards the fields below and stderr while drawn */
  bool stop, drawn;
  double t_start;
  const char *cur;            /* the ENTRY instruction running */
  int cur_step, cur_steps;
};

/* ---- Value text ---- */

/* "SHAPE  min=.. max=.. mean=.. nan=N inf=N  {first elements}" (shape
 * left out when with_shape is false). */
static void describe(const HloValue *v, char *buf, size_t cap, bool with_shape) {
  char shape[256] = "", elems[512];
  if (with_shape) hlo_value_shape_text(v, shape, sizeof shape);
  if (hlo_value_type(v) == HLO_TYPE_TOKEN) { snprintf(buf, cap, "%s", with_shape ? "token[]" : ""); return; }
  HloValueSummary s = {sizeof s, 0, 0, 0, 0, 0, 0};
  hlo_value_summarize(v, &s);
  hlo_value_format_elements(v, 6, elems, sizeof elems);
  int64_t fin = s.num_elements - s.num_nan - s.num_inf;
  if (s.num_elements == 0)
    snprintf(buf, cap, "%s%s(no elements)", shape, with_shape ? "  " : "");
  else if (fin == 0)
    snprintf(buf, cap, "%s%smin=- max=- mean=- nan=%lld inf=%lld  {%s}", shape, with_shape ? "  " : "",
             (long long)s.num_nan, (long long)s.num_inf, elems);
  else
    snprintf(buf, cap, "%s%smin=%.6g max=%.6g mean=%.6g nan=%lld inf=%lld  {%s}", shape,
             with_shape ? "  " : "", s.min,
             s.max, s.mean, (long long)s.num_nan, (long long)s.num_inf, elems);
}

static int64_t nonfinite(const HloValue *v) {
  HloValueSummary s = {sizeof s, 0, 0, 0, 0, 0, 0};
  hlo_value_summarize(v, &s);
  return s.num_nan + s.num_inf;
}

/* ---- Progress line ---- */

/* Callers other than the drawing thread hold no lock; take it. */
static void progress_clear(Debug *d) {
  if (!d->progress) return;
  pthread_mutex_lock(&d->lock);
  if (d->drawn) { fputs("\r\033[K", stderr); fflush(stderr); d->drawn = false; }
  pthread_mutex_unlock(&d->lock);
}

static void *progress_thread(void *arg) {
  Debug *d = arg;
  for (;;) {
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&d->lock);
    if (d->stop) { pthread_mutex_unlock(&d->lock); return NULL; }
    double t = now_ms() - d->t_start;
    if (t >= 1000 && d->cur) {
      fprintf(stderr, "\r\033[K[hlorun %.1fs] %s (%d/%d)", t / 1000, d->cur, d->cur_step + 1,
              d->cur_steps);
      fflush(stderr);
      d->drawn = true;
    }
    pthread_mutex_unlock(&d->lock);
  }
}

static void progress_event(Debug *d, const HloEvent *e) {
  pthread_mutex_lock(&d->lock);
  d->cur = e->name;
  d->cur_step = e->step;
  d->cur_steps = e->num_steps;
  pthread_mutex_unlock(&d->lock);
}

static void progress_stop(Debug *d) {
  if (!d->thread_started) return;
  pthread_mutex_lock(&d->lock);
  d->stop = true;
  pthread_mutex_unlock(&d->lock);
  pthread_join(d->thread, NULL);
  d->thread_started = false;
  progress_clear(d);
}

/* ---- --trace ---- */

/* Computations an instruction applies element by element: tracing them would
 * print a line per element. */
static bool per_element_caller(const HloInstruction *c) {
  static const char *const ops[] = {"reduce", "reduce-window", "scatter", "select-and-scatter",
                                    "sort", "map", "all-reduce", "reduce-scatter",
                                    "all-reduce-start", NULL};
  const char *op = c ? hlo_instruction_opcode(c) : NULL;
  for (int i = 0; op && ops[i]; i++)
    if (strcmp(op, ops[i]) == 0) return true;
  return false;
}

/* FILTER: comma-separated patterns; a pattern with * ? or [ is a glob over
 * the whole name or opcode, anything else a substring of either. */
static bool trace_match(const char *filter, const HloEvent *e) {
  if (!filter || !*filter) return true;
  const char *p = filter;
  while (*p) {
    const char *c = strchr(p, ',');
    size_t n = c ? (size_t)(c - p) : strlen(p);
    char pat[256];
    if (n >= sizeof pat) n = sizeof pat - 1;
    memcpy(pat, p, n);
    pat[n] = 0;
    if (n) {
      if (strpbrk(pat, "*?[")) {
        if (fnmatch(pat, e->name, 0) == 0 || fnmatch(pat, e->opcode, 0) == 0) return true;
      } else if (strstr(e->name, pat) || strstr(e->opcode, pat)) {
        return true;
      }
    }
    p += n;
    if (*p == ',') p++;
  }
  return false;
}

static void trace_event(Debug *d, const HloEvent *e) {
  if (e->depth > 0 && per_element_caller(e->caller)) return;
  if (!trace_match(d->o->trace_filter, e)) return;
  char text[1024], shape[256];
  describe(e->result, text, sizeof text, false);
  hlo_value_shape_text(e->result, shape, sizeof shape);
  progress_clear(d);
  fprintf(stderr, "trace: ");
  if (d->ndev > 1) fprintf(stderr, "device %d: ", e->device);
  fprintf(stderr, "%*s", 2 * e->depth, "");
  if (e->depth > 0) fprintf(stderr, "%s/", e->computation);
  fprintf(stderr, "%s = %s %s (line %d)  %s\n", e->name, e->opcode, shape, e->line, text);
}

/* ---- --check-nan ---- */

static int check_nan_event(Debug *d, const HloEvent *e) {
  if (!strcmp(e->opcode, "parameter") || !strcmp(e->opcode, "constant")) return 0;
  HloValueSummary s = {sizeof s, 0, 0, 0, 0, 0, 0};
  hlo_value_summarize(e->result, &s);
  if (s.num_nan + s.num_inf == 0) return 0;
  for (int k = 0; k < e->num_operands; k++)
    if (nonfinite(e->operands[k])) return 0;
  progress_clear(d);
  d->stopped = true;
  char what[96];
  if (s.num_nan && s.num_inf)
    snprintf(what, sizeof what, "%lld NaN and %lld infinit%s", (long long)s.num_nan,
             (long long)s.num_inf, s.num_inf == 1 ? "y" : "ies");
  else if (s.num_nan)
    snprintf(what, sizeof what, "%lld NaN", (long long)s.num_nan);
  else
    snprintf(what, sizeof what, "%lld infinit%s", (long long)s.num_inf, s.num_inf == 1 ? "y" : "ies");
  char dev[32] = "";
  if (d->ndev > 1) snprintf(dev, sizeof dev, "device %d: ", e->device);
  fprintf(stderr, "%s:%d: check-nan: %s%s (%s) produced %s; none of its operands held a NaN or "
          "an infinity\n", d->o->module ? d->o->module : "<module>", e->line, dev, e->name,
          e->opcode, what);
  if (e->depth > 0)
    fprintf(stderr, "  in computation %s, run by %s (%s, line %d)\n", e->computation,
            hlo_instruction_name(e->caller), hlo_instruction_opcode(e->caller),
            hlo_instruction_line(e->caller));
  char text[1024];
  describe(e->result, text, sizeof text, true);
  fprintf(stderr, "  result:    %s\n", text);
  for (int k = 0; k < e->num_operands; k++) {
    describe(e->operands[k], text, sizeof text, true);
    const HloInstruction *op = e->fused ? NULL : hlo_instruction_operand(e->instruction, k);
    fprintf(stderr, "  %s %d: %s = %s\n", op ? "operand" : "input", k,
            op ? hlo_instruction_name(op) : "?", text);
  }
  return 1;
}

/* ---- --stats ---- */

static void stats_event(Debug *d, const HloEvent *e) {
  int dep = e->depth;
  if (dep + 2 > d->nchild) {
    int n = dep + 16;
    uint64_t *c = realloc(d->child_ns, (size_t)n * sizeof *c);
    if (!c) return;
    for (int i = d->nchild; i < n; i++) c[i] = 0;
    d->child_ns = c;
    d->nchild = n;
  }
  uint64_t inner = d->child_ns[dep + 1];
  uint64_t self = e->elapsed_ns > inner ? e->elapsed_ns - inner : 0;
  d->child_ns[dep + 1] = 0;
  d->child_ns[dep] += e->elapsed_ns;
  const char *key = e->fused == 2 ? "(dot chain)" : e->fused ? "(fused elementwise)" : e->opcode;
  int i = 0;
  while (i < d->nops && strcmp(d->ops[i].opcode, key) != 0) i++;
  if (i == d->nops) {
    if (d->nops == d->capops) {
      int cap = d->capops ? 2 * d->capops : 32;
      OpStat *o = realloc(d->ops, (size_t)cap * sizeof *o);
      if (!o) return;
      d->ops = o;
      d->capops = cap;
    }
    d->ops[d->nops++] = (OpStat){key, 0, 0};
  }
  d->ops[i].count++;
  d->ops[i].self_ns += self;
  graph_times_add(d->times, e->instruction, self, e->fused);
}

static int cmp_stat(const void *a, const void *b) {
  const OpStat *x = a, *y = b;
  if (x->self_ns != y->self_ns) return x->self_ns < y->self_ns ? 1 : -1;
  return strcmp(x->opcode, y->opcode);
}

static void stats_print(Debug *d, HloExecutable *exe, double wall_ms) {
  qsort(d->ops, (size_t)d->nops, sizeof *d->ops, cmp_stat);
  uint64_t total = 0;
  int64_t count = 0;
  for (int i = 0; i < d->nops; i++) { total += d->ops[i].self_ns; count += d->ops[i].count; }
  fprintf(stderr, "stats: %-24s %10s %12s %7s\n", "opcode", "count", "time_ms", "share");
  for (int i = 0; i < d->nops; i++)
    fprintf(stderr, "stats: %-24s %10lld %12.3f %6.1f%%\n", d->ops[i].opcode,
            (long long)d->ops[i].count, d->ops[i].self_ns / 1e6,
            total ? 100.0 * (double)d->ops[i].self_ns / (double)total : 0.0);
  fprintf(stderr, "stats: %-24s %10lld %12.3f %6.1f%%\n", "total", (long long)count, total / 1e6,
          total ? 100.0 : 0.0);
  uint64_t peak = hlo_executable_peak_memory(exe);
  fprintf(stderr, "stats: wall time %.3f ms; peak memory %.1f MiB (%llu bytes)\n", wall_ms,
          (double)peak / (1024.0 * 1024.0), (unsigned long long)peak);
}

/* ---- --dump-custom-calls ---- */

static int mkdirs(const char *path) {
  char *p = xprintf("%s", path);
  for (char *s = p + 1; *s; s++)
    if (*s == '/') {
      *s = 0;
      if (mkdir(p, 0777) != 0 && errno != EEXIST) { free(p); return -1; }
      *s = '/';
    }
  int rc = mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
  free(p);
  return rc;
}

static void dump_warn(Debug *d, const char *what) {
  progress_clear(d);
  fprintf(stderr, "%s: warning: --dump-custom-calls: %s\n", prog, what);
  const char *diag = hlo_ctx_diagnostics(d->ctx);
  if (diag && *diag) fputs(diag, stderr);
  hlo_ctx_clear_diagnostics(d->ctx);
}

static void save_value(Debug *d, const HloValue *v, const char *path) {
  HloBuffer *b = NULL;
  if (hlo_value_to_buffer(d->ctx, v, &b) != HLO_OK || hlo_buffer_save(d->ctx, b, path) != HLO_OK) {
    char *w = xprintf("cannot write %s", path);
    dump_warn(d, w);
    free(w);
  }
  hlo_buffer_free(b);
}

static void dump_before(Debug *d, const HloEvent *e) {
  free(d->call_dir);
  d->call_dir = xprintf("%s/call-%04d", d->o->dump_dir, d->ncalls++);
  if (mkdirs(d->call_dir) != 0) {
    char *w = xprintf("cannot create %s: %s", d->call_dir, strerror(errno));
    dump_warn(d, w);
    free(w);
    free(d->call_dir);
    d->call_dir = NULL;
    return;
  }
  /* The module around the call, and the text describing it. */
  Site *site = NULL;
  for (int i = 0; i < d->nsites && !site; i++)
    if (d->sites[i].ins == e->instruction) site = &d->sites[i];
  if (!site) {
    Site *ns = realloc(d->sites, (size_t)(d->nsites + 1) * sizeof *ns);
    if (!ns) { dump_warn(d, "out of memory"); return; }
    d->sites = ns;
    site = &d->sites[d->nsites++];
    *site = (Site){e->instruction, NULL, 0, NULL, false};
    HloModule *sub = NULL;
    if (hlo_module_extract(d->ctx, d->m, e->instruction, &sub) != HLO_OK ||
        hlo_module_print(d->ctx, sub, &site->text, &site->len) != HLO_OK) {
      site->text = NULL;
      dump_warn(d, "cannot build the module around the call");
    } else {
      site->tuple = hlo_module_is_tuple(sub, -1);
      if (hlo_module_explain_custom_calls(d->ctx, sub, &site->explain) != HLO_OK) site->explain = NULL;
      hlo_ctx_clear_diagnostics(d->ctx);
    }
    hlo_module_free(sub);
  }
  const char *text = site->text, *explain = site->explain;
  if (text) {
    char *p = xprintf("%s/module.hlo", d->call_dir);
    FILE *f = fopen(p, "w");
    if (!f || fwrite(text, 1, site->len, f) != site->len || fclose(f) != 0)
      dump_warn(d, "cannot write module.hlo");
    free(p);
  }
  int np = 0;
  char **names = xmalloc((size_t)(e->num_operands + 1) * sizeof *names);
  for (int k = 0; k < e->num_operands; k++) {
    names[k] = NULL;
    const HloValue *v = e->operands[k];
    if (hlo_value_type(v) == HLO_TYPE_TOKEN) continue;
    names[k] = xprintf("in%d.%s", np++, hlo_value_type(v) == HLO_TYPE_TUPLE ? "npz" : "npy");
    char *p = xprintf("%s/%s", d->call_dir, names[k]);
    save_value(d, v, p);
    free(p);
  }
  char *p = xprintf("%s/call.txt", d->call_dir);
  FILE *f = fopen(p, "w");
  if (f) {
    fprintf(f, "# Custom call %d of the run, dumped by hlorun --dump-custom-calls\n", d->ncalls - 1);
    fprintf(f, "instruction: %s (line %d, computation %s)\n", e->name, e->line, e->computation);
    fprintf(f, "target: %s\n", hlo_instruction_custom_call_target(e->instruction));
    if (text) {
      const char *r = strstr(text, "\n  ROOT %");
      if (r) {
        const char *end = strstr(r + 1, "\n}");
        fprintf(f, "hlo: %.*s\n", end ? (int)(end - r - 3) : (int)strlen(r + 3), r + 3);
      }
    }
    fprintf(f, "operands:\n");
    for (int k = 0; k < e->num_operands; k++) {
      char shape[256];
      hlo_value_shape_text(e->operands[k], shape, sizeof shape);
      fprintf(f, "  %d: %s %s -> %s\n", k,
              hlo_instruction_name(hlo_instruction_operand(e->instruction, k)), shape,
              names[k] ? names[k] : "(token: made by after-all)");
    }
    fprintf(f, "result: %s (written when the call returns)\n",
            site->tuple ? "expected.npz" : "expected.npy");
    if (explain) fprintf(f, "explain:\n%s", explain);
    fprintf(f, "replay: %s --replay %s\n", prog, d->call_dir);
    if (fclose(f) != 0) dump_warn(d, "cannot write call.txt");
  } else {
    dump_warn(d, "cannot write call.txt");
  }
  free(p);
  p = xprintf("%s/args", d->call_dir);
  f = fopen(p, "w");
  if (f) {
    fprintf(f, "# options --replay uses (bindings of the dumped run)\n");
    case_write_args(f, d->o);
    fclose(f);
  }
  free(p);
  for (int k = 0; k < e->num_operands; k++) free(names[k]);
  free(names);
}

static void dump_after(Debug *d, const HloEvent *e) {
  if (!d->call_dir) return;
  const char *ext = hlo_value_type(e->result) == HLO_TYPE_TUPLE ? "npz" : "npy";
  char *p = xprintf("%s/expected.%s", d->call_dir, ext);
  save_value(d, e->result, p);
  free(p);
  free(d->call_dir);
  d->call_dir = NULL;
}

/* ---- The observer ---- */

static int on_event(const HloEvent *e, void *user) {
  Debug *d = user;
  if (d->also && d->also(e, d->also_user)) return 1;
  bool cc = strcmp(e->opcode, "custom-call") == 0;
  if (e->phase == HLO_OBSERVE_BEFORE) {
    if (d->progress && e->depth == 0) progress_event(d, e);
    if (cc && d->o->dump_dir && (!d->only || (e->instruction == d->only && d->only_seen++ == d->only_run)))
      dump_before(d, e);
    return 0;
  }
  if (cc && d->o->dump_dir) dump_after(d, e);
  if (d->o->stats) stats_event(d, e);
  if (d->o->trace) trace_event(d, e);
  if (d->o->check_nan && check_nan_event(d, e)) return 1;
  return 0;
}

Debug *debug_new(const Opts *o, HloCtx *ctx, const HloModule *m, bool progress) {
  if (!o->trace && !o->check_nan && !o->stats && !o->dump_dir && !o->extract && !progress)
    return NULL;
  Debug *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->o = o;
  d->ctx = ctx;
  d->m = m;
  d->progress = progress;
  if (o->graph && o->stats && !(d->times = graph_times_new())) { free(d); return NULL; }
  d->t_start = now_ms();
  pthread_mutex_init(&d->lock, NULL);
  return d;
}

void debug_dump_only(Debug *d, const HloInstruction *site, int64_t run) {
  if (!d) return;
  d->only = site;
  d->only_run = run;
  d->only_seen = 0;
}

void debug_also(Debug *d, HloObserver fn, void *user) {
  if (d) { d->also = fn; d->also_user = user; }
}

void debug_set_devices(Debug *d, int ndev) {
  if (d) d->ndev = ndev;
}

HloStatus debug_attach(Debug *d, HloExecutable *exe) {
  if (!d) return HLO_OK;
  const Opts *o = d->o;
  bool all = o->trace || o->check_nan || o->stats || o->dump_dir || o->extract;
  /* Only --check-nan looks at operands after a step; without it the run
   * keeps its in-place updates, so --stats times the run as it is. */
  unsigned phases = (all ? HLO_OBSERVE_AFTER : 0) |
                    (o->dump_dir || d->progress ? HLO_OBSERVE_BEFORE : 0) |
                    (o->check_nan ? 0 : HLO_OBSERVE_NO_OPERANDS);
  HloStatus st = hlo_executable_set_observer(exe, on_event, d, phases);
  if (st == HLO_OK && !all) st = hlo_executable_set_observer_depth(exe, 0);
  if (st == HLO_OK && d->progress && !d->thread_started) {
    d->t_start = now_ms();
    d->thread_started = pthread_create(&d->thread, NULL, progress_thread, d) == 0;
  }
  return st;
}

void debug_after_run(Debug *d, HloExecutable *exe, double wall_ms) {
  if (!d) return;
  progress_stop(d);
  if (d->o->stats && !d->stopped) stats_print(d, exe, wall_ms);
  if (d->o->graph && d->times && !d->stopped)
    d->graph_failed = graph_write(d->ctx, d->m, d->o, d->times) != EXIT_OK;
}

bool debug_graph_failed(const Debug *d) { return d && d->graph_failed; }

bool debug_stopped(const Debug *d) { return d && d->stopped; }

void debug_free(Debug *d) {
  if (!d) return;
  progress_stop(d);
  pthread_mutex_destroy(&d->lock);
  free(d->ops);
  free(d->child_ns);
  graph_times_free(d->times);
  free(d->call_dir);
  for (int i = 0; i < d->nsites; i++) { hlo_free(d->sites[i].text); hlo_free(d->sites[i].explain); }
  free(d->sites);
  free(d);
}
