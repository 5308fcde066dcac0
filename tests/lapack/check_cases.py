#!/usr/bin/python3
"""Run every case of tests/lapack/cases/ (tools/gen_lapack_cases.py) with
hlorun and check the outputs: against JAX's recorded outputs where the
result is unique ("close": jaxlib's tolerances), and by the defining
property where it is not (P·A = L·U, Q·R = A, A·V = V·Λ, U·S·Vᴴ = A,
A = Z·T·Zᴴ, ...), with numpy written from the definitions, never from
hlorun. Members a case marks as failing must come out as NaN with the
info value LAPACK defines.

    check_cases.py HLORUN CASES_DIR [CASE...]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


class Fail(Exception):
    pass


def need(cond, what):
    if not cond:
        raise Fail(what)


def ct(x):
    return np.conj(np.swapaxes(x, -1, -2))


def small(resid, scale, tol, what):
    """max |resid| <= tol * max(1, max |scale|) * size."""
    r = np.max(np.abs(resid)) if np.size(resid) else 0.0
    bound = tol * max(1.0, float(np.max(np.abs(scale)))) * max(np.shape(scale)[-1:] or [1])
    need(np.isfinite(r) and r <= bound, "%s: residual %.3g > %.3g" % (what, r, bound))


def unitary(q, tol, what):
    k = q.shape[-1]
    small(ct(q) @ q - np.eye(k), np.eye(k), tol, what + " not orthonormal")


def members(x, nb):
    """Iterate over the batch members (nb leading dims)."""
    return x.reshape((-1,) + x.shape[nb:]) if nb else x[None]


def info_rule(case, info, nbatch_members):
    """Which members must fail, and with what info."""
    pos = set(case.get("info_positive", []))
    neg = set(case.get("info_negative", []))
    flat = np.atleast_1d(info).reshape(-1)
    need(flat.size == nbatch_members, "info has %d members, want %d" % (flat.size, nbatch_members))
    for i, v in enumerate(flat):
        if i in pos:
            need(v > 0, "member %d: info %d, want > 0" % (i, v))
        elif i in neg:
            need(v == case.get("info_value", v) and v < 0,
                 "member %d: info %d, want %s" % (i, v, case.get("info_value")))
        else:
            need(v == 0, "member %d: info %d, want 0" % (i, v))
    return pos | neg


def all_nan(x, what):
    need(np.all(np.isnan(x)), what + ": a failed member must be all NaN")


def householder_q(a, tau, m):
    """Q = H(1)...H(k), H(i) = I - tau_i v_i v_iᴴ, v_i = (0.., 1, a[i+1:, i])
    (LAPACK's geqrf representation), as an m x m matrix."""
    q = np.eye(m, dtype=a.dtype)
    for i in range(len(tau)):
        v = np.zeros(m, dtype=a.dtype)
        v[i] = 1
        v[i + 1:] = a[i + 1:, i]
        q = q @ (np.eye(m, dtype=a.dtype) - tau[i] * np.outer(v, np.conj(v)))
    return q


def check_close(case, ins, outs, exp):
    for i, e in enumerate(exp):
        o = outs[i]
        need(o.shape == e.shape and o.dtype == e.dtype,
             "output %d: %s%s, want %s%s" % (i, o.dtype, o.shape, e.dtype, e.shape))
        need(np.allclose(o, e, rtol=case["rtol"], atol=case["atol"], equal_nan=True),
             "output %d differs from JAX's: max abs err %.3g" % (i, np.nanmax(np.abs(o - e))))


def check_lu(case, ins, outs, exp):
    a = ins[0]
    lu, piv, info = outs
    nb = a.ndim - 2
    m, n = a.shape[-2:]
    k = min(m, n)
    bad = info_rule(case, info, int(np.prod(a.shape[:nb])))
    if exp:
        need(np.allclose(lu, exp[0], rtol=case["rtol"], atol=case["atol"]), "lu differs from JAX's")
        need(np.array_equal(piv, exp[1]), "pivots %s, JAX's %s" % (piv, exp[1]))
    for j, (aj, luj, pj, ij) in enumerate(zip(members(a, nb), members(lu, nb), members(piv, nb),
                                             np.atleast_1d(info).reshape(-1))):
        perm = np.arange(m)
        for i, p in enumerate(pj):   # lu_pivots_to_permutation
            perm[i], perm[p] = perm[p], perm[i]
        if exp and j == 0:
            need(np.array_equal(perm, exp[2]), "permutation %s, JAX's %s" % (perm, exp[2]))
        l = np.tril(luj, -1)[:, :k] + np.eye(m, k)
        u = np.triu(luj)[:k, :]
        small(aj[perm] - l @ u, aj, case["rtol"], "P·A = L·U (member %d)" % j)
        zero = [i for i in range(k) if u[i, i] == 0]
        need(ij == (zero[0] + 1 if zero else 0),
             "member %d: info %d, want the first zero pivot %s" % (j, ij, zero[:1]))
        need(j in bad or not zero, "member %d: zero pivot but not marked singular" % j)


def check_cholesky(case, ins, outs, exp):
    a = ins[0]
    l, info = outs
    nb = a.ndim - 2
    bad = info_rule(case, info, int(np.prod(a.shape[:nb])))
    for j, (aj, lj) in enumerate(zip(members(a, nb), members(l, nb))):
        if j in bad:   # NaN, then JAX's tril zeroes the upper triangle
            all_nan(lj[np.tril_indices(lj.shape[-1])], "member %d" % j)
            need(np.all(lj[np.triu_indices(lj.shape[-1], 1)] == 0), "upper triangle not zero")
            continue
        if case.get("lower_only"):   # the older targets left the upper triangle as given
            lj = np.tril(lj)
        need(np.array_equal(lj, np.tril(lj)), "L is not lower triangular")
        h = np.tril(aj) + ct(np.tril(aj, -1))
        small(lj @ ct(lj) - h, h, case["rtol"], "L·Lᴴ = A (member %d)" % j)


def check_eigh(case, ins, outs, exp):
    a = ins[0]
    v, w, info = outs
    nb = a.ndim - 2
    info_rule(case, info, int(np.prod(a.shape[:nb])))
    if exp:
        need(np.allclose(w, exp[1], rtol=case["rtol"], atol=case["atol"] * 100),
             "eigenvalues differ from JAX's")
    for j, (aj, vj, wj) in enumerate(zip(members(a, nb), members(v, nb), members(w, nb))):
        h = np.tril(aj) + ct(np.tril(aj, -1))   # only the lower triangle is read
        need(np.all(np.diff(wj) >= 0), "eigenvalues not ascending")
        unitary(vj, case["rtol"], "V")
        small(h @ vj - vj * wj, h, case["rtol"], "A·V = V·Λ (member %d)" % j)


def check_eig(case, ins, outs, exp):
    a = ins[0]
    w, vl, vr, info = outs
    nb = a.ndim - 2
    bad = info_rule(case, info, int(np.prod(a.shape[:nb])))
    if exp:
        for e in exp[0].reshape(-1):
            need(np.min(np.abs(w.reshape(-1) - e)) <= case["rtol"] * max(1, abs(e)) * 10,
                 "JAX's eigenvalue %s not found in %s" % (e, w))
    for j, (aj, wj, lj, rj) in enumerate(zip(members(a, nb), members(w, nb), members(vl, nb),
                                            members(vr, nb))):
        if j in bad:
            for x in (wj, lj, rj):
                all_nan(x, "member %d" % j)
            continue
        small(aj @ rj - rj * wj, aj, case["rtol"] * 10, "A·Vr = Vr·Λ (member %d)" % j)
        small(ct(lj) @ aj - wj[:, None] * ct(lj), aj, case["rtol"] * 10,
              "Vlᴴ·A = Λ·Vlᴴ (member %d)" % j)
        for x in (lj, rj):
            small(np.linalg.norm(x, axis=0) - 1, np.ones(1), case["rtol"], "unit eigenvectors")


def check_svd(case, ins, outs, exp):
    a = ins[0]
    u, s, vt, info = outs
    nb = a.ndim - 2
    k = min(a.shape[-2:])
    info_rule(case, info, int(np.prod(a.shape[:nb])))
    if exp:
        need(np.allclose(s, exp[1], rtol=case["rtol"], atol=case["atol"] * 100),
             "singular values differ from JAX's")
    for j, (aj, uj, sj, vj) in enumerate(zip(members(a, nb), members(u, nb), members(s, nb),
                                            members(vt, nb))):
        need(np.all(sj >= 0) and np.all(np.diff(sj) <= 0), "s not descending and >= 0")
        unitary(uj, case["rtol"], "U")
        unitary(ct(vj), case["rtol"], "Vᴴ")
        small(uj[:, :k] * sj @ vj[:k] - aj, aj, case["rtol"], "U·S·Vᴴ = A (member %d)" % j)


def check_schur(case, ins, outs, exp):
    a = ins[0]
    t, z, info = outs
    nb = a.ndim - 2
    info_rule(case, info, int(np.prod(a.shape[:nb])))
    for j, (aj, tj, zj) in enumerate(zip(members(a, nb), members(t, nb), members(z, nb))):
        unitary(zj, case["rtol"], "Z")
        small(zj @ tj @ ct(zj) - aj, aj, case["rtol"], "Z·T·Zᴴ = A (member %d)" % j)
        need(np.all(np.tril(tj, -1 if np.iscomplexobj(tj) else -2) == 0), "T not (quasi-)triangular")
        if not np.iscomplexobj(tj):   # 2x2 blocks do not touch
            sub = np.diag(tj, -1) != 0
            need(not np.any(sub[1:] & sub[:-1]), "T has touching 2x2 blocks")


def check_hessenberg(case, ins, outs, exp):
    a, (h, tau, info) = ins[0], outs
    info_rule(case, info, 1)
    n = a.shape[-1]
    # reflector i acts on rows i+1.. : shift by one to use householder_q
    q = np.eye(n, dtype=a.dtype)
    q[1:, 1:] = householder_q(h[1:, :n - 1], tau, n - 1)
    hh = np.triu(h, -1)
    small(q @ hh @ ct(q) - a, a, case["rtol"], "Q·H·Qᴴ = A")


def check_gtsv(case, ins, outs, exp):
    dl, d, du, b = ins
    x, info = outs
    bad = info_rule(case, info, b.shape[0])
    for j in range(b.shape[0]):
        if j in bad:
            all_nan(x[j], "member %d" % j)
            continue
        t = np.diag(d[j]) + np.diag(dl[j][1:], -1) + np.diag(du[j][:-1], 1)
        small(t @ x[j] - b[j], t, case["rtol"], "T·x = b (member %d)" % j)


def check_trsm(case, ins, outs, exp):
    a, b = ins
    x, = outs
    tri = np.tril(a) if case["uplo"] == "L" else np.triu(a)
    if case["diag"] == "U":
        tri = tri - np.eye(a.shape[-1]) * np.diagonal(a, axis1=-2, axis2=-1)[..., None, :] \
            + np.eye(a.shape[-1])
    op = {"N": tri, "T": np.swapaxes(tri, -1, -2), "C": ct(tri)}[case["trans"]]
    lhs = op @ x if case["side"] == "L" else x @ op
    small(lhs - b, op, case["rtol"], "op(A)·X = B" if case["side"] == "L" else "X·op(A) = B")


def check_qr_pivoting(case, ins, outs, exp):
    a, (q, r, jpvt) = ins[0], outs
    k = min(a.shape[-2:])
    for j in range(a.shape[0]):
        p = jpvt[j] - 1
        need(sorted(p) == list(range(a.shape[-1])), "jpvt %s is not a permutation" % jpvt[j])
        unitary(q[j][:, :k], case["rtol"], "Q")
        need(np.array_equal(r[j], np.triu(r[j])), "R not upper triangular")
        small(q[j][:, :k] @ r[j][:k] - a[j][:, p], a[j], case["rtol"], "Q·R = A·P (member %d)" % j)
        dr = np.abs(np.diag(r[j]))
        need(np.all(np.diff(dr) <= case["rtol"] * dr[0]), "|diag R| not non-increasing")


def check_ormqr(case, ins, outs, exp):
    a, c = ins
    y, r, tau = outs
    m, n = a.shape
    q = householder_q(r, tau, m)
    small(q[:, :n] @ np.triu(r)[:n] - a, a, case["rtol"], "Q·R = A")
    small(y - ct(q) @ c, c, case["rtol"], "Qᴴ·c")


CHECKS = {"close": check_close, "lu": check_lu, "cholesky": check_cholesky, "eigh": check_eigh,
          "eig": check_eig, "svd": check_svd, "schur": check_schur,
          "hessenberg": check_hessenberg, "gtsv": check_gtsv, "trsm": check_trsm,
          "qr_pivoting": check_qr_pivoting, "ormqr": check_ormqr}


def run_case(hlorun, d, tmp):
    case = json.load(open(os.path.join(d, "case.json")))
    ins_files = sorted(f for f in os.listdir(d) if f.startswith("in") and f.endswith(".npy"))
    ins = [np.load(os.path.join(d, f)) for f in ins_files]
    out = os.path.join(tmp, os.path.basename(d) + ".npz")
    r = subprocess.run([hlorun, os.path.join(d, "module.hlo")] +
                       [os.path.join(d, f) for f in ins_files] + ["-o", out],
                       capture_output=True, text=True)
    need(r.returncode == 0, "hlorun exit %d: %s" % (r.returncode, r.stderr.strip()))
    z = np.load(out)
    outs = [z["arr_%d" % i] for i in range(len(z.files))]
    e = np.load(os.path.join(d, "expected.npz"))
    exp = [e["arr_%d" % i] for i in range(len(e.files))]
    CHECKS[case["compare"]](case, ins, outs, exp)


def main():
    hlorun, root = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or sorted(os.listdir(root))
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            try:
                run_case(hlorun, os.path.join(root, name), tmp)
            except Fail as e:
                failed += 1
                print("FAIL %s: %s" % (name, e))
    print("%d cases, %d failed" % (len(names), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
