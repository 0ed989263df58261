#!/usr/bin/env python3
"""Whether two ibvp-sim builds give bit-identical results (issue 17: a speed change must not
change what a scenario computes).

Runs each scenario with both binaries and compares every output file byte for byte, except
run.json, which measures the machine (wall time, memory): of it only the count of model
actions ("events") is compared; and summary.json is compared without its "wall_seconds"
keys (the connection admission's routing time, seed 002). Prints one line per scenario; exits 1 on any
difference.

  bench/compare_outputs.py --before /tmp/ibvp-sim.base --after build/ibvp-sim
  bench/compare_outputs.py --before A --after B --scenario configs/examples/pcap.yaml --set duration=1ms

With no --scenario: the fat-tree cases of run_benchmarks.py (shortened, packets.csv on) and a
set of configs/ scenarios (captures, multicast, lifetimes, adaptive routing, link events,
in-band SM, QoS, HCAs), in both event orders for the fat trees. Set IBVP_FIRMWARE_DIR to one
firmware directory for both builds when they come from different trees.
"""
from __future__ import annotations

import argparse
import filecmp
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


FAT_TREE_TEXT = ("name: tree\nseed: 1\nduration: {span}\ntopology: {{generator: fat_tree, k: {k}, n: {n}}}\n"
                 "routing: minhop\ntraffic: {{generator: poisson, load: {load}, payload_bytes: 256}}\n{extra}")

# (scenario, overrides): short runs of configs/ that together cross the switch's paths the
# per-hop changes touch (captures, multicast, lifetimes, adaptive routing, link events,
# in-band SM, QoS tables, HCAs). The seed000/003/004 figure configs start flows too late to
# be cut short, so they are not here.
CONFIGS = [
    ("configs/examples/minimal.yaml", []),
    ("configs/examples/pcap.yaml", []),
    ("configs/examples/multicast.yaml", []),
    ("configs/examples/lifetimes.yaml", []),
    ("configs/examples/multipath_adaptive.yaml", []),
    ("configs/examples/inband_link_down.yaml", []),
    ("configs/examples/inband_qos.yaml", []),
    ("configs/examples/mix.yaml", []),
    ("configs/seed001/uniform16.yaml", ["duration=200us"]),
    ("configs/seed002/table2_256.yaml", ["warmup=20us", "duration=60us"]),
    ("configs/examples/video.yaml", []),
    ("configs/examples/control.yaml", []),
    ("configs/examples/inband_sm.yaml", []),
    ("configs/examples/connections_hca.yaml", []),
    ("configs/examples/video_hca.yaml", []),
]


def run(binary: str, scenario: Path, overrides: list[str], out: Path) -> str:
    cmd = [binary, str(scenario), "--out", str(out), "--quiet"]
    for o in overrides:
        cmd += ["--set", o]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return f"exit {r.returncode}\n{r.stderr}"


def without_wall(obj):
    if isinstance(obj, dict):
        return {k: without_wall(v) for k, v in obj.items() if k != "wall_seconds"}
    if isinstance(obj, list):
        return [without_wall(v) for v in obj]
    return obj


def compare_dirs(a: Path, b: Path) -> list[str]:
    diffs = []
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    if files_a != files_b:
        diffs.append(f"file lists differ: {set(map(str, files_a)) ^ set(map(str, files_b))}")
    for rel in files_a:
        if rel not in files_b:
            continue
        fa, fb = a / rel, b / rel
        if rel.name == "run.json":
            if json.loads(fa.read_text()).get("events") != json.loads(fb.read_text()).get("events"):
                diffs.append(str(rel))
        elif rel.name == "summary.json":
            if without_wall(json.loads(fa.read_text())) != without_wall(json.loads(fb.read_text())):
                diffs.append(str(rel))
        elif not filecmp.cmp(fa, fb, shallow=False):
            diffs.append(str(rel))
    return diffs


def cases(args) -> list[tuple[str, Path, list[str]]]:
    tmp = Path(tempfile.mkdtemp(prefix="ibvp_cmp_"))
    if args.scenario:
        return [(args.scenario, Path(args.scenario), args.set or [])]
    out = []
    for k, n, span in ((4, 3, "200us"), (4, 4, "50us"), (4, 5, "20us")):
        for load in (0.3, 0.6):
            for order in ("", "event_order: canonical\n"):
                s = tmp / f"tree_{k}_{n}_{load}{'_canonical' if order else ''}.yaml"
                s.write_text(FAT_TREE_TEXT.format(span=span, k=k, n=n, load=load,
                                                  extra="outputs: {packets_csv: true}\n" + order))
                out.append((s.name, s, []))
    for cfg, ov in CONFIGS:
        if (ROOT / cfg).exists():
            out.append((cfg, ROOT / cfg, ov))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="the reference ibvp-sim")
    ap.add_argument("--after", required=True, help="the changed ibvp-sim")
    ap.add_argument("--scenario", help="one scenario instead of the default set")
    ap.add_argument("--set", action="append", help="override for --scenario (key=value)")
    args = ap.parse_args()
    bad = 0
    for name, scenario, overrides in cases(args):
        with tempfile.TemporaryDirectory() as d:
            a, b = Path(d) / "before", Path(d) / "after"
            ra = run(args.before, scenario, overrides, a)
            rb = run(args.after, scenario, overrides, b)
            diffs = [] if ra == rb else [f"exit/stderr differ: {ra!r} vs {rb!r}"]
            if a.exists() or b.exists():
                diffs += compare_dirs(a, b) if a.exists() and b.exists() else ["one run wrote no outputs"]
            nfiles = sum(1 for p in a.rglob("*") if p.is_file()) if a.exists() else 0
            status = "identical" if not diffs else "DIFFERENT: " + ", ".join(diffs)
            print(f"{name}: {nfiles} files, {ra.splitlines()[0]}, {status}", flush=True)
            bad += bool(diffs)
    print(f"{bad} scenario(s) differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
