/* internal.h: what the files of ffi/ share and nobody else sees: the
 * host-side definitions of the opaque XLA FFI objects (errors, futures,
 * execution contexts), targets and call sites, the attribute tree, and the
 * small helpers every file uses.
 *
 * The files call one way, down this list (tests/layers/calls.sh checks
 * that no two call each other): load.c (loading libraries), explain.c;
 * call.c (running a call); callframe.c; api.c (the API table); registry.c
 * (targets, sites); host.c (settings), members.c; text.c; attrs.c,
 * attrs.re; types.c, legacy.c, pool.c; error.c (errors, strings). */
#ifndef HLORUN_FFI_INTERNAL_H
#define HLORUN_FFI_INTERNAL_H
#include <pthread.h>
#include <stdarg.h>
#include "common/arena.h"
#include "common/text.h"
#include "ffi/ffi.h"
#include "hlorun/ffi.h"

/* ---- Errors (XLA_FFI_Error is ours to define) --------------------------- */

struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  char *message;             /* owned, NUL-terminated */
};
/* (error.c) A new error; when out of memory, a static "out of memory"
 * error, which hlf_error_free leaves alone. */
XLA_FFI_Error *hlf_error(XLA_FFI_Error_Code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void hlf_error_free(XLA_FFI_Error *e);
/* malloc'd printf (error.c); NULL when out of memory. */
char *hlf_strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- Attribute tree (parsed backend_config) ---------------------------- */

typedef struct HlfAttr HlfAttr;
struct HlfAttr {
  const char *name;          /* arena; not NUL-terminated by contract */
  size_t name_len;
  XLA_FFI_AttrType type;
  XLA_FFI_DataType dtype;    /* SCALAR, ARRAY: element type */
  void *data;                /* SCALAR: one element; ARRAY: count elements */
  size_t count;              /* ARRAY: elements; STRING: bytes; DICTIONARY: entries */
  const char *str;           /* STRING: bytes (arena, NUL-terminated copy) */
  HlfAttr *items;            /* DICTIONARY: count entries, sorted by name */
  uint32_t off;              /* offset of the entry's name in the config text */
};

/* Parse a backend_config (raw text: braced verbatim, or the quoted form
 * after HLO unescaping) into a DICTIONARY root in arena a. Empty text or
 * "{}" gives an empty dictionary. On error returns -1, *err_off = offset in
 * text, *err = malloc'd message. */
int hlf_attrs_parse(HlcArena *a, const char *text, size_t len, HlfAttr *root,
                    size_t *err_off, char **err);
/* Insert entry e into dictionary d keeping it sorted; -1 on a duplicate name
 * or out of memory. */
int hlf_attrs_insert(HlcArena *a, HlfAttr *d, const HlfAttr *e);
/* The FFI view of dictionary d, built in arena a (sorted, nested). */
XLA_FFI_Attrs *hlf_attrs_to_ffi(HlcArena *a, const HlfAttr *d);
/* Byte-wise name order: negative, 0, positive. */
int hlf_name_cmp(const char *a, size_t na, const char *b, size_t nb);
const char *hlf_ffi_dtype_name(XLA_FFI_DataType t);  /* "i64", "f32", "pred", ... */

/* Tokens of the backend_config lexer (attrs.re). */
typedef enum HlfTokKind {
  HLF_T_EOF, HLF_T_ERROR, HLF_T_LBRACE, HLF_T_RBRACE, HLF_T_LBRACK, HLF_T_RBRACK,
  HLF_T_LT, HLF_T_GT, HLF_T_COMMA, HLF_T_EQ, HLF_T_COLON, HLF_T_MINUS, HLF_T_INT,
  HLF_T_HEX, HLF_T_FLOAT, HLF_T_STRING, HLF_T_BADSTRING, HLF_T_IDENT, HLF_T_SYMBOL,
  HLF_T_HASH, HLF_T_DIM
} HlfTokKind;
typedef struct HlfTok { HlfTokKind kind; size_t off, len; } HlfTok;
/* Next token of s at pos. s must be NUL-terminated at s[len]; a NUL before
 * len is an error token. */
HlfTok hlf_lex(const char *s, size_t len, size_t pos);
/* Inside tensor<...>: a dimension "N x" (HLF_T_DIM, also "?x"), else the
 * ordinary next token. */
HlfTok hlf_lex_dim(const char *s, size_t len, size_t pos);

/* Offset in the module source of byte raw_off of ins's backend_config. */
size_t hlf_config_source_offset(const HloModule *m, const HloInstr *ins, size_t raw_off);

/* ---- Growable text ------------------------------------------------------ */

void hlf_text_attr_value(HlcText *t, const HlfAttr *a, int indent);

/* ---- Futures ------------------------------------------------------------ */

struct XLA_FFI_Future {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int state;                 /* 0 pending, 1 available, 2 error */
  XLA_FFI_Error *error;      /* owned once set */
};
/* Block until f completes; returns its error (owned by the caller) or NULL.
 * Frees f. */
XLA_FFI_Error *hlf_future_wait_free(XLA_FFI_Future *f);

/* ---- Thread pool -------------------------------------------------------- */

typedef struct HlfPool HlfPool;
HlfPool *hlf_pool_new(int nthreads);
int hlf_pool_size(const HlfPool *p);
int hlf_pool_schedule(HlfPool *p, void (*task)(void *), void *data);
void hlf_pool_free(HlfPool *p);    /* runs what is queued, joins */

/* ---- Targets and call sites -------------------------------------------- */

typedef enum { HLF_SRC_BUILTIN, HLF_SRC_SYMBOL, HLF_SRC_PLUGIN } HlfSource;

typedef struct HlfTarget HlfTarget;
struct HlfTarget {
  char *name;                /* owned */
  HlfSource source;
  XLA_FFI_Handler_Bundle bundle;   /* typed FFI stages; execute non-NULL */
  void *symbol;              /* SYMBOL: the raw function, for legacy conventions */
  uint32_t traits;
  HlfScratchFn *scratch;     /* BUILTIN: its working memory per call, or NULL */
  unsigned api_mask;         /* BUILTIN: the api_versions it answers (1 << v), 0 any */
  char *origin;              /* owned: "LIB.so:SYMBOL", "plugin LIB.so", "built-in" */
  bool queried;              /* metadata query done */
  int major, minor;          /* reported API version */
  char *query_error;         /* owned: why the query failed, or NULL */
  HlfTarget *next;
};

typedef struct HlfState {
  bool set;
  int64_t type_id;
  void *state;
  void (*deleter)(void *);
} HlfState;

/* Per call site (one custom-call instruction of one module). */
typedef struct HlfSite HlfSite;
struct HlfSite {
  const HloModule *m;
  const HloInstr *ins;
  HlcArena arena;            /* attribute tree and FFI attributes */
  bool parsed;
  HlfAttr attrs;             /* DICTIONARY root */
  XLA_FFI_Attrs *ffi_attrs;
  bool instantiated;
  HlfState states[4];        /* by XLA_FFI_ExecutionStage; instantiate lives with
                                the site, the others for one execution */
  HlfSite *next;             /* hash chain */
};

struct HlfMembersOpt { char *target; bool on; struct HlfMembersOpt *next; };

/* The host's settings (host.c). */
typedef struct HlfHost {
  pthread_mutex_t mu;        /* guards the fields below but run_id */
  struct HlfMembersOpt *members;         /* per-target opt-ins */
  int members_all;                       /* -1 unset, 0 off, 1 on */
  bool all_stages;                       /* prepare/initialize run too (hlf_set_all_stages) */
  int nthreads;              /* of the pool, when it starts */
  HlfPool *pool;             /* owned; started on first use */
  int64_t run_id;
  struct { int64_t type_id; void *data; } *user; int nuser;
} HlfHost;

enum { HLF_SITE_BUCKETS = 256 };

struct HlfRegistry {
  pthread_mutex_t mu;        /* guards targets, sites, libs */
  HlfTarget *targets;
  HlfSite *sites[HLF_SITE_BUCKETS];
  void **libs; int nlibs, caplibs;       /* dlopen handles, closed at free */
  HlfHost host;
};

/* ---- Device memory of one handler invocation (api.c) -------------------- */

/* What XLA_FFI_DeviceMemory_Allocate handed out during one invocation and
 * not yet freed, counted through the caller's hook. Allocate and Free may
 * come from the handler's pool tasks at once: mu serialises them. */
typedef struct HlfMemBlock { void *data; size_t size; } HlfMemBlock;
typedef struct HlfMemScope {
  pthread_mutex_t mu;
  const HlfMemHook *hook;    /* NULL: nothing counted */
  HlfMemBlock *v;
  size_t n, cap;
} HlfMemScope;
void hlf_mem_scope_begin(HlfMemScope *s, const HlfMemHook *hook);
/* The invocation is over: release the count of every block still
 * allocated and free it (free_blocks false: leave the blocks alone, for a
 * handler whose asynchronous work may still use them). */
void hlf_mem_scope_end(HlfMemScope *s, bool free_blocks);

/* The execution context a handler sees (opaque to it). */
struct XLA_FFI_ExecutionContext {
  uint32_t magic;            /* HLF_CTX_MAGIC: catches garbage ctx pointers */
  HlfRegistry *r;
  HlfSite *site;
  XLA_FFI_ExecutionStage stage;
  int minor;                 /* API generation the handler was served */
  const HlfMemHook *mem_hook;/* how allocations are counted, or NULL */
  HlfMemScope *mem;          /* the running invocation's allocations (set by
                                hlf_invoke); NULL: plain malloc/free, untracked */
};
#define HLF_CTX_MAGIC 0x484c4643u

/* ---- The registry (registry.c) ------------------------------------------ */

HlfTarget *hlf_find_target(HlfRegistry *r, const char *name);
/* Add (replace) target name (name_len bytes): its bundle, raw symbol (for
 * legacy conventions; NULL for bundles), traits, scratch size (built-ins;
 * NULL for others) and origin (copied). 0, or -1 when out of memory. */
int hlf_add_target(HlfRegistry *r, const char *name, size_t name_len, HlfSource src,
                   const XLA_FFI_Handler_Bundle *b, void *symbol, uint32_t traits,
                   HlfScratchFn *scratch, const char *origin);
/* Register (replace) a typed FFI bundle under name. origin is copied. */
int hlf_register_bundle(HlfRegistry *r, const char *name, size_t name_len,
                        const XLA_FFI_Handler_Bundle *b, uint32_t traits, HlfSource src,
                        const char *origin);
/* The call site of ins in m, made on first use; NULL when out of memory. */
HlfSite *hlf_site_get(HlfRegistry *r, const HloModule *m, const HloInstr *ins);
/* Keep a dlopen handle until the registry is freed. 0, or -1 out of memory. */
int hlf_registry_keep_library(HlfRegistry *r, void *handle);

/* ---- Running a call (call.c) -------------------------------------------- */

/* Ask a typed target its API version and traits (once). 0, or -1 with *err. */
int hlf_target_query(HlfTarget *t, char **err);
/* "API_VERSION_TYPED_FFI" and the like. */
const char *hlf_api_version_name(int v);

/* ---- The host's settings (host.c) --------------------------------------- */

void hlf_host_init(HlfHost *h);
void hlf_host_free(HlfHost *h);
void hlf_host_after_fork(HlfHost *h);
/* The pool behind ThreadPool_Schedule (started on first use; NULL when it
 * cannot start) and its size. */
HlfPool *hlf_host_pool(HlfRegistry *r);
int hlf_host_num_threads(HlfRegistry *r);
int32_t hlf_thread_device(void);
int64_t hlf_run_id(HlfRegistry *r);
/* User data of type_id: true with *data, or false. */
bool hlf_user_data(HlfRegistry *r, int64_t type_id, void **data);
bool hlf_members_wanted(HlfRegistry *r, const char *target);
bool hlf_all_stages(HlfRegistry *r);

/* ---- The API table (api.c) ----------------------------------------------- */

/* API tables by generation: minor 1, 2 or 3; 0 gives the table for
 * registration functions, whose callers' version is not known yet. */
const XLA_FFI_Api *hlf_api(int minor);
/* xla::ffi::GetXlaFfiApi() under its C++ name: the 0.3 table. */
const XLA_FFI_Api *hlf_xla_get_ffi_api(void) __asm__("_ZN3xla3ffi12GetXlaFfiApiEv");
/* Where XLA_FFI_Handler_Register puts a bundle. load.c sets one around a
 * library's loading and its registration function (thread-local; NULL:
 * registrations are refused). add: 0, or -1 when out of memory. */
typedef struct HlfRegistrar HlfRegistrar;
struct HlfRegistrar {
  int (*add)(HlfRegistrar *self, const char *name, size_t name_len,
             const XLA_FFI_Handler_Bundle *b, uint32_t traits, const char *origin);
};
void hlf_set_registrar(HlfRegistrar *reg);

/* ---- Types (types.c) ------------------------------------------------------ */

/* Register type name: the same name gets the same id (a preset id must
 * not belong to another name); the deleter, when given, is kept. NULL, or
 * an error. */
XLA_FFI_Error *hlf_type_register(XLA_FFI_ByteSpan name, XLA_FFI_TypeId *tid,
                                 void (*deleter)(void *));
/* Delete a state with its deleter (or the deleter its type registered). */
void hlf_state_clear(HlfState *s);

/* Metadata query of handler h (callframe.c). 0 with version and traits,
 * else -1 with *err malloc'd. */
int hlf_query_metadata(XLA_FFI_Handler *h, int *major, int *minor, uint32_t *traits, char **err);
/* Invoke h once at ctx->stage with the given leaves and attributes; waits
 * for an asynchronous result. NULL, or an error the caller owns. */
XLA_FFI_Error *hlf_invoke(XLA_FFI_Handler *h, XLA_FFI_ExecutionContext *ctx,
                          const HlfBuf *args, int32_t nargs, const HlfBuf *rets,
                          int32_t nrets, XLA_FFI_Attrs *attrs);

/* Legacy conventions (legacy.c): 0, or -1 with *err malloc'd. */
int hlf_call_legacy(void *fn, int api_version, const HloInstr *ins, const HlfBuf *args,
                    int32_t nargs, const HlfBuf *rets, int32_t nrets, char **err);

/* The "hlorun.instruction" dictionary of ins (members.c). */
int hlf_members_attr(HlcArena *a, const HloInstr *ins, HlfAttr *out);
/* Add ins's backend_config text as the string member "backend_config" of
 * a members dictionary (JSON-config handlers). 0, or -1 out of memory. */
int hlf_members_add_config(HlcArena *a, HlfAttr *members, const HloInstr *ins);
#endif
