/* literal.c: ShapeProto and LiteralProto to the IR's HloShape and HloLiteral.
 *
 * XLA writes a literal's elements in its PHYSICAL order (the shape's layout;
 * LiteralBase::Piece::WriteToProto copies the buffer as it lies), 16-bit
 * types and f8/f4 types as little-endian bytes, sub-byte integers one per
 * byte (host literals are unpacked: ShapeUtil::DeviceShapeToHostShape drops
 * element_size_in_bits) with the value in the low bits, complex numbers as
 * interleaved (real, imag). Here they become dense row-major arrays in
 * hlorun's memory form. Element counts are checked against the shape before
 * anything is allocated for them (packed varints: bounded by their bytes,
 * then counted exactly while decoded). The elements come from protobuf-c's
 * unpacked fields or straight from the wire bytes (HpbElems), and go into an
 * arena or a buffer the caller gives (hpb_elems_decode), in runs, so that
 * a file's payload read on demand (common/pager.h) is held a run at a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proto/hlo.pb-c.h"
#include "proto/lower.h"
#include "common/numeric.h"

/* Bytes of a paged payload held at once while its varints are counted. */
enum { PIECE = 16 << 20 };

int hpb_shape(HlcArena *a, const Xla__ShapeProto *sp, HloShape *out, char *err, size_t errn) {
  memset(out, 0, sizeof *out);
  if (!sp) { snprintf(err, errn, "xla.ShapeProto: missing"); return -1; }
  if (sp->element_type == XLA__PRIMITIVE_TYPE__TUPLE) {
    out->dtype = HLO_TUPLE;
    out->ntuple = (int32_t)sp->n_tuple_shapes;
    if (sp->n_tuple_shapes > 0) {
      out->tuple = hlc_arena_alloc(a, sp->n_tuple_shapes * sizeof *out->tuple);
      if (!out->tuple) { snprintf(err, errn, "out of memory"); return -1; }
      for (size_t i = 0; i < sp->n_tuple_shapes; i++)
        if (hpb_shape(a, sp->tuple_shapes[i], &out->tuple[i], err, errn) != 0) return -1;
    }
    return 0;
  }
  HloDtype t = sp->element_type == XLA__PRIMITIVE_TYPE__TOKEN ? HLO_TOKEN
               : hlc_dtype_from_xla_code((int)sp->element_type);
  if (t == HLO_DTYPE_INVALID || sp->element_type == XLA__PRIMITIVE_TYPE__PRIMITIVE_TYPE_INVALID) {
    snprintf(err, errn, "xla.ShapeProto.element_type: %d is not an element type hlorun reads",
             (int)sp->element_type);
    return -1;
  }
  out->dtype = t;
  if (t == HLO_TOKEN) return 0;
  if (sp->n_dimensions > 256) { snprintf(err, errn, "xla.ShapeProto.dimensions: rank %zu", sp->n_dimensions); return -1; }
  out->rank = (int32_t)sp->n_dimensions;
  out->dims = hlc_arena_alloc(a, sp->n_dimensions * sizeof(int64_t) + 1);
  if (!out->dims) { snprintf(err, errn, "out of memory"); return -1; }
  if (sp->n_dimensions) memcpy(out->dims, sp->dimensions, sp->n_dimensions * sizeof(int64_t));
  for (size_t i = 0; i < sp->n_dimensions; i++)
    if (sp->dimensions[i] < 0) {
      snprintf(err, errn, "xla.ShapeProto.dimensions[%zu]: %lld is negative", i, (long long)sp->dimensions[i]);
      return -1;
    }
  if (sp->n_is_dynamic_dimension) {
    if (sp->n_is_dynamic_dimension != sp->n_dimensions) {
      snprintf(err, errn, "xla.ShapeProto.is_dynamic_dimension: %zu entries for rank %zu",
               sp->n_is_dynamic_dimension, sp->n_dimensions);
      return -1;
    }
    bool any = false;
    for (size_t i = 0; i < sp->n_dimensions; i++) any |= sp->is_dynamic_dimension[i] != 0;
    if (any) {
      out->dynamic = hlc_arena_alloc(a, sp->n_dimensions + 1);
      if (!out->dynamic) { snprintf(err, errn, "out of memory"); return -1; }
      for (size_t i = 0; i < sp->n_dimensions; i++)
        out->dynamic[i] = sp->is_dynamic_dimension[i] ? HLO_DIM_BOUNDED : HLO_DIM_STATIC;
    }
  }
  const Xla__LayoutProto *l = sp->layout;
  if (!l) return 0;
  if (l->n_minor_to_major != sp->n_dimensions) {
    snprintf(err, errn, "xla.LayoutProto.minor_to_major: %zu entries for rank %zu",
             l->n_minor_to_major, sp->n_dimensions);
    return -1;
  }
  uint8_t seen[256] = {0};
  for (size_t i = 0; i < l->n_minor_to_major; i++) {
    int64_t d = l->minor_to_major[i];
    if (d < 0 || d >= (int64_t)sp->n_dimensions || seen[d]++) {
      snprintf(err, errn, "xla.LayoutProto.minor_to_major: not a permutation of 0..%zu",
               sp->n_dimensions ? sp->n_dimensions - 1 : 0);
      return -1;
    }
  }
  out->minor_to_major = hlc_arena_alloc(a, l->n_minor_to_major * sizeof(int64_t) + 1);
  if (!out->minor_to_major) { snprintf(err, errn, "out of memory"); return -1; }
  if (l->n_minor_to_major) memcpy(out->minor_to_major, l->minor_to_major, l->n_minor_to_major * sizeof(int64_t));
  out->layout_written = true;
  /* Tiles, element size and memory space in HLO layout syntax: T(8,128)E(4)S(1). */
  char tail[512];
  size_t tn = 0;
  tail[0] = 0;
  for (size_t i = 0; i < l->n_tiles && tn < sizeof tail - 64; i++) {
    tn += (size_t)snprintf(tail + tn, sizeof tail - tn, "T(");
    for (size_t k = 0; k < l->tiles[i]->n_dimensions && tn < sizeof tail - 32; k++)
      tn += (size_t)snprintf(tail + tn, sizeof tail - tn, "%s%lld", k ? "," : "",
                             (long long)l->tiles[i]->dimensions[k]);
    tn += (size_t)snprintf(tail + tn, sizeof tail - tn, ")");
  }
  if (l->element_size_in_bits && tn < sizeof tail - 32)
    tn += (size_t)snprintf(tail + tn, sizeof tail - tn, "E(%lld)", (long long)l->element_size_in_bits);
  if (l->memory_space && tn < sizeof tail - 32)
    tn += (size_t)snprintf(tail + tn, sizeof tail - tn, "S(%lld)", (long long)l->memory_space);
  if (tn) out->layout_tail = hlc_arena_strndup(a, tail, tn);
  return 0;
}

/* ---- Element fields ----------------------------------------------------------- */

/* Each element type's LiteralProto field: its number and name, bytes per
 * element in memory and how the wire holds it (little-endian bytes in a
 * bytes field or a packed fixed-width field, or packed varints). */
typedef struct FieldInfo { uint32_t num; const char *name; uint8_t form; } FieldInfo;

static int field_info(HloDtype t, FieldInfo *fi) {
#define F(num_, name_, form_) do { fi->num = num_; fi->name = name_; fi->form = form_; return 0; } while (0)
  switch (t) {
  case HLO_PRED: F(2, "preds", HPB_FORM_VARINT);
  case HLO_S1: F(30, "s1s", HPB_FORM_LE); case HLO_S2: F(26, "s2s", HPB_FORM_LE);
  case HLO_S4: F(21, "s4s", HPB_FORM_LE); case HLO_S8: F(15, "s8s", HPB_FORM_LE);
  case HLO_U1: F(31, "u1s", HPB_FORM_LE); case HLO_U2: F(27, "u2s", HPB_FORM_LE);
  case HLO_U4: F(22, "u4s", HPB_FORM_LE); case HLO_U8: F(3, "u8s", HPB_FORM_LE);
  case HLO_S16: F(17, "s16s", HPB_FORM_LE); case HLO_U16: F(16, "u16s", HPB_FORM_LE);
  case HLO_F16: F(11, "f16s", HPB_FORM_LE); case HLO_BF16: F(13, "bf16s", HPB_FORM_LE);
  case HLO_S32: F(4, "s32s", HPB_FORM_VARINT); case HLO_S64: F(5, "s64s", HPB_FORM_VARINT);
  case HLO_U32: F(6, "u32s", HPB_FORM_VARINT); case HLO_U64: F(7, "u64s", HPB_FORM_VARINT);
  case HLO_F32: F(8, "f32s", HPB_FORM_LE); case HLO_F64: F(9, "f64s", HPB_FORM_LE);
  case HLO_C64: F(12, "c64s", HPB_FORM_LE); case HLO_C128: F(18, "c128s", HPB_FORM_LE);
  case HLO_F8E5M2: F(19, "f8e5m2s", HPB_FORM_LE); case HLO_F8E4M3: F(28, "f8e4m3s", HPB_FORM_LE);
  case HLO_F8E4M3FN: F(20, "f8e4m3fns", HPB_FORM_LE);
  case HLO_F8E4M3B11FNUZ: F(23, "f8e4m3b11fnuzs", HPB_FORM_LE);
  case HLO_F8E3M4: F(29, "f8e3m4s", HPB_FORM_LE); case HLO_F8E5M2FNUZ: F(24, "f8e5m2fnuzs", HPB_FORM_LE);
  case HLO_F8E4M3FNUZ: F(25, "f8e4m3fnuzs", HPB_FORM_LE); case HLO_F8E8M0FNU: F(33, "f8e8m0fnus", HPB_FORM_LE);
  case HLO_F4E2M1FN: F(32, "f4e2m1fns", HPB_FORM_LE);
  default: return -1;
  }
#undef F
}

uint32_t hpb_element_field(HloDtype t) {
  FieldInfo fi;
  return field_info(t, &fi) == 0 ? fi.num : 0;
}

bool hpb_is_element_field(uint32_t f) {
  return (f >= 2 && f <= 9) || (f >= 11 && f <= 33 && f != 14);   /* 10: tuple_literals; 14: none */
}

int hpb_elems_wire(HloDtype t, const uint8_t *p, size_t n, HpbElems *e) {
  FieldInfo fi;
  if (field_info(t, &fi) != 0) return -1;
  e->p = p;
  e->len = n;
  e->pager = NULL;
  e->form = fi.form;
  e->field = fi.name;
  e->width = (uint8_t)hlc_dtype_size(t);
  e->count = fi.form == HPB_FORM_VARINT ? HPB_COUNT_UNKNOWN : n % e->width ? HPB_COUNT_RAGGED : n / e->width;
  return 0;
}

int hpb_elems_of(const Xla__LiteralProto *lp, HloDtype t, HpbElems *e) {
  FieldInfo fi;
  if (field_info(t, &fi) != 0) return -1;
  e->field = fi.name;
  e->width = (uint8_t)hlc_dtype_size(t);
  e->form = HPB_FORM_LE;
  e->pager = NULL;
#define BYTES(name) do { e->p = lp->name.data; e->len = lp->name.len; } while (0)
#define REP(name, k) do { e->p = (const uint8_t *)lp->name; e->len = lp->n_##name * sizeof *lp->name; \
    if (lp->n_##name % (k)) { e->count = HPB_COUNT_RAGGED; return 0; } } while (0)
  switch (t) {
  case HLO_PRED: REP(preds, 1); e->form = HPB_FORM_BOOLS; e->count = lp->n_preds; return 0;
  case HLO_S1: BYTES(s1s); break; case HLO_S2: BYTES(s2s); break; case HLO_S4: BYTES(s4s); break;
  case HLO_S8: BYTES(s8s); break; case HLO_U1: BYTES(u1s); break; case HLO_U2: BYTES(u2s); break;
  case HLO_U4: BYTES(u4s); break; case HLO_U8: BYTES(u8s); break;
  case HLO_S16: BYTES(s16s); break; case HLO_U16: BYTES(u16s); break;
  case HLO_F16: BYTES(f16s); break; case HLO_BF16: BYTES(bf16s); break;
  /* protobuf-c's repeated scalars are already in memory form (this host is little-endian). */
  case HLO_S32: REP(s32s, 1); break; case HLO_S64: REP(s64s, 1); break;
  case HLO_U32: REP(u32s, 1); break; case HLO_U64: REP(u64s, 1); break;
  case HLO_F32: REP(f32s, 1); break; case HLO_F64: REP(f64s, 1); break;
  case HLO_C64: REP(c64s, 2); break; case HLO_C128: REP(c128s, 2); break;
  case HLO_F8E5M2: BYTES(f8e5m2s); break; case HLO_F8E4M3: BYTES(f8e4m3s); break;
  case HLO_F8E4M3FN: BYTES(f8e4m3fns); break; case HLO_F8E4M3B11FNUZ: BYTES(f8e4m3b11fnuzs); break;
  case HLO_F8E3M4: BYTES(f8e3m4s); break; case HLO_F8E5M2FNUZ: BYTES(f8e5m2fnuzs); break;
  case HLO_F8E4M3FNUZ: BYTES(f8e4m3fnuzs); break; case HLO_F8E8M0FNU: BYTES(f8e8m0fnus); break;
  case HLO_F4E2M1FN: BYTES(f4e2m1fns); break;
  default: return -1;
  }
#undef BYTES
#undef REP
  e->count = e->len % e->width ? HPB_COUNT_RAGGED : e->len / e->width;
  return 0;
}

/* Elements in a shape, without overflow; -1 if too many. */
static int shape_count(const HloShape *shape, uint64_t *n) {
  *n = 1;
  for (int32_t i = 0; i < shape->rank; i++) {
    uint64_t d = (uint64_t)shape->dims[i];
    if (d && *n > UINT64_MAX / d) return -1;
    *n *= d;
  }
  return 0;
}

static void size_error(const HpbElems *e, const HloShape *shape, uint64_t have, uint64_t n, char *err,
                       size_t errn) {
  snprintf(err, errn, "xla.LiteralProto.%s: %llu elements, the shape %s[...] of rank %d holds %llu",
           e->field, (unsigned long long)have, hlc_dtype_name(shape->dtype), (int)shape->rank,
           (unsigned long long)n);
}

int hpb_elems_check(const HpbElems *e, const HloShape *shape, uint64_t *n, char *err, size_t errn) {
  if (shape_count(shape, n) != 0) { snprintf(err, errn, "xla.ShapeProto.dimensions: too many elements"); return -1; }
  if (e->count == HPB_COUNT_RAGGED) {
    snprintf(err, errn, "xla.LiteralProto.%s: its size is not a whole number of %s elements", e->field,
             hlc_dtype_name(shape->dtype));
    return -1;
  }
  /* Packed varints are counted while they are decoded; a varint is 1 to 10
   * bytes, which bounds the count by the bytes present before anything is
   * allocated for it. */
  if (e->count == HPB_COUNT_UNKNOWN) {
    if (*n <= e->len && (*n > 0 || e->len == 0) && e->len / 10 <= *n) return 0;
    uint64_t have = 0;   /* the count cannot fit: say what it is (one varint ends per byte < 0x80) */
    for (size_t o = 0; o < e->len;) {   /* in pieces: a paged payload is held a piece at a time */
      size_t m = e->len - o < PIECE ? e->len - o : PIECE;
      hlc_need(e->pager, e->p + o, m);
      for (size_t i = o; i < o + m; i++) have += !(e->p[i] & 0x80);
      hlc_done(e->pager, e->p + o, m);
      o += m;
    }
    if (have == *n) return 0;   /* malformed: the decoder says so */
    size_error(e, shape, have, *n, err, errn);
    return -1;
  }
  if (e->count != *n) { size_error(e, shape, e->count, *n, err, errn); return -1; }
  return 0;
}

/* One varint; 0 on success. */
static inline int varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  const uint8_t *q = *p;
  if (q < end && !(*q & 0x80)) { *v = *q; *p = q + 1; return 0; }
  uint64_t r = 0;
  for (int s = 0; s < 70 && q < end; s += 7) {
    uint8_t b = *q++;
    r |= (uint64_t)(b & 0x7f) << s;
    if (!(b & 0x80)) { *v = r; *p = q; return 0; }
  }
  return -1;
}

/* m elements of type t from *cur (advanced) into out, in memory form;
 * -1 with err if the varints end or are malformed first (*got: how many
 * were decoded). */
static int decode_run(const HpbElems *e, HloDtype t, const uint8_t **cur, size_t m, unsigned char *out,
                      size_t *got) {
  const uint8_t *q = *cur, *end = e->p + e->len;
  *got = m;
  if (e->form == HPB_FORM_VARINT) {
    size_t es = e->width;
    for (size_t i = 0; i < m; i++) {
      uint64_t v;
      if (varint(&q, end, &v) != 0) { *got = i; *cur = q; return -1; }
      /* int32/uint32 keep their low 32 bits (a negative int32 is written sign-extended to 64). */
      if (t == HLO_PRED) out[i] = v != 0;
      else if (es == 4) { uint32_t w = (uint32_t)v; memcpy(out + i * 4, &w, 4); }
      else memcpy(out + i * 8, &v, 8);
    }
    *cur = q;
    return 0;
  }
  if (e->form == HPB_FORM_BOOLS) {
    const protobuf_c_boolean *b = (const protobuf_c_boolean *)q;
    for (size_t i = 0; i < m; i++) out[i] = b[i] != 0;
    *cur = (const uint8_t *)(b + m);
    return 0;
  }
  int bits = hlc_dtype_bits(t);
  if (bits < 8 && hlc_dtype_is_int(t)) {
    /* One element per byte, the value in the low bits; the upper bits are unspecified. */
    unsigned mask = (1u << bits) - 1, sign = 1u << (bits - 1);
    bool sgn = hlc_dtype_kind(t) == HLO_KIND_SINT;
    for (size_t i = 0; i < m; i++) {
      unsigned v = q[i] & mask;
      out[i] = (unsigned char)(sgn && (v & sign) ? v | ~mask : v);
    }
  } else if (t == HLO_F4E2M1FN) {
    for (size_t i = 0; i < m; i++) out[i] = q[i] & 0xf;
  } else {
    memcpy(out, q, m * e->width);   /* little-endian bytes: the memory form on this host */
  }
  *cur = q + m * e->width;
  return 0;
}

int hpb_elems_decode(const HpbElems *e, const HloShape *shape, uint64_t n, void *dst, char *err,
                     size_t errn) {
  HloDtype t = shape->dtype;
  size_t es = hlc_dtype_size(t);
  const uint8_t *cur = e->p, *end = e->p + e->len;
  unsigned char *out = dst;
  /* Bools come from protobuf-c's copy, never from a file's image. */
  HlcPager *pg = e->form == HPB_FORM_BOOLS ? NULL : e->pager;
  int32_t r = shape->rank;
  bool physical_is_logical = true;
  if (shape->minor_to_major)
    for (int32_t i = 0; i < r; i++) physical_is_logical &= shape->minor_to_major[i] == r - 1 - i;
  /* Row-major: straight into dst, in runs of 4 MiB; otherwise through a
   * small buffer, each element placed at its row-major position. */
  enum { BOUNCE = 16384 };
  unsigned char *bounce = NULL;
  size_t run = physical_is_logical ? ((size_t)4 << 20) / es : BOUNCE / es;
  if (!physical_is_logical && !(bounce = malloc(BOUNCE))) { snprintf(err, errn, "out of memory"); return -1; }
  uint8_t *win = NULL;   /* a paged payload's bytes of one run */
  int bits = hlc_dtype_bits(t);
  bool plain = physical_is_logical && e->form == HPB_FORM_LE && e->width == es &&
               !(bits < 8 && hlc_dtype_is_int(t)) && t != HLO_F4E2M1FN;
  int64_t idx[256] = {0}, stride[256];
  int64_t s = 1, pos = 0;
  for (int32_t i = r - 1; i >= 0; i--) { stride[i] = s; s *= shape->dims[i]; }
  int rc = 0;
  for (uint64_t k = 0; k < n;) {
    size_t m = n - k < run ? (size_t)(n - k) : run, got;
    int bad = 0;
    if (plain) {   /* the wire's bytes are the values' (count checked): read straight into dst */
      hlc_copy(pg, out + k * es, cur, m * es);
      cur += m * es;
    } else if (pg) {
      /* A paged payload: the bytes m elements can take (a varint is at
       * most 10) read into the window, decoded from there. */
      size_t span = (size_t)(end - cur), most = e->form == HPB_FORM_VARINT ? m * 10 : m * e->width;
      size_t wn = span < most ? span : most;
      if (!win && !(win = malloc(most))) { snprintf(err, errn, "out of memory"); rc = -1; break; }
      hlc_copy(pg, win, cur, wn);
      HpbElems we = *e;
      we.p = win;
      we.len = wn;
      const uint8_t *wq = win;
      bad = decode_run(&we, t, &wq, m, physical_is_logical ? out + k * es : bounce, &got);
      cur += wq - win;
    } else {
      bad = decode_run(e, t, &cur, m, physical_is_logical ? out + k * es : bounce, &got);
    }
    if (bad) {
      if (cur < e->p + e->len) snprintf(err, errn, "xla.LiteralProto.%s: malformed packed values", e->field);
      else size_error(e, shape, k + got, n, err, errn);
      rc = -1;
      break;
    }
    if (!physical_is_logical)
      for (size_t i = 0; i < m; i++) {
        memcpy(out + (size_t)pos * es, bounce + i * es, es);
        for (int32_t j = 0; j < r; j++) {
          int64_t dd = shape->minor_to_major[j];
          if (++idx[dd] < shape->dims[dd]) { pos += stride[dd]; break; }
          pos -= stride[dd] * (idx[dd] - 1);
          idx[dd] = 0;
        }
      }
    k += m;
  }
  free(win);
  free(bounce);
  if (rc == 0 && e->form == HPB_FORM_VARINT && cur < e->p + e->len) {
    /* More varints than the shape holds: count them for the message. */
    uint64_t extra = 0;
    hlc_need(pg, cur, (size_t)(end - cur));
    for (const uint8_t *q = cur; q < end; q++) extra += !(*q & 0x80);
    hlc_done(pg, cur, (size_t)(end - cur));
    size_error(e, shape, n + extra, n, err, errn);
    rc = -1;
  }
  return rc;
}

int hpb_literal(HlcArena *a, const Xla__LiteralProto *lp, const HloShape *shape, HloLiteral *out,
                char *err, size_t errn) {
  memset(out, 0, sizeof *out);
  out->shape = shape;
  if (shape->dtype == HLO_TUPLE) {
    if (lp->n_tuple_literals != (size_t)shape->ntuple) {
      snprintf(err, errn, "xla.LiteralProto.tuple_literals: %zu elements for a tuple of %d",
               lp->n_tuple_literals, (int)shape->ntuple);
      return -1;
    }
    out->ntuple = shape->ntuple;
    if (shape->ntuple == 0) return 0;
    out->tuple = hlc_arena_alloc(a, (size_t)shape->ntuple * sizeof *out->tuple);
    if (!out->tuple) { snprintf(err, errn, "out of memory"); return -1; }
    for (int32_t i = 0; i < shape->ntuple; i++) {
      char inner[400];
      if (hpb_literal(a, lp->tuple_literals[i], &shape->tuple[i], &out->tuple[i], inner, sizeof inner)) {
        snprintf(err, errn, "xla.LiteralProto.tuple_literals[%d]: %s", (int)i, inner);
        return -1;
      }
    }
    return 0;
  }
  if (!hlc_dtype_is_array(shape->dtype)) return 0;   /* token: no data */
  HpbElems e;
  if (hpb_elems_of(lp, shape->dtype, &e) != 0) {
    snprintf(err, errn, "xla.LiteralProto: element type %s cannot be read from a literal",
             hlc_dtype_name(shape->dtype));
    return -1;
  }
  return hpb_literal_from(a, &e, shape, out, err, errn);
}

int hpb_literal_from(HlcArena *a, const HpbElems *e, const HloShape *shape, HloLiteral *out,
                     char *err, size_t errn) {
  uint64_t n;
  memset(out, 0, sizeof *out);
  out->shape = shape;
  /* The count must match what the wire holds, which bounds it by the file
   * size before anything is allocated. */
  if (hpb_elems_check(e, shape, &n, err, errn) != 0) return -1;
  out->nbytes = (size_t)n * hlc_dtype_size(shape->dtype);
  if (!a) return 0;   /* deferred: the caller decodes into its own buffer */
  out->data = hlc_arena_alloc(a, out->nbytes ? out->nbytes : 1);
  if (!out->data) { snprintf(err, errn, "out of memory (%zu bytes)", out->nbytes); return -1; }
  return hpb_elems_decode(e, shape, n, out->data, err, errn);
}
