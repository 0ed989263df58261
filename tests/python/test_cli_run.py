"""`ibvp run` and `ibvp validate`: results and a summary table; exit status 2 with the
loader's message for bad input, 3 for a deadlock."""
from __future__ import annotations

import json
from pathlib import Path

import ibvp
from ibvp import _yaml


def test_run_writes_results_and_prints_a_summary(cli, minimal_yaml: Path, tmp_path: Path) -> None:
    code, out, err = cli("run", minimal_yaml, "--set", "switch.crossbar=fifo_bypass", "--out", tmp_path)
    assert code == 0, err
    for name in ("summary.json", "flows.csv", "ports.csv", "rates.csv", "run.json", "scenario.yaml"):
        assert (tmp_path / name).exists(), name
    summary = json.loads((tmp_path / "summary.json").read_text())
    p = summary["packets"]
    assert f"packets: injected {p['injected']}, delivered {p['delivered']}" in out
    table = [line.split() for line in out.splitlines() if line.strip().startswith(("f1 ", "f2 "))]
    assert [row[0] for row in table] == ["f1", "f2"]
    assert table[0][1:4] == ["h1", "->", "h3"]
    assert "sim-ms" in err  # the progress bar, in simulated time
    # The override reached the run.
    assert ibvp.Scenario.from_yaml(tmp_path / "scenario.yaml")["switch.crossbar"] == "fifo_bypass"


def test_run_config_error_exits_2_with_the_message(cli, minimal_yaml: Path, tmp_path: Path) -> None:
    code, out, err = cli("run", minimal_yaml, "--set", "switch.crossbar=fofo", "--out", tmp_path, "--quiet")
    assert code == 2
    assert "switch.crossbar" in err and "fofo" in err and "fix:" in err
    assert out == ""


def test_run_deadlock_exits_3_naming_the_cycle(cli, ring: dict, tmp_path: Path) -> None:
    scenario = tmp_path / "ring.yaml"
    scenario.write_text(_yaml.dump(ring))
    code, _out, err = cli("run", scenario, "--out", tmp_path / "out", "--quiet")
    assert code == 3
    assert "deadlock detected" in err and "s0/1" in err


def test_run_missing_file_exits_2(cli, tmp_path: Path) -> None:
    code, _out, err = cli("run", tmp_path / "nope.yaml", "--quiet")
    assert code == 2 and "nope.yaml" in err


def test_validate(cli, minimal_yaml: Path) -> None:
    code, out, _err = cli("validate", minimal_yaml)
    assert code == 0 and "valid" in out and "f1, f2" in out
    code, _out, err = cli("validate", minimal_yaml, "--set", "flows[0].dst=h9")
    assert code == 2 and "flows[0].dst" in err


def test_run_refuses_a_routing_whose_vl_layers_flows_cannot_follow(cli, tmp_path: Path) -> None:
    # dfsssp needs 2 VL layers on a 5x5 torus (ibvp topo says so); flows keep one SL, so the
    # run is refused before it starts rather than run on one VL, where it could deadlock.
    doc = {"name": "torus", "duration": "100us",
           "topology": {"generator": "torus", "x": 5, "y": 5, "hosts_per_switch": 1},
           "routing": "dfsssp", "traffic": {"load": 0.2}}
    (tmp_path / "torus.yaml").write_text(ibvp.Scenario(doc).to_yaml())
    code, _out, err = cli("run", tmp_path / "torus.yaml", "--out", tmp_path / "out", "--quiet")
    assert code == 2 and "dfsssp" in err and "VL layers" in err and "updn" in err
    code, out, _err = cli("topo", tmp_path / "torus.yaml", "--json")
    s = json.loads(out)
    # Each path on its layer's VL: the layers are deadlock-free, and there is more than one.
    assert code == 0 and s["deadlock"]["acyclic"] and s["vl_layers"] > 1
