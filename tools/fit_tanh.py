#!/usr/bin/python3
"""Coefficients of the f32 tanh in interp/kernels/vmath.c (tanh_vf).

For |x| < 1, tanh(a) = a + a*t*P(t) with t = a^2. P (degree 7) is fitted to
g(t) = (tanh(a)/a - 1)/t by least squares on Chebyshev nodes, weighted by the
error's share of the result and reweighted (Lawson) towards the minimax
polynomial. Prints the fit error in f32 ULPs and the coefficients as C hex
float literals, highest degree first (the order Horner's rule uses).
Needs numpy (Debian's python3-numpy)."""
import numpy as np

import sys

DEG, T, NODES = 7, 1.0, 4000
if len(sys.argv) == 3:   # exploring: fit_tanh.py DEGREE BOUND
    DEG, T = int(sys.argv[1]), float(sys.argv[2])


def g(t):
    a = np.sqrt(t)
    out = np.empty_like(t)
    tiny = t < 1e-4   # tanh(a)/a - 1 cancels there: its Taylor series instead
    s = t[tiny]
    out[tiny] = -1 / 3 + 2 * s / 15 - 17 * s**2 / 315 + 62 * s**3 / 2835 - 1382 * s**4 / 155925
    out[~tiny] = (np.tanh(a[~tiny]) / a[~tiny] - 1) / t[~tiny]
    return out


def weight(t):
    a = np.sqrt(t)
    return t * a / np.tanh(a)   # error of P, relative to tanh(a)


k = np.arange(NODES)
t = (np.cos(np.pi * (k + 0.5) / NODES) + 1) / 2 * T * T
V = np.vander(t, DEG + 1, increasing=True)
w = weight(t)


def fit(fixed):
    """The free coefficients after `fixed` (already f32), fitted to what
    the fixed ones leave."""
    n = len(fixed)
    rest = g(t) - V[:, :n] @ np.array(fixed, dtype=np.float64)
    lw = np.ones_like(t)
    for _ in range(30):
        c, *_ = np.linalg.lstsq(V[:, n:] * (w * np.sqrt(lw))[:, None], rest * w * np.sqrt(lw),
                                rcond=None)
        lw *= np.abs((V[:, n:] @ c - rest) * w)
        lw /= lw.sum()
    return c


# Round one coefficient to f32 at a time, refitting the rest to absorb the
# rounding (the constant term's rounding alone costs 0.13 ULP otherwise).
fixed = []
while len(fixed) <= DEG:
    fixed.append(np.float32(fit(fixed)[0]))
c32 = np.array(fixed, dtype=np.float32)
tt = np.linspace(1e-6, T * T, 400000)
err = np.max(np.abs((np.vander(tt, DEG + 1, increasing=True) @ c32.astype(np.float64) - g(tt))
                    * weight(tt)))
print(f"fit error (f32 coefficients): {err / 2**-24:.4f} ULP")
for v in reversed(c32):
    print(f"{float(v).hex()}f  /* {v!r} */")
