#!/bin/sh
# extract.sh: hlorun --extract NAME[@K][#D][:DEPTH] DIR end to end. The
# case directories it writes hold the real values of this run, checked here
# against values numpy computes independently from the inputs (the loop's
# state at iteration K, exp of the input, sin in a branch); they replay
# (--replay, --suite, sh DIR/command); bad specs and directories are exit 2
# with a clear message. Needs numpy (python3-numpy).
set -u
srcdir=${srcdir:-.}
d=$srcdir/tests/repro
H=${HLORUN:-./hlorun}
case $H in /*) ;; *) H=$(pwd)/$H ;; esac
hl_name=extract
. "$srcdir/tests/lib/harness.sh"
need_numpy
# check NAME PYTHON: the assertions of PYTHON hold (np, load(dir, base) given).
check() {
  name=$1
  if "$py" - "$tmp" >"$tmp/py" 2>&1 <<PYEOF
import sys, os, numpy as np
t = sys.argv[1]
def load(case, base):
    for ext in ('npy', 'npz'):
        p = os.path.join(t, case, base + '.' + ext)
        if os.path.exists(p):
            v = np.load(p)
            return [v['arr_%d' % i] for i in range(len(v.files))] if ext == 'npz' else v
    raise AssertionError('no %s in %s' % (base, case))
def inputs(case):
    return sorted(f for f in os.listdir(os.path.join(t, case)) if f.startswith('in'))
f32 = np.float32
$2
PYEOF
  then echo "ok: $name"; else fail "$name"; cat "$tmp/py"; fi
}

"$py" -c "
import numpy as np
np.save('$tmp/x.npy', np.array([1, 2, 3, 4], np.float32))
np.save('$tmp/p.npy', np.array([0.5, -1, 2], np.float32))
np.save('$tmp/i1.npy', np.array(1, np.int32))
np.save('$tmp/v.npy', np.array([0.5, -1, 2], np.float32))"

# In a fusion inside a while body, iteration 1: the fusion's parameters are
# the loop value after one trip (x * (1 + c)) and the constant c.
run fusion-in-loop 0 "$d/loop.hlo" "$tmp/x.npy" --extract 'fused/m@1' "$tmp/fm1" &&
  has fusion-in-loop-says "$tmp/err" "extracted m (multiply, line 7) run 1 to $tmp/fm1: 2 inputs"
check fusion-in-loop-values "
x = np.array([1, 2, 3, 4], f32); c = np.array([0.5, 1, 2, -1], f32)
after1 = x * (f32(1) + c)
assert inputs('fm1') == ['in0.npy', 'in1.npy'], inputs('fm1')
assert np.array_equal(load('fm1', 'in0'), after1), load('fm1', 'in0')
assert np.array_equal(load('fm1', 'in1'), c)
assert np.array_equal(load('fm1', 'expected'), after1 * c)"

# DEPTH 1 from the body's fusion at iteration 2: the get-tuple-element and the
# constant are kept, the loop state (a tuple) is the one input, as .npz.
run body-depth 0 "$d/loop.hlo" "$tmp/x.npy" --extract 'body/y@2:1' "$tmp/by2"
check body-depth-values "
x = np.array([1, 2, 3, 4], f32); c = np.array([0.5, 1, 2, -1], f32)
assert inputs('by2') == ['in0.npz'], inputs('by2')
i, state = load('by2', 'in0')
assert i == 2, i
assert np.array_equal(state, x * (f32(1) + c) * (f32(1) + c)), state
assert np.array_equal(load('by2', 'expected'), state * (f32(1) + c))
m = open(t + '/by2/module.hlo').read()
assert 'calls=%fused' in m and '%fused (' in m and 'constant({0.5, 1, 2, -1})' in m, m"

# A value read twice is one input; inputs follow the computation's order.
run twice-depth1 0 "$d/twice.hlo" "$tmp/p.npy" --extract d:1 "$tmp/d1"
run twice-depth0 0 "$d/twice.hlo" "$tmp/p.npy" --extract d "$tmp/d0"
run twice-depth2 0 "$d/twice.hlo" "$tmp/p.npy" --extract d:2 "$tmp/d2"
check twice-values "
p = np.array([0.5, -1, 2], f32)
a = np.exp(p.astype(np.float64))
assert inputs('d1') == ['in0.npy'], inputs('d1')
assert np.allclose(load('d1', 'in0'), a, rtol=1e-6, atol=0)
assert np.allclose(load('d1', 'expected'), 5 * a, rtol=1e-6, atol=0)
assert inputs('d0') == ['in0.npy', 'in1.npy'], inputs('d0')
assert np.allclose(load('d0', 'in0'), 3 * a, rtol=1e-6, atol=0)
assert np.allclose(load('d0', 'in1'), 2 * a, rtol=1e-6, atol=0)
assert inputs('d2') == ['in0.npy'] and np.array_equal(load('d2', 'in0'), p)
m = open(t + '/d1/module.hlo').read()
assert 'parameter(0)' in m and 'parameter(1)' not in m and 'constant({3, 3, 3})' in m, m
assert 'exponential' not in m, m"

# In the branch the conditional took; the other branch never ran.
run branch 0 "$d/branch.hlo" "$tmp/i1.npy" "$tmp/v.npy" --extract 'b1/s:1' "$tmp/b1"
check branch-values "
v = np.sin(np.array([0.5, -1, 2], np.float64))
assert inputs('b1') == ['in0.npy'], inputs('b1')
assert np.allclose(load('b1', 'in0'), v, rtol=1e-6, atol=1e-7)
assert np.allclose(load('b1', 'expected'), -v - 3, rtol=1e-6, atol=1e-6)"
run branch-not-taken 2 "$d/branch.hlo" "$tmp/i1.npy" "$tmp/v.npy" --extract 'b0/r' "$tmp/b0" &&
  has branch-not-taken "$tmp/err" "--extract: r never ran"

# One device of a multi-device run (partition 5 of 8: x's rows 4..7, b1's
# slice at offsets[5] = 8); a collective cannot be cut from its devices.
S=$srcdir/samples/spmd
run device 0 "$S/mlp_2x4.hlo" "$S/mlp.in0.txt" "$S/mlp.in1.txt" "$S/mlp.in2.txt" "$S/mlp.in3.txt" \
  --extract 'hb#5:1' "$tmp/dev5"
check device-values "
def lit(f):
    s = open(f).read()
    return np.array(eval(s[s.index('{'):].replace('{', '[').replace('}', ']')), f32)
X, W1, B1 = (lit('$S/mlp.in%d.txt' % i) for i in range(3))
x, w1, b1s = load('dev5', 'in0'), load('dev5', 'in1'), load('dev5', 'in2')
assert inputs('dev5') == ['in0.npy', 'in1.npy', 'in2.npy'], inputs('dev5')
assert np.array_equal(x, X[4:8]), x
assert np.array_equal(b1s, B1[8:16]), b1s
assert any(np.array_equal(w1, W1[:, 8 * j:8 * j + 8]) for j in range(4)), w1
assert np.allclose(load('dev5', 'expected'), x.astype(np.float64) @ w1 + b1s, rtol=1e-6, atol=1e-6)"
run device-collective 2 "$S/mlp_2x4.hlo" "$S/mlp.in0.txt" "$S/mlp.in1.txt" "$S/mlp.in2.txt" \
  "$S/mlp.in3.txt" --extract 'ar#5' "$tmp/ar" && has device-collective "$tmp/err" "holds a collective"

# Every case replays: --replay, --suite, and its command file.
for c in fm1 by2 d0 d1 d2 b1 dev5; do
  run "replay-$c" 0 --replay "$tmp/$c"
  HLORUN=$H sh "$tmp/$c/command" >/dev/null 2>&1 || fail "command-$c: sh $tmp/$c/command failed"
done
run suite 0 --suite -j2 "$tmp/fm1" "$tmp/by2" "$tmp/d0" "$tmp/d1" "$tmp/d2" "$tmp/b1" &&
  has suite "$tmp/out" "6 passed, 0 failed"
# A case whose golden was tampered with fails its replay: the replay compares.
cp -r "$tmp/d1" "$tmp/bad"
"$py" -c "import numpy as np; np.save('$tmp/bad/expected.npy', np.array([1, 2, 3], np.float32))"
run replay-compares 1 --replay "$tmp/bad"

# Bad input: exit 2 and a clear message, nothing written.
run unknown-name 2 "$d/loop.hlo" "$tmp/x.npy" --extract mm "$tmp/u" &&
  has unknown-name "$tmp/err" "has no instruction 'mm'; close names: fused/m"
[ -e "$tmp/u" ] && fail "unknown-name: created $tmp/u"
run negative-depth 2 "$d/twice.hlo" "$tmp/p.npy" --extract d:-1 "$tmp/n" &&
  has negative-depth "$tmp/err" "DEPTH '-1' is negative"
run no-such-run 2 "$d/loop.hlo" "$tmp/x.npy" --extract 'body/y@7' "$tmp/r7" &&
  has no-such-run "$tmp/err" "y ran 3 times; there is no run 7"
run missing-dir 2 "$d/twice.hlo" --extract d
run not-empty 2 "$d/twice.hlo" "$tmp/p.npy" --extract d:2 "$tmp/d0" &&
  has not-empty "$tmp/err" "is not empty (--force writes the case there anyway)"
# --force replaces the old case: d0's second input must not survive.
run force 0 "$d/twice.hlo" "$tmp/p.npy" --force --extract d:2 "$tmp/d0"
check force-replaces "assert inputs('d0') == ['in0.npy'], inputs('d0')"
run force-replays 0 --replay "$tmp/d0"
finish
