"""Results that survive any name: flow names, node names and port labels holding commas,
quotes, tabs, CR/LF, other control characters and non-ASCII come back exactly from
summary.json, the timeline, every CSV (csv module and pandas) and every Parquet file, and no
CSV column shifts. A YAML document must be UTF-8 (refused otherwise: test_cli_hostile_inputs),
so names with invalid UTF-8 come only from ibnetdiscover dumps, which carry bytes as real
fabrics report them: those are written as U+FFFD everywhere. Runs both ibvp-sim and ibvp.run."""
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

# Every kind of trouble a CSV or JSON writer can trip on.
SWITCH = 'sw,"core"\t1'
HOSTS = ["h1,a", 'h"2"', "h3\r\nx\x01\x1f\x7f", "中文 é h4", "h5 \\ back\\slash", "h6 last"]
# Invalid UTF-8, as a node description in a dump can hold it.
BAD_HOST_BYTES = b"h6\xffbad\xc3("
BAD_HOST = BAD_HOST_BYTES.decode("utf-8", "replace")  # as the results write it
FLOWS = ['f,1 "q"\ttab\nnl é 中文\x02', "f2\r", "=1+2", "  lead and trail  "]


def _topology(path: Path) -> None:
    names = HOSTS
    topo = {"defaults": {"width": "4X", "speed": "SDR", "length_m": 1.0},
            "switches": [{"name": SWITCH, "ports": len(names), "lid": 1}],
            "hosts": [{"name": n, "lid": i + 2} for i, n in enumerate(names)],
            "links": [[f"{SWITCH}/{i + 1}", n] for i, n in enumerate(names)]}
    path.write_bytes(yaml.safe_dump(topo, allow_unicode=True).encode())


def _scenario(topology: Path) -> dict:
    flows = [{"name": name, "src": HOSTS[i], "dst": HOSTS[(i + 1) % 4], "generator": "constant", "load": 0.2,
              "payload_bytes": 256} for i, name in enumerate(FLOWS)]
    flows.append({"name": "to last", "src": HOSTS[4], "dst": HOSTS[5], "generator": "constant", "load": 0.2,
                  "payload_bytes": 256})
    return {"name": 'hostile,"run"\t中', "seed": 3, "duration": "100us", "warmup": "10us",
            "topology": {"file": str(topology)}, "flows": flows,
            "outputs": {"packets_csv": True, "rate_ports": [f"{SWITCH}/3", f"{SWITCH}/6"], "rate_step": "10us",
                        "rate_window": "20us"}}


def _scenario_file(tmp_path: Path) -> Path:
    topo = tmp_path / "topo.yaml"
    _topology(topo)
    path = tmp_path / "hostile.yaml"
    path.write_bytes(yaml.safe_dump(_scenario(topo), allow_unicode=True).encode())
    return path


def _same(csv_cell: str, value) -> bool:
    if isinstance(value, str):
        return csv_cell == value
    if csv_cell == "":
        return isinstance(value, float) and math.isnan(value)
    return float(csv_cell) == float(value)


def _check_tables(out: Path, flow_names: list[str]) -> None:
    node_names = {SWITCH, *HOSTS}
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
    assert set(delivered["src"]) == set(HOSTS[:5]) and HOSTS[5] in set(delivered["dst"])


def _check_summary(out: Path, flow_names: list[str]) -> None:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["scenario"] == 'hostile,"run"\t中'
    assert [f["name"] for f in summary["flows"]] == flow_names
    assert summary["flows"][-1]["dst"] == HOSTS[5]
    assert summary["packets"]["delivered"] > 0


def _expected_flows() -> list[str]:
    return [*FLOWS, "to last"]


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
    res = ibvp.run(sc, tmp_path / "out", timeout=120)
    names = _expected_flows()
    assert list(res.flows["name"]) == names
    assert set(res.ports["node"]) == {SWITCH, *HOSTS}
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


def test_invalid_utf8_in_a_dumps_node_names_is_written_as_replacement_characters(tmp_path: Path) -> None:
    # One switch and three CAs; the third CA's name holds bytes that are not UTF-8. Uniform
    # traffic reaches it without the scenario having to name it.
    def ca(guid: int, name: bytes, port: int) -> bytes:
        return (b"caguid=0x%x\nCa\t1 \"%s\"\t\t# \"%s\"\n[1](%x) \t\"sw\"[%d]\t\t# lid %d lmc 0 \"sw\" lid 1 4xSDR\n\n"
                % (guid, name, name, guid + 1, port, port + 1))
    names = [b"h1", b"h2", BAD_HOST_BYTES]
    dump = b"switchguid=0x100(100)\nSwitch\t3 \"sw\"\t\t# \"sw\" base port 0 lid 1 lmc 0\n"
    dump += b"".join(b"[%d]\t\"%s\"[1](%x) \t\t# \"%s\" lid %d 4xSDR\n" % (i + 1, n, 0x201 + 16 * i, n, i + 2)
                     for i, n in enumerate(names))
    dump += b"\n" + b"".join(ca(0x200 + 16 * i, n, i + 1) for i, n in enumerate(names))
    (tmp_path / "fabric.net").write_bytes(dump)
    scenario = tmp_path / "s.yaml"
    scenario.write_text("duration: 50us\ntopology: {file: fabric.net}\n"
                        "traffic: {generator: constant, pattern: uniform, load: 0.3, payload_bytes: 256}\n"
                        "outputs: {packets_csv: true}\n")
    out = tmp_path / "out"
    proc = subprocess.run([str(BUILD / "ibvp-sim"), str(scenario), "--out", str(out), "--quiet"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for name in TABLES:
        df = pq.ParquetFile(out / f"{name}.parquet").read().to_pandas()
        with open(out / f"{name}.csv", newline="", encoding="utf-8") as f:  # valid UTF-8: reads
            rows = list(csv.reader(f))
        assert len(rows) - 1 == len(df), name
    ports = pq.ParquetFile(out / "ports.parquet").read().to_pandas()
    assert set(ports["node"]) == {"sw", "h1", "h2", BAD_HOST}
    packets = pq.ParquetFile(out / "packets.parquet").read().to_pandas()
    assert BAD_HOST in set(packets["dst"])
    json.loads((out / "summary.json").read_text(encoding="utf-8"))


def test_ibvp_topo_takes_a_dump_whose_names_are_not_utf8_as_ibvp_sim_does(tmp_path: Path) -> None:
    dump = (b"switchguid=0x100(100)\nSwitch\t2 \"sw\"\t\t# \"sw\" base port 0 lid 1 lmc 0\n"
            b"[1]\t\"h1\"[1](201) \t\t# \"h1\" lid 2 4xSDR\n"
            b"[2]\t\"" + BAD_HOST_BYTES + b"\"[1](211) \t\t# lid 3 4xSDR\n\n"
            b"caguid=0x200\nCa\t1 \"h1\"\t\t# \"h1\"\n[1](201) \t\"sw\"[1]\t\t# lid 2 lmc 0 \"sw\" lid 1 4xSDR\n\n"
            b"caguid=0x210\nCa\t1 \"" + BAD_HOST_BYTES + b"\"\t\t# x\n[1](211) \t\"sw\"[2]\t\t# lid 3 lmc 0 \"sw\" lid 1 4xSDR\n")
    (tmp_path / "fabric.net").write_bytes(dump)
    summary = ibvp.topology_summary(tmp_path / "fabric.net", graph=True)
    assert summary["hosts"] == 2
