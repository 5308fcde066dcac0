/* mlir_tests.c: a StableHLO interpreter test file given as MODULE runs as
 * its checks say (hlo_run_test_file): failures on standard error, then
 * "checks: N passed, M failed"; exit 1 when one failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/util.h"

/* The first bytes of path, enough to tell a test file (checks are near the
 * top, "// -----" too); the whole file when it is small. */
static char *head_of(const char *path, size_t *len) {
  FILE *f = strcmp(path, "-") == 0 ? NULL : fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 20;
  char *p = malloc(cap);
  *len = p ? fread(p, 1, cap, f) : 0;
  fclose(f);
  return p;
}

bool mlir_test_file(const char *path) {
  size_t n;
  char *p = head_of(path, &n);
  bool yes = p && hlo_is_test_file(p, n);
  free(p);
  return yes;
}

int mlir_tests_run(HloCtx *ctx, const Opts *o) {
  HloRunOptions ro = {.struct_size = sizeof ro, .seed = o->seed};
  int passed = 0, failed = 0;
  char *report = NULL;
  if (hlo_run_test_file(ctx, o->module, &ro, &passed, &failed, &report) != HLO_OK)
    return fail_with(ctx, "cannot run the test file");
  flush_diags(ctx);
  if (report) fputs(report, stderr);
  hlo_free(report);
  fprintf(stderr, "checks: %d passed, %d failed\n", passed, failed);
  return failed ? EXIT_MISMATCH : EXIT_OK;
}
