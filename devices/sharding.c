/* sharding.c: values split and assembled by their typed shardings
 * (ir/sharding.h): the public hlo_shard_param, hlo_param_global_shape and
 * hlo_assemble_result.
 *
 * A device's value is the parameter's own shape; the global shape is that shape times
 * the tile counts (XLA pads uneven shards; the global value given here is
 * the padded one). */
#include "common/block.h"
#include "interp/api.h"
#include "interp/valio.h"
#include "ir/collective.h"
#include "ir/print.h"
#include "ir/sharding.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shardings of a module ------------------------------------------------------- */

/* Whether the run path can split and assemble by s (and its leaves). */
static const HloSharding *unsupported(const HloSharding *s) {
  if (s->kind == HLO_SHARDING_MESH || s->kind == HLO_SHARDING_UNREDUCED) return s;
  for (int32_t i = 0; i < s->ntuple; i++) {
    const HloSharding *u = unsupported(&s->tuple[i]);
    if (u) return u;
  }
  return NULL;
}

/* The typed sharding of ins (replicated when it has none) into s: 0, or -1
 * for a form that cannot split or assemble values. In a module with a
 * manual region (not yet partitioned, ir/collective.h) every parameter and
 * result has its global shape: their shardings are annotations. */
static int sharding_of(HloCtx *ctx, const HloModule *m, const HloInstr *ins, HloSharding *s) {
  memset(s, 0, sizeof *s);
  if (!ins->sharding || hlp_module_has_manual_region(m)) { s->kind = HLO_SHARDING_REPLICATED; return 0; }
  *s = *ins->sharding;
  const HloSharding *u = unsupported(s);
  if (!u) return 0;
  HlcText b = {0};
  hlp_print_sharding(&b, u);
  hli_api_fail(ctx, HLO_UNSUPPORTED, "%s: %s (line %d): not supported: splitting or assembling "
               "values by sharding %.*s", ins->parent->name, ins->name, ins->line,
               b.p ? (int)b.n : 1, b.p ? b.p : "?");
  free(b.p);
  return -1;
}

static int32_t leaf_count(const HloShape *sh) {
  if (sh->dtype != HLO_TUPLE) return 1;
  int32_t n = 0;
  for (int32_t i = 0; i < sh->ntuple; i++) n += leaf_count(&sh->tuple[i]);
  return n;
}

/* Copy a block of count[] elements from src (dims sd, at so[]) to dst (dims
 * dd, at doff[]). */
static void shape_text(const HloShape *s, char *buf, size_t cap) {
  HlcText b = {0};
  hlp_print_shape(&b, s, false);
  snprintf(buf, cap, "%.*s", b.p ? (int)b.n : 1, b.p ? b.p : "?");
  free(b.p);
}

HloStatus hlo_param_global_shape(HloCtx *ctx, const HloModule *m, int index, int replicas,
                                 int partitions, char **text) {
  (void)replicas; (void)partitions;
  if (!ctx || !m || !text || index < 0 || index >= m->entry->nparams) return HLO_INVALID_ARGUMENT;
  const HloInstr *prm = m->entry->params[index];
  HloSharding s;
  if (sharding_of(ctx, m, prm, &s)) return HLO_INVALID_ARGUMENT;
  const HloShape *sh = &prm->shape;
  HloShape g = *sh;
  int64_t dims[HLO_SHARDING_MAX_DIMS > 64 ? HLO_SHARDING_MAX_DIMS : 64];
  if (sh->dtype != HLO_TUPLE && sh->rank <= 64) {
    for (int32_t j = 0; j < sh->rank; j++) dims[j] = sh->dims[j] * hlo_sharding_tiles(hlo_sharding_leaf(&s, 0), j);
    g.dims = dims;
    g.minor_to_major = NULL;
  }
  char buf[512];
  shape_text(&g, buf, sizeof buf);
  *text = strdup(buf);
  return *text ? HLO_OK : HLO_NOMEM;
}

/* Split one array leaf: dev[d] = device d's tile of g (or all of g). */
static HloStatus shard_leaf(HloCtx *ctx, const HloInstr *prm, const HloShape *local,
                            const HloSharding *s, const HloBuffer *g, int R, int P,
                            HloBuffer **dev) {
  int32_t rank = local->rank;
  const int64_t *gd = hlo_buffer_dims(g);
  bool whole = hlo_buffer_rank(g) == rank;
  for (int32_t j = 0; whole && j < rank; j++) whole = gd[j] == local->dims[j];
  char want[512], got[512];
  HloShape gs = *local;
  int64_t gdims[64];
  for (int32_t j = 0; j < rank && j < 64; j++) gdims[j] = local->dims[j] * (s ? hlo_sharding_tiles(s, j) : 1);
  gs.dims = gdims;
  gs.minor_to_major = NULL;
  if (!whole) {
    bool fits = s && s->kind == HLO_SHARDING_TILED && hlo_buffer_rank(g) == rank && rank <= 64 &&
                hlo_buffer_type(g) == (HloElementType)hlc_dtype_xla_code(local->dtype);
    for (int32_t j = 0; fits && j < rank; j++) fits = gd[j] == gdims[j];
    if (!fits) {
      shape_text(local, want, sizeof want);
      HlcText b = {0};
      hlp_print_shape(&b, g->v->shape, false);
      snprintf(got, sizeof got, "%s", b.p ? b.p : "?");
      hlc_text_free(&b);
      char gl[512];
      shape_text(&gs, gl, sizeof gl);
      if (s && s->kind == HLO_SHARDING_MANUAL)
        return hli_api_fail(ctx, HLO_TYPE_MISMATCH, "parameter %lld (%s) has a manual sharding: "
                            "its input must be the value every device gets (%s), or give each "
                            "device's value with --per-device-inputs; got %s",
                            (long long)prm->parameter_number, prm->name, want, got);
      if (s && s->kind == HLO_SHARDING_TILED)
        return hli_api_fail(ctx, HLO_TYPE_MISMATCH, "parameter %lld (%s): the input is %s, but "
                            "the parameter takes its global shape %s (sharded by its sharding) "
                            "or %s (the same value on every device)",
                            (long long)prm->parameter_number, prm->name, got, gl, want);
      return hli_api_fail(ctx, HLO_TYPE_MISMATCH, "parameter %lld (%s): the input is %s, but the "
                          "parameter is %s and has no tiled sharding",
                          (long long)prm->parameter_number, prm->name, got, want);
    }
  }
  size_t es = hlc_dtype_size(local->dtype);
  for (int64_t d = 0; d < (int64_t)R * P; d++) {
    HloStatus st = hlo_buffer_new_array(ctx, (HloElementType)hlc_dtype_xla_code(local->dtype), local->dims, rank,
                                        whole ? hlo_buffer_data(g) : NULL, &dev[d]);
    if (st != HLO_OK) return st;
    if (whole) continue;
    int64_t idx[64], off[64], zero[64] = {0};
    if (hlo_sharding_tile_of(s, d % P, rank, idx) != 0)
      return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "parameter %s: partition %lld is not in its "
                          "sharding's tile assignment", prm->name, (long long)(d % P));
    for (int32_t j = 0; j < rank; j++) off[j] = idx[j] * local->dims[j];
    hlc_copy_block((char *)hlo_buffer_data(dev[d]), local->dims, zero, hlo_buffer_data(g), gdims, off,
               local->dims, rank, es);
  }
  return HLO_OK;
}

HloStatus hlo_shard_param(HloCtx *ctx, const HloModule *m, int index, const HloBuffer *global,
                          int R, int P, HloBuffer **dev) {
  if (!ctx || !m || !global || !dev || index < 0 || index >= m->entry->nparams || R < 1 || P < 1)
    return HLO_INVALID_ARGUMENT;
  int64_t ndev = (int64_t)R * P;
  for (int64_t d = 0; d < ndev; d++) dev[d] = NULL;
  const HloInstr *prm = m->entry->params[index];
  HloSharding s;
  if (sharding_of(ctx, m, prm, &s)) return HLO_INVALID_ARGUMENT;
  HloStatus res = HLO_OK;
  const HloShape *sh = &prm->shape;
  if (sh->dtype != HLO_TUPLE) {
    res = shard_leaf(ctx, prm, sh, &s, global, R, P, dev);
  } else {
    /* A tuple parameter: shard every element, then rebuild one tuple per device. */
    int32_t n = sh->ntuple;
    HloBuffer **parts = calloc((size_t)(n * ndev + 1), sizeof *parts);
    if (!parts || hlo_buffer_tuple_size(global) != n) {
      free(parts);
      return hli_api_fail(ctx, HLO_TYPE_MISMATCH, "parameter %s: a tuple of %d elements was expected",
                          prm->name, n);
    }
    for (int32_t i = 0; i < n && res == HLO_OK; i++) {
      HloBuffer *el = NULL;
      res = hlo_buffer_tuple_element(ctx, global, i, &el);
      if (res == HLO_OK && sh->tuple[i].dtype == HLO_TUPLE)
        res = hli_api_fail(ctx, HLO_UNSUPPORTED, "not supported: parameter %s: nested tuples on "
                           "several devices", prm->name);
      const HloSharding *ls = hlo_sharding_leaf(&s, i);
      if (res == HLO_OK) res = shard_leaf(ctx, prm, &sh->tuple[i], ls ? ls : &s, el, R, P, parts + i * ndev);
      hlo_buffer_free(el);
    }
    for (int64_t d = 0; d < ndev && res == HLO_OK; d++) {
      HloBuffer *el[256];
      if (n > 256) { res = hli_api_fail(ctx, HLO_UNSUPPORTED, "not supported: tuples of more than 256 elements here"); break; }
      for (int32_t i = 0; i < n; i++) el[i] = parts[i * ndev + d];
      res = hlo_buffer_new_tuple(ctx, el, n, &dev[d]);
    }
    for (int64_t k = 0; k < n * ndev; k++) hlo_buffer_free(parts[k]);
    free(parts);
  }
  if (res != HLO_OK)
    for (int64_t d = 0; d < ndev; d++) { hlo_buffer_free(dev[d]); dev[d] = NULL; }
  return res;
}

/* ---- assembling results ------------------------------------------------------------ */

static bool same_bits(const HloBuffer *a, const HloBuffer *b) {
  if (hlo_buffer_nbytes(a) != hlo_buffer_nbytes(b)) return false;
  return memcmp(hlo_buffer_data(a), hlo_buffer_data(b), hlo_buffer_nbytes(a)) == 0;
}

/* One array leaf from every device's leaf. */
static HloStatus assemble_leaf(HloCtx *ctx, const HloSharding *s, HloBuffer *const *dev, int R,
                               int P, int leaf, HloBuffer **out) {
  int64_t ndev = (int64_t)R * P;
  const HloBuffer *b0 = dev[0];
  int32_t rank = hlo_buffer_rank(b0);
  const int64_t *ld = hlo_buffer_dims(b0);
  HloElementType t = hlo_buffer_type(b0);
  const char *where = leaf >= 0 ? "result element" : "result";
  /* Every tile is copied with device 0's dims: all must have them. */
  for (int64_t d = 1; d < ndev; d++)
    if (hlo_buffer_type(dev[d]) != t || hlo_buffer_rank(dev[d]) != rank ||
        (rank && memcmp(hlo_buffer_dims(dev[d]), ld, (size_t)rank * sizeof *ld) != 0))
      return hli_api_fail(ctx, HLO_TYPE_MISMATCH, "device %lld's %s%s%.0d has another shape than "
                          "device 0's", (long long)d, where, leaf >= 0 ? " " : "", leaf >= 0 ? leaf : 0);
  if (!s || hlo_sharding_is_replicated(s) || s->kind == HLO_SHARDING_MAXIMAL || s->kind == HLO_SHARDING_MANUAL) {
    int64_t src = s && s->kind == HLO_SHARDING_MAXIMAL ? s->device : 0;
    if (src < 0 || src >= P)
      return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "the result's sharding names device %lld, "
                          "but there are %d partitions", (long long)src, P);
    for (int64_t d = 0; d < ndev; d++) {
      if (s && s->kind == HLO_SHARDING_MAXIMAL && d % P != src) continue;
      if (!same_bits(dev[d], dev[src]))
        return hli_api_fail(ctx, HLO_RUNTIME_ERROR, "the %s%s%.0d is %s, but devices %lld and "
                            "%lld hold different values (print every device's with "
                            "--per-device-outputs, or give the result's sharding with "
                            "--output-sharding)", where, leaf >= 0 ? " " : "", leaf >= 0 ? leaf : 0,
                            s && s->kind == HLO_SHARDING_MAXIMAL ? "on one device per replica" : "replicated (it has no tiled sharding)",
                            (long long)src, (long long)d);
    }
    return hlo_buffer_new_array(ctx, t, ld, rank, hlo_buffer_data(dev[src]), out);
  }
  if (rank > 64 || s->ndims - s->nsub > rank)
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "the result's sharding has %d tile dimensions "
                        "for a %s of rank %d", s->ndims - s->nsub, where, rank);
  int64_t gd[64], idx[64], off[64], zero[64] = {0};
  for (int32_t j = 0; j < rank; j++) gd[j] = ld[j] * hlo_sharding_tiles(s, j);
  HloStatus st = hlo_buffer_new_array(ctx, t, gd, rank, NULL, out);
  if (st != HLO_OK) return st;
  size_t es = hlo_buffer_nbytes(b0) / (size_t)(hlo_buffer_num_elements(b0) ? hlo_buffer_num_elements(b0) : 1);
  /* Replica 0's tiles make the value; every other holder of a tile must agree. */
  for (int64_t d = 0; d < ndev; d++) {
    if (hlo_sharding_tile_of(s, d % P, rank, idx) != 0) continue;
    int64_t first = -1;
    for (int64_t e = 0; e < d && first < 0; e++) {
      int64_t other[64];
      if (hlo_sharding_tile_of(s, e % P, rank, other) != 0) continue;
      bool same = true;
      for (int32_t j = 0; j < rank; j++) same &= other[j] == idx[j];
      if (same) first = e;
    }
    if (first >= 0) {
      if (!same_bits(dev[d], dev[first])) {
        hlo_buffer_free(*out);
        *out = NULL;
        return hli_api_fail(ctx, HLO_RUNTIME_ERROR, "devices %lld and %lld hold the same tile of "
                            "the result by its sharding, but different values", (long long)first,
                            (long long)d);
      }
      continue;
    }
    for (int32_t j = 0; j < rank; j++) off[j] = idx[j] * ld[j];
    hlc_copy_block((char *)hlo_buffer_data(*out), gd, off, hlo_buffer_data(dev[d]), ld, zero, ld, rank, es);
  }
  return HLO_OK;
}

HloStatus hlo_assemble_result(HloCtx *ctx, const HloModule *m, const char *sharding,
                              HloBuffer *const *dev, int R, int P, HloBuffer **out) {
  if (!ctx || !m || !dev || !out || R < 1 || P < 1) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  const HloInstr *root = m->entry->root;
  /* A sharding given as text is read by the same parser as the module's. */
  HlcArena arena;
  hlc_arena_init(&arena);
  HloSharding s;
  char why[256];
  if (!sharding) {
    if (sharding_of(ctx, m, root, &s)) { hlc_arena_free(&arena); return HLO_UNSUPPORTED; }
  } else if (hlo_sharding_parse(&arena, sharding, &s, why, sizeof why) != 0) {
    hlc_arena_free(&arena);
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "%s", why);
  } else if (unsupported(&s)) {
    hlc_arena_free(&arena);
    return hli_api_fail(ctx, HLO_UNSUPPORTED, "not supported: assembling results by sharding %s", sharding);
  }
  int64_t ndev = (int64_t)R * P;
  HloStatus st = HLO_OK;
  if (hlo_buffer_type(dev[0]) != HLO_TYPE_TUPLE) {
    st = assemble_leaf(ctx, s.kind == HLO_SHARDING_TUPLE ? hlo_sharding_leaf(&s, 0) : &s, dev, R, P, -1, out);
  } else {
    int n = hlo_buffer_tuple_size(dev[0]);
    HloBuffer **parts = calloc((size_t)(ndev + n + 1), sizeof *parts);
    HloBuffer **el = parts ? parts + ndev : NULL;
    if (!parts) st = HLO_NOMEM;
    for (int i = 0; i < n && st == HLO_OK; i++) {
      for (int64_t d = 0; d < ndev && st == HLO_OK; d++) st = hlo_buffer_tuple_element(ctx, dev[d], i, &parts[d]);
      if (st == HLO_OK && hlo_buffer_type(parts[0]) == HLO_TYPE_TUPLE)
        st = hli_api_fail(ctx, HLO_UNSUPPORTED, "not supported: assembling nested tuple results "
                          "(use --per-device-outputs)");
      const HloSharding *ls = s.kind == HLO_SHARDING_TUPLE ? hlo_sharding_leaf(&s, i) : &s;
      if (st == HLO_OK) st = assemble_leaf(ctx, ls, parts, R, P, i, &el[i]);
      for (int64_t d = 0; d < ndev; d++) { hlo_buffer_free(parts[d]); parts[d] = NULL; }
    }
    if (st == HLO_OK) st = hlo_buffer_new_tuple(ctx, el, n, out);
    for (int i = 0; el && i < n; i++) hlo_buffer_free(el[i]);
    free(parts);
  }
  (void)leaf_count;
  hlc_arena_free(&arena);
  return st;
}

/* The sharding of an array parameter whose shards are to be assembled
 * (hlo_assemble_param, hlo_load_partitioned_param): HLO_OK, or an error
 * for a tuple parameter or a sharding that does not parse. */
static HloStatus param_sharding(HloCtx *ctx, const HloModule *m, const HloInstr *prm, HloSharding *s) {
  if (prm->shape.dtype == HLO_TUPLE)
    return hli_api_fail(ctx, HLO_UNSUPPORTED, "not supported: assembling tuple parameter %s from "
                        "its shards", prm->name);
  return sharding_of(ctx, m, prm, s) ? HLO_UNSUPPORTED : HLO_OK;
}

HloStatus hlo_assemble_param(HloCtx *ctx, const HloModule *m, int index,
                             HloBuffer *const *dev, int R, int P, HloBuffer **out) {
  if (!ctx || !m || !dev || !out || index < 0 || index >= m->entry->nparams || R < 1 || P < 1)
    return HLO_INVALID_ARGUMENT;
  *out = NULL;
  const HloInstr *prm = m->entry->params[index];
  HloSharding s;
  HloStatus pst = param_sharding(ctx, m, prm, &s);
  if (pst != HLO_OK) return pst;
  if (hlo_sharding_is_replicated(&s))   /* say which parameter, in the inputs' words */
    for (int64_t d = 1; d < (int64_t)R * P; d++)
      if (!same_bits(dev[0], dev[d])) {
        return hli_api_fail(ctx, HLO_TYPE_MISMATCH, "parameter %s is replicated (it has no tiled "
                            "sharding), but devices 0 and %lld hold different values of it",
                            prm->name, (long long)d);
      }
  HloStatus st = assemble_leaf(ctx, s.kind == HLO_SHARDING_TUPLE ? hlo_sharding_leaf(&s, 0) : &s, dev, R, P, -1, out);
  if (st == HLO_OK && !hlp_shape_compatible(&prm->shape, (*out)->v->shape)) {
    st = hli_api_fail(ctx, HLO_TYPE_MISMATCH, "parameter %s: its shards assemble to another shape "
                      "than its own", prm->name);
    hlo_buffer_free(*out);
    *out = NULL;
  }
  return st;
}

HloStatus hlo_load_partitioned_param(HloCtx *ctx, const HloModule *m, int index, const char *path,
                                     int P, HloBuffer **out) {
  if (!ctx || !m || !path || !out || index < 0 || index >= m->entry->nparams || P < 1)
    return HLO_INVALID_ARGUMENT;
  *out = NULL;
  const HloInstr *prm = m->entry->params[index];
  int np = m->entry->nparams;
  HloSharding sh;
  HloStatus pst = param_sharding(ctx, m, prm, &sh);
  if (pst != HLO_OK) return pst;
  const HloSharding *s = sh.kind == HLO_SHARDING_TUPLE ? hlo_sharding_leaf(&sh, 0) : &sh;
  bool tiled = s && s->kind == HLO_SHARDING_TILED;
  int64_t src = s && s->kind == HLO_SHARDING_MAXIMAL ? s->device : 0;   /* untiled: whose shard is the value */
  HloStatus st = HLO_OK;
  /* first: partition 0's shard, kept only when it is the value (untiled);
   * its shape (fs) is what every shard must have. */
  HloBuffer *first = NULL, *glob = NULL;
  HloShape fs = {0};
  int64_t fdims[64], gd[64], idx[64], off[64];
  char fs_text[256] = "";
  size_t es = 0;
  if (!tiled && (src < 0 || src >= P))
    st = hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "parameter %s: its sharding names device %lld, "
                      "but there are %d partitions", prm->name, (long long)src, P);
  for (int p = 0; p < P && st == HLO_OK; p++) {
    HloBuffer *b;
    int n;
    if ((st = hli_load_partition_argument(ctx, path, p, index, &b, &n)) != HLO_OK) break;
    if (n != np) {
      hlo_buffer_free(b);
      st = hli_api_fail(ctx, HLO_TYPE_MISMATCH, "%s: partition %d holds %d argument%s, the module's "
                        "ENTRY takes %d parameter%s", path, p, n, n == 1 ? "" : "s", np,
                        np == 1 ? "" : "s");
      break;
    }
    if (p == 0) {
      first = b;
      if (b->v->shape->rank > 64) {
        st = hli_api_fail(ctx, HLO_UNSUPPORTED, "parameter %s: a shard of rank %d", prm->name,
                          (int)b->v->shape->rank);
        break;
      }
      fs = *b->v->shape;
      memcpy(fdims, fs.dims, (size_t)fs.rank * sizeof *fdims);
      fs.dims = fdims;
      fs.minor_to_major = NULL;
      fs.tuple = NULL;
      fs.ntuple = 0;
      shape_text(&fs, fs_text, sizeof fs_text);
    } else if (!hlp_shape_compatible(&fs, b->v->shape) || fs.dtype != b->v->shape->dtype) {
      /* All shards alike: a tile is copied with partition 0's dims. */
      char c[256];
      shape_text(b->v->shape, c, sizeof c);
      hlo_buffer_free(b);
      st = hli_api_fail(ctx, HLO_TYPE_MISMATCH, "parameter %s: partition %d's shard is %s, but "
                        "partition 0's is %s", prm->name, p, c, fs_text);
      break;
    }
    int32_t rank = fs.rank;
    const int64_t *ld = fdims;
    if (!tiled) {   /* replicated (or manual): every shard the same; maximal: device src's */
      if (s && s->kind == HLO_SHARDING_MAXIMAL) {
        if (p == src) glob = b;   /* kept (if it is first, first is not freed) */
        else if (b != first) hlo_buffer_free(b);
        continue;
      }
      if (b != first) {
        bool same = first && memcmp(hlo_buffer_data(first), hlo_buffer_data(b), hlo_buffer_nbytes(b)) == 0;
        hlo_buffer_free(b);
        if (!same)
          st = hli_api_fail(ctx, HLO_TYPE_MISMATCH, "parameter %s is replicated (it has no tiled "
                            "sharding), but devices 0 and %d hold different values of it",
                            prm->name, p);
      }
      continue;
    }
    if (b == first) {   /* the global buffer, from partition 0's shard's dims */
      if (rank > 64 || s->ndims - s->nsub > rank) {
        st = hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "parameter %s: its sharding has %d tile "
                          "dimensions for a shard of rank %d", prm->name, s->ndims - s->nsub, rank);
        break;
      }
      for (int32_t j = 0; j < rank; j++) gd[j] = ld[j] * hlo_sharding_tiles(s, j);
      if ((st = hlo_buffer_new_array(ctx, hlo_buffer_type(first), gd, rank, NULL, &glob)) != HLO_OK) {
        hlo_buffer_free(b);
        first = NULL;
        break;
      }
      int64_t ne = hlo_buffer_num_elements(first);
      es = hlo_buffer_nbytes(first) / (size_t)(ne ? ne : 1);
    }
    if (hlo_sharding_tile_of(s, p, rank, idx) == 0) {
      /* The tile's first holder places it; a later one must agree. */
      int64_t holder = -1;
      for (int64_t e = 0; e < p && holder < 0; e++) {
        int64_t other[64];
        if (hlo_sharding_tile_of(s, e, rank, other) != 0) continue;
        bool same = true;
        for (int32_t j = 0; j < rank; j++) same &= other[j] == idx[j];
        if (same) holder = e;
      }
      for (int32_t j = 0; j < rank; j++) off[j] = idx[j] * ld[j];
      int64_t zero[64] = {0};
      if (holder < 0) {
        hlc_copy_block((char *)hlo_buffer_data(glob), gd, off, hlo_buffer_data(b), ld, zero, ld, rank, es);
      } else if (!hlc_same_block(hlo_buffer_data(glob), gd, off, hlo_buffer_data(b), ld, zero, ld, rank, es)) {
        st = hli_api_fail(ctx, HLO_TYPE_MISMATCH, "parameter %s: partitions %lld and %d hold the same "
                          "tile by its sharding, but different values", prm->name, (long long)holder, p);
      }
    }
    hlo_buffer_free(b);   /* placed: partition 0's too */
    if (b == first) first = NULL;
  }
  if (st == HLO_OK && !tiled && !(s && s->kind == HLO_SHARDING_MAXIMAL)) glob = first;   /* replicated: the value */
  if (first != glob) hlo_buffer_free(first);
  if (st == HLO_OK && glob && !hlp_shape_compatible(&prm->shape, glob->v->shape))
    st = hli_api_fail(ctx, HLO_TYPE_MISMATCH, "parameter %s: its shards assemble to another shape "
                      "than its own", prm->name);
  if (st != HLO_OK) { hlo_buffer_free(glob); return st; }
  *out = glob;
  return HLO_OK;
}

/* ---- global inputs ------------------------------------------------------------------ */

/* The global shape of parameter index into g (dims in gdims[64]). */
static int global_shape(HloCtx *ctx, const HloModule *m, int index, HloShape *g, int64_t *gdims) {
  const HloInstr *prm = m->entry->params[index];
  *g = prm->shape;
  if (g->dtype == HLO_TUPLE || g->rank > 64) return 0;
  HloSharding s;
  if (sharding_of(ctx, m, prm, &s)) return -1;
  for (int32_t j = 0; j < g->rank; j++) gdims[j] = g->dims[j] * hlo_sharding_tiles(&s, j);
  g->dims = gdims;
  g->minor_to_major = NULL;
  return 0;
}

static void drop_diags(HlcDiags *d, int keep) {
  while (d->n > keep) {
    HlcDiag *g = &d->v[--d->n];
    if (g->sev == HLC_ERROR) d->nerrors--;
    if (g->sev == HLC_WARNING) d->nwarnings--;
    free(g->text);
    free(g->message);
  }
}

/* The global input of parameter index from path, or from its member (a
 * .npz holding every parameter) when member is not NULL. */
static HloStatus load_global(HloCtx *ctx, const HloModule *m, int index, const char *path,
                             const char *member, HloBuffer **out) {
  if (!ctx || !m || !path || !out || index < 0 || index >= m->entry->nparams) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  const HloInstr *prm = m->entry->params[index];
  HloShape g;
  int64_t gdims[64];
  if (global_shape(ctx, m, index, &g, gdims)) return HLO_INVALID_ARGUMENT;
  char what[1024];
  if (member) snprintf(what, sizeof what, "input %d (%s[%s], parameter %s)", index, path, member, prm->name);
  else snprintf(what, sizeof what, "input %d (%s, parameter %s)", index, path, prm->name);
  int before = ctx->diags.n;
  HloStatus st = hli_load_shaped(ctx, &prm->shape, path, member, what, out);
  if (st != HLO_TYPE_MISMATCH || hlp_shape_compatible(&g, &prm->shape)) return st;
  drop_diags(&ctx->diags, before);   /* not the parameter's own shape: its global one? */
  st = hli_load_shaped(ctx, &g, path, member, what, out);
  if (st != HLO_TYPE_MISMATCH) return st;
  drop_diags(&ctx->diags, before);
  char a[512], b[512];
  shape_text(&prm->shape, a, sizeof a);
  shape_text(&g, b, sizeof b);
  return hli_api_fail(ctx, HLO_TYPE_MISMATCH, "%s: the parameter takes its global shape %s "
                      "(split by its sharding) or %s (the same value on every device); the "
                      "input is neither", what, b, a);
}

HloStatus hlo_load_param_global(HloCtx *ctx, const HloModule *m, int index, const char *path,
                                HloBuffer **out) {
  return load_global(ctx, m, index, path, NULL, out);
}

HloStatus hlo_load_param_global_member(HloCtx *ctx, const HloModule *m, int index,
                                       const char *path, const char *member, HloBuffer **out) {
  if (!member) return HLO_INVALID_ARGUMENT;
  return load_global(ctx, m, index, path, member, out);
}

HloStatus hlo_npz_count(HloCtx *ctx, const char *path, int *n) {
  if (!ctx || !path || !n) return HLO_INVALID_ARGUMENT;
  *n = 0;
  HliFile f;
  HloStatus st = hli_file_open(ctx, path, &f);
  if (st != HLO_OK) return st;
  HliNpzMember *mem;
  int32_t nm;
  if (hli_npz_open(f.data, f.len, path, &ctx->diags, &mem, &nm) != 0)
    return hli_file_done(ctx, &f, path, HLO_IO_ERROR);
  hli_npz_members_free(mem, nm);
  if ((st = hli_file_done(ctx, &f, path, HLO_OK)) == HLO_OK) *n = nm;
  return st;
}

HloStatus hlo_random_param_global(HloCtx *ctx, const HloModule *m, int index, uint64_t seed,
                                  HloBuffer **out) {
  if (!ctx || !m || !out || index < 0 || index >= m->entry->nparams) return HLO_INVALID_ARGUMENT;
  HloShape g;
  int64_t gdims[64];
  if (global_shape(ctx, m, index, &g, gdims)) return HLO_INVALID_ARGUMENT;
  return hli_random_shaped(ctx, m, index, &g, seed, out);
}

HloStatus hlo_load_param_member(HloCtx *ctx, const HloModule *m, int index, const char *path,
                                const char *member, HloBuffer **out) {
  if (!ctx || !m || !path || !member || !out || index < 0 || index >= m->entry->nparams)
    return HLO_INVALID_ARGUMENT;
  const HloInstr *prm = m->entry->params[index];
  char what[1024];
  snprintf(what, sizeof what, "input %d (%s[%s], parameter %s)", index, path, member, prm->name);
  return hli_load_shaped(ctx, &prm->shape, path, member, what, out);
}
