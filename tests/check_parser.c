/* check_parser.c: unit tests of the HLO text parser: lexer tokens, shapes
 * and layouts, attributes of every kind, literals of every element type,
 * the printer, error messages (compared whole, with positions) and
 * malformed inputs (truncated, garbage, deep nesting: no crash, no leak).
 * Expected values are worked out by hand from the spec (hlo-text.md) and
 * IEEE/bfloat16 bit layouts, not taken from the parser's own output.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "parser/parser.h"
#include "parser/syntax.h"
#include "hlo.h"
#include "tests/testlib.h"

/* ---- helpers ---------------------------------------------------------------- */

static HloModule *parse_ok(const char *text) {
  HlcDiags d = {0};
  HloModule *m = hlp_parse(text, strlen(text), "t.hlo", &d);
  if (!m)
    for (int i = 0; i < d.n; i++) fputs(d.v[i].text, stderr);
  ck_assert_ptr_nonnull(m);
  hlc_diags_clear(&d);
  return m;
}

/* The first error's whole text, or NULL if the text parsed. Caller frees. */
static char *first_error(const char *text, size_t len) {
  HlcDiags d = {0};
  HloModule *m = hlp_parse(text, len, "t.hlo", &d);
  char *r = NULL;
  if (m) hlp_module_free(m);
  for (int i = 0; i < d.n && !r; i++)
    if (d.v[i].sev == HLC_ERROR) r = strdup(d.v[i].text);
  if (!m) ck_assert_ptr_nonnull(r);
  hlc_diags_clear(&d);
  return r;
}

static void expect_error(const char *text, const char *want) {
  char *e = first_error(text, strlen(text));
  ck_assert_ptr_nonnull(e);
  ck_assert_str_eq(e, want);
  free(e);
}

/* Error message only (position checked separately through line/col). */
static void expect_msg(const char *text, int line, int col, const char *msg) {
  HlcDiags d = {0};
  HloModule *m = hlp_parse(text, strlen(text), "t.hlo", &d);
  ck_assert_ptr_null(m);
  ck_assert_int_ge(d.n, 1);
  int k = 0;
  while (k < d.n && d.v[k].sev != HLC_ERROR) k++;
  ck_assert_int_lt(k, d.n);
  ck_assert_str_eq(d.v[k].message, msg);
  ck_assert_int_eq(d.v[k].line, line);
  ck_assert_int_eq(d.v[k].col, col);
  hlc_diags_clear(&d);
}

static HloInstr *find(HloModule *m, const char *name) {
  for (int32_t c = 0; c < m->ncomps; c++)
    for (int32_t i = 0; i < m->comps[c]->ninstrs; i++)
      if (strcmp(m->comps[c]->instrs[i]->name, name) == 0) return m->comps[c]->instrs[i];
  ck_abort_msg("no instruction %s", name);
  return NULL;
}

/* A module whose entry has the given instruction lines. */
static HloModule *entry(const char *body) {
  static char buf[8192];
  snprintf(buf, sizeof buf,
           "HloModule m\n%%add (ax: f32[], ay: f32[]) -> f32[] {\n  %%ax = f32[] parameter(0)\n"
           "  %%ay = f32[] parameter(1)\n  ROOT %%as = f32[] add(%%ax, %%ay)\n}\n\nENTRY %%e {\n%s\n}\n",
           body);
  return parse_ok(buf);
}

/* ---- lexer ------------------------------------------------------------------ */

static void lex_error(HlpParser *P, size_t off, const char *msg) { hlp_error(P, off, "%s", msg); }

static int lex_all(const char *s, int *kinds, int max) {
  HlpParser P = {0};
  HlcDiags d = {0};
  HlcArena A;
  hlc_arena_init(&A);
  P.diags = &d;
  P.A = &A;
  P.src = s;
  P.len = strlen(s);
  P.file = "t";
  HlxLexer L;
  hlx_init(&L, &P, s, strlen(s), lex_error);
  int n = 0;
  HlxToken t;
  for (;;) {
    int k = hlx_next(&L, &t);
    if (n < max) kinds[n++] = k;
    if (k <= 0) break;
  }
  hlc_diags_clear(&d);
  hlc_arena_free(&A);
  return n;
}

START_TEST(lex_names_and_context) {
  int k[32];
  /* x: is a CNAME, dims= an ATTRNAME, "a = " an instruction definition. */
  int n = lex_all("x: dims= a = %b.1 =add f32[2] f32 b(", k, 32);
  ck_assert_int_eq(n, 12);
  ck_assert_int_eq(k[0], TK_CNAME);
  ck_assert_int_eq(k[1], TK_ATTRNAME);
  ck_assert_int_eq(k[2], TK_DEFNAME);
  ck_assert_int_eq(k[3], TK_DEFNAME);   /* "%b.1 =" then "add" */
  ck_assert_int_eq(k[4], TK_IDENT);
  ck_assert_int_eq(k[5], TK_TYPE);
  ck_assert_int_eq(k[6], TK_LBRACKET);
  /* f32[2] -> TYPE [ INT ] ; then "f32" alone is an IDENT, "b(" a buffer shape. */
  n = lex_all("f32[2] f32 b(", k, 32);
  ck_assert_int_eq(n, 7);
  ck_assert_int_eq(k[3], TK_RBRACKET);
  ck_assert_int_eq(k[4], TK_IDENT);
  ck_assert_int_eq(k[5], TK_BUFSHAPE);
  ck_assert_int_eq(k[6], 0);
  /* a == b is not a definition. */
  n = lex_all("custom-call.1 ENTRY ROOT HloModule", k, 32);
  ck_assert_int_eq(k[0], TK_IDENT);
  ck_assert_int_eq(k[1], TK_KW_ENTRY);
  ck_assert_int_eq(k[2], TK_KW_ROOT);
  ck_assert_int_eq(k[3], TK_KW_HLOMODULE);
}
END_TEST

START_TEST(lex_numbers) {
  int k[32];
  int n = lex_all("0 -7 18446744073709551615 1.5 -.25 1e-05 3x3 0_1x-1_2 0_0_1 -inf nan nan(0x7f) "
                  "-nan bf01_oi01->bf01 ?\?_?\?->?\? ... -> <=",
                  k, 32);
  int want[] = {TK_INT, TK_INT, TK_INT, TK_DECIMAL, TK_DECIMAL, TK_DECIMAL, TK_DXD, TK_PAD, TK_PAD,
                TK_NEGINF, TK_DECIMAL, TK_DECIMAL, TK_DECIMAL, TK_DIMLABELS, TK_DIMLABELS,
                TK_ELLIPSIS, TK_ARROW, TK_LEQ, 0};
  ck_assert_int_eq(n, (int)(sizeof want / sizeof want[0]));
  for (int i = 0; i < n; i++) ck_assert_int_eq(k[i], want[i]);
  /* 2^64 overflows. */
  n = lex_all("18446744073709551616", k, 32);
  ck_assert_int_eq(k[0], -1);
  n = lex_all("-9223372036854775808 -9223372036854775809", k, 32);
  ck_assert_int_eq(k[0], TK_INT);
  ck_assert_int_eq(k[1], -1);
}
END_TEST

START_TEST(lex_layout_brace_and_raw) {
  int k[32];
  /* '{' after ']' followed by a digit or ':' opens a layout. */
  int n = lex_all("f32[2]{0} f32[]{:S(1)} f32[]{}", k, 32);
  ck_assert_int_eq(k[4], TK_LLBRACE);
  ck_assert_int_eq(k[10], TK_LLBRACE);
  ck_assert_int_eq(k[n - 3], TK_LBRACE);
  /* backend_config={...} is one raw token, braces inside strings ignored. */
  n = lex_all("backend_config={\"a\":\"}{\",\"b\":{}} x", k, 32);
  ck_assert_int_eq(n, 4);
  ck_assert_int_eq(k[0], TK_ATTRNAME);
  ck_assert_int_eq(k[1], TK_RAWDICT);
  ck_assert_int_eq(k[2], TK_IDENT);
  /* frontend attribute values in braces are raw too; '<' would not lex. */
  n = lex_all("frontend_attributes={k={n = dense<1> : tensor<i32>},j=\"v\"}", k, 32);
  int want[] = {TK_ATTRNAME, TK_LBRACE, TK_ATTRNAME, TK_RAWDICT, TK_COMMA, TK_ATTRNAME, TK_STRING,
                TK_RBRACE, 0};
  ck_assert_int_eq(n, 9);
  for (int i = 0; i < n; i++) ck_assert_int_eq(k[i], want[i]);
}
END_TEST

START_TEST(lex_comments_strings) {
  int k[16];
  int n = lex_all("/* c */ a // line\n 'x' \"y\\n\" /*index=5*/", k, 16);
  ck_assert_int_eq(n, 4);
  ck_assert_int_eq(k[0], TK_IDENT);
  ck_assert_int_eq(k[1], TK_STRING);
  ck_assert_int_eq(k[2], TK_STRING);
  char out[32];
  size_t bad;
  ck_assert_int_eq(hlx_unescape("a\\n\\x41\\101\\u00e9", 17, out, &bad), 6);
  ck_assert(memcmp(out, "a\nAA\xc3\xa9", 6) == 0);
  ck_assert_int_eq(hlx_unescape("ab\\q", 4, out, &bad), -1);
  ck_assert_int_eq((int)bad, 2);
}
END_TEST

/* ---- shapes and layouts -------------------------------------------------------- */

START_TEST(shapes) {
  HloModule *m = entry("  a = f32[2,3]{0,1} parameter(0)\n"
                       "  b = s32[<=4,?,3] parameter(1)\n"
                       "  c = (f32[], (pred[2], token[])) parameter(2)\n"
                       "  d = bf16[8,128]{1,0:T(8,128)(2,1)S(1)} parameter(3)\n"
                       "  d2 = u8[4]{0:D(D,C+~)T(4)(4,1)L(4)#(u32)*(u16)E(8)S(1)M(2)} parameter(5)\n"
                       "  e = f32[]{:S(2)} parameter(4)\n"
                       "  ROOT f = f32[2,3] copy(a)");
  HloInstr *a = find(m, "a"), *b = find(m, "b"), *c = find(m, "c"), *d = find(m, "d");
  ck_assert_int_eq(a->shape.dtype, HLO_F32);
  ck_assert_int_eq(a->shape.rank, 2);
  ck_assert_int_eq(a->shape.minor_to_major[0], 0);
  ck_assert_int_eq(a->shape.minor_to_major[1], 1);
  ck_assert(a->shape.layout_written);
  ck_assert_int_eq(b->shape.dims[0], 4);
  ck_assert_int_eq(b->shape.dynamic[0], HLO_DIM_BOUNDED);
  ck_assert_int_eq(b->shape.dims[1], -1);
  ck_assert_int_eq(b->shape.dynamic[1], HLO_DIM_UNBOUNDED);
  ck_assert_int_eq(b->shape.dynamic[2], HLO_DIM_STATIC);
  /* default layout filled: {2,1,0} */
  ck_assert(!b->shape.layout_written);
  ck_assert_int_eq(b->shape.minor_to_major[0], 2);
  ck_assert_int_eq(b->shape.minor_to_major[2], 0);
  ck_assert_int_eq(c->shape.dtype, HLO_TUPLE);
  ck_assert_int_eq(c->shape.ntuple, 2);
  ck_assert_int_eq(c->shape.tuple[1].tuple[1].dtype, HLO_TOKEN);
  ck_assert_str_eq(d->shape.layout_tail, "T(8,128)(2,1)S(1)");
  ck_assert_str_eq(find(m, "e")->shape.layout_tail, "S(2)");
  ck_assert_str_eq(find(m, "d2")->shape.layout_tail, "D(D,C+~)T(4)(4,1)L(4)#(u32)*(u16)E(8)S(1)M(2)");
  ck_assert_int_eq(m->entry->nparams, 6);
  hlp_module_free(m);
}
END_TEST

/* ---- attributes ------------------------------------------------------------------- */

START_TEST(attrs_window_conv) {
  HloModule *m = entry(
      "  x = f32[1,8,8,3] parameter(0)\n  w = f32[3,3,3,4] parameter(1)\n"
      "  ROOT c = f32[1,4,4,4] convolution(x, w), window={size=3x3 stride=2x2 pad=0_1x-1_2 "
      "lhs_dilate=1x1 rhs_dilate=2x1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, "
      "feature_group_count=1");
  HloInstr *c = find(m, "c");
  ck_assert(c->window.present);
  ck_assert_int_eq(c->window.rank, 2);
  ck_assert_int_eq(c->window.dims[0].size, 3);
  ck_assert_int_eq(c->window.dims[1].stride, 2);
  ck_assert_int_eq(c->window.dims[0].pad_lo, 0);
  ck_assert_int_eq(c->window.dims[0].pad_hi, 1);
  ck_assert_int_eq(c->window.dims[1].pad_lo, -1);
  ck_assert_int_eq(c->window.dims[1].pad_hi, 2);
  ck_assert_int_eq(c->window.dims[0].rhs_dilate, 2);
  ck_assert_int_eq(c->window.dims[1].rhs_dilate, 1);
  ck_assert(!c->window.dims[0].reversal);
  ck_assert(c->window.dims[1].reversal);
  /* b01f: batch 0, spatial 1,2, feature 3; 01io: spatial 0,1, in 2, out 3 */
  ck_assert_int_eq(c->conv.in_batch, 0);
  ck_assert_int_eq(c->conv.in_feature, 3);
  ck_assert_int_eq(c->conv.in_spatial.n, 2);
  ck_assert_int_eq(c->conv.in_spatial.v[0], 1);
  ck_assert_int_eq(c->conv.in_spatial.v[1], 2);
  ck_assert_int_eq(c->conv.k_in_feature, 2);
  ck_assert_int_eq(c->conv.k_out_feature, 3);
  ck_assert_int_eq(c->conv.k_spatial.v[1], 1);
  ck_assert_int_eq(c->conv.out_feature, 3);
  ck_assert_int_eq(c->feature_group_count, 1);
  ck_assert_int_eq(c->batch_group_count, 1);
  hlp_module_free(m);
  /* f01b_i01o->01bf: feature at 0, batch at 3; output spatial at 0,1 */
  m = entry("  x = f32[3,8,8,1] parameter(0)\n  w = f32[3,3,3,4] parameter(1)\n"
            "  ROOT c = f32[8,8,1,4] convolution(x, w), window={size=3x3 pad=1_1x1_1}, "
            "dim_labels=f01b_i01o->01bf");
  c = find(m, "c");
  ck_assert_int_eq(c->conv.in_feature, 0);
  ck_assert_int_eq(c->conv.in_batch, 3);
  ck_assert_int_eq(c->conv.k_in_feature, 0);
  ck_assert_int_eq(c->conv.k_out_feature, 3);
  ck_assert_int_eq(c->conv.out_spatial.v[0], 0);
  ck_assert_int_eq(c->conv.out_batch, 2);
  ck_assert_int_eq(c->conv.out_feature, 3);
  hlp_module_free(m);
}
END_TEST

START_TEST(attrs_pad_slice_misc) {
  HloModule *m = entry(
      "  x = f32[4,5] parameter(0)\n  z = f32[] constant(0)\n"
      "  p = f32[7,13] pad(x, z), padding=1_2x-1_1_3\n"
      "  s = f32[2,2] slice(x), slice={[0:4:2], [1:3]}\n"
      "  i = s32[] constant(0)\n"
      "  d = f32[2,2] dynamic-slice(x, i, i), dynamic_slice_sizes={2,2}\n"
      "  io = s32[4,5] iota(), iota_dimension=1\n"
      "  b = f32[4,5,6] broadcast(x), dimensions={0,1}\n"
      "  t = f32[5,4] transpose(x), dimensions={1,0}\n"
      "  r = f32[4] reduce(x, z), dimensions={1}, to_apply=add\n"
      "  g = (f32[4,5], f32[4,5]) tuple(x, x)\n"
      "  e = f32[4,5] get-tuple-element(g), index=1\n"
      "  e0 = f32[4,5] get-tuple-element(g), index=0\n"
      "  io0 = s32[4,5] iota(), iota_dimension=0\n"
      "  cmp = pred[4,5] compare(x, e), direction=GE, type=TOTALORDER\n"
      "  ROOT rp = f32[4,5] reduce-precision(e), exponent_bits=5, mantissa_bits=10");
  HloInstr *p = find(m, "p");
  ck_assert_int_eq(p->padding[0].lo, 1);
  ck_assert_int_eq(p->padding[0].hi, 2);
  ck_assert_int_eq(p->padding[0].interior, 0);
  ck_assert_int_eq(p->padding[1].lo, -1);
  ck_assert_int_eq(p->padding[1].hi, 1);
  ck_assert_int_eq(p->padding[1].interior, 3);
  HloInstr *s = find(m, "s");
  ck_assert_int_eq(s->slice[0].start, 0);
  ck_assert_int_eq(s->slice[0].limit, 4);
  ck_assert_int_eq(s->slice[0].stride, 2);
  ck_assert_int_eq(s->slice[1].start, 1);
  ck_assert_int_eq(s->slice[1].stride, 1);
  ck_assert_int_eq(find(m, "d")->dynamic_slice_sizes.n, 2);
  ck_assert_int_eq(find(m, "io")->iota_dimension, 1);
  ck_assert_int_eq(find(m, "b")->dimensions.v[1], 1);
  ck_assert(find(m, "b")->has_dimensions);
  HloInstr *r = find(m, "r");
  ck_assert_int_eq(r->ncalled, 1);
  ck_assert_int_eq(r->called[0].role, HLO_CALL_TO_APPLY);
  ck_assert_str_eq(r->called[0].comp->name, "add");
  ck_assert_int_eq(find(m, "e")->tuple_index, 1);
  /* 0 is a valid non-negative value (index, iota_dimension). */
  ck_assert_int_eq(find(m, "e0")->tuple_index, 0);
  ck_assert_int_eq(find(m, "io0")->iota_dimension, 0);
  ck_assert_int_eq(find(m, "cmp")->cmp_dir, HLO_CMP_GE);
  ck_assert_int_eq(find(m, "cmp")->cmp_type, HLO_CMPT_TOTALORDER);
  ck_assert_int_eq(find(m, "rp")->exponent_bits, 5);
  ck_assert_int_eq(find(m, "rp")->mantissa_bits, 10);
  ck_assert_int_eq(find(m, "d")->ops[2]->op, HLO_OP_CONSTANT);
  hlp_module_free(m);
}
END_TEST

START_TEST(attrs_gather_scatter_dot) {
  HloModule *m = entry(
      "  x = f32[3,4] parameter(0)\n  ix = s32[2,1] parameter(1)\n  u = f32[2,4] parameter(2)\n"
      "  g = f32[2,4] gather(x, ix), offset_dims={1}, collapsed_slice_dims={0}, "
      "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}, indices_are_sorted=true\n"
      "  sc = f32[3,4] scatter(x, ix, u), update_window_dims={1}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add, unique_indices=true\n"
      "  ROOT dt = f32[3,3] dot(x, x), lhs_batch_dims={}, lhs_contracting_dims={1}, "
      "rhs_contracting_dims={1}, operand_precision={highest,DEFAULT}");
  HloInstr *g = find(m, "g");
  ck_assert_int_eq(g->gather.offset_dims.v[0], 1);
  ck_assert_int_eq(g->gather.index_vector_dim, 1);
  ck_assert_int_eq(g->gather.slice_sizes.n, 2);
  ck_assert_int_eq(g->gather.slice_sizes.v[1], 4);
  ck_assert(g->gather.indices_are_sorted);
  HloInstr *sc = find(m, "sc");
  ck_assert_int_eq(sc->scatter.update_window_dims.v[0], 1);
  ck_assert_int_eq(sc->scatter.scatter_dims_to_operand_dims.n, 1);
  ck_assert(sc->scatter.unique_indices);
  ck_assert(!sc->scatter.indices_are_sorted);
  HloInstr *dt = find(m, "dt");
  ck_assert_int_eq(dt->dot.lhs_batch.n, 0);
  ck_assert_int_eq(dt->dot.rhs_contracting.v[0], 1);
  hlp_module_free(m);
}
END_TEST

START_TEST(attrs_collectives) {
  HloModule *m = entry(
      "  x = f32[8] parameter(0)\n"
      "  a = f32[8] all-reduce(x), replica_groups=[2,4]<=[8], to_apply=add, channel_id=5\n"
      "  b = f32[8] all-reduce(x), replica_groups=[4,2]<=[2,4]T(1,0), to_apply=add\n"
      "  c = f32[8] all-reduce(x), replica_groups={{0,2},{1,3}}, to_apply=add\n"
      "  ROOT p = f32[8] collective-permute(x), source_target_pairs={{0,1},{1,0}}");
  HloInstr *a = find(m, "a");
  ck_assert_int_eq(a->ngroups, 2);
  ck_assert_int_eq(a->replica_groups[1].n, 4);
  ck_assert_int_eq(a->replica_groups[1].v[0], 4);
  ck_assert_int_eq(a->replica_groups[1].v[3], 7);
  ck_assert(a->has_channel_id);
  ck_assert_int_eq(a->channel_id, 5);
  /* iota(8) as [2,4], transposed -> [4,2] = {{0,4},{1,5},{2,6},{3,7}} */
  HloInstr *b = find(m, "b");
  ck_assert_int_eq(b->ngroups, 4);
  int64_t want[4][2] = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 2; j++) ck_assert_int_eq(b->replica_groups[i].v[j], want[i][j]);
  HloInstr *c = find(m, "c");
  ck_assert_int_eq(c->ngroups, 2);
  ck_assert_int_eq(c->replica_groups[1].v[1], 3);
  HloInstr *p = find(m, "p");
  ck_assert_int_eq(p->npairs, 2);
  ck_assert_int_eq(p->source_target_pairs[0][1], 1);
  ck_assert_int_eq(p->source_target_pairs[1][0], 1);
  hlp_module_free(m);
}
END_TEST

START_TEST(attrs_custom_call) {
  HloModule *m = entry(
      "  x = f32[2,3] parameter(0)\n"
      "  a = f32[2,3] custom-call(x), custom_call_target=\"foo$bar\", "
      "api_version=api_version_typed_ffi, backend_config={n = 1 : i64, s = \"}\"}, "
      "custom_call_has_side_effect=true, operand_layout_constraints={f32[2,3]{0,1}}\n"
      "  ROOT b = s32[2] custom-call(), custom_call_target=\"c\", backend_config=\"\\000\\001x\", "
      "literal=s32[2]{0} {1, 2}");
  HloInstr *a = find(m, "a");
  ck_assert_str_eq(a->custom_call_target, "foo$bar");
  ck_assert_int_eq(a->api_version, HLO_API_TYPED_FFI);
  ck_assert_str_eq(a->backend_config, "{n = 1 : i64, s = \"}\"}");
  ck_assert(!a->backend_config_quoted);
  ck_assert(a->has_side_effect);
  ck_assert_int_eq(a->noperand_layouts, 1);
  ck_assert_int_eq(a->operand_layouts[0].minor_to_major[0], 0);
  /* the offset points at the '{' in the source */
  ck_assert_int_eq(m->source[a->backend_config_off], '{');
  HloInstr *b = find(m, "b");
  ck_assert(b->backend_config_quoted);
  ck_assert_int_eq((int)b->backend_config_len, 3);
  ck_assert(memcmp(b->backend_config, "\0\1x", 3) == 0);
  ck_assert_int_eq(b->api_version, HLO_API_ORIGINAL);
  ck_assert_int_eq(((int32_t *)b->literal->data)[1], 2);
  hlp_module_free(m);
}
END_TEST

START_TEST(attrs_control_flow) {
  const char *t =
      "HloModule m\n"
      "c (p: (s32[])) -> pred[] {\n  p = (s32[]) parameter(0)\n  ROOT k = pred[] constant(false)\n}\n"
      "b (p: (s32[])) -> (s32[]) {\n  ROOT p = (s32[]) parameter(0)\n}\n"
      "t {\n  ROOT p = f32[] parameter(0)\n}\n"
      "ENTRY e {\n  i = (s32[]) parameter(0)\n  w = (s32[]) while(i), condition=c, body=b\n"
      "  pr = pred[] parameter(1)\n  f = f32[] parameter(2)\n"
      "  ROOT r = f32[] conditional(pr, f, f), true_computation=t, false_computation=t, "
      "control-predecessors={w}\n}\n";
  HloModule *m = parse_ok(t);
  HloInstr *w = find(m, "w");
  ck_assert_int_eq(w->ncalled, 2);
  ck_assert_int_eq(w->called[0].role, HLO_CALL_CONDITION);
  ck_assert_str_eq(w->called[1].comp->name, "b");
  HloInstr *r = find(m, "r");
  ck_assert_int_eq(r->called[0].role, HLO_CALL_TRUE);
  ck_assert_int_eq(r->called[1].role, HLO_CALL_FALSE);
  ck_assert_int_eq(r->ncontrol, 1);
  ck_assert_ptr_eq(r->control_preds[0], w);
  ck_assert(r->is_root);
  ck_assert(m->entry->is_entry);
  ck_assert_str_eq(m->entry->name, "e");
  hlp_module_free(m);
}
END_TEST

START_TEST(attrs_unknown_warns) {
  const char *t = "HloModule m, brand_new_flag=7\nENTRY e {\n  ROOT p = f32[] parameter(0), "
                  "shiny_new_attr={a=1 b=\"x\"}\n}\n";
  HlcDiags d = {0};
  HloModule *m = hlp_parse(t, strlen(t), "t.hlo", &d);
  ck_assert_ptr_nonnull(m);
  ck_assert_int_eq(d.nwarnings, 2);
  ck_assert_int_eq(d.nerrors, 0);
  ck_assert_str_eq(d.v[0].message, "unknown attribute 'shiny_new_attr' kept verbatim");
  ck_assert_int_eq(d.v[0].line, 3);
  ck_assert_int_eq(d.v[0].col, 32);
  ck_assert_str_eq(d.v[1].message, "unknown module attribute 'brand_new_flag' kept verbatim");
  char *p = hlp_print(m, NULL);
  ck_assert_ptr_nonnull(strstr(p, ", shiny_new_attr={a=1 b=\"x\"}"));
  ck_assert_ptr_nonnull(strstr(p, "HloModule m, brand_new_flag=7\n"));
  free(p);
  ck_assert(!find(m, "p")->attrs[0].known);
  hlp_module_free(m);
  hlc_diags_clear(&d);
}
END_TEST

START_TEST(module_attrs) {
  HloModule *m = parse_ok("HloModule m, is_scheduled=true, replica_count=2, num_partitions=4, "
                          "entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n"
                          "ENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n");
  ck_assert(m->is_scheduled);
  ck_assert_int_eq(m->replica_count, 2);
  ck_assert_int_eq(m->num_partitions, 4);
  ck_assert_int_eq(m->entry_layout->ntuple, 1);
  ck_assert_int_eq(m->entry_result_layout->dims[0], 2);
  ck_assert_str_eq(m->name, "m");
  hlp_module_free(m);
  /* Headerless module. */
  m = parse_ok("ENTRY main {\n  ROOT p = f32[2] parameter(0)\n}\n");
  ck_assert_str_eq(m->name, "module_main");
  ck_assert_int_eq(m->replica_count, 1);
  hlp_module_free(m);
  /* A layout that does not match the entry: XLA's parser keeps it (its
   * verifier compares), so this is a warning at the layout. */
  static const char *mism = "HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}\n"
                            "ENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n";
  HlcDiags d = {0};
  m = hlp_parse(mism, strlen(mism), "t.hlo", &d);
  ck_assert_ptr_nonnull(m);
  ck_assert_int_eq(d.n, 1);
  ck_assert_int_eq(d.v[0].sev, HLC_WARNING);
  ck_assert_int_eq(d.v[0].col, 39);
  ck_assert_str_eq(d.v[0].message, "entry_computation_layout does not match the entry computation 'e'");
  hlp_module_free(m);
  hlc_diags_clear(&d);
}
END_TEST

START_TEST(async_sugar) {
  HloModule *m = parse_ok("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n"
                          "  s = ((f32[2]), f32[2], u32[]) negate-start(x)\n"
                          "  u = ((f32[2]), f32[2], u32[]) negate-update(s)\n"
                          "  ROOT d = f32[2] negate-done(u)\n}\n");
  HloInstr *s = find(m, "s");
  char *p = hlp_print(m, NULL);
  ck_assert_ptr_nonnull(strstr(p, "%s = ((f32[2]{0}), f32[2]{0}, u32[]) async-start(%x), calls=%"));
  free(p);
  ck_assert_int_eq(s->op, HLO_OP_ASYNC_START);
  ck_assert_int_eq(s->ncalled, 1);
  HloComputation *w = s->called[0].comp;
  ck_assert_int_eq(w->root->op, HLO_OP_NEGATE);
  ck_assert_int_eq(w->nparams, 1);
  ck_assert_int_eq(find(m, "u")->op, HLO_OP_ASYNC_UPDATE);
  ck_assert_int_eq(find(m, "d")->op, HLO_OP_ASYNC_DONE);
  ck_assert_ptr_eq(find(m, "d")->called[0].comp, w);
  ck_assert_int_eq(m->ncomps, 2);
  ck_assert_ptr_eq(m->comps[0], w);
  hlp_module_free(m);
  /* The wrapped op's attributes go to it; control-predecessors stay on the
   * start. */
  m = parse_ok("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  y = f32[4] negate(x)\n"
               "  s = ((f32[4]), f32[2], u32[]) slice-start(x), slice={[0:2]}, "
               "control-predecessors={y}\n  ROOT d = f32[2] slice-done(s)\n}\n");
  s = find(m, "s");
  ck_assert_int_eq(s->ncontrol, 1);
  ck_assert_ptr_eq(s->control_preds[0], find(m, "y"));
  w = s->called[0].comp;
  ck_assert_int_eq(w->root->op, HLO_OP_SLICE);
  ck_assert_int_eq(w->root->slice[0].limit, 2);
  ck_assert_int_eq(w->root->ncontrol, 0);
  p = hlp_print(m, NULL);
  ck_assert_ptr_nonnull(strstr(p, "slice-start") ? NULL : strstr(p, "async-start(%x), calls=%wrapped_slice.1, "
                                                                    "control-predecessors={%y}\n"));
  hlp_module_free(m);
  HlcDiags d = {0};
  m = hlp_parse(p, strlen(p), "p.hlo", &d);
  ck_assert_ptr_nonnull(m);
  char *p2 = hlp_print(m, NULL);
  ck_assert_str_eq(p, p2);
  free(p);
  free(p2);
  hlc_diags_clear(&d);
  hlp_module_free(m);
  /* Generated names avoid names written later in the text. */
  m = parse_ok("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n"
               "  s = ((f32[2]), f32[2], u32[]) negate-start(x)\n  ROOT d = f32[2] negate-done(s)\n}\n"
               "wrapped_negate.1 {\n  ROOT p = f32[] parameter(0)\n}\n"
               "wrapped_negate.2 {\n  ROOT p = f32[] parameter(0)\n}\n");
  ck_assert_str_eq(find(m, "s")->called[0].comp->name, "wrapped_negate.3");
  hlp_module_free(m);
  /* As XLA: async_execution_thread and sharding stay on the start, metadata
   * and backend_config go to both, the wrapped op's own attributes to it. */
  m = parse_ok("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n"
               "  s = ((f32[4]), f32[4], u32[]) custom-call-start(x), custom_call_target=\"k\", "
               "async_execution_thread=\"side\", sharding={replicated}, metadata={op_name=\"a\"}, "
               "backend_config=\"cfg\"\n  ROOT d = f32[4] custom-call-done(s)\n}\n");
  s = find(m, "s");
  w = s->called[0].comp;
  ck_assert_str_eq(s->async_execution_thread, "side");
  ck_assert_str_eq(s->backend_config, "cfg");
  ck_assert_str_eq(w->root->backend_config, "cfg");
  ck_assert_str_eq(w->root->custom_call_target, "k");
  ck_assert_int_eq(s->nattrs, 4);   /* thread, sharding, metadata, backend_config */
  ck_assert_int_eq(w->root->nattrs, 3); /* target, metadata, backend_config */
  hlp_module_free(m);
}
END_TEST

START_TEST(nested_and_inline) {
  HloModule *m = parse_ok("HloModule m\nENTRY e {\n"
                          "  ROOT r = f32[2] add(f32[2] parameter(0), multiply(f32[2] parameter(1), "
                          "f32[2] parameter(2)))\n}\n");
  /* multiply's shape is inferred from its operands. */
  ck_assert_int_eq(m->entry->ninstrs, 5);
  ck_assert_int_eq(m->entry->nparams, 3);
  ck_assert_int_eq(m->entry->root->ops[1]->op, HLO_OP_MULTIPLY);
  ck_assert_int_eq(m->entry->root->ops[1]->shape.dims[0], 2);
  hlp_module_free(m);
  /* An inline computation body as a to_apply value. */
  m = parse_ok("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
               "  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply={\n"
               "    a = f32[] parameter(0)\n    b = f32[] parameter(1)\n"
               "    ROOT s = f32[] add(a, b)\n  }\n}\n");
  HloInstr *r = find(m, "r");
  ck_assert_int_eq(r->called[0].comp->root->op, HLO_OP_ADD);
  ck_assert_int_eq(m->ncomps, 2);
  hlp_module_free(m);
}
END_TEST

START_TEST(shape_inference) {
  HloModule *m = entry("  x = f32[2,3] parameter(0)\n  c = c64[2,3] parameter(1)\n"
                       "  a = add(x, x)\n  q = compare(x, x), direction=EQ\n  ab = abs(c)\n"
                       "  t = tuple(x, q)\n  g = get-tuple-element(t), index=1\n"
                       "  tr = transpose(x), dimensions={1,0}\n  ROOT n = negate(a)");
  ck_assert_int_eq(find(m, "a")->shape.dtype, HLO_F32);
  ck_assert_int_eq(find(m, "q")->shape.dtype, HLO_PRED);
  ck_assert_int_eq(find(m, "ab")->shape.dtype, HLO_F32);
  ck_assert_int_eq(find(m, "t")->shape.ntuple, 2);
  ck_assert_int_eq(find(m, "g")->shape.dtype, HLO_PRED);
  ck_assert_int_eq(find(m, "tr")->shape.dims[0], 3);
  ck_assert_int_eq(find(m, "tr")->shape.dims[1], 2);
  ck_assert_int_eq(find(m, "n")->shape.minor_to_major[0], 1);
  hlp_module_free(m);
}
END_TEST

static void expect_dims(HloModule *m, const char *name, HloDtype t, int rank, const int64_t *dims) {
  const HloShape *s = &find(m, name)->shape;
  ck_assert_int_eq(s->dtype, t);
  ck_assert_int_eq(s->rank, rank);
  for (int i = 0; i < rank; i++) ck_assert_int_eq(s->dims[i], dims[i]);
}

/* Result shapes XLA's parser infers for structured ops, worked out by hand
 * from the operation semantics. */
START_TEST(shape_inference_structured) {
  HloModule *m = parse_ok(
      "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\nn1 {\n  v = f32[2,3] parameter(0)\n  ROOT n = negate(v)\n}\n"
      "ENTRY e {\n"
      "  x = f32[2,3] parameter(0)\n  y = f32[3,5] parameter(1)\n  b = bf16[4,2,3] parameter(2)\n"
      "  z = f32[] constant(0)\n  i = s32[] parameter(3)\n  im = s32[4,1] parameter(4)\n"
      "  img = f32[1,6,6,2] parameter(5)\n  ker = f32[3,3,2,4] parameter(6)\n"
      "  d = dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  bd = dot(b, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
      "rhs_contracting_dims={2}\n"
      "  bs = broadcast(z), dimensions={}\n"
      "  cat = concatenate(x, x, x), dimensions={0}\n"
      "  pd = pad(x, z), padding=1_2_1x0_-1\n"
      "  r = reduce(x, z), dimensions={1}, to_apply=add\n"
      "  r2 = reduce(x, x, z, z), dimensions={0}, to_apply=add\n"
      "  rw = reduce-window(y, z), window={size=2x3 stride=1x2 pad=0_0x1_1}, to_apply=add\n"
      "  cv = convolution(img, ker), window={size=3x3 stride=2x1 pad=1_1x0_0}, dim_labels=b01f_01io->b01f\n"
      "  g = gather(y, im), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
      "index_vector_dim=1, slice_sizes={1,5}\n"
      "  tk = topk(y), k=2\n"
      "  bn = batch-norm-training(img, z, z), epsilon=0.001, feature_index=3\n"
      "  cplx = c64[2,3] parameter(7)\n"
      "  rf = fft(y), fft_type=RFFT, fft_length={5}\n"
      "  irf = fft(cplx), fft_type=IRFFT, fft_length={4}\n"
      "  ROOT c = conditional(i, x, x), branch_computations={n1, n1}\n}\n");
  expect_dims(m, "d", HLO_F32, 2, (int64_t[]){2, 5});
  expect_dims(m, "bd", HLO_BF16, 3, (int64_t[]){4, 2, 2});
  expect_dims(m, "bs", HLO_F32, 0, NULL);
  expect_dims(m, "cat", HLO_F32, 2, (int64_t[]){6, 3});
  /* 1 + 2 + 2 + (2-1)*1 = 6 rows; 0 - 1 + 3 = 2 columns */
  expect_dims(m, "pd", HLO_F32, 2, (int64_t[]){6, 2});
  expect_dims(m, "r", HLO_F32, 1, (int64_t[]){2});
  ck_assert_int_eq(find(m, "r2")->shape.ntuple, 2);
  ck_assert_int_eq(find(m, "r2")->shape.tuple[1].dims[0], 3);
  /* rows (3-2)/1+1 = 2; columns (5+2-3)/2+1 = 3 */
  expect_dims(m, "rw", HLO_F32, 2, (int64_t[]){2, 3});
  /* rows (6+2-3)/2+1 = 3; columns (6-3)/1+1 = 4; 4 output features */
  expect_dims(m, "cv", HLO_F32, 4, (int64_t[]){1, 3, 4, 4});
  expect_dims(m, "g", HLO_F32, 2, (int64_t[]){4, 5});
  ck_assert_int_eq(find(m, "tk")->shape.tuple[0].dims[1], 2);
  ck_assert_int_eq(find(m, "tk")->shape.tuple[1].dtype, HLO_S32);
  ck_assert_int_eq(find(m, "bn")->shape.tuple[1].dims[0], 2);
  expect_dims(m, "rf", HLO_C64, 2, (int64_t[]){3, 3});
  expect_dims(m, "irf", HLO_F32, 2, (int64_t[]){2, 4});
  expect_dims(m, "c", HLO_F32, 2, (int64_t[]){2, 3});
  hlp_module_free(m);
}
END_TEST

/* ---- literals ------------------------------------------------------------------------ */

static HloLiteral *lit_of(HloModule *m, const char *name) { return find(m, name)->literal; }

START_TEST(literals_ints_ok) {
  HloModule *m = entry("  a = s32[2,3] constant({{1, -2, 3}, {4, 5, -2147483648}})\n"
                       "  b = u64[3] constant({18446744073709551615, -1, 0})\n"
                       "  c = s4[3] constant({-8, 7, 0})\n"
                       "  d = pred[4] constant({true, false, 1, 0})\n"
                       "  e = u8[] constant(255)\n  z = s32[0] constant({})\n"
                       "  y = f32[2,0] constant({{}, {}})\n  ROOT p = pred[] constant(true)");
  int32_t *a = lit_of(m, "a")->data;
  ck_assert_int_eq(a[1], -2);
  ck_assert_int_eq(a[5], INT32_MIN);
  uint64_t *b = lit_of(m, "b")->data;
  ck_assert(b[0] == UINT64_MAX);
  ck_assert(b[1] == UINT64_MAX);
  ck_assert(b[2] == 0);
  int8_t *c = lit_of(m, "c")->data;
  ck_assert_int_eq(c[0], -8);
  ck_assert_int_eq(c[1], 7);
  uint8_t *d = lit_of(m, "d")->data;
  ck_assert_int_eq(d[0], 1);
  ck_assert_int_eq(d[1], 0);
  ck_assert_int_eq(d[2], 1);
  ck_assert_int_eq(*(uint8_t *)lit_of(m, "e")->data, 255);
  ck_assert_int_eq((int)lit_of(m, "z")->nbytes, 0);
  ck_assert_int_eq(*(uint8_t *)lit_of(m, "p")->data, 1);
  hlp_module_free(m);
}
END_TEST

START_TEST(literals_floats) {
  HloModule *m = entry("  a = f32[5] constant({1.5, -0, inf, -inf, 3e+38})\n"
                       "  b = f64[2] constant({nan, -nan(0x1)})\n"
                       "  c = f16[3] constant({0.1, 65504, -2})\n"
                       "  d = bf16[3] constant({0.1, -nan(0x3), 1})\n"
                       "  e = c64[2] constant({(1, 2), (0, -1.5)})\n"
                       "  f = f32[] constant(nan(0x7f))\n"
                       "  g = f8e4m3fn[2] constant({448, -1})\n"
                       "  ROOT h = (s32[], f32[2]) constant((7, {2, 3}))");
  uint32_t a[5];
  memcpy(a, lit_of(m, "a")->data, sizeof a);
  ck_assert_uint_eq(a[0], 0x3FC00000u);
  ck_assert_uint_eq(a[1], 0x80000000u);
  ck_assert_uint_eq(a[2], 0x7F800000u);
  ck_assert_uint_eq(a[3], 0xFF800000u);
  uint64_t b[2];
  memcpy(b, lit_of(m, "b")->data, sizeof b);
  ck_assert((b[0] & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && (b[0] << 12) != 0);
  ck_assert(b[1] == 0xFFF0000000000001ull);
  uint16_t c[3], d[3];
  memcpy(c, lit_of(m, "c")->data, sizeof c);
  memcpy(d, lit_of(m, "d")->data, sizeof d);
  ck_assert_uint_eq(c[0], 0x2E66);   /* f16(0.1) rounds to 0x2E66 */
  ck_assert_uint_eq(c[1], 0x7BFF);   /* largest finite f16 */
  ck_assert_uint_eq(c[2], 0xC000);
  ck_assert_uint_eq(d[0], 0x3DCD);   /* bf16(0.1): 0x3DCCCCCD rounded */
  ck_assert_uint_eq(d[1], 0xFF83);
  ck_assert_uint_eq(d[2], 0x3F80);
  float e[4];
  memcpy(e, lit_of(m, "e")->data, sizeof e);
  ck_assert(e[0] == 1 && e[1] == 2 && e[2] == 0 && e[3] == -1.5f);
  uint32_t f;
  memcpy(&f, lit_of(m, "f")->data, 4);
  ck_assert_uint_eq(f, 0x7F80007Fu);
  uint8_t *g = lit_of(m, "g")->data;
  ck_assert_uint_eq(g[0], 0x7E);     /* 448 = 1.75 * 2^8: S0 E1111 M110 */
  ck_assert_uint_eq(g[1], 0xB8);     /* -1: S1 E0111 M000 */
  HloLiteral *h = lit_of(m, "h");
  ck_assert_int_eq(h->ntuple, 2);
  ck_assert_int_eq(*(int32_t *)h->tuple[0].data, 7);
  ck_assert(((float *)h->tuple[1].data)[1] == 3.0f);
  hlp_module_free(m);
}
END_TEST

START_TEST(literals_elided) {
  HloModule *m = entry("  ROOT a = f32[1000,1000]{1,0} constant({...})");
  ck_assert(lit_of(m, "a")->elided);
  char *p = hlp_print(m, NULL);
  ck_assert_ptr_nonnull(strstr(p, "constant({...})"));
  free(p);
  hlp_module_free(m);
}
END_TEST

/* ---- printer --------------------------------------------------------------------------- */

START_TEST(print_canonical) {
  const char *t = "HloModule m\n\nENTRY main {\n  a = f32[2,2] parameter(0)\n"
                  "  c = s32[2] constant({1, 2})\n"
                  "  ROOT r = f32[2,2]{0,1} add(f32[2,2] a, a), metadata={op_name=\"x\\\"y\"}\n}\n";
  HloModule *m = parse_ok(t);
  char *p = hlp_print(m, NULL);
  const char *want =
      "HloModule m\n\n"
      "ENTRY %main (a: f32[2,2]) -> f32[2,2] {\n"
      "  %a = f32[2,2]{1,0} parameter(0)\n"
      "  %c = s32[2]{0} constant({1, 2})\n"
      "  ROOT %r = f32[2,2]{0,1} add(%a, %a), metadata={op_name=\"x\\\"y\"}\n"
      "}\n\n";
  ck_assert_str_eq(p, want);
  free(p);
  hlp_module_free(m);
}
END_TEST

/* ---- errors (whole messages) --------------------------------------------------------------- */

START_TEST(errors_whole) {
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[] add(x, x)\n}\n",
               "t.hlo:3:22: error: instruction 'x' is not defined before this use\n"
               "  ROOT a = f32[] add(x, x)\n"
               "                     ^\n");
  expect_error("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  a = f32[] parameter(1)\n}\n",
               "t.hlo:4:3: error: instruction 'a' is defined twice\n"
               "  a = f32[] parameter(1)\n"
               "  ^\n");
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[] frobnicate()\n}\n",
               "t.hlo:3:18: error: unknown opcode 'frobnicate'\n"
               "  ROOT a = f32[] frobnicate()\n"
               "                 ^\n");
  expect_error("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] negate(a, a)\n}\n",
               "t.hlo:4:19: error: negate expects 1 operand, got 2\n"
               "  ROOT b = f32[2] negate(a, a)\n"
               "                  ^\n");
  expect_error("HloModule m\nENTRY e {\n\tROOT c = s8[2] constant({1, 300})\n}\n",
               "t.hlo:3:30: error: value 300 is out of range for literal's primitive type s8\n"
               "\tROOT c = s8[2] constant({1, 300})\n"
               "\t                            ^\n");
}
END_TEST

START_TEST(errors_positions) {
  /* duplicate parameter number */
  expect_msg("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] parameter(0)\n"
             "  ROOT c = f32[] add(a, b)\n}\n",
             4, 3, "duplicate parameter number 0");
  /* several ROOT */
  expect_msg("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] negate(a)\n}\n",
             4, 8, "computation 'e' has several ROOT instructions");
  /* several ENTRY */
  expect_msg("HloModule m\nENTRY a {\n  ROOT p = f32[] parameter(0)\n}\nENTRY b {\n"
             "  ROOT p = f32[] parameter(0)\n}\n",
             5, 7, "several ENTRY computations ('a' and 'b')");
  /* duplicate computation */
  expect_msg("HloModule m\nc {\n  ROOT p = f32[] parameter(0)\n}\nc {\n  ROOT p = f32[] parameter(0)\n}\n",
             5, 1, "computation 'c' is defined twice");
  /* forward reference to a computation */
  expect_msg("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=f\n}\n"
             "f {\n  ROOT p = f32[] parameter(0)\n}\n",
             4, 36, "computation 'f' is not defined before this use");
  /* missing required attribute */
  expect_msg("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT c = pred[2] compare(p, p)\n}\n",
             4, 8, "compare c is missing attribute direction");
  /* attribute not taken by the opcode */
  expect_msg("HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0), dimensions={0}\n}\n", 3, 33,
             "unexpected attribute dimensions for parameter");
  /* unknown enum word */
  expect_msg("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
             "  ROOT c = pred[2] compare(p, p), direction=XX\n}\n",
             4, 45, "unknown value for attribute direction");
  /* duplicate attribute */
  expect_msg("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
             "  ROOT c = pred[2] compare(p, p), direction=EQ, direction=EQ\n}\n",
             4, 49, "attribute direction given twice");
  /* literal braces vs shape */
  expect_msg("HloModule m\nENTRY e {\n  ROOT c = f32[2,3] constant({{1,2,3},{4,5}})\n}\n", 3, 39,
             "expects 3 elements in the [1] element of the literal, but sees 2");
  expect_msg("HloModule m\nENTRY e {\n  ROOT c = f32[2] constant({1,2,3})\n}\n", 3, 28,
             "expects 2 elements in the literal, but sees 3");
  /* A huge declared size is checked against the text before it is
   * allocated (fuzz_parse: 44 GB for four elements); errors past the first
   * level and in elements too. */
  expect_msg("HloModule m\nENTRY e {\n  ROOT c = f32[11111111114] constant({1, 2, 3, 4})\n}\n", 3, 38,
             "expects 11111111114 elements in the literal, but sees 4");
  expect_msg("HloModule m\nENTRY e {\n  ROOT c = f32[2,300000] constant({{1}, {2}})\n}\n", 3, 36,
             "expects 300000 elements in the [0] element of the literal, but sees 1");
  /* NaN payload too wide for bf16 (7 mantissa bits) */
  expect_msg("HloModule m\nENTRY e {\n  ROOT c = bf16[] constant(nan(0x80))\n}\n", 3, 28,
             "NaN payload (0x80) does not fit bf16");
  /* f16 overflow */
  expect_msg("HloModule m\nENTRY e {\n  ROOT c = f16[] constant(65520)\n}\n", 3, 27,
             "value 65520 is out of range for literal's primitive type f16");
  /* signature result vs root */
  expect_msg("HloModule m\nENTRY e () -> f32[3] {\n  ROOT c = f32[2] parameter(0)\n}\n", 2, 14,
             "computation result shape does not match the root 'c'");
  /* operand shape vs definition */
  expect_msg("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(f32[3] p)\n}\n",
             4, 26, "operand shape does not match the shape of 'p'");
  /* f32[]{} is not a scalar layout */
  expect_msg("HloModule m\nENTRY e {\n  ROOT p = f32[]{} parameter(0)\n}\n", 3, 17,
             "unexpected '{'");
  /* cannot infer */
  expect_msg("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = reshape(p)\n}\n", 4, 12,
             "cannot infer the shape of reshape, write it");
  /* conditional selector type */
  expect_msg("HloModule m\nb {\n  ROOT p = f32[] parameter(0)\n}\nENTRY e {\n  s = s32[] parameter(0)\n"
             "  f = f32[] parameter(1)\n  ROOT c = f32[] conditional(s, f, f), true_computation=b, "
             "false_computation=b\n}\n",
             8, 8, "conditional with true/false_computation needs a pred[] selector");
  /* operand counts that depend on shapes */
  expect_msg("HloModule m\nENTRY e {\n  p = f32[2,3] parameter(0)\n  i = s32[] parameter(1)\n"
             "  ROOT d = f32[1,1] dynamic-slice(p, i), dynamic_slice_sizes={1,1}\n}\n",
             5, 8, "dynamic-slice expects 3 operands (operand + one start index per dimension), got 2");
  expect_msg("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT t = (f32[2], f32[2]) tuple(p)\n}\n",
             4, 29, "tuple shape has 2 elements but 1 operands are given");
  expect_msg("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT s = f32[2] async-start(p), calls=e\n}\n",
             4, 41, "computation 'e' is not defined before this use");
  /* window strides */
  expect_msg("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
             "  ROOT r = f32[2] reduce-window(p, z), window={size=2 stride=0}, to_apply=e\n}\n",
             5, 62, "window strides must be positive");
  /* layout fields */
  expect_msg("HloModule m\nENTRY e {\n  ROOT p = f32[2]{0:S(1)T(2)} parameter(0)\n}\n", 3, 25,
             "layout field T out of order (expected D T L # * E S SC P M)");
  expect_msg("HloModule m\nENTRY e {\n  ROOT p = f32[2]{0:Q(1)} parameter(0)\n}\n", 3, 21,
             "unknown layout field");
  expect_msg("HloModule m\nENTRY e {\n  ROOT p = f32[2]{0:E(x)} parameter(0)\n}\n", 3, 22,
             "bad value for layout field E");
  expect_msg("HloModule m\nENTRY e {\n  ROOT p = f32[4294967296,4294967296] parameter(0)\n}\n", 3, 12,
             "shape has too many elements");
  /* bad layout */
  expect_msg("HloModule m\nENTRY e {\n  ROOT p = f32[2,3]{0,0} parameter(0)\n}\n", 3, 12,
             "layout {...} is not a permutation of the dimensions");
}
END_TEST

/* Integer lists and slice ranges are separated by single commas, as XLA
 * writes them: a missing, doubled, leading or trailing comma is an error at
 * the list's '{' (column 46 of line 4), never a list read some other way. */
START_TEST(errors_list_commas) {
  static const char *const bad_dims[] = {"{1 0}", "{1,,0}", "{,1,0}", "{1,0,}"};
  for (size_t i = 0; i < sizeof bad_dims / sizeof *bad_dims; i++) {
    char text[256];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  p = f32[2,3] parameter(0)\n"
             "  ROOT t = f32[3,2] transpose(p), dimensions=%s\n}\n", bad_dims[i]);
    expect_msg(text, 4, 46, "attribute dimensions expects a list of integers {a,b,...}");
  }
  expect_msg("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  i = s32[] parameter(1)\n"
             "  ROOT d = f32[2] dynamic-slice(p, i), dynamic_slice_sizes={2 1}\n}\n",
             5, 60, "attribute dynamic_slice_sizes expects a list of integers {a,b,...}");
  expect_msg("HloModule m\nENTRY e {\n  p = f32[4,4] parameter(0)\n"
             "  ROOT s = f32[2,2] slice(p), slice={[0:2] [0:2]}\n}\n",
             4, 37, "attribute slice expects {[start:limit:stride], ...}");
  /* The same lists with their commas parse. */
  HloModule *m = parse_ok("HloModule m\nENTRY e {\n  p = f32[4,4] parameter(0)\n"
                          "  s = f32[2,2] slice(p), slice={[0:2], [1:3]}\n"
                          "  ROOT t = f32[2,2] transpose(s), dimensions={1,0}\n}\n");
  const HloInstr *t = m->entry->root;
  ck_assert_int_eq(t->dimensions.n, 2);
  ck_assert_int_eq(t->dimensions.v[0], 1);
  ck_assert_int_eq(t->dimensions.v[1], 0);
  ck_assert_int_eq(t->ops[0]->slice[1].start, 1);
  ck_assert_int_eq(t->ops[0]->slice[1].limit, 3);
  hlp_module_free(m);
}
END_TEST

START_TEST(errors_lexical) {
  expect_msg("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), metadata={op_name=\"abc}\n}\n", 3,
             50, "unterminated string");
  expect_msg("HloModule m /* no end\nENTRY e {\n}\n", 1, 13, "unterminated comment");
  expect_msg("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), metadata={op_name=\"a\\qb\"}\n}\n",
             3, 52, "invalid escape sequence in string");
  expect_msg("HloModule m\nENTRY e {\n  ROOT p = f32[] constant(18446744073709551616)\n}\n", 3, 27,
             "integer out of range");
  expect_msg("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0) ^\n}\n", 3, 31,
             "unexpected character");
  expect_msg("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n", 4, 1, "unexpected end of input");
  static const char nul[] = "HloModule m\nENTRY e {\0\n}\n";
  char *e = first_error(nul, sizeof nul - 1);
  ck_assert_ptr_nonnull(strstr(e, "t.hlo:2:10: error: NUL byte in input\n"));
  free(e);
  expect_msg("", 1, 1, "unexpected end of input");
}
END_TEST

/* ---- malformed inputs never crash ------------------------------------------------------------ */

static const char *sample =
    "HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n"
    "add (x: f32[], y: f32[]) -> f32[] {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(x, y)\n}\n"
    "ENTRY e {\n  p = f32[2] parameter(0)\n  z = f32[] constant(0)\n"
    "  r = f32[] reduce(p, z), dimensions={0}, to_apply=add, metadata={op_name=\"a\"}\n"
    "  c = f32[2,2] constant({{1, 2}, {3, nan}})\n"
    "  cc = f32[2] custom-call(p), custom_call_target=\"t\", backend_config={\"a\":{\"b\":1}}\n"
    "  ROOT b = f32[2] broadcast(r), dimensions={}, sharding={devices=[2]0,1}\n}\n";

START_TEST(truncations) {
  size_t n = strlen(sample);
  for (size_t i = 0; i < n; i++) {
    HlcDiags d = {0};
    HloModule *m = hlp_parse(sample, i, "t.hlo", &d);
    hlp_module_free(m);
    hlc_diags_clear(&d);
  }
  HloModule *m = parse_ok(sample);
  hlp_module_free(m);
}
END_TEST

START_TEST(garbage) {
  unsigned s = 12345;
  char buf[600];
  static const char alphabet[] = "{}[]()=,:%\"'/*-x0123456789abfio?<>.#+~_ \n\tROOTENTRYf32[]";
  for (int iter = 0; iter < 3000; iter++) {
    size_t n = (size_t)(iter % 200);
    for (size_t i = 0; i < n; i++) {
      s = s * 1103515245u + 12345u;
      buf[i] = (iter & 1) ? alphabet[(s >> 16) % (sizeof alphabet - 1)] : (char)(s >> 16);
    }
    HlcDiags d = {0};
    HloModule *m = hlp_parse(buf, n, "g.hlo", &d);
    hlp_module_free(m);
    hlc_diags_clear(&d);
  }
  /* Mutations of a valid module: replace one byte at a time. */
  size_t n = strlen(sample);
  char *t = malloc(n);
  for (size_t i = 0; i < n; i += 3) {
    memcpy(t, sample, n);
    t[i] = alphabet[i % (sizeof alphabet - 1)];
    HlcDiags d = {0};
    HloModule *m = hlp_parse(t, n, "g.hlo", &d);
    if (m) {
      char *p = hlp_print(m, NULL);
      free(p);
    }
    hlp_module_free(m);
    hlc_diags_clear(&d);
  }
  free(t);
}
END_TEST

START_TEST(deep_nesting) {
  size_t depth = 100000;
  char *t = malloc(depth * 2 + 200);
  strcpy(t, "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), x=");
  size_t o = strlen(t);
  for (size_t i = 0; i < depth; i++) t[o++] = "{[("[i % 3];
  t[o] = 0;
  char *e = first_error(t, o);
  ck_assert_ptr_nonnull(strstr(e, "nesting deeper than 256 levels"));
  free(e);
  /* 200 levels are fine for the grammar (unknown attribute, kept). */
  o = strlen("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), x=");
  for (int i = 0; i < 200; i++) t[o++] = '{';
  for (int i = 0; i < 200; i++) t[o++] = '}';
  strcpy(t + o, "\n}\n");
  HlcDiags d = {0};
  HloModule *m = hlp_parse(t, strlen(t), "t.hlo", &d);
  ck_assert_ptr_nonnull(m);
  char *p = hlp_print(m, NULL);
  ck_assert_ptr_nonnull(p);
  free(p);
  hlp_module_free(m);
  hlc_diags_clear(&d);
  free(t);
}
END_TEST

int main(void) {
  Suite *s = suite_create("parser");
  struct { const char *name; const TTest *tests[16]; } groups[] = {
    {"lexer", {lex_names_and_context, lex_numbers, lex_layout_brace_and_raw, lex_comments_strings}},
    {"shapes", {shapes, shape_inference, shape_inference_structured}},
    {"attributes", {attrs_window_conv, attrs_pad_slice_misc, attrs_gather_scatter_dot,
                    attrs_collectives, attrs_custom_call, attrs_control_flow, attrs_unknown_warns,
                    module_attrs, async_sugar, nested_and_inline}},
    {"literals", {literals_ints_ok, literals_floats, literals_elided}},
    {"printer", {print_canonical}},
    {"errors", {errors_whole, errors_positions, errors_list_commas, errors_lexical}},
    {"malformed", {truncations, garbage, deep_nesting}},
  };
  for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
    TCase *tc = tcase_create(groups[g].name);
    tcase_set_timeout(tc, 60);
    for (int i = 0; groups[g].tests[i]; i++) tcase_add_test(tc, groups[g].tests[i]);
    suite_add_tcase(s, tc);
  }
  return tl_main(s);
}
