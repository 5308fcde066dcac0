/* no_kernel.c: a precise "not supported" error for every opcode no kernel
 * file claims (hlk_register_no_kernel, run after every other registrar of
 * the kernels, before custom-call's). Does not run anything: the error is
 * raised at plan time, so no work is done before it. */
#include "interp/kernels/control.h"
#include "interp/kernels/register.h"

static int check_no_kernel(HliExec *x, const HloInstr *ins) {
  switch (ins->op) {
  case HLO_OP_STOCHASTIC_CONVERT:
    return hli_unsupported(x, ins, "stochastic-convert (rounding with caller-supplied random bits "
                           "has no kernel yet)");
  case HLO_OP_RAGGED_DOT:
    return hli_unsupported(x, ins, "ragged-dot has no kernel yet");
  default:
    return hli_unsupported(x, ins, "opcode %s has no kernel in hlorun", hlp_opcode_name(ins->op));
  }
}

static int run_no_kernel(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)in; (void)out;
  return check_no_kernel(x, ins);
}

void hlk_register_no_kernel(HliOpTable t) {
  /* Every opcode must run or fail with a reason. The registrars of the
   * other kernel files ran before this one (interp/registry.c); fill what
   * they left empty, except the opcodes the executor evaluates itself
   * (also after-all and add-dependency when no kernel claims them) and
   * custom-call (registered after this file). */
  for (int op = 0; op < HLO_NUM_OPCODES; op++) {
    switch (op) {
    case HLO_OP_PARAMETER: case HLO_OP_CONSTANT: case HLO_OP_TUPLE:
    case HLO_OP_GET_TUPLE_ELEMENT: case HLO_OP_CUSTOM_CALL:
    case HLO_OP_AFTER_ALL: case HLO_OP_ADD_DEPENDENCY:
      continue;
    default:
      if (!t[op].run) t[op] = (HliOpEntry){run_no_kernel, check_no_kernel};
    }
  }
}
