/* counterpart.c: which instruction of a reference module stands for which
 * instruction of the module under test (hlorun --reference).
 *
 * Counterparts: the same name; otherwise, for modules before and after
 * optimization (other names, work moved into fusions), the same opcode,
 * the same shape (layouts aside) and the same metadata op_name,
 * source_file and source_line (and source_column where both have one);
 * several candidates pair in order of appearance (text order). Only
 * instructions whose value is worth comparing take part: those of the
 * computations a run steps through one instruction at a time (ENTRY, loop
 * bodies and conditions, branches, calls, fusion bodies; not reducers or
 * comparators applied per element), and not constants, broadcasts of
 * constants, parameters, tuples, get-tuple-elements or tokens.
 *
 * Not here: running and comparing (diverge.c). */
#include "interp/diverge.h"
#include <stdlib.h>
#include <string.h>

/* ---- Instruction -> id ------------------------------------------------- */

static uint64_t ptr_hash(const void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

int32_t hli_side_id(const HliSide *s, const HloInstr *ins) {
  if (!s->slots) return -1;
  for (uint64_t k = ptr_hash(ins) & s->mask;; k = (k + 1) & s->mask) {
    int32_t id = s->slots[k];
    if (id < 0) return -1;
    if (s->ins[id] == ins) return id;
  }
}

static uint64_t name_hash(const char *n) {
  uint64_t h = 1469598103934665603ull;
  for (; *n; n++) h = (h ^ (uint8_t)*n) * 1099511628211ull;
  return h;
}

/* The instruction called name (names are unique in a module; the first
 * in text order otherwise), -1 if none. */
static int32_t id_by_name(const HliSide *s, const char *name) {
  for (uint64_t k = name_hash(name) & s->mask;; k = (k + 1) & s->mask) {
    int32_t id = s->names[k];
    if (id < 0) return -1;
    if (strcmp(s->ins[id]->name, name) == 0) return id;
  }
}

static int index_side(HliSide *s, const HloModule *m) {
  s->m = m;
  for (int32_t c = 0; c < m->ncomps; c++) s->n += m->comps[c]->ninstrs;
  size_t cap = 16;
  while (cap < 2 * (size_t)s->n) cap *= 2;
  s->mask = cap - 1;
  s->ins = calloc((size_t)s->n + 1, sizeof *s->ins);
  s->pair = malloc(((size_t)s->n + 1) * sizeof *s->pair);
  s->flags = calloc((size_t)s->n + 1, 1);
  s->slots = malloc(cap * sizeof *s->slots);
  s->names = malloc(cap * sizeof *s->names);
  if (!s->ins || !s->pair || !s->flags || !s->slots || !s->names) return -1;
  memset(s->slots, 0xff, cap * sizeof *s->slots);
  memset(s->names, 0xff, cap * sizeof *s->names);
  int32_t id = 0;
  for (int32_t c = 0; c < m->ncomps; c++)
    for (int32_t i = 0; i < m->comps[c]->ninstrs; i++, id++) {
      const HloInstr *ins = m->comps[c]->instrs[i];
      s->ins[id] = ins;
      s->pair[id] = -1;
      uint64_t k = ptr_hash(ins) & s->mask;
      while (s->slots[k] >= 0) k = (k + 1) & s->mask;
      s->slots[k] = id;
      if (id_by_name(s, ins->name) >= 0) continue;
      for (k = name_hash(ins->name) & s->mask; s->names[k] >= 0; k = (k + 1) & s->mask) {}
      s->names[k] = id;
    }
  return 0;
}

/* ---- Which values are compared ----------------------------------------- */

static int32_t comp_index(const HloModule *m, const HloComputation *c) {
  for (int32_t i = 0; i < m->ncomps; i++)
    if (m->comps[i] == c) return i;
  return -1;
}

/* Mark the computations run one instruction at a time, from c down
 * (in_loop: c runs once per iteration of some loop). */
static void mark_stepped(const HloModule *m, int32_t c, bool in_loop, uint8_t *mark) {
  uint8_t want = (uint8_t)(1 | (in_loop ? 2 : 0));
  if ((mark[c] & want) == want) return;
  mark[c] |= want;
  const HloComputation *comp = m->comps[c];
  for (int32_t i = 0; i < comp->ninstrs; i++) {
    const HloInstr *ins = comp->instrs[i];
    for (int32_t k = 0; k < ins->ncalled; k++) {
      HloCallRole r = ins->called[k].role;
      bool stepped = r == HLO_CALL_CALLS || r == HLO_CALL_CONDITION || r == HLO_CALL_BODY ||
                     r == HLO_CALL_TRUE || r == HLO_CALL_FALSE || r == HLO_CALL_BRANCH ||
                     (r == HLO_CALL_TO_APPLY && ins->op == HLO_OP_CALL);
      int32_t callee = stepped ? comp_index(m, ins->called[k].comp) : -1;
      if (callee >= 0)
        mark_stepped(m, callee, in_loop || r == HLO_CALL_BODY || r == HLO_CALL_CONDITION, mark);
    }
  }
}

static bool has_token(const HloShape *s) {
  if (s->dtype == HLO_TOKEN) return true;
  if (s->dtype != HLO_TUPLE) return false;
  for (int32_t i = 0; i < s->ntuple; i++)
    if (has_token(&s->tuple[i])) return true;
  return false;
}

static bool worth_comparing(const HloInstr *ins) {
  switch (ins->op) {
  case HLO_OP_CONSTANT: case HLO_OP_PARAMETER: case HLO_OP_TUPLE: case HLO_OP_GET_TUPLE_ELEMENT:
    return false;
  case HLO_OP_BROADCAST: return !(ins->nops == 1 && ins->ops[0]->op == HLO_OP_CONSTANT);
  default: return !has_token(&ins->shape);
  }
}

static int mark_comparable(HliSide *s) {
  const HloModule *m = s->m;
  uint8_t *mark = calloc((size_t)m->ncomps + 1, 1);
  if (!mark) return -1;
  int32_t e = comp_index(m, m->entry);
  if (e >= 0) mark_stepped(m, e, false, mark);
  int32_t id = 0;
  for (int32_t c = 0; c < m->ncomps; c++)
    for (int32_t i = 0; i < m->comps[c]->ninstrs; i++, id++) {
      if (!(mark[c] & 1) || !worth_comparing(s->ins[id])) continue;
      s->flags[id] |= HLI_SIDE_COMPARABLE;
      if (mark[c] & 2) s->flags[id] |= HLI_SIDE_IN_LOOP;
    }
  free(mark);
  return 0;
}

/* ---- Metadata ------------------------------------------------------------ */

typedef struct Meta {
  const char *op_name, *file;  /* borrowed from the module; NULL: absent */
  size_t op_name_len, file_len;
  long line, column;           /* 0: absent */
} Meta;

static void read_meta(const HloInstr *ins, Meta *md) {
  memset(md, 0, sizeof *md);
  for (int32_t a = 0; a < ins->nattrs; a++) {
    const HloAttr *at = &ins->attrs[a];
    if (strcmp(at->name, "metadata") != 0 || at->nvalues != 1 || at->values[0]->kind != HLO_VAL_BRACE)
      continue;
    const HloVal *b = at->values[0];
    for (int32_t i = 0; i < b->nitems; i++) {
      const HloVal *it = b->items[i];
      if (it->kind != HLO_VAL_ATTR || it->nitems < 1) continue;
      const HloVal *v = it->items[0];
      if (strcmp(it->text, "op_name") == 0 && v->kind == HLO_VAL_STRING) {
        md->op_name = v->text;
        md->op_name_len = v->len;
      } else if (strcmp(it->text, "source_file") == 0 && v->kind == HLO_VAL_STRING) {
        md->file = v->text;
        md->file_len = v->len;
      } else if (strcmp(it->text, "source_line") == 0 && v->kind == HLO_VAL_TOKEN) {
        md->line = strtol(v->text, NULL, 10);
      } else if (strcmp(it->text, "source_column") == 0 && v->kind == HLO_VAL_TOKEN) {
        md->column = strtol(v->text, NULL, 10);
      }
    }
  }
}

/* The key of metadata pairing: opcode, shape, op_name, file, line. NULL
 * when the instruction has no op_name (nothing to pair by). */
static char *meta_key(const HloInstr *ins, long *column) {
  Meta md;
  read_meta(ins, &md);
  *column = md.column;
  if (!md.op_name || md.op_name_len == 0) return NULL;
  HlcText b = {0};
  hlc_text_printf(&b, "%s|", hlp_opcode_name(ins->op));
  hlp_print_shape(&b, &ins->shape, false);
  hlc_text_puts(&b, "|");
  hlc_text_put(&b, md.op_name, md.op_name_len);
  hlc_text_puts(&b, "|");
  if (md.file) hlc_text_put(&b, md.file, md.file_len);
  hlc_text_printf(&b, "|%ld", md.line);
  hlc_text_put(&b, "", 1);
  if (b.oom) { hlc_text_free(&b); return NULL; }
  return b.p;
}

typedef struct Keyed { char *key; long column; int32_t id; } Keyed;

static int keyed_cmp(const void *a, const void *b) {
  const Keyed *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : (x->id > y->id) - (x->id < y->id);
}

/* ---- Pairing ------------------------------------------------------------- */

static int pair_by_metadata(HliSide *a, HliSide *b) {
  Keyed *keys = malloc(((size_t)b->n + 1) * sizeof *keys);
  if (!keys) return -1;
  int32_t nk = 0;
  for (int32_t id = 0; id < b->n; id++) {
    if (!(b->flags[id] & HLI_SIDE_COMPARABLE) || b->pair[id] >= 0) continue;
    long col;
    char *k = meta_key(b->ins[id], &col);
    if (k) keys[nk++] = (Keyed){k, col, id};
  }
  qsort(keys, (size_t)nk, sizeof *keys, keyed_cmp);
  for (int32_t id = 0; id < a->n; id++) {
    if (!(a->flags[id] & HLI_SIDE_COMPARABLE) || a->pair[id] >= 0) continue;
    long col;
    char *k = meta_key(a->ins[id], &col);
    if (!k) continue;
    /* The first candidate with this key, then the first one unused. */
    int32_t lo = 0, hi = nk;
    while (lo < hi) {
      int32_t mid = lo + (hi - lo) / 2;
      if (strcmp(keys[mid].key, k) < 0) lo = mid + 1;
      else hi = mid;
    }
    for (int32_t j = lo; j < nk && strcmp(keys[j].key, k) == 0; j++) {
      int32_t rid = keys[j].id;
      if (b->pair[rid] >= 0 || (col && keys[j].column && col != keys[j].column)) continue;
      a->pair[id] = rid;
      b->pair[rid] = id;
      break;
    }
    free(k);
  }
  for (int32_t j = 0; j < nk; j++) free(keys[j].key);
  free(keys);
  return 0;
}

static void pair_by_name(HliSide *a, HliSide *b, bool widened) {
  for (int32_t id = 0; id < a->n; id++) {
    if (!(a->flags[id] & HLI_SIDE_COMPARABLE)) continue;
    const HloInstr *ins = a->ins[id];
    int32_t rid = id_by_name(b, ins->name);
    if (rid < 0 || !(b->flags[rid] & HLI_SIDE_COMPARABLE) || b->pair[rid] >= 0) continue;
    const HloShape *rs = &b->ins[rid]->shape;
    if (!(widened ? hli_shape_widens(&ins->shape, rs) : hlp_shape_compatible(&ins->shape, rs)))
      continue;
    a->pair[id] = rid;
    b->pair[rid] = id;
  }
}

int hli_sides_build(const HloModule *m, const HloModule *ref, bool widened, HliSide *a,
                    HliSide *b) {
  memset(a, 0, sizeof *a);
  memset(b, 0, sizeof *b);
  if (index_side(a, m) || index_side(b, ref) || mark_comparable(a) || mark_comparable(b))
    return -1;
  pair_by_name(a, b, widened);
  if (pair_by_metadata(a, b)) return -1;
  for (int32_t id = 0; id < a->n; id++) {
    if (!(a->flags[id] & HLI_SIDE_COMPARABLE)) continue;
    if (a->pair[id] >= 0) a->npaired++;
    else a->nunpaired++;
  }
  return 0;
}

void hli_side_free(HliSide *s) {
  free(s->ins);
  free(s->pair);
  free(s->flags);
  free(s->slots);
  free(s->names);
  memset(s, 0, sizeof *s);
}
