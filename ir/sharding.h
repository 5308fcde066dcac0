/* sharding.h: HLO shardings as typed IR values (XLA's HloSharding), parsed
 * once from their text form by the one parser here: front ends fill
 * HloInstr.sharding with it, the run path reads the typed value, and a
 * sharding given as text (--output-sharding, hlo_assemble_result) goes
 * through the same function.
 *
 * Forms: {replicated}, {manual}, {unknown}, {unreduced}, {maximal device=N},
 * {devices=[d0,...,dk]n0,n1,...} and {devices=[d0,...]<=[i0,...]T(p...)}
 * (iota tile assignments), with last_tile_dim_replicate or
 * last_tile_dims={replicated|manual|unreduced|unknown,...} naming the
 * trailing subgroup dimensions, tuples {{...}, {...}}, metadata={...} (kept
 * verbatim), shard_as N / shard_like N, and the mesh forms
 * {mesh[...] ...} / {maximal_mesh[...]} (kept verbatim, not interpreted).
 * The tile assignment names partition numbers. */
#ifndef HLORUN_IR_SHARDING_H
#define HLORUN_IR_SHARDING_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/arena.h"

enum { HLO_SHARDING_MAX_DIMS = 16, HLO_SHARDING_MAX_TILES = 1 << 20 };

typedef enum HloShardingKind {
  HLO_SHARDING_REPLICATED,
  HLO_SHARDING_MANUAL,
  HLO_SHARDING_UNKNOWN,    /* no decision yet; runs as replicated */
  HLO_SHARDING_UNREDUCED,
  HLO_SHARDING_MAXIMAL,    /* the whole value on one device */
  HLO_SHARDING_TILED,      /* tiles by a tile assignment */
  HLO_SHARDING_TUPLE,      /* one sharding per leaf of a tuple */
  HLO_SHARDING_MESH        /* a named-mesh form, kept as text */
} HloShardingKind;

typedef enum { HLO_SHARD_GROUP_NONE, HLO_SHARD_AS, HLO_SHARD_LIKE } HloShardGroupKind;

typedef struct HloSharding HloSharding;
struct HloSharding {
  HloShardingKind kind;
  int64_t device;                   /* MAXIMAL */
  /* TILED: the tile assignment's dimensions; the last nsub of them are
   * subgroups (devices that hold the same tile), of the kinds in subgroup[]
   * (REPLICATED, MANUAL, UNREDUCED or UNKNOWN). */
  int32_t ndims;
  int64_t dims[HLO_SHARDING_MAX_DIMS];
  int32_t nsub;
  HloShardingKind subgroup[HLO_SHARDING_MAX_DIMS];
  bool last_tile_dim_replicate;     /* written so (one replicated subgroup) */
  int64_t *devices;                 /* the tile assignment, row-major, prod(dims) */
  /* As written: an iota assignment <=[iota_dims]T(iota_perm) (niota > 0), or
   * the explicit device list (niota == 0). */
  int32_t niota;
  int64_t iota_dims[HLO_SHARDING_MAX_DIMS];
  int32_t iota_perm[HLO_SHARDING_MAX_DIMS];
  bool iota_transposed;             /* T(...) written */
  int32_t ntuple;                   /* TUPLE */
  HloSharding *tuple;
  HloShardGroupKind group;
  int64_t group_id;
  const char *metadata;             /* metadata={...}: the {...} verbatim, or NULL */
  size_t metadata_len;
  const char *mesh;                 /* MESH: the text inside the braces */
  size_t mesh_len;
};

/* Parse one sharding "{...}" at the start of text, allocating in arena.
 * Returns the bytes read (to the closing brace), or -1 with a message in
 * why (cap bytes). Trailing text is the caller's. */
long hlo_sharding_parse_prefix(HlcArena *arena, const char *text, HloSharding *out,
                               char *why, size_t cap);
/* Parse a whole text (blanks around it allowed): 0, or -1 with why. */
int hlo_sharding_parse(HlcArena *arena, const char *text, HloSharding *out, char *why, size_t cap);

/* Printing, in XLA's form ("{devices=[2,1]0,1 last_tile_dim_replicate}"):
 * hlp_print_sharding in ir/print.h. */

/* True for shardings that run as the same value on every device. */
bool hlo_sharding_is_replicated(const HloSharding *s);
/* The sharding of leaf k (depth-first) of a value: a tuple sharding's k-th
 * element (NULL past its end), any other sharding itself. */
const HloSharding *hlo_sharding_leaf(const HloSharding *s, int32_t k);
/* Tiles along data dimension j (1 for dimensions past the tiled ones). */
int64_t hlo_sharding_tiles(const HloSharding *s, int32_t j);
/* Partition p's tile index along each of rank data dimensions: 0, or -1
 * when p holds no tile (it is not in the assignment). */
int hlo_sharding_tile_of(const HloSharding *s, int64_t p, int32_t rank, int64_t *index);
#endif
