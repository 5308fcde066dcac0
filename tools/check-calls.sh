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
for o in "$@"; do
  "$NM" "$o" >/dev/null 2>&1 || { echo "check-calls: cannot read $o" >&2; exit 2; }
  src=$(echo "$o" | sed -e 's|\.libs/||' -e 's|\.l\{0,1\}o$|.c|' -e 's|/[A-Za-z0-9_]*-\([^/]*\.c\)$|/\1|')
  "$NM" "$o" | awk -v src="$src" '
    $1 == "U" { print "U", src, $2; next }
    NF == 3 && $2 ~ /^[TDBRCGSV]$/ { print "D", src, $3 }'
done | awk '
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
