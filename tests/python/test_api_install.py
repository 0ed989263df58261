"""The package as a user installs it (issue 15 part 5, docs/python.md "Installing"):

- a wheel ships the firmware images, the firmware SDK (HAL header, the default transport,
  the CMake package) and the configs, and a fresh venv that installs it runs a scenario with
  the default image from a directory outside the repository, loading the image from the
  package itself (platform/driver/firmware_location.h);
- ibvp-sim and `ibvp run` load the same default image, the one the build produced (its GNU
  build ID in summary.json's firmware block);
- a perftest's report is perftest's text, the same from `ibvp run` and ibvp-sim, and its
  results come as a DataFrame and as sweep.csv columns.

The wheel is built with the build directory `make` uses for the package (pyproject.toml,
build/py), so after `make` it compiles nothing: packing and installing take seconds.
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import ibvp
import ibvp.package_data

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("IBVP_BUILD", ROOT / "build"))
SIM = BUILD / "ibvp-sim"
BUILD_IMAGE = BUILD / "firmware" / "libibvp_fw_default.so"

# perftest write_bw between two HCA hosts, two sizes: a second of wall clock.
WRITE_BW = {
    "name": "wbw", "duration": "5ms",
    "topology": {"generator": "single_switch", "hosts": 2, "link": {"width": "4X", "speed": "EDR", "length_m": 2}},
    "switch": {"vl_buffer_bytes": 16640}, "endpoint": {"vl_buffer_bytes": 16640},
    "endpoint_model": "hca",
    "perftest": {"test": "write_bw", "client": "h1", "server": "h2", "sizes": [4096, 65536], "iterations": 50},
}


def build_id(path: Path) -> str:
    """readelf's account of an ELF file's GNU build ID."""
    out = subprocess.run(["readelf", "-n", str(path)], capture_output=True, text=True, check=True).stdout
    return next(line.split("Build ID:")[1].strip() for line in out.splitlines() if "Build ID:" in line)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user who set nothing of ibvp's."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("IBVP_FIRMWARE_DIR", "IBVP_BUILD", "IBVP_SIM", "PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, **extra}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-build-isolation",
           "--no-deps", f"--config-settings=cmake.define.IBVP_PACKAGE_FIRMWARE_FROM={BUILD / 'firmware'}",
           "-w", str(out), str(ROOT)]
    subprocess.run(cmd, check=True, cwd=out, env={**clean_env(), "CXX": os.environ.get("CXX", "c++")})
    (found,) = out.glob("ibvp-*.whl")
    return found


def test_the_wheel_ships_the_firmware_images_the_sdk_and_the_configs(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in ("ibvp/firmware/libibvp_fw_default.so", "ibvp/firmware/libibvp_fw_fcfs_doorbells.so",
                 "ibvp/firmware/libibvp_fw_faulty.so", "ibvp/firmware/libibvp_fw_sl_priority.so",
                 "ibvp/sdk/include/firmware/hal/ibvp_hal.h", "ibvp/sdk/include/firmware/default/firmware.h",
                 "ibvp/sdk/include/firmware/default/policies.h", "ibvp/sdk/lib/libibvp_fw_transport.a",
                 "ibvp/sdk/lib/cmake/ibvp_firmware/ibvp_firmwareConfig.cmake",
                 "ibvp/configs/examples/minimal.yaml", "ibvp/configs/perftest/send_lat.yaml"):
        assert name in names, f"{wheel.name} lacks {name}"
    # Nothing of the build tree's paths: the package carries its own.
    assert not any(n.startswith(("build/", "tests/")) for n in names)


def test_a_fresh_venv_runs_a_shipped_scenario_outside_the_repo_with_the_packages_own_image(
        wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps",
                    "--no-index", "--disable-pip-version-check", str(wheel)], check=True, env=clean_env())
    site = Path(subprocess.run([str(py), "-I", "-c", "import ibvp._core as c; print(c.__file__)"], check=True,
                               capture_output=True, text=True, cwd=tmp_path, env=clean_env()).stdout.strip()).parent
    assert venv in site.parents, f"the fresh venv imported ibvp._core from {site}, not from its own install"
    scenario = site / "configs" / "perftest" / "send_lat.yaml"
    job = {"yaml": scenario.read_text(), "source": str(scenario), "base_dir": str(scenario.parent),
           "overrides": ["perftest.max_bytes=64", "perftest.iterations=5"], "out_dir": str(tmp_path / "run"),
           "progress": False}
    # The only module a run needs (ibvp._worker imports _core alone): no pandas in this venv.
    done = subprocess.run([str(py), "-I", "-m", "ibvp._worker"], input=json.dumps(job), capture_output=True,
                          text=True, cwd=tmp_path, env=clean_env(), timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    images = {Path(h["image"]) for h in summary["firmware"]}
    assert images == {site / "firmware" / "libibvp_fw_default.so"}
    assert {h["build_id"] for h in summary["firmware"]} == {build_id(site / "firmware" / "libibvp_fw_default.so")}
    assert [r["bytes"] for r in summary["perftest"]["rows"]] == [2, 4, 8, 16, 32, 64]


@pytest.fixture(scope="module")
def both_runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The same perftest run by ibvp-sim and by `ibvp run`: (stdout, output dir) of each."""
    assert SIM.is_file(), f"build the C++ tree first ({SIM})"
    work = tmp_path_factory.mktemp("both")
    scenario = work / "wbw.yaml"
    scenario.write_text(ibvp.Scenario(WRITE_BW).to_yaml())
    sim = subprocess.run([str(SIM), str(scenario), "--out", str(work / "sim"), "--quiet"], capture_output=True,
                         text=True, cwd=work, env=clean_env(), timeout=120)
    assert sim.returncode == 0, sim.stderr
    from ibvp.cli import main
    import contextlib
    import io

    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main(["run", str(scenario), "--out", str(work / "py"), "--quiet"])
    assert code == 0
    return {"sim": (sim.stdout, work / "sim"), "py": (stdout.getvalue(), work / "py")}


def test_ibvp_run_and_ibvp_sim_load_the_default_image_the_build_produced(both_runs: dict) -> None:
    expected = build_id(BUILD_IMAGE)
    for how, (_, out) in both_runs.items():
        block = json.loads((out / "summary.json").read_text())["firmware"]
        assert {h["build_id"] for h in block} == {expected}, (how, block)
    # The Python package loads its own copy, of the same build.
    res = ibvp.Results(both_runs["py"][1])
    assert set(res.firmware["image"]) == {str(ibvp.package_data.firmware_dir() / "libibvp_fw_default.so")}
    assert set(res.firmware["build_id"]) == {expected}


def test_the_perftest_report_is_perftests_text_and_the_same_from_ibvp_run_and_ibvp_sim(both_runs: dict) -> None:
    sim_out, sim_dir = both_runs["sim"]
    py_out, py_dir = both_runs["py"]
    report = (sim_dir / "perftest.txt").read_text()
    assert (py_dir / "perftest.txt").read_text() == report
    assert report in sim_out and report in py_out
    lines = report.splitlines()
    assert "                    RDMA_Write BW Test" in lines
    assert " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]" in lines
    rows = {r["bytes"]: r for r in json.loads((sim_dir / "summary.json").read_text())["perftest"]["rows"]}
    for line in lines:
        fields = line.split()
        if fields and fields[0].isdigit() and int(fields[0]) in rows:
            r = rows[int(fields[0])]
            # Two decimals of MiB/s, as perftest prints them.
            assert fields[2:4] == [f"{r['bw_peak_MBps']:.2f}", f"{r['bw_avg_MBps']:.2f}"], line


def test_perftest_results_are_a_dataframe_with_peak_at_least_average(both_runs: dict) -> None:
    df = ibvp.Results(both_runs["py"][1]).perftest
    assert list(df.index) == [4096, 65536]
    assert df.attrs["test"] == "write_bw"
    # The peak is the best run of messages, and the whole test is one of the runs it tries.
    assert (df["bw_peak_MBps"] >= df["bw_avg_MBps"]).all()
    assert (df["bw_avg_MBps"] > 0).all()


def test_a_perftest_sweep_has_one_column_per_measure_and_size_in_sweep_csv(tmp_path: Path) -> None:
    df = ibvp.sweep(ibvp.Scenario(WRITE_BW), {"perftest.tx_depth": [8, 64]}, out=tmp_path / "sweep", jobs=2)
    with open(tmp_path / "sweep" / "sweep.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    cols = ["perftest:bw_peak_MBps@4096B", "perftest:bw_peak_MBps@65536B", "perftest:bw_avg_MBps@4096B",
            "perftest:bw_avg_MBps@65536B", "perftest:msg_rate_Mpps@4096B", "perftest:msg_rate_Mpps@65536B"]
    assert [c for c in rows[0] if c.startswith("perftest:")] == cols
    for row, (_, point) in zip(rows, df.iterrows()):
        summary = json.loads((tmp_path / "sweep" / row["point"] / "summary.json").read_text())
        big = summary["perftest"]["rows"][1]
        assert float(row["perftest:bw_avg_MBps@65536B"]) == pytest.approx(big["bw_avg_MBps"], rel=1e-12)
        assert point["perftest:bw_avg_MBps@65536B"] == pytest.approx(big["bw_avg_MBps"], rel=1e-12)
    # Fewer WRs in flight cannot be faster.
    depth8, depth64 = (float(r["perftest:bw_avg_MBps@65536B"]) for r in rows)
    assert depth8 <= depth64
