/* registry.c: the opcode -> kernel table, filled once by every kernel
 * file's registrar (kernels/register.h) and the custom-call bridge. An
 * opcode with no entry is reported at plan time. */
#include "interp/interp.h"
#include "interp/kernels/register.h"
#include "interp/kernels/reducer.h"
#include <pthread.h>

static HliOpTable table;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void fill(void) {
  hlk_register_elementwise(table);
  hlk_register_compare(table);
  hlk_register_convert(table);
  hlk_register_movement(table);
  hlk_register_gather_scatter(table);
  hlk_register_dot_conv(table);
  hlk_register_scaled_dot(table);
  hlk_register_reduce(table);
  hli_register_custom_call(table);
  hlk_register_flow(table);
  hlk_register_collectives(table);
  hlk_register_rng(table);
  hlk_register_fft(table);
  hlk_register_linalg(table);
  hlk_register_batch_norm(table);
  hlk_register_dynamic_dims(table);
  hlk_register_no_kernel(table);
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
