/* mpi.c: the transport between the processes of an MPI job (mpi.h).
 *
 * Under mpirun -np N every rank runs a contiguous block of the devices as
 * threads (run.c), and the thread that called hlo_execute_devices serves
 * MPI for them: the only thread that calls MPI (MPI_THREAD_FUNNELED).
 * Device threads hand it requests through a queue and wait for them:
 *
 * - a collective's leader (the last local member to arrive) sends every
 *   local member's leaves to each process holding other members, and waits
 *   for theirs; every message is (header, leaf sizes, bytes), one tag, any
 *   source, matched by (instruction, execution count, first member, device),
 *   so the order in which ranks reach collectives does not matter;
 * - send posts a copy; recv waits for the matching message;
 * - when every local device has finished, the rank tells every other rank
 *   (failed or not); a wait for a device of a rank that finished fails at
 *   once, so no rank hangs on another's failure. The run ends when every
 *   rank has finished: MPI keeps order between two ranks, so by then every
 *   message sent to this rank has arrived.
 *
 * Values are exchanged as raw bytes and folded by each device in rank
 * order (interp/kernels/collectives.c), never by MPI's reductions, so a
 * split run gives the threaded run's bits. */
#include "devices/mpi.h"
#include "interp/api.h"
#include "interp/valio.h"
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG = 7301, TAG_RESULT = 7302 };
enum { MSG_PIECES = 1, MSG_P2P = 2, MSG_DEPART = 3 };

typedef struct Hdr {
  int32_t kind, nleaves;
  int64_t ins, seq, first;   /* collective: instruction key, execution count, first member */
  int64_t channel, from, to; /* from: the sending device; to: receiving device (p2p) */
  int64_t failed;            /* MSG_DEPART */
} Hdr;

/* A message received and not yet claimed. */
typedef struct In {
  Hdr h;
  char *buf;                 /* owned: the whole message */
  size_t len;
  int src;
  struct In *next;
} In;

/* A device thread's request: messages to send, messages to wait for. */
typedef struct Req {
  char **out;                /* owned messages to send */
  size_t *outlen;
  int *dest;
  int nout;
  Hdr *want;                 /* headers of the messages awaited (kind, ins, seq, first, from / channel, to) */
  HliPiece **into;           /* exchange: recv[r] slots to fill (malloc'd leaves) */
  int *slot;                 /* member index of each wanted message */
  const HliPiece *dst;       /* recv: where the one awaited message goes */
  int ndst;
  int nwant, got;
  bool done, failed, abandoned;
  char *why;
  struct Req *next;
} Req;

static struct {
  bool inited, active;
  int size, rank;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  Req *queue;                /* submitted, not yet taken by the MPI thread */
  Req *pending;              /* taken: waiting for messages */
  In *unclaimed;
  MPI_Request *sends;
  char **sendbufs;
  int nsends, capsends;
  bool *departed, *rank_failed;  /* per rank */
  int ndeparted;
  bool local_done, local_failed, depart_sent;
  int64_t ndev;
} M = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void finalize(void) {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
}

static void init(void) {
  if (M.inited) return;
  M.inited = true;
  M.size = 1;
  const char *env = getenv("OMPI_COMM_WORLD_SIZE");
  if (!env) env = getenv("PMI_SIZE");
  if (!env || atoi(env) <= 1) return;
  int provided = 0;
  if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return;
  atexit(finalize);
  MPI_Comm_size(MPI_COMM_WORLD, &M.size);
  MPI_Comm_rank(MPI_COMM_WORLD, &M.rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  M.active = M.size > 1;
  M.departed = calloc((size_t)M.size, sizeof *M.departed);
  M.rank_failed = calloc((size_t)M.size, sizeof *M.rank_failed);
  if (!M.departed || !M.rank_failed) MPI_Abort(MPI_COMM_WORLD, 2);
}

int hld_mpi_size(void) { init(); return M.size; }
int hld_mpi_rank(void) { init(); return M.rank; }

/* The rank that runs device d: blocks as run.c splits them. */
static int rank_of(int64_t d) {
  int64_t base = M.ndev / M.size, extra = M.ndev % M.size;
  int64_t cut = extra * (base + 1);
  return d < cut ? (int)(d / (base + 1)) : (int)(extra + (d - cut) / (base ? base : 1));
}

/* A stable key for an instruction: the same in every process, which read
 * the same module. */
static int64_t ins_key(const HloInstr *ins) {
  return ((int64_t)ins->off << 24) ^ ((int64_t)ins->line << 12) ^ ins->index;
}

static char *pack(const Hdr *h, const HliPiece *leaves, int n, size_t *len) {
  size_t total = sizeof *h + (size_t)n * sizeof(uint64_t);
  for (int i = 0; i < n; i++) total += leaves[i].nbytes;
  char *b = malloc(total);
  if (!b) return NULL;
  memcpy(b, h, sizeof *h);
  uint64_t *sizes = (uint64_t *)(b + sizeof *h);
  char *p = (char *)(sizes + n);
  for (int i = 0; i < n; i++) {
    sizes[i] = leaves[i].nbytes;
    memcpy(p, leaves[i].data, leaves[i].nbytes);
    p += leaves[i].nbytes;
  }
  *len = total;
  return b;
}

/* Leaves of a received message: sizes and data. -1 when malformed. */
static int unpack(const In *in, const uint64_t **sizes, const char **data) {
  size_t need = sizeof(Hdr) + (size_t)in->h.nleaves * sizeof(uint64_t);
  if (in->h.nleaves < 0 || in->len < need) return -1;
  *sizes = (const uint64_t *)(in->buf + sizeof(Hdr));
  *data = in->buf + need;
  size_t total = need;
  for (int i = 0; i < in->h.nleaves; i++) total += (*sizes)[i];
  return total == in->len ? 0 : -1;
}

static bool matches(const Hdr *w, const Hdr *h) {
  if (w->kind != h->kind) return false;
  if (w->kind == MSG_PIECES)
    return w->ins == h->ins && w->seq == h->seq && w->first == h->first && w->from == h->from;
  return w->channel == h->channel && w->from == h->from && w->to == h->to && w->seq == h->seq;
}

static char *fmt(const char *f, long long a, long long b) {
  char *s = NULL;
  if (asprintf(&s, f, a, b) < 0) s = NULL;
  return s;
}

/* Deliver message in to request r's wanted entry k. */
static void deliver(Req *r, int k, In *in) {
  const uint64_t *sizes;
  const char *data;
  if (unpack(in, &sizes, &data) != 0) {
    r->failed = true;
    r->why = fmt("a malformed message from MPI rank %lld (device %lld)", in->src, in->h.from);
    return;
  }
  if (r->into) {   /* a collective member's leaves: copies the communicator frees */
    int n = in->h.nleaves;
    HliPiece *leaves = calloc((size_t)(n ? n : 1), sizeof *leaves);
    if (!leaves) { r->failed = true; return; }
    for (int i = 0; i < n; i++) {
      void *p = malloc(sizes[i] ? sizes[i] : 1);
      if (!p) { r->failed = true; break; }
      memcpy(p, data, sizes[i]);
      leaves[i] = (HliPiece){p, sizes[i]};
      data += sizes[i];
    }
    r->into[r->slot[k]] = leaves;
  } else {         /* recv: into the destination leaves */
    int n = in->h.nleaves;
    bool ok = true;
    ok = n == r->ndst;
    for (int i = 0; i < n && ok; i++) ok = sizes[i] == r->dst[i].nbytes;
    if (!ok) {
      r->failed = true;
      r->why = fmt("device %lld sent %lld arrays of other sizes than this recv takes", in->h.from, n);
      return;
    }
    for (int i = 0; i < n; i++) {
      memcpy((void *)r->dst[i].data, data, sizes[i]);
      data += sizes[i];
    }
  }
  r->want[k].kind = 0;   /* taken */
  r->got++;
}

/* Try the unclaimed messages against request r. Called with M.mu held. */
static void match_unclaimed(Req *r) {
  for (int k = 0; k < r->nwant && !r->failed; k++) {
    if (!r->want[k].kind) continue;
    for (In **p = &M.unclaimed; *p; p = &(*p)->next)
      if (matches(&r->want[k], &(*p)->h)) {
        In *in = *p;
        *p = in->next;
        deliver(r, k, in);
        free(in->buf);
        free(in);
        break;
      }
  }
}

/* A wanted device whose rank has finished will send nothing more. */
static void check_departed(Req *r) {
  for (int k = 0; k < r->nwant && !r->failed; k++) {
    if (!r->want[k].kind) continue;
    int q = rank_of(r->want[k].from);
    if (!M.departed[q]) continue;
    r->failed = true;
    r->why = fmt(M.rank_failed[q] ? "device %lld (on MPI rank %lld) failed"
                                  : "device %lld (on MPI rank %lld) finished its program without reaching it",
                 r->want[k].from, q);
  }
}

/* A request whose messages all came (or that failed) leaves the pending
 * list now, under the lock: its thread may return (its Req is on that
 * thread's stack) as soon as the lock is released. */
static void finish(Req *r) {
  if (r->got == r->nwant || r->failed) {
    for (Req **p = &M.pending; *p; p = &(*p)->next)
      if (*p == r) { *p = r->next; break; }
    r->done = true;
    pthread_cond_broadcast(&M.cv);
  }
}

/* Submit r and wait (device thread). */
static void unlink_req(Req **list, Req *r) {
  for (Req **p = list; *p; p = &(*p)->next)
    if (*p == r) { *p = r->next; return; }
}

/* Submit r and wait (device thread) until it is done or the run's deadline
 * (monotonic seconds, 0: none) passes. */
/* With no --timeout, a wait for other processes still ends: after
 * HLORUN_MPI_WAIT_LIMIT seconds (default 1800, XLA:CPU's collective
 * timeout) without the messages, as a deadlock across processes would. */
static double wait_limit(void) {
  const char *e = getenv("HLORUN_MPI_WAIT_LIMIT");
  double v = e ? atof(e) : 0;
  return v > 0 ? v : 1800;
}

static int submit_wait(Req *r, double deadline, char **why) {
  bool own_limit = deadline <= 0;
  if (own_limit) deadline = hli_now() + wait_limit();
  pthread_mutex_lock(&M.mu);
  r->next = M.queue;
  M.queue = r;
  while (!r->done) {
    if (deadline <= 0) { pthread_cond_wait(&M.cv, &M.mu); continue; }
    double left = deadline - hli_now();
    if (left <= 0) {   /* give up: the MPI thread must not see r again */
      unlink_req(&M.queue, r);
      unlink_req(&M.pending, r);
      r->failed = r->done = true;
      free(r->why);
      r->why = strdup(own_limit ? "no message from the other MPI processes' devices for "
                                  "HLORUN_MPI_WAIT_LIMIT seconds (default 1800): a deadlock "
                                  "across processes, or a peer that hangs"
                                : "timed out waiting for the devices of other MPI processes");
      break;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double until = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + (left < 0.5 ? left : 0.5);
    ts.tv_sec = (time_t)until;
    ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
    pthread_cond_timedwait(&M.cv, &M.mu, &ts);
  }
  pthread_mutex_unlock(&M.mu);
  int rc = r->failed ? -1 : 0;
  if (rc && why) *why = r->why ? r->why : strdup("the transfer between processes failed");
  else free(r->why);
  return rc;
}

static int remote_exchange(HldRemote *rm, const HloInstr *ins, uint64_t seq, const int64_t *devs,
                           int n, const HliPiece *const *local, int nleaves, HliPiece **recv,
                           double deadline, char **why) {
  (void)rm;
  Req r = {0};
  r.out = calloc((size_t)n * (size_t)M.size + 1, sizeof *r.out);
  r.outlen = calloc((size_t)n * (size_t)M.size + 1, sizeof *r.outlen);
  r.dest = calloc((size_t)n * (size_t)M.size + 1, sizeof *r.dest);
  r.want = calloc((size_t)n + 1, sizeof *r.want);
  r.slot = calloc((size_t)n + 1, sizeof *r.slot);
  bool *to = calloc((size_t)M.size, sizeof *to);
  if (!r.out || !r.outlen || !r.dest || !r.want || !r.slot || !to) {
    *why = strdup("out of memory");
    goto done;
  }
  r.into = recv;
  for (int m = 0; m < n; m++)
    if (rank_of(devs[m]) != M.rank) to[rank_of(devs[m])] = true;
  for (int m = 0; m < n; m++) {
    if (rank_of(devs[m]) == M.rank) {   /* ours: to every process holding members */
      Hdr h = {MSG_PIECES, nleaves, ins_key(ins), (int64_t)seq, devs[0], 0, devs[m], 0, 0};
      for (int q = 0; q < M.size; q++) {
        if (!to[q]) continue;
        r.out[r.nout] = pack(&h, local[m], nleaves, &r.outlen[r.nout]);
        if (!r.out[r.nout]) { *why = strdup("out of memory"); goto done; }
        r.dest[r.nout++] = q;
      }
    } else {
      r.want[r.nwant] = (Hdr){MSG_PIECES, nleaves, ins_key(ins), (int64_t)seq, devs[0], 0, devs[m], 0, 0};
      r.slot[r.nwant++] = m;
    }
  }
  free(to);
  to = NULL;
  int rc = submit_wait(&r, deadline, why);
  free(r.want);
  free(r.slot);
  free(r.dest);
  free(r.outlen);
  free(r.out);
  return rc;
done:
  free(to);
  for (int i = 0; r.out && i < r.nout; i++) free(r.out[i]);
  free(r.out);
  free(r.outlen);
  free(r.dest);
  free(r.want);
  free(r.slot);
  return -1;
}

static int remote_send(HldRemote *rm, int64_t channel, int64_t from, int64_t to, uint64_t seq,
                       const HliPiece *leaves, int nleaves, char **why) {
  (void)rm;
  Req *r = calloc(1, sizeof *r);
  Hdr h = {MSG_P2P, nleaves, 0, (int64_t)seq, 0, channel, from, to, 0};
  size_t len = 0;
  char *msg = pack(&h, leaves, nleaves, &len);
  if (!r || !msg || !(r->out = malloc(sizeof *r->out)) || !(r->outlen = malloc(sizeof *r->outlen)) ||
      !(r->dest = malloc(sizeof *r->dest))) {
    free(msg);
    if (r) { free(r->out); free(r->outlen); free(r->dest); free(r); }
    *why = strdup("out of memory");
    return -1;
  }
  r->out[0] = msg;
  r->outlen[0] = len;
  r->dest[0] = rank_of(to);
  r->nout = 1;
  r->abandoned = true;   /* nobody waits: the MPI thread frees it once sent */
  pthread_mutex_lock(&M.mu);
  r->next = M.queue;
  M.queue = r;
  pthread_mutex_unlock(&M.mu);
  return 0;
}

static int remote_recv(HldRemote *rm, int64_t channel, int64_t from, int64_t to, uint64_t seq,
                       const HliPiece *dst, int nleaves, double deadline, char **why) {
  (void)rm;
  Req r = {0};
  Hdr w = {MSG_P2P, nleaves, 0, (int64_t)seq, 0, channel, from, to, 0};
  r.want = &w;
  r.nwant = 1;
  r.dst = dst;
  r.ndst = nleaves;
  int slot = 0;
  r.slot = &slot;
  return submit_wait(&r, deadline, why);
}

static void remote_depart(HldRemote *rm, bool failed) {
  (void)rm;
  pthread_mutex_lock(&M.mu);
  M.local_done = true;
  M.local_failed = failed;
  pthread_mutex_unlock(&M.mu);
}

static HldRemote remote = {remote_exchange, remote_send, remote_recv, remote_depart};

HldRemote *hld_mpi_remote(void) {
  init();
  return M.active ? &remote : NULL;
}

void hld_mpi_run_begin(void) {
  if (!M.active) return;
  pthread_mutex_lock(&M.mu);
  M.local_done = M.local_failed = M.depart_sent = false;
  M.ndeparted = 0;
  for (int q = 0; q < M.size; q++) M.departed[q] = M.rank_failed[q] = false;
  pthread_mutex_unlock(&M.mu);
}

static void post(char *buf, size_t len, int dest) {
  if (M.nsends == M.capsends) {
    int cap = M.capsends ? 2 * M.capsends : 16;
    MPI_Request *s = realloc(M.sends, (size_t)cap * sizeof *s);
    char **b = realloc(M.sendbufs, (size_t)cap * sizeof *b);
    if (!s || !b) MPI_Abort(MPI_COMM_WORLD, 2);
    M.sends = s;
    M.sendbufs = b;
    M.capsends = cap;
  }
  if (len > (size_t)1 << 31) {
    fprintf(stderr, "hlorun: error: a message of %zu bytes between MPI processes (at most 2 GiB)\n", len);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Isend(buf, (int)len, MPI_BYTE, dest, TAG, MPI_COMM_WORLD, &M.sends[M.nsends]);
  M.sendbufs[M.nsends++] = buf;
}

static void reap_sends(void) {
  for (int i = 0; i < M.nsends;) {
    int flag = 0;
    MPI_Test(&M.sends[i], &flag, MPI_STATUS_IGNORE);
    if (!flag) { i++; continue; }
    free(M.sendbufs[i]);
    M.sends[i] = M.sends[--M.nsends];
    M.sendbufs[i] = M.sendbufs[M.nsends];
  }
}

/* One received message: claim it for a waiting request, or keep it. */
static void arrived(In *in) {
  if (in->h.kind == MSG_DEPART) {
    int q = in->src;
    if (!M.departed[q]) { M.departed[q] = true; M.ndeparted++; }
    M.rank_failed[q] = in->h.failed != 0;
    free(in->buf);
    free(in);
    for (Req *r = M.pending, *nx; r; r = nx) { nx = r->next; check_departed(r); finish(r); }
    return;
  }
  in->next = M.unclaimed;
  M.unclaimed = in;
  for (Req *r = M.pending, *nx; r; r = nx) { nx = r->next; match_unclaimed(r); finish(r); }
}

static bool poll_once(void) {
  bool busy = false;
  int flag = 0;
  MPI_Status st;
  MPI_Iprobe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &flag, &st);
  if (flag) {
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    In *in = calloc(1, sizeof *in);
    char *buf = malloc(count > 0 ? (size_t)count : 1);
    if (!in || !buf) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    in->buf = buf;
    in->len = (size_t)count;
    in->src = st.MPI_SOURCE;
    if ((size_t)count >= sizeof in->h) memcpy(&in->h, buf, sizeof in->h);
    pthread_mutex_lock(&M.mu);
    arrived(in);
    pthread_mutex_unlock(&M.mu);
    busy = true;
  }
  pthread_mutex_lock(&M.mu);
  while (M.queue) {   /* new requests: post their messages, then wait for theirs */
    Req *r = M.queue;
    M.queue = r->next;
    for (int i = 0; i < r->nout; i++) post(r->out[i], r->outlen[i], r->dest[i]);
    r->nout = 0;
    if (r->abandoned) {
      free(r->out);
      free(r->outlen);
      free(r->dest);
      free(r);
      continue;
    }
    r->next = M.pending;
    M.pending = r;
    match_unclaimed(r);
    check_departed(r);
    finish(r);
    busy = true;
  }
  bool depart = M.local_done && !M.depart_sent;
  bool failed = M.local_failed;
  if (depart) M.depart_sent = true;
  pthread_mutex_unlock(&M.mu);
  if (depart) {
    for (int q = 0; q < M.size; q++) {
      if (q == M.rank) continue;
      Hdr h = {MSG_DEPART, 0, 0, 0, 0, 0, 0, 0, failed};
      char *b = malloc(sizeof h);
      if (!b) MPI_Abort(MPI_COMM_WORLD, 2);
      memcpy(b, &h, sizeof h);
      post(b, sizeof h, q);
    }
    busy = true;
  }
  reap_sends();
  return busy;
}

void hld_mpi_progress_until_done(HldComm *c) {
  (void)c;
  if (!M.active) return;
  int idle = 0;
  for (;;) {
    bool busy = poll_once();
    pthread_mutex_lock(&M.mu);
    bool over = M.depart_sent && M.ndeparted == M.size - 1;
    pthread_mutex_unlock(&M.mu);
    if (over) break;
    if (busy) { idle = 0; continue; }
    /* MPI moves a large message only while both sides call it: keep
     * polling (yielding the core to the device threads) while a transfer
     * is under way; otherwise back off to 1 ms. */
    pthread_mutex_lock(&M.mu);
    bool transfer = M.nsends > 0 || M.pending != NULL;
    pthread_mutex_unlock(&M.mu);
    if (transfer) { sched_yield(); continue; }
    struct timespec ts = {0, idle < 100 ? 20000 : 1000000};
    idle++;
    nanosleep(&ts, NULL);
  }
  while (M.nsends) {
    reap_sends();
    if (M.nsends) { struct timespec ts = {0, 100000}; nanosleep(&ts, NULL); }
  }
  /* Messages nobody claimed (sends to devices that never received them). */
  pthread_mutex_lock(&M.mu);
  while (M.unclaimed) { In *in = M.unclaimed; M.unclaimed = in->next; free(in->buf); free(in); }
  pthread_mutex_unlock(&M.mu);
}

bool hld_mpi_remote_failed(void) {
  if (!M.active) return false;
  for (int q = 0; q < M.size; q++)
    if (q != M.rank && M.rank_failed[q]) return true;
  return false;
}

void hld_mpi_set_devices(int64_t ndev) { M.ndev = ndev; }

/* ---- results to rank 0 -------------------------------------------------------------- */

int hld_mpi_gather_results(HloCtx *ctx, const HloModule *m, int64_t ndev, int64_t first,
                           int64_t nlocal, HloBuffer **results) {
  if (!M.active) return 0;
  (void)first;
  const HloShape *shape = &m->entry->root->shape;
  if (M.rank != 0) {
    for (int64_t i = 0; i < nlocal; i++) {
      HliValue *v = results[first + i]->v;
      int32_t n;
      HliValue **leaves = hli_value_leaves(v, &n);
      HliPiece p[256];
      if (!leaves || n > 256) MPI_Abort(MPI_COMM_WORLD, 2);
      for (int32_t k = 0; k < n; k++) p[k] = (HliPiece){leaves[k]->data, leaves[k]->nbytes};
      Hdr h = {0, n, 0, 0, 0, 0, first + i, 0, 0};
      size_t len;
      char *b = pack(&h, p, n, &len);
      free(leaves);
      if (!b || len > (size_t)1 << 31) MPI_Abort(MPI_COMM_WORLD, 2);
      MPI_Send(b, (int)len, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
      free(b);
    }
    return 0;
  }
  for (int64_t d = nlocal; d < ndev; d++) {
    MPI_Status st;
    int count = 0;
    MPI_Probe(rank_of(d), TAG_RESULT, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    In in = {0};
    in.buf = malloc(count > 0 ? (size_t)count : 1);
    if (!in.buf) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Recv(in.buf, count, MPI_BYTE, rank_of(d), TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    in.len = (size_t)count;
    memcpy(&in.h, in.buf, sizeof in.h);
    const uint64_t *sizes;
    const char *data;
    HliValue *v = hli_value_new(NULL, shape);
    int32_t n = 0;
    HliValue **leaves = v ? hli_value_leaves(v, &n) : NULL;
    int bad = !leaves || unpack(&in, &sizes, &data) != 0 || in.h.nleaves != n || in.h.from != d;
    for (int32_t k = 0; !bad && k < n; k++) {
      if (sizes[k] != leaves[k]->nbytes) { bad = 1; break; }
      memcpy(leaves[k]->data, data, sizes[k]);
      data += sizes[k];
    }
    free(leaves);
    free(in.buf);
    if (bad || hli_make_buffer(ctx, v, shape, &results[d]) != HLO_OK) {
      if (bad) hli_value_unref(NULL, v);
      hli_api_fail(ctx, HLO_IO_ERROR, "the result of device %lld from MPI rank %d is malformed",
                   (long long)d, rank_of(d));
      return -1;
    }
  }
  return 0;
}
