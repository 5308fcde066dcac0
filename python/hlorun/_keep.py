"""Module.run(..., keep=[names]): the values of named instructions, taken
as the run makes them through the library's observer API
(hlo_executable_set_observer), never by changing the module or a kernel.

A name is an instruction's name, or COMPUTATION/NAME where several
computations hold that name (a loop body's and its condition's `i`).
ENTRY's instructions give their value; instructions of any other
computation (fusion bodies, loop bodies and conditions, branches, called
computations, reducers applied per element) give a list with one value per
run of it, in run order (empty when it never ran), so the kind of the
answer depends on where the instruction is, not on how often it ran."""
import difflib

from . import _values
from ._errors import Error, check, take_diagnostics
from ._lib import ffi, lib

_ENTRY = 1            # HLO_COMPUTATION_ENTRY
_AFTER = 2            # HLO_OBSERVE_AFTER
_NO_OPERANDS = 4      # HLO_OBSERVE_NO_OPERANDS


def _instructions(module):
    """(computation, name, handle, in ENTRY) of every instruction, in text order."""
    m, out = module._ptr, []
    for c in range(lib.hlo_module_num_computations(m)):
        entry = bool(lib.hlo_module_computation_flags(m, c) & _ENTRY)
        for k in range(lib.hlo_module_computation_size(m, c)):
            ins = lib.hlo_module_instruction(m, c, k)
            comp = ffi.string(lib.hlo_instruction_computation(ins)).decode()
            name = ffi.string(lib.hlo_instruction_name(ins)).decode()
            out.append((comp, name, ins, entry))
    return out


def _bad(message):
    return Error(f"hlorun: error: keep: {message}", "invalid argument")


def resolve(module, names):
    """{name as given: (handle address, in ENTRY)}; unknown or ambiguous
    names raise Error (an unknown one with the closest names)."""
    if isinstance(names, (str, bytes)) or not hasattr(names, "__iter__"):
        raise _bad(f"expected a list of instruction names, got {type(names).__name__}")
    every = _instructions(module)
    wanted = {}
    for name in names:
        if not isinstance(name, str):
            raise _bad(f"an instruction name must be a string, got {type(name).__name__}")
        comp, _, short = name.rpartition("/")
        hits = [i for i in every if i[1] == short and (not comp or i[0] == comp)]
        if not hits:
            spelled = sorted({i[1] for i in every} | {f"{i[0]}/{i[1]}" for i in every})
            close = difflib.get_close_matches(name, spelled, n=3, cutoff=0.6)
            hint = f" (close: {', '.join(close)})" if close else ""
            raise _bad(f"{module.name} has no instruction '{name}'{hint}")
        if len(hits) > 1:
            raise _bad(f"'{name}' is an instruction of several computations: say which as "
                       + ", ".join(f"'{i[0]}/{i[1]}'" for i in hits))
        _, _, ins, entry = hits[0]
        wanted[name] = (int(ffi.cast("uintptr_t", ins)), entry)
    return wanted


def execute(c, exe, bufs, n, wanted):
    """hlo_execute with an observer copying the wanted instructions' values:
    (the result buffer, {name: value or list of values})."""
    by_address = {}
    for name, (address, _) in wanted.items():
        by_address.setdefault(address, []).append(name)
    seen = {name: [] for name in wanted}
    raised = []

    def observe(event, user):
        try:
            names = by_address.get(int(ffi.cast("uintptr_t", event.instruction)))
            if names is None or event.result == ffi.NULL:
                return 0
            out = ffi.new("HloBuffer **")
            check(c.ptr, lib.hlo_value_to_buffer(c.ptr, event.result, out),
                  f"keep: copying the value of {names[0]}")
            value = _values.from_buffer(c.ptr, out[0])
            for name in names:
                seen[name].append(value)
            return 0
        except BaseException as e:   # re-raised once the run has stopped
            raised.append(e)
            return 1

    callback = ffi.callback("HloObserver", observe)
    check(c.ptr, lib.hlo_executable_set_observer(exe, callback, ffi.NULL, _AFTER | _NO_OPERANDS),
          "keep: cannot observe the run")
    # Only ENTRY's instructions wanted: deeper ones cost almost nothing then.
    deepest = -1 if any(not entry for _, entry in wanted.values()) else 0
    lib.hlo_executable_set_observer_depth(exe, deepest)
    result = ffi.new("HloBuffer **")
    try:
        st = lib.hlo_execute(exe, bufs, n, result)
    finally:
        lib.hlo_executable_set_observer(exe, ffi.NULL, ffi.NULL, 0)
    if raised:
        take_diagnostics(c.ptr)
        if st == lib.HLO_OK:
            lib.hlo_buffer_free(result[0])
        raise raised[0]
    check(c.ptr, st, "the run failed")
    kept = {}
    for name, (_, entry) in wanted.items():
        if not entry:
            kept[name] = seen[name]
        elif len(seen[name]) == 1:
            kept[name] = seen[name][0]
        else:   # dead code: the plan leaves out what the result does not need
            lib.hlo_buffer_free(result[0])
            raise _bad(f"'{name}' did not run ({len(seen[name])} values seen; an instruction "
                       "the result does not need is not run)")
    return result[0], kept
