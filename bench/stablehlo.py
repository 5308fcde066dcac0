#!/usr/bin/python3
"""make bench: reading StableHLO against reading the same module as HLO text.

Usage: bench/stablehlo.py HLORUN [--layers N] [--repeat K] [--keep]

Two modules, each read as MLIR (StableHLO) and as the HLO text hlorun
--print makes of it: (1) the largest of JAX's exported CPU modules in
tests/stablehlo/jax, (2) a large bench workload written as StableHLO here:
N layers (default 3000) of an MLP-like step (dot_general, broadcast_in_dim
of a bias, add, a maximum with a dense constant, a reduce whose body is a
region, a func.call of a private function), about 1.5 MB of MLIR.

For each form, `HLORUN --print FILE` (parse, translate for MLIR, verify,
print the HLO) runs K times (default 5); the median CPU time (user +
system: steadier than the wall on a shared host) is reported, and the ratio
MLIR / HLO: the cost of the StableHLO front end over the HLO parser (also
net of hlorun's start-up, the median CPU time of --print on a one-line
module, which dominates the small JAX module). The
printed HLO of both forms must be the same text (otherwise: exit 1).
Target (issue 35): the same order, a ratio under 10 (PASS/MISS line).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile


def run(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate()
    if p.returncode != 0:
        sys.exit("%s: exit %d: %s" % (" ".join(cmd), p.returncode, err.decode(errors="replace")))
    return out


def cpu_time(cmd):
    """CPU seconds (user + system) of one run of cmd, output discarded."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        sys.exit("%s: exit %d" % (" ".join(cmd), rc))
    return ru.ru_utime + ru.ru_stime


def workload(layers, width=16):
    """An MLP-like chain of `layers` steps as StableHLO text."""
    t = f"tensor<{width}x{width}xf32>"
    v = f"tensor<{width}xf32>"
    out = ["module @bench_mlp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {",
           f"  func.func private @act(%x: {t}) -> {t} {{",
           "    %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
           f"    %zb = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> {t}",
           f"    %r = stablehlo.maximum %x, %zb : {t}",
           f"    return %r : {t}",
           "  }",
           f"  func.func public @main(%x: {t}, %w: {t}, %b: {v}) -> ({t}, {v}) {{"]
    cur = "%x"
    for i in range(layers):
        out += [
            f"    %d{i} = stablehlo.dot_general {cur}, %w, contracting_dims = [1] x [0] : ({t}, {t}) -> {t}",
            f"    %bb{i} = stablehlo.broadcast_in_dim %b, dims = [1] : ({v}) -> {t}",
            f"    %s{i} = stablehlo.add %d{i}, %bb{i} : {t}",
            f"    %c{i} = stablehlo.constant dense<{(i % 7) * 0.125 + 0.5:e}> : {t}",
            f"    %m{i} = stablehlo.minimum %s{i}, %c{i} : {t}",
            f"    %a{i} = func.call @act(%m{i}) : ({t}) -> {t}",
        ]
        cur = f"%a{i}"
    out += [
        "    %init = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
        f"    %sum = stablehlo.reduce({cur} init: %init) across dimensions = [0] : ({t}, tensor<f32>) -> {v}",
        "     reducer(%p: tensor<f32>, %q: tensor<f32>)  {",
        "      %pq = stablehlo.add %p, %q : tensor<f32>",
        "      stablehlo.return %pq : tensor<f32>",
        "    }",
        f"    return {cur}, %sum : {t}, {v}",
        "  }",
        "}",
    ]
    return "\n".join(out) + "\n"


startup = [0.0]  # CPU time of --print on a one-instruction module


def compare(hlorun, name, mlir_path, tmp, repeat):
    hlo_text = run([hlorun, "--print", mlir_path])
    hlo_path = os.path.join(tmp, name + ".hlo")
    with open(hlo_path, "wb") as f:
        f.write(hlo_text)
    again = run([hlorun, "--print", hlo_path])
    if again != hlo_text:
        print(f"{name}: FAIL: the HLO printed from the MLIR does not print back the same")
        return None
    t_mlir = statistics.median(cpu_time([hlorun, "--print", mlir_path]) for _ in range(repeat))
    t_hlo = statistics.median(cpu_time([hlorun, "--print", hlo_path]) for _ in range(repeat))
    ratio = t_mlir / t_hlo if t_hlo > 0 else float("inf")
    base = startup[0]
    net = (t_mlir - base) / (t_hlo - base) if t_hlo - base > 0.002 else float("nan")
    print(f"{name}: MLIR {os.path.getsize(mlir_path) / 1e3:.0f} kB {t_mlir * 1e3:.1f} ms, "
          f"HLO {len(hlo_text) / 1e3:.0f} kB {t_hlo * 1e3:.1f} ms, ratio {ratio:.2f} "
          f"(without the {base * 1e3:.1f} ms start-up: {net:.2f})")
    return ratio


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("hlorun")
    ap.add_argument("--layers", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    jax_dir = os.path.join(here, "..", "tests", "stablehlo", "jax")
    mods = [os.path.join(jax_dir, n) for n in os.listdir(jax_dir) if n.endswith(".mlir")]
    largest = max(mods, key=os.path.getsize)
    tmp = tempfile.mkdtemp(prefix="hlorun-bench-shlo.")
    try:
        print("StableHLO front end: hlorun --print (translate + verify + print) of MLIR vs its HLO text")
        ok = True
        tiny = os.path.join(tmp, "tiny.hlo")
        with open(tiny, "w") as f:
            f.write("HloModule t\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
        startup[0] = statistics.median(cpu_time([a.hlorun, "--print", tiny]) for _ in range(a.repeat))
        r1 = compare(a.hlorun, "jax " + os.path.basename(largest)[:-5], largest, tmp, a.repeat)
        big = os.path.join(tmp, "mlp.mlir")
        with open(big, "w") as f:
            f.write(workload(a.layers))
        r2 = compare(a.hlorun, f"mlp {a.layers} layers", big, tmp, a.repeat)
        ok = r1 is not None and r2 is not None and r1 < 10 and r2 < 10
        print(f"{'PASS' if ok else 'MISS'}: MLIR within 10x of HLO text (issue 35: the same order)")
        return 0 if r1 is not None and r2 is not None else 1
    finally:
        if not a.keep:
            for n in os.listdir(tmp):
                os.unlink(os.path.join(tmp, n))
            os.rmdir(tmp)


if __name__ == "__main__":
    sys.exit(main())
