"""A firmware image that crashes in the simulation's child process: ibvp.run raises
SimulationError whose message leads with the platform's report (the image, the event,
hca.firmware_image), not a bare exit status (models/hca/firmware_guard.h)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import ibvp

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("IBVP_BUILD", ROOT / "build"))
FAULTY = BUILD / "firmware" / "libibvp_fw_faulty.so"


def test_a_crashing_firmware_image_reaches_the_exception_with_its_report(tmp_path: Path) -> None:
    assert FAULTY.is_file(), f"build the C++ tree first ({FAULTY} is the faulty example image)"
    scenario = tmp_path / "fault.yaml"
    scenario.write_text(
        "duration: 1ms\n"
        "topology: {generator: single_switch, hosts: 2}\n"
        "endpoint_model: hca\n"
        f"hca: {{firmware_image: \"{FAULTY}\", firmware_args: null_deref}}\n"
        "perftest: {test: send_lat, client: h1, server: h2, sizes: [64], iterations: 2, qp_type: UD}\n")
    with pytest.raises(ibvp.SimulationError) as err:
        ibvp.run(scenario, tmp_path / "out", timeout=60)
    assert err.value.returncode == 4
    first = str(err.value).splitlines()[0]
    assert "firmware fault: SIGSEGV" in first
    assert str(FAULTY) in first
    assert "handling event command" in first
    assert "hca.firmware_image" in first


def test_ibvp_run_exits_with_status_4_as_ibvp_sim_does(cli, tmp_path: Path) -> None:
    scenario = tmp_path / "fault.yaml"
    scenario.write_text(
        "duration: 1ms\n"
        "topology: {generator: single_switch, hosts: 2}\n"
        "endpoint_model: hca\n"
        f"hca: {{firmware_image: \"{FAULTY}\", firmware_args: abort}}\n"
        "perftest: {test: send_lat, client: h1, server: h2, sizes: [64], iterations: 2, qp_type: UD}\n")
    code, _out, err = cli("run", scenario, "--out", tmp_path / "out", "--quiet")
    assert code == 4, err
    assert "firmware fault: SIGABRT" in err and "hca.firmware_image" in err
