# stablehlo/: StableHLO / MHLO / CHLO in MLIR text, translated to HLO text
# (and so into the IR through the HLO text parser). re2c lexer, lemon
# grammar of a generic op tree, translation op by op. Depends on the IR,
# the HLO text parser's public interface and common/.
libhlorun_core_la_SOURCES += \
	stablehlo/stablehlo.h stablehlo/syntax.h stablehlo/lower.h stablehlo/ops.h \
	stablehlo/parse.c stablehlo/types.c stablehlo/dense.c stablehlo/lower.c stablehlo/region.c \
	stablehlo/module.c stablehlo/ops.c stablehlo/ops_region.c stablehlo/ops_index.c stablehlo/ops_call.c stablehlo/ops_parallel.c stablehlo/ops_collective.c \
	stablehlo/ops_chlo.c stablehlo/ops_chlo_special.c stablehlo/ops_chlo_complex.c stablehlo/sdy.c stablehlo/op_sharding.c

SHLO_GEN = stablehlo/mlir.c stablehlo/mlir.h stablehlo/lexer.c
nodist_libhlorun_core_la_SOURCES += $(SHLO_GEN)
BUILT_SOURCES += $(SHLO_GEN)
CLEANFILES += $(SHLO_GEN)
EXTRA_DIST += stablehlo/mlir.y stablehlo/lexer.re $(SHLO_GEN)

stablehlo/mlir.c: $(srcdir)/stablehlo/mlir.y
	$(AM_V_GEN)$(MKDIR_P) stablehlo && \
	$(LEMON) -q -T$(LEMPAR) -d$(builddir)/stablehlo $(srcdir)/stablehlo/mlir.y && \
	touch $(builddir)/stablehlo/mlir.h
stablehlo/mlir.h: stablehlo/mlir.c
	@test -f $@ || { rm -f stablehlo/mlir.c; $(MAKE) $(AM_MAKEFLAGS) stablehlo/mlir.c; }

stablehlo/lexer.c: $(srcdir)/stablehlo/lexer.re stablehlo/mlir.h
	$(AM_V_GEN)$(MKDIR_P) stablehlo && \
	$(RE2C) -W --no-generation-date --no-version -o $@ $(srcdir)/stablehlo/lexer.re

# Unit tests of the front end (a Check suite, run under valgrind by make valgrind).
check_PROGRAMS += tests/check_stablehlo
TESTS += tests/check_stablehlo
tests_check_stablehlo_SOURCES = tests/check_stablehlo.c
tests_check_stablehlo_CFLAGS = $(TEST_CFLAGS)
tests_check_stablehlo_LDADD = $(TEST_LIBS)

# interpreter.run_parallel on the device grid, two ops on one line, and the
# api_version of built-in LAPACK targets (a Check suite).
check_PROGRAMS += tests/check_stablehlo_gaps
TESTS += tests/check_stablehlo_gaps
tests_check_stablehlo_gaps_SOURCES = tests/check_stablehlo_gaps.c
tests_check_stablehlo_gaps_CFLAGS = $(TEST_CFLAGS)
tests_check_stablehlo_gaps_LDADD = $(TEST_LIBS)

# The values behind StableHLO test files listed as wrong results: attributes
# read in both forms, XLA's all_gather order, expect_eq on NaN.
check_PROGRAMS += tests/check_stablehlo_results
TESTS += tests/check_stablehlo_results
tests_check_stablehlo_results_SOURCES = tests/check_stablehlo_results.c
tests_check_stablehlo_results_CFLAGS = $(TEST_CFLAGS)
tests_check_stablehlo_results_LDADD = $(TEST_LIBS)

# StableHLO's own test files (a checkout of openxla/stablehlo): the pass figure.
EXTRA_DIST += tests/stablehlo/run_all.py tests/stablehlo/precision.py

# A fixed sample of StableHLO's test files (tests/stablehlo/sample/, with
# StableHLO's license) against the list of those that cannot pass.
check_PROGRAMS += tests/check_stablehlo_sample
TESTS += tests/check_stablehlo_sample
tests_check_stablehlo_sample_SOURCES = tests/check_stablehlo_sample.c
tests_check_stablehlo_sample_CFLAGS = $(TEST_CFLAGS) -DSHS_SRCDIR='"$(abs_srcdir)"'
tests_check_stablehlo_sample_LDADD = $(TEST_LIBS)
EXTRA_DIST += tests/stablehlo/sample tests/stablehlo/cannot-pass.txt tests/stablehlo/LICENSE tests/stablehlo/NOTICE

# JAX's exported CPU linear-algebra modules and its Shardy shard_map exports
# (tests/stablehlo/jax: converted once from JAX's back-compat test data by
# convert.py, with JAX's license) against their recorded outputs and the list
# of those that cannot pass.
TESTS += tests/stablehlo/jax/run.sh
dist_noinst_SCRIPTS += tests/stablehlo/jax/run.sh
# (Listed file by file: a directory in EXTRA_DIST would also carry the
# in-tree run's run.sh.log/.trs into the tarball, which a VPATH build then
# cannot recreate.)
EXTRA_DIST += \
	tests/stablehlo/jax/LICENSE \
	tests/stablehlo/jax/NOTICE \
	tests/stablehlo/jax/cannot-pass.txt \
	tests/stablehlo/jax/cases.txt \
	tests/stablehlo/jax/check.py \
	tests/stablehlo/jax/cholesky_lapack_potrf_c128.expected.npy \
	tests/stablehlo/jax/cholesky_lapack_potrf_c128.in.npz \
	tests/stablehlo/jax/cholesky_lapack_potrf_c128.mlir \
	tests/stablehlo/jax/cholesky_lapack_potrf_c64.expected.npy \
	tests/stablehlo/jax/cholesky_lapack_potrf_c64.in.npz \
	tests/stablehlo/jax/cholesky_lapack_potrf_c64.mlir \
	tests/stablehlo/jax/cholesky_lapack_potrf_f32.expected.npy \
	tests/stablehlo/jax/cholesky_lapack_potrf_f32.in.npz \
	tests/stablehlo/jax/cholesky_lapack_potrf_f32.mlir \
	tests/stablehlo/jax/cholesky_lapack_potrf_f64.expected.npy \
	tests/stablehlo/jax/cholesky_lapack_potrf_f64.in.npz \
	tests/stablehlo/jax/cholesky_lapack_potrf_f64.mlir \
	tests/stablehlo/jax/convert.py \
	tests/stablehlo/jax/shardy_shard_map_2025_02_12.expected.npy \
	tests/stablehlo/jax/shardy_shard_map_2025_02_12.in.npz \
	tests/stablehlo/jax/shardy_shard_map_2025_02_12.mlir \
	tests/stablehlo/jax/shardy_shard_map_2025_04_14.expected.npy \
	tests/stablehlo/jax/shardy_shard_map_2025_04_14.in.npz \
	tests/stablehlo/jax/shardy_shard_map_2025_04_14.mlir \
	tests/stablehlo/jax/shardy_shard_map_2025_06_30.expected.npy \
	tests/stablehlo/jax/shardy_shard_map_2025_06_30.in.npz \
	tests/stablehlo/jax/shardy_shard_map_2025_06_30.mlir \
	tests/stablehlo/jax/shardy_tpu_sharding_2023_03_16_gspmd.expected.npy \
	tests/stablehlo/jax/shardy_tpu_sharding_2023_03_16_gspmd.in.npz \
	tests/stablehlo/jax/shardy_tpu_sharding_2023_03_16_gspmd.mlir \
	tests/stablehlo/jax/shardy_tpu_sharding_2023_03_16_shardy.expected.npy \
	tests/stablehlo/jax/shardy_tpu_sharding_2023_03_16_shardy.in.npz \
	tests/stablehlo/jax/shardy_tpu_sharding_2023_03_16_shardy.mlir \
	tests/stablehlo/jax/shardy_tpu_sharding_2025_06_30_gspmd.expected.npy \
	tests/stablehlo/jax/shardy_tpu_sharding_2025_06_30_gspmd.in.npz \
	tests/stablehlo/jax/shardy_tpu_sharding_2025_06_30_gspmd.mlir \
	tests/stablehlo/jax/shardy_tpu_sharding_2025_06_30_shardy.expected.npy \
	tests/stablehlo/jax/shardy_tpu_sharding_2025_06_30_shardy.in.npz \
	tests/stablehlo/jax/shardy_tpu_sharding_2025_06_30_shardy.mlir \
	tests/stablehlo/jax/eig_lapack_geev_c128.expected.npz \
	tests/stablehlo/jax/eig_lapack_geev_c128.mlir \
	tests/stablehlo/jax/eig_lapack_geev_c64.expected.npz \
	tests/stablehlo/jax/eig_lapack_geev_c64.mlir \
	tests/stablehlo/jax/eig_lapack_geev_f32.expected.npz \
	tests/stablehlo/jax/eig_lapack_geev_f32.mlir \
	tests/stablehlo/jax/eig_lapack_geev_f64.expected.npz \
	tests/stablehlo/jax/eig_lapack_geev_f64.mlir \
	tests/stablehlo/jax/eigh_lapack_syev_c128.expected.npz \
	tests/stablehlo/jax/eigh_lapack_syev_c128.mlir \
	tests/stablehlo/jax/eigh_lapack_syev_c64.expected.npz \
	tests/stablehlo/jax/eigh_lapack_syev_c64.mlir \
	tests/stablehlo/jax/eigh_lapack_syev_f32.expected.npz \
	tests/stablehlo/jax/eigh_lapack_syev_f32.mlir \
	tests/stablehlo/jax/eigh_lapack_syev_f64.expected.npz \
	tests/stablehlo/jax/eigh_lapack_syev_f64.mlir \
	tests/stablehlo/jax/hessenberg_lapack_gehrd_c128.expected.npz \
	tests/stablehlo/jax/hessenberg_lapack_gehrd_c128.mlir \
	tests/stablehlo/jax/hessenberg_lapack_gehrd_c64.expected.npz \
	tests/stablehlo/jax/hessenberg_lapack_gehrd_c64.mlir \
	tests/stablehlo/jax/hessenberg_lapack_gehrd_f32.expected.npz \
	tests/stablehlo/jax/hessenberg_lapack_gehrd_f32.mlir \
	tests/stablehlo/jax/hessenberg_lapack_gehrd_f64.expected.npz \
	tests/stablehlo/jax/hessenberg_lapack_gehrd_f64.mlir \
	tests/stablehlo/jax/lu_lapack_getrf_c128.expected.npz \
	tests/stablehlo/jax/lu_lapack_getrf_c128.mlir \
	tests/stablehlo/jax/lu_lapack_getrf_c64.expected.npz \
	tests/stablehlo/jax/lu_lapack_getrf_c64.mlir \
	tests/stablehlo/jax/lu_lapack_getrf_f32.expected.npz \
	tests/stablehlo/jax/lu_lapack_getrf_f32.mlir \
	tests/stablehlo/jax/lu_lapack_getrf_f64.expected.npz \
	tests/stablehlo/jax/lu_lapack_getrf_f64.mlir \
	tests/stablehlo/jax/qr_lapack_geqrf_c128.expected.npz \
	tests/stablehlo/jax/qr_lapack_geqrf_c128.mlir \
	tests/stablehlo/jax/qr_lapack_geqrf_c64.expected.npz \
	tests/stablehlo/jax/qr_lapack_geqrf_c64.mlir \
	tests/stablehlo/jax/qr_lapack_geqrf_f32.expected.npz \
	tests/stablehlo/jax/qr_lapack_geqrf_f32.mlir \
	tests/stablehlo/jax/qr_lapack_geqrf_f64.expected.npz \
	tests/stablehlo/jax/qr_lapack_geqrf_f64.mlir \
	tests/stablehlo/jax/schur_lapack_gees_c128.expected.npz \
	tests/stablehlo/jax/schur_lapack_gees_c128.in.npz \
	tests/stablehlo/jax/schur_lapack_gees_c128.mlir \
	tests/stablehlo/jax/schur_lapack_gees_c64.expected.npz \
	tests/stablehlo/jax/schur_lapack_gees_c64.in.npz \
	tests/stablehlo/jax/schur_lapack_gees_c64.mlir \
	tests/stablehlo/jax/schur_lapack_gees_f32.expected.npz \
	tests/stablehlo/jax/schur_lapack_gees_f32.in.npz \
	tests/stablehlo/jax/schur_lapack_gees_f32.mlir \
	tests/stablehlo/jax/schur_lapack_gees_f64.expected.npz \
	tests/stablehlo/jax/schur_lapack_gees_f64.in.npz \
	tests/stablehlo/jax/schur_lapack_gees_f64.mlir \
	tests/stablehlo/jax/svd_lapack_gesdd_c128.expected.npz \
	tests/stablehlo/jax/svd_lapack_gesdd_c128.in.npz \
	tests/stablehlo/jax/svd_lapack_gesdd_c128.mlir \
	tests/stablehlo/jax/svd_lapack_gesdd_c64.expected.npz \
	tests/stablehlo/jax/svd_lapack_gesdd_c64.in.npz \
	tests/stablehlo/jax/svd_lapack_gesdd_c64.mlir \
	tests/stablehlo/jax/svd_lapack_gesdd_f32.expected.npz \
	tests/stablehlo/jax/svd_lapack_gesdd_f32.in.npz \
	tests/stablehlo/jax/svd_lapack_gesdd_f32.mlir \
	tests/stablehlo/jax/svd_lapack_gesdd_f64.expected.npz \
	tests/stablehlo/jax/svd_lapack_gesdd_f64.in.npz \
	tests/stablehlo/jax/svd_lapack_gesdd_f64.mlir \
	tests/stablehlo/jax/triangular_solve_blas_trsm_c128.expected.npy \
	tests/stablehlo/jax/triangular_solve_blas_trsm_c128.in.npz \
	tests/stablehlo/jax/triangular_solve_blas_trsm_c128.mlir \
	tests/stablehlo/jax/triangular_solve_blas_trsm_c64.expected.npy \
	tests/stablehlo/jax/triangular_solve_blas_trsm_c64.in.npz \
	tests/stablehlo/jax/triangular_solve_blas_trsm_c64.mlir \
	tests/stablehlo/jax/triangular_solve_blas_trsm_f32.expected.npy \
	tests/stablehlo/jax/triangular_solve_blas_trsm_f32.in.npz \
	tests/stablehlo/jax/triangular_solve_blas_trsm_f32.mlir \
	tests/stablehlo/jax/triangular_solve_blas_trsm_f64.expected.npy \
	tests/stablehlo/jax/triangular_solve_blas_trsm_f64.in.npz \
	tests/stablehlo/jax/triangular_solve_blas_trsm_f64.mlir \
	tests/stablehlo/jax/tridiagonal_lapack_sytrd_hetrd_c128.expected.npz \
	tests/stablehlo/jax/tridiagonal_lapack_sytrd_hetrd_c128.mlir \
	tests/stablehlo/jax/tridiagonal_lapack_sytrd_hetrd_c64.expected.npz \
	tests/stablehlo/jax/tridiagonal_lapack_sytrd_hetrd_c64.mlir \
	tests/stablehlo/jax/tridiagonal_lapack_sytrd_hetrd_f32.expected.npz \
	tests/stablehlo/jax/tridiagonal_lapack_sytrd_hetrd_f32.mlir \
	tests/stablehlo/jax/tridiagonal_lapack_sytrd_hetrd_f64.expected.npz \
	tests/stablehlo/jax/tridiagonal_lapack_sytrd_hetrd_f64.mlir \
	tests/stablehlo/jax/tridiagonal_solve_lapack_gtsv_c128.expected.npy \
	tests/stablehlo/jax/tridiagonal_solve_lapack_gtsv_c128.in.npz \
	tests/stablehlo/jax/tridiagonal_solve_lapack_gtsv_c128.mlir \
	tests/stablehlo/jax/tridiagonal_solve_lapack_gtsv_c64.expected.npy \
	tests/stablehlo/jax/tridiagonal_solve_lapack_gtsv_c64.in.npz \
	tests/stablehlo/jax/tridiagonal_solve_lapack_gtsv_c64.mlir \
	tests/stablehlo/jax/tridiagonal_solve_lapack_gtsv_f32.expected.npy \
	tests/stablehlo/jax/tridiagonal_solve_lapack_gtsv_f32.in.npz \
	tests/stablehlo/jax/tridiagonal_solve_lapack_gtsv_f32.mlir \
	tests/stablehlo/jax/tridiagonal_solve_lapack_gtsv_f64.expected.npy \
	tests/stablehlo/jax/tridiagonal_solve_lapack_gtsv_f64.in.npz \
	tests/stablehlo/jax/tridiagonal_solve_lapack_gtsv_f64.mlir
