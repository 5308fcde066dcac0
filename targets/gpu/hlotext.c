/* hlotext.c: appending HLO text (shapes, lists, full-precision float
 * literals) to a growing buffer, for the equivalent modules the GPU
 * targets build. Out of memory is remembered and reported once. */
#include "targets/gpu/gpu.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hlt_gpu_text(GpuText *t, const char *fmt, ...) {
  if (t->oom) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (k < 0) { t->oom = true; return; }
  if (t->n + (size_t)k + 1 > t->cap) {
    size_t cap = (t->cap ? t->cap * 2 : 1024) + (size_t)k;
    char *s = realloc(t->s, cap);
    if (!s) { t->oom = true; return; }
    t->s = s;
    t->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
  va_end(ap);
  t->n += (size_t)k;
}

void hlt_gpu_text_list(GpuText *t, const int64_t *v, int n) {
  hlt_gpu_text(t, "{");
  for (int i = 0; i < n; i++) hlt_gpu_text(t, "%s%lld", i ? "," : "", (long long)v[i]);
  hlt_gpu_text(t, "}");
}

void hlt_gpu_text_shape(GpuText *t, HloDtype dt, const int64_t *dims, int rank) {
  hlt_gpu_text(t, "%s[", hlc_dtype_name(dt));
  for (int i = 0; i < rank; i++) hlt_gpu_text(t, "%s%lld", i ? "," : "", (long long)dims[i]);
  hlt_gpu_text(t, "]");
}

void hlt_gpu_text_double(GpuText *t, double v) {
  if (isnan(v))
    hlt_gpu_text(t, "nan");
  else if (isinf(v))
    hlt_gpu_text(t, v < 0 ? "-inf" : "inf");
  else
    hlt_gpu_text(t, "%.17g", v);
}

/* ---- Instructions of the module being written (v0, v1, ...) ---------------- */

int hlt_gpu_emit(GpuMod *m, HloDtype dt, const int64_t *dims, int rank, const char *op) {
  int v = m->next++;
  m->last_off = m->t.n;
  hlt_gpu_text(&m->t, "  v%d = ", v);
  hlt_gpu_text_shape(&m->t, dt, dims, rank);
  hlt_gpu_text(&m->t, " %s", op);
  return v;
}

int hlt_gpu_splat(GpuMod *m, double x) {
  int k = hlt_gpu_emit(m, m->ct, NULL, 0, "constant(");
  hlt_gpu_text_double(&m->t, x);
  hlt_gpu_text(&m->t, ")\n");
  int v = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "broadcast(");
  hlt_gpu_text(&m->t, "v%d), dimensions={}\n", k);
  return v;
}

int hlt_gpu_binary(GpuMod *m, const char *op, int x, int y) {
  int v = hlt_gpu_emit(m, m->ct, m->dims, m->rank, op);
  hlt_gpu_text(&m->t, "(v%d, v%d)\n", x, y);
  return v;
}

int hlt_gpu_unary(GpuMod *m, const char *op, int x) {
  int v = hlt_gpu_emit(m, m->ct, m->dims, m->rank, op);
  hlt_gpu_text(&m->t, "(v%d)\n", x);
  return v;
}

static int convert_to(GpuMod *m, const GpuLeaf *l, HloDtype to, int v) {
  int w = hlt_gpu_emit(m, to, l->dims, l->rank, "convert(");
  hlt_gpu_text(&m->t, "v%d)\n", v);
  return w;
}

int hlt_gpu_operand(GpuMod *m, const GpuLeaf *l, int i, GpuRound round) {
  int v = hlt_gpu_emit(m, l->dtype, l->dims, l->rank, "parameter(");
  hlt_gpu_text(&m->t, "%d)\n", i);
  HloDtype via = round == GPU_ROUND_BF16 ? HLO_BF16 : round == GPU_ROUND_F16 ? HLO_F16
                                                                             : HLO_DTYPE_INVALID;
  if (via != HLO_DTYPE_INVALID && l->dtype != via) v = convert_to(m, l, via, v);
  if (l->dtype != m->ct) v = convert_to(m, l, m->ct, v);
  if (round == GPU_ROUND_TF32) {
    int w = hlt_gpu_emit(m, m->ct, l->dims, l->rank, "reduce-precision(");
    hlt_gpu_text(&m->t, "v%d), exponent_bits=8, mantissa_bits=10\n", v);
    v = w;
  }
  return v;
}

int hlt_gpu_finish(GpuMod *m, const GpuLeaf *res, const int *vals, int n) {
  int outs[GPU_MAX_LEAVES];
  for (int i = 0; i < n; i++) {
    outs[i] = vals[i];
    if (res[i].dtype != m->ct) {
      int w = hlt_gpu_emit(m, res[i].dtype, res[i].dims, res[i].rank, "convert(");
      hlt_gpu_text(&m->t, "v%d)\n", vals[i]);
      outs[i] = w;
    }
  }
  if (n == 1 && outs[0] == m->next - 1 && !m->t.oom) {
    /* The last instruction is the result: make it the ROOT (a copy would
     * cost a pass over the result). */
    char *line = m->t.s + m->last_off;
    size_t tail = m->t.n - m->last_off;
    hlt_gpu_text(&m->t, "     ");
    if (m->t.oom) return -1;
    line = m->t.s + m->last_off;
    memmove(line + 7, line + 2, tail - 2);
    memcpy(line, "  ROOT ", 7);
    hlt_gpu_text(&m->t, "}\n");
    return m->t.oom ? -1 : 0;
  }
  hlt_gpu_text(&m->t, "  ROOT r = ");
  if (n == 1) {
    hlt_gpu_text_shape(&m->t, res[0].dtype, res[0].dims, res[0].rank);
    hlt_gpu_text(&m->t, " copy(v%d)\n}\n", outs[0]);
  } else {
    hlt_gpu_text(&m->t, "(");
    for (int i = 0; i < n; i++) {
      if (i) hlt_gpu_text(&m->t, ", ");
      hlt_gpu_text_shape(&m->t, res[i].dtype, res[i].dims, res[i].rank);
    }
    hlt_gpu_text(&m->t, ") tuple(");
    for (int i = 0; i < n; i++) hlt_gpu_text(&m->t, "%sv%d", i ? ", " : "", outs[i]);
    hlt_gpu_text(&m->t, ")\n}\n");
  }
  return m->t.oom ? -1 : 0;
}
