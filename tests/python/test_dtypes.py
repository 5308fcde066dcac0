"""Every element type through the package and back: the bytes come back
unchanged, in the documented numpy dtype; conversions give bit patterns
worked out by hand from the formats' definitions."""
import numpy as np
import pytest

import hlorun
from hlorun import _dtypes

# (HLO type, numpy dtype of results without ml_dtypes, values to send)
PLAIN = [
    ("pred", np.bool_, [[True, False, True], [False, False, True]]),
    ("s8", np.int8, [[-128, -1, 0], [1, 7, 127]]),
    ("s16", np.int16, [[-32768, -2, 0], [3, 300, 32767]]),
    ("s32", np.int32, [[-2**31, -5, 0], [6, 70000, 2**31 - 1]]),
    ("s64", np.int64, [[-2**63, -5, 0], [6, 2**40, 2**63 - 1]]),
    ("u8", np.uint8, [[0, 1, 2], [127, 128, 255]]),
    ("u16", np.uint16, [[0, 1, 2], [32767, 32768, 65535]]),
    ("u32", np.uint32, [[0, 1, 2], [2**31, 2**31 + 1, 2**32 - 1]]),
    ("u64", np.uint64, [[0, 1, 2], [2**63, 2**63 + 1, 2**64 - 1]]),
    ("f16", np.float16, [[0.5, -2.0, 65504.0], [np.inf, -0.0, 6e-8]]),
    ("f32", np.float32, [[1.5, -2.25, 3.4e38], [np.inf, -0.0, 1e-45]]),
    ("f64", np.float64, [[1.5, -2.25, 1e308], [-np.inf, -0.0, 5e-324]]),
    ("c64", np.complex64, [[1 + 2j, -3j, 0], [np.inf, 1e-45j, -1 - 1j]]),
    ("c128", np.complex128, [[1 + 2j, -3j, 0], [np.inf, 5e-324j, -1 - 1j]]),
    # sub-byte integers: one element per byte, in their ranges
    ("s4", np.int8, [[-8, -1, 0], [1, 6, 7]]),
    ("u4", np.uint8, [[0, 1, 2], [9, 14, 15]]),
    ("s2", np.int8, [[-2, -1, 0], [1, 0, -2]]),
    ("u2", np.uint8, [[0, 1, 2], [3, 2, 1]]),
    ("s1", np.int8, [[-1, 0, -1], [0, 0, -1]]),
    ("u1", np.uint8, [[0, 1, 1], [0, 1, 0]]),
]
# Narrow floats as raw bits: (HLO type, raw dtype, bit patterns)
NARROW = [
    ("bf16", np.uint16, [[0x3F80, 0xC020, 0x7F80], [0x0001, 0x8000, 0x7FC0]]),
    ("f8e5m2", np.uint8, [[0x3C, 0xBC, 0x7C], [0x01, 0x80, 0x7E]]),
    ("f8e4m3fn", np.uint8, [[0x38, 0xC0, 0x7E], [0x01, 0x80, 0x7F]]),
    ("f8e4m3b11fnuz", np.uint8, [[0x58, 0xD8, 0x7F], [0x01, 0x00, 0x80]]),
    ("f8e5m2fnuz", np.uint8, [[0x40, 0xC0, 0x7F], [0x01, 0x00, 0x80]]),
    ("f8e4m3fnuz", np.uint8, [[0x40, 0xC0, 0x7F], [0x01, 0x00, 0x80]]),
    ("f8e4m3", np.uint8, [[0x38, 0xB8, 0x78], [0x01, 0x80, 0x7F]]),
    ("f8e3m4", np.uint8, [[0x30, 0xB0, 0x70], [0x01, 0x80, 0x7F]]),
    ("f4e2m1fn", np.uint8, [[0x2, 0xA, 0x7], [0x1, 0x8, 0xF]]),
    ("f8e8m0fnu", np.uint8, [[0x7F, 0x80, 0x00], [0x01, 0xFE, 0xFF]]),
]


def copy_module(t, shape="[2,3]"):
    return hlorun.load(f"HloModule m\nENTRY e {{\n  p = {t}{shape} parameter(0)\n"
                       f"  ROOT c = {t}{shape} copy(p)\n}}\n")


@pytest.mark.parametrize("t,dt,values", PLAIN, ids=[p[0] for p in PLAIN])
def test_plain_round_trip(t, dt, values):
    x = np.array(values, dtype=dt)
    y = copy_module(t).run(x)
    assert y.dtype == np.dtype(dt) and y.shape == (2, 3)
    assert y.tobytes() == x.tobytes()


@pytest.mark.parametrize("t,raw,bits", NARROW, ids=[p[0] for p in NARROW])
def test_narrow_float_round_trip(t, raw, bits):
    x = np.array(bits, dtype=raw)
    y = copy_module(t).run(x)
    if _dtypes.ml_dtypes is None:
        assert y.dtype == np.dtype(raw)   # documented: raw bits without ml_dtypes
    else:
        assert y.dtype == _dtypes.numpy_dtype(_dtypes.CODE_OF_NAME[t])
    assert y.tobytes() == x.tobytes()


def test_conversions_give_hand_worked_bits():
    # f32 -> bf16 keeps the top 16 bits when exact: 1 = 0x3F80, 3 = 0x4040,
    # -2.5 = 0xC020; f8e4m3fn (bias 7): 1 = 0x38, 0.5 = 0x30, -2 = 0xC0;
    # f8e5m2 (bias 15): 1 = 0x3C, -0.5 = 0xB8, 2 = 0x40.
    m = hlorun.load("""HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  z = f32[3] parameter(2)
  a = bf16[3] convert(x)
  b = f8e4m3fn[3] convert(y)
  c = f8e5m2[3] convert(z)
  ROOT t = (bf16[3], f8e4m3fn[3], f8e5m2[3]) tuple(a, b, c)
}""")
    a, b, c = m.run(np.float32([1, 3, -2.5]), np.float32([1, 0.5, -2]), np.float32([1, -0.5, 2]))
    assert a.view(np.uint16).tolist() == [0x3F80, 0x4040, 0xC020]
    assert b.view(np.uint8).tolist() == [0x38, 0x30, 0xC0]
    assert c.view(np.uint8).tolist() == [0x3C, 0xB8, 0x40]


def test_scalars_and_lists_take_the_parameter_type():
    m = hlorun.load("HloModule m\nENTRY e {\n  p = s32[] parameter(0)\n  q = s32[] parameter(1)\n"
                    "  ROOT a = s32[] add(p, q)\n}")
    r = m.run(40, 2)
    assert r.dtype == np.int32 and r.shape == () and int(r) == 42
    v = copy_module("f64", "[3]").run([1, 2.5, -3])
    assert v.dtype == np.float64 and v.tolist() == [1.0, 2.5, -3.0]


def test_big_endian_and_strided_inputs_are_accepted():
    x = np.arange(12, dtype=">f4").reshape(3, 4)[:, ::2].T   # non-native, non-contiguous
    y = copy_module("f32", "[2,3]").run(x)
    assert y.tolist() == [[0, 4, 8], [2, 6, 10]]
