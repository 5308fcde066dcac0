"""gcase.py: helpers to write golden test cases in the conformance layout.

A case is tests/golden/<name>/{case.hlo, in0.npy..., expected.npy|npz, meta.json}.
Values come either from literals transcribed from StableHLO test files
(parse_dense reads MLIR `dense<...>` bodies, both the list form and the
"0x..." hex blob form) or from numpy arrays computed by a generator script.
This module does not compute expected values itself.
Run with /usr/bin/python3 (numpy).
"""
import json
import os
import re
import struct

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'golden')

# HLO element type -> (numpy storage dtype, npy descr)
NP = {
    'pred': (np.bool_, '|b1'), 's8': (np.int8, '|i1'), 'u8': (np.uint8, '|u1'),
    's16': (np.int16, '<i2'), 'u16': (np.uint16, '<u2'), 's32': (np.int32, '<i4'),
    'u32': (np.uint32, '<u4'), 's64': (np.int64, '<i8'), 'u64': (np.uint64, '<u8'),
    'f16': (np.float16, '<f2'), 'f32': (np.float32, '<f4'), 'f64': (np.float64, '<f8'),
    'bf16': (np.uint16, '<V2'), 'c64': (np.complex64, '<c8'), 'c128': (np.complex128, '<c16'),
}
MLIR_ELT = {
    'i1': 'pred', 'i8': 's8', 'ui8': 'u8', 'i16': 's16', 'ui16': 'u16', 'i32': 's32',
    'ui32': 'u32', 'i64': 's64', 'ui64': 'u64', 'f16': 'f16', 'bf16': 'bf16', 'f32': 'f32',
    'f64': 'f64', 'complex<f32>': 'c64', 'complex<f64>': 'c128',
}
FLOAT_BITS = {'f16': 16, 'bf16': 16, 'f32': 32, 'f64': 64}
UINT_OF = {16: np.uint16, 32: np.uint32, 64: np.uint64}


def parse_type(t):
    """'f32[2,3]' -> ('f32', (2, 3)); also accepts MLIR 'tensor<2x3xf32>'."""
    t = t.strip()
    m = re.fullmatch(r'tensor<(.*)>', t)
    if m:
        parts = m.group(1).split('x')
        # complex<f32> contains no 'x'; dims are the leading integer parts
        dims = []
        while parts and parts[0].isdigit():
            dims.append(int(parts.pop(0)))
        return MLIR_ELT['x'.join(parts)], tuple(dims)
    m = re.fullmatch(r'([a-z0-9]+)\[([0-9,]*)\](\{[0-9,]*\})?', t)
    if not m:
        raise ValueError('bad type ' + t)
    dims = tuple(int(d) for d in m.group(2).split(',') if d)
    return m.group(1), dims


def layout(et, dims):
    """XLA's printed form with the default layout."""
    s = '%s[%s]' % (et, ','.join(str(d) for d in dims))
    if dims:
        s += '{%s}' % ','.join(str(i) for i in reversed(range(len(dims))))
    return s


def _scalar(tok, et):
    """One MLIR scalar token -> Python value in storage form (floats as
    float, or as an int bit pattern when written in hex)."""
    tok = tok.strip()
    if tok == 'true':
        return True
    if tok == 'false':
        return False
    if et in FLOAT_BITS or et in ('c64', 'c128'):
        if tok.lower().startswith('0x') or tok.lower().startswith('-0x'):
            return ('bits', int(tok, 16))
        low = tok.lower()
        if low in ('nan', '+nan'):
            return float('nan')
        if low in ('inf', '+inf', '0x7f800000'):
            return float('inf')
        if low == '-inf':
            return float('-inf')
        return float(tok)
    return int(tok, 0)


def _tokens(body):
    # split a nested list body into a flat token list (complex as pairs)
    body = body.replace('\n', ' ')
    out = []
    for m in re.finditer(r'\(([^()]*)\)|[^\[\],\s()]+', body):
        if m.group(1) is not None:
            a, b = m.group(1).split(',')
            out.append((a, b))
        else:
            out.append(m.group(0))
    return out


def _bits_to_float(bits, et):
    n = FLOAT_BITS[et]
    if et == 'bf16':
        return struct.unpack('<f', struct.pack('<I', bits << 16))[0]
    return np.array([bits], UINT_OF[n]).view({16: np.float16, 32: np.float32, 64: np.float64}[n])[0]


def f32_to_bf16_bits(x):
    """Round an f32 array to bf16 bit patterns (RNE, NaN kept quiet)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, np.float32))
    r[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)
    return r


def parse_dense(body, ty):
    """MLIR dense<BODY> : TY -> numpy array in storage form (bf16 as uint16)."""
    et, dims = parse_type(ty)
    dt = NP[et][0]
    n = int(np.prod(dims)) if dims else 1
    body = body.strip()
    if body.startswith('"0x'):
        raw = bytes.fromhex(body[3:-1])
        if et == 'pred':
            arr = np.frombuffer(raw, np.uint8).astype(np.bool_)
        else:
            arr = np.frombuffer(raw, dt).copy()
        if arr.size == 1 and n > 1:
            arr = np.full(n, arr[0], dt)
        return arr.reshape(dims)
    toks = _tokens(body)
    vals = []
    for t in toks:
        if isinstance(t, tuple):
            fe = 'f32' if et == 'c64' else 'f64'
            re_, im_ = (_scalar(x, fe) for x in t)
            re_ = _bits_to_float(re_[1], fe) if isinstance(re_, tuple) else re_
            im_ = _bits_to_float(im_[1], fe) if isinstance(im_, tuple) else im_
            vals.append(complex(re_, im_))
            continue
        v = _scalar(t, et)
        if et in FLOAT_BITS:
            if isinstance(v, tuple):
                v = ('bits', v[1])
            elif et == 'bf16':
                v = ('bits', int(f32_to_bf16_bits(np.float32(v))[0]))
        vals.append(v)
    if len(vals) == 1 and n > 1:
        vals = vals * n
    if len(vals) != n:
        raise ValueError('%d values for %s' % (len(vals), ty))
    if et in FLOAT_BITS:
        bits_t = UINT_OF[FLOAT_BITS[et]]
        out = np.zeros(n, bits_t)
        fl = {16: np.float16, 32: np.float32, 64: np.float64}[FLOAT_BITS[et]]
        for i, v in enumerate(vals):
            if isinstance(v, tuple):
                out[i] = v[1]
            else:
                out[i] = np.array([v], fl).view(bits_t)[0]
        arr = out if et == 'bf16' else out.view(fl)
        return arr.reshape(dims)
    return np.array(vals, dt).reshape(dims)


def write_npy(path, arr, et):
    dt, descr = NP[et]
    arr = np.array(np.asarray(arr).astype(dt, copy=False), order="C")
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
        descr, repr(tuple(arr.shape)))
    pad = 64 - (10 + len(hdr) + 1) % 64
    hdr = hdr + ' ' * pad + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode('latin1'))
        f.write(arr.tobytes())


def write_npz(path, arrs_types):
    """Leaves arr_0, arr_1, ...; fixed timestamps so regenerating is byte-identical."""
    import zipfile
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_STORED) as z:
        for i, (a, et) in enumerate(arrs_types):
            tmp = path + '.tmp%d' % i
            write_npy(tmp, a, et)
            with open(tmp, 'rb') as f:
                data = f.read()
            os.unlink(tmp)
            z.writestr(zipfile.ZipInfo('arr_%d.npy' % i, date_time=(1980, 1, 1, 0, 0, 0)), data)


def hlo_module(name, body, root_types, comps=''):
    """Wrap an ENTRY body (lines 'Arg_i = T parameter(i)' first) into a module
    with XLA's header. Types in the body may omit layouts: they are added."""
    def addl(m):
        et, dims = m.group(1), m.group(2)
        d = tuple(int(x) for x in dims.split(',') if x)
        return layout(et, d)
    fix = lambda s: re.sub(r'\b([a-z][a-z0-9]*)\[([0-9,]*)\](?!\{)', addl, s)
    body = fix(body.strip('\n'))
    comps = fix(comps.strip('\n'))
    params = re.findall(r'=\s*(\S+)\s+parameter\((\d+)\)', body)
    ptypes = [t for t, _ in sorted(params, key=lambda p: int(p[1]))]
    if isinstance(root_types, str):
        rt = fix(root_types)
    else:
        rt = '(' + ', '.join(fix(t) for t in root_types) + ')'
    head = 'HloModule %s, entry_computation_layout={(%s)->%s}\n\n' % (name, ', '.join(ptypes), rt)
    text = head
    if comps:
        text += comps + '\n\n'
    text += 'ENTRY main {\n' + '\n'.join('  ' + l.strip() for l in body.split('\n') if l.strip()) + '\n}\n'
    return text


def emit(name, family, compare, body, inputs, expected, comps='', source='', ops=None):
    """inputs: list of (hlo_type, array); expected: (hlo_type, array) or a list of them (tuple)."""
    d = os.path.join(ROOT, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    tup = isinstance(expected, list)
    outs = expected if tup else [expected]
    rtypes = [o[0] for o in outs]
    with open(os.path.join(d, 'case.hlo'), 'w') as f:
        f.write(hlo_module(name, body, rtypes if tup else rtypes[0], comps))
    for i, (t, a) in enumerate(inputs):
        et, dims = parse_type(t)
        a = np.asarray(a)
        assert a.shape == dims, (name, t, a.shape)
        write_npy(os.path.join(d, 'in%d.npy' % i), a, et)
    for t, a in outs:
        et, dims = parse_type(t)
        assert np.asarray(a).shape == dims, (name, t, np.asarray(a).shape)
    if tup:
        write_npz(os.path.join(d, 'expected.npz'), [(a, parse_type(t)[0]) for t, a in outs])
    else:
        write_npy(os.path.join(d, 'expected.npy'), outs[0][1], parse_type(outs[0][0])[0])
    meta = {
        'source': source, 'ops': ops or [], 'family': family, 'compare': compare,
        'input_types': [layout(*parse_type(t)) for t, _ in inputs],
        'output_types': [layout(*parse_type(t)) for t in rtypes],
        'output': 'expected.npz' if tup else 'expected.npy',
    }
    with open(os.path.join(d, 'meta.json'), 'w') as f:
        json.dump(meta, f, indent=1)
        f.write('\n')
