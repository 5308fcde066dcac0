/* ir.h: the typed IR of an HLO module, as the front ends produce it.
 *
 * module -> computations -> instructions. Names, shapes, operands, called
 * computations and the attributes the interpreter needs are resolved into
 * typed fields here; nothing downstream re-parses text. Every attribute is
 * also kept as a generic value tree (HloAttr, in source order) so the printer
 * reproduces attributes hlorun does not interpret, and unknown attributes from
 * newer XLA survive a round trip.
 *
 * All memory belongs to the module's arena (HloModule.arena) and is freed by
 * hlp_module_free. Pointers between IR objects are borrowed.
 */
#ifndef HLORUN_IR_IR_H
#define HLORUN_IR_IR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/arena.h"
#include "common/diag.h"
#include "common/dtype.h"

typedef enum HloOpcode {
#define OPCODE(id, text, arity, shape_opt) HLO_OP_##id,
#include "ir/opcodes.def"
#undef OPCODE
  HLO_NUM_OPCODES
} HloOpcode;

const char *hlp_opcode_name(HloOpcode op);
/* -1 if the word is not an opcode. */
int hlp_opcode_from_name(const char *s, size_t n);

/* ---- Shapes ------------------------------------------------------------ */

enum { HLO_DIM_STATIC = 0, HLO_DIM_BOUNDED = 1 /* <=N */, HLO_DIM_UNBOUNDED = 2 /* ? */ };

typedef struct HloShape HloShape;
struct HloShape {
  HloDtype dtype;           /* element type; HLO_TUPLE for tuples, HLO_TOKEN */
  int32_t rank;             /* arrays: number of dims */
  int64_t *dims;            /* rank extents (bounded dims: the bound; '?': -1) */
  uint8_t *dynamic;         /* NULL if all static, else rank HLO_DIM_* flags */
  int64_t *minor_to_major;  /* rank entries, or NULL if no layout */
  bool layout_written;      /* the layout appeared in the text (not filled) */
  const char *layout_tail;  /* text after ':' inside the layout braces, normalised
                               (tiles, E(), S(), ...), or NULL */
  int32_t ntuple;           /* tuples: element count */
  HloShape *tuple;          /* tuples: ntuple elements */
  bool is_buffer;           /* written b(shape) */
};

/* Number of elements of an array shape (1 for rank 0). */
int64_t hlp_shape_elements(const HloShape *s);
/* Same element type and dims, layouts ignored (tuples: recursively). */
bool hlp_shape_compatible(const HloShape *a, const HloShape *b);
/* Shapes equal including layouts. */
bool hlp_shape_equal(const HloShape *a, const HloShape *b);

struct HloModule;
struct HloComputation;
/* Which computations (by index in m->comps) the roots call, directly or
 * not, roots included: a malloc'd array of m->ncomps flags, NULL if out of
 * memory. */
bool *hlp_reachable(const struct HloModule *m, const struct HloComputation *const *roots,
                    int32_t nroots);

/* ---- Literals ---------------------------------------------------------- */

/* A constant's value: dense, logical row-major, elements in memory format of
 * the dtype (see common/numeric.h). Tuples hold elements. */
typedef struct HloLiteral HloLiteral;
struct HloLiteral {
  const HloShape *shape;    /* borrowed */
  void *data;               /* arrays: hlp_shape_elements * dtype size bytes; NULL if elided */
  size_t nbytes;
  bool elided;              /* written {...}: the values are unknown */
  int32_t ntuple;
  HloLiteral *tuple;
};

/* ---- Generic attribute values (for printing and unknown attributes) ---- */

/* Value trees nest at most this deep (front ends reject deeper input, which
 * keeps the printer's recursion bounded). */
enum { HLO_MAX_NESTING = 256 };

typedef enum HloValKind {
  HLO_VAL_TOKEN,   /* one token, its text in .text (INT, DECIMAL, IDENT, NAME
                      printed with %, TYPE, punctuation, ...) */
  HLO_VAL_STRING,  /* a quoted string; .text is the unescaped body, .len its length */
  HLO_VAL_RAW,     /* raw brace-balanced text (backend_config={...}); verbatim */
  HLO_VAL_BRACE,   /* { items } */
  HLO_VAL_BRACKET, /* [ items ] */
  HLO_VAL_PAREN,   /* ( items ) */
  HLO_VAL_ATTR,    /* name=value inside a group: .text = name, .items[0] = value */
  HLO_VAL_SHAPE,   /* an array shape written inside a value (.shape); tuple shapes
                      are PAREN groups of SHAPE items */
  HLO_VAL_COMP     /* an inline computation body { instrs } (.comp once lowered) */
} HloValKind;

typedef struct HloVal HloVal;
struct HloVal {
  HloValKind kind;
  const char *text;  /* TOKEN/STRING/RAW/ATTR name */
  size_t len;
  uint32_t off;      /* byte offset in the source */
  int32_t nitems;
  HloVal **items;    /* BRACE/BRACKET/PAREN/ATTR children */
  uint8_t sep;       /* separator written before this item in its group:
                        0 none, 1 whitespace, 2 comma */
  uint8_t tok;       /* TOKEN: the lexer's token kind (parser-internal codes);
                        STRING: '\'' if written with single quotes, else '"' */
  bool word;         /* TOKEN: a name or identifier (the printer writes ", "
                        rather than "," before it) */
  struct HloShape *shape;           /* SHAPE */
  struct HloComputation *comp;      /* COMP, after lowering */
  const void *syn;   /* parser-private (COMP: the syntax tree of the body) */
};

typedef struct HloAttr {
  const char *name;  /* without '=' */
  int32_t nvalues;   /* a value is one or more juxtaposed items, e.g.
                        replica_groups=[2,2]<=[4] or literal=s32[2]{0} {1,2} */
  HloVal **values;
  uint32_t off;      /* offset of the attribute name */
  bool known;        /* hlorun understood (and validated) this attribute */
} HloAttr;

/* ---- Typed attribute payloads ----------------------------------------- */

typedef struct HloI64s { int32_t n; int64_t *v; } HloI64s;

typedef struct HloWindowDim {
  int64_t size, stride, pad_lo, pad_hi, lhs_dilate /* base */, rhs_dilate /* window */;
  bool reversal;
} HloWindowDim;
typedef struct HloWindow { int32_t rank; HloWindowDim *dims; bool present; } HloWindow;

typedef struct HloPadDim { int64_t lo, hi, interior; } HloPadDim;
typedef struct HloSliceDim { int64_t start, limit, stride; } HloSliceDim;

typedef struct HloDotDims {
  HloI64s lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
  HloI64s lhs_ragged, rhs_group;   /* ragged-dot only */
} HloDotDims;

/* dim_labels: tensor dimension numbers of each role. */
typedef struct HloConvDims {
  int64_t in_batch, in_feature;    HloI64s in_spatial;
  int64_t k_in_feature, k_out_feature; HloI64s k_spatial;
  int64_t out_batch, out_feature;  HloI64s out_spatial;
} HloConvDims;

typedef struct HloGatherDims {
  HloI64s offset_dims, collapsed_slice_dims, start_index_map;
  HloI64s operand_batching_dims, start_indices_batching_dims;
  int64_t index_vector_dim;
  HloI64s slice_sizes;
  bool indices_are_sorted;
} HloGatherDims;

typedef struct HloScatterDims {
  HloI64s update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  HloI64s input_batching_dims, scatter_indices_batching_dims;
  int64_t index_vector_dim;
  bool indices_are_sorted, unique_indices;
} HloScatterDims;

typedef enum { HLO_CMP_EQ, HLO_CMP_NE, HLO_CMP_GE, HLO_CMP_GT, HLO_CMP_LE, HLO_CMP_LT } HloCmpDir;
typedef enum { HLO_CMPT_DEFAULT, HLO_CMPT_FLOAT, HLO_CMPT_TOTALORDER, HLO_CMPT_SIGNED,
               HLO_CMPT_UNSIGNED } HloCmpType;
typedef enum { HLO_FUSION_NONE, HLO_FUSION_LOOP, HLO_FUSION_INPUT, HLO_FUSION_OUTPUT,
               HLO_FUSION_CUSTOM } HloFusionKind;
typedef enum { HLO_FFT_FFT, HLO_FFT_IFFT, HLO_FFT_RFFT, HLO_FFT_IRFFT } HloFftType;
typedef enum { HLO_RNG_UNIFORM, HLO_RNG_NORMAL } HloRngDist;
typedef enum { HLO_RNG_DEFAULT, HLO_RNG_THREE_FRY, HLO_RNG_PHILOX } HloRngAlg;
typedef enum { HLO_TRANSPOSE_NO, HLO_TRANSPOSE_YES, HLO_TRANSPOSE_ADJOINT } HloTransposeA;
typedef enum { HLO_API_ORIGINAL = 1, HLO_API_STATUS_RETURNING = 2,
               HLO_API_STATUS_RETURNING_UNIFIED = 3, HLO_API_TYPED_FFI = 4 } HloApiVersion;

/* Roles of called computations (HloInstr.called[]). */
typedef enum HloCallRole {
  HLO_CALL_TO_APPLY, HLO_CALL_CALLS, HLO_CALL_CONDITION, HLO_CALL_BODY,
  HLO_CALL_TRUE, HLO_CALL_FALSE, HLO_CALL_BRANCH, HLO_CALL_SELECT,
  HLO_CALL_SCATTER, HLO_CALL_CALLED /* custom-call called_computations */
} HloCallRole;

typedef struct HloComputation HloComputation;
typedef struct HloInstr HloInstr;

typedef struct HloCalled { HloCallRole role; HloComputation *comp; } HloCalled;

/* ---- Instructions ------------------------------------------------------ */

struct HloInstr {
  HloOpcode op;
  const char *name;          /* without '%' */
  uint32_t off;              /* byte offset of the instruction's name */
  int32_t line;              /* 1-based source line (for runtime errors) */
  int32_t index;             /* position in its computation */
  bool is_root;              /* written ROOT (or chosen as last) */
  HloComputation *parent;
  HloShape shape;            /* result shape (inferred if omitted) */

  int32_t nops;
  HloInstr **ops;            /* operands, same computation, defined earlier */
  int32_t ncalled;
  HloCalled *called;         /* called computations, in attribute order */
  int32_t ncontrol;
  HloInstr **control_preds;  /* control-predecessors */

  int32_t nattrs;
  HloAttr *attrs;            /* every attribute, in source order */
  const struct HloSharding *sharding;  /* sharding={...} (ir/sharding.h), or NULL */
  /* XLA's Shardy round-trip edges of a manual region (custom calls
   * xla.sdy.GlobalToLocalShape / LocalToGlobalShape): the global side's
   * sharding of each operand or result (a tuple sharding when several),
   * read from their frontend attributes by the front end; else NULL. */
  const struct HloSharding *manual_sharding;

  /* Typed attributes: meaningful only for the opcodes that take them. */
  int64_t parameter_number;  /* parameter(N) */
  HloLiteral *literal;       /* constant; custom-call literal= */
  HloI64s dimensions;        /* dimensions={...} (broadcast, reduce, transpose,
                                reverse, concatenate, sort, map, ...) */
  bool has_dimensions;
  int64_t tuple_index;       /* get-tuple-element index= */
  int64_t iota_dimension;
  HloWindow window;
  HloPadDim *padding;        /* pad: rank entries */
  HloSliceDim *slice;        /* slice: rank entries */
  HloI64s dynamic_slice_sizes;
  HloDotDims dot;
  HloConvDims conv;
  int64_t feature_group_count, batch_group_count;   /* default 1 */
  HloGatherDims gather;
  HloScatterDims scatter;
  HloCmpDir cmp_dir;
  HloCmpType cmp_type;       /* DEFAULT if not written */
  HloFusionKind fusion_kind;
  HloFftType fft_type;
  HloI64s fft_length;
  HloRngDist distribution;
  HloRngAlg rng_algorithm;
  int64_t rng_delta;
  bool is_stable;            /* sort */
  int64_t k; bool largest;   /* topk (largest defaults to true) */
  int64_t exponent_bits, mantissa_bits;   /* reduce-precision */
  double epsilon; int64_t feature_index;  /* batch-norm-* */
  bool left_side, lower, unit_diagonal;   /* triangular-solve, cholesky */
  HloTransposeA transpose_a;
  int64_t num_carries; bool is_reverse, is_associative; /* scan */
  int64_t channel_id; bool has_channel_id;
  bool use_global_device_ids;  /* all-reduce, all-gather, reduce-scatter */
  int32_t ngroups; HloI64s *replica_groups;     /* explicit or expanded iota form */
  int32_t npairs; int64_t (*source_target_pairs)[2];
  int32_t npermute_slices;       /* in-place collective-permute: slice_sizes, */
  HloI64s *permute_slices;       /* one list per buffer (and offset set) */
  /* custom-call */
  const char *custom_call_target;
  HloApiVersion api_version;
  const char *backend_config;    /* unescaped string or raw {...} text, or NULL */
  size_t backend_config_len;
  uint32_t backend_config_off;   /* offset of the value's first byte in the source
                                    (inside the quotes for the string form) */
  bool backend_config_quoted;    /* written as "..." (escapes were decoded) */
  bool has_side_effect;
  const char *dim_labels_text;   /* custom-call/convolution dim_labels as written */
  int32_t noperand_layouts;
  HloShape *operand_layouts;     /* operand_layout_constraints */
  const char *async_execution_thread;
};

struct HloComputation {
  const char *name;
  uint32_t off;
  bool is_entry;
  bool is_fusion_body;        /* called by a fusion (informational) */
  int32_t ninstrs;
  HloInstr **instrs;          /* in text order (a valid dependency order) */
  HloInstr *root;
  int32_t nparams;
  HloInstr **params;          /* indexed by parameter number */
  const char *execution_thread; /* NULL = "main" */
  bool has_signature;         /* printed with (params) -> result */
};

/* Stack-frame index and other module-level text kept verbatim for printing. */
struct HloModule {
  HlcArena arena;             /* owns everything below */
  const char *name;
  const char *source;         /* the whole text (owned copy) */
  size_t source_len;
  const char *filename;
  int32_t ncomps;
  HloComputation **comps;     /* in text order: callees before callers */
  HloComputation *entry;
  int32_t nattrs;
  HloAttr *attrs;             /* module attributes (header), source order */
  bool is_scheduled;
  int64_t replica_count, num_partitions;  /* default 1 */
  HloShape *entry_layout;     /* entry_computation_layout: tuple of params, or NULL */
  HloShape *entry_result_layout;
  const char *stack_frames_text; /* FileNames..StackFrames section, normalised, or NULL */
};
typedef struct HloModule HloModule;

/* Frees a module and everything in its arena (NULL is fine). */
void hlp_module_free(HloModule *m);

/* Shape checks beyond parsing (verify*.c): infer each instruction's result
 * shape from its operands and attributes and compare with the declared one,
 * operand counts, called computation signatures, dimension numbers in range.
 * 0 if the module is consistent, else -1 with positioned errors. */
int hlp_verify(const HloModule *m, HlcDiags *diags);

#endif
