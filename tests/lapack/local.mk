# tests/lapack/: jaxlib's CPU LAPACK custom calls (targets/cpu/). With
# LAPACK: the cases of tools/gen_lapack_cases.py (JAX's back-compat data as
# HLO, batches, failing members) checked by check_cases.py, the two samples,
# and the error messages; without: the message naming the package.
if HLO_LAPACK
TESTS += tests/lapack/cases.sh tests/lapack/errors.sh
else
TESTS += tests/lapack/without.sh
endif
dist_noinst_SCRIPTS += tests/lapack/cases.sh tests/lapack/errors.sh tests/lapack/without.sh \
	tests/lapack/check_cases.py tools/gen_lapack_cases.py samples/lapack_goldens.py
EXTRA_DIST += tests/lapack/cases tests/lapack/errors
dist_noinst_DATA += samples/lapack_lstsq.hlo samples/lapack_lstsq.in0.npy \
	samples/lapack_lstsq.in1.npy samples/lapack_lstsq.expected.npy samples/lapack_pca.hlo \
	samples/lapack_pca.in0.npy samples/lapack_pca.expected.npz
