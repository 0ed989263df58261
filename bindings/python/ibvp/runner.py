"""Running simulations: `ibvp.run`.

The SystemC kernel elaborates one fabric per process and cannot be reset, so each run gets a
fresh child interpreter (`python -m ibvp._worker`, protocol in _worker.py). The parent waits
for it with a deadline, shows its progress, and turns every way it can end into a result or
an exception: ConfigError, DeadlockError, SimulationError (crash, signal, simulator error)
or RunTimeout — never a hang. `in_process=True` runs in this process instead, once.
"""
from __future__ import annotations

import csv
import json
import math
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from . import _yaml
from ._corelib import core
from .errors import ConfigError, DeadlockError, KernelUsedError, RunTimeout, SimulationError, from_core
from .results import Results
from .scenario import Scenario

ProgressCallback = Callable[[float, float, float, int], None]

# How the parent starts a worker; tests replace it to simulate a crashing child.
WORKER_COMMAND = [sys.executable, "-m", "ibvp._worker"]
STDERR_TAIL_LINES = 40
# ibvp-sim's and the worker's exit status when the HCA's firmware faulted or hung.
FIRMWARE_FAULT_STATUS = 4
TRACE_HEADER = ("time_s", "src", "dst", "payload_bytes", "sl")

_in_process_used = False


def run(scenario: Scenario | Mapping[str, Any] | str | os.PathLike, out: str | os.PathLike | None = None, *,
        in_process: bool = False, progress: bool | ProgressCallback = False, timeout: float | None = None,
        workload: Iterable[tuple] | None = None) -> Results:
    """Runs one simulation and returns its Results.

    scenario   a Scenario, a dict (relative paths from the current directory) or a YAML path
    out        results directory: new, empty, or one an earlier run wrote (it is cleared first;
               any other non-empty directory is refused); None: a new temporary directory
    in_process run in this process (once per process) instead of a child process
    progress   True: a progress bar in simulated time on stderr; or a callable
               (sim_s, end_s, wall_s, packet_hops) called as the run advances
    timeout    wall-clock seconds before the child is killed (RunTimeout)
    workload   packets as (time_s, src, dst, payload_bytes, sl) tuples, e.g. a generator;
               written to <out>/workload.csv and run as the scenario's trace
    """
    out_dir = None
    if out is not None:
        # Claimed and cleared before the scenario is read: a refused scenario leaves no results
        # of an earlier run behind.
        out_dir = Path(out).resolve()
        claim_output_dir(out_dir, inputs=[scenario] if isinstance(scenario, (str, os.PathLike)) else [])
    sc = Scenario.coerce(scenario).copy()
    if out_dir is None:
        out_dir = Path(tempfile.mkdtemp(prefix=f"ibvp-{_safe(sc.name)}-")).resolve()
        claim_output_dir(out_dir)
    if workload is not None:
        trace = out_dir / "workload.csv"
        write_trace(workload, trace)
        sc.set("trace", {"file": str(trace)})
    # The document as run, with absolute file references, so the directory says what made it.
    (out_dir / "scenario.yaml").write_text(_document_text(sc))

    callback = _progress_callback(progress, sc.name)
    try:
        if in_process:
            _run_here(sc, out_dir, callback)
        else:
            _run_child(sc, out_dir, callback, timeout)
    finally:
        if callback is not None and hasattr(callback, "close"):
            callback.close()
    return Results(out_dir, scenario=sc)


def write_trace(workload: Iterable[tuple], path: str | os.PathLike) -> int:
    """Writes packets (time_s, src, dst, payload_bytes, sl) as a trace CSV; returns how many."""
    n = 0
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(TRACE_HEADER)
        for item in workload:
            try:
                t, src, dst, payload, sl = item
                row = (repr(float(t)), str(src), str(dst), int(payload), int(sl))
            except (TypeError, ValueError) as e:
                raise ValueError(f"workload item {n}: {item!r} is not (time_s, src, dst, payload_bytes, sl): {e}") from None
            # The simulator's trace reader splits lines at commas and does not unquote.
            if not math.isfinite(float(t)) or any(c in row[1] + row[2] for c in ',"\r\n'):
                raise ValueError(f"workload item {n}: {item!r}: the time must be finite and names free of commas, "
                                 "double quotes and line breaks")
            w.writerow(row)
            n += 1
    return n


def claim_output_dir(path: str | os.PathLike, kind: str = "run", inputs: Iterable[str | os.PathLike] = ()) -> None:
    """Makes `path` the output directory of one run (kind "run") or sweep ("sweep"), by the
    rule ibvp-sim follows (platform/builder/output_dir.h): a new directory, an empty one, or
    one an earlier ibvp run or sweep wrote (it carries the marker file .ibvp-run or
    .ibvp-sweep) is taken and, for a run, emptied; any other non-empty directory is refused
    with a ConfigError, and nothing in it is touched. A sweep keeps its own directory's
    points, so that a rerun skips the finished ones. `inputs` (the scenario file about to be
    read) must not lie inside it."""
    try:
        core().claim_output_dir(str(path), kind, [str(p) for p in inputs])
    except Exception as e:
        raise from_core(e) from None


def _document_text(sc: Scenario) -> str:
    data = sc.rebased(None)
    return _yaml.dump(data if "name" in data else {"name": sc.name, **data})


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60] or "run"


# ---- in this process ---------------------------------------------------------------------

def _run_here(sc: Scenario, out_dir: Path, callback: ProgressCallback | None) -> dict[str, Any]:
    global _in_process_used
    if _in_process_used:
        raise KernelUsedError(
            "this process has already run a simulation in-process: SystemC elaborates one fabric per process "
            "and cannot start a second; use ibvp.run(...) without in_process=True (the default runs each "
            "simulation in a fresh child process)")
    text, source, overrides, base_dir = sc.core_args()
    c = core()
    try:
        # Validation touches no SystemC state, so a bad scenario does not use up the one run.
        c.validate(text, source, overrides, base_dir)
        _in_process_used = True
        return c.run(text, source, overrides, base_dir, str(out_dir), callback)
    except Exception as e:
        raise from_core(e, out_dir=str(out_dir)) from None


# ---- in a child process ------------------------------------------------------------------

def _run_child(sc: Scenario, out_dir: Path, callback: ProgressCallback | None,
               timeout: float | None) -> dict[str, Any]:
    text, source, overrides, base_dir = sc.core_args()
    job = {"yaml": text, "source": source, "overrides": overrides, "base_dir": base_dir,
           "out_dir": str(out_dir), "progress": callback is not None}
    env = dict(os.environ)
    # The child sees the modules this process sees (e.g. a package found through sys.path
    # edits rather than an installation), and no SystemC banner.
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env["SYSTEMC_DISABLE_COPYRIGHT_MESSAGE"] = "1"
    proc = subprocess.Popen(WORKER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, text=True, bufsize=1)
    replies: queue.Queue = queue.Queue()
    stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
    # Two readers, so that neither pipe fills up and blocks the child while we wait on the other.
    readers = [threading.Thread(target=_read_replies, args=(proc.stdout, replies), daemon=True),
               threading.Thread(target=_read_lines, args=(proc.stderr, stderr_tail), daemon=True)]
    for r in readers:
        r.start()
    deadline = None if timeout is None else time.monotonic() + timeout
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    try:
        try:
            proc.stdin.write(json.dumps(job))
            proc.stdin.close()
        except BrokenPipeError:
            pass  # the child died at start; its exit status and stderr tell why
        while True:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                raise RunTimeout(f"{sc.name}: no result after {timeout:g} s of wall-clock time; the simulation "
                                 "was stopped (raise timeout= or shorten the scenario's duration)",
                                 returncode=None, stderr="".join(stderr_tail), out_dir=str(out_dir))
            try:
                message = replies.get(timeout=wait)
            except queue.Empty:
                continue
            if message is None:  # the child closed its stdout: it has ended
                break
            if "progress" in message and callback is not None:
                callback(*message["progress"])
            elif "result" in message:
                result = message["result"]
            elif "error" in message:
                error = message["error"]
        returncode = _wait(proc, deadline)
    except BaseException:
        # A timeout, Ctrl-C or a failing progress callback: the child must not outlive us.
        _kill(proc)
        raise
    for r in readers:
        r.join(timeout=5)
    tail = "".join(stderr_tail)
    if error is not None:
        raise _child_error(error, returncode, tail, out_dir)
    if returncode == FIRMWARE_FAULT_STATUS:
        # The HCA's firmware image crashed or hung (models/hca/firmware_guard.h): its report
        # is the last line of the child's stderr and leads the exception's message.
        report = next((l for l in reversed(tail.splitlines()) if l.startswith("ibvp: firmware fault")), "")
        raise SimulationError(f"{sc.name}: " + (report[len("ibvp: "):] or "firmware fault (exit status 4)")
                              + (f"\n{tail.rstrip()}" if tail.strip() else ""),
                              returncode=returncode, stderr=tail, out_dir=str(out_dir))
    if result is None or returncode != 0:
        how = (f"was killed by signal {-returncode}" if returncode < 0 else f"exited with status {returncode}")
        raise SimulationError(f"{sc.name}: the simulation process {how} without a result"
                              + (f"; its last output:\n{tail.rstrip()}" if tail.strip() else ""),
                              returncode=returncode, stderr=tail, out_dir=str(out_dir))
    return result


def _read_replies(stream, replies: queue.Queue) -> None:
    for line in stream:
        line = line.strip()
        if not line:
            continue
        try:
            replies.put(json.loads(line))
        except json.JSONDecodeError:
            pass  # not ours; the worker sends nothing else on this pipe
    replies.put(None)


def _read_lines(stream, tail: deque) -> None:
    for line in stream:
        tail.append(line)


def _wait(proc: subprocess.Popen, deadline: float | None) -> int:
    # The child sends its result and exits; give it a moment beyond the deadline to do so.
    remaining = None if deadline is None else max(deadline - time.monotonic(), 5.0)
    try:
        return proc.wait(timeout=remaining)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return proc.returncode


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def _child_error(error: dict[str, Any], returncode: int, tail: str, out_dir: Path) -> BaseException:
    kind, message = error.get("type"), error.get("message", "")
    if kind == "ConfigError":
        return ConfigError(message, file=error.get("file", ""), key=error.get("key", ""),
                           line=int(error.get("line") or 0), problem=error.get("problem", ""),
                           fix=error.get("fix", ""))
    if kind == "DeadlockError":
        return DeadlockError(message, returncode=returncode, stderr=tail, out_dir=str(out_dir))
    if kind == "ImportError":
        return ImportError(message)
    return SimulationError(f"{message}" + (f"\n{tail.rstrip()}" if tail.strip() else ""), returncode=returncode,
                           stderr=tail, out_dir=str(out_dir))


# ---- progress ----------------------------------------------------------------------------

def _progress_callback(progress: bool | ProgressCallback, name: str) -> ProgressCallback | None:
    if callable(progress):
        return progress
    if progress:
        return ProgressBar(name)
    return None


class ProgressBar:
    """A tqdm bar in simulated milliseconds, with the wall-clock rate of the simulation."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.bar = None

    def __call__(self, sim_s: float, end_s: float, wall_s: float, hops: int) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=round(end_s * 1e3, 6), desc=self.name, unit="sim-ms", file=sys.stderr,
                            dynamic_ncols=True, bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.3f}/{total:.3f} "
                            "sim-ms [{elapsed}<{remaining}{postfix}]")
        self.bar.n = round(min(sim_s, end_s) * 1e3, 6)
        if wall_s > 0:
            self.bar.set_postfix_str(f"{sim_s * 1e3 / wall_s:.3g} sim-ms/s, {hops / wall_s / 1e6:.3g} M hops/s",
                                     refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
