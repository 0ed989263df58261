"""ibvp-sim's exit status for the deadlock watch (docs/architecture.md, Deadlock): 3 for a
credit cycle even while other traffic moves, 2 for a deadlock_timeout under its floor."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("IBVP_BUILD", ROOT / "build"))


def run_sim(*args: str | Path) -> subprocess.CompletedProcess:
    sim = BUILD / "ibvp-sim"
    assert sim.exists(), f"{sim} missing: run `make` first"
    return subprocess.run([str(sim), *map(str, args), "--quiet"], capture_output=True, text=True, timeout=120)


def test_partial_deadlock_exits_3_naming_the_cycle_and_writes_stuck(partial_ring: dict, tmp_path: Path) -> None:
    scenario = tmp_path / "ring.yaml"
    scenario.write_text(json.dumps(partial_ring))  # YAML reads JSON
    done = run_sim(scenario, "--out", tmp_path / "out")
    assert done.returncode == 3, done.stderr
    assert "deadlock detected" in done.stderr
    assert "s0/1 VL0 -> s1/1 VL0 -> s2/1 VL0 -> s3/1 VL0 -> s4/1 VL0 -> s0/1 VL0" in done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["deadlock"] and summary["stuck"]["packets"] > 0
    assert {w["port"] for w in summary["stuck"]["worst"]} == {f"s{k}/1" for k in range(5)}


def test_timeout_under_one_packet_time_exits_2_naming_the_key(minimal_yaml: Path, tmp_path: Path) -> None:
    done = run_sim(minimal_yaml, "--set", "deadlock_timeout=100ns", "--out", tmp_path)
    assert done.returncode == 2
    assert "deadlock_timeout" in done.stderr and "at least 1041ns" in done.stderr


def test_healthy_run_exits_0_with_no_stuck_packets(minimal_yaml: Path, tmp_path: Path) -> None:
    done = run_sim(minimal_yaml, "--set", "deadlock_timeout=1041ns", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["deadlock"] is None and summary["stuck"] is None
