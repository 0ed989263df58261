"""Results that survive any name: flow names, node names and port labels holding commas,
quotes, tabs, CR/LF, other control characters, non-ASCII and invalid UTF-8 come back exactly
from summary.json, the timeline, every CSV (csv module and pandas) and every Parquet file,
and no CSV column shifts. Invalid UTF-8 is written as U+FFFD everywhere (the loader takes
such names as given). Runs both ibvp-sim and ibvp.run."""
from __future__ import annotations

import csv
import json
import math
import os
import subprocess
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

import ibvp

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("IBVP_BUILD", ROOT / "build"))
TABLES = ("flows", "ports", "packets", "rates")

# Every kind of trouble a CSV or JSON writer can trip on; the last is invalid UTF-8 and is
# only in the topology file, which the C++ side reads (Python reads YAML as text).
SWITCH = 'sw,"core"\t1'
HOSTS = ["h1,a", 'h"2"', "h3\r\nx\x01\x1f\x7f", "中文 é h4", "h5 \\ back\\slash"]
BAD_HOST_BYTES = b"h6\xffbad\xc3("
BAD_HOST = BAD_HOST_BYTES.decode("utf-8", "replace")  # as the results write it
FLOWS = ['f,1 "q"\ttab\nnl é 中文\x02', "f2\r", "=1+2", "  lead and trail  "]


def _topology(path: Path) -> None:
    names = [*HOSTS, "BADHOST"]
    topo = {"defaults": {"width": "4X", "speed": "SDR", "length_m": 1.0},
            "switches": [{"name": SWITCH, "ports": len(names), "lid": 1}],
            "hosts": [{"name": n, "lid": i + 2} for i, n in enumerate(names)],
            "links": [[f"{SWITCH}/{i + 1}", n] for i, n in enumerate(names)]}
    text = yaml.safe_dump(topo, allow_unicode=True).encode()
    path.write_bytes(text.replace(b"BADHOST", BAD_HOST_BYTES))


def _scenario(topology: Path) -> dict:
    flows = [{"name": name, "src": HOSTS[i], "dst": HOSTS[(i + 1) % 4], "generator": "constant", "load": 0.2,
              "payload_bytes": 256} for i, name in enumerate(FLOWS)]
    # To the host whose name is invalid UTF-8 (a placeholder here, bytes in the file).
    flows.append({"name": "to bad", "src": HOSTS[4], "dst": "BADHOST", "generator": "constant", "load": 0.2,
                  "payload_bytes": 256})
    return {"name": 'hostile,"run"\t中', "seed": 3, "duration": "100us", "warmup": "10us",
            "topology": {"file": str(topology)}, "flows": flows,
            "outputs": {"packets_csv": True, "rate_ports": [f"{SWITCH}/3", f"{SWITCH}/6"], "rate_step": "10us",
                        "rate_window": "20us"}}


def _scenario_file(tmp_path: Path) -> Path:
    topo = tmp_path / "topo.yaml"
    _topology(topo)
    path = tmp_path / "hostile.yaml"
    path.write_bytes(yaml.safe_dump(_scenario(topo), allow_unicode=True).encode().replace(b"BADHOST", BAD_HOST_BYTES))
    return path


def _same(csv_cell: str, value) -> bool:
    if isinstance(value, str):
        return csv_cell == value
    if csv_cell == "":
        return isinstance(value, float) and math.isnan(value)
    return float(csv_cell) == float(value)


def _check_tables(out: Path, flow_names: list[str]) -> None:
    node_names = {SWITCH, *HOSTS, BAD_HOST}
    frames = {}
    for name in TABLES:
        table = pq.ParquetFile(out / f"{name}.parquet").read()
        df = table.to_pandas()
        frames[name] = df
        with open(out / f"{name}.csv", newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        assert rows[0] == table.column_names, name
        assert len(rows) - 1 == table.num_rows > 0, name
        for i, row in enumerate(rows[1:]):
            assert len(row) == len(rows[0]), f"{name}.csv row {i}: columns shifted: {row!r}"
            for j, cell in enumerate(row):
                assert _same(cell, df.iat[i, j]), f"{name}.csv row {i} column {rows[0][j]}: {cell!r} != {df.iat[i, j]!r}"
        # pandas reads the CSV to the same frame (text stays text, an empty number is NaN).
        text = df.columns[df.dtypes == object]
        via_pandas = pd.read_csv(out / f"{name}.csv", dtype={c: str for c in text}, keep_default_na=False,
                                 na_values={c: [""] for c in df.columns if c not in text})
        pd.testing.assert_frame_equal(via_pandas, df, check_dtype=False)
    assert list(frames["flows"]["name"]) == flow_names
    assert set(frames["ports"]["node"]) == node_names
    assert {f"{SWITCH}/3", f"{SWITCH}/6", *flow_names} == set(frames["rates"]["series"])
    delivered = frames["packets"][frames["packets"]["status"] == "delivered"]
    assert set(delivered["src"]) == set(HOSTS) and BAD_HOST in set(delivered["dst"])


def _check_summary(out: Path, flow_names: list[str]) -> None:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["scenario"] == 'hostile,"run"\t中'
    assert [f["name"] for f in summary["flows"]] == flow_names
    assert summary["flows"][-1]["dst"] == BAD_HOST
    assert summary["packets"]["delivered"] > 0


def _expected_flows() -> list[str]:
    return [*FLOWS, "to bad"]


def test_ibvp_sim_writes_hostile_names_that_read_back_exactly(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run([str(BUILD / "ibvp-sim"), str(_scenario_file(tmp_path)), "--out", str(out), "--quiet"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    _check_summary(out, _expected_flows())
    _check_tables(out, _expected_flows())


def test_ibvp_run_writes_hostile_names_that_read_back_exactly(tmp_path: Path) -> None:
    topo = tmp_path / "topo.yaml"
    _topology(topo)
    sc = _scenario(topo)
    # Python holds the scenario as text: the flow to the invalid-UTF-8 host goes (its name
    # cannot be typed here); that host's port still appears in ports.
    sc["flows"][-1]["dst"] = HOSTS[0]
    res = ibvp.run(sc, tmp_path / "out", timeout=120)
    names = _expected_flows()
    assert list(res.flows["name"]) == names
    assert set(res.ports["node"]) == {SWITCH, *HOSTS, BAD_HOST}
    assert res.summary["flows"][0]["name"] == FLOWS[0]
    for name in TABLES:
        # The DataFrame API reads the Parquet files the run wrote, not a copy of its own.
        pd.testing.assert_frame_equal(res.table(name), pd.read_parquet(res.out_dir / f"{name}.parquet"))


def test_the_timeline_of_hosts_with_hostile_names_is_valid_json(tmp_path: Path) -> None:
    topo = tmp_path / "topo.yaml"
    _topology(topo)
    sc = {"duration": "2ms", "topology": {"file": str(topo)}, "endpoint_model": "hca",
          "perftest": {"test": "send_bw", "client": HOSTS[0], "server": HOSTS[2], "sizes": [64], "iterations": 4},
          "outputs": {"packets_csv": False, "timeline": "timeline.json"}}
    res = ibvp.run(sc, tmp_path / "out", timeout=120)
    trace = json.loads((res.out_dir / "timeline.json").read_text(encoding="utf-8"))
    names = {e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"}
    assert names == {HOSTS[0], HOSTS[2]}
    assert any(e["ph"] == "X" for e in trace["traceEvents"])
    assert res.summary["perftest"]["rows"][0]["bytes"] == 64
