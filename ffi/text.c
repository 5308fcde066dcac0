/* text.c: growable text and the printing the FFI layer needs for messages
 * and --explain-custom-calls: shapes as HLO writes them, and attribute
 * values in backend_config syntax with their types. Not here: the HLO
 * printer (parser/). */
#include "ffi/internal.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reserve(HlfText *t, size_t more) {
  if (t->oom || t->n + more + 1 <= t->cap) return;
  size_t cap = t->cap ? t->cap : 256;
  while (cap < t->n + more + 1) cap *= 2;
  char *p = realloc(t->p, cap);
  if (!p) { t->oom = true; return; }
  t->p = p;
  t->cap = cap;
}

void hlf_text_bytes(HlfText *t, const char *s, size_t n) {
  reserve(t, n);
  if (t->oom) return;
  memcpy(t->p + t->n, s, n);
  t->n += n;
  t->p[t->n] = 0;
}

void hlf_text_printf(HlfText *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  int n = vasprintf(&s, fmt, ap);
  va_end(ap);
  if (n < 0) { t->oom = true; return; }
  hlf_text_bytes(t, s, (size_t)n);
  free(s);
}

char *hlf_text_take(HlfText *t) {
  if (t->oom) { free(t->p); return NULL; }
  if (!t->p) return strdup("");
  return t->p;
}

void hlf_text_shape(HlfText *t, const HloShape *s) {
  if (s->dtype == HLO_TUPLE) {
    hlf_text_bytes(t, "(", 1);
    for (int32_t i = 0; i < s->ntuple; i++) {
      if (i) hlf_text_bytes(t, ", ", 2);
      hlf_text_shape(t, &s->tuple[i]);
    }
    hlf_text_bytes(t, ")", 1);
    return;
  }
  hlf_text_printf(t, "%s", hlc_dtype_name(s->dtype));
  if (s->dtype == HLO_TOKEN || s->dtype == HLO_OPAQUE) return;
  hlf_text_bytes(t, "[", 1);
  for (int32_t i = 0; i < s->rank; i++) {
    if (i) hlf_text_bytes(t, ",", 1);
    if (s->dims[i] < 0) hlf_text_bytes(t, "?", 1);
    else hlf_text_printf(t, "%s%" PRId64, s->dynamic && s->dynamic[i] ? "<=" : "", s->dims[i]);
  }
  hlf_text_bytes(t, "]", 1);
  if (s->minor_to_major && s->rank > 0) {
    hlf_text_bytes(t, "{", 1);
    for (int32_t i = 0; i < s->rank; i++)
      hlf_text_printf(t, "%s%" PRId64, i ? "," : "", s->minor_to_major[i]);
    hlf_text_bytes(t, "}", 1);
  }
}

/* One element of FFI type dt at p, in MLIR literal syntax (floats round
 * trip; f16/bf16 as hex bit patterns, which MLIR accepts back). */
static void element(HlfText *t, XLA_FFI_DataType dt, const void *p) {
  switch (dt) {
  case XLA_FFI_DataType_PRED: hlf_text_printf(t, "%s", *(const uint8_t *)p ? "true" : "false"); break;
  case XLA_FFI_DataType_S8: hlf_text_printf(t, "%d", *(const int8_t *)p); break;
  case XLA_FFI_DataType_S16: { int16_t v; memcpy(&v, p, 2); hlf_text_printf(t, "%d", v); break; }
  case XLA_FFI_DataType_S32: { int32_t v; memcpy(&v, p, 4); hlf_text_printf(t, "%" PRId32, v); break; }
  case XLA_FFI_DataType_S64: { int64_t v; memcpy(&v, p, 8); hlf_text_printf(t, "%" PRId64, v); break; }
  case XLA_FFI_DataType_U8: hlf_text_printf(t, "%u", *(const uint8_t *)p); break;
  case XLA_FFI_DataType_U16: { uint16_t v; memcpy(&v, p, 2); hlf_text_printf(t, "%u", v); break; }
  case XLA_FFI_DataType_U32: { uint32_t v; memcpy(&v, p, 4); hlf_text_printf(t, "%" PRIu32, v); break; }
  case XLA_FFI_DataType_U64: { uint64_t v; memcpy(&v, p, 8); hlf_text_printf(t, "%" PRIu64, v); break; }
  case XLA_FFI_DataType_F16: case XLA_FFI_DataType_BF16: {
    uint16_t v;
    memcpy(&v, p, 2);
    hlf_text_printf(t, "0x%04X", v);
    break;
  }
  case XLA_FFI_DataType_F32: { float v; memcpy(&v, p, 4); hlf_text_printf(t, "%.9g", (double)v); break; }
  case XLA_FFI_DataType_F64: { double v; memcpy(&v, p, 8); hlf_text_printf(t, "%.17g", v); break; }
  default: hlf_text_bytes(t, "?", 1);
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

static void quoted(HlfText *t, const char *s, size_t n) {
  hlf_text_bytes(t, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') hlf_text_printf(t, "\\%c", c);
    else if (c == '\n') hlf_text_bytes(t, "\\n", 2);
    else if (c == '\t') hlf_text_bytes(t, "\\t", 2);
    else if (c < 0x20 || c == 0x7f) hlf_text_printf(t, "\\%02X", c);
    else hlf_text_bytes(t, (const char *)&c, 1);
  }
  hlf_text_bytes(t, "\"", 1);
}

enum { MAX_SHOWN = 32 };   /* array elements written out */

/* "TYPE VALUE" for scalars, strings and arrays (their first MAX_SHOWN
 * elements); dictionaries as an indented block of "name: TYPE VALUE" lines. */
void hlf_text_attr_value(HlfText *t, const HlfAttr *a, int indent) {
  switch (a->type) {
  case XLA_FFI_AttrType_SCALAR:
    if (a->dtype == XLA_FFI_DataType_PRED) hlf_text_bytes(t, "pred ", 5);
    else hlf_text_printf(t, "%s ", hlf_ffi_dtype_name(a->dtype));   /* MLIR's names: i32, ui16 */
    element(t, a->dtype, a->data);
    break;
  case XLA_FFI_AttrType_STRING:
    hlf_text_bytes(t, "string ", 7);
    quoted(t, a->str, a->count);
    break;
  case XLA_FFI_AttrType_ARRAY:
    hlf_text_printf(t, "array<%s%s", hlf_ffi_dtype_name(a->dtype),
                    a->count ? ": " : "");
    /* Long arrays (a dense<> splat may hold millions) show their head. */
    for (size_t i = 0; i < a->count && i < MAX_SHOWN; i++) {
      if (i) hlf_text_bytes(t, ", ", 2);
      element(t, a->dtype, (const char *)a->data + i * elem_size(a->dtype));
    }
    if (a->count > MAX_SHOWN) hlf_text_printf(t, ", ... (%zu elements)", a->count);
    hlf_text_bytes(t, ">", 1);
    break;
  case XLA_FFI_AttrType_DICTIONARY:
    hlf_text_printf(t, "dictionary (%zu %s)", a->count, a->count == 1 ? "entry" : "entries");
    for (size_t i = 0; i < a->count; i++) {
      hlf_text_printf(t, "\n%*s%.*s: ", indent + 2, "", (int)a->items[i].name_len, a->items[i].name);
      hlf_text_attr_value(t, &a->items[i], indent + 2);
    }
    break;
  }
}
