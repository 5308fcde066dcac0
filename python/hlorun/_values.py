"""numpy arrays to and from the library's buffers (HloBuffer).

Results are zero-copy: the returned array views the buffer's memory and keeps
the buffer alive. Inputs are copied once into the library (its buffers own
their memory)."""
import re

import numpy as np

from . import _dtypes
from ._errors import Error, check
from ._lib import ffi, lib, release

_ARRAY = re.compile(r"([a-z0-9]+)\[([^\]]*)\]")


def parse_shape(text):
    """'f32[2,3]' -> (code, (2, 3)); '(f32[], s32[2])' -> [shape, shape]."""
    text = text.strip()
    if text.startswith("("):
        parts, depth, start = [], 0, 1
        for k, ch in enumerate(text):
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            if (ch == "," and depth == 1) or (ch == ")" and depth == 0):
                piece = text[start:k].strip()
                if piece:
                    parts.append(parse_shape(piece))
                start = k + 1
        return parts
    m = _ARRAY.fullmatch(text)
    if not m:
        return (_dtypes.CODE_OF_NAME.get(text, 0), ())
    dims = tuple(int(d.replace("<=", "")) for d in m.group(2).split(",") if d.strip())
    return (_dtypes.CODE_OF_NAME.get(m.group(1), 0), dims)


def shape_text(shape):
    if isinstance(shape, list):
        return "(" + ", ".join(shape_text(s) for s in shape) + ")"
    code, dims = shape
    return f"{_dtypes.name(code)}[{','.join(str(d) for d in dims)}]"


def _describe(value):
    return f"{value.dtype}[{','.join(str(d) for d in value.shape)}]"


def to_buffer(ctx, value, shape, what):
    """A new HloBuffer (caller frees) holding value, which must fit shape.
    what names the value in errors ("parameter 0 (f32[2,3])")."""
    if isinstance(shape, list):
        if not isinstance(value, (tuple, list)) or len(value) != len(shape):
            raise Error(f"hlorun: error: {what}: expected a tuple of {len(shape)} values "
                        f"for {shape_text(shape)}, got {type(value).__name__}", "type mismatch")
        elems = []
        try:
            for k, (v, s) in enumerate(zip(value, shape)):
                elems.append(to_buffer(ctx, v, s, f"{what} element {k}"))
            out = ffi.new("HloBuffer **")
            check(ctx, lib.hlo_buffer_new_tuple(ctx, elems, len(elems), out), what)
            return out[0]
        finally:
            for e in elems:
                lib.hlo_buffer_free(e)
    code, dims = shape
    want = _dtypes.numpy_dtype(code)
    if want is None:
        raise Error(f"hlorun: error: {what}: element type {_dtypes.name(code)} cannot be "
                    "passed from Python", "unsupported")
    if not isinstance(value, np.ndarray):
        try:   # Python numbers and lists take the parameter's type
            value = np.asarray(value, dtype=want)
        except (TypeError, ValueError) as e:
            raise Error(f"hlorun: error: {what}: cannot convert {type(value).__name__} to "
                        f"{shape_text(shape)}: {e}", "type mismatch") from None
    dt = value.dtype.newbyteorder("=") if value.dtype.byteorder == ">" else value.dtype
    if not _dtypes.accepts(code, dt) or tuple(value.shape) != tuple(dims):
        raise Error(f"hlorun: error: {what}: got an array of {_describe(value)}, the module "
                    f"wants {shape_text(shape)} (numpy {want})", "type mismatch")
    value = np.ascontiguousarray(value, dtype=dt.newbyteorder("="))
    c_dims = ffi.new("int64_t[]", list(dims) or [0])
    out = ffi.new("HloBuffer **")
    data = ffi.from_buffer(value) if value.size else ffi.NULL
    check(ctx, lib.hlo_buffer_new_array(ctx, code, c_dims, len(dims), data, out), what)
    return out[0]


def from_buffer(ctx, buf):
    """A numpy array (or a tuple of them, None for a token) viewing buf, which
    the result takes over (it is freed when no view needs it)."""
    code = lib.hlo_buffer_type(buf)
    if code == _dtypes.TUPLE:
        try:
            elems = []
            for k in range(lib.hlo_buffer_tuple_size(buf)):
                out = ffi.new("HloBuffer **")
                check(ctx, lib.hlo_buffer_tuple_element(ctx, buf, k, out), "tuple element")
                elems.append(from_buffer(ctx, out[0]))
            return tuple(elems)
        finally:
            lib.hlo_buffer_free(buf)
    if code == _dtypes.TOKEN:
        lib.hlo_buffer_free(buf)
        return None
    dt = _dtypes.numpy_dtype(code)
    if dt is None:
        lib.hlo_buffer_free(buf)
        raise Error(f"hlorun: error: a result of element type {_dtypes.name(code)} cannot be "
                    "returned to Python", "unsupported")
    rank = lib.hlo_buffer_rank(buf)
    dims = tuple(lib.hlo_buffer_dims(buf)[k] for k in range(rank))
    nbytes = lib.hlo_buffer_nbytes(buf)
    owner = ffi.gc(buf, release(lib.hlo_buffer_free))
    if nbytes == 0:
        return np.zeros(dims, dtype=dt)
    # The array's base is a holder that owns the buffer handle, so the
    # library's memory lives exactly as long as some view of it.
    raw = np.asarray(_Holder(owner, nbytes))
    arr = raw.view(dt).reshape(dims)
    arr.flags.writeable = False   # the library's value: copy it to change it
    return arr


class _Holder:
    """Exposes a buffer's bytes to numpy (__array_interface__) and keeps the
    buffer alive while numpy holds it as an array's base."""
    __slots__ = ("owner", "__array_interface__")

    def __init__(self, owner, nbytes):
        self.owner = owner
        self.__array_interface__ = {
            "version": 3, "shape": (nbytes,), "typestr": "|u1",
            "data": (int(ffi.cast("uintptr_t", lib.hlo_buffer_data(owner))), False)}
