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
