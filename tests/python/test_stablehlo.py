"""hlorun.load() on MLIR text (StableHLO as jax.jit(f).lower(x).as_text()
prints it): JAX's exported CPU modules of tests/stablehlo/jax run from their
text and give JAX's recorded outputs."""
import os

import numpy as np
import pytest

import hlorun
from conftest import src

JAX = src("tests", "stablehlo", "jax")


def jax_case(name):
    with open(os.path.join(JAX, name + ".mlir"), encoding="utf-8") as f:
        text = f.read()
    args = []
    inp = os.path.join(JAX, name + ".in.npz")
    if os.path.exists(inp):
        with np.load(inp) as z:
            args = [z[f"arr_{i}"] for i in range(len(z.files))]
    exp = os.path.join(JAX, name + ".expected.npz")
    if os.path.exists(exp):
        with np.load(exp) as z:
            want = [z[f"arr_{i}"] for i in range(len(z.files))]
    else:
        want = [np.load(os.path.join(JAX, name + ".expected.npy"))]
    return text, args, want


def test_jax_cholesky_from_text():
    # lax.linalg.cholesky of a 4x4 f64 Hermitian matrix (the input is recorded)
    text, args, want = jax_case("cholesky_lapack_potrf_f64")
    m = hlorun.load(text)
    got = m.run(*args)
    assert got.dtype == np.float64 and got.shape == want[0].shape
    np.testing.assert_allclose(got, want[0], rtol=1e-5, atol=1e-12)  # JAX's f64 tolerance


def test_jax_lu_from_text_tuple_result():
    # lax.linalg.lu of iota(9).reshape(3,3) in c128: LU, pivots, permutation
    text, args, want = jax_case("lu_lapack_getrf_c128")
    assert not args
    lu, pivots, perm = hlorun.load(text, name="lu.mlir").run()
    assert lu.dtype == np.complex128 and pivots.dtype == np.int32
    np.testing.assert_allclose(lu, want[0], rtol=1e-5, atol=1e-12)
    assert pivots.tolist() == [2, 2, 2] and perm.tolist() == [2, 0, 1]
    assert pivots.tolist() == want[1].tolist() and perm.tolist() == want[2].tolist()


NEGATE = """module {
  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.negate %a : tensor<2xf32>
    func.return %0 : tensor<2xf32>
  }
}
"""


def test_one_line_mlir_is_text_and_module_named_file_is_a_path(tmp_path, monkeypatch):
    # A one-line "module {...}" is MLIR text, not a file name (an identity)
    one = "module { func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> { func.return %a : tensor<2xi32> } }"
    assert hlorun.load(one).run(np.int32([7, -3])).tolist() == [7, -3]
    # negate of f32[2], by hand: -(1.5, -2) = (-1.5, 2)
    assert hlorun.load(NEGATE).run(np.float32([1.5, -2])).tolist() == [-1.5, 2.0]
    # relative paths that begin like MLIR text are still paths
    monkeypatch.chdir(tmp_path)
    (tmp_path / "module.mlir").write_text(NEGATE)
    (tmp_path / "modules").write_text(NEGATE)
    assert hlorun.load("module.mlir").run(np.float32([3, 0.25])).tolist() == [-3.0, -0.25]
    assert hlorun.load("modules").run(np.float32([1, 2])).tolist() == [-1.0, -2.0]


def test_mlir_text_error_is_positioned():
    with pytest.raises(hlorun.Error) as e:
        hlorun.load("module {\n func.func @main() -> tensor<?xf32> {\n }\n}\n", name="dyn.mlir")
    assert "dyn.mlir:2:" in str(e.value)


def test_shard_map_on_mesh_gives_numpy_mlp():
    # samples/spmd/mlp_shmap.mlir: the MLP as a Shardy manual computation
    # on a 2 x 4 mesh (8 devices, each with 4 rows and 8 hidden units, the
    # partial products summed over the model axis). From Python it runs on
    # its devices and returns the global value numpy computes directly.
    with open(src("samples", "spmd", "mlp_shmap.mlir"), encoding="utf-8") as f:
        m = hlorun.load(f.read())
    rng = np.random.default_rng(3)
    x, w1, b1, w2 = (rng.standard_normal(s).astype(np.float32)
                     for s in [(8, 16), (16, 32), (32,), (32, 16)])
    got = np.asarray(m.run(x, w1, b1, w2))
    want = np.maximum(x @ w1 + b1, 0) @ w2
    assert got.shape == (8, 16)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
