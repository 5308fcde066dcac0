#!/usr/bin/env python3
"""Checks a HloModuleProto that hlorun --write-proto wrote for tests/proto/zoo.hlo,
decoding the wire format here (not with hlorun's reader) against facts read off
zoo.hlo by hand and XLA's ToProto conventions (../shared/research/protos.md):
packed ids (computation id << 32 | local id, both in text order), while's
called_computation_ids = [body, condition], compare always carries
comparison_type, host_program_shape parameter names p0, p1, ..., literals
in f32s. Exit 0 if every fact holds, else 1 naming the first that does not."""
import struct
import sys


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]; i += 1
        r |= (c & 0x7f) << s; s += 7
        if not c & 0x80:
            return r, i


def fields(b):
    """[(field number, wire type, value)] of one message."""
    out, i = [], 0
    while i < len(b):
        k, i = varint(b, i)
        f, wt = k >> 3, k & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        elif wt == 1:
            v = b[i:i + 8]; i += 8
        elif wt == 5:
            v = b[i:i + 4]; i += 4
        else:
            raise ValueError("wire type %d" % wt)
        out.append((f, wt, v))
    return out


def get(msg, f):
    return [v for (n, _, v) in fields(msg) if n == f]


def ints(msg, f):
    """A repeated int64 field, packed (proto3) or not."""
    r = []
    for (n, wt, v) in fields(msg):
        if n != f:
            continue
        if wt == 0:
            r.append(v)
        else:
            i = 0
            while i < len(v):
                x, i = varint(v, i); r.append(x)
    return r


def s(msg, f):
    v = get(msg, f)
    return v[0].decode() if v else ""


def check(cond, what):
    if not cond:
        print("check_written: FAIL:", what)
        sys.exit(1)


data = open(sys.argv[1], "rb").read()
check(s(data, 1) == "proto_zoo", "module name")
check(s(data, 2) == "main", "entry_computation_name")
comps = get(data, 3)
names = [s(c, 1) for c in comps]
check(names == ["add_f32", "cond", "body", "main"], "computations in text order: %s" % names)
ids = [ints(c, 5)[0] if ints(c, 5) else 0 for c in comps]
check(ids == [0, 1, 2, 3], "computation ids %s" % ids)
check((ints(data, 6) or [0])[0] == 3, "entry_computation_id")
main = comps[3]
instrs = {s(i, 1): i for i in get(main, 2)}
order = [s(i, 1) for i in get(main, 2)]
check(order[:7] == ["x", "y", "c", "xc", "yt", "s", "d"], "main's instruction order %s" % order[:7])
iid = lambda name: (3 << 32) | order.index(name)
check((ints(instrs["d"], 35) or [0])[0] == iid("d"), "dot's packed id")
check(ints(instrs["d"], 36) == [iid("s"), iid("y")], "dot's operand_ids")
check(ints(main, 6) == [iid("out")], "main's root_id")
check(s(instrs["w"], 2) == "while", "while opcode")
check(ints(instrs["w"], 38) == [2, 1], "while's called_computation_ids [body, condition]")
check(ints(instrs["r"], 38) == [0], "reduce's to_apply")
check(ints(instrs["yt"], 14) == [1, 0], "transpose dimensions")
check(ints(instrs["io"], 14) == [0], "iota dimension as dimensions[0]")
lt = [i for i in get(comps[1], 2) if s(i, 1) == "lt"][0]
check(s(lt, 63) == "LT" and s(lt, 72) == "SIGNED", "compare direction LT, comparison_type SIGNED (s32)")
lit = get(instrs["c"], 8)[0]
f32s = get(lit, 8)[0]
check(list(struct.unpack("<6f", f32s)) == [1, 2, 3, 4, 5, 6], "constant's f32s")
shape = get(instrs["c"], 3)[0]
check(ints(shape, 3) == [2, 3] and ints(get(shape, 5)[0], 1) == [1, 0], "constant shape f32[2,3]{1,0}")
check(all(get(i, 7) != [] for i in instrs.values()), "every instruction carries metadata")
hps = get(data, 4)[0]
check([p.decode() for p in get(hps, 3)] == ["p0", "p1"], "host_program_shape parameter names")
print("check_written: ok")
