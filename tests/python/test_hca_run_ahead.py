"""The HCA's embedded core runs ahead of the kernel's time while nothing else is pending
(docs/hca.md, "Execution model"); with event_order canonical it never does and sleeps at every
HAL call. The host programs run ahead the same way through their verbs calls, and the tx
engine starts at a tx_post inside the HAL call when nothing else is pending. Between two hosts
back to back, perftest's runs give the same results, byte for byte, in both orders; a core
that ran ahead and stamped or pushed anything at the kernel's time instead of its own would
move a latency or a rate (the firmware's events are microseconds apart while a HAL call is
10 ns)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("IBVP_BUILD", ROOT / "build"))


def run(config: str, out: Path, *sets: str) -> Path:
    args = [str(BUILD / "ibvp-sim"), str(ROOT / "configs/perftest" / f"{config}.yaml"), "--out", str(out), "--quiet"]
    for s in sets:
        args += ["--set", s]
    subprocess.run(args, check=True, capture_output=True)
    return out


def results(out: Path) -> dict[str, object]:
    """Every result file but run.json (wall clock), summary.json without its wall-clock field."""
    files: dict[str, object] = {}
    for p in sorted(out.iterdir()):
        if p.name == "run.json" or not p.is_file():
            continue
        if p.name == "summary.json":
            files[p.name] = {k: v for k, v in json.loads(p.read_text()).items() if k != "wall_seconds"}
        else:
            files[p.name] = p.read_bytes()
    return files


# read_bw and send_bw: the tx engine waits for payload read slots (kTxResume) and starts at
# a tx_post inside the HAL call; the host programs run ahead through their verbs calls.
@pytest.mark.parametrize("config", ["send_lat", "write_bw", "read_bw", "send_bw"])
def test_a_core_that_runs_ahead_gives_the_results_of_one_that_sleeps(config: str, tmp_path: Path) -> None:
    sizes = ("perftest.max_bytes=65536",)
    ahead = run(config, tmp_path / "fifo", *sizes, "event_order=fifo")
    asleep = run(config, tmp_path / "canonical", *sizes, "event_order=canonical")
    assert results(ahead) == results(asleep)
    # Not vacuous: running ahead skipped most of the sleeps (each one a Scheduler action).
    served = {d.name: json.loads((d / "run.json").read_text())["events"] for d in (ahead, asleep)}
    assert served["fifo"] < 0.8 * served["canonical"]
