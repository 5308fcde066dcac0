"""Module.extract and hlorun.reduce with a Python predicate (interp/reduce.c),
checked against values numpy works out independently."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import hlorun
from conftest import src


def instrs(m):
    return [l for l in m.text().splitlines() if re.match(r"\s+(ROOT )?%\S+ = ", l)]


def test_extract_cuts_at_depth():
    m = hlorun.load(src("tests", "repro", "twice.hlo"))
    sub = m.extract("d", 1)
    assert sub.cut == ["a"]          # b and c kept, exp(p) read three times: one input
    a = np.exp(np.float32([0.5, -1, 2]))
    np.testing.assert_allclose(sub.run(a), 3 * a + 2 * a, rtol=1e-6)
    assert "exponential" not in sub.text()
    assert m.extract("d", 0).cut == ["b", "c"]


def test_extract_bad_input():
    m = hlorun.load(src("tests", "repro", "twice.hlo"))
    with pytest.raises(hlorun.Error, match="has no instruction 'zz'"):
        m.extract("zz")
    with pytest.raises(hlorun.Error, match="depth -1 is not an integer >= 0"):
        m.extract("d", -1)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    d = tmp_path_factory.mktemp("planted")
    subprocess.run([sys.executable, src("tests", "repro", "gen_nan_module.py"),
                    str(d / "nan.hlo"), str(d)], check=True)
    return hlorun.load(str(d / "nan.hlo")), np.load(d / "x.npy"), np.load(d / "u3.npy")


def test_reduce_planted_nan_with_a_python_predicate(planted):
    m, x, u3 = planted
    seen = []

    def still_nan(cand, inputs):
        seen.append(len(instrs(cand)))
        y = cand.run(*inputs)
        return bool(np.isnan(np.asarray(y)).any()) and " log(" in cand.text()

    small, inputs = hlorun.reduce(m, [x], still_nan, focus="nan")
    assert len(instrs(small)) <= 12, small.text()
    lg = [l for l in instrs(small) if " log(" in l]
    assert len(lg) == 1, small.text()
    # The log's operand has 8 elements (at most 16): a constant, no input.
    assert inputs == []
    op = re.search(r"log\(%(\S+)\)", lg[0]).group(1)
    lit = [re.search(r"constant\(\{(.*)\}\)", l).group(1) for l in instrs(small)
           if re.match(r"\s+%" + re.escape(op) + " = f32\\[8\\]\\S* constant", l)]
    assert len(lit) == 1, small.text()
    np.testing.assert_allclose(np.float32(lit[0].split(", ")), u3, rtol=1e-6)
    before, after, tried = small.reduced_from
    assert before == 207 and after == len(instrs(small)) and tried == len(seen)
    assert seen[0] == 207                 # the original comes first
    # Deterministic: the same answer again.
    small2, inputs2 = hlorun.reduce(m, [x], still_nan, focus="nan")
    assert small2.text() == small.text() and inputs2 == []


def test_reduce_nothing_to_reduce(planted):
    m, x, _ = planted
    with pytest.raises(hlorun.Error, match="does not hold on .*nothing to reduce"):
        hlorun.reduce(m, [x], lambda cand, inputs: False)


def test_reduce_predicate_error_propagates(planted):
    m, x, _ = planted

    def boom(cand, inputs):
        raise KeyError("from the predicate")

    with pytest.raises(KeyError, match="from the predicate"):
        hlorun.reduce(m, [x], boom)


def test_reduce_bad_focus(planted):
    m, x, _ = planted
    with pytest.raises(hlorun.Error, match="focus 'nowhere'"):
        hlorun.reduce(m, [x], lambda c, i: True, focus="nowhere")


def test_reduce_never_returns_a_case_that_does_not_reproduce(planted):
    m, x, _ = planted
    calls = []

    def flaky(cand, inputs):    # holds on the original (twice) and one candidate only
        calls.append(1)
        return len(calls) <= 3

    with pytest.raises(hlorun.Error, match="does not reproduce the condition when run again"):
        hlorun.reduce(m, [x], flaky, focus="nan")


def test_reduce_not_reproducible_original(planted):
    m, x, _ = planted
    calls = []

    def once(cand, inputs):
        calls.append(1)
        return len(calls) == 1

    with pytest.raises(hlorun.Error, match="not reproducible"):
        hlorun.reduce(m, [x], once)
