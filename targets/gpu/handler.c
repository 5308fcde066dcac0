/* handler.c: the two FFI stages every GPU-family target shares. Instantiate
 * (run when the module is checked) decodes the call, has the target write
 * its equivalent module and keeps it, compiled, as the call site's state;
 * execute runs it on the call's buffers.
 * Not here: what a target computes (gemm.c, conv.c, ...). */
#include "targets/gpu/gpu.h"
#include <stdlib.h>
#include <string.h>

/* The state type, registered once with the host (idempotent by name). */
static XLA_FFI_TypeId sub_type;

static XLA_FFI_Error *register_type(const XLA_FFI_Api *api) {
  XLA_FFI_TypeInfo info = {XLA_FFI_TypeInfo_STRUCT_SIZE, NULL, hlt_gpu_sub_free};
  XLA_FFI_Type_Register_Args t;
  memset(&t, 0, sizeof t);
  t.struct_size = XLA_FFI_Type_Register_Args_STRUCT_SIZE;
  t.name = (XLA_FFI_ByteSpan){"hlorun.gpu.equivalent", 21};
  t.type_id = &sub_type;
  t.type_info = &info;
  return api->XLA_FFI_Type_Register(&t);
}

static int host_threads(XLA_FFI_CallFrame *f) {
  int64_t n = 1;
  XLA_FFI_ThreadPool_NumThreads_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE;
  a.ctx = f->ctx;
  a.num_threads = &n;
  XLA_FFI_Error *e = f->api->XLA_FFI_ThreadPool_NumThreads(&a);
  if (e) {
    XLA_FFI_Error_Destroy_Args d = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
    f->api->XLA_FFI_Error_Destroy(&d);
    return 1;
  }
  return (int)n;
}

static XLA_FFI_Error *call_error(XLA_FFI_CallFrame *f, GpuCall *c) {
  XLA_FFI_Error *e = hlorun_ffi_error(f->api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                                      c->err ? c->err : "out of memory");
  hlt_gpu_call_free(c);
  return e;
}

XLA_FFI_Error *hlt_gpu_instantiate(XLA_FFI_CallFrame *f, GpuBuildFn build) {
  if (hlorun_ffi_metadata(f, 0)) return NULL;   /* the host asks execute */
  XLA_FFI_Error *e = register_type(f->api);
  if (e) return e;
  GpuCall c;
  if (hlt_gpu_call_init(&c, f)) return call_error(f, &c);
  char *text = build(&c);
  if (!text) return call_error(f, &c);
  GpuSub *s = hlt_gpu_sub_new(&c, text, host_threads(f));
  free(text);
  if (!s) return call_error(f, &c);
  hlt_gpu_call_free(&c);
  XLA_FFI_State_Set_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_State_Set_Args_STRUCT_SIZE;
  a.ctx = f->ctx;
  a.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
  a.type_id = &sub_type;
  a.state = s;
  e = f->api->XLA_FFI_State_Set(&a);
  if (e) hlt_gpu_sub_free(s);
  return e;
}

XLA_FFI_Error *hlt_gpu_execute(XLA_FFI_CallFrame *f, uint32_t traits) {
  if (hlorun_ffi_metadata(f, traits)) return NULL;
  XLA_FFI_State_Get_Args g;
  memset(&g, 0, sizeof g);
  g.struct_size = XLA_FFI_State_Get_Args_STRUCT_SIZE;
  g.ctx = f->ctx;
  g.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
  g.type_id = &sub_type;
  XLA_FFI_Error *e = f->api->XLA_FFI_State_Get(&g);
  if (e) return e;
  return hlt_gpu_sub_run(g.state, f);
}

XLA_FFI_Error *hlt_gpu_refuse(XLA_FFI_CallFrame *f, const char *reason) {
  if (hlorun_ffi_metadata(f, HLORUN_FFI_TRAIT_JSON_CONFIG)) return NULL;
  GpuCall c;
  hlt_gpu_call_init(&c, f); /* for the name only; a bad config changes nothing */
  free(c.err);
  c.err = NULL;
  hlt_gpu_fail(&c, "%s", reason);
  return call_error(f, &c);
}
