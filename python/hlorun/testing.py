"""Golden suites as pytest tests.

A golden-suite directory (the layout of hlorun --suite: a folder per case
holding module.hlo or case.hlo, in0.npy|.npz|.txt ..., expected.npy|.npz|.txt,
optional `tolerance`, case.json/meta.json and `args`) becomes parametrized
tests:

    import hlorun.testing

    @hlorun.testing.golden_cases("tests/golden")
    def test_golden(case):
        case.check()          # runs the module, compares with the golden file

Case.check() raises AssertionError with hlorun's mismatch report. Of a case's
`args`, --random[=SEED], --rtol and --atol are honoured; a case that needs
other options (custom-call bindings, ...) is skipped with the reason.
"""
import json
import os
import re

from . import _values
from ._compare import compare
from ._errors import check
from ._lib import ffi, lib
from ._module import load

_INPUT = re.compile(r"in(\d+)\.(npy|npz|txt)$")


class Case:
    """One case directory."""

    def __init__(self, path):
        self.path = path
        self.id = os.path.basename(os.path.normpath(path))
        names = os.listdir(path)
        self.module = next(os.path.join(path, n) for n in ("module.hlo", "case.hlo") if n in names)
        found = sorted((int(m.group(1)), n) for n in names for m in [_INPUT.match(n)] if m)
        self.inputs = []
        for k, (idx, n) in enumerate(found):   # consecutive from in0, as --suite reads them
            if idx != k:
                break
            self.inputs.append(os.path.join(path, n))
        self.expected = next((os.path.join(path, f"expected.{e}") for e in ("npy", "npz", "txt")
                              if f"expected.{e}" in names), None)
        self.rtol = self.atol = None
        self.random = None
        self.unsupported = []
        self._read_tolerance(names)
        self._read_args(names)

    def _read_tolerance(self, names):
        if "tolerance" in names:
            with open(os.path.join(self.path, "tolerance"), encoding="utf-8") as f:
                for line in f:
                    for word in line.split("#")[0].split():   # "#" starts a comment
                        key, _, value = word.partition("=")
                        if key in ("rtol", "atol"):
                            setattr(self, key, float(value))
        for meta in ("case.json", "meta.json"):
            if meta in names:
                with open(os.path.join(self.path, meta), encoding="utf-8") as f:
                    j = json.load(f)
                if j.get("compare") == "eq":
                    self.rtol = self.atol = 0.0
                tol = j.get("tolerance", {})
                for key in ("rtol", "atol"):
                    if key in j:
                        setattr(self, key, float(j[key]))
                    if key in tol:
                        setattr(self, key, float(tol[key]))

    def _read_args(self, names):
        if "args" not in names:
            return
        with open(os.path.join(self.path, "args"), encoding="utf-8") as f:
            for line in f.read().splitlines():
                arg = line.strip()
                if not arg or arg.startswith("#"):
                    continue
                if arg == "--random":
                    self.random = True
                elif arg.startswith("--random="):
                    self.random = int(arg.split("=", 1)[1])
                elif arg.startswith(("--rtol=", "--atol=")):
                    setattr(self, arg[2:6], float(arg.split("=", 1)[1]))
                else:
                    self.unsupported.append(arg)

    def __repr__(self):
        return f"<hlorun.testing.Case {self.path}>"

    def run(self):
        """The module's result on the case's inputs."""
        module = load(self.module)
        c = module._ctx
        np_ = module.num_params
        values = []
        with c.lock:
            k = 0
            for path in self.inputs:
                if path.endswith(".npz") and not lib.hlo_module_is_tuple(module._ptr, k):
                    out = ffi.new("HloBuffer *[]", max(np_ - k, 1))
                    n = ffi.new("int *", np_ - k)
                    check(c.ptr, lib.hlo_load_params_npz(c.ptr, module._ptr, k, path.encode(),
                                                         out, n), path)
                    values += [_values.from_buffer(c.ptr, out[j]) for j in range(n[0])]
                    k += n[0]
                else:
                    out = ffi.new("HloBuffer **")
                    check(c.ptr, lib.hlo_load_param(c.ptr, module._ptr, k, path.encode(), out),
                          path)
                    values.append(_values.from_buffer(c.ptr, out[0]))
                    k += 1
        return module.run(*values, random=self.random)

    def load_expected(self, like):
        """The golden value, read in the shape and types of `like` (a result)."""
        import numpy as np
        if self.expected.endswith(".npy"):
            return np.load(self.expected)
        if self.expected.endswith(".npz"):
            with np.load(self.expected) as z:
                leaves = [z[f"arr_{k}"] for k in range(len(z.files))]
            return _regroup(like, iter(leaves))
        return _load_like_text(self.expected, like)

    def check(self):
        """Run the case and compare with its golden file (AssertionError with
        hlorun's report on a mismatch)."""
        import pytest
        if self.unsupported:
            pytest.skip(f"{self.path}: args not supported by hlorun.testing: "
                        + " ".join(self.unsupported))
        if self.expected is None:
            pytest.skip(f"{self.path}: no expected.npy|.npz|.txt (record it with hlorun "
                        "--suite --record)")
        got = self.run()
        want = self.load_expected(got)
        result = compare(got, want, rtol=self.rtol, atol=self.atol)
        assert result, f"{self.expected}: {result.report}"


def _regroup(like, leaves):
    if isinstance(like, tuple):
        return tuple(_regroup(x, leaves) for x in like)
    return next(leaves)


def _load_like_text(path, like):
    """A literal-text golden file through the library (hlo_load_like)."""
    from ._compare import _shape_of
    from ._module import _context
    c = _context()
    with c.lock:
        buf = _values.to_buffer(c.ptr, like, _shape_of(like), "result")
        try:
            out = ffi.new("HloBuffer **")
            check(c.ptr, lib.hlo_load_like(c.ptr, buf, path.encode(), out), path)
        finally:
            lib.hlo_buffer_free(buf)
        return _values.from_buffer(c.ptr, out[0])


def find_cases(*dirs):
    """Every case under dirs (a case itself, or folders searched recursively),
    sorted by path."""
    cases = []
    for d in dirs:
        for root, subdirs, files in os.walk(d):
            if "module.hlo" in files or "case.hlo" in files:
                cases.append(Case(root))
                subdirs[:] = []
    return sorted(cases, key=lambda c: c.path)


def golden_cases(*dirs):
    """A pytest.mark.parametrize over the cases under dirs (argument `case`,
    test ids the case folders' names)."""
    import pytest
    cases = find_cases(*dirs)
    return pytest.mark.parametrize("case", cases, ids=[c.id for c in cases])
