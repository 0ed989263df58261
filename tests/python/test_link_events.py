"""A link that goes down during a run (issue 16, docs/management.md "A link that goes down"):
the committed example from Python and the CLI, its report in summary.json, link_events.csv
and the command line, determinism, out-of-band runs, and refusals that name the key."""
from __future__ import annotations

from pathlib import Path

import ibvp

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "configs" / "examples" / "inband_link_down.yaml"


def test_the_example_traps_reroutes_and_reports_what_the_cable_lost(tmp_path: Path) -> None:
    res = ibvp.run(EXAMPLE, tmp_path / "out", timeout=120)
    sm = res.subnet_manager
    assert sm["up"] and sm["error"] is None
    (e,) = sm["link_events"]
    assert e["link"] == "s0_0/3" and e["state"] == "down" and e["happened"]
    assert e["ends"][0] == "s0_0/3"
    # Causal order: the event, the switch's trap, the SM reading it, the last LFT Set answered.
    assert sm["up_us"] < e["at_us"] < e["trap_sent_us"] < e["trap_received_us"] < e["recovered_us"]
    assert abs(e["recovery_us"] - (e["recovered_us"] - e["at_us"])) < 1e-6
    assert e["sweeps"] >= 1 and e["sweep_smps"] > 0
    # OpenSM's resweep writes only the LFT blocks that changed.
    assert 0 < e["lft_blocks_set"] < e["lft_blocks_compared"]
    assert e["unreachable"] == [] and e["sweep_error"] is None
    # Every packet dropped in the run was the cable's, all before the recovery.
    drops = res.summary["drops"]
    assert e["lost"] > 0 and drops == {"link_down": e["lost"]}
    assert e["lost_to_recovery"] == e["lost"] and e["unroutable"] == 0
    p = res.summary["packets"]
    assert p["injected"] == p["delivered"] + p["dropped"] + p["in_flight"]
    # The same row as a table.
    row = res.link_events.iloc[0]
    assert row["link"] == "s0_0/3" and row["lost"] == e["lost"]
    assert abs(row["recovery_us"] - e["recovery_us"]) < 1e-6
    # Every flow keeps delivering.
    assert (res.flows["delivered"] > 0).all()


def test_two_runs_lose_the_same_packets_and_recover_at_the_same_time(tmp_path: Path) -> None:
    a = ibvp.run(EXAMPLE, tmp_path / "a", timeout=120)
    b = ibvp.run(EXAMPLE, tmp_path / "b", timeout=120)
    assert a.subnet_manager == b.subnet_manager
    assert (tmp_path / "a" / "link_events.csv").read_bytes() == (tmp_path / "b" / "link_events.csv").read_bytes()


def test_the_cli_prints_the_link_event(cli, tmp_path: Path) -> None:
    code, out, err = cli("run", EXAMPLE, "--out", tmp_path)
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("link event: s0_0/3 down"))
    assert "rerouted" in line and "lost" in line


def test_out_of_band_the_cable_drops_its_traffic_and_nothing_reroutes(tmp_path: Path) -> None:
    sc = ibvp.Scenario.from_yaml(EXAMPLE).set("subnet_manager.mode", "out_of_band")
    res = ibvp.run(sc, tmp_path / "out", timeout=120)
    (e,) = res.subnet_manager["link_events"]
    assert res.subnet_manager["mode"] == "out_of_band"
    assert e["trap_sent_us"] is None and e["recovered_us"] is None and e["sweeps"] == 0
    assert e["lost"] > 0 and e["lost"] == e["lost_to_recovery"]
    # With reroute_delay the tables without the cable are loaded that long after the event.
    res = ibvp.run(sc.copy().set("subnet_manager.reroute_delay", "100us"), tmp_path / "rr", timeout=120)
    (r,) = res.subnet_manager["link_events"]
    assert abs(r["recovery_us"] - 100.0) < 1e-6 and r["lft_blocks_set"] > 0
    assert 0 < r["lost"] < e["lost"] and r["lost_to_recovery"] == r["lost"]


def test_a_link_event_on_a_node_that_does_not_exist_is_refused_naming_the_key(cli, tmp_path: Path) -> None:
    code, out, err = cli("run", EXAMPLE, "--set", "link_events=[{at: 1us, link: nosuch/1, state: down}]",
                         "--out", tmp_path, "--quiet")
    assert code == 2
    assert "link_events[0].link" in err and "nosuch" in err and "fix:" in err
