/* util.h: the helpers every file of the hlorun command uses (util.c):
 * exit codes, the program's name, allocation that exits when memory runs
 * out, and printing the context's diagnostics. */
#ifndef HLORUN_CLI_UTIL_H
#define HLORUN_CLI_UTIL_H
#include "hlorun.h"
#include <stdbool.h>
#include <stddef.h>

enum { EXIT_OK = 0, EXIT_MISMATCH = 1, EXIT_ERROR = 2 };

extern const char *prog;     /* "hlorun" */

/* Print the context's diagnostics (errors and warnings) to standard error
 * and forget them. */
void flush_diags(HloCtx *ctx);
/* Print the context's diagnostics, or "prog: error: FALLBACK" when it holds
 * no error (fallback may be NULL): returns EXIT_ERROR. */
int fail_with(HloCtx *ctx, const char *fallback);

/* Milliseconds on the monotonic clock. */
double now_ms(void);
bool has_suffix(const char *s, const char *suf);
/* malloc'd printf. Exits on out of memory. */
char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* malloc that exits (status 2, after saying so) when memory runs out. */
void *xmalloc(size_t n);
#endif
