"""The compiled module ``streameval._speedups``, or ``None`` when it is not in use.

It builds at install when a C compiler is present. ``STREAMEVAL_PURE_PYTHON=1``
makes the package use the pure Python/numpy twins of every compiled path,
with identical results.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["SPEEDUPS"]


def _load() -> ModuleType | None:
    if os.environ.get("STREAMEVAL_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        return importlib.import_module("streameval._speedups")
    except ImportError:
        return None


SPEEDUPS: ModuleType | None = _load()
