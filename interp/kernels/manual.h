/* manual.h: the kernels of a manual region's edges (manual.c), which the
 * custom-call kernel (custom_call.c) runs instead of a handler: their
 * values depend on the device, which handlers never see. */
#ifndef HLORUN_INTERP_KERNELS_MANUAL_H
#define HLORUN_INTERP_KERNELS_MANUAL_H
#include "interp/interp.h"

/* For an instruction with hlp_manual_edge(ins) != HLP_NOT_MANUAL_EDGE. */
int hlk_manual_check(HliExec *x, const HloInstr *ins);
int hlk_manual_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out);
#endif
