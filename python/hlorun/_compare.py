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


def compare_options(rtol=None, atol=None, ulp=None, max_report=5):
    """HloCompareOptions as --rtol/--atol/--ulp set them: None is the element
    type's default, except that with ulp (N values of the type apart) a
    tolerance not given is 0, so ulp=2 alone means "within 2 values" and
    ulp=0 "equal values". Keep the result alive while the library reads it."""
    if ulp is not None and (isinstance(ulp, bool) or not isinstance(ulp, int) or ulp < 0):
        raise Error(f"hlorun: error: ulp={ulp!r}: an integer >= 0", "invalid argument")
    opts = ffi.new("HloCompareOptions *")
    opts.struct_size = ffi.sizeof("HloCompareOptions")
    unset = 0.0 if ulp is not None else -1.0
    opts.rtol = unset if rtol is None else float(rtol)
    opts.atol = unset if atol is None else float(atol)
    opts.max_report = int(max_report)
    opts.max_ulp = ulp or 0
    return opts


def compare(got, want, rtol=None, atol=None, max_report=5, ulp=None):
    """Compare got with want (arrays, or tuples of them) as hlorun --expect
    does: an element passes when |got - want| <= atol + rtol * |want|, or
    with ulp=N when both are finite and at most N values of their type apart
    (NaN matches NaN; integers and pred exactly); rtol/atol None: the element
    type's defaults (0 when ulp is given). Returns a Comparison (truthy when
    they match)."""
    opts = compare_options(rtol, atol, ulp, max_report)
    c = _context()
    with c.lock:
        a = b = ffi.NULL
        try:
            a = _values.to_buffer(c.ptr, got, _shape_of(got), "compare: got")
            b = _values.to_buffer(c.ptr, want, _shape_of(want), "compare: want")
            bad, report = ffi.new("int64_t *"), ffi.new("char **")
            check(c.ptr, lib.hlo_buffer_compare(c.ptr, a, b, opts, bad, report),
                  "comparison failed")
            text = ffi.string(report[0]).decode() if report[0] != ffi.NULL else ""
            lib.hlo_free(report[0])
            return Comparison(int(bad[0]), text)
        finally:
            lib.hlo_buffer_free(a)
            lib.hlo_buffer_free(b)


def assert_matches(got, want, rtol=None, atol=None, ulp=None):
    """Raise AssertionError with the comparison report unless got matches want."""
    result = compare(got, want, rtol=rtol, atol=atol, ulp=ulp)
    if not result:
        raise AssertionError(result.report)
