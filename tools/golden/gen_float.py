#!/usr/bin/python3
"""gen_float.py: floating-point cases where IEEE arithmetic in numpy is an exact
reference (no transcendental functions here).

Covers, for f16, bf16, f32 and f64: add/subtract/multiply/divide/sqrt
(correctly rounded; numpy computes f16 in f32 and rounds, which is exact
for these ops, and bf16 is done the same way here by hand), remainder
(fmod), floor/ceil/round (both), abs/negate/sign/is-finite, maximum/minimum
with NaN, compare (FLOAT and TOTALORDER), select/clamp, conversions between
float types and from floats to integers (XLA: truncate, saturate, NaN -> 0),
and bitcast-convert between every pair of widths.
Writes tests/golden/flt_*.  Deterministic (fixed seed).
"""
import numpy as np

from gcase import emit, f32_to_bf16_bits

rng = np.random.default_rng(7)
FT = ['f16', 'bf16', 'f32', 'f64']
NPF = {'f16': np.float16, 'f32': np.float32, 'f64': np.float64}
INTS = {'s8': np.int8, 's16': np.int16, 's32': np.int32, 's64': np.int64,
        'u8': np.uint8, 'u16': np.uint16, 'u32': np.uint32, 'u64': np.uint64}
SRC = 'numpy (gen_float.py)'


def bf16_bits_to_f32(b):
    return (np.asarray(b, np.uint32) << 16).view(np.float32)


def store(x, t):
    """float64 values -> storage array of type t (RNE)."""
    x = np.asarray(x, np.float64)
    if t == 'bf16':
        # f64 -> f32 first is exact for the values used with bf16 (all are
        # f32 values or results of f32 ops)
        return f32_to_bf16_bits(x.astype(np.float32))
    return x.astype(NPF[t])


def load(a, t):
    """storage array -> float64 values."""
    if t == 'bf16':
        return bf16_bits_to_f32(a).astype(np.float64)
    return np.asarray(a).astype(np.float64)


def specials():
    return [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -0.25, 0.75,
            np.inf, -np.inf, np.nan, 1e-3, -7.0, 100.25, -1234.5]


def rand_floats(t, n):
    scale = {'f16': 60.0, 'bf16': 1000.0, 'f32': 1e4, 'f64': 1e6}[t]
    x = rng.standard_normal(n) * rng.choice([0.01, 1.0, scale], n)
    return store(x, t)


def vals(t, n=28):
    a = np.concatenate([store(specials(), t), rand_floats(t, n)])
    return a


def f32_op_round(t, f, *xs):
    """Apply f in float64 on the loaded values and round to t.  For t = f16/bf16
    the result of + - * / sqrt in f64 rounded once equals the f32-then-t
    path XLA uses (f64/f32 are wide enough for innocuous double rounding)."""
    with np.errstate(all='ignore'):
        r = f(*[load(x, t) for x in xs])
    if t == 'f32':
        with np.errstate(all='ignore'):
            return f(*[np.asarray(x, np.float32) for x in xs]).astype(np.float32)
    if t == 'f64':
        with np.errstate(all='ignore'):
            return f(*[np.asarray(x, np.float64) for x in xs])
    return store(r, t)


def ty(t, n):
    return '%s[%d]' % (t, n)


def gen_arith():
    for t in FT:
        a = vals(t)
        b = np.concatenate([vals(t)[5:], vals(t)[:5]])
        n = len(a)
        T = ty(t, n)
        for op, f in [('add', np.add), ('subtract', np.subtract), ('multiply', np.multiply),
                      ('divide', np.divide), ('remainder', np.fmod)]:
            emit('flt_%s_%s' % (op, t), 'elementwise:' + op, 'eq',
                 'Arg_0 = %s parameter(0)\nArg_1 = %s parameter(1)\nROOT r = %s %s(Arg_0, Arg_1)'
                 % (T, T, T, op), [(T, a), (T, b)], (T, f32_op_round(t, f, a, b)), source=SRC)
        # maximum/minimum: NaN propagates; no (+0, -0) pairs (XLA leaves their order open)
        bb = b.copy()
        za, zb = load(a, t) == 0, load(bb, t) == 0
        bb[za & zb] = store([1.0], t)[0]
        la, lb = load(a, t), load(bb, t)
        for op, f in [('maximum', np.maximum), ('minimum', np.minimum)]:
            emit('flt_%s_%s' % (op, t), 'elementwise:' + op, 'eq',
                 'Arg_0 = %s parameter(0)\nArg_1 = %s parameter(1)\nROOT r = %s %s(Arg_0, Arg_1)'
                 % (T, T, T, op), [(T, a), (T, bb)], (T, store(f(la, lb), t)), source=SRC)
        la = load(a, t)
        with np.errstate(all='ignore'):
            trunc = np.trunc(la)
            afz = np.where(np.abs(la - trunc) >= 0.5, trunc + np.sign(la), trunc)
            afz = np.where(np.isfinite(la), afz, la)
            un = [('sqrt', np.sqrt(la) if t != 'f32' else np.sqrt(a)),
                  ('floor', np.floor(la)), ('ceil', np.ceil(la)),
                  ('round-nearest-even', np.rint(la)), ('round-nearest-afz', afz),
                  ('abs', np.abs(la)), ('negate', -la), ('sign', np.sign(la))]
        for op, r in un:
            emit('flt_%s_%s' % (op.replace('-', '_'), t), 'elementwise:' + op.replace('-', '_'), 'eq',
                 'Arg_0 = %s parameter(0)\nROOT r = %s %s(Arg_0)' % (T, T, op),
                 [(T, a)], (T, store(r, t) if t != 'f32' else np.asarray(r, np.float32)), source=SRC)
        P = ty('pred', n)
        emit('flt_is_finite_%s' % t, 'elementwise:is_finite', 'eq',
             'Arg_0 = %s parameter(0)\nROOT r = %s is-finite(Arg_0)' % (T, P),
             [(T, a)], (P, np.isfinite(la)), source=SRC)


def total_key(a, t):
    """Integer key whose order is XLA's TOTALORDER on floats."""
    bits = {'f16': (np.int16, np.uint16), 'bf16': (np.int16, np.uint16),
            'f32': (np.int32, np.uint32), 'f64': (np.int64, np.uint64)}[t]
    s = np.asarray(a).view(bits[0]).astype(np.int64)
    mag = np.asarray(a).view(bits[1]).astype(np.int64) & ((1 << (8 * np.dtype(bits[0]).itemsize - 1)) - 1)
    return np.where(s < 0, -mag - 1, mag)


def gen_compare():
    for t in FT:
        sp = store(specials(), t)
        # every pair of specials, plus negative NaN
        negnan = sp[15:16].copy()
        negnan.view({'f16': np.uint16, 'bf16': np.uint16, 'f32': np.uint32, 'f64': np.uint64}[t])[0] |= \
            {'f16': 0x8000, 'bf16': 0x8000, 'f32': 0x80000000, 'f64': 0x8000000000000000}[t]
        base = np.concatenate([sp[:16], negnan])
        a = np.repeat(base, len(base))
        b = np.tile(base, len(base))
        n = len(a)
        T, P = ty(t, n), ty('pred', n)
        la, lb = load(a, t), load(b, t)
        ka, kb = total_key(a, t), total_key(b, t)
        for kind in ['FLOAT', 'TOTALORDER']:
            body = ['Arg_0 = %s parameter(0)' % T, 'Arg_1 = %s parameter(1)' % T]
            outs = []
            for i, (d, f) in enumerate([('EQ', np.equal), ('NE', np.not_equal), ('LT', np.less),
                                        ('LE', np.less_equal), ('GT', np.greater),
                                        ('GE', np.greater_equal)]):
                body.append('c%d = %s compare(Arg_0, Arg_1), direction=%s, type=%s' % (i, P, d, kind))
                outs.append((P, f(la, lb) if kind == 'FLOAT' else f(ka, kb)))
            body.append('ROOT r = (%s) tuple(%s)' % (', '.join([P] * 6), ', '.join('c%d' % i for i in range(6))))
            emit('flt_compare_%s_%s' % (kind.lower(), t), 'elementwise:compare', 'eq', '\n'.join(body),
                 [(T, a), (T, b)], outs, source=SRC)


def gen_select_clamp():
    for t in FT:
        a = vals(t, 8)
        b = np.concatenate([a[3:], a[:3]])
        n = len(a)
        T, P = ty(t, n), ty('pred', n)
        c = rng.integers(0, 2, n).astype(bool)
        emit('flt_select_%s' % t, 'elementwise:select', 'eq',
             'Arg_0 = %s parameter(0)\nArg_1 = %s parameter(1)\nArg_2 = %s parameter(2)\n'
             'ROOT r = %s select(Arg_0, Arg_1, Arg_2)' % (P, T, T, T),
             [(P, c), (T, a), (T, b)], (T, np.where(c, a, b)), source=SRC)
        # clamp with array bounds lo <= hi, no NaN bounds
        la = load(a, t)
        lo = store(np.where(np.isnan(la), -1.0, np.minimum(la, 0.25)), t)
        hi = store(np.where(np.isnan(la), 2.0, np.maximum(la, 0.25)), t)
        x = np.concatenate([a[7:], a[:7]])
        lx = load(x, t)
        r = np.where(np.isnan(lx), lx, np.minimum(np.maximum(lx, load(lo, t)), load(hi, t)))
        emit('flt_clamp_%s' % t, 'clamp', 'eq',
             'Arg_0 = %s parameter(0)\nArg_1 = %s parameter(1)\nArg_2 = %s parameter(2)\n'
             'ROOT r = %s clamp(Arg_0, Arg_1, Arg_2)' % (T, T, T, T),
             [(T, lo), (T, x), (T, hi)], (T, store(r, t)), source=SRC)


def gen_convert():
    # float -> float
    for s in FT:
        a = vals(s, 40)
        if s == 'f64':
            a = np.concatenate([a, [65504.0, 65519.99, 65520.0, 1e-8, 6e-8, 3e-5, 3.4e38, 3.5e38, 1e-39, 1e-46]])
        if s == 'f32':
            a = np.concatenate([a, np.array([65504.0, 65520.0, 6e-8, 3e-5, 3.4e38, 1e-39, 1e-45], np.float32)])
        n = len(a)
        la = load(a, s)
        for d in FT:
            if d == s:
                continue
            if d == 'bf16':
                if s == 'f64':
                    # f64 values are first made f32-exact (see store)
                    a32 = la.astype(np.float32).astype(np.float64)
                    aa, exp = a32, f32_to_bf16_bits(a32.astype(np.float32))
                else:
                    aa, exp = a, f32_to_bf16_bits(la.astype(np.float32))
            elif d == 'f16' and s == 'bf16':
                aa, exp = a, la.astype(np.float32).astype(np.float16)
            else:
                aa, exp = a, la.astype(NPF[d])
            emit('flt_convert_%s_%s' % (s, d), 'elementwise:convert', 'eq',
                 'Arg_0 = %s parameter(0)\nROOT r = %s convert(Arg_0)' % (ty(s, n), ty(d, n)),
                 [(ty(s, n), aa)], (ty(d, n), exp), source=SRC)
    # float -> int: truncate toward zero, saturate, NaN -> 0; float -> pred
    for s in FT:
        extra = [np.nan, -np.nan, np.inf, -np.inf, 127.9, 128.0, -128.5, -129.0, 255.5, 256.0,
                 32767.5, 32768.0, -32769.0, 65535.9, 65536.0, -0.99, 0.99, 2147483647.0,
                 2147483648.0, -2147483649.0, 4294967296.0, 9.3e18, -9.3e18, 1.9e19, 1e30, -1e30,
                 -3.7, 3.7, -0.0, 1.0]
        a = np.concatenate([store(extra, s), rand_floats(s, 20)])
        la = load(a, s)
        n = len(a)
        for d, it in INTS.items():
            info = np.iinfo(it)
            with np.errstate(all='ignore'):
                tr = np.trunc(la)
            exp = []
            for v in tr:
                if np.isnan(v):
                    exp.append(0)
                elif v <= info.min:
                    exp.append(int(info.min))
                elif v >= info.max:
                    exp.append(int(info.max))
                else:
                    exp.append(int(v))
            emit('flt_convert_%s_%s' % (s, d), 'elementwise:convert', 'eq',
                 'Arg_0 = %s parameter(0)\nROOT r = %s convert(Arg_0)' % (ty(s, n), ty(d, n)),
                 [(ty(s, n), a)], (ty(d, n), np.array(exp, dtype=object).astype(it)), source=SRC)
        emit('flt_convert_%s_pred' % s, 'elementwise:convert', 'eq',
             'Arg_0 = %s parameter(0)\nROOT r = %s convert(Arg_0)' % (ty(s, n), ty('pred', n)),
             [(ty(s, n), a)], (ty('pred', n), la != 0), source=SRC)
    # complex <-> real
    z = (rng.standard_normal(12) + 1j * rng.standard_normal(12)) * 10
    for c, f in [('c64', 'f32'), ('c128', 'f64')]:
        zz = z.astype(np.complex64 if c == 'c64' else np.complex128)
        emit('flt_convert_%s_%s' % (c, f), 'elementwise:convert', 'eq',
             'Arg_0 = %s[12] parameter(0)\nROOT r = %s[12] convert(Arg_0)' % (c, f),
             [('%s[12]' % c, zz)], ('%s[12]' % f, zz.real), source=SRC)
    zz = z.astype(np.complex128)
    emit('flt_convert_c128_c64', 'elementwise:convert', 'eq',
         'Arg_0 = c128[12] parameter(0)\nROOT r = c64[12] convert(Arg_0)',
         [('c128[12]', zz)], ('c64[12]', zz.astype(np.complex64)), source=SRC)
    emit('flt_convert_c64_c128', 'elementwise:convert', 'eq',
         'Arg_0 = c64[12] parameter(0)\nROOT r = c128[12] convert(Arg_0)',
         [('c64[12]', zz.astype(np.complex64))], ('c128[12]', zz.astype(np.complex64).astype(np.complex128)),
         source=SRC)
    for s in ['f16', 'bf16', 'f64', 's32', 'u8']:
        a = vals(s, 8) if s in FT else np.arange(-3, 9).astype(INTS[s])
        n = len(a)
        la = load(a, s) if s in FT else a.astype(np.float64)
        emit('flt_convert_%s_c64' % s, 'elementwise:convert', 'eq',
             'Arg_0 = %s parameter(0)\nROOT r = %s convert(Arg_0)' % (ty(s, n), ty('c64', n)),
             [(ty(s, n), a)], (ty('c64', n), la.astype(np.complex64)), source=SRC)


def gen_bitcast():
    raw = rng.integers(0, 256, 64, dtype=np.uint8)
    # avoid NaN payload questions: clear the top exponent bits of every 2nd byte
    raw[1::2] &= 0x3F
    allt = {'s8': np.int8, 'u8': np.uint8, 'pred': None, 's16': np.int16, 'u16': np.uint16,
            'f16': np.float16, 'bf16': np.uint16, 's32': np.int32, 'u32': np.uint32,
            'f32': np.float32, 's64': np.int64, 'u64': np.uint64, 'f64': np.float64,
            'c64': np.complex64}
    width = {'s8': 1, 'u8': 1, 's16': 2, 'u16': 2, 'f16': 2, 'bf16': 2, 's32': 4, 'u32': 4,
             'f32': 4, 's64': 8, 'u64': 8, 'f64': 8, 'c64': 8}
    pairs = [('f32', 's32'), ('s32', 'f32'), ('u32', 'f32'), ('f16', 'u16'), ('bf16', 's16'),
             ('s16', 'bf16'), ('f64', 'u64'), ('s64', 'f64'), ('u8', 's8'), ('s8', 'u8'),
             ('f32', 'u8'), ('u8', 'f32'), ('f64', 's16'), ('s16', 'f64'), ('bf16', 'u8'),
             ('u8', 'f16'), ('s32', 'u16'), ('u16', 's32'), ('f64', 'f32'), ('f32', 'f64'),
             ('u64', 'bf16'), ('f16', 'u64'), ('c64', 'f32'), ('f32', 'c64'), ('c64', 'u64'),
             ('s64', 'c64'), ('u32', 's8'), ('s8', 'u32')]
    for s, d in pairs:
        ws, wd = width[s], width[d]
        nbytes = 16 * max(ws, wd)
        buf = raw[:nbytes].copy()
        src = buf.view(allt[s])
        dst = buf.view(allt[d])
        if ws == wd:
            sshape, dshape = (len(src),), (len(dst),)
        elif ws > wd:
            sshape, dshape = (len(src),), (len(src), ws // wd)
        else:
            sshape, dshape = (len(dst), wd // ws), (len(dst),)
        st = '%s[%s]' % (s, ','.join(map(str, sshape)))
        dt = '%s[%s]' % (d, ','.join(map(str, dshape)))
        emit('flt_bitcast_%s_%s' % (s, d), 'bitcast_convert', 'eq',
             'Arg_0 = %s parameter(0)\nROOT r = %s bitcast-convert(Arg_0)' % (st, dt),
             [(st, src.reshape(sshape))], (dt, dst.reshape(dshape)), source=SRC)


if __name__ == '__main__':
    gen_arith()
    gen_compare()
    gen_select_clamp()
    gen_convert()
    gen_bitcast()


def ref_reduce_precision(x, et, ebits, mbits):
    """XLA's reduce-precision recipe on the bits of x (f16/bf16/f32/f64):
    round the mantissa to mbits (nearest even), then exponents above the
    reduced range give a signed inf, at or below its minimum a signed zero;
    NaN inputs stay NaN (mbits > 0)."""
    nb, sm, ut = {'f16': (16, 10, np.uint16), 'bf16': (16, 7, np.uint16), 'f32': (32, 23, np.uint32),
                  'f64': (64, 52, np.uint64)}[et]
    se = nb - 1 - sm
    u = x.view(ut).astype(object) if et != 'bf16' else x.astype(object)
    out = []
    for v in u:
        v = int(v)
        orig = v
        if mbits < sm:
            lm = 1 << (sm - mbits)
            bias = (lm >> 1) - 1 + ((v & lm) >> (sm - mbits))
            v = (v + bias) & ~(lm - 1) & ((1 << nb) - 1)
        if ebits < se:
            sign = v & (1 << (nb - 1))
            emask = ((1 << se) - 1) << sm
            src_bias = (1 << (se - 1)) - 1
            rb = (1 << (ebits - 1)) - 1
            e = v & emask
            if e > ((src_bias + rb) << sm):
                v = sign | emask
            elif e <= ((src_bias - rb) << sm):
                v = sign
        exp_all = ((1 << se) - 1) << sm
        is_nan = (orig & exp_all) == exp_all and (orig & ((1 << sm) - 1)) != 0
        if is_nan:
            v = orig
        out.append(v)
    return np.array(out, dtype=object).astype(ut)


def gen_reduce_precision():
    for et in ['f32', 'f64', 'f16', 'bf16']:
        base = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1.0009765625, 1.00048828125, 1.0014648,
                65504.0, 65520.0, 70000.0, -1e5, 6.1e-5, 6.0e-5, 3e-5, 1e-7, 3.4e38, 1e-38, 448.0, 464.0,
                465.0, 0.015625, 0.0078125, 1.5, 2.75, 3.3333, -0.1]
        a = np.concatenate([store(base, et), rand_floats(et, 24)])
        n = len(a)
        for ebits, mbits in [(5, 10), (8, 7), (4, 3), (5, 2), (8, 23), (11, 52), (3, 1), (6, 4)]:
            nb_e, nb_m = {'f16': (5, 10), 'bf16': (8, 7), 'f32': (8, 23), 'f64': (11, 52)}[et]
            if ebits > nb_e or mbits > nb_m:
                continue
            exp = ref_reduce_precision(a, et, ebits, mbits)
            if et != 'bf16':
                exp = exp.view(NPF[et])
            emit('flt_reduce_precision_%s_e%dm%d' % (et, ebits, mbits), 'reduce_precision', 'eq',
                 'Arg_0 = %s parameter(0)\nROOT r = %s reduce-precision(Arg_0), exponent_bits=%d, mantissa_bits=%d'
                 % (ty(et, n), ty(et, n), ebits, mbits), [(ty(et, n), a)], (ty(et, n), exp), source=SRC)


if __name__ == '__main__':
    gen_reduce_precision()
