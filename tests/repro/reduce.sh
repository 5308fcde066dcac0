#!/bin/sh
# reduce.sh: hlorun --reduce CONDITION -o DIR end to end. Each reduced case
# is checked against values numpy works out independently (the planted
# log's operand at iteration 3, the crashing call's operand, a loop body's
# state at the iteration a reference diverges), replays its
# condition through its own command file, and is the same bytes when the
# reduction runs again; bad input is exit 2 with a clear message. Needs
# numpy (python3-numpy).
set -u
srcdir=${srcdir:-.}
d=$srcdir/tests/repro
H=${HLORUN:-./hlorun}
case $H in /*) ;; *) H=$(pwd)/$H ;; esac
lib=$(pwd)/tests/.libs/libcrashwhen.so
[ -f "$lib" ] || { echo "FAIL: $lib is not built (make check builds it)"; exit 1; }
hl_name=reduce
. "$srcdir/tests/lib/harness.sh"
need_numpy
# has NAME FILE REGEX: here an extended regular expression.
has() {
  grep -qE -- "$3" "$2" || { fail "$1: no '$3' in $(basename "$2")"; cat "$2"; return 1; }
  echo "ok: $1"
}
check() {
  name=$1
  if "$py" - "$tmp" >"$tmp/py" 2>&1 <<PYEOF
import sys, os, re, numpy as np
t = sys.argv[1]
def instrs(case):
    return [l for l in open(os.path.join(t, case, 'module.hlo')) if re.match(r'\s+(ROOT )?%\S+ = ', l)]
def inputs(case):
    return sorted(f for f in os.listdir(os.path.join(t, case)) if f.startswith('in'))
def f32_bits(tok):
    # one element as XLA's round-trip form writes it: nan, -nan, nan(0xPAYLOAD), inf
    m = re.fullmatch(r'(-?)nan(?:\(0x([0-9a-f]+)\))?', tok)
    if m:
        return (0x80000000 if m.group(1) else 0) | 0x7f800000 | int(m.group(2) or '400000', 16)
    return int(np.array([float(tok)], np.float32).view(np.uint32)[0])
def consts(case):
    # the f32 constants of the case, by name, as arrays (from their literal text)
    out = {}
    for l in instrs(case):
        m = re.match(r'\s+(?:ROOT )?%(\S+) = f32\[[0-9,]*\]\S* constant\((.*)\)$', l)
        if m:
            toks = [x for x in re.split(r'[{},\s]+', m.group(2)) if x]
            out[m.group(1)] = np.array([f32_bits(x) for x in toks], np.uint32).view(np.float32)
    return out
f32 = np.float32
$2
PYEOF
  then echo "ok: $name"; else fail "$name"; cat "$tmp/py"; fi
}
# replays NAME CASE RC PATTERN: sh CASE/command exits RC and says PATTERN.
replays() {
  (cd "$tmp" && HLORUN=$H sh "$tmp/$2/command" >"$tmp/out" 2>"$tmp/err" </dev/null)
  rc=$?
  [ "$rc" = "$3" ] || { fail "$1: sh $2/command: exit $rc, want $3"; cat "$tmp/err"; return 1; }
  has "$1" "$tmp/err" "$4"
}

"$py" "$d/gen_nan_module.py" "$tmp/nan.hlo" "$tmp" || { echo "FAIL: gen_nan_module.py"; exit 1; }
"$py" -c "import numpy as np; np.save('$tmp/x4.npy', np.array([1, 2, 3, 4], np.float32))"

# The planted NaN: 207 instructions; a log of a negative value at iteration
# 3 of the while body. At most a dozen instructions remain, the check-nan
# stop is still a log, and the log's operand is the real value it had.
run nan 0 --reduce nan -o "$tmp/nan" "$tmp/nan.hlo" "$tmp/x.npy" &&
  has nan-summary "$tmp/err" "reduce: .*nan.hlo: 20[0-9] -> [0-9]+ instructions, [0-9]+ candidates tried, [0-9.]+ s; focus lg \(run 3\)"
has nan-progress "$tmp/err" "^reduce: [0-9]+ candidates tried, smallest [0-9]+ instructions"
# u has 8 elements (at most 16): it is a constant in the module, no input.
check nan-case "
n = len(instrs('nan'))
assert n <= 12, n
lg = [l for l in instrs('nan') if ' log(' in l]
assert len(lg) == 1, instrs('nan')
u = consts('nan')[re.search(r'log\\(%(\\S+)\\)', lg[0]).group(1)]
assert inputs('nan') == [], inputs('nan')
assert np.allclose(u, np.load(t + '/u3.npy'), rtol=1e-6, atol=0), (u, np.load(t + '/u3.npy'))
assert (u < 0).all(), u"
replays nan-replays nan 2 "check-nan: lg \(log\) produced 8 NaN"
# Deterministic: the same input, the same case (module and values).
run nan-again 0 --reduce nan -o "$tmp/nan2" "$tmp/nan.hlo" "$tmp/x.npy"
cmp -s "$tmp/nan/module.hlo" "$tmp/nan2/module.hlo" && [ -z "$(ls "$tmp/nan2" | grep '^in')" ] &&
  echo "ok: nan-deterministic" || fail "nan-deterministic: a second reduction wrote another case"

# A handler that crashes only for operands below -10: c1 reads b = x, fine;
# c2 reads g = 3 - 4 * (x + 2x) = 3 - 12x: only c2 crashes, and the case is
# c2 alone with g's real value.
run crash 0 --reduce crash --isolate-custom-calls --custom-call "neg_crash=$lib" -o "$tmp/crash" \
  "$d/crash.hlo" "$tmp/x4.npy" &&
  has crash-summary "$tmp/err" "crash.hlo: 20 -> 2 instructions, .* focus c2 \(run 0\)"
check crash-case "
x = np.array([1, 2, 3, 4], f32)
assert len(instrs('crash')) == 2, instrs('crash')
assert 'custom-call(%g)' in instrs('crash')[1] and 'neg_crash' in instrs('crash')[1], instrs('crash')
assert inputs('crash') == [], inputs('crash')
assert np.array_equal(consts('crash')['g'], f32(3) - f32(4) * (x + f32(2) * x))"
[ -z "$(ls -d hlorun-crash-* 2>/dev/null)" ] && echo "ok: crash-no-litter" ||
  fail "crash-no-litter: the reducer's own crashes left hlorun-crash-* in $(pwd)"
replays crash-replays crash 2 'custom-call target "neg_crash" crashed with signal 11'

# error=REGEX: the same story through the status (api_version 2).
run error 0 --reduce 'error=neg_fail: element [0-9]+ is -[0-9]+, below -10' \
  --custom-call "neg_fail=$lib" -o "$tmp/error" "$d/error.hlo" "$tmp/x4.npy"
check error-case "
x = np.array([1, 2, 3, 4], f32)
assert len(instrs('error')) == 2 and 'neg_fail' in instrs('error')[1], instrs('error')
assert inputs('error') == [], inputs('error')
assert np.array_equal(consts('error')['g'], f32(3) - f32(12) * x)"
replays error-replays error 2 "neg_fail: element 0 is -9, below -10|neg_fail: element 1 is -21, below -10"

# The rule for constants: a cut value of at most 16 elements becomes a
# constant, printed so that it reads back bit for bit (NaN with its sign
# and payload, infinities, -0, a denormal, 0.1); 17 elements stay an input.
for n in 16 17; do
  cat >"$tmp/exact$n.hlo" <<HLO
HloModule exact$n

ENTRY main {
  x = f32[$n] parameter(0)
  one = f32[] constant(1)
  ones = f32[$n] broadcast(one), dimensions={}
  k = f32[$n] multiply(x, ones)
  e = f32[$n] exponential(k)
  c = f32[$n] custom-call(k), custom_call_target="neg_fail", api_version=API_VERSION_STATUS_RETURNING
  ROOT r = f32[$n] add(c, e)
}
HLO
  "$py" -c "
import numpy as np
bits = [0xc1300000, 0x7fc00000, 0xffc00000, 0x7f800000, 0xff800000, 0x80000000, 0x3dcccccd,
        0x00000001, 0x7f7fffff, 0x7fc00001, 0xffc12345]
x = np.array(bits, np.uint32).view(np.float32)
x = np.concatenate([x, (np.arange($n - len(x), dtype=np.float32) + 1) / np.float32(3)])
np.save('$tmp/xe$n.npy', x)"
  run exact$n 0 --reduce 'error=element 0 is -11' --custom-call "neg_fail=$lib" \
    -o "$tmp/exact$n" "$tmp/exact$n.hlo" "$tmp/xe$n.npy"
done
check exact16-constant "
x = np.load(t + '/xe16.npy')
l = instrs('exact16')
assert len(l) == 2 and 'custom-call(%k)' in l[1], l
assert inputs('exact16') == [], inputs('exact16')
assert np.array_equal(consts('exact16')['k'].view(np.uint32), (x * f32(1)).view(np.uint32)), consts('exact16')"
replays exact16-replays exact16 2 "neg_fail: element 0 is -11, below -10"
check exact17-input "
x = np.load(t + '/xe17.npy')
l = instrs('exact17')
assert len(l) == 2 and 'parameter(0)' in l[0] and 'custom-call(%k)' in l[1], l
assert inputs('exact17') == ['in0.npy'], inputs('exact17')
assert np.array_equal(np.load(t + '/exact17/in0.npy').view(np.uint32), (x * f32(1)).view(np.uint32))"

# command=: a script that holds while the module still has a custom call
# reading a value below -10 (in0.npy); the reducer keeps only what it needs.
cat >"$tmp/has_call.sh" <<'SH'
#!/bin/sh
grep -q 'custom-call(' "$1/module.hlo" || exit 1
grep -q 'neg_crash' "$1/module.hlo"
SH
chmod +x "$tmp/has_call.sh"
# error.hlo's targets are neg_fail: the script never holds there.
run command-not-holding 2 --reduce "command=$tmp/has_call.sh" --custom-call "neg_fail=$lib" \
  -o "$tmp/cmd0" "$d/error.hlo" "$tmp/x4.npy" &&
  has command-not-holding "$tmp/err" "does not hold on .*error.hlo: nothing to reduce"
run command 0 --reduce "command=$tmp/has_call.sh" --isolate-custom-calls \
  --custom-call "neg_crash=$lib" -o "$tmp/cmd" "$d/crash.hlo" "$tmp/x4.npy"
# ENTRY's ROOT stays (command= is about the whole module); what the crash
# never let run (u) cannot be cut, what ran before it becomes constants
# (4 elements each), so the case has no inputs.
check command-case "
x = np.array([1, 2, 3, 4], f32)
l = instrs('cmd')
assert any('neg_crash' in x for x in l), l
assert len(l) == 6 and 'exponential' not in ''.join(l), l
assert inputs('cmd') == [], inputs('cmd')
c = consts('cmd')
assert sorted(c) == ['a', 'g', 'h'], c
assert np.array_equal(c['a'], x + f32(1))
assert np.array_equal(c['h'], f32(2) * x)
assert np.array_equal(c['g'], f32(3) - f32(12) * x)"
(cd "$tmp" && sh "$tmp/cmd/command") && echo "ok: command-replays" || fail "command-replays: $tmp/cmd/command"

# Attributes: those that do not change the outcome go (tried all at once,
# then one kind at a time), a custom call's backend_config stays. Script
# one holds while there is a subtract and the neg_fail call: every
# metadata, frontend_attributes and the subtract's backend_config go.
# Script two also wants the call's op_name: metadata stays, the rest goes.
cat >"$tmp/attrs1.sh" <<'SH'
#!/bin/sh
grep -q ' subtract(' "$1/module.hlo" && grep -q 'neg_fail' "$1/module.hlo"
SH
cat >"$tmp/attrs2.sh" <<'SH'
#!/bin/sh
grep -q ' subtract(' "$1/module.hlo" && grep -q 'op_name="jit(f)/call"' "$1/module.hlo"
SH
chmod +x "$tmp/attrs1.sh" "$tmp/attrs2.sh"
for k in 1 2; do
  run attrs$k 0 --reduce "command=$tmp/attrs$k.sh" --custom-call "neg_fail=$lib" \
    -o "$tmp/attrs$k" "$d/attrs.hlo" "$tmp/x4.npy"
done
check attrs-dropped "
l = ''.join(instrs('attrs1'))
assert ' subtract(' in l and 'backend_config=\"keep me\"' in l, l
for a in ('metadata=', 'frontend_attributes=', 'backend_config={', 'backend_config=\"b\"'):
    assert a not in l, (a, l)"
check attrs-kept-when-needed "
l = ''.join(instrs('attrs2'))
assert 'op_name=\"jit(f)/call\"' in l and 'backend_config=\"keep me\"' in l, l
for a in ('frontend_attributes=', 'backend_config={', 'backend_config=\"b\"'):
    assert a not in l, (a, l)"

# A fusion as ENTRY's ROOT (fused.hlo): the reducer inlines it, so the case
# is the fused ROOT's add alone, its operands constants with the values
# numpy works out; no fusion and no fused computation remain.
"$py" -c "
import numpy as np
x = np.array([0.5, 0.25, 0.125, 0], np.float32)
np.save('$tmp/xs.npy', x)
np.save('$tmp/fgold.npy', np.float32(1) + x)"
run fusion 0 --reduce mismatch --expect "$tmp/fgold.npy" -o "$tmp/fus" "$d/fused.hlo" "$tmp/xs.npy" &&
  has fusion-summary "$tmp/err" "fused.hlo: 15 -> 3 instructions"
check fusion-case "
x = np.array([0.5, 0.25, 0.125, 0], f32)
l = instrs('fus')
assert len(l) == 3 and l[-1].lstrip().startswith('ROOT %r = f32[4]{0} add(%t6, %b)'), l
text = open(t + '/fus/module.hlo').read()
assert 'fusion' not in text and '%fused' not in text, text
a = x + f32(1); b = a * a
eb = np.exp(b)
t6 = ((a * a + b) - eb + eb) * a
c = consts('fus')
assert np.array_equal(c['b'], b), c
assert np.allclose(c['t6'], t6, rtol=1e-6, atol=0), (c, t6)"
replays fusion-replays fus 1 "mismatch"

# A NaN (here -inf: log 0) made inside a fusion: the inlined fusion's log
# reads its operand a.f (renamed: ENTRY has an a) = (x - 1)^3 as a constant.
run fusion-nan 0 --reduce nan -o "$tmp/fusnan" "$d/nanfus.hlo" "$tmp/x4.npy" &&
  has fusion-nan-summary "$tmp/err" "nanfus.hlo: 12 -> 2 instructions, .* focus l \\(run 0\\)"
check fusion-nan-case "
x = np.array([1, 2, 3, 4], f32)
l = instrs('fusnan')
assert len(l) == 2 and l[1].lstrip().startswith('ROOT %l = f32[4]{0} log(%a.f)'), l
a = x - f32(1)
assert np.array_equal(consts('fusnan')['a.f'], a * (a * a)), consts('fusnan')"
replays fusion-nan-replays fusnan 2 "check-nan: l \\(log\\) produced 1 infinity"

# mismatch: the golden is 3 * g + 1 where the module computes r from c2 =
# 2 * g (a wrong handler); x = {1,2,3,4} stays above the crash threshold
# with x small: use x = {0.5, 0.25, 0.125, 0} (g = 3 - 12x > -10).
"$py" -c "
import numpy as np
x = np.array([0.5, 0.25, 0.125, 0], np.float32)
np.save('$tmp/xs.npy', x)
a = x + np.float32(1); b = a - np.float32(1); h = np.float32(2) * b
g = np.float32(3) - np.float32(4) * (x + h)
np.save('$tmp/golden.npy', np.float32(3) * g + a + h)   # c2 should have been 3 * g
"
run mismatch 0 --reduce mismatch --expect "$tmp/golden.npy" --custom-call "neg_crash=$lib" \
  -o "$tmp/mis" "$d/crash.hlo" "$tmp/xs.npy"
check mismatch-case "
l = instrs('mis')
assert l[-1].lstrip().startswith('ROOT %r = '), l
assert len(l) <= 4, l
assert os.path.exists(t + '/mis/expected.npy')"
replays mismatch-replays mis 1 "mismatch"

# mismatch against --reference REF: REF is crash.hlo with c2 = 3 * g (what
# the golden above says). The first divergence is c2 (c1 agrees): the case
# is c2 alone, g its real value, expected.npy REF's c2 = 3 * g, which numpy
# works out (not a copy of the module's values).
sed 's/^  c2 = .*/  c2 = f32[4] multiply(g, threes)/' "$d/crash.hlo" >"$tmp/ref.hlo"
run mismatch-ref 0 --reduce mismatch --reference "$tmp/ref.hlo" --custom-call "neg_crash=$lib" \
  -o "$tmp/misref" "$d/crash.hlo" "$tmp/xs.npy" &&
  has mismatch-ref-summary "$tmp/err" "crash.hlo: 20 -> 2 instructions, .* focus c2 \(run 0\), the first divergence"
check mismatch-ref-case "
x = np.load(t + '/xs.npy')
a = x + f32(1); b = a - f32(1); h = f32(2) * b
e = np.exp(x); g = (e + (f32(3) - f32(4) * (x + h))) - e
l = instrs('misref')
assert len(l) == 2 and l[-1].lstrip().startswith('ROOT %c2 = f32[4]{0} custom-call(%g)'), l
assert np.allclose(consts('misref')['g'], g, rtol=1e-6, atol=1e-6), (consts('misref'), g)
assert np.allclose(np.load(t + '/misref/expected.npy'), f32(3) * consts('misref')['g'], rtol=1e-6, atol=0)"
replays mismatch-ref-replays misref 1 "mismatch"
# --reference-custom-call: the reference is crash.hlo with neg_crash bound
# to neg_triple (3 * x): the first divergence is c1, the first call (2 * b
# against 3 * b, b = x); its expected.npy is 3 * x.
run mismatch-refcc 0 --reduce mismatch --reference-custom-call "neg_crash=$lib:neg_triple" \
  --custom-call "neg_crash=$lib" -o "$tmp/misrefcc" "$d/crash.hlo" "$tmp/xs.npy" &&
  has mismatch-refcc-summary "$tmp/err" "focus c1 \(run 0\), the first divergence"
check mismatch-refcc-case "
x = np.load(t + '/xs.npy')
b = (x + f32(1)) - f32(1)
l = instrs('misrefcc')
assert len(l) == 2 and l[-1].lstrip().startswith('ROOT %c1 = f32[4]{0} custom-call(%b)'), l
assert np.array_equal(consts('misrefcc')['b'], b), consts('misrefcc')
assert np.array_equal(np.load(t + '/misrefcc/expected.npy'), f32(3) * b), np.load(t + '/misrefcc/expected.npy')"
replays mismatch-refcc-replays misrefcc 1 "mismatch"
# The reference agreeing with the module: nothing to reduce.
run mismatch-ref-agrees 2 --reduce mismatch --reference "$d/crash.hlo" \
  --custom-call "neg_crash=$lib" -o "$tmp/u" "$d/crash.hlo" "$tmp/xs.npy" &&
  has mismatch-ref-agrees "$tmp/err" "does not hold on .*crash.hlo: nothing to reduce"
run mismatch-both 2 --reduce mismatch --reference "$tmp/ref.hlo" --expect "$tmp/golden.npy" \
  -o "$tmp/u" "$d/crash.hlo" "$tmp/xs.npy" &&
  has mismatch-both "$tmp/err" "with --expect or with --reference, not both"
run mismatch-f64-expect 2 --reduce mismatch --reference-precision f64 --expect "$tmp/golden.npy" \
  -o "$tmp/u" "$d/crash.hlo" "$tmp/xs.npy" &&
  has mismatch-f64-expect "$tmp/err" "with --expect or with --reference, not both"
run mismatch-ref-params 2 --reduce mismatch --reference "$tmp/nan.hlo" --custom-call "neg_crash=$lib" \
  -o "$tmp/u" "$d/crash.hlo" "$tmp/xs.npy" &&
  has mismatch-ref-params "$tmp/err" "cannot compare the module with the reference" &&
  has mismatch-ref-params-which "$tmp/err" "parameter 0 differs: .* f32\[4\], .* f32\[8\]"

# The first divergence: chain.hlo is 30 instructions, v1 = x / 2, then
# v_k = v_{k-1} + x (k even) or v_{k-1} * 0.5 (k odd) up to ROOT v27; the
# module's v14 subtracts where the reference (chain_ref.hlo) adds. The case
# is v14 alone, its operands v13 and x constants with their real values,
# and its expected.npy the reference's v14 = v13 + x.
"$py" - "$tmp" <<'PY'
import sys
t = sys.argv[1]
def module(op14):
    l = ['HloModule chain', '', 'ENTRY %main (x: f32[4]) -> f32[4] {',
         '  %x = f32[4] parameter(0)', '  %half = f32[] constant(0.5)',
         '  %h = f32[4] broadcast(%half), dimensions={}', '  %v1 = f32[4] multiply(%x, %h)']
    for k in range(2, 28):
        op = op14 if k == 14 else 'add' if k % 2 == 0 else 'multiply'
        l.append('  %s%%v%d = f32[4] %s(%%v%d, %s)' % ('ROOT ' if k == 27 else '', k, op, k - 1,
                                                     '%x' if k % 2 == 0 else '%h'))
    return '\n'.join(l) + '\n}\n'
open(t + '/chain.hlo', 'w').write(module('subtract'))
open(t + '/chain_ref.hlo', 'w').write(module('add'))
PY
run diverge 0 --reduce mismatch --reference "$tmp/chain_ref.hlo" -o "$tmp/div" "$tmp/chain.hlo" \
  "$tmp/x4.npy" &&
  has diverge-summary "$tmp/err" "chain.hlo: 30 -> 3 instructions, .* focus v14 \(run 0\), the first divergence from the reference"
check diverge-case "
x = np.array([1, 2, 3, 4], f32)
v = x * f32(0.5)
for k in range(2, 14):
    v = v + x if k % 2 == 0 else v * f32(0.5)
l = instrs('div')
assert len(l) == 3 and l[-1].lstrip().startswith('ROOT %v14 = f32[4]{0} subtract(%v13, %x)'), l
c = consts('div')
assert np.array_equal(c['v13'], v) and np.array_equal(c['x'], x), (c, v)
assert inputs('div') == [], inputs('div')
assert np.array_equal(np.load(t + '/div/expected.npy'), v + x), (np.load(t + '/div/expected.npy'), v + x)"
replays diverge-replays div 1 "mismatch"
# The first divergence inside a while loop: loop_bad.hlo multiplies x by 3
# on iteration 2 where its reference loop_ok.hlo doubles it every time. The
# focus is the body's y at its run 2 (the divergence's iteration): the case
# is y alone, the iterations before peeled into its operands, constants
# with their values at iteration 2 (x = x0 doubled twice, the factor f 3),
# and expected.npy the reference's y there. numpy runs both loops.
dl=$srcdir/tests/diverge
run mismatch-loop 0 --reduce mismatch --reference "$dl/loop_ok.hlo" -o "$tmp/misloop" \
  "$dl/loop_bad.hlo" "$tmp/x4.npy" &&
  has mismatch-loop-summary "$tmp/err" "loop_bad.hlo: 22 -> 3 instructions, .* focus y \(run 2\), the first divergence from the reference"
check mismatch-loop-case "
def body_values(bad):
    # (x, factor, y) of each iteration i = 0..3 of the loop on x0
    x, out = np.array([1, 2, 3, 4], f32), []
    for i in range(4):
        fac = f32(3) if bad and i == 2 else f32(2)
        y = x * np.full(4, fac, f32)
        out.append((x, fac, y))
        x = y
    return out
bad, ok = body_values(True), body_values(False)
first = min(i for i in range(4) if not np.array_equal(bad[i][2], ok[i][2]))
assert first == 2, first
x, fac, _ = bad[first]
l = instrs('misloop')
assert len(l) == 3 and l[-1].lstrip().startswith('ROOT %y = f32[4]{0} multiply(%x, %f)'), l
c = consts('misloop')
assert sorted(c) == ['f', 'x'], c
assert np.array_equal(c['x'], x), (c['x'], x)
assert np.array_equal(c['f'], np.full(4, fac, f32)), c['f']
assert inputs('misloop') == [], inputs('misloop')
e = np.load(t + '/misloop/expected.npy')
assert e.dtype == f32 and np.array_equal(e, ok[first][2]), (e, ok[first][2])"
replays mismatch-loop-replays misloop 1 "mismatch: 4 of 4 elements differ" &&
  has mismatch-loop-replays-value "$tmp/out" "^f32\[4\] \{12, 24, 36, 48\}$"
# Against the module carried in f64: 1e8 + x rounds to 1e8 in f32 (its
# spacing there is 8) and agrees within tolerance; b = (1e8 + x) - 1e8 is 0
# in f32 and x in f64: the first divergence. Its golden is the f64 value in
# f32: x.
cat >"$tmp/cancel.hlo" <<'HLO'
HloModule cancel

ENTRY main {
  x = f32[4] parameter(0)
  big = f32[] constant(1e8)
  bigs = f32[4] broadcast(big), dimensions={}
  a = f32[4] add(x, bigs)
  b = f32[4] subtract(a, bigs)
  ROOT r = f32[4] add(b, x)
}
HLO
run diverge-f64 0 --reduce mismatch --reference-precision f64 -o "$tmp/div64" "$tmp/cancel.hlo" \
  "$tmp/x4.npy" &&
  has diverge-f64-summary "$tmp/err" "cancel.hlo: 6 -> 3 instructions, .* focus b \(run 0\), the first divergence"
check diverge-f64-case "
x = np.array([1, 2, 3, 4], f32)
l = instrs('div64')
assert len(l) == 3 and l[-1].lstrip().startswith('ROOT %b = f32[4]{0} subtract(%a, %bigs)'), l
c = consts('div64')
assert np.array_equal(c['a'], x + f32(1e8)) and np.array_equal(c['a'], np.full(4, 1e8, f32)), c
want = ((x.astype(np.float64) + 1e8) - 1e8).astype(f32)
e = np.load(t + '/div64/expected.npy')
assert e.dtype == f32 and np.array_equal(e, want) and np.array_equal(e, x), e"
replays diverge-f64-replays div64 1 "mismatch"

# Outputs: a tuple ROOT of 4 (tuple4.hlo) where only y3 = log(x - 2) has a
# NaN; the script holds while the run prints a NaN. Three outputs go, the
# one left becomes the ROOT itself, its operand the real x - 2.
cat >"$tmp/nanout.sh" <<SH
#!/bin/sh
cd "\$1" || exit 2
grep -q ' log(' module.hlo && "$H" module.hlo \$(ls | grep '^in') 2>/dev/null | grep -q nan
SH
chmod +x "$tmp/nanout.sh"
run outputs 0 --reduce "command=$tmp/nanout.sh" -o "$tmp/out1" "$d/tuple4.hlo" "$tmp/x4.npy" &&
  has outputs-summary "$tmp/err" "tuple4.hlo: 9 -> 2 instructions"
check outputs-case "
x = np.array([1, 2, 3, 4], f32)
l = instrs('out1')
assert len(l) == 2 and l[1].lstrip().startswith('ROOT %y3 = f32[4]{0} log(%d)'), l
assert np.array_equal(consts('out1')['d'], x - f32(2)), consts('out1')
assert ' tuple(' not in open(t + '/out1/module.hlo').read()"
# mismatch with --expect: the golden's y1 is 3x (the module makes 2x), the
# rest right: the case is y1 alone and expected.npy the golden's y1 (on the
# way, the candidates without y0 compare with the golden's y1, y2, y3:
# dropping y1 then loses the mismatch). With y2 wrong too (exp(x) + 1),
# either one keeps it: y1 goes first, the case is y2 and the golden's y2.
# A script that wants the NaN and the exponential keeps a tuple of two.
"$py" -c "
import numpy as np
x = np.array([1, 2, 3, 4], np.float32)
y = [x + np.float32(2), np.float32(2) * x, np.exp(x), np.log(x - np.float32(2))]
y[1] = np.float32(3) * x
np.savez('$tmp/gold1.npz', *y)
y[2] = np.exp(x) + np.float32(1)
np.savez('$tmp/gold2.npz', *y)" 2>/dev/null
run outputs-one 0 --reduce mismatch --expect "$tmp/gold1.npz" -o "$tmp/out2" "$d/tuple4.hlo" \
  "$tmp/x4.npy" && has outputs-one-summary "$tmp/err" "1 of t's 4 outputs kept"
run outputs-other 0 --reduce mismatch --expect "$tmp/gold2.npz" -o "$tmp/out3" "$d/tuple4.hlo" \
  "$tmp/x4.npy" && has outputs-other-summary "$tmp/err" "1 of t's 4 outputs kept"
cat >"$tmp/nanexp.sh" <<SH
#!/bin/sh
grep -q ' exponential(' "\$1/module.hlo" && "$tmp/nanout.sh" "\$1"
SH
chmod +x "$tmp/nanexp.sh"
run outputs-two 0 --reduce "command=$tmp/nanexp.sh" -o "$tmp/out4" "$d/tuple4.hlo" "$tmp/x4.npy"
check outputs-expected "
x = np.array([1, 2, 3, 4], f32)
l = instrs('out2')
assert l[-1].lstrip().startswith('ROOT %y1 = f32[4]{0} multiply(%x, %twos)'), l
assert [f for f in os.listdir(t + '/out2') if f.startswith('expected')] == ['expected.npy'], os.listdir(t + '/out2')
assert np.array_equal(np.load(t + '/out2/expected.npy'), f32(3) * x)
l = instrs('out3')
assert l[-1].lstrip().startswith('ROOT %y2 = f32[4]{0} exponential(%x)'), l
assert np.array_equal(np.load(t + '/out3/expected.npy'), np.exp(x) + f32(1))
l = instrs('out4')
assert l[-1].lstrip().startswith('ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(%y2, %y3)'), l
assert len(l) == 5 and np.array_equal(consts('out4')['d'], x - f32(2)), l"
replays outputs-one-replays out2 1 "mismatch"
replays outputs-two-replays out3 1 "mismatch"

# Nested fusions (nestfus.hlo): outer's body calls inner, whose log makes
# the NaN; pick is a fusion whose ROOT is its parameter. All are inlined:
# the case keeps the log and what carries its NaN to ROOT r, no fusion.
run nested 0 --reduce "command=$tmp/nanout.sh" -o "$tmp/nest" "$d/nestfus.hlo" "$tmp/x4.npy"
check nested-case "
x = np.array([1, 2, 3, 4], f32)
a = x - f32(3); b = a * a
text = open(t + '/nest/module.hlo').read()
assert ' fusion(' not in text and '%inner' not in text and '%outer' not in text, text
l = instrs('nest')
assert len(l) == 8 and l[-1].lstrip().startswith('ROOT %r = f32[4]{0} add(%f, %b)'), l
c = consts('nest')
assert np.array_equal(c['q'], a * b) and np.array_equal(c['p'], b), c
assert np.array_equal(c['q'], np.array([-8, -1, 0, 1], f32))"
# A fusion whose ROOT is its parameter 1 as ENTRY's ROOT (pickfus.hlo): it
# becomes a copy of that operand; the golden (b + 1) is wrong, the case is
# r = copy(b) with b's real value.
"$py" -c "
import numpy as np
x = np.array([0.5, 0.25, 0.125, 0], np.float32)
np.save('$tmp/pgold.npy', (x + np.float32(1)) ** 2 + np.float32(1))"
run param-root 0 --reduce mismatch --expect "$tmp/pgold.npy" -o "$tmp/pick" "$d/pickfus.hlo" \
  "$tmp/xs.npy" && has param-root-summary "$tmp/err" "pickfus.hlo: 9 -> 2 instructions"
check param-root-case "
x = np.array([0.5, 0.25, 0.125, 0], f32)
l = instrs('pick')
assert len(l) == 2 and l[1].lstrip().startswith('ROOT %r = f32[4]{0} copy(%b)'), l
assert np.array_equal(consts('pick')['b'], (x + f32(1)) * (x + f32(1))), consts('pick')
assert ' fusion(' not in open(t + '/pick/module.hlo').read() and '%pick' not in open(t + '/pick/module.hlo').read()"
replays param-root-replays pick 1 "mismatch"

# Bad input: exit 2, a clear message.
run not-nan 2 --reduce nan -o "$tmp/nn" "$d/crash.hlo" "$tmp/xs.npy" --custom-call "neg_crash=$lib" &&
  has not-nan "$tmp/err" "does not hold on .*crash.hlo: nothing to reduce"
run cannot-start 2 --reduce "command=$tmp/no-such-script" -o "$tmp/cs" "$d/crash.hlo" \
  "$tmp/xs.npy" --custom-call "neg_crash=$lib" &&
  has cannot-start "$tmp/err" "command=.*no-such-script cannot start"
run not-empty 2 --reduce nan -o "$tmp/nan" "$tmp/nan.hlo" "$tmp/x.npy" &&
  has not-empty "$tmp/err" "is not empty \(--force writes the case there anyway\)"
run force 0 --reduce nan --force -o "$tmp/nan" "$tmp/nan.hlo" "$tmp/x.npy"
run unknown 2 --reduce frobnicate -o "$tmp/u" "$tmp/nan.hlo" "$tmp/x.npy" &&
  has unknown "$tmp/err" "unknown CONDITION 'frobnicate'"
run bad-regex 2 --reduce 'error=(' -o "$tmp/u" "$tmp/nan.hlo" "$tmp/x.npy" &&
  has bad-regex "$tmp/err" "bad REGEX"
run crash-needs-isolate 2 --reduce crash -o "$tmp/u" "$d/crash.hlo" "$tmp/x4.npy" &&
  has crash-needs-isolate "$tmp/err" "crash needs --isolate-custom-calls"
run mismatch-needs-expect 2 --reduce mismatch -o "$tmp/u" "$tmp/nan.hlo" "$tmp/x.npy" &&
  has mismatch-needs-expect "$tmp/err" "mismatch needs --expect GOLDEN or --reference REF"
run needs-dir 2 --reduce nan "$tmp/nan.hlo" "$tmp/x.npy" &&
  has needs-dir "$tmp/err" "needs -o DIR"
finish
