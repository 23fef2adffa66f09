"""Shared helpers: exact references computed from raw scores with scikit-learn."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_curve

import streameval as se

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))  # the score families live beside the benchmarks


def exact_eer(y: np.ndarray, s: np.ndarray, w: np.ndarray | None = None) -> float:
    """EER on raw scores: intersect FAR and FRR on the segment where FRR - FAR changes sign."""
    fpr, tpr, _ = roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    frr = 1.0 - tpr
    d = frr - fpr
    zero = np.flatnonzero(d == 0)
    if zero.size:
        return float(fpr[zero[0]])
    i = int(np.flatnonzero(d > 0)[-1])
    lam = d[i] / (d[i] - d[i + 1])
    return float(fpr[i] + lam * (fpr[i + 1] - fpr[i]))


def exact_accumulator(y, s, w=None, threshold: float = 0.5) -> se.BinaryAccumulator:
    """An accumulator whose bins hold one distinct score each, fed the whole stream."""
    acc = se.BinaryAccumulator(bins=se.Bins.from_edges(np.unique(s)), threshold=threshold)
    acc.update_many(y, s, w)
    return acc
