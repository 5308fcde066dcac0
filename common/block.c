/* block.c: rectangular blocks of row-major arrays (block.h), walked a row
 * of the innermost dimension at a time. */
#include "common/block.h"
#include <string.h>

enum { MAX_RANK = 64 };

/* Calls row(dst_row, src_row, bytes, arg) for each row of the block, in
 * order, until it returns false; false then, else true. */
static bool walk(char *dst, const int64_t *dd, const int64_t *doff, const char *src, const int64_t *sd,
                 const int64_t *so, const int64_t *count, int32_t rank, size_t es,
                 bool (*row)(char *, const char *, size_t)) {
  if (rank == 0) return row(dst, src, es);
  for (int32_t j = 0; j < rank; j++) if (count[j] == 0) return true;
  int64_t idx[MAX_RANK] = {0};
  size_t bytes = (size_t)count[rank - 1] * es;
  for (;;) {
    int64_t a = 0, b = 0;
    for (int32_t j = 0; j < rank; j++) {
      a = a * dd[j] + doff[j] + (j < rank - 1 ? idx[j] : 0);
      b = b * sd[j] + so[j] + (j < rank - 1 ? idx[j] : 0);
    }
    if (!row(dst + (size_t)a * es, src + (size_t)b * es, bytes)) return false;
    int32_t j = rank - 2;
    while (j >= 0 && ++idx[j] == count[j]) idx[j--] = 0;
    if (j < 0) return true;
  }
}

static bool copy_row(char *d, const char *s, size_t n) {
  memcpy(d, s, n);
  return true;
}

static bool same_row(char *d, const char *s, size_t n) { return memcmp(d, s, n) == 0; }

void hlc_copy_block(char *dst, const int64_t *dd, const int64_t *doff, const char *src,
                    const int64_t *sd, const int64_t *so, const int64_t *count, int32_t rank,
                    size_t es) {
  walk(dst, dd, doff, src, sd, so, count, rank, es, copy_row);
}

bool hlc_same_block(const char *a, const int64_t *ad, const int64_t *aoff, const char *b,
                    const int64_t *bd, const int64_t *boff, const int64_t *count, int32_t rank,
                    size_t es) {
  /* same_row only reads: the cast lets one walk serve both */
  return walk((char *)a, ad, aoff, b, bd, boff, count, rank, es, same_row);
}
