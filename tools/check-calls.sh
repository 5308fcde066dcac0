#!/bin/sh
# check-calls.sh OBJECT...: no two source files of a folder call each other
# both ways (README, "Layers"). Reads the symbols each compiled object
# defines and uses (nm) and fails, naming both files and one function each
# way, on a pair of objects that use each other's functions or data. The
# source is named from the object: cli/hlorun-run.o and ffi/.libs/call.o
# are cli/run.c and ffi/call.c. Recursion inside one file is not a pair.
# Exit 0 clean, 1 a pair found, 2 an object cannot be read.
[ $# -gt 0 ] || { echo "usage: $0 OBJECT..." >&2; exit 2; }
NM=${NM:-nm}
# One nm over every object (-A: each line starts "OBJECT:"): a process per
# object made this check the slowest static one on a loaded machine.
err=$("$NM" -A "$@" 2>&1 >/dev/null) || {
  echo "check-calls: cannot read: $err" >&2; exit 2; }
"$NM" -A "$@" | awk '
  { o = $1; sub(/:[^:]*$/, "", o); if (!(o in src)) { s = o; sub(/\.libs\//, "", s)
      sub(/\.l?o$/, ".c", s); if (s ~ /\/[A-Za-z0-9_]*-[^\/]*\.c$/) sub(/\/[A-Za-z0-9_]*-/, "/", s)
      src[o] = s } }
  $2 == "U" { print "U", src[o], $3; next }
  NF == 3 && $2 ~ /^[TDBRCGSV]$/ { print "D", src[o], $3 }' | awk '
$1 == "D" { def[$3] = $2; next }
$1 == "U" { nu++; ufile[nu] = $2; usym[nu] = $3 }
END {
  for (i = 1; i <= nu; i++) {
    s = usym[i]
    if (!(s in def) || def[s] == ufile[i]) continue
    e = ufile[i] " " def[s]
    if (!(e in why)) why[e] = s
  }
  for (e in why) {
    split(e, ab, " ")
    back = ab[2] " " ab[1]
    if (!(back in why) || ab[1] > ab[2]) continue
    print ab[1] " and " ab[2] " call each other: " ab[1] " uses " why[e] ", " ab[2] " uses " why[back]
    bad++
  }
  if (bad) { print "check-calls: " bad " pair" (bad == 1 ? "" : "s") " of files calling each other"; exit 1 }
}'
