"""Debian's libumad2sim.so and infiniband-diags against `ibvp-sim --serve-umad`
(platform/umad, docs/management.md "Real management software against ibvp"). They skip only
when the Debian packages are absent (`make deps` installs ibsim-utils, infiniband-diags and
opensm)."""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ibvp import umad

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("IBVP_BUILD", ROOT / "build"))
SIM = str(BUILD / "ibvp-sim")
FABRIC = ROOT / "configs" / "examples" / "umad_two_switch.yaml"

needs_tools = pytest.mark.skipif(
    not Path(umad.LIBUMAD2SIM).exists() or not shutil.which("smpquery") or not shutil.which("ibstat"),
    reason="Debian's ibsim-utils/libumad2sim0 and infiniband-diags are not installed (make deps)")

# configs/examples/umad_two_switch.yaml: s1, s2, h1..h4 in that order, LIDs 1..6, 4X QDR
# cables of 2 m. Nodes without a GUID get kSyntheticGuidBase + (index + 1) * 256
# (platform/topology/topology.h), the CA port node GUID + 1.
SYNTHETIC_GUID_BASE = 0x0200000000000000
INDEX = {"s1": 0, "s2": 1, "h1": 2, "h2": 3, "h3": 4, "h4": 5}
LID = {"s1": 1, "s2": 2, "h1": 3, "h2": 4, "h3": 5, "h4": 6}
MAD_WIRE_BYTES = 8 + 12 + 8 + 256 + 4 + 2  # LRH, BTH, DETH, MAD, ICRC, VCRC
QDR_4X_BYTES_PER_NS = 4.0                 # 40 Gb/s signalling, 8b/10b
PROPAGATION_NS = 2 * 5.0                  # 2 m of cable at 5 ns/m


def node_guid(name: str) -> int:
    return SYNTHETIC_GUID_BASE + (INDEX[name] + 1) * 256


def rows(out: Path) -> list[dict[str, str]]:
    with open(out / "umad_mads.csv", newline="") as f:
        return list(csv.DictReader(f))


@needs_tools
def test_ibstat_under_libumad2sim_shows_the_hosts_guids_lid_and_rate_from_the_topology(tmp_path: Path) -> None:
    with umad.serve_umad(FABRIC, tmp_path / "out", serve_for=60, sim=SIM) as srv:
        r = srv.tool(["ibstat"], host="h3")
    assert r.returncode == 0, r.stderr
    text = r.stdout
    assert f"Node GUID: 0x{node_guid('h3'):016x}" in text
    assert f"Port GUID: 0x{node_guid('h3') + 1:016x}" in text
    assert f"Base lid: {LID['h3']}" in text
    assert "State: Active" in text and "Physical state: LinkUp" in text
    assert "Rate: 40" in text  # 4X QDR


@needs_tools
def test_an_smp_to_a_lid_nobody_has_times_out_after_the_simulated_response_timeout(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with umad.serve_umad(FABRIC, out, serve_for=60, timeout="200us", sim=SIM) as srv:
        r = srv.tool(["smpquery", "nodeinfo", "60"])
    assert r.returncode != 0  # the query failed, as on a real fabric without that LID
    log = [x for x in rows(out) if x["dlid"] == "60"]
    sent = [int(x["sim_ps"]) for x in log if x["event"] == "to_fabric"]
    expired = [int(x["sim_ps"]) for x in log if x["event"] == "timed_out"]
    assert len(sent) >= 1 and len(sent) == len(expired)
    # Every attempt comes back with ETIMEDOUT exactly 200 us of simulated time after it left,
    # and the next leaves at that instant: the software's think time costs no simulated time.
    assert [e - s for s, e in zip(sent, expired)] == [200_000_000] * len(sent)
    assert sent[1:] == expired[:-1]
    summary = json.loads((out / "umad.json").read_text())
    assert summary["sim_seconds"] == pytest.approx(len(sent) * 200e-6)
    assert summary["mads"]["timed_out"] == len(sent)


@needs_tools
def test_a_lid_routed_smp_crosses_both_switches_with_the_fabrics_latency(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with umad.serve_umad(FABRIC, out, serve_for=60, sim=SIM) as srv:
        srv.tool(["smpquery", "nodeinfo", str(LID["h3"])], host="h1")
    log = rows(out)
    first = next(x for x in log if x["event"] == "to_fabric" and x["dlid"] == str(LID["h3"]))
    tid = first["tid"]
    # What happened next to that MAD: h3 got it (no SMA there: unclaimed) or its response
    # came back to h1's client. Either way it crossed h1-s1, s1-s2 and s2-h3.
    after = [x for x in log if x["tid"] == tid and x["event"] in ("unclaimed", "to_client")]
    assert after, "the MAD never reached h3"
    latency_ns = (int(after[0]["sim_ps"]) - int(first["sim_ps"])) / 1000
    one_way_floor_ns = MAD_WIRE_BYTES / QDR_4X_BYTES_PER_NS + 3 * PROPAGATION_NS
    assert latency_ns >= one_way_floor_ns
    if after[0]["event"] == "unclaimed":
        assert after[0]["host"] == "h3"
        assert latency_ns < 2 * one_way_floor_ns + 1000  # cut through, not store and forward with slack


@needs_tools
def test_a_server_without_clients_advances_no_simulated_time(tmp_path: Path) -> None:
    out = tmp_path / "out"
    subprocess.run([SIM, str(FABRIC), "--serve-umad", "--serve-for", "0.5", "--umad-socket",
                    f"ibvp-idle-{os.getpid()}", "--out", str(out), "--quiet"], check=True, timeout=60)
    summary = json.loads((out / "umad.json").read_text())
    assert summary["stopped_by"] == "serve_for"
    assert summary["sim_seconds"] == 0
    assert rows(out) == []


def test_an_unknown_umad_host_is_refused_with_status_2_naming_the_option(tmp_path: Path) -> None:
    r = subprocess.run([SIM, str(FABRIC), "--serve-umad", "--serve-for", "1", "--umad-host", "nosuch",
                        "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "--umad-host" in r.stderr and "nosuch" in r.stderr and "fix" in r.stderr


def test_serving_a_fabric_of_fabric_only_endpoints_is_refused_naming_endpoint_model(tmp_path: Path) -> None:
    r = subprocess.run([SIM, str(FABRIC), "--serve-umad", "--serve-for", "1", "--set", "endpoint_model=fabric",
                        "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "endpoint_model" in r.stderr and str(FABRIC) in r.stderr



def test_serve_umad_raises_with_the_servers_message_when_it_does_not_start(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"status 2.*--umad-host"):
        umad.serve_umad(FABRIC, tmp_path / "out", serve_for=5, host="nosuch", sim=SIM)
