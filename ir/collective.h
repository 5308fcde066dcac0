/* collective.h: who takes part in a collective instruction, from the IR
 * alone (XLA's collective_op_group_mode.cc and collective_ops_utils.cc
 * GetParticipatingDevices). Shared by the verifier, the collective kernels
 * and the multi-device runtime.
 *
 * Devices form a grid of R replicas x P partitions; device id (XLA's
 * flattened id) = replica * P + partition. */
#ifndef HLORUN_IR_COLLECTIVE_H
#define HLORUN_IR_COLLECTIVE_H
#include <stdbool.h>
#include <stdint.h>
#include "ir/ir.h"

typedef enum HlpGroupMode {
  HLP_CROSS_REPLICA,                /* ids are replica numbers; per partition */
  HLP_CROSS_PARTITION,              /* ids are partition numbers; per replica */
  HLP_CROSS_REPLICA_AND_PARTITION,  /* ids are replica numbers; every partition of them */
  HLP_FLATTENED_ID                  /* ids are device ids */
} HlpGroupMode;

/* The group mode of a collective: channel_id and use_global_device_ids
 * decide (all-reduce, all-gather and reduce-scatter never are
 * cross-partition; the others never cross replicas and partitions). */
HlpGroupMode hlp_group_mode(const HloInstr *ins);
const char *hlp_group_mode_name(HlpGroupMode m);

/* Does the value of an instruction with this opcode depend on the device
 * it runs on (collectives, replica-id, partition-id, send, recv)? */
bool hlp_is_device_dependent(HloOpcode op);
/* Does any instruction of m (hlp_instr_is_device_dependent)? *first gets
 * the first one found (may be NULL). */
bool hlp_module_is_device_dependent(const HloModule *m, const HloInstr **first);

/* The edges of a manually partitioned region (JAX's shard_map, Shardy's
 * sdy.manual_computation) in a module not yet partitioned: XLA's
 * SPMDFullToShardShape (a global value to this device's shard, by its
 * operand's sharding) and SPMDShardToFullShape (every device's shard to
 * the global value, by its own sharding), or the Shardy round trip's
 * xla.sdy.GlobalToLocalShape and xla.sdy.LocalToGlobalShape (several
 * values at once, by HloInstr.manual_sharding). Everything else in such a
 * module has global shapes. */
typedef enum HlpManualEdge { HLP_NOT_MANUAL_EDGE, HLP_FULL_TO_SHARD, HLP_SHARD_TO_FULL } HlpManualEdge;
HlpManualEdge hlp_manual_edge(const HloInstr *ins);
/* The sharding an edge splits or assembles by (NULL: none written); a
 * tuple sharding for a round-trip edge of several values. */
const struct HloSharding *hlp_manual_edge_sharding(const HloInstr *ins);
/* Does any instruction of m open or close a manual region? */
bool hlp_module_has_manual_region(const HloModule *m);
/* Does this instruction's value depend on the device it runs on: its
 * opcode's (hlp_is_device_dependent), or a manual region's edge? */
bool hlp_instr_is_device_dependent(const HloInstr *ins);

/* The group of device (replica r, partition p) on an R x P grid: its
 * members' device ids in rank order into out (room for R*P), their count
 * in *n and the device's rank in *rank. Returns 1; 0 when no group holds
 * the device (collective-broadcast's uncovered devices); -1 with *why (a
 * static string) when the groups do not fit the grid. Groups of
 * collective-permute are the devices its pairs index: every replica of
 * partition p, or every partition of replica r. */
int hlp_device_group(const HloInstr *ins, int64_t R, int64_t P, int64_t r, int64_t p,
                     int64_t *out, int *n, int *rank, char *why, size_t why_len);

/* Check a collective's groups against an R x P grid before anything runs:
 * every id in range, no id twice, groups that cover the id space (except
 * all-reduce's and collective-broadcast's, which may leave ids out ... see
 * collective.c), uniform sizes where XLA requires them, permute pairs in
 * range with no repeated source or target. 0, or -1 with a message in why. */
int hlp_check_groups(const HloInstr *ins, int64_t R, int64_t P, char *why, size_t why_len);

/* replica_groups written in the mesh form (mesh[...] {...} or
 * maximal_mesh[...] {...}; the parser expands it into replica_groups)? */
bool hlp_groups_in_mesh_form(const HloInstr *ins);

/* One axis reference of the mesh form: the whole mesh axis `axis`
 * (pre == 0), or its sub-axis "name:(pre)size". */
typedef struct HlpMeshAxisRef {
  int32_t axis;
  int64_t pre, size;
} HlpMeshAxisRef;

/* XLA's MeshAxesReplicaGroupList::flattened_replica_groups
 * (xla/hlo/ir/replica_group.cc): the groups of a mesh with naxes axes of
 * the given sizes whose devices are ids (row-major over the axes; NULL for
 * iota 0..N-1; naxes == 0 is a one-device maximal mesh, ids[0] its device)
 * grouped over the axes refs (in the order given). Validates the refs as
 * XLA's ValidateSpanOfAxes (mesh_and_axis.cc). Fills out with the N ids,
 * group after group, and *group_size; 0, or -1 with a message in why. */
int hlp_mesh_groups(int32_t naxes, const int64_t *sizes, const int64_t *ids, int32_t nrefs,
                    const HlpMeshAxisRef *refs, int64_t *out, int64_t *group_size, char *why,
                    size_t wl);
/* How many ids the instruction's groups or pairs draw from on an R x P
 * grid (replicas, partitions or devices, by its mode). */
int64_t hlp_id_space(const HloInstr *ins, int64_t R, int64_t P);

/* The smallest grid the ids written in m's collectives need, for a module
 * whose header gives neither replica_count nor num_partitions (XLA's tests
 * leave them to the harness): replica numbers name replicas, partition
 * numbers partitions; a manual region's edges need the partitions of
 * their sharding's tile assignment. */
void hlp_devices_needed(const HloModule *m, int64_t *R, int64_t *P);
#endif
