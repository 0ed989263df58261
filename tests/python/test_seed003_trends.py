"""Seed 003's stated results that hold in our model, on the committed configs/seed003/
scenarios shortened with `set` (docs/seed003.md says which hold and which do not).

- Table 1 (Sec. 3.1): "The results with different input loads are quite similar" for
  VirtualClock and Fair Queueing: at 80 % load (RT:BE 80:20) their mean inter-frame times
  are within a few percent of each other and of the 33.3 ms frame period. A 500 ms run (the
  committed 400 ms warm-up, then three frames a stream: about 3 s of wall time each).

Not asserted, because they do not hold in our runs: Table 1's SDs (ours are 3 to 9 times the
paper's and Fair Queueing's are lower), P's flat DMP and TR as the worst router (Fig. 4),
acceleration helping (Fig. 7), the QoS NIC mattering most (Fig. 9). Fig. 6 (larger blocks
degrade) holds but needs runs of minutes; the router-level tests in tests/flit check its
mechanism.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import ibvp

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs" / "seed003"
PERIOD_NS = 1e9 / 30


def _video(tmp: Path, config: str) -> dict:
    sc = ibvp.Scenario.from_yaml(CONFIGS / config).set("duration", "500ms")
    res = ibvp.run(sc, tmp / config.removesuffix(".yaml"), timeout=300)
    return res.summary["video"]


@pytest.fixture(scope="module")
def table1(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("seed003_table1")
    return {name: _video(tmp, f"table1_{name}.yaml") for name in ("virtual_clock", "fair_queueing")}


def test_virtual_clock_and_fair_queueing_give_inter_frame_means_within_a_few_percent(table1: dict) -> None:
    vc, fq = table1["virtual_clock"], table1["fair_queueing"]
    # Every stream delivered frames after the warm-up (512 streams, about 3 frames each).
    assert vc["frames"] > 1000 and fq["frames"] > 1000
    assert vc["inter_frame_mean_ns"] == pytest.approx(fq["inter_frame_mean_ns"], rel=0.05)
    for run in (vc, fq):
        assert run["inter_frame_mean_ns"] == pytest.approx(PERIOD_NS, rel=0.05)
