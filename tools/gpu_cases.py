#!/usr/bin/python3
"""Generate tests/gpu/: golden cases for the built-in XLA:GPU targets.

Each case is written twice, as a suite case directory (module.hlo, in*.txt,
expected.txt, tolerance):
  tests/gpu/calls/NAME  the GPU custom call (as XLA:GPU prints it)
  tests/gpu/twins/NAME  the same computation in standard HLO (dot, convolution,
                        add, maximum, ...)
Both must match expected.txt, which numpy computes here from the definitions
(XLA's documented semantics of each target: see doc/custom-calls.md), in f64
from the exact operand values, rounded once to the result type. bf16 and f16
operands are drawn on their grids, so every input is exact.

Run: /usr/bin/python3 tools/gpu_cases.py   (needs python3-numpy; the
generated files are committed, so make check does not need numpy).
"""
import json
import math
import os
import shutil
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu")
rng = np.random.default_rng(21)

TOL = {"f32": "rtol=2e-5 atol=2e-5", "f64": "rtol=1e-12 atol=1e-12",
       "bf16": "rtol=1e-2 atol=1e-2", "f16": "rtol=2e-3 atol=2e-3"}


def round_to(x, dt):
    """x (f64 array) rounded to dt's grid, returned as f64."""
    x = np.asarray(x, np.float64)
    if dt == "f64":
        return x
    if dt == "f16":
        return x.astype(np.float16).astype(np.float64)
    f = x.astype(np.float32)
    if dt == "f32":
        return f.astype(np.float64)
    # bf16: round to nearest even on the f32 bits
    b = f.view(np.uint32).astype(np.uint64)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return b.astype(np.uint32).view(np.float32).astype(np.float64)


def draw(shape, dt, scale=1.0):
    return round_to(rng.uniform(-scale, scale, size=shape), dt)


def lit_body(x, integer=False):
    if x.ndim == 0:
        return str(int(x)) if integer else repr(float(x))
    return "{" + ", ".join(lit_body(v, integer) for v in x) + "}"


def literal(x, dt):
    dims = ",".join(str(d) for d in x.shape)
    return "%s[%s] %s" % (dt, dims, lit_body(np.asarray(x, np.float64), dt[0] in "su"))


def shape(dt, dims, layout=None):
    s = "%s[%s]" % (dt, ",".join(str(d) for d in dims))
    if len(dims) == 0:
        return s
    if layout is None:
        layout = list(range(len(dims) - 1, -1, -1))
    return s + "{" + ",".join(str(i) for i in layout) + "}"


def write_case(kind, name, module, inputs, expected, tol):
    d = os.path.join(ROOT, kind, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "module.hlo"), "w") as f:
        f.write(module)
    for i, (x, dt) in enumerate(inputs):
        with open(os.path.join(d, "in%d.txt" % i), "w") as f:
            f.write(literal(x, dt) + "\n")
    with open(os.path.join(d, "expected.txt"), "w") as f:
        if len(expected) == 1:
            f.write(literal(*expected[0]) + "\n")
        else:
            f.write("(" + ", ".join(literal(x, dt) for x, dt in expected) + ")\n")
    with open(os.path.join(d, "tolerance"), "w") as f:
        f.write(tol + "\n")


# ---- GEMM -------------------------------------------------------------------

def gelu_tanh(t):
    return 0.5 * t * (1 + np.tanh(math.sqrt(2 / math.pi) * (t + 0.044715 * t ** 3)))


ACT = {"RELU": lambda t: np.maximum(t, 0), "GELU": gelu_tanh,
       "SILU": lambda t: t / (1 + np.exp(-t))}


def dot_general(a, b, lb, lc, rb, rc):
    """HLO dot semantics: batch, lhs free, rhs free."""
    lf = [i for i in range(a.ndim) if i not in lb + lc]
    rf = [i for i in range(b.ndim) if i not in rb + rc]
    at = np.transpose(a, lb + lf + lc)
    bt = np.transpose(b, rb + rc + rf)
    B = [a.shape[i] for i in lb]
    M = [a.shape[i] for i in lf]
    K = int(np.prod([a.shape[i] for i in lc])) if lc else 1
    N = [b.shape[i] for i in rf]
    at = at.reshape(int(np.prod(B)) if B else 1, int(np.prod(M)) if M else 1, K)
    bt = bt.reshape(int(np.prod(B)) if B else 1, K, int(np.prod(N)) if N else 1)
    return np.matmul(at, bt).reshape(B + M + N)


def gemm_case(name, target, dt, a_dims, b_dims, lb, lc, rb, rc, epilogue="DEFAULT", alpha=1.0,
              beta=0.0, out_layout=None, out_dt=None, workspace=True, wrapper=True,
              quoted=False, a_layout=None, algorithm=None):
    out_dt = out_dt or dt
    a, b = draw(a_dims, dt), draw(b_dims, dt)
    t = alpha * dot_general(a, b, lb, lc, rb, rc)
    out_dims = list(t.shape)
    inputs = [(a, dt), (b, dt)]
    if algorithm == "ALG_DOT_BF16_BF16_F32":
        t = alpha * dot_general(round_to(a, "bf16"), round_to(b, "bf16"), lb, lc, rb, rc)
    c = None
    if beta != 0:
        c = draw(out_dims, out_dt)
        t = t + beta * c
        inputs.append((c, out_dt))
    bias = None
    if "BIAS" in epilogue:
        minor = out_layout[0] if out_layout else len(out_dims) - 1
        bias = draw([out_dims[minor]], out_dt)
        shp = [1] * len(out_dims)
        shp[minor] = out_dims[minor]
        t = t + bias.reshape(shp)
        inputs.append((bias, out_dt))
    act = next((f for k, f in ACT.items() if k in epilogue), lambda v: v)
    y = act(t)
    aux = "AUX" in epilogue
    expected = [(round_to(y, out_dt), out_dt)] + ([(round_to(t, out_dt), out_dt)] if aux else [])
    dn = {"lhs_contracting_dimensions": [str(i) for i in lc],
          "rhs_contracting_dimensions": [str(i) for i in rc],
          "lhs_batch_dimensions": [str(i) for i in lb],
          "rhs_batch_dimensions": [str(i) for i in rb]}
    g = {"selected_algorithm": "7", "alpha_real": alpha, "beta": beta,
         "dot_dimension_numbers": dn,
         "precision_config": {"operand_precision": ["DEFAULT", "DEFAULT"],
                              "algorithm": algorithm or "ALG_UNSET"},
         "epilogue": epilogue}
    if target == "__cublas$gemm":
        del g["epilogue"]
    cfg = {"operation_queue_id": "0", "wait_on_operation_queues": [], "gemm_backend_config": g,
           "force_earliest_schedule": False} if wrapper else g
    text = json.dumps(cfg, separators=(",", ":"))
    bc = "backend_config=" + (json.dumps(text) if quoted else text)
    params = []
    names = ["a", "b"] + (["c"] if c is not None else []) + (["bias"] if bias is not None else [])
    for i, ((x, xdt), nm) in enumerate(zip(inputs, names)):
        lay = a_layout if nm == "a" else None
        params.append("  %%%s = %s parameter(%d)" % (nm, shape(xdt, x.shape, lay), i))
    o = shape(out_dt, out_dims, out_layout)
    res = [o] + ([o] if aux else []) + (["s8[4194304]{0}"] if workspace else [])
    ops = ", ".join("%" + n for n in names)
    if len(res) == 1:
        call = "  ROOT %%cc = %s custom-call(%s), custom_call_target=\"%s\", %s" % (o, ops, target, bc)
    else:
        call = ("  %%cc = (%s) custom-call(%s), custom_call_target=\"%s\", %s\n" %
                (", ".join(res), ops, target, bc))
        if aux:
            call += ("  %%d = %s get-tuple-element(%%cc), index=0\n  %%x = %s get-tuple-element(%%cc), index=1\n"
                     "  ROOT %%r = (%s, %s) tuple(%%d, %%x)" % (o, o, o, o))
        else:
            call += "  ROOT %%d = %s get-tuple-element(%%cc), index=0" % o
    module = "HloModule %s, entry_computation_layout={}\n\nENTRY %%main {\n%s\n%s\n}\n" % (
        name, "\n".join(params), call)
    module = module.replace(", entry_computation_layout={}", "")
    write_case("calls", name, module, inputs, expected, TOL[out_dt if out_dt != dt else dt])
    # The twin: dot in f32 (f64), the epilogue as elementwise HLO.
    ct = "f64" if "f64" in (dt, out_dt) else "f32"
    L = []
    for i, ((x, xdt), nm) in enumerate(zip(inputs, names)):
        L.append("  %s = %s parameter(%d)" % (nm, shape(xdt, x.shape), i))
        src = nm
        if algorithm == "ALG_DOT_BF16_BF16_F32" and nm in ("a", "b") and xdt != "bf16":
            L.append("  %s_r = %s convert(%s)" % (nm, shape("bf16", x.shape), nm))
            src = nm + "_r"
        L.append("  %s_c = %s convert(%s)" % (nm, shape(ct, x.shape), src))
    O = shape(ct, out_dims)
    dims_attr = "".join(", %s={%s}" % (k, ",".join(map(str, v))) for k, v in
                        [("lhs_batch_dims", lb), ("lhs_contracting_dims", lc),
                         ("rhs_batch_dims", rb), ("rhs_contracting_dims", rc)] if v)
    L.append("  t0 = %s dot(a_c, b_c)%s" % (O, dims_attr))
    L.append("  al = %s constant(%r)\n  alb = %s broadcast(al), dimensions={}\n  t1 = %s multiply(t0, alb)"
             % (ct + "[]", alpha, O, O))
    cur = "t1"
    if c is not None:
        L.append("  be = %s constant(%r)\n  beb = %s broadcast(be), dimensions={}\n  cb = %s multiply(c_c, beb)\n"
                 "  t2 = %s add(%s, cb)" % (ct + "[]", beta, O, O, O, cur))
        cur = "t2"
    if bias is not None:
        minor = out_layout[0] if out_layout else len(out_dims) - 1
        L.append("  bb = %s broadcast(bias_c), dimensions={%d}\n  t3 = %s add(%s, bb)" % (O, minor, O, cur))
        cur = "t3"
    pre = cur
    if "RELU" in epilogue:
        L.append("  z = %s constant(0)\n  zb = %s broadcast(z), dimensions={}\n  y = %s maximum(%s, zb)"
                 % (ct + "[]", O, O, cur))
        cur = "y"
    elif "GELU" in epilogue:
        def k(n, v):
            L.append("  %s = %s constant(%r)\n  %sb = %s broadcast(%s), dimensions={}" % (n, ct + "[]", v, n, O, n))
        k("k1", 0.044715), k("k2", math.sqrt(2 / math.pi)), k("k3", 1.0), k("k4", 0.5)
        L.append("  x2 = %s multiply(%s, %s)\n  x3 = %s multiply(x2, %s)\n  i1 = %s multiply(x3, k1b)\n"
                 "  i2 = %s add(%s, i1)\n  i3 = %s multiply(i2, k2b)\n  th = %s tanh(i3)\n  o1 = %s add(th, k3b)\n"
                 "  hx = %s multiply(%s, k4b)\n  y = %s multiply(hx, o1)"
                 % (O, cur, cur, O, cur, O, O, cur, O, O, O, O, cur, O))
        cur = "y"
    elif "SILU" in epilogue:
        L.append("  sg = %s logistic(%s)\n  y = %s multiply(%s, sg)" % (O, cur, O, cur))
        cur = "y"
    OD = shape(out_dt, out_dims)
    L.append("  yo = %s convert(%s)" % (OD, cur))
    if aux:
        L.append("  xo = %s convert(%s)" % (OD, pre))
        L.append("  ROOT r = (%s, %s) tuple(yo, xo)" % (OD, OD))
    else:
        L.append("  ROOT r = %s copy(yo)" % OD)
    twin = "HloModule %s_twin\n\nENTRY main {\n%s\n}\n" % (name, "\n".join(L))
    write_case("twins", name, twin, inputs, expected, TOL[out_dt if out_dt != dt else dt])


# ---- Convolutions -------------------------------------------------------------

def conv_ref(x, w, stride, pad, rdil, groups=1):
    """x (N,C,spatial...), w (O,I,spatial...), HLO convolution (cross-correlation)."""
    N, C = x.shape[:2]
    O, I = w.shape[:2]
    sp = x.shape[2:]
    ks = w.shape[2:]
    n = len(sp)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p[0], p[1]) for p in pad])
    keff = [(k - 1) * d + 1 for k, d in zip(ks, rdil)]
    out = [(xp.shape[2 + i] - keff[i]) // stride[i] + 1 for i in range(n)]
    y = np.zeros((N, O) + tuple(out))
    og = O // groups
    for idx in np.ndindex(*out):
        for kidx in np.ndindex(*ks):
            pos = tuple(idx[i] * stride[i] + kidx[i] * rdil[i] for i in range(n))
            xs = xp[(slice(None), slice(None)) + pos]            # N, C
            wk = w[(slice(None), slice(None)) + kidx]            # O, I
            for g in range(groups):
                y[(slice(None), slice(g * og, (g + 1) * og)) + idx] += \
                    xs[:, g * I:(g + 1) * I] @ wk[g * og:(g + 1) * og].T
    return y


def to_canon(arr, labels, first, second):
    """Array in labels order -> (first, second, spatial 0..) order."""
    order = [labels.index(first), labels.index(second)] + \
        [labels.index(str(i)) for i in range(len(labels) - 2)]
    return np.transpose(arr, order)


def from_canon(arr, labels, first, second):
    order = [labels.index(first), labels.index(second)] + \
        [labels.index(str(i)) for i in range(len(labels) - 2)]
    return np.transpose(arr, np.argsort(order))


def window_attr(size, stride, pad, rdil, rev=False):
    """XLA's window text; a convolution without spatial dimensions (XLA's
    Conv0D, a dense layer as a convolution) prints window={}."""
    if not size:
        return "window={}"
    x = lambda v: "x".join(str(i) for i in v)
    s = "window={size=%s" % x(size)
    if any(v != 1 for v in stride):
        s += " stride=%s" % x(stride)
    s += " pad=%s" % "x".join("%d_%d" % p for p in pad)
    if any(v != 1 for v in rdil):
        s += " rhs_dilate=%s" % x(rdil)
    if rev:
        s += " rhs_reversal=%s" % x([1] * len(size))
    return s + "}"


def conv_case(name, kind, dt, labels, xs, ws, stride, pad, rdil, scale=1.0, act="kNone",
              side=False, side_scale=0.0, leaky=0.0, groups=1, rev=False):
    """rev: window rhs_reversal on every spatial dimension (cuDNN's
    convolution mode, not cross-correlation): the kernel taken flipped."""
    inl, rest = labels.split("_")
    kerl, outl = rest.split("->")
    x = draw(xs, dt)
    w = draw(ws, dt)
    xc = to_canon(x, inl, "b", "f")
    wc = to_canon(w, kerl, "o", "i")
    if rev:
        wc = wc[(slice(None), slice(None)) + (slice(None, None, -1),) * (wc.ndim - 2)]
    yc = conv_ref(xc, wc, stride, pad, rdil, groups)
    ys = from_canon(yc, outl, "b", "f").shape
    size = list(ws[kerl.index(str(i))] for i in range(len(inl) - 2))
    target = {"fwd": "__cudnn$convForward", "bwd_input": "__cudnn$convBackwardInput",
              "bwd_filter": "__cudnn$convBackwardFilter",
              "bias_act": "__cudnn$convBiasActivationForward"}[kind]
    if kind in ("fwd", "bias_act"):
        ops = [(x, dt), (w, dt)]
        t = scale * yc
        if kind == "bias_act":
            bias = draw([yc.shape[1]], dt)
            t = t + bias.reshape((1, -1) + (1,) * (yc.ndim - 2))
            ops.append((bias, dt))
            if side:
                sd = draw(ys, dt)
                t = t + side_scale * to_canon(sd, outl, "b", "f")
                ops.append((sd, dt))
            f = {"kNone": lambda v: v, "kRelu": lambda v: np.maximum(v, 0),
                 "kRelu6": lambda v: np.clip(v, 0, 6), "kTanh": np.tanh,
                 "kSigmoid": lambda v: 1 / (1 + np.exp(-v)),
                 "kElu": lambda v: np.where(v < 0, np.expm1(v), v),
                 "kLeakyRelu": lambda v: np.where(v < 0, leaky * v, v),
                 "kGeluExact": lambda v: 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2)))}[act]
            t = f(t)
        res = from_canon(t, outl, "b", "f")
    elif kind == "bwd_input":
        # dx = J^T dy: the adjoint, by linearity from unit inputs of x.
        dy = draw(ys, dt)
        dyc = to_canon(dy, outl, "b", "f")
        dxc = np.zeros(xc.shape)
        for idx in np.ndindex(*xc.shape):
            e = np.zeros(xc.shape)
            e[idx] = 1
            dxc[idx] = np.sum(conv_ref(e, wc, stride, pad, rdil, groups) * dyc)
        res = from_canon(dxc, inl, "b", "f")
        ops = [(dy, dt), (w, dt)]
    else:
        dy = draw(ys, dt)
        dyc = to_canon(dy, outl, "b", "f")
        dwc = np.zeros(wc.shape)
        for idx in np.ndindex(*wc.shape):
            e = np.zeros(wc.shape)
            e[idx] = 1
            if rev:   # w's entry idx sits flipped in the kernel the forward used
                e = e[(slice(None), slice(None)) + (slice(None, None, -1),) * (e.ndim - 2)]
            dwc[idx] = np.sum(conv_ref(xc, e, stride, pad, rdil, groups) * dyc)
        res = from_canon(dwc, kerl, "o", "i")
        ops = [(x, dt), (dy, dt)]
    expected = [(round_to(res, dt), dt)]
    cfg = {"operation_queue_id": "0", "wait_on_operation_queues": [],
           "cudnn_conv_backend_config": {
               "algorithm": {"algo_id": "1", "math_type": "TENSOR_OP_MATH", "tuning_knobs": {},
                             "is_cudnn_frontend": True, "workspace_size": "0"},
               "conv_result_scale": scale, "activation_mode": act, "side_input_scale": side_scale,
               "leakyrelu_alpha": leaky}}
    win = window_attr(size, stride, pad, rdil, rev)
    names = ["p%d" % i for i in range(len(ops))]
    params = "\n".join("  %%%s = %s parameter(%d)" % (n, shape(o[1], o[0].shape), i)
                       for i, (n, o) in enumerate(zip(names, ops)))
    rs = shape(dt, res.shape)
    module = ("HloModule %s\n\nENTRY %%main {\n%s\n  %%cc = (%s, u8[0]{0}) custom-call(%s), %s, "
              "dim_labels=%s%s, custom_call_target=\"%s\", backend_config=%s\n"
              "  ROOT %%r = %s get-tuple-element(%%cc), index=0\n}\n" %
              (name, params, rs, ", ".join("%" + n for n in names), win, labels,
               ", feature_group_count=%d" % groups if groups != 1 else "", target,
               json.dumps(cfg, separators=(",", ":")), rs))
    write_case("calls", name, module, ops, expected, TOL[dt])
    # The twin: what XLA's conv rewriter started from.
    L = ["  p%d = %s parameter(%d)\n  c%d = %s convert(p%d)" % (i, shape(o[1], o[0].shape), i, i,
                                                              shape("f32" if dt != "f64" else "f64", o[0].shape), i)
         for i, o in enumerate(ops)]
    ct = "f32" if dt != "f64" else "f64"
    R = shape(ct, res.shape)
    if kind in ("fwd", "bias_act"):
        L.append("  y0 = %s convolution(c0, c1), %s, dim_labels=%s%s" % (
            R, win, labels, ", feature_group_count=%d" % groups if groups != 1 else ""))
        L.append("  s = %s[] constant(%r)\n  sb = %s broadcast(s), dimensions={}\n  y = %s multiply(y0, sb)"
                 % (ct, scale, R, R))
        cur = "y"
        if kind == "bias_act":
            L.append("  bb = %s broadcast(c2), dimensions={%d}\n  yb = %s add(%s, bb)" % (R, outl.index("f"), R, cur))
            cur = "yb"
            if side:
                L.append("  ss = %s[] constant(%r)\n  ssb = %s broadcast(ss), dimensions={}\n"
                         "  sd = %s multiply(c3, ssb)\n  ys = %s add(%s, sd)" % (ct, side_scale, R, R, R, cur))
                cur = "ys"
            z = "  z = %s[] constant(0)\n  zb = %s broadcast(z), dimensions={}\n" % (ct, R)
            if act == "kRelu":
                L.append(z + "  ya = %s maximum(%s, zb)" % (R, cur))
                cur = "ya"
            elif act == "kElu":
                L.append(z + "  ng = %s compare(%s, zb), direction=LT\n  em = %s exponential-minus-one(%s)\n"
                         "  ya = %s select(ng, em, %s)" % (shape("pred", res.shape), cur, R, cur, R, cur))
                cur = "ya"
            elif act == "kLeakyRelu":
                L.append(z + "  al = %s[] constant(%r)\n  alb = %s broadcast(al), dimensions={}\n"
                         "  ng = %s compare(%s, zb), direction=LT\n  lk = %s multiply(%s, alb)\n"
                         "  ya = %s select(ng, lk, %s)" % (ct, leaky, R, shape("pred", res.shape), cur, R, cur, R, cur))
                cur = "ya"
            elif act == "kGeluExact":
                L.append("  r2 = %s[] constant(%r)\n  r2b = %s broadcast(r2), dimensions={}\n  h = %s[] constant(0.5)\n"
                         "  hb = %s broadcast(h), dimensions={}\n  o = %s[] constant(1)\n  ob = %s broadcast(o), dimensions={}\n"
                         "  xs = %s multiply(%s, r2b)\n  ef = %s erf(xs)\n  e1 = %s add(ef, ob)\n  hx = %s multiply(%s, hb)\n"
                         "  ya = %s multiply(hx, e1)" % (ct, 1 / math.sqrt(2), R, ct, R, ct, R, R, cur, R, R, R, cur, R))
                cur = "ya"
            elif act == "kRelu6":
                L.append(z + "  six = %s[] constant(6)\n  sixb = %s broadcast(six), dimensions={}\n"
                         "  ya = %s clamp(zb, %s, sixb)" % (ct, R, R, cur))
                cur = "ya"
            elif act in ("kTanh", "kSigmoid"):
                L.append("  ya = %s %s(%s)" % (R, "tanh" if act == "kTanh" else "logistic", cur))
                cur = "ya"
    else:
        # The gradients as JAX writes them: the forward conv's vjp, here
        # through a dot of the unit-response matrix is impossible in HLO, so
        # the twin spells out the transposed convolution itself.
        n = len(inl) - 2
        if kind == "bwd_input":
            kr = [kerl.index(str(i)) for i in range(n)]
            kl = kerl.replace("i", "T").replace("o", "i").replace("T", "o")
            if groups != 1:
                # JAX's grouped vjp: split w's output features into
                # (G, O/G), move G into the input features, swap roles.
                perm = [kerl.index("o"), kerl.index("i")] + kr
                cw = [w.shape[i] for i in perm]
                O_, I_ = cw[0], cw[1]
                G = groups
                sp = ",".join(str(v) for v in cw[2:])
                L.append("  wt = %s[%s] transpose(c1), dimensions={%s}" % (ct, ",".join(map(str, cw)), ",".join(map(str, perm))))
                L.append("  w5 = %s[%d,%d,%d,%s] reshape(wt)" % (ct, G, O_ // G, I_, sp))
                L.append("  w6 = %s[%d,%d,%d,%s] transpose(w5), dimensions={1,0,%s}" % (
                    ct, O_ // G, G, I_, sp, ",".join(str(i) for i in range(2, 3 + n))))
                L.append("  wg = %s[%d,%d,%s] reshape(w6)" % (ct, O_ // G, G * I_, sp))
                L.append("  wr = %s[%d,%d,%s] reverse(wg), dimensions={%s}" % (
                    ct, O_ // G, G * I_, sp, ",".join(str(2 + i) for i in range(n))))
                kl = "io" + "".join(str(i) for i in range(n))
            elif rev:   # the forward took w flipped: its adjoint takes w as it is
                L.append("  wr = %s copy(c1)" % shape(ct, w.shape))
            else:
                L.append("  wr = %s reverse(c1), dimensions={%s}" % (shape(ct, w.shape), ",".join(map(str, kr))))
            I = [res.shape[inl.index(str(i))] for i in range(n)]
            O = [ys[outl.index(str(i))] for i in range(n)]
            keff = [(size[i] - 1) * rdil[i] + 1 for i in range(n)]
            p2 = [(keff[i] - 1 - pad[i][0], I[i] - 1 - (O[i] - 1) * stride[i] + pad[i][0]) for i in range(n)]
            wtxt = "window={size=%s pad=%s lhs_dilate=%s rhs_dilate=%s}" % (
                "x".join(map(str, size)), "x".join("%d_%d" % p for p in p2),
                "x".join(map(str, stride)), "x".join(map(str, rdil))) if n else "window={}"
            L.append("  y = %s convolution(c0, wr), %s, dim_labels=%s_%s->%s%s" % (
                R, wtxt, outl, kl, inl, ", feature_group_count=%d" % groups if groups != 1 else ""))
        else:
            I = [xs[inl.index(str(i))] for i in range(n)]
            O = [ys[outl.index(str(i))] for i in range(n)]
            p2 = [(pad[i][0], (size[i] - 1) * rdil[i] + (O[i] - 1) * stride[i] + 1 - I[i] - pad[i][0])
                  for i in range(n)]
            il = inl.replace("b", "T").replace("f", "b").replace("T", "f")
            kl = outl.replace("b", "i").replace("f", "o")
            ol = kerl.replace("i", "b").replace("o", "f")
            wtxt = "window={size=%s stride=%s pad=%s rhs_dilate=%s}" % (
                "x".join(map(str, O)), "x".join(map(str, rdil)), "x".join("%d_%d" % p for p in p2),
                "x".join(map(str, stride))) if n else "window={}"
            L.append("  y = %s convolution(c0, c1), %s, dim_labels=%s_%s->%s%s" % (
                R, wtxt, il, kl, ol, ", batch_group_count=%d" % groups if groups != 1 else ""))
            if rev:   # the gradient of the flipped kernel, flipped back
                L.append("  yr = %s reverse(y), dimensions={%s}" % (
                    R, ",".join(str(kerl.index(str(i))) for i in range(n))))
        cur = "yr" if rev and kind == "bwd_filter" else "y"
    L.append("  ROOT r = %s convert(%s)" % (shape(dt, res.shape), cur))
    twin = "HloModule %s_twin\n\nENTRY main {\n%s\n}\n" % (name, "\n".join(L))
    write_case("twins", name, twin, ops, expected, TOL[dt])


def main():
    for k in ("calls", "twins"):
        shutil.rmtree(os.path.join(ROOT, k), ignore_errors=True)
    # __cublas$gemm: plain, the old quoted bare config with C and no workspace.
    gemm_case("gemm_f32", "__cublas$gemm", "f32", [4, 5], [5, 3], [], [1], [], [0])
    gemm_case("gemm_f32_beta_quoted", "__cublas$gemm", "f32", [4, 5], [5, 3], [], [1], [], [0],
              alpha=2.0, beta=0.5, workspace=False, wrapper=False, quoted=True)
    gemm_case("gemm_f64_batch", "__cublas$gemm", "f64", [2, 3, 4], [2, 4, 5], [0], [2], [0], [1])
    gemm_case("gemm_bf16_transposed", "__cublas$gemm", "bf16", [6, 4], [5, 6], [], [0], [], [1])
    gemm_case("gemm_f16_beta", "__cublas$gemm", "f16", [3, 8], [8, 4], [], [1], [], [0], beta=1.0)
    gemm_case("gemm_alg_bf16", "__cublas$gemm", "f32", [4, 16], [16, 3], [], [1], [], [0],
              algorithm="ALG_DOT_BF16_BF16_F32")
    # __cublas$lt$matmul: every epilogue.
    for epi in ("DEFAULT", "BIAS", "RELU", "BIAS_RELU", "GELU", "GELU_AUX", "BIAS_GELU",
                "BIAS_GELU_AUX", "SILU", "BIAS_SILU"):
        gemm_case("lt_%s_f32" % epi.lower(), "__cublas$lt$matmul", "f32", [5, 7], [7, 6], [], [1],
                  [], [0], epilogue=epi, alpha=1.5, beta=0.25 if "GELU" in epi else 0.0)
    gemm_case("lt_bias_relu_beta_bf16", "__cublas$lt$matmul", "bf16", [4, 8], [8, 6], [], [1], [],
              [0], epilogue="BIAS_RELU", beta=1.0)
    gemm_case("lt_bias_gelu_f16_batch", "__cublas$lt$matmul", "f16", [2, 4, 8], [2, 8, 3], [0], [2],
              [0], [1], epilogue="BIAS_GELU")
    gemm_case("lt_bias_f64_beta", "__cublas$lt$matmul", "f64", [3, 4], [4, 5], [], [1], [], [0],
              epilogue="BIAS", alpha=0.5, beta=-2.0)
    # Column-major output: the bias runs along dimension 0, the minor one.
    gemm_case("lt_bias_colmajor_out", "__cublas$lt$matmul", "f32", [3, 4], [4, 5], [], [1], [], [0],
              epilogue="BIAS", out_layout=[0, 1])
    gemm_case("lt_transposed_bf16_gelu_aux", "__cublas$lt$matmul", "bf16", [8, 4], [6, 8], [], [0],
              [], [1], epilogue="BIAS_GELU_AUX", a_layout=[0, 1])
    # cuDNN convolutions.
    conv_case("conv_fwd_nhwc_f32", "fwd", "f32", "b01f_01io->b01f", [2, 5, 5, 3], [3, 3, 3, 4],
              [1, 1], [(1, 1), (1, 1)], [1, 1])
    conv_case("conv_fwd_nchw_stride_f16", "fwd", "f16", "bf01_oi01->bf01", [1, 2, 7, 6],
              [3, 2, 3, 2], [2, 2], [(1, 1), (0, 0)], [1, 1], scale=0.5)
    conv_case("conv_fwd_dilated_bf16", "fwd", "bf16", "b01f_01io->b01f", [1, 8, 8, 2],
              [3, 3, 2, 2], [1, 1], [(2, 2), (2, 2)], [2, 2])
    conv_case("conv_fwd_grouped_f64", "fwd", "f64", "bf01_oi01->bf01", [1, 4, 5, 5], [6, 2, 3, 3],
              [1, 1], [(1, 1), (1, 1)], [1, 1], groups=2)
    conv_case("conv_bwd_input_f32", "bwd_input", "f32", "b01f_01io->b01f", [1, 5, 5, 2],
              [3, 3, 2, 3], [1, 1], [(1, 1), (1, 1)], [1, 1])
    conv_case("conv_bwd_input_stride_f32", "bwd_input", "f32", "bf01_oi01->bf01", [2, 2, 6, 5],
              [3, 2, 3, 3], [2, 2], [(1, 1), (1, 1)], [1, 1])
    conv_case("conv_bwd_input_f16", "bwd_input", "f16", "b01f_01io->b01f", [1, 4, 4, 2],
              [2, 2, 2, 2], [1, 1], [(0, 0), (0, 0)], [1, 1])
    conv_case("conv_bwd_filter_f32", "bwd_filter", "f32", "b01f_01io->b01f", [2, 5, 5, 2],
              [3, 3, 2, 3], [1, 1], [(1, 1), (1, 1)], [1, 1])
    conv_case("conv_bwd_filter_stride_f32", "bwd_filter", "f32", "bf01_oi01->bf01", [1, 2, 7, 6],
              [2, 2, 3, 3], [2, 2], [(1, 1), (1, 0)], [1, 1])
    conv_case("conv_bwd_filter_bf16", "bwd_filter", "bf16", "b01f_01io->b01f", [2, 4, 4, 2],
              [3, 3, 2, 2], [1, 1], [(1, 1), (1, 1)], [1, 1])
    for act in ("kNone", "kRelu", "kRelu6", "kElu", "kLeakyRelu", "kGeluExact", "kTanh", "kSigmoid"):
        conv_case("conv_bias_%s_f32" % act[1:].lower(), "bias_act", "f32", "b01f_01io->b01f",
                  [1, 4, 4, 2], [3, 3, 2, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], act=act,
                  leaky=0.1 if act == "kLeakyRelu" else 0.0, scale=2.0 if act == "kRelu6" else 1.0)
    conv_case("conv_bias_side_relu_f32", "bias_act", "f32", "bf01_oi01->bf01", [1, 2, 5, 5],
              [3, 2, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], act="kRelu", side=True,
              side_scale=0.5, scale=1.5)
    conv_case("conv_bias_relu_f16", "bias_act", "f16", "b01f_01io->b01f", [1, 4, 4, 2],
              [3, 3, 2, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], act="kRelu")
    more_cases()
    # Last, so that the cases above keep their random draws. mask_type ALIBI:
    # XLA's cuda_dnn.cc sets cuDNN masks only for CAUSAL/PADDING_CAUSAL and
    # PADDING/PADDING_CAUSAL and never an ALiBi mask, so the GPU computes
    # unmasked attention: the expected values are the unmasked ones.
    fmha_case("fmha_alibi_is_unmasked_f32", "f32", 1, 4, 5, 2, 3, False, False, True, mask="ALIBI")
    spatial_rank_cases()


def spatial_rank_cases():
    """Every cuDNN convolution kind with 0, 1 and 3 spatial dimensions (the
    cases above are 2-D). 0-D is XLA's Conv0D regression test: a dense
    layer written as a convolution, window={} dim_labels=bf_io->bf."""
    conv_case("conv0d_fwd_f32", "fwd", "f32", "bf_io->bf", [3, 5], [5, 4], [], [], [])
    conv_case("conv0d_bwd_input_f32", "bwd_input", "f32", "bf_io->bf", [3, 5], [5, 4], [], [], [])
    conv_case("conv0d_bwd_filter_f32", "bwd_filter", "f32", "fb_oi->fb", [5, 3], [4, 5], [], [], [])
    conv_case("conv0d_bias_relu_f32", "bias_act", "f32", "bf_io->bf", [3, 5], [5, 4], [], [], [],
              act="kRelu", scale=0.5)
    conv_case("conv0d_fwd_grouped_f32", "fwd", "f32", "bf_io->bf", [2, 6], [3, 4], [], [], [],
              groups=2)
    conv_case("conv1d_fwd_stride_f32", "fwd", "f32", "b0f_0io->b0f", [2, 9, 3], [3, 3, 4], [2],
              [(1, 1)], [1])
    conv_case("conv1d_bwd_input_f32", "bwd_input", "f32", "bf0_oi0->bf0", [2, 3, 7], [4, 3, 3],
              [2], [(1, 0)], [1])
    conv_case("conv1d_bwd_filter_f16", "bwd_filter", "f16", "b0f_0io->b0f", [2, 8, 2], [3, 2, 3],
              [1], [(1, 1)], [2])
    conv_case("conv1d_bias_tanh_f32", "bias_act", "f32", "bf0_oi0->bf0", [1, 2, 6], [3, 2, 3],
              [1], [(1, 1)], [1], act="kTanh", side=True, side_scale=0.5)
    conv_case("conv1d_fwd_reversed_f32", "fwd", "f32", "b0f_0io->b0f", [1, 6, 2], [3, 2, 3], [1],
              [(0, 1)], [1], rev=True)
    conv_case("conv2d_bwd_input_reversed_f32", "bwd_input", "f32", "b01f_01io->b01f", [1, 4, 4, 2],
              [2, 3, 2, 2], [1, 1], [(1, 0), (1, 1)], [1, 1], rev=True)
    conv_case("conv2d_bwd_filter_reversed_f32", "bwd_filter", "f32", "bf01_oi01->bf01", [2, 2, 4, 5],
              [3, 2, 2, 3], [1, 2], [(0, 1), (1, 1)], [1, 1], rev=True)
    conv_case("conv3d_fwd_f32", "fwd", "f32", "b012f_012io->b012f", [1, 4, 3, 4, 2], [2, 2, 3, 2, 3],
              [1, 1, 2], [(1, 0), (0, 0), (1, 1)], [1, 1, 1])
    conv_case("conv3d_bwd_input_f32", "bwd_input", "f32", "bf012_oi012->bf012", [1, 2, 3, 4, 3],
              [2, 2, 2, 2, 2], [1, 2, 1], [(1, 1), (0, 1), (0, 0)], [1, 1, 1])
    conv_case("conv3d_bwd_filter_bf16", "bwd_filter", "bf16", "b012f_012io->b012f", [2, 3, 3, 3, 2],
              [2, 2, 2, 2, 2], [1, 1, 1], [(0, 0), (1, 1), (0, 1)], [1, 1, 1])
    conv_case("conv3d_bias_relu6_f32", "bias_act", "f32", "b012f_012io->b012f", [1, 3, 3, 3, 2],
              [3, 3, 3, 2, 2], [1, 1, 1], [(1, 1), (1, 1), (1, 1)], [1, 1, 1], act="kRelu6", scale=2.0)
    # The graph form: XLA's f8 graphs (scale, relu, amax) on each rank.
    steps = [(1, "f32", "conv", [], None), (2, "f32", "scale", [1], ("scalar", 0.5)),
             (3, "f32", "relu", [2], None), (4, "f8e4m3fn", "scale", [3], ("scalar", 4.0)),
             (5, "f32", "amax", [3], None)]
    graph_case("convgraph0d_relu_amax_f8", [3, 6], [4, 6], steps, labels="bf_oi->bf")
    graph_case("convgraph1d_relu_amax_f8", [2, 5, 3], [2, 3, 3], steps, labels="b0f_o0i->b0f")
    graph_case("convgraph3d_relu_amax_f8", [1, 3, 3, 3, 2], [2, 3, 3, 3, 2], steps,
               labels="b012f_o012i->b012f", pad=[(1, 1), (0, 0), (1, 0)])


# ---- One-op targets: triangular solve, TopK, CUB sorts, kCustom fusions ------

def trsm_case(name, dt, a_dims, b_dims, left, lower, unit, trans):
    n = a_dims[-1]
    a = draw(a_dims, dt)
    a = a + round_to(4 * np.eye(n), dt)          # well conditioned
    b = draw(b_dims, dt)
    tri = np.tril(a) if lower else np.triu(a)
    if unit:
        idx = np.arange(n)
        tri = tri.copy()
        tri[..., idx, idx] = 1
    op = np.swapaxes(tri, -1, -2) if trans == "TRANSPOSE" else tri
    x = np.linalg.solve(op, b) if left else np.swapaxes(
        np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    opts = {"left_side": left, "lower": lower, "unit_diagonal": unit, "transpose_a": trans}
    flags = "left_side=%s, lower=%s, unit_diagonal=%s, transpose_a=%s" % (
        str(left).lower(), str(lower).lower(), str(unit).lower(), trans)
    B = shape(dt, b_dims)
    module = ("HloModule %s\n\nENTRY %%main {\n  %%a = %s parameter(0)\n  %%b = %s parameter(1)\n"
              "  %%cc = (%s, s8[0]{0}) custom-call(%%a, %%b), custom_call_target=\"__cublas$triangularSolve\", "
              "backend_config=%s\n  ROOT %%x = %s get-tuple-element(%%cc), index=0\n}\n" %
              (name, shape(dt, a_dims), B, B, json.dumps(opts, separators=(",", ":")), B))
    twin = ("HloModule %s_twin\n\nENTRY main {\n  a = %s parameter(0)\n  b = %s parameter(1)\n"
            "  ROOT x = %s triangular-solve(a, b), %s\n}\n" % (name, shape(dt, a_dims), B, B, flags))
    ins, exp = [(a, dt), (b, dt)], [(round_to(x, dt), dt)]
    write_case("calls", name, module, ins, exp, TOL[dt])
    write_case("twins", name, twin, ins, exp, TOL[dt])


def topk_case(name, dt, dims, k):
    x = round_to(rng.integers(-4, 5, size=dims) / 2.0, dt)   # many ties
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    vals = np.take_along_axis(x, order, -1)
    X, V, I = shape(dt, dims), shape(dt, dims[:-1] + [k]), shape("s32", dims[:-1] + [k])
    module = ("HloModule %s\n\nENTRY %%main {\n  %%x = %s parameter(0)\n"
              "  ROOT %%cc = (%s, %s) custom-call(%%x), custom_call_target=\"__gpu$TopK\"\n}\n" %
              (name, X, V, I))
    r = len(dims) - 1
    sl = ", ".join("[0:%d]" % d for d in dims[:-1] + [k])
    twin = ("HloModule %s_twin\n\ncmp {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
            "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n  ROOT g = pred[] compare(a, b), direction=GT\n}\n\n"
            "ENTRY main {\n  x = %s parameter(0)\n  i = %s iota(), iota_dimension=%d\n"
            "  s = (%s, %s) sort(x, i), dimensions={%d}, is_stable=true, to_apply=cmp\n"
            "  v = %s get-tuple-element(s), index=0\n  j = %s get-tuple-element(s), index=1\n"
            "  vs = %s slice(v), slice={%s}\n  js = %s slice(j), slice={%s}\n  ROOT t = (%s, %s) tuple(vs, js)\n}\n" %
            (name, dt, dt, X, shape("s32", dims), r, X, shape("s32", dims), r, X, shape("s32", dims),
             V, sl, I, sl, V, I))
    exp = [(vals, dt), (order.astype(np.float64), "s32")]
    write_case("calls", name, module, [(x, dt)], exp, "rtol=0 atol=0")
    write_case("twins", name, twin, [(x, dt)], exp, "rtol=0 atol=0")


def radix_key(x, dt):
    """CUB's radix order of keys, as unsigned integers."""
    if dt == "f32":
        b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        return np.where(b >> 31, (~b) & 0xFFFFFFFF, b | 0x80000000)
    return x.astype(np.int64) + (1 << 40)


def cub_case(name, kdt, vdt, dims, batch, descending):
    if kdt == "f32":
        keys = round_to(rng.integers(-3, 4, size=dims) / 2.0, kdt)
        keys.flat[0], keys.flat[1] = 0.0, -0.0               # -0 sorts before +0
    else:
        keys = rng.integers(-5, 6, size=dims).astype(np.float64)
    rows = keys.reshape(batch, -1)
    rk = radix_key(rows, kdt).astype(np.float64)
    order = np.argsort(-rk if descending else rk, axis=-1, kind="stable")
    sk = np.take_along_axis(rows, order, -1).reshape(dims)
    K = shape(kdt, dims)
    ins = [(keys, kdt)]
    exp = [(sk, kdt)]
    target = "xla.gpu.ext.cub_sort_keys"
    if vdt:
        vals = draw(dims, vdt)
        ins.append((vals, vdt))
        exp.append((np.take_along_axis(vals.reshape(batch, -1), order, -1).reshape(dims), vdt))
        target = "xla.gpu.ext.cub_sort_pairs"
    V = shape(vdt, dims) if vdt else None
    res = ", ".join([K] + ([V] if V else []) + ["u8[256]{0}"])
    ops = "%k" + (", %v" if vdt else "")
    module = ("HloModule %s\n\nENTRY %%main {\n  %%k = %s parameter(0)\n%s"
              "  %%cc = (%s) custom-call(%s), custom_call_target=\"%s\", api_version=API_VERSION_TYPED_FFI, "
              "backend_config={descending = %s, batch_size = %d : i64}\n" %
              (name, K, "  %%v = %s parameter(1)\n" % V if V else "", res, ops, target,
               str(descending).lower(), batch))
    if vdt:
        module += ("  %%a = %s get-tuple-element(%%cc), index=0\n  %%b = %s get-tuple-element(%%cc), index=1\n"
                   "  ROOT %%t = (%s, %s) tuple(%%a, %%b)\n}\n" % (K, V, K, V))
    else:
        module += "  ROOT %%a = %s get-tuple-element(%%cc), index=0\n}\n" % K
    R = "%s[%d,%d]" % (kdt, batch, keys.size // batch)
    RV = "%s[%d,%d]" % (vdt, batch, keys.size // batch) if vdt else None
    cmp = "cmp {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n" % (kdt, kdt)
    if vdt:
        cmp += "  c = %s[] parameter(2)\n  d = %s[] parameter(3)\n" % (vdt, vdt)
    cmp += "  ROOT g = pred[] compare(a, b), direction=%s%s\n}\n" % (
        "GT" if descending else "LT", ", type=TOTALORDER" if kdt == "f32" else "")
    body = "  k = %s parameter(0)\n  kr = %s reshape(k)\n" % (K, R)
    if vdt:
        body += ("  v = %s parameter(1)\n  vr = %s reshape(v)\n  s = (%s, %s) sort(kr, vr), dimensions={1}, "
                 "is_stable=true, to_apply=cmp\n  a = %s get-tuple-element(s), index=0\n"
                 "  b = %s get-tuple-element(s), index=1\n  ao = %s reshape(a)\n  bo = %s reshape(b)\n"
                 "  ROOT t = (%s, %s) tuple(ao, bo)\n" % (V, RV, R, RV, R, RV, K, V, K, V))
    else:
        body += "  s = %s sort(kr), dimensions={1}, is_stable=true, to_apply=cmp\n  ROOT o = %s reshape(s)\n" % (R, K)
    twin = "HloModule %s_twin\n\n%s\nENTRY main {\n%s}\n" % (name, cmp, body)
    write_case("calls", name, module, ins, exp, "rtol=0 atol=0")
    write_case("twins", name, twin, ins, exp, "rtol=0 atol=0")


def fusion_case(name, kind, extra_cfg, with_nop):
    """A kCustom fusion: evaluated from its body whatever its backend kind."""
    a, b = draw([4, 8], "f32"), draw([8, 3], "f32")
    y = np.maximum(a @ b, 0)
    ws = "u8[0]{0}"
    out = "(f32[4,3]{1,0}, %s)" % ws if with_nop else "f32[4,3]{1,0}"
    body = ("%%fused_%s (p0: f32[4,8], p1: f32[8,3]) -> %s {\n  %%p0 = f32[4,8]{1,0} parameter(0)\n"
            "  %%p1 = f32[8,3]{1,0} parameter(1)\n  %%d = f32[4,3]{1,0} dot(%%p0, %%p1), "
            "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  %%z = f32[] constant(0)\n"
            "  %%zb = f32[4,3]{1,0} broadcast(%%z), dimensions={}\n" % (name, out))
    if with_nop:
        body += ("  %%m = f32[4,3]{1,0} maximum(%%d, %%zb)\n  %%w = %s custom-call(), custom_call_target=\"__nop\"\n"
                 "  ROOT %%t = %s tuple(%%m, %%w)\n}\n" % (ws, out))
    else:
        body += "  ROOT %m = f32[4,3]{1,0} maximum(%d, %zb)\n}\n"
    cfg = {"operation_queue_id": "0", "wait_on_operation_queues": [],
           "fusion_backend_config": dict({"kind": kind}, **extra_cfg), "force_earliest_schedule": False}
    entry = ("ENTRY %%main {\n  %%a = f32[4,8]{1,0} parameter(0)\n  %%b = f32[8,3]{1,0} parameter(1)\n"
             "  %%f = %s fusion(%%a, %%b), kind=kCustom, calls=%%fused_%s, backend_config=%s\n" %
             (out, name, json.dumps(cfg, separators=(",", ":"))))
    entry += ("  ROOT %r = f32[4,3]{1,0} get-tuple-element(%f), index=0\n}\n" if with_nop
              else "  ROOT %r = f32[4,3]{1,0} copy(%f)\n}\n")
    module = "HloModule %s\n\n%s\n%s" % (name, body, entry)
    twin = ("HloModule %s_twin\n\nENTRY main {\n  a = f32[4,8] parameter(0)\n  b = f32[8,3] parameter(1)\n"
            "  d = f32[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
            "  z = f32[] constant(0)\n  zb = f32[4,3] broadcast(z), dimensions={}\n"
            "  ROOT m = f32[4,3] maximum(d, zb)\n}\n" % name)
    ins, exp = [(a, "f32"), (b, "f32")], [(y, "f32")]
    write_case("calls", name, module, ins, exp, TOL["f32"])
    write_case("twins", name, twin, ins, exp, TOL["f32"])


def fmha_case(name, dt, B, T, S, N, H, causal, bias, stats, scale=0.5, mask=None):
    q, k, v = draw([B, T, N, H], dt), draw([B, S, N, H], dt), draw([B, S, N, H], dt)
    sc = scale * np.einsum("btnh,bsnh->bnts", q, k)
    ins = [(q, dt), (k, dt), (v, dt)]
    if bias:
        bb = draw([B, 1, T, S], dt)
        sc = sc + bb
        ins.append((bb, dt))
    if causal:
        sc = np.where(np.arange(S)[None, :] > np.arange(T)[:, None], -np.inf, sc)
    mx = sc.max(-1, keepdims=True)
    e = np.exp(sc - mx)
    p = e / e.sum(-1, keepdims=True)
    o = np.einsum("bnts,bsnh->bnth", p, v)
    lse = (mx[..., 0] + np.log(e.sum(-1)))
    exp = [(round_to(o, dt), dt)] + ([(round_to(lse, "f32"), "f32")] if stats else [])
    target = "__cudnn$fmhaScaleBiasSoftmax" if bias else "__cudnn$fmhaSoftmax"
    cfg = {"operation_queue_id": "0", "wait_on_operation_queues": [], "cudnn_fmha_backend_config": {
        "algorithm": {"algo_id": "0", "math_type": "TENSOR_OP_MATH", "tuning_knobs": {"17": "1", "24": "0"},
                      "is_cudnn_frontend": True, "workspace_size": "0"},
        "fmha_scale": scale, "dropout_rate": 0,
        "intermediate_tensor_shape": {"element_type": "BF16", "dimensions": [str(B), str(N), str(T), str(S)],
                                      "tuple_shapes": [], "layout": {"dim_level_types": [], "dim_unique": [],
                                      "dim_ordered": [], "minor_to_major": ["3", "2", "1", "0"],
                                      "tail_padding_alignment_in_elements": "1"}, "is_dynamic_dimension": [False] * 4},
        "seed": "42", "is_flash_attention": True,
        "mask_type": mask or ("CAUSAL" if causal else "NO_MASK"),
        "bmm1_dot_dimension_numbers": {"lhs_contracting_dimensions": ["3"], "rhs_contracting_dimensions": ["3"],
                                       "lhs_batch_dimensions": ["0", "2"], "rhs_batch_dimensions": ["0", "2"]},
        "bmm2_dot_dimension_numbers": {"lhs_contracting_dimensions": ["3"], "rhs_contracting_dimensions": ["1"],
                                       "lhs_batch_dimensions": ["0", "1"], "rhs_batch_dimensions": ["0", "2"]},
        "sliding_window_length": 0}}
    O = "%s[%d,%d,%d,%d]{3,1,2,0}" % (dt, B, N, T, H)
    ST = "f32[%d,%d,%d]{2,1,0}" % (B, N, T)
    res = ", ".join([O] + ([ST] if stats else []) + ["u8[0]{0}"])
    names = ["q", "k", "v"] + (["bias"] if bias else [])
    params = "\n".join("  %%%s = %s parameter(%d)" % (n, shape(x[1], x[0].shape), i)
                       for i, (n, x) in enumerate(zip(names, ins)))
    module = ("HloModule %s\n\nENTRY %%main {\n%s\n  %%cc = (%s) custom-call(%s), custom_call_target=\"%s\", "
              "operand_layout_constraints={%s}, api_version=API_VERSION_STATUS_RETURNING, backend_config=%s\n" %
              (name, params, res, ", ".join("%" + n for n in names), target,
               ", ".join(shape(x[1], x[0].shape) for x in ins), json.dumps(cfg, separators=(",", ":"))))
    if stats:
        module += ("  %%o = %s get-tuple-element(%%cc), index=0\n  %%s = %s get-tuple-element(%%cc), index=1\n"
                   "  ROOT %%t = (%s, %s) tuple(%%o, %%s)\n}\n" % (O, ST, O, ST))
    else:
        module += "  ROOT %%o = %s get-tuple-element(%%cc), index=0\n}\n" % O
    SS = "f32[%d,%d,%d,%d]" % (B, N, T, S)
    R = "f32[%d,%d,%d]" % (B, N, T)
    L = ["  %s = %s parameter(%d)\n  %s_c = %s convert(%s)" % (n, shape(x[1], x[0].shape), i, n,
                                                              shape("f32", x[0].shape), n)
         for i, (n, x) in enumerate(zip(names, ins))]
    L.append("  s0 = %s dot(q_c, k_c), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
             "rhs_contracting_dims={3}\n  al = f32[] constant(%r)\n  alb = %s broadcast(al), dimensions={}\n"
             "  s1 = %s multiply(s0, alb)" % (SS, scale, SS, SS))
    cur = "s1"
    if bias:
        L.append("  br = f32[%d,%d,%d] reshape(bias_c)\n  bb = %s broadcast(br), dimensions={0,2,3}\n  s2 = %s add(s1, bb)"
                 % (B, T, S, SS, SS))
        cur = "s2"
    if causal:
        L.append("  iq = s32[%d,%d,%d,%d] iota(), iota_dimension=2\n  ik = s32[%d,%d,%d,%d] iota(), iota_dimension=3\n"
                 "  gt = pred[%d,%d,%d,%d] compare(ik, iq), direction=GT\n  ni = f32[] constant(-inf)\n"
                 "  nib = %s broadcast(ni), dimensions={}\n  s3 = %s select(gt, nib, %s)"
                 % (B, N, T, S, B, N, T, S, B, N, T, S, SS, SS, cur))
        cur = "s3"
    L.append("  mi = f32[] constant(-inf)\n  m = %s reduce(%s, mi), dimensions={3}, to_apply=max\n"
             "  mb = %s broadcast(m), dimensions={0,1,2}\n  d = %s subtract(%s, mb)\n  e = %s exponential(d)\n"
             "  z = f32[] constant(0)\n  sm = %s reduce(e, z), dimensions={3}, to_apply=sum\n"
             "  smb = %s broadcast(sm), dimensions={0,1,2}\n  p = %s divide(e, smb)\n"
             "  o = f32[%d,%d,%d,%d] dot(p, v_c), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, "
             "rhs_batch_dims={0,2}, rhs_contracting_dims={1}\n  oc = %s[%d,%d,%d,%d] convert(o)"
             % (R, cur, SS, SS, cur, SS, R, SS, SS, B, N, T, H, dt, B, N, T, H))
    if stats:
        L.append("  lg = %s log(sm)\n  st = %s add(m, lg)\n  ROOT t = (%s[%d,%d,%d,%d], %s) tuple(oc, st)"
                 % (R, R, dt, B, N, T, H, R))
    else:
        L.append("  ROOT r = %s[%d,%d,%d,%d] copy(oc)" % (dt, B, N, T, H))
    twin = ("HloModule %s_twin\n\nmax {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] maximum(a, b)\n}\n\n"
            "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n\n"
            "ENTRY main {\n%s\n}\n" % (name, "\n".join(L)))
    write_case("calls", name, module, ins, exp, TOL[dt])
    write_case("twins", name, twin, ins, exp, TOL[dt])


def round_fp(x, mbits, emin):
    """Round to a float format with mbits mantissa bits and minimum normal
    exponent emin (no range limit: callers clamp), half to even."""
    x = np.asarray(x, np.float64)
    e = np.floor(np.log2(np.where(x == 0, 1, np.abs(x))))
    q = np.exp2(np.maximum(e, emin) - mbits)
    return np.round(x / q) * q


def f8_case(name, out_dt, epilogue, d_scale):
    e4 = lambda v: round_fp(np.clip(v, -448, 448), 3, -6)
    a = e4(rng.uniform(-8, 8, size=(4, 16)))
    b = e4(rng.uniform(-8, 8, size=(16, 8)))
    sa, sb = 0.5, 1.5
    t = sa * sb * (a @ b)
    y = np.maximum(t, 0) if "RELU" in epilogue else t
    amax = np.abs(y).max()
    ins = [(a, "f8e4m3fn"), (b, "f8e4m3fn"), (np.array(sa), "f32"), (np.array(sb), "f32")]
    if out_dt == "f8e4m3fn":
        ins.append((np.array(d_scale), "f32"))
        d = e4(np.clip(y * d_scale, -448, 448))
    else:
        d = round_to(y, out_dt)
    exp = [(d, out_dt), (np.array(amax), "f32")]
    dn = {"lhs_contracting_dimensions": ["1"], "rhs_contracting_dimensions": ["0"],
          "lhs_batch_dimensions": [], "rhs_batch_dimensions": []}
    cfg = {"operation_queue_id": "0", "wait_on_operation_queues": [], "gemm_backend_config": {
        "alpha_real": 1, "beta": 0, "dot_dimension_numbers": dn, "alpha_imag": 0,
        "precision_config": {"operand_precision": ["DEFAULT", "DEFAULT"], "algorithm": "ALG_UNSET"},
        "epilogue": epilogue, "damax_output": True, "scale_mode": "1"}}
    names = ["a", "b", "sa", "sb"] + (["sd"] if out_dt == "f8e4m3fn" else [])
    params = "\n".join("  %%%s = %s parameter(%d)" % (n, shape(x[1], x[0].shape), i)
                       for i, (n, x) in enumerate(zip(names, ins)))
    D = shape(out_dt, [4, 8])
    module = ("HloModule %s\n\nENTRY %%main {\n%s\n  %%cc = (%s, f32[], s8[33554432]{0}) custom-call(%s), "
              "custom_call_target=\"__cublas$lt$matmul$f8\", backend_config=%s\n"
              "  %%d = %s get-tuple-element(%%cc), index=0\n  %%m = f32[] get-tuple-element(%%cc), index=1\n"
              "  ROOT %%t = (%s, f32[]) tuple(%%d, %%m)\n}\n" %
              (name, params, D, ", ".join("%" + n for n in names), json.dumps(cfg, separators=(",", ":")),
               D, D))
    L = ["  a = f8e4m3fn[4,16] parameter(0)\n  b = f8e4m3fn[16,8] parameter(1)\n  sa = f32[] parameter(2)\n"
         "  sb = f32[] parameter(3)\n  af = f32[4,16] convert(a)\n  bf = f32[16,8] convert(b)\n"
         "  d0 = f32[4,8] dot(af, bf), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
         "  sab = f32[4,8] broadcast(sa), dimensions={}\n  sbb = f32[4,8] broadcast(sb), dimensions={}\n"
         "  d1 = f32[4,8] multiply(d0, sab)\n  t = f32[4,8] multiply(d1, sbb)"]
    cur = "t"
    if "RELU" in epilogue:
        L.append("  z = f32[] constant(0)\n  zb = f32[4,8] broadcast(z), dimensions={}\n  y = f32[4,8] maximum(t, zb)")
        cur = "y"
    L.append("  ab = f32[4,8] abs(%s)\n  z0 = f32[] constant(0)\n  am = f32[] reduce(ab, z0), dimensions={0,1}, to_apply=max" % cur)
    if out_dt == "f8e4m3fn":
        L.append("  sd = f32[] parameter(4)\n  sdb = f32[4,8] broadcast(sd), dimensions={}\n  ys = f32[4,8] multiply(%s, sdb)\n"
                 "  lo = f32[] constant(-448)\n  lob = f32[4,8] broadcast(lo), dimensions={}\n  hi = f32[] constant(448)\n"
                 "  hib = f32[4,8] broadcast(hi), dimensions={}\n  cl = f32[4,8] clamp(lob, ys, hib)\n"
                 "  o = f8e4m3fn[4,8] convert(cl)" % cur)
    else:
        L.append("  o = %s[4,8] convert(%s)" % (out_dt, cur))
    L.append("  ROOT r = (%s[4,8], f32[]) tuple(o, am)" % out_dt)
    twin = ("HloModule %s_twin\n\nmax {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] maximum(a, b)\n}\n\n"
            "ENTRY main {\n%s\n}\n" % (name, "\n".join(L)))
    tol = "rtol=0 atol=0" if out_dt == "f8e4m3fn" else TOL[out_dt]
    write_case("calls", name, module, ins, exp, tol)
    write_case("twins", name, twin, ins, exp, tol)


def more_cases():
    trsm_case("trsm_left_lower_f32", "f32", [5, 5], [5, 3], True, True, False, "NO_TRANSPOSE")
    trsm_case("trsm_right_upper_t_f64", "f64", [2, 4, 4], [2, 3, 4], False, False, False, "TRANSPOSE")
    trsm_case("trsm_left_unit_f32", "f32", [4, 4], [4, 2], True, True, True, "NO_TRANSPOSE")
    topk_case("topk_f32", "f32", [3, 10], 4)
    topk_case("topk_bf16", "bf16", [12], 5)
    cub_case("cub_keys_f32", "f32", None, [2, 9], 2, False)
    cub_case("cub_keys_desc_f32", "f32", None, [16], 1, True)
    cub_case("cub_pairs_s32_f32", "s32", "f32", [3, 7], 3, True)
    f8_case("f8_to_f32_damax", "f32", "DEFAULT", None)
    f8_case("f8_to_f8_relu_saturating", "f8e4m3fn", "RELU", 3.5)
    fmha_case("fmha_softmax_f32", "f32", 1, 4, 5, 2, 3, False, False, False)
    fmha_case("fmha_causal_stats_bf16", "bf16", 2, 6, 6, 2, 4, True, False, True)
    fmha_case("fmha_bias_causal_f16", "f16", 1, 5, 5, 3, 4, True, True, True, scale=0.25)
    fusion_case("fusion_triton_gemm", "__triton_gemm",
                {"triton_gemm_config": {"block_m": "16", "block_n": "16", "block_k": "32",
                                        "split_k": "1", "num_stages": "1", "num_warps": "4",
                                        "num_ctas": "1"}}, False)
    fusion_case("fusion_triton", "__triton",
                {"block_level_fusion_config": {"output_tiles": [{"sizes": ["1", "4"]}],
                                               "num_warps": "1"}}, False)
    fusion_case("fusion_custom", "__custom_fusion", {"custom_fusion_config": {"name": "cutlass_gemm"}}, False)
    fusion_case("fusion_cudnn_nop", "__cudnn$fusion", {"cudnn_fusion_config": {"plan_id": "3"}}, True)
    gpu2_cases()


# ---- cuDNN layer norm (__cudnn$norm) ------------------------------------------

NORM_ALG = {"algo_id": "0", "math_type": "TENSOR_OP_MATH", "tuning_knobs": {},
            "is_cudnn_frontend": True, "workspace_size": "4194304"}
SUMC = ("sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n\n")


def norm_case(name, kind, dt, xs, eps=1e-3):
    """Layer norm over every dimension of xs but the first, as XLA's
    CudnnNormRewriter calls cuDNN: the operand bitcast to [N, d1, .., 1] (rank
    4), scale and bias to [1, d1, .., 1]."""
    N, rest = xs[0], list(xs[1:])
    c4 = [N] + rest + [1] * (3 - len(rest))
    s4 = [1] + c4[1:]
    n = int(np.prod(rest))
    x = draw(xs, dt)
    sc, bi = draw(rest, dt), draw(rest, dt)
    ax = tuple(range(1, len(xs)))
    mean = x.mean(axis=ax)
    xc = x - mean.reshape([N] + [1] * len(rest))
    var = (xc * xc).mean(axis=ax)
    nf = 1 / np.sqrt(var + eps)
    nfb = nf.reshape([N] + [1] * len(rest))
    cfg = {"operation_queue_id": "0", "wait_on_operation_queues": [], "cudnn_norm_backend_config": {
        "epsilon": eps, "algorithm": NORM_ALG, "kind": kind}}
    C = json.dumps(cfg, separators=(",", ":"))
    X4, S4, R4 = shape(dt, c4), shape(dt, s4), shape("f32", [N, 1, 1, 1])
    XS, RS, SS = shape(dt, xs), shape(dt, rest), shape("f32", xs)
    rdims = "{%s}" % ",".join(str(i) for i in ax)
    kdims = "{%s}" % ",".join(str(i) for i in range(1, len(xs)))
    if kind != "LAYER_BWD":
        y = xc * nfb * sc + bi
        ins = [(x, dt), (sc, dt), (bi, dt)]
        train = kind == "LAYER_FWD_TRAIN"
        exp = [(round_to(y, dt), dt)] + ([(round_to(mean, "f32"), "f32"), (round_to(nf, "f32"), "f32")]
                                         if train else [])
        res = [X4] + ([R4, R4] if train else []) + ["u8[4194304]{0}"]
        L = ["  %%x = %s parameter(0)\n  %%xb = %s bitcast(%%x)" % (XS, X4),
             "  %%s = %s parameter(1)\n  %%sb = %s bitcast(%%s)" % (RS, S4),
             "  %%b = %s parameter(2)\n  %%bb = %s bitcast(%%b)" % (RS, S4),
             "  %%cc = (%s) custom-call(%%xb, %%sb, %%bb), custom_call_target=\"__cudnn$norm\", "
             "backend_config=%s" % (", ".join(res), C),
             "  %%g0 = %s get-tuple-element(%%cc), index=0\n  %%y = %s bitcast(%%g0)" % (X4, XS)]
        if train:
            L.append("  %%g1 = %s get-tuple-element(%%cc), index=1\n  %%m = f32[%d]{0} bitcast(%%g1)\n"
                     "  %%g2 = %s get-tuple-element(%%cc), index=2\n  %%f = f32[%d]{0} bitcast(%%g2)\n"
                     "  ROOT %%t = (%s, f32[%d]{0}, f32[%d]{0}) tuple(%%y, %%m, %%f)" % (R4, N, R4, N, XS, N, N))
        else:
            L[-1] = L[-1].replace("  %y =", "  ROOT %y =")
        module = "HloModule %s\n\nENTRY %%main {\n%s\n}\n" % (name, "\n".join(L))
        # The twin: XLA's layer-norm pattern (the rewriter's input) in f32.
        T = ["  x = %s parameter(0)\n  xf = %s convert(x)" % (XS, SS),
             "  s = %s parameter(1)\n  sf = f32[%s] convert(s)" % (RS, ",".join(map(str, rest))),
             "  b = %s parameter(2)\n  bf = f32[%s] convert(b)" % (RS, ",".join(map(str, rest))),
             "  z = f32[] constant(0)\n  rn = f32[] constant(%r)\n  rnb = f32[%d] broadcast(rn), dimensions={}" % (1.0 / n, N),
             "  su = f32[%d] reduce(xf, z), dimensions=%s, to_apply=sum\n  mean = f32[%d] multiply(su, rnb)" % (N, rdims, N),
             "  mb = %s broadcast(mean), dimensions={0}\n  xc = %s subtract(xf, mb)\n  sq = %s multiply(xc, xc)" % (SS, SS, SS),
             "  vs = f32[%d] reduce(sq, z), dimensions=%s, to_apply=sum\n  var = f32[%d] multiply(vs, rnb)" % (N, rdims, N),
             "  ep = f32[] constant(%r)\n  epb = f32[%d] broadcast(ep), dimensions={}\n  ve = f32[%d] add(var, epb)" % (eps, N, N),
             "  nf = f32[%d] rsqrt(ve)\n  nfb = %s broadcast(nf), dimensions={0}\n  nrm = %s multiply(xc, nfb)" % (N, SS, SS),
             "  sb = %s broadcast(sf), dimensions=%s\n  bb = %s broadcast(bf), dimensions=%s" % (SS, kdims, SS, kdims),
             "  ys = %s multiply(nrm, sb)\n  yf = %s add(ys, bb)\n  y = %s convert(yf)" % (SS, SS, XS)]
        T.append("  ROOT t = (%s, f32[%d], f32[%d]) tuple(y, mean, nf)" % (XS, N, N) if train
                 else "  ROOT r = %s copy(y)" % XS)
    else:
        dy = draw(xs, dt)
        mean32, nf32 = round_to(mean, "f32"), round_to(nf, "f32")
        xc = x - mean32.reshape([N] + [1] * len(rest))
        nfb = nf32.reshape([N] + [1] * len(rest))
        g = sc * dy
        f2 = nfb * g
        f0 = (xc * g).sum(axis=ax).reshape(nfb.shape)
        f1 = -xc * f0 * nfb ** 3 / n
        dx = f1 + f2 - (f1 + f2).mean(axis=ax).reshape(nfb.shape)
        # the analytic gradient of layer norm agrees (the saved statistics
        # are the forward's, to f32 rounding)
        xh = xc * nfb
        ref = nfb * (g - g.mean(axis=ax, keepdims=True) - xh * (g * xh).mean(axis=ax, keepdims=True))
        assert np.allclose(dx, ref, rtol=1e-5, atol=1e-5)
        dsc = (dy * xc * nfb).sum(axis=0)
        dbi = dy.sum(axis=0)
        ins = [(x, dt), (sc, dt), (dy, dt), (mean32, "f32"), (nf32, "f32")]
        exp = [(round_to(dx, dt), dt), (round_to(dsc, dt), dt), (round_to(dbi, dt), dt)]
        res = [X4, S4, S4, "u8[4194304]{0}"]
        L = ["  %%x = %s parameter(0)\n  %%xb = %s bitcast(%%x)" % (XS, X4),
             "  %%s = %s parameter(1)\n  %%sb = %s bitcast(%%s)" % (RS, S4),
             "  %%dy = %s parameter(2)\n  %%dyb = %s bitcast(%%dy)" % (XS, X4),
             "  %%m = f32[%d]{0} parameter(3)\n  %%mb = %s bitcast(%%m)" % (N, R4),
             "  %%f = f32[%d]{0} parameter(4)\n  %%fb = %s bitcast(%%f)" % (N, R4),
             "  %%cc = (%s) custom-call(%%xb, %%sb, %%dyb, %%mb, %%fb), custom_call_target=\"__cudnn$norm\", "
             "backend_config=%s" % (", ".join(res), C),
             "  %%g0 = %s get-tuple-element(%%cc), index=0\n  %%dx = %s bitcast(%%g0)" % (X4, XS),
             "  %%g1 = %s get-tuple-element(%%cc), index=1\n  %%ds = %s bitcast(%%g1)" % (S4, RS),
             "  %%g2 = %s get-tuple-element(%%cc), index=2\n  %%db = %s bitcast(%%g2)" % (S4, RS),
             "  ROOT %%t = (%s, %s, %s) tuple(%%dx, %%ds, %%db)" % (XS, RS, RS)]
        module = "HloModule %s\n\nENTRY %%main {\n%s\n}\n" % (name, "\n".join(L))
        RF = "f32[%s]" % ",".join(map(str, rest))
        # The twin: the layer-norm gradient in its textbook form,
        # nf·(g - mean(g) - xh·mean(g·xh)), xh = (x - mean)·nf.
        T = ["  x = %s parameter(0)\n  xf = %s convert(x)" % (XS, SS),
             "  s = %s parameter(1)\n  sf = %s convert(s)" % (RS, RF),
             "  dy = %s parameter(2)\n  dyf = %s convert(dy)" % (XS, SS),
             "  mean = f32[%d] parameter(3)\n  nf = f32[%d] parameter(4)" % (N, N),
             "  z = f32[] constant(0)\n  rn = f32[] constant(%r)\n  rnb = f32[%d] broadcast(rn), dimensions={}" % (1.0 / n, N),
             "  mb = %s broadcast(mean), dimensions={0}\n  nfb = %s broadcast(nf), dimensions={0}" % (SS, SS),
             "  xc = %s subtract(xf, mb)\n  xh = %s multiply(xc, nfb)" % (SS, SS),
             "  sb = %s broadcast(sf), dimensions=%s\n  g = %s multiply(sb, dyf)" % (SS, kdims, SS),
             "  gs = f32[%d] reduce(g, z), dimensions=%s, to_apply=sum\n  gm = f32[%d] multiply(gs, rnb)" % (N, rdims, N),
             "  gx = %s multiply(g, xh)\n  gxs = f32[%d] reduce(gx, z), dimensions=%s, to_apply=sum" % (SS, N, rdims),
             "  gxm = f32[%d] multiply(gxs, rnb)\n  gmb = %s broadcast(gm), dimensions={0}" % (N, SS),
             "  gxmb = %s broadcast(gxm), dimensions={0}\n  t1 = %s subtract(g, gmb)" % (SS, SS),
             "  t2 = %s multiply(xh, gxmb)\n  t3 = %s subtract(t1, t2)\n  dxf = %s multiply(nfb, t3)" % (SS, SS, SS),
             "  dx = %s convert(dxf)" % XS,
             "  dh = %s multiply(dyf, xh)\n  dsf = %s reduce(dh, z), dimensions={0}, to_apply=sum" % (SS, RF),
             "  dbf = %s reduce(dyf, z), dimensions={0}, to_apply=sum" % RF,
             "  ds = %s convert(dsf)\n  db = %s convert(dbf)" % (RS, RS),
             "  ROOT t = (%s, %s, %s) tuple(dx, ds, db)" % (XS, RS, RS)]
    twin = "HloModule %s_twin\n\n%sENTRY main {\n%s\n}\n" % (name, SUMC, "\n".join(T))
    write_case("calls", name, module, ins, exp, TOL[dt])
    write_case("twins", name, twin, ins, exp, TOL[dt])


# ---- cuDNN attention: padding masks, backward -----------------------------------

FMHA_ALG = {"algo_id": "0", "math_type": "TENSOR_OP_MATH", "tuning_knobs": {"17": "1", "24": "0"},
            "is_cudnn_frontend": True, "workspace_size": "0"}
MAXSUM = ("max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] maximum(a, b)\n}\n\n"
          "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n\n")
DN = {  # JAX's fused_attention_stablehlo.py, layout BTNH
    "bmm1_dot_dimension_numbers": ([3], [3], [0, 2], [0, 2]),
    "bmm2_dot_dimension_numbers": ([3], [1], [0, 1], [0, 2]),
    "bmm1_grad_gemm1_dot_dimension_numbers": ([2], [1], [0, 1], [0, 2]),
    "bmm1_grad_gemm2_dot_dimension_numbers": ([3], [1], [0, 1], [0, 2]),
    "bmm2_grad_gemm1_dot_dimension_numbers": ([2], [1], [0, 1], [0, 2]),
    "bmm2_grad_gemm2_dot_dimension_numbers": ([3], [3], [0, 2], [0, 2]),
}


def fmha_cfg(keys, scale, mask, B, N, T, S, window=0):
    c = {"algorithm": FMHA_ALG, "fmha_scale": scale, "dropout_rate": 0, "seed": "42",
         "intermediate_tensor_shape": {"element_type": "BF16", "dimensions": [str(B), str(N), str(T), str(S)],
                                       "tuple_shapes": [], "layout": {"minor_to_major": ["3", "2", "1", "0"]},
                                       "is_dynamic_dimension": [False] * 4},
         "is_flash_attention": True, "mask_type": mask, "sliding_window_length": window}
    for k in keys:
        lc, rc, lb, rb = DN[k]
        c[k] = {"lhs_contracting_dimensions": [str(i) for i in lc], "rhs_contracting_dimensions": [str(i) for i in rc],
                "lhs_batch_dimensions": [str(i) for i in lb], "rhs_batch_dimensions": [str(i) for i in rb]}
    return json.dumps({"operation_queue_id": "0", "wait_on_operation_queues": [], "cudnn_fmha_backend_config": c},
                      separators=(",", ":"))


def attn_mask(B, T, S, causal, qlen=None, kvlen=None, window=0):
    """valid[b, t, s] (broadcast over heads later) and qrow[b, t]."""
    t = np.arange(T)[None, :, None]
    s_ = np.arange(S)[None, None, :]
    valid = np.ones((B, T, S), bool)
    if causal:
        valid &= s_ <= t
    if window:
        # cuDNN's sliding window: key s is kept iff s + window > t
        valid &= s_ + window > t
    qrow = np.ones((B, T), bool)
    if qlen is not None:
        valid &= (t < qlen[:, None, None]) & (s_ < kvlen[:, None, None])
        qrow = np.arange(T)[None, :] < qlen[:, None]
    return valid[:, None], qrow[:, None]


def twin_mask_lines(B, N, T, S, causal, padding, first_len_param, window=0):
    """Standard-HLO lines defining pred 'valid' (and 'qv') over f32[B,N,T,S]."""
    P = "%%s[%d,%d,%d,%d]" % (B, N, T, S)
    L = ["  iq = %s iota(), iota_dimension=2\n  ik = %s iota(), iota_dimension=3" % (P % "s32", P % "s32")]
    have = None
    if causal:
        L.append("  cz = %s compare(ik, iq), direction=LE" % (P % "pred"))
        have = "cz"
    if window:
        L.append("  wn = s32[] constant(%d)\n  wnb = %s broadcast(wn), dimensions={}\n  ikw = %s add(ik, wnb)\n"
                 "  wz = %s compare(ikw, iq), direction=GT" % (window, P % "s32", P % "s32", P % "pred"))
        if have:
            L.append("  cwz = %s and(%s, wz)" % (P % "pred", have))
            have = "cwz"
        else:
            have = "wz"
    if padding:
        L.append("  ql = s32[%d] parameter(%d)\n  kl = s32[%d] parameter(%d)\n"
                 "  qlb = %s broadcast(ql), dimensions={0}\n  klb = %s broadcast(kl), dimensions={0}\n"
                 "  qv = %s compare(iq, qlb), direction=LT\n  kv = %s compare(ik, klb), direction=LT\n"
                 "  pv = %s and(qv, kv)" % (B, first_len_param, B, first_len_param + 1, P % "s32", P % "s32",
                                            P % "pred", P % "pred", P % "pred"))
        if have:
            L.append("  valid = %s and(%s, pv)" % (P % "pred", have))
        else:
            L.append("  valid = %s copy(pv)" % (P % "pred"))
    else:
        L.append("  valid = %s copy(%s)" % (P % "pred", have))
    return L


def fmha_pad_case(name, dt, B, T, S, N, H, causal, scale=0.5, window=0):
    q, k, v = draw([B, T, N, H], dt), draw([B, S, N, H], dt), draw([B, S, N, H], dt)
    qlen = np.array([T - 1, 2][:B], np.int64)
    kvlen = np.array([S - 2, S][:B], np.int64)
    sc = scale * np.einsum("btnh,bsnh->bnts", q, k)
    valid, qrow = attn_mask(B, T, S, causal, qlen, kvlen, window)
    sc = np.where(valid, sc, -np.inf)
    sc = np.where(qrow[..., None], sc, 0)
    e = np.exp(sc - sc.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    p = np.where(qrow[..., None], p, 0)
    o = np.einsum("bnts,bsnh->bnth", p, v)
    mask = "PADDING_CAUSAL" if causal else "PADDING"
    ins = [(q, dt), (k, dt), (v, dt), (qlen, "s32"), (kvlen, "s32")]
    O = "%s[%d,%d,%d,%d]{3,1,2,0}" % (dt, B, N, T, H)
    names = ["q", "k", "v", "q_seqlen", "kv_seqlen"]
    params = "\n".join("  %%%s = %s parameter(%d)" % (n, shape(x[1], x[0].shape), i)
                       for i, (n, x) in enumerate(zip(names, ins)))
    module = ("HloModule %s\n\nENTRY %%main {\n%s\n  %%cc = (%s, u8[0]{0}) custom-call(%s), "
              "custom_call_target=\"__cudnn$fmhaSoftmax\", api_version=API_VERSION_STATUS_RETURNING, "
              "backend_config=%s\n  ROOT %%o = %s get-tuple-element(%%cc), index=0\n}\n"
              % (name, params, O, ", ".join("%" + n for n in names),
                 fmha_cfg(["bmm1_dot_dimension_numbers", "bmm2_dot_dimension_numbers"], scale, mask, B, N, T, S,
                          window), O))
    SS = "f32[%d,%d,%d,%d]" % (B, N, T, S)
    R = "f32[%d,%d,%d]" % (B, N, T)
    L = ["  %s = %s parameter(%d)\n  %s_c = %s convert(%s)" % (n, shape(dt, x[0].shape), i, n, shape("f32", x[0].shape), n)
         for i, (n, x) in enumerate(zip(names[:3], ins[:3]))]
    L += twin_mask_lines(B, N, T, S, causal, True, 3, window)
    L.append("  s0 = %s dot(q_c, k_c), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
             "rhs_contracting_dims={3}\n  al = f32[] constant(%r)\n  alb = %s broadcast(al), dimensions={}\n"
             "  s1 = %s multiply(s0, alb)\n  ni = f32[] constant(-inf)\n  nib = %s broadcast(ni), dimensions={}\n"
             "  zz = f32[] constant(0)\n  zb = %s broadcast(zz), dimensions={}\n"
             "  s2 = %s select(valid, s1, nib)\n  s3 = %s select(qv, s2, zb)" % (SS, scale, SS, SS, SS, SS, SS, SS))
    L.append("  mi = f32[] constant(-inf)\n  m = %s reduce(s3, mi), dimensions={3}, to_apply=max\n"
             "  mb = %s broadcast(m), dimensions={0,1,2}\n  d = %s subtract(s3, mb)\n  e = %s exponential(d)\n"
             "  sm = %s reduce(e, zz), dimensions={3}, to_apply=sum\n"
             "  smb = %s broadcast(sm), dimensions={0,1,2}\n  p0 = %s divide(e, smb)\n  p = %s select(qv, p0, zb)\n"
             "  o = f32[%d,%d,%d,%d] dot(p, v_c), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, "
             "rhs_batch_dims={0,2}, rhs_contracting_dims={1}\n  ROOT oc = %s[%d,%d,%d,%d] convert(o)"
             % (R, SS, SS, SS, R, SS, SS, SS, B, N, T, H, dt, B, N, T, H))
    twin = "HloModule %s_twin\n\n%sENTRY main {\n%s\n}\n" % (name, MAXSUM, "\n".join(L))
    exp = [(round_to(o, dt), dt)]
    write_case("calls", name, module, ins, exp, TOL[dt])
    write_case("twins", name, twin, ins, exp, TOL[dt])


def attn_fwd64(q, k, v, bias, scale, valid):
    sc = scale * np.einsum("btnh,bsnh->bnts", q, k)
    if bias is not None:
        sc = sc + bias
    sc = np.where(valid, sc, -np.inf)
    mx = sc.max(-1, keepdims=True)
    e = np.exp(sc - mx)
    p = e / e.sum(-1, keepdims=True)
    return p, np.einsum("bnts,bsnh->btnh", p, v), mx[..., 0] + np.log(e.sum(-1))


def fmha_bwd_case(name, dt, B, T, S, N, H, causal, bias, dbias, scale=0.5, window=0):
    q, k, v = draw([B, T, N, H], dt), draw([B, S, N, H], dt), draw([B, S, N, H], dt)
    bb = draw([1, N, T, S], dt) if bias else None
    dO = draw([B, T, N, H], dt)
    valid, _ = attn_mask(B, T, S, causal, window=window)
    p, o, lse = attn_fwd64(q, k, v, bb, scale, valid)
    O = round_to(o, dt)                  # the forward's output, in its type
    stats = round_to(lse, "f32")
    # cuDNN's backward from the saved statistics and output
    sc = scale * np.einsum("btnh,bsnh->bnts", q, k) + (bb if bias else 0)
    P = np.where(valid, np.exp(np.where(valid, sc, 0) - stats[..., None]), 0)
    dP = np.einsum("btnh,bsnh->bnts", dO, v)
    D = np.einsum("btnh,btnh->bnt", dO, O)
    dS = P * (dP - D[..., None])
    dV = np.einsum("bnts,btnh->bnsh", P, dO)
    dQ = scale * np.einsum("bnts,bsnh->bnth", dS, k)
    dK = scale * np.einsum("bnts,btnh->bnsh", dS, q)
    dB = dS.sum(0, keepdims=True)
    # independent check: central differences of L = sum(O(q, k, v, bias) * dO)
    def loss(q_, k_, v_, b_):
        return float((attn_fwd64(q_, k_, v_, b_, scale, valid)[1] * dO).sum())
    h = 1e-6
    for arr, grad, perm in ((q, dQ, (0, 2, 1, 3)), (k, dK, (0, 2, 1, 3)), (v, dV, (0, 2, 1, 3))):
        idx = (0, 1, 1, 2)
        a2 = arr.copy(); a2[idx] += h
        a1 = arr.copy(); a1[idx] -= h
        args1 = [q, k, v, bb]; args2 = [q, k, v, bb]
        which = 0 if arr is q else 1 if arr is k else 2
        args1[which], args2[which] = a1, a2
        fd = (loss(*args2) - loss(*args1)) / (2 * h)
        g = np.transpose(grad, perm)[idx]
        assert abs(fd - g) < 2e-3 * (1 + abs(g)), (name, which, fd, g)
    if bias:
        idx = (0, 1, 2, 1)
        b2 = bb.copy(); b2[idx] += h
        b1 = bb.copy(); b1[idx] -= h
        fd = (loss(q, k, v, b2) - loss(q, k, v, b1)) / (2 * h)
        assert abs(fd - dB[idx]) < 2e-3 * (1 + abs(dB[idx])), (name, fd, dB[idx])
    target = "__cudnn$fmhaScaleBiasSoftmaxBackward" if bias else "__cudnn$fmhaSoftmaxBackward"
    mask = "CAUSAL" if causal else "NO_MASK"
    names = ["q", "k", "v", "stats", "dO"] + (["bias"] if bias else []) + ["O"]
    ins = [(q, dt), (k, dt), (v, dt), (stats, "f32"), (dO, dt)] + ([(bb, dt)] if bias else []) + [(O, dt)]
    rq = "%s[%d,%d,%d,%d]{3,1,2,0}" % (dt, B, N, T, H)
    rk = "%s[%d,%d,%d,%d]{3,1,2,0}" % (dt, B, N, S, H)
    rb = shape(dt, [1, N, T, S])
    res = [rq, rk, rk] + ([rb] if dbias else []) + ["u8[0]{0}"]
    params = "\n".join("  %%%s = %s parameter(%d)" % (n, shape(x[1], x[0].shape), i)
                       for i, (n, x) in enumerate(zip(names, ins)))
    keys = [k_ for k_ in DN if "grad" in k_]
    outs = [rq, rk, rk] + ([rb] if dbias else [])
    gtes = "\n".join("  %%g%d = %s get-tuple-element(%%cc), index=%d" % (i, r, i) for i, r in enumerate(outs))
    module = ("HloModule %s\n\nENTRY %%main {\n%s\n  %%cc = (%s) custom-call(%s), custom_call_target=\"%s\", "
              "api_version=API_VERSION_STATUS_RETURNING, backend_config=%s\n%s\n  ROOT %%t = (%s) tuple(%s)\n}\n"
              % (name, params, ", ".join(res), ", ".join("%" + n for n in names), target,
                 fmha_cfg(keys, scale, mask, B, N, T, S, window), gtes, ", ".join(outs),
                 ", ".join("%%g%d" % i for i in range(len(outs)))))
    exp = [(round_to(dQ, dt), dt), (round_to(dK, dt), dt), (round_to(dV, dt), dt)] + \
          ([(round_to(dB, dt), dt)] if dbias else [])
    # The twin: the same gradients in standard HLO.
    SS = "f32[%d,%d,%d,%d]" % (B, N, T, S)
    R = "f32[%d,%d,%d]" % (B, N, T)
    L = []
    for i, (n, x) in enumerate(zip(names, ins)):
        L.append("  %s = %s parameter(%d)" % (n, shape(x[1], x[0].shape), i))
        if x[1] != "f32":
            L.append("  %s_c = %s convert(%s)" % (n, shape("f32", x[0].shape), n))
        else:
            L.append("  %s_c = %s copy(%s)" % (n, shape("f32", x[0].shape), n))
    L.append("  s0 = %s dot(q_c, k_c), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
             "rhs_contracting_dims={3}\n  al = f32[] constant(%r)\n  alb = %s broadcast(al), dimensions={}\n"
             "  s1 = %s multiply(s0, alb)" % (SS, scale, SS, SS))
    cur = "s1"
    if bias:
        L.append("  br = f32[%d,%d,%d] reshape(bias_c)\n  bb = %s broadcast(br), dimensions={1,2,3}\n  s2 = %s add(s1, bb)"
                 % (N, T, S, SS, SS))
        cur = "s2"
    L.append("  stb = %s broadcast(stats_c), dimensions={0,1,2}\n  sd = %s subtract(%s, stb)\n  p0 = %s exponential(sd)"
             % (SS, SS, cur, SS))
    cur = "p0"
    if causal or window:
        L += twin_mask_lines(B, N, T, S, causal, False, 0, window)
        L.append("  zz = f32[] constant(0)\n  zb = %s broadcast(zz), dimensions={}\n  p = %s select(valid, p0, zb)" % (SS, SS))
    else:
        L.append("  p = %s copy(p0)" % SS)
    L.append("  dp = %s dot(dO_c, v_c), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
             "rhs_contracting_dims={3}" % SS)
    L.append("  od = f32[%d,%d,%d,%d] multiply(dO_c, O_c)\n  z0 = f32[] constant(0)\n"
             "  dsum = f32[%d,%d,%d] reduce(od, z0), dimensions={3}, to_apply=sum\n"
             "  dd = %s transpose(dsum), dimensions={0,2,1}\n  ddb = %s broadcast(dd), dimensions={0,1,2}\n"
             "  dpd = %s subtract(dp, ddb)\n  ds = %s multiply(p, dpd)" % (B, T, N, H, B, T, N, R, SS, SS, SS))
    FQ = "f32[%d,%d,%d,%d]" % (B, N, T, H)
    FK = "f32[%d,%d,%d,%d]" % (B, N, S, H)
    L.append("  dq0 = %s dot(ds, k_c), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
             "rhs_contracting_dims={1}\n  sq = %s broadcast(al), dimensions={}\n  dq1 = %s multiply(dq0, sq)\n"
             "  dq = %s convert(dq1)" % (FQ, FQ, FQ, rq.split("{")[0]))
    L.append("  dk0 = %s dot(ds, q_c), lhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_batch_dims={0,2}, "
             "rhs_contracting_dims={1}\n  sk = %s broadcast(al), dimensions={}\n  dk1 = %s multiply(dk0, sk)\n"
             "  dk = %s convert(dk1)" % (FK, FK, FK, rk.split("{")[0]))
    L.append("  dv0 = %s dot(p, dO_c), lhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_batch_dims={0,2}, "
             "rhs_contracting_dims={1}\n  dv = %s convert(dv0)" % (FK, rk.split("{")[0]))
    tw = ["dq", "dk", "dv"]
    if dbias:
        L.append("  db0 = f32[%d,%d,%d] reduce(ds, z0), dimensions={0}, to_apply=sum\n"
                 "  db1 = f32[1,%d,%d,%d] reshape(db0)\n  db = %s convert(db1)" % (N, T, S, N, T, S, rb.split("{")[0]))
        tw.append("db")
    L.append("  ROOT t = (%s) tuple(%s)" % (", ".join(r.split("{")[0] for r in outs), ", ".join(tw)))
    twin = "HloModule %s_twin\n\n%sENTRY main {\n%s\n}\n" % (name, MAXSUM, "\n".join(L))
    write_case("calls", name, module, ins, exp, TOL[dt])
    write_case("twins", name, twin, ins, exp, TOL[dt])


# ---- __cublas$lt$groupedMatmul (a ragged-dot) ------------------------------------

def grouped_case(name, dt, gdt, mode, a_dims, b_dims, sizes, alpha=1.0):
    """mode: 'rows' (lhs dim 0 ragged, rhs dim 0 the group), 'contract' (lhs
    dim 1 ragged and contracting, one result per group), 'batch_rows'
    (batch dim 0, lhs dim 1 ragged, rhs dim 1 the group, sizes per batch)."""
    a, b = draw(a_dims, dt), draw(b_dims, dt)
    gs = np.array(sizes, np.int64)
    if mode == "rows":
        out = np.zeros((a_dims[0], b_dims[2]))
        st = 0
        for g, n in enumerate(sizes):
            out[st:st + n] = a[st:st + n] @ b[g]
            st += n
        dn = ([1], [1], [], [], [0], [0])
    elif mode == "contract":
        out = np.zeros((len(sizes), a_dims[0], b_dims[1]))
        st = 0
        for g, n in enumerate(sizes):
            out[g] = a[:, st:st + n] @ b[st:st + n]
            st += n
        dn = ([1], [0], [], [], [1], [])
    else:
        out = np.zeros((a_dims[0], a_dims[1], b_dims[3]))
        for bi in range(a_dims[0]):
            st = 0
            for g, n in enumerate(sizes[bi]):
                out[bi, st:st + n] = a[bi, st:st + n] @ b[bi, g]
                st += n
        dn = ([2], [2], [0], [0], [1], [1])
    out = alpha * out
    lc, rc, lb, rb, lr, rg = dn
    L = lambda v: [str(i) for i in v]
    dd = {"lhs_contracting_dimensions": L(lc), "rhs_contracting_dimensions": L(rc),
          "lhs_batch_dimensions": L(lb), "rhs_batch_dimensions": L(rb)}
    cfg = {"operation_queue_id": "0", "wait_on_operation_queues": [], "force_earliest_schedule": False,
           "reification_cost": [], "device_type": "DEVICE_TYPE_INVALID",
           "grouped_gemm_backend_config": {
               "gemm_backend_config": {"alpha_real": alpha, "beta": 0, "dot_dimension_numbers": dd,
                                       "alpha_imag": 0, "epilogue": "DEFAULT", "grad_x": False,
                                       "grad_y": False, "damax_output": False,
                                       "autotune_workspace_size": "4194304"},
               "ragged_dot_dimension_numbers": {"dot_dimension_numbers": dd,
                                                "lhs_ragged_dimensions": L(lr),
                                                "rhs_group_dimensions": L(rg)}}}
    ins = [(a, dt), (b, dt), (gs, gdt)]
    R = shape(dt, out.shape)
    module = ("HloModule %s\n\nENTRY %%main {\n  %%p0 = %s parameter(0)\n  %%p1 = %s parameter(1)\n"
              "  %%p2 = %s parameter(2)\n  %%cc = (%s, s8[4194304]{0}) custom-call(%%p0, %%p1, %%p2), "
              "custom_call_target=\"__cublas$lt$groupedMatmul\", backend_config=%s\n"
              "  ROOT %%r = %s get-tuple-element(%%cc), index=0\n}\n"
              % (name, shape(dt, a.shape), shape(dt, b.shape), shape(gdt, gs.shape), R,
                 json.dumps(cfg, separators=(",", ":")), R))
    attrs = "lhs_contracting_dims={%s}, rhs_contracting_dims={%s}" % (",".join(L(lc)), ",".join(L(rc)))
    if lb:
        attrs += ", lhs_batch_dims={%s}, rhs_batch_dims={%s}" % (",".join(L(lb)), ",".join(L(rb)))
    attrs += ", lhs_ragged_dims={%s}" % ",".join(L(lr))
    if rg:
        attrs += ", rhs_group_dims={%s}" % ",".join(L(rg))
    F = shape("f32", out.shape)
    twin = ("HloModule %s_twin\n\nENTRY main {\n  p0 = %s parameter(0)\n  p1 = %s parameter(1)\n"
            "  p2 = %s parameter(2)\n  c0 = %s convert(p0)\n  c1 = %s convert(p1)\n"
            "  d = %s ragged-dot(c0, c1, p2), %s\n  al = f32[] constant(%r)\n  alb = %s broadcast(al), dimensions={}\n"
            "  m = %s multiply(d, alb)\n  ROOT r = %s convert(m)\n}\n"
            % (name, shape(dt, a.shape), shape(dt, b.shape), shape(gdt, gs.shape), shape("f32", a.shape),
               shape("f32", b.shape), F, attrs, alpha, F, F, R))
    exp = [(round_to(out, dt), dt)]
    write_case("calls", name, module, ins, exp, TOL[dt])
    write_case("twins", name, twin, ins, exp, TOL[dt])


# ---- __cudnn$blockScaledDot (MXFP8 / NVFP4) ----------------------------------------

GRID = {"f8e4m3fn": [0, 0.25, 0.5, 0.75, 1, 1.5, 2, 3], "f8e5m2": [0, 0.25, 0.5, 0.75, 1, 1.5, 2, 3],
        "f4e2m1fn": [0, 0.5, 1, 1.5, 2, 3, 4, 6]}
SCALE_GRID = {"f8e8m0fnu": [0.25, 0.5, 1, 2, 4], "f8e4m3fn": [0.5, 1, 1.5, 2]}


def on_grid(shape_, dt):
    v = rng.choice(GRID[dt], size=shape_)
    return v * rng.choice([-1.0, 1.0], size=shape_)


def swizzle(sc, R, C, fill):
    """XLA's PrepareScalingOperand: pad [B,M,kb] to [B,R,C], reshape
    [B,R/128,4,32,C/4,4], transpose {0,1,4,3,2,5}, reshape back."""
    B, M, kb = sc.shape
    p = np.full((B, R, C), float(fill))
    p[:, :M, :kb] = sc
    return p.reshape(B, R // 128, 4, 32, C // 4, 4).transpose(0, 1, 4, 3, 2, 5).reshape(B, R, C)


def block_case(name, ldt, rdt, sdt, bs, B, M, N, K, out_dt, gscale=None, config=False):
    kb = -(-K // bs)
    lhs, rhs = on_grid([B, M, K], ldt), on_grid([B, N, K], rdt)
    ls = rng.choice(SCALE_GRID[sdt], size=[B, M, kb])
    rsc = rng.choice(SCALE_GRID[sdt], size=[B, N, kb])
    ldq = lhs * np.repeat(ls, bs, axis=2)[:, :, :K]
    rdq = rhs * np.repeat(rsc, bs, axis=2)[:, :, :K]
    out = np.einsum("bmk,bnk->bmn", ldq, rdq) * (gscale if gscale is not None else 1)
    R, C = 128, -(-kb // 4) * 4
    fill = SCALE_GRID[sdt][-1]
    lsw, rsw = swizzle(ls, R, C, fill), swizzle(rsc, R, C, fill)
    rank3 = B != 1
    sq = (lambda a: a) if rank3 else (lambda a: a[0])
    ins = [(sq(lhs), ldt), (sq(rhs), rdt), (sq(lsw), sdt), (sq(rsw), sdt)]
    if gscale is not None:
        ins.append((np.array(gscale), out_dt))
    o = sq(out)
    O = shape(out_dt, o.shape)
    params = "\n".join("  %%p%d = %s parameter(%d)" % (i, shape(x[1], x[0].shape), i) for i, x in enumerate(ins))
    cfgtxt = ", backend_config={\"block_scaled_dot_backend_config\":{\"block_size\":\"%d\"}}" % bs if config else ""
    module = ("HloModule %s\n\nENTRY %%main {\n%s\n  %%cc = (%s, u8[0]{0}) custom-call(%s), "
              "custom_call_target=\"__cudnn$blockScaledDot\"%s\n  ROOT %%r = %s get-tuple-element(%%cc), index=0\n}\n"
              % (name, params, O, ", ".join("%%p%d" % i for i in range(len(ins))), cfgtxt, O))
    exp = [(round_to(o, out_dt), out_dt)]
    write_case("calls", name, module, ins, exp, TOL[out_dt])
    # The twin: XLA's expansion of the block-scaled dot (dequantize, dot)
    # on the logical, unswizzled scales.
    tins = [(sq(lhs), ldt), (sq(rhs), rdt), (sq(ls), sdt), (sq(rsc), sdt)] + ins[4:]
    L = ["  p%d = %s parameter(%d)" % (i, shape(x[1], x[0].shape), i) for i, x in enumerate(tins)]
    bd = "0," if rank3 else ""
    for side, (x, sc_, rows) in enumerate(((lhs, ls, M), (rhs, rsc, N))):
        xs = list(sq(x).shape)
        ss = list(sq(sc_).shape)
        L.append("  x%d = %s convert(p%d)\n  s%d = %s convert(p%d)" % (
            side, shape("f32", xs), side, side, shape("f32", ss), 2 + side))
        L.append("  b%d = %s broadcast(s%d), dimensions={%s}" % (
            side, shape("f32", ss + [bs]), side, ",".join(str(i) for i in range(len(ss)))))
        full = ss[:-1] + [ss[-1] * bs]
        L.append("  r%d = %s reshape(b%d)" % (side, shape("f32", full), side))
        cur = "r%d" % side
        if full[-1] != K:
            L.append("  t%d = %s slice(r%d), slice={%s}" % (
                side, shape("f32", xs), side, ", ".join("[0:%d]" % d for d in xs)))
            cur = "t%d" % side
        L.append("  d%d = %s multiply(x%d, %s)" % (side, shape("f32", xs), side, cur))
    F = shape("f32", o.shape)
    dn = "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}" if rank3 \
        else "lhs_contracting_dims={1}, rhs_contracting_dims={1}"
    L.append("  y = %s dot(d0, d1), %s" % (F, dn))
    cur = "y"
    if gscale is not None:
        L.append("  g = f32[] convert(p4)\n  gb = %s broadcast(g), dimensions={}\n  yg = %s multiply(y, gb)" % (F, F))
        cur = "yg"
    L.append("  ROOT r = %s convert(%s)" % (O, cur))
    twin = "HloModule %s_twin\n\nENTRY main {\n%s\n}\n" % (name, "\n".join(L))
    write_case("twins", name, twin, tins, exp, TOL[out_dt])


def gpu2_cases():
    norm_case("norm_infer_f32", "LAYER_FWD_INFER", "f32", [2, 3, 4])
    norm_case("norm_infer_bf16", "LAYER_FWD_INFER", "bf16", [4, 16], eps=1e-5)
    norm_case("norm_train_f32", "LAYER_FWD_TRAIN", "f32", [3, 8])
    norm_case("norm_bwd_f32", "LAYER_BWD", "f32", [3, 2, 5])
    fmha_pad_case("fmha_padding_f32", "f32", 2, 5, 6, 2, 3, False)
    fmha_pad_case("fmha_padding_causal_f32", "f32", 2, 5, 5, 2, 3, True)
    fmha_bwd_case("fmha_bwd_f32", "f32", 2, 4, 5, 2, 3, False, False, False)
    fmha_bwd_case("fmha_bwd_causal_f32", "f32", 1, 5, 5, 2, 4, True, False, False)
    conv_case("conv_bwd_input_grouped_f32", "bwd_input", "f32", "bf01_oi01->bf01", [1, 4, 5, 4],
              [6, 2, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], groups=2)
    conv_case("conv_bwd_input_depthwise_nhwc_f32", "bwd_input", "f32", "b01f_01io->b01f", [1, 5, 4, 3],
              [3, 2, 1, 6], [2, 1], [(1, 1), (1, 0)], [1, 1], groups=3)
    conv_case("conv_bwd_filter_grouped_f32", "bwd_filter", "f32", "bf01_oi01->bf01", [2, 4, 5, 5],
              [6, 2, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], groups=2)
    conv_case("conv_bwd_filter_depthwise_nhwc_f32", "bwd_filter", "f32", "b01f_01io->b01f", [2, 5, 4, 3],
              [3, 2, 1, 3], [2, 1], [(1, 1), (0, 1)], [1, 1], groups=3)
    fmha_bwd_case("fmha_bwd_bias_dbias_f16", "f16", 2, 4, 4, 2, 3, True, True, True, scale=0.25)
    grouped_case("grouped_rows_f32", "f32", "s32", "rows", [10, 5], [3, 5, 4], [2, 5, 2])
    grouped_case("grouped_contract_bf16", "bf16", "s64", "contract", [6, 9], [9, 4], [4, 2, 3], alpha=0.5)
    grouped_case("grouped_batch_rows_f32", "f32", "s32", "batch_rows", [2, 6, 5], [2, 2, 5, 3],
                 [[2, 4], [5, 1]], alpha=2.0)
    block_case("block_mxfp8_f32", "f8e4m3fn", "f8e5m2", "f8e8m0fnu", 32, 1, 5, 3, 64, "f32")
    block_case("block_mxfp8_batch_bf16_gscale", "f8e4m3fn", "f8e4m3fn", "f8e8m0fnu", 32, 2, 4, 6, 96,
               "bf16", gscale=0.5, config=True)
    block_case("block_nvfp4_f32", "f4e2m1fn", "f4e2m1fn", "f8e4m3fn", 16, 1, 3, 4, 48, "f32")
    gpu3_cases()
    graph_cases()
    mx_cases()
    window_cases()
    f8_attention_cases()
    f8_backward_cases()
    packed_paged_cases()
    packed_bwd_cases()


# ---- Issue 21, part 3: complex gemms, the remaining gemm fields -------------

def clit_body(x):
    if x.ndim == 0:
        return "(%r, %r)" % (float(x.real), float(x.imag))
    return "{" + ", ".join(clit_body(v) for v in x) + "}"


def write_case_any(kind, name, module, inputs, expected, tol):
    """write_case for inputs/outputs that may be complex ((x, dt) pairs)."""
    d = os.path.join(ROOT, kind, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "module.hlo"), "w") as f:
        f.write(module)

    def lit(x, dt):
        if dt[0] == "c":
            return "%s[%s] %s" % (dt, ",".join(str(v) for v in x.shape), clit_body(np.asarray(x)))
        return literal(x, dt)
    for i, (x, dt) in enumerate(inputs):
        with open(os.path.join(d, "in%d.txt" % i), "w") as f:
            f.write(lit(x, dt) + "\n")
    with open(os.path.join(d, "expected.txt"), "w") as f:
        if len(expected) == 1:
            f.write(lit(*expected[0]) + "\n")
        else:
            f.write("(" + ", ".join(lit(x, dt) for x, dt in expected) + ")\n")
    with open(os.path.join(d, "tolerance"), "w") as f:
        f.write(tol + "\n")


def cdraw(shape_, dt):
    """Complex values whose parts are exact in dt's part type."""
    pt = "f32" if dt == "c64" else "f64"
    return draw(shape_, pt) + 1j * draw(shape_, pt)


CTOL = {"c64": "rtol=2e-5 atol=2e-5", "c128": "rtol=1e-12 atol=1e-12"}


def gemm_cfg(lb, lc, rb, rc, alpha, alpha_imag, beta, algorithm="ALG_UNSET", epilogue=None):
    dn = {"lhs_contracting_dimensions": [str(i) for i in lc],
          "rhs_contracting_dimensions": [str(i) for i in rc],
          "lhs_batch_dimensions": [str(i) for i in lb],
          "rhs_batch_dimensions": [str(i) for i in rb]}
    g = {"selected_algorithm": "-1", "alpha_real": alpha, "beta": beta,
         "dot_dimension_numbers": dn,
         "precision_config": {"operand_precision": ["DEFAULT", "DEFAULT"], "algorithm": algorithm},
         "lhs_stride": "20", "rhs_stride": "15", "grad_x": False, "grad_y": False,
         "damax_output": False, "autotune_workspace_size": "4194304"}
    if alpha_imag is not None:
        g["alpha_imag"] = alpha_imag
    if epilogue:
        g["epilogue"] = epilogue
    return json.dumps({"operation_queue_id": "0", "wait_on_operation_queues": [],
                       "gemm_backend_config": g, "force_earliest_schedule": False},
                      separators=(",", ":"))


def gemm3_case(name, target, dt, a_dims, b_dims, lb, lc, rb, rc, alpha=1.0, alpha_imag=None,
               beta=0.0, a_layout=None, out_dt=None, algorithm="ALG_UNSET", a=None, b=None,
               tol=None):
    """A gemm over c64/c128 (or one real special case), with its twin: the
    same dot, alpha (complex) and beta * C in standard HLO."""
    out_dt = out_dt or dt
    cplx = dt[0] == "c"
    if a is None:
        a = cdraw(a_dims, dt) if cplx else draw(a_dims, dt)
    if b is None:
        b = cdraw(b_dims, dt) if cplx else draw(b_dims, dt)
    al = alpha + 1j * (alpha_imag or 0.0)
    zero = alpha == 0 and not alpha_imag and beta == 0 and target == "__cublas$gemm"
    t = al * dot_general(a.astype(np.complex128) if cplx else a, b.astype(np.complex128) if cplx else b,
                         lb, lc, rb, rc)
    if not cplx:
        t = t.real
    out_dims = list(t.shape)
    inputs = [(a, dt), (b, dt)]
    names = ["a", "b"]
    if beta != 0:
        c = cdraw(out_dims, out_dt) if cplx else draw(out_dims, out_dt)
        t = t + beta * c
        inputs.append((c, out_dt))
        names.append("c")
    if zero:
        t = np.zeros(out_dims)
    if cplx:
        pt = "f32" if dt == "c64" else "f64"
        y = round_to(t.real, pt) + 1j * round_to(t.imag, pt)
    else:
        y = round_to(t, out_dt)
    expected = [(y, out_dt)]
    tol = tol or (CTOL[dt] if cplx else TOL[out_dt])
    bc = gemm_cfg(lb, lc, rb, rc, alpha, alpha_imag, beta, algorithm)
    params = ["  %%%s = %s parameter(%d)" % (nm, shape(xdt, x.shape, a_layout if nm == "a" else None), i)
              for i, ((x, xdt), nm) in enumerate(zip(inputs, names))]
    o = shape(out_dt, out_dims)
    alias = ", output_to_operand_aliasing={{0}: (2, {})}" if beta != 0 else ""
    module = ("HloModule %s\n\nENTRY %%main {\n%s\n  %%cc = (%s, s8[4194304]{0}) custom-call(%s), "
              "custom_call_target=\"%s\"%s, backend_config=%s\n"
              "  ROOT %%d = %s get-tuple-element(%%cc), index=0\n}\n"
              % (name, "\n".join(params), o, ", ".join("%" + n for n in names), target, alias, bc, o))
    write_case_any("calls", name, module, inputs, expected, tol)
    # The twin: dot, alpha, beta * C as standard HLO.
    ct = dt if cplx else ("f64" if "f64" in (dt, out_dt) else "f32")
    L = []
    for i, ((x, xdt), nm) in enumerate(zip(inputs, names)):
        L.append("  %s = %s parameter(%d)" % (nm, shape(xdt, x.shape), i))
        L.append("  %s_c = %s convert(%s)" % (nm, shape(ct, x.shape), nm))
    O = shape(ct, out_dims)
    dims_attr = "".join(", %s={%s}" % (k, ",".join(map(str, v))) for k, v in
                        [("lhs_batch_dims", lb), ("lhs_contracting_dims", lc),
                         ("rhs_batch_dims", rb), ("rhs_contracting_dims", rc)] if v)
    L.append("  t0 = %s dot(a_c, b_c)%s" % (O, dims_attr))

    def const(v):
        return "(%r, %r)" % (v.real, v.imag) if cplx else repr(float(v.real))
    L.append("  al = %s[] constant(%s)\n  alb = %s broadcast(al), dimensions={}\n  t1 = %s multiply(t0, alb)"
             % (ct, const(al), O, O))
    cur = "t1"
    if beta != 0:
        L.append("  be = %s[] constant(%s)\n  beb = %s broadcast(be), dimensions={}\n"
                 "  cb = %s multiply(c_c, beb)\n  t2 = %s add(t1, cb)" % (ct, const(beta + 0j), O, O, O))
        cur = "t2"
    if zero:
        L.append("  z = %s[] constant(%s)\n  t3 = %s broadcast(z), dimensions={}" % (ct, const(0j), O))
        cur = "t3"
    L.append("  ROOT r = %s convert(%s)" % (shape(out_dt, out_dims), cur))
    twin = "HloModule %s_twin\n\nENTRY main {\n%s\n}\n" % (name, "\n".join(L))
    write_case_any("twins", name, twin, inputs, expected, tol)


def gpu3_cases():
    # Complex gemms: XLA sends c64/c128 dots to cuBLAS (legacy or Lt) with a
    # complex alpha and a real beta.
    gemm3_case("gemm_c64", "__cublas$gemm", "c64", [4, 5], [5, 3], [], [1], [], [0],
               alpha=1.5, alpha_imag=-0.5)
    gemm3_case("gemm_c128_batch_beta", "__cublas$gemm", "c128", [2, 5, 3], [2, 4, 5], [0], [1], [0],
               [2], alpha=0.5, alpha_imag=2.0, beta=0.5)
    gemm3_case("lt_c64_transposed_beta", "__cublas$lt$matmul", "c64", [6, 3], [6, 4], [], [0], [],
               [0], alpha=1.0, alpha_imag=0.0, beta=1.0, a_layout=[0, 1])
    gemm3_case("lt_c128_imag_alpha", "__cublas$lt$matmul", "c128", [3, 4], [4, 2], [], [1], [], [0],
               alpha=0.0, alpha_imag=1.0)
    # A multi-pass algorithm is a plain f32 gemm to cuBLAS.
    gemm3_case("gemm_alg_x3_f32", "__cublas$gemm", "f32", [4, 8], [8, 5], [], [1], [], [0],
               algorithm="ALG_DOT_BF16_BF16_F32_X3", alpha_imag=0.0)
    gemm3_case("lt_alg_x9_f32_beta", "__cublas$lt$matmul", "f32", [3, 8], [8, 4], [], [1], [], [0],
               algorithm="ALG_DOT_BF16_BF16_F32_X9", beta=2.0)
    # s8 x s8 -> f32 with alpha and beta.
    a8 = rng.integers(-128, 128, size=[4, 16]).astype(np.float64)
    b8 = rng.integers(-128, 128, size=[16, 3]).astype(np.float64)
    gemm3_case("gemm_s8_f32_beta", "__cublas$gemm", "s8", [4, 16], [16, 3], [], [1], [], [0],
               alpha=0.25, beta=1.0, out_dt="f32", a=a8, b=b8, tol=TOL["f32"])
    # alpha = beta = 0 on __cublas$gemm: zeros, even from NaN operands.
    an = draw([3, 4], "f32")
    an[1, 2] = np.nan
    gemm3_case("gemm_zero_alpha_nan_f32", "__cublas$gemm", "f32", [3, 4], [4, 2], [], [1], [], [0],
               alpha=0.0, a=an)


# ---- __cudnn$convForwardGraph ----------------------------------------------

F8MAX = {"f8e4m3fn": 448.0, "f8e5m2": 57344.0}


def store_np(v, dt):
    if dt in F8MAX:
        m = F8MAX[dt]
        return round_fp(np.clip(v, -m, m), 3 if dt == "f8e4m3fn" else 2, -6 if dt == "f8e4m3fn" else -14)
    return round_to(v, dt)


def graph_case(name, xs, ws, steps, tol="rtol=0 atol=0", labels="b01f_o01i->b01f", pad=None):
    """steps: (uid, type, op, in_uids, external) after the conv (uid 1);
    external is ("scalar", value) or ("tensor", array) or None. By default
    NHWC x, OHWI w (dim_labels=b01f_o01i->b01f, as XLA's F8 tests print),
    3x3 window, pad 1; labels and pad give other spatial ranks."""
    e4 = lambda v: round_fp(np.clip(v, -448, 448), 3, -6)
    x = e4(rng.choice([-2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2], size=xs))
    w = e4(rng.choice([-1, -0.5, -0.25, 0, 0.25, 0.5, 1], size=ws))
    inl, rest = labels.split("_")
    kerl, outl = rest.split("->")
    ns = len(inl) - 2
    pad = [(1, 1)] * ns if pad is None else pad
    size = [ws[kerl.index(str(i))] for i in range(ns)]
    win = window_attr(size, [1] * ns, pad, [1] * ns)
    yc = conv_ref(to_canon(x, inl, "b", "f"), to_canon(w, kerl, "o", "i"), [1] * ns, pad, [1] * ns)
    y = from_canon(yc, outl, "b", "f")
    Y = list(y.shape)
    vals = {1: store_np(y, steps[0][1])}
    graph = "1:[%s]conv();" % steps[0][1]
    ins = [(x, "f8e4m3fn"), (w, "f8e4m3fn")]
    used = set()
    outs = []
    TL = ["  x = f8e4m3fn[%s] parameter(0)" % ",".join(map(str, xs)),
          "  w = f8e4m3fn[%s] parameter(1)" % ",".join(map(str, ws)),
          "  xf = f32[%s] convert(x)" % ",".join(map(str, xs)),
          "  wf = f32[%s] convert(w)" % ",".join(map(str, ws))]
    YF = shape("f32", Y)
    TL.append("  v1 = %s convolution(xf, wf), %s, dim_labels=%s" % (YF, win, labels))

    def twin_store(v, dt):
        if dt == "f32":
            return v
        lines = []
        src = v
        if dt in F8MAX:
            lines.append("  %s_lo = f32[] constant(%r)\n  %s_lob = %s broadcast(%s_lo), dimensions={}\n"
                         "  %s_hi = f32[] constant(%r)\n  %s_hib = %s broadcast(%s_hi), dimensions={}\n"
                         "  %s_cl = %s clamp(%s_lob, %s, %s_hib)" % (
                             v, -F8MAX[dt], v, YF, v, v, F8MAX[dt], v, YF, v, v, YF, v, v, v))
            src = v + "_cl"
        lines.append("  %s_n = %s convert(%s)\n  %s_s = %s convert(%s_n)" % (v, shape(dt, Y), src, v, YF, v))
        TL.extend(lines)
        return v + "_s"
    names = {1: twin_store("v1", steps[0][1])}
    for uid, dt, op, inu, ext in steps[1:]:
        graph += "%d:[%s]%s(%s);" % (uid, dt, op, ",".join(map(str, inu)))
        used.update(inu)
        a = vals[inu[0]]
        an = names[inu[0]]
        v = "v%d" % uid
        if ext is not None:
            kind, val = ext
            k = len(ins)
            if kind == "scalar":
                ins.append((np.array(val), "f32"))
                TL.append("  p%d = f32[] parameter(%d)\n  p%db = %s broadcast(p%d), dimensions={}" % (k, k, k, YF, k))
            else:
                ins.append((val, "f32"))
                TL.append("  p%db = %s parameter(%d)" % (k, YF, k))
            b, bn = np.asarray(val, np.float64), "p%db" % k
        elif len(inu) == 2:
            b, bn = vals[inu[1]], names[inu[1]]
        if op == "relu":
            r = np.maximum(a, 0)
            TL.append("  %s_z = f32[] constant(0)\n  %s_zb = %s broadcast(%s_z), dimensions={}\n"
                      "  %s = %s maximum(%s, %s_zb)" % (v, v, YF, v, v, YF, an, v))
        elif op == "elu":
            r = np.where(a > 0, a, np.expm1(a))
            TL.append("  %s_z = f32[] constant(0)\n  %s_zb = %s broadcast(%s_z), dimensions={}\n"
                      "  %s_c = pred[%s] compare(%s, %s_zb), direction=GT\n  %s_e = %s exponential-minus-one(%s)\n"
                      "  %s = %s select(%s_c, %s, %s_e)" % (v, v, YF, v, v, ",".join(map(str, Y)), an, v, v, YF, an,
                                                          v, YF, v, an, v))
        elif op == "amax":
            r = np.array(np.abs(a).max())
            TL.append("  %s_a = %s abs(%s)\n  %s_i = f32[] constant(0)\n"
                      "  %s = f32[] reduce(%s_a, %s_i), dimensions={%s}, to_apply=max" % (
                          v, YF, an, v, v, v, v, ",".join(str(i) for i in range(len(Y)))))
        else:
            f, hop = {"add": (np.add, "add"), "min": (np.minimum, "minimum"), "max": (np.maximum, "maximum"),
                      "scale": (np.multiply, "multiply"), "invscale": (np.divide, "divide")}[op]
            r = f(a, b)
            TL.append("  %s = %s %s(%s, %s)" % (v, YF, hop, an, bn))
        vals[uid] = r if op == "amax" else store_np(r, dt)
        names[uid] = v if op == "amax" else twin_store(v, dt)
    order = [1] + [st[0] for st in steps[1:]]
    types = {1: steps[0][1]}
    types.update({st[0]: st[1] for st in steps[1:]})
    for uid in order:
        if uid not in used:
            outs.append(uid)
    exp = [(vals[u], types[u]) for u in outs]
    res_shapes = [shape(types[u], [] if np.ndim(vals[u]) == 0 else Y) for u in outs]
    cfg = {"operation_queue_id": "0", "wait_on_operation_queues": [], "cudnn_conv_backend_config": {
        "activation_mode": "kNone", "conv_result_scale": 1, "side_input_scale": 0, "leakyrelu_alpha": 0,
        "algorithm": {"algo_id": "28", "math_type": "DEFAULT_MATH", "tuning_knobs": {"2": "0", "3": "0"},
                      "is_cudnn_frontend": True, "workspace_size": "0"},
        "serialized_graph": graph}, "force_earliest_schedule": False}
    params = "\n".join("  %%p%d = %s parameter(%d)" % (i, shape(dt, np.shape(v)), i) for i, (v, dt) in enumerate(ins))
    gtes = "\n".join("  %%g%d = %s get-tuple-element(%%cc), index=%d" % (i, rs, i) for i, rs in enumerate(res_shapes))
    root = ("  ROOT %%t = (%s) tuple(%s)" % (", ".join(res_shapes), ", ".join("%%g%d" % i for i in range(len(outs))))
            if len(outs) > 1 else "")
    if len(outs) == 1:
        gtes = gtes.replace("  %g0 =", "  ROOT %g0 =")
    module = ("HloModule %s\n\nENTRY %%main {\n%s\n  %%cc = (%s, u8[0]{0}) custom-call(%s), %s, "
              "dim_labels=%s, custom_call_target=\"__cudnn$convForwardGraph\", backend_config=%s\n%s\n%s}\n"
              % (name, params, ", ".join(res_shapes), ", ".join("%%p%d" % i for i in range(len(ins))), win, labels,
                 json.dumps(cfg, separators=(",", ":")), gtes, root + "\n" if root else ""))
    write_case("calls", name, module, ins, exp, tol)
    finals = [names[u] if types[u] == "f32" or np.ndim(vals[u]) == 0 else names[u].replace("_s", "_n") for u in outs]
    if len(outs) > 1:
        TL.append("  ROOT r = (%s) tuple(%s)" % (", ".join(res_shapes), ", ".join(finals)))
    else:
        TL.append("  ROOT r = %s copy(%s)" % (res_shapes[0], finals[0]))
    twin = ("HloModule %s_twin\n\nmax {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] maximum(a, b)\n}\n\n"
            "ENTRY main {\n%s\n}\n" % (name, "\n".join(TL)))
    write_case("twins", name, twin, ins, exp, tol)


def graph_cases():
    # XLA's TestConvScaledOutputF8: x and w scales moved onto the result, an
    # output scale, saturation to f8e4m3fn (z_scale 64 pushes values past 448).
    graph_case("convgraph_scaled_f8", [1, 4, 4, 3], [4, 3, 3, 3],
               [(1, "f32", "conv", [], None), (2, "f32", "scale", [1], ("scalar", 2.0)),
                (3, "f32", "scale", [2], ("scalar", 0.5)), (4, "f8e4m3fn", "scale", [3], ("scalar", 64.0))])
    # TestConvReluAmaxF8 with a bias (add) and an inverse output scale:
    # amax reads the relu, before the output scale.
    bias = np.round(rng.uniform(-2, 2, size=[1, 4, 4, 4]) * 8) / 8
    graph_case("convgraph_bias_relu_amax_f8", [1, 4, 4, 3], [4, 3, 3, 3],
               [(1, "f32", "conv", [], None), (2, "f32", "scale", [1], ("scalar", 0.5)),
                (3, "f32", "add", [2], ("tensor", bias)), (4, "f32", "relu", [3], None),
                (5, "f8e5m2", "invscale", [4], ("scalar", 0.25)), (6, "f32", "amax", [4], None)])
    # Leaky ReLU as cuDNN sees it (max(x, alpha * min(x, 0))), then ELU to f16.
    zeros = np.zeros([1, 3, 3, 2])
    graph_case("convgraph_leaky_elu_f16", [1, 3, 3, 2], [2, 3, 3, 2],
               [(1, "f32", "conv", [], None), (2, "f32", "min", [1], ("tensor", zeros)),
                (3, "f32", "scale", [2], ("scalar", 0.125)), (4, "f32", "max", [3, 1], None),
                (5, "f16", "elu", [4], None)], tol=TOL["f16"])


# ---- __cublas$lt$matmul$mx (hipBLASLt MX: a scaled-dot) -----------------------

def mx_case(name, ldt, rdt, out_dt, ld, rd, lb, lc, rb, rc, alpha=1.0):
    lhs, rhs = on_grid(ld, ldt), on_grid(rd, rdt)
    lsd = [d // 32 if i in lc else d for i, d in enumerate(ld)]
    rsd = [d // 32 if i in rc else d for i, d in enumerate(rd)]
    ls = rng.choice(SCALE_GRID["f8e8m0fnu"], size=lsd)
    rsc = rng.choice(SCALE_GRID["f8e8m0fnu"], size=rsd)

    def expand(sc, full):
        for i, (a, b) in enumerate(zip(sc.shape, full)):
            sc = np.repeat(sc, b // a, axis=i)
        return sc
    t = alpha * dot_general(lhs * expand(ls, ld), rhs * expand(rsc, rd), lb, lc, rb, rc)
    ins = [(lhs, ldt), (rhs, rdt), (ls, "f8e8m0fnu"), (rsc, "f8e8m0fnu")]
    exp = [(round_to(t, out_dt), out_dt)]
    O = shape(out_dt, t.shape)
    dn = {"lhs_contracting_dimensions": [str(i) for i in lc], "rhs_contracting_dimensions": [str(i) for i in rc],
          "lhs_batch_dimensions": [str(i) for i in lb], "rhs_batch_dimensions": [str(i) for i in rb]}
    cfg = {"operation_queue_id": "0", "wait_on_operation_queues": [], "gemm_backend_config": {
        "selected_algorithm": "3", "alpha_real": alpha, "alpha_imag": 0, "beta": 0,
        "dot_dimension_numbers": dn, "scale_mode": 2, "autotune_workspace_size": "33554432"},
        "force_earliest_schedule": False}
    params = "\n".join("  %%p%d = %s parameter(%d)" % (i, shape(x[1], x[0].shape), i) for i, x in enumerate(ins))
    module = ("HloModule %s\n\nENTRY %%main {\n%s\n  %%cc = (%s, s8[33554432]{0}) custom-call(%%p0, %%p1, %%p2, %%p3), "
              "custom_call_target=\"__cublas$lt$matmul$mx\", backend_config=%s\n"
              "  ROOT %%r = %s get-tuple-element(%%cc), index=0\n}\n"
              % (name, params, O, json.dumps(cfg, separators=(",", ":")), O))
    write_case("calls", name, module, ins, exp, TOL[out_dt])
    # The twin: the scaled-dot as ScaledDotRewriter expands it (broadcast
    # each scale over its block, multiply, dot).
    L = ["  p%d = %s parameter(%d)" % (i, shape(x[1], x[0].shape), i) for i, x in enumerate(ins)]
    for side, (x, sc) in enumerate(((lhs, ls), (rhs, rsc))):
        xs, ss = list(x.shape), list(sc.shape)
        L.append("  x%d = %s convert(p%d)\n  s%d = %s convert(p%d)" % (side, shape("f32", xs), side, side,
                                                                         shape("f32", ss), 2 + side))
        bdims, keep = [], []
        for i, (a, b) in enumerate(zip(ss, xs)):
            keep.append(len(bdims))
            bdims.append(a)
            if a != b:
                bdims.append(b // a)
        L.append("  b%d = %s broadcast(s%d), dimensions={%s}\n  r%d = %s reshape(b%d)\n  d%d = %s multiply(x%d, r%d)"
                 % (side, shape("f32", bdims), side, ",".join(map(str, keep)), side, shape("f32", xs), side,
                    side, shape("f32", xs), side, side))
    dims_attr = "".join(", %s={%s}" % (k, ",".join(map(str, v))) for k, v in
                        [("lhs_batch_dims", lb), ("lhs_contracting_dims", lc),
                         ("rhs_batch_dims", rb), ("rhs_contracting_dims", rc)] if v)
    F = shape("f32", t.shape)
    L.append("  y = %s dot(d0, d1)%s\n  a = f32[] constant(%r)\n  ab = %s broadcast(a), dimensions={}\n"
             "  ya = %s multiply(y, ab)\n  ROOT o = %s convert(ya)" % (F, dims_attr, alpha, F, F, O))
    twin = "HloModule %s_twin\n\nENTRY main {\n%s\n}\n" % (name, "\n".join(L))
    write_case("twins", name, twin, ins, exp, TOL[out_dt])


def window_cases():
    # Sliding windows (cudnn-frontend's left bound k + w > q), with and
    # without causal, forward with padding and backward.
    fmha_pad_case("fmha_window_padding_causal_f32", "f32", 2, 6, 6, 2, 3, True, window=2)
    fmha_pad_case("fmha_window_padding_f32", "f32", 1, 5, 6, 2, 3, False, window=3)
    fmha_bwd_case("fmha_bwd_window_causal_f32", "f32", 1, 6, 6, 2, 3, True, False, False, window=3)


def fmha_f8_case(name, B, T, S, N, H, causal, stats, scale=0.5):
    """__cudnn$fmhaSoftmaxF8 (cudnn-frontend's sdpa_fp8 graph), BTNH."""
    e4 = lambda v: round_fp(np.clip(v, -448, 448), 3, -6)
    q, k, v = (e4(rng.choice([-2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2], size=sh)) for sh in
               ([B, T, N, H], [B, S, N, H], [B, S, N, H]))
    dq, dk, dv, ds, ss, so = 0.5, 2.0, 0.25, 1.0 / 64, 64.0, 8.0
    sc = scale * dq * dk * np.einsum("btnh,bsnh->bnts", q, k)
    if causal:
        sc = np.where(np.arange(S)[None, :] > np.arange(T)[:, None], -np.inf, sc)
    mx = sc.max(-1, keepdims=True)
    e = np.exp(sc - mx)
    p = e / e.sum(-1, keepdims=True)
    lse = mx[..., 0] + np.log(e.sum(-1))
    amax_s = np.abs(p).max()
    p8 = e4(p * ss)
    o = np.einsum("bnts,bsnh->bnth", p8, v) * ds * dv
    amax_o = np.abs(o).max()
    O8 = e4(o * so)
    one = lambda x: np.full([1, 1, 1, 1], x)
    ins = [(q, "f8e4m3fn"), (k, "f8e4m3fn"), (v, "f8e4m3fn")] + [(one(x), "f32") for x in (dq, dk, dv, ds, ss, so)]
    exp = [(O8, "f8e4m3fn"), (one(amax_s), "f32"), (one(amax_o), "f32")] + ([(lse, "f32")] if stats else [])
    cfg = fmha_cfg(["bmm1_dot_dimension_numbers", "bmm2_dot_dimension_numbers"], scale,
                   "CAUSAL" if causal else "NO_MASK", B, N, T, S)
    O = "f8e4m3fn[%d,%d,%d,%d]{3,1,2,0}" % (B, N, T, H)
    A = "f32[1,1,1,1]{3,2,1,0}"
    ST = "f32[%d,%d,%d]{2,1,0}" % (B, N, T)
    res = [O, A, A] + ([ST] if stats else [])
    names = ["q", "k", "v", "descale_q", "descale_k", "descale_v", "descale_s", "scale_s", "scale_o"]
    params = "\n".join("  %%%s = %s parameter(%d)" % (n, shape(x[1], x[0].shape), i)
                       for i, (n, x) in enumerate(zip(names, ins)))
    gtes = "\n".join("  %%g%d = %s get-tuple-element(%%cc), index=%d" % (i, r, i) for i, r in enumerate(res))
    module = ("HloModule %s\n\nENTRY %%main {\n%s\n  %%cc = (%s, u8[0]{0}) custom-call(%s), "
              "custom_call_target=\"__cudnn$fmhaSoftmaxF8\", api_version=API_VERSION_STATUS_RETURNING, "
              "backend_config=%s\n%s\n  ROOT %%t = (%s) tuple(%s)\n}\n"
              % (name, params, ", ".join(res), ", ".join("%" + n for n in names), cfg, gtes, ", ".join(res),
                 ", ".join("%%g%d" % i for i in range(len(res)))))
    # The twin: the same graph in standard HLO.
    SS = "f32[%d,%d,%d,%d]" % (B, N, T, S)
    OS = "f32[%d,%d,%d,%d]" % (B, N, T, H)
    R = "f32[%d,%d,%d]" % (B, N, T)
    L = ["  %s = %s parameter(%d)" % (n, shape(x[1], x[0].shape), i) for i, (n, x) in enumerate(zip(names, ins))]
    L += ["  %s_f = %s convert(%s)" % (n, shape("f32", [B, T if n == "q" else S, N, H]), n) for n in ("q", "k", "v")]
    L += ["  %s_s = f32[] reshape(%s)" % (n, n) for n in names[3:]]

    def mul(dst, src, sh, sc_):
        L.append("  %s_b = %s broadcast(%s), dimensions={}\n  %s = %s multiply(%s, %s_b)" % (dst, sh, sc_, dst, sh, src, dst))
    L.append("  s0 = %s dot(q_f, k_f), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
             "rhs_contracting_dims={3}\n  fs = f32[] constant(%r)" % (SS, scale))
    mul("s1", "s0", SS, "fs")
    mul("s2", "s1", SS, "descale_q_s")
    mul("s3", "s2", SS, "descale_k_s")
    cur = "s3"
    if causal:
        L.append("  iq = s32[%d,%d,%d,%d] iota(), iota_dimension=2\n  ik = s32[%d,%d,%d,%d] iota(), iota_dimension=3\n"
                 "  gt = pred[%d,%d,%d,%d] compare(ik, iq), direction=GT\n  ni = f32[] constant(-inf)\n"
                 "  nib = %s broadcast(ni), dimensions={}\n  s4 = %s select(gt, nib, s3)"
                 % (B, N, T, S, B, N, T, S, B, N, T, S, SS, SS))
        cur = "s4"
    L.append("  mi = f32[] constant(-inf)\n  m = %s reduce(%s, mi), dimensions={3}, to_apply=max\n"
             "  mb = %s broadcast(m), dimensions={0,1,2}\n  d = %s subtract(%s, mb)\n  e = %s exponential(d)\n"
             "  z = f32[] constant(0)\n  sm = %s reduce(e, z), dimensions={3}, to_apply=sum\n"
             "  smb = %s broadcast(sm), dimensions={0,1,2}\n  p = %s divide(e, smb)\n"
             "  pa = %s abs(p)\n  as0 = f32[] reduce(pa, z), dimensions={0,1,2,3}, to_apply=max\n"
             "  amax_s = f32[1,1,1,1] reshape(as0)" % (R, cur, SS, SS, cur, SS, R, SS, SS, SS))
    mul("ps", "p", SS, "scale_s_s")
    L.append("  lo = f32[] constant(-448)\n  hi = f32[] constant(448)\n  lob = %s broadcast(lo), dimensions={}\n"
             "  hib = %s broadcast(hi), dimensions={}\n  pc = %s clamp(lob, ps, hib)\n  p8 = f8e4m3fn[%d,%d,%d,%d] convert(pc)\n"
             "  p8f = %s convert(p8)\n  o0 = %s dot(p8f, v_f), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, "
             "rhs_batch_dims={0,2}, rhs_contracting_dims={1}" % (SS, SS, SS, B, N, T, S, SS, OS))
    mul("o1", "o0", OS, "descale_s_s")
    mul("o2", "o1", OS, "descale_v_s")
    L.append("  oa = %s abs(o2)\n  ao0 = f32[] reduce(oa, z), dimensions={0,1,2,3}, to_apply=max\n"
             "  amax_o = f32[1,1,1,1] reshape(ao0)" % OS)
    mul("o3", "o2", OS, "scale_o_s")
    L.append("  lob2 = %s broadcast(lo), dimensions={}\n  hib2 = %s broadcast(hi), dimensions={}\n"
             "  oc = %s clamp(lob2, o3, hib2)\n  o8 = f8e4m3fn[%d,%d,%d,%d] convert(oc)" % (OS, OS, OS, B, N, T, H))
    outs = ["o8", "amax_s", "amax_o"]
    shapes = ["f8e4m3fn[%d,%d,%d,%d]" % (B, N, T, H), "f32[1,1,1,1]", "f32[1,1,1,1]"]
    if stats:
        L.append("  lg = %s log(sm)\n  st = %s add(m, lg)" % (R, R))
        outs.append("st")
        shapes.append(R)
    L.append("  ROOT r = (%s) tuple(%s)" % (", ".join(shapes), ", ".join(outs)))
    twin = ("HloModule %s_twin\n\nmax {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] maximum(a, b)\n}\n\n"
            "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n\n"
            "ENTRY main {\n%s\n}\n" % (name, "\n".join(L)))
    # The draws avoid f8 rounding ties (P*scale_s and O*scale_o are rounded
    # from f64 here, from f32 in hlorun): f32 tolerance.
    tol = TOL["f32"]
    write_case("calls", name, module, ins, exp, tol)
    write_case("twins", name, twin, ins, exp, tol)


def f8_attention_cases():
    fmha_f8_case("fmha_f8_causal_stats", 1, 5, 5, 2, 4, True, True)
    fmha_f8_case("fmha_f8_inference", 2, 4, 6, 1, 8, False, False, scale=0.25)


# ---- __cudnn$fmhaSoftmaxBackwardF8 (cudnn-frontend's sdpa_fp8_backward) -----

def f8_tie_free(x, mbits=3, emin=-6, margin=1e-3):
    """True when no element of x lies within margin (in units of its f8
    spacing) of a rounding midpoint: hlorun rounds from f32, numpy from f64."""
    x = np.asarray(x, np.float64)
    e = np.floor(np.log2(np.where(x == 0, 1, np.abs(x))))
    q = np.exp2(np.maximum(e, emin) - mbits)
    fr = np.abs(x) / q
    return bool(np.all(np.abs(fr - np.floor(fr) - 0.5) > margin))


def fmha_f8_bwd_case(name, B, T, S, N, H, causal, scale=0.5):
    """Operands (q, k, v, O, dO, stats, descale_q, descale_k, descale_v,
    descale_s, descale_o, descale_dO, descale_dP, scale_s, scale_dP, scale_dQ,
    scale_dK, scale_dV): the UID order of cuda_dnn.cc
    GetCudnnFlashAttentionBackwardF8OperationGraph, which binds operands by
    position. Twelve distinct values, so a misplaced one shows: the descales
    powers of two, the scales (whose products are stored in f8) f32 values
    off the dyadic grid, so no stored value is an exact rounding tie."""
    e4 = lambda v: round_fp(np.clip(v, -448, 448), 3, -6)
    names = ["descale_q", "descale_k", "descale_v", "descale_s", "descale_o", "descale_dO",
             "descale_dP", "scale_s", "scale_dP", "scale_dQ", "scale_dK", "scale_dV"]
    sv = dict(zip(names, [0.5, 2.0, 0.25, 1.0 / 64, 4.0, 0.125, 1.0 / 16] +
                  [float(round_to(x, "f32")) for x in (61.7, 29.3, 7.3, 13.1, 301.3)]))
    grid = [-2, -1.5, -1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1, 1.5, 2]
    valid = np.ones((T, S), bool) if not causal else (np.arange(S)[None, :] <= np.arange(T)[:, None])
    for attempt in range(50):
        q, k, v, O, dO = (e4(rng.choice(grid, size=sh)) for sh in
                          ([B, T, N, H], [B, S, N, H], [B, S, N, H], [B, T, N, H], [B, T, N, H]))
        # stats: the forward's log-sum-exp of the same (descaled, masked) scores, in f32
        S0 = scale * sv["descale_q"] * sv["descale_k"] * np.einsum("btnh,bsnh->bnts", q, k)
        S0 = np.where(valid, S0, -np.inf)
        mx = S0.max(-1, keepdims=True)
        stats = round_to(mx[..., 0] + np.log(np.exp(S0 - mx).sum(-1)), "f32")
        P = np.exp(S0 - stats[..., None])
        Ps = P * sv["scale_s"]
        P8 = e4(Ps)
        dV0 = np.einsum("bnts,btnh->bnsh", P8, dO) * sv["descale_s"] * sv["descale_dO"]
        D = np.einsum("btnh,btnh->bnt", dO, O) * sv["descale_dO"] * sv["descale_o"]
        dP0 = np.einsum("btnh,bsnh->bnts", dO, v) * sv["descale_dO"] * sv["descale_v"]
        dS = (dP0 - D[..., None]) * P * scale
        dSs = dS * sv["scale_dP"]
        dS8 = e4(dSs)
        dQ0 = np.einsum("bnts,bsnh->bnth", dS8, k) * sv["descale_dP"] * sv["descale_k"]
        dK0 = np.einsum("bnts,btnh->bnsh", dS8, q) * sv["descale_dP"] * sv["descale_q"]
        outs = [dQ0 * sv["scale_dQ"], dK0 * sv["scale_dK"], dV0 * sv["scale_dV"]]
        rounded = [Ps, dSs] + outs
        if all(f8_tie_free(x) for x in rounded) and max(np.abs(x).max() for x in rounded) < 448 \
                and np.abs(dS8).max() > 0:
            break
    else:
        raise AssertionError(name + ": no tie-free draw")
    one = lambda x: np.full([1, 1, 1, 1], x)
    dQ, dK, dV = (e4(x) for x in outs)
    amax = [np.abs(dQ0).max(), np.abs(dK0).max(), np.abs(dV0).max(), np.abs(dS).max()]
    ins = [(q, "f8e4m3fn"), (k, "f8e4m3fn"), (v, "f8e4m3fn"), (O, "f8e4m3fn"), (dO, "f8e4m3fn"),
           (stats, "f32")] + [(one(sv[n]), "f32") for n in names]
    exp = [(dQ, "f8e4m3fn"), (dK, "f8e4m3fn"), (dV, "f8e4m3fn")] + [(one(a), "f32") for a in amax]
    keys = [k_ for k_ in DN if "grad" in k_]
    cfg = fmha_cfg(keys, scale, "CAUSAL" if causal else "NO_MASK", B, N, T, S)
    rq = "f8e4m3fn[%d,%d,%d,%d]{3,1,2,0}" % (B, N, T, H)
    rk = "f8e4m3fn[%d,%d,%d,%d]{3,1,2,0}" % (B, N, S, H)
    A = "f32[1,1,1,1]{3,2,1,0}"
    res = [rq, rk, rk, A, A, A, A]
    opn = ["q", "k", "v", "O", "dO", "stats"] + names
    params = "\n".join("  %%%s = %s parameter(%d)" % (n, shape(x[1], x[0].shape), i)
                       for i, (n, x) in enumerate(zip(opn, ins)))
    gtes = "\n".join("  %%g%d = %s get-tuple-element(%%cc), index=%d" % (i, r, i) for i, r in enumerate(res))
    module = ("HloModule %s\n\nENTRY %%main {\n%s\n  %%cc = (%s, u8[0]{0}) custom-call(%s), "
              "custom_call_target=\"__cudnn$fmhaSoftmaxBackwardF8\", api_version=API_VERSION_STATUS_RETURNING, "
              "backend_config=%s\n%s\n  ROOT %%t = (%s) tuple(%s)\n}\n"
              % (name, params, ", ".join(res), ", ".join("%" + n for n in opn), cfg, gtes, ", ".join(res),
                 ", ".join("%%g%d" % i for i in range(len(res)))))
    # The twin: the same graph in standard HLO, in f32.
    SS = "f32[%d,%d,%d,%d]" % (B, N, T, S)
    QS = "f32[%d,%d,%d,%d]" % (B, N, T, H)
    KS = "f32[%d,%d,%d,%d]" % (B, N, S, H)
    R = "f32[%d,%d,%d]" % (B, N, T)
    L = ["  %s = %s parameter(%d)" % (n, shape(x[1], x[0].shape), i) for i, (n, x) in enumerate(zip(opn, ins))]
    L += ["  %s_f = %s convert(%s)" % (n, shape("f32", x[0].shape), n) for n, x in zip(opn[:5], ins[:5])]
    L += ["  %s_s = f32[] reshape(%s)" % (n, n) for n in names]
    L.append("  lo = f32[] constant(-448)\n  hi = f32[] constant(448)\n  z = f32[] constant(0)")

    def mul(dst, src, sh, sc_):
        L.append("  %s_b = %s broadcast(%s), dimensions={}\n  %s = %s multiply(%s, %s_b)" % (dst, sh, sc_, dst, sh, src, dst))

    def store(dst, src, sh):
        dims = sh[3:]
        L.append("  %s_lo = %s broadcast(lo), dimensions={}\n  %s_hi = %s broadcast(hi), dimensions={}\n"
                 "  %s_c = %s clamp(%s_lo, %s, %s_hi)\n  %s = f8e4m3fn%s convert(%s_c)"
                 % (dst, sh, dst, sh, dst, sh, dst, src, dst, dst, dims, dst))

    def amax(dst, src, sh):
        L.append("  %s_a = %s abs(%s)\n  %s_r = f32[] reduce(%s_a, z), dimensions={0,1,2,3}, to_apply=max\n"
                 "  %s = f32[1,1,1,1] reshape(%s_r)" % (dst, sh, src, dst, dst, dst, dst))
    L.append("  s0 = %s dot(q_f, k_f), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
             "rhs_contracting_dims={3}\n  fs = f32[] constant(%r)" % (SS, scale))
    mul("s1", "s0", SS, "fs")
    mul("s2", "s1", SS, "descale_q_s")
    mul("s3", "s2", SS, "descale_k_s")
    cur = "s3"
    if causal:
        L.append("  iq = s32[%d,%d,%d,%d] iota(), iota_dimension=2\n  ik = s32[%d,%d,%d,%d] iota(), iota_dimension=3\n"
                 "  gt = pred[%d,%d,%d,%d] compare(ik, iq), direction=GT\n  ni = f32[] constant(-inf)\n"
                 "  nib = %s broadcast(ni), dimensions={}\n  s4 = %s select(gt, nib, s3)"
                 % (B, N, T, S, B, N, T, S, B, N, T, S, SS, SS))
        cur = "s4"
    L.append("  stb = %s broadcast(stats), dimensions={0,1,2}\n  sd = %s subtract(%s, stb)\n  p = %s exponential(sd)"
             % (SS, SS, cur, SS))
    mul("ps", "p", SS, "scale_s_s")
    store("p8", "ps", SS)
    L.append("  p8f = %s convert(p8)" % SS)
    L.append("  dv0 = %s dot(p8f, dO_f), lhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_batch_dims={0,2}, "
             "rhs_contracting_dims={1}" % KS)
    mul("dv1", "dv0", KS, "descale_s_s")
    mul("dv2", "dv1", KS, "descale_dO_s")
    amax("amax_dv", "dv2", KS)
    mul("dv3", "dv2", KS, "scale_dV_s")
    store("dv8", "dv3", KS)
    L.append("  oo = f32[%d,%d,%d,%d] multiply(dO_f, O_f)\n  d0 = f32[%d,%d,%d] reduce(oo, z), dimensions={3}, to_apply=sum\n"
             "  d1 = %s transpose(d0), dimensions={0,2,1}" % (B, T, N, H, B, T, N, R))
    mul("d2", "d1", R, "descale_dO_s")
    mul("d3", "d2", R, "descale_o_s")
    L.append("  dp0 = %s dot(dO_f, v_f), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
             "rhs_contracting_dims={3}" % SS)
    mul("dp1", "dp0", SS, "descale_dO_s")
    mul("dp2", "dp1", SS, "descale_v_s")
    L.append("  d3b = %s broadcast(d3), dimensions={0,1,2}\n  ds0 = %s subtract(dp2, d3b)\n  ds1 = %s multiply(ds0, p)"
             % (SS, SS, SS))
    mul("ds2", "ds1", SS, "fs")
    amax("amax_dp", "ds2", SS)
    mul("ds3", "ds2", SS, "scale_dP_s")
    store("ds8", "ds3", SS)
    L.append("  ds8f = %s convert(ds8)" % SS)
    L.append("  dq0 = %s dot(ds8f, k_f), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
             "rhs_contracting_dims={1}" % QS)
    mul("dq1", "dq0", QS, "descale_dP_s")
    mul("dq2", "dq1", QS, "descale_k_s")
    amax("amax_dq", "dq2", QS)
    mul("dq3", "dq2", QS, "scale_dQ_s")
    store("dq8", "dq3", QS)
    L.append("  dk0 = %s dot(ds8f, q_f), lhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_batch_dims={0,2}, "
             "rhs_contracting_dims={1}" % KS)
    mul("dk1", "dk0", KS, "descale_dP_s")
    mul("dk2", "dk1", KS, "descale_q_s")
    amax("amax_dk", "dk2", KS)
    mul("dk3", "dk2", KS, "scale_dK_s")
    store("dk8", "dk3", KS)
    A4 = "f32[1,1,1,1]"
    L.append("  ROOT r = (f8e4m3fn%s, f8e4m3fn%s, f8e4m3fn%s, %s, %s, %s, %s) tuple(dq8, dk8, dv8, amax_dq, amax_dk, "
             "amax_dv, amax_dp)" % (QS[3:], KS[3:], KS[3:], A4, A4, A4, A4))
    twin = "HloModule %s_twin\n\n%sENTRY main {\n%s\n}\n" % (name, MAXSUM, "\n".join(L))
    tol = TOL["f32"]
    write_case("calls", name, module, ins, exp, tol)
    write_case("twins", name, twin, ins, exp, tol)


def f8_backward_cases():
    fmha_f8_bwd_case("fmha_f8_bwd_causal", 1, 5, 5, 2, 4, True)
    fmha_f8_bwd_case("fmha_f8_bwd", 2, 4, 6, 1, 8, False, scale=0.25)


# ---- Packed (max_seg_per_batch > 1) and paged attention, forward -----------

def seg_attention(qs, ks, vs, scale, causal, window=0):
    """One segment: qs [t, N, H], ks/vs [s, N, H] -> (O [t, N, Hv], lse [N, t])."""
    sc = scale * np.einsum("tnh,snh->nts", qs, ks)
    t_ = np.arange(qs.shape[0])[:, None]
    s_ = np.arange(ks.shape[0])[None, :]
    valid = np.ones(sc.shape[1:], bool)
    if causal:
        valid &= s_ <= t_
    if window:
        valid &= s_ + window > t_
    sc = np.where(valid, sc, -np.inf)
    mx = sc.max(-1, keepdims=True)
    e = np.exp(sc - mx)
    return np.einsum("nts,snh->tnh", e / e.sum(-1, keepdims=True), vs), mx[..., 0] + np.log(e.sum(-1))


def twin_seg_lines(L, tag, qv, kv, vv, nt, ns, N, H, scale, causal):
    """Standard-HLO attention of one segment: qv f32[nt,N,H], kv/vv f32[ns,N,H]
    -> '<tag>_o' f32[nt,N,H] and '<tag>_l' f32[N,nt]."""
    SS = "f32[%d,%d,%d]" % (N, nt, ns)
    R = "f32[%d,%d]" % (N, nt)
    L.append("  %s_s0 = %s dot(%s, %s), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, "
             "rhs_contracting_dims={2}\n  %s_sc = %s broadcast(scale), dimensions={}\n  %s_s1 = %s multiply(%s_s0, %s_sc)"
             % (tag, SS, qv, kv, tag, SS, tag, SS, tag, tag))
    cur = tag + "_s1"
    if causal:
        L.append("  %s_iq = s32[%d,%d,%d] iota(), iota_dimension=1\n  %s_ik = s32[%d,%d,%d] iota(), iota_dimension=2\n"
                 "  %s_ok = pred[%d,%d,%d] compare(%s_ik, %s_iq), direction=LE\n  %s_ni = %s broadcast(ninf), dimensions={}\n"
                 "  %s_s2 = %s select(%s_ok, %s_s1, %s_ni)"
                 % (tag, N, nt, ns, tag, N, nt, ns, tag, N, nt, ns, tag, tag, tag, SS, tag, SS, tag, tag, tag))
        cur = tag + "_s2"
    L.append("  %s_m = %s reduce(%s, ninf), dimensions={2}, to_apply=max\n  %s_mb = %s broadcast(%s_m), dimensions={0,1}\n"
             "  %s_d = %s subtract(%s, %s_mb)\n  %s_e = %s exponential(%s_d)\n  %s_sum = %s reduce(%s_e, zero), dimensions={2}, to_apply=sum\n"
             "  %s_sb = %s broadcast(%s_sum), dimensions={0,1}\n  %s_p = %s divide(%s_e, %s_sb)\n"
             "  %s_o = f32[%d,%d,%d] dot(%s_p, %s), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={1}, "
             "rhs_contracting_dims={0}\n  %s_lg = %s log(%s_sum)\n  %s_l = %s add(%s_m, %s_lg)"
             % (tag, R, cur, tag, SS, tag, tag, SS, cur, tag, tag, SS, tag, tag, R, tag, tag, SS, tag, tag, SS, tag, tag,
                tag, N, nt, H, tag, vv, tag, R, tag, tag, R, tag, tag))


def packed_case(name, B, M, T, S, N, H, qsegs, kvsegs, causal, stats, scale=0.5):
    """__cudnn$fmhaSoftmax with max_seg_per_batch = M, BTNH: qsegs/kvsegs
    list the segments of all batches in order as (token offset in the whole
    [B*T] buffer, length); the operands are what JAX passes after
    _fix_seqlen_offsets: seqlens s32[B, M] (unused slots 0), offsets
    s32[B, M+1] in elements (token * N * H; unused slots B*T*N*H)."""
    dt = "f32"
    q, k, v = draw([B, T, N, H], dt), draw([B, S, N, H], dt), draw([B, S, N, H], dt)
    nseg = len(qsegs)
    qlen = np.zeros(B * M, np.int64); kvlen = np.zeros(B * M, np.int64)
    qoff = np.full(B * (M + 1), B * T * N * H, np.int64); kvoff = np.full(B * (M + 1), B * S * N * H, np.int64)
    for i, ((qo, ql), (ko, kl)) in enumerate(zip(qsegs, kvsegs)):
        qlen[i], kvlen[i], qoff[i], kvoff[i] = ql, kl, qo * N * H, ko * N * H
    qf, kf, vf = q.reshape(B * T, N, H), k.reshape(B * S, N, H), v.reshape(B * S, N, H)
    Ophys = np.zeros((B * T, N, H))
    lse = np.zeros((B * M, N, T))
    for i, ((qo, ql), (ko, kl)) in enumerate(zip(qsegs, kvsegs)):
        o, l = seg_attention(qf[qo:qo + ql], kf[ko:ko + kl], vf[ko:ko + kl], scale, causal)
        Ophys[qo:qo + ql] = o
        lse[i, :, :ql] = l
    Olog = Ophys.reshape(B, T, N, H).transpose(0, 2, 1, 3)
    ins = [(q, dt), (k, dt), (v, dt), (qlen.reshape(B, M), "s32"), (kvlen.reshape(B, M), "s32"),
           (qoff.reshape(B, M + 1), "s32"), (kvoff.reshape(B, M + 1), "s32")]
    exp = [(Olog, dt)] + ([(round_to(lse, "f32"), "f32")] if stats else [])
    names = ["q", "k", "v", "q_seqlen", "kv_seqlen", "q_offsets", "kv_offsets"]
    cfg = json.loads(fmha_cfg(["bmm1_dot_dimension_numbers", "bmm2_dot_dimension_numbers"], scale,
                              "PADDING_CAUSAL" if causal else "PADDING", B, N, T, S))
    cfg["cudnn_fmha_backend_config"]["max_seg_per_batch"] = M
    cfg = json.dumps(cfg, separators=(",", ":"))
    O = "f32[%d,%d,%d,%d]{3,1,2,0}" % (B, N, T, H)
    ST = "f32[%d,%d,%d]{2,1,0}" % (B * M, N, T)
    res = [O] + ([ST] if stats else [])
    params = "\n".join("  %%%s = %s parameter(%d)" % (n, shape(x[1], x[0].shape), i)
                       for i, (n, x) in enumerate(zip(names, ins)))
    gtes = "\n".join("  %%g%d = %s get-tuple-element(%%cc), index=%d" % (i, r, i) for i, r in enumerate(res))
    module = ("HloModule %s\n\nENTRY %%main {\n%s\n  %%cc = (%s, u8[0]{0}) custom-call(%s), "
              "custom_call_target=\"__cudnn$fmhaSoftmax\", api_version=API_VERSION_STATUS_RETURNING, "
              "backend_config=%s\n%s\n  ROOT %%t = (%s) tuple(%s)\n}\n"
              % (name, params, ", ".join(res), ", ".join("%" + n for n in names), cfg, gtes, ", ".join(res),
                 ", ".join("%%g%d" % i for i in range(len(res)))))
    if not stats:
        module = module.replace("  ROOT %%t = (%s) tuple(%%g0)\n" % O, "").replace("  %g0 =", "  ROOT %g0 =")
    # The twin: each segment sliced out of the token-major buffers (the
    # segment table is fixed for this case), attended, and put back.
    L = ["  %s = %s parameter(%d)" % (n, shape(x[1], x[0].shape), i) for i, (n, x) in enumerate(zip(names, ins))]
    L.append("  qf = f32[%d,%d,%d] reshape(q)\n  kf = f32[%d,%d,%d] reshape(k)\n  vf = f32[%d,%d,%d] reshape(v)\n"
             "  scale = f32[] constant(%r)\n  ninf = f32[] constant(-inf)\n  zero = f32[] constant(0)"
             % (B * T, N, H, B * S, N, H, B * S, N, H, scale))
    pieces, cur = [], 0
    lrows = []
    for i, ((qo, ql), (ko, kl)) in enumerate(zip(qsegs, kvsegs)):
        tag = "g%d" % i
        for src, o_, n_, nm in (("qf", qo, ql, "q"), ("kf", ko, kl, "k"), ("vf", ko, kl, "v")):
            L.append("  %s_%s = f32[%d,%d,%d] slice(%s), slice={[%d:%d], [0:%d], [0:%d]}"
                     % (tag, nm, n_, N, H, src, o_, o_ + n_, N, H))
        twin_seg_lines(L, tag, tag + "_q", tag + "_k", tag + "_v", ql, kl, N, H, scale, causal)
        L.append("  %s_ot = f32[%d,%d,%d] transpose(%s_o), dimensions={1,0,2}" % (tag, ql, N, H, tag))
        if qo > cur:
            L.append("  gap%d = f32[%d,%d,%d] broadcast(zero), dimensions={}" % (i, qo - cur, N, H))
            pieces.append(("gap%d" % i, qo - cur))
        pieces.append((tag + "_ot", ql))
        cur = qo + ql
        L.append("  %s_lp = f32[%d,%d] pad(%s_l, zero), padding=0_0x0_%d" % (tag, N, T, tag, T - ql))
        lrows.append(tag + "_lp")
    if cur < B * T:
        L.append("  gapend = f32[%d,%d,%d] broadcast(zero), dimensions={}" % (B * T - cur, N, H))
        pieces.append(("gapend", B * T - cur))
    L.append("  ophys = f32[%d,%d,%d] concatenate(%s), dimensions={0}" % (B * T, N, H, ", ".join(p_ for p_, _ in pieces)))
    L.append("  o4 = f32[%d,%d,%d,%d] reshape(ophys)\n  ot = f32[%d,%d,%d,%d] transpose(o4), dimensions={0,2,1,3}"
             % (B, T, N, H, B, N, T, H))
    outs, shp = ["ot"], ["f32[%d,%d,%d,%d]" % (B, N, T, H)]
    if stats:
        for j in range(nseg, B * M):
            L.append("  lz%d = f32[%d,%d] broadcast(zero), dimensions={}" % (j, N, T))
            lrows.append("lz%d" % j)
        L.append("  lcat = f32[%d,%d] concatenate(%s), dimensions={0}\n  lse = f32[%d,%d,%d] reshape(lcat)"
                 % (B * M * N, T, ", ".join(lrows), B * M, N, T))
        outs.append("lse")
        shp.append("f32[%d,%d,%d]" % (B * M, N, T))
    if stats:
        L.append("  ROOT r = (%s) tuple(%s)" % (", ".join(shp), ", ".join(outs)))
    else:
        L[-1] = L[-1].replace("  ot = ", "  ROOT ot = ")
    twin = "HloModule %s_twin\n\n%sENTRY main {\n%s\n}\n" % (name, MAXSUM, "\n".join(L))
    write_case("calls", name, module, ins, exp, TOL[dt])
    write_case("twins", name, twin, ins, exp, TOL[dt])


def paged_case(name, B, T, N, H, bs, tables, qlen, kvlen, scale=0.5):
    """__cudnn$fmhaSoftmax with is_paged_attention, BTNH: k and v are page
    containers [blocks, bs, N, H], the page tables s32[B, 1, nb, 1] give the
    page of each logical block (cudnn-frontend's create_container_and_page_table)."""
    dt = "f32"
    nb = len(tables[0])
    nblk = B * nb
    S = nb * bs
    q = draw([B, T, N, H], dt)
    kc, vc = draw([nblk, bs, N, H], dt), draw([nblk, bs, N, H], dt)
    ptk = np.array(tables, np.int64).reshape(B, 1, nb, 1)
    ptv = np.array([list(reversed(t)) for t in tables], np.int64).reshape(B, 1, nb, 1)
    qlen, kvlen = np.array(qlen, np.int64), np.array(kvlen, np.int64)
    O = np.zeros((B, N, T, H))
    lse = np.zeros((B, N, T))
    for b in range(B):
        kl = np.concatenate([kc[ptk[b, 0, j, 0]] for j in range(nb)])   # [S, N, H]
        vl = np.concatenate([vc[ptv[b, 0, j, 0]] for j in range(nb)])
        o, l = seg_attention(q[b, :qlen[b]], kl[:kvlen[b]], vl[:kvlen[b]], scale, False)
        O[b, :, :qlen[b]] = o.transpose(1, 0, 2)
        lse[b, :, :qlen[b]] = l
    names = ["q", "k", "v", "q_seqlen", "kv_seqlen", "page_table_k", "page_table_v"]
    ins = [(q, dt), (kc, dt), (vc, dt), (qlen, "s32"), (kvlen, "s32"), (ptk, "s32"), (ptv, "s32")]
    exp = [(O, dt), (round_to(lse, "f32"), "f32")]
    cfg = json.loads(fmha_cfg(["bmm1_dot_dimension_numbers", "bmm2_dot_dimension_numbers"], scale,
                              "NO_MASK", B, N, T, S))
    cfg["cudnn_fmha_backend_config"]["is_paged_attention"] = True
    cfg = json.dumps(cfg, separators=(",", ":"))
    OS = "f32[%d,%d,%d,%d]{3,1,2,0}" % (B, N, T, H)
    ST = "f32[%d,%d,%d]{2,1,0}" % (B, N, T)
    params = "\n".join("  %%%s = %s parameter(%d)" % (n, shape(x[1], x[0].shape), i)
                       for i, (n, x) in enumerate(zip(names, ins)))
    module = ("HloModule %s\n\nENTRY %%main {\n%s\n  %%cc = (%s, %s, u8[0]{0}) custom-call(%s), "
              "custom_call_target=\"__cudnn$fmhaSoftmax\", api_version=API_VERSION_STATUS_RETURNING, "
              "backend_config=%s\n  %%g0 = %s get-tuple-element(%%cc), index=0\n"
              "  %%g1 = %s get-tuple-element(%%cc), index=1\n  ROOT %%t = (%s, %s) tuple(%%g0, %%g1)\n}\n"
              % (name, params, OS, ST, ", ".join("%" + n for n in names), cfg, OS, ST, OS, ST))
    # The twin: the pages of each batch (the tables are fixed for this case)
    # concatenated into its keys and values, then padded attention.
    L = ["  %s = %s parameter(%d)" % (n, shape(x[1], x[0].shape), i) for i, (n, x) in enumerate(zip(names, ins))]
    L.append("  scale = f32[] constant(%r)\n  ninf = f32[] constant(-inf)\n  zero = f32[] constant(0)" % scale)
    obs, lrows = [], []
    for b in range(B):
        for nm, src, pt in (("k", "k", ptk), ("v", "v", ptv)):
            parts = []
            for j in range(nb):
                blk = int(pt[b, 0, j, 0])
                L.append("  b%d%s%d = f32[1,%d,%d,%d] slice(%s), slice={[%d:%d], [0:%d], [0:%d], [0:%d]}"
                         % (b, nm, j, bs, N, H, src, blk, blk + 1, bs, N, H))
                parts.append("b%d%s%d" % (b, nm, j))
            L.append("  b%d%sc = f32[%d,%d,%d,%d] concatenate(%s), dimensions={1}\n  b%d%s = f32[%d,%d,%d] reshape(b%d%sc)"
                     % (b, nm, 1, S, N, H, ", ".join(parts), b, nm, S, N, H, b, nm))
            L.append("  b%d%sl = f32[%d,%d,%d] slice(b%d%s), slice={[0:%d], [0:%d], [0:%d]}"
                     % (b, nm, kvlen[b], N, H, b, nm, kvlen[b], N, H))
        L.append("  b%dq = f32[%d,%d,%d] slice(q), slice={[%d:%d], [0:%d], [0:%d], [0:%d]}".replace(
            "f32[%d,%d,%d] slice(q)", "f32[1,%d,%d,%d] slice(q)") % (b, qlen[b], N, H, b, b + 1, qlen[b], N, H))
        L.append("  b%dqr = f32[%d,%d,%d] reshape(b%dq)" % (b, qlen[b], N, H, b))
        tag = "s%d" % b
        twin_seg_lines(L, tag, "b%dqr" % b, "b%dkl" % b, "b%dvl" % b, qlen[b], kvlen[b], N, H, scale, False)
        L.append("  %s_op = f32[%d,%d,%d] pad(%s_o, zero), padding=0_0x0_%dx0_0\n  %s_lp = f32[%d,%d] pad(%s_l, zero), padding=0_0x0_%d"
                 % (tag, N, T, H, tag, T - qlen[b], tag, N, T, tag, T - qlen[b]))
        obs.append(tag + "_op")
        lrows.append(tag + "_lp")
    L.append("  oc = f32[%d,%d,%d] concatenate(%s), dimensions={0}\n  o = f32[%d,%d,%d,%d] reshape(oc)"
             % (B * N, T, H, ", ".join(obs), B, N, T, H))
    L.append("  lc = f32[%d,%d] concatenate(%s), dimensions={0}\n  lse = f32[%d,%d,%d] reshape(lc)"
             % (B * N, T, ", ".join(lrows), B, N, T))
    L.append("  ROOT r = (f32[%d,%d,%d,%d], f32[%d,%d,%d]) tuple(o, lse)" % (B, N, T, H, B, N, T))
    twin = "HloModule %s_twin\n\n%sENTRY main {\n%s\n}\n" % (name, MAXSUM, "\n".join(L))
    write_case("calls", name, module, ins, exp, TOL[dt])
    write_case("twins", name, twin, ins, exp, TOL[dt])


def packed_paged_cases():
    # Two batches of T = S = 6 tokens: batch 0 holds two segments, batch 1 one
    # starting at its token 1; tokens no segment covers give 0.
    packed_case("fmha_packed_causal_stats", 2, 2, 6, 6, 2, 3,
                [(0, 2), (2, 3), (7, 4)], [(0, 3), (3, 3), (6, 5)], True, True)
    packed_case("fmha_packed", 2, 2, 6, 6, 1, 4, [(0, 3), (3, 3), (6, 6)], [(1, 4), (5, 1), (6, 6)],
                False, False, scale=0.25)
    # Pages of 2 rows, 3 per batch, shuffled; v's table is k's reversed.
    paged_case("fmha_paged_stats", 2, 3, 2, 3, 2, [[4, 0, 2], [1, 5, 3]], [3, 2], [5, 6])


def packed_bwd_case(name, B, M, T, S, N, H, qsegs, kvsegs, causal, scale=0.5):
    """__cudnn$fmhaSoftmaxBackward with max_seg_per_batch = M, BTNH, segments
    as packed_case: (q, k, v, stats, dO, O, q_seqlen, kv_seqlen, q_offsets,
    kv_offsets) -> (dQ, dK, dV, u8); dQ rows by q_offsets, dK/dV by kv_offsets."""
    dt = "f32"
    q, k, v = draw([B, T, N, H], dt), draw([B, S, N, H], dt), draw([B, S, N, H], dt)
    dO = draw([B, T, N, H], dt)
    qlen = np.zeros(B * M, np.int64); kvlen = np.zeros(B * M, np.int64)
    qoff = np.full(B * (M + 1), B * T * N * H, np.int64); kvoff = np.full(B * (M + 1), B * S * N * H, np.int64)
    qf, kf, vf, dOf = q.reshape(B * T, N, H), k.reshape(B * S, N, H), v.reshape(B * S, N, H), dO.reshape(B * T, N, H)
    Of = np.zeros((B * T, N, H))
    stats = np.zeros((B * M, N, T))
    for i, ((qo, ql), (ko, kl)) in enumerate(zip(qsegs, kvsegs)):
        qlen[i], kvlen[i], qoff[i], kvoff[i] = ql, kl, qo * N * H, ko * N * H
        o, l = seg_attention(qf[qo:qo + ql], kf[ko:ko + kl], vf[ko:ko + kl], scale, causal)
        Of[qo:qo + ql] = o
        stats[i, :, :ql] = l
    Of = round_to(Of, dt)
    stats = round_to(stats, "f32")
    dQf, dKf, dVf = np.zeros((B * T, N, H)), np.zeros((B * S, N, H)), np.zeros((B * S, N, H))
    for i, ((qo, ql), (ko, kl)) in enumerate(zip(qsegs, kvsegs)):
        qs, ks_, vs_, dos, os_ = qf[qo:qo + ql], kf[ko:ko + kl], vf[ko:ko + kl], dOf[qo:qo + ql], Of[qo:qo + ql]
        valid = np.ones((ql, kl), bool) if not causal else (np.arange(kl)[None, :] <= np.arange(ql)[:, None])
        sc = scale * np.einsum("tnh,snh->nts", qs, ks_)
        P = np.where(valid, np.exp(np.where(valid, sc, 0) - stats[i, :, :ql, None]), 0)
        dP = np.einsum("tnh,snh->nts", dos, vs_)
        D = np.einsum("tnh,tnh->nt", dos, os_)
        dS = P * (dP - D[..., None])
        dVf[ko:ko + kl] = np.einsum("nts,tnh->snh", P, dos)
        dQf[qo:qo + ql] = scale * np.einsum("nts,snh->tnh", dS, ks_)
        dKf[ko:ko + kl] = scale * np.einsum("nts,tnh->snh", dS, qs)
        # independent check: central differences of sum(O(q, k, v) * dO) for this segment
        def loss(q_, k_, v_):
            return float((seg_attention(q_, k_, v_, scale, causal)[0] * dos).sum())
        h = 1e-6
        for which, arr, g in ((0, qs, dQf[qo:qo + ql]), (1, ks_, dKf[ko:ko + kl]), (2, vs_, dVf[ko:ko + kl])):
            idx = (arr.shape[0] - 1, N - 1, 1)
            a2, a1 = arr.copy(), arr.copy()
            a2[idx] += h; a1[idx] -= h
            args2, args1 = [qs, ks_, vs_], [qs, ks_, vs_]
            args2[which], args1[which] = a2, a1
            fd = (loss(*args2) - loss(*args1)) / (2 * h)
            assert abs(fd - g[idx]) < 2e-3 * (1 + abs(g[idx])), (name, i, which, fd, g[idx])
    lg = lambda x, L_: x.reshape(B, L_, N, H).transpose(0, 2, 1, 3)
    names = ["q", "k", "v", "stats", "dO", "O", "q_seqlen", "kv_seqlen", "q_offsets", "kv_offsets"]
    ins = [(q, dt), (k, dt), (v, dt), (stats, "f32"), (dO, dt), (Of.reshape(B, T, N, H), dt),
           (qlen.reshape(B, M), "s32"), (kvlen.reshape(B, M), "s32"),
           (qoff.reshape(B, M + 1), "s32"), (kvoff.reshape(B, M + 1), "s32")]
    exp = [(lg(dQf, T), dt), (lg(dKf, S), dt), (lg(dVf, S), dt)]
    keys = [k_ for k_ in DN if "grad" in k_]
    cfg = json.loads(fmha_cfg(keys, scale, "PADDING_CAUSAL" if causal else "PADDING", B, N, T, S))
    cfg["cudnn_fmha_backend_config"]["max_seg_per_batch"] = M
    cfg = json.dumps(cfg, separators=(",", ":"))
    rq = "f32[%d,%d,%d,%d]{3,1,2,0}" % (B, N, T, H)
    rk = "f32[%d,%d,%d,%d]{3,1,2,0}" % (B, N, S, H)
    res = [rq, rk, rk]
    params = "\n".join("  %%%s = %s parameter(%d)" % (n, shape(x[1], x[0].shape), i)
                       for i, (n, x) in enumerate(zip(names, ins)))
    gtes = "\n".join("  %%g%d = %s get-tuple-element(%%cc), index=%d" % (i, r, i) for i, r in enumerate(res))
    module = ("HloModule %s\n\nENTRY %%main {\n%s\n  %%cc = (%s, u8[0]{0}) custom-call(%s), "
              "custom_call_target=\"__cudnn$fmhaSoftmaxBackward\", api_version=API_VERSION_STATUS_RETURNING, "
              "backend_config=%s\n%s\n  ROOT %%t = (%s) tuple(%%g0, %%g1, %%g2)\n}\n"
              % (name, params, ", ".join(res), ", ".join("%" + n for n in names), cfg, gtes, ", ".join(res)))
    # The twin: per segment (the segment table is fixed for this case).
    L = ["  %s = %s parameter(%d)" % (n, shape(x[1], x[0].shape), i) for i, (n, x) in enumerate(zip(names, ins))]
    L.append("  qf = f32[%d,%d,%d] reshape(q)\n  kf = f32[%d,%d,%d] reshape(k)\n  vf = f32[%d,%d,%d] reshape(v)\n"
             "  dof = f32[%d,%d,%d] reshape(dO)\n  of = f32[%d,%d,%d] reshape(O)\n"
             "  scale = f32[] constant(%r)\n  zero = f32[] constant(0)"
             % (B * T, N, H, B * S, N, H, B * S, N, H, B * T, N, H, B * T, N, H, scale))
    pieces = {"dq": [], "dk": [], "dv": []}
    cur = {"dq": 0, "dk": 0, "dv": 0}
    for i, ((qo, ql), (ko, kl)) in enumerate(zip(qsegs, kvsegs)):
        t = "g%d" % i
        for src, o_, n_, nm in (("qf", qo, ql, "q"), ("kf", ko, kl, "k"), ("vf", ko, kl, "v"),
                                ("dof", qo, ql, "do"), ("of", qo, ql, "o")):
            L.append("  %s_%s = f32[%d,%d,%d] slice(%s), slice={[%d:%d], [0:%d], [0:%d]}"
                     % (t, nm, n_, N, H, src, o_, o_ + n_, N, H))
        SS = "f32[%d,%d,%d]" % (N, ql, kl)
        L.append("  %s_st = f32[1,%d,%d] slice(stats), slice={[%d:%d], [0:%d], [0:%d]}\n  %s_s2 = f32[%d,%d] reshape(%s_st)"
                 % (t, N, ql, i, i + 1, N, ql, t, N, ql, t))
        L.append("  %s_s0 = %s dot(%s_q, %s_k), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, "
                 "rhs_contracting_dims={2}\n  %s_sc = %s broadcast(scale), dimensions={}\n  %s_s1 = %s multiply(%s_s0, %s_sc)\n"
                 "  %s_sb = %s broadcast(%s_s2), dimensions={0,1}\n  %s_d = %s subtract(%s_s1, %s_sb)\n  %s_p0 = %s exponential(%s_d)"
                 % (t, SS, t, t, t, SS, t, SS, t, t, t, SS, t, t, SS, t, t, t, SS, t))
        pv = t + "_p0"
        if causal:
            L.append("  %s_iq = s32[%d,%d,%d] iota(), iota_dimension=1\n  %s_ik = s32[%d,%d,%d] iota(), iota_dimension=2\n"
                     "  %s_ok = pred[%d,%d,%d] compare(%s_ik, %s_iq), direction=LE\n  %s_z = %s broadcast(zero), dimensions={}\n"
                     "  %s_p = %s select(%s_ok, %s_p0, %s_z)"
                     % (t, N, ql, kl, t, N, ql, kl, t, N, ql, kl, t, t, t, SS, t, SS, t, t, t))
            pv = t + "_p"
        L.append("  %s_dp = %s dot(%s_do, %s_v), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, "
                 "rhs_contracting_dims={2}\n  %s_oo = f32[%d,%d,%d] multiply(%s_do, %s_o)\n"
                 "  %s_D0 = f32[%d,%d] reduce(%s_oo, zero), dimensions={2}, to_apply=sum\n  %s_D = f32[%d,%d] transpose(%s_D0), dimensions={1,0}\n"
                 "  %s_Db = %s broadcast(%s_D), dimensions={0,1}\n  %s_x = %s subtract(%s_dp, %s_Db)\n  %s_ds = %s multiply(%s, %s_x)"
                 % (t, SS, t, t, t, ql, N, H, t, t, t, ql, N, t, t, N, ql, t, t, SS, t, t, SS, t, t, t, SS, pv, t))
        L.append("  %s_dv0 = f32[%d,%d,%d] dot(%s, %s_do), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={1}, "
                 "rhs_contracting_dims={0}\n  %s_dq0 = f32[%d,%d,%d] dot(%s_ds, %s_k), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
                 "rhs_batch_dims={1}, rhs_contracting_dims={0}\n  %s_dk0 = f32[%d,%d,%d] dot(%s_ds, %s_q), lhs_batch_dims={0}, "
                 "lhs_contracting_dims={1}, rhs_batch_dims={1}, rhs_contracting_dims={0}"
                 % (t, N, kl, H, pv, t, t, N, ql, H, t, t, t, N, kl, H, t, t))
        for g_, n_, o_ in (("dq", ql, qo), ("dk", kl, ko), ("dv", kl, ko)):
            src = "%s_%s0" % (t, g_)
            if g_ != "dv":
                L.append("  %s_%sb = f32[%d,%d,%d] broadcast(scale), dimensions={}\n  %s_%s1 = f32[%d,%d,%d] multiply(%s, %s_%sb)"
                         % (t, g_, N, n_, H, t, g_, N, n_, H, src, t, g_))
                src = "%s_%s1" % (t, g_)
            L.append("  %s_%st = f32[%d,%d,%d] transpose(%s), dimensions={1,0,2}" % (t, g_, n_, N, H, src))
            if o_ > cur[g_]:
                L.append("  gap_%s%d = f32[%d,%d,%d] broadcast(zero), dimensions={}" % (g_, i, o_ - cur[g_], N, H))
                pieces[g_].append("gap_%s%d" % (g_, i))
            pieces[g_].append("%s_%st" % (t, g_))
            cur[g_] = o_ + n_
    outs = []
    for g_, L_ in (("dq", T), ("dk", S), ("dv", S)):
        if cur[g_] < B * L_:
            L.append("  gapend_%s = f32[%d,%d,%d] broadcast(zero), dimensions={}" % (g_, B * L_ - cur[g_], N, H))
            pieces[g_].append("gapend_%s" % g_)
        L.append("  %s_c = f32[%d,%d,%d] concatenate(%s), dimensions={0}\n  %s_4 = f32[%d,%d,%d,%d] reshape(%s_c)\n"
                 "  %s = f32[%d,%d,%d,%d] transpose(%s_4), dimensions={0,2,1,3}"
                 % (g_, B * L_, N, H, ", ".join(pieces[g_]), g_, B, L_, N, H, g_, g_, B, N, L_, H, g_))
        outs.append(g_)
    L.append("  ROOT r = (f32[%d,%d,%d,%d], f32[%d,%d,%d,%d], f32[%d,%d,%d,%d]) tuple(dq, dk, dv)"
             % (B, N, T, H, B, N, S, H, B, N, S, H))
    twin = "HloModule %s_twin\n\n%sENTRY main {\n%s\n}\n" % (name, MAXSUM, "\n".join(L))
    write_case("calls", name, module, ins, exp, TOL[dt])
    write_case("twins", name, twin, ins, exp, TOL[dt])


def packed_bwd_cases():
    packed_bwd_case("fmha_bwd_packed_causal", 2, 2, 6, 6, 2, 3,
                    [(0, 2), (2, 3), (7, 4)], [(0, 3), (3, 3), (6, 5)], True)


def mx_cases():
    # XLA's MxFp8Correctness shape family: K contracted on both, block 32.
    mx_case("mx_fp8_f32", "f8e4m3fn", "f8e4m3fn", "f32", [16, 64], [16, 64], [], [1], [], [1])
    # Mixed fp4 x fp8 with a size-1 batch dim, bf16 out.
    mx_case("mx_fp4_fp8_batch_bf16", "f4e2m1fn", "f8e5m2", "bf16", [1, 16, 96], [1, 16, 96], [0], [2], [0], [2])
    # rhs contracting on its major dim: the scale blocks run along dim 0.
    mx_case("mx_fp8_rhs_kmajor_f16", "f8e5m2", "f8e4m3fn", "f16", [16, 64], [64, 32], [], [1], [], [0], alpha=0.5)


if __name__ == "__main__":
    sys.exit(main())
