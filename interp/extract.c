/* extract.c: a module that runs one instruction alone (hlo_module_extract),
 * for reproducing a failure without the rest of the model: hlorun
 * --only-instruction, and the module.hlo of each --dump-custom-calls
 * directory.
 *
 * Works on the module's canonical text (hlp_print): every computation is
 * kept except ENTRY, which is replaced by one whose parameters are the
 * instruction's operands (tokens come from after-all) and whose ROOT is the
 * instruction, printed exactly as in the canonical text with its operand
 * list renamed and control-predecessors dropped. The header loses
 * entry_computation_layout (the new ENTRY has another signature). The text
 * is parsed again, so the result is checked like any module.
 *
 * Not here: running it (the caller does), choosing the instruction. */
#include "interp/api.h"
#include "interp/valio.h"
#include "ir/print.h"
#include "parser/parser.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Start of the line "  [ROOT ]%name = " inside [b, e), pointing after
 * " = "; NULL if absent. */
static const char *find_instr(const char *b, const char *e, const char *name, const char **line) {
  size_t nl = strlen(name);
  for (const char *p = b; p && p < e; p = memchr(p, '\n', (size_t)(e - p))) {
    if (*p == '\n') p++;
    const char *q = p;
    if (strncmp(q, "  ROOT %", 8) == 0) q += 8;
    else if (strncmp(q, "  %", 3) == 0) q += 3;
    else continue;
    if ((size_t)(e - q) > nl + 3 && strncmp(q, name, nl) == 0 && strncmp(q + nl, " = ", 3) == 0) {
      if (line) *line = p;
      return q + nl + 3;
    }
  }
  return NULL;
}

/* The block of computation c: from its header line to the "}" line
 * (exclusive of the blank line after it). */
static bool find_block(const char *text, const HloComputation *c, const char **b, const char **e) {
  size_t nl = strlen(c->name);
  for (const char *p = text; p; p = strchr(p, '\n')) {
    if (*p == '\n') p++;
    const char *q = p;
    if (c->is_entry) {
      if (strncmp(q, "ENTRY %", 7) != 0) continue;
      q += 7;
    } else {
      if (*q != '%') continue;
      q++;
    }
    if (strncmp(q, c->name, nl) != 0 || (q[nl] != ' ' && q[nl] != '\n')) continue;
    const char *end = strstr(q, "\n}");
    if (!end) return false;
    *b = p;
    *e = end + 2;
    return true;
  }
  return false;
}

/* Shape text of an instruction line (after " = "), up to " OPCODE(". */
static bool shape_span(const char *after_eq, const char *end, const HloInstr *ins,
                       const char **s, size_t *n) {
  char pat[64];
  snprintf(pat, sizeof pat, " %s(", hlp_opcode_name(ins->op));
  const char *p = strstr(after_eq, pat);
  if (!p || p >= end) return false;
  *s = after_eq;
  *n = (size_t)(p - after_eq);
  return true;
}

/* End of the instruction starting at p: the next instruction line or the
 * closing brace of the computation. */
static const char *instr_end(const char *p, const char *block_end) {
  const char *best = block_end - 2;   /* the "\n}" */
  const char *cands[2] = {strstr(p, "\n  %"), strstr(p, "\n  ROOT %")};
  for (int i = 0; i < 2; i++)
    if (cands[i] && cands[i] < best) best = cands[i];
  return best;
}

/* Drop ", control-predecessors={...}" (its names do not exist alone). */
static void drop_control(HlcText *b, const char *s, size_t n) {
  static const char key[] = ", control-predecessors={";
  const char *k = memmem(s, n, key, sizeof key - 1);
  if (!k) { hlc_text_put(b, s, n); return; }
  const char *q = k + sizeof key - 1;
  int depth = 1;
  while (q < s + n && depth > 0) {
    if (*q == '{') depth++;
    else if (*q == '}') depth--;
    q++;
  }
  hlc_text_put(b, s, (size_t)(k - s));
  hlc_text_put(b, q, (size_t)(s + n - q));
}

/* Drop ", KEY{...}" (brace-balanced) from s[0..n) into b. */
static size_t drop_braced(const char *s, size_t n, const char *key, char *out) {
  size_t kn = strlen(key);
  const char *k = memmem(s, n, key, kn);
  if (!k) { memcpy(out, s, n); return n; }
  const char *q = k + kn;
  int depth = 1;
  while (q < s + n && depth > 0) {
    if (*q == '{') depth++;
    else if (*q == '}') depth--;
    q++;
  }
  memcpy(out, s, (size_t)(k - s));
  memcpy(out + (k - s), q, (size_t)(s + n - q));
  return (size_t)(k - s) + (size_t)(s + n - q);
}

/* The header line without entry_computation_layout, input_output_alias and
 * buffer_donor: the extracted ENTRY has other parameters and another result,
 * which they would not fit. */
static void put_header(HlcText *b, const char *text) {
  const char *nl = strchr(text, '\n');
  size_t n = nl ? (size_t)(nl - text) : strlen(text);
  static const char *const keys[] = {", entry_computation_layout={", ", input_output_alias={",
                                     ", buffer_donor={"};
  char *x = malloc(n + 1), *y = malloc(n + 1);
  if (!x || !y) { free(x); free(y); b->oom = true; return; }
  memcpy(x, text, n);
  for (int i = 0; i < 3; i++) {
    n = drop_braced(x, n, keys[i], y);
    char *t = x; x = y; y = t;
  }
  hlc_text_put(b, x, n);
  free(x);
  free(y);
}

/* The text of a module running ins alone, or NULL with *why set. */
static char *extract_text(const HloModule *m, const HloInstr *ins, const char **why) {
  *why = "out of memory";
  if (ins->op == HLO_OP_PARAMETER || ins->op == HLO_OP_CONSTANT) {
    *why = "a parameter or constant has no operands: there is nothing to run alone";
    return NULL;
  }
  char *text = hlp_print(m, NULL);
  if (!text) return NULL;
  HlcText b = {0};
  char *out = NULL;
  const char *eb, *ee, *cb, *ce, *line;
  *why = "cannot find the instruction in the module's canonical text";
  if (!find_block(text, m->entry, &eb, &ee) || !find_block(text, ins->parent, &cb, &ce)) goto done;
  const char *after = find_instr(cb, ce, ins->name, &line);
  if (!after) goto done;
  const char *iend = instr_end(after, ce);
  const char *shape;
  size_t shape_n;
  if (!shape_span(after, iend, ins, &shape, &shape_n)) goto done;
  const char *ops = shape + shape_n + 1 + strlen(hlp_opcode_name(ins->op));   /* at "(" */
  HlcText want = {0};
  hlc_text_puts(&want, "(");
  for (int32_t k = 0; k < ins->nops; k++) hlc_text_printf(&want, "%s%%%s", k ? ", " : "", ins->ops[k]->name);
  hlc_text_puts(&want, ")");
  bool ok = want.p && (size_t)(iend - ops) >= want.n && memcmp(ops, want.p, want.n) == 0;
  const char *rest = ops + (want.p ? want.n : 0);
  hlc_text_free(&want);
  if (!ok) goto done;

  /* Header, then the computations the instruction calls (directly or not),
   * in module order: the others are unreachable in the extracted module. */
  put_header(&b, text);
  hlc_text_put(&b, "\n", 1);
  const HloComputation **called = malloc(((size_t)ins->ncalled + 1) * sizeof *called);
  bool *live = NULL;
  if (called) {
    for (int32_t k = 0; k < ins->ncalled; k++) called[k] = ins->called[k].comp;
    live = hlp_reachable(m, called, ins->ncalled);
    free(called);
  }
  if (!live) { *why = "out of memory"; goto done; }
  for (int32_t k = 0; k < m->ncomps; k++) {
    const char *bb, *be;
    if (!live[k] || m->comps[k]->is_entry) continue;
    if (!find_block(text, m->comps[k], &bb, &be)) { free(live); goto done; }
    hlc_text_put(&b, "\n", 1);
    hlc_text_put(&b, bb, (size_t)(be - bb));
    hlc_text_put(&b, "\n", 1);
  }
  free(live);
  (void)eb;
  (void)ee;

  /* The new ENTRY: operands as parameters (tokens from after-all). */
  const char *pfx = strncmp(ins->name, "operand.", 8) == 0 ? "op." : "operand.";
  hlc_text_printf(&b, "\nENTRY %%%s {\n", m->entry->name);
  int32_t np = 0;
  for (int32_t k = 0; k < ins->nops; k++) {
    const HloInstr *op = ins->ops[k];
    const char *oa, *os;
    size_t on;
    if (op->shape.dtype == HLO_TOKEN) {
      hlc_text_printf(&b, "  %%%s%d = token[] after-all()\n", pfx, (int)k);
      continue;
    }
    *why = "cannot find an operand in the module's canonical text";
    if (!(oa = find_instr(cb, ce, op->name, NULL)) || !shape_span(oa, ce, op, &os, &on)) goto done;
    hlc_text_printf(&b, "  %%%s%d = %.*s parameter(%d)\n", pfx, (int)k, (int)on, os, (int)np++);
  }
  hlc_text_printf(&b, "  ROOT %%%s = %.*s %s(", ins->name, (int)shape_n, shape,
                 hlp_opcode_name(ins->op));
  for (int32_t k = 0; k < ins->nops; k++) hlc_text_printf(&b, "%s%%%s%d", k ? ", " : "", pfx, (int)k);
  hlc_text_puts(&b, ")");
  drop_control(&b, rest, (size_t)(iend - rest));
  hlc_text_puts(&b, "\n}\n");
  if (!b.oom) { out = b.p; b.p = NULL; }
  else *why = "out of memory";
done:
  hlc_text_free(&b);
  free(text);
  return out;
}

HloStatus hlo_module_extract(HloCtx *ctx, const HloModule *m, const HloInstruction *i,
                             HloModule **out) {
  if (!ctx || !m || !i || !out) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  const HloInstr *ins = (const HloInstr *)i;
  const char *why;
  char *text = extract_text(m, ins, &why);
  if (!text)
    return hli_api_fail(ctx, ins->op == HLO_OP_PARAMETER || ins->op == HLO_OP_CONSTANT
                                 ? HLO_INVALID_ARGUMENT : HLO_ERROR,
                        "%s:%d: cannot extract %s (%s): %s", m->filename ? m->filename : "<input>",
                        ins->line, ins->name, hlp_opcode_name(ins->op), why);
  char fname[512];
  snprintf(fname, sizeof fname, "%s (extracted from %s)", ins->name,
           m->filename ? m->filename : "<input>");
  HloStatus st = hlo_module_parse(ctx, text, strlen(text), fname, out);
  free(text);
  return st;
}

/* ---- A sub-module around an instruction, with its cut values as
 * parameters (hlo_module_extract_around: --extract, Module.extract) ---- */

enum { AROUND_NONE = HLI_SUB_NONE, AROUND_KEEP = HLI_SUB_KEEP, AROUND_CUT = HLI_SUB_CUT };

/* Which instructions of ins's computation the sub-module keeps (within
 * depth operand steps, found breadth-first so each gets its shortest
 * distance; constants always, they carry their own value) and which become
 * parameters (parameters of the computation, and values beyond depth). */
static unsigned char *around_roles(const HloInstr *ins, int depth) {
  const HloComputation *c = ins->parent;
  unsigned char *role = calloc((size_t)c->ninstrs + 1, 1);
  int32_t *dist = malloc(((size_t)c->ninstrs + 1) * sizeof *dist);
  const HloInstr **queue = malloc(((size_t)c->ninstrs + 1) * sizeof *queue);
  if (!role || !dist || !queue) { free(role); free(dist); free(queue); return NULL; }
  int32_t head = 0, tail = 0;
  role[ins->index] = AROUND_KEEP;
  dist[ins->index] = 0;
  queue[tail++] = ins;
  while (head < tail) {
    const HloInstr *u = queue[head++];
    for (int32_t k = 0; k < u->nops; k++) {
      const HloInstr *o = u->ops[k];
      if (role[o->index] != AROUND_NONE) continue;
      if (o->op == HLO_OP_CONSTANT) {
        role[o->index] = AROUND_KEEP;
      } else if (o->op == HLO_OP_PARAMETER || dist[u->index] + 1 > depth) {
        role[o->index] = AROUND_CUT;
      } else {
        role[o->index] = AROUND_KEEP;
        dist[o->index] = dist[u->index] + 1;
        queue[tail++] = o;
      }
    }
  }
  free(dist);
  free(queue);
  return role;
}

/* The text of the sub-module, the cut instructions in parameter order in
 * *cut (malloc'd), or NULL with *why set. */
static char *around_text(const HloModule *m, const HloInstr *ins, int depth, const HloInstr ***cut,
                         int *ncut, const char **why) {
  *why = "out of memory";
  *cut = NULL;
  *ncut = 0;
  unsigned char *role = around_roles(ins, depth);
  if (!role) return NULL;
  char *out = hli_submodule_text(m, ins, role, NULL, cut, ncut, why);
  free(role);
  return out;
}

/* The ROOT tuple u with only the operands keep says (its attributes go: a
 * sharding of all its elements would not fit). */
static void tuple_of(HlcText *b, const HloInstr *u, const unsigned char *keep) {
  hlc_text_printf(b, "  ROOT %%%s = (", u->name);
  const char *sep = "";
  for (int32_t k = 0; k < u->nops; k++) {
    if (!keep[k]) continue;
    hlc_text_puts(b, sep);
    hlp_print_shape(b, k < u->shape.ntuple ? &u->shape.tuple[k] : &u->ops[k]->shape, true);
    sep = ", ";
  }
  hlc_text_puts(b, ") tuple(");
  sep = "";
  for (int32_t k = 0; k < u->nops; k++) {
    if (!keep[k]) continue;
    hlc_text_printf(b, "%s%%%s", sep, u->ops[k]->name);
    sep = ", ";
  }
  hlc_text_puts(b, ")\n");
}

char *hli_submodule_text(const HloModule *m, const HloInstr *ins, const unsigned char *role,
                         const HliSubOpts *so, const HloInstr ***cut, int *ncut,
                         const char **why) {
  *why = "out of memory";
  *cut = NULL;
  *ncut = 0;
  const HloComputation *c = ins->parent;
  char *text = hlp_print_dropping(m, NULL, so ? so->drop : 0);
  const HloInstr **cv = malloc(((size_t)c->ninstrs + 1) * sizeof *cv);
  const HloComputation **called = NULL;
  bool *live = NULL;
  HlcText b = {0};
  char *out = NULL;
  int32_t n = 0, ncalled = 0;
  if (!text || !cv) goto done;
  const char *cb, *ce;
  *why = "cannot find the instruction's computation in the module's canonical text";
  if (!find_block(text, c, &cb, &ce)) goto done;

  /* The computations the kept instructions call, directly or not. */
  for (int32_t i = 0; i < c->ninstrs; i++)
    if (role[i] == AROUND_KEEP) ncalled += c->instrs[i]->ncalled;
  *why = "out of memory";
  if (!(called = malloc(((size_t)ncalled + 1) * sizeof *called))) goto done;
  ncalled = 0;
  for (int32_t i = 0; i < c->ninstrs; i++)
    for (int32_t k = 0; role[i] == AROUND_KEEP && k < c->instrs[i]->ncalled; k++)
      called[ncalled++] = c->instrs[i]->called[k].comp;
  if (!(live = hlp_reachable(m, called, ncalled))) goto done;
  put_header(&b, text);
  hlc_text_put(&b, "\n", 1);
  for (int32_t k = 0; k < m->ncomps; k++) {
    const char *bb, *be;
    if (!live[k] || m->comps[k]->is_entry) continue;
    *why = "cannot find a called computation in the module's canonical text";
    if (!find_block(text, m->comps[k], &bb, &be)) goto done;
    hlc_text_put(&b, "\n", 1);
    hlc_text_put(&b, bb, (size_t)(be - bb));
    hlc_text_put(&b, "\n", 1);
  }

  /* ENTRY: the instructions in their computation's order, each cut value a
   * parameter under its own name (so the kept lines read it unchanged). */
  hlc_text_printf(&b, "\nENTRY %%%s {\n", m->entry->name);
  for (int32_t i = 0; i < c->ninstrs; i++) {
    const HloInstr *u = c->instrs[i];
    const char *after, *shape, *line;
    size_t shape_n;
    if (role[i] == AROUND_NONE) continue;
    *why = "cannot find an instruction in the module's canonical text";
    if (!(after = find_instr(cb, ce, u->name, &line))) goto done;
    const char *iend = instr_end(after, ce);
    if (role[i] == AROUND_CUT) {
      if (u->shape.dtype == HLO_TOKEN) {
        hlc_text_printf(&b, "  %%%s = token[] after-all()\n", u->name);
        continue;
      }
      if (!shape_span(after, iend, u, &shape, &shape_n)) goto done;
      if (so && so->lit && so->lit[i]) {
        hlc_text_printf(&b, "  %%%s = %.*s constant(%s)\n", u->name, (int)shape_n, shape,
                        so->lit[i]);
        continue;
      }
      hlc_text_printf(&b, "  %%%s = %.*s parameter(%d)\n", u->name, (int)shape_n, shape, (int)n);
      cv[n++] = u;
      continue;
    }
    if (u == ins && so && so->root_ops && u->op == HLO_OP_TUPLE) {
      tuple_of(&b, u, so->root_ops);
      continue;
    }
    hlc_text_printf(&b, "  %s%%%s = ", u == ins ? "ROOT " : "", u->name);
    drop_control(&b, after, (size_t)(iend - after));
    hlc_text_puts(&b, "\n");
  }
  hlc_text_puts(&b, "}\n");
  if (!b.oom) {
    out = b.p;
    b.p = NULL;
    *cut = cv;
    *ncut = n;
    cv = NULL;
  } else {
    *why = "out of memory";
  }
done:
  hlc_text_free(&b);
  free(live);
  free(called);
  free(cv);
  free(text);
  return out;
}

HloStatus hlo_module_extract_around(HloCtx *ctx, const HloModule *m, const HloInstruction *i,
                                    int depth, HloModule **out, const HloInstruction ***cut,
                                    int *ncut) {
  if (!ctx || !m || !i || !out) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  if (cut) *cut = NULL;
  if (ncut) *ncut = 0;
  const HloInstr *ins = (const HloInstr *)i;
  const char *fn = m->filename ? m->filename : "<input>";
  if (depth < 0)
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "cannot extract %s: depth %d is negative",
                        ins->name, depth);
  if (ins->op == HLO_OP_PARAMETER || ins->op == HLO_OP_CONSTANT)
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT,
                        "%s:%d: cannot extract %s (%s): a parameter or constant computes nothing",
                        fn, ins->line, ins->name, hlp_opcode_name(ins->op));
  const HloInstr **cv;
  int n;
  const char *why;
  char *text = around_text(m, ins, depth, &cv, &n, &why);
  if (!text)
    return hli_api_fail(ctx, HLO_ERROR, "%s:%d: cannot extract %s (%s): %s", fn, ins->line,
                        ins->name, hlp_opcode_name(ins->op), why);
  char fname[512];
  snprintf(fname, sizeof fname, "%s (extracted from %s)", ins->name, fn);
  HloStatus st = hlo_module_parse(ctx, text, strlen(text), fname, out);
  free(text);
  if (st == HLO_OK && cut) *cut = (const HloInstruction **)cv;
  else free(cv);
  if (st == HLO_OK && ncut) *ncut = n;
  return st;
}
