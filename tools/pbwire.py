"""Protocol-buffer wire format, the few pieces the project's generators need
to write XLA's messages by hand (tools/gen_proto_tests.py,
tests/proto/stream_cases.py, bench/big_snapshot.py)."""


def varint(v):
    """A base-128 varint; negative values as their 64-bit two's complement."""
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wt):
    return varint(field << 3 | wt)


def ld(field, payload):
    """A length-delimited field (wire type 2); a str is written as UTF-8."""
    if isinstance(payload, str):
        payload = payload.encode()
    return key(field, 2) + varint(len(payload)) + payload
