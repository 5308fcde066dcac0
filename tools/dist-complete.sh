#!/bin/sh
# dist-complete.sh SRCDIR DISTDIR: every file git tracks in SRCDIR must be
# in the release tree DISTDIR, except those tools/dist-exclude.txt names
# (shell patterns, one a line): a file a test, sample or build step needs but
# EXTRA_DIST forgot fails here, whether or not `make distcheck` runs the test
# that needs it. Skips (exit 0) outside a git checkout.
srcdir=$1
distdir=$2
git -C "$srcdir" rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
  echo "dist-complete: $srcdir is not a git checkout; not checked"; exit 0; }
exclude="$srcdir/tools/dist-exclude.txt"
missing=$(git -C "$srcdir" ls-files | while IFS= read -r f; do
  [ -e "$distdir/$f" ] && continue
  skip=
  while IFS= read -r pat; do
    case $pat in ''|'#'*) continue ;; esac
    # shellcheck disable=SC2254 # the patterns are meant to match
    case $f in $pat) skip=yes; break ;; esac
  done < "$exclude"
  [ -n "$skip" ] || echo "$f"
done)
if [ -n "$missing" ]; then
  echo "dist-complete: files git tracks that the release tarball lacks" >&2
  echo "(add them to EXTRA_DIST, or to tools/dist-exclude.txt if they are not for the tarball):" >&2
  echo "$missing" | sed 's/^/  /' >&2
  exit 1
fi
echo "dist-complete: every tracked file is in $distdir"
