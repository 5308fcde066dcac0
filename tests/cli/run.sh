#!/bin/sh
# End-to-end tests of the hlorun command: results on stdout and in files,
# exit codes and messages for wrong inputs, golden mismatches and parse
# errors. Run by `make check` (TESTS); srcdir and the built ./hlorun come
# from the environment automake sets.
set -u
srcdir=${srcdir:-.}
d=$srcdir/tests/cli
H=${HLORUN:-./hlorun}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect_run NAME WANT_RC WANT_STDOUT_FILE_OR_- GREP_STDERR_OR_- ARGS...
expect_run() {
  name=$1 rc_want=$2 out_want=$3 err_want=$4
  shift 4
  "$H" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" = "$rc_want" ] || { fail "$name: exit $rc, want $rc_want"; cat "$tmp/err"; return; }
  if [ "$out_want" != - ] && ! cmp -s "$tmp/out" "$out_want"; then
    fail "$name: stdout differs"; cat "$tmp/out"; return
  fi
  if [ "$err_want" != - ] && ! grep -q -- "$err_want" "$tmp/err"; then
    fail "$name: stderr lacks '$err_want'"; cat "$tmp/err"; return
  fi
  echo "ok: $name"
}

expect_run stdout-literal 0 "$d/sum.txt" - "$d/add.hlo" "$d/a.txt" "$d/b.txt"
expect_run options-after-inputs 0 "$d/sum.txt" - "$d/add.hlo" "$d/a.txt" --threads 1 "$d/b.txt"
expect_run too-few-inputs 2 - "takes 2 parameters, but 1 input was given" "$d/add.hlo" "$d/a.txt"
expect_run too-many-inputs 2 - "too many inputs" "$d/add.hlo" "$d/a.txt" "$d/b.txt" "$d/b.txt"
expect_run wrong-dtype 2 - "literal of shape s32\[2\] does not match the expected f32\[2\]" \
  "$d/add.hlo" "$d/a.txt" "$d/b_s32.txt"
expect_run missing-file 2 - "cannot open" "$d/add.hlo" "$d/a.txt" "$tmp/nope.npy"
expect_run expect-match 0 - - --expect "$d/sum.txt" "$d/add.hlo" "$d/a.txt" "$d/b.txt"
expect_run expect-mismatch 1 - "1 of 2 elements differ" \
  --expect "$d/sum_off.txt" "$d/add.hlo" "$d/a.txt" "$d/b.txt"
grep -q "at \[1\]  got 22  want 23" "$tmp/err" || fail "expect-mismatch: no index report"
expect_run expect-atol 0 - - --expect "$d/sum_off.txt" --atol 1 "$d/add.hlo" "$d/a.txt" "$d/b.txt"
expect_run parse-error 2 - "bad.hlo:5:" "$d/bad.hlo" "$d/a.txt"
expect_run bad-option 2 - "Try" --bench zero "$d/add.hlo"

# Files: .npy result, fed back as an input; .npz for tuples; .txt.
expect_run out-npy 0 - - -o "$tmp/s.npy" "$d/add.hlo" "$d/a.txt" "$d/b.txt"
head -c 6 "$tmp/s.npy" | od -c | grep -q "N   U   M   P   Y" || fail "out-npy: not a .npy"
printf 'f32[2] {12, 24}\n' > "$tmp/want.txt"
expect_run npy-as-input 0 "$tmp/want.txt" - "$d/add.hlo" "$tmp/s.npy" "$d/a.txt"
expect_run out-npy-tuple 2 - "use .npz" -o "$tmp/t.npy" "$d/pair.hlo" "$d/a.txt"
expect_run out-npz 0 - - -o "$tmp/t.npz" "$d/pair.hlo" "$d/a.txt"
head -c 2 "$tmp/t.npz" | grep -q PK || fail "out-npz: not a zip"
expect_run expect-npz 0 - - --expect "$tmp/t.npz" "$d/pair.hlo" "$d/a.txt"
expect_run out-txt 0 - - -o "$tmp/t.txt" "$d/pair.hlo" "$d/a.txt"
printf '(f32[2] {1, 2}, s32[] 7)\n' > "$tmp/t_want.txt"
cmp -s "$tmp/t.txt" "$tmp/t_want.txt" || fail "out-txt: wrong text"
ls "$tmp" | grep -q tmp && fail "temporary files left behind"

# --random is deterministic; --bench reports on stderr.
"$H" --random=3 "$d/add.hlo" >"$tmp/r1" 2>/dev/null
"$H" --random=3 "$d/add.hlo" >"$tmp/r2" 2>/dev/null
cmp -s "$tmp/r1" "$tmp/r2" || fail "random: not deterministic"
expect_run bench 0 - "bench: median_ms=.* runs=3" --random --bench 3 "$d/add.hlo"
expect_run stdin-module 0 "$d/sum.txt" - - "$d/a.txt" "$d/b.txt" < "$d/add.hlo"

[ "$fails" = 0 ] && echo "all CLI tests passed"
[ "$fails" = 0 ]
