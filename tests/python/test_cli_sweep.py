"""`ibvp sweep`: a 2x2 cross product into sweep.csv, a failing point reported (exit status 1)
while the others succeed, and a rerun that skips the points already done."""
from __future__ import annotations

import csv
from pathlib import Path


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_sweep_2x2(cli, minimal_yaml: Path, tmp_path: Path) -> None:
    code, out, err = cli("sweep", minimal_yaml, "--set", "duration=500us", "--vary", "switch.bypass_limit=0,4",
                         "--vary", "flows[0].load=0.2,0.5", "--jobs", "2", "--out", tmp_path)
    assert code == 0, err
    rows = _rows(tmp_path / "sweep.csv")
    assert len(rows) == 4 and {r["status"] for r in rows} == {"ok"}
    assert {(r["switch.bypass_limit"], r["flows[0].load"]) for r in rows} == {
        ("0", "0.2"), ("0", "0.5"), ("4", "0.2"), ("4", "0.5")}
    assert "4 of 4 points done" in out
    assert err.count(": ok, delivered") == 4


def test_failing_point_is_reported_and_rerun_skips_done_points(cli, minimal_yaml: Path, tmp_path: Path) -> None:
    args = ("sweep", minimal_yaml, "--set", "duration=500us", "--vary", "switch.bypass_limit=2,999",
            "--vary", "flows[1].payload_bytes=1024,2048", "--out", tmp_path)
    code, out, err = cli(*args)
    assert code == 1  # some point failed
    rows = _rows(tmp_path / "sweep.csv")
    assert len(rows) == 4
    status = {(r["switch.bypass_limit"], r["flows[1].payload_bytes"]): r["status"] for r in rows}
    assert status == {("2", "1024"): "ok", ("2", "2048"): "ok",
                      ("999", "1024"): "config_error", ("999", "2048"): "config_error"}
    assert "2 of 4 points done" in out
    assert "failed (config_error)" in err and "0..255" in err

    code, out, err = cli(*args)
    assert code == 1
    assert err.count("done before, skipped") == 2
    assert len(_rows(tmp_path / "sweep.csv")) == 4


def test_bad_vary_option_exits_2(cli, minimal_yaml: Path, tmp_path: Path) -> None:
    code, _out, err = cli("sweep", minimal_yaml, "--vary", "switch.bypass_limit", "--out", tmp_path)
    assert code == 2 and "KEY=VALUE1" in err
