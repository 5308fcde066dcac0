/* fuzz_parse.c: libFuzzer target for the HLO text front end. Any bytes must
 * parse or fail with a diagnostic; what parses must print, the printed text
 * must parse again and print identically (the printer is canonical), and
 * verifying either module must not crash.
 * Not here: running modules (fuzz_run.c). */
#include "parser/parser.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void fail(const char *what, const char *a, size_t na, const char *b, size_t nb) {
  fprintf(stderr, "fuzz_parse: %s\n--- first ---\n%.*s\n--- second ---\n%.*s\n", what, (int)na,
          a, (int)nb, b ? b : "");
  abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  if (size > 1 << 16) return 0;
  HlcDiags d = {0};
  HloModule *m = hlp_parse((const char *)data, size, "fuzz.hlo", &d);
  hlc_diags_clear(&d);
  if (!m) return 0;
  hlp_verify(m, &d);
  hlc_diags_clear(&d);
  size_t n1 = 0;
  char *t1 = hlp_print(m, &n1);
  hlp_module_free(m);
  if (!t1) return 0;
  HloModule *m2 = hlp_parse(t1, n1, "printed.hlo", &d);
  if (!m2) {
    const char *msg = d.n ? d.v[0].text : "";
    fail("the printed module does not parse", t1, n1, msg, strlen(msg));
  }
  hlc_diags_clear(&d);
  hlp_verify(m2, &d);
  hlc_diags_clear(&d);
  size_t n2 = 0;
  char *t2 = hlp_print(m2, &n2);
  hlp_module_free(m2);
  if (!t2 || n1 != n2 || memcmp(t1, t2, n1) != 0) fail("printing is not idempotent", t1, n1, t2, n2);
  free(t1);
  free(t2);
  return 0;
}
