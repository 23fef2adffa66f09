"""Delayed labels: every pair counted once, whatever the order, with bounded memory."""

from __future__ import annotations

import numpy as np
import pytest

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
