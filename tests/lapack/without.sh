#!/bin/sh
# without.sh (builds configured --without-lapack): jaxlib's LAPACK targets
# are still registered, and a call fails with exit 2 and a message naming
# the Debian package that provides them.
srcdir=${srcdir:-.}
HLORUN=${HLORUN:-./hlorun}
[ -x "$HLORUN" ] || { echo "SKIP: $HLORUN not built"; exit 77; }
out=$("$HLORUN" --random "$srcdir/samples/lapack_pca.hlo" 2>&1); rc=$?
want="lapack_dsyevd_ffi: hlorun was built without LAPACK; install the Debian package 'liblapacke-dev' and reconfigure (or bind the target with --custom-call)"
case $out in
  *"$want"*) [ $rc -eq 2 ] && { echo "PASS: without LAPACK"; exit 0; } ;;
esac
echo "FAIL: exit $rc: $out"
exit 1
