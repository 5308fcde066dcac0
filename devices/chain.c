/* chain.c: an all-reduce whose members span processes, as a running fold
 * (devices.h).
 *
 * The members in rank order form stages: maximal runs of consecutive
 * members on one process. Stage 0's process folds its members' operands
 * into an accumulator (acc = x0, then acc = acc op xr), sends it to the
 * next stage's process, which folds its own members in and sends it on;
 * the last stage rounds it into the result and sends that to every other
 * process with members. Every element is folded from x0 in rank order,
 * exactly as consume_all_reduce folds it (HliFold), so the bits are the
 * threaded run's whatever the split; and a process sends one accumulator
 * (the last one: the result) instead of each of its members' operands.
 *
 * The leaves are cut into chunks of CHUNK bytes of accumulator, so the
 * processes work as a pipeline (the next stage folds chunk k while this
 * one folds chunk k + 1), and the local members share the chunks: member
 * `part` of `nparts` takes the chunks k with k % nparts == part, folds
 * them into its own result and copies them into the other local members'
 * results. */
#include "devices/devices.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Large enough that per-message costs vanish, small enough to pipeline. */
enum { CHUNK = 4 << 20 };
/* A leaf up to this size folds in a buffer of its own on every process but
 * the last, so the result's receive is posted before anything is sent
 * (fewer rounds between threads for small all-reduces in loops). */
enum { SMALL = 64 << 10 };
/* Message keys (part): leaf << 32 | chunk for an accumulator; FINAL | ...
 * for the result. */
#define FINAL ((int64_t)1 << 62)

typedef struct Stage { int lo, hi; bool local; } Stage;   /* members [lo, hi) */

/* Messages posted and not yet waited for. */
typedef struct Pending { HldXfer **t; int n, cap; } Pending;

static int pend_add(Pending *p, HldXfer *t) {
  if (p->n == p->cap) {
    int cap = p->cap ? 2 * p->cap : 16;
    HldXfer **g = realloc(p->t, (size_t)cap * sizeof *g);
    if (!g) return -1;
    p->t = g;
    p->cap = cap;
  }
  p->t[p->n++] = t;
  return 0;
}

/* Wait for every pending message: 0, or -1 with the first failure's why. */
static int pend_wait_all(const HldChain *ch, Pending *p, char **why) {
  int rc = 0;
  for (int i = 0; i < p->n; i++) {
    char *w = NULL;
    if (ch->rm->wait(ch->rm, p->t[i], ch->deadline, &w) != 0 && rc == 0) {
      rc = -1;
      *why = w;
      w = NULL;
    }
    free(w);
  }
  p->n = 0;
  return rc;
}

static char *oom(void) { return strdup("out of memory"); }

/* The stages of the group; NULL when out of memory. */
static Stage *stages_of(const HldChain *ch, int *nst) {
  Stage *st = malloc((size_t)ch->n * sizeof *st);
  if (!st) return NULL;
  int k = 0;
  for (int r = 0; r < ch->n; r++) {
    int p = ch->rm->process_of(ch->rm, ch->devs[r]);
    if (r > 0 && p == ch->rm->process_of(ch->rm, ch->devs[r - 1])) {
      st[k - 1].hi = r + 1;
      continue;
    }
    st[k++] = (Stage){r, r + 1, ch->pieces[r] != NULL};
  }
  *nst = k;
  return st;
}

/* This member's j-th chunk of a leaf of count elements, per to a chunk:
 * its number k among all chunks, its first element and its length. */
typedef struct Chunk { int64_t k, off, cnt; } Chunk;
static Chunk chunk_of(const HldChain *ch, int64_t j, int64_t per, int64_t count) {
  int64_t k = ch->part + j * ch->nparts, off = k * per;
  return (Chunk){k, off, count - off < per ? count - off : per};
}

/* Post the receive of the result's chunk c (from the last stage) into dst,
 * kept in pend. 0, or -1 with *why. */
static int post_result_recv(const HldChain *ch, const Stage *st, int first_local, int leaf,
                            Chunk c, char *dst, size_t bytes, Pending *pend, char **why) {
  HldXfer *t = ch->rm->post_recv(ch->rm, ch->ins, ch->seq, ch->devs[0],
                                 FINAL | ((int64_t)leaf << 32) | c.k, ch->devs[ch->n - 1],
                                 ch->devs[st[first_local].lo], dst, bytes, why);
  if (!t) return -1;
  if (pend_add(pend, t)) {
    ch->rm->wait(ch->rm, t, ch->deadline, NULL);
    *why = oom();
    return -1;
  }
  return 0;
}

/* Wait for the send in *slot, if any (its memory is about to be reused). 0,
 * or -1 with *why. */
static int wait_sent(const HldChain *ch, HldXfer **slot, char **why) {
  HldXfer *t = *slot;
  *slot = NULL;
  return t ? ch->rm->wait(ch->rm, t, ch->deadline, why) : 0;
}

/* One leaf: this member's chunks through every stage. */
static int chain_leaf(const HldChain *ch, const Stage *st, int nst, int leaf, char **why) {
  const HliFold *f = ch->fold;
  size_t es = f->elem_size(f->arg, leaf), as = f->acc_size(f->arg, leaf);
  const HliPiece *mine = &ch->outs[ch->self][leaf];
  int64_t count = es ? (int64_t)(mine->nbytes / es) : 0;
  int64_t per = (int64_t)(CHUNK / as) > 0 ? (int64_t)(CHUNK / as) : 1;
  int64_t nchunks = (count + per - 1) / per;
  int64_t nmine = nchunks > ch->part ? (nchunks - ch->part + ch->nparts - 1) / ch->nparts : 0;
  if (nmine == 0) return 0;
  bool last_local = st[nst - 1].local;
  int first_local = 0;
  while (!st[first_local].local) first_local++;
  /* The accumulator: this member's result itself when it has the
   * element's size, else (bf16, f16: f32) a buffer for its chunks. */
  char *accbuf = NULL;
  size_t accbytes = (size_t)(nmine * per) * as;
  bool early = !last_local && (size_t)count * as <= SMALL;
  if ((as != es || early) && !(accbuf = hli_buffer_alloc(NULL, accbytes))) { *why = oom(); return -1; }
  HldXfer **sent = calloc((size_t)nmine, sizeof *sent);   /* accumulator sends by chunk */
  Pending pend = {0}, pre = {0};
  if (!sent) { hli_buffer_free(NULL, accbuf, accbytes); *why = oom(); return -1; }
  int rc = 0;
#define CHAIN_FAIL(w) do { *why = (w); rc = -1; goto out; } while (0)
  /* Receives of the first local stage's accumulators, posted at once so
   * the previous process can send each chunk as soon as it is folded. */
  for (int64_t j = 0; first_local > 0 && j < nmine; j++) {
    Chunk c = chunk_of(ch, j, per, count);
    char *acc = accbuf ? accbuf + (size_t)(j * per) * as : (char *)mine->data + (size_t)c.off * es;
    HldXfer *t = ch->rm->post_recv(ch->rm, ch->ins, ch->seq, ch->devs[0],
                                   ((int64_t)leaf << 32) | c.k, ch->devs[st[first_local].lo - 1],
                                   ch->devs[st[first_local].lo], acc, (size_t)c.cnt * as, why);
    if (!t) { rc = -1; goto out; }
    if (pend_add(&pre, t)) { ch->rm->wait(ch->rm, t, ch->deadline, NULL); CHAIN_FAIL(oom()); }
  }
  for (int64_t j = 0; early && j < nmine; j++) {   /* the result's receives, at once */
    Chunk c = chunk_of(ch, j, per, count);
    if (post_result_recv(ch, st, first_local, leaf, c, (char *)mine->data + (size_t)c.off * es,
                         (size_t)c.cnt * es, &pend, why) != 0) {
      rc = -1;
      goto out;
    }
  }
  for (int64_t j = 0; j < nmine; j++) {
    Chunk c = chunk_of(ch, j, per, count);
    int64_t off = c.off, cnt = c.cnt, key = ((int64_t)leaf << 32) | c.k;
    char *acc = accbuf ? accbuf + (size_t)(j * per) * as : (char *)mine->data + (size_t)off * es;
    for (int s = first_local; s < nst; s++) {
      if (!st[s].local) continue;
      if (s == first_local && s > 0) {   /* pre-posted */
        char *w = NULL;
        HldXfer *t = pre.t[j];
        pre.t[j] = NULL;
        if (ch->rm->wait(ch->rm, t, ch->deadline, &w) != 0) CHAIN_FAIL(w);
      } else if (s > 0) {                /* a later stage here: after our send from the same memory */
        char *w = NULL;
        if (wait_sent(ch, &sent[j], &w) != 0) CHAIN_FAIL(w);
        HldXfer *t = ch->rm->post_recv(ch->rm, ch->ins, ch->seq, ch->devs[0], key,
                                       ch->devs[st[s].lo - 1], ch->devs[st[s].lo], acc,
                                       (size_t)cnt * as, why);
        if (!t) { rc = -1; goto out; }
        if (ch->rm->wait(ch->rm, t, ch->deadline, &w) != 0) CHAIN_FAIL(w);
      }
      for (int r = st[s].lo; r < st[s].hi; r++) {
        const char *src = (const char *)ch->pieces[r][leaf].data + (size_t)off * es;
        if ((r == 0 ? f->begin : f->step)(f->arg, leaf, acc, src, cnt) != 0)
          CHAIN_FAIL(strdup("folding the all-reduce failed"));
      }
      if (s + 1 < nst) {
        sent[j] = ch->rm->post_send(ch->rm, ch->ins, ch->seq, ch->devs[0], key, ch->devs[st[s].hi - 1],
                                    ch->devs[st[s + 1].lo], acc, (size_t)cnt * as, why);
        if (!sent[j]) { rc = -1; goto out; }
      }
    }
    if (last_local) {   /* the result: into this member's, then to every other process */
      char *dst = (char *)mine->data + (size_t)off * es;
      if (f->end(f->arg, leaf, dst, acc, cnt) != 0) CHAIN_FAIL(strdup("folding the all-reduce failed"));
      for (int s = 0; s < nst - 1; s++) {
        bool seen = false;   /* one message per process: to its first stage's first member */
        int ps = ch->rm->process_of(ch->rm, ch->devs[st[s].lo]);
        for (int q = 0; q < s && !seen; q++) seen = ch->rm->process_of(ch->rm, ch->devs[st[q].lo]) == ps;
        if (seen || st[s].local) continue;
        HldXfer *t = ch->rm->post_send(ch->rm, ch->ins, ch->seq, ch->devs[0], FINAL | key,
                                       ch->devs[ch->n - 1], ch->devs[st[s].lo], dst,
                                       (size_t)cnt * es, why);
        if (!t) { rc = -1; goto out; }
        if (pend_add(&pend, t)) { ch->rm->wait(ch->rm, t, ch->deadline, NULL); CHAIN_FAIL(oom()); }
      }
    }
  }
  if (!last_local && !early) {   /* the result from the last stage's process, once our sends are out */
    for (int64_t j = 0; j < nmine; j++) {
      Chunk c = chunk_of(ch, j, per, count);
      char *w = NULL;
      if (wait_sent(ch, &sent[j], &w) != 0) CHAIN_FAIL(w);
      if (post_result_recv(ch, st, first_local, leaf, c, (char *)mine->data + (size_t)c.off * es,
                           (size_t)c.cnt * es, &pend, why) != 0) {
        rc = -1;
        goto out;
      }
    }
  }
out:
#undef CHAIN_FAIL
  /* Nothing may still point into the results when we return. */
  for (int64_t j = 0; j < nmine; j++) {
    if (sent[j] && pend_add(&pend, sent[j])) ch->rm->wait(ch->rm, sent[j], ch->deadline, NULL);
    sent[j] = NULL;
  }
  for (int i = 0; i < pre.n; i++)
    if (pre.t[i] && pend_add(&pend, pre.t[i])) ch->rm->wait(ch->rm, pre.t[i], ch->deadline, NULL);
  char *w = NULL;
  if (pend_wait_all(ch, &pend, &w) != 0 && rc == 0) { rc = -1; *why = w; w = NULL; }
  free(w);
  free(pend.t);
  free(pre.t);
  free(sent);
  if (accbuf) hli_buffer_free(NULL, accbuf, accbytes);
  if (rc) return rc;
  /* Our chunks of the result into the other local members' results. */
  for (int r = 0; r < ch->n; r++) {
    if (!ch->outs[r] || r == ch->self || ch->outs[r][leaf].data == mine->data) continue;
    for (int64_t j = 0; j < nmine; j++) {
      int64_t off = (ch->part + j * ch->nparts) * per;
      int64_t cnt = count - off < per ? count - off : per;
      memcpy((char *)ch->outs[r][leaf].data + (size_t)off * es, (const char *)mine->data + (size_t)off * es,
             (size_t)cnt * es);
    }
  }
  return 0;
}

int hld_chain_all_reduce(const HldChain *ch, char **why) {
  int nst = 0;
  Stage *st = stages_of(ch, &nst);
  if (!st) { *why = oom(); return -1; }
  int rc = 0;
  for (int leaf = 0; leaf < ch->nleaves && rc == 0; leaf++) rc = chain_leaf(ch, st, nst, leaf, why);
  free(st);
  return rc;
}
