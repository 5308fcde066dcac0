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
 * Here: reading the dialect's tokens. The arithmetic is ir/sdy.c's, which
 * the HLO front end shares. Not here: where shardings attach (module.c,
 * ops.c, op_sharding.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/sdy.h"
#include "stablehlo/lower.h"
#include "stablehlo/mlir.h"

enum { SDY_MAX_AXES = HLP_SDY_MAX_AXES };

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

/* One dimension's {"x", "y"} (or {?}, {"x", ?}): its axes, in order, into
 * dimension d of sh. */
static void dim_axes(Lower *C, const ShMesh *m, const ShNode *dim, HlpSdySharding *sh, int d, bool *used) {
  ShToken t[2 * SDY_MAX_AXES + 2];
  int nt = dim_tokens(dim, t, 2 * SDY_MAX_AXES + 2, 0);
  sh->naxes[d] = 0;
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
    sh->axes[d][sh->naxes[d]++] = a;
  }
}

/* The mesh a sharding "<@mesh, ...>" names. */
static const ShMesh *mesh_of(Lower *C, const ShNode *angle) {
  const ShNode *sym = angle->kids;
  if (!sym || !sh_is(C, sym, SH_SYMBOL, NULL))
    sh_fail(C, sym ? sym : angle, "sdy.sharding: an inline mesh is not supported (name an sdy.mesh)");
  size_t n;
  const char *name = sh_text(C, sym, &n);
  const ShMesh *m = NULL;
  for (int i = 0; i < C->nmeshes && !m; i++)
    if (C->meshes[i]->nlen == n - 1 && memcmp(C->meshes[i]->name, name + 1, n - 1) == 0) m = C->meshes[i];
  if (!m) sh_fail(C, sym, "sdy.sharding: no sdy.mesh %.*s in this module", (int)n, name);
  return m;
}

/* "<@mesh, [dims], replicated={...}>" (the ANGLE of #sdy.sharding<...>)
 * for a value of type t, as an HLO sharding "{...}", counting only the
 * axes in `only` (all when NULL); the tile count of each dimension into
 * tiles_out (room for t's rank) when not NULL. */
static const char *sdy_sharding(Lower *C, const ShNode *angle, const ShType *t, const bool *only,
                                const bool *outer, int64_t *tiles_out) {
  const ShMesh *m = mesh_of(C, angle);
  const ShNode *sym = angle->kids;
  const ShNode *dims = sym->next && sh_is(C, sym->next, SH_COMMA, NULL) ? sym->next->next : NULL;
  if (!dims || dims->kind != SHN_BRACKET) sh_fail(C, sym, "sdy.sharding: expected [dimension shardings]");
  int rank = t->kind == SHT_TUPLE ? -1 : t->rank;
  HlpSdySharding *sh = hlc_arena_alloc(C->arena, sizeof *sh);
  sh->ndims = 0;
  bool used[SDY_MAX_AXES] = {false};
  for (ShNode *k = dims->kids; k; k = k->next) {
    if (sh_is(C, k, SH_COMMA, NULL) || sh_is(C, k, SH_BAREID, NULL)) continue;   /* p0: a priority */
    if (k->kind != SHN_DICT && k->kind != SHN_REGION) sh_fail(C, k, "sdy.sharding: expected {axes} for each dimension");
    if (sh->ndims == HLP_SDY_MAX_DIMS) sh_fail(C, k, "sdy.sharding: too many dimensions");
    dim_axes(C, m, k, sh, sh->ndims++, used);
  }
  if (rank < 0 || sh->ndims != rank)
    sh_fail(C, dims, "sdy.sharding: %d dimension shardings for a value of rank %d", sh->ndims, rank);
  HlcText s = {0};
  hlp_sdy_to_hlo(&s, m, sh, only, outer, tiles_out);
  if (s.oom) sh_fail(C, angle, "out of memory");
  const char *out = sh_strdup(C, s.p, s.n);
  hlc_text_free(&s);
  return out;
}

const char *sh_sdy_sharding(Lower *C, const ShNode *angle, const ShType *t) {
  return sdy_sharding(C, angle, t, NULL, NULL, NULL);
}

/* ---- sdy.manual_computation ------------------------------------------------------ */

enum { MC_MAX_VALUES = 256 };

/* The value after "key=" among node's kids, or NULL. */
static ShNode *keyed(Lower *C, ShNode *node, const char *key) {
  for (ShNode *k = node->kids; k; k = k->next)
    if ((sh_is(C, k, SH_ATTRKEY, key) || sh_is(C, k, SH_BAREID, key)) && k->next && sh_is(C, k->next, SH_EQ, NULL))
      return k->next->next;
  return NULL;
}

/* The shardings "[<@m, ...>, ...]" of a list: their ANGLE nodes. */
static int sharding_list(Lower *C, ShNode *list, const char *what, ShNode **out, int max) {
  if (!list || list->kind != SHN_BRACKET)
    sh_fail(C, list, "sdy.manual_computation: expected %s=[<@mesh, [...]>, ...]", what);
  int n = 0;
  for (ShNode *k = list->kids; k; k = k->next) {
    if (sh_is(C, k, SH_COMMA, NULL)) continue;
    if (k->kind != SHN_ANGLE) sh_fail(C, k, "sdy.manual_computation: %s: expected <@mesh, [...]>", what);
    if (n == max) sh_fail(C, k, "sdy.manual_computation: more than %d %s", max, what);
    out[n++] = k;
  }
  return n;
}

/* The types of a "(T, ...)" group or of one type, from *k on. */
static int type_list(Lower *C, ShNode *k, ShType **out, int max) {
  int n = 0;
  if (k && k->kind == SHN_PAREN) {
    for (ShNode *t = k->kids; t;) {
      if (sh_is(C, t, SH_COMMA, NULL)) { t = t->next; continue; }
      if (n == max) sh_fail(C, t, "sdy.manual_computation: more than %d types", max);
      out[n++] = sh_parse_type(C, &t);
    }
  } else if (k) {
    out[n++] = sh_parse_type(C, &k);
  }
  return n;
}

/* Does the shard type agree with the global one split by tiles? */
static void check_shard(Lower *C, ShNode *at, const char *what, int i, const ShType *global,
                        const ShType *shard, const int64_t *tiles) {
  bool ok = global->kind == SHT_TENSOR && shard->kind == SHT_TENSOR && global->dt == shard->dt &&
            global->rank == shard->rank;
  for (int d = 0; ok && d < global->rank; d++) ok = shard->dims[d] * tiles[d] == global->dims[d];
  if (ok) return;
  HlcText g = {0}, l = {0};
  sh_put_type(&g, global);
  sh_put_type(&l, shard);
  char msg[400];
  snprintf(msg, sizeof msg, "sdy.manual_computation: %s %d is %s globally, so its shard over the manual "
           "axes cannot be %s", what, i, g.p ? g.p : "?", l.p ? l.p : "?");
  hlc_text_free(&g);
  hlc_text_free(&l);
  sh_fail(C, at, "%s", msg);
}

void sh_sdy_manual_computation(Lower *C, ShNode *node) {
  ShNode *operands = NULL, *args = NULL, *body = NULL, *sig = NULL;
  for (ShNode *k = node->kids; k; k = k->next) {
    if (sh_is(C, k, SH_COLON, NULL)) { sig = k->next; break; }
    if (sh_is(C, k, SH_BAREID, "loc") && k->next) { k = k->next; continue; }
    if ((sh_is(C, k, SH_ATTRKEY, NULL) || sh_is(C, k, SH_BAREID, NULL)) && k->next && sh_is(C, k->next, SH_EQ, NULL)) {
      k = k->next->next;   /* its value, read by keyed() */
      if (!k) break;
      continue;
    }
    if (k->kind == SHN_PAREN && !operands) operands = k;
    else if (k->kind == SHN_PAREN && !args) args = k;
    else if (k->kind == SHN_REGION && !body) body = k;
    else if (k->kind == SHN_ANGLE || k->kind == SHN_DICT)
      sh_fail(C, k, "sdy.manual_computation: only its pretty form (in_shardings=[...] out_shardings=[...] "
              "manual_axes={...} (%%args) {body}) is supported");
  }
  if (!operands || !args || !body || !sig)
    sh_fail(C, node, "sdy.manual_computation: expected (operands) in_shardings=[...] out_shardings=[...] "
            "manual_axes={...} (%%args: types) {body} : (types) -> types");
  const char *meta = sh_node_metadata(C, node);
  /* operands, and the body's arguments (their shards) */
  Binding *in[MC_MAX_VALUES];
  int nin = 0;
  for (ShNode *k = operands->kids; k; k = k->next) {
    if (!sh_is(C, k, SH_VALUE, NULL)) continue;
    if (nin == MC_MAX_VALUES) sh_fail(C, k, "sdy.manual_computation: more than %d operands", MC_MAX_VALUES);
    in[nin++] = sh_lookup(C, k);
  }
  ShNode *names[MC_MAX_VALUES];
  ShType *shard_in[MC_MAX_VALUES];
  int nargs = sh_arg_list(C, args, names, shard_in, NULL, MC_MAX_VALUES);
  if (nargs != nin)
    sh_fail(C, args, "sdy.manual_computation: %d operands but %d region arguments", nin, nargs);
  /* the written signature: operand types, then the global result types */
  ShType *sig_in[MC_MAX_VALUES], *out_t[MC_MAX_VALUES];
  int nsig = type_list(C, sig, sig_in, MC_MAX_VALUES), nout = 0;
  ShNode *arrow = sig && sig->kind == SHN_PAREN ? sig->next : NULL;
  if (!arrow || !sh_is(C, arrow, SH_ARROW, NULL))
    sh_fail(C, sig ? sig : node, "sdy.manual_computation: expected the signature (types) -> types");
  nout = type_list(C, arrow->next, out_t, MC_MAX_VALUES);
  if (nsig != nin) sh_fail(C, sig, "sdy.manual_computation: %d operand types for %d operands", nsig, nin);
  for (int i = 0; i < nin; i++)
    if (!sh_type_eq(sig_in[i], in[i]->type))
      sh_fail(C, sig, "sdy.manual_computation: operand %d's type is not the one written", i);
  if (sh_result_count(C, node) != nout)
    sh_fail(C, node, "sdy.manual_computation: %d results named but %d result types", sh_result_count(C, node), nout);
  /* shardings, and the manual axes they are counted over */
  ShNode *ins_s[MC_MAX_VALUES], *outs_s[MC_MAX_VALUES];
  int nins = sharding_list(C, keyed(C, node, "in_shardings"), "in_shardings", ins_s, MC_MAX_VALUES);
  int nouts = sharding_list(C, keyed(C, node, "out_shardings"), "out_shardings", outs_s, MC_MAX_VALUES);
  if (nins != nin) sh_fail(C, node, "sdy.manual_computation: %d in_shardings for %d operands", nins, nin);
  if (nouts != nout) sh_fail(C, node, "sdy.manual_computation: %d out_shardings for %d results", nouts, nout);
  ShNode *axes = keyed(C, node, "manual_axes");
  if (!axes || (axes->kind != SHN_DICT && axes->kind != SHN_REGION))
    sh_fail(C, axes ? axes : node, "sdy.manual_computation: expected manual_axes={\"axis\", ...}");
  const ShMesh *m = nin ? mesh_of(C, ins_s[0]) : nouts ? mesh_of(C, outs_s[0]) : NULL;
  bool manual[SDY_MAX_AXES] = {false};
  ShToken t[2 * SDY_MAX_AXES + 2];
  int nt = dim_tokens(axes, t, 2 * SDY_MAX_AXES + 2, 0), nmanual = 0;
  for (int i = 0; i < nt; i++) {
    if (t[i].kind == SH_COMMA) continue;
    const char *s = C->src + t[i].off;
    size_t n = t[i].len;
    int a = -1;
    for (int j = 0; m && j < m->naxes && a < 0; j++)
      if (n >= 2 && m->alen[j] == n - 2 && memcmp(m->axis[j], s + 1, n - 2) == 0) a = j;
    if (a < 0) sh_fail_off(C, t[i].off, "sdy.manual_computation: manual axis %.*s is not an axis of the mesh", (int)n, s);
    manual[a] = true;
    nmanual++;
  }
  for (int i = 0; i < nin; i++)
    if (mesh_of(C, ins_s[i]) != m) sh_fail(C, ins_s[i], "sdy.manual_computation: every sharding must name one mesh");
  for (int i = 0; i < nout; i++)
    if (mesh_of(C, outs_s[i]) != m) sh_fail(C, outs_s[i], "sdy.manual_computation: every sharding must name one mesh");
  /* inside another region on the same mesh: its manual axes are manual
   * subgroups of this one's edges */
  const bool *outer = m && C->sdy_outer_mesh == m ? C->sdy_outer_manual : NULL;
  /* global operands to their shards */
  const char *shards[MC_MAX_VALUES];
  for (int i = 0; i < nin; i++) {
    int64_t tiles[64];
    const char *s = sdy_sharding(C, ins_s[i], in[i]->type, manual, outer, tiles);
    check_shard(C, ins_s[i], "operand", i, in[i]->type, shard_in[i], tiles);
    if (!nmanual) { shards[i] = in[i]->hlo; continue; }
    const char *c = sh_emit(C, in[i]->type, "copy", in[i]->hlo, sh_fmt(C, ", sharding=%s", s), meta);
    shards[i] = sh_emit(C, shard_in[i], "custom-call", c,
                        ", custom_call_target=\"SPMDFullToShardShape\", sharding={manual}", meta);
  }
  /* the body, called on the shards */
  ShType *rt = NULL;
  const ShMesh *saved_mesh = C->sdy_outer_mesh;
  bool saved[HLP_SDY_MAX_AXES];
  memcpy(saved, C->sdy_outer_manual, sizeof saved);
  if (m) {
    for (int a = 0; a < HLP_SDY_MAX_AXES; a++) C->sdy_outer_manual[a] = (outer && outer[a]) || manual[a];
    C->sdy_outer_mesh = m;
  }
  const char *comp = sh_region_lower(C, body, "shmap_body", SHR_PARAMS | (nout == 1 ? 0 : SHR_TUPLE_ROOT), names,
                                     shard_in, nargs, NULL, &rt);
  C->sdy_outer_mesh = saved_mesh;
  memcpy(C->sdy_outer_manual, saved, sizeof saved);
  HlcText ops = {0};
  for (int i = 0; i < nin; i++) hlc_text_printf(&ops, "%s%s", i ? ", " : "", shards[i]);
  if (ops.oom) sh_fail(C, node, "out of memory");
  const char *call = sh_emit(C, rt, "call", ops.p ? ops.p : "", sh_fmt(C, ", to_apply=%s", comp), meta);
  hlc_text_free(&ops);
  /* their results back to global values */
  for (int j = 0; j < nout; j++) {
    ShType *shard = nout == 1 ? rt : rt->kind == SHT_TUPLE && j < rt->n ? rt->elems[j] : NULL;
    if (!shard) sh_fail(C, body, "sdy.manual_computation: the body returns fewer values than the op has results");
    int64_t tiles[64];
    const char *s = sdy_sharding(C, outs_s[j], out_t[j], manual, outer, tiles);
    check_shard(C, outs_s[j], "result", j, out_t[j], shard, tiles);
    const char *v = nout == 1 ? call : sh_emit(C, shard, "get-tuple-element", call, sh_fmt(C, ", index=%d", j), NULL);
    if (nmanual) {
      const char *c = sh_emit(C, shard, "copy", v, ", sharding={manual}", meta);
      v = sh_emit(C, out_t[j], "custom-call", c,
                  sh_fmt(C, ", custom_call_target=\"SPMDShardToFullShape\", sharding=%s", s), meta);
    }
    ShOp res = {.node = node};
    sh_bind_result(C, &res, j, v, out_t[j]);
  }
}
