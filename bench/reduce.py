#!/usr/bin/python3
"""make bench: reducing the planted-NaN module (tests/repro/gen_nan_module.py:
207 instructions, a log of a negative value at iteration 3 of a while body)
with `HLORUN --reduce nan -o DIR`.

Usage: bench/reduce.py HLORUN [--runs N]

Prints the instructions before and after, the candidates tried
(each one a child hlorun run) and the median wall time of N reductions
(default 3), from the command's own summary line. Target (one PASS/MISS
line): at most 12 instructions left, in under 5 seconds.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "..", "tests", "repro", "gen_nan_module.py")
SUMMARY = re.compile(r"reduce: .*: (\d+) -> (\d+) instructions, (\d+) candidates tried")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hlorun")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, GEN, os.path.join(d, "nan.hlo"), d], check=True)
        times, m = [], None
        for k in range(a.runs):
            out = os.path.join(d, "out%d" % k)
            t = time.perf_counter()
            p = subprocess.run([a.hlorun, "--reduce", "nan", "-o", out, os.path.join(d, "nan.hlo"),
                                os.path.join(d, "x.npy")], capture_output=True, text=True)
            times.append(time.perf_counter() - t)
            m = SUMMARY.search(p.stderr)
            if p.returncode != 0 or not m:
                sys.exit("reduce failed (exit %d): %s" % (p.returncode, p.stderr))
        before, after, tried = (int(g) for g in m.groups())
        med = statistics.median(times)
        print("reduce planted_nan: %d -> %d instructions, %d candidates tried, median %.3f s "
              "over %d runs" % (before, after, tried, med, a.runs))
        ok = after <= 12 and med < 5
        print("%s: reduce planted_nan: <= 12 instructions in < 5 s" % ("PASS" if ok else "MISS"))


if __name__ == "__main__":
    main()
