"""Exact references computed from raw scores, shared by the benchmarks and the tests."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import roc_curve

__all__ = ["exact_eer", "phishing_scores"]


def phishing_scores() -> tuple[np.ndarray, np.ndarray]:
    """Labels and scores of river's Phishing stream under progressive validation of a logistic regression."""
    from river import compose, datasets, linear_model, preprocessing

    model = compose.Pipeline(preprocessing.StandardScaler(), linear_model.LogisticRegression())
    labels, scores = [], []
    for x, y in datasets.Phishing():
        scores.append(model.predict_proba_one(x).get(True, 0.5))
        labels.append(y)
        model.learn_one(x, y)
    return np.array(labels), np.array(scores)


def exact_eer(y: np.ndarray, s: np.ndarray, w: np.ndarray | None = None) -> float:
    """EER on raw scores: intersect FAR and FRR on the segment where FRR - FAR changes sign."""
    fpr, tpr, _ = roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    d = 1.0 - tpr - fpr
    zero = np.flatnonzero(d == 0)
    if zero.size:
        return float(fpr[zero[0]])
    i = int(np.flatnonzero(d > 0)[-1])
    lam = d[i] / (d[i] - d[i + 1])
    return float(fpr[i] + lam * (fpr[i + 1] - fpr[i]))
