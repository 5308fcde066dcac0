# kernels/reduce: reduce, reduce-window, select-and-scatter, sort, topk, and
# the shared reducer helpers (typed folds, computation fallback, matchers).
libhlorun_core_la_SOURCES += \
	interp/kernels/reducer.h interp/kernels/reducer.c \
	interp/kernels/reduce.c interp/kernels/reduce_window.c \
	interp/kernels/select_scatter.c interp/kernels/sort.c
