/* ops_parallel.c: interpreter.run_parallel of StableHLO's interpreter tests
 * (stablehlo/reference/InterpreterOps.cpp): programs = [[@f, ...], ...] is
 * a grid of replicas (rows) x partitions (columns); device (i, j) takes the
 * next operands in order, as many as its program has arguments, and the
 * results are every device's results in the same order.
 *
 * HLO has no such op, so a test function holding one runs in three steps
 * (interp/mlir_tests.c): a module computing the operands (the body so far,
 * its root a tuple of them: C->par_pre), the program as a module of its own
 * on hlorun's device grid (replica_count / num_partitions), and the test
 * function itself, where the results are ENTRY parameters. One module runs
 * on every device, so every device must run the same program.
 */
#include <string.h>
#include "stablehlo/lower.h"
#include "stablehlo/ops.h"
#include "stablehlo/mlir.h"

/* The name of symbol token @name (quotes kept: only compared). */
static const char *sym_of(Lower *C, const ShNode *n, size_t *len) {
  *len = n->tok.len - 1;
  return C->src + n->tok.off + 1;
}

/* Check programs = [[@f, ...], ...]: one function on an R x P grid. */
static void grid_of(Lower *C, ShOp *op, const char **callee, size_t *clen, int *r, int *p) {
  ShAttr *a = sh_attr(op, "programs");
  if (!a || !a->val || a->val->kind != SHN_BRACKET)
    sh_fail(C, op->node, "interpreter.run_parallel: expected programs = [[@f, ...], ...]");
  *callee = NULL;
  *r = 0;
  *p = -1;
  for (ShNode *row = a->val->kids; row; row = row->next) {
    if (sh_is(C, row, SH_COMMA, NULL)) continue;
    if (row->kind != SHN_BRACKET) sh_fail(C, row, "interpreter.run_parallel: each row of programs is a list [@f, ...]");
    int cols = 0;
    for (ShNode *s = row->kids; s; s = s->next) {
      if (sh_is(C, s, SH_COMMA, NULL)) continue;
      if (!sh_is(C, s, SH_SYMBOL, NULL)) sh_fail(C, s, "interpreter.run_parallel: programs are function symbols @f");
      size_t n;
      const char *name = sym_of(C, s, &n);
      if (!*callee) {
        *callee = name;
        *clen = n;
      } else if (n != *clen || memcmp(name, *callee, n) != 0) {
        sh_fail(C, s, "interpreter.run_parallel: devices run different programs (@%.*s and @%.*s); hlorun runs one "
                "module on every device", (int)*clen, *callee, (int)n, name);
      }
      cols++;
    }
    if (*p >= 0 && cols != *p)
      sh_fail(C, row, "interpreter.run_parallel: rows of programs differ in length (%d and %d)", *p, cols);
    *p = cols;
    (*r)++;
  }
  if (*r == 0 || *p <= 0) sh_fail(C, op->node, "interpreter.run_parallel: programs is empty");
}

static void no_tokens(Lower *C, ShOp *op, ShType **types, int n, const char *what) {
  for (int i = 0; i < n; i++)
    if (types[i]->kind != SHT_TENSOR)
      sh_fail(C, op->node, "interpreter.run_parallel: %s %d is a %s; only tensors pass between the test and its "
              "devices (infeed/outfeed programs are not supported: hlorun has no host queues)", what, i,
              types[i]->kind == SHT_TOKEN ? "token" : "tuple");
}

int sh_lower_parallel_op(Lower *C, ShOp *op) {
  if (!C->test_mode)
    sh_fail(C, op->node, "interpreter.run_parallel runs only in a test file (one with check ops or // ----- parts)");
  if (!C->checks_here)
    sh_fail(C, op->node, "interpreter.run_parallel runs only in the body of a test function, not in a region or "
            "a called function");
  if (C->par_callee) sh_fail(C, op->node, "interpreter.run_parallel: a second one in one test function is not supported");
  if (sh_attr(op, "infeed"))
    sh_fail(C, op->node, "interpreter.run_parallel with infeed queues is not supported (hlorun has no host infeed)");
  const char *callee;
  size_t clen = 0;
  int r, p;
  grid_of(C, op, &callee, &clen, &r, &p);
  Func *f = sh_find_func(C, callee, clen);
  if (!f) sh_fail(C, op->node, "interpreter.run_parallel: no function @%.*s", (int)clen, callee);
  int nd = r * p;
  if (op->noperands != nd * f->nargs)
    sh_fail(C, op->node, "interpreter.run_parallel: %d operands for %d devices of @%.*s (%d arguments each)",
            op->noperands, nd, (int)clen, callee, f->nargs);
  if (op->nresults % nd != 0)
    sh_fail(C, op->node, "interpreter.run_parallel: %d results do not divide among %d devices", op->nresults, nd);
  ShType *in[SH_MAX_OPERANDS];
  for (int i = 0; i < op->noperands; i++) in[i] = op->operands[i]->type;
  no_tokens(C, op, in, op->noperands, "operand");
  no_tokens(C, op, op->results, op->nresults, "result");
  /* The module computing the operands: what is lowered so far, its root
   * a tuple of them. */
  HlcText *b = &C->par_pre;
  hlc_text_put(b, C->module.p, C->module.n);
  hlc_text_printf(b, "ENTRY run_parallel_operands.%d {\n", ++C->counter);
  hlc_text_put(b, C->cur->body.p, C->cur->body.n);
  hlc_text_printf(b, "  ROOT operands.%d = ", ++C->counter);
  sh_put_type(b, sh_tuple_type(C, in, op->noperands));
  hlc_text_printf(b, " tuple(%s)\n}\n", sh_operand_list(C, op, 0, op->noperands));
  if (b->oom) sh_fail_off(C, 0, "out of memory");
  C->par_callee = sh_strdup(C, callee, clen);
  C->par_replicas = r;
  C->par_partitions = p;
  C->par_nargs = f->nargs;
  C->par_nresults = op->nresults / nd;
  /* The results: parameters of the test function. */
  for (int i = 0; i < op->nresults; i++) {
    const char *name = sh_fmt(C, "run_parallel_result_%d.%d", i, ++C->counter);
    HlcText rhs = {0};
    sh_put_type(&rhs, op->results[i]);
    hlc_text_printf(&rhs, " parameter(%d)", i);
    if (rhs.oom) sh_fail_off(C, 0, "out of memory");
    sh_emit_line(C, name, rhs.p);
    hlc_text_free(&rhs);
    sh_bind_result(C, op, i, name, op->results[i]);
  }
  return 0;
}
