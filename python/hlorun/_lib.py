"""The C library through cffi's ABI mode: declarations and loading.

The declarations are those of include/hlorun.h (and, for Python custom-call
handlers, the parts of include/hlorun/ffi.h a typed XLA FFI handler reads),
written out by hand because ABI mode needs no compiler. Keep them in step
with the headers: the struct layouts must match exactly.

The library is found, in order, at $HLORUN_LIB, at the path `make install`
recorded beside this file (_libpath.txt), and as libhlorun.so.0 on the
system's library path.
"""
import atexit
import os

import cffi

CDEF = """
typedef enum { HLO_OK = 0, HLO_ERROR = 1, HLO_NOMEM = 2, HLO_INVALID_ARGUMENT = 3,
  HLO_PARSE_ERROR = 4, HLO_IO_ERROR = 5, HLO_TYPE_MISMATCH = 6, HLO_UNSUPPORTED = 7,
  HLO_RUNTIME_ERROR = 8, HLO_STOPPED = 9 } HloStatus;
typedef int HloElementType;
typedef struct HloCtx HloCtx;
typedef struct HloModule HloModule;
typedef struct HloExecutable HloExecutable;
typedef struct HloBuffer HloBuffer;
typedef struct HloInstruction HloInstruction;

const char *hlo_version(void);
void hlo_free(void *p);

typedef struct HloCtxOptions {
  size_t struct_size; int threads; uint64_t max_memory; int max_errors;
  int isolate_custom_calls; double custom_call_timeout; const char *crash_dir;
} HloCtxOptions;
HloStatus hlo_ctx_new(const HloCtxOptions *opts, HloCtx **out);
void hlo_ctx_free(HloCtx *ctx);
const char *hlo_ctx_diagnostics(HloCtx *ctx);
int hlo_ctx_error_count(const HloCtx *ctx);
void hlo_ctx_clear_diagnostics(HloCtx *ctx);
HloStatus hlo_ctx_bind_custom_call(HloCtx *ctx, const char *target, const char *lib,
                                   const char *symbol);
HloStatus hlo_ctx_load_plugin(HloCtx *ctx, const char *lib, const char *function);

struct XLA_FFI_CallFrame;
struct XLA_FFI_Error;
typedef struct XLA_FFI_Error *HloFfiHandler(struct XLA_FFI_CallFrame *frame);
HloStatus hlo_ctx_register_ffi_handler(HloCtx *ctx, const char *target, HloFfiHandler *execute,
                                       const char *origin);
char *hlo_ctx_custom_call_binding(HloCtx *ctx, const char *target);
typedef void HloTextSink(void *user, const char *text, size_t len);
HloStatus hlo_ctx_set_callback_output(HloCtx *ctx, HloTextSink *write, void *user);

HloStatus hlo_module_parse(HloCtx *ctx, const char *text, size_t len, const char *filename,
                           HloModule **out);
HloStatus hlo_module_load(HloCtx *ctx, const char *path, HloModule **out);
void hlo_module_free(HloModule *m);
HloStatus hlo_module_verify(HloCtx *ctx, const HloModule *m);
HloStatus hlo_module_print(HloCtx *ctx, const HloModule *m, char **text, size_t *len);
int hlo_module_num_params(const HloModule *m);
HloStatus hlo_module_param_shape(HloCtx *ctx, const HloModule *m, int index, char **text);
int hlo_module_is_tuple(const HloModule *m, int index);
HloStatus hlo_module_explain_custom_calls(HloCtx *ctx, const HloModule *m, char **text);
HloStatus hlo_module_check_custom_calls(HloCtx *ctx, const HloModule *m);

HloStatus hlo_buffer_new_array(HloCtx *ctx, HloElementType type, const int64_t *dims, int rank,
                               const void *data, HloBuffer **out);
HloStatus hlo_buffer_new_tuple(HloCtx *ctx, HloBuffer *const *elems, int n, HloBuffer **out);
void hlo_buffer_free(HloBuffer *b);
HloElementType hlo_buffer_type(const HloBuffer *b);
int hlo_buffer_rank(const HloBuffer *b);
const int64_t *hlo_buffer_dims(const HloBuffer *b);
int64_t hlo_buffer_num_elements(const HloBuffer *b);
const void *hlo_buffer_data(const HloBuffer *b);
size_t hlo_buffer_nbytes(const HloBuffer *b);
int hlo_buffer_tuple_size(const HloBuffer *b);
HloStatus hlo_buffer_tuple_element(HloCtx *ctx, const HloBuffer *b, int i, HloBuffer **out);
HloStatus hlo_buffer_to_literal(HloCtx *ctx, const HloBuffer *b, char **text, size_t *len);
HloStatus hlo_load_param(HloCtx *ctx, const HloModule *m, int index, const char *path,
                         HloBuffer **out);
HloStatus hlo_load_params_npz(HloCtx *ctx, const HloModule *m, int first, const char *path,
                              HloBuffer **out, int *n);
HloStatus hlo_load_like(HloCtx *ctx, const HloBuffer *like, const char *path, HloBuffer **out);
HloStatus hlo_random_param(HloCtx *ctx, const HloModule *m, int index, uint64_t seed,
                           HloBuffer **out);

typedef struct HloRunOptions {
  size_t struct_size; int random_constants; uint64_t seed; int64_t max_iterations;
  double timeout; int no_fusion; int replicas, partitions;
} HloRunOptions;
HloStatus hlo_compile(HloCtx *ctx, const HloModule *m, const HloRunOptions *opts,
                      HloExecutable **out);
HloStatus hlo_execute(HloExecutable *e, HloBuffer *const *inputs, int n, HloBuffer **result);
void hlo_executable_free(HloExecutable *e);

void hlo_module_device_grid(const HloModule *m, int *replicas, int *partitions, int *inferred);
int hlo_executable_num_devices(const HloExecutable *e);
HloStatus hlo_execute_devices(HloExecutable *e, HloBuffer *const *inputs, int n,
                              HloBuffer **results);
HloStatus hlo_shard_param(HloCtx *ctx, const HloModule *m, int index, const HloBuffer *global,
                          int replicas, int partitions, HloBuffer **per_device);
HloStatus hlo_param_global_shape(HloCtx *ctx, const HloModule *m, int index, int replicas,
                                 int partitions, char **text);
HloStatus hlo_random_param_global(HloCtx *ctx, const HloModule *m, int index, uint64_t seed,
                                  HloBuffer **out);
HloStatus hlo_assemble_result(HloCtx *ctx, const HloModule *m, const char *sharding,
                              HloBuffer *const *per_device, int replicas, int partitions,
                              HloBuffer **global);

typedef struct HloCompareOptions {
  size_t struct_size; double rtol, atol; int max_report; int64_t max_ulp;
} HloCompareOptions;
void hlo_default_tolerance(HloElementType t, double *rtol, double *atol);
HloStatus hlo_buffer_compare(HloCtx *ctx, const HloBuffer *got, const HloBuffer *want,
                             const HloCompareOptions *opts, int64_t *mismatches, char **report);

/* ---- The typed XLA FFI, as far as a handler reads it ---- */
typedef struct XLA_FFI_Extension_Base {
  size_t struct_size; int type; struct XLA_FFI_Extension_Base *next;
} XLA_FFI_Extension_Base;
typedef struct XLA_FFI_Api_Version {
  size_t struct_size; XLA_FFI_Extension_Base *extension_start; int major_version; int minor_version;
} XLA_FFI_Api_Version;
typedef struct XLA_FFI_Error XLA_FFI_Error;
typedef struct XLA_FFI_Error_Create_Args {
  size_t struct_size; XLA_FFI_Extension_Base *extension_start; const char *message; int errc;
} XLA_FFI_Error_Create_Args;
typedef struct XLA_FFI_Api {
  size_t struct_size; XLA_FFI_Extension_Base *extension_start; XLA_FFI_Api_Version api_version;
  void *internal_api;
  XLA_FFI_Error *(*XLA_FFI_Error_Create)(XLA_FFI_Error_Create_Args *args);  /* slot 0; later slots unused here */
} XLA_FFI_Api;
typedef struct XLA_FFI_Buffer {
  size_t struct_size; XLA_FFI_Extension_Base *extension_start; int dtype; void *data;
  int64_t rank; int64_t *dims;
} XLA_FFI_Buffer;
typedef struct XLA_FFI_Args {
  size_t struct_size; XLA_FFI_Extension_Base *extension_start; int64_t size; int *types;
  void **args;
} XLA_FFI_Args;
typedef struct XLA_FFI_Rets {
  size_t struct_size; XLA_FFI_Extension_Base *extension_start; int64_t size; int *types;
  void **rets;
} XLA_FFI_Rets;
typedef struct XLA_FFI_Attrs {
  size_t struct_size; XLA_FFI_Extension_Base *extension_start; int64_t size; int *types;
  void **names; void **attrs;
} XLA_FFI_Attrs;
typedef struct XLA_FFI_CallFrame {
  size_t struct_size; XLA_FFI_Extension_Base *extension_start; const XLA_FFI_Api *api;
  void *ctx; int stage; XLA_FFI_Args args; XLA_FFI_Rets rets; XLA_FFI_Attrs attrs;
  void *future;
} XLA_FFI_CallFrame;
typedef struct XLA_FFI_Metadata {
  size_t struct_size; XLA_FFI_Api_Version api_version; uint32_t traits; int64_t state_type_id;
} XLA_FFI_Metadata;
typedef struct XLA_FFI_Metadata_Extension {
  XLA_FFI_Extension_Base extension_base; XLA_FFI_Metadata *metadata;
} XLA_FFI_Metadata_Extension;

const HloInstruction *hlo_module_find_instruction(const HloModule *m, const char *name);
const char *hlo_instruction_name(const HloInstruction *i);
const char *hlo_instruction_opcode(const HloInstruction *i);
const char *hlo_instruction_computation(const HloInstruction *i);
int hlo_instruction_line(const HloInstruction *i);
int hlo_module_num_computations(const HloModule *m);
unsigned hlo_module_computation_flags(const HloModule *m, int c);
int hlo_module_computation_size(const HloModule *m, int c);
const HloInstruction *hlo_module_instruction(const HloModule *m, int c, int k);

/* ---- Observing a run; comparing two runs ---- */
typedef struct HloValue HloValue;
HloStatus hlo_value_to_buffer(HloCtx *ctx, const HloValue *v, HloBuffer **out);
typedef struct HloEvent {
  size_t struct_size; int phase; const HloInstruction *instruction; const char *name;
  const char *opcode; const char *computation; int line; int depth;
  const HloInstruction *caller; int step, num_steps; int num_operands;
  const HloValue *const *operands; const HloValue *result; uint64_t elapsed_ns; int fused;
  int device;
} HloEvent;
typedef int (*HloObserver)(const HloEvent *e, void *user);
HloStatus hlo_executable_set_observer(HloExecutable *e, HloObserver fn, void *user,
                                      unsigned phases);
HloStatus hlo_executable_set_observer_depth(HloExecutable *e, int max_depth);
typedef struct HloDivergenceOptions {
  size_t struct_size; const HloCompareOptions *compare; const HloRunOptions *run;
  HloCtx *reference_ctx; uint64_t memory_budget; HloElementType reference_precision;
  HloBuffer *const *reference_inputs;
} HloDivergenceOptions;
typedef struct HloDivergence {
  size_t struct_size; HloBuffer *result, *reference_result; int64_t result_mismatches;
  const char *result_report; int found; const HloInstruction *instruction;
  const HloInstruction *counterpart; int64_t iteration; int64_t call;
  int64_t mismatches, elements; double max_abs_error; const char *max_abs_at;
  const char *line; int64_t values_compared; int paired, unpaired; int failed_side; int runs;
  HloBuffer *value, *reference_value;
  int num_devices; int device; int devices_diverged;
  HloBuffer *const *device_results; HloBuffer *const *device_reference_results;
  const int64_t *device_result_mismatches;
} HloDivergence;
HloStatus hlo_compare_runs(HloCtx *ctx, const HloModule *m, const HloModule *ref,
                           HloBuffer *const *inputs, int n, const HloDivergenceOptions *opts,
                           HloDivergence **out);
void hlo_divergence_free(HloDivergence *d);
typedef struct HloDeterminism {
  size_t struct_size; int deterministic; int runs; int run; const HloInstruction *instruction;
  int64_t iteration; int64_t call; int operands_differ; int different_path; int64_t steps;
  int failed_run;
} HloDeterminism;
HloStatus hlo_check_determinism(HloCtx *const *ctxs, int nruns, const HloModule *m,
                                HloBuffer *const *inputs, int n, const HloRunOptions *opts,
                                HloDeterminism *out);
HloStatus hlo_module_extract_around(HloCtx *ctx, const HloModule *m, const HloInstruction *i,
                                    int depth, HloModule **out, const HloInstruction ***cut,
                                    int *ncut);
typedef int HloReduceFocus;
typedef int (*HloReducePredicate)(const HloModule *candidate, HloBuffer *const *inputs, int n,
                                  void *user);
typedef struct HloReduceOptions {
  size_t struct_size; HloReduceFocus focus; const char *focus_name; int64_t focus_run;
  int max_candidates; double timeout; void (*progress)(void *user, int tried, int size);
} HloReduceOptions;
typedef struct HloReduceResult {
  HloModule *module; HloBuffer **inputs; int ninputs; int before, after; int tried;
  char focus[256]; int64_t focus_run;
} HloReduceResult;
HloStatus hlo_module_reduce(HloCtx *ctx, const HloModule *m, HloBuffer *const *inputs, int n,
                            const HloReduceOptions *opt, HloReducePredicate pred, void *user,
                            HloReduceResult *out);
void hlo_reduce_result_free(HloReduceResult *r);
"""

ffi = cffi.FFI()
ffi.cdef(CDEF)


def _candidates():
    env = os.environ.get("HLORUN_LIB")
    if env:
        return [env]   # an explicit choice: no silent fallback to another build
    found = []
    recorded = os.path.join(os.path.dirname(__file__), "_libpath.txt")
    if os.path.exists(recorded):
        with open(recorded, encoding="utf-8") as f:
            found.append(f.read().strip())
    found.append("libhlorun.so.0")
    return found


def _load():
    errors = []
    for path in _candidates():
        try:
            # RTLD_GLOBAL: handler libraries resolve the host's symbols
            # (XlaCustomCallStatusSetFailure, xla::ffi::GetXlaFfiApi) in it,
            # as they do in the hlorun command, which links it.
            return ffi.dlopen(path, ffi.RTLD_NOW | ffi.RTLD_GLOBAL)
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("hlorun: cannot load libhlorun (set HLORUN_LIB to its path, e.g. "
                      ".libs/libhlorun.so in a build tree): " + "; ".join(errors))


lib = _load()

# At interpreter exit, objects are torn down in no dependable order (an
# executable may outlive the context it borrows), so from then on handles
# are left to the operating system instead of freed.
_exiting = False


def _at_exit():
    global _exiting
    _exiting = True


atexit.register(_at_exit)


def release(free):
    """A destructor for ffi.gc that calls free unless the interpreter is exiting."""
    def destructor(ptr):
        if not _exiting:
            free(ptr)
    return destructor
