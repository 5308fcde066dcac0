/* result.c: how a run of the hlorun command ends, on one device or many:
 * the result printed as an HLO literal or written to -o FILE, compared with
 * --expect FILE (exit 1 on a mismatch), and the median of --bench runs.
 *
 * Not here: running the module (run.c, devices.c). */
#include "cli/cli.h"
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

void print_bench(double *times, long n) {
  qsort(times, (size_t)n, sizeof *times, cmp_double);
  double med = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  fprintf(stderr, "bench: median_ms=%.3f runs=%ld\n", med, n);
}

void compare_options(const Opts *o, HloCompareOptions *co) {
  memset(co, 0, sizeof *co);
  co->struct_size = sizeof *co;
  co->rtol = o->rtol;
  co->atol = o->atol;
  co->max_report = 5;
  if (o->ulp >= 0) {
    /* --ulp alone is the whole tolerance; --ulp 0 means equal values. */
    if (co->rtol < 0) co->rtol = 0;
    if (co->atol < 0) co->atol = 0;
    co->max_ulp = o->ulp;
  }
}

int emit_result(HloCtx *ctx, const Opts *o, HloBuffer *res) {
  HloBuffer *want = NULL;
  int rc = EXIT_ERROR;
  if (o->output) {
    if (hlo_buffer_save(ctx, res, o->output) != HLO_OK) { rc = fail_with(ctx, o->output); goto out; }
  } else if ((!o->expect || o->replay) && o->bench == 0) {
    char *text;
    size_t len;
    if (hlo_buffer_to_literal(ctx, res, &text, &len) != HLO_OK) { rc = fail_with(ctx, "printing"); goto out; }
    fwrite(text, 1, len, stdout);
    fputc('\n', stdout);
    hlo_free(text);
    if (fflush(stdout) != 0) { fprintf(stderr, "%s: error: cannot write standard output\n", prog); goto out; }
  }
  rc = EXIT_OK;
  if (o->expect) {
    if (hlo_load_like(ctx, res, o->expect, &want) != HLO_OK) { rc = fail_with(ctx, o->expect); goto out; }
    HloCompareOptions co;
    compare_options(o, &co);
    int64_t bad = 0;
    char *report = NULL;
    if (hlo_buffer_compare(ctx, res, want, &co, &bad, &report) != HLO_OK) {
      rc = fail_with(ctx, "comparison failed");
      goto out;
    }
    if (bad != 0) {
      fprintf(stderr, "%s: %s", o->expect, report ? report : "mismatch\n");
      rc = EXIT_MISMATCH;
    }
    hlo_free(report);
  }
out:
  hlo_buffer_free(want);
  return rc;
}
