/* value.c: creation, views, reference counting and copying of runtime
 * values. Buffers are 64-byte aligned so kernels can use aligned vector
 * loads; they are counted against the run's memory limit. */
#include "interp/exec.h"
#include <stdlib.h>
#include <string.h>

enum { VALUE_ALIGN = 64 };

static HliValue *value_shell(const HloShape *s) {
  HliValue *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  v->shape = s;
  v->dtype = s->dtype;
  v->rank = s->rank;
  v->dims = s->dims;
  v->refs = 1;
  return v;
}

static void *alloc_buffer(HliExec *x, size_t n, bool zero) {
  if (x && hli_mem_reserve(x, n) != 0) return NULL;
  size_t sz = (n + VALUE_ALIGN - 1) & ~(size_t)(VALUE_ALIGN - 1);
  if (sz == 0) sz = VALUE_ALIGN;
  void *p = aligned_alloc(VALUE_ALIGN, sz);
  if (!p) {
    if (x) {
      hli_mem_release(x, n);
      hli_fail(x, NULL, "out of memory allocating %zu bytes", n);
    }
    return NULL;
  }
  if (zero) memset(p, 0, sz);
  return p;
}

static HliValue *value_new(HliExec *x, const HloShape *s, bool zero) {
  HliValue *v = value_shell(s);
  if (!v) return NULL;
  if (s->dtype == HLO_TUPLE) {
    v->ntuple = s->ntuple;
    v->tuple = calloc(s->ntuple ? (size_t)s->ntuple : 1, sizeof *v->tuple);
    if (!v->tuple) { free(v); return NULL; }
    for (int32_t i = 0; i < s->ntuple; i++) {
      v->tuple[i] = value_new(x, &s->tuple[i], zero);
      if (!v->tuple[i]) { hli_value_unref(x, v); return NULL; }
    }
    return v;
  }
  if (!hlc_dtype_is_array(s->dtype)) return v;   /* token, opaque: no data */
  v->nelem = hlp_shape_elements(s);
  v->nbytes = (size_t)v->nelem * hlc_dtype_size(s->dtype);
  v->data = alloc_buffer(x, v->nbytes, zero);
  if (!v->data) { free(v); return NULL; }
  v->owns_data = true;
  return v;
}

HliValue *hli_value_new(HliExec *x, const HloShape *s) { return value_new(x, s, false); }
HliValue *hli_value_zeros(HliExec *x, const HloShape *s) { return value_new(x, s, true); }

HliValue *hli_value_view(HliExec *x, HliValue *base, const HloShape *s) {
  (void)x;
  HliValue *v = value_shell(s);
  if (!v) return NULL;
  v->nelem = hlp_shape_elements(s);
  v->nbytes = (size_t)v->nelem * hlc_dtype_size(s->dtype);
  v->data = base->data;
  v->base = hli_value_ref(base);
  return v;
}

HliValue *hli_value_tuple(HliExec *x, const HloShape *s, HliValue *const *elems, int32_t n) {
  (void)x;
  HliValue *v = value_shell(s);
  if (!v) return NULL;
  v->dtype = HLO_TUPLE;
  v->ntuple = n;
  v->tuple = calloc(n ? (size_t)n : 1, sizeof *v->tuple);
  if (!v->tuple) { free(v); return NULL; }
  for (int32_t i = 0; i < n; i++) v->tuple[i] = hli_value_ref(elems[i]);
  return v;
}

HliValue *hli_value_ref(HliValue *v) {
  if (v) v->refs++;
  return v;
}

void hli_value_unref(HliExec *x, HliValue *v) {
  if (!v || --v->refs > 0) return;
  for (int32_t i = 0; i < v->ntuple; i++) hli_value_unref(x, v->tuple[i]);
  free(v->tuple);
  if (v->owns_data) {
    free(v->data);
    if (x) hli_mem_release(x, v->nbytes);
  }
  hli_value_unref(x, v->base);
  free(v);
}

void hli_value_copy_into(HliValue *dst, const HliValue *src) {
  if (src->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < src->ntuple && i < dst->ntuple; i++)
      hli_value_copy_into(dst->tuple[i], src->tuple[i]);
    return;
  }
  if (dst->data != src->data && src->nbytes)
    memcpy(dst->data, src->data, src->nbytes < dst->nbytes ? src->nbytes : dst->nbytes);
}

void hli_strides(const int64_t *dims, int32_t rank, int64_t *strides) {
  int64_t s = 1;
  for (int32_t i = rank - 1; i >= 0; i--) { strides[i] = s; s *= dims[i]; }
}
