# bench/: `make bench` prints hlorun's and numpy's median times per workload
# in ../shared/bench, then the other operations of bench/ops/ (numpy from
# Debian's python3-numpy, hence /usr/bin/python3), then the peak memory of
# replaying a 512 MiB snapshot (bench/snapshot.py, written to $TMPDIR and
# deleted), then the reduction of the planted-NaN module (bench/reduce.py:
# candidates tried, time), then what --reference and --reference-precision
# f64 cost against a plain run of the same workload (bench/diverge.py), then
# the StableHLO front end against the HLO text parser on the same modules
# (bench/stablehlo.py: the time ratio).
EXTRA_DIST += bench/run.py bench/snapshot.py bench/big_snapshot.py bench/reduce.py \
	bench/diverge.py bench/stablehlo.py \
	bench/ops/argmax_rows.hlo \
	bench/ops/cumsum_rows.hlo \
	bench/ops/depthwise_conv.hlo \
	bench/ops/fft_rows.hlo \
	bench/ops/maxpool_grad.hlo \
	bench/ops/one_hot.hlo \
	bench/ops/sort_rows.hlo \
	bench/ops/sum_leading.hlo \
	bench/ops/concat_rows.hlo \
	bench/ops/transpose_2d.hlo \
	bench/ops/matvec.hlo \
	bench/ops/vecmat.hlo \
	bench/ops/weight_grad_conv.hlo \
	bench/ops/strided_conv.hlo \
	bench/ops/bf16_conv.hlo \
	bench/ops/nchw_conv.hlo \
	bench/ops/a_elementwise_incache.hlo \
	bench/fma_peak.c \
	bench/devices.py bench/devices/allreduce_64m.hlo bench/devices/allgather_64m.hlo \
	bench/devices/permute_64m.hlo bench/devices/matmul_8way.hlo \
	bench/devices/matmul_1way.hlo
BENCH_DIR = $(abs_top_srcdir)/../shared/bench
# The FMA peak probe is built for this machine's widest vectors (never
# installed, never part of the suite).
bench/fma_peak$(EXEEXT): $(srcdir)/bench/fma_peak.c
	@$(MKDIR_P) bench
	$(CC) -O2 -march=native -pthread -o $@ $(srcdir)/bench/fma_peak.c
CLEANFILES += bench/fma_peak$(EXEEXT)
bench: all bench/fma_peak$(EXEEXT)
	/usr/bin/python3 $(srcdir)/bench/run.py ./hlorun --dir $(BENCH_DIR) --fma-peak bench/fma_peak$(EXEEXT) $(BENCH_FLAGS)
	/usr/bin/python3 $(srcdir)/bench/devices.py ./hlorun
	/usr/bin/python3 $(srcdir)/bench/snapshot.py ./hlorun
	/usr/bin/python3 $(srcdir)/bench/reduce.py ./hlorun
	/usr/bin/python3 $(srcdir)/bench/diverge.py ./hlorun --dir $(BENCH_DIR)
	/usr/bin/python3 $(srcdir)/bench/stablehlo.py ./hlorun
.PHONY: bench
