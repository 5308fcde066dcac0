/* check_stablehlo_sample.c: a fixed sample of StableHLO's own test files
 * (tests/stablehlo/sample/, copied from github.com/openxla/stablehlo by
 * tests/stablehlo/run_all.py --sample; Apache-2.0, see
 * tests/stablehlo/LICENSE) run as hlorun runs a test file: every check.expect_*
 * op asserts a value StableHLO's authors worked out. A file passes when at
 * least one check ran and none failed. tests/stablehlo/cannot-pass.txt lists
 * the files that cannot pass and the construct each needs: a listed file
 * that passes fails this test (the list must shrink with the code), an
 * unlisted one that fails fails it, and a listed one must fail for the
 * reason listed.
 */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hlorun.h"
#include "tests/testlib.h"

#ifndef SHS_SRCDIR
#define SHS_SRCDIR "."
#endif

typedef struct Listed { char *path, *why; } Listed;
static Listed *listed;
static int nlisted;

static void read_list(void) {
  char p[4096];
  snprintf(p, sizeof p, "%s/tests/stablehlo/cannot-pass.txt", SHS_SRCDIR);
  FILE *f = fopen(p, "r");
  ck_assert_msg(f != NULL, "cannot open %s", p);
  char line[4096];
  int cap = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    char *tab = strchr(line, '\t');
    if (line[0] == '#' || !tab) continue;
    *tab = 0;
    if (nlisted == cap) {
      cap = cap ? 2 * cap : 256;
      listed = realloc(listed, sizeof *listed * (size_t)cap);
      ck_assert_ptr_nonnull(listed);
    }
    listed[nlisted].path = strdup(line);
    listed[nlisted].why = strdup(tab + 1);
    nlisted++;
  }
  fclose(f);
}

static void free_list(void) {
  for (int i = 0; i < nlisted; i++) {
    free(listed[i].path);
    free(listed[i].why);
  }
  free(listed);
  listed = NULL;
  nlisted = 0;
}

/* The sample file "testdata__abs_float32_20_20.mlir" is the checkout's
 * "stablehlo/testdata/abs_float32_20_20.mlir" (names may hold "__" too, so
 * each listed path is written as a sample name and compared). */
static const Listed *listing(const char *sample_path) {
  const char *base = strrchr(sample_path, '/');
  base = base ? base + 1 : sample_path;
  for (int i = 0; i < nlisted; i++) {
    const char *p = listed[i].path, *b = base;
    if (strncmp(p, "stablehlo/", 10) != 0) continue;
    for (p += 10; *p && *b; p++) {
      if (*p == '/') {
        if (strncmp(b, "__", 2) != 0) break;
        b += 2;
      } else if (*p == *b) {
        b++;
      } else {
        break;
      }
    }
    if (!*p && !*b) return &listed[i];
  }
  return NULL;
}

/* A file without checks (a module of StableHLO's testdata/dynamic, ...) is
 * read as a module: it cannot pass; its diagnostics say why. */
static HloStatus run_file(HloCtx *ctx, const char *path, int *passed, int *failed, char **report, bool *test_file) {
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  char *text = NULL;
  size_t cap = 0, n = 0, got;
  do {
    if (n == cap) {
      cap = cap ? 2 * cap : 65536;
      text = realloc(text, cap);
      ck_assert_ptr_nonnull(text);
    }
    got = fread(text + n, 1, cap - n, f);
    n += got;
  } while (got > 0);
  fclose(f);
  *test_file = hlo_is_test_file(text, n);
  HloStatus st;
  if (*test_file) {
    st = hlo_run_test_file(ctx, path, NULL, passed, failed, report);
  } else {
    HloModule *m = NULL;
    *passed = *failed = 0;
    *report = NULL;
    st = hlo_module_parse(ctx, text, n, path, &m);
    if (st == HLO_OK) st = hlo_module_verify(ctx, m);
    hlo_module_free(m);
  }
  free(text);
  return st;
}

/* The construct a listed reason names: its text before the first quoted
 * instruction name, parenthesis or " :" (run_all.py drops instruction names,
 * which vary with hlorun's numbering). */
static size_t construct_len(const char *why) {
  size_t n = strcspn(why, "'(");
  const char *c = strstr(why, " :");
  return c && (size_t)(c - why) < n ? (size_t)(c - why) : n;
}

/* N of "wrong result (N checks failed)" or "check cannot pass (N checks
 * failed): why" (the latter: run_all.py's EXPLAINED, a file whose checks
 * cannot pass for the reason given). */
static int listed_failures(const char *why) {
  const char *p = strchr(why, '(');
  return p ? atoi(p + 1) : -1;
}

START_TEST(sample_files) {
  read_list();
  ck_assert_int_gt(nlisted, 0);
  char pat[4096];
  snprintf(pat, sizeof pat, "%s/tests/stablehlo/sample/*.mlir", SHS_SRCDIR);
  glob_t g;
  ck_assert_int_eq(glob(pat, 0, NULL, &g), 0);
  ck_assert_int_ge((int)g.gl_pathc, 200);
  HloCtx *ctx = NULL;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  int npass = 0, nfail = 0, wrong = 0;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    const char *path = g.gl_pathv[i];
    const Listed *l = listing(path);
    int passed = 0, failed = 0;
    char *report = NULL;
    hlo_ctx_clear_diagnostics(ctx);
    bool test_file;
    HloStatus st = run_file(ctx, path, &passed, &failed, &report, &test_file);
    bool ok = test_file && st == HLO_OK && passed > 0 && failed == 0;
    const char *diag = hlo_ctx_diagnostics(ctx);
    if (ok) npass++; else nfail++;
    if (ok && l) {
      fprintf(stderr, "%s: passes, but tests/stablehlo/cannot-pass.txt lists it (%s): remove it\n", path, l->why);
      wrong++;
    } else if (!ok && !l) {
      fprintf(stderr, "%s: fails (%d passed, %d failed), not listed:\n%s%s\n", path, passed, failed,
              report ? report : "", diag);
      wrong++;
    } else if (!ok) {
      bool as_listed;
      if (strncmp(l->why, "wrong result", 12) == 0 || strncmp(l->why, "check cannot pass", 17) == 0)
        as_listed = st == HLO_OK && failed > 0 && failed == listed_failures(l->why);
      else if (strcmp(l->why, "no checks ran") == 0)
        as_listed = st == HLO_OK && passed == 0 && failed == 0;
      else if (strncmp(l->why, "not a test file", 15) == 0)
        as_listed = !test_file && st == HLO_OK;
      else {
        size_t n = construct_len(l->why);
        char *want = strndup(l->why, n);
        as_listed = n >= 7 && ((report && strstr(report, want)) || strstr(diag, want));
        free(want);
      }
      if (!as_listed) {
        fprintf(stderr, "%s: fails, but not as listed (%s):\n%s%s\n", path, l->why, report ? report : "", diag);
        wrong++;
      }
    }
    hlo_free(report);
  }
  fprintf(stderr, "stablehlo sample: %d of %zu files pass, %d listed as failing\n", npass, g.gl_pathc, nfail);
  hlo_ctx_free(ctx);
  globfree(&g);
  free_list();
  ck_assert_int_eq(wrong, 0);
  /* the sample holds both kinds, so both directions of the list are tested */
  ck_assert_int_gt(npass, 0);
  ck_assert_int_gt(nfail, 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("stablehlo_sample");
  TCase *tc = tcase_create("sample");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, sample_files);
  suite_add_tcase(s, tc);
  return tl_main(s);
}
