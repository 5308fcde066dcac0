"""hlorun.check_determinism: the module run several times under different
thread counts, every instruction's bits hashed, as hlorun --determinism N
does (the library's hlo_check_determinism; doc/divergence.md)."""
import os
from dataclasses import dataclass, field
from typing import List, Optional

from . import _module
from ._errors import _STATUS, Error, take_diagnostics
from ._lib import ffi, lib


@dataclass
class Determinism:
    """What check_determinism found. agreed: every run made the same bits at
    every step. Otherwise the first step that differed: instruction, opcode,
    computation and line (1-based) of the module, iteration or call (from
    0; None outside loops / for other than custom calls), run (from 1) the
    run that differed from run 0 and its thread count run_threads, and cause:
    "result_differs" (the same operand bits gave other result bits: a racy
    handler), "operands_differ" (the operands already differed: the
    difference came from a step that is not observed), "different_path"
    (another instruction ran there) or "fewer_steps" (the run ended early;
    instruction is None). runs: the runs asked for; threads: each run's
    thread count; steps: the steps of run 0. text: the command's line."""
    agreed: bool
    runs: int
    threads: List[int] = field(default_factory=list)
    steps: int = 0
    text: str = ""
    instruction: Optional[str] = None
    opcode: Optional[str] = None
    computation: Optional[str] = None
    line: int = 0
    iteration: Optional[int] = None
    call: Optional[int] = None
    run: Optional[int] = None
    run_threads: Optional[int] = None
    cause: Optional[str] = None

    def __bool__(self):
        return self.agreed

    def __str__(self):
        return self.text


def thread_counts(runs):
    """Run k's threads, as the command picks them: 1, the machine's cores
    (at least 2), then 2, 3, 4, ... skipping the cores' count: all different."""
    cores = max(os.cpu_count() or 2, 2)
    return [1 if k == 0 else cores if k == 1 else k if k < cores else k + 1
            for k in range(runs)]


def _text(p):
    return ffi.string(p).decode("utf-8", "replace") if p != ffi.NULL else None


def _report(r, threads):
    d = Determinism(agreed=bool(r.deterministic), runs=len(threads), threads=threads,
                    steps=int(r.steps))
    if d.agreed:
        d.text = f"deterministic: {len(threads)} runs agree"
        return d
    d.run, d.run_threads = int(r.run), threads[int(r.run)]
    if r.instruction == ffi.NULL:
        d.cause = "fewer_steps"
        d.text = (f"first nondeterministic: run {d.run} ({d.run_threads} threads) made fewer "
                  "steps than run 0 (1 thread)")
        return d
    ins = r.instruction
    d.instruction = _text(lib.hlo_instruction_name(ins))
    d.opcode = _text(lib.hlo_instruction_opcode(ins))
    d.computation = _text(lib.hlo_instruction_computation(ins))
    d.line = int(lib.hlo_instruction_line(ins))
    d.iteration = int(r.iteration) if r.iteration >= 0 else None
    d.call = int(r.call) if r.call >= 0 else None
    d.cause = ("different_path" if r.different_path else
               "operands_differ" if r.operands_differ else "result_differs")
    where = "".join(f", {k} {v}" for k, v in (("iteration", d.iteration), ("call", d.call))
                    if v is not None)
    d.text = (f"first nondeterministic: {d.instruction} ({d.opcode}, line {d.line}{where}): "
              f"{d.cause.replace('_', ' ')} between run 0 (1 thread) and run {d.run} "
              f"({d.run_threads} threads)")
    return d


def check_determinism(module, *inputs, runs=3):
    """Run module runs times (2 to 64) on the same inputs (one per
    parameter), run k in its own context with thread_counts(runs)[k]
    threads and the package's bindings, every instruction as its own step;
    hash each step's operands and result and name the first step whose
    result bits differ from run 0's, as hlorun --determinism N does.
    Returns a Determinism (true when all runs agree). A run that fails
    raises Error naming the run."""
    if not isinstance(module, _module.Module):
        raise Error(f"hlorun: error: check_determinism: the module must be an hlorun.Module, "
                    f"not {type(module).__name__}", "invalid argument")
    if isinstance(runs, bool) or not isinstance(runs, int) or not 2 <= runs <= 64:
        raise Error(f"hlorun: error: check_determinism: runs={runs!r}: a run count from 2 to 64",
                    "invalid argument")
    shapes = module.param_shapes()
    if len(inputs) != len(shapes):
        raise Error(f"hlorun: error: the module's ENTRY takes {len(shapes)} parameter"
                    f"{'' if len(shapes) == 1 else 's'}, but {len(inputs)} input"
                    f"{' was' if len(inputs) == 1 else 's were'} given", "invalid argument")
    threads = thread_counts(runs)
    ctxs = []
    for t in threads:                 # fresh contexts: no state shared between runs
        c = _module._Context(t)
        with _module._lock:
            c.sync()
        ctxs.append(c)
    opts = ffi.new("HloRunOptions *")
    opts.struct_size = ffi.sizeof("HloRunOptions")
    opts.no_fusion = 1
    out = ffi.new("HloDeterminism *")
    out.struct_size = ffi.sizeof("HloDeterminism")
    bufs = ffi.new("HloBuffer *[]", max(len(shapes), 1))
    ptrs = ffi.new("HloCtx *[]", [c.ptr for c in ctxs])
    try:
        for k, shape in enumerate(shapes):
            bufs[k] = module._input(ctxs[0], k, inputs[k], shape, 0)
        st = lib.hlo_check_determinism(ptrs, runs, module._ptr, bufs, len(shapes), opts, out)
        if st != lib.HLO_OK:
            k = int(out.failed_run) - 1 if out.failed_run > 0 else 0
            text = take_diagnostics(ctxs[k].ptr).rstrip("\n")
            head = (f"hlorun: error: run {k} ({threads[k]} thread{'' if threads[k] == 1 else 's'})"
                    " failed:\n" if out.failed_run > 0 else "")
            raise Error(head + (text or "hlorun: error: check_determinism failed"),
                        _STATUS.get(int(st), str(st)))
        return _report(out, threads)
    finally:
        for k in range(len(shapes)):
            if bufs[k] != ffi.NULL:
                lib.hlo_buffer_free(bufs[k])
