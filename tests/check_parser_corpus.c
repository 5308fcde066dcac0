/* check_parser_corpus.c: every module of the shared corpora (conformance
 * cases, evaluator cases, benchmarks) and of tests/parser/ (*.hlo) parses, and
 * its canonical print is a fixed point: print(parse(print(parse(x)))) ==
 * print(parse(x)). Corpora that are not present are skipped.
 * Prints the pass counts. Files named tests/parser/bad-NAME.hlo are invalid
 * modules: their first line is "// expect: LINE:COL: MESSAGE", the first
 * error the parse must report (and it must fail, never crash).
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

/* Returns 0 if the file parses and round-trips; prints why not. */
static int roundtrip(const char *path) {
  size_t len;
  char *text = tl_read_file(path, &len);
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

/* Returns 0 if the invalid module fails with exactly the expected error. */
static int expect_failure(const char *path) {
  size_t len;
  char *text = tl_read_file(path, &len);
  if (!text) { printf("%s: cannot read\n", path); return 1; }
  int line = 0, col = 0, used = 0;
  char want[512] = "";
  if (sscanf(text, "// expect: %d:%d: %n", &line, &col, &used) != 2 || !used) {
    printf("%s: no '// expect: LINE:COL: MESSAGE' first line\n", path);
    free(text);
    return 1;
  }
  const char *m = text + used, *eol = memchr(m, '\n', len - (size_t)used);
  snprintf(want, sizeof want, "%.*s", (int)(eol ? eol - m : (long)(len - (size_t)used)), m);
  HlcDiags d = {0};
  HloModule *mod = hlp_parse(text, len, path, &d);
  free(text);
  int rc = 1, k = 0;
  while (k < d.n && d.v[k].sev != HLC_ERROR) k++;
  if (mod) printf("%s: parsed, but should fail with: %s\n", path, want);
  else if (k == d.n) printf("%s: failed without an error message\n", path);
  else if (d.v[k].line != line || d.v[k].col != col || strcmp(d.v[k].message, want) != 0)
    printf("%s: want %d:%d: %s\n  got %d:%d: %s\n", path, line, col, want, d.v[k].line,
           d.v[k].col, d.v[k].message);
  else rc = 0;
  hlp_module_free(mod);
  hlc_diags_clear(&d);
  return rc;
}

START_TEST(bad) {
  char pat[4096];
  snprintf(pat, sizeof pat, "%s/tests/parser/bad-*.hlo", HLP_SRCDIR);
  glob_t g;
  if (glob(pat, 0, NULL, &g) != 0) { printf("bad: none found\n"); return; }
  int ok = 0;
  for (size_t i = 0; i < g.gl_pathc; i++) ok += expect_failure(g.gl_pathv[i]) == 0;
  printf("tests/parser/bad-*: %d/%d fail as expected\n", ok, (int)g.gl_pathc);
  fflush(stdout);
  int total = (int)g.gl_pathc;
  globfree(&g);
  ck_assert_int_eq(ok, total);
}
END_TEST

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
  tcase_add_test(tc, bad);
  suite_add_tcase(s, tc);
  return tl_main(s);
}
