"""configs/examples/multicast.yaml through ibvp.run (seed 000 Sec. 3.6, docs/multicast.md):
every member receives every packet of the multicast flow, and every replication scheme beats
replicated unicast on the flow's latency, the paper's stated trend (Sec. 5.2, Fig. 10)."""
from __future__ import annotations

from pathlib import Path

import pytest

import ibvp

ROOT = Path(__file__).resolve().parents[2]
MEMBERS = ["h0_0_2", "h0_1_1", "h1_0_1", "h1_1_1"]


def run(tmp_path: Path, name: str, **sets: str) -> dict:
    sc = ibvp.Scenario.from_yaml(ROOT / "configs" / "examples" / "multicast.yaml")
    for k, v in sets.items():
        sc = sc.set(k.replace("__", "."), v)
    res = ibvp.run(sc, tmp_path / name, timeout=300)
    return res.summary["flows"][0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("multicast")
    out = {s: run(tmp, s, switch__multicast_replication=s) for s in ("synchronous", "asynchronous", "central_buffer")}
    out["replicated_unicast"] = run(tmp, "ru", **{"multicast[0]__delivery": "replicated_unicast"})
    return out


def test_every_member_receives_every_packet_once(runs: dict) -> None:
    for scheme, flow in runs.items():
        mc = flow["multicast"]
        assert sorted(mc["members"]) == sorted(MEMBERS), scheme
        assert mc["non_member_copies"] == 0, scheme
        copies = list(mc["members"].values())
        # Packets still in flight at the end may be missing at some members, never extra.
        assert max(copies) - min(copies) <= 2, scheme
        assert flow["delivered"] == sum(copies), scheme
        assert flow["dropped"] == 0, scheme


def test_every_scheme_beats_replicated_unicast_on_latency(runs: dict) -> None:
    baseline = runs["replicated_unicast"]["latency_ns"]["mean"]
    for scheme in ("synchronous", "asynchronous", "central_buffer"):
        assert runs[scheme]["latency_ns"]["mean"] < baseline, scheme


def test_central_buffer_at_least_as_good_as_asynchronous(runs: dict) -> None:
    assert runs["central_buffer"]["latency_ns"]["mean"] <= runs["asynchronous"]["latency_ns"]["mean"] * 1.001


@pytest.mark.parametrize(
    "key, value, refused_key, words",
    [
        ("flows[0].src", "h0_0_2", "flows[0].src", "has source h0_0_1"),
        ("multicast[0].mlid", 100, "multicast[0].mlid", "unicast LID"),
        ("multicast[0].members", ["h0_0_2", "h0_0_2"], "multicast[0].members[1]", "listed twice"),
        ("multicast[0].members", ["h0_0_1"], "multicast[0].members[0]", "the group's source"),
        ("multicast[0].name", "h1_1_1", "multicast[0].name", "also a node"),
        ("flows[0].pattern", "uniform", "flows[0].dst", "only used with pattern fixed"),
        ("multicast_bandwidth", {"allocation": "linear"}, "switch.data_vls", "VL of its own"),
    ],
)
def test_bad_multicast_input_is_refused_with_key_and_fix(key: str, value: object, refused_key: str, words: str) -> None:
    sc = ibvp.Scenario.from_yaml(ROOT / "configs" / "examples" / "multicast.yaml").set(key, value)
    with pytest.raises(ibvp.ConfigError) as err:
        sc.validate()
    assert err.value.key == refused_key
    assert words in err.value.problem
    assert err.value.fix


def hca_scenario(tmp_path: Path) -> ibvp.Scenario:
    text = (ROOT / "configs" / "examples" / "multicast.yaml").read_text()
    no_traffic = text[: text.index("traffic:")] + text[text.index("outputs:"):]
    (tmp_path / "hca.yaml").write_text(no_traffic)
    return ibvp.Scenario.from_yaml(tmp_path / "hca.yaml").set("endpoint_model", "hca")


def test_multicast_flow_from_an_hca_host_reaches_every_member_once(tmp_path: Path) -> None:
    sc = hca_scenario(tmp_path).set("hca.flow_transport", "UD").set("flows[0].stop", "1500us")
    flow = ibvp.run(sc, tmp_path / "run", timeout=300).summary["flows"][0]
    mc = flow["multicast"]
    assert flow["injected"] > 100
    assert sorted(mc["members"]) == sorted(MEMBERS)
    assert set(mc["members"].values()) == {flow["injected"]}
    assert mc["non_member_copies"] == 0
    assert flow["delivered"] == len(MEMBERS) * flow["injected"]


def test_multicast_flows_on_hca_hosts_need_ud(tmp_path: Path) -> None:
    with pytest.raises(ibvp.ConfigError) as err:
        hca_scenario(tmp_path).validate()  # hca.flow_transport defaults to RC
    assert err.value.key == "flows[0].dst"
    assert "only UD QPs" in err.value.problem
    assert "flow_transport: UD" in err.value.fix
