"""The package and the command give the same bytes: every sample module and
suite module run on the same pseudo-random inputs (--random=3 / random=3),
the command writing .npy/.npz, compared leaf by leaf."""
import glob
import os
import subprocess

import numpy as np
import pytest

import hlorun
from conftest import HLORUN, plugin_lib, src

# Custom-call bindings the FFI samples need (as tests/ffi-samples.sh binds them).
BINDINGS = {
    "ffi_affine": ("affine", "affine", "sample_affine"),
    "ffi_affine_quoted": ("affine", "affine", "sample_affine"),
    "ffi_window_sum": ("window_sum", "window_sum", "sample_window_sum"),
    "ffi_repeat_v3": ("repeat", "repeat_v3", "sample_repeat_v3"),
}
MODULES = sorted(glob.glob(src("samples", "*.hlo")) + glob.glob(src("samples", "suite", "*",
                                                                   "module.hlo")))


def leaves(value):
    if isinstance(value, tuple):
        for v in value:
            yield from leaves(v)
    elif value is not None:
        yield value


@pytest.mark.parametrize("path", MODULES, ids=[os.path.relpath(p, src()) for p in MODULES])
def test_same_bytes_as_the_command(path, tmp_path):
    name = os.path.splitext(os.path.basename(path))[0]
    args = []
    if name in BINDINGS:
        target, libname, symbol = BINDINGS[name]
        lib = plugin_lib(libname)
        hlorun.bind(target, lib, symbol=symbol)
        args = ["--custom-call", f"{target}={lib}:{symbol}"]
    elif name == "ffi_counter":
        lib = plugin_lib("counter_plugin")
        hlorun.plugin(lib)
        args = ["--plugin", lib]
    got = hlorun.load(path).run(random=3)
    out = tmp_path / ("out.npz" if isinstance(got, tuple) else "out.npy")
    cli = subprocess.run([HLORUN, *args, "--random=3", "-o", str(out), path],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    if out.suffix == ".npz":
        with np.load(out) as z:
            want = [z[f"arr_{k}"] for k in range(len(z.files))]
    else:
        want = [np.load(out)]
    got = list(leaves(got))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype.itemsize == w.dtype.itemsize
        assert g.tobytes() == w.tobytes()
