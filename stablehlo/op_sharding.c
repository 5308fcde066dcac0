/* op_sharding.c: an operation's own sharding (mhlo.sharding = "{...}", or
 * Shardy's sdy.sharding = #sdy.sharding_per_value<[...]>, one per result)
 * on the HLO instruction that holds its result, as XLA's translation keeps
 * it. JAX's shard_map lowered without Shardy needs them: its Sharding
 * custom call's sharding tells SPMDFullToShardShape how to split.
 * A result the op did not write (an op that passes an operand on) keeps no
 * sharding: the annotation has nowhere to go. A multi-result op's tuple
 * sharding gives each result its element. */
#include <stdlib.h>
#include <string.h>
#include "ir/print.h"
#include "ir/sharding.h"
#include "stablehlo/lower.h"
#include "stablehlo/mlir.h"

/* The sharding texts of op's results into out[i] (NULL: none). */
static void result_shardings(Lower *C, ShOp *op, const char **out) {
  for (int i = 0; i < op->nresults; i++) out[i] = NULL;
  ShAttr *a = sh_attr(op, "mhlo.sharding");
  if (a && a->val && sh_is(C, a->val, SH_STRING, NULL)) {
    size_t n;
    const char *text = sh_string(C, a->val, &n);
    HlcArena arena;
    hlc_arena_init(&arena);
    HloSharding s;
    char why[256];
    if (hlo_sharding_parse(&arena, text, &s, why, sizeof why) != 0) {
      hlc_arena_free(&arena);
      sh_fail(C, a->val, "mhlo.sharding: %s", why);
    }
    for (int i = 0; i < op->nresults; i++) {
      if (op->nresults == 1 || s.kind != HLO_SHARDING_TUPLE) { out[i] = text; continue; }
      if (s.ntuple != op->nresults) {
        hlc_arena_free(&arena);
        sh_fail(C, a->val, "mhlo.sharding: a tuple of %d shardings for %d results", s.ntuple, op->nresults);
      }
      HlcText b = {0};
      hlp_print_sharding(&b, &s.tuple[i]);
      out[i] = b.p ? sh_strdup(C, b.p, b.n) : "{replicated}";
      hlc_text_free(&b);
    }
    hlc_arena_free(&arena);
    return;
  }
  a = sh_attr(op, "sdy.sharding");
  if (!a || !a->val) return;
  if (!sh_is(C, a->val, SH_HASHID, "#sdy.sharding_per_value") || !a->val->next || a->val->next->kind != SHN_ANGLE ||
      !a->val->next->kids || a->val->next->kids->kind != SHN_BRACKET)
    sh_fail(C, a->val, "sdy.sharding on an operation: expected #sdy.sharding_per_value<[<@mesh, [...]>, ...]>");
  int i = 0;
  for (ShNode *k = a->val->next->kids->kids; k; k = k->next) {
    if (sh_is(C, k, SH_COMMA, NULL)) continue;
    if (k->kind != SHN_ANGLE || i == op->nresults)
      sh_fail(C, k, "sdy.sharding_per_value: expected one <@mesh, [...]> per result (%d)", op->nresults);
    out[i] = sh_sdy_sharding(C, k, op->results[i]);
    i++;
  }
  if (i != op->nresults)
    sh_fail(C, a->val, "sdy.sharding_per_value: %d shardings for %d results", i, op->nresults);
}

/* Does the instruction line (n bytes) already carry a sharding? */
static bool has_sharding(const char *line, size_t n) {
  static const char key[] = ", sharding=";
  for (size_t i = 0; i + sizeof key - 1 <= n; i++)
    if (memcmp(line + i, key, sizeof key - 1) == 0) return true;
  return false;
}

void sh_attach_op_sharding(Lower *C, ShOp *op, Comp *comp, size_t start, int mark) {
  if (!sh_attr(op, "mhlo.sharding") && !sh_attr(op, "sdy.sharding")) return;
  if (op->nresults < 1) return;
  const char **text = hlc_arena_alloc(C->arena, sizeof *text * (size_t)op->nresults);
  result_shardings(C, op, text);
  /* Lines later in the body first, so that earlier offsets stay valid. */
  for (;;) {
    Binding *best = NULL;
    int bi = -1;
    for (int i = 0; i < op->nresults; i++) {
      if (!text[i]) continue;
      Binding *b = sh_result_binding(C, op, i);
      if (!b || b->comp != comp->id || b->line_off < start) { text[i] = NULL; continue; }
      if (!best || b->line_off > best->line_off) { best = b; bi = i; }
    }
    if (!best) return;
    const char *line = comp->body.p + best->line_off;
    const char *end = memchr(line, '\n', comp->body.n - best->line_off);
    size_t at = end ? (size_t)(end - comp->body.p) : comp->body.n;
    if (!has_sharding(line, at - best->line_off)) {
      const char *add = sh_fmt(C, ", sharding=%s", text[bi]);
      size_t len = strlen(add);
      size_t tail = comp->body.n - at;
      hlc_text_put(&comp->body, add, len);   /* room */
      if (comp->body.oom) sh_fail_off(C, 0, "out of memory");
      memmove(comp->body.p + at + len, comp->body.p + at, tail);
      memcpy(comp->body.p + at, add, len);
      for (int k = mark; k < C->nb; k++)
        if (C->b[k]->comp == comp->id && C->b[k]->line_off > at) C->b[k]->line_off += len;
      if (comp->last_line > at) comp->last_line += len;
    }
    text[bi] = NULL;
  }
}
