#!/usr/bin/env python3
"""Run StableHLO's own test files through hlorun and print the pass figure.

    tests/stablehlo/run_all.py ./hlorun STABLEHLO_CHECKOUT [--jobs N]
        [--list tests/stablehlo/cannot-pass.txt] [--check tests/stablehlo/cannot-pass.txt]
        [--sample DIR --sample-count N]

STABLEHLO_CHECKOUT is a checkout of github.com/openxla/stablehlo; its
stablehlo/tests/interpret/*.mlir and stablehlo/testdata/**/*.mlir are run.
A file passes when hlorun exits 0 and reports "checks: N passed, 0 failed"
with N > 0. --list writes every file that does not pass with the construct
it needs (the first error hlorun gives); --check compares the run with such
a list (exit 1 when a listed file passes or an unlisted one fails: the list
must change with the code); --sample copies a fixed, small selection of
passing files and a few failing ones of each kind (for make check:
tests/check_stablehlo_sample) into DIR.

A file in EXPLAINED that fails exactly its listed number of checks is
listed with the reason its checks cannot pass (proved for the precision
cases by tests/stablehlo/precision.py) instead of "wrong result".
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys


def files_of(root):
    interp = os.path.join(root, "stablehlo", "tests", "interpret")
    data = os.path.join(root, "stablehlo", "testdata")
    out = []
    for d, kind in ((interp, "interpret"), (data, "testdata")):
        for base, _, names in sorted(os.walk(d)):
            for n in sorted(names):
                if n.endswith(".mlir"):
                    out.append((kind, os.path.join(base, n)))
    return out


ROUNDING = ("the check wants one implementation's rounding: the correctly rounded exact result fails it at %d"
            " elements (tests/stablehlo/precision.py; rms error hlorun %s, recorded %s)")
NAN_EQ = "expect_eq of NaN elements (StableHLO's reference compares with APFloat ==: a NaN never equals)"
EXPLAINED = {   # path: (checks failed, why they cannot pass)
    "stablehlo/tests/interpret/all_gather.mlir": (4, "expects the spec's cross_replica_and_partition order"
        " (partition by partition); XLA's GetParticipatingDevices, and hlorun, go replica by replica"),
    "stablehlo/testdata/sort_float32_5.mlir": (1, NAN_EQ + ", and an order of two NaNs the comparator calls"
        " equal (is_stable = false)"),
    "stablehlo/testdata/top_k_float32_5_chlo.mlir": (1, NAN_EQ + "; hlorun's values have the expected bits"),
    "stablehlo/testdata/cumprod_complex64_8_9.mlir": (1, ROUNDING % (3, "0.00102", "0.00226")),
    "stablehlo/testdata/pow_complex64_20_30_complex64_20_30.mlir": (1, ROUNDING % (69, "1.52e+06", "3.77e+05")),
    "stablehlo/testdata/triangular_solve_float32_2_8_8_float32_2_10_8.mlir": (1, ROUNDING % (25, "0.000242",
        "0.00125")),
    "stablehlo/testdata/fft_float32_14_15_16_17.mlir": (1, ROUNDING % (5519, "3.16e-07", "8.16e-07")),
    "stablehlo/testdata/fft_float64_14_15_16_17.mlir": (1, ROUNDING % (9955, "4.18e-15", "2.23e-15")),
    "stablehlo/testdata/fft_complex64_14_15_16_17.mlir": (1, ROUNDING % (25698, "1.2e-09", "5.97e-09")),
    "stablehlo/testdata/fft_complex128_14_15_16_17.mlir": (1, ROUNDING % (20030, "1.84e-16", "1.35e-16")),
}


def explained(rel, why):
    """why, or the listed reason of a file in EXPLAINED failing as listed."""
    m = re.match(r"wrong result \((\d+) checks failed\)$", why)
    if m and rel in EXPLAINED and EXPLAINED[rel][0] == int(m.group(1)):
        return "check cannot pass (%s checks failed): %s" % (m.group(1), EXPLAINED[rel][1])
    return why


def reason_of(err):
    """The construct a failing file needs, from hlorun's first error."""
    if "inputs were given" in err:
        return "not a test file: a module with parameters (its inputs are on the RUN line)"
    for line in err.splitlines():
        m = re.search(r"error: (.*)", line)
        if m:
            msg = re.sub(r"^in \S+ \([^)]*\): ", "", m.group(1))   # "in add.3 (add): "
            msg = re.sub(r"'[a-z_-]*\.\d+'", "", msg)   # instruction names
            msg = re.sub(r"\b[a-z_-]+\.\d+\b", "", msg)
            return msg.strip()[:160]
    m = re.search(r"checks: (\d+) passed, (\d+) failed", err)
    if m:
        return "wrong result (%s checks failed)" % m.group(2)
    return "no checks ran"


def run(hlorun, path, timeout):
    try:
        p = subprocess.run([hlorun, path], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, "timed out after %ds" % timeout
    m = re.search(r"checks: (\d+) passed, (\d+) failed", p.stderr)
    ok = p.returncode == 0 and m is not None and int(m.group(1)) > 0 and m.group(2) == "0"
    return ok, "" if ok else reason_of(p.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hlorun")
    ap.add_argument("checkout")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--list")
    ap.add_argument("--check")
    ap.add_argument("--sample")
    ap.add_argument("--sample-count", type=int, default=200)
    ap.add_argument("--sample-max-bytes", type=int, default=2500)
    ap.add_argument("--sample-failing", type=int, default=40)
    a = ap.parse_args()
    files = files_of(a.checkout)
    if not files:
        print("no test files under %s" % a.checkout, file=sys.stderr)
        return 2
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        results = list(ex.map(lambda kf: run(a.hlorun, kf[1], a.timeout), files))
    results = [(ok, explained(os.path.relpath(f, a.checkout), why)) for (_, f), (ok, why) in zip(files, results)]
    total = {}
    for (kind, _), (ok, _) in zip(files, results):
        t = total.setdefault(kind, [0, 0])
        t[0] += ok
        t[1] += 1
    for kind, (p, n) in sorted(total.items()):
        print("%s: %d of %d files pass (%.1f%%)" % (kind, p, n, 100.0 * p / n))
    p = sum(v[0] for v in total.values())
    n = sum(v[1] for v in total.values())
    print("all: %d of %d files pass (%.1f%%)" % (p, n, 100.0 * p / n))
    if a.list:
        with open(a.list, "w") as f:
            f.write("# StableHLO test files hlorun cannot pass, and the construct each needs\n")
            f.write("# (written by tests/stablehlo/run_all.py --list; paths relative to a\n")
            f.write("# github.com/openxla/stablehlo checkout).\n")
            for (kind, path), (ok, why) in zip(files, results):
                if not ok:
                    f.write("%s\t%s\n" % (os.path.relpath(path, a.checkout), why))
    status = 0
    if a.check:
        listed = {}
        with open(a.check) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    path, _, why = line.rstrip("\n").partition("\t")
                    listed[path] = why
        for (kind, path), (ok, why) in zip(files, results):
            rel = os.path.relpath(path, a.checkout)
            if ok and rel in listed:
                print("now passes (remove it from the list): %s" % rel)
                status = 1
            elif not ok and rel not in listed:
                print("fails, not listed: %s\t%s" % (rel, why))
                status = 1
    if a.sample:
        os.makedirs(a.sample, exist_ok=True)
        small = [(k, f, ok, why) for (k, f), (ok, why) in zip(files, results)
                 if os.path.getsize(f) <= (3 * a.sample_max_bytes if k == "interpret" else a.sample_max_bytes)]
        interp = [f for k, f, ok, _ in small if k == "interpret" and ok]
        data = [f for k, f, ok, _ in small if k == "testdata" and ok]
        npass = max(0, a.sample_count - a.sample_failing)
        step = max(1, len(data) // max(1, npass - len(interp)))
        chosen = interp + data[::step][: max(0, npass - len(interp))]
        # failing files: the first of each reason, then more of the common ones
        seen = {}
        for k, f, ok, why in small:
            if not ok:
                seen.setdefault(re.sub(r"\d+", "N", why), []).append(f)
        failing = []
        while len(failing) < a.sample_failing and any(seen.values()):
            for key in sorted(seen):
                if seen[key] and len(failing) < a.sample_failing:
                    failing.append(seen[key].pop(0))
        for f in chosen + failing:
            rel = os.path.relpath(f, os.path.join(a.checkout, "stablehlo"))
            dst = os.path.join(a.sample, rel.replace(os.sep, "__"))
            shutil.copyfile(f, dst)
        print("sample: %d passing and %d failing files in %s" % (len(chosen), len(failing), a.sample))
    return status


if __name__ == "__main__":
    sys.exit(main())
