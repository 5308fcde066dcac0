#!/usr/bin/python3
"""gen_struct.py: structural-op cases with numpy reference implementations
written here from XLA's documented semantics (operation_semantics.md):
reduce-window (padding, strides, base and window dilation), convolution
(feature and batch groups, dilations, padding, dim_labels), dot (batch and
several contracting dims, integer types), sort (several operands, stable,
descending, NaN with total order), pad (negative and interior), fft (all
four kinds), triangular-solve (every option), cholesky, dynamic slicing with
clamped starts, iota, reverse, conditional and while.
Inputs are small integers where possible so that f32 results are exact.
Writes tests/golden/st_*.  Deterministic (fixed seed).
"""
import itertools

import numpy as np

from gcase import emit

rng = np.random.default_rng(11)
SRC = 'numpy (gen_struct.py)'


def T(et, shape):
    return '%s[%s]' % (et, ','.join(str(d) for d in shape))


def ints(shape, lo=-4, hi=5, dt=np.float32):
    return rng.integers(lo, hi, size=shape).astype(dt)


# ------------------------------------------------------------ reduce-window
def ref_reduce_window(x, init, f, win, strides, pads, bdil, wdil):
    nd = x.ndim
    full = [(s - 1) * b + 1 + lo + hi for s, b, (lo, hi) in zip(x.shape, bdil, pads)]
    buf = np.full(full, init, dtype=np.float64)
    sl = tuple(slice(lo, lo + (s - 1) * b + 1, b) for s, b, (lo, hi) in zip(x.shape, bdil, pads))
    buf[sl] = x
    out_shape = [(fs - (w - 1) * d - 1) // st + 1 for fs, w, d, st in zip(full, win, wdil, strides)]
    out = np.zeros(out_shape)
    for o in itertools.product(*[range(n) for n in out_shape]):
        acc = init
        for k in itertools.product(*[range(w) for w in win]):
            idx = tuple(o[i] * strides[i] + k[i] * wdil[i] for i in range(nd))
            acc = f(acc, buf[idx])
        out[o] = acc
    return out


def gen_reduce_window():
    cases = [
        ('sum_pad_stride', 'f32', (5, 6), (2, 3), (2, 2), [(1, 0), (0, 2)], (1, 1), (1, 1), 'add'),
        ('max_bdil', 'f32', (4, 5), (2, 2), (1, 1), [(0, 0), (1, 1)], (2, 1), (1, 1), 'maximum'),
        ('sum_wdil', 'f32', (7, 5), (2, 2), (1, 2), [(0, 0), (0, 0)], (1, 1), (3, 2), 'add'),
        ('min_all', 's32', (6, 7), (3, 2), (2, 3), [(2, 1), (1, 2)], (2, 2), (2, 1), 'minimum'),
        ('mul_3d', 'f64', (3, 4, 5), (2, 1, 3), (1, 1, 2), [(0, 1), (0, 0), (1, 1)], (1, 1, 1), (1, 1, 1),
         'multiply'),
        ('max_s8_neg', 's8', (9,), (3,), (2,), [(2, 2)], (1,), (2,), 'maximum'),
        ('sum_u16', 'u16', (4, 4), (2, 2), (1, 1), [(1, 1), (1, 1)], (1, 1), (1, 1), 'add'),
    ]
    npt = {'f32': np.float32, 'f64': np.float64, 's32': np.int32, 's8': np.int8, 'u16': np.uint16}
    for name, et, shape, win, st, pads, bd, wd, op in cases:
        lo = 0 if et[0] == 'u' else -9
        x = rng.integers(lo, 10, size=shape).astype(npt[et])
        if op == 'multiply':
            x = rng.choice([-2.0, -1.0, 0.5, 1.0, 2.0], size=shape).astype(npt[et])
        init = {'add': 0, 'multiply': 1, 'maximum': -np.inf, 'minimum': np.inf}[op]
        if et[0] in 'su':
            info = np.iinfo(npt[et])
            init = {'add': 0, 'maximum': info.min, 'minimum': info.max}[op]
        f = {'add': lambda a, b: a + b, 'multiply': lambda a, b: a * b,
             'maximum': max, 'minimum': min}[op]
        out = ref_reduce_window(x.astype(np.float64), init, f, win, st, pads, bd, wd).astype(npt[et])
        initlit = {np.inf: 'inf', -np.inf: '-inf'}.get(init, str(init))
        if et[0] == 'f' and op in ('add', 'multiply'):
            initlit = '%d.0' % init
        win_s = 'size=%s stride=%s pad=%s lhs_dilate=%s rhs_dilate=%s' % (
            'x'.join(map(str, win)), 'x'.join(map(str, st)),
            'x'.join('%d_%d' % p for p in pads), 'x'.join(map(str, bd)), 'x'.join(map(str, wd)))
        comps = 'red {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = %s[] %s(a, b)\n}' % (
            et, et, et, op)
        emit('st_reduce_window_%s_%s' % (name, et), 'reduce_window', 'eq',
             'Arg_0 = %s parameter(0)\ninit = %s[] constant(%s)\n'
             'ROOT r = %s reduce-window(Arg_0, init), window={%s}, to_apply=red'
             % (T(et, shape), et, initlit, T(et, out.shape), win_s),
             [(T(et, shape), x)], (T(et, out.shape), out), comps=comps, source=SRC)


# -------------------------------------------------------------- convolution
def ref_conv(lhs, rhs, strides, pads, ldil, rdil, fgc, bgc):
    """lhs [N, C, *sp], rhs [O, I, *sp] -> out [N/bgc, O, *sp] (canonical order)."""
    N, C = lhs.shape[:2]
    O, I = rhs.shape[:2]
    nsp = lhs.ndim - 2
    lsp, ksp = lhs.shape[2:], rhs.shape[2:]
    # dilate and pad with the non-negative parts, then crop negative padding
    pos = [(max(lo, 0), max(hi, 0)) for lo, hi in pads]
    big = [(s - 1) * d + 1 + lo + hi for s, d, (lo, hi) in zip(lsp, ldil, pos)]
    buf = np.zeros((N, C) + tuple(big))
    sl = (slice(None), slice(None)) + tuple(
        slice(lo, lo + (s - 1) * d + 1, d) for s, d, (lo, hi) in zip(lsp, ldil, pos))
    buf[sl] = lhs
    crop = (slice(None), slice(None)) + tuple(
        slice(-min(lo, 0), b + min(hi, 0)) for b, (lo, hi) in zip(big, pads))
    buf = buf[crop]
    full = list(buf.shape[2:])
    osp = [(f - (k - 1) * d - 1) // st + 1 for f, k, d, st in zip(full, ksp, rdil, strides)]
    Nb = N // bgc
    out = np.zeros((Nb, O) + tuple(osp))
    og = O // fgc
    ob = O // bgc
    for n in range(Nb):
        for o in range(O):
            g = o // og
            bg = o // ob
            nn = bg * Nb + n
            for pos in itertools.product(*[range(s) for s in osp]):
                acc = 0.0
                for k in itertools.product(*[range(s) for s in ksp]):
                    idx = tuple(pos[i] * strides[i] + k[i] * rdil[i] for i in range(nsp))
                    for i in range(I):
                        acc += buf[(nn, g * I + i) + idx] * rhs[(o, i) + k]
                out[(n, o) + pos] = acc
    return out


def gen_conv():
    # (name, N, C, O, spatial, kernel, strides, pads, ldil, rdil, fgc, bgc, labels)
    cases = [
        ('fgroup2', 2, 4, 6, (5, 5), (3, 2), (1, 1), [(1, 1), (0, 1)], (1, 1), (1, 1), 2, 1,
         ('b01f', '01io', 'b01f')),
        ('depthwise', 1, 3, 3, (6,), (3,), (2,), [(1, 1)], (1,), (1,), 3, 1, ('bf0', 'oi0', 'bf0')),
        ('bgroup2', 4, 3, 4, (4, 3), (2, 2), (1, 1), [(0, 0), (1, 0)], (1, 1), (1, 1), 1, 2,
         ('bf01', 'oi01', 'bf01')),
        ('bgroup_fdim', 6, 2, 3, (5,), (2,), (1,), [(0, 1)], (1,), (1,), 1, 3, ('b0f', '0io', 'b0f')),
        ('lhs_dil', 1, 2, 2, (4, 3), (2, 2), (1, 1), [(1, 1), (0, 0)], (2, 2), (1, 1), 1, 1,
         ('bf01', 'oi01', 'bf01')),
        ('rhs_dil_stride', 2, 2, 3, (9,), (3,), (2,), [(2, 0)], (1,), (2,), 1, 1, ('fb0', 'io0', 'fb0')),
        ('labels_mix', 2, 3, 2, (4, 5), (2, 3), (1, 2), [(0, 0), (1, 1)], (1, 1), (1, 1), 1, 1,
         ('0fb1', '1o0i', 'f01b')),
        ('neg_pad', 1, 2, 2, (6, 6), (2, 2), (1, 1), [(-1, 0), (0, -2)], (1, 1), (1, 1), 1, 1,
         ('bf01', 'oi01', 'bf01')),
        ('conv3d', 1, 2, 2, (3, 4, 3), (2, 2, 2), (1, 1, 1), [(0, 0), (1, 0), (0, 1)], (1, 1, 1),
         (1, 1, 1), 1, 1, ('b012f', '012io', 'b012f')),
    ]
    for (name, N, C, O, sp, ks, st, pads, ld, rd, fgc, bgc, (ll, kl, ol)) in cases:
        I = C // fgc
        lhs_c = ints((N, C) + sp)
        rhs_c = ints((O, I) + ks, -2, 3)
        out_c = ref_conv(lhs_c, rhs_c, st, pads, ld, rd, fgc, bgc)

        def perm(label, a, first, second):
            # canonical [first, second, spatial...] -> layout given by label
            order = []
            for ch in label:
                if ch == first:
                    order.append(0)
                elif ch == second:
                    order.append(1)
                else:
                    order.append(2 + int(ch))
            return np.transpose(a, order)
        lhs = perm(ll, lhs_c, 'b', 'f')
        rhs = perm(kl, rhs_c, 'o', 'i')
        out = perm(ol, out_c, 'b', 'f').astype(np.float32)
        win = 'size=%s' % 'x'.join(map(str, ks))
        if any(s != 1 for s in st):
            win += ' stride=%s' % 'x'.join(map(str, st))
        if any(p != (0, 0) for p in pads):
            win += ' pad=%s' % 'x'.join('%d_%d' % p for p in pads)
        if any(d != 1 for d in ld):
            win += ' lhs_dilate=%s' % 'x'.join(map(str, ld))
        if any(d != 1 for d in rd):
            win += ' rhs_dilate=%s' % 'x'.join(map(str, rd))
        attrs = 'window={%s}, dim_labels=%s_%s->%s' % (win, ll, kl, ol)
        if fgc > 1:
            attrs += ', feature_group_count=%d' % fgc
        if bgc > 1:
            attrs += ', batch_group_count=%d' % bgc
        emit('st_conv_%s' % name, 'convolution', 'close',
             'Arg_0 = %s parameter(0)\nArg_1 = %s parameter(1)\nROOT r = %s convolution(Arg_0, Arg_1), %s'
             % (T('f32', lhs.shape), T('f32', rhs.shape), T('f32', out.shape), attrs),
             [(T('f32', lhs.shape), lhs), (T('f32', rhs.shape), rhs)], (T('f32', out.shape), out),
             source=SRC)


# ---------------------------------------------------------------------- dot
def gen_dot():
    # batch dims not leading, two contracting dims
    a = ints((3, 2, 4, 5))      # [k1, b, m, k2]
    b = ints((5, 2, 3, 6))      # [k2, b, k1, n]
    out = np.einsum('xbmy,ybxn->bmn', a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    emit('st_dot_batch_2contract', 'dot_general', 'close',
         'Arg_0 = f32[3,2,4,5] parameter(0)\nArg_1 = f32[5,2,3,6] parameter(1)\n'
         'ROOT r = f32[2,4,6] dot(Arg_0, Arg_1), lhs_batch_dims={1}, lhs_contracting_dims={0,3}, '
         'rhs_batch_dims={1}, rhs_contracting_dims={2,0}',
         [('f32[3,2,4,5]', a), ('f32[5,2,3,6]', b)], ('f32[2,4,6]', out), source=SRC)
    # integer dots: wrap-around in the result type, s8 x s8 -> s32
    for et, ot, npt, npo in [('s8', 's32', np.int8, np.int32), ('u8', 'u32', np.uint8, np.uint32),
                             ('s32', 's32', np.int32, np.int32), ('u16', 'u16', np.uint16, np.uint16),
                             ('s64', 's64', np.int64, np.int64)]:
        info = np.iinfo(npt)
        x = rng.integers(int(info.min), int(info.max), size=(3, 7), endpoint=True).astype(npt)
        y = rng.integers(int(info.min), int(info.max), size=(7, 4), endpoint=True).astype(npt)
        # exact products wrapped to the result type (python ints)
        res = [[sum(int(x[i, k]) * int(y[k, j]) for k in range(7)) for j in range(4)] for i in range(3)]
        bits = np.dtype(npo).itemsize * 8
        res = [[(v % (1 << bits)) for v in r] for r in res]
        if np.issubdtype(npo, np.signedinteger):
            res = [[v - (1 << bits) if v >= 1 << (bits - 1) else v for v in r] for r in res]
        emit('st_dot_%s_%s' % (et, ot), 'dot_general', 'eq',
             'Arg_0 = %s[3,7] parameter(0)\nArg_1 = %s[7,4] parameter(1)\n'
             'ROOT r = %s[3,4] dot(Arg_0, Arg_1), lhs_contracting_dims={1}, rhs_contracting_dims={0}'
             % (et, et, ot), [('%s[3,7]' % et, x), ('%s[7,4]' % et, y)],
             ('%s[3,4]' % ot, np.array(res, dtype=object).astype(npo)), source=SRC)
    # vector . vector, and matrix . vector with a transposed contraction
    v = ints((9,), dt=np.float64)
    w = ints((9,), dt=np.float64)
    emit('st_dot_vv_f64', 'dot_general', 'close',
         'Arg_0 = f64[9] parameter(0)\nArg_1 = f64[9] parameter(1)\n'
         'ROOT r = f64[] dot(Arg_0, Arg_1), lhs_contracting_dims={0}, rhs_contracting_dims={0}',
         [('f64[9]', v), ('f64[9]', w)], ('f64[]', np.array(v @ w)), source=SRC)
    m = ints((9, 5))
    emit('st_dot_mtv_f32', 'dot_general', 'close',
         'Arg_0 = f32[9,5] parameter(0)\nArg_1 = f32[9] parameter(1)\n'
         'ROOT r = f32[5] dot(Arg_0, Arg_1), lhs_contracting_dims={0}, rhs_contracting_dims={0}',
         [('f32[9,5]', m), ('f32[9]', v.astype(np.float32))], ('f32[5]', m.T @ v.astype(np.float32)),
         source=SRC)
    # complex batch matmul
    za = (ints((2, 3, 4)) + 1j * ints((2, 3, 4))).astype(np.complex64)
    zb = (ints((2, 4, 2)) + 1j * ints((2, 4, 2))).astype(np.complex64)
    emit('st_dot_batch_c64', 'dot_general', 'close',
         'Arg_0 = c64[2,3,4] parameter(0)\nArg_1 = c64[2,4,2] parameter(1)\n'
         'ROOT r = c64[2,3,2] dot(Arg_0, Arg_1), lhs_batch_dims={0}, lhs_contracting_dims={2}, '
         'rhs_batch_dims={0}, rhs_contracting_dims={1}',
         [('c64[2,3,4]', za), ('c64[2,4,2]', zb)], ('c64[2,3,2]', za @ zb), source=SRC)


# --------------------------------------------------------------------- sort
def gen_sort():
    # two operands, sorted by the first (descending), stable
    k = rng.integers(0, 4, size=(3, 10)).astype(np.int32)
    v = np.arange(30, dtype=np.float32).reshape(3, 10)
    order = np.argsort(-k, axis=1, kind='stable')
    comps = ('cmp {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  c = f32[] parameter(2)\n'
             '  d = f32[] parameter(3)\n  ROOT r = pred[] compare(a, b), direction=GT\n}')
    emit('st_sort_two_desc_stable', 'sort', 'eq',
         'Arg_0 = s32[3,10] parameter(0)\nArg_1 = f32[3,10] parameter(1)\n'
         'ROOT r = (s32[3,10], f32[3,10]) sort(Arg_0, Arg_1), dimensions={1}, is_stable=true, to_apply=cmp',
         [('s32[3,10]', k), ('f32[3,10]', v)],
         [('s32[3,10]', np.take_along_axis(k, order, 1)), ('f32[3,10]', np.take_along_axis(v, order, 1))],
         comps=comps, source=SRC)
    # dimension 0 of a 3-d u16 array, ascending
    x = rng.integers(0, 65535, size=(5, 2, 3)).astype(np.uint16)
    comps = ('cmp {\n  a = u16[] parameter(0)\n  b = u16[] parameter(1)\n'
             '  ROOT r = pred[] compare(a, b), direction=LT\n}')
    emit('st_sort_dim0_u16', 'sort', 'eq',
         'Arg_0 = u16[5,2,3] parameter(0)\nROOT r = u16[5,2,3] sort(Arg_0), dimensions={0}, to_apply=cmp',
         [('u16[5,2,3]', x)], ('u16[5,2,3]', np.sort(x, axis=0)), comps=comps, source=SRC)
    # f32 with NaN, -0, inf under TOTALORDER
    x = np.array([3.0, -0.0, np.nan, 0.0, -np.inf, 1.5, -np.nan, np.inf, -2.0, 0.0, -0.0, 1.5], np.float32)
    x[6] = np.float32(-np.nan)
    xb = x.view(np.int32).astype(np.int64)
    key = np.where(xb < 0, -(xb & 0x7FFFFFFF) - 1, xb)
    order = np.argsort(key, kind='stable')
    comps = ('cmp2 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  i = s32[] parameter(2)\n'
             '  j = s32[] parameter(3)\n  ROOT r = pred[] compare(a, b), direction=LT, type=TOTALORDER\n}')
    emit('st_sort_totalorder_f32', 'sort', 'eq',
         'Arg_0 = f32[12] parameter(0)\nio = s32[12] iota(), iota_dimension=0\n'
         'ROOT r = (f32[12], s32[12]) sort(Arg_0, io), dimensions={0}, is_stable=true, to_apply=cmp2',
         [('f32[12]', x)], [('f32[12]', x[order]), ('s32[12]', order.astype(np.int32))],
         comps=comps, source=SRC)


# ---------------------------------------------------------------------- pad
def gen_pad():
    x = ints((3, 4), 1, 9)
    # dim0: lo -1, hi 2, interior 1; dim1: lo 2, hi -1, interior 2
    cfg = [(-1, 2, 1), (2, -1, 2)]
    full = []
    for s, (lo, hi, it) in zip(x.shape, cfg):
        full.append(s + (s - 1) * it)
    big = np.full((full[0] + 4, full[1] + 4), 0.5, np.float32)
    big[2:2 + full[0]:cfg[0][2] + 1, 2:2 + full[1]:cfg[1][2] + 1] = x
    out = big[2 - cfg[0][0]:2 + full[0] + cfg[0][1], 2 - cfg[1][0]:2 + full[1] + cfg[1][1]]
    emit('st_pad_neg_interior', 'pad', 'eq',
         'Arg_0 = f32[3,4] parameter(0)\nc = f32[] constant(0.5)\n'
         'ROOT r = %s pad(Arg_0, c), padding=-1_2_1x2_-1_2' % T('f32', out.shape),
         [('f32[3,4]', x)], (T('f32', out.shape), out), source=SRC)


# ---------------------------------------------------------------------- fft
def gen_fft():
    z = (rng.standard_normal((3, 4, 5)) + 1j * rng.standard_normal((3, 4, 5))).astype(np.complex64)
    emit('st_fft_fft2_c64', 'fft', 'close',
         'Arg_0 = c64[3,4,5] parameter(0)\nROOT r = c64[3,4,5] fft(Arg_0), fft_type=FFT, fft_length={4,5}',
         [('c64[3,4,5]', z)], ('c64[3,4,5]', np.fft.fftn(z, axes=(1, 2)).astype(np.complex64)), source=SRC)
    emit('st_fft_ifft3_c64', 'fft', 'close',
         'Arg_0 = c64[3,4,5] parameter(0)\nROOT r = c64[3,4,5] fft(Arg_0), fft_type=IFFT, fft_length={3,4,5}',
         [('c64[3,4,5]', z)], ('c64[3,4,5]', np.fft.ifftn(z).astype(np.complex64)), source=SRC)
    x = rng.standard_normal((2, 6, 8))
    emit('st_fft_rfft2_f64', 'fft', 'close',
         'Arg_0 = f64[2,6,8] parameter(0)\nROOT r = c128[2,6,5] fft(Arg_0), fft_type=RFFT, fft_length={6,8}',
         [('f64[2,6,8]', x)], ('c128[2,6,5]', np.fft.rfftn(x, axes=(1, 2))), source=SRC)
    y = np.fft.rfft(rng.standard_normal((4, 7)))
    emit('st_fft_irfft_odd_f64', 'fft', 'close',
         'Arg_0 = c128[4,4] parameter(0)\nROOT r = f64[4,7] fft(Arg_0), fft_type=IRFFT, fft_length={7}',
         [('c128[4,4]', y)], ('f64[4,7]', np.fft.irfft(y, 7)), source=SRC)
    y2 = np.fft.rfftn(rng.standard_normal((3, 6)))
    emit('st_fft_irfft2_f32', 'fft', 'close',
         'Arg_0 = c64[3,4] parameter(0)\nROOT r = f32[3,6] fft(Arg_0), fft_type=IRFFT, fft_length={3,6}',
         [('c64[3,4]', y2.astype(np.complex64))], ('f32[3,6]', np.fft.irfftn(y2, (3, 6)).astype(np.float32)),
         source=SRC)


# -------------------------------------------------------- triangular solve
def gen_trsm():
    n, m = 4, 3
    for left, lower, unit, trans in itertools.product([True, False], [True, False], [True, False],
                                                      ['NO_TRANSPOSE', 'TRANSPOSE']):
        a = rng.standard_normal((n, n)) + 4 * np.eye(n)
        # the other triangle holds garbage that must be ignored
        tri = np.tril(a) if lower else np.triu(a)
        if unit:
            tri = tri - np.diag(np.diag(tri)) + np.eye(n)
        op = tri.T if trans == 'TRANSPOSE' else tri
        bshape = (n, m) if left else (m, n)
        b = rng.standard_normal(bshape)
        xs = np.linalg.solve(op, b) if left else np.linalg.solve(op.T, b.T).T
        name = 'st_trsm_%s_%s_%s_%s' % ('left' if left else 'right', 'lower' if lower else 'upper',
                                        'unit' if unit else 'nonunit', trans.lower())
        emit(name, 'triangular_solve', 'close',
             'Arg_0 = f64[4,4] parameter(0)\nArg_1 = %s parameter(1)\n'
             'ROOT r = %s triangular-solve(Arg_0, Arg_1), left_side=%s, lower=%s, unit_diagonal=%s, transpose_a=%s'
             % (T('f64', bshape), T('f64', bshape), str(left).lower(), str(lower).lower(),
                str(unit).lower(), trans),
             [('f64[4,4]', a), (T('f64', bshape), b)], (T('f64', bshape), xs), source=SRC)
    # complex adjoint, batched
    a = (rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3))) + 3 * np.eye(3)
    b = rng.standard_normal((2, 3, 2)) + 1j * rng.standard_normal((2, 3, 2))
    xs = np.stack([np.linalg.solve(np.conj(np.tril(a[i])).T, b[i]) for i in range(2)])
    emit('st_trsm_batched_adjoint_c128', 'triangular_solve', 'close',
         'Arg_0 = c128[2,3,3] parameter(0)\nArg_1 = c128[2,3,2] parameter(1)\n'
         'ROOT r = c128[2,3,2] triangular-solve(Arg_0, Arg_1), left_side=true, lower=true, '
         'transpose_a=ADJOINT',
         [('c128[2,3,3]', a), ('c128[2,3,2]', b)], ('c128[2,3,2]', xs), source=SRC)


def gen_cholesky():
    m = rng.standard_normal((2, 4, 4))
    spd = m @ np.transpose(m, (0, 2, 1)) + 4 * np.eye(4)
    lo = np.linalg.cholesky(spd)
    emit('st_cholesky_lower_f64', 'cholesky', 'close',
         'Arg_0 = f64[2,4,4] parameter(0)\nc = f64[2,4,4] cholesky(Arg_0), lower=true\n'
         'z = f64[] constant(0)\nzb = f64[2,4,4] broadcast(z), dimensions={}\n'
         'io0 = s32[2,4,4] iota(), iota_dimension=1\nio1 = s32[2,4,4] iota(), iota_dimension=2\n'
         'keep = pred[2,4,4] compare(io0, io1), direction=GE\n'
         'ROOT r = f64[2,4,4] select(keep, c, zb)',
         [('f64[2,4,4]', spd)], ('f64[2,4,4]', lo), source=SRC)
    up = np.transpose(lo, (0, 2, 1))
    emit('st_cholesky_upper_f64', 'cholesky', 'close',
         'Arg_0 = f64[2,4,4] parameter(0)\nc = f64[2,4,4] cholesky(Arg_0), lower=false\n'
         'z = f64[] constant(0)\nzb = f64[2,4,4] broadcast(z), dimensions={}\n'
         'io0 = s32[2,4,4] iota(), iota_dimension=1\nio1 = s32[2,4,4] iota(), iota_dimension=2\n'
         'keep = pred[2,4,4] compare(io0, io1), direction=LE\n'
         'ROOT r = f64[2,4,4] select(keep, c, zb)',
         [('f64[2,4,4]', spd)], ('f64[2,4,4]', up), source=SRC)


# ------------------------------------------------------------ misc movement
def gen_misc():
    x = ints((5, 6))
    # dynamic-slice: start indices clamped into range (negative, too large)
    for nm, (i, j), it in [('neg', (-3, 2), 's32'), ('big', (4, 9), 's64'), ('u8', (200, 1), 'u8')]:
        ci, cj = min(max(i, 0), 5 - 2), min(max(j, 0), 6 - 3)
        npi = {'s32': np.int32, 's64': np.int64, 'u8': np.uint8}[it]
        emit('st_dynamic_slice_clamp_%s' % nm, 'dynamic_slice', 'eq',
             'Arg_0 = f32[5,6] parameter(0)\nArg_1 = %s[] parameter(1)\nArg_2 = %s[] parameter(2)\n'
             'ROOT r = f32[2,3] dynamic-slice(Arg_0, Arg_1, Arg_2), dynamic_slice_sizes={2,3}' % (it, it),
             [('f32[5,6]', x), ('%s[]' % it, np.array(i).astype(npi)), ('%s[]' % it, np.array(j).astype(npi))],
             ('f32[2,3]', x[ci:ci + 2, cj:cj + 3]), source=SRC)
        u = ints((2, 3), 10, 20)
        y = x.copy()
        y[ci:ci + 2, cj:cj + 3] = u
        emit('st_dynamic_update_slice_clamp_%s' % nm, 'dynamic_update_slice', 'eq',
             'Arg_0 = f32[5,6] parameter(0)\nArg_1 = f32[2,3] parameter(1)\nArg_2 = %s[] parameter(2)\n'
             'Arg_3 = %s[] parameter(3)\nROOT r = f32[5,6] dynamic-update-slice(Arg_0, Arg_1, Arg_2, Arg_3)'
             % (it, it),
             [('f32[5,6]', x), ('f32[2,3]', u), ('%s[]' % it, np.array(i).astype(npi)),
              ('%s[]' % it, np.array(j).astype(npi))], ('f32[5,6]', y), source=SRC)
    # iota in several types and dimensions
    for et, npt in [('f16', np.float16), ('bf16', None), ('u8', np.uint8), ('s64', np.int64), ('c64', np.complex64)]:
        a = np.broadcast_to(np.arange(4).reshape(1, 4, 1), (2, 4, 3))
        if et == 'bf16':
            from gcase import f32_to_bf16_bits
            val = f32_to_bf16_bits(a.astype(np.float32))
        else:
            val = a.astype(npt)
        emit('st_iota_%s' % et, 'iota', 'eq', 'ROOT r = %s[2,4,3] iota(), iota_dimension=1' % et,
             [], ('%s[2,4,3]' % et, val), source=SRC)
    # reverse of several dims, transpose of a 4-d array
    z = ints((2, 3, 4, 5), dt=np.int16)
    emit('st_reverse_02_s16', 'reverse', 'eq',
         'Arg_0 = s16[2,3,4,5] parameter(0)\nROOT r = s16[2,3,4,5] reverse(Arg_0), dimensions={0,2}',
         [('s16[2,3,4,5]', z)], ('s16[2,3,4,5]', z[::-1, :, ::-1, :]), source=SRC)
    emit('st_transpose_3102_s16', 'transpose', 'eq',
         'Arg_0 = s16[2,3,4,5] parameter(0)\nROOT r = s16[5,3,2,4] transpose(Arg_0), dimensions={3,1,0,2}',
         [('s16[2,3,4,5]', z)], ('s16[5,3,2,4]', np.transpose(z, (3, 1, 0, 2))), source=SRC)
    # conditional: branch index out of range runs the last branch
    comps = ('b0 {\n  p = f32[3] parameter(0)\n  ROOT r = f32[3] negate(p)\n}\n\n'
             'b1 {\n  p = f32[3] parameter(0)\n  ROOT r = f32[3] add(p, p)\n}\n\n'
             'b2 {\n  p = f32[3] parameter(0)\n  ROOT r = f32[3] multiply(p, p)\n}')
    v = np.array([1.0, -2.0, 3.0], np.float32)
    for idx, exp in [(0, -v), (1, v + v), (2, v * v), (7, v * v), (-1, v * v)]:
        emit('st_conditional_index_%s' % str(idx).replace('-', 'm'), 'conditional', 'eq',
             'Arg_0 = s32[] parameter(0)\nArg_1 = f32[3] parameter(1)\n'
             'ROOT r = f32[3] conditional(Arg_0, Arg_1, Arg_1, Arg_1), branch_computations={b0, b1, b2}',
             [('s32[]', np.array(idx, np.int32)), ('f32[3]', v)], ('f32[3]', exp), comps=comps, source=SRC)
    comps = ('t {\n  p = f32[3] parameter(0)\n  ROOT r = f32[3] add(p, p)\n}\n\n'
             'f {\n  p = f32[3] parameter(0)\n  ROOT r = f32[3] negate(p)\n}')
    for pv in [True, False]:
        emit('st_conditional_pred_%s' % str(pv).lower(), 'conditional', 'eq',
             'Arg_0 = pred[] parameter(0)\nArg_1 = f32[3] parameter(1)\n'
             'ROOT r = f32[3] conditional(Arg_0, Arg_1, Arg_1), true_computation=t, false_computation=f',
             [('pred[]', np.array(pv)), ('f32[3]', v)], ('f32[3]', v + v if pv else -v), comps=comps, source=SRC)
    # while: Collatz steps of 27 (111), tuple state
    comps = ('cond {\n  s = (s64[], s64[]) parameter(0)\n  x = s64[] get-tuple-element(s), index=0\n'
             '  one = s64[] constant(1)\n  ROOT r = pred[] compare(x, one), direction=NE\n}\n\n'
             'body {\n  s = (s64[], s64[]) parameter(0)\n  x = s64[] get-tuple-element(s), index=0\n'
             '  n = s64[] get-tuple-element(s), index=1\n  one = s64[] constant(1)\n  two = s64[] constant(2)\n'
             '  three = s64[] constant(3)\n  r2 = s64[] remainder(x, two)\n  zero = s64[] constant(0)\n'
             '  even = pred[] compare(r2, zero), direction=EQ\n  h = s64[] divide(x, two)\n'
             '  t = s64[] multiply(x, three)\n  t1 = s64[] add(t, one)\n  nx = s64[] select(even, h, t1)\n'
             '  nn = s64[] add(n, one)\n  ROOT r = (s64[], s64[]) tuple(nx, nn)\n}')
    emit('st_while_collatz', 'while', 'eq',
         'Arg_0 = s64[] parameter(0)\nz = s64[] constant(0)\ni = (s64[], s64[]) tuple(Arg_0, z)\n'
         'w = (s64[], s64[]) while(i), condition=cond, body=body\n'
         'ROOT r = s64[] get-tuple-element(w), index=1',
         [('s64[]', np.array(27, np.int64))], ('s64[]', np.array(111, np.int64)), comps=comps, source=SRC)


def gen_reduce():
    # variadic reduce: argmax with smallest index on ties, over dim 1
    x = rng.integers(0, 4, size=(4, 7)).astype(np.float32)
    x[1, 3] = np.nan
    comps = ('amax {\n  a = f32[] parameter(0)\n  i = s32[] parameter(1)\n  b = f32[] parameter(2)\n'
             '  j = s32[] parameter(3)\n  gt = pred[] compare(a, b), direction=GT\n'
             '  isn = pred[] compare(a, a), direction=NE\n  eq = pred[] compare(a, b), direction=EQ\n'
             '  lt = pred[] compare(i, j), direction=LT\n  tie = pred[] and(eq, lt)\n'
             '  g1 = pred[] or(gt, isn)\n  pick = pred[] or(g1, tie)\n'
             '  v = f32[] select(pick, a, b)\n  k = s32[] select(pick, i, j)\n'
             '  ROOT r = (f32[], s32[]) tuple(v, k)\n}')
    # reference: first NaN wins, else first maximum
    vals, idxs = [], []
    for row in x:
        if np.isnan(row).any():
            k = int(np.argmax(np.isnan(row)))
        else:
            k = int(np.argmax(row))
        vals.append(row[k])
        idxs.append(k)
    emit('st_reduce_argmax_f32', 'reduce', 'eq',
         'Arg_0 = f32[4,7] parameter(0)\nio = s32[4,7] iota(), iota_dimension=1\n'
         'ninf = f32[] constant(-inf)\nz = s32[] constant(0)\n'
         'ROOT r = (f32[4], s32[4]) reduce(Arg_0, io, ninf, z), dimensions={1}, to_apply=amax',
         [('f32[4,7]', x)], [('f32[4]', np.array(vals, np.float32)), ('s32[4]', np.array(idxs, np.int32))],
         comps=comps, source=SRC)
    # reductions over several dims and the logical reducers
    y = rng.integers(0, 2, size=(3, 4, 5)).astype(bool)
    for op, f, init in [('and', np.all, 'true'), ('or', np.any, 'false')]:
        comps = 'r {\n  a = pred[] parameter(0)\n  b = pred[] parameter(1)\n  ROOT o = pred[] %s(a, b)\n}' % op
        emit('st_reduce_%s_pred_02' % op, 'reduce', 'eq',
             'Arg_0 = pred[3,4,5] parameter(0)\nc = pred[] constant(%s)\n'
             'ROOT o = pred[4] reduce(Arg_0, c), dimensions={0,2}, to_apply=r' % init,
             [('pred[3,4,5]', y)], ('pred[4]', f(y, axis=(0, 2))), comps=comps, source=SRC)
    w = rng.integers(0, 1000, size=(3, 4, 5)).astype(np.uint32)
    comps = 'r {\n  a = u32[] parameter(0)\n  b = u32[] parameter(1)\n  ROOT o = u32[] xor(a, b)\n}'
    emit('st_reduce_xor_u32_all', 'reduce', 'eq',
         'Arg_0 = u32[3,4,5] parameter(0)\nc = u32[] constant(0)\n'
         'ROOT o = u32[] reduce(Arg_0, c), dimensions={0,1,2}, to_apply=r',
         [('u32[3,4,5]', w)], ('u32[]', np.array(np.bitwise_xor.reduce(w.ravel()), np.uint32)),
         comps=comps, source=SRC)
    h = rng.integers(-3, 4, size=(6, 5)).astype(np.float16)
    comps = 'r {\n  a = f16[] parameter(0)\n  b = f16[] parameter(1)\n  ROOT o = f16[] add(a, b)\n}'
    emit('st_reduce_sum_f16_dim0', 'reduce', 'eq',
         'Arg_0 = f16[6,5] parameter(0)\nc = f16[] constant(0.5)\n'
         'ROOT o = f16[5] reduce(Arg_0, c), dimensions={0}, to_apply=r',
         [('f16[6,5]', h)], ('f16[5]', (h.astype(np.float64).sum(0) + 0.5).astype(np.float16)),
         comps=comps, source=SRC)


if __name__ == '__main__':
    gen_reduce_window()
    gen_conv()
    gen_dot()
    gen_sort()
    gen_pad()
    gen_fft()
    gen_trsm()
    gen_cholesky()
    gen_misc()
    gen_reduce()


# ------------------------------------------------------------------- gather
def ref_gather(op, idx, offset_dims, collapsed, start_map, obatch, ibatch, ivd, sizes):
    if ivd == idx.ndim:
        idx = idx[..., None]
    bdims_idx = [d for d in range(idx.ndim) if d != ivd]
    bshape = [idx.shape[d] for d in bdims_idx]
    win_dims = [d for d in range(op.ndim) if d not in collapsed and d not in obatch]
    out_rank = len(bshape) + len(offset_dims)
    batch_out = [d for d in range(out_rank) if d not in offset_dims]
    out_shape = [0] * out_rank
    for k, d in enumerate(batch_out):
        out_shape[d] = bshape[k]
    for k, d in enumerate(offset_dims):
        out_shape[d] = sizes[win_dims[k]]
    out = np.zeros(out_shape, op.dtype)
    for o in itertools.product(*[range(s) for s in out_shape]):
        g = [o[d] for d in batch_out]
        full = list(g)
        full.insert(ivd, slice(None))
        vec = idx[tuple(full)]
        start = [0] * op.ndim
        for k, d in enumerate(start_map):
            start[d] = int(vec[k])
        for od, idd in zip(obatch, ibatch):
            start[od] = g[bdims_idx.index(idd)]
        start = [min(max(s, 0), op.shape[d] - sizes[d]) for d, s in enumerate(start)]
        pos = list(start)
        for k, d in enumerate(offset_dims):
            pos[win_dims[k]] += o[d]
        out[o] = op[tuple(pos)]
    return out


def gen_gather():
    cases = [
        # name, operand shape, indices, offset_dims, collapsed, start_map, obatch, ibatch, ivd, sizes
        ('take_rows_clamped', (5, 4), np.array([[1], [7], [-2]]), (1,), (0,), (0,), (), (), 1, (1, 4)),
        ('window_2d', (6, 7), np.array([[[0, 1], [5, 6]], [[2, 2], [-1, 3]]]), (2, 3), (), (1, 0), (), (), 2,
         (2, 3)),
        ('batching', (3, 5, 4), np.array([[[4], [0]], [[2], [9]], [[1], [3]]]), (2,), (1,), (1,), (0,), (0,), 2,
         (1, 1, 4)),
        ('ivd_first', (4, 5), np.array([[0, 3, 1, 9], [4, 0, 2, -5]]), (), (0, 1), (0, 1), (), (), 0, (1, 1)),
        ('offset_leading', (5, 4), np.array([3, 0, 4]), (0,), (0,), (0,), (), (), 1, (1, 4)),
        ('partial_slice', (4, 6, 3), np.array([[1, 2], [3, 5]]), (1, 2, 3), (), (0, 1), (), (), 1, (2, 3, 3)),
    ]
    for name, oshape, idx, od, col, smap, ob, ib, ivd, sizes in cases:
        op = np.arange(int(np.prod(oshape)), dtype=np.float32).reshape(oshape)
        idx = idx.astype(np.int32)
        out = ref_gather(op, idx, od, col, smap, ob, ib, ivd, sizes)
        attrs = 'offset_dims={%s}, collapsed_slice_dims={%s}, start_index_map={%s}, ' % (
            ','.join(map(str, od)), ','.join(map(str, col)), ','.join(map(str, smap)))
        if ob:
            attrs += 'operand_batching_dims={%s}, start_indices_batching_dims={%s}, ' % (
                ','.join(map(str, ob)), ','.join(map(str, ib)))
        attrs += 'index_vector_dim=%d, slice_sizes={%s}' % (ivd, ','.join(map(str, sizes)))
        emit('st_gather_%s' % name, 'gather', 'eq',
             'Arg_0 = %s parameter(0)\nArg_1 = %s parameter(1)\nROOT r = %s gather(Arg_0, Arg_1), %s'
             % (T('f32', oshape), T('s32', idx.shape), T('f32', out.shape), attrs),
             [(T('f32', oshape), op), (T('s32', idx.shape), idx)], (T('f32', out.shape), out), source=SRC)


if __name__ == '__main__':
    gen_gather()
