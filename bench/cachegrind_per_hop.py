#!/usr/bin/env python3
"""Instructions and cache misses per packet-hop of a fat-tree case, by cachegrind (issue 17).

Runs the fat-tree scenario of run_benchmarks.py for two simulated spans under
`valgrind --tool=cachegrind --cache-sim=yes --LL=1048576,16,64` (the last level set to this
machine's 1 MiB L2 per core) and divides the differences (instructions, L1 data misses, L2
misses) by the difference in packet-hops: elaboration and warm-up cancel out. Counts, not
times, so a loaded machine does not change them.

  bench/cachegrind_per_hop.py --sim build/ibvp-sim --k 4 --n 5 --load 0.3 --spans 20us 40us
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

TEXT = ("name: tree\nseed: 1\nduration: {span}\ntopology: {{generator: fat_tree, k: {k}, n: {n}}}\n"
        "routing: minhop\ntraffic: {{generator: poisson, load: {load}, payload_bytes: 256}}\n"
        "outputs: {{packets_csv: false}}\n")


def measure(sim: str, k: int, n: int, load: float, span: str, keep: str | None) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as d:
        scenario = Path(d) / "tree.yaml"
        scenario.write_text(TEXT.format(span=span, k=k, n=n, load=load))
        out_file = keep or str(Path(d) / "cg.out")
        r = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--LL=1048576,16,64",
                            f"--cachegrind-out-file={out_file}", sim, str(scenario), "--out", str(Path(d) / "r"),
                            "--quiet"], capture_output=True, text=True, check=True)
        hops = json.loads((Path(d) / "r" / "summary.json").read_text())["packet_hops"]

    def count(label: str) -> int:
        m = re.search(rf"{label}:\s+([\d,]+)", r.stderr)
        if not m:
            raise RuntimeError(f"no '{label}' in valgrind's output:\n{r.stderr}")
        return int(m.group(1).replace(",", ""))

    return {"hops": hops, "ir": count("I +refs"), "d1": count("D1  misses"), "ll": count("LL misses")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", required=True)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--n", type=int, default=3)
    ap.add_argument("--load", type=float, default=0.3)
    ap.add_argument("--spans", nargs=2, default=["200us", "400us"])
    ap.add_argument("--keep", help="keep the longer span's cachegrind.out here (for cg_annotate)")
    args = ap.parse_args()
    a = measure(args.sim, args.k, args.n, args.load, args.spans[0], None)
    b = measure(args.sim, args.k, args.n, args.load, args.spans[1], args.keep)
    dh = b["hops"] - a["hops"]
    res = {"case": f"{args.k}-ary {args.n}-tree load {args.load}", "spans": args.spans, "hops": dh,
           "ir_per_hop": (b["ir"] - a["ir"]) / dh, "d1_per_hop": (b["d1"] - a["d1"]) / dh,
           "ll_per_hop": (b["ll"] - a["ll"]) / dh}
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
