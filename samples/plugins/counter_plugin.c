/* counter_plugin.c: a plugin. Its registration function receives hlorun's
 * XLA_FFI_Api and registers a handler bundle with an instantiate stage
 * (once per call site: it reads the `start` attribute and keeps it as the
 * call site's state) and an execute stage (y = x + start + number of
 * earlier executions of this call site).
 *
 * Load: hlorun --plugin libcounter_plugin.so MODULE.hlo
 * (the default registration function is hlorun_ffi_plugin_init). */
#include <stdlib.h>
#include <string.h>
#include "hlorun/ffi.h"

typedef struct { float start; int64_t runs; } Counter;
static XLA_FFI_TypeId counter_type;   /* assigned by the host */
static void counter_free(void *p) { free(p); }

static XLA_FFI_Error *instantiate(XLA_FFI_CallFrame *f) {
  if (hlorun_ffi_metadata(f, 0)) return NULL;
  XLA_FFI_Scalar *start = hlorun_ffi_attr(&f->attrs, "start", XLA_FFI_AttrType_SCALAR);
  if (!start || start->dtype != XLA_FFI_DataType_F32)
    return hlorun_ffi_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                            "counter: needs start = <f32>");
  Counter *c = calloc(1, sizeof *c);
  if (!c) return hlorun_ffi_error(f->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
  c->start = *(float *)start->value;
  XLA_FFI_State_Set_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_State_Set_Args_STRUCT_SIZE;
  a.ctx = f->ctx;
  a.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
  a.type_id = &counter_type;
  a.state = c;
  XLA_FFI_Error *e = f->api->XLA_FFI_State_Set(&a);
  if (e) free(c);
  return e;
}

static XLA_FFI_Error *execute(XLA_FFI_CallFrame *f) {
  if (hlorun_ffi_metadata(f, 0)) return NULL;
  XLA_FFI_State_Get_Args g;
  memset(&g, 0, sizeof g);
  g.struct_size = XLA_FFI_State_Get_Args_STRUCT_SIZE;
  g.ctx = f->ctx;
  g.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
  g.type_id = &counter_type;
  XLA_FFI_Error *e = f->api->XLA_FFI_State_Get(&g);
  if (e) return e;
  Counter *c = g.state;
  XLA_FFI_Buffer *x = f->args.args[0], *y = f->rets.rets[0];
  const float *in = x->data;
  float *out = y->data;
  for (int64_t i = 0; i < hlorun_ffi_elements(x); i++) out[i] = in[i] + c->start + (float)c->runs;
  c->runs++;
  return NULL;
}

XLA_FFI_Error *hlorun_ffi_plugin_init(const XLA_FFI_Api *api) {
  /* The state's type, with its deleter. */
  XLA_FFI_TypeInfo info = {XLA_FFI_TypeInfo_STRUCT_SIZE, NULL, counter_free};
  XLA_FFI_Type_Register_Args t;
  memset(&t, 0, sizeof t);
  t.struct_size = XLA_FFI_Type_Register_Args_STRUCT_SIZE;
  t.name = (XLA_FFI_ByteSpan){"sample.counter", 14};
  t.type_id = &counter_type;
  t.type_info = &info;
  XLA_FFI_Error *e = api->XLA_FFI_Type_Register(&t);
  if (e) return e;
  XLA_FFI_Handler_Register_Args r;
  memset(&r, 0, sizeof r);
  r.struct_size = XLA_FFI_Handler_Register_Args_STRUCT_SIZE;
  r.name = (XLA_FFI_ByteSpan){"sample.counter", 14};
  r.platform = (XLA_FFI_ByteSpan){"Host", 4};
  r.bundle.instantiate = instantiate;
  r.bundle.execute = execute;
  return api->XLA_FFI_Handler_Register(&r);
}
