/* collective.c: participants of collective instructions (collective.h).
 * The rules are XLA's: GetCollectiveOpGroupMode (collective_op_group_mode.cc),
 * GetParticipatingDevices (collective_ops_utils.cc) and the verifier's
 * CheckReplicaGroups / CheckDuplicatedSourceOrTarget (hlo_verifier.cc). */
#include "ir/collective.h"
#include "ir/sharding.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reduce_family(HloOpcode op) {
  return op == HLO_OP_ALL_REDUCE || op == HLO_OP_ALL_REDUCE_START || op == HLO_OP_ALL_GATHER ||
         op == HLO_OP_ALL_GATHER_START || op == HLO_OP_REDUCE_SCATTER;
}

static bool is_permute(HloOpcode op) {
  return op == HLO_OP_COLLECTIVE_PERMUTE || op == HLO_OP_COLLECTIVE_PERMUTE_START;
}

HlpGroupMode hlp_group_mode(const HloInstr *ins) {
  if (!ins->has_channel_id) return ins->use_global_device_ids ? HLP_FLATTENED_ID : HLP_CROSS_REPLICA;
  if (!reduce_family(ins->op)) return HLP_CROSS_PARTITION;
  return ins->use_global_device_ids ? HLP_FLATTENED_ID : HLP_CROSS_REPLICA_AND_PARTITION;
}

const char *hlp_group_mode_name(HlpGroupMode m) {
  switch (m) {
  case HLP_CROSS_REPLICA: return "cross-replica";
  case HLP_CROSS_PARTITION: return "cross-partition";
  case HLP_CROSS_REPLICA_AND_PARTITION: return "cross-replica-and-partition";
  default: return "flattened-id";
  }
}

bool hlp_is_device_dependent(HloOpcode op) {
  switch (op) {
  case HLO_OP_ALL_REDUCE: case HLO_OP_ALL_REDUCE_START: case HLO_OP_ALL_GATHER:
  case HLO_OP_ALL_GATHER_START: case HLO_OP_REDUCE_SCATTER: case HLO_OP_ALL_TO_ALL:
  case HLO_OP_RAGGED_ALL_TO_ALL: case HLO_OP_COLLECTIVE_BROADCAST: case HLO_OP_COLLECTIVE_PERMUTE:
  case HLO_OP_COLLECTIVE_PERMUTE_START: case HLO_OP_REPLICA_ID: case HLO_OP_PARTITION_ID:
  case HLO_OP_SEND: case HLO_OP_RECV:
    return true;
  default:
    return false;
  }
}

HlpManualEdge hlp_manual_edge(const HloInstr *ins) {
  if (ins->op != HLO_OP_CUSTOM_CALL || !ins->custom_call_target) return HLP_NOT_MANUAL_EDGE;
  const char *t = ins->custom_call_target;
  if (strcmp(t, "SPMDFullToShardShape") == 0 || strcmp(t, "xla.sdy.GlobalToLocalShape") == 0)
    return HLP_FULL_TO_SHARD;
  if (strcmp(t, "SPMDShardToFullShape") == 0 || strcmp(t, "xla.sdy.LocalToGlobalShape") == 0)
    return HLP_SHARD_TO_FULL;
  return HLP_NOT_MANUAL_EDGE;
}

const HloSharding *hlp_manual_edge_sharding(const HloInstr *ins) {
  if (ins->manual_sharding) return ins->manual_sharding;   /* Shardy's round-trip form */
  switch (hlp_manual_edge(ins)) {
  case HLP_FULL_TO_SHARD: return ins->nops >= 1 ? ins->ops[0]->sharding : NULL;
  case HLP_SHARD_TO_FULL: return ins->sharding;
  default: return NULL;
  }
}

bool hlp_instr_is_device_dependent(const HloInstr *ins) {
  return hlp_is_device_dependent(ins->op) || hlp_manual_edge(ins) != HLP_NOT_MANUAL_EDGE;
}

bool hlp_module_has_manual_region(const HloModule *m) {
  for (int32_t c = 0; c < m->ncomps; c++)
    for (int32_t i = 0; i < m->comps[c]->ninstrs; i++)
      if (hlp_manual_edge(m->comps[c]->instrs[i]) != HLP_NOT_MANUAL_EDGE) return true;
  return false;
}

bool hlp_module_is_device_dependent(const HloModule *m, const HloInstr **first) {
  for (int32_t c = 0; c < m->ncomps; c++)
    for (int32_t i = 0; i < m->comps[c]->ninstrs; i++)
      if (hlp_instr_is_device_dependent(m->comps[c]->instrs[i])) {
        if (first) *first = m->comps[c]->instrs[i];
        return true;
      }
  if (first) *first = NULL;
  return false;
}

/* How many ids the mode's id space holds. */
static int64_t id_space(HlpGroupMode mode, const HloInstr *ins, int64_t R, int64_t P) {
  if (is_permute(ins->op) || ins->op == HLO_OP_COLLECTIVE_BROADCAST || ins->op == HLO_OP_ALL_TO_ALL ||
      ins->op == HLO_OP_RAGGED_ALL_TO_ALL)
    return mode == HLP_CROSS_PARTITION ? P : R;
  switch (mode) {
  case HLP_CROSS_PARTITION: return P;
  case HLP_FLATTENED_ID: return R * P;
  default: return R;
  }
}

bool hlp_groups_in_mesh_form(const HloInstr *ins) {
  for (int32_t a = 0; a < ins->nattrs; a++)
    if (strcmp(ins->attrs[a].name, "replica_groups") == 0 && ins->attrs[a].nvalues >= 1 &&
        ins->attrs[a].values[0]->kind == HLO_VAL_TOKEN && ins->attrs[a].values[0]->text &&
        (strncmp(ins->attrs[a].values[0]->text, "mesh", 4) == 0 ||
         strncmp(ins->attrs[a].values[0]->text, "maximal_mesh", 12) == 0))
      return true;
  return false;
}

/* The mesh form, after XLA (xla/hlo/ir/replica_group.cc,
 * MeshAxesReplicaGroupList): every mesh axis is reshaped so that each
 * referenced (sub-)axis becomes a dimension of its own --
 *   no ref:           [n]
 *   the whole axis:   [n], grouped over it
 *   one sub-axis (p)s: [p, s, n/(p*s)], grouped over the middle one
 *   several sub-axes: sorted by pre-size, with a padding dimension before a
 *                     sub-axis whose pre-size is not the product so far and
 *                     a suffix dimension up to n; grouped over theirs
 * -- then the device array, so reshaped, is transposed to put the ungrouped
 * dimensions first (in order) and the grouped ones last, in the order the
 * refs are written, and cut into groups of the grouped dimensions' product.
 * The checks are ValidateSpanOfAxes and AxisRef::Validate (mesh_and_axis.cc):
 * a sub-axis has pre-size >= 1 and size > 1, p*s divides n and s < n; no two
 * refs overlap (the whole axis overlaps anything on it), the gap between two
 * sub-axes of one axis is a whole factor; adjacent refs that could merge
 * ("x":(1)2,"x":(2)2) are refused. */
int hlp_mesh_groups(int32_t naxes, const int64_t *sizes, const int64_t *ids, int32_t nrefs,
                    const HlpMeshAxisRef *refs, int64_t *out, int64_t *group_size, char *why,
                    size_t wl) {
  int64_t total = 1;
  for (int32_t i = 0; i < naxes; i++) total *= sizes[i];
  if (naxes == 0) {                 /* maximal mesh: one device, no axes */
    if (nrefs) { snprintf(why, wl, "a maximal mesh has no axes to group over"); return -1; }
    out[0] = ids ? ids[0] : 0;
    *group_size = 1;
    return 0;
  }
  for (int32_t k = 0; k < nrefs; k++) {
    const HlpMeshAxisRef *r = &refs[k];
    if (r->axis < 0 || r->axis >= naxes) {
      snprintf(why, wl, "axis %d is not an axis of the mesh", r->axis);
      return -1;
    }
    if (!r->pre) continue;
    int64_t n = sizes[r->axis];
    if (r->pre < 1 || r->size <= 1) {
      snprintf(why, wl, "sub-axis (%lld)%lld: the pre-size must be >= 1 and the size > 1",
               (long long)r->pre, (long long)r->size);
      return -1;
    }
    if (r->pre > n || r->size > n || n % (r->pre * r->size) != 0) {
      snprintf(why, wl, "sub-axis (%lld)%lld: %lld x %lld does not divide the axis size %lld",
               (long long)r->pre, (long long)r->size, (long long)r->pre, (long long)r->size,
               (long long)n);
      return -1;
    }
    if (r->size >= n) {
      snprintf(why, wl, "sub-axis (%lld)%lld: its size must be less than the axis size %lld",
               (long long)r->pre, (long long)r->size, (long long)n);
      return -1;
    }
  }
  for (int32_t k = 0; k < nrefs; k++)
    for (int32_t l = k + 1; l < nrefs; l++) {
      const HlpMeshAxisRef *a = &refs[k], *b = &refs[l];
      if (a->axis != b->axis) continue;
      bool ok = a->pre && b->pre;
      if (ok) {
        int64_t an = a->pre * a->size, bn = b->pre * b->size;
        if (an > b->pre && bn > a->pre) ok = false;     /* overlap */
        int64_t maxpre = a->pre > b->pre ? a->pre : b->pre, minnext = an < bn ? an : bn;
        if (ok && maxpre % minnext != 0) ok = false;
      }
      if (!ok) {
        snprintf(why, wl, "axis refs %d and %d overlap or cannot coexist (same mesh axis)", k, l);
        return -1;
      }
    }
  for (int32_t k = 0; k + 1 < nrefs; k++) {
    const HlpMeshAxisRef *a = &refs[k], *b = &refs[k + 1];
    if (a->axis == b->axis && a->pre && b->pre && a->pre * a->size == b->pre) {
      snprintf(why, wl, "adjacent axis refs %d and %d can be merged into one (write the merged "
               "sub-axis)", k, k + 1);
      return -1;
    }
  }
  /* Reshaped dimensions: at most 1 + 2 per ref for each axis. */
  int32_t cap = naxes + 2 * nrefs + 1;
  int64_t *dims = malloc((size_t)cap * sizeof *dims), *grouped = malloc((size_t)(nrefs + 1) * sizeof *grouped);
  int32_t *perm = malloc((size_t)cap * sizeof *perm), *order = malloc((size_t)(nrefs + 1) * sizeof *order);
  int64_t *stride = malloc((size_t)cap * sizeof *stride), *tdim = malloc((size_t)cap * sizeof *tdim);
  int64_t *idx = malloc((size_t)cap * sizeof *idx);
  if (!dims || !grouped || !perm || !order || !stride || !tdim || !idx) {
    free(dims); free(grouped); free(perm); free(order); free(stride); free(tdim); free(idx);
    snprintf(why, wl, "out of memory");
    return -1;
  }
  int32_t nd = 0;
  for (int32_t ax = 0; ax < naxes; ax++) {
    int64_t n = sizes[ax];
    int32_t m = 0;
    for (int32_t k = 0; k < nrefs; k++)
      if (refs[k].axis == ax) order[m++] = k;
    if (m == 0) { dims[nd++] = n; continue; }
    if (m == 1) {
      const HlpMeshAxisRef *r = &refs[order[0]];
      if (!r->pre) { grouped[order[0]] = nd; dims[nd++] = n; }
      else {
        dims[nd++] = r->pre;
        grouped[order[0]] = nd;
        dims[nd++] = r->size;
        dims[nd++] = n / (r->pre * r->size);
      }
      continue;
    }
    /* Several sub-axes (none whole, else they would overlap): by pre-size. */
    for (int32_t i = 1; i < m; i++)
      for (int32_t j = i; j > 0 && refs[order[j]].pre < refs[order[j - 1]].pre; j--) {
        int32_t t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
      }
    int64_t prod = 1;
    for (int32_t i = 0; i < m; i++) {
      const HlpMeshAxisRef *r = &refs[order[i]];
      if (r->pre != prod) { dims[nd++] = r->pre / prod; prod = r->pre; }
      grouped[order[i]] = nd;
      dims[nd++] = r->size;
      prod *= r->size;
    }
    if (prod != n) dims[nd++] = n / prod;
  }
  /* Transpose: ungrouped dimensions in order, then the grouped ones in ref order. */
  int32_t np = 0;
  for (int32_t d = 0; d < nd; d++) {
    bool g = false;
    for (int32_t k = 0; k < nrefs; k++) g = g || grouped[k] == d;
    if (!g) perm[np++] = d;
  }
  int64_t gs = 1;
  for (int32_t k = 0; k < nrefs; k++) { perm[np++] = (int32_t)grouped[k]; gs *= dims[grouped[k]]; }
  for (int32_t d = nd - 1, st = 1; d >= 0; d--) { stride[d] = st; st *= (int32_t)dims[d]; }
  for (int32_t j = 0; j < nd; j++) tdim[j] = dims[perm[j]];
  for (int64_t lin = 0; lin < total; lin++) {
    int64_t rem = lin, src = 0;
    for (int32_t j = nd - 1; j >= 0; j--) { idx[j] = rem % tdim[j]; rem /= tdim[j]; }
    for (int32_t j = 0; j < nd; j++) src += idx[j] * stride[perm[j]];
    out[lin] = ids ? ids[src] : src;
  }
  *group_size = gs;
  free(dims); free(grouped); free(perm); free(order); free(stride); free(tdim); free(idx);
  return 0;
}

int64_t hlp_id_space(const HloInstr *ins, int64_t R, int64_t P) {
  return id_space(hlp_group_mode(ins), ins, R, P);
}

int hlp_check_groups(const HloInstr *ins, int64_t R, int64_t P, char *why, size_t wl) {
  HlpGroupMode mode = hlp_group_mode(ins);
  int64_t space = id_space(mode, ins, R, P);
  if (ins->use_global_device_ids && !ins->has_channel_id) {
    snprintf(why, wl, "use_global_device_ids=true needs a channel_id");
    return -1;
  }
  const char *what = mode == HLP_CROSS_PARTITION ? "partition" : mode == HLP_FLATTENED_ID ? "device" : "replica";
  if (is_permute(ins->op)) {
    for (int32_t i = 0; i < ins->npairs; i++)
      for (int k = 0; k < 2; k++) {
        int64_t v = ins->source_target_pairs[i][k];
        if (v < 0 || v >= space) {
          snprintf(why, wl, "source_target_pairs {%lld,%lld} names %s %lld, but there %s %lld "
                   "(%lld replicas x %lld partitions)", (long long)ins->source_target_pairs[i][0],
                   (long long)ins->source_target_pairs[i][1], what, (long long)v,
                   space == 1 ? "is" : "are", (long long)space, (long long)R, (long long)P);
          return -1;
        }
      }
    return 0;
  }
  if (ins->op == HLO_OP_REPLICA_ID || ins->op == HLO_OP_PARTITION_ID || ins->op == HLO_OP_SEND ||
      ins->op == HLO_OP_RECV)
    return 0;
  if (ins->ngroups == 0) {
    if (mode == HLP_FLATTENED_ID) {
      snprintf(why, wl, "use_global_device_ids=true needs explicit replica_groups");
      return -1;
    }
    return 0;
  }
  /* Ids seen, up to one past the number the groups list: a larger id space
   * (a huge replica_count) cannot be covered anyway, and the first id it
   * misses is below that bound. */
  int64_t ids = 0;
  for (int32_t g = 0; g < ins->ngroups; g++) ids += ins->replica_groups[g].n;
  int64_t cap = space < ids + 1 ? space : ids + 1;
  uint8_t *seen = calloc((size_t)(cap > 0 ? cap : 1), 1);
  if (!seen) { snprintf(why, wl, "out of memory"); return -1; }
  int64_t total = 0;
  int rc = 0;
  for (int32_t g = 0; g < ins->ngroups && !rc; g++) {
    const HloI64s *grp = &ins->replica_groups[g];
    if (grp->n == 0) { snprintf(why, wl, "replica group %d is empty", g); rc = -1; break; }
    if (grp->n != ins->replica_groups[0].n && ins->op != HLO_OP_ALL_REDUCE &&
        ins->op != HLO_OP_ALL_REDUCE_START && ins->op != HLO_OP_COLLECTIVE_BROADCAST) {
      snprintf(why, wl, "replica groups must have one size (group 0 has %d ids, group %d has %d)",
               ins->replica_groups[0].n, g, grp->n);
      rc = -1;
      break;
    }
    for (int32_t i = 0; i < grp->n; i++) {
      int64_t v = grp->v[i];
      if (v < 0 || v >= space) {
        snprintf(why, wl, "replica group %d names %s %lld, but there %s %lld (%s groups; %lld "
                 "replicas x %lld partitions)", g, what, (long long)v, space == 1 ? "is" : "are",
                 (long long)space, hlp_group_mode_name(mode), (long long)R, (long long)P);
        rc = -1;
        break;
      }
      if (v < cap && seen[v]) {
        snprintf(why, wl, "%s %lld is in more than one replica group (or twice in one)", what,
                 (long long)v);
        rc = -1;
        break;
      }
      if (v < cap) seen[v] = 1;
      total++;
    }
  }
  if (!rc && total != space && ins->op != HLO_OP_COLLECTIVE_BROADCAST) {
    int64_t miss = 0;
    while (miss < cap && seen[miss]) miss++;
    snprintf(why, wl, "replica groups must cover every %s: %s %lld is in none (%s groups over "
             "%lld %ss)", what, what, (long long)miss, hlp_group_mode_name(mode), (long long)space,
             what);
    rc = -1;
  }
  free(seen);
  return rc;
}

int hlp_device_group(const HloInstr *ins, int64_t R, int64_t P, int64_t r, int64_t p,
                     int64_t *out, int *n, int *rank, char *why, size_t wl) {
  HlpGroupMode mode = hlp_group_mode(ins);
  *n = 0;
  *rank = 0;
  if (is_permute(ins->op)) {   /* every device of the id space the pairs index */
    if (mode == HLP_CROSS_PARTITION)
      for (int64_t q = 0; q < P; q++) out[(*n)++] = r * P + q;
    else
      for (int64_t q = 0; q < R; q++) out[(*n)++] = q * P + p;
    *rank = (int)(mode == HLP_CROSS_PARTITION ? p : r);
    return 1;
  }
  int64_t self = mode == HLP_CROSS_PARTITION ? p : mode == HLP_FLATTENED_ID ? r * P + p : r;
  int64_t space = id_space(mode, ins, R, P);
  const HloI64s *grp = NULL;
  HloI64s all = {0, NULL};
  for (int32_t g = 0; g < ins->ngroups && !grp; g++)
    for (int32_t i = 0; i < ins->replica_groups[g].n; i++)
      if (ins->replica_groups[g].v[i] == self) { grp = &ins->replica_groups[g]; break; }
  if (!ins->ngroups) {
    if (mode == HLP_FLATTENED_ID) {
      snprintf(why, wl, "use_global_device_ids=true needs explicit replica_groups");
      return -1;
    }
    all.n = (int32_t)space;
    grp = &all;
  }
  if (!grp) {
    if (ins->op == HLO_OP_COLLECTIVE_BROADCAST) return 0;
    snprintf(why, wl, "no replica group holds this device (replica %lld, partition %lld)",
             (long long)r, (long long)p);
    return -1;
  }
  for (int32_t i = 0; i < grp->n; i++) {
    int64_t v = grp->v ? grp->v[i] : i;
    if (v < 0 || v >= space) {
      snprintf(why, wl, "replica group names %lld outside [0, %lld)", (long long)v, (long long)space);
      return -1;
    }
    if (v == self) *rank = (int)(mode == HLP_CROSS_REPLICA_AND_PARTITION ? i * P + p : i);
    switch (mode) {
    case HLP_CROSS_REPLICA: out[(*n)++] = v * P + p; break;
    case HLP_CROSS_PARTITION: out[(*n)++] = r * P + v; break;
    case HLP_CROSS_REPLICA_AND_PARTITION:
      for (int64_t q = 0; q < P; q++) out[(*n)++] = v * P + q;
      break;
    case HLP_FLATTENED_ID: out[(*n)++] = v; break;
    }
  }
  return 1;
}

void hlp_devices_needed(const HloModule *m, int64_t *R, int64_t *P) {
  int64_t flat = 1;   /* device ids of flattened-id groups: they fit R x P */
  *R = *P = 1;
  for (int32_t c = 0; c < m->ncomps; c++)
    for (int32_t k = 0; k < m->comps[c]->ninstrs; k++) {
      const HloInstr *ins = m->comps[c]->instrs[k];
      const HloSharding *edge = hlp_manual_edge_sharding(ins);
      for (int32_t k = 0; edge && hlo_sharding_leaf(edge, k); k++) {   /* its partitions: the tile assignments' */
        const HloSharding *leaf = hlo_sharding_leaf(edge, k);
        if (leaf->kind != HLO_SHARDING_TILED) continue;
        int64_t n = 1;
        for (int32_t j = 0; j < leaf->ndims; j++) n *= leaf->dims[j];
        for (int64_t t = 0; t < n; t++)
          if (leaf->devices[t] + 1 > *P) *P = leaf->devices[t] + 1;
        if (edge->kind != HLO_SHARDING_TUPLE) break;
      }
      if (!hlp_is_device_dependent(ins->op)) continue;
      HlpGroupMode mode = hlp_group_mode(ins);
      int64_t *dst = mode == HLP_CROSS_PARTITION ? P : mode == HLP_FLATTENED_ID ? &flat : R;
      for (int32_t g = 0; g < ins->ngroups; g++)
        for (int32_t i = 0; i < ins->replica_groups[g].n; i++)
          if (ins->replica_groups[g].v[i] + 1 > *dst) *dst = ins->replica_groups[g].v[i] + 1;
      for (int32_t i = 0; i < ins->npairs; i++)
        for (int j = 0; j < 2; j++)
          if (ins->source_target_pairs[i][j] + 1 > *dst) *dst = ins->source_target_pairs[i][j] + 1;
    }
  if (flat > *R * *P) *R = (flat + *P - 1) / *P;
}
