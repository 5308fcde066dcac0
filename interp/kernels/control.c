/* control.c: control flow and the opcodes that run called computations:
 * call, fusion (every kind), map, while, conditional, scan, the async
 * wrappers (async-start/-update/-done, copy-start/-done) and the
 * identities (opt-barrier, domain). Tokens (after-all, add-dependency) are
 * the executor's: it aliases them without a kernel.
 *
 * Computations run through hli_call; the executor caches their plans, so a
 * call is cheap and a while loop allocates nothing per iteration beyond the
 * values its body produces. Results come back as new values and are copied
 * into the preallocated output once per instruction (adopt()), never per
 * iteration.
 *
 * Asynchronous pairs run synchronously: async-start runs the wrapped
 * computation at once and async-done hands out its result; the observable
 * values are those XLA defines. */
#include "interp/kernels/control.h"
#include "interp/kernels/register.h"
#include <stdlib.h>
#include <string.h>

/* The first called computation of a role, or NULL. */
static const HloComputation *called(const HloInstr *ins, HloCallRole role) {
  for (int32_t i = 0; i < ins->ncalled; i++)
    if (ins->called[i].role == role) return ins->called[i].comp;
  return NULL;
}

/* Give out the value res (a reference the caller owns) as the instruction's
 * result: copied into the executor's output value, then released. */
static int adopt(HliExec *x, HliValue *out, HliValue *res) {
  hli_value_copy_into(out, res);
  hli_value_unref(x, res);
  return 0;
}

/* Arguments of ins match the parameters of c (count and shapes)? */
static int check_args(HliExec *x, const HloInstr *ins, const HloComputation *c,
                      HloInstr *const *ops, int32_t n, const char *what) {
  if (!c) return hli_fail(x, ins, "missing %s computation", what);
  if (c->nparams != n)
    return hli_fail(x, ins, "%s computation %s takes %d parameters, given %d", what, c->name,
                    c->nparams, n);
  for (int32_t i = 0; i < n; i++)
    if (c->params[i] && !hlp_shape_compatible(&c->params[i]->shape, &ops[i]->shape))
      return hli_fail(x, ins, "operand %d does not match parameter %d of %s", i, i, c->name);
  return 0;
}

static int check_result(HliExec *x, const HloInstr *ins, const HloComputation *c,
                        const HloShape *want) {
  if (c->root && !hlp_shape_compatible(&c->root->shape, want))
    return hli_fail(x, ins, "computation %s returns a different shape than the instruction's",
                    c->name);
  return 0;
}

/* ---- call, fusion ------------------------------------------------------- */

static int check_call(HliExec *x, const HloInstr *ins) {
  const HloComputation *c = called(ins, ins->op == HLO_OP_FUSION ? HLO_CALL_CALLS : HLO_CALL_TO_APPLY);
  if (check_args(x, ins, c, ins->ops, ins->nops, ins->op == HLO_OP_FUSION ? "fused" : "called"))
    return -1;
  return check_result(x, ins, c, &ins->shape);
}

static int run_call(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HloComputation *c = called(ins, ins->op == HLO_OP_FUSION ? HLO_CALL_CALLS : HLO_CALL_TO_APPLY);
  if (!c) return hli_fail(x, ins, "missing called computation");
  HliValue *res;
  if (hli_call(x, c, in, &res)) return -1;
  return adopt(x, out, res);
}

/* ---- map ---------------------------------------------------------------- */

/* Typed loops for `map` over the common binary reducers (recognised with
 * hli_match_binop), so elementwise maps do not call per element. */
#define MAP_INT_TYPES(X) X(S8, int8_t) X(S16, int16_t) X(S32, int32_t) X(S64, int64_t) \
  X(U8, uint8_t) X(U16, uint16_t) X(U32, uint32_t) X(U64, uint64_t)
#define MAP_FLOAT_TYPES(X) X(F32, float) X(F64, double)

#define DEF_MAP_INT(ID, T)                                                              \
  static bool map_##ID(HliBinop op, const void *pa, const void *pb, void *po, int64_t n) { \
    const T *a = pa, *b = pb; T *o = po;                                                \
    switch (op) {                                                                       \
    case HLI_BINOP_ADD: for (int64_t i = 0; i < n; i++) o[i] = (T)((uint64_t)a[i] + (uint64_t)b[i]); return true; \
    case HLI_BINOP_MUL: for (int64_t i = 0; i < n; i++) o[i] = (T)((uint64_t)a[i] * (uint64_t)b[i]); return true; \
    case HLI_BINOP_MAX: for (int64_t i = 0; i < n; i++) o[i] = a[i] > b[i] ? a[i] : b[i]; return true; \
    case HLI_BINOP_MIN: for (int64_t i = 0; i < n; i++) o[i] = a[i] < b[i] ? a[i] : b[i]; return true; \
    case HLI_BINOP_AND: for (int64_t i = 0; i < n; i++) o[i] = a[i] & b[i]; return true; \
    case HLI_BINOP_OR: for (int64_t i = 0; i < n; i++) o[i] = a[i] | b[i]; return true; \
    case HLI_BINOP_XOR: for (int64_t i = 0; i < n; i++) o[i] = a[i] ^ b[i]; return true; \
    default: return false;                                                              \
    }                                                                                   \
  }
/* Floats: maximum/minimum propagate NaN (XLA's semantics). */
#define DEF_MAP_FLOAT(ID, T)                                                            \
  static bool map_##ID(HliBinop op, const void *pa, const void *pb, void *po, int64_t n) { \
    const T *a = pa, *b = pb; T *o = po;                                                \
    switch (op) {                                                                       \
    case HLI_BINOP_ADD: for (int64_t i = 0; i < n; i++) o[i] = a[i] + b[i]; return true; \
    case HLI_BINOP_MUL: for (int64_t i = 0; i < n; i++) o[i] = a[i] * b[i]; return true; \
    case HLI_BINOP_MAX: for (int64_t i = 0; i < n; i++) o[i] = (a[i] > b[i] || a[i] != a[i]) ? a[i] : b[i]; return true; \
    case HLI_BINOP_MIN: for (int64_t i = 0; i < n; i++) o[i] = (a[i] < b[i] || a[i] != a[i]) ? a[i] : b[i]; return true; \
    default: return false;                                                              \
    }                                                                                   \
  }
MAP_INT_TYPES(DEF_MAP_INT)
MAP_FLOAT_TYPES(DEF_MAP_FLOAT)

static bool map_fast(HliBinop op, HloDtype t, const void *a, const void *b, void *o, int64_t n) {
  switch (t) {
#define CASE_MAP(ID, T) case HLO_##ID: return map_##ID(op, a, b, o, n);
    MAP_INT_TYPES(CASE_MAP)
    MAP_FLOAT_TYPES(CASE_MAP)
#undef CASE_MAP
  default: return false;
  }
}

static int check_map(HliExec *x, const HloInstr *ins) {
  const HloComputation *c = called(ins, HLO_CALL_TO_APPLY);
  if (!c) return hli_fail(x, ins, "missing to_apply computation");
  if (c->nparams != ins->nops)
    return hli_fail(x, ins, "computation %s takes %d parameters, map has %d operands", c->name,
                    c->nparams, ins->nops);
  for (int32_t i = 0; i < ins->nops; i++) {
    const HloShape *s = &ins->ops[i]->shape;
    if (s->rank != ins->shape.rank) return hli_fail(x, ins, "operand %d rank differs from the result", i);
    for (int32_t d = 0; d < s->rank; d++)
      if (s->dims[d] != ins->shape.dims[d]) return hli_fail(x, ins, "operand %d dimensions differ from the result", i);
    const HloShape *p = c->params[i] ? &c->params[i]->shape : NULL;
    if (!p || p->rank != 0 || p->dtype != s->dtype)
      return hli_fail(x, ins, "parameter %d of %s must be a %s scalar", i, c->name, hlc_dtype_name(s->dtype));
  }
  if (!c->root || c->root->shape.rank != 0 || c->root->shape.dtype != ins->shape.dtype)
    return hli_fail(x, ins, "computation %s must return a %s scalar", c->name, hlc_dtype_name(ins->shape.dtype));
  if (ins->has_dimensions)
    for (int32_t i = 0; i < ins->dimensions.n; i++)
      if (ins->dimensions.v[i] != i)
        return hli_unsupported(x, ins, "map dimensions other than {0, 1, ..., rank-1}");
  return 0;
}

static int run_map(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_map(x, ins)) return -1;
  const HloComputation *c = called(ins, HLO_CALL_TO_APPLY);
  int64_t n = out->nelem;
  if (n == 0) return 0;
  if (ins->nops == 2 && in[0]->dtype == out->dtype && in[1]->dtype == out->dtype) {
    HliBinop op = hli_match_binop(c);
    if (op == HLI_BINOP_SELECT_RHS) { memcpy(out->data, in[1]->data, out->nbytes); return 0; }
    /* A reducer written with its parameters swapped (p1 OP p0) is the same
     * for every commutative op hli_match_binop reports. */
    if (op != HLI_BINOP_NONE && map_fast(op, out->dtype, in[0]->data, in[1]->data, out->data, n))
      return 0;
  }
  /* General case: one call per element, through reused scalar arguments. */
  HliValue *args[64] = {0};
  int32_t na = ins->nops;
  if (na > 64) return hli_unsupported(x, ins, "map with more than 64 operands");
  size_t osz = hlc_dtype_size(out->dtype);
  int rc = 0;
  for (int32_t k = 0; k < na && !rc; k++)
    if (!(args[k] = hli_value_new(x, &c->params[k]->shape))) rc = hli_fail_nomem(x, ins, "out of memory");
  for (int64_t i = 0; i < n && !rc; i++) {
    for (int32_t k = 0; k < na && !rc; k++) {
      /* The computation may have kept a reference to an argument (e.g. it
       * returned its parameter): give it a fresh one then. */
      if (args[k]->refs > 1) {
        hli_value_unref(x, args[k]);
        if (!(args[k] = hli_value_new(x, &c->params[k]->shape))) {
          rc = hli_fail_nomem(x, ins, "out of memory");
          break;
        }
      }
      size_t es = hlc_dtype_size(in[k]->dtype);
      memcpy(args[k]->data, (const char *)in[k]->data + (size_t)i * es, es);
    }
    if (rc) break;
    HliValue *r;
    if (hli_call(x, c, args, &r)) { rc = -1; break; }
    memcpy((char *)out->data + (size_t)i * osz, r->data, osz);
    hli_value_unref(x, r);
  }
  for (int32_t k = 0; k < na; k++) hli_value_unref(x, args[k]);
  return rc;
}

/* ---- while -------------------------------------------------------------- */

static int check_while(HliExec *x, const HloInstr *ins) {
  const HloComputation *cond = called(ins, HLO_CALL_CONDITION), *body = called(ins, HLO_CALL_BODY);
  if (check_args(x, ins, cond, ins->ops, 1, "condition") ||
      check_args(x, ins, body, ins->ops, 1, "body"))
    return -1;
  if (!cond->root || cond->root->shape.dtype != HLO_PRED || cond->root->shape.rank != 0)
    return hli_fail(x, ins, "condition %s must return pred[]", cond->name);
  return check_result(x, ins, body, &ins->shape);
}

static int run_while(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HloComputation *cond = called(ins, HLO_CALL_CONDITION), *body = called(ins, HLO_CALL_BODY);
  if (!cond || !body) return hli_fail(x, ins, "missing condition or body");
  HliValue *state = hli_value_ref(in[0]);
  for (int64_t it = 0;; it++) {
    HliValue *p;
    if (hli_call(x, cond, &state, &p)) { hli_value_unref(x, state); return -1; }
    bool go = *(const uint8_t *)p->data != 0;
    hli_value_unref(x, p);
    if (!go) break;
    /* --max-iterations and --timeout (limits.c) */
    if (hli_loop_iteration(x, ins, it)) { hli_value_unref(x, state); return -1; }
    /* The body takes over the state: a value it updates in place
     * (dynamic-update-slice, scatter) is then referenced only there. */
    HliValue *next;
    if (hli_call_donate(x, body, &state, &next)) return -1;
    state = next;
  }
  return adopt(x, out, state);
}

/* ---- conditional -------------------------------------------------------- */

/* Branch computations in order; n gets their count. */
static int branches(const HloInstr *ins, const HloComputation **br, int32_t max) {
  int32_t n = 0;
  for (int32_t i = 0; i < ins->ncalled; i++)
    if (ins->called[i].role == HLO_CALL_BRANCH && n < max) br[n++] = ins->called[i].comp;
  return n;
}

enum { MAX_BRANCHES = 1024 };

static int check_conditional(HliExec *x, const HloInstr *ins) {
  const HloShape *sel = &ins->ops[0]->shape;
  if (sel->rank != 0 || (sel->dtype != HLO_PRED && sel->dtype != HLO_S32))
    return hli_fail(x, ins, "the selector must be pred[] or s32[]");
  const HloComputation *br[MAX_BRANCHES];
  int32_t n;
  if (sel->dtype == HLO_PRED) {
    br[0] = called(ins, HLO_CALL_TRUE);
    br[1] = called(ins, HLO_CALL_FALSE);
    if (!br[0] || !br[1]) return hli_fail(x, ins, "missing true_computation or false_computation");
    n = 2;
  } else {
    n = branches(ins, br, MAX_BRANCHES);
    if (n == 0) return hli_fail(x, ins, "missing branch_computations");
  }
  if (ins->nops != n + 1)
    return hli_fail(x, ins, "%d branches need %d operands after the selector, got %d", n, n,
                    ins->nops - 1);
  for (int32_t i = 0; i < n; i++)
    if (check_args(x, ins, br[i], ins->ops + 1 + i, 1, "branch") ||
        check_result(x, ins, br[i], &ins->shape))
      return -1;
  return 0;
}

static int run_conditional(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HloComputation *c;
  HliValue *arg;
  if (in[0]->dtype == HLO_PRED) {
    bool p = *(const uint8_t *)in[0]->data != 0;
    c = called(ins, p ? HLO_CALL_TRUE : HLO_CALL_FALSE);
    arg = in[p ? 1 : 2];
  } else {
    const HloComputation *br[MAX_BRANCHES];
    int32_t n = branches(ins, br, MAX_BRANCHES);
    if (n == 0) return hli_fail(x, ins, "missing branch_computations");
    int32_t idx = *(const int32_t *)in[0]->data;
    if (idx < 0 || idx >= n) idx = n - 1;   /* out of range: the last branch */
    c = br[idx];
    arg = in[1 + idx];
  }
  if (!c) return hli_fail(x, ins, "missing branch computation");
  HliValue *res;
  if (hli_call(x, c, &arg, &res)) return -1;
  return adopt(x, out, res);
}

/* ---- scan --------------------------------------------------------------- */

/* The k-th value of a result that is a tuple, or the value itself when the
 * shape is not a tuple (one output or one carry). */
static HliValue *part(HliValue *v, int32_t k) { return v->dtype == HLO_TUPLE ? v->tuple[k] : v; }
static const HloShape *shape_part(const HloShape *s, int32_t k) {
  return s->dtype == HLO_TUPLE ? &s->tuple[k] : s;
}

static int check_scan(HliExec *x, const HloInstr *ins) {
  const HloComputation *c = called(ins, HLO_CALL_TO_APPLY);
  int64_t nc = ins->num_carries;
  int32_t ni = ins->nops - (int32_t)nc;
  int32_t nparts = ins->shape.dtype == HLO_TUPLE ? ins->shape.ntuple : 1;
  int32_t no = nparts - (int32_t)nc;
  if (nc < 0 || ni < 1 || no < 0) return hli_fail(x, ins, "num_carries=%lld does not fit %d operands", (long long)nc, ins->nops);
  if (ins->dimensions.n != 1) return hli_fail(x, ins, "scan takes exactly one dimension");
  int64_t d = ins->dimensions.v[0];
  int64_t len = -1;
  for (int32_t i = 0; i < ni; i++) {
    const HloShape *s = &ins->ops[i]->shape;
    if (d < 0 || d >= s->rank) return hli_fail(x, ins, "scan dimension %lld out of range for input %d", (long long)d, i);
    if (len >= 0 && s->dims[d] != len) return hli_fail(x, ins, "inputs differ in the scan dimension");
    len = s->dims[d];
    if (s->dynamic) return hli_unsupported(x, ins, "scan over dynamic dimensions");
  }
  if (!c) return hli_fail(x, ins, "missing to_apply computation");
  if (c->nparams != ins->nops)
    return hli_fail(x, ins, "computation %s takes %d parameters, scan has %d operands", c->name, c->nparams, ins->nops);
  for (int32_t i = 0; i < ins->nops; i++)
    if (!c->params[i]) return hli_fail(x, ins, "computation %s lacks parameter %d", c->name, i);
  for (int32_t i = 0; i < ni; i++) {
    const HloShape *s = &ins->ops[i]->shape, *p = &c->params[i]->shape;
    if (p->rank != s->rank - 1 || p->dtype != s->dtype)
      return hli_fail(x, ins, "parameter %d of %s must be input %d without the scan dimension", i, c->name, i);
  }
  for (int32_t i = 0; i < no; i++) {
    const HloShape *o = shape_part(&ins->shape, i);
    if (o->dtype == HLO_TUPLE || d >= o->rank || o->dims[d] != len)
      return hli_fail(x, ins, "output %d must have the scan dimension of length %lld", i, (long long)len);
  }
  if (!c->root) return hli_fail(x, ins, "computation %s has no root", c->name);
  int32_t rparts = c->root->shape.dtype == HLO_TUPLE ? c->root->shape.ntuple : 1;
  if (rparts != nparts) return hli_fail(x, ins, "computation %s returns %d values, scan needs %d", c->name, rparts, nparts);
  return 0;
}

/* Copy the slab at index idx of dimension d between a full array and a
 * slice without that dimension (to_slice: full -> slice). */
static void slab_copy(HliValue *full, int64_t d, int64_t idx, HliValue *slice, bool to_slice) {
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < d; i++) outer *= full->dims[i];
  for (int32_t i = (int32_t)d + 1; i < full->rank; i++) inner *= full->dims[i];
  size_t es = hlc_dtype_size(full->dtype), row = (size_t)inner * es;
  int64_t len = full->dims[d];
  for (int64_t o = 0; o < outer; o++) {
    char *f = (char *)full->data + ((size_t)(o * len + idx) * inner) * es;
    char *s = (char *)slice->data + (size_t)o * row;
    if (to_slice) memcpy(s, f, row);
    else memcpy(f, s, row);
  }
}

static int run_scan(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_scan(x, ins)) return -1;
  const HloComputation *c = called(ins, HLO_CALL_TO_APPLY);
  int32_t nc = (int32_t)ins->num_carries, ni = ins->nops - nc;
  int32_t no = (out->dtype == HLO_TUPLE ? out->ntuple : 1) - nc;
  int64_t d = ins->dimensions.v[0], len = in[0]->dims[d];
  HliValue **args = calloc((size_t)ins->nops, sizeof *args);
  if (!args) return hli_fail_nomem(x, ins, "out of memory");
  int rc = 0;
  for (int32_t i = 0; i < ni && !rc; i++)
    if (!(args[i] = hli_value_new(x, &c->params[i]->shape))) rc = hli_fail_nomem(x, ins, "out of memory");
  for (int32_t k = 0; k < nc; k++) args[ni + k] = hli_value_ref(in[ni + k]);
  for (int64_t step = 0; step < len && !rc; step++) {
    int64_t idx = ins->is_reverse ? len - 1 - step : step;
    for (int32_t i = 0; i < ni && !rc; i++) {
      if (args[i]->refs > 1) {   /* kept by a carry of the last step */
        hli_value_unref(x, args[i]);
        if (!(args[i] = hli_value_new(x, &c->params[i]->shape))) { rc = hli_fail_nomem(x, ins, "out of memory"); break; }
      }
      slab_copy(in[i], d, idx, args[i], true);
    }
    if (rc) break;
    HliValue *r;
    if (hli_call(x, c, args, &r)) { rc = -1; break; }
    for (int32_t o = 0; o < no; o++) slab_copy(part(out, o), d, idx, part(r, o), false);
    for (int32_t k = 0; k < nc; k++) {
      hli_value_unref(x, args[ni + k]);
      args[ni + k] = hli_value_ref(part(r, no + k));
    }
    hli_value_unref(x, r);
  }
  if (!rc)
    for (int32_t k = 0; k < nc; k++) hli_value_copy_into(part(out, no + k), args[ni + k]);
  for (int32_t i = 0; i < ins->nops; i++) hli_value_unref(x, args[i]);
  free(args);
  return rc;
}

/* ---- async wrappers ----------------------------------------------------- */

/* async-start: ((operands...), result, state...). The wrapped computation
 * runs now; the state elements (u32/s32 contexts) are zero. */
static int check_async_start(HliExec *x, const HloInstr *ins) {
  const HloComputation *c = called(ins, HLO_CALL_CALLS);
  const HloShape *s = &ins->shape;
  if (s->dtype != HLO_TUPLE || s->ntuple < 2 || s->tuple[0].dtype != HLO_TUPLE)
    return hli_fail(x, ins, "async-start's shape must be ((operands...), result, state...)");
  if (check_args(x, ins, c, ins->ops, ins->nops, "wrapped")) return -1;
  return check_result(x, ins, c, &s->tuple[1]);
}

static void zero_value(HliValue *v) {
  if (v->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < v->ntuple; i++) zero_value(v->tuple[i]);
    return;
  }
  if (v->nbytes) memset(v->data, 0, v->nbytes);
}

static int run_async_start(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HloComputation *c = called(ins, HLO_CALL_CALLS);
  if (!c) return hli_fail(x, ins, "missing wrapped computation");
  HliValue *ops = out->tuple[0];
  for (int32_t i = 0; i < ins->nops && i < ops->ntuple; i++) hli_value_copy_into(ops->tuple[i], in[i]);
  for (int32_t i = 2; i < out->ntuple; i++) zero_value(out->tuple[i]);
  HliValue *res;
  if (hli_call(x, c, in, &res)) return -1;
  return adopt(x, out->tuple[1], res);
}

/* async-update: the same value, unchanged. */
static int run_identity(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)x; (void)ins;
  hli_value_copy_into(out, in[0]);
  return 0;
}

static int check_identity(HliExec *x, const HloInstr *ins) {
  if (ins->nops < 1 || !hlp_shape_compatible(&ins->ops[0]->shape, &ins->shape))
    return hli_fail(x, ins, "result shape must equal the operand's");
  return 0;
}

/* async-done, copy-done and the collective *-done with a tuple operand:
 * element 1 of the start's tuple (for copy-start: element 0, the copy). */
static int check_done(HliExec *x, const HloInstr *ins) {
  const HloShape *s = &ins->ops[0]->shape;
  int32_t k = ins->op == HLO_OP_COPY_DONE ? 0 : 1;
  if (s->dtype != HLO_TUPLE || s->ntuple <= k || !hlp_shape_compatible(&s->tuple[k], &ins->shape))
    return hli_fail(x, ins, "operand must be a tuple whose element %d has the result's shape", k);
  return 0;
}

static int run_done(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)x;
  hli_value_copy_into(out, in[0]->tuple[ins->op == HLO_OP_COPY_DONE ? 0 : 1]);
  return 0;
}

/* copy-start: (destination copy, source, u32[] context). */
static int check_copy_start(HliExec *x, const HloInstr *ins) {
  const HloShape *s = &ins->shape, *o = &ins->ops[0]->shape;
  if (s->dtype != HLO_TUPLE || s->ntuple < 2 || !hlp_shape_compatible(&s->tuple[0], o) ||
      !hlp_shape_compatible(&s->tuple[1], o))
    return hli_fail(x, ins, "copy-start's shape must be (operand, operand, u32[])");
  return 0;
}

static int run_copy_start(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)x; (void)ins;
  hli_value_copy_into(out->tuple[0], in[0]);
  hli_value_copy_into(out->tuple[1], in[0]);
  for (int32_t i = 2; i < out->ntuple; i++) zero_value(out->tuple[i]);
  return 0;
}

void hlk_register_flow(HliOpTable t) {
  t[HLO_OP_CALL] = (HliOpEntry){run_call, check_call};
  t[HLO_OP_FUSION] = (HliOpEntry){run_call, check_call};
  t[HLO_OP_MAP] = (HliOpEntry){run_map, check_map};
  t[HLO_OP_WHILE] = (HliOpEntry){run_while, check_while};
  t[HLO_OP_CONDITIONAL] = (HliOpEntry){run_conditional, check_conditional};
  t[HLO_OP_SCAN] = (HliOpEntry){run_scan, check_scan};
  t[HLO_OP_ASYNC_START] = (HliOpEntry){run_async_start, check_async_start};
  t[HLO_OP_ASYNC_UPDATE] = (HliOpEntry){run_identity, check_identity};
  t[HLO_OP_ASYNC_DONE] = (HliOpEntry){run_done, check_done};
  t[HLO_OP_COPY_START] = (HliOpEntry){run_copy_start, check_copy_start};
  t[HLO_OP_COPY_DONE] = (HliOpEntry){run_done, check_done};
  /* after-all and add-dependency have no kernel on purpose: the executor
   * makes a token and aliases operand 0 without copying. */
  t[HLO_OP_OPT_BARRIER] = (HliOpEntry){run_identity, check_identity};
  t[HLO_OP_DOMAIN] = (HliOpEntry){run_identity, check_identity};
}
