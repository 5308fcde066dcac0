/* window_sum.c: a typed FFI handler that reads the custom call's own
 * `window` through the "hlorun.instruction" attribute. It opts in by
 * reporting HLORUN_FFI_TRAIT_INSTRUCTION_MEMBERS in its metadata answer.
 *
 * 1-D windowed sum without padding: y[j] = sum_{t<size} x[j*stride + t].
 * operand x: f32[n]; result: f32[(n - size) / stride + 1].
 * Bind: hlorun --custom-call window_sum=libwindow_sum.so:sample_window_sum */
#include "hlorun/ffi.h"

static XLA_FFI_Error *bad(XLA_FFI_CallFrame *f, const char *msg) {
  return hlorun_ffi_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, msg);
}

XLA_FFI_Error *sample_window_sum(XLA_FFI_CallFrame *f) {
  if (hlorun_ffi_metadata(f, HLORUN_FFI_TRAIT_INSTRUCTION_MEMBERS)) return NULL;
  if (f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  XLA_FFI_Attrs *ins = hlorun_ffi_attr(&f->attrs, HLORUN_FFI_INSTRUCTION_ATTR,
                                       XLA_FFI_AttrType_DICTIONARY);
  XLA_FFI_Attrs *w = ins ? hlorun_ffi_attr(ins, "window", XLA_FFI_AttrType_DICTIONARY) : NULL;
  if (!w) return bad(f, "window_sum: the custom call needs window={size=... stride=...}");
  XLA_FFI_Array *size = hlorun_ffi_attr(w, "size", XLA_FFI_AttrType_ARRAY);
  XLA_FFI_Array *stride = hlorun_ffi_attr(w, "stride", XLA_FFI_AttrType_ARRAY);
  if (!size || !stride || size->size != 1 || stride->size != 1)
    return bad(f, "window_sum: a 1-D window is required");
  int64_t k = ((int64_t *)size->data)[0], s = ((int64_t *)stride->data)[0];
  XLA_FFI_Buffer *x = f->args.args[0], *y = f->rets.rets[0];
  if (f->args.size != 1 || x->rank != 1 || y->rank != 1 || x->dtype != XLA_FFI_DataType_F32 ||
      y->dtype != XLA_FFI_DataType_F32 || k < 1 || s < 1 ||
      y->dims[0] != (x->dims[0] - k) / s + 1)
    return bad(f, "window_sum: f32[n] -> f32[(n - size) / stride + 1]");
  const float *in = x->data;
  float *out = y->data;
  for (int64_t j = 0; j < y->dims[0]; j++) {
    float acc = 0;
    for (int64_t t = 0; t < k; t++) acc += in[j * s + t];
    out[j] = acc;
  }
  return NULL;
}
