"""hlorun.compare_runs: where a run goes wrong against a reference, on the
library's hlo_compare_runs (interp/diverge.c; doc/divergence.md), as
hlorun --reference, --reference-custom-call and --reference-precision f64
find it."""
import os
from dataclasses import dataclass
from typing import Any, Optional

from . import _module, _values
from ._compare import compare_options
from ._errors import _STATUS, Error, check, take_diagnostics
from ._handlers import make_handler
from ._lib import ffi, lib

_F64 = 12             # HLO_TYPE_F64
_SIDES = {1: "module", 2: "reference"}


@dataclass
class Divergence:
    """What compare_runs found. The results are compared as --expect does
    (result_mismatches: elements outside tolerance, -1 when the shapes
    differ; result_report: --expect's report, "" when they agree). found: an
    instruction of the module whose value differs from its counterpart's
    while its operands agreed; then instruction, opcode, computation and line
    (1-based) are the module's, counterpart and counterpart_line the
    reference's, iteration its loop iteration or call its custom call (from
    0; None when not in a loop / not a custom call), mismatches of elements
    differ, max_abs_error at max_abs_at ("[1,2]"), and value and
    reference_value hold the two values (numpy). text is the command's
    "first divergence: ..." line. values_compared counts compared values
    (every iteration), paired/unpaired the module's comparable instructions
    with and without a counterpart, runs the runs of each module it took.
    A run that fails raises Error instead, its failed_side "module" or
    "reference".

    On many devices (devices > 1) each device's instructions are compared
    with their counterparts on the same device: device is the device of the
    divergence named (the lowest-numbered one with a divergence, unless
    that one is at a collective and another device's is not),
    devices_diverged how many devices had one; device_results,
    device_reference_results and device_result_mismatches are by device
    (result and reference_result are device 0's; result_mismatches their
    sum, -1 if any device's shapes differ; result_report's lines begin
    "device D: ")."""
    result: Any
    reference_result: Any
    result_mismatches: int
    result_report: str
    found: bool
    text: str
    instruction: Optional[str] = None
    opcode: Optional[str] = None
    computation: Optional[str] = None
    line: int = 0
    counterpart: Optional[str] = None
    counterpart_line: int = 0
    iteration: Optional[int] = None
    call: Optional[int] = None
    mismatches: int = 0
    elements: int = 0
    max_abs_error: float = float("nan")
    max_abs_at: Optional[str] = None
    values_compared: int = 0
    paired: int = 0
    unpaired: int = 0
    runs: int = 0
    value: Any = None
    reference_value: Any = None
    devices: int = 1
    device: int = 0
    devices_diverged: int = 0
    device_results: Any = None
    device_reference_results: Any = None
    device_result_mismatches: Any = None

    @property
    def agree(self):
        """The results agree and no instruction diverged."""
        return self.result_mismatches == 0 and not self.found

    def __str__(self):
        return self.text


def _text(p):
    return ffi.string(p).decode("utf-8", "replace") if p != ffi.NULL else None


def _own(ctx, buf):
    """A numpy view of a buffer the report owns (a 1-tuple takes a reference
    of its own, so the value outlives the report)."""
    if buf == ffi.NULL:
        return None
    out = ffi.new("HloBuffer **")
    check(ctx, lib.hlo_buffer_new_tuple(ctx, [buf], 1, out), "compare_runs: a value")
    (value,) = _values.from_buffer(ctx, out[0])
    return value


def _reference_context(threads, rebinds):
    """A context with the package's bindings, those of rebinds' targets
    replaced: {target: library path | (path, symbol) | callable | "builtin"}."""
    if not isinstance(rebinds, dict) or not rebinds:
        raise Error("hlorun: error: reference_custom_calls: expected a non-empty dict "
                    "{target: library path, (path, symbol), callable or \"builtin\"}",
                    "invalid argument")
    rc = _module._Context(int(threads or 0))
    rc.handlers = []          # the callbacks must outlive the context's use
    for b in _module._bindings:
        if b[0] == "plugin" or b[1] not in rebinds:
            _module._apply(rc, b)
    for target, h in rebinds.items():
        if isinstance(h, str) and h == "builtin":
            how = lib.hlo_ctx_custom_call_binding(rc.ptr, target.encode())
            if how == ffi.NULL:
                raise Error(f"hlorun: error: reference_custom_calls: {target}=builtin: hlorun has "
                            f"no built-in implementation of custom-call target \"{target}\"",
                            "invalid argument")
            lib.hlo_free(how)
        elif callable(h):
            entry = ("python", target, make_handler(target, h), f"python: {h!r}")
            rc.handlers.append(entry)
            _module._apply(rc, entry)
        elif isinstance(h, (str, os.PathLike)) or (isinstance(h, tuple) and len(h) == 2):
            path, symbol = h if isinstance(h, tuple) else (h, None)
            _module._apply(rc, ("lib", target, os.fspath(path), symbol))
        else:
            raise Error(f"hlorun: error: reference_custom_calls: {target}: a library path, "
                        f"(path, symbol), a callable or \"builtin\", not {type(h).__name__}",
                        "invalid argument")
    return rc


def _check_params(module, reference):
    """The first parameter that differs, before anything runs (as the command)."""
    a, b = module.param_shapes(), reference.param_shapes()
    if len(a) != len(b):
        raise Error(f"hlorun: error: the reference {reference.name} takes {len(b)} parameter"
                    f"{'' if len(b) == 1 else 's'}, the module {module.name} takes {len(a)}",
                    "type mismatch")
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            raise Error(f"hlorun: error: parameter {k} differs: {x} in the module {module.name}, "
                        f"{y} in the reference {reference.name}", "type mismatch")


def _report(ctx, d):
    found = bool(d.found)
    r = Divergence(result=_own(ctx, d.result), reference_result=_own(ctx, d.reference_result),
                   result_mismatches=int(d.result_mismatches),
                   result_report=_text(d.result_report) or "", found=found,
                   text=_text(d.line) or "", values_compared=int(d.values_compared),
                   paired=int(d.paired), unpaired=int(d.unpaired), runs=int(d.runs))
    n = int(d.num_devices)
    r.devices, r.devices_diverged = n, int(d.devices_diverged)
    r.device_results = [_own(ctx, d.device_results[k]) for k in range(n)]
    r.device_reference_results = [_own(ctx, d.device_reference_results[k]) for k in range(n)]
    r.device_result_mismatches = [int(d.device_result_mismatches[k]) for k in range(n)]
    if found:
        r.device = int(d.device)
        ins, cp = d.instruction, d.counterpart
        r.instruction = _text(lib.hlo_instruction_name(ins))
        r.opcode = _text(lib.hlo_instruction_opcode(ins))
        r.computation = _text(lib.hlo_instruction_computation(ins))
        r.line = int(lib.hlo_instruction_line(ins))
        if cp != ffi.NULL:
            r.counterpart = _text(lib.hlo_instruction_name(cp))
            r.counterpart_line = int(lib.hlo_instruction_line(cp))
        r.iteration = int(d.iteration) if d.iteration >= 0 else None
        r.call = int(d.call) if d.call >= 0 else None
        r.mismatches, r.elements = int(d.mismatches), int(d.elements)
        r.max_abs_error, r.max_abs_at = float(d.max_abs_error), _text(d.max_abs_at)
        r.value, r.reference_value = _own(ctx, d.value), _own(ctx, d.reference_value)
    return r


def compare_runs(module, reference, *inputs, rtol=None, atol=None, ulp=None,
                 reference_precision=None, reference_custom_calls=None, memory_budget=None,
                 threads=None, replicas=None, partitions=None):
    """Run module and reference on the same inputs (one per parameter) and
    find where they part, as hlorun --reference does (doc/divergence.md):
    the results compared as --expect, then every instruction with a
    counterpart, in the module's execution order; the first whose value
    differs while its operands agreed is named. Returns a Divergence.

    reference: a Module (its parameters must match the module's: an Error
    names the first that differs, before anything runs), or None with
    reference_precision="f64" (the module itself carried in f64, as
    --reference-precision f64) or with reference_custom_calls.
    reference_custom_calls: {target: library path, (path, symbol), a Python
    callable or "builtin"}: the reference runs with those handlers instead
    (--reference-custom-call). rtol, atol, ulp: the tolerance of every
    comparison (as compare()). memory_budget: bytes of reference values held
    at once (None: as much as the reference's run needs). A run that fails
    raises Error whose failed_side says which.

    replicas, partitions: the device grid (default: the module's
    device_grid(), or the reference's when only it has more than one
    device). On more than one device both modules run on every device, each
    input is a global value split by each module's own parameter shardings
    (as Module.run does), and the search goes device by device; a reference
    whose own grid of several devices differs raises Error naming both."""
    if not isinstance(module, _module.Module):
        raise Error(f"hlorun: error: compare_runs: the module must be an hlorun.Module, not "
                    f"{type(module).__name__}", "invalid argument")
    if reference_precision not in (None, "f64"):
        raise Error(f"hlorun: error: reference_precision={reference_precision!r}: only \"f64\" "
                    "is supported", "invalid argument")
    if reference_precision and (reference is not None or reference_custom_calls is not None):
        raise Error("hlorun: error: reference_precision=\"f64\" makes the module itself the "
                    "reference: give no reference module nor reference_custom_calls",
                    "invalid argument")
    if reference is None and not reference_precision and reference_custom_calls is None:
        raise Error("hlorun: error: compare_runs: no reference: give a Module, "
                    "reference_precision=\"f64\" or reference_custom_calls", "invalid argument")
    if reference is not None and not isinstance(reference, _module.Module):
        raise Error(f"hlorun: error: compare_runs: the reference must be an hlorun.Module or "
                    f"None, not {type(reference).__name__}", "invalid argument")
    if memory_budget is not None and (isinstance(memory_budget, bool) or
                                      not isinstance(memory_budget, int) or memory_budget < 0):
        raise Error(f"hlorun: error: memory_budget={memory_budget!r}: a number of bytes >= 0",
                    "invalid argument")
    if reference is not None:
        _check_params(module, reference)
    shapes = module.param_shapes()
    if len(inputs) != len(shapes):
        raise Error(f"hlorun: error: the module's ENTRY takes {len(shapes)} parameter"
                    f"{'' if len(shapes) == 1 else 's'}, but {len(inputs)} input"
                    f"{' was' if len(inputs) == 1 else 's were'} given", "invalid argument")
    for what, v in (("replicas", replicas), ("partitions", partitions)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise Error(f"hlorun: error: {what}={v!r}: a positive integer", "invalid argument")
    grid = _grid(module, reference, replicas, partitions)
    cmp = compare_options(rtol, atol, ulp)
    ref = reference if reference is not None else module
    ndev = grid[0] * grid[1]
    c = _module._context(threads)
    with c.lock:
        c.sync()
        rc = None if reference_custom_calls is None else \
            _reference_context(threads, reference_custom_calls)
        run = ffi.new("HloRunOptions *")
        run.struct_size = ffi.sizeof("HloRunOptions")
        run.no_fusion = 1
        run.replicas, run.partitions = grid
        opts = ffi.new("HloDivergenceOptions *")
        opts.struct_size = ffi.sizeof("HloDivergenceOptions")
        opts.compare, opts.run = cmp, run
        opts.reference_ctx = rc.ptr if rc else ffi.NULL
        opts.memory_budget = memory_budget or 0
        opts.reference_precision = _F64 if reference_precision else 0
        n = len(shapes)
        bufs = ffi.new("HloBuffer *[]", max(ndev * n, 1))
        rbufs = ffi.new("HloBuffer *[]", max(ndev * n, 1)) if ndev > 1 and ref is not module \
            else None
        out = ffi.new("HloDivergence **")
        try:
            for k, shape in enumerate(shapes):
                if ndev == 1:
                    bufs[k] = module._input(c, k, inputs[k], shape, 0)
                    continue
                _shard(c, module, k, inputs[k], shape, grid, bufs)
                if rbufs is not None:
                    _shard(c, ref, k, inputs[k], shape, grid, rbufs)
            if rbufs is not None:
                opts.reference_inputs = rbufs
            st = lib.hlo_compare_runs(c.ptr, module._ptr, ref._ptr, bufs, n, opts, out)
            d = out[0]
            if st != lib.HLO_OK:
                side = _SIDES.get(int(d.failed_side)) if d != ffi.NULL else None
                _fail(c, rc, st, side, module, reference, reference_precision)
            take_diagnostics(c.ptr)   # warnings
            return _report(c.ptr, d)
        finally:
            lib.hlo_divergence_free(out[0])
            for k in range(ndev * n):
                lib.hlo_buffer_free(bufs[k])
                if rbufs is not None:
                    lib.hlo_buffer_free(rbufs[k])


def _grid(module, reference, replicas, partitions):
    """The grid both run on: given, else the module's, else the reference's
    when only it has several devices; a reference on another grid of
    several devices is an error (as hlorun --reference)."""
    own = module.device_grid()
    grid = (replicas or own[0], partitions or own[1])
    if reference is None:
        return grid
    theirs = reference.device_grid()
    theirs = (replicas or theirs[0], partitions or theirs[1])
    if theirs == grid or theirs[0] * theirs[1] == 1:
        return grid
    if grid[0] * grid[1] == 1:
        return theirs
    raise Error(f"hlorun: error: the module {module.name} runs on {grid[0]} x {grid[1]} devices "
                f"(replicas x partitions), the reference {reference.name} on {theirs[0]} x "
                f"{theirs[1]}: both must run on one grid (replicas=, partitions=)",
                "invalid argument")


def _shard(c, module, k, value, shape, grid, per):
    """Parameter k's global value split by module's sharding into per[d * n + k]."""
    n = len(module.param_shapes())
    g = module._input(c, k, value, shape, 0, grid)
    parts = ffi.new("HloBuffer *[]", grid[0] * grid[1])
    try:
        check(c.ptr, lib.hlo_shard_param(c.ptr, module._ptr, k, g, grid[0], grid[1], parts),
              f"parameter {k} ({shape})")
    finally:
        lib.hlo_buffer_free(g)
    for d in range(grid[0] * grid[1]):
        per[d * n + k] = parts[d]


def _fail(c, rc, st, side, module, reference, precision):
    """Raise Error saying which run failed (failed_side) and the library's why."""
    text = take_diagnostics(c.ptr).rstrip("\n")
    if side == "reference":
        if rc is not None:
            text = "\n".join(t for t in (take_diagnostics(rc.ptr).rstrip("\n"), text) if t)
        name = reference.name if reference is not None else module.name
        how = (" (carried in f64)" if precision else
               " (with the reference_custom_calls bindings)" if rc is not None else "")
        text = f"hlorun: error: the reference {name}{how} failed:\n{text}"
    elif side == "module":
        text = f"hlorun: error: the module {module.name} failed:\n{text}"
    raise Error(text or "hlorun: error: comparing the runs failed",
                _STATUS.get(int(st), str(st)), failed_side=side)
