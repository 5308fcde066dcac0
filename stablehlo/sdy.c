/* sdy.c: Shardy's meshes and tensor shardings as HLO shardings.
 *
 * A mesh `sdy.mesh @m = <["x"=2, "y"=4]>` numbers its devices row-major over
 * its axes (x major). A sharding `#sdy.sharding<@m, [{"y"}, {}]>` splits
 * each tensor dimension over the axes listed for it, in order (major
 * first); the axes no dimension uses replicate the tiles. As HLO (the
 * form XLA's Shardy export gives): tile dimensions the products of their
 * axes' sizes, the unused axes' product as last_tile_dim_replicate, and
 * the tile assignment the mesh's device array transposed so that its axes
 * come in that order: devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate.
 * Priorities (p0) and open dimensions (?) only guide Shardy's propagation;
 * they do not change the sharding. Sub-axes ("x":(1)2), meshes with
 * device_ids and inline meshes are errors naming them.
 * Not here: where shardings attach (module.c, ops.c). */
#include <stdlib.h>
#include <string.h>
#include "stablehlo/lower.h"
#include "stablehlo/mlir.h"

enum { SDY_MAX_AXES = 16 };

struct ShMesh {
  const char *name;        /* without '@' */
  size_t nlen;
  int naxes;
  const char *axis[SDY_MAX_AXES];
  size_t alen[SDY_MAX_AXES];
  int64_t size[SDY_MAX_AXES];
};

/* An axis name token's text without its quotes. */
static const char *quoted_name(Lower *C, const ShNode *k, size_t *n) {
  const char *s = sh_text(C, k, n);
  if (*n >= 2 && s[0] == '"' && s[*n - 1] == '"') {
    *n -= 2;
    return s + 1;
  }
  return s;
}

/* The mesh op: "sdy.mesh @name = <[\"x\"=2, ...]>". */
void sh_sdy_mesh(Lower *C, ShNode *op) {
  ShNode *sym = NULL, *angle = NULL;
  for (ShNode *k = op->kids; k; k = k->next) {
    if (sh_is(C, k, SH_SYMBOL, NULL) && !sym) sym = k;
    else if (k->kind == SHN_ANGLE && !angle) angle = k;
  }
  if (!sym || !angle) sh_fail(C, op, "sdy.mesh: expected @name = <[\"axis\"=size, ...]>");
  ShMesh *m = hlc_arena_alloc(C->arena, sizeof *m);
  memset(m, 0, sizeof *m);
  size_t n;
  const char *s = sh_text(C, sym, &n);
  m->name = s + 1;
  m->nlen = n - 1;
  ShNode *axes = NULL;
  for (ShNode *k = angle->kids; k; k = k->next) {
    if (k->kind == SHN_BRACKET && !axes) axes = k;
    else if (sh_is(C, k, SH_BAREID, "device_ids") || sh_is(C, k, SH_ATTRKEY, "device_ids"))
      sh_fail(C, k, "sdy.mesh @%.*s: device_ids (a mesh not numbered row-major) is not supported", (int)m->nlen,
              m->name);
  }
  if (!axes) sh_fail(C, angle, "sdy.mesh @%.*s: expected a list of axes [\"x\"=2, ...]", (int)m->nlen, m->name);
  for (ShNode *k = axes->kids; k; k = k->next) {
    if (sh_is(C, k, SH_COMMA, NULL)) continue;
    /* "x"=2: the lexer reads a quoted name before '=' as a key */
    if (!(sh_is(C, k, SH_STRING, NULL) || sh_is(C, k, SH_ATTRKEY, NULL)) || !k->next || !sh_is(C, k->next, SH_EQ, NULL) || !k->next->next ||
        !sh_is(C, k->next->next, SH_INT, NULL))
      sh_fail(C, k, "sdy.mesh @%.*s: expected \"axis\"=size", (int)m->nlen, m->name);
    if (m->naxes == SDY_MAX_AXES) sh_fail(C, k, "sdy.mesh: more than %d axes", SDY_MAX_AXES);
    int64_t size = strtoll(C->src + k->next->next->tok.off, NULL, 10);
    if (size < 1) sh_fail(C, k->next->next, "sdy.mesh: an axis size must be at least 1");
    m->axis[m->naxes] = quoted_name(C, k, &m->alen[m->naxes]);
    m->size[m->naxes++] = size;
    k = k->next->next;
  }
  for (int i = 0; i < C->nmeshes; i++)
    if (C->meshes[i]->nlen == m->nlen && memcmp(C->meshes[i]->name, m->name, m->nlen) == 0)
      sh_fail(C, sym, "sdy.mesh @%.*s is defined twice", (int)m->nlen, m->name);
  if (C->nmeshes == C->capmeshes) {
    int cap = C->capmeshes ? 2 * C->capmeshes : 4;
    ShMesh **grown = hlc_arena_alloc(C->arena, sizeof *grown * (size_t)cap);
    if (C->nmeshes) memcpy(grown, C->meshes, sizeof *grown * (size_t)C->nmeshes);
    C->meshes = grown;
    C->capmeshes = cap;
  }
  C->meshes[C->nmeshes++] = m;
}

/* The tokens of one dimension's braces. The MLIR reader takes "{\"x\", ...}"
 * for a region whose first operation is named "x": its name and its
 * contents are the tokens. A nested group "(...)" (sub-axes) is kept as its
 * opening token. */
static int dim_tokens(const ShNode *n, ShToken *out, int max, int cnt) {
  for (const ShNode *k = n->kids; k && cnt < max; k = k->next) {
    if (k->kind == SHN_TOKEN) {
      out[cnt++] = k->tok;
    } else if (k->kind == SHN_OP) {
      out[cnt++] = k->name;
      cnt = dim_tokens(k, out, max, cnt);
    } else if (k->kind == SHN_REGION || k->kind == SHN_BLOCK || k->kind == SHN_DICT) {
      cnt = dim_tokens(k, out, max, cnt);
    } else {
      out[cnt++] = k->tok;
    }
  }
  return cnt;
}

/* One dimension's {"x", "y"} (or {?}, {"x", ?}): its axes, in order,
 * appended to perm; returns the dimension's tile count. */
static int64_t dim_axes(Lower *C, const ShMesh *m, const ShNode *dim, int *perm, int *np, bool *used) {
  ShToken t[2 * SDY_MAX_AXES + 2];
  int nt = dim_tokens(dim, t, 2 * SDY_MAX_AXES + 2, 0);
  int64_t tiles = 1;
  for (int i = 0; i < nt; i++) {
    const char *s = C->src + t[i].off;
    size_t n = t[i].len;
    if (t[i].kind == SH_COMMA || (n == 1 && *s == '?')) continue;
    if (n < 2 || s[0] != '"' || s[n - 1] != '"') sh_fail_off(C, t[i].off, "sdy.sharding: expected an axis name");
    if (i + 1 < nt && t[i + 1].kind != SH_COMMA)
      sh_fail_off(C, t[i + 1].off, "sdy.sharding: sub-axes (\"x\":(1)2) are not supported");
    int a = -1;
    for (int j = 0; j < m->naxes && a < 0; j++)
      if (m->alen[j] == n - 2 && memcmp(m->axis[j], s + 1, n - 2) == 0) a = j;
    if (a < 0)
      sh_fail_off(C, t[i].off, "sdy.sharding: mesh @%.*s has no axis %.*s", (int)m->nlen, m->name, (int)n, s);
    if (used[a]) sh_fail_off(C, t[i].off, "sdy.sharding: axis %.*s is used twice", (int)n, s);
    used[a] = true;
    perm[(*np)++] = a;
    tiles *= m->size[a];
  }
  return tiles;
}

/* "<@mesh, [dims], replicated={...}>" (the ANGLE of #sdy.sharding<...>)
 * for a value of type t, as an HLO sharding "{...}". */
const char *sh_sdy_sharding(Lower *C, const ShNode *angle, const ShType *t) {
  const ShNode *sym = angle->kids;
  if (!sym || !sh_is(C, sym, SH_SYMBOL, NULL))
    sh_fail(C, sym ? sym : angle, "sdy.sharding: an inline mesh is not supported (name an sdy.mesh)");
  size_t n;
  const char *name = sh_text(C, sym, &n);
  const ShMesh *m = NULL;
  for (int i = 0; i < C->nmeshes && !m; i++)
    if (C->meshes[i]->nlen == n - 1 && memcmp(C->meshes[i]->name, name + 1, n - 1) == 0) m = C->meshes[i];
  if (!m) sh_fail(C, sym, "sdy.sharding: no sdy.mesh %.*s in this module", (int)n, name);
  const ShNode *dims = sym->next && sh_is(C, sym->next, SH_COMMA, NULL) ? sym->next->next : NULL;
  if (!dims || dims->kind != SHN_BRACKET) sh_fail(C, sym, "sdy.sharding: expected [dimension shardings]");
  int rank = t->kind == SHT_TUPLE ? -1 : t->rank;
  int perm[SDY_MAX_AXES], np = 0, ndims = 0;
  bool used[SDY_MAX_AXES] = {false};
  int64_t tiles[64];
  for (ShNode *k = dims->kids; k; k = k->next) {
    if (sh_is(C, k, SH_COMMA, NULL) || sh_is(C, k, SH_BAREID, NULL)) continue;   /* p0: a priority */
    if (k->kind != SHN_DICT && k->kind != SHN_REGION) sh_fail(C, k, "sdy.sharding: expected {axes} for each dimension");
    if (ndims == 64) sh_fail(C, k, "sdy.sharding: too many dimensions");
    tiles[ndims++] = dim_axes(C, m, k, perm, &np, used);
  }
  if (rank < 0 || ndims != rank)
    sh_fail(C, dims, "sdy.sharding: %d dimension shardings for a value of rank %d", ndims, rank);
  /* replicated={...} and unreduced={...} name axes no dimension uses: they
   * are replicated like every other unused axis. */
  int64_t repl = 1;
  for (int a = 0; a < m->naxes; a++)
    if (!used[a]) {
      perm[np++] = a;
      repl *= m->size[a];
    }
  bool split = false;
  for (int d = 0; d < ndims; d++) split |= tiles[d] > 1;
  if (!split) return "{replicated}";
  HlcText s = {0};
  hlc_text_puts(&s, "{devices=[");
  for (int d = 0; d < ndims; d++) hlc_text_printf(&s, "%s%lld", d ? "," : "", (long long)tiles[d]);
  if (repl > 1) hlc_text_printf(&s, ",%lld", (long long)repl);
  bool identity = true;
  for (int i = 0; i < np; i++) identity &= perm[i] == i;
  int64_t total = 1;
  for (int a = 0; a < m->naxes; a++) total *= m->size[a];
  if (identity) {
    hlc_text_printf(&s, "]<=[%lld]", (long long)total);
  } else {
    hlc_text_puts(&s, "]<=[");
    for (int a = 0; a < m->naxes; a++) hlc_text_printf(&s, "%s%lld", a ? "," : "", (long long)m->size[a]);
    hlc_text_puts(&s, "]T(");
    for (int i = 0; i < np; i++) hlc_text_printf(&s, "%s%d", i ? "," : "", perm[i]);
    hlc_text_puts(&s, ")");
  }
  if (repl > 1) hlc_text_puts(&s, " last_tile_dim_replicate");
  hlc_text_puts(&s, "}");
  if (s.oom) sh_fail(C, angle, "out of memory");
  const char *out = sh_strdup(C, s.p, s.n);
  hlc_text_free(&s);
  return out;
}
