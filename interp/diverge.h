/* diverge.h: private header of the comparison engine (compare.c for one
 * value against another, counterpart.c for pairing the instructions of two
 * modules, widen.c for a module carried in f64, held.c for the values held
 * meanwhile, diverge.c for running two modules and naming the first
 * instruction whose value differs). Only interp/ includes it. */
#ifndef HLORUN_INTERP_DIVERGE_H
#define HLORUN_INTERP_DIVERGE_H
#include "interp/api.h"
#include "interp/valio.h"

/* What one comparison found (compare.c). Errors are over the differing
 * elements; places are written "[i,j]" ("{leaf}[i,j]" in tuples). */
typedef struct HliCompareSummary {
  int64_t bad, total;
  double max_abs, max_rel;
  char max_abs_at[160], max_rel_at[160];
  char first_at[160], first_got[64], first_want[64];   /* the first difference */
} HliCompareSummary;

/* Compare got with want (shapes compatible, opts complete: struct_size is
 * sizeof(HloCompareOptions)); the report of --expect is appended to report
 * (may be NULL) when an element differs. -1 when out of memory. */
int hli_compare_values(const HliValue *got, const HliValue *want, const HloCompareOptions *opts,
                       int max_report, HliCompareSummary *sum, HlcText *report);

/* Representable values of float type t between the bits of two finite
 * values (0 for equal values, and for +0 and -0). */
uint64_t hli_ulp_distance(HloDtype t, uint64_t a, uint64_t b);

/* ---- Counterparts (counterpart.c) ---- */

enum {
  HLI_SIDE_COMPARABLE = 1,   /* a value worth comparing, run one step at a time */
  HLI_SIDE_IN_LOOP = 2       /* in a loop body or condition (runs once per iteration) */
};

/* One module's instructions, numbered in text order (computations, then
 * instructions), and their counterparts in the other module. */
typedef struct HliSide {
  const HloModule *m;        /* borrowed */
  int32_t n;                 /* instructions */
  const HloInstr **ins;      /* owned array: by id */
  int32_t *pair;             /* owned: id of the counterpart, -1 none */
  uint8_t *flags;            /* owned: HLI_SIDE_* by id */
  int32_t npaired, nunpaired;/* comparable instructions with / without a counterpart */
  int32_t *slots, *names;    /* owned: hash tables (pointer, name) -> id, -1 empty */
  uint64_t mask;             /* table size - 1 */
} HliSide;

/* Number and pair m's instructions (a) with ref's (b). widened: ref is m
 * carried in f64 (hli_widen_module), names pair with the widened shape.
 * -1: out of memory (free both sides anyway). */
int hli_sides_build(const HloModule *m, const HloModule *ref, bool widened, HliSide *a,
                    HliSide *b);
/* The id of ins, -1 if it is not one of s's module. */
int32_t hli_side_id(const HliSide *s, const HloInstr *ins);
void hli_side_free(HliSide *s);

/* ---- Reference values held while the module runs (held.c) ---- */

typedef struct HliHeldEntry {
  int32_t id;                /* reference-side instruction id; -1 empty slot, -2 deleted */
  int32_t dev;               /* the device that made it */
  int64_t occ;               /* its occurrence (loop iteration, call) */
  HliValue *v;               /* owned copy */
} HliHeldEntry;

/* Open addressing over (dev, id, occ); zero-initialized is empty. */
typedef struct HliHeld {
  HliHeldEntry *slots;       /* owned (free it) */
  size_t cap, nheld, nused;  /* slots, live entries, slots not empty */
  size_t bytes;              /* the held values' nbytes (callers add tuple leaves) */
} HliHeld;

HliHeldEntry *hli_held_find(HliHeld *t, int32_t dev, int32_t id, int64_t occ);
/* Hold v (taking its reference); -1 when out of memory. */
int hli_held_put(HliHeld *t, int32_t dev, int32_t id, int64_t occ, HliValue *v);
void hli_held_drop(HliHeld *t, HliHeldEntry *h);
void hli_held_clear(HliHeld *t);

/* ---- Carried in f64 (widen.c) ---- */

/* A copy of m whose float values are f64 and complex values c128, with
 * converts around what keeps its own type (doc/divergence.md). NULL on
 * an error (in diags) or when out of memory. */
HloModule *hli_widen_module(const HloModule *m, HlcDiags *diags);
/* Is wide the shape low becomes in the widened module (or low's own, for
 * what keeps its type)? Dims must agree, layouts aside. */
bool hli_shape_widens(const HloShape *low, const HloShape *wide);

#endif
