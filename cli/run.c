/* run.c: running a module once on one device, as the hlorun command does
 * by default: the INPUTs (or a snapshot's recorded arguments, or --random
 * values) loaded into the ENTRY's parameters, the module compiled and
 * executed under the debugging observer (debug.c), --bench's repeated runs,
 * then the result printed, written or compared (result.c).
 *
 * Not here: option parsing and choosing what to do (hlorun.c), runs on
 * many devices (devices.c). */
#include "cli/cli.h"
#include <stdlib.h>
#include <unistd.h>

/* An HloUnoptimizedSnapshot's arguments: every parameter assembled from
 * its shards in the nparts partitions by its sharding (the partitions are
 * the devices 0..nparts-1 of its sharding's tiles), one shard at a time. */
static int load_partitions(HloCtx *ctx, const HloModule *m, const char *path, int nparts,
                           HloBuffer **in) {
  int np = hlo_module_num_params(m);
  for (int i = 0; i < np; i++)
    if (hlo_load_partitioned_param(ctx, m, i, path, nparts, &in[i]) != HLO_OK) {
      for (int k = 0; k < i; k++) { hlo_buffer_free(in[k]); in[k] = NULL; }
      return fail_with(ctx, path);
    }
  return EXIT_OK;
}

/* Read INPUTs (and --random fills) into in[0..nparams-1]. */
int load_module_inputs(HloCtx *ctx, const HloModule *m, const Opts *o, HloBuffer **in) {
  int np = hlo_module_num_params(m);
  int k = 0;
  /* A snapshot replays the arguments it recorded when no INPUT is given; a
   * run_hlo_module literals file as the one INPUT gives them all. */
  const char *recorded = o->ninputs == 0 && np > 0 && !o->random ? o->module
                         : o->ninputs == 1 && !has_suffix(o->inputs[0], ".npy") &&
                                   !has_suffix(o->inputs[0], ".npz") ? o->inputs[0] : NULL;
  if (recorded && hlo_file_is_snapshot(ctx, recorded)) {
    int n = np;
    if (hlo_load_snapshot_arguments(ctx, m, recorded, in, &n) != HLO_OK)
      return fail_with(ctx, recorded);
    return EXIT_OK;
  }
  int nparts = recorded ? hlo_file_partitions(ctx, recorded) : 0;
  if (nparts > 0) return load_partitions(ctx, m, recorded, nparts, in);
  for (int i = 0; i < o->ninputs; i++) {
    const char *path = o->inputs[i];
    if (k >= np) {
      fprintf(stderr, "%s: error: too many inputs: the module's ENTRY takes %d parameter%s, "
              "but %d input%s given\n", prog, np, np == 1 ? "" : "s", o->ninputs,
              o->ninputs == 1 ? " was" : "s were");
      return EXIT_ERROR;
    }
    if (has_suffix(path, ".npz") && !hlo_module_is_tuple(m, k)) {
      int n = np - k;
      if (hlo_load_params_npz(ctx, m, k, path, in + k, &n) != HLO_OK) return fail_with(ctx, path);
      k += n;
    } else {
      if (hlo_load_param(ctx, m, k, path, &in[k]) != HLO_OK) return fail_with(ctx, path);
      k++;
    }
  }
  if (k < np && !o->random) {
    fprintf(stderr, "%s: error: the module's ENTRY takes %d parameter%s, but %d input%s given "
            "(pass one INPUT per parameter, or --random to fill the rest)\n", prog, np,
            np == 1 ? "" : "s", k, k == 1 ? " was" : "s were");
    return EXIT_ERROR;
  }
  for (; k < np; k++)
    if (hlo_random_param(ctx, m, k, o->seed, &in[k]) != HLO_OK) return fail_with(ctx, "random input");
  return EXIT_OK;
}

int run_module(HloCtx *ctx, const HloModule *m, const Opts *o) {
  int np = hlo_module_num_params(m);
  HloBuffer **in = calloc((size_t)(np ? np : 1), sizeof *in);
  HloExecutable *exe = NULL;
  HloBuffer *res = NULL;
  double *times = NULL;
  Debug *dbg = NULL;
  Extract *ex = NULL;
  int rc = EXIT_ERROR;
  if (!in) { fprintf(stderr, "%s: out of memory\n", prog); return EXIT_ERROR; }
  if ((rc = load_module_inputs(ctx, m, o, in)) != EXIT_OK) goto out;
  if ((rc = extract_new(ctx, m, o, &ex)) != EXIT_OK) goto out;
  rc = EXIT_ERROR;
  /* Tracing and NaN checks must see every instruction's value. */
  HloRunOptions ro = {.struct_size = sizeof ro, .random_constants = o->random, .seed = o->seed,
                      .max_iterations = o->max_iterations, .timeout = o->timeout,
                      .no_fusion = o->trace || o->check_nan || o->extract,
                      /* One device (devices.c runs the others): a module not
                       * yet partitioned runs once, whatever its header says. */
                      .replicas = 1, .partitions = 1};
  if (hlo_compile(ctx, m, &ro, &exe) != HLO_OK) { rc = fail_with(ctx, "cannot prepare the module"); goto out; }
  /* The progress line costs a clock read per instruction: only on a
   * terminal, never while benchmarking or tracing. */
  bool progress = o->progress > 0 || (o->progress < 0 && isatty(2) && !o->bench && !o->trace);
  dbg = debug_new(o, ctx, m, progress);
  debug_also(dbg, ex ? extract_event : NULL, ex);
  if (debug_attach(dbg, exe) != HLO_OK) { rc = fail_with(ctx, "cannot observe the run"); goto out; }
  double t_run = now_ms();
  HloStatus st = hlo_execute(exe, in, np, &res);
  double wall = now_ms() - t_run;
  /* The case is written whatever happens after its values were seen. */
  if (ex && (rc = extract_finish(ex)) != EXIT_OK) { flush_diags(ctx); goto out; }
  if (st == HLO_STOPPED && debug_stopped(dbg)) {
    debug_after_run(dbg, exe, wall);
    hlo_ctx_clear_diagnostics(ctx);   /* "stopped by an observer": the report said it */
    rc = EXIT_ERROR;
    goto out;
  }
  if (st != HLO_OK) {
    debug_after_run(dbg, exe, wall);
    rc = fail_with(ctx, "the run failed");
    goto out;
  }
  if (o->bench > 0) {
    times = malloc((size_t)o->bench * sizeof *times);
    if (!times) { fprintf(stderr, "%s: out of memory\n", prog); goto out; }
    for (long r = 0; r < o->bench; r++) {
      HloBuffer *again = NULL;
      double t0 = now_ms();
      HloStatus st = hlo_execute(exe, in, np, &again);
      times[r] = now_ms() - t0;
      hlo_buffer_free(again);
      if (st != HLO_OK) { rc = fail_with(ctx, "the run failed"); goto out; }
    }
    print_bench(times, o->bench);
  }
  debug_after_run(dbg, exe, wall);
  if (debug_graph_failed(dbg)) goto out;
  if ((rc = snapshot_save(ctx, m, o, in, &res, 1)) != EXIT_OK) goto out;
  flush_diags(ctx);   /* warnings */
  rc = emit_result(ctx, o, res);
out:
  debug_free(dbg);
  extract_free(ex);
  free(times);
  hlo_buffer_free(res);
  hlo_executable_free(exe);
  for (int i = 0; i < np; i++) hlo_buffer_free(in[i]);
  free(in);
  return rc;
}
