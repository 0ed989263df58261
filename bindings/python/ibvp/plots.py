"""Figures from a results directory (one run) or a sweep directory, as PNG and SVG.

    ibvp plot OUT_DIR --kind rates-over-time|throughput|latency-cdf    (one run)
    ibvp plot OUT_DIR --kind deadline|jitter|best_worst [--sls 0,1,2,3] (a run with CBR connections)
    ibvp plot SWEEP_DIR --kind latency-vs-load [--x KEY] [--y COLUMN]   (a sweep)
    ibvp plot SWEEP_DIR --kind classes-vs-load [--x KEY] [--y dmp,dmt_ms,...] (seed 000 Figs. 7-10)

Every function writes `<dir>/<name>.png` and `.svg` (or `<out>.png`/`.svg`) and returns the
paths. Figures are made with matplotlib's object API (`Figure`, no pyplot), so nothing here
changes the backend of a notebook or script that imports it.

`make demo` draws the seed 004 view with `ibvp plot --kind rates-over-time --group --label
... --window 40ms,60ms`: flows named localN / remoteN summed into one series each, as Fig. 2
of the paper shows them, ports given readable names, and a table of mean rates inside the
window.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

_TIME_UNITS = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def _save(fig: "Figure", directory: Path, name: str, out: str | Path | None) -> list[Path]:
    base = Path(out) if out is not None else directory / name
    base.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    paths = [base.with_name(f"{base.name}.{ext}") for ext in ("png", "svg")]
    for p in paths:
        fig.savefig(p, dpi=120)
    return paths


def _figure(width: float = 9, height: float = 4.8):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    return fig, fig.subplots()


def _read(directory: Path, table: str) -> "pd.DataFrame":
    from .results import Results

    return Results(directory).table(table)


# ---- rates over time (rates.csv) --------------------------------------------------------

def group_flow_series(rates: "pd.DataFrame") -> "pd.DataFrame":
    """Sums flow series whose names differ only by a trailing number (local1..localN ->
    local); ports (node/port) stay as they are."""
    rates = rates.copy()
    rates["series"] = [s if "/" in s else re.sub(r"\d+$", "", s) for s in rates["series"]]
    return rates.groupby(["series", "time_s"], as_index=False)[["rate_Bps", "utilization"]].sum(min_count=1)


def rates_over_time(out_dir: str | Path, *, out: str | Path | None = None, title: str | None = None,
                    link_Bps: float | None = None, group: bool = False,
                    labels: dict[str, str] | None = None) -> list[Path]:
    """Sliding-window rate of every sampled flow and port over time, as a fraction of its
    link's data rate (the utilization column), or of `link_Bps` when given. `labels` renames
    series in the legend (e.g. {"B/7": "root link"})."""
    out_dir = Path(out_dir)
    rates = _read(out_dir, "rates")
    if group:
        rates = group_flow_series(rates)
    labels = labels or {}
    fig, ax = _figure()
    for name, part in sorted(rates.groupby("series"), key=lambda kv: kv[0]):
        y = part["rate_Bps"] / link_Bps if link_Bps else part["utilization"]
        ax.plot(part["time_s"] * 1e3, y, label=labels.get(name, name))
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("rate / link rate")
    ax.set_ylim(0, 1.05)
    ax.set_title(title or f"{_scenario_name(out_dir)}: rates over time")
    ax.grid(alpha=0.3)
    if rates["series"].nunique() <= 20:  # beyond that a legend hides the plot
        # Saturated links sit at the top of the plot; the middle right is usually empty.
        ax.legend(loc="center right", fontsize=8)
    return _save(fig, out_dir, "rates", out)


def mean_rates(out_dir: str | Path, a_s: float, b_s: float, *, link_Bps: float | None = None,
               group: bool = True, labels: dict[str, str] | None = None) -> dict[str, float]:
    """Mean of each series between times a and b (seconds), as a fraction of the link rate,
    keyed by series name (or its label)."""
    rates = _read(Path(out_dir), "rates")
    if group:
        rates = group_flow_series(rates)
    inside = rates[(rates["time_s"] >= a_s) & (rates["time_s"] <= b_s)]
    if inside.empty:
        raise ValueError(f"{out_dir}: no rate samples between {a_s * 1e3:g} and {b_s * 1e3:g} ms")
    values = inside["rate_Bps"] / link_Bps if link_Bps else inside["utilization"]
    means = values.groupby(inside["series"]).mean().to_dict()
    labels = labels or {}
    return {labels.get(k, k): v for k, v in means.items()}


# ---- throughput per flow (flows.csv) ------------------------------------------------------

def throughput(out_dir: str | Path, *, out: str | Path | None = None, title: str | None = None) -> list[Path]:
    """Bar chart of each flow's throughput over the measured time, labelled with its share
    of the source link."""
    out_dir = Path(out_dir)
    flows = _read(out_dir, "flows")
    fig, ax = _figure(max(6.0, min(0.5 * len(flows) + 3, 24)), 4.8)
    bars = ax.bar(flows["name"].astype(str), flows["throughput_Bps"] / 1e9, color="tab:blue")
    if len(flows) <= 40:
        ax.bar_label(bars, labels=[f"{f:.0%}" for f in flows["throughput_fraction"].fillna(0)], fontsize=8)
    ax.set_xlabel("flow")
    ax.set_ylabel("throughput (GB/s)")
    ax.set_title(title or f"{_scenario_name(out_dir)}: throughput per flow (label: share of the source link)")
    ax.grid(alpha=0.3, axis="y")
    if len(flows) > 8:
        ax.tick_params(axis="x", labelrotation=60, labelsize=8)
    return _save(fig, out_dir, "throughput", out)


# ---- latency distribution (packets.csv) ---------------------------------------------------

def latency_cdf(out_dir: str | Path, *, out: str | Path | None = None, title: str | None = None) -> list[Path]:
    """Cumulative distribution of packet latency per flow (packets created after warm-up)."""
    import numpy as np

    out_dir = Path(out_dir)
    packets = _read(out_dir, "packets")
    warmup_ns = _summary(out_dir).get("warmup_seconds", 0) * 1e9
    done = packets[(packets["status"] == "delivered") & (packets["created_ns"] >= warmup_ns)]
    flow_names = [f["name"] for f in _summary(out_dir).get("flows", [])]
    fig, ax = _figure()
    groups = list(done.groupby("flow"))
    if len(groups) > 12:  # too many curves to tell apart: one for the whole fabric
        groups = [("all flows", done)]
    for flow, part in groups:
        lat = np.sort(part["latency_ns"].to_numpy() / 1e3)
        if not isinstance(flow, str):  # packets.csv numbers flows as flows.csv lists them
            flow = flow_names[int(flow)] if 0 <= int(flow) < len(flow_names) else f"flow {flow}"
        ax.plot(lat, np.arange(1, len(lat) + 1) / len(lat), label=flow)
    ax.set_xscale("log")
    ax.set_xlabel("latency (us)")
    ax.set_ylabel("fraction of packets")
    ax.set_title(title or f"{_scenario_name(out_dir)}: packet latency")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    return _save(fig, out_dir, "latency-cdf", out)


# ---- a sweep: latency against load (sweep.csv) --------------------------------------------

def latency_vs_load(sweep_dir: str | Path, *, x: str | None = None, y: str = "latency_mean_ns",
                    out: str | Path | None = None, title: str | None = None) -> list[Path]:
    """One line per combination of the other varied keys: `y` (a sweep.csv column, or the
    ratio of two, "A / B"; latencies drawn in microseconds) against the varied key `x`
    (default: the first one with "load" in its name, else the first). Failed points are left
    out."""
    import pandas as pd

    sweep_dir = Path(sweep_dir)
    path = sweep_dir / "sweep.csv"
    if not path.exists():
        raise FileNotFoundError(f"{sweep_dir}: no sweep.csv; latency-vs-load plots a sweep directory "
                                "(ibvp sweep SCENARIO.yaml --vary KEY=V1,V2,... --out DIR)")
    table = pd.read_csv(path)
    keys = list(table.columns[: list(table.columns).index("point")])
    if not keys:
        raise ValueError(f"{path}: the sweep varied nothing")
    if x is None:
        x = next((k for k in keys if "load" in k), keys[0])
    if x not in keys:
        raise ValueError(f"--x {x}: not a varied key of this sweep; varied: {', '.join(keys)}")
    # "rate:remote / rate:local": seed 004 Fig. 5(b)'s fairness ratio.
    parts = [p.strip() for p in y.split(" / ")] if " / " in y else [y]
    for col in parts:
        if col not in table.columns:
            raise ValueError(f"--y {col}: not a column of sweep.csv; columns: {', '.join(table.columns)}")
    if len(parts) > 2:
        raise ValueError(f"--y {y}: give one column or the ratio of two, \"A / B\"")
    if len(parts) == 2:
        table[y] = table[parts[0]] / table[parts[1]]
    ok = table[table["status"] == "ok"].copy()
    if ok.empty:
        raise ValueError(f"{path}: no point of the sweep succeeded; nothing to plot")
    ok["_x"] = _as_number(ok[x])
    scale, unit = (1e-3, " (us)") if y.endswith("_ns") else (1.0, "")
    others = [k for k in keys if k != x]
    fig, ax = _figure()
    for label, part in (ok.groupby(others) if others else [((), ok)]):
        part = part.sort_values("_x")
        label = label if isinstance(label, tuple) else (label,)
        ax.plot(part["_x"], part[y] * scale, marker="o",
                label=", ".join(f"{k}={v}" for k, v in zip(others, label)) or None)
    if ok["_x"].dtype == object:  # values that are not numbers: evenly spaced, as written
        ax.tick_params(axis="x", labelrotation=30)
    ax.set_xlabel(x)
    ax.set_ylabel(y.removesuffix("_ns") + unit)
    ax.set_title(title or f"{y} against {x}")
    ax.grid(alpha=0.3)
    if others:
        ax.legend(fontsize=8)
    return _save(fig, sweep_dir, "latency-vs-load", out)


# ---- a sweep: seed 000's metrics per traffic class against load ---------------------------

# The panels of seed 000 Figs. 7-10, in the paper's order: (a) DMP, (b) DMT, (c-e) mean packet
# latency of real-time, control and best-effort traffic.
CLASS_METRICS = {
    "dmp": "DMP (missed / delivered frames)",
    "dmt_ms": "DMT (ms, missed frames)",
    "rt_latency_us": "real-time mean latency (us)",
    "control_latency_us": "control mean latency (us)",
    "be_latency_us": "best-effort mean latency (us)",
    # Fig. 10f: multicast flows against every other data flow.
    "mc_latency_us": "multicast mean latency (us)",
    "uc_latency_us": "unicast mean latency (us)",
}
DEFAULT_PANELS = ["dmp", "dmt_ms", "rt_latency_us", "control_latency_us", "be_latency_us"]


def traffic_classes(summary: dict) -> dict[str, float]:
    """Seed 000's metrics of one run by traffic class (Sec. 4): real time is the video
    flows and the multicast flows (the paper's multicast traffic is a share of the real-time
    traffic), control the `control/<host>` flows (VL15), best effort every other flow; for
    Fig. 10f also multicast (flows to a group) against unicast (every other data flow).
    DMP and DMT come from summary.json's `video` totals; a class's mean latency is its flows'
    packet latencies weighted by delivered packets (NaN when it delivered none)."""
    nan = float("nan")
    sums = {"rt": [0.0, 0], "control": [0.0, 0], "be": [0.0, 0], "mc": [0.0, 0], "uc": [0.0, 0]}
    for f in summary.get("flows", []):
        name = str(f.get("name", ""))
        control, multicast = name.startswith("control/"), "multicast" in f
        cls = "control" if control else "rt" if f.get("frames") is not None or multicast else "be"
        mean, n = (f.get("latency_ns") or {}).get("mean"), f.get("delivered") or 0
        if mean is not None and n and mean == mean:
            for c in (cls, None if control else "mc" if multicast else "uc"):
                if c is not None:
                    sums[c][0] += mean * n
                    sums[c][1] += n
    video = summary.get("video") or {}
    dmt = video.get("dmt_ns")
    out = {"dmp": video.get("dmp", nan) if video.get("frames") else nan,
           "dmt_ms": (dmt / 1e6 if dmt is not None and dmt == dmt and video.get("frames_missed") else 0.0)
           if video.get("frames") else nan}
    for cls, (total, n) in sums.items():
        out[f"{cls}_latency_us"] = total / n / 1e3 if n else nan
    return out


def class_table(sweep_dir: str | Path) -> "pd.DataFrame":
    """sweep.csv's varied keys and status with traffic_classes() of every finished point,
    one row per point (failed points keep NaN metrics). Also written to classes.csv."""
    import pandas as pd

    sweep_dir = Path(sweep_dir)
    path = sweep_dir / "sweep.csv"
    if not path.exists():
        raise FileNotFoundError(f"{sweep_dir}: no sweep.csv; classes-vs-load plots a sweep directory "
                                "(ibvp sweep SCENARIO.yaml --vary KEY=V1,V2,... --out DIR)")
    table = pd.read_csv(path)
    keys = list(table.columns[: list(table.columns).index("point")])
    rows = []
    for _, r in table.iterrows():
        row = {k: r[k] for k in keys}
        row["point"], row["status"] = r["point"], r["status"]
        summary = _summary(sweep_dir / str(r["point"])) if r["status"] == "ok" else {}
        row.update(traffic_classes(summary) if summary else {k: float("nan") for k in CLASS_METRICS})
        rows.append(row)
    out = pd.DataFrame(rows, columns=[*keys, "point", "status", *CLASS_METRICS])
    out.to_csv(sweep_dir / "classes.csv", index=False)
    return out


def classes_vs_load(sweep_dir: str | Path, *, x: str | None = None, y: str | None = None,
                    out: str | Path | None = None, title: str | None = None) -> list[Path]:
    """Seed 000 Figs. 7-10: one panel per metric (`y`: comma-separated names of
    CLASS_METRICS; default DEFAULT_PANELS, the paper's five), a line per combination of the other varied keys (a
    routing or replication scheme), against the varied key `x` (default: the first with
    "load" in its name). Failed points are left out; a point whose class has no packets
    leaves a gap."""
    sweep_dir = Path(sweep_dir)
    table = class_table(sweep_dir)
    keys = list(table.columns[: list(table.columns).index("point")])
    if x is None:
        x = next((k for k in keys if "load" in k), keys[0] if keys else None)
    if x not in keys:
        raise ValueError(f"--x {x}: not a varied key of this sweep; varied: {', '.join(keys)}")
    metrics = [m.strip() for m in y.split(",")] if y else list(DEFAULT_PANELS)
    unknown = [m for m in metrics if m not in CLASS_METRICS]
    if unknown:
        raise ValueError(f"--y {','.join(unknown)}: classes-vs-load draws {', '.join(CLASS_METRICS)}")
    ok = table[table["status"] == "ok"].copy()
    if ok.empty:
        raise ValueError(f"{sweep_dir}: no point of the sweep succeeded; nothing to plot")
    ok["_x"] = _as_number(ok[x])
    others = [k for k in keys if k != x]
    from matplotlib.figure import Figure

    cols = min(len(metrics), 3)
    rows_n = (len(metrics) + cols - 1) // cols
    fig = Figure(figsize=(4.6 * cols, 3.8 * rows_n))
    axes = fig.subplots(rows_n, cols, squeeze=False).ravel()
    groups = list(ok.groupby(others, sort=False)) if others else [((), ok)]
    for ax, metric in zip(axes, metrics):
        for i, (label, part) in enumerate(groups):
            part = part.sort_values("_x")
            label = label if isinstance(label, tuple) else (label,)
            ax.plot(part["_x"], part[metric], marker="os^vD<>px*"[i % 10],
                    label=", ".join(str(v) for v in label) or None)
        ax.set_xlabel(x)
        ax.set_ylabel(CLASS_METRICS[metric])
        ax.grid(alpha=0.3)
    for ax in axes[len(metrics):]:
        ax.set_visible(False)
    if others:
        axes[0].legend(fontsize=7)
    fig.suptitle(title or f"{sweep_dir.name}: per traffic class against {x}")
    return _save(fig, sweep_dir, "classes-vs-load", out)


def _as_number(values: "pd.Series") -> "pd.Series":
    """Numbers as they are; times such as 40ns as seconds; anything else left as text."""
    import pandas as pd

    numbers = pd.to_numeric(values, errors="coerce")
    if numbers.notna().all():
        return numbers
    times = values.astype(str).map(_parse_time)
    if times.notna().all():
        return times
    return values.astype(str)


def _parse_time(text: str) -> float | None:
    m = re.fullmatch(r"\s*([0-9.]+(?:[eE][-+]?[0-9]+)?)\s*(ps|ns|us|ms|s)\s*", text)
    return float(m.group(1)) * _TIME_UNITS[m.group(2)] if m else None


# ---- CBR connections (seed 002 Figs. 3-5; service_levels.csv, connections.csv) ---------------

def _prefixed(table: "pd.DataFrame", prefix: str) -> list[str]:
    return [c for c in table.columns if c.startswith(prefix)]


def _sl_list(sls: "list[int] | None", table: "pd.DataFrame") -> list[int]:
    present = [int(v) for v in table["sl"]]
    if sls is None:
        return present
    missing = [v for v in sls if v not in present]
    if missing:
        raise ValueError(f"--sls: no connections on SL {', '.join(map(str, missing))}; "
                         f"SLs with connections: {', '.join(map(str, present))}")
    return list(sls)


def _iat_label(column: str) -> str:
    """iat_lt_0.5 -> "< 0.5", iat_0.5_0.75 -> "[0.5, 0.75)", iat_ge_1.5 -> ">= 1.5"."""
    name = column.removeprefix("iat_")
    if name.startswith("lt_"):
        return "< " + name[3:]
    if name.startswith("ge_"):
        return ">= " + name[3:]
    lo, _, hi = name.partition("_")
    return f"[{lo}, {hi})"


def deadline(out_dir: str | Path, *, out: str | Path | None = None, title: str | None = None,
             sls: "list[int] | None" = None) -> list[Path]:
    """seed 002 Fig. 3: per SL, the percentage of packets delivered within each threshold
    (a fraction of each connection's deadline D)."""
    out_dir = Path(out_dir)
    table = _read(out_dir, "service_levels")
    cols = _prefixed(table, "within_")
    fig, ax = _figure()
    for sl in _sl_list(sls, table):
        row = table[table["sl"] == sl].iloc[0]
        ax.plot(range(len(cols)), [100 * row[c] for c in cols], marker="o", label=f"SL {sl}")
    ax.set_xticks(range(len(cols)), [c.removeprefix("within_") for c in cols])
    ax.set_xlabel("delay threshold (fraction of each connection's deadline D)")
    ax.set_ylabel("% of packets within")
    ax.set_ylim(0, 105)
    ax.set_title(title or f"{_scenario_name(out_dir)}: packet delay per SL")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    return _save(fig, out_dir, "deadline", out)


def jitter(out_dir: str | Path, *, out: str | Path | None = None, title: str | None = None,
           sls: "list[int] | None" = None) -> list[Path]:
    """seed 002 Fig. 4: per SL, the percentage of inter-arrival times in each interval around
    the connection's nominal IAT."""
    import numpy as np

    out_dir = Path(out_dir)
    table = _read(out_dir, "service_levels")
    cols = _prefixed(table, "iat_")
    cols = [c for c in cols if c != "iat_samples"]
    chosen = _sl_list(sls, table)
    fig, ax = _figure()
    width = 0.8 / max(len(chosen), 1)
    for i, sl in enumerate(chosen):
        row = table[table["sl"] == sl].iloc[0]
        ax.bar(np.arange(len(cols)) + (i - (len(chosen) - 1) / 2) * width, [100 * row[c] for c in cols], width,
               label=f"SL {sl}")
    ax.set_xticks(range(len(cols)), [_iat_label(c) for c in cols], fontsize=8)
    ax.set_xlabel("inter-arrival time / nominal IAT")
    ax.set_ylabel("% of packets")
    ax.set_ylim(0, 105)
    ax.set_title(title or f"{_scenario_name(out_dir)}: packet jitter per SL")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8, ncol=2)
    return _save(fig, out_dir, "jitter", out)


def best_worst(out_dir: str | Path, *, out: str | Path | None = None, title: str | None = None,
               sls: "list[int] | None" = None) -> list[Path]:
    """seed 002 Fig. 5: for each SL (default 0-3, the strictest), the percentage of packets
    of its best and worst connection (ranked at rank_threshold x D, D/100 by default) within
    each threshold."""
    from matplotlib.figure import Figure

    out_dir = Path(out_dir)
    table = _read(out_dir, "service_levels")
    conns = _read(out_dir, "connections").set_index("connection")
    if sls is None:
        sls = [v for v in (0, 1, 2, 3) if v in set(int(x) for x in table["sl"])] or [int(table["sl"].iloc[0])]
    chosen = _sl_list(sls, table)
    cols = _prefixed(conns, "within_")
    fig = Figure(figsize=(4.2 * len(chosen), 4.2))
    axes = fig.subplots(1, len(chosen), squeeze=False)[0]
    for ax, sl in zip(axes, chosen):
        row = table[table["sl"] == sl].iloc[0]
        for which, style in (("best", "o-"), ("worst", "s--")):
            index = int(row[f"{which}_connection"])
            if index < 0:
                continue
            c = conns.loc[index]
            ax.plot(range(len(cols)), [100 * c[k] / c["delivered"] for k in cols], style,
                    label=f"{which} (connection {index})")
        ax.set_xticks(range(len(cols)), [k.removeprefix("within_") for k in cols], fontsize=7, rotation=45)
        ax.set_ylim(0, 105)
        ax.set_title(f"SL {sl}")
        ax.set_xlabel("threshold")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("% of packets within")
    fig.suptitle(title or f"{_scenario_name(out_dir)}: best and worst connection per SL")
    return _save(fig, out_dir, "best_worst", out)


def frames(out_dir: str | Path, *, out: str | Path | None = None, title: str | None = None) -> list[Path]:
    """Seed 000's real-time metrics per video stream: DMP (missed / delivered frames, in %)
    and DMT (mean lateness of the missed frames, in ms), from the flows table's dmp and
    dmt_ns columns (docs/realtime_metrics.md). Streams without misses have no DMT bar."""
    from matplotlib.figure import Figure

    out_dir = Path(out_dir)
    flows = _read(out_dir, "flows")
    if "dmp" not in flows.columns:
        raise ValueError(f"{out_dir}: the flows table has no dmp column (written by this version for video flows)")
    video = flows[flows["dmp"].notna()]
    if video.empty:
        raise ValueError(f"{out_dir}: no video flow in the run (flows with generator: video)")
    names = [str(n) for n in video["name"]]
    fig = Figure(figsize=(max(6.0, 0.7 * len(names) + 3), 6.4))
    top, bottom = fig.subplots(2, 1, sharex=True)
    x = range(len(names))
    top.bar(x, [100 * v for v in video["dmp"]], color="tab:red")
    top.set_ylabel("DMP (% of frames missed)")
    top.grid(alpha=0.3, axis="y")
    bottom.bar(x, [v / 1e6 if v == v else 0.0 for v in video["dmt_ns"]], color="tab:purple")
    bottom.set_ylabel("DMT (ms late, missed frames)")
    bottom.set_xticks(list(x), names, rotation=45, ha="right", fontsize=8)
    bottom.grid(alpha=0.3, axis="y")
    fig.suptitle(title or f"{_scenario_name(out_dir)}: deadline misses per video stream")
    return _save(fig, out_dir, "frames", out)


# ---- a sweep of phased-mix runs: seed 003 Figs. 4, 5(a), 9 ---------------------------------

def _sweep_phases(sweep_dir: Path, kind: str) -> "pd.DataFrame":
    """Every finished point's phases table, with the sweep's varied keys and a label per point."""
    import pandas as pd

    path = sweep_dir / "sweep.csv"
    if not path.exists():
        raise FileNotFoundError(f"{sweep_dir}: no sweep.csv; {kind} plots a sweep directory of runs with a mix "
                                "(ibvp sweep SCENARIO.yaml --vary KEY=V1,V2,... --out DIR)")
    table = pd.read_csv(path, dtype=str)
    keys = list(table.columns[: list(table.columns).index("point")])
    parts = []
    for _, r in table.iterrows():
        if r["status"] != "ok":
            continue
        ph = _read(sweep_dir / str(r["point"]), "phases")
        for k in keys:
            ph[k] = r[k]
        ph["label"] = ", ".join(str(r[k]) for k in keys) or str(r["point"])
        parts.append(ph)
    if not parts:
        raise ValueError(f"{sweep_dir}: no point of the sweep succeeded; nothing to plot")
    return pd.concat(parts, ignore_index=True)


def _phase_names(ph: "pd.DataFrame") -> list[str]:
    return [f"{int(a)}:{int(b)}" for a, b in zip(ph["real_time_percent"], ph["best_effort_percent"])]


def control_split(sweep_dir: str | Path, *, out: str | Path | None = None, title: str | None = None) -> list[Path]:
    """Seed 003 Fig. 5(a): the control messages' mean latency per phase, one group of bars
    per phase and one bar per point of the sweep (a router design), each split into queueing
    (before the header enters the router) and network time. Numbers in control-split.csv."""
    sweep_dir = Path(sweep_dir)
    table = _sweep_phases(sweep_dir, "control-split")
    cols = ["label", "phase", "real_time_percent", "best_effort_percent", "control_packets",
            "control_mean_queueing_ns", "control_mean_network_ns", "control_mean_latency_ns"]
    missing = [c for c in cols if c not in table.columns]
    if missing:
        raise ValueError(f"{sweep_dir}: the phases tables lack {', '.join(missing)} (runs of an older ibvp-sim)")
    table[cols].to_csv(sweep_dir / "control-split.csv", index=False)
    labels = list(dict.fromkeys(table["label"]))
    first = table[table["label"] == labels[0]]
    names = _phase_names(first)
    fig, ax = _figure()
    width = 0.8 / len(labels)
    for i, label in enumerate(labels):
        part = table[table["label"] == label].sort_values("phase")
        xs = [p + (i - (len(labels) - 1) / 2) * width for p in part["phase"]]
        q = part["control_mean_queueing_ns"] / 1e3
        n = part["control_mean_network_ns"] / 1e3
        bars = ax.bar(xs, q, width * 0.95, label=f"{label}: queueing", hatch="//", alpha=0.6)
        ax.bar(xs, n, width * 0.95, bottom=q, label=f"{label}: network", color=bars.patches[0].get_facecolor(),
               alpha=1.0)
    ax.set_xticks(range(len(names)), names)
    ax.set_xlabel("phase (real time : best effort)")
    ax.set_ylabel("control mean latency (us)")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7, ncol=2)
    ax.set_title(title or f"{sweep_dir.name}: control latency, queueing and network (seed 003 Fig. 5a)")
    return _save(fig, sweep_dir, "control-split", out)


def phase_dmp(sweep_dir: str | Path, *, out: str | Path | None = None, title: str | None = None) -> list[Path]:
    """Seed 003 Figs. 4(a), 6, 7, 9: the real-time frames' DMP per phase, one line per point of
    the sweep (a router, NIC or block size). Numbers in phase-dmp.csv."""
    sweep_dir = Path(sweep_dir)
    table = _sweep_phases(sweep_dir, "phase-dmp")
    cols = ["label", "phase", "real_time_percent", "best_effort_percent", "rt_frames", "rt_dmp", "rt_dmt_ns",
            "be_mean_latency_ns"]
    table[cols].to_csv(sweep_dir / "phase-dmp.csv", index=False)
    fig, ax = _figure()
    names = None
    for i, label in enumerate(dict.fromkeys(table["label"])):
        part = table[table["label"] == label].sort_values("phase")
        names = names or _phase_names(part)
        ax.plot(part["phase"], part["rt_dmp"], marker="os^vD<>px*"[i % 10], label=label)
    ax.set_xticks(range(len(names)), names)
    ax.set_xlabel("phase (real time : best effort)")
    ax.set_ylabel("deadline missing probability")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title or f"{sweep_dir.name}: DMP per phase")
    return _save(fig, sweep_dir, "phase-dmp", out)


# ---- shared -------------------------------------------------------------------------------

def _summary(out_dir: Path) -> dict:
    path = out_dir / "summary.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _scenario_name(out_dir: Path) -> str:
    return _summary(out_dir).get("scenario", out_dir.name)


# The kinds of `ibvp plot --kind`.
KINDS: dict[str, Callable[..., list[Path]]] = {
    "rates-over-time": rates_over_time,
    "throughput": throughput,
    "latency-cdf": latency_cdf,
    "latency-vs-load": latency_vs_load,
    "classes-vs-load": classes_vs_load,
    "deadline": deadline,
    "jitter": jitter,
    "best_worst": best_worst,
    "frames": frames,
    # seed 003 (docs/seed003.md): sweeps of phased-mix runs
    "control-split": control_split,
    "phase-dmp": phase_dmp,
    # seed 001 Sec. 3.2 (ibvp.io_trace): a run fed a disk-I/O workload
    "io-latency": lambda d, **o: _io().plot_latency(d, **o),
    "io-waiting": lambda d, **o: _io().plot_waiting(d, **o),
}


def _io():
    from . import io_trace

    return io_trace


def plot(kind: str, directory: str | Path, **options) -> list[Path]:
    """Draws one kind of figure (see KINDS) from a results or sweep directory."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; kinds: {', '.join(KINDS)}")
    return KINDS[kind](directory, **options)
