"""The child side of `ibvp.run`: runs one simulation and reports back.

    python -m ibvp._worker < job.json

SystemC elaborates one fabric per process, so every simulation gets a fresh interpreter.
This module imports only the standard library and `ibvp._core` (not pandas, numpy or the
rest of the package) so that the child starts in a fraction of a second.

Protocol. The job is one JSON object on stdin: yaml, source, overrides, base_dir, out_dir,
progress (bool). Replies are JSON lines on the original stdout:
    {"progress": [sim_s, end_s, wall_s, packet_hops]}   (only when asked, at most ~10/s)
    {"result": {...}}                                   (_core.run's dict) and exit 0
    {"error": {"type": ..., "message": ..., ...}}       and exit 2 (ConfigError),
                                                        3 (DeadlockError) or 1 (other)
Anything the C++ side prints to stdout (SystemC reports) is redirected to stderr first, so
it cannot corrupt the replies; the parent keeps the tail of stderr for its error messages.
"""
import json
import os
import sys
import time

EXIT_OK, EXIT_ERROR, EXIT_CONFIG, EXIT_DEADLOCK = 0, 1, 2, 3


def main() -> int:
    # Replies get their own descriptor; fd 1 then points at stderr for whatever else writes.
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def reply(**message) -> None:
        replies.write(json.dumps(message) + "\n")

    # Before libsystemc is loaded: it prints its banner unless told not to.
    os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")
    try:
        job = json.load(sys.stdin)
        from ibvp import _core
    except Exception as e:  # a broken job or a missing extension: the parent shows the message
        reply(error={"type": type(e).__name__, "message": f"{type(e).__name__}: {e}"})
        return EXIT_ERROR

    progress = None
    if job.get("progress"):
        last = [0.0]

        def progress(sim_s: float, end_s: float, wall_s: float, hops: int) -> None:
            # The runner may call this thousands of times; the parent redraws ~10 times a second.
            now = time.monotonic()
            if now - last[0] >= 0.1 or sim_s >= end_s:
                last[0] = now
                reply(progress=[sim_s, end_s, wall_s, hops])

    try:
        result = _core.run(job["yaml"], job["source"], job.get("overrides", []), job["base_dir"],
                           job["out_dir"], progress)
    except _core.ConfigError as e:
        reply(error={"type": "ConfigError", "message": str(e), "file": e.file, "key": e.key, "line": e.line,
                     "problem": e.problem, "fix": e.fix})
        return EXIT_CONFIG
    except _core.DeadlockError as e:
        reply(error={"type": "DeadlockError", "message": str(e)})
        return EXIT_DEADLOCK
    except Exception as e:
        reply(error={"type": type(e).__name__, "message": str(e)})
        return EXIT_ERROR
    reply(result=result)
    return EXIT_OK


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    # The SystemC kernel's static objects are torn down by a normal exit; skipping that makes
    # the end of a run independent of the library's destructors (and quicker).
    os._exit(code)
