"""Modules, contexts and custom-call bindings.

Bindings (bind, plugin) are process-wide, like the command's options: every
context applies the ones made so far before it compiles, in the order they
were made (a later binding of a target replaces an earlier one). Contexts are
kept per thread count, since the library fixes it per context.
"""
import os
import re
import sys
import threading

from . import _keep, _reduce, _values
from ._errors import Error, check, take_diagnostics
from ._handlers import make_handler
from ._lib import ffi, lib, release

_lock = threading.Lock()
_bindings = []        # ("lib", target, path, symbol) | ("plugin", path, fn) | ("python", target, cb, origin)
_contexts = {}        # threads -> _Context


@ffi.callback("HloTextSink")
def _callback_sink(user, text, n):
    sys.stderr.write(ffi.string(text, n).decode("utf-8", "replace"))
    sys.stderr.flush()


class _Context:
    """One HloCtx, its lock (diagnostics are per context) and the bindings it has."""

    def __init__(self, threads):
        opts = ffi.new("HloCtxOptions *")
        opts.struct_size = ffi.sizeof("HloCtxOptions")
        opts.threads = threads
        out = ffi.new("HloCtx **")
        if lib.hlo_ctx_new(opts, out) != lib.HLO_OK:
            raise Error("hlorun: error: cannot create the interpreter context", "error")
        self.ptr = ffi.gc(out[0], release(lib.hlo_ctx_free))
        # Host callbacks without results (jax.debug.print) print their
        # operands on sys.stderr, as the command does on standard error.
        lib.hlo_ctx_set_callback_output(self.ptr, _callback_sink, ffi.NULL)
        self.lock = threading.RLock()
        self.applied = 0      # bindings of _bindings applied so far

    def sync(self):
        """Apply the bindings made since the last call (caller holds self.lock)."""
        while self.applied < len(_bindings):
            _apply(self, _bindings[self.applied])
            self.applied += 1


def _apply(c, b):
    """Make binding b in context c (raises Error when the library says no)."""
    if b[0] == "lib":
        st = lib.hlo_ctx_bind_custom_call(c.ptr, b[1].encode(), b[2].encode(),
                                          b[3].encode() if b[3] else ffi.NULL)
        check(c.ptr, st, f"cannot bind custom call {b[1]}")
    elif b[0] == "plugin":
        st = lib.hlo_ctx_load_plugin(c.ptr, b[1].encode(), b[2].encode() if b[2] else ffi.NULL)
        check(c.ptr, st, f"cannot load plugin {b[1]}")
    else:
        st = lib.hlo_ctx_register_ffi_handler(c.ptr, b[1].encode(), b[2], b[3].encode())
        check(c.ptr, st, f"cannot register {b[1]}")


def _context(threads=None):
    key = int(threads or 0)
    if key < 0:
        raise Error(f"hlorun: error: threads={threads}: must be >= 0", "invalid argument")
    with _lock:
        if key not in _contexts:
            _contexts[key] = _Context(key)
        return _contexts[key]


def bind(target, handler, symbol=None):
    """Bind custom-call target to a handler: a shared library path (its symbol
    `symbol`, default the target's name; the instruction's api_version picks
    the calling convention, as with --custom-call TARGET=LIB.so[:SYMBOL]) or a
    Python callable (see hlorun._handlers: fn(*operands, *results))."""
    if not isinstance(target, str) or not target:
        raise Error("hlorun: error: bind: the target must be a non-empty string",
                    "invalid argument")
    if callable(handler):
        if symbol is not None:
            raise Error("hlorun: error: bind: symbol= goes with a library, not a callable",
                        "invalid argument")
        origin = f"python: {getattr(handler, '__module__', '?')}." \
                 f"{getattr(handler, '__qualname__', repr(handler))}"
        entry = ("python", target, make_handler(target, handler), origin)
    elif isinstance(handler, (str, os.PathLike)):
        entry = ("lib", target, os.fspath(handler), symbol)
    else:
        raise Error(f"hlorun: error: bind: {target}: the handler must be a library path or a "
                    f"callable, not {type(handler).__name__}", "invalid argument")
    _add_binding(entry)


def plugin(path, function=None):
    """Load a plugin library whose registration function (default
    hlorun_ffi_plugin_init) registers handlers, as --plugin LIB.so[:FUNCTION]."""
    _add_binding(("plugin", os.fspath(path), function))


def _add_binding(entry):
    # Made first in the default context: a library that does not load is
    # reported by the call that named it and never recorded, so later runs
    # are not poisoned by it. Other contexts catch up before their next run.
    c = _context()
    with _lock, c.lock:
        c.sync()
        _apply(c, entry)
        _bindings.append(entry)
        c.applied = len(_bindings)


class Module:
    """A parsed HLO module. run() executes its ENTRY computation."""

    def __init__(self, ptr, ctx, name):
        self._ptr = ptr
        self._ctx = ctx
        self.name = name
        self._exes = {}       # (threads, random_constants, seed) -> HloExecutable
        self._params = None

    def __repr__(self):
        return f"<hlorun.Module {self.name}: {self.num_params} parameter(s)>"

    @property
    def num_params(self):
        return lib.hlo_module_num_params(self._ptr)

    def param_shapes(self):
        """The ENTRY parameters' shapes as text ("f32[2,3]", "(f32[], s32[2])")."""
        if self._params is None:
            c = self._ctx
            shapes = []
            with c.lock:
                for k in range(self.num_params):
                    out = ffi.new("char **")
                    check(c.ptr, lib.hlo_module_param_shape(c.ptr, self._ptr, k, out),
                          f"parameter {k}")
                    shapes.append(ffi.string(out[0]).decode())
                    lib.hlo_free(out[0])
            self._params = shapes
        return list(self._params)

    def text(self):
        """The module in canonical HLO text (what hlorun --print shows)."""
        c = self._ctx
        with c.lock:
            check(c.ptr, lib.hlo_module_verify(c.ptr, self._ptr), "the module does not verify")
            out, n = ffi.new("char **"), ffi.new("size_t *")
            check(c.ptr, lib.hlo_module_print(c.ptr, self._ptr, out, n), "printing")
            s = ffi.unpack(out[0], n[0]).decode()
            lib.hlo_free(out[0])
        return s

    def extract(self, name, depth=0):
        """The sub-module around instruction name (as hlorun --extract cuts it):
        name as its ROOT, the instructions within depth operand steps above it,
        constants kept; every other value read becomes a parameter. The
        result's .cut lists, per parameter, the instruction it stands for."""
        c = self._ctx
        with c.lock:
            return _reduce.extract(self, c, name, depth)

    def explain_custom_calls(self):
        """Every custom call and how it would run (--explain-custom-calls)."""
        c = self._ctx
        with c.lock:
            c.sync()
            out = ffi.new("char **")
            check(c.ptr, lib.hlo_module_explain_custom_calls(c.ptr, self._ptr, out), "explain")
            s = ffi.string(out[0]).decode()
            lib.hlo_free(out[0])
            take_diagnostics(c.ptr)
        return s

    def _executable(self, c, threads, random, seed, grid, no_fusion=False):
        key = (threads, random is not None, seed, grid, no_fusion)
        if key in self._exes:
            return self._exes[key][0]
        if True:
            opts = ffi.new("HloRunOptions *")
            opts.struct_size = ffi.sizeof("HloRunOptions")
            opts.random_constants = int(random is not None)
            opts.seed = seed
            opts.replicas, opts.partitions = grid
            opts.no_fusion = int(no_fusion)   # keep=: every instruction its own step
            out = ffi.new("HloExecutable **")
            check(c.ptr, lib.hlo_compile(c.ptr, self._ptr, opts, out),
                  "cannot prepare the module")
            # The executable borrows its context and module: its destructor
            # holds both, so that neither is freed before it (even at exit).
            free = release(lib.hlo_executable_free)
            exe = ffi.gc(out[0], lambda e, c=c, m=self._ptr: free(e))
            self._exes[key] = (exe,)
        return exe

    def device_grid(self):
        """(replicas, partitions) the module runs on by default: its header's
        replica_count and num_partitions, or the smallest grid its collectives
        need."""
        r, p, inferred = ffi.new("int *"), ffi.new("int *"), ffi.new("int *")
        lib.hlo_module_device_grid(self._ptr, r, p, inferred)
        return r[0], p[0]

    def run(self, *inputs, random=None, threads=None, replicas=None, partitions=None, keep=None):
        """Run ENTRY on inputs (one per parameter: numpy arrays, or tuples of them
        for tuple parameters). random: None, True (seed 0) or a seed: fill the
        parameters without an input and elided constants with pseudo-random
        values, as --random[=SEED]. Returns a numpy array, a tuple for a tuple
        result (None for a token), viewing the result's memory (read-only).

        replicas, partitions: the device grid (default: device_grid()). On more
        than one device each input is a global value (or one of the parameter's
        own shape, given whole to every device), split by the parameter's
        sharding, and the result is assembled from every device's by the ROOT's
        sharding (replicated: every device must agree), as hlorun --replicas R
        --partitions P does.

        keep: instruction names (COMPUTATION/NAME where several computations
        hold the name): run() then returns (result, {name: value}), the values
        those instructions made in this run (hlorun._keep): an ENTRY
        instruction's value, or for one of another computation (a loop body,
        a fusion body, a branch) a list of its values, one per run of it. An
        unknown name raises Error with the closest names. One device only."""
        for what, v in (("replicas", replicas), ("partitions", partitions)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise Error(f"hlorun: error: {what}={v!r}: a positive integer", "invalid argument")
        if random is False:
            random = None
        seed = 0 if random is None or random is True else int(random)
        if random is not None and random is not True and seed < 0:
            raise Error(f"hlorun: error: random={random}: the seed must be >= 0",
                        "invalid argument")
        shapes = self.param_shapes()
        np_ = len(shapes)
        if len(inputs) > np_:
            raise Error(f"hlorun: error: too many inputs: the module's ENTRY takes {np_} "
                        f"parameter{'s' if np_ != 1 else ''}, but {len(inputs)} "
                        f"input{'s were' if len(inputs) != 1 else ' was'} given",
                        "invalid argument")
        if len(inputs) < np_ and random is None:
            raise Error(f"hlorun: error: the module's ENTRY takes {np_} parameter"
                        f"{'s' if np_ != 1 else ''}, but {len(inputs)} input"
                        f"{'s were' if len(inputs) != 1 else ' was'} given (pass one input "
                        "per parameter, or random= to fill the rest)", "invalid argument")
        own_r, own_p = self.device_grid()
        grid = (replicas or own_r, partitions or own_p)
        wanted = None if keep is None else _keep.resolve(self, keep)
        if wanted is not None and grid[0] * grid[1] > 1:
            raise Error(f"hlorun: error: keep= needs a run on one device; this one has "
                        f"{grid[0] * grid[1]} devices ({grid[0]} replicas x {grid[1]} "
                        "partitions)", "invalid argument")
        c = _context(threads)
        with c.lock:
            c.sync()
            exe = self._executable(c, threads, random, seed, grid, wanted is not None)
            if grid[0] * grid[1] > 1:
                result = self._run_devices(c, exe, inputs, shapes, seed, grid)
            elif wanted is not None:
                result, kept = self._run_one(c, exe, inputs, shapes, seed,
                                             lambda b, n: _keep.execute(c, exe, b, n, wanted))
                take_diagnostics(c.ptr)
                return _values.from_buffer(c.ptr, result), kept
            else:
                result = self._run_one(c, exe, inputs, shapes, seed)
            take_diagnostics(c.ptr)   # warnings
            return _values.from_buffer(c.ptr, result)

    def _input(self, c, k, value, shape, seed, grid=None):
        """Parameter k's value as a new buffer: the input, or random values."""
        if value is _MISSING:
            out = ffi.new("HloBuffer **")
            if grid:
                st = lib.hlo_random_param_global(c.ptr, self._ptr, k, seed, out)
            else:
                st = lib.hlo_random_param(c.ptr, self._ptr, k, seed, out)
            check(c.ptr, st, "random input")
            return out[0]
        what = f"parameter {k} ({shape})"
        parsed = _values.parse_shape(shape)
        if grid and not isinstance(parsed, list):
            text = ffi.new("char **")
            check(c.ptr, lib.hlo_param_global_shape(c.ptr, self._ptr, k, grid[0], grid[1], text),
                  what)
            global_shape = ffi.string(text[0]).decode()
            lib.hlo_free(text[0])
            what = f"parameter {k} ({shape} per device, {global_shape} global)"
            if hasattr(value, "shape") and tuple(value.shape) != parsed[1]:
                parsed = _values.parse_shape(global_shape)
        return _values.to_buffer(c.ptr, value, parsed, what)

    def _run_one(self, c, exe, inputs, shapes, seed, execute=None):
        """The result buffer; or what execute(buffers, n) returns instead of
        hlo_execute's run (keep=)."""
        n = len(shapes)
        bufs = ffi.new("HloBuffer *[]", max(n, 1))
        try:
            for k, shape in enumerate(shapes):
                bufs[k] = self._input(c, k, inputs[k] if k < len(inputs) else _MISSING, shape,
                                      seed)
            if execute is not None:
                return execute(bufs, n)
            result = ffi.new("HloBuffer **")
            check(c.ptr, lib.hlo_execute(exe, bufs, n, result), "the run failed")
            return result[0]
        finally:
            for k in range(n):
                lib.hlo_buffer_free(bufs[k])

    def _run_devices(self, c, exe, inputs, shapes, seed, grid):
        n, devices = len(shapes), grid[0] * grid[1]
        per = ffi.new("HloBuffer *[]", max(devices * n, 1))   # per[d * n + k]
        results = ffi.new("HloBuffer *[]", devices)
        try:
            for k, shape in enumerate(shapes):
                g = self._input(c, k, inputs[k] if k < len(inputs) else _MISSING, shape, seed,
                                grid)
                parts = ffi.new("HloBuffer *[]", devices)
                try:
                    check(c.ptr, lib.hlo_shard_param(c.ptr, self._ptr, k, g, grid[0], grid[1],
                                                     parts), f"parameter {k} ({shape})")
                finally:
                    lib.hlo_buffer_free(g)
                for d in range(devices):
                    per[d * n + k] = parts[d]
            check(c.ptr, lib.hlo_execute_devices(exe, per, n, results), "the run failed")
            out = ffi.new("HloBuffer **")
            check(c.ptr, lib.hlo_assemble_result(c.ptr, self._ptr, ffi.NULL, results, grid[0],
                                                 grid[1], out), "assembling the result")
            return out[0]
        finally:
            for k in range(devices * n):
                lib.hlo_buffer_free(per[k])
            for d in range(devices):
                lib.hlo_buffer_free(results[d])


_MISSING = object()   # a parameter without an input (random= fills it)


def reduce(module, inputs, predicate, focus="root", max_candidates=0, timeout=0.0):
    """Shrink module while predicate(candidate, candidate_inputs) returns True
    (the bug is still there), as hlorun --reduce does: candidates are cuts of
    the module whose cut values are the real values they had on inputs.
    focus: "root" (candidates compute ENTRY's result), "nan" (the first
    instruction making a NaN or an infinity from finite operands, at that
    loop iteration) or "failure" (the instruction whose run fails).
    Returns (smallest Module, its inputs); .reduced_from on it holds
    (instructions before, after, candidates tried). Raises Error when the
    predicate is False on module itself (nothing to reduce), and whatever the
    predicate raises."""
    c = module._ctx
    with c.lock:
        c.sync()
        return _reduce.reduce(module, c, list(inputs), predicate, focus, max_candidates,
                              timeout)


# How MLIR text (StableHLO, MHLO, CHLO: what jax.jit(f).lower(x).as_text()
# prints) begins, after blanks and // comments: the C loader's test
# (shlo_looks_like_mlir), so a one-line "module {...}" is text while a path
# such as "module.mlir" stays a path.
_MLIR_START = re.compile(r'(?:\s|//[^\n]*)*(?:module(?:[ \t\n{]|$)|func\.func|"func\.func"|'
                         r'"builtin\.module"|#)')


def _is_text(source):
    if isinstance(source, bytes):
        return True
    return isinstance(source, str) and ("HloModule" in source or "ENTRY" in source or
                                        "\n" in source or _MLIR_START.match(source) is not None)


def load(source, name=None):
    """Parse a module from a file path or from module text, or bytes: HLO text
    (anything holding "HloModule" or "ENTRY") or MLIR text in StableHLO, MHLO
    or CHLO (holding "module", "func.func" or "stablehlo."), which runs as the
    HLO module XLA translates it to. name: what messages call the text
    (default "<string>"). Parse errors raise Error with FILE:LINE:COL."""
    c = _context()
    out = ffi.new("HloModule **")
    with c.lock:
        if _is_text(source):
            data = source.encode() if isinstance(source, str) else source
            label = name or "<string>"
            check(c.ptr, lib.hlo_module_parse(c.ptr, data, len(data), label.encode(), out),
                  "cannot parse the module")
        else:
            label = os.fspath(source)
            check(c.ptr, lib.hlo_module_load(c.ptr, label.encode(), out),
                  f"cannot read {label}")
        take_diagnostics(c.ptr)
    return Module(ffi.gc(out[0], release(lib.hlo_module_free)), c, name or label)
