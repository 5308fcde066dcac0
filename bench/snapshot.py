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

And an HloUnoptimizedSnapshot of the same argument as two partitions'
halves (the parameter sharded {devices=[2]0,1}), assembled into the global
argument (`HLORUN --expect max.txt SNAP`): target 1.6 x + 64 MiB, the
global value and one shard (1 + 1/2) held.

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


def f32_chunks(n, step=1 << 22, start=0):
    """The f32 elements (k % 1000) / 2, start <= k < start + n, little-endian,
    in pieces."""
    period = b"".join(struct.pack("<f", (k % 1000) / 2) for k in range(1000))
    for s in range(start, start + n, step):
        m = min(step, start + n - s)
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


def unoptimized_snapshot(hlorun, d, mib):
    """An HloUnoptimizedSnapshot (hlo_module = 1, partitions = 2 of HloInputs
    {arguments = 1}): m.hlo with its parameter sharded {devices=[2]0,1},
    each partition's LiteralProto the half it holds (f32s = 8, packed)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
    from pbwire import key, ld, varint
    n = (mib << 20) // 4
    text = open(os.path.join(d, "m.hlo")).read().replace(
        "parameter(0)", "parameter(0), sharding={devices=[2]0,1}")
    with open(os.path.join(d, "ms.hlo"), "w") as f:
        f.write(text)
    subprocess.run([hlorun, "--write-proto", os.path.join(d, "ms.pb"), os.path.join(d, "ms.hlo")], check=True)
    module = open(os.path.join(d, "ms.pb"), "rb").read()
    out = os.path.join(d, "unopt.pb")
    half = n // 2
    shape = key(2, 0) + varint(11) + ld(3, varint(half)) + ld(5, ld(1, varint(0)))
    with open(out, "wb") as f:
        f.write(ld(1, module))
        for p in range(2):
            lit_head = ld(1, shape) + key(8, 2) + varint(half * 4)
            lit_len = len(lit_head) + half * 4
            f.write(key(2, 2) + varint(len(key(1, 2) + varint(lit_len)) + lit_len))
            f.write(key(1, 2) + varint(lit_len) + lit_head)
            for c in f32_chunks(half, start=p * half):   # its half of the elements
                f.write(c)
    return out


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
        unopt = unoptimized_snapshot(a.hlorun, d, a.mib)
        wall, cpu, rss = run([a.hlorun, "--expect", os.path.join(d, "max.txt"), unopt])
        ok = rss <= 1.6 * (a.mib << 20) + (64 << 20)   # the value and one of the 2 shards
        print("unopt:    %-16s wall %6.2f s  cpu %6.2f s  peak RSS %7.1f MiB  (%.2f x the argument)"
              % ("2 partitions", wall, cpu, rss / 2**20, rss / (a.mib << 20)))
        print("%s  unoptimized snapshot peak RSS <= 1.6 x the argument + 64 MiB (global + one shard)"
              % ("PASS" if ok else "MISS"))
    finally:
        if not a.keep:
            for f in os.listdir(d):
                os.unlink(os.path.join(d, f))
            os.rmdir(d)


if __name__ == "__main__":
    main()
