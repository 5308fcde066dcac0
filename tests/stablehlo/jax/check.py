#!/usr/bin/env python3
"""The checks JAX's export_back_compat_test.py makes instead of comparing
outputs, for the modules whose outputs are not unique (run by run.sh).

    check.py KIND NAME GOT.npz EXPECTED.npz RTOL ATOL [INPUT.npz]

KIND is eig, eigh or schur (cases.txt's CHECK column); NAME's dtype suffix
(_f32, _f64, _c64, _c128) gives the operand's dtype. The operand is rebuilt
as the JAX test builds it (eig: arange(16).reshape(4, 4); eigh: an 8x8
arange made self-adjoint, (a + a^H) / 2) or read from INPUT (schur). Exit 0
when the results have the property, 1 (with what failed) otherwise.

- eig (test_cpu_eig_lapack_geev): every eigenvalue is within RTOL/ATOL of
  one recorded, and the other way round; A vr = vr diag(w) and
  A^H vl = vl diag(conj w), the residual norm under 100 (n + 1) eps |.|.
- eigh (check_eigh_results): ||I - V^H V|| <= RTOL,
  ||A V - V diag(w)|| <= RTOL ||A||, w close to the recorded eigenvalues.
- schur (test_cpu_schur_lapack_gees): A = S T S^H within RTOL/ATOL.
"""
import sys

import numpy as np

DTYPES = dict(f32=np.float32, f64=np.float64, c64=np.complex64, c128=np.complex128)


def leaves(path):
    with np.load(path) as z:
        return [z[f"arr_{i}"] for i in range(len(z.files))]


def close(want, got, rtol, atol):
    return bool(np.all(np.abs(got - want) <= atol + rtol * np.abs(want)))


def check_eig(dtype, got, want, rtol, atol):
    a = np.arange(16, dtype=dtype).reshape(4, 4)
    w, vl, vr = got
    eps = np.finfo(dtype).eps

    def small(x):  # the test's norm, adjusted for dimension and type
        return np.linalg.norm(x) / ((4 + 1) * eps) < 100

    errs = []
    for x in w:
        if not close(0.0, np.min(np.abs(want[0] - x)), rtol, atol):
            errs.append(f"eigenvalue {x} is not among the recorded ones")
    for x in want[0]:
        if not close(0.0, np.min(np.abs(w - x)), rtol, atol):
            errs.append(f"recorded eigenvalue {x} is missing")
    if not small(a @ vr - w[None, :] * vr):
        errs.append("A vr != vr diag(w)")
    if not small(np.conj(a.T) @ vl - np.conj(w)[None, :] * vl):
        errs.append("A^H vl != vl diag(conj w)")
    return errs


def check_eigh(dtype, got, want, rtol, atol):
    a = np.arange(64, dtype=dtype).reshape(8, 8)
    a = (a + np.conj(a.T)) / dtype(2)
    v, w = got
    errs = []
    if np.linalg.norm(np.eye(8) - np.conj(v.T) @ v) > rtol:
        errs.append("V is not unitary")
    if np.linalg.norm(a @ v - w[None, :].astype(v.dtype) * v) > rtol * np.linalg.norm(a):
        errs.append("A V != V diag(w)")
    if not close(want[1], w, rtol, atol):
        errs.append(f"eigenvalues {w} differ from the recorded {want[1]}")
    return errs


def check_schur(dtype, got, inputs, rtol, atol):
    t, s = got
    a = inputs[0]
    if not close(a, s @ t @ np.conj(s.T), rtol, atol):
        return ["A != S T S^H"]
    return []


def main():
    if len(sys.argv) not in (7, 8):
        raise SystemExit(__doc__)
    kind, name, got_p, want_p, rtol, atol = sys.argv[1:7]
    dtype = DTYPES[name.rsplit("_", 1)[1]]
    got, want = leaves(got_p), leaves(want_p)
    rtol, atol = float(rtol), float(atol)
    if kind == "eig":
        errs = check_eig(dtype, got, want, rtol, atol)
    elif kind == "eigh":
        errs = check_eigh(dtype, got, want, rtol, atol)
    elif kind == "schur":
        errs = check_schur(dtype, got, leaves(sys.argv[7]), rtol, atol)
    else:
        raise SystemExit(f"check.py: unknown check {kind}")
    for e in errs:
        print(f"{name}: {e}")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
