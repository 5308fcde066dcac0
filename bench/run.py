#!/usr/bin/python3
"""make bench: run every benchmark workload with hlorun and the same
computation with numpy, and print a table of median times and ratios, the
machine's measured memory bandwidth, the fraction of it that memory-bound
workloads reach, and the GFLOP/s of the dot and convolution workloads.

Usage: bench/run.py HLORUN [--runs N] [--dir BENCH_DIR] [--only NAME]
numpy is Debian's python3-numpy (run with /usr/bin/python3). Times are
medians of N runs after one warm-up, execution only on both sides.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np


def median_time(fn, runs):
    fn()  # warm-up
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


def rnd(*shape, dtype=np.float32):
    rng = np.random.default_rng(0)
    return (rng.random(shape, dtype=np.float64) * 2 - 1).astype(dtype)


def np_elementwise(dtype):
    x = rnd(16777216)
    def f():
        # bf16 has no numpy type: a numpy user computes the chain in f32.
        return x * (1 / (1 + np.exp(-(x * np.float32(1.702))))) + \
            np.float32(0.5) * np.tanh(x + np.float32(0.25)) * np.exp(-(x * x))
    return f


def np_softmax():
    x = rnd(4096, 1024)
    def f():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return f


def np_matmul():
    a, b = rnd(1024, 1024), rnd(1024, 1024)
    return lambda: a @ b


def np_mlp():
    x, w1, b1, w2, b2 = rnd(256, 1024), rnd(1024, 4096), rnd(4096), rnd(4096, 1024), rnd(1024)
    def f():
        h = x @ w1 + b1
        g = 0.5 * h * (1 + np.tanh(np.float32(0.797884583) * (h + np.float32(0.044715) * h * h * h)))
        return g @ w2 + b2
    return f


def np_conv_block():
    x = rnd(8, 56, 56, 64)
    w1, b1, w2, b2 = rnd(3, 3, 64, 64), rnd(64), rnd(3, 3, 64, 64), rnd(64)
    def conv(inp, w):
        # im2col + one matmul: the fast way to write a 3x3 SAME conv in numpy.
        p = np.pad(inp, ((0, 0), (1, 1), (1, 1), (0, 0)))
        cols = np.stack([p[:, i:i + 56, j:j + 56, :] for i in range(3) for j in range(3)], axis=3)
        return cols.reshape(-1, 9 * 64) @ w.reshape(9 * 64, 64)
    def f():
        r1 = np.maximum(conv(x, w1).reshape(x.shape) + b1, 0)
        r2 = np.maximum(conv(r1, w2).reshape(x.shape) + b2, 0)
        return r2 + x
    return f


def np_reductions():
    v, m = rnd(16777216), rnd(4096, 4096)
    return lambda: (v.sum(), m.max(axis=1))


def np_while():
    def f():
        i, acc = 0, np.float32(0.5)
        while i < 100000:
            acc = acc * np.float32(0.999) + np.float32(i)
            i += 1
        return acc
    return f


def np_gather_scatter():
    table = rnd(50000, 512)
    raw = np.random.default_rng(1).integers(-2**31, 2**31 - 1, 8192, dtype=np.int32)
    def f():
        idx = (raw & 0x7fffffff) % 50000
        emb = table[idx]
        new = table.copy()
        np.add.at(new, idx, emb * np.float32(-0.01))
        return emb, new
    return f


def np_attention():
    x, wq, wk, wv, wo = rnd(8, 512, 512), rnd(512, 512), rnd(512, 512), rnd(512, 512), rnd(512, 512)
    def f():
        q = (x @ wq).reshape(8, 512, 8, 64).transpose(0, 2, 1, 3)
        k = (x @ wk).reshape(8, 512, 8, 64).transpose(0, 2, 3, 1)
        v = (x @ wv).reshape(8, 512, 8, 64).transpose(0, 2, 1, 3)
        s = (q @ k) * np.float32(0.125)
        e = np.exp(s - s.max(axis=3, keepdims=True))
        p = e / e.sum(axis=3, keepdims=True)
        ctx = (p @ v).transpose(0, 2, 1, 3).reshape(8, 512, 512)
        return ctx @ wo
    return f


# name: (numpy builder, GFLOP or None, bytes moved by an ideal implementation or None)
WORKLOADS = {
    "a_elementwise": (lambda: np_elementwise(np.float32), None, 2 * 4 * 16777216),
    "b_softmax": (np_softmax, None, 2 * 4 * 4096 * 1024),
    "c_matmul": (np_matmul, 2.147, None),
    "d_mlp": (np_mlp, 4.295, None),
    "e_conv_block": (np_conv_block, 3.699, None),
    "f_reductions": (np_reductions, None, 4 * (16777216 + 4096 * 4096)),
    "g_while_loop": (np_while, None, None),
    "h_gather_scatter": (np_gather_scatter, None, None),
    "i_attention": (np_attention, 12.9, None),
    "j_bf16_elementwise": (lambda: np_elementwise(np.float32), None, 2 * 2 * 16777216),
    "j_bf16_matmul": (np_matmul, 2.147, None),
}


def bandwidth_gbs():
    """Copy bandwidth (read + write) of a 512 MiB buffer, best of 5."""
    a = np.ones(64 * 2**20, dtype=np.float64)
    b = np.empty_like(a)
    best = min(median_time(lambda: np.copyto(b, a), 1) for _ in range(5))
    return 2 * a.nbytes / (best / 1e3) / 1e9


def hlorun_ms(hlorun, path, runs, env):
    p = subprocess.run([hlorun, "--random", "--bench", str(runs), path],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    m = re.search(r"bench: median_ms=([0-9.eE+-]+)", p.stderr)
    if p.returncode != 0 or not m:
        first = (p.stderr.strip().splitlines() or ["no output"])[0]
        return None, first[:70]
    return float(m.group(1)), ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hlorun")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "bench"))
    ap.add_argument("--only")
    args = ap.parse_args()
    env = dict(os.environ)
    bw = bandwidth_gbs()
    print(f"machine: {os.cpu_count()} cores, copy bandwidth {bw:.1f} GB/s (numpy, 512 MiB)")
    print(f"{'workload':<20} {'hlorun ms':>10} {'numpy ms':>10} {'ratio':>7}  notes")
    worse = 0
    for name, (builder, gflop, nbytes) in WORKLOADS.items():
        if args.only and args.only not in name:
            continue
        path = os.path.join(args.dir, name + ".hlo")
        ms, err = hlorun_ms(args.hlorun, path, args.runs, env)
        np_ms = median_time(builder(), args.runs)
        notes = []
        if ms is None:
            print(f"{name:<20} {'FAILED':>10} {np_ms:>10.2f} {'-':>7}  {err}")
            worse += 1
            continue
        ratio = ms / np_ms
        worse += ratio > 1.0
        if gflop:
            notes.append(f"hlorun {gflop / (ms / 1e3):.1f} GFLOP/s, numpy {gflop / (np_ms / 1e3):.1f}")
        if nbytes:
            gbs = nbytes / (ms / 1e3) / 1e9
            notes.append(f"{gbs:.1f} GB/s = {gbs / bw:.0%} of copy bandwidth")
        if name == "g_while_loop":
            notes.append(f"{ms * 1e6 / (100000 * 13):.0f} ns per instruction")
        print(f"{name:<20} {ms:>10.2f} {np_ms:>10.2f} {ratio:>7.2f}  {'; '.join(notes)}")
    print(f"{worse} workloads slower than numpy (ratio > 1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
