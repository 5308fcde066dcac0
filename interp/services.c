/* services.c: what the executor offers kernels besides values: errors that
 * name the instruction, the device it runs on, the reducer matcher, random bits, memory accounting.
 * Everything tolerates x == NULL (kernel unit tests run kernels without an
 * executor). The executor itself is exec.c/plan.c, the thread pool pool.c. */
#include "interp/exec.h"
#include "interp/comm.h"
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const HliDevice single_device = {0, 0, 1, 1, NULL};

const HliDevice *hli_exec_device(const HliExec *x) {
  return x && x->device ? x->device : &single_device;
}

double hli_exec_deadline(const HliExec *x) { return x ? x->deadline : 0; }
double hli_exec_timeout(const HliExec *x) { return x ? x->timeout : 0; }

/* Last error text when there is no executor (unit tests read it). */
static _Thread_local char last_error[2048];
const char *hli_last_error(void) { return last_error; }

static int vfail(HliExec *x, const HloInstr *ins, HliErrKind kind, const char *prefix,
                 const char *fmt, va_list ap) {
  char msg[768];
  if (x && kind != HLI_ERR_RUNTIME && x->err_kind == HLI_ERR_RUNTIME) x->err_kind = kind;
  vsnprintf(msg, sizeof msg, fmt, ap);
  const HloModule *m = x ? x->module : NULL;
  const char *file = m && m->filename ? m->filename : "<input>";
  if (ins)
    snprintf(last_error, sizeof last_error, "%s:%d: error: in %s (%s): %s%s", file, ins->line,
             ins->name ? ins->name : "?", hlp_opcode_name(ins->op), prefix, msg);
  else
    snprintf(last_error, sizeof last_error, "%s: error: %s%s", file, prefix, msg);
  if (x && x->diags) {
    if (ins && m && m->source && ins->off <= m->source_len)
      /* FILE:LINE:COL: error: in NAME (OPCODE): MSG, the line and a caret. */
      hlc_diag_at(x->diags, HLC_ERROR, file, m->source, m->source_len, ins->off,
                  "in %s (%s): %s%s", ins->name ? ins->name : "?", hlp_opcode_name(ins->op),
                  prefix, msg);
    else if (ins)
      hlc_diag(x->diags, HLC_ERROR, "%s:%d: in %s (%s): %s%s", file, ins->line,
               ins->name ? ins->name : "?", hlp_opcode_name(ins->op), prefix, msg);
    else
      hlc_diag(x->diags, HLC_ERROR, "%s%s", prefix, msg);
  }
  return -1;
}

int hli_fail(HliExec *x, const HloInstr *ins, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vfail(x, ins, HLI_ERR_RUNTIME, "", fmt, ap);
  va_end(ap);
  return r;
}

int hli_fail_nomem(HliExec *x, const HloInstr *ins, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vfail(x, ins, HLI_ERR_NOMEM, "", fmt, ap);
  va_end(ap);
  return r;
}

int hli_unsupported(HliExec *x, const HloInstr *ins, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vfail(x, ins, HLI_ERR_UNSUPPORTED, "not supported: ", fmt, ap);
  va_end(ap);
  return r;
}

int hli_mem_reserve(HliExec *x, size_t n) {
  if (!x) return 0;
  HliMemShare *sh = x->mem_share;
  if (sh) {   /* the devices of a run share one limit (comm.h) */
    size_t used = atomic_fetch_add(&sh->used, n) + n;
    if (sh->limit && used > sh->limit) {
      atomic_fetch_sub(&sh->used, n);
      hli_fail_nomem(x, x->cur, "memory limit of %zu bytes exceeded by the devices of this process "
               "together (%zu in use, %zu more requested)", sh->limit, used - n, n);
      return -1;
    }
    for (size_t p = atomic_load(&sh->peak); used > p && !atomic_compare_exchange_weak(&sh->peak, &p, used);) {}
  } else if (x->mem_limit && x->mem_used + n > x->mem_limit) {
    hli_fail_nomem(x, x->cur, "memory limit of %zu bytes exceeded (%zu in use, %zu more requested)",
             x->mem_limit, x->mem_used, n);
    return -1;
  }
  x->mem_used += n;
  if (x->mem_used > x->mem_peak) x->mem_peak = x->mem_used;
  return 0;
}

void hli_mem_release(HliExec *x, size_t n) {
  if (!x) return;
  size_t k = n < x->mem_used ? n : x->mem_used;
  x->mem_used -= k;
  if (x->mem_share) atomic_fetch_sub(&x->mem_share->used, k);
}

HloStatus hli_exec_status(const HliExec *x) {
  switch (x->err_kind) {
  case HLI_ERR_UNSUPPORTED: return HLO_UNSUPPORTED;
  case HLI_ERR_NOMEM: return HLO_NOMEM;
  default: return HLO_RUNTIME_ERROR;
  }
}

int hli_num_threads(HliExec *x) { return x && x->nthreads > 0 ? x->nthreads : 1; }

uint64_t hli_random_u64(HliExec *x) {
  /* splitmix64: small, fast, and the same on every machine. */
  static _Thread_local uint64_t fallback = 0x9e3779b97f4a7c15ull;
  uint64_t *s = x ? &x->rng_state : &fallback;
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

const HloModule *hli_module(HliExec *x) { return x ? x->module : NULL; }
struct HlfRegistry *hli_ffi_registry(HliExec *x) { return x ? x->ffi : NULL; }

static bool is_scalar_param(const HloInstr *i, int64_t n) {
  return i->op == HLO_OP_PARAMETER && i->parameter_number == n && i->shape.rank == 0 &&
         i->shape.dtype != HLO_TUPLE;
}

HliBinop hli_match_binop(const HloComputation *c) {
  if (!c || c->nparams != 2 || !c->root) return HLI_BINOP_NONE;
  const HloInstr *r = c->root;
  if (r->nops == 0 && r->op == HLO_OP_PARAMETER)
    return r->parameter_number == 1 ? HLI_BINOP_SELECT_RHS : HLI_BINOP_NONE;
  if (r->nops != 2) return HLI_BINOP_NONE;
  bool straight = is_scalar_param(r->ops[0], 0) && is_scalar_param(r->ops[1], 1);
  bool swapped = is_scalar_param(r->ops[0], 1) && is_scalar_param(r->ops[1], 0);
  if (!straight && !swapped) return HLI_BINOP_NONE;
  /* The result type must be the parameters' (a converting reducer is not a plain op). */
  if (r->shape.dtype != r->ops[0]->shape.dtype || r->ops[0]->shape.dtype != r->ops[1]->shape.dtype)
    return HLI_BINOP_NONE;
  switch (r->op) {
  case HLO_OP_ADD: return HLI_BINOP_ADD;
  case HLO_OP_MULTIPLY: return HLI_BINOP_MUL;
  case HLO_OP_MAXIMUM: return HLI_BINOP_MAX;
  case HLO_OP_MINIMUM: return HLI_BINOP_MIN;
  case HLO_OP_AND: return HLI_BINOP_AND;
  case HLO_OP_OR: return HLI_BINOP_OR;
  case HLO_OP_XOR: return HLI_BINOP_XOR;
  default: return HLI_BINOP_NONE;
  }
}
