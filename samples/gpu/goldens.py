#!/usr/bin/python3
"""goldens.py: inputs and golden output of samples/gpu/transformer_block.hlo.

numpy in float64 from the formulas in the module's header comment (XLA's
documented semantics of each GPU target), never from hlorun's output:

    cd samples/gpu && /usr/bin/python3 goldens.py
"""
import math

import numpy as np

rng = np.random.default_rng(7)
T, D, N, H = 8, 16, 2, 8
shapes = {"x": (T, D), "wc": (3, D, D), "wqkv": (D, 3 * D), "bqkv": (3 * D,),
          "wo": (D, D), "w1": (D, 2 * D), "b1": (2 * D,), "w2": (2 * D, D)}
ins = {k: rng.uniform(-1, 1, s).astype(np.float32) * (0.5 if k != "x" else 1.0)
       for k, s in shapes.items()}
p = {k: v.astype(np.float64) for k, v in ins.items()}

x = p["x"]
xp = np.pad(x, [(1, 1), (0, 0)])
c = sum(xp[i:i + T] @ p["wc"][i] for i in range(3))          # conv, kernel 3, pad 1
h = x + c
qkv = h @ p["wqkv"] + p["bqkv"]
q, k, v = (qkv[:, i * D:(i + 1) * D].reshape(T, N, H) for i in range(3))
s = np.einsum("tnh,snh->nts", q, k) / math.sqrt(H)
s = np.where(np.arange(T)[None, :] > np.arange(T)[:, None], -np.inf, s)
e = np.exp(s - s.max(-1, keepdims=True))
att = e / e.sum(-1, keepdims=True)
o = np.einsum("nts,snh->tnh", att, v).reshape(T, D)              # BTNH order
a = o @ p["wo"] + h
t = a @ p["w1"] + p["b1"]
m = 0.5 * t * (1 + np.tanh(math.sqrt(2 / math.pi) * (t + 0.044715 * t ** 3)))
y = m @ p["w2"] + a
ey = np.exp(y - y.max(-1, keepdims=True))
out = ey / ey.sum(-1, keepdims=True)

np.savez("transformer_block.inputs.npz", *[ins[k] for k in shapes])


def body(a):
    if a.ndim == 0:
        return np.format_float_positional(np.float32(a), unique=True, trim="-")
    return "{" + ", ".join(body(r) for r in a) + "}"


with open("transformer_block.expected.txt", "w") as f:
    f.write("f32[8,16] %s\n" % body(out.astype(np.float32)))
