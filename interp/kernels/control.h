/* control.h: what the control area's files share: the in-place
 * collective-permute's exchange (collectives.c, permute_inplace.c), and the
 * numerical cores of rng.c, fft.c and linalg.c (three-fry, philox, FFT,
 * Cholesky), exposed so the Check suites can test them directly on plain
 * arrays without building IR. Each kernel file's registrar is in
 * kernels/register.h. */
#ifndef HLORUN_INTERP_KERNELS_CONTROL_H
#define HLORUN_INTERP_KERNELS_CONTROL_H
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include "interp/interp.h"

/* ---- collectives.c and permute_inplace.c -------------------------------- */

struct HliPiece;   /* interp/comm.h */

/* The in-place collective-permute (slice_sizes written): plan-time check
 * and run, for collective-permute and collective-permute-start. */
int hlk_inplace_check(HliExec *x, const HloInstr *ins);
int hlk_inplace_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out);
/* Groups valid on this grid and no source or target named twice. */
int hlk_permute_pairs_check(HliExec *x, const HloInstr *ins);
/* Whether this device is a source and whether it is a target of a pair. */
int hlk_permute_role(HliExec *x, const HloInstr *ins, bool *sends, bool *receives);
/* Exchange this device's leaves mine[0..k) (the same sizes on every member)
 * over the permute's group; deliver then gets the leaves of the device
 * whose pair targets this one, or NULL when no pair does. 0 or -1. */
typedef int (*HlkDeliver)(void *arg, const struct HliPiece *from);
int hlk_permute_exchange(HliExec *x, const HloInstr *ins, const struct HliPiece *mine, int k,
                         HlkDeliver deliver, void *arg);

/* ---- rng.c ------------------------------------------------------------- */

/* Threefry-2x32 with 20 rounds, as XLA's prng library computes it: the
 * counter (x0, x1) is encrypted under the key (k0, k1). */
void hlk_threefry2x32(uint32_t k0, uint32_t k1, uint32_t *x0, uint32_t *x1);
/* Philox-4x32 with 10 rounds: the counter x[4] is encrypted under (k0, k1). */
void hlk_philox4x32(uint32_t k0, uint32_t k1, uint32_t x[4]);

/* ---- fft.c ------------------------------------------------------------- */

/* A reusable plan for complex DFTs of one length (any length: mixed radix
 * for small prime factors, Bluestein otherwise). */
typedef struct HlkFftPlan HlkFftPlan;
HlkFftPlan *hlk_fft_plan_new(int64_t n);
void hlk_fft_plan_free(HlkFftPlan *p);
/* Bytes of the arrays hlk_fft_plan_new(n) allocates (the plan structs are
 * small and fixed, not counted): what a kernel reserves against the memory
 * limit before making one. */
size_t hlk_fft_plan_bytes(int64_t n);
/* In-place transform of data[0..n-1]: forward computes
 * X[k] = sum_j x[j] exp(-2 pi i jk/n); inverse uses +i and divides by n. */
void hlk_fft_run(HlkFftPlan *p, double complex *data, bool inverse);

/* ---- linalg.c ---------------------------------------------------------- */

/* Cholesky of one n x n row-major matrix in place (double). The chosen
 * triangle holds the factor; the other triangle is left as it was.
 * Returns 0, or -1 if a pivot was not positive (XLA then yields NaNs in
 * the factor from that point on; this function does the same). */
int hlk_cholesky_f64(double *a, int64_t n, bool lower);
#endif
