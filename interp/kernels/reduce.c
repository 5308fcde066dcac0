/* reduce.c: placeholder registrar; the kernels of this area come next. */
#include "interp/interp.h"

void hli_register_reduce(HliOpTable t) { (void)t; }
