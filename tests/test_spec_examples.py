"""The worked examples of the definitions, checked by hand."""

import numpy as np
import pytest

import streameval as se


def test_seed_auc_example():
    acc = se.BinaryAccumulator()
    acc.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
    assert acc.get().auc == pytest.approx(0.75, abs=1e-15)


@pytest.mark.parametrize(
    ("ranked", "auc"),
    [([1, 1, 1, 1, 0, 1, 0, 0, 0, 0], 0.96), ([1, 1, 1, 0, 1, 0, 1, 0, 0, 0], 0.88)],
)
def test_seed_ranked_sequences(ranked, auc):
    scores = np.arange(len(ranked), 0, -1, dtype=float)  # first in the ranking scores highest
    acc = se.BinaryAccumulator(bins=se.Bins.uniform(0, 11, 11))
    acc.update_many(ranked, scores)
    r = acc.get()
    assert r.auc == pytest.approx(auc, abs=1e-15)
    assert r.rank_loss == pytest.approx(1 - auc, abs=1e-15)


def test_seed_precision_recall_example():
    # 30 actual positives, 20 predicted positive, 15 of them right
    y = [1] * 15 + [0] * 5 + [1] * 15 + [0] * 45
    s = [0.9] * 20 + [0.1] * 60
    acc = se.BinaryAccumulator()
    acc.update_many(y, s)
    r = acc.get()
    assert (r.tp, r.fp, r.fn, r.tn) == (15, 5, 15, 45)
    assert r.precision == 0.75
    assert r.recall == 0.5
    assert r.f1 == pytest.approx(0.6, abs=1e-15)


def test_f1_count_form_matches_harmonic_mean():
    r = se.ConfusionReport(tp=7, fp=3, tn=11, fn=5, threshold=0.5)
    p, rc = r.precision, r.recall
    assert r.f1 == pytest.approx(2 * p * rc / (p + rc), rel=1e-15)
    # 2 TP / (m + TP - TN)
    assert r.f1 == pytest.approx(2 * 7 / (26 + 7 - 11), rel=1e-15)


def test_zero_over_zero_is_nan_and_unbounded_is_inf():
    r = se.ConfusionReport(tp=0, fp=0, tn=10, fn=0, threshold=0.5)
    assert np.isnan(r.precision) and np.isnan(r.recall) and np.isnan(r.f1)
    assert r.specificity == 1.0
    r2 = se.ConfusionReport(tp=5, fp=0, tn=5, fn=5, threshold=0.5)
    assert r2.lr_plus == float("inf")
    assert r2.mcc > 0
