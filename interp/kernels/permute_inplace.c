/* permute_inplace.c: the in-place collective-permute, the four-operand form
 * XLA's collective pipeliner and combiner write:
 *
 *   collective-permute(input, output, input_offsets, output_offsets),
 *     source_target_pairs={...}, slice_sizes={{...}}
 *
 * Each source sends the box of slice_sizes at its own input_offsets of its
 * input; the target writes it at its own output_offsets into a copy of its
 * output buffer, which is the result. A device no pair targets returns its
 * output buffer unchanged (not zeros: the buffer is the destination).
 * Tuple input and output buffers (the combined form) carry one offset tuple
 * and one slice size per buffer. collective-permute-start returns
 * (input, result, contexts...), its -done the result.
 *
 * XLA's verifier also admits several offset sets per buffer (offsets as a
 * tuple of tuples, a source or target named up to that many times), but
 * nothing public says which pair uses which set: that form is refused.
 * Offsets are checked, never clamped: an offset a device uses that puts
 * the box outside its buffer is an error naming the instruction. */
#include "interp/kernels/control.h"
#include "interp/kernels/movement.h"
#include "interp/comm.h"
#include "common/numeric.h"
#include <stdlib.h>
#include <string.h>

enum { MAX_BUFFERS = 16, MAX_RANK = 32 };

static int nbuffers(const HloInstr *ins) {
  const HloShape *s = &ins->ops[0]->shape;
  return s->dtype == HLO_TUPLE ? s->ntuple : 1;
}

static const HloShape *buffer_shape(const HloShape *s, int b) {
  return s->dtype == HLO_TUPLE ? &s->tuple[b] : s;
}

/* Offsets of buffer b: a tuple of rank integer scalars. */
static int check_offsets(HliExec *x, const HloInstr *ins, int op, int b, int32_t rank) {
  const HloShape *o = &ins->ops[op]->shape;
  const char *which = op == 2 ? "input" : "output";
  if (ins->ops[0]->shape.dtype == HLO_TUPLE) {
    if (o->dtype != HLO_TUPLE || o->ntuple != nbuffers(ins))
      return hli_fail(x, ins, "the %s offsets must be a tuple of one offset tuple per buffer (%d)",
                      which, nbuffers(ins));
    o = &o->tuple[b];
  }
  if (o->dtype != HLO_TUPLE)
    return hli_fail(x, ins, "the %s offsets of buffer %d must be a tuple of integer scalars",
                    which, b);
  bool sets = o->ntuple > 0;
  for (int32_t i = 0; i < o->ntuple; i++) sets = sets && o->tuple[i].dtype == HLO_TUPLE;
  if (sets)
    return hli_unsupported(x, ins, "several offset sets per buffer (%d for buffer %d): which pairs "
                           "use which set is not defined publicly", (int)o->ntuple, b);
  if (o->ntuple != rank)
    return hli_fail(x, ins, "the %s offsets of buffer %d have %d elements for a buffer of rank %d",
                    which, b, (int)o->ntuple, (int)rank);
  for (int32_t i = 0; i < o->ntuple; i++)
    if (o->tuple[i].rank != 0 || !hlk_is_index_type(o->tuple[i].dtype))
      return hli_fail(x, ins, "%s offset %d of buffer %d must be an integer scalar", which, (int)i, b);
  return 0;
}

static int check_buffer(HliExec *x, const HloInstr *ins, int b) {
  const HloShape *is = buffer_shape(&ins->ops[0]->shape, b);
  const HloShape *os = buffer_shape(&ins->ops[1]->shape, b);
  if (!hlc_dtype_is_array(is->dtype) || is->dtype != os->dtype || is->rank != os->rank)
    return hli_fail(x, ins, "input buffer %d and output buffer %d must be arrays of one element "
                    "type and rank", b, b);
  if (is->rank > MAX_RANK) return hli_unsupported(x, ins, "buffers of rank above %d", MAX_RANK);
  if (check_offsets(x, ins, 2, b, is->rank) || check_offsets(x, ins, 3, b, os->rank)) return -1;
  const HloI64s *sz = &ins->permute_slices[b];
  if (sz->n != is->rank)
    return hli_fail(x, ins, "slice_sizes entry %d has %d sizes for a buffer of rank %d", b,
                    (int)sz->n, (int)is->rank);
  for (int32_t d = 0; d < is->rank; d++)
    if (sz->v[d] < 0 || sz->v[d] > is->dims[d] || sz->v[d] > os->dims[d])
      return hli_fail(x, ins, "slice size %lld of dimension %d (buffer %d) does not fit the input "
                      "(%lld) and the output (%lld)", (long long)sz->v[d], (int)d, b,
                      (long long)is->dims[d], (long long)os->dims[d]);
  return 0;
}

int hlk_inplace_check(HliExec *x, const HloInstr *ins) {
  if (ins->nops != 4)
    return hli_fail(x, ins, "the in-place form takes input, output, input offsets and output "
                    "offsets, not %d operands", (int)ins->nops);
  if (hlk_permute_pairs_check(x, ins)) return -1;
  const HloShape *in = &ins->ops[0]->shape, *out = &ins->ops[1]->shape;
  if ((in->dtype == HLO_TUPLE) != (out->dtype == HLO_TUPLE) ||
      (in->dtype == HLO_TUPLE && in->ntuple != out->ntuple))
    return hli_fail(x, ins, "input and output buffers must both be arrays or both tuples of one "
                    "length");
  int nb = nbuffers(ins);
  if (nb > MAX_BUFFERS) return hli_unsupported(x, ins, "more than %d buffers", MAX_BUFFERS);
  for (int b = 0; b < nb; b++) {   /* the offsets' form first: it says how many slices */
    int32_t ri = buffer_shape(in, b)->rank, ro = buffer_shape(out, b)->rank;
    if (check_offsets(x, ins, 2, b, ri) || check_offsets(x, ins, 3, b, ro)) return -1;
  }
  if (ins->npermute_slices != nb)
    return hli_fail(x, ins, "slice_sizes has %d entries for %d buffers", (int)ins->npermute_slices, nb);
  for (int b = 0; b < nb; b++)
    if (check_buffer(x, ins, b)) return -1;
  const HloShape *s = &ins->shape;
  if (ins->op == HLO_OP_COLLECTIVE_PERMUTE) {
    if (!hlp_shape_compatible(s, out))
      return hli_fail(x, ins, "the in-place form's result must have the output buffer's shape");
    return 0;
  }
  if (s->dtype != HLO_TUPLE || s->ntuple < 2 || !hlp_shape_compatible(&s->tuple[0], in) ||
      !hlp_shape_compatible(&s->tuple[1], out))
    return hli_fail(x, ins, "collective-permute-start's shape must be (input, output, contexts...)");
  return 0;
}

/* ---- running -------------------------------------------------------------- */

/* Copy the box sizes[] between an array of dims sd at offset so and one of
 * dims dd at offset doff (row-major, element size es), innermost runs with
 * memcpy. */
static void copy_box(const char *src, const int64_t *sd, const int64_t *so, char *dst,
                     const int64_t *dd, const int64_t *doff, const int64_t *sizes, int32_t rank,
                     size_t es) {
  int64_t n = 1;
  for (int32_t d = 0; d < rank; d++) n *= sizes[d];
  if (n == 0) return;
  if (rank == 0) { memcpy(dst, src, es); return; }
  int64_t sst[MAX_RANK], dst_st[MAX_RANK], pos[MAX_RANK];
  hlk_byte_strides(sd, rank, es, sst);
  hlk_byte_strides(dd, rank, es, dst_st);
  size_t run = (size_t)sizes[rank - 1] * es;
  memset(pos, 0, sizeof pos);
  for (;;) {
    int64_t a = 0, b = 0;
    for (int32_t d = 0; d < rank; d++) {
      a += (so[d] + (d == rank - 1 ? 0 : pos[d])) * sst[d];
      b += (doff[d] + (d == rank - 1 ? 0 : pos[d])) * dst_st[d];
    }
    memcpy(dst + b, src + a, run);
    int32_t d = rank - 2;
    while (d >= 0 && ++pos[d] == sizes[d]) pos[d--] = 0;
    if (d < 0) return;
  }
}

typedef struct Inplace {
  HliExec *x;
  const HloInstr *ins;
  HliValue *result;              /* the output buffer's copy */
  int nb;
  int64_t out_off[MAX_BUFFERS][MAX_RANK];
} Inplace;

/* This device's offsets for buffer b (op 2: input, 3: output), checked to
 * keep the box inside dims. */
static int read_offsets(HliExec *x, const HloInstr *ins, HliValue *const *in, int op, int b,
                        const int64_t *dims, int64_t *off) {
  HliValue *t = in[op];
  if (t->dtype == HLO_TUPLE && ins->ops[0]->shape.dtype == HLO_TUPLE) t = t->tuple[b];
  const int64_t *sizes = ins->permute_slices[b].v;
  for (int32_t d = 0; d < t->ntuple; d++) {
    off[d] = hlk_load_index(t->tuple[d]->dtype, t->tuple[d]->data);
    if (off[d] < 0 || off[d] > dims[d] - sizes[d])
      return hli_fail(x, ins, "%s offset %lld of dimension %d (buffer %d) puts the slice of %lld "
                      "outside the buffer's %lld", op == 2 ? "input" : "output",
                      (long long)off[d], (int)d, b, (long long)sizes[d], (long long)dims[d]);
  }
  return 0;
}

static HliValue *part(HliValue *v, int b) { return v->dtype == HLO_TUPLE ? v->tuple[b] : v; }

static int deliver(void *arg, const HliPiece *from) {
  Inplace *p = arg;
  if (!from) return 0;           /* nobody sends here: the buffer stays */
  for (int b = 0; b < p->nb; b++) {
    HliValue *o = part(p->result, b);
    const int64_t *sizes = p->ins->permute_slices[b].v;
    int64_t zero[MAX_RANK] = {0};
    copy_box(from[b].data, sizes, zero, o->data, o->dims, p->out_off[b], sizes, o->rank,
             hlc_dtype_size(o->dtype));
  }
  return 0;
}

int hlk_inplace_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (hlk_inplace_check(x, ins)) return -1;
  bool sends, receives;
  if (hlk_permute_role(x, ins, &sends, &receives)) return -1;
  Inplace p = {x, ins, out, nbuffers(ins), {{0}}};
  if (ins->op == HLO_OP_COLLECTIVE_PERMUTE_START) {
    hli_value_copy_into(out->tuple[0], in[0]);
    for (int32_t i = 2; i < out->ntuple; i++)
      if (out->tuple[i]->nbytes) memset(out->tuple[i]->data, 0, out->tuple[i]->nbytes);
    p.result = out->tuple[1];
  }
  hli_value_copy_into(p.result, in[1]);
  /* Every member sends a box of the same size; one that is no source sends
   * zeros nobody reads. */
  HliPiece mine[MAX_BUFFERS];
  char *packed[MAX_BUFFERS] = {NULL};
  int rc = 0;
  for (int b = 0; b < p.nb && !rc; b++) {
    HliValue *iv = part(in[0], b);
    const int64_t *sizes = ins->permute_slices[b].v;
    size_t es = hlc_dtype_size(iv->dtype), bytes = es;
    for (int32_t d = 0; d < iv->rank; d++) bytes *= (size_t)sizes[d];
    int64_t off[MAX_RANK] = {0}, zero[MAX_RANK] = {0};
    if (receives && read_offsets(x, ins, in, 3, b, part(in[1], b)->dims, p.out_off[b])) rc = -1;
    else if (sends && read_offsets(x, ins, in, 2, b, iv->dims, off)) rc = -1;
    else if (!(packed[b] = hli_scratch_alloc(x, ins, bytes ? bytes : 1))) rc = -1;
    else if (sends) copy_box(iv->data, iv->dims, off, packed[b], sizes, zero, sizes, iv->rank, es);
    else memset(packed[b], 0, bytes);
    mine[b] = (HliPiece){packed[b], bytes};
  }
  if (!rc) rc = hlk_permute_exchange(x, ins, mine, p.nb, deliver, &p);
  for (int b = 0; b < p.nb; b++)
    if (packed[b]) hli_scratch_free(x, packed[b]);
  return rc;
}
