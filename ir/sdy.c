/* sdy.c: Shardy shardings as HLO shardings (sdy.h): the arithmetic both
 * front ends share, and a reader of the strings XLA's Shardy round trip
 * writes into HLO frontend attributes. Sub-axes ("x":(1)2), meshes with
 * device_ids and unknown names are errors naming them. */
#include "ir/sdy.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hlp_sdy_to_hlo(HlcText *out, const HlpMesh *m, const HlpSdySharding *s, const bool *only,
                    const bool *outer_manual, int64_t *tiles) {
  int perm[HLP_SDY_MAX_AXES], np = 0;
  bool used[HLP_SDY_MAX_AXES] = {false};
  int64_t t[HLP_SDY_MAX_DIMS];
  for (int d = 0; d < s->ndims; d++) {
    t[d] = 1;
    for (int k = 0; k < s->naxes[d]; k++) {
      int a = s->axes[d][k];
      used[a] = true;
      if (only && !only[a]) continue;   /* left to the automatic partitioner: replicates */
      perm[np++] = a;
      t[d] *= m->size[a];
    }
  }
  if (tiles) memcpy(tiles, t, sizeof *t * (size_t)s->ndims);
  /* Axes that split no dimension: an enclosing region's manual axes form a
   * manual subgroup (each holds another outer shard), the others replicate
   * (replicated={...} and unreduced={...} name such axes too). */
  int64_t man = 1, repl = 1;
  for (int a = 0; a < m->naxes; a++)
    if ((!used[a] || (only && !only[a])) && outer_manual && outer_manual[a]) {
      perm[np++] = a;
      man *= m->size[a];
    }
  for (int a = 0; a < m->naxes; a++)
    if ((!used[a] || (only && !only[a])) && !(outer_manual && outer_manual[a])) {
      perm[np++] = a;
      repl *= m->size[a];
    }
  bool split = man > 1;
  for (int d = 0; d < s->ndims; d++) split |= t[d] > 1;
  if (!split) {
    hlc_text_puts(out, "{replicated}");
    return;
  }
  hlc_text_puts(out, "{devices=[");
  for (int d = 0; d < s->ndims; d++) hlc_text_printf(out, "%s%lld", d ? "," : "", (long long)t[d]);
  if (man > 1) hlc_text_printf(out, ",%lld", (long long)man);
  if (repl > 1) hlc_text_printf(out, ",%lld", (long long)repl);
  bool identity = true;
  for (int i = 0; i < np; i++) identity &= perm[i] == i;
  int64_t total = 1;
  for (int a = 0; a < m->naxes; a++) total *= m->size[a];
  if (identity) {
    hlc_text_printf(out, "]<=[%lld]", (long long)total);
  } else {
    hlc_text_puts(out, "]<=[");
    for (int a = 0; a < m->naxes; a++) hlc_text_printf(out, "%s%lld", a ? "," : "", (long long)m->size[a]);
    hlc_text_puts(out, "]T(");
    for (int i = 0; i < np; i++) hlc_text_printf(out, "%s%d", i ? "," : "", perm[i]);
    hlc_text_puts(out, ")");
  }
  if (man > 1) hlc_text_puts(out, repl > 1 ? " last_tile_dims={manual, replicated}" : " last_tile_dims={manual}");
  else if (repl > 1) hlc_text_puts(out, " last_tile_dim_replicate");
  hlc_text_puts(out, "}");
}

/* ---- A reader of the strings ------------------------------------------------------ */

typedef struct R {
  const char *p, *end;
  char *why;
  size_t cap;
  bool failed;
} R;

static void skip(R *r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r')) r->p++;
}

static int fail(R *r, const char *what) {
  if (!r->failed) {
    size_t left = (size_t)(r->end - r->p);
    snprintf(r->why, r->cap, "%s at '%.*s'", what, (int)(left > 24 ? 24 : left), r->p);
    r->failed = true;
  }
  return -1;
}

static bool eat(R *r, const char *s) {
  skip(r);
  size_t n = strlen(s);
  if ((size_t)(r->end - r->p) < n || memcmp(r->p, s, n) != 0) return false;
  r->p += n;
  return true;
}

static int expect(R *r, const char *s) {
  if (eat(r, s)) return 0;
  char what[64];
  snprintf(what, sizeof what, "expected '%s'", s);
  return fail(r, what);
}

/* A "quoted" name (no escapes in axis names): its text and length. */
static int quoted(R *r, const char **s, size_t *n) {
  skip(r);
  if (r->p >= r->end || *r->p != '"') return fail(r, "expected a quoted axis name");
  const char *q = memchr(r->p + 1, '"', (size_t)(r->end - r->p - 1));
  if (!q) return fail(r, "unterminated axis name");
  *s = r->p + 1;
  *n = (size_t)(q - r->p - 1);
  r->p = q + 1;
  return 0;
}

static int number(R *r, int64_t *v) {
  skip(r);
  char *e;
  long long x = strtoll(r->p, &e, 10);
  if (e == r->p || e > r->end) return fail(r, "expected an integer");
  r->p = e;
  *v = x;
  return 0;
}

/* An identifier (a mesh name): letters, digits, '_', '.', '$'. */
static int ident(R *r, const char **s, size_t *n) {
  skip(r);
  const char *b = r->p;
  while (r->p < r->end && (*r->p == '_' || *r->p == '.' || *r->p == '$' || (*r->p >= 'a' && *r->p <= 'z') ||
                           (*r->p >= 'A' && *r->p <= 'Z') || (*r->p >= '0' && *r->p <= '9')))
    r->p++;
  if (r->p == b) return fail(r, "expected a name");
  *s = b;
  *n = (size_t)(r->p - b);
  return 0;
}

/* Skip a balanced [...] list (device_ids). */
static int skip_list(R *r) {
  if (expect(r, "[")) return -1;
  while (r->p < r->end && *r->p != ']') r->p++;
  return expect(r, "]");
}

static int mesh_body(R *r, HlpMesh *m) {
  if (expect(r, "#sdy.mesh<") || expect(r, "[")) return -1;
  m->naxes = 0;
  if (!eat(r, "]")) {
    do {
      if (m->naxes == HLP_SDY_MAX_AXES) return fail(r, "more than 16 mesh axes");
      if (quoted(r, &m->axis[m->naxes], &m->alen[m->naxes]) || expect(r, "=") || number(r, &m->size[m->naxes]))
        return -1;
      if (m->size[m->naxes] < 1) return fail(r, "an axis size must be at least 1");
      m->naxes++;
    } while (eat(r, ","));
    if (expect(r, "]")) return -1;
  }
  if (eat(r, ",")) {
    if (!eat(r, "device_ids") || expect(r, "=") || skip_list(r)) return -1;
    /* A maximal mesh (no axes, one device) holds nothing to split; any
     * other explicit numbering is not row-major. */
    if (m->naxes) return fail(r, "a mesh with device_ids (not numbered row-major) is not supported");
  }
  return expect(r, ">");
}

int hlp_sdy_parse_meshes(const char *text, HlpMesh *out, int max, int *n, char *why, size_t cap) {
  R r = {text, text + strlen(text), why, cap, false};
  *n = 0;
  if (expect(&r, "{")) return -1;
  if (eat(&r, "}")) return 0;
  do {
    if (*n == max) return fail(&r, "too many meshes");
    HlpMesh *m = &out[*n];
    memset(m, 0, sizeof *m);
    if (ident(&r, &m->name, &m->nlen) || expect(&r, "=") || mesh_body(&r, m)) return -1;
    (*n)++;
  } while (eat(&r, ","));
  return expect(&r, "}");
}

static int axis_of(R *r, const HlpMesh *m, const char *s, size_t n) {
  for (int a = 0; a < m->naxes; a++)
    if (m->alen[a] == n && memcmp(m->axis[a], s, n) == 0) return a;
  char what[160];
  snprintf(what, sizeof what, "mesh @%.*s has no axis \"%.*s\"", (int)m->nlen, m->name, (int)(n > 60 ? 60 : n), s);
  return fail(r, what);
}

int hlp_sdy_parse_manual_axes(const char *text, const HlpMesh *m, bool *mask, char *why, size_t cap) {
  R r = {text, text + strlen(text), why, cap, false};
  for (int a = 0; a < HLP_SDY_MAX_AXES; a++) mask[a] = false;
  if (expect(&r, "#sdy<manual_axes{")) return -1;
  if (!eat(&r, "}")) {
    do {
      const char *s;
      size_t n;
      if (quoted(&r, &s, &n)) return -1;
      int a = axis_of(&r, m, s, n);
      if (a < 0) return -1;
      mask[a] = true;
    } while (eat(&r, ","));
    if (expect(&r, "}")) return -1;
  }
  return expect(&r, ">");
}

/* Axes named in {...} (replicated=, unreduced=): checked, then ignored. */
static int axis_set(R *r, const HlpMesh *m) {
  if (expect(r, "{")) return -1;
  if (eat(r, "}")) return 0;
  do {
    const char *s;
    size_t n;
    if (quoted(r, &s, &n) || axis_of(r, m, s, n) < 0) return -1;
  } while (eat(r, ","));
  return expect(r, "}");
}

/* "<@mesh, [{"a", ?}, {}]p0, replicated={...}>" */
static int one_sharding(R *r, const HlpMesh *meshes, int nmeshes, const HlpMesh **mo, HlpSdySharding *s) {
  const char *name;
  size_t nl;
  if (expect(r, "<") || expect(r, "@") || ident(r, &name, &nl)) return -1;
  const HlpMesh *m = NULL;
  for (int i = 0; i < nmeshes && !m; i++)
    if (meshes[i].nlen == nl && memcmp(meshes[i].name, name, nl) == 0) m = &meshes[i];
  if (!m) {
    char what[120];
    snprintf(what, sizeof what, "no mesh @%.*s in the module's xla.sdy.meshes", (int)(nl > 60 ? 60 : nl), name);
    return fail(r, what);
  }
  *mo = m;
  bool used[HLP_SDY_MAX_AXES] = {false};
  s->ndims = 0;
  if (expect(r, ",") || expect(r, "[")) return -1;
  if (!eat(r, "]")) {
    do {
      if (s->ndims == HLP_SDY_MAX_DIMS) return fail(r, "too many dimensions");
      int d = s->ndims++;
      s->naxes[d] = 0;
      if (expect(r, "{")) return -1;
      while (!eat(r, "}")) {
        if (eat(r, "?")) { eat(r, ","); continue; }
        const char *an;
        size_t al;
        if (quoted(r, &an, &al)) return -1;
        skip(r);
        if (r->p < r->end && *r->p == ':') return fail(r, "sub-axes (\"x\":(1)2) are not supported");
        int a = axis_of(r, m, an, al);
        if (a < 0) return -1;
        if (used[a]) return fail(r, "an axis is used twice");
        used[a] = true;
        s->axes[d][s->naxes[d]++] = a;
        eat(r, ",");
      }
      skip(r);
      if (r->p < r->end && *r->p == 'p') {   /* a priority: guides propagation only */
        int64_t prio;
        r->p++;
        if (number(r, &prio)) return -1;
      }
    } while (eat(r, ","));
    if (expect(r, "]")) return -1;
  }
  while (eat(r, ",")) {
    if (eat(r, "replicated") || eat(r, "unreduced")) {
      if (expect(r, "=") || axis_set(r, m)) return -1;
    } else {
      return fail(r, "expected replicated={...} or unreduced={...}");
    }
  }
  return expect(r, ">");
}

int hlp_sdy_parse_shardings(const char *text, const HlpMesh *meshes, int nmeshes, const HlpMesh **mesh_out,
                            HlpSdySharding *out, int max, int *n, char *why, size_t cap) {
  R r = {text, text + strlen(text), why, cap, false};
  *n = 0;
  if (eat(&r, "#sdy.sharding<")) {
    r.p--;   /* one sharding: its '<' opens it */
    if (one_sharding(&r, meshes, nmeshes, &mesh_out[0], &out[0])) return -1;
    *n = 1;
  } else {
    if (expect(&r, "#sdy.sharding_per_value<") || expect(&r, "[")) return -1;
    if (!eat(&r, "]")) {
      do {
        if (*n == max) return fail(&r, "too many shardings");
        if (one_sharding(&r, meshes, nmeshes, &mesh_out[*n], &out[*n])) return -1;
        (*n)++;
      } while (eat(&r, ","));
      if (expect(&r, "]")) return -1;
    }
    if (expect(&r, ">")) return -1;
  }
  skip(&r);
  return r.p == r.end ? 0 : fail(&r, "unexpected text after the sharding");
}
