#!/bin/sh
# Open MPI with its TCP transport only (pml ob1, btl tcp,self: no shared
# memory between ranks, as between machines): the multi-device samples
# under mpirun give the threaded run's bytes. Exit 77 (with the reason)
# when mpirun or hlorun's MPI transport is missing; when configure built
# the transport (make check passes HLORUN_MPIRUN) a broken mpirun fails.
set -u
exec </dev/null
srcdir=${srcdir:-.}
d=$srcdir/tests/devices
s=$srcdir/samples/spmd
H=${HLORUN:-./hlorun}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Loopback is the one interface every machine has; Open MPI leaves it out
# by default (btl_tcp_if_exclude), so name it.
TCP="--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo"
if [ "${HLORUN_MPI:-yes}" = no ]; then echo "skip: HLORUN_MPI=no"; exit 77; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-tcp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Open MPI's session directory of our own: mpirun jobs of other tests
# running at the same time raced on the shared /tmp/ompi.HOST.UID (a start
# failed with "mkdir: File exists").
OMPI_MCA_orte_tmpdir_base=$tmp; export OMPI_MCA_orte_tmpdir_base
if ! command -v mpirun >/dev/null 2>&1; then
  echo "skip: no mpirun on PATH"; exit 77
fi
# shellcheck disable=SC2086
if ! timeout 60 mpirun $TCP -np 2 "$H" --version 2>/dev/null | grep -q .; then
  [ "${HLORUN_MPIRUN:-no}" != no ] && { echo "FAIL: mpirun $TCP -np 2 hlorun --version does not run"; exit 1; }
  echo "skip: mpirun cannot start hlorun over TCP (no MPI transport in this build)"; exit 77
fi
pass=0 fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; pass=$((pass + 1)); }

# same NAME NPS OUT ARGS...: the threaded run writes OUT (-o) once, each
# mpirun -np N run must write the same bytes.
same() {
  name=$1 nps=$2 out=$3
  shift 3
  if ! timeout 120 "$H" -o "$tmp/t.$out" "$@" 2>"$tmp/err"; then
    fail "$name (threads): $(head -3 "$tmp/err")"; return
  fi
  for np in $nps; do
    # shellcheck disable=SC2086
    if timeout 180 mpirun $TCP -np "$np" "$H" -o "$tmp/m$np.$out" "$@" 2>"$tmp/err" &&
       cmp -s "$tmp/t.$out" "$tmp/m$np.$out"; then
      ok "$name: mpirun -np $np over TCP, the threaded run's bytes"
    else
      fail "$name: mpirun -np $np over TCP differs or fails"; head -5 "$tmp/err"
    fi
  done
}

same mlp-2x4 "2 4 8" mlp.npy --random=7 "$s/mlp_2x4.hlo"
same chain "2 3 4" chain.npz --random=5 "$d/chain.hlo"
for m in collectives modes forms inplace mesh64; do
  same "$m" "2 4" "$m.npz" --per-device-outputs "$d/$m.hlo"
done
# And against the values worked out by hand.
for m in collectives inplace; do
  # shellcheck disable=SC2086
  timeout 120 mpirun $TCP -np 4 "$H" --per-device-outputs "$d/$m.hlo" >"$tmp/out" 2>"$tmp/err" &&
    cmp -s "$tmp/out" "$d/$m.expected" && ok "$m: mpirun -np 4 over TCP, the expected values" ||
    { fail "$m: mpirun -np 4 over TCP"; diff "$tmp/out" "$d/$m.expected" | head -5; head -5 "$tmp/err"; }
done
echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
