/* value.c: creation, views, reference counting and copying of runtime
 * values. Buffers are 64-byte aligned so kernels can use aligned vector
 * loads; they are counted against the run's memory limit.
 *
 * Value headers carry room for a short tuple's element array, and with an
 * executor, headers and small buffers are recycled through per-executor free
 * lists instead of going back to malloc: interpreting a loop body creates
 * and drops a handful of scalars per instruction. Large buffers are kept
 * too, process-wide (a few, up to a byte budget), and handed out again for
 * requests of nearly the same size, whoever frees them (results leave the
 * executor and come back freed without one): a fresh 64 MiB buffer costs
 * 16K page faults, more than an elementwise pass over it. Buffers of 4 MiB
 * and more are 2 MiB aligned and advised as huge pages (as numpy does).
 * The cache holds at most 1 GiB, and no more than a run's memory limit. */
#include "interp/exec.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { VALUE_ALIGN = 64, INLINE_TUPLE = 4, MAX_FREE_VALUES = 1024, MAX_FREE_BUFS = 256 };

/* A header with inline room for up to INLINE_TUPLE tuple elements. */
typedef struct ValueBlock {
  HliValue v;
  HliValue *elems[INLINE_TUPLE];
} ValueBlock;

/* Free-list links live in the recycled memory itself. */
typedef struct FreeLink { struct FreeLink *next; } FreeLink;

static HliValue *value_shell(HliExec *x, const HloShape *s) {
  ValueBlock *b;
  if (x && x->free_values) {
    FreeLink *l = x->free_values;
    x->free_values = l->next;
    x->nfree_values--;
    b = (ValueBlock *)l;
    memset(b, 0, sizeof *b);
  } else {
    b = calloc(1, sizeof *b);
    if (!b) return NULL;
  }
  HliValue *v = &b->v;
  v->shape = s;
  v->dtype = s->dtype;
  v->rank = s->rank;
  v->dims = s->dims;
  v->refs = 1;
  return v;
}

static void shell_free(HliExec *x, HliValue *v) {
  ValueBlock *b = (ValueBlock *)v;
  if (v->tuple != b->elems) free(v->tuple);
  if (x && x->nfree_values < MAX_FREE_VALUES) {
    FreeLink *l = (FreeLink *)b;
    l->next = x->free_values;
    x->free_values = l;
    x->nfree_values++;
    return;
  }
  free(b);
}

/* Element array of a tuple with n elements (inline when short). */
static HliValue **tuple_array(HliValue *v, int32_t n) {
  if (n <= INLINE_TUPLE) return ((ValueBlock *)v)->elems;
  return calloc((size_t)n, sizeof(HliValue *));
}

/* Size class of a small buffer: 0 for <= 64 bytes, 1 for <= 128, ... */
static int buf_class(size_t n) {
  int c = 0;
  size_t cap = VALUE_ALIGN;
  while (cap < n) { cap <<= 1; c++; }
  return c;
}

enum { HUGE_MIN = 4 << 20, HUGE_ALIGN = 2 << 20 };

/* Capacity actually allocated for a request of n > HLI_BUF_MAX_CACHED bytes. */
static size_t big_capacity(size_t n) {
  size_t a = n >= HUGE_MIN ? HUGE_ALIGN : VALUE_ALIGN;
  return (n + a - 1) & ~(a - 1);
}

static void *big_alloc(size_t cap) {
  if (cap < HUGE_MIN) return aligned_alloc(VALUE_ALIGN, cap);
  void *p = aligned_alloc(HUGE_ALIGN, cap);
#ifdef MADV_HUGEPAGE
  if (p) (void)madvise(p, cap, MADV_HUGEPAGE);   /* advice only: failure is fine */
#endif
  return p;
}

/* The large-buffer cache: oldest first. */
enum { BIG_CACHED = 16 };
#define BIG_CACHE_BYTES ((size_t)1 << 30)
static struct { void *p; size_t cap; } big[BIG_CACHED];
static int32_t nbig;
static size_t big_bytes;
static pthread_mutex_t big_mu = PTHREAD_MUTEX_INITIALIZER;

static void big_remove(int32_t i) {
  big_bytes -= big[i].cap;
  memmove(&big[i], &big[i + 1], (size_t)(nbig - i - 1) * sizeof big[0]);
  nbig--;
}

/* A cached large buffer of capacity in [cap, cap + cap/8], or NULL. */
static void *big_take(size_t cap) {
  pthread_mutex_lock(&big_mu);
  int32_t best = -1;
  for (int32_t i = 0; i < nbig; i++)
    if (big[i].cap >= cap && big[i].cap - cap <= cap / 8 &&
        (best < 0 || big[i].cap < big[best].cap))
      best = i;
  void *p = NULL;
  if (best >= 0) {
    p = big[best].p;
    big_remove(best);
  }
  pthread_mutex_unlock(&big_mu);
  return p;
}

/* Keep a large buffer for reuse (evicting the oldest), or free it; the
 * cache then holds at most budget bytes. */
static void big_put(void *p, size_t cap, size_t budget) {
  if (cap > budget) { free(p); return; }
  pthread_mutex_lock(&big_mu);
  while (nbig > 0 && (nbig == BIG_CACHED || big_bytes + cap > budget)) {
    free(big[0].p);
    big_remove(0);
  }
  big[nbig].p = p;
  big[nbig].cap = cap;
  nbig++;
  big_bytes += cap;
  pthread_mutex_unlock(&big_mu);
}

/* At exit, so leak checkers see nothing held. */
__attribute__((destructor)) static void big_release_all(void) {
  pthread_mutex_lock(&big_mu);
  while (nbig > 0) {
    free(big[0].p);
    big_remove(0);
  }
  pthread_mutex_unlock(&big_mu);
}

static void *alloc_buffer(HliExec *x, size_t n, bool zero) {
  if (x && hli_mem_reserve(x, n) != 0) return NULL;
  size_t sz;
  void *p = NULL;
  if (n <= HLI_BUF_MAX_CACHED) {
    /* Small buffers always take their whole size class, whoever allocates
     * them, so any of them may later be recycled for that class. */
    int c = buf_class(n);
    sz = (size_t)VALUE_ALIGN << c;
    if (x && x->free_bufs[c]) {
      FreeLink *l = x->free_bufs[c];
      x->free_bufs[c] = l->next;
      x->nfree_bufs[c]--;
      p = l;
    }
    if (!p) p = aligned_alloc(VALUE_ALIGN, sz);
  } else {
    sz = big_capacity(n);
    p = big_take(sz);
    if (!p) p = big_alloc(sz);
  }
  if (!p) {
    if (x) {
      hli_mem_release(x, n);
      hli_fail_nomem(x, NULL, "out of memory allocating %zu bytes", n);
    }
    return NULL;
  }
  if (zero) memset(p, 0, sz);
  return p;
}

static void free_buffer(HliExec *x, void *p, size_t n) {
  if (n > HLI_BUF_MAX_CACHED) {
    size_t budget = BIG_CACHE_BYTES;
    if (x) {
      hli_mem_release(x, n);
      if (x->mem_limit && x->mem_limit < budget) budget = x->mem_limit;
    }
    big_put(p, big_capacity(n), budget);
    return;
  }
  if (x) {
    hli_mem_release(x, n);
    /* Small buffers were allocated at their class size (alloc_buffer). */
    int c = buf_class(n);
    if (x->nfree_bufs[c] < MAX_FREE_BUFS) {
      FreeLink *l = p;
      l->next = x->free_bufs[c];
      x->free_bufs[c] = l;
      x->nfree_bufs[c]++;
      return;
    }
  }
  free(p);
}

void hli_value_cache_free(HliExec *x) {
  for (FreeLink *l = x->free_values, *n; l; l = n) { n = l->next; free(l); }
  x->free_values = NULL;
  x->nfree_values = 0;
  for (int c = 0; c < HLI_BUF_CLASSES; c++) {
    for (FreeLink *l = x->free_bufs[c], *n; l; l = n) { n = l->next; free(l); }
    x->free_bufs[c] = NULL;
    x->nfree_bufs[c] = 0;
  }
}

static HliValue *value_new(HliExec *x, const HloShape *s, bool zero) {
  HliValue *v = value_shell(x, s);
  if (!v) return NULL;
  if (s->dtype == HLO_TUPLE) {
    v->ntuple = s->ntuple;
    v->tuple = tuple_array(v, s->ntuple);
    if (!v->tuple) { v->ntuple = 0; shell_free(x, v); return NULL; }
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
  if (!v->data) { shell_free(x, v); return NULL; }
  v->owns_data = true;
  return v;
}

HliValue *hli_value_new(HliExec *x, const HloShape *s) { return value_new(x, s, false); }

void *hli_buffer_alloc(HliExec *x, size_t n) { return alloc_buffer(x, n, false); }
void hli_buffer_free(HliExec *x, void *p, size_t n) {
  if (p) free_buffer(x, p, n);
}
HliValue *hli_value_zeros(HliExec *x, const HloShape *s) { return value_new(x, s, true); }

HliValue *hli_value_view(HliExec *x, HliValue *base, const HloShape *s) {
  HliValue *v = value_shell(x, s);
  if (!v) return NULL;
  v->nelem = hlp_shape_elements(s);
  v->nbytes = (size_t)v->nelem * hlc_dtype_size(s->dtype);
  v->data = base->data;
  v->base = hli_value_ref(base);
  return v;
}

HliValue *hli_value_tuple(HliExec *x, const HloShape *s, HliValue *const *elems, int32_t n) {
  HliValue *v = value_shell(x, s);
  if (!v) return NULL;
  v->dtype = HLO_TUPLE;
  v->ntuple = n;
  v->tuple = tuple_array(v, n);
  if (!v->tuple) { v->ntuple = 0; shell_free(x, v); return NULL; }
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
  if (v->owns_data) free_buffer(x, v->data, v->nbytes);
  hli_value_unref(x, v->base);
  shell_free(x, v);
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
