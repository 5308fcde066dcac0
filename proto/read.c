/* read.c: the entry points of proto/: a file's bytes to a module or values.
 *
 * Each message is checked against its descriptor (wire.c) before protobuf-c
 * unpacks it, so errors name the message and field. A snapshot is never
 * unpacked whole: the module (field hlo) is unpacked alone, and arguments
 * one at a time, their element fields read in place (decode_literal). With
 * HPB_READ_DEFER the elements are decoded later straight into the caller's
 * buffers, and from a file's image read on demand (a pager, common/pager.h)
 * each piece is read as it is decoded and given back after: a multi-GB
 * argument is then held once.
 */
#include <stdlib.h>
#include <string.h>
#include "proto/lower.h"
#include "proto/wire.h"
#include "parser/parser.h"

static void report(HlcDiags *d, const char *filename, const char *msg) {
  hlc_diag(d, HLC_ERROR, "%s: %s", filename ? filename : "<input>", msg);
}

/* Check then unpack one message; NULL with a diagnostic on error. */
static ProtobufCMessage *unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *p, size_t n,
                                const char *filename, const char *path, HlcDiags *d) {
  char where[1024], msg[1400];
  if (hpb_wire_check(desc, p, n, 0, where, sizeof where) != 0) {
    snprintf(msg, sizeof msg, "%s%s%s", path ? path : "", path ? ": " : "", where);
    report(d, filename, msg);
    return NULL;
  }
  ProtobufCMessage *m = protobuf_c_message_unpack(desc, NULL, n, p);
  if (!m) {
    snprintf(msg, sizeof msg, "%s%s%s: cannot be decoded (malformed or out of memory)",
             path ? path : "", path ? ": " : "", desc->name);
    report(d, filename, msg);
  }
  return m;
}

/* The bytes of the HloModuleProto inside whatever the file holds. */
static int module_bytes(const uint8_t *p, size_t n, const char *filename, HlcDiags *d,
                        const uint8_t **mp, size_t *mn, const char **path) {
  HpbKind k = hpb_sniff(p, n);
  const uint8_t *a;
  size_t an;
  switch (k) {
  case HPB_MODULE: *mp = p; *mn = n; *path = NULL; return 0;
  case HPB_HLO_PROTO: hpb_wire_find(p, n, 1, mp, mn); *path = "xla.HloProto.hlo_module"; return 0;
  case HPB_UNOPT_SNAPSHOT:
    hpb_wire_find(p, n, 1, mp, mn);
    *path = "xla.HloUnoptimizedSnapshot.hlo_module";
    return 0;
  case HPB_SNAPSHOT:
    hpb_wire_find(p, n, 1, &a, &an);
    hpb_wire_find(a, an, 1, mp, mn);
    *path = "xla.HloSnapshot.hlo.hlo_module";
    return 0;
  default:
    /* An HloSnapshot without its hlo field (1) has the wire form of a
     * RunHloModuleIterationLiterals: arguments (2), result (3). XLA's
     * mlir_bisect test data is one (xla/mlir/tools/mlir_bisect/tests). */
    report(d, filename, k == HPB_LITERAL ? "a LiteralProto holds no module"
                        : k == HPB_ITERATION || k == HPB_RUN_LITERALS
                            ? "holds arguments but no module (an HloSnapshot without its field hlo, or "
                              "run_hlo_module's literals): give it as the INPUT of a module"
                            : "not an HloSnapshot, HloUnoptimizedSnapshot, HloProto or HloModuleProto");
    return -1;
  }
}

int hpb_module_range(const void *data, size_t len, size_t *off, size_t *n) {
  HlcDiags quiet = {0};
  const uint8_t *mp;
  const char *path;
  int rc = module_bytes(data, len, NULL, &quiet, &mp, n, &path);
  hlc_diags_clear(&quiet);
  if (rc != 0) return -1;
  *off = (size_t)(mp - (const uint8_t *)data);
  return 0;
}

char *hpb_module_text(const void *data, size_t len, const char *filename, HlcDiags *diags,
                      size_t *text_len) {
  const uint8_t *mp;
  size_t mn;
  const char *path;
  if (module_bytes(data, len, filename, diags, &mp, &mn, &path) != 0) return NULL;
  Xla__HloModuleProto *m =
      (Xla__HloModuleProto *)unpack(&xla__hlo_module_proto__descriptor, mp, mn, filename, path, diags);
  if (!m) return NULL;
  char err[1024];
  char *text = hpb_text_of_module(m, text_len, err, sizeof err);
  protobuf_c_message_free_unpacked(&m->base, NULL);
  if (!text) {
    char msg[1400];
    snprintf(msg, sizeof msg, "%s%s%s", path ? path : "", path ? ": " : "", err);
    report(diags, filename, msg);
  }
  return text;
}

HloModule *hpb_parse_module(const void *data, size_t len, const char *filename, HlcDiags *diags) {
  size_t n;
  char *text = hpb_module_text(data, len, filename, diags, &n);
  if (!text) return NULL;
  /* Positions in messages refer to the module's HLO text, which --print shows. */
  char name[1024];
  snprintf(name, sizeof name, "%s (as HLO text)", filename ? filename : "<input>");
  HloModule *m = hlp_parse(text, n, name, diags);
  free(text);
  return m;
}

/* ---- Values ----------------------------------------------------------------- */

/* One deferred array leaf: its elements are still in the caller's bytes. */
struct HpbLeaf {
  HpbLeaf *next;
  const HloLiteral *lit;
  HpbElems e;          /* with the pager of the file's image, if any */
  const char *path;    /* "xla.HloSnapshot.arguments[0]", for errors */
};

/* Decode a LiteralProto into l, reading its elements in place: every
 * element field that occurs once as a length-delimited payload (bytes, or
 * packed scalars) and every tuple element is left out of the copy protobuf-c
 * unpacks; the element field the shape's type uses is then read from the
 * wire bytes p directly, and tuple elements the same way, recursively. So a
 * 1 GB argument is decoded once, into the buffer that keeps it (deferred),
 * not first into protobuf-c's repeated field and then a dense array. A field
 * split over several occurrences (protobuf concatenates packed ones; for
 * bytes the last wins) stays in the copy and is decoded from protobuf-c's
 * field. want: the shape a tuple gives its element (whose own shape field is
 * then not read, as hpb_literal does), or NULL. 0, or -1 with a diagnostic
 * (path names the literal). */
static int decode_node(HpbValues *v, const uint8_t *p, size_t n, const HloShape *want, HloLiteral *l,
                       const char *filename, const char *path, HlcDiags *d, unsigned flags, int depth) {
  enum { NF = 34 };
  const uint8_t *end = p + n, *pay[NF] = {0};
  size_t payn[NF] = {0}, rn = 0, ntl = 0;
  uint8_t count[NF] = {0}, len_delim[NF] = {0};
  char err[1024], msg[1400];
  if (depth > 64) {
    snprintf(msg, sizeof msg, "%s: xla.LiteralProto.tuple_literals: tuples nested more than 64 deep", path);
    report(d, filename, msg);
    return -1;
  }
  for (const uint8_t *q = p; q < end;) {
    uint32_t f;
    int wt;
    const uint8_t *sub = NULL;
    size_t subn = 0;
    if (hpb_wire_next(&q, end, &f, &wt, &sub, &subn) != 0) {
      /* Malformed: the descriptor check says which field. */
      hlc_need(v->pager, p, n);
      ProtobufCMessage *m = unpack(&xla__literal_proto__descriptor, p, n, filename, path, d);
      if (m) {   /* not expected: the check walks the same fields */
        protobuf_c_message_free_unpacked(m, NULL);
        snprintf(msg, sizeof msg, "%s: xla.LiteralProto: malformed", path);
        report(d, filename, msg);
      }
      return -1;
    }
    if (f < NF && hpb_is_element_field(f)) {
      if (count[f] < 2) count[f]++;
      len_delim[f] = wt == 2;
      pay[f] = sub;
      payn[f] = subn;
    }
    ntl += f == 10 && wt == 2;
  }
  bool inplace[NF] = {0};
  for (int f = 0; f < NF; f++) inplace[f] = count[f] == 1 && len_delim[f];
  /* The message without its in-place fields and tuple elements; the tuple
   * elements' bytes (at most one per 2 bytes of p). */
  uint8_t *rest = malloc(n + 1);
  const uint8_t **tl = ntl ? hlc_arena_alloc(&v->arena, ntl * sizeof *tl) : NULL;
  size_t *tln = ntl ? hlc_arena_alloc(&v->arena, ntl * sizeof *tln) : NULL;
  if (!rest || (ntl && (!tl || !tln))) { free(rest); report(d, filename, "out of memory"); return -1; }
  size_t k = 0;
  for (const uint8_t *q = p, *key = p; q < end; key = q) {
    uint32_t f;
    int wt;
    const uint8_t *sub = NULL;
    size_t subn = 0;
    hpb_wire_next(&q, end, &f, &wt, &sub, &subn);
    if (f == 10 && wt == 2) { tl[k] = sub; tln[k++] = subn; continue; }
    if (f < NF && inplace[f]) continue;
    hlc_need(v->pager, key, (size_t)(q - key));
    memcpy(rest + rn, key, (size_t)(q - key));
    rn += (size_t)(q - key);
  }
  Xla__LiteralProto *lp =
      (Xla__LiteralProto *)unpack(&xla__literal_proto__descriptor, rest, rn, filename, path, d);
  free(rest);
  if (!lp) return -1;
  HloShape *s = (HloShape *)want;
  int rc = 0;
  if (!s) {
    s = hlc_arena_alloc(&v->arena, sizeof *s);
    if (!s) rc = (snprintf(err, sizeof err, "out of memory"), -1);
    else if (!lp->shape) rc = (snprintf(err, sizeof err, "xla.LiteralProto.shape: missing"), -1);
    else rc = hpb_shape(&v->arena, lp->shape, s, err, sizeof err);
  }
  memset(l, 0, sizeof *l);
  l->shape = s;
  uint32_t f = rc == 0 && hlc_dtype_is_array(s->dtype) ? hpb_element_field(s->dtype) : 0;
  if (rc == 0 && s->dtype == HLO_TUPLE) {
    protobuf_c_message_free_unpacked(&lp->base, NULL);
    if (ntl != (size_t)s->ntuple) {
      snprintf(msg, sizeof msg, "%s: xla.LiteralProto.tuple_literals: %zu elements for a tuple of %d", path,
               ntl, (int)s->ntuple);
      report(d, filename, msg);
      return -1;
    }
    l->ntuple = s->ntuple;
    if (ntl && !(l->tuple = hlc_arena_alloc(&v->arena, ntl * sizeof *l->tuple))) {
      report(d, filename, "out of memory");
      return -1;
    }
    for (size_t i = 0; i < ntl; i++) {
      char *sub = hlc_arena_alloc(&v->arena, strlen(path) + 64);
      if (!sub) { report(d, filename, "out of memory"); return -1; }
      sprintf(sub, "%s: xla.LiteralProto.tuple_literals[%zu]", path, i);
      if (decode_node(v, tl[i], tln[i], &s->tuple[i], &l->tuple[i], filename, sub, d, flags, depth + 1) != 0)
        return -1;
    }
    return 0;
  }
  if (rc == 0 && f && f < NF && inplace[f]) {
    HpbElems e;
    bool defer = (flags & HPB_READ_DEFER) != 0;
    hpb_elems_wire(s->dtype, pay[f], payn[f], &e);
    e.pager = v->pager;
    rc = hpb_literal_from(defer ? NULL : &v->arena, &e, s, l, err, sizeof err);
    if (rc == 0 && defer && l->nbytes) {
      HpbLeaf *leaf = hlc_arena_alloc(&v->arena, sizeof *leaf);
      const char *lpath = hlc_arena_strndup(&v->arena, path, strlen(path));
      if (!leaf || !lpath) {
        rc = (snprintf(err, sizeof err, "out of memory"), -1);
      } else {
        *leaf = (HpbLeaf){v->deferred, l, e, lpath};
        v->deferred = leaf;
      }
    }
  } else if (rc == 0) {
    rc = hpb_literal(&v->arena, lp, s, l, err, sizeof err);   /* split fields: from protobuf-c's copy */
  }
  protobuf_c_message_free_unpacked(&lp->base, NULL);
  if (rc != 0) {
    snprintf(msg, sizeof msg, "%s: %s", path, err);
    report(d, filename, msg);
    return -1;
  }
  return 0;
}

static HloLiteral *decode_literal(HpbValues *v, const uint8_t *p, size_t n, const char *filename,
                                  const char *path, HlcDiags *d, unsigned flags) {
  HloLiteral *l = hlc_arena_alloc(&v->arena, sizeof *l);
  if (!l) { report(d, filename, "out of memory"); return NULL; }
  return decode_node(v, p, n, NULL, l, filename, path, d, flags, 0) == 0 ? l : NULL;
}

int hpb_values_fill(HpbValues *v, const HloLiteral *leaf, void *dst, HlcDiags *d) {
  for (HpbLeaf *x = v->deferred; x; x = x->next) {
    if (x->lit != leaf) continue;
    char err[1024], msg[1400];
    uint64_t n = leaf->nbytes / hlc_dtype_size(leaf->shape->dtype);
    if (hpb_elems_decode(&x->e, leaf->shape, n, dst, err, sizeof err) == 0) return 0;
    snprintf(msg, sizeof msg, "%s: %s", x->path, err);
    report(d, v->filename, msg);
    return -1;
  }
  if (leaf->nbytes && leaf->data) memcpy(dst, leaf->data, leaf->nbytes);
  return 0;
}

HpbValues *hpb_read_values(const void *data, size_t len, const char *filename, HlcDiags *diags) {
  return hpb_read(data, len, filename, diags, -1, HPB_READ_ARGS, NULL);
}

HpbValues *hpb_read_result(const void *data, size_t len, const char *filename, HlcDiags *diags) {
  return hpb_read(data, len, filename, diags, -1, 0, NULL);
}

HpbValues *hpb_read_partition(const void *data, size_t len, const char *filename, HlcDiags *diags,
                              int part) {
  return hpb_read(data, len, filename, diags, part, HPB_READ_ARGS, NULL);
}

static HpbValues *read_partition(const void *data, size_t len, const char *filename, HlcDiags *diags,
                                 int part, unsigned flags, HlcPager *pager);

static HpbValues *values_new(const char *filename, unsigned flags, HlcPager *pager, HlcDiags *diags) {
  HpbValues *v = calloc(1, sizeof *v);
  if (!v) { report(diags, filename, "out of memory"); return NULL; }
  hlc_arena_init(&v->arena);
  v->flags = flags;
  v->pager = pager;
  const char *name = filename ? filename : "<input>";
  if (!(v->filename = hlc_arena_strndup(&v->arena, name, strlen(name)))) {
    report(diags, filename, "out of memory");
    hpb_values_free(v);
    return NULL;
  }
  return v;
}

HpbValues *hpb_read(const void *data, size_t len, const char *filename, HlcDiags *diags, int part,
                    unsigned flags, HlcPager *pager) {
  if (part >= 0) return read_partition(data, len, filename, diags, part, flags, pager);
  bool arguments = (flags & HPB_READ_ARGS) != 0;
  const uint8_t *p = data, *end = p + len;
  HpbKind k = hpb_sniff(p, len);
  if (k != HPB_SNAPSHOT && k != HPB_LITERAL && k != HPB_ITERATION && k != HPB_RUN_LITERALS) {
    report(diags, filename, "holds no values: not an HloSnapshot, LiteralProto or run_hlo_module literals");
    return NULL;
  }
  const char *msgname = k == HPB_SNAPSHOT ? "xla.HloSnapshot" : "xla.RunHloModuleIterationLiterals";
  if (k == HPB_RUN_LITERALS) {
    /* The first iteration, as run_hlo_module --input_literals_file reads it. */
    const uint8_t *it;
    size_t itn;
    hpb_wire_find(p, len, 1, &it, &itn);
    p = it;
    end = it + itn;
    msgname = "xla.RunHloModuleLiterals.iterations[0]";
  }
  HpbValues *v = values_new(filename, flags, pager, diags);
  if (!v) return NULL;
  if (k == HPB_LITERAL) {
    v->values = hlc_arena_alloc(&v->arena, sizeof *v->values);
    if (!v->values || !(v->values[0] = decode_literal(v, p, len, filename, "xla.LiteralProto", diags, flags)))
      goto fail;
    v->n = 1;
    return v;
  }
  /* Count the arguments first: the count is bounded by the file's size. */
  size_t nargs = 0;
  for (const uint8_t *q = p; q < end;) {
    uint32_t f;
    int wt;
    const uint8_t *sub;
    size_t subn;
    if (hpb_wire_next(&q, end, &f, &wt, &sub, &subn) != 0) goto fail;   /* sniff checked it */
    nargs += f == 2 && wt == 2;
  }
  v->values = hlc_arena_alloc(&v->arena, (nargs + 1) * sizeof *v->values);
  if (!v->values) { report(diags, filename, "out of memory"); goto fail; }
  for (const uint8_t *q = p; q < end;) {
    uint32_t f;
    int wt;
    const uint8_t *sub = NULL;
    size_t subn = 0;
    hpb_wire_next(&q, end, &f, &wt, &sub, &subn);
    if ((f != 2 && f != 3) || wt != 2 || (f == 2 && !arguments)) continue;
    char path[96];
    if (f == 2) snprintf(path, sizeof path, "%s.arguments[%d]", msgname, (int)v->n);
    else snprintf(path, sizeof path, "%s.result", msgname);
    HloLiteral *l = decode_literal(v, sub, subn, filename, path, diags, flags);
    if (!l) goto fail;
    if (f == 2) v->values[v->n++] = l;
    else v->result = l;
  }
  return v;
fail:
  hpb_values_free(v);
  return NULL;
}

int hpb_count_partitions(const void *data, size_t len) {
  if (hpb_sniff(data, len) != HPB_UNOPT_SNAPSHOT) return 0;
  const uint8_t *q = data, *end = q + len;
  int n = 0;
  while (q < end) {
    uint32_t f;
    int wt;
    const uint8_t *sub;
    size_t subn;
    if (hpb_wire_next(&q, end, &f, &wt, &sub, &subn) != 0) return 0;
    n += f == 2 && wt == 2;
  }
  return n;
}

static HpbValues *read_partition(const void *data, size_t len, const char *filename, HlcDiags *diags,
                                 int part, unsigned flags, HlcPager *pager) {
  const uint8_t *q = data, *end = q + len, *b = NULL;
  size_t bn = 0;
  for (int k = 0; q < end && !b;) {   /* the part-th partition (field 2) */
    uint32_t f;
    int wt;
    const uint8_t *sub;
    size_t subn;
    if (hpb_wire_next(&q, end, &f, &wt, &sub, &subn) != 0) break;
    if (f == 2 && wt == 2 && k++ == part) { b = sub; bn = subn; }
  }
  if (!b) {
    report(diags, filename, "xla.HloUnoptimizedSnapshot.partitions: no such partition");
    return NULL;
  }
  HpbValues *v = values_new(filename, flags, pager, diags);
  if (!v) return NULL;
  size_t nargs = 0;
  for (const uint8_t *r = b; r < b + bn;) {
    uint32_t f;
    int wt;
    const uint8_t *sub;
    size_t subn;
    if (hpb_wire_next(&r, b + bn, &f, &wt, &sub, &subn) != 0) {
      report(diags, filename, "xla.HloUnoptimizedSnapshot.partitions: malformed");
      goto fail;
    }
    nargs += f == 1 && wt == 2;
  }
  v->values = hlc_arena_alloc(&v->arena, (nargs + 1) * sizeof *v->values);
  if (!v->values) { report(diags, filename, "out of memory"); goto fail; }
  for (const uint8_t *r = b; r < b + bn;) {
    uint32_t f;
    int wt;
    const uint8_t *sub = NULL;
    size_t subn = 0;
    hpb_wire_next(&r, b + bn, &f, &wt, &sub, &subn);
    if (f != 1 || wt != 2) continue;
    char path[112];
    snprintf(path, sizeof path, "xla.HloUnoptimizedSnapshot.partitions[%d].arguments[%d]", part,
             (int)v->n);
    HloLiteral *l = decode_literal(v, sub, subn, filename, path, diags, flags);
    if (!l) goto fail;
    v->values[v->n++] = l;
  }
  return v;
fail:
  hpb_values_free(v);
  return NULL;
}

void hpb_values_free(HpbValues *v) {
  if (!v) return;
  hlc_arena_free(&v->arena);
  free(v);
}
