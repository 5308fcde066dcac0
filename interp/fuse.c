/* fuse.c: finds fused groups of elementwise instructions when a computation
 * is planned and compiles each into a small tile program (fuse_prog.h; see
 * fuse.h for what a group is).
 *
 * Finding groups: instructions are visited from last to first; an
 * elementwise instruction not yet in a group roots a new one, which then
 * takes in, walking down, every operand whose users are all in the group
 * (text order is dependency order, so by the time an instruction is
 * reached every user has been decided). Broadcasts of the supported
 * patterns are copied into every group that uses them: they cost nothing to
 * redo per tile, and a broadcast whose every use was taken into groups is
 * never materialised.
 *
 * Row groups: a reduce over the trailing dimensions (a row reduction, with
 * a typed reducer) joins a group when its result is broadcast back along
 * those rows inside the group (softmax, layer norms), or when it is the
 * group's root. Such a group has a full shape F = [rows..., row...] and runs
 * in tiles of whole rows: its values live either in the full space (a tile
 * of k rows) or in the row space (k elements, one per row), so a row is
 * read from memory once and its reductions and broadcasts happen in cache.
 * A row reduction folds each row with the reduce kernel's own fold loops
 * (one init, one run over the row), so its bits are the unfused kernel's;
 * bf16/f16 rows, held as f32 in registers, with the same steps on f32
 * (hlk_fold_widened) and one rounding, as the narrow fold stores.
 *
 * Not here: running the programs (fuse_run.c). */
#include "interp/fuse_prog.h"
#include "common/numeric.h"
#include <stdlib.h>
#include <string.h>

/* What an instruction is to fusion. */
/* K_IOTA: an iota, copied into groups like a broadcast (of its values along
 * its dimension, which the group's program holds). */
typedef enum Kind { K_NONE, K_UN, K_BIN, K_CMP, K_SEL, K_CONV, K_BCAST, K_IOTA, K_RRED } Kind;

int32_t hli_fused_ninputs(const HliFused *f) { return f->ninputs; }
const int32_t *hli_fused_inputs(const HliFused *f) { return f->inputs; }

/* ---- Classification ------------------------------------------------------ */

static bool same_dims(const HloShape *a, const HloShape *b) {
  if (a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}


/* Broadcasts whose operand dims are consecutive result dims in order
 * (scalars, rows, columns, ...): result element i = operand[(i / inner) % nb]. */
static bool bcast_pattern(const HloInstr *ins, int64_t *inner, int64_t *nb) {
  if (ins->nops != 1) return false;
  const HloShape *s = &ins->shape, *o = &ins->ops[0]->shape;
  if (o->dtype != s->dtype || ins->dimensions.n != o->rank) return false;
  int64_t p = o->rank ? ins->dimensions.v[0] : s->rank, b = 1, in = 1;
  for (int32_t k = 0; k < o->rank; k++) {
    int64_t d = ins->dimensions.v[k];
    if (d != p + k || d >= s->rank || o->dims[k] != s->dims[d]) return false;
    b *= o->dims[k];
  }
  for (int64_t d = p + o->rank; d < s->rank; d++) in *= s->dims[d];
  if (inner) *inner = in ? in : 1;
  if (nb) *nb = b ? b : 1;
  return true;
}

/* Converts fused: between non-narrow types (convert's own loop), and
 * narrow <-> f32 (the exact widening, and the one rounding). */
static bool conv_ok(HloDtype f, HloDtype t) {
  if (!hlc_dtype_is_array(f) || !hlc_dtype_is_array(t)) return false;
  bool nf = hlk_is_narrow_float(f), nt = hlk_is_narrow_float(t);
  if (!nf && !nt) return true;
  return (nf && t == HLO_F32) || (f == HLO_F32 && nt);
}

/* A reduce whose dimensions are the operand's last ones, {p, ..., rank-1}
 * with 1 <= p < rank: the number of kept (row) dimensions p, else -1. */
static int32_t row_reduce_split(const HloInstr *ins) {
  const HloShape *o = &ins->ops[0]->shape;
  int32_t nd = ins->dimensions.n, p = o->rank - nd;
  if (nd < 1 || p < 1) return -1;
  bool seen[64] = {false};
  if (o->rank > 64) return -1;
  for (int32_t k = 0; k < nd; k++) {
    int64_t d = ins->dimensions.v[k];
    if (d < p || d >= o->rank || seen[d]) return -1;
    seen[d] = true;
  }
  return p;
}

/* The typed fold of a single-input reduce over rows, or NULL. Registers
 * hold bf16/f16 values as f32: theirs is the widened fold (the narrow one's
 * steps on f32, rounded once by the program); other narrow floats have no
 * folds. */
static const HlkFold *row_fold(const HloInstr *ins) {
  if (ins->nops != 2 || row_reduce_split(ins) < 0) return NULL;
  HloDtype t = ins->ops[0]->shape.dtype;
  if (ins->shape.dtype != t || ins->ops[1]->shape.dtype != t) return NULL;
  const HloComputation *comp = hlk_called(ins, HLO_CALL_TO_APPLY);
  if (!comp) return NULL;
  HliBinop op = hlk_match_reducer(comp);
  if (op == HLI_BINOP_NONE) return NULL;
  return hlk_is_narrow_float(t) ? hlk_fold_widened(op, t) : hlk_fold(op, t, true);
}

static Kind classify(const HloInstr *ins) {
  const HloShape *s = &ins->shape;
  /* Only instructions their own kernel accepts (its plan-time check, run
   * without an executor so it records nothing): otherwise the plan must
   * fail exactly as unfused. */
  const HliOpEntry *e = &hli_op_table()[ins->op];
  if (!hlc_dtype_is_array(s->dtype) || ins->ncontrol || !e->run || (e->check && e->check(NULL, ins)))
    return K_NONE;
  for (int32_t k = 0; k < ins->nops; k++)
    if (!hlc_dtype_is_array(ins->ops[k]->shape.dtype)) return K_NONE;
  switch (ins->op) {
  case HLO_OP_BROADCAST:
    return bcast_pattern(ins, NULL, NULL) ? K_BCAST : K_NONE;
  case HLO_OP_IOTA:
    return ins->nops == 0 && s->rank >= 1 && s->dims[ins->iota_dimension] <= IOTA_MAX ? K_IOTA
                                                                                        : K_NONE;
  case HLO_OP_REDUCE:
    return row_fold(ins) ? K_RRED : K_NONE;
  case HLO_OP_COMPARE: {
    if (ins->nops != 2) return K_NONE;
    HloDtype t = ins->ops[0]->shape.dtype;
    if (s->dtype != HLO_PRED || ins->ops[1]->shape.dtype != t || !hlk_compare_loop(ins, t) ||
        !same_dims(&ins->ops[0]->shape, s) || !same_dims(&ins->ops[1]->shape, s))
      return K_NONE;
    return K_CMP;
  }
  case HLO_OP_SELECT:
    /* Narrow floats would pass NaN payloads through f32: left unfused. */
    if (ins->nops != 3 || ins->ops[0]->shape.dtype != HLO_PRED || hlk_is_narrow_float(s->dtype))
      return K_NONE;
    for (int32_t k = 0; k < 3; k++)
      if (!same_dims(&ins->ops[k]->shape, s) || (k > 0 && ins->ops[k]->shape.dtype != s->dtype))
        return K_NONE;
    return K_SEL;
  case HLO_OP_CONVERT:
    if (ins->nops != 1 || !same_dims(&ins->ops[0]->shape, s) ||
        !conv_ok(ins->ops[0]->shape.dtype, s->dtype))
      return K_NONE;
    return K_CONV;
  default:
    break;
  }
  if (ins->nops == 1) {
    HloDtype t = ins->ops[0]->shape.dtype;
    if (hlk_unary_loop(ins->op, t) && same_dims(&ins->ops[0]->shape, s)) return K_UN;
  } else if (ins->nops == 2) {
    HloDtype t = ins->ops[0]->shape.dtype;
    if (hlk_binary_loop(ins->op, t) && ins->ops[1]->shape.dtype == t && s->dtype == t &&
        same_dims(&ins->ops[0]->shape, s) && same_dims(&ins->ops[1]->shape, s))
      return K_BIN;
  }
  return K_NONE;
}

bool hli_fuse_is_elementwise(const HloInstr *ins) {
  Kind k = classify(ins);
  return k == K_UN || k == K_BIN;
}

/* ---- Compiling a group --------------------------------------------------- */

/* Scratch shared by the groups of one computation (indexed by instruction). */
typedef struct Ctx {
  const HloComputation *c;
  HlcArena *A;
  Kind *kind;
  int32_t *uses;        /* users among live instructions (+1 for the root) */
  int32_t *gcount;      /* uses by members of the group being built */
  int32_t *mark;        /* group root that took this instruction (not broadcasts) */
  int32_t *ing;         /* root of the latest group this was a member of */
  int32_t *ref;         /* value reference of a member / input, while compiling */
  int32_t *absorbed;    /* broadcasts: uses taken into groups */
  /* The group being built: its full shape, and for row groups the number of
   * leading (row) dimensions, or -1 while it has none. */
  const HloShape *F;
  int32_t p;
} Ctx;

/* Where a value of shape s lives in the group being built, or -1 if it
 * cannot be a member. */
static int space_of(const Ctx *cx, const HloShape *s) {
  if (same_dims(s, cx->F)) return SP_FULL;
  if (cx->p < 0 || s->rank != cx->p) return -1;
  for (int32_t d = 0; d < cx->p; d++)
    if (s->dims[d] != cx->F->dims[d]) return -1;
  return SP_ROWS;
}

/* Elements of a row when the first q dims of the full shape F are rows, or
 * 0 when such rows are not tiled (too long, empty, or no rows at all). */
static int64_t row_len_of(const HloShape *F, int32_t q) {
  if (q < 1 || q >= F->rank) return 0;
  int64_t L = 1, R = 1;
  for (int32_t d = 0; d < F->rank; d++) {
    if (d < q) R *= F->dims[d];
    else L *= F->dims[d];
  }
  return L >= 1 && R >= 1 && L <= MAX_ROW ? L : 0;
}

/* Broadcast ins of the full shape that repeats a row-space value along the
 * rows (dimensions={0..q-1}): q, or -1. */
static int32_t row_bcast_split(const Ctx *cx, const HloInstr *ins) {
  const HloShape *o = &ins->ops[0]->shape;
  int32_t q = o->rank;
  if (ins->op != HLO_OP_BROADCAST || !same_dims(&ins->shape, cx->F) || ins->dimensions.n != q ||
      !row_len_of(cx->F, q) || (cx->p >= 0 && cx->p != q))
    return -1;
  for (int32_t d = 0; d < q; d++)
    if (ins->dimensions.v[d] != d || o->dims[d] != cx->F->dims[d]) return -1;
  return q;
}

typedef struct Builder {
  Fop *ops;             /* values are numbered by the op that makes them */
  int32_t nops;
  int32_t *inputs;
  int32_t ninputs;
  int32_t *load_of;     /* per input: op decoding it (narrow), or -1 */
  bool oom;             /* an iota's values could not be allocated */
} Builder;

static int32_t input_of(Builder *b, int32_t slot) {
  for (int32_t k = 0; k < b->ninputs; k++)
    if (b->inputs[k] == slot) return k;
  b->inputs[b->ninputs] = slot;
  b->load_of[b->ninputs] = -1;
  return b->ninputs++;
}

/* Reference for operand o of a member (before register allocation: values
 * are op numbers). */
static int32_t operand_ref(Ctx *cx, Builder *b, int32_t root, const HloInstr *o) {
  if (cx->ing[o->index] == root) return cx->ref[o->index];
  int32_t k = input_of(b, o->index);
  if (!hlk_is_narrow_float(o->shape.dtype)) return -(k + 1);
  if (b->load_of[k] < 0) {
    Fop *op = &b->ops[b->nops];
    memset(op, 0, sizeof *op);
    op->kind = FOP_LOAD;
    op->t = op->ot = o->shape.dtype;
    op->input = k;
    op->sp = (Space)space_of(cx, &o->shape);
    b->load_of[k] = b->nops++;
  }
  return b->load_of[k];
}

/* The values 0..n-1 of an iota along its dimension, stored in its element
 * type as its kernel stores them (hlc_store_iota), in the arena; the
 * pattern (inner, nb) that repeats them over the shape. NULL: out of
 * memory (compile then fails). */
static const char *iota_values(HlcArena *A, const HloInstr *ins, int64_t *inner, int64_t *nb) {
  const HloShape *s = &ins->shape;
  int32_t d = (int32_t)ins->iota_dimension;
  int64_t n = s->dims[d], in = 1;
  for (int32_t k = d + 1; k < s->rank; k++) in *= s->dims[k];
  *inner = in ? in : 1;
  *nb = n ? n : 1;
  size_t es = hlc_dtype_size(s->dtype);
  char *v = hlc_arena_alloc(A, (size_t)*nb * es);
  if (!v) return NULL;
  memset(v, 0, (size_t)*nb * es);   /* an empty dimension: one zero element */
  hlc_store_iota(s->dtype, v, n);
  return v;
}

/* A binary op one of whose operands is a scalar broadcast (nb = 1) or a
 * row value repeated along the rows reads that operand as one element
 * (per row) through the scalar loop, instead of a register filled with
 * copies: a scalar from its prologue register's first element, a row value
 * from its row register, so a row broadcast left with no other use is
 * dropped (compile). */
static void scalar_operand(Builder *b, Fop *op, HloOpcode opc) {
  for (int32_t k = 1; k >= 0; k--) {
    int32_t v = op->src[k];
    if (v < 0) continue;
    const Fop *o = &b->ops[v];
    bool scalar = o->kind == FOP_BCAST && o->nb == 1, row = o->kind == FOP_RBCAST;
    HlkBinFn fn = scalar || row ? hlk_binary_scalar_loop(opc, op->t, k == 1 ? 0 : 1) : NULL;
    if (!fn) continue;
    op->kind = FOP_BINS;
    op->bin = fn;
    op->scal = k;
    op->srow = row;
    if (row) op->src[k] = o->src[0];
    return;
  }
}

static void emit_member(Ctx *cx, Builder *b, int32_t root, const HloInstr *ins) {
  int32_t src[3];
  Kind k = cx->kind[ins->index];
  Space sp = (Space)space_of(cx, &ins->shape);
  if (k == K_BCAST && cx->ing[ins->ops[0]->index] == root) {   /* row value along rows */
    Fop *op = &b->ops[b->nops];
    memset(op, 0, sizeof *op);
    op->kind = FOP_RBCAST;
    op->t = op->ot = ins->shape.dtype;
    op->src[0] = cx->ref[ins->ops[0]->index];
    op->nsrc = 1;
    op->sp = SP_FULL;
    cx->ref[ins->index] = b->nops++;
    return;
  }
  if (k == K_IOTA) {   /* a broadcast of its values along its dimension */
    Fop *op = &b->ops[b->nops];
    memset(op, 0, sizeof *op);
    op->kind = FOP_BCAST;
    op->t = op->ot = ins->shape.dtype;
    op->input = -1;
    op->sp = sp;
    op->data = iota_values(cx->A, ins, &op->inner, &op->nb);
    b->oom = b->oom || !op->data;
    cx->ref[ins->index] = b->nops++;
    return;
  }
  if (k == K_BCAST) {
    int32_t in = input_of(b, ins->ops[0]->index);
    Fop *op = &b->ops[b->nops];
    memset(op, 0, sizeof *op);
    op->kind = FOP_BCAST;
    op->t = op->ot = ins->shape.dtype;
    op->input = in;
    op->sp = sp;
    bcast_pattern(ins, &op->inner, &op->nb);
    cx->ref[ins->index] = b->nops++;
    return;
  }
  if (k == K_RRED) {
    int32_t s0 = operand_ref(cx, b, root, ins->ops[0]);
    int32_t init = input_of(b, ins->ops[1]->index);   /* a scalar: never a member */
    Fop *op = &b->ops[b->nops];
    memset(op, 0, sizeof *op);
    op->kind = FOP_RRED;
    op->t = op->ot = ins->shape.dtype;
    op->src[0] = s0;
    op->nsrc = 1;
    op->input = init;
    op->sp = SP_ROWS;
    op->fold = row_fold(ins);
    cx->ref[ins->index] = b->nops++;
    return;
  }
  for (int32_t i = 0; i < ins->nops; i++) src[i] = operand_ref(cx, b, root, ins->ops[i]);
  Fop *op = &b->ops[b->nops];
  memset(op, 0, sizeof *op);
  op->t = ins->ops[0]->shape.dtype;
  op->ot = ins->shape.dtype;
  op->nsrc = ins->nops;
  memcpy(op->src, src, sizeof(int32_t) * (size_t)ins->nops);
  op->bits = hlk_is_narrow_float(op->t) ? 32 : hlc_dtype_bits(op->t);
  op->sp = sp;
  switch (k) {
  case K_UN: op->kind = FOP_UN; op->un = hlk_unary_loop(ins->op, op->t); break;
  case K_BIN:
    op->kind = FOP_BIN;
    op->bin = hlk_binary_loop(ins->op, op->t);
    scalar_operand(b, op, ins->op);
    break;
  case K_CMP: op->kind = FOP_BIN; op->bin = hlk_compare_loop(ins, op->t); break;
  case K_SEL: op->kind = FOP_SEL; op->t = op->ot; break;
  default: op->kind = FOP_CONV; break;
  }
  cx->ref[ins->index] = b->nops++;
}

/* Opcodes whose loop costs many simple ones per element (a polynomial, a
 * division): with one, a group pays for a table of its results. */
static bool costly(HloOpcode op) {
  switch (op) {
  case HLO_OP_ACOS: case HLO_OP_ACOSH: case HLO_OP_ASIN: case HLO_OP_ASINH: case HLO_OP_ATAN2:
  case HLO_OP_ATANH: case HLO_OP_CBRT: case HLO_OP_COSH: case HLO_OP_COSINE: case HLO_OP_DIVIDE:
  case HLO_OP_ERF: case HLO_OP_EXPONENTIAL: case HLO_OP_EXPONENTIAL_MINUS_ONE: case HLO_OP_LOG:
  case HLO_OP_LOG_PLUS_ONE: case HLO_OP_LOGISTIC: case HLO_OP_POWER: case HLO_OP_REMAINDER:
  case HLO_OP_RSQRT: case HLO_OP_SINE: case HLO_OP_SINH: case HLO_OP_SQRT: case HLO_OP_TAN:
  case HLO_OP_TANH: return true;
  default: return false;
  }
}

/* f->table_input (fuse_prog.h): the group reads one input element by
 * element (in place or decoded), every other one only as a scalar
 * broadcast, has no row values, and does more work per element than a
 * table lookup costs (a costly op, or four ops). */
static int32_t table_input(const Ctx *cx, const HliFused *f, const int32_t *mem, int32_t nm) {
  if (f->row_len) return -1;
  int32_t k = -1, work = 0;
  for (int32_t p = 0; p < f->nops; p++) {
    const Fop *op = &f->ops[p];
    int32_t read[3], nr = 0;
    switch (op->kind) {
    case FOP_BCAST: case FOP_RRED: case FOP_RBCAST: return -1;   /* values vary by position */
    case FOP_LOAD: read[nr++] = op->input; break;
    default:
      work++;
      for (int32_t s = 0; s < op->nsrc; s++)
        if (op->src[s] < 0) read[nr++] = -op->src[s] - 1;
    }
    for (int32_t r = 0; r < nr; r++) {
      if (k >= 0 && read[r] != k) return -1;
      k = read[r];
    }
  }
  if (k < 0 || hlc_dtype_size(cx->c->instrs[f->inputs[k]]->shape.dtype) > 2) return -1;
  for (int32_t i = 0; i < nm; i++) work += costly(cx->c->instrs[mem[i]]->op) ? 4 : 0;
  return work >= 4 ? k : -1;
}

/* Registers: each value gets one from its op until its last use; scalar
 * broadcasts move to the once-per-chunk prologue with registers of their
 * own. The output op writes the result. */
static HliFused *compile(Ctx *cx, int32_t root, const int32_t *mem, int32_t nm) {
  HlcArena *A = cx->A;
  int32_t cap = 2 * nm + 8;   /* members + decoding loads (at most one per operand) */
  for (int32_t i = 0; i < nm; i++) cap += cx->c->instrs[mem[i]]->nops;
  Builder b = {0};
  b.ops = calloc((size_t)cap, sizeof *b.ops);
  b.inputs = calloc((size_t)cap, sizeof *b.inputs);
  b.load_of = calloc((size_t)cap, sizeof *b.load_of);
  int32_t *last = calloc((size_t)cap, sizeof *last), *reg = calloc((size_t)cap, sizeof *reg);
  int32_t *freel = calloc((size_t)cap, sizeof *freel);
  bool *dead = calloc((size_t)cap, sizeof *dead);
  HliFused *f = NULL;
  if (!b.ops || !b.inputs || !b.load_of || !last || !reg || !freel || !dead) goto out;
  for (int32_t i = 0; i < nm; i++) emit_member(cx, &b, root, cx->c->instrs[mem[i]]);
  if (b.oom) goto out;
  int32_t out_op = cx->ref[root];

  /* Last use of every value; which values go to the prologue. Broadcasts
   * left without a use (their users read them as scalars) are dropped. */
  for (int32_t v = 0; v < b.nops; v++) last[v] = -1;
  for (int32_t p = 0; p < b.nops; p++)
    for (int32_t s = 0; s < b.ops[p].nsrc; s++)
      if (b.ops[p].src[s] >= 0) last[b.ops[p].src[s]] = p;
  for (int32_t v = 0; v < b.nops; v++) {
    Fop *op = &b.ops[v];
    dead[v] = last[v] < 0 && v != out_op && (op->kind == FOP_BCAST || op->kind == FOP_RBCAST);
    if (last[v] < 0) last[v] = v;
    op->narrow = hlk_is_narrow_float(op->ot);
    op->subbyte = hlc_dtype_is_int(op->ot) && hlc_dtype_bits(op->ot) < 8;
  }

  f = hlc_arena_alloc(A, sizeof *f);
  if (!f) goto out;
  memset(f, 0, sizeof *f);
  f->root = cx->c->instrs[root];
  f->ninputs = b.ninputs;
  f->inputs = hlc_arena_alloc(A, sizeof(int32_t) * (size_t)(b.ninputs ? b.ninputs : 1));
  f->ops = hlc_arena_alloc(A, sizeof(Fop) * (size_t)b.nops);
  f->pro = hlc_arena_alloc(A, sizeof(Fop) * (size_t)b.nops);
  if (!f->inputs || !f->ops || !f->pro) { f = NULL; goto out; }
  memcpy(f->inputs, b.inputs, sizeof(int32_t) * (size_t)b.ninputs);
  f->in_sp = hlc_arena_alloc(A, sizeof(Space) * (size_t)(b.ninputs ? b.ninputs : 1));
  if (!f->in_sp) { f = NULL; goto out; }
  bool rows = false;
  for (int32_t v = 0; v < b.nops; v++) rows = rows || b.ops[v].sp == SP_ROWS;
  for (int32_t k = 0; k < b.ninputs; k++) {
    int sp = space_of(cx, &cx->c->instrs[b.inputs[k]]->shape);
    f->in_sp[k] = sp < 0 || (sp == SP_ROWS && !rows) ? SP_FIXED : (Space)sp;
  }
  if (rows) {
    f->row_len = row_len_of(cx->F, cx->p);
    f->nrows = hlp_shape_elements(cx->F) / f->row_len;
  }
  f->reg_es = 1;
  int32_t nfree = 0;
  for (int32_t v = 0; v < b.nops; v++) {
    Fop *op = &b.ops[v];
    if (op->kind == FOP_BCAST && op->nb == 1 && !dead[v]) {
      reg[v] = f->nregs++;
      op->dst = reg[v];
      f->pro[f->npro++] = *op;
      size_t es = hli_fuse_reg_size(op->ot);
      if (es > f->reg_es) f->reg_es = es;
    }
  }
  for (int32_t p = 0; p < b.nops; p++) {
    Fop *op = &b.ops[p];
    if ((op->kind == FOP_BCAST && op->nb == 1) || dead[p]) continue;
    int32_t sv[3];
    memcpy(sv, op->src, sizeof sv);
    for (int32_t k = 0; k < op->nsrc; k++)
      if (sv[k] >= 0) op->src[k] = reg[sv[k]];
    if (p == out_op) {
      op->dst = REG_OUT;
    } else {
      reg[p] = nfree ? freel[--nfree] : f->nregs++;
      op->dst = reg[p];
      size_t es = hli_fuse_reg_size(op->ot);
      if (es > f->reg_es) f->reg_es = es;
    }
    /* Operands used for the last time free their registers after dst was
     * taken, so an op never writes a register it reads; prologue registers
     * are never freed. */
    for (int32_t k = 0; k < op->nsrc; k++) {
      int32_t v = sv[k];
      if (v < 0 || last[v] != p || (b.ops[v].kind == FOP_BCAST && b.ops[v].nb == 1)) continue;
      bool dup = false;
      for (int32_t q = 0; q < k; q++) dup = dup || sv[q] == v;
      if (!dup) freel[nfree++] = reg[v];
    }
    f->ops[f->nops++] = *op;
  }
  f->table_input = table_input(cx, f, mem, nm);
  if (f->table_input >= 0)
    f->table_bits = 8 * (int32_t)hlc_dtype_size(cx->c->instrs[f->inputs[f->table_input]]->shape.dtype);
out:
  free(b.ops);
  free(b.inputs);
  free(b.load_of);
  free(last);
  free(reg);
  free(freel);
  free(dead);
  return f;
}

/* ---- Finding groups ---------------------------------------------------- */

static bool computes(Kind k) { return k != K_NONE && k != K_BCAST && k != K_IOTA; }

int hli_fuse_plan(HliExec *x, const HloComputation *c, const bool *live, HlcArena *A,
                  HliFusion *out) {
  int32_t n = c->ninstrs;
  out->group = hlc_arena_alloc(A, sizeof(HliFused *) * (size_t)n);
  out->internal = hlc_arena_alloc(A, (size_t)n);
  if (!out->group || !out->internal) return -1;
  memset(out->group, 0, sizeof(HliFused *) * (size_t)n);
  memset(out->internal, 0, (size_t)n);
  if (x && x->no_fusion) return 0;
  const char *env = getenv("HLORUN_FUSION");
  if (env && strcmp(env, "0") == 0) return 0;

  Ctx cx = {c, A, calloc((size_t)n, sizeof(Kind)), calloc((size_t)n, sizeof(int32_t)),
            calloc((size_t)n, sizeof(int32_t)), malloc((size_t)n * sizeof(int32_t)),
            malloc((size_t)n * sizeof(int32_t)), calloc((size_t)n, sizeof(int32_t)),
            calloc((size_t)n, sizeof(int32_t)), NULL, -1};
  int32_t *mem = malloc((size_t)n * sizeof(int32_t));
  int32_t *touched = malloc((size_t)n * sizeof(int32_t));
  int rc = -1;
  if (!cx.kind || !cx.uses || !cx.gcount || !cx.mark || !cx.ing || !cx.ref || !cx.absorbed ||
      !mem || !touched)
    goto done;
  for (int32_t i = 0; i < n; i++) {
    cx.mark[i] = cx.ing[i] = -1;
    if (!live[i]) continue;
    const HloInstr *ins = c->instrs[i];
    cx.kind[i] = classify(ins);
    for (int32_t k = 0; k < ins->nops; k++) cx.uses[ins->ops[k]->index]++;
  }
  cx.uses[c->root->index]++;   /* the result leaves the computation */

  for (int32_t i = n - 1; i >= 0; i--) {
    if (!live[i] || !computes(cx.kind[i]) || cx.mark[i] >= 0) continue;
    const HloInstr *root = c->instrs[i];
    cx.F = &root->shape;
    cx.p = -1;
    if (cx.kind[i] == K_RRED) {   /* a row reduction roots a row group */
      cx.F = &root->ops[0]->shape;
      cx.p = row_reduce_split(root);
      if (!row_len_of(cx.F, cx.p)) continue;
    }
    int32_t nm = 0, nt = 0, lowest = i;
    /* Members are collected from the root down. A broadcast is copied into
     * the group (its operand an input), except one that repeats a row value
     * the group can compute: then it takes that value in as a member. */
    for (int32_t j = i; j >= 0 && j >= lowest; j--) {
      bool take = j == i, row_bcast = false;
      const HloInstr *ins = c->instrs[j];
      if (!take && cx.gcount[j] > 0 && live[j] && space_of(&cx, &ins->shape) >= 0) {
        bool whole = cx.mark[j] < 0 && cx.gcount[j] == cx.uses[j];
        if (cx.kind[j] == K_IOTA) {
          take = true;
        } else if (cx.kind[j] == K_BCAST) {
          int32_t q = whole ? row_bcast_split(&cx, ins) : -1;
          Kind ok = cx.kind[ins->ops[0]->index];
          row_bcast = q >= 0 && computes(ok) && cx.mark[ins->ops[0]->index] < 0;
          if (row_bcast) cx.p = q;
          take = true;
        } else if (cx.kind[j] == K_RRED) {
          take = whole && space_of(&cx, &ins->shape) == SP_ROWS && row_reduce_split(ins) == cx.p &&
                 same_dims(&ins->ops[0]->shape, cx.F);
        } else {
          take = computes(cx.kind[j]) && whole;
        }
      }
      if (!take) continue;
      mem[nm++] = j;
      cx.ing[j] = i;
      if ((cx.kind[j] == K_BCAST && !row_bcast) || cx.kind[j] == K_IOTA)
        continue;   /* copied in: its operand (if any) is an input */
      cx.mark[j] = i;
      for (int32_t k = 0; k < ins->nops; k++) {
        int32_t o = ins->ops[k]->index;
        if (cx.gcount[o]++ == 0) touched[nt++] = o;
        if (o < lowest) lowest = o;
      }
    }
    HliFused *f = NULL;
    if (nm >= 2) {
      for (int32_t a = 0, z = nm - 1; a < z; a++, z--) {   /* dependency order */
        int32_t t = mem[a];
        mem[a] = mem[z];
        mem[z] = t;
      }
      if (!(f = compile(&cx, i, mem, nm))) goto done;
      out->group[i] = f;
      for (int32_t m = 0; m < nm; m++) {
        int32_t j = mem[m];
        if (cx.kind[j] == K_BCAST || cx.kind[j] == K_IOTA) cx.absorbed[j] += cx.gcount[j];
        else if (j != i) out->internal[j] = true;
      }
    } else {
      cx.mark[i] = -1;
    }
    for (int32_t t = 0; t < nt; t++) cx.gcount[touched[t]] = 0;
  }
  /* A broadcast or iota whose every use runs inside groups needs no step. */
  for (int32_t j = 0; j < n; j++)
    if (live[j] && (cx.kind[j] == K_BCAST || cx.kind[j] == K_IOTA) && cx.uses[j] > 0 &&
        cx.absorbed[j] == cx.uses[j])
      out->internal[j] = true;
  rc = 0;
done:
  free(cx.kind);
  free(cx.uses);
  free(cx.gcount);
  free(cx.mark);
  free(cx.ing);
  free(cx.ref);
  free(cx.absorbed);
  free(mem);
  free(touched);
  return rc;
}
