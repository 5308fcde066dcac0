#!/usr/bin/env python3
"""Files for tests/proto/stream.sh: snapshots whose arguments hlorun decodes
from the file's bytes straight into its buffers (proto/read.c decode_literal,
proto/literal.c hpb_elems_decode), and broken ones.

Usage: stream_cases.py SRC TMP MODULE_PB_OF(name) ...
  stream_cases.py all SRC TMP       writes TMP/all.hlo, TMP/all.args (the .txt
                                     INPUTs in order) from SRC's lit_*.hlo
  stream_cases.py snap TMP MOD.pb OUT.pb ARG.pb...
                                     an HloSnapshot of module MOD.pb (a binary
                                     HloModuleProto) with those LiteralProtos
  stream_cases.py big TMP           large arrays (each > one 4 MiB decode run,
                                     so runs and dropped pages are crossed) as
                                     LiteralProto and as .npy of the same bits
  stream_cases.py bad TMP           broken LiteralProtos, one per line of
                                     TMP/bad.list: NAME<TAB>SHAPE<TAB>MESSAGE<TAB>
                                     MESSAGE AS AN INPUT
No numpy: values are written with struct, bit patterns chosen here.
"""
import os
import re
import struct
import sys


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from pbwire import key, ld, varint  # noqa: E402


def shape(etype, dims, m2m=None):
    s = key(2, 0) + varint(etype) + ld(3, b"".join(varint(d) for d in dims))
    if m2m is not None:
        s += ld(5, ld(1, b"".join(varint(d) for d in m2m)))
    return s


def literal(etype, dims, field, payload, m2m=None):
    return ld(1, shape(etype, dims, m2m)) + ld(field, payload)


def npy(descr, dims, data):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d," % d for d in dims) if len(dims) == 1 else ", ".join(str(d) for d in dims))
    hdr += " " * (63 - (len(hdr) + 10) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + data


def cmd_all(src, tmp):
    names = open(os.path.join(src, "literal-cases.txt")).read().split()
    shapes = []
    for n in names:
        m = re.search(r"ROOT %p = (.*) parameter\(0\)", open(os.path.join(src, "lit_%s.hlo" % n)).read())
        shapes.append(m.group(1))
    body = "".join("  %%p%d = %s parameter(%d)\n" % (i, s, i) for i, s in enumerate(shapes))
    root = "  ROOT %%t = (%s) tuple(%s)\n" % (", ".join(shapes), ", ".join("%%p%d" % i for i in range(len(shapes))))
    open(os.path.join(tmp, "all.hlo"), "w").write("HloModule all\n\nENTRY %main {\n" + body + root + "}\n")
    open(os.path.join(tmp, "all.args"), "w").write("\n".join(names) + "\n")


def cmd_snap(mod, out, args):
    body = ld(1, ld(1, open(mod, "rb").read()))
    for a in args:
        body += ld(2, open(a, "rb").read())
    open(out, "wb").write(body)


def cmd_big(tmp):
    # f32[1200000]: 4.8 MB, element k has bits 0x3f800000 + k * 7 (no NaNs)
    n = 1200000
    data = struct.pack("<%dI" % n, *[0x3F800000 + k * 7 for k in range(n)])
    open(os.path.join(tmp, "big_f32.pb"), "wb").write(literal(11, [n], 8, data))
    open(os.path.join(tmp, "big_f32.npy"), "wb").write(npy("<f4", [n], data))
    # s32[1100000] as packed varints (1.1M elements: more than one 4 MiB run of
    # s32), values k*2654435761 mod 2^32 as int32: negatives are 10-byte varints
    n = 1100000
    vals = [((k * 2654435761) & 0xFFFFFFFF) for k in range(n)]
    sv = [v - (1 << 32) if v >= 1 << 31 else v for v in vals]
    open(os.path.join(tmp, "big_s32.pb"), "wb").write(literal(4, [n], 4, b"".join(varint(v) for v in sv)))
    open(os.path.join(tmp, "big_s32.npy"), "wb").write(npy("<i4", [n], struct.pack("<%di" % n, *sv)))
    # the two as the elements of one tuple literal
    tshape = key(2, 0) + varint(13) + ld(4, shape(11, [1200000])) + ld(4, shape(4, [1100000]))
    open(os.path.join(tmp, "big_tuple.pb"), "wb").write(
        ld(1, tshape) + ld(10, open(os.path.join(tmp, "big_f32.pb"), "rb").read()) +
        ld(10, open(os.path.join(tmp, "big_s32.pb"), "rb").read()))
    # bf16[700,900] in column-major order {0,1}: the physical order differs
    # from row-major, so elements go through the bounce buffer, many batches
    r, c = 700, 900
    bits = lambda i, j: (0x3F80 + (i * 31 + j * 17) % 0x3F00) & 0xFFFF
    phys = struct.pack("<%dH" % (r * c), *[bits(i, j) for j in range(c) for i in range(r)])
    rowm = struct.pack("<%dH" % (r * c), *[bits(i, j) for i in range(r) for j in range(c)])
    open(os.path.join(tmp, "big_bf16_cm.pb"), "wb").write(literal(16, [r, c], 13, phys, m2m=[0, 1]))
    # numpy has no bf16: the same bits as u16, compared by hlorun's bitcast-convert
    open(os.path.join(tmp, "big_bf16_cm.npy"), "wb").write(npy("<u2", [r, c], rowm))


def cmd_bad(tmp):
    cases = []

    def add(name, shp, msg, lit, input_msg=None):
        # as an INPUT the message follows "xla.LiteralProto: " unless given
        open(os.path.join(tmp, name + ".pb"), "wb").write(lit)
        cases.append("%s\t%s\t%s\t%s" % (name, shp, msg, input_msg or "xla.LiteralProto: " + msg))

    four = struct.pack("<4f", 1, 2, 3, 4)
    add("f32_more", "f32[3]", "xla.LiteralProto.f32s: 4 elements, the shape f32[...] of rank 1 holds 3",
        literal(11, [3], 8, four))
    add("f32_fewer", "f32[5]", "xla.LiteralProto.f32s: 4 elements, the shape f32[...] of rank 1 holds 5",
        literal(11, [5], 8, four))
    add("f32_ragged", "f32[1]", "xla.LiteralProto.f32s: its size is not a whole number of f32 elements",
        literal(11, [1], 8, four[:6]))
    # a shape of 2^40 elements over 16 bytes: refused before anything is allocated
    add("f32_huge", "f32[1099511627776]",
        "xla.LiteralProto.f32s: 4 elements, the shape f32[...] of rank 1 holds 1099511627776",
        literal(11, [1 << 40], 8, four))
    add("s32_huge", "s32[1099511627776]",
        "xla.LiteralProto.s32s: 3 elements, the shape s32[...] of rank 1 holds 1099511627776",
        literal(4, [1 << 40], 4, varint(1) + varint(-2) + varint(3)))
    add("s32_fewer", "s32[4]", "xla.LiteralProto.s32s: 3 elements, the shape s32[...] of rank 1 holds 4",
        literal(4, [4], 4, varint(1) + varint(-2) + varint(3)))
    add("s32_more", "s32[2]", "xla.LiteralProto.s32s: 3 elements, the shape s32[...] of rank 1 holds 2",
        literal(4, [2], 4, varint(1) + varint(-2) + varint(3)))
    add("s64_malformed", "s64[2]", "xla.LiteralProto.s64s: malformed packed values",
        literal(5, [2], 5, varint(7) + b"\xff" * 11))
    add("s64_cut", "s64[2]", "xla.LiteralProto.s64s: 1 elements, the shape s64[...] of rank 1 holds 2",
        literal(5, [2], 5, varint(7)))
    add("s64_cut_varint", "s64[2]", "xla.LiteralProto.s64s: malformed packed values",
        literal(5, [2], 5, varint(7) + b"\xff\xff"))
    add("pred_more", "pred[1]", "xla.LiteralProto.preds: 2 elements, the shape pred[...] of rank 1 holds 1",
        literal(1, [1], 2, b"\x01\x00"))
    add("bf16_odd", "bf16[2]", "xla.LiteralProto.bf16s: its size is not a whole number of bf16 elements",
        literal(16, [2], 13, b"\x80\x3f\x00"))
    add("c64_half", "c64[2]", "xla.LiteralProto.c64s: its size is not a whole number of c64 elements",
        literal(15, [2], 12, struct.pack("<3f", 1, 2, 3)))
    add("u4_fewer", "u4[3]", "xla.LiteralProto.u4s: 2 elements, the shape u4[...] of rank 2 holds 3",
        literal(22, [1, 3], 22, b"\x01\x02"))
    # the element field's length points past the end of the literal
    lit = ld(1, shape(11, [2])) + key(8, 2) + varint(100) + four[:8]
    add("f32_past_end", "f32[2]", "xla.LiteralProto.f32s: truncated or malformed field", lit,
        "neither a literal nor a well-formed protocol buffer: field 8 (wire type length-delimited) at byte")
    # the element field with the wrong wire type
    add("f16_varint", "f16[1]", "xla.LiteralProto.f16s: wire type varint, expected length-delimited",
        ld(1, shape(10, [1])) + key(11, 0) + varint(5))
    # tuples: elements decoded in place too, errors name the element
    tshape = key(2, 0) + varint(13) + ld(4, shape(11, [2])) + ld(4, shape(4, [2]))
    el0 = literal(11, [2], 8, four[:8])
    add("tuple_count", "(f32[2], s32[2])",
        "xla.LiteralProto.tuple_literals: 1 elements for a tuple of 2", ld(1, tshape) + ld(10, el0))
    add("tuple_s32_more", "(f32[2], s32[2])",
        "xla.LiteralProto.tuple_literals[1]: xla.LiteralProto.s32s: 3 elements, the shape s32[...] of rank 1 holds 2",
        ld(1, tshape) + ld(10, el0) + ld(10, literal(4, [2], 4, varint(1) + varint(-2) + varint(3))))
    open(os.path.join(tmp, "bad.list"), "w").write("\n".join(cases) + "\n")


def main():
    cmd = sys.argv[1]
    if cmd == "all":
        cmd_all(sys.argv[2], sys.argv[3])
    elif cmd == "snap":
        cmd_snap(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif cmd == "big":
        cmd_big(sys.argv[2])
    elif cmd == "bad":
        cmd_bad(sys.argv[2])


if __name__ == "__main__":
    main()
