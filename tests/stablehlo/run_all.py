#!/usr/bin/env python3
"""Run StableHLO's own test files through hlorun and print the pass figure.

    tests/stablehlo/run_all.py ./hlorun STABLEHLO_CHECKOUT [--jobs N]
        [--list tests/stablehlo/cannot-pass.txt] [--sample DIR --sample-count N]

STABLEHLO_CHECKOUT is a checkout of github.com/openxla/stablehlo; its
stablehlo/tests/interpret/*.mlir and stablehlo/testdata/**/*.mlir are run.
A file passes when hlorun exits 0 and reports "checks: N passed, 0 failed"
with N > 0. --list writes every file that does not pass with the construct
it needs (the first error hlorun gives); --sample copies a fixed, small
selection of passing files (for make check) into DIR.
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


def reason_of(err):
    """The construct a failing file needs, from hlorun's first error."""
    for line in err.splitlines():
        m = re.search(r"error: (.*)", line)
        if m:
            msg = m.group(1)
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
    ap.add_argument("--sample")
    ap.add_argument("--sample-count", type=int, default=200)
    ap.add_argument("--sample-max-bytes", type=int, default=4000)
    a = ap.parse_args()
    files = files_of(a.checkout)
    if not files:
        print("no test files under %s" % a.checkout, file=sys.stderr)
        return 2
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        results = list(ex.map(lambda kf: run(a.hlorun, kf[1], a.timeout), files))
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
    if a.sample:
        os.makedirs(a.sample, exist_ok=True)
        passing = [(k, f) for (k, f), (ok, _) in zip(files, results) if ok
                   and os.path.getsize(f) <= a.sample_max_bytes]
        interp = [f for k, f in passing if k == "interpret"]
        data = [f for k, f in passing if k == "testdata"]
        step = max(1, len(data) // max(1, a.sample_count - len(interp)))
        chosen = interp + data[::step][: max(0, a.sample_count - len(interp))]
        for f in chosen:
            rel = os.path.relpath(f, os.path.join(a.checkout, "stablehlo"))
            dst = os.path.join(a.sample, rel.replace(os.sep, "__"))
            shutil.copyfile(f, dst)
        print("sample: %d files in %s" % (len(chosen), a.sample))
    return 0


if __name__ == "__main__":
    sys.exit(main())
