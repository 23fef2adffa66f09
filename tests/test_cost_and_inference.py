"""Cost curves, minimum costs, AUC intervals and significance tests against brute force and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import exact_accumulator
from scipy import stats
from sklearn.metrics import roc_auc_score

import streameval as se
from streameval.inference import delong_variance, hanley_mcneil_variance


def _random(seed, n=300, ties=False):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.35
    s = rng.normal(y * 1.0, 1.0)
    return y, (np.round(s, 1) if ties else s)


def _rates(y, s):
    ts = np.concatenate([[np.inf], np.unique(s)[::-1]])
    p, n = y.sum(), (~y).sum()
    fpr = np.array([np.sum((s >= t) & ~y) / n for t in ts])
    fnr = np.array([np.sum((s < t) & y) / p for t in ts])
    return ts, fpr, fnr


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ties", [False, True])
def test_cost_curve_is_the_lower_envelope_of_every_threshold(seed, ties):
    y, s = _random(seed, ties=ties)
    r = exact_accumulator(y, s).get()
    _, fpr, fnr = _rates(y, s)
    x, env = r.cost_curve()
    assert x[0] == 0.0 and x[-1] == 1.0 and np.all(np.diff(x) >= 0)
    brute_at_vertices = np.min(fnr[None, :] * x[:, None] + fpr[None, :] * (1 - x[:, None]), axis=1)
    np.testing.assert_allclose(env, brute_at_vertices, atol=1e-12)
    grid = np.linspace(0, 1, 20001)
    brute = np.min(fnr[None, :] * grid[:, None] + fpr[None, :] * (1 - grid[:, None]), axis=1)
    np.testing.assert_allclose(np.interp(grid, x, env), brute, atol=1e-12)  # piecewise linear between vertices
    assert r.expected_cost() == pytest.approx(np.trapezoid(brute, grid), abs=1e-6)


@pytest.mark.parametrize("seed", [0, 3])
def test_min_cost_and_min_dcf_against_every_threshold(seed):
    y, s = _random(seed, ties=True)
    r = exact_accumulator(y, s).get()
    ts, fpr, fnr = _rates(y, s)
    for p, c_fn, c_fp in [(0.5, 1, 1), (0.1, 5, 1), (0.9, 1, 3), (0.3, 0, 1)]:
        x = p * c_fn / (p * c_fn + (1 - p) * c_fp)
        costs = fnr * x + fpr * (1 - x)
        best = r.min_cost(p, c_fn, c_fp)
        assert best.cost == pytest.approx(costs.min(), abs=1e-12)
        assert costs[list(ts).index(best.threshold)] == pytest.approx(costs.min(), abs=1e-12)
    for p_target, c_miss, c_fa in [(0.01, 1, 1), (0.5, 10, 1), (0.2, 1, 100)]:
        dcf = (c_miss * p_target * fnr + c_fa * (1 - p_target) * fpr) / min(c_miss * p_target, c_fa * (1 - p_target))
        best = r.min_dcf(p_target, c_miss, c_fa)
        assert best.cost == pytest.approx(dcf.min(), abs=1e-12)
        assert dcf[list(ts).index(best.threshold)] == pytest.approx(dcf.min(), abs=1e-12)


def _delong_reference(y, s):
    """DeLong's variance from raw scores: placements by direct pairwise comparison."""
    pos, neg = s[y], s[~y]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    auc = psi.mean()
    s10 = np.sum((v10 - auc) ** 2) / (pos.size - 1)
    s01 = np.sum((v01 - auc) ** 2) / (neg.size - 1)
    return s10 / pos.size + s01 / neg.size


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("ties", [False, True])
def test_delong_variance_from_the_histogram_is_exact(seed, ties):
    y, s = _random(seed, n=250, ties=ties)
    r = exact_accumulator(y, s).get()
    assert delong_variance(r.neg, r.pos) == pytest.approx(_delong_reference(y, s), abs=1e-12)
    ci = r.auc_ci(0.9)
    half = stats.norm.ppf(0.95) * math.sqrt(_delong_reference(y, s))
    assert ci.lower == pytest.approx(roc_auc_score(y, s) - half, abs=1e-12)
    hm = r.auc_ci(0.95, method="hanley-mcneil")
    a, p, n = r.auc, r.positives, r.negatives
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    var = (a * (1 - a) + (p - 1) * (q1 - a * a) + (n - 1) * (q2 - a * a)) / (p * n)
    assert hanley_mcneil_variance(a, p, n) == pytest.approx(var, rel=1e-14)
    assert hm.upper == pytest.approx(min(1.0, a + 1.959963984540054 * math.sqrt(var)), abs=1e-12)


def test_delong_interval_covers_the_true_auc_about_95_percent_of_the_time():
    rng = np.random.default_rng(2024)
    mu = 1.0
    true_auc = stats.norm.cdf(mu / math.sqrt(2))
    covered = 0
    runs = 1000
    for _ in range(runs):
        y = np.repeat([True, False], 200)
        s = rng.normal(y * mu, 1.0)
        acc = se.BinaryAccumulator()
        acc.update_many(y, s)
        ci = acc.get().auc_ci(0.95)
        covered += ci.lower <= true_auc <= ci.upper
    assert 0.93 <= covered / runs <= 0.97, covered


def test_wilson_intervals_match_scipy():
    acc = se.BinaryAccumulator()
    acc.update_many([1] * 30 + [0] * 50, [0.9] * 15 + [0.1] * 15 + [0.9] * 5 + [0.1] * 45)
    r = acc.get()
    for metric, (k, n) in {"precision": (15, 20), "recall": (15, 30), "accuracy": (60, 80)}.items():
        ref = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
        ci = r.wilson_ci(metric)
        assert ci.estimate == k / n
        assert (ci.lower, ci.upper) == pytest.approx((ref.low, ref.high), abs=1e-12)
    with pytest.raises(ValueError, match="metric"):
        r.wilson_ci("auc")
    with pytest.raises(ValueError, match="level"):
        r.wilson_ci("recall", level=1.5)


def test_mcnemar_matches_scipy_and_paired_accumulator_counts():
    rng = np.random.default_rng(9)
    y = rng.random(500) < 0.5
    sa = rng.normal(y * 1.2, 1.0)
    sb = rng.normal(y * 0.8, 1.0)
    acc = se.PairedAccumulator(threshold=0.5)
    acc.update_many(y[:250], sa[:250], sb[:250])
    other = se.PairedAccumulator(threshold=0.5)
    for i in range(250, 500):
        other.update(bool(y[i]), float(sa[i]), float(sb[i]))
    r = (acc + other).get()
    a_ok, b_ok = (sa >= 0.5) == y, (sb >= 0.5) == y
    b, c = int(np.sum(a_ok & ~b_ok)), int(np.sum(~a_ok & b_ok))
    m = r.mcnemar
    assert (m.b, m.c) == (b, c)
    assert m.statistic == pytest.approx((abs(b - c) - 1) ** 2 / (b + c), rel=1e-14)
    assert m.p_value == pytest.approx(stats.chi2.sf(m.statistic, 1), rel=1e-10)
    assert m.p_exact == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, rel=1e-10)
    assert r.a.accuracy == pytest.approx(a_ok.mean()) and r.b.accuracy == pytest.approx(b_ok.mean())
    assert r.a.f1 == pytest.approx(2 * np.sum((sa >= 0.5) & y) / (np.sum(sa >= 0.5) + y.sum()))
    labels = se.PairedAccumulator()
    labels.update_many(y, sa >= 0.5, sb >= 0.5)
    assert np.array_equal(labels.get().counts, r.counts)
    with pytest.raises(ValueError, match="pred_b"):
        labels.update_many([1, 0], [1, 0], [1, 2])
    with pytest.raises(ValueError, match="threshold"):
        acc.merge(labels)


def test_a_paired_report_names_its_metrics_for_monitors_macro_and_pages():
    """Each model's metrics of its table (``a_*``, ``b_*``) against scikit-learn, McNemar's against scipy; a
    monitor over the paired accumulator records them, ``macro`` averages them over shards, a page lists them."""
    from sklearn import metrics as skm

    from streameval.html import report_html

    rng = np.random.default_rng(11)
    y = rng.random(400) < 0.4
    sa, sb = rng.normal(y * 1.0, 1.0), rng.normal(y * 0.6, 1.0)
    acc = se.PairedAccumulator(threshold=0.5)
    acc.update_many(y, sa, sb)
    r = acc.get()
    d = r.to_dict()
    assert list(d) == list(se.PairedReport.SCALAR_METRICS) and d["n"] == 400 and d["positives"] == int(y.sum())
    for side, s in (("a", sa), ("b", sb)):
        pred = s >= 0.5
        assert d[f"{side}_accuracy"] == pytest.approx(skm.accuracy_score(y, pred), rel=1e-14)
        assert d[f"{side}_precision"] == pytest.approx(skm.precision_score(y, pred), rel=1e-14)
        assert d[f"{side}_recall"] == pytest.approx(skm.recall_score(y, pred), rel=1e-14)
        assert d[f"{side}_mcc"] == pytest.approx(skm.matthews_corrcoef(y, pred), rel=1e-12)
        assert getattr(r, f"{side}_f1") == pytest.approx(skm.f1_score(y, pred), rel=1e-14)
    a_ok, b_ok = (sa >= 0.5) == y, (sb >= 0.5) == y
    b, c = int(np.sum(a_ok & ~b_ok)), int(np.sum(~a_ok & b_ok))
    assert (d["mcnemar_b"], d["mcnemar_c"]) == (b, c)
    assert d["mcnemar_p_exact"] == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, rel=1e-10)
    with pytest.raises(AttributeError, match="a_auc"):
        r.a_auc  # noqa: B018 - no scores kept: no AUC

    mon = se.Monitor(se.PairedAccumulator(threshold=0.5), every=100, metrics=["a_accuracy", "mcnemar_p_value"])
    every = se.Monitor(se.PairedAccumulator(threshold=0.5), every=100)
    for i in range(400):
        mon.update(bool(y[i]), float(sa[i]), float(sb[i]))
        every.update(bool(y[i]), float(sa[i]), float(sb[i]))
    records = mon.to_records()
    assert [row["time"] for row in records] == [100, 200, 300, 400]
    for row in records:
        t = row["time"]
        assert row["a_accuracy"] == pytest.approx(skm.accuracy_score(y[:t], sa[:t] >= 0.5), rel=1e-14)
    assert every.to_records()[-1] == {"time": 400, **d}

    shards = [se.PairedAccumulator(threshold=0.5) for _ in range(4)]
    for k, shard in enumerate(shards):
        shard.update_many(y[k::4], sa[k::4], sb[k::4])
    summary = se.macro(shards)
    want = [skm.accuracy_score(y[k::4], sb[k::4] >= 0.5) for k in range(4)]
    assert summary.b_accuracy.mean == pytest.approx(np.mean(want), rel=1e-14)
    page = report_html(acc)
    assert f"<tr><td>b_accuracy</td><td>{d['b_accuracy']:.6g}</td></tr>" in page
    region = np.where(np.arange(400) % 3 == 0, "eu", "us")
    by_region = se.Segmented(lambda: se.PairedAccumulator(threshold=0.5))
    by_region.update_many(region, y, sa, sb)
    table = by_region.get().summary()
    header, *rows = table.splitlines()
    assert header.split() == ["segment", "n", "a_accuracy", "b_accuracy", "mcnemar_p_value"]
    for name in ("eu", "us"):
        mine = region == name
        row = next(r.split() for r in rows if r.startswith(name))
        assert float(row[2]) == pytest.approx(skm.accuracy_score(y[mine], sa[mine] >= 0.5), abs=5e-5)
    tables = [se.ConfusionReport(tp=3 + k, fp=2, tn=5, fn=1, threshold=0.5) for k in range(3)]
    assert se.macro(tables).precision.mean == pytest.approx(np.mean([(3 + k) / (5 + k) for k in range(3)]))
    assert tables[0].to_dict() == {m: getattr(tables[0], m) for m in se.ConfusionReport.SCALAR_METRICS}


def test_paired_events_one_by_one_equal_a_batch_at_the_edges():
    """A paired event counted one by one lands in the cell a batch gives it: scores at the threshold, ints (one
    beyond 2**53, which the batch's floats round across the threshold), bools and str labels."""
    big = float(2**53 + 4)
    for threshold, events in (
        (0.5, [(1, 0.5, 0.49), (0, 1, 0), (True, 0.7, 0.5)]),
        (big, [(1, 2**53 + 3, 0.0), (0, 2**53 + 5, 2**53 + 4)]),
    ):
        one = se.PairedAccumulator(threshold=threshold)
        for event in events:
            one.update(*event)
        batch = se.PairedAccumulator(threshold=threshold)
        batch.update_many(*(list(c) for c in zip(*events, strict=True)))
        assert np.array_equal(one.get().counts, batch.get().counts)
    named = se.PairedAccumulator(pos_label="yes", neg_label="no")
    named.update("yes", "no", "yes")
    assert named.get().counts[1, 0, 1] == 1


def test_paired_t_test_matches_scipy_over_folds():
    rng = np.random.default_rng(4)
    fold_a, fold_b = [], []
    for _ in range(10):
        y = rng.random(300) < 0.4
        a, b = se.BinaryAccumulator(), se.BinaryAccumulator()
        a.update_many(y, rng.normal(y * 1.2, 1.0))
        b.update_many(y, rng.normal(y * 1.0, 1.0))
        fold_a.append(a)
        fold_b.append(b)
    r = se.paired_t_test(fold_a, fold_b, metric="auc")
    ref = stats.ttest_rel([f.get().auc for f in fold_a], [f.get().auc for f in fold_b])
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-8)
    assert r.dof == 9
    with pytest.raises(ValueError, match="pair up"):
        se.paired_t_test(fold_a, fold_b[:3])
    with pytest.raises(ValueError, match="not a metric"):
        se.paired_t_test(fold_a, fold_b, metric="nope")


@pytest.mark.parametrize(("b", "c"), [(17, 3), (5_000_000, 4_990_000), (1_000_000_000, 999_960_000), (40, 2_000_000)])
def test_mcnemar_exact_p_value_at_large_counts_against_scipy(b, c):
    """The binomial tail from the terms near min(b, c) alone, the largest term in Loader's form: scipy's value
    where the sum of every term from lgamma differences lost digits (4e-8 at 10^7) and took seconds."""
    from streameval.inference import mcnemar

    exact = stats.binomtest(min(b, c), b + c, 0.5).pvalue
    assert mcnemar(b, c).p_exact == pytest.approx(exact, rel=1e-10)
    assert mcnemar(c, b).p_exact == mcnemar(b, c).p_exact


@pytest.mark.parametrize("factor", [1e-200, 1e200])
def test_intervals_and_break_even_point_of_weights_far_from_one(factor):
    """Wilson's interval divided by n^2 (ZeroDivisionError at weights of 1e-200), DeLong's AUC and the break-even
    point multiplied weights (overflow at 1e200): the same events give scale-free values, and intervals whose
    width follows the total weight (all but 0 at 1e200, all of [0, 1] at 1e-200)."""
    import warnings

    rng = np.random.default_rng(21)
    y = rng.random(300) < 0.4
    s = np.round(rng.normal(y * 0.8, 1.0), 2)
    w = rng.uniform(0.5, 1.5, 300)
    near_one = exact_accumulator(y, s, w).get()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warning fails the test
        far = exact_accumulator(y, s, w * factor).get()
        recall = far.wilson_ci("recall")
        auc = far.auc_ci()
        bep = far.bep
    assert bep == pytest.approx(near_one.bep, abs=1e-12)
    assert recall.estimate == pytest.approx(near_one.recall, abs=1e-12)
    assert auc.estimate == pytest.approx(near_one.auc, abs=1e-12)
    if factor > 1:
        assert recall.upper - recall.lower < 1e-90 and auc.upper - auc.lower < 1e-90
    else:
        assert (recall.lower, recall.upper) == (0.0, 1.0)
