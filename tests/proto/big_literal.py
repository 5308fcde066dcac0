#!/usr/bin/env python3
"""Writes LiteralProto files large enough (>= 4096 bytes of elements) for the
reader's no-copy path (proto/read.c unpack_literal): OUT/f32.pb holds
f32[1100] with element k = k/2 in one packed f32s field; OUT/f32split.pb the
same values split over two f32s fields (protobuf concatenates them: the
reader must fall back to a full unpack); OUT/bf16.pb bf16[3000] with element
k = 1.0 for even k, 2.0 for odd k (bytes field). Sums, worked out here:
f32 0.5*(0+...+1099) = 302225, bf16 1500*1 + 1500*2 = 4500."""
import struct
import sys


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def ld(f, payload):
    return varint(f << 3 | 2) + varint(len(payload)) + payload


def shape(etype, dims):
    s = varint(2 << 3) + varint(etype) + ld(3, b"".join(varint(d) for d in dims))
    return ld(1, s)


out = sys.argv[1]
f32 = [k / 2 for k in range(1100)]
packed = struct.pack("<1100f", *f32)
open(out + "/f32.pb", "wb").write(shape(11, [1100]) + ld(8, packed))
open(out + "/f32split.pb", "wb").write(shape(11, [1100]) + ld(8, packed[:2400]) + ld(8, packed[2400:]))
bf16 = b"".join(struct.pack("<H", 0x3F80 if k % 2 == 0 else 0x4000) for k in range(3000))
open(out + "/bf16.pb", "wb").write(shape(16, [3000]) + ld(13, bf16))
