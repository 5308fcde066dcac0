/* callframe.c: builds XLA_FFI_CallFrame structs and calls handlers with
 * them: the metadata (version) query, and one invocation at a stage with
 * leaf buffers and attributes, waiting for an asynchronous handler's future.
 *
 * The frame is a zeroed full-size struct whose struct_size is 168
 * (XLA_FFI_CallFrame_STRUCT_SIZE, not sizeof): handlers built with XLA's
 * ffi.h demand exactly that. Not here: attribute decoding (attrs.c), which
 * handler runs when (call.c). */
#include "ffi/internal.h"
#include <stdlib.h>
#include <string.h>

/* The layouts this file depends on, with the numbers of spec/ffi.md 3.3. */
_Static_assert(sizeof(XLA_FFI_CallFrame) == 176, "CallFrame size");
_Static_assert(XLA_FFI_CallFrame_STRUCT_SIZE == 168, "CallFrame STRUCT_SIZE");
_Static_assert(offsetof(XLA_FFI_CallFrame, api) == 16, "CallFrame.api");
_Static_assert(offsetof(XLA_FFI_CallFrame, ctx) == 24, "CallFrame.ctx");
_Static_assert(offsetof(XLA_FFI_CallFrame, stage) == 32, "CallFrame.stage");
_Static_assert(offsetof(XLA_FFI_CallFrame, args) == 40, "CallFrame.args");
_Static_assert(offsetof(XLA_FFI_CallFrame, rets) == 80, "CallFrame.rets");
_Static_assert(offsetof(XLA_FFI_CallFrame, attrs) == 120, "CallFrame.attrs");
_Static_assert(offsetof(XLA_FFI_CallFrame, future) == 168, "CallFrame.future");
_Static_assert(XLA_FFI_Buffer_STRUCT_SIZE == 48, "Buffer");
_Static_assert(offsetof(XLA_FFI_Buffer, dtype) == 16 && offsetof(XLA_FFI_Buffer, data) == 24 &&
               offsetof(XLA_FFI_Buffer, rank) == 32 && offsetof(XLA_FFI_Buffer, dims) == 40,
               "Buffer fields");
_Static_assert(XLA_FFI_Args_STRUCT_SIZE == 40 && XLA_FFI_Rets_STRUCT_SIZE == 40, "Args/Rets");
_Static_assert(XLA_FFI_Attrs_STRUCT_SIZE == 48, "Attrs");
_Static_assert(sizeof(XLA_FFI_Api) == 192 && XLA_FFI_Api_STRUCT_SIZE == 192, "Api");
_Static_assert(offsetof(XLA_FFI_Api, api_version) == 16 && offsetof(XLA_FFI_Api, internal_api) == 40 &&
               offsetof(XLA_FFI_Api, XLA_FFI_Error_Create) == 48 &&
               offsetof(XLA_FFI_Api, XLA_FFI_ThreadPool_NumThreads) == 48 + 8 * 12 &&
               offsetof(XLA_FFI_Api, XLA_FFI_DeviceOrdinal_Get) == 48 + 8 * 17,
               "Api slots");
_Static_assert(XLA_FFI_Metadata_STRUCT_SIZE == 36 && sizeof(XLA_FFI_Metadata) == 48 &&
               offsetof(XLA_FFI_Metadata, state_type_id) == 40, "Metadata");
_Static_assert(XLA_FFI_Metadata_Extension_STRUCT_SIZE == 32, "Metadata extension");
_Static_assert(XLA_FFI_Error_Create_Args_STRUCT_SIZE == 28, "Error_Create");

int hlf_query_metadata(XLA_FFI_Handler *h, int *major, int *minor, uint32_t *traits, char **err) {
  XLA_FFI_Metadata md;
  memset(&md, 0, sizeof md);
  md.struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
  md.api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  XLA_FFI_Metadata_Extension ext;
  memset(&ext, 0, sizeof ext);
  ext.extension_base.struct_size = XLA_FFI_Metadata_Extension_STRUCT_SIZE;
  ext.extension_base.type = XLA_FFI_Extension_Metadata;
  ext.metadata = &md;
  XLA_FFI_CallFrame f;
  memset(&f, 0, sizeof f);
  f.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  f.extension_start = &ext.extension_base;
  f.api = hlf_api(3);
  f.stage = XLA_FFI_ExecutionStage_EXECUTE;
  f.args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
  f.rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
  f.attrs.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  XLA_FFI_Error *e = h(&f);
  if (e) {
    *err = hlf_strdup_printf("does not answer the metadata query: %s", e->message);
    hlf_error_free(e);
    return -1;
  }
  *major = md.api_version.major_version;
  *minor = md.api_version.minor_version;
  *traits = md.traits;
  return 0;
}

/* Fill buffer structs for leaves; dims are copied so a handler cannot write
 * into the IR's shapes. */
static void fill_buffers(XLA_FFI_Buffer *b, int64_t *dims, void **ptrs, const HlfBuf *v,
                         int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    b[i].struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
    if (v[i].dtype == HLO_TOKEN) {
      b[i].dtype = XLA_FFI_DataType_TOKEN;   /* as CallFrameBuilder::AddTokenArg */
      b[i].data = NULL;
      b[i].rank = 0;
      b[i].dims = NULL;
    } else {
      b[i].dtype = (XLA_FFI_DataType)hlc_dtype_xla_code(v[i].dtype);
      b[i].data = v[i].data;
      b[i].rank = v[i].rank;
      b[i].dims = v[i].rank ? dims : NULL;
      if (v[i].rank) memcpy(dims, v[i].dims, (size_t)v[i].rank * sizeof *dims);
      dims += v[i].rank;
    }
    ptrs[i] = &b[i];
  }
}

static size_t total_rank(const HlfBuf *v, int32_t n) {
  size_t r = 0;
  for (int32_t i = 0; i < n; i++) r += v[i].dtype == HLO_TOKEN ? 0 : (size_t)v[i].rank;
  return r;
}

XLA_FFI_Error *hlf_invoke(XLA_FFI_Handler *h, XLA_FFI_ExecutionContext *ctx, const HlfBuf *args,
                          int32_t nargs, const HlfBuf *rets, int32_t nrets, XLA_FFI_Attrs *attrs) {
  size_t n = (size_t)nargs + (size_t)nrets;
  size_t nd = total_rank(args, nargs) + total_rank(rets, nrets);
  /* One scratch block: buffers, pointer arrays, type arrays, dims. */
  size_t bytes = n * (sizeof(XLA_FFI_Buffer) + sizeof(void *) + sizeof(int)) +
                 nd * sizeof(int64_t) + 16;
  char *scratch = calloc(1, bytes);
  if (!scratch) return hlf_error(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
  XLA_FFI_Buffer *bufs = (XLA_FFI_Buffer *)scratch;
  void **ptrs = (void **)(bufs + n);
  int64_t *dims = (int64_t *)(ptrs + n);
  int *types = (int *)(dims + nd);
  for (size_t i = 0; i < n; i++) types[i] = XLA_FFI_ArgType_BUFFER;   /* == RetType_BUFFER */
  fill_buffers(bufs, dims, ptrs, args, nargs);
  fill_buffers(bufs + nargs, dims + total_rank(args, nargs), ptrs + nargs, rets, nrets);

  XLA_FFI_CallFrame f;
  memset(&f, 0, sizeof f);
  f.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  f.api = hlf_api(ctx->minor);
  f.ctx = ctx;
  f.stage = ctx->stage;
  f.args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
  f.args.size = nargs;
  f.args.types = (XLA_FFI_ArgType *)types;
  f.args.args = ptrs;
  f.rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
  f.rets.size = nrets;
  f.rets.types = (XLA_FFI_RetType *)types + nargs;
  f.rets.rets = ptrs + nargs;
  if (attrs)
    f.attrs = *attrs;
  else
    f.attrs.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  /* The invocation's device memory: recorded, counted through the
   * caller's hook, and freed (with its count) when the invocation ends. */
  HlfMemScope mem;
  hlf_mem_scope_begin(&mem, ctx->mem_hook);
  HlfMemScope *outer = ctx->mem;
  ctx->mem = &mem;
  XLA_FFI_Error *e = h(&f);
  /* An error with a future set (XLA forbids it): the future is left alone
   * (never freed), since whoever holds it may still complete it, and so
   * are the blocks its work may still use; only their count goes. */
  bool still_running = e && f.future;
  if (!e && f.future) e = hlf_future_wait_free(f.future);   /* asynchronous handler */
  hlf_mem_scope_end(&mem, !still_running);
  ctx->mem = outer;
  free(scratch);
  return e;
}
