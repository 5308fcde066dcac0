/* held.c: the reference values hlo_compare_runs holds while the module
 * runs (diverge.c): an open-addressing table keyed by (device, instruction
 * id, occurrence), counting the bytes it holds. */
#include "interp/diverge.h"
#include <stdlib.h>

static uint64_t key_hash(int32_t dev, int32_t id, int64_t occ) {
  uint64_t h = (uint64_t)(uint32_t)id * 0x9e3779b97f4a7c15ull ^ (uint64_t)occ * 0xc2b2ae3d27d4eb4full ^
               (uint64_t)(uint32_t)dev * 0x165667b19e3779f9ull;
  return h ^ (h >> 29);
}

HliHeldEntry *hli_held_find(HliHeld *t, int32_t dev, int32_t id, int64_t occ) {
  if (!t->cap) return NULL;
  for (size_t k = key_hash(dev, id, occ) & (t->cap - 1);; k = (k + 1) & (t->cap - 1)) {
    HliHeldEntry *h = &t->slots[k];
    if (h->id == -1) return NULL;
    if (h->id == id && h->occ == occ && h->dev == dev) return h;
  }
}

static int held_grow(HliHeld *t) {
  size_t cap = t->cap ? 2 * t->cap : 64;
  HliHeldEntry *n = malloc(cap * sizeof *n);
  if (!n) return -1;
  for (size_t k = 0; k < cap; k++) n[k].id = -1;
  for (size_t k = 0; k < t->cap; k++) {
    HliHeldEntry *h = &t->slots[k];
    if (h->id < 0) continue;
    size_t j = key_hash(h->dev, h->id, h->occ) & (cap - 1);
    while (n[j].id != -1) j = (j + 1) & (cap - 1);
    n[j] = *h;
  }
  free(t->slots);
  t->slots = n;
  t->cap = cap;
  t->nused = t->nheld;
  return 0;
}

int hli_held_put(HliHeld *t, int32_t dev, int32_t id, int64_t occ, HliValue *v) {
  if (2 * (t->nused + 1) > t->cap && held_grow(t)) return -1;
  size_t k = key_hash(dev, id, occ) & (t->cap - 1);
  while (t->slots[k].id != -1) k = (k + 1) & (t->cap - 1);
  t->slots[k] = (HliHeldEntry){id, dev, occ, v};
  t->nheld++;
  t->nused++;
  t->bytes += v->nbytes;
  return 0;
}

void hli_held_drop(HliHeld *t, HliHeldEntry *h) {
  t->bytes -= h->v->nbytes;
  hli_value_unref(NULL, h->v);
  h->v = NULL;
  h->id = -2;
  t->nheld--;
}

void hli_held_clear(HliHeld *t) {
  for (size_t k = 0; k < t->cap; k++) {
    if (t->slots[k].id >= 0) hli_value_unref(NULL, t->slots[k].v);
    t->slots[k].id = -1;
  }
  t->nheld = t->nused = 0;
  t->bytes = 0;
}
