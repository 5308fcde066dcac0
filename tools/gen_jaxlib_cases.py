#!/usr/bin/python3
"""Generate tests/jaxlib/cases/: jaxlib's CPU kernels that are not LAPACK
(tridiagonal_solve_perturbed_ffi, cpu_csr_sparse_dense_ffi), each case a
suite directory (module.hlo, in*.txt, expected.txt, tolerance) with the
custom call as a JAX CPU dump prints it (typed FFI, column-major matrix
layouts for the tridiagonal solve as jax/_src/lax/linalg.py lowers it).

Expected values, never hlorun's output:
  td_*_solve_*    numpy.linalg.solve of the dense tridiagonal matrix (f64 or
                  c128), rounded once; JAX's own test (tests/linalg_test.py,
                  test_tridiagonal_solve) draws d = 1 + positive values so the
                  systems are well conditioned;
  td_pivoting*    JAX's test_tridiagonal_solve_requiring_pivoting(_last_rows)
                  expected values;
  td_singular_2x2 and td_zero_3x3: worked out by hand from jaxlib's
                  algorithm (tests/jaxlib/README), JAX's
                  test_tridiagonal_solve_2x2_singular and _zero_matrix
                  inputs (which assert only finite and |x| > 1e6);
  td_endpoints    dl[0] and du[n-1] are not read: numpy's solve without them;
  csr_*           numpy's dense product of the CSR matrix (small integers, so
                  exact in every type).
Run: /usr/bin/python3 tools/gen_jaxlib_cases.py (needs python3-numpy; the
files are committed, so make check needs no numpy).
"""
import os
import shutil

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "jaxlib", "cases")
rng = np.random.default_rng(32)
HLO = {np.float32: "f32", np.float64: "f64", np.complex64: "c64", np.complex128: "c128",
       np.int32: "s32", np.int64: "s64"}
TOL = {"f32": "rtol=2e-5 atol=2e-5", "f64": "rtol=1e-12 atol=1e-12",
       "c64": "rtol=2e-5 atol=2e-5", "c128": "rtol=1e-12 atol=1e-12"}


def body(x, t):
    if x.ndim == 0:
        v = x.item()
        if t in ("c64", "c128"):
            return "(%r, %r)" % (float(v.real), float(v.imag))
        if t[0] == "s":
            return str(int(v))
        return repr(float(v))
    return "{" + ", ".join(body(e, t) for e in x) + "}"


def literal(x):
    t = HLO[x.dtype.type]
    return "%s[%s] %s" % (t, ",".join(map(str, x.shape)), body(x, t))


def shape(x, colmajor=False):
    t = HLO[x.dtype.type]
    r = x.ndim
    lay = list(range(r - 1, -1, -1))
    if colmajor and r >= 2:
        lay = [r - 2, r - 1] + list(range(r - 3, -1, -1))
    return "%s[%s]{%s}" % (t, ",".join(map(str, x.shape)), ",".join(map(str, lay)))


def write(name, module, ins, expected, tol):
    d = os.path.join(ROOT, name)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "module.hlo"), "w").write(module)
    for i, x in enumerate(ins):
        open(os.path.join(d, "in%d.txt" % i), "w").write(literal(x) + "\n")
    open(os.path.join(d, "expected.txt"), "w").write(literal(expected) + "\n")
    open(os.path.join(d, "tolerance"), "w").write(tol + "\n")


def td_module(name, dl, d, du, b):
    ps = "\n".join("  %%p%d = %s parameter(%d)" % (i, shape(x, i == 3), i)
                   for i, x in enumerate((dl, d, du, b)))
    return ("HloModule %s\n\nENTRY %%main {\n%s\n  ROOT %%x = %s custom-call(%%p0, %%p1, %%p2, %%p3), "
            "custom_call_target=\"tridiagonal_solve_perturbed_ffi\", operand_layout_constraints={%s}, "
            "api_version=API_VERSION_TYPED_FFI, backend_config={}\n}\n"
            % (name, ps, shape(b, True), ", ".join(shape(x, i == 3) for i, x in
                                                    enumerate((dl, d, du, b)))))


def dense(dl, d, du):
    n = d.shape[-1]
    a = np.zeros(d.shape + (n,), np.complex128 if np.iscomplexobj(d) else np.float64)
    for i in range(n):
        a[..., i, i] = d[..., i]
        if i > 0:
            a[..., i, i - 1] = dl[..., i]
        if i < n - 1:
            a[..., i, i + 1] = du[..., i]
    return a


def draw(shape_, dt, positive=False):
    x = rng.uniform(0.1 if positive else -1, 1, size=shape_)
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.uniform(-1, 1, size=shape_)
    return x.astype(dt)


def td_case(name, dt, shape_, k):
    d = (1 + draw(shape_, dt, positive=True)).astype(dt)
    dl, du = draw(shape_, dt), draw(shape_, dt)
    b = draw(shape_ + (k,), dt)
    x = np.linalg.solve(dense(dl, d, du), b.astype(np.complex128 if np.iscomplexobj(b) else np.float64))
    write(name, td_module(name, dl, d, du, b), [dl, d, du, b], x.astype(dt), TOL[HLO[np.dtype(dt).type]])


def td_exact(name, dl, d, du, b, x, tol="rtol=0 atol=0"):
    f = np.float32
    dl, d, du, b, x = (np.array(v, f) for v in (dl, d, du, b, x))
    write(name, td_module(name, dl, d, du, b), [dl, d, du, b], x, tol)


def csr_module(name, data, indptr, indices, rhs, out_shape):
    ps = "\n".join("  %%p%d = %s parameter(%d)" % (i, shape(x), i)
                   for i, x in enumerate((data, indptr, indices, rhs)))
    out = np.zeros(out_shape, data.dtype)
    return ("HloModule %s\n\nENTRY %%main {\n%s\n  ROOT %%y = %s custom-call(%%p0, %%p1, %%p2, %%p3), "
            "custom_call_target=\"cpu_csr_sparse_dense_ffi\", api_version=API_VERSION_TYPED_FFI, "
            "backend_config={}\n}\n" % (name, ps, shape(out)))


def csr_case(name, dt, it, rows, cols, n, density=0.4, dup=False):
    a = np.where(rng.uniform(size=(rows, cols)) < density, rng.integers(-4, 5, size=(rows, cols)), 0)
    a[rows // 2] = 0   # an empty row
    indptr, indices, data = [0], [], []
    for r in range(rows):
        for c in range(cols):
            if a[r, c]:
                indices.append(c)
                data.append(a[r, c])
        if dup and r == 0:   # a column stored twice: the entries add up
            indices += [0, 0]
            data += [2, -5]
            a[0, 0] += -3
        indptr.append(len(indices))
    rhs_shape = (cols, n) if n else (cols,)
    rhs = rng.integers(-3, 4, size=rhs_shape)
    if np.dtype(dt).kind == "c":
        data = np.array(data) * (1 - 2j)
        a = a * (1 - 2j)
        rhs = rhs + 1j * rng.integers(-3, 4, size=rhs_shape)
    data, rhs = np.array(data, dt), np.array(rhs, dt)
    indptr, indices = np.array(indptr, it), np.array(indices, it)
    y = (a @ rhs).astype(dt)
    write(name, csr_module(name, data, indptr, indices, rhs, y.shape), [data, indptr, indices, rhs],
          y, "rtol=0 atol=0")


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    td_case("td_f32_solve_3x1", np.float32, (3,), 1)
    td_case("td_f64_solve_batch_4x2", np.float64, (2, 4), 2)
    td_case("td_c64_solve_5x2", np.complex64, (5,), 2)
    td_case("td_c128_solve_batch_3x4x1", np.complex128, (2, 3, 4), 1)
    td_case("td_f64_solve_1x3", np.float64, (1,), 3)
    # JAX's tests/linalg_test.py inputs and expected values.
    td_exact("td_pivoting", [0, 2, -2, 3], [1, 4, 1, -1], [2, -1, 1, 0], [[1], [2], [3], [4]],
             [[8], [-3.5], [0], [-4]], "rtol=1e-6 atol=1e-6")
    td_exact("td_pivoting_last_rows", [0, 1, -6, 1], [1, -1, 2, 1], [2, 1, -1, 0],
             [[1], [2], [-1], [-2]], [[5], [-2], [-5], [3]], "rtol=1e-6 atol=1e-6")
    td_exact("td_singular_2x2", [0, 1], [1, 3], [3, 0], [[1], [4]], [[-25165824], [8388608]])
    td_exact("td_zero_3x3", [0, 0, 0], [0, 0, 0], [0, 0, 0], [[1], [1], [1]], [[2.0 ** 126]] * 3)
    # dl[0] and du[n-1] are never read.
    size = 10
    dl, d, du = (np.linspace(lo, hi, size, dtype=np.float32) for lo, hi in ((-1, 1), (1, 2), (1, -1)))
    b = np.linspace(0.1, -0.1, size, dtype=np.float32)[:, None]
    x = np.linalg.solve(dense(dl, d, du), b.astype(np.float64))
    td_exact("td_endpoints", dl, d, du, b, x, "rtol=1e-5 atol=1e-6")
    csr_case("csr_f32_matrix_s32", np.float32, np.int32, 5, 4, 3)
    csr_case("csr_f64_vector_s64", np.float64, np.int64, 4, 6, 0)
    csr_case("csr_c64_matrix_s32", np.complex64, np.int32, 3, 3, 2)
    csr_case("csr_c128_vector_s32", np.complex128, np.int32, 4, 5, 0)
    csr_case("csr_s32_matrix_dup_s32", np.int32, np.int32, 4, 4, 2, dup=True)
    csr_case("csr_s64_matrix_s64", np.int64, np.int64, 6, 3, 4)


if __name__ == "__main__":
    main()
