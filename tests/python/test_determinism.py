"""hlorun.check_determinism (hlorun --determinism N from Python): a
deterministic module, a handler whose result depends on how often it was
called (the racy handler the command's tests plant, written in Python),
and the bad input. Answers worked out by hand in the comments."""
import re

import numpy as np
import pytest

import hlorun
from conftest import src

# tests/diverge/loop_cc.hlo: x <- MoveToHost(scale(x)) four times; its
# calls made typed FFI calls of a target of this file's own.
with open(src("tests", "diverge", "loop_cc.hlo"), encoding="utf-8") as _f:
    LOOP_CC = re.sub(r'custom_call_target="(\w+)"',
                     r'custom_call_target="\1", api_version=API_VERSION_TYPED_FFI',
                     _f.read()).replace('"scale"', '"py_det_scale"')


def line_of(text, start):
    return next(k for k, l in enumerate(text.splitlines(), 1) if l.strip().startswith(start))


_calls = [0]


def scale(x, out):
    """2x; with _calls[0] >= 0 counting calls: plus 1 from the fifth call on."""
    extra = 0
    if _calls[0] >= 0:
        extra = 1 if _calls[0] >= 4 else 0
        _calls[0] += 1
    out[...] = 2 * x + extra


hlorun.bind("py_det_scale", scale)


def test_thread_counts_all_differ():
    # 1, the cores, then 2, 3, ... skipping the cores' count (up to 63
    # cores, 64 runs reach past it).
    t = hlorun._determinism.thread_counts(64)
    import os
    assert t[0] == 1 and t[1] == max(os.cpu_count() or 2, 2) and len(set(t)) == 64


def test_deterministic_module():
    _calls[0] = -1                   # stateless: 2x on every call
    m = hlorun.load(LOOP_CC)
    r = hlorun.check_determinism(m, np.float32([1, 2, 3, 4]), runs=3)
    # 4 iterations x (h, y, next) + 5 condition checks + the while = 18
    # steps per run (as tests/diverge/run.sh's det-stable counts them).
    assert r.agreed and bool(r) and r.steps == 18 and r.runs == 3
    assert r.instruction is None and r.cause is None
    assert r.threads[0] == 1 and len(set(r.threads)) == 3
    assert str(r) == "deterministic: 3 runs agree"


def test_handler_with_state_is_named():
    # Run 0 makes calls 0..3 (x[0] = 1, 2, 4, 8: 2x each); run 1's first
    # call is the fifth: 2x + 1 for the same operand bits, at h (line 11),
    # iteration 0.
    _calls[0] = 0
    m = hlorun.load(LOOP_CC)
    r = hlorun.check_determinism(m, np.float32([1, 2, 3, 4]), runs=2)
    assert not r.agreed and not r
    assert (r.instruction, r.opcode, r.computation) == ("h", "custom-call", "body")
    assert r.line == line_of(LOOP_CC, "h =") and r.iteration == 0 and r.call is None
    assert (r.run, r.run_threads, r.cause) == (1, r.threads[1], "result_differs")
    assert str(r).startswith(f"first nondeterministic: h (custom-call, line {r.line}, "
                             "iteration 0): result differs between run 0 (1 thread) and run 1")


def test_kernels_agree_under_every_thread_count():
    # A larger reduction and dot: kernels give the same bits whatever the
    # thread count (spec/cli.md).
    m = hlorun.load("""HloModule k
add { a = f32[] parameter(0)
      b = f32[] parameter(1)
      ROOT s = f32[] add(a, b) }
ENTRY main {
  x = f32[64,64] parameter(0)
  d = f32[64,64] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  ROOT r = f32[64] reduce(d, z), dimensions={1}, to_apply=add
}
""")
    x = np.random.default_rng(7).standard_normal((64, 64)).astype(np.float32)
    r = hlorun.check_determinism(m, x, runs=4)
    assert r.agreed and r.steps == 2 and len(r.threads) == 4    # d and r


@pytest.mark.parametrize("runs", [1, 65, True, 2.5])
def test_bad_run_counts(runs):
    m = hlorun.load(LOOP_CC)
    with pytest.raises(hlorun.Error, match="a run count from 2 to 64"):
        hlorun.check_determinism(m, np.float32([1, 2, 3, 4]), runs=runs)


def test_bad_input_count_and_failing_run():
    m = hlorun.load(LOOP_CC)
    with pytest.raises(hlorun.Error, match="takes 1 parameter, but 0 inputs were given"):
        hlorun.check_determinism(m)
    with pytest.raises(hlorun.Error, match="must be an hlorun.Module"):
        hlorun.check_determinism("x.hlo")
    bad = hlorun.load("""HloModule bad
ENTRY main {
  x = f32[2] parameter(0)
  ROOT c = f32[2] custom-call(x), custom_call_target="py_det_nothing"
}
""")
    with pytest.raises(hlorun.Error, match=r"run 0 \(1 thread\) failed:(.|\n)*py_det_nothing"):
        hlorun.check_determinism(bad, np.float32([1, 2]))
