/* error.c: the bottom of ffi/: XLA_FFI_Error values (ours to define:
 * internal.h) and malloc'd printf, which every other file of the layer
 * uses. Calls no other ffi/ file.
 * Not here: the API functions that hand errors to handlers (api.c). */
#include "ffi/internal.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

char *hlf_strdup_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0) s = NULL;
  va_end(ap);
  return s;
}

/* When even the error cannot be allocated, this static one is returned;
 * destroying it is a no-op. */
static char oom_text[] = "out of memory";
static XLA_FFI_Error oom_error = {XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, oom_text};

XLA_FFI_Error *hlf_error(XLA_FFI_Error_Code code, const char *fmt, ...) {
  XLA_FFI_Error *e = malloc(sizeof *e);
  if (!e) return &oom_error;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&e->message, fmt, ap) < 0) {
    va_end(ap);
    free(e);
    return &oom_error;
  }
  va_end(ap);
  e->code = code;
  return e;
}

void hlf_error_free(XLA_FFI_Error *e) {
  if (!e || e == &oom_error) return;
  free(e->message);
  free(e);
}
