#!/bin/sh
# control_samples.sh: run every sample module of samples/ with its inputs and
# compare the result with its golden output (hlorun --expect). The goldens
# were computed independently with numpy (samples/goldens.py).
# Skips (exit 77) while the hlorun command has not been built.
srcdir=${srcdir:-.}
HLORUN=${HLORUN:-./hlorun}
[ -x "$HLORUN" ] || { echo "SKIP: $HLORUN not built"; exit 77; }
fail=0
for name in quickstart mlp_train_step scan conditional_model cpu_after_opt; do
  hlo="$srcdir/samples/$name.hlo"
  inputs=$(ls "$srcdir/samples/$name".in*.txt 2>/dev/null | sort)
  if "$HLORUN" --expect "$srcdir/samples/$name.expected.txt" "$hlo" $inputs >/dev/null; then
    echo "PASS: $name"
  else
    echo "FAIL: $name"
    fail=1
  fi
done
exit $fail
