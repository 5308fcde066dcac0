/* dot.c: placeholder registrar; the kernels of this area come next. */
#include "interp/interp.h"

void hli_register_dot_conv(HliOpTable t) { (void)t; }
