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

int sh_lower_region_op(Lower *C, ShOp *op);   /* ops_region.c */
int sh_lower_index_op(Lower *C, ShOp *op);    /* ops_index.c */
int sh_lower_call_op(Lower *C, ShOp *op);     /* ops_call.c */
#endif
