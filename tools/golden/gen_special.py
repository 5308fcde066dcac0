#!/usr/bin/python3
"""gen_special.py: special-value cases for the math functions (zeros of both
signs, infinities, NaN, tiny and huge values).  Expected values are the
IEEE 754 / C99 Annex F results, computed with numpy (which follows them for
these inputs); XLA:CPU calls the same libm-style functions for these.
Writes tests/golden/sp_*.
"""
import numpy as np

from gcase import emit, f32_to_bf16_bits

SRC = 'numpy special values (gen_special.py)'
NPF = {'f16': np.float16, 'f32': np.float32, 'f64': np.float64}


def store(x, t):
    x = np.asarray(x, np.float64)
    if t == 'bf16':
        return f32_to_bf16_bits(x.astype(np.float32))
    return x.astype(NPF[t])


def load(a, t):
    if t == 'bf16':
        return (np.asarray(a, np.uint32) << 16).view(np.float32).astype(np.float64)
    return np.asarray(a, np.float64)


SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.0, 1e-30, -1e-30, 1e30, -1e30, 100.0, -100.0]


def unary_ref(op, x):
    with np.errstate(all='ignore'):
        return {
            'exponential': np.exp(x), 'log': np.log(x), 'sqrt': np.sqrt(x),
            'rsqrt': 1.0 / np.sqrt(x), 'log-plus-one': np.log1p(x),
            'exponential-minus-one': np.expm1(x), 'sine': np.sin(x), 'cosine': np.cos(x),
            'cbrt': np.cbrt(x), 'abs': np.abs(x), 'sign': np.sign(x), 'floor': np.floor(x),
            'ceil': np.ceil(x), 'logistic': 1.0 / (1.0 + np.exp(-x)), 'tanh': np.tanh(x),
            'tan': np.tan(x),
        }[op]


def gen_unary():
    for t in ['f32', 'f64', 'f16', 'bf16']:
        for op in ['exponential', 'log', 'sqrt', 'rsqrt', 'log-plus-one', 'exponential-minus-one',
                   'sine', 'cosine', 'cbrt', 'logistic', 'tanh', 'tan']:
            xs = list(SPECIAL)
            if op in ('log-plus-one',):
                xs += [-1.0, -1.5]
            if op in ('sine', 'cosine', 'tan', 'tanh'):
                # huge arguments need exact argument reduction; keep moderate ones
                xs = [v for v in xs if not (np.isfinite(v) and abs(v) > 1e3)] + [3.0, -7.5]
            if op == 'tanh':
                xs = [v for v in xs if not np.isnan(v)]
            if t in ('f16', 'bf16'):
                xs = [v for v in xs if not (np.isfinite(v) and abs(v) > 60000)]
            a = store(xs, t)
            la = load(a, t)
            r = unary_ref(op, la)
            n = len(a)
            name = 'sp_%s_%s' % (op.replace('-', '_'), t)
            emit(name, 'elementwise:' + op.replace('-', '_'), 'close',
                 'Arg_0 = %s[%d] parameter(0)\nROOT r = %s[%d] %s(Arg_0)' % (t, n, t, n, op),
                 [('%s[%d]' % (t, n), a)], ('%s[%d]' % (t, n), store(r, t)), source=SRC)


def gen_binary():
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0]
    a = np.repeat(vals, len(vals))
    b = np.tile(vals, len(vals))
    n = len(a)
    with np.errstate(all='ignore'):
        refs = {'atan2': np.arctan2(a, b), 'power': np.power(a, b), 'remainder': np.fmod(a, b),
                'divide': a / b}
    for t in ['f32', 'f64']:
        for op, r in refs.items():
            emit('sp_%s_%s' % (op, t), 'elementwise:' + op, 'close',
                 'Arg_0 = %s[%d] parameter(0)\nArg_1 = %s[%d] parameter(1)\nROOT r = %s[%d] %s(Arg_0, Arg_1)'
                 % (t, n, t, n, t, n, op),
                 [('%s[%d]' % (t, n), store(a, t)), ('%s[%d]' % (t, n), store(b, t))],
                 ('%s[%d]' % (t, n), store(r, t)), source=SRC)


if __name__ == '__main__':
    gen_unary()
    gen_binary()


def gen_complex():
    """Complex functions on random values, numpy's complex math as reference."""
    rng = np.random.default_rng(5)
    z = (rng.standard_normal(24) + 1j * rng.standard_normal(24)) * rng.choice([0.3, 1.0, 3.0], 24)
    w = (rng.standard_normal(24) + 1j * rng.standard_normal(24))
    with np.errstate(all='ignore'):
        un = {'exponential': np.exp(z), 'log': np.log(z), 'sqrt': np.sqrt(z), 'rsqrt': 1 / np.sqrt(z),
              'tan': np.tan(z), 'tanh': np.tanh(z), 'sine': np.sin(z), 'cosine': np.cos(z),
              'log-plus-one': np.log1p(z), 'exponential-minus-one': np.expm1(z),
              'logistic': 1 / (1 + np.exp(-z)), 'sign': z / np.abs(z), 'negate': -z}
    for c, npc in [('c64', np.complex64), ('c128', np.complex128)]:
        zz = z.astype(npc)
        zl = zz.astype(np.complex128)
        for op, r in un.items():
            with np.errstate(all='ignore'):
                r = {'exponential': np.exp, 'log': np.log, 'sqrt': np.sqrt,
                     'rsqrt': lambda v: 1 / np.sqrt(v), 'tan': np.tan, 'tanh': np.tanh,
                     'sine': np.sin, 'cosine': np.cos, 'log-plus-one': np.log1p,
                     'exponential-minus-one': np.expm1, 'logistic': lambda v: 1 / (1 + np.exp(-v)),
                     'sign': lambda v: v / np.abs(v), 'negate': lambda v: -v}[op](zl)
            emit('sp_cplx_%s_%s' % (op.replace('-', '_'), c), 'elementwise:' + op.replace('-', '_'), 'close',
                 'Arg_0 = %s[24] parameter(0)\nROOT r = %s[24] %s(Arg_0)' % (c, c, op),
                 [('%s[24]' % c, zz)], ('%s[24]' % c, r.astype(npc)), source=SRC)
        f = 'f32' if c == 'c64' else 'f64'
        emit('sp_cplx_abs_%s' % c, 'elementwise:abs', 'close',
             'Arg_0 = %s[24] parameter(0)\nROOT r = %s[24] abs(Arg_0)' % (c, f),
             [('%s[24]' % c, zz)], ('%s[24]' % f, np.abs(zl)), source=SRC)
        ww = w.astype(npc)
        wl = ww.astype(np.complex128)
        for op, fn in [('power', lambda a, b: a ** b), ('divide', lambda a, b: a / b),
                       ('multiply', lambda a, b: a * b)]:
            emit('sp_cplx_%s_%s' % (op, c), 'elementwise:' + op, 'close',
                 'Arg_0 = %s[24] parameter(0)\nArg_1 = %s[24] parameter(1)\nROOT r = %s[24] %s(Arg_0, Arg_1)'
                 % (c, c, c, op), [('%s[24]' % c, zz), ('%s[24]' % c, ww)],
                 ('%s[24]' % c, fn(zl, wl).astype(npc)), source=SRC)


if __name__ == '__main__':
    gen_complex()
