"""ibvp: the Python side of the InfiniBand fabric virtual platform.

    import ibvp
    sc = ibvp.Scenario.from_yaml("configs/examples/minimal.yaml")
    sc.set("switch.request_order", "fifo_bypass")
    res = ibvp.run(sc, "out/minimal", progress=True)   # a fresh child process per run
    res.flows                                           # pandas DataFrame

Scenarios (Scenario, schema, reference), runs (run, Results), sweeps (sweep), saturation
searches (saturate, ibvp.saturation), topology
summaries (topology_summary), ibnetdiscover export (export_ibnetdiscover), plots (ibvp.plots), a
fabric served to OpenSM and infiniband-diags (serve_umad) and the `ibvp` command (ibvp.cli).
See docs/python.md.

Names are imported on first use (PEP 562): `python -m ibvp._worker`, which runs every
simulation, imports this package too and must start without pandas or matplotlib.
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "Scenario", "run", "Results", "sweep", "variants", "Variant", "saturate", "schema", "reference", "version",
    "topology_summary",
    "export_ibnetdiscover", "write_trace", "serve_umad", "ConfigError", "DeadlockError", "SimulationError", "RunTimeout", "KernelUsedError",
]

_WHERE = {
    "Scenario": "scenario", "run": "runner", "write_trace": "runner", "Results": "results",
    "sweep": "sweeps", "variants": "sweeps", "Variant": "sweeps", "saturate": "saturation", "schema": "info",
    "reference": "info", "version": "info",
    "topology_summary": "info", "export_ibnetdiscover": "info", "ConfigError": "errors", "DeadlockError": "errors",
    "SimulationError": "errors", "RunTimeout": "errors", "KernelUsedError": "errors",
    "serve_umad": "umad",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ibvp' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
