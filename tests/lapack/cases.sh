#!/bin/sh
# cases.sh: jaxlib's CPU LAPACK custom calls (targets/cpu/) end to end: every
# case of tests/lapack/cases/ (JAX's back-compat modules as HLO and cases of
# tools/gen_lapack_cases.py) through ./hlorun, checked by check_cases.py
# against JAX's recorded outputs or the defining property; then the two
# LAPACK samples against their numpy goldens. Needs numpy (python3-numpy).
srcdir=${srcdir:-.}
HLORUN=${HLORUN:-./hlorun}
[ -x "$HLORUN" ] || { echo "SKIP: $HLORUN not built"; exit 77; }
py=
for p in "${PYTHON3:-python3}" /usr/bin/python3; do
  if "$p" -c 'import numpy' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "FAIL: no python3 with numpy (install the Debian package python3-numpy)"; exit 1; }
fail=0
"$py" "$srcdir/tests/lapack/check_cases.py" "$HLORUN" "$srcdir/tests/lapack/cases" || fail=1
s=$srcdir/samples
for run in "lapack_lstsq.expected.npy lapack_lstsq.hlo lapack_lstsq.in0.npy lapack_lstsq.in1.npy" \
           "lapack_pca.expected.npz lapack_pca.hlo lapack_pca.in0.npy"; do
  set -- $run
  exp=$1; shift
  files=
  for f in "$@"; do files="$files $s/$f"; done
  if "$HLORUN" --expect "$s/$exp" --rtol 1e-9 --atol 1e-12 $files; then
    echo "PASS: sample $1"
  else
    echo "FAIL: sample $1"; fail=1
  fi
done
exit $fail
