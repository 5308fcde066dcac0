#!/usr/bin/python3
"""A large HloSnapshot for measuring how snapshot arguments are loaded.

Usage: bench/big_snapshot.py HLORUN OUT.pb MIB [--type f32|bf16|s32]

Writes OUT.pb: an HloSnapshot whose module takes the max of one argument of
about MIB MiB (f32: MIB * 2^18 elements, one packed f32s field as XLA's
LiteralProto::f32s is written; bf16: the bf16s bytes field; s32: packed
varints) and whose recorded result is that max, so `hlorun --expect OUT.pb
OUT.pb` replays it and checks it. Element k is (k % 1000) / 2 for f32 (max
499.5), k % 1000 for s32 (max 999), (k % 256) / 2 for bf16 (max 127.5, exact
in bf16). The module comes from `HLORUN --write-proto`; the snapshot around it is written here by hand (hlo = 1 of HloProto {hlo_module
= 1}, arguments = 2, result = 3), the payload streamed in chunks so this
script stays small in memory.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from pbwire import key, ld, varint  # noqa: E402


def shape(etype, dims):
    # ShapeProto: element_type = 2, dimensions = 3 (packed), layout = 5 {minor_to_major = 1}
    s = key(2, 0) + varint(etype) + ld(3, b"".join(varint(d) for d in dims))
    if dims:
        s += ld(5, ld(1, b"".join(varint(d) for d in reversed(range(len(dims))))))
    return s


TYPES = {  # name: (PrimitiveType, LiteralProto field, bytes per element on the wire)
    "f32": (11, 8, 4),
    "bf16": (16, 13, 2),
    "s32": (4, 4, None),   # varints: 1 or 2 bytes here
}


def chunk_values(kind, start, count):
    k = np.arange(start, start + count, dtype=np.int64)
    if kind == "f32":
        return ((k % 1000).astype(np.float32) / 2).tobytes()
    if kind == "bf16":  # (k % 256) / 2 has at most 8 significant bits: exact in bf16
        return (((k % 256).astype(np.float32) / 2).view(np.uint32) >> 16).astype("<u2").tobytes()
    # s32 as varints: values 0..999 take one or two bytes each
    v = k % 1000
    two = v >= 128
    pos = np.concatenate(([0], np.cumsum(1 + two)[:-1]))
    out = np.empty(count + int(two.sum()), dtype=np.uint8)
    out[pos] = np.where(two, (v & 0x7F) | 0x80, v)
    out[pos[two] + 1] = v[two] >> 7
    return out.tobytes()


def main():
    hlorun, out, mib = sys.argv[1], sys.argv[2], int(sys.argv[3])
    kind = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--type" else "f32"
    etype, field, width = TYPES[kind]
    n = mib * (1 << 20) // 4
    hlo_t = kind
    text = (
        "HloModule big\n\n%max {\n  %a = %T[] parameter(0)\n  %b = %T[] parameter(1)\n"
        "  ROOT %m = %T[] maximum(%a, %b)\n}\n\nENTRY %e {\n  %p = %T[%N] parameter(0)\n"
        "  %z = %T[] constant(0)\n  ROOT %r = %T[] reduce(%p, %z), dimensions={0}, to_apply=%max\n}\n"
    ).replace("%T", hlo_t).replace("%N", str(n))
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "m.hlo"), "w") as f:
            f.write(text)
        subprocess.run([hlorun, "--write-proto", os.path.join(d, "m.pb"), os.path.join(d, "m.hlo")], check=True)
        module = open(os.path.join(d, "m.pb"), "rb").read()
    # The payload's length first (the varint form of s32 varies per element).
    step = 1 << 22
    if width is None:
        size = sum(1 if (k % 1000) < 128 else 2 for k in range(1000)) * (n // 1000) + \
            sum(1 if k < 128 else 2 for k in range(n % 1000))
    else:
        size = n * width
    with open(out, "wb") as f:
        f.write(ld(1, ld(1, module)))
        lit_head = ld(1, shape(etype, [n])) + key(field, 2) + varint(size)
        f.write(key(2, 2) + varint(len(lit_head) + size) + lit_head)
        for s in range(0, n, step):
            f.write(chunk_values(kind, s, min(step, n - s)))
        # result: the max (f32s is packed fixed32 = field 8; bf16s bytes = 13; s32s varint = 4)
        if kind == "f32":
            res = ld(1, shape(11, [])) + ld(8, b"\x00\xc0\xf9\x43")
        elif kind == "bf16":
            res = ld(1, shape(16, [])) + ld(13, b"\xff\x42")
        else:
            res = ld(1, shape(4, [])) + ld(4, varint(999))
        f.write(ld(3, res))


if __name__ == "__main__":
    main()
