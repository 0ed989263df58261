"""Parameter sweeps: one run per point of a cross product of values.

    df = ibvp.sweep("configs/examples/minimal.yaml",
                    {"flows[0].load": [0.2, 0.5, 0.8], "switch.request_order": ["fifo", "fifo_bypass"]},
                    out="out/sweep", jobs=4)

Each point runs with `ibvp.run` (so in its own child process) in its own directory
`<out>/<point>`, named from its parameters. The sweep owns `<out>` (marker file
`.ibvp-sweep`; a new, empty or earlier ibvp directory, as for a run): point directories of
an earlier sweep into it that are not points of this one are removed, so that only this
sweep's results sit there. A point that finished leaves `done.json` there
(its row of the table, and a hash of the scenario it ran); running the sweep again skips it
unless the scenario changed. A point that fails (bad value, deadlock, crash, timeout) gets
its status and error in the table and `failed.json`; the other points run on, and a rerun
tries it again. `<out>/sweep.csv` has one row per point: the varied keys, status, error and
summary metrics; it is rewritten as points finish. When all points have ended,
`<out>/dataset/<table>.parquet` gathers each table (flows, ports, packets, rates) of every
point that has it into one Parquet file, with the varied keys, `point` and `status` as its
first columns: `pd.read_parquet("<out>/dataset/flows.parquet")`.

A value may be a named bundle of settings (`Variant`, a routing scheme: routing engine,
path selection, lifetimes ...): the point applies each of its settings, and the table and the
point's name show the bundle's name under the varied key, which is then a label, not a
scenario key. `variants("schemes.yaml")` reads a file of them (`name: {key path: value}`);
on the command line, `--vary scheme=@schemes.yaml` takes every bundle of the file in order.

Points run on a local pool of threads, each waiting on its child process (the work is in
the children, so threads are enough), or on a Dask cluster when given its address. The
Dask workers need the ibvp package and must see the same paths (the sweep directory and the
scenario's files), e.g. on a shared file system.
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import itertools
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from . import _yaml
from .errors import ConfigError, DeadlockError, RunTimeout
from .scenario import Scenario

METRICS = [
    "injected", "delivered", "dropped", "in_flight",
    "latency_mean_ns",          # mean over flows of their mean latency, weighted by delivered packets
    "latency_p99_ns_max",       # the worst flow's 99th percentile
    "throughput_Bps_total", "throughput_Bps_mean", "throughput_Bps_min",
    "throughput_fraction_mean", "throughput_fraction_min",
    "sim_seconds", "wall_seconds",
]
DONE, FAILED = "done.json", "failed.json"
DATASET = "dataset"

Report = Callable[[dict[str, Any], int, int], None]


def sweep(scenario: Scenario | Mapping[str, Any] | str | os.PathLike, vary: Mapping[str, Sequence[Any]],
          out: str | os.PathLike, *, jobs: int | None = None, dask: Any = None,
          timeout: float | None = None, report: Report | None = None):
    """Runs every point of the cross product of `vary` ({key path: values}) and returns the
    table of sweep.csv as a pandas DataFrame. `jobs`: points at once (default: CPU count);
    `dask`: run the points on a Dask cluster instead: a scheduler address ("tcp://host:8786"),
    a `distributed.Client`, or a cluster object (`LocalCluster`, dask-jobqueue's
    `SLURMCluster`); a Client or cluster given here is used, not closed;
    `timeout`: wall seconds per point; `report(row, done, total)` is called per finished point."""
    rows = run_points(scenario, vary, out, jobs=jobs, dask=dask, timeout=timeout, report=report)
    import pandas as pd

    return pd.DataFrame(rows, columns=columns(list(vary), rows))


def columns(keys: list[str], rows: Iterable[Mapping[str, Any]] = ()) -> list[str]:
    """The table's columns: the varied keys, the point's status, METRICS, then one
    `rate:SERIES` per rate series any row has (sorted), then a perftest's
    `perftest:MEASURE@BYTESB` (by measure, then size)."""
    rows = list(rows)
    series = sorted({k for row in rows for k in row if k.startswith(RATE_PREFIX)})
    perf = list(dict.fromkeys(k for row in rows for k in row if k.startswith(PERFTEST_PREFIX)))
    measures = list(dict.fromkeys(k.split("@")[0] for k in perf))
    perf.sort(key=lambda k: (measures.index(k.split("@")[0]), int(k.rsplit("@", 1)[1][:-1])))
    return [*keys, "point", "status", "error", *METRICS, *series, *perf]


RATE_PREFIX = "rate:"
PERFTEST_PREFIX = "perftest:"


def rate_means(rates: "Any", warmup_s: float) -> dict[str, float]:
    """Mean utilisation of every rates.csv series over the samples at or after the warm-up,
    as `rate:SERIES`; flows named alike but for a trailing number (local1..localN) are also
    summed into one group (`rate:local`), as seed 004's figures draw them."""
    from .plots import group_flow_series

    if rates is None or len(rates) == 0:
        return {}
    measured = rates[rates["time_s"] >= warmup_s]
    out: dict[str, float] = {}
    for table in (measured, group_flow_series(measured)):
        for name, part in table.groupby("series"):
            out[RATE_PREFIX + str(name)] = float(part["utilization"].mean())
    return out


class Variant(str):
    """A named bundle of settings, used as one value of a varied key: the point sets each of
    `overrides` ({key path: value}) and its row shows `name`. A str, so tables, point names
    and sweep.csv take it as its name."""

    overrides: dict[str, Any]

    def __new__(cls, name: str, overrides: Mapping[str, Any]):
        obj = super().__new__(cls, name)
        obj.overrides = dict(overrides)
        return obj


def variants(path: str | os.PathLike) -> list[Variant]:
    """The bundles of a variants file, in file order: a YAML mapping of name -> mapping of
    key path -> value (`MP+LFU: {routing: multipath_adaptive, switch.path_selection: lfu}`).
    A malformed file is a ConfigError naming it and the entry."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise _variants_error(path, f"cannot read the variants file ({e.strerror or e})",
                             "give an existing YAML file after @ (--vary scheme=@schemes.yaml)") from None
    text = _yaml.decode_text(raw, str(path))
    _yaml.check_yaml_limits(text, str(path))
    try:
        doc = _yaml.load(text)
    except Exception as e:
        raise _variants_error(path, f"not valid YAML ({e})", "fix the YAML syntax") from None
    if not isinstance(doc, Mapping) or not doc:
        raise _variants_error(path, "a variants file is a non-empty mapping of name -> settings",
                             "write one bundle per line, e.g. 'SPF: {routing: minhop}'")
    out = []
    for name, settings in doc.items():
        if not isinstance(name, str) or not name.strip():
            raise _variants_error(path, f"variant name {name!r} is not text", "name each bundle with a word (SPF, MP+LFU)",
                                 str(name))
        if not isinstance(settings, Mapping) or not all(isinstance(k, str) for k in settings):
            raise _variants_error(path, f"variant {name}: its settings are not a mapping of key path -> value",
                                 f"write '{name}: {{routing: minhop, switch.hoq_life: 20}}'", name)
        out.append(Variant(name, settings))
    return out


def _variants_error(path: Path, problem: str, fix: str, key: str = "") -> ConfigError:
    return ConfigError(f"{path}: {problem}; fix: {fix}", file=str(path), key=key, problem=problem, fix=fix)


def apply_value(sc: Scenario, key: str, value: Any) -> None:
    """Sets one varied value on a point's scenario: a Variant's settings, else `key` itself."""
    if isinstance(value, Variant):
        for k, v in value.overrides.items():
            sc.set(k, v)
    else:
        sc.set(key, value)


def cross_product(vary: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    for key, values in vary.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable) or not list(values):
            raise ValueError(f"vary {key}: give a non-empty list of values, not {values!r}")
    keys = list(vary)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(list(vary[k]) for k in keys))]


def point_name(params: Mapping[str, Any]) -> str:
    """A directory name from a point's parameters: `switch.bypass_limit=2__flows_0_.load=0.5`.
    Characters a file name should not hold become `_`; then a short hash of the exact
    parameters keeps names that would collide apart."""
    raw = "__".join(f"{k}={_yaml.scalar_text(v)}" for k, v in params.items())
    safe = re.sub(r"[^A-Za-z0-9._=+-]", "_", raw)
    if safe != raw or len(safe) > 120:
        safe = f"{safe[:120]}-{hashlib.sha1(raw.encode()).hexdigest()[:8]}"
    return safe or "base"


def scenario_hash(sc: Scenario) -> str:
    """What a point ran, to tell whether its done marker still holds after the base changed."""
    return hashlib.sha256(json.dumps(sc.rebased(None), sort_keys=True, default=str).encode()).hexdigest()[:16]


def run_points(scenario: Scenario | Mapping[str, Any] | str | os.PathLike, vary: Mapping[str, Sequence[Any]],
               out: str | os.PathLike, *, jobs: int | None = None, dask: Any = None,
               timeout: float | None = None, report: Report | None = None) -> list[dict[str, Any]]:
    """The work of `sweep`, returning the rows as dicts (no pandas)."""
    from .runner import claim_output_dir

    out_dir = Path(out).resolve()
    # Kept if it is this sweep's own: finished points are skipped.
    claim_output_dir(out_dir, "sweep", inputs=[scenario] if isinstance(scenario, (str, os.PathLike)) else [])
    base = Scenario.coerce(scenario)
    keys = list(vary)

    specs = []
    for values in cross_product(vary):
        sc = base.copy()
        for key, value in values.items():
            apply_value(sc, key, value)  # a bad key path fails here, before anything runs
        # A bundle appears by its name (plain text) in the table, the point's name and files.
        params = {k: str(v) if isinstance(v, Variant) else v for k, v in values.items()}
        specs.append({"params": params, "name": point_name(params), "scenario": sc,
                      "hash": scenario_hash(sc), "dir": str(out_dir / point_name(params)), "timeout": timeout})
    names = [s["name"] for s in specs]
    if len(set(names)) != len(names):
        raise ValueError("two points of the sweep have the same parameters; give each value once")

    _remove_stale_points(out_dir, set(names))
    total = len(specs)
    rows: dict[str, dict[str, Any]] = {}
    pending = []
    for spec in specs:
        done = _read_done(Path(spec["dir"]), spec["hash"])
        if done is None:
            pending.append(spec)
            continue
        rows[spec["name"]] = {**done, "status": "ok", "point": spec["name"]}
        if report is not None:
            report({**rows[spec["name"]], "skipped": True}, len(rows), total)
    _write_table(out_dir / "sweep.csv", keys, [rows[n] for n in names if n in rows])

    def finished(row: dict[str, Any]) -> None:
        rows[row["point"]] = row
        _write_table(out_dir / "sweep.csv", keys, [rows[n] for n in names if n in rows])
        if report is not None:
            report(row, len(rows), total)


    if pending:
        if dask is not None:
            _run_on_dask(dask, pending, finished)
        else:
            _run_locally(jobs, pending, finished)
    table = [rows[n] for n in names]
    write_dataset(out_dir, keys, table)
    return table


def _run_locally(jobs: int | None, specs: list[dict[str, Any]], finished: Callable[[dict], None]) -> None:
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs or os.cpu_count() or 1)) as pool:
        futures = {pool.submit(run_point, spec): spec for spec in specs}
        for fut in concurrent.futures.as_completed(futures):
            finished(_result_or_error_row(fut, futures[fut]))


def _run_on_dask(target: Any, specs: list[dict[str, Any]], finished: Callable[[dict], None]) -> None:
    from distributed import as_completed

    from .cluster import dask_client

    with dask_client(target) as client:
        # pure=False: a point is a run with files as its result, never shared between keys.
        futures = {client.submit(run_point, spec, pure=False, key=f"ibvp-{spec['name']}-{time.time_ns()}"): spec
                   for spec in specs}
        for fut in as_completed(list(futures)):
            finished(_result_or_error_row(fut, futures[fut]))


def _result_or_error_row(fut: Any, spec: dict[str, Any]) -> dict[str, Any]:
    # run_point catches what a run can raise; this is for failures around it (a Dask worker
    # that died, a result that could not be sent back).
    try:
        return fut.result()
    except Exception as e:
        return _row(spec, "error", f"{type(e).__name__}: {e}")


def run_point(spec: dict[str, Any]) -> dict[str, Any]:
    """Runs one point and returns its row; never raises for a failed run. Runs in a thread
    of this process or on a Dask worker."""
    from .runner import run

    point_dir = Path(spec["dir"])
    # The point runs again from nothing: whatever its directory held (an earlier attempt) is
    # the sweep's own, inside its directory.
    _remove(point_dir)
    try:
        results = run(spec["scenario"], point_dir, timeout=spec.get("timeout"))
        row = _row(spec, "ok", "", _metrics(results.summary, results.run_info, _rates_of(point_dir)))
        (point_dir / DONE).write_text(json.dumps({**row, "scenario_hash": spec["hash"]}, indent=1))
        return row
    except ConfigError as e:
        row = _row(spec, "config_error", str(e))
    except DeadlockError as e:
        row = _row(spec, "deadlock", str(e), _metrics_from_dir(point_dir))
    except RunTimeout as e:
        row = _row(spec, "timeout", str(e))
    except Exception as e:
        row = _row(spec, "error", f"{type(e).__name__}: {e}")
    (point_dir / FAILED).write_text(json.dumps(row, indent=1))
    return row


def _remove(path: Path) -> None:
    # A link is removed, never followed.
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def _remove_stale_points(out_dir: Path, points: set[str]) -> None:
    """Removes the run directories (marked by their run) of points this sweep does not have:
    results of an earlier sweep must not pass for this one's. Other files (plots) stay."""
    from ._corelib import core

    marker = core().RUN_MARKER
    for entry in out_dir.iterdir():
        if entry.name not in points and not entry.is_symlink() and (entry / marker).is_file():
            shutil.rmtree(entry)


def _row(spec: dict[str, Any], status: str, error: str, metrics: dict[str, Any] | None = None) -> dict[str, Any]:
    # One line per point in the table, whatever the message looked like.
    error = " ".join(error.split())
    return {**spec["params"], "point": spec["name"], "status": status, "error": error, **(metrics or {})}


def _rates_of(point_dir: Path) -> "Any":
    from .results import read_table

    try:
        return read_table(point_dir, "rates")
    except FileNotFoundError:
        return None


def write_dataset(out_dir: Path, keys: list[str], rows: list[dict[str, Any]]) -> list[Path]:
    """Gathers every point's tables into `<out_dir>/dataset/<table>.parquet`: the varied keys,
    `point` and `status`, then the table's own columns, points in the order of the sweep.
    Points without a table (a refused scenario; packets when not kept) add no rows. A varied
    key whose values are not all numbers or all text is written as text, as in sweep.csv.
    Returns the files written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .results import TABLES

    dataset = out_dir / DATASET
    dataset.mkdir(exist_ok=True)
    key_types = {k: _key_column([row.get(k) for row in rows]) for k in keys}
    written = []
    for name in TABLES:
        path = dataset / f"{name}.parquet"
        tmp = path.with_name(f".{path.name}.tmp")
        writer = None
        try:
            for row in rows:
                source = out_dir / row["point"] / f"{name}.parquet"
                if not source.exists():
                    continue
                # One file, read as such: read_table would take the point's "key=value"
                # directory name for a hive partition and add a column.
                part = pq.ParquetFile(source).read()
                n = part.num_rows
                front = {k: pa.array([key_types[k][0](row.get(k))] * n, type=key_types[k][1]) for k in keys}
                front["point"] = pa.array([row["point"]] * n, type=pa.string())
                front["status"] = pa.array([row["status"]] * n, type=pa.string())
                part = pa.Table.from_arrays([*front.values(), *part.columns], names=[*front, *part.column_names])
                if writer is None:
                    writer = pq.ParquetWriter(tmp, part.schema)
                writer.write_table(part)
        finally:
            if writer is not None:
                writer.close()
        if writer is None:
            path.unlink(missing_ok=True)  # no point has this table
            continue
        os.replace(tmp, path)  # readers never see half a file
        written.append(path)
    return written


def _key_column(values: list[Any]) -> tuple[Callable[[Any], Any], Any]:
    # (convert, Arrow type) for one varied key's column.
    import pyarrow as pa

    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return (lambda v: v), pa.bool_()
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return (lambda v: v), pa.int64()
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return (lambda v: None if v is None else float(v)), pa.float64()
    return (lambda v: None if v is None else v if isinstance(v, str) else _yaml.scalar_text(v)), pa.string()


def _metrics(summary: dict[str, Any], run_info: dict[str, Any], rates: "Any" = None) -> dict[str, Any]:
    p = summary.get("packets", {})
    flows = summary.get("flows", [])
    m: dict[str, Any] = {k: p.get(k) for k in ("injected", "delivered", "dropped", "in_flight")}
    weighted = [(f["latency_ns"]["mean"], f["delivered"]) for f in flows
                if f.get("latency_ns", {}).get("mean") is not None and f.get("delivered")]
    weight = sum(n for _, n in weighted)
    m["latency_mean_ns"] = sum(v * n for v, n in weighted) / weight if weight else None
    p99 = [f["latency_ns"]["p99"] for f in flows if f.get("latency_ns", {}).get("p99") is not None]
    m["latency_p99_ns_max"] = max(p99) if p99 else None
    thr = [f["throughput_Bps"] for f in flows if f.get("throughput_Bps") is not None]
    frac = [f["throughput_fraction"] for f in flows if f.get("throughput_fraction") is not None]
    m["throughput_Bps_total"] = sum(thr) if thr else None
    m["throughput_Bps_mean"] = sum(thr) / len(thr) if thr else None
    m["throughput_Bps_min"] = min(thr) if thr else None
    m["throughput_fraction_mean"] = sum(frac) / len(frac) if frac else None
    m["throughput_fraction_min"] = min(frac) if frac else None
    m["sim_seconds"] = summary.get("sim_seconds")
    m["wall_seconds"] = run_info.get("wall_seconds")
    m.update(rate_means(rates, float(summary.get("warmup_seconds") or 0.0)))
    m.update(perftest_columns(summary))
    return m


def perftest_columns(summary: dict[str, Any]) -> dict[str, Any]:
    """A perftest point's results as sweep.csv columns, one per measure and message size:
    `perftest:<measure>@<bytes>B` (perftest:bw_peak_MBps@65536B, perftest:t_typical_us@2B,
    ...); nothing for a run without a perftest."""
    out: dict[str, Any] = {}
    for row in (summary.get("perftest") or {}).get("rows", []):
        for key, value in row.items():
            if key not in ("bytes", "iterations"):
                out[f"{PERFTEST_PREFIX}{key}@{row['bytes']}B"] = value
    return out


def _metrics_from_dir(point_dir: Path) -> dict[str, Any]:
    try:
        summary = json.loads((point_dir / "summary.json").read_text())
    except (OSError, ValueError):
        return {}
    run_path = point_dir / "run.json"
    return _metrics(summary, json.loads(run_path.read_text()) if run_path.exists() else {}, _rates_of(point_dir))


def _read_done(point_dir: Path, expected_hash: str) -> dict[str, Any] | None:
    try:
        done = json.loads((point_dir / DONE).read_text())
    except (OSError, ValueError):
        return None
    if done.pop("scenario_hash", None) != expected_hash or not (point_dir / "summary.json").exists():
        return None
    return done


def _write_table(path: Path, keys: list[str], rows: list[dict[str, Any]]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    names = columns(keys, rows)
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        f.write(_csv_record(names))
        for row in rows:
            f.write(_csv_record([_cell(row.get(k)) for k in names]))
    os.replace(tmp, path)


def _csv_record(fields: Iterable[Any]) -> str:
    # RFC 4180, as the simulator's tables (platform/metrics/csv.cpp): a field with a comma,
    # a double quote, CR or LF is quoted. The csv module leaves a lone CR unquoted when the
    # line terminator is LF, and a reader then splits the record there.
    out = []
    for value in fields:
        text = str(value)
        out.append(f'"{text.replace(chr(34), chr(34) * 2)}"' if any(c in text for c in ',"\r\n') else text)
    return ",".join(out) + "\n"


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (dict, list, bool)):
        return _yaml.scalar_text(value)  # as it would be written after --vary
    return value


# ---- command-line helpers ----------------------------------------------------------------

def parse_vary(option: str) -> tuple[str, list[Any]]:
    """`key=v1,v2,...` -> (key, [values]); each value is YAML, and commas inside brackets or
    quotes do not split (`switch.sl2vl=[0,1,...],[1,0,...]`). `key=@FILE` takes the named
    bundles of a variants file (see `variants`), `key=@FILE:A,B` only those named."""
    key, eq, text = option.partition("=")
    if not eq or not key.strip() or not text.strip():
        raise ValueError(f"--vary {option}: expected KEY=VALUE1,VALUE2,... e.g. --vary switch.bypass_limit=0,4")
    if text.strip().startswith("@"):
        file, _, names = text.strip()[1:].partition(":")
        bundles = variants(file)
        if names.strip():
            by_name = {str(v): v for v in bundles}
            chosen = [n.strip() for n in names.split(",")]
            unknown = [n for n in chosen if n not in by_name]
            if unknown:
                raise ValueError(f"--vary {key}: {', '.join(unknown)} not in {file}; it has {', '.join(by_name)}")
            bundles = [by_name[n] for n in chosen]
        return key.strip(), bundles
    values = []
    for part in _split_top_level(text):
        try:
            values.append(_yaml.load(part) if part.strip() else None)
        except Exception as e:
            raise ValueError(f"--vary {key}: value {part!r} is not valid YAML ({e})") from None
    return key.strip(), values


def _split_top_level(text: str) -> list[str]:
    parts, depth, quote, start = [], 0, "", 0
    for i, c in enumerate(text):
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def print_report(row: dict[str, Any], done: int, total: int, stream=None) -> None:
    """One line per finished point, for the command line."""
    stream = stream or sys.stderr  # looked up now: tests and callers may have replaced it
    if row.get("skipped"):
        print(f"[{done}/{total}] {row['point']}: done before, skipped", file=stream)
    elif row["status"] == "ok":
        lat = row.get("latency_mean_ns")
        print(f"[{done}/{total}] {row['point']}: ok, delivered {row.get('delivered')}"
              + (f", mean latency {lat / 1e3:.3f} us" if lat is not None else ""), file=stream)
    else:
        print(f"[{done}/{total}] {row['point']}: {row['status'].upper()}: {row['error']}", file=stream)
