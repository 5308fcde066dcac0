#!/usr/bin/python3
"""gen_fused.py: cases for hlorun's row groups (reductions over trailing
dimensions fused with the elementwise chains that feed them and the
broadcasts that use their results): softmax, layer norm, log-sum-exp and a
reduce-rooted sum of squares, with numpy references computed in float64
from the textbook formulas. Shapes cover short rows (many rows per tile),
rows longer than a tile, two row dimensions, and f64.
Writes tests/golden/fz_*.  Deterministic (fixed seed).
"""
import numpy as np

from gcase import emit

rng = np.random.default_rng(23)
SRC = 'numpy (gen_fused.py)'
COMPS = '''add {
  a = %(t)s[] parameter(0)
  b = %(t)s[] parameter(1)
  ROOT c = %(t)s[] add(a, b)
}

max {
  a = %(t)s[] parameter(0)
  b = %(t)s[] parameter(1)
  ROOT c = %(t)s[] maximum(a, b)
}
'''
NPT = {'f32': np.float32, 'f64': np.float64}


def T(et, shape):
    return '%s[%s]' % (et, ','.join(str(d) for d in shape))


def rows_dims(shape):
    return ','.join(str(d) for d in range(len(shape) - 1))


def exp_sum(et, shape):
    """Lines computing m = row max of parameter x, e = exp(x - m) and
    s = row sum of e: the stable start of softmax and log-sum-exp."""
    r, f, last = T(et, shape[:-1]), T(et, shape), len(shape) - 1
    return [
        'x = %s parameter(0)' % f,
        'ninf = %s[] constant(-inf)' % et,
        'm = %s reduce(x, ninf), dimensions={%d}, to_apply=max' % (r, last),
        'mb = %s broadcast(m), dimensions={%s}' % (f, rows_dims(shape)),
        'd = %s subtract(x, mb)' % f,
        'e = %s exponential(d)' % f,
        'z = %s[] constant(0)' % et,
        's = %s reduce(e, z), dimensions={%d}, to_apply=add' % (r, last)]


def softmax(et, shape):
    x = rng.normal(0, 3, size=shape).astype(NPT[et])
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(axis=-1, keepdims=True))
    out = e / e.sum(axis=-1, keepdims=True)
    r, f = T(et, shape[:-1]), T(et, shape)
    body = '\n'.join(exp_sum(et, shape) + [
        'sb = %s broadcast(s), dimensions={%s}' % (f, rows_dims(shape)),
        'ROOT o = %s divide(e, sb)' % f])
    emit('fz_softmax_%s_%s' % (et, 'x'.join(map(str, shape))), 'fused_rows', 'close', body,
         [(f, x)], (f, out.astype(NPT[et])), comps=COMPS % {'t': et}, source=SRC,
         ops=['reduce', 'broadcast', 'subtract', 'exponential', 'divide'])


def layer_norm(et, shape):
    x = rng.normal(1, 2, size=shape).astype(NPT[et])
    g = rng.normal(1, 0.5, size=shape[-1:]).astype(NPT[et])
    xd = x.astype(np.float64)
    mean = xd.mean(axis=-1, keepdims=True)
    var = ((xd - mean) ** 2).mean(axis=-1, keepdims=True)
    out = (xd - mean) / np.sqrt(var + 1e-5) * g.astype(np.float64)
    r, f, last = T(et, shape[:-1]), T(et, shape), len(shape) - 1
    body = '\n'.join([
        'x = %s parameter(0)' % f,
        'g = %s parameter(1)' % T(et, shape[-1:]),
        'z = %s[] constant(0)' % et,
        's = %s reduce(x, z), dimensions={%d}, to_apply=add' % (r, last),
        'n = %s[] constant(%d)' % (et, shape[-1]),
        'nb = %s broadcast(n), dimensions={}' % r,
        'mean = %s divide(s, nb)' % r,
        'mb = %s broadcast(mean), dimensions={%s}' % (f, rows_dims(shape)),
        'd = %s subtract(x, mb)' % f,
        'd2 = %s multiply(d, d)' % f,
        'v = %s reduce(d2, z), dimensions={%d}, to_apply=add' % (r, last),
        'var = %s divide(v, nb)' % r,
        'eps = %s[] constant(1e-05)' % et,
        'eb = %s broadcast(eps), dimensions={}' % r,
        've = %s add(var, eb)' % r,
        'rs = %s rsqrt(ve)' % r,
        'rb = %s broadcast(rs), dimensions={%s}' % (f, rows_dims(shape)),
        'y = %s multiply(d, rb)' % f,
        'gb = %s broadcast(g), dimensions={%d}' % (f, last),
        'ROOT o = %s multiply(y, gb)' % f])
    emit('fz_layernorm_%s_%s' % (et, 'x'.join(map(str, shape))), 'fused_rows', 'close', body,
         [(f, x), (T(et, shape[-1:]), g)], (f, out.astype(NPT[et])), comps=COMPS % {'t': et},
         source=SRC, ops=['reduce', 'broadcast', 'divide', 'rsqrt', 'multiply'])


def logsumexp(et, shape):
    x = rng.normal(0, 4, size=shape).astype(NPT[et])
    xd = x.astype(np.float64)
    m = xd.max(axis=-1)
    out = m + np.log(np.exp(xd - m[..., None]).sum(axis=-1))
    r, f = T(et, shape[:-1]), T(et, shape)
    body = '\n'.join(exp_sum(et, shape) + [
        'l = %s log(s)' % r,
        'ROOT o = %s add(l, m)' % r])
    emit('fz_logsumexp_%s_%s' % (et, 'x'.join(map(str, shape))), 'fused_rows', 'close', body,
         [(f, x)], (r, out.astype(NPT[et])), comps=COMPS % {'t': et}, source=SRC,
         ops=['reduce', 'exponential', 'log'])


def sum_squares(et, shape):
    """The reduce is the group's root; integers-valued inputs make it exact."""
    x = rng.integers(-9, 10, size=shape).astype(NPT[et])
    out = (x.astype(np.float64) ** 2).sum(axis=-1)
    r, f, last = T(et, shape[:-1]), T(et, shape), len(shape) - 1
    body = '\n'.join([
        'x = %s parameter(0)' % f,
        'x2 = %s multiply(x, x)' % f,
        'z = %s[] constant(0)' % et,
        'ROOT s = %s reduce(x2, z), dimensions={%d}, to_apply=add' % (r, last)])
    emit('fz_sumsq_%s_%s' % (et, 'x'.join(map(str, shape))), 'fused_rows', 'eq', body,
         [(f, x)], (r, out.astype(NPT[et])), comps=COMPS % {'t': et}, source=SRC,
         ops=['multiply', 'reduce'])


if __name__ == '__main__':
    for et, shape in [('f32', (3, 5)), ('f32', (7, 3000)), ('f32', (2, 5, 33)), ('f64', (4, 130))]:
        softmax(et, shape)
        layer_norm(et, shape)
        logsumexp(et, shape)
        sum_squares(et, shape)
