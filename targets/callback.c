/* callback.c: JAX's host callbacks as built-in targets.
 *
 * jax.debug.print, jax.debug.callback, jax.pure_callback and io_callback
 * lower on the CPU to a custom call naming a Python function of the process
 * that traced them (jax/_src/callback.py, emit_python_callback):
 *   xla_ffi_python_cpu_callback, xla_ffi_partitioned_python_cpu_callback
 *     (typed FFI): operands [token,] args...; results [token,] results...;
 *     attribute index (u64): the function's place in the module's host
 *     callbacks;
 *   xla_python_cpu_callback (the older generation): operand 0 is a u64
 *     descriptor of the function, then the same operands.
 * The function is not in the dump. A call whose results are all tokens (a
 * debug print or callback) writes its operands to the context's callback
 * output (hlo_ctx_set_callback_output; the command: standard error), with a
 * note that the function, and a print's format string, stayed in Python;
 * arrays of more than CB_FULL elements as a summary. A call with results is
 * an error naming the target and how to bind it (--custom-call, or a
 * Python function through the Python package's hlorun.bind).
 * Not here: the registry (ffi/), the bindings that replace these. */
#include "hlorun.h"
#include "hlorun/ffi.h"
#include "interp/valio.h"
#include "targets/targets.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Arrays up to this many elements are printed whole. */
#define CB_FULL 1000
/* Registry user data of the output sink: the function and its argument
 * (type ids the FFI API never hands out, which counts up from 1). */
#define CB_SINK_FN (-0x484c4f4301ll)
#define CB_SINK_USER (-0x484c4f4302ll)

static const char *const targets[] = {"xla_ffi_python_cpu_callback",
                                      "xla_ffi_partitioned_python_cpu_callback",
                                      "xla_python_cpu_callback"};

typedef union { HloTextSink *fn; void *p; } SinkFn;

/* The user data of type id, or NULL. */
static void *user_data(XLA_FFI_CallFrame *f, int64_t id) {
  XLA_FFI_TypeId t = {id};
  XLA_FFI_ExecutionContext_Get_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE;
  a.ctx = f->ctx;
  a.type_id = &t;
  XLA_FFI_Error *e = f->api->XLA_FFI_ExecutionContext_Get(&a);
  if (!e) return a.data;
  XLA_FFI_Error_Destroy_Args d;
  memset(&d, 0, sizeof d);
  d.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
  d.error = e;
  f->api->XLA_FFI_Error_Destroy(&d);
  return NULL;
}

static XLA_FFI_Buffer *arg(XLA_FFI_CallFrame *f, int64_t i) { return f->args.args[i]; }
static XLA_FFI_Buffer *ret(XLA_FFI_CallFrame *f, int64_t i) { return f->rets.rets[i]; }

static XLA_FFI_Error *fail(XLA_FFI_CallFrame *f, XLA_FFI_Error_Code code, const char *msg) {
  return hlorun_ffi_error(f->api, code, msg);
}

/* One operand as text: "token", a literal, or for a large array its shape
 * and statistics. */
static void operand_text(HlcText *b, const XLA_FFI_Buffer *x) {
  HloDtype t = hlc_dtype_from_xla_code((int)x->dtype);
  if (x->dtype == XLA_FFI_DataType_TOKEN) { hlc_text_puts(b, "token"); return; }
  if (t == HLO_DTYPE_INVALID) { hlc_text_printf(b, "(element type %d)", (int)x->dtype); return; }
  HloShape s;
  memset(&s, 0, sizeof s);
  s.dtype = t;
  s.rank = (int32_t)x->rank;
  s.dims = x->dims;
  HliValue v;
  memset(&v, 0, sizeof v);
  v.shape = &s;
  v.dtype = t;
  v.rank = s.rank;
  v.dims = x->dims;
  v.nelem = hlorun_ffi_elements(x);
  v.data = x->data;
  v.nbytes = (size_t)v.nelem * hlc_dtype_size(t);
  if (v.nelem <= CB_FULL && hli_literal_write(&v, b) == 0) return;
  hlp_print_shape(b, &s, false);
  HloValueSummary sm = {sizeof sm, 0, 0, 0, 0, 0, 0};
  hlo_value_summarize((const HloValue *)&v, &sm);
  char first[256];
  hlo_value_format_elements((const HloValue *)&v, 8, first, sizeof first);
  hlc_text_printf(b, " (%lld elements, summarized) min=%g max=%g mean=%g nan=%lld inf=%lld {%s}",
                 (long long)v.nelem, sm.min, sm.max, sm.mean, (long long)sm.num_nan,
                 (long long)sm.num_inf, first);
}

static XLA_FFI_Error *callback(XLA_FFI_CallFrame *f, int target_index) {
  if (hlorun_ffi_metadata(f, 0)) return NULL;
  if (f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  const char *target = targets[target_index];
  /* The older generation's first operand is the function's descriptor. */
  bool legacy = target_index == 2;
  if (legacy && (f->args.size == 0 || arg(f, 0)->dtype != XLA_FFI_DataType_U64 ||
                 arg(f, 0)->rank != 0))
    return fail(f, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                "xla_python_cpu_callback: operand 0 must be the u64[] descriptor of the Python "
                "function");
  XLA_FFI_Scalar *idx = hlorun_ffi_attr(&f->attrs, "index", XLA_FFI_AttrType_SCALAR);
  char which[64] = "";
  if (idx && idx->dtype == XLA_FFI_DataType_U64)
    snprintf(which, sizeof which, " %llu",
             (unsigned long long)*(const uint64_t *)idx->value);
  int64_t nres = 0;
  for (int64_t i = 0; i < f->rets.size; i++)
    if (ret(f, i)->dtype != XLA_FFI_DataType_TOKEN) nres++;
  if (nres) {
    char msg[1024];
    snprintf(msg, sizeof msg,
             "host callback%s returns %lld value%s (jax.pure_callback or io_callback): its "
             "Python function lived only in the process that dumped the module, so hlorun cannot "
             "compute them. Bind the target to a handler that does: --custom-call "
             "%s=LIB.so[:SYMBOL] (typed FFI: the call's operands and results, tokens included), or "
             "from Python, hlorun.bind(\"%s\", fn)", which, (long long)nres, nres == 1 ? "" : "s",
             target, target);
    return fail(f, XLA_FFI_Error_Code_UNIMPLEMENTED, msg);
  }
  SinkFn sink = {.p = user_data(f, CB_SINK_FN)};
  if (!sink.p) return NULL;   /* nowhere to write */
  HlcText b = {0};
  int64_t first = legacy ? 1 : 0;
  hlc_text_printf(&b, "%s: host callback%s (jax.debug.print or jax.debug.callback): its Python "
                 "function, and a print's format string, stayed in the process that dumped the "
                 "module; the operand%s it was called with:\n", target, which,
                 f->args.size - first == 1 ? "" : "s");
  for (int64_t i = first; i < f->args.size; i++) {
    hlc_text_printf(&b, "  operand %lld: ", (long long)(i - first));
    operand_text(&b, arg(f, i));
    hlc_text_puts(&b, "\n");
  }
  if (f->args.size == first) hlc_text_puts(&b, "  (none)\n");
  if (b.oom) {
    hlc_text_free(&b);
    return fail(f, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "out of memory printing a host callback");
  }
  sink.fn(user_data(f, CB_SINK_USER), b.p, b.n);
  hlc_text_free(&b);
  return NULL;
}

static XLA_FFI_Error *ffi_callback(XLA_FFI_CallFrame *f) { return callback(f, 0); }
static XLA_FFI_Error *partitioned_callback(XLA_FFI_CallFrame *f) { return callback(f, 1); }
static XLA_FFI_Error *legacy_callback(XLA_FFI_CallFrame *f) { return callback(f, 2); }

int hlt_register_callbacks(HlfRegistry *r) {
  static XLA_FFI_Handler *const handlers[] = {ffi_callback, partitioned_callback, legacy_callback};
  for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
    XLA_FFI_Handler_Bundle bundle = {NULL, NULL, NULL, handlers[i]};
    if (hlf_register_builtin(r, targets[i], &bundle, "built-in: host callback") != 0) return -1;
  }
  return 0;
}

int hlt_set_callback_output(HlfRegistry *r, HloTextSink *write, void *user) {
  SinkFn s = {.fn = write};
  return hlf_set_user_data(r, CB_SINK_FN, s.p) != 0 ||
                 hlf_set_user_data(r, CB_SINK_USER, user) != 0 ? -1 : 0;
}
