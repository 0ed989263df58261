"""`ibvp topo` (a topology validated and summarized by the C++ side), `ibvp schema`, and the
installed console script."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ibvp


def test_topo_two_switch_through_the_console_script(root: Path) -> None:
    exe = shutil.which("ibvp", path=str(Path(sys.executable).parent))
    assert exe, f"no ibvp console script next to {sys.executable}: run make"
    done = subprocess.run([exe, "topo", str(root / "configs/topologies/seed004_two_switch.yaml")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    fields = {line.split()[0]: line.split()[1] for line in done.stdout.splitlines()[1:] if line.startswith("  ")
              and len(line.split()) > 1}
    assert fields["switches"] == "2"
    assert fields["hosts"] == "9"
    assert "diameter" in done.stdout and "edge forwarding index" in done.stdout
    assert "path lengths" in done.stdout


def test_topo_json_of_a_scenario(cli, root: Path) -> None:
    code, out, err = cli("topo", root / "configs/seed004/fig2a.yaml", "--routing", "minhop", "--json")
    assert code == 0, err
    s = json.loads(out)
    assert (s["switches"], s["hosts"], s["links"], s["independent_cycles"]) == (2, 9, 10, 0)
    assert s["routing"] == "minhop"
    assert sum(s["path_length_histogram"].values()) == 9 * 8  # every ordered pair of hosts
    assert s["edge_forwarding_index"]["max"] >= s["edge_forwarding_index"]["mean"] > 0


def test_topo_ring_has_one_cycle(cli, ring: dict, tmp_path: Path) -> None:
    (tmp_path / "ring.yaml").write_text(ibvp.Scenario(ring).to_yaml())
    code, out, _err = cli("topo", tmp_path / "ring.yaml", "--json")
    assert code == 0
    s = json.loads(out)
    assert (s["switches"], s["hosts"], s["independent_cycles"]) == (5, 5, 1)


def test_topo_reports_deadlock_status_of_the_chosen_engine(cli, ring: dict, tmp_path: Path) -> None:
    # Min-hop on a ring of switches sends traffic both ways round the ring: its channel
    # dependencies close the ring; up*/down* cuts it at the root.
    (tmp_path / "ring.yaml").write_text(ibvp.Scenario(ring).to_yaml())
    code, out, _err = cli("topo", tmp_path / "ring.yaml", "--routing", "minhop", "--json")
    minhop = json.loads(out)["deadlock"]
    assert code == 0 and not minhop["acyclic"] and len(minhop["cycle"]) >= 5
    code, out, _err = cli("topo", tmp_path / "ring.yaml", "--routing", "updn")
    assert code == 0 and "deadlock               free" in out


def test_topo_dump_writes_opensm_tables_with_lmc_path_bits(cli, root: Path, tmp_path: Path) -> None:
    code, out, err = cli("topo", root / "configs/topologies/seed004_two_switch.yaml", "--lmc", "2",
                         "--routing", "updn", "--dump", tmp_path, "--json")
    assert code == 0, err
    lfts = (tmp_path / "opensm-lfts.dump").read_text().splitlines()
    blocks = [line for line in lfts if line.startswith("Unicast lids")]
    assert len(blocks) == 2
    # Each of the 9 hosts answers to 4 LIDs (LMC 2), each routed in each of the 2 switches.
    ca_entries = [line for line in lfts if "# Channel Adapter portguid" in line]
    assert len(ca_entries) == 2 * 9 * 4
    assert sum(1 for line in ca_entries if "'B_C'" in line) == 2 * 4
    sl2vl = (tmp_path / "opensm-sl2vl.dump").read_text()
    assert sl2vl.count("Channel Adapter 0x") == 9 and sl2vl.count("Switch 0x") == 2


def test_topo_bad_lmc_exits_2(cli, root: Path) -> None:
    code, _out, err = cli("topo", root / "configs/topologies/seed004_two_switch.yaml", "--lmc", "9")
    assert code == 2 and "0..7" in err


def test_topo_bad_file_exits_2(cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("switches:\n  - {name: A, ports: 2}\nhosts: [h1]\nlinks:\n  - [A/9, h1]\n")
    code, _out, err = cli("topo", bad)
    assert code == 2 and "links[0]" in err and "bad.yaml:5" in err


def test_schema_to_stdout_and_file(cli, tmp_path: Path) -> None:
    code, out, _err = cli("schema")
    assert code == 0 and json.loads(out) == ibvp.schema()
    code, _out, _err = cli("schema", "--out", tmp_path / "scenario.schema.json")
    assert code == 0
    assert json.loads((tmp_path / "scenario.schema.json").read_text()) == ibvp.schema()


def test_version(cli) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli("--version")
    assert exit_.value.code == 0


# ---- OpenSM and ibnetdiscover workflows ------------------------------------------------------

GENERATED = {
    "single_switch": {"generator": "single_switch", "hosts": 4},
    "fat_tree": {"generator": "fat_tree", "k": 2, "n": 3},
    "mesh": {"generator": "mesh", "x": 3, "y": 2, "hosts_per_switch": 2},
    "torus": {"generator": "torus", "x": 3, "y": 3},
    "random_irregular": {"generator": "random_irregular", "switches": 8, "seed": 1},
    "two_switch": {"generator": "two_switch", "local": 3, "remote": 2},
}


def _scenario(tmp_path: Path, topology: dict, **extra) -> Path:
    # The first host of every generator is named alike; the traffic section needs no names.
    doc = {"duration": "1ms", "topology": topology, "traffic": {"load": 0.1}, **extra}
    path = tmp_path / f"{topology['generator']}.yaml"
    path.write_text(ibvp.Scenario(doc).to_yaml())
    return path


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_every_generated_fabric_exports_as_ibnetdiscover_and_loads_back_the_same(cli, tmp_path: Path,
                                                                                  name: str) -> None:
    scenario = _scenario(tmp_path, GENERATED[name])
    want = ibvp.topology_summary(scenario, graph=True)
    # Plain: the names are the ids. With a map: ibnetdiscover's S-/H-<GUID> ids, names in the map.
    code, _out, err = cli("topo", scenario, "--export-ibnetdiscover", tmp_path / "plain.net")
    assert code == 0, err
    code, _out, err = cli("topo", scenario, "--export-ibnetdiscover", tmp_path / "ids.net",
                          "--export-node-name-map", tmp_path / "names.map")
    assert code == 0, err
    ids = (tmp_path / "ids.net").read_text()
    assert 'Ca\t1 "H-02' in ids and 'Ca\t1 "h' not in ids  # names only in the descriptions
    plain = ibvp.topology_summary(tmp_path / "plain.net", graph=True)
    mapped = ibvp.topology_summary(tmp_path / "ids.net", graph=True, node_name_map=tmp_path / "names.map")
    def cables(summary: dict) -> list:
        # A cable as the set of its two ends (which end comes first follows the file's order).
        return sorted(tuple(sorted([(a, p), (b, q)])) for a, p, b, q in summary["cables"])

    for back in (plain, mapped):
        assert back["nodes"] == want["nodes"]
        assert cables(back) == cables(want)


def test_generated_hosts_are_counted_from_one(tmp_path: Path) -> None:
    for name, topology in GENERATED.items():
        hosts = [n["name"] for n in ibvp.topology_summary(_scenario(tmp_path, topology), graph=True)["nodes"]
                 if n["kind"] == "endpoint"]
        if name in ("single_switch", "fat_tree"):
            assert hosts[0] == "h1" and hosts[-1] == f"h{len(hosts)}", name
        elif name != "two_switch":
            assert hosts[0].startswith("h") and hosts[0].endswith("_1"), (name, hosts[0])
            assert not any(h.endswith("_0") for h in hosts), name


def test_topo_dump_writes_four_opensm_files_and_file_engine_loads_them_back(cli, tmp_path: Path) -> None:
    scenario = _scenario(tmp_path, GENERATED["fat_tree"], routing="updn")
    code, out, err = cli("topo", scenario, "--dump", tmp_path / "a", "--json")
    assert code == 0, err
    for f in ("opensm-lfts.dump", "opensm-sl2vl.dump", "opensm-subnet.lst", "opensm.fdbs"):
        assert (tmp_path / "a" / f).is_file(), f
    # Each of the 8 hosts' cables is one line from each end, each of the 16 switch cables two.
    assert len((tmp_path / "a" / "opensm-subnet.lst").read_text().splitlines()) == 2 * (8 + 16)
    fdbs = (tmp_path / "a" / "opensm.fdbs").read_text()
    # 12 switches, each with a line per LID 1..20 (12 switch LIDs, then 8 hosts).
    assert fdbs.count("dump_ucast_routes: Switch 0x") == 12
    assert sum(1 for line in fdbs.splitlines() if line.startswith("0x")) == 12 * 20
    code, out, err = cli("topo", scenario, "--routing", "file", "--lfts-file", tmp_path / "a" / "opensm-lfts.dump",
                         "--dump", tmp_path / "b", "--json")
    assert code == 0, err
    assert json.loads(out)["routing"] == "file"
    assert (tmp_path / "b" / "opensm-lfts.dump").read_text() == (tmp_path / "a" / "opensm-lfts.dump").read_text()


def test_topo_roots_by_name_and_guid_file(cli, tmp_path: Path) -> None:
    scenario = _scenario(tmp_path, GENERATED["fat_tree"])
    code, out, err = cli("topo", scenario, "--routing", "updn", "--roots", "s2_0,s2_1,s2_2,s2_3", "--json")
    assert code == 0, err
    assert json.loads(out)["deadlock"]["acyclic"]
    code, _out, err = cli("topo", scenario, "--routing", "updn", "--roots", "s2_0,nosuch")
    assert code == 2 and "--roots" in err and "nosuch" in err
    # The GUIDs as opensm-subnet.lst lists them.
    cli("topo", scenario, "--dump", tmp_path / "d")
    lst = (tmp_path / "d" / "opensm-subnet.lst").read_text()
    guid = lst.split("NodeGUID:")[1].split()[0]
    (tmp_path / "roots.txt").write_text(f"# the first switch\n0x{guid}\n")
    code, out, err = cli("topo", scenario, "--routing", "updn", "--root-guid-file", tmp_path / "roots.txt", "--json")
    assert code == 0, err
    (tmp_path / "bad.txt").write_text(f"0x{guid}\n0x1234\n")
    code, _out, err = cli("topo", scenario, "--routing", "updn", "--root-guid-file", tmp_path / "bad.txt")
    assert code == 2 and f"{tmp_path / 'bad.txt'}:2" in err


def test_scenario_routing_options_roots_and_lfts_file(tmp_path: Path) -> None:
    ok = _scenario(tmp_path, GENERATED["fat_tree"], routing="updn", routing_options={"roots": ["s2_0", "s2_3"]})
    assert ibvp.topology_summary(ok)["deadlock"]["acyclic"]
    bad = _scenario(tmp_path, GENERATED["fat_tree"], routing="updn", routing_options={"roots": ["s2_0", "h1"]})
    with pytest.raises(ibvp.ConfigError) as e:
        ibvp.topology_summary(bad)
    assert "routing_options.roots[1]" in str(e.value) and "endpoint" in str(e.value)
    wrong_engine = _scenario(tmp_path, GENERATED["fat_tree"], routing="minhop", routing_options={"roots": ["s2_0"]})
    with pytest.raises(ibvp.ConfigError) as e:
        ibvp.topology_summary(wrong_engine)
    assert "routing_options.roots" in str(e.value)
