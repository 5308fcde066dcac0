/* block.c: rectangular block copies (block.h), a row of the innermost
 * dimension per memcpy. */
#include "common/block.h"
#include <string.h>

enum { MAX_RANK = 64 };

void hlc_copy_block(char *dst, const int64_t *dd, const int64_t *doff, const char *src,
                    const int64_t *sd, const int64_t *so, const int64_t *count, int32_t rank,
                    size_t es) {
  if (rank == 0) { memcpy(dst, src, es); return; }
  for (int32_t j = 0; j < rank; j++) if (count[j] == 0) return;
  int64_t idx[MAX_RANK] = {0};
  size_t row = (size_t)count[rank - 1] * es;
  for (;;) {
    int64_t a = 0, b = 0;
    for (int32_t j = 0; j < rank; j++) {
      a = a * dd[j] + doff[j] + (j < rank - 1 ? idx[j] : 0);
      b = b * sd[j] + so[j] + (j < rank - 1 ? idx[j] : 0);
    }
    memcpy(dst + (size_t)a * es, src + (size_t)b * es, row);
    int32_t j = rank - 2;
    while (j >= 0 && ++idx[j] == count[j]) idx[j--] = 0;
    if (j < 0) break;
  }
}
