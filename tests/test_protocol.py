"""The accumulator protocol: every kind merges, subtracts, scales, reverts, saves and pickles alike."""

from __future__ import annotations

import math
import pickle
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import streameval as se
from streameval.protocol import AccumulatorBase


# -- every kind, fed the same way ----------------------------------------------------
def _binary_events(rng, n):
    y = rng.random(n) < 0.4
    return (y, np.round(rng.normal(y * 1.0, 1.0), 2))


def _multiclass_events(rng, n):
    return (np.array(["a", "b", "c"])[rng.integers(0, 3, n)], np.round(rng.random((n, 3)), 2))


def _regression_events(rng, n):
    # targets away from 0: a target of 0 makes a MAPE term of 1e15, which no float sum can take back out
    y = np.round(rng.uniform(1.0, 10.0, n), 2)
    return (y, np.round(y + rng.normal(0, 1, n), 2))


def _score_events(rng, n):
    return (np.round(rng.normal(0.5, 0.2, n), 2),)


def _segmented_events(rng, n):
    return (np.array(["eu", "us", "apac"])[rng.integers(0, 3, n)], *_binary_events(rng, n))


def _segmented_regression_events(rng, n):
    return (rng.integers(0, 4, n), *_regression_events(rng, n))


def _paired_events(rng, n):
    y = rng.random(n) < 0.5
    return (y, np.round(rng.random(n), 2), np.round(rng.random(n), 2))


# no float moments: subtraction is exact
INTEGER_STATES = ("binary", "binary-edges", "multiclass", "paired", "segmented")
KINDS = {
    "binary": (lambda: se.BinaryAccumulator(threshold=0.3), _binary_events),
    "binary-edges": (lambda: se.BinaryAccumulator(bins=se.Bins.uniform(-2, 3, 40), threshold=0.33), _binary_events),
    "multiclass": (lambda: se.MulticlassAccumulator(classes=["a", "b", "c"]), _multiclass_events),
    "regression": (se.RegressionAccumulator, _regression_events),
    "paired": (lambda: se.PairedAccumulator(threshold=0.5), _paired_events),
    "scores": (se.ScoreAccumulator, _score_events),
    "scores-binned": (lambda: se.ScoreAccumulator(exact_up_to=0), _score_events),
    "segmented": (lambda: se.Segmented(lambda: se.BinaryAccumulator(threshold=0.3)), _segmented_events),
    "segmented-regression": (lambda: se.Segmented(se.RegressionAccumulator), _segmented_regression_events),
}


def _fed(kind, seed, n, weighted=False):
    make, events = KINDS[kind]
    rng = np.random.default_rng(seed)
    args = events(rng, n)
    w = np.round(rng.uniform(0.1, 3.0, n), 3) if weighted else None
    acc = make()
    acc.update_many(*args, w=w)
    return acc, args, w


def _same_metrics(a, b, rel=1e-9):
    _same_reports(a.get(), b.get(), rel)


def _same_reports(da, db, rel):
    if isinstance(da, se.SegmentedReport):  # the same segments, each with the same metrics, and overall
        assert sorted(map(str, da.segments)) == sorted(map(str, db.segments))
        for segment in da.segments:
            _same_reports(da[segment], db[segment], rel)
        _same_reports(da.overall, db.overall, rel)
        return
    if isinstance(da, se.PairedReport):
        np.testing.assert_allclose(da.counts, db.counts, rtol=rel, atol=1e-9)
        return
    got, want = da.to_dict(), db.to_dict()
    bounded = {se.RegressionReport: ("max_error", "median_absolute_error"), se.ScoreReport: ("min", "max", "median")}
    if type(da) in bounded:  # after taking events out, the extremes are known to a bin
        for name in bounded[type(da)]:
            # a weighted median whose cumulative weight ties one half exactly (weights of 0.001 may sum so) falls
            # to either side once a merge and a subtraction round the sums: one step of the events' 0.01 grid
            step = 0.0100001 if "median" in name else 1e-12
            assert got.pop(name) == pytest.approx(want.pop(name), rel=2**-6, abs=step, nan_ok=True)
    assert got == pytest.approx(want, rel=rel, abs=1e-9, nan_ok=True)


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_satisfies_the_protocol(kind):
    acc = KINDS[kind][0]()
    assert isinstance(acc, se.Accumulator)
    assert acc.kind in ("binary", "multiclass", "regression", "paired", "scores", "segmented")


@pytest.mark.parametrize("kind", list(KINDS))
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n_a=st.integers(0, 300), n_b=st.integers(1, 300), weighted=st.booleans())
@example(seed=441, n_a=30, n_b=146, weighted=True)  # scores: the weighted median's cumulative weight ties one half
def test_subtract_undoes_merge(kind, seed, n_a, n_b, weighted):
    a, _, _ = _fed(kind, seed, n_a, weighted)
    b, _, _ = _fed(kind, seed + 1, n_b, weighted)
    back = (a + b) - b
    if not weighted and kind in INTEGER_STATES:  # integer counts only: exactly the same state
        assert back == a
    _same_metrics(back, a, rel=1e-7)
    in_place = a.copy()
    in_place += b
    in_place -= b
    _same_metrics(in_place, a, rel=1e-7)


@pytest.mark.parametrize("kind", list(KINDS))
def test_check_mergeable_raises_as_merge_does_and_counts_nothing(kind):
    a, _, _ = _fed(kind, 1, 50)
    b, _, _ = _fed(kind, 2, 80)
    before = a.to_bytes(), b.to_bytes()
    a.check_mergeable(b)  # the same kind and configuration: no error
    other = se.RegressionAccumulator() if not kind.endswith("regression") else se.ScoreAccumulator()
    for bad in (other, 3):
        with pytest.raises(TypeError):
            a.check_mergeable(bad)
        with pytest.raises(TypeError):
            a.merge(bad)
    assert (a.to_bytes(), b.to_bytes()) == before


def test_check_mergeable_refuses_what_merge_refuses():
    scores, labels = se.MulticlassAccumulator(), se.MulticlassAccumulator()
    scores.update("a", {"a": 0.7, "b": 0.3})
    labels.update("a", "b")
    pairs = [
        (scores, labels),
        (se.BinaryAccumulator(threshold=0.5), se.BinaryAccumulator(threshold=0.4)),
        (se.PairedAccumulator(threshold=0.5), se.PairedAccumulator()),
        (se.MulticlassAccumulator(classes=["a", "b"]), se.MulticlassAccumulator(classes=["a", "c"])),
    ]
    for one, two in pairs:
        with pytest.raises(ValueError) as by_merge:
            one.merge(two)
        with pytest.raises(ValueError) as by_check:
            one.check_mergeable(two)
        assert str(by_check.value) == str(by_merge.value)


@pytest.mark.parametrize("kind", list(KINDS))
def test_taking_out_what_was_never_added_is_refused_and_changes_nothing(kind):
    a, _, _ = _fed(kind, 1, 50)
    b, _, _ = _fed(kind, 2, 80)
    before = a.to_bytes()
    with pytest.raises(ValueError, match=r"negative|never counted|cannot take out"):
        a -= b
    assert a.to_bytes() == before
    with pytest.raises(ValueError, match=r"negative|never counted|cannot take out"):
        a.subtract(b)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("factor", [0.0, 0.25, 3.0])
def test_scaled_equals_weights_times_the_factor(kind, factor):
    acc, args, w = _fed(kind, 3, 400, weighted=True)
    ref = KINDS[kind][0]()
    ref.update_many(*args, w=w * factor)
    scaled = acc.scaled(factor)
    if factor:
        _same_metrics(scaled, ref, rel=1e-12)
    # their n counts events, whatever the weights
    counts_events = kind in ("regression", "scores", "scores-binned", "segmented-regression")
    assert scaled.n == pytest.approx(acc.n if counts_events else ref.n, rel=1e-12)
    _same_metrics(acc, _fed(kind, 3, 400, weighted=True)[0])  # the original is unchanged
    with pytest.raises(ValueError, match="factor"):
        acc.scaled(-1.0)


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_update_held_before_an_in_place_change_still_counts(kind):
    """A window's log (and any caller) may hold ``acc.update``: after ``-=``, ``+=`` and a revert, the events it
    counts are the accumulator's."""
    acc, args, _ = _fed(kind, 8, 300)
    update = acc.update
    part = KINDS[kind][0]()
    part.update_many(*(a[:100] for a in args))
    acc -= part
    acc += part
    acc -= part
    later = [a[-1].tolist() if isinstance(a[-1], np.ndarray) else a[-1].item() for a in args]
    if kind == "multiclass":  # scores as a mapping: the buffer's compiled path
        later[1] = dict(zip(["a", "b", "c"], later[1], strict=True))
    acc.revert(*later)
    for _ in range(3):
        update(*later)
    want = KINDS[kind][0]()
    want.update_many(*(a[100:] for a in args))
    for _ in range(2):
        want.update(*later)
    _same_metrics(acc, want)


@pytest.mark.parametrize("kind", list(KINDS))
def test_revert_takes_one_event_back_out(kind):
    acc, args, _ = _fed(kind, 4, 200)
    rest = KINDS[kind][0]()
    rest.update_many(*(a[:-1] for a in args))
    last = [a[-1].tolist() if isinstance(a[-1], np.ndarray) else a[-1].item() for a in args]
    acc.revert(*last)
    _same_metrics(acc, rest)
    if kind in INTEGER_STATES:
        assert acc == rest
    never = KINDS[kind][0]()
    before = never.to_bytes()
    with pytest.raises(ValueError):
        never.revert(*last)
    assert never.to_bytes() == before


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("weighted", [False, True])
def test_revert_many_takes_a_batch_back_out(kind, weighted):
    """revert_many of some events counted before leaves the accumulator of the others; a batch with an event
    never counted is refused and changes nothing."""
    acc, args, w = _fed(kind, 6, 600, weighted)
    leaving = np.random.default_rng(1).random(600) < 0.4
    rest = KINDS[kind][0]()
    rest.update_many(*(a[~leaving] for a in args), w=None if w is None else w[~leaving])
    acc.revert_many(*(a[leaving] for a in args), w=None if w is None else w[leaving])
    _same_metrics(acc, rest)
    if kind in INTEGER_STATES and not weighted:
        assert acc == rest
    before = acc.to_bytes()
    with pytest.raises(ValueError):  # every event again, those that left too: more than are left
        acc.revert_many(*args, w=w)
    assert acc.to_bytes() == before


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("weighted", [False, True])
def test_state_round_trips_and_pickles_compactly(kind, weighted):
    acc, _, _ = _fed(kind, 5, 5000, weighted)
    state = acc.to_state()
    assert type(acc).from_state(state) == acc
    again = pickle.loads(pickle.dumps(acc))
    assert again == acc and type(again) is type(acc)
    assert len(pickle.dumps(acc)) < 1.5 * len(acc.to_bytes()) + 200


def test_a_pickle_is_about_the_size_of_the_bytes():
    acc = se.BinaryAccumulator()
    rng = np.random.default_rng(0)
    y = rng.random(10**6) < 0.3
    acc.update_many(y, 1 / (1 + np.exp(-rng.normal(y * 2.0 - 1.0, 1.5))))
    assert len(pickle.dumps(acc)) < 1.3 * len(acc.to_bytes())
    assert len(pickle.dumps(se.BinaryAccumulator())) < 300


@pytest.mark.parametrize("kind", list(KINDS))
def test_from_state_refuses_an_inconsistent_state(kind):
    acc, _, _ = _fed(kind, 6, 100)
    state = acc.to_state()
    broken = dict(state)
    broken.pop(next(iter(broken)))
    with pytest.raises(se.FormatError):
        type(acc).from_state(broken)
    with pytest.raises(se.FormatError):
        type(acc).from_state({**state, "weighted": "maybe"})


@pytest.mark.parametrize("kind", list(KINDS))
def test_sliding_window_of_any_kind_equals_its_last_events(kind):
    make, events = KINDS[kind]
    rng = np.random.default_rng(7)
    args = events(rng, 900)
    win = se.Sliding(make, size=150)
    i = 0
    while i < 900:
        step = int(rng.choice([1, 1, 1, 40, 333]))
        if step == 1:
            win.update(*(a[i].tolist() if isinstance(a[i], np.ndarray) else a[i].item() for a in args))
        else:
            win.update_many(*(a[i : i + step] for a in args))
        i = min(900, i + step)
        fresh = make()
        fresh.update_many(*(a[max(0, i - 150) : i] for a in args))
        _same_metrics(win.accumulator(), fresh, rel=1e-9)
        assert win.n == min(i, 150)


@pytest.mark.parametrize("kind", ["multiclass", "regression", "paired"])
def test_time_window_and_decay_take_every_kind(kind):
    make, events = KINDS[kind]
    rng = np.random.default_rng(8)
    args = events(rng, 400)
    t = np.arange(400.0)
    win = se.TimeWindow(make, width=100.0, panes=4)
    win.update_many(*args, t=t)
    fresh = make()
    fresh.update_many(*(a[300:] for a in args))
    _same_metrics(win.accumulator(), fresh)
    dec = se.Decayed(make, half_life=50.0, by="time")
    dec.update_many(*args, t=t)
    ref = make()
    ref.update_many(*args, w=np.exp2((t - t[-1]) / 50.0))
    _same_metrics(dec.accumulator(), ref, rel=1e-9)


# -- a kind the package has never seen ------------------------------------------------
class CountingAccumulator(AccumulatorBase):
    """Counts events per label: the smallest kind that implements the protocol."""

    kind: ClassVar[str] = "test-counting"

    def __init__(self) -> None:
        self.counts: dict[str, float] = {}

    def update(self, label: str, w: float = 1.0) -> None:
        if not isinstance(label, str):
            raise TypeError(f"label must be a str, got {label!r}")
        self.counts[label] = self.counts.get(label, 0) + w

    def update_many(self, labels: Any, w: Any = None) -> None:
        labels = list(labels)
        weights = [1.0] * len(labels) if w is None else list(np.broadcast_to(w, len(labels)))
        trial = self.copy()
        for label, weight in zip(labels, weights, strict=True):
            trial.update(label, float(weight))
        self.counts = trial.counts

    def revert(self, label: str, w: float = 1.0) -> None:
        one = CountingAccumulator()
        one.update(label, w)
        self -= one

    def get(self) -> dict[str, float]:
        return {k: v for k, v in sorted(self.counts.items()) if v}

    @property
    def n(self) -> float:
        return sum(self.counts.values())

    def copy(self) -> CountingAccumulator:
        new = CountingAccumulator()
        new.counts = dict(self.counts)
        return new

    def _check_mergeable(self, other: Any) -> None:
        if not isinstance(other, CountingAccumulator):
            raise TypeError("another kind")

    def _merge_in(self, other: CountingAccumulator, sign: int) -> None:
        out = dict(self.counts)
        for k, v in other.counts.items():
            out[k] = out.get(k, 0) + sign * v
            if out[k] < -1e-9:
                raise ValueError("cannot take out counts that were not added")
        self.counts = out

    def _scale_in(self, factor: float) -> None:
        self.counts = {k: v * factor for k, v in self.counts.items()}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CountingAccumulator) and self.get() == other.get()

    def to_state(self) -> dict[str, Any]:
        return {"labels": sorted(self.counts), "counts": np.array([self.counts[k] for k in sorted(self.counts)])}

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> CountingAccumulator:
        if set(state) != {"labels", "counts"} or len(state["labels"]) != len(state["counts"]):
            raise se.FormatError("a counting state holds labels and their counts")
        acc = cls()
        acc.counts = {str(k): float(v) for k, v in zip(state["labels"], state["counts"], strict=True)}
        return acc


def test_a_new_kind_works_in_windows_the_format_and_averaging(tmp_path):
    stream = ["x", "y", "x", "z", "x", "y", "y", "z", "x", "x"]
    win = se.Sliding(CountingAccumulator, size=4)
    for label in stream:
        win.update(label)
    assert win.get() == {"x": 2.0, "y": 1.0, "z": 1.0}
    timed = se.TimeWindow(CountingAccumulator, width=4.0, panes=2)
    timed.update_many(stream, t=np.arange(10.0))
    assert timed.get() == {"x": 2.0, "y": 1.0, "z": 1.0}  # times 6..9
    dec = se.Decayed(CountingAccumulator, half_life=1.0)
    dec.update_many(["x", "y"])
    assert dec.get() == {"x": 0.5, "y": 1.0}
    acc = CountingAccumulator()
    acc.update_many(stream)
    acc.save(tmp_path / "counts.sevl")
    assert se.load(tmp_path / "counts.sevl") == acc
    assert pickle.loads(pickle.dumps(acc)) == acc
    assert CountingAccumulator.merge_all([acc, acc]).n == 20


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    bins=st.sampled_from(["range-free", "uniform", "edges"]),
    threshold=st.sampled_from([0.5, 0.37, -math.inf]),
)
def test_binned_events_reverted_leave_the_counts_of_the_others(seed, bins, threshold):
    """In the binned regime a revert takes one event out of its bin (and of the count apart at or above the
    threshold in the threshold's bin), and revert_many a batch in one pass (the count kernel with a sign of -1,
    then every count checked): the counts of the stream without them; a batch of more than the bins hold is
    refused whole and changes nothing."""
    scheme = {"range-free": se.Bins.range_free(), "uniform": se.Bins.uniform(0.0, 1.0, 8),
              "edges": se.Bins.from_edges([0.0, 0.3, 0.37, 0.5, 1.0])}[bins]  # fmt: skip
    rng = np.random.default_rng(seed)
    y = rng.random(400) < 0.4
    s = np.round(rng.random(400), int(rng.integers(1, 4)))
    s[:20] = threshold if math.isfinite(threshold) else 0.25  # scores at the threshold itself
    acc = se.BinaryAccumulator(bins=scheme, threshold=threshold, exact_up_to=0)
    acc.update_many(y, s)
    way = rng.integers(0, 3, 400)  # 0: stays, 1: reverted one by one, 2: in one batch
    for label, score in zip(y[way == 1].tolist(), s[way == 1].tolist(), strict=True):
        acc.revert(label, score)
    acc.revert_many(y[way == 2], s[way == 2])
    rest = se.BinaryAccumulator(bins=scheme, threshold=threshold, exact_up_to=0)
    rest.update_many(y[way == 0], s[way == 0])
    assert acc == rest
    before = acc.to_bytes()
    with pytest.raises(ValueError, match="cannot take out"):
        acc.revert_many(y, s)  # every event, those gone too: more than the bins hold
    assert acc.to_bytes() == before


def test_a_binned_revert_refuses_what_its_bin_and_the_threshold_did_not_count():
    """Binned, an event is known by its bin, its label and, in the threshold's bin, its side of the threshold:
    a revert (and a subtraction) of an event that no count of those holds is refused and changes nothing; one
    like a counted event in its bin is taken out as that one."""
    acc = se.BinaryAccumulator(bins=se.Bins.uniform(0.0, 1.0, 8), threshold=0.37, exact_up_to=0)
    acc.update_many([1, 1, 0, 0], [0.30, 0.36, 0.37, 0.9])  # the threshold's bin is [0.25, 0.375)
    before = acc.to_bytes()
    for label, score in ((1, 0.37), (0, 0.30), (0, 0.6)):  # above the threshold, below it, an empty bin
        with pytest.raises(ValueError, match="cannot take out"):
            acc.revert(label, score)
        assert acc.to_bytes() == before
        one = se.BinaryAccumulator(bins=se.Bins.uniform(0.0, 1.0, 8), threshold=0.37, exact_up_to=0)
        one.update(label, score)
        with pytest.raises(ValueError, match="cannot take out"):
            acc -= one
        assert acc.to_bytes() == before
    with pytest.raises(ValueError, match="cannot take out"):  # a batch: the first event leaves the bin's
        acc.revert_many([0, 1], [0.30, 0.36])  # negatives fewer than those at or above the threshold
    assert acc.to_bytes() == before
    acc.revert(0, 0.95)  # the bin of 0.9: its counts as without that event (its calibration terms are 0.95's)
    rest = se.BinaryAccumulator(bins=se.Bins.uniform(0.0, 1.0, 8), threshold=0.37, exact_up_to=0)
    rest.update_many([1, 1, 0], [0.30, 0.36, 0.37])
    got, want = acc.get(), rest.get()
    assert (got.tp, got.fp, got.tn, got.fn) == (want.tp, want.fp, want.tn, want.fn) == (0, 1, 0, 2)
    assert got.neg.tolist() == want.neg.tolist() and got.pos.tolist() == want.pos.tolist()


@pytest.mark.parametrize("exact_up_to", [8192, 0])
def test_a_revert_among_stored_per_event_updates_takes_out_the_right_event(exact_up_to):
    """Per-event updates stored and not yet filed: reverting an event filed before, or one of those stored, or
    one never counted (refused, nothing changed) gives the counts of the stream it describes."""
    rng = np.random.default_rng(3)
    y, s = rng.random(400) < 0.4, np.round(rng.random(400), 3)
    acc = se.BinaryAccumulator(threshold=0.5, exact_up_to=exact_up_to)
    acc.update_many(y[:300], s[:300])
    for i in range(300, 400):
        acc.update(bool(y[i]), float(s[i]))
    acc.revert(bool(y[5]), float(s[5]))  # filed before
    acc.revert(bool(y[350]), float(s[350]))  # still stored
    keep = np.ones(400, dtype=bool)
    keep[[5, 350]] = False
    want = se.BinaryAccumulator(threshold=0.5, exact_up_to=exact_up_to)
    want.update_many(y[keep], s[keep])
    assert acc == want
    before = acc.to_bytes()
    with pytest.raises(ValueError, match="cannot take out"):
        acc.revert(True, 2.5)
    assert acc.to_bytes() == before


def _binary_stream(rng, n):
    decimals = int(rng.integers(1, 4))  # ties, at most 1,001 distinct scores: the default budget holds them
    return (rng.random(n) < 0.4, np.round(rng.random(n), decimals))


REVERTED_ONE_BY_ONE = {  # kind: (accumulator, events, an event never counted)
    "binary": (lambda: se.BinaryAccumulator(threshold=0.5), _binary_stream, (True, 2.5)),
    "binary-binned": (lambda: se.BinaryAccumulator(threshold=0.5, exact_up_to=0), _binary_stream, (True, 2.5)),
    "scores": (se.ScoreAccumulator, _score_events, (1e6,)),
    "scores-binned": (lambda: se.ScoreAccumulator(exact_up_to=0), _score_events, (1e6,)),
    "regression": (se.RegressionAccumulator, _regression_events, (1.0, 1e6)),  # an absolute error never counted
    # classes not in their sorted order: ties of the highest score go to the class first in that order
    "multiclass": (lambda: se.MulticlassAccumulator(classes=["b", "c", "a"]), _multiclass_events, ("a", [5.0] * 3)),
    "multiclass-binned": (
        lambda: se.MulticlassAccumulator(classes=["a", "b", "c"], exact_up_to=0),
        _multiclass_events,
        ("b", [5.0] * 3),
    ),
    "multiclass-labels": (
        lambda: se.MulticlassAccumulator(classes=["a", "b", "c"]),
        lambda rng, n: (_multiclass_events(rng, n)[0], _multiclass_events(rng, n)[0]),
        ("a", "z"),  # a class it does not know
    ),
    "paired": (lambda: se.PairedAccumulator(threshold=0.5), _paired_events, (2, 0.9, 0.1)),  # a label it lacks
    "paired-labels": (
        lambda: se.PairedAccumulator(pos_label="yes", neg_label="no"),
        lambda rng, n: tuple(np.array(["no", "yes"])[rng.integers(0, 2, n)] for _ in range(3)),
        ("yes", "maybe", "no"),
    ),
}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(list(REVERTED_ONE_BY_ONE)))
def test_events_reverted_one_by_one_leave_the_state_of_the_others(seed, kind):
    """A per-event revert takes its event out of the counts filed at once, without filing the per-event updates
    stored since; its calibration terms (binary), or its moments and sums and the range or largest error (scores,
    predictions), follow at the next filing (multiclass and paired have counts alone). Whatever comes between (updates,
    reads, copies, merges, pickles), the accumulator has the metrics of one fed the events left (integer states
    equal; extremes within their bins, and bounds of them), and a revert of an event not counted is refused with
    nothing changed."""
    make, events, never = REVERTED_ONE_BY_ONE[kind]
    rng = np.random.default_rng(seed)
    stream = list(zip(*(a.tolist() for a in events(rng, int(rng.integers(300, 1500)))), strict=True))
    live: list[tuple[Any, ...]] = []

    def left() -> Any:
        ref = make()
        if live:
            ref.update_many(*(np.array(c) for c in zip(*live, strict=True)))
        return ref

    acc = make()
    for event in stream:
        step = rng.random()
        if step < 0.5 or not live:
            acc.update(*event)
            live.append(event)
        elif step < 0.93:
            acc.revert(*live.pop(int(rng.integers(len(live)))))
        elif step < 0.95:
            before = acc.to_bytes()
            with pytest.raises(ValueError):
                acc.revert(*never)
            assert acc.to_bytes() == before
        elif step < 0.97:
            _same_metrics(acc, left(), rel=1e-7)
        elif step < 0.99:
            _same_metrics(acc.copy() + make(), left(), rel=1e-7)
        else:
            _same_metrics(pickle.loads(pickle.dumps(acc)), left(), rel=1e-7)
    _same_metrics(acc, left(), rel=1e-7)
    got = acc.get()
    if kind.startswith(("binary", "multiclass", "paired")):
        assert acc == left()
    elif live and kind == "regression":  # a bound of the largest error left
        assert got.max_error >= max(abs(p - y) for y, p in live)
    elif live:  # bounds of the scores left, exact while the scores are
        low, high = min(s for (s,) in live), max(s for (s,) in live)
        assert got.min <= low and got.max >= high
        if kind == "scores":
            assert (got.min, got.max) == (low, high)


def test_a_revert_of_a_stored_event_whose_bin_a_filed_one_shares_leaves_the_filed_one():
    """The event reverted waits among the per-event updates, and the counts filed hold another of its bin (or
    absolute error): that count leaves at once, and the moments lose the event reverted only once the stored
    updates are in, so the filed event's moments stay whole."""
    scores = se.ScoreAccumulator(bins=se.Bins.uniform(0.0, 1.0, 4), exact_up_to=0)
    scores.update_many([0.1])
    scores.update(0.2)  # stored, in the bin of 0.1
    scores.revert(0.2)
    got = scores.get()
    assert (got.n, got.std) == (1, 0.0) and got.mean == pytest.approx(0.1, rel=1e-12)
    reg = se.RegressionAccumulator()
    reg.update_many([1.0], [1.5])
    reg.update(2.0, 1.5)  # stored, with the same absolute error
    reg.revert(2.0, 1.5)
    got = reg.get()
    assert got.n == 1 and (got.bias, got.mae, got.mape) == pytest.approx((0.5, 0.5, 0.5), rel=1e-12)


def test_a_multiclass_revert_that_one_class_lacks_changes_nothing():
    """An event whose class, predicted class and first class's score were counted, but whose other scores were
    not: the first class's count goes back in, and the revert is refused with nothing changed."""
    acc = se.MulticlassAccumulator(classes=["a", "b", "c"])
    acc.update_many(["a", "b", "a"], [[0.9, 0.05, 0.05], [0.2, 0.7, 0.1], [0.6, 0.3, 0.1]])
    before = acc.to_bytes()
    with pytest.raises(ValueError, match="cannot take out"):
        acc.revert("a", {"a": 0.9, "b": 0.06, "c": 0.04})
    assert acc.to_bytes() == before
    acc.revert("a", {"a": 0.9, "b": 0.05, "c": 0.05})  # a mapping, as river's predict_proba_one gives
    rest = se.MulticlassAccumulator(classes=["a", "b", "c"])
    rest.update_many(["b", "a"], [[0.2, 0.7, 0.1], [0.6, 0.3, 0.1]])
    assert acc == rest


def test_many_reverts_without_a_read_keep_little_memory():
    """The calibration terms of events reverted one by one wait for at most one filing's worth of them."""
    rng = np.random.default_rng(4)
    y, s = rng.random(20_000) < 0.3, np.round(rng.random(20_000), 3)
    acc = se.BinaryAccumulator()
    acc.update_many(y, s)
    before = acc.nbytes
    for label, score in zip(y[:12_000].tolist(), s[:12_000].tolist(), strict=True):
        acc.revert(label, score)
        assert acc.nbytes <= before + 9 * 4096 + 4096
    rest = se.BinaryAccumulator()
    rest.update_many(y[12_000:], s[12_000:])
    assert acc == rest


def test_a_binned_batch_that_a_bin_lacks_is_counted_back_in():
    """A batch whose calibration sums could go out but whose bins lack an event: the count kernel took it out,
    found a count below 0, and counted it back in; nothing changed, and the next batch is taken out as usual."""
    acc = se.BinaryAccumulator(bins=se.Bins.uniform(0.0, 1.0, 8), threshold=0.5, exact_up_to=0)
    acc.update_many([1, 1, 1, 0, 0, 0], [0.1, 0.1, 0.1, 0.9, 0.9, 0.9])
    before = acc.to_bytes()
    with pytest.raises(ValueError, match="cannot take out"):
        acc.revert_many([1, 0], [0.1, 0.15])  # no negative in the bin of 0.15
    assert acc.to_bytes() == before
    acc.revert_many([1, 0], [0.1, 0.9])
    rest = se.BinaryAccumulator(bins=se.Bins.uniform(0.0, 1.0, 8), threshold=0.5, exact_up_to=0)
    rest.update_many([1, 1, 0, 0], [0.1, 0.1, 0.9, 0.9])
    assert acc == rest


# the kinds that make acc - acc their own way (a paired one takes the protocol's: nothing to compare)
LESS_ITSELF_KINDS = [k for k in KINDS if type(KINDS[k][0]())._less_itself is not AccumulatorBase._less_itself]


@pytest.mark.parametrize("kind", LESS_ITSELF_KINDS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n", [50, 20_000])
def test_an_accumulator_less_itself_is_its_counts_taken_out_of_a_copy(kind, weighted, n):
    """``acc - acc`` (what windows and segments ask for as "empty, in this one's regime") may be made without
    copying the counts: it saves as the copy with its counts taken out does, and counts the next batch as that
    does, exact or binned (20,000 events of 2-decimal scores and more distinct weights leave the exact regime
    for some kinds)."""
    acc, _, _ = _fed(kind, 3, n, weighted)
    made, general = acc - acc, AccumulatorBase._less_itself(acc)
    assert made.to_bytes() == general.to_bytes()
    # events one by one, stored and not yet filed (filing them takes some kinds past their budget): as filed
    make, events = KINDS[kind]
    one_by_one, args = make(), events(np.random.default_rng(5), n)
    weights = np.round(np.random.default_rng(6).uniform(0.1, 3.0, n), 3).tolist() if weighted else [1.0] * n
    for i in range(n):
        one_by_one.update(*(a[i].tolist() if isinstance(a[i], np.ndarray) else a[i].item() for a in args), w=weights[i])
    assert (one_by_one - one_by_one).to_bytes() == AccumulatorBase._less_itself(one_by_one).to_bytes()
    later = KINDS[kind][1](np.random.default_rng(4), 300)
    made.update_many(*later)
    general.update_many(*later)
    assert made.to_bytes() == general.to_bytes()
    assert made == general


def test_a_binary_accumulator_less_itself_keeps_what_its_counts_carry():
    """Weighted counts and counts without calibration sums (a state saved before they existed) carry over into
    ``acc - acc``: its next events are counted as they would be into the copy taken out of itself."""
    acc = se.BinaryAccumulator(exact_up_to=4)
    acc.update_many([1, 0, 1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    assert not acc.get().is_exact
    state = acc.to_state()
    del state["calibration"]
    old = se.BinaryAccumulator.from_state(state)
    weighted = se.BinaryAccumulator()
    weighted.update_many([1, 0], [0.2, 0.4], w=[0.5, 2.0])
    for a in (acc, old, weighted):
        made, general = a - a, AccumulatorBase._less_itself(a)
        made.update_many([1, 0], [0.25, 0.45])
        general.update_many([1, 0], [0.25, 0.45])
        assert made.to_bytes() == general.to_bytes()
        assert made.get().is_exact == a.get().is_exact
    assert math.isnan((old - old).get().brier)


@pytest.mark.parametrize(
    ("make", "event"),
    [
        (lambda: se.BinaryAccumulator(exact_up_to=4), lambda i: (i % 2, i / 10)),
        (lambda: se.ScoreAccumulator(exact_up_to=4), lambda i: (i / 10,)),
        (lambda: se.MulticlassAccumulator(exact_up_to=4), lambda i: ("ab"[i % 2], {"a": i / 10, "b": 1 - i / 10})),
    ],
)
def test_an_accumulator_less_itself_is_in_the_regime_its_stored_updates_take_it_to(make, event):
    """Per-event updates stored, not yet filed, that take the counts past the budget: ``acc - acc`` is binned, as
    the copy that files them and takes them out of itself is."""
    acc = make()
    for i in range(10):
        acc.update(*event(i))
    made, general = acc - acc, AccumulatorBase._less_itself(acc)
    assert made.to_bytes() == general.to_bytes()
    assert "keys" in str(made.to_state())  # binned: keys of bins, not values
