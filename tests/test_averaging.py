"""micro and macro over shards, folds and classes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn import metrics as skm

import streameval as se


def _folds(k=5, n=400, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(k):
        y = rng.random(n) < 0.4
        s = 1 / (1 + np.exp(-rng.normal(y * 1.5 - 0.5, 1.0)))
        acc = se.BinaryAccumulator(bins=se.Bins.uniform(0, 1, 1000))  # every rounded score is an edge
        acc.update_many(y, np.round(s, 3))
        out.append((acc, y, np.round(s, 3)))
    return out


def test_micro_is_the_report_of_the_summed_counts():
    folds = _folds()
    accs = [f[0] for f in folds]
    y = np.concatenate([f[1] for f in folds])
    s = np.concatenate([f[2] for f in folds])
    r = se.micro(accs)
    assert r.auc == pytest.approx(skm.roc_auc_score(y, s), abs=1e-12)
    pred = s >= 0.5
    assert r.precision == pytest.approx(skm.precision_score(y, pred), abs=1e-12)
    assert r.f1 == pytest.approx(skm.f1_score(y, pred), abs=1e-12)
    assert (r.tp, r.fp) == (sum(a.get().tp for a in accs), sum(a.get().fp for a in accs))


def test_macro_is_mean_and_sample_std_of_member_metrics():
    folds = _folds()
    accs = [f[0] for f in folds]
    m = se.macro(accs)
    aucs = [skm.roc_auc_score(y, s) for _, y, s in folds]
    f1s = [skm.f1_score(y, s >= 0.5) for _, y, s in folds]
    np.testing.assert_allclose(m.auc.values, aucs, atol=1e-12)
    assert m.auc.mean == pytest.approx(np.mean(aucs), abs=1e-12)
    assert m.auc.std == pytest.approx(np.std(aucs, ddof=1), abs=1e-12)
    assert m.mean_f1 == pytest.approx(np.mean(f1s), abs=1e-12)
    p = np.mean([skm.precision_score(y, s >= 0.5) for _, y, s in folds])
    r = np.mean([skm.recall_score(y, s >= 0.5) for _, y, s in folds])
    assert m.macro_f1 == pytest.approx(2 * p * r / (p + r), abs=1e-12)
    assert m.macro_f1 != pytest.approx(m.mean_f1, abs=1e-9)  # the two definitions differ here
    assert set(m.metrics) == set(se.BinaryReport.SCALAR_METRICS)
    assert se.macro([a.get() for a in accs]).auc == m.auc  # reports work as well as accumulators


def test_undefined_member_values_are_kept_and_skipped_by_the_mean():
    good = se.BinaryAccumulator()
    good.update_many([1, 0, 1, 0], [0.9, 0.1, 0.8, 0.3])
    one_class = se.BinaryAccumulator()
    one_class.update_many([1, 1], [0.9, 0.2])
    m = se.macro([good, one_class])
    assert m.auc.values[0] == 1.0 and math.isnan(m.auc.values[1])
    assert m.auc.mean == 1.0 and m.auc.n_undefined == 1
    assert math.isnan(m.auc.std)  # fewer than two defined values
    assert m.recall.values == (1.0, 0.5)


def test_macro_over_multiclass_members_and_errors():
    rng = np.random.default_rng(3)
    accs = []
    for _ in range(3):
        acc = se.MulticlassAccumulator(classes=[0, 1, 2])
        y = rng.integers(0, 3, 200)
        acc.update_many(y, rng.random((200, 3)) + np.eye(3)[y])
        accs.append(acc)
    m = se.macro(accs)
    assert m.kappa.values == tuple(a.get().kappa for a in accs)
    assert m.macro_auc.mean == pytest.approx(np.mean([a.get().macro_auc for a in accs]))
    with pytest.raises(TypeError, match="binary"):
        _ = m.macro_precision
    with pytest.raises(AttributeError, match="no metric"):
        _ = m.not_a_metric
    with pytest.raises(TypeError, match="one kind"):
        se.macro([accs[0], se.BinaryAccumulator()])
    with pytest.raises(ValueError, match="at least one"):
        se.macro([])
    with pytest.raises(ValueError, match="at least one"):
        se.micro([])
    assert se.micro(accs).accuracy == pytest.approx(
        np.trace(sum(a.get().confusion_matrix for a in accs)) / 600, abs=1e-12
    )


def test_micro_takes_windows_monitors_and_joins_as_macro_does():
    """micro of windows is the report of their events now merged (macro and drift took windows; micro refused
    them); a monitor or a label join stands for the accumulator it counts into."""
    rng = np.random.default_rng(3)
    y, s = rng.random(300) < 0.4, rng.random(300)
    sliding = se.Sliding(se.BinaryAccumulator, size=100)
    sliding.update_many(y[:200], s[:200])
    timed = se.TimeWindow(se.BinaryAccumulator, width=50.0)
    timed.update_many(y[200:], s[200:], t=np.arange(100, dtype=float))
    monitor = se.Monitor(se.Sliding(se.BinaryAccumulator, size=30), every=7)
    monitor.update_many(y[:60], s[:60])
    join = se.LabelJoin(se.BinaryAccumulator())
    join.predict_many(list(range(40)), s[:40])
    join.label_many(list(range(40)), y[:40])
    report = se.micro([sliding, timed, monitor, join])
    merged = sliding.accumulator() + timed.accumulator() + monitor.accumulator.accumulator() + join.accumulator
    assert report.n == 100 + timed.accumulator().n + 30 + 40
    assert report.auc == merged.get().auc and report.to_dict() == pytest.approx(merged.get().to_dict(), nan_ok=True)
    with pytest.raises(TypeError, match="ScoreAccumulator"):
        se.micro([sliding, se.ScoreAccumulator()])
