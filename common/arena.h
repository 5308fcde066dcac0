/* arena.h: bump allocator for objects that live as long as a module
 * (tokens, AST, IR, plan). Everything is freed at once with hlc_arena_free.
 * Large requests get their own block. Not thread-safe. */
#ifndef HLORUN_COMMON_ARENA_H
#define HLORUN_COMMON_ARENA_H
#include <stddef.h>

typedef struct HlcArenaBlock HlcArenaBlock;
typedef struct HlcArena {
  HlcArenaBlock *head;   /* owned: newest block first */
  size_t used;           /* bytes used in head */
  size_t total;          /* bytes handed out, for statistics */
} HlcArena;

void hlc_arena_init(HlcArena *a);
void hlc_arena_free(HlcArena *a);
/* Zeroed, 16-byte aligned memory; NULL only if the system is out of memory. */
void *hlc_arena_alloc(HlcArena *a, size_t n);
char *hlc_arena_strndup(HlcArena *a, const char *s, size_t n);
void *hlc_arena_memdup(HlcArena *a, const void *p, size_t n);
#endif
