/* passes.c: hlorun --passes DIR [INPUT ...]: every stage XLA dumped for one
 * module with --xla_dump_hlo_pass_re=.* (file names as xla/service/dump.cc
 * writes them), run in step order on the same inputs; names the first pass
 * whose result leaves tolerance against the first stage that runs, then the
 * first divergence between it and the stage before (spec/cli.md, "Every
 * pass of a dump"). Stages that cannot run are listed and skipped. Stages
 * after SPMD partitioning run on their devices (devices_execute), with the
 * same global inputs; two stages on the same grid are compared instruction
 * by instruction device by device, a one-device stage and a partitioned one
 * by their results only.
 *
 * Exit 0: no pass diverges; 1: one does; 2: an error (no stage runs, a
 * directory of several modules without --passes-module, ...). */
#include "cli/cli.h"
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { BEFORE_OPT = 0, STEP = 1, AFTER_OPT = 2 };

typedef struct Stage {
  char *file;                /* the file's name in DIR */
  char *key;                 /* "module_NNNN.NAME" */
  char *name;                /* NAME */
  int kind;
  long step;                 /* STEP: SSSS */
  char *pass;                /* the pass whose result this is */
} Stage;

static char *dup_n(const char *s, size_t n) {
  char *d = xmalloc(n + 1);
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

/* dump.cc's names: module_NNNN.NAME.before_optimizations.txt,
 * module_NNNN.NAME.SSSS.PIPELINE.after_PASS.before_NEXT.txt and
 * module_NNNN.NAME.[BACKEND_]after_optimizations.txt. Other files (the
 * buffer assignment, memory reports, protos, graphs) are not stages. */
static bool parse_name(const char *fn, Stage *s) {
  size_t len = strlen(fn), k = 7;
  if (strncmp(fn, "module_", 7) != 0 || !has_suffix(fn, ".txt")) return false;
  while (k < len && fn[k] >= '0' && fn[k] <= '9') k++;
  if (k == 7 || fn[k] != '.') return false;
  const char *rest = fn + k + 1;
  size_t n = len - (k + 1) - 4;     /* without ".txt" */
  static const char bo[] = ".before_optimizations", ao[] = "after_optimizations";
  memset(s, 0, sizeof *s);
  if (n > sizeof bo - 1 && strncmp(rest + n - (sizeof bo - 1), bo, sizeof bo - 1) == 0) {
    s->kind = BEFORE_OPT;
    s->name = dup_n(rest, n - (sizeof bo - 1));
    s->pass = xprintf("before_optimizations");
  } else if (n > sizeof ao - 1 && strncmp(rest + n - (sizeof ao - 1), ao, sizeof ao - 1) == 0) {
    size_t dot = n - (sizeof ao - 1);
    while (dot > 0 && rest[dot - 1] != '.') dot--;
    if (dot < 2) return false;
    s->kind = AFTER_OPT;
    s->name = dup_n(rest, dot - 1);
    s->pass = dup_n(rest + dot, n - dot);
  } else {
    /* NAME.SSSS.PIPELINE.after_PASS.before_NEXT: the first ".DDDD." (four
     * or more digits) followed by after_ and before_ parts. */
    for (size_t i = 1; i < n; i++) {
      if (rest[i] != '.') continue;
      size_t j = i + 1;
      while (j < n && rest[j] >= '0' && rest[j] <= '9') j++;
      if (j - i - 1 < 4 || j >= n || rest[j] != '.') continue;
      char *tail = dup_n(rest + j + 1, n - j - 1);
      char *after = strstr(tail, ".after_"), *before = NULL;
      for (char *p = after ? strstr(after, ".before_") : NULL; p; p = strstr(p + 1, ".before_"))
        before = p;
      if (!after || !before) { free(tail); continue; }
      s->kind = STEP;
      s->step = strtol(rest + i + 1, NULL, 10);
      s->name = dup_n(rest, i);
      s->pass = dup_n(after + 7, (size_t)(before - after - 7));
      free(tail);
      break;
    }
    if (!s->name) return false;
  }
  s->file = xprintf("%s", fn);
  s->key = xprintf("%.*s.%s", (int)k, fn, s->name);
  return true;
}

static int stage_order(const void *a, const void *b) {
  const Stage *x = a, *y = b;
  if (x->kind != y->kind && (x->kind != STEP || y->kind != STEP)) return x->kind - y->kind;
  return x->step < y->step ? -1 : x->step > y->step;
}

static void stages_free(Stage *v, int n) {
  for (int i = 0; i < n; i++) {
    free(v[i].file);
    free(v[i].key);
    free(v[i].name);
    free(v[i].pass);
  }
  free(v);
}

/* The stages of DIR for the chosen module, in step order; -1 after saying
 * why (several modules and no choice, no module of that name, none). */
static int read_stages(const Opts *o, Stage **out) {
  DIR *dir = opendir(o->passes);
  if (!dir) {
    fprintf(stderr, "%s: error: --passes %s: cannot read the directory\n", prog, o->passes);
    return -1;
  }
  Stage *v = NULL;
  int n = 0, cap = 0;
  for (struct dirent *e; (e = readdir(dir));) {
    Stage s;
    if (!parse_name(e->d_name, &s)) continue;
    if (n == cap) {
      Stage *w = xmalloc((size_t)(cap = cap ? 2 * cap : 16) * sizeof *w);
      if (n) memcpy(w, v, (size_t)n * sizeof *w);
      free(v);
      v = w;
    }
    v[n++] = s;
  }
  closedir(dir);
  /* The modules: distinct keys. */
  const char *pick = NULL;
  int nkeys = 0;
  for (int i = 0; i < n; i++) {
    bool seen = false;
    for (int j = 0; j < i && !seen; j++) seen = strcmp(v[i].key, v[j].key) == 0;
    if (seen) continue;
    nkeys++;
    if (!o->passes_module || strcmp(o->passes_module, v[i].name) == 0 ||
        strcmp(o->passes_module, v[i].key) == 0) {
      if (pick && strcmp(pick, v[i].key) != 0) pick = "";   /* ambiguous */
      else pick = v[i].key;
    }
  }
  if (!pick || !*pick) {
    if (n == 0)
      fprintf(stderr, "%s: error: --passes %s: no XLA pass dumps (module_NNNN.NAME.*.txt) in the "
              "directory\n", prog, o->passes);
    else if (!pick && o->passes_module)
      fprintf(stderr, "%s: error: --passes-module %s: no such module in %s; it holds:\n", prog,
              o->passes_module, o->passes);
    else
      fprintf(stderr, "%s: error: --passes %s holds the dumps of %d modules: choose one with "
              "--passes-module NAME:\n", prog, o->passes, nkeys);
    for (int i = 0; i < n; i++) {
      bool seen = false;
      for (int j = 0; j < i && !seen; j++) seen = strcmp(v[i].key, v[j].key) == 0;
      if (!seen) fprintf(stderr, "  %s (NAME %s)\n", v[i].key, v[i].name);
    }
    stages_free(v, n);
    return -1;
  }
  int m = 0;
  char *key = xprintf("%s", pick);
  for (int i = 0; i < n; i++) {
    if (strcmp(v[i].key, key) == 0) { v[m++] = v[i]; continue; }
    free(v[i].file); free(v[i].key); free(v[i].name); free(v[i].pass);
  }
  free(key);
  qsort(v, (size_t)m, sizeof *v, stage_order);
  *out = v;
  return m;
}

/* One stage, run: its module, inputs and result; false (the diagnostics
 * said why, after "skipped: FILE"; *why says it in a word for --report)
 * when it cannot run. */
typedef struct Ran {
  HloModule *m;
  HloBuffer **in;            /* in[d * np + k]: parameter k of device d */
  int np;
  HloBuffer *res;
  int ndev;                  /* devices it ran on (1: as one device) */
  int R, P;                  /* its grid */
} Ran;

static void ran_free(Ran *r) {
  for (int i = 0; r->in && i < r->ndev * r->np; i++) hlo_buffer_free(r->in[i]);
  free(r->in);
  hlo_buffer_free(r->res);
  hlo_module_free(r->m);
  memset(r, 0, sizeof *r);
}

static bool run_stage(HloCtx *ctx, const Opts *o, const Stage *s, Ran *r, const char **why) {
  char *path = xprintf("%s/%s", o->passes, s->file);
  Opts so = *o;
  so.module = path;
  HloExecutable *exe = NULL;
  HloRunOptions ro = {.struct_size = sizeof ro, .random_constants = o->random, .seed = o->seed,
                      .max_iterations = o->max_iterations, .timeout = o->timeout,
                      .replicas = 1, .partitions = 1};
  memset(r, 0, sizeof *r);
  fflush(stdout);
  bool ok = false;
  if (hlo_module_load(ctx, path, &r->m) != HLO_OK || hlo_module_verify(ctx, r->m) != HLO_OK) {
    fprintf(stderr, "skipped: %s: the module does not load or verify:\n", s->file);
    *why = "does_not_verify";
    flush_diags(ctx);
    goto out;
  }
  /* After SPMD partitioning: on its devices, the same global inputs split
   * by the parameters' shardings, the result assembled (cli.md's
   * multi-device rules; a partitioned stage without collectives is told by
   * its inputs' global shapes, as a plain run tells it). Before it
   * (shardings only): as one device; with manual regions, on its devices. */
  int R, P, inferred;
  hlo_module_device_grid(r->m, &R, &P, &inferred);
  r->ndev = 1;
  r->R = r->P = 1;
  if ((int64_t)R * P > 1 && devices_wanted(ctx, r->m, &so, R, P)) {
    fprintf(stderr, "stage %s (%s) on %d devices\n", s->file, s->pass, R * P);
    int rc = devices_execute(ctx, r->m, &so, R, P, &r->res, &r->in);
    if (rc == EXIT_OK) {
      r->ndev = R * P;
      r->R = R;
      r->P = P;
      r->np = hlo_module_num_params(r->m);
      ok = true;
    } else {
      fprintf(stderr, "skipped: %s: it does not run on its %d devices%s\n", s->file, R * P,
              *hlo_ctx_diagnostics(ctx) ? ":" : "");
      *why = "does_not_run";
    }
    flush_diags(ctx);
    goto out;
  }
  r->np = hlo_module_num_params(r->m);
  r->in = xmalloc((size_t)(r->np ? r->np : 1) * sizeof *r->in);
  memset(r->in, 0, (size_t)(r->np ? r->np : 1) * sizeof *r->in);
  fprintf(stderr, "stage %s (%s)\n", s->file, s->pass);
  if (load_module_inputs(ctx, r->m, &so, r->in) != EXIT_OK) {
    fprintf(stderr, "skipped: %s: its parameters do not take the inputs\n", s->file);
    *why = "inputs_do_not_fit";
    goto out;
  }
  if (hlo_compile(ctx, r->m, &ro, &exe) != HLO_OK ||
      hlo_execute(exe, r->in, r->np, &r->res) != HLO_OK) {
    fprintf(stderr, "skipped: %s: it does not run:\n", s->file);
    *why = "does_not_run";
    flush_diags(ctx);
    goto out;
  }
  ok = true;
out:
  hlo_ctx_clear_diagnostics(ctx);
  hlo_executable_free(exe);
  free(path);
  if (!ok) ran_free(r);
  return ok;
}

/* The first divergence between a stage and the stage before it (prev_file),
 * into the report's divergent-pass object fp too. */
static void first_divergence(HloCtx *ctx, const Opts *o, const Ran *cur, const Ran *prev,
                             const char *prev_file, json_t *fp) {
  json_object_set_new(fp, "against", json_string(prev_file));
  json_object_set_new(fp, "first_divergence", json_null());
  if (cur->R != prev->R || cur->P != prev->P) {
    fprintf(stderr, "no instruction-by-instruction search between it and the stage before: it "
            "ran on %d device%s, the stage before on %d (a stage before SPMD partitioning runs "
            "as one device on the global values, so its instructions have no counterparts "
            "device by device); only their results are compared\n", cur->ndev,
            cur->ndev == 1 ? "" : "s", prev->ndev);
    return;
  }
  HloCompareOptions co;
  compare_options(o, &co);
  HloRunOptions ro = {.struct_size = sizeof ro, .random_constants = o->random, .seed = o->seed,
                      .max_iterations = o->max_iterations, .timeout = o->timeout,
                      .no_fusion = 1, .replicas = cur->R, .partitions = cur->P};
  /* Each stage's own inputs: the global values split by its shardings. */
  HloDivergenceOptions dopt = {.struct_size = sizeof dopt, .compare = &co, .run = &ro,
                               .memory_budget = o->ref_memory, .reference_inputs = prev->in};
  HloDivergence *d = NULL;
  if (hlo_compare_runs(ctx, cur->m, prev->m, cur->in, cur->np, &dopt, &d) != HLO_OK) {
    fprintf(stderr, "cannot compare it with the stage before, instruction by instruction:\n");
    flush_diags(ctx);
  } else {
    fprintf(stderr, "%s\n", d->line);
    json_object_set_new(fp, "first_divergence", report_divergence(d, prev_file));
    json_object_set_new(fp, "line", json_string(d->line));
  }
  hlo_ctx_clear_diagnostics(ctx);
  hlo_divergence_free(d);
}

int passes_run(HloCtx *ctx, const Opts *o) {
  Stage *v = NULL;
  int n = read_stages(o, &v);
  if (n < 0) return EXIT_ERROR;
  HloCompareOptions co;
  compare_options(o, &co);
  Ran base = {0}, prev = {0}, cur = {0};
  int rc = EXIT_ERROR, ran = 0, skipped = 0;
  int ibase = -1, iprev = -1;
  json_t *rep = report_new(o, "passes"), *stages = json_array();
  json_object_set_new(rep, "directory", json_string(o->passes));
  json_object_set_new(rep, "module", json_string(v[0].key));
  json_object_set_new(rep, "baseline", json_null());
  json_object_set_new(rep, "first_divergent_pass", json_null());
  fprintf(stderr, "passes: %s: %d stages of %s\n", o->passes, n, v[0].key);
  for (int i = 0; i < n; i++) {
    const char *why = "does_not_run";
    bool ok = run_stage(ctx, o, &v[i], &cur, &why);
    json_t *st = json_object();
    json_object_set_new(st, "file", json_string(v[i].file));
    json_object_set_new(st, "pass", json_string(v[i].pass));
    json_object_set_new(st, "ran", json_boolean(ok));
    json_object_set_new(st, "skipped", ok ? json_null() : json_string(why));
    json_object_set_new(st, "devices", json_integer(ok ? cur.ndev : 0));
    json_array_append_new(stages, st);
    if (!ok) { skipped++; continue; }
    ran++;
    if (ibase < 0) {
      ibase = i;
      if (i > 0) fprintf(stderr, "baseline: %s (the first stage, %s, cannot run)\n", v[i].file,
                         v[0].file);
      else fprintf(stderr, "baseline: %s\n", v[i].file);
      json_object_set_new(rep, "baseline", json_string(v[i].file));
      base = cur;
      memset(&cur, 0, sizeof cur);
      continue;
    }
    int64_t bad = 0;
    char *report = NULL;
    if (hlo_buffer_compare(ctx, cur.res, base.res, &co, &bad, &report) != HLO_OK) {
      rc = fail_with(ctx, "comparing the stages");
      goto out;
    }
    if (bad != 0) {
      fprintf(stderr, "first divergent pass: %s (%s)\n", v[i].pass, v[i].file);
      fprintf(stderr, "%s: %s", v[i].file, report ? report : "mismatch\n");
      hlo_free(report);
      json_t *fp = json_object();
      json_object_set_new(fp, "pass", json_string(v[i].pass));
      json_object_set_new(fp, "file", json_string(v[i].file));
      json_object_set_new(fp, "result_mismatches", json_integer(bad));
      first_divergence(ctx, o, &cur, prev.m ? &prev : &base, v[prev.m ? iprev : ibase].file, fp);
      json_object_set_new(rep, "first_divergent_pass", fp);
      rc = EXIT_MISMATCH;
      goto out;
    }
    hlo_free(report);
    ran_free(&prev);
    prev = cur;
    iprev = i;
    memset(&cur, 0, sizeof cur);
  }
  if (ran == 0) {
    fprintf(stderr, "%s: error: --passes %s: none of the %d stages can run\n", prog, o->passes, n);
    goto out;
  }
  fprintf(stderr, "first divergent pass: none (%d stage%s ran, %d skipped)\n", ran,
          ran == 1 ? "" : "s", skipped);
  rc = EXIT_OK;
out:
  json_object_set_new(rep, "stages", stages);
  json_object_set_new(rep, "ran", json_integer(ran));
  json_object_set_new(rep, "skipped", json_integer(skipped));
  rc = report_finish(o, rep, rc);
  ran_free(&cur);
  ran_free(&prev);
  ran_free(&base);
  stages_free(v, n);
  return rc;
}
