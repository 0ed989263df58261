"""A run writes only inside its output directory, owns that directory, and reads only
regular files of bounded size (issue 18, security). The C++ rules (platform/scenario/
output_paths.h, platform/builder/output_dir.h, platform/params/input_file.h) hold for
`ibvp run`, `ibvp.run`, sweeps and `ibvp-sim` alike, with the same messages."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import ibvp
from ibvp import _yaml

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("IBVP_BUILD", ROOT / "build"))
TIMEOUT = 120


def _short(minimal_yaml: Path) -> ibvp.Scenario:
    return ibvp.Scenario.from_yaml(minimal_yaml).set("duration", "300us").set("warmup", "0s")


def _write(path: Path, doc: dict) -> Path:
    path.write_text(_yaml.dump(doc))
    return path


def _sim(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([str(BUILD / "ibvp-sim"), *map(str, args), "--quiet"], capture_output=True, text=True)


# ---- output paths a scenario names ---------------------------------------------------------------

def test_absolute_timeline_is_refused_before_the_run_and_the_file_is_untouched(cli, minimal_yaml: Path,
                                                                              tmp_path: Path) -> None:
    victim = tmp_path / "passwd"
    victim.write_text("root:x:0:0\n")
    code, _out, err = cli("run", minimal_yaml, "--set", f"outputs.timeline={victim}", "--out", tmp_path / "out",
                          "--quiet")
    assert code == 2 and "outputs.timeline" in err and "absolute" in err
    assert victim.read_text() == "root:x:0:0\n"
    assert not (tmp_path / "out" / "summary.json").exists()


def test_validate_refuses_a_timeline_climbing_out(cli, minimal_yaml: Path) -> None:
    code, _out, err = cli("validate", minimal_yaml, "--set", "outputs.timeline=../x.json")
    assert code == 2 and "outputs.timeline" in err and '".."' in err


def test_a_link_in_an_earlier_runs_directory_is_removed_not_followed(minimal_yaml: Path, tmp_path: Path) -> None:
    out, victim = tmp_path / "out", tmp_path / "victim.json"
    victim.write_text("mine\n")
    ibvp.run(_short(minimal_yaml), out, timeout=TIMEOUT)
    (out / "summary.json").unlink()
    (out / "summary.json").symlink_to(victim)
    res = ibvp.run(_short(minimal_yaml), out, timeout=TIMEOUT)
    assert victim.read_text() == "mine\n"
    assert not (out / "summary.json").is_symlink() and res.summary["packets"]["delivered"] > 0


# ---- the scenario's name -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["/tmp/ibvp-elsewhere", "runs/a", ".."])
def test_a_name_that_is_not_one_path_component_is_refused_alike_by_both_front_ends(
        cli, minimal_yaml: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    doc = _yaml.load(minimal_yaml.read_text())
    doc["name"] = name
    scenario = _write(tmp_path / "s.yaml", doc)
    monkeypatch.chdir(tmp_path)  # the default results directory is out/<name> under the cwd
    code, _out, err = cli("run", "s.yaml", "--quiet")
    sim = _sim("s.yaml")
    assert code == 2 and sim.returncode == 2
    assert "name:" in err and err.removeprefix("ibvp: ") == sim.stderr.removeprefix("ibvp-sim: ")
    assert not (tmp_path / "out").exists() and not Path("/tmp/ibvp-elsewhere").exists()
    with pytest.raises(ibvp.ConfigError) as e:
        ibvp.Scenario.from_yaml(scenario).validate()
    assert e.value.key == "name"
    code, _out, err = cli("sweep", "s.yaml", "--vary", "seed=1,2")
    assert code == 2 and "name:" in err and not (tmp_path / "out").exists()


# ---- input files ---------------------------------------------------------------------------------

def test_dev_zero_as_a_trace_is_refused(minimal_yaml: Path) -> None:
    sc = ibvp.Scenario.from_yaml(minimal_yaml)
    sc.set("trace", {"file": "/dev/zero"})
    with pytest.raises(ibvp.ConfigError) as e:
        sc.validate()
    assert e.value.key == "trace.file" and "not a regular file" in e.value.problem


def test_a_directory_as_the_qos_options_file_is_refused(minimal_yaml: Path, tmp_path: Path) -> None:
    sc = ibvp.Scenario.from_yaml(minimal_yaml)
    sc.set("qos", {"options_file": str(tmp_path)})
    with pytest.raises(ibvp.ConfigError) as e:
        sc.validate()
    assert e.value.key == "qos.options_file" and "directory" in e.value.problem


def test_special_files_as_scenario_or_topology_are_refused(cli, tmp_path: Path) -> None:
    for args in (("run", "/dev/zero", "--out", tmp_path / "a", "--quiet"), ("validate", tmp_path),
                 ("topo", "/dev/zero")):
        code, _out, err = cli(*args)
        assert code == 2 and "not a regular file" in err, args


# ---- the output directory belongs to one run ---------------------------------------------------

def test_a_refused_run_leaves_no_summary_of_the_previous_run(cli, minimal_yaml: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _out, _err = cli("run", minimal_yaml, "--set", "duration=300us", "--out", out, "--quiet")
    assert code == 0 and (out / "summary.json").exists()
    code, _out, _err = cli("run", minimal_yaml, "--set", "switch.request_order=fofo", "--out", out, "--quiet")
    assert code == 2 and not (out / "summary.json").exists()
    # ibvp-sim follows the same rule.
    assert _sim(minimal_yaml, "--set", "duration=300us", "--out", out).returncode == 0
    assert (out / "summary.json").exists()
    assert _sim(minimal_yaml, "--set", "switch.request_order=fofo", "--out", out).returncode == 2
    assert not (out / "summary.json").exists()


def test_a_non_empty_directory_no_run_wrote_is_refused_and_untouched(cli, minimal_yaml: Path,
                                                                     tmp_path: Path) -> None:
    (tmp_path / "thesis.tex").write_text("years of work\n")
    with pytest.raises(ibvp.ConfigError) as e:
        ibvp.run(_short(minimal_yaml), tmp_path, timeout=TIMEOUT)
    assert e.value.key == "--out" and "thesis.tex" in str(e.value)
    code, _out, err = cli("run", minimal_yaml, "--out", tmp_path, "--quiet")
    sim = _sim(minimal_yaml, "--out", tmp_path)
    assert code == 2 and sim.returncode == 2 and "thesis.tex" in err and "thesis.tex" in sim.stderr
    code, _out, err = cli("sweep", minimal_yaml, "--vary", "seed=1,2", "--out", tmp_path)
    assert code == 2 and "thesis.tex" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["thesis.tex"]
    assert (tmp_path / "thesis.tex").read_text() == "years of work\n"


def test_a_sweep_rerun_with_other_points_removes_the_old_points(minimal_yaml: Path, tmp_path: Path) -> None:
    ibvp.sweep(_short(minimal_yaml), {"seed": [1, 2]}, tmp_path, jobs=2)
    old = {p.name for p in tmp_path.iterdir() if p.is_dir()}
    assert old == {"seed=1", "seed=2", "dataset"}  # dataset: every point's tables together
    (tmp_path / "notes.txt").write_text("kept\n")  # not a run's directory: left alone
    ibvp.sweep(_short(minimal_yaml), {"seed": [3]}, tmp_path)
    points = {p.name for p in tmp_path.iterdir() if p.is_dir()}
    assert points == {"seed=3", "dataset"} and (tmp_path / "notes.txt").exists()
    assert (tmp_path / "sweep.csv").read_text().count("\n") == 2  # header and the one point


def test_rerunning_the_document_a_run_wrote_into_its_own_directory_is_refused_not_deleted(
        cli, minimal_yaml: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli("run", minimal_yaml, "--set", "duration=300us", "--out", out, "--quiet")[0] == 0
    code, _out, err = cli("run", out / "scenario.yaml", "--out", out, "--quiet")
    assert code == 2 and "inside the output directory" in err
    assert _sim(out / "scenario.yaml", "--out", out).returncode == 2
    assert (out / "scenario.yaml").exists() and (out / "summary.json").exists()
