/* reduce_golden.c: the goldens of --reduce mismatch.
 *
 * A candidate's result is compared (--expect in its child run) with the
 * golden of its ROOT. There are at most two bases: the first divergence
 * (with --reference REF, --reference-custom-call or --reference-precision
 * f64: the module's first instruction whose value differs from the
 * reference's, its golden the reference's value there), and ENTRY's ROOT
 * (its golden --expect's file or the reference's result). A candidate
 * whose ROOT is a base has its golden; one whose ROOT is a tuple with
 * fewer operands than the base's (outputs the reducer dropped) has the
 * base's elements of those operands, matched by name in order; one whose
 * ROOT is an operand of a base tuple (the one output left) has that
 * element. With --expect alone there is no golden for any instruction but
 * ENTRY's ROOT: the search keeps it (no first divergence).
 *
 * The reference's values carried in f64 are narrowed to the module's
 * types through their literal text (as if written as a golden file).
 *
 * Not here: running candidates, the search (reduce.c, interp/reduce.c). */
#include "cli.h"
#include "cli/reduce_golden.h"
#include <stdlib.h>
#include <string.h>

/* ENTRY's ROOT of m. */
const HloInstruction *golden_entry_root(const HloModule *m) {
  for (int c = 0; c < hlo_module_num_computations(m); c++) {
    if (!(hlo_module_computation_flags(m, c) & HLO_COMPUTATION_ENTRY)) continue;
    for (int k = 0; k < hlo_module_computation_size(m, c); k++)
      if (hlo_instruction_is_root(hlo_module_instruction(m, c, k)))
        return hlo_module_instruction(m, c, k);
  }
  return NULL;
}

static bool is_tuple(const HloInstruction *i) {
  return strcmp(hlo_instruction_opcode(i), "tuple") == 0;
}

/* Base k: instruction i of the original module, its golden value v (owned
 * now) and/or file (copied). */
static void set_base(Goldens *g, int k, const HloInstruction *i, HloBuffer *v, const char *file) {
  GoldenBase *b = &g->b[k];
  b->name = xprintf("%s", hlo_instruction_name(i));
  b->nops = is_tuple(i) ? hlo_instruction_num_operands(i) : 0;
  b->ops = xmalloc(((size_t)b->nops + 1) * sizeof *b->ops);
  for (int j = 0; j < b->nops; j++)
    b->ops[j] = xprintf("%s", hlo_instruction_name(hlo_instruction_operand(i, j)));
  b->value = v;
  b->file = file ? xprintf("%s", file) : NULL;
  if (g->n <= k) g->n = k + 1;
}

/* v in the types of like (the reference's f64 values as the module's f32
 * ones...): v's literal text with like's shape, read back as like's type
 * (an f64 printed exactly rounds once, to nearest); through a file in dir.
 * NULL with the diagnostics in ctx. */
static HloBuffer *narrowed(HloCtx *ctx, const HloBuffer *v, const HloBuffer *like, const char *dir) {
  int n = hlo_buffer_tuple_size(like);
  if (n > 0) {
    if (hlo_buffer_tuple_size(v) != n) return NULL;
    HloBuffer **e = xmalloc((size_t)n * sizeof *e);
    HloBuffer *out = NULL;
    int got = 0;
    for (; got < n; got++) {
      HloBuffer *ve = NULL, *le = NULL;
      bool ok = hlo_buffer_tuple_element(ctx, v, got, &ve) == HLO_OK &&
                hlo_buffer_tuple_element(ctx, like, got, &le) == HLO_OK;
      e[got] = ok ? narrowed(ctx, ve, le, dir) : NULL;
      hlo_buffer_free(ve);
      hlo_buffer_free(le);
      if (!e[got]) break;
    }
    if (got == n && hlo_buffer_new_tuple(ctx, e, n, &out) != HLO_OK) out = NULL;
    for (int k = 0; k < got; k++) hlo_buffer_free(e[k]);
    free(e);
    return out;
  }
  char *text = NULL, *vs = NULL, *ls = NULL, *p = NULL;
  size_t len = 0;
  HloBuffer *out = NULL;
  if (hlo_buffer_encode(ctx, v, "txt", &text, &len) != HLO_OK ||
      hlo_buffer_shape_text(ctx, v, &vs) != HLO_OK || hlo_buffer_shape_text(ctx, like, &ls) != HLO_OK)
    goto out;
  size_t vn = strlen(vs);
  if (len < vn || strncmp(text, vs, vn) != 0) goto out;   /* not "SHAPE ..." */
  p = xprintf("%s/wide.txt", dir);
  FILE *f = fopen(p, "w");
  bool ok = f && fprintf(f, "%s%.*s", ls, (int)(len - vn), text + vn) >= 0;
  if (f && fclose(f) != 0) ok = false;
  if (ok && hlo_load_like(ctx, like, p, &out) != HLO_OK) out = NULL;
out:
  hlo_free(text);
  hlo_free(vs);
  hlo_free(ls);
  free(p);
  return out;
}

int goldens_reference(HloCtx *ctx, const Opts *o, const HloModule *m, HloBuffer *const *in, int np,
                      double timeout, const char *dir, Goldens *g) {
  HloModule *ref = NULL;
  HloCtx *rctx = NULL;
  HloDivergence *d = NULL;
  int rc = -1;
  if (o->reference && hlo_module_load(ctx, o->reference, &ref) != HLO_OK) {
    fail_with(ctx, "--reduce mismatch: cannot read the reference");
    return -1;
  }
  const HloModule *rm = ref ? ref : m;
  const char *rname = o->reference ? o->reference : o->module;
  if (hlo_module_num_params(rm) != np) {
    fprintf(stderr, "%s: error: --reduce mismatch: the reference %s takes %d parameters, the "
            "module %s takes %d\n", prog, rname, hlo_module_num_params(rm), o->module, np);
    goto out;
  }
  if (o->nref_bind && !(rctx = context_like(o, o->threads, true))) goto out;
  HloCompareOptions co;
  compare_options(o, &co);
  HloRunOptions ro = {.struct_size = sizeof ro, .max_iterations = o->max_iterations,
                      .timeout = timeout, .no_fusion = 1, .replicas = 1, .partitions = 1};
  HloDivergenceOptions dopt = {.struct_size = sizeof dopt, .compare = &co, .run = &ro,
                               .reference_ctx = rctx,
                               .reference_precision = o->ref_f64 ? HLO_TYPE_F64 : 0};
  if (hlo_compare_runs(ctx, m, rm, in, np, &dopt, &d) != HLO_OK) {
    fprintf(stderr, "%s: error: --reduce mismatch: %s:\n", prog,
            !d || !d->failed_side ? "cannot compare the module with the reference"
            : d->failed_side == 2 ? "the reference's run failed" : "the module's run failed");
    if (rctx && d && d->failed_side == 2) flush_diags(rctx);
    fail_with(ctx, "--reduce");
    goto out;
  }
  /* The reference's values in the module's types (f64: narrowed). */
  HloBuffer *res = o->ref_f64 ? narrowed(ctx, d->reference_result, d->result, dir)
                              : d->reference_result;
  if (!res) {
    fail_with(ctx, "--reduce mismatch: the f64 reference's result in the module's types");
    goto out;
  }
  if (!o->ref_f64) d->reference_result = NULL;   /* the base owns it now */
  set_base(g, 1, golden_entry_root(m), res, NULL);
  if (d->found && d->reference_value && d->value) {
    HloBuffer *v = o->ref_f64 ? narrowed(ctx, d->reference_value, d->value, dir)
                              : d->reference_value;
    if (!v) {
      fail_with(ctx, "--reduce mismatch: the f64 reference's value in the module's types");
      goto out;
    }
    if (!o->ref_f64) d->reference_value = NULL;
    set_base(g, 0, (const HloInstruction *)d->instruction, v, NULL);
    g->found = true;
    g->run = d->iteration >= 0 ? d->iteration : d->call >= 0 ? d->call : 0;
  }
  rc = 0;
out:
  hlo_divergence_free(d);
  hlo_ctx_free(rctx);
  hlo_module_free(ref);
  return rc;
}

int goldens_expect(HloCtx *ctx, const Opts *o, const HloModule *m, HloBuffer *const *in, int np,
                   double timeout, Goldens *g) {
  const HloInstruction *root = golden_entry_root(m);
  HloBuffer *want = NULL;
  if (is_tuple(root)) {
    /* Its elements are needed one by one: the golden read like the result. */
    HloRunOptions ro = {.struct_size = sizeof ro, .max_iterations = o->max_iterations,
                        .timeout = timeout, .no_fusion = 1, .replicas = 1, .partitions = 1};
    HloBuffer *res = NULL;
    HloExecutable *exe = NULL;
    HloStatus st = hlo_compile(ctx, m, &ro, &exe);
    if (st == HLO_OK) st = hlo_execute(exe, in, np, &res);
    hlo_executable_free(exe);
    if (st != HLO_OK || hlo_load_like(ctx, res, o->expect, &want) != HLO_OK) {
      hlo_buffer_free(res);
      fail_with(ctx, "--reduce mismatch: --expect");
      return -1;
    }
    hlo_buffer_free(res);
  }
  set_base(g, 1, root, want, o->expect);
  return 0;
}

/* Index of name among b's operands from *from on (then past it), -1 none. */
static int op_index(const GoldenBase *b, const char *name, int *from) {
  for (int j = *from; j < b->nops; j++)
    if (!strcmp(b->ops[j], name)) { *from = j + 1; return j; }
  return -1;
}

/* value as a golden file dir/stem.npy (.npz: a tuple); the path. */
static char *save(HloCtx *ctx, const HloBuffer *v, const char *dir, const char *stem) {
  char *p = xprintf("%s/%s.%s", dir, stem, hlo_buffer_tuple_size(v) > 0 ? "npz" : "npy");
  if (hlo_buffer_save(ctx, v, p) == HLO_OK) return p;
  free(p);
  return NULL;
}

/* The golden of cand's result for base b, or NULL when b does not apply. */
static char *golden_of_base(HloCtx *ctx, const GoldenBase *b, const HloInstruction *root,
                            const char *dir, const char *stem, int *kept) {
  const char *name = hlo_instruction_name(root);
  HloBuffer *v = NULL;
  if (!strcmp(name, b->name)) {
    int n = is_tuple(root) ? hlo_instruction_num_operands(root) : 0;
    *kept = n;
    if (!b->nops || n == b->nops)   /* the base itself */
      return b->file ? xprintf("%s", b->file) : b->value ? save(ctx, b->value, dir, stem) : NULL;
    if (!b->value || n > b->nops) return NULL;
    HloBuffer **e = xmalloc(((size_t)n + 1) * sizeof *e);
    int from = 0, got = 0;
    for (int j = 0; j < n; j++) {
      int at = op_index(b, hlo_instruction_name(hlo_instruction_operand(root, j)), &from);
      if (at < 0 || hlo_buffer_tuple_element(ctx, b->value, at, &e[got]) != HLO_OK) break;
      got++;
    }
    if (got == n && hlo_buffer_new_tuple(ctx, e, n, &v) != HLO_OK) v = NULL;
    for (int j = 0; j < got; j++) hlo_buffer_free(e[j]);
    free(e);
  } else {
    int from = 0, at = op_index(b, name, &from);
    if (at < 0 || !b->value) return NULL;
    *kept = 1;
    if (hlo_buffer_tuple_element(ctx, b->value, at, &v) != HLO_OK) v = NULL;
  }
  if (!v) return NULL;
  char *p = save(ctx, v, dir, stem);
  hlo_buffer_free(v);
  return p;
}

char *golden_for(HloCtx *ctx, const Goldens *g, const HloModule *cand, const char *dir,
                 const char *stem, int *base, int *kept) {
  const HloInstruction *root = golden_entry_root(cand);
  int b0, k0;
  if (!base) base = &b0;
  if (!kept) kept = &k0;
  for (int k = 0; root && k < g->n; k++) {
    if (!g->b[k].name) continue;
    char *p = golden_of_base(ctx, &g->b[k], root, dir, stem, kept);
    if (p) {
      *base = k;
      return p;
    }
  }
  hlo_ctx_clear_diagnostics(ctx);
  return NULL;
}

void goldens_free(Goldens *g) {
  for (int k = 0; k < 2; k++) {
    GoldenBase *b = &g->b[k];
    for (int j = 0; j < b->nops; j++) free(b->ops[j]);
    free(b->ops);
    free(b->name);
    free(b->file);
    hlo_buffer_free(b->value);
  }
  memset(g, 0, sizeof *g);
}
