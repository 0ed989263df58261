"""configs/examples/control.yaml through ibvp.run: control traffic (docs/control.md) is one
flow per sender in the flows table and a class of its own in summary.json; a run without a
control section has no `control` key."""
from __future__ import annotations

from pathlib import Path

import ibvp

ROOT = Path(__file__).resolve().parents[2]


def test_control_example_reports_the_control_class(tmp_path: Path) -> None:
    # 210 ms at one packet per 1/30 s: packets at 0, 1/30, ..., 6/30 s from each of 8 hosts.
    sc = ibvp.Scenario.from_yaml(ROOT / "configs" / "examples" / "control.yaml").set("duration", "210ms")
    res = ibvp.run(sc, tmp_path / "out", timeout=300)
    control = res.flows[res.flows["name"].str.startswith("control/")]
    assert len(control) == 8
    assert (control["dst"] == "*uniform").all()
    assert (control["injected"] == 7).all()
    total = res.summary["control"]
    assert total["senders"] == 8 and total["sent"] == 56 and total["payload_bytes"] == 256
    assert total["delivered"] + total["dropped_vl15_overflow"] + total["in_flight"] == total["sent"]
    assert total["delivered"] == control["delivered"].sum()
    # VL15 goes first: control packets wait less than the best-effort data around them.
    data = res.flows[res.flows["name"].str.startswith("traffic/")]
    assert 0 < total["latency_ns"]["mean"] <= total["latency_ns"]["max"]
    assert total["latency_ns"]["mean"] < data["latency_mean_ns"].min()


def test_a_run_without_control_has_no_control_key(tmp_path: Path) -> None:
    sc = ibvp.Scenario.from_yaml(ROOT / "configs" / "examples" / "minimal.yaml").set("duration", "200us")
    res = ibvp.run(sc, tmp_path / "out", timeout=300)
    assert "control" not in res.summary
