/* block.h: copying a rectangular block of elements between two row-major
 * arrays of the same rank (tiles of a sharded value, shards of a manual
 * region). Both the run path and the devices use it. */
#ifndef HLORUN_COMMON_BLOCK_H
#define HLORUN_COMMON_BLOCK_H
#include <stddef.h>
#include <stdint.h>

/* Copy the block of count[0..rank) elements (es bytes each) that starts at
 * so[] in src (dims sd[]) to the block that starts at doff[] in dst (dims
 * dd[]). rank 0 copies one element; an empty block copies nothing. */
void hlc_copy_block(char *dst, const int64_t *dd, const int64_t *doff, const char *src,
                    const int64_t *sd, const int64_t *so, const int64_t *count, int32_t rank,
                    size_t es);
#endif
