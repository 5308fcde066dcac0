#!/bin/sh
# Quick start on a fresh Debian machine: install the build dependencies
# (Debian packages, listed in tools/packages.txt), build hlorun, and run a
# sample module. Extra arguments go to ./configure.
set -e
cd "$(dirname "$0")/.."
pkgs=$(grep -v '^#' tools/packages.txt | tr '\n' ' ')
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $missing
fi
[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure "$@"
make -j"$(nproc)"
if [ -f samples/quickstart.hlo ]; then
  echo "== ./hlorun samples/quickstart.hlo samples/quickstart.in0.txt"
  ./hlorun samples/quickstart.hlo samples/quickstart.in0.txt
fi
