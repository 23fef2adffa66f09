"""Segmented accumulators: one accumulator per segment, merged across shards, compared as Fairlearn does."""

from __future__ import annotations

import math
import pickle
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import mean_absolute_error, roc_auc_score

import streameval as se

fairlearn_metrics = pytest.importorskip("fairlearn.metrics")


def _stream(seed, n, groups=("a", "b", "c")):
    rng = np.random.default_rng(seed)
    g = np.array(groups)[rng.integers(0, len(groups), n)]
    shift = {k: 0.5 + 0.5 * i for i, k in enumerate(groups)}
    y = rng.random(n) < 0.4
    s = 1 / (1 + np.exp(-rng.normal(y * np.vectorize(shift.get)(g) * 2 - 1, 1.0)))
    return g, y, s


@pytest.mark.parametrize("weighted", [False, True])
def test_fairness_measures_equal_fairlearns(weighted):
    g, y, s = _stream(1, 5_000)
    w = np.random.default_rng(2).uniform(0.2, 3.0, g.size) if weighted else None
    seg = se.Segmented(lambda: se.BinaryAccumulator(threshold=0.4))
    seg.update_many(g, y, s, w=w)
    r = seg.get()
    pred = s >= 0.4
    kw = {"sensitive_features": g, "sample_weight": w}
    for name in (
        "demographic_parity_difference", "demographic_parity_ratio", "equalized_odds_difference",
        "equalized_odds_ratio", "equal_opportunity_difference", "equal_opportunity_ratio",
    ):  # fmt: skip
        want = getattr(fairlearn_metrics, name)(y, pred, **kw)
        assert getattr(r, name) == pytest.approx(want, abs=1e-12, rel=0), name
    frame = fairlearn_metrics.MetricFrame(
        metrics={
            "selection_rate": fairlearn_metrics.selection_rate,
            "recall": fairlearn_metrics.true_positive_rate,
            "fpr": fairlearn_metrics.false_positive_rate,
        },
        y_true=y,
        y_pred=pred,
        sensitive_features=g,
        sample_params={k: {"sample_weight": w} for k in ("selection_rate", "recall", "fpr")} if weighted else None,
    )
    for metric in ("selection_rate", "recall", "fpr"):
        by = r.by_group(metric)
        for group, value in frame.by_group[metric].items():
            assert by[group] == pytest.approx(value, abs=1e-12, rel=0)
        assert r.difference(metric) == pytest.approx(frame.difference()[metric], abs=1e-12, rel=0)
        assert r.ratio(metric) == pytest.approx(frame.ratio()[metric], abs=1e-12, rel=0)
        assert r.group_min(metric) == pytest.approx(frame.group_min()[metric], abs=1e-12, rel=0)
        assert r.group_max(metric) == pytest.approx(frame.group_max()[metric], abs=1e-12, rel=0)


def test_a_segment_without_positives_has_no_tpr_where_fairlearn_takes_zero():
    """A rate that is 0/0 in a segment is nan and left out of the fairness measures; Fairlearn (scikit-learn's
    zero_division) takes it as 0. Without that segment, the two agree."""
    g, y, s = _stream(7, 3_000)
    y = y & (g != "c")  # segment "c" has negatives only
    seg = se.Segmented(lambda: se.BinaryAccumulator(threshold=0.4))
    seg.update_many(g, y, s)
    r = seg.get()
    pred = s >= 0.4
    assert math.isnan(r["c"].recall) and not math.isnan(r["c"].fpr)
    rest = g != "c"
    for name in ("equal_opportunity_difference", "equal_opportunity_ratio"):
        want = getattr(fairlearn_metrics, name)(y[rest], pred[rest], sensitive_features=g[rest])
        assert getattr(r, name) == pytest.approx(want, abs=1e-12, rel=0), name
    # Fairlearn with "c" counted as a TPR of 0: the largest TPR as the difference, and a ratio of 0
    largest = max(r["a"].recall, r["b"].recall)
    assert fairlearn_metrics.equal_opportunity_difference(y, pred, sensitive_features=g) == pytest.approx(largest)
    assert fairlearn_metrics.equal_opportunity_ratio(y, pred, sensitive_features=g) == 0.0
    frame = fairlearn_metrics.MetricFrame(
        metrics=fairlearn_metrics.false_positive_rate, y_true=y, y_pred=pred, sensitive_features=g
    )
    assert r.difference("fpr") == pytest.approx(frame.difference(), abs=1e-12, rel=0)  # defined everywhere


def test_per_segment_reports_equal_scikit_learn_on_each_group_and_overall_the_whole():
    g, y, s = _stream(3, 6_000)
    seg = se.Segmented(se.BinaryAccumulator)
    for lo in range(0, g.size, 1000):
        seg.update_many(g[lo : lo + 1000], y[lo : lo + 1000], s[lo : lo + 1000])
    r = seg.get()
    for group in ("a", "b", "c"):
        keep = g == group
        assert r[group].auc == pytest.approx(roc_auc_score(y[keep], s[keep]), abs=1e-12)
        assert r[group].n == keep.sum()
    whole = se.BinaryAccumulator()
    whole.update_many(y, s)
    assert r.overall.auc == pytest.approx(whole.get().auc, abs=1e-15) and seg.n == g.size
    assert r.worst("auc") == min(("a", "b", "c"), key=lambda k: r[k].auc)
    macro = se.macro(seg)
    assert macro.auc.mean == pytest.approx(np.mean([r[k].auc for k in "abc"]), rel=1e-12) and len(macro.auc.values) == 3


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), cut=st.integers(0, 300), groups=st.integers(1, 6))
def test_shards_with_different_segments_merged_equal_one_stream(seed, cut, groups):
    g, y, s = _stream(seed, 300, tuple(f"g{i}" for i in range(groups)))
    s = np.round(s, 2)
    order = np.argsort(g[:cut], kind="stable")  # the first shard sees its segments in another order
    a, b, whole = (se.Segmented(se.BinaryAccumulator) for _ in range(3))
    a.update_many(g[:cut][order], y[:cut][order], s[:cut][order])
    b.update_many(g[cut:], y[cut:], s[cut:])
    whole.update_many(g, y, s)
    assert sorted(map(str, (a + b).segments)) == sorted(map(str, whole.segments))
    merged = a + b
    assert all(merged[k] == whole[k] for k in whole.segments)
    one = se.Segmented(se.BinaryAccumulator)
    for gi, yi, si in zip(g.tolist(), y.tolist(), s.tolist(), strict=True):
        one.update(gi, yi, si)
    assert one == whole
    assert (whole - b) == a if cut else not (whole - b).segments


@pytest.mark.parametrize(
    "segments",
    [
        lambda g: g.tolist(),
        lambda g: np.where(g == "a", 1, np.where(g == "b", 2, 3)),
        lambda g: [(x, x == "a") for x in g.tolist()],
        lambda g: __import__("pandas").Series(g),
        lambda g: __import__("pandas").Series(g, dtype="category"),
        lambda g: __import__("pyarrow").array(g.tolist()),
        lambda g: __import__("pyarrow").chunked_array([g[:100].tolist(), g[100:].tolist()]),
    ],
    ids=["list", "ints", "tuples", "pandas", "categorical", "pyarrow", "pyarrow-chunked"],
)
def test_segment_values_of_every_form(segments):
    g, y, s = _stream(4, 500)
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(segments(g), y, s)
    ref = se.Segmented(se.BinaryAccumulator)
    keys = list(segments(g)) if not hasattr(segments(g), "to_pylist") else segments(g).to_pylist()
    ref_keys = [k.item() if isinstance(k, np.generic) else k for k in keys]
    for k, yi, si in zip(ref_keys, y.tolist(), s.tolist(), strict=True):
        ref.update(k, yi, si)
    assert seg == ref and len(seg) == 3


@pytest.mark.parametrize(
    ("make", "args"),
    [
        (se.MulticlassAccumulator, lambda rng, n: (np.array(["x", "y"])[rng.integers(0, 2, n)], rng.random((n, 2)))),
        (se.RegressionAccumulator, lambda rng, n: (rng.normal(size=n), rng.normal(size=n))),
        (se.ScoreAccumulator, lambda rng, n: (rng.random(n),)),
    ],
    ids=["multiclass", "regression", "scores"],
)
def test_every_kind_per_segment(make, args):
    rng = np.random.default_rng(5)
    g = rng.integers(0, 3, 600)
    cols = args(rng, 600)
    seg = se.Segmented(make if make is not se.MulticlassAccumulator else lambda: se.MulticlassAccumulator(["x", "y"]))
    seg.update_many(g, *cols)
    for k in range(3):
        ref = seg[k].copy()
        fresh = type(ref)(["x", "y"]) if make is se.MulticlassAccumulator else make()
        fresh.update_many(*(c[g == k] for c in cols))
        assert fresh == ref
    if make is se.RegressionAccumulator:
        assert seg.get().by_group("mae")[0] == pytest.approx(
            mean_absolute_error(cols[0][g == 0], cols[1][g == 0]), rel=1e-12
        )
    assert se.from_bytes(seg.to_bytes()) == seg


def test_multiclass_rows_of_mappings_per_segment_and_as_arrays():
    """Scores as one mapping class -> score per event (river's predict_proba_one), given as a list, an object
    array or a pandas Series, per segment too: the same counts as the same scores as a 2-D array."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(6)
    n = 400
    g = rng.integers(0, 3, n)
    y = np.array(["x", "y", "z"])[rng.integers(0, 3, n)]
    matrix = rng.random((n, 3))
    rows = [dict(zip("xyz", r, strict=True)) for r in matrix.tolist()]
    as_objects = np.empty(n, dtype=object)
    as_objects[:] = rows
    expected = se.MulticlassAccumulator(["x", "y", "z"])
    expected.update_many(y, matrix)
    for scores in (rows, as_objects, pd.Series(rows)):
        acc = se.MulticlassAccumulator(["x", "y", "z"])
        acc.update_many(y, scores)
        assert acc == expected
    seg = se.Segmented(lambda: se.MulticlassAccumulator(["x", "y", "z"]))
    seg.update_many(g, y, rows)
    for k in range(3):
        alone = se.MulticlassAccumulator(["x", "y", "z"])
        alone.update_many(y[g == k], matrix[g == k])
        assert seg[k] == alone


@pytest.mark.parametrize("row", [list, tuple])
def test_multiclass_score_sequences_of_different_lengths_per_segment(row):
    """Score sequences that grow as classes are learnt (lists or tuples of different lengths in one batch) go to
    each segment as the list of its rows, as the accumulator takes them alone; a window over such segments files
    its events so too."""
    events = [
        ("x", "a", [0.9]), ("y", "b", [1.0]), ("x", "b", [0.4, 0.6]), ("y", "a", [0.3, 0.7]),
        ("x", "c", [0.1, 0.2, 0.7]), ("x", "a", [0.5, 0.3, 0.2]), ("y", "c", [0.2, 0.2, 0.6]), ("y", "b", [0.6]),
    ]  # fmt: skip
    segments, labels, scores = ([e[i] for e in events] for i in range(3))
    seg = se.Segmented(se.MulticlassAccumulator)
    seg.update_many(segments, labels, [row(s) for s in scores])
    one_by_one = se.Segmented(se.MulticlassAccumulator)
    for g, y, s in events:
        one_by_one.update(g, y, row(s))
    assert seg == one_by_one
    for key in ("x", "y"):
        alone = se.MulticlassAccumulator()
        alone.update_many([y for g, y, _ in events if g == key], [row(s) for g, _, s in events if g == key])
        assert seg[key] == alone
    assert seg["x"].classes == ("a", "b", "c") and seg["y"].get().confusion_matrix.sum() == 4
    window = se.Sliding(lambda: se.Segmented(se.MulticlassAccumulator), size=100)
    for g, y, s in events:
        window.update(g, y, row(s))
    assert window.accumulator() == one_by_one


def _snapshot(seg):
    return seg.to_bytes()


@pytest.mark.parametrize(
    ("call", "exc", "words"),
    [
        (lambda s: s.update_many(["a", "b"], [1, 0, 1], [0.1, 0.2, 0.3]), ValueError, ["argument 2", "2", "3"]),
        (lambda s: s.update_many(["a", ["b"]], [1, 0], [0.1, 0.2]), TypeError, ["segment", "['b']", "index 1"]),
        (lambda s: s.update_many([1.0, np.nan], [1, 0], [0.1, 0.2]), ValueError, ["NaN", "index 1"]),
        (lambda s: s.update_many(["a", "c", "d"], [1, 0, 1], [0.1, 0.2, 0.3]), ValueError, ["max_segments=3", "4"]),
        (lambda s: s.update_many(["a", "b", "new"], [1, 0, 2], [0.1, 0.2, 0.3]), ValueError, ["y", "2", "index 2"]),
        (lambda s: s.update_many(["b", "a", "a"], [1, 0, 1], [0.1, np.nan, 0.3]), ValueError, ["scores", "index 1"]),
        (lambda s: s.update_many(["n1", "a", "n1"], [1, 0, 5], [0.1, 0.2, 0.3]), ValueError, ["y", "5", "index 2"]),
        (
            lambda s: s.update_many(["n", "b", "n", "b"], [1, 7, 5, 0], [0.1, 0.2, 0.3, 0.4]),
            ValueError,
            ["got 7 at index 1", "(segment 'b')"],
        ),  # the batch's first bad event, in the segment counted second
        (lambda s: s.update_many(["a", None], [1, 0], [0.1, 0.3]), ValueError, ["missing", "index 1"]),
        (lambda s: s.update_many(["a", "b"], [1, 0], [0.1, 0.2], w=[1.0, -1.0]), ValueError, ["w", "-1.0"]),
        (lambda s: s.update({"a"}, 1, 0.5), TypeError, ["segment", "hashable"]),
        (lambda s: s.update("new", 3, 0.5), ValueError, ["y", "3"]),
        (lambda s: s.update_many("ab", [1, 0], [0.1, 0.2]), TypeError, ["segments", "'ab'"]),
        (lambda s: s.revert("never", 1, 0.5), ValueError, ["never", "never counted"]),
    ],
)
def test_bad_input_names_the_argument_and_changes_no_segment(call, exc, words):
    seg = se.Segmented(se.BinaryAccumulator, max_segments=3)
    seg.update_many(["a", "b", "a"], [1, 0, 0], [0.9, 0.2, 0.4])
    before = _snapshot(seg)
    with pytest.raises(exc) as info:
        call(seg)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert _snapshot(seg) == before


def test_a_failure_past_the_first_check_takes_counted_segments_back_out(monkeypatch):
    """Each segment's events are counted apart first (a batch past the small ones counted in place); only adding
    them in (a total weight past the largest float) can fail after that, and then the segments already added to
    are taken back."""
    from streameval import _events

    monkeypatch.setattr(_events, "SINGLE_EVENTS_UP_TO", -1)
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(["a", "b"], [1, 0], [0.9, 0.2])
    before = seg.to_bytes()
    real = se.BinaryAccumulator._merge_in
    calls = []
    segments = {id(seg["a"]), id(seg["b"])}  # merges into them (not the check that new segment c joins them)

    def flaky(self, other, sign):
        if id(self) not in segments:
            return real(self, other, sign)
        calls.append(sign)
        if sign == 1 and calls.count(1) == 2:  # segment a added, then adding to segment b fails
            raise ValueError("w: the total weight overflows")
        return real(self, other, sign)

    monkeypatch.setattr(se.BinaryAccumulator, "_merge_in", flaky)
    with pytest.raises(ValueError, match="overflows"):
        seg.update_many(["a", "b", "c"], [1, 0, 1], [0.4, 0.5, 0.6])
    monkeypatch.setattr(se.BinaryAccumulator, "_merge_in", real)
    assert calls == [1, 1, -1]  # a added, b refused, a's events taken back out
    assert seg.to_bytes() == before and seg.segments == ["a", "b"]


@pytest.mark.parametrize("weighted_first", [True, False])
def test_a_small_batch_counted_in_place_that_a_segment_refuses_takes_the_others_back_out(weighted_first):
    """A small batch is checked whole by an empty accumulator, then counted into each segment in place: a segment
    that refuses its part past that check (its total weight would pass the largest float) leaves every segment
    as it was, those counted before it taken back out; the same batch counted apart reads the same."""
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(["a", "b"], [1, 0], [0.9, 0.2], [1.5e308, 1.0])
    before = seg.to_bytes()
    order = ["b", "a"] if weighted_first is False else ["a", "b"]
    weights = [1.0, 1e308] if order == ["b", "a"] else [1e308, 1.0]
    with pytest.raises(ValueError, match="w"):
        seg.update_many([*order, "c"], [1, 0, 1], [0.4, 0.5, 0.6], [*weights, 2.0])
    assert seg.to_bytes() == before and seg.segments == ["a", "b"]
    seg.update_many(["b", "c"], [1, 0], [0.4, 0.5])
    assert seg["b"].get().n == 2 and seg["c"].get().n == 1 and seg.segments == ["a", "b", "c"]


def test_per_event_updates_follow_every_change_of_the_segments():
    """Events of segments named by a str or an int go straight to their accumulator; a batch, a revert that
    empties a segment, a merge, a refusal, a copy or a pickle never leaves them going to an old accumulator."""
    g, y, s = _stream(8, 3_000, groups=("a", "b", "c"))
    names = [{"a": "a", "b": 2, "c": ("c", 1)}[v] for v in g.tolist()]
    one_by_one = se.Segmented(se.BinaryAccumulator)
    for name, yi, si in zip(names, y.tolist(), s.tolist(), strict=True):
        one_by_one.update(name, yi, si)
    codes = np.empty(len(names), dtype=object)
    codes[:] = names
    batch = se.Segmented(se.BinaryAccumulator)
    batch.update_many(codes, y, s)
    assert one_by_one == batch and one_by_one.segments == batch.segments
    assert set(batch.segments) == {"a", 2, ("c", 1)}

    seg = se.Segmented(se.BinaryAccumulator)
    seg.update("a", 1, 0.5)
    seg.revert("a", 1, 0.5)  # the segment goes: its next event starts it again
    seg.update("a", 0, 0.2)
    assert seg.segments == ["a"] and seg["a"].n == 1
    other = se.Segmented(se.BinaryAccumulator)
    other.update_many(["a", "a"], [1, 1], [0.9, 0.8])
    seg += other  # a new accumulator for "a"
    seg.update("a", 1, 0.7)
    assert seg["a"].n == 4 and seg["a"].get().tp == 3
    before = seg.to_bytes()
    with pytest.raises(ValueError, match="got 7"):
        seg.update("a", 7, 0.7)  # refused on the routed path: nothing changes
    assert seg.to_bytes() == before
    with pytest.raises(ValueError, match="got 2"):
        seg.update_many(["a", "b"], [1, 2], [0.1, 0.2])
    seg.update(2, 1, 0.4)
    seg -= seg.copy()  # every segment goes
    seg.update("a", 1, 0.1)
    assert seg.segments == ["a"] and seg.n == 1
    twin = seg.copy()
    twin.update("a", 1, 0.2)
    again = pickle.loads(pickle.dumps(seg))
    again.update("a", 0, 0.3)
    assert (seg.n, twin.n, again.n) == (1, 2, 2)
    with pytest.raises(TypeError, match=r"Segmented.update.*'segment'"):
        seg.update()


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
@pytest.mark.parametrize("way", ["compiled", "numpy", "pandas"])
def test_integer_segments_come_in_order_of_first_appearance_every_way(monkeypatch, dtype, way):
    """Small integer codes (compiled), numpy's unique and pandas' factorize give the same segments, in order of
    first appearance, and the same counts; so do codes spread too wide for the compiled table."""
    from streameval import segmented

    if way != "compiled":
        monkeypatch.setattr(segmented, "SPEEDUPS", None)
    if way == "numpy":
        monkeypatch.setattr(segmented, "_factorized", lambda values: None)
    rng = np.random.default_rng(2)
    n = 5_000
    codes = np.array([5, -3, 5, 9, -3, 0], dtype=dtype)[rng.integers(0, 6, n)]
    codes[:3] = [9, -3, 0]
    y, s = rng.random(n) < 0.4, np.round(rng.random(n), 3)
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(codes, y, s)
    assert seg.segments == [9, -3, 0, 5] and all(type(k) is int for k in seg.segments)
    for key in seg.segments:
        alone = se.BinaryAccumulator()
        alone.update_many(y[codes == key], s[codes == key])
        assert seg[key] == alone
    if dtype == np.int64:
        wide = np.where(codes == 5, 2**40, codes)  # spread past the compiled table
        seg = se.Segmented(se.BinaryAccumulator)
        seg.update_many(wide, y, s)
        assert seg.segments == [9, -3, 0, 2**40]


def test_a_batch_reaching_many_segments_counted_before_is_checked_whole_and_counted_in_place():
    rng = np.random.default_rng(9)
    names = rng.integers(0, 100, 20_000)
    y, s = rng.random(names.size) < 0.3, rng.random(names.size)
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(names[:10_000], y[:10_000], s[:10_000])
    before = seg.to_bytes()
    bad = y[10_000:].astype(np.int64)
    bad[7_000] = 3
    with pytest.raises(ValueError, match="got 3 at index 7000"):
        seg.update_many(names[10_000:], bad, s[10_000:])
    assert seg.to_bytes() == before
    seg.update_many(names[10_000:], y[10_000:], s[10_000:])
    for key in (0, 42, 99):
        alone = se.BinaryAccumulator()
        alone.update_many(y[names == key], s[names == key])
        assert seg[key] == alone


@pytest.mark.parametrize("way", ["pandas", "numpy", "collision"])
@pytest.mark.parametrize("dtype", ["U", "S"])
def test_numpy_string_segments_equal_the_same_strings_as_a_list(monkeypatch, way, dtype):
    """Fixed-width numpy strings are coded through a hash of their bytes, checked against the strings: the same
    segments, in order of first appearance, as the strings given one by one; a shared hash falls back."""
    import sys

    from streameval import segmented

    names = ["eu", "", "us-west-2", "eu", "日本", "us", "us-west-2 "]
    if dtype == "S":
        names = [n.encode() for n in names]
    rng = np.random.default_rng(4)
    picked = [names[i] for i in rng.integers(0, len(names), 3_000)]
    picked[: len(names)] = names
    y, sc = rng.random(len(picked)) < 0.4, np.round(rng.random(len(picked)), 3)
    as_list = se.Segmented(se.BinaryAccumulator)
    as_list.update_many(picked, y, sc)
    if way == "numpy":
        monkeypatch.setitem(sys.modules, "pandas", None)  # no pandas: numpy's unique, renumbered
    if way == "collision":  # every string the same hash: the check against the strings falls back
        monkeypatch.setattr(
            segmented, "_numbered", lambda values: (np.zeros(values.size, np.int64), np.zeros(1, np.int64))
        )
    as_array = se.Segmented(se.BinaryAccumulator)
    as_array.update_many(np.array(picked), y, sc)
    assert as_array.segments == as_list.segments == list(dict.fromkeys(names))
    assert as_array == as_list


def test_one_event_past_max_segments_is_refused():
    seg = se.Segmented(se.BinaryAccumulator, max_segments=1)
    seg.update("a", 1, 0.5)
    with pytest.raises(ValueError, match="max_segments=1"):
        seg.update("b", 1, 0.5)
    assert seg.segments == ["a"] and seg.n == 1


def test_constructor_and_merge_refusals():
    with pytest.raises(TypeError, match="factory"):
        se.Segmented(3)
    with pytest.raises(TypeError, match="max_segments"):
        se.Segmented(se.BinaryAccumulator, max_segments=2.5)
    with pytest.raises(ValueError, match="max_segments"):
        se.Segmented(se.BinaryAccumulator, max_segments=0)
    with pytest.raises(ValueError, match="threshold"):
        se.Segmented(se.BinaryAccumulator) + se.Segmented(lambda: se.BinaryAccumulator(threshold=0.2))
    a, b = se.Segmented(se.BinaryAccumulator, max_segments=2), se.Segmented(se.BinaryAccumulator)
    a.update_many(["x", "y"], [1, 0], [0.3, 0.4])
    b.update_many(["z"], [1], [0.3])
    before = a.to_bytes()
    with pytest.raises(ValueError, match="max_segments"):
        a += b
    with pytest.raises(ValueError, match="never counted"):
        a -= b
    assert a.to_bytes() == before


def test_state_pickle_locked_windows_and_frame(tmp_path):
    g, y, s = _stream(6, 2_000)
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(list(zip(g.tolist(), (y * 1).tolist(), strict=True)), y, s)  # crossed segments: tuples
    seg.save(tmp_path / "seg.sevl")
    again = se.load(tmp_path / "seg.sevl")
    assert again == seg and again.segments == seg.segments
    assert pickle.loads(pickle.dumps(seg)) == seg
    locked = se.Locked(se.Segmented(se.BinaryAccumulator))
    locked.update("a", 1, 0.3)
    assert locked.get().overall.n == 1
    win = se.Sliding(lambda: se.Segmented(se.BinaryAccumulator), size=500)
    win.update_many(g, y, s)
    fresh = se.Segmented(se.BinaryAccumulator)
    fresh.update_many(g[-500:], y[-500:], s[-500:])
    assert sorted(win.accumulator().segments) == sorted(fresh.segments)
    assert all(win.accumulator()[k] == fresh[k] for k in fresh.segments)
    mon = se.Monitor(se.Segmented(se.BinaryAccumulator), every=1000)
    mon.update_many(g[:1000], y[:1000], s[:1000])
    assert mon.to_records()[0]["a/auc"] == pytest.approx(_auc_of(g, y, s, "a"), abs=1e-12)
    frame = seg.get().to_frame(["n", "auc", "selection_rate"])
    assert list(frame.index)[-1] == "overall" and frame.loc["overall", "n"] == 2_000


def _auc_of(g, y, s, group):
    keep = g[:1000] == group
    return roc_auc_score(y[:1000][keep], s[:1000][keep])


def test_unknown_metric_is_named():
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update("a", 1, 0.3)
    with pytest.raises(ValueError, match="'aucc'"):
        seg.get().by_group("aucc")


def test_forest_plot_draws_each_segment_with_its_interval():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from streameval.plot import plot_segments

    g, y, s = _stream(7, 3_000)
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(g, y, s)
    r = seg.get()
    for metric in ("auc", "recall", "f1"):
        ax = plot_segments(r, metric)
        labels = [str(k) for k in r.segments]
        assert [t.get_text() for t in ax.get_yticklabels()] == labels
        points = list(ax.containers)
        for segment, container in zip(r.segments, points, strict=True):
            x = container.lines[0].get_xdata()[0]
            assert x == pytest.approx(r.by_group(metric)[segment], abs=1e-15)
        if metric == "recall":
            ci = r[r.segments[0]].wilson_ci("recall")
            segments = points[0].lines[2][0].get_segments()[0]
            assert segments[0][0] == pytest.approx(ci.lower) and segments[1][0] == pytest.approx(ci.upper)


def _binned_segments(codes, y, s, threshold=0.5):
    seg = se.Segmented(lambda: se.BinaryAccumulator(exact_up_to=0, threshold=threshold))
    seg.update_many(codes, y, s)
    return seg


def _same_state(a: Any, b: Any) -> bool:
    """Whether two accumulators save the same state: their saved bytes before compression (zlib's level 9 took
    most of a second for a state of 200,000 exact scores)."""
    return se.to_bytes(a, level=0) == se.to_bytes(b, level=0)


def _counted_apart(monkeypatch, seg, *batch):
    """``seg.update_many(*batch)`` with each segment's events counted apart (the path the one-pass count
    twins)."""
    with monkeypatch.context() as patch:
        patch.setattr(se.BinaryAccumulator, "update_many_grouped", lambda self, *args, **kwargs: False)
        seg.update_many(*batch)


def _spy_on_grouped_count(monkeypatch):
    from streameval import state

    calls = []
    count = state.count_grouped
    monkeypatch.setattr(state, "count_grouped", lambda *args, **kwargs: (calls.append(1), count(*args, **kwargs))[1])
    from streameval import histogram

    monkeypatch.setattr(histogram, "count_grouped", state.count_grouped)
    return calls


SCORE_VALUES = st.one_of(
    st.floats(0.0, 1.0),
    st.sampled_from([0.377, 0.37699999999999995, 0.5, -0.0, -1.0, 2.0, 1e300, -np.inf, np.inf, 5e-324]),
    st.floats(-1e6, 1e6, allow_nan=False),
)


@settings(max_examples=60, deadline=None)
@given(
    events=st.lists(st.tuples(st.integers(-3, 4), st.booleans(), SCORE_VALUES), min_size=1, max_size=400),
    dtype=st.sampled_from([np.int8, np.int16, np.int32, np.int64]),
    threshold=st.sampled_from([0.5, 0.377, 0.0, 1e5]),
    int_labels=st.booleans(),
)
def test_segments_counted_before_in_one_pass_equal_each_counted_apart(events, dtype, threshold, int_labels):
    codes = np.array([e[0] for e in events], dtype=dtype)
    y = np.array([e[1] for e in events])
    if int_labels:
        y = y.astype(np.uint8)
    s = np.array([e[2] for e in events])
    everyone = np.arange(-3, 5, dtype=dtype)  # every segment exists, binned, with pages of its own
    rng = np.random.default_rng(len(events))
    first = (everyone, rng.random(everyone.size) < 0.5, rng.random(everyone.size))
    one_pass, apart = _binned_segments(*first, threshold=threshold), _binned_segments(*first, threshold=threshold)
    with pytest.MonkeyPatch.context() as patch:
        from streameval import segmented

        patch.setattr(segmented, "ONE_BY_ONE_UP_TO", 0)  # small batches too: the one pass, not event by event
        calls = _spy_on_grouped_count(patch)
        one_pass.update_many(codes, y, s)
        _counted_apart(patch, apart, codes, y, s)
    assert one_pass == apart
    assert one_pass.to_bytes() == apart.to_bytes()
    for key in one_pass.segments:
        a, b = one_pass[key].get(), apart[key].get()
        assert (a.tp, a.fp, a.tn, a.fn, a.brier, a.log_loss) == (b.tp, b.fp, b.tn, b.fn, b.brier, b.log_loss)
    assert len(calls) == (1 if se.COMPILED else 0)


@pytest.mark.parametrize("bad_at", [0, 255, 256, 70_000, 99_999])
@pytest.mark.parametrize("bad", ["nan", "label"])
def test_a_bad_event_refuses_the_one_pass_count_whole_and_is_named(monkeypatch, bad_at, bad):
    rng = np.random.default_rng(5)
    n = 100_000
    codes, y, s = rng.integers(0, 4, n), (rng.random(n) < 0.3).astype(np.int64), rng.random(n)
    seg = _binned_segments(codes, y, s)
    before = seg.to_bytes()
    if bad == "nan":
        s = s.copy()
        s[bad_at] = np.nan
    else:
        y = y.copy()
        y[bad_at] = 2
    calls = _spy_on_grouped_count(monkeypatch)
    with pytest.raises(ValueError, match=f"at index {bad_at}"):
        seg.update_many(codes, y, s)
    assert seg.to_bytes() == before
    assert len(calls) == (1 if se.COMPILED else 0)


def test_the_one_pass_count_leaves_to_the_other_path_what_it_cannot_count(monkeypatch):
    """A new segment past the events the groups are read from, more than 4,096 segments, segments still exact,
    weights and a pandas column: each gives what counting each segment apart gives."""
    rng = np.random.default_rng(8)
    n = 80_000
    codes, y, s = rng.integers(0, 4, n), rng.random(n) < 0.3, rng.normal(0.0, 3.0, n)
    late = codes.copy()
    late[70_000] = 7  # a new segment, after the first 2^16 events and none of the eight sampled after them
    many = rng.integers(0, 4097, n)
    pd = pytest.importorskip("pandas")
    cases = [
        (codes, (late, y, s), {}),
        (codes, (codes, y, s), {"w": rng.random(n)}),
        (many, (many, y, s), {}),
        (codes, (pd.Series(codes), y, s), {}),
        (codes, (codes, y, s), {}),
    ]
    for first, batch, kwargs in cases:
        one_pass, apart = _binned_segments(first, y, s), _binned_segments(first, y, s)
        one_pass.update_many(*batch, **kwargs)
        with monkeypatch.context() as patch:
            patch.setattr(se.BinaryAccumulator, "update_many_grouped", lambda self, *args, **kwargs: False)
            apart.update_many(*batch, **kwargs)
        assert one_pass == apart and one_pass.segments == apart.segments
    exact = se.Segmented(se.BinaryAccumulator)
    exact.update_many(codes[:100], y[:100], s[:100])
    calls = _spy_on_grouped_count(monkeypatch)
    exact.update_many(codes[:100], y[:100], s[:100])  # still exact: counted apart
    exact.update_many(codes, y, s)  # now past 8,192 distinct scores in each: binned
    exact.update_many(codes, y, s)
    assert len(calls) == (1 if se.COMPILED else 0)


@pytest.mark.parametrize("order", ["sorted", "descending", "blocks"])
def test_segments_sorted_or_in_blocks_are_counted_in_one_pass(monkeypatch, order):
    """Segments whose later values the batch's first 2^16 events do not show (sorted, or in blocks) are read from
    the whole batch: one pass counts them, as it counts them shuffled."""
    rng = np.random.default_rng(31)
    n = 200_000
    codes, y, s = rng.integers(0, 4, n), rng.random(n) < 0.3, rng.normal(0.0, 3.0, n)
    if order == "sorted":
        codes = np.sort(codes)
    elif order == "descending":
        codes = np.sort(codes)[::-1].copy()
    else:
        codes = np.repeat(rng.permutation([2, 0, 3, 1]), n // 4)
    one_pass, apart = _binned_segments(codes, y, s), _binned_segments(codes, y, s)
    from streameval import histogram, state

    counted = []
    count = state.count_grouped
    monkeypatch.setattr(histogram, "count_grouped", lambda *a, **k: (counted.append(count(*a, **k)), counted[-1])[1])
    one_pass.update_many(codes, y, s)
    _counted_apart(monkeypatch, apart, codes, y, s)
    assert one_pass == apart and one_pass.segments == apart.segments == list(dict.fromkeys(codes.tolist()))
    assert [found is not None for found in counted] == ([True] if se.COMPILED else [])  # not refused by it


@pytest.mark.parametrize("groups", [3, 80])  # (group, page) rows found in a table, in a map that grows
def test_the_one_pass_count_grows_the_segments_tables_for_new_pages(monkeypatch, groups):
    rng = np.random.default_rng(12)
    n = 50_000
    codes, y = rng.integers(0, groups, n), rng.random(n) < 0.5
    first = rng.random(n)  # scores in [0, 1]
    one_pass, apart = _binned_segments(codes, y, first), _binned_segments(codes, y, first)
    wide = 10.0 ** rng.uniform(-30, 30, n) * rng.choice([-1, 1], n)  # hundreds of pages new to every segment
    calls = _spy_on_grouped_count(monkeypatch)
    one_pass.update_many(codes, y, wide)
    _counted_apart(monkeypatch, apart, codes, y, wide)
    assert one_pass == apart
    assert len(calls) == (1 if se.COMPILED else 0)
    for key in one_pass.segments:
        alone = se.BinaryAccumulator(exact_up_to=0)
        alone.update_many(y[codes == key], first[codes == key])
        alone.update_many(y[codes == key], wide[codes == key])
        assert one_pass[key] == alone


@pytest.mark.skipif(not se.COMPILED, reason="the compiled kernels are not in use")
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_the_group_lookup_of_runs_of_one_value_finds_every_value(dtype):
    """The lookup skips 64 values at a time where they are all one value it has seen (values sorted or in
    blocks): runs of 1 to 200 values, a different value alone inside a run, at a run's first or last place or
    across two stretches of 64, and the prefix's own reading, each give the distinct values in ascending order
    and in order of first appearance, as Python finds them."""
    from streameval import _speedups

    rng = np.random.default_rng(int(np.dtype(dtype).itemsize))
    for case in range(60):
        runs = [(int(rng.integers(-5, 6)), int(rng.choice([1, 2, 63, 64, 65, 127, 128, 129, 200]))) for _ in range(8)]
        values = np.concatenate([np.full(length, v, dtype=dtype) for v, length in runs])
        if case % 3:  # one value alone somewhere inside (maybe a value seen nowhere else)
            values[int(rng.integers(0, values.size))] = int(rng.integers(-7, 8))
        prefix = int(rng.choice([0, 1, 64, values.size // 2, values.size]))
        distinct, lo, lookup, appearing = _speedups.group_lookup(values, values.itemsize, prefix)
        got, first_seen = np.frombuffer(distinct, dtype=np.int64).tolist(), np.frombuffer(appearing, np.int64).tolist()
        n, seen = min(prefix, values.size), set(values[:prefix].tolist())
        sampled = [int(values[n + (values.size - n - 1) * at // 8]) for at in range(1, 9)] if n < values.size else []
        read = values if any(v not in seen for v in sampled) else values[:n]  # all, or the prefix
        assert got == sorted(set(read.tolist())) and first_seen == list(dict.fromkeys(read.tolist()))
        assert np.frombuffer(lookup, dtype=np.int32)[np.array(got) - lo].tolist() == list(range(len(got)))


@pytest.mark.skipif(not se.COMPILED, reason="the compiled kernels are not in use")
def test_grouped_kernels_refuse_inconsistent_arguments():
    from streameval import _speedups

    acc = se.BinaryAccumulator(exact_up_to=0)
    acc.update_many([1, 0], [0.2, 0.7])
    c = acc._hist._counts
    table = (c._base, c._page_of_row, c._counts, c._n_stored)
    bins = acc.bins
    x, lab = np.array([0.1, 0.7]), np.array([1, 0], dtype=np.uint8)
    groups = np.array([0, 1], dtype=np.int64)
    lookup = np.array([0, 1, -1], dtype=np.int32)
    args = [x, lab, 1, groups, 8, 0, lookup, (table, table), 0, 0, False, 0.5, bins._shift, bins._tag_shift, True]
    refused, need, stored, above, sums, scratch = _speedups.count_grouped_range_free(*args)
    assert refused is False and need is None and scratch is None and [s[0] for s in sums] == [1, 1]
    assert min(stored) >= 1 and above == ((0, 0), (0, 0))  # (one table twice here) no threshold check
    wrong_values = [
        (6, np.array([0, 1], dtype=np.int32)),  # no -1 at the end of the lookup
        (4, 3),  # a width
        (3, groups[:1]),  # as many groups as scores
        (7, (table,)),  # fewer tables than the lookup's groups
        (7, ((c._base[:10], c._page_of_row, c._counts, c._n_stored),) * 2),
        (13, 3),  # shifts of another scheme
    ]
    for index, bad in wrong_values:
        wrong = list(args)
        wrong[index] = bad
        with pytest.raises(ValueError, match="inconsistent arguments"):
            _speedups.count_grouped_range_free(*wrong)
    fresh = se.BinaryAccumulator(exact_up_to=0)._hist._counts  # no rows: the scratch table comes back
    empty = (fresh._base, fresh._page_of_row, fresh._counts, fresh._n_stored)
    short = _speedups.count_grouped_range_free(*args[:7], (empty, empty), *args[8:])
    assert short[1] == (1, 1) and short[2] == (0, 0) and len(short[5][1]) == 2 * 8
    with pytest.raises(ValueError, match="inconsistent arguments"):  # the tables still lack rows
        _speedups.merge_grouped(*short[5], (empty, empty), bins._shift)
    for bad in [(short[5][0][:-4], short[5][1]), (short[5][0], short[5][1][:-8] + b"\xff" * 8)]:
        with pytest.raises(ValueError, match="inconsistent arguments"):  # torn, or a row of no table
            _speedups.merge_grouped(*bad, (table, table), bins._shift)
    unknown = list(args)
    unknown[3] = np.array([0, 5], dtype=np.int64)  # a value the lookup does not hold: refused, nothing counted
    assert _speedups.count_grouped_range_free(*unknown)[0] is True
    known_later = np.array([3, 1, 3] + [2] + [1, 3] * 20, dtype=np.int64)  # a 2 sampled by none of the 8
    distinct, lo, found, appearing = _speedups.group_lookup(known_later, 8, 3)
    assert np.frombuffer(distinct, dtype=np.int64).tolist() == [1, 3] and lo == 1  # the first 3 events
    assert np.frombuffer(found, dtype=np.int32).tolist() == [0, -1, 1, -1]
    assert np.frombuffer(appearing, dtype=np.int64).tolist() == [3, 1]
    for values in ([3, 1, 3, 2], [3, 1, 3] + [1, 3] * 20 + [2], [3, 1, 3] + [0] * 41):  # a sampled 2, or a 0
        distinct, lo, found, appearing = _speedups.group_lookup(np.array(values, dtype=np.int16), 2, 3)
        seen = sorted(set(values))
        assert np.frombuffer(distinct, dtype=np.int64).tolist() == seen and lo == seen[0]  # read from them all
        assert np.frombuffer(appearing, dtype=np.int64).tolist() == list(dict.fromkeys(values))
        assert np.frombuffer(found, dtype=np.int32).tolist()[: seen[-1] - lo + 1] == [
            seen.index(v) if v in seen else -1 for v in range(lo, seen[-1] + 1)
        ]
    assert _speedups.group_lookup(np.array([0, 2**30], dtype=np.int64), 8, 2) is None


@pytest.mark.parametrize("groups", [4, 40, 100])  # sums by masks (up to 16), adding each event's; pages in a map
@pytest.mark.parametrize("threshold", [0.377, 0.5])  # inside a bin (events at or above it counted apart), an edge
def test_the_one_pass_count_keeps_the_threshold_bin_and_sums_of_many_segments(monkeypatch, groups, threshold):
    rng = np.random.default_rng(groups)
    n = 30_000
    codes, y = rng.integers(0, groups, n), rng.random(n) < 0.4
    near = threshold + rng.uniform(-1e-3, 1e-3, n)  # many events in the threshold's bin, on both sides of it
    near[::7] = threshold
    s = np.where(rng.random(n) < 0.5, near, rng.random(n))
    one_pass, apart = _binned_segments(codes, y, s, threshold), _binned_segments(codes, y, s, threshold)
    calls = _spy_on_grouped_count(monkeypatch)
    one_pass.update_many(codes, y, s)
    _counted_apart(monkeypatch, apart, codes, y, s)
    assert one_pass == apart
    assert len(calls) == (1 if se.COMPILED else 0)
    for key in (0, groups - 1):
        alone = se.BinaryAccumulator(exact_up_to=0, threshold=threshold)
        alone.update_many(y[codes == key], s[codes == key])
        alone.update_many(y[codes == key], s[codes == key])
        a, b = one_pass[key].get(), alone.get()
        assert (a.tp, a.fp, a.tn, a.fn, a.brier, a.log_loss) == (b.tp, b.fp, b.tn, b.fn, b.brier, b.log_loss)


@pytest.mark.parametrize("dtype", [np.int8, np.int64])
def test_new_segments_proven_past_their_budget_are_counted_in_one_pass_as_apart(monkeypatch, dtype):
    """A fresh `Segmented` (and one with a segment more): each new segment's events prove it leaves the exact
    regime, so it starts in bins and the batch is counted in one pass; the segments, their order and their
    states are those of counting each segment apart, and a segment with few distinct scores stays exact."""
    rng = np.random.default_rng(21)
    n = 60_000
    codes = np.array([7, -2, 3, 0], dtype=dtype)[rng.integers(0, 4, n)]
    y, s = rng.random(n) < 0.4, rng.random(n)
    calls = _spy_on_grouped_count(monkeypatch)
    one_pass, apart = se.Segmented(se.BinaryAccumulator), se.Segmented(se.BinaryAccumulator)
    one_pass.update_many(codes, y, s)
    _counted_apart(monkeypatch, apart, codes, y, s)
    assert one_pass.segments == apart.segments == [int(v) for v in dict.fromkeys(codes.tolist())]
    assert _same_state(one_pass, apart)
    assert len(calls) == (1 if se.COMPILED else 0)
    more = np.where(codes == 3, 5, codes)  # a new segment beside three counted before
    one_pass.update_many(more, y, s)
    _counted_apart(monkeypatch, apart, more, y, s)
    assert one_pass.segments == apart.segments and one_pass.segments[-1] == 5
    assert _same_state(one_pass, apart)
    assert len(calls) == (2 if se.COMPILED else 0)
    few = np.where(codes == 0, np.round(s, 2), s)  # segment 0: 101 distinct scores, it stays exact
    one_pass, apart = se.Segmented(se.BinaryAccumulator), se.Segmented(se.BinaryAccumulator)
    one_pass.update_many(codes, y, few)
    _counted_apart(monkeypatch, apart, codes, y, few)
    assert _same_state(one_pass, apart) and one_pass[0].get().n == int((codes == 0).sum())
    assert len(calls) == (2 if se.COMPILED else 0)  # not proven: counted apart
    many = rng.integers(0, 65, n).astype(dtype)  # more new segments than one pass proves: counted apart
    one_pass, apart = se.Segmented(se.BinaryAccumulator), se.Segmented(se.BinaryAccumulator)
    one_pass.update_many(many, y, s)
    _counted_apart(monkeypatch, apart, many, y, s)
    assert one_pass.segments == apart.segments and _same_state(one_pass, apart)
    assert len(calls) == (2 if se.COMPILED else 0)


def test_new_segments_refused_in_the_one_pass_count_are_not_kept():
    rng = np.random.default_rng(22)
    n = 60_000
    codes, y, s = rng.integers(0, 4, n), (rng.random(n) < 0.4).astype(np.int64), rng.random(n)
    seg = se.Segmented(se.BinaryAccumulator)
    bad = y.copy()
    bad[50_000] = 2
    with pytest.raises(ValueError, match="got 2 at index 50000"):
        seg.update_many(codes, bad, s)
    assert len(seg) == 0
    few = se.Segmented(se.BinaryAccumulator, max_segments=3)
    with pytest.raises(ValueError, match="max_segments=3"):
        few.update_many(codes, y, s)
    assert len(few) == 0


@pytest.mark.parametrize(("mantissa_bits", "exact_up_to"), [(12, 8192), (7, 1 << 20)])
def test_fine_bins_and_large_budgets_in_the_one_pass_count(monkeypatch, mantissa_bits, exact_up_to):
    """Bins of 2^-12 (a page table too large for a table by segment: the hash map) and budgets whose proofs
    would take too much memory for 8 new segments (counted apart): as counting each segment apart."""
    rng = np.random.default_rng(mantissa_bits)
    n = 200_000
    codes, y, s = rng.integers(0, 8, n), rng.random(n) < 0.4, rng.random(n)

    def make() -> se.BinaryAccumulator:
        return se.BinaryAccumulator(bins=se.Bins.range_free(mantissa_bits), exact_up_to=exact_up_to)

    calls = _spy_on_grouped_count(monkeypatch)
    one_pass, apart = se.Segmented(make), se.Segmented(make)
    for batch in (slice(0, n // 2), slice(n // 2, n)):
        one_pass.update_many(codes[batch], y[batch], s[batch])
        _counted_apart(monkeypatch, apart, codes[batch], y[batch], s[batch])
    assert _same_state(one_pass, apart)
    proven = mantissa_bits == 12  # 12,500 continuous scores a segment prove 8,192 distinct, not 2^20
    assert len(calls) == ((2 if proven else 0) if se.COMPILED else 0)


class _Tally:
    """A kind written against the protocol alone (no ``AccumulatorBase``): events counted per label."""

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}

    def update_many(self, labels) -> None:
        for label in np.asarray(labels).tolist():
            self.counts[label] = self.counts.get(label, 0) + 1

    def merge(self, other: _Tally) -> _Tally:
        out = self.copy()
        for label, count in other.counts.items():
            out.counts[label] = out.counts.get(label, 0) + count
        return out

    __add__ = merge

    def get(self) -> dict[int, int]:
        return dict(self.counts)

    def copy(self) -> _Tally:
        out = _Tally()
        out.counts = dict(self.counts)
        return out

    @property
    def n(self) -> int:
        return sum(self.counts.values())


def test_integer_segments_of_a_kind_without_the_one_pass_count():
    """A kind with no ``update_many_grouped`` takes integer segments the other way."""
    seg = se.Segmented(_Tally)
    seg.update_many(np.array([3, 1, 3, 3]), np.array([1, 0, 1, 0]))
    seg.update_many(np.array([1, 1]), np.array([1, 1]))
    assert seg.segments == [3, 1]
    assert seg[3].get() == {1: 2, 0: 1} and seg[1].get() == {0: 1, 1: 2}


def test_revert_many_takes_each_segments_events_out_or_none():
    """revert_many takes each segment's events out of its accumulator (a segment left with none goes); a batch
    with an event of a segment never counted, or one its segment did not count, changes nothing."""
    rng = np.random.default_rng(12)
    names = np.array(["eu", "us", "asia"])[rng.integers(0, 3, 900)]
    y, s = rng.random(900) < 0.3, np.round(rng.random(900), 3)
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(names, y, s)
    gone = (rng.random(900) < 0.5) | (names == "asia")
    seg.revert_many(names[gone], y[gone], s[gone])
    rest = se.Segmented(se.BinaryAccumulator)
    rest.update_many(names[~gone], y[~gone], s[~gone])
    assert seg == rest and "asia" not in seg.segments
    before = seg.to_bytes()
    for bad_names in (np.array(["eu", "africa"]), np.array(["eu", "asia"])):
        with pytest.raises(ValueError, match="never counted"):
            seg.revert_many(bad_names, [1, 1], [0.5, 0.5])
        assert seg.to_bytes() == before
    eu, us = (int(np.flatnonzero(~gone & (names == k))[0]) for k in ("eu", "us"))
    with pytest.raises(ValueError, match="cannot take out"):  # eu's event taken out, then us refuses: eu's back in
        seg.revert_many(names[[eu, us]], [y[eu], y[us]], [s[eu], 2.5])
    assert seg.to_bytes() == before


@pytest.mark.parametrize("batch", [False, True])
def test_a_new_segment_that_cannot_join_the_others_is_refused_and_named(batch):
    """Predicted classes in a new segment after class scores in the others: the overall report could not merge
    them, so the event (or the batch) is refused, naming the segment, and the segments stay as they were."""
    seg = se.Segmented(lambda: se.MulticlassAccumulator(classes=["a", "b"]))
    seg.update_many(["x", "x"], ["a", "b"], [{"a": 0.6, "b": 0.4}, {"a": 0.1, "b": 0.9}])
    before = seg.to_bytes()
    with pytest.raises(ValueError, match="new segment 'y' cannot join"):
        if batch:
            seg.update_many(["x", "y"], ["a", "b"], [{"a": 0.7, "b": 0.3}, "b"])
        else:
            seg.update("y", "a", "b")
    assert seg.to_bytes() == before and seg.segments == ["x"]
    seg.update("y", "b", {"a": 0.2, "b": 0.8})
    report = seg.get()
    assert report.overall.n == 3 and report["y"].accuracy == 1.0


def test_segmented_accumulators_whose_segments_hold_other_kinds_of_events_do_not_merge():
    """Shards whose segments hold class scores in one and predicted classes in the other: merging them (or a
    time window's pane taking the other's batch) is refused, naming the segment, and nothing changes."""

    def make():
        return se.Segmented(lambda: se.MulticlassAccumulator(classes=["a", "b"]))

    scores, labels = make(), make()
    scores.update_many(["us", "eu"], ["a", "b"], [{"a": 0.6, "b": 0.4}, {"a": 0.2, "b": 0.8}])
    labels.update_many(["eu", "apac"], ["a", "b"], ["b", "b"])
    before = scores.to_bytes()
    for combine in (lambda: scores + labels, lambda: labels.merge(scores), lambda: make().merge_all([scores, labels])):
        with pytest.raises(ValueError, match=r"segment '(eu|apac|us)' cannot join the others"):
            combine()
    with pytest.raises(ValueError, match="cannot join"):
        scores += labels
    assert scores.to_bytes() == before
    window = se.TimeWindow(make, width=100.0, panes=4)
    window.update("us", "b", "a", t=1.0)
    with pytest.raises(ValueError, match="segment 'eu' cannot join the others"):
        window.update_many(["eu"], ["b"], [[0.4, 0.6]], t=[2.0])
    assert window.get().overall.n == 1


@pytest.mark.skipif(se.COMPILED is False, reason="the compiled paths are not in use")
def test_compiled_codes_of_str_and_int_segments_equal_the_plain_path():
    """Lists and object arrays of str and int segments, coded in C through a dict: the same segments in the same
    order of first appearance, and the same codes, as pandas' factorization (or numpy's) gives; anything else
    (bools, floats, tuples, None) left to that path."""

    from streameval import _numeric, segmented

    rng = np.random.default_rng(40)
    names = ["eu", "us", "apac", 3, 7, 2**70, "", "é", -1]
    cases = [[names[i] for i in rng.integers(0, len(names), n)] for n in (1, 5, 200, 5000)]
    # equal values as distinct objects (made apart), among the same objects again and again: the compiled path
    # takes a code from the objects met last without hashing, and from the dict for the others
    made = ["".join(["e", "u"]) if i % 3 else int("1000") + i % 2 for i in range(300)]
    cases.append([v for i in range(300) for v in (made[i], names[i % len(names)])])
    cases += [["a", 1, True], ["a", 1.0], ["x", None], [("eu", 1), ("us", 2)], [1, 2, np.int64(3)]]
    cases.append(["a", "a", "b", "a", 1.5])  # a float after values met before: left to that path too
    compared = 0
    for values in cases:
        for form in (values, np.array([*values, None], dtype=object)[:-1]):  # a list, an object array
            compiled = segmented._object_codes(form)
            # the plain path: without the compiled module where segments are coded (object_codes is _numeric's)
            with mock.patch.object(segmented, "SPEEDUPS", None), mock.patch.object(_numeric, "SPEEDUPS", None):
                try:
                    plain = segmented._plain_segment_codes(form)
                except ValueError:
                    plain = None
            if compiled is None:
                assert not all(type(v) in (str, int) for v in values)
                continue
            compared += 1
            assert compiled[0] == plain[0] and [type(v) for v in compiled[0]] == [type(v) for v in plain[0]]
            assert compiled[1].tolist() == np.asarray(plain[1]).tolist()
    assert compared == 10
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(["eu", "us", "eu", 4], [1, 0, 0, 1], [0.9, 0.2, 0.4, 0.7])
    assert seg.segments == ["eu", "us", 4] and seg["eu"].n == 2


def test_a_table_of_segment_columns_gives_crossed_segments_whatever_its_library():
    """A pandas DataFrame of segment columns gives one crossed segment (a tuple) a row; a pyarrow Table or
    RecordBatch and a polars DataFrame give the same, as their rows' tuples (instants as datetimes)."""
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    pl = pytest.importorskip("polars")
    rng = np.random.default_rng(23)
    n = 500
    hours = (pd.Timestamp("2026-05-01 09:30:00.250000") + pd.to_timedelta(rng.integers(0, 3, n), unit="h")).astype(
        "datetime64[ns]"
    )  # nanoseconds, which numpy gives as integers
    frame = pd.DataFrame({"region": rng.choice(["eu", "us", "asia"], n), "tier": rng.integers(0, 3, n), "at": hours})
    y, s = rng.random(n) < 0.4, rng.random(n)
    want = se.Segmented(se.BinaryAccumulator)
    want.update_many(list(frame.itertuples(index=False, name=None)), y, s)
    for table in (frame, pa.table(frame), pa.record_batch(frame), pl.from_pandas(frame)):
        got = se.Segmented(se.BinaryAccumulator)
        got.update_many(table, y, s)
        assert got.segments == want.segments and all(got[k] == want[k] for k in want.segments), type(table)
        assert se.from_bytes(got.to_bytes()) == got  # instants as datetimes (not nanoseconds as integers)


def test_a_segment_named_overall_keeps_its_row_apart_from_the_wholes():
    """The whole's row is "overall": a segment of that name keeps its own row in the frame (before the whole's)
    and is named 'overall' (its repr) in the summary, not merged into or hidden by the whole's."""
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(["overall", "eu", "eu"], [1, 0, 1], [0.9, 0.2, 0.4])
    frame = seg.get().to_frame(["n"])
    assert list(frame.index) == ["overall", "eu", "overall"] and frame["n"].tolist() == [1, 2, 3]
    lines = seg.get().summary(["n"]).splitlines()
    assert [line.split() for line in lines] == [["segment", "n"], ["'overall'", "1"], ["eu", "2"], ["overall", "3"]]


def test_a_batch_over_many_segments_takes_score_sequences_in_each_segments_learnt_classes():
    """A batch reaching more than 64 segments counted before was checked whole by a fresh accumulator, which knows
    no classes learnt: score sequences in each segment's learnt class order were refused there and taken over
    64 segments or fewer. Now a batch the fresh one refuses is checked segment by segment, by each segment's own;
    a refused batch changes nothing."""
    for k in (40, 100):  # counted apart, and (past 64) in place
        seg = se.Segmented(se.MulticlassAccumulator)
        keys = [f"s{i}" for i in range(k)]
        seg.update_many([key for key in keys for _ in range(2)], ["b", "a"] * k, [{"b": 0.6, "a": 0.4}] * (2 * k))
        seg.update_many(keys, ["a"] * k, [[0.3, 0.7]] * k)  # (b, a): a scores highest
        before = {key: seg[key].get().confusion_matrix.copy() for key in keys}
        with pytest.raises(ValueError, match="one"):
            seg.update_many(keys, ["a"] * k, [[0.3, 0.7]] * (k - 1) + [[0.3, 0.6, 0.1]])
        for key in (keys[0], keys[-1]):
            one = se.MulticlassAccumulator()
            one.update_many(["b", "a"], [{"b": 0.6, "a": 0.4}] * 2)
            one.update("a", [0.3, 0.7])
            assert seg[key].classes == one.classes == ("b", "a")
            np.testing.assert_array_equal(seg[key].get().confusion_matrix, one.get().confusion_matrix)
            np.testing.assert_array_equal(seg[key].get().confusion_matrix, before[key])
        assert seg.n == 3 * k


def test_an_emptied_segmented_starts_new_segments_as_its_source_and_a_copy_as_itself():
    """emptied(): a segment new there starts with the source's learnt classes, in their order, while the source
    lives (a sequence of scores means the same); a copy learns its new segments' classes itself, as the source."""
    source = se.Segmented(se.MulticlassAccumulator)
    source.update("eu", "b", {"a": 0.5, "b": 0.5})  # eu learns (b, a)
    fresh, twin = source.emptied(), source.copy()
    fresh.update("eu", "a", [0.2, 0.8])  # (b, a): a predicted
    assert fresh["eu"].classes == ("b", "a") and fresh["eu"].get().accuracy == 1.0
    source.update("x", "p", {"p": 0.3, "q": 0.7})
    for acc in (source, twin):
        acc.update("x", "q", {"q": 0.1, "p": 0.9})
    assert source["x"].classes == ("p", "q") and twin["x"].classes == ("q", "p")
    del source
    import gc

    gc.collect()
    lone = fresh.emptied()
    del fresh
    gc.collect()
    lone.update("eu", "a", {"a": 0.9, "b": 0.1})  # its source is gone: the factory's, learning (a, b)
    assert lone["eu"].classes == ("a", "b")


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["int", "str"]), st.sampled_from(["array", "list"]))
def test_small_batches_of_segments_counted_before_equal_the_same_events_one_at_a_time(seed, names, form):
    """Small batches whose segments exist go to them event by event (checked whole first); with a new segment,
    or larger, they take the batch path. Either way the segments equal those fed the same events one at a time
    by ``update``: unweighted, weighted by a column, by a keyword column or by one weight for all."""
    import streameval.segmented as segmented

    rng = np.random.default_rng(seed)
    pool = [0, 1, 2, 3, 7] if names == "int" else ["eu", "us", "asia", "africa", "oc"]
    batches, per_event = se.Segmented(se.BinaryAccumulator), se.Segmented(se.BinaryAccumulator)
    for acc in (batches, per_event):
        acc.update_many(pool[:4], [1, 0, 1, 0], [0.9, 0.2, 0.6, 0.4])
    one_by_one = []
    real = segmented.Segmented._counted_one_by_one

    def spy(self, *args):
        one_by_one.append(real(self, *args))
        return one_by_one[-1]

    with mock.patch.object(segmented.Segmented, "_counted_one_by_one", spy):
        for step in range(12):  # a batch past the size and one with a new segment take the batch path
            n = 300 if step == 3 else int(rng.choice([1, 3, 10, 40]))
            codes = rng.integers(0, 5 if step == 6 else 4, n)
            codes[0] = 4 if step == 6 else codes[0]
            values = [pool[c] for c in codes]
            y, s = rng.random(n) < 0.4, rng.random(n).round(3)
            weighting = rng.choice(["none", "column", "keyword", "scalar"])
            w = rng.random(n) + 0.25
            columns = [y, s] if rng.random() < 0.5 else [y.tolist(), s.tolist()]
            segments = np.array(values) if form == "array" else values
            if weighting == "none":
                batches.update_many(segments, *columns)
            elif weighting == "column":
                batches.update_many(segments, *columns, w)
            elif weighting == "keyword":
                batches.update_many(segments, *columns, w=w)
            else:
                batches.update_many(segments, *columns, w=2.0)
            for i in range(n):
                weight = {"none": 1.0, "scalar": 2.0}.get(weighting, float(w[i]))
                per_event.update(values[i], bool(y[i]), float(s[i]), w=weight)
            assert one_by_one[-1] is (step not in (3, 6))
            assert batches == per_event and batches.segments == per_event.segments


def test_a_small_batch_with_a_bad_event_changes_no_segment_and_is_explained_as_by_the_batch_path():
    """A small batch of segments counted before is checked whole before any of its events is counted: a negative
    weight after good ones leaves every segment as it was (unweighted counts stay whole), and the batch path
    names the event."""
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(["a", "b"], [1, 0], [0.9, 0.2])
    before = seg.to_bytes()
    with pytest.raises(ValueError, match=r"w must be finite and >= 0, got -1.0 at index 2"):
        seg.update_many(["a", "b", "a"], [1, 0, 1], [0.4, 0.5, 0.6], w=[0.5, 0.5, -1.0])
    assert seg.to_bytes() == before


def test_a_small_batch_one_by_one_that_a_segment_refuses_puts_the_segments_back(monkeypatch):
    """Past the check, a segment may still refuse an event (its total weight would pass the largest float): the
    segments of a weighted batch are saved before its first event and put back as they were (the one-by-one
    path's segments, then the batch path's own), and the batch path explains the refusal."""
    import streameval.segmented as segmented

    put_back = []
    real = segmented.Segmented._put_back

    def recorded(self, saved):
        put_back.append(sorted(saved))
        real(self, saved)

    monkeypatch.setattr(segmented.Segmented, "_put_back", recorded)
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(["a", "b"], [1, 1], [1.0, 0.5], w=[1e308, 0.25])
    before = seg.to_bytes()
    with pytest.raises(ValueError, match="overflow"):
        seg.update_many(["b", "a"], [1, 1], [0.5, 1.0], w=[0.25, 1e308])
    assert put_back == [["a", "b"], ["b"]]  # both saved one by one; the batch path had added b when a refused
    assert seg.to_bytes() == before
    seg.update_many(["b", "b"], [1, 0], [1.0, 0.5], w=[0.25, 0.25])
    assert seg["b"].get().n == 0.75


def test_a_small_unweighted_batch_one_by_one_that_a_segment_refuses_takes_the_events_before_back_out(monkeypatch):
    """Unweighted, nothing is saved: an event a segment refuses past the check (here a refusal made up for the
    test) takes the events counted before it back out of their segments, whole counts to the bit."""
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(["a", "b"], [1, 0], [0.9, 0.2])
    before = seg.to_bytes()
    refusing = seg["b"]
    real = se.BinaryAccumulator.update

    def update(self, *args, **kwargs):
        if self is refusing:
            raise ValueError("a refusal past the check")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(se.BinaryAccumulator, "update", update)
    monkeypatch.setattr(se.BinaryAccumulator, "update_many", _refusing_many(refusing))
    with pytest.raises(ValueError, match="past the check"):
        seg.update_many(["a", "a", "b"], [1, 0, 1], [0.4, 0.5, 0.6])
    assert seg.to_bytes() == before


def _refusing_many(refusing):
    real = se.BinaryAccumulator.update_many

    def update_many(self, *args, **kwargs):
        if self is refusing:
            raise ValueError("a refusal past the check")
        return real(self, *args, **kwargs)

    return update_many


def test_a_batch_past_the_small_size_is_not_read_event_by_event(monkeypatch):
    """Only batches of at most ``ONE_BY_ONE_UP_TO`` events (``ONE_BY_ONE_KEYWORDS_UP_TO`` with keywords of each
    event's own) have their values read into lists (a batch of 10^6 read so cost 5 ms of a 6 ms count); a larger
    one, and anything but int or str segment values, take the batch path untouched."""
    from streameval import segmented

    limit = segmented.ONE_BY_ONE_UP_TO
    assert segmented._small_segment_values(np.arange(limit), limit) == list(range(limit))
    assert segmented._small_segment_values(["a", 2], limit) == ["a", 2]
    for too_many in (np.arange(limit + 1), list(range(limit + 1)), np.array(["a"] * (limit + 1))):
        assert segmented._small_segment_values(too_many, limit) is None
    for other in (np.arange(3.0), np.array([True]), [("a", 1)], [1.5], [], np.arange(0)):
        assert segmented._small_segment_values(other, limit) is None
    read = []
    real = segmented._event_values
    monkeypatch.setattr(segmented, "_event_values", lambda value, n: read.append(n) or real(value, n))
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(["a", "b"], [1, 0], [0.9, 0.2])
    m = segmented.ONE_BY_ONE_KEYWORDS_UP_TO
    for n, w in ((m + 1, np.full(m + 1, 0.5)), (m + 1, 0.5), (m, np.full(m, 0.5))):
        read.clear()
        seg.update_many(["a"] * n, np.ones(n, bool), np.full(n, 0.3), w=w)
        assert bool(read) is (n <= m or np.ndim(w) == 0), (n, w)
    assert seg["a"].n == 2 * (m + 1) * 0.5 + m * 0.5 + 1


ROUNDING_KINDS = {  # a factory and the arguments of event i (a weight goes by w=)
    "binary": (se.BinaryAccumulator, lambda i: (i % 2, 0.1 + 0.8 * (i % 7) / 7)),
    "regression": (se.RegressionAccumulator, lambda i: (0.1 * (i % 5), 0.05 * (i % 3))),
    "scores": (se.ScoreAccumulator, lambda i: (0.1 * (i % 9),)),
    "multiclass": (lambda: se.MulticlassAccumulator(classes=[0, 1, 2]), lambda i: (i % 3, (i + 1) % 3)),
    "paired": (lambda: se.PairedAccumulator(threshold=0.5), lambda i: (i % 2, 0.2 * (i % 5), 0.9 - 0.2 * (i % 4))),
}


def _columns(event: Any, n: int, start: int = 0) -> list[list[Any]]:
    return [list(column) for column in zip(*(event(start + i) for i in range(n)), strict=True)]


@pytest.mark.parametrize("n", [6, 300, 3_000])  # event by event, counted in place, counted apart
@pytest.mark.parametrize("kind", list(ROUNDING_KINDS))
def test_a_weighted_batch_refused_past_its_check_leaves_every_segment_as_it_was(kind, n):
    """A weighted batch that one segment refuses past the whole-batch check (its total weight would pass the
    largest float) leaves the segments it reached before as they were, to the bit: whole counts stay whole
    (taken back out, the weighted events left float counts) and float sums are not left within rounding of
    what they were. Each segment stays the object a caller holds, and takes events after."""
    make, event = ROUNDING_KINDS[kind]
    seg = se.Segmented(make)
    seg.update_many(["a", "b", "a", "b", "a"], *_columns(event, 5))
    seg.update("c", *event(13), w=1e308)
    held = seg["a"]
    before = seg.to_bytes()
    names = ["a", "b"] * ((n - 1) // 2) + ["a"] * ((n - 1) % 2) + ["c"]
    weights = [0.1 + 0.7 * (i % 3) for i in range(n - 1)] + [1e308]
    with pytest.raises(ValueError, match="overflow"):
        seg.update_many(names, *_columns(event, n, 11), w=weights)
    assert seg.to_bytes() == before
    assert seg["a"] is held
    seg.update("a", *event(3))  # per-event updates go to the segment as it is now
    seg.update_many(["b", "a"], *_columns(event, 2, 4))
    expected = se.Segmented.from_bytes(before)
    expected.update("a", *event(3))
    expected.update_many(["b", "a"], *_columns(event, 2, 4))
    assert seg.to_bytes() == expected.to_bytes()


@pytest.mark.parametrize("kind", ["binary", "regression", "scores"])
def test_a_weighted_revert_refused_in_one_segment_leaves_the_others_as_they_were(kind):
    """Taking weighted events out of two segments, the second of which never counted its event: the first
    segment's events were taken out, then counted back in, which left the regression and score moments within
    rounding of what they were; those segments are now put back as they were. (Binary segments tell that they
    take the weight, are not saved and are counted back in: whole to the bit here, as before.)"""
    make, event = ROUNDING_KINDS[kind]
    seg = se.Segmented(make)
    weights = [0.1, 0.2, 0.7, 0.3, 1.1, 0.9]
    seg.update_many(["a", "a", "a", "b", "b", "b"], *_columns(event, 6), w=weights)
    before = seg.to_bytes()
    out = _columns(event, 3)
    never = _columns(event, 1, 40)  # an event b never counted: its score (or y) is new there
    with pytest.raises(ValueError):
        seg.revert_many(["a", "a", "b"], *[o[:2] + m for o, m in zip(out, never, strict=True)], w=[0.1, 0.2, 5.0])
    assert seg.to_bytes() == before


def test_a_small_weight_that_takes_a_full_segment_past_the_largest_float_leaves_the_others_as_they_were():
    """A segment of a total weight just below the largest float refuses a part of weight 1e300 (the batch,
    past the small ones, counted apart): the whole batch's weight is small beside the largest float, yet the
    other segment, unweighted before, is put back with whole counts."""
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(["a", "a"], [1, 0], [0.9, 0.2])
    seg.update_many(["c"], [1], [0.8], w=[1.7976931348623e308])  # within 1e295 of the largest float
    before = seg.to_bytes()
    n = 1_100
    with pytest.raises(ValueError, match="overflow"):
        seg.update_many(["a"] * (n - 1) + ["c"], [1] * n, [0.7] * n, w=[0.5] * (n - 1) + [1e300])
    assert seg.to_bytes() == before
    assert seg["a"].get().n == 2 and isinstance(seg["a"].get().n, int)


def test_a_binary_segment_tells_it_takes_a_weight_within_its_room_without_summing_its_table(monkeypatch):
    """A weighted binary segment answers from the room it keeps for stored weights (what is counted stays below the
    largest float with that much more), without a pass over its table; past the room, from its counted total (a
    weighted small batch into segments summed every segment's table each time)."""
    from streameval.histogram import ScoreHistogram
    from streameval.protocol import can_take

    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(["a", "a", "b"], [1, 0, 1], [0.9, 0.2, 0.4], w=[2.0, 3.0, 1.7976931348623e308])
    seg.get()  # a read counts the events stored (their weights are then counted, not stored)
    a, b = seg["a"], seg["b"]
    sums: list[str] = []
    names = {id(a._hist): "a", id(b._hist): "b"}
    total = ScoreHistogram.total

    def summed(hist: ScoreHistogram) -> Any:
        sums.append(names.get(id(hist), "?"))
        return total(hist)

    monkeypatch.setattr(ScoreHistogram, "total", summed)
    assert can_take(a, 1e299) and not sums  # a: 5 counted, a room of 1e300
    assert can_take(a, 2e300) and set(sums) == {"a"}  # past the room: the counted total decides (below 2^1000)
    assert not can_take(a, 2e301)
    sums.clear()
    assert can_take(b, 1.0) and not sums  # b: within 1e295 of the largest float, a room of about half that
    assert not can_take(b, 1e300) and set(sums) == {"b"}
    before = seg.to_bytes()
    with pytest.raises(ValueError, match="overflow"):  # the batch, refused by b, leaves a as it was
        seg.update_many(["a", "b"], [1, 1], [0.3, 0.3], w=[0.5, 1e300])
    assert seg.to_bytes() == before


def test_a_weighted_batch_refused_by_a_multiclass_segment_holding_a_large_stored_weight_changes_no_segment():
    """A multiclass segment tells that it surely takes a batch from its counted total and its stored events, each
    of a weight of at most 1e290 (a larger per-event weight is counted at once): a segment holding 1.6e295 less
    than the largest float refuses a batch's event of 1e300, after the batch's event of 0.5 in another: that one
    is put back."""

    def made() -> se.Segmented:
        seg = se.Segmented(lambda: se.MulticlassAccumulator(classes=[0, 1]))
        seg.update("b", 0, [0.6, 0.4])
        seg.update("a", 0, [0.6, 0.4], w=1.7976931348623e308)
        return seg

    before, seg = made().to_bytes(), made()  # a read counts what is stored: the batch meets these untouched
    with pytest.raises(ValueError, match="overflow"):
        seg.update_many(["b", "a"], [0, 1], [[0.6, 0.4], [0.3, 0.7]], w=[0.5, 1e300])
    assert seg.to_bytes() == before
    assert seg.get()["b"].n == 1 and seg.get()["a"].n == 1.7976931348623e308


def test_small_batches_are_checked_by_a_scratch_accumulator_that_no_read_sees():
    """Small batches into segments counted before are checked by one scratch accumulator that takes them all: a
    batch it refuses (its total weight past the largest float) while each segment takes its part goes the batch
    path and is counted, the results as the same events counted one by one; a copy and a pickle leave the
    scratch accumulator out."""
    import pickle

    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many([0, 1, 2, 3], [1, 0, 1, 0], [0.9, 0.2, 0.7, 0.4])
    one = pickle.loads(pickle.dumps(seg))
    rng = np.random.default_rng(4)
    for _ in range(12):  # 8 events of weight 4e306 a batch: the scratch total passes 1.8e308 at the 6th
        codes, y, s = np.repeat(np.arange(4), 2), rng.random(8) < 0.5, rng.random(8)
        w = np.full(8, 4e306)
        seg.update_many(codes, y, s, w=w)
        for g, yi, si, wi in zip(codes.tolist(), y.tolist(), s.tolist(), w.tolist(), strict=True):
            one.update(g, yi, si, w=wi)
    for key in range(4):
        a, b = seg[key].get(), one[key].get()
        assert a.n == pytest.approx(b.n, rel=1e-15) and a.n == pytest.approx(1 + 24 * 4e306, rel=1e-15)
        np.testing.assert_allclose(a.neg, b.neg, rtol=1e-15)
        np.testing.assert_allclose(a.pos, b.pos, rtol=1e-15)
    copied, restored = seg.copy(), pickle.loads(pickle.dumps(seg))
    assert copied == seg and restored == seg
    assert "_checker" not in vars(copied) and "_checker" not in vars(restored)
    with pytest.raises(ValueError, match="y must be 1"):  # refused whole, by the check: no segment changed
        restored.update_many([0, 1], [1, 2], [0.5, 0.5])
    assert restored == seg
