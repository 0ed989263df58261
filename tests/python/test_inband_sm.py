"""The in-band subnet manager from a scenario, the CLI and Python (issue 16,
docs/management.md): the committed example comes up by SMPs, its flows run after it, and a
scenario the SM cannot serve is refused naming the key."""
from __future__ import annotations

from pathlib import Path

import ibvp

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "configs" / "examples" / "inband_sm.yaml"


def test_the_example_comes_up_in_band_and_its_flows_run_after(tmp_path: Path) -> None:
    res = ibvp.run(EXAMPLE, tmp_path / "out", timeout=120)
    sm = res.subnet_manager
    assert sm["up"] and sm["error"] is None
    # The 2-ary 3-tree: 12 switches, 8 CAs, 24 cables; arm and activate set both ends of each.
    assert (sm["switches"], sm["cas"], sm["links"]) == (12, 8, 24)
    assert sm["smps_by_phase"]["arm"] == sm["smps_by_phase"]["activate"] == 48
    assert sm["smps_sent"] == sm["smps_received"] and sm["resends"] == 0
    assert 0 < sm["discovered_us"] < sm["programmed_us"] < sm["armed_us"] < sm["up_us"]
    # The run lasts duration (2 ms) past the moment the subnet was up, and lost nothing.
    assert abs(res.summary["sim_seconds"] - (sm["up_us"] * 1e-6 + 2e-3)) < 1e-9
    assert res.summary["packets"]["dropped"] == 0
    assert (res.flows["delivered"] > 0).all()


def test_two_runs_bring_the_subnet_up_at_the_same_simulated_time(tmp_path: Path) -> None:
    a = ibvp.run(EXAMPLE, tmp_path / "a", timeout=120).subnet_manager
    b = ibvp.run(EXAMPLE, tmp_path / "b", timeout=120).subnet_manager
    assert a == b


def test_the_cli_refuses_an_in_band_sm_on_fabric_only_endpoints(cli, tmp_path: Path) -> None:
    code, out, err = cli("run", EXAMPLE, "--set", "endpoint_model=fabric", "--out", tmp_path, "--quiet")
    assert code == 2
    assert "subnet_manager.mode" in err and "endpoint_model: hca" in err
