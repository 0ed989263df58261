"""The flagship scenario (seed 004, Fig. 2a) shows congestion spreading: with L=5 local and
R=1 remote flows oversubscribing the root link and no congestion control, the victim flow,
which only needs the idle inter-switch link, gets far below its fair share while that link
is mostly idle. The paper reports about 15 % for the victim and 30 % use of the link."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from seed004_runs import BUILD, ROOT, mean_rates  # noqa: E402


def test_victim_is_starved_while_inter_switch_link_idles(tmp_path: Path) -> None:
    subprocess.run([str(BUILD / "ibvp-sim"), str(ROOT / "configs/seed004/fig2a.yaml"), "--out", str(tmp_path),
                    "--quiet"], check=True)
    during = mean_rates(tmp_path, 0.042, 0.058)   # victim active (40..60 ms), away from the edges
    before = mean_rates(tmp_path, 0.010, 0.038)
    root, isl = during["B/7"], during["A/1"]
    # The root link stays saturated throughout.
    assert root > 0.97 and before["B/7"] > 0.97
    # Six flows share the root: each gets about 1/6; the remote flow is held to that too.
    assert abs(during["remote"] - 1 / 6) < 0.04
    # The victim could use the whole idle part of the inter-switch link (5/6 of it) but gets
    # about as little as the remote flow it alternates with (paper: ~15 %).
    assert during["victim"] < 0.25
    assert abs(during["victim"] - during["remote"]) < 0.04
    # ... while the inter-switch link is mostly idle (paper: ~30 % used).
    assert isl < 0.40
    assert abs(isl - (during["victim"] + during["remote"])) < 0.02
