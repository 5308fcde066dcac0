# bench/: `make bench` prints hlorun's and numpy's median times per workload
# in ../shared/bench (numpy from Debian's python3-numpy, hence /usr/bin/python3).
EXTRA_DIST += bench/run.py
BENCH_DIR = $(abs_top_srcdir)/../shared/bench
bench: all
	/usr/bin/python3 $(srcdir)/bench/run.py ./hlorun --dir $(BENCH_DIR) $(BENCH_FLAGS)
.PHONY: bench
