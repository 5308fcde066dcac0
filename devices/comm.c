/* comm.c: the communicator of the devices of one process (devices.h).
 *
 * exchange: a rendezvous table keyed by (instruction, k, first member),
 * where k counts the executions of the instruction on the arriving device,
 * so the k-th execution on one device meets the k-th on the others. Each
 * member publishes pointers to its leaves; when the last one arrives,
 * every member reads all of them (no copy) and computes its own result
 * (or, for an all-reduce, its share of every local member's: HliShare);
 * a second count keeps the leaves alive until every member has read them
 * and every result is whole.
 * Under MPI the last local arrival also fetches the members of other
 * processes (HldRemote) before releasing the local ones; an all-reduce
 * whose members span processes fetches nothing: once the local members
 * are here each runs its share of a running fold across the processes
 * (chain.c), which fills every local member's result.
 *
 * send/recv: a mailbox keyed by (channel, from, to, k); send copies.
 *
 * Waits end in one of four ways: the rendezvous completes; a member leaves
 * (finishes or fails) without arriving; every device of the process waits
 * and nothing can complete (a deadlock, reported with where each device
 * waits); or the run's deadline passes. */
#include "devices/devices.h"
#include "common/text.h"
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct Rv {
  const HloInstr *ins;
  uint64_t seq;
  int64_t first;             /* key: instruction, execution count, first member */
  int n;
  int64_t *devs;             /* owned copy of the members */
  const HliPiece **pieces;   /* owned array: member r's leaves (borrowed, or owned when remote) */
  const HliPiece **outs;     /* owned array: member r's result leaves to share the work (HliShare) */
  bool shared;               /* every member gave its result leaves */
  bool *remote_owned;        /* pieces[r] was received from another process */
  int nleaves;
  int arrived, consumed, nlocal;
  int refs;                  /* members inside comm_exchange with it */
  bool linked;               /* in the table (found by arrivals) */
  bool complete, failed;
  char *why;                 /* owned: why it failed */
  struct Rv *next;
} Rv;

typedef struct Msg {
  int64_t channel, from, to;
  uint64_t seq;
  int nleaves;
  size_t *sizes;             /* owned */
  char *data;                /* owned: leaves back to back */
  struct Msg *next;
} Msg;

/* Per device: executions counted per key, and where it waits. */
typedef struct Count { const void *key; int64_t a, b; uint64_t n; struct Count *next; } Count;
typedef struct Local {
  Count *counts;
  const HloInstr *waiting;   /* instruction it is blocked at, or NULL */
  uint64_t waiting_seq;
  int64_t waiting_from;      /* a recv: the sending device; else -1 */
  bool blocked;              /* counted out of `running` */
  bool departed, failed, secondary;
} Local;

struct HldComm {
  HliComm iface;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int64_t ndev, first, nlocal;
  HldRemote *remote;
  Local *local;              /* [nlocal] */
  int running;               /* local devices neither waiting nor departed */
  Rv *rvs;
  Msg *msgs;
  char *deadlock;            /* owned: the deadlock report, once found */
  Local *deadlock_by;        /* the device whose wait completed it (NULL: a departure) */
};

static Local *loc(HldComm *c, int64_t d) { return &c->local[d - c->first]; }
static bool is_local(HldComm *c, int64_t d) { return d >= c->first && d < c->first + c->nlocal; }

static char *vformat(const char *fmt, va_list ap) {
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0) s = NULL;
  return s;
}

static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = vformat(fmt, ap);
  va_end(ap);
  return s;
}

/* "devices 0, 2 and 3" for the members of rv that did (arrived) or did not arrive. */
static void put_members(HlcText *t, const Rv *rv, bool arrived) {
  int k = 0, total = 0;
  for (int r = 0; r < rv->n; r++) total += (rv->pieces[r] != NULL) == arrived;
  hlc_text_printf(t, "%s", total == 1 ? "device " : "devices ");
  for (int r = 0; r < rv->n; r++) {
    if ((rv->pieces[r] != NULL) != arrived) continue;
    hlc_text_printf(t, "%s%lld", k == 0 ? "" : k == total - 1 ? " and " : ", ", (long long)rv->devs[r]);
    k++;
  }
}

static uint64_t next_count(Local *l, const void *key, int64_t a, int64_t b) {
  for (Count *k = l->counts; k; k = k->next)
    if (k->key == key && k->a == a && k->b == b) return k->n++;
  Count *k = calloc(1, sizeof *k);
  if (!k) return UINT64_MAX;
  *k = (Count){key, a, b, 1, l->counts};
  l->counts = k;
  return 0;
}

static void free_rv(Rv *rv) {
  for (int r = 0; rv->remote_owned && r < rv->n; r++)
    if (rv->remote_owned[r] && rv->pieces[r]) {
      for (int i = 0; i < rv->nleaves; i++)   /* the transport's buffers (the interpreter's cache) */
        hli_buffer_free(NULL, (void *)rv->pieces[r][i].data, rv->pieces[r][i].nbytes);
      free((void *)rv->pieces[r]);
    }
  free(rv->remote_owned);
  free(rv->pieces);
  free(rv->outs);
  free(rv->devs);
  free(rv->why);
  free(rv);
}

static void unlink_rv(HldComm *c, Rv *rv) {
  for (Rv **p = &c->rvs; *p; p = &(*p)->next)
    if (*p == rv) { *p = rv->next; return; }
}

static void release(HldComm *c, Rv *rv);

static size_t leaves_bytes(const HliPiece *p, int n) {
  size_t s = 0;
  for (int i = 0; i < n; i++) s += p[i].nbytes;
  return s;
}

/* All-reduces of more bytes than this across processes fold as they travel. */
enum { CHAIN_MIN = 64 << 10 };

static void fail_rv(HldComm *c, Rv *rv, char *why) {
  if (rv->failed || rv->complete) { free(why); return; }
  rv->failed = true;
  rv->why = why;
  release(c, rv);
}

/* Deadlock: every local device is blocked and nothing local can complete.
 * Under MPI a remote peer may still unblock us, so only the deadline
 * decides there. */
static void check_departed(HldComm *c, Rv *rv);
static void unblock(HldComm *c, Local *l);

static void check_deadlock(HldComm *c, Local *by) {
  if (c->running > 0 || c->remote || c->deadlock) return;
  bool anyone = false;
  for (int64_t i = 0; i < c->nlocal; i++) anyone |= !c->local[i].departed;
  if (!anyone) return;
  /* A wait that a departure ends is not a deadlock: end those first. */
  bool ended = false;
  for (Rv *rv = c->rvs; rv; rv = rv->next)
    if (!rv->failed && !rv->complete) {
      check_departed(c, rv);
      ended |= rv->failed;
    }
  for (int64_t i = 0; i < c->nlocal; i++) {
    Local *l = &c->local[i];
    if (l->blocked && l->waiting_from >= 0 && is_local(c, l->waiting_from) &&
        loc(c, l->waiting_from)->departed) {
      unblock(c, l);
      ended = true;
    }
  }
  if (ended) {
    pthread_cond_broadcast(&c->cv);
    return;
  }
  HlcText t = {0};
  hlc_text_printf(&t, "deadlock: every device waits and none can go on (");
  bool firstw = true;
  for (int64_t i = 0; i < c->nlocal; i++) {
    Local *l = &c->local[i];
    if (l->departed || !l->waiting) continue;
    hlc_text_printf(&t, "%sdevice %lld at %s (%s, line %d)", firstw ? "" : "; ", (long long)(c->first + i),
        l->waiting->name, hlp_opcode_name(l->waiting->op), l->waiting->line);
    firstw = false;
  }
  hlc_text_printf(&t, ")");
  c->deadlock = t.p ? t.p : strdup("deadlock");
  c->deadlock_by = by;   /* its error reports the deadlock; the others follow from it */
  for (Rv *rv = c->rvs; rv; rv = rv->next) fail_rv(c, rv, strdup(c->deadlock));
  pthread_cond_broadcast(&c->cv);
}

/* Wait on the condition until woken or the deadline (seconds, monotonic;
 * 0: none) passes: false when it passed. */
static bool wait_until(HldComm *c, double deadline) {
  if (deadline <= 0) {
    pthread_cond_wait(&c->cv, &c->mu);
    return true;
  }
  double now = hli_now();
  if (now >= deadline) return false;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  double until = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + (deadline - now);
  ts.tv_sec = (time_t)until;
  ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
  return pthread_cond_timedwait(&c->cv, &c->mu, &ts) != ETIMEDOUT || hli_now() < deadline;
}

/* A member that left without arriving fails the rendezvous. */
static void check_departed(HldComm *c, Rv *rv) {
  for (int r = 0; r < rv->n; r++) {
    if (rv->pieces[r] || !is_local(c, rv->devs[r]) || !loc(c, rv->devs[r])->departed) continue;
    HlcText t = {0};
    put_members(&t, rv, true);
    hlc_text_printf(&t, " arrived; device %lld %s without reaching it", (long long)rv->devs[r],
        loc(c, rv->devs[r])->failed ? "failed" : "finished its program");
    fail_rv(c, rv, t.p);
    return;
  }
}

/* A device waits (it no longer counts as running): when none runs, that
 * is a deadlock. Whoever makes its wait end (completes its rendezvous,
 * posts its message) counts it as running again at once, before it wakes,
 * so that a device that wakes late is never taken for a blocked one. */
static void block(HldComm *c, Local *l, const HloInstr *ins, uint64_t seq, int64_t from) {
  l->waiting = ins;
  l->waiting_seq = seq;
  l->waiting_from = from;
  if (!l->blocked) {
    l->blocked = true;
    c->running--;
  }
  check_deadlock(c, l);
}

static void unblock(HldComm *c, Local *l) {
  l->waiting = NULL;
  if (l->blocked) {
    l->blocked = false;
    c->running++;
  }
}

/* The rendezvous completed or failed: its local members run again. */
static void release(HldComm *c, Rv *rv) {
  for (int r = 0; r < rv->n; r++)
    if (rv->pieces[r] && is_local(c, rv->devs[r])) unblock(c, loc(c, rv->devs[r]));
  pthread_cond_broadcast(&c->cv);
}

static int comm_exchange(HliComm *ic, HliExec *x, const HloInstr *ins, const int64_t *devs, int n,
                         int rank, const HliPiece *mine, int nleaves, const HliPiece *out,
                         HliConsume consume, void *arg, const HliHints *hints) {
  const HliFold *fold = hints ? hints->fold : NULL;
  HldComm *c = (HldComm *)ic;
  int64_t self = devs[rank];
  pthread_mutex_lock(&c->mu);
  Local *l = loc(c, self);
  uint64_t seq = next_count(l, ins, devs[0], n);
  Rv *rv = c->rvs;
  while (rv && !(rv->ins == ins && rv->seq == seq && rv->first == devs[0])) rv = rv->next;
  if (!rv) {
    rv = calloc(1, sizeof *rv);
    if (rv) {
      rv->devs = malloc((size_t)n * sizeof *rv->devs);
      rv->pieces = calloc((size_t)n, sizeof *rv->pieces);
      rv->outs = calloc((size_t)n, sizeof *rv->outs);
      rv->remote_owned = calloc((size_t)n, sizeof *rv->remote_owned);
    }
    if (!rv || !rv->devs || !rv->pieces || !rv->outs || !rv->remote_owned) {
      if (rv) free_rv(rv);
      pthread_mutex_unlock(&c->mu);
      return hli_fail_nomem(x, ins, "out of memory");
    }
    rv->ins = ins;
    rv->seq = seq;
    rv->first = devs[0];
    rv->n = n;
    rv->nleaves = nleaves;
    rv->shared = true;
    memcpy(rv->devs, devs, (size_t)n * sizeof *devs);
    for (int r = 0; r < n; r++) rv->nlocal += is_local(c, devs[r]);
    rv->next = c->rvs;
    c->rvs = rv;
    rv->linked = true;
    if (c->deadlock) fail_rv(c, rv, strdup(c->deadlock));
  }
  int rc = 0;
  if (rv->nleaves != nleaves || rv->n != n || memcmp(rv->devs, devs, (size_t)n * sizeof *devs) != 0)
    fail_rv(c, rv, format("device %lld arrived with %d array leaves, device %lld with %d (or with "
                       "other groups): the devices disagree about this collective",
                       (long long)self, nleaves, (long long)rv->first, rv->nleaves));
  rv->pieces[rank] = mine;
  rv->outs[rank] = out;
  rv->shared &= out != NULL;
  rv->arrived++;
  rv->refs++;
  /* An all-reduce across processes runs as a running fold (chain.c) once
   * the local members are here: no operands are fetched. A small one is
   * exchanged instead: one round between the processes, not a round trip
   * through every stage (the same bits either way; every member has the
   * same sizes, so every process decides alike). */
  bool chained = fold && rv->shared && rv->nlocal < rv->n && c->remote &&
                 leaves_bytes(mine, nleaves) > CHAIN_MIN;
  if (rv->arrived == rv->nlocal && !rv->failed) {
    if (rv->nlocal < rv->n && c->remote && !chained) {   /* fetch the other processes' members */
      HliPiece **recv = calloc((size_t)n, sizeof *recv);
      char *why = NULL;
      const HliPiece **local = rv->pieces;
      block(c, l, ins, seq, -1);
      pthread_mutex_unlock(&c->mu);
      int rrc = recv ? c->remote->exchange(c->remote, ins, seq, devs, n, local, nleaves, recv,
                                               hints, hli_exec_deadline(x), &why)
                     : -1;
      pthread_mutex_lock(&c->mu);
      unblock(c, l);
      for (int r = 0; recv && r < n; r++)
        if (recv[r]) { rv->pieces[r] = recv[r]; rv->remote_owned[r] = true; }
      free(recv);
      if (rrc != 0) fail_rv(c, rv, why ? why : strdup("the transfer between processes failed"));
      else free(why);
    }
    if (!rv->failed) {
      rv->complete = true;
      release(c, rv);
    }
  }
  double deadline = hli_exec_deadline(x);
  if (!rv->complete && !rv->failed) {
    check_departed(c, rv);   /* a member may have left before we came */
    if (!rv->complete && !rv->failed) block(c, l, ins, seq, -1);
    while (!rv->complete && !rv->failed) {
      check_departed(c, rv);
      if (rv->complete || rv->failed) break;
      if (!wait_until(c, deadline)) {
        HlcText t = {0};
        hlc_text_printf(&t, "timed out after %g s waiting for the other devices: ", hli_exec_timeout(x));
        put_members(&t, rv, true);
        hlc_text_printf(&t, " arrived, ");
        put_members(&t, rv, false);
        hlc_text_printf(&t, " did not");
        fail_rv(c, rv, t.p);
      }
    }
    unblock(c, l);
  }
  if (rv->failed) {
    l->secondary = !(c->deadlock && c->deadlock_by == l);
    rc = hli_fail(x, ins, "%s", rv->why ? rv->why : "the collective failed");
  } else {
    /* Our share: the members of this process in rank order split the work. */
    HliShare share = {0, 1, NULL};
    if (rv->shared) {
      share.nparts = rv->nlocal;
      share.outs = rv->outs;
      for (int r = 0; r < rank; r++) share.part += is_local(c, devs[r]);
    }
    pthread_mutex_unlock(&c->mu);
    if (chained) {
      HldChain ch = {c->remote, x, ins, seq, devs, n, rank, rv->pieces, rv->outs, nleaves, fold,
                     share.part, share.nparts, hli_exec_deadline(x)};
      char *why = NULL;
      rc = hld_chain_all_reduce(&ch, &why);
      if (rc) {
        l->secondary = true;   /* another process failed or left, or the wait timed out */
        hli_fail(x, ins, "%s", why ? why : "the transfer between processes failed");
      }
      free(why);
    } else {
      rc = consume(arg, rv->pieces, &share);   /* read everyone's leaves, write the result(s) */
    }
    pthread_mutex_lock(&c->mu);
  }
  /* Keep every member's leaves alive until all have read them. */
  rv->consumed++;
  if (rv->consumed == rv->nlocal) {   /* everyone has read: no one may find it again */
    if (rv->linked) { unlink_rv(c, rv); rv->linked = false; }
    pthread_cond_broadcast(&c->cv);
  }
  while (!rv->failed && rv->consumed < rv->nlocal) pthread_cond_wait(&c->cv, &c->mu);
  /* Every member that arrived holds a reference: the last one out frees it
   * (an address freed here may be a new rendezvous's next time, so nobody
   * waits on the list). */
  if (--rv->refs == 0) {
    if (rv->linked) unlink_rv(c, rv);
    free_rv(rv);
  }
  pthread_mutex_unlock(&c->mu);
  return rc;
}


static int comm_send(HliComm *ic, HliExec *x, const HloInstr *ins, int64_t channel, int64_t to,
                     const HliPiece *leaves, int nleaves) {
  HldComm *c = (HldComm *)ic;
  const HliDevice *d = hli_exec_device(x);
  int64_t self = d->replica * d->npartitions + d->partition;
  pthread_mutex_lock(&c->mu);
  uint64_t seq = next_count(loc(c, self), (const void *)(intptr_t)1, channel, to);
  pthread_mutex_unlock(&c->mu);
  if (!is_local(c, to)) {
    char *why = NULL;
    int rc = c->remote ? c->remote->send(c->remote, channel, self, to, seq, leaves, nleaves, &why) : -1;
    if (rc) hli_fail(x, ins, "sending to device %lld: %s", (long long)to, why ? why : "no such device");
    free(why);
    return rc;
  }
  Msg *m = calloc(1, sizeof *m);
  size_t total = leaves_bytes(leaves, nleaves);
  if (m) {
    m->sizes = malloc((size_t)(nleaves ? nleaves : 1) * sizeof *m->sizes);
    m->data = malloc(total ? total : 1);
  }
  if (!m || !m->sizes || !m->data) {
    if (m) { free(m->sizes); free(m->data); free(m); }
    return hli_fail_nomem(x, ins, "out of memory");
  }
  *m = (Msg){channel, self, to, seq, nleaves, m->sizes, m->data, NULL};
  size_t off = 0;
  for (int i = 0; i < nleaves; i++) {
    m->sizes[i] = leaves[i].nbytes;
    memcpy(m->data + off, leaves[i].data, leaves[i].nbytes);
    off += leaves[i].nbytes;
  }
  pthread_mutex_lock(&c->mu);
  m->next = c->msgs;
  c->msgs = m;
  Local *dl = loc(c, to);
  if (dl->waiting && dl->waiting->op == HLO_OP_RECV_DONE) unblock(c, dl);   /* it may be this one */
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  return 0;
}

static int deliver(HliExec *x, const HloInstr *ins, const Msg *m, const HliPiece *dst, int nleaves) {
  if (m->nleaves != nleaves)
    return hli_fail(x, ins, "device %lld sent %d arrays on channel %lld, this recv takes %d",
                    (long long)m->from, m->nleaves, (long long)m->channel, nleaves);
  size_t off = 0;
  for (int i = 0; i < nleaves; i++) {
    if (m->sizes[i] != dst[i].nbytes)
      return hli_fail(x, ins, "device %lld sent %zu bytes on channel %lld, this recv takes %zu",
                      (long long)m->from, m->sizes[i], (long long)m->channel, dst[i].nbytes);
    memcpy((void *)dst[i].data, m->data + off, dst[i].nbytes);
    off += m->sizes[i];
  }
  return 0;
}

static int comm_recv(HliComm *ic, HliExec *x, const HloInstr *ins, int64_t channel, int64_t from,
                     const HliPiece *dst, int nleaves) {
  HldComm *c = (HldComm *)ic;
  const HliDevice *d = hli_exec_device(x);
  int64_t self = d->replica * d->npartitions + d->partition;
  pthread_mutex_lock(&c->mu);
  Local *l = loc(c, self);
  uint64_t seq = next_count(l, (const void *)(intptr_t)2, channel, from);
  if (!is_local(c, from)) {
    block(c, l, ins, seq, -1);
    pthread_mutex_unlock(&c->mu);
    char *why = NULL;
    int rc = c->remote ? c->remote->recv(c->remote, channel, from, self, seq, dst, nleaves, hli_exec_deadline(x), &why) : -1;
    pthread_mutex_lock(&c->mu);
    unblock(c, l);
    pthread_mutex_unlock(&c->mu);
    if (rc) {
      l->secondary = true;
      hli_fail(x, ins, "receiving from device %lld: %s", (long long)from, why ? why : "no such device");
    }
    free(why);
    return rc;
  }
  int rc = 0;
  for (;;) {
    Msg **p = &c->msgs;
    while (*p && !((*p)->channel == channel && (*p)->from == from && (*p)->to == self && (*p)->seq == seq))
      p = &(*p)->next;
    if (*p) {
      Msg *m = *p;
      *p = m->next;
      rc = deliver(x, ins, m, dst, nleaves);
      free(m->sizes);
      free(m->data);
      free(m);
      break;
    }
    const char *why = loc(c, from)->departed ? (loc(c, from)->failed ? "it failed" : "it finished its program without sending it")
                      : c->deadlock;
    if (why) {
      l->secondary = why != c->deadlock || c->deadlock_by != l;
      rc = hli_fail(x, ins, "waiting for what device %lld sends on channel %lld: %s",
                    (long long)from, (long long)channel, why);
      break;
    }
    if (!l->blocked) {   /* counted as waiting now; look again (that may be a deadlock) */
      block(c, l, ins, seq, from);
      continue;
    }
    if (!wait_until(c, hli_exec_deadline(x))) {
      rc = hli_fail(x, ins, "timed out after %g s waiting for what device %lld sends on channel %lld",
                    hli_exec_timeout(x), (long long)from, (long long)channel);
      break;
    }
  }
  unblock(c, l);
  pthread_mutex_unlock(&c->mu);
  return rc;
}

static uint64_t comm_executions(HliComm *ic, HliExec *x, const HloInstr *ins) {
  HldComm *c = (HldComm *)ic;
  const HliDevice *d = hli_exec_device(x);
  pthread_mutex_lock(&c->mu);
  uint64_t k = next_count(loc(c, d->replica * d->npartitions + d->partition), ins, -9, -9);
  pthread_mutex_unlock(&c->mu);
  return k;
}

HldComm *hld_comm_new(int64_t ndev, int64_t first, int64_t nlocal, HldRemote *remote) {
  HldComm *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->local = calloc((size_t)nlocal, sizeof *c->local);
  if (!c->local) { free(c); return NULL; }
  c->iface.exchange = comm_exchange;
  c->iface.send = comm_send;
  c->iface.recv = comm_recv;
  c->iface.executions = comm_executions;
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  c->ndev = ndev;
  c->first = first;
  c->nlocal = nlocal;
  c->remote = remote;
  c->running = (int)nlocal;
  return c;
}

void hld_comm_reset(HldComm *c) {
  pthread_mutex_lock(&c->mu);
  for (int64_t i = 0; i < c->nlocal; i++) {
    for (Count *k = c->local[i].counts, *n; k; k = n) { n = k->next; free(k); }
    c->local[i] = (Local){0};
  }
  while (c->rvs) { Rv *rv = c->rvs; c->rvs = rv->next; free_rv(rv); }
  while (c->msgs) {
    Msg *m = c->msgs;
    c->msgs = m->next;
    free(m->sizes);
    free(m->data);
    free(m);
  }
  free(c->deadlock);
  c->deadlock = NULL;
  c->deadlock_by = NULL;
  c->running = (int)c->nlocal;
  pthread_mutex_unlock(&c->mu);
}

void hld_comm_free(HldComm *c) {
  if (!c) return;
  hld_comm_reset(c);
  pthread_mutex_destroy(&c->mu);
  pthread_cond_destroy(&c->cv);
  free(c->local);
  free(c);
}

HliComm *hld_comm_iface(HldComm *c) { return &c->iface; }

void hld_comm_depart(HldComm *c, int64_t d, bool failed) {
  pthread_mutex_lock(&c->mu);
  Local *l = loc(c, d);
  if (!l->departed) {
    l->departed = true;
    l->failed = failed;
    c->running--;
    for (Rv *rv = c->rvs; rv; rv = rv->next) check_departed(c, rv);
    check_deadlock(c, NULL);
    pthread_cond_broadcast(&c->cv);
  }
  bool all = true, anyfail = false;
  for (int64_t i = 0; i < c->nlocal; i++) {
    all &= c->local[i].departed;
    anyfail |= c->local[i].failed;
  }
  pthread_mutex_unlock(&c->mu);
  if (all && c->remote) c->remote->depart(c->remote, anyfail);
}

bool hld_comm_secondary(HldComm *c, int64_t d) {
  pthread_mutex_lock(&c->mu);
  bool s = loc(c, d)->secondary;
  pthread_mutex_unlock(&c->mu);
  return s;
}
