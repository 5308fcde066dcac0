/* util.c: the helpers every file of the hlorun command uses: the program's
 * name, allocation that exits on failure, a malloc'd printf, the clock,
 * and printing the context's diagnostics. The bottom of cli/: it calls no
 * other cli file. */
#include "cli/util.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *prog = "hlorun";

/* Print the context's diagnostics (errors and warnings) and forget them. */
void flush_diags(HloCtx *ctx) {
  const char *d = hlo_ctx_diagnostics(ctx);
  if (d && *d) {
    fputs(d, stderr);
    fflush(stderr);
  }
  hlo_ctx_clear_diagnostics(ctx);
}

int fail_with(HloCtx *ctx, const char *fallback) {
  if (hlo_ctx_error_count(ctx) == 0 && fallback) fprintf(stderr, "%s: error: %s\n", prog, fallback);
  flush_diags(ctx);
  return EXIT_ERROR;
}

bool has_suffix(const char *s, const char *suf) {
  size_t n = strlen(s), k = strlen(suf);
  return n >= k && strcmp(s + n - k, suf) == 0;
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) { fprintf(stderr, "%s: out of memory\n", prog); exit(EXIT_ERROR); }
  return p;
}

char *xprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = xmalloc((size_t)(n < 0 ? 0 : n) + 1);
  va_start(ap, fmt);
  vsnprintf(s, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
  va_end(ap);
  return s;
}

double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
