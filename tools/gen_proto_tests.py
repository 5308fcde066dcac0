#!/usr/bin/env python3
"""Write XLA protocol-buffer test files for tests/proto/ (binary wire format).

The encoder below is written from the protobuf wire-format spec (varints,
length-delimited fields, packed repeated scalars) and XLA's field numbers
(xla/service/hlo.proto, xla/xla_data.proto). Modules follow XLA's ToProto
conventions (xla/hlo/ir/hlo_instruction.cc HloInstruction::ToProto,
hlo_computation.cc HloComputation::ToProto, hlo_module.cc HloModule::ToProto):
  - instruction id = (computation id << 32) | local id (HloInstruction::unique_id
    in current XLA); operand_ids / root_id / called_computation_ids carry ids;
  - computations callees first, ENTRY last (MakeComputationPostOrder);
  - while: called_computation_ids = [body, condition];
  - iota: dimensions = [iota_dimension];
  - compare: comparison_direction and comparison_type always written;
  - shapes: arrays carry a layout (minor_to_major, descending by default);
  - literals (LiteralBase::Piece::WriteToProto): f32s repeated, s32s repeated,
    bf16/f16/s16 little-endian bytes, s4 one element per byte, elements in the
    literal's physical (layout) order.
Each module is also written as the HLO text XLA would print for it, and each
snapshot records a result computed here with numpy, so the tests compare
hlorun on the proto with hlorun on the text, and with numpy.

Usage: gen_proto_tests.py OUTDIR
"""
import os
import struct
import sys

import numpy as np

# ---- wire format ----------------------------------------------------------------

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pbwire import key, ld as f_bytes, varint  # noqa: E402

def f_varint(field, v):
    return key(field, 0) + varint(int(v))

def f_packed(field, vals):
    return f_bytes(field, b"".join(varint(int(v)) for v in vals)) if len(vals) else b""

def f_packed_f32(field, vals):
    return f_bytes(field, struct.pack("<%df" % len(vals), *vals)) if len(vals) else b""

def msg(*parts):
    return b"".join(parts)

# ---- xla messages -------------------------------------------------------------------

PT = {"pred": 1, "s8": 2, "s16": 3, "s32": 4, "s64": 5, "u8": 6, "u16": 7, "u32": 8,
      "u64": 9, "f16": 10, "f32": 11, "f64": 12, "tuple": 13, "c64": 15, "bf16": 16,
      "token": 17, "s4": 21, "u4": 22}

def shape(t, dims=(), layout=None, tuple_shapes=None):
    """ShapeProto: element_type=2, dimensions=3, tuple_shapes=4, layout=5, is_dynamic=6."""
    if t == "tuple":
        return msg(f_varint(2, PT[t]), *[f_bytes(4, s) for s in tuple_shapes])
    m2m = list(layout) if layout is not None else list(range(len(dims) - 1, -1, -1))
    lay = msg(f_packed(1, m2m), f_varint(16, 1))   # tail_padding_alignment_in_elements: 1
    return msg(f_varint(2, PT[t]), f_packed(3, dims), f_bytes(5, lay),
               f_bytes(6, bytes(len(dims) * 2)) if False else b"")

def literal_f32(dims, values, layout=None):
    a = np.asarray(values, np.float32).reshape(dims)
    if layout is not None:   # physical order: minor_to_major[0] varies fastest
        a = np.transpose(a, list(reversed(layout)))
    return msg(f_bytes(1, shape("f32", dims, layout)), f_packed_f32(8, a.ravel().tolist()))

def literal_s32(dims, values):
    return msg(f_bytes(1, shape("s32", dims)), f_packed(4, [int(v) for v in np.ravel(values)]))

class Comp:
    def __init__(self, cid, name):
        self.cid, self.name, self.instrs, self.local = cid, name, [], 0
    def add(self, name, opcode, shp, operands=(), **fields):
        iid = (self.cid << 32) | self.local
        self.local += 1
        parts = [f_bytes(1, name), f_bytes(2, opcode), f_bytes(3, shp),
                 f_bytes(7, b""), f_varint(35, iid) if iid else b"",
                 f_packed(36, [o for o in operands])]
        for k, v in fields.items():
            parts.append(v)
        self.instrs.append(msg(*parts))
        return iid
    def proto(self, root):
        return msg(f_bytes(1, self.name), *[f_bytes(2, i) for i in self.instrs],
                   f_varint(5, self.cid) if self.cid else b"", f_varint(6, root) if root else b"")

def module(name, comps_roots, entry_cid):
    return msg(f_bytes(1, name), f_bytes(2, comps_roots[-1][0].name),
               *[f_bytes(3, c.proto(r)) for c, r in comps_roots], f_varint(6, entry_cid))

# ---- the test modules ------------------------------------------------------------------

S = shape

def zoo():
    """Many instruction kinds in one module, with its HLO text and a numpy run."""
    add = Comp(1, "add_f32")
    a = add.add("a", "parameter", S("f32"), parameter_number=f_varint(9, 0))
    b = add.add("b", "parameter", S("f32"), parameter_number=f_varint(9, 1))
    r_add = add.add("sum", "add", S("f32"), [a, b])
    cond = Comp(2, "cond")
    cp = cond.add("cp", "parameter", S("tuple", tuple_shapes=[S("s32"), S("f32", [2, 3])]), parameter_number=f_varint(9, 0))
    ci = cond.add("ci", "get-tuple-element", S("s32"), [cp], tuple_index=f_varint(13, 0))
    ten = cond.add("ten", "constant", S("s32"), literal=f_bytes(8, literal_s32([], [3])))
    r_cond = cond.add("lt", "compare", S("pred"), [ci, ten], comparison_direction=f_bytes(63, "LT"),
                      comparison_type=f_bytes(72, "SIGNED"))
    body = Comp(3, "body")
    bp = body.add("bp", "parameter", S("tuple", tuple_shapes=[S("s32"), S("f32", [2, 3])]), parameter_number=f_varint(9, 0))
    bi = body.add("bi", "get-tuple-element", S("s32"), [bp], tuple_index=f_varint(13, 0))
    bx = body.add("bx", "get-tuple-element", S("f32", [2, 3]), [bp], tuple_index=f_varint(13, 1))
    one = body.add("one", "constant", S("s32"), literal=f_bytes(8, literal_s32([], [1])))
    bi2 = body.add("bi2", "add", S("s32"), [bi, one])
    bx2 = body.add("bx2", "add", S("f32", [2, 3]), [bx, bx])
    r_body = body.add("bt", "tuple", S("tuple", tuple_shapes=[S("s32"), S("f32", [2, 3])]), [bi2, bx2])
    e = Comp(4, "main")
    x = e.add("x", "parameter", S("f32", [2, 3]), parameter_number=f_varint(9, 0))
    y = e.add("y", "parameter", S("f32", [3, 2]), parameter_number=f_varint(9, 1))
    # A constant written column-major ({0,1}): its proto elements are in physical order.
    c = e.add("c", "constant", S("f32", [2, 3]), literal=f_bytes(8, literal_f32([2, 3], [1, 2, 3, 4, 5, 6], layout=[0, 1])))
    xc = e.add("xc", "multiply", S("f32", [2, 3]), [x, c])
    yt = e.add("yt", "transpose", S("f32", [2, 3]), [y], dimensions=f_packed(14, [1, 0]))
    s = e.add("s", "subtract", S("f32", [2, 3]), [xc, yt])
    dot = e.add("d", "dot", S("f32", [2, 2]), [s, y],
                dot_dimension_numbers=f_bytes(30, msg(f_packed(1, [1]), f_packed(2, [0]))),
                precision_config=f_bytes(51, msg(f_packed(1, [0, 0]))))
    zero = e.add("zero", "constant", S("f32"), literal=f_bytes(8, literal_f32([], [0])))
    red = e.add("r", "reduce", S("f32", [2]), [s, zero], dimensions=f_packed(14, [1]),
                called_computation_ids=f_packed(38, [add.cid << 32 | 0][:0] + [1]))
    io = e.add("io", "iota", S("s32", [4]), dimensions=f_packed(14, [0]))
    sl = e.add("sl", "slice", S("s32", [2]), [io],
               slice_dimensions=f_bytes(17, msg(f_varint(1, 1), f_varint(2, 4), f_varint(3, 2))))
    bc = e.add("bc", "broadcast", S("f32", [2, 3]), [red], dimensions=f_packed(14, [0]))
    cv = e.add("cv", "convert", S("s32", [2]), [red])
    cat = e.add("cat", "concatenate", S("s32", [4]), [cv, sl], dimensions=f_packed(14, [0]))
    rs = e.add("rs", "reshape", S("s32", [2, 2]), [cat])
    i0 = e.add("i0", "constant", S("s32"), literal=f_bytes(8, literal_s32([], [0])))
    init = e.add("init", "tuple", S("tuple", tuple_shapes=[S("s32"), S("f32", [2, 3])]), [i0, bc])
    wh = e.add("w", "while", S("tuple", tuple_shapes=[S("s32"), S("f32", [2, 3])]), [init],
               called_computation_ids=f_packed(38, [3, 2]))   # [body, condition]
    wx = e.add("wx", "get-tuple-element", S("f32", [2, 3]), [wh], tuple_index=f_varint(13, 1))
    root = e.add("out", "tuple", S("tuple", tuple_shapes=[S("f32", [2, 2]), S("s32", [2, 2]), S("f32", [2, 3])]),
                 [dot, rs, wx])
    mod = module("proto_zoo", [(add, r_add), (cond, r_cond), (body, r_body), (e, root)], 4)
    text = """HloModule proto_zoo

%add_f32 {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b)
}

%cond {
  %cp = (s32[], f32[2,3]) parameter(0)
  %ci = s32[] get-tuple-element(%cp), index=0
  %ten = s32[] constant(3)
  ROOT %lt = pred[] compare(%ci, %ten), direction=LT
}

%body {
  %bp = (s32[], f32[2,3]) parameter(0)
  %bi = s32[] get-tuple-element(%bp), index=0
  %bx = f32[2,3] get-tuple-element(%bp), index=1
  %one = s32[] constant(1)
  %bi2 = s32[] add(%bi, %one)
  %bx2 = f32[2,3] add(%bx, %bx)
  ROOT %bt = (s32[], f32[2,3]) tuple(%bi2, %bx2)
}

ENTRY %main {
  %x = f32[2,3] parameter(0)
  %y = f32[3,2] parameter(1)
  %c = f32[2,3] constant({ { 1, 2, 3 }, { 4, 5, 6 } })
  %xc = f32[2,3] multiply(%x, %c)
  %yt = f32[2,3] transpose(%y), dimensions={1,0}
  %s = f32[2,3] subtract(%xc, %yt)
  %d = f32[2,2] dot(%s, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %zero = f32[] constant(0)
  %r = f32[2] reduce(%s, %zero), dimensions={1}, to_apply=%add_f32
  %io = s32[4] iota(), iota_dimension=0
  %sl = s32[2] slice(%io), slice={[1:4:2]}
  %bc = f32[2,3] broadcast(%r), dimensions={0}
  %cv = s32[2] convert(%r)
  %cat = s32[4] concatenate(%cv, %sl), dimensions={0}
  %rs = s32[2,2] reshape(%cat)
  %i0 = s32[] constant(0)
  %init = (s32[], f32[2,3]) tuple(%i0, %bc)
  %w = (s32[], f32[2,3]) while(%init), condition=%cond, body=%body
  %wx = f32[2,3] get-tuple-element(%w), index=1
  ROOT %out = (f32[2,2], s32[2,2], f32[2,3]) tuple(%d, %rs, %wx)
}
"""
    rng = np.random.default_rng(20)
    xv = rng.integers(-4, 5, (2, 3)).astype(np.float32)
    yv = rng.integers(-4, 5, (3, 2)).astype(np.float32)
    cvals = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    sv = xv * cvals - yv.T
    dv = sv @ yv
    rv = sv.sum(axis=1)
    cat = np.concatenate([rv.astype(np.int32), np.array([1, 3], np.int32)]).reshape(2, 2)
    wv = np.broadcast_to(rv[:, None], (2, 3)) * 8   # three doublings
    result = msg(f_bytes(1, S("tuple", tuple_shapes=[S("f32", [2, 2]), S("s32", [2, 2]), S("f32", [2, 3])])),
                 f_bytes(10, literal_f32([2, 2], dv.ravel())), f_bytes(10, literal_s32([2, 2], cat)),
                 f_bytes(10, literal_f32([2, 3], wv.ravel())))
    args = [literal_f32([2, 3], xv.ravel()), literal_f32([3, 2], yv.ravel())]
    return mod, text, args, result

# ---- literals of every element type ---------------------------------------------

def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]

# Bit patterns of 1, -2, 0.5 and 0 worked out by hand from each format's
# exponent bias (f8e8m0fnu has no sign and no zero: 1, 2, 0.5, 4 instead).
F8 = {
    "f8e5m2": (19, [0x3C, 0xC0, 0x38, 0x00]),        # bias 15
    "f8e4m3": (28, [0x38, 0xC0, 0x30, 0x00]),        # bias 7
    "f8e4m3fn": (20, [0x38, 0xC0, 0x30, 0x00]),      # bias 7
    "f8e4m3b11fnuz": (23, [0x58, 0xE0, 0x50, 0x00]),  # bias 11
    "f8e3m4": (29, [0x30, 0xC0, 0x20, 0x00]),        # bias 3
    "f8e5m2fnuz": (24, [0x40, 0xC4, 0x3C, 0x00]),    # bias 16
    "f8e4m3fnuz": (25, [0x40, 0xC8, 0x38, 0x00]),    # bias 8
    "f8e8m0fnu": (33, [0x7F, 0x80, 0x7E, 0x81]),     # bias 127, 2^(e-127)
    "f4e2m1fn": (32, [0x02, 0x0C, 0x01, 0x00]),      # bias 1; 0.5 is subnormal
}
PT.update({k: v[0] for k, v in F8.items()})
PT.update({"s2": 26, "u2": 27, "c128": 18})

def literal_cases():
    """(name, type, LiteralProto bytes, HLO literal text) for every element type."""
    out = []
    dims = [2, 2]
    def sh(t):
        return f_bytes(1, shape(t, dims))
    floats = "{ { 1, -2 }, { 0.5, 0 } }"
    out.append(("pred", msg(sh("pred"), f_packed(2, [1, 0, 1, 1])), "{ { true, false }, { true, true } }"))
    for t, field, vals in [("s8", 15, [1, -2, 127, -128]), ("u8", 3, [1, 2, 255, 0])]:
        out.append((t, msg(sh(t), f_bytes(field, bytes(v & 0xFF for v in vals))),
                    "{ { %d, %d }, { %d, %d } }" % tuple(vals)))
    # Sub-byte integers: one element per byte, the value in the low bits; the
    # upper bits are set to junk here, which a reader must ignore.
    for t, field, bits, vals in [("s4", 21, 4, [-8, 7, -1, 3]), ("u4", 22, 4, [15, 0, 9, 1]),
                                 ("s2", 26, 2, [-2, 1, -1, 0]), ("u2", 27, 2, [3, 0, 2, 1])]:
        raw = bytes(((v & ((1 << bits) - 1)) | 0xA0) for v in vals)
        out.append((t, msg(sh(t), f_bytes(field, raw)), "{ { %d, %d }, { %d, %d } }" % tuple(vals)))
    for t, field, fmt, vals in [("s16", 17, "<4h", [1, -2, 32767, -32768]), ("u16", 16, "<4H", [1, 2, 65535, 0])]:
        out.append((t, msg(sh(t), f_bytes(field, struct.pack(fmt, *vals))), "{ { %d, %d }, { %d, %d } }" % tuple(vals)))
    out.append(("s32", msg(sh("s32"), f_packed(4, [1, -2, 2147483647, -2147483648])),
                "{ { 1, -2 }, { 2147483647, -2147483648 } }"))
    out.append(("s64", msg(sh("s64"), f_packed(5, [1, -2, 2**62, -(2**63)])),
                "{ { 1, -2 }, { %d, %d } }" % (2**62, -(2**63))))
    out.append(("u32", msg(sh("u32"), f_packed(6, [1, 2, 2**32 - 1, 0])), "{ { 1, 2 }, { 4294967295, 0 } }"))
    out.append(("u64", msg(sh("u64"), f_packed(7, [1, 2, 2**64 - 1, 0])), "{ { 1, 2 }, { 18446744073709551615, 0 } }"))
    out.append(("f32", msg(sh("f32"), f_packed_f32(8, [1, -2, 0.5, 0])), floats))
    out.append(("f64", msg(sh("f64"), f_bytes(9, struct.pack("<4d", 1, -2, 0.5, 0))), floats))
    out.append(("f16", msg(sh("f16"), f_bytes(11, np.array([1, -2, 0.5, 0], np.float16).tobytes())), floats))
    bf = [f32_bits(v) >> 16 for v in [1, -2, 0.5, 0]]
    out.append(("bf16", msg(sh("bf16"), f_bytes(13, struct.pack("<4H", *bf))), floats))
    fields = {"f8e5m2": 19, "f8e4m3": 28, "f8e4m3fn": 20, "f8e4m3b11fnuz": 23, "f8e3m4": 29,
              "f8e5m2fnuz": 24, "f8e4m3fnuz": 25, "f8e8m0fnu": 33, "f4e2m1fn": 32}
    for t, (_, bits) in F8.items():
        text = "{ { 1, 2 }, { 0.5, 4 } }" if t == "f8e8m0fnu" else floats
        out.append((t, msg(sh(t), f_bytes(fields[t], bytes(bits))), text))
    out.append(("c64", msg(sh("c64"), f_packed_f32(12, [1, -2, 0.5, 0, 3, 4, -1, 0.25])),
                "{ { (1, -2), (0.5, 0) }, { (3, 4), (-1, 0.25) } }"))
    out.append(("c128", msg(sh("c128"), f_bytes(18, struct.pack("<8d", 1, -2, 0.5, 0, 3, 4, -1, 0.25))),
                "{ { (1, -2), (0.5, 0) }, { (3, 4), (-1, 0.25) } }"))
    # Physical order: a {0,1} (column-major) literal lists columns first.
    out.append(("f32_colmajor", msg(f_bytes(1, shape("f32", [2, 3], [0, 1])), f_packed_f32(8, [1, 4, 2, 5, 3, 6])),
                "{ { 1, 2, 3 }, { 4, 5, 6 } }"))
    # A tuple literal: shape TUPLE + tuple_literals.
    tup = msg(f_bytes(1, shape("tuple", tuple_shapes=[shape("s32", [2]), shape("pred", [])])),
              f_bytes(10, msg(f_bytes(1, shape("s32", [2])), f_packed(4, [5, -6]))),
              f_bytes(10, msg(f_bytes(1, shape("pred", [])), f_packed(2, [1]))))
    out.append(("tuple", tup, "( s32[2] { 5, -6 }, pred[] true )"))
    return out

def literal_module(name, text):
    """A module returning its one parameter, shaped like the literal."""
    if name == "tuple":
        shp = "(s32[2], pred[])"
    elif name == "f32_colmajor":
        shp = "f32[2,3]"
    else:
        shp = "%s[2,2]" % name
    return "HloModule lit_%s\n\nENTRY %%main {\n  ROOT %%p = %s parameter(0)\n}\n" % (name, shp), shp

def sharding_replicated():
    return b""   # an empty OpSharding: type REPLICATED (0) is not written

def zoo2():
    """More instruction kinds and instruction fields, checked by --print against
    the HLO text XLA prints for them (attributes in XLA's printing order)."""
    f = lambda *d: S("f32", list(d))
    lt = Comp(1, "less")
    la = lt.add("la", "parameter", S("f32"), parameter_number=f_varint(9, 0))
    lb = lt.add("lb", "parameter", S("f32"), parameter_number=f_varint(9, 1))
    lc = lt.add("lc", "parameter", S("s32"), parameter_number=f_varint(9, 2))
    ld = lt.add("ld", "parameter", S("s32"), parameter_number=f_varint(9, 3))
    r_lt = lt.add("lr", "compare", S("pred"), [la, lb], comparison_direction=f_bytes(63, "LT"),
                  comparison_type=f_bytes(72, "TOTALORDER"))
    mx = Comp(2, "max")
    ma = mx.add("ma", "parameter", S("f32"), parameter_number=f_varint(9, 0))
    mb = mx.add("mb", "parameter", S("f32"), parameter_number=f_varint(9, 1))
    r_mx = mx.add("mm", "maximum", S("f32"), [ma, mb])
    fu = Comp(3, "fused")
    fp = fu.add("fp", "parameter", f(4), parameter_number=f_varint(9, 0))
    r_fu = fu.add("fe", "exponential", f(4), [fp])
    tb = Comp(4, "on_true")
    tp = tb.add("tp", "parameter", f(4), parameter_number=f_varint(9, 0))
    r_tb = tb.add("tn", "negate", f(4), [tp])
    fb = Comp(5, "on_false")
    fq = fb.add("fq", "parameter", f(4), parameter_number=f_varint(9, 0))
    r_fb = fb.add("fc", "copy", f(4), [fq])
    e = Comp(6, "main")
    x = e.add("x", "parameter", f(4), parameter_number=f_varint(9, 0),
              sharding=f_bytes(40, sharding_replicated()))
    img = e.add("img", "parameter", S("f32", [1, 5, 5, 2]), parameter_number=f_varint(9, 1),
                sharding=f_bytes(40, msg(f_varint(1, 1), f_packed(4, [0]))))
    ker = e.add("ker", "parameter", S("f32", [3, 3, 2, 4]), parameter_number=f_varint(9, 2),
                sharding=f_bytes(40, msg(f_varint(1, 3), f_packed(3, [1, 1, 1, 2]), f_packed(9, [2]))))
    idx = e.add("idx", "parameter", S("s32", [2, 1]), parameter_number=f_varint(9, 3))
    p = e.add("p", "parameter", S("pred"), parameter_number=f_varint(9, 4))
    zero = e.add("zero", "constant", S("f32"), literal=f_bytes(8, literal_f32([], [0])))
    pad = e.add("pad", "pad", f(8), [x, zero],
                padding_config=f_bytes(21, msg(f_bytes(1, msg(f_varint(1, 1), f_varint(2, 0), f_varint(3, 1))))))
    win = msg(*[f_bytes(1, msg(f_varint(1, 3), f_varint(2, 1), f_varint(3, 1), f_varint(4, 1),
                                f_varint(5, 1), f_varint(6, 1))) for _ in range(2)])
    cdn = msg(f_varint(7, 0), f_varint(8, 3), f_packed(11, [1, 2]), f_varint(3, 2), f_varint(4, 3),
              f_packed(6, [0, 1]), f_varint(9, 0), f_varint(10, 3), f_packed(12, [1, 2]))
    conv = e.add("conv", "convolution", S("f32", [1, 5, 5, 4]), [img, ker], window=f_bytes(15, win),
                 convolution_dimension_numbers=f_bytes(16, cdn), feature_group_count=f_varint(50, 1),
                 batch_group_count=f_varint(58, 1),
                 precision_config=f_bytes(51, msg(f_packed(1, [2, 0]))),
                 metadata=f_bytes(7, msg(f_bytes(1, "Conv2D"), f_bytes(2, "jit(f)/conv"), f_bytes(3, "model.py"),
                                          f_varint(4, 12))))
    gdn = msg(f_packed(1, [1]), f_packed(3, [0]), f_varint(4, 1))
    gat = e.add("gat", "gather", S("f32", [2, 2]), [pad, idx], gather_dimension_numbers=f_bytes(33, gdn),
                gather_slice_sizes=f_packed(34, [2]),
                indices_are_sorted=f_varint(67, 1))
    rw = e.add("rw", "reduce-window", f(4), [x, zero],
               window=f_bytes(15, msg(f_bytes(1, msg(f_varint(1, 3), f_varint(2, 1), f_varint(3, 1),
                                                      f_varint(4, 1), f_varint(5, 1), f_varint(6, 1))))),
               called_computation_ids=f_packed(38, [2]))
    fus = e.add("fus", "fusion", f(4), [rw], fusion_kind=f_bytes(11, "kLoop"),
                called_computation_ids=f_packed(38, [3]))
    cnd = e.add("cnd", "conditional", f(4), [p, fus, x], called_computation_ids=f_packed(38, [4, 5]))
    sl = e.add("sl", "dynamic-slice", f(2), [cnd, e.add("i1", "constant", S("s32"), literal=f_bytes(8, literal_s32([], [1])))],
               dynamic_slice_sizes=f_packed(20, [2]))
    srt = e.add("srt", "sort", S("tuple", tuple_shapes=[f(4), S("s32", [4])]),
                [cnd, e.add("io", "iota", S("s32", [4]), dimensions=f_packed(14, [0]))],
                dimensions=f_packed(14, [0]), is_stable=f_varint(60, 1), called_computation_ids=f_packed(38, [1]))
    cc = e.add("cc", "custom-call", f(4), [x], custom_call_target=f_bytes(28, "my_target"),
               custom_call_api_version=f_varint(77, 4), custom_call_has_side_effect=f_varint(65, 1),
               backend_config=f_bytes(43, "{k = 1 : i32}"),
               frontend_attributes=f_bytes(68, msg(f_bytes(1, msg(f_bytes(1, "b"), f_bytes(2, "2"))),
                                                   f_bytes(1, msg(f_bytes(1, "a"), f_bytes(2, "x y"))))))
    ex = e.add("ex", "exponential", f(4), [cc], result_accuracy=f_bytes(91, msg(f_varint(1, 1))),
               control_predecessor_ids=f_packed(37, [fus]))
    rbg = e.add("rbg", "rng-bit-generator", S("tuple", tuple_shapes=[S("u64", [2]), S("u32", [4])]),
                [e.add("st", "constant", S("u64", [2]), literal=f_bytes(8, msg(f_bytes(1, S("u64", [2])), f_packed(7, [1, 2]))))],
                rng_algorithm=f_varint(70, 2))
    bcv = e.add("bcv", "bitcast-convert", S("u32", [4]), [ex])
    rev = e.add("rev", "reverse", S("u32", [4]), [bcv], dimensions=f_packed(14, [0]))
    tk = e.add("tk", "topk", S("tuple", tuple_shapes=[f(2), S("s32", [2])]), [ex], k=f_varint(81, 2), largest=f_varint(85, 1))
    rp = e.add("rp", "reduce-precision", f(4), [ex], exponent_bits=f_varint(18, 5), mantissa_bits=f_varint(19, 10))
    root = e.add("out", "tuple", S("tuple", tuple_shapes=[f(2, 2), S("f32", [1, 5, 5, 4]), f(2), S("tuple", tuple_shapes=[f(4), S("s32", [4])]),
                                                           S("u32", [4]), S("tuple", tuple_shapes=[S("u64", [2]), S("u32", [4])]),
                                                           S("tuple", tuple_shapes=[f(2), S("s32", [2])]), f(4)]),
                 [gat, conv, sl, srt, rev, rbg, tk, rp])
    mod = module("proto_zoo2", [(lt, r_lt), (mx, r_mx), (fu, r_fu), (tb, r_tb), (fb, r_fb), (e, root)], 6)
    text = """HloModule proto_zoo2

%less {
  %la = f32[] parameter(0)
  %lb = f32[] parameter(1)
  %lc = s32[] parameter(2)
  %ld = s32[] parameter(3)
  ROOT %lr = pred[] compare(%la, %lb), direction=LT, type=TOTALORDER
}

%max {
  %ma = f32[] parameter(0)
  %mb = f32[] parameter(1)
  ROOT %mm = f32[] maximum(%ma, %mb)
}

%fused {
  %fp = f32[4] parameter(0)
  ROOT %fe = f32[4] exponential(%fp)
}

%on_true {
  %tp = f32[4] parameter(0)
  ROOT %tn = f32[4] negate(%tp)
}

%on_false {
  %fq = f32[4] parameter(0)
  ROOT %fc = f32[4] copy(%fq)
}

ENTRY %main {
  %x = f32[4] parameter(0), sharding={replicated}
  %img = f32[1,5,5,2] parameter(1), sharding={maximal device=0}
  %ker = f32[3,3,2,4] parameter(2), sharding={devices=[1,1,1,2]<=[2]}
  %idx = s32[2,1] parameter(3)
  %p = pred[] parameter(4)
  %zero = f32[] constant(0)
  %pad = f32[8] pad(%x, %zero), padding=1_0_1
  %conv = f32[1,5,5,4] convolution(%img, %ker), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, operand_precision={highest,default}, metadata={op_type="Conv2D" op_name="jit(f)/conv" source_file="model.py" source_line=12}
  %gat = f32[2,2] gather(%pad, %idx), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={2}, indices_are_sorted=true
  %rw = f32[4] reduce-window(%x, %zero), window={size=3 pad=1_1}, to_apply=%max
  %fus = f32[4] fusion(%rw), kind=kLoop, calls=%fused
  %cnd = f32[4] conditional(%p, %fus, %x), true_computation=%on_true, false_computation=%on_false
  %i1 = s32[] constant(1)
  %sl = f32[2] dynamic-slice(%cnd, %i1), dynamic_slice_sizes={2}
  %io = s32[4] iota(), iota_dimension=0
  %srt = (f32[4], s32[4]) sort(%cnd, %io), dimensions={0}, is_stable=true, to_apply=%less
  %cc = f32[4] custom-call(%x), custom_call_target="my_target", custom_call_has_side_effect=true, api_version=API_VERSION_TYPED_FFI, frontend_attributes={a="x y",b="2"}, backend_config="{k = 1 : i32}"
  %ex = f32[4] exponential(%cc), control-predecessors={%fus}, result_accuracy={mode=highest}
  %st = u64[2] constant({1, 2})
  %rbg = (u64[2], u32[4]) rng-bit-generator(%st), algorithm=rng_philox
  %bcv = u32[4] bitcast-convert(%ex)
  %rev = u32[4] reverse(%bcv), dimensions={0}
  %tk = (f32[2], s32[2]) topk(%ex), k=2, largest=true
  %rp = f32[4] reduce-precision(%ex), exponent_bits=5, mantissa_bits=10
  ROOT %out = (f32[2,2], f32[1,5,5,4], f32[2], (f32[4], s32[4]), u32[4], (u64[2], u32[4]), (f32[2], s32[2]), f32[4]) tuple(%gat, %conv, %sl, %srt, %rev, %rbg, %tk, %rp)
}
"""
    return mod, text

def text_literal_f32(indent, dims, values):
    """A LiteralProto in text format (TextFormat's layout of fields)."""
    pad = " " * indent
    out = [pad + "shape {", pad + "  element_type: F32"]
    out += [pad + "  dimensions: %d" % d for d in dims]
    out += [pad + "  layout {"] + [pad + "    minor_to_major: %d" % d for d in range(len(dims) - 1, -1, -1)]
    out += [pad + "    tail_padding_alignment_in_elements: 1", pad + "  }", pad + "}"]
    out += [pad + "f32s: %s" % repr(float(v)) for v in values]
    return "\n".join(out)

def zoo_literals_text():
    """zoo's arguments and result as a RunHloModuleLiterals in text format:
    comments, nested messages, repeated scalars one per line and as a list."""
    rng = np.random.default_rng(20)
    xv = rng.integers(-4, 5, (2, 3)).astype(np.float32)
    yv = rng.integers(-4, 5, (3, 2)).astype(np.float32)
    cvals = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    sv = xv * cvals - yv.T
    dv = sv @ yv
    rv = sv.sum(axis=1)
    cat = np.concatenate([rv.astype(np.int32), np.array([1, 3], np.int32)]).ravel()
    wv = np.broadcast_to(rv[:, None], (2, 3)) * 8
    t = ["# proto-file: xla/tools/run_hlo_module.proto", "# proto-message: RunHloModuleLiterals",
         "iterations {", "  arguments {", text_literal_f32(4, [2, 3], xv.ravel()), "  }",
         "  arguments <", text_literal_f32(4, [3, 2], yv.ravel()), "  >", "  result {",
         "    shape {", "      element_type: TUPLE",
         "      tuple_shapes { element_type: F32 dimensions: [2, 2] }",
         "      tuple_shapes { element_type: S32 dimensions: [2, 2] }",
         "      tuple_shapes { element_type: F32 dimensions: 2 dimensions: 3 }", "    }",
         "    tuple_literals {", text_literal_f32(6, [2, 2], dv.ravel()), "    }",
         "    tuple_literals {", "      shape { element_type: S32 dimensions: 2 dimensions: 2 }",
         "      s32s: [%s]" % ", ".join(str(int(v)) for v in cat), "    }",
         "    tuple_literals {", text_literal_f32(6, [2, 3], wv.ravel()), "    }", "  }", "}", ""]
    return "\n".join(t)

def one_instruction_module(*instrs, root):
    """A module of one computation (id 1) from (name, opcode, shape, operand ids, fields)."""
    e = Comp(1, "main")
    for name, op, shp, ops, fields in instrs:
        e.add(name, op, shp, ops, **fields)
    return module("bad", [(e, root)], 1)

def bad_cases(snapshot):
    """Broken files and the message and field each must be reported with."""
    p0 = (1 << 32) | 0
    param = ("p", "parameter", S("f32", [3]), [], {"n": f_varint(9, 0)})
    cases = {}
    cases["bad-truncated.pb"] = (snapshot[: len(snapshot) // 2],
                                 "neither HLO text nor a well-formed protocol buffer: field 1")
    wrong = msg(f_bytes(1, "p"), f_bytes(2, "parameter"), f_varint(3, 7), f_varint(35, p0))
    comp = msg(f_bytes(1, "main"), f_bytes(2, wrong), f_bytes(2, wrong), f_varint(5, 1), f_varint(6, p0))
    cases["bad-wire-type.pb"] = (msg(f_bytes(1, "bad"), f_bytes(3, comp), f_varint(6, 1)),
                                 "xla.HloInstructionProto.shape: wire type varint, expected length-delimited")
    cases["bad-opcode.pb"] = (one_instruction_module(
        param, ("q", "frobnicate", S("f32", [3]), [p0], {}), root=p0 + 1),
        "instruction q (id 4294967297): xla.HloInstructionProto.opcode: unknown opcode \"frobnicate\"")
    cases["bad-operand.pb"] = (one_instruction_module(
        param, ("q", "negate", S("f32", [3]), [p0 + 7], {}), root=p0 + 1),
        "xla.HloInstructionProto.operand_ids: no instruction of computation main has id 4294967303")
    cases["bad-cycle.pb"] = (one_instruction_module(
        param, ("q", "add", S("f32", [3]), [p0, p0 + 2], {}),
        ("r", "negate", S("f32", [3]), [p0 + 1], {}), root=p0 + 2),
        "instruction q is part of a cycle")
    short = msg(f_bytes(1, S("f32", [3])), f_packed_f32(8, [1.0, 2.0]))
    cases["bad-literal-size.pb"] = (one_instruction_module(
        ("c", "constant", S("f32", [3]), [], {"l": f_bytes(8, short)}), root=p0),
        "xla.HloInstructionProto.literal: xla.LiteralProto.f32s: 2 elements, the shape f32[...] of rank 1 holds 3")
    cases["bad-root.pb"] = (one_instruction_module(param, root=p0 + 5),
                            "xla.HloComputationProto.root_id: no instruction has id 4294967301")
    cases["bad-enum.pbtxt"] = (b"shape { element_type: F33 dimensions: 2 }\n",
                               "bad-enum.pbtxt:1:23: error: xla.ShapeProto.element_type: 'F33' is not a value of xla.PrimitiveType")
    cases["bad-unclosed.pbtxt"] = (b"# a literal\nshape {\n  element_type: F32\n",
                                   "bad-unclosed.pbtxt:4:1: error: xla.ShapeProto: expected '}' before the end of the file")
    cases["bad-list.pbtxt"] = (b"shape { element_type: [F32, S32] }\n",
                               "xla.ShapeProto.element_type: a list for a field that is not repeated")
    return cases

def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    mod, text, args, result = zoo()
    hlo_proto = f_bytes(1, mod)
    snapshot = msg(f_bytes(1, hlo_proto), *[f_bytes(2, a) for a in args], f_bytes(3, result))
    files = {"zoo.module.pb": mod, "zoo.hloproto.pb": hlo_proto, "zoo.snapshot.pb": snapshot,
             "zoo.arg0.literal.pb": args[0], "zoo.arg1.literal.pb": args[1]}
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    with open(os.path.join(out, "zoo.hlo"), "w") as f:
        f.write(text)
    mod2, text2 = zoo2()
    with open(os.path.join(out, "zoo2.module.pb"), "wb") as f:
        f.write(mod2)
    with open(os.path.join(out, "zoo2.hlo"), "w") as f:
        f.write(text2)
    with open(os.path.join(out, "literal-cases.txt"), "w") as f:
        for name, data, text in literal_cases():
            mtext, shp = literal_module(name, text)
            with open(os.path.join(out, "lit_%s.pb" % name), "wb") as g:
                g.write(data)
            with open(os.path.join(out, "lit_%s.hlo" % name), "w") as g:
                g.write(mtext)
            lit = text if name == "tuple" else "%s %s" % (shp, text)
            with open(os.path.join(out, "lit_%s.txt" % name), "w") as g:
                g.write(lit + "\n")
            f.write(name + "\n")
    # The same in protocol-buffer text format, as TextFormat prints it.
    with open(os.path.join(out, "zoo.literals.pbtxt"), "w") as f:
        f.write(zoo_literals_text())
    # run_hlo_module's literals file: iterations[0] holds arguments and result.
    iteration = msg(*[f_bytes(2, a) for a in args], f_bytes(3, result))
    with open(os.path.join(out, "zoo.literals.pb"), "wb") as f:
        f.write(f_bytes(1, iteration))
    with open(os.path.join(out, "bad-cases.txt"), "w") as f:
        for name, (data, expect) in sorted(bad_cases(snapshot).items()):
            with open(os.path.join(out, name), "wb") as g:
                g.write(data)
            f.write("%s\t%s\n" % (name, expect))

if __name__ == "__main__":
    main()
