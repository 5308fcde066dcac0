/* fuse_run.c: runs the tile program of a fused group (fuse_prog.h) over
 * its output.
 *
 * The output is cut into tiles of TILE elements (or of whole rows); for
 * each tile the program's operations run in order on registers of a tile
 * (inputs that need no decoding are read in place, and the next tile's are
 * prefetched). Narrow floats live in registers as f32 and are rounded
 * through their type after every operation, exactly as each kernel rounds
 * its own result. Tiles are split over the thread pool; scalar broadcasts
 * are filled once per chunk. Large results are written with non-temporal
 * stores. Not here: finding groups (fuse.c), the loops themselves
 * (kernels/elementwise*.c, convert.c). */
#include "interp/fuse_prog.h"
#include "interp/kernels/vectorize.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct Job {
  const HliFused *f;
  const char *const *in;   /* input data */
  const size_t *ies;       /* input element sizes */
  char *out;
  size_t oes;
  bool stream;             /* the output is written with non-temporal stores */
  bool oom;
  /* A block of rows run on its own (hli_fused_run_rows): input `local` (or
   * -1) and the output hold rows from `row0` on, not from row 0. */
  int32_t local;
  int64_t row0;
} Job;

/* Where input k's elements of space sp start at element lo of that space. */
static inline const char *in_at(const Job *j, int32_t k, Space sp, int64_t lo) {
  if (k == j->local && sp != SP_FIXED)
    lo -= sp == SP_FULL ? j->row0 * j->f->row_len : j->row0;
  return j->in[k] + lo * (int64_t)j->ies[k];
}
/* Where output element lo is. */
static inline char *out_at(const Job *j, int64_t lo) {
  return j->out + (lo - j->row0 * j->f->row_len) * (int64_t)j->oes;
}

/* Scratch of a chunk besides its registers: two tiles for conversions, and
 * the staging tile of a streamed output. */
typedef struct Scratch { char *a, *b, *out; } Scratch;

/* n copies of the element at src (es bytes). */
HLK_VECTORIZE static void fill(char *dst, const char *src, int64_t n, size_t es) {
  switch (es) {   /* once per run of equal elements */
#define F(T)                                                                  \
  {                                                                           \
    T v;                                                                      \
    memcpy(&v, src, sizeof v);                                                \
    T *d = (T *)(void *)dst;                                                  \
    for (int64_t i = 0; i < n; i++) d[i] = v;                                 \
    break;                                                                    \
  }
  case 1: F(uint8_t)
  case 2: F(uint16_t)
  case 4: F(uint32_t)
  case 8: F(uint64_t)
#undef F
  default:
    for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * es, src, es);
  }
}

/* Elements [lo, lo + m) of the broadcast b (raw element bytes es). */
static void bcast_tile(const Fop *op, const char *b, size_t es, int64_t lo, int64_t m, char *dst) {
  int64_t inner = op->inner, nb = op->nb;
  if (nb == 1) {   /* a scalar (its inner extent may be written as 1) */
    fill(dst, b, m, es);
    return;
  }
  int64_t idx = (lo / inner) % nb, r = lo % inner;
  for (int64_t i = 0; i < m;) {
    if (inner == 1) {   /* the operand repeats: contiguous runs of it */
      int64_t len = nb - idx < m - i ? nb - idx : m - i;
      memcpy(dst + (size_t)i * es, b + (size_t)idx * es, (size_t)len * es);
      i += len;
      idx = (idx + len) % nb;
      continue;
    }
    int64_t run = inner - r < m - i ? inner - r : m - i;
    fill(dst + (size_t)i * es, b + (size_t)idx * es, run, es);
    i += run;
    r = 0;
    idx = idx + 1 == nb ? 0 : idx + 1;
  }
}

/* f32 register d holding results of narrow type t: round each through t. */
static void round_narrow(HloDtype t, float *d, void *tmp, int64_t m) {
  (void)tmp;
  hlk_round_narrow(t, d, m);
}

/* One tile: where it starts and how many elements it has, per space (row
 * space: its rows; fixed: the whole scalar). */
typedef struct Tile { int64_t lo[3], m[3]; } Tile;

/* A row-space register value (dst) = the fold of each of the tile's rows in
 * src, as the reduce kernel folds a row (init, one run, store). A narrow
 * type's rows and dst are f32 registers, its init the raw scalar: widened
 * here (the caller rounds dst once). */
static void row_reduce(const Fop *op, const char *src, const char *init, int64_t L, int64_t rows,
                       char *dst) {
  size_t es = hli_fuse_reg_size(op->t);
  _Alignas(16) unsigned char acc[16];
  float wide_init;
  if (op->narrow) {
    hlk_narrow_to_f32(op->t, init, &wide_init, 1);
    init = (const char *)&wide_init;
  }
  for (int64_t r = 0; r < rows; r++) {
    op->fold->init(acc, init, 1);
    op->fold->run(acc, src + (size_t)(r * L) * es, L, 1);
    op->fold->store(dst + (size_t)r * es, acc, 1);
  }
}

static void run_op(const Job *j, const Fop *op, char *const *regs, const Scratch *sc,
                   const Tile *t) {
  char *scr_a = sc->a, *scr_b = sc->b;
  const HliFused *f = j->f;
  int64_t lo = t->lo[op->sp], m = t->m[op->sp];
  const void *s[3] = {NULL, NULL, NULL};
  for (int32_t k = 0; k < op->nsrc; k++) {
    int32_t r = op->src[k], in = -r - 1;
    s[k] = r >= 0 ? (const void *)regs[r]
                  : (const void *)in_at(j, in, f->in_sp[in], t->lo[f->in_sp[in]]);
  }
  bool to_out = op->dst == REG_OUT;
  char *d = to_out ? (j->stream ? sc->out : out_at(j, lo)) : regs[op->dst];
  bool narrow = op->narrow;
  switch (op->kind) {
  case FOP_UN:
  case FOP_BIN:
  case FOP_BINS: {   /* Narrow results: the f32 loop, then one rounding (into the output, or
     * in the register); as the kernels' runner does. */
    char *w = narrow && to_out ? scr_b : d;
    if (op->kind == FOP_UN) {
      op->un(s[0], w, m, op->bits);
    } else if (op->kind == FOP_BIN || !op->srow) {
      op->bin(s[0], s[1], w, m, op->bits);   /* a scalar: its register's first element */
    } else {   /* a row value per row of the tile */
      size_t es = hli_fuse_reg_size(op->t);
      int64_t L = f->row_len, k = op->scal;
      for (int64_t r = 0; r < t->m[SP_ROWS]; r++) {
        const char *sv = (const char *)s[k] + (size_t)r * es;
        const char *a = (const char *)s[1 - k] + (size_t)(r * L) * es;
        if (k == 1) op->bin(a, sv, w + (size_t)(r * L) * es, L, op->bits);
        else op->bin(sv, a, w + (size_t)(r * L) * es, L, op->bits);
      }
    }
    if (narrow && to_out) hlk_f32_to_narrow(op->ot, (const float *)w, d, m);
    else if (narrow) round_narrow(op->ot, (float *)d, scr_a, m);
    else if (op->subbyte) hlk_wrap_subbyte(op->ot, d, m);
    break;
  }
  case FOP_SEL:
    hlk_select_loop(hlc_dtype_size(op->ot), s[0], s[1], s[2], d, m);
    break;
  case FOP_CONV:
    if (hlk_is_narrow_float(op->t)) {          /* narrow -> f32: already exact */
      memcpy(d, s[0], (size_t)m * 4);
    } else if (narrow) {                       /* f32 -> narrow: one rounding */
      if (to_out) {
        hlk_f32_to_narrow(op->ot, s[0], d, m);
      } else {
        memcpy(d, s[0], (size_t)m * 4);
        round_narrow(op->ot, (float *)d, scr_a, m);
      }
    } else {
      hlk_convert_loop(op->t, op->ot, s[0], d, m);
    }
    break;
  case FOP_LOAD:
    hlk_narrow_to_f32(op->t, in_at(j, op->input, op->sp, lo), (float *)d, m);
    break;
  case FOP_RRED:
    if (narrow && to_out) {   /* the f32 results, then one rounding into the output */
      row_reduce(op, s[0], j->in[op->input], f->row_len, m, scr_b);
      hlk_f32_to_narrow(op->ot, (const float *)scr_b, d, m);
    } else {
      row_reduce(op, s[0], j->in[op->input], f->row_len, m, d);
      if (narrow) round_narrow(op->ot, (float *)d, scr_a, m);
    }
    break;
  case FOP_RBCAST: {
    size_t es = hli_fuse_reg_size(op->ot);
    for (int64_t r = 0; r < t->m[SP_ROWS]; r++)
      fill(d + (size_t)(r * f->row_len) * es, (const char *)s[0] + (size_t)r * es, f->row_len, es);
    break;
  }
  case FOP_BCAST: {
    const char *b = op->data ? op->data : j->in[op->input];
    size_t es = op->data ? hlc_dtype_size(op->t) : j->ies[op->input];
    if (narrow) {
      bcast_tile(op, b, es, lo, m, scr_a);
      hlk_narrow_to_f32(op->ot, scr_a, (float *)d, m);
    } else {
      bcast_tile(op, b, es, lo, m, d);
    }
    break;
  }
  }
  if (to_out && j->stream) hlk_stream_copy(out_at(j, lo), d, (size_t)m * j->oes);
}

/* Bytes of registers and scratch a chunk needs for tiles of `tile` elements. */
static size_t chunk_bytes(const HliFused *f, int64_t tile, bool stream, size_t *rb) {
  *rb = ((size_t)tile * (f->reg_es > 4 ? f->reg_es : 4) + 63) & ~(size_t)63;
  return *rb * ((size_t)f->nregs + 2 + stream);
}

/* Elements of a full tile: TILE, or for row groups whole rows (at least one). */
static int64_t tile_rows(const HliFused *f) {
  return f->row_len > TILE ? 1 : TILE / f->row_len;
}

/* Ask for part `part` of `nparts` of the inputs the tile after t reads in
 * place (up to the chunk's end, hi), while t runs. Spread over the tile's
 * operations, so that the requests do not all wait at once for the few
 * miss buffers; not non-temporal, as several operations of a tile read an
 * input. hi is in rows for row groups. Always inlined: GCC finds a function
 * whose only effect is a prefetch free of side effects, and deletes the
 * calls to it (it did, silently, until this was inlined). */
static inline __attribute__((always_inline)) void prefetch_next(const Job *j, const Tile *t,
                                                                int64_t hi, int32_t part,
                                                                int32_t nparts) {
  const HliFused *f = j->f;
  for (int32_t k = 0; k < f->ninputs; k++) {
    Space sp = f->in_sp[k];
    if (sp == SP_FIXED) continue;
    int64_t next = t->lo[sp] + t->m[sp];
    int64_t left = (sp == SP_FULL && f->row_len ? hi * f->row_len : hi) - next;
    if (left <= 0) continue;
    size_t es = j->ies[k], n = (size_t)(t->m[sp] < left ? t->m[sp] : left) * es;
    size_t lines = (n + 63) / 64, b0 = lines * (size_t)part / (size_t)nparts,
           b1 = lines * (size_t)(part + 1) / (size_t)nparts;
    const char *p = in_at(j, k, sp, next);
    for (size_t b = b0; b < b1; b++) __builtin_prefetch(p + b * 64);
  }
}

/* [lo, hi): elements, or rows for row groups. */
static void fused_chunk(void *arg, int64_t lo, int64_t hi) {
  Job *j = arg;
  const HliFused *f = j->f;
  int64_t L = f->row_len, step = L ? tile_rows(f) : TILE;
  if (hi - lo < step) step = hi - lo;
  size_t rb, need = chunk_bytes(f, L ? step * L : step, j->stream, &rb);
  _Alignas(64) char stack[STACK_SCRATCH];
  char *mem = need <= sizeof stack ? stack : aligned_alloc(64, need);
  if (!mem) { j->oom = true; return; }
  char *regs_local[64];
  char **regs = f->nregs <= 64 ? regs_local : malloc(sizeof(char *) * (size_t)f->nregs);
  if (!regs) { j->oom = true; if (mem != stack) free(mem); return; }
  for (int32_t r = 0; r < f->nregs; r++) regs[r] = mem + rb * (size_t)r;
  char *scr = mem + rb * (size_t)f->nregs;
  Scratch sc = {scr, scr + rb, j->stream ? scr + 2 * rb : NULL};
  Tile t = {{0, 0, 0}, {L ? step * L : step, step, 1}};
  for (int32_t p = 0; p < f->npro; p++) run_op(j, &f->pro[p], regs, &sc, &t);
  for (int64_t at = lo; at < hi; at += step) {
    int64_t m = hi - at < step ? hi - at : step;
    if (L) t = (Tile){{at * L, at, 0}, {m * L, m, 1}};
    else t = (Tile){{at, at, 0}, {m, m, 1}};
    for (int32_t p = 0; p < f->nops; p++) {
      prefetch_next(j, &t, hi, p, f->nops);
      run_op(j, &f->ops[p], regs, &sc, &t);
    }
  }
  if (j->stream) hlk_stream_fence();
  if (regs != regs_local) free(regs);
  if (mem != stack) free(mem);
}

bool hli_fused_streams(size_t bytes) {
  const char *env = getenv("HLORUN_STREAM");
  return bytes >= STREAM_MIN && !(env && strcmp(env, "0") == 0);
}

int hli_fused_run_tiles(HliExec *x, const HliFused *f, const char *const *in, const size_t *ies,
                        char *out, size_t oes, int64_t n) {
  Job j = {f, in, ies, out, oes, false, false, -1, 0};
  j.stream = hli_fused_streams((size_t)(f->row_len ? n * f->row_len : n) * oes);
  /* Chunks larger than the stack scratch allocate their registers: count
   * them against the memory limit, one set per thread. */
  int64_t min_chunk = f->row_len ? MIN_CHUNK / f->row_len + 1 : MIN_CHUNK;
  int64_t step = f->row_len ? tile_rows(f) : TILE, workers = n / min_chunk;
  if (step > n) step = n;
  if (workers > hli_num_threads(x)) workers = hli_num_threads(x);
  size_t rb, need = chunk_bytes(f, f->row_len ? step * f->row_len : step, j.stream, &rb);
  size_t reserve = need > STACK_SCRATCH ? need * (size_t)(workers > 1 ? workers : 1) : 0;
  if (reserve && hli_scratch_reserve(x, f->root, reserve) != 0) return -1;
  hli_parallel_for(x, n, min_chunk, fused_chunk, &j);
  if (reserve) hli_scratch_unreserve(x, reserve);
  return j.oom ? hli_fail_nomem(x, f->root, "out of memory") : 0;
}

size_t hli_fused_rows_scratch(const HliFused *f) {
  size_t rb, need = chunk_bytes(f, tile_rows(f) * f->row_len, false, &rb);
  return need > STACK_SCRATCH ? need : 0;
}

int hli_fused_run_rows(const HliFused *f, const char *const *in, const size_t *ies,
                       int32_t local, char *out, size_t oes, int64_t lo, int64_t hi) {
  Job j = {f, in, ies, out, oes, false, false, local, lo};
  fused_chunk(&j, lo, hi);
  return j.oom ? -1 : 0;
}

int hli_fused_run(HliExec *x, const HliFused *f, HliValue *const *in, HliValue *out) {
  const char *data_local[16];
  size_t es_local[16];
  const char **data = f->ninputs <= 16 ? data_local : malloc(sizeof(char *) * (size_t)f->ninputs);
  size_t *ies = f->ninputs <= 16 ? es_local : malloc(sizeof(size_t) * (size_t)f->ninputs);
  int rc = -1;
  if (!data || !ies) {
    hli_fail_nomem(x, f->root, "out of memory");
    goto out;
  }
  for (int32_t k = 0; k < f->ninputs; k++) {
    data[k] = in[k]->data;
    ies[k] = hlc_dtype_size(in[k]->dtype);
  }
  size_t oes = hlc_dtype_size(out->dtype);
  if (hli_fused_table_pays(x, f, out->nelem, oes, ies))
    rc = hli_fused_run_table(x, f, data, ies, out->data, oes, out->nelem);
  else
    rc = hli_fused_run_tiles(x, f, data, ies, out->data, oes,
                             f->row_len ? f->nrows : out->nelem);
out:
  if (data != data_local) free(data);
  if (ies != es_local) free(ies);
  return rc;
}
