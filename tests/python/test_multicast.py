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
