#!/usr/bin/python3
"""make bench: how a large HloSnapshot's argument is loaded.

Usage: bench/snapshot.py HLORUN [--mib N] [--type f32|bf16|s32] [--keep]

Writes an HloSnapshot with one argument of about N MiB (default 512) in
$TMPDIR with bench/big_snapshot.py, then replays it twice (`HLORUN SNAP` and
`HLORUN --expect SNAP SNAP`), and prints each run's wall time, CPU time
(user + system: steadier than the wall on a shared host) and peak resident
set (the child's ru_maxrss, as /usr/bin/time -v reports it), and the peak as
a multiple of the argument. The file is deleted afterwards
(unless --keep).

Then the same argument (f32 elements (k % 1000) / 2, their max 499.5) as a
.npy, a .npz with the member stored and one with it deflated, each checked
with --expect against the max (`HLORUN --expect max.txt m.hlo ARG`).

Target (one PASS/MISS line each): peak RSS at most 1.1 x the argument +
64 MiB, that is the argument held once (issue 20: a large snapshot, or a
large .npy/.npz input, is streamed into buffers, not copied twice).
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile
import time
import zipfile


def run(cmd):
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        sys.exit("%s: exit %d: %s" % (" ".join(cmd), rc, err))
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024


def f32_chunks(n, step=1 << 22):
    """The f32 elements (k % 1000) / 2, k < n, little-endian, in pieces."""
    period = b"".join(struct.pack("<f", (k % 1000) / 2) for k in range(1000))
    for s in range(0, n, step):
        m = min(step, n - s)
        first = (s % 1000) * 4
        reps = (first + m * 4) // len(period) + 2
        yield (period * reps)[first:first + m * 4]


def npy_header(n):
    h = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n
    h += " " * (63 - (10 + len(h)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode()


def npy_cases(hlorun, d, mib):
    """Write m.hlo (the max of an f32[n] parameter), max.txt, and the argument
    as big.npy, stored.npz and deflated.npz (members streamed, zip64)."""
    n = (mib << 20) // 4
    with open(os.path.join(d, "m.hlo"), "w") as f:
        f.write("HloModule big\n\nmax {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                "  ROOT m = f32[] maximum(a, b)\n}\n\nENTRY e {\n  p = f32[%d] parameter(0)\n"
                "  z = f32[] constant(0)\n  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=max\n}\n" % n)
    with open(os.path.join(d, "max.txt"), "w") as f:
        f.write("f32[] 499.5\n")
    files = []
    with open(os.path.join(d, "big.npy"), "wb") as f:
        f.write(npy_header(n))
        for c in f32_chunks(n):
            f.write(c)
    files.append(("big.npy", ".npy"))
    for name, method in (("stored.npz", zipfile.ZIP_STORED), ("deflated.npz", zipfile.ZIP_DEFLATED)):
        with zipfile.ZipFile(os.path.join(d, name), "w", method, compresslevel=1 if method else None) as z:
            with z.open("arr_0.npy", "w", force_zip64=True) as f:
                f.write(npy_header(n))
                for c in f32_chunks(n):
                    f.write(c)
        files.append((name, ".npz " + name.split(".")[0]))
    cmds = []
    for fname, label in files:
        cmds.append((label, [hlorun, "--expect", os.path.join(d, "max.txt"), os.path.join(d, "m.hlo"),
                             os.path.join(d, fname)]))
    return cmds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hlorun")
    ap.add_argument("--mib", type=int, default=512)
    ap.add_argument("--type", default="f32", choices=["f32", "bf16", "s32"])
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    d = tempfile.mkdtemp(prefix="hlorun-snapshot-")
    snap = os.path.join(d, "big.pb")
    try:
        subprocess.run([sys.executable, os.path.join(here, "big_snapshot.py"), a.hlorun, snap, str(a.mib),
                        "--type", a.type], check=True)
        arg = a.mib << 20 if a.type != "bf16" else a.mib << 19
        size = os.path.getsize(snap)
        print("snapshot: %s argument of %.0f MiB (file %.0f MiB)" % (a.type, arg / 2**20, size / 2**20))
        ok = True
        for name, cmd in (("replay", [a.hlorun, snap]), ("replay --expect", [a.hlorun, "--expect", snap, snap])):
            wall, cpu, rss = run(cmd)
            ok &= rss <= 1.1 * arg + (64 << 20)
            print("snapshot: %-16s wall %6.2f s  cpu %6.2f s  peak RSS %7.1f MiB  (%.2f x the argument)"
                  % (name, wall, cpu, rss / 2**20, rss / arg))
        print("%s  snapshot    peak RSS <= 1.1 x the argument + 64 MiB" % ("PASS" if ok else "MISS"))
        ok = True
        for name, cmd in npy_cases(a.hlorun, d, a.mib):
            wall, cpu, rss = run(cmd)
            ok &= rss <= 1.1 * (a.mib << 20) + (64 << 20)
            print("npy:      %-16s wall %6.2f s  cpu %6.2f s  peak RSS %7.1f MiB  (%.2f x the argument)"
                  % (name, wall, cpu, rss / 2**20, rss / (a.mib << 20)))
        print("%s  npy/npz     peak RSS <= 1.1 x the argument + 64 MiB" % ("PASS" if ok else "MISS"))
    finally:
        if not a.keep:
            for f in os.listdir(d):
                os.unlink(os.path.join(d, f))
            os.rmdir(d)


if __name__ == "__main__":
    main()
