/* movement.c: kernels that rearrange whole arrays without computing on the
 * elements: broadcast, reshape, copy, bitcast (layout-aware), transpose and
 * iota; plus the registrar of the movement family (slice, concatenate,
 * reverse and pad live in slicing.c). Every kernel checks its instruction at
 * plan time and then runs one or two strided copy plans (strided.c).
 * get-dimension-size and dynamic shapes belong to the control-flow kernels. */
#include "interp/kernels/movement.h"
#include "interp/kernels/register.h"
#include "interp/kernels/elementwise.h"
#include "common/numeric.h"
#include <stdlib.h>
#include <string.h>

/* ---- broadcast ----------------------------------------------------------- */

/* dimensions[i] is the result dim that operand dim i becomes; the other
 * result dims repeat the operand (source stride 0). An operand dim of size 1
 * may also be stretched (StableHLO broadcast_in_dim allows it). */
static int broadcast_check(HliExec *x, const HloInstr *ins) {
  if (hlk_check_operands(x, ins, 1) != 0) return -1;
  const HloShape *o = &ins->ops[0]->shape, *r = &ins->shape;
  if (r->dtype != o->dtype)
    return hli_fail(x, ins, "result type %s differs from operand type %s",
                    hlc_dtype_name(r->dtype), hlc_dtype_name(o->dtype));
  if (ins->dimensions.n != o->rank)
    return hli_fail(x, ins, "dimensions has %d entries for an operand of rank %d",
                    (int)ins->dimensions.n, (int)o->rank);
  if (hlk_check_dim_list(x, ins, &ins->dimensions, r->rank, false, "dimensions") != 0) return -1;
  for (int i = 0; i < o->rank; i++) {
    int64_t rd = r->dims[ins->dimensions.v[i]];
    if (o->dims[i] != rd && o->dims[i] != 1)
      return hli_fail(x, ins, "operand dimension %d (size %lld) does not match result "
                      "dimension %lld (size %lld)", i, (long long)o->dims[i],
                      (long long)ins->dimensions.v[i], (long long)rd);
  }
  return 0;
}

static int broadcast_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HliValue *a = in[0];
  size_t es = hlc_dtype_size(out->dtype);
  int64_t ostr[HLK_MAX_RANK], ss[HLK_MAX_RANK], ds[HLK_MAX_RANK];
  hlk_byte_strides(a->dims, a->rank, es, ostr);
  hlk_byte_strides(out->dims, out->rank, es, ds);
  for (int j = 0; j < out->rank; j++) ss[j] = 0;
  for (int i = 0; i < a->rank; i++) {
    int64_t j = ins->dimensions.v[i];
    ss[j] = a->dims[i] == out->dims[j] ? ostr[i] : 0;
  }
  HlkPlan p;
  hlk_plan_init(&p, out->rank, out->dims, ds, ss, es);
  hlk_plan_run_par(x, &p, out->data, a->data);
  return 0;
}

/* ---- reshape, copy ------------------------------------------------------- */

static int reshape_check(HliExec *x, const HloInstr *ins) {
  if (hlk_check_operands(x, ins, 1) != 0) return -1;
  const HloShape *o = &ins->ops[0]->shape, *r = &ins->shape;
  if (r->dtype != o->dtype)
    return hli_fail(x, ins, "result type %s differs from operand type %s",
                    hlc_dtype_name(r->dtype), hlc_dtype_name(o->dtype));
  if (hlp_shape_elements(r) != hlp_shape_elements(o))
    return hli_fail(x, ins, "result has %lld elements, operand %lld",
                    (long long)hlp_shape_elements(r), (long long)hlp_shape_elements(o));
  return 0;
}

/* A copy to another element type converts, as XLA's evaluator does (its
 * CopyDifferentTypes test): the convert kernel does the work. */
static int copy_check(HliExec *x, const HloInstr *ins) {
  if (hlk_check_operands(x, ins, 1) != 0) return -1;
  const HloShape *o = &ins->ops[0]->shape;
  if (hlk_check_result(x, ins, ins->shape.dtype, o->rank, o->dims) != 0) return -1;
  if (ins->shape.dtype == o->dtype) return 0;
  return hlk_convert_check(x, ins);
}

static int copy_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (in[0]->dtype != out->dtype) return hlk_convert_run(x, ins, in, out);
  hlk_memcpy_par(x, out->data, in[0]->data, out->nbytes);
  return 0;
}

/* Values are logical row-major arrays, so reshape and copy (even one that
 * changes the layout) move the bytes unchanged. */
static int bytes_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  hlk_memcpy_par(x, out->data, in[0]->data, out->nbytes < in[0]->nbytes ? out->nbytes
                                                                          : in[0]->nbytes);
  return 0;
}

/* ---- bitcast ------------------------------------------------------------- */

/* The physical order of a shape: major-to-minor dims, from minor_to_major.
 * Shapes without a layout use the default (row-major). */
static void physical_order(const HloShape *s, int *perm) {
  for (int i = 0; i < s->rank; i++)
    perm[i] = s->minor_to_major ? (int)s->minor_to_major[s->rank - 1 - i] : i;
}

static bool is_identity(const int *perm, int rank) {
  for (int i = 0; i < rank; i++)
    if (perm[i] != i) return false;
  return true;
}

static int layout_check(HliExec *x, const HloInstr *ins, const HloShape *s, const char *what) {
  if (s->layout_tail && (strchr(s->layout_tail, 'T') || strchr(s->layout_tail, 'E')))
    return hli_unsupported(x, ins, "bitcast of a %s with a tiled or element-size layout (%s)",
                           what, s->layout_tail);
  if (s->minor_to_major) {
    int seen[HLK_MAX_RANK] = { 0 };
    for (int i = 0; i < s->rank; i++) {
      int64_t d = s->minor_to_major[i];
      if (d < 0 || d >= s->rank || seen[d]++)
        return hli_fail(x, ins, "the %s layout is not a permutation of its dimensions", what);
    }
  }
  return 0;
}

static int bitcast_check(HliExec *x, const HloInstr *ins) {
  if (hlk_check_operands(x, ins, 1) != 0) return -1;
  const HloShape *o = &ins->ops[0]->shape, *r = &ins->shape;
  size_t ob = (size_t)hlp_shape_elements(o) * hlc_dtype_size(o->dtype);
  size_t rb = (size_t)hlp_shape_elements(r) * hlc_dtype_size(r->dtype);
  if (ob != rb)
    return hli_fail(x, ins, "result has %zu bytes, operand %zu", rb, ob);
  if (r->dtype != o->dtype &&
      (hlc_dtype_bits(r->dtype) != 8 * (int)hlc_dtype_size(r->dtype) ||
       hlc_dtype_bits(o->dtype) != 8 * (int)hlc_dtype_size(o->dtype)))
    return hli_unsupported(x, ins, "bitcast between %s and %s", hlc_dtype_name(o->dtype),
                           hlc_dtype_name(r->dtype));
  if (layout_check(x, ins, o, "operand") != 0) return -1;
  return layout_check(x, ins, r, "result");
}

/* Plan that writes the logical array (dims, element size es) into its
 * physical order perm (dst) or reads it back from there (src). */
static void physical_plan(HlkPlan *p, const int64_t *dims, int rank, const int *perm, size_t es,
                          bool to_physical) {
  int64_t lstr[HLK_MAX_RANK], pdims[HLK_MAX_RANK], pstr[HLK_MAX_RANK], lperm[HLK_MAX_RANK];
  hlk_byte_strides(dims, rank, es, lstr);
  for (int i = 0; i < rank; i++) {
    pdims[i] = dims[perm[i]];
    lperm[i] = lstr[perm[i]];
  }
  hlk_byte_strides(pdims, rank, es, pstr);
  /* Walk the physical box; logical strides are the permuted ones. */
  if (to_physical)
    hlk_plan_init(p, rank, pdims, pstr, lperm, es);
  else
    hlk_plan_init(p, rank, pdims, lperm, pstr, es);
}

/* bitcast reinterprets the physical buffer: the operand's logical data laid
 * out by its layout, read back through the result's layout. */
static int bitcast_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HloShape *os = &ins->ops[0]->shape, *rs = &ins->shape;
  int operm[HLK_MAX_RANK], rperm[HLK_MAX_RANK];
  physical_order(os, operm);
  physical_order(rs, rperm);
  bool oid = is_identity(operm, os->rank), rid = is_identity(rperm, rs->rank);
  if (oid && rid) return bytes_run(x, ins, in, out);
  HlkPlan p;
  if (rid) {   /* the physical bytes are the result's logical bytes */
    physical_plan(&p, os->dims, os->rank, operm, hlc_dtype_size(os->dtype), true);
    hlk_plan_run_par(x, &p, out->data, in[0]->data);
    return 0;
  }
  const char *phys = in[0]->data;
  char *tmp = NULL;
  if (!oid) {
    tmp = hli_scratch_alloc(x, ins, out->nbytes);   /* counted against --max-memory */
    if (!tmp) return -1;
    physical_plan(&p, os->dims, os->rank, operm, hlc_dtype_size(os->dtype), true);
    hlk_plan_run_par(x, &p, tmp, in[0]->data);
    phys = tmp;
  }
  physical_plan(&p, rs->dims, rs->rank, rperm, hlc_dtype_size(rs->dtype), false);
  hlk_plan_run_par(x, &p, out->data, phys);
  hli_scratch_free(x, tmp);
  return 0;
}

/* ---- transpose ------------------------------------------------------------ */

static int transpose_check(HliExec *x, const HloInstr *ins) {
  if (hlk_check_operands(x, ins, 1) != 0) return -1;
  const HloShape *o = &ins->ops[0]->shape;
  if (ins->dimensions.n != o->rank)
    return hli_fail(x, ins, "dimensions has %d entries for an operand of rank %d",
                    (int)ins->dimensions.n, (int)o->rank);
  if (hlk_check_dim_list(x, ins, &ins->dimensions, o->rank, false, "dimensions") != 0) return -1;
  int64_t dims[HLK_MAX_RANK];
  for (int i = 0; i < o->rank; i++) dims[i] = o->dims[ins->dimensions.v[i]];
  return hlk_check_result(x, ins, o->dtype, o->rank, dims);
}

/* Result dim i is operand dim dimensions[i]: walk the result in order and
 * read the operand with permuted strides (blocked when the last dims swap). */
static int transpose_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HliValue *a = in[0];
  size_t es = hlc_dtype_size(a->dtype);
  int64_t astr[HLK_MAX_RANK], ss[HLK_MAX_RANK], ds[HLK_MAX_RANK];
  hlk_byte_strides(a->dims, a->rank, es, astr);
  hlk_byte_strides(out->dims, out->rank, es, ds);
  for (int i = 0; i < out->rank; i++) ss[i] = astr[ins->dimensions.v[i]];
  HlkPlan p;
  hlk_plan_init(&p, out->rank, out->dims, ds, ss, es);
  hlk_plan_run_par(x, &p, out->data, a->data);
  return 0;
}

/* ---- iota ------------------------------------------------------------------- */

static int iota_check(HliExec *x, const HloInstr *ins) {
  if (hlk_check_operands(x, ins, 0) != 0) return -1;
  const HloShape *r = &ins->shape;
  if (r->rank < 1) return hli_fail(x, ins, "iota needs a result of rank at least 1");
  if (ins->iota_dimension < 0 || ins->iota_dimension >= r->rank)
    return hli_fail(x, ins, "iota_dimension=%lld out of range for rank %d",
                    (long long)ins->iota_dimension, (int)r->rank);
  return 0;
}

/* The values 0..n-1 along iota_dimension are converted once (XLA's convert
 * rules: integers wrap, floats round to nearest even, pred is index != 0),
 * then broadcast over the other dims. */
static int iota_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)in;
  int d = (int)ins->iota_dimension;
  int64_t n = out->dims[d];
  size_t es = hlc_dtype_size(out->dtype);
  if (out->nelem == 0) return 0;
  char *vals = hli_scratch_alloc(x, ins, (size_t)n * es);   /* counted against --max-memory */
  if (!vals) return -1;
  hlc_store_iota(out->dtype, vals, n);
  int64_t ds[HLK_MAX_RANK], ss[HLK_MAX_RANK];
  hlk_byte_strides(out->dims, out->rank, es, ds);
  for (int i = 0; i < out->rank; i++) ss[i] = i == d ? (int64_t)es : 0;
  HlkPlan p;
  hlk_plan_init(&p, out->rank, out->dims, ds, ss, es);
  hlk_plan_run_par(x, &p, out->data, vals);
  hli_scratch_free(x, vals);
  return 0;
}

void hlk_register_movement(HliOpTable t) {
  t[HLO_OP_BROADCAST] = (HliOpEntry){ broadcast_run, broadcast_check };
  t[HLO_OP_RESHAPE] = (HliOpEntry){ bytes_run, reshape_check };
  t[HLO_OP_COPY] = (HliOpEntry){ copy_run, copy_check };
  t[HLO_OP_BITCAST] = (HliOpEntry){ bitcast_run, bitcast_check };
  t[HLO_OP_TRANSPOSE] = (HliOpEntry){ transpose_run, transpose_check };
  t[HLO_OP_IOTA] = (HliOpEntry){ iota_run, iota_check };
  t[HLO_OP_SLICE] = (HliOpEntry){ hlk_slice, hlk_slice_check };
  t[HLO_OP_CONCATENATE] = (HliOpEntry){ hlk_concatenate, hlk_concatenate_check };
  t[HLO_OP_REVERSE] = (HliOpEntry){ hlk_reverse, hlk_reverse_check };
  t[HLO_OP_PAD] = (HliOpEntry){ hlk_pad, hlk_pad_check };
}
