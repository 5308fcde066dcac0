/* check_parser_corpus.c: every module of the shared corpora (conformance
 * cases, evaluator cases, benchmarks) and of tests/parser/ (*.hlo) parses, and
 * its canonical print is a fixed point: print(parse(print(parse(x)))) ==
 * print(parse(x)). Corpora that are not present are skipped.
 * Prints the pass counts. Files named tests/parser/bad-NAME.hlo are skipped
 * here (check_parser.c tests them for their errors).
 */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "parser/parser.h"
#include "tests/testlib.h"

#ifndef HLP_SRCDIR
#define HLP_SRCDIR "."
#endif

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *p = malloc(cap);
  size_t r;
  while (p && (r = fread(p + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) { char *q = realloc(p, cap *= 2); if (!q) { free(p); p = NULL; } else p = q; }
  }
  fclose(f);
  *len = n;
  return p;
}

/* Returns 0 if the file parses and round-trips; prints why not. */
static int roundtrip(const char *path) {
  size_t len;
  char *text = slurp(path, &len);
  if (!text) { printf("%s: cannot read\n", path); return 1; }
  HlcDiags d = {0};
  HloModule *m = hlp_parse(text, len, path, &d);
  free(text);
  int rc = 1;
  if (!m) {
    printf("%s: parse failed\n", path);
    for (int i = 0; i < d.n; i++) fputs(d.v[i].text, stdout);
    hlc_diags_clear(&d);
    return 1;
  }
  size_t n1, n2;
  char *p1 = hlp_print(m, &n1);
  hlp_module_free(m);
  hlc_diags_clear(&d);
  HloModule *m2 = p1 ? hlp_parse(p1, n1, "<print>", &d) : NULL;
  if (!m2) {
    printf("%s: printed text does not parse\n", path);
    for (int i = 0; i < d.n; i++) fputs(d.v[i].text, stdout);
  } else {
    char *p2 = hlp_print(m2, &n2);
    if (p2 && n1 == n2 && memcmp(p1, p2, n1) == 0) rc = 0;
    else printf("%s: printing is not idempotent\n", path);
    free(p2);
    hlp_module_free(m2);
  }
  free(p1);
  hlc_diags_clear(&d);
  return rc;
}

static void run_glob(const char *pattern, const char *label) {
  char pat[4096];
  snprintf(pat, sizeof pat, "%s/%s", HLP_SRCDIR, pattern);
  glob_t g;
  if (glob(pat, 0, NULL, &g) != 0) { printf("%s: none found (skipped)\n", label); return; }
  int ok = 0, total = 0;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    const char *base = strrchr(g.gl_pathv[i], '/');
    if (base && strncmp(base + 1, "bad-", 4) == 0) continue;
    total++;
    ok += roundtrip(g.gl_pathv[i]) == 0;
  }
  globfree(&g);
  printf("%s: %d/%d parse and round-trip\n", label, ok, total);
  fflush(stdout);
  ck_assert_int_eq(ok, total);
}

START_TEST(conformance) { run_glob("../shared/conformance/cases/*/case.hlo", "conformance"); }
END_TEST
START_TEST(evalcases) { run_glob("../shared/evalcases/cases/*/case.hlo", "evalcases"); }
END_TEST
START_TEST(bench) { run_glob("../shared/bench/*.hlo", "bench"); }
END_TEST
START_TEST(own) { run_glob("tests/parser/*.hlo", "tests/parser"); }
END_TEST

int main(void) {
  Suite *s = suite_create("parser_corpus");
  TCase *tc = tcase_create("roundtrip");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, conformance);
  tcase_add_test(tc, evalcases);
  tcase_add_test(tc, bench);
  tcase_add_test(tc, own);
  suite_add_tcase(s, tc);
  return tl_main(s);
}
