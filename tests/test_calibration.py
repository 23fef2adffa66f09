"""Calibration: Brier score and log loss from exact sums, calibration curves, ECE / MCE, scores(), river, plots."""

from __future__ import annotations

import dataclasses
import itertools
import math
import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, log_loss

import streameval as se
from streameval import calibration
from streameval._compiled import SPEEDUPS
from streameval.calibration import CalibrationSums

# probabilities that test the clipping and the ends: 0, 1, below eps, within eps of 1, and edges of bins
SPECIAL = np.array([0.0, 1.0, 1e-300, 1e-20, 2.220446049250313e-16, 1 - 1e-17, 1 - 2**-53, 0.5, 0.1, 0.9, 0.3])


def _calibrated(seed, n, rounding=None):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 3, n)
    if rounding is not None:
        p = np.round(p, rounding)
    y = rng.random(n) < p
    return y, p


def _ece_by_hand(y, p, n_bins, w=None):
    """ECE and MCE from the arrays: scikit-learn's bin assignment, then counts-weighted gaps."""
    w = np.ones(p.size) if w is None else w
    ids = np.searchsorted(np.linspace(0, 1, n_bins + 1)[1:-1], p)
    total = np.bincount(ids, weights=w, minlength=n_bins)
    true = np.bincount(ids, weights=w * y, minlength=n_bins)
    pred = np.bincount(ids, weights=w * p, minlength=n_bins)
    keep = total > 0
    gap = np.abs(true[keep] / total[keep] - pred[keep] / total[keep])
    return float(np.sum(total[keep] * gap) / total.sum()), float(gap.max())


# -- the numbers ------------------------------------------------------------------------
@pytest.mark.parametrize("exact_up_to", [None, 0], ids=["exact", "binned"])
@pytest.mark.parametrize("weighted", [False, True])
def test_brier_and_log_loss_equal_scikit_learn_in_both_regimes(exact_up_to, weighted):
    y, p = _calibrated(1, 30_000)
    p[: SPECIAL.size] = SPECIAL
    y[: SPECIAL.size] = np.arange(SPECIAL.size) % 2 == 0
    w = np.random.default_rng(2).uniform(0.1, 3.0, p.size) if weighted else None
    acc = se.BinaryAccumulator(exact_up_to=exact_up_to)
    acc.update_many(y, p, w)
    r = acc.get()
    assert r.is_exact == (exact_up_to is None)
    assert r.brier == pytest.approx(brier_score_loss(y, p, sample_weight=w), rel=1e-12, abs=0)
    assert r.log_loss == pytest.approx(log_loss(y, p, sample_weight=w), rel=1e-9, abs=0)
    assert r.calibration_issue is None


def test_per_event_updates_give_the_batch_state_and_scikit_learns_numbers():
    y, p = _calibrated(3, 5_000)
    one, batch = se.BinaryAccumulator(), se.BinaryAccumulator()
    for yi, pi in zip(y.tolist(), p.tolist(), strict=True):
        one.update(yi, pi)
    batch.update_many(y, p)
    assert one == batch  # the whole-unit sums are exact: equal whatever the order of counting
    assert one.get().brier == pytest.approx(brier_score_loss(y, p), rel=1e-12)
    assert one.get().log_loss == pytest.approx(log_loss(y, p), rel=1e-9)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("n_bins", [1, 5, 10, 23])
def test_calibration_curve_equals_scikit_learn_while_exact(strategy, n_bins):
    y, p = _calibrated(4, 20_000, rounding=3)  # many ties, and scores on the edges (0.1, 0.2, ...)
    p[: SPECIAL.size] = SPECIAL
    acc = se.BinaryAccumulator(exact_up_to=None)
    acc.update_many(y, p)
    got_true, got_pred = acc.get().calibration_curve(n_bins, strategy)
    want_true, want_pred = calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
    np.testing.assert_allclose(got_true, want_true, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got_pred, want_pred, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [5, 6])
@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_calibration_curve_within_1e_3_of_scikit_learn_when_binned(seed, strategy):
    """The labels of a bin across an edge are split in proportion: the error is their noise, about
    sqrt(events in a bin) / events in a calibration bin; 1e-3 holds from about 10^6 events (benchmarks)."""
    y, p = _calibrated(seed, 1_000_000)
    acc = se.BinaryAccumulator(exact_up_to=0)
    acc.update_many(y, p)
    got_true, got_pred = acc.get().calibration_curve(10, strategy)
    want_true, want_pred = calibration_curve(y, p, n_bins=10, strategy=strategy)
    assert got_true.shape == want_true.shape
    np.testing.assert_allclose(got_true, want_true, rtol=0, atol=1e-3)
    np.testing.assert_allclose(got_pred, want_pred, rtol=0, atol=1e-3)


@pytest.mark.parametrize("exact_up_to", [None, 0], ids=["exact", "binned"])
@pytest.mark.parametrize("weighted", [False, True])
def test_ece_and_mce_equal_a_direct_computation(exact_up_to, weighted):
    y, p = _calibrated(7, 200_000)
    p = np.clip(p * 1.3 - 0.1, 0, 1)  # miscalibrated, so that the errors are far from 0
    w = np.random.default_rng(8).uniform(0.1, 3.0, p.size) if weighted else None
    acc = se.BinaryAccumulator(exact_up_to=exact_up_to)
    acc.update_many(y, p, w)
    r = acc.get()
    for n_bins in (15, 7):
        ece, mce = _ece_by_hand(y, p, n_bins, w)
        tol = 1e-12 if exact_up_to is None else 1e-3
        assert r.ece(n_bins) == pytest.approx(ece, abs=tol, rel=0)
        assert r.mce(n_bins) == pytest.approx(mce, abs=tol, rel=0)
    assert r.ece() > 0.01
    assert r.to_dict()["ece"] == r.ece() and r.to_dict()["mce"] == r.mce()


def test_weighted_quantile_edges_are_weighted_quantiles():
    rng = np.random.default_rng(9)
    p = np.round(rng.random(2_000), 3)
    y = rng.random(p.size) < p
    w = rng.uniform(0.1, 3.0, p.size)
    acc = se.BinaryAccumulator(exact_up_to=None)
    acc.update_many(y, p, w)
    bins = acc.get().calibration_bins(4, "quantile")
    want = np.quantile(p, np.linspace(0, 1, 5), method="inverted_cdf", weights=w)
    np.testing.assert_array_equal(bins.edges, want)
    assert bins.counts.sum() == pytest.approx(w.sum(), rel=1e-12)


def test_a_perfectly_calibrated_model_has_small_errors_and_an_overconfident_one_large():
    y, p = _calibrated(10, 100_000)
    good, bad = se.BinaryAccumulator(), se.BinaryAccumulator()
    good.update_many(y, p)
    bad.update_many(y, np.clip(0.5 + 1.8 * (p - 0.5), 0, 1))
    assert good.get().ece() < 0.01 < 0.05 < bad.get().ece()
    assert good.get().brier < bad.get().brier


# -- scores outside [0, 1], no events -------------------------------------------------------
def test_scores_outside_unit_interval_give_nan_with_a_reason_until_taken_out():
    acc = se.BinaryAccumulator()
    acc.update_many([1, 0, 1], [0.9, 0.2, 0.7])
    acc.update(0, 1.5)
    r = acc.get()
    assert math.isnan(r.brier) and math.isnan(r.log_loss) and math.isnan(r.ece()) and math.isnan(r.mce())
    assert "1 of 4 events score outside [0, 1]" in r.calibration_issue
    with pytest.raises(ValueError, match="outside"):
        r.calibration_curve()
    assert r.auc == 0.5 and r.n == 4  # the other metrics count the event
    acc.revert(0, 1.5)
    assert acc.get().calibration_issue is None
    assert acc.get().brier == pytest.approx(brier_score_loss([1, 0, 1], [0.9, 0.2, 0.7]), rel=1e-12)
    acc.update(1, -np.inf)
    assert "outside" in acc.get().calibration_issue


@pytest.mark.parametrize(
    ("scores", "outside"),
    [([0.2, 0.7, 3.0], True), ([-2.0, 0.2, 0.7], True), ([0.2, 0.7, 0.9], False)],
    ids=["above", "below", "inside"],
)
def test_without_sums_the_bins_range_decides_whether_calibration_is_defined(scores, outside):
    acc = se.BinaryAccumulator(exact_up_to=0)
    acc.update_many([0, 1, 1], scores)
    r = dataclasses.replace(acc.get(), calibration=None)  # as a state that kept no sums gives it
    low, high = float(r.edges[0]), float(r.edges[-1])  # the lower edges of the end bins, from every edge
    assert (low < 0.0 or high > 1.0) == outside
    if not outside:
        assert r.calibration_issue.startswith("no calibration sums") and 0 <= r.ece() < 1
    else:
        want = f"scores range over [{low!r}, {high!r}], outside [0, 1]: calibration metrics need probabilities"
        assert r.calibration_issue == want and math.isnan(r.ece()) and math.isnan(r.mce())


def test_no_events_gives_nan_and_empty_curves():
    r = se.BinaryAccumulator().get()
    assert math.isnan(r.brier) and math.isnan(r.log_loss) and math.isnan(r.ece())
    prob_true, prob_pred = r.calibration_curve()
    assert prob_true.size == prob_pred.size == 0


@pytest.mark.parametrize(
    ("kwargs", "exc", "words"),
    [
        ({"n_bins": 0}, ValueError, ["n_bins", "0"]),
        ({"n_bins": 2.5}, TypeError, ["n_bins", "2.5"]),
        ({"n_bins": True}, TypeError, ["n_bins", "True"]),
        ({"strategy": "equal"}, ValueError, ["strategy", "'equal'"]),
    ],
)
def test_calibration_queries_name_a_bad_argument(kwargs, exc, words):
    acc = se.BinaryAccumulator()
    acc.update_many([1, 0], [0.9, 0.2])
    with pytest.raises(exc) as info:
        acc.get().calibration_curve(**kwargs)
    assert all(w in str(info.value) for w in words), str(info.value)
    if "n_bins" in kwargs:
        with pytest.raises(exc):
            acc.get().ece(kwargs["n_bins"])


# -- the sums: compiled pass, twin, merging, state ----------------------------------------
@pytest.mark.skipif(SPEEDUPS is None, reason="the compiled paths are not in use")
@pytest.mark.parametrize("labels", ["bool", "int64", "one"])
def test_compiled_sums_equal_the_numpy_twin_bit_for_bit(labels, monkeypatch):
    rng = np.random.default_rng(11)
    p = np.concatenate([SPECIAL, rng.random(5_000), rng.random(100) ** 30, 1 - rng.random(100) ** 30, [2.0, -0.5]])
    y = rng.random(p.size) < 0.5
    lab = {"bool": y, "int64": y.astype(np.int64), "one": True}[labels]
    w = rng.uniform(0, 2, p.size)
    compiled, compiled_weighted = CalibrationSums.of(p, lab, None), CalibrationSums.of(p, lab, w)
    monkeypatch.setattr(calibration, "sums_kernel", lambda: False)
    assert CalibrationSums.of(p, lab, None) == compiled  # whole units: the same integers
    twin_weighted = CalibrationSums.of(p, lab, w)  # floats summed in another order: to rounding
    assert twin_weighted.brier == pytest.approx(compiled_weighted.brier, rel=1e-13)
    assert twin_weighted.log_loss == pytest.approx(compiled_weighted.log_loss, rel=1e-13)
    positives = p.size if labels == "one" else int(y.sum())
    assert (compiled.events, compiled.positives, compiled.outside) == (p.size, positives, 2)


@settings(max_examples=100, deadline=None)
@given(
    scores=st.lists(st.floats(allow_nan=False, width=64), min_size=0, max_size=50),
    seed=st.integers(0, 2**32 - 1),
    start=st.sampled_from(["empty", "whole", "weighted"]),
    layout=st.sampled_from(["buffer", "strided", "int8"]),
)
def test_sums_plus_a_buffer_of_events_equal_the_sums_combined(scores, seed, start, layout):
    """plus_events (one compiled call for a per-event buffer) gives combined(of(...)) exactly: for any scores,
    after whole or weighted sums, and for batches it leaves to combined (strided scores, labels not bools)."""
    rng = np.random.default_rng(seed)
    x = np.array(scores, dtype=np.float64)
    is_pos = rng.random(x.size) < 0.5
    if layout == "strided":
        x, is_pos = np.repeat(x, 2)[::2], np.repeat(is_pos, 2)[::2]
    elif layout == "int8":
        is_pos = is_pos.astype(np.int8)
    before = {
        "empty": CalibrationSums(),
        "whole": CalibrationSums.of(rng.random(20), rng.random(20) < 0.5, None),
        "weighted": CalibrationSums.of(rng.random(20), rng.random(20) < 0.5, rng.random(20)),
    }[start]
    assert before.plus_events(x, is_pos) == before.combined(CalibrationSums.of(x, is_pos, None))


def test_sums_of_the_counts_of_distinct_scores_equal_the_sums_of_the_events():
    y, p = _calibrated(12, 3_000, rounding=2)
    acc = se.BinaryAccumulator(exact_up_to=None)
    acc.update_many(y, p)
    r = acc.get()
    assert CalibrationSums.of_counts(r.values, r.neg, r.pos) == r.calibration


@settings(max_examples=100, deadline=None)
@given(
    scores=st.lists(st.floats(allow_nan=False, width=64), min_size=0, max_size=40, unique=True),
    counts=st.lists(st.tuples(st.integers(0, 2**40), st.integers(0, 2**40)), min_size=40, max_size=40),
)
def test_sums_of_counts_by_score_equal_the_events_they_stand_for(scores, counts):
    """of_counts (each score's terms times its counts, compiled with 128-bit products) equals its numpy twin,
    and, for counts small enough to spell out, the sums of the events themselves: any floats, scores outside
    [0, 1], counts up to 2^40 a score."""
    values = np.array(scores, dtype=np.float64)
    neg = np.array([a for a, _ in counts[: values.size]], dtype=np.int64)
    pos = np.array([b for _, b in counts[: values.size]], dtype=np.int64)
    got = CalibrationSums.of_counts(values, neg, pos)
    small_neg, small_pos = neg % 4, pos % 4
    small = CalibrationSums.of_counts(values, small_neg, small_pos)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(calibration, "sums_kernel", lambda: False)
        assert CalibrationSums.of_counts(values, neg, pos) == got
    events = np.concatenate([np.repeat(values, small_neg), np.repeat(values, small_pos)])
    labels = np.arange(events.size) >= small_neg.sum()
    assert small == CalibrationSums.of(events, labels, None)


@pytest.mark.skipif(SPEEDUPS is None, reason="the compiled paths are not in use")
@settings(max_examples=100, deadline=None)
@given(
    scores=st.lists(st.floats(allow_nan=False, width=64), min_size=1, max_size=700),
    seed=st.integers(0, 2**32 - 1),
    exact_up_to=st.sampled_from([0, 5]),
    labels_as=st.sampled_from([np.bool_, np.uint8, np.int64]),
)
def test_sums_added_as_a_batch_is_counted_in_bins_equal_a_pass_of_their_own(scores, seed, exact_up_to, labels_as):
    """A batch counted whole in range-free bins gets its calibration sums from the counting pass: the sums of a
    pass of their own, for any floats (outside [0, 1] too), label types, and a batch that leaves the exact
    regime at its first score or later."""
    rng = np.random.default_rng(seed)
    x = np.array(scores, dtype=np.float64)
    y = (rng.random(x.size) < 0.4).astype(labels_as)
    acc = se.BinaryAccumulator(exact_up_to=exact_up_to)
    acc.update_many(y, x)
    assert acc.get().calibration == CalibrationSums.of(x, y.astype(bool), None)
    more = rng.random(300)
    acc.update_many(np.ones(300, dtype=labels_as), more)  # into bins that exist
    both = CalibrationSums.of(np.concatenate([x, more]), np.concatenate([y.astype(bool), np.ones(300, bool)]), None)
    assert acc.get().calibration == both


@pytest.mark.skipif(SPEEDUPS is None, reason="the compiled paths are not in use")
def test_count_range_free_sums_only_unweighted_events_counted_in():
    from streameval.state import LabelledCounts

    bins = se.Bins.range_free()
    counts = LabelledCounts(2 * bins.n_codes)
    function, scheme = bins.compiled_kernel()
    x, labels = np.array([0.2, 0.7]), np.array([1, 0], dtype=np.uint8)
    sums = np.zeros(7, dtype=np.uint64)
    done, refused, _ = counts.count_compiled(function, x, labels, 1, (0, 0, False, 0.0), scheme, 0, 2, sums)
    assert (done, refused) == (2, False) and int(sums[6]) == 2 and int(sums[5]) == 1
    want = CalibrationSums.of(x, labels == 1, None)
    assert (int(sums[1]) << 64 | int(sums[0]), int(sums[3]) << 64 | int(sums[2])) == (want.brier, want.log_loss)
    args = (x, labels, labels.itemsize, counts._base, counts._page_of_row, counts._n_stored, counts._counts, False)
    for sign, short in ((-1, sums), (1, sums[:6])):  # taking out, and a short buffer
        with pytest.raises(ValueError, match="count kernel: inconsistent arguments"):
            function(*args, sign, 0, 0, False, 0.0, 0, 2, np.zeros(0), np.zeros(0), np.zeros(0), 0, *scheme, short)


@pytest.mark.skipif(SPEEDUPS is None, reason="the compiled paths are not in use")
def test_calibration_sums_counts_refuses_inconsistent_counts():
    values = np.array([0.1, 0.2])
    with pytest.raises(ValueError, match="calibration_sums_counts: inconsistent arguments"):
        SPEEDUPS.calibration_sums_counts(values, np.array([1], dtype=np.int64), np.array([1, 2], dtype=np.int64))
    with pytest.raises(ValueError, match="calibration_sums_counts: a count below 0"):
        SPEEDUPS.calibration_sums_counts(values, np.array([1, -1], dtype=np.int64), np.array([1, 2], dtype=np.int64))


@pytest.mark.parametrize("rounding", [2, 3])
def test_a_batch_of_many_events_a_score_is_summed_by_score_as_by_event(rounding):
    """A batch with several events a slot of its exact table gets its sums from the table's counts (after less
    before): the state of the events summed one by one, and scikit-learn's Brier score and log loss."""
    y, p = _calibrated(21, 60_000, rounding=rounding)
    acc = se.BinaryAccumulator()
    acc.update_many(y[:1_000], p[:1_000])
    acc.update_many(y[1_000:], p[1_000:])  # into the table as it is: summed by score
    assert acc.get().is_exact
    assert acc.get().calibration == CalibrationSums.of(p, y, None)
    first = se.BinaryAccumulator()
    first.update_many(y, p)  # the first batch, into a new table: summed by score too
    assert first.get().calibration == CalibrationSums.of(p, y, None)
    assert acc.get().brier == pytest.approx(brier_score_loss(y, p), rel=1e-12)
    assert acc.get().log_loss == pytest.approx(log_loss(y, p), rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), cuts=st.lists(st.integers(0, 400), min_size=0, max_size=4))
def test_shards_merged_in_any_order_equal_one_stream_exactly(seed, cuts):
    y, p = _calibrated(seed, 400)
    whole = se.BinaryAccumulator(exact_up_to=50)
    whole.update_many(y, p)
    bounds = [0, *sorted(cuts), 400]
    shards = []
    for a, b in itertools.pairwise(bounds):
        s = se.BinaryAccumulator(exact_up_to=50)
        s.update_many(y[a:b], p[a:b])
        shards.append(s)
    assert se.BinaryAccumulator.merge_all(shards) == whole
    assert se.BinaryAccumulator.merge_all(shards[::-1]) == whole
    assert (se.BinaryAccumulator.merge_all(shards) - shards[0]).get().calibration == (
        se.BinaryAccumulator.merge_all(shards[1:]).get().calibration if len(shards) > 1 else CalibrationSums()
    )


def test_windows_give_the_brier_score_of_the_events_in_them():
    y, p = _calibrated(13, 3_000)
    window = se.Sliding(se.BinaryAccumulator, size=500)
    for yi, pi in zip(y.tolist(), p.tolist(), strict=True):
        window.update(yi, pi)
    r = window.get()
    assert r.brier == pytest.approx(brier_score_loss(y[-500:], p[-500:]), rel=1e-12)
    assert r.log_loss == pytest.approx(log_loss(y[-500:], p[-500:]), rel=1e-9)
    decayed = se.Decayed(se.BinaryAccumulator, half_life=1e12)  # no decay to speak of: the plain numbers
    decayed.update_many(y, p)
    assert decayed.get().brier == pytest.approx(brier_score_loss(y, p), rel=1e-9)


def test_state_round_trips_with_the_sums_and_refuses_inconsistent_ones():
    y, p = _calibrated(14, 2_000)
    acc = se.BinaryAccumulator(exact_up_to=0)
    acc.update_many(y, p)
    again = se.from_bytes(acc.to_bytes())
    assert again == acc and again.get().brier == acc.get().brier
    assert pickle.loads(pickle.dumps(acc)) == acc
    weighted = se.BinaryAccumulator()
    weighted.update_many(y, p, w=np.full(p.size, 0.5))
    assert se.from_dict(se.to_dict(weighted)).get().log_loss == pytest.approx(log_loss(y, p), rel=1e-9)
    for field, value, words in [
        ("events", 5, "events"),
        ("positives", -1, "positives"),
        ("outside", 10**6, "outside"),
        ("brier", 0.5, "whole number"),
        ("log_loss", "x", "log_loss"),
    ]:
        d = se.to_dict(acc)
        d["state"]["calibration"][field] = value
        with pytest.raises(se.FormatError, match=words):
            se.from_dict(d)


V2 = Path(__file__).parent / "data" / "format_v2"


def test_files_of_format_version_2_load_with_sums_where_the_exact_scores_give_them():
    import json

    expected = json.loads((V2 / "expected.json").read_text())
    for name in ("binary_exact", "binary_binned", "binary_exact_weighted", "scores"):
        acc = se.load(V2 / f"{name}.sevl")
        got = acc.get().to_dict()
        want = {k: (math.nan if v == "nan" else v) for k, v in expected[name].items()}
        # the upper bound of AP now lets each bin's positives tie (scikit-learn's AP of tied scores): it can
        # only have grown since these files were written, by less than the bounds' width
        old_upper = want.pop("average_precision_upper", None)
        if old_upper is not None:
            width = old_upper - got["average_precision_lower"]
            assert old_upper <= got["average_precision_upper"] <= old_upper + width
        assert {k: got[k] for k in want} == pytest.approx(want, rel=1e-12, abs=0, nan_ok=True)
        assert se.from_bytes(acc.to_bytes()) == acc
    exact = se.load(V2 / "binary_exact.sevl")
    r = exact.get()
    assert r.calibration == CalibrationSums.of_counts(r.values, r.neg, r.pos) and 0 < r.brier < 0.3
    binned = se.load(V2 / "binary_binned.sevl").get()
    assert math.isnan(binned.brier) and "no calibration sums were kept" in binned.calibration_issue
    assert 0 < binned.ece() < 0.1  # the curves come from the histogram: still defined


# -- scores(), drift, river, plots --------------------------------------------------------
@pytest.mark.parametrize("exact_up_to", [None, 0], ids=["exact", "binned"])
def test_scores_gives_the_score_accumulator_of_the_events(exact_up_to):
    y, p = _calibrated(15, 50_000)
    acc = se.BinaryAccumulator(exact_up_to=exact_up_to)
    acc.update_many(y, p)
    for label, keep in ((None, slice(None)), (1, y), (0, ~y)):
        got = acc.scores(label)
        ref = se.ScoreAccumulator(exact_up_to=exact_up_to)
        ref.update_many(p[keep])
        assert got.get().n == ref.get().n
        assert got.get().quantile(0.3) == ref.get().quantile(0.3)
        mean_tol = 0 if exact_up_to is None else 1e-4  # binned: every score at its bin's middle
        assert got.get().mean == pytest.approx(p[keep].mean(), rel=1e-12, abs=mean_tol)
        assert se.drift(ref, acc if label is None else got).ks == 0.0
    with pytest.raises(ValueError, match="label"):
        acc.scores(label=2)


def test_scores_of_a_weighted_accumulator_count_events_and_weigh_them():
    acc = se.BinaryAccumulator()
    acc.update_many([1, 0, 1], [0.9, 0.2, 0.4], w=[2.0, 1.0, 0.5])
    s = acc.scores().get()
    assert (s.n, s.weight) == (3, 3.5)
    assert acc.scores(label=1).get().n == 2


def test_river_log_loss_equals_rivers_own_and_brier_and_ece_equal_the_report():
    from river import metrics

    from streameval import river as se_river

    y, p = _calibrated(16, 3_000)
    ours, theirs, brier, ece = se_river.LogLoss(), metrics.LogLoss(), se_river.Brier(), se_river.ECE(n_bins=10)
    for yi, pi in zip(y.tolist(), p.tolist(), strict=True):
        for m in (ours, theirs, brier, ece):
            m.update(yi, pi)
    assert ours.get() == pytest.approx(theirs.get(), rel=1e-9)
    assert brier.get() == pytest.approx(brier_score_loss(y, p), rel=1e-12)
    assert ece.get() == pytest.approx(_ece_by_hand(y, p, 10)[0], abs=1e-12)
    assert not (ours.bigger_is_better or brier.bigger_is_better or ece.bigger_is_better)
    assert ece.clone().n_bins == 10
    ours.revert(y[-1], p[-1])
    theirs.revert(y[-1], p[-1])
    assert ours.get() == pytest.approx(theirs.get(), rel=1e-9)
    p_dict = {True: 0.3, False: 0.7}  # the dict of predict_proba_one
    ours.update(True, p_dict)
    theirs.update(True, p_dict)
    assert ours.get() == pytest.approx(theirs.get(), rel=1e-9)


def test_reliability_diagram_draws_the_curve():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from streameval.plot import plot_calibration

    y, p = _calibrated(17, 5_000)
    acc = se.BinaryAccumulator()
    acc.update_many(y, p)
    ax = plot_calibration([acc.get(), acc.get()], names=["a", "b"], n_bins=8)
    prob_true, prob_pred = acc.get().calibration_curve(8)
    line = ax.get_lines()[1]
    np.testing.assert_array_equal(line.get_xdata(), prob_pred)
    np.testing.assert_array_equal(line.get_ydata(), prob_true)
    assert "Brier" in ax.get_legend().get_texts()[1].get_text()


def test_a_bin_whose_edges_pass_one_is_clipped_to_one_and_bins_within_it_are_taken_as_they_are():
    """Uniform bins over [0, 1]: a score of 1.0 is counted in the bin above the last, whose upper edge is inf;
    clipped, its scores sit at 1.0 (the last calibration bin then holds 0.9's bin spread over [0.75, 1] and
    1.0). Range-free bins of probabilities below 1 lie within [0, 1] and are read as they are: the same bins
    as from their edges clipped."""
    from streameval import binary_report, calibration

    acc = se.BinaryAccumulator(bins=se.Bins.uniform(0.0, 1.0, 4), exact_up_to=0)
    acc.update_many([1, 0, 1, 0, 1], [1.0, 0.0, 0.5, 0.25, 0.9])
    r = acc.get()
    assert r.bins.upper_edges(r.keys)[-1] == np.inf
    prob_true, prob_pred = r.calibration_curve(4)
    assert prob_true.tolist() == [0.0, 0.0, 1.0, 1.0]
    assert prob_pred.tolist() == [0.125, 0.375, 0.625, (0.875 + 1.0) / 2]
    assert r.ece(4) == pytest.approx((0.125 + 0.375 + 0.375 + 2 * 0.0625) / 5, abs=1e-15)
    rng = np.random.default_rng(3)
    binned = se.BinaryAccumulator(exact_up_to=0)
    binned.update_many(rng.random(5000) < 0.4, np.concatenate([[0.0], rng.random(4999)]))  # in [0, 1)
    r = binned.get()
    lo, hi = r.edges, r.bins.upper_edges(r.keys)
    assert binary_report._within_zero_and_one(lo) is lo and binary_report._within_zero_and_one(hi) is hi
    clipped = calibration.calibration_bins(np.clip(lo, 0, 1), np.clip(hi, 0, 1), r.neg, r.pos, False, 15, "uniform")
    for got, want in zip(r.calibration_bins(15), clipped, strict=True):
        np.testing.assert_array_equal(got, want)
