/* dynamic_slice.c: dynamic-slice and dynamic-update-slice, windows whose
 * start is known only at run time. Start indices come as scalar operands of
 * any integer type (or, in the old form, one rank-1 array) and are clamped so
 * the window fits: start = clamp(start, 0, dim - size). The window moves as a
 * strided copy plan (contiguous inner runs are memcpy). Registered by
 * hli_register_gather_scatter. */
#include "interp/kernels/movement.h"

/* Check the start-index operands from position first on. */
static int check_starts(HliExec *x, const HloInstr *ins, int first, int rank) {
  int n = ins->nops - first;
  if (n == 1) {   /* old form: one index vector */
    const HloShape *s = &ins->ops[first]->shape;
    if (s->rank == 1 && s->dims[0] == rank && hlk_is_index_type(s->dtype)) return 0;
  }
  if (n == rank) {
    for (int i = first; i < ins->nops; i++) {
      const HloShape *s = &ins->ops[i]->shape;
      if (s->rank != 0 || !hlk_is_index_type(s->dtype))
        return hli_fail(x, ins, "start index operand %d must be an integer scalar", i);
    }
    return 0;
  }
  return hli_fail(x, ins, "expects %d start indices, has %d operands after the %s", rank,
                  n, first == 1 ? "operand" : "update");
}

/* Clamped start of every dim, for a window of the given sizes. */
static void load_starts(HliValue *const *in, int first, int rank, const int64_t *dims,
                        const int64_t *sizes, int64_t *start) {
  bool vector = rank > 0 && in[first]->rank == 1;
  for (int i = 0; i < rank; i++) {
    const HliValue *v = vector ? in[first] : in[first + i];
    int64_t s = hlk_load_index(v->dtype, (const char *)v->data +
                                             (vector ? i * (int64_t)hlc_dtype_size(v->dtype) : 0));
    int64_t hi = dims[i] - sizes[i];
    start[i] = s < 0 ? 0 : s > hi ? hi : s;
  }
}

int hlk_dynamic_slice_check(HliExec *x, const HloInstr *ins) {
  if (ins->nops < 1) return hli_fail(x, ins, "expects an operand");
  const HloShape *o = &ins->ops[0]->shape;
  if (hlk_check_array(x, ins, o, "operand") != 0) return -1;
  if (check_starts(x, ins, 1, o->rank) != 0) return -1;
  const int64_t *sizes = ins->dynamic_slice_sizes.v;
  if (ins->dynamic_slice_sizes.n != o->rank)
    return hli_fail(x, ins, "dynamic_slice_sizes has %d entries for an operand of rank %d",
                    (int)ins->dynamic_slice_sizes.n, (int)o->rank);
  for (int i = 0; i < o->rank; i++)
    if (sizes[i] < 0 || sizes[i] > o->dims[i])
      return hli_fail(x, ins, "slice size %lld does not fit dimension %d of size %lld",
                      (long long)sizes[i], i, (long long)o->dims[i]);
  return hlk_check_result(x, ins, o->dtype, o->rank, sizes);
}

int hlk_dynamic_slice(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HliValue *a = in[0];
  size_t es = hlc_dtype_size(a->dtype);
  int64_t start[HLK_MAX_RANK], ss[HLK_MAX_RANK], ds[HLK_MAX_RANK], off = 0;
  if (out->nelem == 0) return 0;
  load_starts(in, 1, a->rank, a->dims, out->dims, start);
  hlk_byte_strides(a->dims, a->rank, es, ss);
  hlk_byte_strides(out->dims, out->rank, es, ds);
  for (int i = 0; i < a->rank; i++) off += start[i] * ss[i];
  HlkPlan p;
  hlk_plan_init(&p, out->rank, out->dims, ds, ss, es);
  hlk_plan_run_par(x, &p, out->data, (const char *)a->data + off);
  return 0;
}

int hlk_dynamic_update_slice_check(HliExec *x, const HloInstr *ins) {
  if (ins->nops < 2) return hli_fail(x, ins, "expects an operand and an update");
  const HloShape *o = &ins->ops[0]->shape, *u = &ins->ops[1]->shape;
  if (hlk_check_array(x, ins, o, "operand") != 0 || hlk_check_array(x, ins, u, "update") != 0)
    return -1;
  if (u->dtype != o->dtype || u->rank != o->rank)
    return hli_fail(x, ins, "the update must have the operand's type and rank");
  for (int i = 0; i < o->rank; i++)
    if (u->dims[i] > o->dims[i])
      return hli_fail(x, ins, "update dimension %d (size %lld) exceeds the operand's (%lld)", i,
                      (long long)u->dims[i], (long long)o->dims[i]);
  if (check_starts(x, ins, 2, o->rank) != 0) return -1;
  return hlk_check_result(x, ins, o->dtype, o->rank, o->dims);
}

int hlk_dynamic_update_slice(HliExec *x, const HloInstr *ins, HliValue *const *in,
                             HliValue *out) {
  const HliValue *a = in[0], *u = in[1];
  size_t es = hlc_dtype_size(a->dtype);
  hlk_memcpy_par(x, out->data, a->data, out->nbytes);
  if (u->nelem == 0) return 0;
  int64_t start[HLK_MAX_RANK], ss[HLK_MAX_RANK], ds[HLK_MAX_RANK], off = 0;
  load_starts(in, 2, a->rank, a->dims, u->dims, start);
  hlk_byte_strides(u->dims, u->rank, es, ss);
  hlk_byte_strides(out->dims, out->rank, es, ds);
  for (int i = 0; i < a->rank; i++) off += start[i] * ds[i];
  HlkPlan p;
  hlk_plan_init(&p, u->rank, u->dims, ds, ss, es);
  hlk_plan_run_par(x, &p, (char *)out->data + off, u->data);
  return 0;
}
