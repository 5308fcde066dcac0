/* gather_scatter.c: placeholder registrar; the kernels of this area come next. */
#include "interp/interp.h"

void hli_register_gather_scatter(HliOpTable t) { (void)t; }
