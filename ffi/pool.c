/* pool.c: the worker threads behind XLA_FFI_ThreadPool_Schedule. A plain
 * FIFO queue served by a fixed number of threads, started when the pool is
 * made. Tasks always run on a worker (never inline), so a handler may block
 * on work it scheduled, and a task may complete a future from another
 * thread. Freeing the pool runs what is still queued, then joins.
 * Not here: the interpreter's own parallel loops (interp/). */
#include "ffi/internal.h"
#include <stdlib.h>

typedef struct Task { void (*fn)(void *); void *data; struct Task *next; } Task;

struct HlfPool {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  Task *head, *tail;
  bool stop;
  int n;
  pthread_t *threads;
};

static void *worker(void *arg) {
  HlfPool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    while (!p->head && !p->stop) pthread_cond_wait(&p->cv, &p->mu);
    Task *t = p->head;
    if (!t) {                       /* stopping and drained */
      pthread_mutex_unlock(&p->mu);
      return NULL;
    }
    p->head = t->next;
    if (!p->head) p->tail = NULL;
    pthread_mutex_unlock(&p->mu);
    t->fn(t->data);
    free(t);
  }
}

HlfPool *hlf_pool_new(int nthreads) {
  if (nthreads < 1) nthreads = 1;
  HlfPool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->threads = calloc((size_t)nthreads, sizeof *p->threads);
  if (!p->threads) { free(p); return NULL; }
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  for (int i = 0; i < nthreads; i++) {
    if (pthread_create(&p->threads[i], NULL, worker, p) != 0) break;
    p->n++;
  }
  if (p->n == 0) { hlf_pool_free(p); return NULL; }
  return p;
}

int hlf_pool_size(const HlfPool *p) { return p->n; }

int hlf_pool_schedule(HlfPool *p, void (*task)(void *), void *data) {
  Task *t = malloc(sizeof *t);
  if (!t) return -1;
  *t = (Task){task, data, NULL};
  pthread_mutex_lock(&p->mu);
  if (p->tail) p->tail->next = t; else p->head = t;
  p->tail = t;
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
  return 0;
}

void hlf_pool_free(HlfPool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = true;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->n; i++) pthread_join(p->threads[i], NULL);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
  free(p->threads);
  free(p);
}
