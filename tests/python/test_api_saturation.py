"""ibvp.saturate: bisection on traffic.load to the highest sustained load, all probes in one
table, Table 1's factors between two routings, and refusals of what cannot be searched."""
from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import ibvp
from ibvp import saturation


def _base(switches: int = 8) -> ibvp.Scenario:
    return ibvp.Scenario({
        "name": "sat", "seed": 1, "duration": "120us", "warmup": "30us", "routing": "updn",
        "topology": {"generator": "random_irregular", "switches": switches, "seed": 1},
        "switch": {"vl_buffer_bytes": 1024, "request_order": "fifo"}, "endpoint": {"vl_buffer_bytes": 1024},
        "traffic": {"pattern": "uniform", "generator": "poisson", "load": 0.05, "payload_bytes": 32},
        "outputs": {"packets_csv": False}})


def test_bisection_stops_within_resolution_of_a_threshold(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A stand-in fabric that sustains every load up to 0.3: the search brackets 0.3 and the
    # bracket's width ends at most resolution x its top.
    threshold = 0.3

    def fake(sc, load, out_dir, *, hosts, switches, tolerance, timeout=None):
        accepted = min(load, threshold) * (1.0 if load <= threshold else 0.5)
        return {"load": load, "status": "ok", "error": "", "dir": str(out_dir), "sustained": load <= threshold,
                "offered_bytes_per_cycle_per_node": load, "accepted_bytes_per_cycle_per_node": accepted,
                "accepted_flits_per_cycle_per_switch": accepted * hosts / switches,
                "accepted_bytes_per_ns_per_switch": accepted * hosts / switches / 4}

    monkeypatch.setattr(saturation, "run_probe", fake)
    res = ibvp.saturate(_base(), {"routing": ["updn", "dfs"]}, tmp_path, resolution=0.02, jobs=1)
    for row in res.searches.to_dict("records"):
        assert row["status"] == "ok" and row["saturated"]
        assert row["saturation_load"] <= threshold < row["unsustained_load"]
        assert row["unsustained_load"] - row["saturation_load"] <= 0.02 * row["unsustained_load"]
        # 8 switches of 4 hosts: flits/cycle/switch = 4 x bytes/cycle/node.
        assert row["throughput_flits_per_cycle_per_switch"] == pytest.approx(4 * row["saturation_load"])
    assert len(res.points) == res.searches["probes"].sum()
    assert set(res.points["search"]) == set(res.searches["search"])


def test_a_fabric_that_sustains_the_top_of_the_bracket_is_reported_unsaturated(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def fake(sc, load, out_dir, *, hosts, switches, tolerance, timeout=None):
        return {"load": load, "status": "ok", "error": "", "dir": str(out_dir), "sustained": True,
                "accepted_flits_per_cycle_per_switch": load}

    monkeypatch.setattr(saturation, "run_probe", fake)
    res = ibvp.saturate(_base(), None, tmp_path, hi=0.2)
    row = res.searches.iloc[0]
    assert row["probes"] == 1 and not row["saturated"] and row["saturation_load"] == 0.2


def test_factors_are_min_max_and_mean_of_per_topology_ratios() -> None:
    searches = pd.DataFrame([
        {"routing": r, "topology.seed": s, "status": "ok", "saturated": True, saturation.VALUE: v}
        for r, s, v in [("updn", 1, 0.2), ("dfs", 1, 0.4), ("updn", 2, 0.5), ("dfs", 2, 0.5),
                        ("updn", 3, 0.1), ("dfs", 3, None)]])
    f = saturation.factors(searches, "dfs", "updn").iloc[0]
    assert (f["min"], f["max"], f["avg"]) == (1.0, 2.0, 1.5)
    assert (f["topologies"], f["left_out"]) == (3, 1)  # seed 3's dfs has no throughput


def test_a_real_search_finds_a_load_the_fabric_sustains_and_one_it_does_not(tmp_path: Path) -> None:
    res = ibvp.saturate(_base(), {"routing": ["updn"]}, tmp_path, hi=0.6, resolution=0.1, jobs=1,
                        compare=[("updn", "updn")])
    row = res.searches.iloc[0]
    assert row["status"] == "ok" and row["saturated"]
    probes = res.points
    sustained = probes[probes["sustained"].astype(bool)]
    assert (sustained["accepted_bytes_per_cycle_per_node"] >= 0.95 * sustained["load"]).all()
    top = probes[probes["load"] == row["unsustained_load"]].iloc[0]
    assert top["accepted_bytes_per_cycle_per_node"] < 0.95 * top["load"]
    for name in ("points", "saturation", "factors"):
        assert (tmp_path / f"{name}.csv").exists() and (tmp_path / f"{name}.parquet").exists()
    assert pd.read_parquet(tmp_path / "points.parquet").shape[0] == len(probes)
    assert res.factors.iloc[0]["avg"] == 1.0
    with open(tmp_path / "saturation.csv", newline="") as f:
        assert next(csv.DictReader(f))["routing"] == "updn"


def test_hotspots_are_drawn_from_the_fabric_seed_and_shared_by_every_routing(tmp_path: Path) -> None:
    sc = _base(16)
    a, b = sc.copy(), sc.copy()
    b.set("topology.seed", 2)
    assert saturation.hotspot_hosts(a, 4) == saturation.hotspot_hosts(sc.copy().set("routing", "dfs"), 4)
    assert saturation.hotspot_hosts(a, 4) != saturation.hotspot_hosts(b, 4)
    assert len(set(saturation.hotspot_hosts(a, 8))) == 8


def test_a_scenario_without_traffic_is_refused_naming_the_key(tmp_path: Path) -> None:
    sc = _base()
    del sc.data["traffic"]
    sc.data["flows"] = [{"src": "h0_1", "dst": "h1_1"}]
    with pytest.raises(ibvp.ConfigError) as e:
        ibvp.saturate(sc, None, tmp_path)
    assert e.value.key == "traffic" and "add a traffic section" in e.value.fix


def test_cli_refuses_a_malformed_compare_with_status_2(tmp_path: Path) -> None:
    path = tmp_path / "sat.yaml"
    _base().to_yaml(path)
    p = subprocess.run([sys.executable, "-m", "ibvp", "saturate", str(path), "--compare", "dfs", "--out",
                        str(tmp_path / "out")], capture_output=True, text=True)
    assert p.returncode == 2 and "--compare 'dfs'" in p.stderr and "A/B" in p.stderr


def test_link_balance_ranks_every_switch_to_switch_link_of_each_point(tmp_path: Path) -> None:
    from ibvp import link_balance

    sc = _base().set("traffic.load", 0.05)
    ibvp.sweep(sc, {"routing": ["updn", "dfs"]}, tmp_path, jobs=2)
    links = link_balance.link_utilization(tmp_path, switch_ports=4)
    # 8 switches, each with its 4 switch ports cabled (docs/topology.md): 32 transmit sides.
    assert links.groupby("point").size().tolist() == [32, 32]
    for _, part in links.groupby("point"):
        assert part["utilization"].is_monotonic_decreasing and part["rank"].tolist() == list(range(32))
        assert part["node"].str.startswith("sw").all() and (part["port"] <= 4).all()
    b = link_balance.balance(links)
    assert (b["max_over_mean"] >= 1).all()


def test_the_same_search_gives_the_same_table_bit_for_bit(tmp_path: Path) -> None:
    # Runs are deterministic (same config and seed), so the bisection takes the same steps.
    tables = []
    for k in range(2):
        res = ibvp.saturate(_base(), {"routing": ["dfs"]}, tmp_path / str(k), hi=0.5, resolution=0.1, jobs=1)
        tables.append(res.points.drop(columns=["dir"]))
    pd.testing.assert_frame_equal(tables[0], tables[1], check_exact=True)


def test_cli_saturate_prints_each_search_and_the_factors(tmp_path: Path) -> None:
    path = tmp_path / "sat.yaml"
    _base().to_yaml(path)
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "ibvp", "saturate", str(path), "--vary", "routing=updn,dfs",
                        "--topology-seeds", "2", "--compare", "dfs/updn", "--hi", "0.5", "--resolution", "0.2",
                        "--jobs", "2", "--out", str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "4 of 4 searches done" in p.stdout and "dfs  updn" in p.stdout
    table = pd.read_parquet(out / "saturation.parquet")
    assert sorted(zip(table["routing"], table["topology.seed"])) == [("dfs", 1), ("dfs", 2), ("updn", 1), ("updn", 2)]
    assert (out / "factors.csv").read_text().splitlines()[0] == "a,b,topologies,left_out,min,max,avg"
