/* affine.c: a typed XLA FFI handler with scalar, array, string and
 * dictionary attributes, written in C against hlorun/ffi.h.
 *
 *   y[i] = clamp(sign * (x[i] * scale + bias[i % len(bias)]), -limit, limit)
 * attributes (backend_config):
 *   scale: f32 scalar          bias: array<f32: ...> (at least one element)
 *   mode:  string "plain" or "negate" (sign -1)
 *   opts:  dictionary {clamp = true/false, limit = f32}
 * operand x: f32[...]; result: f32 of the same shape.
 * Bind: hlorun --custom-call affine=libaffine.so:sample_affine MODULE.hlo */
#include <stdio.h>
#include <string.h>
#include "hlorun/ffi.h"

static XLA_FFI_Error *bad(XLA_FFI_CallFrame *f, const char *msg) {
  return hlorun_ffi_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, msg);
}

XLA_FFI_Error *sample_affine(XLA_FFI_CallFrame *f) {
  if (hlorun_ffi_metadata(f, 0)) return NULL;   /* the version query */
  if (f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  if (f->args.size != 1 || f->rets.size != 1) return bad(f, "affine: one operand, one result");
  XLA_FFI_Buffer *x = f->args.args[0], *y = f->rets.rets[0];
  if (x->dtype != XLA_FFI_DataType_F32 || y->dtype != XLA_FFI_DataType_F32)
    return bad(f, "affine: f32 only");
  XLA_FFI_Scalar *scale = hlorun_ffi_attr(&f->attrs, "scale", XLA_FFI_AttrType_SCALAR);
  XLA_FFI_Array *bias = hlorun_ffi_attr(&f->attrs, "bias", XLA_FFI_AttrType_ARRAY);
  XLA_FFI_ByteSpan *mode = hlorun_ffi_attr(&f->attrs, "mode", XLA_FFI_AttrType_STRING);
  XLA_FFI_Attrs *opts = hlorun_ffi_attr(&f->attrs, "opts", XLA_FFI_AttrType_DICTIONARY);
  if (!scale || scale->dtype != XLA_FFI_DataType_F32) return bad(f, "affine: scale must be f32");
  if (!bias || bias->dtype != XLA_FFI_DataType_F32 || bias->size == 0)
    return bad(f, "affine: bias must be a non-empty array<f32>");
  if (!mode) return bad(f, "affine: mode must be a string");
  if (!opts) return bad(f, "affine: opts must be a dictionary");
  XLA_FFI_Scalar *clamp = hlorun_ffi_attr(opts, "clamp", XLA_FFI_AttrType_SCALAR);
  XLA_FFI_Scalar *limit = hlorun_ffi_attr(opts, "limit", XLA_FFI_AttrType_SCALAR);
  if (!clamp || clamp->dtype != XLA_FFI_DataType_PRED || !limit ||
      limit->dtype != XLA_FFI_DataType_F32)
    return bad(f, "affine: opts needs clamp (bool) and limit (f32)");
  float sign;
  if (mode->len == 5 && memcmp(mode->ptr, "plain", 5) == 0) sign = 1;
  else if (mode->len == 6 && memcmp(mode->ptr, "negate", 6) == 0) sign = -1;
  else {
    char msg[96];
    snprintf(msg, sizeof msg, "affine: unknown mode \"%.*s\"", (int)mode->len, mode->ptr);
    return bad(f, msg);
  }
  float s = *(float *)scale->value, lim = *(float *)limit->value;
  int do_clamp = *(unsigned char *)clamp->value;
  const float *b = bias->data, *in = x->data;
  float *out = y->data;
  int64_t n = hlorun_ffi_elements(x);
  for (int64_t i = 0; i < n; i++) {
    float v = sign * (in[i] * s + b[(size_t)i % bias->size]);
    if (do_clamp) v = v > lim ? lim : v < -lim ? -lim : v;
    out[i] = v;
  }
  return NULL;
}
