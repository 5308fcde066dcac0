/* targets.h: built-in custom-call targets that compute with the
 * interpreter's kernels (GPU-only targets of XLA:GPU dumps, jaxlib's LAPACK
 * targets of JAX CPU dumps). They sit above interp/ and reach the custom-call
 * registry the way a --plugin library does (typed FFI handler bundles), so
 * nothing in interp/, ffi/ or parser/ includes them. A user's --custom-call
 * or --plugin binding of the same target name replaces a built-in one.
 *
 * Each family has one registration function; hlt_register_all calls them
 * all when a context is made (targets/ctx.c). */
#ifndef HLORUN_TARGETS_TARGETS_H
#define HLORUN_TARGETS_TARGETS_H
#include "ffi/ffi.h"

/* Register every built-in target family into r. 0, or -1 when out of memory. */
int hlt_register_all(HlfRegistry *r);
#endif
