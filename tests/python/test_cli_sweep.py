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


def test_vary_from_a_variants_file_applies_each_bundle_and_shows_its_name(cli, minimal_yaml: Path,
                                                                          tmp_path: Path) -> None:
    # A bundle sets several keys at once (seed 000's routing schemes); the table shows its name.
    schemes = tmp_path / "schemes.yaml"
    schemes.write_text("slow:\n  flows[0].load: 0.1\n  switch.request_order: fifo\n"
                       "fast:\n  flows[0].load: 0.6\n  switch.request_order: fifo_bypass\n")
    out_dir = tmp_path / "sweep"
    code, out, err = cli("sweep", minimal_yaml, "--set", "duration=500us", "--vary", f"scheme=@{schemes}",
                         "--vary", "switch.bypass_limit=0,4", "--out", out_dir)
    assert code == 0, err
    rows = _rows(out_dir / "sweep.csv")
    assert [(r["scheme"], r["switch.bypass_limit"]) for r in rows] == [
        ("slow", "0"), ("slow", "4"), ("fast", "0"), ("fast", "4")]
    import json
    f1 = {(r["scheme"], r["switch.bypass_limit"]):
          json.loads((out_dir / r["point"] / "summary.json").read_text())["flows"][0]["delivered"] for r in rows}
    # The bundle's load reached the run: flow f1 offered six times as much delivers over 3x.
    assert f1[("fast", "0")] > 3 * f1[("slow", "0")]
    assert "scheme=fast" in rows[2]["point"]

    code, _out, err = cli("sweep", minimal_yaml, "--vary", f"scheme=@{schemes}:fast", "--set", "duration=500us",
                          "--out", tmp_path / "one")
    assert code == 0, err
    assert [r["scheme"] for r in _rows(tmp_path / "one" / "sweep.csv")] == ["fast"]


def test_bad_variants_file_exits_2_naming_the_file_and_the_fix(cli, minimal_yaml: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("SPF: minhop\n")
    code, _out, err = cli("sweep", minimal_yaml, "--vary", f"scheme=@{bad}", "--out", tmp_path / "s")
    assert code == 2
    assert str(bad) in err and "variant SPF" in err and "routing: minhop" in err
    code, _out, err = cli("sweep", minimal_yaml, "--vary", f"scheme=@{tmp_path / 'missing.yaml'}",
                          "--out", tmp_path / "s2")
    assert code == 2 and "missing.yaml" in err and "cannot read" in err
    bad.write_text("A:\n  flows[0].load: 0.2\n")
    code, _out, err = cli("sweep", minimal_yaml, "--vary", f"scheme=@{bad}:B", "--out", tmp_path / "s3")
    assert code == 2 and "B not in" in err
