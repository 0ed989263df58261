"""Scenarios in Python: YAML round trip, key paths as --set writes them, validation errors
from the C++ loader (file, key path, line, fix), relative paths, the JSON Schema."""
from __future__ import annotations

from pathlib import Path

import pytest

import ibvp
from ibvp import _yaml


def test_yaml_round_trip_keeps_the_document(root: Path, tmp_path: Path) -> None:
    sc = ibvp.Scenario.from_yaml(root / "configs/seed004/fig2a.yaml")
    again = ibvp.Scenario.from_text(sc.to_yaml(), base_dir=sc.base_dir)
    assert again.data == sc.data
    assert again.validate() == sc.validate()
    # Written to a file and read back, still the same run.
    sc.to_yaml(tmp_path / "fig2a.yaml")
    reread = ibvp.Scenario.from_yaml(tmp_path / "fig2a.yaml")
    assert reread.data == sc.data
    assert reread.validate()["flows"] == ["local1", "local2", "local3", "local4", "local5", "remote1", "victim"]


def test_scenario_built_in_python_validates() -> None:
    sc = ibvp.Scenario({
        "name": "built",
        "duration": "1ms",
        "topology": {"generator": "single_switch", "hosts": 3},
        "flows": [{"name": "a", "src": "h1", "dst": "h2", "generator": "constant", "load": 0.5}],
    })
    info = sc.validate()
    assert info == {"name": "built", "duration_s": pytest.approx(1e-3), "seed": 1, "flows": ["a"],
                    "switches": 1, "endpoints": 3}


def test_attribute_and_item_access(minimal_yaml: Path) -> None:
    sc = ibvp.Scenario.from_yaml(minimal_yaml)
    assert sc.duration == "2ms"
    assert sc.name == "minimal"
    assert sc["switch.request_order"] == "fifo"
    assert sc["flows[1].name"] == "f2"
    assert sc.traffic is None  # a declared key left out takes its default
    sc.duration = "1ms"
    assert sc.data["duration"] == "1ms"
    with pytest.raises(AttributeError, match="durtion"):
        sc.durtion = "1ms"  # a typo is caught here, not at the end of a long sweep
    with pytest.raises(KeyError):
        sc["switch.no_such_key"]
    assert "switch.pipeline_delay" in sc and "switch.vlarb" not in sc


def test_set_uses_the_key_paths_of_ibvp_sim_set(minimal_yaml: Path) -> None:
    sc = ibvp.Scenario.from_yaml(minimal_yaml)
    sc.set("switch.bypass_limit", 2).set("flows[0].load", 0.25)
    sc["endpoint.data_vls"] = 1  # a missing mapping on the way is created
    assert sc["switch.bypass_limit"] == 2 and sc["flows[0].load"] == 0.25
    assert sc.endpoint == {"data_vls": 1}
    # The C++ side gets the file as written plus the overrides, like ibvp-sim --set.
    text, source, overrides, _ = sc.core_args()
    assert source == str(minimal_yaml)
    assert overrides == ["switch.bypass_limit=2", "flows[0].load=0.25", "endpoint.data_vls=1"]
    assert sc.validate()["name"] == "minimal"
    with pytest.raises(ibvp.ConfigError, match="no item 5"):
        sc.set("flows[5].load", 0.1)
    with pytest.raises(ibvp.ConfigError, match="malformed key path"):
        sc.set("flows..load", 0.1)
    # Command-line form: the value is YAML text.
    sc.override("switch.sl2vl=[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]")
    assert sc["switch.sl2vl"] == [0] * 16


def test_validation_error_from_cpp_names_file_key_and_line(minimal_yaml: Path, tmp_path: Path) -> None:
    lines = minimal_yaml.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "request_order: fifo" in line)
    lines[at] = lines[at].replace("fifo", "fofo")
    bad = tmp_path / "bad.yaml"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(ibvp.ConfigError) as err:
        ibvp.Scenario.from_yaml(bad).validate()
    e = err.value
    assert isinstance(e, ValueError)
    assert e.file == str(bad)
    assert e.key == "switch.request_order"
    assert e.line == at + 1
    assert "fofo" in e.problem and "fifo" in e.fix
    assert str(e).startswith(f"{bad}:{at + 1}: switch.request_order:")


def test_old_crossbar_value_points_at_request_order(minimal_yaml: Path) -> None:
    # Before issue 11, switch.crossbar held the request order.
    sc = ibvp.Scenario.from_yaml(minimal_yaml).set("switch.crossbar", "fifo_bypass")
    with pytest.raises(ibvp.ConfigError) as err:
        sc.validate()
    assert err.value.key == "switch.crossbar"
    assert "now `switch.request_order: fifo_bypass`" in err.value.fix


def test_override_error_names_the_key(minimal_yaml: Path) -> None:
    sc = ibvp.Scenario.from_yaml(minimal_yaml).set("switch.bypass_limit", 999)
    with pytest.raises(ibvp.ConfigError) as err:
        sc.validate()
    assert err.value.key == "switch.bypass_limit"
    assert "0..255" in str(err.value)


def test_edited_document_errors_point_into_the_edited_text(minimal_yaml: Path) -> None:
    sc = ibvp.Scenario.from_yaml(minimal_yaml)
    del sc.data["name"]  # the C++ loader would name the run after the file
    sc.flows.append({"name": "f3", "src": "h4", "dst": "h9"})  # edited in place, not through set()
    with pytest.raises(ibvp.ConfigError) as err:
        sc.validate()
    assert err.value.key.startswith("flows[2]")
    assert "as edited in Python" in err.value.file
    assert err.value.line > 0
    assert sc.core_args()[0].startswith("name: minimal")  # the default name survives the rewrite


def test_relative_paths_follow_the_scenario_file(root: Path, tmp_path: Path, monkeypatch) -> None:
    a = tmp_path / "a"
    a.mkdir()
    (a / "fabric.yaml").write_text((root / "configs/topologies/seed004_two_switch.yaml").read_text())
    (a / "scenario.yaml").write_text(
        "duration: 1ms\ntopology: {file: fabric.yaml}\nflows:\n  - {src: B_L1, dst: B_C, load: 0.5, generator: constant}\n")
    monkeypatch.chdir(tmp_path)  # not the scenario's directory
    sc = ibvp.Scenario.from_yaml("a/scenario.yaml")
    assert sc.validate()["endpoints"] == 9
    # Saved elsewhere, the reference is rewritten to still reach the topology.
    sc.to_yaml(tmp_path / "b" / "copy.yaml")
    copy = ibvp.Scenario.from_yaml(tmp_path / "b" / "copy.yaml")
    assert copy["topology.file"] == "../a/fabric.yaml"
    assert copy.validate()["switches"] == 2


def test_yaml_scalars_read_as_the_cpp_loader_reads_them() -> None:
    # PyYAML alone would read 010 as 8, yes as True, 1e-1 as a string and 1:30 as 90.
    doc = _yaml.load("a: 010\nb: yes\nc: 1e-1\nd: 1:30\ne: TRUE\nf: 40ns\ng: 2024-01-01\n")
    assert doc == {"a": 10, "b": "yes", "c": 0.1, "d": "1:30", "e": True, "f": "40ns", "g": "2024-01-01"}
    # ...and a string stays a plain scalar on the way out (quoted text is not a number in C++).
    assert _yaml.dump({"b": "yes", "f": "40ns", "c": 0.1}) == "b: yes\nf: 40ns\nc: 0.1\n"
    assert _yaml.scalar_text("12") == "'12'"
    assert _yaml.scalar_text({"vl": 0, "weight": 1}) == "{vl: 0, weight: 1}"


def test_schema_is_the_json_schema_of_a_scenario() -> None:
    schema = ibvp.schema()
    assert "2020-12" in schema["$schema"]
    assert {"topology", "flows", "duration", "trace", "outputs"} <= set(schema["properties"])
    assert "| `duration` |" in ibvp.reference()
