"""JAX's host callbacks (targets/callback.c) from Python: a debug print
writes its operands to sys.stderr; a pure_callback, whose Python function
is not in the dump, fails naming how to bind it, and runs once a Python
function is bound to its target (tokens arrive as None)."""
import numpy as np
import pytest

import hlorun

PRINT = """HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  t0 = token[] after-all()
  t1 = (token[]) custom-call(t0, x), custom_call_target="xla_ffi_python_cpu_callback",
      api_version=API_VERSION_TYPED_FFI, custom_call_has_side_effect=true, backend_config={index = 0 : ui64}
  ROOT y = f32[2] negate(x)
}"""

PURE = """HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  ROOT y = f32[3] custom-call(x), custom_call_target="xla_ffi_python_cpu_callback",
      api_version=API_VERSION_TYPED_FFI, backend_config={index = 1 : ui64}
}"""


def test_debug_print_goes_to_stderr(capsys):
    y = hlorun.load(PRINT).run(np.float32([1.5, -2]))
    assert y.tolist() == [-1.5, 2]
    err = capsys.readouterr().err
    assert "xla_ffi_python_cpu_callback: host callback 0 (jax.debug.print" in err
    assert "  operand 0: token\n" in err
    assert "  operand 1: f32[2] {1.5, -2}\n" in err


def test_pure_callback_needs_a_binding_then_runs_it():
    with pytest.raises(hlorun.Error, match=r'hlorun\.bind\("xla_ffi_python_cpu_callback", fn\)'):
        hlorun.load(PURE).run(np.float32([1, 2, 3]))
    # (the binding stays for the rest of the session: this test runs last here)
    hlorun.bind("xla_ffi_python_cpu_callback", lambda x, out: x * x)
    y = hlorun.load(PURE).run(np.float32([1, 2, 3]))
    assert y.tolist() == [1, 4, 9]
