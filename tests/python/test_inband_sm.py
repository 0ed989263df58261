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


QOS_EXAMPLE = ROOT / "configs" / "examples" / "inband_qos.yaml"


def test_qos_tables_written_in_band_give_the_out_of_band_runs_data_results(tmp_path: Path) -> None:
    inband = ibvp.run(QOS_EXAMPLE, tmp_path / "in", timeout=120)
    oob_scenario = ibvp.Scenario.from_yaml(QOS_EXAMPLE).set("subnet_manager.mode", "out_of_band")
    oob = ibvp.run(oob_scenario, tmp_path / "oob", timeout=120)
    sm = inband.subnet_manager
    assert sm["up"] and sm["error"] is None
    # 4 switches and 4 CAs: one all-ports SL2VL Set each, the four VLArb blocks of each of the
    # switches' 12 cabled ports and of each CA port.
    assert sm["smps_by_table"] == {"sl2vl": 8, "vlarb": 64, "mft": 0}
    assert sm["smps_by_phase"]["qos"] == 72
    # After the warm-up both runs are in the same steady state: per flow (flow a on SL 0,
    # b on SL 1) the same latencies, bit for bit, and the same throughput to one packet:
    # the in-band bring-up ends some 0.4 us later, so a packet may fall across the
    # measurement window's edge (2048 bytes over the 800 us after the warm-up).
    cols = ["name", "latency_mean_ns", "latency_p99_ns", "latency_max_ns"]
    assert inband.flows[cols].to_dict("records") == oob.flows[cols].to_dict("records")
    one_packet_Bps = 2048 / 800e-6  # the example's 1 ms of traffic less its 200 us warm-up
    for (_, i), (_, o) in zip(inband.flows.iterrows(), oob.flows.iterrows()):
        assert abs(i["throughput_Bps"] - o["throughput_Bps"]) <= one_packet_Bps * 1.001, i["name"]
    # And the tables are the qos section's: VL 1 gets four times VL 0's weight, so b carries
    # more than three times a's bytes (with the reset tables both SLs share VL 0 equally).
    a, b = (inband.flows.set_index("name").loc[n, "throughput_Bps"] for n in ("a", "b"))
    assert b > 3 * a


def test_the_cli_refuses_per_port_multicast_weights_in_band(cli, tmp_path: Path) -> None:
    cfg = tmp_path / "mc.yaml"
    cfg.write_text(
        "name: mc\nduration: 100us\ntopology: {generator: fat_tree, k: 2, n: 2}\nendpoint_model: hca\n"
        "hca: {flow_transport: UD}\nsubnet_manager: {mode: in_band}\nswitch: {data_vls: 2}\nendpoint: {data_vls: 2}\n"
        "multicast:\n  - {name: g, source: h1, members: [h2, h3]}\n"
        "multicast_bandwidth: {allocation: linear, sl: 1}\n"
        "flows:\n  - {name: m, src: h1, dst: g, sl: 1, generator: constant, load: 0.1, payload_bytes: 256}\n"
    )
    code, out, err = cli("run", cfg, "--out", tmp_path / "out", "--quiet")
    assert code == 2
    assert "subnet_manager.mode" in err and "destinations: group" in err
