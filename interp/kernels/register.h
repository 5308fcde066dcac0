/* register.h: every kernel file's registrar, each filling the opcodes of
 * its file into the table. Only the table (registry.c) calls them, in the
 * order listed: no_kernel last, as it fills the entries left empty. */
#ifndef HLORUN_INTERP_KERNELS_REGISTER_H
#define HLORUN_INTERP_KERNELS_REGISTER_H
#include "interp/interp.h"

void hlk_register_elementwise(HliOpTable t);    /* elementwise*.c: arithmetic, select, clamp */
void hlk_register_compare(HliOpTable t);        /* elementwise_cmp.c */
void hlk_register_convert(HliOpTable t);        /* convert.c: convert, bitcast-convert, ... */
void hlk_register_movement(HliOpTable t);       /* movement.c: broadcast, reshape, copy, ... */
void hlk_register_gather_scatter(HliOpTable t); /* gather_scatter.c, dynamic slices */
void hlk_register_dot_conv(HliOpTable t);       /* dot.c, conv.c */
void hlk_register_scaled_dot(HliOpTable t);     /* scaled_dot.c */
void hlk_register_reduce(HliOpTable t);         /* reduce.c, sort.c */
void hlk_register_flow(HliOpTable t);           /* control.c: call, while, conditional, ... */
void hlk_register_collectives(HliOpTable t);    /* collectives.c */
void hlk_register_rng(HliOpTable t);            /* rng.c */
void hlk_register_fft(HliOpTable t);            /* fft.c */
void hlk_register_linalg(HliOpTable t);         /* linalg.c */
void hlk_register_batch_norm(HliOpTable t);     /* batch_norm.c */
void hlk_register_dynamic_dims(HliOpTable t);   /* dynamic_dims.c */
void hlk_register_no_kernel(HliOpTable t);      /* no_kernel.c: last, fills the gaps */
#endif
