#!/usr/bin/python3
"""make bench: run every benchmark workload with hlorun and the same
computation with numpy, and print a table of median times, their ratio, and
each workload's distance to the machine's limit: the share of the measured
f32 FMA peak (bench/fma_peak.c) that dot and convolution workloads reach,
and for memory-bound ones the time against what the measured copy bandwidth
allows.

Usage: bench/run.py HLORUN [--runs N] [--rounds R] [--dir BENCH_DIR] [--only NAME]
                           [--fma-peak PROGRAM]
numpy is Debian's python3-numpy (run with /usr/bin/python3) in a worker
process of its own whose environment drops OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE, so that OpenBLAS picks its own kernel for this CPU rather
than an older one pinned for the host; the kernel it chose is printed
(python3-threadpoolctl). Times are medians of N runs after one warm-up,
execution only on both sides. Without --runs, N is chosen per workload and
side so the timed runs take about 0.4 s (at least 5, at most 200). The two
sides alternate in R rounds (default 5); a workload's ratio is the median of
its rounds' ratios (hlorun / numpy), its times the medians of its rounds'.

After the first table, c_matmul runs on one thread, alone (against one
core's FMA peak) and as one single-thread process per core at once (their
summed rate against every core's peak): the most its micro-kernel can reach
on this machine when nothing is shared, the ceiling of the peak targets.

A second table times the modules of bench/ops/ against numpy where it has a
counterpart, a third two built-in XLA:GPU targets against their
standard-HLO twins.

Targets (one PASS/MISS line each at the end):
  ratio       every workload at or under numpy's time (ratio <= 1)
  peak        e_conv_block >= 75% of the FMA peak; c_matmul and
              j_bf16_matmul >= 90%; i_attention >= 80%
  ops         depthwise_conv and strided_conv (bench/ops) >= 50% of their
              bound (the memory or the FMA bound, whichever binds)
  elementwise a_elementwise within 1.2x of its own arithmetic: the same
              chain on in-cache data (bench/ops/a_elementwise_incache.hlo),
              scaled to its size
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

# Share of the measured FMA peak each compute workload must reach.
PEAK_TARGETS = {"c_matmul": 0.90, "j_bf16_matmul": 0.90, "e_conv_block": 0.75, "i_attention": 0.80}


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


def np_strided_conv():
    x, w = rnd(8, 112, 112, 64), rnd(3, 3, 64, 128)
    def f():
        # SAME padding at stride 2: one row and column after.
        p = np.pad(x, ((0, 0), (0, 1), (0, 1), (0, 0)))
        cols = np.stack([p[:, i:i + 112:2, j:j + 112:2, :] for i in range(3) for j in range(3)],
                        axis=3)
        return cols.reshape(-1, 9 * 64) @ w.reshape(9 * 64, 128)
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


# The operations of bench/ops held to a bound: (GFLOP, bytes an ideal
# implementation reads and writes); the bound is the larger of the times the
# FMA peak and the copy bandwidth allow. depthwise: x and the result,
# f32[8,56,56,128] each; strided: x f32[8,112,112,64] and the result
# f32[8,56,56,128].
OPS_BOUNDS = {
    "depthwise_conv": (2 * 8 * 56 * 56 * 128 * 9 / 1e9, 2 * 4 * 8 * 56 * 56 * 128),
    "strided_conv": (2 * 8 * 56 * 56 * 128 * 9 * 64 / 1e9, 4 * (8 * 112 * 112 * 64 + 8 * 56 * 56 * 128)),
}

OPS = {
    "sort_rows": np_sort_rows,
    "cumsum_rows": np_cumsum_rows,
    "sum_leading": np_sum_leading,
    "argmax_rows": np_argmax_rows,
    "one_hot": np_one_hot,
    "fft_rows": np_fft_rows,
    "depthwise_conv": np_depthwise_conv,
    "weight_grad_conv": np_weight_grad_conv,
    "strided_conv": np_strided_conv,
    "maxpool_grad": None,
    "bf16_conv": None,
    "nchw_conv": None,
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
    """The BLAS numpy uses: library, version, kernel and threads
    (threadpoolctl), or the library this process has mapped."""
    try:
        import threadpoolctl
        for info in threadpoolctl.threadpool_info():
            if info.get("user_api") == "blas":
                return (f"{info.get('internal_api', '?')} {info.get('version', '?')}, "
                        f"kernel {info.get('architecture', '?')}, {info.get('num_threads', '?')} threads "
                        f"({os.path.basename(info.get('filepath', '?'))})")
    except ImportError:
        pass
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
    except OSError:
        return "unknown"
    names = sorted({os.path.realpath(p) for p in libs})
    return (", ".join(names) if names else "none mapped") + " (kernel unknown: install python3-threadpoolctl)"


# numpy runs in a worker process: OpenBLAS reads OPENBLAS_CORETYPE when it
# loads, so the native kernel needs a process started without it.
PINNING = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def numpy_worker():
    """The worker's loop: one request a line on stdin, one answer a line."""
    fns = {}
    for line in sys.stdin:
        req = line.split()
        if req[0] == "info":
            print(blas_in_use(), flush=True)
            continue
        table, name, runs = req[1], req[2], None if req[3] == "-" else int(req[3])
        if (table, name) not in fns:
            fns[(table, name)] = (WORKLOADS[name][0] if table == "w" else OPS[name])()
        ms, n = median_time(fns[(table, name)], runs)
        print(f"{ms!r} {n}", flush=True)


class Numpy:
    def __init__(self):
        env = {k: v for k, v in os.environ.items() if k not in PINNING}
        self.unpinned = [k for k in PINNING if k in os.environ]
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--numpy-worker"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def ask(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        answer = self.p.stdout.readline()
        if not answer:
            raise SystemExit("bench/run.py: the numpy worker stopped")
        return answer.strip()

    def info(self):
        blas = self.ask("info")
        how = (f"{', '.join(self.unpinned)} unset for numpy" if self.unpinned
               else "no OpenBLAS pinning in the environment")
        return f"{blas}; {how}"

    def time(self, table, name, runs):
        ms, n = self.ask(f"time {table} {name} {'-' if runs is None else runs}").split()
        return float(ms), int(n)

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def fma_peak_gflops(program, threads=None):
    """The FMA peak bench/fma_peak measures on every core (or on threads
    cores), or None."""
    if not program or not os.path.exists(program):
        return None
    p = subprocess.run([program] + ([str(threads)] if threads else []), capture_output=True, text=True)
    m = re.search(r"gflops=([0-9.]+)", p.stdout)
    return float(m.group(1)) if p.returncode == 0 and m else None


def hlorun_cmd(hlorun, path, runs, threads=None):
    return ([hlorun, "--random", "--bench", str(runs)]
            + (["--threads", str(threads)] if threads else []) + [path])


def bench_result(returncode, stderr):
    """(median ms, "") from a --bench run's stderr, or (None, its first line)."""
    m = re.search(r"bench: median_ms=([0-9.eE+-]+)", stderr)
    if returncode != 0 or not m:
        first = (stderr.strip().splitlines() or ["no output"])[0]
        return None, first[:70]
    return float(m.group(1)), ""


def run_capture(cmd, env):
    """(exit status, stderr) of cmd."""
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    return p.returncode, p.stderr


def hlorun_once(hlorun, path, runs, env):
    return bench_result(*run_capture(hlorun_cmd(hlorun, path, runs), env))


def gemm_ceiling(args, env, peak, rounds=3):
    """What c_matmul's kernel can reach on this machine with nothing shared:
    the product on one thread alone (against one core's FMA peak), then one
    single-thread process per core at once (their summed rate against the
    peak of every core). Two threads of one product cannot beat the second
    figure, which folds in what the machine loses when every core is busy
    (shared cache, memory, clock). Medians of `rounds` rounds."""
    cores = os.cpu_count() or 1
    path = os.path.join(args.dir, "c_matmul.hlo")
    gflop = WORKLOADS["c_matmul"][1]
    one_peak = fma_peak_gflops(args.fma_peak, 1)
    alone, together = [], []
    for _ in range(rounds):
        ms, _ = bench_result(*run_capture(hlorun_cmd(args.hlorun, path, 40, 1), env))
        if ms is None:
            return
        alone.append(ms)
        procs = [subprocess.Popen(hlorun_cmd(args.hlorun, path, 40, 1), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True, env=env) for _ in range(cores)]
        each = [bench_result(p.wait(), p.stderr.read()) for p in procs]
        if any(ms is None for ms, _ in each):
            return
        together.append(sum(gflop / (ms / 1e3) for ms, _ in each))
    a = statistics.median(alone)
    line = f"c_matmul on one thread: {a:.2f} ms, {gflop / (a / 1e3):.1f} GFLOP/s"
    if one_peak:
        line += f" ({gflop / (a / 1e3) / one_peak:.0%} of one core's FMA peak, {one_peak:.1f})"
    t = statistics.median(together)
    line += f"; {cores} such processes at once: {t:.1f} GFLOP/s together"
    if peak:
        line += f" ({t / peak:.0%} of the FMA peak: this kernel's ceiling here)"
    print(line)


def hlorun_ms(hlorun, path, runs, env):
    """(median ms, runs, error); without runs, a 3-run probe sizes the run."""
    if runs is None:
        probe, err = hlorun_once(hlorun, path, 3, env)
        if probe is None:
            return None, 0, err
        runs = runs_for(probe)
    ms, err = hlorun_once(hlorun, path, runs, env)
    return ms, runs, err


def bound_ms(gflop, nbytes, peak, bw):
    """The time the machine's limits allow: (ms, which limit binds)."""
    t_fma = gflop / peak * 1e3 if gflop and peak else 0
    t_mem = nbytes / (bw * 1e9) * 1e3 if nbytes else 0
    return (t_fma, "FMA") if t_fma >= t_mem else (t_mem, "memory")


def ops_table(args, env, npw, peak, bw, misses, checked):
    """The other operations: medians (rounds alternating), ratios, bounds."""
    print("other operations (bench/ops/)")
    print(f"{'operation':<20} {'hlorun ms':>10} {'numpy ms':>10} {'ratio':>7}  limit")
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops")
    for name, builder in OPS.items():
        if args.only and args.only not in name:
            continue
        h, n, ratios, err = [], [], [], ""
        for _ in range(args.rounds):
            ms, _, err = hlorun_ms(args.hlorun, os.path.join(here, name + ".hlo"), args.runs, env)
            if ms is None:
                break
            h.append(ms)
            if builder:
                n.append(npw.time("o", name, args.runs)[0])
                ratios.append(ms / n[-1])
        if len(h) < args.rounds:
            print(f"{name:<20} {'FAILED':>10}  {err}")
            if name in OPS_BOUNDS:
                checked["ops"] += 1
                misses["ops"].append(f"{name} failed")
            continue
        ms = statistics.median(h)
        limit = ""
        if name in OPS_BOUNDS:
            b, which = bound_ms(*OPS_BOUNDS[name], peak, bw)
            limit = f"{b / ms:.0%} of the {which} bound ({b:.2f} ms)"
            checked["ops"] += 1
            if b / ms < 0.5:
                misses["ops"].append(f"{name} {b / ms:.0%}")
        if n:
            print(f"{name:<20} {ms:>10.2f} {statistics.median(n):>10.2f} "
                  f"{statistics.median(ratios):>7.2f}  {limit}")
        else:
            print(f"{name:<20} {ms:>10.2f} {'-':>10} {'-':>7}  {limit}")


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


INCACHE = "a_elementwise_incache"   # bench/ops: a_elementwise's chain on 128K elements
INCACHE_SCALE = 16777216 / 131072


def main():
    if sys.argv[1:] == ["--numpy-worker"]:
        numpy_worker()
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("hlorun")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--dir", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "bench"))
    ap.add_argument("--only")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--fma-peak", help="the bench/fma_peak program")
    args = ap.parse_args()
    env = dict(os.environ)
    ops_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops")
    npw = Numpy()
    bw = bandwidth_gbs()
    peak = fma_peak_gflops(args.fma_peak)
    print(f"machine: {os.cpu_count()} cores, copy bandwidth {bw:.1f} GB/s (numpy, 512 MiB), "
          + (f"f32 FMA peak {peak:.1f} GFLOP/s (bench/fma_peak, every core)" if peak
             else "FMA peak not measured (no --fma-peak program)"))
    print(f"numpy {np.__version__}, BLAS: {npw.info()}")
    print(f"{'workload':<20} {'hlorun ms':>10} {'numpy ms':>10} {'ratio':>7}  limit; notes")
    misses = {"ratio": [], "peak": [], "ops": [], "elementwise": [], "while": []}
    checked = {k: 0 for k in misses}
    for name, (_, gflop, nbytes) in WORKLOADS.items():
        if args.only and args.only not in name:
            continue
        path = os.path.join(args.dir, name + ".hlo")
        # Rounds alternate between the two sides, so that a slow spell of a
        # shared machine falls on both rather than on whichever ran then.
        # Memory-bound workloads measure the copy bandwidth in each round
        # too: the limit they are held to is the one the machine offered then.
        h, n, ratios, bws, incache = [], [], [], [], []
        err, runs, np_runs = "", 0, 0
        for _ in range(args.rounds):
            ms, runs, err = hlorun_ms(args.hlorun, path, args.runs, env)
            np_one, np_runs = npw.time("w", name, args.runs)
            n.append(np_one)
            if nbytes:
                bws.append(bandwidth_gbs(3))
            if name == "a_elementwise":
                ic, _, _ = hlorun_ms(args.hlorun, os.path.join(ops_dir, INCACHE + ".hlo"), args.runs, env)
                if ic is not None:
                    incache.append(ic * INCACHE_SCALE)
            if ms is None:
                break
            h.append(ms)
            ratios.append(ms / np_one)
        checked["ratio"] += 1
        np_ms = statistics.median(n)
        if len(h) < args.rounds:
            print(f"{name:<20} {'FAILED':>10} {np_ms:>10.2f} {'-':>7}  {err}")
            misses["ratio"].append(name)
            continue
        ms, ratio = statistics.median(h), statistics.median(ratios)
        if ratio > 1.0:
            misses["ratio"].append(f"{name} {ratio:.2f}")
        notes = []
        if gflop:
            rate = gflop / (ms / 1e3)
            if peak:
                notes.append(f"{rate / peak:.0%} of the FMA peak")
                if name in PEAK_TARGETS:
                    checked["peak"] += 1
                    if rate / peak < PEAK_TARGETS[name]:
                        misses["peak"].append(f"{name} {rate / peak:.0%} < {PEAK_TARGETS[name]:.0%}")
            notes.append(f"hlorun {rate:.1f} GFLOP/s, numpy {gflop / (np_ms / 1e3):.1f}")
        if nbytes:
            wbw = statistics.median(bws)
            ideal_ms = nbytes / (wbw * 1e9) * 1e3
            notes.append(f"{ms / ideal_ms:.2f}x the copy-bandwidth time ({wbw:.1f} GB/s in its rounds)")
        if name == "a_elementwise":
            checked["elementwise"] += 1
            if incache:
                arith = statistics.median(incache)
                notes.append(f"{ms / arith:.2f}x its in-cache arithmetic ({arith:.2f} ms)")
                if ms > 1.2 * arith:
                    misses["elementwise"].append(f"{ms / arith:.2f}x")
            else:
                misses["elementwise"].append(f"{INCACHE} failed")
        if name == "g_while_loop":
            ns = ms * 1e6 / (100000 * 13)
            notes.append(f"{ns:.0f} ns per instruction")
            checked["while"] += 1
            if ns >= 100:
                misses["while"].append(f"{ns:.0f} ns")
        notes.append(f"{args.rounds}x{runs}/{np_runs} runs")
        print(f"{name:<20} {ms:>10.2f} {np_ms:>10.2f} {ratio:>7.2f}  {'; '.join(notes)}")
    if args.fma_peak and (not args.only or args.only in "c_matmul"):
        gemm_ceiling(args, env, peak)
    if not args.only or any(args.only in name for name in OPS):
        ops_table(args, env, npw, peak, bw, misses, checked)
    if not args.only or any(args.only in name for name in GPU_TWINS):
        gpu_twins_table(args, env)
    npw.close()
    labels = {
        "ratio": "every workload at or under numpy's time (numpy on its native kernel)",
        "peak": "c_matmul, j_bf16_matmul >= 90%, i_attention >= 80%, e_conv_block >= 75% of the FMA peak",
        "ops": "depthwise_conv and strided_conv >= 50% of their memory or FMA bound",
        "elementwise": "a_elementwise within 1.2x of its own arithmetic on in-cache data",
        "while": "scalar while loop under 100 ns per instruction",
    }
    if not peak:
        checked["peak"] = checked["ops"] = 0
    for key, label in labels.items():
        if not checked[key]:
            print(f"target {key:<11} -     {label}: not measured")
            continue
        verdict = "PASS" if not misses[key] else "MISS"
        extra = f" (missed: {', '.join(misses[key])})" if misses[key] else ""
        print(f"target {key:<11} {verdict}  {label}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
