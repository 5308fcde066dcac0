# MPI as it runs across machines: Open MPI's TCP transport only
# (tests/mpi/tcp.sh) and two network namespaces joined by a veth pair with
# ranks started inside them by a launch agent (tests/mpi/netns.sh, skipped
# with its reason where ip netns is not permitted). Included from Makefile.am.
TESTS += tests/mpi/tcp.sh tests/mpi/netns.sh
dist_noinst_SCRIPTS += tests/mpi/tcp.sh tests/mpi/netns.sh
