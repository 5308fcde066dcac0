/* verify_control.c: shape rules of the ops that call computations or move
 * values between devices and the host: while (condition: state -> pred[],
 * body: state -> state), conditional (one parameter per branch, equal
 * results), call, fusion, async-start/-update/-done, rng, rng-bit-generator,
 * the collectives (checked as on one device: results keep the operand
 * shapes, all-gather/reduce-scatter only along their dimension), and the
 * token-carrying send/recv/infeed/outfeed, and scan (inputs sliced along
 * one dimension, carries threaded through). Custom calls have nothing to
 * infer.
 */
#include "ir/verify.h"
#include "ir/collective.h"
#include <string.h>
#include <stdio.h>

static HlvResult while_op(HlvCtx *V, const HloInstr *ins) {
  const HloShape *s = &ins->ops[0]->shape;
  const HloShape *ps[1] = {s};
  if (!hlv_signature(V, ins, "condition", hlv_called(ins, HLO_CALL_CONDITION), 1, ps,
                     hlv_scalar(V, HLO_PRED), false) ||
      !hlv_signature(V, ins, "body", hlv_called(ins, HLO_CALL_BODY), 1, ps, s, false))
    return HLV_ERR;
  return hlv_expect(V, ins, s, false);
}

static HlvResult conditional(HlvCtx *V, const HloInstr *ins) {
  const HloShape *sel = &ins->ops[0]->shape;
  HloComputation *t = hlv_called(ins, HLO_CALL_TRUE), *f = hlv_called(ins, HLO_CALL_FALSE);
  int32_t nb = 0;
  const HloComputation **br = hlv_alloc(V, (size_t)(ins->ncalled + 2) * sizeof *br);
  if (t || f) {
    if (!hlv_is_scalar(sel) || sel->dtype != HLO_PRED)
      return hlv_fail(V, ins, "true/false branches need a pred[] selector, got %s", hlv_str(V, sel));
    br[nb++] = t;
    br[nb++] = f;
  } else {
    if (!hlv_is_scalar(sel) || sel->dtype != HLO_S32)
      return hlv_fail(V, ins, "branch_computations need an s32[] selector, got %s", hlv_str(V, sel));
    for (int32_t i = 0; i < ins->ncalled; i++)
      if (ins->called[i].role == HLO_CALL_BRANCH) br[nb++] = ins->called[i].comp;
    if (nb < 1) return hlv_fail(V, ins, "needs at least one branch computation");
  }
  if (ins->nops != nb + 1)
    return hlv_fail(V, ins, "expects %d operands (selector and one per branch), got %d", (int)nb + 1,
                    (int)ins->nops);
  for (int32_t i = 0; i < nb; i++) {
    char role[32];
    snprintf(role, sizeof role, "branch %d", (int)i);
    const HloShape *ps[1] = {&ins->ops[i + 1]->shape};
    if (!hlv_signature(V, ins, role, br[i], 1, ps, &ins->shape, false)) return HLV_ERR;
  }
  return HLV_OK;
}

/* call and fusion: parameters are the operands, the root is the result. */
static HlvResult call_like(HlvCtx *V, const HloInstr *ins, HloCallRole role, const char *name,
                           bool ignore_fp) {
  const HloShape **ps = hlv_alloc(V, (size_t)(ins->nops + 1) * sizeof *ps);
  for (int32_t i = 0; i < ins->nops; i++) ps[i] = &ins->ops[i]->shape;
  if (!hlv_signature(V, ins, name, hlv_called(ins, role), ins->nops, ps, &ins->shape, ignore_fp))
    return HLV_ERR;
  return HLV_OK;
}

/* async-start: ((operands), wrapped result, state...); -update keeps the
 * shape; -done yields the wrapped result. */
static HlvResult async_op(HlvCtx *V, const HloInstr *ins) {
  const HloShape *s = ins->op == HLO_OP_ASYNC_START ? &ins->shape : &ins->ops[0]->shape;
  if (s->dtype != HLO_TUPLE || s->ntuple < 2 || s->tuple[0].dtype != HLO_TUPLE)
    return hlv_fail(V, ins, "async shape must be ((operands), result, ...), got %s", hlv_str(V, s));
  if (ins->op == HLO_OP_ASYNC_UPDATE) return hlv_expect(V, ins, s, false);
  if (ins->op == HLO_OP_ASYNC_DONE) return hlv_expect(V, ins, &s->tuple[1], false);
  if (s->tuple[0].ntuple != ins->nops)
    return hlv_fail(V, ins, "operand tuple of %s has %d elements for %d operands", hlv_str(V, s),
                    (int)s->tuple[0].ntuple, (int)ins->nops);
  const HloShape **ps = hlv_alloc(V, (size_t)(ins->nops + 1) * sizeof *ps);
  for (int32_t i = 0; i < ins->nops; i++) {
    if (!hlv_compatible(&s->tuple[0].tuple[i], &ins->ops[i]->shape, false))
      return hlv_fail(V, ins, "operand %d %s does not match element %d of the operand tuple %s",
                      (int)i, hlv_str(V, &ins->ops[i]->shape), (int)i, hlv_str(V, &s->tuple[0]));
    ps[i] = &ins->ops[i]->shape;
  }
  if (!hlv_signature(V, ins, "calls", hlv_called(ins, HLO_CALL_CALLS), ins->nops, ps, &s->tuple[1],
                     false))
    return HLV_ERR;
  return HLV_OK;
}

/* The operands themselves (one) or a tuple of them. */
static HloShape *operands_shape(HlvCtx *V, const HloInstr *ins, int32_t first, int32_t n) {
  if (n == 1) return hlv_copy(V, &ins->ops[first]->shape);
  HloShape *t = hlv_tuple(V, n);
  for (int32_t i = 0; i < n; i++) t->tuple[i] = ins->ops[first + i]->shape;
  return t;
}

static HlvResult all_reduce(HlvCtx *V, const HloInstr *ins) {
  for (int32_t i = 0; i < ins->nops; i++)
    if (!hlv_need_array(V, ins, i)) return HLV_ERR;
  if (ins->nops < 1) return hlv_fail(V, ins, "expects at least one operand");
  HloDtype t = ins->ops[0]->shape.dtype;
  if (!hlv_reducer(V, ins, "to_apply", hlv_called(ins, HLO_CALL_TO_APPLY), 1, &t, &t, NULL))
    return HLV_ERR;
  if (ins->op == HLO_OP_REDUCE_SCATTER) return HLV_OK;   /* sizes checked by the caller */
  return hlv_expect(V, ins, operands_shape(V, ins, 0, ins->nops), false);
}

/* Did the module's header give its device counts? (Without them the grid
 * is inferred from the ids at run time, and only grid-free checks apply.) */
static bool header_grid(const HloModule *m) {
  for (int32_t a = 0; a < m->nattrs; a++)
    if (!strcmp(m->attrs[a].name, "replica_count") || !strcmp(m->attrs[a].name, "num_partitions"))
      return true;
  return false;
}

/* The groups of a collective, as XLA's verifier checks them
 * (CheckReplicaGroups, CheckDuplicatedSourceOrTarget): ids once each, no
 * empty group, one size where XLA requires it, pairs without a repeated
 * source or target, and against the header's grid when it gives one. */
static HlvResult collective_groups(HlvCtx *V, const HloInstr *ins) {
  if (ins->use_global_device_ids && !ins->has_channel_id)
    return hlv_fail(V, ins, "use_global_device_ids=true needs a channel_id");
  for (int32_t i = 0; i < ins->npairs; i++)
    for (int32_t j = 0; j < i; j++)
      for (int k = 0; k < 2; k++)
        if (ins->source_target_pairs[i][k] == ins->source_target_pairs[j][k] && ins->nops == 1)
          return hlv_fail(V, ins, "source_target_pairs has %s %lld twice", k ? "target" : "source",
                          (long long)ins->source_target_pairs[i][k]);
  for (int32_t g = 0; g < ins->ngroups; g++) {
    const HloI64s *grp = &ins->replica_groups[g];
    if (grp->n == 0) return hlv_fail(V, ins, "replica group %d is empty", (int)g);
    for (int32_t i = 0; i < grp->n; i++) {
      if (grp->v[i] < 0) return hlv_fail(V, ins, "replica group %d has a negative id", (int)g);
      for (int32_t h = 0; h <= g; h++)
        for (int32_t j = 0; j < (h == g ? i : ins->replica_groups[h].n); j++)
          if (ins->replica_groups[h].v[j] == grp->v[i])
            return hlv_fail(V, ins, "id %lld is in more than one replica group (or twice in one)",
                            (long long)grp->v[i]);
    }
  }
  /* Against the header's grid, as XLA's verifier: not when the ids' count
   * is 1 (XLA skips it then). The mesh form arrives expanded. */
  if (header_grid(V->m) &&
      hlp_id_space(ins, V->m->replica_count, V->m->num_partitions) > 1) {
    char why[256];
    if (hlp_check_groups(ins, V->m->replica_count, V->m->num_partitions, why, sizeof why) != 0)
      return hlv_fail(V, ins, "%s", why);
  }
  return HLV_OK;
}

/* The size of every group, when the module says it: 0 when unknown (no
 * explicit groups and no header). */
static int64_t known_group_size(HlvCtx *V, const HloInstr *ins) {
  int64_t P = V->m->num_partitions, R = V->m->replica_count;
  HlpGroupMode mode = hlp_group_mode(ins);
  if (ins->ngroups > 0)
    return ins->replica_groups[0].n * (mode == HLP_CROSS_REPLICA_AND_PARTITION ? P : 1);
  if (!header_grid(V->m)) return 0;
  switch (mode) {
  case HLP_CROSS_PARTITION: return P;
  case HLP_CROSS_REPLICA: return R;
  default: return R * P;
  }
}

/* all-gather / reduce-scatter: results keep every dimension but the one
 * named, which grows (gather) or shrinks (scatter) by the group size. */
static HlvResult gather_scatter_dim(HlvCtx *V, const HloInstr *ins) {
  if (ins->op == HLO_OP_REDUCE_SCATTER && all_reduce(V, ins) != HLV_OK) return HLV_ERR;
  if (ins->dimensions.n != 1) return hlv_fail(V, ins, "takes exactly one dimension");
  const HloShape *r = &ins->shape;
  for (int32_t i = 0; i < ins->nops; i++) {
    if (!hlv_need_array(V, ins, i)) return HLV_ERR;
    const HloShape *a = &ins->ops[i]->shape;
    const HloShape *o = r->dtype == HLO_TUPLE ? (i < r->ntuple ? &r->tuple[i] : NULL) : r;
    if (!o || (r->dtype == HLO_TUPLE && r->ntuple != ins->nops) || (r->dtype != HLO_TUPLE && ins->nops != 1))
      return hlv_fail(V, ins, "result %s must have one array per operand", hlv_str(V, r));
    if (!hlv_dims_ok(V, ins, "dimensions", &ins->dimensions, a->rank, false)) return HLV_ERR;
    int64_t d = ins->dimensions.v[0];
    bool ok = hlv_is_array(o) && o->rank == a->rank && o->dtype == a->dtype;
    for (int32_t j = 0; ok && j < a->rank; j++) {
      int64_t big = ins->op == HLO_OP_REDUCE_SCATTER ? a->dims[j] : o->dims[j];
      int64_t small = ins->op == HLO_OP_REDUCE_SCATTER ? o->dims[j] : a->dims[j];
      ok = j == d ? (small == 0 ? big == 0 : big % small == 0) : big == small;
    }
    if (!ok)
      return hlv_fail(V, ins, "result %s does not fit operand %d %s along dimension %lld",
                      hlv_str(V, o), (int)i, hlv_str(V, a), (long long)d);
    int64_t n = known_group_size(V, ins);
    int64_t big = ins->op == HLO_OP_REDUCE_SCATTER ? a->dims[d] : o->dims[d];
    int64_t small = ins->op == HLO_OP_REDUCE_SCATTER ? o->dims[d] : a->dims[d];
    if (n > 0 && big != small * n)
      return hlv_fail(V, ins, "result %s does not follow from operand %d %s: dimension %lld must "
                      "%s by the group size %lld", hlv_str(V, o), (int)i, hlv_str(V, a),
                      (long long)d, ins->op == HLO_OP_REDUCE_SCATTER ? "shrink" : "grow",
                      (long long)n);
  }
  return HLV_OK;
}

static HlvResult rng(HlvCtx *V, const HloInstr *ins) {
  const HloShape *r = &ins->shape;
  if (!hlv_is_array(r)) return hlv_fail(V, ins, "result must be an array");
  for (int32_t i = 0; i < ins->nops; i++) {
    const HloShape *p = &ins->ops[i]->shape;
    if (!hlv_is_scalar(p) || p->dtype != r->dtype)
      return hlv_fail(V, ins, "distribution parameter %d must be a %s scalar, got %s", (int)i,
                      hlc_dtype_name(r->dtype), hlv_str(V, p));
  }
  if (ins->distribution == HLO_RNG_NORMAL && !hlc_dtype_is_float(r->dtype))
    return hlv_fail(V, ins, "rng_normal needs a floating-point result, got %s", hlv_str(V, r));
  return HLV_OK;
}

static HlvResult rng_bit_generator(HlvCtx *V, const HloInstr *ins) {
  const HloShape *r = &ins->shape, *st = &ins->ops[0]->shape;
  if (r->dtype != HLO_TUPLE || r->ntuple != 2 || !hlv_is_array(&r->tuple[1]))
    return hlv_fail(V, ins, "result must be (state, bits), got %s", hlv_str(V, r));
  if (!hlv_compatible(&r->tuple[0], st, false))
    return hlv_fail(V, ins, "result state %s does not match the state operand %s",
                    hlv_str(V, &r->tuple[0]), hlv_str(V, st));
  return HLV_OK;
}

static bool need_token(HlvCtx *V, const HloInstr *ins, int k) {
  if (k < ins->nops && ins->ops[k]->shape.dtype == HLO_TOKEN) return true;
  if (k < ins->nops)
    hlv_fail(V, ins, "operand %d must be a token, got %s", k, hlv_str(V, &ins->ops[k]->shape));
  else
    hlv_fail(V, ins, "missing token operand %d", k);
  return false;
}

/* Host and peer transfers: tokens in the right places; (data, ...) results. */
static HlvResult transfer(HlvCtx *V, const HloInstr *ins) {
  const HloShape *r = &ins->shape;
  switch (ins->op) {
  case HLO_OP_INFEED: case HLO_OP_RECV:
    if (!need_token(V, ins, 0)) return HLV_ERR;
    if (r->dtype != HLO_TUPLE || r->ntuple < 2 || r->tuple[r->ntuple - 1].dtype != HLO_TOKEN)
      return hlv_fail(V, ins, "result must be (data, ..., token), got %s", hlv_str(V, r));
    return HLV_OK;
  case HLO_OP_OUTFEED:
    if (!need_token(V, ins, 1)) return HLV_ERR;
    return hlv_expect(V, ins, hlv_scalar(V, HLO_TOKEN), false);
  case HLO_OP_SEND:
    if (!need_token(V, ins, 1)) return HLV_ERR;
    if (r->dtype != HLO_TUPLE || r->ntuple != 3 ||
        !hlv_compatible(&r->tuple[0], &ins->ops[0]->shape, false) ||
        r->tuple[2].dtype != HLO_TOKEN)
      return hlv_fail(V, ins, "result must be (%s, u32[], token), got %s",
                      hlv_str(V, &ins->ops[0]->shape), hlv_str(V, r));
    return HLV_OK;
  case HLO_OP_SEND_DONE:
    return hlv_expect(V, ins, hlv_scalar(V, HLO_TOKEN), false);
  case HLO_OP_RECV_DONE: {
    const HloShape *a = &ins->ops[0]->shape;
    if (a->dtype != HLO_TUPLE || a->ntuple != 3)
      return hlv_fail(V, ins, "operand must be a recv tuple, got %s", hlv_str(V, a));
    HloShape *t = hlv_tuple(V, 2);
    t->tuple[0] = a->tuple[0];
    t->tuple[1] = *hlv_scalar(V, HLO_TOKEN);
    return hlv_expect(V, ins, t, false);
  }
  default:
    return HLV_NOT_MINE;
  }
}

/* scan(inputs..., carry inits...), num_carries=c, dimensions={d}: to_apply
 * takes one slice of each input (dimension d removed) and the carries, and
 * returns (outputs..., carries...); the result stacks each output along d
 * (length of the inputs' dimension d) and ends with the final carries. */
static HlvResult scan(HlvCtx *V, const HloInstr *ins) {
  int64_t nc = ins->num_carries;
  int32_t ni = ins->nops - (int32_t)nc;
  if (nc < 0 || ni < 1)
    return hlv_fail(V, ins, "num_carries=%lld does not fit %d operands", (long long)nc,
                    (int)ins->nops);
  if (ins->dimensions.n != 1) return hlv_fail(V, ins, "takes exactly one dimension");
  for (int32_t i = 0; i < ni; i++)
    if (!hlv_need_array(V, ins, i)) return HLV_ERR;
  int64_t d = ins->dimensions.v[0], len = 0;
  const HloShape **ps = hlv_alloc(V, (size_t)ins->nops * sizeof *ps);
  for (int32_t i = 0; i < ins->nops; i++) {
    const HloShape *a = &ins->ops[i]->shape;
    ps[i] = a;
    if (i >= ni) continue;
    if (d < 0 || d >= a->rank)
      return hlv_fail(V, ins, "dimension %lld is out of range for input %d %s", (long long)d, (int)i,
                      hlv_str(V, a));
    if (i > 0 && a->dims[d] != len)
      return hlv_fail(V, ins, "input %d %s differs from input 0 in dimension %lld", (int)i,
                      hlv_str(V, a), (long long)d);
    len = a->dims[d];
    HloShape *sl = hlv_array(V, a->dtype, a->rank - 1, NULL);
    for (int32_t j = 0, k = 0; j < a->rank; j++)
      if (j != d) sl->dims[k++] = a->dims[j];
    ps[i] = sl;
  }
  const HloComputation *c = hlv_called(ins, HLO_CALL_TO_APPLY);
  if (!hlv_signature(V, ins, "to_apply", c, ins->nops, ps, NULL, true)) return HLV_ERR;
  const HloShape *root = &c->root->shape;
  int32_t nparts = root->dtype == HLO_TUPLE ? root->ntuple : 1;
  int32_t no = nparts - (int32_t)nc;
  if (no < 0)
    return hlv_fail(V, ins, "to_apply computation '%s' returns %s, fewer values than %lld carries",
                    c->name, hlv_str(V, root), (long long)nc);
  HloShape *r = nparts == 1 ? NULL : hlv_tuple(V, nparts);
  for (int32_t k = 0; k < nparts; k++) {
    const HloShape *part = root->dtype == HLO_TUPLE ? &root->tuple[k] : root;
    HloShape *o;
    if (k < no) {
      if (!hlv_is_array(part) || d > part->rank)
        return hlv_fail(V, ins, "to_apply output %d %s cannot be stacked along dimension %lld",
                        (int)k, hlv_str(V, part), (long long)d);
      o = hlv_array(V, part->dtype, part->rank + 1, NULL);
      for (int32_t j = 0, q = 0; j <= part->rank; j++) o->dims[j] = j == d ? len : part->dims[q++];
    } else {
      const HloShape *init = &ins->ops[ni + k - no]->shape;
      if (!hlv_compatible(part, init, true))
        return hlv_fail(V, ins, "to_apply carry %d %s does not match its init %s", (int)(k - no),
                        hlv_str(V, part), hlv_str(V, init));
      o = hlv_copy(V, init);
    }
    if (!r) r = o;
    else r->tuple[k] = *o;
  }
  return hlv_expect(V, ins, r, false);
}

HlvResult hlv_control(HlvCtx *V, const HloInstr *ins) {
  if (hlp_is_device_dependent(ins->op) && ins->op != HLO_OP_SEND && ins->op != HLO_OP_RECV &&
      collective_groups(V, ins) != HLV_OK)
    return HLV_ERR;
  switch (ins->op) {
  case HLO_OP_WHILE: return while_op(V, ins);
  case HLO_OP_CONDITIONAL: return conditional(V, ins);
  case HLO_OP_CALL: return call_like(V, ins, HLO_CALL_TO_APPLY, "to_apply", false);
  case HLO_OP_FUSION: return call_like(V, ins, HLO_CALL_CALLS, "calls", true);
  case HLO_OP_ASYNC_START: case HLO_OP_ASYNC_UPDATE: case HLO_OP_ASYNC_DONE:
    return async_op(V, ins);
  case HLO_OP_ALL_REDUCE: case HLO_OP_ALL_REDUCE_START: return all_reduce(V, ins);
  case HLO_OP_ALL_GATHER: case HLO_OP_REDUCE_SCATTER: return gather_scatter_dim(V, ins);
  case HLO_OP_COLLECTIVE_BROADCAST:
    return hlv_expect(V, ins, operands_shape(V, ins, 0, ins->nops), false);
  case HLO_OP_COLLECTIVE_PERMUTE:
    if (ins->nops != 1) return HLV_OK;   /* in-place form: (input, output, offsets...) */
    return hlv_expect(V, ins, &ins->ops[0]->shape, false);
  case HLO_OP_ALL_TO_ALL: {
    /* With dimensions={d}: the array form (one operand, same shape). Without:
     * the tuple form, one tuple element per operand, even for one operand. */
    if (!ins->has_dimensions)   /* member j's operand i lands in slot j of member i */
      for (int32_t i = 1; i < ins->nops; i++)
        if (!hlv_compatible(&ins->ops[i]->shape, &ins->ops[0]->shape, false))
          return hlv_fail(V, ins, "the tuple form's operands must have one shape: operand %d %s "
                          "differs from operand 0 %s", (int)i, hlv_str(V, &ins->ops[i]->shape),
                          hlv_str(V, &ins->ops[0]->shape));
    if (ins->has_dimensions || ins->nops != 1)
      return hlv_expect(V, ins, operands_shape(V, ins, 0, ins->nops), false);
    HloShape *t = hlv_tuple(V, 1);
    t->tuple[0] = ins->ops[0]->shape;
    return hlv_expect(V, ins, t, false);
  }
  case HLO_OP_RAGGED_ALL_TO_ALL:
    return hlv_expect(V, ins, &ins->ops[1]->shape, false);
  case HLO_OP_SCAN: return scan(V, ins);
  case HLO_OP_RNG: return rng(V, ins);
  case HLO_OP_RNG_BIT_GENERATOR: return rng_bit_generator(V, ins);
  case HLO_OP_RNG_GET_AND_UPDATE_STATE: {
    int64_t two = 2;
    return hlv_expect(V, ins, hlv_array(V, HLO_U64, 1, &two), false);
  }
  default: return transfer(V, ins);
  }
}
