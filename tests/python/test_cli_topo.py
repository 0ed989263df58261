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
