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

# ---- the real tools over the SMAs of the switches and HCAs (issue 16) -------------------

needs_sm_tools = pytest.mark.skipif(
    not Path(umad.LIBUMAD2SIM).exists() or not all(shutil.which(t) for t in ("ibnetdiscover", "ibroute", "opensm")),
    reason="Debian's ibsim-utils, infiniband-diags and opensm are not installed (make deps)")

SWITCH_PORTS = {"s1": 4, "s2": 4}
LINKS = [("s1", 1, "s2", 1), ("s1", 2, "h1", 1), ("s1", 3, "h2", 1), ("s2", 2, "h3", 1), ("s2", 3, "h4", 1)]
NAME_OF_GUID = {node_guid(n): n for n in INDEX}


def parse_ibnetdiscover(text: str) -> tuple[dict, set, dict]:
    """ibnetdiscover's topology output: nodes by GUID (type, ports, description), the links
    as pairs of (GUID, port), and each node's LID and each CA port's rate."""
    import re
    header = re.compile(r'^(Switch|Ca)\s+(\d+)\s+"[SH]-([0-9a-f]+)"\s+#\s+"([^"]*)"(.*)$')
    port = re.compile(r'^\[(\d+)\](?:\([0-9a-f]+\))?\s+"[SH]-([0-9a-f]+)"\[(\d+)\](?:\([0-9a-f]+\))?\s*#(.*)$')
    nodes: dict[int, tuple[str, int, str]] = {}
    links: set[frozenset] = set()
    info: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        if m := header.match(line):
            current = int(m.group(3), 16)
            nodes[current] = (m.group(1), int(m.group(2)), m.group(4))
            if lid := re.search(r"\blid (\d+)", m.group(5)):
                info[f"lid:{current:x}"] = lid.group(1)
        elif (m := port.match(line)) and current is not None:
            links.add(frozenset({(current, int(m.group(1))), (int(m.group(2), 16), int(m.group(3)))}))
            comment = m.group(4)
            if nodes[current][0] == "Ca":
                if lid := re.search(r"\blid (\d+)", comment):
                    info[f"lid:{current:x}"] = lid.group(1)
                if rate := re.search(r"\b(\d+x[A-Z]+)\s*$", comment.strip()):
                    info[f"rate:{current:x}"] = rate.group(1)
    return nodes, links, info


@needs_sm_tools
def test_ibnetdiscover_prints_the_fabric_that_was_loaded(tmp_path: Path) -> None:
    with umad.serve_umad(FABRIC, tmp_path / "out", serve_for=120, sim=SIM) as srv:
        r = srv.tool(["ibnetdiscover"], host="h1", timeout=120)
    assert r.returncode == 0, r.stderr
    nodes, links, info = parse_ibnetdiscover(r.stdout)
    want_nodes = {node_guid(n): ("Switch" if n in SWITCH_PORTS else "Ca", SWITCH_PORTS.get(n, 1), n) for n in INDEX}
    assert nodes == want_nodes
    # A switch's external ports face their peers; a CA's port 1 (ibnetdiscover names a CA by
    # its node GUID, the link by the port number).
    want_links = {frozenset({(node_guid(a), pa), (node_guid(b), pb)}) for a, pa, b, pb in LINKS}
    assert links == want_links
    for n in INDEX:
        assert info[f"lid:{node_guid(n):x}"] == str(LID[n]), n
        if n not in SWITCH_PORTS:
            assert info[f"rate:{node_guid(n):x}"] == "4xQDR", n


def lft_of(text: str) -> dict[int, int]:
    """ibroute's unicast table: DLID -> output port."""
    import re
    out = {}
    for line in text.splitlines():
        if m := re.match(r"^0x([0-9a-f]+)\s+(\d+)\s+:", line.strip()):
            out[int(m.group(1), 16)] = int(m.group(2))
    return out


@needs_sm_tools
def test_opensm_brings_the_fabric_up_and_its_lfts_read_back_with_ibroute_route_every_pair(tmp_path: Path) -> None:
    out = tmp_path / "out"
    osm = tmp_path / "opensm"
    osm.mkdir()
    # Every file OpenSM writes goes to the test's directory: log, cache, dumps.
    osm_env = {"OSM_CACHE_DIR": str(osm), "OSM_TMP_DIR": str(osm)}
    with umad.serve_umad(FABRIC, out, serve_for=600, sim=SIM) as srv:
        r = srv.tool(["opensm", "-o", "-f", str(osm / "opensm.log"), "--dump_files_dir", str(osm)],
                     host="h1", extra_env=osm_env, timeout=300)
        log = (osm / "opensm.log").read_text(errors="replace")
        assert r.returncode == 0, r.stdout + r.stderr + log[-3000:]
        assert "SUBNET UP" in log, log[-3000:]
        lfts = {}
        for sw in SWITCH_PORTS:
            q = srv.tool(["ibroute", str(LID[sw])], host="h2", timeout=60)
            assert q.returncode == 0, q.stderr
            lfts[sw] = lft_of(q.stdout)
        states = {}
        for n in INDEX:
            ports = range(1, 4) if n in SWITCH_PORTS else [1]
            for p in ports:
                q = srv.tool(["smpquery", "portinfo", str(LID[n]), str(p)], host="h3", timeout=60)
                assert q.returncode == 0, q.stderr
                states[(n, p)] = "Active" in next(l for l in q.stdout.splitlines() if l.startswith("LinkState"))
    assert all(states.values()), states
    # Every pair of hosts: from the source's switch, follow the LFTs across the cables.
    peer = {}
    for a, pa, b, pb in LINKS:
        peer[(a, pa)] = (b, pb)
        peer[(b, pb)] = (a, pa)
    hosts = [n for n in INDEX if n not in SWITCH_PORTS]
    for src in hosts:
        for dst in hosts:
            if src == dst:
                continue
            at, hops = peer[(src, 1)][0], 0
            while at in SWITCH_PORTS and hops < 4:
                port = lfts[at].get(LID[dst])
                assert port is not None, f"{at} has no route to {dst} (LID {LID[dst]})"
                at, hops = peer[(at, port)][0], hops + 1
            assert at == dst, f"{src} -> {dst} ends at {at}"
    # OpenSM programmed the tables in band: its LFT Sets crossed the fabric and were answered.
    rows_ = rows(out)
    sets = {x["tid"] for x in rows_ if x["event"] == "to_fabric" and x["method"] == "0x02" and x["attr_id"] == "0x0019"}
    answered = {x["tid"] for x in rows_ if x["event"] == "to_client" and x["attr_id"] == "0x0019"}
    assert sets and sets <= answered


@needs_sm_tools
def test_perfquery_reads_a_hosts_port_counters_over_qp1_through_the_fabric(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with umad.serve_umad(FABRIC, out, serve_for=120, sim=SIM) as srv:
        r = srv.tool(["perfquery", str(LID["h3"]), "1"], host="h1", timeout=60)
    assert r.returncode == 0, r.stderr
    assert f"Lid {LID['h3']} port 1" in r.stdout
    counters = dict(line.split(":", 1) for line in r.stdout.splitlines() if ":" in line and not line.startswith("#"))
    assert int(counters["PortRcvPkts"].strip(". ")) >= 1  # at least this GMP's request
    log = rows(out)
    gmp = [x for x in log if x["event"] == "to_fabric" and x["mgmt_class"] == "0x04"]
    assert gmp and all(x["dest_qp"] == "1" and x["dlid"] == str(LID["h3"]) for x in gmp)
    answered = {x["tid"] for x in log if x["event"] == "to_client" and x["mgmt_class"] == "0x04" and x["method"] == "0x81"}
    assert {x["tid"] for x in gmp} <= answered


def discovery_times(tmp_path: Path, run: int) -> list[tuple]:
    out = tmp_path / f"run{run}"
    with umad.serve_umad(FABRIC, out, serve_for=120, sim=SIM) as srv:
        r = srv.tool(["ibnetdiscover"], host="h2", timeout=120)
    assert r.returncode == 0, r.stderr
    # Everything but the wall time and the TIDs, which libibmad draws at random per process.
    keys = ("sim_ps", "event", "dlid", "slid", "dest_qp", "mgmt_class", "method", "attr_id", "attr_mod", "status",
            "hop_count")
    return [tuple(x[k] for k in keys) for x in rows(out)]


@needs_sm_tools
def test_ibnetdiscover_sees_the_same_simulated_times_on_every_run(tmp_path: Path) -> None:
    # ibnetdiscover keeps two SMPs on the wire: a response reaches it while the other SMP
    # travels, and the fabric waits for its reaction (serve.h's settle rule) however the
    # wall clock goes.
    first = discovery_times(tmp_path, 1)
    assert len(first) > 20
    for run in (2, 3):
        assert discovery_times(tmp_path, run) == first


def free_udp_ports(count: int) -> int:
    """A base port with `count` free UDP ports on 127.0.0.1 from it."""
    import random
    import socket
    rng = random.Random(os.getpid())
    for _ in range(200):
        base = rng.randrange(20000, 60000)
        socks = []
        try:
            for p in range(base, base + count):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free UDP port range")


@needs_sm_tools
def test_over_udp_ibnetdiscover_finds_every_node(tmp_path: Path) -> None:
    # Remote mode: IBSIM_SERVER_NAME and IBSIM_SERVER_PORT, control on the port, client i's
    # data on port + i + 1; the server listens on 127.0.0.1 only.
    port = free_udp_ports(11)
    with umad.serve_umad(FABRIC, tmp_path / "out", serve_for=120, udp_port=port, sim=SIM) as srv:
        assert srv.env == {"IBSIM_SERVER_NAME": "127.0.0.1", "IBSIM_SERVER_PORT": str(port)}
        r = srv.tool(["ibnetdiscover"], host="h4", timeout=120)
    assert r.returncode == 0, r.stderr
    nodes, links, _ = parse_ibnetdiscover(r.stdout)
    assert set(nodes) == {node_guid(n) for n in INDEX}
    assert len(links) == len(LINKS)


@needs_sm_tools
def test_a_capture_of_a_served_run_holds_the_tools_mads_as_tshark_dissects_them(tmp_path: Path) -> None:
    tshark = shutil.which("tshark")
    assert tshark, "tshark is not installed: run `make deps`"
    out = tmp_path / "out"
    with umad.serve_umad(FABRIC, out, serve_for=60, sim=SIM,
                         overrides=["outputs.pcaps=[{node: h1, port: 1, file: h1.pcap}]"]) as srv:
        r = srv.tool(["smpquery", "nodeinfo", str(LID["h3"])], host="h1")
    assert r.returncode == 0, r.stderr
    fields = subprocess.run([tshark, "-r", str(out / "h1.pcap"), "-T", "fields", "-E", "separator=|",
                             "-e", "infiniband.lrh.dlid", "-e", "infiniband.lrh.slid", "-e", "infiniband.mad.method",
                             "-e", "infiniband.mad.attributeid", "-e", "_ws.malformed"],
                            check=True, capture_output=True, text=True).stdout.split()
    # SubnGet(NodeInfo) out of h1 to h3, GetResp back: LIDs, method and attribute as sent.
    assert fields == [f"{LID['h3']}|{LID['h1']}|0x01|0x0011|", f"{LID['h1']}|{LID['h3']}|0x81|0x0011|"]


def test_ibvp_serve_umad_runs_the_server_and_exits_with_its_status(tmp_path: Path) -> None:
    import sys
    env = dict(os.environ, IBVP_SIM=SIM)
    ok = subprocess.run([sys.executable, "-m", "ibvp", "serve-umad", str(FABRIC), "--out", str(tmp_path / "out"),
                         "--serve-for", "0.3", "--socket", f"ibvp-cli-{os.getpid()}"],
                        capture_output=True, text=True, env=env, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert f"ready: IBSIM_SOCKNAME=ibvp-cli-{os.getpid()} ibsim-run" in ok.stdout
    assert json.loads((tmp_path / "out" / "umad.json").read_text())["stopped_by"] == "serve_for"
    bad = subprocess.run([sys.executable, "-m", "ibvp", "serve-umad", str(FABRIC), "--out", str(tmp_path / "bad"),
                          "--host", "nosuch"], capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 2 and "--umad-host" in bad.stderr
