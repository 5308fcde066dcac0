/* fuzz_attrs.c: libFuzzer target for the backend_config attribute parser
 * (ffi/attrs.re, ffi/attrs.c): any text decodes into a dictionary or fails
 * with a positioned message; what decodes converts to the FFI view and
 * prints (--explain-custom-calls' rendering).
 * Not here: the HLO string escapes around it (the HLO parser's). */
#include "ffi/internal.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  if (size > 1 << 16) return 0;
  char *buf = malloc(size ? size : 1);   /* exact size: no terminator to lean on */
  if (size) memcpy(buf, data, size);
  HlcArena a;
  hlc_arena_init(&a);
  HlfAttr root;
  size_t off;
  char *err = NULL;
  if (hlf_attrs_parse(&a, buf, size, &root, &off, &err) == 0) {
    hlf_attrs_to_ffi(&a, &root);
    HlcText t = {0};
    hlf_text_attr_value(&t, &root, 2);
    free(hlc_text_take(&t));
  } else if (off > size) {
    abort();   /* an error position outside the text */
  }
  free(err);
  hlc_arena_free(&a);
  free(buf);
  return 0;
}
