/* hlotext.c: appending HLO text (shapes, lists, full-precision float
 * literals) to a growing buffer, for the equivalent modules the GPU
 * targets build. Out of memory is remembered and reported once. */
#include "targets/gpu/gpu.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hlt_gpu_text_list(HlcText *t, const int64_t *v, int n) {
  hlc_text_printf(t, "{");
  for (int i = 0; i < n; i++) hlc_text_printf(t, "%s%lld", i ? "," : "", (long long)v[i]);
  hlc_text_printf(t, "}");
}

void hlt_gpu_text_shape(HlcText *t, HloDtype dt, const int64_t *dims, int rank) {
  hlc_text_printf(t, "%s[", hlc_dtype_name(dt));
  for (int i = 0; i < rank; i++) hlc_text_printf(t, "%s%lld", i ? "," : "", (long long)dims[i]);
  hlc_text_printf(t, "]");
}

void hlt_gpu_text_double(HlcText *t, double v) {
  if (isnan(v))
    hlc_text_printf(t, "nan");
  else if (isinf(v))
    hlc_text_printf(t, v < 0 ? "-inf" : "inf");
  else
    hlc_text_printf(t, "%.17g", v);
}

/* ---- Instructions of the module being written (v0, v1, ...) ---------------- */

int hlt_gpu_emit(GpuMod *m, HloDtype dt, const int64_t *dims, int rank, const char *op) {
  int v = m->next++;
  m->last_off = m->t.n;
  hlc_text_printf(&m->t, "  v%d = ", v);
  hlt_gpu_text_shape(&m->t, dt, dims, rank);
  hlc_text_printf(&m->t, " %s", op);
  return v;
}

int hlt_gpu_splat(GpuMod *m, double x) {
  int k = hlt_gpu_emit(m, m->ct, NULL, 0, "constant(");
  hlt_gpu_text_double(&m->t, x);
  hlc_text_printf(&m->t, ")\n");
  int v = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "broadcast(");
  hlc_text_printf(&m->t, "v%d), dimensions={}\n", k);
  return v;
}

int hlt_gpu_binary(GpuMod *m, const char *op, int x, int y) {
  int v = hlt_gpu_emit(m, m->ct, m->dims, m->rank, op);
  hlc_text_printf(&m->t, "(v%d, v%d)\n", x, y);
  return v;
}

int hlt_gpu_unary(GpuMod *m, const char *op, int x) {
  int v = hlt_gpu_emit(m, m->ct, m->dims, m->rank, op);
  hlc_text_printf(&m->t, "(v%d)\n", x);
  return v;
}

static int convert_to(GpuMod *m, const GpuLeaf *l, HloDtype to, int v) {
  int w = hlt_gpu_emit(m, to, l->dims, l->rank, "convert(");
  hlc_text_printf(&m->t, "v%d)\n", v);
  return w;
}

int hlt_gpu_operand(GpuMod *m, const GpuLeaf *l, int i, GpuRound round) {
  int v = hlt_gpu_emit(m, l->dtype, l->dims, l->rank, "parameter(");
  hlc_text_printf(&m->t, "%d)\n", i);
  HloDtype via = round == GPU_ROUND_BF16 ? HLO_BF16 : round == GPU_ROUND_F16 ? HLO_F16
                                                                             : HLO_DTYPE_INVALID;
  if (via != HLO_DTYPE_INVALID && l->dtype != via) v = convert_to(m, l, via, v);
  if (l->dtype != m->ct) v = convert_to(m, l, m->ct, v);
  if (round == GPU_ROUND_TF32) {
    int w = hlt_gpu_emit(m, m->ct, l->dims, l->rank, "reduce-precision(");
    hlc_text_printf(&m->t, "v%d), exponent_bits=8, mantissa_bits=10\n", v);
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
      hlc_text_printf(&m->t, "v%d)\n", vals[i]);
      outs[i] = w;
    }
  }
  if (n == 1 && outs[0] == m->next - 1 && !m->t.oom) {
    /* The last instruction is the result: make it the ROOT (a copy would
     * cost a pass over the result). */
    char *line = m->t.p + m->last_off;
    size_t tail = m->t.n - m->last_off;
    hlc_text_printf(&m->t, "     ");
    if (m->t.oom) return -1;
    line = m->t.p + m->last_off;
    memmove(line + 7, line + 2, tail - 2);
    memcpy(line, "  ROOT ", 7);
    hlc_text_printf(&m->t, "}\n");
    return m->t.oom ? -1 : 0;
  }
  hlc_text_printf(&m->t, "  ROOT r = ");
  if (n == 1) {
    hlt_gpu_text_shape(&m->t, res[0].dtype, res[0].dims, res[0].rank);
    hlc_text_printf(&m->t, " copy(v%d)\n}\n", outs[0]);
  } else {
    hlc_text_printf(&m->t, "(");
    for (int i = 0; i < n; i++) {
      if (i) hlc_text_printf(&m->t, ", ");
      hlt_gpu_text_shape(&m->t, res[i].dtype, res[i].dims, res[i].rank);
    }
    hlc_text_printf(&m->t, ") tuple(");
    for (int i = 0; i < n; i++) hlc_text_printf(&m->t, "%sv%d", i ? ", " : "", outs[i]);
    hlc_text_printf(&m->t, ")\n}\n");
  }
  return m->t.oom ? -1 : 0;
}
