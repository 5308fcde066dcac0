/* sdy.h: Shardy's meshes and tensor shardings as HLO shardings, shared by
 * the front ends: StableHLO's sdy dialect (stablehlo/sdy.c reads its
 * tokens) and the strings of XLA's Shardy round trip in HLO dumps
 * (frontend_attributes xla.sdy.meshes, xla.sdy.in_shardings, ...).
 *
 * A mesh ["x"=2, "y"=4] numbers its devices row-major over its axes (x
 * major). A sharding splits each dimension over the axes listed for it, in
 * order (major first); the axes no dimension uses replicate the tiles. As
 * HLO (the form XLA's Shardy export gives): tile dimensions the products of
 * their axes' sizes, the unused axes' product as last_tile_dim_replicate,
 * and the tile assignment the mesh's device array transposed so that its
 * axes come in that order: devices=[4,1,2]<=[2,4]T(1,0)
 * last_tile_dim_replicate. */
#ifndef HLORUN_IR_SDY_H
#define HLORUN_IR_SDY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/arena.h"
#include "common/text.h"
#include "ir/sharding.h"

enum { HLP_SDY_MAX_AXES = 16, HLP_SDY_MAX_DIMS = 64 };

typedef struct HlpMesh {
  const char *name;   /* without '@' */
  size_t nlen;
  int naxes;
  const char *axis[HLP_SDY_MAX_AXES];   /* names without quotes */
  size_t alen[HLP_SDY_MAX_AXES];
  int64_t size[HLP_SDY_MAX_AXES];
} HlpMesh;

/* One tensor sharding on a mesh: the axes (indices into the mesh) of each
 * dimension, major first. */
typedef struct HlpSdySharding {
  int ndims;
  int naxes[HLP_SDY_MAX_DIMS];
  int axes[HLP_SDY_MAX_DIMS][HLP_SDY_MAX_AXES];
} HlpSdySharding;

/* The HLO sharding text "{...}" of s on m, counting only the axes in
 * `only` (all when NULL; the others replicate); the axes in outer_manual
 * (manual in an enclosing region; NULL: none) that split no dimension form
 * a manual subgroup (last_tile_dims={manual, ...}), as XLA's export writes
 * a region inside another. Each dimension's tile count into tiles (room for
 * s->ndims) when not NULL. */
void hlp_sdy_to_hlo(HlcText *out, const HlpMesh *m, const HlpSdySharding *s, const bool *only,
                    const bool *outer_manual, int64_t *tiles);

/* ---- The round trip's strings ----------------------------------------------------
 * Each returns 0, or -1 with a message in why (cap bytes). */

/* "{mesh = #sdy.mesh<["a"=2, "b"=4]>, other = ...}" (module attribute
 * xla.sdy.meshes): up to max meshes into out (names and axis names point
 * into text, which must outlive them), their count into *n. */
int hlp_sdy_parse_meshes(const char *text, HlpMesh *out, int max, int *n, char *why, size_t cap);
/* "#sdy<manual_axes{"a", "b"}>": a mask over m's axes. */
int hlp_sdy_parse_manual_axes(const char *text, const HlpMesh *m, bool *mask, char *why, size_t cap);
/* "#sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>, ...]>" (or one
 * "#sdy.sharding<@mesh, [...]>"): the meshes named (from meshes[0..nmeshes))
 * and shardings, up to max, into mesh_out[] and out[]; the count into *n. */
int hlp_sdy_parse_shardings(const char *text, const HlpMesh *meshes, int nmeshes, const HlpMesh **mesh_out,
                            HlpSdySharding *out, int max, int *n, char *why, size_t cap);
#endif
