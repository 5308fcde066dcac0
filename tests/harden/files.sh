#!/bin/sh
# files.sh: hlorun never leaves a partial output file and never changes its
# inputs. A run that fails, times out or is interrupted leaves no -o file
# (and no temporary beside it); an existing output survives a failed run
# untouched; input files keep their bytes.
srcdir=${srcdir:-.}
HLORUN=./hlorun
[ -x "$HLORUN" ] || { echo "files: ./hlorun is not built; skipping"; exit 77; }
d=$srcdir/tests/harden
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-files.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "PASS: $1"; }
bad() { echo "FAIL: $1"; ls -la "$tmp"; fail=1; }
cp "$d/x.txt" "$tmp/x.txt"
sum0=$(cksum < "$tmp/x.txt")

# A run stopped by --timeout: exit 2, no output, no temporary.
"$HLORUN" --timeout 0.3 -o "$tmp/out.npy" "$d/endless.hlo" "$tmp/x.txt" 2>/dev/null
rc=$?
[ $rc = 2 ] && [ "$(ls "$tmp")" = "x.txt" ] && ok "timeout leaves nothing" || bad "timeout (exit $rc)"

# An interrupted run (SIGTERM, SIGKILL; a shell script's background jobs
# ignore SIGINT): no output, no temporary. --timeout is only a safety net.
for sig in TERM KILL; do
  "$HLORUN" --timeout 30 -o "$tmp/out.npz" "$d/endless.hlo" "$tmp/x.txt" 2>/dev/null &
  pid=$!
  sleep 0.3
  kill -$sig $pid
  wait $pid
  [ "$(ls "$tmp")" = "x.txt" ] && ok "SIG$sig leaves nothing" || bad "SIG$sig"
done

# A good run writes the file; a later failing run leaves it as it was.
"$HLORUN" -o "$tmp/out.txt" --custom-call "twice=$PWD/tests/.libs/libcrashy.so:twice" \
  "$d/call.hlo" "$tmp/x.txt" && cmp -s "$tmp/out.txt" "$d/want.txt" && ok "output written" ||
  bad "output written"
"$HLORUN" --max-iterations 5 -o "$tmp/out.txt" "$d/endless.hlo" "$tmp/x.txt" 2>/dev/null
[ $? = 2 ] && cmp -s "$tmp/out.txt" "$d/want.txt" && [ "$(ls "$tmp" | wc -l)" = 2 ] &&
  ok "failed run keeps the old output" || bad "failed run keeps the old output"

# Inputs are read-only to hlorun: same bytes, even read through a
# read-only file.
chmod 0444 "$tmp/x.txt"
"$HLORUN" --custom-call "twice=$PWD/tests/.libs/libcrashy.so:twice" "$d/call.hlo" "$tmp/x.txt" >/dev/null &&
  [ "$(cksum < "$tmp/x.txt")" = "$sum0" ] && ok "inputs untouched" || bad "inputs untouched"
chmod 0644 "$tmp/x.txt"
exit $fail
