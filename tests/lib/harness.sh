# harness.sh: what the end-to-end scripts share, sourced (". harness.sh")
# after they set H, the hlorun to run, and hl_name, a word for the scratch
# directory: $tmp (removed on exit), failures counted by fail, a run of
# hlorun whose exit status is checked (run), fixed text present in or absent
# from a file (has, lacks), and the script's exit status (finish: 0 or 1,
# never the count, which could wrap to 0 or read as a skip).
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-$hl_name.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# run NAME WANT_RC ARGS...: stdout in $tmp/out, stderr in $tmp/err.
run() {
  name=$1 rc_want=$2
  shift 2
  "$H" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  if [ "$rc" != "$rc_want" ]; then
    fail "$name: exit $rc, want $rc_want"; cat "$tmp/out" "$tmp/err"; return 1
  fi
  return 0
}
# has NAME FILE TEXT: FILE holds the fixed string TEXT.
has() {
  grep -qF -- "$3" "$2" || { fail "$1: no '$3' in $(basename "$2")"; cat "$2"; return 1; }
  echo "ok: $1"
}
# lacks NAME FILE TEXT: FILE does not hold TEXT.
lacks() {
  if grep -qF -- "$3" "$2"; then fail "$1: '$3' in $(basename "$2")"; cat "$2"; return 1; fi
  echo "ok: $1"
}
# need_numpy: $py, a python3 that has numpy, or a failure naming the package.
need_numpy() {
  py=
  for p in "${PYTHON3:-python3}" /usr/bin/python3; do
    if "$p" -c 'import numpy' 2>/dev/null; then py=$p; break; fi
  done
  [ -n "$py" ] || { echo "FAIL: no python3 with numpy (install the Debian package python3-numpy)"; exit 1; }
}
finish() {
  if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
  exit 0
}
