#!/bin/sh
# make check: the Python package's pytest suite (tests/python/test_*.py) on
# the package in $srcdir/python over the library just built. Exit 77 (a
# skip, for automake) with the reason when no Python can import cffi, numpy
# and pytest (Debian: python3-cffi, python3-numpy, python3-pytest); pytest's
# "no tests collected" (status 5) is a failure, not a pass.
set -u
srcdir=${srcdir:-.}
py=
for cand in ${PYTHON:-} python3 /usr/bin/python3; do
  if "$cand" -c "import cffi, numpy, pytest" >/dev/null 2>&1; then py=$cand; break; fi
done
if [ -z "$py" ]; then
  echo "SKIP: no python3 that can import cffi, numpy and pytest (install the Debian packages python3-cffi, python3-numpy and python3-pytest)"
  exit 77
fi
lib=$(pwd)/.libs/libhlorun.so
[ -e "$lib" ] || { echo "FAIL: $lib not built"; exit 1; }
# A sanitizer build (--enable-sanitizers): Python itself is not instrumented,
# so AddressSanitizer's runtime must be loaded first; Python's own
# allocations at exit are not leaks of ours.
asan=$(ldd "$lib" 2>/dev/null | sed -n 's/.*libasan[^ ]* => \([^ ]*\) .*/\1/p' | head -n 1)
if [ -n "$asan" ]; then
  LD_PRELOAD=$asan${LD_PRELOAD:+:$LD_PRELOAD}
  ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
  export LD_PRELOAD ASAN_OPTIONS
fi
HLORUN_LIB=$lib HLORUN=${HLORUN:-$(pwd)/hlorun} HLORUN_BUILDDIR=$(pwd) HLORUN_SRCDIR=$srcdir \
PYTHONPATH="$srcdir/python${PYTHONPATH:+:$PYTHONPATH}" \
  "$py" -m pytest -q -p no:cacheprovider "$srcdir/tests/python"
rc=$?
case $rc in
  0) exit 0 ;;
  5) echo "FAIL: pytest collected no tests"; exit 1 ;;
  *) exit 1 ;;
esac
