"""End to end: a small fabric with seed 002's CBR connections run by ibvp-sim; the results
(summary.json's admission block and the admission table, read through ibvp.Results) agree
with each other and with the paper's 80 % limit, and every packet created is accounted for."""
from __future__ import annotations

import json
import os
import importlib.util
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("IBVP_BUILD", ROOT / "build"))


def results_module():
    """This tree's ibvp/results.py, whatever ibvp package the interpreter has installed."""
    spec = importlib.util.spec_from_file_location("ibvp_results_here", ROOT / "bindings/python/ibvp/results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

SCENARIO = """\
name: cbr_small
duration: 1ms
warmup: 0.1ms
routing: updn
topology: {generator: random_irregular, switches: 4, seed: 2}
switch: {data_vls: 15, vl_buffer_bytes: 4352}
endpoint: {data_vls: 15, vl_buffer_bytes: 4352}
connections: {service_levels: seed002, payload_bytes: 1024, refusals_in_a_row: 200}
"""


def test_connections_run_end_to_end_and_report_their_admission(tmp_path: Path) -> None:
    sim = BUILD / "ibvp-sim"
    assert sim.exists(), f"{sim} missing: run `make` first"
    config = tmp_path / "cbr.yaml"
    config.write_text(SCENARIO)
    out = tmp_path / "out"
    subprocess.run([str(sim), str(config), "--out", str(out), "--quiet"], check=True)
    r = results_module().Results(out)
    a = r.summary["admission"]
    assert a["requests"] == a["established"] + a["refused"]
    assert sum(a["per_verdict"].values()) == a["requests"]
    assert a["per_verdict"]["admitted"] == a["established"] > 100
    assert sum(s["established"] for s in a["per_sl"].values()) == a["established"]
    table = r.admission
    # 16 hosts on 4 switches: 16 CA ports and every cabled switch port.
    assert (table["kind"] == "host").sum() == 16
    assert (table["reserved_fraction"] <= 0.8 + 1e-12).all()
    assert (table["reserved_bps"] <= 0.8 * table["link_bps"]).all()
    hosts = table[table["kind"] == "host"]
    assert abs(hosts["reserved_bps"].mean() - a["host_interfaces"]["mean_bps"]) < 1e-3 * a["host_interfaces"]["mean_bps"]
    # Every connection holds its source's CA port: the hosts' counts add up to the total.
    assert hosts["connections"].sum() == a["established"]
    p = r.summary["packets"]
    assert p["injected"] == p["delivered"] + p["in_flight"] > 0
    assert p["dropped"] == 0
