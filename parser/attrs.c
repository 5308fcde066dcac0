/* attrs.c: instruction and module attributes, from generic item trees to
 * the typed fields of ir.h (spec sections 3.1, 5.1, 6, 9).
 *
 * One table row per attribute hlorun knows: its name, which opcodes take it,
 * whether it is required, and the function that checks and converts the
 * value. A known attribute on an opcode that does not take it, a missing
 * required one, a duplicate, or a malformed value is an error; a name hlorun
 * has never heard of is kept verbatim with a warning (newer XLA dumps must
 * still load). Every attribute stays in HloInstr.attrs for the printer.
 */
#include "parser/syntax.h"
#include "ir/collective.h"
#include "ir/sharding.h"
#include "hlo.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct A {
  HlpParser *P;
  HloInstr *ins;
  HloAttr *attr;
  HloVal **v;      /* the value items */
  int32_t n;
  uint32_t off;    /* offset of the value */
} A;

static int bad(A *a, const char *what) {
  hlp_error(a->P, a->off, "attribute %s expects %s", a->attr->name, what);
  return -1;
}

/* ---- Value helpers -------------------------------------------------------- */

static bool is_tok(const HloVal *v, int tok) { return v->kind == HLO_VAL_TOKEN && v->tok == tok; }

static bool val_int(const HloVal *v, int64_t *out) {
  if (!is_tok(v, TK_INT)) return false;
  const char *s = v->text;
  bool neg = s[0] == '-';
  uint64_t x = 0;
  for (size_t i = neg; i < v->len; i++) x = x * 10 + (uint64_t)(s[i] - '0');
  *out = neg ? (int64_t)(0 - x) : (int64_t)x;
  return true;
}

static bool val_word(const HloVal *v, const char *w) {
  return is_tok(v, TK_IDENT) && strcmp(v->text, w) == 0;
}

static int get_int(A *a, int64_t *out) {
  if (a->n != 1 || !val_int(a->v[0], out)) return bad(a, "an integer");
  return 0;
}

static int get_nonneg(A *a, int64_t *out) {
  if (get_int(a, out)) return -1;
  if (*out < 0) return bad(a, "a non-negative integer");
  return 0;
}

static int get_bool(A *a, bool *out) {
  if (a->n == 1 && val_word(a->v[0], "true")) { *out = true; return 0; }
  if (a->n == 1 && val_word(a->v[0], "false")) { *out = false; return 0; }
  return bad(a, "true or false");
}

static int get_float(A *a, double *out) {
  if (a->n != 1) return bad(a, "a number");
  HloVal *v = a->v[0];
  if (is_tok(v, TK_INT) || is_tok(v, TK_DECIMAL)) *out = strtod(v->text, NULL);
  else if (val_word(v, "inf")) *out = INFINITY;
  else if (is_tok(v, TK_NEGINF)) *out = -INFINITY;
  else return bad(a, "a number");
  return 0;
}

static int get_string(A *a, const char **out) {
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_STRING) return bad(a, "a string");
  *out = a->v[0]->text;
  return 0;
}

static bool val_ints(HlpParser *P, const HloVal *v, HloI64s *out) {
  if (v->kind != HLO_VAL_BRACE || v->syn) return false;   /* syn: a stray ',' ({1,,0}) */
  out->n = v->nitems;
  out->v = hlp_alloc(P, (size_t)(v->nitems ? v->nitems : 1) * sizeof *out->v);
  for (int32_t i = 0; i < v->nitems; i++)
    if (!val_int(v->items[i], &out->v[i]) || (i && v->items[i]->sep != 2)) return false;
  return true;
}

static int get_ints(A *a, HloI64s *out) {
  if (a->n != 1 || !val_ints(a->P, a->v[0], out)) return bad(a, "a list of integers {a,b,...}");
  return 0;
}

static int get_word(A *a, const char *const *words, int nwords, bool icase, int *out) {
  if (a->n == 1 && is_tok(a->v[0], TK_IDENT))
    for (int i = 0; i < nwords; i++)
      if (words[i] && (icase ? strcasecmp(a->v[0]->text, words[i]) : strcmp(a->v[0]->text, words[i])) == 0) {
        *out = i;
        return 0;
      }
  hlp_error(a->P, a->off, "unknown value for attribute %s", a->attr->name);
  return -1;
}

/* Names in values are printed with '%'. */
static void canon_name(HlpParser *P, HloVal *v, const char *name) {
  size_t n = strlen(name);
  char *t = hlp_alloc(P, n + 2);
  t[0] = '%';
  memcpy(t + 1, name, n);
  v->text = t;
  v->len = n + 1;
  v->tok = TK_NAME;
  v->word = true;
}

static const char *name_of(const HloVal *v, size_t *n) {
  const char *s = v->text;
  *n = v->len;
  if (*n && s[0] == '%') { s++; (*n)--; }
  return s;
}

static HloComputation *val_comp(A *a, HloVal *v) {
  if (v->kind == HLO_VAL_COMP) return a->P->lower_inline(a->P, v);
  if (!is_tok(v, TK_NAME) && !is_tok(v, TK_IDENT)) {
    bad(a, "a computation name");
    return NULL;
  }
  size_t n;
  const char *s = name_of(v, &n);
  HloComputation *c = hlp_find_comp(a->P, s, n);
  if (!c) {
    hlp_error(a->P, v->off, "computation '%.*s' is not defined before this use", (int)n, s);
    return NULL;
  }
  canon_name(a->P, v, c->name);
  return c;
}

static void add_called(A *a, HloCallRole role, HloComputation *c) {
  HloInstr *ins = a->ins;
  HloCalled *nc = hlp_alloc(a->P, (size_t)(ins->ncalled + 1) * sizeof *nc);
  if (ins->ncalled) memcpy(nc, ins->called, (size_t)ins->ncalled * sizeof *nc);
  nc[ins->ncalled++] = (HloCalled){role, c};
  ins->called = nc;
}

static int comp_attr(A *a, HloCallRole role) {
  if (a->n != 1) return bad(a, "a computation");
  HloComputation *c = val_comp(a, a->v[0]);
  if (!c) return -1;
  add_called(a, role, c);
  return 0;
}

static int comp_list_attr(A *a, HloCallRole role) {
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_BRACE) return bad(a, "a list of computations");
  HloVal *b = a->v[0];
  for (int32_t i = 0; i < b->nitems; i++) {
    HloComputation *c = val_comp(a, b->items[i]);
    if (!c) return -1;
    add_called(a, role, c);
  }
  return 0;
}

/* ---- Attribute functions -------------------------------------------------- */

static int at_dimensions(A *a) {
  a->ins->has_dimensions = true;
  return get_ints(a, &a->ins->dimensions);
}
static int at_index(A *a) { return get_nonneg(a, &a->ins->tuple_index); }
static int at_iota_dimension(A *a) { return get_nonneg(a, &a->ins->iota_dimension); }

/* "3x3" / "3" / "0_1x1_1" split into per-dimension fields. */
static int split_x(A *a, const HloVal *v, bool pad, int64_t (*out)[3], int max) {
  if (!(is_tok(v, TK_INT) || is_tok(v, TK_DXD) || (pad && is_tok(v, TK_PAD)))) return -1;
  const char *s = v->text;
  int k = 0;
  while (*s) {
    if (k >= max) return -1;
    for (int f = 0; f < 3; f++) {
      char *e;
      out[k][f] = strtoll(s, &e, 10);
      s = e;
      if (*s == '_') { if (!pad || f == 2) return -1; s++; continue; }
      if (pad && f == 0) return -1;
      if (!pad) break;
      if (f == 1) { out[k][2] = 0; break; }
      break;
    }
    k++;
    if (*s == 'x') s++;
    else if (*s) return -1;
  }
  (void)a;
  return k;
}

/* Every x-separated item of a padding token has exactly `parts` numbers. */
static bool pad_parts(const char *s, int parts) {
  int n = 1;
  for (;; s++) {
    if (*s == '_') n++;
    else if (*s == 'x' || !*s) {
      if (n != parts) return false;
      if (!*s) return true;
      n = 1;
    }
  }
}

static int at_window(A *a) {
  HlpParser *P = a->P;
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_BRACE) return bad(a, "{size=... stride=... pad=...}");
  HloVal *b = a->v[0];
  HloWindow *w = &a->ins->window;
  static const char *const names[] = {"size", "stride", "pad", "lhs_dilate", "rhs_dilate",
                                      "rhs_reversal"};
  HloVal *f[6] = {0};
  for (int32_t i = 0; i < b->nitems; i++) {
    HloVal *it = b->items[i];
    int k = -1;
    if (it->kind == HLO_VAL_ATTR)
      for (int j = 0; j < 6; j++)
        if (strcmp(it->text, names[j]) == 0) k = j;
    if (k < 0) { hlp_error(P, it->off, "unknown window field"); return -1; }
    if (f[k]) { hlp_error(P, it->off, "window field %s given twice", names[k]); return -1; }
    f[k] = it->items[0];
  }
  w->present = true;
  if (!f[0]) {
    if (b->nitems) { hlp_error(P, b->off, "window without size="); return -1; }
    return 0;
  }
  int64_t (*tmp)[3] = hlp_alloc(P, HLX_MAX_DEPTH * sizeof *tmp);
  int rank = split_x(a, f[0], false, tmp, HLX_MAX_DEPTH);
  if (rank < 0) { hlp_error(P, f[0]->off, "bad window size"); return -1; }
  w->rank = rank;
  w->dims = hlp_alloc(P, (size_t)(rank ? rank : 1) * sizeof *w->dims);
  for (int i = 0; i < rank; i++) {
    w->dims[i] = (HloWindowDim){.size = tmp[i][0], .stride = 1, .lhs_dilate = 1, .rhs_dilate = 1};
  }
  for (int k = 1; k < 6; k++) {
    if (!f[k]) continue;
    int r = split_x(a, f[k], k == 2, tmp, HLX_MAX_DEPTH);
    if (r != rank) {
      hlp_error(P, f[k]->off, "window %s has %d dimensions, size has %d", names[k], r < 0 ? 0 : r, rank);
      return -1;
    }
    for (int i = 0; i < rank; i++) {
      HloWindowDim *d = &w->dims[i];
      switch (k) {
      case 1: d->stride = tmp[i][0];
        if (d->stride < 1) { hlp_error(P, f[k]->off, "window strides must be positive"); return -1; }
        break;
      case 2:
        if (!pad_parts(f[k]->text, 2)) {
          hlp_error(P, f[k]->off, "window padding is low_high per dimension");
          return -1;
        }
        d->pad_lo = tmp[i][0];
        d->pad_hi = tmp[i][1];
        break;
      case 3: case 4:
        if (tmp[i][0] < 1) { hlp_error(P, f[k]->off, "window dilations must be positive"); return -1; }
        if (k == 3) d->lhs_dilate = tmp[i][0];
        else d->rhs_dilate = tmp[i][0];
        break;
      case 5:
        if (tmp[i][0] != 0 && tmp[i][0] != 1) { hlp_error(P, f[k]->off, "rhs_reversal entries must be 0 or 1"); return -1; }
        d->reversal = tmp[i][0];
        break;
      }
    }
  }
  return 0;
}

static int at_padding(A *a) {
  HlpParser *P = a->P;
  int64_t (*tmp)[3] = hlp_alloc(P, HLX_MAX_DEPTH * sizeof *tmp);
  int r = a->n == 1 ? split_x(a, a->v[0], true, tmp, HLX_MAX_DEPTH) : -1;
  if (r < 0 || is_tok(a->v[0], TK_INT) || is_tok(a->v[0], TK_DXD)) return bad(a, "a padding config like 0_0x1_1");
  int32_t rank = a->ins->nops ? a->ins->ops[0]->shape.rank : r;
  if (r != rank) {
    hlp_error(P, a->off, "padding has %d dimensions, operand has rank %d", r, (int)rank);
    return -1;
  }
  a->ins->padding = hlp_alloc(P, (size_t)(r ? r : 1) * sizeof *a->ins->padding);
  for (int i = 0; i < r; i++) {
    if (tmp[i][2] < 0) { hlp_error(P, a->off, "interior padding must be non-negative"); return -1; }
    a->ins->padding[i] = (HloPadDim){tmp[i][0], tmp[i][1], tmp[i][2]};
  }
  return 0;
}

static int at_slice(A *a) {
  HlpParser *P = a->P;
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_BRACE) return bad(a, "{[start:limit:stride], ...}");
  HloVal *b = a->v[0];
  int32_t rank = a->ins->nops ? a->ins->ops[0]->shape.rank : b->nitems;
  if (b->nitems != rank) {
    hlp_error(P, a->off, "slice has %d dimensions, operand has rank %d", (int)b->nitems, (int)rank);
    return -1;
  }
  a->ins->slice = hlp_alloc(P, (size_t)(rank ? rank : 1) * sizeof *a->ins->slice);
  for (int32_t i = 0; i < b->nitems; i++) {
    HloVal *r = b->items[i];
    int64_t x[3] = {0, 0, 1};
    bool ok = r->kind == HLO_VAL_BRACKET && (r->nitems == 3 || r->nitems == 5);
    for (int32_t j = 0; ok && j < r->nitems; j++) {
      if (j % 2) ok = is_tok(r->items[j], TK_COLON);
      else ok = val_int(r->items[j], &x[j / 2]);
    }
    if (!ok || (i && r->sep != 2)) return bad(a, "{[start:limit:stride], ...}");
    a->ins->slice[i] = (HloSliceDim){x[0], x[1], x[2]};
  }
  return 0;
}

static int at_dynamic_slice_sizes(A *a) { return get_ints(a, &a->ins->dynamic_slice_sizes); }
static int at_lhs_batch(A *a) { return get_ints(a, &a->ins->dot.lhs_batch); }
static int at_lhs_contracting(A *a) { return get_ints(a, &a->ins->dot.lhs_contracting); }
static int at_rhs_batch(A *a) { return get_ints(a, &a->ins->dot.rhs_batch); }
static int at_rhs_contracting(A *a) { return get_ints(a, &a->ins->dot.rhs_contracting); }
static int at_lhs_ragged(A *a) { return get_ints(a, &a->ins->dot.lhs_ragged); }
static int at_rhs_group(A *a) { return get_ints(a, &a->ins->dot.rhs_group); }

static int at_operand_precision(A *a) {
  static const char *const w[] = {"default", "high", "highest", "packed_nibble"};
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_BRACE) return bad(a, "{default,high,highest,...}");
  for (int32_t i = 0; i < a->v[0]->nitems; i++) {
    A sub = *a;
    sub.v = &a->v[0]->items[i];
    sub.n = 1;
    int k;
    if (get_word(&sub, w, 4, true, &k)) return -1;
  }
  return 0;
}

static int at_algorithm(A *a) {
  if (a->ins->op == HLO_OP_RNG_BIT_GENERATOR) {
    static const char *const w[] = {"rng_default", "rng_three_fry", "rng_philox"};
    int k;
    if (get_word(a, w, 3, true, &k)) return -1;
    a->ins->rng_algorithm = (HloRngAlg)k;
    return 0;
  }
  static const char *const w[] = {
      "unset", "dot_any_f8_any_f8_f32", "dot_any_f8_any_f8_f32_fast_accum", "dot_f16_f16_f16",
      "dot_f16_f16_f32", "dot_bf16_bf16_bf16", "dot_bf16_bf16_f32", "dot_bf16_bf16_f32_x3",
      "dot_bf16_bf16_f32_x6", "dot_bf16_bf16_f32_x9", "dot_tf32_tf32_f32", "dot_tf32_tf32_f32_x3",
      "dot_f32_f32_f32", "dot_f64_f64_f64"};
  int k;
  return get_word(a, w, (int)(sizeof w / sizeof w[0]), true, &k);
}

/* dim_labels=lhs_rhs->out: tensor dimension of each role (spec 6.2). */
static int labels_part(A *a, const char *s, size_t n, char c1, char c2, int64_t *p1, int64_t *p2,
                       HloI64s *sp) {
  int nsp = 0;
  *p1 = *p2 = -1;
  for (size_t i = 0; i < n; i++)
    if (s[i] >= '0' && s[i] <= '9') nsp++;
  sp->n = nsp;
  sp->v = hlp_alloc(a->P, (size_t)(nsp ? nsp : 1) * sizeof *sp->v);
  for (int i = 0; i < nsp; i++) sp->v[i] = -1;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == c1 && *p1 < 0) *p1 = (int64_t)i;
    else if (c == c2 && *p2 < 0) *p2 = (int64_t)i;
    else if (c >= '0' && c <= '9' && c - '0' < nsp && sp->v[c - '0'] < 0) sp->v[c - '0'] = (int64_t)i;
    else if (c != '?') return -1;
  }
  if (*p1 < 0 || *p2 < 0) return -1;
  return nsp;
}

static int at_dim_labels(A *a) {
  if (a->n != 1 || !is_tok(a->v[0], TK_DIMLABELS)) return bad(a, "dimension labels like b01f_01io->b01f");
  const char *s = a->v[0]->text;
  const char *u = strchr(s, '_'), *ar = strstr(s, "->");
  HloConvDims *d = &a->ins->conv;
  a->ins->dim_labels_text = s;
  int n1 = labels_part(a, s, (size_t)(u - s), 'b', 'f', &d->in_batch, &d->in_feature, &d->in_spatial);
  int n2 = labels_part(a, u + 1, (size_t)(ar - u - 1), 'i', 'o', &d->k_in_feature, &d->k_out_feature,
                       &d->k_spatial);
  int n3 = labels_part(a, ar + 2, strlen(ar + 2), 'b', 'f', &d->out_batch, &d->out_feature,
                       &d->out_spatial);
  if (n1 < 0 || n2 < 0 || n3 < 0 || n1 != n2 || n1 != n3) return bad(a, "consistent dimension labels like b01f_01io->b01f");
  return 0;
}

static int at_feature_group_count(A *a) {
  if (get_int(a, &a->ins->feature_group_count)) return -1;
  return a->ins->feature_group_count < 1 ? bad(a, "a positive integer") : 0;
}
static int at_batch_group_count(A *a) {
  if (get_int(a, &a->ins->batch_group_count)) return -1;
  return a->ins->batch_group_count < 1 ? bad(a, "a positive integer") : 0;
}
static int at_convolution_kind(A *a) {
  static const char *const w[] = {"fprop", "wgrad", "dgrad", "unset"};
  int k;
  return get_word(a, w, 4, false, &k);
}
static int at_generic_brace(A *a) {
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_BRACE) return bad(a, "{...}");
  return 0;
}

/* gather */
static int at_offset_dims(A *a) { return get_ints(a, &a->ins->gather.offset_dims); }
static int at_collapsed_slice_dims(A *a) { return get_ints(a, &a->ins->gather.collapsed_slice_dims); }
static int at_start_index_map(A *a) { return get_ints(a, &a->ins->gather.start_index_map); }
static int at_operand_batching_dims(A *a) { return get_ints(a, &a->ins->gather.operand_batching_dims); }
static int at_start_indices_batching_dims(A *a) {
  return get_ints(a, &a->ins->gather.start_indices_batching_dims);
}
static int at_slice_sizes(A *a) {
  if (a->ins->op == HLO_OP_GATHER) return get_ints(a, &a->ins->gather.slice_sizes);
  /* collective-permute(-start) in-place form: one list per buffer and offset set */
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_BRACE) return bad(a, "{{a,b,...},...}");
  int32_t n = a->v[0]->nitems;
  a->ins->permute_slices = hlp_alloc(a->P, (size_t)(n ? n : 1) * sizeof(HloI64s));
  a->ins->npermute_slices = n;
  for (int32_t i = 0; i < n; i++)
    if (!val_ints(a->P, a->v[0]->items[i], &a->ins->permute_slices[i]) ||
        (i && a->v[0]->items[i]->sep != 2))
      return bad(a, "{{a,b,...},...}");
  return 0;
}
static int at_index_vector_dim(A *a) {
  int64_t v;
  if (get_nonneg(a, &v)) return -1;
  a->ins->gather.index_vector_dim = a->ins->scatter.index_vector_dim = v;
  return 0;
}
static int at_indices_are_sorted(A *a) {
  bool b;
  if (get_bool(a, &b)) return -1;
  a->ins->gather.indices_are_sorted = a->ins->scatter.indices_are_sorted = b;
  return 0;
}
/* scatter */
static int at_update_window_dims(A *a) { return get_ints(a, &a->ins->scatter.update_window_dims); }
static int at_inserted_window_dims(A *a) { return get_ints(a, &a->ins->scatter.inserted_window_dims); }
static int at_scatter_dims_to_operand_dims(A *a) {
  return get_ints(a, &a->ins->scatter.scatter_dims_to_operand_dims);
}
static int at_input_batching_dims(A *a) { return get_ints(a, &a->ins->scatter.input_batching_dims); }
static int at_scatter_indices_batching_dims(A *a) {
  return get_ints(a, &a->ins->scatter.scatter_indices_batching_dims);
}
static int at_unique_indices(A *a) { return get_bool(a, &a->ins->scatter.unique_indices); }

static int at_direction(A *a) {
  static const char *const w[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  int k;
  if (get_word(a, w, 6, false, &k)) return -1;
  a->ins->cmp_dir = (HloCmpDir)k;
  return 0;
}
static int at_type(A *a) {
  static const char *const w[] = {NULL, "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  int k;
  if (get_word(a, w, 5, false, &k)) return -1;
  a->ins->cmp_type = (HloCmpType)k;
  return 0;
}
static int at_kind(A *a) {
  static const char *const w[] = {NULL, "kLoop", "kInput", "kOutput", "kCustom"};
  int k;
  if (get_word(a, w, 5, false, &k)) return -1;
  a->ins->fusion_kind = (HloFusionKind)k;
  return 0;
}
static int at_fft_type(A *a) {
  static const char *const w[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  int k;
  if (get_word(a, w, 4, false, &k)) return -1;
  a->ins->fft_type = (HloFftType)k;
  return 0;
}
static int at_fft_length(A *a) { return get_ints(a, &a->ins->fft_length); }
static int at_distribution(A *a) {
  static const char *const w[] = {"rng_uniform", "rng_normal"};
  int k;
  if (get_word(a, w, 2, true, &k)) return -1;
  a->ins->distribution = (HloRngDist)k;
  return 0;
}
static int at_delta(A *a) { return get_int(a, &a->ins->rng_delta); }
static int at_is_stable(A *a) { return get_bool(a, &a->ins->is_stable); }
static int at_k(A *a) { return get_nonneg(a, &a->ins->k); }
static int at_largest(A *a) { return get_bool(a, &a->ins->largest); }
static int at_exponent_bits(A *a) {
  if (get_int(a, &a->ins->exponent_bits)) return -1;
  return a->ins->exponent_bits < 1 ? bad(a, "a positive integer") : 0;
}
static int at_mantissa_bits(A *a) { return get_nonneg(a, &a->ins->mantissa_bits); }
static int at_epsilon(A *a) {
  if (get_float(a, &a->ins->epsilon)) return -1;
  if (isfinite(a->ins->epsilon) && fabs(a->ins->epsilon) > 3.4028234663852886e38)
    return bad(a, "a value that fits in f32");
  return 0;
}
static int at_feature_index(A *a) { return get_nonneg(a, &a->ins->feature_index); }
static int at_left_side(A *a) { return get_bool(a, &a->ins->left_side); }
static int at_lower(A *a) { return get_bool(a, &a->ins->lower); }
static int at_unit_diagonal(A *a) { return get_bool(a, &a->ins->unit_diagonal); }
static int at_transpose_a(A *a) {
  static const char *const w[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  int k;
  if (get_word(a, w, 3, false, &k)) return -1;
  a->ins->transpose_a = (HloTransposeA)k;
  return 0;
}
static int at_num_carries(A *a) { return get_nonneg(a, &a->ins->num_carries); }
static int at_is_reverse(A *a) { return get_bool(a, &a->ins->is_reverse); }
static int at_is_associative(A *a) { return get_bool(a, &a->ins->is_associative); }
static int at_channel_id(A *a) {
  a->ins->has_channel_id = true;
  return get_int(a, &a->ins->channel_id);
}
static int at_bool_only(A *a) { bool b; return get_bool(a, &b); }
static int at_int_only(A *a) { int64_t v; return get_int(a, &v); }
static int at_string_only(A *a) { const char *s; return get_string(a, &s); }

static int at_use_global_device_ids(A *a) { return get_bool(a, &a->ins->use_global_device_ids); }

static int at_mode(A *a) {
  static const char *const w[] = {"cross_replica", "cross_partition", "cross_replica_and_partition",
                                  "flattened_id"};
  int k;
  return get_word(a, w, 4, false, &k);
}

static bool bracket_ints(HlpParser *P, const HloVal *v, HloI64s *out) {
  if (v->kind != HLO_VAL_BRACKET) return false;
  HloVal tmp = *v;
  tmp.kind = HLO_VAL_BRACE;
  return val_ints(P, &tmp, out);
}

/* ---- The mesh form of replica_groups ----------------------------------------
 * As XLA prints it (MeshAxesReplicaGroupList::ToString, Mesh::ToString and
 * AxisRef::ToString in xla/hlo/ir/replica_group.cc and mesh_and_axis.cc):
 *   mesh[NAME=SIZE,...] {REF,...}
 *   mesh[NAME=SIZE,...], device_ids=(IDS) {REF,...}   IDS: d,d,... or [dims]T(perm)
 *   maximal_mesh[device_id=D] {}
 * NAME is 'quoted' (XLA today) or bare (earlier XLA); REF is NAME or
 * NAME:(pre-size)size. The ", device_ids=" reads as an attribute of its own:
 * hlp_lower_attrs hands it here with the replica_groups before it. The
 * groups are expanded (hlp_mesh_groups) into ins->replica_groups. */
static bool mesh_name(const HloVal *v, const char **s, size_t *len) {
  if (v->kind == HLO_VAL_STRING || (v->kind == HLO_VAL_TOKEN && (v->tok == TK_IDENT || v->tok == TK_NAME))) {
    *s = v->text;
    *len = v->len;
    return true;
  }
  return false;
}

static int mesh_err(HlpParser *P, const HloVal *at, const char *what) {
  hlp_error(P, at->off, "replica_groups in the mesh form: %s", what);
  return -1;
}

static int mesh_groups(HlpParser *P, HloInstr *ins, HloAttr *rg, HloAttr *dv) {
  HloVal **v = rg->values;
  bool maximal = v[0]->len == 12;   /* mesh_head: "mesh" or "maximal_mesh" */
  if (rg->nvalues < 2 || v[1]->kind != HLO_VAL_BRACKET)
    return mesh_err(P, rg->nvalues < 2 ? v[0] : v[1], "expected [name=size,...] after mesh");
  HloVal *axes_v;
  if (dv) {
    if (rg->nvalues != 2) return mesh_err(P, v[2], "device_ids=(...) must follow the mesh's [...]");
    if (maximal) return mesh_err(P, dv->values[0], "a maximal mesh takes no device_ids");
    if (dv->nvalues != 2 || dv->values[0]->kind != HLO_VAL_PAREN || dv->values[1]->kind != HLO_VAL_BRACE)
      return mesh_err(P, dv->values[0], "expected device_ids=(ids) {axes}");
    axes_v = dv->values[1];
  } else {
    if (rg->nvalues > 3) return mesh_err(P, v[3], "unexpected text after the {axes}");
    if (rg->nvalues != 3 || v[2]->kind != HLO_VAL_BRACE)
      return mesh_err(P, v[rg->nvalues - 1], "expected {axes} after the mesh (e.g. mesh['x'=4] {'x'})");
    axes_v = v[2];
  }
  /* The mesh's axes: NAME=SIZE, comma separated. */
  HloVal *mb = v[1];
  int32_t cap = mb->nitems + 1, naxes = 0;
  const char **names = hlp_alloc(P, (size_t)cap * sizeof *names);
  size_t *nlen = hlp_alloc(P, (size_t)cap * sizeof *nlen);
  int64_t *sizes = hlp_alloc(P, (size_t)cap * sizeof *sizes);
  int64_t total = 1;
  for (int32_t i = 0; i < mb->nitems;) {
    HloVal *it = mb->items[i];
    const char *nm;
    size_t nl;
    int64_t sz;
    if ((i > 0) != (it->sep == 2)) return mesh_err(P, it, "mesh axes are separated by commas");
    if (it->kind == HLO_VAL_ATTR) {
      nm = it->text; nl = it->len;
      if (!val_int(it->items[0], &sz)) return mesh_err(P, it->items[0], "expected an integer size");
      i += 1;
    } else if (mesh_name(it, &nm, &nl) && i + 2 < mb->nitems &&
               is_tok(mb->items[i + 1], TK_EQ)) {
      if (!val_int(mb->items[i + 2], &sz)) return mesh_err(P, mb->items[i + 2], "expected an integer size");
      i += 3;
    } else {
      return mesh_err(P, it, maximal ? "expected [device_id=D]" : "expected name=size");
    }
    if (maximal) {
      if (nl != 9 || strncmp(nm, "device_id", 9) != 0 || mb->nitems != 1 || sz < 0)
        return mesh_err(P, it, "expected maximal_mesh[device_id=D] with D >= 0");
      sizes[0] = sz;
      continue;
    }
    if (sz <= 0) return mesh_err(P, it, "a mesh axis size must be positive");
    if (total > (1 << 24) / sz) return mesh_err(P, it, "the mesh has too many devices (at most 2^24)");
    for (int32_t k = 0; k < naxes; k++)
      if (nlen[k] == nl && memcmp(names[k], nm, nl) == 0) return mesh_err(P, it, "the mesh names this axis twice");
    names[naxes] = nm; nlen[naxes] = nl; sizes[naxes] = sz;
    naxes++;
    total *= sz;
  }
  if (maximal && mb->nitems != 1) return mesh_err(P, mb, "expected maximal_mesh[device_id=D]");
  if (!maximal && naxes == 0) return mesh_err(P, mb, "a mesh must have at least one axis");
  int64_t *ids = NULL;
  if (maximal) { ids = hlp_alloc(P, sizeof *ids); ids[0] = sizes[0]; }
  if (dv) {             /* the device order: ids listed, or [dims]T(perm) */
    HloVal *pv = dv->values[0];
    ids = hlp_alloc(P, (size_t)total * sizeof *ids);
    if (pv->nitems >= 1 && pv->items[0]->kind == HLO_VAL_BRACKET) {
      HloI64s rd, perm = {0, NULL};
      if (!bracket_ints(P, pv->items[0], &rd) || rd.n < 1)
        return mesh_err(P, pv->items[0], "expected device_ids=([dims]T(perm))");
      if (pv->nitems == 3 && val_word(pv->items[1], "T") && pv->items[2]->kind == HLO_VAL_PAREN) {
        HloVal tmp = *pv->items[2];
        tmp.kind = HLO_VAL_BRACE;
        if (!val_ints(P, &tmp, &perm) || perm.n != rd.n)
          return mesh_err(P, pv->items[2], "T(...) must permute the iota's dimensions");
      } else if (pv->nitems != 1) {
        return mesh_err(P, pv->items[1], "expected device_ids=([dims]T(perm))");
      }
      int64_t prod = 1;
      for (int32_t j = 0; j < rd.n; j++) {
        if (rd.v[j] <= 0 || prod > total) return mesh_err(P, pv->items[0], "iota dimensions must be positive");
        prod *= rd.v[j];
      }
      if (prod != total) return mesh_err(P, pv->items[0], "the iota's device count differs from the mesh's");
      int32_t r = rd.n;
      int64_t *stride = hlp_alloc(P, (size_t)r * sizeof *stride), *td = hlp_alloc(P, (size_t)r * sizeof *td);
      int64_t *ix = hlp_alloc(P, (size_t)r * sizeof *ix);
      uint8_t *seen = hlp_alloc(P, (size_t)r);
      for (int32_t j = r - 1, st = 1; j >= 0; j--) { stride[j] = st; st *= (int32_t)rd.v[j]; }
      for (int32_t j = 0; j < r; j++) {
        int64_t p = perm.n ? perm.v[j] : j;
        if (p < 0 || p >= r || seen[p]++) return mesh_err(P, pv->items[2], "T(...) must permute the iota's dimensions");
        td[j] = rd.v[p];
      }
      for (int64_t lin = 0; lin < total; lin++) {
        int64_t rem = lin, val = 0;
        for (int32_t j = r - 1; j >= 0; j--) { ix[j] = rem % td[j]; rem /= td[j]; }
        for (int32_t j = 0; j < r; j++) val += ix[j] * stride[perm.n ? perm.v[j] : j];
        ids[lin] = val;
      }
    } else {
      HloI64s l;
      HloVal tmp = *pv;
      tmp.kind = HLO_VAL_BRACE;
      if (!val_ints(P, &tmp, &l)) return mesh_err(P, pv, "expected device_ids=(d,d,...) or ([dims]T(perm))");
      if (l.n != total) {
        char m[128];
        snprintf(m, sizeof m, "device_ids lists %d ids, but the mesh has %lld devices", l.n, (long long)total);
        return mesh_err(P, pv, m);
      }
      uint8_t *seen = hlp_alloc(P, (size_t)total);
      for (int32_t j = 0; j < l.n; j++) {
        if (l.v[j] < 0 || l.v[j] >= total || seen[l.v[j]]++)
          return mesh_err(P, pv, "device_ids must be a permutation of 0..N-1");
        ids[j] = l.v[j];
      }
    }
  }
  /* The axis refs: NAME or NAME:(pre)size, comma separated. */
  int32_t nrefs = 0;
  HlpMeshAxisRef *refs = hlp_alloc(P, (size_t)(axes_v->nitems + 1) * sizeof *refs);
  for (int32_t i = 0; i < axes_v->nitems;) {
    HloVal *it = axes_v->items[i];
    const char *nm;
    size_t nl;
    if ((i > 0) != (it->sep == 2)) return mesh_err(P, it, "axis refs are separated by commas");
    bool colon = is_tok(it, TK_CNAME);   /* a bare name:( lexes as one "name:" token */
    if (colon) { nm = it->text; nl = it->len - 1; }
    else if (!mesh_name(it, &nm, &nl)) return mesh_err(P, it, "expected an axis name or name:(pre-size)size");
    int32_t ax = -1;
    for (int32_t k = 0; k < naxes; k++)
      if (nlen[k] == nl && memcmp(names[k], nm, nl) == 0) ax = k;
    if (ax < 0) {
      char m[160];
      snprintf(m, sizeof m, "the mesh has no axis '%.*s'", (int)(nl > 64 ? 64 : nl), nm);
      return mesh_err(P, it, m);
    }
    HlpMeshAxisRef r = {ax, 0, 0};
    i++;
    if (!colon && i < axes_v->nitems && axes_v->items[i]->sep != 2 && is_tok(axes_v->items[i], TK_COLON)) {
      colon = true;
      i++;
    }
    if (colon) {
      HloI64s pre;
      HloVal tmp;
      if (i + 1 >= axes_v->nitems || axes_v->items[i]->kind != HLO_VAL_PAREN ||
          axes_v->items[i + 1]->sep == 2)
        return mesh_err(P, it, "expected name:(pre-size)size");
      tmp = *axes_v->items[i];
      tmp.kind = HLO_VAL_BRACE;
      if (!val_ints(P, &tmp, &pre) || pre.n != 1 || !val_int(axes_v->items[i + 1], &r.size))
        return mesh_err(P, axes_v->items[i], "expected name:(pre-size)size");
      r.pre = pre.v[0];
      if (r.pre < 1) return mesh_err(P, axes_v->items[i], "a sub-axis pre-size must be >= 1");
      i += 2;
    }
    refs[nrefs++] = r;
  }
  int64_t *flat = hlp_alloc(P, (size_t)total * sizeof *flat), gs = 1;
  char why[200];
  if (hlp_mesh_groups(maximal ? 0 : naxes, sizes, ids, nrefs, refs, flat, &gs, why, sizeof why) != 0)
    return mesh_err(P, axes_v, why);
  int64_t ng = total / gs;
  ins->ngroups = (int32_t)ng;
  ins->replica_groups = hlp_alloc(P, (size_t)ng * sizeof(HloI64s));
  for (int64_t g = 0; g < ng; g++) ins->replica_groups[g] = (HloI64s){(int32_t)gs, flat + g * gs};
  return 0;
}

static bool mesh_head(const HloAttr *at) {
  const HloVal *v = at->nvalues >= 1 ? at->values[0] : NULL;
  return v && is_tok(v, TK_IDENT) &&
         ((v->len == 4 && strncmp(v->text, "mesh", 4) == 0) ||
          (v->len == 12 && strncmp(v->text, "maximal_mesh", 12) == 0));
}

/* replica_groups: {{0,1},{2,3}} | [G,S]<=[dims]T(perm) | mesh[...] {...}. */
static int at_replica_groups(A *a) {
  HlpParser *P = a->P;
  HloInstr *ins = a->ins;
  if (a->n == 1 && a->v[0]->kind == HLO_VAL_BRACE) {
    HloVal *b = a->v[0];
    ins->ngroups = b->nitems;
    ins->replica_groups = hlp_alloc(P, (size_t)(b->nitems ? b->nitems : 1) * sizeof(HloI64s));
    for (int32_t i = 0; i < b->nitems; i++)
      if (!val_ints(P, b->items[i], &ins->replica_groups[i])) return bad(a, "{{a,b,...},...}");
    return 0;
  }
  if (mesh_head(a->attr))   /* with ", device_ids=" the rest comes as the next attribute */
    return a->n == 2 && a->v[1]->kind == HLO_VAL_BRACKET ? 0 : mesh_groups(P, ins, a->attr, NULL);
  HloI64s gs, rd, perm = {0};
  if (!(a->n == 3 || a->n == 5) || !bracket_ints(P, a->v[0], &gs) || gs.n != 2 ||
      !is_tok(a->v[1], TK_LEQ) || !bracket_ints(P, a->v[2], &rd) || rd.n < 1)
    return bad(a, "{{...}} or [groups,size]<=[dims]");
  if (a->n == 5) {
    if (!val_word(a->v[3], "T") || a->v[4]->kind != HLO_VAL_PAREN) return bad(a, "T(permutation)");
    HloVal tmp = *a->v[4];
    tmp.kind = HLO_VAL_BRACE;
    if (!val_ints(P, &tmp, &perm) || perm.n != rd.n) return bad(a, "a permutation T(...)");
  }
  int64_t total = 1;
  for (int32_t i = 0; i < rd.n; i++) {
    if (rd.v[i] < 0 || (rd.v[i] && total > INT32_MAX / rd.v[i])) return bad(a, "a small device count");
    total *= rd.v[i];
  }
  if (gs.v[0] < 0 || gs.v[1] < 0 || gs.v[0] * gs.v[1] != total)
    return bad(a, "[groups,size] whose product matches the iota dims");
  int32_t r = rd.n;
  int64_t *td = hlp_alloc(P, (size_t)r * sizeof *td), *idx = hlp_alloc(P, (size_t)r * sizeof *idx);
  int64_t *strides = hlp_alloc(P, (size_t)r * sizeof *strides);
  uint8_t *seen = hlp_alloc(P, (size_t)r);
  for (int32_t i = r - 1, st = 1; i >= 0; i--) { strides[i] = st; st *= (int32_t)rd.v[i]; }
  for (int32_t j = 0; j < r; j++) {
    int64_t p = perm.n ? perm.v[j] : j;
    if (p < 0 || p >= r || seen[p]++) return bad(a, "a permutation T(...)");
    td[j] = rd.v[p];
  }
  int64_t *flat = hlp_alloc(P, (size_t)(total ? total : 1) * sizeof *flat);
  for (int64_t lin = 0; lin < total; lin++) {
    int64_t rem = lin, val = 0;
    for (int32_t j = r - 1; j >= 0; j--) { idx[j] = rem % td[j]; rem /= td[j]; }
    for (int32_t j = 0; j < r; j++) val += idx[j] * strides[perm.n ? perm.v[j] : j];
    flat[lin] = val;
  }
  ins->ngroups = (int32_t)gs.v[0];
  ins->replica_groups = hlp_alloc(P, (size_t)(gs.v[0] ? gs.v[0] : 1) * sizeof(HloI64s));
  for (int64_t g = 0; g < gs.v[0]; g++)
    ins->replica_groups[g] = (HloI64s){(int32_t)gs.v[1], flat + g * gs.v[1]};
  return 0;
}

static int at_source_target_pairs(A *a) {
  HlpParser *P = a->P;
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_BRACE) return bad(a, "{{src,dst},...}");
  HloVal *b = a->v[0];
  a->ins->npairs = b->nitems;
  a->ins->source_target_pairs = hlp_alloc(P, (size_t)(b->nitems ? b->nitems : 1) * sizeof(int64_t[2]));
  for (int32_t i = 0; i < b->nitems; i++) {
    HloI64s p;
    if (!val_ints(P, b->items[i], &p) || p.n != 2) return bad(a, "{{src,dst},...}");
    a->ins->source_target_pairs[i][0] = p.v[0];
    a->ins->source_target_pairs[i][1] = p.v[1];
  }
  return 0;
}

static int at_custom_call_target(A *a) { return get_string(a, &a->ins->custom_call_target); }
static int at_api_version(A *a) {
  static const char *const w[] = {NULL, "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                                  "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
  int k;
  if (get_word(a, w, 5, true, &k)) return -1;
  a->ins->api_version = (HloApiVersion)k;
  return 0;
}
static int at_backend_config(A *a) {
  if (a->n != 1 || (a->v[0]->kind != HLO_VAL_STRING && a->v[0]->kind != HLO_VAL_RAW))
    return bad(a, "a string or a {...} dictionary");
  HloVal *v = a->v[0];
  a->ins->backend_config = v->text;
  a->ins->backend_config_len = v->len;
  a->ins->backend_config_quoted = v->kind == HLO_VAL_STRING;
  a->ins->backend_config_off = v->off + (v->kind == HLO_VAL_STRING);
  return 0;
}
static int at_has_side_effect(A *a) { return get_bool(a, &a->ins->has_side_effect); }
static int at_schedule(A *a) {
  static const char *const w[] = {"SCHEDULE_NONE", "SCHEDULE_LATEST", "SCHEDULE_EARLIEST"};
  int k;
  return get_word(a, w, 3, true, &k);
}
static int at_padding_type(A *a) {
  static const char *const w[] = {"PADDING_INVALID", "PADDING_VALID", "PADDING_SAME"};
  int k;
  return get_word(a, w, 3, false, &k);
}
static int at_operand_layout_constraints(A *a) {
  HlpParser *P = a->P;
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_BRACE) return bad(a, "{shape, ...}");
  HloVal *b = a->v[0];
  HloInstr *ins = a->ins;
  ins->operand_layouts = hlp_alloc(P, (size_t)(b->nitems ? b->nitems : 1) * sizeof(HloShape));
  int32_t i = 0, k = 0;
  while (i < b->nitems) {
    HloShape *s = hlp_shape_from_items(P, b->items, b->nitems, &i);
    if (!s) return -1;
    if (k >= b->nitems) return bad(a, "{shape, ...}");
    ins->operand_layouts[k++] = *s;
  }
  ins->noperand_layouts = k;
  if (k != ins->nops) {
    hlp_error(P, a->off, "operand_layout_constraints has %d shapes for %d operands", (int)k, (int)ins->nops);
    return -1;
  }
  for (int32_t j = 0; j < k; j++)
    if (!hlp_shape_compatible(&ins->operand_layouts[j], &ins->ops[j]->shape)) {
      hlp_error(P, a->off, "operand_layout_constraints shape %d does not match operand %d", (int)j, (int)j);
      return -1;
    }
  return 0;
}
/* A literal that carries its shape: "SHAPE BODY", or a tuple written as
 * "( SHAPE BODY, SHAPE BODY, ... )" (how XLA prints tuple literals). */
static HloLiteral *shaped_literal(HlpParser *P, HloVal **v, int32_t n, uint32_t off) {
  if (n == 1 && v[0]->kind == HLO_VAL_PAREN) {
    HloVal *t = v[0];
    int32_t ne = t->nitems ? 1 : 0;
    for (int32_t i = 1; i < t->nitems; i++) ne += t->items[i]->sep == 2;
    HloLiteral *lit = hlp_alloc(P, sizeof *lit);
    HloShape *s = hlp_alloc(P, sizeof *s);
    s->dtype = HLO_TUPLE;
    s->ntuple = lit->ntuple = ne;
    s->tuple = hlp_alloc(P, (size_t)(ne ? ne : 1) * sizeof *s->tuple);
    lit->tuple = hlp_alloc(P, (size_t)(ne ? ne : 1) * sizeof *lit->tuple);
    lit->shape = s;
    for (int32_t e = 0, i = 0; e < ne; e++) {
      int32_t j = i + 1;
      while (j < t->nitems && t->items[j]->sep != 2) j++;
      HloLiteral *el = shaped_literal(P, t->items + i, j - i, t->items[i]->off);
      if (!el) return NULL;
      s->tuple[e] = *el->shape;
      lit->tuple[e] = *el;
      lit->tuple[e].shape = &s->tuple[e];
      i = j;
    }
    return lit;
  }
  int32_t i = 0;
  HloShape *s = hlp_shape_from_items(P, v, n, &i);
  return s ? hlp_literal(P, s, v + i, n - i, off) : NULL;
}

static int at_literal(A *a) {
  a->ins->literal = shaped_literal(a->P, a->v, a->n, a->off);
  return a->ins->literal ? 0 : -1;
}
/* A shape index {a,b,...} (empty = the whole value) that names a subshape
 * of s (NULL: not checked). */
static bool shape_index(HlpParser *P, const HloVal *v, const HloShape *s, HloI64s *out) {
  HloI64s ix;
  if (!val_ints(P, v, &ix)) return false;
  if (out) *out = ix;
  for (int32_t i = 0; s && i < ix.n; i++) {
    if (s->dtype != HLO_TUPLE || ix.v[i] < 0 || ix.v[i] >= s->ntuple) return false;
    s = &s->tuple[ix.v[i]];
  }
  return true;
}

static int cmp_index(const void *x, const void *y) {
  const HloI64s *a = x, *b = y;
  for (int32_t i = 0; i < a->n && i < b->n; i++)
    if (a->v[i] != b->v[i]) return a->v[i] < b->v[i] ? -1 : 1;
  return (a->n > b->n) - (a->n < b->n);
}

/* Aliasing lists (spec 3.1 and 6):
 *   { {out_index}: (number, {index}[, may-alias|must-alias]), ... }
 * with_kind: the optional third field is allowed (input_output_alias).
 * out: the shape output indices must name (NULL: not checked). An output
 * index may be aliased once only. */
static int aliasing(A *a, bool with_kind, const HloShape *out) {
  const char *what = with_kind ? "{ {out}: (param, {index}[, may-alias]), ... }"
                               : "{ {out}: (operand, {index}), ... }";
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_BRACE) return bad(a, what);
  HloVal **v = a->v[0]->items;
  int32_t n = a->v[0]->nitems;
  HloI64s *idx = hlp_alloc(a->P, (size_t)(n / 3 + 1) * sizeof *idx);
  for (int32_t i = 0; i < n; i += 3) {
    if (i + 2 >= n || (i && v[i]->sep != 2) || v[i]->kind != HLO_VAL_BRACE ||
        !is_tok(v[i + 1], TK_COLON) || v[i + 1]->sep == 2 || v[i + 2]->kind != HLO_VAL_PAREN ||
        v[i + 2]->sep == 2) {
      hlp_error(a->P, v[i < n ? i : n - 1]->off, "attribute %s expects %s", a->attr->name, what);
      return -1;
    }
    if (!shape_index(a->P, v[i], out, &idx[i / 3])) {
      hlp_error(a->P, v[i]->off, "%s: output index is not a valid index of the result shape",
                a->attr->name);
      return -1;
    }
    HloVal *p = v[i + 2];
    int64_t num;
    bool ok = (p->nitems == 2 || (with_kind && p->nitems == 3)) && val_int(p->items[0], &num) &&
              num >= 0 && p->items[1]->sep == 2 && shape_index(a->P, p->items[1], NULL, NULL);
    if (ok && p->nitems == 3)
      ok = p->items[2]->sep == 2 &&
           (val_word(p->items[2], "may-alias") || val_word(p->items[2], "must-alias"));
    if (!ok) {
      hlp_error(a->P, p->off, "attribute %s expects %s", a->attr->name, what);
      return -1;
    }
  }
  /* Sorted, equal output indices are neighbours. */
  qsort(idx, (size_t)(n / 3), sizeof *idx, cmp_index);
  for (int32_t k = 1; k < n / 3; k++)
    if (cmp_index(&idx[k - 1], &idx[k]) == 0) {
      hlp_error(a->P, a->off, "%s: an output index is aliased twice", a->attr->name);
      return -1;
    }
  return 0;
}
static int at_output_to_operand_aliasing(A *a) { return aliasing(a, false, &a->ins->shape); }

/* buffer_donor={ (param, {index}), ... } */
static int at_buffer_donor(A *a) {
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_BRACE) return bad(a, "{ (param, {index}), ... }");
  for (int32_t i = 0; i < a->v[0]->nitems; i++) {
    HloVal *p = a->v[0]->items[i];
    int64_t num;
    if ((i && p->sep != 2) || p->kind != HLO_VAL_PAREN || p->nitems != 2 ||
        !val_int(p->items[0], &num) || num < 0 || p->items[1]->sep != 2 ||
        !shape_index(a->P, p->items[1], NULL, NULL))
      return bad(a, "{ (param, {index}), ... }");
  }
  return 0;
}

static int at_async_execution_thread(A *a) { return get_string(a, &a->ins->async_execution_thread); }

static int at_control_predecessors(A *a) {
  HlpParser *P = a->P;
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_BRACE || a->v[0]->nitems == 0)
    return bad(a, "{name, ...}");
  HloVal *b = a->v[0];
  a->ins->ncontrol = b->nitems;
  a->ins->control_preds = hlp_alloc(P, (size_t)b->nitems * sizeof(HloInstr *));
  for (int32_t i = 0; i < b->nitems; i++) {
    HloVal *v = b->items[i];
    if (!is_tok(v, TK_NAME) && !is_tok(v, TK_IDENT)) return bad(a, "{name, ...}");
    size_t n;
    const char *s = name_of(v, &n);
    HloInstr *p = hlp_find_instr(P, s, n);
    if (!p) {
      hlp_error(P, v->off, "instruction '%.*s' is not defined before this use", (int)n, s);
      return -1;
    }
    canon_name(P, v, p->name);
    a->ins->control_preds[i] = p;
  }
  return 0;
}

static int at_metadata(A *a) {
  static const char *const known[] = {
      "op_type", "op_name", "source_file", "source_line", "source_end_line", "source_column",
      "source_end_column", "deduplicated_name", "scheduling_name", "profile_type",
      "stack_frame_id", "preserve_layout", "size_of_generated_code_in_bytes",
      "size_of_memory_working_set_in_bytes", "logical_creation_pass_id", "creation_pass_id"};
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_BRACE) return bad(a, "{op_name=\"...\" ...}");
  HloVal *b = a->v[0];
  for (int32_t i = 0; i < b->nitems; i++) {
    HloVal *it = b->items[i];
    if (it->kind != HLO_VAL_ATTR) { hlp_error(a->P, it->off, "expected name=value in metadata"); return -1; }
    bool ok = false;
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) ok |= strcmp(it->text, known[k]) == 0;
    char key[300];
    snprintf(key, sizeof key, "metadata %s", it->text);
    if (!ok && hlp_first_warning(a->P, key))
      hlp_warning(a->P, it->off, "unknown metadata field '%s' kept verbatim", it->text);
  }
  return 0;
}

static int at_frontend_attributes(A *a) {
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_BRACE) return bad(a, "{key=\"value\", ...}");
  HloVal *b = a->v[0];
  for (int32_t i = 0; i < b->nitems; i++) {
    HloVal *it = b->items[i];
    if (it->kind != HLO_VAL_ATTR ||
        (it->items[0]->kind != HLO_VAL_STRING && it->items[0]->kind != HLO_VAL_RAW)) {
      hlp_error(a->P, it->off, "expected key=\"value\" in frontend_attributes");
      return -1;
    }
  }
  return 0;
}

/* The typed sharding, read by ir/'s one sharding parser from the value's
 * source text (the item tree was read from the same bytes). */
static int at_sharding(A *a) {
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_BRACE) return bad(a, "{...}");
  HloSharding *s = hlp_alloc(a->P, sizeof *s);
  char why[256];
  if (hlo_sharding_parse_prefix(a->P->A, a->P->src + a->v[0]->off, s, why, sizeof why) < 0) {
    hlp_error(a->P, a->off, "attribute sharding: %s", why);
    return -1;
  }
  a->ins->sharding = s;
  return 0;
}
static int64_t leaf_count(const HloShape *s, int depth) {
  if (s->dtype != HLO_TUPLE) return 1;
  int64_t n = 0;
  for (int32_t i = 0; i < s->ntuple && depth < HLX_MAX_DEPTH; i++) n += leaf_count(&s->tuple[i], depth + 1);
  return n;
}

/* One bool per leaf buffer of the instruction's shape. */
static int at_parameter_replication(A *a) {
  if (a->n != 1 || a->v[0]->kind != HLO_VAL_BRACE) return bad(a, "{true,false,...}");
  for (int32_t i = 0; i < a->v[0]->nitems; i++)
    if (!val_word(a->v[0]->items[i], "true") && !val_word(a->v[0]->items[i], "false"))
      return bad(a, "{true,false,...}");
  int64_t leaves = leaf_count(&a->ins->shape, 0);
  if (leaves != a->v[0]->nitems) {
    hlp_error(a->P, a->off, "parameter has %lld leaf buffers, but parameter_replication has %d elements",
              (long long)leaves, (int)a->v[0]->nitems);
    return -1;
  }
  return 0;
}
static int at_to_apply(A *a) { return comp_attr(a, HLO_CALL_TO_APPLY); }
static int at_calls(A *a) {
  HloInstr *ins = a->ins;
  if (a->n == 1 && a->v[0]->kind == HLO_VAL_BRACE) return comp_list_attr(a, HLO_CALL_CALLS);
  if (comp_attr(a, HLO_CALL_CALLS)) return -1;
  HloComputation *c = ins->called[ins->ncalled - 1].comp;
  if (ins->op == HLO_OP_ASYNC_START) {
    /* One async-start per wrapped computation (XLA's rule). */
    for (HlpNode *n = a->P->async_comps.head; n; n = n->next)
      if (n->p == c) {
        hlp_error(a->P, a->off, "computation %s is called by more than one async op", c->name);
        return -1;
      }
    hlp_list_push(a->P, &a->P->async_comps, c);
  } else if ((ins->op == HLO_OP_ASYNC_UPDATE || ins->op == HLO_OP_ASYNC_DONE) && ins->nops == 1 &&
             ins->ops[0]->ncalled && ins->ops[0]->called[0].comp != c) {
    /* Inherited from the async-start: a written one must be the same. */
    hlp_error(a->P, a->off, "%s calls %s, but its async operand calls %s", hlp_opcode_name(ins->op),
              c->name, ins->ops[0]->called[0].comp->name);
    return -1;
  }
  return 0;
}
static int at_condition(A *a) { return comp_attr(a, HLO_CALL_CONDITION); }
static int at_body(A *a) { return comp_attr(a, HLO_CALL_BODY); }
static int at_true_computation(A *a) { return comp_attr(a, HLO_CALL_TRUE); }
static int at_false_computation(A *a) { return comp_attr(a, HLO_CALL_FALSE); }
static int at_branch_computations(A *a) { return comp_list_attr(a, HLO_CALL_BRANCH); }
static int at_select(A *a) { return comp_attr(a, HLO_CALL_SELECT); }
static int at_scatter(A *a) { return comp_attr(a, HLO_CALL_SCATTER); }
static int at_called_computations(A *a) { return comp_list_attr(a, HLO_CALL_CALLED); }
static int at_shape_value(A *a) {
  int32_t i = 0;
  HloShape *s = hlp_shape_from_items(a->P, a->v, a->n, &i);
  if (!s) return -1;
  if (i != a->n) return bad(a, "a shape");
  return 0;
}
static bool word_is(const HloVal *v, const char *w) {
  size_t n = strlen(w);
  return v->text && v->len == n && strncasecmp(v->text, w, n) == 0;
}

/* {mode=default|highest} or {tolerance={atol=A,rtol=R,ulps=N}}: XLA's parser
 * knows no other mode (ResultAccuracy::Mode), so neither does this one. */
static int at_result_accuracy(A *a) {
  if (at_generic_brace(a)) return -1;
  const HloVal *b = a->v[0];
  for (int32_t i = 0; i < b->nitems; i++) {
    const HloVal *it = b->items[i];
    if (it->kind != HLO_VAL_ATTR || it->nitems < 1)
      return bad(a, "{mode=default|highest} or {tolerance={atol=A,rtol=R,ulps=N}}");
    if (word_is(it, "mode")) {
      const HloVal *m = it->items[0];
      if (m->kind != HLO_VAL_TOKEN || !(word_is(m, "default") || word_is(m, "highest"))) {
        hlp_error(a->P, m->off, "result_accuracy: unknown mode '%.*s' (the modes are default and highest)",
                  (int)(m->len < 64 ? m->len : 64), m->text ? m->text : "");
        return -1;
      }
    } else if (!word_is(it, "tolerance")) {
      return bad(a, "{mode=default|highest} or {tolerance={atol=A,rtol=R,ulps=N}}");
    }
  }
  return 0;
}

/* ---- The table ------------------------------------------------------------- */

/* Opcode sets. */
enum {
  S_ALL, S_RA, S_DIMS, S_GTE, S_IOTA, S_WINDOW, S_PAD, S_SLICE, S_DSLICE, S_DOT, S_RAGGED,
  S_PRECISION, S_ALGORITHM, S_CONV, S_CONVCC, S_GATHER, S_SCATTER, S_GS, S_COMPARE, S_FUSION,
  S_CALLS, S_TO_APPLY, S_WHILE, S_COND, S_SAS, S_CC, S_FFT, S_RNG, S_RNGSTATE, S_SORT, S_TOPK,
  S_REDPREC, S_BN, S_TRI, S_TRICHOL, S_SCAN, S_CHANNEL, S_GROUPS, S_GLOBAL, S_CONSTRAIN,
  S_ALLREDUCE, S_PERMUTE, S_SENDRECV, S_ALIASING, S_RESHAPE, S_COPYSTART, S_INFEED, S_OUTFEED,
  S_CALL, S_ASYNC, S_DOMAIN, S_SLICE_SIZES
};

static bool in_set(int set, HloOpcode op) {
  switch (set) {
  case S_ALL: return true;
  case S_RA:
    switch (op) {
    case HLO_OP_ACOS: case HLO_OP_ACOSH: case HLO_OP_ASIN: case HLO_OP_ASINH: case HLO_OP_ATANH:
    case HLO_OP_CBRT: case HLO_OP_COSINE: case HLO_OP_ERF: case HLO_OP_EXPONENTIAL:
    case HLO_OP_EXPONENTIAL_MINUS_ONE: case HLO_OP_LOG: case HLO_OP_LOG_PLUS_ONE:
    case HLO_OP_LOGISTIC: case HLO_OP_RSQRT: case HLO_OP_SINE: case HLO_OP_SINH: case HLO_OP_SQRT:
    case HLO_OP_TAN: case HLO_OP_TANH: case HLO_OP_COSH: return true;
    default: return false;
    }
  case S_DIMS:
    switch (op) {
    case HLO_OP_BROADCAST: case HLO_OP_REDUCE: case HLO_OP_TRANSPOSE: case HLO_OP_REVERSE:
    case HLO_OP_CONCATENATE: case HLO_OP_SORT: case HLO_OP_MAP: case HLO_OP_ALL_GATHER:
    case HLO_OP_ALL_GATHER_START: case HLO_OP_ALL_TO_ALL: case HLO_OP_REDUCE_SCATTER:
    case HLO_OP_GET_DIMENSION_SIZE: case HLO_OP_SET_DIMENSION_SIZE: case HLO_OP_SCAN:
    case HLO_OP_RAGGED_ALL_TO_ALL: return true;
    default: return false;
    }
  case S_GTE: return op == HLO_OP_GET_TUPLE_ELEMENT;
  case S_IOTA: return op == HLO_OP_IOTA;
  case S_WINDOW:
    return op == HLO_OP_CONVOLUTION || op == HLO_OP_REDUCE_WINDOW || op == HLO_OP_SELECT_AND_SCATTER ||
           op == HLO_OP_CUSTOM_CALL;
  case S_PAD: return op == HLO_OP_PAD;
  case S_SLICE: return op == HLO_OP_SLICE;
  case S_DSLICE: return op == HLO_OP_DYNAMIC_SLICE;
  case S_DOT: return op == HLO_OP_DOT || op == HLO_OP_RAGGED_DOT || op == HLO_OP_SCALED_DOT;
  case S_RAGGED: return op == HLO_OP_RAGGED_DOT;
  case S_PRECISION: return in_set(S_DOT, op) || op == HLO_OP_CONVOLUTION || op == HLO_OP_CUSTOM_CALL;
  case S_ALGORITHM: return op == HLO_OP_DOT || op == HLO_OP_SCALED_DOT || op == HLO_OP_RNG_BIT_GENERATOR;
  case S_CONV: return op == HLO_OP_CONVOLUTION;
  case S_CONVCC: return op == HLO_OP_CONVOLUTION || op == HLO_OP_CUSTOM_CALL;
  case S_GATHER: return op == HLO_OP_GATHER;
  case S_SLICE_SIZES: return op == HLO_OP_GATHER || in_set(S_PERMUTE, op);
  case S_SCATTER: return op == HLO_OP_SCATTER;
  case S_GS: return op == HLO_OP_GATHER || op == HLO_OP_SCATTER;
  case S_COMPARE: return op == HLO_OP_COMPARE;
  case S_FUSION: return op == HLO_OP_FUSION;
  case S_CALLS:
    return op == HLO_OP_FUSION || op == HLO_OP_ASYNC_START || op == HLO_OP_ASYNC_UPDATE ||
           op == HLO_OP_ASYNC_DONE;
  case S_TO_APPLY:
    switch (op) {
    case HLO_OP_CALL: case HLO_OP_MAP: case HLO_OP_REDUCE: case HLO_OP_REDUCE_WINDOW:
    case HLO_OP_REDUCE_SCATTER: case HLO_OP_ALL_REDUCE: case HLO_OP_ALL_REDUCE_START:
    case HLO_OP_SCATTER: case HLO_OP_SORT: case HLO_OP_SCAN: case HLO_OP_CUSTOM_CALL: return true;
    default: return false;
    }
  case S_WHILE: return op == HLO_OP_WHILE;
  case S_COND: return op == HLO_OP_CONDITIONAL;
  case S_SAS: return op == HLO_OP_SELECT_AND_SCATTER;
  case S_CC: return op == HLO_OP_CUSTOM_CALL;
  case S_FFT: return op == HLO_OP_FFT;
  case S_RNG: return op == HLO_OP_RNG;
  case S_RNGSTATE: return op == HLO_OP_RNG_GET_AND_UPDATE_STATE;
  case S_SORT: return op == HLO_OP_SORT;
  case S_TOPK: return op == HLO_OP_TOPK;
  case S_REDPREC: return op == HLO_OP_REDUCE_PRECISION;
  case S_BN:
    return op == HLO_OP_BATCH_NORM_GRAD || op == HLO_OP_BATCH_NORM_INFERENCE ||
           op == HLO_OP_BATCH_NORM_TRAINING;
  case S_TRI: return op == HLO_OP_TRIANGULAR_SOLVE;
  case S_TRICHOL: return op == HLO_OP_TRIANGULAR_SOLVE || op == HLO_OP_CHOLESKY;
  case S_SCAN: return op == HLO_OP_SCAN;
  case S_GROUPS:
    switch (op) {
    case HLO_OP_ALL_GATHER: case HLO_OP_ALL_GATHER_START: case HLO_OP_ALL_REDUCE:
    case HLO_OP_ALL_REDUCE_START: case HLO_OP_ALL_TO_ALL: case HLO_OP_RAGGED_ALL_TO_ALL:
    case HLO_OP_COLLECTIVE_BROADCAST: case HLO_OP_REDUCE_SCATTER: return true;
    default: return false;
    }
  case S_CHANNEL:
    return in_set(S_GROUPS, op) || in_set(S_PERMUTE, op) || in_set(S_SENDRECV, op);
  case S_GLOBAL:
    return op == HLO_OP_ALL_GATHER || op == HLO_OP_ALL_GATHER_START || op == HLO_OP_ALL_REDUCE ||
           op == HLO_OP_ALL_REDUCE_START || op == HLO_OP_REDUCE_SCATTER;
  case S_CONSTRAIN: return in_set(S_GLOBAL, op) || op == HLO_OP_ALL_TO_ALL || op == HLO_OP_RAGGED_ALL_TO_ALL;
  case S_ALLREDUCE: return op == HLO_OP_ALL_REDUCE || op == HLO_OP_ALL_REDUCE_START || op == HLO_OP_REDUCE_SCATTER;
  case S_PERMUTE: return op == HLO_OP_COLLECTIVE_PERMUTE || op == HLO_OP_COLLECTIVE_PERMUTE_START;
  case S_SENDRECV:
    return op == HLO_OP_SEND || op == HLO_OP_RECV || op == HLO_OP_SEND_DONE || op == HLO_OP_RECV_DONE;
  case S_ALIASING: return op == HLO_OP_CUSTOM_CALL || op == HLO_OP_FUSION || op == HLO_OP_ASYNC_START;
  case S_RESHAPE: return op == HLO_OP_RESHAPE;
  case S_COPYSTART: return op == HLO_OP_COPY_START;
  case S_INFEED: return op == HLO_OP_INFEED;
  case S_OUTFEED: return op == HLO_OP_OUTFEED;
  case S_CALL: return op == HLO_OP_CALL;
  case S_ASYNC: return op == HLO_OP_ASYNC_START || op == HLO_OP_ASYNC_UPDATE || op == HLO_OP_ASYNC_DONE;
  case S_DOMAIN: return op == HLO_OP_DOMAIN;
  }
  return false;
}

/* Required-ness: which opcodes of the set must have the attribute. */
enum { R_NO, R_YES, R_GATHER_ONLY };

typedef struct AttrDef {
  const char *name;
  int (*fn)(A *);
  int set;
  int req;
} AttrDef;

static const AttrDef attr_defs[] = {
  {"sharding", at_sharding, S_ALL, R_NO},
  {"frontend_attributes", at_frontend_attributes, S_ALL, R_NO},
  {"statistics", at_generic_brace, S_ALL, R_NO},
  {"parameter_replication", at_parameter_replication, S_ALL, R_NO},
  {"control-predecessors", at_control_predecessors, S_ALL, R_NO},
  {"origin", at_generic_brace, S_ALL, R_NO},
  {"metadata", at_metadata, S_ALL, R_NO},
  {"backend_config", at_backend_config, S_ALL, R_NO},
  {"result_accuracy", at_result_accuracy, S_RA, R_NO},
  {"dimensions", at_dimensions, S_DIMS, R_YES},
  {"index", at_index, S_GTE, R_YES},
  {"iota_dimension", at_iota_dimension, S_IOTA, R_YES},
  {"window", at_window, S_WINDOW, R_NO},
  {"padding", at_padding, S_PAD, R_YES},
  {"slice", at_slice, S_SLICE, R_YES},
  {"dynamic_slice_sizes", at_dynamic_slice_sizes, S_DSLICE, R_YES},
  {"lhs_batch_dims", at_lhs_batch, S_DOT, R_NO},
  {"lhs_contracting_dims", at_lhs_contracting, S_DOT, R_NO},
  {"rhs_batch_dims", at_rhs_batch, S_DOT, R_NO},
  {"rhs_contracting_dims", at_rhs_contracting, S_DOT, R_NO},
  {"lhs_ragged_dims", at_lhs_ragged, S_RAGGED, R_NO},
  {"rhs_group_dims", at_rhs_group, S_RAGGED, R_NO},
  {"operand_precision", at_operand_precision, S_PRECISION, R_NO},
  {"algorithm", at_algorithm, S_ALGORITHM, R_NO},
  {"dim_labels", at_dim_labels, S_CONVCC, R_NO},
  {"feature_group_count", at_feature_group_count, S_CONVCC, R_NO},
  {"batch_group_count", at_batch_group_count, S_CONVCC, R_NO},
  {"convolution_kind", at_convolution_kind, S_CONV, R_NO},
  {"sparsity_config", at_generic_brace, S_CONV, R_NO},
  {"offset_dims", at_offset_dims, S_GATHER, R_YES},
  {"collapsed_slice_dims", at_collapsed_slice_dims, S_GATHER, R_YES},
  {"start_index_map", at_start_index_map, S_GATHER, R_YES},
  {"operand_batching_dims", at_operand_batching_dims, S_GATHER, R_NO},
  {"start_indices_batching_dims", at_start_indices_batching_dims, S_GATHER, R_NO},
  {"slice_sizes", at_slice_sizes, S_SLICE_SIZES, R_GATHER_ONLY},
  {"index_vector_dim", at_index_vector_dim, S_GS, R_YES},
  {"indices_are_sorted", at_indices_are_sorted, S_GS, R_NO},
  {"update_window_dims", at_update_window_dims, S_SCATTER, R_YES},
  {"inserted_window_dims", at_inserted_window_dims, S_SCATTER, R_YES},
  {"scatter_dims_to_operand_dims", at_scatter_dims_to_operand_dims, S_SCATTER, R_YES},
  {"input_batching_dims", at_input_batching_dims, S_SCATTER, R_NO},
  {"scatter_indices_batching_dims", at_scatter_indices_batching_dims, S_SCATTER, R_NO},
  {"unique_indices", at_unique_indices, S_SCATTER, R_NO},
  {"direction", at_direction, S_COMPARE, R_YES},
  {"type", at_type, S_COMPARE, R_NO},
  {"kind", at_kind, S_FUSION, R_YES},
  {"calls", at_calls, S_CALLS, R_NO},
  {"to_apply", at_to_apply, S_TO_APPLY, R_NO},
  {"condition", at_condition, S_WHILE, R_YES},
  {"body", at_body, S_WHILE, R_YES},
  {"true_computation", at_true_computation, S_COND, R_NO},
  {"false_computation", at_false_computation, S_COND, R_NO},
  {"branch_computations", at_branch_computations, S_COND, R_NO},
  {"select", at_select, S_SAS, R_YES},
  {"scatter", at_scatter, S_SAS, R_YES},
  {"called_computations", at_called_computations, S_CC, R_NO},
  {"fft_type", at_fft_type, S_FFT, R_YES},
  {"fft_length", at_fft_length, S_FFT, R_YES},
  {"distribution", at_distribution, S_RNG, R_YES},
  {"delta", at_delta, S_RNGSTATE, R_YES},
  {"is_stable", at_is_stable, S_SORT, R_NO},
  {"k", at_k, S_TOPK, R_YES},
  {"largest", at_largest, S_TOPK, R_NO},
  {"exponent_bits", at_exponent_bits, S_REDPREC, R_YES},
  {"mantissa_bits", at_mantissa_bits, S_REDPREC, R_YES},
  {"epsilon", at_epsilon, S_BN, R_YES},
  {"feature_index", at_feature_index, S_BN, R_YES},
  {"left_side", at_left_side, S_TRI, R_NO},
  {"lower", at_lower, S_TRICHOL, R_NO},
  {"unit_diagonal", at_unit_diagonal, S_TRI, R_NO},
  {"transpose_a", at_transpose_a, S_TRI, R_NO},
  {"num_carries", at_num_carries, S_SCAN, R_YES},
  {"is_reverse", at_is_reverse, S_SCAN, R_NO},
  {"is_associative", at_is_associative, S_SCAN, R_NO},
  {"channel_id", at_channel_id, S_CHANNEL, R_NO},
  {"replica_groups", at_replica_groups, S_GROUPS, R_NO},
  {"use_global_device_ids", at_use_global_device_ids, S_GLOBAL, R_NO},
  {"constrain_layout", at_bool_only, S_CONSTRAIN, R_NO},
  {"mode", at_mode, S_ALLREDUCE, R_NO},
  {"source_target_pairs", at_source_target_pairs, S_PERMUTE, R_YES},
  {"is_host_transfer", at_bool_only, S_SENDRECV, R_NO},
  {"custom_call_target", at_custom_call_target, S_CC, R_YES},
  {"api_version", at_api_version, S_CC, R_NO},
  {"custom_call_has_side_effect", at_has_side_effect, S_CC, R_NO},
  {"operand_layout_constraints", at_operand_layout_constraints, S_CC, R_NO},
  {"output_to_operand_aliasing", at_output_to_operand_aliasing, S_ALIASING, R_NO},
  {"schedule", at_schedule, S_CC, R_NO},
  {"custom_call_schedule", at_schedule, S_CC, R_NO},
  {"padding_type", at_padding_type, S_CC, R_NO},
  {"literal", at_literal, S_CC, R_NO},
  {"inferred_dimension", at_int_only, S_RESHAPE, R_NO},
  {"cross_program_prefetch_index", at_int_only, S_COPYSTART, R_NO},
  {"infeed_config", at_string_only, S_INFEED, R_NO},
  {"outfeed_config", at_string_only, S_OUTFEED, R_NO},
  {"outfeed_shape", at_shape_value, S_OUTFEED, R_NO},
  {"is_composite", at_bool_only, S_CALL, R_NO},
  {"async_execution_thread", at_async_execution_thread, S_ASYNC, R_NO},
  {"domain", at_generic_brace, S_DOMAIN, R_YES},
};
enum { NDEFS = sizeof attr_defs / sizeof attr_defs[0] };

static int find_def(const char *name) {
  for (int i = 0; i < NDEFS; i++)
    if (strcmp(attr_defs[i].name, name) == 0) return i;
  return -1;
}

/* Attribute definitions whose "required" depends on more than the opcode. */
static bool required_here(const AttrDef *d, const HloInstr *ins) {
  if (d->req == R_NO) return false;
  if (d->req == R_GATHER_ONLY) return ins->op == HLO_OP_GATHER;
  if (strcmp(d->name, "dimensions") == 0) {
    switch (ins->op) {
    case HLO_OP_MAP: case HLO_OP_ALL_TO_ALL: case HLO_OP_RAGGED_ALL_TO_ALL: return false;
    case HLO_OP_BROADCAST: return !(ins->nops == 1 && ins->ops[0]->shape.rank == 0 &&
                                    ins->ops[0]->shape.dtype != HLO_TUPLE);
    default: return true;
    }
  }
  if (strcmp(d->name, "index_vector_dim") == 0) return true;
  return true;
}

static bool async_shape(const HloShape *s) {
  return s->dtype == HLO_TUPLE && s->ntuple >= 2 && s->tuple[0].dtype == HLO_TUPLE;
}

/* Operand counts of the variadic opcodes that depend on shapes. */
static bool check_operand_count(HlpParser *P, const HloInstr *ins) {
  int32_t n = ins->nops, want = -1;
  const char *what = NULL;
  switch (ins->op) {
  /* Besides one scalar start index per dimension, XLA still accepts the old
   * form with a single rank-1 index vector. */
  case HLO_OP_DYNAMIC_SLICE:
    if (n < 1) { want = 1; what = "at least the operand"; break; }
    if (n == 2 && ins->ops[1]->shape.dtype != HLO_TUPLE && ins->ops[1]->shape.rank == 1) break;
    if (n >= 1 && ins->ops[0]->shape.dtype != HLO_TUPLE && n != 1 + ins->ops[0]->shape.rank) {
      want = 1 + ins->ops[0]->shape.rank;
      what = "operand + one start index per dimension";
    }
    break;
  case HLO_OP_DYNAMIC_UPDATE_SLICE:
    if (n < 2) { want = 2; what = "at least the operand and the update"; break; }
    if (n == 3 && ins->ops[2]->shape.dtype != HLO_TUPLE && ins->ops[2]->shape.rank == 1) break;
    if (n >= 1 && ins->ops[0]->shape.dtype != HLO_TUPLE && n != 2 + ins->ops[0]->shape.rank) {
      want = 2 + ins->ops[0]->shape.rank;
      what = "operand, update + one start index per dimension";
    }
    break;
  case HLO_OP_SCATTER:
    if (n < 3 || n % 2 == 0) { want = n < 3 ? 3 : n + 1; what = "k operands, indices, k updates"; }
    break;
  case HLO_OP_RNG:
    if (n != 2) { want = 2; what = "two distribution parameters"; }
    break;
  case HLO_OP_COLLECTIVE_PERMUTE: case HLO_OP_COLLECTIVE_PERMUTE_START:
    /* Any number of operands (combined permutes); with slice_sizes it is the
     * in-place form: input, output, input offsets, output offsets. */
    for (int32_t i = 0; i < ins->nattrs; i++)
      if (strcmp(ins->attrs[i].name, "slice_sizes") == 0 && n != 4) {
        want = 4;
        what = "input, output and two offsets with slice_sizes";
      }
    break;
  case HLO_OP_ASYNC_START:
    if (ins->shape.dtype != HLO_TUPLE || ins->shape.ntuple < 2 ||
        ins->shape.tuple[0].dtype != HLO_TUPLE || ins->shape.tuple[0].ntuple != n) {
      hlp_error(P, ins->off, "async-start shape must be ((operand shapes...), result, state...)");
      return false;
    }
    break;
  case HLO_OP_ASYNC_UPDATE: case HLO_OP_ASYNC_DONE: {
    const HloInstr *o = n == 1 ? ins->ops[0] : NULL;
    if (!o || (o->op != HLO_OP_ASYNC_START && o->op != HLO_OP_ASYNC_UPDATE) ||
        !async_shape(&o->shape)) {
      hlp_error(P, ins->off, "%s expects one operand, the previous async op, shaped "
                "((operands...), results, state...)", hlp_opcode_name(ins->op));
      return false;
    }
    if (ins->op == HLO_OP_ASYNC_UPDATE && !async_shape(&ins->shape)) {
      hlp_error(P, ins->off, "async-update shape must be ((operands...), results, state...)");
      return false;
    }
    break;
  }
  default:
    break;
  }
  if (what) {
    hlp_error(P, ins->off, "%s expects %d operands (%s), got %d", hlp_opcode_name(ins->op), (int)want,
              what, (int)n);
    return false;
  }
  return true;
}

int hlp_lower_attrs(HlpParser *P, HloInstr *ins, SynInstr *si) {
  ins->nattrs = si->attrs.n;
  ins->attrs = hlp_alloc(P, (size_t)(si->attrs.n ? si->attrs.n : 1) * sizeof *ins->attrs);
  bool seen[NDEFS] = {0};
  int i = 0;
  for (HlpNode *n = si->attrs.head; n; n = n->next, i++) {
    SynAttr *sa = n->p;
    HloAttr *at = &ins->attrs[i];
    at->name = hlp_strndup(P, P->src + sa->name.off, sa->name.len - 1);
    at->off = sa->name.off;
    at->nvalues = sa->vals.n;
    at->values = (HloVal **)hlp_list_array(P, &sa->vals);
    for (int j = 0; j < i; j++)
      if (strcmp(ins->attrs[j].name, at->name) == 0) {
        hlp_error(P, at->off, "attribute %s given twice", at->name);
        return -1;
      }
    if (strcmp(at->name, "device_ids") == 0 && i > 0 &&
        strcmp(ins->attrs[i - 1].name, "replica_groups") == 0 && mesh_head(&ins->attrs[i - 1])) {
      if (mesh_groups(P, ins, &ins->attrs[i - 1], at) != 0) return -1;
      at->known = true;
      continue;
    }
    int d = find_def(at->name);
    if (d < 0) {
      char key[300];
      snprintf(key, sizeof key, "attr %s", at->name);
      if (hlp_first_warning(P, key))
        hlp_warning(P, at->off, "unknown attribute '%s' kept verbatim", at->name);
      continue;
    }
    if (!in_set(attr_defs[d].set, ins->op)) {
      hlp_error(P, at->off, "unexpected attribute %s for %s", at->name, hlp_opcode_name(ins->op));
      return -1;
    }
    A a = {P, ins, at, at->values, at->nvalues, at->values[0]->off};
    if (attr_defs[d].fn(&a) != 0) return -1;
    at->known = true;
    seen[d] = true;
  }
  for (int32_t k = 0; k < ins->nattrs; k++)
    if (strcmp(ins->attrs[k].name, "replica_groups") == 0 && mesh_head(&ins->attrs[k]) &&
        ins->attrs[k].nvalues == 2 &&
        (k + 1 >= ins->nattrs || strcmp(ins->attrs[k + 1].name, "device_ids") != 0))
      return mesh_err(P, ins->attrs[k].values[1], "expected {axes} after the mesh (e.g. mesh['x'=4] {'x'})");
  for (int d = 0; d < NDEFS; d++)
    if (!seen[d] && in_set(attr_defs[d].set, ins->op) && required_here(&attr_defs[d], ins)) {
      if (ins->op == HLO_OP_ASYNC_START) continue;
      hlp_error(P, ins->off, "%s %s is missing attribute %s", hlp_opcode_name(ins->op), ins->name,
                attr_defs[d].name);
      return -1;
    }
  /* Opcode-specific combinations. */
  switch (ins->op) {
  case HLO_OP_CONDITIONAL: {
    bool tf = seen[find_def("true_computation")] || seen[find_def("false_computation")];
    bool br = seen[find_def("branch_computations")];
    if (tf == br || (tf && !(seen[find_def("true_computation")] && seen[find_def("false_computation")]))) {
      hlp_error(P, ins->off, "conditional needs true_computation and false_computation, or branch_computations");
      return -1;
    }
    int nb = ins->ncalled;
    const HloShape *sel = &ins->ops[0]->shape;
    HloDtype want = tf ? HLO_PRED : HLO_S32;
    if (sel->dtype != want || sel->rank != 0) {
      hlp_error(P, ins->off, "conditional with %s needs a %s selector",
                tf ? "true/false_computation" : "branch_computations", tf ? "pred[]" : "s32[]");
      return -1;
    }
    if (ins->nops != nb + 1) {
      hlp_error(P, ins->off, "conditional with %d branches expects %d operands, got %d", nb, nb + 1,
                (int)ins->nops);
      return -1;
    }
    break;
  }
  case HLO_OP_INFEED:
    if (ins->shape.dtype != HLO_TUPLE || ins->shape.ntuple == 0) {
      hlp_error(P, ins->off, "infeed must have a non-empty tuple shape");
      return -1;
    }
    break;
  case HLO_OP_FUSION:
    if (!ins->ncalled) { hlp_error(P, ins->off, "fusion %s is missing attribute calls", ins->name); return -1; }
    break;
  case HLO_OP_ASYNC_START:
    if (!ins->ncalled) { hlp_error(P, ins->off, "async-start %s is missing attribute calls", ins->name); return -1; }
    break;
  case HLO_OP_CUSTOM_CALL:
    if (seen[find_def("to_apply")] && seen[find_def("called_computations")]) {
      hlp_error(P, ins->off, "custom-call takes to_apply or called_computations, not both");
      return -1;
    }
    break;
  case HLO_OP_SORT: case HLO_OP_CONCATENATE:
    if (ins->dimensions.n != 1) {
      hlp_error(P, ins->off, "%s takes exactly one dimension", hlp_opcode_name(ins->op));
      return -1;
    }
    break;
  case HLO_OP_CALL: case HLO_OP_MAP: case HLO_OP_REDUCE: case HLO_OP_REDUCE_WINDOW:
  case HLO_OP_REDUCE_SCATTER: case HLO_OP_ALL_REDUCE: case HLO_OP_ALL_REDUCE_START:
  case HLO_OP_SCATTER: case HLO_OP_SCAN:
    if (!ins->ncalled) {
      hlp_error(P, ins->off, "%s %s is missing attribute to_apply", hlp_opcode_name(ins->op), ins->name);
      return -1;
    }
    break;
  default:
    break;
  }
  if ((ins->op == HLO_OP_REDUCE || ins->op == HLO_OP_REDUCE_WINDOW) && ins->nops % 2) {
    hlp_error(P, ins->off, "%s expects an even number of operands (inputs and inits), got %d",
              hlp_opcode_name(ins->op), (int)ins->nops);
    return -1;
  }
  if (!check_operand_count(P, ins)) return -1;
  if (ins->op == HLO_OP_CONCATENATE && ins->nops < 1) {
    hlp_error(P, ins->off, "concatenate expects at least one operand");
    return -1;
  }
  return 0;
}

/* ---- Module attributes ------------------------------------------------------ */

int hlp_lower_module_attrs(HlpParser *P) {
  static const char *const known[] = {
      "is_scheduled", "entry_computation_layout", "input_output_alias", "buffer_donor",
      "alias_passthrough_params", "allow_spmd_sharding_propagation_to_parameters",
      "allow_spmd_sharding_propagation_to_output", "replica_count", "num_partitions",
      "frontend_attributes", "origin_recovery_table"};
  HloModule *m = P->m;
  m->nattrs = P->syn.attrs.n;
  m->attrs = hlp_alloc(P, (size_t)(m->nattrs ? m->nattrs : 1) * sizeof *m->attrs);
  int i = 0;
  HloInstr dummy = {0};
  for (HlpNode *n = P->syn.attrs.head; n; n = n->next, i++) {
    SynAttr *sa = n->p;
    HloAttr *at = &m->attrs[i];
    at->name = hlp_strndup(P, P->src + sa->name.off, sa->name.len - 1);
    at->off = sa->name.off;
    at->nvalues = sa->vals.n;
    at->values = (HloVal **)hlp_list_array(P, &sa->vals);
    for (int j = 0; j < i; j++)
      if (strcmp(m->attrs[j].name, at->name) == 0) {
        hlp_error(P, at->off, "module attribute %s given twice", at->name);
        return -1;
      }
    A a = {P, &dummy, at, at->values, at->nvalues, at->values[0]->off};
    const char *nm = at->name;
    int rc = 0;
    bool is_known = false;
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) is_known |= strcmp(nm, known[k]) == 0;
    if (!is_known) {
      hlp_warning(P, at->off, "unknown module attribute '%s' kept verbatim", nm);
      continue;
    }
    if (strcmp(nm, "is_scheduled") == 0) rc = get_bool(&a, &m->is_scheduled);
    else if (strcmp(nm, "alias_passthrough_params") == 0) rc = at_bool_only(&a);
    else if (strcmp(nm, "input_output_alias") == 0) rc = aliasing(&a, true, &m->entry->root->shape);
    else if (strcmp(nm, "buffer_donor") == 0) rc = at_buffer_donor(&a);
    else if (strcmp(nm, "replica_count") == 0) {
      rc = get_int(&a, &m->replica_count);
      if (!rc && m->replica_count < 1) rc = bad(&a, "a positive integer");
    } else if (strcmp(nm, "num_partitions") == 0) {
      rc = get_int(&a, &m->num_partitions);
      if (!rc && m->num_partitions < 1) rc = bad(&a, "a positive integer");
    } else if (strcmp(nm, "frontend_attributes") == 0) rc = at_frontend_attributes(&a);
    else if (strcmp(nm, "entry_computation_layout") == 0) {
      HloVal *b = at->values[0];
      int32_t k = 0;
      if (at->nvalues != 1 || b->kind != HLO_VAL_BRACE || b->nitems < 3 ||
          b->items[0]->kind != HLO_VAL_PAREN || !is_tok(b->items[1], TK_ARROW))
        rc = bad(&a, "{(shapes...)->shape}");
      else {
        HloShape *ps = hlp_shape_from_items(P, b->items, b->nitems, &k);
        k = 2;
        HloShape *rs = ps ? hlp_shape_from_items(P, b->items, b->nitems, &k) : NULL;
        if (!ps || !rs) return -1;
        if (k != b->nitems) rc = bad(&a, "{(shapes...)->shape}");
        m->entry_layout = ps;
        m->entry_result_layout = rs;
        HloComputation *e = m->entry;
        if (!rc && e) {
          bool ok = ps->ntuple == e->nparams && hlp_shape_compatible(rs, &e->root->shape);
          for (int32_t q = 0; ok && q < e->nparams; q++)
            ok = hlp_shape_compatible(&ps->tuple[q], &e->params[q]->shape);
          /* XLA's parser takes the layout as given (its verifier compares
           * it with the entry computation): a warning, not an error. */
          if (!ok)
            hlp_warning(P, a.off, "entry_computation_layout does not match the entry computation '%s'",
                        e->name);
        }
      }
    } else if (at->nvalues != 1) rc = bad(&a, "one value");
    if (rc) return -1;
    at->known = true;
  }
  return 0;
}
