/* div_by_sweep.c: checks the f32 division by one divisor of each vector
 * table (vmath.c, div_by_f32) against the divide instruction: for each
 * divisor b, every one of the 2^24 mantissas of a in [1, 2) and [-2, -1),
 * at three exponents (0, and two that put a/b near the ends of the fast
 * path's range), plus zeros, subnormals, infinities and NaNs. Divisors: the
 * hardest mantissas (1, 1 + 2^-23, 2 - 2^-23, ...) and pseudo-random ones,
 * with exponents across [-120, 120] and beyond.
 *   tools/div_by_sweep [DIVISORS]        (default 200; ~0.1 s each)
 * Not built by default; build in a configured tree:
 *   ./libtool --mode=link gcc -O2 -I. -Iinclude -o tools/div_by_sweep \
 *     tools/div_by_sweep.c libhlorun_core.la -lsleef -lm -lpthread */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp/kernels/elementwise.h"

enum { M = 1 << 23, NTHREADS = 2 };

typedef struct {
  const HlkVmath *vm;
  int first, step, count;
  uint64_t checked, wrong;
} Job;

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Divisor number i: the edge mantissas first, then pseudo-random ones. */
static float divisor(int i) {
  static const uint32_t edge[] = {0x000000, 0x000001, 0x7fffff, 0x7ffffe, 0x400000, 0x3fffff,
                                  0x555555, 0x2aaaab, 0x0f0f0f, 0x600001};
  uint64_t h = (uint64_t)i * 0x9e3779b97f4a7c15ull;
  h ^= h >> 29;
  uint32_t mant = i < 10 ? edge[i] : (uint32_t)h & 0x7fffff;
  int e = (int)((h >> 32) % 251) - 125;   /* 2^-125 .. 2^125: both sides of 2^+-120 */
  if (i < 10) e = (i % 3 - 1) * 20;
  float b = from_bits((uint32_t)(e + 127) << 23 | mant);
  return (h >> 40) & 1 ? -b : b;
}

static void *run(void *arg) {
  Job *j = arg;
  float *a = malloc(sizeof(float) * 2 * M), *got = malloc(sizeof(float) * 2 * M);
  for (int d = j->first; d < j->count; d += j->step) {
    float b = divisor(d);
    int eb = ilogbf(b);
    /* a/b near 2^-98 and 2^98 (the fast path's ends), and a itself in [1, 2) */
    int exps[3] = {0, eb - 98, eb + 97};
    for (int k = 0; k < 3; k++) {
      int e = exps[k] < -126 ? -126 : exps[k] > 127 ? 127 : exps[k];
      for (uint32_t m = 0; m < M; m++) {
        a[m] = from_bits((uint32_t)(e + 127) << 23 | m);
        a[M + m] = -a[m];
      }
      j->vm->div_by_f32(a, b, got, 2 * M);
      for (int64_t i = 0; i < 2 * M; i++) {
        float want = a[i] / b;
        j->wrong += memcmp(&want, &got[i], 4) != 0 && !(isnan(want) && isnan(got[i]));
      }
      j->checked += 2 * M;
    }
    float specials[] = {0.0f, -0.0f, 0x1p-149f, -0x1p-140f, 0x1p-127f, INFINITY, -INFINITY,
                        NAN, 0x1p127f, 3.4e38f, -1e-38f, 1.0f};
    int ns = (int)(sizeof specials / sizeof specials[0]);
    j->vm->div_by_f32(specials, b, got, ns);
    for (int i = 0; i < ns; i++) {
      float want = specials[i] / b;
      j->wrong += memcmp(&want, &got[i], 4) != 0 && !(isnan(want) && isnan(got[i]));
    }
    j->checked += (uint64_t)ns;
  }
  free(a);
  free(got);
  return NULL;
}

int main(int argc, char **argv) {
  int count = argc > 1 ? atoi(argv[1]) : 200;
  int failed = 0;
  for (int isa = 0; isa < HLK_NUM_ISAS; isa++) {
    const HlkVmath *vm = hlk_vmath_for_isa(isa);
    if (!vm) continue;
    Job jobs[NTHREADS];
    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
      jobs[i] = (Job){vm, i, NTHREADS, count, 0, 0};
      pthread_create(&t[i], NULL, run, &jobs[i]);
    }
    uint64_t checked = 0, wrong = 0;
    for (int i = 0; i < NTHREADS; i++) {
      pthread_join(t[i], NULL);
      checked += jobs[i].checked;
      wrong += jobs[i].wrong;
    }
    printf("%-7s %d divisors, %llu quotients, %llu differ from the divide instruction\n",
           vm->name, count, (unsigned long long)checked, (unsigned long long)wrong);
    failed |= wrong != 0;
  }
  return failed;
}
