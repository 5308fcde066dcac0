/* manual.c: the edges of a manually partitioned region in a module not yet
 * partitioned (ir/collective.h: XLA's SPMDFullToShardShape and
 * SPMDShardToFullShape custom calls, which JAX's shard_map and Shardy's
 * sdy.manual_computation become).
 *
 * XLA's SPMD partitioner splits the automatic part of such a module and
 * leaves the region's body as it is, to run on each device's shard. Here
 * every device of the run computes the automatic part whole (the same
 * global values on every device, so the same results as any partitioning
 * of it), and the edges do the partitioner's part:
 *   SPMDFullToShardShape: this partition's tile of the global operand, by
 *     the operand's sharding;
 *   SPMDShardToFullShape: the global value assembled from the tiles of the
 *     partitions of this replica, by the instruction's own sharding. A tile
 *     that several partitions hold (replicated subgroups) is taken from the
 *     one at this device's own place in the subgroups (this device for its
 *     own tile): inside an outer region that is the holder of the same
 *     outer shard. Copies that must be equal (the holders of a tile at one
 *     place in the manual subgroups) and are not are an error naming two
 *     of them: XLA's partitioner assumes they are equal, and one of them
 *     silently chosen would hide the body's bug.
 * Inside the region, collectives meet over the real devices. The Shardy
 * round trip's xla.sdy.GlobalToLocalShape / LocalToGlobalShape do the same
 * for several values at once (a tuple result, or tuple of operands' leaves),
 * by the shardings the front end read from their frontend attributes.
 *
 * A region manual over some of the mesh's axes (XLA writes its shard side
 * as manual subgroups, last_tile_dims={manual, replicated}) runs the same
 * way: the other axes only replicate the body. A global side with a manual
 * subgroup is an outer region's shard (nested regions): its tiles are
 * taken and assembled within that subgroup place.
 * Not supported (an error naming the edge): a shard side that splits the
 * shard further, shards of uneven size, and a tiled edge on a run with
 * fewer partitions than its sharding names. */
#include "interp/kernels/manual.h"
#include "interp/comm.h"
#include "ir/collective.h"
#include "ir/sharding.h"
#include "common/block.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_RANK = 64 };

static const char *edge_name(const HloInstr *ins) { return ins->custom_call_target; }

static bool partly_manual(const HloSharding *s) {
  if (!s || s->kind != HLO_SHARDING_TILED) return false;
  for (int32_t k = 0; k < s->nsub; k++)
    if (s->subgroup[k] == HLO_SHARDING_MANUAL) return true;
  return false;
}

/* A shard side's sharding (none written, {manual}, or manual subgroups
 * over tiles that are all the whole shard, as XLA writes a region manual
 * over some axes: {devices=[1,1,4,2]<=[8] last_tile_dims={manual,
 * replicated}}) leaves the shard whole on each device. */
static bool shard_side_whole(const HloSharding *l) {
  if (!l || l->kind == HLO_SHARDING_MANUAL) return true;
  if (!partly_manual(l)) return false;
  for (int32_t j = 0; j < l->ndims - l->nsub; j++)
    if (l->dims[j] != 1) return false;
  return true;
}

/* One value of an edge: its global and shard shapes, and the sharding
 * between them. */
typedef struct Edge {
  const HloShape *full, *shard;
  const HloSharding *s;
} Edge;

enum { MAX_VALUES = 64 };

/* The array shape k of a value's shape (a tuple's element, or itself). */
static const HloShape *leaf_shape(const HloShape *sh, int32_t k) {
  if (sh->dtype != HLO_TUPLE) return k == 0 ? sh : NULL;
  return k < sh->ntuple ? &sh->tuple[k] : NULL;
}

static HliValue *leaf_value(HliValue *v, int32_t k) { return v->dtype == HLO_TUPLE ? v->tuple[k] : v; }

/* The values an edge moves: operand k <-> result leaf k. */
static int32_t edge_values(const HloInstr *ins) { return ins->nops; }

static int edge_of(HliExec *x, const HloInstr *ins, int32_t k, Edge *e) {
  bool to_shard = hlp_manual_edge(ins) == HLP_FULL_TO_SHARD;
  bool round_trip = ins->manual_sharding != NULL;
  const char *what = edge_name(ins);
  int32_t n = edge_values(ins);
  if ((!round_trip && n != 1) || n < 1 || n > MAX_VALUES)
    return hli_fail(x, ins, "%s takes %s, not %d", what, round_trip ? "1 to 64 operands" : "one operand", n);
  const HloShape *res = leaf_shape(&ins->shape, n == 1 && ins->shape.dtype != HLO_TUPLE ? 0 : k);
  if (n > 1 && (ins->shape.dtype != HLO_TUPLE || ins->shape.ntuple != n))
    return hli_fail(x, ins, "%s of %d operands must return a tuple of %d", what, n, n);
  e->full = to_shard ? &ins->ops[k]->shape : res;
  e->shard = to_shard ? res : &ins->ops[k]->shape;
  const HloSharding *all = hlp_manual_edge_sharding(ins);
  e->s = all && all->kind == HLO_SHARDING_TUPLE ? hlo_sharding_leaf(all, k) : all;
  const HloSharding *local = round_trip ? NULL : to_shard ? ins->sharding : ins->ops[0]->sharding;
  if (!e->full || !e->shard || !hlc_dtype_is_array(e->full->dtype) || e->full->dtype != e->shard->dtype ||
      e->full->rank != e->shard->rank || e->full->rank > MAX_RANK)
    return hli_unsupported(x, ins, "%s of other than arrays with the same element type and rank "
                           "on both sides", what);
  if (!shard_side_whole(local))
    return partly_manual(local)
               ? hli_unsupported(x, ins, "%s with a partially manual sharding that splits the shard "
                                 "further (its tile dimensions are not all 1)", what)
               : hli_fail(x, ins, "%s: the shard side's sharding must be {manual}, or manual "
                          "subgroups (last_tile_dims={manual, ...}) over whole shards", what);
  if (!e->s)
    return hli_fail(x, ins, "%s needs the sharding of its global side (%s), which gives the tiles; "
                    "%s has none", what, to_shard ? "its operand's" : "its own",
                    to_shard ? ins->ops[0]->name : ins->name);
  switch (e->s->kind) {
  case HLO_SHARDING_REPLICATED: case HLO_SHARDING_MAXIMAL: case HLO_SHARDING_UNKNOWN:
  case HLO_SHARDING_TILED:
    break;
  default:
    return hli_unsupported(x, ins, "%s by a %s sharding", what,
                           e->s->kind == HLO_SHARDING_TUPLE ? "tuple" : "manual, unreduced or mesh");
  }
  int32_t rank = e->full->rank;
  if (e->s->kind == HLO_SHARDING_TILED && e->s->ndims - e->s->nsub != rank)
    return hli_fail(x, ins, "%s: its sharding tiles %d dimensions, but the value has %d", what,
                    e->s->ndims - e->s->nsub, rank);
  for (int32_t j = 0; j < rank; j++) {
    int64_t t = e->s->kind == HLO_SHARDING_TILED ? hlo_sharding_tiles(e->s, j) : 1;
    if (e->shard->dims[j] * t == e->full->dims[j]) continue;
    if (e->full->dims[j] % t == 0)
      return hli_fail(x, ins, "%s: dimension %d is %lld globally and %lld per shard, but its "
                      "sharding splits it into %lld tiles of %lld", what, j, (long long)e->full->dims[j],
                      (long long)e->shard->dims[j], (long long)t, (long long)(e->full->dims[j] / t));
    return hli_unsupported(x, ins, "%s: dimension %d is %lld globally and %lld per shard, which "
                           "%lld tiles do not make (uneven shards are not supported)", what, j,
                           (long long)e->full->dims[j], (long long)e->shard->dims[j], (long long)t);
  }
  return 0;
}

/* Partition p's tile index by the edge's sharding: 0, or -1 when p holds
 * none. Unsplit shardings hold the whole value everywhere. */
static int tile_of(const Edge *e, int64_t p, int64_t *idx) {
  if (e->s->kind != HLO_SHARDING_TILED) {
    for (int32_t j = 0; j < e->full->rank; j++) idx[j] = 0;
    return 0;
  }
  return hlo_sharding_tile_of(e->s, p, e->full->rank, idx);
}

static int check_value(HliExec *x, const HloInstr *ins, const Edge *e) {
  if (e->s->kind != HLO_SHARDING_TILED) return 0;
  const HliDevice *d = hli_exec_device(x);
  int64_t n = 1, top = 0;
  for (int32_t j = 0; j < e->s->ndims; j++) n *= e->s->dims[j];
  for (int64_t t = 0; t < n; t++)
    if (e->s->devices[t] > top) top = e->s->devices[t];
  if (top >= d->npartitions)
    return hli_fail(x, ins, "%s: its sharding names partition %lld, but this run has %lld "
                    "partition%s (a manual region runs on the partitions its sharding names: give "
                    "num_partitions=%lld in the module's header, or --partitions %lld)",
                    edge_name(ins), (long long)top, (long long)d->npartitions,
                    d->npartitions == 1 ? "" : "s", (long long)top + 1, (long long)top + 1);
  int64_t idx[MAX_RANK];
  for (int64_t p = 0; p < d->npartitions; p++)
    if (tile_of(e, p, idx) != 0)
      return hli_fail(x, ins, "%s: partition %lld holds no tile of its sharding", edge_name(ins),
                      (long long)p);
  return 0;
}

int hlk_manual_check(HliExec *x, const HloInstr *ins) {
  for (int32_t k = 0; k < edge_values(ins) || k == 0; k++) {
    Edge e;
    if (edge_of(x, ins, k, &e) || check_value(x, ins, &e)) return -1;
  }
  return 0;
}

static int full_to_shard(HliExec *x, const HloInstr *ins, const Edge *e, const HliValue *in,
                         HliValue *out) {
  const HliDevice *d = hli_exec_device(x);
  int64_t idx[MAX_RANK], off[MAX_RANK], zero[MAX_RANK] = {0};
  if (tile_of(e, d->partition, idx) != 0)
    return hli_fail(x, ins, "partition %lld holds no tile of its operand's sharding", (long long)d->partition);
  int32_t rank = e->full->rank;
  for (int32_t j = 0; j < rank; j++) off[j] = idx[j] * e->shard->dims[j];
  hlc_copy_block(out->data, e->shard->dims, zero, in->data, e->full->dims, off, e->shard->dims, rank,
                 hlc_dtype_size(e->full->dtype));
  return 0;
}

typedef struct Assemble {
  HliExec *x;
  const HloInstr *ins;
  const Edge *e;     /* [n values] */
  HliValue *out;
  int nvalues;
  int64_t self;      /* this device's rank (= partition) in the group */
  int n;
} Assemble;

/* Partition p's coordinates in s's tile assignment (tile dimensions, then
 * subgroup dimensions): 0, or -1 when p is not in it. */
static int position_of(const HloSharding *s, int64_t p, int64_t *pos) {
  int64_t n = 1;
  for (int32_t j = 0; j < s->ndims; j++) n *= s->dims[j];
  for (int64_t t = 0; t < n; t++) {
    if (s->devices[t] != p) continue;
    for (int32_t j = s->ndims - 1; j >= 0; j--) {
      pos[j] = t % s->dims[j];
      t /= s->dims[j];
    }
    return 0;
  }
  return -1;
}

/* The member whose copy of tile idx makes this device's value: the one at
 * this device's own place in the subgroup dimensions (this device itself
 * for its own tile). Copies of a tile are the same value unless the region
 * sits inside another one: then the subgroup place names the outer
 * region's shard this device's value belongs to, and only the member with
 * the same place holds that shard's tile. */
static int64_t source_of(const Edge *e, const int64_t *idx, int64_t self) {
  const HloSharding *s = e->s;
  if (s->kind != HLO_SHARDING_TILED) return self;
  int64_t pos[HLO_SHARDING_MAX_DIMS];
  if (position_of(s, self, pos) != 0) return -1;
  int32_t tiled = s->ndims - s->nsub;
  for (int32_t j = 0; j < tiled; j++) pos[j] = idx[j];
  int64_t flat = 0;
  for (int32_t j = 0; j < s->ndims; j++) flat = flat * s->dims[j] + pos[j];
  return s->devices[flat];
}

/* Copies of tile idx that must be the same value: those of the holders at
 * src's place in the manual subgroups (the same outer shard; every holder
 * when there are none). The first pair that differs, the lowest holder
 * first, into *p < *q (the same on every device of that place): true, or
 * false when all agree. */
static bool differing_copies(const Edge *e, const int64_t *idx, int64_t src, const HliPiece *const *pieces,
                             int k, int n, int64_t *p, int64_t *q) {
  const HloSharding *s = e->s;
  int64_t at[HLO_SHARDING_MAX_DIMS], pos[HLO_SHARDING_MAX_DIMS], t[MAX_RANK];
  bool tiled = s->kind == HLO_SHARDING_TILED;
  if (tiled && position_of(s, src, at) != 0) return false;
  int64_t first = -1;
  for (int r = 0; r < n; r++) {
    if (tile_of(e, r, t) != 0 || memcmp(t, idx, sizeof *t * (size_t)e->full->rank) != 0) continue;
    bool same_place = true;
    if (tiled && position_of(s, r, pos) == 0)
      for (int32_t g = 0; g < s->nsub; g++) {
        int32_t j = s->ndims - s->nsub + g;
        if (s->subgroup[g] == HLO_SHARDING_MANUAL && pos[j] != at[j]) same_place = false;
      }
    if (!same_place) continue;
    if (first < 0) { first = r; continue; }
    if (pieces[r][k].nbytes != pieces[first][k].nbytes ||
        memcmp(pieces[r][k].data, pieces[first][k].data, pieces[r][k].nbytes) != 0) {
      *p = first;
      *q = r;
      return true;
    }
  }
  return false;
}

static int consume_assemble(void *arg, const HliPiece *const *pieces, const HliShare *share) {
  (void)share;
  Assemble *a = arg;
  int64_t idx[MAX_RANK], off[MAX_RANK], zero[MAX_RANK] = {0};
  for (int k = 0; k < a->nvalues; k++) {
    const Edge *e = &a->e[k];
    HliValue *out = leaf_value(a->out, k);
    int32_t rank = e->full->rank;
    for (int q = 0; q < a->n; q++) {
      if (tile_of(e, q, idx) != 0 || source_of(e, idx, a->self) != q) continue;
      int64_t p1, p2;
      if (differing_copies(e, idx, q, pieces, k, a->n, &p1, &p2)) {
        char tile[160] = "";
        for (int32_t j = 0, w = 0; j < rank && w < (int)sizeof tile - 24; j++)
          w += snprintf(tile + w, sizeof tile - (size_t)w, "%s%lld", j ? ", " : "", (long long)idx[j]);
        return hli_fail(a->x, a->ins, "%s: partitions %lld and %lld hold copies of the same tile {%s} "
                        "of value %d that differ (copies by a replicated sharding must be equal: "
                        "the region's body made them differ)", edge_name(a->ins), (long long)p1,
                        (long long)p2, tile, k);
      }
      for (int32_t j = 0; j < rank; j++) off[j] = idx[j] * e->shard->dims[j];
      hlc_copy_block(out->data, e->full->dims, off, pieces[q][k].data, e->shard->dims, zero,
                     e->shard->dims, rank, hlc_dtype_size(e->full->dtype));
    }
  }
  return 0;
}

static int shard_to_full(HliExec *x, const HloInstr *ins, const Edge *e, int nvalues, HliValue *const *in,
                         HliValue *out) {
  const HliDevice *d = hli_exec_device(x);
  int64_t P = d->npartitions;
  HliPiece mine[MAX_VALUES];
  for (int k = 0; k < nvalues; k++) mine[k] = (HliPiece){in[k]->data, in[k]->nbytes};
  Assemble a = {x, ins, e, out, nvalues, d->partition, (int)P};
  if (P == 1) {
    const HliPiece *only = mine;
    HliShare alone = {0, 1, NULL};
    return consume_assemble(&a, &only, &alone);
  }
  if (!d->comm) return hli_fail(x, ins, "%lld partitions, but this run has no communicator", (long long)P);
  int64_t *devs = malloc((size_t)P * sizeof *devs);
  if (!devs) return hli_fail_nomem(x, ins, "out of memory");
  for (int64_t q = 0; q < P; q++) devs[q] = d->replica * P + q;
  int rc = d->comm->exchange(d->comm, x, ins, devs, (int)P, (int)d->partition, mine, nvalues, NULL,
                             consume_assemble, &a, NULL);
  free(devs);
  return rc;
}

int hlk_manual_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  Edge e[MAX_VALUES];
  int32_t n = edge_values(ins);
  /* hlk_manual_check ran at plan time (partitions, tiles); the shapes are
   * read again for the values' Edges. */
  for (int32_t k = 0; k < n; k++)
    if (edge_of(x, ins, k, &e[k])) return -1;
  if (hlp_manual_edge(ins) == HLP_SHARD_TO_FULL) return shard_to_full(x, ins, e, n, in, out);
  for (int32_t k = 0; k < n; k++)
    if (full_to_shard(x, ins, &e[k], in[k], leaf_value(out, k))) return -1;
  return 0;
}
