"""Seed 002 (Alfaro, Sanchez, Duato): what the paper states about QoS and the packet size,
asserted on its configs (configs/seed002/) shrunk to run in seconds: 8 switches (32 hosts)
instead of 16, 20 ms measured after a 5 ms warm-up instead of 1 s. The admission is the
paper's (Table 1's SLs, 80 % reservable, requests until 1000 in a row are refused); only
the fabric and the measured span are smaller. docs/seed002.md has the full-size numbers.

The paper (Sec. 4.3): utilization is "close to the maximum utilization achievable" of 80 %;
"achieved utilization grows for larger packet size ... with a larger packet size more
connections are established"; "delivered traffic is equal to injected traffic"; "all
packets of all SLs arrive at their destinations before their deadlines expire"; "even the
packets of the worst connection arrive at their destination before their deadline"."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("IBVP_BUILD", ROOT / "build"))
SMALL = ("topology.switches=8", "duration=25ms", "warmup=5ms", "outputs.rank_min_packets=5",
         "outputs.progress_interval=0")


def run(size: int, out: Path) -> dict:
    args = [str(BUILD / "ibvp-sim"), str(ROOT / "configs/seed002" / f"table2_{size}.yaml"), "--out", str(out),
            "--quiet"]
    for o in SMALL:
        args += ["--set", o]
    subprocess.run(args, check=True)
    return json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[dict, Path]]:
    out = {}
    for size in (256, 2048):
        d = tmp_path_factory.mktemp(f"table2_{size}")
        out[size] = (run(size, d), d)
    return out


@pytest.mark.parametrize("size", [256, 2048])
def test_reservation_stays_within_the_reservable_80_percent_and_comes_near_it(runs, size):
    a = runs[size][0]["admission"]
    for group in ("host_interfaces", "switch_ports"):
        assert a[group]["max_fraction"] <= 0.8
    # Table 2 reserves 74-76 % of its links at the hosts; a fabric whose tables or admission
    # wasted room would stop well below.
    assert a["host_interfaces"]["mean_fraction"] > 0.65


@pytest.mark.parametrize("size", [256, 2048])
def test_utilization_is_near_but_under_the_80_percent_reservable(runs, size):
    t = runs[size][0]["traffic"]
    assert 0.65 < t["host_utilization"] < 0.8
    assert 0.6 < t["switch_port_utilization"] < 0.8


@pytest.mark.parametrize("size", [256, 2048])
def test_delivered_traffic_equals_injected_traffic(runs, size):
    t = runs[size][0]["traffic"]
    inj, dlv = t["injected_bytes_per_cycle_per_node"], t["delivered_bytes_per_cycle_per_node"]
    assert abs(inj - dlv) / inj < 0.01


def test_larger_packets_establish_more_connections_and_carry_more_payload(runs):
    """The paper's reason: a header weighs less in a larger packet. Admission counts wire
    bytes, so the same links carry more connections' payload. (On the 16-switch fabric the
    links' wire utilization stays flat across sizes; docs/seed002.md.)"""
    small, large = runs[256][0], runs[2048][0]
    assert large["admission"]["established"] > small["admission"]["established"]
    assert (large["admission"]["host_interfaces"]["mean_payload_bps"] >
            1.03 * small["admission"]["host_interfaces"]["mean_payload_bps"])


@pytest.mark.parametrize("size", [256, 2048])
def test_every_packet_of_every_admitted_connection_meets_its_deadline(runs, size):
    c = runs[size][0]["connections"]
    assert c["packets"] > 10_000  # enough packets to mean something
    assert c["late"] == 0 and c["all_met_deadline"] is True
    for sl in c["service_levels"]:
        assert sl["late"] == 0, f"SL {sl['sl']}"


def test_the_worst_connection_of_each_strict_sl_meets_its_deadline_with_room(runs):
    """Fig. 5: the best and worst connections of SLs 0-3 at D/100. Even the worst one's
    packets all arrive within half of D here: the table treats the connections of an SL
    alike, so none is starved near its bound. 256-byte packets only: in 20 ms a 2048-byte
    connection of these SLs (at most 1.55 Mb/s) sends 2 packets, too few to rank."""
    size = 256
    import pandas as pd

    summary, out = runs[size]
    conns = pd.read_parquet(out / "connections.parquet")
    ranked = 0
    for sl in summary["connections"]["service_levels"]:
        if sl["sl"] > 3 or sl["best_worst"] is None:
            continue
        ranked += 1
        for who in ("best", "worst"):
            row = conns.iloc[sl["best_worst"][who]]
            assert row["sl"] == sl["sl"]
            assert row["delivered"] >= 5
            assert row["within_1D"] == row["delivered"], f"SL {sl['sl']} {who}"
            assert row["within_0.5D"] == row["delivered"], f"SL {sl['sl']} {who}"
        assert sl["best_worst"]["best_fraction"] >= sl["best_worst"]["worst_fraction"]
    assert ranked >= 3
