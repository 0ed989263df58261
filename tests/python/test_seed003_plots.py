"""`ibvp plot --kind control-split | phase-dmp` (seed 003 Figs. 5(a) and 9): drawn from a
sweep directory of runs with a mix, each point's phases table; the numbers are written
beside the figure. Made-up phases tables, so no simulation runs."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from ibvp import plots

PNG = b"\x89PNG\r\n\x1a\n"


def _sweep(tmp_path: Path, control: bool = True) -> Path:
    points = {"switch.flit.variant=traditional": 3.0, "switch.flit.variant=preemptive": 1.0}
    pd.DataFrame({"switch.flit.variant": ["traditional", "preemptive"], "point": list(points),
                  "status": ["ok", "ok"]}).to_csv(tmp_path / "sweep.csv", index=False)
    for point, q in points.items():
        (tmp_path / point).mkdir()
        (tmp_path / point / "summary.json").write_text('{"scenario": "fig5a"}')
        ph = pd.DataFrame({"phase": [0, 1], "real_time_percent": [20, 80], "best_effort_percent": [80, 20],
                           "rt_frames": [100, 400], "rt_dmp": [0.1 * q, 0.2 * q], "rt_dmt_ns": [1e6, 2e6],
                           "be_mean_latency_ns": [5e3, 6e3]})
        if control:
            ph["control_packets"] = [48, 48]
            ph["control_mean_queueing_ns"] = [q * 1000.0, q * 2000.0]
            ph["control_mean_network_ns"] = [2500.0, 2600.0]
            ph["control_mean_latency_ns"] = ph["control_mean_queueing_ns"] + ph["control_mean_network_ns"]
        ph.to_csv(tmp_path / point / "phases.csv", index=False)
    return tmp_path


def test_control_split_draws_each_points_phases_and_writes_their_numbers(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path)
    paths = plots.plot("control-split", sweep)
    assert (sweep / "control-split.png").read_bytes().startswith(PNG)
    assert sweep / "control-split.png" in paths
    table = pd.read_csv(sweep / "control-split.csv")
    assert list(table["label"].unique()) == ["traditional", "preemptive"]
    tr = table[table["label"] == "traditional"].sort_values("phase")
    assert list(tr["control_mean_queueing_ns"]) == [3000.0, 6000.0]
    assert list(tr["control_mean_network_ns"] + tr["control_mean_queueing_ns"]) == list(tr["control_mean_latency_ns"])


def test_phase_dmp_has_one_line_of_numbers_per_point(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path)
    plots.plot("phase-dmp", sweep)
    table = pd.read_csv(sweep / "phase-dmp.csv")
    assert len(table) == 4
    p = table[table["label"] == "preemptive"].sort_values("phase")
    assert list(p["rt_dmp"]) == pytest.approx([0.1, 0.2])


def test_control_split_of_runs_without_the_split_names_the_missing_columns(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path, control=False)
    with pytest.raises(ValueError, match="control_mean_queueing_ns"):
        plots.plot("control-split", sweep)
