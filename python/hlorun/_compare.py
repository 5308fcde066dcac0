"""compare(): a result against a golden value, with the command's report."""
import numpy as np

from . import _dtypes, _values
from ._errors import Error, check
from ._lib import ffi, lib
from ._module import _context


class Comparison:
    """The outcome of compare(): true when every element matches. mismatches is
    the number of differing elements (-1 when the shapes differ) and report the
    text hlorun --expect prints (empty when they match)."""

    def __init__(self, mismatches, report):
        self.mismatches = mismatches
        self.report = report

    def __bool__(self):
        return self.mismatches == 0

    def __str__(self):
        return self.report or "match"

    __repr__ = __str__


def _shape_of(value):
    if isinstance(value, (tuple, list)):
        return [_shape_of(v) for v in value]
    value = np.asarray(value)
    code = _dtypes.code_of_dtype(value.dtype)
    if code is None:
        raise Error(f"hlorun: error: compare: numpy dtype {value.dtype} has no hlorun element "
                    "type", "type mismatch")
    return (code, tuple(value.shape))


def compare(got, want, rtol=None, atol=None, max_report=5):
    """Compare got with want (arrays, or tuples of them) as hlorun --expect
    does: an element passes when |got - want| <= atol + rtol * |want| (NaN
    matches NaN; integers and pred exactly); rtol/atol None: the element
    type's defaults. Returns a Comparison (truthy when they match)."""
    c = _context()
    with c.lock:
        a = b = ffi.NULL
        try:
            a = _values.to_buffer(c.ptr, got, _shape_of(got), "compare: got")
            b = _values.to_buffer(c.ptr, want, _shape_of(want), "compare: want")
            opts = ffi.new("HloCompareOptions *")
            opts.struct_size = ffi.sizeof("HloCompareOptions")
            opts.rtol = -1.0 if rtol is None else float(rtol)
            opts.atol = -1.0 if atol is None else float(atol)
            opts.max_report = int(max_report)
            bad, report = ffi.new("int64_t *"), ffi.new("char **")
            check(c.ptr, lib.hlo_buffer_compare(c.ptr, a, b, opts, bad, report),
                  "comparison failed")
            text = ffi.string(report[0]).decode() if report[0] != ffi.NULL else ""
            lib.hlo_free(report[0])
            return Comparison(int(bad[0]), text)
        finally:
            lib.hlo_buffer_free(a)
            lib.hlo_buffer_free(b)


def assert_matches(got, want, rtol=None, atol=None):
    """Raise AssertionError with the comparison report unless got matches want."""
    result = compare(got, want, rtol=rtol, atol=atol)
    if not result:
        raise AssertionError(result.report)
