/* fma_peak.c: the machine's measured f32 FMA peak, for `make bench`'s
 * "share of the peak" figures. Every core runs independent chains of vector
 * fused multiply-adds (enough chains to cover the FMA latency on every
 * pipe), all from registers; the best of several trials is the peak.
 * Built with -march=native by make bench, so the vectors are the widest the
 * machine has (AVX-512: 16 lanes, AVX2: 8).
 *
 * Usage: fma_peak [THREADS]   (default: every online core)
 * Prints: fma_peak gflops=G threads=T lanes=L */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#if defined(__AVX512F__)
enum { LANES = 16 };
#elif defined(__AVX__)
enum { LANES = 8 };
#else
enum { LANES = 4 };
#endif
typedef float vec __attribute__((vector_size(LANES * sizeof(float))));

enum { CHAINS = 12 };                /* independent accumulators per thread (EACH) */
static const long ITERS = 20000000;  /* CHAINS FMAs each */

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static pthread_barrier_t start;
static volatile float sink;

/* Twelve named accumulators (an array would live in memory). */
#define EACH(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
static void *chains(void *arg) {
  (void)arg;
  vec a, b;
  for (int l = 0; l < LANES; l++) { a[l] = 0.999999f; b[l] = 1e-7f; }
#define DECL(c) vec acc##c = a * (float)(c + 1);
  EACH(DECL)
  pthread_barrier_wait(&start);
  for (long i = 0; i < ITERS; i++) {
#define STEP(c) acc##c = acc##c * a + b;
    EACH(STEP)
    /* Keep the compiler from folding or hoisting the chains. */
    __asm__ volatile("" : "+v"(acc0), "+v"(acc1), "+v"(acc2), "+v"(acc3), "+v"(acc4), "+v"(acc5),
                     "+v"(acc6), "+v"(acc7), "+v"(acc8), "+v"(acc9), "+v"(acc10), "+v"(acc11));
  }
#define SUM(c) + acc##c[0]
  sink = 0 EACH(SUM);
  return NULL;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1 || n > 1024) {
    fprintf(stderr, "fma_peak: bad thread count\n");
    return 2;
  }
  pthread_t *t = malloc((size_t)n * sizeof *t);
  if (!t) return 2;
  double best = 0;
  for (int trial = 0; trial < 5; trial++) {
    pthread_barrier_init(&start, NULL, (unsigned)n + 1);
    for (long i = 0; i < n; i++)
      if (pthread_create(&t[i], NULL, chains, NULL) != 0) return 2;
    pthread_barrier_wait(&start);
    double t0 = now();
    for (long i = 0; i < n; i++) pthread_join(t[i], NULL);
    double s = now() - t0;
    pthread_barrier_destroy(&start);
    double gflops = 2.0 * LANES * CHAINS * (double)ITERS * (double)n / s / 1e9;
    if (gflops > best) best = gflops;
  }
  free(t);
  printf("fma_peak gflops=%.1f threads=%ld lanes=%d\n", best, n, LANES);
  return 0;
}
