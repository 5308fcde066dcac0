/* interp.h: the interpreter's internal interface, shared by the executor and
 * every kernel file. Not installed.
 *
 * Values are dense arrays in logical row-major order (layouts matter only to
 * bitcast), or tuples of values. A kernel computes one instruction: it gets
 * the operand values and an output value that the executor already allocated
 * with the instruction's shape (arrays: uninitialised data; tuples: a tree
 * whose array leaves are allocated), and fills it.
 *
 * Ownership: values are reference counted. The executor owns the references
 * it passes to kernels; a kernel that wants to keep a value takes a ref.
 */
#ifndef HLORUN_INTERP_INTERP_H
#define HLORUN_INTERP_INTERP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/dtype.h"
#include "common/diag.h"
#include "ir/ir.h"

typedef struct HliExec HliExec;
typedef struct HliValue HliValue;

struct HliValue {
  const HloShape *shape;   /* borrowed: from the IR, or owned by the executor */
  HloDtype dtype;          /* arrays: element type; HLO_TUPLE; HLO_TOKEN */
  int32_t rank;
  const int64_t *dims;     /* = shape->dims */
  int64_t nelem;           /* arrays: number of elements */
  void *data;              /* arrays: nelem * hlc_dtype_size(dtype) bytes, 64-byte aligned */
  size_t nbytes;
  int32_t ntuple;          /* tuples */
  HliValue **tuple;        /* tuples: one reference per element */
  int32_t refs;            /* reference count (atomic updates not needed: the
                              executor runs instructions one at a time) */
  HliValue *base;          /* non-NULL: data borrowed from base's buffer (a ref) */
  bool owns_data;
};

/* ---- Values ------------------------------------------------------------ */

/* New value of shape s: arrays get an uninitialised buffer, tuples a tree of
 * new values. NULL (and an error recorded on x) when the memory limit or the
 * system refuses. x may be NULL (no accounting, no error text). */
HliValue *hli_value_new(HliExec *x, const HloShape *s);
/* Same, but the buffer is zero-filled. */
HliValue *hli_value_zeros(HliExec *x, const HloShape *s);
/* An array value that borrows base's buffer with another shape of the same
 * byte size (reshape, bitcast). */
HliValue *hli_value_view(HliExec *x, HliValue *base, const HloShape *s);
/* A tuple value holding new references to elems. */
HliValue *hli_value_tuple(HliExec *x, const HloShape *s, HliValue *const *elems, int32_t n);
HliValue *hli_value_ref(HliValue *v);
void hli_value_unref(HliExec *x, HliValue *v);
/* Deep copy of src into dst, same shape (arrays: memcpy). */
void hli_value_copy_into(HliValue *dst, const HliValue *src);
/* Element strides of a row-major array: strides[i] = product of dims[i+1..]. */
void hli_strides(const int64_t *dims, int32_t rank, int64_t *strides);

/* The recycling buffer allocator behind values (value.c), for workspaces
 * and transport buffers that account for themselves: n bytes, 64-byte
 * aligned; x may be NULL (no accounting). Free with the same n. */
void *hli_buffer_alloc(HliExec *x, size_t n);
void hli_buffer_free(HliExec *x, void *p, size_t n);

/* ---- Errors ------------------------------------------------------------ */

/* Record a runtime error naming the instruction and its line:
 *   "FILE:LINE: error: in NAME (OPCODE): MSG". Returns -1 so kernels can
 * write `return hli_fail(x, ins, "...")`. ins may be NULL. */
int hli_fail(HliExec *x, const HloInstr *ins, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Out of memory (the system or the run's limit refused): same as hli_fail,
 * and the run's status is then HLO_NOMEM. */
int hli_fail_nomem(HliExec *x, const HloInstr *ins, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "not supported": same as hli_fail with a fixed prefix, for an opcode,
 * attribute or element type that hlorun cannot run. */
int hli_unsupported(HliExec *x, const HloInstr *ins, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Text of the last error recorded on this thread (for tests without an
 * executor). */
const char *hli_last_error(void);

/* ---- The device ---------------------------------------------------------- */

/* The device this run is (interp/comm.h: coordinates and the communicator
 * that joins it to the others); a run of its own, or x == NULL, is device 0
 * of a 1x1 grid with no communicator. What collective kernels reach the
 * other devices through. */
struct HliDevice;
const struct HliDevice *hli_exec_device(const HliExec *x);
/* The run's deadline (CLOCK_MONOTONIC seconds, hli_now; 0: none) and the
 * limit it came from (seconds, for messages), which a transport waiting for
 * the other devices honours. */
double hli_exec_deadline(const HliExec *x);
double hli_exec_timeout(const HliExec *x);
/* Monotonic clock in seconds (limits.c). */
double hli_now(void);

/* ---- Kernels ----------------------------------------------------------- */

/* Compute ins into out from in[0..ins->nops-1]. 0 on success, else -1 with an
 * error recorded through hli_fail. */
typedef int (*HliKernel)(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out);

/* Optional plan-time check: can the kernel run this instruction (types,
 * attributes)? 0 if yes; else -1 with an error via hli_fail. Checked before
 * the first run, so unsupported cases fail before any work is done. */
typedef int (*HliKernelCheck)(HliExec *x, const HloInstr *ins);

typedef struct HliOpEntry {
  HliKernel run;
  HliKernelCheck check;    /* may be NULL */
} HliOpEntry;

/* Kernel registration: each kernel file fills the entries of its opcodes.
 * The executor calls every registrar once (interp/registry.c). */
typedef HliOpEntry HliOpTable[HLO_NUM_OPCODES];
void hli_register_custom_call(HliOpTable t);   /* interp/custom_call.c -> ffi/ */
const HliOpEntry *hli_op_table(void);
/* Does ins's kernel read operand k's value? Not when it makes that operand
 * itself (an argmax's iota indices, kernels/reduce.c): the plan may then
 * leave the operand uncomputed when nothing else uses it, and the kernel
 * gets NULL in its place. */
bool hli_kernel_reads(const HloInstr *ins, int32_t k);

/* ---- Services the executor gives kernels ------------------------------ */

/* Run computation c on args (c->nparams values); *result gets a new
 * reference. Used by call, while, conditional, fusion, map, and by kernels
 * that apply a computation they did not recognise. */
int hli_call(HliExec *x, const HloComputation *c, HliValue *const *args, HliValue **result);
/* Like hli_call, but the callee takes over the caller's references to args
 * and releases each argument once it is dead (also on failure), so values
 * it updates in place (dynamic-update-slice or scatter in a while body)
 * need no copy. */
int hli_call_donate(HliExec *x, const HloComputation *c, HliValue *const *args,
                    HliValue **result);

/* Common scalar reducers recognised in a to_apply computation, so kernels can
 * run typed loops instead of calling the computation per element. */
typedef enum HliBinop {
  HLI_BINOP_NONE = 0, HLI_BINOP_ADD, HLI_BINOP_MUL, HLI_BINOP_MAX, HLI_BINOP_MIN,
  HLI_BINOP_AND, HLI_BINOP_OR, HLI_BINOP_XOR, HLI_BINOP_SELECT_RHS /* returns 2nd param */
} HliBinop;
/* If c is `ROOT r = OP(p0, p1)` on two scalar parameters (either order for
 * commutative ops), the op; else HLI_BINOP_NONE. */
HliBinop hli_match_binop(const HloComputation *c);

/* Run fn(arg, lo, hi) over [0, n) in chunks of at least min_chunk on the
 * executor's threads (inline when n is small or threads == 1). fn must be
 * safe to run concurrently on disjoint ranges. */
void hli_parallel_for(HliExec *x, int64_t n, int64_t min_chunk,
                      void (*fn)(void *arg, int64_t lo, int64_t hi), void *arg);
int hli_num_threads(HliExec *x);

/* Deterministic per-run random source (rng, --random). */
uint64_t hli_random_u64(HliExec *x);

/* The custom-call registry of this run (ffi/ffi.h); never NULL. */
struct HlfRegistry;
struct HlfRegistry *hli_ffi_registry(HliExec *x);

/* The module being run (for names in messages). */
const HloModule *hli_module(HliExec *x);

/* ---- Limits kernels observe (limits.c) --------------------------------- */

/* Count iteration `iteration` (0-based) of while loop ins: -1 with an error
 * naming ins when the run's iteration limit or deadline is exceeded. */
int hli_loop_iteration(HliExec *x, const HloInstr *ins, int64_t iteration);
/* Scratch memory of a kernel (workspaces, index tables), counted against
 * the run's memory limit like values: 64-byte aligned, uninitialised; NULL
 * with an error naming ins when it does not fit or malloc fails. x may be
 * NULL (no accounting). Call from the kernel's own thread, not from
 * hli_parallel_for workers. */
void *hli_scratch_alloc(HliExec *x, const HloInstr *ins, size_t n);
void hli_scratch_free(HliExec *x, void *p);
/* Count n bytes that hli_parallel_for workers will malloc themselves (per
 * thread workspaces) against the memory limit, before starting them: -1
 * with an error naming ins if they do not fit. Undo with unreserve. */
int hli_scratch_reserve(HliExec *x, const HloInstr *ins, size_t n);
void hli_scratch_unreserve(HliExec *x, size_t n);
#endif
