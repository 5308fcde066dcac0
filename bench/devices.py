#!/usr/bin/python3
"""make bench, multi-device part: the all-reduce, all-gather and
collective-permute of 64 MiB across 8 threaded devices and across
`mpirun -np 2`, as GB/s of payload (64 MiB per device per run) against
the copy bandwidth numpy measures in the same run, and the 8-partition
matmul against the same product on one device.
Figures only, no targets.

Usage: bench/devices.py HLORUN [--runs N]"""
import argparse
import os
import re
import shutil
import subprocess
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def median_ms(cmd, env=None):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    m = re.search(r"bench: median_ms=([0-9.]+)", out.stderr)
    if out.returncode != 0 or not m:
        raise SystemExit("bench/devices.py: %s failed:\n%s" % (" ".join(cmd), out.stderr[-2000:]))
    return float(m.group(1))


def copy_gbs(nbytes):
    a = np.ones(nbytes // 4, dtype=np.float32)
    b = np.empty_like(a)
    best = []
    for _ in range(7):
        t0 = time.perf_counter()
        np.copyto(b, a)
        best.append(time.perf_counter() - t0)
    best.sort()
    return 2 * nbytes / best[len(best) // 2] / 1e9   # read + write


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hlorun")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    h = args.hlorun
    runs = str(args.runs)
    payload = 64 << 20
    bw = copy_gbs(payload)
    print("multi-device benchmarks (medians of %s runs; figures only)" % runs)
    print("  copy bandwidth (numpy, 64 MiB, read+write): %.1f GB/s" % bw)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    # The all-reduce, then two collectives that move data without
    # arithmetic: each device's 64 MiB result is the payload.
    for name, what in (("allreduce_64m", "all-reduce 64 MiB"), ("allgather_64m", "all-gather 64 MiB"),
                       ("permute_64m", "collective-permute 64 MiB")):
        hlo = os.path.join(HERE, "devices", name + ".hlo")
        t = median_ms([h, "--random", "--bench", runs, hlo])
        gbs = 8 * payload / (t / 1e3) / 1e9
        print("  %s, 8 threaded devices: %8.1f ms  %6.2f GB/s payload (%.0f%% of copy bandwidth)"
              % (what, t, gbs, 100 * gbs / bw))
        if shutil.which("mpirun"):
            t = median_ms(["mpirun", "-np", "2", h, "--random", "--bench", runs, hlo], env=env)
            gbs = 8 * payload / (t / 1e3) / 1e9
            print("  %s, 8 devices on mpirun -np 2: %8.1f ms  %6.2f GB/s payload (%.0f%% of copy bandwidth)"
                  % (what, t, gbs, 100 * gbs / bw))
        else:
            print("  (mpirun not installed: the MPI runs are skipped)")
    t8 = median_ms([h, "--random", "--bench", runs, os.path.join(HERE, "devices", "matmul_8way.hlo")])
    t1 = median_ms([h, "--random", "--bench", runs, os.path.join(HERE, "devices", "matmul_1way.hlo")])
    flops = 2 * 4096 * 2048 * 2048
    print("  matmul f32[4096,2048]x[2048,2048]: 8 partitions %8.1f ms (%.0f GFLOP/s), one device %8.1f ms "
          "(%.0f GFLOP/s), ratio %.2f" % (t8, flops / t8 / 1e6, t1, flops / t1 / 1e6, t8 / t1))


if __name__ == "__main__":
    main()
