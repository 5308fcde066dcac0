/* to_text.c: an HloModuleProto written as HLO text in XLA's syntax.
 *
 * This is how a proto is lowered into the IR: the text goes through the same
 * parser, verifier and printer as a .hlo file. Every instruction field XLA's
 * HloInstruction::CreateFromProto reads becomes the attribute XLA's printer
 * writes for it (xla/hlo/ir/hlo_instruction.cc, hlo_instructions.cc), with
 * XLA's proto conventions undone here:
 *   - ids are 64-bit (computation id << 32 | local id in current XLA, a
 *     module-wide counter in older dumps); operands, roots, control
 *     predecessors and schedules refer to them, never to names;
 *   - while's called_computation_ids are [body, condition]
 *     (HloWhileInstruction: kBodyComputationIndex = 0, kConditionComputationIndex = 1);
 *   - conditional's are [true, false] for a pred selector, else the branches;
 *   - select-and-scatter's are [select, scatter];
 *   - iota's dimension is dimensions[0];
 *   - an empty OpSharding is {replicated}.
 * Instruction ids are matched by their low 32 bits (the local id), as XLA
 * does. Ids and names are checked: an operand id that is not an instruction of
 * the same computation, a called computation id that does not exist, or a
 * cycle is an error naming the instruction and field.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proto/lower.h"
#include "ir/print.h"

typedef struct IdName { int64_t id; int32_t index; } IdName;

typedef struct Conv {
  const Xla__HloModuleProto *m;
  HlcText b;
  HlcArena arena;
  char *err;
  size_t errn;
  IdName *comp_ids;           /* computation id -> index, sorted by id */
  size_t ncomp_ids;
} Conv;

static int cmp_id(const void *a, const void *b) {
  int64_t x = ((const IdName *)a)->id, y = ((const IdName *)b)->id;
  return x < y ? -1 : x > y;
}

/* Instructions are found by their local id (the low 32 bits), as XLA's
 * HloModule::CreateFromProto does (HloInstruction::CalculateLocalId): its
 * own test protos refer to operands by local id alone. */
static int64_t local_id(int64_t id) { return (int64_t)((uint64_t)id & 0xffffffffu); }

static int find_id(const IdName *v, size_t n, int64_t id) {
  IdName key = {id, 0};
  const IdName *f = n ? bsearch(&key, v, n, sizeof *v, cmp_id) : NULL;
  return f ? f->index : -1;
}

/* Record the error (naming message and field) and return -1. */
__attribute__((format(printf, 2, 3))) static int fail(Conv *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err, c->errn, fmt, ap);
  va_end(ap);
  return -1;
}

static void put_i64s(HlcText *b, const int64_t *v, size_t n) {
  hlc_text_puts(b, "{");
  for (size_t i = 0; i < n; i++) hlc_text_printf(b, "%s%lld", i ? "," : "", (long long)v[i]);
  hlc_text_puts(b, "}");
}

static void put_string(HlcText *b, const char *s, size_t n) {
  hlc_text_puts(b, "\"");
  hlp_put_escaped(b, s, n, '"');
  hlc_text_puts(b, "\"");
}

static int put_shape(Conv *c, const Xla__ShapeProto *sp, const char *what) {
  HloShape s;
  char inner[400];
  if (hpb_shape(&c->arena, sp, &s, inner, sizeof inner) != 0) return fail(c, "%s: %s", what, inner);
  hlp_print_shape(&c->b, &s, true);
  return 0;
}

/* ---- Sharding ------------------------------------------------------------- */

static const char *sharding_type_word(Xla__OpSharding__Type t) {
  switch (t) {
  case XLA__OP_SHARDING__TYPE__REPLICATED: return "replicated";
  case XLA__OP_SHARDING__TYPE__MANUAL: return "manual";
  case XLA__OP_SHARDING__TYPE__UNKNOWN: return "unknown";
  case XLA__OP_SHARDING__TYPE__UNREDUCED: return "unreduced";
  default: return NULL;
  }
}

static int put_sharding_body(Conv *c, const Xla__OpSharding *s, const char *what) {
  HlcText *b = &c->b;
  switch (s->type) {
  case XLA__OP_SHARDING__TYPE__REPLICATED: hlc_text_puts(b, "replicated"); return 0;
  case XLA__OP_SHARDING__TYPE__MANUAL: hlc_text_puts(b, "manual"); return 0;
  case XLA__OP_SHARDING__TYPE__UNKNOWN: hlc_text_puts(b, "unknown"); return 0;
  case XLA__OP_SHARDING__TYPE__UNREDUCED: hlc_text_puts(b, "unreduced"); return 0;
  case XLA__OP_SHARDING__TYPE__MAXIMAL:
    if (s->n_tile_assignment_devices != 1)
      return fail(c, "%s: xla.OpSharding.tile_assignment_devices: a MAXIMAL sharding needs one device, has %zu",
                  what, s->n_tile_assignment_devices);
    hlc_text_printf(b, "maximal device=%lld", (long long)s->tile_assignment_devices[0]);
    return 0;
  case XLA__OP_SHARDING__TYPE__TUPLE:
    for (size_t i = 0; i < s->n_tuple_shardings; i++) {
      if (i) hlc_text_puts(b, ", ");
      hlc_text_puts(b, "{");
      if (put_sharding_body(c, s->tuple_shardings[i], what) != 0) return -1;
      hlc_text_puts(b, "}");
    }
    return 0;
  case XLA__OP_SHARDING__TYPE__OTHER: {
    hlc_text_puts(b, "devices=[");
    for (size_t i = 0; i < s->n_tile_assignment_dimensions; i++)
      hlc_text_printf(b, "%s%lld", i ? "," : "", (long long)s->tile_assignment_dimensions[i]);
    hlc_text_puts(b, "]");
    if (s->n_iota_reshape_dims) {
      hlc_text_puts(b, "<=[");
      for (size_t i = 0; i < s->n_iota_reshape_dims; i++)
        hlc_text_printf(b, "%s%lld", i ? "," : "", (long long)s->iota_reshape_dims[i]);
      hlc_text_puts(b, "]");
      bool identity = true;
      for (size_t i = 0; i < s->n_iota_transpose_perm; i++) identity &= s->iota_transpose_perm[i] == (int32_t)i;
      if (!identity) {
        hlc_text_puts(b, "T(");
        for (size_t i = 0; i < s->n_iota_transpose_perm; i++)
          hlc_text_printf(b, "%s%d", i ? "," : "", (int)s->iota_transpose_perm[i]);
        hlc_text_puts(b, ")");
      }
    } else {
      for (size_t i = 0; i < s->n_tile_assignment_devices; i++)
        hlc_text_printf(b, "%s%lld", i ? "," : "", (long long)s->tile_assignment_devices[i]);
    }
    if (s->replicate_on_last_tile_dim) hlc_text_puts(b, " last_tile_dim_replicate");
    if (s->n_last_tile_dims) {
      hlc_text_puts(b, " last_tile_dims={");
      for (size_t i = 0; i < s->n_last_tile_dims; i++) {
        const char *w = sharding_type_word(s->last_tile_dims[i]);
        if (!w) return fail(c, "%s: xla.OpSharding.last_tile_dims[%zu]: type %d", what, i, (int)s->last_tile_dims[i]);
        hlc_text_printf(b, "%s%s", i ? ", " : "", w);
      }
      hlc_text_puts(b, "}");
    }
    return 0;
  }
  default:
    return fail(c, "%s: xla.OpSharding.type: %d is not a sharding type", what, (int)s->type);
  }
}

static int put_sharding(Conv *c, const char *attr, const Xla__OpSharding *s, const char *what) {
  hlc_text_printf(&c->b, ", %s={", attr);
  if (put_sharding_body(c, s, what) != 0) return -1;
  hlc_text_puts(&c->b, "}");
  return 0;
}

/* ---- Instruction attributes ------------------------------------------------ */

static bool is_collective(const char *op) {
  static const char *const ops[] = {"all-reduce", "all-reduce-start", "all-gather", "all-gather-start",
    "all-to-all", "ragged-all-to-all", "reduce-scatter", "collective-broadcast", NULL};
  for (int i = 0; ops[i]; i++) if (strcmp(op, ops[i]) == 0) return true;
  return false;
}

/* As XLA's window_util::ToString: size always, the rest only when some
 * dimension differs from the default (stride 1, pad 0_0, dilation 1). */
static void put_window(HlcText *b, const Xla__Window *w) {
  size_t n = w->n_dimensions;
  bool stride = false, pad = false, lhs = false, rhs = false, rev = false;
  for (size_t i = 0; i < n; i++) {
    const Xla__WindowDimension *d = w->dimensions[i];
    stride |= d->stride != 1;
    pad |= d->padding_low != 0 || d->padding_high != 0;
    lhs |= d->base_dilation != 1;
    rhs |= d->window_dilation != 1;
    rev |= d->window_reversal;
  }
#define ROW(label, expr) do { hlc_text_puts(b, label); \
    for (size_t i = 0; i < n; i++) { const Xla__WindowDimension *d = w->dimensions[i]; \
      hlc_text_printf(b, "%s%lld", i ? "x" : "", (long long)(expr)); } } while (0)
  hlc_text_puts(b, ", window={");
  ROW("size=", d->size);
  if (stride) ROW(" stride=", d->stride);
  if (pad) {
    hlc_text_puts(b, " pad=");
    for (size_t i = 0; i < n; i++)
      hlc_text_printf(b, "%s%lld_%lld", i ? "x" : "", (long long)w->dimensions[i]->padding_low,
                     (long long)w->dimensions[i]->padding_high);
  }
  if (lhs) ROW(" lhs_dilate=", d->base_dilation);
  if (rhs) ROW(" rhs_dilate=", d->window_dilation);
  if (rev) ROW(" rhs_reversal=", d->window_reversal ? 1 : 0);
#undef ROW
  hlc_text_puts(b, "}");
}

/* dim_labels such as b01f_01io->b01f from the dimension numbers. */
static int put_dim_labels(Conv *c, const Xla__ConvolutionDimensionNumbers *d, const char *what) {
  size_t ns = d->n_input_spatial_dimensions;
  if (ns > 10 || d->n_kernel_spatial_dimensions != ns || d->n_output_spatial_dimensions != ns)
    return fail(c, "%s: xla.ConvolutionDimensionNumbers: %zu/%zu/%zu spatial dimensions", what,
                ns, d->n_kernel_spatial_dimensions, d->n_output_spatial_dimensions);
  char t[3][16];
  const int64_t *sp[3] = {d->input_spatial_dimensions, d->kernel_spatial_dimensions,
                          d->output_spatial_dimensions};
  int64_t a[3] = {d->input_batch_dimension, d->kernel_input_feature_dimension, d->output_batch_dimension};
  int64_t f[3] = {d->input_feature_dimension, d->kernel_output_feature_dimension, d->output_feature_dimension};
  const char la[3] = {'b', 'i', 'b'}, lf[3] = {'f', 'o', 'f'};
  size_t rank = ns + 2;
  for (int k = 0; k < 3; k++) {
    memset(t[k], 0, sizeof t[k]);
    if (a[k] < 0 || (size_t)a[k] >= rank || f[k] < 0 || (size_t)f[k] >= rank || a[k] == f[k])
      return fail(c, "%s: xla.ConvolutionDimensionNumbers: dimension numbers out of range", what);
    t[k][a[k]] = la[k];
    t[k][f[k]] = lf[k];
    for (size_t i = 0; i < ns; i++) {
      if (sp[k][i] < 0 || (size_t)sp[k][i] >= rank || t[k][sp[k][i]])
        return fail(c, "%s: xla.ConvolutionDimensionNumbers: spatial dimension %lld repeated or out of range",
                    what, (long long)sp[k][i]);
      t[k][sp[k][i]] = (char)('0' + i);
    }
  }
  hlc_text_printf(&c->b, ", dim_labels=%s_%s->%s", t[0], t[1], t[2]);
  return 0;
}

static void put_dims_attr(HlcText *b, const char *name, const int64_t *v, size_t n, bool always) {
  if (!n && !always) return;
  hlc_text_printf(b, ", %s=", name);
  put_i64s(b, v, n);
}

static void put_replica_groups(HlcText *b, const Xla__HloInstructionProto *in) {
  const Xla__CollectiveDeviceListProto *l = in->collective_device_list;
  if (l && l->iota_replica_group_list) {
    const Xla__IotaReplicaGroupListProto *io = l->iota_replica_group_list;
    hlc_text_printf(b, ", replica_groups=[%lld,%lld]<=[", (long long)io->num_replica_groups,
                   (long long)io->num_devices_per_group);
    for (size_t i = 0; i < io->n_iota_reshape_dims; i++)
      hlc_text_printf(b, "%s%lld", i ? "," : "", (long long)io->iota_reshape_dims[i]);
    hlc_text_puts(b, "]");
    bool identity = true;
    for (size_t i = 0; i < io->n_iota_transpose_perm; i++) identity &= io->iota_transpose_perm[i] == (int32_t)i;
    if (!identity) {
      hlc_text_puts(b, "T(");
      for (size_t i = 0; i < io->n_iota_transpose_perm; i++)
        hlc_text_printf(b, "%s%d", i ? "," : "", (int)io->iota_transpose_perm[i]);
      hlc_text_puts(b, ")");
    }
    return;
  }
  size_t n = l && l->n_replica_groups ? l->n_replica_groups : in->n_replica_groups;
  Xla__ReplicaGroup **g = l && l->n_replica_groups ? l->replica_groups : in->replica_groups;
  hlc_text_puts(b, ", replica_groups={");
  for (size_t i = 0; i < n; i++) {
    if (i) hlc_text_puts(b, ",");
    put_i64s(b, g[i]->replica_ids, g[i]->n_replica_ids);
  }
  hlc_text_puts(b, "}");
}

static const char *precision_word(int p) {
  return p == 1 ? "high" : p == 2 ? "highest" : "default";
}

static int put_precision(Conv *c, const Xla__PrecisionConfig *p, const char *what) {
  static const char *const alg[] = {"unset", "alg_dot_any_f8_any_f8_f32",
    "alg_dot_any_f8_any_f8_f32_fast_accum", "alg_dot_f16_f16_f16", "alg_dot_f16_f16_f32",
    "alg_dot_bf16_bf16_bf16", "alg_dot_bf16_bf16_f32", "alg_dot_bf16_bf16_f32_x3",
    "alg_dot_bf16_bf16_f32_x6", "alg_dot_tf32_tf32_f32", "alg_dot_tf32_tf32_f32_x3",
    "alg_dot_f32_f32_f32", "alg_dot_f64_f64_f64", "alg_dot_bf16_bf16_f32_x9"};
  if (!p) return 0;
  bool any = false;
  for (size_t i = 0; i < p->n_operand_precision; i++) {
    if ((int)p->operand_precision[i] < 0 || (int)p->operand_precision[i] > 2)
      return fail(c, "%s: xla.PrecisionConfig.operand_precision[%zu]: %d", what, i, (int)p->operand_precision[i]);
    any |= p->operand_precision[i] != 0;
  }
  if (any) {
    hlc_text_puts(&c->b, ", operand_precision={");
    for (size_t i = 0; i < p->n_operand_precision; i++)
      hlc_text_printf(&c->b, "%s%s", i ? "," : "", precision_word((int)p->operand_precision[i]));
    hlc_text_puts(&c->b, "}");
  }
  if (p->algorithm) {
    if (p->algorithm < 0 || p->algorithm >= (int)(sizeof alg / sizeof alg[0]))
      return fail(c, "%s: xla.PrecisionConfig.algorithm: %d is not an algorithm this version knows",
                  what, (int)p->algorithm);
    hlc_text_printf(&c->b, ", algorithm=%s", alg[p->algorithm]);
  }
  return 0;
}

static int put_metadata(Conv *c, const Xla__OpMetadata *md) {
  if (!md) return 0;
  HlcText *b = &c->b;
  size_t before = b->n;
  hlc_text_puts(b, ", metadata={");
  size_t start = b->n;
#define STR(f) if (md->f && *md->f) { hlc_text_puts(b, b->n > start ? " " #f "=" : #f "="); \
    put_string(b, md->f, strlen(md->f)); }
#define INT(f) if (md->f) hlc_text_printf(b, "%s" #f "=%d", b->n > start ? " " : "", (int)md->f);
  STR(op_type) STR(op_name) STR(source_file) INT(source_line) INT(source_end_line)
  INT(source_column) INT(source_end_column) STR(deduplicated_name) INT(stack_frame_id)
  STR(scheduling_name)
#undef STR
#undef INT
  if (b->n == start) { b->n = before; return 0; }   /* XLA writes an empty metadata {} */
  hlc_text_puts(b, "}");
  return 0;
}

static int cmp_entry(const void *a, const void *b) {
  const Xla__FrontendAttributes__MapEntry *x = *(Xla__FrontendAttributes__MapEntry *const *)a;
  const Xla__FrontendAttributes__MapEntry *y = *(Xla__FrontendAttributes__MapEntry *const *)b;
  return strcmp(x->key ? x->key : "", y->key ? y->key : "");
}

/* Sorted by key, as XLA prints its map. */
static int put_frontend_attributes(Conv *c, const Xla__FrontendAttributes *fa) {
  if (!fa || !fa->n_map) return 0;
  Xla__FrontendAttributes__MapEntry **e = hlc_arena_memdup(&c->arena, fa->map, fa->n_map * sizeof *e);
  if (!e) return fail(c, "out of memory");
  qsort(e, fa->n_map, sizeof *e, cmp_entry);
  hlc_text_puts(&c->b, ", frontend_attributes={");
  for (size_t i = 0; i < fa->n_map; i++) {
    hlc_text_printf(&c->b, "%s%s=", i ? "," : "", e[i]->key ? e[i]->key : "");
    put_string(&c->b, e[i]->value ? e[i]->value : "", e[i]->value ? strlen(e[i]->value) : 0);
  }
  hlc_text_puts(&c->b, "}");
  return 0;
}

/* ---- Computations ---------------------------------------------------------- */

typedef struct Comp {
  const Xla__HloComputationProto *p;
  IdName *ids;               /* instruction id -> index, sorted */
  size_t nids;
  int32_t *order;            /* emission order (indices into p->instructions) */
} Comp;

static const char *comp_name(Conv *c, int64_t id, const char *what, const char *field) {
  int k = find_id(c->comp_ids, c->ncomp_ids, id);
  if (k < 0) {
    fail(c, "%s: xla.HloInstructionProto.%s: no computation has id %lld", what, field, (long long)id);
    return NULL;
  }
  return c->m->computations[k]->name;
}

static int put_called(Conv *c, const Xla__HloInstructionProto *in, const char *op, const char *what,
                      bool pred_selector) {
  size_t n = in->n_called_computation_ids;
  const char *names[2] = {NULL, NULL};
  if (n == 0) return 0;
  for (size_t i = 0; i < n && i < 2; i++)
    if (!(names[i] = comp_name(c, in->called_computation_ids[i], what, "called_computation_ids"))) return -1;
  HlcText *b = &c->b;
  if (strcmp(op, "while") == 0) {
    if (n != 2) return fail(c, "%s: xla.HloInstructionProto.called_computation_ids: while needs [body, condition], has %zu", what, n);
    hlc_text_printf(b, ", condition=%%%s, body=%%%s", names[1], names[0]);
    return 0;
  }
  if (strcmp(op, "select-and-scatter") == 0) {
    if (n != 2) return fail(c, "%s: xla.HloInstructionProto.called_computation_ids: select-and-scatter needs [select, scatter], has %zu", what, n);
    hlc_text_printf(b, ", select=%%%s, scatter=%%%s", names[0], names[1]);
    return 0;
  }
  if (strcmp(op, "conditional") == 0 && pred_selector && n == 2) {
    hlc_text_printf(b, ", true_computation=%%%s, false_computation=%%%s", names[0], names[1]);
    return 0;
  }
  const char *attr = strcmp(op, "conditional") == 0 ? "branch_computations"
                     : strcmp(op, "custom-call") == 0 ? "called_computations"
                     : strcmp(op, "fusion") == 0 || strncmp(op, "async-", 6) == 0 ? "calls"
                     : "to_apply";
  bool list = strcmp(attr, "branch_computations") == 0 || strcmp(attr, "called_computations") == 0;
  if (!list && n != 1)
    return fail(c, "%s: xla.HloInstructionProto.called_computation_ids: %s takes one computation, has %zu", what, op, n);
  hlc_text_printf(b, ", %s=%s", attr, list ? "{" : "");
  for (size_t i = 0; i < n; i++) {
    const char *nm = comp_name(c, in->called_computation_ids[i], what, "called_computation_ids");
    if (!nm) return -1;
    hlc_text_printf(b, "%s%%%s", i ? ", " : "", nm);
  }
  if (list) hlc_text_puts(b, "}");
  return 0;
}

static const char *operand_name(Conv *c, const Comp *k, int64_t id, const char *what, const char *field) {
  int i = find_id(k->ids, k->nids, local_id(id));
  if (i < 0) {
    fail(c, "%s: xla.HloInstructionProto.%s: no instruction of computation %s has id %lld", what,
         field, k->p->name, (long long)id);
    return NULL;
  }
  return k->p->instructions[i]->name;
}

static HloDtype operand_dtype(const Comp *k, int64_t id) {
  int i = find_id(k->ids, k->nids, local_id(id));
  const Xla__ShapeProto *s = i >= 0 ? k->p->instructions[i]->shape : NULL;
  return s ? hlc_dtype_from_xla_code((int)s->element_type) : HLO_DTYPE_INVALID;
}

/* The in-place collective-permute's slice sizes: XLA's proto holds its
 * slice_sizes lists back to back in dynamic_slice_sizes; cut them by the
 * ranks of the input buffers (one list per buffer, in turn). */
static int put_permute_slices(Conv *c, const Comp *k, const Xla__HloInstructionProto *in,
                              const char *what) {
  if (!in->n_dynamic_slice_sizes) return 0;
  int i = in->n_operand_ids ? find_id(k->ids, k->nids, local_id(in->operand_ids[0])) : -1;
  const Xla__ShapeProto *s = i >= 0 ? k->p->instructions[i]->shape : NULL;
  if (!s) return fail(c, "%s: xla.HloInstructionProto.dynamic_slice_sizes: no input buffer", what);
  size_t nb = s->n_tuple_shapes ? s->n_tuple_shapes : 1, at = 0;
  HlcText *b = &c->b;
  hlc_text_puts(b, ", slice_sizes={");
  for (size_t j = 0; at < in->n_dynamic_slice_sizes; j++) {
    const Xla__ShapeProto *e = s->n_tuple_shapes ? s->tuple_shapes[j % nb] : s;
    if (!e->n_dimensions || at + e->n_dimensions > in->n_dynamic_slice_sizes)
      return fail(c, "%s: xla.HloInstructionProto.dynamic_slice_sizes: %zu sizes do not cut into "
                  "lists of the input buffers' ranks", what, in->n_dynamic_slice_sizes);
    hlc_text_puts(b, j ? ", " : "");
    put_i64s(b, in->dynamic_slice_sizes + at, e->n_dimensions);
    at += e->n_dimensions;
  }
  hlc_text_puts(b, "}");
  return 0;
}

static int put_instruction(Conv *c, const Comp *k, const Xla__HloInstructionProto *in, bool root) {
  HlcText *b = &c->b;
  char what[300];
  const char *op = in->opcode ? in->opcode : "";
  snprintf(what, sizeof what, "computation %s, instruction %s (id %lld)", k->p->name, in->name,
           (long long)in->id);
  if (hlp_opcode_from_name(op, strlen(op)) < 0)
    return fail(c, "%s: xla.HloInstructionProto.opcode: unknown opcode \"%s\"", what, op);
  if (strcmp(op, "domain") == 0)
    return fail(c, "%s: xla.HloInstructionProto.domain_entry_sharding: domain instructions are not read by this version", what);
  hlc_text_printf(b, "  %s%%%s = ", root ? "ROOT " : "", in->name);
  if (!in->shape) return fail(c, "%s: xla.HloInstructionProto.shape: missing", what);
  if (put_shape(c, in->shape, what) != 0) return -1;
  hlc_text_printf(b, " %s(", op);
  if (strcmp(op, "parameter") == 0) {
    hlc_text_printf(b, "%lld", (long long)in->parameter_number);
  } else if (strcmp(op, "constant") == 0) {
    if (!in->literal) return fail(c, "%s: xla.HloInstructionProto.literal: missing", what);
    HloShape s;
    HloLiteral lit;
    char inner[400];
    const Xla__ShapeProto *sp = in->literal->shape ? in->literal->shape : in->shape;
    if (hpb_shape(&c->arena, sp, &s, inner, sizeof inner) != 0 ||
        hpb_literal(&c->arena, in->literal, &s, &lit, inner, sizeof inner) != 0)
      return fail(c, "%s: xla.HloInstructionProto.literal: %s", what, inner);
    hlp_print_literal(b, &lit);
  }
  for (size_t i = 0; i < in->n_operand_ids; i++) {
    const char *nm = operand_name(c, k, in->operand_ids[i], what, "operand_ids");
    if (!nm) return -1;
    hlc_text_printf(b, "%s%%%s", i ? ", " : "", nm);
  }
  hlc_text_puts(b, ")");

  /* Opcode-specific attributes, in XLA's printing order. */
  bool always_dims = strcmp(op, "broadcast") == 0 || strcmp(op, "transpose") == 0 ||
                     strcmp(op, "reduce") == 0 || strcmp(op, "reverse") == 0 || strcmp(op, "map") == 0;
  if (strcmp(op, "iota") == 0) {
    if (in->n_dimensions != 1)
      return fail(c, "%s: xla.HloInstructionProto.dimensions: iota needs one (its iota dimension), has %zu", what, in->n_dimensions);
    hlc_text_printf(b, ", iota_dimension=%lld", (long long)in->dimensions[0]);
  } else if (strcmp(op, "reshape") != 0 && strcmp(op, "dynamic-reshape") != 0) {
    put_dims_attr(b, "dimensions", in->dimensions, in->n_dimensions, always_dims);
  }
  if (strcmp(op, "get-tuple-element") == 0) hlc_text_printf(b, ", index=%lld", (long long)in->tuple_index);
  if (in->n_slice_dimensions) {
    hlc_text_puts(b, ", slice={");
    for (size_t i = 0; i < in->n_slice_dimensions; i++) {
      const Xla__HloInstructionProto__SliceDimensions *s = in->slice_dimensions[i];
      /* As HloSliceInstruction prints it: the stride only when it is not 1. */
      int64_t stride = s->stride ? s->stride : 1;
      hlc_text_printf(b, "%s[%lld:%lld", i ? ", " : "", (long long)s->start, (long long)s->limit);
      if (stride != 1) hlc_text_printf(b, ":%lld", (long long)stride);
      hlc_text_puts(b, "]");
    }
    hlc_text_puts(b, "}");
  }
  if (strncmp(op, "collective-permute", 18) == 0) {
    if (put_permute_slices(c, k, in, what) != 0) return -1;
  } else {
    put_dims_attr(b, "dynamic_slice_sizes", in->dynamic_slice_sizes, in->n_dynamic_slice_sizes, false);
  }
  if (in->padding_config && strcmp(op, "pad") == 0) {
    hlc_text_puts(b, ", padding=");
    for (size_t i = 0; i < in->padding_config->n_dimensions; i++) {
      const Xla__PaddingConfig__PaddingConfigDimension *d = in->padding_config->dimensions[i];
      hlc_text_printf(b, "%s%lld_%lld", i ? "x" : "", (long long)d->edge_padding_low, (long long)d->edge_padding_high);
      if (d->interior_padding) hlc_text_printf(b, "_%lld", (long long)d->interior_padding);
    }
    if (!in->padding_config->n_dimensions) hlc_text_puts(b, "0_0");   /* never valid: the verifier says why */
  }
  if (in->window && in->window->n_dimensions) put_window(b, in->window);
  if (in->convolution_dimension_numbers && put_dim_labels(c, in->convolution_dimension_numbers, what) != 0) return -1;
  if (in->feature_group_count > 1) hlc_text_printf(b, ", feature_group_count=%lld", (long long)in->feature_group_count);
  if (in->batch_group_count > 1) hlc_text_printf(b, ", batch_group_count=%lld", (long long)in->batch_group_count);
  const Xla__DotDimensionNumbers *dd = in->dot_dimension_numbers;
  if (in->ragged_dot_dimension_numbers && in->ragged_dot_dimension_numbers->dot_dimension_numbers)
    dd = in->ragged_dot_dimension_numbers->dot_dimension_numbers;
  if (dd) {
    put_dims_attr(b, "lhs_batch_dims", dd->lhs_batch_dimensions, dd->n_lhs_batch_dimensions, false);
    put_dims_attr(b, "lhs_contracting_dims", dd->lhs_contracting_dimensions, dd->n_lhs_contracting_dimensions, false);
    put_dims_attr(b, "rhs_batch_dims", dd->rhs_batch_dimensions, dd->n_rhs_batch_dimensions, false);
    put_dims_attr(b, "rhs_contracting_dims", dd->rhs_contracting_dimensions, dd->n_rhs_contracting_dimensions, false);
  }
  if (in->ragged_dot_dimension_numbers) {
    const Xla__RaggedDotDimensionNumbers *r = in->ragged_dot_dimension_numbers;
    put_dims_attr(b, "lhs_ragged_dims", r->lhs_ragged_dimensions, r->n_lhs_ragged_dimensions, false);
    put_dims_attr(b, "rhs_group_dims", r->rhs_group_dimensions, r->n_rhs_group_dimensions, false);
  }
  if (in->gather_dimension_numbers) {
    const Xla__GatherDimensionNumbers *g = in->gather_dimension_numbers;
    put_dims_attr(b, "offset_dims", g->offset_dims, g->n_offset_dims, true);
    put_dims_attr(b, "collapsed_slice_dims", g->collapsed_slice_dims, g->n_collapsed_slice_dims, true);
    put_dims_attr(b, "start_index_map", g->start_index_map, g->n_start_index_map, true);
    put_dims_attr(b, "operand_batching_dims", g->operand_batching_dims, g->n_operand_batching_dims, false);
    put_dims_attr(b, "start_indices_batching_dims", g->start_indices_batching_dims, g->n_start_indices_batching_dims, false);
    hlc_text_printf(b, ", index_vector_dim=%lld", (long long)g->index_vector_dim);
    put_dims_attr(b, "slice_sizes", in->gather_slice_sizes, in->n_gather_slice_sizes, true);
  }
  if (in->scatter_dimension_numbers) {
    const Xla__ScatterDimensionNumbers *s = in->scatter_dimension_numbers;
    put_dims_attr(b, "update_window_dims", s->update_window_dims, s->n_update_window_dims, true);
    put_dims_attr(b, "inserted_window_dims", s->inserted_window_dims, s->n_inserted_window_dims, true);
    put_dims_attr(b, "scatter_dims_to_operand_dims", s->scatter_dims_to_operand_dims, s->n_scatter_dims_to_operand_dims, true);
    put_dims_attr(b, "input_batching_dims", s->input_batching_dims, s->n_input_batching_dims, false);
    put_dims_attr(b, "scatter_indices_batching_dims", s->scatter_indices_batching_dims, s->n_scatter_indices_batching_dims, false);
    hlc_text_printf(b, ", index_vector_dim=%lld", (long long)s->index_vector_dim);
  }
  if (in->indices_are_sorted) hlc_text_puts(b, ", indices_are_sorted=true");
  if (in->unique_indices) hlc_text_puts(b, ", unique_indices=true");
  if (put_precision(c, in->precision_config, what) != 0) return -1;
  if (strcmp(op, "compare") == 0) {
    const char *dir = in->comparison_direction ? in->comparison_direction : "";
    static const char *const dirs[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
    bool ok = false;
    for (int i = 0; i < 6; i++) ok |= strcmp(dir, dirs[i]) == 0;
    if (!ok) return fail(c, "%s: xla.HloInstructionProto.comparison_direction: \"%s\" is not EQ, NE, GE, GT, LE or LT", what, dir);
    hlc_text_printf(b, ", direction=%s", dir);
    const char *ty = in->comparison_type ? in->comparison_type : "";
    if (*ty) {
      HloDtype t = in->n_operand_ids ? operand_dtype(k, in->operand_ids[0]) : HLO_DTYPE_INVALID;
      HloKind kd = t == HLO_DTYPE_INVALID ? HLO_KIND_TUPLE : hlc_dtype_kind(t);
      const char *dflt = kd == HLO_KIND_FLOAT || kd == HLO_KIND_COMPLEX ? "FLOAT"
                         : kd == HLO_KIND_SINT ? "SIGNED" : "UNSIGNED";
      if (strcmp(ty, "FLOAT") && strcmp(ty, "TOTALORDER") && strcmp(ty, "SIGNED") && strcmp(ty, "UNSIGNED"))
        return fail(c, "%s: xla.HloInstructionProto.comparison_type: \"%s\" is not FLOAT, TOTALORDER, SIGNED or UNSIGNED", what, ty);
      if (strcmp(ty, dflt) != 0) hlc_text_printf(b, ", type=%s", ty);
    }
  }
  if (strcmp(op, "fusion") == 0) {
    const char *kind = in->fusion_kind && *in->fusion_kind ? in->fusion_kind : "kLoop";
    hlc_text_printf(b, ", kind=%s", kind);
  }
  if (strcmp(op, "sort") == 0 && in->is_stable) hlc_text_puts(b, ", is_stable=true");
  if (strcmp(op, "rng") == 0) {
    if (in->distribution != XLA__RANDOM_DISTRIBUTION__RNG_UNIFORM && in->distribution != XLA__RANDOM_DISTRIBUTION__RNG_NORMAL)
      return fail(c, "%s: xla.HloInstructionProto.distribution: %d is not RNG_UNIFORM or RNG_NORMAL", what, (int)in->distribution);
    hlc_text_printf(b, ", distribution=%s", in->distribution == XLA__RANDOM_DISTRIBUTION__RNG_UNIFORM ? "rng_uniform" : "rng_normal");
  }
  if (strcmp(op, "rng-bit-generator") == 0) {
    static const char *const alg[] = {"rng_default", "rng_three_fry", "rng_philox"};
    if ((int)in->rng_algorithm < 0 || (int)in->rng_algorithm > 2)
      return fail(c, "%s: xla.HloInstructionProto.rng_algorithm: %d", what, (int)in->rng_algorithm);
    hlc_text_printf(b, ", algorithm=%s", alg[in->rng_algorithm]);
  }
  if (strcmp(op, "rng-get-and-update-state") == 0) hlc_text_printf(b, ", delta=%lld", (long long)in->delta);
  if (strcmp(op, "fft") == 0) {
    static const char *const ft[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
    if ((int)in->fft_type < 0 || (int)in->fft_type > 3)
      return fail(c, "%s: xla.HloInstructionProto.fft_type: %d", what, (int)in->fft_type);
    hlc_text_printf(b, ", fft_type=%s", ft[in->fft_type]);
    put_dims_attr(b, "fft_length", in->fft_length, in->n_fft_length, true);
  }
  if (strcmp(op, "reduce-precision") == 0)
    hlc_text_printf(b, ", exponent_bits=%d, mantissa_bits=%d", (int)in->exponent_bits, (int)in->mantissa_bits);
  if (strncmp(op, "batch-norm-", 11) == 0)
    hlc_text_printf(b, ", epsilon=%.9g, feature_index=%lld", (double)in->epsilon, (long long)in->feature_index);
  if (strcmp(op, "triangular-solve") == 0 && in->triangular_solve_options) {
    const Xla__TriangularSolveOptions *t = in->triangular_solve_options;
    static const char *const tr[] = {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
    if ((int)t->transpose_a < 1 || (int)t->transpose_a > 3)
      return fail(c, "%s: xla.TriangularSolveOptions.transpose_a: %d", what, (int)t->transpose_a);
    hlc_text_printf(b, ", left_side=%s, lower=%s, unit_diagonal=%s, transpose_a=%s",
                   t->left_side ? "true" : "false", t->lower ? "true" : "false",
                   t->unit_diagonal ? "true" : "false", tr[t->transpose_a]);
  }
  if (strcmp(op, "cholesky") == 0)
    hlc_text_printf(b, ", lower=%s", in->cholesky_options && in->cholesky_options->lower ? "true" : "false");
  if (strcmp(op, "topk") == 0)
    hlc_text_printf(b, ", k=%lld, largest=%s", (long long)in->k, in->largest ? "true" : "false");
  if (in->channel_id > 0) hlc_text_printf(b, ", channel_id=%lld", (long long)in->channel_id);
  if (is_collective(op)) put_replica_groups(b, in);
  if (in->constrain_layout && strcmp(op, "custom-call") != 0) hlc_text_puts(b, ", constrain_layout=true");
  if (in->use_global_device_ids) hlc_text_puts(b, ", use_global_device_ids=true");
  if (in->n_source_target_pairs) {
    hlc_text_puts(b, ", source_target_pairs={");
    for (size_t i = 0; i < in->n_source_target_pairs; i++)
      hlc_text_printf(b, "%s{%lld,%lld}", i ? "," : "", (long long)in->source_target_pairs[i]->source,
                     (long long)in->source_target_pairs[i]->target);
    hlc_text_puts(b, "}");
  }
  if (in->is_host_transfer) hlc_text_puts(b, ", is_host_transfer=true");
  if (in->infeed_config.len) { hlc_text_puts(b, ", infeed_config="); put_string(b, (const char *)in->infeed_config.data, in->infeed_config.len); }
  if (in->outfeed_config.len) { hlc_text_puts(b, ", outfeed_config="); put_string(b, (const char *)in->outfeed_config.data, in->outfeed_config.len); }
  if (strcmp(op, "outfeed") == 0 && in->outfeed_shape) {
    hlc_text_puts(b, ", outfeed_shape=");
    if (put_shape(c, in->outfeed_shape, what) != 0) return -1;
  }
  if (in->parameter_replication && in->parameter_replication->n_replicated_at_leaf_buffers) {
    hlc_text_puts(b, ", parameter_replication={");
    for (size_t i = 0; i < in->parameter_replication->n_replicated_at_leaf_buffers; i++)
      hlc_text_printf(b, "%s%s", i ? "," : "", in->parameter_replication->replicated_at_leaf_buffers[i] ? "true" : "false");
    hlc_text_puts(b, "}");
  }
  if (strcmp(op, "custom-call") == 0) {
    hlc_text_puts(b, ", custom_call_target=");
    put_string(b, in->custom_call_target ? in->custom_call_target : "", in->custom_call_target ? strlen(in->custom_call_target) : 0);
    if (in->custom_call_has_side_effect) hlc_text_puts(b, ", custom_call_has_side_effect=true");
    if (in->custom_call_schedule == XLA__CUSTOM_CALL_SCHEDULE__SCHEDULE_LATEST) hlc_text_puts(b, ", schedule=SCHEDULE_LATEST");
    else if (in->custom_call_schedule == XLA__CUSTOM_CALL_SCHEDULE__SCHEDULE_EARLIEST) hlc_text_puts(b, ", schedule=SCHEDULE_EARLIEST");
    else if (in->custom_call_schedule != XLA__CUSTOM_CALL_SCHEDULE__SCHEDULE_NONE)
      return fail(c, "%s: xla.HloInstructionProto.custom_call_schedule: %d", what, (int)in->custom_call_schedule);
    static const char *const api[] = {NULL, NULL, "API_VERSION_STATUS_RETURNING",
                                      "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
    if ((int)in->custom_call_api_version < 0 || (int)in->custom_call_api_version > 4)
      return fail(c, "%s: xla.HloInstructionProto.custom_call_api_version: %d is not an API version this version knows",
                  what, (int)in->custom_call_api_version);
    if (api[in->custom_call_api_version]) hlc_text_printf(b, ", api_version=%s", api[in->custom_call_api_version]);
    if (in->constrain_layout) {
      hlc_text_puts(b, ", operand_layout_constraints={");
      for (size_t i = 0; i < in->n_operand_shapes_with_layout; i++) {
        if (i) hlc_text_puts(b, ", ");
        if (put_shape(c, in->operand_shapes_with_layout[i], what) != 0) return -1;
      }
      hlc_text_puts(b, "}");
    }
    if (in->literal) {
      HloShape s;
      HloLiteral lit;
      char inner[400];
      if (hpb_shape(&c->arena, in->literal->shape, &s, inner, sizeof inner) != 0 ||
          hpb_literal(&c->arena, in->literal, &s, &lit, inner, sizeof inner) != 0)
        return fail(c, "%s: xla.HloInstructionProto.literal: %s", what, inner);
      hlc_text_puts(b, ", literal=");
      hlp_print_shape(b, &s, false);
      hlc_text_puts(b, " ");
      hlp_print_literal(b, &lit);
    }
  }
  if (in->n_output_operand_aliasing) {
    hlc_text_puts(b, ", output_to_operand_aliasing={");
    for (size_t i = 0; i < in->n_output_operand_aliasing; i++) {
      const Xla__OutputOperandAliasing *a = in->output_operand_aliasing[i];
      hlc_text_puts(b, i ? ", " : "");
      put_i64s(b, a->output_shape_index, a->n_output_shape_index);
      hlc_text_printf(b, ": (%lld, ", (long long)a->operand_index);
      put_i64s(b, a->operand_shape_index, a->n_operand_shape_index);
      hlc_text_puts(b, ")");
    }
    hlc_text_puts(b, "}");
  }
  if (in->async_execution_thread && *in->async_execution_thread && strcmp(in->async_execution_thread, "main") != 0) {
    hlc_text_puts(b, ", async_execution_thread=");
    put_string(b, in->async_execution_thread, strlen(in->async_execution_thread));
  }
  if (in->optional_cross_program_prefetch_index_case ==
      XLA__HLO_INSTRUCTION_PROTO__OPTIONAL_CROSS_PROGRAM_PREFETCH_INDEX_CROSS_PROGRAM_PREFETCH_INDEX)
    hlc_text_printf(b, ", cross_program_prefetch_index=%d", (int)in->cross_program_prefetch_index);
  if (in->is_composite) hlc_text_puts(b, ", is_composite=true");
  bool pred_selector = in->n_operand_ids && operand_dtype(k, in->operand_ids[0]) == HLO_PRED;
  if (put_called(c, in, op, what, pred_selector) != 0) return -1;
  if (in->sharding && put_sharding(c, "sharding", in->sharding, what) != 0) return -1;
  if (put_frontend_attributes(c, in->frontend_attributes) != 0) return -1;
  if (in->n_control_predecessor_ids) {
    hlc_text_puts(b, ", control-predecessors={");
    for (size_t i = 0; i < in->n_control_predecessor_ids; i++) {
      const char *nm = operand_name(c, k, in->control_predecessor_ids[i], what, "control_predecessor_ids");
      if (!nm) return -1;
      hlc_text_printf(b, "%s%%%s", i ? ", " : "", nm);
    }
    hlc_text_puts(b, "}");
  }
  if (in->result_accuracy) {
    const Xla__ResultAccuracy *r = in->result_accuracy;
    if (r->specs_case == XLA__RESULT_ACCURACY__SPECS_TOLERANCE && r->tolerance) {
      hlc_text_printf(b, ", result_accuracy={tolerance={atol=%.17g,rtol=%.17g,ulps=%lld}}",
                     r->tolerance->atol, r->tolerance->rtol, (long long)r->tolerance->ulps);
    } else if (r->specs_case == XLA__RESULT_ACCURACY__SPECS_MODE) {
      if ((int)r->mode < 0 || (int)r->mode > 1)
        return fail(c, "%s: xla.ResultAccuracy.mode: %d is not DEFAULT or HIGHEST", what, (int)r->mode);
      if (r->mode == XLA__RESULT_ACCURACY__MODE__HIGHEST) hlc_text_puts(b, ", result_accuracy={mode=highest}");
    }
  }
  if (put_metadata(c, in->metadata) != 0) return -1;
  if (in->backend_config.len) {
    hlc_text_puts(b, ", backend_config=");
    put_string(b, (const char *)in->backend_config.data, in->backend_config.len);
  }
  hlc_text_puts(b, "\n");
  return 0;
}

/* Emission order: the module's schedule for this computation when it lists
 * every instruction once, else the proto's order made into a dependency
 * order (operands and control predecessors first); a cycle is an error. */
static int order_instructions(Conv *c, Comp *k, const Xla__HloScheduleProto__SequencesEntry *seq) {
  const Xla__HloComputationProto *p = k->p;
  size_t n = p->n_instructions;
  k->order = hlc_arena_alloc(&c->arena, (n + 1) * sizeof *k->order);
  uint8_t *state = hlc_arena_alloc(&c->arena, n + 1);   /* 0 new, 1 on stack, 2 done */
  int32_t *stack = hlc_arena_alloc(&c->arena, (n + 1) * sizeof *stack);
  size_t *next = hlc_arena_alloc(&c->arena, (n + 1) * sizeof *next);
  if (!k->order || !state || !stack || !next) return fail(c, "out of memory");
  memset(state, 0, n + 1);
  size_t out = 0;
  if (seq && seq->value && seq->value->n_instruction_ids == n) {
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
      int j = find_id(k->ids, k->nids, local_id(seq->value->instruction_ids[i]));
      ok = j >= 0 && !state[j];
      if (ok) { state[j] = 1; k->order[i] = j; }
    }
    if (ok) return 0;
    memset(state, 0, n + 1);
  }
  for (size_t s = 0; s < n; s++) {
    if (state[s]) continue;
    size_t sp = 0;
    stack[sp] = (int32_t)s; next[sp] = 0; sp++;
    state[s] = 1;
    while (sp) {
      const Xla__HloInstructionProto *in = p->instructions[stack[sp - 1]];
      size_t e = next[sp - 1]++;
      size_t nops = in->n_operand_ids, ndeps = nops + in->n_control_predecessor_ids;
      if (e < ndeps) {
        int64_t id = e < nops ? in->operand_ids[e] : in->control_predecessor_ids[e - nops];
        int j = find_id(k->ids, k->nids, local_id(id));
        if (j < 0) continue;   /* reported with its name when the instruction is written */
        if (state[j] == 1)
          return fail(c, "computation %s, instruction %s (id %lld): xla.HloInstructionProto.%s: "
                      "instruction %s is part of a cycle", p->name, in->name, (long long)in->id,
                      e < nops ? "operand_ids" : "control_predecessor_ids", p->instructions[j]->name);
        if (state[j] == 0) { state[j] = 1; stack[sp] = j; next[sp] = 0; sp++; }
        continue;
      }
      state[stack[sp - 1]] = 2;
      k->order[out++] = stack[--sp];
    }
  }
  return 0;
}

static int put_computation(Conv *c, const Xla__HloComputationProto *p, bool entry,
                           const Xla__HloScheduleProto *sched) {
  Comp k = {p, NULL, 0, NULL};
  char what[300];
  snprintf(what, sizeof what, "computation %s (id %lld)", p->name, (long long)p->id);
  if (!p->name || !*p->name) return fail(c, "%s: xla.HloComputationProto.name: empty", what);
  if (!p->n_instructions) return fail(c, "%s: xla.HloComputationProto.instructions: none", what);
  k.nids = p->n_instructions;
  k.ids = hlc_arena_alloc(&c->arena, k.nids * sizeof *k.ids);
  if (!k.ids) return fail(c, "out of memory");
  for (size_t i = 0; i < k.nids; i++) {
    if (!p->instructions[i]->name || !*p->instructions[i]->name)
      return fail(c, "%s: xla.HloInstructionProto.name: instruction %zu has no name", what, i);
    k.ids[i] = (IdName){local_id(p->instructions[i]->id), (int32_t)i};
  }
  qsort(k.ids, k.nids, sizeof *k.ids, cmp_id);
  for (size_t i = 1; i < k.nids; i++)
    if (k.ids[i].id == k.ids[i - 1].id)
      return fail(c, "%s: xla.HloInstructionProto.id: local id %lld (the low 32 bits) is used twice",
                  what, (long long)k.ids[i].id);
  int root = find_id(k.ids, k.nids, local_id(p->root_id));
  if (root < 0)
    return fail(c, "%s: xla.HloComputationProto.root_id: no instruction has id %lld", what, (long long)p->root_id);
  const Xla__HloScheduleProto__SequencesEntry *seq = NULL;
  for (size_t i = 0; sched && i < sched->n_sequences; i++)
    if (sched->sequences[i]->key == p->id) seq = sched->sequences[i];
  if (order_instructions(c, &k, seq) != 0) return -1;
  hlc_text_printf(&c->b, "%s%%%s {\n", entry ? "ENTRY " : "", p->name);
  for (size_t i = 0; i < p->n_instructions; i++)
    if (put_instruction(c, &k, p->instructions[k.order[i]], k.order[i] == root) != 0) return -1;
  hlc_text_puts(&c->b, "}");
  if (p->execution_thread && *p->execution_thread && strcmp(p->execution_thread, "main") != 0) {
    hlc_text_puts(&c->b, ", execution_thread=");
    put_string(&c->b, p->execution_thread, strlen(p->execution_thread));
  }
  hlc_text_puts(&c->b, "\n\n");
  return 0;
}

static int put_header(Conv *c) {
  const Xla__HloModuleProto *m = c->m;
  HlcText *b = &c->b;
  hlc_text_printf(b, "HloModule %s", m->name && *m->name ? m->name : "module");
  if (m->schedule && m->schedule->n_sequences) hlc_text_puts(b, ", is_scheduled=true");
  const Xla__ProgramShapeProto *ps = m->host_program_shape;
  if (ps && ps->result) {
    hlc_text_puts(b, ", entry_computation_layout={(");
    for (size_t i = 0; i < ps->n_parameters; i++) {
      if (i) hlc_text_puts(b, ", ");
      if (put_shape(c, ps->parameters[i], "xla.HloModuleProto.host_program_shape.parameters") != 0) return -1;
    }
    hlc_text_puts(b, ")->");
    if (put_shape(c, ps->result, "xla.HloModuleProto.host_program_shape.result") != 0) return -1;
    hlc_text_puts(b, "}");
  }
  if (m->input_output_alias && m->input_output_alias->n_entries) {
    hlc_text_puts(b, ", input_output_alias={ ");
    for (size_t i = 0; i < m->input_output_alias->n_entries; i++) {
      const Xla__HloInputOutputAliasProto__AliasEntryProto *e = m->input_output_alias->entries[i];
      hlc_text_puts(b, i ? ", " : "");
      put_i64s(b, e->output_shape_index, e->n_output_shape_index);
      hlc_text_printf(b, ": (%lld, ", (long long)e->parameter_number);
      put_i64s(b, e->parameter_shape_index, e->n_parameter_shape_index);
      hlc_text_printf(b, ", %s)", e->kind == XLA__KIND__MUST_ALIAS ? "must-alias" : "may-alias");
    }
    hlc_text_puts(b, " }");
  }
  if (m->buffer_donor && m->buffer_donor->n_entries) {
    hlc_text_puts(b, ", buffer_donor={ ");
    for (size_t i = 0; i < m->buffer_donor->n_entries; i++) {
      const Xla__HloBufferDonorProto__BufferDonorEntryProto *e = m->buffer_donor->entries[i];
      hlc_text_printf(b, "%s(%lld, ", i ? ", " : "", (long long)e->parameter_number);
      put_i64s(b, e->parameter_shape_index, e->n_parameter_shape_index);
      hlc_text_puts(b, ")");
    }
    hlc_text_puts(b, " }");
  }
  if (put_frontend_attributes(c, m->frontend_attributes) != 0) return -1;
  hlc_text_puts(b, "\n\n");
  return 0;
}

char *hpb_text_of_module(const Xla__HloModuleProto *m, size_t *len, char *err, size_t errn) {
  Conv c = {.m = m, .err = err, .errn = errn};
  hlc_arena_init(&c.arena);
  int rc = -1;
  if (!m->n_computations) { fail(&c, "xla.HloModuleProto.computations: none"); goto out; }
  c.ncomp_ids = m->n_computations;
  c.comp_ids = hlc_arena_alloc(&c.arena, c.ncomp_ids * sizeof *c.comp_ids);
  if (!c.comp_ids) { fail(&c, "out of memory"); goto out; }
  for (size_t i = 0; i < m->n_computations; i++) c.comp_ids[i] = (IdName){m->computations[i]->id, (int32_t)i};
  qsort(c.comp_ids, c.ncomp_ids, sizeof *c.comp_ids, cmp_id);
  for (size_t i = 1; i < c.ncomp_ids; i++)
    if (c.comp_ids[i].id == c.comp_ids[i - 1].id) {
      fail(&c, "xla.HloComputationProto.id: %lld is used twice", (long long)c.comp_ids[i].id);
      goto out;
    }
  /* The entry: by id (XLA writes both), else by name, else the last one. */
  int entry = find_id(c.comp_ids, c.ncomp_ids, m->entry_computation_id);
  if (m->entry_computation_name && *m->entry_computation_name) {
    int by_name = -1;
    for (size_t i = 0; i < m->n_computations; i++)
      if (m->computations[i]->name && strcmp(m->computations[i]->name, m->entry_computation_name) == 0) by_name = (int)i;
    if (by_name < 0) { fail(&c, "xla.HloModuleProto.entry_computation_name: no computation is named \"%s\"", m->entry_computation_name); goto out; }
    if (entry < 0 || strcmp(m->computations[entry]->name, m->entry_computation_name) != 0) entry = by_name;
  }
  if (entry < 0) entry = (int)m->n_computations - 1;
  if (put_header(&c) != 0) goto out;
  for (size_t i = 0; i < m->n_computations; i++)
    if (put_computation(&c, m->computations[i], (int)i == entry, m->schedule) != 0) goto out;
  if (c.b.oom) { fail(&c, "out of memory"); goto out; }
  rc = 0;
out:
  hlc_arena_free(&c.arena);
  if (rc != 0) { free(c.b.p); return NULL; }
  if (len) *len = c.b.n;
  return c.b.p;
}
