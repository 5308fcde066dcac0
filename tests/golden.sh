#!/bin/sh
# golden.sh: run the golden cases of tests/golden/ (transcribed from
# StableHLO's test files, or with numpy-computed expected values; see
# tools/golden/) through ./hlorun with the shared conformance runner.
# Fails on any failing case. Skips (exit 77) when ../shared is absent or
# ./hlorun has not been built.
srcdir=${srcdir:-.}
runner="$srcdir/../shared/conformance/run.py"
[ -f "$runner" ] || { echo "SKIP: $runner not found"; exit 77; }
[ -x ./hlorun ] || { echo "SKIP: ./hlorun not built"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 77; }
# 0 or 1: the runner exits 2 on a usage error.
python3 "$runner" ./hlorun "$srcdir/tests/golden" || exit 1
