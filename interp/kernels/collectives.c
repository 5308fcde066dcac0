/* collectives.c: cross-device operations on one replica and one partition,
 * and the host-transfer opcodes.
 *
 * hlorun runs a module as a single device (replica 0, partition 0). With a
 * group of one, every collective has an exact meaning: all-reduce,
 * all-gather, reduce-scatter, all-to-all and collective-broadcast return
 * their operands (a reduction over one participant applies no operation);
 * collective-permute delivers device 0's value when a pair targets device 0
 * and zeros otherwise; ragged-all-to-all copies the one chunk device 0
 * sends itself; replica-id and partition-id are 0. The async *-start/-done
 * pairs compute at start.
 *
 * Anything that needs a second device (replica_count or num_partitions
 * above 1, a replica group or a source_target_pair naming another device)
 * is refused with a precise error. The device identity lives in one place
 * (struct Device below), so several replicas can be added later by giving
 * each kernel its replica and partition.
 *
 * send/recv/infeed/outfeed (and their -done forms) move data to or from a
 * host program or another device; no such peer exists, so they fail. */
#include "interp/kernels/control.h"
#include <string.h>

/* Which device this run is, and how many there are. */
typedef struct Device { int64_t replica, partition, nreplicas, npartitions; } Device;

static Device device_of(HliExec *x) {
  (void)x;
  return (Device){0, 0, 1, 1};
}

/* Refuse modules and groups that need more than one device. */
static int check_single_device(HliExec *x, const HloInstr *ins) {
  const HloModule *m = hli_module(x);
  if (m && (m->replica_count > 1 || m->num_partitions > 1))
    return hli_unsupported(x, ins, "the module runs on %lld replicas x %lld partitions; hlorun "
                           "runs one device", (long long)m->replica_count,
                           (long long)m->num_partitions);
  for (int32_t g = 0; g < ins->ngroups; g++) {
    const HloI64s *grp = &ins->replica_groups[g];
    for (int32_t i = 0; i < grp->n; i++)
      if (grp->v[i] != 0)
        return hli_unsupported(x, ins, "replica group %d names device %lld; hlorun runs one "
                               "device (0)", g, (long long)grp->v[i]);
  }
  return 0;
}

/* Operand i's value as part i of the result (a tuple, or the array itself
 * for one operand). */
static HliValue *result_part(HliValue *out, int32_t i) {
  return out->dtype == HLO_TUPLE ? out->tuple[i] : out;
}

/* ---- identities for a group of one -------------------------------------- */

/* The result is the operands, one to one (a tuple when there are several). */
static int check_group_identity(HliExec *x, const HloInstr *ins) {
  if (check_single_device(x, ins)) return -1;
  const HloShape *s = &ins->shape;
  if (ins->nops == 1 && s->dtype != HLO_TUPLE) {
    if (!hlp_shape_compatible(s, &ins->ops[0]->shape))
      return hli_fail(x, ins, "with a group of one device the result shape must equal the "
                      "operand's");
    return 0;
  }
  if (s->dtype != HLO_TUPLE || s->ntuple != ins->nops)
    return hli_fail(x, ins, "result must be a tuple with one element per operand");
  for (int32_t i = 0; i < ins->nops; i++)
    if (!hlp_shape_compatible(&s->tuple[i], &ins->ops[i]->shape))
      return hli_fail(x, ins, "with a group of one device result element %d must equal operand "
                      "%d's shape", i, i);
  return 0;
}

static int run_group_identity(HliExec *x, const HloInstr *ins, HliValue *const *in,
                              HliValue *out) {
  if (check_group_identity(x, ins)) return -1;
  for (int32_t i = 0; i < ins->nops; i++) hli_value_copy_into(result_part(out, i), in[i]);
  return 0;
}

/* all-gather-start: (operand(s), result(s)); each part is an array for one
 * operand, a tuple for several. */
static int check_gather_start(HliExec *x, const HloInstr *ins) {
  if (check_single_device(x, ins)) return -1;
  const HloShape *s = &ins->shape;
  if (s->dtype != HLO_TUPLE || s->ntuple != 2)
    return hli_fail(x, ins, "all-gather-start's shape must be (operands, results)");
  for (int k = 0; k < 2; k++) {
    const HloShape *p = &s->tuple[k];
    if (ins->nops == 1 && p->dtype != HLO_TUPLE) {
      if (!hlp_shape_compatible(p, &ins->ops[0]->shape))
        return hli_fail(x, ins, "with a group of one device every part must equal the operand's shape");
      continue;
    }
    if (p->dtype != HLO_TUPLE || p->ntuple != ins->nops)
      return hli_fail(x, ins, "element %d must hold one array per operand", k);
    for (int32_t i = 0; i < ins->nops; i++)
      if (!hlp_shape_compatible(&p->tuple[i], &ins->ops[i]->shape))
        return hli_fail(x, ins, "with a group of one device every part must equal the operand's shape");
  }
  return 0;
}

static int run_gather_start(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_gather_start(x, ins)) return -1;
  for (int k = 0; k < 2; k++)
    for (int32_t i = 0; i < ins->nops; i++)
      hli_value_copy_into(result_part(out->tuple[k], i), in[i]);
  return 0;
}

/* *-done of a tuple-shaped start: element 1. all-reduce-done: the value. */
static int check_tuple_done(HliExec *x, const HloInstr *ins) {
  const HloShape *s = &ins->ops[0]->shape;
  if (s->dtype != HLO_TUPLE || s->ntuple < 2 || !hlp_shape_compatible(&s->tuple[1], &ins->shape))
    return hli_fail(x, ins, "operand must be the start's tuple whose element 1 has the result shape");
  return 0;
}

static int run_tuple_done(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)x; (void)ins;
  hli_value_copy_into(out, in[0]->tuple[1]);
  return 0;
}

static int check_same(HliExec *x, const HloInstr *ins) {
  if (!hlp_shape_compatible(&ins->ops[0]->shape, &ins->shape))
    return hli_fail(x, ins, "result shape must equal the operand's");
  return 0;
}

static int run_same(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)x; (void)ins;
  hli_value_copy_into(out, in[0]);
  return 0;
}

/* ---- collective-permute ------------------------------------------------- */

static int check_permute_pairs(HliExec *x, const HloInstr *ins) {
  if (check_single_device(x, ins)) return -1;
  if (ins->nops != 1)
    return hli_unsupported(x, ins, "the in-place collective-permute form (%d operands)", ins->nops);
  for (int32_t i = 0; i < ins->npairs; i++)
    for (int k = 0; k < 2; k++)
      if (ins->source_target_pairs[i][k] != 0)
        return hli_unsupported(x, ins, "source_target_pairs names device %lld; hlorun runs one "
                               "device (0)", (long long)ins->source_target_pairs[i][k]);
  return 0;
}

/* Does some pair deliver to this device? */
static bool targeted(const HloInstr *ins, Device dev) {
  for (int32_t i = 0; i < ins->npairs; i++)
    if (ins->source_target_pairs[i][1] == dev.replica) return true;
  return false;
}

static void zero_value(HliValue *v) {
  if (v->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < v->ntuple; i++) zero_value(v->tuple[i]);
    return;
  }
  if (v->nbytes) memset(v->data, 0, v->nbytes);
}

static void permute_into(HliExec *x, const HloInstr *ins, HliValue *src, HliValue *dst) {
  if (targeted(ins, device_of(x))) hli_value_copy_into(dst, src);
  else zero_value(dst);
}

static int check_permute(HliExec *x, const HloInstr *ins) {
  if (check_permute_pairs(x, ins)) return -1;
  return check_same(x, ins);
}

static int run_permute(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_permute(x, ins)) return -1;
  permute_into(x, ins, in[0], out);
  return 0;
}

/* collective-permute-start: (operand, result, contexts...). */
static int check_permute_start(HliExec *x, const HloInstr *ins) {
  if (check_permute_pairs(x, ins)) return -1;
  const HloShape *s = &ins->shape, *o = &ins->ops[0]->shape;
  if (s->dtype != HLO_TUPLE || s->ntuple < 2 || !hlp_shape_compatible(&s->tuple[0], o) ||
      !hlp_shape_compatible(&s->tuple[1], o))
    return hli_fail(x, ins, "collective-permute-start's shape must be (operand, result, ...)");
  return 0;
}

static int run_permute_start(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_permute_start(x, ins)) return -1;
  hli_value_copy_into(out->tuple[0], in[0]);
  permute_into(x, ins, in[0], out->tuple[1]);
  for (int32_t i = 2; i < out->ntuple; i++) zero_value(out->tuple[i]);
  return 0;
}

/* ---- ragged-all-to-all -------------------------------------------------- */

/* (input, output, input_offsets, send_sizes, output_offsets, recv_sizes):
 * with one device, rows [in_off, in_off+size) of input (dimension 0) land
 * at rows [out_off, out_off+size) of a copy of output. */
static int check_ragged(HliExec *x, const HloInstr *ins) {
  if (check_single_device(x, ins)) return -1;
  if (ins->nops != 6) return hli_fail(x, ins, "ragged-all-to-all takes 6 operands");
  const HloShape *a = &ins->ops[0]->shape, *b = &ins->ops[1]->shape;
  if (a->dtype != b->dtype || a->rank < 1 || a->rank != b->rank)
    return hli_fail(x, ins, "input and output must be arrays of the same type and rank");
  for (int32_t i = 1; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return hli_fail(x, ins, "input and output rows differ in shape");
  for (int k = 2; k < 6; k++) {
    const HloShape *s = &ins->ops[k]->shape;
    if ((s->dtype != HLO_S32 && s->dtype != HLO_S64) || hlp_shape_elements(s) < 1)
      return hli_fail(x, ins, "operand %d must be a non-empty s32 or s64 array", k);
  }
  return check_same(x, ins) ? -1 : 0;
}

static int64_t first_int(const HliValue *v) {
  return v->dtype == HLO_S64 ? *(const int64_t *)v->data : *(const int32_t *)v->data;
}

static int run_ragged(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_ragged(x, ins)) return -1;
  hli_value_copy_into(out, in[1]);
  int64_t in_off = first_int(in[2]), size = first_int(in[3]), out_off = first_int(in[4]);
  int64_t in_rows = in[0]->rank ? in[0]->dims[0] : 1, out_rows = out->rank ? out->dims[0] : 1;
  if (size < 0 || in_off < 0 || out_off < 0 || in_off + size > in_rows || out_off + size > out_rows)
    return hli_fail(x, ins, "chunk of %lld rows at input row %lld / output row %lld is out of "
                    "bounds", (long long)size, (long long)in_off, (long long)out_off);
  size_t row = in_rows ? in[0]->nbytes / (size_t)in_rows : 0;
  memcpy((char *)out->data + (size_t)out_off * row, (const char *)in[0]->data + (size_t)in_off * row,
         (size_t)size * row);
  return 0;
}

/* ---- ids ---------------------------------------------------------------- */

static int check_id(HliExec *x, const HloInstr *ins) {
  if (ins->shape.dtype != HLO_U32 || ins->shape.rank != 0)
    return hli_fail(x, ins, "result must be u32[]");
  return 0;
}

static int run_replica_id(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)ins; (void)in;
  *(uint32_t *)out->data = (uint32_t)device_of(x).replica;
  return 0;
}

static int run_partition_id(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)ins; (void)in;
  *(uint32_t *)out->data = (uint32_t)device_of(x).partition;
  return 0;
}

/* ---- host transfers ----------------------------------------------------- */

static int check_host_transfer(HliExec *x, const HloInstr *ins) {
  return hli_unsupported(x, ins, "%s has no meaning on one CPU process without a host transfer "
                         "(no host program or peer device sends or receives the data)",
                         hlp_opcode_name(ins->op));
}

static int run_host_transfer(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)in; (void)out;
  return check_host_transfer(x, ins);
}

void hlk_register_collectives(HliOpTable t) {
  HliOpEntry ident = {run_group_identity, check_group_identity};
  t[HLO_OP_ALL_REDUCE] = ident;
  t[HLO_OP_ALL_REDUCE_START] = ident;
  t[HLO_OP_ALL_REDUCE_DONE] = (HliOpEntry){run_same, check_same};
  t[HLO_OP_ALL_GATHER] = ident;
  t[HLO_OP_ALL_GATHER_START] = (HliOpEntry){run_gather_start, check_gather_start};
  t[HLO_OP_ALL_GATHER_DONE] = (HliOpEntry){run_tuple_done, check_tuple_done};
  t[HLO_OP_REDUCE_SCATTER] = ident;
  t[HLO_OP_ALL_TO_ALL] = ident;
  t[HLO_OP_COLLECTIVE_BROADCAST] = ident;
  t[HLO_OP_COLLECTIVE_PERMUTE] = (HliOpEntry){run_permute, check_permute};
  t[HLO_OP_COLLECTIVE_PERMUTE_START] = (HliOpEntry){run_permute_start, check_permute_start};
  t[HLO_OP_COLLECTIVE_PERMUTE_DONE] = (HliOpEntry){run_tuple_done, check_tuple_done};
  t[HLO_OP_RAGGED_ALL_TO_ALL] = (HliOpEntry){run_ragged, check_ragged};
  t[HLO_OP_REPLICA_ID] = (HliOpEntry){run_replica_id, check_id};
  t[HLO_OP_PARTITION_ID] = (HliOpEntry){run_partition_id, check_id};
  HliOpEntry host = {run_host_transfer, check_host_transfer};
  t[HLO_OP_SEND] = host;
  t[HLO_OP_SEND_DONE] = host;
  t[HLO_OP_RECV] = host;
  t[HLO_OP_RECV_DONE] = host;
  t[HLO_OP_INFEED] = host;
  t[HLO_OP_OUTFEED] = host;
}
