#!/usr/bin/env bash
# fuzz/run.sh TARGET SECONDS [LIBFUZZER-OPTIONS...]
#   TARGET: parse | values | attrs | run | proto | all (all: SECONDS each, one after
#   the other: the machine is shared).
# Builds hlorun's core library with clang, libFuzzer, ASan and UBSan in a
# private copy of the sources (so an in-tree gcc build is left alone), links
# fuzz/fuzz_TARGET.c against it and fuzzes for SECONDS, starting from the
# seed corpus fuzz/corpus/TARGET. New corpus entries and crashing inputs go
# to $FUZZ_DIR (default ${TMPDIR:-/tmp}/hlorun-fuzz): keep a crash as a
# regression test by copying it to tests/fuzz-regressions/TARGET/.
# Needs clang and its fuzzer runtime (Debian: clang, libclang-rt-14-dev; see
# fuzz/packages.txt). Not part of `make check`.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
target=${1:?usage: fuzz/run.sh TARGET SECONDS [libFuzzer options]}
secs=${2:?usage: fuzz/run.sh TARGET SECONDS [libFuzzer options]}
shift 2
work=${FUZZ_DIR:-${TMPDIR:-/tmp}/hlorun-fuzz}
CC=${FUZZ_CC:-clang}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
mkdir -p "$work/src"

# A copy of the sources (tracked files in a git checkout, else everything but
# build products); unchanged files keep their times, so rebuilds are small.
if git -C "$here" rev-parse --git-dir >/dev/null 2>&1; then
  # One tar reading the names from stdin: xargs would split a long list
  # into several archives, and the reader stops after the first.
  (cd "$here" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$work/src"
else
  (cd "$here" && tar -cf - --exclude=./fuzz-build --exclude='*.o' --exclude='*.lo' .) |
    tar -xf - -C "$work/src"
fi
cd "$work/src"
if [ ! -f Makefile ]; then
  autoreconf -fi >/dev/null 2>&1
  # clang 14 with glibc lacks CMPLX (fuzz/clang-compat.h).
  ./configure CC="$CC" CFLAGS="-g -O1 -fsanitize=fuzzer-no-link $SAN -include $work/src/fuzz/clang-compat.h" >/dev/null
fi
make -j2 libhlorun_core.la >/dev/null

# The libraries the core needs as configure found them (SLEEF, zlib,
# protobuf-c, LAPACK, jansson, MPI, ...): libtool records them in the
# convenience library's .la, so the list follows configure.ac by itself.
core_libs=$(sed -n "s/^dependency_libs='\(.*\)'$/\1/p" libhlorun_core.la)

build() {
  local t=$1; shift
  # shellcheck disable=SC2086 # core_libs is a list of words
  "$CC" -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer $SAN -I. -Iinclude -Iparser \
    "fuzz/fuzz_$t.c" .libs/libhlorun_core.a $core_libs -ldl -pthread -o "$work/fuzz_$t"
}

run() {
  local t=$1; shift
  build "$t"
  mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
  local dict=()
  [ -f "$here/fuzz/$t.dict" ] && dict=(-dict="$here/fuzz/$t.dict")
  echo "== fuzz_$t for ${secs}s (corpus $work/corpus/$t, crashes in $work/artifacts/$t)"
  "$work/fuzz_$t" -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 \
    -max_len=16384 -print_final_stats=1 -artifact_prefix="$work/artifacts/$t/" "${dict[@]}" \
    "$@" "$work/corpus/$t" "$here/fuzz/corpus/$t"
}

case "$target" in
  all) for t in parse values attrs run proto; do run "$t" "$@" || true; done ;;
  parse|values|attrs|run|proto) run "$target" "$@" ;;
  *) echo "fuzz/run.sh: unknown target '$target' (parse, values, attrs, run, proto, all)" >&2; exit 2 ;;
esac
