/* ffi.h: the custom-call layer's interface to the rest of hlorun (internal).
 *
 * Every custom-call instruction runs through here. A registry maps target
 * names to handlers: typed XLA FFI handler bundles (built-ins, symbols bound
 * with --custom-call, bundles a --plugin registers) or raw symbols called
 * with XLA:CPU's legacy conventions. The instruction's api_version decides
 * the convention for bound symbols; built-in targets are always typed FFI
 * handlers. The interpreter (interp/custom_call.c) flattens operand and
 * result values into leaf buffers and calls hlf_call; the command line binds
 * targets and asks for explanations through the public API, which forwards
 * to the functions below.
 *
 * Not here: HLO parsing (parser/), values (interp/). This layer sees only
 * the IR and raw buffers.
 */
#ifndef HLORUN_FFI_FFI_H
#define HLORUN_FFI_FFI_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/diag.h"
#include "ir/ir.h"

typedef struct HlfRegistry HlfRegistry;

/* An empty registry: the built-in target families (targets/) register
 * into it when a context is made. NULL only when out of memory. */
HlfRegistry *hlf_registry_new(void);
/* Frees bindings, per-call-site state (running state deleters) and closes
 * the libraries it opened. */
void hlf_registry_free(HlfRegistry *r);

/* --custom-call TARGET=LIB.so[:SYMBOL]: bind TARGET to SYMBOL (NULL: TARGET)
 * of LIB.so. 0, or -1 with an error in d. A later binding of the same target
 * replaces an earlier one (and a built-in). */
int hlf_bind(HlfRegistry *r, const char *target, const char *lib_path, const char *symbol,
             HlcDiags *d);

/* Default registration function of a --plugin library. */
#define HLF_PLUGIN_DEFAULT_FUNCTION "hlorun_ffi_plugin_init"
/* --plugin LIB.so[:FUNCTION]: call
 *   XLA_FFI_Error *FUNCTION(const XLA_FFI_Api *api)
 * (default HLF_PLUGIN_DEFAULT_FUNCTION), which registers targets through
 * api->XLA_FFI_Handler_Register. 0, or -1 with an error in d. */
int hlf_load_plugin(HlfRegistry *r, const char *lib_path, const char *function, HlcDiags *d);

/* Opt a target (NULL: every target) in or out of receiving the custom
 * call's own members as the extra dictionary attribute "hlorun.instruction"
 * (typed FFI only). May be called before or after binding. 0, or -1 when out
 * of memory. */
int hlf_set_members_opt_in(HlfRegistry *r, const char *target_or_null, bool on);

/* Which stages of a typed FFI bundle run. By default hlorun follows
 * XLA:CPU: instantiate once per call site, then execute on every run;
 * prepare and initialize are never called. With all_stages, every run calls
 * prepare and initialize (when the bundle has them) before execute, as
 * XLA:GPU does. */
void hlf_set_all_stages(HlfRegistry *r, bool all_stages);

/* Text for --explain-custom-calls: every custom call of m with its target,
 * api_version, shapes, decoded attributes and binding (malloc'd; NULL when
 * out of memory). Malformed backend_configs are also reported in d with
 * their position. */
char *hlf_explain(HlfRegistry *r, const HloModule *m, HlcDiags *d);

/* Check every custom call of m before running: its target is bound and its
 * backend_config decodes. Positioned errors (FILE:LINE:COL and a caret) go
 * to d. 0 if all is well, else -1. */
int hlf_check_module(HlfRegistry *r, const HloModule *m, HlcDiags *d);

/* Register a built-in typed FFI handler bundle under target (replacing an
 * earlier registration of that name): for the built-in target families
 * above interp/ (targets/), which register as a plugin would but show as
 * built-in. origin names the family in --explain-custom-calls ("built-in:
 * LAPACK"). 0, or -1 when out of memory. */
struct XLA_FFI_Handler_Bundle;
int hlf_register_builtin(HlfRegistry *r, const char *target,
                         const struct XLA_FFI_Handler_Bundle *bundle, const char *origin);
/* The api_versions (bit 1 << HLO_API_*) a custom call of built-in target may
 * have: those XLA finds the target's implementation under (a handler
 * registered with XLA's FFI only answers API_VERSION_TYPED_FFI, a legacy
 * function only the others). Any other api_version is then an error at
 * the call site. No effect on a target that is not (or no longer) built-in. */
void hlf_builtin_api_versions(HlfRegistry *r, const char *target, unsigned mask);

/* Register a typed FFI bundle that a host made at run time (the public
 * hlo_ctx_register_ffi_handler): shown as origin, replaced like a plugin's
 * handler. 0, or -1 when out of memory. */
int hlf_register_handler(HlfRegistry *r, const char *target,
                         const struct XLA_FFI_Handler_Bundle *bundle, const char *origin);
/* How target is bound (its origin, malloc'd), or NULL when it is not. */
char *hlf_binding_text(HlfRegistry *r, const char *target);

/* ---- Run-time settings of the FFI host ---------------------------------- */

/* Worker threads of the pool behind XLA_FFI_ThreadPool_Schedule (>= 1). */
void hlf_set_num_threads(HlfRegistry *r, int n);
/* The device ordinal XLA_FFI_DeviceOrdinal_Get reports to handlers called
 * from this thread: the device's number (replica * partitions + partition)
 * in a multi-device run, where each device is a thread; 0 otherwise. */
void hlf_set_thread_device(int32_t ordinal);
/* Value XLA_FFI_RunId_Get reports (default 0). */
void hlf_set_run_id(HlfRegistry *r, int64_t run_id);
/* User data that XLA_FFI_ExecutionContext_Get returns for type_id. 0, or -1
 * when out of memory. */
int hlf_set_user_data(HlfRegistry *r, int64_t type_id, void *data);
/* Id of a type registered by name through the API (0 if none). */
int64_t hlf_type_id(const char *name);

/* ---- Calling ------------------------------------------------------------- */

/* One operand or result leaf. */
typedef struct HlfBuf {
  HloDtype dtype;            /* HLO_TOKEN for token leaves (data NULL) */
  void *data;                /* dense row-major elements */
  int32_t rank;
  const int64_t *dims;
} HlfBuf;

/* Plan-time check of one custom call: bound, and its attributes decode.
 * 0, or -1 with *err set to a malloc'd message. */
int hlf_check(HlfRegistry *r, const HloModule *m, const HloInstr *ins, char **err);

/* Run one execution of custom call ins. args: the operand leaves depth-first
 * (operands in order); rets: the result leaves depth-first, preallocated.
 * The first execution of a call site runs its instantiate stage. 0, or -1
 * with *err set to a malloc'd message (the handler's message verbatim). */
int hlf_call(HlfRegistry *r, const HloModule *m, const HloInstr *ins, const HlfBuf *args,
             int32_t nargs, const HlfBuf *rets, int32_t nrets, char **err);

/* How the caller counts the memory a typed handler allocates through
 * XLA_FFI_DeviceMemory_Allocate (the interpreter: its memory limit).
 * reserve: 0 when n more bytes fit (they are then counted); else -1 with
 * *limit and *used set for the message, nothing counted. release: n counted
 * bytes are gone. ffi/ never calls the two at once for one call (calls from
 * a handler's threads are serialised), and every reserved byte is released
 * by the end of the handler invocation that reserved it: by
 * DeviceMemory_Free, or when hlorun frees what the handler left allocated
 * (memory from DeviceMemory_Allocate lives at most for the handler
 * invocation that asked for it, as XLA's ffi::ScratchAllocator). */
typedef struct HlfMemHook {
  int (*reserve)(void *opaque, size_t n, size_t *limit, size_t *used);
  void (*release)(void *opaque, size_t n);
  void *opaque;
} HlfMemHook;

/* hlf_call with the handler's allocations counted through mem (NULL: not
 * counted, as hlf_call). */
int hlf_call_hooked(HlfRegistry *r, const HloModule *m, const HloInstr *ins, const HlfBuf *args,
                    int32_t nargs, const HlfBuf *rets, int32_t nrets, const HlfMemHook *mem,
                    char **err);

/* Bytes of working memory a built-in handler allocates while it runs one
 * call with these operand leaves (args: as for hlf_call). */
typedef size_t HlfScratchFn(const HlfBuf *args, int32_t nargs);
/* hlf_register_builtin for a handler that says its working memory (TopK:
 * targets/xla/), so that the executor counts it before the call. */
int hlf_register_builtin_scratch(HlfRegistry *r, const char *target,
                                 const struct XLA_FFI_Handler_Bundle *bundle, const char *origin,
                                 HlfScratchFn *scratch);
/* Bytes of working memory the built-in handler bound to ins's target
 * allocates while it runs (its HlfScratchFn), so the executor can count
 * them against its memory limit before calling; 0 for any other target (a
 * user's handler allocates what it likes). args: as for hlf_call. */
size_t hlf_builtin_scratch(HlfRegistry *r, const HloInstr *ins, const HlfBuf *args,
                           int32_t nargs);

/* In a child process made by fork() (isolated custom calls): forget the
 * thread pool, whose threads live only in the parent (a new one starts on
 * first use), and reset the registry's lock, which another thread of the
 * parent may have held at the fork. */
void hlf_registry_after_fork(HlfRegistry *r);

/* Forget the call sites of module m (their states are deleted). Call before
 * freeing a module that ran with this registry. */
void hlf_release_module(HlfRegistry *r, const HloModule *m);
#endif
