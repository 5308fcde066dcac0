/* dtype.c: lookup functions over the dtype.def table. */
#include "common/dtype.h"
#include <string.h>

static const struct {
  const char *name; size_t bytes; int bits; HloKind kind; int code;
} dtype_info[HLO_NUM_DTYPES] = {
#define DTYPE(id, text, bytes, bits, kind, code) {text, bytes, bits, HLO_KIND_##kind, code},
#include "common/dtype.def"
#undef DTYPE
};

static bool valid(HloDtype t) { return (int)t >= 0 && t < HLO_NUM_DTYPES; }

const char *hlc_dtype_name(HloDtype t) { return valid(t) ? dtype_info[t].name : "?"; }
size_t hlc_dtype_size(HloDtype t) { return valid(t) ? dtype_info[t].bytes : 0; }
int hlc_dtype_bits(HloDtype t) { return valid(t) ? dtype_info[t].bits : 0; }
HloKind hlc_dtype_kind(HloDtype t) { return valid(t) ? dtype_info[t].kind : HLO_KIND_OPAQUE; }
int hlc_dtype_xla_code(HloDtype t) { return valid(t) ? dtype_info[t].code : 0; }

HloDtype hlc_dtype_from_name(const char *s, size_t n) {
  for (int i = 0; i < HLO_NUM_DTYPES; i++)
    if (strlen(dtype_info[i].name) == n && memcmp(dtype_info[i].name, s, n) == 0)
      return (HloDtype)i;
  return HLO_DTYPE_INVALID;
}

HloDtype hlc_dtype_from_xla_code(int code) {
  for (int i = 0; i < HLO_NUM_DTYPES; i++)
    if (dtype_info[i].code == code) return (HloDtype)i;
  return HLO_DTYPE_INVALID;
}
