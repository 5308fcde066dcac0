/* lower.h: proto messages to IR pieces (literal.c) and to HLO text (to_text.c). */
#ifndef HLORUN_PROTO_LOWER_H
#define HLORUN_PROTO_LOWER_H
#include "common/pager.h"
#include "proto/proto.h"
#include "proto/hlo.pb-c.h"

/* 0, or -1 with err naming the message and field. Allocations in a. */
int hpb_shape(HlcArena *a, const Xla__ShapeProto *sp, HloShape *out, char *err, size_t errn);
int hpb_literal(HlcArena *a, const Xla__LiteralProto *lp, const HloShape *shape, HloLiteral *out,
                char *err, size_t errn);

/* Where an array literal's elements are: in protobuf-c's unpacked fields, or
 * in place in the wire bytes (a file's, so a large argument is decoded
 * straight into the buffer that keeps it, not copied first). */
enum { HPB_FORM_LE,       /* little-endian elements, `width` bytes each (bytes
                             fields, packed fixed-width fields, protobuf-c arrays) */
       HPB_FORM_VARINT,   /* packed varints (preds, s32s, s64s, u32s, u64s) */
       HPB_FORM_BOOLS };  /* protobuf-c's unpacked preds */
#define HPB_COUNT_UNKNOWN ((size_t)-1)   /* varints: counted while decoded */
#define HPB_COUNT_RAGGED ((size_t)-2)    /* not a whole number of elements */
typedef struct HpbElems {
  const uint8_t *p;
  size_t len;          /* bytes */
  size_t count;        /* elements, or one of the HPB_COUNT_ values */
  uint8_t width;       /* bytes per element in memory */
  uint8_t form;
  const char *field;   /* "f32s" */
  HlcPager *pager;     /* p lies in a file's image read on demand (common/pager.h), or NULL */
} HpbElems;

/* The LiteralProto field number holding elements of type t (0 if none);
 * whether field f is one of the element fields. */
uint32_t hpb_element_field(HloDtype t);
bool hpb_is_element_field(uint32_t f);
/* Elements of type t in lp's unpacked field, or in a packed/bytes field's
 * wire payload p[0..n). -1 if t has no element field. */
int hpb_elems_of(const Xla__LiteralProto *lp, HloDtype t, HpbElems *e);
int hpb_elems_wire(HloDtype t, const uint8_t *p, size_t n, HpbElems *e);
/* 0 if e holds as many elements as shape (*n: how many; varints are
 * bounded here by their bytes and counted exactly by the decoder), else -1
 * with err naming the field. */
int hpb_elems_check(const HpbElems *e, const HloShape *shape, uint64_t *n, char *err, size_t errn);
/* The n elements of e into dst (row-major, memory form), following shape's
 * layout; with a pager, e's bytes are read piece by piece and given back
 * once decoded. -1 with err on malformed varints or a count that differs
 * from n. */
int hpb_elems_decode(const HpbElems *e, const HloShape *shape, uint64_t n, void *dst, char *err,
                     size_t errn);
/* An array literal of shape from e: checked, then decoded into arena a, or
 * with a NULL left deferred (data NULL, nbytes set) for hpb_elems_decode. */
int hpb_literal_from(HlcArena *a, const HpbElems *e, const HloShape *shape, HloLiteral *out,
                     char *err, size_t errn);
/* The module as HLO text (malloc'd), or NULL with err set. */
char *hpb_text_of_module(const Xla__HloModuleProto *m, size_t *len, char *err, size_t errn);
#endif
