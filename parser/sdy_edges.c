/* sdy_edges.c: the manual regions of XLA's Shardy round trip in HLO text,
 * which JAX's shard_map becomes in a dump made before optimization: a
 * custom call xla.sdy.GlobalToLocalShape (global operands to their
 * shards), a call of the region's body, and xla.sdy.LocalToGlobalShape
 * (the body's results to global values). Their shardings are Shardy
 * strings in frontend attributes: xla.sdy.in_shardings / out_shardings
 * (#sdy.sharding_per_value<[...]>), xla.sdy.manual_axes and the module's
 * xla.sdy.meshes. Here they become typed HLO shardings
 * (HloInstr.manual_sharding, ir/sdy.h's arithmetic over the manual axes;
 * the manual axes of enclosing regions form manual subgroups, the others
 * replicate), which the run path splits and assembles by (ir/collective.h:
 * manual edges). */
#include <stdio.h>
#include <string.h>
#include "ir/sdy.h"
#include "ir/sharding.h"
#include "parser/syntax.h"

enum { MAX_MESHES = 16, MAX_VALUES = 64 };

/* The text of frontend attribute key among attrs (a value list of
 * key="value" or key={raw}), or NULL. */
static const char *frontend_attr(const HloAttr *attrs, int32_t n, const char *key) {
  for (int32_t a = 0; a < n; a++) {
    if (strcmp(attrs[a].name, "frontend_attributes") != 0 || attrs[a].nvalues != 1) continue;
    const HloVal *b = attrs[a].values[0];
    for (int32_t i = 0; b->kind == HLO_VAL_BRACE && i < b->nitems; i++) {
      const HloVal *it = b->items[i];
      if (it->kind == HLO_VAL_ATTR && it->text && strcmp(it->text, key) == 0 && it->nitems >= 1 && it->items[0]->text)
        return it->items[0]->text;
    }
  }
  return NULL;
}

static bool is_edge(const HloInstr *ins, bool *to_local) {
  if (ins->op != HLO_OP_CUSTOM_CALL || !ins->custom_call_target) return false;
  *to_local = strcmp(ins->custom_call_target, "xla.sdy.GlobalToLocalShape") == 0;
  return *to_local || strcmp(ins->custom_call_target, "xla.sdy.LocalToGlobalShape") == 0;
}

/* The global side's array shape k of an edge. */
static const HloShape *global_shape(const HloInstr *ins, bool to_local, int k) {
  if (to_local) return k < ins->nops ? &ins->ops[k]->shape : NULL;
  if (ins->shape.dtype != HLO_TUPLE) return k == 0 ? &ins->shape : NULL;
  return k < ins->shape.ntuple ? &ins->shape.tuple[k] : NULL;
}

/* An edge's shardings into ins->manual_sharding. outer_axes: the manual
 * axes of the regions around it, on outer_mesh (NULL: none). */
/* A value seen through the get-tuple-element that picks it out, if any. */
static const HloInstr *through_gte(const HloInstr *o) {
  return o->op == HLO_OP_GET_TUPLE_ELEMENT && o->nops == 1 ? o->ops[0] : o;
}

/* Early exports (JAX, February 2025) put a region's attributes on the call
 * of its body, not on its edges: the call an edge feeds, or the call that
 * feeds it. */
static const HloInstr *body_call(const HloComputation *comp, const HloInstr *ins, bool to_local) {
  if (!to_local) {
    const HloInstr *o = ins->nops == 1 ? through_gte(ins->ops[0]) : NULL;
    return o && o->op == HLO_OP_CALL ? o : NULL;
  }
  for (int32_t i = 0; i < comp->ninstrs; i++) {
    const HloInstr *c = comp->instrs[i];
    if (c->op != HLO_OP_CALL) continue;
    for (int32_t k = 0; k < c->nops; k++)
      if (through_gte(c->ops[k]) == ins) return c;
  }
  return NULL;
}

/* The same exports escaped the quotes in these strings once more (\"a\"). */
static const char *unescaped(HlpParser *P, const char *text) {
  if (!text || !strstr(text, "\\\"")) return text;
  size_t n = strlen(text);
  char *out = hlp_alloc(P, n + 1), *w = out;
  for (size_t i = 0; i < n; i++) {
    if (text[i] == '\\' && text[i + 1] == '"') continue;
    *w++ = text[i];
  }
  *w = 0;
  return out;
}

/* What an edge into a region read: the mesh and manual axes its body sees. */
typedef struct Region {
  const HloInstr *edge;
  const HlpMesh *mesh;
  bool manual[HLP_SDY_MAX_AXES];
} Region;

static int edge(HlpParser *P, HloComputation *comp, HloInstr *ins, bool to_local, const HlpMesh *meshes,
                int nmeshes, const HlpMesh *outer_mesh, const bool *outer_axes, Region *region) {
  const char *what = ins->custom_call_target;
  const char *key = to_local ? "xla.sdy.in_shardings" : "xla.sdy.out_shardings";
  const char *text = frontend_attr(ins->attrs, ins->nattrs, key);
  const char *axes = frontend_attr(ins->attrs, ins->nattrs, "xla.sdy.manual_axes");
  const HloInstr *call = !text || !axes ? body_call(comp, ins, to_local) : NULL;
  if (call) {
    text = frontend_attr(call->attrs, call->nattrs, key);
    axes = frontend_attr(call->attrs, call->nattrs, "xla.sdy.manual_axes");
  }
  text = unescaped(P, text);
  axes = unescaped(P, axes);
  if (!text || !axes) {
    hlp_error(P, ins->off, "%s needs the frontend attributes %s and xla.sdy.manual_axes (on it, or on "
              "the call of its region's body)", what, key);
    return -1;
  }
  if (!nmeshes) {
    hlp_error(P, ins->off, "%s: the module's frontend attribute xla.sdy.meshes names no mesh", what);
    return -1;
  }
  const HlpMesh *mesh_of[MAX_VALUES];
  HlpSdySharding *sh = hlp_alloc(P, sizeof *sh * MAX_VALUES);
  int n;
  char why[256];
  if (hlp_sdy_parse_shardings(text, meshes, nmeshes, mesh_of, sh, MAX_VALUES, &n, why, sizeof why) != 0) {
    hlp_error(P, ins->off, "%s: %s: %s", what, key, why);
    return -1;
  }
  int nvalues = to_local ? ins->nops : ins->shape.dtype == HLO_TUPLE ? ins->shape.ntuple : 1;
  if (n != nvalues) {
    hlp_error(P, ins->off, "%s: %s gives %d shardings for %d values", what, key, n, nvalues);
    return -1;
  }
  HlcText t = {0};
  if (n != 1) hlc_text_puts(&t, "{");
  for (int k = 0; k < n; k++) {
    bool manual[HLP_SDY_MAX_AXES];
    if (hlp_sdy_parse_manual_axes(axes, mesh_of[k], manual, why, sizeof why) != 0) {
      hlc_text_free(&t);
      hlp_error(P, ins->off, "%s: xla.sdy.manual_axes: %s", what, why);
      return -1;
    }
    const HloShape *g = global_shape(ins, to_local, k);
    if (!g || g->dtype == HLO_TUPLE || g->rank != sh[k].ndims) {
      hlc_text_free(&t);
      hlp_error(P, ins->off, "%s: sharding %d has %d dimensions, but its value has rank %d", what, k,
                sh[k].ndims, g && g->dtype != HLO_TUPLE ? g->rank : -1);
      return -1;
    }
    if (k) hlc_text_puts(&t, ", ");
    const bool *outer = outer_axes && outer_mesh == mesh_of[k] ? outer_axes : NULL;
    hlp_sdy_to_hlo(&t, mesh_of[k], &sh[k], manual, outer, NULL);
    if (k == 0) {
      region->edge = ins;
      region->mesh = mesh_of[0];
      memcpy(region->manual, manual, sizeof manual);
    }
  }
  if (n != 1) hlc_text_puts(&t, "}");
  if (n == 0) hlc_text_puts(&t, "{}");
  if (t.oom) { hlc_text_free(&t); longjmp(P->oom, 1); }
  HloSharding *s = hlp_alloc(P, sizeof *s);
  int rc = hlo_sharding_parse(P->A, t.p, s, why, sizeof why);
  if (rc != 0) hlp_error(P, ins->off, "%s: %s", what, why);
  else ins->manual_sharding = s;
  hlc_text_free(&t);
  return rc;
}

/* The manual axes in force inside each computation (a region's body sees
 * its own and its enclosing regions'), one mesh each. */
typedef struct Scope {
  const HlpMesh *mesh;
  bool axes[HLP_SDY_MAX_AXES];
} Scope;

static int32_t comp_index(const HloModule *m, const HloComputation *c) {
  for (int32_t i = 0; i < m->ncomps; i++)
    if (m->comps[i] == c) return i;
  return -1;
}

/* The region a call's operand comes out of (a GlobalToLocalShape edge read
 * before it in the same computation), or NULL. */
static const Region *region_feeding(const HloInstr *call, const Region *regions, int n) {
  for (int32_t k = 0; k < call->nops; k++) {
    const HloInstr *o = through_gte(call->ops[k]);
    for (int r = 0; r < n; r++)
      if (regions[r].edge == o) return &regions[r];
  }
  return NULL;
}

int hlp_lower_sdy_edges(HlpParser *P) {
  HloModule *m = P->m;
  HlpMesh meshes[MAX_MESHES];
  int nmeshes = 0;
  bool any = false, to_local;
  for (int32_t c = 0; c < m->ncomps && !any; c++)
    for (int32_t i = 0; i < m->comps[c]->ninstrs && !any; i++) any = is_edge(m->comps[c]->instrs[i], &to_local);
  if (!any) return 0;
  const char *mt = unescaped(P, frontend_attr(m->attrs, m->nattrs, "xla.sdy.meshes"));
  char why[256];
  if (mt && hlp_sdy_parse_meshes(mt, meshes, MAX_MESHES, &nmeshes, why, sizeof why) != 0) {
    for (int32_t a = 0; a < m->nattrs; a++)
      if (strcmp(m->attrs[a].name, "frontend_attributes") == 0) hlp_error(P, m->attrs[a].off, "xla.sdy.meshes: %s", why);
    return -1;
  }
  /* Callers come after their callees in the text: walking back from the
   * end, every computation's scope is known before its instructions. */
  Scope *scope = hlp_alloc(P, sizeof *scope * (size_t)(m->ncomps ? m->ncomps : 1));
  int rc = 0;
  for (int32_t c = m->ncomps - 1; c >= 0; c--) {
    HloComputation *comp = m->comps[c];
    Region *regions = hlp_alloc(P, sizeof *regions * (size_t)(comp->ninstrs ? comp->ninstrs : 1));
    int nregions = 0;
    for (int32_t i = 0; i < comp->ninstrs; i++) {
      HloInstr *ins = comp->instrs[i];
      Scope inner = scope[c];
      if (is_edge(ins, &to_local)) {
        Region r = {0};
        if (edge(P, comp, ins, to_local, meshes, nmeshes, scope[c].mesh, scope[c].mesh ? scope[c].axes : NULL,
                 &r) != 0)
          rc = -1;
        else if (to_local && r.mesh)
          regions[nregions++] = r;
      }
      /* A region's body: called with the values its GlobalToLocalShape made. */
      const Region *fed = ins->op == HLO_OP_CALL ? region_feeding(ins, regions, nregions) : NULL;
      if (fed) {
        if (inner.mesh != fed->mesh) memset(inner.axes, 0, sizeof inner.axes);
        inner.mesh = fed->mesh;
        for (int a = 0; a < HLP_SDY_MAX_AXES; a++) inner.axes[a] |= fed->manual[a];
      }
      for (int32_t k = 0; k < ins->ncalled; k++) {
        int32_t cc = comp_index(m, ins->called[k].comp);
        if (cc < 0 || !inner.mesh) continue;
        if (scope[cc].mesh && scope[cc].mesh != inner.mesh) continue;
        scope[cc].mesh = inner.mesh;
        for (int a = 0; a < HLP_SDY_MAX_AXES; a++) scope[cc].axes[a] |= inner.axes[a];
      }
    }
  }
  return rc;
}
