/* dynamic_dims.c: dynamic dimension sizes: get-dimension-size,
 * set-dimension-size and dynamic-reshape (registered by
 * hlk_register_dynamic_dims).
 *
 * Values always occupy their bounded shape; a dimension written <=N has a
 * runtime size that hlorun tracks the way XLA's dynamic dimension inference
 * does: statically, from get-dimension-size back through shape-preserving
 * instructions to the set-dimension-size or dynamic-reshape that fixed it,
 * whose runtime size was recorded when it ran. Sizes that cross a
 * computation boundary (a parameter) or pass through other instructions are
 * refused with a precise error. Kernels of other areas treat dynamic arrays
 * at their bound, so only sizes (not the padded contents) are meaningful.
 * Unbounded dimensions (?) are refused. */
#include "interp/kernels/control.h"
#include "interp/kernels/register.h"
#include <string.h>

/* Runtime sizes recorded by set-dimension-size and dynamic-reshape, keyed
 * by (run, instruction, dimension). The producer always runs before any
 * reader in the same computation, so a reader never sees a stale entry. */
typedef struct DynSize { const HliExec *x; const HloInstr *ins; int32_t dim; int64_t size; } DynSize;
enum { NDYN = 256 };
static _Thread_local DynSize dyn[NDYN];
static _Thread_local int ndyn, dyn_next;

static void dyn_record(const HliExec *x, const HloInstr *ins, int32_t dim, int64_t size) {
  for (int i = 0; i < ndyn; i++)
    if (dyn[i].x == x && dyn[i].ins == ins && dyn[i].dim == dim) { dyn[i].size = size; return; }
  int slot = ndyn < NDYN ? ndyn++ : (dyn_next++ % NDYN);
  dyn[slot] = (DynSize){x, ins, dim, size};
}

static bool dyn_lookup(const HliExec *x, const HloInstr *ins, int32_t dim, int64_t *size) {
  for (int i = 0; i < ndyn; i++)
    if (dyn[i].x == x && dyn[i].ins == ins && dyn[i].dim == dim) { *size = dyn[i].size; return true; }
  return false;
}

static bool dim_is_dynamic(const HloShape *s, int32_t d) {
  return s->dynamic && d < s->rank && s->dynamic[d] != HLO_DIM_STATIC;
}

/* Opcodes whose result dimension d is operand dimension d of every operand
 * of the same rank. */
static bool keeps_dims(HloOpcode op) {
  switch (op) {
  case HLO_OP_ABS: case HLO_OP_ACOS: case HLO_OP_ACOSH: case HLO_OP_ADD: case HLO_OP_AND:
  case HLO_OP_ASIN: case HLO_OP_ASINH: case HLO_OP_ATAN2: case HLO_OP_ATANH: case HLO_OP_CBRT:
  case HLO_OP_CEIL: case HLO_OP_CLAMP: case HLO_OP_COUNT_LEADING_ZEROS: case HLO_OP_COMPARE:
  case HLO_OP_COMPLEX: case HLO_OP_CONVERT: case HLO_OP_COPY: case HLO_OP_COSINE: case HLO_OP_COSH:
  case HLO_OP_DIVIDE: case HLO_OP_ERF: case HLO_OP_EXPONENTIAL: case HLO_OP_EXPONENTIAL_MINUS_ONE:
  case HLO_OP_FLOOR: case HLO_OP_IMAG: case HLO_OP_IS_FINITE: case HLO_OP_LOG: case HLO_OP_LOG_PLUS_ONE:
  case HLO_OP_LOGISTIC: case HLO_OP_MAP: case HLO_OP_MAXIMUM: case HLO_OP_MINIMUM: case HLO_OP_MULTIPLY:
  case HLO_OP_NEGATE: case HLO_OP_NOT: case HLO_OP_OR: case HLO_OP_POPCNT: case HLO_OP_POWER:
  case HLO_OP_REAL: case HLO_OP_REDUCE_PRECISION: case HLO_OP_REMAINDER: case HLO_OP_ROUND_NEAREST_AFZ:
  case HLO_OP_ROUND_NEAREST_EVEN: case HLO_OP_RSQRT: case HLO_OP_SELECT: case HLO_OP_SHIFT_LEFT:
  case HLO_OP_SHIFT_RIGHT_ARITHMETIC: case HLO_OP_SHIFT_RIGHT_LOGICAL: case HLO_OP_SIGN:
  case HLO_OP_SINE: case HLO_OP_SINH: case HLO_OP_SQRT: case HLO_OP_SUBTRACT: case HLO_OP_TAN:
  case HLO_OP_TANH: case HLO_OP_XOR: case HLO_OP_ADD_DEPENDENCY: case HLO_OP_DOMAIN:
  case HLO_OP_SET_DIMENSION_SIZE:
    return true;
  default:
    return false;
  }
}

/* Runtime size of dimension d of v's value; 0 on success, else -1 with an
 * error naming `who`. With size == NULL only checks (at plan time) that the
 * size can be followed to the instruction that sets it. */
static int trace_size(HliExec *x, const HloInstr *who, const HloInstr *v, int32_t d, int64_t *size,
                      int depth) {
  const HloShape *s = &v->shape;
  if (s->dtype == HLO_TUPLE || d < 0 || d >= s->rank)
    return hli_fail(x, who, "dimension %d does not exist in %s", d, v->name);
  if (!dim_is_dynamic(s, d)) {
    if (size) *size = s->dims[d];
    return 0;
  }
  if (s->dynamic[d] == HLO_DIM_UNBOUNDED)
    return hli_unsupported(x, who, "unbounded dynamic dimension (?) in %s", v->name);
  if (depth > 10000) return hli_unsupported(x, who, "dynamic size chain too long");
  switch (v->op) {
  case HLO_OP_SET_DIMENSION_SIZE:
    if (v->dimensions.n == 1 && v->dimensions.v[0] == d) {
      if (!size || dyn_lookup(x, v, d, size)) return 0;
      return hli_fail(x, who, "the size set by %s is not known yet", v->name);
    }
    return trace_size(x, who, v->ops[0], d, size, depth + 1);
  case HLO_OP_DYNAMIC_RESHAPE:
    if (!size || dyn_lookup(x, v, d, size)) return 0;
    return hli_fail(x, who, "the size set by %s is not known yet", v->name);
  case HLO_OP_TRANSPOSE:
    if (v->dimensions.n == s->rank) return trace_size(x, who, v->ops[0], (int32_t)v->dimensions.v[d], size, depth + 1);
    break;
  case HLO_OP_BROADCAST:
    for (int32_t i = 0; i < v->dimensions.n; i++)
      if (v->dimensions.v[i] == d) return trace_size(x, who, v->ops[0], i, size, depth + 1);
    break;
  case HLO_OP_GET_TUPLE_ELEMENT: {
    const HloInstr *t = v->ops[0];
    if (t->op == HLO_OP_TUPLE && v->tuple_index < t->nops)
      return trace_size(x, who, t->ops[v->tuple_index], d, size, depth + 1);
    break;
  }
  case HLO_OP_PARAMETER:
    return hli_unsupported(x, who, "the runtime size of dimension %d of %s comes from outside its "
                           "computation (parameter %lld); hlorun tracks sizes within one "
                           "computation", d, v->name, (long long)v->parameter_number);
  default:
    if (keeps_dims(v->op))
      for (int32_t i = 0; i < v->nops; i++) {
        const HloShape *o = &v->ops[i]->shape;
        if (o->rank == s->rank && dim_is_dynamic(o, d))
          return trace_size(x, who, v->ops[i], d, size, depth + 1);
      }
    break;
  }
  return hli_unsupported(x, who, "cannot follow the runtime size of dimension %d through %s (%s)",
                         d, v->name, hlp_opcode_name(v->op));
}

static int check_one_dim(HliExec *x, const HloInstr *ins) {
  if (ins->dimensions.n != 1) return hli_fail(x, ins, "dimensions must name exactly one dimension");
  int64_t d = ins->dimensions.v[0];
  if (d < 0 || d >= ins->ops[0]->shape.rank)
    return hli_fail(x, ins, "dimension %lld out of range for rank %d", (long long)d, ins->ops[0]->shape.rank);
  return 0;
}

static int check_get_dim(HliExec *x, const HloInstr *ins) {
  if (check_one_dim(x, ins)) return -1;
  if (ins->shape.dtype != HLO_S32 || ins->shape.rank != 0) return hli_fail(x, ins, "result must be s32[]");
  return trace_size(x, ins, ins->ops[0], (int32_t)ins->dimensions.v[0], NULL, 0);
}

static int run_get_dim(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)in;
  if (check_one_dim(x, ins)) return -1;
  int64_t size = 0;
  if (trace_size(x, ins, ins->ops[0], (int32_t)ins->dimensions.v[0], &size, 0)) return -1;
  *(int32_t *)out->data = (int32_t)size;
  return 0;
}

static int check_set_dim(HliExec *x, const HloInstr *ins) {
  if (check_one_dim(x, ins)) return -1;
  const HloShape *s = &ins->ops[1]->shape;
  if (s->dtype != HLO_S32 || s->rank != 0) return hli_fail(x, ins, "the size must be an s32 scalar");
  const HloShape *o = &ins->ops[0]->shape, *r = &ins->shape;
  if (o->dtype != r->dtype || o->rank != r->rank)
    return hli_fail(x, ins, "result must have the operand's type and rank");
  for (int32_t i = 0; i < r->rank; i++) {
    if (r->dims[i] != o->dims[i]) return hli_fail(x, ins, "result bounds must equal the operand's dimensions");
    if (r->dynamic && r->dynamic[i] == HLO_DIM_UNBOUNDED)
      return hli_unsupported(x, ins, "unbounded dynamic dimension (?)");
  }
  return 0;
}

static int run_set_dim(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_set_dim(x, ins)) return -1;
  int32_t d = (int32_t)ins->dimensions.v[0];
  int64_t size = *(const int32_t *)in[1]->data, bound = in[0]->dims[d];
  if (size < 0 || size > bound)
    return hli_fail(x, ins, "size %lld is outside [0, %lld], the bound of dimension %d",
                    (long long)size, (long long)bound, d);
  hli_value_copy_into(out, in[0]);
  dyn_record(x, ins, d, size);
  return 0;
}

/* dynamic-reshape(operand, size_0, ..., size_{r-1}): the operand's elements
 * in row-major order laid out over the runtime sizes, inside the result's
 * bounded buffer (the rest zero). */
static int check_dyn_reshape(HliExec *x, const HloInstr *ins) {
  const HloShape *o = &ins->ops[0]->shape, *r = &ins->shape;
  if (ins->nops != r->rank + 1)
    return hli_fail(x, ins, "needs one size operand per result dimension (%d), got %d", r->rank, ins->nops - 1);
  if (o->dtype != r->dtype) return hli_fail(x, ins, "result type must be the operand's");
  if (o->dynamic)
    for (int32_t i = 0; i < o->rank; i++)
      if (o->dynamic[i] != HLO_DIM_STATIC)
        return hli_unsupported(x, ins, "dynamic-reshape of an operand with dynamic dimensions");
  for (int32_t i = 1; i < ins->nops; i++) {
    const HloShape *s = &ins->ops[i]->shape;
    if (s->dtype != HLO_S32 || s->rank != 0) return hli_fail(x, ins, "size operand %d must be s32[]", i);
  }
  for (int32_t i = 0; i < r->rank; i++)
    if (r->dynamic && r->dynamic[i] == HLO_DIM_UNBOUNDED)
      return hli_unsupported(x, ins, "unbounded dynamic dimension (?)");
  return 0;
}

static int run_dyn_reshape(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_dyn_reshape(x, ins)) return -1;
  int32_t r = out->rank;
  int64_t sizes[64], prod = 1;
  if (r > 64) return hli_unsupported(x, ins, "rank %d (at most 64)", r);
  for (int32_t i = 0; i < r; i++) {
    sizes[i] = *(const int32_t *)in[1 + i]->data;
    if (sizes[i] < 0 || sizes[i] > out->dims[i])
      return hli_fail(x, ins, "size %lld of dimension %d is outside [0, %lld]", (long long)sizes[i], i,
                      (long long)out->dims[i]);
    if (!dim_is_dynamic(&ins->shape, i) && sizes[i] != out->dims[i])
      return hli_fail(x, ins, "static dimension %d has size %lld, not %lld", i, (long long)out->dims[i],
                      (long long)sizes[i]);
    prod *= sizes[i];
  }
  if (prod != in[0]->nelem)
    return hli_fail(x, ins, "the sizes hold %lld elements, the operand %lld", (long long)prod,
                    (long long)in[0]->nelem);
  memset(out->data, 0, out->nbytes);
  size_t es = hlc_dtype_size(out->dtype);
  int64_t strides[64], idx[64] = {0};
  hli_strides(out->dims, r, strides);
  for (int64_t n = 0; n < prod; n++) {
    int64_t off = 0;
    for (int32_t i = 0; i < r; i++) off += idx[i] * strides[i];
    memcpy((char *)out->data + (size_t)off * es, (const char *)in[0]->data + (size_t)n * es, es);
    for (int32_t i = r - 1; i >= 0; i--) {
      if (++idx[i] < sizes[i]) break;
      idx[i] = 0;
    }
  }
  for (int32_t i = 0; i < r; i++)
    if (dim_is_dynamic(&ins->shape, i)) dyn_record(x, ins, i, sizes[i]);
  return 0;
}

void hlk_register_dynamic_dims(HliOpTable t) {
  t[HLO_OP_GET_DIMENSION_SIZE] = (HliOpEntry){run_get_dim, check_get_dim};
  t[HLO_OP_SET_DIMENSION_SIZE] = (HliOpEntry){run_set_dim, check_set_dim};
  t[HLO_OP_DYNAMIC_RESHAPE] = (HliOpEntry){run_dyn_reshape, check_dyn_reshape};
}
