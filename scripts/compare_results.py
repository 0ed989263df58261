#!/usr/bin/env python3
"""Runs the scenarios whose results a change to the HCA/host path must keep (issue 15 part 2)
with one build and compares them with another build's runs, table by table.

  scripts/compare_results.py run  --build build      --out /tmp/after
  scripts/compare_results.py run  --build ../main/build --out /tmp/before
  scripts/compare_results.py diff /tmp/before /tmp/after

`run` writes one output directory per scenario (seed 004 Fig. 4(b), 7, 8(a), the examples with
HCA hosts, every configs/perftest config; --only NAME... for some of them, --set KEY=VALUE for
all, e.g. a shorter duration while iterating). `diff` compares every file of each scenario's
directory except run.json (wall-clock time, the only file that differs between identical runs):
CSV, text and pcap byte for byte, summary.json and other JSON as parsed values (without
"wall_seconds" and with firmware image paths cut to the file name, which name the build
directory), Parquet as tables (pyarrow; byte for byte without it). It prints what differs and exits 1 if anything does.
With --loose it also prints, for runs that differ, the packets delivered and each flow's rate
side by side: how a change that is allowed to move results (an order of same-time events)
moved them.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import csv
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCENARIOS = {
    "seed004_fig4b": "configs/seed004/fig4b.yaml",
    "seed004_fig7": "configs/seed004/fig7.yaml",
    "seed004_fig8a": "configs/seed004/fig8a.yaml",
    "connections_hca": "configs/examples/connections_hca.yaml",
    "inband_link_down": "configs/examples/inband_link_down.yaml",
    "inband_qos": "configs/examples/inband_qos.yaml",
    "inband_sm": "configs/examples/inband_sm.yaml",
    "umad_two_switch": "configs/examples/umad_two_switch.yaml",
    "video_hca": "configs/examples/video_hca.yaml",
    "perftest_read_bw": "configs/perftest/read_bw.yaml",
    "perftest_send_bw": "configs/perftest/send_bw.yaml",
    "perftest_send_lat": "configs/perftest/send_lat.yaml",
    "perftest_write_bw": "configs/perftest/write_bw.yaml",
    "perftest_write_lat": "configs/perftest/write_lat.yaml",
}


def run_one(build: Path, name: str, out: Path, sets: list[str]) -> str:
    cmd = [str(build / "ibvp-sim"), str(ROOT / SCENARIOS[name]), "--out", str(out / name), "--quiet"]
    for s in sets:
        cmd += ["--set", s]
    done = subprocess.run(cmd, capture_output=True, text=True)
    return f"{name}: exit {done.returncode}" + (f"\n{done.stderr[-2000:]}" if done.returncode else "")


def cmd_run(args: argparse.Namespace) -> int:
    names = args.only or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        sys.exit(f"unknown scenario(s) {unknown}; known: {', '.join(SCENARIOS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for line in pool.map(lambda n: run_one(args.build.resolve(), n, args.out, args.set), names):
            print(line, flush=True)
            failed += "exit 0" not in line
    return 1 if failed else 0


def same_parquet(a: Path, b: Path) -> bool:
    if a.read_bytes() == b.read_bytes():
        return True
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return False
    ta, tb = pq.read_table(a), pq.read_table(b)
    if ta.schema != tb.schema:
        return False
    # Row by row, NaN equal to NaN (Table.equals counts a NaN as unequal to itself).
    same = lambda x, y: x == y or (isinstance(x, float) and isinstance(y, float) and x != x and y != y)
    return ta.num_rows == tb.num_rows and all(
        all(same(ra[k], rb[k]) for k in ra) for ra, rb in zip(ta.to_pylist(), tb.to_pylist()))


def normalized(j):
    """A JSON value without what differs between builds and runs of one model: wall-clock
    seconds, and the firmware image's path (its build directory) cut to the file name."""
    if isinstance(j, dict):
        return {k: (Path(v).name if k == "image" and isinstance(v, str) else normalized(v))
                for k, v in j.items() if k != "wall_seconds"}
    if isinstance(j, list):
        return [normalized(v) for v in j]
    return j


def same_file(a: Path, b: Path) -> bool:
    if a.suffix == ".parquet":
        return same_parquet(a, b)
    if a.suffix == ".json":
        return normalized(json.loads(a.read_text())) == normalized(json.loads(b.read_text()))
    return a.read_bytes() == b.read_bytes()


def flow_rates(run: Path) -> dict[str, str]:
    """Each flow's delivered rate as flows.csv gives it (the columns present), by flow id."""
    f = run / "flows.csv"
    if not f.exists():
        return {}
    rows = list(csv.DictReader(f.open()))
    if not rows:
        return {}
    key = next((k for k in ("flow", "id", "flow_id") if k in rows[0]), list(rows[0])[0])
    col = next((k for k in rows[0] if "throughput" in k or "rate" in k or "mbps" in k.lower()), None)
    return {r[key]: r[col] for r in rows} if col else {}


def loose_report(a: Path, b: Path) -> None:
    sa, sb = (json.loads((d / "summary.json").read_text()) if (d / "summary.json").exists() else {} for d in (a, b))
    for k in ("packets", "drops", "packet_hops"):
        if k in sa or k in sb:
            print(f"    {k}: {sa.get(k)} -> {sb.get(k)}")
    ra, rb = flow_rates(a), flow_rates(b)
    for flow in sorted(set(ra) | set(rb), key=lambda x: (len(x), x)):
        try:
            x, y = float(ra.get(flow, "nan")), float(rb.get(flow, "nan"))
            rel = f" ({(y - x) / x * 100:+.3f} %)" if x else ""
        except ValueError:
            rel = ""
        print(f"    flow {flow}: {ra.get(flow)} -> {rb.get(flow)}{rel}")


def cmd_diff(args: argparse.Namespace) -> int:
    runs = sorted(d.name for d in args.a.iterdir() if d.is_dir())
    differing = 0
    for name in runs:
        a, b = args.a / name, args.b / name
        if not b.is_dir():
            print(f"{name}: missing in {args.b}")
            differing += 1
            continue
        fa = {p.relative_to(a) for p in a.rglob("*") if p.is_file() and p.name != "run.json"}
        fb = {p.relative_to(b) for p in b.rglob("*") if p.is_file() and p.name != "run.json"}
        bad = sorted(str(p) for p in fa ^ fb)
        bad += sorted(str(p) for p in fa & fb if not same_file(a / p, b / p))
        if bad:
            differing += 1
            print(f"{name}: DIFFERENT: {', '.join(bad)}")
            if args.loose:
                loose_report(a, b)
        else:
            print(f"{name}: identical ({len(fa)} files)")
    return 1 if differing else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run the scenarios with one build")
    r.add_argument("--build", type=Path, required=True, help="build directory holding ibvp-sim")
    r.add_argument("--out", type=Path, required=True, help="one output directory per scenario goes here")
    r.add_argument("--only", nargs="*", help=f"some of: {', '.join(SCENARIOS)}")
    r.add_argument("--set", action="append", default=[], help="KEY=VALUE for every scenario (ibvp-sim --set)")
    r.add_argument("--jobs", type=int, default=2)
    d = sub.add_parser("diff", help="compare two run directories")
    d.add_argument("a", type=Path)
    d.add_argument("b", type=Path)
    d.add_argument("--loose", action="store_true", help="for runs that differ, print packet counts and flow rates")
    args = ap.parse_args()
    return cmd_run(args) if args.cmd == "run" else cmd_diff(args)


if __name__ == "__main__":
    sys.exit(main())
