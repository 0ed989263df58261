"""What the installed package ships besides code (docs/python.md, "Installing"): the
firmware images, the firmware SDK (HAL header, the default transport as a library, a CMake
package) and the example scenarios of configs/. CMake installs them next to `ibvp._core`
(CMakeLists.txt, firmware/CMakeLists.txt), in a wheel and in an editable install alike; the
simulator finds the default image the same way (platform/driver/firmware_location.h).

    ibvp.package_data.firmware_image("fcfs_doorbells")   # path of an example image
    ibvp.package_data.configs_dir() / "perftest" / "send_lat.yaml"
    cmake -Dibvp_firmware_DIR=$(python -c 'import ibvp.package_data as d; print(d.cmake_dir())')
"""
from __future__ import annotations

import os
from pathlib import Path

from ._corelib import core


def package_dir() -> Path:
    """Where the extension `ibvp._core` is installed: the data sit beside it."""
    return Path(core().__file__).resolve().parent


def _existing(path: Path, what: str) -> Path:
    if not path.exists():
        raise FileNotFoundError(f"{path}: the ibvp package has no {what}; reinstall it (`make` in a checkout, or "
                                "`pip install` of a wheel or sdist built from one)")
    return path


def firmware_dir() -> Path:
    """The package's firmware images (libibvp_fw_default.so, libibvp_fw_fcfs_doorbells.so, ...)."""
    return _existing(package_dir() / "firmware", "firmware directory")


def firmware_image(name: str = "default") -> Path:
    """The path of one shipped image: "default", "fcfs_doorbells", "sl_priority", "faulty",
    "wrong_hal_version"."""
    return _existing(firmware_dir() / f"libibvp_fw_{name}.so", f"firmware image {name!r}")


def default_firmware_image() -> Path:
    """The image a scenario without hca.firmware_image loads: $IBVP_FIRMWARE_DIR's, else the
    package's, else the build tree's (docs/firmware.md, "Selecting an image")."""
    return Path(core().default_firmware_image())


def configs_dir() -> Path:
    """The shipped scenarios (configs/ of the repository: examples, perftest, seeds)."""
    return _existing(package_dir() / "configs", "configs directory")


def sdk_dir() -> Path:
    """The firmware SDK: include/ (firmware/hal/ibvp_hal.h, firmware/default/*.h), lib/."""
    return _existing(package_dir() / "sdk", "firmware SDK")


def hal_header() -> Path:
    """firmware/hal/ibvp_hal.h, the only interface between an image and the HCA."""
    return _existing(sdk_dir() / "include" / "firmware" / "hal" / "ibvp_hal.h", "HAL header")


def cmake_dir() -> Path:
    """The CMake package ibvp_firmware (find_package(ibvp_firmware CONFIG), docs/firmware.md)."""
    return _existing(sdk_dir() / "lib" / "cmake" / "ibvp_firmware", "CMake package ibvp_firmware")


def describe() -> dict[str, str]:
    """Every path above, for `ibvp paths`."""
    out = {"package": str(package_dir()), "default_firmware_image": str(default_firmware_image())}
    if os.environ.get("IBVP_FIRMWARE_DIR"):
        out["IBVP_FIRMWARE_DIR"] = os.environ["IBVP_FIRMWARE_DIR"]
    for key, fn in (("firmware_dir", firmware_dir), ("configs_dir", configs_dir), ("hal_header", hal_header),
                    ("cmake_dir", cmake_dir)):
        try:
            out[key] = str(fn())
        except FileNotFoundError as e:
            out[key] = f"missing ({e})"
    return out
