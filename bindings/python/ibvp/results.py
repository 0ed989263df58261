"""The files of one run, as Python objects.

`ibvp-sim` and `ibvp.run` write summary.json, run.json and the tables flows, ports, packets
(unless outputs.packets_csv is false), rates, and with CBR connections admission, connections
and service_levels, each as NAME.csv and NAME.parquet with the
same cells (columns: platform/metrics/report.cpp). `Results` reads each table from its
Parquet file when first asked for it (typed, exact, and much faster than CSV for packets);
a directory written before ibvp-sim wrote Parquet is read from its CSVs.

pandas is imported here, never by the package's import or the worker, so a child process
starts without it.
"""
from __future__ import annotations

import json
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

TABLES = ("flows", "ports", "packets", "rates", "admission", "connections", "service_levels", "paths",
          "phases", "link_events", "flit_classes")

# Columns whose text must stay text: a port's VL is "all" or a number, node and flow names
# may look like numbers.
_TEXT_COLUMNS = {
    "flows": ["name", "src", "dst"],
    "ports": ["node", "vl"],
    "packets": ["src", "dst", "route", "status", "drop_node"],
    "rates": ["series"],
    "admission": ["node", "kind"],
    "connections": ["src", "dst"],
    "service_levels": [],
    "paths": ["node", "dst"],
    "phases": [],
    "link_events": ["link", "ends", "state", "unreachable"],
    "flit_classes": [],
}


def read_table(out_dir: str | os.PathLike, name: str) -> "pd.DataFrame":
    """Table `name` of the run in `out_dir`: NAME.parquet, or NAME.csv in a directory written
    before the simulator wrote Parquet."""
    import pandas as pd

    if name not in TABLES:
        raise ValueError(f"unknown table {name!r}; tables: {', '.join(TABLES)}")
    out_dir = Path(out_dir)
    pq_path = out_dir / f"{name}.parquet"
    if pq_path.exists():
        return pd.read_parquet(pq_path)
    csv_path = out_dir / f"{name}.csv"
    if csv_path.exists():
        return pd.read_csv(csv_path, dtype={c: "string" for c in _TEXT_COLUMNS[name]}, keep_default_na=False,
                           na_values=["", "null", "nan"])
    hint = (" (the scenario sets outputs.packets_csv: false; set it to true to keep every packet)"
            if name == "packets" else
            " (only runs with a connections section write it)"
            if name in ("admission", "connections", "service_levels") else
            " (only runs with routing: multipath_adaptive write it)"
            if name == "paths" else
            " (only runs with a mix section write it)" if name == "phases" else
            " (only runs with switch.model: flit_wormhole write it)" if name == "flit_classes" else "")
    raise FileNotFoundError(f"{pq_path}: the run wrote no {name} table{hint}")


class Results:
    """One run's results directory: `summary`, `run`, and the tables as DataFrames."""

    def __init__(self, out_dir: str | os.PathLike, *, scenario: Any = None) -> None:
        self.out_dir = Path(out_dir)
        if not (self.out_dir / "summary.json").exists():
            raise FileNotFoundError(f"{self.out_dir}: no summary.json; not the output directory of a run "
                                    "(ibvp run SCENARIO.yaml --out DIR writes one)")
        self.scenario = scenario

    @classmethod
    def load(cls, out_dir: str | os.PathLike) -> "Results":
        """Reopens a results directory written earlier (by ibvp.run, `ibvp run` or ibvp-sim)."""
        return cls(out_dir)

    def __repr__(self) -> str:
        p = self.packets_summary
        return (f"Results({str(self.out_dir)!r}: {self.summary.get('scenario')}, {self.summary.get('sim_seconds')} s "
                f"simulated, {p.get('delivered')} of {p.get('injected')} packets delivered)")

    # ---- JSON files ----------------------------------------------------------------------

    @cached_property
    def summary(self) -> dict[str, Any]:
        """summary.json: scenario, seed, routing, sim_seconds, warmup_seconds, packets
        {injected, delivered, dropped, in_flight}, drops by reason, packet_hops, deadlock
        (null or the report), stuck (null or {packets, outputs, longest_wait_ns, worst}), flows
        [{name, src, dst, injected, ..., latency_ns {...}}], stopped_by (duration, connections,
        perftest or deadlock), traffic (seed 002 Table 2: bytes per cycle per node, host and
        switch port utilization) and connections (null, or the CBR connections' per-SL summary)."""
        return json.loads((self.out_dir / "summary.json").read_text())

    @cached_property
    def run_info(self) -> dict[str, Any]:
        """run.json: wall_seconds, events, events_per_s, packet_hops_per_s (empty if absent)."""
        path = self.out_dir / "run.json"
        return json.loads(path.read_text()) if path.exists() else {}

    @property
    def packets_summary(self) -> dict[str, int]:
        return self.summary.get("packets", {})

    @property
    def deadlock(self) -> str | None:
        return self.summary.get("deadlock")

    @property
    def stuck(self) -> dict[str, Any] | None:
        """Packets that waited at switch outputs with no progress for longer than
        deadlock_timeout when the run ended: {packets, outputs, longest_wait_ns, worst
        [{port, vl, packets, waiting_ns}]}, or None."""
        return self.summary.get("stuck")

    # ---- tables --------------------------------------------------------------------------

    @cached_property
    def flows(self) -> "pd.DataFrame":
        """flows.csv: one row per flow (throughput over the part of the measured time in which the
        flow is active, between its start and stop; latency of packets created after warm-up). Video
        flows also fill frames, frames_missed, frames_incomplete, frames_lost, dmp, dmt_ns, inter_frame_mean_ns and
        inter_frame_sd_ns (NaN for other flows; docs/realtime_metrics.md)."""
        return self.table("flows")

    @cached_property
    def ports(self) -> "pd.DataFrame":
        """ports.csv: one row per cabled port (vl "all") and per VL it used."""
        return self.table("ports")

    @cached_property
    def packets(self) -> "pd.DataFrame":
        """packets.csv: one row per packet; only written when outputs.packets_csv is true."""
        return self.table("packets")

    @cached_property
    def paths(self) -> "pd.DataFrame":
        """paths.csv (routing multipath_adaptive): per switch, DLID with alternatives and alternative,
        the output port and the packets that left by it (docs/routing.md)."""
        return self.table("paths")

    @cached_property
    def rates(self) -> "pd.DataFrame":
        """rates.csv: (time_s, series, rate_Bps, utilization), one row per sample and series."""
        return self.table("rates")

    @cached_property
    def admission(self) -> "pd.DataFrame":
        """admission.csv (runs with a connections section, seed 002): one row per output port
        with node, port, kind (host/switch), link_bps, reserved_bps, reserved_fraction,
        connections, sequences and free_entries of its high-priority table (docs/qos.md)."""
        return self.table("admission")

    @cached_property
    def connections(self) -> "pd.DataFrame":
        """connections.csv (runs with CBR connections, seed 002): one row per connection with its
        parameters (sl, hops, bandwidth_bps, reserved_bps, interval_ns = nominal IAT, deadline_ns =
        D), delivered packets (created after warm-up), within_<f>D (packets with delay <= f x D,
        cumulative), late, iat_<interval> counts and delay_mean_ns / delay_max_ns
        (docs/realtime_metrics.md)."""
        return self.table("connections")

    @cached_property
    def service_levels(self) -> "pd.DataFrame":
        """service_levels.csv (runs with CBR connections): one row per SL: connections, packets,
        late, within_<f>D and iat_<interval> as fractions, delay, and the best and worst
        connection (index, fraction of its packets within rank_threshold x D; seed 002 Fig. 5)."""
        return self.table("service_levels")

    @cached_property
    def flit_classes(self) -> "pd.DataFrame":
        """flit_classes.csv (runs with switch.model: flit_wormhole, seed 003): one row per
        traffic class (0 control, 1 real time, 2 best effort by default) with the payload flits
        through the routers' crossbars, the preemptions it suffered and made (Sec. 3.2.1) and its
        accelerations (Sec. 3.2.2: as a preempted message, or as one holding a wanted output VC)."""
        return self.table("flit_classes")

    @property
    def flit_router(self) -> dict[str, Any] | None:
        """summary.json's flit_router block (variant, acceleration, block_flits,
        nic_multiplexing, nic_scheduler, preemptions, accelerations, classes [...],
        messages_out_of_order: 0 unless the model is wrong), or None."""
        return self.summary.get("flit_router")

    @cached_property
    def phases(self) -> "pd.DataFrame":
        """phases.csv (runs with a mix section, seed 003): one row per phase with its span, its
        real-time:best-effort shares, the real-time streams' frames, DMP, DMT and inter-frame
        mean/SD, and the best-effort flows' packets, throughput and mean latency (docs/mix.md)."""
        return self.table("phases")

    @cached_property
    def firmware(self) -> "pd.DataFrame":
        """The HCAs' firmware (runs with endpoint_model: hca), from summary.json's "firmware"
        block: one row per HCA, indexed by its host's name, with image (the firmware image's
        path), build_id (its GNU build ID), events (handled), cycles (core cycles charged), log_lines and one column per firmware counter (doorbells, wqes,
        tx_messages, rx_packets, ..., becn_received: IBVP_CNT_* of firmware/hal/ibvp_hal.h).
        The lines themselves are in firmware.log (`firmware_log`; docs/firmware.md)."""
        import pandas as pd

        block = self.summary.get("firmware")
        if not block:
            raise KeyError(f"{self.out_dir / 'summary.json'} has no firmware block: only runs with "
                           "endpoint_model: hca have firmware")
        rows = [{"hca": h["hca"], "image": h.get("image"), "build_id": h.get("build_id"), "events": h["events"],
                 "cycles": h["cycles"], "log_lines": h["log_lines"], **h["counters"]} for h in block]
        return pd.DataFrame(rows).set_index("hca")

    @property
    def subnet_manager(self) -> dict:
        """summary.json's "subnet_manager" block (subnet_manager.mode: in_band): whether the
        subnet came up, when each phase ended (discovered_us, programmed_us, qos_us,
        multicast_us, armed_us, up_us), the SMPs sent, received and resent, per phase and per
        table written (smps_by_table: sl2vl, vlarb, mft), and the nodes and links found
        (docs/management.md). With link_events, its "link_events" list has one dict per
        event (trap, sweep, recovery, lost packets); out of band the block then holds only
        mode "out_of_band" and that list."""
        block = self.summary.get("subnet_manager")
        if block is None:
            raise KeyError(f"{self.out_dir / 'summary.json'} has no subnet_manager block: only runs with "
                           "subnet_manager: {mode: in_band} or link_events have one")
        return block

    @cached_property
    def link_events(self) -> "pd.DataFrame":
        """link_events.csv (runs with link_events): one row per event with the cable, its ends,
        the state, at_us, the first trap sent and read by the SM, its resends and repress, the
        sweeps and their SMPs, the LFT blocks set, recovered_us and recovery_us (time to
        recover), and the packets lost (lost_to_recovery, lost, unroutable; docs/management.md)."""
        return self.table("link_events")

    @cached_property
    def perftest(self) -> "pd.DataFrame":
        """The perftest's results (runs with a perftest section), from summary.json: one row
        per message size, indexed by bytes. Bandwidth tests: iterations, bw_peak_MBps,
        bw_avg_MBps (MiB/s, perftest's MB) and msg_rate_Mpps; latency tests: iterations,
        t_min_us, t_typical_us, t_avg_us, t_max_us, t_stdev_us, p99_us, p999_us. The test,
        QP type, MTU and QPs per side (perftest -q; iterations are per QP) are in its attrs. perftest.txt has the report as perftest prints it."""
        import pandas as pd

        block = self.summary.get("perftest")
        if not block:
            raise KeyError(f"{self.out_dir / 'summary.json'} has no perftest block: only runs with a perftest "
                           "section have one")
        df = pd.DataFrame(block["rows"]).set_index("bytes") if block["rows"] else pd.DataFrame()
        df.attrs.update({k: block.get(k) for k in ("test", "qp_type", "mtu", "qps")})
        return df

    @property
    def firmware_log(self) -> list[str]:
        """firmware.log's lines (time in us, host, level, text), in simulated-time order."""
        path = self.out_dir / "firmware.log"
        if not path.exists():
            raise FileNotFoundError(f"{path}: no firmware log; only runs with endpoint_model: hca write one")
        return path.read_text(encoding="utf-8", errors="replace").splitlines()

    def table(self, name: str) -> "pd.DataFrame":
        """A table by name (flows, ports, packets, rates, admission, connections, service_levels), from the
        Parquet file the run wrote."""
        return read_table(self.out_dir, name)

    def rate_series(self, name: str) -> "pd.Series":
        """One series of rates.csv (a flow name or a port as node/port): rate in bytes/s
        indexed by time in seconds."""
        df = self.rates
        part = df[df["series"] == name]
        if part.empty:
            names = ", ".join(sorted(df["series"].dropna().unique()))
            raise KeyError(f"no rate series {name!r} in {self.out_dir / 'rates.csv'}; series: {names} "
                           "(ports are sampled when listed in outputs.rate_ports)")
        return part.set_index("time_s")["rate_Bps"].rename(name)

    # ---- checks --------------------------------------------------------------------------

    def conservation_ok(self) -> bool:
        """Every injected packet is delivered, dropped or still in flight."""
        p = self.packets_summary
        return p["injected"] == p["delivered"] + p["dropped"] + p["in_flight"]
