#!/usr/bin/python3
"""gen_int.py: integer elementwise cases with numpy as the independent reference.

Covers every signed/unsigned integer type and pred for the arithmetic,
bitwise, shift, comparison, select, clamp and conversion ops.  The XLA rules
for the edge cases are written out here explicitly (numpy's own behaviour
differs for several of them):
  divide      x / 0 = -1 (all bits set); INT_MIN / -1 = INT_MIN
  remainder   x % 0 = x;  INT_MIN % -1 = 0; sign follows the dividend
  shifts      amount taken as unsigned; >= bit width: 0 (left, logical),
              sign fill (arithmetic; unsigned operands shift as signed bits)
  power       b ** e with e < 0: 1 if b == 1, else 0 (also for b == -1)
  convert     integers wrap (two's complement); float -> int truncates
              toward zero and saturates, NaN -> 0; x -> pred is x != 0
Writes tests/golden/int_*.  Deterministic (fixed seed).
"""
import numpy as np

from gcase import emit

TYPES = ['s8', 's16', 's32', 's64', 'u8', 'u16', 'u32', 'u64']
NPT = {'s8': np.int8, 's16': np.int16, 's32': np.int32, 's64': np.int64,
       'u8': np.uint8, 'u16': np.uint16, 'u32': np.uint32, 'u64': np.uint64}
N = 48
rng = np.random.default_rng(20240601)


def bits(t):
    return np.dtype(NPT[t]).itemsize * 8


def signed(t):
    return t[0] == 's'


def edge_vals(t):
    info = np.iinfo(NPT[t])
    v = [0, 1, 3, info.max, bits(t) - 1, bits(t)]
    if signed(t):
        v += [-1, -3, info.min, info.min + 1]
    else:
        v += [info.max - 1, 2, 7, bits(t) + 1]
    return v


def rand_vals(t, n, small=False):
    info = np.iinfo(NPT[t])
    if small:
        lo, hi = (-20 if signed(t) else 0), 20
    else:
        lo, hi = int(info.min), int(info.max)
    a = rng.integers(lo, hi, size=n, endpoint=True, dtype=np.int64 if t != 'u64' else np.uint64)
    return [int(x) for x in a]


def operands(t):
    """Two equal-length int lists: edge x edge pairs first, then random."""
    ev = edge_vals(t)
    a, b = [], []
    for x in ev:
        for y in ev:
            a.append(x)
            b.append(y)
    a += rand_vals(t, 8) + rand_vals(t, 8, True)
    b += rand_vals(t, 8, True) + rand_vals(t, 8)
    return a, b


def wrap(v, t):
    m = 1 << bits(t)
    v %= m
    if signed(t) and v >= m // 2:
        v -= m
    return v


def xla_div(x, y, t):
    if y == 0:
        return wrap(-1, t)
    q = abs(x) // abs(y)
    if (x < 0) != (y < 0):
        q = -q
    return wrap(q, t)


def xla_rem(x, y, t):
    if y == 0:
        return x
    r = abs(x) % abs(y)
    return wrap(-r if x < 0 else r, t)


def as_unsigned(v, t):
    return v % (1 << bits(t))


def xla_shl(x, y, t):
    s = as_unsigned(y, t)
    return 0 if s >= bits(t) else wrap(x << s, t)


def xla_shrl(x, y, t):
    s = as_unsigned(y, t)
    return 0 if s >= bits(t) else wrap(as_unsigned(x, t) >> s, t)


def xla_shra(x, y, t):
    # the bits are shifted as a signed value, also for unsigned types
    s = min(as_unsigned(y, t), bits(t) - 1)
    sx = x - (1 << bits(t)) if x >= (1 << (bits(t) - 1)) else x
    return wrap(sx >> s, t)


def xla_pow(x, y, t):
    if y < 0:
        return 1 if x == 1 else 0
    r, b, e = 1, x, y
    while e:
        if e & 1:
            r = wrap(r * b, t)
        b = wrap(b * b, t)
        e >>= 1
    return r


BINARY = {
    'add': lambda x, y, t: wrap(x + y, t),
    'subtract': lambda x, y, t: wrap(x - y, t),
    'multiply': lambda x, y, t: wrap(x * y, t),
    'divide': xla_div,
    'remainder': xla_rem,
    'maximum': lambda x, y, t: max(x, y),
    'minimum': lambda x, y, t: min(x, y),
    'and': lambda x, y, t: wrap(x & y, t),
    'or': lambda x, y, t: wrap(x | y, t),
    'xor': lambda x, y, t: wrap(x ^ y, t),
    'shift-left': xla_shl,
    'shift-right-logical': xla_shrl,
    'shift-right-arithmetic': xla_shra,
    'power': xla_pow,
}


def clz(x, t):
    u = as_unsigned(x, t)
    return bits(t) - u.bit_length()


UNARY = {
    'negate': lambda x, t: wrap(-x, t),
    'abs': lambda x, t: wrap(abs(x), t),
    'sign': lambda x, t: (x > 0) - (x < 0),
    'not': lambda x, t: wrap(~x, t),
    'popcnt': lambda x, t: bin(as_unsigned(x, t)).count('1'),
    'count-leading-zeros': clz,
}

CMP = {'EQ': lambda x, y: x == y, 'NE': lambda x, y: x != y, 'LT': lambda x, y: x < y,
       'LE': lambda x, y: x <= y, 'GT': lambda x, y: x > y, 'GE': lambda x, y: x >= y}


def arr(vals, t):
    return np.array(vals, dtype=object).astype(NPT[t]) if t != 'pred' else np.array(vals, np.bool_)


def gen_binary():
    for t in TYPES:
        a, b = operands(t)
        n = len(a)
        for op, f in BINARY.items():
            bb = b
            if op == 'power':   # keep exponents small so the loop is exercised
                bb = [y % 9 - (2 if signed(t) else 0) for y in b]
                bb = [wrap(y, t) for y in bb]
            exp = [f(x, y, t) for x, y in zip(a, bb)]
            ty = '%s[%d]' % (t, n)
            emit('int_%s_%s' % (op.replace('-', '_'), t), 'elementwise:' + op.replace('-', '_'), 'eq',
                 'Arg_0 = %s parameter(0)\nArg_1 = %s parameter(1)\nROOT r = %s %s(Arg_0, Arg_1)'
                 % (ty, ty, ty, op),
                 [(ty, arr(a, t)), (ty, arr(bb, t))], (ty, arr(exp, t)), source='numpy (gen_int.py)')


def gen_unary():
    for t in TYPES:
        a, _ = operands(t)
        a = sorted(set(a))[:64]
        n = len(a)
        ty = '%s[%d]' % (t, n)
        for op, f in UNARY.items():
            exp = [f(x, t) for x in a]
            emit('int_%s_%s' % (op.replace('-', '_'), t), 'elementwise:' + op.replace('-', '_'), 'eq',
                 'Arg_0 = %s parameter(0)\nROOT r = %s %s(Arg_0)' % (ty, ty, op),
                 [(ty, arr(a, t))], (ty, arr(exp, t)), source='numpy (gen_int.py)')


def gen_compare():
    for t in TYPES:
        a, b = operands(t)
        n = len(a)
        ty = '%s[%d]' % (t, n)
        pt = 'pred[%d]' % n
        body = ['Arg_0 = %s parameter(0)' % ty, 'Arg_1 = %s parameter(1)' % ty]
        outs = []
        for i, (d, f) in enumerate(CMP.items()):
            body.append('c%d = %s compare(Arg_0, Arg_1), direction=%s, type=%s'
                        % (i, pt, d, 'SIGNED' if signed(t) else 'UNSIGNED'))
            outs.append((pt, np.array([f(x, y) for x, y in zip(a, b)], np.bool_)))
        body.append('ROOT r = (%s) tuple(%s)' % (', '.join([pt] * 6), ', '.join('c%d' % i for i in range(6))))
        emit('int_compare_%s' % t, 'elementwise:compare', 'eq', '\n'.join(body),
             [(ty, arr(a, t)), (ty, arr(b, t))], outs, source='numpy (gen_int.py)')
    # pred comparisons (false < true) and pred logic
    a = [False, False, True, True]
    b = [False, True, False, True]
    body = ['Arg_0 = pred[4] parameter(0)', 'Arg_1 = pred[4] parameter(1)']
    outs = []
    for i, (d, f) in enumerate(CMP.items()):
        body.append('c%d = pred[4] compare(Arg_0, Arg_1), direction=%s' % (i, d))
        outs.append(('pred[4]', np.array([f(int(x), int(y)) for x, y in zip(a, b)], np.bool_)))
    for j, (op, f) in enumerate([('and', lambda x, y: x and y), ('or', lambda x, y: x or y),
                                  ('xor', lambda x, y: x != y), ('maximum', max), ('minimum', min),
                                  ('add', lambda x, y: x or y), ('multiply', lambda x, y: x and y)]):
        body.append('l%d = pred[4] %s(Arg_0, Arg_1)' % (j, op))
        outs.append(('pred[4]', np.array([f(x, y) for x, y in zip(a, b)], np.bool_)))
    body.append('n0 = pred[4] not(Arg_0)')
    outs.append(('pred[4]', np.array([not x for x in a], np.bool_)))
    names = ['c%d' % i for i in range(6)] + ['l%d' % j for j in range(7)] + ['n0']
    body.append('ROOT r = (%s) tuple(%s)' % (', '.join(['pred[4]'] * len(names)), ', '.join(names)))
    emit('int_compare_logic_pred', 'elementwise:compare', 'eq', '\n'.join(body),
         [('pred[4]', np.array(a)), ('pred[4]', np.array(b))], outs, source='numpy (gen_int.py)')


def gen_select_clamp():
    for t in TYPES + ['pred']:
        if t == 'pred':
            a = [bool(x) for x in rng.integers(0, 2, 16)]
            b = [bool(x) for x in rng.integers(0, 2, 16)]
            lo, hi = False, True
        else:
            a = rand_vals(t, 16)
            b = rand_vals(t, 16, True)
            lo, hi = sorted(rand_vals(t, 2, True))
        c = [bool(x) for x in rng.integers(0, 2, 16)]
        ty = '%s[16]' % t
        emit('int_select_%s' % t, 'elementwise:select', 'eq',
             'Arg_0 = pred[16] parameter(0)\nArg_1 = %s parameter(1)\nArg_2 = %s parameter(2)\n'
             'ROOT r = %s select(Arg_0, Arg_1, Arg_2)' % (ty, ty, ty),
             [('pred[16]', np.array(c)), (ty, arr(a, t)), (ty, arr(b, t))],
             (ty, arr([x if s else y for s, x, y in zip(c, a, b)], t)), source='numpy (gen_int.py)')
        st = '%s[]' % t
        emit('int_clamp_%s' % t, 'clamp', 'eq',
             'Arg_0 = %s parameter(0)\nArg_1 = %s parameter(1)\nArg_2 = %s parameter(2)\n'
             'ROOT r = %s clamp(Arg_0, Arg_1, Arg_2)' % (st, ty, st, ty),
             [(st, arr([lo], t).reshape(())), (ty, arr(a, t)), (st, arr([hi], t).reshape(()))],
             (ty, arr([min(max(x, lo), hi) for x in a], t)), source='numpy (gen_int.py)')


def gen_convert():
    """int/pred -> every int, pred and float type."""
    targets = TYPES + ['pred', 'f16', 'f32', 'f64', 'c64', 'c128']
    for s in TYPES + ['pred']:
        if s == 'pred':
            a = [False, True, True, False]
        else:
            a = sorted(set(edge_vals(s) + rand_vals(s, 20) + rand_vals(s, 10, True)))
        n = len(a)
        for d in targets:
            if d == s:
                continue
            if d in NPT:
                exp = arr([wrap(int(x), d) for x in a], d)
            elif d == 'pred':
                exp = np.array([x != 0 for x in a], np.bool_)
            else:
                # Python int -> float rounds to nearest even, as XLA does;
                # f16 via f64 could double-round, so go through exact ints.
                ft = {'f16': np.float16, 'f32': np.float32, 'f64': np.float64,
                      'c64': np.complex64, 'c128': np.complex128}[d]
                if d == 'f16':
                    exp = np.array([int_to_f16(int(x)) for x in a], np.float16)
                elif d in ('f32', 'c64'):
                    exp = np.array([int_to_f32(int(x)) for x in a], np.float32).astype(ft)
                else:
                    exp = np.array([float(int(x)) for x in a], np.float64).astype(ft)
            emit('int_convert_%s_%s' % (s, d), 'elementwise:convert', 'eq',
                 'Arg_0 = %s[%d] parameter(0)\nROOT r = %s[%d] convert(Arg_0)' % (s, n, d, n),
                 [('%s[%d]' % (s, n), arr(a, s))], ('%s[%d]' % (d, n), exp), source='numpy (gen_int.py)')


def round_int(x, mant_bits, max_exp_val):
    """Round integer x to a float with mant_bits significand bits (RNE); inf past max."""
    if x == 0:
        return 0.0
    sgn = -1 if x < 0 else 1
    m = abs(x)
    nb = m.bit_length()
    if nb > mant_bits:
        sh = nb - mant_bits
        q, r = m >> sh, m & ((1 << sh) - 1)
        half = 1 << (sh - 1)
        if r > half or (r == half and q & 1):
            q += 1
        m = q << sh
    if m > max_exp_val:
        return sgn * float('inf')
    return sgn * float(m)


def int_to_f16(x):
    return round_int(x, 11, 65504)


def int_to_f32(x):
    return round_int(x, 24, (2 ** 24 - 1) * 2 ** 104)


if __name__ == '__main__':
    gen_binary()
    gen_unary()
    gen_compare()
    gen_select_clamp()
    gen_convert()
