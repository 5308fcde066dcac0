#!/bin/sh
# run.sh: the multi-device golden cases of tests/devices/xla/ (made by
# tools/golden/gen_devices.py from XLA's collective tests) and the error
# cases of tests/devices/errors/.
#
# A golden case runs threaded with --per-device-outputs --expect; when
# mpirun (Open MPI) is on PATH it runs again under mpirun -np 2 (grids of 4
# or more devices: -np 4 and -np 2 on alternate cases), and the -o outputs
# must be the same bytes as the threaded run's. An error case must exit 2 within 60
# seconds with a message naming what its `expect` file names.
# One line per case; ends with "N passed, N failed"; exit 1 on any failure.
# Cases listed in tests/devices/xla/KNOWN_FAILURES (runtime bugs, described
# there) are expected to fail: they print XFAIL and do not fail the run; once
# one passes it prints XPASS and fails, so the list is kept honest.
# HLORUN_MPI=no skips the mpirun runs.
srcdir=${srcdir:-.}
# mpirun forwards its standard input to rank 0: read none, so that a loop
# feeding its caller's input (while read ...; do ...; done) is not cut short.
exec </dev/null
hlorun=${HLORUN:-./hlorun}
[ -x "$hlorun" ] || { echo "SKIP: $hlorun not built"; exit 77; }
xla="$srcdir/tests/devices/xla"
errors="$srcdir/tests/devices/errors"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
# Open MPI's session directory of our own: mpirun jobs of other tests
# running at the same time raced on the shared /tmp/ompi.HOST.UID (a start
# failed with "mkdir: File exists").
OMPI_MCA_orte_tmpdir_base=$tmp; export OMPI_MCA_orte_tmpdir_base
# Open MPI refuses root without these (CI containers run as root).
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
mpi=
if [ "${HLORUN_MPI:-yes}" != no ] && command -v mpirun >/dev/null 2>&1 &&
   mpirun --version 2>/dev/null | grep -q "Open MPI"; then
  mpi=yes
elif [ "${HLORUN_MPI:-yes}" != no ] && [ "${HLORUN_MPIRUN:-no}" != no ]; then
  echo "FAIL: the build has the MPI transport but no Open MPI mpirun runs here"
  exit 1
fi
pass=0
fail=0
xfail=0
grid4=0
known="$xla/KNOWN_FAILURES"
# A line "NAME" is a failure every run; "NAME flaky" one that fails only
# some runs (a race), so passing is no XPASS.
is_known() { [ -f "$known" ] && grep -Eq "^${1#xla/}( flaky)?\$" "$known"; }
is_flaky() { [ -f "$known" ] && grep -q "^${1#xla/} flaky\$" "$known"; }

# Device count from the header: replica_count x num_partitions.
devices() {
  r=$(sed -n 's/^HloModule.*replica_count=\([0-9]*\).*/\1/p' "$1")
  p=$(sed -n 's/^HloModule.*num_partitions=\([0-9]*\).*/\1/p' "$1")
  echo $(( ${r:-1} * ${p:-1} ))
}

ok() {
  if is_known "$1" && ! is_flaky "$1"; then fail=$((fail + 1)); echo "XPASS: $1: passes; remove it from KNOWN_FAILURES"
  else pass=$((pass + 1)); echo "PASS: $1${2:+ ($2)}"; fi
}
bad() {
  if is_known "$1"; then xfail=$((xfail + 1)); echo "XFAIL: $1: $2 (a known runtime bug)"; return; fi
  fail=$((fail + 1)); echo "FAIL: $1: $2"; sed 's/^/    /' "$tmp/err" | head -n 8
}

for dir in "$xla"/*/; do
  dir=${dir%/}
  name=xla/${dir##*/}
  [ -f "$dir/module.hlo" ] || continue
  # in<i>.npy goes whole to every device; in<i>.npz holds every device's
  # value (d0, d1, ...), and then every input must be an .npz.
  inputs=$(ls "$dir"/in*.np[yz] 2>/dev/null)
  per_device=
  case $inputs in *.npz*) per_device=--per-device-inputs ;; esac
  # shellcheck disable=SC2086 # inputs are file names without spaces
  timeout 60 "$hlorun" --per-device-outputs $per_device --rtol 0 --atol 0 \
    --expect "$dir/expected.npz" -o "$tmp/threads.npz" "$dir/module.hlo" $inputs > /dev/null 2> "$tmp/err"
  rc=$?
  if [ $rc -ne 0 ]; then bad "$name" "threaded run exit $rc"; continue; fi
  runs=threads
  failed=
  if [ -n "$mpi" ]; then
    # One mpirun a case (a start costs ~0.5 s): -np 2, or for grids of 4
    # or more devices -np 4 and -np 2 on alternate cases, so that both
    # splits (every device a process; several devices a process) meet
    # every collective.
    n=$(devices "$dir/module.hlo")
    nps=2
    if [ "$n" -ge 4 ]; then
      grid4=$((grid4 + 1))
      [ $((grid4 % 2)) -eq 1 ] && nps=4
    fi
    for np in $nps; do
      rm -f "$tmp/mpi.npz"
      # shellcheck disable=SC2086
      timeout 120 mpirun --oversubscribe -np "$np" "$hlorun" --per-device-outputs $per_device \
        -o "$tmp/mpi.npz" "$dir/module.hlo" $inputs > /dev/null 2> "$tmp/err"
      rc=$?
      if [ $rc -ne 0 ]; then failed="mpirun -np $np exit $rc"; break; fi
      if ! cmp -s "$tmp/threads.npz" "$tmp/mpi.npz"; then
        : > "$tmp/err"
        failed="mpirun -np $np output differs from the threaded run's"
        break
      fi
      runs="$runs, np $np"
    done
  fi
  if [ -n "$failed" ]; then bad "$name" "$failed"; else ok "$name" "$runs"; fi
done

# Error cases: exit 2 (never a hang or a crash) and a message that names the
# instruction (the line of `expect`).
for dir in "$errors"/*/; do
  dir=${dir%/}
  name=errors/${dir##*/}
  [ -f "$dir/module.hlo" ] || continue
  want=$(cat "$dir/expect")
  timeout 60 "$hlorun" --per-device-outputs "$dir/module.hlo" > /dev/null 2> "$tmp/err"
  rc=$?
  if [ $rc -ne 2 ]; then bad "$name" "exit $rc, want 2"; continue; fi
  if ! grep -qF -- "$want" "$tmp/err"; then bad "$name" "message does not contain '$want'"; continue; fi
  if [ -n "$mpi" ]; then
    timeout 120 mpirun --oversubscribe -np 2 "$hlorun" --per-device-outputs "$dir/module.hlo" \
      > /dev/null 2> "$tmp/err"
    rc=$?
    if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then bad "$name" "mpirun -np 2 exit $rc, want a failure"; continue; fi
    if ! grep -qF -- "$want" "$tmp/err"; then bad "$name" "mpirun -np 2: message does not contain '$want'"; continue; fi
  fi
  ok "$name"
done

known_note=
[ $xfail -gt 0 ] && known_note=" ($xfail known failures)"
echo "$pass passed, $fail failed$known_note"
[ $fail -eq 0 ]
