"""Delayed labels: every pair counted once, whatever the order, with bounded memory."""

from __future__ import annotations

import functools
import math
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streameval as se


def _stream(n, seed, delay=50.0, lost=0.1):
    """Predictions at times 0..n-1 and their labels after random delays; some labels never come."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.3
    s = np.round(rng.random(n), 3)
    t_pred = np.arange(n, dtype=float)
    t_label = t_pred + rng.exponential(delay, n) - 5.0  # a few labels come before their prediction
    comes = rng.random(n) >= lost
    events = [(t, 0, i) for i, t in enumerate(t_pred)] + [(t_label[i], 1, i) for i in np.flatnonzero(comes)]
    events.sort()
    return y, s, events, comes


def test_every_pair_counted_once_without_ttl():
    y, s, events, comes = _stream(20_000, 1)
    join = se.LabelJoin(se.BinaryAccumulator())
    for t, kind, i in events:
        if kind == 0:
            join.predict(int(i), float(s[i]), t=t)
        else:
            join.label(int(i), bool(y[i]), t=t)
    direct = se.BinaryAccumulator()
    direct.update_many(y[comes], s[comes])
    assert join.accumulator == direct
    assert join.matched == comes.sum() and join.pending == (~comes).sum() and join.orphans == 0
    assert join.pending_scores.get().n == (~comes).sum()


def test_ttl_expires_late_predictions_and_counts_late_labels():
    y, s, events, comes = _stream(50_000, 2, delay=40.0)
    ttl = 100.0
    join = se.LabelJoin(se.BinaryAccumulator(), ttl=ttl)
    for t, kind, i in events:
        if kind == 0:
            join.predict(int(i), float(s[i]), t=t)
        else:
            join.label(int(i), bool(y[i]), t=t)
    c = join.counts()
    assert c["matched"] + c["expired"] + c["pending"] == 50_000  # every prediction accounted for
    assert c["matched"] + c["late"] + c["orphans"] + c["pending_labels"] == comes.sum()  # every label too
    assert c["late"] > 0 and c["expired"] > c["late"]
    # the matched pairs are exactly those whose label came within the ttl of the prediction
    ordered = sorted(events)
    seen_label, seen_pred, latest, matched = {}, {}, -np.inf, []
    for t, kind, i in ordered:  # a direct, slow replay of the same rule
        latest = max(latest, t)
        for table in (seen_pred, seen_label):
            for k in [k for k, tt in table.items() if tt < latest - ttl]:
                del table[k]
        other = seen_label if kind == 0 else seen_pred
        if i in other:
            del other[i]
            matched.append(i)
        else:
            (seen_pred if kind == 0 else seen_label)[i] = t
    direct = se.BinaryAccumulator()
    direct.update_many(y[matched], s[matched])
    assert join.accumulator == direct and c["matched"] == len(matched)


def test_memory_stays_within_max_pending_and_nothing_is_lost():
    y, s, events, comes = _stream(30_000, 3, delay=500.0)
    join = se.LabelJoin(se.BinaryAccumulator(), max_pending=1_000)
    peak = 0
    for t, kind, i in events:
        if kind == 0:
            join.predict(int(i), float(s[i]), t=t)
        else:
            join.label(int(i), bool(y[i]), t=t)
        peak = max(peak, join.pending + join.pending_labels)
    c = join.counts()
    assert peak == 1_000 and c["evicted"] > 0
    assert c["matched"] + c["expired"] + c["pending"] == 30_000
    assert c["matched"] + c["late"] + c["orphans"] + c["pending_labels"] == comes.sum()


def test_state_saves_and_loads_with_what_waits(tmp_path):
    join = se.LabelJoin(se.BinaryAccumulator(), ttl=10.0, max_pending=50)
    join.predict("a", 0.9, t=0.0)
    join.label("b", 0, t=1.0)
    join.predict(7, 0.4, t=2.0)
    join.label("a", 1, t=3.0)
    join.save(tmp_path / "join.sevl")
    back = se.load(tmp_path / "join.sevl")
    assert isinstance(back, se.LabelJoin) and back.counts() == join.counts()
    back.predict("b", 0.3, t=4.0)  # the label that waited is still there
    back.label(7, 1, t=5.0)
    assert back.matched == 3 and back.accumulator.get().n == 3


@pytest.mark.parametrize(
    ("call", "exc", "words"),
    [
        (lambda j: j.predict(["unhashable"], 0.5, t=1.0), TypeError, ["key", "unhashable"]),
        (lambda j: j.predict("k", float("nan"), t=1.0), ValueError, ["score", "nan"]),
        (lambda j: j.predict("k", 0.5), ValueError, ["t is required"]),
        (lambda j: j.predict("k", 0.5, t=float("inf")), ValueError, ["t", "inf"]),
        (lambda j: j.label("k", 2, t=1.0), ValueError, ["y", "2"]),
        (lambda j: j.label("w", 2, t=1.0), ValueError, ["y", "2"]),
        (lambda j: j.predict("w", 0.5, t=1.0), ValueError, ["already has a prediction", "'w'"]),
        (lambda j: j.label("z", 1, t=1.0), ValueError, ["already has a label", "'z'"]),
    ],
)
def test_bad_input_names_the_argument_and_changes_nothing(call, exc, words):
    join = se.LabelJoin(se.BinaryAccumulator(), ttl=100.0)
    join.predict("w", 0.4, t=0.0)
    join.label("z", 0, t=0.0)
    before = (join.counts(), join.accumulator.to_bytes())
    with pytest.raises(exc) as info:
        call(join)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert (join.counts(), join.accumulator.to_bytes()) == before
    with pytest.raises(ValueError, match="ttl"):
        se.LabelJoin(se.BinaryAccumulator(), ttl=0)
    with pytest.raises(ValueError, match="max_pending"):
        se.LabelJoin(se.BinaryAccumulator(), max_pending=0)


@pytest.mark.parametrize("threshold", [0.5, None], ids=["scores", "labels"])
@pytest.mark.parametrize("where", ["accumulator", "segments", "window"])
def test_a_join_into_a_paired_accumulator_counts_both_models_predictions(threshold, where, tmp_path):
    """Two models' predictions of each event (scores with a threshold, or predicted labels), joined with labels
    that come in any order: the same table as the paired accumulator fed the pairs directly, saved and loaded
    with what waits."""
    rng = np.random.default_rng(11)
    n = 400
    y = (rng.random(n) < 0.4).astype(int).tolist()
    if threshold is None:
        a, b = (rng.random(n) < 0.5).astype(int).tolist(), (rng.random(n) < 0.5).astype(int).tolist()
    else:
        a, b = rng.random(n).round(3).tolist(), rng.random(n).round(3).tolist()
    regions = rng.choice(["eu", "us"], n).tolist()

    def make():
        return se.PairedAccumulator(threshold=threshold)

    target = {"accumulator": make, "segments": lambda: se.Segmented(make), "window": lambda: se.Sliding(make, 10**6)}
    join = se.LabelJoin(target[where](), ttl=1e9)
    direct = target[where]()
    segment = (lambda i: {"segment": regions[i]}) if where == "segments" else (lambda i: {})
    order = rng.permutation(2 * n)  # predictions and labels interleaved at random
    for step, k in enumerate(order.tolist()):
        i = k % n
        if k < n:
            join.predict(i, (a[i], b[i]), t=float(step), **segment(i))
        else:
            join.label(i, y[i], t=float(step))
        if step == n and where != "window":  # windows have no state file
            join.save(tmp_path / "join.sevl")
            join = se.load(tmp_path / "join.sevl")
    for i in _matches([(0, 0, k % n) for k in order.tolist()]):
        direct.update(*([regions[i]] if where == "segments" else []), y[i], a[i], b[i])
    assert join.matched == n and join.pending == join.pending_labels == 0
    got, want = join.get(), direct.get()
    if where == "segments":
        assert set(got.segments) == set(want.segments)
        got, want = got.overall, want.overall
    np.testing.assert_array_equal(got.counts, want.counts)
    assert got.mcnemar == want.mcnemar
    pa, pb = (np.asarray(v) if threshold is None else np.asarray(v) >= threshold for v in (a, b))
    by_hand = np.zeros((2, 2, 2), dtype=np.int64)  # [label][model A's prediction][model B's]
    np.add.at(by_hand, (np.asarray(y), pa.astype(int), pb.astype(int)), 1)
    np.testing.assert_array_equal(got.counts, by_hand)


@pytest.mark.parametrize(
    ("make", "call", "exc", "words"),
    [
        (lambda: se.PairedAccumulator(threshold=0.5), lambda j: j.predict("k", 0.3), ValueError, ["two models", "0.3"]),
        (
            lambda: se.PairedAccumulator(threshold=0.5),
            lambda j: j.predict("k", (0.3, 0.4, 0.5)),
            ValueError,
            ["two models"],
        ),
        (
            lambda: se.PairedAccumulator(threshold=0.5),
            lambda j: j.predict("k", (0.3, float("nan"))),
            ValueError,
            ["score", "nan"],
        ),
        (lambda: se.PairedAccumulator(), lambda j: j.predict("k", (1, 2)), ValueError, ["pred_b", "2"]),
        (lambda: se.PairedAccumulator(), lambda j: j.label("k", 2), ValueError, ["2"]),
        (
            lambda: se.Segmented(se.PairedAccumulator),
            lambda j: j.predict("k", "ab", segment="eu"),
            ValueError,
            ["two models", "'ab'"],
        ),
    ],
)
def test_a_bad_pair_of_predictions_names_it_and_changes_nothing(make, call, exc, words):
    join = se.LabelJoin(make())
    join.predict("w", (1, 0), **({"segment": "eu"} if isinstance(join.accumulator, se.Segmented) else {}))
    with pytest.raises(exc):
        call(se.LabelJoin(make()))
    _refused_and_unchanged(join, call, words)


@pytest.mark.parametrize(
    "make",
    [se.ScoreAccumulator, lambda: se.Segmented(se.ScoreAccumulator), lambda: se.Sliding(se.ScoreAccumulator, 10)],
)
def test_a_join_into_scores_alone_is_refused(make):
    """A score accumulator counts no labels: a join into it would count each label as a score (and the prediction
    as its weight). It is refused when made."""
    with pytest.raises(TypeError, match="counts scores alone, with no label to join"):
        se.LabelJoin(make())


def _matches(events):
    """The pairs in the order they match (the later of prediction and label), by an independent simulation."""
    seen, order = set(), []
    for _, _, i in events:
        if i in seen:
            order.append(i)
        else:
            seen.add(i)
    return order


def _feed(join, events, y, s):
    for t, kind, i in events:
        if kind == 0:
            join.predict(int(i), float(s[i]), t=t)
        else:
            join.label(int(i), bool(y[i]), t=t)


def test_a_join_into_windows_and_a_monitor_counts_the_pairs_as_they_match():
    """A sliding window holds the last pairs matched; a time window counts each pair at its prediction's time;
    a monitor records every so many pairs; each against scikit-learn on the same pairs."""
    import pickle

    from sklearn.metrics import roc_auc_score

    y, s, events, comes = _stream(3000, 4, delay=30.0)
    order = _matches(events)
    sliding = se.LabelJoin(se.Sliding(se.BinaryAccumulator, size=500))
    timed = se.LabelJoin(se.TimeWindow(se.BinaryAccumulator, width=400.0, panes=4))
    monitored = se.LabelJoin(se.Monitor(se.BinaryAccumulator(), every=250))
    locked = se.LabelJoin(se.Locked(se.Decayed(se.BinaryAccumulator, half_life=1e9)))
    for join in (sliding, timed, monitored, locked):
        _feed(join, events, y, s)
        assert join.matched == len(order) == comes.sum()
    last = np.array(order[-500:])
    assert sliding.accumulator.get().n == 500
    assert sliding.accumulator.get().auc == pytest.approx(roc_auc_score(y[last], s[last]), abs=1e-15)
    # a pair is counted at its prediction's time (the event's index here); the window ends at the latest such
    # time counted, and a pair whose prediction time is already out of the window when it matches is late
    latest, counted, late = -1, [], 0
    for i in order:
        if i // 100 < latest // 100 - 3:
            late += 1
            continue
        latest = max(latest, i)
        counted.append(i)
    kept = np.array([i for i in counted if i // 100 > latest // 100 - 4])
    window = timed.accumulator.get()
    assert (window.n, timed.accumulator.n_late) == (kept.size, late)
    assert window.auc == pytest.approx(roc_auc_score(y[kept], s[kept]), abs=1e-15)
    records = monitored.accumulator.to_records()
    assert [r["n"] for r in records] == list(range(250, len(order) + 1, 250))
    for r in records:
        first = np.array(order[: r["n"]])
        assert r["auc"] == pytest.approx(roc_auc_score(y[first], s[first]), abs=1e-15)
    ages = len(order) - 1 - np.arange(len(order))  # decayed by events: the k-th pair matched weighs 2**(-age / h)
    assert locked.accumulator.get().n == pytest.approx(np.sum(2.0 ** (-ages / 1e9)), rel=1e-12)
    back = pickle.loads(pickle.dumps(sliding))
    assert back.accumulator.get().auc == sliding.accumulator.get().auc and back.counts() == sliding.counts()
    with pytest.raises(TypeError, match="pickle it instead"):
        sliding.to_state()


def test_a_join_into_windows_checks_labels_and_times_first():
    timed = se.LabelJoin(se.TimeWindow(se.BinaryAccumulator, width=10.0))
    with pytest.raises(ValueError, match="t is required"):
        timed.predict("a", 0.5)
    window = se.LabelJoin(se.Sliding(functools.partial(se.BinaryAccumulator, pos_label="x", neg_label="y"), size=10))
    with pytest.raises(ValueError, match="'z'"):
        window.label("k", "z")  # before its prediction: refused as the window's accumulator would refuse it
    assert window.counts()["pending_labels"] == 0
    with pytest.raises(TypeError, match="accumulator must be"):
        se.LabelJoin(object())


def test_a_join_into_segments_counts_each_pair_in_its_segment_and_saves_what_waits(tmp_path):
    """Segments with late labels (a region per prediction, crossed with a device too): each segment equals a
    Segmented accumulator fed the matched pairs directly; a save in the middle keeps the waiting predictions'
    segments; the fairness measures follow."""
    y, s, events, comes = _stream(6000, 7, delay=40.0)
    rng = np.random.default_rng(8)
    region = rng.choice(["eu", "us", "apac"], y.size).tolist()
    device = rng.choice(["web", "app"], y.size).tolist()
    direct = se.Segmented(se.BinaryAccumulator)
    crossed = se.LabelJoin(se.Segmented(se.BinaryAccumulator), ttl=1e9)
    window = se.LabelJoin(se.Sliding(_segmented_binary, size=300))
    order = _matches(events)
    half = len(events) // 2
    for step, (t, kind, i) in enumerate(events):
        if step == half:  # saved and loaded with predictions (and their segments) and labels waiting
            crossed.save(tmp_path / "join.sevl")
            crossed = se.load(tmp_path / "join.sevl")
        for join, seg in ((crossed, (region[i], device[i])), (window, region[i])):
            if kind == 0:
                join.predict(int(i), float(s[i]), t=t, segment=seg)
            else:
                join.label(int(i), bool(y[i]), t=t)
    for i in order:
        direct.update((region[i], device[i]), bool(y[i]), float(s[i]))
    got = crossed.accumulator
    assert sorted(got.segments) == sorted(direct.segments) and all(got[k] == direct[k] for k in direct.segments)
    assert crossed.get().demographic_parity_difference == direct.get().demographic_parity_difference
    assert crossed.pending_scores.get().n == crossed.pending == int((~comes).sum())
    last = se.Segmented(se.BinaryAccumulator)
    for i in order[-300:]:
        last.update(region[i], bool(y[i]), float(s[i]))
    assert all(window.accumulator.accumulator()[k] == last[k] for k in last.segments)


def _segmented_binary():
    return se.Segmented(se.BinaryAccumulator)


def _segmented_classes():
    return se.LabelJoin(se.Segmented(lambda: se.MulticlassAccumulator(classes=["cat", "dog", "bird"])))


@pytest.mark.parametrize(
    ("make", "call", "words"),
    [
        (
            lambda: se.LabelJoin(se.Segmented(se.BinaryAccumulator)),
            lambda j: j.predict("k", 0.5),
            ["segment is required"],
        ),
        (
            lambda: se.LabelJoin(se.BinaryAccumulator()),
            lambda j: j.predict("k", 0.5, segment="eu"),
            ["segment", "'eu'"],
        ),
        (
            lambda: se.LabelJoin(se.Segmented(se.BinaryAccumulator)),
            lambda j: j.predict("k", 0.5, segment=["eu"]),
            ["segment", "hashable"],
        ),
        (lambda: se.LabelJoin(se.Segmented(se.BinaryAccumulator)), lambda j: j.label("k", 3), ["y", "3"]),
        (_segmented_classes, lambda j: j.label("k", "fox"), ["y", "'fox'"]),
        (_segmented_classes, lambda j: j.predict("k", {"cat": 0.5, "fox": 0.5}, segment="us"), ["'fox'"]),
        (_segmented_classes, lambda j: j.predict("k", [0.5, 0.5], segment="us"), ["scores", "3", "2"]),
        (_segmented_classes, lambda j: j.predict("k", {"cat": 0.5, "dog": 0.5, "bird": 0.0}), ["segment"]),
    ],
)
def test_a_bad_segment_or_label_names_it_and_changes_nothing(make, call, words):
    join = make()
    kwargs = {"segment": "eu"} if isinstance(join.accumulator, se.Segmented) else {}
    classes = isinstance(join.accumulator, se.Segmented) and join.accumulator.empty_segment().kind == "multiclass"
    join.predict("w", {"cat": 0.2, "dog": 0.3, "bird": 0.5} if classes else 0.4, **kwargs)
    _refused_and_unchanged(join, call, words)


def _refused_and_unchanged(join, call, words):
    """``call(join)`` raises an error naming each of ``words``, and the join's counts and state stay as they were."""
    before = (join.counts(), join.to_state())
    with pytest.raises((TypeError, ValueError)) as info:
        call(join)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert (join.counts(), join.to_state()) == before


@pytest.mark.parametrize("segmented", [False, True])
@pytest.mark.parametrize("form", ["mapping", "sequence", "predicted class"])
def test_a_join_into_a_multiclass_accumulator_counts_class_scores_or_classes(form, segmented, tmp_path):
    """Predictions as class-score mappings, sequences or predicted classes, labels late or never; saved and
    loaded halfway: the join equals a multiclass accumulator (or one per segment) fed the matched pairs, and
    accuracy matches scikit-learn's on them."""
    from sklearn.metrics import accuracy_score

    classes = ["cat", "dog", "bird"]
    rng = np.random.default_rng(12)
    n = 3000
    truth = rng.choice(classes, n).tolist()
    probs = rng.dirichlet([1.0, 1.0, 1.0], n)
    _, _, events, comes = _stream(n, 13, delay=30.0)

    def prediction(i):
        if form == "mapping":
            return dict(zip(classes, probs[i].tolist(), strict=True))
        if form == "sequence":
            return probs[i].tolist()
        return classes[int(np.argmax(probs[i]))]

    def make():
        if segmented:
            return se.Segmented(lambda: se.MulticlassAccumulator(classes=classes))
        return se.MulticlassAccumulator(classes=classes)

    region = ["eu", "us", "apac"]
    join = se.LabelJoin(make(), ttl=1e9)
    for step, (t, kind, i) in enumerate(events):
        if step == len(events) // 2:
            join.save(tmp_path / "join.sevl")
            join = se.load(tmp_path / "join.sevl")
        if kind == 0:
            join.predict(int(i), prediction(i), t=t, segment=region[i % 3] if segmented else None)
        else:
            join.label(int(i), truth[i], t=t)
    direct = make()
    order = _matches(events)
    for i in order:
        direct.update(*([region[i % 3]] if segmented else []), truth[i], prediction(i))
    assert join.accumulator == direct and join.matched == len(order) == comes.sum()
    predicted = [classes[int(np.argmax(probs[i]))] for i in order]
    report = join.get().overall if segmented else join.get()
    assert report.accuracy == pytest.approx(accuracy_score([truth[i] for i in order], predicted), abs=1e-15)
    if segmented:
        in_us = [k for k, i in enumerate(order) if i % 3 == 1]
        us = accuracy_score([truth[order[k]] for k in in_us], [predicted[k] for k in in_us])
        assert join.get()["us"].accuracy == pytest.approx(us, abs=1e-15)
    with pytest.raises(TypeError, match="pending_scores"):
        join.pending_scores  # noqa: B018 - class scores are not one score each


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda j: j.predict("k", {"cat": 0.4, "dog": 0.3, "bird": 0.2, "fox": 0.1}), ["fox"]),
        (lambda j: j.predict("k", {"cat": 0.5, "dog": 0.5}), ["bird"]),
        (lambda j: j.predict("k", {}), ["empty"]),
        (lambda j: j.predict("k", [0.5, 0.5]), ["scores", "3", "2"]),
        (lambda j: j.label("k", "fox"), ["fox"]),
        (lambda j: j.predict("w", {"cat": 0.1, "dog": 0.1, "bird": 0.8}), ["already has a prediction"]),
        (lambda j: j.predict("k", "cat"), ["class scores or predicted labels"]),  # one mode, as the accumulator
    ],
)
def test_a_bad_multiclass_prediction_or_label_names_it_and_changes_nothing(call, words):
    join = se.LabelJoin(se.MulticlassAccumulator(classes=["cat", "dog", "bird"]))
    join.predict("w", {"cat": 0.7, "dog": 0.2, "bird": 0.1})
    join.label("z", "dog")
    _refused_and_unchanged(join, call, words)


@pytest.mark.parametrize(
    ("make", "index", "value", "words"),
    [
        (lambda: se.LabelJoin(se.BinaryAccumulator()), 0, "nan", ["waiting[0]", "score", "NaN"]),
        (lambda: se.LabelJoin(se.BinaryAccumulator()), 1, {"int": 7}, ["waiting[1]", "y", "7"]),
        (lambda: se.LabelJoin(se.MulticlassAccumulator(classes=["a", "b"])), 0,
         {"scores": [[{"str": "zz"}, 0.5]]}, ["waiting[0]", "'zz'"]),
        (lambda: se.LabelJoin(se.MulticlassAccumulator(classes=["a", "b"])), 1, {"str": "zz"}, ["waiting[1]", "'zz'"]),
        (lambda: se.LabelJoin(se.Segmented(se.BinaryAccumulator)), 0, [0.5, {"float": float("inf")}],
         ["waiting[0]"]),
    ],
)  # fmt: skip
def test_a_state_whose_waiting_prediction_or_label_the_accumulator_would_refuse_is_a_format_error(
    make, index, value, words
):
    """What waits in a saved join is checked on loading, as predict and label check it: else the pair would be
    refused only when it matches, and the prediction would wait for ever."""
    join = make()
    segment = {"segment": "eu"} if isinstance(join.accumulator, se.Segmented) else {}
    prediction = {"a": 0.5, "b": 0.5} if isinstance(join.accumulator, se.MulticlassAccumulator) else 0.5
    join.predict("p", prediction, **segment)
    join.label("l", "b" if isinstance(join.accumulator, se.MulticlassAccumulator) else 1)
    state = se.to_dict(join)
    assert repr(se.from_dict(state).to_state()) == repr(join.to_state())  # (t is nan without a ttl)
    state["state"]["waiting"][index][2] = value
    with pytest.raises(se.FormatError) as info:
        se.from_dict(state)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


@pytest.mark.parametrize("where", ["accumulator", "window", "monitor", "segments"])
@pytest.mark.parametrize("held", ["scores", "classes"])
def test_a_prediction_of_the_other_kind_than_the_accumulator_holds_is_refused_at_once(where, held):
    """An accumulator that already holds predicted classes takes no class scores (and the reverse): the join
    refuses such a prediction when it comes, not its label later, and nothing waits for ever."""
    classes = ["a", "b"]
    event = ("a", "b") if held == "classes" else ("a", {"a": 0.3, "b": 0.7})
    other = {"a": 0.2, "b": 0.8} if held == "classes" else "b"

    def make():
        return se.MulticlassAccumulator(classes=classes)

    target = {
        "accumulator": make, "window": lambda: se.Sliding(make, size=10),
        "monitor": lambda: se.Monitor(make(), every=5), "segments": lambda: se.Segmented(make),
    }[where]()  # fmt: skip
    segment = {"segment": "us"} if where == "segments" else {}
    target.update(*(["eu"] if where == "segments" else []), *event)
    join = se.LabelJoin(target)
    with pytest.raises(ValueError, match=r"counts (scores|labels), got (labels|scores)"):
        join.predict("k", other, **segment)
    assert join.counts() == dict.fromkeys(join.counts(), 0)  # nothing waits
    join.predict("k", event[1], **segment)  # the kind it holds
    join.label("k", "b")
    assert join.counts()["matched"] == 1 and join.pending == 0


@pytest.mark.parametrize("first", ["prediction", "label"])
def test_a_pair_the_accumulator_refuses_at_its_match_changes_nothing(first):
    """With classes learnt as they come, a score sequence is checked when its pair is counted: a pair refused
    then (three scores, one class learnt) leaves the join as it was, expiries due at that time included."""
    join = se.LabelJoin(se.MulticlassAccumulator(), ttl=2.0)
    join.label("old", "b", t=0.0)  # older than the ttl by time 2.5: an orphan once an event of that time counts
    if first == "prediction":
        join.predict("k", [0.2, 0.3, 0.5], t=1.5)
    else:
        join.label("k", "a", t=1.5)
    before = join.to_state()
    with pytest.raises(ValueError, match="one score per class"):
        if first == "prediction":
            join.label("k", "a", t=2.5)
        else:
            join.predict("k", [0.2, 0.3, 0.5], t=2.5)
    assert join.to_state() == before and join.orphans == 0 and join.accumulator.get().n == 0
    join.predict("new", "a", t=2.5)  # the same time in a call that succeeds: "old" leaves now
    assert (join.orphans, join.pending) == (1, 1 + (first == "prediction"))


def test_what_waited_longest_expires_first_when_a_key_waits_again_at_the_same_time():
    """Expiries follow the waits' arrival: a key evicted and predicted again at the same time expires after the
    keys that came before its second prediction, so it is the one the join remembers (its label is late)."""
    join = se.LabelJoin(se.BinaryAccumulator(), ttl=2.0, max_pending=2)
    for key in ["a", "b", "c", "a"]:  # the third evicts "a", its second prediction evicts "b"
        join.predict(key, 0.5, t=0.0)
    assert (join.expired, join.evicted, join.pending) == (2, 2, 2)
    join.label("a", 1, t=3.0)  # "c" then "a" expire; the two keys remembered are "c" and "a"
    assert (join.expired, join.late, join.pending_labels) == (4, 1, 0)
    join.label("b", 1, t=3.0)  # forgotten: it waits for a prediction
    assert (join.late, join.pending_labels) == (1, 1)


class _JoinModel:
    """The join's rules, written plainly: what waits is a list in arrival order, expiries scan it whole."""

    def __init__(self, ttl, max_pending):
        self.ttl, self.max_pending = ttl, max_pending
        self.waiting = OrderedDict()  # key -> (what, value, t)
        self.expired_keys = OrderedDict()
        self.latest = -math.inf
        self.counts = dict.fromkeys(["matched", "expired", "evicted", "orphans", "late"], 0)
        self.pairs = []

    def _stale(self, t_waiting, now):
        return self.ttl is not None and t_waiting < max(self.latest, now) - self.ttl

    def _give_up(self, key):
        what, _, _ = self.waiting.pop(key)
        if what == "prediction":
            self.counts["expired"] += 1
            self.expired_keys[key] = None
            while len(self.expired_keys) > self.max_pending:
                self.expired_keys.popitem(last=False)
        else:
            self.counts["orphans"] += 1

    def _advance(self, now):
        if self.ttl is not None:
            self.latest = max(self.latest, now)
            old = [k for k, (_, _, t) in self.waiting.items() if t < self.latest - self.ttl]
            for key in sorted(old, key=lambda k: self.waiting[k][2]):  # by time, then arrival (a stable sort)
                self._give_up(key)

    def _wait(self, key, what, value, now):
        self.waiting[key] = (what, value, now)
        while len(self.waiting) > self.max_pending:
            self._give_up(next(iter(self.waiting)))
            self.counts["evicted"] += 1

    def event(self, what, key, value, now):
        waiting = self.waiting.get(key)
        if waiting is not None and waiting[0] == what and not self._stale(waiting[2], now):
            raise ValueError("waits already")
        if what == "label" and value not in (0, 1):
            raise ValueError("not a label")
        self._advance(now)
        waiting = self.waiting.get(key)
        if waiting is not None:
            self.pairs.append((value, waiting[1]) if what == "label" else (waiting[1], value))
            del self.waiting[key]
            self.counts["matched"] += 1
        elif what == "label" and key in self.expired_keys:
            del self.expired_keys[key]
            self.counts["late"] += 1
        else:
            self._wait(key, what, value, now)
        if what == "label":
            self._advance(now)

    def summary(self):
        pending = sum(1 for what, _, _ in self.waiting.values() if what == "prediction")
        return {**self.counts, "pending": pending, "pending_labels": len(self.waiting) - pending}


_JOIN_EVENTS = st.lists(
    st.tuples(
        st.sampled_from(["prediction", "label"]),
        st.integers(0, 5),
        st.sampled_from([0.0, 0.0, 0.3, 1.0, 2.5, -0.5]),
        st.integers(0, 3),
        st.booleans(),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(events=_JOIN_EVENTS, ttl=st.sampled_from([None, 1.0, 3.0]), max_pending=st.sampled_from([1, 2, 3, 1000]))
def test_the_join_follows_its_rules_written_plainly(events, ttl, max_pending):
    """Against a plain model of the rules (expiry by time then arrival, eviction of the oldest, the latest
    expired keys remembered): the same refusals and counts after every event, a state saved and loaded on the
    way, and the accumulator equal to one fed the model's pairs."""
    join, model = se.LabelJoin(se.BinaryAccumulator(), ttl=ttl, max_pending=max_pending), _JoinModel(ttl, max_pending)
    now = 0.0
    for what, key, step, pick, reload in events:
        now += step
        value = [0.1, 0.5, 0.9, 0.35][pick] if what == "prediction" else [0, 1, 1, 2][pick]
        t = now if ttl is not None else None
        refused = []
        for target, call in ((join, getattr(join, "predict" if what == "prediction" else "label")), (model, None)):
            try:
                call(key, value, t=t) if call is not None else model.event(what, key, value, now)
            except ValueError:
                refused.append(target is join)
        assert refused in ([], [True, False]), refused
        assert join.counts() == model.summary()
        if reload:
            join = se.LabelJoin.from_state(join.to_state())
    reference = se.BinaryAccumulator()
    for y, score in model.pairs:
        reference.update(y, score)
    assert join.accumulator == reference


@pytest.mark.parametrize("where", ["accumulator", "segments", "time window", "monitor"])
def test_a_weighted_prediction_counts_its_pair_with_its_weight(where, tmp_path):
    """``predict(..., w=)``: each pair is counted with its prediction's weight, whichever half comes first, what
    waits keeps its weight through a save and a load, and the pending scores carry it."""
    rng = np.random.default_rng(21)
    n = 300
    y = (rng.random(n) < 0.4).astype(int).tolist()
    s = rng.random(n).round(3).tolist()
    w = rng.choice([0.0, 0.5, 1.0, 2.5], n).tolist()
    regions = rng.choice(["eu", "us"], n).tolist()
    target = {
        "accumulator": se.BinaryAccumulator, "segments": lambda: se.Segmented(se.BinaryAccumulator),
        "time window": lambda: se.TimeWindow(se.BinaryAccumulator, width=1e9),
        "monitor": lambda: se.Monitor(se.BinaryAccumulator(), every=50),
    }[where]  # fmt: skip
    join = se.LabelJoin(target(), ttl=1e9)
    seg = (lambda i: {"segment": regions[i]}) if where == "segments" else (lambda i: {})
    order = rng.permutation(2 * n).tolist()
    for step, k in enumerate(order):
        i = k % n
        if k < n:
            join.predict(i, s[i], t=float(i), w=w[i], **seg(i))
        else:
            join.label(i, y[i], t=float(step))
        if step == n and where in ("accumulator", "segments"):
            pending = [i for i in range(n) if join._waiting.get(i, (None,))[0] == 0]
            scores = join.pending_scores
            assert (scores.n, scores.get().weight) == (len(pending), pytest.approx(sum(w[i] for i in pending)))
            join.save(tmp_path / "join.sevl")
            join = se.load(tmp_path / "join.sevl")
    assert join.matched == n
    whole = join.get().overall if where == "segments" else join.get()
    direct = se.BinaryAccumulator()
    direct.update_many(y, s, w)  # the same events with their weights, in one batch
    assert whole.n == pytest.approx(sum(w), rel=1e-12)
    assert (whole.tp, whole.fp) == pytest.approx((direct.get().tp, direct.get().fp), rel=1e-12)
    assert whole.auc == pytest.approx(direct.get().auc, abs=1e-12)


def test_a_bad_weight_names_it_and_changes_nothing_and_an_old_state_loads():
    join = se.LabelJoin(se.BinaryAccumulator(), ttl=10.0)
    join.predict("w", 0.4, t=0.0, w=2.0)
    join.label("z", 0, t=0.0)
    for bad, words in ((-1.0, ["w", ">= 0"]), (float("nan"), ["w", "nan"]), (float("inf"), ["w", "finite"]),
                       ("2", ["w", "real number"])):  # fmt: skip
        _refused_and_unchanged(join, lambda j, bad=bad: j.predict("k", 0.5, t=1.0, w=bad), words)
    state = join.to_state()
    assert [item[4:] for item in state["waiting"]] == [[2.0], []]  # a weight only where it is not 1
    state["waiting"][0] = state["waiting"][0][:4]  # a state written before weights: each prediction weighs 1
    old = se.LabelJoin.from_state(state)
    old.label("w", 1, t=1.0)
    assert old.get().n == 1
    state["waiting"][1] = [*state["waiting"][1], 2.0]  # a weight on a label: refused
    with pytest.raises(se.FormatError, match=r"waiting\[1\] w"):
        se.LabelJoin.from_state(state)


@settings(max_examples=60, deadline=None)
@given(events=_JOIN_EVENTS, ttl=st.sampled_from([None, 1.0, 3.0]), max_pending=st.sampled_from([1, 3, 1000]),
       cuts=st.lists(st.integers(1, 8), max_size=20))  # fmt: skip
def test_batches_of_predictions_and_labels_equal_the_events_one_by_one(events, ttl, max_pending, cuts):
    """predict_many and label_many over runs of the same events equal predict and label one by one: the same
    counts and the same accumulator, and a batch with a refusal in it changes nothing (what waits copied before
    the batch or, here, its changes journalled)."""
    from streameval import join as join_module

    copy_up_to = join_module._COPY_UP_TO
    join_module._COPY_UP_TO = 0  # journalled: the copy is the simpler way, tried by the other tests
    try:
        _batches_equal_the_events_one_by_one(events, ttl, max_pending, cuts)
    finally:
        join_module._COPY_UP_TO = copy_up_to


def _batches_equal_the_events_one_by_one(events, ttl, max_pending, cuts):
    one, batched = (se.LabelJoin(se.BinaryAccumulator(), ttl=ttl, max_pending=max_pending) for _ in range(2))
    now, rows = 0.0, []
    for what, key, step, pick, _ in events:
        now += step
        value = [0.1, 0.5, 0.9, 0.35][pick] if what == "prediction" else [0, 1, 1, 2][pick]
        rows.append((what, key, value, now if ttl is not None else None))
    runs, start = [], 0  # runs of one kind of event, cut where cuts say
    for i in range(1, len(rows) + 1):
        if i == len(rows) or rows[i][0] != rows[start][0] or (cuts and i - start >= cuts[len(runs) % len(cuts)]):
            runs.append(rows[start:i])
            start = i
    for run in runs:
        refused = None
        for what, key, value, t in run:  # one by one, up to the first refusal
            try:
                (one.predict if what == "prediction" else one.label)(key, value, t=t)
            except ValueError as exc:
                refused = exc
                break
        before = batched.to_state()
        keys, values, times = [r[1] for r in run], [r[2] for r in run], [r[3] for r in run]
        try:
            if run[0][0] == "prediction":
                batched.predict_many(keys, values, t=None if ttl is None else times)
            else:
                batched.label_many(keys, values, t=None if ttl is None else times)
        except ValueError as exc:
            assert refused is not None and "(at index" in str(exc)
            assert batched.to_state() == before  # nothing changed: put the one-by-one join back there too
            one = se.LabelJoin.from_state(before)
            continue
        assert refused is None
        assert batched.counts() == one.counts()
    assert batched.accumulator == one.accumulator and batched.counts() == one.counts()


@pytest.mark.parametrize("kind", ["segments", "paired", "multiclass", "time window"])
def test_batches_into_other_kinds_equal_the_events_one_by_one(kind):
    rng = np.random.default_rng(5)
    n = 200
    y = (rng.random(n) < 0.4).astype(int).tolist()
    classes = ["a", "b", "c"]
    make, preds, extra = {
        "segments": (lambda: se.Segmented(se.BinaryAccumulator), rng.random(n).tolist(),
                     {"segment": rng.choice(["eu", "us"], n).tolist()}),
        "paired": (lambda: se.PairedAccumulator(threshold=0.5), [tuple(r) for r in rng.random((n, 2)).tolist()], {}),
        "multiclass": (lambda: se.MulticlassAccumulator(classes=classes),
                       [dict(zip(classes, r, strict=True)) for r in rng.dirichlet(np.ones(3), n).tolist()], {}),
        "time window": (lambda: se.TimeWindow(se.BinaryAccumulator, width=1e9), rng.random(n).tolist(),
                        {"t": np.arange(n, dtype=float)}),
    }[kind]  # fmt: skip
    labels = [classes[v] for v in rng.integers(0, 3, n)] if kind == "multiclass" else y
    one, batched = se.LabelJoin(make()), se.LabelJoin(make())
    weights = rng.choice([0.5, 1.0, 2.0], n).tolist()
    for i in range(n):
        one.predict(i, preds[i], w=weights[i], **{k: v[i] for k, v in extra.items()})
    times = {"t": extra["t"]} if "t" in extra else {}
    batched.predict_many(list(range(n)), preds, w=weights, **extra)
    for i in rng.permutation(n).tolist():
        one.label(i, labels[i], **({"t": float(n + i)} if times else {}))
    order = rng.permutation(n).tolist()
    batched.label_many(order, [labels[i] for i in order], **({"t": [float(n + i) for i in order]} if times else {}))
    assert one.counts() == batched.counts() and batched.matched == n
    a, b = one.get(), batched.get()
    if kind == "segments":
        a, b = a.overall, b.overall
    if kind == "paired":
        np.testing.assert_array_equal(a.counts, b.counts)
    else:
        assert a.to_dict() == pytest.approx(b.to_dict(), rel=1e-12, nan_ok=True)


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda j: j.predict_many(["a", "b"], [0.5]), ["scores", "as long as keys (2)", "1"]),
        (lambda j: j.predict_many(["a", "b"], [0.5, 0.6], t=[1.0]), ["t", "as long as keys"]),
        (lambda j: j.predict_many("ab", [0.5, 0.6]), ["keys", "sequence", "str"]),
        (lambda j: j.predict_many(["a", "w"], [0.5, 0.6]), ["already has a prediction", "(at index 1)"]),
        (lambda j: j.predict_many(["a", "b"], [0.5, float("nan")]), ["score", "NaN", "(at index 1)"]),
        (lambda j: j.predict_many(["a", "b"], [0.5, 0.6], w=[1.0, -2.0]), ["w", ">= 0", "(at index 1)"]),
        (lambda j: j.label_many(["z2", "w", "k"], [1, 0, 2]), ["y", "2", "(at index 2)"]),
    ],
)
def test_a_refused_batch_names_the_argument_and_the_index_and_changes_nothing(call, words):
    join = se.LabelJoin(se.BinaryAccumulator())
    join.predict("w", 0.4)
    join.label("z", 0)
    before = join.accumulator.to_bytes()
    _refused_and_unchanged(join, call, words)
    assert join.accumulator.to_bytes() == before


def test_a_tuple_of_segments_is_one_crossed_segment_for_the_whole_batch():
    """A crossed segment is a tuple: given once for a batch, it is every prediction's segment, even when the
    batch is as long as the tuple; one segment a prediction comes in a list."""
    join = se.LabelJoin(se.Segmented(se.BinaryAccumulator))
    join.predict_many([1, 2], [0.9, 0.2], segment=("eu", "web"))
    join.predict_many([3, 4], [0.6, 0.4], segment=[("us", "app"), ("eu", "web")])
    join.label_many([1, 2, 3, 4], [1, 0, 1, 0])
    report = join.get()
    assert report[("eu", "web")].n == 3 and report[("us", "app")].n == 1 and len(report.segments) == 2


def test_memory_stays_bounded_with_a_ttl_when_pairs_match_at_once():
    """Every prediction waits on the ttl's heap of deadlines; a pair that matches (or a key evicted) leaves its
    deadline behind until its time comes. With a long ttl those must not pile up: the heap is rebuilt from what
    waits when it holds mostly deadlines of what left. A join's pickle holds it, so its size tells."""
    import pickle

    def after(n: int) -> int:
        join = se.LabelJoin(se.BinaryAccumulator(), ttl=1e9, max_pending=100)
        for i in range(n):
            join.predict(i, (i % 10) / 10, t=float(i))
            join.label(i, i % 2, t=float(i))
        assert join.matched == n and join.pending == 0
        return len(pickle.dumps(join))

    small, large = after(2_000), after(40_000)
    assert large < 1.2 * small, (small, large)


def test_batches_take_pandas_and_pyarrow_columns_by_position():
    """Keys, scores, labels and times as pandas columns (whatever their index: values by position) and pyarrow
    arrays (their values, not pyarrow scalars): the same join as lists give."""
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(3)
    n = 40
    keys, scores = np.arange(n), np.round(rng.random(n), 2)
    ys, times = (rng.random(n) < 0.5).astype(int), np.sort(rng.random(n) * 10)

    def joined(k, s, y, t):
        join = se.LabelJoin(se.BinaryAccumulator(), ttl=5.0)
        join.predict_many(k, s, t=t)
        join.label_many(k, y, t=t)
        return join

    want = joined(keys.tolist(), scores.tolist(), ys.tolist(), times.tolist())
    assert want.matched > 0 and want.expired > 0
    shifted = keys[::-1] + 100  # an index that is not the positions
    for k, s, y, t in (
        (pd.Series(keys, index=shifted), pd.Series(scores, index=shifted), pd.Series(ys, index=shifted),
         pd.Series(times, index=shifted)),
        (pa.array(keys), pa.array(scores), pa.array(ys), pa.array(times)),
    ):  # fmt: skip
        got = joined(k, s, y, t)
        assert (got.matched, got.expired, got.pending) == (want.matched, want.expired, want.pending)
        assert got.get().to_dict() == want.get().to_dict()


def test_instants_and_a_duration_ttl_join_as_their_seconds():
    """Times given as instants (datetimes, a pandas or numpy datetime64 column, a pyarrow timestamp array) and a
    ttl given as a duration: the same join as their seconds since 1970-01-01 UTC give (a datetime64 column read
    one value at a time would give nanoseconds), per event and in batches; a missing instant is refused by name."""
    import datetime as dt

    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(13)
    n = 400
    keys, scores, ys = np.arange(n), np.round(rng.random(n), 2), (rng.random(n) < 0.5).astype(int)
    secs = np.sort(rng.integers(0, 3600, n)) + 1_770_000_000.0  # whole seconds
    later = secs + rng.integers(0, 120, n)
    column, labelled = pd.Series(pd.to_datetime(secs, unit="s")), pd.Series(pd.to_datetime(later, unit="s"))

    def joined(ttl, predicted_at, labelled_at, one_by_one=False):
        join = se.LabelJoin(se.BinaryAccumulator(), ttl=ttl)
        if one_by_one:
            for i in range(n):
                join.predict(int(keys[i]), scores[i], t=predicted_at[i])
            for i in range(n):
                join.label(int(keys[i]), int(ys[i]), t=labelled_at[i])
        else:
            join.predict_many(keys, scores, t=predicted_at)
            join.label_many(keys, ys, t=labelled_at)
        return join

    want = joined(600.0, secs, later)
    assert want.matched > 0 and want.expired > 0
    for ttl, predicted_at, labelled_at, one_by_one in [
        (dt.timedelta(minutes=10), column, labelled, False),
        (pd.Timedelta("10min"), column.to_numpy(), labelled.to_numpy(), False),
        (np.timedelta64(600, "s"), pa.array(column), pa.array(labelled), False),
        (dt.timedelta(minutes=10), list(column.dt.to_pydatetime()), list(labelled), True),
    ]:
        got = joined(ttl, predicted_at, labelled_at, one_by_one)
        assert (got.matched, got.expired, got.pending) == (want.matched, want.expired, want.pending)
        assert got.get().to_dict() == want.get().to_dict()
    join = se.LabelJoin(se.BinaryAccumulator(), ttl=dt.timedelta(minutes=10))
    with pytest.raises(ValueError, match="t must not be missing, got NaT at index 1"):
        join.predict_many([1, 2], [0.5, 0.5], t=pd.Series([column[0], pd.NaT]))
    assert join.pending == 0


def test_composite_and_day_keys_are_saved_with_what_waits(tmp_path):
    """Keys made of parts (a tuple, such as a user and an event) or days and instants are saved with what waits
    and what expired, and load into a join that goes on as the one never saved does (they were refused at the
    save)."""
    import datetime as dt

    rng = np.random.default_rng(41)
    keys = [("user", int(i)) for i in range(30)] + [dt.date(2026, 5, 1) + dt.timedelta(days=i) for i in range(10)]
    start = dt.datetime(2026, 5, 1, 9)

    def first_half(join):
        for i, key in enumerate(keys):
            join.predict(key, float(rng.random()), t=start + dt.timedelta(minutes=i))
        for i, key in enumerate(keys[::3]):
            join.label(key, int(i % 2), t=start + dt.timedelta(minutes=40 + i))

    def second_half(join):
        for i, key in enumerate(keys[1::3]):
            join.label(key, 1, t=start + dt.timedelta(minutes=60 + i))

    kept, saved = (se.LabelJoin(se.BinaryAccumulator(), ttl=dt.timedelta(minutes=30), max_pending=25) for _ in "ab")
    rng = np.random.default_rng(41)
    first_half(kept)
    rng = np.random.default_rng(41)
    first_half(saved)
    saved.save(tmp_path / "join.sevl")
    loaded = se.load(tmp_path / "join.sevl")
    second_half(kept)
    second_half(loaded)
    counts = lambda j: (j.matched, j.expired, j.evicted, j.orphans, j.late, j.pending, j.pending_labels)  # noqa: E731
    assert counts(loaded) == counts(kept) and kept.late > 0 and kept.matched > 0
    assert loaded.get().to_dict() == kept.get().to_dict()


def test_keys_from_a_column_of_instants_meet_the_same_instants_given_one_by_one():
    """Keys given as a numpy or pandas column of datetime64 (nanoseconds) are the instants themselves, so a
    label given as a datetime or a Timestamp finds its prediction (numpy's own scalars of such a column did not
    equal a datetime)."""
    import datetime as dt

    pd = pytest.importorskip("pandas")
    days = pd.Series(pd.to_datetime(["2026-05-01", "2026-05-02", "2026-05-03"])).astype("datetime64[ns]")
    for keys in (days.to_numpy(), days):
        join = se.LabelJoin(se.BinaryAccumulator())
        join.predict_many(keys, [0.8, 0.3, 0.6])
        join.label(dt.datetime(2026, 5, 1), 1)
        join.label(pd.Timestamp("2026-05-02"), 0)
        join.label_many(np.array(["2026-05-03"], dtype="datetime64[ns]"), [1])
        assert (join.matched, join.pending, join.pending_labels) == (3, 0, 0)


@pytest.mark.parametrize("keeping", ["a copy", "a journal"])
@pytest.mark.parametrize("refusal", ["a bad label at the end", "the accumulator, at the batch's end"])
def test_a_refused_batch_puts_back_what_it_matched_expired_and_forgot_in_their_order(refusal, keeping, monkeypatch):
    """A batch small beside what waits is journalled key by key, not copied whole (a batch of 2 took 68 ms with
    10^6 predictions waiting): a refusal puts back the predictions it matched, the expired keys whose late labels
    it took and what its times expired, in their order of arrival and of expiry, so that later evictions and
    late labels go as before. A batch as large copies what waits; both are tried here."""
    from streameval import join as join_module

    monkeypatch.setattr(join_module, "_COPY_UP_TO", 10**6 if keeping == "a copy" else 0)
    join = se.LabelJoin(se.BinaryAccumulator(), ttl=10.0, max_pending=3)
    weight = 1e308 if refusal.startswith("the accumulator") else 1.0  # two such pairs: a total past the floats
    join.predict("a", 0.9, t=0.0)
    join.predict("b", 0.2, t=1.0)
    join.predict("c", 0.4, t=2.0, w=weight)
    join.predict("d", 0.7, t=3.0, w=weight)  # "a" is evicted: expired, remembered
    join.predict("e", 0.6, t=4.0)  # "b" is evicted
    twin = se.LabelJoin.from_state(join.to_state())
    before = join.to_state()
    if weight == 1.0:  # at 12.5 the ttl expires "c" (its label then waits), "a" is late, "d" matches, then 2
        keys, labels, now = ["c", "a", "d", "x"], [1, 0, 1, 2], 12.5
    else:  # two matches whose weights add up past the floats: refused by the accumulator's update_many
        keys, labels, now = ["c", "a", "d"], [1, 0, 1], 11.0
    with pytest.raises(ValueError, match="at index 3" if weight == 1.0 else "w"):
        join.label_many(keys, labels, t=[now] * len(keys))
    assert join.to_state() == before
    assert [k for k, _ in join._waiting.items()] == ["c", "d", "e"]
    assert list(join._expired_keys) == ["a", "b"]
    for target in (join, twin):  # the same later: evictions of the oldest, late labels, expiries by time
        target.predict("f", 0.3, t=5.0)
        target.predict("g", 0.8, t=6.0)
        target.label("b", 1, t=7.0)
        target.label("f", 1, t=8.0)  # "e" waits on: its deadline, from before the batch, expires it
        target.predict("h", 0.5, t=16.5)  # the ttl's deadlines: what waits from before 6.5 expires
    assert join.to_state() == twin.to_state() and join.counts() == twin.counts()
    assert join.counts()["late"] == 1 and join.counts()["evicted"] == 4 and join.counts()["expired"] == 6
