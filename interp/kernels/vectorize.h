/* vectorize.h: HLK_VECTORIZE, for simple array loops that should run as
 * vector code on whatever x86-64 CPU the library finds itself on.
 *
 * GCC compiles a function so marked three times, for AVX-512 (x86-64-v4),
 * AVX2 (x86-64-v3) and the baseline, each auto-vectorized, and the dynamic
 * loader picks one copy per process (an ifunc). Only for loops whose vector
 * form gives the same bits as the scalar one: one IEEE operation per element
 * or lane-wise accumulation in a fixed order, never reassociation; FMA
 * contraction is off so a*b+c stays two roundings. Elsewhere (other
 * compilers, other targets) it is empty and the loops stay scalar.
 * Not here: the transcendental functions (vmath.c, per-ISA builds). */
#ifndef HLORUN_INTERP_KERNELS_VECTORIZE_H
#define HLORUN_INTERP_KERNELS_VECTORIZE_H
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__) && \
    !defined(__SANITIZE_ADDRESS__)
#define HLK_VECTORIZE                                                          \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), \
                 optimize("tree-vectorize", "vect-cost-model=dynamic", "fp-contract=off")))
#elif defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* A sanitizer build checks the C source, which the three copies share: one
 * copy is enough there, and instrumenting three made reducer.c alone take
 * 230 s of CPU (76 s with one), the long pole of CI's sanitizer build. */
#define HLK_VECTORIZE                                                          \
  __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic", "fp-contract=off")))
#else
#define HLK_VECTORIZE
#endif
#endif
