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

Target (one PASS/MISS line): peak RSS at most 1.1 x the argument + 64 MiB,
that is the argument held once (issue 20: a large snapshot is streamed into
buffers, not copied twice).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


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
    finally:
        if not a.keep:
            for f in os.listdir(d):
                os.unlink(os.path.join(d, f))
            os.rmdir(d)


if __name__ == "__main__":
    main()
