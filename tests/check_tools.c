/* check_tools.c: the library side of the debugging tools: value summaries
 * and element text (HloValue views), the run observer (order, depth,
 * callers, before/after phases, stopping a run), finding and extracting one
 * instruction into a module of its own. Expected values are worked out by
 * hand from the modules below. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hlorun.h"
#include "interp/interp.h"
#include "tests/testlib.h"

static const HloValue *view(const HliValue *v) { return (const HloValue *)v; }

START_TEST(summary_f32) {
  HloShape s = {.dtype = HLO_F32, .rank = 1, .dims = (int64_t[]){5}};
  HliValue *v = hli_value_new(NULL, &s);
  float d[5] = {1, NAN, -INFINITY, 3, -2};
  memcpy(v->data, d, sizeof d);
  HloValueSummary sm = {sizeof sm, 0, 0, 0, 0, 0, 0};
  hlo_value_summarize(view(v), &sm);
  ck_assert_int_eq(sm.num_elements, 5);
  ck_assert_int_eq(sm.num_nan, 1);
  ck_assert_int_eq(sm.num_inf, 1);
  ck_assert_double_eq(sm.min, -2);
  ck_assert_double_eq(sm.max, 3);
  ck_assert_double_eq_tol(sm.mean, 2.0 / 3.0, 1e-12);   /* (1 + 3 - 2) / 3 finite */
  char buf[64];
  ck_assert_uint_eq(hlo_value_format_elements(view(v), 2, buf, sizeof buf), strlen("1, nan, ..."));
  ck_assert_str_eq(buf, "1, nan, ...");
  hlo_value_format_elements(view(v), 9, buf, sizeof buf);
  ck_assert_str_eq(buf, "1, nan, -inf, 3, -2");
  hlo_value_format_elements(view(v), 9, buf, 6);   /* truncated, NUL-terminated */
  ck_assert_str_eq(buf, "1, na");
  hlo_value_shape_text(view(v), buf, sizeof buf);
  ck_assert_str_eq(buf, "f32[5]");
  ck_assert_int_eq(hlo_value_type(view(v)), HLO_TYPE_F32);
  ck_assert_int_eq(hlo_value_num_elements(view(v)), 5);
  hli_value_unref(NULL, v);
}
END_TEST

START_TEST(summary_ints_and_tuples) {
  HloShape si = {.dtype = HLO_S32, .rank = 1, .dims = (int64_t[]){2}};
  HloShape su = {.dtype = HLO_U64, .rank = 0};
  HloShape parts[2] = {si, su};
  HloShape st = {.dtype = HLO_TUPLE, .ntuple = 2, .tuple = parts};
  HliValue *t = hli_value_new(NULL, &st);
  ((int32_t *)t->tuple[0]->data)[0] = -1;
  ((int32_t *)t->tuple[0]->data)[1] = 4;
  *(uint64_t *)t->tuple[1]->data = 10;
  HloValueSummary sm = {sizeof sm, 0, 0, 0, 0, 0, 0};
  hlo_value_summarize(view(t), &sm);
  ck_assert_int_eq(sm.num_elements, 3);
  ck_assert_int_eq(sm.num_nan + sm.num_inf, 0);
  ck_assert_double_eq(sm.min, -1);
  ck_assert_double_eq(sm.max, 10);
  ck_assert_double_eq(sm.mean, 13.0 / 3.0);
  char buf[64];
  hlo_value_format_elements(view(t), 10, buf, sizeof buf);
  ck_assert_str_eq(buf, "-1, 4, 10");
  hlo_value_shape_text(view(t), buf, sizeof buf);
  ck_assert_str_eq(buf, "(s32[2], u64[])");
  ck_assert_int_eq(hlo_value_tuple_size(view(t)), 2);
  ck_assert_ptr_eq(hlo_value_tuple_element(view(t), 1), view(t->tuple[1]));
  ck_assert_ptr_null(hlo_value_tuple_element(view(t), 2));
  /* An empty array: no finite elements, NaN statistics. */
  HloShape se = {.dtype = HLO_F32, .rank = 1, .dims = (int64_t[]){0}};
  HliValue *e = hli_value_new(NULL, &se);
  hlo_value_summarize(view(e), &sm);
  ck_assert_int_eq(sm.num_elements, 0);
  ck_assert(isnan(sm.min) && isnan(sm.mean));
  hli_value_unref(NULL, e);
  hli_value_unref(NULL, t);
}
END_TEST

/* (i, v) -> (i + 1, v * v) while i < 2, then negate. */
static const char *loop_module =
    "HloModule loop\n"
    "cond {\n"
    "  s = (s32[], f32[2]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] constant(2)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  s = (s32[], f32[2]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  v = f32[2] get-tuple-element(s), index=1\n"
    "  one = s32[] constant(1)\n"
    "  i1 = s32[] add(i, one)\n"
    "  sq = f32[2] multiply(v, v)\n"
    "  ROOT r = (s32[], f32[2]) tuple(i1, sq)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[2] parameter(0)\n"
    "  z = s32[] constant(0)\n"
    "  t = (s32[], f32[2]) tuple(z, x)\n"
    "  w = (s32[], f32[2]) while(t), condition=cond, body=body\n"
    "  g = f32[2] get-tuple-element(w), index=1\n"
    "  ROOT neg = f32[2] negate(g)\n"
    "}\n";

typedef struct Seen {
  char log[2048];
  int before, after;
  const char *stop_at;
} Seen;

static int watch(const HloEvent *e, void *user) {
  Seen *s = user;
  if (e->phase == HLO_OBSERVE_BEFORE) {
    s->before++;
    ck_assert_ptr_null(e->result);
    return 0;
  }
  s->after++;
  ck_assert_ptr_nonnull(e->result);
  char item[128];
  snprintf(item, sizeof item, "%s%s%s@%d%s%s ", e->depth ? e->computation : "", e->depth ? "/" : "",
           e->name, e->depth, e->caller ? "<" : "", e->caller ? hlo_instruction_name(e->caller) : "");
  if (!strcmp(e->name, "sq") || !strcmp(e->name, "neg") || !strcmp(e->name, "w"))
    strncat(s->log, item, sizeof s->log - strlen(s->log) - 1);
  if (!strcmp(e->name, "neg")) {
    /* Operand g = x^4 = {16, 81} for x = {2, 3}. */
    ck_assert_int_eq(e->num_operands, 1);
    const float *g = hlo_value_data(e->operands[0]);
    ck_assert_float_eq(g[0], 16);
    ck_assert_float_eq(g[1], 81);
    ck_assert_str_eq(e->opcode, "negate");
    ck_assert_int_eq(e->line, 23);
    ck_assert_int_eq(e->step, e->num_steps - 1);
  }
  return s->stop_at && !strcmp(e->name, s->stop_at);
}

START_TEST(observer) {
  HloCtx *ctx;
  HloModule *m;
  HloExecutable *exe;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  ck_assert_int_eq(hlo_module_parse(ctx, loop_module, strlen(loop_module), "loop.hlo", &m), HLO_OK);
  ck_assert_int_eq(hlo_compile(ctx, m, NULL, &exe), HLO_OK);
  float xs[2] = {2, 3};
  int64_t two = 2;
  HloBuffer *x, *r = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, &two, 1, xs, &x), HLO_OK);
  Seen s = {"", 0, 0, NULL};
  ck_assert_int_eq(hlo_executable_set_observer(exe, watch, &s, HLO_OBSERVE_AFTER), HLO_OK);
  ck_assert_int_eq(hlo_execute(exe, &x, 1, &r), HLO_OK);
  /* Two body runs (depth 1, run by w), then w and neg in ENTRY. */
  ck_assert_str_eq(s.log, "body/sq@1<w body/sq@1<w w@0 neg@0 ");
  ck_assert_int_eq(s.before, 0);
  /* Every instruction, parameters and constants too: ENTRY 6, cond
   * 3 runs of 4, body 2 runs of 7. */
  ck_assert_int_eq(s.after, 6 + 3 * 4 + 2 * 7);
  hlo_buffer_free(r);

  /* Both phases; stopping at the second multiply. */
  Seen s2 = {"", 0, 0, "sq"};
  ck_assert_int_eq(hlo_executable_set_observer(exe, watch, &s2, HLO_OBSERVE_BEFORE | HLO_OBSERVE_AFTER),
                   HLO_OK);
  ck_assert_int_eq(hlo_execute(exe, &x, 1, &r), HLO_STOPPED);
  ck_assert_ptr_null(r);
  ck_assert_str_eq(s2.log, "body/sq@1<w ");
  ck_assert_int_ge(s2.before, s2.after);
  ck_assert_ptr_nonnull(strstr(hlo_ctx_diagnostics(ctx), "stopped here by an observer"));
  hlo_ctx_clear_diagnostics(ctx);

  /* ENTRY only: its 6 instructions, nothing of cond or body. */
  Seen s3 = {"", 0, 0, NULL};
  ck_assert_int_eq(hlo_executable_set_observer(exe, watch, &s3, HLO_OBSERVE_AFTER), HLO_OK);
  ck_assert_int_eq(hlo_executable_set_observer_depth(exe, 0), HLO_OK);
  ck_assert_int_eq(hlo_execute(exe, &x, 1, &r), HLO_OK);
  ck_assert_int_eq(s3.after, 6);
  ck_assert_str_eq(s3.log, "w@0 neg@0 ");
  hlo_buffer_free(r);

  /* Removing the observer: runs are plain again. */
  ck_assert_int_eq(hlo_executable_set_observer(exe, NULL, NULL, 0), HLO_OK);
  ck_assert_int_eq(hlo_execute(exe, &x, 1, &r), HLO_OK);
  const float *out = hlo_buffer_data(r);
  ck_assert_float_eq(out[0], -16);
  ck_assert_float_eq(out[1], -81);
  hlo_buffer_free(r);
  hlo_buffer_free(x);
  hlo_executable_free(exe);
  hlo_module_free(m);
  hlo_ctx_free(ctx);
}
END_TEST

/* Three dynamic-update-slices in a row: the first copies the caller's x,
 * the next two update the dying result in place, unless an observer reads
 * operands after each step. */
static const char *dus_module =
    "HloModule dus\n"
    "ENTRY main {\n"
    "  x = f32[4096] parameter(0)\n"
    "  u = f32[1] constant({7})\n"
    "  i = s32[] constant(1)\n"
    "  d1 = f32[4096] dynamic-update-slice(x, u, i)\n"
    "  d2 = f32[4096] dynamic-update-slice(d1, u, i)\n"
    "  ROOT d3 = f32[4096] dynamic-update-slice(d2, u, i)\n"
    "}\n";

static int count_after(const HloEvent *e, void *user) {
  int *n = user;
  if (e->phase == HLO_OBSERVE_AFTER && !strcmp(e->opcode, "dynamic-update-slice")) {
    ck_assert_int_eq(e->num_operands, 0);
    ck_assert_ptr_null(e->operands);
    const float *r = hlo_value_data(e->result);
    ck_assert_float_eq(r[1], 7);
    ck_assert_float_eq(r[2], 2);
    (*n)++;
  }
  return 0;
}

/* Peak memory of one run of dus_module in a fresh executable observed with
 * `phases` (0: not observed). */
static uint64_t dus_peak(HloCtx *ctx, HloModule *m, HloBuffer *x, unsigned phases, int *seen) {
  HloExecutable *exe;
  HloBuffer *r = NULL;
  ck_assert_int_eq(hlo_compile(ctx, m, NULL, &exe), HLO_OK);
  if (phases)
    ck_assert_int_eq(hlo_executable_set_observer(exe, count_after, seen, phases), HLO_OK);
  ck_assert_int_eq(hlo_execute(exe, &x, 1, &r), HLO_OK);
  ck_assert_float_eq(((const float *)hlo_buffer_data(r))[1], 7);
  uint64_t peak = hlo_executable_peak_memory(exe);
  hlo_buffer_free(r);
  hlo_executable_free(exe);
  return peak;
}

START_TEST(observer_without_operands_keeps_in_place) {
  HloCtx *ctx;
  HloModule *m;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  ck_assert_int_eq(hlo_module_parse(ctx, dus_module, strlen(dus_module), "dus.hlo", &m), HLO_OK);
  static float xs[4096];
  for (int i = 0; i < 4096; i++) xs[i] = 2;
  int64_t n = 4096;
  HloBuffer *x;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, &n, 1, xs, &x), HLO_OK);
  int seen = 0;
  uint64_t plain = dus_peak(ctx, m, x, 0, NULL);
  uint64_t light = dus_peak(ctx, m, x, HLO_OBSERVE_AFTER | HLO_OBSERVE_NO_OPERANDS, &seen);
  ck_assert_int_eq(seen, 3);
  /* The same memory as unobserved: x and one result, updated in place. */
  ck_assert_uint_eq(light, plain);
  /* An observer that may read operands: each update copies, so at the
   * second one x, d1 and d2 are live at once. */
  HloExecutable *exe;
  HloBuffer *r = NULL;
  Seen s = {"", 0, 0, NULL};
  ck_assert_int_eq(hlo_compile(ctx, m, NULL, &exe), HLO_OK);
  ck_assert_int_eq(hlo_executable_set_observer(exe, watch, &s, HLO_OBSERVE_AFTER), HLO_OK);
  ck_assert_int_eq(hlo_execute(exe, &x, 1, &r), HLO_OK);
  ck_assert_uint_ge(hlo_executable_peak_memory(exe), plain + 4096 * sizeof(float));
  hlo_buffer_free(r);
  hlo_executable_free(exe);
  hlo_buffer_free(x);
  hlo_module_free(m);
  hlo_ctx_free(ctx);
}
END_TEST

START_TEST(extract) {
  HloCtx *ctx;
  HloModule *m, *one;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  ck_assert_int_eq(hlo_module_parse(ctx, loop_module, strlen(loop_module), "loop.hlo", &m), HLO_OK);
  /* "i" exists in cond and body; "s" too: ENTRY has neither, so the first
   * in text order (cond) is found. "neg" is in ENTRY. */
  const HloInstruction *i = hlo_module_find_instruction(m, "i");
  ck_assert_str_eq(hlo_instruction_computation(i), "cond");
  ck_assert_ptr_null(hlo_module_find_instruction(m, "nope"));
  const HloInstruction *sq = hlo_module_find_instruction(m, "sq");
  ck_assert_str_eq(hlo_instruction_opcode(sq), "multiply");
  ck_assert_int_eq(hlo_instruction_num_operands(sq), 2);
  ck_assert_str_eq(hlo_instruction_name(hlo_instruction_operand(sq, 1)), "v");
  ck_assert_int_eq(hlo_instruction_line(sq), 14);
  ck_assert_ptr_null(hlo_instruction_custom_call_target(sq));

  ck_assert_int_eq(hlo_module_extract(ctx, m, sq, &one), HLO_OK);
  ck_assert_int_eq(hlo_module_num_params(one), 2);
  float a[2] = {3, -4}, b[2] = {5, 0.5f};
  int64_t two = 2;
  HloBuffer *in[2], *r;
  hlo_buffer_new_array(ctx, HLO_TYPE_F32, &two, 1, a, &in[0]);
  hlo_buffer_new_array(ctx, HLO_TYPE_F32, &two, 1, b, &in[1]);
  ck_assert_int_eq(hlo_run(ctx, one, in, 2, &r), HLO_OK);
  ck_assert_float_eq(((const float *)hlo_buffer_data(r))[0], 15);
  ck_assert_float_eq(((const float *)hlo_buffer_data(r))[1], -2);
  hlo_buffer_free(r);
  hlo_module_free(one);

  /* The while loop alone keeps the computations it calls. */
  const HloInstruction *w = hlo_module_find_instruction(m, "w");
  ck_assert_int_eq(hlo_module_extract(ctx, m, w, &one), HLO_OK);
  char *text;
  size_t len;
  ck_assert_int_eq(hlo_module_print(ctx, one, &text, &len), HLO_OK);
  ck_assert_ptr_nonnull(strstr(text, "ROOT %w = (s32[], f32[2]{0}) while(%operand.0), condition=%cond, body=%body"));
  ck_assert_ptr_nonnull(strstr(text, "%operand.0 = (s32[], f32[2]{0}) parameter(0)"));
  hlo_free(text);
  hlo_module_free(one);

  /* Constants and parameters have nothing to run. */
  ck_assert_int_eq(hlo_module_extract(ctx, m, hlo_module_find_instruction(m, "z"), &one),
                   HLO_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(hlo_ctx_diagnostics(ctx), "cannot extract z (constant)"));
  hlo_buffer_free(in[0]);
  hlo_buffer_free(in[1]);
  hlo_module_free(m);
  hlo_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("tools");
  TCase *tc = tcase_create("values");
  tcase_add_test(tc, summary_f32);
  tcase_add_test(tc, summary_ints_and_tuples);
  suite_add_tcase(s, tc);
  tc = tcase_create("runs");
  tcase_add_test(tc, observer);
  tcase_add_test(tc, observer_without_operands_keeps_in_place);
  tcase_add_test(tc, extract);
  suite_add_tcase(s, tc);
  return tl_main(s);
}
