#!/usr/bin/python3
"""gen_f8.py: f32 -> f8* -> f32 round trips (the .npy format has no 8-bit
float type, so the narrow value is checked through its exact widening).

Reference written here from the type definitions (ml_dtypes / XLA):
  ieee   f8e5m2, f8e4m3, f8e3m4: inf and NaN like IEEE; overflow -> inf
  fn     f8e4m3fn: no inf, only S.1111.111 is NaN; overflow -> NaN
  fnuz   f8e4m3fnuz, f8e5m2fnuz, f8e4m3b11fnuz: no inf, no -0 (0x80 is
         NaN); overflow -> NaN; a result of zero is +0
Rounding is to nearest even, once, from the f32 value, with subnormals.
Writes tests/golden/f8_*.
"""
from fractions import Fraction

import numpy as np

from gcase import emit

# name: (exponent bits, mantissa bits, bias, kind)
TYPES = {
    'f8e5m2': (5, 2, 15, 'ieee'), 'f8e4m3': (4, 3, 7, 'ieee'), 'f8e3m4': (3, 4, 3, 'ieee'),
    'f8e4m3fn': (4, 3, 7, 'fn'), 'f8e4m3fnuz': (4, 3, 8, 'fnuz'), 'f8e5m2fnuz': (5, 2, 16, 'fnuz'),
    'f8e4m3b11fnuz': (4, 3, 11, 'fnuz'),
}


def grid(eb, mb, bias):
    """All non-negative magnitudes of the unbounded-exponent grid up to the
    first value past the top binade, each with its mantissa parity."""
    out = []
    for e in range(0, (1 << eb) + 1):
        for m in range(1 << mb):
            if e == 0:
                v = Fraction(m, 1 << mb) * Fraction(2) ** (1 - bias)
            else:
                v = (1 + Fraction(m, 1 << mb)) * Fraction(2) ** (e - bias)
            out.append((v, m & 1, e, m))
    return out


def max_finite(eb, mb, bias, kind):
    if kind == 'ieee':
        e, m = (1 << eb) - 2, (1 << mb) - 1
    elif kind == 'fn':
        e, m = (1 << eb) - 1, (1 << mb) - 2
    else:
        e, m = (1 << eb) - 1, (1 << mb) - 1
    return (1 + Fraction(m, 1 << mb)) * Fraction(2) ** (e - bias)


def round_f8(x, name):
    eb, mb, bias, kind = TYPES[name]
    if np.isnan(x):
        return np.nan
    if np.isinf(x):
        return x if kind == 'ieee' else np.nan
    neg = x < 0 or (x == 0 and np.signbit(x))
    a = Fraction(abs(float(x)))
    g = grid(eb, mb, bias)
    best = None
    for v, odd, e, m in g:
        d = abs(v - a)
        if best is None or d < best[0] or (d == best[0] and not odd):
            best = (d, v, odd)
    v = best[1]
    if v > max_finite(eb, mb, bias, kind):
        return (-np.inf if neg else np.inf) if kind == 'ieee' else np.nan
    r = float(v)
    if r == 0 and kind == 'fnuz':
        return 0.0
    return -r if neg else r


def gen():
    rng = np.random.default_rng(3)
    for name, (eb, mb, bias, kind) in TYPES.items():
        mx = float(max_finite(eb, mb, bias, kind))
        tiny = 2.0 ** (1 - bias - mb)
        xs = [0.0, -0.0, 1.0, -1.0, 0.1, -0.3, mx, -mx, mx * 1.03, mx * 1.2, -mx * 1.5, mx * 4,
              tiny, tiny * 0.5, tiny * 0.51, tiny * 1.5, tiny * 2.5, -tiny * 0.4, 1e-30,
              float('inf'), float('-inf'), float('nan'), 1.0 + 2.0 ** -(mb + 1), 1.0 + 3 * 2.0 ** -(mb + 1)]
        xs += list(rng.standard_normal(16) * rng.choice([0.05, 1.0, mx / 4], 16))
        x = np.array(xs, np.float32)
        exp = np.array([round_f8(v, name) for v in x], np.float32)
        n = len(x)
        emit('f8_roundtrip_%s' % name, 'elementwise:convert', 'eq',
             'Arg_0 = f32[%d] parameter(0)\nc = %s[%d] convert(Arg_0)\nROOT r = f32[%d] convert(c)'
             % (n, name, n, n), [('f32[%d]' % n, x)], ('f32[%d]' % n, exp),
             source='reference in gen_f8.py', ops=['convert'])


if __name__ == '__main__':
    gen()
