#!/bin/sh
# mutants.sh: mutation testing. Plants the one-token bugs of tests/mutants/*.txt
# one at a time in a scratch copy of the tree, rebuilds it incrementally and
# runs the mutant's related tests, then, only when they all pass, the whole
# `make check`. A mutant is "killed" when some test fails (the table says
# which), "survived" when everything passes (a test is missing: write it),
# "stale" when its pattern no longer matches its file exactly once, "broken"
# when it does not compile (fix the table entry). Prints one line a mutant,
# the score, and exits 0 only when every selected mutant was killed.
#
# Usage: tools/mutants.sh [-j N] [--scratch DIR] [--only ID,...] [--layer L]
#                         [--stale] [--list] [--timeout S] [--no-full]
#   -j N          make's jobs (default 1: the machine is shared).
#   --scratch DIR the scratch tree (default: $TMPDIR/hlorun-mutants-UID-HASH/tree),
#                 kept between runs so that rebuilds stay incremental.
#   --only IDS    only these mutants (comma-separated); --layer only a layer.
#   --stale       only check that every pattern matches once (no build).
#   --list        print the table and exit.
#   --timeout S   one test's time limit (default 300 s; a hang is a failure).
#   --no-full     stop at the related tests: a mutant they miss is reported
#                 "survived" without running the whole suite (quick runs).
# Configure flags for the scratch tree: $MUTANTS_CONFIGURE, else the flags
# the source tree was configured with (config.status --config).
#
# A table entry (tests/mutants/*.txt; blank lines separate entries, '#'
# starts a comment line) is one "key value" line each:
#   id      parser-int-list-comma          unique name
#   layer   parser                         one of the layers below
#   file    parser/attrs.c                 relative to the top of the tree
#   find    sep != 2)) return false;       text that occurs exactly once
#   replace sep > 2)) return false;        what it becomes
#   tests   tests/check_parser ...         related tests, run first
#   why     an integer list accepts ...    the bug, in a few words
set -u
# Check's own per-test limits are for an idle machine; the related tests run
# under `timeout` (--timeout) instead, so a slow shared machine is no kill.
CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-20}
export CK_TIMEOUT_MULTIPLIER
LAYERS="parser ir stablehlo kernels numerics ffi devices protos targets cli debug python"
top=$(cd "$(dirname "$0")/.." && pwd)
jobs=1 scratch= only= layer= stale_only= list_only= timeout_s=300 no_full=
while [ $# -gt 0 ]; do
  case $1 in
    -j) jobs=$2; shift ;;
    -j*) jobs=${1#-j} ;;
    --scratch) scratch=$2; shift ;;
    --only) only=$2; shift ;;
    --layer) layer=$2; shift ;;
    --stale) stale_only=1 ;;
    --list) list_only=1 ;;
    --no-full) no_full=1 ;;
    --timeout) timeout_s=$2; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "mutants.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
case $jobs in ''|*[!0-9]*) echo "mutants.sh: -j wants a number" >&2; exit 2 ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-mutants-run.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM

# ---- The table: one record a line, fields separated by \037. --------------
US=$(printf '\037')
tables=$(ls "$top"/tests/mutants/*.txt 2>/dev/null)
[ -n "$tables" ] || { echo "mutants.sh: no tests/mutants/*.txt in $top" >&2; exit 2; }
# shellcheck disable=SC2086 # table file names have no spaces
awk -v US="$US" -v layers="$LAYERS" '
  function flush() {
    if (!n) return
    for (k in need) if (!(k in r)) { printf "%s:%d: entry without \"%s\"\n", FILENAME, start, k > "/dev/stderr"; bad = 1 }
    if (("id" in r) && (r["id"] in seen)) { printf "%s:%d: id %s used twice\n", FILENAME, start, r["id"] > "/dev/stderr"; bad = 1 }
    if (("layer" in r) && !(r["layer"] in okl)) { printf "%s:%d: unknown layer %s\n", FILENAME, start, r["layer"] > "/dev/stderr"; bad = 1 }
    seen[r["id"]] = 1
    print r["id"] US r["layer"] US r["file"] US r["find"] US r["replace"] US r["tests"] US r["why"]
    delete r; n = 0
  }
  BEGIN { split("id layer file find replace tests why", a, " "); for (i in a) need[a[i]] = 1
          split(layers, l, " "); for (i in l) okl[l[i]] = 1 }
  FNR == 1 { flush() }
  /^#/ { next }
  /^[ \t]*$/ { flush(); next }
  { if (!n) start = FNR
    key = $1; val = $0; sub(/^[^ \t]+[ \t]+/, "", val); if (val == $0) val = ""
    if (!(key in need)) { printf "%s:%d: unknown key %s\n", FILENAME, FNR, key > "/dev/stderr"; bad = 1 }
    r[key] = val; n++ }
  END { flush(); exit bad }' $tables > "$work/table" || exit 2

select_ok() {   # ID LAYER: is this mutant selected?
  [ -z "$layer" ] || [ "$2" = "$layer" ] || return 1
  [ -z "$only" ] || case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac
}

if [ -n "$list_only" ]; then
  while IFS=$US read -r id ly file find repl tests why; do
    select_ok "$id" "$ly" || continue
    printf '%-34s %-9s %s\n    %s\n    find:    %s\n    replace: %s\n    tests:   %s\n' \
      "$id" "$ly" "$why" "$file" "$find" "$repl" "$tests"
  done < "$work/table"
  exit 0
fi

# mutate SRC DST FIND REPLACE: DST = SRC with FIND (fixed text, exactly once)
# replaced; exit 3 when FIND occurs no time, 4 when several times.
mutate() {
  FIND=$3 REPL=$4 awk '
    BEGIN { f = ENVIRON["FIND"]; r = ENVIRON["REPL"] }
    { s = s $0 "\n" }
    END { n = 0; rest = s
      while ((i = index(rest, f)) > 0) { n++; rest = substr(rest, i + length(f)) }
      if (n != 1) exit (n ? 4 : 3)
      i = index(s, f); printf "%s%s%s", substr(s, 1, i - 1), r, substr(s, i + length(f)) }' "$1" > "$2"
}

# ---- Stale entries (checked on the source tree itself). -------------------
nstale=0
: > "$work/stale"
while IFS=$US read -r id ly file find repl tests why; do
  select_ok "$id" "$ly" || continue
  if [ ! -f "$top/$file" ]; then why="$file does not exist"
  else
    mutate "$top/$file" "$work/m" "$find" "$repl"
    case $? in 0) continue ;; 3) why="pattern not found in $file" ;; *) why="pattern occurs more than once in $file" ;; esac
  fi
  nstale=$((nstale + 1)); echo "$id" >> "$work/stale"
  printf '%-34s %-9s %-9s %s\n' "$id" "$ly" stale "$why"
done < "$work/table"
if [ -n "$stale_only" ]; then
  [ $nstale = 0 ] && echo "no stale mutants" && exit 0
  echo "$nstale stale mutant(s): update tests/mutants/*.txt"; exit 1
fi

# ---- The scratch tree: the source files, configured and built once. -------
if [ -z "$scratch" ]; then
  hash=$(printf '%s' "$top" | cksum | cut -d' ' -f1)
  scratch=${TMPDIR:-/tmp}/hlorun-mutants-$(id -u)-$hash/tree
fi
mkdir -p "$scratch" || exit 2
scratch=$(cd "$scratch" && pwd)
# Tests read ../shared (conformance cases, evalcases) beside the tree.
if [ -d "$top/../shared" ] && [ ! -e "$scratch/../shared" ]; then
  ln -s "$(cd "$top/../shared" && pwd)" "$scratch/../shared" 2>/dev/null ||
    echo "note: no ../shared beside $scratch: the tests that read it skip"
fi
[ "$scratch" != "$top" ] || { echo "mutants.sh: the scratch tree cannot be the source tree" >&2; exit 2; }
logs=$scratch/mutants-logs
mkdir -p "$logs"
echo "scratch tree: $scratch (logs in $logs)"
# Copy what differs (git's files: tracked, and new ones not ignored); a
# fresh time stamp on each copy makes make rebuild what depends on it.
( cd "$top" && { git ls-files -co --exclude-standard 2>/dev/null || find . -type f ! -path './.git/*'; } ) |
  while IFS= read -r f; do
    [ -f "$top/$f" ] || continue
    if ! cmp -s "$top/$f" "$scratch/$f"; then
      mkdir -p "$scratch/$(dirname "$f")" && cp "$top/$f" "$scratch/$f" || exit 2
    fi
  done || exit 2
cd "$scratch" || exit 2
if [ ! -f Makefile ]; then
  if [ -n "${MUTANTS_CONFIGURE+set}" ]; then flags=$MUTANTS_CONFIGURE
  elif [ -x "$top/config.status" ]; then flags=$("$top/config.status" --config | sed "s/'//g")
  else flags=; fi
  echo "configuring the scratch tree: ./configure $flags"
  { [ -x configure ] || autoreconf -fi; } > "$logs/configure.log" 2>&1 &&
    # shellcheck disable=SC2086 # the flags are words
    ./configure $flags >> "$logs/configure.log" 2>&1 ||
    { echo "mutants.sh: configuring the scratch tree failed (see $logs/configure.log)" >&2; exit 2; }
fi
echo "building the scratch tree (make -j$jobs)"
make -j"$jobs" all > "$logs/build.log" 2>&1 && make -j"$jobs" check TESTS= > "$logs/build-check.log" 2>&1 ||
  { echo "mutants.sh: the unmutated scratch tree does not build (see $logs/build*.log)" >&2; exit 2; }
# Helper programs the test scripts run (tests/fuzz_replay_*): built with the
# mutant for every related run, so that none runs a stale copy. Asked after
# the build: a Makefile that make regenerates first would print
# config.status's lines ("config.status: creating Makefile") into the list.
printf 'mutants-print-helpers:\n\t@echo $(filter-out tests/check_%%,$(check_PROGRAMS))\n' > "$work/print.mk"
helpers=$(make -s -f Makefile -f "$work/print.mk" mutants-print-helpers 2>/dev/null)

# run_tests LOG TESTS...: make check on TESTS (all of them when none);
# prints the failing tests (FAIL, ERROR or XPASS), nothing when all pass.
run_tests() {
  log=$1; shift
  if [ $# -gt 0 ]; then
    progs=
    for t in "$@"; do case $t in *.sh|*.py) ;; *) progs="$progs $t" ;; esac; done
    make -j"$jobs" check TESTS="$*" check_PROGRAMS="$progs $helpers" \
      LOG_COMPILER="timeout $timeout_s" > "$log" 2>&1
  else
    make -j"$jobs" check LOG_COMPILER="timeout $timeout_s" > "$log" 2>&1
  fi
  rc=$?
  failed=$(sed -n 's/^\(FAIL\|ERROR\|XPASS\): \([^ ]*\).*/\2/p' "$log" | sort -u | tr '\n' ' ')
  [ $rc = 0 ] || [ -n "$failed" ] || failed="(make check exit $rc; see $log)"
  printf '%s' "$failed"
}

# The related tests must pass unmutated, or every kill would be a false one.
all_related=$(while IFS=$US read -r id ly file find repl tests why; do
  select_ok "$id" "$ly" && ! grep -qx "$id" "$work/stale" && echo "$tests"; done < "$work/table" |
  tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ')
echo "baseline: $all_related"
# shellcheck disable=SC2086
base=$(run_tests "$logs/baseline.log" $all_related)
[ -z "$base" ] || { echo "mutants.sh: unmutated, these tests fail: $base (see $logs/baseline.log)" >&2; exit 2; }
full_base=   # the whole suite's failures unmutated, worked out when first needed

start=$(date +%s)
nkilled=0 nsurv=0 nbroken=0 ntotal=0
printf '%-34s %-9s %-9s %s\n' mutant layer result "by (seconds)"
while IFS=$US read -r id ly file find repl tests why; do
  select_ok "$id" "$ly" || continue
  grep -qx "$id" "$work/stale" && continue
  ntotal=$((ntotal + 1))
  t0=$(date +%s)
  cp "$file" "$work/orig"
  mutate "$work/orig" "$work/m" "$find" "$repl" && cat "$work/m" > "$file"
  log=$logs/$id.log
  if ! make -j"$jobs" all > "$log" 2>&1; then
    res=broken by="does not compile (see $log)"; nbroken=$((nbroken + 1))
  else
    # shellcheck disable=SC2086 # test names have no spaces
    by=$(run_tests "$log" $tests)
    if [ -z "$by" ] && [ -z "$no_full" ]; then
      if [ -z "$full_base" ]; then
        cat "$work/orig" > "$file"
        make -j"$jobs" all > "$logs/baseline-full.log" 2>&1
        full_base=$(run_tests "$logs/baseline-full.log")
        [ -n "$full_base" ] && echo "note: unmutated, the whole suite fails: $full_base (not counted as kills)"
        full_base=${full_base:-none}
        cat "$work/m" > "$file"
        make -j"$jobs" all >> "$log" 2>&1
      fi
      by=$(run_tests "$log.full")
      for b in $full_base; do by=$(printf '%s' "$by" | sed "s# $b # #; s#^$b ##"); done
      by=$(printf '%s' "$by" | sed 's/^ *//')
      [ -n "$by" ] && by="$by(whole suite)"
    fi
    if [ -n "$by" ]; then res=killed; nkilled=$((nkilled + 1)); else res=SURVIVED by="-"; nsurv=$((nsurv + 1)); fi
  fi
  cat "$work/orig" > "$file"   # a fresh time stamp: the next build recompiles it
  printf '%-34s %-9s %-9s %s (%ss)\n' "$id" "$ly" "$res" "$by" $(( $(date +%s) - t0 ))
  echo "$ly $res" >> "$work/results"
done < "$work/table"
make -j"$jobs" all > "$logs/build.log" 2>&1 || echo "note: rebuilding the restored scratch tree failed"

secs=$(( $(date +%s) - start ))
[ -f "$work/results" ] && awk '{ n[$1]++; if ($2 == "killed") k[$1]++ }
  END { for (l in n) printf "  %-9s %d of %d killed\n", l, k[l], n[l] }' "$work/results" | sort
pct=0; [ $ntotal = 0 ] || pct=$(( 100 * nkilled / ntotal ))
echo "score: $nkilled of $ntotal mutants killed ($pct%); $nsurv survived, $nbroken broken, $nstale stale; $secs s"
[ $nkilled = "$ntotal" ] && [ $nstale = 0 ]
