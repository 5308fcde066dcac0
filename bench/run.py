#!/usr/bin/python3
"""make bench: run every benchmark workload with hlorun and the same
computation with numpy, and print a table of median times and ratios, the
machine's measured memory bandwidth, the fraction of it that memory-bound
workloads reach, and the GFLOP/s of the dot and convolution workloads.

Usage: bench/run.py HLORUN [--runs N] [--rounds R] [--dir BENCH_DIR] [--only NAME]
numpy is Debian's python3-numpy (run with /usr/bin/python3), with the BLAS
the libblas.so.3 alternative points to (install libopenblas0-pthread for a
fair matmul baseline; the script names the one in use). Times are medians of
N runs after one warm-up, execution only on both sides. Without --runs, N is
chosen per workload and side so the timed runs take about 0.4 s (at least 5,
at most 200): a 2 ms workload measured 5 times gives a median of the first,
noisier runs (its first run after the warm-up still faults in a fresh result
buffer), not of the steady state. The two sides alternate in R rounds
(default 5) and each reports the median of its round medians; memory-bound
workloads also measure the copy bandwidth in each round and are held to its
median.

A second table times the modules of bench/ops/ (sort, cumulative sum,
sums over a leading dimension, argmax, FFT, depthwise and weight-gradient
convolutions, max-pool gradient, a 2-D transpose, a concatenation, vector
times matrix and matrix times vector) against numpy where it has a counterpart:
figures only, no targets. A third times two built-in XLA:GPU targets (a
cuBLASLt GEMM with a BIAS_GELU epilogue, a cuDNN bias+ReLU convolution)
against the same computations in standard HLO.

Targets (one PASS/MISS line each at the end):
  ratio       every workload at least as fast as numpy (ratio <= 1)
  bandwidth   memory-bound workloads within 1.5x of the time the copy
              bandwidth allows for the bytes an ideal implementation must
              read and write (each input once, each output once)
  gflops      dot and convolution workloads at >= 70% of numpy's matmul
              GFLOP/s (c_matmul's numpy figure)
  while       the scalar while loop under 100 ns per instruction
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np


TIMED_SECONDS, MIN_RUNS, MAX_RUNS = 0.4, 5, 200


def runs_for(ms):
    """Runs that take about TIMED_SECONDS at ms per run."""
    return max(MIN_RUNS, min(MAX_RUNS, int(TIMED_SECONDS * 1e3 / max(ms, 1e-3))))


def median_time(fn, runs):
    fn()  # warm-up
    if runs is None:
        t = time.perf_counter()
        fn()
        runs = runs_for((time.perf_counter() - t) * 1e3)
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3, runs


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


# name: (numpy builder, GFLOP or None, bytes an ideal implementation must read
# and write, or None). Bytes: a/j read x and write the result (16M elements
# each); b reads x once and writes the result once (a row fits in cache);
# f reads both inputs once (the outputs are tiny).
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


# Other operations (bench/ops/): figures only, no targets. Each entry: the
# numpy computation, or None where numpy has no direct counterpart.
def np_sort_rows():
    x = rnd(1024, 4096)
    return lambda: np.sort(x, axis=1)


def np_cumsum_rows():
    x = rnd(256, 4096)
    return lambda: np.cumsum(x, axis=1)


def np_sum_leading():
    x = rnd(4096, 4096)
    return lambda: x.sum(axis=0)


def np_argmax_rows():
    x = rnd(4096, 4096)
    return lambda: (x.max(axis=1), x.argmax(axis=1))


def np_one_hot():
    labels = np.random.default_rng(0).integers(-8, 8, 16384, dtype=np.int32)
    classes = np.arange(1024, dtype=np.int32)
    return lambda: (labels[:, None] == classes).astype(np.float32)


def np_fft_rows():
    x = (rnd(256, 4096) + 1j * rnd(256, 4096)).astype(np.complex64)
    return lambda: np.fft.fft(x, axis=1)


def np_depthwise_conv():
    x, w = rnd(8, 56, 56, 128), rnd(3, 3, 1, 128)
    def f():
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        out = np.zeros_like(x)
        for ky in range(3):
            for kx in range(3):
                out += xp[:, ky:ky + 56, kx:kx + 56, :] * w[ky, kx, 0]
        return out
    return f


def np_weight_grad_conv():
    x, g = rnd(8, 56, 56, 64), rnd(8, 56, 56, 64)
    def f():
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        return np.stack([np.stack([np.tensordot(xp[:, ky:ky + 56, kx:kx + 56, :], g,
                                                axes=([0, 1, 2], [0, 1, 2]))
                                   for kx in range(3)]) for ky in range(3)])
    return f


def np_transpose_2d():
    x = rnd(4096, 4096)
    return lambda: np.ascontiguousarray(x.T)


def np_concat_rows():
    x, y = rnd(2048, 4096), rnd(2048, 4096)
    return lambda: np.concatenate([x, y], axis=0)


def np_vecmat():
    x, w = rnd(1, 4096), rnd(4096, 8192)
    return lambda: x @ w


def np_matvec():
    a, y = rnd(8192, 4096), rnd(4096)
    return lambda: a @ y


OPS = {
    "sort_rows": np_sort_rows,
    "cumsum_rows": np_cumsum_rows,
    "sum_leading": np_sum_leading,
    "argmax_rows": np_argmax_rows,
    "one_hot": np_one_hot,
    "fft_rows": np_fft_rows,
    "depthwise_conv": np_depthwise_conv,
    "weight_grad_conv": np_weight_grad_conv,
    "maxpool_grad": None,
    "transpose_2d": np_transpose_2d,
    "concat_rows": np_concat_rows,
    "vecmat": np_vecmat,
    "matvec": np_matvec,
}


def bandwidth_gbs(copies=5):
    """Copy bandwidth (read + write) of a 512 MiB buffer, best of `copies`."""
    a = np.ones(64 * 2**20, dtype=np.float64)
    b = np.empty_like(a)
    best = min(median_time(lambda: np.copyto(b, a), 1)[0] for _ in range(copies))
    return 2 * a.nbytes / (best / 1e3) / 1e9


def blas_in_use():
    """The BLAS library numpy's process has mapped (by file name)."""
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
    except OSError:
        return "unknown"
    names = sorted({os.path.realpath(p) for p in libs})
    return ", ".join(names) if names else "none mapped"


def hlorun_once(hlorun, path, runs, env):
    p = subprocess.run([hlorun, "--random", "--bench", str(runs), path],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    m = re.search(r"bench: median_ms=([0-9.eE+-]+)", p.stderr)
    if p.returncode != 0 or not m:
        first = (p.stderr.strip().splitlines() or ["no output"])[0]
        return None, first[:70]
    return float(m.group(1)), ""


def hlorun_ms(hlorun, path, runs, env):
    """(median ms, runs, error); without runs, a 3-run probe sizes the run."""
    if runs is None:
        probe, err = hlorun_once(hlorun, path, 3, env)
        if probe is None:
            return None, 0, err
        runs = runs_for(probe)
    ms, err = hlorun_once(hlorun, path, runs, env)
    return ms, runs, err


def ops_table(args, env):
    """The other operations: medians (rounds alternating as above) and ratios."""
    print(f"other operations (bench/ops/; figures only)")
    print(f"{'operation':<20} {'hlorun ms':>10} {'numpy ms':>10} {'ratio':>7}")
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops")
    for name, builder in OPS.items():
        if args.only and args.only not in name:
            continue
        fn = builder() if builder else None
        h, n = [], []
        for _ in range(args.rounds):
            ms, _, err = hlorun_ms(args.hlorun, os.path.join(here, name + ".hlo"), args.runs, env)
            if ms is None:
                break
            h.append(ms)
            if fn:
                n.append(median_time(fn, args.runs)[0])
        if len(h) < args.rounds:
            print(f"{name:<20} {'FAILED':>10}  {err}")
            continue
        ms = statistics.median(h)
        if n:
            np_ms = statistics.median(n)
            print(f"{name:<20} {ms:>10.2f} {np_ms:>10.2f} {ms / np_ms:>7.2f}")
        else:
            print(f"{name:<20} {ms:>10.2f} {'-':>10} {'-':>7}")


# Built-in XLA:GPU targets (targets/gpu/) against their standard-HLO twins
# (bench/ops/gpu_*.hlo and gpu_*_twin.hlo): the same kernels should give
# the same time (ratio about 1); figures only.
GPU_TWINS = ["gpu_gemm_bias_gelu", "gpu_conv_bias_relu"]


def gpu_twins_table(args, env):
    print("XLA:GPU targets against their standard-HLO twins (bench/ops/gpu_*; figures only)")
    print(f"{'target':<20} {'call ms':>10} {'twin ms':>10} {'ratio':>7}")
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops")
    for name in GPU_TWINS:
        if args.only and args.only not in name:
            continue
        c, t, err = [], [], ""
        for _ in range(args.rounds):
            ms, _, err = hlorun_ms(args.hlorun, os.path.join(here, name + ".hlo"), args.runs, env)
            tw, _, err2 = hlorun_ms(args.hlorun, os.path.join(here, name + "_twin.hlo"), args.runs, env)
            if ms is None or tw is None:
                err = err or err2
                break
            c.append(ms)
            t.append(tw)
        if len(c) < args.rounds:
            print(f"{name:<20} {'FAILED':>10}  {err}")
            continue
        cm, tm = statistics.median(c), statistics.median(t)
        print(f"{name:<20} {cm:>10.2f} {tm:>10.2f} {cm / tm:>7.2f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hlorun")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--dir", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "bench"))
    ap.add_argument("--only")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    env = dict(os.environ)
    bw = bandwidth_gbs()
    print(f"machine: {os.cpu_count()} cores, copy bandwidth {bw:.1f} GB/s (numpy, 512 MiB)")
    print(f"numpy {np.__version__}, BLAS: {blas_in_use()}")
    print(f"{'workload':<20} {'hlorun ms':>10} {'numpy ms':>10} {'ratio':>7}  notes")
    worse = 0
    misses = {"ratio": [], "bandwidth": [], "gflops": [], "while": []}
    checked = {k: 0 for k in misses}
    gemm_rates = {}
    np_matmul_gflops = None
    for name, (builder, gflop, nbytes) in WORKLOADS.items():
        if args.only and args.only not in name:
            continue
        path = os.path.join(args.dir, name + ".hlo")
        # Rounds alternate between the two sides, so that a slow spell of a
        # shared machine falls on both rather than on whichever ran then;
        # each side's figure is the median of its round medians.
        # Memory-bound workloads measure the copy bandwidth in each round too:
        # the limit they are held to is the one the machine offered then.
        fn = builder()
        h, n, bws = [], [], []
        err = ""
        for _ in range(args.rounds):
            ms, runs, err = hlorun_ms(args.hlorun, path, args.runs, env)
            np_one, np_runs = median_time(fn, args.runs)
            n.append(np_one)
            if nbytes:
                bws.append(bandwidth_gbs(3))
            if ms is None:
                break
            h.append(ms)
        ms = statistics.median(h) if h and len(h) == args.rounds else None
        np_ms = statistics.median(n)
        wbw = statistics.median(bws) if bws else bw
        notes = [f"{args.rounds}x{runs}/{np_runs} runs"]
        if name == "c_matmul" and gflop:
            np_matmul_gflops = gflop / (np_ms / 1e3)
        checked["ratio"] += 1
        if ms is None:
            print(f"{name:<20} {'FAILED':>10} {np_ms:>10.2f} {'-':>7}  {err}")
            worse += 1
            misses["ratio"].append(name)
            continue
        ratio = ms / np_ms
        if ratio > 1.0:
            worse += 1
            misses["ratio"].append(name)
        if gflop:
            rate = gflop / (ms / 1e3)
            gemm_rates[name] = rate
            notes.append(f"hlorun {rate:.1f} GFLOP/s, numpy {gflop / (np_ms / 1e3):.1f}")
        if nbytes:
            gbs = nbytes / (ms / 1e3) / 1e9
            ideal_ms = nbytes / (wbw * 1e9) * 1e3
            notes.append(f"{gbs:.1f} GB/s = {gbs / wbw:.0%} of the {wbw:.1f} GB/s copy bandwidth "
                         f"measured in its rounds ({ms / ideal_ms:.2f}x the bandwidth limit)")
            checked["bandwidth"] += 1
            if ms > 1.5 * ideal_ms:
                misses["bandwidth"].append(f"{name} {ms / ideal_ms:.2f}x")
        if name == "g_while_loop":
            ns = ms * 1e6 / (100000 * 13)
            notes.append(f"{ns:.0f} ns per instruction")
            checked["while"] += 1
            if ns >= 100:
                misses["while"].append(f"{ns:.0f} ns")
        print(f"{name:<20} {ms:>10.2f} {np_ms:>10.2f} {ratio:>7.2f}  {'; '.join(notes)}")
    print(f"{worse} workloads slower than numpy (ratio > 1)")
    if np_matmul_gflops is not None:
        for name, rate in gemm_rates.items():
            checked["gflops"] += 1
            if rate < 0.7 * np_matmul_gflops:
                misses["gflops"].append(f"{name} {rate / np_matmul_gflops:.0%}")
    labels = {
        "ratio": "every workload at least as fast as numpy",
        "bandwidth": "memory-bound workloads within 1.5x of the bandwidth limit",
        "gflops": "dot/convolution >= 70% of numpy's matmul GFLOP/s"
                  + (f" ({np_matmul_gflops:.1f})" if np_matmul_gflops else ""),
        "while": "scalar while loop under 100 ns per instruction",
    }
    if not args.only or any(args.only in name for name in OPS):
        ops_table(args, env)
    if not args.only or any(args.only in name for name in GPU_TWINS):
        gpu_twins_table(args, env)
    for key, label in labels.items():
        if not checked[key]:
            print(f"target {key:<9} -     {label}: not measured")
            continue
        verdict = "PASS" if not misses[key] else "MISS"
        extra = f" (missed: {', '.join(misses[key])})" if misses[key] else ""
        print(f"target {key:<9} {verdict}  {label}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
