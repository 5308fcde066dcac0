/* sharding.h: HLO shardings (XLA's HloSharding text form) and the tiles they
 * give each device: splitting global inputs, assembling global results.
 *
 * Forms read: {replicated}, {manual}, {maximal device=N},
 * {devices=[d0,...,dk]n0,n1,...} and {devices=[d0,...]<=[i0,...]T(p...)}
 * (iota tile assignments), with last_tile_dim_replicate or
 * last_tile_dims={replicated|manual,...} for trailing subgroup dimensions,
 * tuples {{...}, {...}}, and metadata={...} (ignored). The tile assignment
 * names partition numbers. */
#ifndef HLORUN_DEVICES_SHARDING_H
#define HLORUN_DEVICES_SHARDING_H
#include <stdint.h>
#include "hlorun.h"

enum { HLD_MAX_TILE_DIMS = 16 };

typedef enum { HLD_REPLICATED, HLD_MANUAL, HLD_MAXIMAL, HLD_TILED, HLD_TUPLE } HldShardKind;

typedef struct HldSharding HldSharding;
struct HldSharding {
  HldShardKind kind;
  int64_t device;                    /* maximal */
  int32_t ndims;                     /* tiled: tile assignment dimensions */
  int64_t dims[HLD_MAX_TILE_DIMS];
  int32_t nsub;                      /* trailing dimensions that are subgroups (replicated
                                        or manual), not tiles of the data */
  int64_t *devices;                  /* owned: the tile assignment, row-major */
  int32_t ntuple;
  HldSharding *tuple;                /* owned */
};

/* Parse text (a whole sharding, braces included). 0, or -1 with a message
 * in why (cap bytes). */
int hld_sharding_parse(const char *text, HldSharding *out, char *why, size_t cap);
void hld_sharding_free(HldSharding *s);

/* Tiles along data dimension j (1 for dimensions past the tiled ones). */
int64_t hld_tiles(const HldSharding *s, int32_t j);
/* Partition p's tile index along every data dimension (rank of them). -1
 * when p holds no tile (not in the assignment), else 0. */
int hld_tile_of(const HldSharding *s, int64_t p, int32_t rank, int64_t *index);
#endif
