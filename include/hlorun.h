/* hlorun.h: public API of libhlorun, an interpreter for XLA HLO text modules.
 *
 * Handles are opaque: a context (HloCtx: options, thread pool, custom-call
 * bindings, diagnostics), modules (HloModule: parsed HLO text), compiled
 * executables (HloExecutable: a module planned for running, reusable) and
 * host values (HloBuffer: arrays or tuples).
 *
 * Every call returns an HloStatus. When it is not HLO_OK, the reason is
 * available as rendered text (FILE:LINE:COL: error: ..., the source line and
 * a caret) from hlo_ctx_diagnostics(). The library never prints; warnings
 * accumulate in the same text. Strings the library allocates are released
 * with hlo_free(). Option structs start with struct_size (set it to
 * sizeof the struct) so they can grow compatibly.
 */
#ifndef HLORUN_H
#define HLORUN_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/* The library version, e.g. "0.1.0". */
const char *hlo_version(void);

typedef enum HloStatus {
  HLO_OK = 0,
  HLO_ERROR = 1,            /* generic failure; see the diagnostics */
  HLO_NOMEM = 2,            /* out of memory (or the memory limit) */
  HLO_INVALID_ARGUMENT = 3, /* a NULL handle, a bad option, wrong input count */
  HLO_PARSE_ERROR = 4,      /* the module text does not parse or verify */
  HLO_IO_ERROR = 5,         /* a file could not be read or written, or is malformed */
  HLO_TYPE_MISMATCH = 6,    /* an input's element type or shape does not fit */
  HLO_UNSUPPORTED = 7,      /* an opcode, attribute or type hlorun cannot run */
  HLO_RUNTIME_ERROR = 8,    /* an instruction failed while running */
  HLO_STOPPED = 9           /* an observer (hlo_executable_set_observer) stopped the run */
} HloStatus;

/* Element types, numbered like xla::PrimitiveType (and XLA_FFI_DataType). */
typedef enum HloElementType {
  HLO_TYPE_INVALID = 0,
  HLO_TYPE_PRED = 1, HLO_TYPE_S8 = 2, HLO_TYPE_S16 = 3, HLO_TYPE_S32 = 4, HLO_TYPE_S64 = 5,
  HLO_TYPE_U8 = 6, HLO_TYPE_U16 = 7, HLO_TYPE_U32 = 8, HLO_TYPE_U64 = 9,
  HLO_TYPE_F16 = 10, HLO_TYPE_F32 = 11, HLO_TYPE_F64 = 12, HLO_TYPE_TUPLE = 13,
  HLO_TYPE_OPAQUE = 14, HLO_TYPE_C64 = 15, HLO_TYPE_BF16 = 16, HLO_TYPE_TOKEN = 17,
  HLO_TYPE_C128 = 18, HLO_TYPE_F8E5M2 = 19, HLO_TYPE_F8E4M3FN = 20, HLO_TYPE_S4 = 21,
  HLO_TYPE_U4 = 22, HLO_TYPE_F8E4M3B11FNUZ = 23, HLO_TYPE_F8E5M2FNUZ = 24,
  HLO_TYPE_F8E4M3FNUZ = 25, HLO_TYPE_S2 = 26, HLO_TYPE_U2 = 27, HLO_TYPE_F8E4M3 = 28,
  HLO_TYPE_F8E3M4 = 29, HLO_TYPE_S1 = 30, HLO_TYPE_U1 = 31, HLO_TYPE_F4E2M1FN = 32,
  HLO_TYPE_F8E8M0FNU = 33
} HloElementType;

typedef struct HloCtx HloCtx;
typedef struct HloModule HloModule;
typedef struct HloExecutable HloExecutable;
typedef struct HloBuffer HloBuffer;

/* Release memory the library returned (strings). */
void hlo_free(void *p);

/* ---- Context ------------------------------------------------------------- */

typedef struct HloCtxOptions {
  size_t struct_size;        /* sizeof(HloCtxOptions) */
  int threads;               /* worker threads; 0 = all cores */
  uint64_t max_memory;       /* bytes of live values allowed in a run; 0 = default
                                (75% of physical memory, at most 16 GiB... see
                                hlo_default_max_memory) */
  int max_errors;            /* errors recorded per call before giving up; 0 = 20 */
  /* Crash-proof custom calls (zero keeps the defaults). */
  int isolate_custom_calls;  /* nonzero: run each custom call in a child process over
                                shared memory, so a handler that crashes, aborts, exits
                                or hangs fails the run with an error instead of taking
                                the process down; its inputs are saved for replay */
  double custom_call_timeout;/* seconds one isolated custom call may take; 0 = 60 */
  const char *crash_dir;     /* directory where an isolated crash saves its inputs
                                (hlorun-crash-TARGET-PID/); NULL = the current one */
} HloCtxOptions;

/* The memory limit used when max_memory is 0. */
uint64_t hlo_default_max_memory(void);

HloStatus hlo_ctx_new(const HloCtxOptions *opts, HloCtx **out);  /* opts may be NULL */
void hlo_ctx_free(HloCtx *ctx);
/* Rendered diagnostics (errors and warnings) recorded since the last
 * hlo_ctx_clear_diagnostics, "" if none. Valid until the next call on ctx. */
const char *hlo_ctx_diagnostics(HloCtx *ctx);
int hlo_ctx_error_count(const HloCtx *ctx);
int hlo_ctx_warning_count(const HloCtx *ctx);
void hlo_ctx_clear_diagnostics(HloCtx *ctx);
/* Number of threads kernels use. */
int hlo_ctx_threads(const HloCtx *ctx);

/* Custom calls: bind TARGET to SYMBOL (NULL = TARGET) in shared library lib. */
HloStatus hlo_ctx_bind_custom_call(HloCtx *ctx, const char *target, const char *lib,
                                   const char *symbol);
/* Load a plugin library and call its registration function (NULL = default). */
HloStatus hlo_ctx_load_plugin(HloCtx *ctx, const char *lib, const char *function);
/* Opt custom-call target (NULL = every target) in (on != 0) or out of
 * receiving the instruction's own members (window, dim_labels, layouts, ...)
 * as the extra typed-FFI attribute "hlorun.instruction" (doc/custom-calls.md). */
HloStatus hlo_ctx_set_instruction_members(HloCtx *ctx, const char *target, int on);
/* Typed FFI bundles: by default, as on XLA:CPU, instantiate runs once per
 * call site and execute on every run. all != 0 also runs prepare and
 * initialize before every execute, as XLA:GPU does. */
HloStatus hlo_ctx_set_ffi_all_stages(HloCtx *ctx, int all);

/* Custom calls: register a typed XLA FFI handler (the execute stage; the
 * XLA_FFI_Handler of include/hlorun/ffi.h) for target, as a plugin would
 * through XLA_FFI_Handler_Register, replacing an earlier binding; for hosts
 * that make handlers at run time (the Python package's callables). origin
 * describes it in --explain-custom-calls ("python: mod.fn"; NULL =
 * "registered handler"). */
struct XLA_FFI_CallFrame;
struct XLA_FFI_Error;
typedef struct XLA_FFI_Error *HloFfiHandler(struct XLA_FFI_CallFrame *frame);
HloStatus hlo_ctx_register_ffi_handler(HloCtx *ctx, const char *target, HloFfiHandler *execute,
                                       const char *origin);
/* Host callbacks (JAX's jax.debug.print, jax.debug.callback: the custom
 * calls xla_ffi_python_cpu_callback and the like, whose Python function is
 * not in the module): a callback without results hands the text of its
 * operands to write(user, text, len) (one call per callback run, possibly
 * from several device threads at once); NULL writes nothing, the default.
 * One with results fails the run (doc/custom-calls.md). */
typedef void HloTextSink(void *user, const char *text, size_t len);
HloStatus hlo_ctx_set_callback_output(HloCtx *ctx, HloTextSink *write, void *user);
/* How target is bound ("./lib.so:sym", "built-in: LAPACK", "plugin handler
 * t", ...), malloc'd (free with hlo_free); NULL if it is not bound. */
char *hlo_ctx_custom_call_binding(HloCtx *ctx, const char *target);

/* ---- Modules -------------------------------------------------------------- */

/* Parse HLO text (need not be NUL-terminated). filename names it in messages. */
HloStatus hlo_module_parse(HloCtx *ctx, const char *text, size_t len, const char *filename,
                           HloModule **out);
/* Read and parse a file; path "-" reads standard input. */
HloStatus hlo_module_load(HloCtx *ctx, const char *path, HloModule **out);
void hlo_module_free(HloModule *m);
/* Check every instruction's shape against its operands and attributes. */
HloStatus hlo_module_verify(HloCtx *ctx, const HloModule *m);
/* The same checks, what they find recorded as warnings (XLA's parser keeps
 * modules that parse but do not verify): *problems = their count. */
HloStatus hlo_module_verify_warn(HloCtx *ctx, const HloModule *m, int *problems);
/* Canonical HLO text (free with hlo_free). */
HloStatus hlo_module_print(HloCtx *ctx, const HloModule *m, char **text, size_t *len);
/* The module as a binary xla.HloModuleProto, as XLA's HloModule::ToProto
 * writes it (free with hlo_free). An attribute the proto fields cannot hold
 * is an error naming the instruction and attribute. */
HloStatus hlo_module_to_proto(HloCtx *ctx, const HloModule *m, void **bytes, size_t *len);
/* ENTRY parameters: count, and the shape of one as text ("f32[2,3]"; free it). */
int hlo_module_num_params(const HloModule *m);
HloStatus hlo_module_param_shape(HloCtx *ctx, const HloModule *m, int index, char **text);
/* Is ENTRY parameter index (or the result, index -1) a tuple? */
int hlo_module_is_tuple(const HloModule *m, int index);
/* How each custom-call target of the module would be run (free with hlo_free). */
HloStatus hlo_module_explain_custom_calls(HloCtx *ctx, const HloModule *m, char **text);
/* While a custom-call handler runs in this process (on any context), a
 * description of it ("custom-call target \"T\" (instruction c, FILE line
 * 5)"), else NULL. Safe to call from a signal handler, so that a program
 * can say which handler crashed (the hlorun command does). */
const char *hlo_custom_call_in_progress(void);
/* Check every custom call of m against the context's bindings: its target
 * has a handler and its backend_config decodes. Errors point at the exact
 * position (FILE:LINE:COL and a caret). hlo_compile does this too. */
HloStatus hlo_module_check_custom_calls(HloCtx *ctx, const HloModule *m);

/* Instructions, for the debugging tools: a borrowed handle into a module
 * (valid while the module lives). */
typedef struct HloInstruction HloInstruction;
/* The instruction called name: the first in ENTRY, else the first in text
 * order of the other computations; NULL if there is none. */
const HloInstruction *hlo_module_find_instruction(const HloModule *m, const char *name);
const char *hlo_instruction_name(const HloInstruction *i);
const char *hlo_instruction_opcode(const HloInstruction *i);      /* "add", "custom-call" */
const char *hlo_instruction_computation(const HloInstruction *i); /* its computation's name */
int hlo_instruction_line(const HloInstruction *i);                /* 1-based; 0 unknown */
int hlo_instruction_num_operands(const HloInstruction *i);
const HloInstruction *hlo_instruction_operand(const HloInstruction *i, int k);
/* Custom calls: the target; else NULL. */
const char *hlo_instruction_custom_call_target(const HloInstruction *i);
/* A module that runs instruction i of m alone: its ENTRY takes i's operands
 * as parameters, in order (token operands are made with after-all instead
 * and take no parameter), and returns i's result; the computations i calls
 * come along. Constants and parameters cannot be extracted. */
HloStatus hlo_module_extract(HloCtx *ctx, const HloModule *m, const HloInstruction *i,
                             HloModule **out);
/* The sub-module around instruction i of m (hlorun --extract): i as its ROOT
 * and the instructions of i's computation within depth (>= 0) operand steps
 * above it, constants kept as constants. Every other value they read (a
 * "cut" value: beyond depth, or a parameter of i's computation) becomes a
 * parameter of the new ENTRY named like the instruction it stands for, one
 * per instruction however often it is read, numbered in the computation's
 * order (tokens are made with after-all and take none). cut (may be NULL)
 * receives those instructions of m (*ncut of them; free the array with
 * hlo_free). i may sit in any computation: a fusion's body, a loop body, a
 * branch. */
HloStatus hlo_module_extract_around(HloCtx *ctx, const HloModule *m, const HloInstruction *i,
                                    int depth, HloModule **out, const HloInstruction ***cut,
                                    int *ncut);

/* Shrinking a module while a condition holds (hlorun --reduce,
 * hlorun.reduce in Python). The reducer runs m on inputs once to find the
 * focus (the instruction the condition is about, and which run of it: a
 * loop iteration) and to keep the real value of every instruction of the
 * focus's computation at that moment. Candidates are that computation cut
 * down to the focus and part of its operand cone: a cut value becomes a
 * parameter fed by the value it had (so a loop body at iteration K runs as
 * ENTRY, its state an input: the iterations before are peeled), constants
 * stay, what the kept instructions do not need goes (parameters, outputs,
 * computations). A tuple focus loses the operands the condition does not
 * need, one at a time (the last one left becomes the ROOT itself when the
 * condition still holds). It tries big cuts first (the cone within 0, 1,
 * 2, 4, ... operand steps), then removes chunks of instructions (ddmin), halving the
 * chunks until single instructions, at most max_candidates runs. Same
 * inputs, same result: the order of candidates is fixed. */
typedef enum HloReduceFocus {
  HLO_REDUCE_FOCUS_ROOT = 0,     /* ENTRY's ROOT: candidates compute ENTRY's result */
  HLO_REDUCE_FOCUS_NAN = 1,      /* the first instruction that makes a NaN or an infinity
                                    out of finite operands (--check-nan's stop), at that run */
  HLO_REDUCE_FOCUS_FAILURE = 2,  /* the instruction whose run fails (an error, an isolated
                                    custom call's crash or hang), at that run */
  HLO_REDUCE_FOCUS_NAMED = 3     /* focus_name, its run focus_run (from 0): e.g. the
                                    first divergence from a reference */
} HloReduceFocus;
/* 1: the condition holds on the candidate; 0: it does not; negative: stop
 * (hlo_module_reduce fails). The candidate and inputs are borrowed. */
typedef int (*HloReducePredicate)(const HloModule *candidate, HloBuffer *const *inputs, int n,
                                  void *user);
typedef struct HloReduceOptions {
  size_t struct_size;        /* sizeof(HloReduceOptions) */
  HloReduceFocus focus;
  const char *focus_name;    /* HLO_REDUCE_FOCUS_NAMED */
  int64_t focus_run;
  int max_candidates;        /* candidates run at most (0: 300) */
  double timeout;            /* seconds for the reducer's own runs of m (0: none) */
  /* Called after each candidate (NULL: nothing): candidates tried, the
   * instruction count of the smallest candidate so far. */
  void (*progress)(void *user, int tried, int size);
} HloReduceOptions;
typedef struct HloReduceResult {
  HloModule *module;         /* owned: the smallest candidate for which pred held */
  HloBuffer **inputs;        /* owned: its inputs (ninputs) */
  int ninputs;
  int before, after;         /* instructions (every computation) of m and of module */
  int tried;                 /* candidates run, the checks of m and of module included */
  char focus[256];           /* the focus's name, and its run */
  int64_t focus_run;
} HloReduceResult;
/* HLO_INVALID_ARGUMENT when pred does not hold on m (nothing to reduce) or
 * the focus is not found; HLO_ERROR when pred's answer on m changes between
 * two runs, or the smallest candidate does not hold again when re-run (then
 * nothing is returned: never a case that does not reproduce). */
HloStatus hlo_module_reduce(HloCtx *ctx, const HloModule *m, HloBuffer *const *inputs, int n,
                            const HloReduceOptions *opt, HloReducePredicate pred, void *user,
                            HloReduceResult *out);
void hlo_reduce_result_free(HloReduceResult *r);

/* Walking a module (for tools that draw or index it): computations in text
 * order (callees before callers; ENTRY among them), each one's instructions
 * in text order, and what an instruction calls. Handles and strings are
 * borrowed from the module. Out-of-range indices give 0 / NULL. */
enum { HLO_COMPUTATION_ENTRY = 1, HLO_COMPUTATION_FUSION = 2 /* a fusion's body */ };
int hlo_module_num_computations(const HloModule *m);
const char *hlo_module_computation_name(const HloModule *m, int c);
unsigned hlo_module_computation_flags(const HloModule *m, int c);   /* HLO_COMPUTATION_* */
int hlo_module_computation_size(const HloModule *m, int c);         /* instructions */
const HloInstruction *hlo_module_instruction(const HloModule *m, int c, int k);
int hlo_instruction_is_root(const HloInstruction *i);
/* Computations i calls (fusion bodies, loop bodies, reducers, branches...),
 * by name, in attribute order. */
int hlo_instruction_num_called(const HloInstruction *i);
const char *hlo_instruction_called(const HloInstruction *i, int k);
/* i's result shape as text without layout ("f32[2,3]") into buf
 * (NUL-terminated, truncated to cap); returns the full length. */
size_t hlo_instruction_shape_text(const HloInstruction *i, char *buf, size_t cap);

/* ---- Buffers (host values) ---------------------------------------------- */

/* A new array with a copy of data (row-major, elements in XLA's memory form:
 * narrow floats as raw bits, sub-byte integers one per byte); data NULL =
 * zeros. */
HloStatus hlo_buffer_new_array(HloCtx *ctx, HloElementType type, const int64_t *dims, int rank,
                               const void *data, HloBuffer **out);
/* A tuple holding copies of elems' references (elems stay owned by the caller). */
HloStatus hlo_buffer_new_tuple(HloCtx *ctx, HloBuffer *const *elems, int n, HloBuffer **out);
void hlo_buffer_free(HloBuffer *b);
HloElementType hlo_buffer_type(const HloBuffer *b);     /* HLO_TYPE_TUPLE for tuples */
int hlo_buffer_rank(const HloBuffer *b);
const int64_t *hlo_buffer_dims(const HloBuffer *b);
int64_t hlo_buffer_num_elements(const HloBuffer *b);
const void *hlo_buffer_data(const HloBuffer *b);
size_t hlo_buffer_nbytes(const HloBuffer *b);
int hlo_buffer_tuple_size(const HloBuffer *b);
/* Element i of a tuple: a new handle (free it) sharing the data. */
HloStatus hlo_buffer_tuple_element(HloCtx *ctx, const HloBuffer *b, int i, HloBuffer **out);
/* The shape as text, "f32[2,3]" or "(f32[], s32[2])" (free it). */
HloStatus hlo_buffer_shape_text(HloCtx *ctx, const HloBuffer *b, char **text);

/* Literal text the way XLA prints it (free it). */
HloStatus hlo_buffer_to_literal(HloCtx *ctx, const HloBuffer *b, char **text, size_t *len);
/* Save by file extension: .npy (arrays), .npz (leaves depth-first as arr_0,
 * arr_1, ...), anything else literal text with a newline. Written to a
 * temporary file and renamed into place. */
HloStatus hlo_buffer_save(HloCtx *ctx, const HloBuffer *b, const char *path);
/* Save arrays as the members names[i].npy of one .npz (names of at most 27
 * characters). */
HloStatus hlo_buffers_save_npz(HloCtx *ctx, const char *const *names, HloBuffer *const *bufs,
                               int n, const char *path);
/* Load member (name without .npy) of a .npz, shaped like `like`. */
HloStatus hlo_load_like_member(HloCtx *ctx, const HloBuffer *like, const char *path,
                               const char *member, HloBuffer **out);
/* Serialise to memory: format "npy", "npz" or "txt" (free *data). */
HloStatus hlo_buffer_encode(HloCtx *ctx, const HloBuffer *b, const char *format, char **data,
                            size_t *len);

/* A run as a binary xla.HloSnapshot (xla/service/hlo.proto): m as
 * HloProto.hlo_module, args[0..n-1] (n = m's parameters) as its arguments
 * and result (may be NULL) as its result, each in its parameter's (ROOT's)
 * layout. XLA's run_hlo_module and hlorun replay it. *bytes: free with
 * hlo_free. */
HloStatus hlo_snapshot_encode(HloCtx *ctx, const HloModule *m, HloBuffer *const *args, int n,
                              const HloBuffer *result, void **bytes, size_t *len);

/* Load ENTRY parameter `index` of m from a file (.npy, literal text; a
 * tuple parameter from a .npz of its leaves); "-" is standard input. The
 * parameter's type decides how raw bits are read; a dtype or shape that
 * does not match is HLO_TYPE_MISMATCH. */
HloStatus hlo_load_param(HloCtx *ctx, const HloModule *m, int index, const char *path,
                         HloBuffer **out);
/* Load parameters first..first+*n-1 from one .npz holding arr_0, arr_1, ...
 * (*n in: capacity of out; out: count loaded = members in the file). */
HloStatus hlo_load_params_npz(HloCtx *ctx, const HloModule *m, int first, const char *path,
                              HloBuffer **out, int *n);
/* XLA's HloSnapshot files (--xla_dump_hlo_snapshots) and run_hlo_module's
 * literals files (RunHloModuleLiterals, first iteration; or one
 * RunHloModuleIterationLiterals): is path one? Its recorded arguments for m's ENTRY parameters (*n in: capacity of out; out:
 * count loaded), each checked against its parameter's shape. hlo_load_like
 * on a snapshot loads its recorded result; hlo_load_param also reads a
 * LiteralProto file. Modules load from HloSnapshot, HloProto and
 * HloModuleProto files (hlo_module_load), recognised by content. A binary
 * file is mapped, not read, and each argument decoded from it straight into
 * its buffer: a large argument is held once (a file truncated while it
 * loads is an error naming it). On an error *n is 0 and out holds nothing. */
int hlo_file_is_snapshot(HloCtx *ctx, const char *path);
HloStatus hlo_load_snapshot_arguments(HloCtx *ctx, const HloModule *m, const char *path,
                                      HloBuffer **out, int *n);
/* XLA's HloUnoptimizedSnapshot (a module before SPMD partitioning and each
 * partition's arguments): its number of partitions (0 if path is no such
 * file), and partition part's arguments in the shapes they were recorded
 * in (each device's shards; *n in: capacity of out; out: count loaded).
 * hlo_assemble_param makes global values of them. */
int hlo_file_partitions(HloCtx *ctx, const char *path);
HloStatus hlo_load_partition_arguments(HloCtx *ctx, const char *path, int part, HloBuffer **out,
                                       int *n);
/* The global value of ENTRY parameter index from the nparts partitions of
 * an HloUnoptimizedSnapshot, by the parameter's sharding (as
 * hlo_assemble_param), built shard by shard: each partition's argument is
 * decoded, placed into the global buffer (or, where another partition
 * gave the same tile, compared with it) and freed before the next is read,
 * so the value and one shard are held at a time. Every partition must hold
 * one argument per parameter, all of them of the same shape. */
HloStatus hlo_load_partitioned_param(HloCtx *ctx, const HloModule *m, int index, const char *path,
                                     int nparts, HloBuffer **global);
/* Load a value shaped like `like` (e.g. a golden result) from a file. */
HloStatus hlo_load_like(HloCtx *ctx, const HloBuffer *like, const char *path, HloBuffer **out);
/* Deterministic pseudo-random value for ENTRY parameter index: floats in
 * [-1, 1), signed integers in [-8, 8), unsigned in [0, 16), pred random. The
 * same seed gives the same values on every machine. */
HloStatus hlo_random_param(HloCtx *ctx, const HloModule *m, int index, uint64_t seed,
                           HloBuffer **out);

/* ---- Running -------------------------------------------------------------- */

typedef struct HloRunOptions {
  size_t struct_size;        /* sizeof(HloRunOptions) */
  int random_constants;      /* nonzero: elided constants {...} get pseudo-random values */
  uint64_t seed;             /* for those values and for rng instructions */
  /* Limits (zero = none). Exceeding one fails the run with an error naming
   * the instruction (HLO_RUNTIME_ERROR). */
  int64_t max_iterations;    /* iterations any one while loop may run */
  double timeout;            /* seconds each hlo_execute may take (checked between
                                instructions and in while loops) */
  int no_fusion;             /* nonzero: run every instruction as its own step (no
                                fusion of elementwise chains), so that an observer
                                sees each instruction's value; also HLORUN_FUSION=0 */
  /* The device grid (0: the module's own, hlo_module_device_grid). A grid
   * of more than one device runs with hlo_execute_devices. */
  int replicas, partitions;
} HloRunOptions;

/* Plan the ENTRY computation and everything it calls (kernels are checked
 * here, before anything runs). opts may be NULL. */
HloStatus hlo_compile(HloCtx *ctx, const HloModule *m, const HloRunOptions *opts,
                      HloExecutable **out);
/* Run ENTRY on n inputs (one per parameter); *result gets a new buffer. */
HloStatus hlo_execute(HloExecutable *e, HloBuffer *const *inputs, int n, HloBuffer **result);
void hlo_executable_free(HloExecutable *e);

/* ---- StableHLO interpreter test files ---------------------------------------- */

/* Is this MLIR text a test file of StableHLO's interpreter (check.expect_*
 * ops, or "// -----" parts)? MLIR modules (StableHLO, MHLO, CHLO) are read
 * by hlo_module_parse like HLO text; a test file runs as a whole: */
int hlo_is_test_file(const char *text, size_t len);
/* Run every public function without arguments of every part of the file
 * and compare its checks. *passed and *failed count checks (a function that
 * cannot be translated or run counts as one failed check); *report
 * (malloc'd, free with hlo_free; may be NULL) says where each failure is:
 * "FILE:LINE: check.expect_eq failed in @f:" and the differing elements.
 * HLO_OK unless the file cannot be read or does not parse at all. */
HloStatus hlo_run_test_file(HloCtx *ctx, const char *path, const HloRunOptions *opts, int *passed,
                            int *failed, char **report);

/* Peak bytes of live values during the runs so far. */
uint64_t hlo_executable_peak_memory(const HloExecutable *e);
/* ---- Observing a run (tracing, NaN checks, profiles, dumps) -------------- */

/* A borrowed view of a value as the executor holds it (valid during the
 * observer call only): an array (dense, row-major, elements in XLA's memory
 * form), a tuple or a token. */
typedef struct HloValue HloValue;
HloElementType hlo_value_type(const HloValue *v);    /* HLO_TYPE_TUPLE, HLO_TYPE_TOKEN */
int hlo_value_rank(const HloValue *v);
const int64_t *hlo_value_dims(const HloValue *v);
int64_t hlo_value_num_elements(const HloValue *v);
const void *hlo_value_data(const HloValue *v);
int hlo_value_tuple_size(const HloValue *v);
const HloValue *hlo_value_tuple_element(const HloValue *v, int i);
/* The shape as text without layout ("f32[2,3]", "(f32[], s32[2])") into
 * buf (NUL-terminated, truncated to cap); returns the full length. */
size_t hlo_value_shape_text(const HloValue *v, char *buf, size_t cap);
/* A new buffer holding the value (free it), e.g. to hlo_buffer_save it. */
HloStatus hlo_value_to_buffer(HloCtx *ctx, const HloValue *v, HloBuffer **out);

/* Statistics over every element of every array leaf. Complex numbers count
 * their real and imaginary parts as two elements; pred is 0 or 1. */
typedef struct HloValueSummary {
  size_t struct_size;        /* sizeof(HloValueSummary) */
  int64_t num_elements;      /* elements counted */
  int64_t num_nan, num_inf;  /* NaNs, infinities (either sign) */
  double min, max, mean;     /* over the finite elements; NaN when there are none */
} HloValueSummary;
void hlo_value_summarize(const HloValue *v, HloValueSummary *s);
/* The first max_elements elements (leaves depth-first) the way XLA prints
 * them, separated by ", ", with ", ..." when there are more; into buf
 * (NUL-terminated, truncated to cap). Returns the full length. */
size_t hlo_value_format_elements(const HloValue *v, int max_elements, char *buf, size_t cap);

typedef enum HloObservePhase {
  HLO_OBSERVE_BEFORE = 1,    /* the instruction is about to run (operands ready) */
  HLO_OBSERVE_AFTER = 2,     /* it ran: result and elapsed time are set */
  /* A flag beside the phases: the observer reads no operands after a step.
   * The run then updates dying operands in place, as it does unobserved
   * (so its times and memory are a plain run's), and AFTER events carry
   * no operands (num_operands 0, operands NULL). Without it an observed
   * run copies instead, so that AFTER events see the operands intact. */
  HLO_OBSERVE_NO_OPERANDS = 4
} HloObservePhase;

/* One instruction of a run, as an observer sees it. Strings and values are
 * borrowed for the duration of the call. */
typedef struct HloEvent {
  size_t struct_size;        /* sizeof(HloEvent) of the library */
  HloObservePhase phase;
  const HloInstruction *instruction;
  const char *name;          /* "add.3" */
  const char *opcode;        /* "add" */
  const char *computation;   /* the computation it belongs to */
  int line;                  /* 1-based source line; 0 unknown */
  int depth;                 /* 0: ENTRY; 1: a computation an ENTRY instruction runs; ... */
  const HloInstruction *caller;  /* the instruction running this computation (depth > 0) */
  int step, num_steps;       /* its position among the instructions its computation runs */
  int num_operands;
  const HloValue *const *operands;
  const HloValue *result;    /* AFTER only, else NULL */
  uint64_t elapsed_ns;       /* AFTER: wall time of the instruction, including the
                                computations it ran */
  int fused;                 /* nonzero: the event stands for instructions hlorun
                                fused, ending at this one: 1 a chain of elementwise
                                instructions (and row reductions), 2 a dot, a row
                                group over its result and this dot, which consumes
                                the group's rows; the operands are the chain's
                                inputs, not the instruction's own (compile with
                                no_fusion to see every instruction) */
  int device;                /* the device running it (replica * partitions +
                                partition); 0 in a run on one device */
} HloEvent;

/* Return 0 to go on; anything else stops the run: hlo_execute returns
 * HLO_STOPPED (an error naming the instruction is recorded). */
typedef int (*HloObserver)(const HloEvent *e, void *user);
/* Call fn for every instruction e runs, in every computation (loop bodies,
 * branches, reducers applied per element...), at the phases asked for
 * (HLO_OBSERVE_BEFORE | HLO_OBSERVE_AFTER, with HLO_OBSERVE_NO_OPERANDS if
 * fn does not read operands after a step); fn NULL removes the observer.
 * Runs are slower while observed. */
HloStatus hlo_executable_set_observer(HloExecutable *e, HloObserver fn, void *user,
                                      unsigned phases);
/* Observe only instructions at depth <= max_depth (-1: all, the default);
 * deeper ones then cost almost nothing (e.g. a progress display watching
 * ENTRY only). After hlo_executable_set_observer. */
HloStatus hlo_executable_set_observer_depth(HloExecutable *e, int max_depth);

/* ---- Many devices (SPMD-partitioned and multi-replica modules) ---------- */

/* The grid a module runs on: replica_count x num_partitions of its header;
 * when the header gives neither and its collectives name other devices
 * (XLA's tests leave the counts to the harness), the smallest grid their
 * ids need, and *inferred = 1. Device d is replica d / P, partition d % P. */
void hlo_module_device_grid(const HloModule *m, int *replicas, int *partitions, int *inferred);
/* Does any instruction's value depend on the device it runs on
 * (collectives, replica-id, partition-id, send, recv)? A module without
 * such instructions and with global shapes is not yet partitioned: it runs
 * once, as one device, whatever its sharding annotations say. */
int hlo_module_is_device_dependent(const HloModule *m);

/* Devices of an executable, and those this process runs: all of them,
 * unless the process is one rank of an MPI job (mpirun -np N), which runs
 * the contiguous block [*first, *first + *count). */
int hlo_executable_num_devices(const HloExecutable *e);
void hlo_executable_local_devices(const HloExecutable *e, int *first, int *count);
/* Run every device on its own inputs: inputs[d * n + i] is parameter i of
 * device d (only this process's devices are read; others may be NULL).
 * results[d] (room for every device) gets device d's result; under MPI the
 * results of every device are gathered on rank 0 and other ranks get NULLs.
 * Each device runs as a thread; they share the context's thread pool and
 * memory limit. A failure on any device fails the run, naming the device. */
HloStatus hlo_execute_devices(HloExecutable *e, HloBuffer *const *inputs, int n,
                              HloBuffer **results);

/* This process's rank and the number of processes (1 and 0 without MPI). */
int hlo_process_count(void);
int hlo_process_rank(void);

/* Shardings (HLO syntax: {replicated}, {maximal device=N},
 * {devices=[a,b]0,1,...}, {devices=[a,b]<=[n]T(...)}, last_tile_dim_replicate,
 * last_tile_dims={...}, tuples {{...}, {...}}). Device numbers in a sharding
 * are partition numbers: every replica is tiled alike. */
/* Split a global value for ENTRY parameter index into one value per device
 * of an R x P grid (per_device has room for R*P). A value of the
 * parameter's own shape goes whole to every device; otherwise the
 * parameter's sharding decides and the value must have the global shape.
 * HLO_TYPE_MISMATCH names the shapes accepted. */
HloStatus hlo_shard_param(HloCtx *ctx, const HloModule *m, int index, const HloBuffer *global,
                          int replicas, int partitions, HloBuffer **per_device);
/* The global shape of ENTRY parameter index (its shape times its
 * sharding's tile counts) as text (free it). */
HloStatus hlo_param_global_shape(HloCtx *ctx, const HloModule *m, int index, int replicas,
                                 int partitions, char **text);
/* Load the global input of ENTRY parameter index from a file: a value of
 * the parameter's own shape or of its global shape. */
HloStatus hlo_load_param_global(HloCtx *ctx, const HloModule *m, int index, const char *path,
                                HloBuffer **out);
/* hlo_load_param_global from member (e.g. "arr_2") of a .npz that holds
 * every parameter, as hlo_load_params_npz reads one on one device. */
HloStatus hlo_load_param_global_member(HloCtx *ctx, const HloModule *m, int index,
                                       const char *path, const char *member, HloBuffer **out);
/* The number of members of a .npz file (the parameters it feeds when it
 * holds arr_0, arr_1, ...). */
HloStatus hlo_npz_count(HloCtx *ctx, const char *path, int *n);
/* hlo_random_param's values drawn for the parameter's global shape (so
 * that, sharded, replicated parts agree across devices, and an
 * unpartitioned twin of the module gets the same values). */
HloStatus hlo_random_param_global(HloCtx *ctx, const HloModule *m, int index, uint64_t seed,
                                  HloBuffer **out);
/* One device's value of ENTRY parameter index: member (e.g. "d3") of a
 * .npz file. */
HloStatus hlo_load_param_member(HloCtx *ctx, const HloModule *m, int index, const char *path,
                                const char *member, HloBuffer **out);
/* Assemble the global result from every device's result by sharding (HLO
 * syntax; NULL: the ROOT instruction's). Without a sharding the result is
 * replicated: every device must hold the same bits (an error names the
 * first two that differ). */
HloStatus hlo_assemble_result(HloCtx *ctx, const HloModule *m, const char *sharding,
                              HloBuffer *const *per_device, int replicas, int partitions,
                              HloBuffer **global);
/* The global value of ENTRY parameter index from every device's shard of
 * it, by the parameter's sharding (none: replicated, so all must hold the
 * same bits). An array parameter only. */
HloStatus hlo_assemble_param(HloCtx *ctx, const HloModule *m, int index,
                             HloBuffer *const *per_device, int replicas, int partitions,
                             HloBuffer **global);

/* hlo_compile + hlo_execute + hlo_executable_free. */
HloStatus hlo_run(HloCtx *ctx, const HloModule *m, HloBuffer *const *inputs, int n,
                  HloBuffer **result);

/* ---- Comparing with a golden value --------------------------------------- */

typedef struct HloCompareOptions {
  size_t struct_size;        /* sizeof(HloCompareOptions) */
  double rtol, atol;         /* < 0: the element type's default (hlo_default_tolerance) */
  int max_report;            /* differing elements listed in the report; 0 = 5 */
  int64_t max_ulp;           /* > 0: a float element also passes when both values are
                                finite and at most max_ulp representable values of
                                its type apart (complex: each part); 0: unused */
} HloCompareOptions;

/* Default tolerances: f16 1e-3/1e-3... see the implementation table
 * (hlo_default_tolerance fills them for one type; integers, pred: 0, 0). */
void hlo_default_tolerance(HloElementType t, double *rtol, double *atol);
/* Compare got with want: element passes when |got - want| <= atol + rtol*|want|
 * or within max_ulp representable values (NaN matches NaN; a non-finite value
 * never matches a finite one; integers, pred and bit patterns exactly). *mismatches gets
 * the number of failing elements (or -1 if the shapes differ) and *report a
 * readable report (free it; NULL when everything matches). */
HloStatus hlo_buffer_compare(HloCtx *ctx, const HloBuffer *got, const HloBuffer *want,
                             const HloCompareOptions *opts, int64_t *mismatches, char **report);

/* ---- Comparing two runs: the first divergence ----------------------------- */

typedef struct HloDivergenceOptions {
  size_t struct_size;        /* sizeof(HloDivergenceOptions) */
  const HloCompareOptions *compare;  /* every comparison's tolerance; NULL: defaults */
  const HloRunOptions *run;  /* how both modules run, NULL: defaults (every
                                instruction runs as its own step, so that each
                                value is seen). Its replicas x partitions is the
                                grid both run on (0 counts as 1: one device unless
                                asked); on more than one device the inputs are
                                every device's, inputs[d * n + i] as
                                hlo_execute_devices takes them */
  HloCtx *reference_ctx;     /* the reference runs in this context (its own custom-call
                                bindings); NULL: the module's */
  uint64_t memory_budget;    /* bytes of reference values held at once; 0: as much as
                                the reference run's peak, at least 64 MiB. More
                                values than that: the runs are repeated, each time
                                for the next part of the reference's values */
  HloElementType reference_precision;  /* HLO_TYPE_F64: the reference is m itself with
                                its floating-point values carried in f64 (ref is
                                ignored, may be NULL; doc/divergence.md); 0: ref */
  HloBuffer *const *reference_inputs;  /* the reference's inputs, laid out as inputs
                                (on many devices its parameters' own shardings split
                                the global values); NULL: the module's */
} HloDivergenceOptions;

/* What hlo_compare_runs found. Strings and instructions are borrowed from
 * the report and the modules. */
typedef struct HloDivergence {
  size_t struct_size;        /* sizeof(HloDivergence) of the library */
  HloBuffer *result, *reference_result;  /* owned by the report */
  int64_t result_mismatches; /* elements of the result outside tolerance; -1: the
                                shapes differ */
  const char *result_report; /* as hlo_buffer_compare's, NULL when they agree */
  int found;                 /* 1: a first divergence (below), 0: none */
  const HloInstruction *instruction;  /* the module's instruction */
  const HloInstruction *counterpart;  /* the reference's */
  int64_t iteration;         /* its loop iteration (from 0), -1 outside loops */
  int64_t call;              /* custom calls outside loops: the call (from 0), else -1 */
  int64_t mismatches, elements;       /* of its value */
  double max_abs_error;      /* largest absolute error among them (NaN: none finite) */
  const char *max_abs_at;    /* where ("[1,2]", "{0}[3]" in tuples) */
  const char *line;          /* "first divergence: ..." or "first divergence: none" */
  int64_t values_compared;   /* instruction values compared (every iteration counts) */
  int paired, unpaired;      /* the module's comparable instructions with / without a
                                counterpart */
  int failed_side;           /* a run failed: 1 the module's, 2 the reference's */
  int runs;                  /* runs of each module it took (memory_budget) */
  HloBuffer *value, *reference_value;  /* found: the instruction's value and its
                                counterpart's (owned by the report) */
  /* Many devices: both modules ran on every device of the grid; device d's
   * instructions are compared with their counterparts on device d. */
  int num_devices;           /* devices each module ran on (1: one device) */
  int device;                /* found: the device of the first divergence, the
                                lowest-numbered one where an instruction diverged */
  int devices_diverged;      /* devices on which an instruction diverged */
  HloBuffer *const *device_results;            /* by device (num_devices); result and */
  HloBuffer *const *device_reference_results;  /* reference_result are device 0's */
  const int64_t *device_result_mismatches;     /* by device, as result_mismatches (which
                                is then their sum, or -1 if any device's shapes differ);
                                result_report's lines begin "device D: " */
} HloDivergence;

/* Run m and ref on the same inputs (checked against both modules' ENTRY
 * parameters first: a mismatch is HLO_TYPE_MISMATCH naming the first one,
 * before anything runs), compare the results, then every instruction of m
 * that has a counterpart in ref, in m's execution order, and name the first
 * whose value differs (doc/divergence.md: how counterparts pair, what is
 * compared). Values are compared as they are made, never all held at once:
 * memory is about both runs' plus memory_budget. On an error *out may still
 * hold a report whose failed_side says which run failed (the diagnostics
 * say where). On a grid of several devices (opts->run's replicas x
 * partitions) both run on every device, each device's instructions are
 * compared with their counterparts on the same device, and the divergence
 * named is the lowest-numbered device's, unless it is at a collective (a
 * value from other devices) while another device's is not (doc/divergence.md,
 * "Many devices"); one process only (not under MPI). Free the report with
 * hlo_divergence_free. */
HloStatus hlo_compare_runs(HloCtx *ctx, const HloModule *m, const HloModule *ref,
                           HloBuffer *const *inputs, int n, const HloDivergenceOptions *opts,
                           HloDivergence **out);
void hlo_divergence_free(HloDivergence *d);

/* ---- Nondeterminism ------------------------------------------------------- */

/* What hlo_check_determinism found. */
typedef struct HloDeterminism {
  size_t struct_size;        /* in: sizeof(HloDeterminism) of the caller */
  int deterministic;         /* 1: every run made the same bits at every step */
  int runs;                  /* runs made (a difference stops the checking) */
  int run;                   /* not deterministic: the run (from 0) that differed from run 0 */
  const HloInstruction *instruction;  /* the first step that differed (NULL: the later
                                run made fewer steps) */
  int64_t iteration;         /* its loop iteration (from 0), -1 outside loops */
  int64_t call;              /* custom calls outside loops: the call (from 0), else -1 */
  int operands_differ;       /* its operands' bits already differed: the difference
                                came from a step that is not observed */
  int different_path;        /* the runs executed different instructions here */
  int64_t steps;             /* steps of the first run */
  int failed_run;            /* a run failed: its number + 1 (diagnostics in its context) */
} HloDeterminism;

/* Run m nruns times (>= 2) on the same inputs, run k in context ctxs[k]
 * (give them different thread counts; NULL: ctxs[0]), every instruction as
 * its own step; hash every step's operands and result, and find the first
 * step whose result's bits differ from run 0's. Holds 24 bytes per step of
 * the first run, never values. */
HloStatus hlo_check_determinism(HloCtx *const *ctxs, int nruns, const HloModule *m,
                                HloBuffer *const *inputs, int n, const HloRunOptions *opts,
                                HloDeterminism *out);

#ifdef __cplusplus
}
#endif
#endif
