"""Module.run(..., keep=[names]): intermediate values, checked against numpy
computing the same intermediates, and the errors."""
import numpy as np
import pytest

import hlorun
from conftest import src

CHAIN = """HloModule chain
fused {
  p0 = f32[3] parameter(0)
  m = f32[3] multiply(p0, p0)
  ROOT n = f32[3] negate(m)
}
ENTRY main {
  x = f32[3] parameter(0)
  a = f32[3] add(x, x)
  e = f32[3] exponential(a)
  f = f32[3] fusion(e), kind=kLoop, calls=fused
  ROOT r = f32[3] subtract(f, a)
}
"""


def test_entry_values_match_numpy():
    x = np.float32([0.5, -1, 0.25])
    m = hlorun.load(CHAIN)
    y, kept = m.run(x, keep=["a", "e", "f", "r"])
    a = x + x
    e = np.exp(a)
    np.testing.assert_array_equal(kept["a"], a)
    np.testing.assert_allclose(kept["e"], e, rtol=1e-6)
    np.testing.assert_allclose(kept["f"], -(e * e), rtol=1e-6)
    np.testing.assert_allclose(kept["r"], -(e * e) - a, rtol=1e-6)
    assert kept["r"].tolist() == y.tolist() and sorted(kept) == ["a", "e", "f", "r"]
    # The same result as a run without keep=.
    assert m.run(x).tolist() == y.tolist()


def test_fusion_body_gives_a_list_per_run():
    x = np.float32([0.5, -1, 0.25])
    _, kept = hlorun.load(CHAIN).run(x, keep=["m", "fused/n"])
    e = np.exp(x + x)
    assert isinstance(kept["m"], list) and len(kept["m"]) == 1
    np.testing.assert_allclose(kept["m"][0], e * e, rtol=1e-6)
    np.testing.assert_allclose(kept["fused/n"][0], -(e * e), rtol=1e-6)


def test_loop_body_one_value_per_iteration():
    # loop_ok.hlo doubles x four times: y at iteration k is x0 * 2^(k+1);
    # the body's i counts 0..3, the condition's i 0..4 (five checks).
    m = hlorun.load(src("tests", "diverge", "loop_ok.hlo"))
    x0 = np.float32([1, 2, 3, 4])
    r, kept = m.run(x0, keep=["y", "body/i", "cond/i", "loop"])
    assert [v.tolist() for v in kept["y"]] == [(x0 * 2 ** (k + 1)).tolist() for k in range(4)]
    assert [int(v) for v in kept["body/i"]] == [0, 1, 2, 3]
    assert [int(v) for v in kept["cond/i"]] == [0, 1, 2, 3, 4]
    count, final = kept["loop"]                     # ENTRY's while: its one value, a tuple
    assert int(count) == 4 and final.tolist() == r.tolist() == (x0 * 16).tolist()


def test_unknown_and_ambiguous_names():
    m = hlorun.load(src("tests", "diverge", "loop_ok.hlo"))
    x0 = np.float32([1, 2, 3, 4])
    with pytest.raises(hlorun.Error, match=r"has no instruction 'yy' \(close: .*\by\b"):
        m.run(x0, keep=["yy"])
    with pytest.raises(hlorun.Error, match="has no instruction 'body/four'"):
        m.run(x0, keep=["body/four"])                # four is cond's
    with pytest.raises(hlorun.Error, match="'i' is an instruction of several computations: "
                                           "say which as 'body/i', 'cond/i'"):
        m.run(x0, keep=["i"])
    with pytest.raises(hlorun.Error, match="expected a list of instruction names, got str"):
        m.run(x0, keep="y")
    # Parameters, constants, tuples are steps too: their values.
    _, kept = m.run(x0, keep=["x0", "zero", "init", "cond/four"])
    assert kept["x0"].tolist() == x0.tolist() and int(kept["zero"]) == 0
    assert kept["init"][1].tolist() == x0.tolist()
    assert [int(v) for v in kept["cond/four"]] == [4] * 5


def test_dead_instruction_cannot_be_kept():
    m = hlorun.load("""HloModule dead
ENTRY main {
  x = f32[2] parameter(0)
  dead = f32[2] negate(x)
  ROOT r = f32[2] add(x, x)
}""")
    with pytest.raises(hlorun.Error, match="'dead' did not run .*the result does not need"):
        m.run(np.float32([1, 2]), keep=["dead"])


def test_keep_is_one_device_only():
    with pytest.raises(hlorun.Error, match="keep= needs a run on one device; this one has 2 devices"):
        hlorun.load(CHAIN).run(np.float32([1, 2, 3]), replicas=2, keep=["a"])


def test_an_error_in_the_run_still_raises():
    # The run fails (no handler); keep= changes nothing about that.
    m = hlorun.load(src("tests", "diverge", "ref_fails.hlo"))
    with pytest.raises(hlorun.Error, match="no_such_handler"):
        m.run(np.float32([1, 2, 3]), keep=["a"])
