"""Saturation throughput: where accepted traffic stops following offered traffic.

    res = ibvp.saturate("configs/seed001/uniform32.yaml",
                        {"routing": ["updn", "dfs", "smart"], "topology.seed": range(1, 11)},
                        out="out/uniform32", jobs=2)
    res.searches                       # one row per (routing, topology seed): the saturation point
    res.points                         # every load probed, all searches together
    ibvp.saturation.factors(res.searches, "dfs", "updn")   # seed 001 Table 1's min/max/avg

The scenario's `traffic` section makes every endpoint send (docs/parameters.md); a search
varies `traffic.load`, the offered load of every endpoint as a fraction of its link's data
rate in wire bytes (LRH to VCRC). One search per point of the cross product of `vary`.

Definition (docs/seed001.md). Seed 001 measures "accepted traffic ... the amount of
information delivered by the network per time unit" (Sec. 2, note 2) and compares routings
by their network throughput, the highest accepted traffic, without a stated saturation
rule. A load is *sustained* when the traffic delivered to the hosts between the warm-up and
the end (summary.json's traffic block, from the port counters) is at least (1 - tolerance)
of the offered load; above saturation the sources' queues grow without bound and delivery
falls behind. Sustained is taken to be monotone in the load, so the saturation load is found
by bisection: the highest sustained load is `lo`, the lowest unsustained one `hi`, until
`hi - lo <= resolution * hi`. The search's throughput is the accepted traffic at `lo`.
Tolerance covers the Poisson sources' noise over the measured span; a fabric past its
saturation delivers less than it offers by far more (seed 001's up*/down* on 32 switches
delivers 0.056 of 0.5 offered).

Units. ibvp's own: delivered payload bytes per second (`throughput_Bps_total`, packets
created after the warm-up), and wire bytes per cycle per node (a cycle is one byte time of
the host link's data rate, 4 ns on 1X SDR; seed 002's Table 2 unit). The paper's:
flits/cycle/switch, here with a flit of one byte and the same cycle, i.e. bytes per cycle
per node times hosts per switch; and bytes/ns/switch.

Layout of `out` (a sweep directory: marker .ibvp-sweep): `<search>/<step>_load=<x>/` per
probe (a run directory), `points.csv`/`.parquet` (every probe), `saturation.csv`/`.parquet`
(one row per search), and `factors.csv` when `compare` pairs are given. Each run is
deterministic, so a search and its table are too, whatever `jobs` is.
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .errors import ConfigError, DeadlockError, RunTimeout
from .scenario import Scenario

LOAD_KEY = "traffic.load"
HOTSPOTS = "hotspots"  # pseudo key of `vary`: how many hot-spot hosts (0: uniform traffic)
SEARCH_MARKER = ".ibvp-saturation-search"
BYTE_TIME_NS_1X = 4.0  # a cycle: one byte of data on a 1X SDR link (2 Gb/s after 8b/10b)

POINT_COLUMNS = [
    "step", "load", "status", "sustained", "offered_bytes_per_cycle_per_node", "accepted_bytes_per_cycle_per_node",
    "accepted_flits_per_cycle_per_switch", "accepted_bytes_per_ns_per_switch", "throughput_Bps_total",
    "latency_mean_ns", "delivered", "in_flight", "error", "dir",
]
SEARCH_COLUMNS = [
    "status", "saturated", "saturation_load", "unsustained_load", "throughput_bytes_per_cycle_per_node",
    "throughput_flits_per_cycle_per_switch", "throughput_bytes_per_ns_per_switch", "throughput_Bps_total",
    "max_accepted_flits_per_cycle_per_switch", "latency_mean_ns", "probes", "switches", "hosts", "hotspot_hosts",
    "error",
]
VALUE = "throughput_flits_per_cycle_per_switch"

Report = Callable[[dict[str, Any]], None]


@dataclass
class SaturationResults:
    """The tables of a saturation run (pandas DataFrames) and where they are."""
    out_dir: Path
    searches: Any
    points: Any
    factors: Any = None


def saturate(scenario: Scenario | Mapping[str, Any] | str | os.PathLike, vary: Mapping[str, Sequence[Any]] | None,
             out: str | os.PathLike, *, lo: float = 0.0, hi: float = 1.0, tolerance: float = 0.05,
             resolution: float = 0.05, jobs: int | None = None, timeout: float | None = None,
             compare: Sequence[tuple[str, str]] = (), report: Report | None = None) -> SaturationResults:
    """One saturation search per point of the cross product of `vary` ({key path: values};
    the key `hotspots` is a number of hot-spot hosts drawn per search, see hotspot_hosts).
    `lo`, `hi`: the first bracket of the load (lo is taken as sustained without a run when
    0); `tolerance`: the shortfall of accepted below offered traffic that still counts as
    sustained; `resolution`: the bracket's final width relative to its top; `jobs`: searches
    at once (default: CPU count); `timeout`: wall seconds per run; `compare`: (a, b) routing
    pairs whose throughput factors go into factors.csv; `report(row)` per finished probe."""
    import pandas as pd

    from .runner import claim_output_dir
    from .sweeps import cross_product, point_name

    check_bounds(lo, hi, tolerance, resolution)
    out_dir = Path(out).resolve()
    claim_output_dir(out_dir, "sweep", inputs=[scenario] if isinstance(scenario, (str, os.PathLike)) else [])
    base = Scenario.coerce(scenario)
    if not isinstance(base.get("traffic"), Mapping):
        raise _config_error(base, "traffic", f"a saturation search varies {LOAD_KEY}, the load of every endpoint, "
                            "and the scenario has no traffic section",
                            "add a traffic section, e.g. traffic: {pattern: uniform, payload_bytes: 32}")
    vary = dict(vary or {})
    keys = list(vary)
    specs = []
    for params in cross_product(vary) if vary else [{}]:
        sc = base.copy()
        for key, value in params.items():
            if key != HOTSPOTS:
                sc.set(key, value)  # a bad key path fails here, before anything runs
        hot = apply_hotspots(sc, int(params.get(HOTSPOTS, 0) or 0)) if HOTSPOTS in params else []
        info = sc.validate()  # the whole scenario, before any run
        name = point_name(params) if params else "base"
        specs.append({"params": params, "scenario": sc, "dir": out_dir / name, "info": info, "hot": hot})
    _remove_stale_searches(out_dir, {s["dir"].name for s in specs})

    points: list[dict[str, Any]] = []
    searches: list[dict[str, Any]] = []

    def one(spec: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        return search(spec, lo=lo, hi=hi, tolerance=tolerance, resolution=resolution, timeout=timeout,
                      report=report)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs or os.cpu_count() or 1)) as pool:
        results = list(pool.map(one, specs))  # in the order of the cross product
    for row, probes in results:
        searches.append(row)
        points.extend(probes)
    search_table = pd.DataFrame(searches, columns=[*keys, "search", *SEARCH_COLUMNS])
    point_table = pd.DataFrame(points, columns=[*keys, "search", *POINT_COLUMNS])
    for table, name in ((search_table, "saturation"), (point_table, "points")):
        _write(table, out_dir / name, keys)
    factor_table = None
    if compare:
        factor_table = pd.concat([factors(search_table, a, b) for a, b in compare], ignore_index=True)
        _write(factor_table, out_dir / "factors", [])
    return SaturationResults(out_dir, search_table, point_table, factor_table)


def check_bounds(lo: float, hi: float, tolerance: float, resolution: float) -> None:
    if not 0.0 <= lo < hi <= 1.0:
        raise ValueError(f"load bracket [{lo}, {hi}]: give 0 <= lo < hi <= 1 (fractions of the link's data rate)")
    if not 0.0 < tolerance < 1.0:
        raise ValueError(f"tolerance {tolerance}: give a fraction between 0 and 1, e.g. 0.05")
    if not 0.0 < resolution < 1.0:
        raise ValueError(f"resolution {resolution}: give a fraction between 0 and 1, e.g. 0.05")


def search(spec: dict[str, Any], *, lo: float, hi: float, tolerance: float, resolution: float,
           timeout: float | None = None, report: Report | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Bisection on the offered load of one scenario: returns (search row, probe rows)."""
    from .sweeps import _remove

    search_dir: Path = spec["dir"]
    # Inside the claimed directory: this search's own from an earlier run, or a point of
    # an earlier ibvp sweep of the same name. A link is removed, never followed.
    _remove(search_dir)
    search_dir.mkdir(parents=True)
    (search_dir / SEARCH_MARKER).write_text("")
    info = spec["info"]
    switches, hosts = int(info["switches"]), int(info["endpoints"])
    front = {**{k: _cell(v) for k, v in spec["params"].items()}, "search": search_dir.name}
    probes: list[dict[str, Any]] = []

    def probe(load: float) -> dict[str, Any]:
        row = {**front, **run_probe(spec["scenario"], load, search_dir / f"{len(probes):02d}_load={load:.6g}",
                                    hosts=hosts, switches=switches, tolerance=tolerance, timeout=timeout),
               "step": len(probes)}
        probes.append(row)
        if report is not None:
            report(row)
        return row

    best: dict[str, Any] | None = None  # the highest sustained probe
    top = probe(hi)
    if top["status"] not in ("ok", "deadlock"):
        return _search_row(front, probes, None, None, switches, hosts, spec["hot"], top["status"], top["error"]), probes
    if top["sustained"]:
        best, hi = top, None
    else:
        if lo > 0:
            low = probe(lo)
            if low["status"] not in ("ok", "deadlock"):
                return _search_row(front, probes, None, hi, switches, hosts, spec["hot"], low["status"],
                                   low["error"]), probes
            if not low["sustained"]:
                return _search_row(front, probes, None, lo, switches, hosts, spec["hot"], "below_bracket",
                                   f"load {lo} is not sustained: lower lo"), probes
            best = low
        while hi - lo > resolution * hi:
            mid = round((lo + hi) / 2, 9)  # a short, exact name for the probe's directory
            row = probe(mid)
            if row["status"] not in ("ok", "deadlock"):
                return _search_row(front, probes, best, hi, switches, hosts, spec["hot"], row["status"],
                                   row["error"]), probes
            if row["sustained"]:
                best, lo = row, mid
            else:
                hi = mid
    return _search_row(front, probes, best, hi, switches, hosts, spec["hot"], "ok", ""), probes


def run_probe(sc: Scenario, load: float, out_dir: Path, *, hosts: int, switches: int, tolerance: float,
              timeout: float | None = None) -> dict[str, Any]:
    """One run at `load`; its point row. A deadlock counts as unsustained (nothing moves)."""
    from .runner import run

    point = sc.copy()
    point.set(LOAD_KEY, load)
    row: dict[str, Any] = {"load": load, "offered_bytes_per_cycle_per_node": load, "dir": str(out_dir), "error": ""}
    try:
        res = run(point, out_dir, timeout=timeout)
        summary, status = res.summary, "ok"
    except DeadlockError as e:
        summary, status, row["error"] = _summary_of(out_dir), "deadlock", " ".join(str(e).split())
    except (ConfigError, RunTimeout) as e:
        return {**row, "status": "config_error" if isinstance(e, ConfigError) else "timeout",
                "error": " ".join(str(e).split()), "sustained": None}
    except Exception as e:
        return {**row, "status": "error", "error": f"{type(e).__name__}: {' '.join(str(e).split())}",
                "sustained": None}
    traffic = (summary or {}).get("traffic") or {}
    accepted = float(traffic.get("delivered_bytes_per_cycle_per_node") or 0.0)
    per_switch = accepted * hosts / switches
    flows = (summary or {}).get("flows", [])
    thr = [f["throughput_Bps"] for f in flows if f.get("throughput_Bps") is not None]
    lat = [(f["latency_ns"]["mean"], f["delivered"]) for f in flows
           if (f.get("latency_ns") or {}).get("mean") is not None and f.get("delivered")]
    weight = sum(n for _, n in lat)
    packets = (summary or {}).get("packets", {})
    return {**row, "status": status,
            "sustained": status == "ok" and accepted >= (1.0 - tolerance) * load,
            "accepted_bytes_per_cycle_per_node": accepted,
            "accepted_flits_per_cycle_per_switch": per_switch,
            "accepted_bytes_per_ns_per_switch": per_switch / BYTE_TIME_NS_1X,
            "throughput_Bps_total": sum(thr) if thr else None,
            "latency_mean_ns": sum(v * n for v, n in lat) / weight if weight else None,
            "delivered": packets.get("delivered"), "in_flight": packets.get("in_flight")}


def _search_row(front: dict[str, Any], probes: list[dict[str, Any]], best: dict[str, Any] | None,
                unsustained: float | None, switches: int, hosts: int, hot: list[str], status: str,
                error: str) -> dict[str, Any]:
    accepted = [p["accepted_flits_per_cycle_per_switch"] for p in probes
                if p.get("accepted_flits_per_cycle_per_switch") is not None]
    b = best or {}
    return {**front, "status": status, "saturated": unsustained is not None,
            "saturation_load": b.get("load"), "unsustained_load": unsustained,
            "throughput_bytes_per_cycle_per_node": b.get("accepted_bytes_per_cycle_per_node"),
            "throughput_flits_per_cycle_per_switch": b.get("accepted_flits_per_cycle_per_switch"),
            "throughput_bytes_per_ns_per_switch": b.get("accepted_bytes_per_ns_per_switch"),
            "throughput_Bps_total": b.get("throughput_Bps_total"),
            "max_accepted_flits_per_cycle_per_switch": max(accepted) if accepted else None,
            "latency_mean_ns": b.get("latency_mean_ns"), "probes": len(probes), "switches": switches,
            "hosts": hosts, "hotspot_hosts": ",".join(hot), "error": error}


def factors(searches: Any, a: str, b: str, *, key: str = "routing", pair_on: str = "topology.seed",
            value: str = VALUE) -> Any:
    """Seed 001 Table 1: for every group of searches that differ only in `pair_on` (the
    topology) and `key`, the factor value(a) / value(b) per topology, and its min, max and
    mean over the topologies (the paper's "minimum, maximum, and average increases"). A
    topology where either search failed or did not saturate is left out and counted in
    `left_out`."""
    import pandas as pd

    for col in (key, value):
        if col not in searches.columns:
            raise ValueError(f"factors: the searches have no column {col!r}; vary {key} to compare routings")
    others = [c for c in searches.columns if c not in {"search", key, pair_on, *SEARCH_COLUMNS}]
    ok = searches[(searches["status"] == "ok") & searches["saturated"].astype(bool)]
    paired = pair_on in searches.columns
    rows = []
    groups = searches.groupby(others, dropna=False, sort=False) if others else [((), searches)]
    for group_key, group in groups:
        group_key = group_key if isinstance(group_key, tuple) else (group_key,)
        sel = ok.loc[ok.index.intersection(group.index)]

        def values(routing: str) -> Any:
            part = sel[sel[key] == routing]
            return part.set_index(pair_on)[value] if paired else part[value].reset_index(drop=True)

        ratio = (values(a) / values(b)).dropna()
        topologies = int(group[pair_on].nunique()) if paired else 1
        rows.append({**dict(zip(others, group_key)), "a": a, "b": b, "topologies": topologies,
                     "left_out": topologies - len(ratio),
                     "min": float(ratio.min()) if len(ratio) else None,
                     "max": float(ratio.max()) if len(ratio) else None,
                     "avg": float(ratio.mean()) if len(ratio) else None})
    return pd.DataFrame(rows, columns=[*others, "a", "b", "topologies", "left_out", "min", "max", "avg"])


def hotspot_hosts(sc: Scenario, count: int) -> list[str]:
    """`count` distinct hot-spot hosts of a random_irregular fabric (hosts h<switch>_<port>),
    drawn from the fabric's own seed, so that every routing of one topology meets the same
    hot spots (seed 001 Sec. 2: "a percentage of traffic is sent to one host")."""
    topo = sc.get("topology") or {}
    if not isinstance(topo, Mapping) or topo.get("generator") != "random_irregular":
        raise _config_error(sc, "topology.generator", f"vary {HOTSPOTS} draws hot-spot hosts of a random_irregular "
                            "fabric", "use topology.generator: random_irregular, or list traffic.hotspots yourself")
    switches = int(topo["switches"])
    ports = int(topo.get("host_ports", 4))
    seed = int(topo.get("seed", sc.get("seed", 1) or 1))
    hosts = [f"h{s}_{p}" for s in range(switches) for p in range(1, ports + 1)]
    if not 0 <= count <= len(hosts):
        raise ValueError(f"{HOTSPOTS}={count}: the fabric has {len(hosts)} hosts")
    return random.Random(f"seed001-hotspots-{seed}").sample(hosts, count)


def apply_hotspots(sc: Scenario, count: int) -> list[str]:
    """Sets the traffic pattern for `count` hot spots (0: uniform) and returns their names."""
    traffic = dict(sc.get("traffic") or {})
    if count == 0:
        traffic["pattern"] = "uniform"
        for k in ("hotspots", "hotspot_fraction"):
            traffic.pop(k, None)
        sc.set("traffic", traffic)
        return []
    hot = hotspot_hosts(sc, count)
    traffic.update(pattern="hotspot", hotspots=hot)
    sc.set("traffic", traffic)
    return hot


def _summary_of(out_dir: Path) -> dict[str, Any] | None:
    try:
        return json.loads((out_dir / "summary.json").read_text())
    except (OSError, ValueError):
        return None


def _cell(value: Any) -> Any:
    from . import _yaml

    return value if isinstance(value, (int, float, str)) and not isinstance(value, bool) else _yaml.scalar_text(value)


def _remove_stale_searches(out_dir: Path, names: set[str]) -> None:
    # Searches of an earlier run into this directory that this one does not have: their
    # probes must not pass for this run's. Only directories a search marked are removed.
    for entry in out_dir.iterdir():
        if entry.name not in names and not entry.is_symlink() and (entry / SEARCH_MARKER).is_file():
            shutil.rmtree(entry)


def _write(table: Any, stem: Path, keys: list[str]) -> None:
    """CSV (RFC 4180, as sweep.csv) and Parquet, each replaced whole. A varied key whose
    values are not all numbers is written as text, as in sweep.csv."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    _write_csv(stem.with_suffix(".csv"), list(table.columns), table.to_dict("records"))
    parquet = stem.with_suffix(".parquet")
    part = parquet.with_name(f".{parquet.name}.tmp")
    text = {c: str for c in keys if table[c].dtype == object}
    pq.write_table(pa.Table.from_pandas(table.astype(text), preserve_index=False), part)
    os.replace(part, parquet)


def _config_error(sc: Scenario, key: str, problem: str, fix: str) -> ConfigError:
    source = sc.source
    return ConfigError(f"{source}: {key}: {problem} (fix: {fix})", file=str(source), key=key, problem=problem, fix=fix)


def _write_csv(path: Path, names: list[str], rows: list[dict[str, Any]]) -> None:
    from .sweeps import _cell as cell, _csv_record

    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        f.write(_csv_record(names))
        for row in rows:
            f.write(_csv_record(["" if _missing(row.get(k)) else cell(row.get(k)) for k in names]))
    os.replace(tmp, path)


def _missing(value: Any) -> bool:
    try:
        return value is None or value != value  # NaN from pandas
    except Exception:
        return False


# ---- the `ibvp saturate` command (registered by cli.py) ----------------------------------

def add_command(sub: Any, overrides: Callable[[Any], None]) -> None:
    from pathlib import Path as _Path

    p = sub.add_parser("saturate", help="find each fabric's saturation load by bisection (seed 001 Table 1)")
    p.add_argument("scenario", type=_Path)
    p.add_argument("--vary", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="one search per point of the cross product (e.g. routing=updn,dfs,smart); the key "
                        "hotspots is a number of hot-spot hosts drawn per topology; repeatable")
    p.add_argument("--topology-seeds", type=int, metavar="N",
                   help="the same as --vary topology.seed=1,...,N: N random fabrics")
    overrides(p)
    p.add_argument("--compare", action="append", default=[], metavar="A/B",
                   help="routings whose throughput factor A over B goes into factors.csv (min, max, avg over "
                        "the topologies), e.g. dfs/updn; repeatable")
    p.add_argument("--lo", type=float, default=0.0, help="lowest load of the first bracket (default 0)")
    p.add_argument("--hi", type=float, default=1.0, help="highest load of the first bracket (default 1)")
    p.add_argument("--tolerance", type=float, default=0.05,
                   help="shortfall of accepted below offered traffic that still counts as sustained (default 0.05)")
    p.add_argument("--resolution", type=float, default=0.05,
                   help="stop when the bracket is this narrow relative to its top (default 0.05)")
    p.add_argument("--out", type=_Path, help="directory (default: out/<scenario name>-saturation)")
    p.add_argument("--jobs", type=int, help="searches at once (default: number of CPUs)")
    p.add_argument("--timeout", type=float, help="wall-clock seconds per run")
    p.set_defaults(handler=command)


def command(args: Any) -> int:
    import sys

    from .cli import EXIT_FAILED, EXIT_OK, _scenario, _table
    from .runner import claim_output_dir
    from .sweeps import parse_vary

    vary: dict[str, list[Any]] = {}
    for option in args.vary:
        key, values = parse_vary(option)
        if key in vary:
            raise ValueError(f"--vary {key} is given twice; list all its values in one --vary")
        vary[key] = values
    if args.topology_seeds is not None:
        if "topology.seed" in vary:
            raise ValueError("--topology-seeds N and --vary topology.seed=... both give the seeds; keep one")
        if args.topology_seeds < 1:
            raise ValueError(f"--topology-seeds {args.topology_seeds}: give 1 or more")
        vary["topology.seed"] = list(range(1, args.topology_seeds + 1))
    compare = []
    for pair in args.compare:
        a, slash, b = pair.partition("/")
        if not slash or not a.strip() or not b.strip():
            raise ValueError(f"--compare {pair!r}: write A/B with two routing engines, e.g. --compare dfs/updn")
        compare.append((a.strip(), b.strip()))
    check_bounds(args.lo, args.hi, args.tolerance, args.resolution)
    if args.out is not None:
        claim_output_dir(args.out, "sweep", inputs=[args.scenario])
    sc = _scenario(args.scenario, args.overrides)
    out = args.out or Path("out") / f"{sc.checked_name()}-saturation"

    def report(row: dict[str, Any]) -> None:
        acc = row.get("accepted_flits_per_cycle_per_switch")
        state = row["status"] if row["status"] != "ok" else ("sustained" if row["sustained"] else "saturated")
        print(f"{row['search']} load {row['load']:.4g}: {state}"
              + (f", accepted {acc:.4g} flits/cycle/switch" if acc is not None else ""), file=sys.stderr)

    res = saturate(sc, vary, out, lo=args.lo, hi=args.hi, tolerance=args.tolerance, resolution=args.resolution,
                   jobs=args.jobs, timeout=args.timeout, compare=compare, report=report)
    keys = list(vary)
    rows = [(*keys, "status", "load", "flits/cycle/sw", "bytes/ns/sw", "probes")]
    for r in res.searches.to_dict("records"):
        rows.append((*(str(r.get(k)) for k in keys), r["status"], _fmt(r["saturation_load"]),
                     _fmt(r[VALUE]), _fmt(r["throughput_bytes_per_ns_per_switch"]), str(r["probes"])))
    _table(rows, sys.stdout, right_from=len(keys) + 1)
    if res.factors is not None:
        fcols = [c for c in res.factors.columns if c not in ("topologies", "left_out", "min", "max", "avg")]
        frows = [(*fcols, "min", "max", "avg", "topologies")]
        for r in res.factors.to_dict("records"):
            frows.append((*(str(r[c]) for c in fcols), _fmt(r["min"]), _fmt(r["max"]), _fmt(r["avg"]),
                          f"{r['topologies'] - r['left_out']}/{r['topologies']}"))
        _table(frows, sys.stdout, right_from=len(fcols))
    failed = res.searches[res.searches["status"] != "ok"]
    print(f"{len(res.searches) - len(failed)} of {len(res.searches)} searches done; tables in {res.out_dir}")
    for r in failed.to_dict("records"):
        print(f"ibvp: search {r['search']} failed ({r['status']}): {r['error']}", file=sys.stderr)
    return EXIT_FAILED if len(failed) else EXIT_OK


def _fmt(value: Any) -> str:
    return "-" if _missing(value) else f"{value:.4g}"
