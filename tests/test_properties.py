"""Merging is a sum of counts: associative, commutative, with the empty accumulator as identity."""

from __future__ import annotations

import itertools
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streameval as se
from streameval import bins as bins_module

BINS = [se.Bins.range_free(), se.Bins.uniform(-1.0, 2.0, 13), se.Bins.from_edges([-5.0, 0.0, 0.25, 0.5, 0.9, 1.0])]
THRESHOLDS = [0.5, 0.1234, 0.0, -3.0, 0.95]

scores = st.floats(allow_nan=False, allow_infinity=True, width=64)
events = st.lists(st.tuples(st.booleans(), scores), max_size=60)
weighted_events = st.lists(
    st.tuples(st.booleans(), scores, st.floats(min_value=0.0, max_value=1e3, allow_nan=False)), max_size=60
)
config = st.tuples(st.sampled_from(range(len(BINS))), st.sampled_from(THRESHOLDS))
settings.register_profile("ci", deadline=None, max_examples=60)
settings.load_profile("ci")


def _acc(cfg, evs, per_event=False):
    acc = se.BinaryAccumulator(bins=BINS[cfg[0]], threshold=cfg[1])
    if per_event:
        for e in evs:
            acc.update(*e)
    elif evs:
        cols = list(zip(*evs, strict=False))
        acc.update_many(*cols)
    return acc


def _assert_close(a: se.BinaryAccumulator, b: se.BinaryAccumulator) -> None:
    ra, rb = a.get(), b.get()
    np.testing.assert_array_equal(ra.keys, rb.keys)
    np.testing.assert_allclose(ra.neg, rb.neg, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(ra.pos, rb.pos, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose([ra.tp, ra.fp, ra.tn, ra.fn], [rb.tp, rb.fp, rb.tn, rb.fn], rtol=1e-12, atol=1e-9)


@given(config, events, events, events)
def test_merge_is_associative_and_commutative_exactly(cfg, e1, e2, e3):
    a, b, c = _acc(cfg, e1), _acc(cfg, e2), _acc(cfg, e3)
    assert (a + b) + c == a + (b + c)
    assert a + b == b + a
    assert a + _acc(cfg, []) == a
    assert sum([a, b, c]) == a.merge(b).merge(c)
    assert (a + b).get().n == len(e1) + len(e2)


@given(config, weighted_events, weighted_events, weighted_events)
def test_weighted_merge_is_associative_and_commutative(cfg, e1, e2, e3):
    a, b, c = _acc(cfg, e1), _acc(cfg, e2), _acc(cfg, e3)
    assert a + b == b + a  # elementwise float addition commutes exactly
    _assert_close((a + b) + c, a + (b + c))


@given(config, events)
def test_per_event_updates_equal_one_batch_update(cfg, evs):
    assert _acc(cfg, evs, per_event=True) == _acc(cfg, evs)


@given(config, weighted_events)
def test_weighted_per_event_updates_equal_one_batch_update(cfg, evs):
    _assert_close(_acc(cfg, evs, per_event=True), _acc(cfg, evs))


@given(config, events, st.lists(st.integers(min_value=0, max_value=60), max_size=6))
def test_shards_merged_equal_one_stream_bit_for_bit(cfg, evs, cuts):
    bounds = sorted({0, len(evs), *(min(c, len(evs)) for c in cuts)})
    shards = [_acc(cfg, evs[lo:hi]) for lo, hi in itertools.pairwise(bounds)]
    whole = _acc(cfg, evs)
    merged = sum(shards) if shards else _acc(cfg, [])
    assert merged == whole
    rm, rw = merged.get(), whole.get()
    assert (rm.tp, rm.fp, rm.tn, rm.fn) == (rw.tp, rw.fp, rw.tn, rw.fn)
    assert type(rm.tp) is int
    assert np.array_equal(rm.neg, rw.neg) and np.array_equal(rm.pos, rw.pos)


@given(config, events)
def test_threshold_counts_equal_a_direct_count(cfg, evs):
    r = _acc(cfg, evs, per_event=True).get()
    y = np.array([e[0] for e in evs], dtype=bool)
    s = np.array([e[1] for e in evs], dtype=float)
    pred = s >= cfg[1]
    assert (r.tp, r.fp, r.tn, r.fn) == (
        int(np.sum(pred & y)),
        int(np.sum(pred & ~y)),
        int(np.sum(~pred & ~y)),
        int(np.sum(~pred & y)),
    )


@given(st.sampled_from(range(len(BINS))), st.lists(scores, min_size=1, max_size=200))
def test_bin_keys_are_ordered_and_edges_hold_their_scores(bi, values):
    bins = BINS[bi]
    x = np.sort(np.array(values, dtype=float))
    k = bins.keys(x)
    assert np.all(np.diff(k) >= 0)
    assert k.min() >= bins.key_min and k.max() <= bins.key_max
    lo = bins.lower_edges(k)
    assert np.all(lo <= x)
    nxt = k + 1
    inside = nxt <= bins.key_max
    assert np.all(x[inside] < bins.lower_edges(nxt[inside]))
    assert np.array_equal(bins.keys(lo), k)


@pytest.mark.parametrize("mantissa_bits", [1, 3, 7])
def test_every_range_free_lower_edge_is_the_lowest_float_of_its_bucket(mantissa_bits):
    """Every key of the scheme, not a sample: the edge is the lowest float whose key is at least the key.

    So a threshold at an edge splits the scores exactly. Some keys hold no float (``s - 1`` never takes
    the tiniest values, nor values below -0.5): their edge is that of the next key that does.
    """
    bins = se.Bins.range_free(mantissa_bits)
    keys = np.arange(bins.key_min + 1, bins.key_max + 1, dtype=np.int64)
    edges = bins.lower_edges(keys)
    assert np.all(bins.keys(edges) >= keys)
    assert np.all(bins.keys(np.nextafter(edges, -np.inf)) < keys)
    assert bins.lower_edges([bins.key_min])[0] == -np.inf


@given(
    st.sampled_from([*range(len(BINS)), "m3", "m12"]),
    st.lists(st.tuples(scores, st.booleans()), min_size=1, max_size=200),
)
def test_labelled_codes_decode_to_keys_and_labels(bi, items):
    bins = {"m3": se.Bins.range_free(3), "m12": se.Bins.range_free(12)}.get(bi) or BINS[bi]
    x = np.array([v for v, _ in items], dtype=float)
    lab = np.array([p for _, p in items], dtype=bool)
    codes = bins.labelled_codes(x, lab)
    assert codes.min() >= 0 and codes.max() < 2 * bins.n_codes
    keys, is_pos = bins.decode(codes)
    assert np.array_equal(keys, bins.keys(x))
    assert np.array_equal(is_pos, lab)


@given(
    st.sampled_from([*range(len(BINS)), "m1", "m3", "m12"]),
    st.lists(st.tuples(scores, st.booleans()), min_size=1, max_size=50),
)
def test_one_labelled_code_equals_the_batchs(bi, items):
    """``labelled_code`` of one score (Python integers for the range-free scheme) is ``labelled_codes``'."""
    bins = {"m1": se.Bins.range_free(1), "m3": se.Bins.range_free(3), "m12": se.Bins.range_free(12)}.get(bi)
    bins = bins or BINS[bi]
    x = np.array([v for v, _ in items] + [0.0, -0.0, 0.5, np.nextafter(0.5, 0), 1.0], dtype=float)
    lab = np.array([p for _, p in items] + [True, False, True, False, True], dtype=bool)
    want = bins.labelled_codes(x, lab).tolist()
    assert [bins.labelled_code(float(v), bool(p)) for v, p in zip(x, lab, strict=True)] == want
    with mock.patch.object(bins_module, "SPEEDUPS", None):  # the Python twin of the compiled one
        assert [bins.labelled_code(float(v), bool(p)) for v, p in zip(x, lab, strict=True)] == want


def test_negative_zero_and_zero_share_one_code():
    for bins in [*BINS, se.Bins.range_free(3)]:
        codes = bins.labelled_codes([-0.0, 0.0, -0.0, 0.0], [False, False, True, True])
        assert codes[0] == codes[1] and codes[2] == codes[3]
        acc = se.BinaryAccumulator(bins=bins)
        acc.update_many([0, 0, 1], [-0.0, 0.0, -0.0])
        r = acc.get()
        assert r.n == 3 and r.neg.sum() == 2 and r.pos.sum() == 1


# -- windows over classes learnt from the stream -------------------------------------------------------------
_CLASSES = ["a", "b", "c", "d"]


@st.composite
def _learnt_stream(draw):
    """Events of a multiclass stream whose classes are learnt from mappings, then score sequences in the learnt
    order (every class known by then); split into runs of per-event calls and batches, with reads between."""
    n = draw(st.integers(1, 40))
    labels = draw(st.lists(st.sampled_from(_CLASSES), min_size=n, max_size=n))
    probs = draw(st.lists(st.integers(0, 9), min_size=4 * n, max_size=4 * n))
    order = list(dict.fromkeys(labels))
    learnt = max(labels.index(c) for c in order) + 1  # every class met: sequences from here on
    events = []
    for i, y in enumerate(labels):
        known = order if i >= learnt else [c for c in order if c in labels[: i + 1]]
        p = [probs[4 * i + k] / 10 for k in range(len(known))]
        events.append((y, p if i >= learnt and i % 3 else dict(zip(known, p, strict=True))))
    cuts = draw(st.lists(st.tuples(st.integers(1, 8), st.booleans(), st.booleans()), min_size=1, max_size=n))
    return events, cuts


def _cells(report):
    """The confusion matrix as {(true class, predicted class): count}, without the zeros."""
    m = report.confusion_matrix
    return {(a, b): m[i, j] for i, a in enumerate(report.classes) for j, b in enumerate(report.classes) if m[i, j]}


@given(_learnt_stream(), st.integers(1, 12))
def test_a_sliding_window_over_learnt_classes_equals_the_last_events(stream, size):
    """Whatever the calls and reads, the window's counts are those of the whole stream less the events before
    its last ``size`` (both learnt-class accumulators fed the stream as it came)."""
    events, cuts = stream
    win = se.Sliding(se.MulticlassAccumulator, size=size)
    done, step = 0, 0
    while done < len(events):
        length, batch, read = cuts[step % len(cuts)]
        chunk = events[done : done + length]
        if batch and all(isinstance(p, list) for _, p in chunk):
            win.update_many([y for y, _ in chunk], np.array([p for _, p in chunk]))
        else:
            for y, p in chunk:
                win.update(y, p)
        done += len(chunk)
        step += 1
        if read or done == len(events):
            whole, before = se.MulticlassAccumulator(), se.MulticlassAccumulator()
            for k, (y, p) in enumerate(events[:done]):
                whole.update(y, p)
                if k < done - size:
                    before.update(y, p)
            assert _cells(win.get()) == _cells((whole - before).get())


# -- windows against one accumulator, on a stream with refused and mixed events ------------------------------
def _class_event(r):
    """A multiclass event: scores as a dict, a sequence (some short, some too long), a predicted class (the
    other kind), NaN, an unknown class now and then."""
    classes = ["a", "b", "c"]
    y = r.choice(classes + (["d"] if r.random() < 0.05 else []))
    k = r.random()
    if k < 0.35:
        return (y, {c: r.random() for c in classes})
    if k < 0.55:
        return (y, [r.random() for _ in classes])
    if k < 0.65:
        return (y, [r.random() for _ in classes[:2]])
    if k < 0.8:
        return (y, r.choice(classes))
    if k < 0.85:
        return (y, dict.fromkeys(classes, float("nan")))
    if k < 0.9:
        return (y, {"a": r.random()})
    return (y, [r.random() for _ in range(4)])


STREAMS = {  # a kind, its events, the metrics compared
    "multiclass": (se.MulticlassAccumulator, _class_event, ["n", "accuracy", "kappa", "macro_f1", "macro_auc"]),
    "multiclass-fixed": (lambda: se.MulticlassAccumulator(classes=["a", "b", "c"]), _class_event,
                         ["n", "accuracy", "macro_f1", "macro_auc"]),
    "binary": (se.BinaryAccumulator, lambda r: (r.choice([0, 1, 1, 2] if r.random() < 0.1 else [0, 1]),
                                                float("nan") if r.random() < 0.03 else r.random()),
               ["n", "auc", "accuracy", "f1", "brier"]),
    "paired": (lambda: se.PairedAccumulator(threshold=0.5),
               lambda r: (r.choice([0, 1, 2] if r.random() < 0.05 else [0, 1]), r.random(),
                          r.random() if r.random() > 0.03 else "x"),
               ["n", "a_accuracy", "b_accuracy", "mcnemar_statistic"]),
    "segments": (lambda: se.Segmented(lambda: se.MulticlassAccumulator(classes=["a", "b", "c"])),
                 lambda r: (r.choice(["eu", "us"]), *_class_event(r)), ["n", "accuracy", "macro_f1"]),
}  # fmt: skip
WINDOWS = {  # windows that hold every event of these streams (a decay of weights within 1e-9 of 1)
    "sliding": lambda make: se.Sliding(make, size=10**6),
    "time": lambda make: se.TimeWindow(make, width=1e9, panes=4),
    "decayed": lambda make: se.Decayed(make, half_life=1e12),
    "monitor": lambda make: se.Monitor(make(), every=7),
}


@pytest.mark.parametrize("window", list(WINDOWS))
@pytest.mark.parametrize("stream", list(STREAMS))
def test_a_window_takes_and_refuses_what_one_accumulator_does(stream, window):
    """Events one by one and in small batches, valid, refused (bad values, unknown classes, the other kind of
    multiclass events, short and long sequences), with reads now and then: a window holding them all accepts
    and refuses exactly what one accumulator fed the same does, stays readable, and ends with its metrics."""
    import math
    import random

    make, event, metrics = STREAMS[stream]
    for trial in range(2):
        r = random.Random(f"{stream}-{window}-{trial}")
        win, one = WINDOWS[window](make), make()
        for step in range(250):
            if r.random() < 0.1:
                events = [event(r) for _ in range(r.randint(1, 4))]
                args = [list(column) for column in zip(*events, strict=True)]
                timed = {"t": [float(step)] * len(events)} if window == "time" else {}
                calls = [(win.update_many, args, timed), (one.update_many, args, {})]
            else:
                args = list(event(r))
                calls = [(win.update, args, {"t": float(step)} if window == "time" else {}), (one.update, args, {})]
            taken = []
            for call, call_args, keywords in calls:
                try:
                    call(*call_args, **keywords)
                    taken.append(True)
                except (TypeError, ValueError):
                    taken.append(False)
            assert taken[0] == taken[1], (step, args, taken)
            if step % 40 == 0:
                win.get()
        got, want = win.get(), one.get()
        got, want = getattr(got, "overall", got), getattr(want, "overall", want)
        for name in metrics:
            a, b = float(getattr(got, name)), float(getattr(want, name))
            assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-7, abs=1e-12), (name, a, b)


@pytest.mark.parametrize("size", [3, 17, 60])
@pytest.mark.parametrize("stream", ["multiclass", "multiclass-fixed", "binary", "paired"])
def test_a_sliding_window_equals_its_last_events_on_a_stream_with_refused_and_mixed_events(stream, size):
    """The stream above, with weights and copies of the window now and then: the window's report is that of
    its last ``size`` accepted events fed afresh (score sequences as the mappings they meant when given)."""
    import copy
    import math
    import random

    make, event, metrics = STREAMS[stream]
    if stream == "multiclass":  # a window keeps the classes learnt before its events: pooled metrics differ
        metrics = ["n", "accuracy"]
    for trial in range(2):
        r = random.Random(f"last-{stream}-{size}-{trial}")
        win, whole, kept = se.Sliding(make, size=size), make(), []

        def meant(args, whole=whole):
            """An event as accepted: a sequence as the mapping of the classes known then."""
            classes = getattr(whole, "classes", None)
            if classes is None or not isinstance(args[-1], (list, tuple)):
                return args
            return (*args[:-1], dict(zip(classes, args[-1], strict=False)))

        for step in range(300):
            if r.random() < 0.1:
                events = [event(r) for _ in range(r.randint(1, 5))]
                columns = [list(column) for column in zip(*events, strict=True)]
                try:
                    win.update_many(*columns)
                except (TypeError, ValueError):
                    continue
                whole.update_many(*columns)
                kept += [(meant(e), {}) for e in events]
            else:
                args, keywords = event(r), {"w": 2.0} if r.random() < 0.1 else {}
                try:
                    win.update(*args, **keywords)
                except (TypeError, ValueError):
                    continue
                whole.update(*args, **keywords)
                kept.append((meant(args), keywords))
            if r.random() < 0.02:
                win = copy.deepcopy(win)
            if step % 50 == 49:
                fresh = make()
                for args, keywords in kept[-size:]:
                    fresh.update(*args, **keywords)
                got, want = win.get(), fresh.get()
                for name in metrics:
                    a, b = float(getattr(got, name)), float(getattr(want, name))
                    assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-9, abs=1e-12), (name, a, b)
