"""seed 002's connection results from Python: Results.connections / service_levels, and the
`ibvp plot` kinds deadline (Fig. 3), jitter (Fig. 4) and best_worst (Fig. 5).

The connection manager and its sources are another module; until a scenario can run CBR
connections, the plots are drawn from a results directory laid out as ibvp-sim writes it
(the columns of platform/metrics/report.cpp, tests/fabric/test_connection_results.cpp)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import ibvp

PNG = b"\x89PNG\r\n\x1a\n"
THRESHOLDS = ["0.01D", "0.02D", "0.05D", "0.1D", "0.2D", "0.5D", "1D"]
IATS = ["lt_0.5", "0.5_0.75", "0.75_0.9", "0.9_0.95", "0.95_1.05", "1.05_1.1", "1.1_1.25", "1.25_1.5", "ge_1.5"]


def _check_figure(base: Path) -> None:
    assert base.with_suffix(".png").read_bytes().startswith(PNG)
    assert "<svg" in base.with_suffix(".svg").read_text()


@pytest.fixture
def conn_dir(tmp_path: Path) -> Path:
    import pandas as pd

    # SLs 0..4, two connections each; connection 2k is the best of SL k, 2k + 1 the worst.
    rows = []
    for c in range(10):
        sl, worst = c // 2, c % 2
        within = [min(100, 40 + 10 * k - 20 * worst) for k in range(len(THRESHOLDS))]
        row = {"connection": c, "src": "h1", "dst": "h2", "sl": sl, "hops": 3, "distance": 2, "payload_bytes": 256,
               "bandwidth_bps": 1_000_000, "reserved_bps": 1_100_000, "interval_ns": 2_048_000.0,
               "deadline_ns": 50_000.0, "delivered": 100}
        row.update({f"within_{t}": w for t, w in zip(THRESHOLDS, within)})
        row["late"] = 0
        row.update({f"iat_{i}": (99 if i == "0.95_1.05" else 0) for i in IATS})
        row.update({"delay_mean_ns": 900.0, "delay_max_ns": 4000.0})
        rows.append(row)
    conns = pd.DataFrame(rows)
    conns.to_csv(tmp_path / "connections.csv", index=False)
    sls = []
    for sl in range(5):
        part = conns[conns["sl"] == sl]
        row = {"sl": sl, "connections": 2, "measured_connections": 2, "packets": 200, "late": 0}
        row.update({f"within_{t}": part[f"within_{t}"].sum() / 200 for t in THRESHOLDS})
        row["iat_samples"] = 198
        row.update({f"iat_{i}": part[f"iat_{i}"].sum() / 198 for i in IATS})
        row.update({"delay_mean_ns": 900.0, "delay_max_ns": 4000.0, "best_connection": 2 * sl,
                    "best_fraction": part["within_0.01D"].max() / 100, "worst_connection": 2 * sl + 1,
                    "worst_fraction": part["within_0.01D"].min() / 100})
        sls.append(row)
    pd.DataFrame(sls).to_csv(tmp_path / "service_levels.csv", index=False)
    (tmp_path / "summary.json").write_text(json.dumps({"scenario": "seed002", "sim_seconds": 1.0,
                                                       "packets": {"injected": 1000, "delivered": 1000}}))
    return tmp_path


def test_results_read_the_connection_tables(conn_dir: Path) -> None:
    r = ibvp.Results(conn_dir)
    assert list(r.connections["connection"]) == list(range(10))
    assert r.connections["src"].iloc[0] == "h1"
    sl = r.service_levels.set_index("sl")
    assert sl.loc[3, "best_connection"] == 6 and sl.loc[3, "worst_connection"] == 7
    assert sl.loc[0, "within_1D"] == pytest.approx(0.9)  # (100 + 80) / 200


@pytest.mark.parametrize("kind", ["deadline", "jitter", "best_worst"])
def test_each_connection_plot_kind_draws_a_figure(cli, conn_dir: Path, kind: str) -> None:
    code, out, err = cli("plot", conn_dir, "--kind", kind)
    assert code == 0, err
    assert out.split() == [str(conn_dir / f"{kind}.{ext}") for ext in ("png", "svg")]
    _check_figure(conn_dir / kind)


def test_best_worst_draws_the_chosen_sls_and_refuses_an_sl_without_connections(cli, conn_dir: Path) -> None:
    code, _out, err = cli("plot", conn_dir, "--kind", "best_worst", "--sls", "4", "--out", conn_dir / "bw4")
    assert code == 0, err
    _check_figure(conn_dir / "bw4")
    code, _out, err = cli("plot", conn_dir, "--kind", "best_worst", "--sls", "9")
    assert code == 2 and "SL 9" in err
    code, _out, err = cli("plot", conn_dir, "--kind", "deadline", "--sls", "x")
    assert code == 2 and "--sls" in err


def test_a_run_without_connections_has_table2_traffic_and_no_connection_tables(cli, minimal_yaml: Path,
                                                                               tmp_path: Path) -> None:
    r = ibvp.run(ibvp.Scenario.from_yaml(minimal_yaml), tmp_path / "run", timeout=120)
    assert r.summary["stopped_by"] == "duration"
    assert r.summary["connections"] is None
    traffic = r.summary["traffic"]
    assert traffic["hosts"] == 4
    assert 0 < traffic["host_utilization"] <= 1
    # Bytes per cycle and busy time agree (a port sends at its data rate), up to each
    # packet's serialization time rounded up to a whole ps (0.25 ps per byte on 4X QDR).
    assert traffic["injected_bytes_per_cycle_per_node"] == pytest.approx(traffic["host_utilization"], rel=1e-2)
    with pytest.raises(FileNotFoundError, match="connections section"):
        r.connections
    code, _out, err = cli("plot", r.out_dir, "--kind", "deadline")
    assert code == 2 and "connections section" in err


def test_the_warmup_slice_that_reads_table2s_counters_changes_no_packet(minimal_yaml: Path, tmp_path: Path) -> None:
    # The runner ends one extra kernel slice at the warm-up to read the port counters; the
    # simulation must not notice: every packet is the same, only the measured span differs.
    sc = ibvp.Scenario.from_yaml(minimal_yaml).set("outputs.packets_csv", True)
    a = ibvp.run(sc.set("warmup", "0s"), tmp_path / "a", timeout=120)
    b = ibvp.run(sc.set("warmup", "333us"), tmp_path / "b", timeout=120)
    assert (tmp_path / "a" / "packets.csv").read_bytes() == (tmp_path / "b" / "packets.csv").read_bytes()
    assert a.summary["packet_hops"] == b.summary["packet_hops"]
    assert a.summary["traffic"]["span_seconds"] == pytest.approx(b.summary["traffic"]["span_seconds"] + 333e-6)
