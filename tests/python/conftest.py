"""Shared fixtures of the Python tests.

The tests of the ibvp package (test_api_*, test_cli_*) run against the package installed in
.venv by `make`. Without the compiled extension they fail, each with the same message saying
what to do; nothing is skipped.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# With no installed package, use the sources, so that the missing extension (not a missing
# module) is what the failure reports.
if importlib.util.find_spec("ibvp") is None:
    sys.path.insert(0, str(ROOT / "bindings" / "python"))

try:
    importlib.import_module("ibvp._core")
    _CORE_PROBLEM = None
except ImportError as e:
    _CORE_PROBLEM = (f"ibvp._core cannot be imported ({e}). Run `make` at the repository root: it builds the "
                     "extension and installs the ibvp package into .venv; then run .venv/bin/python -m pytest "
                     "tests/python")


@pytest.fixture(autouse=True)
def _needs_core(request: pytest.FixtureRequest) -> None:
    if _CORE_PROBLEM and request.module.__name__.split(".")[-1].startswith(("test_api_", "test_cli_")):
        pytest.fail(_CORE_PROBLEM, pytrace=False)


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def minimal_yaml() -> Path:
    """One switch, four hosts, two flows into h3, 2 ms: runs in well under a second."""
    return ROOT / "configs" / "examples" / "minimal.yaml"


def ring_document(duration: str = "50ms", bystander: bool = False) -> dict:
    """Five switches in a ring, one host each, every host sending two hops clockwise: the
    min-hop routes are unique and their channel dependencies close a cycle, so the fabric
    deadlocks (tests/fabric/test_deadlock_determinism.cpp builds the same in C++). With
    `bystander`, hosts x and y on s0 and a flow x -> y that no ring path crosses: it keeps
    moving while the ring is deadlocked (tests/fabric/test_deadlock_watch.cpp)."""
    switches = [f"s{k}" for k in range(5)]
    hosts = [f"h{k}" for k in range(5)]
    links = [[f"h{k}", f"s{k}/3"] for k in range(5)]
    links += [[f"s{k}/1", f"s{(k + 1) % 5}/2"] for k in range(5)]
    flows = [{"name": f"f{k}", "src": f"h{k}", "dst": f"h{(k + 2) % 5}"} for k in range(5)]
    if bystander:
        hosts += ["x", "y"]
        links += [["x", "s0/4"], ["y", "s0/5"]]
        flows.append({"name": "bystander", "src": "x", "dst": "y"})
    return {
        "name": "ring5",
        "duration": duration,
        "deadlock_timeout": "1ms",
        "routing": "minhop",
        "topology": {"inline": {"switches": [{"name": s, "ports": 5 if bystander else 3} for s in switches],
                                "hosts": hosts, "links": links}},
        "flows": flows,
    }


@pytest.fixture
def ring() -> dict:
    return ring_document()


@pytest.fixture
def partial_ring() -> dict:
    return ring_document(bystander=True)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture):
    """Runs `ibvp ARGS...` in this process: returns (exit status, stdout, stderr)."""
    from ibvp.cli import main

    def invoke(*args: str) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return invoke
