"""Windows equal a fresh accumulator fed exactly the window's events."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

import streameval as se


def _stream(n, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.4
    s = np.round(rng.normal(y * 1.0, 1.0), 2)
    return y, s


@pytest.mark.parametrize("threshold", [0.5, 0.137])
@pytest.mark.parametrize("size", [1, 7, 100])
def test_sliding_equals_the_last_n_events(threshold, size):
    y, s = _stream(700, seed=size)
    win = se.Sliding(lambda: se.BinaryAccumulator(threshold=threshold), size=size)
    rng = np.random.default_rng(1)
    i = 0
    while i < y.size:
        step = int(rng.choice([1, 1, 3, 17, 250]))
        if step == 1:
            win.update(bool(y[i]), float(s[i]))
        else:
            win.update_many(y[i : i + step], s[i : i + step])
        i = min(i + step, y.size)
        fresh = se.BinaryAccumulator(threshold=threshold)
        fresh.update_many(y[max(0, i - size) : i], s[max(0, i - size) : i])
        assert win.accumulator() == fresh
        assert win.n == min(i, size)


@pytest.mark.parametrize(("size", "budget"), [(3000, 8192), (6000, 12_000)])
def test_an_exact_window_stays_exact_and_equals_scikit_learn(size, budget):
    """A window whose events, with those of one filing more, have at most ``exact_up_to`` distinct scores stays
    exact over a long stream of continuous scores (the scores of events that left give their places up), and
    its metrics are scikit-learn's on the last ``size`` events."""
    from sklearn import metrics as skm

    rng = np.random.default_rng(size)
    n = 6 * size
    y, s = rng.random(n) < 0.3, rng.random(n)
    win = se.Sliding(lambda: se.BinaryAccumulator(exact_up_to=budget), size=size)
    for i in range(n):
        win.update(bool(y[i]), float(s[i]))
        if (i + 1) % (3 * size) == 0:  # reads far apart: many events leave between them
            r = win.get()
            last = slice(max(0, i + 1 - size), i + 1)
            assert r.is_exact and r.n == min(i + 1, size)
            assert r.auc == pytest.approx(skm.roc_auc_score(y[last], s[last]), abs=1e-12)
            assert r.average_precision == pytest.approx(skm.average_precision_score(y[last], s[last]), abs=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_large_batches_leave_by_their_own_count(weighted):
    """A batch of 2^16 events or more keeps an accumulator of its events: when it leaves whole that is taken out,
    when it leaves in part its leaving events are counted; the window equals the last `size` events throughout."""
    rng = np.random.default_rng(21)
    n = 480_000
    y = rng.random(n) < 0.3
    s = rng.random(n)  # continuous: the window leaves the exact regime
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    size = 200_000
    win = se.Sliding(se.BinaryAccumulator, size=size)
    cuts = [0, 70_000, 140_000, 141_000, 211_000, 290_000, 360_000, 430_000, n]
    for lo, hi in itertools.pairwise(cuts):
        win.update_many(y[lo:hi], s[lo:hi], None if w is None else w[lo:hi])
        fresh = se.BinaryAccumulator()
        keep = slice(max(0, hi - size), hi)
        fresh.update_many(y[keep], s[keep], None if w is None else w[keep])
        if weighted:
            a, b = win.get(), fresh.get()
            np.testing.assert_allclose(a.neg, b.neg, rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(a.pos, b.pos, rtol=1e-9, atol=1e-9)
        else:
            assert win.accumulator() == fresh
        assert win.n == min(hi, size)


@pytest.mark.parametrize("size", [5, 60, 5000])
def test_small_batches_wait_for_the_next_filing_and_leave_joined(size):
    """Small batches are filed with the per-event updates, alike ones joined: the window is its last events
    after every call (read or not: ``n`` counts the waiting ones), whatever the columns' dtypes, a weight given
    once for a batch, segments of str and int, events one by one in between and refused batches."""
    rng = np.random.default_rng(size)
    n = 3000 if size < 5000 else 12_000
    names, y, s = rng.choice(["eu", "us", "asia"], n), rng.random(n) < 0.4, rng.random(n)
    w = rng.choice([1.0, 2.0, 0.5], n)
    win = se.Sliding(lambda: se.Segmented(se.BinaryAccumulator), size=size)
    kept: list[tuple[str, bool, float, float]] = []
    i = step = 0
    while i < n:
        step += 1
        m = int(rng.choice([1, 2, 7, 10, 31]))
        part = slice(i, min(i + m, n))
        form = int(rng.integers(0, 5))  # alike batches in a row too: they join
        if m == 1:
            win.update(str(names[i]), bool(y[i]), float(s[i]), w=float(w[i]))
        elif form == 0:  # labels as ints: a dtype the bool batches do not join
            win.update_many(names[part], y[part].astype(np.int64), s[part], w=w[part])
        elif form == 1:  # one weight for the batch (the events here were given theirs: all alike)
            w[part] = w[i]
            win.update_many(list(names[part]), y[part], s[part], w=float(w[i]))
        elif form == 2:  # refused whole (a NaN score): nothing waits, nothing counts
            bad = s[part].copy()
            bad[-1] = np.nan
            with pytest.raises(ValueError, match="scores"):
                win.update_many(names[part], y[part], bad, w=w[part])
            continue
        else:
            win.update_many(names[part], y[part], s[part], w=w[part])
        kept += list(zip(names[part].tolist(), y[part].tolist(), s[part].tolist(), w[part].tolist(), strict=True))
        i = part.stop
        assert win.n == min(len(kept), size)
        if step % 37 == 0 or i == n:
            last = kept[-size:]
            fresh = se.Segmented(se.BinaryAccumulator)
            fresh.update_many(*[list(c) for c in zip(*[e[:3] for e in last], strict=True)], w=[e[3] for e in last])
            got, want = win.get(), fresh.get()
            assert sorted(got.segments) == sorted(want.segments)
            for key in want.segments:
                a, b = got[key], want[key]
                assert (a.n, a.tp, a.fp) == (b.n, b.tp, b.fp)
                np.testing.assert_allclose(a.neg, b.neg, rtol=1e-12)
                np.testing.assert_allclose(a.pos, b.pos, rtol=1e-12)


def test_weighted_sliding_leaves_no_residue():
    y, s = _stream(400, seed=3)
    w = np.random.default_rng(2).uniform(0.1, 3.0, y.size)
    win = se.Sliding(se.BinaryAccumulator, size=50)
    for lo in range(0, 400, 30):
        win.update_many(y[lo : lo + 30], s[lo : lo + 30], w[lo : lo + 30])
    fresh = se.BinaryAccumulator()
    fresh.update_many(y[-50:], s[-50:], w[-50:])
    r1, r2 = win.get(), fresh.get()
    np.testing.assert_array_equal(r1.keys, r2.keys)  # emptied bins are exactly empty
    np.testing.assert_allclose(r1.neg, r2.neg, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r1.pos, r2.pos, rtol=1e-9, atol=1e-12)
    with pytest.raises(TypeError, match="cannot be merged"):
        win.merge(win)
    with pytest.raises(TypeError, match="take events out"):
        se.Sliding(lambda: se.Decayed(se.BinaryAccumulator, half_life=3), size=3)
    with pytest.raises(ValueError, match="size"):
        se.Sliding(se.BinaryAccumulator, size=0)


def _in_window(times, width, panes):
    pane = np.floor(times / (width / panes)).astype(int)
    return pane >= pane.max() - panes + 1


@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression"])
def test_time_window_equals_its_events_and_merges_by_pane(kind):
    rng = np.random.default_rng(4)
    n = 600
    t = np.sort(rng.uniform(0, 100, n))
    y, s = _stream(n, seed=5)
    if kind == "binary":
        factory, args = se.BinaryAccumulator, (y, s)
    elif kind == "multiclass":
        labels = np.array(["a", "b", "c"])[rng.integers(0, 3, n)]
        scores = rng.random((n, 3))
        factory, args = (lambda: se.MulticlassAccumulator(classes=["a", "b", "c"])), (labels, scores)
    else:
        factory, args = se.RegressionAccumulator, (s, s + rng.normal(0, 1, n))
    win = se.TimeWindow(factory, width=20.0, panes=8)
    a, b = se.TimeWindow(factory, width=20.0, panes=8), se.TimeWindow(factory, width=20.0, panes=8)
    shard = rng.random(n) < 0.5
    for lo in range(0, n, 75):
        sl = slice(lo, lo + 75)
        win.update_many(*(x[sl] for x in args), t=t[sl])
        for acc, mask in ((a, shard[sl]), (b, ~shard[sl])):
            if mask.any():
                acc.update_many(*(x[sl][mask] for x in args), t=t[sl][mask])
    keep = _in_window(t, 20.0, 8)
    fresh = factory()
    fresh.update_many(*(x[keep] for x in args))
    assert win.get().to_dict() == pytest.approx(fresh.get().to_dict(), nan_ok=True)
    assert (a + b).get().to_dict() == pytest.approx(fresh.get().to_dict(), nan_ok=True)
    assert win.n_late == 0


def test_time_window_cuts_sorted_times_as_their_pane_numbers_do():
    """Pane starts found from the start times p * width (searchsorted) agree with floor(t / width) event by event,
    also where they round apart: times a float away from edges that are not whole multiples in floats."""
    width, panes = 0.7, 7  # a pane is 0.09999999999999999 wide
    grid = np.arange(1, 60) * 0.1
    t = np.sort(np.concatenate([grid, np.nextafter(grid, -np.inf), np.nextafter(grid, np.inf), np.arange(1, 60) / 10]))
    n = t.size
    y, s = _stream(n, seed=3)
    in_order, shuffled = (se.TimeWindow(se.BinaryAccumulator, width, panes) for _ in range(2))
    mixed = np.random.default_rng(1).permutation(n)
    for lo in range(0, n, 40):  # batches of 40 events over a few panes each
        part = slice(lo, lo + 40)
        in_order.update_many(y[part], s[part], t=t[part])
    shuffled.update_many(y[mixed], s[mixed], t=t[mixed])
    last = math.floor(t[-1] / (width / panes))
    keep = np.flatnonzero(np.floor(t / (width / panes)) > last - panes)
    fresh = se.BinaryAccumulator()
    fresh.update_many(y[keep], s[keep])
    assert in_order.accumulator() == shuffled.accumulator() == fresh


@pytest.mark.parametrize("kind", ["binary", "segments"])
def test_time_window_batches_within_one_pane_count_into_it_in_place(kind):
    """Batches whose events all fall in one pane of the window count into it in place: with batches across panes,
    late ones and refused ones between, the window equals its events counted afresh and one fed event by event,
    and a refused batch (a bad label, in a pane or across two) changes nothing."""
    rng = np.random.default_rng(21)
    width, panes, n = 60.0, 6, 4_000
    t = np.sort(rng.uniform(0, 200, n))
    t[3_000:3_010] = 5.0  # late by then: the window has moved past their pane
    y, s = _stream(n, seed=21)
    g = rng.integers(0, 3, n)

    def window():
        make = se.BinaryAccumulator if kind == "binary" else (lambda: se.Segmented(se.BinaryAccumulator))
        return se.TimeWindow(make, width, panes)

    def args(part):
        return (y[part], s[part]) if kind == "binary" else (g[part], y[part], s[part])

    batched, one_by_one = window(), window()
    at = 0
    while at < n:
        size = int(rng.integers(1, 40))
        part = slice(at, at + size)
        if at % 7 == 0:  # a bad label: refused whole, in whichever panes
            bad = list(args(part))
            bad[-2] = np.where(np.arange(len(bad[-2])) == len(bad[-2]) - 1, 2, y[part])
            before = batched.accumulator()
            with pytest.raises(ValueError, match="got 2"):
                batched.update_many(*bad, t=t[part])
            assert batched.accumulator() == before
        batched.update_many(*args(part), t=t[part])
        for i in range(at, min(at + size, n)):
            one_by_one.update(*(a[0] for a in args(slice(i, i + 1))), t=float(t[i]))
        at += size
    fresh = se.BinaryAccumulator()
    keep = np.flatnonzero(_in_window(t, width, panes) & ~((t == 5.0) & (np.arange(n) >= 3_000)))
    fresh.update_many(y[keep], s[keep])
    whole = batched.accumulator() if kind == "binary" else batched.get().overall
    assert (whole.get() if kind == "binary" else whole).to_dict() == pytest.approx(fresh.get().to_dict(), nan_ok=True)
    assert batched.accumulator() == one_by_one.accumulator()
    assert batched.n_late == one_by_one.n_late == 10


@pytest.mark.parametrize("panes", [4, 100])
def test_time_window_batches_in_time_order_equal_any_order(panes):
    """A batch in time order is cut into panes by slices (bisection, or pane numbers for many panes): the same
    panes as a shuffled batch, with times on pane edges, negative times and panes without events between."""
    rng = np.random.default_rng(panes)
    n = 3_000
    width = 40.0
    edges = np.arange(-20, 60) * (width / panes)  # exactly on pane edges
    t = np.sort(np.concatenate([rng.uniform(-30, 10, n // 2), rng.uniform(25, 60, n // 2 - edges.size), edges]))
    y, s = _stream(n, seed=panes)
    labels = [{"a": float(p), "b": float(1 - p)} for p in s.tolist()]
    for factory, args in (
        (se.BinaryAccumulator, (y, s)),
        (lambda: se.MulticlassAccumulator(classes=["a", "b"]), (["a" if v else "b" for v in y.tolist()], labels)),
    ):
        in_order, shuffled = se.TimeWindow(factory, width, panes), se.TimeWindow(factory, width, panes)
        for lo in range(0, n, 1_000):
            part = slice(lo, lo + 1_000)
            in_order.update_many(*(list(a[part]) if isinstance(a, list) else a[part] for a in args), t=t[part])
            mixed = lo + rng.permutation(1_000)  # the same batch out of time order
            shuffled.update_many(*([a[i] for i in mixed] if isinstance(a, list) else a[mixed] for a in args),
                                 t=t[mixed])  # fmt: skip
        fresh = factory()
        keep = np.flatnonzero(_in_window(t, width, panes))
        fresh.update_many(*([a[i] for i in keep] if isinstance(a, list) else a[keep] for a in args))
        assert in_order.get().to_dict() == pytest.approx(fresh.get().to_dict(), nan_ok=True)
        assert in_order.accumulator() == shuffled.accumulator()
        assert in_order.n_late == shuffled.n_late == 0


@pytest.mark.parametrize(
    ("width", "times"),
    [
        (60.0, [0.0, 1.7e9, 1.7e9 + 1.0, 1.7e9 + 7.0]),  # a time of 0 (the epoch) before now: 2.8e8 panes apart
        (10.0, [0.0, 1e19, 1e19, 2e19]),  # panes past the 64-bit integers
        (10.0, [-1e300, 5.0, 1e300, 1e300]),  # the largest times
    ],
)
def test_a_batch_over_a_long_gap_in_time_is_cut_by_its_events_panes(width, times):
    """A batch in time order whose times span many panes is cut where its events' pane changes, not pane by pane
    over the gap (a batch from time 0 to now took 43 s and gigabytes before: every pane of 6 s between), and a
    pane past the 64-bit integers is the pane a per-event update finds (the batch cast it to one); a shuffled
    batch finds the same panes."""
    t = np.array(times)
    y, s = np.array([1, 0, 1, 0]), np.array([0.9, 0.2, 0.6, 0.4])
    batch, shuffled, one_by_one = (se.TimeWindow(se.BinaryAccumulator, width, panes=10) for _ in range(3))
    batch.update_many(y, s, t=t)
    order = [3, 1, 0, 2]
    shuffled.update_many(y[order], s[order], t=t[order])
    for label, score, when in zip(y.tolist(), s.tolist(), times, strict=True):
        one_by_one.update(label, score, t=when)
    last = math.floor(times[-1] / (width / 10))
    keep = [i for i, when in enumerate(times) if math.floor(when / (width / 10)) > last - 10]
    fresh = se.BinaryAccumulator()
    fresh.update_many(y[keep], s[keep])
    assert batch.accumulator() == shuffled.accumulator() == one_by_one.accumulator() == fresh
    assert batch.get().n == len(keep) < 4
    assert batch.n_late == shuffled.n_late == one_by_one.n_late == 0


def test_panes_that_leave_are_dropped_by_number_or_by_a_look_at_every_pane():
    """The panes older than the window leave by their numbers from the window's oldest before (not by a look at
    every pane at each new one: 86,400 panes of a second took 0.21 ms an event that opened a pane, now 0.03), or
    by a look at every pane after a jump past them all; through a pickle too: the window is its last panes'
    events whichever way, per event and in batches."""
    import pickle

    rng = np.random.default_rng(12)
    width, panes = 600.0, 600  # panes of a second
    steps = rng.exponential(3.0, 3_000)
    steps[rng.random(steps.size) < 0.01] = 5_000.0  # jumps past the whole window
    t = np.cumsum(steps)
    late = rng.random(t.size) < 0.05  # some events come 700 s late: outside the window when they arrive
    t[late] -= 700.0
    y, s = _stream(t.size, seed=12)
    per_event, batches = (se.TimeWindow(se.BinaryAccumulator, width, panes) for _ in range(2))
    for i in range(t.size):
        per_event.update(int(y[i]), float(s[i]), t=float(t[i]))
        if i == t.size // 2:
            per_event = pickle.loads(pickle.dumps(per_event))
    batch_late = np.zeros(t.size, dtype=bool)  # late in a batch: outside the window before the batch came
    before = -np.inf
    for part in np.array_split(np.arange(t.size), 40):
        batches.update_many(y[part], s[part], t=t[part])
        batch_late[part] = np.floor(t[part] / (width / panes)) < np.floor(before / (width / panes)) - panes + 1
        before = max(before, t[part].max())
    seen = np.maximum.accumulate(t)  # the latest time when each event came
    pane = np.floor(t / (width / panes))
    came_late = pane < np.floor(np.concatenate([[-np.inf], seen[:-1]]) / (width / panes)) - panes + 1
    keep = (pane > np.floor(seen[-1] / (width / panes)) - panes) & ~came_late
    fresh = se.BinaryAccumulator()
    fresh.update_many(y[keep], s[keep])
    assert per_event.accumulator() == fresh and per_event.n_late == came_late.sum() > 0
    assert len(per_event._ring) <= panes and min(per_event._ring) > np.floor(seen[-1] / (width / panes)) - panes
    in_batches = se.BinaryAccumulator()
    kept = (pane > np.floor(seen[-1] / (width / panes)) - panes) & ~batch_late
    in_batches.update_many(y[kept], s[kept])
    assert batches.accumulator() == in_batches and batches.n_late == batch_late.sum()


def test_time_window_counts_late_events_and_checks_input():
    win = se.TimeWindow(se.BinaryAccumulator, width=10.0, panes=5)
    win.update(1, 0.9, t=100.0)
    win.update(0, 0.2, t=50.0)  # far behind the window
    assert win.get().n == 1 and win.n_late == 1
    before = win.get().n
    with pytest.raises(ValueError, match="y"):
        win.update_many([1, 5], [0.1, 0.2], t=[101.0, 102.0])
    with pytest.raises(ValueError, match="t must"):
        win.update_many([1, 0], [0.1, 0.2], t=[101.0, np.nan])
    with pytest.raises(ValueError, match="one time per event"):
        win.update_many([1, 0], [0.1, 0.2], t=[101.0])
    assert win.get().n == before
    with pytest.raises(ValueError, match="pane grids"):
        win.merge(se.TimeWindow(se.BinaryAccumulator, width=10.0, panes=4))
    # panes so narrow that a time's pane number is past the largest float: named, not an OverflowError
    narrow = se.TimeWindow(se.BinaryAccumulator, width=1e-320, panes=10)
    monitored = se.Monitor(se.TimeWindow(se.BinaryAccumulator, width=1e-320, panes=10), every=1.0, by="time")
    for call in (
        lambda: narrow.update(1, 0.5, t=1.0),
        lambda: narrow.update_many([1, 0], [0.5, 0.2], t=[0.0, 2.0]),
        lambda: monitored.update(1, 0.5, t=1.0),
        lambda: monitored.update_many([1, 0], [0.5, 0.2], t=[0.0, 2.0]),
    ):
        with pytest.raises(ValueError, match=r"t=[12]\.0 is too far from 0 for panes of width 1e-321"):
            call()
    fresh = se.Monitor(se.TimeWindow(se.BinaryAccumulator, width=1e-320, panes=10), every=1e-14, by="time")
    monitored.every = fresh.every  # records as often as times this near 0 can come
    for target in (narrow, monitored, fresh):  # nothing was counted before: these alone, as into a fresh one
        target.update(1, 0.5, t=0.0)
        target.update(0, 0.2, t=1.5e-14)
    assert narrow.accumulator() == monitored.accumulator.accumulator() == fresh.accumulator.accumulator()
    records, wanted = monitored.to_records(), fresh.to_records()
    assert len(records) == len(wanted) == 1 and records[0] == pytest.approx(wanted[0], nan_ok=True)


@pytest.mark.parametrize("by", ["events", "time"])
def test_decayed_equals_explicit_weights(by):
    y, s = _stream(500, seed=6)
    t = np.cumsum(np.random.default_rng(7).exponential(1.0, y.size)) if by == "time" else np.arange(y.size, dtype=float)
    dec = se.Decayed(se.BinaryAccumulator, half_life=40.0, by=by)
    for lo in range(0, 500, 60):
        sl = slice(lo, lo + 60)
        if by == "time":
            dec.update_many(y[sl], s[sl], t=t[sl])
        else:
            dec.update_many(y[sl], s[sl])
    ref = se.BinaryAccumulator()
    ref.update_many(y, s, np.exp2((t - t.max()) / 40.0))
    r1, r2 = dec.get(), ref.get()
    np.testing.assert_array_equal(r1.keys, r2.keys)
    np.testing.assert_allclose(r1.neg, r2.neg, rtol=1e-12)
    np.testing.assert_allclose(r1.pos, r2.pos, rtol=1e-12)
    assert r1.auc == pytest.approx(r2.auc, abs=1e-12)


@pytest.mark.parametrize("kind", ["binary", "segments"])
def test_decayed_by_time_per_event_equals_explicit_weights_whatever_the_form_of_t_and_w(kind):
    """Events one at a time by time: float and int times and weights (counted by the router), numpy ones (the
    checked path), a refused event and a gap that rescales the state between; the decayed counts equal the
    explicit weights' to 1e-12, and a refusal changes nothing."""
    rng = np.random.default_rng(8)
    n = 3_000
    y, s = _stream(n, seed=8)
    g = rng.integers(0, 3, n)
    t = np.cumsum(rng.exponential(1.0, n))
    t[::5] = np.floor(t[::5])  # whole times, passed as ints too (times may fall back)
    t[2_000:] += 40.0 * 600  # 600 half-lives on: the state is rescaled
    w = np.where(rng.random(n) < 0.5, 1.0, np.where(rng.random(n) < 0.5, 2.0, rng.random(n) * 3))
    make = se.BinaryAccumulator if kind == "binary" else (lambda: se.Segmented(se.BinaryAccumulator))
    dec = se.Decayed(make, half_life=40.0, by="time")
    head = [] if kind == "binary" else [None]
    for i in range(n):
        if kind == "segments":
            head[0] = int(g[i])
        forms = [(float(t[i]), float(w[i])), (np.float64(t[i]), float(w[i])), (float(t[i]), np.float64(w[i]))]
        when, weight = forms[i % 3] if i % 7 else (float(t[i]), int(w[i]) if w[i] % 1 == 0 else float(w[i]))
        if i % 5 == 0 and i % 10:
            when = int(t[i])
        if i % 500 == 250:  # a bad label: refused, nothing changed
            before = dec.accumulator()
            with pytest.raises(ValueError, match="got 2"):
                dec.update(*head, 2, float(s[i]), t=when, w=weight)
            assert dec.accumulator() == before
        dec.update(*head, bool(y[i]), float(s[i]), t=when, w=weight)
    late = float(t.max() - 5.0)  # the last event not the latest: the window's time stays the latest
    dec.update(*head, True, 0.9, t=late, w=1.5)
    y, s, t, w = np.append(y, True), np.append(s, 0.9), np.append(t, late), np.append(w, 1.5)
    ref = se.BinaryAccumulator()
    ref.update_many(y, s, w * np.exp2((t - t.max()) / 40.0))
    r1 = dec.get() if kind == "binary" else dec.get().overall
    r2 = ref.get()
    np.testing.assert_array_equal(r1.keys, r2.keys)
    np.testing.assert_allclose(r1.neg, r2.neg, rtol=1e-12)
    np.testing.assert_allclose(r1.pos, r2.pos, rtol=1e-12)
    assert r1.auc == pytest.approx(r2.auc, abs=1e-12)


@pytest.mark.parametrize(
    ("start", "n", "half_life"),
    [
        (0.0, 4095, 40.0), (0.0, 4096, 40.0), (-3e5, 50_001, 5e3), (123.0, 10**6, 2500.0), (-1e6, 9000, 1e9),
        (-999_999.0, 10**6, 100.0), (-5e5, 10**6, 500.0), (-2e5, 10**6, 1001.0), (-999_999.0, 10**6, 999.0),
    ],
)  # fmt: skip
def test_decay_factors_of_a_batch_are_the_powers_of_two(start, n, half_life):
    """Batches of events by count take their decay factors by doubling runs of powers: within 1e-13 of exp2 of
    each event's own argument, over the range the state keeps (arguments up to 500 in size), and for batches
    over a thousand half-lives or more (their oldest powers, below 2^-1000, fall towards zero: a doubling
    factor overflowed there)."""
    from streameval.windows import _powers_of_two

    direct = np.exp2((start + np.arange(n, dtype=np.float64)) / half_life)
    got = _powers_of_two(start, n, half_life)
    assert got.shape == (n,) and got.flags.c_contiguous and got.flags.writeable
    assert np.isfinite(got).all() and (got >= 0).all()
    normal = direct >= 2.0**-1000
    np.testing.assert_allclose(got[normal], direct[normal], rtol=1e-13, atol=0)
    assert (got[~normal] <= 2.0**-990).all()


def test_a_batch_over_thousands_of_half_lives_equals_explicit_weights():
    """200,000 events of a half-life of 50 events (4,000 half-lives): the oldest weigh nothing, the others their
    own decayed weight."""
    y, s = _stream(200_000, seed=4)
    dec = se.Decayed(se.BinaryAccumulator, half_life=50.0)
    dec.update_many(y, s)
    t = np.arange(y.size, dtype=float)
    ref = se.BinaryAccumulator()
    ref.update_many(y, s, np.exp2((t - t.max()) / 50.0))
    r1, r2 = dec.get(), ref.get()
    np.testing.assert_allclose(r1.neg, r2.neg, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(r1.pos, r2.pos, rtol=1e-12, atol=1e-300)
    assert r1.auc == pytest.approx(r2.auc, abs=1e-12)


def test_decayed_batches_by_events_equal_explicit_weights():
    """Batches large enough to take the decay factors from two tables, one of them past a rescale."""
    y, s = _stream(30_000, seed=9)
    dec = se.Decayed(se.BinaryAccumulator, half_life=40.0)
    dec.update_many(y[:12_000], s[:12_000])
    dec.update_many(y[12_000:], s[12_000:])  # 18,000 events of 40 each halve the weight: past a rescale
    t = np.arange(y.size, dtype=float)
    ref = se.BinaryAccumulator()
    ref.update_many(y, s, np.exp2((t - t.max()) / 40.0))
    r1, r2 = dec.get(), ref.get()
    np.testing.assert_array_equal(r1.keys, r2.keys)
    np.testing.assert_allclose(r1.neg, r2.neg, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(r1.pos, r2.pos, rtol=1e-12, atol=1e-300)


def test_decay_stays_accurate_over_a_billion_time_units():
    # 10^4 batches, each standing for 10^5 events at one time, times up to 10^9: the state is
    # rescaled many times (2**500 at most) and the decayed total must match the geometric series
    half_life = 10**5
    dec = se.Decayed(se.RegressionAccumulator, half_life=half_life, by="time")
    step = 10**5
    for k in range(10**4):
        dec.update_many([1.0], [1.5], t=[k * step], w=[1e5])
    total = dec.get().y.weight
    expected = 1e5 * (1 - 0.5**10**4) / (1 - 0.5)
    assert total == pytest.approx(expected, rel=1e-12)
    assert dec.get().mae == pytest.approx(0.5, rel=1e-12)
    assert math.isfinite(dec.accumulator().get().y.weight)


def test_scores_decayed_below_the_smallest_float_leave_the_exact_table():
    """A gap of 10^6 half-lives takes the old events' weights below the smallest float: their scores held counts
    of 0 in the exact table, and a class whose highest score was among them read an average precision of nan
    (0/0 at the top threshold), where scikit-learn with the decayed weights gives a number."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    rng = np.random.default_rng(1)
    n = 2000
    t = np.cumsum(rng.exponential(1.0, n))
    t[1000:] += 1e6
    y, p = rng.integers(0, 3, n), rng.dirichlet([1, 1, 1], n)
    dec = se.Decayed(lambda: se.MulticlassAccumulator(classes=[0, 1, 2]), half_life=0.5, by="time")
    for lo in range(0, n, 300):
        dec.update_many(y[lo : lo + 300], p[lo : lo + 300], t=t[lo : lo + 300])
    with np.errstate(under="ignore"):
        w = np.exp2(-(t[-1] - t) / 0.5)
    r = dec.get()
    for k in range(3):
        assert r.per_class[k].is_exact and np.all((r.per_class[k].neg > 0) | (r.per_class[k].pos > 0))
        assert r.average_precision_per_class[k] == pytest.approx(
            average_precision_score(y == k, p[:, k], sample_weight=w), abs=1e-12
        )
        assert r.per_class[k].auc == pytest.approx(roc_auc_score(y == k, p[:, k], sample_weight=w), abs=1e-12)


def test_a_window_fed_in_batches_forgets_the_spread_of_outliers_that_left():
    """Targets of 1e12 and errors of 1e12 hold nearly all the squared deviations: once they left a window fed in
    batches, the moments of the rest were rounding (MSE 0.163 against scikit-learn's 1.041, a score std of 0.057
    against 0.287). The window now counts its events afresh when a take-out lost a spread's digits."""
    from sklearn import metrics as skm

    rng = np.random.default_rng(0)
    n = 20_000
    y, y_pred = rng.normal(10.0, 3.0, n), rng.normal(0.0, 1.0, n)
    y[10:20] = 1e12
    y_pred += y
    y_pred[30:40] += 1e12
    scores, groups = rng.random(n), rng.integers(0, 2, n)
    scores[5:10] = 1e12
    windows = {
        "regression": se.Sliding(se.RegressionAccumulator, size=1000),
        "scores": se.Sliding(se.ScoreAccumulator, size=1000),
        "segments": se.Sliding(lambda: se.Segmented(se.ScoreAccumulator), size=1000),
    }
    for lo in range(0, n, 500):
        part = slice(lo, lo + 500)
        windows["regression"].update_many(y[part], y_pred[part])
        windows["scores"].update_many(scores[part])
        windows["segments"].update_many(groups[part], scores[part])
    last = slice(n - 1000, n)
    r = windows["regression"].get()
    assert r.mse == pytest.approx(skm.mean_squared_error(y[last], y_pred[last]), rel=1e-9)
    assert r.r2 == pytest.approx(skm.r2_score(y[last], y_pred[last]), rel=1e-9)
    assert r.explained_variance == pytest.approx(skm.explained_variance_score(y[last], y_pred[last]), rel=1e-9)
    assert windows["scores"].get().std == pytest.approx(np.std(scores[last]), rel=1e-9)
    by_segment = windows["segments"].get()
    for g in (0, 1):
        assert by_segment.reports[g].std == pytest.approx(np.std(scores[last][groups[last] == g]), rel=1e-9)
    whole, first, outliers = se.RegressionAccumulator(), se.RegressionAccumulator(), se.RegressionAccumulator()
    whole.update_many(y[:2000], y_pred[:2000])
    first.update_many(y[1000:1500], y_pred[1000:1500])  # no outlier among them: nothing lost
    outliers.update_many(y[:1000], y_pred[:1000])
    assert not (whole - first).lost_to_rounding() and (whole - outliers).lost_to_rounding()


def test_a_window_of_weights_far_apart_counts_afresh_where_a_take_out_is_refused():
    """Weights of 1e15 among weights near 1: a score's count rounded while both were in it, and taking the small
    ones out after the large one went below 0 by more than rounding allows. The window raised "cannot take out
    counts that were not added" from update_many; it now counts the events that stay afresh."""
    from sklearn import metrics as skm

    rng = np.random.default_rng(0)
    n = 20_000
    y, s, w = rng.random(n) < 0.3, rng.random(n).round(3), rng.uniform(0.5, 2.0, n)
    w[10:20] = 1e15
    window = se.Sliding(se.BinaryAccumulator, size=1000)
    for lo in range(0, n, 500):
        window.update_many(y[lo : lo + 500], s[lo : lo + 500], w=w[lo : lo + 500])
    last = slice(n - 1000, n)
    r = window.get()
    assert r.is_exact and r.n == pytest.approx(w[last].sum(), rel=1e-12)
    assert r.auc == pytest.approx(skm.roc_auc_score(y[last], s[last], sample_weight=w[last]), abs=1e-12)
    assert r.brier == pytest.approx(skm.brier_score_loss(y[last], s[last], sample_weight=w[last]), rel=1e-12)


def test_decayed_merge_and_multiclass():
    y, s = _stream(300, seed=8)
    whole = se.Decayed(se.BinaryAccumulator, half_life=30.0, by="time")
    a = se.Decayed(se.BinaryAccumulator, half_life=30.0, by="time")
    b = se.Decayed(se.BinaryAccumulator, half_life=30.0, by="time")
    t = np.arange(300.0)
    whole.update_many(y, s, t=t)
    a.update_many(y[::2], s[::2], t=t[::2])
    b.update_many(y[1::2], s[1::2], t=t[1::2])
    np.testing.assert_allclose((a + b).get().neg, whole.get().neg, rtol=1e-12)
    mc = se.Decayed(lambda: se.MulticlassAccumulator(classes=[0, 1]), half_life=1)
    mc.update(0, [0.8, 0.2])
    mc.update(1, [0.3, 0.7])
    assert mc.get().confusion_matrix.tolist() == [[0.5, 0.0], [0.0, 1.0]]
    with pytest.raises(ValueError, match="t is required"):
        se.Decayed(se.BinaryAccumulator, half_life=1, by="time").update(1, 0.5)


@pytest.mark.parametrize("learnt", [False, True])
def test_decayed_class_score_dicts_equal_explicit_weights(learnt):
    """Dicts of class scores one by one (one dict filled again each time, some weighted, a few sequences with
    the classes given): the decayed counts are those of the events with weights ``w * 2**((i - last) /
    half_life)``."""
    rng = np.random.default_rng(21)
    classes = ["x", "y", "z"]
    make = (lambda: se.MulticlassAccumulator()) if learnt else (lambda: se.MulticlassAccumulator(classes=classes))
    dec = se.Decayed(make, half_life=700)
    scores: dict[str, float] = {}
    ys, rows, weights = [], [], []
    for i in range(20_000):
        y, p = classes[int(rng.integers(0, 3))], rng.dirichlet([1.0, 2.0, 3.0]).tolist()
        scores.update(zip(classes, p, strict=True))
        w = 1.0
        if i % 17 == 0:
            w = 0.5
            dec.update(y, scores, w=w)
        elif i % 23 == 0 and not learnt:
            dec.update(y, p)  # a sequence in the classes' order
        else:
            dec.update(y, scores)
        ys.append(y)
        rows.append(dict(scores))
        weights.append(w)
        if i % 5000 == 0:
            dec.get()  # a read folds the log
    decay = np.exp2((np.arange(len(ys)) - (len(ys) - 1)) / 700.0)
    fresh = make()
    fresh.update_many(ys, rows, w=np.array(weights) * decay)
    a, b = dec.get(), fresh.get()
    at = [list(a.classes).index(c) for c in b.classes]  # classes learnt may come in another order
    np.testing.assert_allclose(a.confusion_matrix[np.ix_(at, at)], b.confusion_matrix, rtol=1e-9)
    assert a.to_dict() == pytest.approx(b.to_dict(), rel=1e-7)


SCORES = {"a": 0.6, "b": 0.4}


@pytest.mark.parametrize(
    ("by", "first", "then"),
    [
        ("events", ("update", ("a", SCORES), {"w": 0.5}), ("update", ("a", "b"), {})),  # weighted, then the log
        ("events", ("update_many", (["a"], ["b"]), {}), ("update", ("a", SCORES), {})),  # a batch, then the log
        ("events", ("update_many", (["a"], [SCORES]), {}), ("update", ("a", "b"), {})),
        ("events", ("update", ("a", "b"), {}), ("update", ("a", SCORES), {"w": 2.0})),  # the log, then weighted
        ("events", ("update", ("a", SCORES), {}), ("update", ("a", [0.6, 0.4, 0.0]), {})),  # one score too many
        ("time", ("update", ("a", SCORES), {"t": 1.0}), ("update", ("a", "b"), {"t": 2.0})),
    ],
)
def test_decayed_refuses_an_event_its_state_refuses_and_keeps_the_others(by, first, then):
    """Class scores and predicted classes do not mix in one accumulator: the second kind is refused when it
    arrives, whichever path each took (the compiled log, a weighted update, a batch), and the window still
    reads and counts."""
    dec = se.Decayed(lambda: se.MulticlassAccumulator(classes=["a", "b"]), half_life=10, by=by)
    getattr(dec, first[0])(*first[1], **first[2])
    with pytest.raises(ValueError, match=r"scores|labels|one score per class"):
        getattr(dec, then[0])(*then[1], **then[2])
    before = dec.get().n
    assert before > 0
    labels = first[1][1] == "b" or first[1][1] == ["b"]
    again = {"t": 3.0} if by == "time" else {}
    dec.update("b", "a" if labels else {"a": 0.1, "b": 0.9}, **again)  # the first kind still counts
    assert dec.get().n > before


@pytest.mark.parametrize("batch", [False, True])
def test_a_time_windows_new_pane_refuses_an_event_its_panes_refuse(batch):
    """A predicted class after class scores, arriving in a new pane: refused (the panes could not add up),
    and the window keeps its events."""
    win = se.TimeWindow(lambda: se.MulticlassAccumulator(classes=["a", "b"]), width=10.0, panes=5)
    win.update("a", SCORES, t=1.0)
    with pytest.raises(ValueError, match="scores"):
        win.update_many(["a"], ["b"], t=[5.0]) if batch else win.update("a", "b", t=5.0)
    assert win.get().n == 1
    win.update("b", {"a": 0.2, "b": 0.8}, t=5.5)
    assert win.get().confusion_matrix.tolist() == [[1, 0], [0, 1]]


@pytest.mark.parametrize("refusing", ["earlier", "later"])
def test_a_batch_over_panes_that_a_later_pane_refuses_changes_no_pane(refusing):
    """A batch over two panes of the window, one of which refuses its part past the batch's check (its total
    weight would pass the largest float): no pane changes. Before, the panes were added to one by one, and a
    pane added before the refusing one kept its part."""
    import pickle

    win = se.TimeWindow(se.BinaryAccumulator, width=20.0, panes=2)
    big = [1e308, 1.0] if refusing == "earlier" else [1.0, 1e308]
    win.update_many([1, 0], [0.9, 0.2], t=[1.0, 11.0], w=big)
    before = pickle.dumps(win)
    with pytest.raises(ValueError, match="overflow"):
        win.update_many(
            [1, 0, 1], [0.8, 0.3, 0.6], t=[2.0, 12.0, 13.0], w=[3.0 if b == 1.0 else b for b in big] + [2.0]
        )
    assert pickle.dumps(win) == before
    win.update(1, 0.7, t=14.0)  # the latest pane still takes per-event updates
    expected = pickle.loads(before)
    expected.update(1, 0.7, t=14.0)
    assert pickle.dumps(win) == pickle.dumps(expected)


@pytest.mark.parametrize("size", [50, 700, 5000])
def test_sequences_given_before_a_class_was_learnt_leave_a_window_later(size):
    """Score sequences of two classes, then a third class learnt, then sequences of three: the window's
    oldest events (the short sequences) leave it, by a take-out or a recount, and its report is that of its
    events given as mappings. Before, their take-out was refused and every later read failed."""
    rng = np.random.default_rng(size)
    events: list[tuple[str, Any]] = [("a", {"a": 0.5, "b": 0.5})]
    events += [("ab"[i % 2], rng.dirichlet([1.0, 1.0]).tolist()) for i in range(3000)]
    events += [("c", {"a": 0.1, "b": 0.1, "c": 0.8})]
    events += [("abc"[i % 3], rng.dirichlet([1.0, 1.0, 1.0]).tolist()) for i in range(4000)]
    win = se.Sliding(se.MulticlassAccumulator, size=size)
    for y, scores in events:
        win.update(y, scores)
    fresh = se.MulticlassAccumulator()
    for y, scores in events[-size:]:
        fresh.update(y, scores if isinstance(scores, dict) else dict(zip("abc", scores, strict=False)))
    a, b = win.get(), fresh.get()
    at = [list(a.classes).index(c) for c in b.classes]  # the classes learnt in another order
    assert a.confusion_matrix[np.ix_(at, at)].tolist() == b.confusion_matrix.tolist()
    assert a.to_dict() == pytest.approx(b.to_dict(), rel=1e-12)


def test_decayed_learns_classes_in_the_streams_order_for_later_sequences():
    """Class-score dicts kept in the log teach classes in the stream's order (a label, then the dict's keys);
    a score sequence after them, with no read between, means those classes in that order, as in one
    accumulator fed the events one by one (a batch of the log's events learns the labels first)."""
    events = [
        ("b", {"a": 0.1, "b": 0.2, "c": 0.7}),  # learns b, then a and c
        ("c", {"a": 0.3}),
        ("b", [0.6, 0.3, 0.1]),  # (b, a, c): b scores highest
        ("a", [0.2, 0.7, 0.1]),  # a scores highest
        ("c", {"a": 0.1, "b": 0.1, "c": 0.8}),
        ("c", [0.1, 0.1, 0.8]),
    ]
    dec = se.Decayed(se.MulticlassAccumulator, half_life=1e12)
    one_by_one = se.MulticlassAccumulator()
    for y, scores in events:
        dec.update(y, scores)
        one_by_one.update(y, scores)
    got, want = dec.get(), one_by_one.get()
    assert got.classes == want.classes == ("b", "a", "c")
    np.testing.assert_allclose(got.confusion_matrix, want.confusion_matrix, rtol=1e-9)
    assert got.accuracy == pytest.approx(4 / 6, rel=1e-9)  # the first two predict c and a


def test_decayed_segments_refuse_the_other_kind_of_events_in_a_segment():
    """A segment of a decayed segmented accumulator holds class scores: predicted classes for it are refused
    at once, after a read or a batch too, and the window keeps counting."""
    dec = se.Decayed(lambda: se.Segmented(lambda: se.MulticlassAccumulator(classes=["a", "b"])), half_life=100)
    dec.update("eu", "a", {"a": 0.6, "b": 0.4})
    for before in (lambda: None, dec.get, lambda: dec.update_many(["us"], ["b"], [{"a": 0.1, "b": 0.9}])):
        before()
        with pytest.raises(ValueError, match="counts scores, got labels"):
            dec.update("eu", "b", "a")
        dec.update("eu", "b", {"a": 0.3, "b": 0.7})
    assert dec.get().overall.n == pytest.approx(5.0, rel=0.05)


@pytest.mark.parametrize("batch_size", [1, 5_000])  # kept for the checker, or past what is kept: a new copy
def test_decayed_checks_events_after_small_batches_by_what_the_batches_taught(batch_size):
    """Batches and single events in turn: the checker of per-event updates counts the small batches counted since
    (copies of their arguments) instead of copying the state again (a batch and an event in turn took 11.3 ms with
    1,000 segments, now 0.8 ms), so it knows the classes and segments they taught: a sequence of scores as long
    as a segment's learnt classes is refused when longer, the other kind of events refused, as the state
    would; changing a batch's arrays after the call changes nothing; the window counts what one accumulator does."""
    dec = se.Decayed(lambda: se.Segmented(se.MulticlassAccumulator), half_life=1e12)
    fresh = se.Segmented(se.MulticlassAccumulator)
    dec.update("eu", "a", {"a": 0.6, "b": 0.4})  # a checker is made: eu knows a, b
    fresh.update("eu", "a", {"a": 0.6, "b": 0.4})
    segments = np.array(["eu"] * batch_size, dtype=object)
    labels = np.array(["c"] * batch_size, dtype=object)
    scores = [{"a": 0.1, "b": 0.2, "c": 0.7}] * batch_size
    dec.update_many(segments, labels, scores)  # eu learns c
    fresh.update_many(segments, labels, scores)
    segments[:] = "us"  # the caller fills its arrays again: the checker kept copies
    labels[:] = "z"
    with pytest.raises(ValueError, match=r"one score per class \(3: \['a', 'b', 'c'\]\), got 4"):
        dec.update("eu", "a", [0.1, 0.2, 0.3, 0.4])  # (a, b, c): three classes now
    with pytest.raises(ValueError, match="counts scores, got labels"):
        dec.update("eu", "a", "b")
    dec.update("eu", "b", {"a": 0.2, "b": 0.5, "c": 0.3})
    fresh.update("eu", "b", {"a": 0.2, "b": 0.5, "c": 0.3})
    dec.update_many(["asia"], ["d"], [{"e": 0.1, "d": 0.9}])  # a segment the checker learns from the batch: d, e
    fresh.update_many(["asia"], ["d"], [{"e": 0.1, "d": 0.9}])
    with pytest.raises(ValueError, match=r"one score per class \(2: \['d', 'e'\]\), got 3"):
        dec.update("asia", "e", [0.3, 0.6, 0.1])
    dec.update("asia", "e", {"d": 0.3, "e": 0.7})
    fresh.update("asia", "e", {"d": 0.3, "e": 0.7})
    got, want = dec.get(), fresh.get()
    assert got.segments == want.segments == ["eu", "asia"]
    for segment in want.segments:
        assert got[segment].classes == want[segment].classes
        np.testing.assert_allclose(got[segment].confusion_matrix, want[segment].confusion_matrix, rtol=1e-6)


@pytest.mark.parametrize("by", ["events", "time"])
def test_decayed_segments_take_score_sequences_in_their_learnt_class_order(by):
    """A score sequence in a segment's learnt class order goes into the decayed state itself: an accumulator made
    apart for per-event updates (emptied: no segments) made the segment again without its classes and refused it
    ("one score per class (1: ['b']), got 2"). The window equals the segments fed the decayed weights."""
    half_life = 4.0
    dec = se.Decayed(lambda: se.Segmented(se.MulticlassAccumulator), half_life=half_life, by=by)
    events = [
        ("eu", "a", {"a": 0.6, "b": 0.4}),
        ("us", "c", {"c": 0.9, "a": 0.1}),
        ("eu", "b", [0.3, 0.7]),  # (a, b)
        ("us", "a", [0.2, 0.8]),  # (c, a)
        ("eu", "b", [0.8, 0.2]),
        ("us", "c", [0.7, 0.3]),
    ]
    times = [0.0, 1.0, 2.5, 3.0, 7.0, 9.5]
    for (segment, y, scores), t in zip(events, times, strict=True):
        dec.update(segment, y, scores, **({"t": t} if by == "time" else {}))
    clock = np.array(times) if by == "time" else np.arange(len(events), dtype=float)
    weights = np.exp2((clock - clock[-1]) / half_life)
    want = se.Segmented(se.MulticlassAccumulator)
    for (segment, y, scores), w in zip(events, weights.tolist(), strict=True):
        want.update(segment, y, scores, w=w)
    got, expected = dec.get(), want.get()
    assert got.segments == expected.segments == ["eu", "us"]
    for segment in expected.segments:
        assert got[segment].classes == expected[segment].classes
        np.testing.assert_allclose(got[segment].confusion_matrix, expected[segment].confusion_matrix, rtol=1e-12)
    assert got["eu"].accuracy == pytest.approx(expected["eu"].accuracy, rel=1e-12)


@pytest.mark.parametrize("per_event", [False, True])
def test_a_time_windows_new_pane_of_segments_reads_score_sequences_in_their_learnt_class_order(per_event):
    """A new pane of a time window over segments starts each segment as the pane before had it (its learnt classes,
    in their order), while that pane lives: it made them from the factory, which refused a sequence of two scores
    for a segment whose pane had learnt one class from the batch's labels, or read the sequences in the order of
    the labels it met first (silently other predicted classes). The window equals the segments fed the same."""
    window = se.TimeWindow(lambda: se.Segmented(se.MulticlassAccumulator), 100.0, 10)
    want = se.Segmented(se.MulticlassAccumulator)
    first = (["eu", "eu", "us"], ["a", "b", "c"], [{"a": 0.6, "b": 0.4}, {"b": 0.7, "a": 0.3}, {"c": 0.8, "d": 0.2}])
    window.update_many(*first, t=[0.0, 1.0, 2.0])
    want.update_many(*first)
    later = [("eu", "b", [0.3, 0.7]), ("eu", "a", [0.2, 0.8]), ("us", "d", [0.9, 0.1]), ("eu", "a", [0.6, 0.4])]
    times = [50.0, 51.0, 52.0, 75.0]  # new panes: 50 and 70
    if per_event:
        for (segment, y, scores), t in zip(later, times, strict=True):
            window.update(segment, y, scores, t=t)
    else:
        window.update_many(*[list(c) for c in zip(*later, strict=True)], t=times)
    for segment, y, scores in later:
        want.update(segment, y, scores)
    got, expected = window.get(), want.get()
    for segment in ("eu", "us"):
        assert got[segment].classes == expected[segment].classes
        np.testing.assert_array_equal(got[segment].confusion_matrix, expected[segment].confusion_matrix)


def test_a_decayed_batch_that_rescales_the_state_takes_what_the_state_learnt():
    """A batch 600 half-lives on rescales the state: it is counted into the rescaled state, which knows its
    segments' classes, not into an emptied accumulator made apart, which refused score sequences in their order;
    a refused batch changes nothing."""
    dec = se.Decayed(lambda: se.Segmented(se.MulticlassAccumulator), half_life=0.5, by="time")
    dec.update_many(["eu", "eu"], ["a", "b"], [{"a": 0.6, "b": 0.4}, {"b": 0.7, "a": 0.3}], t=[0.0, 0.1])
    before = dec.get()["eu"].confusion_matrix.copy()
    with pytest.raises(ValueError, match="per class"):  # three scores for two classes
        dec.update_many(["eu"], ["a"], [[0.3, 0.3, 0.4]], t=[300.0])
    np.testing.assert_array_equal(dec.get()["eu"].confusion_matrix, before)
    dec.update_many(["eu", "eu"], ["b", "a"], [[0.3, 0.7], [0.9, 0.1]], t=[300.0, 300.2])  # (a, b)
    want = se.Segmented(se.MulticlassAccumulator)
    times = np.array([0.0, 0.1, 300.0, 300.2])
    w = np.exp2((times - 300.2) / 0.5).tolist()
    want.update_many(["eu"] * 4, ["a", "b", "b", "a"], [{"a": 0.6, "b": 0.4}, {"b": 0.7, "a": 0.3},
                     {"a": 0.3, "b": 0.7}, {"a": 0.9, "b": 0.1}], w=w)  # fmt: skip
    got = dec.get()["eu"]
    assert got.classes == ("a", "b")
    np.testing.assert_allclose(got.confusion_matrix, want.get()["eu"].confusion_matrix, rtol=1e-12, atol=1e-300)


def test_monitor_records_by_events_and_by_time():
    y, s = _stream(1000, seed=9)
    mon = se.Monitor(se.BinaryAccumulator(), every=250)
    for i in range(1000):
        mon.update(bool(y[i]), float(s[i]))
    rows = mon.to_records()
    assert [r["time"] for r in rows] == [250, 500, 750, 1000]
    fresh = se.BinaryAccumulator()
    fresh.update_many(y[:500], s[:500])
    assert rows[1]["auc"] == fresh.get().auc and rows[1]["n"] == 500
    timed = se.Monitor(se.TimeWindow(se.BinaryAccumulator, width=100.0, panes=4), every=50.0, by="time")
    for lo in range(0, 1000, 100):
        timed.update_many(y[lo : lo + 100], s[lo : lo + 100], t=np.arange(lo, lo + 100, dtype=float))
    assert [r["time"] for r in timed.to_records()] == [50.0 * k for k in range(1, 20, 2)]
    assert timed.to_records()[-1]["n"] == 100
    with pytest.raises(ValueError, match="t is required"):
        timed.update(1, 0.5)
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pandas"):
            mon.to_pandas()
    else:
        assert list(mon.to_pandas()["time"]) == [250, 500, 750, 1000]


def test_sliding_takes_per_event_calls_of_any_shape_in_order():
    y, s = _stream(3000, seed=11)
    w = np.random.default_rng(3).uniform(0.5, 2.0, y.size)
    win = se.Sliding(se.BinaryAccumulator, size=700)
    shapes = np.random.default_rng(4).integers(0, 4, y.size)
    for i in range(y.size):
        if shapes[i] == 0:
            win.update(bool(y[i]), float(s[i]))
        elif shapes[i] == 1:
            win.update(bool(y[i]), float(s[i]), w=float(w[i]))
        elif shapes[i] == 2:
            win.update(bool(y[i]), float(s[i]), float(w[i]))
        else:
            win.update_many(y[i : i + 1], s[i : i + 1], w=w[i : i + 1])
    weights = np.where(shapes == 0, 1.0, w)
    fresh = se.BinaryAccumulator()
    fresh.update_many(y[-700:], s[-700:], weights[-700:])
    a, b = win.get(), fresh.get()
    assert a.edges.tolist() == b.edges.tolist()
    np.testing.assert_allclose(a.neg, b.neg, rtol=1e-12)
    np.testing.assert_allclose(a.pos, b.pos, rtol=1e-12)
    assert win.n == 700


@pytest.mark.parametrize("form", ["dict", "list", "array", "dict-weighted", "rows", "rows-array", "rows-series"])
@pytest.mark.parametrize("size", [40, 700])
def test_sliding_keeps_its_own_copy_of_scores_the_caller_fills_again(form, size):
    """A caller that fills one dict, list or array of class scores for every event (or one list of rows for every
    batch): the window's events are those it was given, not what the caller's objects hold later."""
    rng = np.random.default_rng(12)
    classes = ["a", "b", "c"]
    win = se.Sliding(lambda: se.MulticlassAccumulator(classes=classes), size=size)
    given: list[tuple[str, list[float], float]] = []
    scores: Any = {"dict": {}, "dict-weighted": {}, "list": [0.0] * 3, "array": np.zeros(3)}.get(form)
    rows = [dict.fromkeys(classes, 0.0) for _ in range(25)]
    for _ in range(2000 // 25):
        if form.startswith("rows"):  # one list of dicts, filled again for each batch
            ys = [classes[int(k)] for k in rng.integers(0, 3, len(rows))]
            for row in rows:
                row.update(zip(classes, rng.dirichlet([1.0, 1.0, 1.0]).tolist(), strict=True))
            column: Any = rows
            if form == "rows-array":
                column = np.empty(len(rows), dtype=object)
                column[:] = rows
            elif form == "rows-series":
                pd = pytest.importorskip("pandas")
                column = pd.Series(rows)
            win.update_many(ys, column)
            given += [(y, [row[c] for c in classes], 1.0) for y, row in zip(ys, rows, strict=True)]
            continue
        for _ in range(25):
            y, p = classes[int(rng.integers(0, 3))], rng.dirichlet([1.0, 1.0, 1.0]).tolist()
            if form in ("dict", "dict-weighted"):
                scores.update(zip(classes, p, strict=True))
            else:
                scores[:] = p
            w = 2.0 if form == "dict-weighted" and len(given) % 3 == 0 else 1.0
            win.update(y, scores, w=w) if w != 1.0 else win.update(y, scores)
            given.append((y, p, w))
    fresh = se.MulticlassAccumulator(classes=classes)
    for y, p, w in given[-size:]:
        fresh.update(y, p, w)
    assert win.get().confusion_matrix.tolist() == fresh.get().confusion_matrix.tolist()
    assert win.get().to_dict() == pytest.approx(fresh.get().to_dict(), rel=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda: se.Sliding(se.BinaryAccumulator, size=300),
        lambda: se.Sliding(se.RegressionAccumulator, size=300),
        lambda: se.TimeWindow(se.BinaryAccumulator, width=20.0, panes=4),
        lambda: se.Decayed(se.BinaryAccumulator, half_life=50),
        lambda: se.Decayed(se.BinaryAccumulator, half_life=5.0, by="time"),
        # a lambda factory, which pickle cannot write: the window's pickle keeps an empty accumulator it made
        lambda: se.Sliding(lambda: se.BinaryAccumulator(threshold=0.3), size=300),
        lambda: se.TimeWindow(lambda: se.BinaryAccumulator(threshold=0.3), width=20.0, panes=4),
        lambda: se.Decayed(lambda: se.BinaryAccumulator(threshold=0.3), half_life=50),
    ],
    ids=[
        "sliding",
        "sliding-regression",
        "time",
        "decayed",
        "decayed-time",
        "sliding-lambda",
        "time-lambda",
        "decayed-lambda",
    ],
)
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_windows_pickle_and_copy_with_events_pending(make, how):
    import copy
    import pickle

    rng = np.random.default_rng(3)
    probe = make()
    regression = isinstance(probe, se.Sliding) and isinstance(probe.accumulator(), se.RegressionAccumulator)
    timed = isinstance(probe, se.TimeWindow) or getattr(probe, "by", "") == "time"
    events = [
        ((float(i % 7), float(i % 5)) if regression else (bool(i % 3 == 0), float(rng.random())), i)
        for i in range(1500)
    ]

    def feed(w, part):
        for args, i in part:  # per-event updates, some still pending when copied
            if timed:
                w.update(*args, t=i * 0.1)
            elif i % 50 == 0:
                w.update(*args, w=2.0)
            else:
                w.update(*args)

    win, reference = make(), make()
    feed(win, events[:1000])
    again = pickle.loads(pickle.dumps(win)) if how == "pickle" else copy.deepcopy(win)
    feed(again, events[1000:])  # the copy goes on counting like one window fed everything
    feed(reference, events)
    r, ref = again.get(), reference.get()
    assert r.n == pytest.approx(ref.n, rel=1e-12)
    if regression:
        assert r.mae == pytest.approx(ref.mae, rel=1e-12)
    else:
        assert r.auc == pytest.approx(ref.auc, abs=1e-12)
        assert r.tp == pytest.approx(ref.tp, rel=1e-12) and r.threshold == ref.threshold
    again.update(True, 0.5, **({"t": 200.0} if timed else {}))  # and its factory makes what the window's made
    if isinstance(again, se.TimeWindow):
        assert again.merge(reference).get().threshold == ref.threshold


def test_monitor_records_the_metrics_asked_for():
    import pickle

    rng = np.random.default_rng(4)
    events = list(zip((rng.random(5000) < 0.3).tolist(), rng.random(5000).tolist(), strict=True))
    full = se.Monitor(se.BinaryAccumulator(), every=1000)
    some = se.Monitor(se.BinaryAccumulator(), every=1000, metrics=["auc", "ece", "f1"])
    for y, s in events[:2500]:
        full.update(y, s)
        some.update(y, s)
    some = pickle.loads(pickle.dumps(some))  # events since the last record come along
    for y, s in events[2500:]:
        full.update(y, s)
        some.update(y, s)
    expected = [{k: r[k] for k in ("time", "n", "auc", "ece", "f1")} for r in full.to_records()]
    assert some.to_records() == expected
    assert [r["time"] for r in expected] == [1000, 2000, 3000, 4000, 5000]
    with pytest.raises(ValueError, match="'aucc'"):
        se.Monitor(se.BinaryAccumulator(), every=10, metrics=["auc", "aucc"])


@pytest.mark.parametrize(
    ("make", "bad", "words"),
    [
        (se.BinaryAccumulator, (2, 0.5), "y must be 1 (positive) or 0 (negative), got 2"),
        (se.BinaryAccumulator, (1, float("nan")), "score must not be NaN"),
        (se.ScoreAccumulator, ("x",), "score must be a real number, got 'x'"),
        (lambda: se.Sliding(se.BinaryAccumulator, size=50), (1, "x"), "score must be a real number, got 'x'"),
        (lambda: se.Decayed(se.BinaryAccumulator, half_life=50), (7, 0.5), "got 7"),
    ],
)
def test_a_monitor_refuses_a_bad_event_and_changes_nothing(make, bad, words):
    """A bad event is refused by the monitored accumulator's own check, and is neither counted nor recorded."""
    rng = np.random.default_rng(2)
    monitor = se.Monitor(make(), every=1)
    events = [(bool(rng.random() < 0.5), float(rng.random()))[2 - len(bad) :] for _ in range(5)]  # score only: 1
    for event in events:
        monitor.update(*event)
    before = (repr(monitor.accumulator.get().to_dict()), monitor.to_records())
    for call in (lambda: monitor.update(*bad), lambda: monitor.update(*bad, w=1.0)):
        with pytest.raises((TypeError, ValueError)) as refused:
            call()
        assert words in str(refused.value)
        assert (repr(monitor.accumulator.get().to_dict()), monitor.to_records()) == before
    monitor.update(*events[0])  # the sixth event
    records = monitor.to_records()
    assert [r["time"] for r in records] == [1, 2, 3, 4, 5, 6] and records[-1]["n"] == monitor.accumulator.get().n


@pytest.mark.parametrize(
    ("t", "words"),
    [
        ([0.0, float("nan")], "t must not be NaN, got nan at index 1"),
        ([0.0, math.inf], "t must be finite, got inf at index 1"),
        (["a", "b"], "t must hold real numbers"),
        ([0.0], "t must have one time per event (2), got 1"),
    ],
)
def test_a_monitor_by_time_checks_the_times_before_anything_is_counted(t, words):
    """A monitor by time over an accumulator that takes no times reads them itself: a bad time is refused by
    name, per event and in a batch, before the accumulator counts anything."""
    monitor = se.Monitor(se.BinaryAccumulator(), every=10.0, by="time")
    monitor.update_many([1, 0], [0.3, 0.4], t=[1.0, 2.0])
    before = (monitor.accumulator.to_bytes(), monitor.to_records())
    with pytest.raises((TypeError, ValueError)) as refused:
        monitor.update_many([1, 0], [0.3, 0.4], t=t)
    assert words in str(refused.value)
    bad_one = t[-1] if len(t) == 2 else "x"
    with pytest.raises((TypeError, ValueError), match=r"^t must"):
        monitor.update(1, 0.3, t=bad_one)
    assert (monitor.accumulator.to_bytes(), monitor.to_records()) == before
    monitor.update_many([1, 0], [0.3, 0.4], t=[11.0, 12.0])  # a boundary crossed: recorded at 10
    assert [r["time"] for r in monitor.to_records()] == [10.0] and monitor.accumulator.n == 4


def test_a_short_window_counts_the_events_that_stay_afresh():
    """More events leave than stay at each filing: the window counts the staying ones anew, exactly."""
    rng = np.random.default_rng(11)
    y = (rng.random(10_000) < 0.3).tolist()
    s = rng.random(10_000).tolist()
    win = se.Sliding(se.BinaryAccumulator, size=50)
    update = win.update  # held across filings, as a Monitor holds it
    for yi, si in zip(y, s, strict=True):
        update(yi, si)
    last = se.BinaryAccumulator()
    last.update_many(y[-50:], s[-50:])
    assert win.accumulator() == last  # the same state, exact regime included
    assert win.get().is_exact and win.n == 50
    win.update(True, 0.99, w=3.0)  # a weighted one after the filings: counted too
    last.update(True, 0.99, w=3.0)
    last_but_one = se.BinaryAccumulator()
    last_but_one.update_many(y[-49:], s[-49:])
    last_but_one.update(True, 0.99, w=3.0)
    assert win.get().auc == pytest.approx(last_but_one.get().auc, abs=1e-12)
    assert win.get().n == pytest.approx(52.0)


def _learnt_class_stream(n, seed):
    """Events of a multiclass stream whose classes are learnt: mappings first (class "c" learnt at the third
    event), then score sequences in the learnt order; with that order."""
    rng = np.random.default_rng(seed)
    first = [("a", {"a": 0.7, "b": 0.3}), ("b", {"a": 0.2, "b": 0.8}), ("c", {"a": 0.1, "b": 0.1, "c": 0.8})]
    learner = se.MulticlassAccumulator()
    for y, p in first:
        learner.update(y, p)
    order = learner.classes
    labels = rng.choice(order, n - len(first)).tolist()
    probs = np.round(rng.dirichlet([1.0, 1.0, 1.0], n - len(first)), 2).tolist()
    return first + list(zip(labels, probs, strict=True)), order


def _as_sequences(events, order):
    return [(y, [p.get(c, 0.0) for c in order] if isinstance(p, dict) else p) for y, p in events]


def _same_multiclass(got, want):
    assert got.classes == want.classes
    np.testing.assert_array_equal(got.confusion_matrix, want.confusion_matrix)
    np.testing.assert_array_equal(got.auc_per_class, want.auc_per_class)
    np.testing.assert_array_equal(got.average_precision_per_class, want.average_precision_per_class)


@pytest.mark.parametrize("size", [4, 25])
@pytest.mark.parametrize("per_event", [True, False])
def test_a_sliding_window_keeps_the_learnt_class_order_of_score_sequences(size, per_event):
    # a short window counts the events that stay afresh: its new accumulator starts with the classes learnt
    events, order = _learnt_class_stream(60, seed=1)
    win = se.Sliding(se.MulticlassAccumulator, size=size)
    step = 13 if per_event else 7  # read every 13 per-event updates: more leave a window of 4 than stay
    for start in range(0, len(events), step):
        chunk = events[start : start + step]
        if per_event:
            for y, p in chunk:
                win.update(y, p)
        else:
            kinds = {type(p) for _, p in chunk}
            if kinds == {list}:
                win.update_many([y for y, _ in chunk], np.array([p for _, p in chunk]))
            else:
                for y, p in chunk:
                    win.update(y, p)
        want = se.MulticlassAccumulator(classes=order)
        for y, p in _as_sequences(events[: start + len(chunk)][-size:], order):
            want.update(y, p)
        _same_multiclass(win.get(), want.get())


@pytest.mark.parametrize("per_event", [True, False])
def test_time_window_panes_keep_the_learnt_class_order_of_score_sequences(per_event):
    events, order = _learnt_class_stream(80, seed=2)
    times = np.arange(len(events), dtype=float)
    win = se.TimeWindow(se.MulticlassAccumulator, width=12.0, panes=4)  # panes of 3 time units
    if per_event:
        for (y, p), t in zip(events, times.tolist(), strict=True):
            win.update(y, p, t=t)
    else:
        for y, p in events[:3]:
            win.update(y, p, t=float(times[len(events[:3]) - 1]))
        rest = events[3:]
        for start in range(0, len(rest), 10):  # batches across panes, some starting new ones
            chunk = rest[start : start + 10]
            win.update_many([y for y, _ in chunk], np.array([p for _, p in chunk]), t=times[3 + start : 3 + start + 10])
    last_pane = math.floor(times[-1] / 3.0)
    kept = [e for e, t in zip(events, times, strict=True) if math.floor(t / 3.0) > last_pane - 4]
    want = se.MulticlassAccumulator(classes=order)
    for y, p in _as_sequences(kept, order):
        want.update(y, p)
    _same_multiclass(win.get(), want.get())


def test_decayed_keeps_the_learnt_class_order_of_score_sequences_across_reads():
    events, order = _learnt_class_stream(40, seed=3)
    dec = se.Decayed(se.MulticlassAccumulator, half_life=8.0)
    for i, (y, p) in enumerate(events):
        dec.update(y, p)
        if i % 5 == 4:
            dec.get()  # folds the pending events: the next ones start a new pending accumulator
    want = se.MulticlassAccumulator(classes=order)
    last = len(events) - 1
    for i, (y, p) in enumerate(_as_sequences(events, order)):
        want.update(y, p, 2.0 ** ((i - last) / 8.0))
    got, ref = dec.get(), want.get()
    assert got.classes == ref.classes
    np.testing.assert_allclose(got.confusion_matrix, ref.confusion_matrix, rtol=1e-12)
    np.testing.assert_allclose(got.auc_per_class, ref.auc_per_class, rtol=1e-12)


def test_a_short_window_replays_sequences_given_before_a_class_was_learnt():
    """More events leave than stay: the staying ones are counted afresh. A sequence given while one class was
    known (``[0.3]``) is refused by an accumulator that knows both classes, so they are replayed as the stream
    gave them into one that learns its classes again."""
    events = [("a", {"a": 1.0})] * 3 + [("a", [0.3]), ("b", {"a": 0.2, "b": 0.8})]
    win = se.Sliding(se.MulticlassAccumulator, size=2)
    for y, p in events:
        win.update(y, p)
    whole, left = se.MulticlassAccumulator(), se.MulticlassAccumulator()
    for k, (y, p) in enumerate(events):
        whole.update(y, p)
        if k < 3:
            left.update(y, p)
    got, want = win.get(), (whole - left).get()
    assert got.n == 2 and got.classes == want.classes
    assert got.confusion_matrix.tolist() == want.confusion_matrix.tolist()
    np.testing.assert_array_equal(got.auc_per_class, want.auc_per_class)


def test_emptied_keeps_configuration_and_learnt_classes_and_no_events():
    bins = se.Bins.range_free(mantissa_bits=5)
    made = [
        se.BinaryAccumulator(bins=bins, threshold=0.25, pos_label="y", neg_label="n", exact_up_to=7),
        se.ScoreAccumulator(bins=bins, exact_up_to=3),
        se.RegressionAccumulator(bins=bins),
        se.PairedAccumulator(threshold=0.4, pos_label="y", neg_label="n"),
        se.MulticlassAccumulator(bins=bins, exact_up_to=5),
        se.Segmented(lambda: se.BinaryAccumulator(threshold=0.25), max_segments=3),
    ]
    feeds = [
        lambda a: a.update_many(["y", "n"], [0.9, 0.1]),
        lambda a: a.update_many([0.2, 0.7]),
        lambda a: a.update_many([1.0, 2.0], [1.5, 2.5]),
        lambda a: a.update_many(["y", "n"], [0.9, 0.1], [0.3, 0.6]),
        lambda a: a.update_many(["z", "x"], [{"z": 0.6, "x": 0.4}, {"z": 0.3, "x": 0.7}]),
        lambda a: a.update_many(["s", "t"], [1, 0], [0.9, 0.1]),
    ]
    for acc, feed in zip(made, feeds, strict=True):
        fresh_before = acc.emptied()
        feed(acc)
        fresh = acc.emptied()
        assert fresh.n == 0 and acc.n > 0 and type(fresh) is type(acc)
        fresh.merge(acc)  # the same configuration: they merge
        copy = acc.copy()
        feed(fresh)
        feed(fresh_before)
        assert fresh == acc == copy  # the same events counted: the same state; acc unchanged by its emptied
        assert fresh_before == acc
    learnt = made[4]
    assert learnt.emptied().classes == ("z", "x")
    fixed = se.MulticlassAccumulator(classes=["p", "q"])
    with pytest.raises(ValueError, match="r"):
        fixed.emptied().update("r", {"p": 1.0})  # fixed classes stay fixed


def test_a_window_keeps_the_classes_it_learnt_in_its_pooled_metrics():
    """Classes learnt from events that have left stay in the window's accumulator: its report is that of an
    accumulator knowing them fed the window's events (a class none of them names scoring 0 in each), which pools
    more pairs than one that learns the window's events alone."""
    rng = np.random.default_rng(8)
    early = [("c", {"a": 0.1, "b": 0.2, "c": 0.7}) for _ in range(5)]
    late = [("ab"[i % 2], dict(zip("ab", rng.random(2).round(2).tolist(), strict=True))) for i in range(40)]
    window = se.Sliding(se.MulticlassAccumulator, size=30)
    for y, scores in early + late:
        window.update(y, scores)
    knowing = window.accumulator().emptied()
    alone = se.MulticlassAccumulator()
    for y, scores in late[-30:]:
        knowing.update(y, scores)
        alone.update(y, scores)
    got = window.get()
    assert got.classes == ("c", "a", "b") and alone.get().classes == ("a", "b")
    assert got.micro_auc == knowing.get().micro_auc
    assert got.micro_auc != alone.get().micro_auc
    assert got.confusion_matrix[1:, 1:].tolist() == alone.get().confusion_matrix.tolist()


def test_instants_are_seconds_since_the_epoch_and_durations_seconds():
    """Event times given as instants (datetime, pandas Timestamp, numpy datetime64, their columns) count as the
    same times in seconds since 1970-01-01 UTC, and widths, half-lives and record intervals given as durations
    as their seconds: per event and in batches, equal states and records. A missing instant (NaT, None) or a
    batch mixing instants and numbers is refused by name, nothing changed."""
    import datetime as dt

    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(21)
    n = 3000
    y, s = rng.random(n) < 0.4, rng.random(n)
    secs = np.round(np.sort(rng.uniform(0, 3 * 86400, n)) + 1.77e9, 6)  # microseconds: datetime holds them
    stamps = [dt.datetime(1970, 1, 1) + dt.timedelta(seconds=float(v)) for v in secs]  # naive: UTC
    column = pd.Series(pd.to_datetime(secs, unit="s").round("us"))
    hour = dt.timedelta(hours=1)

    def feed_events(acc, times):
        for i in range(n):
            acc.update(y[i], s[i], t=times[i])

    cases = [
        (lambda: se.TimeWindow(se.BinaryAccumulator, 3600.0, 6), lambda: se.TimeWindow(se.BinaryAccumulator, hour, 6)),
        (lambda: se.Decayed(se.BinaryAccumulator, half_life=1800.0, by="time"),
         lambda: se.Decayed(se.BinaryAccumulator, half_life=pd.Timedelta("30min"), by="time")),
    ]  # fmt: skip
    for make_seconds, make_instants in cases:
        want = make_seconds()
        want.update_many(y, s, t=secs)
        for times in (column, column.to_numpy(), stamps):
            got = make_instants()
            got.update_many(y, s, t=times)
            assert got.accumulator() == want.accumulator(), (make_instants, type(times))
        want, got = make_seconds(), make_instants()
        feed_events(want, secs)
        feed_events(got, [np.datetime64(t) if i % 2 else t for i, t in enumerate(stamps)])  # two forms in a stream
        assert got.accumulator() == want.accumulator()
    by_seconds = se.Monitor(se.BinaryAccumulator(), every=3600.0, by="time")
    by_instants = se.Monitor(se.BinaryAccumulator(), every=np.timedelta64(60, "m"), by="time")
    by_seconds.update_many(y[:1000], s[:1000], t=secs[:1000])
    by_instants.update_many(y[:1000], s[:1000], t=column[:1000])
    for i in range(1000, n):
        by_seconds.update(y[i], s[i], t=secs[i])
        by_instants.update(y[i], s[i], t=stamps[i])
    assert by_instants.to_records() == by_seconds.to_records() and len(by_seconds.to_records()) > 40
    aware = pd.Timestamp("2026-01-01 01:00", tz="Europe/Paris")  # 00:00 UTC
    midnight = (dt.datetime(2026, 1, 1) - dt.datetime(1970, 1, 1)).total_seconds()
    ten_seconds = se.TimeWindow(se.BinaryAccumulator, 10.0, 2)
    ten_seconds.update(1, 0.5, t=aware)
    ten_seconds.update(0, 0.4, t=midnight + 5.0)  # the same window, unless the zone were lost (an hour apart)
    assert ten_seconds.get().n == 2 and ten_seconds.n_late == 0

    win = se.TimeWindow(se.BinaryAccumulator, hour, 6)
    win.update_many(y, s, t=stamps)
    before = win.accumulator().to_bytes()
    for bad, words in [
        (pd.Series([column[0], pd.NaT]), "t must not be missing, got NaT at index 1"),
        ([stamps[0], None], "t must not be missing, got None at index 1"),
        ([stamps[0], 1.77e9], "t must hold instants or real numbers, not both, got 1770000000.0 at index 1"),
    ]:
        with pytest.raises((TypeError, ValueError)) as refused:
            win.update_many([1, 0], [0.5, 0.5], t=bad)
        assert words in str(refused.value)
    for bad in (pd.NaT, np.datetime64("NaT")):
        with pytest.raises(ValueError, match="t must not be missing, got NaT"):
            win.update(1, 0.5, t=bad)
    assert win.accumulator().to_bytes() == before
    with pytest.raises(ValueError, match=r"width must be positive, got datetime\.timedelta"):
        se.TimeWindow(se.BinaryAccumulator, dt.timedelta(0), 6)
    with pytest.raises(TypeError, match="half_life must be a real number"):  # by events: a count of events
        se.Decayed(se.BinaryAccumulator, half_life=hour)


def test_batches_of_times_out_of_order_span_their_earliest_and_latest_time():
    """A monitor by time records at the last boundary a batch's latest time crossed, and a window decayed by time
    weighs a batch's events from its latest time, wherever those times stand in the batch."""
    mon = se.Monitor(se.BinaryAccumulator(), every=10, by="time")
    mon.update_many([1, 0, 1], [0.9, 0.2, 0.6], t=[25.0, 3.0, 7.0])
    assert [(r["time"], r["n"]) for r in mon.to_records()] == [(20.0, 3)]
    dec = se.Decayed(se.BinaryAccumulator, half_life=1.0, by="time")
    dec.update_many([1, 0], [0.9, 0.2], t=[5.0, 1.0])
    assert dec.get().n == 1 + 2.0**-4
    assert dec.get().tp == 1


@pytest.mark.parametrize("binned", [False, True])
@pytest.mark.parametrize("size", [40, 5000])
def test_small_plain_batches_kept_with_the_per_event_updates_equal_the_events_one_by_one(size, binned):
    """Small batches of bool, int64 and float64 arrays are kept in the window's log with its per-event updates:
    after every call the window equals one fed the same events one at a time, across filings, with refused
    batches (nothing kept), labels of another dtype than the run so far (kept after it), float32 scores (kept
    as a batch of their own) and a pickled copy in between."""
    import pickle

    rng = np.random.default_rng(size)
    n = 3000
    y, s = rng.random(n) < 0.4, rng.random(n)
    make = (lambda: se.BinaryAccumulator(exact_up_to=0)) if binned else se.BinaryAccumulator
    win, one = se.Sliding(make, size=size), se.Sliding(make, size=size)
    i = kept = 0
    while i < n:
        m = int(rng.choice([1, 3, 10, 31, 100]))
        part = slice(i, min(i + m, n))
        form = int(rng.integers(0, 6))
        typed = win._log.typed
        if m == 1:
            win.update(bool(y[i]), float(s[i]))
        elif form == 0:  # int labels: the run so far holds bools, so a run of their own starts
            win.update_many(y[part].astype(np.int64), s[part])
        elif form == 1:  # refused whole: nothing kept, nothing counted
            bad = s[part].copy()
            bad[-1] = np.nan
            with pytest.raises(ValueError, match="scores"):
                win.update_many(y[part], bad)
            assert win._log.typed == typed
            continue
        elif form == 2:  # float32 scores: not what the log keeps, a batch of their own
            narrow = s[part].astype(np.float32)
            win.update_many(y[part], narrow)
            s[part] = narrow
        elif form == 3:
            win = pickle.loads(pickle.dumps(win))
            win.update_many(y[part], s[part])
        else:
            win.update_many(y[part], s[part])
            kept += win._log.typed == typed + part.stop - i  # kept after the log's run, no filing in between
        for yi, si in zip(y[part].tolist(), s[part].tolist(), strict=True):
            one.update(bool(yi), float(si))
        i = part.stop
        assert win.n == one.n == min(i, size)
        assert win.accumulator() == one.accumulator()
    assert kept > 10 or not se.COMPILED  # the compiled log kept many of them


@pytest.mark.skipif(not se.COMPILED, reason="the compiled event log is not built here")
def test_the_log_keeps_a_batch_of_plain_arrays_only():
    from streameval._speedups import EventLog

    counted: list[tuple[Any, ...]] = []
    log = EventLog(lambda *a: counted.append(a), lambda: None, lambda *a: None, 1000)
    y, s = np.array([True, False, True]), np.array([0.25, 0.5, 0.75])
    assert log.keep_many((y, s)) and (log.typed, log.pending) == (3, 3) and not counted  # kept, not counted
    log.update(True, 0.125)  # a per-event update of the same kinds: the run goes on
    for refused in [
        (y,),  # another number of arguments than the run
        (y.astype(np.int64), s),  # other kinds than the run
        (y, s.astype(np.float32)),
        (y, s[:2]),  # of other lengths
        (y, s.reshape(3, 1)),
        (y, s[::-1]),  # not contiguous
        (y.tolist(), s),  # a list
        (y, s.astype(object)),
        tuple([s] * 9),  # more arguments than the log holds
        (),
    ]:
        assert log.keep_many(refused) is False and (log.typed, log.pending) == (4, 4)
    with pytest.raises(TypeError, match="tuple"):
        log.keep_many([y, s])
    log.drop_last(1)
    assert (log.typed, log.pending) == (3, 3)
    for bad in (-1, 4):
        with pytest.raises(ValueError, match=rf"drop_last: count must be in \[0, 3\], got {bad}"):
            log.drop_last(bad)
    (tag_y, data_y), (tag_s, data_s) = log.take()
    assert (tag_y, tag_s) == ("b", "f")
    assert np.frombuffer(data_y, np.int64).tolist() == [1, 0, 1] and np.frombuffer(data_s).tolist() == s.tolist()
    assert log.keep_many((np.array([3, 4]), s[:2]))  # an empty run takes any kinds
    log.set_odd()
    assert log.keep_many((np.array([5]), s[:1])) is False  # events go to on_odd: their order is the owner's


def test_decayed_small_plain_batches_kept_with_the_per_event_updates_equal_the_events_one_by_one():
    """A decayed window by events keeps small batches of plain arrays with its per-event updates (checked as they
    come, counted at the next filing at their place in the stream): it reads as one fed the same events one at
    a time, a refused batch leaving nothing behind, and a batch of segments' codes learns them as the events do."""
    rng = np.random.default_rng(5)
    n = 40_000
    y, s, codes = rng.random(n) < 0.4, rng.random(n), rng.integers(0, 3, n)
    win, one = se.Decayed(se.BinaryAccumulator, half_life=500), se.Decayed(se.BinaryAccumulator, half_life=500)
    seg, seg_one = (se.Decayed(lambda: se.Segmented(se.BinaryAccumulator), half_life=500) for _ in range(2))
    i = kept = 0
    while i < n:
        m = int(rng.choice([1, 7, 10, 100]))
        part = slice(i, min(i + m, n))
        typed = win._log.typed
        if m == 1:
            win.update(bool(y[i]), float(s[i]))
            seg.update(int(codes[i]), bool(y[i]), float(s[i]))
        elif rng.random() < 0.2:  # refused whole (a NaN score): nothing kept, nothing checked
            bad = s[part].copy()
            bad[-1] = np.nan
            with pytest.raises(ValueError, match="scores"):
                win.update_many(y[part], bad)
            with pytest.raises(ValueError, match="scores"):
                seg.update_many(codes[part], y[part], bad)
            assert win._log.typed == typed
            continue
        else:
            win.update_many(y[part], s[part])
            seg.update_many(codes[part], y[part], s[part])
            kept += win._log.typed == typed + part.stop - i
        for g, yi, si in zip(codes[part].tolist(), y[part].tolist(), s[part].tolist(), strict=True):
            one.update(bool(yi), float(si))
            seg_one.update(int(g), bool(yi), float(si))
        i = part.stop
        if i % 97 < 10 or i == n:
            for a, b in ((win.get(), one.get()), (seg.get().overall, seg_one.get().overall)):
                assert (a.n, a.tp, a.fp) == pytest.approx((b.n, b.tp, b.fp), rel=1e-12)  # decayed weights' sums
                np.testing.assert_allclose(a.neg, b.neg, rtol=1e-12)
                np.testing.assert_allclose(a.pos, b.pos, rtol=1e-12)
                assert a.auc == pytest.approx(b.auc, rel=1e-12) and a.log_loss == pytest.approx(b.log_loss, rel=1e-12)
    assert sorted(seg.get().segments) == [0, 1, 2]
    assert kept > 100 or not se.COMPILED  # the compiled log kept many of them
