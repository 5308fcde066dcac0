/* read.c: the entry points of proto/: a file's bytes to a module or values.
 *
 * Each message is checked against its descriptor (wire.c) before protobuf-c
 * unpacks it, so errors name the message and field. A snapshot is never
 * unpacked whole: the module (field hlo) is unpacked alone, and arguments
 * are unpacked and converted one at a time, so a multi-GB argument is held
 * once as file bytes and once as the dense array (not also as protobuf-c's
 * repeated field for every argument at once).
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
  case HPB_SNAPSHOT:
    hpb_wire_find(p, n, 1, &a, &an);
    hpb_wire_find(a, an, 1, mp, mn);
    *path = "xla.HloSnapshot.hlo.hlo_module";
    return 0;
  default:
    report(d, filename, k == HPB_LITERAL ? "a LiteralProto holds no module"
                                         : "not an HloSnapshot, HloProto or HloModuleProto");
    return -1;
  }
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

static HloLiteral *decode_literal(HpbValues *v, const uint8_t *p, size_t n, const char *filename,
                                  const char *path, HlcDiags *d) {
  Xla__LiteralProto *lp =
      (Xla__LiteralProto *)unpack(&xla__literal_proto__descriptor, p, n, filename, path, d);
  if (!lp) return NULL;
  HloShape *s = hlc_arena_alloc(&v->arena, sizeof *s);
  HloLiteral *l = hlc_arena_alloc(&v->arena, sizeof *l);
  char err[1024], msg[1400];
  int rc = !s || !l ? (snprintf(err, sizeof err, "out of memory"), -1) : 0;
  if (rc == 0 && !lp->shape) rc = (snprintf(err, sizeof err, "xla.LiteralProto.shape: missing"), -1);
  if (rc == 0) rc = hpb_shape(&v->arena, lp->shape, s, err, sizeof err);
  if (rc == 0) rc = hpb_literal(&v->arena, lp, s, l, err, sizeof err);
  protobuf_c_message_free_unpacked(&lp->base, NULL);
  if (rc != 0) {
    snprintf(msg, sizeof msg, "%s: %s", path, err);
    report(d, filename, msg);
    return NULL;
  }
  return l;
}

HpbValues *hpb_read_values(const void *data, size_t len, const char *filename, HlcDiags *diags) {
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
  HpbValues *v = calloc(1, sizeof *v);
  if (!v) { report(diags, filename, "out of memory"); return NULL; }
  hlc_arena_init(&v->arena);
  if (k == HPB_LITERAL) {
    v->values = hlc_arena_alloc(&v->arena, sizeof *v->values);
    if (!v->values || !(v->values[0] = decode_literal(v, p, len, filename, "xla.LiteralProto", diags)))
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
    if ((f != 2 && f != 3) || wt != 2) continue;
    char path[96];
    if (f == 2) snprintf(path, sizeof path, "%s.arguments[%d]", msgname, (int)v->n);
    else snprintf(path, sizeof path, "%s.result", msgname);
    HloLiteral *l = decode_literal(v, sub, subn, filename, path, diags);
    if (!l) goto fail;
    if (f == 2) v->values[v->n++] = l;
    else v->result = l;
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
