"""Shared helpers: exact references computed from raw scores with scikit-learn."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import streameval as se

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))  # score families and exact references live beside the benchmarks

from reference import exact_eer  # noqa: E402

__all__ = ["ROOT", "exact_accumulator", "exact_eer"]


def exact_accumulator(y, s, w=None, threshold: float = 0.5) -> se.BinaryAccumulator:
    """An accumulator whose bins hold one distinct score each, fed the whole stream."""
    acc = se.BinaryAccumulator(bins=se.Bins.from_edges(np.unique(s)), threshold=threshold)
    acc.update_many(y, s, w)
    return acc


def pytest_collection_modifyitems(config, items):
    """The Spark docstring example starts a real session: skipped, with the reason, where Spark cannot run."""
    import importlib.util
    import os
    import shutil

    import pytest

    if importlib.util.find_spec("pyspark") is None:
        reason = "pyspark is not installed: pip install 'streameval[spark]'"
    elif shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        reason = "Java is not installed (no java on PATH, no JAVA_HOME): Spark cannot start here"
    else:
        return
    for item in items:
        if item.nodeid.startswith("streameval/spark.py::"):
            item.add_marker(pytest.mark.skip(reason=reason))
