"""Link balance of a routing (seed 001 Fig. 1(c)): the utilization of every switch-to-switch
link of a sweep's runs, one curve per routing, links sorted from most to least used.

    python -m ibvp.link_balance out/seed001/fig1c --switch-ports 4

Reads `<sweep>/dataset/ports.parquet` (ibvp sweep); a link is one transmitting switch port
with a switch at the other end. The ports table does not name the far end, so the switch
ports are told by number: random_irregular cables ports 1..switch_ports to switches and the
rest to hosts (docs/topology.md). Writes `link_utilization.csv` (every link of every point,
ranked) and `link_utilization.{png,svg}` into the sweep directory, and prints per point the
most used link, the mean and their ratio (1 is a perfect balance).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def link_utilization(sweep_dir: str | Path, switch_ports: int = 4) -> Any:
    """Every switch-to-switch link's transmit utilization, per point of the sweep, ranked
    from the most used (rank 0)."""
    import pandas as pd

    path = Path(sweep_dir) / "dataset" / "ports.parquet"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no ports table; run `ibvp sweep` into {sweep_dir} first")
    ports = pd.read_parquet(path)
    if switch_ports < 1:
        raise ValueError(f"--switch-ports {switch_ports}: give the switch ports cabled to switches (1 or more)")
    hosts = set(ports.loc[~ports["node"].str.startswith("sw"), "node"])
    links = ports[(ports["vl"] == "all") & ~ports["node"].isin(hosts) & (ports["port"] <= switch_ports)].copy()
    links = links.sort_values(["point", "utilization"], ascending=[True, False])
    links["rank"] = links.groupby("point").cumcount()
    return links


def balance(links: Any) -> Any:
    """Per point: links, the most used link's utilization, the mean, and max / mean."""
    g = links.groupby("point", sort=False)["utilization"]
    out = g.agg(links="count", max="max", mean="mean").reset_index()
    out["max_over_mean"] = out["max"] / out["mean"]
    return out


def plot(links: Any, out: Path, title: str | None = None) -> list[Path]:
    from .plots import _figure, _save

    fig, ax = _figure()
    for point, part in links.groupby("point", sort=False):
        ax.plot(part["rank"], part["utilization"], label=str(point))
    ax.set_xlabel("switch-to-switch link (most used first)")
    ax.set_ylabel("utilization")
    ax.set_title(title or "Link utilization")
    ax.legend()
    return _save(fig, out.parent, out.name, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ibvp.link_balance", description=__doc__.splitlines()[0])
    ap.add_argument("directory", type=Path, help="a sweep directory (ibvp sweep)")
    ap.add_argument("--switch-ports", type=int, default=4, help="ports 1..N of a switch lead to switches (4)")
    ap.add_argument("--title")
    args = ap.parse_args(argv)
    try:
        links = link_utilization(args.directory, args.switch_ports)
    except (FileNotFoundError, ValueError) as e:
        print(f"ibvp: {e}", file=sys.stderr)
        return 2
    links.to_csv(args.directory / "link_utilization.csv", index=False)
    for p in plot(links, args.directory / "link_utilization", args.title):
        print(p)
    print(balance(links).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
