"""ibvp.sweep: a cross product of values, one row and one directory per point; a failing
point is reported without losing the others; a rerun skips the points already done."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

import ibvp
from ibvp import sweeps


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _short(minimal_yaml: Path) -> ibvp.Scenario:
    return ibvp.Scenario.from_yaml(minimal_yaml).set("duration", "500us").set("warmup", "0s")


def test_sweep_2x2_writes_four_rows_and_a_rerun_skips_them(minimal_yaml: Path, tmp_path: Path) -> None:
    vary = {"flows[0].load": [0.2, 0.6], "switch.request_order": ["fifo", "fifo_bypass"]}
    df = ibvp.sweep(_short(minimal_yaml), vary, tmp_path, jobs=4)
    assert len(df) == 4 and (df["status"] == "ok").all()
    assert sorted(zip(df["flows[0].load"], df["switch.request_order"])) == [
        (0.2, "fifo"), (0.2, "fifo_bypass"), (0.6, "fifo"), (0.6, "fifo_bypass")]
    assert (df["delivered"] > 0).all() and df["latency_mean_ns"].notna().all()
    rows = _rows(tmp_path / "sweep.csv")
    assert len(rows) == 4
    assert list(rows[0])[:5] == ["flows[0].load", "switch.request_order", "point", "status", "error"]
    for row in rows:
        point = tmp_path / row["point"]
        assert (point / "done.json").exists() and (point / "summary.json").exists()
    # More offered load on flow f1, more delivered.
    low, high = (df[df["flows[0].load"] == x]["delivered"].sum() for x in (0.2, 0.6))
    assert high > low

    stamps = {r["point"]: (tmp_path / r["point"] / "summary.json").stat().st_mtime_ns for r in rows}
    reports: list[dict] = []
    again = ibvp.sweep(_short(minimal_yaml), vary, tmp_path, report=lambda row, n, total: reports.append(row))
    assert len(reports) == 4 and all(r.get("skipped") for r in reports)
    assert {r["point"]: (tmp_path / r["point"] / "summary.json").stat().st_mtime_ns for r in rows} == stamps
    assert list(again["delivered"]) == list(df["delivered"])


def test_failing_point_is_reported_and_the_others_succeed(minimal_yaml: Path, tmp_path: Path) -> None:
    vary = {"switch.bypass_limit": [2, 999], "flows[0].load": [0.2, 0.5]}
    df = ibvp.sweep(_short(minimal_yaml), vary, tmp_path, jobs=2)
    assert len(df) == 4
    bad = df[df["switch.bypass_limit"] == 999]
    good = df[df["switch.bypass_limit"] == 2]
    assert list(bad["status"]) == ["config_error", "config_error"]
    assert all("switch.bypass_limit" in e and "0..255" in e for e in bad["error"])
    assert list(good["status"]) == ["ok", "ok"] and (good["delivered"] > 0).all()
    for point in bad["point"]:
        assert (tmp_path / point / "failed.json").exists() and not (tmp_path / point / "done.json").exists()

    # A rerun skips what is done and tries the failed points again.
    reports: list[dict] = []
    ibvp.sweep(_short(minimal_yaml), vary, tmp_path, report=lambda row, n, total: reports.append(row))
    skipped = sorted(r["point"] for r in reports if r.get("skipped"))
    retried = sorted(r["point"] for r in reports if not r.get("skipped"))
    assert skipped == sorted(good["point"]) and retried == sorted(bad["point"])


def test_a_changed_base_scenario_runs_again(minimal_yaml: Path, tmp_path: Path) -> None:
    ibvp.sweep(_short(minimal_yaml), {"seed": [1, 2]}, tmp_path)
    reports: list[dict] = []
    ibvp.sweep(_short(minimal_yaml).set("duration", "400us"), {"seed": [1, 2]}, tmp_path,
               report=lambda row, n, total: reports.append(row))
    assert len(reports) == 2 and not any(r.get("skipped") for r in reports)


def test_point_names_are_readable_and_distinct() -> None:
    assert sweeps.point_name({"switch.bypass_limit": 2}) == "switch.bypass_limit=2"
    a = sweeps.point_name({"flows[0].load": 0.5})
    b = sweeps.point_name({"flows_0_.load": 0.5})
    assert a.startswith("flows_0_.load=0.5-") and a != b
    assert "/" not in sweeps.point_name({"outputs.rate_ports": ["sw/3"]})


def test_parse_vary_splits_only_top_level_commas() -> None:
    assert sweeps.parse_vary("switch.bypass_limit=0,4") == ("switch.bypass_limit", [0, 4])
    assert sweeps.parse_vary("outputs.rate_ports=[sw/1, sw/2],[sw/3]") == (
        "outputs.rate_ports", [["sw/1", "sw/2"], ["sw/3"]])
    assert sweeps.parse_vary("switch.pipeline_delay=40ns, 100ns") == ("switch.pipeline_delay", ["40ns", "100ns"])
    with pytest.raises(ValueError, match="KEY=VALUE1"):
        sweeps.parse_vary("switch.bypass_limit")


def test_sweep_on_a_dask_cluster(minimal_yaml: Path, tmp_path: Path) -> None:
    from distributed import LocalCluster

    # Workers in this process, reached over TCP as a remote scheduler would be.
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                      dashboard_address=None) as cluster:
        df = ibvp.sweep(_short(minimal_yaml), {"switch.bypass_limit": [0, 4], "flows[0].load": [0.2, 0.4]},
                        tmp_path, dask=cluster.scheduler_address)
    assert len(df) == 4 and (df["status"] == "ok").all()
    assert len(_rows(tmp_path / "sweep.csv")) == 4


def test_sweep_takes_a_cluster_object_or_a_client_and_leaves_them_open(minimal_yaml: Path, tmp_path: Path) -> None:
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        by_cluster = ibvp.sweep(_short(minimal_yaml), {"flows[0].load": [0.2, 0.4]}, tmp_path / "a", dask=cluster)
        with Client(cluster) as client:
            by_client = ibvp.sweep(_short(minimal_yaml), {"flows[0].load": [0.2, 0.4]}, tmp_path / "b",
                                   dask=client)
            # The caller's Client still serves work: the sweep borrowed it.
            assert client.status == "running" and client.submit(sum, [1, 2]).result() == 3
        assert cluster.status.name == "running"
    assert (by_cluster["status"] == "ok").all() and (by_client["status"] == "ok").all()
    # The same points wherever they ran: the results do not depend on the executor.
    assert list(by_cluster["delivered"]) == list(by_client["delivered"])
    with pytest.raises(TypeError, match="scheduler address"):
        ibvp.sweep(_short(minimal_yaml), {"flows[0].load": [0.2]}, tmp_path / "c", dask=42)


def test_sweep_gathers_every_points_tables_into_one_parquet_dataset(minimal_yaml: Path, tmp_path: Path) -> None:
    import pandas as pd

    vary = {"flows[0].load": [0.2, 0.6], "switch.request_order": ["fifo"], "switch.bypass_limit": [2, 999]}
    df = ibvp.sweep(_short(minimal_yaml), vary, tmp_path, jobs=2)
    ok = df[df["status"] == "ok"]
    assert len(ok) == 2  # bypass_limit 999 is refused: those points have no tables
    for table in ("flows", "ports", "rates"):
        data = pd.read_parquet(tmp_path / "dataset" / f"{table}.parquet")
        assert list(data.columns[:5]) == [*vary, "point", "status"]
        assert data["flows[0].load"].dtype == float and data["switch.bypass_limit"].dtype == "int64"
        assert set(data["point"]) == set(ok["point"]) and (data["status"] == "ok").all()
        for point, part in data.groupby("point", sort=False):
            own = pd.read_parquet(tmp_path / point / f"{table}.parquet")
            pd.testing.assert_frame_equal(part.iloc[:, 5:].reset_index(drop=True), own)
            params = df[df["point"] == point].iloc[0]
            assert (part["flows[0].load"] == params["flows[0].load"]).all()
    # The minimal scenario keeps no packets: no packets table in the dataset either.
    assert not (tmp_path / "dataset" / "packets.parquet").exists()


def test_sweep_csv_keeps_hostile_varied_values_in_their_column(minimal_yaml: Path, tmp_path: Path) -> None:
    import pandas as pd

    names = ["a\rb", 'c,"d"', "e\nf\tg"]
    df = ibvp.sweep(_short(minimal_yaml), {"flows[0].name": names}, tmp_path, jobs=2)
    assert (df["status"] == "ok").all()
    rows = _rows(tmp_path / "sweep.csv")
    assert [r["flows[0].name"] for r in rows] == names
    assert all(r["status"] == "ok" and int(r["delivered"]) > 0 for r in rows)
    flows = pd.read_parquet(tmp_path / "dataset" / "flows.parquet")
    assert list(flows[flows["flow"] == 0]["name"]) == names
