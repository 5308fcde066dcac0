/* determinism.c: hlorun --determinism N: the module run N times, run k
 * with its own context and thread count (1, all cores or 2, then 3, 4,
 * ...), every instruction's bits hashed (the library's
 * hlo_check_determinism); prints 'deterministic: N runs agree' (exit 0) or
 * 'first nondeterministic: NAME ...' (exit 1). Reports on standard error. */
#include "cli/cli.h"
#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

/* Run k's thread count: 1, the machine's cores (at least 2), then 2, 3,
 * 4, ... skipping the cores' count: all different. */
static int threads_of(int k) {
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  int cores = c > 2 ? (int)c : 2;
  if (k == 0) return 1;
  if (k == 1) return cores;
  return k < cores ? k : k + 1;
}

int determinism_run(HloCtx *ctx, const HloModule *m, const Opts *o) {
  int n = o->determinism, np = hlo_module_num_params(m), rc = EXIT_ERROR;
  HloCtx **ctxs = calloc((size_t)n, sizeof *ctxs);
  HloBuffer **in = calloc((size_t)(np ? np : 1), sizeof *in);
  int *threads = calloc((size_t)n, sizeof *threads);
  json_t *rep = report_new(o, "determinism"), *th = json_array();
  json_object_set_new(rep, "module", json_string(o->module));
  json_object_set_new(rep, "runs", json_integer(n));
  if (!ctxs || !in || !threads) { fprintf(stderr, "%s: out of memory\n", prog); goto out; }
  if (load_module_inputs(ctx, m, o, in) != EXIT_OK) goto out;
  for (int k = 0; k < n; k++) {
    threads[k] = threads_of(k);
    json_array_append_new(th, json_integer(threads[k]));
    if (!(ctxs[k] = context_like(o, threads[k], false))) goto out;
  }
  HloRunOptions ro = {.struct_size = sizeof ro, .random_constants = o->random, .seed = o->seed,
                      .max_iterations = o->max_iterations, .timeout = o->timeout,
                      .no_fusion = 1, .replicas = 1, .partitions = 1};
  HloDeterminism r = {.struct_size = sizeof r};
  if (hlo_check_determinism(ctxs, n, m, in, np, &ro, &r) != HLO_OK) {
    int k = r.failed_run > 0 ? r.failed_run - 1 : 0;
    if (r.failed_run > 0)
      fprintf(stderr, "%s: error: run %d (%d thread%s) failed:\n", prog, k, threads[k],
              threads[k] == 1 ? "" : "s");
    json_object_set_new(rep, "failed_run", r.failed_run > 0 ? json_integer(k) : json_null());
    rc = fail_with(ctxs[k], "--determinism failed");
    goto out;
  }
  json_object_set_new(rep, "steps", json_integer(r.steps));
  if (r.deterministic) {
    json_object_set_new(rep, "first_nondeterministic", json_null());
    fprintf(stderr, "deterministic: %d runs agree (threads", n);
    for (int k = 0; k < n; k++) fprintf(stderr, "%s%d", k ? ", " : " ", threads[k]);
    fprintf(stderr, "; %lld steps each)\n", (long long)r.steps);
    rc = EXIT_OK;
    goto out;
  }
  /* What differed: the result for the same operand bits, the operands
   * already, another instruction ran, or the run made fewer steps. */
  json_t *fn = r.instruction ? report_instruction(r.instruction, r.iteration, r.call)
                             : json_object();
  json_object_set_new(fn, "run", json_integer(r.run));
  json_object_set_new(fn, "run_threads", json_integer(threads[r.run]));
  json_object_set_new(fn, "cause", json_string(!r.instruction ? "fewer_steps"
                                               : r.different_path ? "different_path"
                                               : r.operands_differ ? "operands_differ"
                                               : "result_differs"));
  json_object_set_new(rep, "first_nondeterministic", fn);
  if (!r.instruction) {
    fprintf(stderr, "first nondeterministic: run %d (%d threads) made fewer steps than run 0 "
            "(1 thread)\n", r.run, threads[r.run]);
  } else {
    const HloInstruction *i = r.instruction;
    fprintf(stderr, "first nondeterministic: %s (%s, line %d", hlo_instruction_name(i),
            hlo_instruction_opcode(i), hlo_instruction_line(i));
    if (r.iteration >= 0) fprintf(stderr, ", iteration %lld", (long long)r.iteration);
    if (r.call >= 0) fprintf(stderr, ", call %lld", (long long)r.call);
    fprintf(stderr, "): ");
    if (r.different_path)
      fprintf(stderr, "run %d (%d threads) ran it where run 0 (1 thread) ran another instruction\n",
              r.run, threads[r.run]);
    else if (r.operands_differ)
      fprintf(stderr, "its operands' bits already differ between run 0 (1 thread) and run %d "
              "(%d threads): the difference comes from a step that is not observed\n",
              r.run, threads[r.run]);
    else
      fprintf(stderr, "its result's bits differ between run 0 (1 thread) and run %d (%d threads) "
              "for the same operand bits\n", r.run, threads[r.run]);
  }
  rc = EXIT_MISMATCH;
out:
  json_object_set_new(rep, "threads", th);
  rc = report_finish(o, rep, rc);
  for (int k = 0; ctxs && k < n; k++) { if (ctxs[k]) flush_diags(ctxs[k]); hlo_ctx_free(ctxs[k]); }
  for (int i = 0; in && i < np; i++) hlo_buffer_free(in[i]);
  free(in);
  free(ctxs);
  free(threads);
  return rc;
}
