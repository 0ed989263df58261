"""`ibvp run` and `ibvp validate`: results and a summary table; exit status 2 with the
loader's message for bad input, 3 for a deadlock."""
from __future__ import annotations

import json
from pathlib import Path

import ibvp
from ibvp import _yaml


def test_run_writes_results_and_prints_a_summary(cli, minimal_yaml: Path, tmp_path: Path) -> None:
    code, out, err = cli("run", minimal_yaml, "--set", "switch.request_order=fifo_bypass", "--out", tmp_path)
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
    assert ibvp.Scenario.from_yaml(tmp_path / "scenario.yaml")["switch.request_order"] == "fifo_bypass"


def test_run_config_error_exits_2_with_the_message(cli, minimal_yaml: Path, tmp_path: Path) -> None:
    code, out, err = cli("run", minimal_yaml, "--set", "switch.request_order=fofo", "--out", tmp_path, "--quiet")
    assert code == 2
    assert "switch.request_order" in err and "fofo" in err and "fix:" in err
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


def _torus(routing: str, **extra) -> dict:
    doc = {"name": "torus", "duration": "1ms", "deadlock_timeout": "100us", "seed": 3,
           "topology": {"generator": "torus", "x": 5, "y": 5, "hosts_per_switch": 2},
           "routing": routing, "switch": {"data_vls": 4}, "endpoint": {"data_vls": 4},
           "traffic": {"generator": "saturating", "payload_bytes": 2048},
           "outputs": {"packets_csv": True}}
    doc.update(extra)
    return doc


def test_dfsssp_layers_keep_a_torus_running_that_deadlocks_under_minhop(cli, tmp_path: Path) -> None:
    # Saturating uniform traffic on a 5x5 torus: min-hop's dependency cycles round the rings
    # fill and lock; dfsssp puts the paths on 4 SLs (VL layers) whose dependencies are acyclic.
    (tmp_path / "minhop.yaml").write_text(ibvp.Scenario(_torus("minhop")).to_yaml())
    code, _out, err = cli("run", tmp_path / "minhop.yaml", "--out", tmp_path / "minhop", "--quiet")
    assert code == 3 and "deadlock detected" in err
    res = ibvp.run(ibvp.Scenario(_torus("dfsssp")), tmp_path / "dfsssp", timeout=120)
    p = res.summary["packets"]
    assert p["delivered"] > 10_000 and p["dropped"] == 0
    assert p["injected"] == p["delivered"] + p["in_flight"]
    delivered = res.packets[res.packets["status"] == "delivered"]
    layers = ibvp.topology_summary(ibvp.Scenario(_torus("dfsssp")))["vl_layers"]
    assert set(delivered["sl"]) == set(range(layers)) and layers == 4  # every layer carries traffic
    assert (delivered["vl"] == delivered["sl"]).all()  # each on its own VL


def test_layers_that_ports_cannot_keep_apart_are_refused(cli, tmp_path: Path) -> None:
    cases = [({"switch": {"data_vls": 2}, "endpoint": {"data_vls": 2}}, "data_vls"),
             ({"switch": {"data_vls": 4, "sl2vl": [0] * 16}}, "switch.sl2vl"),
             ({"traffic": None, "flows": [{"src": "h0_0_1", "dst": "h2_2_1", "sl": 3}]}, "flows[0].sl")]
    for extra, key in cases:
        doc = _torus("dfsssp", **extra)
        doc = {k: v for k, v in doc.items() if v is not None}
        (tmp_path / "t.yaml").write_text(ibvp.Scenario(doc).to_yaml())
        code, _out, err = cli("run", tmp_path / "t.yaml", "--out", tmp_path / "out", "--quiet")
        assert code == 2 and key in err and "4 SLs (VL layers)" in err, (key, err)


def test_run_prints_a_perftest_table(cli, tmp_path: Path) -> None:
    doc = {"name": "lat", "duration": "5ms",
           "topology": {"generator": "single_switch", "hosts": 2,
                        "link": {"width": "4X", "speed": "EDR", "length_m": 2}},
           "switch": {"vl_buffer_bytes": 16640}, "endpoint": {"vl_buffer_bytes": 16640},
           "endpoint_model": "hca",
           "perftest": {"test": "send_lat", "client": "h1", "server": "h2", "sizes": [2, 64], "iterations": 5}}
    (tmp_path / "lat.yaml").write_text(ibvp.Scenario(doc).to_yaml())
    code, out, err = cli("run", tmp_path / "lat.yaml", "--out", tmp_path / "out", "--quiet")
    assert code == 0, err
    # perftest's own header and table (docs/perftest.md), the text of perftest.txt.
    assert "                    Send Latency Test\n" in out and " t_min[usec]" in out
    assert (tmp_path / "out" / "perftest.txt").read_text() in out
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("2 ", "64 "))]
    assert [r[:2] for r in rows] == [["2", "5"], ["64", "5"]]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [r["bytes"] for r in summary["perftest"]["rows"]] == [2, 64]
    assert rows[0][2] == f'{summary["perftest"]["rows"][0]["t_min_us"]:.2f}'
