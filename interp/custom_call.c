/* custom_call.c: placeholder registrar; the kernels of this area come next. */
#include "interp/interp.h"

void hli_register_custom_call(HliOpTable t) { (void)t; }
