#!/bin/sh
# JAX's exported CPU linear-algebra modules (tests/stablehlo/jax: the newest
# entry of each jax/_src/internal_test_util/export_back_compat_test_data/
# cpu_*.py, written by convert.py) and its shard_map exported three ways
# with Shardy (shardy_shard_map_*: a ppermute on 2 devices, the round trip's
# custom calls and the sdy dialect; convert.py --shardy): each runs on its
# recorded inputs and must give JAX's recorded expected outputs within the
# tolerances JAX's own test uses (cases.txt): hlorun --expect, or for the
# modules whose outputs are not unique (eig, eigh, schur) the property JAX's
# test checks instead (check.py, with a python3 that has numpy; without one
# those cases are skipped and the script exits 77 after the others pass).
# A module listed in cannot-pass.txt must fail (the list changes with the
# code); any other must pass.
set -u
srcdir=${srcdir:-.}
H=${HLORUN:-./hlorun}
hl_name=jax
. "$srcdir/tests/lib/harness.sh"
d=$srcdir/tests/stablehlo/jax
py=
for cand in ${PYTHON:-} python3 /usr/bin/python3; do
  if "$cand" -c "import numpy" >/dev/null 2>&1; then py=$cand; break; fi
done
passed=0 total=0 skipped=0
while read -r name rtol atol _date check; do
  case $name in '#'*|'') continue ;; esac
  total=$((total + 1))
  set -- "$d/$name.mlir"
  [ -f "$d/$name.in.npz" ] && set -- "$@" "$d/$name.in.npz"
  exp=$d/$name.expected.npy
  [ -f "$exp" ] || exp=$d/$name.expected.npz
  if [ "$check" = expect ]; then
    "$H" "$@" --expect "$exp" --rtol "$rtol" --atol "$atol" \
      >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
  elif [ -z "$py" ]; then
    echo "SKIP: $name (its $check check needs a python3 with numpy)"; skipped=$((skipped + 1)); continue
  else
    rm -f "$tmp/got.npz"
    "$H" "$@" -o "$tmp/got.npz" >"$tmp/out" 2>"$tmp/err" </dev/null &&
      "$py" "$d/check.py" "$check" "$name" "$tmp/got.npz" "$exp" "$rtol" "$atol" \
        ${2:+"$2"} >"$tmp/out" 2>>"$tmp/err"
    rc=$?
  fi
  listed=$(grep "^$name	" "$d/cannot-pass.txt" || true)
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
    if [ -n "$listed" ]; then fail "$name passes but is listed in cannot-pass.txt"; else echo "ok: $name"; fi
  elif [ -n "$listed" ]; then
    echo "ok: $name cannot pass (listed): $(head -1 "$tmp/err")"
  else
    fail "$name: exit $rc"; head -20 "$tmp/out" "$tmp/err"
  fi
done <"$d/cases.txt"
echo "JAX CPU modules: $passed of $total pass"
[ "$total" -gt 0 ] || fail "no cases read from $d/cases.txt"
if [ "$fails" -eq 0 ] && [ "$skipped" -gt 0 ]; then
  echo "SKIP: $skipped case(s) need a python3 with numpy"; exit 77
fi
finish
