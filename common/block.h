/* block.h: copying and comparing rectangular blocks of elements of two
 * row-major arrays of the same rank (tiles of a sharded value, shards of a
 * manual region). Both the run path and the devices use them. */
#ifndef HLORUN_COMMON_BLOCK_H
#define HLORUN_COMMON_BLOCK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Copy the block of count[0..rank) elements (es bytes each) that starts at
 * so[] in src (dims sd[]) to the block that starts at doff[] in dst (dims
 * dd[]). rank 0 copies one element; an empty block copies nothing. */
void hlc_copy_block(char *dst, const int64_t *dd, const int64_t *doff, const char *src,
                    const int64_t *sd, const int64_t *so, const int64_t *count, int32_t rank,
                    size_t es);
/* Do the block of count[] elements at aoff[] in a (dims ad[]) and the one
 * at boff[] in b (dims bd[]) hold the same bytes? */
bool hlc_same_block(const char *a, const int64_t *ad, const int64_t *aoff, const char *b,
                    const int64_t *bd, const int64_t *boff, const int64_t *count, int32_t rank,
                    size_t es);
#endif
