"""The `ibvp` command.

    ibvp run SCENARIO.yaml [--set key=value ...] [--out DIR] [--timeout S] [--quiet]
    ibvp sweep SCENARIO.yaml --vary key=v1,v2,... | --vary name=@VARIANTS.yaml[:A,B] [--vary ...] [--set ...] [--jobs N] [--dask ADDRESS | --slurm JOBS [--slurm-opt KEY=VALUE ...]] [--out DIR]
    ibvp saturate SCENARIO.yaml [--vary key=v1,...] [--topology-seeds N] [--compare A/B] [--set ...] [--out DIR]
    ibvp plot DIR [--kind rates-over-time|throughput|latency-cdf|latency-vs-load|classes-vs-load|deadline|jitter|best_worst|frames|io-latency|io-waiting] [--out PREFIX]
    ibvp topo FILE [--routing minhop] [--roots A,B | --root-guid-file F] [--lfts-file F] [--lmc N]
              [--node-name-map F] [--dump DIR] [--export-ibnetdiscover OUT [--export-node-name-map MAP]] [--json]
    ibvp validate SCENARIO.yaml [--set key=value ...]
    ibvp schema [--out FILE]        ibvp reference [--out FILE]

Exit status: 0 done; 1 a run failed otherwise (crash, timeout, a failed sweep point);
2 bad input (the message names the file, line, key and a fix); 3 the fabric deadlocked;
130 interrupted.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_CONFIG, EXIT_DEADLOCK, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from .errors import ConfigError, DeadlockError, SimulationError

    try:
        return args.handler(args)
    except ConfigError as e:
        print(f"ibvp: {e}", file=sys.stderr)
        return EXIT_CONFIG
    except DeadlockError as e:
        print(f"ibvp: {e}", file=sys.stderr)
        if e.out_dir:
            print(f"ibvp: the results up to the deadlock are in {e.out_dir}", file=sys.stderr)
        return EXIT_DEADLOCK
    except SimulationError as e:
        print(f"ibvp: {e}", file=sys.stderr)
        # A firmware fault keeps ibvp-sim's status (4), so scripts tell it from a crash.
        from .runner import FIRMWARE_FAULT_STATUS
        return FIRMWARE_FAULT_STATUS if e.returncode == FIRMWARE_FAULT_STATUS else EXIT_FAILED
    except (FileNotFoundError, ValueError, ImportError) as e:
        print(f"ibvp: {e}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        print("ibvp: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ibvp", description="InfiniBand fabric virtual platform: run scenarios, "
                                 "sweeps, plots and topology summaries (docs/python.md).")
    ap.add_argument("--version", action="version", version=f"ibvp {_version()}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def overrides(p: argparse.ArgumentParser) -> None:
        p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                       help="replace one value before validation, e.g. switch.pipeline_delay=40ns (repeatable)")

    p = sub.add_parser("run", help="run one scenario (in a child process) and print a summary")
    p.add_argument("scenario", type=Path)
    overrides(p)
    p.add_argument("--out", type=Path, help="results directory: new, empty or an earlier run's, which is cleared "
                   "(default: out/<scenario name>)")
    p.add_argument("--timeout", type=float, help="wall-clock seconds before the run is stopped")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=cmd_run)

    p = sub.add_parser("sweep", help="run the cross product of --vary values, one row per run in sweep.csv")
    p.add_argument("scenario", type=Path)
    p.add_argument("--vary", action="append", required=True, metavar="KEY=V1,V2,...",
                   help="a key path and its values (YAML each; commas inside [...] do not split), or NAME=@FILE[:A,B] "
                        "for named bundles of settings from a variants file; repeatable")
    overrides(p)
    p.add_argument("--out", type=Path, help="sweep directory (default: out/<scenario name>-sweep)")
    p.add_argument("--jobs", type=int, help="runs at once on this machine (default: number of CPUs)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--dask", metavar="ADDRESS", help="run the points on this Dask scheduler (tcp://host:8786)")
    where.add_argument("--slurm", type=int, metavar="JOBS",
                       help="run the points on Slurm: JOBS worker jobs submitted with sbatch (dask-jobqueue)")
    p.add_argument("--slurm-opt", action="append", default=[], metavar="KEY=VALUE",
                   help="a dask-jobqueue SLURMCluster keyword for the worker jobs, e.g. queue=batch, "
                        "account=proj, walltime=02:00:00, memory=8GiB, job_extra_directives=--exclusive "
                        "(repeatable; docs/python.md)")
    p.add_argument("--timeout", type=float, help="wall-clock seconds per point")
    p.set_defaults(handler=cmd_sweep)

    from .saturation import add_command

    add_command(sub, overrides)

    from .plots import KINDS

    p = sub.add_parser("plot", help="figures (PNG and SVG) from a results or sweep directory")
    p.add_argument("directory", type=Path)
    p.add_argument("--kind", choices=list(KINDS), action="append",
                   help="what to draw (repeatable; default: latency-vs-load for a sweep directory, else "
                        "rates-over-time and throughput)")
    p.add_argument("--out", type=Path, help="file name without extension (one kind only; default: DIR/<kind>)")
    p.add_argument("--title")
    p.add_argument("--group", action="store_true", help="rates-over-time: sum flows named <name><number>")
    p.add_argument("--link-Bps", type=float, help="rates-over-time: divide by this rate instead of each link's own")
    p.add_argument("--label", action="append", default=[], metavar="SERIES=TEXT",
                   help="rates-over-time: a legend name for a series (B/7='root link'); repeatable")
    p.add_argument("--window", metavar="START,END",
                   help="rates-over-time: also print each series' mean rate between two times (40ms,60ms)")
    p.add_argument("--sls", help="deadline, jitter, best_worst: the SLs to draw, comma-separated (default: every SL "
                                 "with connections; best_worst: 0-3)")
    p.add_argument("--x", help="latency-vs-load, classes-vs-load: the varied key on the x axis")
    p.add_argument("--y", help="latency-vs-load: the sweep.csv column to draw (default latency_mean_ns), or the "
                               "ratio of two (\"rate:remote / rate:local\"); classes-vs-load: the panels, "
                               "comma-separated (dmp, dmt_ms, rt_latency_us, control_latency_us, be_latency_us; "
                               "default all)")
    p.set_defaults(handler=cmd_plot)

    p = sub.add_parser("topo", help="validate a topology (or a scenario's) and summarize it")
    p.add_argument("file", type=Path)
    p.add_argument("--routing", help="routing engine (default: the scenario's, or minhop)")
    p.add_argument("--lmc", type=int, help="give every endpoint this many path bits (0..7; LIDs assigned anew)")
    p.add_argument("--dump", type=Path, metavar="DIR",
                   help="write opensm-lfts.dump, opensm-sl2vl.dump, opensm-subnet.lst and opensm.fdbs into DIR")
    p.add_argument("--roots", metavar="A,B,...",
                   help="updn: root switches by name or node GUID (0x...), all of rank 0")
    p.add_argument("--root-guid-file", type=Path, metavar="FILE",
                   help="updn: OpenSM's root_guid_file, one switch node GUID per line")
    p.add_argument("--lfts-file", type=Path, metavar="FILE",
                   help="routing file: the opensm-lfts.dump whose tables are loaded")
    p.add_argument("--node-name-map", type=Path, metavar="FILE",
                   help="names for the nodes of an ibnetdiscover FILE, by node GUID (lines 0x<GUID> \"name\")")
    p.add_argument("--export-ibnetdiscover", type=Path, metavar="OUT",
                   help="write the topology as an ibnetdiscover file that ibvp (and ibnetdiscover's readers) load")
    p.add_argument("--export-node-name-map", type=Path, metavar="MAP",
                   help="with --export-ibnetdiscover: write ibnetdiscover's S-/H-<GUID> ids and the names into MAP")
    overrides(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(handler=cmd_topo)

    p = sub.add_parser("validate", help="check a scenario without running it")
    p.add_argument("scenario", type=Path)
    overrides(p)
    p.set_defaults(handler=cmd_validate)

    p = sub.add_parser("serve-umad", help="serve a fabric to OpenSM and infiniband-diags under libumad2sim.so "
                       "(runs ibvp-sim --serve-umad; docs/management.md)")
    p.add_argument("scenario", type=Path)
    overrides(p)
    p.add_argument("--out", type=Path, help="output directory (default: out/<scenario name>)")
    p.add_argument("--serve-for", type=float, help="wall-clock seconds to serve (default: until Ctrl-C)")
    p.add_argument("--host", help="the HCA host a client attaches to when it names none")
    p.add_argument("--socket", help="abstract socket base name (clients set IBSIM_SOCKNAME; default sim)")
    p.add_argument("--port", type=int, help="serve over UDP on 127.0.0.1 from this port instead")
    p.add_argument("--timeout", help="simulated response timeout, e.g. 1ms (default)")
    p.set_defaults(handler=cmd_serve_umad)

    p = sub.add_parser("schema", help="the JSON Schema of scenario documents (for editors)")
    p.add_argument("--out", type=Path, help="write to this file (default: standard output)")
    p.set_defaults(handler=cmd_schema)

    p = sub.add_parser("reference", help="the Markdown reference of every scenario key")
    p.add_argument("--out", type=Path, help="write to this file (default: standard output)")
    p.set_defaults(handler=cmd_reference)

    p = sub.add_parser("paths", help="where the installed package keeps its firmware images, SDK and configs")
    p.set_defaults(handler=cmd_paths)
    return ap


def _version() -> str:
    try:
        from .info import version

        return version()
    except ImportError:
        return "(extension not built: run make)"


def _scenario(path: Path, assignments: list[str]):
    from .scenario import Scenario

    sc = Scenario.from_yaml(path)
    for a in assignments:
        sc.override(a)
    return sc


# ---- run ---------------------------------------------------------------------------------

def cmd_run(args: argparse.Namespace) -> int:
    from .runner import claim_output_dir, run

    if args.out is not None:
        # Before the scenario is read, so a refused one leaves no old results.
        claim_output_dir(args.out, inputs=[args.scenario])
    sc = _scenario(args.scenario, args.overrides)
    out = args.out or Path("out") / sc.checked_name()
    res = run(sc, out, progress=not args.quiet, timeout=args.timeout)
    print_summary(res.summary, res.run_info, res.out_dir)
    return EXIT_OK


def print_summary(summary: dict[str, Any], run_info: dict[str, Any], out_dir: Path, stream=None) -> None:
    """The run in a few lines: packets, then one row per flow."""
    stream = stream or sys.stdout
    p = summary["packets"]
    wall = run_info.get("wall_seconds")
    sim_ms = summary["sim_seconds"] * 1e3
    speed = f" in {wall:.3g} s ({sim_ms / wall:.3g} sim-ms/s)" if wall else ""
    print(f"{summary['scenario']}: {sim_ms:.3f} ms simulated{speed}; results in {out_dir}", file=stream)
    print(f"packets: injected {p['injected']}, delivered {p['delivered']}, dropped {p['dropped']}, "
          f"in flight {p['in_flight']}", file=stream)
    if (out_dir / "perftest.txt").is_file():
        # The report ibvp-sim prints, byte for byte (platform/apps/perftest_report.h).
        stream.write((out_dir / "perftest.txt").read_text(encoding="utf-8"))
    for e in summary.get("subnet_manager", {}).get("link_events", []):
        print(_link_event_line(e), file=stream)
    flows = summary.get("flows", [])
    if not flows:
        return
    rows = [("flow", "src -> dst", "delivered", "GB/s", "share", "lat mean us", "lat p99 us")]
    for f in flows:
        lat = f.get("latency_ns", {})
        rows.append((f["name"], f"{f['src']} -> {f['dst']}", str(f["delivered"]), _num(f.get("throughput_Bps"), 1e-9),
                     _pct(f.get("throughput_fraction")), _num(lat.get("mean"), 1e-3), _num(lat.get("p99"), 1e-3)))
    _table(rows, stream, right_from=2)


def _link_event_line(e: dict[str, Any]) -> str:
    """One link event of summary.json as ibvp-sim prints it (LinkEvents::text)."""
    line = f"link event: {e['link']} {e['state']}"
    if not e["happened"]:
        return line + ": did not happen (the run ended first)"
    line += f" at {e['at_us']:.3f} us: "
    if e["trap_sent_us"] is not None:
        line += f"trap {e['trap_sent_us']:.3f} us, "
    if e["trap_received_us"] is not None:
        line += f"SM read it {e['trap_received_us']:.3f} us, "
    if e["recovered_us"] is not None and e["sweeps"] == 0:
        line += (f"rerouted out of band {e['recovered_us']:.3f} us ({e['recovery_us']:.3f} us later; "
                 f"{e['lft_blocks_set']} LFT blocks changed), ")
    elif e["recovered_us"] is not None:
        what = "active again" if e["state"] == "up" else "rerouted"
        line += (f"{what} {e['recovered_us']:.3f} us ({e['recovery_us']:.3f} us later; {e['sweeps']} sweep(s), "
                 f"{e['sweep_smps']} SMPs, {e['lft_blocks_set']} LFT blocks set), ")
    elif e["sweep_error"]:
        line += f"{'sweep' if e['sweeps'] else 'reroute'} failed: {e['sweep_error']}, "
    elif e["trap_sent_us"] is None:
        line += "no SM in band to reroute, "
    else:
        line += "not rerouted, "
    if e["unreachable"]:
        line += "unreachable now: " + " ".join(e["unreachable"]) + ", "
    return line + (f"lost {e['lost']} packets ({e['lost_to_recovery']} before recovery), "
                   f"{e['unroutable']} without a route")


def _num(value: Any, scale: float) -> str:
    return "-" if value is None else f"{value * scale:.3f}"


def _pct(value: Any) -> str:
    return "-" if value is None else f"{value:.1%}"


def _table(rows: list[tuple], stream, right_from: int) -> None:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        cells = [str(c).rjust(w) if i >= right_from else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        print("  " + "  ".join(cells).rstrip(), file=stream)


# ---- sweep -------------------------------------------------------------------------------

def cmd_sweep(args: argparse.Namespace) -> int:
    from .sweeps import parse_vary, print_report, run_points

    vary: dict[str, list[Any]] = {}
    for option in args.vary:
        key, values = parse_vary(option)
        if key in vary:
            raise ValueError(f"--vary {key} is given twice; list all its values in one --vary")
        vary[key] = values
    from .runner import claim_output_dir

    from .cluster import merge_slurm_options, slurm_cluster

    if args.slurm_opt and args.slurm is None:
        raise ValueError("--slurm-opt is for Slurm worker jobs; add --slurm JOBS")
    slurm_options = merge_slurm_options(args.slurm_opt) if args.slurm is not None else {}
    if args.out is not None:
        claim_output_dir(args.out, "sweep", inputs=[args.scenario])
    sc = _scenario(args.scenario, args.overrides)
    out = args.out or Path("out") / f"{sc.checked_name()}-sweep"
    if args.slurm is not None:
        cluster = slurm_cluster(args.slurm, slurm_options)
        print(f"ibvp: {args.slurm} Slurm worker job(s) requested (dask-jobqueue); points run as workers start",
              file=sys.stderr)
        try:
            rows = run_points(sc, vary, out, jobs=args.jobs, dask=cluster, timeout=args.timeout, report=print_report)
        finally:
            cluster.close()
    else:
        rows = run_points(sc, vary, out, jobs=args.jobs, dask=args.dask, timeout=args.timeout,
                          report=print_report)
    table = [(*vary, "status", "delivered", "lat mean us", "GB/s total")]
    for r in rows:
        table.append((*(str(r.get(k)) for k in vary), r["status"], str(r.get("delivered", "-") or "-"),
                      _num(r.get("latency_mean_ns"), 1e-3), _num(r.get("throughput_Bps_total"), 1e-9)))
    _table(table, sys.stdout, right_from=len(vary) + 1)
    failed = [r for r in rows if r["status"] != "ok"]
    print(f"{len(rows) - len(failed)} of {len(rows)} points done; table in {Path(out) / 'sweep.csv'}")
    for r in failed:
        print(f"ibvp: point {r['point']} failed ({r['status']}): {r['error']}", file=sys.stderr)
    return EXIT_FAILED if failed else EXIT_OK


# ---- plot --------------------------------------------------------------------------------

def cmd_plot(args: argparse.Namespace) -> int:
    from . import plots

    directory: Path = args.directory
    if not directory.is_dir():
        raise FileNotFoundError(f"{directory}: no such directory")
    kinds = args.kind or (["latency-vs-load"] if (directory / "sweep.csv").exists()
                          else ["rates-over-time", "throughput"])
    if args.out and len(kinds) > 1:
        raise ValueError("--out names one figure; give one --kind with it")
    for kind in kinds:
        options: dict[str, Any] = {"out": args.out, "title": args.title}
        if kind == "rates-over-time":
            options.update(group=args.group, link_Bps=args.link_Bps, labels=_labels(args.label))
        elif kind == "latency-vs-load":
            options.update(x=args.x, y=args.y or "latency_mean_ns")
        elif kind == "classes-vs-load":
            options.update(x=args.x, y=args.y)
        elif kind in ("deadline", "jitter", "best_worst"):
            options.update(sls=_sls(args.sls))
        for path in plots.plot(kind, directory, **options):
            print(path)
    if args.window:
        _print_mean_rates(directory, args)
    return EXIT_OK


def _sls(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        sls = [int(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(f"--sls {text!r}: write SLs as numbers separated by commas, e.g. --sls 0,1,2,3") from None
    if not sls or any(not 0 <= v <= 15 for v in sls):
        raise ValueError(f"--sls {text!r}: SLs are 0..15")
    return sls


def _labels(assignments: list[str]) -> dict[str, str]:
    labels = {}
    for a in assignments:
        series, sep, text = a.partition("=")
        if not sep or not series or not text:
            raise ValueError(f"--label {a!r}: write SERIES=TEXT, e.g. --label 'B/7=root link'")
        labels[series] = text
    return labels


def _print_mean_rates(directory: Path, args: argparse.Namespace) -> None:
    """The table of mean rates inside --window, as the seed 004 figures are read."""
    from . import plots

    parts = args.window.split(",")
    times = [plots._parse_time(p) for p in parts] if len(parts) == 2 else []
    if len(times) != 2 or None in times or times[0] >= times[1]:
        raise ValueError(f"--window {args.window!r}: write START,END with units and START < END, e.g. 40ms,60ms")
    means = plots.mean_rates(directory, times[0], times[1], link_Bps=args.link_Bps, group=args.group,
                             labels=_labels(args.label))
    print(f"mean rates between {parts[0].strip()} and {parts[1].strip()}, as a fraction of the link rate:")
    _table([("series", "rate")] + [(k, f"{v:.3f}") for k, v in sorted(means.items())], sys.stdout, right_from=1)


# ---- topo, validate, schema ----------------------------------------------------------------

def cmd_topo(args: argparse.Namespace) -> int:
    from .info import export_ibnetdiscover, topology_summary

    if args.export_node_name_map and not args.export_ibnetdiscover:
        raise ValueError("--export-node-name-map goes with --export-ibnetdiscover OUT")
    if args.export_ibnetdiscover:
        n = export_ibnetdiscover(args.file, args.export_ibnetdiscover, node_name_map=args.node_name_map,
                                 node_name_map_out=args.export_node_name_map, overrides=args.overrides)
        extra = f" and {args.export_node_name_map}" if args.export_node_name_map else ""
        print(f"wrote {args.export_ibnetdiscover}{extra}: {n['switches']} switches, {n['endpoints']} endpoints, "
              f"{n['links']} cables", file=sys.stderr)
    roots = [r.strip() for r in args.roots.split(",") if r.strip()] if args.roots else None
    s = topology_summary(args.file, routing=args.routing, overrides=args.overrides, lmc=args.lmc, dump=args.dump,
                         roots=roots, root_guid_file=args.root_guid_file, lfts_file=args.lfts_file,
                         node_name_map=args.node_name_map)
    if args.json:
        print(json.dumps(s, indent=2))
        return EXIT_OK
    efi = s.get("edge_forwarding_index", {})
    rows = [("switches", s["switches"]), ("hosts", s["hosts"]), ("links", s["links"]),
            ("diameter", f"{s['diameter']} switch hops"), ("independent cycles", s["independent_cycles"]),
            ("routing", s["routing"])]
    if "routes" in s:
        rows.append(("routes", f"{s['routes']}" + (f" ({s['unrouted']} unrouted)" if s.get("unrouted") else "")))
    rows.append(("edge forwarding index", f"max {efi.get('max')}, mean {efi.get('mean', 0):.2f}"))
    dl = s["deadlock"]
    rows.append(("deadlock", "free: channel dependency graph acyclic" if dl["acyclic"]
                 else "possible: channel dependency cycle " + " -> ".join(dl["cycle"])))
    if s.get("vl_layers", 1) > 1:
        rows.append(("VL layers", f"{s['vl_layers']} (each path on its layer's SL; SL2VL maps SL n to VL n)"))
    rows.append(("routing time", f"{s['routing_seconds'] * 1e3:.1f} ms"))
    if args.dump:
        rows.append(("tables written", ", ".join(f"{args.dump}/{f}" for f in (
            "opensm-lfts.dump", "opensm-sl2vl.dump", "opensm-subnet.lst", "opensm.fdbs"))))
    print(f"{args.file}:")
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"  {k:<{width}}  {v}")
    hist = {int(k): v for k, v in s.get("path_length_histogram", {}).items()}
    if hist:
        print("  path lengths (switch hops: routes):")
        peak = max(hist.values())
        for hops in sorted(hist):
            print(f"    {hops:>3}: {hist[hops]:>8}  {'#' * max(1, round(40 * hist[hops] / peak))}")
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    info = _scenario(args.scenario, args.overrides).validate()
    print(f"{args.scenario}: valid; {info['name']}, {info['duration_s'] * 1e3:g} ms, seed {info['seed']}, "
          f"{info['switches']} switches, {info['endpoints']} endpoints, flows: {', '.join(info['flows']) or '-'}")
    return EXIT_OK


def _write_or_print(text: str, out: Path | None) -> int:
    if out is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        print(f"wrote {out}", file=sys.stderr)
    return EXIT_OK


def cmd_serve_umad(args: argparse.Namespace) -> int:
    # The server is ibvp-sim itself, in this process's place: its ready line, its messages,
    # its exit status and Ctrl-C are the user's directly.
    import os

    from .umad import find_ibvp_sim

    argv = [find_ibvp_sim(), str(args.scenario), "--serve-umad"]
    for a in args.overrides:
        argv += ["--set", a]
    for flag, value in (("--out", args.out), ("--serve-for", args.serve_for), ("--umad-host", args.host),
                        ("--umad-socket", args.socket), ("--umad-port", args.port), ("--umad-timeout", args.timeout)):
        if value is not None:
            argv += [flag, str(value)]
    sys.stdout.flush()
    os.execv(argv[0], argv)
    return EXIT_FAILED  # not reached


def cmd_schema(args: argparse.Namespace) -> int:
    from .info import schema_text

    return _write_or_print(schema_text(), args.out)


def cmd_reference(args: argparse.Namespace) -> int:
    from .info import reference

    return _write_or_print(reference(), args.out)


def cmd_paths(args: argparse.Namespace) -> int:
    from .package_data import describe

    for key, value in describe().items():
        print(f"{key}: {value}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
