"""Access to the compiled extension `ibvp._core`, with a useful message when it is missing.

Imported on first use rather than with the package, so that `python -m ibvp.plots` works on
a checkout where only the Python dependencies are installed.
"""
from __future__ import annotations

import importlib
from types import ModuleType

MISSING_HINT = ("ibvp._core, the compiled simulator extension, is not installed: run `make` at the "
                "repository root (it builds the extension and installs the ibvp package into .venv), "
                "then use .venv/bin/python or .venv/bin/ibvp")


def core() -> ModuleType:
    try:
        return importlib.import_module("ibvp._core")
    except ImportError as e:
        raise ImportError(f"{MISSING_HINT} ({e})") from e
