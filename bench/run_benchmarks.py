"""Runs ibvp's benchmarks and records them, with the machine they ran on, in bench/RESULTS.md.

    .venv/bin/python bench/run_benchmarks.py [--runs N] [--build DIR] [--no-write]

(`make bench` runs it.) Three benchmarks, each reported as the median of N runs:

- fabric: `ibvp-bench` (C++): packet-hops per wall second on seed 001's random irregular
  fabrics (16, 32, 64 switches) at 30 % and 70 % load; see bench/fabric_bench.cpp.
- runner overhead: wall time of `ibvp.run()` for a tiny scenario (one switch, two hosts,
  10 us simulated) in a fresh child process, which is the price every Python run pays
  for SystemC's one-kernel-per-process rule. Target: under 0.5 s per run.
- sweep throughput: points per second of an 8-point sweep on a local process pool with
  1 worker and with 2, and the speed-up of 2 over 1.
- instructions per packet-hop: callgrind's instruction count of the 64-switch case at 30 %
  load, as the difference of a 6 ms and a 2 ms run (so elaboration cancels), divided by the
  difference in packet-hops. Unlike wall time it does not move with the machine's load,
  so it is the figure to compare code changes by (needs valgrind; skipped without it).
- routing: wall time of each routing engine's table computation on seed 001's random
  irregular fabrics of 16 to 256 switches (LMC 0), and whether its tables are deadlock-free.
- fat trees (issue 17): packet-hops per second, ns per hop, accepted share and peak RSS on
  4-ary 3-, 4- and 5-trees (64, 256, 1,024 hosts) at 30 % and 60 % uniform load, so every
  change is measured on growing fabrics. `--only fat-tree` runs it alone.
- memory with run length: peak resident memory of seed 004 Fig. 2(a) (`ibvp-sim`, fabric
  endpoints) at 0.2, 1 and 3 s simulated. Results are streaming statistics, so it must stay
  flat: the bytes per delivered packet between the shortest and longest run are the figure
  (85 before issue 18). `--only memory` measures this alone and updates its section.

Speed targets live here, never in timed tests.
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TINY = {
    "name": "tiny", "seed": 1, "duration": "10us",
    "topology": {"generator": "single_switch", "hosts": 2},
    "flows": [{"name": "f", "src": "h1", "dst": "h2", "generator": "constant", "load": 0.5}],
    "outputs": {"packets_csv": False},
}

# One sweep point: a few milliseconds of simulated traffic, about a tenth of a second of work,
# so the pool's speed-up shows and not only its start-up.
SWEEP_POINT = {
    "name": "sweep-point", "seed": 1, "duration": "2ms",
    "topology": {"generator": "random_irregular", "switches": 16},
    "routing": "updn",
    "traffic": {"generator": "poisson", "pattern": "uniform", "load": 0.3, "payload_bytes": 256},
    "outputs": {"packets_csv": False},
}
SWEEP_VARY = {"seed": [1, 2, 3, 4, 5, 6, 7, 8]}


def machine() -> dict[str, str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "unknown"
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f"{kb / 2**20:.0f} GiB"
    except (OSError, AttributeError):
        pass
    cxx = subprocess.run(["c++", "--version"], capture_output=True, text=True).stdout.splitlines()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    return {"cpu": cpu, "cores": str(os.cpu_count()), "memory": mem,
            "os": f"{platform.system()} {platform.release()}", "compiler": cxx[0] if cxx else "unknown",
            "python": platform.python_version(), "commit": commit.stdout.strip() or "unknown",
            "date": date.today().isoformat()}


def fabric(build: Path, runs: int) -> list[dict[str, str]]:
    exe = build / "ibvp-bench"
    if not exe.exists():
        raise SystemExit(f"{exe}: not built; run `make build` first")
    done = subprocess.run([str(exe), "--runs", str(runs)], capture_output=True, text=True)
    sys.stderr.write(done.stderr)
    rows = []
    for line in done.stdout.splitlines():
        if line.startswith("BENCH "):
            print(line, flush=True)
            rows.append(dict(kv.split("=", 1) for kv in line.split()[1:]))
    if done.returncode != 0 or not rows:
        raise SystemExit(f"ibvp-bench failed (exit {done.returncode})")
    return rows


def hca_hosts(build: Path, runs: int) -> dict[str, float]:
    """Seed 004 Fig. 4(b) on HCA hosts (21 RC flows, LIPD firmware, window of one), 50 ms:
    the whole device model per packet (host programs, PCIe, firmware, byte-exact packets)."""
    import json
    import statistics
    import tempfile

    walls, hops, sims = [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([str(build / "ibvp-sim"), str(ROOT / "configs/seed004/fig4b.yaml"), "--set",
                            "duration=50ms", "--set", "flows[20].start=20ms", "--set", "flows[20].stop=40ms",
                            "--out", out, "--quiet"], check=True)
            summary = json.loads((Path(out) / "summary.json").read_text())
            run_info = json.loads((Path(out) / "run.json").read_text())
            walls.append(run_info["wall_seconds"])
            hops.append(summary["packet_hops"])
            sims.append(summary["sim_seconds"])
    wall = statistics.median(walls)
    result = {"wall_s": wall, "packet_hops_per_s": statistics.median(hops) / wall,
              "sim_ms_per_s": statistics.median(sims) * 1e3 / wall}
    print(f"BENCH case=hca_seed004_fig4b wall_s={wall:.3f} packet_hops_per_s={result['packet_hops_per_s']:.0f} "
          f"sim_ms_per_s={result['sim_ms_per_s']:.2f}", flush=True)
    return result


def hca_hosts_section(hca: dict[str, float], note: str = "") -> list[str]:
    return [
        "## HCA hosts: seed 004 Fig. 4(b) (`build/ibvp-sim`, 50 ms simulated)",
        "",
        "21 RC flows driven by host programs through the verbs driver, PCIe, the default firmware with "
        "LIPD and a window of one, byte-exact packets with ICRC; 2 switches. Target (issue 15 part 2): 10x "
        "the 78,380 packet-hops/s measured before part 2 began.",
        "",
        "| packet-hops/s | simulated ms per wall s | wall s |",
        "|---:|---:|---:|",
        f"| {hca['packet_hops_per_s']:,.0f} | {hca['sim_ms_per_s']:.2f} | {hca['wall_s']:.3f} |",
        "",
        *([note, ""] if note else []),
    ]


def runner_overhead(runs: int) -> float:
    import ibvp

    times = []
    with tempfile.TemporaryDirectory() as tmp:
        ibvp.run(ibvp.Scenario(TINY), Path(tmp) / "warm")  # imports and page cache, not measured
        for i in range(runs):
            t0 = time.perf_counter()
            ibvp.run(ibvp.Scenario(TINY), Path(tmp) / f"r{i}")
            times.append(time.perf_counter() - t0)
    median = statistics.median(times)
    print(f"BENCH case=runner_overhead wall_s_per_run={median:.3f}", flush=True)
    return median


def sweep_throughput(runs: int) -> dict[int, float]:
    from ibvp import sweeps

    points = len(SWEEP_VARY["seed"])
    result = {}
    for jobs in (1, 2):
        rates = []
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                rows = sweeps.run_points(SWEEP_POINT, SWEEP_VARY, tmp, jobs=jobs)
                wall = time.perf_counter() - t0
            if any(r["status"] != "ok" for r in rows):
                raise SystemExit(f"sweep benchmark: a point failed: {rows}")
            rates.append(points / wall)
        result[jobs] = statistics.median(rates)
        print(f"BENCH case=sweep_jobs{jobs} points_per_s={result[jobs]:.2f}", flush=True)
    return result


def instructions_per_hop(build: Path) -> float | None:
    import shutil

    if shutil.which("valgrind") is None:
        print("instructions per packet-hop: skipped (no valgrind)", flush=True)
        return None
    counts = {}
    for sim_ms in (2, 6):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "cg.%p"
            done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--trace-children=yes",
                                   str(build / "ibvp-bench"), "--runs", "1", "--sim-ms", str(sim_ms), "--case",
                                   "irregular64_load30"], capture_output=True, text=True)
            line = next(l for l in done.stdout.splitlines() if l.startswith("BENCH "))
            fields = dict(kv.split("=", 1) for kv in line.split()[1:])
            hops = float(fields["packet_hops_per_s"]) * float(fields["wall_s"])
            # The child (the run) has the larger count; the parent only forks and waits.
            ir = max(int(m.group(1).replace(",", "")) for m in re.finditer(r"Collected : ([\d,]+)", done.stderr))
            counts[sim_ms] = (ir, hops)
    per_hop = (counts[6][0] - counts[2][0]) / (counts[6][1] - counts[2][1])
    print(f"BENCH case=irregular64_load30_callgrind instructions_per_packet_hop={per_hop:.0f}", flush=True)
    return per_hop


def hca_instructions_per_hop(build: Path) -> dict[str, float] | None:
    """Seed 004 Fig. 4(b) on HCA hosts under callgrind, 3 and 9 ms simulated (flow 20 on from
    1 to 2 ms, so both runs see every flow): instructions per packet-hop with elaboration and
    start-up cancelled out, and the part of them in ICRC/VCRC (crc32_update, crc16_ib_update)."""
    import json
    import shutil

    if shutil.which("valgrind") is None:
        print("HCA instructions per packet-hop: skipped (no valgrind)", flush=True)
        return None
    counts = {}
    for sim_ms in (3, 9):
        with tempfile.TemporaryDirectory() as tmp:
            cg = Path(tmp) / "cg.out"
            done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}",
                                   str(build / "ibvp-sim"), str(ROOT / "configs/seed004/fig4b.yaml"),
                                   "--set", f"duration={sim_ms}ms", "--set", "flows[20].start=1ms",
                                   "--set", "flows[20].stop=2ms", "--out", str(Path(tmp) / "out"), "--quiet"],
                                  capture_output=True, text=True, check=True)
            ir = int(re.search(r"Collected : ([\d,]+)", done.stderr).group(1).replace(",", ""))
            ann = subprocess.run(["callgrind_annotate", str(cg)], capture_output=True, text=True, check=True).stdout
            crc = sum(int(m.group(1).replace(",", "")) for m in
                      re.finditer(r"^\s*([\d,]+) .*ibvp::ib::(?:crc32_update|crc16_ib_update)\(", ann, re.M))
            hops = json.loads((Path(tmp) / "out" / "summary.json").read_text())["packet_hops"]
            counts[sim_ms] = (ir, crc, hops)
    dh = counts[9][2] - counts[3][2]
    result = {"per_hop": (counts[9][0] - counts[3][0]) / dh, "crc_per_hop": (counts[9][1] - counts[3][1]) / dh}
    print(f"BENCH case=hca_seed004_fig4b_callgrind instructions_per_packet_hop={result['per_hop']:.0f} "
          f"crc_per_packet_hop={result['crc_per_hop']:.0f}", flush=True)
    return result


def hca_instructions_section(res: dict[str, float] | None) -> list[str]:
    if res is None:
        return ["## HCA instructions per packet-hop (`bench/run_benchmarks.py --only hca-callgrind`)", "",
                "Not measured (no valgrind).", ""]
    return [
        "## HCA instructions per packet-hop (`bench/run_benchmarks.py --only hca-callgrind`)",
        "",
        "Seed 004 Fig. 4(b) on HCA hosts under callgrind, 3 and 9 ms simulated (flow 20 from 1 to 2 ms), the "
        "difference over the difference in packet-hops. The figure to compare HCA-path changes by: it does not "
        "drift with the machine's load.",
        "",
        "| | instructions per packet-hop | of them ICRC/VCRC |",
        "|---|---:|---:|",
        "| byte-at-a-time CRC tables (commit cf25f99) | 59,909 | 19,654 |",
        "| slicing-by-8 CRCs (commit 610bb3c) | 50,159 | 9,760 |",
        "| one ICRC per packet end, nothing allocated per packet (commit 3b72846) | 42,148 | 3,209 |",
        "| HCA and host on sim::Scheduler, one order of same-time events (commit 7ceada9) | 47,037 | 3,209 |",
        "| the embedded core runs ahead of the kernel (commit 7486480) | 30,071 | 3,209 |",
        f"| now | {res['per_hop']:,.0f} | {res['crc_per_hop']:,.0f} |",
        "",
        "Slicing-by-8 (issue 15 part 2, `models/ib/crc.cpp`) halves the CRCs' instructions; results are "
        "bit-identical (every CSV and Parquet table and summary.json of the 9 ms run compared, and the ICRC "
        "tests against the spec's bit-serial procedure and a captured ConnectX-4 Lx packet). Then the HCA's "
        "rx and tx engines compute one ICRC per packet end and no VCRC of bytes they have just written, and "
        "allocate nothing per packet; results bit-identical again (seed 004 Fig. 4(b), 7, 8(a), the HCA "
        "examples, every perftest config). zlib's crc32 (Debian's 1.2.13, no carry-less multiply) takes as "
        "many instructions per byte as the slicing-by-8 tables, about 4.3.",
        "",
        "Then (docs/hca.md, \"Execution model\") the HCA's and host CPU's agendas went onto sim::Scheduler and "
        "every timed wait of the core, tx engine and host programs became a Scheduler action (sim::sleep_until): "
        "equal times in the model's (time, FIFO) order instead of the order the SystemC kernel's timed-event "
        "heap gave them, which its shape decided. That was the one change of results (seed 004 Fig. 4(b): "
        "+0.5 % packets, per-flow rates moved by the tie order; perftest bit-identical; docs updated). It costs "
        "more per hop (a thread switch per sleep remains; the Scheduler's heap now holds the HCAs' timers). "
        "Then the embedded core runs ahead of the kernel whenever nothing is pending before the time it "
        "reaches, instead of sleeping per HAL call, and firmware timers enter the heap only when due within "
        "1 us (their order reserved when set); results bit-identical to the order change "
        "(scripts/compare_results.py on Fig. 4(b), 7, 8(a), the HCA examples and every perftest config).",
        "",
        "What remains per hop (callgrind_annotate, 3 and 9 ms differenced): the CRCs, the Scheduler's heap, "
        "the SystemC kernel's thread switches and event triggers for the sleeps left (the host programs' "
        "verbs-call costs, the core when the fabric has an event within its next HAL call, the tx engine, "
        "the core's wake per firmware event), and the HCA, bus, firmware and driver code itself. At 26,800 per "
        "hop (3 and 6 ms differenced, the last commit): the SystemC kernel 10,300 (crunch, event triggers, thread "
        "switches, sc_time conversions, the pending-activity checks of the run-ahead), the Scheduler heap 3,100, "
        "the CRCs 3,200, malloc 700, the models, firmware and driver the rest. The 10x target (about 4,200 per "
        "hop) is not reached: 1.5x so far.",
        "",
    ]


ROUTING_SIZES = (16, 32, 64, 128, 256)


def routing_times(runs: int) -> dict[str, dict[int, str]]:
    """Median seconds of each engine's compute() per fabric size, or why it could not route."""
    import ibvp

    table: dict[str, dict[int, str]] = {}
    for engine in _engines():
        table[engine] = {}
        for n in ROUTING_SIZES:
            doc = {"duration": "1us", "topology": {"generator": "random_irregular", "switches": n},
                   "traffic": {"load": 0.1}}
            times, acyclic = [], True
            try:
                for _ in range(runs):
                    s = ibvp.topology_summary(ibvp.Scenario(doc), routing=engine)
                    times.append(s["routing_seconds"])
                    acyclic = acyclic and s["deadlock"]["acyclic"]
            except ibvp.ConfigError as e:
                table[engine][n] = "refused: " + e.problem.split(" (")[0].split(";")[0]
                continue
            cell = f"{statistics.median(times) * 1e3:.1f} ms" + ("" if acyclic else " (cyclic)")
            table[engine][n] = cell
            print(f"BENCH case=routing_{engine}_{n} seconds={statistics.median(times):.4f} acyclic={acyclic}",
                  flush=True)
    return table


MEMORY_DURATIONS = ("200ms", "1s", "3s")


def memory_growth(build: Path) -> dict[str, tuple[float, int]]:
    """Peak RSS (MB, run.json's peak_rss_bytes: the run's own VmHWM) and delivered packets of
    fig2a at each duration."""
    import json

    result = {}
    for d in MEMORY_DURATIONS:
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([str(build / "ibvp-sim"), str(ROOT / "configs/seed004/fig2a.yaml"), "--set",
                            f"duration={d}", "--out", out, "--quiet"], check=True)
            delivered = json.loads((Path(out) / "summary.json").read_text())["packets"]["delivered"]
            peak = json.loads((Path(out) / "run.json").read_text())["peak_rss_bytes"]
        result[d] = (peak / 2**20, delivered)
        print(f"BENCH case=memory_fig2a_{d} peak_rss_mb={result[d][0]:.1f} delivered={delivered}", flush=True)
    return result


def memory_section(mem: dict[str, tuple[float, int]]) -> list[str]:
    first, last = mem[MEMORY_DURATIONS[0]], mem[MEMORY_DURATIONS[-1]]
    per_packet = (last[0] - first[0]) * 2**20 / max(last[1] - first[1], 1)
    return [
        "## Memory with run length: seed 004 Fig. 2(a) (`build/ibvp-sim --set duration=D`)",
        "",
        "Peak resident memory of one run (`run.json` `peak_rss_bytes`, Linux VmHWM); rates on a 250 us grid, no packets.csv. "
        "Target (issue 18): flat with run length (85 bytes per delivered packet before streaming statistics).",
        "",
        "| simulated | peak RSS MB | packets delivered |",
        "|---|---:|---:|",
        *[f"| {d} | {rss:.1f} | {n:,} |" for d, (rss, n) in mem.items()],
        "",
        f"Growth: **{per_packet:.2f} bytes per delivered packet** between {MEMORY_DURATIONS[0]} and "
        f"{MEMORY_DURATIONS[-1]} (the rate bins: two numbers per 250 us sample and series).",
        "",
    ]


CONNECTION_SWITCHES = (16, 32, 64)


def connection_admission(build: Path, runs: int) -> dict[int, dict[str, float]]:
    """Seed 002's connection manager (configs/seed002/table2_256.yaml) on random irregular
    fabrics of 16 (seed 002's 64 hosts), 32 and 64 switches: admission wall time
    (summary.json admission.wall_seconds), requests, established connections, and memory per
    connection: the peak RSS of the run less that of the same run stopped at one connection,
    over the difference in connections. The runs simulate 20 us only; medians of `runs`."""
    import json
    import statistics

    def once(n: int, extra: list[str]) -> tuple[dict, int]:
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([str(build / "ibvp-sim"), str(ROOT / "configs/seed002/table2_256.yaml"), "--set",
                            f"topology.switches={n}", "--set", "duration=20us", "--set", "warmup=0", *extra,
                            "--out", out, "--quiet"], check=True)
            return (json.loads((Path(out) / "summary.json").read_text())["admission"],
                    json.loads((Path(out) / "run.json").read_text())["peak_rss_bytes"])

    result = {}
    for n in CONNECTION_SWITCHES:
        wall, rss, base_rss = [], [], []
        for _ in range(runs):
            a, peak = once(n, [])
            wall.append(a["wall_seconds"])
            rss.append(peak)
            base_rss.append(once(n, ["--set", "connections.max_connections=1"])[1])
        per_conn = (statistics.median(rss) - statistics.median(base_rss)) / max(a["established"] - 1, 1)
        result[n] = {"hosts": 4 * n, "requests": a["requests"], "established": a["established"],
                     "wall_s": statistics.median(wall), "us_per_request": statistics.median(wall) / a["requests"] * 1e6,
                     "bytes_per_connection": per_conn}
        print(f"BENCH case=connections_{n} " + " ".join(f"{k}={v}" for k, v in result[n].items()), flush=True)
    return result


def connection_section(res: dict[int, dict[str, float]], runs: int) -> list[str]:
    m = machine()
    return [
        "## Connection admission: seed 002 (`bench/run_benchmarks.py --only connections`)",
        "",
        f"configs/seed002/table2_256.yaml (ten SLs of Table 1, 256-byte packets, 1000 refusals in a row, 80 %) on "
        f"random irregular fabrics; median of {runs} runs; machine: {m.get('cpu', '?')}. Memory per connection: "
        "peak RSS less that of the same run stopped at one connection, over the connections (the list, the "
        "paths, every port's admission records and the CBR sources).",
        "",
        "| switches | hosts | requests | established | admission s | us per request | bytes per connection |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        *[f"| {n} | {r['hosts']} | {r['requests']:,} | {r['established']:,} | {r['wall_s']:.2f} | "
          f"{r['us_per_request']:.2f} | {r['bytes_per_connection']:.0f} |" for n, r in res.items()],
        "",
        "Established connections per packet size on seed 002's 64-host fabric, with the traffic they carry: "
        "docs/seed002.md (Table 2).",
        "",
    ]


ELABORATION_TREES = ((8, 2), (8, 3), (8, 4))  # k-ary n-trees: 64, 512 and 4,096 hosts


def elaboration(build: Path, runs: int) -> dict[str, dict[str, float]]:
    """What building a large fabric costs: 8-ary n-trees run for 2 us of light Poisson load, so
    the wall time is mostly elaboration. Wall seconds of the whole ibvp-sim process and its
    peak RSS (run.json), medians of `runs`. Before the fabric's target sockets were
    passthrough sockets, the 4,096-host tree failed with SystemC E518 (issue 17)."""
    import json
    import statistics

    result = {}
    for k, n in ELABORATION_TREES:
        wall, rss = [], []
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as out:
                scenario = Path(out) / "tree.yaml"
                scenario.write_text(f"name: tree\nseed: 1\nduration: 2us\ntopology: {{generator: fat_tree, k: {k}, n: {n}}}\n"
                                    "traffic: {generator: poisson, load: 0.1, payload_bytes: 256}\n"
                                    "outputs: {packets_csv: false}\n")
                t0 = time.perf_counter()
                subprocess.run([str(build / "ibvp-sim"), str(scenario), "--out", str(Path(out) / "r"), "--quiet"],
                               check=True)
                wall.append(time.perf_counter() - t0)
                rss.append(json.loads((Path(out) / "r" / "run.json").read_text())["peak_rss_bytes"])
        name = f"{k}-ary {n}-tree"
        result[name] = {"hosts": k ** n, "wall_s": statistics.median(wall), "peak_rss_mb": statistics.median(rss) / 2**20}
        print(f"BENCH case=elaboration_{k}_{n} " + " ".join(f"{a}={b}" for a, b in result[name].items()), flush=True)
    return result


def elaboration_section(res: dict[str, dict[str, float]], runs: int) -> list[str]:
    m = machine()
    return [
        "## Large fabrics: building and a 2 us run (`bench/run_benchmarks.py --only elaboration`)",
        "",
        f"`ibvp-sim` on generated fat trees (4X SDR, one host per leaf port, Poisson load 0.1, 256-byte payloads), "
        f"2 us simulated, so the time is mostly elaboration; median of {runs} runs; machine: {m.get('cpu', '?')}. "
        "Until the fabric's target sockets became passthrough sockets, the 4,096-host tree failed with SystemC E518 "
        "(a thread stack per socket, over vm.max_map_count). Issue 17's targets: flat cost per port.",
        "",
        "| fabric | hosts | wall s | peak RSS MB | RSS KB per host |",
        "|---|---:|---:|---:|---:|",
        *[f"| {name} | {r['hosts']:,} | {r['wall_s']:.2f} | {r['peak_rss_mb']:.0f} | "
          f"{r['peak_rss_mb'] * 1024 / r['hosts']:.0f} |" for name, r in res.items()],
        "",
    ]


FAT_TREES = ((4, 3, "2ms"), (4, 4, "500us"), (4, 5, "100us"))  # k, n, simulated span
FAT_TREE_LOADS = (0.3, 0.6)


def fat_trees(build: Path, runs: int) -> dict[str, dict[str, float]]:
    """Issue 17's cases: k-ary n-trees of 64, 256 and 1,024 hosts, min-hop routing, uniform
    Poisson traffic of 256-byte payloads at 30 % and 60 % of the link rate, one VL. Spans are
    chosen so each run makes one to two million packet-hops. Packet-hops per wall second of
    the simulation (run.json, elaboration excluded), the accepted share of the offered bytes
    (a fabric that saturates below its load makes every speed figure meaningless), peak RSS;
    medians of `runs`."""
    import json

    result = {}
    for k, n, span in FAT_TREES:
        for load in FAT_TREE_LOADS:
            rates, rss, walls, accepted, allocated = [], [], [], [], []
            for _ in range(runs):
                with tempfile.TemporaryDirectory() as out:
                    scenario = Path(out) / "tree.yaml"
                    scenario.write_text(f"name: tree\nseed: 1\nduration: {span}\n"
                                        f"topology: {{generator: fat_tree, k: {k}, n: {n}}}\nrouting: minhop\n"
                                        f"traffic: {{generator: poisson, load: {load}, payload_bytes: 256}}\n"
                                        "outputs: {packets_csv: false}\n")
                    subprocess.run([str(build / "ibvp-sim"), str(scenario), "--out", str(Path(out) / "r"), "--quiet"],
                                   check=True)
                    run = json.loads((Path(out) / "r" / "run.json").read_text())
                    summary = json.loads((Path(out) / "r" / "summary.json").read_text())
                    rates.append(run["packet_hops_per_s"])
                    walls.append(run["wall_seconds"])
                    rss.append(run["peak_rss_bytes"])
                    allocated.append(run.get("packets_allocated", 0))
                    t = summary["traffic"]
                    accepted.append(t["delivered_bytes"] / max(1, t["injected_bytes"]))
                    hops = summary["packet_hops"]
            name = f"{k}-ary {n}-tree, load {load}"
            result[name] = {"hosts": k ** n, "span": span, "packet_hops": hops,
                            "packet_hops_per_s": statistics.median(rates), "wall_s": statistics.median(walls),
                            "ns_per_hop": 1e9 * statistics.median(walls) / max(1, hops),
                            "accepted": statistics.median(accepted), "peak_rss_mb": statistics.median(rss) / 2**20,
                            "peak_packets": statistics.median(allocated)}
            print(f"BENCH case=fat_tree_{k}_{n}_{load} " + " ".join(f"{a}={b}" for a, b in result[name].items()),
                  flush=True)
    return result


def fat_tree_section(res: dict[str, dict[str, float]], runs: int) -> list[str]:
    m = machine()
    return [
        "## Fat trees: packet-hops per second as the fabric grows (`bench/run_benchmarks.py --only fat-tree`)",
        "",
        f"`ibvp-sim` on k-ary n-trees (4X SDR, one host per leaf port, min-hop routing), uniform Poisson traffic of "
        f"256-byte payloads, one VL; wall time of the simulation alone (run.json); median of {runs} runs; machine: "
        f"{m.get('cpu', '?')}. \"accepted\": delivered over injected bytes (under 1 while the fabric still holds "
        "packets at the end, far under 1 when it saturates). Issue 17's targets: wall time per hop flat as the "
        "fabric grows, 1,024 hosts at 50 % for 10 ms in under 60 s.",
        "",
        "| case | hosts | simulated | packet-hops | packet-hops/s | ns per hop | accepted | peak RSS MB | packets in flight (peak) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        *[f"| {name} | {r['hosts']:,} | {r['span']} | {r['packet_hops']:,} | {r['packet_hops_per_s']:,.0f} | "
          f"{r['ns_per_hop']:.0f} | {r['accepted']:.3f} | {r['peak_rss_mb']:.0f} | {r['peak_packets']:,.0f} |"
          for name, r in res.items()],
        "",
    ]



def calibration(build: Path) -> dict[str, dict]:
    """The perftest configs on hca.profile connectx4_edr (docs/hca.md, Hardware profiles):
    simulated results, deterministic, so one run each (issue 15 part 1's targets)."""
    import json
    import tempfile

    res: dict[str, dict] = {}
    for test, sizes in (("send_lat", [32, 32768]), ("write_bw", [8388608]), ("send_bw", [8388608]),
                        ("read_bw", [65536, 1048576, 8388608])):
        with tempfile.TemporaryDirectory() as tmp:
            # The committed config with a list of sizes instead of its range.
            text = (ROOT / f"configs/perftest/{test}.yaml").read_text().splitlines()
            text = [f"  sizes: {sizes}" if l.startswith("  min_bytes:") else l for l in text
                    if not l.startswith("  max_bytes:")]
            scenario = Path(tmp) / f"{test}.yaml"
            scenario.write_text("\n".join(text) + "\n")
            out = Path(tmp) / "out"
            subprocess.run([str(build / "ibvp-sim"), str(scenario), "--out", str(out), "--quiet"], check=True)
            rows = json.loads((out / "summary.json").read_text())["perftest"]["rows"]
        res[test] = {r["bytes"]: r for r in rows}
        print(f"BENCH case=calibration_{test} " + " ".join(
            f"{b}={r.get('t_typical_us', r.get('bw_avg_MBps'))}" for b, r in res[test].items()), flush=True)
    return res


def calibration_section(res: dict[str, dict]) -> list[str]:
    # 4X EDR: 100 Gb/s of data; an RC packet of 4096 payload bytes takes 4122 on the wire.
    link = 12.5e9 * 4096 / 4122 / 2**20
    lat = res["send_lat"]
    lines = [
        "## HCA calibration: perftest on hca.profile connectx4_edr (`bench/run_benchmarks.py --only calibration`)",
        "",
        "`configs/perftest/*.yaml` (two HCA hosts back to back, 4X EDR, PCIe Gen3 x16, inline up to 188 bytes in "
        "the latency tests), simulated time, so one run each. Targets (issue 15 part 1): ib_send_lat between two "
        "ConnectX-4 EDR HCAs back to back (RC, median) within 10 %; write_bw within 2 % of the link's payload rate "
        f"({link:.0f} MB/s, perftest's MB = 2^20 bytes); read_bw no longer 4.5 % short.",
        "",
        "| case | simulated | target | off by |",
        "|---|---:|---:|---:|",
        f"| send_lat 32 B, t_typical | {lat[32]['t_typical_us']:.3f} us | 0.83 us | "
        f"{100 * (lat[32]['t_typical_us'] / 0.83 - 1):+.1f} % |",
        f"| send_lat 32 KiB, t_typical | {lat[32768]['t_typical_us']:.3f} us | 4.56 us | "
        f"{100 * (lat[32768]['t_typical_us'] / 4.56 - 1):+.1f} % |",
    ]
    for test in ("write_bw", "send_bw", "read_bw"):
        for b, r in res[test].items():
            lines.append(f"| {test} {b} B | {r['bw_avg_MBps']:.1f} MB/s | {link:.0f} MB/s | "
                         f"{100 * (r['bw_avg_MBps'] / link - 1):+.2f} % |")
    lines += ["", "Before (commit b6a67c2: no inline, no BlueFlame, 100/10 firmware cycles, through one switch): "
              "send_lat 2.132 us at 32 B and 5.331 us at 32 KiB; read_bw 11334.6 MB/s at 8 MiB (-4.3 %): the "
              "responder read a whole READ response before its first packet left, one message time per run "
              "(docs/hca.md).", ""]
    return lines


MPI_TREE = (4, 5, "20us")  # issue 17: the 1,024-host fat tree at 50 % load
MPI_RANKS = (1, 2, 4)


def mpi_split(build: Path, runs: int) -> dict[int, dict[str, float]] | None:
    """Issue 17's split runs: `mpirun -n N ibvp-split-bench` (bench/split_bench.cpp) on the
    4-ary 5-tree at 50 % load, event_order canonical, 1, 2 and 4 ranks. Per rank count: the
    slowest rank's simulation wall time (median of `runs`), the busiest rank's CPU time in its
    windows (median), windows, actions per rank and messages across the cut, and the load
    average before each rank count's runs. Open MPI busy-polls while it waits unless told
    to yield; on a machine other jobs share, mpi_yield_when_idle=1 (docs/parallel.md)."""
    import shutil

    bench = build / "ibvp-split-bench"
    if shutil.which("mpirun") is None or not bench.exists():
        print("mpi: skipped (no mpirun, or ibvp-split-bench not built: MPI not found)", flush=True)
        return None
    k, n, span = MPI_TREE
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_mpi_yield_when_idle=os.environ.get("OMPI_MCA_mpi_yield_when_idle", "1"))
    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        scenario = Path(tmp) / "tree.yaml"
        scenario.write_text(f"name: tree\nseed: 1\nduration: {span}\nevent_order: canonical\n"
                            f"topology: {{generator: fat_tree, k: {k}, n: {n}}}\nrouting: minhop\n"
                            "traffic: {generator: poisson, load: 0.5, payload_bytes: 256}\n"
                            "outputs: {packets_csv: false}\n")
        for ranks in MPI_RANKS:
            walls, cpus, last = [], [], None
            load = os.getloadavg()[0]
            for _ in range(runs):
                done = subprocess.run(["mpirun", "-n", str(ranks), "--oversubscribe", str(bench), str(scenario)],
                                      env=env, capture_output=True, text=True, check=True)
                total = dict(re.findall(r"(\w+)=([\d.]+)", next(l for l in done.stdout.splitlines()
                                                                  if l.startswith("SPLIT ranks="))))
                per_rank = [dict(re.findall(r"(\w+)=([\d.]+)", l)) for l in done.stderr.splitlines()
                            if l.startswith("SPLIT rank=")]
                walls.append(float(total["wall_s"]))
                cpus.append(max(float(r["run_cpu_s"]) for r in per_rank))
                last = (total, per_rank)
            total, per_rank = last
            result[ranks] = {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus), "load": load,
                             "walls": "/".join(f"{w:.2f}" for w in walls), "windows": int(per_rank[0]["windows"]),
                             "events": "/".join(r["events"] for r in sorted(per_rank, key=lambda r: int(r["rank"]))),
                             "sent": sum(int(r["sent"]) for r in per_rank), "packet_hops": int(total["packet_hops"]),
                             "delivered": int(total["delivered"])}
            print(f"BENCH case=mpi_{k}_{n}_ranks{ranks} " + " ".join(f"{a}={b}" for a, b in result[ranks].items()),
                  flush=True)
    return result


def mpi_section(res: dict[int, dict[str, float]] | None, runs: int) -> list[str]:
    head = "## Runs split across processes (`bench/run_benchmarks.py --only mpi`)"
    if res is None:
        return [head, "", "Not measured: no mpirun or no MPI build.", ""]
    m = machine()
    one = res[min(res)]["wall_s"]
    return [
        head, "",
        f"`mpirun -n N ibvp-split-bench` on the {4 ** 5:,}-host 4-ary 5-tree, uniform Poisson load 0.5, 256-byte "
        f"payloads, event_order canonical, {MPI_TREE[2]} simulated, mpi_yield_when_idle=1; slowest rank's wall time "
        f"of the run (elaboration excluded), median of {runs}; the busiest rank's CPU time in its windows (median); "
        f"load: the 1-minute load average before the runs; machine: {m.get('cpu', '?')}, {m.get('cores', '?')} cores; "
        f"commit {m.get('commit', '?')}, {m.get('date', '?')}. "
        "Issue 17's target: 1.7x on 2 ranks.", "",
        "| ranks | wall s | runs | speed-up | busiest rank's CPU s | load | windows | actions per rank | messages across the cut | packet-hops | delivered |",
        "|---:|---:|---|---:|---:|---:|---:|---|---:|---:|---:|",
        *[f"| {n} | {r['wall_s']:.2f} | {r['walls']} | {one / r['wall_s']:.2f}x | {r['cpu_s']:.2f} | {r['load']:.1f} | "
          f"{r['windows']:,} | {r['events']} | {r['sent']:,} | {r['packet_hops']:,} | {r['delivered']:,} |"
          for n, r in res.items()],
        "",
    ]


def update_section(path: Path, section: list[str]) -> None:
    """Replaces the section whose heading matches section[0]'s up to the next `## ` heading."""
    text = path.read_text().splitlines()
    head = section[0].split(":")[0]
    start = next((i for i, l in enumerate(text) if l.startswith(head)), None)
    if start is None:
        text += [""] + section
    else:
        end = next((i for i in range(start + 1, len(text)) if text[i].startswith("## ")), len(text))
        text[start:end] = section
    path.write_text("\n".join(text).rstrip("\n") + "\n")
    print(f"updated: {path}")


def _engines() -> list[str]:
    import ibvp

    return ibvp.schema()["properties"]["routing"]["enum"]


def write_results(path: Path, m: dict[str, str], runs: int, fab: list[dict[str, str]], overhead: float,
                  sweep: dict[int, float], routing: dict[str, dict[int, str]], per_hop: float | None,
                  hca: dict[str, float], mem: dict[str, tuple[float, int]]) -> None:
    lines = [
        "# Benchmark results",
        "",
        "Written by `make bench` (`bench/run_benchmarks.py`); each figure is the median of "
        f"{runs} runs. Targets are checked here, never in timed tests.",
        "",
        "## Machine",
        "",
        "| | |", "|---|---|",
        *[f"| {k} | {v} |" for k, v in m.items()],
        "",
        "## Fabric: packet-hops per wall second (`build/ibvp-bench --runs N`)",
        "",
        "Seed 001's random irregular fabrics (8-port switches, 4 to switches, 4 to hosts), 1X SDR "
        "links, up*/down* routing, uniform Poisson traffic of 256-byte payloads, 20 ms simulated (wall time counts "
        "simulation, not elaboration), "
        "one core. Target (foundation issue): 2 million packet-hops per second for 64 switches.",
        "",
        "| case | packet-hops/s | events/s | wall s | peak RSS MB |",
        "|---|---:|---:|---:|---:|",
        *[f"| {r['case']} | {int(r['packet_hops_per_s']):,} | {int(r['events_per_s']):,} | {r['wall_s']} | "
          f"{r['peak_rss_mb']} |" for r in fab],
        "",
        "Instructions per packet-hop (callgrind, 64 switches, 30 % load, elaboration cancelled "
        "out): " + (f"**{per_hop:.0f}**" if per_hop else "not measured (no valgrind)") + ". Wall-clock "
        "figures on this virtual machine drift by up to 30 % from minute to minute; this one does not.",
        "",
        *hca_hosts_section(hca),
        *memory_section(mem),
        "## Python: child-process runner and sweeps",
        "",
        "| case | result | target |",
        "|---|---:|---|",
        f"| `ibvp.run()` of a tiny scenario in a fresh child (wall s per run) | {overhead:.3f} | < 0.5 s |",
        f"| sweep of 8 points, 1 worker (points/s) | {sweep[1]:.2f} | |",
        f"| sweep of 8 points, 2 workers (points/s) | {sweep[2]:.2f} | |",
        f"| speed-up of 2 workers over 1 | {sweep[2] / sweep[1]:.2f}x | close to 2 on 2 cores |",
        "",
        "## Routing: table computation time (`ibvp.topology_summary`, `routing_seconds`)",
        "",
        "Random irregular fabrics of seed 001 (seed 1), every endpoint LMC 0; \"(cyclic)\": the tables' "
        "channel dependency graph has a cycle (minhop on irregular fabrics, as expected).",
        "",
        "| engine | " + " | ".join(f"{n} switches" for n in ROUTING_SIZES) + " |",
        "|---|" + "---:|" * len(ROUTING_SIZES),
        *[f"| {e} | " + " | ".join(cells[n] for n in ROUTING_SIZES) + " |" for e, cells in routing.items()],
        "",
    ]
    path.write_text("\n".join(lines))
    print(f"written: {path}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="runs per figure (the median is kept)")
    ap.add_argument("--build", type=Path, default=ROOT / "build", help="CMake build directory with ibvp-bench")
    ap.add_argument("--no-write", action="store_true", help="print only; leave bench/RESULTS.md as it is")
    ap.add_argument("--only", choices=["memory", "connections", "hca", "hca-callgrind", "elaboration", "fat-tree", "calibration", "mpi"], help="measure one benchmark and update only its section")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if args.only == "connections":
        res = connection_admission(args.build, args.runs)
        if not args.no_write:
            update_section(ROOT / "bench" / "RESULTS.md", connection_section(res, args.runs))
        return 0
    if args.only == "hca":
        load = os.getloadavg()[0]
        res = hca_hosts(args.build, args.runs)
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip() or "unknown"
        if not args.no_write:
            # The wall clock drifts with the machine's load (up to 30 % here): say what it was.
            update_section(ROOT / "bench" / "RESULTS.md", hca_hosts_section(
                res, f"Median of {args.runs} runs at commit {commit}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
                     f"load average {load:.1f} on the machine's cores before the runs: the wall-clock figure "
                     "moves with the load; the callgrind figure below is the one to compare code changes by."))
        return 0
    if args.only == "hca-callgrind":
        res = hca_instructions_per_hop(args.build)
        if not args.no_write:
            update_section(ROOT / "bench" / "RESULTS.md", hca_instructions_section(res))
        return 0
    if args.only == "elaboration":
        res = elaboration(args.build, args.runs)
        if not args.no_write:
            update_section(ROOT / "bench" / "RESULTS.md", elaboration_section(res, args.runs))
        return 0
    if args.only == "fat-tree":
        res = fat_trees(args.build, args.runs)
        if not args.no_write:
            update_section(ROOT / "bench" / "RESULTS.md", fat_tree_section(res, args.runs))
        return 0
    if args.only == "mpi":
        res = mpi_split(args.build, args.runs)
        if not args.no_write:
            update_section(ROOT / "bench" / "RESULTS.md", mpi_section(res, args.runs))
        return 0
    if args.only == "calibration":
        res = calibration(args.build)
        if not args.no_write:
            update_section(ROOT / "bench" / "RESULTS.md", calibration_section(res))
        return 0
    if args.only == "memory":
        mem = memory_growth(args.build)
        if not args.no_write:
            update_section(ROOT / "bench" / "RESULTS.md", memory_section(mem))
        return 0
    m = machine()
    fab = fabric(args.build, args.runs)
    overhead = runner_overhead(args.runs)
    sweep = sweep_throughput(max(1, args.runs // 2))
    routing = routing_times(max(1, args.runs // 2))
    per_hop = instructions_per_hop(args.build)
    hca = hca_hosts(args.build, args.runs)
    hca_cg = hca_instructions_per_hop(args.build)
    mem = memory_growth(args.build)
    elab = elaboration(args.build, max(1, args.runs // 2))
    trees = fat_trees(args.build, max(1, args.runs // 2))
    if not args.no_write:
        write_results(ROOT / "bench" / "RESULTS.md", m, args.runs, fab, overhead, sweep, routing, per_hop, hca, mem)
        update_section(ROOT / "bench" / "RESULTS.md", hca_instructions_section(hca_cg))
        update_section(ROOT / "bench" / "RESULTS.md", elaboration_section(elab, max(1, args.runs // 2)))
        update_section(ROOT / "bench" / "RESULTS.md", fat_tree_section(trees, max(1, args.runs // 2)))
        update_section(ROOT / "bench" / "RESULTS.md", calibration_section(calibration(args.build)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
