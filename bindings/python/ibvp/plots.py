"""Plots and tables of an ibvp-sim results directory.

    python -m ibvp.plots rates OUT_DIR [--title TEXT] [--window-start-ms A --window-end-ms B]

`rates` draws the sliding-window rates of rates.csv (ports as link utilisation, flows as a
fraction of the link rate), grouping flows named localN / remoteN into aggregates as seed
004 Fig. 2 does, and prints a table of mean rates inside a time window.
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections import defaultdict
from pathlib import Path


def read_rates(out_dir: Path) -> dict[str, list[tuple[float, float]]]:
    """series name -> [(time_s, rate_Bps)]"""
    series: dict[str, list[tuple[float, float]]] = defaultdict(list)
    with open(out_dir / "rates.csv", newline="") as f:
        for row in csv.DictReader(f):
            series[row["series"]].append((float(row["time_s"]), float(row["rate_Bps"])))
    return series


def group_flows(series: dict[str, list[tuple[float, float]]]) -> dict[str, list[tuple[float, float]]]:
    """Sums series whose names differ only by a trailing number (local1..localN -> local)."""
    grouped: dict[str, dict[float, float]] = defaultdict(lambda: defaultdict(float))
    for name, points in series.items():
        key = name if "/" in name else re.sub(r"\d+$", "", name)
        for t, r in points:
            grouped[key][t] += r
    return {k: sorted(v.items()) for k, v in grouped.items()}


def mean_in(points: list[tuple[float, float]], a: float, b: float) -> float:
    inside = [r for t, r in points if a <= t <= b]
    return sum(inside) / len(inside) if inside else float("nan")


def rates(out_dir: Path, title: str, link_Bps: float, a_ms: float, b_ms: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grouped = group_flows(read_rates(out_dir))
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for name, points in sorted(grouped.items()):
        ax.plot([t * 1e3 for t, _ in points], [r / link_Bps for _, r in points], label=name)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("rate / link rate")
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(out_dir / f"rates.{ext}")
    print(f"plot: {out_dir / 'rates.png'}")
    print(f"mean rates between {a_ms:g} and {b_ms:g} ms, as a fraction of the link rate:")
    print(f"  {'series':<12} {'rate':>8}")
    for name, points in sorted(grouped.items()):
        print(f"  {name:<12} {mean_in(points, a_ms / 1e3, b_ms / 1e3) / link_Bps:8.3f}")
    summary = out_dir / "summary.json"
    if summary.exists():
        s = json.loads(summary.read_text())
        p = s["packets"]
        print(f"packets: injected {p['injected']}, delivered {p['delivered']}, dropped {p['dropped']}, "
              f"in flight {p['in_flight']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ibvp.plots")
    sub = ap.add_subparsers(dest="kind", required=True)
    r = sub.add_parser("rates", help="rates over time (rates.csv)")
    r.add_argument("out_dir", type=Path)
    r.add_argument("--title", default="rates over time")
    r.add_argument("--link-Bps", type=float, default=1e9, help="link data rate in bytes/s (4X SDR: 1e9)")
    r.add_argument("--window-start-ms", type=float, default=40.0)
    r.add_argument("--window-end-ms", type=float, default=60.0)
    args = ap.parse_args(argv)
    if not (args.out_dir / "rates.csv").exists():
        print(f"{args.out_dir}: no rates.csv (run ibvp-sim with outputs.rate_window > 0)", file=sys.stderr)
        return 2
    rates(args.out_dir, args.title, args.link_Bps, args.window_start_ms, args.window_end_ms)
    return 0


if __name__ == "__main__":
    sys.exit(main())
