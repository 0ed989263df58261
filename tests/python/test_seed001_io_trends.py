"""Seed 001 Sec. 3.2 (Figs. 2 and 4) with the synthetic disk-I/O stand-in (ibvp.io_trace,
an ON/OFF process per disk), 32 switches, 23 randomly placed disks, compression 15, 20 ms of
compressed time, input and output buffers of 8 KB, as the committed configs/seed001/run_io.py.
The paper: "UD routing exhibits a very high latency ... when using DFS and SMART, the
behavior is much better"; "the UD routing benefits from using an additional SL/VL"; "the
other routing algorithms (DFS and SMART) obtain low improvements on performance when using
additional SL/VLs"; "even by using a large number of network resources (8 SL/VLs) the UD is
not able to obtain the good network performance achieved by the other routings (DFS and
SMART) with only one SL/VL"."""
from __future__ import annotations

from pathlib import Path

import pytest

import ibvp
from ibvp import io_trace as io


ROOT = Path(__file__).resolve().parents[2]
SPAN_S = 20e-3


@pytest.fixture(scope="module")
def latency(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("io")
    requests = io.synthetic_requests(SPAN_S * 15, io.DISKS, seed=1, **io.SEED001_STAND_IN)
    disks = io.place_disks(32, placement="random", seed=1)
    hosts = io.hosts_of(32, disks)
    cache: dict = {}

    def final(routing: str, sls: int) -> float:
        if (routing, sls) not in cache:
            pk = io.io_packets(requests, disks, hosts, compression=15, sls=sls, until_s=SPAN_S, seed=1)
            sc = ibvp.Scenario.from_yaml(ROOT / "configs" / "seed001" / "io32.yaml").set("routing", routing)
            sc.set("switch.data_vls", sls).set("endpoint.data_vls", sls).set("duration", "20ms")
            res = ibvp.run(sc, out / f"{routing}_{sls}", workload=pk)
            ts = io.time_series(res.packets, 1e-3, workload=pk)
            cache[(routing, sls)] = float(ts["cumulative_latency_ns"].iloc[-1])
        return cache[(routing, sls)]

    return final


def test_dfs_message_latency_is_below_updn_with_one_sl_vl(latency) -> None:
    assert latency("dfs", 1) < latency("updn", 1)


def test_updn_benefits_from_a_second_sl_vl(latency) -> None:
    assert latency("updn", 2) < latency("updn", 1)


def test_updn_with_8_sl_vls_stays_above_dfs_with_one(latency) -> None:
    assert latency("updn", 8) > latency("dfs", 1)


def test_dfs_and_smart_gain_far_less_than_updn_from_a_second_sl_vl(latency) -> None:
    def gain(routing: str) -> float:
        return 1 - latency(routing, 2) / latency(routing, 1)

    assert gain("updn") > 0.3  # committed: 705 to 248 us
    assert gain("dfs") < gain("updn") / 4 and gain("smart") < gain("updn") / 4  # 6 % and 4 %
