/* verify_index.c: shape rules of gather and scatter (XLA's dimension-number
 * validation, batching dimensions included): every dimension list in range,
 * unrepeated (sorted where XLA wants it sorted), the window and batch parts
 * adding up to the operand rank, slice sizes and update windows within the
 * operand, and the inferred gather result; scatter's combiner signature.
 */
#include "ir/verify.h"

static bool contains(const HloI64s *d, int64_t x) {
  for (int32_t i = 0; i < d->n; i++)
    if (d->v[i] == x) return true;
  return false;
}

/* Indices with the implicit trailing index vector dimension made explicit. */
static HloShape *expanded_indices(HlvCtx *V, const HloInstr *ins, const HloShape *idx,
                                  int64_t ivd) {
  if (!hlc_dtype_is_int(idx->dtype)) {
    hlv_fail(V, ins, "start indices must be integers, got %s", hlv_str(V, idx));
    return NULL;
  }
  if (ivd < 0 || ivd > idx->rank) {
    hlv_fail(V, ins, "index_vector_dim %lld is out of range for indices of rank %d",
             (long long)ivd, (int)idx->rank);
    return NULL;
  }
  HloShape *e = hlv_array(V, idx->dtype, idx->rank + (ivd == idx->rank), idx->dims);
  if (ivd == idx->rank) e->dims[idx->rank] = 1;
  return e;
}

/* Batching dimension lists: operand side vs indices side. */
static bool batching(HlvCtx *V, const HloInstr *ins, const char *op_name, const HloI64s *ob,
                     const char *idx_name, const HloI64s *ib, const HloShape *a,
                     const HloShape *idx, int64_t ivd, const HloI64s *excluded,
                     const char *excluded_name) {
  if (!hlv_dims_ok(V, ins, op_name, ob, a->rank, true)) return false;
  if (!hlv_dims_ok(V, ins, idx_name, ib, idx->rank + 1, false)) return false;
  if (ob->n != ib->n) {
    hlv_fail(V, ins, "%s %s and %s %s differ in length", op_name, hlv_list_str(V, ob), idx_name,
             hlv_list_str(V, ib));
    return false;
  }
  for (int32_t i = 0; i < ob->n; i++) {
    if (contains(excluded, ob->v[i])) {
      hlv_fail(V, ins, "dimension %lld is in both %s and %s", (long long)ob->v[i], op_name,
               excluded_name);
      return false;
    }
    if (ib->v[i] == ivd || ib->v[i] >= idx->rank) {
      hlv_fail(V, ins, "%s %s: dimension %lld is out of range or the index vector dimension",
               idx_name, hlv_list_str(V, ib), (long long)ib->v[i]);
      return false;
    }
    if (a->dims[ob->v[i]] != idx->dims[ib->v[i]]) {
      hlv_fail(V, ins, "batching dimension %lld of the operand (size %lld) and %lld of the "
               "indices (size %lld) differ", (long long)ob->v[i], (long long)a->dims[ob->v[i]],
               (long long)ib->v[i], (long long)idx->dims[ib->v[i]]);
      return false;
    }
  }
  return true;
}

/* The index map (start_index_map / scatter_dims_to_operand_dims): one
 * operand dimension per index vector entry, none of them batching dims. */
static bool index_map(HlvCtx *V, const HloInstr *ins, const char *name, const HloI64s *map,
                      int64_t vec_len, const HloShape *a, const HloI64s *batch) {
  if (map->n != vec_len) {
    hlv_fail(V, ins, "%s %s has %d entries, the index vector has %lld", name, hlv_list_str(V, map),
             (int)map->n, (long long)vec_len);
    return false;
  }
  if (!hlv_dims_ok(V, ins, name, map, a->rank, false)) return false;
  for (int32_t i = 0; i < map->n; i++)
    if (contains(batch, map->v[i])) {
      hlv_fail(V, ins, "%s %s names batching dimension %lld", name, hlv_list_str(V, map),
               (long long)map->v[i]);
      return false;
    }
  return true;
}

static HlvResult gather(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0) || !hlv_need_array(V, ins, 1)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape, *idx = &ins->ops[1]->shape;
  const HloGatherDims *g = &ins->gather;
  HloShape *e = expanded_indices(V, ins, idx, g->index_vector_dim);
  if (!e) return HLV_ERR;
  int64_t ivd = g->index_vector_dim;
  int32_t out_rank = g->offset_dims.n + e->rank - 1;
  if (!hlv_dims_ok(V, ins, "offset_dims", &g->offset_dims, out_rank, true) ||
      !hlv_dims_ok(V, ins, "collapsed_slice_dims", &g->collapsed_slice_dims, a->rank, true) ||
      !batching(V, ins, "operand_batching_dims", &g->operand_batching_dims,
                "start_indices_batching_dims", &g->start_indices_batching_dims, a, idx, ivd,
                &g->collapsed_slice_dims, "collapsed_slice_dims") ||
      !index_map(V, ins, "start_index_map", &g->start_index_map, e->dims[ivd], a,
                 &g->operand_batching_dims))
    return HLV_ERR;
  if (g->offset_dims.n + g->collapsed_slice_dims.n + g->operand_batching_dims.n != a->rank)
    return hlv_fail(V, ins, "offset_dims (%d), collapsed_slice_dims (%d) and operand_batching_dims "
                    "(%d) must add up to the operand rank %d", (int)g->offset_dims.n,
                    (int)g->collapsed_slice_dims.n, (int)g->operand_batching_dims.n, (int)a->rank);
  if (g->slice_sizes.n != a->rank)
    return hlv_fail(V, ins, "slice_sizes %s has %d entries, the operand has rank %d",
                    hlv_list_str(V, &g->slice_sizes), (int)g->slice_sizes.n, (int)a->rank);
  for (int32_t i = 0; i < a->rank; i++) {
    int64_t s = g->slice_sizes.v[i];
    if (s < 0 || s > a->dims[i])
      return hlv_fail(V, ins, "slice size %lld of dimension %d is out of bounds for %s",
                      (long long)s, (int)i, hlv_str(V, a));
    if (s > 1 && (contains(&g->collapsed_slice_dims, i) || contains(&g->operand_batching_dims, i)))
      return hlv_fail(V, ins, "collapsed or batching dimension %d must have slice size 0 or 1, "
                      "got %lld", (int)i, (long long)s);
  }
  HloShape *r = hlv_array(V, a->dtype, out_rank, NULL);
  int32_t next_window = 0, next_batch = 0;
  for (int32_t i = 0; i < out_rank; i++) {
    if (contains(&g->offset_dims, i)) {
      while (contains(&g->collapsed_slice_dims, next_window) ||
             contains(&g->operand_batching_dims, next_window))
        next_window++;
      r->dims[i] = g->slice_sizes.v[next_window++];
    } else {
      if (next_batch == ivd) next_batch++;
      r->dims[i] = e->dims[next_batch++];
    }
  }
  return hlv_expect(V, ins, r, false);
}

static HlvResult scatter(HlvCtx *V, const HloInstr *ins) {
  int32_t k = (ins->nops - 1) / 2;
  for (int32_t i = 0; i < ins->nops; i++)
    if (!hlv_need_array(V, ins, i)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape, *idx = &ins->ops[k]->shape, *u = &ins->ops[k + 1]->shape;
  const HloScatterDims *s = &ins->scatter;
  for (int32_t i = 1; i < k; i++) {
    if (!hlv_same_dims(&ins->ops[i]->shape, a))
      return hlv_fail(V, ins, "operand %d %s must have the dimensions of operand 0 %s", (int)i,
                      hlv_str(V, &ins->ops[i]->shape), hlv_str(V, a));
    if (!hlv_same_dims(&ins->ops[k + 1 + i]->shape, u))
      return hlv_fail(V, ins, "updates %d %s must have the dimensions of updates 0 %s", (int)i,
                      hlv_str(V, &ins->ops[k + 1 + i]->shape), hlv_str(V, u));
  }
  HloShape *e = expanded_indices(V, ins, idx, s->index_vector_dim);
  if (!e) return HLV_ERR;
  int64_t ivd = s->index_vector_dim;
  if (!hlv_dims_ok(V, ins, "update_window_dims", &s->update_window_dims, u->rank, true) ||
      !hlv_dims_ok(V, ins, "inserted_window_dims", &s->inserted_window_dims, a->rank, true) ||
      !batching(V, ins, "input_batching_dims", &s->input_batching_dims,
                "scatter_indices_batching_dims", &s->scatter_indices_batching_dims, a, idx, ivd,
                &s->inserted_window_dims, "inserted_window_dims") ||
      !index_map(V, ins, "scatter_dims_to_operand_dims", &s->scatter_dims_to_operand_dims,
                 e->dims[ivd], a, &s->input_batching_dims))
    return HLV_ERR;
  if (s->update_window_dims.n + s->inserted_window_dims.n + s->input_batching_dims.n != a->rank)
    return hlv_fail(V, ins, "update_window_dims (%d), inserted_window_dims (%d) and "
                    "input_batching_dims (%d) must add up to the operand rank %d",
                    (int)s->update_window_dims.n, (int)s->inserted_window_dims.n,
                    (int)s->input_batching_dims.n, (int)a->rank);
  if (u->rank - s->update_window_dims.n != e->rank - 1)
    return hlv_fail(V, ins, "updates %s have %d scatter dimensions, the indices %s have %d",
                    hlv_str(V, u), (int)(u->rank - s->update_window_dims.n), hlv_str(V, idx),
                    (int)(e->rank - 1));
  /* Window dims of the updates fit the operand; scatter dims match indices. */
  int32_t next_op = 0, next_idx = 0;
  for (int32_t i = 0; i < u->rank; i++) {
    if (contains(&s->update_window_dims, i)) {
      while (contains(&s->inserted_window_dims, next_op) ||
             contains(&s->input_batching_dims, next_op))
        next_op++;
      if (u->dims[i] > a->dims[next_op])
        return hlv_fail(V, ins, "update window dimension %d (size %lld) is larger than operand "
                        "dimension %d (size %lld)", (int)i, (long long)u->dims[i], (int)next_op,
                        (long long)a->dims[next_op]);
      next_op++;
    } else {
      if (next_idx == ivd) next_idx++;
      if (u->dims[i] != e->dims[next_idx])
        return hlv_fail(V, ins, "update scatter dimension %d (size %lld) does not match indices "
                        "dimension %d (size %lld)", (int)i, (long long)u->dims[i], (int)next_idx,
                        (long long)e->dims[next_idx]);
      next_idx++;
    }
  }
  HloDtype *it = hlv_alloc(V, (size_t)k * sizeof *it), *ut = hlv_alloc(V, (size_t)k * sizeof *ut);
  for (int32_t i = 0; i < k; i++) {
    it[i] = ins->ops[i]->shape.dtype;
    ut[i] = ins->ops[k + 1 + i]->shape.dtype;
  }
  if (!hlv_reducer(V, ins, "to_apply", hlv_called(ins, HLO_CALL_TO_APPLY), k, it, ut, NULL))
    return HLV_ERR;
  if (k == 1) return hlv_expect(V, ins, a, false);
  HloShape *t = hlv_tuple(V, k);
  for (int32_t i = 0; i < k; i++) t->tuple[i] = ins->ops[i]->shape;
  return hlv_expect(V, ins, t, false);
}

HlvResult hlv_index(HlvCtx *V, const HloInstr *ins) {
  switch (ins->op) {
  case HLO_OP_GATHER: return gather(V, ins);
  case HLO_OP_SCATTER: return scatter(V, ins);
  default: return HLV_NOT_MINE;
  }
}
