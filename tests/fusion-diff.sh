#!/bin/sh
# fusion-diff.sh: 60 random row-reduction modules and 40 random
# dot -> row group -> dot chains give byte-identical results with fusion on
# and off, on one and two threads (tests/fusion_diff.py). Skips (77)
# without python3 or ./hlorun.
srcdir=${srcdir:-.}
[ -x ./hlorun ] || { echo "SKIP: ./hlorun not built"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-fusion-diff.XXXXXX")
python3 "$srcdir/tests/fusion_diff.py" ./hlorun 0 60 "$work" &&
  python3 "$srcdir/tests/fusion_diff.py" --chains ./hlorun 0 40 "$work"
rc=$?
[ $rc = 0 ] || exit 1   # 0 or 1: a status of 77 would read as a skip
rm -rf "$work"
