#!/usr/bin/env python3
"""Inputs and golden output of the MLP sample (mlp_global.hlo, mlp_2x4.hlo),
computed with numpy, independently of hlorun. The inputs are multiples of
1/4 between -1 and 1, so every product and sum is exact in f32 and the
result is the same whatever order the devices sum in."""
import numpy as np

rng = np.random.default_rng(20261203)
def quarters(*shape):
    return (rng.integers(-4, 5, size=shape) / 4.0).astype(np.float32)

x, w1, b1, w2 = quarters(8, 16), quarters(16, 32), quarters(32), quarters(32, 16)
h = np.maximum(x.astype(np.float64) @ w1 + b1, 0.0)
y = h @ w2
assert np.all(y == y.astype(np.float32)), "not exact in f32"

def literal(a):
    def rows(v):
        if v.ndim == 1:
            return "{" + ", ".join(repr(float(e)) for e in v) + "}"
        return "{" + ", ".join(rows(r) for r in v) + "}"
    return "f32[%s] %s" % (",".join(map(str, a.shape)), rows(a))

for i, a in enumerate([x, w1, b1, w2]):
    open("mlp.in%d.txt" % i, "w").write(literal(a) + "\n")
open("mlp_2x4.expected.txt", "w").write(literal(y.astype(np.float32)) + "\n")
