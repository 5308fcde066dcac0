/* devices.c: running a module on many devices from the command line
 * (spec/cli.md, "Running on many devices").
 *
 * Inputs are global values split by each parameter's sharding (or, with
 * --per-device-inputs, one .npz member per device); the result is
 * assembled by the ROOT's sharding (or --output-sharding), or printed per
 * device. Under mpirun every rank reads the inputs and runs its block of
 * devices; rank 0 alone prints, writes and compares. */
#include "cli.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void devices_grid(const HloModule *m, const Opts *o, int *R, int *P) {
  int inferred;
  hlo_module_device_grid(m, R, P, &inferred);
  if (inferred && !o->replicas && !o->partitions && hlo_process_rank() == 0)
    fprintf(stderr, "%s: note: the module's header gives no replica_count or num_partitions; its "
            "collectives and manual regions name devices of %d replica%s x %d partition%s, so it runs on %d devices "
            "(--replicas and --partitions choose)\n", prog, *R, *R == 1 ? "" : "s", *P,
            *P == 1 ? "" : "s", *R * *P);
  if (o->replicas) *R = o->replicas;
  if (o->partitions) *P = o->partitions;
}

/* The INPUT feeding one parameter: a file, or member arr_K of a .npz that
 * holds several parameters; path NULL: none given (--random fills it). */
typedef struct Source {
  const char *path;
  char member[24];
} Source;

/* src[k] for every parameter k, by the rules of one device (load_inputs
 * in hlorun.c): INPUT i feeds the next parameter, except that a .npz
 * given for an array parameter feeds as many parameters as it holds
 * members (arr_0, arr_1, ...). Reports too many or too few inputs when
 * report is set. */
static int map_inputs(HloCtx *ctx, const HloModule *m, const Opts *o, Source *src, bool report) {
  int np = hlo_module_num_params(m), k = 0;
  for (int i = 0; i < o->ninputs; i++) {
    const char *path = o->inputs[i];
    if (k >= np) {
      if (report)
        fprintf(stderr, "%s: error: too many inputs: the module's ENTRY takes %d parameter%s, but "
                "%d input%s given\n", prog, np, np == 1 ? "" : "s", o->ninputs,
                o->ninputs == 1 ? " was" : "s were");
      return EXIT_ERROR;
    }
    int n = 1;
    if (has_suffix(path, ".npz") && !hlo_module_is_tuple(m, k)) {
      if (hlo_npz_count(ctx, path, &n) != HLO_OK) return report ? fail_with(ctx, path) : EXIT_ERROR;
      if (k + n > np) {
        if (report)
          fprintf(stderr, "%s: error: %s holds %d arrays but the module takes %d parameters (%d of "
                  "them already given)\n", prog, path, n, np, k);
        return EXIT_ERROR;
      }
      for (int j = 0; j < n; j++) {
        src[k + j].path = path;
        snprintf(src[k + j].member, sizeof src[k + j].member, "arr_%d", j);
      }
    } else {
      src[k].path = path;
    }
    k += n;
  }
  if (k < np && !o->random) {
    if (report)
      fprintf(stderr, "%s: error: the module's ENTRY takes %d parameter%s, but %d input%s given "
              "(pass one INPUT per parameter, or --random to fill the rest)\n", prog, np,
              np == 1 ? "" : "s", k, k == 1 ? " was" : "s were");
    return EXIT_ERROR;
  }
  return EXIT_OK;
}

bool devices_wanted(HloCtx *ctx, const HloModule *m, const Opts *o, int R, int P) {
  if ((int64_t)R * P <= 1) return false;
  if (hlo_module_is_device_dependent(m) || o->per_device_inputs || o->per_device_outputs ||
      o->output_sharding)
    return true;
  /* Not yet partitioned: one device, unless an input has a global shape.
   * Inputs that do not map (reported by the one-device run) say nothing. */
  int np = hlo_module_num_params(m);
  Source *src = calloc((size_t)(np ? np : 1), sizeof *src);
  bool global = false;
  if (!src || map_inputs(ctx, m, o, src, false) != EXIT_OK) {
    hlo_ctx_clear_diagnostics(ctx);
    free(src);
    return false;
  }
  for (int i = 0; i < np && !global; i++) {
    if (!src[i].path) continue;
    HloBuffer *b = NULL;
    HloStatus st = src[i].member[0]
                       ? hlo_load_param_member(ctx, m, i, src[i].path, src[i].member, &b)
                       : hlo_load_param(ctx, m, i, src[i].path, &b);
    hlo_buffer_free(b);
    hlo_ctx_clear_diagnostics(ctx);
    global = st == HLO_TYPE_MISMATCH;
  }
  free(src);
  return global;
}

int devices_load_inputs(HloCtx *ctx, const HloModule *m, const Opts *o, int R, int P, HloBuffer **in) {
  int np = hlo_module_num_params(m), ndev = R * P;
  HloBuffer **dev = calloc((size_t)ndev, sizeof *dev);
  Source *src = calloc((size_t)(np ? np : 1), sizeof *src);
  if (!dev || !src) { free(dev); free(src); fprintf(stderr, "%s: out of memory\n", prog); return EXIT_ERROR; }
  int rc = EXIT_OK;
  if (o->per_device_inputs) {   /* one .npz of dN members per parameter */
    if (o->ninputs > np || (o->ninputs < np && !o->random)) {
      fprintf(stderr, "%s: error: %sthe module's ENTRY takes %d parameter%s, but %d input%s given "
              "(--per-device-inputs takes one .npz per parameter; --random fills the rest)\n",
              prog, o->ninputs > np ? "too many inputs: " : "", np, np == 1 ? "" : "s",
              o->ninputs, o->ninputs == 1 ? " was" : "s were");
      rc = EXIT_ERROR;
    }
    for (int k = 0; k < o->ninputs && k < np; k++) src[k].path = o->inputs[k];
  } else {
    rc = map_inputs(ctx, m, o, src, true);
  }
  for (int k = 0; k < np && rc == EXIT_OK; k++) {
    if (src[k].path && o->per_device_inputs) {
      for (int d = 0; d < ndev && rc == EXIT_OK; d++) {
        char name[32];
        snprintf(name, sizeof name, "d%d", d);
        if (hlo_load_param_member(ctx, m, k, o->inputs[k], name, &in[d * np + k]) != HLO_OK)
          rc = fail_with(ctx, o->inputs[k]);
      }
      continue;
    }
    HloBuffer *g = NULL;
    HloStatus st = !src[k].path ? hlo_random_param_global(ctx, m, k, o->seed, &g)
                   : src[k].member[0]
                       ? hlo_load_param_global_member(ctx, m, k, src[k].path, src[k].member, &g)
                       : hlo_load_param_global(ctx, m, k, src[k].path, &g);
    if (st == HLO_OK) st = hlo_shard_param(ctx, m, k, g, R, P, dev);
    hlo_buffer_free(g);
    if (st != HLO_OK) { rc = fail_with(ctx, src[k].path ? src[k].path : "random input"); break; }
    for (int d = 0; d < ndev; d++) in[d * np + k] = dev[d];
  }
  free(dev);
  free(src);
  return rc;
}

/* The array leaves of b, depth first, as new handles (free each); -1 on error. */
static int leaves(HloCtx *ctx, const HloBuffer *b, HloBuffer ***out, int *n) {
  if (hlo_buffer_type(b) != HLO_TYPE_TUPLE) {
    *out = realloc(*out, (size_t)(*n + 1) * sizeof **out);
    if (!*out) return -1;
    HloBuffer *el = NULL;
    /* a handle of our own: the array again, as a one-element view */
    if (hlo_buffer_new_array(ctx, hlo_buffer_type(b), hlo_buffer_dims(b), hlo_buffer_rank(b),
                             hlo_buffer_data(b), &el) != HLO_OK) return -1;
    (*out)[(*n)++] = el;
    return 0;
  }
  for (int k = 0; k < hlo_buffer_tuple_size(b); k++) {
    HloBuffer *el = NULL;
    if (hlo_buffer_tuple_element(ctx, b, k, &el) != HLO_OK) return -1;
    int rc = leaves(ctx, el, out, n);
    hlo_buffer_free(el);
    if (rc) return -1;
  }
  return 0;
}

/* --per-device-outputs: every device's result, printed ("device N: ...")
 * or written as one .npz (dN, or dN_arr_K for a tuple's leaves), and
 * compared with a .npz of the same members. */
static int emit_per_device(HloCtx *ctx, const Opts *o, HloBuffer *const *res, int ndev) {
  int rc = EXIT_OK;
  if (o->output) {
    char **names = NULL;
    HloBuffer **bufs = NULL;
    int n = 0;
    for (int d = 0; d < ndev && rc == EXIT_OK; d++) {
      int first = n;
      if (leaves(ctx, res[d], &bufs, &n) != 0) { rc = fail_with(ctx, o->output); break; }
      names = realloc(names, (size_t)(n + 1) * sizeof *names);
      if (!names) { fprintf(stderr, "%s: out of memory\n", prog); rc = EXIT_ERROR; break; }
      bool tuple = hlo_buffer_type(res[d]) == HLO_TYPE_TUPLE;
      for (int k = first; k < n; k++)
        names[k] = tuple ? xprintf("d%d_arr_%d", d, k - first) : xprintf("d%d", d);
    }
    if (rc == EXIT_OK && hlo_buffers_save_npz(ctx, (const char *const *)names, bufs, n, o->output) != HLO_OK)
      rc = fail_with(ctx, o->output);
    for (int i = 0; i < n; i++) {
      if (names) free(names[i]);
      hlo_buffer_free(bufs[i]);
    }
    free(names);
    free(bufs);
    if (rc != EXIT_OK) return rc;
  } else if (!o->expect && o->bench == 0) {
    for (int d = 0; d < ndev; d++) {
      char *text;
      size_t len;
      if (hlo_buffer_to_literal(ctx, res[d], &text, &len) != HLO_OK) return fail_with(ctx, "printing");
      printf("device %d: %.*s\n", d, (int)len, text);
      hlo_free(text);
    }
    if (fflush(stdout) != 0) { fprintf(stderr, "%s: error: cannot write standard output\n", prog); return EXIT_ERROR; }
  }
  if (!o->expect) return EXIT_OK;
  /* Each device's array (dN), or each leaf of its tuple depth first
   * (dN_arr_K), as -o writes them. */
  for (int d = 0; d < ndev; d++) {
    HloBuffer **ls = NULL;
    int n = 0;
    if (leaves(ctx, res[d], &ls, &n) != 0) return fail_with(ctx, "--expect");
    bool tuple = hlo_buffer_type(res[d]) == HLO_TYPE_TUPLE;
    for (int k = 0; k < n && rc != EXIT_ERROR; k++) {
      char name[48];
      if (tuple) snprintf(name, sizeof name, "d%d_arr_%d", d, k);
      else snprintf(name, sizeof name, "d%d", d);
      HloBuffer *want = NULL;
      if (hlo_load_like_member(ctx, ls[k], o->expect, name, &want) != HLO_OK) {
        rc = fail_with(ctx, o->expect);
        break;
      }
      HloCompareOptions co;
      compare_options(o, &co);
      int64_t bad = 0;
      char *report = NULL;
      HloStatus st = hlo_buffer_compare(ctx, ls[k], want, &co, &bad, &report);
      hlo_buffer_free(want);
      if (st != HLO_OK) { rc = fail_with(ctx, "comparison failed"); break; }
      if (bad) {
        fprintf(stderr, "%s[%s]: %s", o->expect, name, report ? report : "mismatch\n");
        rc = EXIT_MISMATCH;
      }
      hlo_free(report);
    }
    for (int k = 0; k < n; k++) hlo_buffer_free(ls[k]);
    free(ls);
    if (rc == EXIT_ERROR) return rc;
  }
  return rc;
}

int devices_emit(HloCtx *ctx, const HloModule *m, const Opts *o, HloBuffer *const *res, int R,
                 int P) {
  if (o->per_device_outputs) return emit_per_device(ctx, o, res, R * P);
  HloBuffer *global = NULL;
  if (hlo_assemble_result(ctx, m, o->output_sharding, res, R, P, &global) != HLO_OK)
    return fail_with(ctx, "cannot assemble the result");
  int rc = emit_result(ctx, o, global);
  hlo_buffer_free(global);
  return rc;
}

int devices_run(HloCtx *ctx, const HloModule *m, const Opts *o, int R, int P) {
  int np = hlo_module_num_params(m), ndev = R * P;
  HloBuffer **in = calloc((size_t)(ndev * (np ? np : 1)), sizeof *in);
  HloBuffer **res = calloc((size_t)ndev, sizeof *res);
  HloExecutable *exe = NULL;
  Debug *dbg = NULL;
  Extract *ex = NULL;
  double *times = NULL;
  int rc = EXIT_ERROR;
  if (!in || !res) { fprintf(stderr, "%s: out of memory\n", prog); goto out; }
  if ((rc = devices_load_inputs(ctx, m, o, R, P, in)) != EXIT_OK) goto out;
  if ((rc = extract_new(ctx, m, o, &ex)) != EXIT_OK) goto out;
  rc = EXIT_ERROR;
  HloRunOptions ro = {.struct_size = sizeof ro, .random_constants = o->random, .seed = o->seed,
                      .max_iterations = o->max_iterations, .timeout = o->timeout,
                      .no_fusion = o->trace || o->check_nan || o->extract, .replicas = R,
                      .partitions = P};
  if (hlo_compile(ctx, m, &ro, &exe) != HLO_OK) { rc = fail_with(ctx, "cannot prepare the module"); goto out; }
  dbg = debug_new(o, ctx, m, false);
  debug_set_devices(dbg, ndev);
  debug_also(dbg, ex ? extract_event : NULL, ex);
  if (debug_attach(dbg, exe) != HLO_OK) { rc = fail_with(ctx, "cannot observe the run"); goto out; }
  double t0 = now_ms();
  HloStatus st = hlo_execute_devices(exe, in, np, res);
  double wall = now_ms() - t0;
  if (ex && (rc = extract_finish(ex)) != EXIT_OK) { flush_diags(ctx); goto out; }
  if (st == HLO_STOPPED && debug_stopped(dbg)) {
    debug_after_run(dbg, exe, wall);
    hlo_ctx_clear_diagnostics(ctx);
    goto out;
  }
  if (st != HLO_OK) {
    debug_after_run(dbg, exe, wall);
    rc = fail_with(ctx, "the run failed");
    goto out;
  }
  if (o->bench > 0) {
    times = xmalloc((size_t)o->bench * sizeof *times);
    HloBuffer **again = xmalloc((size_t)ndev * sizeof *again);
    for (long r = 0; r < o->bench; r++) {
      double t1 = now_ms();
      st = hlo_execute_devices(exe, in, np, again);
      times[r] = now_ms() - t1;
      for (int d = 0; d < ndev; d++) hlo_buffer_free(again[d]);
      if (st != HLO_OK) break;
    }
    free(again);
    if (st != HLO_OK) { rc = fail_with(ctx, "the run failed"); goto out; }
    if (hlo_process_rank() == 0) print_bench(times, o->bench);
  }
  debug_after_run(dbg, exe, wall);
  if ((rc = snapshot_save(ctx, m, o, in, res, ndev)) != EXIT_OK) goto out;
  flush_diags(ctx);
  if (hlo_process_rank() != 0) { rc = EXIT_OK; goto out; }   /* rank 0 reports */
  rc = devices_emit(ctx, m, o, res, R, P);
out:
  debug_free(dbg);
  extract_free(ex);
  free(times);
  for (int d = 0; res && d < ndev; d++) hlo_buffer_free(res[d]);
  free(res);
  hlo_executable_free(exe);
  for (int i = 0; in && i < ndev * np; i++) hlo_buffer_free(in[i]);
  free(in);
  return rc;
}

int devices_execute(HloCtx *ctx, const HloModule *m, const Opts *o, int R, int P,
                    HloBuffer **global, HloBuffer ***inputs) {
  int np = hlo_module_num_params(m), ndev = R * P;
  HloBuffer **in = calloc((size_t)(ndev * (np ? np : 1)), sizeof *in);
  HloBuffer **res = calloc((size_t)ndev, sizeof *res);
  HloExecutable *exe = NULL;
  int rc = EXIT_ERROR;
  *global = NULL;
  if (!in || !res) { fprintf(stderr, "%s: out of memory\n", prog); goto out; }
  if ((rc = devices_load_inputs(ctx, m, o, R, P, in)) != EXIT_OK) goto out;
  rc = EXIT_ERROR;
  HloRunOptions ro = {.struct_size = sizeof ro, .random_constants = o->random, .seed = o->seed,
                      .max_iterations = o->max_iterations, .timeout = o->timeout,
                      .replicas = R, .partitions = P};
  if (hlo_compile(ctx, m, &ro, &exe) == HLO_OK && hlo_execute_devices(exe, in, np, res) == HLO_OK &&
      hlo_assemble_result(ctx, m, o->output_sharding, res, R, P, global) == HLO_OK)
    rc = EXIT_OK;
  if (rc == EXIT_OK && inputs) {   /* handed over */
    *inputs = in;
    in = NULL;
  }
out:
  for (int d = 0; res && d < ndev; d++) hlo_buffer_free(res[d]);
  free(res);
  hlo_executable_free(exe);
  for (int i = 0; in && i < ndev * np; i++) hlo_buffer_free(in[i]);
  free(in);
  return rc;
}
