/* subrun.c: the standard-HLO module equivalent to one GPU custom call,
 * parsed and compiled once per call site (in its own context, with as many
 * threads as the FFI host's pool) and run through the public API on the
 * call's buffers. Its result fills the call's first results; the rest
 * (cuBLAS workspace, cuDNN scratch) are zero-filled: XLA leaves their
 * contents unspecified and nothing reads them.
 * Not here: writing the module (gemm.c, conv.c, ...). */
#include "targets/gpu/gpu.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hlorun.h"

struct GpuSub {
  HloCtx *ctx;
  HloModule *m;
  HloExecutable *exe;
  char name[128];   /* the instruction, for messages */
};

void hlt_gpu_sub_free(void *p) {
  GpuSub *s = p;
  if (!s) return;
  hlo_executable_free(s->exe);
  hlo_module_free(s->m);
  hlo_ctx_free(s->ctx);
  free(s);
}

GpuSub *hlt_gpu_sub_new(GpuCall *c, const char *text, int threads) {
  GpuSub *s = calloc(1, sizeof *s);
  if (!s) {
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  snprintf(s->name, sizeof s->name, "%s", c->name);
  HloCtxOptions o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.threads = threads > 0 ? threads : 1;
  if (hlo_ctx_new(&o, &s->ctx) != HLO_OK) {
    free(s);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  HloRunOptions ro;
  memset(&ro, 0, sizeof ro);
  ro.struct_size = sizeof ro;
  if (hlo_module_parse(s->ctx, text, strlen(text), "<gpu equivalent>", &s->m) != HLO_OK ||
      hlo_compile(s->ctx, s->m, &ro, &s->exe) != HLO_OK) {
    /* A module we wrote does not compile: the config asked for something the
     * equivalent cannot express. Show both. */
    hlt_gpu_fail(c, "its equivalent standard HLO does not compile: %s\n%s",
                 hlo_ctx_diagnostics(s->ctx), text);
    hlt_gpu_sub_free(s);
    return NULL;
  }
  return s;
}

static XLA_FFI_Error *sub_error(XLA_FFI_CallFrame *f, const GpuSub *s, const char *what) {
  char msg[1024];
  snprintf(msg, sizeof msg, "%%%s: %s: %s", s->name, what, hlo_ctx_diagnostics(s->ctx));
  return hlorun_ffi_error(f->api, XLA_FFI_Error_Code_INTERNAL, msg);
}

static size_t leaf_bytes(const XLA_FFI_Buffer *b) {
  HloDtype d = hlc_dtype_from_xla_code((int)b->dtype);
  return d == HLO_DTYPE_INVALID ? 0 : (size_t)hlorun_ffi_elements(b) * hlc_dtype_size(d);
}

XLA_FFI_Error *hlt_gpu_sub_run(GpuSub *s, XLA_FFI_CallFrame *f) {
  int n = (int)f->args.size;
  HloBuffer *in[GPU_MAX_LEAVES] = {0}, *out = NULL;
  XLA_FFI_Error *e = NULL;
  for (int i = 0; i < n && !e; i++) {
    XLA_FFI_Buffer *a = f->args.args[i];
    if (hlo_buffer_new_array(s->ctx, (HloElementType)a->dtype, a->dims, (int)a->rank, a->data,
                             &in[i]) != HLO_OK)
      e = sub_error(f, s, "operand");
  }
  if (!e && hlo_execute(s->exe, in, n, &out) != HLO_OK) e = sub_error(f, s, "running its equivalent");
  int nout = 0;
  if (!e) {
    bool tuple = hlo_buffer_type(out) == HLO_TYPE_TUPLE;
    nout = tuple ? hlo_buffer_tuple_size(out) : 1;
    for (int i = 0; i < nout && i < f->rets.size && !e; i++) {
      HloBuffer *el = out;
      if (tuple && hlo_buffer_tuple_element(s->ctx, out, i, &el) != HLO_OK) {
        e = sub_error(f, s, "result");
        break;
      }
      XLA_FFI_Buffer *r = f->rets.rets[i];
      size_t want = leaf_bytes(r);
      if (hlo_buffer_nbytes(el) != want)
        e = sub_error(f, s, "result size differs from the declared one");
      else if (want)
        memcpy(r->data, hlo_buffer_data(el), want);
      if (el != out) hlo_buffer_free(el);
    }
  }
  for (int i = nout; i < f->rets.size && !e; i++) {
    XLA_FFI_Buffer *r = f->rets.rets[i];
    size_t b = leaf_bytes(r);
    if (b) memset(r->data, 0, b);
  }
  hlo_buffer_free(out);
  for (int i = 0; i < n; i++) hlo_buffer_free(in[i]);
  hlo_ctx_clear_diagnostics(s->ctx);
  return e;
}
