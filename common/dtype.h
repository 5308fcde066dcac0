/* dtype.h: HLO element types and their properties (from dtype.def).
 * Pure tables; no conversion arithmetic (see numeric.h). */
#ifndef HLORUN_COMMON_DTYPE_H
#define HLORUN_COMMON_DTYPE_H
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

typedef enum HloDtype {
#define DTYPE(id, text, bytes, bits, kind, code) HLO_##id,
#include "common/dtype.def"
#undef DTYPE
  HLO_NUM_DTYPES,
  HLO_DTYPE_INVALID = -1
} HloDtype;

typedef enum HloKind {
  HLO_KIND_PRED, HLO_KIND_SINT, HLO_KIND_UINT, HLO_KIND_FLOAT,
  HLO_KIND_COMPLEX, HLO_KIND_TOKEN, HLO_KIND_OPAQUE, HLO_KIND_TUPLE
} HloKind;

const char *hlc_dtype_name(HloDtype t);        /* "f32"; "?" if invalid */
HloDtype hlc_dtype_from_name(const char *s, size_t n); /* HLO_DTYPE_INVALID if unknown */
size_t hlc_dtype_size(HloDtype t);             /* bytes per element in memory */
int hlc_dtype_bits(HloDtype t);                /* logical bit width */
HloKind hlc_dtype_kind(HloDtype t);
int hlc_dtype_xla_code(HloDtype t);            /* xla::PrimitiveType / XLA_FFI_DataType */
HloDtype hlc_dtype_from_xla_code(int code);    /* HLO_DTYPE_INVALID if unknown */

static inline bool hlc_dtype_is_float(HloDtype t) { return hlc_dtype_kind(t) == HLO_KIND_FLOAT; }
static inline bool hlc_dtype_is_complex(HloDtype t) { return hlc_dtype_kind(t) == HLO_KIND_COMPLEX; }
static inline bool hlc_dtype_is_int(HloDtype t) {
  HloKind k = hlc_dtype_kind(t);
  return k == HLO_KIND_SINT || k == HLO_KIND_UINT;
}
static inline bool hlc_dtype_is_array(HloDtype t) {
  HloKind k = hlc_dtype_kind(t);
  return k != HLO_KIND_TUPLE && k != HLO_KIND_TOKEN && k != HLO_KIND_OPAQUE;
}
#endif
