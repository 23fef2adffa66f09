"""Scores without labels: ScoreAccumulator against numpy, drift against scipy."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from scipy import stats
from scipy.spatial.distance import jensenshannon

import streameval as se


def _scores(n, seed, shift=0.0, rounding=3):
    rng = np.random.default_rng(seed)
    s = 1 / (1 + np.exp(-rng.normal(shift, 1.2, n)))
    return np.round(s, rounding) if rounding else s


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("per_event", [False, True])
def test_statistics_equal_numpy_while_exact(weighted, per_event):
    s = _scores(3000, 1)
    w = np.random.default_rng(2).uniform(0.2, 3.0, s.size) if weighted else None
    acc = se.ScoreAccumulator()
    if per_event:
        for i in range(s.size):
            acc.update(float(s[i]), 1.0 if w is None else float(w[i]))
    else:
        acc.update_many(s, w)
    r = acc.get()
    assert r.is_exact and r.n == s.size
    assert r.mean == pytest.approx(np.average(s, weights=w), abs=1e-12)
    assert r.std == pytest.approx(math.sqrt(np.cov(s, aweights=w, bias=True)), abs=1e-12)
    assert (r.min, r.max) == (s.min(), s.max())
    for q in (0.0, 0.01, 0.25, 0.5, 0.9, 1.0):
        expected = np.quantile(s, q, method="inverted_cdf", weights=w)
        est = r.quantile(q)
        assert est.value == est.lower == est.upper == expected


def test_binned_quantiles_hold_the_exact_value():
    s = _scores(200_000, 3, rounding=0)
    acc = se.ScoreAccumulator()
    acc.update_many(s)
    r = acc.get()
    assert not r.is_exact
    for q in (0.001, 0.1, 0.5, 0.77, 0.999):
        exact = np.quantile(s, q, method="inverted_cdf")
        est = r.quantile(q)
        assert est.lower <= exact <= est.upper and est.upper - est.lower <= 2**-7 * 1.01
    assert r.mean == pytest.approx(s.mean(), abs=1e-12)


@pytest.mark.parametrize("shift", [0.0, 0.3, 1.5])
def test_drift_equals_scipy_while_exact(shift):
    ref, cur = _scores(4000, 4), _scores(2500, 5, shift=shift)
    a, b = se.ScoreAccumulator(), se.ScoreAccumulator()
    a.update_many(ref)
    b.update_many(cur)
    d = se.drift(a, b)
    assert d.exact and d.ks == d.ks_lower == d.ks_upper
    assert d.ks == pytest.approx(stats.ks_2samp(ref, cur).statistic, abs=1e-12)
    effective = ref.size * cur.size / (ref.size + cur.size)
    assert d.ks_pvalue == pytest.approx(stats.kstwobign.sf(math.sqrt(effective) * d.ks), abs=1e-12)
    assert d.wasserstein == pytest.approx(stats.wasserstein_distance(ref, cur), abs=1e-12)
    deciles = np.quantile(ref, np.arange(1, 10) / 10, method="inverted_cdf")

    def shares(x):
        return np.diff(np.concatenate([[0], np.searchsorted(np.sort(x), deciles, side="right"), [x.size]])) / x.size

    r_share, c_share = shares(ref), shares(cur)
    rf, cf = np.maximum(r_share, 1e-4), np.maximum(c_share, 1e-4)
    assert d.psi == pytest.approx(np.sum((cf - rf) * np.log(cf / rf)), abs=1e-12)
    assert d.js == pytest.approx(jensenshannon(r_share, c_share, base=2), abs=1e-9)
    if shift == 0.0:
        assert d.psi < 0.1 and d.ks_pvalue > 0.01
    if shift == 1.5:
        assert d.psi > 0.25 and d.ks_pvalue < 1e-6


def test_binned_drift_bounds_hold_and_wasserstein_is_close():
    ref, cur = _scores(300_000, 6, rounding=0), _scores(200_000, 7, shift=0.2, rounding=0)
    a, b = se.ScoreAccumulator(), se.ScoreAccumulator()
    a.update_many(ref)
    b.update_many(cur)
    d = se.drift(a, b)
    exact_ks = stats.ks_2samp(ref, cur).statistic
    assert not d.exact and d.ks_lower <= exact_ks <= d.ks_upper
    assert d.wasserstein == pytest.approx(stats.wasserstein_distance(ref, cur), rel=1e-3)


def test_drift_takes_windows_and_refuses_other_things():
    ref = se.ScoreAccumulator()
    ref.update_many(_scores(1000, 8))
    win = se.Sliding(se.ScoreAccumulator, size=300)
    win.update_many(_scores(900, 9, shift=0.5))
    d = se.drift(ref, win)
    cur = _scores(900, 9, shift=0.5)[-300:]
    assert d.ks == pytest.approx(stats.ks_2samp(_scores(1000, 8), cur).statistic, abs=1e-12)
    labelled = se.BinaryAccumulator()  # through a monitor and a lock, as drift_by_segment takes segments
    labelled.update_many(np.ones(300, dtype=int), cur)
    want = se.drift(ref, labelled).ks
    assert want == pytest.approx(stats.ks_2samp(_scores(1000, 8), cur).statistic, abs=1e-12)
    for held in (se.Monitor(labelled, every=10), se.Locked(labelled), se.Locked(se.Monitor(labelled, every=10))):
        assert se.drift(ref, held).ks == want
    with pytest.raises(TypeError, match="current"):
        se.drift(ref, se.RegressionAccumulator())
    with pytest.raises(ValueError, match="scores"):
        se.drift(ref, se.ScoreAccumulator())
    with pytest.raises(ValueError, match="scores"):
        se.drift(ref, se.BinaryAccumulator())
    binned = se.ScoreAccumulator(bins=se.Bins.uniform(0, 1, 10), exact_up_to=0)
    binned.update_many([0.5])
    with pytest.raises(ValueError, match="bins"):
        se.drift(ref, binned)


def test_drift_by_segment_equals_scipy_for_each_segment():
    """Each segment against one reference, or against the reference's segment of the same name; in a window;
    of binary accumulators' scores; and what it refuses, naming the segment."""
    rng = np.random.default_rng(11)
    ref_scores, ref_groups = _scores(3000, 12), rng.choice(["eu", "us"], 3000)
    cur_groups = rng.choice(["eu", "us"], 2000)
    cur_scores = np.where(cur_groups == "us", _scores(2000, 13, shift=1.5), _scores(2000, 14))
    ref = se.ScoreAccumulator()
    ref.update_many(ref_scores)
    ref_by = se.Segmented(se.ScoreAccumulator)
    ref_by.update_many(ref_groups, ref_scores)
    cur = se.Segmented(se.ScoreAccumulator)
    cur.update_many(cur_groups, cur_scores)
    one, own = se.drift_by_segment(ref, cur), se.drift_by_segment(ref_by, cur)
    assert list(one) == list(own) == cur.segments
    for g in ("eu", "us"):
        mine = cur_scores[cur_groups == g]
        assert one[g].ks == pytest.approx(stats.ks_2samp(ref_scores, mine).statistic, abs=1e-12)
        theirs = ref_scores[ref_groups == g]
        assert own[g].ks == pytest.approx(stats.ks_2samp(theirs, mine).statistic, abs=1e-12)
        assert own[g].wasserstein == pytest.approx(stats.wasserstein_distance(theirs, mine), abs=1e-12)
        assert own[g].n_reference == theirs.size and own[g].n_current == mine.size
    assert one["us"].psi > 0.25 > one["eu"].psi
    window = se.Sliding(lambda: se.Segmented(se.ScoreAccumulator), size=500)
    window.update_many(cur_groups, cur_scores)
    last = cur_groups[-500:]
    got = se.drift_by_segment(ref, window)
    for g in ("eu", "us"):
        assert got[g].ks == pytest.approx(stats.ks_2samp(ref_scores, cur_scores[-500:][last == g]).statistic, abs=1e-12)
    held = {"lock": (se.Locked(cur), cur), "monitor": (se.Monitor(cur, every=10**4), cur),
            "lock of a monitor of a window": (se.Locked(se.Monitor(window, every=10**4)), window)}  # fmt: skip
    for outer, inner in held.values():
        assert {g: d.ks for g, d in se.drift_by_segment(ref, outer).items()} == {
            g: d.ks for g, d in se.drift_by_segment(ref, inner).items()
        }
    labelled = se.Segmented(se.BinaryAccumulator)  # a binary accumulator's scores, of both labels
    labelled.update_many(cur_groups, rng.random(2000) < 0.3, cur_scores)
    assert se.drift_by_segment(ref, labelled)["us"].ks == one["us"].ks
    newer = cur.copy()
    newer.update_many(["asia"], [0.5])
    with pytest.raises(ValueError, match=r"segments \['asia'\] of current have no segment in reference"):
        se.drift_by_segment(ref_by, newer)
    weightless = cur.copy()
    weightless.update_many(["af"], [0.5], w=[0.0])
    with pytest.raises(ValueError, match=r"both sides need scores.*\(segment 'af'\)"):
        se.drift_by_segment(ref, weightless)
    with pytest.raises(TypeError, match="current must be a Segmented accumulator"):
        se.drift_by_segment(ref, ref)
    with pytest.raises(TypeError, match="drift_by_segment compares each segment"):
        se.drift(ref, cur)


def test_protocol_subtract_revert_scale_state_and_pickle():
    s = _scores(2000, 10)
    acc = se.ScoreAccumulator()
    acc.update_many(s)
    part = se.ScoreAccumulator()
    part.update_many(s[:500])
    rest = acc - part
    ref = se.ScoreAccumulator()
    ref.update_many(s[500:])
    assert rest.get().quantile(0.3) == ref.get().quantile(0.3) and rest.n == 1500
    assert rest.get().mean == pytest.approx(ref.get().mean, abs=1e-12)
    assert (rest.get().min, rest.get().max) == (ref.get().min, ref.get().max)
    acc.revert(float(s[0]))
    assert acc.n == 1999
    with pytest.raises(ValueError):
        acc.revert(12.5)
    assert acc.scaled(0.5).get().weight == pytest.approx(999.5)
    assert se.ScoreAccumulator.from_state(acc.to_state()) == acc
    assert se.from_bytes(acc.to_bytes()) == acc
    assert pickle.loads(pickle.dumps(acc)) == acc
    assert (acc + part).n == 2499


@pytest.mark.parametrize("exact_up_to", [None, 0])
def test_taking_out_leaves_scores_of_weight_zero_readable(exact_up_to):
    """Scores of weight 0 are counted (n, the range) but no bin holds them: once the weighted ones are taken out,
    the report reads (it raised IndexError), n counts what is left, and the range still holds it."""
    acc = se.ScoreAccumulator(exact_up_to=exact_up_to)
    acc.update_many([0.1, 0.2, 0.9], w=[0.0, 0.0, 1.0])
    acc.revert(0.9)
    r = acc.get()
    assert r.n == 2 and r.weight == 0.0
    assert (r.min, r.max) == (0.1, 0.9)  # no bin holds what is left: the range stays as it was
    window = se.Sliding(lambda: se.ScoreAccumulator(exact_up_to=exact_up_to), size=5)
    for i in range(8):
        window.update(i / 16, w=0.0)
    r = window.get()
    assert r.n == 5 and (r.min, r.max) == (0.0, 7 / 16)  # every score counted so far: none of weight above 0
    window.update(0.75)  # a weighted score narrows the range again to what the bins hold
    assert window.get().max >= 0.75 and window.get().weight == 1.0


@pytest.mark.parametrize(
    ("call", "exc", "words"),
    [
        (lambda a: a.update(float("nan")), ValueError, ["score", "nan"]),
        (lambda a: a.update(float("inf")), ValueError, ["score", "inf"]),
        (lambda a: a.update("0.5"), TypeError, ["score", "'0.5'"]),
        (lambda a: a.update(0.5, -1.0), ValueError, ["w", "-1.0"]),
        (lambda a: a.update_many([0.1, np.nan]), ValueError, ["scores", "nan", "index 1"]),
        (lambda a: a.update_many([0.1, np.inf]), ValueError, ["scores", "inf", "index 1"]),
        (lambda a: a.update_many([0.1, 0.2], [1.0]), ValueError, ["w", "2", "1"]),
        (lambda a: a.update_many([0.1, 0.2], [1e308, 1e308]), ValueError, ["w", "overflow"]),
        (lambda a: a.get().quantile(1.5), ValueError, ["q", "1.5"]),
    ],
)
def test_bad_input_names_the_argument_and_changes_nothing(call, exc, words):
    acc = se.ScoreAccumulator()
    acc.update_many([0.2, 0.4, 0.4])
    before = acc.to_bytes()
    with pytest.raises(exc) as info:
        call(acc)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert acc.to_bytes() == before


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.77])
def test_estimated_performance_equals_the_weighted_direct_computation(threshold):
    from sklearn import metrics as skm

    rng = np.random.default_rng(11)
    s = np.round(rng.beta(2, 3, 4000), 3)
    w = rng.uniform(0.5, 2.0, s.size)
    acc = se.ScoreAccumulator()
    acc.update_many(s, w)
    est = acc.get().estimated(threshold)
    # each score is a positive of weight s and a negative of weight 1 - s
    y = np.concatenate([np.ones(s.size, bool), np.zeros(s.size, bool)])
    x, sw = np.concatenate([s, s]), np.concatenate([s * w, (1 - s) * w])
    pred = x >= threshold
    assert est.tp == pytest.approx(np.sum(sw[pred & y]), rel=1e-12)
    assert est.precision == pytest.approx(skm.precision_score(y, pred, sample_weight=sw), abs=1e-12)
    assert est.recall == pytest.approx(skm.recall_score(y, pred, sample_weight=sw), abs=1e-12)
    assert est.f1 == pytest.approx(skm.f1_score(y, pred, sample_weight=sw), abs=1e-12)
    assert est.accuracy == pytest.approx(skm.accuracy_score(y, pred, sample_weight=sw), abs=1e-12)
    assert est.auc == pytest.approx(skm.roc_auc_score(y, x, sample_weight=sw), abs=1e-12)


def test_estimate_is_close_for_a_calibrated_model_and_off_for_a_miscalibrated_one():
    rng = np.random.default_rng(12)
    p = rng.beta(2, 5, 200_000)
    y = rng.random(p.size) < p  # labels drawn from the scores: calibrated
    acc = se.ScoreAccumulator()
    acc.update_many(p)
    est = acc.get().estimated(0.5)
    truth = se.BinaryAccumulator()
    truth.update_many(y, p)
    actual = truth.get()
    assert est.precision == pytest.approx(actual.precision, abs=0.01)
    assert est.recall == pytest.approx(actual.recall, abs=0.01)
    assert est.auc == pytest.approx(actual.auc, abs=0.01)
    overconfident = np.clip(p * 1.6, 0, 1)  # the same events, scores that claim too much
    acc2 = se.ScoreAccumulator()
    acc2.update_many(overconfident)
    truth2 = se.BinaryAccumulator()
    truth2.update_many(y, overconfident)
    assert abs(acc2.get().estimated(0.5).precision - truth2.get().precision) > 0.1
    with pytest.raises(ValueError, match="probabilities"):
        bad = se.ScoreAccumulator()
        bad.update_many([0.5, 1.5])
        bad.get().estimated()


def test_monitor_records_drift_against_a_fixed_reference():
    rng = np.random.default_rng(13)
    reference = se.ScoreAccumulator()
    reference.update_many(np.round(rng.beta(2, 5, 5000), 3))
    mon = se.Monitor(se.Sliding(se.ScoreAccumulator, size=1000), every=1000, drift_reference=reference)
    before = np.round(rng.beta(2, 5, 3000), 3)
    after = np.round(rng.beta(4, 3, 3000), 3)  # the scores move up
    for lo in range(0, 6000, 500):
        mon.update_many(np.concatenate([before, after])[lo : lo + 500])
    rows = mon.to_records()
    assert [r["time"] for r in rows] == [1000 * k for k in range(1, 7)]
    assert all(r["drift_psi"] < 0.1 for r in rows[:3]) and all(r["drift_psi"] > 0.25 for r in rows[3:])
    window = np.concatenate([before, after])[5000:6000]
    assert rows[-1]["drift_ks"] == pytest.approx(
        stats.ks_2samp(reference.get().values.repeat(reference.get().counts.astype(int)), window).statistic, abs=1e-12
    )
    with pytest.raises(ValueError, match="scores"):
        se.Monitor(se.ScoreAccumulator(), every=10, drift_reference=se.ScoreAccumulator())
    with pytest.raises(TypeError, match="ScoreAccumulator"):
        se.Monitor(se.ScoreAccumulator(), every=10, drift_reference=se.RegressionAccumulator())


def test_monitor_of_segments_records_each_segments_metrics_and_drift():
    """A monitor of a Segmented accumulator (or a window over one): the metrics asked for, of the whole and of
    each segment ("<segment>/<metric>"; it raised AttributeError at the first record, the batch counted), and
    with a drift_reference the drift of all the scores and of each segment's; a monitored accumulator that holds
    no scores is refused when the monitor is made, not at its first record."""
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(15)
    reference = se.ScoreAccumulator()
    reference.update_many(np.round(rng.beta(2, 5, 4000), 3))
    regions = rng.choice(["eu", "us"], 3000)
    q = np.round(np.where(regions == "us", rng.beta(4, 3, 3000), rng.beta(2, 5, 3000)), 3)
    y = rng.random(q.size) < q
    mon = se.Monitor(
        se.Sliding(lambda: se.Segmented(se.BinaryAccumulator), size=1000), every=1000, metrics=["auc"],
        drift_reference=reference,
    )  # fmt: skip
    for lo in range(0, q.size, 500):
        mon.update_many(regions[lo : lo + 500], y[lo : lo + 500], q[lo : lo + 500])
    rows = mon.to_records()
    assert [r["time"] for r in rows] == [1000, 2000, 3000]
    last, window = rows[-1], slice(2000, 3000)
    assert last["n"] == 1000 and last["auc"] == pytest.approx(roc_auc_score(y[window], q[window]), abs=1e-12)
    every_reference = reference.get().values.repeat(reference.get().counts.astype(int))
    for g in ("eu", "us"):
        mine = regions[window] == g
        assert last[f"{g}/n"] == mine.sum()
        assert last[f"{g}/auc"] == pytest.approx(roc_auc_score(y[window][mine], q[window][mine]), abs=1e-12)
        want = stats.ks_2samp(every_reference, q[window][mine]).statistic
        assert last[f"{g}/drift_ks"] == pytest.approx(want, abs=1e-12)
    whole = se.ScoreAccumulator()
    whole.update_many(q[window])
    assert last["drift_ks"] == se.drift(reference, whole).ks
    assert all(r["us/drift_psi"] > 0.25 > r["eu/drift_psi"] for r in rows)
    plain = se.Monitor(se.Segmented(se.ScoreAccumulator), every=2, drift_reference=reference)
    plain.update_many(["eu", "us", "eu"], [0.1, 0.8, 0.3])
    assert plain.to_records()[-1]["us/drift_ks"] == se.drift(reference, plain.accumulator["us"]).ks
    with pytest.raises(TypeError, match=r"accumulator must hold scores.*RegressionAccumulator"):
        se.Monitor(se.RegressionAccumulator(), every=2, drift_reference=reference)


def test_monitor_of_a_binary_window_records_the_drift_of_its_scores():
    rng = np.random.default_rng(14)
    reference = se.BinaryAccumulator()
    p = np.round(rng.beta(2, 5, 4000), 3)
    reference.update_many(rng.random(p.size) < p, p)
    mon = se.Monitor(se.Sliding(se.BinaryAccumulator, size=1000), every=1000, drift_reference=reference)
    q = np.round(rng.beta(4, 3, 3000), 3)
    y = rng.random(q.size) < q
    for lo in range(0, q.size, 500):
        mon.update_many(y[lo : lo + 500], q[lo : lo + 500])
    rows = mon.to_records()
    assert len(rows) == 3 and all(r["drift_psi"] > 0.25 for r in rows)
    assert rows[-1]["drift_ks"] == pytest.approx(stats.ks_2samp(p, q[-1000:]).statistic, abs=1e-12)
    assert rows[-1]["brier"] == pytest.approx(np.mean((y[-1000:] - q[-1000:]) ** 2), rel=1e-12)
