"""streameval metrics inside river."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from reference import phishing_scores
from river import compose, datasets, evaluate, linear_model, metrics, preprocessing, utils
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score

import streameval as se
from streameval import river as se_river


def _model():
    return compose.Pipeline(preprocessing.StandardScaler(), linear_model.LogisticRegression())


def test_progressive_validation_matches_scikit_learn_on_the_same_scores():
    metric = se_river.ROCAUC() + se_river.AveragePrecision() + se_river.EER() + se_river.F1()
    evaluate.progressive_val_score(datasets.Phishing(), _model(), metric)
    y, p = phishing_scores()
    auc, ap, eer, f1 = metric.get()
    assert abs(auc - roc_auc_score(y, p)) <= 1e-4
    assert abs(ap - average_precision_score(y, p)) <= 1e-3
    assert 0 < eer < 0.2
    model = _model()
    labels = []
    for x, yy in datasets.Phishing():
        labels.append(model.predict_one(x))
        model.learn_one(x, yy)
    assert f1 == pytest.approx(f1_score(y, np.array(labels, dtype=bool)), abs=1e-12)
    river_auc = metrics.ROCAUC()
    for yy, pp in zip(y, p, strict=True):
        river_auc.update(yy, pp)
    assert abs(auc - roc_auc_score(y, p)) < abs(river_auc.get() - roc_auc_score(y, p))


def test_iter_progressive_val_score_and_every_y_pred_form():
    steps = list(evaluate.iter_progressive_val_score(datasets.Phishing(), _model(), se_river.ROCAUC(), step=500))
    assert [s["Step"] for s in steps] == [500, 1000, 1250]
    m1, m2, m3 = se_river.ROCAUC(), se_river.ROCAUC(), se_river.ROCAUC()
    for yt, p in [(True, 0.9), (False, 0.3), (True, 0.4), (False, 0.6)]:
        m1.update(yt, p)
        m2.update(yt, {True: p, False: 1 - p})
        m3.update(yt, p >= 0.5)
    assert m1.get() == m2.get() == 0.75
    assert m3.get() == 0.5  # labels score 1 or 0: ties count half


def test_rolling_takes_the_class_and_reverts_exactly():
    y, p = phishing_scores()
    rolling = utils.Rolling(se_river.ROCAUC, window_size=200)
    for yy, pp in zip(y, p, strict=True):
        rolling.update(yy, pp)
    fresh = se.BinaryAccumulator()
    fresh.update_many(y[-200:], p[-200:])
    assert rolling.get() == fresh.get().auc
    fb = utils.Rolling(se_river.FBeta, window_size=50, beta=2.0)
    for yy, pp in zip(y, p, strict=True):
        fb.update(yy, pp >= 0.5)
    last = se.BinaryAccumulator()
    last.update_many(y[-50:], (p[-50:] >= 0.5).astype(float))
    assert fb.get() == pytest.approx(last.get().fbeta(2.0), abs=1e-12)
    macro = utils.Rolling(se_river.MacroF1, window_size=100)
    for yy, pp in zip(y, p, strict=True):
        macro.update(yy, pp >= 0.5)
    assert macro.get() == pytest.approx(f1_score(y[-100:], p[-100:] >= 0.5, average="macro"), abs=1e-12)


def test_bigger_is_better_is_right_for_model_selection():
    good, bad = se_river.EER(), se_river.EER()
    for yt, p in [(True, 0.9), (False, 0.1), (True, 0.8), (False, 0.2)]:
        good.update(yt, p)
        bad.update(yt, 1 - p)
    assert good.get() < bad.get() and good.is_better_than(bad) and not good.bigger_is_better
    auc_good, auc_bad = se_river.ROCAUC(), se_river.ROCAUC()
    for yt, p in [(True, 0.9), (False, 0.1)]:
        auc_good.update(yt, p)
        auc_bad.update(yt, 1 - p)
    assert auc_good.is_better_than(auc_bad) and auc_good.bigger_is_better


@pytest.mark.parametrize(
    "make",
    [se_river.ROCAUC, se_river.AveragePrecision, se_river.PRAUC, se_river.EER, se_river.BEP, se_river.Precision,
     se_river.Recall, se_river.F1, lambda: se_river.FBeta(beta=0.5), se_river.MacroF1, se_river.MicroF1,
     lambda: se_river.Adapter("mcc")],
)  # fmt: skip
def test_river_metric_contract(make):
    metric = make()
    clone = metric.clone()
    assert type(clone) is type(metric) and clone is not metric
    assert isinstance(repr(metric), str) and metric.works_with(_model())
    assert isinstance(metric.requires_labels, bool) and isinstance(metric.bigger_is_better, bool)
    events = [(True, 0.9), (False, 0.3), (True, 0.2), (False, 0.6), (True, 0.7)]
    for yt, p in events:
        metric.update(yt, p if not metric.requires_labels else p >= 0.5)
    value = metric.get()
    extra = (False, 0.8)
    metric.update(extra[0], extra[1] if not metric.requires_labels else extra[1] >= 0.5)
    metric.revert(extra[0], extra[1] if not metric.requires_labels else extra[1] >= 0.5)
    assert metric.get() == pytest.approx(value, nan_ok=True)
    assert pickle.loads(pickle.dumps(metric)).get() == pytest.approx(value, nan_ok=True)
    assert math.isnan(make().get())  # nothing counted yet: undefined, not 0


def test_adapter_for_regression_and_multiclass():
    mse = se_river.Adapter("mse", kind="regression", bigger_is_better=False)
    for yt, yp in [(1.0, 1.5), (2.0, 2.5)]:
        mse.update(yt, yp)
    assert mse.get() == 0.25 and not mse.bigger_is_better
    kappa = se_river.Adapter("kappa", kind="multiclass")
    kappa.update("a", {"a": 0.7, "b": 0.3})
    kappa.update("b", {"a": 0.2, "b": 0.8})
    assert kappa.get() == 1.0
    with pytest.raises(ValueError, match="not a metric"):
        se_river.Adapter("nope")
    with pytest.raises(ValueError, match="'roc_curve' is not a metric of binary reports"):
        se_river.Adapter("roc_curve")  # a curve, not a scalar


def test_adapter_takes_metrics_that_are_methods():
    """``ece`` and ``mce`` are methods of the report (with a number of bins): the adapter calls them with their
    defaults, as a monitor and Prometheus do; the value is scikit-learn's calibration curve's ECE."""
    from sklearn.calibration import calibration_curve

    rng = np.random.default_rng(5)
    y = rng.random(300) < 0.4
    s = np.clip(rng.normal(0.3 + 0.4 * y, 0.2), 0.0, 1.0)
    ece, mce = se_river.Adapter("ece", bigger_is_better=False), se_river.Adapter("mce", bigger_is_better=False)
    for yt, yp in zip(y.tolist(), s.tolist(), strict=True):
        ece.update(yt, yp)
        mce.update(yt, yp)
    true, pred = calibration_curve(y, s, n_bins=15, strategy="uniform")
    counts = np.histogram(s, bins=np.linspace(0, 1, 16))[0]
    gaps = np.abs(true - pred)
    assert ece.get() == pytest.approx(np.sum(counts[counts > 0] * gaps) / y.size, rel=1e-9)
    assert mce.get() == pytest.approx(gaps.max(), rel=1e-12)


def test_river_metrics_take_exact_up_to_and_clone_with_it():
    from streameval import river as se_river

    metric = se_river.AveragePrecision(exact_up_to=0)
    for yt, yp in [(True, 0.9), (False, 0.91), (True, 0.3), (False, 0.2)]:
        metric.update(yt, yp)
    assert not metric.accumulator.get().is_exact
    clone = metric.clone()
    assert clone.exact_up_to == 0 and clone.accumulator.exact_up_to == 0
    assert se_river.ROCAUC().accumulator.exact_up_to == 8192


def test_a_model_that_cannot_predict_yet_counts_as_in_rivers_metrics():
    """river's predict_one gives None before a model has learnt a class; river's multiclass metrics count it as a
    predicted class of its own (wrong for every true class): a loop calling update by hand gets river's values,
    though a missing value is no class label to the accumulator itself."""
    rng = np.random.default_rng(4)
    truth = rng.choice(["a", "b", "c"], 300).tolist()
    predicted = [None if i < 20 or rng.random() < 0.1 else rng.choice(["a", "b", "c"]) for i in range(300)]
    pairs = [
        (metrics.MacroF1(), se_river.MacroF1()),
        (metrics.MicroF1(), se_river.MicroF1()),
        (metrics.Accuracy(), se_river.Adapter("accuracy", kind="multiclass")),
    ]
    for theirs, ours in pairs:
        for y, p in zip(truth, predicted, strict=True):
            theirs.update(y, p)
            ours.update(y, p)
        assert ours.get() == pytest.approx(theirs.get(), abs=1e-12), type(theirs).__name__
    with pytest.raises(ValueError, match="not a missing value"):
        se.MulticlassAccumulator().update("a", None)
