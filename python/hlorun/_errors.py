"""hlorun.Error and turning a failed library call into one."""
from ._lib import ffi, lib

_STATUS = {1: "error", 2: "out of memory", 3: "invalid argument", 4: "parse error",
           5: "I/O error", 6: "type mismatch", 7: "unsupported", 8: "runtime error",
           9: "stopped"}


class Error(Exception):
    """A failure of hlorun, with the message the hlorun command prints (FILE:LINE:COL
    and a caret for parse errors, the instruction and its line for runtime errors).
    status names the library's status code ("parse error", "runtime error", ...);
    failed_side, from compare_runs, which run failed: "module", "reference" or None."""

    def __init__(self, message, status=None, failed_side=None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.failed_side = failed_side


def take_diagnostics(ctx):
    """The context's recorded diagnostics as text, then forget them."""
    text = ffi.string(lib.hlo_ctx_diagnostics(ctx)).decode("utf-8", "replace")
    lib.hlo_ctx_clear_diagnostics(ctx)
    return text


def check(ctx, status, fallback):
    """Raise Error when status is not HLO_OK: the diagnostics, else fallback."""
    if status == lib.HLO_OK:
        return
    text = take_diagnostics(ctx).rstrip("\n")
    raise Error(text or f"hlorun: error: {fallback}", _STATUS.get(int(status), str(status)))
