#!/usr/bin/env python3
"""fusion_diff.py: fusion must never change a result. Generates random
modules around row reductions (a reduce over the last dimension, its
broadcast back, elementwise ops on rows and on row values, row values
broadcast along columns of square arrays, tuples of results) for several element types and shapes (rows shorter and longer
than a tile, one or two row dims), and runs each with hlorun's fusion on
and off (HLORUN_FUSION=0), on one and two threads: the four results must be
byte-identical, or the four runs fail alike.

Usage: fusion_diff.py HLORUN FIRST_SEED LAST_SEED [WORKDIR]
Exit 1 on any difference (the module is kept in WORKDIR as diff-SEED.hlo).
"""
import os
import random
import subprocess
import sys
import tempfile

REDUCERS = [('add', 'add'), ('max', 'maximum'), ('min', 'minimum'), ('mul', 'multiply')]


def module(seed):
    r = random.Random(seed)
    et = r.choice(['f32', 'f32', 'f64', 's32', 'bf16'])
    rows = [r.choice([1, 2, 3, 7, 64, 300])] + ([] if r.random() < 0.6 else [r.choice([2, 3])])
    cols = r.choice([1, 2, 5, 100, 1000, 2049, 5000, 17000])
    if r.random() < 0.2:   # square: a row value can also be broadcast along columns
        rows, cols = [rows[0]], rows[0]
    full = '%s[%s]' % (et, ','.join(map(str, rows + [cols])))
    row = '%s[%s]' % (et, ','.join(map(str, rows)))
    row_dims = ','.join(str(i) for i in range(len(rows)))
    last = len(rows)
    floats = et != 's32'
    unary = ['negate', 'abs'] + (['exponential', 'tanh', 'sine'] if floats else [])
    binary = ['add', 'multiply', 'subtract', 'maximum', 'minimum']
    lines = ['x = %s parameter(0)' % full, 'z = %s[] constant(0)' % et]
    fulls, rowvals = ['x'], []
    count = [0]

    def name():
        count[0] += 1
        return 'v%d' % count[0]

    def reduce_of(src):
        v = name()
        lines.append('%s = %s reduce(%s, z), dimensions={%d}, to_apply=%s'
                     % (v, row, src, last, r.choice(REDUCERS)[0]))
        rowvals.append(v)
        return v

    def broadcast_of(src):
        v = name()
        lines.append('%s = %s broadcast(%s), dimensions={%s}' % (v, full, src, row_dims))
        fulls.append(v)
        return v

    # One reduce, broadcast back and used; then random steps.
    b = broadcast_of(reduce_of('x'))
    v = name()
    lines.append('%s = %s %s(x, %s)' % (v, full, r.choice(binary), b))
    fulls.append(v)
    for _ in range(r.randint(2, 9)):
        k = r.random()
        v = name()
        if k < 0.3:
            lines.append('%s = %s %s(%s)' % (v, full, r.choice(unary), r.choice(fulls)))
            fulls.append(v)
        elif k < 0.55:
            lines.append('%s = %s %s(%s, %s)' % (v, full, r.choice(binary), r.choice(fulls),
                                                 r.choice(fulls)))
            fulls.append(v)
        elif k < 0.75:
            count[0] -= 1
            reduce_of(r.choice(fulls))
        elif k < 0.9:
            count[0] -= 1
            broadcast_of(r.choice(rowvals))
        elif k < 0.95 and len(rows) == 1 and rows[0] == cols:
            lines.append('%s = %s broadcast(%s), dimensions={1}' % (v, full, r.choice(rowvals)))
            fulls.append(v)
        else:
            lines.append('%s = %s %s(%s, %s)' % (v, row, r.choice(binary), r.choice(rowvals),
                                                 r.choice(rowvals)))
            rowvals.append(v)
    outs = [fulls[-1]] + ([rowvals[-1]] if r.random() < 0.5 else [])
    types = ', '.join(full if o in fulls else row for o in outs)
    lines.append('ROOT t = (%s) tuple(%s)' % (types, ', '.join(outs)))
    comps = ''.join('%s {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n'
                    '  ROOT c = %s[] %s(a, b)\n}\n' % (n, et, et, et, op) for n, op in REDUCERS)
    return 'HloModule fusion_diff\n' + comps + 'ENTRY main {\n  ' + '\n  '.join(lines) + '\n}\n'


def run(hlorun, path, out, fusion, threads):
    env = dict(os.environ)
    env.pop('HLORUN_FUSION', None)
    if not fusion:
        env['HLORUN_FUSION'] = '0'
    p = subprocess.run([hlorun, '--threads', str(threads), '--random', '-o', out, path],
                       env=env, capture_output=True)
    if p.returncode != 0:
        return (p.returncode, p.stderr)
    with open(out, 'rb') as f:
        return (0, f.read())


def main():
    hlorun, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    work = sys.argv[4] if len(sys.argv) > 4 else tempfile.mkdtemp(prefix='hlorun-fusion-diff.')
    bad = 0
    for seed in range(first, last):
        path = os.path.join(work, 'm.hlo')
        with open(path, 'w') as f:
            f.write(module(seed))
        out = os.path.join(work, 'out.npz')
        results = {run(hlorun, path, out, fu, th) for fu in (True, False) for th in (1, 2)}
        if len(results) != 1:
            bad += 1
            os.replace(path, os.path.join(work, 'diff-%d.hlo' % seed))
            print('FAIL: seed %d: fused and unfused results differ (%s)'
                  % (seed, os.path.join(work, 'diff-%d.hlo' % seed)))
    print('%d modules, %d differ' % (last - first, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
