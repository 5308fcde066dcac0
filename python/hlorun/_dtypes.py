"""Element types: hlorun's (numbered like xla::PrimitiveType) and numpy's.

Arrays hold elements in XLA's memory form: bf16 and the 8-bit and 4-bit
floats are raw bits, sub-byte integers (s4, u4, s2, u2, s1, u1) one per byte.
Those floats come back as ml_dtypes arrays when the ml_dtypes package is
importable, otherwise as uint16 (bf16) or uint8 views of the raw bits; as
inputs, either form is accepted. Sub-byte integers are int8/uint8 arrays.
"""
import numpy as np

try:   # optional: not packaged in Debian 12
    import ml_dtypes
except ImportError:
    ml_dtypes = None

TUPLE, TOKEN = 13, 17

# code: (HLO name, numpy dtype or None, raw dtype for narrow floats, ml_dtypes name)
_TABLE = {
    1: ("pred", np.bool_, None, None),
    2: ("s8", np.int8, None, None), 3: ("s16", np.int16, None, None),
    4: ("s32", np.int32, None, None), 5: ("s64", np.int64, None, None),
    6: ("u8", np.uint8, None, None), 7: ("u16", np.uint16, None, None),
    8: ("u32", np.uint32, None, None), 9: ("u64", np.uint64, None, None),
    10: ("f16", np.float16, None, None), 11: ("f32", np.float32, None, None),
    12: ("f64", np.float64, None, None),
    15: ("c64", np.complex64, None, None), 18: ("c128", np.complex128, None, None),
    16: ("bf16", None, np.uint16, "bfloat16"),
    19: ("f8e5m2", None, np.uint8, "float8_e5m2"),
    20: ("f8e4m3fn", None, np.uint8, "float8_e4m3fn"),
    23: ("f8e4m3b11fnuz", None, np.uint8, "float8_e4m3b11fnuz"),
    24: ("f8e5m2fnuz", None, np.uint8, "float8_e5m2fnuz"),
    25: ("f8e4m3fnuz", None, np.uint8, "float8_e4m3fnuz"),
    28: ("f8e4m3", None, np.uint8, "float8_e4m3"),
    29: ("f8e3m4", None, np.uint8, "float8_e3m4"),
    32: ("f4e2m1fn", None, np.uint8, "float4_e2m1fn"),
    33: ("f8e8m0fnu", None, np.uint8, "float8_e8m0fnu"),
    21: ("s4", np.int8, None, None), 22: ("u4", np.uint8, None, None),
    26: ("s2", np.int8, None, None), 27: ("u2", np.uint8, None, None),
    30: ("s1", np.int8, None, None), 31: ("u1", np.uint8, None, None),
}
CODE_OF_NAME = {name: code for code, (name, _, _, _) in _TABLE.items()}


def name(code):
    return _TABLE[code][0] if code in _TABLE else f"type {code}"


def _ml(code):
    ml = _TABLE[code][3]
    return getattr(ml_dtypes, ml, None) if ml and ml_dtypes is not None else None


def numpy_dtype(code):
    """The dtype results of this element type come back as."""
    if code not in _TABLE:
        return None
    _, dt, raw, _ = _TABLE[code]
    if dt is not None:
        return np.dtype(dt)
    ml = _ml(code)
    return np.dtype(ml) if ml is not None else np.dtype(raw)


def accepts(code, dtype):
    """Can an array of this numpy dtype feed an element of type code?"""
    if code not in _TABLE:
        return False
    _, dt, raw, _ = _TABLE[code]
    if dt is not None:
        return dtype == np.dtype(dt)
    ml = _ml(code)
    return dtype == np.dtype(raw) or (ml is not None and dtype == np.dtype(ml))


def code_of_dtype(dtype):
    """hlorun's element type for a numpy dtype (for values without a parameter
    to follow, e.g. compare()); None when there is none."""
    for code, (_, dt, _, _) in _TABLE.items():
        if dt is not None and dtype == np.dtype(dt) and code not in (21, 22, 26, 27, 30, 31):
            return code
    for code in _TABLE:
        ml = _ml(code)
        if ml is not None and dtype == np.dtype(ml):
            return code
    return None
