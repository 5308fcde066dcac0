#!/bin/sh
# MPI as it runs across machines, on one machine: two network namespaces
# (two network stacks, each with only loopback and one end of a veth pair
# between them) stand for two hosts. mpirun starts in the first; Open MPI
# reaches the second "host" through a launch agent (plm_rsh_agent, the
# place of ssh) that enters its namespace with `ip netns exec` (and its own
# hostname with `unshare --uts`) and starts orted there; the ranks talk TCP
# over the veth only (pml ob1, btl tcp,self). Each rank records its network
# namespace, so the test shows two ranks ran in each, and their results
# must be the threaded run's bytes. Needs root (or CAP_NET_ADMIN and
# CAP_SYS_ADMIN), iproute2 and unshare; elsewhere exit 77 saying what is
# missing, never a silent pass.
set -u
exec </dev/null
srcdir=${srcdir:-.}
d=$srcdir/tests/devices
s=$srcdir/samples/spmd
H=${HLORUN:-./hlorun}
case $H in /*) ;; *) H=$(pwd)/$H ;; esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
skip() { echo "skip: $*"; exit 77; }
A=hlorun-a-$$ B=hlorun-b-$$ VA=hva$$ VB=hvb$$
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-netns.XXXXXX")
cleanup() { ip netns del "$A" 2>/dev/null; ip netns del "$B" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
# Open MPI's session directory of our own: mpirun jobs of other tests
# running at the same time raced on the shared /tmp/ompi.HOST.UID (a start
# failed with "mkdir: File exists").
OMPI_MCA_orte_tmpdir_base=$tmp; export OMPI_MCA_orte_tmpdir_base
[ "${HLORUN_MPI:-yes}" = no ] && skip "HLORUN_MPI=no"
command -v mpirun >/dev/null 2>&1 || skip "no mpirun on PATH"
timeout 60 mpirun -np 2 "$H" --version 2>/dev/null | grep -q . ||
  skip "mpirun cannot start hlorun (no MPI transport in this build)"
command -v ip >/dev/null 2>&1 || skip "no ip command (iproute2)"
command -v unshare >/dev/null 2>&1 || skip "no unshare command (util-linux)"
if ! ip netns add "$A" 2>"$tmp/err"; then
  skip "ip netns add is not permitted here: $(head -1 "$tmp/err")"
fi
ip netns add "$B" && ip link add "$VA" type veth peer name "$VB" &&
  ip link set "$VA" netns "$A" && ip link set "$VB" netns "$B" &&
  ip -n "$A" addr add 10.211.7.1/24 dev "$VA" && ip -n "$B" addr add 10.211.7.2/24 dev "$VB" &&
  ip -n "$A" link set "$VA" up && ip -n "$B" link set "$VB" up &&
  ip -n "$A" link set lo up && ip -n "$B" link set lo up 2>"$tmp/err" ||
  skip "the namespaces cannot be joined by a veth pair here: $(head -1 "$tmp/err")"
ns_a=$(ip netns exec "$A" readlink /proc/self/ns/net)
ns_b=$(ip netns exec "$B" readlink /proc/self/ns/net)

# The launch agent: mpirun calls it as ssh, "agent HOST COMMAND...".
cat >"$tmp/agent" <<AGENT
#!/bin/sh
echo "\$1" >>"$tmp/agent.log"
[ "\$1" = 10.211.7.2 ] || { echo "agent: unknown host \$1" >&2; exit 1; }
shift
exec ip netns exec "$B" unshare --uts sh -c 'hostname hlorun-b && eval "\$1"' sh "\$*"
AGENT
# Each rank writes its rank and network namespace, then runs hlorun.
cat >"$tmp/rank" <<RANK
#!/bin/sh
echo "\$OMPI_COMM_WORLD_RANK \$(readlink /proc/self/ns/net)" >>"$tmp/ranks.log"
exec "$H" "\$@"
RANK
chmod +x "$tmp/agent" "$tmp/rank"
net="--mca plm_rsh_agent $tmp/agent --host 10.211.7.1:2,10.211.7.2:2 --mca pml ob1 --mca btl tcp,self
  --mca btl_tcp_if_include 10.211.7.0/24 --mca oob_tcp_if_include 10.211.7.0/24"
pass=0 fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; pass=$((pass + 1)); }

# same NAME OUT ARGS...: threaded (outside), then -np 4 across the two namespaces.
same() {
  name=$1 out=$2
  shift 2
  rm -f "$tmp/ranks.log"
  timeout 120 "$H" -o "$tmp/t.$out" "$@" 2>"$tmp/err" || { fail "$name (threads): $(head -3 "$tmp/err")"; return; }
  # shellcheck disable=SC2086
  if ! timeout 180 ip netns exec "$A" mpirun $net -np 4 "$tmp/rank" -o "$tmp/n.$out" "$@" 2>"$tmp/err"; then
    fail "$name: mpirun across the namespaces failed"; head -8 "$tmp/err"; return
  fi
  where=$(sort "$tmp/ranks.log" |
    awk -v a="$ns_a" -v b="$ns_b" '{ printf "%s %s ", $1, $2 == a ? "A" : $2 == b ? "B" : $2 }')
  if [ "$where" != "0 A 1 A 2 B 3 B " ]; then
    fail "$name: ranks ran in $where, want 0 and 1 in $A, 2 and 3 in $B"; return
  fi
  cmp -s "$tmp/t.$out" "$tmp/n.$out" && ok "$name: ranks 0,1 in $A and 2,3 in $B, the threaded run's bytes" ||
    fail "$name: the bytes differ from the threaded run"
}
same mlp-2x4 mlp.npy --random=7 "$s/mlp_2x4.hlo"
same chain chain.npz --random=5 "$d/chain.hlo"
same collectives collectives.npz --per-device-outputs "$d/collectives.hlo"
same inplace inplace.npz --per-device-outputs "$d/inplace.hlo"
same mesh64 mesh64.npz --per-device-outputs "$d/mesh64.hlo"
grep -q 10.211.7.2 "$tmp/agent.log" 2>/dev/null && ok "orted was started through the agent" ||
  fail "the launch agent was never called"
echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
