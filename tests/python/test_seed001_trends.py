"""Seed 001 (Gomez, Flich et al.) Table 1's trends, at a reduced size: three random fabrics
(topology seeds 1-3) instead of ten, shorter runs (150 us, 30 us of warm-up) and a coarser
bisection (10 %) than configs/seed001 (docs/seed001.md). The paper's averages: SMART over
UD 1.72 and 2.46, SMART over DFS 1.09 and 1.23, DFS over UD 1.52 and 2.03 for 16 and 32
switches; with one hot spot taking 20 % of the traffic, DFS over UD falls to 1.04."""
from __future__ import annotations

from pathlib import Path

import pytest

import ibvp
from ibvp import saturation

ROOT = Path(__file__).resolve().parents[2]
SEEDS = [1, 2, 3]


def _scenario(name: str) -> ibvp.Scenario:
    return ibvp.Scenario.from_yaml(ROOT / "configs" / "seed001" / name).set("duration", "150us").set("warmup", "30us")


def _search(name: str, vary: dict, out: Path, hi: float) -> "object":
    return ibvp.saturate(_scenario(name), {**vary, "topology.seed": SEEDS}, out, hi=hi, resolution=0.1, jobs=2).searches


def _mean(table, routing: str) -> float:
    rows = table[table["routing"] == routing]
    assert (rows["status"] == "ok").all() and rows["saturated"].all(), rows[["search", "status", "error"]]
    return float(rows[saturation.VALUE].mean())


def _factor(table, a: str, b: str) -> float:
    f = saturation.factors(table, a, b).iloc[0]
    assert f["left_out"] == 0
    return float(f["avg"])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("seed001")
    return {
        "u16": _search("uniform16.yaml", {"routing": ["updn", "dfs", "smart"]}, out / "u16", 0.5),
        "u32": _search("uniform32.yaml", {"routing": ["updn", "dfs"]}, out / "u32", 0.25),
        "hs32": _search("hotspot32.yaml", {"routing": ["updn", "dfs"], "hotspots": [1],
                                           "traffic.hotspot_fraction": [0.2]}, out / "hs32", 0.1),
    }


def test_smart_at_least_dfs_at_least_updn_on_average(runs: dict) -> None:
    t = runs["u16"]
    assert _mean(t, "smart") >= _mean(t, "dfs") >= _mean(t, "updn")


def test_dfs_advantage_over_updn_grows_from_16_to_32_switches(runs: dict) -> None:
    assert _factor(runs["u32"], "dfs", "updn") > _factor(runs["u16"], "dfs", "updn")


def test_a_20_percent_hot_spot_shrinks_dfs_advantage_over_updn(runs: dict) -> None:
    uniform, hot = _factor(runs["u32"], "dfs", "updn"), _factor(runs["hs32"], "dfs", "updn")
    assert hot < uniform
    # The hot spot's link bounds every routing alike. Each host offers L; the hot host is sent
    # 0.2 x 128 L + 0.8 L = 26.4 L and takes at most 1 byte per cycle, so what it cannot take,
    # 26.4 L - 1, must stay within the tolerance (5 % of 128 L) for L to count as sustained:
    # L <= 1 / 20 = 0.05, i.e. 0.2 flits per cycle per switch (4 hosts each), for any routing.
    assert runs["hs32"][saturation.VALUE].max() <= 0.2
