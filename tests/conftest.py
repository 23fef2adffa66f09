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
