#!/usr/bin/env python3
"""fusion_diff.py: fusion must never change a result. Generates random
modules around row reductions (a reduce over the last dimension, its
broadcast back, elementwise ops on rows and on row values, row values
broadcast along columns of square arrays, tuples of results) for several element types and shapes (rows shorter and longer
than a tile, one or two row dims), and runs each with hlorun's fusion on
and off (HLORUN_FUSION=0), on one and two threads: the four results must be
byte-identical, or the four runs fail alike.

With --chains the modules are dot -> row group -> dot chains
(chain_module), also run with small blocks of rows (HLORUN_CHAIN_ROWS).

Usage: fusion_diff.py [--chains] HLORUN FIRST_SEED LAST_SEED [WORKDIR]
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
    et = r.choice(['f32', 'f32', 'f64', 's32', 'bf16', 'f16'])
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


def chain_module(seed):
    """A dot, a row group over its result (softmax-like, then random row
    steps) and a second dot contracting the group's rows: the chain hlorun
    runs a block of rows at a time (interp/fuse_chain.c). Operand dims come
    in random orders, sizes include 1 (chains that do not apply), values
    f32, bf16 or f16 at each step, and some modules miss the pattern on
    purpose (the first dot or the group's result also used elsewhere, the
    second dot contracting another dim)."""
    r = random.Random(seed)
    nb = r.choice([0, 1, 1, 2])
    bdims = [r.choice([1, 2, 3]) for _ in range(nb)]
    def size(choices):   # 1 now and then: no chain (one row or column)
        return 1 if r.random() < 0.07 else r.choice(choices)
    m, n, k, n2 = size([2, 3, 13, 50]), size([2, 5, 33, 300]), size([3, 16, 70]), size([2, 7, 40])
    miss = r.choice([None] * 6 + ['d1_out', 'g_out', 'contract_m'])
    if miss == 'contract_m':
        n = m   # the second dot contracts the rows' other dim
    dt = r.choice(['f32', 'f32', 'bf16'])
    # The chain's types, drawn apart (the shapes stay those of the seed):
    # D1's result sdt, the group computing in gdt (converted from sdt, or in
    # sdt itself with reducers of that type), D2's lhs pdt, result odt, rhs cdt.
    t = random.Random(seed * 7919 + 1)
    sdt = t.choice(['f32', 'f32', 'bf16', 'f16'])
    gdt = sdt if sdt == 'f32' or t.random() < 0.5 else 'f32'
    pdt = t.choice([gdt, gdt, 'bf16' if gdt == 'f32' else 'f32'])
    odt, cdt = t.choice(['f32', pdt, 'bf16']), t.choice(['f32', 'bf16'])
    red = lambda name: name if gdt == 'f32' else '%s_%s' % (name, gdt)

    def operand(roles):
        """An operand holding (name, size) roles in a random dim order."""
        order = list(range(len(roles)))
        r.shuffle(order)
        dims = [roles[i][1] for i in order]
        pos = {roles[i][0]: d for d, i in enumerate(order)}
        return dims, pos

    def lst(xs):
        return ','.join(map(str, xs))

    ad, apos = operand([('b%d' % i, s) for i, s in enumerate(bdims)] + [('m', m), ('k', k)])
    bd, bpos = operand([('b%d' % i, s) for i, s in enumerate(bdims)] + [('k', k), ('n', n)])
    cd, cpos = operand([('b%d' % i, s) for i, s in enumerate(bdims)] + [('n', n), ('n2', n2)])
    full = '%s[%s]' % (gdt, lst(bdims + [m, n]))
    full_s = '%s[%s]' % (sdt, lst(bdims + [m, n]))
    row = '%s[%s]' % (gdt, lst(bdims + [m]))
    rdims = lst(range(nb + 1))
    bl = lst(apos['b%d' % i] for i in range(nb))
    lines = ['a = %s[%s] parameter(0)' % (dt, lst(ad)), 'b = %s[%s] parameter(1)' % (dt, lst(bd)),
             'c = %s[%s] parameter(2)' % (cdt, lst(cd)),
             's = %s dot(a, b), lhs_batch_dims={%s}, lhs_contracting_dims={%d}, '
             'rhs_batch_dims={%s}, rhs_contracting_dims={%d}'
             % (full_s, bl, apos['k'], lst(bpos['b%d' % i] for i in range(nb)), bpos['k'])]
    src = 's'
    if gdt != sdt:
        lines.append('sg = %s convert(s)' % full)
        src = 'sg'
    lines += ['z = %s[] constant(0)' % gdt, 'ninf = %s[] constant(-inf)' % gdt,
              'scale = %s[] constant(0.125)' % gdt, 'sb = %s broadcast(scale), dimensions={}' % full,
              'x = %s multiply(%s, sb)' % (full, src),
              'mx = %s reduce(x, ninf), dimensions={%d}, to_apply=%s' % (row, nb + 1, red('max')),
             'mxb = %s broadcast(mx), dimensions={%s}' % (full, rdims),
             'sh = %s subtract(x, mxb)' % full, 'e = %s exponential(sh)' % full]
    last = 'e'
    for i in range(r.randint(0, 3)):
        op = r.choice(['add', 'multiply', 'maximum', 'tanh', 'rowsum'])
        v = 'r%d' % i
        if op == 'tanh':
            lines.append('%s = %s tanh(%s)' % (v, full, last))
        elif op == 'rowsum':
            lines.append('%s_s = %s reduce(%s, z), dimensions={%d}, to_apply=%s'
                         % (v, row, last, nb + 1, red('add')))
            lines.append('%s_b = %s broadcast(%s_s), dimensions={%s}' % (v, full, v, rdims))
            lines.append('%s = %s divide(%s, %s_b)' % (v, full, last, v))
        else:
            other = r.choice(['x', 'e', 's'])
            lines.append('%s = %s %s(%s, %s)' % (v, full, op, last, src if other == 's' else other))
        last = v
    lines.append('sm = %s reduce(%s, z), dimensions={%d}, to_apply=%s'
                 % (row, last, nb + 1, red('add')))
    lines.append('smb = %s broadcast(sm), dimensions={%s}' % (full, rdims))
    lines.append('p = %s divide(%s, smb)' % (full, last))
    pv, full_p = 'p', full
    if pdt != gdt:
        full_p = '%s[%s]' % (pdt, lst(bdims + [m, n]))
        lines.append('pc = %s convert(p)' % full_p)
        pv = 'pc'
    cb = lst(cpos['b%d' % i] for i in range(nb))
    contract = nb if miss == 'contract_m' else nb + 1
    full_o = '%s[%s]' % (odt, lst(bdims + [m if miss != 'contract_m' else n, n2]))
    lines.append('o = %s dot(%s, c), lhs_batch_dims={%s}, lhs_contracting_dims={%d}, '
                 'rhs_batch_dims={%s}, rhs_contracting_dims={%d}'
                 % (full_o, pv, lst(range(nb)), contract, cb, cpos['n']))
    outs = ['o'] + {'d1_out': ['s'], 'g_out': [pv]}.get(miss, [])
    types = ', '.join({'o': full_o, 's': full_s, pv: full_p}[o] for o in outs)
    lines.append('ROOT t = (%s) tuple(%s)' % (types, ', '.join(outs)))
    comps = ''.join('%s%s {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n'
                    '  ROOT c = %s[] %s(a, b)\n}\n'
                    % (nm, '' if ty == 'f32' else '_' + ty, ty, ty, ty, op)
                    for nm, op in REDUCERS for ty in ('f32', 'bf16', 'f16'))
    text = 'HloModule chain_diff\n' + comps + 'ENTRY main {\n  ' + '\n  '.join(lines) + '\n}\n'
    # A chain needs D2 reading its lhs as it is (the unfused dot rounds an
    # lhs of another type to a narrow result's type first).
    chain = miss is None and min(m, n, n2) >= 2 and odt in (pdt, 'f32')
    return text, chain


def dot_chains(hlorun, path):
    """(dot chains, dot steps) of a run of path, from --stats: (1, 0) when
    its two dots ran as a chain, (0, 2) when they ran alone."""
    p = subprocess.run([hlorun, '--stats', '--random', path], capture_output=True, text=True)
    counts = {}
    for line in p.stderr.splitlines():
        f = line.split()
        if f[:1] == ['stats:'] and f[1] in ('dot', '(dot'):
            counts[f[1]] = int(f[3] if f[1] == '(dot' else f[2])
    return counts.get('(dot', 0), counts.get('dot', 0)


def run(hlorun, path, out, fusion, threads, chain_rows=None):
    env = dict(os.environ)
    env.pop('HLORUN_FUSION', None)
    env.pop('HLORUN_CHAIN_ROWS', None)
    if not fusion:
        env['HLORUN_FUSION'] = '0'
    if chain_rows:
        env['HLORUN_CHAIN_ROWS'] = str(chain_rows)
    p = subprocess.run([hlorun, '--threads', str(threads), '--random', '-o', out, path],
                       env=env, capture_output=True)
    if p.returncode != 0:
        return (p.returncode, p.stderr)
    with open(out, 'rb') as f:
        return (0, f.read())


def main():
    args = sys.argv[1:]
    chains = args[:1] == ['--chains']
    if chains:
        args = args[1:]
    hlorun, first, last = args[0], int(args[1]), int(args[2])
    work = args[3] if len(args) > 3 else tempfile.mkdtemp(prefix='hlorun-fusion-diff.')
    bad = chained = 0
    for seed in range(first, last):
        path = os.path.join(work, 'm.hlo')
        text, expect_chain = chain_module(seed) if chains else (module(seed), None)
        with open(path, 'w') as f:
            f.write(text)
        out = os.path.join(work, 'out.npz')
        if chains:   # the chain is planned exactly where the pattern holds
            steps = dot_chains(hlorun, path)
            if steps != ((1, 0) if expect_chain else (0, 2)):
                bad += 1
                os.replace(path, os.path.join(work, 'plan-%d.hlo' % seed))
                print('FAIL: seed %d: (chains, dots) %s, expected the chain %s' %
                      (seed, steps, 'planned' if expect_chain else 'not planned'))
                continue
            chained += expect_chain
        runs = [(fu, th, None) for fu in (True, False) for th in (1, 2)]
        if chains:   # blocks of rows that do not divide the rows, and single rows
            runs = runs[:3] + [(True, 2, random.Random(seed).choice([1, 2, 5, 7])), (True, 1, 3)]
        results = {run(hlorun, path, out, fu, th, cr) for fu, th, cr in runs}
        if chains and any(rc != 0 for rc, _ in results):   # every chain module runs
            bad += 1
            os.replace(path, os.path.join(work, 'fail-%d.hlo' % seed))
            print('FAIL: seed %d: %s' % (seed, [out for rc, out in results if rc][0]))
            continue
        if len(results) != 1:
            bad += 1
            os.replace(path, os.path.join(work, 'diff-%d.hlo' % seed))
            print('FAIL: seed %d: fused and unfused results differ (%s)'
                  % (seed, os.path.join(work, 'diff-%d.hlo' % seed)))
    print('%d modules, %d differ%s' % (last - first, bad,
                                      ' (%d ran as chains)' % chained if chains else ''))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
