/* registry.c: the opcode -> kernel table, filled once by every kernel
 * file's registrar. An opcode with no entry is reported at plan time. */
#include "interp/interp.h"
#include "interp/kernels/reducer.h"
#include <pthread.h>

static HliOpTable table;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void fill(void) {
  hli_register_elementwise(table);
  hli_register_movement(table);
  hli_register_gather_scatter(table);
  hli_register_dot_conv(table);
  hli_register_reduce(table);
  hli_register_control(table);
  hli_register_custom_call(table);
}

const HliOpEntry *hli_op_table(void) {
  pthread_once(&once, fill);
  return table;
}

bool hli_kernel_reads(const HloInstr *ins, int32_t k) {
  switch (ins->op) {
  case HLO_OP_REDUCE: return hlk_reduce_reads(ins, k);
  default: return true;
  }
}
