"""Python callables as custom-call handlers.

A callable bound with hlorun.bind(target, fn) becomes a typed XLA FFI
handler: a cffi callback that answers hlorun's metadata query (API 0.3, no
traits) and, on each execution, calls

    fn(*operands, *results)

with numpy views of the operand buffers (read-only) and of the result buffers
(writable: fill them in place). fn may instead return the result (an array,
or a tuple/list with one array per result), which is copied into the result
buffers after checking its shape. An exception fails the run with its
message; nothing it does can take the interpreter down (views are bounded by
the buffers' sizes). Token operands and results are passed as None.
"""
import traceback

import numpy as np

from . import _dtypes
from ._lib import ffi

_ERRC_INVALID_ARGUMENT = 3
_ERRC_INTERNAL = 13
_METADATA = 1          # XLA_FFI_Extension_Metadata
_EXECUTE = 3           # XLA_FFI_ExecutionStage_EXECUTE


def _view(buf_ptr, writable):
    b = ffi.cast("XLA_FFI_Buffer *", buf_ptr)
    if b.dtype == _dtypes.TOKEN:
        return None
    dt = _dtypes.numpy_dtype(b.dtype)
    if dt is None:
        raise TypeError(f"element type {_dtypes.name(b.dtype)} has no numpy form")
    dims = tuple(b.dims[k] for k in range(b.rank))
    n = int(np.prod(dims, dtype=np.int64)) * dt.itemsize
    if n == 0:
        return np.zeros(dims, dtype=dt)
    arr = np.frombuffer(ffi.buffer(ffi.cast("char *", b.data), n), dtype=dt).reshape(dims)
    if not writable:
        arr.flags.writeable = False
    return arr


def _store(returned, results, target):
    outs = returned if isinstance(returned, (tuple, list)) else (returned,)
    if len(outs) != len(results):
        raise ValueError(f"returned {len(outs)} value(s), the custom call has "
                         f"{len(results)} result(s)")
    for k, (value, dest) in enumerate(zip(outs, results)):
        if dest is None:
            continue
        value = np.asarray(value)
        if value.shape != dest.shape:
            raise ValueError(f"result {k}: returned shape {value.shape}, the custom call's "
                             f"result has shape {dest.shape}")
        if value.dtype != dest.dtype and not np.can_cast(value.dtype, dest.dtype, "same_kind"):
            raise ValueError(f"result {k}: returned {value.dtype}, the custom call's result "
                             f"is {dest.dtype}")
        dest[...] = value


def make_handler(target, fn):
    """A cffi callback (keep it alive!) implementing target with fn."""

    def fail(frame, message, errc=_ERRC_INTERNAL):
        args = ffi.new("XLA_FFI_Error_Create_Args *")
        args.struct_size = ffi.sizeof("XLA_FFI_Error_Create_Args")
        msg = ffi.new("char[]", message.encode("utf-8", "replace"))
        args.message = msg
        args.errc = errc
        return frame.api.XLA_FFI_Error_Create(args)

    def handler(frame):
        ext = frame.extension_start
        if ext != ffi.NULL and ext.type == _METADATA:
            md = ffi.cast("XLA_FFI_Metadata_Extension *", ext).metadata
            md.api_version.major_version = 0
            md.api_version.minor_version = 3
            md.traits = 0
            return ffi.NULL
        if frame.stage != _EXECUTE:
            return ffi.NULL
        try:
            operands = [_view(frame.args.args[k], False) for k in range(frame.args.size)]
            results = [_view(frame.rets.rets[k], True) for k in range(frame.rets.size)]
            returned = fn(*operands, *results)
            if returned is not None:
                _store(returned, results, target)
            return ffi.NULL
        except BaseException as e:   # noqa: B902 -- an escaping exception would be lost
            where = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
            at = f" ({where.filename}:{where.lineno})" if where else ""
            return fail(frame, f"Python handler {getattr(fn, '__qualname__', fn)!s} of "
                               f"'{target}' raised {type(e).__name__}: {e}{at}")

    def on_error(exc_type, exc_value, tb):
        # Only reached if building the error itself failed: report it on
        # stderr and fail the call with a fixed message.
        traceback.print_exception(exc_type, exc_value, tb)

    return ffi.callback("HloFfiHandler", handler, onerror=on_error)
