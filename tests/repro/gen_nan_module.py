#!/usr/bin/env python3
"""Write the planted-NaN module of tests/repro/reduce.sh and bench/reduce.py.

About 200 instructions: ENTRY computes a chain of harmless elementwise steps
(and some dead ones) from x: f32[8], then a while loop runs 5 iterations over
(i, v). The body updates v through a long chain; beside it, it takes
log((2.5 - i) * h) with h = 1 / (1 + v*v) > 0, which is the log of a negative
value first at iteration 3 (and only from there). numpy only; with --values
it prints, as .npy files into a directory, x and the operand of that log at
iteration 3 (worked out here with numpy in f32, step by step).

Usage: gen_nan_module.py OUT.hlo [VALUES_DIR]
"""
import sys

import numpy as np

CHAIN_ENTRY = 60     # ENTRY steps before the loop
DEAD_ENTRY = 25      # ENTRY steps nobody reads
CHAIN_BODY = 45      # body steps updating v
SIDE_BODY = 40       # body steps beside the log, folded into the result
F = np.float32


def entry_step(k, v):
    # alternate multiply by 0.75 and add 0.25: values stay in (0, 2)
    return v * F(0.75) if k % 2 == 0 else v + F(0.25)


def body_step(k, v):
    return v * F(0.5) if k % 2 == 0 else v + F(0.5)


def main():
    out = sys.argv[1]
    L = []
    L.append('HloModule planted_nan, entry_computation_layout={(f32[8]{0})->f32[8]{0}}')
    L.append('')
    # condition: i < 5
    L.append('%cond (cs: (s32[], f32[8])) -> pred[] {')
    L.append('  %cs = (s32[], f32[8]{0}) parameter(0)')
    L.append('  %ci = s32[] get-tuple-element(%cs), index=0')
    L.append('  %five = s32[] constant(5)')
    L.append('  ROOT %lt = pred[] compare(%ci, %five), direction=LT')
    L.append('}')
    L.append('')
    L.append('%body (s: (s32[], f32[8])) -> (s32[], f32[8]) {')
    L.append('  %s = (s32[], f32[8]{0}) parameter(0)')
    L.append('  %i = s32[] get-tuple-element(%s), index=0')
    L.append('  %v = f32[8]{0} get-tuple-element(%s), index=1')
    L.append('  %half = f32[] constant(0.5)')
    L.append('  %halfs = f32[8]{0} broadcast(%half), dimensions={}')
    prev = '%v'
    for k in range(CHAIN_BODY):
        op = 'multiply' if k % 2 == 0 else 'add'
        L.append('  %%b%d = f32[8]{0} %s(%s, %%halfs)' % (k, op, prev))
        prev = '%%b%d' % k
    vnext = prev
    # the planted log: (2.5 - i) * 1 / (1 + v*v)
    L.append('  %fi = f32[] convert(%i)')
    L.append('  %twofive = f32[] constant(2.5)')
    L.append('  %d = f32[] subtract(%twofive, %fi)')
    L.append('  %db = f32[8]{0} broadcast(%d), dimensions={}')
    L.append('  %vv = f32[8]{0} multiply(%v, %v)')
    L.append('  %one = f32[] constant(1)')
    L.append('  %ones = f32[8]{0} broadcast(%one), dimensions={}')
    L.append('  %den = f32[8]{0} add(%ones, %vv)')
    L.append('  %h = f32[8]{0} divide(%ones, %den)')
    L.append('  %u = f32[8]{0} multiply(%db, %h)')
    L.append('  %lg = f32[8]{0} log(%u)')
    prev = '%lg'
    for k in range(SIDE_BODY):
        op = 'multiply' if k % 2 == 0 else 'add'
        L.append('  %%x%d = f32[8]{0} %s(%s, %%halfs)' % (k, op, prev))
        prev = '%%x%d' % k
    L.append('  %zero = f32[] constant(0)')
    L.append('  %zeros = f32[8]{0} broadcast(%zero), dimensions={}')
    L.append('  %%sidez = f32[8]{0} multiply(%s, %%zeros)' % prev)
    L.append('  %%vn = f32[8]{0} add(%s, %%sidez)' % vnext)
    L.append('  %inc = s32[] constant(1)')
    L.append('  %in = s32[] add(%i, %inc)')
    L.append('  ROOT %t = (s32[], f32[8]{0}) tuple(%in, %vn)')
    L.append('}')
    L.append('')
    L.append('ENTRY %main (x: f32[8]) -> f32[8] {')
    L.append('  %x = f32[8]{0} parameter(0)')
    L.append('  %q = f32[] constant(0.75)')
    L.append('  %qs = f32[8]{0} broadcast(%q), dimensions={}')
    L.append('  %r = f32[] constant(0.25)')
    L.append('  %rs = f32[8]{0} broadcast(%r), dimensions={}')
    prev = '%x'
    for k in range(CHAIN_ENTRY):
        op, c = ('multiply', '%qs') if k % 2 == 0 else ('add', '%rs')
        L.append('  %%e%d = f32[8]{0} %s(%s, %s)' % (k, op, prev, c))
        prev = '%%e%d' % k
    for k in range(DEAD_ENTRY):
        L.append('  %%dead%d = f32[8]{0} subtract(%%e%d, %%qs)' % (k, k))
    L.append('  %i0 = s32[] constant(0)')
    L.append('  %%init = (s32[], f32[8]{0}) tuple(%%i0, %s)' % prev)
    L.append('  %loop = (s32[], f32[8]{0}) while(%init), condition=%cond, body=%body')
    L.append('  %vend = f32[8]{0} get-tuple-element(%loop), index=1')
    L.append('  ROOT %res = f32[8]{0} add(%vend, %qs)')
    L.append('}')
    with open(out, 'w') as f:
        f.write('\n'.join(L) + '\n')

    if len(sys.argv) > 2:
        d = sys.argv[2]
        x = np.linspace(0.1, 0.8, 8).astype(F)
        np.save(d + '/x.npy', x)
        v = x
        for k in range(CHAIN_ENTRY):
            v = entry_step(k, v)
        for it in range(3):          # iterations 0, 1, 2 update v
            for k in range(CHAIN_BODY):
                v = body_step(k, v)
        h = F(1) / (F(1) + v * v)
        u = (F(2.5) - F(3)) * h      # iteration 3
        np.save(d + '/v3.npy', v)
        np.save(d + '/u3.npy', u.astype(F))


if __name__ == '__main__':
    main()
