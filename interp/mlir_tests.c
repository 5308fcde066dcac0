/* mlir_tests.c: StableHLO interpreter test files (hlo_run_test_file): every
 * public function without arguments of every "// -----" part is translated
 * (stablehlo/), run, and its check.expect_* ops compared as StableHLO's
 * interpreter compares them (stablehlo/tests/CheckOps.cpp):
 *   expect_eq: every element equal (floats by value: NaN never equals);
 *   expect_almost_eq: equal, both NaN, or both finite within the tolerance
 *     (a zero against a non-zero is compared by distance too);
 *   expect_close: ULP distance within [min, max]; identical bits are 0 apart,
 *     two NaNs 0, a non-finite against anything else is infinitely far.
 * Complex elements compare part by part.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hlorun.h"
#include "interp/api.h"
#include "common/numeric.h"
#include "common/text.h"
#include "stablehlo/stablehlo.h"

static uint64_t bits_of(const unsigned char *p, size_t size) {
  uint64_t b = 0;
  memcpy(&b, p, size);   /* little-endian hosts */
  return b;
}

/* ULP distance of two reals of type t given as bit patterns. */
static uint64_t ulp_diff(HloDtype t, uint64_t a, uint64_t b) {
  if (a == b) return 0;
  double x = hlc_float_bits_to_f64(t, a), y = hlc_float_bits_to_f64(t, b);
  if (isfinite(x) && isfinite(y)) {
    int bits = hlc_dtype_bits(t);
    uint64_t sign = (uint64_t)1 << (bits - 1);
    uint64_t ma = a & (sign - 1), mb = b & (sign - 1);
    if (signbit(x) != signbit(y)) return ma + mb;
    return ma > mb ? ma - mb : mb - ma;
  }
  if (isnan(x) && isnan(y)) return 0;
  return UINT64_MAX;
}

static bool almost_eq(double f, double g, double tol) {
  if (f == g) return true;
  if (isnan(f) || isnan(g)) return isnan(f) && isnan(g);
  if (!(isfinite(f) && f != 0) || !(isfinite(g) && g != 0))
    if (f != 0 && g != 0) return false;
  if (!isfinite(f) || !isfinite(g)) return false;
  return fabs(f - g) <= tol;
}

/* Does element i of a and b pass check c? */
static bool element_ok(const ShCheck *c, HloDtype t, const unsigned char *a, const unsigned char *b) {
  if (hlc_dtype_is_complex(t)) {
    HloDtype part = t == HLO_C64 ? HLO_F32 : HLO_F64;
    size_t ps = hlc_dtype_size(part);
    return element_ok(c, part, a, b) && element_ok(c, part, a + ps, b + ps);
  }
  size_t size = hlc_dtype_size(t);
  if (!hlc_dtype_is_float(t)) {
    if (c->kind != SHC_EQ) return false;   /* almost_eq/close take floats only */
    return memcmp(a, b, size) == 0;
  }
  uint64_t ba = bits_of(a, size), bb = bits_of(b, size);
  double x = hlc_float_bits_to_f64(t, ba), y = hlc_float_bits_to_f64(t, bb);
  switch (c->kind) {
  case SHC_EQ: return x == y;
  case SHC_ALMOST_EQ: return almost_eq(x, y, c->tolerance);
  case SHC_CLOSE: {
    uint64_t d = ulp_diff(t, ba, bb);
    return d <= c->max_ulp && d >= c->min_ulp;
  }
  }
  return false;
}

static void element_text(HloDtype t, const unsigned char *p, char *buf, size_t n) {
  hlc_format_element(t, p, buf, n);
}

/* Compare one check's two values; report the first differing elements. */
static bool compare(HlcText *r, const char *file, const char *func, const ShCheck *c, const HloBuffer *a,
                    const HloBuffer *b) {
  HloDtype t = hlc_dtype_from_xla_code((int)hlo_buffer_type(a));
  int64_t n = hlo_buffer_num_elements(a);
  if (t == HLO_DTYPE_INVALID || hlo_buffer_type(b) != hlo_buffer_type(a) || hlo_buffer_num_elements(b) != n) {
    hlc_text_printf(r, "%s:%d: %s failed in @%s: the values differ in type or shape\n", file, c->line, c->what, func);
    return false;
  }
  if (c->kind != SHC_EQ && !hlc_dtype_is_float(t) && !hlc_dtype_is_complex(t)) {
    hlc_text_printf(r, "%s:%d: %s in @%s: element type %s is not a floating-point type\n", file, c->line, c->what, func,
        hlc_dtype_name(t));
    return false;
  }
  const unsigned char *pa = hlo_buffer_data(a), *pb = hlo_buffer_data(b);
  size_t es = hlc_dtype_size(t);
  int rank = hlo_buffer_rank(a);
  const int64_t *dims = hlo_buffer_dims(a);
  int shown = 0, bad = 0;
  for (int64_t i = 0; i < n; i++) {
    if (element_ok(c, t, pa + (size_t)i * es, pb + (size_t)i * es)) continue;
    if (bad++ == 0) hlc_text_printf(r, "%s:%d: %s failed in @%s:\n", file, c->line, c->what, func);
    if (shown < 8) {
      char idx[256] = "", x[128], y[128];
      int64_t rem = i;
      size_t o = 0;
      for (int d = rank - 1; d >= 0; d--) {   /* row-major index, built backwards */
        int64_t v = dims[d] ? rem % dims[d] : 0;
        rem = dims[d] ? rem / dims[d] : 0;
        char one[32];
        int k = snprintf(one, sizeof one, d == rank - 1 ? "%lld" : "%lld,", (long long)v);
        if (o + (size_t)k + 1 < sizeof idx) {
          memmove(idx + k, idx, o + 1);
          memcpy(idx, one, (size_t)k);
          o += (size_t)k;
        }
      }
      element_text(t, pa + (size_t)i * es, x, sizeof x);
      element_text(t, pb + (size_t)i * es, y, sizeof y);
      hlc_text_printf(r, "  [%s]: got %s, expected %s\n", idx, x, y);
      shown++;
    }
  }
  if (bad > shown) hlc_text_printf(r, "  ... %d elements differ in all\n", bad);
  return bad == 0;
}

/* Parse, verify and compile one HLO text of a test. */
static HloStatus build(HloCtx *ctx, const HloRunOptions *opts, const char *text, size_t len, const char *name,
                       HloModule **m, HloExecutable **e) {
  HloStatus st = hlo_module_parse(ctx, text, len, name, m);
  if (st == HLO_OK) st = hlo_module_verify(ctx, *m);
  if (st == HLO_OK) st = hlo_compile(ctx, *m, opts, e);
  return st;
}

/* The steps before the test function of an interpreter.run_parallel
 * (stablehlo.h, ShTest): its operands, then every device's program; the
 * devices' results, in order, go to *params (t->par_devices *
 * t->par_nresults of them). */
static HloStatus run_parallel(HloCtx *ctx, const HloRunOptions *opts, const ShTest *t, const char *name,
                              HloBuffer **params) {
  HloModule *pm = NULL, *dm = NULL;
  HloExecutable *pe = NULL, *de = NULL;
  HloBuffer *ops = NULL;
  int nd = t->par_devices, nin = nd * t->par_nargs;
  HloBuffer **in = calloc((size_t)nin + 1, sizeof *in), **res = calloc((size_t)nd, sizeof *res);
  HloStatus st = in && res ? HLO_OK : HLO_NOMEM;
  if (st == HLO_OK) st = build(ctx, opts, t->pre, t->pre_len, name, &pm, &pe);
  if (st == HLO_OK) st = hlo_execute(pe, NULL, 0, &ops);
  for (int i = 0; st == HLO_OK && i < nin; i++) st = hlo_buffer_tuple_element(ctx, ops, i, &in[i]);
  if (st == HLO_OK) st = build(ctx, opts, t->par, t->par_len, name, &dm, &de);
  if (st == HLO_OK && hlo_executable_num_devices(de) != nd)
    st = hli_api_fail(ctx, HLO_RUNTIME_ERROR, "%s: interpreter.run_parallel: the program runs on %d devices, not %d",
                      name, hlo_executable_num_devices(de), nd);
  if (st == HLO_OK) st = hlo_execute_devices(de, in, t->par_nargs, res);
  for (int d = 0; st == HLO_OK && d < nd; d++) {
    HloBuffer **out = params + (size_t)d * (size_t)t->par_nresults;
    if (hlo_buffer_type(res[d]) != HLO_TYPE_TUPLE) {
      out[0] = res[d];   /* one result, not a tuple */
      res[d] = NULL;
      continue;
    }
    for (int k = 0; st == HLO_OK && k < t->par_nresults; k++) st = hlo_buffer_tuple_element(ctx, res[d], k, &out[k]);
  }
  for (int i = 0; in && i < nin; i++) hlo_buffer_free(in[i]);
  for (int d = 0; res && d < nd; d++) hlo_buffer_free(res[d]);
  free(in);
  free(res);
  hlo_buffer_free(ops);
  hlo_executable_free(pe);
  hlo_executable_free(de);
  hlo_module_free(pm);
  hlo_module_free(dm);
  return st;
}

static void run_one(HloCtx *ctx, const HloRunOptions *opts, const char *file, const ShTest *t, int *passed,
                    int *failed, HlcText *r) {
  if (!t->hlo) {
    hlc_text_printf(r, "%s:%d: @%s could not be translated:\n%s", file, t->line, t->func, t->error ? t->error : "");
    (*failed)++;
    return;
  }
  HloModule *m = NULL;
  HloExecutable *e = NULL;
  HloBuffer *res = NULL;
  hlo_ctx_clear_diagnostics(ctx);
  char *name = malloc(strlen(file) + strlen(t->func) + 8);
  if (name) sprintf(name, "%s @%s", file, t->func);
  int np = t->pre ? t->par_devices * t->par_nresults : 0;
  HloBuffer **params = calloc((size_t)np + 1, sizeof *params);
  HloStatus st = params ? HLO_OK : HLO_NOMEM;
  if (st == HLO_OK && t->pre) st = run_parallel(ctx, opts, t, name ? name : file, params);
  if (st == HLO_OK) st = build(ctx, opts, t->hlo, t->hlo_len, name ? name : file, &m, &e);
  if (st == HLO_OK) st = hlo_execute(e, params, np, &res);
  if (st != HLO_OK) {
    const char *d = hlo_ctx_diagnostics(ctx);
    hlc_text_printf(r, "%s:%d: @%s could not run:\n%s", file, t->line, t->func, d && *d ? d : "(no diagnostic)\n");
    (*failed)++;
  } else {
    for (int k = 0; k < t->nchecks; k++) {
      HloBuffer *a = NULL, *b = NULL;
      if (hlo_buffer_tuple_element(ctx, res, 2 * k, &a) == HLO_OK &&
          hlo_buffer_tuple_element(ctx, res, 2 * k + 1, &b) == HLO_OK && compare(r, file, t->func, &t->checks[k], a, b))
        (*passed)++;
      else
        (*failed)++;
      hlo_buffer_free(a);
      hlo_buffer_free(b);
    }
  }
  hlo_ctx_clear_diagnostics(ctx);
  free(name);
  for (int i = 0; params && i < np; i++) hlo_buffer_free(params[i]);
  free(params);
  hlo_buffer_free(res);
  hlo_executable_free(e);
  hlo_module_free(m);
}

int hlo_is_test_file(const char *text, size_t len) {
  return text && shlo_looks_like_mlir(text, len) && shlo_is_test_file(text, len);
}

HloStatus hlo_run_test_file(HloCtx *ctx, const char *path, const HloRunOptions *opts, int *passed, int *failed,
                            char **report) {
  if (!ctx || !path || !passed || !failed) return HLO_INVALID_ARGUMENT;
  *passed = *failed = 0;
  if (report) *report = NULL;
  char *data = NULL;
  size_t len = 0;
  HloStatus st = hli_read_file(ctx, path, &data, &len);
  if (st != HLO_OK) return st;
  const char *file = strcmp(path, "-") == 0 ? "<stdin>" : path;
  ShTests tests;
  if (shlo_tests(data, len, file, &ctx->diags, &tests) != 0) {
    free(data);
    return HLO_PARSE_ERROR;
  }
  HlcText r = {0};
  for (int i = 0; i < tests.n; i++) run_one(ctx, opts, file, &tests.v[i], passed, failed, &r);
  shlo_tests_free(&tests);
  free(data);
  if (report) *report = r.p ? r.p : strdup("");
  else free(r.p);
  return HLO_OK;
}
