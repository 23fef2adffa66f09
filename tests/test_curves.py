"""Curve metrics against brute-force references written independently here."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import exact_accumulator
from sklearn.metrics import roc_curve

import streameval as se


def _points(y, s, w=None):
    """(threshold, TP, FP) at +inf and at every distinct score, from high to low."""
    w = np.ones(len(y)) if w is None else np.asarray(w, float)
    y = np.asarray(y, bool)
    ts = np.concatenate([[np.inf], np.unique(s)[::-1]])
    tp = np.array([w[(s >= t) & y].sum() for t in ts])
    fp = np.array([w[(s >= t) & ~y].sum() for t in ts])
    return ts, tp, fp


def _random(seed, n=300, ties=False):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.35
    s = rng.normal(y * 1.0, 1.0)
    if ties:
        s = np.round(s, 1)
    return y, s


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ties", [False, True])
def test_pr_auc_is_the_integral_of_the_davis_goadrich_interpolation(seed, ties):
    y, s = _random(seed, ties=ties)
    r = exact_accumulator(y, s).get()
    _, tp, fp = _points(y, s)
    p_total = tp[-1]
    area = 0.0
    for i in range(len(tp) - 1):  # fine numeric quadrature of each interpolated segment
        d_tp, d_fp = tp[i + 1] - tp[i], fp[i + 1] - fp[i]
        if d_tp == 0:
            continue
        x = np.linspace(0.0, d_tp, 20001)
        x[0] = 1e-12 * d_tp  # precision at x = 0 is its limit when nothing was predicted yet
        prec = (tp[i] + x) / (tp[i] + fp[i] + x * (1 + d_fp / d_tp))
        area += np.trapezoid(prec, x) / p_total
    assert r.pr_auc == pytest.approx(area, abs=1e-8)
    # never the optimistic straight-line area in PR space
    assert r.pr_auc <= 1.0


def test_pr_auc_hand_example():
    # one positive then one negative then one positive: TP/FP path (0,0)->(1,0)->(1,1)->(2,1)
    acc = se.BinaryAccumulator(bins=se.Bins.from_edges([1, 2, 3]))
    acc.update_many([1, 0, 1], [3, 2, 1])
    # first segment: precision 1 over recall 0..0.5; last: precision (1+x)/(2+x) over x in [0,1]
    expected = 0.5 * 1.0 + 0.5 * (1 - np.log(3 / 2))
    assert acc.get().pr_auc == pytest.approx(expected, abs=1e-14)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_break_even_point_interpolates_to_precision_equal_recall(seed):
    y, s = _random(seed, ties=True)
    r = exact_accumulator(y, s).get()
    _, tp, fp = _points(y, s)
    p = tp[-1]
    pred = tp + fp
    k = np.searchsorted(pred, p)
    if pred[k] == p:
        expected = tp[k] / p
    else:
        frac = (p - pred[k - 1]) / (pred[k] - pred[k - 1])
        expected = (tp[k - 1] + frac * (tp[k] - tp[k - 1])) / p
    assert r.bep == pytest.approx(expected, abs=1e-14)
    # precision equals recall there, by construction of the cut
    assert 0.0 <= r.bep <= 1.0


def _hull_eer_bruteforce(far, frr):
    # EER of the convex hull = max over all lines through two points below which every point lies... use
    # the characterisation: min over hull of max(far, frr) along the boundary, found by dense sampling
    pts = np.column_stack([far, frr])
    best = np.inf
    for a in range(len(pts)):
        for b in range(a + 1, len(pts)):
            pa, pb = pts[a], pts[b]
            lam = np.linspace(0, 1, 401)
            seg = pa[None, :] + lam[:, None] * (pb - pa)[None, :]
            # keep the segment only if every point lies on or above its line (supporting line of the hull)
            d = pb - pa
            cross = d[0] * (pts[:, 1] - pa[1]) - d[1] * (pts[:, 0] - pa[0])
            if d[0] >= 0 and np.all(cross >= -1e-12):
                best = min(best, np.min(np.max(seg, axis=1)))
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rocch_eer_matches_bruteforce_hull(seed):
    y, s = _random(seed, n=40)
    r = exact_accumulator(y, s).get()
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    expected = _hull_eer_bruteforce(fpr, 1 - tpr)
    assert r.eer_rocch == pytest.approx(expected, abs=2e-3)  # sampled on a 1/400 grid
    assert r.eer_rocch <= r.eer + 1e-12  # the hull is never worse than the curve


def test_eer_hand_example_and_threshold():
    # FAR/FRR points: t=inf (0,1); t=0.8 (0,0.5); t=0.4 (0.5,0.5) -> crossing exactly at a point
    acc = se.BinaryAccumulator(bins=se.Bins.from_edges([0.1, 0.35, 0.4, 0.8]))
    acc.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
    r = acc.get()
    assert r.eer == 0.5 and r.eer_threshold == 0.4
    assert r.eer_nearest == 0.5
    # a real crossing between points: FRR 1 -> 0 and FAR 0 -> 1 over one step gives 0.5 midway
    acc2 = se.BinaryAccumulator(bins=se.Bins.from_edges([0.2, 0.6]))
    acc2.update_many([1, 0], [0.6, 0.6])
    r2 = acc2.get()
    assert r2.eer == 0.5 and r2.eer_threshold == 0.6


@pytest.mark.parametrize("metric", ["f1", "youden", "accuracy", "balanced_accuracy", "mcc"])
def test_best_threshold_is_the_bruteforce_argmax(metric):
    y, s = _random(5, ties=True)
    r = exact_accumulator(y, s).get()
    values = {}
    for t in np.unique(s):
        c = r.at(t)
        values[t] = getattr(c, "youden" if metric == "youden" else metric)
    values = {t: v for t, v in values.items() if not np.isnan(v)}  # undefined MCC is skipped
    best = max(values.values())
    top = max(t for t, v in values.items() if v == pytest.approx(best, abs=1e-12))
    assert r.best_threshold(metric) == top


def test_operating_point_queries_against_bruteforce():
    y, s = _random(9, ties=True)
    r = exact_accumulator(y, s).get()
    _, tp, fp = _points(y, s)
    p, n = tp[-1], fp[-1]
    for a in (0.0, 0.01, 0.1, 0.5, 1.0):
        assert r.tpr_at_fpr(a) == pytest.approx(max(tp[fp / n <= a] / p), abs=1e-15)
    for rr in (0.1, 0.5, 0.9, 1.0):
        ok = (tp[1:] / p) >= rr
        assert r.precision_at_recall(rr) == pytest.approx(max(tp[1:][ok] / (tp[1:][ok] + fp[1:][ok])), abs=1e-15)


def test_at_moves_a_threshold_inside_a_bin_up_to_the_bins_upper_edge():
    acc = se.BinaryAccumulator(bins=se.Bins.uniform(0, 1, 4), exact_up_to=0)
    acc.update_many([1, 0, 1, 0], [0.1, 0.3, 0.6, 0.9])
    r = acc.get()
    c = r.at(0.3)  # inside [0.25, 0.5): the bin counts negative; threshold used 0.5
    assert c.threshold == 0.5 and (c.tp, c.fp) == (1, 1)
    c2 = r.at(0.25)  # a bin edge: exact
    assert c2.threshold == 0.25 and (c2.tp, c2.fp) == (1, 2)
    assert r.at(2.0).threshold == np.inf and r.at(2.0).tp == 0


def test_get_does_not_change_the_counts():
    acc = se.BinaryAccumulator()
    for i in range(5000):
        acc.update(i % 2, (i % 97) / 97)
    first = acc.get()
    second = acc.get()
    assert first.auc == second.auc and first.tp == second.tp and first.n == 5000
    acc.update(1, 0.99)
    assert acc.get().n == 5001


def test_digamma_terms_equal_scipys_digamma():
    """psi(z) = ln(w) + tail - shift, from arguments below the shift (moved up) to 1e12."""
    from scipy.special import digamma

    from streameval import curves

    z = np.concatenate([np.linspace(0.01, 30.0, 500), np.geomspace(30.0, 1e12, 200), [1.0, 11.999, 12.0, 12.001]])
    w, shift, tail = curves._digamma_terms(z)
    assert np.all(w >= 12.0)
    np.testing.assert_allclose(np.log(w) + tail - shift, digamma(z), rtol=1e-13, atol=1e-13)


def _blocks(p, n):
    """Every way to give a bin's p positives and n negatives scores: sequences of tied blocks (positives,
    negatives), from the highest score down; blocks of one event are the strict orders."""
    if p == n == 0:
        yield []
        return
    for a in range(p + 1):
        for b in range(n + 1):
            if a + b:
                for rest in _blocks(p - a, n - b):
                    yield [(a, b), *rest]


def _tied_ap(blocks):
    """scikit-learn's AP of a ranking of tied blocks: each block's positives get the precision at its end."""
    hits = seen = total = 0.0
    positives = sum(a for a, _ in blocks)
    for a, b in blocks:
        hits, seen = hits + a, seen + a + b
        total += a * hits / seen
    return total / positives


@pytest.mark.parametrize("seed", range(8))
def test_average_precision_bounds_are_the_mean_over_orders_and_the_least_and_most_over_any_scores(seed):
    """Tiny histograms: AP's mean over every order of the events inside each bin, and its minimum and maximum
    over every way to score them (orders and ties, as scikit-learn counts a tie) enumerated."""
    import itertools

    from sklearn.metrics import average_precision_score

    from streameval import curves

    rng = np.random.default_rng(seed)
    k = 3
    pos, neg = rng.integers(0, 3, k), rng.integers(0, 3, k)
    pos[rng.integers(k)] += 1  # at least one positive
    per_bin = [list(_blocks(int(p), int(n))) for p, n in zip(pos[::-1], neg[::-1], strict=True)]  # highest first
    every = [_tied_ap([b for part in combo for b in part]) for combo in itertools.product(*per_bin)]
    strict = [  # strict orders, each arrangement of labels once: as likely as any other
        _tied_ap([b for part in combo for b in part])
        for combo in itertools.product(*[[o for o in options if all(a + b == 1 for a, b in o)] for options in per_bin])
    ]
    b = curves.average_precision_bounds(np.arange(k, dtype=float), neg, pos)
    assert b.expected == pytest.approx(np.mean(strict), abs=1e-12)
    assert b.lower == pytest.approx(min(every), abs=1e-12)
    assert b.upper == pytest.approx(max(every), abs=1e-12)
    # one of those ways scored for scikit-learn, with ties: the same AP as the blocks give
    combo = [options[rng.integers(len(options))] for options in per_bin]
    y, s, score = [], [], 1.0
    for a, b_ in (blk for part in combo for blk in part):
        y += [1] * a + [0] * b_
        s += [score] * (a + b_)
        score -= 0.01
    assert average_precision_score(y, s) == pytest.approx(_tied_ap([blk for part in combo for blk in part]), abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_average_precision_bounds_of_integer_counts_equal_those_of_the_same_counts_as_floats(seed):
    """Integer counts are not scaled (their products fit a float) and give the bounds of the same counts as
    floats, which are, to the bit; whole float counts of 2**600 times as many events, scaled, keep a finite
    upper bound, the same."""
    from streameval import curves

    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 400))
    scale = int(rng.choice([3, 1000, 2**40]))
    neg = rng.integers(0, scale, k, dtype=np.int64) * (rng.random(k) < 0.7)
    pos = rng.integers(0, scale, k, dtype=np.int64) * (rng.random(k) < 0.7)
    pos[rng.integers(k)] += 1
    edges = np.sort(rng.random(k))
    counted = curves.average_precision_bounds(edges, neg, pos)
    as_floats = curves.average_precision_bounds(edges, neg.astype(np.float64), pos.astype(np.float64))
    assert counted == as_floats
    assert 0 < counted.lower <= counted.expected <= counted.upper <= 1
    huge = curves.average_precision_bounds(edges, neg * 2.0**600, pos * 2.0**600)
    assert huge.upper == counted.upper
