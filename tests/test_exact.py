"""Exact while it fits: scikit-learn's results to 1e-12, and a switch to bins that leaves no trace."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from conftest import exact_eer
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

import streameval as se
from streameval import _events, histogram

needs_compiled = pytest.mark.skipif(not _events.COMPILED, reason="the compiled paths are not in use")


def _stream(n, seed, ties=True):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.35
    s = 1 / (1 + np.exp(-rng.normal(y * 1.2 - 0.6, 1.0)))
    if ties:
        s = np.round(s, 2)  # many events share a score
    return y, s


def _fed(y, s, w=None, per_event=False, **kwargs):
    acc = se.BinaryAccumulator(**kwargs)
    if per_event:
        for i in range(y.size):
            acc.update(bool(y[i]), float(s[i]), 1.0 if w is None else float(w[i]))
    else:
        acc.update_many(y, s, w)
    return acc


CASES = [(n, seed, weighted, per_event) for n in (30, 100, 1000, 5000) for seed in (0, 1)
         for weighted in (False, True) for per_event in (False, True) if not (per_event and n > 1000)]  # fmt: skip


@pytest.mark.parametrize(("n", "seed", "weighted", "per_event"), CASES)
def test_every_result_equals_scikit_learn_while_exact(n, seed, weighted, per_event):
    y, s = _stream(n, seed)
    w = np.random.default_rng(seed + 7).uniform(0.2, 3.0, n) if weighted else None
    r = _fed(y, s, w, per_event).get()
    assert r.is_exact
    assert r.auc == pytest.approx(skm.roc_auc_score(y, s, sample_weight=w), abs=1e-12)
    assert r.average_precision == pytest.approx(skm.average_precision_score(y, s, sample_weight=w), abs=1e-12)
    for ours, theirs in [
        (r.roc_curve(), skm.roc_curve(y, s, sample_weight=w, drop_intermediate=False)),
        (r.pr_curve(), skm.precision_recall_curve(y, s, sample_weight=w)),
        (r.det_curve(), skm.det_curve(y, s, sample_weight=w)),
    ]:
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    rng = np.random.default_rng(seed)
    for t in [*rng.uniform(0, 1, 8), *rng.choice(s, 4), 0.0, 1.0, 0.5]:
        at = r.at(float(t))
        pred = s >= t
        assert at.threshold == t
        assert at.tp == pytest.approx(np.sum((w if weighted else 1) * (pred & y)), abs=1e-9)
        for name, fn in [("precision", skm.precision_score), ("recall", skm.recall_score), ("f1", skm.f1_score)]:
            assert getattr(at, name) == pytest.approx(
                fn(y, pred, sample_weight=w, zero_division=np.nan), abs=1e-12, nan_ok=True
            ), name
        mcc = skm.matthews_corrcoef(y, pred, sample_weight=w)
        if np.isnan(at.mcc):  # 0/0: scikit-learn says 0, the SPEC says nan
            assert mcc == 0 and (pred.all() or not pred.any() or y.all() or not y.any())
        else:
            assert at.mcc == pytest.approx(mcc, abs=1e-12)
        assert at.fbeta(2.0) == pytest.approx(
            skm.fbeta_score(y, pred, beta=2.0, sample_weight=w, zero_division=np.nan), abs=1e-12, nan_ok=True
        )
    if not weighted:
        assert r.eer == pytest.approx(exact_eer(y, s), abs=1e-12)


def test_without_ties_the_auc_bounds_close_on_the_auc():
    y, s = _stream(2000, 3, ties=False)
    r = _fed(y, s).get()
    assert r.is_exact and r.auc_lower == r.auc_upper == pytest.approx(r.auc, abs=1e-15)
    assert r.average_precision_lower == pytest.approx(r.average_precision_upper, abs=1e-12)
    assert r.auc == pytest.approx(skm.roc_auc_score(y, s), abs=1e-12)


def test_the_river_example_of_thirty_events_equals_scikit_learn():
    from river import datasets, linear_model, preprocessing

    from streameval import river as se_river

    model = preprocessing.StandardScaler() | linear_model.LogisticRegression()
    metric = se_river.ROCAUC()
    ys, ps = [], []
    for x, y in list(datasets.Phishing())[:30]:
        p = model.predict_proba_one(x).get(True, 0.0)
        metric.update(y, model.predict_proba_one(x))
        ys.append(y)
        ps.append(p)
        model.learn_one(x, y)
    assert metric.get() == pytest.approx(skm.roc_auc_score(ys, ps), abs=1e-12)


@pytest.mark.parametrize("n", [30, 1000])
def test_multiclass_one_vs_rest_is_exact_too(n):
    rng = np.random.default_rng(n)
    y = rng.integers(0, 3, n)
    p = np.round(rng.dirichlet([1, 1, 1], n) + np.eye(3)[y] * 0.3, 2)
    acc = se.MulticlassAccumulator(classes=[0, 1, 2])
    acc.update_many(y, p)
    r = acc.get()
    for c in range(3):
        assert r.report(c).is_exact
        assert r.auc_per_class[c] == pytest.approx(skm.roc_auc_score(y == c, p[:, c]), abs=1e-12)
    onehot = np.eye(3)[y]
    assert r.macro_auc == pytest.approx(skm.roc_auc_score(onehot, p, average="macro"), abs=1e-12)
    assert r.micro_auc == pytest.approx(skm.roc_auc_score(onehot, p, average="micro"), abs=1e-12)


def test_a_sliding_window_is_exact_over_its_events():
    y, s = _stream(3000, 4)
    win = se.Sliding(se.BinaryAccumulator, size=500)
    for lo in range(0, 3000, 70):
        win.update_many(y[lo : lo + 70], s[lo : lo + 70])
    r = win.get()
    assert r.is_exact and r.auc == pytest.approx(skm.roc_auc_score(y[-500:], s[-500:]), abs=1e-12)


# -- the switch to bins -----------------------------------------------------------
events = st.lists(
    st.tuples(st.booleans(), st.integers(0, 60).map(lambda k: k / 60), st.sampled_from([1.0, 1.0, 0.5, 2.0])),
    min_size=1,
    max_size=200,
)


def _binned_view(acc):
    r = acc.get()
    return (r.is_exact, r.edges.tolist(), r.neg.tolist(), r.pos.tolist(), r.tp, r.fp)


@settings(max_examples=150, deadline=None)
@given(events, st.integers(1, 40), st.data())
def test_the_switch_leaves_the_state_of_binning_from_the_start(evs, budget, data):
    y = np.array([e[0] for e in evs])
    s = np.array([e[1] for e in evs])
    cuts = sorted(data.draw(st.lists(st.integers(0, len(evs)), max_size=5)))
    exact = se.BinaryAccumulator(threshold=0.41, exact_up_to=budget)
    for lo, hi in zip([0, *cuts], [*cuts, len(evs)], strict=True):
        exact.update_many(y[lo:hi], s[lo:hi])
    binned = se.BinaryAccumulator(threshold=0.41, exact_up_to=0)
    binned.update_many(y, s)
    distinct = np.unique(s).size
    assert exact.get().is_exact == (distinct <= budget)
    if distinct > budget:  # bit for bit the binned state
        assert _binned_view(exact) == _binned_view(binned)
    r = exact.get()
    assert (r.tp, r.fp) == (binned.get().tp, binned.get().fp)


@settings(max_examples=150, deadline=None)
@given(events, st.integers(1, 40), st.data())
def test_any_merge_tree_gives_the_one_stream(evs, budget, data):
    n_shards = data.draw(st.integers(1, 5))
    shard_of = data.draw(st.lists(st.integers(0, n_shards - 1), min_size=len(evs), max_size=len(evs)))
    weighted = data.draw(st.booleans())

    def make():
        return se.BinaryAccumulator(threshold=0.41, exact_up_to=budget)

    shards = [make() for _ in range(n_shards)]
    for (yi, si, wi), k in zip(evs, shard_of, strict=True):
        shards[k].update(yi, si, wi if weighted else 1.0)
    one = make()
    for yi, si, wi in evs:
        one.update(yi, si, wi if weighted else 1.0)
    order = data.draw(st.permutations(range(n_shards)))
    merged = shards[order[0]]
    for k in order[1:]:  # a random left-deep tree in a random order
        merged = merged + shards[k] if data.draw(st.booleans()) else shards[k] + merged
    a, b = merged.get(), one.get()
    assert a.is_exact == b.is_exact
    assert a.edges.tolist() == b.edges.tolist()
    np.testing.assert_allclose(a.neg, b.neg, rtol=1e-12)
    np.testing.assert_allclose(a.pos, b.pos, rtol=1e-12)
    if not weighted:
        assert merged == one


def test_exact_up_to_none_keeps_every_score_and_zero_bins_at_once():
    y, s = _stream(20_000, 5, ties=False)
    always = _fed(y, s, exact_up_to=None)
    assert always.get().is_exact and always.get().edges.size == np.unique(s).size
    assert always.get().auc == pytest.approx(skm.roc_auc_score(y, s), abs=1e-12)
    default = _fed(y, s)
    assert not default.get().is_exact
    assert not _fed(y[:3], s[:3], exact_up_to=0).get().is_exact
    with pytest.raises(ValueError, match="exact_up_to"):
        se.BinaryAccumulator(exact_up_to=-1)
    with pytest.raises(TypeError, match="exact_up_to"):
        se.BinaryAccumulator(exact_up_to=2.5)
    with pytest.raises(ValueError, match="exact_up_to"):
        _fed(y[:5], s[:5]).merge(_fed(y[:5], s[:5], exact_up_to=10))


def test_memory_at_the_default_budget_stays_within_256_kib():
    rng = np.random.default_rng(6)
    s = np.concatenate([np.arange(8192), rng.integers(0, 8192, 40_000)]) / 8192  # exactly 8,192 distinct scores
    y = rng.random(s.size) < 0.3
    acc = _fed(y, s)
    assert acc.get().is_exact and acc.get().edges.size == 8192
    assert acc.nbytes <= 256 * 1024, acc.nbytes


def test_exact_states_round_trip_and_subtract():
    y, s = _stream(800, 7)
    acc = _fed(y, s)
    back = se.from_bytes(acc.to_bytes())
    assert back == acc and back.get().is_exact
    part = _fed(y[:300], s[:300])
    rest = acc - part
    assert rest == _fed(y[300:], s[300:])
    assert rest.get().auc == pytest.approx(skm.roc_auc_score(y[300:], s[300:]), abs=1e-12)


@pytest.mark.parametrize("kind", ["binary", "scores", "multiclass"])
@pytest.mark.parametrize("n", [41, 300])
def test_a_batch_past_the_budget_into_an_empty_table_counts_as_binned_from_the_start(kind, n):
    """The table held this batch alone: the whole batch goes into bins at once, with the state of binning from the
    first event (the threshold's bin split too); a table that held events before moves them into bins."""
    rng = np.random.default_rng(n)
    y, s = rng.random(n) < 0.4, np.round(rng.random(n), 3)
    s[::7] = 0.41  # at the threshold, inside its bin

    def fed(budget, batches):
        if kind == "binary":
            acc = se.BinaryAccumulator(threshold=0.41, exact_up_to=budget)
            for part in batches:
                acc.update_many(y[part], s[part])
            r = acc.get()
            return r.is_exact, r.keys.tolist(), r.neg.tolist(), r.pos.tolist(), (r.tp, r.fp, r.tn, r.fn)
        if kind == "scores":
            acc = se.ScoreAccumulator(exact_up_to=budget)
            for part in batches:
                acc.update_many(s[part])
            r = acc.get()
            return r.is_exact, r.keys.tolist(), r.counts.tolist()
        acc = se.MulticlassAccumulator(classes=["a", "b"], exact_up_to=budget)
        for part in batches:
            acc.update_many(np.where(y[part], "a", "b"), np.column_stack([s[part], 1 - s[part]]))
        r = acc.get().per_class[0]
        return r.is_exact, r.keys.tolist(), r.neg.tolist(), r.pos.tolist()

    whole, halves = [slice(None)], [slice(0, n // 2), slice(n // 2, None)]
    binned = fed(0, whole)
    assert not binned[0]
    for batches in (whole, halves):  # past the budget in the first batch, or in the second (table not empty)
        assert fed(20, batches) == binned


def test_a_batch_refused_after_leaving_an_empty_table_leaves_the_accumulator_as_it_was():
    acc = se.BinaryAccumulator(exact_up_to=10)
    s = np.linspace(0.0, 1.0, 50)
    s[-1] = np.nan
    with pytest.raises(ValueError, match="nan"):
        acc.update_many(np.zeros(50, dtype=bool), s)
    assert acc.n == 0 and acc.get().is_exact
    acc.update_many([True, False], [0.3, 0.6])
    assert acc.get().is_exact and acc.get().edges.tolist() == [0.3, 0.6]


@pytest.mark.parametrize(("distinct", "repeats"), [(3_000, 1), (201, 40)])
def test_leaving_the_exact_regime_event_by_event_counts_as_binned_from_the_start(distinct, repeats):
    """Events one at a time, read every 100 (the table filled by earlier flushes): a table of few events a
    score (3,000 distinct scores) is moved into bins as events, one of many (201 scores, 40 times each: the
    201st comes after about 1,200 events) as weighted counts; both give the state of binning from the start."""
    rng = np.random.default_rng(repeats)
    s = np.repeat(np.round(rng.random(distinct), 6), repeats)
    rng.shuffle(s)
    y = rng.random(s.size) < 0.35
    exact = se.BinaryAccumulator(threshold=0.41, exact_up_to=200)
    for i, (a, b) in enumerate(zip(y.tolist(), s.tolist(), strict=True)):
        exact.update(a, b)
        if i % 100 == 99:
            assert exact.n == i + 1  # a read counts the events kept so far
    binned = se.BinaryAccumulator(threshold=0.41, exact_up_to=0)
    binned.update_many(y, s)
    assert _binned_view(exact) == _binned_view(binned)
    assert exact.get().calibration == binned.get().calibration


@pytest.mark.parametrize("labels_as", ["array", "list"])
@pytest.mark.parametrize("n", [41, 300, 20_000])
def test_a_batch_proven_past_the_budget_counts_as_the_table_would_have(labels_as, n, monkeypatch):
    """A batch whose distinct scores are proven past the budget at once goes into bins whole; without the proof
    the table counts it until it overflows, then does the same: both give binning from the start."""
    from streameval import histogram

    rng = np.random.default_rng(n)
    y, s = rng.random(n) < 0.4, np.round(rng.random(n), 3 if n < 1000 else 9)
    s[::7] = 0.41
    s[1::9] = -0.0  # one score with 0.0
    s[2::9] = 0.0
    labels = y if labels_as == "array" else y.tolist()  # the checking kernel, or checked labels first

    left_at = []  # where each switch to bins started counting the batch in bins
    leave = histogram.ScoreHistogram._leave_for_bins

    def leaving(self, was_empty, done):
        left_at.append(done)
        return leave(self, was_empty, done)

    monkeypatch.setattr(histogram.ScoreHistogram, "_leave_for_bins", leaving)

    def fed(budget):
        acc = se.BinaryAccumulator(threshold=0.41, exact_up_to=budget)
        acc.update_many(labels, s)
        return _binned_view(acc), acc.get().calibration, acc.get().is_exact

    proven = fed(20)
    assert left_at == ([0] if _events.COMPILED else [])  # proven at once; numpy's sorted chunks have no proof
    monkeypatch.setattr(histogram, "_PROVE_DISTINCT_UP_TO", -1)  # no proof: the table finds out
    assert fed(20) == proven == fed(0)
    seen: set[float] = set()  # the table stops at the event of the 21st distinct score (0.0 and -0.0 are one)
    stops = []
    for i, v in enumerate(s.tolist()):
        if v not in seen and len(seen) == 20:
            stops.append(i)
            break
        seen.add(v)
    assert left_at[1:] == (stops if _events.COMPILED else [])
    assert not proven[2]


@pytest.mark.parametrize("kind", ["binary", "scores"])
def test_a_weighted_batch_is_proven_past_the_budget_by_its_scores_of_weight_other_than_0(kind, monkeypatch):
    """A weighted batch into an empty table: proven past the budget by its scores whose weight is not 0 (those
    of weight 0 never enter the table), it goes into bins whole, as binned from the start; with no more than the
    budget of such scores it stays exact, whatever its scores of weight 0, and reads scikit-learn's AUC."""
    left_at = []
    leave = histogram.ScoreHistogram._leave_for_bins

    def leaving(self, was_empty, done):
        left_at.append(done)
        return leave(self, was_empty, done)

    monkeypatch.setattr(histogram.ScoreHistogram, "_leave_for_bins", leaving)
    rng = np.random.default_rng(7)
    n, budget = 3_000, 100
    y, s = rng.random(n) < 0.4, rng.random(n)
    w = rng.random(n) + 0.5
    w[budget:] = 0.0  # 100 scores of weight other than 0, at the batch's head: the others never count
    few = w.copy()
    many = rng.random(n) + 0.5
    many[::3] = 0.0  # 2,000 scores of weight other than 0

    def fed(weights, limit):
        if kind == "binary":
            acc = se.BinaryAccumulator(threshold=0.41, exact_up_to=limit)
            acc.update_many(y, s, weights)
            r = acc.get()
            return r, (r.is_exact, r.edges.tolist(), r.neg.tolist(), r.pos.tolist(), r.tp, r.fp)
        acc = se.ScoreAccumulator(exact_up_to=limit)
        acc.update_many(s, weights)
        r = acc.get()
        return r, (r.is_exact, r.edges.tolist(), r.counts.tolist())

    stays, _ = fed(few, budget)
    assert stays.is_exact and left_at == []
    if kind == "binary":
        assert stays.auc == pytest.approx(skm.roc_auc_score(y, s, sample_weight=few), abs=1e-12)
    proven = fed(many, budget)[1]
    assert left_at == ([0] if _events.COMPILED else [])  # proven at once (numpy's sorted chunks have no proof)
    assert not proven[0]
    binned = fed(many, 0)[1]
    assert proven[:2] == binned[:2]
    for mine, theirs in zip(proven[2:], binned[2:], strict=True):  # counts and the 2x2: weights summed in bins
        np.testing.assert_allclose(np.asarray(mine, dtype=float), np.asarray(theirs, dtype=float), rtol=1e-12)


@needs_compiled
@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 300), st.integers(0, 3000), st.booleans())
def test_more_distinct_than_proves_only_what_is_true(seed, limit, n, zeros):
    """True only when the scores hold more than ``limit`` distinct values (-0.0 and 0.0 being one), and
    True for continuous scores of at least twice the budget and 64 more."""
    from streameval._compiled import SPEEDUPS

    rng = np.random.default_rng(seed)
    pool = rng.random(int(rng.integers(1, 2 * limit + 3)))
    if zeros:
        pool[: pool.size // 2] = np.where(rng.random(pool.size // 2) < 0.5, -0.0, 0.0)
    x = rng.choice(pool, n)
    distinct = np.unique(x).size  # np.unique takes -0.0 and 0.0 as one
    if SPEEDUPS.more_distinct_than(x, limit):
        assert distinct > limit
    if n >= 2 * limit + 64:
        assert SPEEDUPS.more_distinct_than(rng.random(n), limit)


# -- reports read between batches -----------------------------------------------
def _counts_of(items, weighted):
    from streameval.histogram import ExactCounts

    out = ExactCounts()
    values = sorted(items)
    out.values = np.array(values, dtype=np.float64)
    dtype = np.float64 if weighted else np.int64
    out.neg = np.array([items[v][0] for v in values], dtype=dtype)
    out.pos = np.array([items[v][1] for v in values], dtype=dtype)
    return out


score_counts = st.dictionaries(
    st.integers(-30, 30).map(lambda k: k / 8), st.tuples(st.integers(0, 5), st.integers(0, 5))
)  # score: (negatives, positives)


@settings(max_examples=300, deadline=None)
@given(score_counts, score_counts, st.sampled_from([1, -1]), st.booleans())
def test_combined_counts_add_and_take_out_score_by_score(mine, theirs, sign, weighted):
    mine = {v: c for v, c in mine.items() if c != (0, 0)}
    theirs = {v: c for v, c in theirs.items() if c != (0, 0)}
    if weighted:  # weights with rounding: an emptied score is gone within 1e-9 of what it held
        mine = {v: (a * 0.1, b * 0.3) for v, (a, b) in mine.items()}
        theirs = {v: (a * 0.1, b * 0.3) for v, (a, b) in theirs.items()}
    expected, negative = {}, False
    for v in sorted(set(mine) | set(theirs)):
        before = mine.get(v, (0, 0))
        added = theirs.get(v, (0, 0))
        pair = []
        for held, more in zip(before, added, strict=True):
            count = held + sign * more
            if weighted and sign < 0 and abs(count) <= 1e-9 * abs(held):
                count = 0.0
            negative |= count < 0
            pair.append(count)
        if pair != [0, 0]:
            expected[v] = tuple(pair)
    if negative:
        with pytest.raises(ValueError, match="cannot take out"):
            _counts_of(mine, weighted).combined(_counts_of(theirs, weighted), sign)
        return
    got = _counts_of(mine, weighted).combined(_counts_of(theirs, weighted), sign)
    assert got.values.tolist() == sorted(expected)
    assert got.neg.tolist() == [expected[v][0] for v in sorted(expected)]
    assert got.pos.tolist() == [expected[v][1] for v in sorted(expected)]
    assert got.neg.dtype == (np.float64 if weighted else np.int64)


@settings(max_examples=300, deadline=None)
@given(score_counts, st.lists(st.tuples(st.integers(-30, 30), st.booleans()), max_size=60), st.data())
def test_a_batch_merged_into_sorted_scores_adds_its_counts(mine, batch, data):
    """Events merged into sorted counts (the compiled pass, or of + combined) add to their scores' counts:
    -0.0 counts as 0.0, a score may come many times, labels may be one for all or of any integer width."""
    mine = {v: c for v, c in mine.items() if c != (0, 0)}
    x = np.array([k / 8 if k else data.draw(st.sampled_from([0.0, -0.0])) for k, _ in batch], dtype=np.float64)
    labels = np.array([b for _, b in batch], dtype=np.bool_)
    one_label = data.draw(st.booleans())
    if one_label:
        labels = bool(data.draw(st.booleans()))
    else:
        labels = labels.astype(data.draw(st.sampled_from([np.bool_, np.uint8, np.int16, np.int32, np.int64])))
    expected = {v: list(c) for v, c in mine.items()}
    for v, label in zip(x.tolist(), np.broadcast_to(labels, x.shape).tolist(), strict=True):
        expected.setdefault(v + 0.0, [0, 0])[bool(label)] += 1
    for compiled in (True, False):
        with mock.patch.object(histogram, "SPEEDUPS", histogram.SPEEDUPS if compiled else None):
            got = _counts_of(mine, False).with_events(x, labels)
        assert got.values.tolist() == sorted(expected)
        assert not np.signbit(got.values[got.values == 0]).any()  # 0.0, never -0.0
        assert got.neg.tolist() == [expected[v][0] for v in sorted(expected)]
        assert got.pos.tolist() == [expected[v][1] for v in sorted(expected)]
        assert got.neg.dtype == got.pos.dtype == np.int64


@pytest.mark.skipif(histogram.SPEEDUPS is None, reason="the compiled paths are not in use")
def test_merge_exact_refuses_what_is_not_sorted_checked_events():
    kernel = histogram.SPEEDUPS.merge_exact
    values, counts = np.array([0.1, 0.5]), np.array([1, 2], dtype=np.int64)
    x, labels, ascending = np.array([0.5, 0.2]), np.array([True, False]), np.array([1, 0])

    def merge(values=values, x=x, labels=labels, order=ascending, width=1, size=4):
        outs = np.empty(size), np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64)
        m = kernel(values, counts[: values.size], counts[: values.size], x, labels, width, order, *outs)
        return [a[:m].tolist() for a in outs]

    assert merge() == [[0.1, 0.2, 0.5], [1, 1, 2], [1, 0, 3]]
    bad = [
        {"order": np.array([0, 1])},  # not ascending
        {"order": np.array([1, 2])},  # past the batch
        {"values": np.array([0.5, 0.1])},  # stored scores not ascending
        {"values": np.array([0.5, 0.5])},  # nor distinct
        {"x": np.array([np.nan, 0.2])},
        {"labels": np.array([1, 2], dtype=np.int64), "width": 8},
        {"size": 3},
        {"width": 3},
    ]
    for args in bad:
        with pytest.raises(ValueError, match="merge_exact"):
            merge(**args)


@settings(max_examples=150, deadline=None)
@given(events, st.integers(1, 300), st.data())
def test_reports_read_between_batches_change_no_report(evs, budget, data):
    """Reading a report between batches (which may count the next small batches into sorted scores instead of
    a table) gives every report of one batch of the same events, bit for bit without weights."""
    weighted = data.draw(st.booleans())
    y = np.array([e[0] for e in evs])
    s = np.array([e[1] for e in evs])
    w = np.array([e[2] for e in evs]) if weighted else None
    cuts = sorted(data.draw(st.lists(st.integers(0, len(evs)), max_size=8)))
    acc = se.BinaryAccumulator(threshold=0.41, exact_up_to=budget)
    for lo, hi in zip([0, *cuts], [*cuts, len(evs)], strict=True):
        if data.draw(st.booleans()):
            acc.update_many(y[lo:hi], s[lo:hi], None if w is None else w[lo:hi])
        else:
            for i in range(lo, hi):
                acc.update(bool(y[i]), float(s[i]), 1.0 if w is None else float(w[i]))
        if not data.draw(st.booleans()):
            continue
        a = acc.get()
        one = se.BinaryAccumulator(threshold=0.41, exact_up_to=budget)
        one.update_many(y[:hi], s[:hi], None if w is None else w[:hi])
        b = one.get()
        assert (a.is_exact, a.edges.tolist()) == (b.is_exact, b.edges.tolist())
        if weighted:
            np.testing.assert_allclose(a.neg, b.neg, rtol=1e-12)
            np.testing.assert_allclose(a.pos, b.pos, rtol=1e-12)
        else:
            assert (a.neg.tolist(), a.pos.tolist(), a.tp, a.fp, a.tn, a.fn) == (
                b.neg.tolist(), b.pos.tolist(), b.tp, b.fp, b.tn, b.fn
            )  # fmt: skip
            assert acc == one


@needs_compiled
def test_a_report_every_thousand_events_does_not_sort_every_score_again(monkeypatch):
    """The first batch after a report, at most half as large as the scores, goes into the sorted scores: the
    next report sorts nothing. A second batch before a report goes into a table, which the report sorts."""
    from streameval.histogram import HashedCounts

    rng = np.random.default_rng(8)
    acc = se.BinaryAccumulator()
    acc.update_many(rng.random(4000) < 0.3, rng.random(4000))  # 4,000 distinct scores, in the table
    sorts = []
    sorted_of_table = HashedCounts.sorted
    monkeypatch.setattr(HashedCounts, "sorted", lambda table: sorts.append(table.used) or sorted_of_table(table))
    acc.get()
    assert sorts == [4000]  # the first report sorts the table
    for _ in range(4):
        for yi, si in zip((rng.random(1000) < 0.3).tolist(), rng.random(1000).tolist(), strict=True):
            acc.update(yi, si)
        r = acc.get()
    assert sorts == [4000]
    assert r.is_exact and r.edges.size == 8000
    acc.update_many([1], [0.5])  # the first batch after a report: merged
    acc.update_many([0], [0.25])  # the second: into a table, sorted at the next report
    assert acc.get().n == 8002
    assert sorts == [4000, 8000 + (0.5 not in r.edges) + (0.25 not in r.edges)]


def _sorted_by_argsort(table):
    """The table's entries ordered by numpy's argsort, empty scores left out: what ``sorted`` must give."""
    out = table.entries()
    order = np.argsort(out.values, kind="stable")
    out.values, out.neg, out.pos = out.values[order], out.neg[order], out.pos[order]
    return out.without_empty()


@needs_compiled
@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(
        st.one_of(st.floats(allow_nan=False, width=64), st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 1.0, 0.5])),
        min_size=0,
        max_size=300,
    ),
    seed=st.integers(0, 2**32 - 1),
    spread=st.sampled_from(["any", "unit", "close"]),
    taken_out=st.floats(0.0, 1.0),
)
def test_a_tables_scores_radix_sorted_equal_numpys_argsort(scores, seed, spread, taken_out):
    """The compiled radix sort of a table's scores (a report's read) gives argsort's order, counts and the
    scores left out whose events were all taken out: for any floats, -0.0 and 0.0 as one, infinities,
    subnormals, scores that share every high digit (the passes that move nothing) and 3,000 of them."""
    from streameval.histogram import HashedCounts

    rng = np.random.default_rng(seed)
    x = np.array(scores, dtype=np.float64)
    if spread == "unit":
        x = np.concatenate([x, rng.random(3000)])
    elif spread == "close":  # scores 1 + k * 2^-52: only the lowest digits differ
        x = np.concatenate([x, 1.0 + rng.integers(0, 2000, 500) * 2.0**-52])
    table = HashedCounts(None)
    labels = (rng.random(x.size) < 0.5).astype(np.uint8)
    table.count(x, labels, 0)
    gone = rng.random(x.size) < taken_out
    table.count(x[gone], labels[gone], 0, sign=-1)
    got, want = table.sorted(), _sorted_by_argsort(table)
    for a, b in ((got.values, want.values), (got.neg, want.neg), (got.pos, want.pos)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert (np.diff(got.values) > 0).all() and not np.signbit(got.values[got.values == 0]).any()


@needs_compiled
def test_sort_exact_refuses_inconsistent_arguments():
    from streameval._compiled import SPEEDUPS
    from streameval.histogram import HashedCounts

    table = HashedCounts(None)
    table.count(np.array([0.3, 0.1, 0.2]), np.array([1, 0, 1], dtype=np.uint8), 0)
    outs = np.empty(3), np.empty(3, np.int64), np.empty(3, np.int64)
    assert SPEEDUPS.sort_exact(table.keys, table.counts, *outs) == 3
    assert outs[0].tolist() == [0.1, 0.2, 0.3] and outs[1].tolist() == [1, 0, 0] and outs[2].tolist() == [0, 1, 1]
    short = np.empty(2), np.empty(2, np.int64), np.empty(2, np.int64)
    with pytest.raises(ValueError, match="sort_exact: the out_ arrays have no room"):
        SPEEDUPS.sort_exact(table.keys, table.counts, *short)
    for args in (
        (table.keys, table.counts[:-1], *outs),
        (table.keys, table.counts, np.empty(3), np.empty(2, np.int64), np.empty(3, np.int64)),
        (table.keys[:-1], table.counts, *outs),
    ):
        with pytest.raises(ValueError, match="sort_exact: inconsistent arguments"):
            SPEEDUPS.sort_exact(*args)


@needs_compiled
@settings(max_examples=100, deadline=None)
@given(
    scores=st.lists(st.floats(allow_nan=False, width=64), min_size=0, max_size=200),
    seed=st.integers(0, 2**32 - 1),
    more=st.integers(0, 3000),
)
def test_a_table_grows_by_rehashing_into_the_table_its_entries_fill(scores, seed, more):
    """A table grown by the compiled rehash is, slot for slot, the table that filling its entries in slot order
    makes, and counts on as before."""
    from streameval.histogram import HashedCounts

    rng = np.random.default_rng(seed)
    x = np.concatenate([np.array(scores, dtype=np.float64), rng.random(more)])
    labels = (rng.random(x.size) < 0.5).astype(np.uint8)
    table = HashedCounts(None)
    half, out = x.size // 2, min(3, x.size // 2)  # the first half counted, then its first events taken out
    table.count(x[:half], labels[:half], 0)
    table.count(x[:out], labels[:out], 0, sign=-1)
    filled = HashedCounts(None, capacity=2 * table.keys.size)
    entries = table.entries()
    held = (entries.neg != 0) | (entries.pos != 0)
    assert held.all()  # a score taken out of the table leaves it
    filled._fill(entries)
    table._rehash(2 * table.keys.size)
    assert table.used == filled.used
    np.testing.assert_array_equal(table.keys, filled.keys)
    np.testing.assert_array_equal(table.counts, filled.counts)
    table.count(x, labels, 0)  # counting on, growing again where it must
    roomy = HashedCounts(None, 2 * x.size + 64)  # the same events in a table that never grows
    for part, sign in ((slice(0, half), 1), (slice(0, out), -1), (slice(0, x.size), 1)):
        roomy.count(x[part], labels[part], 0, sign=sign)
    got, want = table.sorted(), roomy.sorted()
    for a, b in ((got.values, want.values), (got.neg, want.neg), (got.pos, want.pos)):
        np.testing.assert_array_equal(a, b)


@needs_compiled
def test_rehash_exact_refuses_a_table_without_room():
    from streameval._compiled import SPEEDUPS
    from streameval.histogram import HashedCounts

    table = HashedCounts(None)
    table.count(np.arange(40.0), np.zeros(40, dtype=np.uint8), 0)
    small = HashedCounts(None)
    small.keys, small.counts = small.keys[:40], small.counts[:40]
    with pytest.raises(ValueError, match="rehash_exact: the new table has no room"):
        SPEEDUPS.rehash_exact(table.keys, table.counts, small.keys, small.counts)
    with pytest.raises(ValueError, match="rehash_exact: inconsistent arguments"):
        SPEEDUPS.rehash_exact(table.keys, table.counts[:-1], small.keys, small.counts)


@needs_compiled
@settings(max_examples=150, deadline=None)
@given(
    limit=st.integers(1, 40),
    steps=st.lists(st.tuples(st.booleans(), st.lists(st.integers(0, 60), min_size=0, max_size=30)), max_size=25),
    data=st.data(),
)
def test_a_table_takes_events_out_in_place_and_keeps_its_budget_for_scores_with_events(limit, steps, data):
    """Events counted into and taken out of a table (a few at a time, or batches that leave slots for one
    compaction) give, after every step, the counts of a model; a take-out of an event never counted changes no
    count; a score with no events left leaves the table, so a batch stops at a new score only when the scores
    with events fill the budget, as the sorted twin's budget counts them."""
    from streameval.histogram import HashedCounts

    table = HashedCounts(limit)
    model: dict[tuple[float, int], int] = {}
    for adding, codes in steps:
        x = np.array([c / 8 for c in codes], dtype=np.float64)
        labels = np.array([c % 2 for c in codes], dtype=np.uint8)
        if adding:
            done, refused = table.count(x, labels, 0)
            assert not refused
            live = {v for (v, _), c in model.items() if c}
            for v, lab in zip(x[:done].tolist(), labels[:done].tolist(), strict=True):
                model[v, lab] = model.get((v, lab), 0) + 1
                live.add(v)
            if done < x.size:  # stopped at a new score: the scores with events fill the budget
                assert len(live) == limit and x[done] not in live
        else:
            wanted: dict[tuple[float, int], int] = {}
            for v, lab in zip(x.tolist(), labels.tolist(), strict=True):
                wanted[v, lab] = wanted.get((v, lab), 0) + 1
            counted = all(model.get(key, 0) >= k for key, k in wanted.items())
            assert table.take_out(x, labels) == counted
            if counted:
                for key, k in wanted.items():
                    model[key] -= k
        got = table.sorted()
        scores = sorted({v for (v, _), c in model.items() if c})
        assert got.values.tolist() == scores
        assert got.neg.tolist() == [model.get((v, 0), 0) for v in scores]
        assert got.pos.tolist() == [model.get((v, 1), 0) for v in scores]
        assert table.used == len(scores) <= table.room < table.keys.size
        taken = table.keys != histogram._EMPTY  # no slot holds a score without events
        assert ((table.counts[taken, 0] | table.counts[taken, 1]) != 0).all()
    if data.draw(st.booleans()):  # a grown table holds the same
        before = table.sorted()
        table.limit = None
        assert table.grow()
        assert table.sorted().values.tolist() == before.values.tolist()


@needs_compiled
def test_count_exact_takes_out_only_what_the_table_holds():
    """A take-out stops (refused) at a score the table does not hold or a count at 0, taking no slot; a score
    left with no events leaves the table; counted back in, the events give the counts as before."""
    from streameval._compiled import SPEEDUPS
    from streameval.histogram import HashedCounts

    table = HashedCounts(None)
    table.count(np.array([0.5, 0.5, 0.25]), np.array([1, 0, 1], dtype=np.uint8), 0)
    before = table.sorted()
    for x, labels, stops_at, used_then in (
        ([0.5, 0.75], [1, 1], 1, 2),  # a score the table does not hold
        ([0.25, 0.25], [1, 1], 1, 1),  # a count already 0 (0.25 left the table at the first)
        ([0.25, 0.5], [1, 0], None, 1),
    ):
        done, refused, used = SPEEDUPS.count_exact(
            np.array(x), np.array(labels, dtype=np.uint8), 1, table.keys, table.counts, table.used, table.room, 0,
            len(x), -1,
        )  # fmt: skip
        assert used == used_then
        table.used = used
        if stops_at is None:
            assert (done, refused) == (len(x), False)
        else:
            assert (done, refused) == (stops_at, True)
            table.count(np.array(x[:done]), np.array(labels[:done], dtype=np.uint8), 0)
            assert table.used == 2
            for a, b in zip((table.sorted().values, table.sorted().neg, table.sorted().pos),
                            (before.values, before.neg, before.pos), strict=True):  # fmt: skip
                np.testing.assert_array_equal(a, b)
    assert table.sorted().values.tolist() == [0.5] and table.sorted().pos.tolist() == [1]
    assert (table.keys != histogram._EMPTY).sum() == 1


@needs_compiled
@settings(max_examples=100, deadline=None)
@given(
    keys=st.lists(st.integers(0, 2000), min_size=1, max_size=120, unique=True),
    gone=st.data(),
    capacity=st.integers(0, 3),
)
def test_compact_exact_leaves_the_table_a_fresh_fill_of_its_scores_makes(keys, gone, capacity):
    """After a batch left slots of scores with no events, compact_exact in place gives, slot for slot, the table
    that filling the scores with events afresh (in the order of their slots) makes."""
    from streameval._compiled import SPEEDUPS
    from streameval.histogram import HashedCounts

    x = np.array(keys, dtype=np.float64) / 64
    labels = (np.array(keys) % 2).astype(np.uint8)
    table = HashedCounts(None, capacity=[len(keys) + 1, len(keys) + 7, 2 * len(keys), 4 * len(keys) + 64][capacity])
    assert table.count(x, labels, 0) == (x.size, False)
    out = np.array(gone.draw(st.lists(st.booleans(), min_size=x.size, max_size=x.size)))
    assert table.count(x[out], labels[out], 0, sign=-1, keep_slots=True) == (int(out.sum()), False)
    order = [i for i in range(table.keys.size) if table.keys[i] != histogram._EMPTY]  # slot order
    fresh = HashedCounts(None, capacity=table.keys.size)
    entries = histogram.ExactCounts()
    held = [i for i in order if table.counts[i].any()]
    entries.values = table.keys[held].view(np.float64)
    entries.neg, entries.pos = table.counts[held, 0].copy(), table.counts[held, 1].copy()
    fresh._fill(entries)
    table.used = SPEEDUPS.compact_exact(table.keys, table.counts)
    assert table.used == len(held) == fresh.used
    # the same scores in the same slots where no two compete for one; every score found by a probe either way
    assert sorted(table.keys[table.keys != histogram._EMPTY].tolist()) == sorted(
        fresh.keys[fresh.keys != histogram._EMPTY].tolist()
    )
    np.testing.assert_array_equal(table.sorted().values, fresh.sorted().values)
    np.testing.assert_array_equal(table.sorted().pos, fresh.sorted().pos)
    # every score is where a probe finds it: taking each out once more leaves the table empty
    rest = ~out
    assert table.take_out(x[rest], labels[rest])
    assert table.used == 0 and (table.keys == histogram._EMPTY).all()


@needs_compiled
def test_compact_exact_refuses_a_full_table():
    from streameval._compiled import SPEEDUPS

    keys = np.arange(4, dtype=np.uint64)
    with pytest.raises(ValueError, match="compact_exact: the table has no empty slot"):
        SPEEDUPS.compact_exact(keys, np.ones((4, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="compact_exact: inconsistent arguments"):
        SPEEDUPS.compact_exact(keys, np.ones((3, 2), dtype=np.int64))


def _home(score: float, capacity: int) -> int:
    """The slot where a probe for ``score`` starts in a table of ``capacity`` slots (the compiled hash)."""
    h = (int(np.float64(score).view(np.uint64)) * 0x9E3779B97F4A7C15) % 2**64
    h ^= h >> 29
    return (h * capacity) >> 64


@needs_compiled
@pytest.mark.parametrize("keep_slots", [False, True])
@pytest.mark.parametrize(
    ("homes", "slots"),
    [([6, 6, 7], [6, 7, 0]), ([7, 0], [7, 0]), ([7, 7, 0], [7, 0, 1])],  # runs across the last slot
)
def test_a_run_across_the_tables_end_is_still_found_after_a_score_leaves_it(homes, slots, keep_slots):
    """Scores whose run wraps past the last slot: after the first leaves (removed at once, or its slot kept and
    the table compacted), the others are still found where their probes start."""
    from streameval._compiled import SPEEDUPS
    from streameval.histogram import HashedCounts

    capacity = 8
    candidates = [k / 64 for k in range(1, 4000)]
    x = []
    for home in homes:
        x.append(next(s for s in candidates if _home(s, capacity) == home and s not in x))
    x = np.array(x)
    ones = np.ones(x.size, dtype=np.uint8)
    table = HashedCounts(None, capacity=capacity)
    assert table.count(x, ones, 0) == (x.size, False)
    assert table.keys[slots].view(np.float64).tolist() == x.tolist()
    assert table.count(x[:1], ones[:1], 0, sign=-1, keep_slots=keep_slots) == (1, False)
    if keep_slots:
        table.used = SPEEDUPS.compact_exact(table.keys, table.counts)
    assert table.used == x.size - 1
    assert table.take_out(x[1:], ones[1:])
    assert table.used == 0 and (table.keys == histogram._EMPTY).all()


@needs_compiled
def test_a_large_table_counts_and_takes_out_as_a_small_one():
    """A table of more than 16,384 slots (whose count fetches the slots of events ahead) counts 60,000 events of
    30,000 scores, and takes a third of them out again, as the scores' counts say."""
    from streameval.histogram import HashedCounts

    rng = np.random.default_rng(8)
    x = np.round(rng.random(60_000), 5)
    labels = (rng.random(x.size) < 0.3).astype(np.uint8)
    table = HashedCounts(None)
    assert table.count(x, labels, 0) == (x.size, False)
    assert table.keys.size > 16_384
    out = rng.random(x.size) < 1 / 3
    assert table.take_out(x[out], labels[out])
    keep = ~out
    values = np.unique(x[keep])
    got = table.sorted()
    np.testing.assert_array_equal(got.values, values)
    at = np.searchsorted(values, x[keep])
    np.testing.assert_array_equal(got.pos, np.bincount(at, weights=labels[keep], minlength=values.size))
    np.testing.assert_array_equal(got.neg, np.bincount(at, weights=1 - labels[keep], minlength=values.size))
    assert table.used == values.size


def _table(draw_values, draw_counts):
    """An ExactCounts of sorted distinct scores with whole counts (none both zero)."""
    values = np.unique(np.asarray(draw_values, dtype=np.float64))
    values = values[~np.isnan(values)] + 0.0
    values = np.unique(values)
    counts = np.asarray(draw_counts[: 2 * values.size], dtype=np.int64)
    counts = np.resize(counts, 2 * values.size) if counts.size else np.ones(2 * values.size, dtype=np.int64)
    table = histogram.ExactCounts()
    table.values, table.neg, table.pos = values, counts[0::2].copy(), counts[1::2].copy()
    table.pos[(table.neg == 0) & (table.pos == 0)] = 1
    return table


@pytest.mark.skipif(histogram.SPEEDUPS is None, reason="the compiled paths are not in use")
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(allow_nan=False, width=64), max_size=60),
    st.lists(st.integers(0, 5), max_size=120),
    st.lists(st.floats(allow_nan=False, width=64), max_size=60),
    st.lists(st.integers(0, 5), max_size=120),
    st.sampled_from([1, -1]),
    st.booleans(),
)
def test_combined_whole_counts_compiled_equal_the_numpy_merge(a_values, a_counts, b_values, b_counts, sign, share):
    """Two exact tables merged (added, or the second taken out): the compiled pass gives the numpy path's scores
    and counts, and refuses exactly when a count would go negative."""
    a, b = _table(a_values, a_counts), _table(b_values, b_counts)
    if share and a.values.size:  # the second table holds some of the first's scores, with smaller counts
        b = _table(np.concatenate([b.values, a.values[::2]]), b_counts)
        if sign < 0:
            at = np.searchsorted(a.values, b.values)
            inside = (at < a.values.size) & (a.values[np.minimum(at, a.values.size - 1)] == b.values)
            b.neg[inside] = np.minimum(b.neg[inside], a.neg[at[inside]])
            b.pos[inside] = np.minimum(b.pos[inside], a.pos[at[inside]])
            b = b.without_empty()
    outcomes = []
    for compiled in (True, False):
        with mock.patch.object(histogram, "exact_kernel", lambda compiled=compiled: compiled):
            try:
                got = a.combined(b, sign)
            except ValueError as exc:
                outcomes.append(str(exc))
                continue
        outcomes.append((got.values.tolist(), got.neg.tolist(), got.pos.tolist(), got.neg.dtype, got.pos.dtype))
    assert outcomes[0] == outcomes[1]


@pytest.mark.skipif(histogram.SPEEDUPS is None, reason="the compiled paths are not in use")
def test_combine_exact_refuses_tables_that_are_not_sorted_and_distinct():
    kernel = histogram.SPEEDUPS.combine_exact
    one, first, second = np.array([1, 1], dtype=np.int64), np.array([0.1, 0.5]), np.array([0.2, 0.3])

    def combine(a=first, b=second, sign=1, size=4):
        outs = np.empty(size), np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64)
        m = kernel(a, one, one, b, one, one, sign, *outs)
        return m, [x[:m].tolist() for x in outs]

    assert combine() == (4, [[0.1, 0.2, 0.3, 0.5], [1, 1, 1, 1], [1, 1, 1, 1]])
    assert combine(b=np.array([0.1, 0.5]), sign=-1) == (0, [[], [], []])
    assert combine(b=np.array([0.1, 0.7]), sign=-1)[0] == -1  # 0.7 was never added
    for args in ({"a": np.array([0.5, 0.1])}, {"b": np.array([0.3, 0.3])}, {"b": np.array([np.nan, 0.3])},
                 {"sign": 2}, {"size": 3}):  # fmt: skip
        with pytest.raises(ValueError, match="combine_exact"):
            combine(**args)
