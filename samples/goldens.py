#!/usr/bin/python3
"""goldens.py: inputs and golden outputs of the sample modules.

Each golden is computed here with numpy (an implementation independent of
hlorun: Debian's python3-numpy), in float32 like the modules, from the math
the module's header comment describes, never from hlorun's output. Run it
from the samples/ folder to (re)write samples/*.in*.txt and
samples/*.expected.txt:

    cd samples && /usr/bin/python3 goldens.py

The files are HLO literal text, which `hlorun --expect` reads.
"""
import re

import numpy as np

f32 = np.float32


def fmt_scalar(v, t):
    if t == 's32':
        return str(int(v))
    # Shortest decimal that reads back as the same float32.
    return np.format_float_positional(f32(v), unique=True, trim='-')


def fmt_array(a, t):
    a = np.asarray(a)
    if a.ndim == 0:
        return fmt_scalar(a, t)
    return '{' + ', '.join(fmt_array(x, t) for x in a) + '}'


def lit(a, t='f32'):
    a = np.asarray(a)
    shape = '[' + ','.join(str(d) for d in a.shape) + ']'
    return t + shape + ' ' + fmt_array(a, t)


def tup(*parts):
    return '(' + ', '.join(parts) + ')'


def write(name, text):
    with open(name, 'w') as f:
        f.write(text + '\n')


def quickstart():
    x = np.array([[1, 2, 3], [-1, 0.5, 2]], f32)
    W = np.array([[0.5, -1], [0.25, 0.75], [-0.5, 1]], f32)
    b = np.array([0.1, -0.2], f32)
    y = np.maximum(x @ W + b, f32(0))
    write('quickstart.in0.txt', lit(x))
    write('quickstart.expected.txt', lit(y))


def constant(path, name):
    """The values of constant `name` written in a module (its inputs)."""
    text = open(path).read()
    m = re.search(r'%' + re.escape(name) + r' = \S+ constant\((.*)\)\n', text)
    return np.array([float(v) for v in re.findall(r'-?[0-9.]+(?:e-?[0-9]+)?', m.group(1))], f32)


def mlp_train_step():
    x = np.round(np.sin(np.arange(1, 65)), 2).astype(f32).reshape(16, 4)
    y = np.array([0.5, -0.25, 0.75, 0, -0.5, 1, 0.25, -0.75] * 2, f32).reshape(16, 1)
    # The module holds the batch as constants: check they are the same data.
    assert (constant('mlp_train_step.hlo', 'constant.5') == x.ravel()).all()
    assert (constant('mlp_train_step.hlo', 'constant.6') == y.ravel()).all()
    W1 = np.round(0.5 * np.cos(np.arange(32) * 0.7), 3).astype(f32).reshape(4, 8)
    b1 = np.zeros(8, f32)
    W2 = np.round(0.4 * np.sin(np.arange(8) * 1.3 + 0.2), 3).astype(f32).reshape(8, 1)
    b2 = np.array([0.05], f32)
    write('mlp_train_step.in0.txt', lit(W1))
    write('mlp_train_step.in1.txt', lit(b1))
    write('mlp_train_step.in2.txt', lit(W2))
    write('mlp_train_step.in3.txt', lit(b2))
    lr = f32(0.1)
    loss = f32(0)
    for _ in range(20):
        h = np.tanh(x @ W1 + b1)
        out = h @ W2 + b2
        d = out - y
        loss = (d * d).sum(dtype=f32) / f32(16)
        dout = d * f32(0.125)              # d loss / d out = 2 (out - y) / 16
        gW2 = h.T @ dout
        gb2 = dout.sum(axis=0)
        dh = (dout @ W2.T) * (f32(1) - h * h)
        gW1 = x.T @ dh
        gb1 = dh.sum(axis=0)
        W1, b1, W2, b2 = W1 - lr * gW1, b1 - lr * gb1, W2 - lr * gW2, b2 - lr * gb2
    write('mlp_train_step.expected.txt',
          tup(lit(W1), lit(b1), lit(W2), lit(b2), lit(f32(loss))))


def scan():
    xs = np.round(np.cos(np.arange(18) * 0.9), 2).astype(f32).reshape(6, 3)
    W = np.array([[0.5, -0.25, 0.1, 0], [0.2, 0.4, -0.3, 0.1], [-0.1, 0.3, 0.5, -0.2],
                  [0, -0.2, 0.1, 0.6]], f32)
    U = np.array([[1, -0.5, 0.25, 0.75], [-0.75, 0.5, 1, -0.25], [0.3, 0.6, -0.9, 0.2]], f32)
    assert (constant('scan.hlo', 'constant.2') == W.ravel()).all()
    assert (constant('scan.hlo', 'constant.3') == U.ravel()).all()
    h = np.zeros(4, f32)
    ys = np.zeros((6, 4), f32)
    for t in range(6):
        h = np.tanh(h @ W + xs[t] @ U)
        ys[t] = h
    cs = np.cumsum(ys, axis=0, dtype=f32)
    write('scan.in0.txt', lit(xs))
    write('scan.expected.txt', tup(lit(h), lit(ys), lit(cs), lit(cs[-1])))


def conditional_model():
    x = np.array([0.5, -1.5, 2, -0.25], f32)
    mode = 7
    branches = [lambda v: np.maximum(v, f32(0)), np.tanh, lambda v: v * v]
    a = branches[mode if 0 <= mode < 3 else 2](x)   # XLA: out of range -> last branch
    s = a.sum(dtype=f32)
    out = a / np.abs(a).sum(dtype=f32) if s > 0 else a * f32(2)
    write('conditional_model.in0.txt', lit(x))
    write('conditional_model.in1.txt', 's32[] 7')
    write('conditional_model.expected.txt', tup(lit(a), lit(f32(s)), lit(out)))


def cpu_after_opt():
    x = np.round(np.sin(np.arange(128) * 0.37) * 2, 2).astype(f32).reshape(8, 16)
    w = np.round(np.cos(np.arange(16) * 0.5) + 0.5, 2).astype(f32)
    write('cpu_after_opt.in0.txt', lit(x))
    write('cpu_after_opt.in1.txt', lit(w))
    for _ in range(3):
        x = x * f32(0.5) + f32(0.25)
    s = x * w
    e = np.exp(s - s.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True, dtype=f32)
    write('cpu_after_opt.expected.txt', tup(lit(p), lit(p.max(axis=0))))


if __name__ == '__main__':
    quickstart()
    mlp_train_step()
    scan()
    conditional_model()
    cpu_after_opt()
