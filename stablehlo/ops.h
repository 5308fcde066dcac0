/* ops.h: helpers shared by the op translations (ops*.c). */
#ifndef HLORUN_STABLEHLO_OPS_H
#define HLORUN_STABLEHLO_OPS_H
#include "stablehlo/lower.h"

const char *sh_ints_text(Lower *C, const int64_t *v, int n);                  /* "{1,2}" */
int sh_ints_of(Lower *C, ShOp *op, int64_t *v, int max, const char *k1, const char *k2);  /* -1 if absent */
int sh_need_ints(Lower *C, ShOp *op, int64_t *v, int max, const char *k1, const char *k2);
void sh_need_operands(Lower *C, ShOp *op, int n);
const char *sh_simple(Lower *C, ShOp *op, const char *opcode, const char *attrs);
/* HLO opcode of an elementwise op name ("stablehlo.add" -> "add"), or NULL. */
const char *sh_elementwise_opcode(const char *name, size_t n, int *arity);
/* A constant instruction of type t from dense<...>'s angle node (a splat:
 * a scalar constant and a broadcast). Sets C->last_const_rhs. */
const char *sh_emit_constant(Lower *C, ShNode *angle, ShType *t, const char *metadata);
/* Fields "name = [..]" / "name = N" of #stablehlo.xxx<...> attribute a. */
int sh_struct_ints(Lower *C, ShAttr *a, const char *field, int64_t *v, int max);
/* Window attributes "size=2x2 stride=.. pad=.. lhs_dilate=.. rhs_dilate=.." */
const char *sh_window_text(Lower *C, const int64_t *size, int rank, const int64_t *stride, const int64_t *pad_lo,
                           const int64_t *pad_hi, const int64_t *lhs_dil, const int64_t *rhs_dil, const int64_t *reversal);

/* ---- Elementwise expressions (ops_chlo.c), for the CHLO decompositions ------------- */
/* Instructions of one array type t (or its pred / integer twin): each call
 * writes one instruction and returns its name. */
typedef struct ShEx { Lower *C; const ShType *t; } ShEx;
ShType *shx_like(Lower *C, const ShType *t, HloDtype dt);            /* t's shape, element type dt */
const char *shx_k(ShEx *e, double v);                                /* v (complex: v + 0i), broadcast */
const char *shx_ki(ShEx *e, long long v);                            /* an integer constant */
const char *shx_1(ShEx *e, const char *opcode, const char *a);
const char *shx_2(ShEx *e, const char *opcode, const char *a, const char *b);
const char *shx_cmp(ShEx *e, const char *dir, const char *a, const char *b);   /* pred result */
const char *shx_sel(ShEx *e, const char *p, const char *a, const char *b);
const char *shx_to(ShEx *e, const char *opcode, const char *a, HloDtype dt);   /* convert / bitcast-convert */
/* c[0]*x^(n-1) + ... + c[n-1], in Horner form as XLA writes it. */
const char *shx_poly(ShEx *e, const char *x, const double *c, int n);
double shx_max_finite(HloDtype dt);

int sh_lower_chlo_op(Lower *C, ShOp *op);        /* ops_chlo.c: -1 if not a CHLO op it knows */
/* ops_chlo_special.c: erf, erfc, erf_inv, lgamma, digamma, bessel_i1e of x
 * (type e->t, already upcast where XLA upcasts), or NULL if name is none of them. */
const char *sh_chlo_special(ShEx *e, const char *name, const char *x);

/* ops_chlo_complex.c: asin, acos, acosh, asinh, atan, atanh of complex z
 * (type e->t, c64 or c128), or NULL if name is none of them. */
const char *sh_chlo_complex(ShEx *e, const char *name, const char *z);

int sh_lower_region_op(Lower *C, ShOp *op);   /* ops_region.c */
int sh_lower_index_op(Lower *C, ShOp *op);    /* ops_index.c */
int sh_lower_call_op(Lower *C, ShOp *op);     /* ops_call.c */
int sh_lower_parallel_op(Lower *C, ShOp *op); /* ops_parallel.c: interpreter.run_parallel */
int sh_lower_collective_op(Lower *C, ShOp *op);   /* ops_collective.c: -1 if not a collective */
#endif
