#!/bin/sh
# check-layers.sh [-a ALLOW] [SRCDIR]: hlorun's layers run one way, as the
# data flows (README, "Layers"; doc/layers.dot). Reads every #include "..."
# of the sources under SRCDIR (default .) and fails, naming the file, the
# include and the two layers, on
#   - an include that runs up the layers:
#       cli/ -> targets/ -> api/ -> devices/ -> interp/ -> ffi/
#         -> parser/, proto/, stablehlo/ (the front ends) -> ir/ -> common/
#   - two folders that include each other (the same layer, such as two
#     front ends, may include one way only);
#   - a private header included from outside its folder: one whose opening
#     comment says "internal to DIR/" (or "internal to DIR/ and DIR2/", two
#     folders of one floor) or "only DIR/ uses it", and every
#     internal.h (private to its own folder).
# include/ (the public API) may be included from anywhere. tests/, fuzz/,
# bench/ and samples/ sit outside the layers: a unit test may reach the
# private header of what it tests. A folder of sources the table below does
# not know is an error, so a new floor gets a place on purpose.
#
# ALLOW (default SRCDIR/tools/layers-allow.txt) lists known violations being
# removed: "FILE INCLUDE  # issue N: why", one a line. An entry that names
# no issue, or no longer matches a violation, is an error too, so the list
# only shrinks. -l prints the table of layers ("FOLDER RANK LAYER", top
# first) and exits. Exit 0 clean, 1 violations, 2 usage.
allow=
list=
while getopts a:l opt; do
  case $opt in
  a) allow=$OPTARG ;;
  l) list=yes ;;
  *) echo "usage: $0 [-l] [-a ALLOW] [SRCDIR]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
srcdir=${1:-.}
[ -d "$srcdir" ] || { echo "check-layers: $srcdir is not a directory" >&2; exit 2; }
[ -n "$allow" ] || allow=$srcdir/tools/layers-allow.txt
case $allow in /*) ;; *) allow=$(pwd)/$allow ;; esac
cd "$srcdir" || exit 2

# Folder, rank (higher is above), layer name. Folders of one rank are one
# layer. Keep in step with README's "Layers" and doc/layers.dot.
layers='cli 8 cli
targets 7 targets
api 6 run-path
devices 5 run-path
interp 4 run-path
ffi 3 ffi
parser 2 front-end
proto 2 front-end
stablehlo 2 front-end
ir 1 ir
common 0 common'
[ -z "$list" ] || { echo "$layers"; exit 0; }
outside='include tests fuzz bench samples python tools doc m4 build autom4te.cache'

folders=$(echo "$layers" | awk '{print $1}' | tr '\n' ' ')
# Every top-level folder holding C sources must be in one of the two lists
# (a build directory, holding config.status, is not sources).
unknown=
for d in */; do
  [ -d "$d" ] || continue
  d=${d%/}
  case " $folders $outside " in *" $d "*) continue ;; esac
  case $d in _*|.*) continue ;; esac
  [ -e "$d/config.status" ] && continue
  if find "$d" -maxdepth 3 -name '*.[ch]' | grep -q .; then unknown="$unknown $d"; fi
done

files=$(for d in $folders include; do
  [ -d "$d" ] && find "$d" -type f \( -name '*.c' -o -name '*.h' -o -name '*.re' -o -name '*.y' \
    -o -name '*.def' -o -name '*.inc' \)
done | LC_ALL=C sort)
[ -f "$allow" ] || allow=/dev/null

# One pass over every file (and then the allow-list); the checks run at the end.
allowname=${allow#"$(pwd)/"}
# shellcheck disable=SC2086 # $files: one path a word
awk -v layers="$layers" -v unknown="$unknown" -v allowname="${allowname#./}" '
function folder(p) { sub(/\/.*/, "", p); return p }
# Whether file f lies in one of the folders of "A/" or "A/ and B/".
function inside(f, dirs,    d, n, i) {
  n = split(dirs, d, / and /)
  for (i = 1; i <= n; i++) if (index(f, d[i]) == 1) return 1
  return 0
}
function dir(p) { if (p !~ /\//) return ""; sub(/\/[^\/]*$/, "", p); return p }
# Resolve an include as the compiler does (-I include -I . -I builddir):
# beside the file, then from the top, then include/; else a generated file
# under its own top folder, or beside the includer (parser/hlo.h).
function resolve(from, inc,    d, p) {
  d = dir(from)
  p = d == "" ? inc : d "/" inc
  while (p ~ /[^\/]+\/\.\.\//) sub(/[^\/]+\/\.\.\//, "", p)
  if (p in isfile) return p
  if (inc in isfile) return inc
  if (("include/" inc) in isfile) return "include/" inc
  if (folder(inc) in rank && inc ~ /\//) return inc
  return p
}
BEGIN {
  n = split(layers, rows, "\n")
  for (i = 1; i <= n; i++) { split(rows[i], w, " "); rank[w[1]] = w[2]; lname[w[1]] = w[3] }
  n = split(unknown, u, " ")
  for (i = 1; i <= n; i++) {
    print "check-layers: " u[i] "/ holds sources but has no layer: add it to the table in " \
      "tools/check-layers.sh (and to README and doc/layers.dot)"
    bad++
  }
}
FNR == 1 && !inallow {
  isfile[FILENAME] = 1
  if (FILENAME ~ /\/internal\.h$/) priv[FILENAME] = dir(FILENAME) "/"
}
# A generated file (an in-tree build) says what it was made from, which is
# checked instead.
!inallow && FNR <= 2 && /[Gg]enerated by|automatically generated/ { gen[FILENAME] = 1 }
!inallow && (FILENAME in gen) { next }
!inallow && FNR <= 12 && FILENAME ~ /\.h$/ && !(FILENAME in priv) {
  if (match($0, /internal to [A-Za-z0-9_\/]*\/( and [A-Za-z0-9_\/]*\/)?/)) {
    # "internal to A/" or "internal to A/ and B/" (two folders of one floor)
    priv[FILENAME] = substr($0, RSTART + 12, RLENGTH - 12)
  }
  else if (match($0, /[Oo]nly [A-Za-z0-9_\/]*\/ uses it/))
    priv[FILENAME] = substr($0, RSTART + 5, RLENGTH - 13)
}
!inallow && /^[ \t]*#[ \t]*include[ \t]*"/ {
  inc = $0
  sub(/^[^"]*"/, "", inc)
  sub(/".*/, "", inc)
  ninc++
  ifrom[ninc] = FILENAME
  iinc[ninc] = inc
  next
}
inallow {
  text = $0
  sub(/[ \t]*#.*/, "")
  if ($1 == "") next
  if (text !~ /#.*issue [0-9]+/) {
    print allowname ":" FNR ": names no issue (\"FILE INCLUDE  # issue N: why\"): " text
    bad++
  }
  allowed[$1 " " $2] = FNR
}
END {
  for (i = 1; i <= ninc; i++) {
    from = ifrom[i]; inc = iinc[i]; to = resolve(from, inc)
    ff = folder(from); tf = folder(to)
    if (ff == "include" || tf == "include" || !(tf in rank)) continue
    key = from " " inc
    if (rank[tf] > rank[ff])
      viol[key] = from ": #include \"" inc "\": " ff "/ (" lname[ff] ") must not include " \
        tf "/ (" lname[tf] "), a higher layer"
    else if ((to in priv) && !inside(from, priv[to]))
      viol[key] = from ": #include \"" inc "\": " to " is private to " priv[to] \
        " (" from " is outside it)"
    if (ff != tf) {
      e = ff " " tf
      if (!(e in edge)) edge[e] = from " includes " inc
      edges[e] = edges[e] " " i
      ekey[i] = key
    }
  }
  # Two folders that include each other: every include of the direction
  # that does not run down the layers (for one layer: both directions).
  for (e in edge) {
    split(e, ab, " ")
    back = ab[2] " " ab[1]
    if (!(back in edge) || rank[ab[1]] > rank[ab[2]]) continue
    n = split(substr(edges[e], 2), ids, " ")
    for (i = 1; i <= n; i++) {
      k = ekey[ids[i]]
      if (k in viol) continue
      split(k, fi, " ")
      viol[k] = fi[1] ": #include \"" fi[2] "\": " ab[1] "/ (" lname[ab[1]] ") and " ab[2] \
        "/ (" lname[ab[2]] ") include each other (" edge[back] ")"
    }
  }
  for (k in viol) {
    if (k in allowed) { used[k] = 1; continue }
    print viol[k]
    bad++
  }
  for (k in allowed)
    if (!(k in used)) {
      print allowname ":" allowed[k] ": " k ": no such violation any more: remove the line"
      bad++
    }
  if (bad)
    print "check-layers: " bad " problem" (bad == 1 ? "" : "s") " (the layers: README, \"Layers\")"
}' $files inallow=1 "$allow" |
  LC_ALL=C sort -s -k1,1 | awk '/^check-layers: [0-9]/ { last = $0; next } { print }
    END { if (last) { print last; exit 1 } }'
