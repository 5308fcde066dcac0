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
            "collectives name devices of %d replica%s x %d partition%s, so it runs on %d devices "
            "(--replicas and --partitions choose)\n", prog, *R, *R == 1 ? "" : "s", *P,
            *P == 1 ? "" : "s", *R * *P);
  if (o->replicas) *R = o->replicas;
  if (o->partitions) *P = o->partitions;
}

bool devices_wanted(HloCtx *ctx, const HloModule *m, const Opts *o, int R, int P) {
  if ((int64_t)R * P <= 1) return false;
  if (hlo_module_is_device_dependent(m) || o->per_device_inputs || o->per_device_outputs ||
      o->output_sharding)
    return true;
  /* Not yet partitioned: one device, unless an input has a global shape. */
  for (int i = 0; i < o->ninputs && i < hlo_module_num_params(m); i++) {
    HloBuffer *b = NULL;
    HloStatus st = hlo_load_param(ctx, m, i, o->inputs[i], &b);
    hlo_buffer_free(b);
    hlo_ctx_clear_diagnostics(ctx);
    if (st == HLO_TYPE_MISMATCH) return true;
  }
  return false;
}

/* in[d * np + k]: parameter k of device d. */
static int load_inputs(HloCtx *ctx, const HloModule *m, const Opts *o, int R, int P, HloBuffer **in) {
  int np = hlo_module_num_params(m), ndev = R * P;
  if (o->ninputs > np) {
    fprintf(stderr, "%s: error: too many inputs: the module's ENTRY takes %d parameter%s, but %d "
            "input%s given\n", prog, np, np == 1 ? "" : "s", o->ninputs, o->ninputs == 1 ? " was" : "s were");
    return EXIT_ERROR;
  }
  if (o->ninputs < np && !o->random) {
    fprintf(stderr, "%s: error: the module's ENTRY takes %d parameter%s, but %d input%s given "
            "(pass one INPUT per parameter, or --random to fill the rest)\n", prog, np,
            np == 1 ? "" : "s", o->ninputs, o->ninputs == 1 ? " was" : "s were");
    return EXIT_ERROR;
  }
  HloBuffer **dev = calloc((size_t)ndev, sizeof *dev);
  if (!dev) { fprintf(stderr, "%s: out of memory\n", prog); return EXIT_ERROR; }
  int rc = EXIT_OK;
  for (int k = 0; k < np && rc == EXIT_OK; k++) {
    if (k < o->ninputs && o->per_device_inputs) {
      for (int d = 0; d < ndev && rc == EXIT_OK; d++) {
        char name[32];
        snprintf(name, sizeof name, "d%d", d);
        if (hlo_load_param_member(ctx, m, k, o->inputs[k], name, &in[d * np + k]) != HLO_OK)
          rc = fail_with(ctx, o->inputs[k]);
      }
      continue;
    }
    HloBuffer *g = NULL;
    HloStatus st = k < o->ninputs ? hlo_load_param_global(ctx, m, k, o->inputs[k], &g)
                                  : hlo_random_param_global(ctx, m, k, o->seed, &g);
    if (st == HLO_OK) st = hlo_shard_param(ctx, m, k, g, R, P, dev);
    hlo_buffer_free(g);
    if (st != HLO_OK) { rc = fail_with(ctx, k < o->ninputs ? o->inputs[k] : "random input"); break; }
    for (int d = 0; d < ndev; d++) in[d * np + k] = dev[d];
  }
  free(dev);
  return rc;
}

/* --per-device-outputs: every device's result, printed ("device N: ...")
 * or written as one .npz (dN, or dN_arr_K for a tuple's leaves), and
 * compared with a .npz of the same members. */
static int emit_per_device(HloCtx *ctx, const Opts *o, HloBuffer **res, int ndev) {
  int rc = EXIT_OK;
  if (o->output) {
    int cap = 0;
    for (int d = 0; d < ndev; d++) cap += hlo_buffer_type(res[d]) == HLO_TYPE_TUPLE ? hlo_buffer_tuple_size(res[d]) : 1;
    char **names = calloc((size_t)cap + 1, sizeof *names);
    HloBuffer **bufs = calloc((size_t)cap + 1, sizeof *bufs);
    bool *owned = calloc((size_t)cap + 1, sizeof *owned);
    int n = 0;
    for (int d = 0; d < ndev && names && bufs && owned; d++) {
      if (hlo_buffer_type(res[d]) != HLO_TYPE_TUPLE) {
        names[n] = xprintf("d%d", d);
        bufs[n++] = res[d];
        continue;
      }
      for (int k = 0; k < hlo_buffer_tuple_size(res[d]); k++) {
        names[n] = xprintf("d%d_arr_%d", d, k);
        owned[n] = true;
        if (hlo_buffer_tuple_element(ctx, res[d], k, &bufs[n++]) != HLO_OK) rc = EXIT_ERROR;
      }
    }
    if (!names || !bufs || !owned) { fprintf(stderr, "%s: out of memory\n", prog); rc = EXIT_ERROR; }
    if (rc == EXIT_OK && hlo_buffers_save_npz(ctx, (const char *const *)names, bufs, n, o->output) != HLO_OK)
      rc = fail_with(ctx, o->output);
    for (int i = 0; i < n; i++) {
      free(names[i]);
      if (owned[i]) hlo_buffer_free(bufs[i]);
    }
    free(names);
    free(bufs);
    free(owned);
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
  for (int d = 0; d < ndev; d++) {
    char name[32];
    snprintf(name, sizeof name, "d%d", d);
    HloBuffer *want = NULL;
    if (hlo_buffer_type(res[d]) == HLO_TYPE_TUPLE) {
      fprintf(stderr, "%s: error: --expect with --per-device-outputs compares array results only\n", prog);
      return EXIT_ERROR;
    }
    if (hlo_load_like_member(ctx, res[d], o->expect, name, &want) != HLO_OK) return fail_with(ctx, o->expect);
    HloCompareOptions co = {sizeof co, o->rtol, o->atol, 5};
    int64_t bad = 0;
    char *report = NULL;
    HloStatus st = hlo_buffer_compare(ctx, res[d], want, &co, &bad, &report);
    hlo_buffer_free(want);
    if (st != HLO_OK) return fail_with(ctx, "comparison failed");
    if (bad) {
      fprintf(stderr, "%s[%s]: %s", o->expect, name, report ? report : "mismatch\n");
      rc = EXIT_MISMATCH;
    }
    hlo_free(report);
  }
  return rc;
}

int devices_run(HloCtx *ctx, const HloModule *m, const Opts *o, int R, int P) {
  int np = hlo_module_num_params(m), ndev = R * P;
  HloBuffer **in = calloc((size_t)(ndev * (np ? np : 1)), sizeof *in);
  HloBuffer **res = calloc((size_t)ndev, sizeof *res);
  HloExecutable *exe = NULL;
  Debug *dbg = NULL;
  double *times = NULL;
  int rc = EXIT_ERROR;
  if (!in || !res) { fprintf(stderr, "%s: out of memory\n", prog); goto out; }
  if ((rc = load_inputs(ctx, m, o, R, P, in)) != EXIT_OK) goto out;
  rc = EXIT_ERROR;
  HloRunOptions ro = {.struct_size = sizeof ro, .random_constants = o->random, .seed = o->seed,
                      .max_iterations = o->max_iterations, .timeout = o->timeout,
                      .no_fusion = o->trace || o->check_nan, .replicas = R, .partitions = P};
  if (hlo_compile(ctx, m, &ro, &exe) != HLO_OK) { rc = fail_with(ctx, "cannot prepare the module"); goto out; }
  dbg = debug_new(o, ctx, m, false);
  debug_set_devices(dbg, ndev);
  if (debug_attach(dbg, exe) != HLO_OK) { rc = fail_with(ctx, "cannot observe the run"); goto out; }
  double t0 = now_ms();
  HloStatus st = hlo_execute_devices(exe, in, np, res);
  double wall = now_ms() - t0;
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
  flush_diags(ctx);
  if (hlo_process_rank() != 0) { rc = EXIT_OK; goto out; }   /* rank 0 reports */
  if (o->per_device_outputs) {
    rc = emit_per_device(ctx, o, res, ndev);
  } else {
    HloBuffer *global = NULL;
    if (hlo_assemble_result(ctx, m, o->output_sharding, res, R, P, &global) != HLO_OK) {
      rc = fail_with(ctx, "cannot assemble the result");
      goto out;
    }
    rc = emit_result(ctx, o, global);
    hlo_buffer_free(global);
  }
out:
  debug_free(dbg);
  free(times);
  for (int d = 0; res && d < ndev; d++) hlo_buffer_free(res[d]);
  free(res);
  hlo_executable_free(exe);
  for (int i = 0; in && i < ndev * np; i++) hlo_buffer_free(in[i]);
  free(in);
  return rc;
}
