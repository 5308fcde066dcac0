/* elementwise_bench.c: times a few elementwise kernels on 16M-element arrays,
 * per vector ISA (not built by default; see the command in the comment at
 * the end). Prints milliseconds and elements per nanosecond for 16M-element
 * arrays, and nanoseconds per element for f32 math on arrays that stay in L1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "interp/interp.h"
#include "interp/kernels/elementwise.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double bench(HloOpcode op, HloDtype t, int nops, int64_t n) {
  int64_t dims[1] = {n};
  HloShape s = {.dtype = t, .rank = 1, .dims = dims};
  HloInstr opnd = {.op = HLO_OP_PARAMETER, .shape = s};
  HloInstr *ops[2] = {&opnd, &opnd};
  HloInstr ins = {.op = op, .name = "b", .shape = s, .nops = nops, .ops = ops};
  HliValue *a = hli_value_new(NULL, &s), *o = hli_value_new(NULL, &s);
  HliValue *in[2] = {a, a};
  for (int64_t i = 0; i < n; i++) {
    float v = (float)((i % 2000) - 1000) * 0.01f;
    if (t == HLO_F32) ((float *)a->data)[i] = v;
    else if (t == HLO_F64) ((double *)a->data)[i] = v;
    else if (t == HLO_BF16) ((uint16_t *)a->data)[i] = (uint16_t)(*(uint32_t *)&v >> 16);
    else ((int32_t *)a->data)[i] = (int32_t)i;
  }
  const HliOpEntry *e = &hli_op_table()[op];
  e->run(NULL, &ins, in, o);   /* warm up */
  double best = 1e9;
  for (int r = 0; r < 3; r++) {
    double t0 = now();
    e->run(NULL, &ins, in, o);
    double dt = now() - t0;
    if (dt < best) best = dt;
  }
  hli_value_unref(NULL, a);
  hli_value_unref(NULL, o);
  return best;
}

/* Seconds per element of an f32 vector math function on 4096 elements that
 * stay in L1: the computation alone, without memory traffic. */
static double in_cache(const HlkVmath *vm, int id) {
  enum { N = 4096, REPS = 4096 };
  static float a[N], o[N];
  for (int i = 0; i < N; i++) a[i] = (float)((i % 2000) - 1000) * 0.01f;
  vm->uf[id](a, o, N);
  double best = 1e9;
  for (int r = 0; r < 3; r++) {
    double t0 = now();
    for (int k = 0; k < REPS; k++) vm->uf[id](a, o, N);
    double dt = now() - t0;
    if (dt < best) best = dt;
  }
  return best / ((double)N * REPS);
}

int main(void) {
  const int64_t n = 1 << 24;
  struct { HloOpcode op; HloDtype t; int nops; const char *name; } cases[] = {
    {HLO_OP_EXPONENTIAL, HLO_F32, 1, "exp f32"}, {HLO_OP_EXPONENTIAL, HLO_F64, 1, "exp f64"},
    {HLO_OP_TANH, HLO_F32, 1, "tanh f32"}, {HLO_OP_LOG, HLO_F32, 1, "log f32"},
    {HLO_OP_SINE, HLO_F32, 1, "sin f32"}, {HLO_OP_ADD, HLO_F32, 2, "add f32"},
    {HLO_OP_EXPONENTIAL, HLO_BF16, 1, "exp bf16"}, {HLO_OP_ADD, HLO_S32, 2, "add s32"},
  };
  for (int isa = 0; isa < HLK_NUM_ISAS; isa++) {
    if (hlk_vmath_force(isa) != 0) continue;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
      double s = bench(cases[k].op, cases[k].t, cases[k].nops, n);
      printf("%-7s %-9s %8.2f ms  %6.2f Gelem/s\n", hlk_vmath()->name, cases[k].name, s * 1e3,
             n / s * 1e-9);
    }
    static const struct { int id; const char *name; } vm_cases[] = {
      {HLK_VM_EXP, "exp"}, {HLK_VM_TANH, "tanh"}, {HLK_VM_LOGISTIC, "logistic"},
    };
    for (size_t k = 0; k < sizeof vm_cases / sizeof vm_cases[0]; k++)
      printf("%-7s %-9s %8.3f ns per element in L1\n", hlk_vmath()->name, vm_cases[k].name,
             in_cache(hlk_vmath(), vm_cases[k].id) * 1e9);
  }
  return 0;
}
/* Build in a configured tree:
 *   libtool --mode=link gcc -O2 -I. -Iinclude -o bench/elementwise_bench \
 *     bench/elementwise_bench.c libhlorun_core.la -lsleef -lm -lpthread */
