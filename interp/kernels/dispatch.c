/* dispatch.c: picks the vector-math table once per process, like SLEEF's
 * dispatcher and OpenBLAS's core type: HLORUN_ISA=scalar|sse4|avx2|avx512 forces a
 * path (an unknown or unavailable name falls back to the automatic choice
 * with a warning on stderr), otherwise CPUID decides (AVX-512F, else AVX2 +
 * FMA, else SSE4.1, else the scalar reference). Without HLO_HAVE_X86_ISAS (configure: not
 * x86-64) the scalar table is the only one built. Not here: the tables
 * themselves (vmath.c). */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp/kernels/elementwise.h"

extern const HlkVmath hlk_vmath_scalar, hlk_vmath_sse4, hlk_vmath_avx2, hlk_vmath_avx512;

static bool cpu_has(int isa) {
#if HLO_HAVE_X86_ISAS
  __builtin_cpu_init();
  switch (isa) {
  case HLK_ISA_SCALAR: return true;
  case HLK_ISA_SSE4: return __builtin_cpu_supports("sse4.1");
  case HLK_ISA_AVX2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  case HLK_ISA_AVX512:
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  default: return false;
  }
#else
  return isa == HLK_ISA_SCALAR;
#endif
}

const HlkVmath *hlk_vmath_for_isa(int isa) {
  if (isa < 0 || isa >= HLK_NUM_ISAS || !cpu_has(isa)) return NULL;
  static const HlkVmath *const tables[HLK_NUM_ISAS] = {
    [HLK_ISA_SCALAR] = &hlk_vmath_scalar,
#if HLO_HAVE_X86_ISAS
    [HLK_ISA_SSE4] = &hlk_vmath_sse4,
    [HLK_ISA_AVX2] = &hlk_vmath_avx2,
    [HLK_ISA_AVX512] = &hlk_vmath_avx512,
#endif
  };
  return tables[isa];
}

static const HlkVmath *choose(void) {
  const char *env = getenv("HLORUN_ISA");
  if (env && *env) {
    static const char *const names[HLK_NUM_ISAS] = {"scalar", "sse4", "avx2", "avx512"};
    for (int i = 0; i < HLK_NUM_ISAS; i++)
      if (strcmp(env, names[i]) == 0) {
        const HlkVmath *t = hlk_vmath_for_isa(i);
        if (t) return t;
      }
    fprintf(stderr, "hlorun: warning: HLORUN_ISA=%s is unknown or not supported by this CPU; "
                    "choosing automatically\n", env);
  }
  for (int i = HLK_NUM_ISAS - 1; i >= 0; i--) {
    const HlkVmath *t = hlk_vmath_for_isa(i);
    if (t) return t;
  }
  return &hlk_vmath_scalar;
}

/* Written once (a race only stores the same pointer twice). */
static const HlkVmath *current;

const HlkVmath *hlk_vmath(void) {
  const HlkVmath *t = __atomic_load_n(&current, __ATOMIC_ACQUIRE);
  if (!t) {
    t = choose();
    __atomic_store_n(&current, t, __ATOMIC_RELEASE);
  }
  return t;
}

int hlk_vmath_force(int isa) {
  const HlkVmath *t = isa < 0 ? choose() : hlk_vmath_for_isa(isa);
  if (!t) return -1;
  __atomic_store_n(&current, t, __ATOMIC_RELEASE);
  return 0;
}
