"""Running seed 004's scenarios (configs/seed004/) and reading their rates as the paper's
figures draw them: flows named alike but for a trailing number summed into one series
(local1..localN -> local), every rate a fraction of the 1 GB/s link."""
from __future__ import annotations

import csv
import os
import subprocess
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("IBVP_BUILD", ROOT / "build"))
LINK_BPS = 1e9  # 4X SDR: 1 GB/s of data


def run(config: str, out: Path, *overrides: str) -> Path:
    """Runs configs/seed004/<config>.yaml with `--set` overrides into `out`."""
    args = [str(BUILD / "ibvp-sim"), str(ROOT / "configs/seed004" / f"{config}.yaml"), "--out", str(out), "--quiet"]
    for o in overrides:
        args += ["--set", o]
    subprocess.run(args, check=True)
    return out


def mean_rates(out: Path, a: float, b: float) -> dict[str, float]:
    """Mean rate of every series (flows grouped) over the samples in [a, b] seconds."""
    sums: dict[tuple[str, float], list[float]] = defaultdict(list)
    with open(out / "rates.csv", newline="") as f:
        for row in csv.DictReader(f):
            t = float(row["time_s"])
            if a <= t <= b:
                name = row["series"]
                key = name if "/" in name else name.rstrip("0123456789")
                sums[(key, t)].append(float(row["rate_Bps"]))
    grouped: dict[str, list[float]] = defaultdict(list)
    for (key, _t), values in sums.items():
        grouped[key].append(sum(values))
    return {k: sum(v) / len(v) / LINK_BPS for k, v in grouped.items()}
