"""hlorun.compare_runs (the first divergence against a reference) with
planted bugs whose answers are worked out by hand in the comments, each
with its negative (a correct pair says none), and the bad input."""
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hlorun
from conftest import BUILDDIR, src

# b = a * x here; the reference (V2) has b = a * a. Everything after b
# differs too: the first one, b, is named.
V1 = """HloModule v1
ENTRY main {
  x = f32[3] parameter(0)
  a = f32[3] add(x, x)
  b = f32[3] multiply(a, x)
  c = f32[3] subtract(b, x)
  ROOT d = f32[3] negate(c)
}
"""
V2 = V1.replace("multiply(a, x)", "multiply(a, a)").replace("HloModule v1", "HloModule v2")

F16 = """HloModule f16_overflow
ENTRY main {
  x = f16[3] parameter(0)
  s = f16[3] multiply(x, x)
  half = f16[] constant(0.5)
  b = f16[3] broadcast(half), dimensions={}
  h = f16[3] multiply(s, b)
  ROOT r = f16[3] sqrt(h)
}
"""


def line_of(text, start):
    """1-based line of the first line of text starting (indented) with start."""
    return next(k for k, l in enumerate(text.splitlines(), 1) if l.strip().startswith(start))


def test_version_pair_names_the_first_differing_instruction():
    x = np.float32([1, 2, 3])
    d = hlorun.compare_runs(hlorun.load(V1), hlorun.load(V2), x)
    # a = 2x = {2,4,6} in both; b = a*x = {2,8,18} against a*a = {4,16,36}.
    assert d.found and d.instruction == "b" and d.opcode == "multiply"
    assert d.line == line_of(V1, "b =") and d.counterpart == "b"
    assert d.counterpart_line == line_of(V2, "b =") and d.computation == "main"
    assert d.iteration is None and d.call is None
    assert (d.mismatches, d.elements) == (3, 3)
    assert d.max_abs_error == 18 and d.max_abs_at == "[2]"      # |18 - 36|
    assert d.value.tolist() == [2, 8, 18] and d.reference_value.tolist() == [4, 16, 36]
    assert d.text.startswith(f"first divergence: b (multiply, line {line_of(V1, 'b =')})")
    # The results: -(b - x) = {-1,-6,-15} against {-3,-14,-33}.
    assert d.result.tolist() == [-1, -6, -15] and d.reference_result.tolist() == [-3, -14, -33]
    assert d.result_mismatches == 3 and "3 of 3 elements differ" in d.result_report
    # a, b, c, d have counterparts (x, a parameter, is not compared); the
    # comparing stops at the first divergence: a agreed, b differed.
    assert (d.paired, d.unpaired, d.values_compared, d.runs) == (4, 0, 2, 1)
    assert not d.agree and str(d) == d.text


def test_correct_pair_says_none():
    x = np.float32([1, 2, 3])
    d = hlorun.compare_runs(hlorun.load(V2), hlorun.load(V2.replace("v2", "v2b")), x)
    assert not d.found and d.agree and d.result_mismatches == 0 and d.result_report == ""
    assert d.text == "first divergence: none" and d.instruction is None
    assert d.value is None and d.values_compared == 4


def test_memory_budget_repeats_the_runs_and_finds_the_same():
    # One 12-byte value fits a 12-byte budget: the four values take more
    # than one pair of runs, and b is still the first.
    x = np.float32([1, 2, 3])
    d = hlorun.compare_runs(hlorun.load(V1), hlorun.load(V2), x, memory_budget=12)
    assert d.runs > 1 and d.instruction == "b" and d.values_compared == 2
    assert d.value.tolist() == [2, 8, 18]


def test_loop_iteration_is_named():
    # loop_bad multiplies by 3 on iteration 2 only: y there is x0 * 4 * 3 =
    # {12,24,36,48} against x0 * 8 = {8,16,24,32}.
    d = hlorun.compare_runs(hlorun.load(src("tests", "diverge", "loop_bad.hlo")),
                            hlorun.load(src("tests", "diverge", "loop_ok.hlo")),
                            np.float32([1, 2, 3, 4]))
    assert (d.instruction, d.opcode, d.computation, d.iteration) == ("y", "multiply", "body", 2)
    assert d.line == 15 and d.counterpart_line == 11 and d.call is None
    assert d.value.tolist() == [12, 24, 36, 48] and d.reference_value.tolist() == [8, 16, 24, 32]
    assert d.max_abs_error == 16 and d.max_abs_at == "[3]"
    # The result: x0 * 2*2*3*2 = 24 x0 against 16 x0.
    assert d.result.tolist() == [24, 48, 72, 96] and d.result_mismatches == 4
    ok = hlorun.compare_runs(hlorun.load(src("tests", "diverge", "loop_ok.hlo")),
                             hlorun.load(src("tests", "diverge", "loop_ok.hlo")),
                             np.float32([1, 2, 3, 4]))
    assert not ok.found and ok.agree


def test_f16_overflow_found_in_f64():
    # s = x*x: 300^2 = 90000 > 65504, the largest f16: inf in f16, 90000 in
    # f64. h and r follow it (inf), but s is named.
    m = hlorun.load(F16)
    d = hlorun.compare_runs(m, None, np.float16([1, 300, 2]), reference_precision="f64")
    assert d.found and (d.instruction, d.opcode, d.line) == ("s", "multiply", line_of(F16, "s ="))
    assert (d.mismatches, d.elements) == (1, 3) and d.max_abs_at == "[1]"
    assert d.value.dtype == np.float16 and np.isinf(d.value[1])
    assert d.reference_value.dtype == np.float64 and d.reference_value.tolist() == [1, 90000, 4]
    # sqrt(90000 / 2) = 212.13... in f64; inf in f16.
    assert np.isinf(d.result[1]) and abs(d.reference_result[1] - np.sqrt(45000)) < 1e-9
    assert d.result_mismatches == 1
    # 200^2 = 40000 fits f16 (exactly: a multiple of 32 in [32768, 65536)).
    ok = hlorun.compare_runs(m, None, np.float16([1, 200, 2]), reference_precision="f64")
    assert not ok.found and ok.result_mismatches == 0


ULP = """HloModule ulp
ENTRY main {
  x = f32[3] parameter(0)
  e = f32[] constant(1.1920929e-07)
  b = f32[3] broadcast(e), dimensions={}
  ROOT y = f32[3] add(x, b)
}
"""


def test_ulp_tolerance():
    # y = 1 + 2^-23, the next f32 after 1, against 1 + 0: one value apart.
    m, ref = hlorun.load(ULP), hlorun.load(ULP.replace("1.1920929e-07", "0"))
    x = np.float32([1, 1, 1])
    assert hlorun.compare_runs(m, ref, x, ulp=0).instruction == "y"
    assert not hlorun.compare_runs(m, ref, x, ulp=1).found
    assert not hlorun.compare_runs(m, ref, x).found           # f32's default rtol 1e-4
    assert hlorun.compare_runs(m, ref, x, rtol=0, atol=0).mismatches == 3
    one_up = np.float32([1 + 2 ** -23])
    assert not hlorun.compare(one_up, np.float32([1]), ulp=0)
    assert hlorun.compare(one_up, np.float32([1]), ulp=1)


# Python handlers are typed FFI handlers: the calls say so.
with open(src("tests", "diverge", "loop_cc.hlo"), encoding="utf-8") as _f:
    LOOP_CC = re.sub(r'custom_call_target="(\w+)"',
                     r'custom_call_target="\1", api_version=API_VERSION_TYPED_FFI',
                     _f.read()).replace('"scale"', '"py_div_scale"')


def times2(x, out):
    out[...] = 2 * x


def times2_buggy(x, out):       # wrong only when x[0] == 4: the third call
    out[...] = (3 if x[0] == 4 else 2) * x


def test_custom_call_wrong_on_one_iteration():
    # x = {1,2,3,4} doubled per iteration: the calls see x[0] = 1, 2, 4, 8;
    # on the third (iteration 2) h is {12,24,36,48} against {8,16,24,32}.
    hlorun.bind("py_div_scale", times2_buggy)
    m = hlorun.load(LOOP_CC)
    x = np.float32([1, 2, 3, 4])
    d = hlorun.compare_runs(m, None, x, reference_custom_calls={"py_div_scale": times2})
    assert (d.instruction, d.opcode, d.iteration) == ("h", "custom-call", 2)
    assert d.line == line_of(LOOP_CC, "h =")
    assert d.value.tolist() == [12, 24, 36, 48] and d.reference_value.tolist() == [8, 16, 24, 32]
    assert d.reference_result.tolist() == [16, 32, 48, 64]
    same = hlorun.compare_runs(m, None, x, reference_custom_calls={"py_div_scale": times2_buggy})
    assert not same.found and same.agree


TWO_CALLS = """HloModule two_calls
ENTRY main {
  x = f32[2] parameter(0)
  c1 = f32[2] custom-call(x), custom_call_target="py_div_add1", api_version=API_VERSION_TYPED_FFI
  c2 = f32[2] custom-call(c1), custom_call_target="py_div_add1", api_version=API_VERSION_TYPED_FFI
  ROOT r = f32[2] negate(c2)
}
"""


def add1(x, out):
    out[...] = x + 1


def add1_buggy(x, out):         # adds 2 when x[0] > 1.5
    out[...] = x + (2 if x[0] > 1.5 else 1)


def test_custom_call_outside_loops_names_its_call():
    # x = {1,5}: c1 = {2,6} from both; c2 = {4,8} against {3,7}.
    hlorun.bind("py_div_add1", add1_buggy)
    d = hlorun.compare_runs(hlorun.load(TWO_CALLS), None, np.float32([1, 5]),
                            reference_custom_calls={"py_div_add1": add1})
    assert (d.instruction, d.iteration, d.call) == ("c2", None, 0)
    assert d.value.tolist() == [4, 8] and d.reference_value.tolist() == [3, 7]
    assert d.max_abs_error == 1 and d.max_abs_at == "[0]" and d.result.tolist() == [-4, -8]
    assert d.text.startswith(f"first divergence: c2 (custom-call, line {line_of(TWO_CALLS, 'c2 =')}"
                             ", call 0)")


def test_library_handlers_by_path_and_symbol():
    # tests/diverge/handlers.c's legacy functions, as the command's
    # --custom-call scale=L:times2_buggy --reference-custom-call scale=L:times2.
    lib = os.path.join(BUILDDIR, "tests", "diverge", ".libs", "libdiverge_handlers.so")
    if not os.path.exists(lib):
        pytest.skip(f"{lib} is not built (make check builds it)")
    with open(src("tests", "diverge", "loop_cc.hlo"), encoding="utf-8") as f:
        text = f.read().replace('"scale"', '"lib_div_scale"')
    hlorun.bind("lib_div_scale", lib, symbol="times2_buggy")
    m, x = hlorun.load(text), np.float32([1, 2, 3, 4])
    d = hlorun.compare_runs(m, None, x, reference_custom_calls={"lib_div_scale": (lib, "times2")})
    assert (d.instruction, d.iteration, d.max_abs_error) == ("h", 2, 16)
    assert d.value.tolist() == [12, 24, 36, 48] and d.reference_value.tolist() == [8, 16, 24, 32]
    same = hlorun.compare_runs(m, None, x,
                               reference_custom_calls={"lib_div_scale": (lib, "times2_buggy")})
    assert not same.found and same.agree


def test_builtin_reference_in_a_fresh_process(tmp_path):
    # Binding MoveToHost (built in: the identity) is process-wide, so this
    # runs apart. The buggy identity adds 1 to y[1] when x[0] == 4: the
    # second call (iteration 1, h = {4,8,12,16}): 9 against 8.
    script = tmp_path / "builtin.py"
    script.write_text(textwrap.dedent(f"""
        import numpy as np, hlorun
        def identity_buggy(x, out):
            out[...] = x
            if x[0] == 4:
                out[1] += 1
        hlorun.bind("py_div_scale", lambda x, out: np.multiply(x, 2, out=out))
        hlorun.bind("MoveToHost", identity_buggy)
        m = hlorun.load({LOOP_CC!r})
        d = hlorun.compare_runs(m, None, np.float32([1, 2, 3, 4]),
                                reference_custom_calls={{"MoveToHost": "builtin"}})
        print(d.instruction, d.iteration, d.value.tolist(), d.reference_value.tolist())
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=os.environ, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "y 1 [4.0, 9.0, 12.0, 16.0] [4.0, 8.0, 12.0, 16.0]"


def test_builtin_that_does_not_exist():
    with pytest.raises(hlorun.Error, match='no built-in implementation of custom-call target '
                                          '"py_div_nothing"'):
        hlorun.compare_runs(hlorun.load(V1), None, np.float32([1, 2, 3]),
                            reference_custom_calls={"py_div_nothing": "builtin"})


def test_parameter_mismatch_named_before_anything_runs():
    v1 = hlorun.load(V1)
    ref = hlorun.load(src("tests", "diverge", "ref_s32.hlo"))
    # The input is not even an array: the parameters are checked first.
    with pytest.raises(hlorun.Error, match=r"parameter 0 differs: f32\[3\] in the module .*, "
                                           r"s32\[3\] in the reference") as e:
        hlorun.compare_runs(v1, ref, "not an input")
    assert e.value.status == "type mismatch"
    two = hlorun.load(V1.replace("ENTRY main {", "ENTRY main {\n  y = f32[3] parameter(1)"))
    with pytest.raises(hlorun.Error, match="the reference .* takes 2 parameters, the module "
                                           ".* takes 1"):
        hlorun.compare_runs(v1, two, np.float32([1, 2, 3]))


def test_a_failing_side_is_named():
    v1, bad = hlorun.load(V1), hlorun.load(src("tests", "diverge", "ref_fails.hlo"))
    x = np.float32([1, 2, 3])
    with pytest.raises(hlorun.Error, match=r"the reference .*ref_fails.hlo failed:\n"
                                           r"(.|\n)*no_such_handler") as e:
        hlorun.compare_runs(v1, bad, x)
    assert e.value.failed_side == "reference"
    with pytest.raises(hlorun.Error, match="the module .*ref_fails.hlo failed:") as e:
        hlorun.compare_runs(bad, v1, x)
    assert e.value.failed_side == "module"


@pytest.mark.parametrize("kwargs, message", [
    (dict(reference_precision="f32"), 'only "f64" is supported'),
    (dict(ulp=-1), "ulp=-1: an integer >= 0"),
    (dict(memory_budget=-5), "memory_budget=-5"),
    (dict(reference_custom_calls={"t": 3}), "t: a library path"),
])
def test_bad_options(kwargs, message):
    v1 = hlorun.load(V1)
    with pytest.raises(hlorun.Error, match=message):
        hlorun.compare_runs(v1, v1, np.float32([1, 2, 3]), **kwargs)


def test_bad_references():
    v1 = hlorun.load(V1)
    x = np.float32([1, 2, 3])
    with pytest.raises(hlorun.Error, match="no reference"):
        hlorun.compare_runs(v1, None, x)
    with pytest.raises(hlorun.Error, match="give no reference module"):
        hlorun.compare_runs(v1, v1, x, reference_precision="f64")
    with pytest.raises(hlorun.Error, match="must be an hlorun.Module or None, not str"):
        hlorun.compare_runs(v1, V2, x)
    with pytest.raises(hlorun.Error, match="takes 1 parameter, but 2 inputs were given"):
        hlorun.compare_runs(v1, v1, x, x)


# ---- Many devices (tests/diverge/md/*.hlo; the values are worked out there
# and in tests/diverge/md.sh) ----

def md(name):
    return hlorun.load(src("tests", "diverge", "md", name))


def test_many_devices_name_the_device():
    p = np.float32([1, 2])
    d = hlorun.compare_runs(md("dev1.hlo"), md("ok.hlo"), p)
    # rf = convert(2 * replica-id): 2 instead of 1 on device 1 only.
    assert d.devices == 2 and d.found and d.device == 1 and d.devices_diverged == 1
    assert d.instruction == "rf" and d.opcode == "convert" and d.line == 19
    assert d.value.tolist() == 2 and d.reference_value.tolist() == 1
    assert " on device 1 against the reference's rf " in d.text
    assert d.text.endswith("; 1 of 2 devices diverge")
    # Device 0: {2, 8} on both sides; device 1: {4, 10} against {3, 9}.
    assert [r.tolist() for r in d.device_results] == [[2, 8], [4, 10]]
    assert [r.tolist() for r in d.device_reference_results] == [[2, 8], [3, 9]]
    assert d.device_result_mismatches == [0, 2] and d.result_mismatches == 2
    assert d.result_report.startswith("device 1: mismatch: 2 of 2 elements differ")


def test_many_devices_cause_before_a_collective():
    # q differs on device 1 only; the all-reduce passes it to device 0,
    # whose first divergence is the collective: device 1's q is named.
    d = hlorun.compare_runs(md("pre.hlo"), md("ok.hlo"), np.float32([1, 2]))
    assert (d.device, d.instruction, d.devices_diverged) == (1, "q", 2)
    assert d.value.tolist() == [2, 6] and d.reference_value.tolist() == [1, 4]


def test_many_devices_negative_and_grid():
    d = hlorun.compare_runs(md("ok.hlo"), md("ok.hlo"), np.float32([1, 2]))
    assert d.agree and d.devices == 2 and d.devices_diverged == 0
    assert d.text == "first divergence: none"
    # replicas=1 runs both as one device, where the all-reduce's group
    # {0, 1} names a replica that is not there: the reference's run fails.
    with pytest.raises(hlorun.Error, match="replica group 0 names replica 1, but there is 1") as e:
        hlorun.compare_runs(md("dev1.hlo"), md("ok.hlo"), np.float32([1, 2]), replicas=1)
    assert e.value.failed_side == "reference"
    four = hlorun.load(open(src("tests", "diverge", "md", "ok.hlo")).read()
                       .replace("replica_count=2", "replica_count=4"))
    with pytest.raises(hlorun.Error, match="runs on 2 x 1 devices .* on 4 x 1: both must run"):
        hlorun.compare_runs(md("dev1.hlo"), four, np.float32([1, 2]))
    with pytest.raises(hlorun.Error, match="replicas=0: a positive integer"):
        hlorun.compare_runs(md("dev1.hlo"), md("ok.hlo"), np.float32([1, 2]), replicas=0)


def test_many_devices_partitioned_global_inputs():
    # Two partitions, p = {1, 2, 3, 4} split in halves: stage 0001 adds
    # p + p where 0000 squares: device 0's y = {2, 4} against {1, 4}.
    base = src("tests", "diverge", "md", "passes", "module_0001.jit_g.")
    s0 = hlorun.load(base + "0000.spmd.after_spmd-partitioning.before_algsimp.txt")
    s1 = hlorun.load(base + "0001.simplification.after_algsimp.before_cse.txt")
    d = hlorun.compare_runs(s1, s0, np.float32([1, 2, 3, 4]))
    assert (d.devices, d.device, d.instruction, d.devices_diverged) == (2, 0, "y", 2)
    assert (d.mismatches, d.elements) == (1, 2) and d.max_abs_at == "[0]"
    # 2 * (1 + 2 + 3 + 4) = 20 against 1 + 4 + 9 + 16 = 30 on each device.
    assert [r.tolist() for r in d.device_results] == [20, 20]
    assert [r.tolist() for r in d.device_reference_results] == [30, 30]


def test_many_devices_memory_budget_parts():
    # A budget of 1 byte holds one reference value a part: ok.hlo has 6
    # compared instructions (q, ar, rid, rf, rb, out) on each of 2 devices,
    # so 12 parts, each device's window going on where it stopped; the
    # answer is the one of a single part.
    whole = hlorun.compare_runs(md("pre.hlo"), md("ok.hlo"), np.float32([1, 2]))
    parts = hlorun.compare_runs(md("pre.hlo"), md("ok.hlo"), np.float32([1, 2]), memory_budget=1)
    assert whole.runs == 1 and parts.runs == 12
    assert parts.text == whole.text and (parts.device, parts.instruction) == (1, "q")
    assert parts.values_compared == whole.values_compared
    none = hlorun.compare_runs(md("ok.hlo"), md("ok.hlo"), np.float32([1, 2]), memory_budget=1)
    assert none.runs == 12 and none.values_compared == 12 and not none.found
