/* compare.c: comparing a result with a golden value (hlorun --expect).
 *
 * An element passes when |got - want| <= atol + rtol * |want|; NaN matches
 * NaN, infinities must be equal, +0 equals -0; complex numbers compare part
 * by part; integers, pred and other bit patterns compare exactly. The report
 * counts failing elements, gives the largest absolute and relative error and
 * lists the first few failures with their indices and both values. */
#include "interp/api.h"
#include "interp/valio.h"
#include "common/numeric.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void hlo_default_tolerance(HloElementType t, double *rtol, double *atol) {
  double r = 0, a = 0;
  switch (t) {
  case HLO_TYPE_F16: r = a = 5e-3; break;
  case HLO_TYPE_BF16: r = a = 5e-2; break;
  case HLO_TYPE_F32: case HLO_TYPE_C64: r = a = 1e-4; break;
  case HLO_TYPE_F64: case HLO_TYPE_C128: r = a = 1e-10; break;
  default: {
    HloDtype d = hlc_dtype_from_xla_code((int)t);
    if ((int)d >= 0 && hlc_dtype_is_float(d)) r = a = 1.25e-1;   /* 8- and 4-bit floats */
    break;
  }
  }
  if (rtol) *rtol = r;
  if (atol) *atol = a;
}

typedef struct Stats {
  int64_t bad, total;
  double max_abs, max_rel;
  int reported, max_report;
  HliBuf *rep;
} Stats;

static double load_part(HloDtype t, const void *p, int part) {
  if (t == HLO_C64) return ((const float *)p)[part];
  if (t == HLO_C128) return ((const double *)p)[part];
  if (t == HLO_F32) return *(const float *)p;
  if (t == HLO_F64) return *(const double *)p;
  uint64_t bits = hlc_dtype_size(t) == 2 ? *(const uint16_t *)p : *(const uint8_t *)p;
  return hlc_float_bits_to_f64(t, bits);
}

static bool close_enough(double g, double w, double rtol, double atol, Stats *s) {
  if (isnan(w) || isnan(g)) return isnan(w) && isnan(g);
  if (isinf(w) || isinf(g)) return g == w;
  double d = fabs(g - w);
  if (d > s->max_abs) s->max_abs = d;
  if (w != 0 && d / fabs(w) > s->max_rel) s->max_rel = d / fabs(w);
  return d <= atol + rtol * fabs(w);
}

static void report(Stats *s, const HliValue *v, int32_t leaf, int32_t nleaves, int64_t i,
                   const void *g, const void *w) {
  if (s->reported >= s->max_report) return;
  s->reported++;
  int64_t idx[64], st[64];
  hli_strides(v->dims, v->rank, st);
  int64_t rem = i;
  for (int32_t k = 0; k < v->rank && k < 64; k++) { idx[k] = rem / st[k]; rem %= st[k]; }
  hli_buf_puts(s->rep, "  at ");
  if (nleaves > 1) hli_buf_printf(s->rep, "leaf %d ", (int)leaf);
  hli_buf_put(s->rep, "[", 1);
  for (int32_t k = 0; k < v->rank && k < 64; k++)
    hli_buf_printf(s->rep, "%s%lld", k ? "," : "", (long long)idx[k]);
  char a[128], b[128];
  hlc_format_element(v->dtype, g, a, sizeof a);
  hlc_format_element(v->dtype, w, b, sizeof b);
  hli_buf_printf(s->rep, "]: got %s, want %s\n", a, b);
}

static void compare_leaf(const HliValue *g, const HliValue *w, double rtol, double atol,
                         int32_t leaf, int32_t nleaves, Stats *s) {
  HloDtype t = w->dtype;
  size_t es = hlc_dtype_size(t);
  const char *gp = g->data, *wp = w->data;
  bool fl = hlc_dtype_is_float(t), cx = hlc_dtype_is_complex(t);
  s->total += w->nelem;
  for (int64_t i = 0; i < w->nelem; i++) {
    const void *ge = gp + (size_t)i * es, *we = wp + (size_t)i * es;
    bool ok;
    if (cx)
      ok = close_enough(load_part(t, ge, 0), load_part(t, we, 0), rtol, atol, s) &
           close_enough(load_part(t, ge, 1), load_part(t, we, 1), rtol, atol, s);
    else if (fl)
      ok = close_enough(load_part(t, ge, 0), load_part(t, we, 0), rtol, atol, s);
    else
      ok = memcmp(ge, we, es) == 0;
    if (!ok) {
      s->bad++;
      if (!fl && !cx) {
        double d = fabs((double)hlc_load_i64(t, ge) - (double)hlc_load_i64(t, we));
        if (d > s->max_abs) s->max_abs = d;
        double wv = fabs((double)hlc_load_i64(t, we));
        if (wv != 0 && d / wv > s->max_rel) s->max_rel = d / wv;
      }
      report(s, w, leaf, nleaves, i, ge, we);
    }
  }
}

HloStatus hlo_buffer_compare(HloCtx *ctx, const HloBuffer *got, const HloBuffer *want,
                             const HloCompareOptions *opts, int64_t *mismatches, char **report_text) {
  if (!got || !want || !mismatches) return HLO_INVALID_ARGUMENT;
  HloCompareOptions o = {sizeof o, -1, -1, 0};
  if (opts) memcpy(&o, opts, opts->struct_size < sizeof o ? opts->struct_size : sizeof o);
  if (report_text) *report_text = NULL;
  HliBuf rep = {0}, body = {0};
  if (!hlp_shape_compatible(got->v->shape, want->v->shape)) {
    HliBuf a = {0}, b = {0};
    hli_shape_text(got->v->shape, &a);
    hli_shape_text(want->v->shape, &b);
    hli_buf_printf(&rep, "mismatch: the result has shape %s, the expected value %s\n",
                   a.data ? a.data : "?", b.data ? b.data : "?");
    hli_buf_free(&a);
    hli_buf_free(&b);
    *mismatches = -1;
    if (report_text) *report_text = rep.data;
    else hli_buf_free(&rep);
    return HLO_OK;
  }
  int32_t ng, nw;
  HliValue **gl = hli_value_leaves(got->v, &ng), **wl = hli_value_leaves(want->v, &nw);
  if (!gl || !wl) { free(gl); free(wl); return hli_api_fail(ctx, HLO_NOMEM, "out of memory"); }
  Stats s = {0, 0, 0, 0, 0, o.max_report > 0 ? o.max_report : 5, &body};
  for (int32_t i = 0; i < nw; i++) {
    double rt, at;
    hlo_default_tolerance((HloElementType)hlc_dtype_xla_code(wl[i]->dtype), &rt, &at);
    if (o.rtol >= 0) rt = o.rtol;
    if (o.atol >= 0) at = o.atol;
    compare_leaf(gl[i], wl[i], rt, at, i, nw, &s);
  }
  free(gl);
  free(wl);
  *mismatches = s.bad;
  if (s.bad && report_text) {
    hli_buf_printf(&rep, "mismatch: %lld of %lld elements differ; largest absolute error %g, "
                   "largest relative error %g\n", (long long)s.bad, (long long)s.total,
                   s.max_abs, s.max_rel);
    if (body.data) hli_buf_puts(&rep, body.data);
    if (s.bad > s.reported) hli_buf_printf(&rep, "  ... and %lld more\n", (long long)(s.bad - s.reported));
    *report_text = rep.data;
  } else {
    hli_buf_free(&rep);
  }
  hli_buf_free(&body);
  return HLO_OK;
}
