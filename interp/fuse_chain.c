/* fuse_chain.c: finds dot -> row group -> dot chains when a computation is
 * planned, and runs each as one step, a block of rows at a time (see
 * fuse_chain.h for what a chain is and why its bits are the unfused ones).
 *
 * A task is one block of rows of one batch element: D1's rows into a
 * scratch block (the GEMM on the calling thread; rounded into a 16-bit
 * block for a bf16/f16 D1), G's tile program over the block (in place, or
 * into the other block when its type differs), then D2's rows of the block
 * straight into the result (through an f32 block for a bf16/f16 one).
 * Blocks are up to 1 MiB of D1's rows, so the block and the operands it
 * reads stay in the L2 or L3 cache. Tasks are spread over the executor's threads.
 * Not here: finding row groups (fuse.c), running tile programs
 * (fuse_run.c), the GEMM (kernels/gemm.c). */
#include "interp/fuse_chain.h"
#include "interp/fuse_prog.h"
#include "interp/kernels/gemm.h"
#include <stdlib.h>
#include <string.h>

enum {
  /* D1's rows of one task, at most (when rows allow). Each task's GEMMs
   * pack the second operands of both dots again, so large blocks pay: with
   * attention's 512 x 512 scores per head, a whole head (1 MiB, about the
   * L2 cache) ran faster than 128 or 256 rows (16.5 vs 18.0 and 16.8 ms
   * for the chain alone, 2 threads). */
  BLOCK_BYTES = 1 << 20,
  MAX_GROUP_INPUTS = 64      /* inputs of a chained group (on the task's stack) */
};

struct HliChain {
  const HloInstr *d1, *d2;
  const HliFused *g;
  int32_t local;     /* D1's input number in g */
  int32_t ninputs;
  int32_t *inputs;   /* D1's operands, g's inputs but D1 (g's order), D2's rhs */
};

int32_t hli_chain_ninputs(const HliChain *ch) { return ch->ninputs; }
const int32_t *hli_chain_inputs(const HliChain *ch) { return ch->inputs; }

/* ---- Finding chains ------------------------------------------------------- */

static bool listed_in_order(const HloI64s *l, int32_t n, int64_t first) {
  if (l->n != n) return false;
  for (int32_t i = 0; i < n; i++)
    if (l->v[i] != first + i) return false;
  return true;
}

/* The free dimensions of the rhs of dot ins (not batch, not contracting). */
static int32_t rhs_free_dims(const HloInstr *ins) {
  const HloDotDims *dn = &ins->dot;
  return ins->ops[1]->shape.rank - dn->rhs_batch.n - dn->rhs_contracting.n;
}

/* Does d2 take g's result r (the rows of d1's result) as its lhs, contracting
 * each row, with d1's batch dimensions as its own? Then d2's batch index and
 * row are d1's, and its shared dimension is a row of g. */
static bool consumes_rows(const HloInstr *d1, const HloInstr *r, const HloInstr *d2) {
  const HloDotDims *dn = &d2->dot;
  int32_t rank = r->shape.rank;
  return d2->ops[0] == r && d2->ops[1] != r && rank >= 2 &&
         listed_in_order(&dn->lhs_batch, d1->dot.lhs_batch.n, 0) &&
         listed_in_order(&dn->lhs_contracting, 1, rank - 1);
}

/* Types a chain's values may have: the f32 GEMM's, or bf16/f16 rounded
 * once from it (as the unfused dot and group store them). */
static bool chain_type(HloDtype t) { return t == HLO_F32 || t == HLO_BF16 || t == HLO_F16; }

/* Does a dot with result type to read an lhs of type from as it is (f32,
 * or bf16/f16 widened exactly)? Otherwise the unfused dot rounds it to `to`
 * first (kernels/dot.c), which a chain's block would have to copy. */
static bool exact_lhs(HloDtype from, HloDtype to) { return from == to || to == HLO_F32; }

/* Input number of slot s in g, read over g's full shape, or -1. */
static int32_t full_input(const HliFused *g, int32_t s) {
  for (int32_t k = 0; k < g->ninputs; k++)
    if (g->inputs[k] == s) return g->in_sp[k] == SP_FULL ? k : -1;
  return -1;
}

int hli_chain_plan(HliExec *x, const HloComputation *c, const bool *live, const HliFusion *fu,
                   HlcArena *A, const HliChain **chain, bool *absorbed) {
  (void)x;
  int32_t n = c->ninstrs;
  memset(chain, 0, sizeof *chain * (size_t)n);
  memset(absorbed, 0, (size_t)n);
  const char *env = getenv("HLORUN_CHAIN");
  if (env && strcmp(env, "0") == 0) return 0;
  /* Steps that read each value (a step reading it twice counts twice), and
   * values something waits for by control dependency. */
  int32_t *readers = calloc((size_t)n, sizeof *readers);
  bool *pinned = calloc((size_t)n, 1);
  if (!readers || !pinned) { free(readers); free(pinned); return -1; }
  for (int32_t i = 0; i < n; i++) {
    if (!live[i] || fu->internal[i]) continue;
    const HloInstr *ins = c->instrs[i];
    const HliFused *g = fu->group[i];
    int32_t nin = g ? hli_fused_ninputs(g) : ins->nops;
    for (int32_t k = 0; k < nin; k++) readers[g ? hli_fused_inputs(g)[k] : ins->ops[k]->index]++;
    for (int32_t k = 0; k < ins->ncontrol; k++) pinned[ins->control_preds[k]->index] = true;
  }
  int32_t root = c->root->index;
  for (int32_t i = 0; i < n; i++) {
    const HloInstr *d2 = c->instrs[i];
    if (!live[i] || fu->internal[i] || d2->op != HLO_OP_DOT || d2->nops != 2 || d2->ncontrol ||
        !hlk_dot_gemm_f32_applies(d2))
      continue;
    const HloInstr *r = d2->ops[0];
    const HliFused *g = fu->group[r->index];
    if (!g || !g->row_len || r->index == root || readers[r->index] != 1 || pinned[r->index] ||
        r->ncontrol || !chain_type(r->shape.dtype) || g->ninputs > MAX_GROUP_INPUTS ||
        !exact_lhs(r->shape.dtype, d2->shape.dtype))
      continue;
    /* D1: a dot among g's inputs whose rows are g's rows. */
    const HloInstr *d1 = NULL;
    int32_t local = -1;
    for (int32_t k = 0; k < g->ninputs && !d1; k++) {
      const HloInstr *cand = c->instrs[g->inputs[k]];
      if (cand->op != HLO_OP_DOT || chain[cand->index] || absorbed[cand->index] ||
          cand->index == root || readers[cand->index] != 1 || pinned[cand->index] ||
          cand->ncontrol || full_input(g, cand->index) != k || !hlk_dot_gemm_f32_applies(cand) ||
          rhs_free_dims(cand) != 1 || cand->shape.rank != r->shape.rank ||
          cand->shape.dims[cand->shape.rank - 1] != g->row_len || !consumes_rows(cand, r, d2))
        continue;
      d1 = cand;
      local = k;
    }
    if (!d1) continue;
    HliChain *ch = hlc_arena_alloc(A, sizeof *ch);
    int32_t nin = 2 + (g->ninputs - 1) + 1;
    int32_t *in = hlc_arena_alloc(A, sizeof *in * (size_t)nin);
    if (!ch || !in) { free(readers); free(pinned); return -1; }
    *ch = (HliChain){d1, d2, g, local, nin, in};
    int32_t at = 0;
    in[at++] = d1->ops[0]->index;
    in[at++] = d1->ops[1]->index;
    for (int32_t k = 0; k < g->ninputs; k++)
      if (k != local) in[at++] = g->inputs[k];
    in[at++] = d2->ops[1]->index;
    chain[i] = ch;
    absorbed[d1->index] = absorbed[r->index] = true;
  }
  free(readers);
  free(pinned);
  return 0;
}

/* ---- Running a chain ------------------------------------------------------ */

typedef struct Job {
  const HliChain *ch;
  const HlkGemm *g1, *g2;   /* the whole D1 and D2 (D2's lhs unset) */
  const char *gin[MAX_GROUP_INPUTS];   /* g's input data; the local one per task */
  size_t gies[MAX_GROUP_INPUTS];
  HloDtype t1, tr, t2;      /* the result types of D1, g and D2 */
  char *out;
  int64_t mb, nblk;         /* rows per block, blocks per batch element */
  int failed;
} Job;

static bool narrow(HloDtype t) { return t != HLO_F32; }

/* The GEMM's source format for a block of type t. */
static uint8_t src_of(HloDtype t) {
  return t == HLO_BF16 ? HLK_SRC_BF16 : t == HLO_F16 ? HLK_SRC_F16 : HLK_SRC_NATIVE;
}

/* Element size of a GEMM operand of format src. */
static size_t src_size(int src) { return src == HLK_SRC_NATIVE ? 4 : 2; }

/* Operand (a or b) of batch element bi of g, advanced by off elements: a
 * plain matrix pointer. */
static const void *batch_at(const void *p, const int64_t *boff, int64_t bs, int src, int64_t bi,
                            int64_t off) {
  return (const char *)p + (size_t)((boff ? boff[bi] : bi * bs) + off) * src_size(src);
}

/* A task's blocks: D1's f32 rows (wide), their bf16/f16 rounding or g's
 * narrow result (half), and D2's f32 rows before they are rounded (res).
 * g runs in place when its result has D1's type, else from one block into
 * the other (both are free by then). */
typedef struct Blocks { float *wide; uint16_t *half; float *res; } Blocks;

static void *block_alloc(size_t bytes) { return aligned_alloc(64, (bytes + 63) & ~(size_t)63); }

static bool blocks_alloc(const Job *j, Blocks *b) {
  int64_t rows = j->mb, n1 = j->g1->n, n2 = j->g2->n;
  b->wide = block_alloc((size_t)(rows * n1) * sizeof(float));
  b->half = narrow(j->t1) || narrow(j->tr) ? block_alloc((size_t)(rows * n1) * 2) : NULL;
  b->res = narrow(j->t2) ? block_alloc((size_t)(rows * n2) * sizeof(float)) : NULL;
  return b->wide && (b->half || !(narrow(j->t1) || narrow(j->tr))) && (b->res || !narrow(j->t2));
}

static void blocks_free(Blocks *b) {
  free(b->wide);
  free(b->half);
  free(b->res);
}

static void chain_tasks(void *arg, int64_t lo, int64_t hi) {
  Job *j = arg;
  const HlkGemm *g1 = j->g1, *g2 = j->g2;
  int64_t n1 = g1->n, n2 = g2->n, m = g1->m;
  Blocks bl;
  if (!blocks_alloc(j, &bl)) {
    blocks_free(&bl);
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  const char *gin[MAX_GROUP_INPUTS];
  memcpy(gin, j->gin, sizeof gin);
  gin[j->ch->local] = narrow(j->t1) ? (const char *)bl.half : (const char *)bl.wide;
  char *gout = narrow(j->tr) ? (char *)bl.half : (char *)bl.wide;
  size_t oes = narrow(j->tr) ? 2 : sizeof(float), es2 = hlc_dtype_size(j->t2);
  for (int64_t t = lo; t < hi; t++) {
    int64_t bi = t / j->nblk, r0 = t % j->nblk * j->mb, rows = m - r0 < j->mb ? m - r0 : j->mb;
    HlkGemm a = *g1;   /* D1's rows [r0, r0 + rows) of batch element bi */
    a.batch = 1;
    a.m = rows;
    a.a = batch_at(g1->a, g1->a_boff, g1->a_bs, g1->a_src, bi, r0 * g1->a_rs);
    a.b = batch_at(g1->b, g1->b_boff, g1->b_bs, g1->b_src, bi, 0);
    a.a_boff = a.b_boff = NULL;
    a.c = bl.wide;
    a.c_bs = 0;
    a.ldc = n1;
    HlkGemm b = *g2;   /* D2's rows of the block, from g's result */
    b.batch = 1;
    b.m = rows;
    b.a = gout;
    b.a_rs = n1;
    b.a_cs = 1;
    b.a_src = src_of(j->tr);
    b.b = batch_at(g2->b, g2->b_boff, g2->b_bs, g2->b_src, bi, 0);
    b.a_boff = b.b_boff = NULL;
    char *res = j->out + (size_t)((bi * m + r0) * n2) * es2;
    b.c = narrow(j->t2) ? (void *)bl.res : (void *)res;
    b.c_bs = 0;
    if (hlk_gemm_f32(NULL, &a) != 0) goto fail;
    if (narrow(j->t1)) hlk_store_ctype(j->t1, bl.wide, rows * n1, bl.half);
    if (hli_fused_run_rows(j->ch->g, gin, j->gies, j->ch->local, gout, oes, bi * m + r0,
                           bi * m + r0 + rows) != 0 ||
        hlk_gemm_f32(NULL, &b) != 0)
      goto fail;
    if (narrow(j->t2)) hlk_store_ctype(j->t2, bl.res, rows * n2, res);
  }
  blocks_free(&bl);
  return;
fail:
  __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
  blocks_free(&bl);
}

/* Rows per block: HLORUN_CHAIN_ROWS if set (tests: odd blocks), else
 * about BLOCK_BYTES of D1's rows. */
static int64_t block_rows(int64_t m, int64_t n1) {
  const char *env = getenv("HLORUN_CHAIN_ROWS");
  int64_t mb = env && atoll(env) > 0 ? atoll(env) : BLOCK_BYTES / (n1 * (int64_t)sizeof(float));
  if (mb < 1) mb = 1;
  return mb < m ? mb : m;
}

int hli_chain_run(HliExec *x, const HliChain *ch, HliValue *const *in, HliValue *out) {
  const HliFused *g = ch->g;
  HlkDotGemm d1, d2;
  if (hlk_dot_gemm(x, ch->d1, in[0], in[1], &d1) != 0) return -1;
  if (hlk_dot_gemm(x, ch->d2, NULL, in[ch->ninputs - 1], &d2) != 0) {
    hlk_dot_gemm_free(x, &d1);
    return -1;
  }
  int rc = -1;
  if (d2.g.batch != d1.g.batch || d2.g.m != d1.g.m || d2.g.k != d1.g.n || g->row_len != d1.g.n) {
    hli_fail(x, ch->d2, "internal error: the chained dots' dimensions do not match");
    goto done;
  }
  if (out->nelem == 0) { rc = 0; goto done; }
  Job j = {.ch = ch, .g1 = &d1.g, .g2 = &d2.g, .out = out->data, .t1 = ch->d1->shape.dtype,
           .tr = g->root->shape.dtype, .t2 = out->dtype};
  for (int32_t k = 0, at = 2; k < g->ninputs; k++) {
    const HliValue *v = k == ch->local ? NULL : in[at++];
    j.gin[k] = v ? v->data : NULL;
    j.gies[k] = hlc_dtype_size(v ? v->dtype : j.t1);
  }
  j.mb = block_rows(d1.g.m, d1.g.n);
  j.nblk = (d1.g.m + j.mb - 1) / j.mb;
  int64_t tasks = d1.g.batch * j.nblk, workers = hli_num_threads(x);
  if (workers > tasks) workers = tasks;
  /* Each worker's block and tile registers count against the memory limit
   * (the GEMM panels are the threads' cached ones, as for a dot). */
  size_t blocks = (size_t)(j.mb * d1.g.n) * (sizeof(float) + (narrow(j.t1) || narrow(j.tr) ? 2 : 0)) +
                  (narrow(j.t2) ? (size_t)(j.mb * d2.g.n) * sizeof(float) : 0);
  size_t reserve = (blocks + hli_fused_rows_scratch(g)) * (size_t)workers;
  if (hli_scratch_reserve(x, ch->d2, reserve) != 0) goto done;
  hli_parallel_for(x, tasks, 1, chain_tasks, &j);
  hli_scratch_unreserve(x, reserve);
  rc = j.failed ? hli_fail_nomem(x, ch->d2, "out of memory") : 0;
done:
  hlk_dot_gemm_free(x, &d1);
  hlk_dot_gemm_free(x, &d2);
  return rc;
}
