"""hlorun.testing: golden-suite directories as parametrized pytest tests.
samples/suite's goldens were worked out by hand or with Python's math module
(samples/suite/README.md); tests/suite-broken holds a case that must fail."""
import os

import pytest

import hlorun.testing
from conftest import src

SUITE = src("samples", "suite")


@hlorun.testing.golden_cases(SUITE)
def test_sample_suite(case):
    case.check()


def test_the_suite_has_its_five_cases():
    ids = [c.id for c in hlorun.testing.find_cases(SUITE)]
    assert ids == ["clamp_s32", "predict", "softplus_npy", "topk_custom_call", "while_tuple"]


def test_case_layout_is_read_like_the_command():
    by_id = {c.id: c for c in hlorun.testing.find_cases(SUITE)}
    soft = by_id["softplus_npy"]
    assert (soft.rtol, soft.atol) == (1e-6, 1e-6)          # its tolerance file
    assert by_id["clamp_s32"].rtol == 0.0                  # case.json "compare": "eq"
    assert os.path.basename(by_id["while_tuple"].expected) == "expected.npz"


def test_a_broken_case_fails_with_the_mismatch_report():
    case = hlorun.testing.Case(src("tests", "suite-broken", "off_by_one"))
    with pytest.raises(AssertionError, match="mismatch: .* elements differ"):
        case.check()


def test_unbound_custom_call_case_fails_with_the_commands_error():
    case = hlorun.testing.Case(src("tests", "suite-broken", "unbound_target"))
    with pytest.raises(hlorun.Error, match="has no handler"):
        case.check()
