/* host.c: what the FFI host tells handlers and how it calls them, set by
 * the interpreter and the command line and read through the API (api.c)
 * and when calling (call.c): the thread pool behind ThreadPool_Schedule and
 * its size, the run id, the calling thread's device ordinal, user data by
 * type id, which targets receive the instruction's members, and whether
 * prepare and initialize run too. Guarded by its own lock.
 * Not here: targets and call sites (registry.c), the API table (api.c). */
#include "ffi/internal.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void hlf_host_init(HlfHost *h) {
  memset(h, 0, sizeof *h);
  pthread_mutex_init(&h->mu, NULL);
  h->members_all = -1;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  h->nthreads = n < 1 ? 1 : n > 16 ? 16 : (int)n;
}

void hlf_host_free(HlfHost *h) {
  hlf_pool_free(h->pool);
  h->pool = NULL;
  for (struct HlfMembersOpt *o = h->members, *n; o; o = n) { n = o->next; free(o->target); free(o); }
  free(h->user);
  pthread_mutex_destroy(&h->mu);
}

void hlf_host_after_fork(HlfHost *h) {
  pthread_mutex_init(&h->mu, NULL);
  h->pool = NULL;   /* the parent's; leaked in the child on purpose */
}

/* ---- Threads ------------------------------------------------------------ */

void hlf_set_num_threads(HlfRegistry *r, int n) {
  pthread_mutex_lock(&r->host.mu);
  r->host.nthreads = n < 1 ? 1 : n;
  pthread_mutex_unlock(&r->host.mu);
}

HlfPool *hlf_host_pool(HlfRegistry *r) {
  pthread_mutex_lock(&r->host.mu);
  if (!r->host.pool) r->host.pool = hlf_pool_new(r->host.nthreads);
  HlfPool *p = r->host.pool;
  pthread_mutex_unlock(&r->host.mu);
  return p;
}

int hlf_host_num_threads(HlfRegistry *r) {
  pthread_mutex_lock(&r->host.mu);
  int n = r->host.pool ? hlf_pool_size(r->host.pool) : r->host.nthreads;
  pthread_mutex_unlock(&r->host.mu);
  return n;
}

/* The device the calling thread runs (a multi-device run gives each
 * device a thread, devices/run.c); 0 in a run on one device. */
static _Thread_local int32_t thread_device;

void hlf_set_thread_device(int32_t ordinal) { thread_device = ordinal; }
int32_t hlf_thread_device(void) { return thread_device; }

/* ---- Run id and user data ------------------------------------------------ */

void hlf_set_run_id(HlfRegistry *r, int64_t run_id) { r->host.run_id = run_id; }
int64_t hlf_run_id(HlfRegistry *r) { return r->host.run_id; }

int hlf_set_user_data(HlfRegistry *r, int64_t type_id, void *data) {
  HlfHost *h = &r->host;
  int rc = 0;
  pthread_mutex_lock(&h->mu);
  int i = 0;
  while (i < h->nuser && h->user[i].type_id != type_id) i++;
  if (i == h->nuser) {
    void *v = realloc(h->user, (size_t)(h->nuser + 1) * sizeof *h->user);
    if (!v) rc = -1;
    else { h->user = v; h->nuser++; }
  }
  if (!rc) { h->user[i].type_id = type_id; h->user[i].data = data; }
  pthread_mutex_unlock(&h->mu);
  return rc;
}

bool hlf_user_data(HlfRegistry *r, int64_t type_id, void **data) {
  HlfHost *h = &r->host;
  bool found = false;
  pthread_mutex_lock(&h->mu);
  for (int i = 0; i < h->nuser; i++)
    if (h->user[i].type_id == type_id) { *data = h->user[i].data; found = true; }
  pthread_mutex_unlock(&h->mu);
  return found;
}

/* ---- How calls are made -------------------------------------------------- */

int hlf_set_members_opt_in(HlfRegistry *r, const char *target, bool on) {
  HlfHost *h = &r->host;
  pthread_mutex_lock(&h->mu);
  int rc = 0;
  if (!target) {
    h->members_all = on;
    /* "all" overrides earlier per-target choices */
    for (struct HlfMembersOpt *o = h->members; o; o = o->next) o->on = on;
  } else {
    struct HlfMembersOpt *o = h->members;
    while (o && strcmp(o->target, target) != 0) o = o->next;
    if (!o && (o = calloc(1, sizeof *o)) && (o->target = strdup(target))) {
      o->next = h->members;
      h->members = o;
    } else if (o && !o->target) {
      free(o);
      o = NULL;
    }
    if (o) o->on = on; else rc = -1;
  }
  pthread_mutex_unlock(&h->mu);
  return rc;
}

bool hlf_members_wanted(HlfRegistry *r, const char *target) {
  HlfHost *h = &r->host;
  pthread_mutex_lock(&h->mu);
  bool on = h->members_all == 1;
  for (struct HlfMembersOpt *o = h->members; o; o = o->next)
    if (strcmp(o->target, target) == 0) on = o->on;
  pthread_mutex_unlock(&h->mu);
  return on;
}

void hlf_set_all_stages(HlfRegistry *r, bool all_stages) {
  pthread_mutex_lock(&r->host.mu);
  r->host.all_stages = all_stages;
  pthread_mutex_unlock(&r->host.mu);
}

bool hlf_all_stages(HlfRegistry *r) {
  pthread_mutex_lock(&r->host.mu);
  bool all = r->host.all_stages;
  pthread_mutex_unlock(&r->host.mu);
  return all;
}
