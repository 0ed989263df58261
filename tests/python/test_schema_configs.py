"""Every scenario shipped in configs/ is valid against the project's own JSON Schema
(docs/scenario.schema.json, generated from the parameter declarations by `make schema`; a
C++ test checks that the file matches the code). Editors and other tools that read the
schema must not flag the project's own examples (issue 18: 12 of 13 seed 004 configs failed
on flow_mtu). configs/topologies/ holds topology files, not scenarios; a variants/ folder holds `ibvp sweep
--vary KEY=@FILE` bundles (configs/seed000/variants/)."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted(p for p in (ROOT / "configs").rglob("*.yaml")
                   if "topologies" not in p.parts and "variants" not in p.parts)


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((ROOT / "docs" / "scenario.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_configs_hold_scenarios() -> None:
    assert len(SCENARIOS) >= 15


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: str(p.relative_to(ROOT / "configs")))
def test_shipped_scenario_is_valid_against_the_schema(path: Path, validator) -> None:
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
              for e in validator.iter_errors(yaml.safe_load(path.read_text()))]
    assert errors == []


def test_the_schema_refuses_an_mtu_that_is_no_choice(validator) -> None:
    doc = yaml.safe_load((ROOT / "configs" / "seed004" / "fig2b.yaml").read_text())
    doc["hca"]["flow_mtu"] = 3000
    assert not validator.is_valid(doc)
