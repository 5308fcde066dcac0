/* check_ffi_mem.c: memory typed FFI handlers allocate through
 * XLA_FFI_DeviceMemory_Allocate counts against the run's memory limit
 * (--max-memory, HloCtxOptions.max_memory), in process and in an isolated
 * worker; DeviceMemory_Free releases it; what a handler never frees is freed
 * (and uncounted) when its invocation ends, as XLA's ScratchAllocator scopes
 * it; a block of an earlier call cannot be freed twice. The handlers are
 * in-process typed FFI handlers registered into the context's registry, as
 * check_ffi.c does. Every byte count is worked out by hand in the tests. */
#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ffi/internal.h"
#include "interp/api.h"
#include "tests/testlib.h"

/* ---- Handlers ------------------------------------------------------------ */

static int64_t attr_i64(XLA_FFI_CallFrame *f, const char *name) {
  XLA_FFI_Scalar *s = hlorun_ffi_attr(&f->attrs, name, XLA_FFI_AttrType_SCALAR);
  return s && s->dtype == XLA_FFI_DataType_S64 ? *(const int64_t *)s->value : 0;
}

static void *arg_data(XLA_FFI_CallFrame *f, int i) {
  return ((XLA_FFI_Buffer *)f->args.args[i])->data;
}
static void *ret_data(XLA_FFI_CallFrame *f, int i) {
  return ((XLA_FFI_Buffer *)f->rets.rets[i])->data;
}

static XLA_FFI_Error *dev_alloc(XLA_FFI_CallFrame *f, size_t n, void **out) {
  XLA_FFI_DeviceMemory_Allocate_Args a = {XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE, NULL,
                                          f->ctx, n, 64, NULL};
  XLA_FFI_Error *e = f->api->XLA_FFI_DeviceMemory_Allocate(&a);
  *out = a.data;
  return e;
}

static XLA_FFI_Error *dev_free(XLA_FFI_CallFrame *f, size_t n, void *p) {
  XLA_FFI_DeviceMemory_Free_Args a = {XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE, NULL, f->ctx,
                                      n, p};
  return f->api->XLA_FFI_DeviceMemory_Free(&a);
}

static void *last_block;   /* the block mem_alloc allocated last */

/* mem_alloc: f32[4] -> f32[4], y = x + 1, staged through device memory.
 * Attributes: bytes (each allocation), rounds (allocations, one after the
 * other), keep (nonzero: never free them). An allocation error is returned
 * as the handler's error. */
static XLA_FFI_Error *mem_alloc(XLA_FFI_CallFrame *f) {
  if (hlorun_ffi_metadata(f, 0)) return NULL;
  size_t bytes = (size_t)attr_i64(f, "bytes");
  int64_t rounds = attr_i64(f, "rounds");
  bool keep = attr_i64(f, "keep") != 0;
  const float *x = arg_data(f, 0);
  float *y = ret_data(f, 0);
  for (int64_t r = 0; r < rounds; r++) {
    float *t;
    XLA_FFI_Error *e = dev_alloc(f, bytes, (void **)&t);
    if (e) return e;
    memcpy(t, x, 4 * sizeof *x);   /* the memory is usable */
    for (int i = 0; i < 4; i++) y[i] = t[i] + 1;
    last_block = t;
    if (!keep && (e = dev_free(f, bytes, t))) return e;
  }
  return NULL;
}

/* mem_free_stale: frees the block mem_alloc allocated last (in an earlier
 * call); the error it gets is the handler's error. */
static XLA_FFI_Error *mem_free_stale(XLA_FFI_CallFrame *f) {
  if (hlorun_ffi_metadata(f, 0)) return NULL;
  memcpy(ret_data(f, 0), arg_data(f, 0), 4 * sizeof(float));
  return dev_free(f, 1000, last_block);
}

/* mem_async: schedules `tasks` pool tasks that each allocate `bytes` and
 * keep them, and returns a future the last task completes (with the first
 * allocation error, if any). y = x. */
static struct Async {
  XLA_FFI_CallFrame *f;
  XLA_FFI_Future *future;
  size_t bytes;
  atomic_int left;
  _Atomic(XLA_FFI_Error *) first_error;
} async;

static void async_task(void *arg) {
  (void)arg;
  void *p;
  XLA_FFI_Error *e = dev_alloc(async.f, async.bytes, &p), *none = NULL;
  if (e && !atomic_compare_exchange_strong(&async.first_error, &none, e)) {
    XLA_FFI_Error_Destroy_Args d = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
    async.f->api->XLA_FFI_Error_Destroy(&d);
  }
  if (atomic_fetch_sub(&async.left, 1) != 1) return;
  const XLA_FFI_Api *api = async.f->api;
  XLA_FFI_Error *first = atomic_load(&async.first_error);
  if (first) {
    XLA_FFI_Future_SetError_Args a = {XLA_FFI_Future_SetError_Args_STRUCT_SIZE, NULL,
                                      async.future, first};
    api->XLA_FFI_Future_SetError(&a);
  } else {
    XLA_FFI_Future_SetAvailable_Args a = {XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE, NULL,
                                          async.future};
    api->XLA_FFI_Future_SetAvailable(&a);
  }
}

static XLA_FFI_Error *mem_async(XLA_FFI_CallFrame *f) {
  if (hlorun_ffi_metadata(f, 0)) return NULL;
  memcpy(ret_data(f, 0), arg_data(f, 0), 4 * sizeof(float));
  int tasks = (int)attr_i64(f, "tasks");
  XLA_FFI_Future_Create_Args fc = {XLA_FFI_Future_Create_Args_STRUCT_SIZE, NULL, NULL};
  XLA_FFI_Error *e = f->api->XLA_FFI_Future_Create(&fc);
  if (e) return e;
  async.f = f;
  async.future = fc.future;
  async.bytes = (size_t)attr_i64(f, "bytes");
  atomic_store(&async.left, tasks);
  atomic_store(&async.first_error, NULL);
  for (int i = 0; i < tasks; i++) {
    XLA_FFI_ThreadPool_Schedule_Args s = {XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE, NULL,
                                          f->ctx, async_task, NULL};
    ck_assert_ptr_null(f->api->XLA_FFI_ThreadPool_Schedule(&s));
  }
  f->future = fc.future;
  return NULL;
}

static void register_handlers(HlfRegistry *r) {
  static const struct { const char *name; XLA_FFI_Handler *h; } hs[] = {
      {"mem_alloc", mem_alloc}, {"mem_free_stale", mem_free_stale}, {"mem_async", mem_async}};
  for (size_t i = 0; i < sizeof hs / sizeof *hs; i++) {
    XLA_FFI_Handler_Bundle b = {NULL, NULL, NULL, hs[i].h};
    ck_assert_int_eq(hlf_register_bundle(r, hs[i].name, strlen(hs[i].name), &b, 0,
                                         HLF_SRC_PLUGIN, "test"), 0);
  }
}

/* ---- Running modules under a limit --------------------------------------- */

typedef struct Run {
  HloStatus st[2];           /* of each execution */
  char diag[4096];
  float y[4];                /* result of the last successful execution */
  uint64_t peak;             /* hlo_executable_peak_memory after the runs */
} Run;

static const float x_in[4] = {1, 2, 3, 4};

/* Compile text once and execute it `times` (1 or 2) times on x_in under
 * `limit` bytes. */
static Run run_module(const char *file, const char *text, size_t limit, int threads, bool isolate,
                      int times) {
  Run out;
  memset(&out, 0, sizeof out);
  HloCtxOptions o = {.struct_size = sizeof o, .threads = threads, .max_memory = limit,
                     .isolate_custom_calls = isolate};
  HloCtx *c;
  ck_assert_int_eq(hlo_ctx_new(&o, &c), HLO_OK);
  register_handlers(c->ffi);
  HloModule *m = NULL;
  ck_assert_int_eq(hlo_module_parse(c, text, strlen(text), file, &m), HLO_OK);
  int64_t d = 4;
  HloBuffer *in = NULL, *res = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(c, HLO_TYPE_F32, &d, 1, x_in, &in), HLO_OK);
  HloExecutable *e = NULL;
  ck_assert_int_eq(hlo_compile(c, m, NULL, &e), HLO_OK);
  for (int i = 0; i < times; i++) {
    out.st[i] = hlo_execute(e, &in, 1, &res);
    if (out.st[i] == HLO_OK) {
      memcpy(out.y, hlo_buffer_data(res), sizeof out.y);
      hlo_buffer_free(res);
    }
  }
  out.peak = hlo_executable_peak_memory(e);
  snprintf(out.diag, sizeof out.diag, "%s", hlo_ctx_diagnostics(c));
  hlo_executable_free(e);
  hlo_buffer_free(in);
  hlo_module_free(m);
  hlo_ctx_free(c);
  return out;
}

#define CC(NAME, TARGET, OPERAND, CONFIG)                                                    \
  "  " NAME " = f32[4] custom-call(" OPERAND "), custom_call_target=\"" TARGET "\", "           \
  "api_version=API_VERSION_TYPED_FFI, backend_config={" CONFIG "}\n"

/* One call: line 4 is "  ROOT y = ...", y at column 8. */
static void one_call(char *buf, size_t n, const char *config) {
  snprintf(buf, n, "HloModule m\nENTRY main {\n  x = f32[4] parameter(0)\n"
           "  ROOT y = f32[4] custom-call(x), custom_call_target=\"mem_alloc\", "
           "api_version=API_VERSION_TYPED_FFI, backend_config={%s}\n}\n", config);
}

/* ---- In process ---------------------------------------------------------- */

START_TEST(test_limit_counts_allocation) {
  /* The result y (f32[4]) is 16 bytes of live values while the handler runs
   * (the caller's input is not counted); the handler asks for 1000 more.
   * 16 + 1000 = 1016 fit exactly; at 1015 the allocation fails with the
   * limit, the 16 in use and the 1000 requested, and the handler's error
   * names the custom call's line. */
  char text[512];
  one_call(text, sizeof text, "bytes = 1000 : i64, rounds = 1 : i64, keep = 0 : i64");
  Run r = run_module("m.hlo", text, 1015, 1, false, 1);
  ck_assert_int_eq(r.st[0], HLO_NOMEM);
  ck_assert_msg(strstr(r.diag, "m.hlo:4:8: error: in y (custom-call): handler of custom-call "
                               "target \"mem_alloc\" failed: DeviceMemory_Allocate: memory limit "
                               "of 1015 bytes exceeded (16 in use, 1000 more requested)"),
                "%s", r.diag);
  r = run_module("m.hlo", text, 1016, 1, false, 1);
  ck_assert_msg(r.st[0] == HLO_OK, "%s", r.diag);
  for (int i = 0; i < 4; i++) ck_assert_float_eq(r.y[i], x_in[i] + 1);
  ck_assert_uint_eq(r.peak, 1016);
}
END_TEST

START_TEST(test_free_releases) {
  /* Two rounds of allocate 1000 / free: each round needs 16 + 1000 = 1016,
   * which fits a limit of 1016 only if the first Free gave its 1000 back. */
  char text[512];
  one_call(text, sizeof text, "bytes = 1000 : i64, rounds = 2 : i64, keep = 0 : i64");
  Run r = run_module("m.hlo", text, 1016, 1, false, 1);
  ck_assert_msg(r.st[0] == HLO_OK, "%s", r.diag);
  ck_assert_uint_eq(r.peak, 1016);
  /* Kept instead, the two blocks are counted together: the second asks for
   * 1000 with 16 + 1000 in use; 16 + 2000 = 2016 fit. */
  one_call(text, sizeof text, "bytes = 1000 : i64, rounds = 2 : i64, keep = 1 : i64");
  r = run_module("m.hlo", text, 1016, 1, false, 1);
  ck_assert_int_eq(r.st[0], HLO_NOMEM);
  ck_assert_msg(strstr(r.diag, "m.hlo:4:8: error: in y (custom-call): handler of custom-call "
                               "target \"mem_alloc\" failed: DeviceMemory_Allocate: memory limit "
                               "of 1016 bytes exceeded (1016 in use, 1000 more requested)"),
                "%s", r.diag);
  r = run_module("m.hlo", text, 2016, 1, false, 1);
  ck_assert_msg(r.st[0] == HLO_OK, "%s", r.diag);
  ck_assert_uint_eq(r.peak, 2016);
}
END_TEST

static const char *two_calls =
    "HloModule two\nENTRY main {\n  x = f32[4] parameter(0)\n"
    CC("a", "mem_alloc", "x", "bytes = 1000 : i64, rounds = 1 : i64, keep = 1 : i64")
    CC("ROOT b", "mem_alloc", "a", "bytes = 1000 : i64, rounds = 1 : i64, keep = 1 : i64")
    "}\n";

START_TEST(test_unfreed_released_at_end_of_call) {
  /* a keeps its 1000 bytes, and so does b. While a runs: its result, 16,
   * plus 1000. While b runs: a's value and b's result, 32 (a custom call
   * never writes into its operand's buffer), plus b's 1000 = 1032, which
   * fits only if a's block was freed and uncounted when a returned (else
   * 2032). At 1031 it is b (line 5) that fails. Run twice: the second run
   * starts from nothing counted and needs the same. */
  Run r = run_module("two.hlo", two_calls, 1031, 1, false, 1);
  ck_assert_int_eq(r.st[0], HLO_NOMEM);
  ck_assert_msg(strstr(r.diag, "two.hlo:5:8: error: in b (custom-call): handler of custom-call "
                               "target \"mem_alloc\" failed: DeviceMemory_Allocate: memory limit "
                               "of 1031 bytes exceeded (32 in use, 1000 more requested)"),
                "%s", r.diag);
  r = run_module("two.hlo", two_calls, 1032, 1, false, 2);
  ck_assert_msg(r.st[0] == HLO_OK && r.st[1] == HLO_OK, "%s", r.diag);
  for (int i = 0; i < 4; i++) ck_assert_float_eq(r.y[i], x_in[i] + 2);
  ck_assert_uint_eq(r.peak, 1032);
}
END_TEST

START_TEST(test_stale_free_is_an_error) {
  /* a's kept block was freed when a returned; freeing it again from b is an
   * error for b's handler (not a double free). */
  const char *text = "HloModule s\nENTRY main {\n  x = f32[4] parameter(0)\n"
      CC("a", "mem_alloc", "x", "bytes = 1000 : i64, rounds = 1 : i64, keep = 1 : i64")
      CC("ROOT b", "mem_free_stale", "a", "") "}\n";
  Run r = run_module("s.hlo", text, 0, 1, false, 1);
  ck_assert_int_eq(r.st[0], HLO_RUNTIME_ERROR);
  ck_assert_msg(strstr(r.diag, "s.hlo:5:8: error: in b (custom-call): handler of custom-call "
                               "target \"mem_free_stale\" failed: DeviceMemory_Free: 0x"),
                "%s", r.diag);
  ck_assert_msg(strstr(r.diag, " was not allocated by DeviceMemory_Allocate during this handler "
                               "call, or is already freed"), "%s", r.diag);
}
END_TEST

START_TEST(test_pool_tasks_count) {
  /* Four pool tasks (two worker threads) keep 1000 bytes each next to the
   * 16-byte result: 4016 fit; at 4015 whichever task comes fourth finds
   * 16 + 3000 in use, and the future carries its error. */
  const char *text = "HloModule p\nENTRY main {\n  x = f32[4] parameter(0)\n"
      CC("ROOT y", "mem_async", "x", "bytes = 1000 : i64, tasks = 4 : i64") "}\n";
  Run r = run_module("p.hlo", text, 4015, 2, false, 1);
  ck_assert_int_eq(r.st[0], HLO_NOMEM);
  ck_assert_msg(strstr(r.diag, "p.hlo:4:8: error: in y (custom-call): handler of custom-call "
                               "target \"mem_async\" failed: DeviceMemory_Allocate: memory limit "
                               "of 4015 bytes exceeded (3016 in use, 1000 more requested)"),
                "%s", r.diag);
  r = run_module("p.hlo", text, 4016, 2, false, 2);
  ck_assert_msg(r.st[0] == HLO_OK && r.st[1] == HLO_OK, "%s", r.diag);
  ck_assert_uint_eq(r.peak, 4016);
}
END_TEST

/* ---- Isolated ------------------------------------------------------------ */

START_TEST(test_isolated_limit) {
  /* In a worker process the parent first counts the shared mapping for the
   * results: a 4100-byte status header (int + 4096-byte message) rounded to
   * 64 = 4160, plus the 16-byte result rounded to 64 = 64: 4224. With the
   * result value itself, 4240 are in use when the handler asks for 1000:
   * 5240 fit, 5239 do not; the child's error reaches the parent verbatim.
   * The handler never frees: it still passes twice at 5240. */
  char text[512];
  one_call(text, sizeof text, "bytes = 1000 : i64, rounds = 1 : i64, keep = 1 : i64");
  Run r = run_module("m.hlo", text, 5239, 1, true, 1);
  ck_assert_int_eq(r.st[0], HLO_NOMEM);
  ck_assert_msg(strstr(r.diag, "m.hlo:4:8: error: in y (custom-call): handler of custom-call "
                               "target \"mem_alloc\" failed: DeviceMemory_Allocate: memory limit "
                               "of 5239 bytes exceeded (4240 in use, 1000 more requested)"),
                "%s", r.diag);
  r = run_module("m.hlo", text, 5240, 1, true, 2);
  ck_assert_msg(r.st[0] == HLO_OK && r.st[1] == HLO_OK, "%s", r.diag);
  for (int i = 0; i < 4; i++) ck_assert_float_eq(r.y[i], x_in[i] + 1);
}
END_TEST

/* ---- The FFI layer with its own hook ------------------------------------- */

typedef struct Counter { size_t limit, used, peak, reserves, releases; } Counter;

static int count_reserve(void *opaque, size_t n, size_t *limit, size_t *used) {
  Counter *c = opaque;
  if (c->limit && c->used + n > c->limit) {
    *limit = c->limit;
    *used = c->used;
    return -1;
  }
  c->used += n;
  if (c->used > c->peak) c->peak = c->used;
  c->reserves++;
  return 0;
}

static void count_release(void *opaque, size_t n) {
  Counter *c = opaque;
  c->used -= n;
  c->releases++;
}

START_TEST(test_hook_standalone) {
  HlfRegistry *r = hlf_registry_new();
  register_handlers(r);
  int64_t d4[] = {4};
  HloInstr ins;
  memset(&ins, 0, sizeof ins);
  ins.op = HLO_OP_CUSTOM_CALL;
  ins.name = "cc";
  ins.line = 7;
  ins.custom_call_target = "mem_alloc";
  ins.api_version = HLO_API_TYPED_FFI;
  ins.backend_config = "{bytes = 100 : i64, rounds = 3 : i64, keep = 1 : i64}";
  ins.backend_config_len = strlen(ins.backend_config);
  ins.shape.dtype = HLO_F32;
  ins.shape.rank = 1;
  ins.shape.dims = d4;
  float x[4] = {1, 2, 3, 4}, y[4];
  HlfBuf a = {HLO_F32, x, 1, d4}, b = {HLO_F32, y, 1, d4};
  /* Three kept blocks of 100: 300 at the peak, all released at the end. */
  Counter c = {0};
  HlfMemHook hook = {count_reserve, count_release, &c};
  char *err = NULL;
  ck_assert_int_eq(hlf_call_hooked(r, NULL, &ins, &a, 1, &b, 1, &hook, &err), 0);
  ck_assert_uint_eq(c.peak, 300);
  ck_assert_uint_eq(c.used, 0);
  ck_assert_uint_eq(c.reserves, 3);
  ck_assert_uint_eq(c.releases, 3);
  /* A limit of 250: the third block does not fit (200 in use). */
  c = (Counter){.limit = 250};
  ck_assert_int_eq(hlf_call_hooked(r, NULL, &ins, &a, 1, &b, 1, &hook, &err), -1);
  ck_assert_str_eq(err, "handler of custom-call target \"mem_alloc\" failed: "
                        "DeviceMemory_Allocate: memory limit of 250 bytes exceeded (200 in use, "
                        "100 more requested)");
  free(err);
  ck_assert_uint_eq(c.used, 0);
  /* A size no allocator gives (2^64 - 1) fails before anything is counted
   * (counting it first could wrap the count when there is no limit). */
  c = (Counter){0};
  HloInstr huge = ins;
  huge.backend_config = "{bytes = -1 : i64, rounds = 1 : i64, keep = 0 : i64}";
  huge.backend_config_len = strlen(huge.backend_config);
  ck_assert_int_eq(hlf_call_hooked(r, NULL, &huge, &a, 1, &b, 1, &hook, &err), -1);
  ck_assert_str_eq(err, "handler of custom-call target \"mem_alloc\" failed: "
                        "DeviceMemory_Allocate: cannot allocate 18446744073709551615 bytes");
  free(err);
  ck_assert_uint_eq(c.reserves + c.releases + c.used, 0);
  /* Without a hook nothing is counted and the kept blocks are still freed
   * at the end of the call (the leak checkers see none). */
  ck_assert_int_eq(hlf_call(r, NULL, &ins, &a, 1, &b, 1, &err), 0);
  ck_assert(y[0] == 2 && y[3] == 5);
  hlf_registry_free(r);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("ffi_mem");
  TCase *t = tcase_create("limit");
  tcase_set_timeout(t, 30);
  tcase_add_test(t, test_limit_counts_allocation);
  tcase_add_test(t, test_free_releases);
  tcase_add_test(t, test_unfreed_released_at_end_of_call);
  tcase_add_test(t, test_stale_free_is_an_error);
  tcase_add_test(t, test_pool_tasks_count);
  tcase_add_test(t, test_isolated_limit);
  tcase_add_test(t, test_hook_standalone);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tl_main(suite()); }
