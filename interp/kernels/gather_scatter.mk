# kernels/gather_scatter: this area's sources and tests.
libhlorun_core_la_SOURCES += interp/kernels/gather_scatter.c
