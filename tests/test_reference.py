"""streameval against scikit-learn on the same inputs, with bins that separate every score."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import exact_accumulator, exact_eer
from sklearn import metrics as skm

import streameval as se

TOL = 1e-12


def _cases():
    rng = np.random.default_rng(1234)
    out = []
    for n, ties, weighted in [(50, False, False), (400, True, False), (300, False, True), (500, True, True)]:
        y = rng.random(n) < 0.4
        s = rng.normal(y * 0.8, 1.0)
        if ties:
            s = np.round(s, 1)
        w = rng.uniform(0, 3, n) if weighted else None
        if weighted:
            w[rng.random(n) < 0.1] = 0.0  # zero weights too
        out.append((y, s, w))
    # adversarial: constant scores, perfectly separated, perfectly reversed, two points
    y = np.array([0, 1, 0, 1, 1, 0])
    out.append((y, np.full(6, 0.3), None))
    out.append((y, y * 1.0, None))
    out.append((y, 1.0 - y, None))
    out.append((np.array([0, 1]), np.array([0.2, 0.9]), None))
    # integer-valued weights
    out.append((y, np.array([0.1, 0.2, 0.2, 0.4, 0.5, 0.9]), np.array([1, 2, 3, 1, 2, 3.0])))
    return out


CASES = _cases()
IDS = [f"case{i}" for i in range(len(CASES))]


@pytest.mark.parametrize(("y", "s", "w"), CASES, ids=IDS)
def test_roc_curve_and_auc(y, s, w):
    r = exact_accumulator(y, s, w).get()
    fpr, tpr, thr = skm.roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    my_fpr, my_tpr, my_thr = r.roc_curve()
    np.testing.assert_allclose(my_fpr, fpr, rtol=0, atol=TOL)
    np.testing.assert_allclose(my_tpr, tpr, rtol=0, atol=TOL)
    np.testing.assert_array_equal(my_thr, thr)
    auc = skm.roc_auc_score(y, s, sample_weight=w)
    assert r.auc == pytest.approx(auc, abs=TOL)
    assert r.auc_lower <= auc + TOL and auc - TOL <= r.auc_upper


@pytest.mark.parametrize(("y", "s", "w"), CASES, ids=IDS)
def test_average_precision_and_pr_curve(y, s, w):
    r = exact_accumulator(y, s, w).get()
    assert r.average_precision == pytest.approx(skm.average_precision_score(y, s, sample_weight=w), abs=TOL)
    p, rc, thr = skm.precision_recall_curve(y, s, sample_weight=w, drop_intermediate=False)
    mp, mrc, mthr = r.pr_curve()
    np.testing.assert_allclose(mp, p, rtol=0, atol=TOL)
    np.testing.assert_allclose(mrc, rc, rtol=0, atol=TOL)
    np.testing.assert_array_equal(mthr, thr)


@pytest.mark.parametrize(("y", "s", "w"), CASES, ids=IDS)
@pytest.mark.parametrize("exact_up_to", [None, 0])
def test_average_precision_bounds_hold_scikit_learns_value_with_ties_and_weights(y, s, w, exact_up_to):
    """Exact (every distinct score) or binned from the first event (default bins): scikit-learn's AP on the
    same scores, ties and weights included, lies within the bounds; exact, the AP itself does too."""
    acc = se.BinaryAccumulator(exact_up_to=exact_up_to)
    acc.update_many(y, s, w)
    r = acc.get()
    exact = skm.average_precision_score(y, s, sample_weight=w)
    assert r.average_precision_lower - TOL <= exact <= r.average_precision_upper + TOL
    assert r.average_precision_lower - TOL <= r.average_precision <= r.average_precision_upper + TOL


@pytest.mark.parametrize(("y", "s", "w"), CASES, ids=IDS)
def test_det_curve(y, s, w):
    r = exact_accumulator(y, s, w).get()
    fpr, fnr, thr = skm.det_curve(y, s, sample_weight=w)
    mf, mn, mt = r.det_curve()
    np.testing.assert_allclose(mf, fpr, rtol=0, atol=TOL)
    np.testing.assert_allclose(mn, fnr, rtol=0, atol=TOL)
    np.testing.assert_array_equal(mt, thr)


@pytest.mark.parametrize(("y", "s", "w"), CASES, ids=IDS)
def test_rates_at_every_threshold(y, s, w):
    r = exact_accumulator(y, s, w).get()
    for t in np.unique(s):
        pred = s >= t
        c = r.at(t)
        assert c.threshold == t
        kw = {"sample_weight": w, "zero_division": np.nan}
        assert c.precision == pytest.approx(skm.precision_score(y, pred, **kw), abs=TOL, nan_ok=True)
        assert c.recall == pytest.approx(skm.recall_score(y, pred, **kw), abs=TOL, nan_ok=True)
        for beta in (0.5, 1.0, 2.0):
            ref = skm.fbeta_score(y, pred, beta=beta, **kw)
            assert c.fbeta(beta) == pytest.approx(ref, abs=TOL, nan_ok=True)
        assert c.f1 == pytest.approx(skm.f1_score(y, pred, **kw), abs=TOL, nan_ok=True)
        assert c.balanced_accuracy == pytest.approx(skm.balanced_accuracy_score(y, pred, sample_weight=w), abs=TOL)
        assert c.accuracy == pytest.approx(skm.accuracy_score(y, pred, sample_weight=w), abs=TOL)
        mcc = skm.matthews_corrcoef(y, pred, sample_weight=w)
        if c.predicted_positives in (0, c.n):  # a margin of the table is 0: we say nan, scikit-learn 0
            assert np.isnan(c.mcc) and mcc == 0
        else:
            assert c.mcc == pytest.approx(mcc, abs=1e-10)
        tn, fp, fn, tp = skm.confusion_matrix(y, pred, sample_weight=w, labels=[0, 1]).ravel()
        assert (c.tn, c.fp, c.fn, c.tp) == pytest.approx((tn, fp, fn, tp), abs=1e-9)


@pytest.mark.parametrize(("y", "s", "w"), CASES, ids=IDS)
def test_eer_matches_raw_score_interpolation(y, s, w):
    r = exact_accumulator(y, s, w).get()
    assert r.eer == pytest.approx(exact_eer(y, s, w), abs=TOL)


@pytest.mark.parametrize("threshold", [0.5, 0.33, 0.0, -0.2, 1.7])
def test_confusion_counts_exact_at_threshold_inside_a_bin(threshold):
    rng = np.random.default_rng(7)
    y = rng.random(3000) < 0.5
    s = rng.normal(y * 0.5, 0.6)
    w = rng.uniform(0, 2, 3000)
    for weights in (None, w):
        acc = se.BinaryAccumulator(bins=se.Bins.uniform(0, 1, 7), threshold=threshold)
        half = 1500
        acc.update_many(y[:half], s[:half], None if weights is None else weights[:half])
        for i in range(half, 3000):  # the per-event path too
            acc.update(y[i], s[i], 1.0 if weights is None else weights[i])
        r = acc.get()
        pred = s >= threshold
        tn, fp, fn, tp = skm.confusion_matrix(y, pred, sample_weight=weights).ravel()
        assert (r.tn, r.fp, r.fn, r.tp) == pytest.approx((tn, fp, fn, tp), rel=1e-12)
        assert r.at(threshold).tp == r.tp


def test_one_class_only_reports_nan_not_zero():
    acc = se.BinaryAccumulator()
    acc.update_many([1, 1, 1], [0.2, 0.6, 0.9])
    r = acc.get()
    assert r.positives == 3 and r.negatives == 0
    assert np.isnan(r.auc) and np.isnan(r.auc_lower) and np.isnan(r.eer) and np.isnan(r.fpr)
    assert r.recall == pytest.approx(2 / 3)
    assert r.precision == 1.0
    assert r.average_precision == 1.0  # defined: every predicted positive is positive
    fpr, tpr, _ = r.roc_curve()
    assert np.isnan(fpr).all() and tpr[-1] == 1.0
    neg_only = se.BinaryAccumulator()
    neg_only.update_many([0, 0], [0.1, 0.7])
    r2 = neg_only.get()
    assert np.isnan(r2.auc) and np.isnan(r2.average_precision) and np.isnan(r2.recall)
    assert r2.fpr == 0.5 and r2.specificity == 0.5


def test_empty_accumulator_report():
    r = se.BinaryAccumulator().get()
    assert r.n == 0 and r.tp == 0
    assert np.isnan(r.auc) and np.isnan(r.accuracy) and np.isnan(r.eer) and np.isnan(r.bep)
    _fpr, _tpr, thr = r.roc_curve()
    assert thr.tolist() == [np.inf]


@pytest.mark.parametrize("factor", [1e-200, 1e200])
def test_weights_far_from_one_give_scikit_learns_metrics(factor):
    """Products of weights of 1e200 overflow and of 1e-200 underflow: the scale-free metrics must not see it."""
    rng = np.random.default_rng(77)
    n = 300
    y = rng.random(n) < 0.4
    s = np.round(rng.normal(y * 0.8, 1.0), 1)  # ties
    w = rng.uniform(0.5, 1.5, n)
    big = w * factor
    r = exact_accumulator(y, s, big).get()
    assert r.auc == pytest.approx(skm.roc_auc_score(y, s, sample_weight=w), abs=1e-12)
    assert r.auc_lower <= r.auc <= r.auc_upper and r.auc_upper - r.auc_lower > 0.01  # ties: a real interval
    assert r.average_precision == pytest.approx(skm.average_precision_score(y, s, sample_weight=w), abs=1e-12)
    assert r.mcc == pytest.approx(skm.matthews_corrcoef(y, s >= 0.5, sample_weight=w), abs=1e-12)
    near_one = exact_accumulator(y, s, w).get()
    for name in ("auc_lower", "auc_upper", "average_precision_lower", "average_precision_upper", "rank_loss"):
        assert getattr(r, name) == pytest.approx(getattr(near_one, name), abs=1e-12), name
    binned = se.BinaryAccumulator(bins=se.Bins.uniform(-3.0, 4.0, 8))
    binned.update_many(y, s, big)
    binned_near_one = se.BinaryAccumulator(bins=se.Bins.uniform(-3.0, 4.0, 8))
    binned_near_one.update_many(y, s, w)
    for name in ("auc", "auc_lower", "auc_upper", "average_precision_lower", "average_precision_upper"):
        assert getattr(binned.get(), name) == pytest.approx(getattr(binned_near_one.get(), name), abs=1e-12), name
    classes = rng.integers(0, 3, n)
    probabilities = rng.dirichlet([1.0, 1.0, 1.0], n)
    multiclass = se.MulticlassAccumulator(classes=[0, 1, 2])
    multiclass.update_many(classes, probabilities, big)
    m = multiclass.get()
    predicted = probabilities.argmax(axis=1)
    assert m.kappa == pytest.approx(skm.cohen_kappa_score(classes, predicted, sample_weight=w), abs=1e-12)
    assert m.macro_auc == pytest.approx(
        skm.roc_auc_score(classes, probabilities, sample_weight=w, multi_class="ovr", average="macro"), abs=1e-12
    )


def test_sums_past_the_largest_float_are_inf_not_an_error():
    """A float's ``**`` raises OverflowError where a product gives inf: the report gives inf (or the limit)."""
    regression = se.RegressionAccumulator()
    regression.update_many([1.0, 2.0, 3.0], [1e160 + 1.0, 1e160 + 2.0, 1e160 + 3.0])  # errors of 1e160, no spread
    r = regression.get()
    assert r.mse == math.inf and r.rmse == math.inf and r.mae == pytest.approx(1e160)
    paired = se.PairedAccumulator(threshold=0.5)
    paired.update_many([1, 1, 0], [0.9, 0.2, 0.7], [0.1, 0.8, 0.7], w=[1e200, 3e200, 1.0])
    p = paired.get()
    assert (p.mcnemar_b, p.mcnemar_c) == (1e200, 3e200)
    assert p.mcnemar_statistic == pytest.approx(1e200)  # (|b - c| - 1)^2 / (b + c): (2e200)^2 / 4e200
    assert p.mcnemar_p_value == 0.0 and math.isnan(p.mcnemar_p_exact)  # weights of 1e200 are not counts
    binary = se.BinaryAccumulator()
    binary.update_many([1, 1, 0, 0], [0.9, 0.2, 0.7, 0.1])
    report = binary.get()
    assert report.fbeta(1e200) == report.recall == 0.5  # beta^2 overflows: F_beta's limit is the recall
    assert report.fbeta(1e150) == pytest.approx(skm.fbeta_score([1, 1, 0, 0], [1, 0, 1, 0], beta=1e150))
