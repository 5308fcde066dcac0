/* check_verify.c: tests of the shape verifier (hlp_verify).
 *
 * 1. Corpus: every module of the shared corpora (conformance cases, evaluator
 *    cases, benchmarks), samples/ and tests/ (every .hlo file there parses (the
 *    latter: when it parses at all)) and verifies without errors. Corpora that
 *    are not present are skipped.
 * 2. Broken modules: tests/verify/NAME.hlo must fail with exactly the
 *    diagnostic in tests/verify/NAME.err (its first line: the positioned
 *    "NAME.hlo:LINE:COL: error: MESSAGE"). The modules were written by hand,
 *    one per check, and the expected shapes worked out by hand from XLA's
 *    shape rules.
 * 3. Modules XLA accepts although they look odd (mixed precision reduce,
 *    scalar select predicate, scalar clamp bounds, bitcast-convert width
 *    changes, ...) verify clean; the extra-comma parse error.
 */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "parser/parser.h"
#include "tests/testlib.h"

#ifndef HLV_SRCDIR
#define HLV_SRCDIR "."
#endif

static void dump(const HlcDiags *d) {
  for (int i = 0; i < d->n; i++) fputs(d->v[i].text, stdout);
}

/* 0: parses and verifies; 1: verify errors; 2: does not parse. */
static int check_file(const char *path, bool report) {
  size_t len;
  char *text = tl_read_file(path, &len);
  if (!text) { printf("%s: cannot read\n", path); return 2; }
  HlcDiags d = {0};
  HloModule *m = hlp_parse(text, len, path, &d);
  free(text);
  int rc = 2;
  if (!m) {
    if (report) { printf("%s: parse failed\n", path); dump(&d); }
  } else {
    rc = hlp_verify(m, &d) == 0 && d.nerrors == 0 ? 0 : 1;
    if (rc && report) { printf("%s: does not verify\n", path); dump(&d); }
    hlp_module_free(m);
  }
  hlc_diags_clear(&d);
  return rc;
}

/* must_parse: the corpora (a parse failure is a failure); tests/: files that
 * do not parse belong to the parser tests and are skipped. */
static void run_glob(const char *pattern, const char *label, bool must_parse) {
  char pat[4096];
  snprintf(pat, sizeof pat, "%s/%s", HLV_SRCDIR, pattern);
  glob_t g;
  if (glob(pat, 0, NULL, &g) != 0) { printf("%s: none found (skipped)\n", label); return; }
  int ok = 0, total = 0, skipped = 0;
  int fuzz = 0;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    if (strstr(g.gl_pathv[i], "/tests/verify/")) continue;
    /* Fuzzer finds are arbitrary text: they only have to not crash. */
    bool arbitrary = strstr(g.gl_pathv[i], "/fuzz") != NULL;
    int rc = check_file(g.gl_pathv[i], must_parse && !arbitrary);
    if (arbitrary) { fuzz++; continue; }
    if (rc == 2 && !must_parse) { skipped++; continue; }
    total++;
    ok += rc == 0;
  }
  globfree(&g);
  printf("%s: %d/%d verify clean (%d not parsing, skipped; %d fuzz inputs run)\n", label, ok, total,
         skipped, fuzz);
  fflush(stdout);
  ck_assert_int_eq(ok, total);
}

START_TEST(corpus_conformance) { run_glob("../shared/conformance/cases/*/case.hlo", "conformance", true); }
END_TEST
START_TEST(corpus_evalcases) { run_glob("../shared/evalcases/cases/*/case.hlo", "evalcases", true); }
END_TEST
START_TEST(corpus_bench) { run_glob("../shared/bench/*.hlo", "bench", true); }
END_TEST
START_TEST(corpus_samples) { run_glob("samples/*.hlo", "samples", true); }
END_TEST
START_TEST(corpus_tests) {
  run_glob("tests/*.hlo", "tests", false);
  run_glob("tests/*/*.hlo", "tests/*", false);
  run_glob("tests/*/*/*.hlo", "tests/*/*", false);
}
END_TEST

/* ---- Broken modules ------------------------------------------------------------ */

/* The first error of parse + verify (whole first line), or NULL. */
static char *first_error_line(const char *text, size_t len, const char *name) {
  HlcDiags d = {0};
  HloModule *m = hlp_parse(text, len, name, &d);
  if (m) {
    hlp_verify(m, &d);
    hlp_module_free(m);
  }
  char *r = NULL;
  for (int i = 0; i < d.n && !r; i++)
    if (d.v[i].sev == HLC_ERROR) {
      const char *t = d.v[i].text;
      size_t n = strcspn(t, "\n");
      r = strndup(t, n);
    }
  hlc_diags_clear(&d);
  return r;
}

START_TEST(broken_modules) {
  char pat[4096];
  snprintf(pat, sizeof pat, "%s/tests/verify/*.hlo", HLV_SRCDIR);
  glob_t g;
  ck_assert_int_eq(glob(pat, 0, NULL, &g), 0);
  int ok = 0;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    const char *path = g.gl_pathv[i];
    const char *base = strrchr(path, '/') + 1;
    size_t len, elen;
    char *text = tl_read_file(path, &len);
    char errpath[4096];
    snprintf(errpath, sizeof errpath, "%.*s.err", (int)(strlen(path) - 4), path);
    char *want = tl_read_file(errpath, &elen);
    ck_assert_msg(text && want, "%s: missing module or .err file", path);
    want[strcspn(want, "\n")] = 0;
    char *got = first_error_line(text, len, base);
    if (!got || strcmp(got, want) != 0)
      printf("%s:\n  want: %s\n  got:  %s\n", base, want, got ? got : "(no error)");
    else
      ok++;
    free(got);
    free(text);
    free(want);
  }
  printf("tests/verify: %d/%d broken modules give the expected error\n", ok, (int)g.gl_pathc);
  ck_assert_int_eq(ok, (int)g.gl_pathc);
  ck_assert_int_ge((int)g.gl_pathc, 30);
  globfree(&g);
}
END_TEST

/* ---- Odd but valid modules ------------------------------------------------------- */

static void expect_clean(const char *text) {
  HlcDiags d = {0};
  HloModule *m = hlp_parse(text, strlen(text), "t.hlo", &d);
  if (!m || hlp_verify(m, &d) != 0) dump(&d);
  ck_assert_ptr_nonnull(m);
  ck_assert_int_eq(d.nerrors, 0);
  hlp_module_free(m);
  hlc_diags_clear(&d);
}

static void expect_first(const char *text, const char *want) {
  char *got = first_error_line(text, strlen(text), "t.hlo");
  ck_assert_ptr_nonnull(got);
  ck_assert_str_eq(got, want);
  free(got);
}

#define ADD_F32 "add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] add(x, y) }\n"

START_TEST(valid_odd_modules) {
  /* bf16 result of an f32 reduction (XLA's MixedPrecisionReduction). */
  expect_clean("HloModule m\n" ADD_F32
               "ENTRY e { p = f32[4] parameter(0)\n z = f32[] constant(0)\n"
               " ROOT r = bf16[] reduce(p, z), dimensions={0}, to_apply=add }\n");
  /* Scalar select predicate, scalar clamp bounds. */
  expect_clean("ENTRY e { c = pred[] parameter(0)\n a = f32[3] parameter(1)\n b = f32[3] parameter(2)\n"
               " s = f32[3] select(c, a, b)\n lo = f32[] constant(0)\n"
               " ROOT k = f32[3] clamp(lo, s, lo) }\n");
  /* bitcast-convert: f32 -> u16 adds a minor dim of 2; s8[4] -> s32[]. */
  expect_clean("ENTRY e { a = f32[3] parameter(0)\n b = u16[3,2] bitcast-convert(a)\n"
               " c = s8[4] parameter(1)\n d = s32[] bitcast-convert(c)\n ROOT t = (u16[3,2], s32[]) tuple(b, d) }\n");
  /* s8 x s8 dot accumulating in s32; bf16 x bf16 -> f32. */
  expect_clean("ENTRY e { a = s8[2,3] parameter(0)\n b = s8[3,4] parameter(1)\n"
               " d = s32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
               " x = bf16[2,3] parameter(2)\n y = bf16[3,4] parameter(3)\n"
               " f = f32[2,4] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
               " ROOT t = (s32[2,4], f32[2,4]) tuple(d, f) }\n");
  /* complex(), real/imag/abs of complex, compare -> pred. */
  expect_clean("ENTRY e { a = f64[2] parameter(0)\n c = c128[2] complex(a, a)\n r = f64[2] real(c)\n"
               " i = f64[2] imag(c)\n m = f64[2] abs(c)\n"
               " p = pred[2] compare(r, i), direction=LT\n ROOT t = (f64[2], pred[2]) tuple(m, p) }\n");
  /* Strided conv with padding and dilations: the dilated input is (5-1)*2+1 = 9,
   * padded 11, the dilated window (3-1)*2+1 = 5: (11-5)/2+1 = 4 outputs. */
  expect_clean("ENTRY e { x = f32[1,5,2] parameter(0)\n k = f32[3,2,4] parameter(1)\n"
               " ROOT c = f32[1,4,4] convolution(x, k), window={size=3 stride=2 pad=1_1 lhs_dilate=2 "
               "rhs_dilate=2}, dim_labels=b0f_0io->b0f }\n");
  /* Gather with batching dims: operand [2,5], indices [2,1] -> [2,3]. */
  expect_clean("ENTRY e { a = f32[2,5] parameter(0)\n i = s32[2,1] parameter(1)\n"
               " ROOT g = f32[2,3] gather(a, i), offset_dims={1}, collapsed_slice_dims={}, "
               "start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, "
               "index_vector_dim=1, slice_sizes={1,3} }\n");
}
END_TEST

START_TEST(positions_and_messages) {
  expect_first("ENTRY e { a = f32[2,3] parameter(0)\n b = f32[3,4] parameter(1)\n"
               " ROOT d = f32[2,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0} }\n",
               "t.hlo:3:7: error: dot 'd': result shape f32[2,3] does not match the inferred f32[2,4]");
  /* Several errors are all reported, each at its instruction. */
  HlcDiags d = {0};
  const char *text = "ENTRY e {\n a = f32[2] parameter(0)\n b = f32[3] negate(a)\n"
                     " ROOT c = s32[2] add(a, a)\n}\n";
  HloModule *m = hlp_parse(text, strlen(text), "t.hlo", &d);
  ck_assert_ptr_nonnull(m);
  ck_assert_int_eq(hlp_verify(m, &d), -1);
  ck_assert_int_eq(d.nerrors, 2);
  ck_assert_int_eq(d.v[0].line, 3);
  ck_assert_int_eq(d.v[0].col, 2);
  ck_assert_int_eq(d.v[1].line, 4);
  ck_assert_int_eq(d.v[1].col, 7);
  ck_assert_str_eq(d.v[1].message, "add 'c': result shape s32[2] does not match the inferred f32[2]");
  hlp_module_free(m);
  hlc_diags_clear(&d);
}
END_TEST

START_TEST(extra_commas) {
  const char *cases[][2] = {
    {"ENTRY e { a = f32[] parameter(0)\n ROOT b = f32[] add(a,,a) }\n",
     "t.hlo:2:23: error: unexpected ',' in the operand list"},
    {"ENTRY e { a = f32[] parameter(0)\n ROOT b = f32[] add(,a, a) }\n",
     "t.hlo:2:21: error: unexpected ',' in the operand list"},
    {"ENTRY e { a = f32[] parameter(0)\n ROOT b = f32[] add(a, a,) }\n",
     "t.hlo:2:25: error: unexpected ',' in the operand list"},
    {"ENTRY e { a = f32[] parameter(0)\n ROOT b = f32[] add(a, negate(a,,)) }\n",
     "t.hlo:2:33: error: unexpected ',' in the operand list"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) expect_first(cases[i][0], cases[i][1]);
  /* Commas stay free inside literals. */
  expect_clean("ENTRY e { ROOT c = f32[3] constant({1, 2, 3}) }\n");
}
END_TEST

/* ---- Robustness: mutated modules never crash the verifier -------------------------- */

/* Replace the k-th run of digits of text by repl (malloc'd result). */
static char *replace_number(const char *text, int k, const char *repl) {
  const char *p = text;
  for (int i = 0; *p; i++) {
    while (*p && !(*p >= '0' && *p <= '9')) p++;
    if (!*p) break;
    const char *q = p;
    while (*q >= '0' && *q <= '9') q++;
    if (i == k) {
      size_t a = (size_t)(p - text), r = strlen(repl), b = strlen(q);
      char *out = malloc(a + r + b + 1);
      memcpy(out, text, a);
      memcpy(out + a, repl, r);
      memcpy(out + a + r, q, b + 1);
      return out;
    }
    p = q;
  }
  return NULL;
}

START_TEST(mutations) {
  /* Every number of every broken module replaced in turn by extreme values:
   * whatever parses must verify (or fail to) without crashing, overflowing
   * or leaking (sanitizer builds check the latter). */
  static const char *const vals[] = {"0", "1", "3", "9223372036854775807", "4611686018427387904"};
  char pat[4096];
  snprintf(pat, sizeof pat, "%s/tests/verify/*.hlo", HLV_SRCDIR);
  glob_t g;
  ck_assert_int_eq(glob(pat, 0, NULL, &g), 0);
  long runs = 0;
  for (size_t f = 0; f < g.gl_pathc; f++) {
    size_t len;
    char *text = tl_read_file(g.gl_pathv[f], &len);
    ck_assert_ptr_nonnull(text);
    for (int k = 0;; k++) {
      char *probe = replace_number(text, k, "0");
      if (!probe) break;
      free(probe);
      for (size_t v = 0; v < sizeof vals / sizeof vals[0]; v++) {
        char *mut = replace_number(text, k, vals[v]);
        HlcDiags d = {0};
        HloModule *m = hlp_parse(mut, strlen(mut), "m.hlo", &d);
        if (m) {
          hlp_verify(m, &d);
          hlp_module_free(m);
        }
        hlc_diags_clear(&d);
        free(mut);
        runs++;
      }
    }
    free(text);
  }
  globfree(&g);
  ck_assert_int_gt(runs, 1000);
}
END_TEST

int main(void) {
  Suite *s = suite_create("verify");
  TCase *tc = tcase_create("corpus");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, corpus_conformance);
  tcase_add_test(tc, corpus_evalcases);
  tcase_add_test(tc, corpus_bench);
  tcase_add_test(tc, corpus_samples);
  tcase_add_test(tc, corpus_tests);
  suite_add_tcase(s, tc);
  TCase *tb = tcase_create("broken");
  tcase_add_test(tb, broken_modules);
  tcase_add_test(tb, valid_odd_modules);
  tcase_add_test(tb, positions_and_messages);
  tcase_add_test(tb, extra_commas);
  tcase_add_test(tb, mutations);
  suite_add_tcase(s, tb);
  return tl_main(s);
}
