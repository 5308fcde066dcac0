#!/bin/sh
# fuzz-regressions.sh: replay every input that once made a fuzz target fail
# (tests/fuzz-regressions/TARGET/) through that target, built without
# libFuzzer (tests/fuzz_replay_TARGET). Each must now pass its checks.
srcdir=${srcdir:-.}
fail=0
for t in parse values attrs run proto; do
  dir=$srcdir/tests/fuzz-regressions/$t
  [ -n "$(ls "$dir" 2>/dev/null)" ] || continue
  if out=$(./tests/fuzz_replay_$t "$dir" 2>&1); then
    echo "PASS: $t ($(ls "$dir" | wc -l) inputs)"
  else
    echo "FAIL: $t"; echo "$out" | tail -n 30; fail=1
  fi
done
exit $fail
