"""Seed 000's stated trends (Sec. 5.1, 5.2) on the committed configs/seed000/ scenarios at one
or two loads each: Fig. 7 as committed (150 ms, 30 ms warm-up), Fig. 10 shorter (60 ms, 20 ms
warm-up). Only the trends that hold in the full runs are asserted here; docs/seed000.md
reports the others and why.

- Routing (Fig. 7, RT:BE 50:50, 60 % load, WRR VL arbitration): multipath with Max-Credit cuts
  the mean latency of best effort, of real time and of all data packets against SPF, and it
  cuts the DMP and the DMT; packet dropping cuts SPF's best-effort latency. SPF's DMP rises
  from 50 % to 60 % load.
- Multicast (Fig. 10, WRR, best effort at 30 % and 50 %): every replication scheme in the
  switch beats replicated unicast on real-time and multicast latency, and the central buffer
  is at least as good as the asynchronous scheme without it.
- Dropping (Fig. 7, 60 %): with a short HOQ lifetime (33 us) SPF+Drop has a lower DMP and DMT
  than SPF, counting the frames that lost packets as delivered, as Sec. 4 does.
- Bandwidth allocation (Fig. 10f, 50 % best effort): with multicast priority over unicast on
  the shared VL, scheme 1 gives multicast a lower latency than Equal and Log.
- 30 nodes (Fig. 9, 20 %, 60 ms): MP+LFU raises best effort's latency at low load.

Not asserted, because they do not hold in our runs (docs/seed000.md says why): lower DMP
and DMT with dropping at the committed 524 us lifetime, MP+LFU's lower best-effort latency at
60 %, multipath gains on the 30-node fabric (Fig. 9), SPF ahead of Up/Down at 50-60 %, and
unicast faster with the shared VL in Fig. 10f.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import ibvp
from ibvp.plots import traffic_classes

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs" / "seed000"
SHORT = {"duration": "60ms", "warmup": "20ms"}


def _run(tmp: Path, config: str, bundle: ibvp.Variant, sets: dict, short: bool = True, name: str = "") -> dict:
    sc = ibvp.Scenario.from_yaml(CONFIGS / config)
    for k, v in {**(SHORT if short else {}), **bundle.overrides, **sets}.items():
        sc = sc.set(k, v)
    res = ibvp.run(sc, tmp / (name or str(bundle)), timeout=300)
    return {**traffic_classes(res.summary), "video": res.summary.get("video") or {}}


@pytest.fixture(scope="module")
def routing(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("seed000_routing")
    schemes = {str(v): v for v in ibvp.variants(CONFIGS / "variants" / "schemes15.yaml")}
    # The committed 150 ms (30 ms warm-up): under WRR the real-time queues take tens of ms to
    # build up, and a 60 ms run measures mostly the start (its DMP and latencies of SPF and
    # MP+Credit differ by under 5 %).
    runs = {name: _run(tmp, "fig7.yaml", schemes[name], {"mix.total_load": 0.6}, short=False)
            for name in ("SPF", "MP+Credit")}
    # SPF+Drop with an HOQ lifetime of 4.096 us x 2^3 = 33 us instead of the committed 524 us,
    # which drops a few dozen packets of 185,000 (docs/seed000.md, "Dropping").
    runs["SPF+Drop@HLL3"] = _run(tmp, "fig7.yaml", schemes["SPF+Drop"], {"mix.total_load": 0.6,
                                                                         "switch.hoq_life": 3},
                                 short=False, name="hll3")
    (tmp / "load50").mkdir()
    runs["SPF@50"] = _run(tmp / "load50", "fig7.yaml", schemes["SPF"], {"mix.total_load": 0.5}, short=False)
    return runs


@pytest.fixture(scope="module")
def multicast(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("seed000_multicast")
    runs = {}
    for load in (0.3, 0.5):
        (tmp / str(load)).mkdir()
        for v in ibvp.variants(CONFIGS / "variants" / "replication.yaml"):
            runs[(str(v), load)] = _run(tmp / str(load), "fig10.yaml", v, {"traffic.load": load})
    return runs


def test_multipath_max_credit_cuts_best_effort_latency_at_high_load(routing: dict) -> None:
    # Sec. 5.1: "(Multipath+Credit) aids to reduce the average packet latency of best-effort traffic".
    assert routing["MP+Credit"]["be_latency_us"] < routing["SPF"]["be_latency_us"]
    # and the mean over every data packet (real time and best effort).
    assert routing["MP+Credit"]["uc_latency_us"] < routing["SPF"]["uc_latency_us"]


def test_multipath_max_credit_cuts_real_time_latency_dmp_and_dmt_at_high_load(routing: dict) -> None:
    # Sec. 5.1: multipath reduces the DMP and the DMT "as the load increases", and the
    # real-time latency "by 40 percent - 65 percent" against SPF at 50 % load or higher.
    # Real time shares each link with best effort (WRR), so routing best effort away from
    # the real-time routes helps real time.
    spf, mp = routing["SPF"], routing["MP+Credit"]
    assert spf["dmp"] > 0
    assert mp["dmp"] < spf["dmp"]
    assert mp["dmt_ms"] < spf["dmt_ms"]
    assert mp["rt_latency_us"] < spf["rt_latency_us"]


def test_dmp_of_spf_rises_with_load(routing: dict) -> None:
    # Figs. 7-8: the DMP grows with the injection rate.
    assert routing["SPF"]["dmp"] > routing["SPF@50"]["dmp"]


def test_dropping_with_a_short_hoq_lifetime_cuts_best_effort_latency_at_high_load(routing: dict) -> None:
    # Sec. 3.5: removing packets that wait too long "greatly" reduces the average packet
    # latency. With the committed 524 us lifetime SPF+Drop's best effort differs from SPF's
    # by -7 % to +8 % over five seeds (noise, docs/seed000.md "Dropping"); with 33 us the
    # switches drop thousands of packets and best effort at 60 % is a third of SPF's.
    assert routing["SPF+Drop@HLL3"]["be_latency_us"] < 0.5 * routing["SPF"]["be_latency_us"]


def test_dropping_with_a_short_hoq_lifetime_cuts_dmp_and_dmt_at_high_load(routing: dict) -> None:
    # Sec. 5.1: packet dropping reduces the DMP and the DMT at high load. Frames that lost
    # packets still arrive with their last packet (Sec. 3.5 never drops it) and count as
    # delivered: the DMP is over delivered frames (Sec. 4).
    spf, drop = routing["SPF"], routing["SPF+Drop@HLL3"]
    assert drop["video"]["frames_incomplete"] > 0
    assert drop["video"]["frames"] >= spf["video"]["frames"]
    assert drop["dmp"] < spf["dmp"]
    assert drop["dmt_ms"] < spf["dmt_ms"]


@pytest.mark.parametrize("load", [0.3, 0.5])
def test_every_replication_scheme_beats_replicated_unicast(multicast: dict, load: float) -> None:
    # Sec. 5.2: "Replicated Unicast has the worst performance as expected".
    baseline = multicast[("ReplicatedUnicast", load)]
    for scheme in ("Synchronous", "Asynchronous", "CentralBuffer"):
        assert multicast[(scheme, load)]["rt_latency_us"] < baseline["rt_latency_us"], scheme
        assert multicast[(scheme, load)]["mc_latency_us"] < baseline["mc_latency_us"], scheme


@pytest.mark.parametrize("load", [0.3, 0.5])
def test_central_buffer_at_least_as_good_as_asynchronous(multicast: dict, load: float) -> None:
    # Sec. 5.2: "Asynchronous Replication with a central buffer provides slightly better
    # performance over the other two replication schemes."
    central, asynchronous = multicast[("CentralBuffer", load)], multicast[("Asynchronous", load)]
    assert central["rt_latency_us"] <= asynchronous["rt_latency_us"]
    assert central["mc_latency_us"] <= asynchronous["mc_latency_us"]


@pytest.fixture(scope="module")
def bandwidth(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("seed000_bandwidth")
    schemes = {str(v): v for v in ibvp.variants(CONFIGS / "variants" / "bandwidth.yaml")}
    runs = {name: _run(tmp, "fig10f.yaml", schemes[name], {"traffic.load": 0.5}) for name in ("Shared", "Equal", "Log")}
    runs["Shared without priority"] = _run(tmp, "fig10f.yaml", schemes["Shared"],
                                           {"traffic.load": 0.5, "switch.multicast_priority": False},
                                           name="shared_no_priority")
    return runs


def test_shared_vl_with_multicast_priority_gives_multicast_the_lowest_latency_at_high_load(bandwidth: dict) -> None:
    # Sec. 5.2, Fig. 10f: "For the replication scheme 1, we give multicast traffic higher
    # priority over unicast traffic in reserving the output VLs ... Therefore, the first
    # scheme results in better performance" than separate VLs at higher load. Linear is
    # within a few percent of Shared (docs/seed000.md) and not compared.
    shared = bandwidth["Shared"]["mc_latency_us"]
    assert shared < bandwidth["Equal"]["mc_latency_us"]
    assert shared < bandwidth["Log"]["mc_latency_us"]
    assert shared < bandwidth["Shared without priority"]["mc_latency_us"]


def test_multipath_lfu_raises_best_effort_latency_at_low_load_on_30_nodes(tmp_path: Path) -> None:
    # Sec. 5.1, Fig. 9: "multipath routing increases the latency of best-effort traffic at a
    # low injection rate (20 percent input load) ... because the best-effort traffic can use a
    # non-minimal path". (Its gains at 28 % do not appear here: docs/seed000.md, Fig. 9.)
    schemes = {str(v): v for v in ibvp.variants(CONFIGS / "variants" / "schemes30.yaml")}
    runs = {name: _run(tmp_path, "fig9.yaml", schemes[name], {"mix.total_load": 0.2}) for name in ("SPF", "MP+LFU")}
    assert runs["MP+LFU"]["be_latency_us"] > runs["SPF"]["be_latency_us"]
