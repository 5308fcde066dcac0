/* lower.h: stablehlo/-internal pieces of the translation of the MLIR tree
 * (syntax.h) to HLO text: types (types.c), dense literals (dense.c), the
 * translation state and per-op helpers (lower.c), the op table (ops*.c).
 */
#ifndef HLORUN_STABLEHLO_LOWER_H
#define HLORUN_STABLEHLO_LOWER_H
#include <setjmp.h>
#include "common/dtype.h"
#include "common/text.h"
#include "ir/sdy.h"
#include "stablehlo/syntax.h"
#include "stablehlo/stablehlo.h"

/* ---- Types ----------------------------------------------------------------- */
enum { SH_MAX_RANK = 32 };
typedef enum { SHT_TENSOR, SHT_TUPLE, SHT_TOKEN } ShTypeKind;
typedef struct ShType {
  ShTypeKind kind;
  HloDtype dt;
  int rank;
  int64_t dims[SH_MAX_RANK];
  int n;                 /* tuple elements */
  struct ShType **elems;
} ShType;

typedef struct Lower Lower;
typedef struct HlpMesh ShMesh;  /* a Shardy mesh (ir/sdy.h) */

/* Parse one type starting at node *n (advanced past it). NULL after an
 * error naming the construct (dynamic or quantized types, ...). */
ShType *sh_parse_type(Lower *C, ShNode **n);
/* The element type of an MLIR element type word ("f32", "ui8", "i1"). */
HloDtype sh_elem_type(const char *s, size_t n);
void sh_put_type(HlcText *b, const ShType *t);      /* "f32[2,3]", "(f32[], s32[])" */
int64_t sh_type_elems(const ShType *t);
bool sh_type_eq(const ShType *a, const ShType *b);
ShType *sh_scalar_type(Lower *C, HloDtype dt);

/* dense<...> (the ANGLE node after "dense") of type t as an HLO literal
 * (without the shape): "{ {1, 2}, {3, 4} }" or "1.5". *splat set when the
 * attribute held one value for all elements (then the literal is that scalar). */
int sh_dense_literal(Lower *C, const ShNode *angle, const ShType *t, HlcText *out, bool *splat);
/* Elements of a dense<> or array<> attribute as int64 (dims, indices). */
int sh_int_list(Lower *C, const ShNode *n, int64_t *v, int max, int *count);

/* ---- Translation state ----------------------------------------------------- */
typedef struct Binding {
  const char *name;        /* MLIR value name ("%0", "%0#1", "%arg0") */
  uint32_t nlen;
  int32_t prev;            /* shadowed binding with the same name, or -1 */
  const char *hlo;         /* HLO instruction name */
  ShType *type;
  int comp;                /* computation it belongs to */
  const char *const_rhs;   /* constants: "f32[] constant(1)", copied into regions that use it */
  const ShNode *const_dense; /* constants: their "dense" token (sh_const_ints reads the values) */
  size_t line_off;         /* its line in its computation's body */
} Binding;

typedef struct Comp {
  HlcText body;
  const char *name;
  struct Comp *all_next;   /* every computation opened, so a failed translation frees their bodies */
  int id;
  int nparams;
  size_t last_line;        /* offset of the last line written */
} Comp;

typedef struct Func {
  const char *name;        /* without '@' */
  uint32_t nlen;
  ShNode *op;              /* the func.func node */
  bool is_public;
  int nargs;
  const char *comp;        /* computation name once lowered */
  struct ShType *root_type;
  bool busy;               /* being lowered (recursion check) */
} Func;

struct Lower {
  HlcArena *arena;
  ShParser *P;
  const char *src;
  HlcText module;            /* finished computations */
  Comp *cur;               /* computation being written */
  Comp *all;               /* every computation opened (Comp.all_next) */
  int ncomp;
  int counter;             /* unique instruction names */
  /* bindings */
  Binding **b;             /* each in the arena: pointers stay valid */
  int nb, capb;
  int scope_floor;         /* bindings below it belong to a caller: not visible */
  int32_t *table;          /* hash -> binding index, -1 empty */
  uint32_t tmask;
  /* functions of the chunk */
  Func *funcs;
  int nfuncs;
  ShNode **aliases;        /* "#x = ..." definitions */
  int naliases;
  int64_t num_replicas, num_partitions;
  ShMesh **meshes;          /* sdy.mesh definitions (arena) */
  int nmeshes, capmeshes;
  /* inside sdy.manual_computation bodies: their mesh and manual axes, which
   * a region nested in them writes as manual subgroups (sdy.c) */
  const ShMesh *sdy_outer_mesh;
  bool sdy_outer_manual[HLP_SDY_MAX_AXES];
  /* test mode: checks of the entry function */
  bool test_mode;
  bool checks_here;        /* lowering the test function's own body */
  ShCheck *checks;         /* malloc'd */
  int nchecks, capchecks;
  Binding **check_vals;    /* malloc'd: actual, expected of each check */
  int ncheck_vals, capcheck_vals;
  const char *last_const_rhs;  /* the last constant's text, when it can be copied */
  /* test mode: the test function's interpreter.run_parallel (ops_parallel.c) */
  const char *par_callee;  /* the program every device runs (arena) */
  int par_replicas, par_partitions, par_nargs, par_nresults;   /* nargs, nresults: per device */
  HlcText par_pre;         /* computations and an ENTRY whose result is its operands (no header) */
  int64_t grid_replicas, grid_partitions;   /* nonzero: the header's grid (the callee's own module) */
  jmp_buf fail;            /* a translation error (recorded) longjmps here */
};

/* Record a positioned error at the node's token and abandon the translation. */
__attribute__((noreturn, format(printf, 3, 4))) void sh_fail(Lower *C, const ShNode *at, const char *fmt, ...);
__attribute__((noreturn, format(printf, 3, 4))) void sh_fail_off(Lower *C, size_t off, const char *fmt, ...);

/* Token text helpers. */
const char *sh_text(Lower *C, const ShNode *n, size_t *len);
bool sh_is(Lower *C, const ShNode *n, int tokkind, const char *text);   /* text NULL: any */
char *sh_strdup(Lower *C, const char *s, size_t n);
char *sh_fmt(Lower *C, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A string token's decoded contents (arena). */
char *sh_string(Lower *C, const ShNode *n, size_t *len);

/* Shardy (sdy.c): record a top-level sdy.mesh op; the "<@mesh, [...]>" of
 * a #sdy.sharding for a value of type t as an HLO sharding "{...}". */
void sh_sdy_mesh(Lower *C, ShNode *op);
const char *sh_sdy_sharding(Lower *C, const ShNode *angle, const ShType *t);
/* sdy.manual_computation (its node, pretty form): the region's body on
 * every device's shard, between XLA's SPMDFullToShardShape and
 * SPMDShardToFullShape custom calls; binds the op's results. */
void sh_sdy_manual_computation(Lower *C, ShNode *node);

/* ---- One operation --------------------------------------------------------- */
enum { SH_MAX_OPERANDS = 4096, SH_MAX_ATTRS = 64 };
typedef struct ShAttr { const char *key; size_t klen; ShNode *val; } ShAttr;  /* val: first item; ends at ',' */

typedef struct ShOp {
  ShNode *node;
  const char *name;        /* "stablehlo.add" (quotes removed) */
  size_t nlen;
  Binding **operands;
  int noperands, opcap;
  ShNode *iter_args[256];  /* "(%arg0 = %init, ...)": the block argument names */
  int niter_args;
  ShNode *region_args[16]; /* pretty "reducer(%a: T, %b: T) {": the argument list before region i */
  ShAttr attrs[SH_MAX_ATTRS];
  int nattrs;
  ShType **results;        /* result types */
  int nresults;            /* results named by the op */
  ShNode *regions[16];
  int nregions;
  ShType **sig_types;      /* every type of the signature (operands' then results') */
  int nsig;
  const char *metadata;    /* ", metadata={...}" and ", frontend_attributes={...}", or "" */
  bool generic;            /* "name"(operands) ... form */
} ShOp;

ShAttr *sh_attr(ShOp *op, const char *key);
/* Attribute value helpers (fail naming op and key on a bad value). */
int64_t sh_attr_int(Lower *C, ShOp *op, const char *key, int64_t dflt);
bool sh_attr_bool(Lower *C, ShOp *op, const char *key, bool dflt);
int sh_attr_ints(Lower *C, ShOp *op, const char *key, int64_t *v, int max);   /* -1 if absent */
const char *sh_attr_word(Lower *C, ShOp *op, const char *key);  /* enum value: "LT", "#stablehlo<...>"'s word */

/* Write one instruction "NAME = SHAPE OPCODE(OPERANDS)ATTRS" into the current
 * computation; returns NAME. operands: a text like "a, b". */
const char *sh_emit(Lower *C, const ShType *t, const char *opcode, const char *operands, const char *attrs,
                    const char *metadata);
/* Operand names joined with ", " from op->operands[from..to). */
const char *sh_operand_list(Lower *C, ShOp *op, int from, int to);
/* Bind op's i-th result (its MLIR name) to an HLO name. */
Binding *sh_bind_result(Lower *C, ShOp *op, int i, const char *hlo, ShType *t);
/* The integer elements of b when a stablehlo.constant made it (a splat
 * repeated for every element) into v: their count, or -1 when b is not a
 * constant. What XLA's shape refinement needs of a dynamic op's operands. */
int sh_const_ints(Lower *C, const Binding *b, int64_t *v, int max);
/* The binding of op's i-th result (NULL: not bound). */
Binding *sh_result_binding(Lower *C, ShOp *op, int i);
/* op's own sharding (mhlo.sharding, or sdy.sharding_per_value) onto the
 * instructions of comp written since offset start (bindings from mark on)
 * that hold its results (op_sharding.c). */
void sh_attach_op_sharding(Lower *C, ShOp *op, Comp *comp, size_t start, int mark);
/* Bind results of a tuple-shaped instruction via get-tuple-element. */
void sh_bind_tuple_results(Lower *C, ShOp *op, const char *tuple, const ShType *tt);
Binding *sh_lookup(Lower *C, const ShNode *value);
Binding *sh_find(Lower *C, const char *name, size_t n);
Binding *sh_bind(Lower *C, const char *name, size_t n, const char *hlo, ShType *t);
int sh_bind_mark(Lower *C);
void sh_bind_unwind(Lower *C, int mark);
void sh_emit_line(Lower *C, const char *name, const char *rhs);
Comp *sh_comp_open(Lower *C);   /* a new computation, numbered and tracked */
void sh_mark_root(Lower *C, Binding *b);
ShType *sh_tuple_type(Lower *C, ShType **elems, int n);
int sh_result_count(Lower *C, ShNode *node);
void sh_decompose(Lower *C, ShNode *node, ShOp *op);
const char *sh_node_metadata(Lower *C, ShNode *node);   /* its loc(...) as ", metadata={...}", or "" */
/* mhlo.frontend_attributes' dictionary {key = "value", ...} as HLO's
 * ", frontend_attributes={key="value",...}" ("" when empty). */
const char *sh_frontend_attrs(Lower *C, const ShNode *dict);
void sh_dict_attrs(Lower *C, ShOp *op, ShNode *dict);   /* "{k = v, ...}" entries into op->attrs */
/* A region as a computation (region.c).
 *   SHR_PARAMS: each entry block argument is a parameter (reducers, sort's
 *     comparator, a function); the root is the returned value, or a tuple of
 *     them when there are several (or always, with SHR_TUPLE_ROOT).
 *   SHR_TUPLE_PARAM: one tuple parameter holding the block arguments and
 *     then the captures (a while's condition and body; conditional branches
 *     have no block arguments); a body's root also passes the captures on.
 * args: the argument names and types when they are written outside the
 * region ("(%arg0 = %init)" of a pretty while, "reducer(%a: T, %b: T)"), or
 * NULL to take them from the entry block's header. Returns the computation
 * name; *root_type its result type. */
enum { SHR_PARAMS = 1, SHR_TUPLE_PARAM = 2, SHR_TUPLE_ROOT = 4, SHR_PASS_CAPTURES = 8, SHR_ENTRY = 16 };
typedef struct ShCaptures { Binding **v; int n; } ShCaptures;
const char *sh_region_lower(Lower *C, ShNode *region, const char *what, unsigned flags, ShNode **arg_names,
                            ShType **arg_types, int nargs, const ShCaptures *caps, ShType **root_type);
/* Values of enclosing computations that the regions use (XLA's implicit
 * operands), in first-use order. */
void sh_region_captures(Lower *C, ShNode **regions, int nregions, ShCaptures *out);
/* Argument names and types of a "(%a: T, %b: T {attrs})" list. */
int sh_arg_list(Lower *C, ShNode *paren, ShNode **names, ShType **types, ShNode **attrs, int max);
/* The computation of function @sym (lowered on first use). */
const char *sh_func_computation(Lower *C, const char *sym, size_t n, const ShNode *at, ShType **root_type);

/* The function @sym of the part, or NULL. */
Func *sh_find_func(Lower *C, const char *sym, size_t n);

/* The op table (ops.c): 0 if the op was translated, -1 if unknown. */
int sh_lower_op(Lower *C, ShOp *op);
#endif
