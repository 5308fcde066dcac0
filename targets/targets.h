/* targets.h: built-in custom-call targets that compute with the
 * interpreter's kernels (GPU-only targets of XLA:GPU dumps, jaxlib's LAPACK
 * targets of JAX CPU dumps). They sit above interp/ and reach the custom-call
 * registry the way a --plugin library does (typed FFI handler bundles), so
 * nothing in interp/, ffi/ or parser/ includes them. A user's --custom-call
 * or --plugin binding of the same target name replaces a built-in one.
 *
 * Each family has one registration function, declared here (a family's own
 * header is private to its folder); hlt_register_all calls them all when a
 * context is made (targets/ctx.c). */
#ifndef HLORUN_TARGETS_TARGETS_H
#define HLORUN_TARGETS_TARGETS_H
#include "ffi/ffi.h"
#include "hlorun.h"

/* Register every built-in target family into r. 0, or -1 when out of memory. */
int hlt_register_all(HlfRegistry *r);

/* The families (each 0, or -1 when out of memory): */
int hlt_register_xla(HlfRegistry *r);   /* XLA's own: annotations, TopK (xla/) */
int hlt_cpu_register(HlfRegistry *r);   /* jaxlib's LAPACK targets (cpu/) */
int hlt_register_gpu(HlfRegistry *r);   /* XLA:GPU's custom calls (gpu/) */
int hlt_register_callbacks(HlfRegistry *r);   /* JAX's host callbacks (callback.c) */
/* Where those callbacks write (hlo_ctx_set_callback_output). 0, or -1. */
int hlt_set_callback_output(HlfRegistry *r, HloTextSink *write, void *user);
#endif
