/* pool.c: a persistent pool of worker threads behind hli_parallel_for.
 *
 * One job at a time: the calling thread publishes (fn, arg, n, chunk) under
 * the pool's mutex, bumps a generation counter and works on chunks itself;
 * workers take chunk numbers from an atomic counter until none are left,
 * then report done. Chunk boundaries depend only on n, min_chunk and the
 * thread count (not on timing), so kernels that combine per-chunk partial
 * results get the same answer on every run. A parallel_for issued from
 * inside a job (nested), or while another thread owns the pool, runs
 * inline.
 *
 * Both sides spin briefly before they sleep: a worker for the next job, the
 * caller for the workers to finish. A kernel often issues its jobs back to
 * back (a convolution's patch chunk, then its product, per chunk), and
 * waking a sleeping thread costs a system call on each side and, in a
 * virtual machine, tens of microseconds. Sleeping goes through the mutex
 * and a count of sleepers, so no wake-up is lost.
 * Not here: what the kernels do with their ranges. */
#include "interp/exec.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

enum { SPIN_NS = 50000 };   /* how long a thread polls before it sleeps */

struct HliPool {
  int nthreads;                 /* workers + the calling thread */
  pthread_t *workers;           /* owned: nthreads - 1 threads */
  int nstarted;                 /* workers actually running */
  pthread_mutex_t mu;           /* guards the sleepers, stop and the job's fields */
  pthread_cond_t wake;          /* workers sleep here for a new generation */
  pthread_cond_t done;          /* the caller sleeps here for pending == 0 */
  atomic_uint_fast64_t generation;  /* bumped once per job, under mu */
  bool stop;                    /* workers exit */
  bool spin;                    /* poll before sleeping: no more threads than CPUs */
  int sleeping;                 /* workers asleep on wake */
  bool caller_sleeps;           /* the caller is asleep on done */
  atomic_int pending;           /* workers that have not finished the job */
  /* The current job (written under mu before the generation bump). */
  void (*fn)(void *arg, int64_t lo, int64_t hi);
  void *arg;
  int64_t n, chunk, nchunks;
  atomic_int_fast64_t next_chunk;
  atomic_flag busy;             /* a job is running: other callers go inline */
};

/* Set while this thread runs chunks of a job: nested loops run inline. */
static _Thread_local bool in_job;

int hli_cpu_count(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

static void run_chunks(HliPool *p) {
  bool was = in_job;
  in_job = true;
  for (;;) {
    int64_t c = atomic_fetch_add(&p->next_chunk, 1);
    if (c >= p->nchunks) break;
    int64_t lo = c * p->chunk, hi = lo + p->chunk < p->n ? lo + p->chunk : p->n;
    p->fn(p->arg, lo, hi);
  }
  in_job = was;
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Poll until done(p, v) holds or SPIN_NS pass; whether it holds. With
 * more threads than CPUs, a polling thread would take a CPU from one with
 * work: then only one look. */
static bool spin_until(HliPool *p, bool (*done)(HliPool *, uint64_t), uint64_t v) {
  if (!p->spin) return done(p, v);
  int64_t t0 = now_ns();
  for (int i = 1;; i++) {
    if (done(p, v)) return true;
    CPU_RELAX();
    if (i % 64 == 0 && now_ns() - t0 > SPIN_NS) return done(p, v);
  }
}

static bool new_job(HliPool *p, uint64_t seen) { return atomic_load(&p->generation) != seen; }
static bool all_done(HliPool *p, uint64_t unused) {
  (void)unused;
  return atomic_load(&p->pending) == 0;
}

static void *worker_main(void *arg) {
  HliPool *p = arg;
  uint64_t seen = 0;
  for (;;) {
    if (!spin_until(p, new_job, seen)) {
      pthread_mutex_lock(&p->mu);
      p->sleeping++;
      while (!p->stop && atomic_load(&p->generation) == seen) pthread_cond_wait(&p->wake, &p->mu);
      p->sleeping--;
      pthread_mutex_unlock(&p->mu);
    }
    pthread_mutex_lock(&p->mu);   /* the job's fields, as the caller left them */
    bool stop = p->stop;
    pthread_mutex_unlock(&p->mu);
    if (stop) break;
    seen = atomic_load(&p->generation);
    run_chunks(p);
    if (atomic_fetch_sub(&p->pending, 1) == 1) {
      pthread_mutex_lock(&p->mu);
      if (p->caller_sleeps) pthread_cond_signal(&p->done);
      pthread_mutex_unlock(&p->mu);
    }
  }
  return NULL;
}

HliPool *hli_pool_new(int nthreads) {
  if (nthreads <= 1) return NULL;
  HliPool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->workers = calloc((size_t)nthreads - 1, sizeof *p->workers);
  if (!p->workers) { free(p); return NULL; }
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  atomic_init(&p->next_chunk, 0);
  atomic_init(&p->generation, 0);
  atomic_init(&p->pending, 0);
  atomic_flag_clear(&p->busy);
  p->spin = nthreads <= hli_cpu_count();   /* before the workers read it */
  for (int i = 0; i < nthreads - 1; i++) {
    if (pthread_create(&p->workers[i], NULL, worker_main, p) != 0) break;
    p->nstarted++;
  }
  if (p->nstarted == 0) { hli_pool_free(p); return NULL; }
  p->nthreads = p->nstarted + 1;
  return p;
}

void hli_pool_free(HliPool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = true;
  atomic_fetch_add(&p->generation, 1);   /* spinning workers see it too */
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->nstarted; i++) pthread_join(p->workers[i], NULL);
  pthread_cond_destroy(&p->wake);
  pthread_cond_destroy(&p->done);
  pthread_mutex_destroy(&p->mu);
  free(p->workers);
  free(p);
}

int hli_pool_threads(const HliPool *p) { return p ? p->nthreads : 1; }

void hli_parallel_for(HliExec *x, int64_t n, int64_t min_chunk,
                      void (*fn)(void *arg, int64_t lo, int64_t hi), void *arg) {
  if (n <= 0) return;
  if (min_chunk < 1) min_chunk = 1;
  HliPool *p = x ? x->pool : NULL;
  int threads = p ? hli_pool_threads(p) : 1;
  if (x && x->nthreads < threads) threads = x->nthreads;
  if (threads <= 1 || n < 2 * min_chunk || in_job || atomic_flag_test_and_set(&p->busy)) {
    fn(arg, 0, n);
    return;
  }
  /* A few chunks per thread balance uneven work without much overhead. */
  int64_t nchunks = n / min_chunk;
  if (nchunks > 4 * (int64_t)threads) nchunks = 4 * (int64_t)threads;
  int64_t chunk = (n + nchunks - 1) / nchunks;
  nchunks = (n + chunk - 1) / chunk;

  pthread_mutex_lock(&p->mu);
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  p->chunk = chunk;
  p->nchunks = nchunks;
  atomic_store(&p->next_chunk, 0);
  atomic_store(&p->pending, p->nstarted);
  atomic_fetch_add(&p->generation, 1);
  if (p->sleeping) pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);

  run_chunks(p);

  if (!spin_until(p, all_done, 0)) {
    pthread_mutex_lock(&p->mu);
    p->caller_sleeps = true;
    while (atomic_load(&p->pending) > 0) pthread_cond_wait(&p->done, &p->mu);
    p->caller_sleeps = false;
    pthread_mutex_unlock(&p->mu);
  }
  atomic_flag_clear(&p->busy);
}
