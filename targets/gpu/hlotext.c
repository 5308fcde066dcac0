/* hlotext.c: appending HLO text (shapes, lists, full-precision float
 * literals) to a growing buffer, for the equivalent modules the GPU
 * targets build. Out of memory is remembered and reported once. */
#include "targets/gpu/gpu.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void gpu_text(GpuText *t, const char *fmt, ...) {
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

void gpu_text_list(GpuText *t, const int64_t *v, int n) {
  gpu_text(t, "{");
  for (int i = 0; i < n; i++) gpu_text(t, "%s%lld", i ? "," : "", (long long)v[i]);
  gpu_text(t, "}");
}

void gpu_text_shape(GpuText *t, HloDtype dt, const int64_t *dims, int rank) {
  gpu_text(t, "%s[", hlc_dtype_name(dt));
  for (int i = 0; i < rank; i++) gpu_text(t, "%s%lld", i ? "," : "", (long long)dims[i]);
  gpu_text(t, "]");
}

void gpu_text_double(GpuText *t, double v) {
  if (isnan(v)) gpu_text(t, "nan");
  else if (isinf(v)) gpu_text(t, v < 0 ? "-inf" : "inf");
  else gpu_text(t, "%.17g", v);
}
