"""Serving an ibvp fabric to real management software: `ibvp.serve_umad`.

`ibvp-sim SCENARIO --serve-umad` (platform/umad/serve.h) speaks the protocol of ibsim's
libumad2sim.so, so OpenSM and infiniband-diags run unmodified against the fabric
(docs/management.md, "Real management software against ibvp"). This module starts that
server from a script and runs tools against it:

    with ibvp.serve_umad("configs/examples/umad_two_switch.yaml", "out/umad", serve_for=60) as srv:
        print(srv.tool(["ibnetdiscover"]).stdout)

The server is a child process (one SystemC kernel per process); leaving the `with` block
stops it with SIGTERM, and it writes umad_mads.csv and umad.json into the output directory.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Mapping, Sequence

# Where Debian's ibsim-utils (libumad2sim0) installs the preload library.
LIBUMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
READY = "ibvp-sim: ready: "


def find_ibvp_sim() -> str:
    """The ibvp-sim binary: $IBVP_SIM, $IBVP_BUILD/ibvp-sim, then the PATH."""
    for candidate in (os.environ.get("IBVP_SIM"),
                      str(Path(os.environ["IBVP_BUILD"]) / "ibvp-sim") if os.environ.get("IBVP_BUILD") else None,
                      shutil.which("ibvp-sim")):
        if candidate and Path(candidate).is_file():
            return candidate
    raise FileNotFoundError("ibvp-sim not found: build it (`make`) and set IBVP_BUILD to the build directory, "
                            "or IBVP_SIM to the binary")


class UmadServer:
    """A running `ibvp-sim --serve-umad`. `env` is what a client needs (IBSIM_SOCKNAME or
    IBSIM_SERVER_NAME/PORT, SIM_HOST); `tool` runs one program under libumad2sim.so."""

    def __init__(self, proc: subprocess.Popen, env: dict[str, str], out: Path, stderr: list[str]):
        self.proc = proc
        self.env = env
        self.out = out
        self._stderr = stderr

    def tool(self, argv: Sequence[str], *, host: str | None = None, timeout: float = 60,
             extra_env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
        """Runs `argv` with LD_PRELOAD=libumad2sim.so against this server, attached to `host`
        (an endpoint's name; default: the server's). libumad2sim writes its fake sysfs tree
        into the working directory, so the tool runs in a fresh temporary one."""
        env = dict(os.environ)
        env.update(self.env)
        env["LD_PRELOAD"] = LIBUMAD2SIM
        if host:
            env["SIM_HOST"] = host
        if extra_env:
            env.update(extra_env)
        with tempfile.TemporaryDirectory(prefix="ibvp-umad-client-") as cwd:
            return subprocess.run(list(argv), env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)

    @property
    def stderr(self) -> str:
        return "".join(self._stderr)

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM, then the exit status once umad_mads.csv and umad.json are written."""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def __enter__(self) -> "UmadServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def serve_umad(scenario: str | os.PathLike, out: str | os.PathLike, *, serve_for: float = 600,
               host: str | None = None, socket_name: str | None = None, udp_port: int | None = None,
               timeout: str | None = None, overrides: Sequence[str] = (), sim: str | None = None,
               start_timeout: float = 60) -> UmadServer:
    """Starts `ibvp-sim SCENARIO --serve-umad` and returns once its sockets are bound.
    `socket_name` (default: a name of this process's, so servers of parallel scripts do not
    collide) or `udp_port` choose how clients reach it; `timeout` is the simulated response
    timeout (e.g. "1ms"); `serve_for` bounds the wall time. Raises RuntimeError with the
    server's message when it does not start (exit status 2: bad input)."""
    argv = [sim or find_ibvp_sim(), str(scenario), "--serve-umad", "--out", str(out), "--serve-for", str(serve_for)]
    if udp_port:
        argv += ["--umad-port", str(udp_port)]
    else:
        argv += ["--umad-socket", socket_name or f"ibvp-{os.getpid()}-{time.monotonic_ns() % 10**9}"]
    if host:
        argv += ["--umad-host", host]
    if timeout:
        argv += ["--umad-timeout", timeout]
    for o in overrides:
        argv += ["--set", o]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stderr: list[str] = []
    threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True).start()
    ready: list[str] = []

    def read_stdout() -> None:
        for line in proc.stdout:
            if line.startswith(READY):
                ready.append(line[len(READY):].strip())
    threading.Thread(target=read_stdout, daemon=True).start()
    deadline = time.monotonic() + start_timeout
    while not ready:
        if proc.poll() is not None or time.monotonic() > deadline:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            time.sleep(0.1)  # let the reader collect the message
            raise RuntimeError(f"ibvp-sim --serve-umad did not start (status {proc.returncode}): {''.join(stderr)}")
        time.sleep(0.02)
    # "IBSIM_SOCKNAME=x SIM_HOST=h ibsim-run ibnetdiscover": the assignments before the command.
    env = dict(w.split("=", 1) for w in ready[0].split() if "=" in w)
    return UmadServer(proc, env, Path(out), stderr)
