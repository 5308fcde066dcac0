/* stablehlo.h: StableHLO / MHLO / CHLO in MLIR text, translated to HLO text
 * the way XLA's StableHLO -> HLO translation makes it, so the HLO parser,
 * verifier, interpreter and everything downstream are shared.
 *
 * The lexer (lexer.re, re2c) and grammar (mlir.y, lemon) build a generic
 * tree; lower*.c and ops*.c translate it op by op. Unsupported constructs
 * (dynamic shapes, quantized types, unknown ops) are positioned errors.
 */
#ifndef HLORUN_STABLEHLO_STABLEHLO_H
#define HLORUN_STABLEHLO_STABLEHLO_H
#include <stdbool.h>
#include <stddef.h>
#include "common/diag.h"

/* Does the text look like MLIR (a module, a func.func, or a test file of
 * them) rather than HLO text? Looks at the first significant token only. */
bool shlo_looks_like_mlir(const char *text, size_t len);

/* The module's entry function (@main, or its only public function) as an HLO
 * module in text form (malloc'd, NUL-terminated). NULL on error, with
 * positioned errors in diags. */
char *shlo_to_hlo_text(const char *text, size_t len, const char *filename, HlcDiags *diags, size_t *outlen);
/* The same, parsed into the IR (hlp_parse of the HLO text). */
struct HloModule;
struct HloModule *shlo_parse_module(const char *text, size_t len, const char *filename, HlcDiags *diags);

/* ---- StableHLO interpreter test files -------------------------------------- */
typedef enum { SHC_EQ, SHC_ALMOST_EQ, SHC_CLOSE } ShCheckKind;
typedef struct ShCheck {
  ShCheckKind kind;
  int line;                /* of the check op */
  double tolerance;        /* SHC_ALMOST_EQ */
  unsigned long long max_ulp, min_ulp;   /* SHC_CLOSE */
  const char *what;        /* "check.expect_eq_const" */
} ShCheck;

/* One public function without arguments of one "// -----" part: an HLO
 * module whose result is a tuple (actual_0, expected_0, actual_1, ...) of
 * the values its checks compare. */
typedef struct ShTest {
  char *func;              /* function name */
  int line;                /* of the func.func */
  char *hlo;               /* HLO text, or NULL when it failed to translate */
  size_t hlo_len;
  char *error;             /* why it failed to translate (rendered diagnostics) */
  ShCheck *checks;
  int nchecks;
  /* interpreter.run_parallel: pre's result is a tuple of its operands (device
   * d's nargs of them, device after device); every device of the grid runs
   * par on its own; hlo then takes the devices' results, in the same order,
   * as its parameters. pre NULL: hlo runs alone. */
  char *pre, *par;
  size_t pre_len, par_len;
  int par_devices, par_nargs, par_nresults;
} ShTest;

typedef struct ShTests { ShTest *v; int n; } ShTests;

/* Every test of a file. A part that does not parse fails as a whole (one
 * ShTest with func "<part N>" and its error). Returns -1 only on a
 * malformed file as a whole (errors in diags). */
int shlo_tests(const char *text, size_t len, const char *filename, HlcDiags *diags, ShTests *out);
void shlo_tests_free(ShTests *t);
/* Does the text contain check ops or "// -----" parts (a test file)? */
bool shlo_is_test_file(const char *text, size_t len);
#endif
