/* clang-compat.h: force-included into the fuzz build (fuzz/run.sh): glibc's
 * <complex.h> defines CMPLX for GCC only, and clang 14 has the builtin it
 * stands for. */
#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif
#ifndef CMPLXF
#define CMPLXF(x, y) __builtin_complex((float)(x), (float)(y))
#endif
#ifndef CMPLXL
#define CMPLXL(x, y) __builtin_complex((long double)(x), (long double)(y))
#endif
