"""Custom calls from Python: callables as typed FFI handlers, libraries
bound by path, plugins; a handler that raises fails the run with its
message."""
import numpy as np
import pytest

import hlorun
from conftest import plugin_lib, src

ONE = """HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(x), custom_call_target="%s", api_version=API_VERSION_TYPED_FFI
}"""
TWO_IN_TWO_OUT = """HloModule m
ENTRY e {
  a = s32[2,2] parameter(0)
  b = s32[2] parameter(1)
  ROOT c = (s32[2,2], s32[]) custom-call(a, b), custom_call_target="py_rowsum",
      api_version=API_VERSION_TYPED_FFI
}"""


def test_callable_fills_its_result_in_place():
    seen = []

    def double(x, out):
        seen.append((x.dtype, x.shape, x.flags.writeable, out.flags.writeable))
        out[...] = 2 * x

    hlorun.bind("py_double", double)
    y = hlorun.load(ONE % "py_double").run(np.float32([1, -2, 3.5, 0]))
    assert y.tolist() == [2, -4, 7, 0]
    assert seen == [(np.float32, (4,), False, True)]


def test_callable_may_return_its_results():
    # two operands and a tuple result: a + b broadcast along rows, and sum(b)
    hlorun.bind("py_rowsum", lambda a, b, out0, out1: (a + b[None, :], b.sum()))
    c, s = hlorun.load(TWO_IN_TWO_OUT).run(np.int32([[1, 2], [3, 4]]), np.int32([10, 20]))
    assert c.tolist() == [[11, 22], [13, 24]] and int(s) == 30


def test_handler_that_raises_fails_the_run_with_its_message():
    def broken(x, out):
        raise ValueError("the handler is broken")

    hlorun.bind("py_broken", broken)
    m = hlorun.load(ONE % "py_broken", name="broken.hlo")
    with pytest.raises(hlorun.Error) as e:
        m.run(np.float32([1, 2, 3, 4]))
    msg = str(e.value)
    assert msg.startswith("broken.hlo:4:")
    assert "in c (custom-call)" in msg
    assert "raised ValueError: the handler is broken" in msg
    assert e.value.status == "runtime error"


def test_returned_value_of_the_wrong_shape_fails_the_run():
    hlorun.bind("py_wrong", lambda x, out: np.zeros(5, np.float32))
    with pytest.raises(hlorun.Error, match=r"returned shape \(5,\), the custom call's result "
                                           r"has shape \(4,\)"):
        hlorun.load(ONE % "py_wrong").run(np.float32([1, 2, 3, 4]))


def test_writing_to_an_operand_fails_instead_of_corrupting_it():
    def scribble(x, out):
        x[0] = 99

    hlorun.bind("py_scribble", scribble)
    with pytest.raises(hlorun.Error, match="read-only"):
        hlorun.load(ONE % "py_scribble").run(np.float32([1, 2, 3, 4]))


def test_a_later_binding_replaces_an_earlier_one_and_explain_names_it():
    hlorun.bind("py_swap", lambda x, out: x + 1)
    m = hlorun.load(ONE % "py_swap")
    assert m.run(np.float32([0, 0, 0, 0])).tolist() == [1, 1, 1, 1]

    def minus(x, out):
        out[...] = x - 1

    hlorun.bind("py_swap", minus)
    assert m.run(np.float32([0, 0, 0, 0])).tolist() == [-1, -1, -1, -1]
    assert "binding: python: test_handlers.test_a_later_binding_replaces_an_earlier_one_and_" \
           "explain_names_it.<locals>.minus" in m.explain_custom_calls()


def test_library_binding_gives_the_samples_result():
    # samples/ffi_affine.expected: scale 2, bias [0.5, -1], negate, clamp at 6
    hlorun.bind("affine", plugin_lib("affine"), symbol="sample_affine")
    y = hlorun.load(src("samples", "ffi_affine.hlo")).run()
    assert y.tolist() == [-2.5, -3, -6, -6]


def test_plugin_registers_its_targets():
    hlorun.plugin(plugin_lib("counter_plugin"))
    m = hlorun.load(src("samples", "ffi_counter.hlo"))
    # samples/ffi_counter.expected: x + 10, then + 0.5
    assert m.run().tolist() == [11.5, 12.5, 13.5]
    assert "plugin" in m.explain_custom_calls()


def test_bad_bindings_are_errors():
    with pytest.raises(hlorun.Error, match="cannot load /nonexistent/libx.so"):
        hlorun.bind("t_missing", "/nonexistent/libx.so")
    # not recorded: later runs (in any context) do not trip over it
    hlorun.bind("py_after", lambda x, out: x)
    assert hlorun.load(ONE % "py_after").run(np.float32([1, 2, 3, 4]), threads=3).tolist() \
        == [1, 2, 3, 4]
    with pytest.raises(hlorun.Error, match="the handler must be a library path or a callable"):
        hlorun.bind("t", 42)
    with pytest.raises(hlorun.Error, match="symbol= goes with a library"):
        hlorun.bind("t", print, symbol="x")
