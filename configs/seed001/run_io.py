"""seed 001 Figs. 2-4 (Sec. 3.2) with the synthetic disk-I/O stand-in (ibvp.io_trace), or a trace.
--trace FILE: DiskSim ASCII, SNIA MSR CSV, or HP's binary SRT (as cello was distributed);
--format names it when the suffix does not (.csv msr, .srt srt). 32 switches, 23 disks, 20 ms
of compressed time per run; one run per (figure, routing, variant):
  Fig. 2(a), (b): cumulative average message latency, random disks, 1 SL/VL, compression
                  15 and 20; Fig. 2(c): packets waiting per host, compression 20.
  Fig. 3(a-c):    disks random, concentrated, uniform; compression 15; one figure per routing.
  Fig. 4(a-c):    1, 2, 4, 8 SL/VLs, disks on random SLs; compression 15; one per routing.
Each run directory gets timeseries.csv; figures go to OUT/fig{2a,2b,2c,3_<routing>,4_<routing>}.png.
Usage: .venv/bin/python configs/seed001/run_io.py [OUT] [--trace FILE [--format F]] [--jobs N]
"""
from __future__ import annotations

import argparse
import concurrent.futures
from pathlib import Path

import ibvp
from ibvp import io_trace as io
from ibvp.plots import _figure, _save

HERE = Path(__file__).resolve().parent
ROUTINGS = ["updn", "dfs", "smart"]
SPAN_S = 20e-3  # compressed time of every run
STEP_S = 0.5e-3


def workload(requests, placement: str, compression: float, sls: int) -> list[tuple]:
    disks = io.place_disks(32, placement=placement, seed=1)
    return io.io_packets(requests, disks, io.hosts_of(32, disks), compression=compression, sls=sls,
                         until_s=SPAN_S, seed=1)


def run(out: Path, requests, routing: str, placement: str, compression: float, sls: int):
    pk = workload(requests, placement, compression, sls)
    sc = ibvp.Scenario.from_yaml(HERE / "io32.yaml").set("routing", routing)
    sc.set("switch.data_vls", sls).set("endpoint.data_vls", sls).set("duration", f"{SPAN_S * 1e3:g}ms")
    name = f"{routing}_{placement}_c{compression:g}_vl{sls}"
    res = ibvp.run(sc, out / "runs" / name, workload=pk)
    ts = io.time_series(res.packets, STEP_S, workload=pk)
    ts.to_csv(out / "runs" / name / "timeseries.csv", index=False)
    return (routing, placement, compression, sls), ts


def figure(out: Path, name: str, title: str, curves: dict, column: str) -> None:
    fig, ax = _figure()
    scale, unit = (1e-3, "us") if column.endswith("_ns") else (1.0, "packets")
    for label, ts in curves.items():
        ax.plot(ts["time_s"] * 1e3, ts[column] * scale, label=label)
    ax.set_xlabel("simulated time (ms)")
    ax.set_ylabel(("cumulative average message latency" if column.endswith("_ns") else
                   "packets waiting per host") + f" ({unit})")
    ax.set_title(title)
    ax.legend()
    print(*_save(fig, out, name, None), sep="\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", type=Path, default=Path("out/seed001/io"))
    ap.add_argument("--trace", type=Path, help="a block-I/O trace instead of the synthetic stand-in")
    ap.add_argument("--format", default="auto", choices=("auto",) + io.FORMATS,
                    help="the trace's format (auto: by suffix, .csv msr, .srt srt, else disksim)")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    # The stand-in covers the longest compressed span any run needs: 20 ms x 20.
    if args.trace:
        requests = io.read_trace(args.trace, args.format)
    else:
        requests = io.synthetic_requests(SPAN_S * 20, io.DISKS, seed=1, **io.SEED001_STAND_IN)
    points = {(r, "random", c, 1) for r in ROUTINGS for c in (15, 20)}
    points |= {(r, p, 15, 1) for r in ROUTINGS for p in io.PLACEMENTS}
    points |= {(r, "random", 15, v) for r in ROUTINGS for v in (1, 2, 4, 8)}
    args.out.mkdir(parents=True, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        series = dict(pool.map(lambda p: run(args.out, requests, *p), sorted(points)))
    source = f"trace {args.trace.name}" if args.trace else "synthetic stand-in"
    for c, tag in ((15, "2a"), (20, "2b")):
        figure(args.out, f"fig{tag}", f"Fig. 2({tag[1]}): compression {c}, random disks, {source}",
               {r: series[(r, "random", c, 1)] for r in ROUTINGS}, "cumulative_latency_ns")
    figure(args.out, "fig2c", f"Fig. 2(c): compression 20, {source}",
           {r: series[(r, "random", 20, 1)] for r in ROUTINGS}, "waiting_per_host")
    for r in ROUTINGS:
        figure(args.out, f"fig3_{r}", f"Fig. 3: {r}, disk placement, compression 15, {source}",
               {p: series[(r, p, 15, 1)] for p in io.PLACEMENTS}, "cumulative_latency_ns")
        figure(args.out, f"fig4_{r}", f"Fig. 4: {r}, SL/VLs, compression 15, {source}",
               {f"{v} SL/VL": series[(r, "random", 15, v)] for v in (1, 2, 4, 8)}, "cumulative_latency_ns")
    rows = ["routing,placement,compression,sl_vls,final_cumulative_latency_us,max_waiting_per_host"]
    for (r, p, c, v), ts in sorted(series.items()):
        rows.append(f"{r},{p},{c:g},{v},{ts['cumulative_latency_ns'].iloc[-1] / 1e3:.2f},"
                    f"{ts['waiting_per_host'].max():.3f}")
    (args.out / "summary.csv").write_text("\n".join(rows) + "\n")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
