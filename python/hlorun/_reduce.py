"""Module.extract and hlorun.reduce: cutting a module down, on the library's
hlo_module_extract_around and hlo_module_reduce (interp/extract.c,
interp/reduce.c); the predicate is a Python callable."""
from . import _values
from ._errors import Error, check, take_diagnostics
from ._lib import ffi, lib, release

FOCUS = {"root": 0, "nan": 1, "failure": 2}


def _copy_input(ctx, buf):
    """A numpy copy of a borrowed buffer (a 1-tuple holds a new reference)."""
    out = ffi.new("HloBuffer **")
    check(ctx, lib.hlo_buffer_new_tuple(ctx, [buf], 1, out), "reduce: an input")
    (value,) = _values.from_buffer(ctx, out[0])
    if isinstance(value, tuple):
        return tuple(v.copy() if v is not None else None for v in value)
    return value.copy()


def _module_of(c, ptr, name, module_cls):
    """A Module of its own (parsed again from the text of a borrowed one)."""
    text, n = ffi.new("char **"), ffi.new("size_t *")
    check(c.ptr, lib.hlo_module_print(c.ptr, ptr, text, n), "printing")
    data = ffi.unpack(text[0], n[0])
    lib.hlo_free(text[0])
    out = ffi.new("HloModule **")
    check(c.ptr, lib.hlo_module_parse(c.ptr, data, len(data), name.encode(), out), "parsing")
    return module_cls(ffi.gc(out[0], release(lib.hlo_module_free)), c, name)


def extract(module, c, name, depth):
    """See Module.extract."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise Error(f"hlorun: error: extract: depth {depth!r} is not an integer >= 0",
                    "invalid argument")
    ins = lib.hlo_module_find_instruction(module._ptr, name.encode())
    if ins == ffi.NULL:
        raise Error(f"hlorun: error: extract: {module.name} has no instruction '{name}'",
                    "invalid argument")
    out, cut, ncut = ffi.new("HloModule **"), ffi.new("HloInstruction ***"), ffi.new("int *")
    check(c.ptr, lib.hlo_module_extract_around(c.ptr, module._ptr, ins, depth, out, cut, ncut),
          "extract")
    names = [ffi.string(lib.hlo_instruction_name(cut[0][k])).decode() for k in range(ncut[0])]
    lib.hlo_free(cut[0])
    sub = type(module)(ffi.gc(out[0], release(lib.hlo_module_free)), c, f"{name} (extracted)")
    sub.cut = names
    return sub


def reduce(module, c, inputs, predicate, focus="root", max_candidates=0, timeout=0.0):
    """See hlorun.reduce."""
    if focus not in FOCUS:
        raise Error(f"hlorun: error: reduce: focus {focus!r} is not one of {sorted(FOCUS)}",
                    "invalid argument")
    shapes = module.param_shapes()
    if len(inputs) != len(shapes):
        raise Error(f"hlorun: error: reduce: the module takes {len(shapes)} inputs, "
                    f"{len(inputs)} given", "invalid argument")
    raised = []
    Module = type(module)

    def call(cand, bufs, n, user):
        if raised:
            return -1
        try:
            m = _module_of(c, cand, "candidate", Module)
            args = [_copy_input(c.ptr, bufs[k]) for k in range(n)]
            return 1 if predicate(m, args) else 0
        except BaseException as e:   # re-raised once the library returns
            raised.append(e)
            return -1

    cb = ffi.callback("HloReducePredicate", call)
    bufs = ffi.new("HloBuffer *[]", max(len(shapes), 1))
    res = ffi.new("HloReduceResult *")
    opts = ffi.new("HloReduceOptions *")
    opts.struct_size = ffi.sizeof("HloReduceOptions")
    opts.focus = FOCUS[focus]
    opts.max_candidates = max_candidates
    opts.timeout = timeout
    try:
        for k, shape in enumerate(shapes):
            bufs[k] = module._input(c, k, inputs[k], shape, 0)
        st = lib.hlo_module_reduce(c.ptr, module._ptr, bufs, len(shapes), opts, cb, ffi.NULL, res)
        if raised:
            take_diagnostics(c.ptr)
            raise raised[0]
        check(c.ptr, st, "reduce")
        small = _module_of(c, res.module, f"{module.name} (reduced)", Module)
        args = [_copy_input(c.ptr, res.inputs[k]) for k in range(res.ninputs)]
        small.reduced_from = (res.before, res.after, res.tried)
        return small, args
    finally:
        lib.hlo_reduce_result_free(res)
        for k in range(len(shapes)):
            lib.hlo_buffer_free(bufs[k])
