"""Seed 001 Sec. 2 and 3.2: disk I/O as fabric traffic, and its metrics over time.

    reqs = io_trace.read_trace("cello.ascii")                  # or synthetic_requests(...)
    disks = io_trace.place_disks(32, placement="random", seed=1)
    pkts = io_trace.io_packets(reqs, disks, io_trace.hosts_of(32, disks), compression=15, sls=2)
    res = ibvp.run(scenario, "out/io", workload=pkts)           # outputs.packets_csv: true
    ts = io_trace.time_series(res.packets, step_s=1e-3)         # Fig. 2(a)-(c)'s curves

Traces. `read_trace` reads three block-I/O trace formats:
- `disksim`: DiskSim's ASCII input, one request per line, "arrival_ms device block
  size_in_512B_blocks flags", flags bit 0 set for a read. The HP traces (cello among them)
  are commonly converted to it.
- `msr`: the SNIA IOTTA block traces of the MSR Cambridge set, CSV
  "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime" with Timestamp in Windows
  100 ns ticks, Type Read or Write and Size in bytes.
- `srt`: HP Labs' binary SRT format, in which HP distributed the cello traces (the paper's,
  1999). See `read_srt` for the layout and where it comes from.
A malformed line (or SRT record) is refused with the file, the line (byte), the field and
the fix.

Synthetic stand-in (`synthetic_requests`), for when no trace is at hand. Ruemmler and
Wilkes (seed 001 ref. [5], the 1992 cello traces) report that "the majority of all
operations are writes" and that "I/O activity is very bursty" with writes that "rarely
come singly". The generator has exactly those features and nothing more: ON/OFF bursts
(exponential ON and OFF periods) with Poisson arrivals inside a burst, a write fraction
above one half, and request sizes drawn from a list of file-system block multiples. Its
default numbers (rates, fractions, sizes) are ours, not published cello statistics; pass
your own. Say which in any result.

Packets (Sec. 2): an access is carried in packets of at most 512 bytes of payload. A read
is a request packet from the host to the disk and the data in packets from the disk back;
a write is the data from the host and an acknowledgement packet from the disk. ibvp's
trace workloads are open loop, so the disk's packets leave at the request's time plus
`disk_service_s`, not when the request has arrived: a congested fabric delays them only on
the way back, never their start. Each packet of an access carries the access's creation
time, so `time_series` can put the access together again: (src, dst, created) is one
message.

Disks (Sec. 2): 23 of the switch ports hold disks, the other host ports hosts. Placements:
`random` (any 23 host ports), `concentrated` (the disks fill the host ports of 6 randomly
chosen switches), `uniform` (one disk per switch, on 23 random switches). SL/VLs: each disk
gets one of `sls` SLs at random, and every packet to or from it uses that SL; with the
scenario's data_vls equal to `sls` SL i runs on VL i.
"""
from __future__ import annotations

import csv
import math
import os
import random
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from .errors import ConfigError

MAX_PAYLOAD = 512        # Sec. 2: "split it into packets with a payload of 512 bytes at most"
DISKS = 23               # Sec. 2: "The disks will be attached to twenty-three ports"
CONCENTRATED_SWITCHES = 6  # Sec. 2: "disks are grouped in 6 switches selected randomly"
CONTROL_BYTES = 32       # payload of a read request or a write acknowledgement (our choice)
PLACEMENTS = ("random", "concentrated", "uniform")
# The stand-in configs/seed001/run_io.py runs (docs/seed001.md): an ON/OFF process per disk,
# bursts at 96,000 requests/s over all disks. Our numbers, chosen so that the paper's
# compression 15 congests up*/down* and not DFS.
SEED001_STAND_IN = {"per_device": True, "burst_rate_per_s": 96000.0}
FORMATS = ("disksim", "msr", "srt")


@dataclass(frozen=True)
class IoRequest:
    time_s: float
    device: int
    bytes: int
    read: bool


# ---- trace readers -----------------------------------------------------------------------

def read_trace(path: str | os.PathLike, fmt: str = "auto") -> list[IoRequest]:
    """The requests of a trace file, sorted by time, the first at time 0."""
    path = Path(path)
    if fmt == "auto":
        fmt = {".csv": "msr", ".srt": "srt"}.get(path.suffix.lower(), "disksim")
    if fmt not in FORMATS:
        raise ConfigError(f"{path}: format {fmt!r} is not known (fix: give one of {', '.join(FORMATS)})",
                          file=str(path), key="format", problem=f"unknown format {fmt!r}",
                          fix=f"give one of {', '.join(FORMATS)}")
    if fmt == "srt":
        reqs = read_srt(path)
    else:
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            reqs = list(_disksim(f, path) if fmt == "disksim" else _msr(f, path))
    if not reqs:
        raise _bad(path, 0, "requests", "the trace holds no request", "give a trace with one request per line")
    reqs.sort(key=lambda r: r.time_s)
    t0 = reqs[0].time_s
    return [IoRequest(r.time_s - t0, r.device, r.bytes, r.read) for r in reqs]


def _disksim(lines: Iterable[str], path: Path) -> Iterable[IoRequest]:
    for n, line in enumerate(lines, 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 5:
            raise _bad(path, n, "line", f"{len(fields)} fields", "write 'arrival_ms device block blocks flags'")
        t_ms = _number(path, n, "arrival_ms", fields[0], float)
        device = _number(path, n, "device", fields[1], int)
        blocks = _number(path, n, "blocks", fields[3], int)
        flags = _number(path, n, "flags", fields[4], int)
        if t_ms < 0 or device < 0 or blocks <= 0:
            raise _bad(path, n, "line", "a negative time or device, or no blocks",
                       "times and devices are >= 0, sizes > 0 blocks of 512 bytes")
        yield IoRequest(t_ms * 1e-3, device, blocks * 512, bool(flags & 1))


def _msr(lines: Iterable[str], path: Path) -> Iterable[IoRequest]:
    first = None  # ticks of the first line: times as differences keep their 100 ns in a float
    for n, row in enumerate(csv.reader(lines), 1):
        if not row or row[0].strip().lower() == "timestamp":
            continue
        if len(row) < 6:
            raise _bad(path, n, "line", f"{len(row)} fields",
                       "write Timestamp,Hostname,DiskNumber,Type,Offset,Size[,ResponseTime]")
        ticks = _number(path, n, "Timestamp", row[0], int)
        device = _number(path, n, "DiskNumber", row[2], int)
        kind = row[3].strip().lower()
        size = _number(path, n, "Size", row[5], int)
        if kind not in ("read", "write"):
            raise _bad(path, n, "Type", f"{row[3]!r}", "write Read or Write")
        if device < 0 or size <= 0:
            raise _bad(path, n, "line", "a negative disk or an empty access", "disks are >= 0, sizes > 0 bytes")
        first = ticks if first is None else first
        yield IoRequest((ticks - first) * 1e-7, device, size, kind == "read")


# HP SRT records (the layout of DiskSim's `hpl` trace reader, disksim_iotrace.c
# iotrace_hpl_get_ioreq_event, and of its disksim_hptrace.h, "derived from HPLabs's SRTlite
# code base"): 32-bit big-endian words.
SRT_SHORTIO = 1     # a completed I/O (HPL_SHORTIO)
SRT_SUSPECTIO = 4   # an I/O the tracer flagged as suspect (HPL_SUSPECTIO); DiskSim skips them
SRT_READ = 0x1      # ioflags: HPL_READ (B_READ of HP-UX 8.0); 0 is a write
SRT_FIELDS = ("size", "id", "sec", "usec", "start", "stop", "bytes", "sectno", "devno", "drivertype",
              "cylno", "ioflags", "info")
SRT_HEADER_END = 0x0C  # a form feed ends the ASCII header (iotrace_hpl_initialize_file)
SRT_MAX_HEADER = 1 << 20


def read_srt(path: str | os.PathLike) -> list[IoRequest]:
    """The I/O records of an HP SRT trace (binary), in file order, times as recorded.

    Layout, as DiskSim reads it (its trace formats `hpl`, with header, and `hpl2`, without):
    - an optional ASCII header of `name = value;` lines (one of them `tracedate`), ended by a
      form feed (0x0C); a file whose first bytes are a valid record has no header;
    - records of 32-bit big-endian words: size (bytes of the record), id (version << 16 |
      record type; version 1..4, type 1 SHORTIO or 4 SUSPECTIO), sec and usec (the time of the
      request), start and stop (microseconds from the enqueue), bytes, sectno, devno (the disk
      is bits 8..15, the minor number of HP-UX's dev_t), drivertype, cylno, ioflags (bit 0
      set for a read), info; version 4 adds queuelen, a SUSPECTIO record adds susflags.
      So a record is 52 bytes, 56 with one of the two extras, 60 with both.
    SUSPECTIO records are skipped, as DiskSim skips them. Errors name the byte offset."""
    path = Path(path)
    data = path.read_bytes()
    pos = 0 if _srt_record_at(data, 0) else _srt_header_end(data, path)
    out: list[IoRequest] = []
    while pos < len(data):
        if len(data) - pos < 16:
            raise _bad_srt(path, pos, "record", f"{len(data) - pos} bytes left, a record starts with 16",
                           "the file is truncated: cut it at the last whole record")
        size, rid, sec, usec = struct.unpack_from(">IIII", data, pos)
        version, kind = rid >> 16, rid & 0xFFFF
        if not 1 <= version <= 4 or kind not in (SRT_SHORTIO, SRT_SUSPECTIO):
            raise _bad_srt(path, pos, "id", f"0x{rid:08x} is not an I/O record (version 1..4, type 1 or 4)",
                           "give an SRT trace of disk I/O records (HP's cello traces are)")
        want = 4 * (len(SRT_FIELDS) + (version == 4) + (kind == SRT_SUSPECTIO))
        if size != want:
            raise _bad_srt(path, pos, "size", f"{size} bytes, but a version {version} type {kind} record has {want}",
                           "the file is not an SRT trace, or is damaged here")
        if len(data) - pos < size:
            raise _bad_srt(path, pos, "record", f"{len(data) - pos} bytes left of a {size}-byte record",
                           "the file is truncated: cut it at the last whole record")
        words = struct.unpack_from(">" + "I" * len(SRT_FIELDS), data, pos)
        rec = dict(zip(SRT_FIELDS, words))
        if usec >= 1_000_000:
            raise _bad_srt(path, pos, "usec", f"{usec} is not below one second", "give usec in 0..999999")
        if rec["bytes"] == 0:
            raise _bad_srt(path, pos, "bytes", "an access of 0 bytes", "give accesses of at least one byte")
        if kind == SRT_SHORTIO:
            out.append(IoRequest(sec + usec * 1e-6, (rec["devno"] >> 8) & 0xFF, rec["bytes"],
                                 bool(rec["ioflags"] & SRT_READ)))
        pos += size
    return out


def _srt_record_at(data: bytes, pos: int) -> bool:
    if len(data) - pos < 8:
        return False
    size, rid = struct.unpack_from(">II", data, pos)
    return 1 <= rid >> 16 <= 4 and rid & 0xFFFF in (SRT_SHORTIO, SRT_SUSPECTIO) and size in (52, 56, 60)


def _srt_header_end(data: bytes, path: Path) -> int:
    end = data.find(bytes([SRT_HEADER_END]), 0, SRT_MAX_HEADER)
    if end < 0:
        raise _bad_srt(path, 0, "header", "neither a record nor an ASCII header ended by a form feed (0x0C)",
                       "give an HP SRT trace (srt), or name the format: disksim or msr")
    return end + 1


def _bad_srt(path: Path, offset: int, key: str, problem: str, fix: str) -> ConfigError:
    return ConfigError(f"{path}: byte {offset}: {key}: {problem} (fix: {fix})", file=str(path), key=key,
                       problem=f"{problem} (byte {offset})", fix=fix)


def _number(path: Path, line: int, field: str, text: str, kind: type) -> Any:
    try:
        value = kind(text)
    except ValueError:
        raise _bad(path, line, field, f"{text!r} is not a number", f"write {field} as a number") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise _bad(path, line, field, f"{text!r} is not finite", f"write {field} as a finite number")
    return value


def _bad(path: Path, line: int, key: str, problem: str, fix: str) -> ConfigError:
    return ConfigError(f"{path}:{line}: {key}: {problem} (fix: {fix})", file=str(path), line=line, key=key,
                       problem=problem, fix=fix)


# ---- synthetic stand-in --------------------------------------------------------------------

def synthetic_requests(duration_s: float, devices: int = DISKS, *, burst_rate_per_s: float = 80000.0,
                       on_mean_s: float = 2e-3, off_mean_s: float = 8e-3, write_fraction: float = 0.6,
                       sizes: Sequence[int] = (1024, 2048, 4096, 8192, 8192, 8192), per_device: bool = False,
                       seed: int = 1) -> list[IoRequest]:
    """Bursty block I/O over `duration_s`: ON/OFF periods (exponential, means `on_mean_s`,
    `off_mean_s`), Poisson arrivals at `burst_rate_per_s` while ON, each to a uniform device,
    a write with probability `write_fraction`, its size drawn from `sizes` (bytes). With
    `per_device`, every device has ON/OFF periods of its own and arrivals at
    `burst_rate_per_s / devices` while ON: the same mean rate, but the devices' bursts do
    not coincide. The defaults are ours (see the module's docstring); deterministic for a
    seed."""
    if duration_s <= 0 or devices < 1 or burst_rate_per_s <= 0 or on_mean_s <= 0 or off_mean_s < 0:
        raise ValueError("synthetic_requests: duration, devices, burst rate and ON mean must be above 0")
    if not 0 <= write_fraction <= 1 or not sizes or min(sizes) <= 0:
        raise ValueError("synthetic_requests: write_fraction is 0..1 and sizes are bytes above 0")
    if not per_device:
        return _on_off(random.Random(f"seed001-io-{seed}"), duration_s, burst_rate_per_s, on_mean_s, off_mean_s,
                       write_fraction, list(sizes), lambda rng: rng.randrange(devices))
    reqs: list[IoRequest] = []
    for d in range(devices):
        reqs += _on_off(random.Random(f"seed001-io-{seed}-device-{d}"), duration_s, burst_rate_per_s / devices,
                        on_mean_s, off_mean_s, write_fraction, list(sizes), lambda rng, d=d: d)
    reqs.sort(key=lambda r: (r.time_s, r.device))
    return reqs


def _on_off(rng: random.Random, duration_s: float, rate: float, on_mean_s: float, off_mean_s: float,
            write_fraction: float, sizes: list[int], device: Any) -> list[IoRequest]:
    reqs: list[IoRequest] = []
    t = 0.0
    while t < duration_s:
        end = min(duration_s, t + rng.expovariate(1.0 / on_mean_s))
        t += rng.expovariate(rate)
        while t < end:
            reqs.append(IoRequest(t, device(rng), rng.choice(sizes), rng.random() >= write_fraction))
            t += rng.expovariate(rate)
        t = end + (rng.expovariate(1.0 / off_mean_s) if off_mean_s > 0 else 0.0)
    return reqs


# ---- disks and hosts -------------------------------------------------------------------------

def place_disks(switches: int, *, host_ports: int = 4, disks: int = DISKS, placement: str = "random",
                seed: int = 1) -> list[str]:
    """Names of the host ports that hold disks on a random_irregular fabric (hosts
    h<switch>_<port>, docs/topology.md), disk i first."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement {placement!r}: give one of {', '.join(PLACEMENTS)}")
    ports = [f"h{s}_{p}" for s in range(switches) for p in range(1, host_ports + 1)]
    if not 0 < disks < len(ports):
        raise ValueError(f"{disks} disks on {len(ports)} host ports: leave at least one host")
    rng = random.Random(f"seed001-disks-{placement}-{seed}")
    if placement == "random":
        return rng.sample(ports, disks)
    if placement == "uniform":
        if disks > switches:
            raise ValueError(f"placement uniform puts one disk per switch: {disks} disks need {disks} switches")
        return [f"h{s}_{rng.randrange(1, host_ports + 1)}" for s in rng.sample(range(switches), disks)]
    groups = max(CONCENTRATED_SWITCHES, math.ceil(disks / host_ports))
    if groups > switches:
        raise ValueError(f"placement concentrated needs {groups} switches, the fabric has {switches}")
    chosen = [f"h{s}_{p}" for s in rng.sample(range(switches), groups) for p in range(1, host_ports + 1)]
    return rng.sample(chosen, disks)


def hosts_of(switches: int, disks: Sequence[str], host_ports: int = 4) -> list[str]:
    """The host ports that hold no disk."""
    taken = set(disks)
    return [f"h{s}_{p}" for s in range(switches) for p in range(1, host_ports + 1) if f"h{s}_{p}" not in taken]


# ---- packets -----------------------------------------------------------------------------------

def split(size: int, max_payload: int = MAX_PAYLOAD) -> list[int]:
    """Payloads of the packets carrying `size` bytes: full packets, then the rest."""
    full, rest = divmod(size, max_payload)
    return [max_payload] * full + ([rest] if rest else [])


def io_packets(requests: Iterable[IoRequest], disks: Sequence[str], hosts: Sequence[str], *,
               compression: float = 1.0, sls: int = 1, disk_service_s: float = 0.0,
               max_payload: int = MAX_PAYLOAD, until_s: float | None = None, seed: int = 1) -> list[tuple]:
    """The packets (time_s, src, dst, payload_bytes, sl) of the accesses, for `ibvp.run(...,
    workload=...)`. Trace device d is disk d mod len(disks); each access comes from a host
    drawn at random; times are divided by `compression` (Sec. 3.2's time compression
    factor); accesses after `until_s` (compressed time) are left out."""
    if compression <= 0 or not 1 <= sls <= 15 or not disks or not hosts:
        raise ValueError("io_packets: compression above 0, 1..15 SLs, and some disks and hosts")
    rng = random.Random(f"seed001-io-packets-{seed}")
    disk_sl = [rng.randrange(sls) for _ in disks]  # Sec. 3.2: "Disks are assigned randomly to SL/VLs"
    out: list[tuple] = []
    for r in requests:
        t = r.time_s / compression
        if until_s is not None and t >= until_s:
            break
        d = r.device % len(disks)
        disk, host, sl = disks[d], hosts[rng.randrange(len(hosts))], disk_sl[d]
        reply_t = t + disk_service_s
        if r.read:
            out.append((t, host, disk, CONTROL_BYTES, sl))
            out.extend((reply_t, disk, host, p, sl) for p in split(r.bytes, max_payload))
        else:
            out.extend((t, host, disk, p, sl) for p in split(r.bytes, max_payload))
            out.append((reply_t, disk, host, CONTROL_BYTES, sl))
    out.sort(key=lambda p: p[0])
    return out


# ---- metrics over time -------------------------------------------------------------------------

def time_series(packets: Any, step_s: float, workload: Sequence[tuple] | None = None,
                hosts: Sequence[str] | None = None) -> Any:
    """Fig. 2's curves from a run's packets table, one row per `step_s`:
    `cumulative_latency_ns`, the mean latency of the messages delivered so far (Sec. 3.2,
    note 3: "adding the latency of all the messages ... and dividing by the number of
    messages received"; a message is the packets of one (src, dst, created) and its latency
    runs from creation to its last packet's arrival), and `waiting_per_host`, the packets
    created but not yet injected, averaged over the sources (`hosts`, default every source).
    A packet enters the table when its source injects it, so pass the `workload` the run
    was given: it counts the packets still waiting in their sources and tells complete
    messages from partly sent ones. Without it both count only injected packets."""
    import numpy as np
    import pandas as pd

    if step_s <= 0:
        raise ValueError("time_series: step_s above 0")
    p = packets.assign(key_ns=packets["created_ns"].round().astype("int64"))
    msgs = p.groupby(["src", "dst", "key_ns"], sort=False).agg(
        created_ns=("created_ns", "min"), done_ns=("done_ns", "max"), delivered=("done_ns", "count"))
    if workload is not None:
        w = pd.DataFrame(list(workload), columns=["time_s", "src", "dst", "payload_bytes", "sl"])
        w["key_ns"] = (w["time_s"] * 1e9).round().astype("int64")
        expected = w.groupby(["src", "dst", "key_ns"], sort=False).size().rename("expected")
        msgs = msgs.join(expected, how="left")
        msgs = msgs[msgs["delivered"] == msgs["expected"]]
        created = np.sort(w["time_s"].to_numpy() * 1e9)
        sources = list(hosts) if hosts is not None else sorted(w["src"].unique())
    else:
        msgs = msgs[msgs["delivered"] > 0]
        complete = p.groupby(["src", "dst", "key_ns"], sort=False)["done_ns"].apply(lambda s: s.notna().all())
        msgs = msgs[complete.reindex(msgs.index).to_numpy()]
        created = np.sort(p["created_ns"].to_numpy())
        sources = list(hosts) if hosts is not None else sorted(p["src"].unique())
    msgs = msgs.reset_index().sort_values("done_ns")
    latency = (msgs["done_ns"] - msgs["created_ns"]).to_numpy()
    step_ns = step_s * 1e9
    end_ns = float(np.nanmax([created.max() if len(created) else 0.0, p["done_ns"].max()]))
    edges = np.arange(step_ns, end_ns + step_ns, step_ns)
    done = msgs["done_ns"].to_numpy()
    csum = np.concatenate([[0.0], np.cumsum(latency)])
    k = np.searchsorted(done, edges, side="right")
    cumulative = np.where(k > 0, csum[k] / np.maximum(k, 1), np.nan)
    injected = np.sort(p["injected_ns"].dropna().to_numpy())
    waiting = np.searchsorted(created, edges, side="right") - np.searchsorted(injected, edges, side="right")
    return pd.DataFrame({"time_s": edges * 1e-9, "messages": k, "cumulative_latency_ns": cumulative,
                         "waiting_per_host": waiting / max(1, len(sources))})


# ---- figures (ibvp plot --kind io-latency | io-waiting) ---------------------------------------

def read_time_series(out_dir: str | os.PathLike, step_s: float | None = None) -> Any:
    """time_series of a run directory: its packets table and, when the run was given a
    workload (ibvp.run(..., workload=...)), its workload.csv; the step defaults to a 40th
    of the run's duration."""
    import json

    import pandas as pd

    from .results import read_table

    out_dir = Path(out_dir)
    try:
        packets = read_table(out_dir, "packets")
    except FileNotFoundError:
        raise FileNotFoundError(f"{out_dir}: no packets table; run with outputs.packets_csv: true") from None
    workload = None
    if (out_dir / "workload.csv").exists():
        workload = list(pd.read_csv(out_dir / "workload.csv").itertuples(index=False, name=None))
    if step_s is None:
        summary = json.loads((out_dir / "summary.json").read_text())
        step_s = float(summary["sim_seconds"]) / 40
    return time_series(packets, step_s, workload=workload)


def _plot(column: str, ylabel: str, name: str, out_dir: str | Path, out: str | Path | None,
          title: str | None) -> list[Path]:
    from .plots import _figure, _save, _scenario_name

    out_dir = Path(out_dir)
    ts = read_time_series(out_dir)
    fig, ax = _figure()
    scale = 1e-3 if column.endswith("_ns") else 1.0
    ax.plot(ts["time_s"] * 1e3, ts[column] * scale, marker=".")
    ax.set_xlabel("simulated time (ms)")
    ax.set_ylabel(ylabel)
    ax.set_title(title or f"{_scenario_name(out_dir)}: {ylabel}")
    ax.grid(alpha=0.3)
    return _save(fig, out_dir, name, out)


def plot_latency(out_dir: str | Path, *, out: str | Path | None = None, title: str | None = None) -> list[Path]:
    """Seed 001 Figs. 2(a,b), 3, 4: cumulative average message latency against time."""
    return _plot("cumulative_latency_ns", "cumulative average message latency (us)", "io-latency", out_dir, out,
                 title)


def plot_waiting(out_dir: str | Path, *, out: str | Path | None = None, title: str | None = None) -> list[Path]:
    """Seed 001 Fig. 2(c): packets waiting to be sent per node against time."""
    return _plot("waiting_per_host", "packets waiting per node", "io-waiting", out_dir, out, title)
