/* control.c: placeholder registrar; the kernels of this area come next. */
#include "interp/interp.h"

void hli_register_control(HliOpTable t) { (void)t; }
