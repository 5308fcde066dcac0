#!/usr/bin/python3
"""Generate tests/scaled_dot/cases/: the scaled-dot opcode (XLA's block-scaled
dot) as suite directories (module.hlo, in*.txt, expected.txt, tolerance).

The expected values follow XLA's definition (ScaledDotRewriter, scaled_dot_
rewriter.cc, and JAX's reference lowering jax/_src/lax/scaled_dot.py),
computed here with numpy, never with hlorun: each operand and its scale
converted to one type T (bf16 when both are narrower than 16 bits, the type
itself when they agree, f32 when they are as wide but differ, else the
wider one), multiplied in T with the scale repeated over its blocks (scale
entry j / (n / s) for element j of a dimension of size n and scale size s),
then the dot in the result type. The operands are drawn on their types'
grids (f8e4m3fn multiples of 1/8 up to 2, f8e5m2 of 1/4 up to 2, f4e2m1fn's
eight magnitudes, f8e8m0fnu powers of two), so every dequantized value and
every partial sum is exact and only the final rounding (bf16 results) or
the f16 multiply of the f16 case rounds.
Run: /usr/bin/python3 tools/gen_scaled_dot_cases.py (needs python3-numpy).
"""
import os
import shutil

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "scaled_dot", "cases")
rng = np.random.default_rng(35)
GRID = {"f8e4m3fn": np.arange(-16, 17) / 8, "f8e5m2": np.arange(-8, 9) / 4,
        "f4e2m1fn": np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -.5, -1, -1.5, -2, -3, -4, -6]),
        "f8e8m0fnu": 2.0 ** np.arange(-3, 4)}


def bf16(x):
    """x (f64) rounded to bf16 (nearest even), as f64."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return b.astype(np.uint32).view(np.float32).astype(np.float64)


ROUND = {"f32": lambda x: np.asarray(x, np.float32).astype(np.float64), "bf16": bf16,
         "f64": lambda x: np.asarray(x, np.float64),
         "f16": lambda x: np.asarray(x, np.float16).astype(np.float64)}


def body(x):
    if x.ndim == 0:
        return repr(float(x))
    return "{" + ", ".join(body(e) for e in x) + "}"


def lit(x, t):
    return "%s[%s] %s" % (t, ",".join(map(str, x.shape)), body(x))


def shp(x, t):
    return "%s[%s]" % (t, ",".join(map(str, x.shape)))


def expand(s, full):
    """Scale s repeated over its blocks to the operand's shape."""
    if s.ndim == 0:
        return np.full(full, float(s))
    for i, (a, b) in enumerate(zip(s.shape, full)):
        s = np.repeat(s, b // a, axis=i)
    return s


def dot(a, b, lb, lc, rb, rc):
    lf = [i for i in range(a.ndim) if i not in lb + lc]
    rf = [i for i in range(b.ndim) if i not in rb + rc]
    r = np.einsum(a, list(range(a.ndim)), b,
                  [lb[rb.index(j)] if j in rb else lc[rc.index(j)] if j in rc else a.ndim + j
                   for j in range(b.ndim)],
                  lb + lf + [a.ndim + j for j in rf])
    return r


def case(name, ops, types, dn, out_t, sides_t, comment):
    """ops: lhs, rhs, lhs_scale, rhs_scale (f64 arrays on their grids);
    types: their HLO types; sides_t: each side's T."""
    lb, lc, rb, rc = dn
    deq = []
    for i in range(2):
        x, s = ops[i], ops[2 + i]
        if s.ndim == 0:
            deq.append(x)   # a scalar scale (1) leaves the operand as it is
        else:
            deq.append(ROUND[sides_t[i]](x * expand(s, x.shape)))
    y = ROUND[out_t](dot(deq[0], deq[1], lb, lc, rb, rc))
    d = os.path.join(ROOT, name)
    os.makedirs(d, exist_ok=True)
    lst = lambda v: "{" + ",".join(map(str, v)) + "}"
    dims = "lhs_contracting_dims=%s, rhs_contracting_dims=%s" % (lst(lc), lst(rc))
    if lb:
        dims = "lhs_batch_dims=%s, rhs_batch_dims=%s, " % (lst(lb), lst(rb)) + dims
    params = "\n".join("  p%d = %s parameter(%d)" % (i, shp(x, t), i)
                       for i, (x, t) in enumerate(zip(ops, types)))
    open(os.path.join(d, "module.hlo"), "w").write(
        "// %s\nHloModule %s\n\nENTRY main {\n%s\n  ROOT r = %s scaled-dot(p0, p1, p2, p3), %s\n}\n"
        % (comment, name, params, shp(y, out_t), dims))
    for i, (x, t) in enumerate(zip(ops, types)):
        open(os.path.join(d, "in%d.txt" % i), "w").write(lit(x, t) + "\n")
    open(os.path.join(d, "expected.txt"), "w").write(lit(y, out_t) + "\n")
    open(os.path.join(d, "tolerance"), "w").write("rtol=0 atol=0\n")


def on(t, shape):
    return rng.choice(GRID[t], size=shape)


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    # MXFP8: K = 64 in blocks of 32, e4m3 x e5m2, e8m0 scales, f32 result.
    case("mxfp8_f32", [on("f8e4m3fn", (4, 64)), on("f8e5m2", (64, 3)), on("f8e8m0fnu", (4, 2)),
                       on("f8e8m0fnu", (2, 3))],
         ["f8e4m3fn", "f8e5m2", "f8e8m0fnu", "f8e8m0fnu"], ([], [1], [], [0]), "f32",
         ["bf16", "bf16"], "MXFP8: blocks of 32 along K, dequantized in bf16")
    # NVFP4 with a batch dimension: f4e2m1fn in blocks of 16, f8e4m3fn
    # scales (drawn from 1/8 steps), bf16 result (one rounding).
    sc = lambda shape: rng.choice(np.arange(1, 17) / 8, size=shape)
    case("nvfp4_batch_bf16", [on("f4e2m1fn", (2, 3, 32)), on("f4e2m1fn", (2, 5, 32)), sc((2, 3, 2)),
                              sc((2, 5, 2))],
         ["f4e2m1fn", "f4e2m1fn", "f8e4m3fn", "f8e4m3fn"], ([0], [2], [0], [2]), "bf16",
         ["bf16", "bf16"], "NVFP4: blocks of 16 along K, batch dimension 0, bf16 result")
    # Scales along non-contracting dimensions too, and other types: bf16 with
    # an f32 scale dequantizes in f32; f16 with an f16 scale multiplies in
    # f16, rounding (1 + 2^-10)^2 to 1 + 2^-9.
    e = 1 + 2.0 ** -10
    lhs = on("f8e4m3fn", (4, 8))
    rhs = np.full((8, 2), e)
    rhs[::3] = 1.5
    case("mixed_types_f32", [lhs, rhs, np.array([[0.5], [3.0]]), np.array([[e, 2.0]])],
         ["bf16", "f16", "f32", "f16"], ([], [1], [], [0]), "f32", ["f32", "f16"],
         "bf16 x f32 scale in f32 (rows in 2 blocks); f16 x f16 scale in f16 (rounds)")
    # A scalar scale leaves its operand as it is (XLA's rewriter skips it;
    # only 1 is accepted).
    case("scalar_scale_f32", [on("f8e4m3fn", (3, 32)), on("f8e4m3fn", (32, 2)), np.array(1.0),
                              on("f8e8m0fnu", (1, 2))],
         ["f8e4m3fn", "f8e4m3fn", "f32", "f8e8m0fnu"], ([], [1], [], [0]), "f32",
         ["f8e4m3fn", "bf16"], "a scalar lhs scale of 1, per-column rhs scales")


if __name__ == "__main__":
    main()
