"""`ibvp sweep --slurm JOBS`: the points run in Slurm worker jobs started by dask-jobqueue.

There is no Slurm on the test machine, so `sbatch` and `scancel` here are shims on PATH
that do what Slurm does with a job script on one node: run it in the background (as its
own process group) and kill it. Everything above them is the real path: dask-jobqueue
writes the job script from our options, submits it, the script starts a Dask worker that
connects back to the sweep's scheduler and runs the points.
"""
from __future__ import annotations

import csv
import os
import stat
from pathlib import Path

import pytest

pytest.importorskip("dask_jobqueue")

SBATCH = """#!/bin/sh
# sbatch SCRIPT: keep a copy of the script (dask-jobqueue deletes it once submitted), run it
# detached, and answer as Slurm does.
id=$(( $(ls "$JOBS_DIR" | grep -c '\\.sh$') + 100 ))
cp "$1" "$JOBS_DIR/job-$id.sh"
setsid sh "$JOBS_DIR/job-$id.sh" > "$JOBS_DIR/job-$id.out" 2>&1 < /dev/null &
echo $! > "$JOBS_DIR/job-$id.pid"
echo "Submitted batch job $id"
"""
SCANCEL = """#!/bin/sh
for id in "$@"; do kill -TERM -- -"$(cat "$JOBS_DIR/job-$id.pid")" 2>/dev/null; done
exit 0
"""


@pytest.fixture
def slurm_shims(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir, jobs = tmp_path / "bin", tmp_path / "jobs"
    bin_dir.mkdir()
    jobs.mkdir()
    for name, text in (("sbatch", SBATCH), ("scancel", SCANCEL)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(stat.S_IRWXU)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("JOBS_DIR", str(jobs))
    return jobs


def test_sweep_on_slurm_runs_every_point_in_worker_jobs_built_from_the_options(
        cli, minimal_yaml: Path, tmp_path: Path, slurm_shims: Path) -> None:
    out = tmp_path / "sweep"
    code, stdout, err = cli("sweep", minimal_yaml, "--set", "duration=500us", "--vary", "flows[0].load=0.2,0.5",
                            "--slurm", "1", "--slurm-opt", "queue=short", "--slurm-opt", "walltime=00:10:00",
                            "--slurm-opt", "job_extra_directives=--exclusive", "--out", out)
    assert code == 0, err
    with open(out / "sweep.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["status"] for r in rows] == ["ok", "ok"] and all(int(r["delivered"]) > 0 for r in rows)
    assert "2 of 2 points done" in stdout
    scripts = sorted(slurm_shims.glob("job-*.sh"))
    assert len(scripts) == 1  # one worker job, as asked
    script = scripts[0].read_text()
    # The job asks Slurm for what the options and ibvp's defaults say: one core, 4 GiB.
    for directive in ("#SBATCH -p short", "#SBATCH -t 00:10:00", "#SBATCH --exclusive",
                      "#SBATCH --cpus-per-task=1", "#SBATCH --mem=4G"):
        assert directive in script
    assert "distributed.cli.dask_worker" in script


def test_a_bad_slurm_option_names_the_option_and_the_keywords(cli, minimal_yaml: Path, tmp_path: Path) -> None:
    code, _out, err = cli("sweep", minimal_yaml, "--vary", "flows[0].load=0.2", "--slurm", "1",
                          "--slurm-opt", "partition=short", "--out", tmp_path / "s")
    assert code == 2 and "--slurm-opt partition" in err and "queue" in err
    code, _out, err = cli("sweep", minimal_yaml, "--vary", "flows[0].load=0.2", "--slurm-opt", "queue=short",
                          "--out", tmp_path / "t")
    assert code == 2 and "add --slurm JOBS" in err
    code, _out, err = cli("sweep", minimal_yaml, "--vary", "flows[0].load=0.2", "--slurm", "1",
                          "--slurm-opt", "cores=two", "--out", tmp_path / "u")
    assert code == 2 and "whole number" in err
    assert not (tmp_path / "s").exists() and not (tmp_path / "u").exists()  # refused before anything is written
