/* wire.c: the protocol-buffer wire format walked without decoding it.
 *
 * Two jobs: recognise what a file holds (hpb_sniff) from the shape of its
 * nested fields, and check a message against its protobuf-c descriptor before
 * protobuf-c unpacks it, so a truncated or corrupted file is reported with the
 * message and field where it goes wrong (protobuf-c itself only says "no").
 * Nothing here allocates.
 */
#include <string.h>
#include <protobuf-c/protobuf-c.h>
#include "proto/proto.h"
#include "proto/wire.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };

/* One varint at *p (at most 10 bytes); 0 on success. */
static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  uint64_t r = 0;
  for (int s = 0; s < 70 && *p < end; s += 7) {
    uint8_t b = *(*p)++;
    r |= (uint64_t)(b & 0x7f) << s;
    if (!(b & 0x80)) { *v = r; return 0; }
  }
  return -1;
}

/* Advance over one field; fills its number, wire type and (LEN) payload. */
int hpb_wire_next(const uint8_t **p, const uint8_t *end, uint32_t *field, int *wt,
                      const uint8_t **sub, size_t *subn) {
  uint64_t key, v;
  if (get_varint(p, end, &key) != 0) return -1;
  *field = (uint32_t)(key >> 3);
  *wt = (int)(key & 7);
  if (*field == 0 || key >> 3 > 0x1fffffff) return -1;
  switch (*wt) {
  case WT_VARINT: return get_varint(p, end, &v);
  case WT_I64: if (end - *p < 8) return -1; *p += 8; return 0;
  case WT_I32: if (end - *p < 4) return -1; *p += 4; return 0;
  case WT_LEN:
    if (get_varint(p, end, &v) != 0 || v > (uint64_t)(end - *p)) return -1;
    *sub = *p;
    *subn = (size_t)v;
    *p += v;
    return 0;
  default: return -1;   /* groups are not used by any message read here */
  }
}

int hpb_wire_valid(const uint8_t *p, size_t n) {
  const uint8_t *end = p + n, *sub;
  size_t subn;
  uint32_t f;
  int wt;
  while (p < end)
    if (hpb_wire_next(&p, end, &f, &wt, &sub, &subn) != 0) return 0;
  return 1;
}

int hpb_wire_find(const uint8_t *p, size_t n, uint32_t field, const uint8_t **sub, size_t *subn) {
  const uint8_t *end = p + n, *s = NULL;
  size_t sn = 0;
  uint32_t f;
  int wt;
  while (p < end) {
    if (hpb_wire_next(&p, end, &f, &wt, &s, &sn) != 0) return -1;
    if (f == field && wt == WT_LEN) { *sub = s; *subn = sn; return 0; }
  }
  return -1;
}

/* A well-formed message whose field `field` is a well-formed message. */
static int has_message(const uint8_t *p, size_t n, uint32_t field, const uint8_t **sub, size_t *subn) {
  return hpb_wire_valid(p, n) && hpb_wire_find(p, n, field, sub, subn) == 0 &&
         hpb_wire_valid(*sub, *subn);
}

/* HloModuleProto: computations (3) holding instructions (2). */
static int looks_like_module(const uint8_t *p, size_t n) {
  const uint8_t *c, *i;
  size_t cn, in;
  return has_message(p, n, 3, &c, &cn) && has_message(c, cn, 2, &i, &in);
}

/* LiteralProto: shape (1) holding element_type (2, a varint). */
static int looks_like_literal(const uint8_t *p, size_t n) {
  const uint8_t *s, *end;
  size_t sn;
  if (!has_message(p, n, 1, &s, &sn) || sn == 0) return 0;
  end = s + sn;
  while (s < end) {
    uint32_t f;
    int wt;
    const uint8_t *x;
    size_t xn;
    if (hpb_wire_next(&s, end, &f, &wt, &x, &xn) != 0) return 0;
    if (f == 2) return wt == WT_VARINT;
  }
  return 0;
}

/* Arguments (2) or a result (3) that are literals, and no field 1. */
static int looks_like_iteration(const uint8_t *p, size_t n) {
  const uint8_t *s;
  size_t sn;
  if (hpb_wire_find(p, n, 1, &s, &sn) == 0) return 0;
  return (hpb_wire_find(p, n, 2, &s, &sn) == 0 && looks_like_literal(s, sn)) ||
         (hpb_wire_find(p, n, 3, &s, &sn) == 0 && looks_like_literal(s, sn));
}

static int starts_like_module_text(const uint8_t *p, size_t n) {
  size_t i = 0;
  while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) i++;
  return n - i >= 9 && memcmp(p + i, "HloModule", 9) == 0;
}

HpbKind hpb_sniff(const void *data, size_t len) {
  const uint8_t *p = data, *a, *b;
  size_t an, bn;
  /* Text that starts "HloModule" is never a proto. A comment start ('#',
   * '/') or white space is not enough to say so: a module whose name is 35
   * bytes long starts with field 1's key 0x0a ('\n') then its length 0x23
   * ('#'). Such text is told apart by the structure checks below, which no
   * text passes. */
  if (!p || len == 0 || starts_like_module_text(p, len) || !hpb_wire_valid(p, len)) return HPB_NOT_PROTO;
  if (has_message(p, len, 1, &a, &an)) {
    if (has_message(a, an, 1, &b, &bn) && looks_like_module(b, bn)) return HPB_SNAPSHOT;
    /* HloProto's field 2 is reserved (an old hlo_ordering): partitions hold
     * literals, or nothing. */
    const uint8_t *c;
    size_t cn;
    if (looks_like_module(a, an) && has_message(p, len, 2, &b, &bn) &&
        (bn == 0 || (has_message(b, bn, 1, &c, &cn) && looks_like_literal(c, cn))))
      return HPB_UNOPT_SNAPSHOT;
    if (looks_like_module(a, an)) return HPB_HLO_PROTO;
  }
  if (looks_like_module(p, len)) return HPB_MODULE;
  if (looks_like_literal(p, len)) return HPB_LITERAL;
  /* run_hlo_module's literals: iterations (1) of arguments (2) and result (3). */
  if (looks_like_iteration(p, len)) return HPB_ITERATION;
  if (has_message(p, len, 1, &a, &an) && looks_like_iteration(a, an)) return HPB_RUN_LITERALS;
  return HPB_NOT_PROTO;
}

const char *hpb_kind_name(HpbKind k) {
  switch (k) {
  case HPB_MODULE: return "HloModuleProto";
  case HPB_HLO_PROTO: return "HloProto";
  case HPB_SNAPSHOT: return "HloSnapshot";
  case HPB_UNOPT_SNAPSHOT: return "HloUnoptimizedSnapshot";
  case HPB_LITERAL: return "LiteralProto";
  case HPB_ITERATION: return "RunHloModuleIterationLiterals";
  case HPB_RUN_LITERALS: return "RunHloModuleLiterals";
  default: return "not a protocol buffer";
  }
}

/* ---- Checking a message against its descriptor --------------------------- */

static int wire_type_of(ProtobufCType t) {
  switch (t) {
  case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
    return WT_I64;
  case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_FLOAT:
    return WT_I32;
  case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_BYTES: case PROTOBUF_C_TYPE_MESSAGE:
    return WT_LEN;
  default: return WT_VARINT;
  }
}

static const char *wire_type_name(int wt) {
  static const char *names[] = {"varint", "64-bit", "length-delimited", "group start",
                                "group end", "32-bit", "6", "7"};
  return names[wt & 7];
}

/* Fixed-size elements of a packed field must fill it exactly. */
static int packed_ok(const ProtobufCFieldDescriptor *fd, const uint8_t *p, size_t n) {
  int wt = wire_type_of(fd->type);
  if (wt == WT_I64) return n % 8 == 0;
  if (wt == WT_I32) return n % 4 == 0;
  const uint8_t *end = p + n;
  uint64_t v;
  while (p < end)
    if (get_varint(&p, end, &v) != 0) return 0;
  return 1;
}

int hpb_wire_check(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n, int depth,
                   char *where, size_t where_cap) {
  const uint8_t *end = p + n, *sub = NULL;
  size_t subn = 0;
  if (depth > 64) {
    snprintf(where, where_cap, "%s: messages nested more than 64 deep", d->name);
    return -1;
  }
  while (p < end) {
    uint32_t f;
    int wt;
    const uint8_t *at = p;
    if (hpb_wire_next(&p, end, &f, &wt, &sub, &subn) != 0) {
      uint64_t key = 0;
      const uint8_t *q = at;
      const ProtobufCFieldDescriptor *fd =
          get_varint(&q, end, &key) == 0 ? protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3)) : NULL;
      snprintf(where, where_cap, "%s%s%s: truncated or malformed field%s", d->name,
               fd ? "." : "", fd ? fd->name : "", (key & 7) == 3 || (key & 7) > 5 ? " (bad wire type)" : "");
      return -1;
    }
    const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(d, f);
    if (!fd) continue;   /* a field this schema does not read */
    int want = wire_type_of(fd->type);
    bool packed = fd->label == PROTOBUF_C_LABEL_REPEATED && want != WT_LEN && wt == WT_LEN;
    if (wt != want && !packed) {
      snprintf(where, where_cap, "%s.%s: wire type %s, expected %s", d->name, fd->name,
               wire_type_name(wt), wire_type_name(want));
      return -1;
    }
    if (packed && !packed_ok(fd, sub, subn)) {
      snprintf(where, where_cap, "%s.%s: malformed packed values", d->name, fd->name);
      return -1;
    }
    if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
      char inner[512];
      if (hpb_wire_check(fd->descriptor, sub, subn, depth + 1, inner, sizeof inner) != 0) {
        snprintf(where, where_cap, "%s.%s: %s", d->name, fd->name, inner);
        return -1;
      }
    }
  }
  return 0;
}

int hpb_looks_binary(const void *data, size_t len) {
  const uint8_t *p = data;
  size_t n = len < 4096 ? len : 4096;
  /* A message starts with a key: field 1-15, wire type varint or length. */
  if (!n || p[0] < 0x08 || p[0] > 0x7f || ((p[0] & 7) != 0 && (p[0] & 7) != 2)) return 0;
  for (size_t i = 0; i < n; i++)
    if (p[i] < 0x09 || (p[i] > 0x0d && p[i] < 0x20)) return 1;
  return 0;
}

void hpb_wire_explain(const void *data, size_t len, char *msg, size_t cap) {
  const uint8_t *p = data, *start = data, *end = p + len, *sub;
  size_t subn;
  uint32_t f;
  int wt;
  while (p < end) {
    const uint8_t *at = p;
    if (hpb_wire_next(&p, end, &f, &wt, &sub, &subn) != 0) {
      uint64_t key = 0;
      const uint8_t *q = at;
      if (get_varint(&q, end, &key) != 0) {
        snprintf(msg, cap, "the bytes end inside a field key at byte %zu", (size_t)(at - start));
        return;
      }
      snprintf(msg, cap, "field %llu (wire type %s) at byte %zu is truncated or malformed",
               (unsigned long long)(key >> 3), wire_type_name((int)(key & 7)), (size_t)(at - start));
      return;
    }
  }
  snprintf(msg, cap, "its fields do not form an HloSnapshot, HloProto, HloModuleProto or LiteralProto");
}
