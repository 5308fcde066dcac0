#!/usr/bin/python3
"""Generate tests/lapack/: HLO modules calling jaxlib's CPU LAPACK custom
calls as a JAX CPU dump prints them, with inputs and expected outputs.

    tools/gen_lapack_cases.py JAX_CHECKOUT_OR_GIT_DIR [OUT_DIR [OLD_JAX]]

OLD_JAX: a checkout of jax-ml/jax at d42d2e88b47e, before the older
generation's data was removed (with a bare mirror, a directory holding the
files of that commit's export_back_compat_test_data/ and 09d903fc9a60's
cpu_triangular_solve_blas_trsm.py under the same relative path); its
legacy_* cases run the descriptor-operand targets.

Cases named bc_<family>_<dtype> come from JAX's back-compatibility test data
(jax/_src/internal_test_util/export_back_compat_test_data/cpu_*.py, read from
the given checkout, or with `git show HEAD:` from a bare mirror): the
StableHLO module's main function is written out as HLO (custom call with
JAX's operand/result layouts, aliasing, typed-FFI api_version and the
backend_config dictionary; the NaN selection on `info`; the other
instructions around it), the operand the module builds itself (iota,
symmetrized, constants) is computed here with numpy and passed as a
parameter, and expected.npz holds the outputs JAX recorded. Cases named
own_* are written here for what the data does not cover (batches, singular
and non-finite inputs, geqp3, gesvd, ormqr, the trsm alpha operand);
their expected values are properties checked by tests/lapack/check_cases.py
or values worked out below from the definition, never hlorun's output.

case.json says how check_cases.py compares: "close" (jaxlib's tolerances,
allclose, as tests/export_back_compat_test.py does for potrf, qr, gehrd,
sytrd, gtsv, trsm) or a property check named after the family.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np

DATA = "jax/_src/internal_test_util/export_back_compat_test_data/"
HLO_TYPE = {np.float32: "f32", np.float64: "f64", np.complex64: "c64",
            np.complex128: "c128", np.int32: "s32", np.bool_: "pred"}
DTYPES = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}
PREFIX = {"f32": "s", "f64": "d", "c64": "c", "c128": "z"}
REAL = {"f32": "f32", "f64": "f64", "c64": "f32", "c128": "f64"}
CPLX = {"f32": "c64", "f64": "c128", "c64": "c64", "c128": "c128"}


def read_data(src, name):
    """The data_* dictionaries of one back-compat file."""
    path = os.path.join(src, DATA + name)
    if os.path.exists(path):
        text = open(path).read()
    else:
        text = subprocess.run(["git", "--git-dir", src, "show", "HEAD:" + DATA + name],
                              check=True, capture_output=True, text=True).stdout
    ns = {}
    exec(compile(text, name, "exec"), ns)
    return {k: v for k, v in ns.items() if k.startswith("data_")}


def mlir_constant(text, dtype):
    """The first `stablehlo.constant dense<[...]>` array of a module."""
    m = re.search(r"stablehlo\.constant dense<(\[.*?\])> : tensor<([0-9x]+)x", text)
    body = re.sub(r"\(([^(),]+),([^(),]+)\)", r"complex(\1,\2)", m.group(1))
    return np.array(eval(body), dtype=dtype)


# ---- HLO text ---------------------------------------------------------------

def layout(rank, col_major):
    if col_major and rank >= 2:
        order = [rank - 2, rank - 1] + list(range(rank - 3, -1, -1))
    else:
        order = list(range(rank - 1, -1, -1))
    return "{" + ",".join(map(str, order)) + "}"


def shape(ty, dims, col_major=False):
    """As XLA prints it: scalars carry no layout."""
    return "%s[%s]%s" % (ty, ",".join(map(str, dims)), layout(len(dims), col_major) if dims else "")


class Module:
    """An HLO module under construction: an ENTRY computation only."""

    def __init__(self, name):
        self.name, self.lines, self.params, self.n = name, [], [], 0

    def ins(self, base, shp, text):
        self.n += 1
        nm = "%%%s.%d" % (base, self.n)
        self.lines.append("  %s = %s %s" % (nm, shp, text))
        return nm

    def param(self, ty, dims):
        nm = self.ins("Arg_%d" % len(self.params), shape(ty, dims), "parameter(%d)" % len(self.params))
        self.params.append(shape(ty, dims))
        return nm

    def custom_call(self, target, operands, results, backend_config, aliases=(), nbatch=None,
                    tuple_result=True):
        """operands: (name, ty, dims); results: (ty, dims). Layouts as JAX's
        _linalg_ffi_lowering: column-major for the largest operand rank."""
        top = max(len(d) for _, _, d in operands)
        ops = ", ".join("%s %s" % (shape(t, d), n) for n, t, d in operands)
        cons = ", ".join(shape(t, d, len(d) == top) for _, t, d in operands)
        res = [shape(t, d, len(d) == top) for t, d in results]
        rshape = "(" + ", ".join(res) + ")" if tuple_result else res[0]
        text = ('custom-call(%s), custom_call_target="%s", operand_layout_constraints={%s}'
                % (ops, target, cons))
        if aliases:
            text += ", output_to_operand_aliasing={%s}" % ", ".join(
                "{%s}: (%d, {})" % ("" if not tuple_result else o, i) for o, i in aliases)
        text += ", api_version=API_VERSION_TYPED_FFI"
        if nbatch is not None:
            text += ', frontend_attributes={num_batch_dims="%d"}' % nbatch
        text += ", backend_config={%s}" % backend_config
        cc = self.ins("custom-call", rshape, text)
        if not tuple_result:
            return [cc]
        return [self.ins("get-tuple-element", r, "get-tuple-element(%s), index=%d" % (cc, i))
                for i, r in enumerate(res)]

    def nan_unless(self, info, bdims, x, ty, dims, direction="EQ"):
        """JAX's _replace_not_ok_with_nan: select(info <direction> 0, x, NaN)."""
        zero = self.ins("constant", "s32[]", "constant(0)")
        zb = self.ins("broadcast", shape("s32", bdims), "broadcast(%s), dimensions={}" % zero)
        ok = self.ins("compare", shape("pred", bdims),
                      "compare(%s, %s), direction=%s" % (info, zb, direction))
        okb = self.ins("broadcast", shape("pred", dims),
                       "broadcast(%s), dimensions={%s}" % (ok, ",".join(map(str, range(len(bdims))))))
        nan = self.ins("constant", ty + "[]",
                       "constant((nan, nan))" if ty.startswith("c") else "constant(nan)")
        nb = self.ins("broadcast", shape(ty, dims), "broadcast(%s), dimensions={}" % nan)
        return self.ins("select", shape(ty, dims), "select(%s, %s, %s)" % (okb, x, nb))

    def triangle(self, x, ty, dims, lower, k=0):
        """tril/triu as JAX lowers them: iota compare and select with zero."""
        r = len(dims)
        rows = self.ins("iota", shape("s32", dims), "iota(), iota_dimension=%d" % (r - 2))
        cols = self.ins("iota", shape("s32", dims), "iota(), iota_dimension=%d" % (r - 1))
        if k:
            kc = self.ins("constant", "s32[]", "constant(%d)" % k)
            kb = self.ins("broadcast", shape("s32", dims), "broadcast(%s), dimensions={}" % kc)
            rows = self.ins("add", shape("s32", dims), "add(%s, %s)" % (rows, kb))
        keep = self.ins("compare", shape("pred", dims),
                        "compare(%s, %s), direction=%s" % (rows, cols, "GE" if lower else "LE"))
        zero = self.ins("constant", ty + "[]", "constant((0, 0))" if ty.startswith("c") else "constant(0)")
        zb = self.ins("broadcast", shape(ty, dims), "broadcast(%s), dimensions={}" % zero)
        return self.ins("select", shape(ty, dims), "select(%s, %s, %s)" % (keep, x, zb))

    def text(self, results):
        """results: (name, ty, dims) of the ROOT tuple."""
        rs = [shape(t, d) for _, t, d in results]
        root = "(" + ", ".join(rs) + ")"
        self.lines.append("  ROOT %%tuple.%d = %s tuple(%s)" % (self.n + 1, root,
                                                              ", ".join(n for n, _, _ in results)))
        head = "HloModule %s, entry_computation_layout={(%s)->%s}\n\n" % (
            self.name, ", ".join(self.params), root)
        sig = ", ".join("Arg_%d: %s" % (i, p.split("{")[0]) for i, p in enumerate(self.params))
        return head + "ENTRY %%main (%s) -> %s {\n%s\n}\n" % (
            sig, "(" + ", ".join(r.split("{")[0] for r in rs) + ")", "\n".join(self.lines))


def write_case(out, name, module, inputs, expected, check, source):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "module.hlo"), "w") as f:
        f.write("// %s\n" % source + module)
    for i, x in enumerate(inputs):
        np.save(os.path.join(d, "in%d.npy" % i), x)
    np.savez(os.path.join(d, "expected.npz"), *expected)
    check = dict(check, source=source)
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(check, f, indent=1, sort_keys=True)
        f.write("\n")


# ---- One module per family (the main function of the back-compat modules) ----

def lu_module(dt, dims):
    """lu(a) -> (lu with NaN where info < 0, pivots - 1); the permutation is
    checked from the pivots."""
    ty, b = dt, list(dims[:-2])
    m, n = dims[-2:]
    k = min(m, n)
    M = Module("jit_lu")
    a = M.param(ty, dims)
    lu, piv, info = M.custom_call("lapack_%sgetrf_ffi" % PREFIX[dt], [(a, ty, dims)],
                                  [(ty, dims), ("s32", b + [k]), ("s32", b)], "",
                                  aliases=[("0", 0)])
    one = M.ins("constant", "s32[]", "constant(1)")
    ob = M.ins("broadcast", shape("s32", b + [k]), "broadcast(%s), dimensions={}" % one)
    p0 = M.ins("subtract", shape("s32", b + [k]), "subtract(%s, %s)" % (piv, ob))
    lu = M.nan_unless(info, b, lu, ty, dims, "GE")
    return M.text([(lu, ty, dims), (p0, "s32", b + [k]), (info, "s32", b)])


def nan_select_module(name, target, dt, dims, results, config, aliases, keep, extra=None):
    """A call whose results `keep` (indices) are NaN-filled unless info == 0;
    info is the last result and is also returned."""
    b = list(dims[:-2])
    M = Module(name)
    args = [M.param(dt, dims)]
    outs = M.custom_call(target, [(args[0], dt, dims)], results, config, aliases=aliases)
    info = outs[-1]
    res = []
    for i in keep:
        t, d = results[i]
        res.append((M.nan_unless(info, b, outs[i], t, d), t, d))
    if extra:
        res = extra(M, res)
    return M.text(res + [(info, "s32", b)])


def potrf_module(dt, dims):
    b = list(dims[:-2])

    def tril(M, res):
        (x, t, d), = res
        return [(M.triangle(x, t, d, lower=True), t, d)]
    return nan_select_module("jit_cholesky", "lapack_%spotrf_ffi" % PREFIX[dt], dt, dims,
                             [(dt, dims), ("s32", b)], "uplo = 76 : ui8", [("0", 0)], [0], tril)


def eigh_module(dt, dims):
    b, n = list(dims[:-2]), dims[-1]
    tgt = "lapack_%s%s_ffi" % (PREFIX[dt], "heevd" if dt.startswith("c") else "syevd")
    return nan_select_module("jit_eigh", tgt, dt, dims,
                             [(dt, dims), (REAL[dt], b + [n]), ("s32", b)],
                             "mode = 86 : ui8, uplo = 76 : ui8", [("0", 0)], [0, 1])


def svd_module(dt, dims, target="gesdd", mode=65):
    b, (m, n) = list(dims[:-2]), dims[-2:]
    k = min(m, n)
    u = [m, m] if mode != 83 else [m, k]
    vt = [n, n] if mode != 83 else [k, n]
    return nan_select_module("jit_svd", "lapack_%s%s_ffi" % (PREFIX[dt], target), dt, dims,
                             [(dt, dims), (REAL[dt], b + [k]), (dt, b + u), (dt, b + vt),
                              ("s32", b)], "mode = %d : ui8" % mode, [("0", 0)], [2, 1, 3])


def geev_module(dt, dims):
    b, n = list(dims[:-2]), dims[-1]
    cty = CPLX[dt]
    M = Module("jit_eig")
    a = M.param(dt, dims)
    cfg = "compute_left = 86 : ui8, compute_right = 86 : ui8"
    if dt.startswith("c"):
        w, vl, vr, info = M.custom_call("lapack_%sgeev_ffi" % PREFIX[dt], [(a, dt, dims)],
                                        [(dt, b + [n]), (dt, dims), (dt, dims), ("s32", b)], cfg)
    else:
        wr, wi, vl, vr, info = M.custom_call(
            "lapack_%sgeev_ffi" % PREFIX[dt], [(a, dt, dims)],
            [(dt, b + [n]), (dt, b + [n]), (cty, dims), (cty, dims), ("s32", b)], cfg)
        w = M.ins("complex", shape(cty, b + [n]), "complex(%s, %s)" % (wr, wi))
    res = [(M.nan_unless(info, b, x, cty, d), cty, d)
           for x, d in ((w, b + [n]), (vl, dims), (vr, dims))]
    return M.text(res + [(info, "s32", b)])


def gees_module(dt, dims):
    b, n = list(dims[:-2]), dims[-1]
    if dt.startswith("c"):
        results = [(dt, dims), (dt, dims), (dt, b + [n]), ("s32", b), ("s32", b)]
    else:
        results = [(dt, dims), (dt, dims), (dt, b + [n]), (dt, b + [n]), ("s32", b), ("s32", b)]
    return nan_select_module("jit_schur", "lapack_%sgees_ffi" % PREFIX[dt], dt, dims, results,
                             "mode = 86 : ui8, sort = 78 : ui8", [("0", 0)], [0, 1])


def gehrd_module(dt, dims):
    b, n = list(dims[:-2]), dims[-1]
    return nan_select_module("jit_hessenberg", "lapack_%sgehrd_ffi" % PREFIX[dt], dt, dims,
                             [(dt, dims), (dt, b + [n - 1]), ("s32", b)],
                             "high = %d : i32, low = 1 : i32" % n, [("0", 0)], [0, 1])


def sytrd_module(dt, dims):
    b, n = list(dims[:-2]), dims[-1]
    tgt = "lapack_%s%s_ffi" % (PREFIX[dt], "hetrd" if dt.startswith("c") else "sytrd")
    return nan_select_module("jit_tridiagonal", tgt, dt, dims,
                             [(dt, dims), (REAL[dt], b + [n]), (REAL[dt], b + [n - 1]),
                              (dt, b + [n - 1]), ("s32", b)],
                             "uplo = 76 : ui8", [("0", 0)], [0, 1, 2, 3])


def qr_module(dt, dims):
    """qr(a) full_matrices=True, m == n as the data: (q, r = triu(geqrf))."""
    b = list(dims[:-2])
    m, n = dims[-2:]
    k = min(m, n)
    orth = "ungqr" if dt.startswith("c") else "orgqr"
    M = Module("jit_qr")
    a = M.param(dt, dims)
    r, tau = M.custom_call("lapack_%sgeqrf_ffi" % PREFIX[dt], [(a, dt, dims)],
                           [(dt, dims), (dt, b + [k])], "", aliases=[("0", 0)],
                           nbatch=len(b))
    q, = M.custom_call("lapack_%s%s_ffi" % (PREFIX[dt], orth), [(r, dt, dims), (tau, dt, b + [k])],
                       [(dt, dims)], "", aliases=[("", 0)], nbatch=len(b), tuple_result=False)
    rt = M.triangle(r, dt, dims, lower=False)
    return M.text([(q, dt, dims), (rt, dt, dims)])


def gtsv_module(dt, n_b, nrhs, batch):
    b = list(batch)
    M = Module("jit_tridiagonal_solve")
    ops = [(M.param(dt, b + [n_b]), dt, b + [n_b]) for _ in range(3)]
    ops.append((M.param(dt, b + [n_b, nrhs]), dt, b + [n_b, nrhs]))
    outs = M.custom_call("lapack_%sgtsv_ffi" % PREFIX[dt], ops,
                         [(dt, b + [n_b])] * 3 + [(dt, b + [n_b, nrhs]), ("s32", b)], "",
                         aliases=[(str(i), i) for i in range(4)])
    x = M.nan_unless(outs[4], b, outs[3], dt, b + [n_b, nrhs])
    return M.text([(x, dt, b + [n_b, nrhs]), (outs[4], "s32", b)])


def trsm_module(dt, adims, bdims, config, alpha=False):
    M = Module("jit_triangular_solve")
    a = M.param(dt, adims)
    bb = M.param(dt, bdims)
    ops = [(a, dt, adims), (bb, dt, bdims)]
    if alpha:
        one = M.ins("constant", dt + "[]", "constant((1, 0))" if dt.startswith("c") else "constant(1)")
        ops.append((one, dt, []))
    x, = M.custom_call("lapack_%strsm_ffi" % PREFIX[dt], ops, [(dt, bdims)], config,
                       aliases=[("", 1)], nbatch=None if alpha else len(bdims) - 2,
                       tuple_result=False)
    return M.text([(x, dt, bdims)])


# ---- The back-compat cases --------------------------------------------------

TOL = {"f32": (1e-3, 1e-4), "c64": (1e-3, 1e-4), "f64": (1e-5, 1e-12), "c128": (1e-5, 1e-12)}


def backcompat(src, out):
    def each(fname, family):
        for dname, d in read_data(src, fname).items():
            for dt, e in (d.items() if "mlir_module_text" not in d else [(None, d)]):
                yield dname, dt, e, "jax-ml/jax %s%s %s[%r]" % (DATA, fname, dname, dt)

    def iota(dt, dims):
        return np.arange(np.prod(dims)).astype(DTYPES[dt]).reshape(dims)

    close = lambda dt: {"compare": "close", "rtol": TOL[dt][0], "atol": TOL[dt][1]}
    for _, dt, e, src_ in each("cpu_lu_lapack_getrf.py", "lu"):
        a = iota(dt, (3, 3))
        lu, piv, perm = e["expected_outputs"]
        write_case(out, "bc_lu_" + dt, lu_module(dt, [3, 3]), [a], [lu, piv, perm],
                   dict(close(dt), compare="lu", info_positive=[0]), src_)   # singular
    for _, dt, e, src_ in each("cpu_cholesky_lapack_potrf.py", "cholesky"):
        x = e["inputs"][0]
        a = ((x + np.conj(x.T)) / 2).astype(x.dtype)   # the module's symmetrization
        write_case(out, "bc_cholesky_" + dt, potrf_module(dt, list(a.shape)), [a],
                   list(e["expected_outputs"]), close(dt), src_)
    for _, dt, e, src_ in each("cpu_eigh_lapack_syev.py", "eigh"):
        x = iota(dt, (8, 8))
        a = np.tril((x + x.T) / 2).astype(x.dtype)    # (x + x^T) / 2, then tril
        write_case(out, "bc_eigh_" + dt, eigh_module(dt, [8, 8]), [a],
                   list(e["expected_outputs"]), dict(close(dt), compare="eigh"), src_)
    for _, dt, e, src_ in each("cpu_eig_lapack_geev.py", "eig"):
        a = iota(dt, (4, 4))
        write_case(out, "bc_eig_" + dt, geev_module(dt, [4, 4]), [a],
                   list(e["expected_outputs"]), dict(close(dt), compare="eig"), src_)
    for _, dt, e, src_ in each("cpu_svd_lapack_gesdd.py", "svd"):
        a = e["inputs"][0]
        write_case(out, "bc_svd_" + dt, svd_module(dt, list(a.shape)), [a],
                   list(e["expected_outputs"]), dict(close(dt), compare="svd"), src_)
    for _, dt, e, src_ in each("cpu_schur_lapack_gees.py", "schur"):
        a = e["inputs"][0]
        write_case(out, "bc_schur_" + dt, gees_module(dt, list(a.shape)), [a],
                   list(e["expected_outputs"]), dict(close(dt), compare="schur"), src_)
    for _, dt, e, src_ in each("cpu_hessenberg_lapack_gehrd.py", "hessenberg"):
        a = mlir_constant(e["mlir_module_text"], DTYPES[dt])
        write_case(out, "bc_hessenberg_" + dt, gehrd_module(dt, list(a.shape)), [a],
                   list(e["expected_outputs"]), close(dt), src_)
    for _, dt, e, src_ in each("cpu_tridiagonal_lapack_sytrd_hetrd.py", "tridiagonal"):
        a = mlir_constant(e["mlir_module_text"], DTYPES[dt])
        write_case(out, "bc_tridiagonal_" + dt, sytrd_module(dt, list(a.shape)), [a],
                   list(e["expected_outputs"]), close(dt), src_)
    for _, dt, e, src_ in each("cpu_qr_lapack_geqrf.py", "qr"):
        a = iota(dt, (3, 3))
        write_case(out, "bc_qr_" + dt, qr_module(dt, [3, 3]), [a],
                   list(e["expected_outputs"]), close(dt), src_)
    for _, dt, e, src_ in each("cpu_tridiagonal_solve_lapack_gtsv.py", "gtsv"):
        ins = list(e["inputs"])
        write_case(out, "bc_gtsv_" + dt, gtsv_module(dt, 4, 3, [2]), ins,
                   list(e["expected_outputs"]), close(dt), src_)
    for _, dt, e, src_ in each("cpu_triangular_solve_blas_trsm.py", "trsm"):
        a, b = e["inputs"]
        cfg = re.search(r"mhlo\.backend_config = \{([^}]*)\}", e["mlir_module_text"]).group(1)
        write_case(out, "bc_trsm_" + dt, trsm_module(dt, list(a.shape), list(b.shape), cfg),
                   [a, b], list(e["expected_outputs"]), close(dt), src_)


# ---- The older generation (descriptor operands, api_version 2) --------------

MLIR_ELEM = {"f32": "f32", "f64": "f64", "complex<f32>": "c64", "complex<f64>": "c128",
             "i32": "s32", "i64": "s64", "ui8": "u8", "i1": "pred"}


def mlir_tensor(t):
    """'tensor<2x4xf32>' -> ('f32', [2, 4])"""
    body = t.strip()[len("tensor<"):-1]
    m = re.match(r"((?:\d+x)*)(.*)$", body)
    return MLIR_ELEM[m.group(2)], [int(d) for d in m.group(1).split("x") if d]


def mlir_types(text):
    """Split '(tensor<..>, tensor<..>)' or 'tuple<...>' into tensor types."""
    return re.findall(r"tensor<(?:[^<>]|<[^<>]*>)*>", text)


def legacy_module(text, target, keep, post=None):
    """The legacy custom call of a back-compat module as HLO: its scalar
    descriptor operands as constants (values from the module), the others
    as parameters (the case's inputs); returns the results `keep` (post may
    add instructions and change the list)."""
    m = re.search(r"custom_call @%s\(([^)]*)\) \{(.*?)\} : \(([^)]*)\) -> (.*)" % target, text)
    ops = [o.strip() for o in m.group(1).split(",")]
    op_types = [mlir_tensor(t) for t in mlir_types(m.group(3))]
    res_types = [mlir_tensor(t) for t in mlir_types(m.group(4).split(" loc(")[0])]
    before = text[:m.start()]
    M = Module("jit_" + target)
    operands = []
    for name, (ty, dims) in zip(ops, op_types):
        if dims:
            operands.append((M.param(ty, dims), ty, dims))
            continue
        c = re.findall(r"%s = stablehlo\.constant dense<([^>]*)> : tensor<" % re.escape(name), before)
        val = c[-1]
        if ty.startswith("c") and not val.startswith("("):
            val = "(%s, 0)" % val
        operands.append((M.ins("constant", ty + "[]", "constant(%s)" % val), ty, dims))
    top = max(len(d) for _, _, d in operands)
    res = [shape(t, d, len(d) == top) for t, d in res_types]
    tuple_result = not m.group(4).lstrip().startswith("tensor")
    rshape = "(" + ", ".join(res) + ")" if tuple_result else res[0]
    opstr = ", ".join("%s %s" % (shape(t, d), n) for n, t, d in operands)
    cons = ", ".join(shape(t, d, len(d) == top) for _, t, d in operands)
    cc = M.ins("custom-call", rshape,
               'custom-call(%s), custom_call_target="%s", operand_layout_constraints={%s}, '
               "api_version=API_VERSION_STATUS_RETURNING" % (opstr, target, cons))
    if not tuple_result:
        return M.text([(cc, res_types[0][0], res_types[0][1])])
    gtes = [M.ins("get-tuple-element", r, "get-tuple-element(%s), index=%d" % (cc, i))
            for i, r in enumerate(res)]
    out = [(gtes[i], res_types[i][0], res_types[i][1]) for i in keep]
    if post:
        out = post(M, gtes, res_types, out)
    return M.text(out)


def legacy(src, out):
    def each(fname):
        for dname, d in read_data(src, fname).items():
            if not any("_ffi" in t for e in (d.values() if "mlir_module_text" not in d else [d])
                       for t in e["custom_call_targets"]):
                for dt, e in d.items():
                    yield dt, e, "jax-ml/jax %s%s %s[%r] (older generation)" % (
                        DATA, fname, dname, dt)

    def iota(dt, n):
        return np.arange(n * n).astype(DTYPES[dt]).reshape(n, n)

    close = lambda dt: {"compare": "close", "rtol": TOL[dt][0], "atol": TOL[dt][1]}
    for dt, e, src_ in each("cpu_lu_lapack_getrf.py"):
        def pivots0(M, g, rt, out):   # pivots - 1, as the lowering
            one = M.ins("constant", "s32[]", "constant(1)")
            ob = M.ins("broadcast", shape("s32", rt[1][1]), "broadcast(%s), dimensions={}" % one)
            p0 = M.ins("subtract", shape("s32", rt[1][1]), "subtract(%s, %s)" % (g[1], ob))
            return [out[0], (p0, "s32", rt[1][1]), out[1]]
        tgt = "lapack_%sgetrf" % PREFIX[dt]
        write_case(out, "legacy_lu_" + dt, legacy_module(e["mlir_module_text"], tgt, [0, 2],
                                                         pivots0),
                   [iota(dt, 3)], list(e["expected_outputs"]),
                   dict(close(dt), compare="lu", info_positive=[0]), src_)
    for dt, e, src_ in each("cpu_cholesky_lapack_potrf.py"):
        x = e["inputs"][0]
        a = ((x + np.conj(x.T)) / 2).astype(x.dtype)
        tgt = "lapack_%spotrf" % PREFIX[dt]
        write_case(out, "legacy_cholesky_" + dt, legacy_module(e["mlir_module_text"], tgt, [0, 1]),
                   [a], [], dict(close(dt), compare="cholesky", lower_only=True), src_)
    for dt, e, src_ in each("cpu_eigh_lapack_syev.py"):
        x = iota(dt, 8)
        a = np.tril((x + x.T) / 2).astype(x.dtype)
        tgt = "lapack_%s%s" % (PREFIX[dt], "heevd" if dt.startswith("c") else "syevd")
        write_case(out, "legacy_eigh_" + dt, legacy_module(e["mlir_module_text"], tgt, [0, 1, 2]),
                   [a], list(e["expected_outputs"]), dict(close(dt), compare="eigh"), src_)
    for dt, e, src_ in each("cpu_svd_lapack_gesdd.py"):
        tgt = "lapack_%sgesdd" % PREFIX[dt]
        write_case(out, "legacy_svd_" + dt,
                   legacy_module(e["mlir_module_text"], tgt, [2, 1, 3, 4]),
                   [e["inputs"][0]], list(e["expected_outputs"]), dict(close(dt), compare="svd"),
                   src_)
    for dt, e, src_ in each("cpu_eig_lapack_geev.py"):
        tgt = "lapack_%sgeev" % PREFIX[dt]
        if dt.startswith("c"):
            mod = legacy_module(e["mlir_module_text"], tgt, [2, 3, 4, 5])
        else:
            def cw(M, g, rt, out):   # w = complex(wr, wi)
                w = M.ins("complex", shape(CPLX[dt], rt[3][1]), "complex(%s, %s)" % (g[3], g[4]))
                return [(w, CPLX[dt], rt[3][1])] + out
            mod = legacy_module(e["mlir_module_text"], tgt, [5, 6, 7], cw)
        write_case(out, "legacy_eig_" + dt, mod, [iota(dt, 4)], list(e["expected_outputs"]),
                   dict(close(dt), compare="eig"), src_)
    for dt, e, src_ in each("cpu_schur_lapack_gees.py"):
        tgt = "lapack_%sgees" % PREFIX[dt]
        write_case(out, "legacy_schur_" + dt,
                   legacy_module(e["mlir_module_text"], tgt, [0, 3, 5]), [e["inputs"][0]],
                   list(e["expected_outputs"]), dict(close(dt), compare="schur"), src_)
    for dt, e, src_ in each("cpu_hessenberg_lapack_gehrd.py"):
        tgt = "lapack_%sgehrd" % PREFIX[dt]
        a = mlir_constant(e["mlir_module_text"], DTYPES[dt])
        write_case(out, "legacy_hessenberg_" + dt,
                   legacy_module(e["mlir_module_text"], tgt, [0, 1]), [a],
                   list(e["expected_outputs"]), close(dt), src_)
    for dt, e, src_ in each("cpu_tridiagonal_lapack_sytrd_hetrd.py"):
        tgt = "lapack_%s%s" % (PREFIX[dt], "hetrd" if dt.startswith("c") else "sytrd")
        a = mlir_constant(e["mlir_module_text"], DTYPES[dt])
        write_case(out, "legacy_tridiagonal_" + dt,
                   legacy_module(e["mlir_module_text"], tgt, [0, 1, 2, 3]), [a],
                   list(e["expected_outputs"]), close(dt), src_)
    for dt, e, src_ in each("cpu_qr_lapack_geqrf.py"):
        # Two calls (geqrf, then orgqr/ungqr) in a tuple-typed 2023 module:
        # written out here with the same descriptors (b 1, m 3, n 3, k 3;
        # the workspace size 96 is only the work result's length, hlorun
        # queries LAPACK as jaxlib's FFI kernels do).
        M = Module("jit_qr_legacy")
        a = M.param(dt, [3, 3])
        d = [M.ins("constant", "s32[]", "constant(%d)" % v) for v in (1, 3, 3, 96)]
        tys = ", ".join([shape(dt, [3, 3], True), shape(dt, [3]), "s32[]", shape(dt, [96])])
        cc = M.ins("custom-call", "(%s)" % tys,
                   'custom-call(s32[] %s, s32[] %s, s32[] %s, s32[] %s, %s %s), '
                   'custom_call_target="lapack_%sgeqrf", api_version=API_VERSION_STATUS_RETURNING'
                   % (d[0], d[1], d[2], d[3], shape(dt, [3, 3]), a, PREFIX[dt]))
        r = M.ins("get-tuple-element", shape(dt, [3, 3], True), "get-tuple-element(%s), index=0" % cc)
        tau = M.ins("get-tuple-element", shape(dt, [3]), "get-tuple-element(%s), index=1" % cc)
        k = M.ins("constant", "s32[]", "constant(3)")
        tys = ", ".join([shape(dt, [3, 3], True), "s32[]", shape(dt, [96])])
        cq = M.ins("custom-call", "(%s)" % tys,
                   'custom-call(s32[] %s, s32[] %s, s32[] %s, s32[] %s, s32[] %s, %s %s, %s %s), '
                   'custom_call_target="lapack_%s%s", api_version=API_VERSION_STATUS_RETURNING'
                   % (d[0], d[1], d[2], k, d[3], shape(dt, [3, 3], True), r, shape(dt, [3]), tau,
                      PREFIX[dt], "ungqr" if dt.startswith("c") else "orgqr"))
        q = M.ins("get-tuple-element", shape(dt, [3, 3], True), "get-tuple-element(%s), index=0" % cq)
        rt = M.triangle(r, dt, [3, 3], lower=False)
        write_case(out, "legacy_qr_" + dt, M.text([(q, dt, [3, 3]), (rt, dt, [3, 3])]),
                   [iota(dt, 3)], list(e["expected_outputs"]), close(dt), src_)
    for dt, e, src_ in each("cpu_triangular_solve_blas_trsm.py"):
        tgt = "blas_%strsm" % PREFIX[dt]
        write_case(out, "legacy_trsm_" + dt, legacy_module(e["mlir_module_text"], tgt, []),
                   list(e["inputs"]), list(e["expected_outputs"]), close(dt), src_)


# ---- Own cases ---------------------------------------------------------------

def own(out):
    rng = np.random.default_rng(22)

    def rand(dt, *dims):
        x = rng.standard_normal(dims)
        if dt.startswith("c"):
            x = x + 1j * rng.standard_normal(dims)
        return x.astype(DTYPES[dt])

    note = "own case (tools/gen_lapack_cases.py)"
    for dt in DTYPES:
        rtol, atol = TOL[dt]
        prop = {"rtol": rtol, "atol": atol}
        # LU, batch of 3: one member singular (a zero column: info = 2 with
        # LAPACK's first zero pivot; JAX keeps a singular LU), one 3x3 of ones.
        a = rand(dt, 3, 3, 3)
        a[1, :, 1] = 0
        a[2] = 1
        write_case(out, "own_lu_batch_" + dt, lu_module(dt, [3, 3, 3]), [a], [],
                   dict(prop, compare="lu", info_positive=[1, 2]), note)
        # LU of a wide and a tall matrix.
        for m, n in ((2, 4), (4, 2)):
            write_case(out, "own_lu_%dx%d_%s" % (m, n, dt), lu_module(dt, [m, n]),
                       [rand(dt, m, n)], [], dict(prop, compare="lu"), note)
        # Cholesky, batch of 2: one positive definite, one not (info > 0 ->
        # NaN everywhere in that member).
        x = rand(dt, 2, 4, 4)
        a = x @ np.conj(np.swapaxes(x, -1, -2)) + 4 * np.eye(4)
        a[1] = -a[1]
        write_case(out, "own_cholesky_batch_" + dt, potrf_module(dt, [2, 4, 4]),
                   [a.astype(DTYPES[dt])], [], dict(prop, compare="cholesky", info_positive=[1]),
                   note)
        # eigh, batch of 2 (only the lower triangle is read: garbage above).
        x = rand(dt, 2, 5, 5)
        h = (x + np.conj(np.swapaxes(x, -1, -2))) / 2
        a = np.tril(h) + np.triu(rand(dt, 2, 5, 5), 1) * 100
        write_case(out, "own_eigh_batch_" + dt, eigh_module(dt, [2, 5, 5]),
                   [a.astype(DTYPES[dt])], [], dict(prop, compare="eigh"), note)
        # eig, batch of 2: a random matrix and one with a NaN (info = -4).
        a = rand(dt, 2, 4, 4)
        a[1, 2, 3] = np.nan
        write_case(out, "own_eig_nonfinite_" + dt, geev_module(dt, [2, 4, 4]), [a], [],
                   dict(prop, compare="eig", info_negative=[1], info_value=-4), note)
        # SVD through gesvd (QR algorithm), full and economy; gesdd economy.
        for tgt, mode, m, n in (("gesvd", 65, 3, 5), ("gesvd", 83, 5, 3), ("gesdd", 83, 3, 5)):
            write_case(out, "own_svd_%s_%c_%s" % (tgt, mode, dt),
                       svd_module(dt, [2, m, n], tgt, mode), [rand(dt, 2, m, n)], [],
                       dict(prop, compare="svd"), note)
        # Schur, batch of 2.
        write_case(out, "own_schur_batch_" + dt, gees_module(dt, [2, 5, 5]), [rand(dt, 2, 5, 5)],
                   [], dict(prop, compare="schur"), note)
        # Hessenberg and tridiagonal reductions, unbatched: A = Q H Q^H from
        # the reflectors (property, no recorded data for n = 5 unbatched).
        write_case(out, "own_hessenberg_" + dt, gehrd_module(dt, [5, 5]), [rand(dt, 5, 5)], [],
                   dict(prop, compare="hessenberg"), note)
        # gtsv: a batch of 2 with a singular second system (info > 0 -> NaN).
        n = 5
        dl, d, du = rand(dt, 2, n), rand(dt, 2, n) + 4, rand(dt, 2, n)
        dl[:, 0] = 0
        du[:, -1] = 0
        d[1] = 0
        dl[1] = 0
        du[1] = 0
        write_case(out, "own_gtsv_singular_" + dt, gtsv_module(dt, n, 2, [2]),
                   [dl, d, du, rand(dt, 2, n, 2)], [],
                   dict(prop, compare="gtsv", info_positive=[1]), note)
        # trsm: right side, upper, (conjugate) transpose, unit diagonal,
        # batched; and the 2024-12 form with the alpha operand.
        cfg = "diag = 85 : ui8, side = 82 : ui8, trans_x = %d : ui8, uplo = 85 : ui8" % (
            67 if dt.startswith("c") else 84)
        a, b = rand(dt, 2, 4, 4), rand(dt, 2, 3, 4)
        write_case(out, "own_trsm_right_" + dt, trsm_module(dt, [2, 4, 4], [2, 3, 4], cfg),
                   [a, b], [], dict(prop, compare="trsm", side="R", uplo="U",
                                    trans="C" if dt.startswith("c") else "T", diag="U"), note)
        cfg = "diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8"
        a, b = rand(dt, 4, 4) + 4 * np.eye(4, dtype=DTYPES[dt]), rand(dt, 4, 2)
        write_case(out, "own_trsm_alpha_" + dt, trsm_module(dt, [4, 4], [4, 2], cfg, alpha=True),
                   [a, b], [], dict(prop, compare="trsm", side="L", uplo="L", trans="N",
                                    diag="N"), note)
        geqp3_case(out, dt, rand(dt, 2, 5, 3), prop, note)
        ormqr_case(out, dt, rand(dt, 4, 3), rand(dt, 4, 2), prop, note)


def geqp3_case(out, dt, a, prop, note):
    """qr(a, pivoting=True) as JAX lowers it: geqp3 with zero jpvt, then
    orgqr of the reflectors (economy Q: m x min(m, n))."""
    dims = list(a.shape)
    b, (m, n) = dims[:-2], dims[-2:]
    k = min(m, n)
    orth = "ungqr" if dt.startswith("c") else "orgqr"
    M = Module("jit_qr_pivoting")
    x = M.param(dt, dims)
    z = M.ins("constant", "s32[]", "constant(0)")
    jp = M.ins("broadcast", shape("s32", b + [n]), "broadcast(%s), dimensions={}" % z)
    r, jpvt, tau = M.custom_call("lapack_%sgeqp3_ffi" % PREFIX[dt],
                                 [(x, dt, dims), (jp, "s32", b + [n])],
                                 [(dt, dims), ("s32", b + [n]), (dt, b + [k])], "",
                                 aliases=[("0", 0), ("1", 1)], nbatch=len(b))
    q, = M.custom_call("lapack_%s%s_ffi" % (PREFIX[dt], orth),
                       [(r, dt, dims), (tau, dt, b + [k])], [(dt, dims)], "",
                       aliases=[("", 0)], nbatch=len(b), tuple_result=False)
    rt = M.triangle(r, dt, dims, lower=False)
    write_case(out, "own_qr_pivoting_" + dt, M.text([(q, dt, dims), (rt, dt, dims),
                                                      (jpvt, "s32", b + [n])]),
               [a], [], dict(prop, compare="qr_pivoting"), note)


def ormqr_case(out, dt, a, c, prop, note):
    """ormqr/unmqr: Q^H c (left, transpose) with Q = H(1)...H(n) of geqrf's
    reflectors; check_cases.py forms Q from the returned reflectors and tau
    by the definition H(i) = I - tau_i v_i v_i^H and checks Q^H c, and that
    Q R = a."""
    (m, n), (_, s) = a.shape, c.shape
    mq = "unmqr" if dt.startswith("c") else "ormqr"
    M = Module("jit_qr_multiply")
    x = M.param(dt, [m, n])
    cc = M.param(dt, [m, s])
    r, tau = M.custom_call("lapack_%sgeqrf_ffi" % PREFIX[dt], [(x, dt, [m, n])],
                           [(dt, [m, n]), (dt, [n])], "", aliases=[("0", 0)], nbatch=0)
    y, = M.custom_call("lapack_%s%s_ffi" % (PREFIX[dt], mq),
                       [(r, dt, [m, n]), (tau, dt, [n]), (cc, dt, [m, s])], [(dt, [m, s])],
                       "left = true, transpose = true", aliases=[("", 2)], nbatch=0,
                       tuple_result=False)
    write_case(out, "own_ormqr_" + dt, M.text([(y, dt, [m, s]), (r, dt, [m, n]), (tau, dt, [n])]),
               [a, c], [],
               dict(prop, compare="ormqr"), note)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lapack", "cases")
    backcompat(sys.argv[1], out)
    if len(sys.argv) > 3:   # a checkout or mirror at a commit that still has the older data
        legacy(sys.argv[3], out)
    own(out)


if __name__ == "__main__":
    main()
