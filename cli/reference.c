/* reference.c: hlorun --reference REF: run MODULE and REF on the same
 * inputs, compare the results as --expect does, and name the first
 * instruction whose value differs (spec/cli.md, "Finding what goes
 * wrong"; the engine is the library's hlo_compare_runs). With
 * --reference-precision f64 the reference is MODULE carried in f64. On many
 * devices both run on one grid and each device is compared with itself
 * (doc/divergence.md). Also contexts
 * like main's (context_like, load_plugin), which --determinism uses too.
 *
 * Reports go to standard error; the module's result to standard output
 * (or -o) as in a plain run. Exit 0 when the results agree, 1 when they
 * differ (or --expect does), 2 on an error (which side failed is said). */
#include "cli/cli.h"
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

HloStatus load_plugin(HloCtx *ctx, const char *spec) {
  char *lib = xprintf("%s", spec);
  char *colon = strrchr(lib, ':');
  const char *fn = NULL;
  if (colon && colon[1] && !strchr(colon, '/')) { *colon = 0; fn = colon + 1; }
  HloStatus st = hlo_ctx_load_plugin(ctx, lib, fn);
  free(lib);
  return st;
}

/* Options a comparison of two runs cannot honour (--dump-custom-calls
 * names where --reference-custom-call writes the diverging call). */
static const char *reference_conflict(const Opts *o) {
  return o->trace ? "--trace" : o->check_nan ? "--check-nan" : o->stats ? "--stats"
         : o->graph ? "--graph" : o->bench ? "--bench" : o->only ? "--only-instruction"
         : o->dump_dir && !o->nref_bind ? "--dump-custom-calls" : NULL;
}

static bool rebound(const Opts *o, const char *target) {
  for (int i = 0; i < o->nref_bind; i++)
    if (strcmp(o->ref_bind[i].target, target) == 0) return true;
  return false;
}

HloCtx *context_like(const Opts *o, int threads, bool rebind) {
  HloCtxOptions co = {sizeof co, threads, o->max_memory, 0, o->isolate, o->cc_timeout,
                      o->crash_dir};
  HloCtx *r = NULL;
  if (hlo_ctx_new(&co, &r) != HLO_OK) {
    fprintf(stderr, "%s: error: cannot create the reference's context\n", prog);
    return NULL;
  }
  const char *what = "the reference's bindings";
  for (int i = 0; i < o->nplugins; i++)
    if (load_plugin(r, o->plugins[i]) != HLO_OK) goto fail;
  for (int i = 0; i < o->nbind; i++)
    if (!(rebind && rebound(o, o->bind[i].target)) &&
        hlo_ctx_bind_custom_call(r, o->bind[i].target, o->bind[i].lib, o->bind[i].symbol) != HLO_OK)
      goto fail;
  for (int i = 0; i < o->nmembers; i++)
    if (hlo_ctx_set_instruction_members(r, *o->members[i] ? o->members[i] : NULL, 1) != HLO_OK)
      goto fail;
  if (o->all_stages) hlo_ctx_set_ffi_all_stages(r, 1);
  for (int i = 0; rebind && i < o->nref_bind; i++) {
    const Binding *b = &o->ref_bind[i];
    if (strcmp(b->lib, "builtin") == 0) {
      char *how = hlo_ctx_custom_call_binding(r, b->target);
      hlo_free(how);
      if (!how) {
        fprintf(stderr, "%s: error: --reference-custom-call %s=builtin: hlorun has no built-in "
                "implementation of custom-call target \"%s\"\n", prog, b->target, b->target);
        hlo_ctx_free(r);
        return NULL;
      }
    } else if (hlo_ctx_bind_custom_call(r, b->target, b->lib, b->symbol) != HLO_OK) {
      what = "--reference-custom-call";
      goto fail;
    }
  }
  return r;
fail:
  fail_with(r, what);
  hlo_ctx_free(r);
  return NULL;
}

/* The diverging custom call as a case --replay runs: the module's own
 * dump of that call (module, operands, bindings), its expected value the
 * reference's result, so that the replay fails until the handler agrees. */
static void write_divergent_call(HloCtx *ctx, const HloModule *m, const Opts *o,
                                 const HloDivergence *d, HloBuffer *const *in, int np) {
  Opts w = *o;
  w.dump_dir = o->dump_dir ? o->dump_dir : "hlorun-divergent-call";
  w.trace = w.check_nan = w.stats = false;
  w.graph = NULL;
  HloRunOptions ro = {.struct_size = sizeof ro, .random_constants = o->random, .seed = o->seed,
                      .max_iterations = o->max_iterations, .timeout = o->timeout,
                      .replicas = 1, .partitions = 1};
  HloExecutable *exe = NULL;
  HloBuffer *res = NULL;
  Debug *dbg = debug_new(&w, ctx, m, false);
  debug_dump_only(dbg, d->instruction, d->iteration >= 0 ? d->iteration : d->call);
  char *dir = xprintf("%s/call-0000", w.dump_dir);
  char *exp = xprintf("%s/expected.%s", dir, hlo_buffer_type(d->reference_value) == HLO_TYPE_TUPLE
                                                ? "npz" : "npy");
  bool ok = dbg && hlo_compile(ctx, m, &ro, &exe) == HLO_OK && debug_attach(dbg, exe) == HLO_OK &&
            hlo_execute(exe, in, np, &res) == HLO_OK &&
            hlo_buffer_save(ctx, d->reference_value, exp) == HLO_OK;
  if (ok) {
    char *note = xprintf("%s/call.txt", dir);
    FILE *f = fopen(note, "a");
    if (f) {
      fprintf(f, "expected: the reference's result (--reference-custom-call), not this run's: "
              "the replay fails until the handler agrees with the reference\n");
      fclose(f);
    }
    free(note);
    fprintf(stderr, "the diverging call: %s (%s --replay %s)\n", dir, prog, dir);
  } else {
    fprintf(stderr, "%s: warning: cannot write the diverging call to %s\n", prog, dir);
    flush_diags(ctx);
  }
  hlo_ctx_clear_diagnostics(ctx);
  free(dir);
  free(exp);
  hlo_buffer_free(res);
  hlo_executable_free(exe);
  debug_free(dbg);
}

/* The grid both modules run on, R x P: the module's, or the reference's
 * when only it runs on many devices; 0 when both run as one device. -1
 * after saying why (both run on many devices, on different grids). */
static int reference_grid(HloCtx *ctx, const HloModule *m, const HloModule *r, const Opts *o,
                          const char *rname, int *R, int *P) {
  int rr = *R, rp = *P;
  if (r != m) devices_grid(r, o, &rr, &rp);
  bool mm = devices_wanted(ctx, m, o, *R, *P), mr = r != m && devices_wanted(ctx, r, o, rr, rp);
  if (!mm && !mr) return 0;
  if (mr && (rr != *R || rp != *P)) {
    if ((int64_t)*R * *P > 1) {
      fprintf(stderr, "%s: error: the module %s runs on %d replica%s x %d partition%s, the "
              "reference %s on %d x %d: both must run on one grid (--replicas, --partitions "
              "set it for both)\n", prog, o->module, *R, *R == 1 ? "" : "s", *P,
              *P == 1 ? "" : "s", rname, rr, rp);
      return -1;
    }
    *R = rr;
    *P = rp;
  }
  return 1;
}

int reference_run(HloCtx *ctx, const HloModule *m, const Opts *o, int R, int P) {
  const char *bad = reference_conflict(o);
  if (bad) {
    fprintf(stderr, "%s: %s cannot be used with --reference\n", prog, bad);
    return EXIT_ERROR;
  }
  HloModule *ref = NULL;
  HloCtx *rctx = NULL;
  const HloModule *r = m;     /* without REF: the module itself */
  const char *rname = o->reference ? o->reference : o->ref_f64 ? "the f64 reference" : o->module;
  HloDivergence *d = NULL;
  json_t *rep = report_new(o, o->ref_f64 ? "reference-precision"
                              : o->reference ? "reference" : "reference-custom-call");
  json_object_set_new(rep, "module", json_string(o->module));
  json_object_set_new(rep, "reference", json_string(o->reference ? o->reference : o->module));
  int np = hlo_module_num_params(m), ndev = 1;
  HloBuffer **in = NULL, **rin = NULL;
  int rc = EXIT_ERROR;
  if (o->reference) {
    if (hlo_module_load(ctx, o->reference, &ref) != HLO_OK) {
      rc = fail_with(ctx, "cannot read the reference");
      goto out;
    }
    r = ref;
  }
  if (o->nref_bind && !(rctx = context_like(o, o->threads, true))) goto out;
  /* Parameters first: a reference that cannot take MODULE's inputs is an
   * error before anything runs (or any input is read). */
  if (hlo_module_num_params(r) != np) {
    fprintf(stderr, "%s: error: the reference %s takes %d parameter%s, the module %s takes %d\n",
            prog, rname, hlo_module_num_params(r), hlo_module_num_params(r) == 1 ? "" : "s",
            o->module, np);
    goto out;
  }
  for (int i = 0; i < np; i++) {
    char *a = NULL, *b = NULL;
    hlo_module_param_shape(ctx, m, i, &a);
    hlo_module_param_shape(ctx, r, i, &b);
    bool same = a && b && strcmp(a, b) == 0;
    if (!same)
      fprintf(stderr, "%s: error: parameter %d differs: %s in the module %s, %s in the reference %s\n",
              prog, i, a ? a : "?", o->module, b ? b : "?", rname);
    hlo_free(a);
    hlo_free(b);
    if (!same) goto out;
  }
  /* Many devices: both on one grid, each with the global inputs split by
   * its own parameters' shardings (a plain multi-device run's rules). */
  int multi = reference_grid(ctx, m, r, o, rname, &R, &P);
  if (multi < 0) goto out;
  if (multi) ndev = R * P;
  else R = P = 1;
  in = calloc((size_t)ndev * (size_t)(np ? np : 1), sizeof *in);
  rin = multi && r != m ? calloc((size_t)ndev * (size_t)(np ? np : 1), sizeof *rin) : NULL;
  if (!in || (multi && r != m && !rin)) { fprintf(stderr, "%s: out of memory\n", prog); goto out; }
  if (multi) {
    if ((rc = devices_load_inputs(ctx, m, o, R, P, in)) != EXIT_OK) goto out;
    if (rin && (rc = devices_load_inputs(ctx, r, o, R, P, rin)) != EXIT_OK) goto out;
    fprintf(stderr, "comparing on %d devices (%d replica%s x %d partition%s)\n", ndev, R,
            R == 1 ? "" : "s", P, P == 1 ? "" : "s");
  } else if ((rc = load_module_inputs(ctx, m, o, in)) != EXIT_OK) {
    goto out;
  }
  rc = EXIT_ERROR;
  HloCompareOptions co;
  compare_options(o, &co);
  HloRunOptions ro = {.struct_size = sizeof ro, .random_constants = o->random, .seed = o->seed,
                      .max_iterations = o->max_iterations, .timeout = o->timeout,
                      .no_fusion = 1, .replicas = R, .partitions = P};
  HloDivergenceOptions dopt = {.struct_size = sizeof dopt, .compare = &co, .run = &ro,
                               .reference_ctx = rctx, .memory_budget = o->ref_memory,
                               .reference_precision = o->ref_f64 ? HLO_TYPE_F64 : 0,
                               .reference_inputs = rin};
  HloStatus st = hlo_compare_runs(ctx, m, r, in, np, &dopt, &d);
  if (st != HLO_OK) {
    if (d && d->failed_side)
      json_object_set_new(rep, "failed_side",
                          json_string(d->failed_side == 2 ? "reference" : "module"));
    if (d && d->failed_side == 2) {
      fprintf(stderr, "%s: error: the reference %s%s failed:\n", prog,
              o->ref_f64 ? o->module : rname,
              o->nref_bind ? " (with the --reference-custom-call bindings)"
              : o->ref_f64 ? " (carried in f64)" : "");
      if (rctx) flush_diags(rctx);
    }
    else if (d && d->failed_side == 1)
      fprintf(stderr, "%s: error: the module %s failed:\n", prog, o->module);
    rc = fail_with(ctx, "comparing the runs failed");
    goto out;
  }
  flush_diags(ctx);   /* warnings */
  report_comparison(rep, d, o->reference ? o->reference : o->module);
  /* The module's result as a plain run prints it (and --expect). */
  rc = multi ? devices_emit(ctx, m, o, d->device_results, R, P) : emit_result(ctx, o, d->result);
  if (rc == EXIT_ERROR) goto out;
  if (d->result_mismatches != 0) {
    if (multi) {             /* device by device: each line names REF */
      for (const char *p = d->result_report ? d->result_report : ""; *p;) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p + 1) : (int)strlen(p);
        bool dev = strncmp(p, "device ", 7) == 0;
        fprintf(stderr, "%s%s%.*s", dev ? rname : "", dev ? ": " : "", len, p);
        p += len;
      }
    } else if (d->result_mismatches < 0) {
      char *a = NULL, *b = NULL;
      hlo_buffer_shape_text(ctx, d->result, &a);
      hlo_buffer_shape_text(ctx, d->reference_result, &b);
      fprintf(stderr, "%s: mismatch: the result has shape %s, the reference's %s\n", rname,
              a ? a : "?", b ? b : "?");
      hlo_free(a);
      hlo_free(b);
    } else {
      fprintf(stderr, "%s: %s", rname, d->result_report ? d->result_report : "mismatch\n");
    }
    rc = EXIT_MISMATCH;
  }
  fprintf(stderr, "%s\n", d->line);
  fprintf(stderr, "compared %lld values of %d instructions with a counterpart (%d without)",
          (long long)d->values_compared, d->paired, d->unpaired);
  if (d->runs > 1) fprintf(stderr, " in %d runs of each module", d->runs);
  if (multi) fprintf(stderr, " on %d devices", ndev);
  fputc('\n', stderr);
  if (d->found && o->nref_bind && d->reference_value &&
      strcmp(hlo_instruction_opcode(d->instruction), "custom-call") == 0) {
    if (multi)
      fprintf(stderr, "%s: note: the diverging call is not written as a case: it ran on device "
              "%d of %d, and replays run one device\n", prog, d->device, ndev);
    else
      write_divergent_call(ctx, m, o, d, in, np);
  }
out:
  rc = report_finish(o, rep, rc);
  hlo_divergence_free(d);
  hlo_module_free(ref);
  hlo_ctx_free(rctx);
  for (int i = 0; in && i < ndev * np; i++) hlo_buffer_free(in[i]);
  for (int i = 0; rin && i < ndev * np; i++) hlo_buffer_free(rin[i]);
  free(in);
  free(rin);
  return rc;
}
