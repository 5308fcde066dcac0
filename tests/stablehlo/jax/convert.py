#!/usr/bin/env python3
"""Convert JAX's CPU back-compat test data into hlorun test cases (run once).

    tests/stablehlo/jax/convert.py JAX_CHECKOUT OUTDIR

JAX_CHECKOUT is a checkout of github.com/jax-ml/jax. Each
jax/_src/internal_test_util/export_back_compat_test_data/cpu_*.py holds
data_YYYY_MM_DD dicts (one entry per dtype) with mlir_module_text, inputs,
expected_outputs and custom_call_targets. For the newest date of each file
and every dtype in it, OUTDIR gets

    NAME.mlir           mlir_module_text, unchanged
    NAME.in.npz         the inputs as arr_0, arr_1, ... (only when there are any)
    NAME.expected.npy   the expected output (one result), or
    NAME.expected.npz   the expected outputs as arr_0, arr_1, ... (several)

with NAME = the file's name without "cpu_" and ".py", "_" and the dtype
(lu_lapack_getrf_f32), and OUTDIR/cases.txt: one line per case,
"NAME RTOL ATOL DATE CHECK". The tolerances are the ones jax/tests/
export_back_compat_test.py gives run_one_test for that test and dtype (every
CPU test uses rtol f32/c64 1e-3, f64/c128 1e-5 and atol 1e-4 / 1e-12; the
QR test gives no atol, so JAX's assertAllClose default for the dtype holds:
1e-6 for f32/c64, 1e-15 for f64/c128). CHECK is "expect" (hlorun --expect
against the recorded outputs, as run_one_test does by default) or, for the
tests whose outputs are not unique (eigenvectors of repeated eigenvalues,
Schur vectors up to sign) and which JAX checks by their defining property
instead, the name of that check in check.py: eig, eigh, schur.

    tests/stablehlo/jax/convert.py --shardy JAX_CHECKOUT OUTDIR

converts JAX's shard_map exports instead: every date of
shardy_sharding_ops_with_different_meshes.py (each another form of the same
shard_map, exported by another JAX: the Shardy round trip's custom calls with
their attributes on the body's call (2025-02-12) or on the custom calls
(2025-04-14), and the sdy dialect's manual computation (2025-06-30)) as
shardy_shard_map_DATE, and tpu_Sharding.py's GSPMD and Shardy lowerings as
shardy_tpu_sharding_DATE_VARIANT; it replaces their lines in OUTDIR/cases.txt
(values are moved, not computed: rtol = atol = 0). JAX at 480b49923f is the
last commit that holds all three dates of the first file.

The data files are Python; before running one, its syntax tree is checked to
hold only imports of datetime and numpy, name aliases and dict assignments,
so nothing else in the checkout is executed.
"""
import ast
import datetime
import os
import re
import sys

import numpy as np

DATA_DIR = os.path.join("jax", "_src", "internal_test_util",
                        "export_back_compat_test_data")
RTOL = dict(f32=1e-3, f64=1e-5, c64=1e-3, c128=1e-5)
ATOL = dict(f32=1e-4, f64=1e-12, c64=1e-4, c128=1e-12)
ATOL_DEFAULT = dict(f32=1e-6, f64=1e-15, c64=1e-6, c128=1e-15)
NO_ATOL = {"qr_lapack_geqrf"}  # run_one_test(func, data, rtol=rtol) only
# check_results= of export_back_compat_test.py that do not compare outputs
CHECKS = {"eig_lapack_geev": "eig", "eigh_lapack_syev": "eigh",
          "schur_lapack_gees": "schur"}
ALLOWED_CALLS = {"array", "dict", "date", "dtype"}


def check_tree(path, text):
    """Refuse a data file that does anything but define data."""
    tree = ast.parse(text, path)
    for node in tree.body:
        if isinstance(node, ast.Import):
            names = {a.name for a in node.names}
            if not names <= {"datetime", "numpy"}:
                raise SystemExit(f"{path}: unexpected import {names}")
        elif isinstance(node, ast.Assign):
            pass
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            pass
        else:
            raise SystemExit(f"{path}:{node.lineno}: unexpected statement")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name not in ALLOWED_CALLS:
                raise SystemExit(f"{path}:{node.lineno}: unexpected call {name}")
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.ClassDef)):
            raise SystemExit(f"{path}:{node.lineno}: unexpected definition")


def newest(ns):
    dates = sorted(k for k in ns if re.fullmatch(r"data_\d{4}_\d{2}_\d{2}", k))
    return dates[-1], ns[dates[-1]]


def save_values(path_stem, suffix, values):
    values = [np.asarray(v) for v in values]
    if suffix == "expected" and len(values) == 1:
        np.save(f"{path_stem}.{suffix}.npy", values[0])
    else:
        np.savez(f"{path_stem}.{suffix}.npz",
                 **{f"arr_{i}": v for i, v in enumerate(values)})


# The shard_map exports, by file: every date, and every variant of a date
# (tpu_Sharding.py records the GSPMD and the Shardy lowering side by side).
SHARDY_FILES = {"shardy_sharding_ops_with_different_meshes.py": "shardy_shard_map",
                "tpu_Sharding.py": "shardy_tpu_sharding"}


def shardy(root, out):
    lines = []
    for fname, prefix in SHARDY_FILES.items():
        path = os.path.join(root, DATA_DIR, fname)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        check_tree(path, text)
        ns = {}
        exec(compile(text, path, "exec"), ns)  # checked above: data only
        for date in sorted(k for k in ns if re.fullmatch(r"data_\d{4}_\d{2}_\d{2}", k)):
            entry = ns[date]
            variants = [("", entry)] if "mlir_module_text" in entry else sorted(entry.items())
            for variant, e in variants:
                name = f"{prefix}_{date[5:]}" + (f"_{variant}" if variant else "")
                stem = os.path.join(out, name)
                with open(stem + ".mlir", "w", encoding="utf-8") as f:
                    f.write(e["mlir_module_text"].lstrip("\n"))
                save_values(stem, "in", e["inputs"])
                save_values(stem, "expected", e["expected_outputs"])
                lines.append(f"{name} 0 0 {date[5:]} expect")
    cases = os.path.join(out, "cases.txt")
    with open(cases, encoding="utf-8") as f:
        kept = [l for l in f.read().splitlines()
                if not any(l.startswith(p + "_") for p in SHARDY_FILES.values())]
    with open(cases, "w", encoding="utf-8") as f:
        f.write("\n".join(kept + lines) + "\n")
    print(f"{len(lines)} Shardy cases written to {out}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--shardy":
        return shardy(sys.argv[2], sys.argv[3])
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    root, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    src = os.path.join(root, DATA_DIR)
    lines = []
    for fname in sorted(os.listdir(src)):
        if not (fname.startswith("cpu_") and fname.endswith(".py")):
            continue
        path = os.path.join(src, fname)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        check_tree(path, text)
        ns = {}
        exec(compile(text, path, "exec"), ns)  # checked above: data only
        date, entries = newest(ns)
        test = fname[len("cpu_"):-len(".py")]
        for dtype in sorted(entries):
            e = entries[dtype]
            name = f"{test}_{dtype}"
            stem = os.path.join(out, name)
            with open(stem + ".mlir", "w", encoding="utf-8") as f:
                f.write(e["mlir_module_text"].lstrip("\n"))
            if e["inputs"]:
                save_values(stem, "in", e["inputs"])
            save_values(stem, "expected", e["expected_outputs"])
            atol = ATOL_DEFAULT[dtype] if test in NO_ATOL else ATOL[dtype]
            check = CHECKS.get(test, "expect")
            lines.append(f"{name} {RTOL[dtype]:g} {atol:g} {date[5:]} {check}")
    with open(os.path.join(out, "cases.txt"), "w", encoding="utf-8") as f:
        f.write("# NAME RTOL ATOL DATE CHECK (written by tests/stablehlo/jax/convert.py)\n")
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} cases written to {out}")


if __name__ == "__main__":
    main()
