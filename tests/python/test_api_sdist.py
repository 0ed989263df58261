"""The package as a user installs it from an sdist (issue 15 part 5, docs/python.md
"Installing"): the source distribution holds what the package is built from (the platform,
the firmware and its SDK, the configs), and pip, run from a directory outside the
repository, builds it into a package that ships the default and example firmware images, the
HAL header and the configs, and finds them at run time in a fresh venv.

Nothing is downloaded: the sdist is built by the project's build backend (PEP 517's
build_sdist, what `python -m build --sdist --no-isolation` calls), and pip builds it without
isolation, with the build tools already in this venv (requirements.txt); the fresh venv
gets the built package and nothing else. Building from the sdist compiles the whole project
(45 s after `make`, whose objects ccache reuses; about 15 minutes cold), so that part runs
only with IBVP_TEST_SDIST=1 (`make test-sdist`).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPILES = pytest.mark.skipif(os.environ.get("IBVP_TEST_SDIST") != "1",
                              reason="builds the whole project from the sdist (minutes): IBVP_TEST_SDIST=1")


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user who set nothing of ibvp's."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("IBVP_FIRMWARE_DIR", "IBVP_BUILD", "IBVP_SIM", "PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, **extra}


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sdist")
    # PEP 517: the backend's hook, run in the project's directory.
    subprocess.run([sys.executable, "-c", "import sys; from scikit_build_core.build import build_sdist; "
                    "build_sdist(sys.argv[1])", str(out)], check=True, cwd=ROOT, env=clean_env(),
                   capture_output=True)
    (found,) = out.glob("ibvp-*.tar.gz")
    return found


def test_the_sdist_holds_the_sources_firmware_sdk_and_configs_and_no_build_tree(sdist: Path) -> None:
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for name in ("CMakeLists.txt", "pyproject.toml", "cmake/IbvpDeps.cmake",
                 # a folder whose name starts with "build": only the top-level build trees are left out
                 "platform/builder/fabric.cpp", "platform/builder/runner.cpp",
                 "firmware/hal/ibvp_hal.h", "firmware/default/firmware.h", "firmware/default/policies.h",
                 "firmware/default/image.cpp", "firmware/examples/sl_priority.cpp",
                 "firmware/examples/fcfs_doorbells.cpp", "firmware/sdk/IbvpFirmwareImage.cmake",
                 "bindings/src/module.cpp", "bindings/python/ibvp/__init__.py",
                 "configs/examples/minimal.yaml", "configs/perftest/send_lat.yaml"):
        assert name in names, f"{sdist.name} lacks {name}"
    assert not any(n.startswith(("build/", "build-asan/", "tests/", ".venv/", "out/")) for n in names)


@pytest.fixture(scope="module")
def site(sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the package pip built from the sdist; its ibvp/ directory."""
    work = tmp_path_factory.mktemp("from_sdist")
    # pip install of an sdist builds a wheel and installs it: here the build runs in this venv
    # (its build tools, no isolation, nothing downloaded), from outside the repository.
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
                    "--no-build-isolation", "--no-deps", "-w", str(work), str(sdist)],
                   check=True, cwd=work,
                   # pip unpacks the sdist under a new temporary directory each time: paths taken
                   # relative to it let ccache (when CMake finds it) reuse an earlier run's objects.
                   env=clean_env(CXX=os.environ.get("CXX", "c++"), CCACHE_BASEDIR=tempfile.gettempdir()))
    (wheel,) = work.glob("ibvp-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps",
                    "--no-index", "--disable-pip-version-check", str(wheel)], check=True, env=clean_env())
    found = Path(subprocess.run([str(py), "-I", "-c", "import ibvp._core as c; print(c.__file__)"], check=True,
                                capture_output=True, text=True, cwd=work, env=clean_env()).stdout.strip()).parent
    assert venv in found.parents, f"the fresh venv imported ibvp._core from {found}, not from its own install"
    return found


def run_shipped_send_lat(site: Path, out: Path, overrides: list[str]) -> dict:
    py = site.parents[3] / "bin" / "python"  # venv/lib/python3.x/site-packages/ibvp
    scenario = site / "configs" / "perftest" / "send_lat.yaml"
    job = {"yaml": scenario.read_text(), "source": str(scenario), "base_dir": str(scenario.parent),
           "overrides": ["perftest.max_bytes=64", "perftest.iterations=5", *overrides], "out_dir": str(out),
           "progress": False}
    done = subprocess.run([str(py), "-I", "-m", "ibvp._worker"], input=json.dumps(job), capture_output=True,
                          text=True, cwd=out.parent, env=clean_env(), timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((out / "summary.json").read_text())


@COMPILES
def test_the_package_built_from_the_sdist_ships_the_images_the_hal_header_and_the_configs(site: Path) -> None:
    for name in ("firmware/libibvp_fw_default.so", "firmware/libibvp_fw_fcfs_doorbells.so",
                 "firmware/libibvp_fw_sl_priority.so", "sdk/include/firmware/hal/ibvp_hal.h",
                 "sdk/include/firmware/default/policies.h", "sdk/lib/libibvp_fw_transport.a",
                 "sdk/lib/cmake/ibvp_firmware/ibvp_firmwareConfig.cmake", "configs/perftest/send_lat.yaml"):
        assert (site / name).is_file(), f"the package built from the sdist lacks ibvp/{name}"


@COMPILES
def test_a_fresh_venv_from_the_sdist_runs_a_scenario_with_the_default_image_and_an_example(
        site: Path, tmp_path: Path) -> None:
    default = run_shipped_send_lat(site, tmp_path / "default", [])
    assert {Path(h["image"]) for h in default["firmware"]} == {site / "firmware" / "libibvp_fw_default.so"}
    assert [r["bytes"] for r in default["perftest"]["rows"]] == [2, 4, 8, 16, 32, 64]
    example = site / "firmware" / "libibvp_fw_sl_priority.so"
    other = run_shipped_send_lat(site, tmp_path / "example", [f"hca.firmware_image={example}"])
    assert {Path(h["image"]) for h in other["firmware"]} == {example}
    assert [r["bytes"] for r in other["perftest"]["rows"]] == [2, 4, 8, 16, 32, 64]
