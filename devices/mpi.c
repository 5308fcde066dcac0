/* mpi.c: the transport between the processes of an MPI job (mpi.h).
 *
 * Under mpirun -np N every rank runs a contiguous block of the devices as
 * threads (run.c), and the thread that called hlo_execute_devices serves
 * MPI for them: the only thread that calls MPI (MPI_THREAD_FUNNELED).
 * Device threads hand it requests through a queue and wait on a condition:
 *
 * - a transfer is a small header on the control tag (kind, instruction,
 *   execution count, first member, devices, leaf sizes) and then its leaves
 *   as data messages on a tag of the transfer's own, sent from the sender's
 *   memory and received straight into where they go (recv's leaves, an
 *   all-reduce's accumulator, or buffers of the interpreter's cache for an
 *   exchange). Headers come from any source and are matched by their key,
 *   so the order in which ranks reach collectives does not matter; a
 *   header nobody waits for yet keeps its data at the sender until a
 *   request claims it;
 * - a collective's leader (the last local member to arrive) sends the
 *   local members' leaves to each process where a member reads them, and
 *   waits for those its members read; an all-reduce instead passes a
 *   running fold from process to process (chain.c: post_send, post_recv);
 * - send posts a copy; recv waits for the matching transfer;
 * - when every local device has finished, the rank tells every other rank
 *   (failed or not); a wait for a device of a rank that finished fails at
 *   once, so no rank hangs on another's failure. The run ends when every
 *   rank has finished and every transfer from or to this rank is through:
 *   MPI keeps order between two ranks, so by then every header sent to
 *   this rank has arrived, and those nobody claimed are received and
 *   dropped.
 *
 * Waiting does not spin: MPI's blocking calls would busy-poll a core the
 * device threads and the other ranks need, so the MPI thread tests its
 * requests and, past a short window of yielding polls after each message,
 * sleeps on a condition between rounds (new requests wake it at once;
 * hld_mpi_progress_until_done says how long it pauses otherwise).
 *
 * Values are exchanged as raw bytes and folded in rank order by the
 * interpreter's own loops (interp/kernels/collectives.c), never by MPI's
 * reductions, so a split run gives the threaded run's bits. */
#include "devices/mpi.h"
#include "interp/api.h"
#include "interp/valio.h"
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

enum { TAG_CTRL = 7301, TAG_RESULT = 7302, TAG_DATA0 = 8192 };
enum { MSG_PIECES = 1, MSG_P2P = 2, MSG_DEPART = 3, MSG_STEP = 4 };
enum { MAX_LEAVES = 256 };
/* Transfers up to this many bytes travel inside their header: one message,
 * one round of the MPI threads instead of two (loops of small collectives). */
enum { INLINE_MAX = 16 << 10 };
/* How long after a message the MPI thread polls (yielding) before it
 * sleeps between polls (hld_mpi_progress_until_done). */
#define YIELD_WINDOW 200e-6
/* MPI counts are ints: a leaf travels in pieces of at most this. */
#define PIECE_MAX ((size_t)1 << 30)

/* A transfer's header (control message, followed by the leaf sizes). */
typedef struct Hdr {
  int32_t kind, nleaves;
  int64_t ins, seq, first;   /* collective: instruction key, execution count, first member */
  int64_t channel, from, to; /* from: the sending device; to: receiving device (p2p, step); step: channel = part */
  int64_t failed;            /* MSG_DEPART */
  int32_t tag;               /* the tag of the transfer's data messages */
  int32_t inlined;           /* 1: the leaves follow the sizes in this message */
  int64_t run;               /* the sender's run (hld_mpi_run_begin counts them) */
} Hdr;

/* A header received and not yet claimed: its data waits at the sender. */
typedef struct In {
  Hdr h;
  int src;
  struct In *next;
  uint64_t sizes[];
} In;

/* A transfer a request awaits. */
typedef struct Want {
  Hdr key;                   /* kind, ins, seq, first, channel, from, to */
  int slot;                  /* exchange: the member whose leaves it brings */
  const HliPiece *dst;       /* receive into these (exchange: NULL, allocated) */
  int ndst;
  int left;                  /* data messages not yet received (after the header) */
  bool matched, got;
} Want;

/* A transfer a request sends: header, then the leaves from their memory. */
typedef struct Out {
  Hdr h;
  int dest;
  const HliPiece *leaves;
} Out;

/* A device thread's request (HldXfer for the pipeline's messages). */
struct HldXfer {
  Out *outs;
  int nout;
  Want *want;
  int nwant, got;
  int inflight;              /* MPI requests not yet complete */
  HliPiece **into;           /* exchange: recv[r] slots to fill (malloc'd leaves) */
  HliPiece one;              /* post_send / post_recv: the one leaf */
  char *owned;               /* send: the copy sent (freed with the request; buffer cache) */
  size_t nowned;
  HliPiece *ownleaves;
  bool done, failed, cancel, abandoned;
  char *why;
  struct HldXfer *next;
};
typedef struct HldXfer Req;

/* An MPI request in flight: the request it serves, the want it fills (-1:
 * a send), and memory to free when it completes. */
typedef struct Op {
  Req *r;
  int want;
  void *free_after;
  size_t cached;             /* free_after is from the buffer cache, of this size (0: malloc'd) */
} Op;

static struct {
  bool inited, active;
  int size, rank;
  int tag_ub;
  pthread_mutex_t mu;
  pthread_cond_t cv;         /* device threads: a request is done */
  pthread_cond_t wake;       /* the MPI thread: new requests, cancels, departure */
  Req *queue;                /* submitted, not yet taken by the MPI thread */
  /* The MPI thread's own (no lock): */
  Req *pending;              /* taken: sending and/or waiting for transfers */
  In *unclaimed;
  In *future;                /* headers of the next run, oldest first: a rank may start it first */
  int64_t run;
  MPI_Request *mreq;
  Op *ops;
  int nops, capops;
  unsigned *next_tag;           /* per destination rank */
  bool *departed, *rank_failed;  /* per rank */
  int ndeparted;
  bool local_done, local_failed, depart_sent;   /* local_*: under mu */
  int64_t ndev;
} M = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER,
       .wake = PTHREAD_COND_INITIALIZER};

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
  int *ub = NULL, flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  M.tag_ub = flag && ub ? *ub : 32767;
  M.active = M.size > 1;
  M.departed = calloc((size_t)M.size, sizeof *M.departed);
  M.rank_failed = calloc((size_t)M.size, sizeof *M.rank_failed);
  M.next_tag = calloc((size_t)M.size, sizeof *M.next_tag);
  if (!M.departed || !M.rank_failed || !M.next_tag) MPI_Abort(MPI_COMM_WORLD, 2);
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

static bool matches(const Hdr *w, const Hdr *h) {
  if (w->kind != h->kind) return false;
  if (w->kind == MSG_PIECES)
    return w->ins == h->ins && w->seq == h->seq && w->first == h->first && w->from == h->from;
  if (w->kind == MSG_STEP)
    return w->ins == h->ins && w->seq == h->seq && w->first == h->first && w->channel == h->channel &&
           w->from == h->from && w->to == h->to;
  return w->channel == h->channel && w->from == h->from && w->to == h->to && w->seq == h->seq;
}

static char *fmt(const char *f, long long a, long long b) {
  char *s = NULL;
  if (asprintf(&s, f, a, b) < 0) s = NULL;
  return s;
}

static void fail_req(Req *r, char *why) {
  if (r->failed) { free(why); return; }
  r->failed = true;
  r->why = why;
}

/* ---- the MPI thread: messages in flight ----------------------------------- */

static Op *new_op(Req *r, int want, void *free_after) {
  if (M.nops == M.capops) {
    int cap = M.capops ? 2 * M.capops : 64;
    MPI_Request *q = realloc(M.mreq, (size_t)cap * sizeof *q);
    if (q) M.mreq = q;
    Op *o = realloc(M.ops, (size_t)cap * sizeof *o);
    if (!q || !o) MPI_Abort(MPI_COMM_WORLD, 2);
    M.ops = o;
    M.capops = cap;
  }
  M.ops[M.nops] = (Op){r, want, free_after, 0};
  if (r) r->inflight++;
  return &M.ops[M.nops];
}

/* Data messages of one transfer: every leaf in pieces, in order (MPI keeps
 * the order of messages with one source and tag). */
static void data_sends(Req *r, const HliPiece *leaves, int n, int dest, int tag) {
  for (int i = 0; i < n; i++)
    for (size_t o = 0; o < leaves[i].nbytes; o += PIECE_MAX) {
      size_t len = leaves[i].nbytes - o < PIECE_MAX ? leaves[i].nbytes - o : PIECE_MAX;
      new_op(r, -1, NULL);
      MPI_Isend((const char *)leaves[i].data + o, (int)len, MPI_BYTE, dest, tag, MPI_COMM_WORLD,
                &M.mreq[M.nops++]);
    }
}

/* Receive a transfer's data into bufs (sizes from its header); free_bufs:
 * nobody wants it, drop it once here. Returns the messages posted. */
static int data_recvs(Req *r, int want, const In *in, char *const *bufs, bool free_bufs) {
  int posted = 0;
  for (int i = 0; i < in->h.nleaves; i++)
    for (size_t o = 0; o < in->sizes[i]; o += PIECE_MAX) {
      size_t len = in->sizes[i] - o < PIECE_MAX ? in->sizes[i] - o : PIECE_MAX;
      bool last = o + len >= in->sizes[i];
      Op *op = new_op(r, want, free_bufs && last ? bufs[i] : NULL);
      if (free_bufs && last) op->cached = in->sizes[i];
      MPI_Irecv(bufs[i] + o, (int)len, MPI_BYTE, in->src, in->h.tag, MPI_COMM_WORLD, &M.mreq[M.nops++]);
      posted++;
    }
  if (free_bufs)
    for (int i = 0; i < in->h.nleaves; i++)
      if (in->sizes[i] == 0) hli_buffer_free(NULL, bufs[i], 0);
  return posted;
}

/* The leaves of an inlined transfer, after its sizes. */
static const char *inline_data(const In *in) { return (const char *)(in->sizes + in->h.nleaves); }

/* A transfer nobody will claim: receive and drop its data, so its sender's
 * messages complete. */
static void discard(const In *in) {
  if (in->h.inlined) return;
  char *bufs[MAX_LEAVES];
  for (int i = 0; i < in->h.nleaves; i++) {
    bufs[i] = hli_buffer_alloc(NULL, in->sizes[i]);
    if (!bufs[i]) MPI_Abort(MPI_COMM_WORLD, 2);
  }
  data_recvs(NULL, -1, in, bufs, true);
}

static void post_outs(Req *r) {
  for (int i = 0; i < r->nout; i++) {
    Out *o = &r->outs[i];
    int dest = o->dest;
    /* Data tags cycle through [TAG_DATA0, tag_ub]: with Open MPI's bound
     * (2^31 - 1) no two transfers in flight between two ranks share one. */
    int span = M.tag_ub - TAG_DATA0 + 1;
    o->h.tag = TAG_DATA0 + (span > 0 ? (int)(M.next_tag[dest]++ % (unsigned)span) : 0);
    size_t total = 0;
    for (int k = 0; k < o->h.nleaves; k++) total += o->leaves[k].nbytes;
    o->h.inlined = total <= INLINE_MAX;
    o->h.run = M.run;
    size_t hl = sizeof o->h + (size_t)o->h.nleaves * sizeof(uint64_t) + (o->h.inlined ? total : 0);
    char *hb = malloc(hl);
    if (!hb) MPI_Abort(MPI_COMM_WORLD, 2);
    memcpy(hb, &o->h, sizeof o->h);
    uint64_t *sizes = (uint64_t *)(hb + sizeof o->h);
    char *data = (char *)(sizes + o->h.nleaves);
    for (int k = 0; k < o->h.nleaves; k++) {
      sizes[k] = o->leaves[k].nbytes;
      if (o->h.inlined && o->leaves[k].nbytes) memcpy(data, o->leaves[k].data, o->leaves[k].nbytes);
      if (o->h.inlined) data += o->leaves[k].nbytes;
    }
    new_op(r, -1, hb);
    MPI_Isend(hb, (int)hl, MPI_BYTE, dest, TAG_CTRL, MPI_COMM_WORLD, &M.mreq[M.nops++]);
    if (!o->h.inlined) data_sends(r, o->leaves, o->h.nleaves, dest, o->h.tag);
  }
}

/* Claim a received header for want k of r: receive its data where the
 * request wants it. */
static void claim(Req *r, int k, In *in) {
  Want *w = &r->want[k];
  int n = in->h.nleaves;
  char *bufs[MAX_LEAVES];
  w->matched = true;
  if (!w->dst) {   /* a collective member's leaves: buffers the communicator frees */
    HliPiece *leaves = calloc((size_t)(n ? n : 1), sizeof *leaves);
    if (!leaves) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < n; i++) {
      bufs[i] = hli_buffer_alloc(NULL, in->sizes[i]);   /* comm.c gives it back */
      if (!bufs[i]) MPI_Abort(MPI_COMM_WORLD, 2);
      leaves[i] = (HliPiece){bufs[i], in->sizes[i]};
    }
    r->into[w->slot] = leaves;
  } else {         /* into the destination leaves, which must have the sizes sent */
    bool ok = n == w->ndst;
    for (int i = 0; i < n && ok; i++) ok = in->sizes[i] == w->dst[i].nbytes;
    if (!ok) {
      fail_req(r, fmt("device %lld sent %lld arrays of other sizes than this receive takes",
                      in->h.from, n));
      discard(in);
      return;
    }
    for (int i = 0; i < n; i++) bufs[i] = (char *)w->dst[i].data;
  }
  if (in->h.inlined) {
    const char *data = inline_data(in);
    for (int i = 0; i < n; i++) {
      if (in->sizes[i]) memcpy(bufs[i], data, in->sizes[i]);
      data += in->sizes[i];
    }
    w->left = 0;
  } else {
    w->left = data_recvs(r, k, in, bufs, false);
  }
  if (w->left == 0) { w->got = true; r->got++; }
}

/* Try the unclaimed headers against r's wants. */
static void match_unclaimed(Req *r) {
  for (int k = 0; k < r->nwant && !r->failed; k++) {
    if (r->want[k].matched) continue;
    for (In **p = &M.unclaimed; *p; p = &(*p)->next)
      if (matches(&r->want[k].key, &(*p)->h)) {
        In *in = *p;
        *p = in->next;
        claim(r, k, in);
        free(in);
        break;
      }
  }
}

/* A wanted device whose rank has finished will send nothing more. */
static void check_departed(Req *r) {
  for (int k = 0; k < r->nwant && !r->failed; k++) {
    if (r->want[k].matched) continue;
    int q = rank_of(r->want[k].key.from);
    if (!M.departed[q]) continue;
    fail_req(r, fmt(M.rank_failed[q] ? "device %lld (on MPI rank %lld) failed"
                                     : "device %lld (on MPI rank %lld) finished its program without reaching it",
                    r->want[k].key.from, q));
  }
}

static void free_req(Req *r) {
  free(r->outs);
  free(r->want);
  if (r->owned) hli_buffer_free(NULL, r->owned, r->nowned);
  free(r->ownleaves);
  free(r->why);
  free(r);
}

/* A request whose transfers all came (or that failed) and whose messages
 * are all out is done: its thread may free its memory from now on. */
static void try_finish(Req *r) {
  if (r->inflight > 0 || !(r->got == r->nwant || r->failed)) return;
  for (Req **p = &M.pending; *p; p = &(*p)->next)
    if (*p == r) { *p = r->next; break; }
  if (r->abandoned) { free_req(r); return; }
  pthread_mutex_lock(&M.mu);
  r->done = true;
  pthread_cond_broadcast(&M.cv);
  pthread_mutex_unlock(&M.mu);
}

/* One received header: claim it for a waiting request, or keep it. */
static void arrived(In *in) {
  if (in->h.run != M.run) {   /* a rank already in the next run: keep it for then */
    In **p = &M.future;
    while (*p) p = &(*p)->next;
    in->next = NULL;
    *p = in;
    return;
  }
  if (in->h.kind == MSG_DEPART) {
    int q = in->src;
    if (!M.departed[q]) { M.departed[q] = true; M.ndeparted++; }
    M.rank_failed[q] = in->h.failed != 0;
    free(in);
    for (Req *r = M.pending, *nx; r; r = nx) { nx = r->next; check_departed(r); try_finish(r); }
    return;
  }
  for (Req *r = M.pending; r; r = r->next)
    for (int k = 0; k < r->nwant; k++)
      if (!r->want[k].matched && !r->failed && matches(&r->want[k].key, &in->h)) {
        claim(r, k, in);
        free(in);
        try_finish(r);
        return;
      }
  in->next = M.unclaimed;
  M.unclaimed = in;
}

/* Completed MPI requests. */
static bool reap(void) {
  if (M.nops == 0) return false;
  int *idx = malloc((size_t)M.nops * sizeof *idx), nd = 0;
  if (!idx) MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Testsome(M.nops, M.mreq, &nd, idx, MPI_STATUSES_IGNORE);
  if (nd == MPI_UNDEFINED || nd == 0) { free(idx); return false; }
  Req **touched = malloc((size_t)nd * sizeof *touched);
  if (!touched) MPI_Abort(MPI_COMM_WORLD, 2);
  int nt = 0;
  for (int i = 0; i < nd; i++) {
    Op *o = &M.ops[idx[i]];
    if (o->cached) hli_buffer_free(NULL, o->free_after, o->cached);
    else free(o->free_after);
    Req *r = o->r;
    if (!r) continue;
    r->inflight--;
    if (o->want >= 0 && --r->want[o->want].left == 0) { r->want[o->want].got = true; r->got++; }
    touched[nt++] = r;
  }
  /* Compact: completed requests are MPI_REQUEST_NULL now. */
  int k = 0;
  for (int i = 0; i < M.nops; i++)
    if (M.mreq[i] != MPI_REQUEST_NULL) { M.mreq[k] = M.mreq[i]; M.ops[k] = M.ops[i]; k++; }
  M.nops = k;
  /* A request finishes once: try each distinct one. */
  for (int i = 0; i < nt; i++) {
    bool seen = false;
    for (int j = 0; j < i && !seen; j++) seen = touched[j] == touched[i];
    if (!seen) try_finish(touched[i]);
  }
  free(touched);
  free(idx);
  return true;
}

/* One round of the MPI thread's work. true when it did something. */
static bool poll_once(void) {
  bool busy = false;
  for (;;) {   /* headers */
    int flag = 0, count = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_CTRL, MPI_COMM_WORLD, &flag, &st);
    if (!flag) break;
    MPI_Get_count(&st, MPI_BYTE, &count);
    In *in = calloc(1, sizeof *in + (count > 0 ? (size_t)count : 0));
    if (!in) MPI_Abort(MPI_COMM_WORLD, 2);
    char *buf = (char *)in->sizes;   /* header and sizes land here, then move */
    MPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    in->src = st.MPI_SOURCE;
    if ((size_t)count < sizeof in->h) MPI_Abort(MPI_COMM_WORLD, 2);
    memcpy(&in->h, buf, sizeof in->h);
    size_t need = sizeof in->h + (size_t)in->h.nleaves * sizeof(uint64_t);
    if (in->h.nleaves < 0 || in->h.nleaves > MAX_LEAVES || (size_t)count < need)
      MPI_Abort(MPI_COMM_WORLD, 2);
    memmove(in->sizes, buf + sizeof in->h, (size_t)count - sizeof in->h);
    for (int i = 0; in->h.inlined && i < in->h.nleaves; i++) need += in->sizes[i];
    if ((size_t)count != need) MPI_Abort(MPI_COMM_WORLD, 2);
    arrived(in);
    busy = true;
  }
  pthread_mutex_lock(&M.mu);
  Req *taken = M.queue;
  M.queue = NULL;
  bool depart = M.local_done && !M.depart_sent;
  bool failed = M.local_failed;
  if (depart) M.depart_sent = true;
  for (Req *r = M.pending; r; r = r->next)   /* given up by their threads */
    if (r->cancel && !r->failed) fail_req(r, NULL);
  pthread_mutex_unlock(&M.mu);
  /* Oldest first: a device's transfers go out in the order it made them. */
  Req *rev = NULL;
  while (taken) { Req *r = taken; taken = r->next; r->next = rev; rev = r; }
  while (rev) {
    Req *r = rev;
    rev = r->next;
    r->next = M.pending;
    M.pending = r;
    post_outs(r);
    match_unclaimed(r);
    check_departed(r);
    busy = true;
  }
  for (Req *r = M.pending, *nx; r; r = nx) { nx = r->next; try_finish(r); }
  if (depart) {
    for (int q = 0; q < M.size; q++) {
      if (q == M.rank) continue;
      Hdr *h = calloc(1, sizeof *h);
      if (!h) MPI_Abort(MPI_COMM_WORLD, 2);
      *h = (Hdr){.kind = MSG_DEPART, .failed = failed, .run = M.run};
      new_op(NULL, -1, h);
      MPI_Isend(h, (int)sizeof *h, MPI_BYTE, q, TAG_CTRL, MPI_COMM_WORLD, &M.mreq[M.nops++]);
    }
    busy = true;
  }
  if (M.depart_sent)   /* our devices are done: nobody here will claim these */
    while (M.unclaimed) {
      In *in = M.unclaimed;
      M.unclaimed = in->next;
      discard(in);
      free(in);
      busy = true;
    }
  busy |= reap();
  return busy;
}

/* ---- device threads --------------------------------------------------------- */

/* With no --timeout, a wait for other processes still ends: after
 * HLORUN_MPI_WAIT_LIMIT seconds (default 1800, XLA:CPU's collective
 * timeout) without the messages, as a deadlock across processes would. */
static double wait_limit(void) {
  const char *e = getenv("HLORUN_MPI_WAIT_LIMIT");
  double v = e ? atof(e) : 0;
  return v > 0 ? v : 1800;
}

static void submit(Req *r) {
  pthread_mutex_lock(&M.mu);
  r->next = M.queue;
  M.queue = r;
  pthread_cond_signal(&M.wake);
  pthread_mutex_unlock(&M.mu);
}

/* Wait (device thread) until r is done or the run's deadline (monotonic
 * seconds, 0: none) passes, then free r. Past the deadline the MPI thread
 * is told to give up on it, and it is done once no message it posted is
 * still in flight (they point into the caller's memory). */
static int wait_req(Req *r, double deadline, char **why) {
  bool own_limit = deadline <= 0;
  if (own_limit) deadline = hli_now() + wait_limit();
  bool gave_up = false;
  pthread_mutex_lock(&M.mu);
  while (!r->done) {
    double left = deadline - hli_now();
    if (left <= 0 && !gave_up) {
      gave_up = r->cancel = true;
      pthread_cond_signal(&M.wake);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double step = left > 0 && left < 0.5 ? left : 0.5;
    double until = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + step;
    ts.tv_sec = (time_t)until;
    ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
    pthread_cond_timedwait(&M.cv, &M.mu, &ts);
  }
  pthread_mutex_unlock(&M.mu);
  int rc = r->failed ? -1 : 0;
  if (rc && why) {
    if (r->why && !gave_up) *why = strdup(r->why);
    else if (gave_up)
      *why = strdup(own_limit ? "no message from the other MPI processes' devices for "
                                "HLORUN_MPI_WAIT_LIMIT seconds (default 1800): a deadlock "
                                "across processes, or a peer that hangs"
                              : "timed out waiting for the devices of other MPI processes");
    else *why = strdup("the transfer between processes failed");
  }
  free_req(r);
  return rc;
}

static Req *new_req(int nout, int nwant) {
  Req *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->outs = calloc((size_t)(nout ? nout : 1), sizeof *r->outs);
  r->want = calloc((size_t)(nwant ? nwant : 1), sizeof *r->want);
  if (!r->outs || !r->want) { free_req(r); return NULL; }
  return r;
}

static int remote_exchange(HldRemote *rm, const HloInstr *ins, uint64_t seq, const int64_t *devs,
                           int n, const HliPiece *const *local, int nleaves, HliPiece **recv,
                           const HliHints *hints, double deadline, char **why) {
  (void)rm;
  if (nleaves > MAX_LEAVES) { *why = strdup("too many array leaves for one transfer"); return -1; }
  bool *to = calloc((size_t)M.size, sizeof *to);
  Req *r = new_req(n * M.size, n);
  if (!to || !r) {
    free(to);
    if (r) free_req(r);
    *why = strdup("out of memory");
    return -1;
  }
  r->into = recv;
  bool (*reads)(const HloInstr *, int, int) = hints ? hints->reads : NULL;
  for (int m = 0; m < n; m++) {
    /* to[q]: a member on process q reads member m's leaves. Both sides
     * decide alike, so what is sent is what is awaited. */
    for (int q = 0; q < M.size; q++) to[q] = false;
    for (int k = 0; k < n; k++)
      if (!reads || reads(ins, k, m)) to[rank_of(devs[k])] = true;
    Hdr h = {MSG_PIECES, nleaves, ins_key(ins), (int64_t)seq, devs[0], 0, devs[m], 0, 0, 0, 0, 0};
    if (rank_of(devs[m]) == M.rank) {   /* ours: to every other process that reads it */
      for (int q = 0; q < M.size; q++)
        if (to[q] && q != M.rank) r->outs[r->nout++] = (Out){h, q, local[m]};
    } else if (to[M.rank]) {
      r->want[r->nwant++] = (Want){.key = h, .slot = m};
    }
  }
  free(to);
  submit(r);
  return wait_req(r, deadline, why);
}

static int remote_send(HldRemote *rm, int64_t channel, int64_t from, int64_t to, uint64_t seq,
                       const HliPiece *leaves, int nleaves, char **why) {
  (void)rm;
  /* The sender goes on at once: the transfer sends a copy. */
  size_t total = 0;
  for (int i = 0; i < nleaves; i++) total += leaves[i].nbytes;
  Req *r = nleaves >= 0 && nleaves <= MAX_LEAVES ? new_req(1, 0) : NULL;
  if (r) {
    r->owned = hli_buffer_alloc(NULL, total);
    r->nowned = total;
    r->ownleaves = calloc(nleaves > 0 ? (size_t)nleaves : 1, sizeof *r->ownleaves);
  }
  if (!r || !r->owned || !r->ownleaves) {
    if (r) free_req(r);
    *why = strdup(nleaves > MAX_LEAVES ? "too many array leaves for one transfer" : "out of memory");
    return -1;
  }
  size_t off = 0;
  for (int i = 0; i < nleaves; i++) {
    memcpy(r->owned + off, leaves[i].data, leaves[i].nbytes);
    r->ownleaves[i] = (HliPiece){r->owned + off, leaves[i].nbytes};
    off += leaves[i].nbytes;
  }
  Hdr h = {MSG_P2P, nleaves, 0, (int64_t)seq, 0, channel, from, to, 0, 0, 0, 0};
  r->outs[0] = (Out){h, rank_of(to), r->ownleaves};
  r->nout = 1;
  r->abandoned = true;   /* nobody waits: the MPI thread frees it once sent */
  submit(r);
  return 0;
}

static int remote_recv(HldRemote *rm, int64_t channel, int64_t from, int64_t to, uint64_t seq,
                       const HliPiece *dst, int nleaves, double deadline, char **why) {
  (void)rm;
  Req *r = new_req(0, 1);
  if (!r) { *why = strdup("out of memory"); return -1; }
  Hdr w = {MSG_P2P, nleaves, 0, (int64_t)seq, 0, channel, from, to, 0, 0, 0, 0};
  r->want[0] = (Want){.key = w, .dst = dst, .ndst = nleaves};
  r->nwant = 1;
  submit(r);
  return wait_req(r, deadline, why);
}

static void remote_depart(HldRemote *rm, bool failed) {
  (void)rm;
  pthread_mutex_lock(&M.mu);
  M.local_done = true;
  M.local_failed = failed;
  pthread_cond_signal(&M.wake);
  pthread_mutex_unlock(&M.mu);
}

static int remote_process_of(HldRemote *rm, int64_t d) {
  (void)rm;
  return rank_of(d);
}

static HldXfer *remote_post_send(HldRemote *rm, const HloInstr *ins, uint64_t seq, int64_t first,
                                 int64_t part, int64_t from, int64_t to, const void *data,
                                 size_t nbytes, char **why) {
  (void)rm;
  Req *r = new_req(1, 0);
  if (!r) { *why = strdup("out of memory"); return NULL; }
  Hdr h = {MSG_STEP, 1, ins_key(ins), (int64_t)seq, first, part, from, to, 0, 0, 0, 0};
  if (nbytes <= INLINE_MAX) {
    /* Small: sent from a copy, so the caller need not wait for the MPI
     * thread (a loop of small all-reduces waits less); its handle is done. */
    Req *c = new_req(1, 0);
    if (c) c->owned = hli_buffer_alloc(NULL, nbytes);
    if (!c || !c->owned) {
      if (c) free_req(c);
      free_req(r);
      *why = strdup("out of memory");
      return NULL;
    }
    memcpy(c->owned, data, nbytes);
    c->nowned = nbytes;
    c->one = (HliPiece){c->owned, nbytes};
    c->outs[0] = (Out){h, rank_of(to), &c->one};
    c->nout = 1;
    c->abandoned = true;
    submit(c);
    r->done = true;
    return r;
  }
  r->one = (HliPiece){data, nbytes};
  r->outs[0] = (Out){h, rank_of(to), &r->one};
  r->nout = 1;
  submit(r);
  return r;
}

static HldXfer *remote_post_recv(HldRemote *rm, const HloInstr *ins, uint64_t seq, int64_t first,
                                 int64_t part, int64_t from, int64_t to, void *data, size_t nbytes,
                                 char **why) {
  (void)rm;
  Req *r = new_req(0, 1);
  if (!r) { *why = strdup("out of memory"); return NULL; }
  r->one = (HliPiece){data, nbytes};
  Hdr w = {MSG_STEP, 1, ins_key(ins), (int64_t)seq, first, part, from, to, 0, 0, 0, 0};
  r->want[0] = (Want){.key = w, .dst = &r->one, .ndst = 1};
  r->nwant = 1;
  submit(r);
  return r;
}

static int remote_wait(HldRemote *rm, HldXfer *t, double deadline, char **why) {
  (void)rm;
  return wait_req(t, deadline, why);
}

static HldRemote remote = {remote_exchange, remote_send,     remote_recv,      remote_depart,
                           remote_process_of, remote_post_send, remote_post_recv, remote_wait};

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
  /* This thread serves MPI: what came early for this run counts now. */
  M.run++;
  In *early = M.future;
  M.future = NULL;
  while (early) {
    In *in = early;
    early = in->next;
    arrived(in);
  }
}

void hld_mpi_progress_until_done(HldComm *c) {
  (void)c;
  if (!M.active) return;
  /* Nothing to do: sleep on the condition, woken at once by a new request;
   * MPI's own messages (another rank's headers, the steps of a large
   * transfer) are looked for after a pause that doubles from 2 us up to
   * 50 us while transfers are under way and 2 ms otherwise: short enough
   * for the pipeline, without taking a core from the device threads or
   * from the other ranks (MPI's blocking calls would spin). Only in the
   * first YIELD_WINDOW seconds after a message does it poll between
   * sched_yield()s instead, which gives way to any thread that can run. */
  long pause_ns = 0;
  double last_busy = hli_now();
#ifdef PR_SET_TIMERSLACK
  /* Pauses of microseconds, not the default 50 us slack on each. */
  int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  (void)prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
#endif
  for (;;) {
    bool busy = poll_once();
    /* Over: every rank finished, and every message from or to us is through. */
    if (M.depart_sent && M.ndeparted == M.size - 1 && M.nops == 0 && !M.pending && !M.unclaimed) {
      pthread_mutex_lock(&M.mu);
      bool more = M.queue != NULL;
      pthread_mutex_unlock(&M.mu);
      if (!more) break;
    }
    double now = hli_now();
    if (busy) { pause_ns = 0; last_busy = now; continue; }
    bool waiting = M.nops > 0 || M.pending;
    /* Just after a message the answer often follows within microseconds
     * (small collectives in a loop): yield for a moment before sleeping. */
    if (waiting && now - last_busy < YIELD_WINDOW) { sched_yield(); continue; }
    long cap = waiting ? 50000 : 2000000;
    pause_ns = pause_ns ? pause_ns * 2 : 2000;
    if (pause_ns > cap) pause_ns = cap;
    pthread_mutex_lock(&M.mu);
    if (!M.queue && !(M.local_done && !M.depart_sent)) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += pause_ns;
      if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
      pthread_cond_timedwait(&M.wake, &M.mu, &ts);
    }
    pthread_mutex_unlock(&M.mu);
  }
#ifdef PR_SET_TIMERSLACK
  if (slack > 0) (void)prctl(PR_SET_TIMERSLACK, slack, 0, 0, 0);
#endif
}

bool hld_mpi_remote_failed(void) {
  if (!M.active) return false;
  for (int q = 0; q < M.size; q++)
    if (q != M.rank && M.rank_failed[q]) return true;
  return false;
}

void hld_mpi_set_devices(int64_t ndev) { M.ndev = ndev; }

/* ---- results to rank 0 -------------------------------------------------------------- */

/* Each result travels as its header (leaf sizes) and then its leaves
 * straight from and into the values' memory: no copy on either side. */
static void send_result(int64_t d, HliValue *v) {
  int32_t n = 0;
  HliValue **leaves = hli_value_leaves(v, &n);
  if (!leaves || n > MAX_LEAVES) MPI_Abort(MPI_COMM_WORLD, 2);
  char hb[sizeof(Hdr) + MAX_LEAVES * sizeof(uint64_t)];
  Hdr h = {.nleaves = n, .from = d};
  memcpy(hb, &h, sizeof h);
  HliPiece p[MAX_LEAVES];
  for (int32_t k = 0; k < n; k++) {
    uint64_t size = leaves[k]->nbytes;
    memcpy(hb + sizeof h + (size_t)k * sizeof size, &size, sizeof size);
    p[k] = (HliPiece){leaves[k]->data, leaves[k]->nbytes};
  }
  free(leaves);
  MPI_Send(hb, (int)(sizeof h + (size_t)n * sizeof(uint64_t)), MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
  for (int32_t k = 0; k < n; k++)
    for (size_t o = 0; o < p[k].nbytes; o += PIECE_MAX) {
      size_t len = p[k].nbytes - o < PIECE_MAX ? p[k].nbytes - o : PIECE_MAX;
      MPI_Send((const char *)p[k].data + o, (int)len, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
    }
}

/* Device d's result from its rank into a new value, or NULL when it does
 * not have the result's leaves (its data is then received and dropped). */
static HliValue *recv_result(int64_t d, const HloShape *shape) {
  int src = rank_of(d), count = 0;
  char hb[sizeof(Hdr) + MAX_LEAVES * sizeof(uint64_t)];
  MPI_Status st;
  MPI_Recv(hb, (int)sizeof hb, MPI_BYTE, src, TAG_RESULT, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, MPI_BYTE, &count);
  Hdr h;
  if ((size_t)count < sizeof h) MPI_Abort(MPI_COMM_WORLD, 2);
  memcpy(&h, hb, sizeof h);
  if (h.nleaves < 0 || h.nleaves > MAX_LEAVES || (size_t)count != sizeof h + (size_t)h.nleaves * sizeof(uint64_t))
    MPI_Abort(MPI_COMM_WORLD, 2);
  uint64_t sizes[MAX_LEAVES];
  memcpy(sizes, hb + sizeof h, (size_t)h.nleaves * sizeof(uint64_t));
  HliValue *v = hli_value_new(NULL, shape);
  int32_t n = 0;
  HliValue **leaves = v ? hli_value_leaves(v, &n) : NULL;
  bool ok = leaves && n == h.nleaves && h.from == d;
  for (int32_t k = 0; ok && k < n; k++) ok = sizes[k] == leaves[k]->nbytes;
  for (int32_t k = 0; k < h.nleaves; k++) {
    char *dst = ok ? leaves[k]->data : hli_buffer_alloc(NULL, sizes[k]);
    if (!dst) MPI_Abort(MPI_COMM_WORLD, 2);
    for (size_t o = 0; o < sizes[k]; o += PIECE_MAX) {
      size_t len = sizes[k] - o < PIECE_MAX ? sizes[k] - o : PIECE_MAX;
      MPI_Recv(dst + o, (int)len, MPI_BYTE, src, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (!ok) hli_buffer_free(NULL, dst, sizes[k]);
  }
  free(leaves);
  if (!ok && v) { hli_value_unref(NULL, v); v = NULL; }
  return v;
}

int hld_mpi_gather_results(HloCtx *ctx, const HloModule *m, int64_t ndev, int64_t first,
                           int64_t nlocal, HloBuffer **results) {
  if (!M.active) return 0;
  const HloShape *shape = &m->entry->root->shape;
  if (M.rank != 0) {
    for (int64_t i = 0; i < nlocal; i++) send_result(first + i, results[first + i]->v);
    return 0;
  }
  for (int64_t d = nlocal; d < ndev; d++) {
    HliValue *v = recv_result(d, shape);
    if (!v || hli_make_buffer(ctx, v, shape, &results[d]) != HLO_OK) {
      hli_api_fail(ctx, HLO_IO_ERROR, "the result of device %lld from MPI rank %d is malformed",
                   (long long)d, rank_of(d));
      return -1;
    }
  }
  return 0;
}
