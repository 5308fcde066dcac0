# kernels/control: this area's sources and tests.
libhlorun_core_la_SOURCES += interp/kernels/control.c
