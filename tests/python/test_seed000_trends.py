"""Seed 000's stated trends (Sec. 5.1, 5.2) on the committed configs/seed000/ scenarios, run
shorter (60 ms, 20 ms warm-up, instead of 150 ms / 30 ms) at one load each. Only the trends
that hold in the full runs are asserted here; docs/seed000.md reports the others and why.

- Routing (Fig. 7, RT:BE 50:50, 60 % load): multipath with Max-Credit cuts the mean latency of
  best effort, and of all data packets, against SPF; packet dropping cuts SPF's.
- Multicast (Fig. 10, best effort at 30 %): every replication scheme in the switch beats
  replicated unicast on real-time and multicast latency, and the central buffer is at least
  as good as the asynchronous scheme without it. (At 50 % best effort the asynchronous
  scheme is worse than replicated unicast; docs/seed000.md reports it.)

Not asserted, because they do not hold in our runs (docs/seed000.md says why): lower DMP
and DMT with multipath and dropping (no frame misses its deadline without dropping), lower
real-time latency with multipath, and MP+LFU's lower best-effort latency at 60 %.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import ibvp
from ibvp.plots import traffic_classes

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs" / "seed000"
SHORT = {"duration": "60ms", "warmup": "20ms"}


def _run(tmp: Path, config: str, bundle: ibvp.Variant, sets: dict) -> dict:
    sc = ibvp.Scenario.from_yaml(CONFIGS / config)
    for k, v in {**SHORT, **sets, **bundle.overrides}.items():
        sc = sc.set(k, v)
    res = ibvp.run(sc, tmp / str(bundle), timeout=300)
    return traffic_classes(res.summary)


@pytest.fixture(scope="module")
def routing(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("seed000_routing")
    schemes = {str(v): v for v in ibvp.variants(CONFIGS / "variants" / "schemes15.yaml")}
    return {name: _run(tmp, "fig7.yaml", schemes[name], {"mix.total_load": 0.6})
            for name in ("SPF", "SPF+Drop", "MP+Credit")}


@pytest.fixture(scope="module")
def multicast(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("seed000_multicast")
    return {str(v): _run(tmp, "fig10.yaml", v, {"traffic.load": 0.3})
            for v in ibvp.variants(CONFIGS / "variants" / "replication.yaml")}


def test_multipath_max_credit_cuts_best_effort_latency_at_high_load(routing: dict) -> None:
    # Sec. 5.1: "(Multipath+Credit) aids to reduce the average packet latency of best-effort traffic".
    assert routing["MP+Credit"]["be_latency_us"] < routing["SPF"]["be_latency_us"]
    # and the mean over every data packet (real time and best effort).
    assert routing["MP+Credit"]["uc_latency_us"] < routing["SPF"]["uc_latency_us"]


def test_dropping_cuts_best_effort_latency_of_spf_at_high_load(routing: dict) -> None:
    # Sec. 3.5: removing packets that wait too long reduces the average packet latency.
    assert routing["SPF+Drop"]["be_latency_us"] < routing["SPF"]["be_latency_us"]


def test_every_replication_scheme_beats_replicated_unicast_at_30_percent_best_effort(multicast: dict) -> None:
    # Sec. 5.2: "Replicated Unicast has the worst performance as expected".
    baseline = multicast["ReplicatedUnicast"]["rt_latency_us"]
    for scheme in ("Synchronous", "Asynchronous", "CentralBuffer"):
        assert multicast[scheme]["rt_latency_us"] < baseline, scheme
        assert multicast[scheme]["mc_latency_us"] < multicast["ReplicatedUnicast"]["mc_latency_us"], scheme


def test_central_buffer_at_least_as_good_as_asynchronous(multicast: dict) -> None:
    # Sec. 5.2: "Asynchronous Replication with a central buffer provides slightly better
    # performance over the other two replication schemes."
    assert multicast["CentralBuffer"]["rt_latency_us"] <= multicast["Asynchronous"]["rt_latency_us"]
    assert multicast["CentralBuffer"]["mc_latency_us"] <= multicast["Asynchronous"]["mc_latency_us"]
