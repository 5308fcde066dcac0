/* write.c: the IR written as an XLA HloModuleProto (binary wire format).
 *
 * The inverse of to_text.c, following XLA's ToProto conventions as
 * ../shared/research/protos.md records them (xla/hlo/ir/hlo_module.cc
 * HloModule::ToProto, hlo_computation.cc, hlo_instruction.cc and
 * hlo_instructions.cc ToProto, literal.cc Piece::WriteToProto):
 *   - ids are packed: instruction id = (computation id << 32) | local id;
 *     computations are numbered 0.. in text order (callees first, which is
 *     MakeComputationPostOrder's order for a parsed module) and their
 *     instructions 0.. in text order; operands, roots, control
 *     predecessors, called computations and schedules use those ids;
 *   - while's called_computation_ids are [body, condition], select-and-
 *     scatter's [select, scatter], conditional's [true, false] or the branch
 *     list; iota's dimension is dimensions[0];
 *   - every instruction carries metadata {} and frontend_attributes {} (empty
 *     when the text has none); compare always carries comparison_type;
 *     shapes always carry a layout (minor_to_major, tail padding alignment 1)
 *     and one is_dynamic_dimension per dimension; the module carries
 *     host_program_shape (parameters p0, p1, ...), which XLA's
 *     CreateFromProto requires;
 *   - literals are written in the physical order of their layout, 16-bit and
 *     8-bit-float types as little-endian bytes, sub-byte integers one per
 *     byte, complex numbers interleaved.
 * An attribute this writer cannot express in the proto fields it knows is
 * an error naming the instruction and the attribute: nothing is dropped
 * silently.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proto/lower.h"
#include "ir/print.h"
#include "ir/sharding.h"

typedef struct W {
  const HloModule *m;
  HlcArena a;
  char *err;
  size_t errn;
  char what[320];
} W;

__attribute__((format(printf, 2, 3))) static int fail(W *w, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (w->what[0]) snprintf(w->err, w->errn, "%s: %s", w->what, msg);
  else snprintf(w->err, w->errn, "%s", msg);
  return -1;
}

static void *alloc(W *w, size_t n) {
  void *p = hlc_arena_alloc(&w->a, n ? n : 1);
  if (p) memset(p, 0, n ? n : 1);
  return p;
}
#define NEW(w, T, INIT) ({ T *p_ = alloc((w), sizeof(T)); if (p_) { T i_ = INIT; *p_ = i_; } p_; })
#define OOM(w) fail((w), "out of memory")

static char *dupstr(W *w, const char *s, size_t n) { return hlc_arena_strndup(&w->a, s, n); }

static int64_t *i64s(W *w, const int64_t *v, size_t n) {
  int64_t *p = alloc(w, n * sizeof *p);
  if (p && n) memcpy(p, v, n * sizeof *p);
  return p;
}

/* ---- Shapes and literals ----------------------------------------------------- */

static int layout_tail(W *w, const char *t, Xla__LayoutProto *l) {
  while (*t) {
    char k = *t;
    if ((k != 'T' && k != 'E' && k != 'S') || t[1] != '(')
      return fail(w, "layout \":%s\": only tiles T(...), E(...) and S(...) can be written to xla.LayoutProto", t);
    t += 2;
    int64_t v[16];
    size_t n = 0;
    while (*t && *t != ')') {
      char *end;
      long long x = strtoll(t, &end, 10);
      if (end == t || n == 16) return fail(w, "layout tail: bad number in \"%s\"", t);
      v[n++] = x;
      t = end;
      if (*t == ',') t++;
    }
    if (*t != ')') return fail(w, "layout tail: unclosed %c(", k);
    t++;
    if (k == 'T') {
      Xla__TileProto *tp = NEW(w, Xla__TileProto, XLA__TILE_PROTO__INIT);
      Xla__TileProto **nt = alloc(w, (l->n_tiles + 1) * sizeof *nt);
      if (!tp || !nt) return OOM(w);
      if (l->n_tiles) memcpy(nt, l->tiles, l->n_tiles * sizeof *nt);
      tp->n_dimensions = n;
      tp->dimensions = i64s(w, v, n);
      nt[l->n_tiles++] = tp;
      l->tiles = nt;
    } else if (n != 1) {
      return fail(w, "layout tail: %c(...) takes one number", k);
    } else if (k == 'E') {
      l->element_size_in_bits = v[0];
    } else {
      l->memory_space = v[0];
    }
  }
  return 0;
}

static int shape_proto(W *w, const HloShape *s, Xla__ShapeProto **out) {
  Xla__ShapeProto *sp = NEW(w, Xla__ShapeProto, XLA__SHAPE_PROTO__INIT);
  if (!sp) return OOM(w);
  *out = sp;
  if (s->is_buffer) return fail(w, "buffer shape b(...) cannot be written to xla.ShapeProto by this version");
  if (s->dtype == HLO_TUPLE) {
    sp->element_type = XLA__PRIMITIVE_TYPE__TUPLE;
    sp->n_tuple_shapes = (size_t)s->ntuple;
    sp->tuple_shapes = alloc(w, (size_t)s->ntuple * sizeof *sp->tuple_shapes);
    if (!sp->tuple_shapes) return OOM(w);
    for (int32_t i = 0; i < s->ntuple; i++)
      if (shape_proto(w, &s->tuple[i], &sp->tuple_shapes[i]) != 0) return -1;
    return 0;
  }
  if (s->dtype == HLO_TOKEN) { sp->element_type = XLA__PRIMITIVE_TYPE__TOKEN; return 0; }
  sp->element_type = (Xla__PrimitiveType)hlc_dtype_xla_code(s->dtype);
  size_t r = (size_t)s->rank;
  sp->n_dimensions = r;
  sp->dimensions = i64s(w, s->dims, r);
  sp->n_is_dynamic_dimension = r;
  sp->is_dynamic_dimension = alloc(w, r * sizeof *sp->is_dynamic_dimension);
  if (!sp->dimensions || !sp->is_dynamic_dimension) return OOM(w);
  for (size_t i = 0; i < r; i++) {
    int d = s->dynamic ? s->dynamic[i] : HLO_DIM_STATIC;
    if (d == HLO_DIM_UNBOUNDED) return fail(w, "an unbounded dimension (?) cannot be written by this version");
    sp->is_dynamic_dimension[i] = d == HLO_DIM_BOUNDED;
  }
  Xla__LayoutProto *l = NEW(w, Xla__LayoutProto, XLA__LAYOUT_PROTO__INIT);
  if (!l) return OOM(w);
  sp->layout = l;
  l->n_minor_to_major = r;
  l->minor_to_major = alloc(w, r * sizeof(int64_t));
  if (!l->minor_to_major) return OOM(w);
  for (size_t i = 0; i < r; i++)
    l->minor_to_major[i] = s->minor_to_major ? s->minor_to_major[i] : (int64_t)(r - 1 - i);
  l->tail_padding_alignment_in_elements = 1;
  if (s->layout_tail && layout_tail(w, s->layout_tail, l) != 0) return -1;
  return 0;
}

/* Element k of a dense row-major array, in the physical order of the layout. */
static int literal_proto(W *w, const HloLiteral *lit, Xla__LiteralProto **out) {
  Xla__LiteralProto *lp = NEW(w, Xla__LiteralProto, XLA__LITERAL_PROTO__INIT);
  if (!lp) return OOM(w);
  *out = lp;
  const HloShape *s = lit->shape;
  if (shape_proto(w, s, &lp->shape) != 0) return -1;
  if (s->dtype == HLO_TUPLE) {
    lp->n_tuple_literals = (size_t)lit->ntuple;
    lp->tuple_literals = alloc(w, (size_t)lit->ntuple * sizeof *lp->tuple_literals);
    if (!lp->tuple_literals) return OOM(w);
    for (int32_t i = 0; i < lit->ntuple; i++)
      if (literal_proto(w, &lit->tuple[i], &lp->tuple_literals[i]) != 0) return -1;
    return 0;
  }
  if (!hlc_dtype_is_array(s->dtype)) return 0;
  if (lit->elided || !lit->data) return fail(w, "an elided literal {...} has no values to write");
  int64_t n = hlp_shape_elements(s);
  size_t es = hlc_dtype_size(s->dtype);
  int32_t r = s->rank;
  /* Physical order: minor_to_major[0] varies fastest. */
  unsigned char *phys = alloc(w, (size_t)n * es);
  if (!phys) return OOM(w);
  bool identity = true;
  if (s->minor_to_major)
    for (int32_t i = 0; i < r; i++) identity &= s->minor_to_major[i] == r - 1 - i;
  if (identity) {
    if (n) memcpy(phys, lit->data, (size_t)n * es);
  } else {
    int64_t idx[256] = {0}, stride[256];
    int64_t st = 1;
    for (int32_t i = r - 1; i >= 0; i--) { stride[i] = st; st *= s->dims[i]; }
    int64_t pos = 0;
    for (int64_t k = 0; k < n; k++) {
      memcpy(phys + (size_t)k * es, (const unsigned char *)lit->data + (size_t)pos * es, es);
      for (int32_t j = 0; j < r; j++) {
        int64_t d = s->minor_to_major[j];
        if (++idx[d] < s->dims[d]) { pos += stride[d]; break; }
        pos -= stride[d] * (idx[d] - 1);
        idx[d] = 0;
      }
    }
  }
  size_t nb = (size_t)n * es;
#define BYTES(f) do { lp->f.data = phys; lp->f.len = nb; return 0; } while (0)
#define REP(f, k) do { lp->n_##f = (size_t)n * (k); lp->f = (void *)phys; return 0; } while (0)
  switch (s->dtype) {
  case HLO_PRED: {
    protobuf_c_boolean *b = alloc(w, (size_t)n * sizeof *b);
    if (!b) return OOM(w);
    for (int64_t k = 0; k < n; k++) b[k] = phys[k] != 0;
    lp->n_preds = (size_t)n;
    lp->preds = b;
    return 0;
  }
  case HLO_S1: BYTES(s1s); case HLO_S2: BYTES(s2s); case HLO_S4: BYTES(s4s); case HLO_S8: BYTES(s8s);
  case HLO_U1: BYTES(u1s); case HLO_U2: BYTES(u2s); case HLO_U4: BYTES(u4s); case HLO_U8: BYTES(u8s);
  case HLO_S16: BYTES(s16s); case HLO_U16: BYTES(u16s); case HLO_F16: BYTES(f16s); case HLO_BF16: BYTES(bf16s);
  case HLO_S32: REP(s32s, 1); case HLO_S64: REP(s64s, 1); case HLO_U32: REP(u32s, 1); case HLO_U64: REP(u64s, 1);
  case HLO_F32: REP(f32s, 1); case HLO_F64: REP(f64s, 1); case HLO_C64: REP(c64s, 2); case HLO_C128: REP(c128s, 2);
  case HLO_F8E5M2: BYTES(f8e5m2s); case HLO_F8E4M3: BYTES(f8e4m3s); case HLO_F8E4M3FN: BYTES(f8e4m3fns);
  case HLO_F8E4M3B11FNUZ: BYTES(f8e4m3b11fnuzs); case HLO_F8E3M4: BYTES(f8e3m4s);
  case HLO_F8E5M2FNUZ: BYTES(f8e5m2fnuzs); case HLO_F8E4M3FNUZ: BYTES(f8e4m3fnuzs);
  case HLO_F8E8M0FNU: BYTES(f8e8m0fnus); case HLO_F4E2M1FN: BYTES(f4e2m1fns);
  default: return fail(w, "a %s literal cannot be written to xla.LiteralProto", hlc_dtype_name(s->dtype));
  }
#undef BYTES
#undef REP
}

int hpb_write_literal(const HloLiteral *lit, uint8_t **out, size_t *len, char *err, size_t errn) {
  W w = {.err = err, .errn = errn};
  hlc_arena_init(&w.a);
  Xla__LiteralProto *lp = NULL;
  int rc = -1;
  *out = NULL;
  if (literal_proto(&w, lit, &lp) == 0) {
    size_t n = xla__literal_proto__get_packed_size(lp);
    if ((*out = malloc(n ? n : 1))) {
      *len = xla__literal_proto__pack(lp, *out);
      rc = 0;
    } else {
      OOM(&w);
    }
  }
  hlc_arena_free(&w.a);
  return rc;
}

/* ---- Attribute values as text ------------------------------------------------ */

/* The attribute's value printed canonically (NUL-terminated, in the arena). */
static const char *attr_text(W *w, const HloAttr *a) {
  HlcText b = {0};
  hlp_print_vals(&b, a->values, a->nvalues, true);
  const char *s = b.oom ? NULL : dupstr(w, b.p ? b.p : "", b.n);
  free(b.p);
  return s;
}

typedef struct Scan { const char *p; } Scan;
static void sk(Scan *s) { while (*s->p == ' ') s->p++; }
static bool lit(Scan *s, const char *t) {
  sk(s);
  size_t n = strlen(t);
  if (strncmp(s->p, t, n) != 0) return false;
  s->p += n;
  return true;
}
static bool num(Scan *s, int64_t *v) {
  sk(s);
  char *end;
  long long x = strtoll(s->p, &end, 10);
  if (end == s->p) return false;
  *v = x;
  s->p = end;
  return true;
}
/* [a,b,...] or {a,b,...} of integers. */
static int nums(W *w, Scan *s, char open, char close, int64_t **v, size_t *n) {
  char o[2] = {open, 0}, c[2] = {close, 0};
  int64_t tmp[4096];
  size_t k = 0;
  if (!lit(s, o)) return -1;
  if (!lit(s, c)) {
    do {
      if (k == 4096 || !num(s, &tmp[k++])) return -1;
    } while (lit(s, ","));
    if (!lit(s, c)) return -1;
  }
  *n = k;
  *v = i64s(w, tmp, k);
  return *v ? 0 : -1;
}

static const HloAttr *find_attr(const HloInstr *ins, const char *name) {
  for (int32_t i = 0; i < ins->nattrs; i++)
    if (strcmp(ins->attrs[i].name, name) == 0) return &ins->attrs[i];
  return NULL;
}

/* ---- Sharding ------------------------------------------------------------------ */

static Xla__OpSharding__Type sharding_type(HloShardingKind k) {
  switch (k) {
  case HLO_SHARDING_MANUAL: return XLA__OP_SHARDING__TYPE__MANUAL;
  case HLO_SHARDING_UNKNOWN: return XLA__OP_SHARDING__TYPE__UNKNOWN;
  case HLO_SHARDING_UNREDUCED: return XLA__OP_SHARDING__TYPE__UNREDUCED;
  default: return XLA__OP_SHARDING__TYPE__REPLICATED;
  }
}

/* The typed sharding as xla.OpSharding (to_text.c reads it back): 0, or -1
 * for what OpSharding is not written with here (metadata, shard groups,
 * named meshes). */
static int sharding_msg(W *w, const HloSharding *h, Xla__OpSharding *o) {
  if (h->metadata || h->group != HLO_SHARD_GROUP_NONE || h->kind == HLO_SHARDING_MESH) return -1;
  switch (h->kind) {
  case HLO_SHARDING_TUPLE:
    o->type = XLA__OP_SHARDING__TYPE__TUPLE;
    o->n_tuple_shardings = (size_t)h->ntuple;
    o->tuple_shardings = alloc(w, (size_t)h->ntuple * sizeof *o->tuple_shardings + 1);
    if (!o->tuple_shardings) return -1;
    for (int32_t i = 0; i < h->ntuple; i++) {
      o->tuple_shardings[i] = NEW(w, Xla__OpSharding, XLA__OP_SHARDING__INIT);
      if (!o->tuple_shardings[i] || sharding_msg(w, &h->tuple[i], o->tuple_shardings[i]) != 0) return -1;
    }
    return 0;
  case HLO_SHARDING_MAXIMAL:
    o->type = XLA__OP_SHARDING__TYPE__MAXIMAL;
    o->n_tile_assignment_devices = 1;
    o->tile_assignment_devices = i64s(w, &h->device, 1);
    return o->tile_assignment_devices ? 0 : -1;
  case HLO_SHARDING_TILED: {
    o->type = XLA__OP_SHARDING__TYPE__OTHER;
    o->n_tile_assignment_dimensions = (size_t)h->ndims;
    o->tile_assignment_dimensions = i64s(w, h->dims, (size_t)h->ndims);
    if (!o->tile_assignment_dimensions) return -1;
    if (h->niota) {
      o->n_iota_reshape_dims = o->n_iota_transpose_perm = (size_t)h->niota;
      o->iota_reshape_dims = i64s(w, h->iota_dims, (size_t)h->niota);
      o->iota_transpose_perm = alloc(w, (size_t)h->niota * sizeof(int32_t));
      if (!o->iota_reshape_dims || !o->iota_transpose_perm) return -1;
      memcpy(o->iota_transpose_perm, h->iota_perm, (size_t)h->niota * sizeof(int32_t));
    } else {
      size_t total = 1;
      for (int32_t i = 0; i < h->ndims; i++) total *= (size_t)h->dims[i];
      o->n_tile_assignment_devices = total;
      o->tile_assignment_devices = i64s(w, h->devices, total);
      if (!o->tile_assignment_devices) return -1;
    }
    if (h->last_tile_dim_replicate) {
      o->replicate_on_last_tile_dim = true;
    } else if (h->nsub) {
      o->n_last_tile_dims = (size_t)h->nsub;
      o->last_tile_dims = alloc(w, (size_t)h->nsub * sizeof *o->last_tile_dims);
      if (!o->last_tile_dims) return -1;
      for (int32_t i = 0; i < h->nsub; i++) o->last_tile_dims[i] = sharding_type(h->subgroup[i]);
    }
    return 0;
  }
  default:
    o->type = sharding_type(h->kind);
    return 0;
  }
}

static int sharding_proto(W *w, const HloInstr *ins, const HloAttr *a, Xla__OpSharding **out) {
  Xla__OpSharding *o = NEW(w, Xla__OpSharding, XLA__OP_SHARDING__INIT);
  if (!o) return OOM(w);
  if (!ins->sharding || sharding_msg(w, ins->sharding, o) != 0) {
    const char *t = attr_text(w, a);
    return fail(w, "sharding=%s cannot be written to xla.OpSharding by this version", t ? t : "{...}");
  }
  *out = o;
  return 0;
}

/* ---- Metadata, frontend attributes ------------------------------------------- */

static const HloVal *brace_of(const HloAttr *a) {
  return a->nvalues == 1 && a->values[0]->kind == HLO_VAL_BRACE ? a->values[0] : NULL;
}

static int metadata_proto(W *w, const HloAttr *a, Xla__OpMetadata *md) {
  const HloVal *b = brace_of(a);
  if (!b) return fail(w, "metadata: expected {...}");
  for (int32_t i = 0; i < b->nitems; i++) {
    const HloVal *it = b->items[i];
    if (it->kind != HLO_VAL_ATTR || it->nitems < 1) return fail(w, "metadata: expected key=value");
    const HloVal *v = it->items[0];
    char key[64];
    snprintf(key, sizeof key, "%.*s", (int)it->len, it->text);
    char *str = v->kind == HLO_VAL_STRING || v->kind == HLO_VAL_TOKEN ? dupstr(w, v->text, v->len) : NULL;
    if (!str) return fail(w, "metadata: %s: unexpected value", key);
#define S(f) if (strcmp(key, #f) == 0) { md->f = str; continue; }
#define I(f) if (strcmp(key, #f) == 0) { md->f = (int32_t)strtol(str, NULL, 10); continue; }
    S(op_type) S(op_name) S(source_file) I(source_line) I(source_end_line) I(source_column)
    I(source_end_column) S(deduplicated_name) I(stack_frame_id) S(scheduling_name)
#undef S
#undef I
    return fail(w, "metadata: %s cannot be written to xla.OpMetadata by this version", key);
  }
  return 0;
}

static int frontend_proto(W *w, const HloAttr *a, Xla__FrontendAttributes *fa) {
  const HloVal *b = brace_of(a);
  if (!b) return fail(w, "frontend_attributes: expected {...}");
  fa->n_map = (size_t)b->nitems;
  fa->map = alloc(w, fa->n_map * sizeof *fa->map);
  if (!fa->map) return OOM(w);
  for (int32_t i = 0; i < b->nitems; i++) {
    const HloVal *it = b->items[i];
    if (it->kind != HLO_VAL_ATTR || it->nitems < 1 ||
        (it->items[0]->kind != HLO_VAL_STRING && it->items[0]->kind != HLO_VAL_RAW))
      return fail(w, "frontend_attributes: expected key=\"value\"");
    Xla__FrontendAttributes__MapEntry *e =
        NEW(w, Xla__FrontendAttributes__MapEntry, XLA__FRONTEND_ATTRIBUTES__MAP_ENTRY__INIT);
    if (!e) return OOM(w);
    e->key = dupstr(w, it->text, it->len);
    e->value = dupstr(w, it->items[0]->text, it->items[0]->len);
    if (!e->key || !e->value) return OOM(w);
    if (memchr(e->value, 0, it->items[0]->len))
      return fail(w, "frontend_attributes: %s: a NUL byte cannot be written to a proto string", e->key);
    fa->map[i] = e;
  }
  return 0;
}

/* ---- Instructions ------------------------------------------------------------------ */

typedef struct Ids { const HloModule *m; } Ids;

static int comp_index(const HloModule *m, const HloComputation *c) {
  for (int32_t i = 0; i < m->ncomps; i++) if (m->comps[i] == c) return i;
  return -1;
}
static int64_t instr_id(const HloModule *m, const HloInstr *ins) {
  return ((int64_t)comp_index(m, ins->parent) << 32) | (int64_t)ins->index;
}

static HloComputation *called_role(const HloInstr *ins, HloCallRole r) {
  for (int32_t i = 0; i < ins->ncalled; i++) if (ins->called[i].role == r) return ins->called[i].comp;
  return NULL;
}

static int called_ids(W *w, const HloInstr *ins, Xla__HloInstructionProto *p) {
  HloComputation *order[1024];
  size_t n = 0;
  if (ins->op == HLO_OP_WHILE) {
    order[n++] = called_role(ins, HLO_CALL_BODY);
    order[n++] = called_role(ins, HLO_CALL_CONDITION);
  } else if (ins->op == HLO_OP_SELECT_AND_SCATTER) {
    order[n++] = called_role(ins, HLO_CALL_SELECT);
    order[n++] = called_role(ins, HLO_CALL_SCATTER);
  } else if (ins->op == HLO_OP_CONDITIONAL && called_role(ins, HLO_CALL_TRUE)) {
    order[n++] = called_role(ins, HLO_CALL_TRUE);
    order[n++] = called_role(ins, HLO_CALL_FALSE);
  } else {
    for (int32_t i = 0; i < ins->ncalled && n < 1024; i++) order[n++] = ins->called[i].comp;
  }
  p->n_called_computation_ids = n;
  p->called_computation_ids = alloc(w, n * sizeof(int64_t));
  if (!p->called_computation_ids) return OOM(w);
  for (size_t i = 0; i < n; i++) {
    int k = order[i] ? comp_index(w->m, order[i]) : -1;
    if (k < 0) return fail(w, "a called computation is missing");
    p->called_computation_ids[i] = k;
  }
  return 0;
}

static int64_t *copy_i64s(W *w, HloI64s v, size_t *n) {
  *n = (size_t)v.n;
  return i64s(w, v.v, (size_t)v.n);
}

static const char *cmp_dir_name(HloCmpDir d) {
  static const char *const n[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  return n[d];
}

static const char *cmp_type_name(HloCmpType t, HloDtype operand) {
  switch (t) {
  case HLO_CMPT_FLOAT: return "FLOAT";
  case HLO_CMPT_TOTALORDER: return "TOTALORDER";
  case HLO_CMPT_SIGNED: return "SIGNED";
  case HLO_CMPT_UNSIGNED: return "UNSIGNED";
  default: break;
  }
  /* XLA's default for the operand type (Comparison::DefaultComparisonType). */
  HloKind k = hlc_dtype_kind(operand);
  return k == HLO_KIND_FLOAT || k == HLO_KIND_COMPLEX ? "FLOAT" : k == HLO_KIND_SINT ? "SIGNED" : "UNSIGNED";
}

static int precision_proto(W *w, const HloInstr *ins, Xla__HloInstructionProto *p) {
  static const char *const alg[] = {"unset", "alg_dot_any_f8_any_f8_f32",
    "alg_dot_any_f8_any_f8_f32_fast_accum", "alg_dot_f16_f16_f16", "alg_dot_f16_f16_f32",
    "alg_dot_bf16_bf16_bf16", "alg_dot_bf16_bf16_f32", "alg_dot_bf16_bf16_f32_x3",
    "alg_dot_bf16_bf16_f32_x6", "alg_dot_tf32_tf32_f32", "alg_dot_tf32_tf32_f32_x3",
    "alg_dot_f32_f32_f32", "alg_dot_f64_f64_f64", "alg_dot_bf16_bf16_f32_x9"};
  Xla__PrecisionConfig *pc = NEW(w, Xla__PrecisionConfig, XLA__PRECISION_CONFIG__INIT);
  if (!pc) return OOM(w);
  p->precision_config = pc;
  bool takes = ins->op == HLO_OP_DOT || ins->op == HLO_OP_CONVOLUTION || ins->op == HLO_OP_RAGGED_DOT;
  if (takes) {   /* one DEFAULT per operand, as XLA writes */
    pc->n_operand_precision = (size_t)ins->nops;
    pc->operand_precision = alloc(w, (size_t)ins->nops * sizeof *pc->operand_precision);
    if (!pc->operand_precision) return OOM(w);
  }
  const HloAttr *op = find_attr(ins, "operand_precision");
  if (op) {
    const char *t = attr_text(w, op);
    if (!t) return OOM(w);
    Scan s = {t};
    Xla__PrecisionConfig__Precision v[64];
    size_t n = 0;
    if (!lit(&s, "{")) return fail(w, "operand_precision=%s: expected {...}", t);
    if (!lit(&s, "}")) {
      do {
        if (n == 64) return fail(w, "operand_precision: too many");
        if (lit(&s, "default") || lit(&s, "DEFAULT")) v[n++] = XLA__PRECISION_CONFIG__PRECISION__DEFAULT;
        else if (lit(&s, "highest") || lit(&s, "HIGHEST")) v[n++] = XLA__PRECISION_CONFIG__PRECISION__HIGHEST;
        else if (lit(&s, "high") || lit(&s, "HIGH")) v[n++] = XLA__PRECISION_CONFIG__PRECISION__HIGH;
        else return fail(w, "operand_precision=%s: only default, high and highest can be written", t);
      } while (lit(&s, ","));
      if (!lit(&s, "}")) return fail(w, "operand_precision=%s: expected }", t);
    }
    pc->n_operand_precision = n;
    pc->operand_precision = alloc(w, n * sizeof *v);
    if (!pc->operand_precision) return OOM(w);
    memcpy(pc->operand_precision, v, n * sizeof *v);
  }
  const HloAttr *al = find_attr(ins, "algorithm");
  if (al && ins->op != HLO_OP_RNG_BIT_GENERATOR) {
    const char *t = attr_text(w, al);
    if (!t) return OOM(w);
    int k = -1;
    for (int i = 0; i < (int)(sizeof alg / sizeof alg[0]); i++) if (strcmp(t, alg[i]) == 0) k = i;
    if (k < 0) return fail(w, "algorithm=%s cannot be written to xla.PrecisionConfig by this version", t);
    pc->algorithm = k;
  }
  return 0;
}

static int replica_groups_proto(W *w, const HloInstr *ins, const HloAttr *a, Xla__HloInstructionProto *p) {
  const char *t = attr_text(w, a);
  if (!t) return OOM(w);
  Scan s = {t};
  sk(&s);
  if (*s.p == '[') {
    int64_t *g;
    size_t ng;
    Xla__IotaReplicaGroupListProto *io = NEW(w, Xla__IotaReplicaGroupListProto, XLA__IOTA_REPLICA_GROUP_LIST_PROTO__INIT);
    Xla__CollectiveDeviceListProto *l = NEW(w, Xla__CollectiveDeviceListProto, XLA__COLLECTIVE_DEVICE_LIST_PROTO__INIT);
    if (!io || !l) return OOM(w);
    if (nums(w, &s, '[', ']', &g, &ng) != 0 || ng != 2 || !lit(&s, "<=") ||
        nums(w, &s, '[', ']', &io->iota_reshape_dims, &io->n_iota_reshape_dims) != 0)
      return fail(w, "replica_groups=%s cannot be written by this version", t);
    io->num_replica_groups = g[0];
    io->num_devices_per_group = g[1];
    size_t nd = io->n_iota_reshape_dims;
    io->n_iota_transpose_perm = nd;
    io->iota_transpose_perm = alloc(w, nd * sizeof(int32_t));
    if (!io->iota_transpose_perm) return OOM(w);
    for (size_t i = 0; i < nd; i++) io->iota_transpose_perm[i] = (int32_t)i;
    if (lit(&s, "T")) {
      int64_t *perm;
      size_t np;
      if (nums(w, &s, '(', ')', &perm, &np) != 0 || np != nd)
        return fail(w, "replica_groups=%s: bad T(...)", t);
      for (size_t i = 0; i < nd; i++) io->iota_transpose_perm[i] = (int32_t)perm[i];
    }
    sk(&s);
    if (*s.p) return fail(w, "replica_groups=%s cannot be written by this version", t);
    l->iota_replica_group_list = io;
    p->collective_device_list = l;
    return 0;
  }
  /* The explicit list, as replica_groups (XLA's older field, which current
   * XLA still reads). */
  p->n_replica_groups = (size_t)ins->ngroups;
  p->replica_groups = alloc(w, (size_t)ins->ngroups * sizeof *p->replica_groups);
  if (!p->replica_groups) return OOM(w);
  for (int32_t i = 0; i < ins->ngroups; i++) {
    Xla__ReplicaGroup *g = NEW(w, Xla__ReplicaGroup, XLA__REPLICA_GROUP__INIT);
    if (!g) return OOM(w);
    g->replica_ids = copy_i64s(w, ins->replica_groups[i], &g->n_replica_ids);
    p->replica_groups[i] = g;
  }
  return 0;
}

/* output_to_operand_aliasing={{0}: (1, {}), ...} */
static int aliasing_proto(W *w, const HloAttr *a, Xla__HloInstructionProto *p) {
  const char *t = attr_text(w, a);
  if (!t) return OOM(w);
  Scan s = {t};
  Xla__OutputOperandAliasing *v[256];
  size_t n = 0;
  if (!lit(&s, "{")) goto bad;
  if (!lit(&s, "}")) {
    do {
      Xla__OutputOperandAliasing *e = NEW(w, Xla__OutputOperandAliasing, XLA__OUTPUT_OPERAND_ALIASING__INIT);
      if (!e || n == 256) goto bad;
      if (nums(w, &s, '{', '}', &e->output_shape_index, &e->n_output_shape_index) != 0 || !lit(&s, ":") ||
          !lit(&s, "(") || !num(&s, &e->operand_index) || !lit(&s, ",") ||
          nums(w, &s, '{', '}', &e->operand_shape_index, &e->n_operand_shape_index) != 0 || !lit(&s, ")"))
        goto bad;
      v[n++] = e;
    } while (lit(&s, ","));
    if (!lit(&s, "}")) goto bad;
  }
  p->n_output_operand_aliasing = n;
  p->output_operand_aliasing = alloc(w, n * sizeof *v);
  if (!p->output_operand_aliasing) return OOM(w);
  memcpy(p->output_operand_aliasing, v, n * sizeof *v);
  return 0;
bad:
  return fail(w, "output_to_operand_aliasing=%s cannot be written by this version", t);
}

static bool attr_true(W *w, const HloAttr *a) {
  const char *t = attr_text(w, a);
  return t && strcmp(t, "true") == 0;
}

static int result_accuracy_proto(W *w, const HloAttr *a, Xla__HloInstructionProto *p) {
  const char *t = attr_text(w, a);
  if (!t) return OOM(w);
  Xla__ResultAccuracy *r = NEW(w, Xla__ResultAccuracy, XLA__RESULT_ACCURACY__INIT);
  if (!r) return OOM(w);
  Scan s = {t};
  if (lit(&s, "{mode=")) {
    r->specs_case = XLA__RESULT_ACCURACY__SPECS_MODE;
    if (lit(&s, "highest") || lit(&s, "HIGHEST")) r->mode = XLA__RESULT_ACCURACY__MODE__HIGHEST;
    else if (lit(&s, "default") || lit(&s, "DEFAULT")) r->mode = XLA__RESULT_ACCURACY__MODE__DEFAULT;
    else goto bad;
  } else if (lit(&s, "{tolerance={")) {
    Xla__ResultAccuracy__Tolerance *tol = NEW(w, Xla__ResultAccuracy__Tolerance, XLA__RESULT_ACCURACY__TOLERANCE__INIT);
    if (!tol) return OOM(w);
    r->specs_case = XLA__RESULT_ACCURACY__SPECS_TOLERANCE;
    r->tolerance = tol;
    do {
      char *end;
      if (lit(&s, "atol=")) tol->atol = strtod(s.p, &end);
      else if (lit(&s, "rtol=")) tol->rtol = strtod(s.p, &end);
      else if (lit(&s, "ulps=")) tol->ulps = strtoll(s.p, &end, 10);
      else goto bad;
      if (end == s.p) goto bad;
      s.p = end;
    } while (lit(&s, ","));
    if (!lit(&s, "}")) goto bad;
  } else {
    goto bad;
  }
  if (!lit(&s, "}")) goto bad;
  p->result_accuracy = r;
  return 0;
bad:
  return fail(w, "result_accuracy=%s cannot be written to xla.ResultAccuracy by this version", t);
}

static int instruction_proto(W *w, const HloInstr *ins, Xla__HloInstructionProto **out) {
  Xla__HloInstructionProto *p = NEW(w, Xla__HloInstructionProto, XLA__HLO_INSTRUCTION_PROTO__INIT);
  if (!p) return OOM(w);
  *out = p;
  snprintf(w->what, sizeof w->what, "computation %s, instruction %s", ins->parent->name, ins->name);
  HloOpcode op = ins->op;
  p->name = (char *)ins->name;
  p->opcode = (char *)hlp_opcode_name(op);
  p->id = instr_id(w->m, ins);
  if (shape_proto(w, &ins->shape, &p->shape) != 0) return -1;
  p->metadata = NEW(w, Xla__OpMetadata, XLA__OP_METADATA__INIT);
  p->frontend_attributes = NEW(w, Xla__FrontendAttributes, XLA__FRONTEND_ATTRIBUTES__INIT);
  if (!p->metadata || !p->frontend_attributes) return OOM(w);
  if (op != HLO_OP_PARAMETER && op != HLO_OP_CONSTANT) {
    p->n_operand_ids = (size_t)ins->nops;
    p->operand_ids = alloc(w, (size_t)ins->nops * sizeof(int64_t));
    if (!p->operand_ids) return OOM(w);
    for (int32_t i = 0; i < ins->nops; i++) p->operand_ids[i] = instr_id(w->m, ins->ops[i]);
  }
  p->n_control_predecessor_ids = (size_t)ins->ncontrol;
  p->control_predecessor_ids = alloc(w, (size_t)ins->ncontrol * sizeof(int64_t));
  if (!p->control_predecessor_ids) return OOM(w);
  for (int32_t i = 0; i < ins->ncontrol; i++) p->control_predecessor_ids[i] = instr_id(w->m, ins->control_preds[i]);
  if (called_ids(w, ins, p) != 0) return -1;

  if (op == HLO_OP_PARAMETER) p->parameter_number = ins->parameter_number;
  if (op == HLO_OP_CONSTANT) {
    if (!ins->literal) return fail(w, "a constant without a value");
    if (literal_proto(w, ins->literal, &p->literal) != 0) return -1;
  }
  if (op == HLO_OP_IOTA) {
    p->n_dimensions = 1;
    p->dimensions = i64s(w, &ins->iota_dimension, 1);
  } else if (ins->has_dimensions) {
    p->dimensions = copy_i64s(w, ins->dimensions, &p->n_dimensions);
  }
  if (op == HLO_OP_GET_TUPLE_ELEMENT) p->tuple_index = ins->tuple_index;
  if (op == HLO_OP_COMPARE) {
    p->comparison_direction = (char *)cmp_dir_name(ins->cmp_dir);
    HloDtype t = ins->nops ? ins->ops[0]->shape.dtype : HLO_F32;
    p->comparison_type = (char *)cmp_type_name(ins->cmp_type, t);
  }
  if (op == HLO_OP_FUSION) {
    static const char *const k[] = {"kLoop", "kLoop", "kInput", "kOutput", "kCustom"};
    p->fusion_kind = (char *)k[ins->fusion_kind];
  }
  if (op == HLO_OP_CONVOLUTION || op == HLO_OP_CUSTOM_CALL) {
    p->feature_group_count = ins->feature_group_count ? ins->feature_group_count : 1;
    p->batch_group_count = ins->batch_group_count ? ins->batch_group_count : 1;
  }
  if (op == HLO_OP_DOT || op == HLO_OP_CONVOLUTION || op == HLO_OP_RAGGED_DOT || op == HLO_OP_CUSTOM_CALL)
    if (precision_proto(w, ins, p) != 0) return -1;
  if (op == HLO_OP_CUSTOM_CALL) {
    p->custom_call_target = (char *)(ins->custom_call_target ? ins->custom_call_target : "");
    p->custom_call_api_version = (Xla__CustomCallApiVersion)(ins->api_version ? ins->api_version : HLO_API_ORIGINAL);
    p->custom_call_has_side_effect = ins->has_side_effect;
    if (ins->noperand_layouts) {
      p->constrain_layout = true;
      p->n_operand_shapes_with_layout = (size_t)ins->noperand_layouts;
      p->operand_shapes_with_layout = alloc(w, (size_t)ins->noperand_layouts * sizeof(void *));
      if (!p->operand_shapes_with_layout) return OOM(w);
      for (int32_t i = 0; i < ins->noperand_layouts; i++)
        if (shape_proto(w, &ins->operand_layouts[i], &p->operand_shapes_with_layout[i]) != 0) return -1;
    }
  }

  /* Every attribute written in the text, by name. */
  for (int32_t i = 0; i < ins->nattrs; i++) {
    const HloAttr *a = &ins->attrs[i];
    const char *n = a->name;
#define IS(s) (strcmp(n, (s)) == 0)
    if (IS("dimensions") || IS("index") || IS("iota_dimension") || IS("direction") || IS("type") ||
        IS("kind") || IS("to_apply") || IS("calls") || IS("condition") || IS("body") ||
        IS("true_computation") || IS("false_computation") || IS("branch_computations") || IS("select") ||
        IS("scatter") || IS("called_computations") || IS("control-predecessors") ||
        IS("operand_precision") || IS("custom_call_target") || IS("api_version") ||
        IS("custom_call_has_side_effect") || IS("operand_layout_constraints") || IS("feature_group_count") ||
        IS("batch_group_count") || (IS("algorithm") && op != HLO_OP_RNG_BIT_GENERATOR)) {
      continue;   /* written above from the typed fields */
    } else if (IS("sharding")) {
      if (sharding_proto(w, ins, a, &p->sharding) != 0) return -1;
    } else if (IS("frontend_attributes")) {
      if (frontend_proto(w, a, p->frontend_attributes) != 0) return -1;
    } else if (IS("metadata")) {
      if (metadata_proto(w, a, p->metadata) != 0) return -1;
    } else if (IS("backend_config")) {
      p->backend_config.data = (uint8_t *)ins->backend_config;
      p->backend_config.len = ins->backend_config_len;
    } else if (IS("result_accuracy")) {
      if (result_accuracy_proto(w, a, p) != 0) return -1;
    } else if (IS("window")) {
      Xla__Window *win = NEW(w, Xla__Window, XLA__WINDOW__INIT);
      if (!win) return OOM(w);
      win->n_dimensions = (size_t)ins->window.rank;
      win->dimensions = alloc(w, win->n_dimensions * sizeof(void *));
      if (!win->dimensions) return OOM(w);
      for (int32_t d = 0; d < ins->window.rank; d++) {
        const HloWindowDim *wd = &ins->window.dims[d];
        Xla__WindowDimension *x = NEW(w, Xla__WindowDimension, XLA__WINDOW_DIMENSION__INIT);
        if (!x) return OOM(w);
        x->size = wd->size; x->stride = wd->stride; x->padding_low = wd->pad_lo; x->padding_high = wd->pad_hi;
        x->base_dilation = wd->lhs_dilate; x->window_dilation = wd->rhs_dilate; x->window_reversal = wd->reversal;
        win->dimensions[d] = x;
      }
      p->window = win;
    } else if (IS("dim_labels")) {
      const HloConvDims *c = &ins->conv;
      Xla__ConvolutionDimensionNumbers *d = NEW(w, Xla__ConvolutionDimensionNumbers, XLA__CONVOLUTION_DIMENSION_NUMBERS__INIT);
      if (!d) return OOM(w);
      d->input_batch_dimension = c->in_batch; d->input_feature_dimension = c->in_feature;
      d->input_spatial_dimensions = copy_i64s(w, c->in_spatial, &d->n_input_spatial_dimensions);
      d->kernel_input_feature_dimension = c->k_in_feature; d->kernel_output_feature_dimension = c->k_out_feature;
      d->kernel_spatial_dimensions = copy_i64s(w, c->k_spatial, &d->n_kernel_spatial_dimensions);
      d->output_batch_dimension = c->out_batch; d->output_feature_dimension = c->out_feature;
      d->output_spatial_dimensions = copy_i64s(w, c->out_spatial, &d->n_output_spatial_dimensions);
      p->convolution_dimension_numbers = d;
    } else if (IS("slice")) {
      int32_t r = ins->nops ? ins->ops[0]->shape.rank : 0;
      p->n_slice_dimensions = (size_t)r;
      p->slice_dimensions = alloc(w, (size_t)r * sizeof(void *));
      if (!p->slice_dimensions) return OOM(w);
      for (int32_t d = 0; d < r; d++) {
        Xla__HloInstructionProto__SliceDimensions *x =
            NEW(w, Xla__HloInstructionProto__SliceDimensions, XLA__HLO_INSTRUCTION_PROTO__SLICE_DIMENSIONS__INIT);
        if (!x) return OOM(w);
        x->start = ins->slice[d].start; x->limit = ins->slice[d].limit; x->stride = ins->slice[d].stride;
        p->slice_dimensions[d] = x;
      }
    } else if (IS("dynamic_slice_sizes")) {
      p->dynamic_slice_sizes = copy_i64s(w, ins->dynamic_slice_sizes, &p->n_dynamic_slice_sizes);
    } else if (IS("padding")) {
      int32_t r = ins->shape.rank;
      Xla__PaddingConfig *pc = NEW(w, Xla__PaddingConfig, XLA__PADDING_CONFIG__INIT);
      if (!pc) return OOM(w);
      pc->n_dimensions = (size_t)r;
      pc->dimensions = alloc(w, (size_t)r * sizeof(void *));
      if (!pc->dimensions) return OOM(w);
      for (int32_t d = 0; d < r; d++) {
        Xla__PaddingConfig__PaddingConfigDimension *x =
            NEW(w, Xla__PaddingConfig__PaddingConfigDimension, XLA__PADDING_CONFIG__PADDING_CONFIG_DIMENSION__INIT);
        if (!x) return OOM(w);
        x->edge_padding_low = ins->padding[d].lo; x->edge_padding_high = ins->padding[d].hi;
        x->interior_padding = ins->padding[d].interior;
        pc->dimensions[d] = x;
      }
      p->padding_config = pc;
    } else if (IS("lhs_batch_dims") || IS("lhs_contracting_dims") || IS("rhs_batch_dims") ||
               IS("rhs_contracting_dims") || IS("lhs_ragged_dims") || IS("rhs_group_dims")) {
      continue;   /* below, once */
    } else if (IS("offset_dims") || IS("collapsed_slice_dims") || IS("start_index_map") ||
               IS("operand_batching_dims") || IS("start_indices_batching_dims") || IS("slice_sizes") ||
               IS("index_vector_dim") || IS("indices_are_sorted") || IS("update_window_dims") ||
               IS("inserted_window_dims") || IS("scatter_dims_to_operand_dims") || IS("input_batching_dims") ||
               IS("scatter_indices_batching_dims") || IS("unique_indices")) {
      continue;   /* below, once */
    } else if (IS("fft_type")) {
      p->fft_type = (Xla__FftType)ins->fft_type;
    } else if (IS("fft_length")) {
      p->fft_length = copy_i64s(w, ins->fft_length, &p->n_fft_length);
    } else if (IS("distribution")) {
      p->distribution = ins->distribution == HLO_RNG_NORMAL ? XLA__RANDOM_DISTRIBUTION__RNG_NORMAL
                                                            : XLA__RANDOM_DISTRIBUTION__RNG_UNIFORM;
    } else if (IS("algorithm")) {   /* rng-bit-generator */
      p->rng_algorithm = (Xla__RandomAlgorithm)ins->rng_algorithm;
    } else if (IS("delta")) {
      p->delta = ins->rng_delta;
    } else if (IS("is_stable")) {
      p->is_stable = ins->is_stable;
    } else if (IS("k") || IS("largest")) {
      p->k = ins->k;
      p->largest = ins->largest;
    } else if (IS("exponent_bits") || IS("mantissa_bits")) {
      p->exponent_bits = (int32_t)ins->exponent_bits;
      p->mantissa_bits = (int32_t)ins->mantissa_bits;
    } else if (IS("epsilon") || IS("feature_index")) {
      p->epsilon = (float)ins->epsilon;
      p->feature_index = ins->feature_index;
    } else if (IS("left_side") || IS("lower") || IS("unit_diagonal") || IS("transpose_a")) {
      continue;   /* below, once */
    } else if (IS("channel_id")) {
      p->channel_id = ins->channel_id;
    } else if (IS("replica_groups")) {
      if (replica_groups_proto(w, ins, a, p) != 0) return -1;
    } else if (IS("use_global_device_ids")) {
      p->use_global_device_ids = ins->use_global_device_ids;
    } else if (IS("constrain_layout")) {
      p->constrain_layout = attr_true(w, a);
    } else if (IS("source_target_pairs")) {
      p->n_source_target_pairs = (size_t)ins->npairs;
      p->source_target_pairs = alloc(w, (size_t)ins->npairs * sizeof(void *));
      if (!p->source_target_pairs) return OOM(w);
      for (int32_t k = 0; k < ins->npairs; k++) {
        Xla__SourceTarget *st = NEW(w, Xla__SourceTarget, XLA__SOURCE_TARGET__INIT);
        if (!st) return OOM(w);
        st->source = ins->source_target_pairs[k][0];
        st->target = ins->source_target_pairs[k][1];
        p->source_target_pairs[k] = st;
      }
    } else if (IS("is_host_transfer")) {
      p->is_host_transfer = attr_true(w, a);
    } else if (IS("is_composite")) {
      p->is_composite = attr_true(w, a);
    } else if (IS("output_to_operand_aliasing")) {
      if (aliasing_proto(w, a, p) != 0) return -1;
    } else if (IS("schedule") || IS("custom_call_schedule")) {
      const char *t = attr_text(w, a);
      if (!t) return OOM(w);
      if (strcmp(t, "SCHEDULE_LATEST") == 0) p->custom_call_schedule = XLA__CUSTOM_CALL_SCHEDULE__SCHEDULE_LATEST;
      else if (strcmp(t, "SCHEDULE_EARLIEST") == 0) p->custom_call_schedule = XLA__CUSTOM_CALL_SCHEDULE__SCHEDULE_EARLIEST;
      else if (strcmp(t, "SCHEDULE_NONE") != 0) return fail(w, "schedule=%s cannot be written", t);
    } else if (IS("literal")) {
      if (!ins->literal || literal_proto(w, ins->literal, &p->literal) != 0)
        return ins->literal ? -1 : fail(w, "literal= without a value");
    } else if (IS("async_execution_thread")) {
      p->async_execution_thread = (char *)ins->async_execution_thread;
    } else if (IS("parameter_replication")) {
      const HloVal *b = brace_of(a);
      Xla__ParameterReplication *pr = NEW(w, Xla__ParameterReplication, XLA__PARAMETER_REPLICATION__INIT);
      if (!b || !pr) return b ? OOM(w) : fail(w, "parameter_replication: expected {...}");
      pr->n_replicated_at_leaf_buffers = (size_t)b->nitems;
      pr->replicated_at_leaf_buffers = alloc(w, (size_t)b->nitems * sizeof(protobuf_c_boolean));
      if (!pr->replicated_at_leaf_buffers) return OOM(w);
      for (int32_t k = 0; k < b->nitems; k++)
        pr->replicated_at_leaf_buffers[k] = b->items[k]->len == 4 && memcmp(b->items[k]->text, "true", 4) == 0;
      p->parameter_replication = pr;
    } else if (IS("infeed_config") || IS("outfeed_config")) {
      const HloVal *v = a->nvalues == 1 ? a->values[0] : NULL;
      if (!v || v->kind != HLO_VAL_STRING) return fail(w, "%s: expected a string", n);
      ProtobufCBinaryData *bd = IS("infeed_config") ? &p->infeed_config : &p->outfeed_config;
      bd->data = (uint8_t *)v->text;
      bd->len = v->len;
    } else if (IS("outfeed_shape")) {
      const HloVal *v = a->nvalues == 1 ? a->values[0] : NULL;
      if (!v || v->kind != HLO_VAL_SHAPE) return fail(w, "outfeed_shape: tuple shapes cannot be written by this version");
      if (shape_proto(w, v->shape, &p->outfeed_shape) != 0) return -1;
    } else if (IS("cross_program_prefetch_index")) {
      const char *t = attr_text(w, a);
      if (!t) return OOM(w);
      p->optional_cross_program_prefetch_index_case =
          XLA__HLO_INSTRUCTION_PROTO__OPTIONAL_CROSS_PROGRAM_PREFETCH_INDEX_CROSS_PROGRAM_PREFETCH_INDEX;
      p->cross_program_prefetch_index = (int32_t)strtol(t, NULL, 10);
    } else {
      return fail(w, "attribute %s cannot be written to xla.HloInstructionProto by this version", n);
    }
#undef IS
  }
  if (op == HLO_OP_DOT || op == HLO_OP_RAGGED_DOT) {
    Xla__DotDimensionNumbers *d = NEW(w, Xla__DotDimensionNumbers, XLA__DOT_DIMENSION_NUMBERS__INIT);
    if (!d) return OOM(w);
    d->lhs_batch_dimensions = copy_i64s(w, ins->dot.lhs_batch, &d->n_lhs_batch_dimensions);
    d->lhs_contracting_dimensions = copy_i64s(w, ins->dot.lhs_contracting, &d->n_lhs_contracting_dimensions);
    d->rhs_batch_dimensions = copy_i64s(w, ins->dot.rhs_batch, &d->n_rhs_batch_dimensions);
    d->rhs_contracting_dimensions = copy_i64s(w, ins->dot.rhs_contracting, &d->n_rhs_contracting_dimensions);
    if (op == HLO_OP_RAGGED_DOT) {
      Xla__RaggedDotDimensionNumbers *r = NEW(w, Xla__RaggedDotDimensionNumbers, XLA__RAGGED_DOT_DIMENSION_NUMBERS__INIT);
      if (!r) return OOM(w);
      r->dot_dimension_numbers = d;
      r->lhs_ragged_dimensions = copy_i64s(w, ins->dot.lhs_ragged, &r->n_lhs_ragged_dimensions);
      r->rhs_group_dimensions = copy_i64s(w, ins->dot.rhs_group, &r->n_rhs_group_dimensions);
      p->ragged_dot_dimension_numbers = r;
    } else {
      p->dot_dimension_numbers = d;
    }
  }
  if (ins->npermute_slices) {   /* in-place collective-permute: the lists back to back */
    size_t n = 0;
    for (int32_t i = 0; i < ins->npermute_slices; i++) n += (size_t)ins->permute_slices[i].n;
    p->dynamic_slice_sizes = alloc(w, (n ? n : 1) * sizeof(int64_t));
    if (!p->dynamic_slice_sizes) return OOM(w);
    for (int32_t i = 0; i < ins->npermute_slices; i++)
      for (int32_t d = 0; d < ins->permute_slices[i].n; d++)
        p->dynamic_slice_sizes[p->n_dynamic_slice_sizes++] = ins->permute_slices[i].v[d];
  }
  if (op == HLO_OP_GATHER) {
    const HloGatherDims *g = &ins->gather;
    Xla__GatherDimensionNumbers *d = NEW(w, Xla__GatherDimensionNumbers, XLA__GATHER_DIMENSION_NUMBERS__INIT);
    if (!d) return OOM(w);
    d->offset_dims = copy_i64s(w, g->offset_dims, &d->n_offset_dims);
    d->collapsed_slice_dims = copy_i64s(w, g->collapsed_slice_dims, &d->n_collapsed_slice_dims);
    d->start_index_map = copy_i64s(w, g->start_index_map, &d->n_start_index_map);
    d->operand_batching_dims = copy_i64s(w, g->operand_batching_dims, &d->n_operand_batching_dims);
    d->start_indices_batching_dims = copy_i64s(w, g->start_indices_batching_dims, &d->n_start_indices_batching_dims);
    d->index_vector_dim = g->index_vector_dim;
    p->gather_dimension_numbers = d;
    p->gather_slice_sizes = copy_i64s(w, g->slice_sizes, &p->n_gather_slice_sizes);
    p->indices_are_sorted = g->indices_are_sorted;
  }
  if (op == HLO_OP_SCATTER) {
    const HloScatterDims *g = &ins->scatter;
    Xla__ScatterDimensionNumbers *d = NEW(w, Xla__ScatterDimensionNumbers, XLA__SCATTER_DIMENSION_NUMBERS__INIT);
    if (!d) return OOM(w);
    d->update_window_dims = copy_i64s(w, g->update_window_dims, &d->n_update_window_dims);
    d->inserted_window_dims = copy_i64s(w, g->inserted_window_dims, &d->n_inserted_window_dims);
    d->scatter_dims_to_operand_dims = copy_i64s(w, g->scatter_dims_to_operand_dims, &d->n_scatter_dims_to_operand_dims);
    d->input_batching_dims = copy_i64s(w, g->input_batching_dims, &d->n_input_batching_dims);
    d->scatter_indices_batching_dims = copy_i64s(w, g->scatter_indices_batching_dims, &d->n_scatter_indices_batching_dims);
    d->index_vector_dim = g->index_vector_dim;
    p->scatter_dimension_numbers = d;
    p->indices_are_sorted = g->indices_are_sorted;
    p->unique_indices = g->unique_indices;
  }
  if (op == HLO_OP_TRIANGULAR_SOLVE) {
    Xla__TriangularSolveOptions *t = NEW(w, Xla__TriangularSolveOptions, XLA__TRIANGULAR_SOLVE_OPTIONS__INIT);
    if (!t) return OOM(w);
    t->left_side = ins->left_side; t->lower = ins->lower; t->unit_diagonal = ins->unit_diagonal;
    t->transpose_a = ins->transpose_a == HLO_TRANSPOSE_YES ? XLA__TRIANGULAR_SOLVE_OPTIONS__TRANSPOSE__TRANSPOSE
                     : ins->transpose_a == HLO_TRANSPOSE_ADJOINT ? XLA__TRIANGULAR_SOLVE_OPTIONS__TRANSPOSE__ADJOINT
                     : XLA__TRIANGULAR_SOLVE_OPTIONS__TRANSPOSE__NO_TRANSPOSE;
    p->triangular_solve_options = t;
  }
  if (op == HLO_OP_CHOLESKY) {
    Xla__CholeskyOptions *c = NEW(w, Xla__CholeskyOptions, XLA__CHOLESKY_OPTIONS__INIT);
    if (!c) return OOM(w);
    c->lower = ins->lower;
    p->cholesky_options = c;
  }
  if (op == HLO_OP_TOPK) { p->k = ins->k; p->largest = ins->largest; }
  return 0;
}

/* ---- Computations and the module ---------------------------------------------- */

static int program_shape(W *w, const HloComputation *c, bool host, Xla__ProgramShapeProto **out) {
  Xla__ProgramShapeProto *ps = NEW(w, Xla__ProgramShapeProto, XLA__PROGRAM_SHAPE_PROTO__INIT);
  if (!ps) return OOM(w);
  *out = ps;
  size_t n = (size_t)c->nparams;
  ps->n_parameters = n;
  ps->parameters = alloc(w, n * sizeof(void *));
  ps->n_parameter_names = n;
  ps->parameter_names = alloc(w, n * sizeof(char *));
  if (!ps->parameters || !ps->parameter_names) return OOM(w);
  for (size_t i = 0; i < n; i++) {
    const HloShape *s = &c->params[i]->shape;
    if (host && w->m->entry_layout && w->m->entry_layout->dtype == HLO_TUPLE &&
        (size_t)w->m->entry_layout->ntuple == n)
      s = &w->m->entry_layout->tuple[i];
    if (shape_proto(w, s, &ps->parameters[i]) != 0) return -1;
    char nm[32];
    snprintf(nm, sizeof nm, "p%zu", i);
    ps->parameter_names[i] = host ? dupstr(w, nm, strlen(nm)) : (char *)c->params[i]->name;
    if (!ps->parameter_names[i]) return OOM(w);
  }
  const HloShape *r = &c->root->shape;
  if (host && w->m->entry_result_layout) r = w->m->entry_result_layout;
  return shape_proto(w, r, &ps->result);
}

/* input_output_alias={ {0}: (0, {}, may-alias), ... } */
static int io_alias_proto(W *w, const HloAttr *a, Xla__HloModuleProto *mp) {
  const char *t = attr_text(w, a);
  if (!t) return OOM(w);
  Scan s = {t};
  Xla__HloInputOutputAliasProto *io = NEW(w, Xla__HloInputOutputAliasProto, XLA__HLO_INPUT_OUTPUT_ALIAS_PROTO__INIT);
  Xla__HloInputOutputAliasProto__AliasEntryProto *v[1024];
  size_t n = 0;
  if (!io) return OOM(w);
  if (!lit(&s, "{")) goto bad;
  if (!lit(&s, "}")) {
    do {
      Xla__HloInputOutputAliasProto__AliasEntryProto *e =
          NEW(w, Xla__HloInputOutputAliasProto__AliasEntryProto, XLA__HLO_INPUT_OUTPUT_ALIAS_PROTO__ALIAS_ENTRY_PROTO__INIT);
      if (!e || n == 1024) goto bad;
      if (nums(w, &s, '{', '}', &e->output_shape_index, &e->n_output_shape_index) != 0 || !lit(&s, ":") ||
          !lit(&s, "(") || !num(&s, &e->parameter_number) || !lit(&s, ",") ||
          nums(w, &s, '{', '}', &e->parameter_shape_index, &e->n_parameter_shape_index) != 0)
        goto bad;
      e->kind = XLA__KIND__MAY_ALIAS;
      if (lit(&s, ",")) {
        if (lit(&s, "must-alias")) e->kind = XLA__KIND__MUST_ALIAS;
        else if (!lit(&s, "may-alias")) goto bad;
      }
      if (!lit(&s, ")")) goto bad;
      v[n++] = e;
    } while (lit(&s, ","));
    if (!lit(&s, "}")) goto bad;
  }
  io->n_entries = n;
  io->entries = alloc(w, n * sizeof *v);
  if (!io->entries) return OOM(w);
  memcpy(io->entries, v, n * sizeof *v);
  mp->input_output_alias = io;
  return 0;
bad:
  return fail(w, "input_output_alias=%s cannot be written by this version", t);
}

/* buffer_donor={ (0, {}), ... } */
static int donor_proto(W *w, const HloAttr *a, Xla__HloModuleProto *mp) {
  const char *t = attr_text(w, a);
  if (!t) return OOM(w);
  Scan s = {t};
  Xla__HloBufferDonorProto *bd = NEW(w, Xla__HloBufferDonorProto, XLA__HLO_BUFFER_DONOR_PROTO__INIT);
  Xla__HloBufferDonorProto__BufferDonorEntryProto *v[1024];
  size_t n = 0;
  if (!bd) return OOM(w);
  if (!lit(&s, "{")) goto bad;
  if (!lit(&s, "}")) {
    do {
      Xla__HloBufferDonorProto__BufferDonorEntryProto *e =
          NEW(w, Xla__HloBufferDonorProto__BufferDonorEntryProto, XLA__HLO_BUFFER_DONOR_PROTO__BUFFER_DONOR_ENTRY_PROTO__INIT);
      if (!e || n == 1024) goto bad;
      if (!lit(&s, "(") || !num(&s, &e->parameter_number) || !lit(&s, ",") ||
          nums(w, &s, '{', '}', &e->parameter_shape_index, &e->n_parameter_shape_index) != 0 || !lit(&s, ")"))
        goto bad;
      v[n++] = e;
    } while (lit(&s, ","));
    if (!lit(&s, "}")) goto bad;
  }
  bd->n_entries = n;
  bd->entries = alloc(w, n * sizeof *v);
  if (!bd->entries) return OOM(w);
  memcpy(bd->entries, v, n * sizeof *v);
  mp->buffer_donor = bd;
  return 0;
bad:
  return fail(w, "buffer_donor=%s cannot be written by this version", t);
}

int hpb_write_module(const HloModule *m, uint8_t **out, size_t *out_len, char *err, size_t errn,
                     char *note, size_t noten) {
  W w = {.m = m, .err = err, .errn = errn};
  note[0] = 0;
  hlc_arena_init(&w.a);
  int rc = -1;
  *out = NULL;
  Xla__HloModuleProto mp = XLA__HLO_MODULE_PROTO__INIT;
  if (!m->entry) { fail(&w, "the module has no ENTRY computation"); goto done; }
  mp.name = (char *)m->name;
  mp.entry_computation_name = (char *)m->entry->name;
  mp.entry_computation_id = comp_index(m, m->entry);
  mp.frontend_attributes = NEW(&w, Xla__FrontendAttributes, XLA__FRONTEND_ATTRIBUTES__INIT);
  mp.input_output_alias = NEW(&w, Xla__HloInputOutputAliasProto, XLA__HLO_INPUT_OUTPUT_ALIAS_PROTO__INIT);
  mp.buffer_donor = NEW(&w, Xla__HloBufferDonorProto, XLA__HLO_BUFFER_DONOR_PROTO__INIT);
  if (!mp.frontend_attributes || !mp.input_output_alias || !mp.buffer_donor) { OOM(&w); goto done; }
  for (int32_t i = 0; i < m->nattrs; i++) {
    const HloAttr *a = &m->attrs[i];
    const char *n = a->name;
    if (strcmp(n, "is_scheduled") == 0 || strcmp(n, "entry_computation_layout") == 0) continue;
    if (strcmp(n, "replica_count") == 0 || strcmp(n, "num_partitions") == 0 ||
        strcmp(n, "allow_spmd_sharding_propagation_to_parameters") == 0 ||
        strcmp(n, "allow_spmd_sharding_propagation_to_output") == 0 ||
        strcmp(n, "alias_passthrough_params") == 0) {
      /* HloModuleConfig, not HloModuleProto: XLA's ToProto does not write
       * them either. Said, not dropped silently. */
      size_t k = strlen(note);
      snprintf(note + k, noten - k, "%s%s", k ? ", " : "", n);
      continue;
    }
    if (strcmp(n, "input_output_alias") == 0) { if (io_alias_proto(&w, a, &mp) != 0) goto done; continue; }
    if (strcmp(n, "buffer_donor") == 0) { if (donor_proto(&w, a, &mp) != 0) goto done; continue; }
    if (strcmp(n, "frontend_attributes") == 0) {
      if (frontend_proto(&w, a, mp.frontend_attributes) != 0) goto done;
      continue;
    }
    fail(&w, "module attribute %s cannot be written to xla.HloModuleProto by this version%s", n,
         strcmp(n, "replica_count") == 0 || strcmp(n, "num_partitions") == 0 ? " (it belongs to HloModuleConfig)" : "");
    goto done;
  }
  if (m->stack_frames_text) {
    fail(&w, "the FileNames/StackFrames section (xla.StackFrameIndexProto) cannot be written by this version");
    goto done;
  }
  mp.n_computations = (size_t)m->ncomps;
  mp.computations = alloc(&w, mp.n_computations * sizeof(void *));
  if (!mp.computations) { OOM(&w); goto done; }
  for (int32_t ci = 0; ci < m->ncomps; ci++) {
    const HloComputation *c = m->comps[ci];
    Xla__HloComputationProto *cp = NEW(&w, Xla__HloComputationProto, XLA__HLO_COMPUTATION_PROTO__INIT);
    if (!cp) { OOM(&w); goto done; }
    cp->name = (char *)c->name;
    cp->id = ci;
    cp->root_id = instr_id(m, c->root);
    cp->is_fusion_computation = c->is_fusion_body;
    if (c->execution_thread) cp->execution_thread = (char *)c->execution_thread;
    cp->n_instructions = (size_t)c->ninstrs;
    cp->instructions = alloc(&w, cp->n_instructions * sizeof(void *));
    if (!cp->instructions) { OOM(&w); goto done; }
    for (int32_t k = 0; k < c->ninstrs; k++)
      if (instruction_proto(&w, c->instrs[k], &cp->instructions[k]) != 0) goto done;
    w.what[0] = 0;
    snprintf(w.what, sizeof w.what, "computation %s", c->name);
    if (program_shape(&w, c, false, &cp->program_shape) != 0) goto done;
    w.what[0] = 0;
    mp.computations[ci] = cp;
  }
  if (program_shape(&w, m->entry, true, &mp.host_program_shape) != 0) goto done;
  if (m->is_scheduled) {
    Xla__HloScheduleProto *sp = NEW(&w, Xla__HloScheduleProto, XLA__HLO_SCHEDULE_PROTO__INIT);
    if (!sp) { OOM(&w); goto done; }
    sp->n_sequences = (size_t)m->ncomps;
    sp->sequences = alloc(&w, sp->n_sequences * sizeof(void *));
    if (!sp->sequences) { OOM(&w); goto done; }
    for (int32_t ci = 0; ci < m->ncomps; ci++) {
      const HloComputation *c = m->comps[ci];
      Xla__HloScheduleProto__SequencesEntry *e =
          NEW(&w, Xla__HloScheduleProto__SequencesEntry, XLA__HLO_SCHEDULE_PROTO__SEQUENCES_ENTRY__INIT);
      Xla__HloScheduleProto__InstructionSequence *q =
          NEW(&w, Xla__HloScheduleProto__InstructionSequence, XLA__HLO_SCHEDULE_PROTO__INSTRUCTION_SEQUENCE__INIT);
      if (!e || !q) { OOM(&w); goto done; }
      q->n_instruction_ids = (size_t)c->ninstrs;
      q->instruction_ids = alloc(&w, q->n_instruction_ids * sizeof(int64_t));
      if (!q->instruction_ids) { OOM(&w); goto done; }
      for (int32_t k = 0; k < c->ninstrs; k++) q->instruction_ids[k] = instr_id(m, c->instrs[k]);
      e->key = ci;
      e->value = q;
      sp->sequences[ci] = e;
    }
    mp.schedule = sp;
  }
  size_t n = xla__hlo_module_proto__get_packed_size(&mp);
  *out = malloc(n ? n : 1);
  if (!*out) { OOM(&w); goto done; }
  *out_len = xla__hlo_module_proto__pack(&mp, *out);
  rc = 0;
done:
  hlc_arena_free(&w.a);
  return rc;
}
