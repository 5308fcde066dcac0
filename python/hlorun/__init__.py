"""hlorun: run XLA HLO modules from Python, on top of libhlorun.

    import hlorun
    m = hlorun.load("model.hlo")            # a path, or HLO text
    y = m.run(x, w)                          # numpy arrays in, numpy arrays out
    assert hlorun.compare(y, golden, rtol=1e-5)

Custom calls: hlorun.bind("target", "./libf.so", symbol=None),
hlorun.plugin("./libp.so"), or hlorun.bind("target", fn) with a Python
callable fn(*operands, *results) on numpy views. Errors raise hlorun.Error
with the messages of the hlorun command. hlorun.testing turns golden-suite
directories into pytest tests.

Where a run goes wrong: hlorun.compare_runs(module, reference, *inputs)
names the first instruction whose value differs from the reference's
(reference=None, reference_precision="f64": the module carried in f64);
m.run(*inputs, keep=["name"]) returns (result, {name: value}) as well.
hlorun.check_determinism(module, *inputs, runs=3) runs it under different
thread counts and names the first instruction whose bits differ.

Element types: see hlorun._dtypes (bf16 and the 8-bit floats are ml_dtypes
arrays when ml_dtypes is installed, raw uint16/uint8 bits otherwise).
"""
from ._compare import Comparison, assert_matches, compare
from ._determinism import Determinism, check_determinism
from ._diverge import Divergence, compare_runs
from ._errors import Error
from ._lib import ffi as _ffi, lib as _lib
from ._module import Module, bind, load, plugin, reduce

__all__ = ["Error", "Module", "load", "bind", "plugin", "compare", "assert_matches",
           "Comparison", "version", "reduce", "compare_runs", "Divergence",
           "check_determinism", "Determinism"]


def version():
    """The library's version ("0.1.0")."""
    return _ffi.string(_lib.hlo_version()).decode()
