/* text.c: the printing the FFI layer needs for messages and
 * --explain-custom-calls: attribute values in backend_config syntax with
 * their types. Shapes are printed by the HLO printer (ir/print.h), into
 * common/text.h's buffer. */
#include "ffi/internal.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One element of FFI type dt at p, in MLIR literal syntax (floats round
 * trip; f16/bf16 as hex bit patterns, which MLIR accepts back). */
static void element(HlcText *t, XLA_FFI_DataType dt, const void *p) {
  switch (dt) {
  case XLA_FFI_DataType_PRED: hlc_text_printf(t, "%s", *(const uint8_t *)p ? "true" : "false"); break;
  case XLA_FFI_DataType_S8: hlc_text_printf(t, "%d", *(const int8_t *)p); break;
  case XLA_FFI_DataType_S16: { int16_t v; memcpy(&v, p, 2); hlc_text_printf(t, "%d", v); break; }
  case XLA_FFI_DataType_S32: { int32_t v; memcpy(&v, p, 4); hlc_text_printf(t, "%" PRId32, v); break; }
  case XLA_FFI_DataType_S64: { int64_t v; memcpy(&v, p, 8); hlc_text_printf(t, "%" PRId64, v); break; }
  case XLA_FFI_DataType_U8: hlc_text_printf(t, "%u", *(const uint8_t *)p); break;
  case XLA_FFI_DataType_U16: { uint16_t v; memcpy(&v, p, 2); hlc_text_printf(t, "%u", v); break; }
  case XLA_FFI_DataType_U32: { uint32_t v; memcpy(&v, p, 4); hlc_text_printf(t, "%" PRIu32, v); break; }
  case XLA_FFI_DataType_U64: { uint64_t v; memcpy(&v, p, 8); hlc_text_printf(t, "%" PRIu64, v); break; }
  case XLA_FFI_DataType_F16: case XLA_FFI_DataType_BF16: {
    uint16_t v;
    memcpy(&v, p, 2);
    hlc_text_printf(t, "0x%04X", v);
    break;
  }
  case XLA_FFI_DataType_F32: { float v; memcpy(&v, p, 4); hlc_text_printf(t, "%.9g", (double)v); break; }
  case XLA_FFI_DataType_F64: { double v; memcpy(&v, p, 8); hlc_text_printf(t, "%.17g", v); break; }
  default: hlc_text_put(t, "?", 1);
  }
}

static size_t elem_size(XLA_FFI_DataType dt) {
  switch (dt) {
  case XLA_FFI_DataType_PRED: case XLA_FFI_DataType_S8: case XLA_FFI_DataType_U8: return 1;
  case XLA_FFI_DataType_S16: case XLA_FFI_DataType_U16: case XLA_FFI_DataType_F16:
  case XLA_FFI_DataType_BF16: return 2;
  case XLA_FFI_DataType_S32: case XLA_FFI_DataType_U32: case XLA_FFI_DataType_F32: return 4;
  default: return 8;
  }
}

static void quoted(HlcText *t, const char *s, size_t n) {
  hlc_text_put(t, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') hlc_text_printf(t, "\\%c", c);
    else if (c == '\n') hlc_text_put(t, "\\n", 2);
    else if (c == '\t') hlc_text_put(t, "\\t", 2);
    else if (c < 0x20 || c == 0x7f) hlc_text_printf(t, "\\%02X", c);
    else hlc_text_put(t, (const char *)&c, 1);
  }
  hlc_text_put(t, "\"", 1);
}

enum { MAX_SHOWN = 32 };   /* array elements written out */

/* "TYPE VALUE" for scalars, strings and arrays (their first MAX_SHOWN
 * elements); dictionaries as an indented block of "name: TYPE VALUE" lines. */
void hlf_text_attr_value(HlcText *t, const HlfAttr *a, int indent) {
  switch (a->type) {
  case XLA_FFI_AttrType_SCALAR:
    if (a->dtype == XLA_FFI_DataType_PRED) hlc_text_put(t, "pred ", 5);
    else hlc_text_printf(t, "%s ", hlf_ffi_dtype_name(a->dtype));   /* MLIR's names: i32, ui16 */
    element(t, a->dtype, a->data);
    break;
  case XLA_FFI_AttrType_STRING:
    hlc_text_put(t, "string ", 7);
    quoted(t, a->str, a->count);
    break;
  case XLA_FFI_AttrType_ARRAY:
    hlc_text_printf(t, "array<%s%s", hlf_ffi_dtype_name(a->dtype),
                    a->count ? ": " : "");
    /* Long arrays (a dense<> splat may hold millions) show their head. */
    for (size_t i = 0; i < a->count && i < MAX_SHOWN; i++) {
      if (i) hlc_text_put(t, ", ", 2);
      element(t, a->dtype, (const char *)a->data + i * elem_size(a->dtype));
    }
    if (a->count > MAX_SHOWN) hlc_text_printf(t, ", ... (%zu elements)", a->count);
    hlc_text_put(t, ">", 1);
    break;
  case XLA_FFI_AttrType_DICTIONARY:
    hlc_text_printf(t, "dictionary (%zu %s)", a->count, a->count == 1 ? "entry" : "entries");
    for (size_t i = 0; i < a->count; i++) {
      hlc_text_printf(t, "\n%*s%.*s: ", indent + 2, "", (int)a->items[i].name_len, a->items[i].name);
      hlf_text_attr_value(t, &a->items[i], indent + 2);
    }
    break;
  }
}
