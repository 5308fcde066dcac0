/* ffi_test_plugin.c: a shared library of test handlers for check_ffi, loaded
 * with dlopen through --custom-call style bindings and a plugin
 * registration function. The versioned handlers emulate handlers compiled
 * against XLA's c_api.h of each FFI API generation: they call API slots by
 * number and pass Args structs laid out byte for byte as spec/ffi.md 3.5
 * describes for that generation, not through include/hlorun/ffi.h's 0.3
 * declarations. Only the call frame (identical in 0.1..0.3) comes from the
 * header. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hlorun/custom_call_status.h"
#include "hlorun/ffi.h"

typedef XLA_FFI_Error *Fn(void *args);
/* API slot k (function pointers start at byte 48 of the table). */
static Fn *slot(const XLA_FFI_Api *api, int k) {
  Fn *f;
  memcpy(&f, (const char *)api + 48 + 8 * k, sizeof f);
  return f;
}

static void answer(XLA_FFI_CallFrame *f, int minor) {
  XLA_FFI_Metadata_Extension *e = (XLA_FFI_Metadata_Extension *)f->extension_start;
  e->metadata->api_version.major_version = 0;
  e->metadata->api_version.minor_version = minor;
}

static XLA_FFI_Error *make_error(const XLA_FFI_Api *api, const char *msg) {
  struct { size_t size; void *ext; const char *message; int errc; } a = {28, NULL, msg, 2};
  return slot(api, 0)(&a);
}

static void destroy_error(const XLA_FFI_Api *api, XLA_FFI_Error *e) {
  struct { size_t size; void *ext; XLA_FFI_Error *error; } a = {24, NULL, e};
  slot(api, 2)(&a);
}

static int64_t *ret_s64(XLA_FFI_CallFrame *f, int i) {
  return (int64_t *)((XLA_FFI_Buffer *)f->rets.rets[i])->data;
}

static int deleted;
int ffitest_deleted(void) { return __atomic_load_n(&deleted, __ATOMIC_SEQ_CST); }
static void count_delete(void *p) { free(p); __atomic_add_fetch(&deleted, 1, __ATOMIC_SEQ_CST); }

/* 0.1 layouts */
typedef struct { size_t size; void *ext; const char *name; size_t len; XLA_FFI_TypeId *id; } TypeIdReg01;
typedef struct { size_t size; void *ext; void *ctx; XLA_FFI_TypeId *id; void *state; void (*del)(void *); } StateSet01;
typedef struct { size_t size; void *ext; void *ctx; XLA_FFI_TypeId *id; void *state; } StateGet01;
typedef struct { size_t size; void *ext; XLA_FFI_Future *future; } FutureArgs;
typedef struct { size_t size; void *ext; XLA_FFI_Future *future; XLA_FFI_Error *error; } FutureErr;

/* A per-call-site counter kept in the (instantiate-stage) state, set on the
 * first execution: 0.1 (deleter in State_Set) and 0.2 (deleter in TypeInfo). */
static int64_t bump_counter(XLA_FFI_CallFrame *f, const char *type, int gen,
                            XLA_FFI_Error **err) {
  const XLA_FFI_Api *api = f->api;
  static XLA_FFI_TypeId ids[3];
  XLA_FFI_TypeId *id = &ids[gen];
  if (id->type_id == 0) {
    if (gen == 1) {
      TypeIdReg01 a = {40, NULL, type, strlen(type), id};
      if ((*err = slot(api, 5)(&a))) return 0;
    } else {   /* 0.2 of 2025-10-20..27: unversioned TypeInfo {deleter, serialize, deserialize} */
      struct { void (*del)(void *); void *ser, *deser; } info = {count_delete, NULL, NULL};
      struct { size_t size; void *ext; const char *name; size_t len; XLA_FFI_TypeId *id; void *info; }
          a = {40, NULL, type, strlen(type), id, &info};
      if ((*err = slot(api, 5)(&a))) return 0;
    }
  }
  StateGet01 g = {40, NULL, f->ctx, id, NULL};
  XLA_FFI_Error *e = slot(api, 8)(&g);
  if (e) {   /* not set yet: create */
    destroy_error(api, e);
    int64_t *c = calloc(1, sizeof *c);
    if (gen == 1) {
      StateSet01 s = {48, NULL, f->ctx, id, c, count_delete};
      if ((*err = slot(api, 7)(&s))) { free(c); return 0; }
    } else {
      StateGet01 s = {40, NULL, f->ctx, id, c};   /* 0.2 from 2025-11-13: no deleter */
      if ((*err = slot(api, 7)(&s))) { free(c); return 0; }
    }
    g.state = c;
  }
  return ++*(int64_t *)g.state;
}

/* 0.1 with the 15-slot table: futures at slots 12..14. ret0 s64[] = counter. */
XLA_FFI_Error *v01_15(XLA_FFI_CallFrame *f) {
  if (f->extension_start) { answer(f, 1); return NULL; }
  XLA_FFI_Error *err = NULL;
  int64_t c = bump_counter(f, "v01_15.counter", 1, &err);
  if (err) return err;
  FutureArgs fc = {16, NULL, NULL};
  if ((err = slot(f->api, 12)(&fc))) return err;
  FutureArgs fa = {24, NULL, fc.future};
  if ((err = slot(f->api, 13)(&fa))) return err;
  *ret_s64(f, 0) = c;
  f->future = fc.future;
  return NULL;
}

/* 0.1 with the 18-slot table: NumThreads at 12, futures 13..15, RunId 16.
 * The future is completed by a task on the host's thread pool.
 * ret0 s64[] = threads, ret1 s64[] = run id. */
struct Task01 { const XLA_FFI_Api *api; XLA_FFI_Future *future; int64_t *out; };
static void task01(void *p) {
  struct Task01 *t = p;
  usleep(20000);          /* the handler has returned by now (not required) */
  *t->out = 4242;
  FutureArgs fa = {24, NULL, t->future};
  XLA_FFI_Error *e = slot(t->api, 14)(&fa);
  if (e) destroy_error(t->api, e);
  free(t);
}
XLA_FFI_Error *v01_18(XLA_FFI_CallFrame *f) {
  if (f->extension_start) { answer(f, 1); return NULL; }
  int64_t n = -1;
  struct { size_t size; void *ext; void *ctx; int64_t *n; } nt = {32, NULL, f->ctx, &n};
  XLA_FFI_Error *err = slot(f->api, 12)(&nt);
  if (err) return err;
  struct { size_t size; void *ext; void *ctx; int64_t id; } rid = {32, NULL, f->ctx, -1};
  if ((err = slot(f->api, 16)(&rid))) return err;
  *ret_s64(f, 0) = n;
  *ret_s64(f, 1) = rid.id;
  FutureArgs fc = {16, NULL, NULL};
  if ((err = slot(f->api, 13)(&fc))) return err;
  struct Task01 *t = malloc(sizeof *t);
  *t = (struct Task01){f->api, fc.future, ret_s64(f, 2)};
  struct { size_t size; void *ext; void *ctx; void (*task)(void *); void *data; } sc =
      {40, NULL, f->ctx, task01, t};
  if ((err = slot(f->api, 11)(&sc))) return err;
  f->future = fc.future;
  return NULL;
}

/* 0.2: TypeInfo carries the deleter, State_Set has none. ret0 = counter. */
XLA_FFI_Error *v02(XLA_FFI_CallFrame *f) {
  if (f->extension_start) { answer(f, 2); return NULL; }
  XLA_FFI_Error *err = NULL;
  int64_t c = bump_counter(f, "v02.counter", 2, &err);
  if (err) return err;
  *ret_s64(f, 0) = c;
  return NULL;
}

/* 0.3 staged bundle: each stage sets its own state (0.3 State_Set with a
 * stage) and reads the previous stage's. ret0 s64[4] = {instantiations,
 * prepare saw instantiate, initialize saw prepare, executions}. */
typedef struct { size_t size; void *ext; void *ctx; int stage; XLA_FFI_TypeId *id; void *state; } State03;
static XLA_FFI_TypeId staged_id;
static int instantiations;
int ffitest_instantiations(void) { return instantiations; }

static XLA_FFI_Error *register_staged_type(const XLA_FFI_Api *api) {
  if (staged_id.type_id) return NULL;
  XLA_FFI_TypeInfo info = {XLA_FFI_TypeInfo_STRUCT_SIZE, NULL, count_delete};
  XLA_FFI_Type_Register_Args a = {XLA_FFI_Type_Register_Args_STRUCT_SIZE, NULL,
                                  {"staged.state", 12}, &staged_id, &info};
  return slot(api, 5)(&a);
}
static XLA_FFI_Error *set03(XLA_FFI_CallFrame *f, int stage, int64_t v) {
  int64_t *p = malloc(sizeof *p);
  *p = v;
  State03 s = {48, NULL, f->ctx, stage, &staged_id, p};
  XLA_FFI_Error *e = slot(f->api, 7)(&s);
  if (e) free(p);
  return e;
}
static XLA_FFI_Error *get03(XLA_FFI_CallFrame *f, int stage, int64_t *v) {
  State03 g = {48, NULL, f->ctx, stage, &staged_id, NULL};
  XLA_FFI_Error *e = slot(f->api, 8)(&g);
  if (!e) *v = *(int64_t *)g.state;
  return e;
}
static XLA_FFI_Error *staged_instantiate(XLA_FFI_CallFrame *f) {
  if (f->extension_start) { answer(f, 3); return NULL; }
  if (f->stage != 0 || f->args.size != 0) return make_error(f->api, "instantiate: bad frame");
  XLA_FFI_Error *e = register_staged_type(f->api);
  if (e) return e;
  instantiations++;
  return set03(f, 0, 100);
}
static XLA_FFI_Error *staged_prepare(XLA_FFI_CallFrame *f) {
  if (f->extension_start) { answer(f, 3); return NULL; }
  int64_t v = 0;
  XLA_FFI_Error *e = get03(f, 0, &v);
  if (e) return e;
  return set03(f, 1, v + 1);
}
static XLA_FFI_Error *staged_initialize(XLA_FFI_CallFrame *f) {
  if (f->extension_start) { answer(f, 3); return NULL; }
  int64_t v = 0;
  XLA_FFI_Error *e = get03(f, 1, &v);
  if (e) return e;
  return set03(f, 2, v + 1);
}
static int executions;
static XLA_FFI_Error *staged_execute(XLA_FFI_CallFrame *f) {
  if (f->extension_start) { answer(f, 3); return NULL; }
  if (f->stage != 3) return make_error(f->api, "Wrong execution stage");
  int64_t a = 0, b = 0, c = 0;
  XLA_FFI_Error *e = get03(f, 0, &a);
  if (!e) e = get03(f, 1, &b);
  if (!e) e = get03(f, 2, &c);
  if (e) return e;
  int64_t *out = ret_s64(f, 0);
  out[0] = a;
  out[1] = b;
  out[2] = c;
  out[3] = ++executions;
  return NULL;
}

/* Completes its future with an error from a pool thread. */
struct TaskErr { const XLA_FFI_Api *api; XLA_FFI_Future *future; };
static void task_err(void *p) {
  struct TaskErr *t = p;
  usleep(10000);
  FutureErr a = {32, NULL, t->future, make_error(t->api, "async failure from a worker thread")};
  XLA_FFI_Error *e = slot(t->api, 15)(&a);
  if (e) destroy_error(t->api, e);
  free(t);
}
XLA_FFI_Error *v03_async_fail(XLA_FFI_CallFrame *f) {
  if (f->extension_start) { answer(f, 3); return NULL; }
  FutureArgs fc = {16, NULL, NULL};
  XLA_FFI_Error *err = slot(f->api, 13)(&fc);
  if (err) return err;
  struct TaskErr *t = malloc(sizeof *t);
  *t = (struct TaskErr){f->api, fc.future};
  struct { size_t size; void *ext; void *ctx; void (*task)(void *); void *data; } sc =
      {40, NULL, f->ctx, task_err, t};
  if ((err = slot(f->api, 11)(&sc))) return err;
  f->future = fc.future;
  return NULL;
}

XLA_FFI_Error *fails(XLA_FFI_CallFrame *f) {
  if (f->extension_start) { answer(f, 3); return NULL; }
  return make_error(f->api, "boom: the input is not what I wanted");
}
XLA_FFI_Error *no_metadata(XLA_FFI_CallFrame *f) { (void)f; return NULL; }
XLA_FFI_Error *v04(XLA_FFI_CallFrame *f) {
  if (f->extension_start) { answer(f, 4); return NULL; }
  return NULL;
}

/* Legacy conventions. */
void legacy_v1(void *out, const void **in) {   /* f32[4] = in0 + in1 */
  const float *a = in[0], *b = in[1];
  float *o = out;
  for (int i = 0; i < 4; i++) o[i] = a[i] + b[i];
}
void legacy_v2_fail(void *out, const void **in, XlaCustomCallStatus *st) {
  (void)out; (void)in;
  XlaCustomCallStatusSetFailure(st, "legacy says no\0ignored", 22);
}
/* Tuple result (s64[], u8[8]): opaque length and its first 8 bytes. */
void legacy_v3(void *out, const void **in, const char *opaque, size_t len,
               XlaCustomCallStatus *st) {
  (void)in;
  void **o = out;
  *(int64_t *)o[0] = (int64_t)len;
  memset(o[1], 0, 8);
  memcpy(o[1], opaque, len < 8 ? len : 8);
  XlaCustomCallStatusSetSuccess(st);
}

/* Plugin registration: the staged bundle for the host, a CUDA-only handler
 * (ignored) and the failing handler under another name. */
static XLA_FFI_Error *reg(const XLA_FFI_Api *api, const char *name, const char *platform,
                          XLA_FFI_Handler_Bundle b) {
  XLA_FFI_Handler_Register_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Handler_Register_Args_STRUCT_SIZE;
  a.name = (XLA_FFI_ByteSpan){name, strlen(name)};
  a.platform = (XLA_FFI_ByteSpan){platform, strlen(platform)};
  a.bundle = b;
  return api->XLA_FFI_Handler_Register(&a);
}
XLA_FFI_Error *hlorun_ffi_plugin_init(const XLA_FFI_Api *api) {
  XLA_FFI_Error *e = reg(api, "staged", "Host",
                         (XLA_FFI_Handler_Bundle){staged_instantiate, staged_prepare,
                                                  staged_initialize, staged_execute});
  if (!e) e = reg(api, "cuda_only", "CUDA", (XLA_FFI_Handler_Bundle){0, 0, 0, fails});
  if (!e) e = reg(api, "plugin_fails", "cpu", (XLA_FFI_Handler_Bundle){0, 0, 0, fails});
  return e;
}
XLA_FFI_Error *bad_init(const XLA_FFI_Api *api) {
  return make_error(api, "this plugin refuses to register");
}

/* Registration while the library loads, as XLA_FFI_REGISTER_HANDLER does in a
 * static initialiser with `xla::ffi::GetXlaFfiApi()`: that C++ function is
 * declared here under its mangled name, which the host must export (or the
 * library does not load at all). */
const XLA_FFI_Api *ffitest_xla_api(void) __asm__("_ZN3xla3ffi12GetXlaFfiApiEv");
__attribute__((constructor)) static void register_at_load(void) {
  const XLA_FFI_Api *api = ffitest_xla_api();
  XLA_FFI_Error *e = reg(api, "at_load", "Host", (XLA_FFI_Handler_Bundle){0, 0, 0, fails});
  if (e) destroy_error(api, e);   /* outside hlorun's loading: refused, ignored */
}
