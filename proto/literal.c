/* literal.c: ShapeProto and LiteralProto to the IR's HloShape and HloLiteral.
 *
 * XLA writes a literal's elements in its PHYSICAL order (the shape's layout;
 * LiteralBase::Piece::WriteToProto copies the buffer as it lies), 16-bit
 * types and f8/f4 types as little-endian bytes, sub-byte integers one per
 * byte (host literals are unpacked: ShapeUtil::DeviceShapeToHostShape drops
 * element_size_in_bits) with the value in the low bits, complex numbers as
 * interleaved (real, imag). Here they become dense row-major arrays in
 * hlorun's memory form. Element counts are checked against the shape before
 * anything is allocated for them.
 */
#include <stdio.h>
#include <string.h>
#include "proto/hlo.pb-c.h"
#include "proto/lower.h"
#include "common/numeric.h"

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

/* The repeated or bytes field that holds elements of type t, with its count
 * in elements and a pointer to the first one; -1 if t has none. */
typedef struct Elems { const void *p; size_t count; size_t width; const char *field; } Elems;

static int elems_of(const Xla__LiteralProto *lp, HloDtype t, Elems *e) {
#define BYTES(name, w) do { e->p = lp->name.data; e->count = lp->name.len / (w); e->width = (w); \
    e->field = #name; if (lp->name.len % (w)) e->count = (size_t)-1; return 0; } while (0)
#define REP(name, w, k) do { e->p = lp->name; e->count = lp->n_##name / (k); e->width = (w); \
    e->field = #name; if (lp->n_##name % (k)) e->count = (size_t)-1; return 0; } while (0)
  switch (t) {
  case HLO_PRED: REP(preds, sizeof(protobuf_c_boolean), 1);
  case HLO_S1: BYTES(s1s, 1); case HLO_S2: BYTES(s2s, 1); case HLO_S4: BYTES(s4s, 1);
  case HLO_S8: BYTES(s8s, 1);
  case HLO_U1: BYTES(u1s, 1); case HLO_U2: BYTES(u2s, 1); case HLO_U4: BYTES(u4s, 1);
  case HLO_U8: BYTES(u8s, 1);
  case HLO_S16: BYTES(s16s, 2); case HLO_U16: BYTES(u16s, 2);
  case HLO_F16: BYTES(f16s, 2); case HLO_BF16: BYTES(bf16s, 2);
  case HLO_S32: REP(s32s, 4, 1); case HLO_S64: REP(s64s, 8, 1);
  case HLO_U32: REP(u32s, 4, 1); case HLO_U64: REP(u64s, 8, 1);
  case HLO_F32: REP(f32s, 4, 1); case HLO_F64: REP(f64s, 8, 1);
  case HLO_C64: REP(c64s, 8, 2); case HLO_C128: REP(c128s, 16, 2);
  case HLO_F8E5M2: BYTES(f8e5m2s, 1); case HLO_F8E4M3: BYTES(f8e4m3s, 1);
  case HLO_F8E4M3FN: BYTES(f8e4m3fns, 1); case HLO_F8E4M3B11FNUZ: BYTES(f8e4m3b11fnuzs, 1);
  case HLO_F8E3M4: BYTES(f8e3m4s, 1); case HLO_F8E5M2FNUZ: BYTES(f8e5m2fnuzs, 1);
  case HLO_F8E4M3FNUZ: BYTES(f8e4m3fnuzs, 1); case HLO_F8E8M0FNU: BYTES(f8e8m0fnus, 1);
  case HLO_F4E2M1FN: BYTES(f4e2m1fns, 1);
  default: return -1;
  }
#undef BYTES
#undef REP
}

/* Element k of the wire field into dst, in hlorun's memory form. */
static void put_element(HloDtype t, const Elems *e, size_t k, unsigned char *dst) {
  const unsigned char *src = e->p;
  if (t == HLO_PRED) { dst[0] = ((const protobuf_c_boolean *)e->p)[k] != 0; return; }
  int bits = hlc_dtype_bits(t);
  if (bits < 8 && hlc_dtype_is_int(t)) {
    /* The value is in the low bits; the upper bits are unspecified. */
    unsigned v = src[k] & ((1u << bits) - 1);
    if (hlc_dtype_kind(t) == HLO_KIND_SINT && (v >> (bits - 1))) v |= ~0u << bits;
    dst[0] = (unsigned char)v;
    return;
  }
  if (t == HLO_F4E2M1FN) { dst[0] = src[k] & 0xf; return; }
  /* Everything else: little-endian bytes of the element (also the in-memory
   * layout of repeated scalars on this little-endian host). */
  memcpy(dst, src + k * e->width, e->width);
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
  /* Count the elements without overflow: the count must match what the wire
   * holds, which bounds it by the file size before anything is allocated. */
  uint64_t n = 1;
  for (int32_t i = 0; i < shape->rank; i++) {
    uint64_t d = (uint64_t)shape->dims[i];
    if (d && n > UINT64_MAX / d) { snprintf(err, errn, "xla.ShapeProto.dimensions: too many elements"); return -1; }
    n *= d;
  }
  Elems e;
  if (elems_of(lp, shape->dtype, &e) != 0) {
    snprintf(err, errn, "xla.LiteralProto: element type %s cannot be read from a literal",
             hlc_dtype_name(shape->dtype));
    return -1;
  }
  if (e.count != n) {
    if (e.count == (size_t)-1)
      snprintf(err, errn, "xla.LiteralProto.%s: its size is not a whole number of %s elements",
               e.field, hlc_dtype_name(shape->dtype));
    else
      snprintf(err, errn, "xla.LiteralProto.%s: %zu elements, the shape %s[...] of rank %d holds %llu",
               e.field, e.count, hlc_dtype_name(shape->dtype), (int)shape->rank, (unsigned long long)n);
    return -1;
  }
  size_t es = hlc_dtype_size(shape->dtype);
  out->nbytes = (size_t)n * es;
  out->data = hlc_arena_alloc(a, out->nbytes ? out->nbytes : 1);
  if (!out->data) { snprintf(err, errn, "out of memory (%zu bytes)", out->nbytes); return -1; }
  unsigned char *dst = out->data;
  int32_t r = shape->rank;
  bool physical_is_logical = true;
  if (shape->minor_to_major)
    for (int32_t i = 0; i < r; i++) physical_is_logical &= shape->minor_to_major[i] == r - 1 - i;
  if (physical_is_logical) {
    for (uint64_t k = 0; k < n; k++) put_element(shape->dtype, &e, (size_t)k, dst + k * es);
    return 0;
  }
  /* Walk the physical order (minor_to_major[0] fastest) and place each
   * element at its row-major position. */
  int64_t idx[256] = {0}, stride[256];
  int64_t s = 1;
  for (int32_t i = r - 1; i >= 0; i--) { stride[i] = s; s *= shape->dims[i]; }
  int64_t pos = 0;
  for (uint64_t k = 0; k < n; k++) {
    put_element(shape->dtype, &e, (size_t)k, dst + (size_t)pos * es);
    for (int32_t j = 0; j < r; j++) {
      int64_t d = shape->minor_to_major[j];
      if (++idx[d] < shape->dims[d]) { pos += stride[d]; break; }
      pos -= stride[d] * (idx[d] - 1);
      idx[d] = 0;
    }
  }
  return 0;
}
