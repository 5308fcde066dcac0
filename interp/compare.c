/* compare.c: comparing a result with a golden value (hlorun --expect).
 *
 * An element passes when it equals want, when |got - want| <= atol + rtol *
 * |want|, or (max_ulp
 * > 0) when both are finite and at most max_ulp representable values of
 * their type apart; NaN matches NaN, infinities must be equal (a
 * non-finite value never matches a finite one), +0 equals -0; complex
 * numbers compare part by part; integers, pred and other bit patterns
 * compare exactly. The report
 * is meant to be read at a glance:
 *   mismatch: 2 of 6 elements differ (33.3%; f32[2,3]; rtol=0.0001 atol=0.0001)
 *    largest absolute error 1 at [0,2]; largest relative error 0.5 at [0,2]
 *     at [0,2]  got 3  want 2  abs err 1  rel err 0.5
 *     at [1,0]  got 5  want 4  abs err 1  rel err 0.25
 * (largest errors among the differing elements; tuple leaves are written
 * {leaf}[index]; the first max_report differences are listed, aligned). */
#include "interp/api.h"
#include "interp/valio.h"
#include "common/numeric.h"
#include "interp/diverge.h"
#include <math.h>
#include <stdio.h>
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

/* The tolerance of one leaf, its type's defaults resolved. */
typedef struct HliTolerance { double rtol, atol; int64_t max_ulp; } HliTolerance;

/* One reported difference. */
typedef struct Diff {
  int32_t leaf;
  char where[160];           /* "[1,2]" (tuples: "{leaf}[1,2]") */
  char got[64], want[64];
  double abs_err, rel_err;   /* NaN when not meaningful (NaN/inf involved) */
} Diff;

typedef struct Stats {
  int64_t bad, total;
  double max_abs, max_rel;   /* over the differing elements */
  char max_abs_at[160], max_rel_at[160];
  int reported, max_report;
  Diff *diffs;               /* max_report entries */
} Stats;

static double load_part(HloDtype t, const void *p, int part) {
  if (t == HLO_C64) return ((const float *)p)[part];
  if (t == HLO_C128) return ((const double *)p)[part];
  if (t == HLO_F32) return *(const float *)p;
  if (t == HLO_F64) return *(const double *)p;
  uint64_t bits = hlc_dtype_size(t) == 2 ? *(const uint16_t *)p : *(const uint8_t *)p;
  return hlc_float_bits_to_f64(t, bits);
}

static bool close_enough(double g, double w, double rtol, double atol) {
  if (isnan(w) || isnan(g)) return isnan(w) && isnan(g);
  /* Equal values pass whatever the tolerance (as numpy's isclose): with
   * rtol = inf, 0 against 0 would otherwise be NaN <= ..., a failure. */
  if (g == w) return true;
  if (isinf(w) || isinf(g)) return false;
  return fabs(g - w) <= atol + rtol * fabs(w);
}

/* The type of one part of an element (complex: its real type). */
static HloDtype part_type(HloDtype t) {
  return t == HLO_C64 ? HLO_F32 : t == HLO_C128 ? HLO_F64 : t;
}

/* The bits of one part of a float or complex element. */
static uint64_t part_bits(HloDtype t, const void *p, int part) {
  switch (hlc_dtype_size(part_type(t))) {
  case 8: { uint64_t b; memcpy(&b, (const char *)p + 8 * part, 8); return b; }
  case 4: { uint32_t b; memcpy(&b, (const char *)p + 4 * part, 4); return b; }
  case 2: return *(const uint16_t *)p;
  default: return *(const uint8_t *)p & ((1u << hlc_dtype_bits(t)) - 1);
  }
}

/* How many representable values of t lie between two finite values'
 * bits: floats are sign and magnitude, so the magnitudes' distance on one
 * side of zero, their sum across it (+0 and -0 are both zero). */
uint64_t hli_ulp_distance(HloDtype t, uint64_t a, uint64_t b) {
  if (t == HLO_F8E8M0FNU) return a > b ? a - b : b - a;   /* no sign bit */
  uint64_t sign = 1ull << (hlc_dtype_bits(t) - 1);
  uint64_t ma = a & (sign - 1), mb = b & (sign - 1);
  if ((a & sign) != (b & sign)) return ma + mb;
  return ma > mb ? ma - mb : mb - ma;
}

/* want's part v as bits of got's part type pt (rounded); false when the
 * rounding leaves the finite range (a non-finite value never matches). */
static bool rounded_bits(HloDtype pt, double v, uint64_t *bits) {
  if (pt == HLO_F64) { memcpy(bits, &v, 8); return true; }
  if (pt == HLO_F32) {
    float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, 4);
    *bits = b;
    return isfinite(f);
  }
  *bits = hlc_float_bits_from_f64(pt, v);
  return isfinite(hlc_float_bits_to_f64(pt, *bits));
}

/* Does one part pass? The tolerance, or (max_ulp > 0) the distance in
 * representable values of got's type between two finite parts (a wider
 * want, as --reference-precision compares, is rounded to that type). */
static bool part_passes(HloDtype tg, HloDtype tw, const void *gp, const void *wp, int part,
                        double g, double w, const HliTolerance *tol) {
  if (close_enough(g, w, tol->rtol, tol->atol)) return true;
  if (tol->max_ulp <= 0 || !isfinite(g) || !isfinite(w)) return false;
  HloDtype pt = part_type(tg);
  uint64_t wb = part_bits(tw, wp, part);
  if (tw != tg && !rounded_bits(pt, w, &wb)) return false;
  return hli_ulp_distance(pt, part_bits(tg, gp, part), wb) <= (uint64_t)tol->max_ulp;
}

/* Error of one element pair (parts of complex numbers: the larger). */
static void errors_of(double g, double w, double *abs_err, double *rel_err) {
  double d = fabs(g - w);
  if (!isfinite(d)) { *abs_err = *rel_err = NAN; return; }
  *abs_err = d;
  *rel_err = w != 0 ? d / fabs(w) : NAN;
}

static void index_text(const HliValue *v, int32_t leaf, int32_t nleaves, int64_t i, char *buf,
                       size_t cap) {
  int64_t st[64];
  int32_t r = v->rank < 64 ? v->rank : 64;
  hli_strides(v->dims, r, st);
  size_t n = 0;
  if (nleaves > 1) n += (size_t)snprintf(buf + n, cap - n, "{%d}", (int)leaf);
  n += (size_t)snprintf(buf + n, cap > n ? cap - n : 0, "[");
  int64_t rem = i;
  for (int32_t k = 0; k < r && n < cap; k++) {
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", k ? "," : "", (long long)(rem / st[k]));
    rem %= st[k];
  }
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

static void note_bad(Stats *s, const HliValue *v, HloDtype tg, int32_t leaf, int32_t nleaves,
                     int64_t i, const void *g, const void *w, double abs_err, double rel_err) {
  s->bad++;
  bool want_at = s->reported < s->max_report || (!isnan(abs_err) && abs_err > s->max_abs) ||
                 (!isnan(rel_err) && rel_err > s->max_rel);
  char at[160] = "";
  if (want_at) index_text(v, leaf, nleaves, i, at, sizeof at);
  if (!isnan(abs_err) && abs_err > s->max_abs) { s->max_abs = abs_err; strcpy(s->max_abs_at, at); }
  if (!isnan(rel_err) && rel_err > s->max_rel) { s->max_rel = rel_err; strcpy(s->max_rel_at, at); }
  if (s->reported >= s->max_report) return;
  Diff *d = &s->diffs[s->reported++];
  d->leaf = leaf;
  strcpy(d->where, at);
  hlc_format_element(tg, g, d->got, sizeof d->got);
  hlc_format_element(v->dtype, w, d->want, sizeof d->want);
  d->abs_err = abs_err;
  d->rel_err = rel_err;
}

/* Elements [i0, i1) one by one; got may be of a narrower float type than
 * want (the same kind). */
static void compare_elements(const HliValue *g, const HliValue *w, const HliTolerance *tol,
                             int32_t leaf, int32_t nleaves, int64_t i0, int64_t i1, Stats *s) {
  HloDtype tg = g->dtype, tw = w->dtype;
  size_t eg = hlc_dtype_size(tg), ew = hlc_dtype_size(tw);
  const char *gp = g->data, *wp = w->data;
  bool fl = hlc_dtype_is_float(tw), cx = hlc_dtype_is_complex(tw);
  for (int64_t i = i0; i < i1; i++) {
    const void *ge = gp + (size_t)i * eg, *we = wp + (size_t)i * ew;
    if (fl || cx) {
      double g0 = load_part(tg, ge, 0), w0 = load_part(tw, we, 0);
      bool ok = part_passes(tg, tw, ge, we, 0, g0, w0, tol);
      double g1 = 0, w1 = 0;
      if (cx) {
        g1 = load_part(tg, ge, 1);
        w1 = load_part(tw, we, 1);
        ok &= part_passes(tg, tw, ge, we, 1, g1, w1, tol);
      }
      if (ok) continue;
      double a0, r0, a1 = 0, r1 = 0;
      errors_of(g0, w0, &a0, &r0);
      if (cx) {
        errors_of(g1, w1, &a1, &r1);
        if (isnan(a0) || a1 > a0) a0 = a1;
        if (isnan(r0) || r1 > r0) r0 = r1;
      }
      note_bad(s, w, tg, leaf, nleaves, i, ge, we, a0, r0);
    } else if (memcmp(ge, we, ew) != 0) {
      double gv = (double)hlc_load_i64(tw, ge), wv = (double)hlc_load_i64(tw, we);
      double d = fabs(gv - wv);
      note_bad(s, w, tg, leaf, nleaves, i, ge, we, d, wv != 0 ? d / fabs(wv) : NAN);
    }
  }
}

/* Bytes compared at once by memcmp before the element loop. */
enum { BLOCK_BYTES = 4096 };

/* One leaf. A --reference search mostly compares bit-identical values: of
 * the same type, equal blocks of bytes count as passing without the
 * element loop, which runs only for the blocks that differ (in order, so
 * the report is the same). */
static void compare_leaf(const HliValue *g, const HliValue *w, const HliTolerance *tol,
                         int32_t leaf, int32_t nleaves, Stats *s) {
  s->total += w->nelem;
  /* Equal bits of one type are equal values (or the same NaN): they pass. */
  if (g->dtype != w->dtype) {
    compare_elements(g, w, tol, leaf, nleaves, 0, w->nelem, s);
    return;
  }
  size_t es = hlc_dtype_size(w->dtype);
  int64_t per = es && es < BLOCK_BYTES ? (int64_t)(BLOCK_BYTES / es) : 1;   /* es 0: tokens */
  const char *gp = g->data, *wp = w->data;
  for (int64_t i = 0; i < w->nelem; i += per) {
    int64_t n = w->nelem - i < per ? w->nelem - i : per;
    if (memcmp(gp + (size_t)i * es, wp + (size_t)i * es, (size_t)n * es) != 0)
      compare_elements(g, w, tol, leaf, nleaves, i, i + n, s);
  }
}

static int width_of(const char *s) { return (int)strlen(s); }

/* "mismatch: K of N elements (P%) differ (SHAPE; TOLERANCE)", the largest
 * errors and where, then one aligned line per reported difference. */
static void write_report(HlcText *rep, const Stats *s, const HliValue *want, const char *tol) {
  HlcText shape = {0};
  hlp_print_shape(&shape, want->shape, false);
  hlc_text_printf(rep, "mismatch: %lld of %lld elements differ (%.3g%%; %s; %s)\n", (long long)s->bad,
                 (long long)s->total, s->total ? 100.0 * (double)s->bad / (double)s->total : 0.0,
                 shape.p ? shape.p : "?", tol);
  hlc_text_free(&shape);
  if (s->max_abs_at[0] || s->max_rel_at[0]) {
    hlc_text_puts(rep, " ");
    if (s->max_abs_at[0])
      hlc_text_printf(rep, " largest absolute error %g at %s", s->max_abs, s->max_abs_at);
    if (s->max_rel_at[0])
      hlc_text_printf(rep, "%s largest relative error %.3g at %s", s->max_abs_at[0] ? ";" : "",
                     s->max_rel, s->max_rel_at);
    hlc_text_puts(rep, "\n");
  }
  int ww = 0, wg = 0, wv = 0;
  for (int i = 0; i < s->reported; i++) {
    const Diff *d = &s->diffs[i];
    if (width_of(d->where) > ww) ww = width_of(d->where);
    if (width_of(d->got) > wg) wg = width_of(d->got);
    if (width_of(d->want) > wv) wv = width_of(d->want);
  }
  for (int i = 0; i < s->reported; i++) {
    const Diff *d = &s->diffs[i];
    hlc_text_printf(rep, "  at %-*s  got %-*s  want %-*s", ww, d->where, wg, d->got, wv, d->want);
    if (!isnan(d->abs_err)) hlc_text_printf(rep, "  abs err %g", d->abs_err);
    if (!isnan(d->rel_err)) hlc_text_printf(rep, "  rel err %.3g", d->rel_err);
    while (rep->n && rep->p[rep->n - 1] == ' ') rep->n--;
    hlc_text_puts(rep, "\n");
  }
  if (s->bad > s->reported)
    hlc_text_printf(rep, "  ... and %lld more\n", (long long)(s->bad - s->reported));
}

int hli_compare_values(const HliValue *got, const HliValue *want, const HloCompareOptions *opts,
                       int max_report, HliCompareSummary *sum, HlcText *report) {
  memset(sum, 0, sizeof *sum);
  int32_t ng, nw;
  HliValue **gl = hli_value_leaves((HliValue *)got, &ng), **wl = hli_value_leaves((HliValue *)want, &nw);
  if (max_report < 1) max_report = 1;
  Diff *diffs = calloc((size_t)max_report, sizeof *diffs);
  if (!gl || !wl || !diffs || ng != nw) {
    free(gl); free(wl); free(diffs);
    return -1;
  }
  Stats s = {0};
  s.max_report = max_report;
  s.diffs = diffs;
  /* The tolerance in words: one for all leaves, else "per-type tolerances". */
  char tol[128] = "", one[128];
  bool mixed = false;
  for (int32_t i = 0; i < nw; i++) {
    if (gl[i]->dtype != wl[i]->dtype && hlc_dtype_kind(gl[i]->dtype) != hlc_dtype_kind(wl[i]->dtype))
      continue;   /* callers pass compatible shapes; never read a leaf as another kind */
    /* The tolerance of got's type: a wider want is the exact value got
     * approximates (--reference-precision). */
    HliTolerance t = {0, 0, 0};
    hlo_default_tolerance((HloElementType)hlc_dtype_xla_code(gl[i]->dtype), &t.rtol, &t.atol);
    bool inexact = hlc_dtype_is_float(gl[i]->dtype) || hlc_dtype_is_complex(gl[i]->dtype);
    if (inexact && opts->rtol >= 0) t.rtol = opts->rtol;
    if (inexact && opts->atol >= 0) t.atol = opts->atol;
    if (inexact) t.max_ulp = opts->max_ulp > 0 ? opts->max_ulp : 0;
    int n = 0;
    if (inexact && (t.rtol > 0 || t.atol > 0))
      n = snprintf(one, sizeof one, "rtol=%g atol=%g", t.rtol, t.atol);
    if (t.max_ulp > 0) snprintf(one + n, sizeof one - (size_t)n, "%sulp=%lld", n ? " " : "", (long long)t.max_ulp);
    else if (n == 0) snprintf(one, sizeof one, "exact");
    if (i == 0) strcpy(tol, one);
    else if (strcmp(tol, one) != 0) mixed = true;
    compare_leaf(gl[i], wl[i], &t, i, nw, &s);
  }
  if (mixed) strcpy(tol, "per-type tolerances");
  free(gl);
  free(wl);
  sum->bad = s.bad;
  sum->total = s.total;
  sum->max_abs = s.max_abs;
  sum->max_rel = s.max_rel;
  strcpy(sum->max_abs_at, s.max_abs_at);
  strcpy(sum->max_rel_at, s.max_rel_at);
  if (s.reported > 0) {
    strcpy(sum->first_at, diffs[0].where);
    strcpy(sum->first_got, diffs[0].got);
    strcpy(sum->first_want, diffs[0].want);
  }
  /* The shape named is the compared one (got's, when want is wider). */
  if (s.bad && report) write_report(report, &s, got->dtype == want->dtype ? want : got, tol);
  free(diffs);
  return 0;
}

HloStatus hlo_buffer_compare(HloCtx *ctx, const HloBuffer *got, const HloBuffer *want,
                             const HloCompareOptions *opts, int64_t *mismatches, char **report_text) {
  if (!got || !want || !mismatches) return HLO_INVALID_ARGUMENT;
  HloCompareOptions o = {sizeof o, -1, -1, 0, 0};
  if (opts) memcpy(&o, opts, opts->struct_size < sizeof o ? opts->struct_size : sizeof o);
  o.struct_size = sizeof o;
  if (report_text) *report_text = NULL;
  HlcText rep = {0};
  if (!hlp_shape_compatible(got->v->shape, want->v->shape)) {
    HlcText a = {0}, b = {0};
    hlp_print_shape(&a, got->v->shape, false);
    hlp_print_shape(&b, want->v->shape, false);
    hlc_text_printf(&rep, "mismatch: the result has shape %s, the expected value %s\n",
                   a.p ? a.p : "?", b.p ? b.p : "?");
    hlc_text_free(&a);
    hlc_text_free(&b);
    *mismatches = -1;
    if (report_text) *report_text = rep.p;
    else hlc_text_free(&rep);
    return HLO_OK;
  }
  HliCompareSummary sum;
  if (hli_compare_values(got->v, want->v, &o, o.max_report > 0 ? o.max_report : 5, &sum,
                         report_text ? &rep : NULL) != 0) {
    hlc_text_free(&rep);
    return hli_api_fail(ctx, HLO_NOMEM, "out of memory");
  }
  *mismatches = sum.bad;
  if (sum.bad && report_text) *report_text = rep.p;
  else hlc_text_free(&rep);
  return HLO_OK;
}
