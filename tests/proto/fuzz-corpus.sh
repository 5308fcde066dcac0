#!/bin/sh
# The proto fuzz target's seed corpus (fuzz/corpus/proto: the test files of
# tests/proto, binary and text, whole and cut short) through the target
# built without libFuzzer: no crash, no leak, no sanitizer report.
srcdir=${srcdir:-.}
out=$(./tests/fuzz_replay_proto "$srcdir/fuzz/corpus/proto" 2>&1) || { echo "$out" | tail -n 30; exit 1; }
echo "PASS: $(ls "$srcdir/fuzz/corpus/proto" | wc -l) inputs"
