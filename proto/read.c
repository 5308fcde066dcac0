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
    report(d, filename, k == HPB_LITERAL ? "a LiteralProto holds no module"
                                         : "not an HloSnapshot, HloUnoptimizedSnapshot, HloProto or HloModuleProto");
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

/* Element fields whose wire bytes are the elements themselves (bytes
 * fields, and packed float/double, little-endian as in memory): their
 * payload need not be copied out by protobuf-c before it is decoded. */
static bool raw_element_field(uint32_t f) {
  switch (f) {
  case 3: case 11: case 13: case 15: case 16: case 17: case 21: case 22: case 26: case 27:
  case 19: case 20: case 23: case 24: case 25: case 28: case 29: case 30: case 31: case 32: case 33:
  case 8: case 9: case 12: case 18:
    return true;
  default: return false;
  }
}

/* Point the literal's element field `f` at `len` bytes of the file. */
static void set_raw_field(Xla__LiteralProto *lp, uint32_t f, const uint8_t *p, size_t len) {
#define B(num, name) case num: lp->name.data = (uint8_t *)p; lp->name.len = len; return;
#define R(num, name, w) case num: lp->name = (void *)p; lp->n_##name = len / (w); return;
  switch (f) {
  B(3, u8s) B(11, f16s) B(13, bf16s) B(15, s8s) B(16, u16s) B(17, s16s) B(21, s4s) B(22, u4s)
  B(26, s2s) B(27, u2s) B(19, f8e5m2s) B(20, f8e4m3fns) B(23, f8e4m3b11fnuzs) B(24, f8e5m2fnuzs)
  B(25, f8e4m3fnuzs) B(28, f8e4m3s) B(29, f8e3m4s) B(30, s1s) B(31, u1s) B(32, f4e2m1fns)
  B(33, f8e8m0fnus)
  R(8, f32s, 4) R(9, f64s, 8) R(12, c64s, 4) R(18, c128s, 8)
  default: return;
  }
#undef B
#undef R
}

/* Unpack a LiteralProto without copying its elements: every field but the
 * element field is unpacked by protobuf-c from a small copy of the message
 * that leaves the element field out, and the element field then points into
 * the file's bytes (p). So a 1 GB argument is not copied once more into
 * protobuf-c's repeated field before it is decoded into the dense array.
 * Falls back to a plain unpack when the element field is not one whose wire
 * bytes are the elements, or occurs more than once. *raw_field is the field
 * pointed into (0 if none): it must be cleared before the message is freed. */
static Xla__LiteralProto *unpack_literal(const uint8_t *p, size_t n, const char *filename, const char *path,
                                         HlcDiags *d, uint32_t *raw_field) {
  *raw_field = 0;
  const uint8_t *end = p + n, *big = NULL;
  size_t bign = 0;
  uint32_t bigf = 0;
  int count = 0;
  char where[1024], msg[1400];
  if (hpb_wire_check(&xla__literal_proto__descriptor, p, n, 0, where, sizeof where) != 0)
    return (Xla__LiteralProto *)unpack(&xla__literal_proto__descriptor, p, n, filename, path, d);
  for (const uint8_t *q = p; q < end;) {
    uint32_t f;
    int wt;
    const uint8_t *sub = NULL;
    size_t subn = 0;
    if (hpb_wire_next(&q, end, &f, &wt, &sub, &subn) != 0) break;
    if (wt == 2 && raw_element_field(f) && subn >= 4096) { big = sub; bign = subn; bigf = f; count++; }
  }
  if (count != 1)
    return (Xla__LiteralProto *)unpack(&xla__literal_proto__descriptor, p, n, filename, path, d);
  /* The message without the element field: the bytes before its key and
   * after its payload. */
  const uint8_t *key = p, *q = p;
  for (; q < end;) {
    key = q;
    uint32_t f;
    int wt;
    const uint8_t *sub = NULL;
    size_t subn = 0;
    hpb_wire_next(&q, end, &f, &wt, &sub, &subn);
    if (sub == big) break;
  }
  size_t before = (size_t)(key - p), after = (size_t)(end - (big + bign));
  uint8_t *rest = malloc(before + after + 1);
  if (!rest) { report(d, filename, "out of memory"); return NULL; }
  memcpy(rest, p, before);
  memcpy(rest + before, big + bign, after);
  Xla__LiteralProto *lp = (Xla__LiteralProto *)protobuf_c_message_unpack(&xla__literal_proto__descriptor, NULL,
                                                                          before + after, rest);
  free(rest);
  if (!lp) {
    snprintf(msg, sizeof msg, "%s: xla.LiteralProto: cannot be decoded (malformed or out of memory)", path);
    report(d, filename, msg);
    return NULL;
  }
  set_raw_field(lp, bigf, big, bign);
  *raw_field = bigf;
  return lp;
}

static HloLiteral *decode_literal(HpbValues *v, const uint8_t *p, size_t n, const char *filename,
                                  const char *path, HlcDiags *d) {
  uint32_t raw_field;
  Xla__LiteralProto *lp = unpack_literal(p, n, filename, path, d, &raw_field);
  if (!lp) return NULL;
  HloShape *s = hlc_arena_alloc(&v->arena, sizeof *s);
  HloLiteral *l = hlc_arena_alloc(&v->arena, sizeof *l);
  char err[1024], msg[1400];
  int rc = !s || !l ? (snprintf(err, sizeof err, "out of memory"), -1) : 0;
  if (rc == 0 && !lp->shape) rc = (snprintf(err, sizeof err, "xla.LiteralProto.shape: missing"), -1);
  if (rc == 0) rc = hpb_shape(&v->arena, lp->shape, s, err, sizeof err);
  if (rc == 0) rc = hpb_literal(&v->arena, lp, s, l, err, sizeof err);
  if (raw_field) set_raw_field(lp, raw_field, NULL, 0);   /* the file's bytes: not protobuf-c's to free */
  protobuf_c_message_free_unpacked(&lp->base, NULL);
  if (rc != 0) {
    snprintf(msg, sizeof msg, "%s: %s", path, err);
    report(d, filename, msg);
    return NULL;
  }
  return l;
}

static HpbValues *read_values(const void *data, size_t len, const char *filename, HlcDiags *diags,
                              bool arguments);

HpbValues *hpb_read_values(const void *data, size_t len, const char *filename, HlcDiags *diags) {
  return read_values(data, len, filename, diags, true);
}

HpbValues *hpb_read_result(const void *data, size_t len, const char *filename, HlcDiags *diags) {
  return read_values(data, len, filename, diags, false);
}

static HpbValues *read_values(const void *data, size_t len, const char *filename, HlcDiags *diags,
                              bool arguments) {
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
    if ((f != 2 && f != 3) || wt != 2 || (f == 2 && !arguments)) continue;
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

HpbValues *hpb_read_partition(const void *data, size_t len, const char *filename, HlcDiags *diags,
                              int part) {
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
  HpbValues *v = calloc(1, sizeof *v);
  if (!v) { report(diags, filename, "out of memory"); return NULL; }
  hlc_arena_init(&v->arena);
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
    HloLiteral *l = decode_literal(v, sub, subn, filename, path, diags);
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
