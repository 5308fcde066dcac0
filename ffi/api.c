/* api.c: the host side of the XLA FFI API table: errors, futures, type
 * registration, execution-context data, per-call-site state, memory, the
 * thread pool, run id and device ordinal, handler registration. It reads
 * the host's settings (host.c) and the type registry (types.c), and hands
 * registrations to whoever set a registrar (load.c): it never calls the
 * registry or the loader.
 *
 * One table per API generation (doc/custom-calls.md, spec/ffi.md 3.6): all
 * have the 18-slot shape and differ only where an older handler passes a
 * differently laid out Args struct:
 *   0.1: slot 5 is TypeId_Register {name, type_id}; State_Set carries a
 *        deleter; slots 12..14 tell the 15-slot layout (Future_Create,
 *        SetAvailable, SetError) from the 18-slot one (NumThreads,
 *        Future_Create, SetAvailable) by the Args' struct_size.
 *   0.2: Type_Register with a TypeInfo (versioned or not); State_Set with or
 *        without deleter by size; states belong to the instantiate stage.
 *   0.3: State_Set/State_Get name their stage.
 * Args sizes are checked as "at least", as XLA does.
 *
 * Not here: building call frames (callframe.c), the registry (registry.c),
 * error values (error.c).
 */
#include "ffi/internal.h"
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dlfcn.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---- Errors -------------------------------------------------------------- */

static XLA_FFI_Error *error_create(XLA_FFI_Error_Create_Args *a) {
  if (!a) return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "XLA_FFI_Error_Create: NULL args");
  return hlf_error(a->errc, "%s", a->message ? a->message : "");
}

static void error_get_message(XLA_FFI_Error_GetMessage_Args *a) {
  if (a) a->message = a->error ? a->error->message : "";
}

static void error_destroy(XLA_FFI_Error_Destroy_Args *a) {
  if (a) hlf_error_free(a->error);
}

/* Every API function first checks that its Args are at least as large as
 * the layout it reads. */
#define NEED(a, n, fn)                                                              \
  do {                                                                              \
    if (!(a)) return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, fn ": NULL args"); \
    if ((a)->struct_size < (size_t)(n))                                             \
      return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT,                          \
                       "Unexpected " fn "_Args size: expected at least %zu got %zu",  \
                       (size_t)(n), (a)->struct_size);                              \
  } while (0)

static XLA_FFI_Error *check_ctx(XLA_FFI_ExecutionContext *ctx, const char *fn) {
  if (!ctx || ctx->magic != HLF_CTX_MAGIC)
    return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "%s: not an execution context of this call (metadata queries have none)", fn);
  return NULL;
}
#define NEED_CTX(ctx, fn)                          \
  do {                                             \
    XLA_FFI_Error *ce_ = check_ctx((ctx), fn);     \
    if (ce_) return ce_;                           \
  } while (0)

/* ---- Handler registration (only during a plugin's registration) -------- */

/* Where registrations go: set by load.c while a library loads and while its
 * registration function runs, on that thread; the registry is not named
 * here, so the API table needs nothing above it. */
static _Thread_local HlfRegistrar *registrar;
void hlf_set_registrar(HlfRegistrar *reg) { registrar = reg; }

static bool host_platform(XLA_FFI_ByteSpan p) {
  static const char *const names[] = {"host", "cpu"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (p.len == strlen(names[i]) && strncasecmp(p.ptr, names[i], p.len) == 0) return true;
  return false;
}

static XLA_FFI_Error *handler_register(XLA_FFI_Handler_Register_Args *a) {
  NEED(a, XLA_FFI_Handler_Register_Args_STRUCT_SIZE, "XLA_FFI_Handler_Register");
  if (!registrar)
    return hlf_error(XLA_FFI_Error_Code_FAILED_PRECONDITION,
                     "XLA_FFI_Handler_Register: hlorun accepts registrations only while a "
                     "library loads or from a plugin's registration function (--plugin)");
  if (!a->name.ptr || a->name.len == 0)
    return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "XLA_FFI_Handler_Register: empty name");
  if (!host_platform(a->platform)) return NULL;   /* e.g. a CUDA variant: not ours */
  if (!a->bundle.execute)
    return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "XLA_FFI_Handler_Register: %.*s has no execute handler", (int)a->name.len,
                     a->name.ptr);
  char *origin = hlf_strdup_printf("plugin handler %.*s", (int)a->name.len, a->name.ptr);
  int rc = registrar->add(registrar, a->name.ptr, a->name.len, &a->bundle, a->traits,
                          origin ? origin : "plugin");
  free(origin);
  return rc ? hlf_error(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "out of memory") : NULL;
}

static XLA_FFI_Error *stream_get(XLA_FFI_Stream_Get_Args *a) {
  NEED(a, XLA_FFI_Stream_Get_Args_STRUCT_SIZE, "XLA_FFI_Stream_Get");
  return hlf_error(XLA_FFI_Error_Code_UNIMPLEMENTED,
                   "XLA_FFI_Stream_Get: hlorun runs on the host, which has no device stream");
}

/* ---- Types (the registry itself: types.c) ------------------------------- */

/* 0.1: {name, type_id}, no deleter (it travels in State_Set). */
typedef struct TypeIdRegisterV1 {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_ByteSpan name;
  XLA_FFI_TypeId *type_id;
} TypeIdRegisterV1;

static XLA_FFI_Error *typeid_register_v1(XLA_FFI_Type_Register_Args *a) {
  NEED(a, sizeof(TypeIdRegisterV1), "XLA_FFI_TypeId_Register");
  TypeIdRegisterV1 *v = (TypeIdRegisterV1 *)a;
  return hlf_type_register(v->name, v->type_id, NULL);
}

/* 0.2/0.3: type_info is versioned ({24, ext, deleter}) from 2025-10-28;
 * before that it was {deleter, serialize, deserialize}: the first word
 * tells them apart (24 is never a function address). */
static XLA_FFI_Error *type_register(XLA_FFI_Type_Register_Args *a) {
  NEED(a, XLA_FFI_Type_Register_Args_STRUCT_SIZE, "XLA_FFI_Type_Register");
  void (*deleter)(void *) = NULL;
  if (a->type_info) {
    const size_t *first = (const size_t *)a->type_info;
    if (*first == XLA_FFI_TypeInfo_STRUCT_SIZE)
      deleter = a->type_info->deleter;
    else
      memcpy(&deleter, first, sizeof deleter);
  }
  return hlf_type_register(a->name, a->type_id, deleter);
}

/* A plugin's registration function runs before any of its handlers has told
 * its API version, and 0.1's TypeId_Register {name, type_id} and 0.2/0.3's
 * Type_Register {name, type_id, type_info} have the same struct_size (40):
 * a 0.1 caller leaves stack garbage where type_info would be. So the table
 * given to registration functions reads that word without trusting it:
 * through the kernel (process_vm_readv fails cleanly on unmapped memory), and
 * only a versioned TypeInfo {24, ext, deleter} whose deleter lies in a loaded
 * object is taken. Anything else registers the type without a deleter (a
 * 0.1 state brings its own deleter through State_Set; the worst case is a
 * state not freed at exit, never a wild call). */
static bool probe_read(void *dst, const void *src, size_t n) {
  struct iovec local = {dst, n}, remote = {(void *)src, n};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n;
}

static XLA_FFI_Error *type_register_any(XLA_FFI_Type_Register_Args *a) {
  NEED(a, XLA_FFI_Type_Register_Args_STRUCT_SIZE, "XLA_FFI_Type_Register");
  void (*deleter)(void *) = NULL;
  const XLA_FFI_TypeInfo *ti = NULL;
  XLA_FFI_TypeInfo info;
  Dl_info where;
  if (probe_read(&ti, (const char *)a + offsetof(XLA_FFI_Type_Register_Args, type_info),
                 sizeof ti) &&
      ti && probe_read(&info, ti, sizeof info) && info.struct_size == XLA_FFI_TypeInfo_STRUCT_SIZE &&
      info.deleter && dladdr(*(void **)&info.deleter, &where))
    deleter = info.deleter;
  return hlf_type_register(a->name, a->type_id, deleter);
}

/* ---- Execution context data --------------------------------------------- */

static XLA_FFI_Error *context_get(XLA_FFI_ExecutionContext_Get_Args *a) {
  NEED(a, XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE, "XLA_FFI_ExecutionContext_Get");
  NEED_CTX(a->ctx, "XLA_FFI_ExecutionContext_Get");
  if (!a->type_id)
    return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "ExecutionContext_Get: NULL type_id");
  void *data = NULL;
  if (!hlf_user_data(a->ctx->r, a->type_id->type_id, &data))
    return hlf_error(XLA_FFI_Error_Code_NOT_FOUND,
                     "ExecutionContext_Get: no user data of type id %lld in the execution context",
                     (long long)a->type_id->type_id);
  a->data = data;
  return NULL;
}

/* ---- Per-call-site state ------------------------------------------------ */

static const char *const stage_names[] = {"instantiate", "prepare", "initialize", "execute"};

static XLA_FFI_Error *state_set(XLA_FFI_ExecutionContext *ctx, XLA_FFI_ExecutionStage stage,
                                XLA_FFI_TypeId *tid, void *state, void (*deleter)(void *)) {
  NEED_CTX(ctx, "XLA_FFI_State_Set");
  if (!tid) return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "State_Set: NULL type_id");
  if ((unsigned)stage > XLA_FFI_ExecutionStage_EXECUTE)
    return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "State_Set: bad stage %d", (int)stage);
  HlfState *s = &ctx->site->states[stage];
  if (s->set)
    return hlf_error(XLA_FFI_Error_Code_ALREADY_EXISTS,
                     "State_Set: the %s state of this call site is already set",
                     stage_names[stage]);
  *s = (HlfState){true, tid->type_id, state, deleter};
  return NULL;
}

static XLA_FFI_Error *state_get(XLA_FFI_ExecutionContext *ctx, XLA_FFI_ExecutionStage stage,
                                XLA_FFI_TypeId *tid, void **out) {
  NEED_CTX(ctx, "XLA_FFI_State_Get");
  if (!tid) return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "State_Get: NULL type_id");
  if ((unsigned)stage > XLA_FFI_ExecutionStage_EXECUTE)
    return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "State_Get: bad stage %d", (int)stage);
  HlfState *s = &ctx->site->states[stage];
  if (!s->set)
    return hlf_error(XLA_FFI_Error_Code_NOT_FOUND, "State_Get: no %s state is set",
                     stage_names[stage]);
  if (s->type_id != tid->type_id)
    return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "State_Get: the %s state has type id %lld, not %lld", stage_names[stage],
                     (long long)s->type_id, (long long)tid->type_id);
  *out = s->state;
  return NULL;
}

/* Layouts: 0.1 (and 0.2 until 2025-11-12) carry the deleter; later 0.2 has
 * none; 0.3 adds the stage after ctx. */
typedef struct StateSetDeleter {
  size_t struct_size; XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_ExecutionContext *ctx; XLA_FFI_TypeId *type_id; void *state;
  void (*deleter)(void *);
} StateSetDeleter;
typedef struct StateNoStage {   /* State_Set without deleter, State_Get < 0.3 */
  size_t struct_size; XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_ExecutionContext *ctx; XLA_FFI_TypeId *type_id; void *state;
} StateNoStage;

static XLA_FFI_Error *state_set_v1(XLA_FFI_State_Set_Args *a) {
  NEED(a, sizeof(StateSetDeleter), "XLA_FFI_State_Set");
  StateSetDeleter *v = (StateSetDeleter *)a;
  return state_set(v->ctx, XLA_FFI_ExecutionStage_INSTANTIATE, v->type_id, v->state, v->deleter);
}

static XLA_FFI_Error *state_set_v2(XLA_FFI_State_Set_Args *a) {
  NEED(a, sizeof(StateNoStage), "XLA_FFI_State_Set");
  if (a->struct_size >= sizeof(StateSetDeleter)) return state_set_v1(a);
  StateNoStage *v = (StateNoStage *)a;
  return state_set(v->ctx, XLA_FFI_ExecutionStage_INSTANTIATE, v->type_id, v->state, NULL);
}

static XLA_FFI_Error *state_set_v3(XLA_FFI_State_Set_Args *a) {
  NEED(a, sizeof(StateNoStage), "XLA_FFI_State_Set");
  if (a->struct_size < XLA_FFI_State_Set_Args_STRUCT_SIZE) {   /* 0.2 layout, like XLA */
    StateNoStage *v = (StateNoStage *)a;
    return state_set(v->ctx, XLA_FFI_ExecutionStage_INSTANTIATE, v->type_id, v->state, NULL);
  }
  return state_set(a->ctx, a->stage, a->type_id, a->state, NULL);
}

static XLA_FFI_Error *state_get_v1(XLA_FFI_State_Get_Args *a) {
  NEED(a, sizeof(StateNoStage), "XLA_FFI_State_Get");
  StateNoStage *v = (StateNoStage *)a;
  return state_get(v->ctx, XLA_FFI_ExecutionStage_INSTANTIATE, v->type_id, &v->state);
}

static XLA_FFI_Error *state_get_v3(XLA_FFI_State_Get_Args *a) {
  NEED(a, sizeof(StateNoStage), "XLA_FFI_State_Get");
  if (a->struct_size < XLA_FFI_State_Get_Args_STRUCT_SIZE) return state_get_v1(a);
  return state_get(a->ctx, a->stage, a->type_id, &a->state);
}

/* ---- Memory ------------------------------------------------------------- */

/* Host memory for a handler. Inside a call (ctx->mem set by hlf_invoke)
 * every block is recorded and counted through the caller's hook (the
 * interpreter's memory limit): a request that does not fit fails with
 * RESOURCE_EXHAUSTED naming the limit, the bytes in use and the bytes
 * requested. A block lives until DeviceMemory_Free or the end of the
 * invocation that allocated it, whichever comes first: XLA scopes the
 * memory the same way (ffi::ScratchAllocator frees its blocks when the
 * handler returns; the context is valid only during the call), and it
 * means a handler that never frees neither leaks nor keeps its bytes
 * counted. The size counted is the size asked for. */

void hlf_mem_scope_begin(HlfMemScope *s, const HlfMemHook *hook) {
  memset(s, 0, sizeof *s);
  pthread_mutex_init(&s->mu, NULL);
  s->hook = hook;
}

void hlf_mem_scope_end(HlfMemScope *s, bool free_blocks) {
  pthread_mutex_lock(&s->mu);
  for (size_t i = 0; i < s->n; i++) {
    if (free_blocks) free(s->v[i].data);
    if (s->hook) s->hook->release(s->hook->opaque, s->v[i].size);
  }
  free(s->v);
  s->v = NULL;
  s->n = s->cap = 0;
  pthread_mutex_unlock(&s->mu);
  pthread_mutex_destroy(&s->mu);
}

/* Count and record block (p, size) in s; on refusal nothing is kept. */
static XLA_FFI_Error *scope_add(HlfMemScope *s, size_t size, size_t al, void **out) {
  if (size > PTRDIFF_MAX)   /* no allocator gives that; and counting it could wrap */
    return hlf_error(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                     "DeviceMemory_Allocate: cannot allocate %zu bytes", size);
  XLA_FFI_Error *err = NULL;
  pthread_mutex_lock(&s->mu);
  size_t limit = 0, used = 0;
  if (s->hook && s->hook->reserve(s->hook->opaque, size, &limit, &used)) {
    err = hlf_error(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                    "DeviceMemory_Allocate: memory limit of %zu bytes exceeded (%zu in use, "
                    "%zu more requested)", limit, used, size);
    goto out;
  }
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 8;
    HlfMemBlock *v = realloc(s->v, cap * sizeof *v);
    if (!v) goto oom;
    s->v = v;
    s->cap = cap;
  }
  void *p = NULL;
  if (posix_memalign(&p, al, size ? size : 1)) goto oom;
  s->v[s->n++] = (HlfMemBlock){p, size};
  *out = p;
  goto out;
oom:
  if (s->hook) s->hook->release(s->hook->opaque, size);
  err = hlf_error(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                  "DeviceMemory_Allocate: cannot allocate %zu bytes", size);
out:
  pthread_mutex_unlock(&s->mu);
  return err;
}

static XLA_FFI_Error *memory_allocate(XLA_FFI_DeviceMemory_Allocate_Args *a) {
  NEED(a, XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE, "XLA_FFI_DeviceMemory_Allocate");
  NEED_CTX(a->ctx, "XLA_FFI_DeviceMemory_Allocate");
  size_t al = a->alignment ? a->alignment : 16;
  if (al & (al - 1))
    return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "DeviceMemory_Allocate: alignment %zu is not a power of two", a->alignment);
  if (al < sizeof(void *)) al = sizeof(void *);
  void *p = NULL;
  if (a->ctx->mem) {
    XLA_FFI_Error *e = scope_add(a->ctx->mem, a->size, al, &p);
    if (e) return e;
  } else if (posix_memalign(&p, al, a->size ? a->size : 1)) {   /* no call: untracked */
    return hlf_error(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                     "DeviceMemory_Allocate: cannot allocate %zu bytes", a->size);
  }
  a->data = p;
  return NULL;
}

/* Only blocks of the running invocation can be freed: anything else (a
 * block of an earlier call, which hlorun freed when that call ended, a
 * block freed twice, a stray pointer) is an error rather than a double
 * free. The newest block is searched first (blocks are mostly freed in
 * reverse order). */
static XLA_FFI_Error *memory_free(XLA_FFI_DeviceMemory_Free_Args *a) {
  NEED(a, XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE, "XLA_FFI_DeviceMemory_Free");
  NEED_CTX(a->ctx, "XLA_FFI_DeviceMemory_Free");
  HlfMemScope *s = a->ctx->mem;
  if (!s || !a->data) {
    free(a->data);
    return NULL;
  }
  pthread_mutex_lock(&s->mu);
  size_t i = s->n;
  while (i > 0 && s->v[i - 1].data != a->data) i--;
  if (i == 0) {
    pthread_mutex_unlock(&s->mu);
    return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "DeviceMemory_Free: %p was not allocated by DeviceMemory_Allocate during "
                     "this handler call, or is already freed", a->data);
  }
  HlfMemBlock b = s->v[i - 1];
  s->v[i - 1] = s->v[--s->n];
  if (s->hook) s->hook->release(s->hook->opaque, b.size);
  pthread_mutex_unlock(&s->mu);
  free(b.data);
  return NULL;
}

/* ---- Threads ------------------------------------------------------------ */

static XLA_FFI_Error *pool_schedule(XLA_FFI_ThreadPool_Schedule_Args *a) {
  NEED(a, XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE, "XLA_FFI_ThreadPool_Schedule");
  NEED_CTX(a->ctx, "XLA_FFI_ThreadPool_Schedule");
  if (!a->task) return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "ThreadPool_Schedule: NULL task");
  HlfPool *p = hlf_host_pool(a->ctx->r);
  if (!p || hlf_pool_schedule(p, a->task, a->data))
    return hlf_error(XLA_FFI_Error_Code_UNAVAILABLE, "ThreadPool_Schedule: no thread pool");
  return NULL;
}

static XLA_FFI_Error *pool_num_threads(XLA_FFI_ThreadPool_NumThreads_Args *a) {
  NEED(a, XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE, "XLA_FFI_ThreadPool_NumThreads");
  NEED_CTX(a->ctx, "XLA_FFI_ThreadPool_NumThreads");
  if (!a->num_threads)
    return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "ThreadPool_NumThreads: NULL num_threads");
  *a->num_threads = hlf_host_num_threads(a->ctx->r);
  return NULL;
}

/* ---- Futures ------------------------------------------------------------ */

static XLA_FFI_Error *future_create(XLA_FFI_Future_Create_Args *a) {
  NEED(a, XLA_FFI_Future_Create_Args_STRUCT_SIZE, "XLA_FFI_Future_Create");
  XLA_FFI_Future *f = calloc(1, sizeof *f);
  if (!f) return hlf_error(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
  pthread_mutex_init(&f->mu, NULL);
  pthread_cond_init(&f->cv, NULL);
  a->future = f;
  return NULL;
}

static XLA_FFI_Error *complete(XLA_FFI_Future *f, XLA_FFI_Error *e, const char *fn) {
  if (!f) {
    hlf_error_free(e);
    return hlf_error(XLA_FFI_Error_Code_INVALID_ARGUMENT, "%s: NULL future", fn);
  }
  pthread_mutex_lock(&f->mu);
  if (f->state != 0) {
    pthread_mutex_unlock(&f->mu);
    hlf_error_free(e);
    return hlf_error(XLA_FFI_Error_Code_FAILED_PRECONDITION, "%s: the future is already complete", fn);
  }
  f->state = e ? 2 : 1;
  f->error = e;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
  return NULL;
}

static XLA_FFI_Error *future_set_available(XLA_FFI_Future_SetAvailable_Args *a) {
  NEED(a, XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE, "XLA_FFI_Future_SetAvailable");
  return complete(a->future, NULL, "XLA_FFI_Future_SetAvailable");
}

static XLA_FFI_Error *future_set_error(XLA_FFI_Future_SetError_Args *a) {
  NEED(a, XLA_FFI_Future_SetError_Args_STRUCT_SIZE, "XLA_FFI_Future_SetError");
  XLA_FFI_Error *e = a->error ? a->error
                              : hlf_error(XLA_FFI_Error_Code_UNKNOWN, "future set to a NULL error");
  return complete(a->future, e, "XLA_FFI_Future_SetError");
}

XLA_FFI_Error *hlf_future_wait_free(XLA_FFI_Future *f) {
  pthread_mutex_lock(&f->mu);
  while (f->state == 0) pthread_cond_wait(&f->cv, &f->mu);
  XLA_FFI_Error *e = f->error;
  pthread_mutex_unlock(&f->mu);
  pthread_cond_destroy(&f->cv);
  pthread_mutex_destroy(&f->mu);
  free(f);
  return e;
}

/* ---- Run information ----------------------------------------------------- */

static XLA_FFI_Error *run_id_get(XLA_FFI_RunId_Get_Args *a) {
  NEED(a, XLA_FFI_RunId_Get_Args_STRUCT_SIZE, "XLA_FFI_RunId_Get");
  NEED_CTX(a->ctx, "XLA_FFI_RunId_Get");
  a->run_id = hlf_run_id(a->ctx->r);
  return NULL;
}

static XLA_FFI_Error *device_ordinal_get(XLA_FFI_DeviceOrdinal_Get_Args *a) {
  NEED(a, XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE, "XLA_FFI_DeviceOrdinal_Get");
  NEED_CTX(a->ctx, "XLA_FFI_DeviceOrdinal_Get");
  a->device_ordinal = hlf_thread_device();
  return NULL;
}

/* ---- 0.1 slots 12..14: two layouts told apart by struct_size ------------- */

static XLA_FFI_Error *slot12_v1(XLA_FFI_ThreadPool_NumThreads_Args *a) {
  if (a && a->struct_size == XLA_FFI_Future_Create_Args_STRUCT_SIZE)
    return future_create((XLA_FFI_Future_Create_Args *)a);
  return pool_num_threads(a);
}
static XLA_FFI_Error *slot13_v1(XLA_FFI_Future_Create_Args *a) {
  if (a && a->struct_size == XLA_FFI_Future_Create_Args_STRUCT_SIZE) return future_create(a);
  return future_set_available((XLA_FFI_Future_SetAvailable_Args *)a);
}
static XLA_FFI_Error *slot14_v1(XLA_FFI_Future_SetAvailable_Args *a) {
  if (a && a->struct_size == XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE)
    return future_set_available(a);
  return future_set_error((XLA_FFI_Future_SetError_Args *)a);
}

/* ---- The tables ----------------------------------------------------------- */

#define TABLE(MINOR, TYPEREG, STATESET, STATEGET, S12, S13, S14)                    \
  {                                                                                 \
    .struct_size = sizeof(XLA_FFI_Api),                                             \
    .api_version = {XLA_FFI_Api_Version_STRUCT_SIZE, NULL, 0, MINOR},               \
    .XLA_FFI_Error_Create = error_create,                                           \
    .XLA_FFI_Error_GetMessage = error_get_message,                                  \
    .XLA_FFI_Error_Destroy = error_destroy,                                         \
    .XLA_FFI_Handler_Register = handler_register,                                   \
    .XLA_FFI_Stream_Get = stream_get,                                               \
    .XLA_FFI_Type_Register = TYPEREG,                                               \
    .XLA_FFI_ExecutionContext_Get = context_get,                                    \
    .XLA_FFI_State_Set = STATESET,                                                  \
    .XLA_FFI_State_Get = STATEGET,                                                  \
    .XLA_FFI_DeviceMemory_Allocate = memory_allocate,                               \
    .XLA_FFI_DeviceMemory_Free = memory_free,                                       \
    .XLA_FFI_ThreadPool_Schedule = pool_schedule,                                   \
    .XLA_FFI_ThreadPool_NumThreads = S12,                                           \
    .XLA_FFI_Future_Create = S13,                                                   \
    .XLA_FFI_Future_SetAvailable = S14,                                             \
    .XLA_FFI_Future_SetError = future_set_error,                                    \
    .XLA_FFI_RunId_Get = run_id_get,                                                \
    .XLA_FFI_DeviceOrdinal_Get = device_ordinal_get,                                \
  }

static const XLA_FFI_Api api_v1 = TABLE(1, typeid_register_v1, state_set_v1, state_get_v1,
                                        slot12_v1, slot13_v1, slot14_v1);
static const XLA_FFI_Api api_v2 = TABLE(2, type_register, state_set_v2, state_get_v1,
                                        pool_num_threads, future_create, future_set_available);
static const XLA_FFI_Api api_v3 = TABLE(3, type_register, state_set_v3, state_get_v3,
                                        pool_num_threads, future_create, future_set_available);

/* For registration functions (version not yet known): 0.3 except for the
 * Type_Register that tolerates a 0.1 caller. */
static const XLA_FFI_Api api_register = TABLE(3, type_register_any, state_set_v3, state_get_v3,
                                              pool_num_threads, future_create,
                                              future_set_available);

const XLA_FFI_Api *hlf_api(int minor) {
  return minor == 1 ? &api_v1 : minor == 2 ? &api_v2 : minor == 3 ? &api_v3 : &api_register;
}

/* XLA's process-wide entry point, C++ `const XLA_FFI_Api*
 * xla::ffi::GetXlaFfiApi()` (declared by XLA's ffi.h since 0.2, defined by
 * XLA itself). Libraries that register handlers and types while they load
 * (XLA_FFI_REGISTER_HANDLER / XLA_FFI_REGISTER_TYPE with GetXlaFfiApi()) need
 * the symbol to exist, or dlopen fails. A function taking nothing and
 * returning a pointer has the same ABI in C and C++, so defining it here under
 * its mangled name is exact. Its callers are built with 0.2+ headers: they
 * get the 0.3 table (0.2 layouts are read by size there). The C symbol
 * XLA_FFI_GetApi of c_api.h is deliberately not defined: 0.1 callers would
 * pass a TypeId_Register layout that the 0.3 table cannot tell from its own,
 * so a missing symbol (a clear dlopen error) is safer than a misread. */
const XLA_FFI_Api *hlf_xla_get_ffi_api(void) __asm__("_ZN3xla3ffi12GetXlaFfiApiEv");
const XLA_FFI_Api *hlf_xla_get_ffi_api(void) { return &api_v3; }
