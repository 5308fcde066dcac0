/* limits.c: the run's resource limits, so that whatever module a user feeds
 * hlorun ends with a result or a precise error: never a stack overflow, a
 * hang or an out-of-memory kill.
 *   - call graph: a computation calling itself (directly or through others)
 *     is rejected before anything runs, and so are call chains deeper than
 *     HLI_MAX_CALL_DEPTH (each level costs executor and kernel stack frames);
 *   - time: a deadline checked between instructions (exec.c) and on every
 *     while iteration;
 *   - iterations: at most max_iterations per while loop;
 *   - memory: kernel scratch buffers counted against the memory limit like
 *     values (hli_mem_reserve in services.c).
 * Not here: the value allocator (value.c), the run loop (exec.c). */
#include "interp/exec.h"
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

double hli_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- Call graph --------------------------------------------------------- */

/* Depth-first walk with an explicit stack (a module may chain thousands of
 * computations; the walk itself must not recurse). Colours: 0 unseen, 1 on
 * the current path, 2 done. Computations are numbered by their index in the
 * module; one not in the module (cannot happen with parsed modules) is
 * walked without a colour, bounded by the depth limit. */
typedef struct Frame { const HloComputation *c; int32_t instr, call; } Frame;

/* Computation -> index in the module, by open addressing on the pointer
 * (a linear search per call would be quadratic on big modules). */
typedef struct CompMap { const HloComputation **key; int32_t *val; size_t mask; } CompMap;

static size_t slot_of(const CompMap *cm, const HloComputation *c) {
  size_t h = (size_t)(((uint64_t)(uintptr_t)c * 0x9e3779b97f4a7c15ull) >> 20) & cm->mask;
  while (cm->key[h] && cm->key[h] != c) h = (h + 1) & cm->mask;
  return h;
}

static int map_init(CompMap *cm, const HloModule *m) {
  size_t cap = 16;
  int32_t n = m ? m->ncomps : 0;
  while (cap < 2 * (size_t)n + 2) cap *= 2;
  cm->mask = cap - 1;
  cm->key = calloc(cap, sizeof *cm->key);
  cm->val = calloc(cap, sizeof *cm->val);
  if (!cm->key || !cm->val) return -1;
  for (int32_t i = 0; i < n; i++) {
    size_t h = slot_of(cm, m->comps[i]);
    cm->key[h] = m->comps[i];
    cm->val[h] = i;
  }
  return 0;
}

static int32_t comp_index(const CompMap *cm, const HloComputation *c) {
  size_t h = slot_of(cm, c);
  return cm->key[h] ? cm->val[h] : -1;
}

int hli_check_call_graph(HliExec *x, const HloComputation *entry) {
  const HloModule *m = x->module;
  int32_t n = m ? m->ncomps : 0;
  unsigned char *colour = calloc((size_t)n + 1, 1);
  Frame *st = malloc((HLI_MAX_CALL_DEPTH + 1) * sizeof *st);
  CompMap cm = {0};
  int rc = 0;
  if (!colour || !st || map_init(&cm, m)) { rc = hli_fail_nomem(x, NULL, "out of memory"); goto out; }
  int32_t depth = 0;
  st[0] = (Frame){entry, 0, 0};
  int32_t ei = comp_index(&cm, entry);
  if (ei >= 0) colour[ei] = 1;
  while (depth >= 0) {
    Frame *f = &st[depth];
    const HloInstr *ins = NULL;
    const HloComputation *callee = NULL;
    /* Next called computation of f, if any. */
    while (f->instr < f->c->ninstrs && !callee) {
      ins = f->c->instrs[f->instr];
      if (f->call < ins->ncalled) callee = ins->called[f->call++].comp;
      else { f->instr++; f->call = 0; }
    }
    if (!callee) {   /* f is done */
      int32_t i = comp_index(&cm, f->c);
      if (i >= 0) colour[i] = 2;
      depth--;
      continue;
    }
    int32_t ci = comp_index(&cm, callee);
    if (ci >= 0 && colour[ci] == 2) continue;
    if (ci >= 0 && colour[ci] == 1) {
      rc = callee == f->c
               ? hli_fail(x, ins, "computation %s calls itself: recursion is not allowed in HLO",
                          callee->name)
               : hli_fail(x, ins, "computation %s calls %s, which is already running further up "
                          "the call chain (through %s): recursion is not allowed in HLO",
                          f->c->name, callee->name, st[depth > 0 ? depth - 1 : 0].c->name);
      goto out;
    }
    if (depth + 1 > HLI_MAX_CALL_DEPTH) {
      rc = hli_fail(x, ins, "computations call each other more than %d levels deep",
                    HLI_MAX_CALL_DEPTH);
      goto out;
    }
    if (ci >= 0) colour[ci] = 1;
    st[++depth] = (Frame){callee, 0, 0};
  }
out:
  free(colour);
  free(st);
  free(cm.key);
  free(cm.val);
  return rc;
}

/* ---- Time and iterations ------------------------------------------------ */

int hli_check_deadline(HliExec *x, const HloInstr *ins) {
  if (!x || x->deadline <= 0 || hli_now() < x->deadline) return 0;
  x->deadline = -1;   /* report once; the failure then unwinds the run */
  return hli_fail(x, ins, "time limit of %g seconds exceeded (--timeout) while running this "
                  "instruction", x->timeout);
}

int hli_loop_iteration(HliExec *x, const HloInstr *ins, int64_t iteration) {
  if (!x) return 0;
  if (x->max_iterations > 0 && iteration >= x->max_iterations)
    return hli_fail(x, ins, "the loop did not finish within %lld iterations (--max-iterations)",
                    (long long)x->max_iterations);
  return hli_check_deadline(x, ins);
}

/* ---- Scratch memory ----------------------------------------------------- */

/* A 64-byte header before the block remembers its size (so callers free
 * with the pointer alone) and keeps the block 64-byte aligned. */
enum { SCRATCH_HDR = 64 };

void *hli_scratch_alloc(HliExec *x, const HloInstr *ins, size_t n) {
  if (n > SIZE_MAX - 2 * SCRATCH_HDR) {
    hli_fail_nomem(x, ins, "out of memory (a scratch buffer of %zu bytes)", n);
    return NULL;
  }
  size_t total = (n + SCRATCH_HDR + SCRATCH_HDR - 1) & ~(size_t)(SCRATCH_HDR - 1);
  if (x) {
    const HloInstr *saved = x->cur;
    if (ins) x->cur = ins;
    int rc = hli_mem_reserve(x, total);
    x->cur = saved;
    if (rc) return NULL;
  }
  /* The value allocator recycles big buffers, so a workspace needed on
   * every run gets warm pages back instead of faulting in new ones; it
   * counts nothing (reserved above). */
  char *p = hli_buffer_alloc(NULL, total);
  if (!p) {
    hli_mem_release(x, total);
    hli_fail_nomem(x, ins, "out of memory (a scratch buffer of %zu bytes)", n);
    return NULL;
  }
  *(size_t *)p = total;
  return p + SCRATCH_HDR;
}

void hli_scratch_free(HliExec *x, void *p) {
  if (!p) return;
  char *base = (char *)p - SCRATCH_HDR;
  size_t total = *(size_t *)base;
  hli_mem_release(x, total);
  hli_buffer_free(NULL, base, total);
}

int hli_scratch_reserve(HliExec *x, const HloInstr *ins, size_t n) {
  if (!x) return 0;
  const HloInstr *saved = x->cur;
  if (ins) x->cur = ins;
  int rc = hli_mem_reserve(x, n);
  x->cur = saved;
  return rc;
}

void hli_scratch_unreserve(HliExec *x, size_t n) { hli_mem_release(x, n); }
