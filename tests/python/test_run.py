"""Running modules: results, tuples in and out, zero-copy results, and the
errors (hlorun.Error with the command's messages)."""
import gc
import subprocess

import numpy as np
import pytest

import hlorun
from conftest import HLORUN, src

PAIR = """HloModule pair
ENTRY e {
  p = (f32[2], s32[]) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  b = s32[] get-tuple-element(p), index=1
  c = s32[] multiply(b, b)
  d = f32[2] negate(a)
  k = pred[] constant(true)
  i = (f32[2], pred[]) tuple(d, k)
  ROOT t = (s32[], (f32[2], pred[])) tuple(c, i)
}
"""


def test_quickstart_by_hand():
    # relu(x . W + b), worked out by hand in samples/quickstart.hlo's comment
    m = hlorun.load(src("samples", "quickstart.hlo"))
    y = m.run(np.float32([[1, 2, 3], [-1, 0.5, 2]]))
    assert y.dtype == np.float32 and y.shape == (2, 2)
    np.testing.assert_allclose(y, [[0, 3.3], [0, 3.175]], rtol=1e-6)


def test_tuple_parameter_and_nested_tuple_result():
    m = hlorun.load(PAIR)
    c, (d, flag) = m.run((np.float32([1.5, -2]), np.int32(7)))
    assert c.dtype == np.int32 and int(c) == 49
    assert d.tolist() == [-1.5, 2.0] and flag.dtype == np.bool_ and bool(flag)


def test_result_is_a_read_only_zero_copy_view_that_outlives_the_module():
    m = hlorun.load(src("samples", "quickstart.hlo"))
    y = m.run(np.float32([[1, 2, 3], [-1, 0.5, 2]]))
    assert y.base is not None and not y.flags.writeable and not y.flags.owndata
    del m
    gc.collect()
    np.testing.assert_allclose(y, [[0, 3.3], [0, 3.175]], rtol=1e-6)


def test_random_matches_the_command_and_threads_do_not_change_bits():
    m = hlorun.load(src("samples", "quickstart.hlo"))
    a = m.run(random=5)
    b = m.run(random=5, threads=2)
    c = m.run(random=6)
    assert a.tobytes() == b.tobytes() and a.tobytes() != c.tobytes()


def test_parse_error_is_the_commands_message(tmp_path):
    bad = src("tests", "cli", "bad.hlo")
    with pytest.raises(hlorun.Error) as e:
        hlorun.load(bad)
    cli = subprocess.run([HLORUN, bad], capture_output=True, text=True)
    assert cli.returncode == 2
    assert str(e.value) + "\n" == cli.stderr
    assert e.value.status == "parse error"


def test_text_parse_error_has_line_column_and_caret():
    with pytest.raises(hlorun.Error) as e:
        hlorun.load("HloModule x\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] bogus(p)\n}",
                    name="inline.hlo")
    assert str(e.value) == ("inline.hlo:4:18: error: unknown opcode 'bogus'\n"
                            "  ROOT r = f32[] bogus(p)\n"
                            "                 ^")


def test_missing_file():
    with pytest.raises(hlorun.Error, match="nope.hlo"):
        hlorun.load("/nonexistent/nope.hlo")


def test_wrong_dtype_names_the_parameter():
    m = hlorun.load(src("samples", "quickstart.hlo"))
    with pytest.raises(hlorun.Error) as e:
        m.run(np.zeros((2, 3), np.float64))
    assert str(e.value) == ("hlorun: error: parameter 0 (f32[2,3]): got an array of float64[2,3], "
                            "the module wants f32[2,3] (numpy float32)")
    assert e.value.status == "type mismatch"


def test_wrong_shape_names_the_parameter():
    m = hlorun.load(src("samples", "quickstart.hlo"))
    with pytest.raises(hlorun.Error, match=r"parameter 0 \(f32\[2,3\]\): got an array of "
                                           r"float32\[3,2\]"):
        m.run(np.zeros((3, 2), np.float32))


def test_wrong_tuple_arity_names_the_parameter():
    with pytest.raises(hlorun.Error, match=r"parameter 0 \(\(f32\[2\], s32\[\]\)\): expected a "
                                           r"tuple of 2 values"):
        hlorun.load(PAIR).run((np.float32([1, 2]),))


def test_input_counts_use_the_commands_words():
    m = hlorun.load(src("samples", "quickstart.hlo"))
    with pytest.raises(hlorun.Error, match="the module's ENTRY takes 1 parameter, but 0 inputs "
                                           "were given"):
        m.run()
    with pytest.raises(hlorun.Error, match="too many inputs: the module's ENTRY takes 1 "
                                           "parameter, but 2 inputs were given"):
        m.run(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32))


def test_unbound_custom_call_names_instruction_and_line():
    m = hlorun.load("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                    "  ROOT c = f32[2] custom-call(p), custom_call_target=\"nowhere_bound\", "
                    "api_version=API_VERSION_TYPED_FFI\n}\n", name="cc.hlo")
    with pytest.raises(hlorun.Error) as e:
        m.run(np.float32([1, 2]))
    assert str(e.value).startswith("cc.hlo:4:")
    assert 'custom-call target "nowhere_bound"' in str(e.value)


ALL_REDUCE = """HloModule ar, replica_count=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[3] parameter(0)
  ROOT r = f32[3] all-reduce(p), replica_groups={{0,1}}, to_apply=add
}
"""
SHARDED = """HloModule sh, num_partitions=2

ENTRY e {
  p = f32[2] parameter(0), sharding={devices=[2]0,1}
  ROOT n = f32[2] negate(p), sharding={devices=[2]0,1}
}
"""


def test_replicas_all_reduce_by_hand():
    # both replicas get [1, 2, 3]; the sum over the two is [2, 4, 6]
    m = hlorun.load(ALL_REDUCE)
    assert m.device_grid() == (2, 1)
    assert m.run(np.float32([1, 2, 3])).tolist() == [2, 4, 6]
    assert m.run(np.float32([1, 2, 3]), replicas=2).tolist() == [2, 4, 6]


def test_partitions_split_and_assemble_by_sharding():
    m = hlorun.load(SHARDED)
    # a global f32[4] is split [1,2] | [3,4]; the negated halves are joined
    assert m.run(np.float32([1, 2, 3, 4])).tolist() == [-1, -2, -3, -4]
    # a value of the parameter's own shape goes whole to both partitions
    assert m.run(np.float32([1, 2]), partitions=2).tolist() == [-1, -2, -1, -2]
    with pytest.raises(hlorun.Error, match=r"parameter 0 \(f32\[2\] per device, f32\[4\] "
                                           r"global\): got an array of float32\[3\]"):
        m.run(np.float32([1, 2, 3]))


def test_devices_that_disagree_on_a_replicated_result_fail():
    m = hlorun.load("HloModule r, replica_count=2\nENTRY e {\n  ROOT r = u32[] replica-id()\n}\n")
    with pytest.raises(hlorun.Error, match="devices 0 and 1 hold different values"):
        m.run()


def test_a_grid_too_small_for_the_collectives_names_the_instruction():
    with pytest.raises(hlorun.Error, match=r"in r \(all-reduce\): replica group 0 names "
                                           r"replica 1"):
        hlorun.load(ALL_REDUCE).run(np.float32([1, 2, 3]), replicas=1)
    with pytest.raises(hlorun.Error, match="replicas=0: a positive integer"):
        hlorun.load(ALL_REDUCE).run(np.float32([1, 2, 3]), replicas=0)


@pytest.mark.parametrize("text,flags,literal", [
    (ALL_REDUCE, ["--replicas", "2", "--random=3"], None),
    # (with --random the command runs this module, which has no collectives,
    # as one device: given the input, it splits it as the package does)
    (SHARDED, ["--partitions", "2"], "f32[4] {0.5, -1.25, 3, 1e-3}")])
def test_multi_device_same_bytes_as_the_command(text, flags, literal, tmp_path):
    path = tmp_path / "m.hlo"
    path.write_text(text)
    m = hlorun.load(str(path))
    inputs = []
    if literal:
        (tmp_path / "in0.txt").write_text(literal)
        inputs = [str(tmp_path / "in0.txt")]
        got = m.run(np.float32([0.5, -1.25, 3, 1e-3]))
    else:
        got = m.run(random=3)
    cli = subprocess.run([HLORUN, *flags, "-o", str(tmp_path / "o.npy"), str(path), *inputs],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    want = np.load(tmp_path / "o.npy")
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_compare_report_is_the_commands(tmp_path):
    got = np.float32([[1, 2, 3], [4, 5, 6]])
    want = np.float32([[1, 2, 2], [4, 5, 6]])
    r = hlorun.compare(got, want, rtol=1e-3, atol=1e-4)
    assert not r and r.mismatches == 1
    # the command's --expect report on the same values
    np.save(tmp_path / "want.npy", want)
    (tmp_path / "got.txt").write_text("f32[2,3] {{1, 2, 3}, {4, 5, 6}}")
    (tmp_path / "m.hlo").write_text("HloModule m\nENTRY e {\n  p = f32[2,3] parameter(0)\n"
                                    "  ROOT c = f32[2,3] copy(p)\n}\n")
    cli = subprocess.run([HLORUN, "--expect", str(tmp_path / "want.npy"), "--rtol", "1e-3",
                          "--atol", "1e-4", str(tmp_path / "m.hlo"), str(tmp_path / "got.txt")],
                         capture_output=True, text=True)
    assert cli.returncode == 1
    assert cli.stderr == f"{tmp_path / 'want.npy'}: {r.report}"
    assert "1 of 6 elements differ" in r.report
    assert hlorun.compare(got, got) and str(hlorun.compare(got, got)) == "match"
    with pytest.raises(AssertionError, match="1 of 6 elements differ"):
        hlorun.assert_matches(got, want)


def test_compare_tuples_and_shape_mismatch():
    assert hlorun.compare((np.int32(3), np.float32([1, 2])), (np.int32(3), np.float32([1, 2])))
    r = hlorun.compare(np.float32([1, 2]), np.float32([1, 2, 3]))
    assert not r and r.mismatches == -1
