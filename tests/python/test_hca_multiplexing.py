"""The default firmware's multiplexing (`hca.firmware_args` `mux=packet|message`, docs/hca.md)
from the CLI and from Python: seed 003 Sec. 5.3's flit- against message-level multiplexing,
at IBA's packet grain (the behaviour itself: tests/hca/test_multiplexing.cpp)."""
from __future__ import annotations

from pathlib import Path

import ibvp

SCENARIO = """\
duration: 1ms
topology: {generator: single_switch, hosts: 3}
endpoint_model: hca
hca: {firmware_args: "sched=vc", flow_mtu: 1024}
flows:
  - {name: big, src: h1, dst: h2, generator: saturating, payload_bytes: 4096}
  - {name: small, src: h1, dst: h3, generator: constant, load: 0.05, payload_bytes: 256, reserved_rate: 4e9}
outputs: {packets_csv: false}
"""


def _scenario(tmp_path: Path) -> Path:
    path = tmp_path / "mux.yaml"
    path.write_text(SCENARIO)
    return path


def test_message_multiplexing_runs_from_the_cli(cli, tmp_path: Path) -> None:
    code, _out, err = cli("run", _scenario(tmp_path), "--set", "hca.firmware_args=sched=vc,mux=message",
                          "--out", tmp_path / "out", "--quiet")
    assert code == 0, err
    log = (tmp_path / "out" / "firmware.log").read_text()
    assert "started with firmware_args 'sched=vc,mux=message'" in log
    res = ibvp.Results(tmp_path / "out")
    p = res.summary["packets"]
    assert p["injected"] == p["delivered"] + p["dropped"] + p["in_flight"]
    flows = res.flows.set_index("name")
    assert flows.loc["big", "delivered"] > 100 and flows.loc["small", "delivered"] > 10


def test_an_unknown_multiplexing_is_refused_naming_the_key(cli, tmp_path: Path) -> None:
    code, out, err = cli("run", _scenario(tmp_path), "--set", "hca.firmware_args=sched=vc,mux=flit",
                         "--out", tmp_path / "out", "--quiet")
    assert code == 2 and out == ""
    assert "hca.firmware_args" in err and "unknown multiplexing 'flit' (packet, message)" in err
    assert not (tmp_path / "out" / "summary.json").exists()


def test_both_multiplexings_from_python_carry_the_same_messages(tmp_path: Path) -> None:
    scenario = ibvp.Scenario.from_yaml(_scenario(tmp_path))
    delivered = {}
    for mux in ("packet", "message"):
        scenario["hca.firmware_args"] = f"sched=vc,mux={mux}"
        res = ibvp.run(scenario, tmp_path / mux, timeout=120)
        # The arguments reached every HCA's firmware through the Python API.
        assert all(f"started with firmware_args 'sched=vc,mux={mux}'" in line for line in res.firmware_log)
        assert len(res.firmware_log) >= 3
        delivered[mux] = res.flows.set_index("name")["delivered"].to_dict()
    # The saturating flow fills the link either way; the constant flow's messages are all
    # sent either way (its rate is fixed): multiplexing reorders, it does not lose or add.
    assert abs(delivered["packet"]["small"] - delivered["message"]["small"]) <= 1
    assert abs(delivered["packet"]["big"] - delivered["message"]["big"]) <= 2


def test_hca_hosts_on_the_flit_router_are_refused_from_the_cli_and_python(cli, tmp_path: Path) -> None:
    # The flit router's edges read the kernel's time; HCAs run ahead of it (docs/hca.md, Not
    # yet). Seed 003's NICs on the flit router are switch.flit.nic_scheduler instead.
    code, out, err = cli("run", _scenario(tmp_path), "--set", "switch.model=flit_wormhole",
                         "--out", tmp_path / "out", "--quiet")
    assert code == 2 and out == ""
    assert "endpoint_model" in err and "switch.model: iba" in err
    assert not (tmp_path / "out" / "summary.json").exists()
    scenario = ibvp.Scenario.from_yaml(_scenario(tmp_path))
    scenario["switch.model"] = "flit_wormhole"
    try:
        scenario.validate()
    except ibvp.ConfigError as e:
        assert "endpoint_model" in str(e)
    else:
        raise AssertionError("HCA hosts on the flit router were accepted")
