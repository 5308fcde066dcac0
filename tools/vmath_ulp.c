/* vmath_ulp.c: the largest error, in ULPs of the result, of an f32 vector
 * math function over every one of the 2^32 inputs, per vector ISA, against
 * libm's double function (whose own error is far below an f32 ULP).
 *   tools/vmath_ulp tanh|exp|logistic|log|log1p|expm1 [LO HI]
 * With LO and HI (0 <= LO < HI), only the positive inputs in [LO, HI).
 * Not built by default (a minute or so per ISA); build in a configured tree:
 *   ./libtool --mode=link gcc -O2 -I. -Iinclude -o tools/vmath_ulp \
 *     tools/vmath_ulp.c libhlorun_core.la -lsleef -lm -lpthread */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp/kernels/elementwise.h"

static double logistic(double x) { return 1 / (1 + exp(-x)); }

static const struct { const char *name; int id; double (*ref)(double); } funcs[] = {
  {"tanh", HLK_VM_TANH, tanh}, {"exp", HLK_VM_EXP, exp}, {"logistic", HLK_VM_LOGISTIC, logistic},
  {"log", HLK_VM_LOG, log}, {"log1p", HLK_VM_LOG1P, log1p}, {"expm1", HLK_VM_EXPM1, expm1},
};

enum { CHUNK = 1 << 20, NTHREADS = 2 };

typedef struct {
  HlkVUnF fn;
  double (*ref)(double);
  uint64_t lo, hi;    /* bit patterns [lo, hi) */
  double worst;
  uint32_t worst_bits;
  uint64_t over_half; /* results off by more than half an ULP (not correctly rounded) */
} Job;

/* Error of got in ULPs of the exact value want (as the unit tests count). */
static double ulps(float got, double want) {
  if (isnan(want)) return isnan(got) ? 0 : INFINITY;
  if (isinf(want)) return (double)got == want ? 0 : INFINITY;
  float w = (float)want;
  if (isinf(w)) return isinf(got) && !signbit(got) == !signbit(w) ? 0 : INFINITY;
  if (got == 0 && want == 0 && !signbit(got) != !signbit(want)) return INFINITY;
  double u = fabs(w) < 0x1p-126 ? 0x1p-149 : ldexp(1.0, ilogb(w) - 23);
  return fabs((double)got - want) / u;
}

static void *run(void *arg) {
  Job *j = arg;
  float *in = malloc(CHUNK * sizeof *in), *out = malloc(CHUNK * sizeof *out);
  if (!in || !out) abort();
  for (uint64_t b = j->lo; b < j->hi; b += CHUNK) {
    uint64_t n = j->hi - b < CHUNK ? j->hi - b : CHUNK;
    for (uint64_t i = 0; i < n; i++) {
      uint32_t bits = (uint32_t)(b + i);
      memcpy(&in[i], &bits, 4);
    }
    j->fn(in, out, (int64_t)n);
    for (uint64_t i = 0; i < n; i++) {
      double e = ulps(out[i], j->ref((double)in[i]));
      if (e > 0.5) j->over_half++;
      if (e > j->worst) {
        j->worst = e;
        memcpy(&j->worst_bits, &in[i], 4);
      }
    }
  }
  free(in);
  free(out);
  return NULL;
}

int main(int argc, char **argv) {
  size_t f = 0;
  while (argc >= 2 && f < sizeof funcs / sizeof funcs[0] && strcmp(argv[1], funcs[f].name)) f++;
  float lo = 0, hi = 0;
  if ((argc != 2 && argc != 4) || f == sizeof funcs / sizeof funcs[0] ||
      (argc == 4 && !((lo = strtof(argv[2], NULL)) >= 0 && (hi = strtof(argv[3], NULL)) > lo))) {
    fprintf(stderr, "usage: %s tanh|exp|logistic|log|log1p|expm1 [LO HI]\n", argv[0]);
    return 2;
  }
  uint32_t blo = 0, bhi = 0;   /* positive floats are ordered as their bits */
  memcpy(&blo, &lo, 4);
  memcpy(&bhi, &hi, 4);
  uint64_t first = argc == 4 ? blo : 0, end = argc == 4 ? bhi : 1ull << 32;
  for (int isa = 0; isa < HLK_NUM_ISAS; isa++) {
    const HlkVmath *vm = hlk_vmath_for_isa(isa);
    if (!vm) continue;
    Job jobs[NTHREADS];
    pthread_t th[NTHREADS];
    for (int k = 0; k < NTHREADS; k++) {
      jobs[k] = (Job){.fn = vm->uf[funcs[f].id], .ref = funcs[f].ref,
                      .lo = first + (end - first) / NTHREADS * (uint64_t)k,
                      .hi = k + 1 == NTHREADS ? end
                                              : first + (end - first) / NTHREADS * (uint64_t)(k + 1)};
      pthread_create(&th[k], NULL, run, &jobs[k]);
    }
    double worst = 0;
    uint32_t wb = 0;
    uint64_t over = 0;
    for (int k = 0; k < NTHREADS; k++) {
      pthread_join(th[k], NULL);
      over += jobs[k].over_half;
      if (jobs[k].worst > worst) { worst = jobs[k].worst; wb = jobs[k].worst_bits; }
    }
    float wx;
    memcpy(&wx, &wb, 4);
    printf("%-7s %-8s max %.3f ULP at x=%a (%.9g); %llu of %llu inputs off by more than 0.5 ULP\n",
           vm->name, funcs[f].name, worst, (double)wx, (double)wx, (unsigned long long)over,
           (unsigned long long)(end - first));
  }
  return 0;
}
