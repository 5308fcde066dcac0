/* arena.c: see arena.h. */
#include "common/arena.h"
#include <stdlib.h>
#include <string.h>

struct HlcArenaBlock {
  HlcArenaBlock *next;
  size_t size;
  _Alignas(16) unsigned char data[];
};

enum { ARENA_BLOCK = 64 * 1024 };

void hlc_arena_init(HlcArena *a) { memset(a, 0, sizeof *a); }

void hlc_arena_free(HlcArena *a) {
  HlcArenaBlock *b = a->head;
  while (b) { HlcArenaBlock *n = b->next; free(b); b = n; }
  memset(a, 0, sizeof *a);
}

void *hlc_arena_alloc(HlcArena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (n == 0) n = 16;
  if (n > ARENA_BLOCK / 4) {
    /* Big object: own block, linked behind the head so the head stays usable. */
    HlcArenaBlock *b = calloc(1, sizeof *b + n);
    if (!b) return NULL;
    b->size = n;
    if (a->head) { b->next = a->head->next; a->head->next = b; }
    else { a->head = b; a->used = n; }
    a->total += n;
    return b->data;
  }
  if (!a->head || a->used + n > a->head->size) {
    HlcArenaBlock *b = malloc(sizeof *b + ARENA_BLOCK);
    if (!b) return NULL;
    b->size = ARENA_BLOCK;
    b->next = a->head;
    a->head = b;
    a->used = 0;
  }
  void *p = a->head->data + a->used;
  a->used += n;
  a->total += n;
  memset(p, 0, n);
  return p;
}

char *hlc_arena_strndup(HlcArena *a, const char *s, size_t n) {
  char *p = hlc_arena_alloc(a, n + 1);
  if (p) { memcpy(p, s, n); p[n] = 0; }
  return p;
}

void *hlc_arena_memdup(HlcArena *a, const void *p, size_t n) {
  void *q = hlc_arena_alloc(a, n);
  if (q && n) memcpy(q, p, n);
  return q;
}
