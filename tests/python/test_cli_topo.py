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
