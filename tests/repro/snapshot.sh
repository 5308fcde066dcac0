#!/bin/sh
# snapshot.sh: hlorun --save-snapshot FILE end to end. The snapshot replays
# to the same result bytes and --expects itself; protoc --decode_raw (a
# decoder that is not hlorun's; Debian's protobuf-compiler) sees the
# HloSnapshot's fields (hlo = 1, arguments = 2, result = 3) and the values,
# checked against numpy (the loop's result computed independently, a
# column-major argument in its physical order); a run on 8 devices writes
# one snapshot per device with that device's arguments. Needs numpy.
set -u
srcdir=${srcdir:-.}
d=$srcdir/tests/repro
H=${HLORUN:-./hlorun}
py=
for p in "${PYTHON3:-python3}" /usr/bin/python3; do
  if "$p" -c 'import numpy' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "FAIL: no python3 with numpy (install the Debian package python3-numpy)"; exit 1; }
protoc=${HLORUN_PROTOC:-}
[ -n "$protoc" ] && [ "$protoc" != no ] || protoc=$(command -v protoc || true)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hlorun-snapshot.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() {
  name=$1 rc_want=$2
  shift 2
  "$H" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" = "$rc_want" ] && { echo "ok: $name"; return 0; }
  fail "$name: exit $rc, want $rc_want"; cat "$tmp/out" "$tmp/err"; return 1
}
# decoded NAME FILE PYTHON: PYTHON's assertions hold on FILE's decode_raw
# text (fields(text, n): the top-level messages numbered n; floats(msg):
# the f32s of a LiteralProto).
decoded() {
  [ -n "$protoc" ] || { echo "skip: $1 (protoc not installed: Debian package protobuf-compiler)"; return 0; }
  "$protoc" --decode_raw <"$2" >"$tmp/raw" || { fail "$1: protoc --decode_raw failed"; return 1; }
  if "$py" - "$tmp/raw" >"$tmp/py" 2>&1 <<PYEOF
import sys, re, codecs, numpy as np
text = open(sys.argv[1]).read()
def fields(text, n):
    out, depth, cur = [], 0, None
    for line in text.splitlines():
        if depth == 0 and line == '%d {' % n: cur = []
        if cur is not None: cur.append(line)
        depth += line.endswith('{') - (line.strip() == '}')
        if depth == 0 and cur is not None: out.append('\n'.join(cur)); cur = None
    return out
def floats(msg):
    m = re.search(r'^  8: "(.*)"$', msg, re.M)
    return np.frombuffer(codecs.escape_decode(m.group(1).encode('latin-1'))[0], '<f4')
$3
PYEOF
  then echo "ok: $1"; else fail "$1"; cat "$tmp/py"; fi
}

"$py" -c "
import numpy as np
np.save('$tmp/x.npy', np.array([1, 2, 3, 4], np.float32))
np.save('$tmp/x2.npy', np.array([1, 2, 4, 4], np.float32))
np.save('$tmp/m.npy', np.array([[1, 2, 3], [4, 5, 6]], np.float32))"

# A loop: the snapshot replays to the same bytes and --expects itself; run
# on another input, the recorded result differs.
run save 0 "$d/loop.hlo" "$tmp/x.npy" --save-snapshot "$tmp/loop.pb" -o "$tmp/r1.npy"
run replay 0 "$tmp/loop.pb" -o "$tmp/r2.npy"
cmp -s "$tmp/r1.npy" "$tmp/r2.npy" && echo "ok: same bytes" || fail "replay: result bytes differ"
run expects-itself 0 "$tmp/loop.pb" --expect "$tmp/loop.pb"
run other-input-differs 1 "$d/loop.hlo" "$tmp/x2.npy" --expect "$tmp/loop.pb"
decoded decode-raw "$tmp/loop.pb" "
x = np.array([1, 2, 3, 4], np.float32); c = np.array([0.5, 1, 2, -1], np.float32)
hlo, args, res = fields(text, 1), fields(text, 2), fields(text, 3)
assert len(hlo) == 1 and len(args) == 1 and len(res) == 1, (len(hlo), len(args), len(res))
assert '    1: \"w\"' in hlo[0] and '    2: \"main\"' in hlo[0], hlo[0][:200]
assert np.array_equal(floats(args[0]), x), floats(args[0])
assert np.array_equal(floats(res[0]), x * (1 + c) ** 3), floats(res[0])"

# A column-major parameter: its argument is written in physical order.
run layout 0 "$d/layout.hlo" "$tmp/m.npy" --save-snapshot "$tmp/layout.pb"
decoded layout-physical-order "$tmp/layout.pb" "
assert np.array_equal(floats(fields(text, 2)[0]), [1, 4, 2, 5, 3, 6]), floats(fields(text, 2)[0])
assert np.array_equal(floats(fields(text, 3)[0]), [-1, -2, -3, -4, -5, -6])"
run layout-replay 0 "$tmp/layout.pb" --expect "$tmp/layout.pb"

# A tuple result (the suite's while_tuple case) replays the same.
W=$srcdir/samples/suite/while_tuple
run tuple 0 "$W/module.hlo" "$W"/in0.* --save-snapshot "$tmp/tuple.pb" -o "$tmp/t1.npz"
run tuple-replay 0 "$tmp/tuple.pb" -o "$tmp/t2.npz" --expect "$W"/expected.*
"$py" -c "
import numpy as np
a, b = np.load('$tmp/t1.npz'), np.load('$tmp/t2.npz')
assert a.files == b.files and all(np.array_equal(a[k], b[k]) for k in a.files)" ||
  fail "tuple-replay: results differ"

# Eight devices: one snapshot each, with that device's own arguments
# (partition 5 holds x's rows 4..7).
S=$srcdir/samples/spmd
run devices 0 "$S/mlp_2x4.hlo" "$S"/mlp.in0.txt "$S"/mlp.in1.txt "$S"/mlp.in2.txt "$S"/mlp.in3.txt \
  --save-snapshot "$tmp/mlp.pb"
for i in 0 1 2 3 4 5 6 7; do [ -s "$tmp/mlp.d$i.pb" ] || fail "devices: no $tmp/mlp.d$i.pb"; done
[ -e "$tmp/mlp.pb" ] && fail "devices: wrote $tmp/mlp.pb too"
decoded device-5-arguments "$tmp/mlp.d5.pb" "
s = open('$S/mlp.in0.txt').read()
X = np.array(eval(s[s.index('{'):].replace('{', '[').replace('}', ']')), np.float32)
args = fields(text, 2)
assert len(args) == 4, len(args)
assert np.array_equal(floats(args[0]), X[4:8].ravel()), floats(args[0])"

run unwritable 2 "$d/loop.hlo" "$tmp/x.npy" --save-snapshot "$tmp/no/such/dir/s.pb"
grep -qF "cannot write $tmp/no/such/dir/s.pb" "$tmp/err" || fail "unwritable: no message"
exit $((fails > 0))
