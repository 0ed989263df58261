"""The exceptions of the ibvp package.

A simulation usually runs in a child process, so its failures cross a process boundary as
data and are raised again here; an in-process run or a validation raises the `_core`
exceptions, which are turned into these too. Callers catch one set of classes whichever way
a run went.
"""
from __future__ import annotations

from typing import Any


class ConfigError(ValueError):
    """Bad input, as the C++ loader reports it: the file, the key path, the line (0 when
    unknown), what is wrong and how to fix it. str() is the whole message."""

    def __init__(self, message: str, *, file: str = "", key: str = "", line: int = 0, problem: str = "",
                 fix: str = "") -> None:
        super().__init__(message)
        self.file = file
        self.key = key
        self.line = line
        self.problem = problem or message
        self.fix = fix

    def to_dict(self) -> dict[str, Any]:
        return {"message": str(self), "file": self.file, "key": self.key, "line": self.line,
                "problem": self.problem, "fix": self.fix}


class SimulationError(RuntimeError):
    """A run that failed for another reason than its input: the child crashed, was killed
    by a signal, or the simulator threw. `returncode` is the child's exit status (negative:
    the signal that ended it; None for an in-process run), `stderr` the end of its error
    output."""

    def __init__(self, message: str, *, returncode: int | None = None, stderr: str = "",
                 out_dir: str | None = None) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr
        self.out_dir = out_dir


class DeadlockError(SimulationError):
    """The fabric stopped moving with packets buffered; the message names the cycle of ports
    waiting for each other's credits. The results up to the deadlock were written, so
    `ibvp.Results.load(err.out_dir)` shows them."""


class RunTimeout(SimulationError, TimeoutError):
    """The run took longer than the `timeout` it was given; its child was killed."""


class KernelUsedError(RuntimeError):
    """A second in-process run: SystemC elaborates one fabric per process."""


def from_core(exc: BaseException, out_dir: str | None = None) -> BaseException:
    """The ibvp exception for an exception raised by `ibvp._core` (others pass through)."""
    name = type(exc).__name__ if type(exc).__module__ == "ibvp._core" else ""
    if name == "ConfigError":
        return ConfigError(str(exc), file=getattr(exc, "file", ""), key=getattr(exc, "key", ""),
                           line=int(getattr(exc, "line", 0) or 0), problem=getattr(exc, "problem", ""),
                           fix=getattr(exc, "fix", ""))
    if name == "DeadlockError":
        return DeadlockError(str(exc), out_dir=out_dir)
    if name == "KernelUsedError":
        return KernelUsedError(str(exc))
    if isinstance(exc, RuntimeError):
        return SimulationError(str(exc), out_dir=out_dir)
    return exc
