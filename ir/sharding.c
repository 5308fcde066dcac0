/* sharding.c: the one parser of HLO shardings (sharding.h), their printer
 * and the tile arithmetic the run path splits and assembles values by.
 *
 * A tiled sharding of an array of rank r has r tile dimensions, then nsub
 * subgroup dimensions. Partition p's tile is its position in the tile
 * assignment along the first r dimensions; devices that differ only in
 * subgroup dimensions hold the same tile. */
#include "ir/sharding.h"
#include "ir/print.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_TUPLE_DEPTH = 64 };

typedef struct P {
  HlcArena *arena;
  const char *start, *s;
  char *why;
  size_t cap;
  int err;
} P;

static void skip(P *p) { while (isspace((unsigned char)*p->s)) p->s++; }

static int bad(P *p, const char *what) {
  if (!p->err && p->cap) snprintf(p->why, p->cap, "bad sharding: expected %s at '%.20s'", what, p->s);
  p->err = 1;
  return -1;
}

/* The word or punctuation w next (a word not followed by more word). */
static bool eat(P *p, const char *w) {
  skip(p);
  size_t n = strlen(w);
  if (strncmp(p->s, w, n) != 0) return false;
  if (isalnum((unsigned char)w[n - 1]) && (isalnum((unsigned char)p->s[n]) || p->s[n] == '_')) return false;
  p->s += n;
  return true;
}

static int num(P *p, int64_t *v) {
  skip(p);
  if (!isdigit((unsigned char)*p->s)) return bad(p, "a number");
  int64_t x = 0;
  for (; isdigit((unsigned char)*p->s); p->s++) {
    if (x > (INT64_MAX - 9) / 10) return bad(p, "a smaller number");
    x = x * 10 + (*p->s - '0');
  }
  *v = x;
  return 0;
}

/* [a,b,...] into v (at most HLO_SHARDING_MAX_DIMS). */
static int list(P *p, int64_t *v, int32_t *n) {
  *n = 0;
  if (!eat(p, "[")) return bad(p, "'['");
  if (eat(p, "]")) return 0;
  do {
    if (*n >= HLO_SHARDING_MAX_DIMS) return bad(p, "fewer dimensions");
    if (num(p, &v[(*n)++])) return -1;
  } while (eat(p, ","));
  return eat(p, "]") ? 0 : bad(p, "']'");
}

/* A balanced {...} or [...] (quoted strings may hold brackets); its text. */
static int balanced(P *p, char open, char close, const char **text, size_t *len) {
  skip(p);
  if (*p->s != open) return bad(p, open == '{' ? "'{'" : "'['");
  const char *from = p->s;
  int depth = 0;
  do {
    if (*p->s == '"') {
      for (p->s++; *p->s && *p->s != '"'; p->s++) if (*p->s == '\\' && p->s[1]) p->s++;
      if (!*p->s) break;
    } else if (*p->s == open) {
      depth++;
    } else if (*p->s == close) {
      depth--;
    }
    p->s++;
  } while (*p->s && depth);
  if (depth) return bad(p, open == '{' ? "'}'" : "']'");
  *text = from;
  *len = (size_t)(p->s - from);
  return 0;
}

/* The iota tile assignment <=[dims]T(perm): arange reshaped to dims,
 * transposed by perm, flattened. */
static int iota(P *p, HloSharding *s, int64_t total) {
  int64_t *rd = s->iota_dims, perm[HLO_SHARDING_MAX_DIMS];
  int32_t nr, np = 0;
  if (list(p, rd, &nr)) return -1;
  if (nr == 0) return bad(p, "iota dimensions");
  s->niota = nr;
  if (eat(p, "T")) {
    skip(p);
    if (*p->s != '(') return bad(p, "'('");
    p->s++;
    do {
      if (np >= HLO_SHARDING_MAX_DIMS) return bad(p, "fewer dimensions");
      if (num(p, &perm[np++])) return -1;
    } while (eat(p, ","));
    if (!eat(p, ")")) return bad(p, "')'");
    if (np != nr) return bad(p, "T(...) with one entry per reshape dimension");
    s->iota_transposed = true;
  } else {
    for (int32_t i = 0; i < nr; i++) perm[i] = i;
  }
  int64_t prod = 1;
  for (int32_t i = 0; i < nr; i++) {
    if (rd[i] < 1 || rd[i] > HLO_SHARDING_MAX_TILES) return bad(p, "an iota whose size is the tile count");
    prod *= rd[i];
    if (prod > total) return bad(p, "an iota whose size is the tile count");
  }
  if (prod != total) return bad(p, "an iota whose size is the tile count");
  uint32_t seen = 0;
  for (int32_t i = 0; i < nr; i++) {
    if (perm[i] < 0 || perm[i] >= nr || (seen >> perm[i] & 1)) return bad(p, "a permutation in T(...)");
    seen |= 1u << perm[i];
    s->iota_perm[i] = (int32_t)perm[i];
  }
  /* Element k of the transposed array: its index in the transposed
   * dimensions, mapped back to the source index, whose row-major offset is
   * the device. */
  int64_t tdims[HLO_SHARDING_MAX_DIMS], sstride[HLO_SHARDING_MAX_DIMS];
  for (int32_t i = 0; i < nr; i++) tdims[i] = rd[perm[i]];
  int64_t st = 1;
  for (int32_t i = nr - 1; i >= 0; i--) { sstride[i] = st; st *= rd[i]; }
  for (int64_t k = 0; k < total; k++) {
    int64_t rem = k, v = 0;
    for (int32_t i = nr - 1; i >= 0; i--) {
      v += rem % tdims[i] * sstride[perm[i]];
      rem /= tdims[i];
    }
    s->devices[k] = v;
  }
  return 0;
}

static int subgroup_kind(P *p, HloShardingKind *k) {
  if (eat(p, "replicated")) *k = HLO_SHARDING_REPLICATED;
  else if (eat(p, "manual")) *k = HLO_SHARDING_MANUAL;
  else if (eat(p, "unreduced")) *k = HLO_SHARDING_UNREDUCED;
  else if (eat(p, "unknown")) *k = HLO_SHARDING_UNKNOWN;
  else return bad(p, "replicated, manual, unreduced or unknown");
  return 0;
}

static int tiled(P *p, HloSharding *s) {
  s->kind = HLO_SHARDING_TILED;
  if (!eat(p, "=") || list(p, s->dims, &s->ndims) || s->ndims == 0) return bad(p, "devices=[...]");
  int64_t total = 1;
  for (int32_t i = 0; i < s->ndims; i++) {
    if (s->dims[i] < 1 || s->dims[i] > 65536) return bad(p, "tile counts from 1 to 65536");
    total *= s->dims[i];
    if (total > HLO_SHARDING_MAX_TILES) return bad(p, "at most 2^20 tiles");
  }
  s->devices = hlc_arena_alloc(p->arena, (size_t)total * sizeof *s->devices);
  if (!s->devices) return bad(p, "memory");
  if (eat(p, "<=")) return iota(p, s, total);
  for (int64_t k = 0; k < total; k++) {
    if (k && !eat(p, ",")) return bad(p, "one device per tile");
    if (num(p, &s->devices[k])) return -1;
  }
  /* Each device once (an iota is a permutation by construction). */
  if (total <= 4096) {
    for (int64_t k = 0; k < total; k++)
      for (int64_t j = 0; j < k; j++)
        if (s->devices[j] == s->devices[k]) return bad(p, "each device once in the tile assignment");
  }
  return 0;
}

/* Options after the kind, in any order, separated by blanks or commas. */
static int options(P *p, HloSharding *s) {
  for (;;) {
    if (eat(p, "last_tile_dim_replicate")) {
      if (s->kind != HLO_SHARDING_TILED) return bad(p, "last_tile_dim_replicate only after devices=");
      s->nsub = 1;
      s->subgroup[0] = HLO_SHARDING_REPLICATED;
      s->last_tile_dim_replicate = true;
    } else if (eat(p, "last_tile_dims")) {
      if (s->kind != HLO_SHARDING_TILED) return bad(p, "last_tile_dims only after devices=");
      if (!eat(p, "=") || !eat(p, "{")) return bad(p, "last_tile_dims={...}");
      s->nsub = 0;
      s->last_tile_dim_replicate = false;
      do {
        if (s->nsub >= HLO_SHARDING_MAX_DIMS) return bad(p, "fewer subgroup dimensions");
        if (subgroup_kind(p, &s->subgroup[s->nsub++])) return -1;
      } while (eat(p, ","));
      if (!eat(p, "}")) return bad(p, "'}'");
    } else if (eat(p, "metadata")) {
      const char *t;
      size_t n;
      if (!eat(p, "=") || balanced(p, '{', '}', &t, &n)) return bad(p, "metadata={...}");
      s->metadata = hlc_arena_strndup(p->arena, t, n);
      s->metadata_len = n;
      if (!s->metadata) return bad(p, "memory");
    } else if (eat(p, "shard_as") || eat(p, "shard_like")) {
      s->group = p->s[-1] == 's' ? HLO_SHARD_AS : HLO_SHARD_LIKE;
      if (num(p, &s->group_id)) return -1;
    } else if (!eat(p, ",")) {
      break;
    }
  }
  if (s->kind == HLO_SHARDING_TILED && s->nsub > s->ndims)
    return bad(p, "fewer subgroup dimensions");
  return 0;
}

static int one(P *p, HloSharding *s, int depth);

/* {{...}, {...}}: read after the outer '{'. */
static int tuple(P *p, HloSharding *s, int depth) {
  s->kind = HLO_SHARDING_TUPLE;
  if (depth >= MAX_TUPLE_DEPTH) return bad(p, "tuples nested less deeply");
  int32_t cap = 4, n = 0;
  HloSharding *tmp = calloc((size_t)cap, sizeof *tmp);
  if (!tmp) return bad(p, "memory");
  int rc = 0;
  do {
    if (n == cap) {
      HloSharding *t = realloc(tmp, (size_t)(cap *= 2) * sizeof *t);
      if (!t) { rc = bad(p, "memory"); break; }
      tmp = t;
    }
    memset(&tmp[n], 0, sizeof tmp[n]);
    if ((rc = one(p, &tmp[n++], depth + 1)) != 0) break;
  } while (eat(p, ","));
  if (rc == 0) {
    s->tuple = hlc_arena_memdup(p->arena, tmp, (size_t)n * sizeof *tmp);
    s->ntuple = n;
    if (!s->tuple) rc = bad(p, "memory");
  }
  free(tmp);
  return rc;
}

static int one(P *p, HloSharding *s, int depth) {
  memset(s, 0, sizeof *s);
  if (!eat(p, "{")) return bad(p, "'{'");
  skip(p);
  if (*p->s == '{') {
    if (tuple(p, s, depth)) return -1;
  } else if (*p->s == '}') {
    s->kind = HLO_SHARDING_TUPLE;   /* {} : the sharding of an empty tuple */
  } else if (strncmp(p->s, "mesh", 4) == 0 || strncmp(p->s, "maximal_mesh", 12) == 0) {
    /* Named-mesh forms are kept as written, to the closing brace. */
    const char *from = p->s;
    int depth = 0;
    for (; *p->s && (depth || *p->s != '}'); p->s++) {
      if (*p->s == '"' || *p->s == '\'') {
        char q = *p->s;
        for (p->s++; *p->s && *p->s != q; p->s++) if (*p->s == '\\' && p->s[1]) p->s++;
        if (!*p->s) break;
      } else if (strchr("{[(", *p->s)) {
        depth++;
      } else if (strchr("}])", *p->s)) {
        depth--;
      }
    }
    while (p->s > from && isspace((unsigned char)p->s[-1])) p->s--;
    s->kind = HLO_SHARDING_MESH;
    s->mesh_len = (size_t)(p->s - from);
    s->mesh = hlc_arena_strndup(p->arena, from, s->mesh_len);
    if (!s->mesh) return bad(p, "memory");
  } else {
    if (eat(p, "replicated")) s->kind = HLO_SHARDING_REPLICATED;
    else if (eat(p, "manual")) s->kind = HLO_SHARDING_MANUAL;
    else if (eat(p, "unknown")) s->kind = HLO_SHARDING_UNKNOWN;
    else if (eat(p, "unreduced")) s->kind = HLO_SHARDING_UNREDUCED;
    else if (eat(p, "maximal")) {
      s->kind = HLO_SHARDING_MAXIMAL;
      if (!eat(p, "device") || !eat(p, "=") || num(p, &s->device)) return bad(p, "device=N");
    } else if (eat(p, "devices")) {
      if (tiled(p, s)) return -1;
    } else {
      return bad(p, "replicated, manual, unknown, unreduced, maximal or devices=");
    }
    if (options(p, s)) return -1;
  }
  return eat(p, "}") ? 0 : bad(p, "'}'");
}

long hlo_sharding_parse_prefix(HlcArena *arena, const char *text, HloSharding *out, char *why,
                               size_t cap) {
  P p = {arena, text, text, why, cap, 0};
  if (cap) why[0] = 0;
  if (one(&p, out, 0) != 0) {
    memset(out, 0, sizeof *out);
    return -1;
  }
  return (long)(p.s - text);
}

int hlo_sharding_parse(HlcArena *arena, const char *text, HloSharding *out, char *why, size_t cap) {
  long n = hlo_sharding_parse_prefix(arena, text, out, why, cap);
  if (n < 0) return -1;
  P p = {arena, text, text + n, why, cap, 0};
  skip(&p);
  if (*p.s) {
    memset(out, 0, sizeof *out);
    return bad(&p, "the end");
  }
  return 0;
}

/* ---- printing ------------------------------------------------------------------ */

static const char *kind_word(HloShardingKind k) {
  switch (k) {
  case HLO_SHARDING_REPLICATED: return "replicated";
  case HLO_SHARDING_MANUAL: return "manual";
  case HLO_SHARDING_UNKNOWN: return "unknown";
  case HLO_SHARDING_UNREDUCED: return "unreduced";
  default: return "?";
  }
}

static void print_body(HlcText *b, const HloSharding *s) {
  switch (s->kind) {
  case HLO_SHARDING_TUPLE:
    for (int32_t i = 0; i < s->ntuple; i++) {
      if (i) hlc_text_puts(b, ", ");
      hlp_print_sharding(b, &s->tuple[i]);
    }
    return;
  case HLO_SHARDING_MESH: hlc_text_put(b, s->mesh, s->mesh_len); return;
  case HLO_SHARDING_MAXIMAL: hlc_text_printf(b, "maximal device=%lld", (long long)s->device); break;
  case HLO_SHARDING_TILED: {
    hlc_text_puts(b, "devices=[");
    int64_t total = 1;
    for (int32_t i = 0; i < s->ndims; i++) {
      hlc_text_printf(b, i ? ",%lld" : "%lld", (long long)s->dims[i]);
      total *= s->dims[i];
    }
    hlc_text_puts(b, "]");
    if (s->niota) {
      hlc_text_puts(b, "<=[");
      for (int32_t i = 0; i < s->niota; i++) hlc_text_printf(b, i ? ",%lld" : "%lld", (long long)s->iota_dims[i]);
      hlc_text_puts(b, "]");
      if (s->iota_transposed) {
        hlc_text_puts(b, "T(");
        for (int32_t i = 0; i < s->niota; i++) hlc_text_printf(b, i ? ",%d" : "%d", (int)s->iota_perm[i]);
        hlc_text_puts(b, ")");
      }
    } else {
      for (int64_t k = 0; k < total; k++) hlc_text_printf(b, k ? ",%lld" : "%lld", (long long)s->devices[k]);
    }
    if (s->last_tile_dim_replicate) {
      hlc_text_puts(b, " last_tile_dim_replicate");
    } else if (s->nsub) {
      hlc_text_puts(b, " last_tile_dims={");
      for (int32_t i = 0; i < s->nsub; i++) {
        if (i) hlc_text_puts(b, ", ");
        hlc_text_puts(b, kind_word(s->subgroup[i]));
      }
      hlc_text_puts(b, "}");
    }
    break;
  }
  default: hlc_text_puts(b, kind_word(s->kind)); break;
  }
  if (s->group != HLO_SHARD_GROUP_NONE)
    hlc_text_printf(b, " %s %lld", s->group == HLO_SHARD_AS ? "shard_as" : "shard_like", (long long)s->group_id);
  if (s->metadata) {
    hlc_text_puts(b, " metadata=");
    hlc_text_put(b, s->metadata, s->metadata_len);
  }
}

void hlp_print_sharding(HlcText *b, const HloSharding *s) {
  hlc_text_puts(b, "{");
  print_body(b, s);
  hlc_text_puts(b, "}");
}

/* ---- tiles ----------------------------------------------------------------------- */

bool hlo_sharding_is_replicated(const HloSharding *s) {
  return s->kind == HLO_SHARDING_REPLICATED || s->kind == HLO_SHARDING_UNKNOWN;
}

const HloSharding *hlo_sharding_leaf(const HloSharding *s, int32_t k) {
  if (s->kind != HLO_SHARDING_TUPLE) return s;
  return k >= 0 && k < s->ntuple ? &s->tuple[k] : NULL;
}

int64_t hlo_sharding_tiles(const HloSharding *s, int32_t j) {
  if (!s || s->kind != HLO_SHARDING_TILED || j >= s->ndims - s->nsub) return 1;
  return s->dims[j];
}

int hlo_sharding_tile_of(const HloSharding *s, int64_t p, int32_t rank, int64_t *index) {
  for (int32_t j = 0; j < rank; j++) index[j] = 0;
  if (!s || s->kind != HLO_SHARDING_TILED) return 0;
  int64_t total = 1;
  for (int32_t i = 0; i < s->ndims; i++) total *= s->dims[i];
  for (int64_t k = 0; k < total; k++) {
    if (s->devices[k] != p) continue;
    int64_t rem = k;
    for (int32_t i = s->ndims - 1; i >= 0; i--) {
      if (i < rank && i < s->ndims - s->nsub) index[i] = rem % s->dims[i];
      rem /= s->dims[i];
    }
    return 0;
  }
  return -1;
}
