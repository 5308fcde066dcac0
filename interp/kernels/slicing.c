/* slicing.c: static windows into and out of arrays: slice (start, limit,
 * stride), concatenate (one dimension), reverse (any dims) and pad (edge
 * padding that may be negative, and interior padding). Each is one strided
 * copy plan per operand (strided.c), except pad, which writes its result
 * line by line.
 * Runtime-positioned windows are in dynamic_slice.c. */
#include "interp/kernels/movement.h"
#include "interp/kernels/stream.h"
#include <string.h>

/* ---- slice ------------------------------------------------------------------ */

int hlk_slice_check(HliExec *x, const HloInstr *ins) {
  if (hlk_check_operands(x, ins, 1) != 0) return -1;
  const HloShape *o = &ins->ops[0]->shape;
  if (!ins->slice && o->rank > 0) return hli_fail(x, ins, "missing slice={...}");
  int64_t dims[HLK_MAX_RANK];
  for (int i = 0; i < o->rank; i++) {
    HloSliceDim s = ins->slice[i];
    if (s.stride < 1 || s.start < 0 || s.start > s.limit || s.limit > o->dims[i])
      return hli_fail(x, ins, "slice [%lld:%lld:%lld] invalid for dimension %d of size %lld",
                      (long long)s.start, (long long)s.limit, (long long)s.stride, i,
                      (long long)o->dims[i]);
    dims[i] = s.limit == s.start ? 0 : (s.limit - s.start - 1) / s.stride + 1;
  }
  return hlk_check_result(x, ins, o->dtype, o->rank, dims);
}

int hlk_slice(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HliValue *a = in[0];
  size_t es = hlc_dtype_size(a->dtype);
  int64_t astr[HLK_MAX_RANK], ss[HLK_MAX_RANK], ds[HLK_MAX_RANK], off = 0;
  hlk_byte_strides(a->dims, a->rank, es, astr);
  hlk_byte_strides(out->dims, out->rank, es, ds);
  for (int i = 0; i < a->rank; i++) {
    off += ins->slice[i].start * astr[i];
    /* A stride matters only when it is taken (it may be huge otherwise). */
    ss[i] = out->dims[i] > 1 ? ins->slice[i].stride * astr[i] : 0;
  }
  HlkPlan p;
  hlk_plan_init(&p, out->rank, out->dims, ds, ss, es);
  if (!p.empty) hlk_plan_run_par(x, &p, out->data, (const char *)a->data + off);
  return 0;
}

/* ---- concatenate -------------------------------------------------------------- */

int hlk_concatenate_check(HliExec *x, const HloInstr *ins) {
  if (ins->nops < 1) return hli_fail(x, ins, "expects at least one operand");
  if (hlk_check_operands(x, ins, ins->nops) != 0) return -1;
  if (ins->dimensions.n != 1)
    return hli_fail(x, ins, "dimensions must name exactly one dimension");
  const HloShape *o = &ins->ops[0]->shape;
  int64_t d = ins->dimensions.v[0];
  if (d < 0 || d >= o->rank)
    return hli_fail(x, ins, "dimension %lld out of range for rank %d", (long long)d,
                    (int)o->rank);
  int64_t dims[HLK_MAX_RANK];
  memcpy(dims, o->dims, sizeof dims[0] * (size_t)o->rank);
  for (int k = 1; k < ins->nops; k++) {
    const HloShape *s = &ins->ops[k]->shape;
    if (s->dtype != o->dtype || s->rank != o->rank)
      return hli_fail(x, ins, "operand %d has a different type or rank", k);
    for (int i = 0; i < o->rank; i++)
      if (i != d && s->dims[i] != o->dims[i])
        return hli_fail(x, ins, "operand %d differs in dimension %d", k, i);
    dims[d] += s->dims[d];
  }
  return hlk_check_result(x, ins, o->dtype, o->rank, dims);
}

int hlk_concatenate(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  int d = (int)ins->dimensions.v[0];
  size_t es = hlc_dtype_size(out->dtype);
  int64_t ds[HLK_MAX_RANK], ss[HLK_MAX_RANK];
  hlk_byte_strides(out->dims, out->rank, es, ds);
  int64_t at = 0;
  for (int k = 0; k < ins->nops; k++) {
    const HliValue *a = in[k];
    hlk_byte_strides(a->dims, a->rank, es, ss);
    HlkPlan p;
    hlk_plan_init(&p, a->rank, a->dims, ds, ss, es);
    p.stream = out->nbytes >= HLK_STREAM_BYTES;   /* the whole result's size decides */
    if (!p.empty) hlk_plan_run_par(x, &p, (char *)out->data + at * ds[d], a->data);
    at += a->dims[d];
  }
  return 0;
}

/* ---- reverse ---------------------------------------------------------------------- */

int hlk_reverse_check(HliExec *x, const HloInstr *ins) {
  if (hlk_check_operands(x, ins, 1) != 0) return -1;
  const HloShape *o = &ins->ops[0]->shape;
  if (hlk_check_dim_list(x, ins, &ins->dimensions, o->rank, false, "dimensions") != 0) return -1;
  return hlk_check_result(x, ins, o->dtype, o->rank, o->dims);
}

/* Reversed dims read the operand backwards from their last element. */
int hlk_reverse(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HliValue *a = in[0];
  size_t es = hlc_dtype_size(a->dtype);
  int64_t ss[HLK_MAX_RANK], ds[HLK_MAX_RANK], off = 0;
  hlk_byte_strides(a->dims, a->rank, es, ss);
  hlk_byte_strides(out->dims, out->rank, es, ds);
  if (out->nelem == 0) return 0;
  for (int k = 0; k < ins->dimensions.n; k++) {
    int i = (int)ins->dimensions.v[k];
    off += (a->dims[i] - 1) * ss[i];
    ss[i] = -ss[i];
  }
  HlkPlan p;
  hlk_plan_init(&p, out->rank, out->dims, ds, ss, es);
  hlk_plan_run_par(x, &p, out->data, (const char *)a->data + off);
  return 0;
}

/* ---- pad ---------------------------------------------------------------------------- */

int hlk_pad_check(HliExec *x, const HloInstr *ins) {
  if (hlk_check_operands(x, ins, 2) != 0) return -1;
  const HloShape *o = &ins->ops[0]->shape, *v = &ins->ops[1]->shape;
  if (v->rank != 0 || v->dtype != o->dtype)
    return hli_fail(x, ins, "the padding value must be a %s scalar", hlc_dtype_name(o->dtype));
  if (!ins->padding && o->rank > 0) return hli_fail(x, ins, "missing padding=");
  int64_t dims[HLK_MAX_RANK];
  for (int i = 0; i < o->rank; i++) {
    HloPadDim p = ins->padding[i];
    if (p.interior < 0) return hli_fail(x, ins, "negative interior padding in dimension %d", i);
    /* Keep every intermediate of the run far from int64 overflow. */
    const int64_t big = INT64_C(1) << 62;
    if (p.lo < -big || p.lo > big || p.hi < -big || p.hi > big || p.interior > big)
      return hli_unsupported(x, ins, "padding of dimension %d beyond 2^62", i);
    int64_t n = o->dims[i], in = 0;
    /* Attributes come from the text: any int64, so check for overflow. */
    if ((n > 0 && __builtin_mul_overflow(n - 1, p.interior, &in)) ||
        __builtin_add_overflow(in, n, &dims[i]) || __builtin_add_overflow(dims[i], p.lo, &dims[i]) ||
        __builtin_add_overflow(dims[i], p.hi, &dims[i]))
      return hli_fail(x, ins, "padding of dimension %d overflows", i);
    if (dims[i] < 0)
      return hli_fail(x, ins, "padding makes dimension %d negative (%lld)", i,
                      (long long)dims[i]);
  }
  return hlk_check_result(x, ins, o->dtype, o->rank, dims);
}

/* Pad writes each result byte once, by lines. k is the innermost dim with
 * any padding; the dims after it are copied whole, as blocks of B elements.
 * A line is one position of the dims before k: it is all padding when that
 * position falls in another dim's padding or interior gap, and otherwise
 * the operand's blocks along k (a gap of `interior` blocks between them)
 * with padding before and after; negative lo/hi drop operand blocks. */
typedef struct PadDim {
  int64_t lo, g, n;        /* result index lo + j*g holds operand index j < n */
} PadDim;

typedef struct PadJob {
  int k;                   /* the lined dim */
  PadDim pd[HLK_MAX_RANK];
  const int64_t *odims;
  int64_t sstr[HLK_MAX_RANK];   /* operand byte strides */
  size_t es;
  int64_t block;           /* bytes of one block (the dims after k) */
  const char *src;
  const char *val;         /* the padding value */
  char *dst;
  int64_t first, cnt;      /* the operand blocks along k that land in the result */
} PadJob;

/* The operand index that result index o of a dim holds, or -1 (padding). */
static int64_t pad_source(const PadDim *d, int64_t o) {
  int64_t r = o - d->lo;
  if (r < 0 || r % d->g) return -1;
  return r / d->g < d->n ? r / d->g : -1;
}

static void pad_fill(const PadJob *j, char *d, int64_t bytes) {
  hlk_fill(d, j->val, bytes / (int64_t)j->es, j->es);
}

static void pad_lines(void *arg, int64_t lo, int64_t hi) {
  const PadJob *j = arg;
  int k = j->k;
  int64_t line = j->odims[k] * j->block;
  for (int64_t l = lo; l < hi; l++) {
    char *d = j->dst + l * line;
    const char *s = j->src;
    bool pad = j->cnt == 0;
    for (int64_t rest = l, i = k - 1; i >= 0 && !pad; i--) {   /* unravel l */
      int64_t src = pad_source(&j->pd[i], rest % j->odims[i]);
      rest /= j->odims[i];
      pad = src < 0;
      if (!pad) s += src * j->sstr[i];
    }
    if (pad) {
      pad_fill(j, d, line);
      continue;
    }
    const PadDim *pk = &j->pd[k];
    int64_t at = pk->lo + j->first * pk->g;   /* result index of the first block */
    pad_fill(j, d, at * j->block);
    s += j->first * j->sstr[k];
    if (pk->g == 1) {
      memcpy(d + at * j->block, s, (size_t)(j->cnt * j->block));
      at += j->cnt;
    } else {
      for (int64_t b = 0; b < j->cnt; b++, at += pk->g, s += j->sstr[k]) {
        memcpy(d + at * j->block, s, (size_t)j->block);
        if (b + 1 < j->cnt) pad_fill(j, d + (at + 1) * j->block, (pk->g - 1) * j->block);
      }
      at -= pk->g - 1;
    }
    pad_fill(j, d + at * j->block, (j->odims[k] - at) * j->block);
  }
}

int hlk_pad(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HliValue *a = in[0];
  size_t es = hlc_dtype_size(a->dtype);
  if (out->nelem == 0) return 0;
  if (a->rank == 0) {
    memcpy(out->data, a->data, es);
    return 0;
  }
  PadJob j = {.odims = out->dims, .es = es, .src = a->data, .val = in[1]->data, .dst = out->data};
  hlk_byte_strides(a->dims, a->rank, es, j.sstr);
  j.k = 0;
  for (int i = 0; i < a->rank; i++) {
    HloPadDim p = ins->padding[i];
    j.pd[i] = (PadDim){p.lo, p.interior + 1, a->dims[i]};
    if (p.lo || p.hi || p.interior) j.k = i;
  }
  j.block = (int64_t)es;
  for (int i = j.k + 1; i < a->rank; i++) j.block *= out->dims[i];
  /* The operand blocks along k inside the result: j with 0 <= lo + j*g <
   * the result's extent. */
  const PadDim *pk = &j.pd[j.k];
  int64_t first = pk->lo < 0 ? (-pk->lo + pk->g - 1) / pk->g : 0;
  int64_t end = out->dims[j.k] - pk->lo <= 0 ? 0 : (out->dims[j.k] - pk->lo - 1) / pk->g + 1;
  if (end > pk->n) end = pk->n;
  j.first = first;
  j.cnt = end > first ? end - first : 0;
  int64_t lines = out->nelem * (int64_t)es / (out->dims[j.k] * j.block);
  int64_t per = out->dims[j.k] * j.block;
  hli_parallel_for(x, lines, per >= (1 << 16) ? 1 : (1 << 16) / per, pad_lines, &j);
  return 0;
}
