/* hlorun/ffi.h: the XLA FFI C ABI, for writing custom-call handlers that
 * hlorun (and XLA itself) can call.
 *
 * Every type, enum value, struct layout and API-table slot here is binary
 * identical to XLA's xla/ffi/api/c_api.h at FFI API version 0.3 (LP64). A
 * handler written against this header runs under XLA unchanged, and a handler
 * built with XLA's own headers (0.1 .. 0.3) runs under hlorun unchanged.
 * Field names follow XLA's so code written for one compiles with the other.
 * The layouts of older API versions that differ (0.1's TypeId_Register and
 * State_Set with a deleter, the 15-slot table) are described in
 * doc/custom-calls.md; hlorun serves them, this header does not declare them.
 *
 * At the end: a few static inline helpers (hlorun_ffi_*) that make C
 * handlers shorter. They only use the ABI above, so handlers using them stay
 * portable to XLA.
 *
 * This header is C99 and also compiles as C++.
 */
#ifndef HLORUN_FFI_H
#define HLORUN_FFI_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XLA_FFI_API_MAJOR 0
#define XLA_FFI_API_MINOR 3

/* Size a caller puts into struct_size: the end of the struct's "last" field,
 * which for a few structs is not the physical last one (see the notes). */
#define XLA_FFI_STRUCT_SIZE(type, last) \
  (offsetof(type, last) + sizeof(((type *)0)->last))
#define XLA_FFI_DEFINE_STRUCT_TRAITS(sname, last) \
  typedef struct sname sname;                    \
  enum { sname##_STRUCT_SIZE = XLA_FFI_STRUCT_SIZE(sname, last) }

typedef struct XLA_FFI_Api XLA_FFI_Api;
typedef struct XLA_FFI_InternalApi XLA_FFI_InternalApi;  /* never used by hlorun: NULL */

/* ---- Extensions --------------------------------------------------------- */

typedef enum { XLA_FFI_Extension_Metadata = 1 } XLA_FFI_Extension_Type;

typedef struct XLA_FFI_Extension_Base {
  size_t struct_size;
  XLA_FFI_Extension_Type type;
  struct XLA_FFI_Extension_Base *next;   /* chain of extensions, NULL-terminated */
} XLA_FFI_Extension_Base;
enum { XLA_FFI_Extension_Base_STRUCT_SIZE = XLA_FFI_STRUCT_SIZE(XLA_FFI_Extension_Base, next) };

/* ---- Version ------------------------------------------------------------ */

struct XLA_FFI_Api_Version {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  int major_version;
  int minor_version;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Api_Version, minor_version);

/* ---- Errors ------------------------------------------------------------- */

/* Opaque; the host defines it. NULL means success. Whoever receives a
 * non-NULL error owns it and destroys it with XLA_FFI_Error_Destroy. */
typedef struct XLA_FFI_Error XLA_FFI_Error;

typedef enum {   /* the absl status codes */
  XLA_FFI_Error_Code_OK = 0,
  XLA_FFI_Error_Code_CANCELLED = 1,
  XLA_FFI_Error_Code_UNKNOWN = 2,
  XLA_FFI_Error_Code_INVALID_ARGUMENT = 3,
  XLA_FFI_Error_Code_DEADLINE_EXCEEDED = 4,
  XLA_FFI_Error_Code_NOT_FOUND = 5,
  XLA_FFI_Error_Code_ALREADY_EXISTS = 6,
  XLA_FFI_Error_Code_PERMISSION_DENIED = 7,
  XLA_FFI_Error_Code_RESOURCE_EXHAUSTED = 8,
  XLA_FFI_Error_Code_FAILED_PRECONDITION = 9,
  XLA_FFI_Error_Code_ABORTED = 10,
  XLA_FFI_Error_Code_OUT_OF_RANGE = 11,
  XLA_FFI_Error_Code_UNIMPLEMENTED = 12,
  XLA_FFI_Error_Code_INTERNAL = 13,
  XLA_FFI_Error_Code_UNAVAILABLE = 14,
  XLA_FFI_Error_Code_DATA_LOSS = 15,
  XLA_FFI_Error_Code_UNAUTHENTICATED = 16
} XLA_FFI_Error_Code;

struct XLA_FFI_Error_Create_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  const char *message;       /* NUL-terminated; the host copies it */
  XLA_FFI_Error_Code errc;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Error_Create_Args, errc);
typedef XLA_FFI_Error *XLA_FFI_Error_Create(XLA_FFI_Error_Create_Args *args);

struct XLA_FFI_Error_GetMessage_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_Error *error;
  const char *message;       /* out: valid until the error is destroyed */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Error_GetMessage_Args, message);
typedef void XLA_FFI_Error_GetMessage(XLA_FFI_Error_GetMessage_Args *args);

struct XLA_FFI_Error_Destroy_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_Error *error;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Error_Destroy_Args, error);
typedef void XLA_FFI_Error_Destroy(XLA_FFI_Error_Destroy_Args *args);

/* ---- Data types (= xla::PrimitiveType numbers; sparse) ------------------ */

typedef enum {
  XLA_FFI_DataType_INVALID = 0,
  XLA_FFI_DataType_PRED = 1,
  XLA_FFI_DataType_S8 = 2,
  XLA_FFI_DataType_S16 = 3,
  XLA_FFI_DataType_S32 = 4,
  XLA_FFI_DataType_S64 = 5,
  XLA_FFI_DataType_U8 = 6,
  XLA_FFI_DataType_U16 = 7,
  XLA_FFI_DataType_U32 = 8,
  XLA_FFI_DataType_U64 = 9,
  XLA_FFI_DataType_F16 = 10,
  XLA_FFI_DataType_F32 = 11,
  XLA_FFI_DataType_F64 = 12,
  XLA_FFI_DataType_C64 = 15,
  XLA_FFI_DataType_BF16 = 16,
  XLA_FFI_DataType_TOKEN = 17,
  XLA_FFI_DataType_C128 = 18,
  XLA_FFI_DataType_F8E5M2 = 19,
  XLA_FFI_DataType_F8E4M3FN = 20,
  XLA_FFI_DataType_S4 = 21,
  XLA_FFI_DataType_U4 = 22,
  XLA_FFI_DataType_F8E4M3B11FNUZ = 23,
  XLA_FFI_DataType_F8E5M2FNUZ = 24,
  XLA_FFI_DataType_F8E4M3FNUZ = 25,
  XLA_FFI_DataType_S2 = 26,
  XLA_FFI_DataType_U2 = 27,
  XLA_FFI_DataType_F8E4M3 = 28,
  XLA_FFI_DataType_F8E3M4 = 29,
  XLA_FFI_DataType_S1 = 30,
  XLA_FFI_DataType_U1 = 31,
  XLA_FFI_DataType_F4E2M1FN = 32,
  XLA_FFI_DataType_F8E8M0FNU = 33
} XLA_FFI_DataType;

/* ---- Arguments, results, attributes ------------------------------------ */

/* One operand or result leaf: dense row-major data (sub-byte types one
 * element per byte). Tokens: dtype TOKEN, data NULL, rank 0. */
struct XLA_FFI_Buffer {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_DataType dtype;
  void *data;
  int64_t rank;
  int64_t *dims;             /* rank extents; may be NULL for rank 0 */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Buffer, dims);

typedef enum { XLA_FFI_ArgType_BUFFER = 1 } XLA_FFI_ArgType;
typedef enum { XLA_FFI_RetType_BUFFER = 1 } XLA_FFI_RetType;
typedef enum {
  XLA_FFI_AttrType_ARRAY = 1,
  XLA_FFI_AttrType_DICTIONARY = 2,
  XLA_FFI_AttrType_SCALAR = 3,
  XLA_FFI_AttrType_STRING = 4
} XLA_FFI_AttrType;

/* Opaque per-call context; reach its contents through the API functions. */
typedef struct XLA_FFI_ExecutionContext XLA_FFI_ExecutionContext;

struct XLA_FFI_TypeId { int64_t type_id; };
typedef struct XLA_FFI_TypeId XLA_FFI_TypeId;

/* Strings are byte spans: not NUL-terminated by contract. */
struct XLA_FFI_ByteSpan { const char *ptr; size_t len; };
typedef struct XLA_FFI_ByteSpan XLA_FFI_ByteSpan;

struct XLA_FFI_Scalar { XLA_FFI_DataType dtype; void *value; };
typedef struct XLA_FFI_Scalar XLA_FFI_Scalar;

struct XLA_FFI_Array { XLA_FFI_DataType dtype; size_t size; void *data; };
typedef struct XLA_FFI_Array XLA_FFI_Array;

/* ---- Futures (asynchronous handlers) ------------------------------------ */

typedef struct XLA_FFI_Future XLA_FFI_Future;

struct XLA_FFI_Future_Create_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_Future *future;    /* out */
};
/* XLA names extension_start as the last field here: STRUCT_SIZE is 16. */
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Future_Create_Args, extension_start);
typedef XLA_FFI_Error *XLA_FFI_Future_Create(XLA_FFI_Future_Create_Args *args);

struct XLA_FFI_Future_SetAvailable_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_Future *future;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Future_SetAvailable_Args, future);
typedef XLA_FFI_Error *XLA_FFI_Future_SetAvailable(XLA_FFI_Future_SetAvailable_Args *args);

struct XLA_FFI_Future_SetError_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_Future *future;
  XLA_FFI_Error *error;      /* the host takes ownership */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Future_SetError_Args, error);
typedef XLA_FFI_Error *XLA_FFI_Future_SetError(XLA_FFI_Future_SetError_Args *args);

/* ---- Call frame --------------------------------------------------------- */

typedef enum {
  XLA_FFI_ExecutionStage_INSTANTIATE = 0,  /* once per call site */
  XLA_FFI_ExecutionStage_PREPARE = 1,
  XLA_FFI_ExecutionStage_INITIALIZE = 2,
  XLA_FFI_ExecutionStage_EXECUTE = 3
} XLA_FFI_ExecutionStage;

struct XLA_FFI_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  int64_t size;
  XLA_FFI_ArgType *types;    /* size entries */
  void **args;               /* size entries, each -> XLA_FFI_Buffer */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Args, args);

struct XLA_FFI_Rets {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  int64_t size;
  XLA_FFI_RetType *types;
  void **rets;               /* each -> XLA_FFI_Buffer */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Rets, rets);

/* Entries are sorted by name (byte-wise) at every nesting level. attrs[i]
 * points to an XLA_FFI_Scalar, XLA_FFI_Array, XLA_FFI_ByteSpan or nested
 * XLA_FFI_Attrs according to types[i]. */
struct XLA_FFI_Attrs {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  int64_t size;
  XLA_FFI_AttrType *types;
  XLA_FFI_ByteSpan **names;
  void **attrs;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Attrs, attrs);

struct XLA_FFI_CallFrame {
  size_t struct_size;        /* always XLA_FFI_CallFrame_STRUCT_SIZE (168) */
  XLA_FFI_Extension_Base *extension_start;
  const XLA_FFI_Api *api;
  XLA_FFI_ExecutionContext *ctx;
  XLA_FFI_ExecutionStage stage;
  XLA_FFI_Args args;
  XLA_FFI_Rets rets;
  XLA_FFI_Attrs attrs;
  XLA_FFI_Future *future;    /* out: set by an asynchronous handler */
};
/* attrs is the "last" field: STRUCT_SIZE 168 although sizeof is 176. */
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_CallFrame, attrs);

/* ---- Handlers ----------------------------------------------------------- */

typedef XLA_FFI_Error *XLA_FFI_Handler(XLA_FFI_CallFrame *call_frame);

struct XLA_FFI_Handler_Bundle {
  XLA_FFI_Handler *instantiate;  /* optional */
  XLA_FFI_Handler *prepare;      /* optional */
  XLA_FFI_Handler *initialize;   /* optional */
  XLA_FFI_Handler *execute;      /* required */
};
typedef struct XLA_FFI_Handler_Bundle XLA_FFI_Handler_Bundle;

enum XLA_FFI_Handler_TraitsBits { XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE = 1u << 0 };
typedef uint32_t XLA_FFI_Handler_Traits;

struct XLA_FFI_Handler_Register_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_ByteSpan name;
  XLA_FFI_ByteSpan platform;     /* hlorun accepts "Host" and "cpu" (any case) */
  XLA_FFI_Handler_Bundle bundle;
  XLA_FFI_Handler_Traits traits;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Handler_Register_Args, traits);
typedef XLA_FFI_Error *XLA_FFI_Handler_Register(XLA_FFI_Handler_Register_Args *args);

/* ---- User types --------------------------------------------------------- */

struct XLA_FFI_TypeInfo {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  void (*deleter)(void *object);   /* how the host frees a state of this type */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_TypeInfo, deleter);

struct XLA_FFI_Type_Register_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_ByteSpan name;
  XLA_FFI_TypeId *type_id;          /* in-out: 0 asks the host to assign one */
  const XLA_FFI_TypeInfo *type_info;
};
/* XLA keeps type_id as the "last" field: STRUCT_SIZE 40 (sizeof 48). */
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Type_Register_Args, type_id);
typedef XLA_FFI_Error *XLA_FFI_Type_Register(XLA_FFI_Type_Register_Args *args);

/* ---- Execution context, state ------------------------------------------- */

struct XLA_FFI_ExecutionContext_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_ExecutionContext *ctx;
  XLA_FFI_TypeId *type_id;
  void *data;                       /* out */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_ExecutionContext_Get_Args, data);
typedef XLA_FFI_Error *XLA_FFI_ExecutionContext_Get(XLA_FFI_ExecutionContext_Get_Args *args);

struct XLA_FFI_State_Set_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_ExecutionContext *ctx;
  XLA_FFI_ExecutionStage stage;     /* which stage's state (0.3) */
  XLA_FFI_TypeId *type_id;
  void *state;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_State_Set_Args, state);
typedef XLA_FFI_Error *XLA_FFI_State_Set(XLA_FFI_State_Set_Args *args);

struct XLA_FFI_State_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_ExecutionContext *ctx;
  XLA_FFI_ExecutionStage stage;
  XLA_FFI_TypeId *type_id;
  void *state;                      /* out */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_State_Get_Args, state);
typedef XLA_FFI_Error *XLA_FFI_State_Get(XLA_FFI_State_Get_Args *args);

/* ---- Streams, memory, threads, run ------------------------------------- */

struct XLA_FFI_Stream_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_ExecutionContext *ctx;
  void *stream;                     /* out (no streams on the host) */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Stream_Get_Args, stream);
typedef XLA_FFI_Error *XLA_FFI_Stream_Get(XLA_FFI_Stream_Get_Args *args);

struct XLA_FFI_DeviceMemory_Allocate_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_ExecutionContext *ctx;
  size_t size;
  size_t alignment;
  void *data;                       /* out */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_DeviceMemory_Allocate_Args, data);
typedef XLA_FFI_Error *XLA_FFI_DeviceMemory_Allocate(XLA_FFI_DeviceMemory_Allocate_Args *args);

struct XLA_FFI_DeviceMemory_Free_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_ExecutionContext *ctx;
  size_t size;
  void *data;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_DeviceMemory_Free_Args, data);
typedef XLA_FFI_Error *XLA_FFI_DeviceMemory_Free(XLA_FFI_DeviceMemory_Free_Args *args);

typedef void XLA_FFI_Task(void *data);

struct XLA_FFI_ThreadPool_Schedule_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_ExecutionContext *ctx;
  XLA_FFI_Task *task;
  void *data;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_ThreadPool_Schedule_Args, data);
typedef XLA_FFI_Error *XLA_FFI_ThreadPool_Schedule(XLA_FFI_ThreadPool_Schedule_Args *args);

struct XLA_FFI_ThreadPool_NumThreads_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_ExecutionContext *ctx;
  int64_t *num_threads;             /* out, written through the pointer */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_ThreadPool_NumThreads_Args, num_threads);
typedef XLA_FFI_Error *XLA_FFI_ThreadPool_NumThreads(XLA_FFI_ThreadPool_NumThreads_Args *args);

struct XLA_FFI_RunId_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_ExecutionContext *ctx;
  int64_t run_id;                   /* out */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_RunId_Get_Args, run_id);
typedef XLA_FFI_Error *XLA_FFI_RunId_Get(XLA_FFI_RunId_Get_Args *args);

struct XLA_FFI_DeviceOrdinal_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_ExecutionContext *ctx;
  int32_t device_ordinal;           /* out */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_DeviceOrdinal_Get_Args, device_ordinal);
typedef XLA_FFI_Error *XLA_FFI_DeviceOrdinal_Get(XLA_FFI_DeviceOrdinal_Get_Args *args);

/* ---- Metadata extension (the version query) ---------------------------- */

struct XLA_FFI_Metadata {
  size_t struct_size;
  XLA_FFI_Api_Version api_version;  /* the handler's compiled-in version */
  XLA_FFI_Handler_Traits traits;
  XLA_FFI_TypeId state_type_id;     /* written by newer handlers */
};
/* traits stays the "last" field: STRUCT_SIZE 36 (sizeof 48). */
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Metadata, traits);

struct XLA_FFI_Metadata_Extension {
  XLA_FFI_Extension_Base extension_base;
  XLA_FFI_Metadata *metadata;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Metadata_Extension, metadata);

/* ---- The API table (slot order is ABI) --------------------------------- */

#define XLA_FFI_API_SLOT_(fn) fn *fn
struct XLA_FFI_Api {
  size_t struct_size;
  XLA_FFI_Extension_Base *extension_start;
  XLA_FFI_Api_Version api_version;
  XLA_FFI_InternalApi *internal_api;
  XLA_FFI_API_SLOT_(XLA_FFI_Error_Create);           /* slot 0 */
  XLA_FFI_API_SLOT_(XLA_FFI_Error_GetMessage);
  XLA_FFI_API_SLOT_(XLA_FFI_Error_Destroy);
  XLA_FFI_API_SLOT_(XLA_FFI_Handler_Register);
  XLA_FFI_API_SLOT_(XLA_FFI_Stream_Get);
  XLA_FFI_API_SLOT_(XLA_FFI_Type_Register);          /* slot 5 */
  XLA_FFI_API_SLOT_(XLA_FFI_ExecutionContext_Get);
  XLA_FFI_API_SLOT_(XLA_FFI_State_Set);
  XLA_FFI_API_SLOT_(XLA_FFI_State_Get);
  XLA_FFI_API_SLOT_(XLA_FFI_DeviceMemory_Allocate);
  XLA_FFI_API_SLOT_(XLA_FFI_DeviceMemory_Free);      /* slot 10 */
  XLA_FFI_API_SLOT_(XLA_FFI_ThreadPool_Schedule);
  XLA_FFI_API_SLOT_(XLA_FFI_ThreadPool_NumThreads);
  XLA_FFI_API_SLOT_(XLA_FFI_Future_Create);
  XLA_FFI_API_SLOT_(XLA_FFI_Future_SetAvailable);
  XLA_FFI_API_SLOT_(XLA_FFI_Future_SetError);        /* slot 15 */
  XLA_FFI_API_SLOT_(XLA_FFI_RunId_Get);
  XLA_FFI_API_SLOT_(XLA_FFI_DeviceOrdinal_Get);
};
#undef XLA_FFI_API_SLOT_
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Api, XLA_FFI_DeviceOrdinal_Get);

/* ======================================================================== */
/* hlorun additions: helpers for C handlers (static inline, ABI-only).      */
/* ======================================================================== */

/* Name of the optional nested dictionary attribute through which hlorun
 * passes the custom call's own members (window, dim_labels, shapes, ...)
 * when the binding opts in; see doc/custom-calls.md. */
#define HLORUN_FFI_INSTRUCTION_ATTR "hlorun.instruction"
/* A handler opts in to that attribute by reporting this bit in its traits
 * (metadata query answer, or XLA_FFI_Handler_Register's traits). XLA reads
 * only bit 0 of the traits, so the bit is harmless there. */
#define HLORUN_FFI_TRAIT_INSTRUCTION_MEMBERS (1u << 31)
/* A handler that reads its backend_config as JSON (XLA:GPU's
 * GpuBackendConfig and friends) reports this bit: hlorun then does not
 * decode backend_config as an attribute dictionary but passes it verbatim
 * (unescaped) as the string member "backend_config" of the instruction
 * members attribute, which it always passes; and it runs the instantiate
 * stage when it checks the module, so a bad config fails before anything
 * runs (and --explain-custom-calls says so). */
#define HLORUN_FFI_TRAIT_JSON_CONFIG (1u << 30)

/* A new error with a message (copied by the host). */
static inline XLA_FFI_Error *hlorun_ffi_error(const XLA_FFI_Api *api, XLA_FFI_Error_Code code,
                                              const char *message) {
  XLA_FFI_Error_Create_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  a.message = message;
  a.errc = code;
  return api->XLA_FFI_Error_Create(&a);
}

/* Answer the metadata query if this frame is one: returns 1 (and the handler
 * must return NULL at once), else 0. Handlers that do not call it are
 * treated as API version 0.3 by hlorun (XLA requires the answer). */
static inline int hlorun_ffi_metadata(XLA_FFI_CallFrame *f, XLA_FFI_Handler_Traits traits) {
  XLA_FFI_Extension_Base *e = f->extension_start;
  for (; e; e = e->next) {
    if (e->type != XLA_FFI_Extension_Metadata) continue;
    XLA_FFI_Metadata *m = ((XLA_FFI_Metadata_Extension *)e)->metadata;
    m->api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
    m->api_version.major_version = XLA_FFI_API_MAJOR;
    m->api_version.minor_version = XLA_FFI_API_MINOR;
    m->traits = traits;
    return 1;
  }
  return 0;
}

/* Index of attribute `name` in a (sorted) attribute list, or -1. */
static inline int64_t hlorun_ffi_attr_index(const XLA_FFI_Attrs *attrs, const char *name) {
  size_t n = strlen(name);
  for (int64_t i = 0; i < attrs->size; i++)
    if (attrs->names[i]->len == n && memcmp(attrs->names[i]->ptr, name, n) == 0) return i;
  return -1;
}

/* The attribute `name` if it exists with kind `type`, else NULL. */
static inline void *hlorun_ffi_attr(const XLA_FFI_Attrs *attrs, const char *name,
                                    XLA_FFI_AttrType type) {
  int64_t i = hlorun_ffi_attr_index(attrs, name);
  return i >= 0 && attrs->types[i] == type ? attrs->attrs[i] : NULL;
}

/* Element count of a buffer. */
static inline int64_t hlorun_ffi_elements(const XLA_FFI_Buffer *b) {
  int64_t n = 1;
  for (int64_t i = 0; i < b->rank; i++) n *= b->dims[i];
  return n;
}

#ifdef __cplusplus
}
#endif
#endif
