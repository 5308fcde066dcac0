#!/usr/bin/python3
"""gen_sizes.py: odd sizes (vector-loop tails), larger arrays (threaded
paths) and broadcast operands, with numpy references.  Exact ops compare
"eq"; transcendental ones "close" against numpy's double-precision result.
Writes tests/golden/sz_*.  Deterministic (fixed seed).
"""
import numpy as np

from gcase import emit, f32_to_bf16_bits

rng = np.random.default_rng(99)
SRC = 'numpy (gen_sizes.py)'


def gen_tails():
    for n in [1, 3, 13, 1031]:
        a = (rng.standard_normal(n) * 10).astype(np.float32)
        b = (rng.standard_normal(n) * 10).astype(np.float32)
        T = 'f32[%d]' % n
        body = ['Arg_0 = %s parameter(0)' % T, 'Arg_1 = %s parameter(1)' % T,
                'ad = %s add(Arg_0, Arg_1)' % T, 'mu = %s multiply(Arg_0, Arg_1)' % T,
                'mx = %s maximum(Arg_0, Arg_1)' % T, 'dv = %s divide(Arg_0, Arg_1)' % T,
                'ab = %s abs(Arg_0)' % T, 'fl = %s floor(Arg_0)' % T,
                'cm = pred[%d] compare(Arg_0, Arg_1), direction=LT' % n,
                'sl = %s select(cm, Arg_0, Arg_1)' % T,
                'h = f16[%d] convert(Arg_0)' % n, 'bf = bf16[%d] convert(Arg_0)' % n,
                'ci = s32[%d] convert(Arg_0)' % n,
                'ROOT r = (%s) tuple(ad, mu, mx, dv, ab, fl, cm, sl, h, bf, ci)' % ', '.join(
                    [T] * 6 + ['pred[%d]' % n, T, 'f16[%d]' % n, 'bf16[%d]' % n, 's32[%d]' % n])]
        outs = [(T, a + b), (T, a * b), (T, np.maximum(a, b)), (T, a / b), (T, np.abs(a)),
                (T, np.floor(a)), ('pred[%d]' % n, a < b), (T, np.where(a < b, a, b)),
                ('f16[%d]' % n, a.astype(np.float16)), ('bf16[%d]' % n, f32_to_bf16_bits(a)),
                ('s32[%d]' % n, np.trunc(a).astype(np.int32))]
        emit('sz_exact_f32_n%d' % n, 'elementwise:add', 'eq', '\n'.join(body), [(T, a), (T, b)], outs,
             source=SRC)
        x = np.abs(a) + 0.1
        body = ['Arg_0 = %s parameter(0)' % T, 'e = %s exponential(Arg_0)' % T, 'l = %s log(Arg_0)' % T,
                't = %s tanh(Arg_0)' % T, 's = %s sine(Arg_0)' % T, 'q = %s sqrt(Arg_0)' % T,
                'ROOT r = (%s) tuple(e, l, t, s, q)' % ', '.join([T] * 5)]
        xa = np.minimum(x, 80).astype(np.float32)
        xd = xa.astype(np.float64)
        outs = [(T, np.exp(xd)), (T, np.log(xd)), (T, np.tanh(xd)), (T, np.sin(xd)), (T, np.sqrt(xd))]
        emit('sz_math_f32_n%d' % n, 'elementwise:exponential', 'close', '\n'.join(body), [(T, xa)],
             [(t, v.astype(np.float32)) for t, v in outs], source=SRC)
        for et, npt in [('s8', np.int8), ('u16', np.uint16), ('s64', np.int64)]:
            info = np.iinfo(npt)
            p = rng.integers(int(info.min), int(info.max), n, endpoint=True).astype(npt)
            q = rng.integers(int(info.min), int(info.max), n, endpoint=True).astype(npt)
            TT = '%s[%d]' % (et, n)
            with np.errstate(all='ignore'):
                outs = [(TT, p + q), (TT, p * q), (TT, np.minimum(p, q)), (TT, p ^ q),
                        ('pred[%d]' % n, p >= q)]
            body = ['Arg_0 = %s parameter(0)' % TT, 'Arg_1 = %s parameter(1)' % TT,
                    'a = %s add(Arg_0, Arg_1)' % TT, 'm = %s multiply(Arg_0, Arg_1)' % TT,
                    'mn = %s minimum(Arg_0, Arg_1)' % TT, 'x = %s xor(Arg_0, Arg_1)' % TT,
                    'c = pred[%d] compare(Arg_0, Arg_1), direction=GE' % n,
                    'ROOT r = (%s) tuple(a, m, mn, x, c)' % ', '.join([TT] * 4 + ['pred[%d]' % n])]
            emit('sz_int_%s_n%d' % (et, n), 'elementwise:add', 'eq', '\n'.join(body), [(TT, p), (TT, q)], outs,
                 source=SRC)


def gen_large():
    # integer reductions over a large array (exact), several dims, one case
    # (the input is s8, widened in the module, to keep the file small)
    x = rng.integers(-100, 100, size=(64, 50, 33)).astype(np.int8)
    xw = x.astype(np.int64)
    comps = ('r {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT o = s32[] add(a, b)\n}\n\n'
             'mx {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT o = s32[] maximum(a, b)\n}')
    body = ['Arg_0 = s8[64,50,33] parameter(0)', 'w = s32[64,50,33] convert(Arg_0)',
            'c = s32[] constant(7)', 'lo = s32[] constant(-2147483648)']
    outs, names = [], []
    for k, dims in enumerate([(0,), (1,), (2,), (0, 2), (0, 1, 2)]):
        keep = [d for d in range(3) if d not in dims]
        ot = 's32[%s]' % ','.join(str(x.shape[d]) for d in keep)
        body.append('s%d = %s reduce(w, c), dimensions={%s}, to_apply=r' % (k, ot, ','.join(map(str, dims))))
        outs.append((ot, (xw.sum(axis=dims) + 7).astype(np.int32)))
        names.append('s%d' % k)
    body.append('m = s32[64,33] reduce(w, lo), dimensions={1}, to_apply=mx')
    outs.append(('s32[64,33]', xw.max(axis=1).astype(np.int32)))
    names.append('m')
    body.append('ROOT o = (%s) tuple(%s)' % (', '.join(t for t, _ in outs), ', '.join(names)))
    emit('sz_reduce_s32_large', 'reduce', 'eq', '\n'.join(body), [('s8[64,50,33]', x)], outs,
         comps=comps, source=SRC)
    # cumulative sum by reduce-window over a long axis
    y = rng.integers(-50, 50, size=(3, 700)).astype(np.int32)
    comps = 'r {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT o = s32[] add(a, b)\n}'
    emit('sz_cumsum_s32_700', 'reduce_window', 'eq',
         'Arg_0 = s32[3,700] parameter(0)\nc = s32[] constant(0)\n'
         'ROOT o = s32[3,700] reduce-window(Arg_0, c), window={size=1x700 pad=0_0x699_0}, to_apply=r',
         [('s32[3,700]', y)], ('s32[3,700]', np.cumsum(y, axis=1).astype(np.int32)), comps=comps, source=SRC)
    # transpose, sort and dot at sizes that take the threaded paths
    z = rng.integers(-100, 100, size=(37, 129, 5)).astype(np.int16)
    emit('sz_transpose_s16', 'transpose', 'eq',
         'Arg_0 = s16[37,129,5] parameter(0)\nROOT o = s16[5,37,129] transpose(Arg_0), dimensions={2,0,1}',
         [('s16[37,129,5]', z)], ('s16[5,37,129]', np.transpose(z, (2, 0, 1))), source=SRC)
    s = rng.standard_normal(5001).astype(np.float32)
    comps = 'c {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT o = pred[] compare(a, b), direction=GT\n}'
    emit('sz_sort_f32_5001_desc', 'sort', 'eq',
         'Arg_0 = f32[5001] parameter(0)\nROOT o = f32[5001] sort(Arg_0), dimensions={0}, to_apply=c',
         [('f32[5001]', s)], ('f32[5001]', -np.sort(-s)), comps=comps, source=SRC)
    m1 = rng.integers(-8, 8, size=(67, 130)).astype(np.float32)
    m2 = rng.integers(-8, 8, size=(130, 45)).astype(np.float32)
    emit('sz_dot_f32_67x130x45', 'dot_general', 'eq',
         'Arg_0 = f32[67,130] parameter(0)\nArg_1 = f32[130,45] parameter(1)\n'
         'ROOT o = f32[67,45] dot(Arg_0, Arg_1), lhs_contracting_dims={1}, rhs_contracting_dims={0}',
         [('f32[67,130]', m1), ('f32[130,45]', m2)], ('f32[67,45]', m1 @ m2), source=SRC)
    # broadcast operands feeding elementwise ops
    u = rng.integers(-9, 9, size=(1, 33)).astype(np.float64)
    v = rng.integers(-9, 9, size=(47, 1)).astype(np.float64)
    emit('sz_broadcast_add_f64', 'broadcast_in_dim', 'eq',
         'Arg_0 = f64[1,33] parameter(0)\nArg_1 = f64[47,1] parameter(1)\n'
         'r0 = f64[33] reshape(Arg_0)\nr1 = f64[47] reshape(Arg_1)\n'
         'b0 = f64[47,33] broadcast(r0), dimensions={1}\nb1 = f64[47,33] broadcast(r1), dimensions={0}\n'
         'ROOT o = f64[47,33] subtract(b0, b1)',
         [('f64[1,33]', u), ('f64[47,1]', v)], ('f64[47,33]', u - v), source=SRC)


if __name__ == '__main__':
    gen_tails()
    gen_large()
