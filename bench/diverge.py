#!/usr/bin/python3
"""make bench: what finding a divergence costs. For each workload of
../shared/bench (default b_softmax, d_mlp, e_conv_block and i_attention), the wall time of

  plain      HLORUN --random MODULE -o OUT.npy
  reference  HLORUN --random --reference MODULE MODULE -o OUT.npy
  f64        HLORUN --random --reference-precision f64 MODULE -o OUT.npy

each the median of N runs (default 3), and each debugging run's ratio to
the plain one. The module is its own reference: every instruction has a
counterpart (by name) and is compared, the most work --reference does for
a module of that size. The f64 run's own first-divergence line is printed
as it comes (f32 against f64 may differ beyond f32's default tolerance;
that is a finding, not a failure of the benchmark).

Usage: bench/diverge.py HLORUN [--runs N] [--dir BENCH_DIR] [--workloads a,b]
                         [--reference-memory SIZE]

--reference-memory SIZE is passed to both debugging runs (the reference
values held at once; more than that reruns both modules part by part).

Target (one PASS/MISS line, from issue 33): --reference within twice the
plain run's time on every workload measured. Times are wall times of the
whole command (parse, inputs, run, output), so a loaded machine moves both
sides; the ratio is what is held to the target.
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
FIRST = re.compile(r"^first divergence: .*$", re.M)
COMPARED = re.compile(r"^compared .*$", re.M)


def timed(cmd, want_rc):
    """(seconds, stderr) of one run of cmd; exits when cmd's status is not
    one of want_rc."""
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t
    if p.returncode not in want_rc:
        sys.exit("bench/diverge.py: %s exited %d:\n%s" % (" ".join(cmd), p.returncode, p.stderr))
    return dt, p.stderr


def median_of(cmd, runs, want_rc):
    """(median seconds, the last run's stderr) of runs runs of cmd."""
    ts, err = [], ""
    for _ in range(runs):
        dt, err = timed(cmd, want_rc)
        ts.append(dt)
    return statistics.median(ts), err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hlorun")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", default=os.path.join(HERE, "..", "..", "shared", "bench"))
    ap.add_argument("--workloads", default="b_softmax,d_mlp,e_conv_block,i_attention")
    ap.add_argument("--reference-memory", default=None)
    a = ap.parse_args()
    misses, measured = [], 0
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.npy")
        print("%-14s %10s %12s %7s %10s %7s" % ("workload", "plain s", "reference s", "ratio",
                                                  "f64 s", "ratio"))
        for name in a.workloads.split(","):
            mod = os.path.join(a.dir, name + ".hlo")
            if not os.path.exists(mod):
                print("%-14s not found in %s" % (name, a.dir))
                continue
            base = [a.hlorun, "--random"]
            plain, _ = median_of(base + [mod, "-o", out], a.runs, (0,))
            if a.reference_memory:
                base += ["--reference-memory", a.reference_memory]
            # The module against itself agrees: anything but exit 0 is a bug.
            ref, ref_err = median_of(base + ["--reference", mod, mod, "-o", out], a.runs, (0,))
            # f32 against f64 may leave f32's tolerance: exit 1 is a finding.
            f64, f64_err = median_of(base + ["--reference-precision", "f64", mod, "-o", out],
                                     a.runs, (0, 1))
            measured += 1
            print("%-14s %10.3f %12.3f %7.2f %10.3f %7.2f" % (name, plain, ref, ref / plain, f64,
                                                             f64 / plain))
            for label, err in (("reference", ref_err), ("f64", f64_err)):
                m, c = FIRST.search(err), COMPARED.search(err)
                print("  %-9s %s" % (label, m.group(0) if m else "(no first-divergence line)"))
                if c:   # "in K runs of each module": the value budget split the search
                    print("  %-9s %s" % ("", c.group(0)))
            if ref > 2 * plain:
                misses.append("%s %.2fx" % (name, ref / plain))
    if not measured:
        print("target reference  -     no workload measured")
        return 0
    print("target reference  %s  --reference within 2x the plain run's wall time (median of %d)%s"
          % ("MISS" if misses else "PASS", a.runs,
             " (missed: %s)" % ", ".join(misses) if misses else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
