"""Every fast path gives exactly what the plain path gives."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import streameval as se
from streameval._events import FLUSH_EVERY as _FLUSH_EVERY
from streameval.bins import BLOCK

BINS = {
    "range_free": se.Bins.range_free(),
    "range_free_coarse": se.Bins.range_free(1),  # a page spans many octaves
    "range_free_fine": se.Bins.range_free(12),
    "uniform": se.Bins.uniform(-2.0, 3.0, 500),
    "edges": se.Bins.from_edges(np.linspace(-1, 2, 77)),
}


def _stream(n, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.4
    s = np.where(rng.random(n) < 0.5, rng.normal(y * 1.0, 2.0), rng.random(n))
    s[rng.random(n) < 0.01] = np.inf
    s[rng.random(n) < 0.01] = -0.0
    return y, s


def _plain_histogram(bins, y, s, w=None):
    """The histogram from ordered keys with numpy's unique: no codes, no pages, no blocks."""
    w = np.ones(y.size) if w is None else w
    keys = bins.keys(s)
    uniq, inv = np.unique(keys, return_inverse=True)
    neg = np.bincount(inv, weights=w * ~y, minlength=uniq.size)
    pos = np.bincount(inv, weights=w * y, minlength=uniq.size)
    keep = (neg != 0) | (pos != 0)
    return uniq[keep], neg[keep], pos[keep]


@pytest.mark.parametrize("name", list(BINS))
@pytest.mark.parametrize("threshold", [0.5, 0.377])
def test_batch_over_many_blocks_equals_the_plain_histogram(name, threshold):
    y, s = _stream(2 * BLOCK + 123)
    acc = se.BinaryAccumulator(bins=BINS[name], threshold=threshold)
    acc.update_many(y, s)
    r = acc.get()
    keys, neg, pos = _plain_histogram(BINS[name], y, s)
    np.testing.assert_array_equal(r.keys, keys)
    np.testing.assert_array_equal(r.neg, neg)
    np.testing.assert_array_equal(r.pos, pos)
    pred = s >= threshold
    assert (r.tp, r.fp) == (int(np.sum(pred & y)), int(np.sum(pred & ~y)))


@pytest.mark.parametrize("name", list(BINS))
def test_per_event_across_flush_boundaries_with_reads_in_between(name):
    n = 3 * _FLUSH_EVERY + 77
    y, s = _stream(n, seed=1)
    rng = np.random.default_rng(2)
    reads = set(rng.integers(0, n, 12).tolist()) | {_FLUSH_EVERY - 1, _FLUSH_EVERY, 2 * _FLUSH_EVERY + 1}
    per_event = se.BinaryAccumulator(bins=BINS[name], threshold=0.377)
    for i in range(n):
        per_event.update(bool(y[i]), float(s[i]))
        if i in reads:
            partial = se.BinaryAccumulator(bins=BINS[name], threshold=0.377)
            partial.update_many(y[: i + 1], s[: i + 1])
            assert per_event == partial
            assert per_event.get().n == i + 1
    batch = se.BinaryAccumulator(bins=BINS[name], threshold=0.377)
    batch.update_many(y, s)
    assert per_event == batch


def test_mixed_weighted_and_unit_events_per_event_equal_batch():
    y, s = _stream(2 * _FLUSH_EVERY + 5, seed=3)
    w = np.where(np.arange(y.size) % 3 == 0, 2.5, 1.0)
    per_event = se.BinaryAccumulator(exact_up_to=0)
    for yi, si, wi in zip(y, s, w, strict=True):
        per_event.update(bool(yi), float(si), float(wi))
    batch = se.BinaryAccumulator(exact_up_to=0)
    batch.update_many(y, s, w)
    r1, r2 = per_event.get(), batch.get()
    np.testing.assert_array_equal(r1.keys, r2.keys)
    np.testing.assert_allclose(r1.neg, r2.neg, rtol=1e-12)
    np.testing.assert_allclose(r1.pos, r2.pos, rtol=1e-12)
    keys, neg, pos = _plain_histogram(se.Bins.range_free(), y, s, w)
    np.testing.assert_array_equal(r2.keys, keys)
    np.testing.assert_allclose(r2.neg, neg, rtol=1e-12)
    np.testing.assert_allclose(r2.pos, pos, rtol=1e-12)


def test_merge_all_equals_pairwise_merging_and_one_stream():
    y, s = _stream(50_000, seed=4)
    cuts = np.sort(np.random.default_rng(5).integers(0, y.size, 40))
    shards = []
    for part_y, part_s in zip(np.split(y, cuts), np.split(s, cuts), strict=True):
        acc = se.BinaryAccumulator(threshold=0.377)
        acc.update_many(part_y, part_s)
        shards.append(acc)
    whole = se.BinaryAccumulator(threshold=0.377)
    whole.update_many(y, s)
    merged = se.BinaryAccumulator.merge_all(shards)
    assert merged == whole
    assert merged == sum(shards)
    assert shards[0].get().n < whole.get().n  # inputs untouched
    with pytest.raises(ValueError, match="threshold"):
        se.BinaryAccumulator.merge_all([shards[0], se.BinaryAccumulator()])
    with pytest.raises(ValueError, match="at least one"):
        se.BinaryAccumulator.merge_all([])


def test_per_event_buffer_stays_bounded():
    from streameval._events import _TICK

    acc = se.BinaryAccumulator()
    peak = 0
    for i in range(20_000):
        acc.update(i % 2, (i % 1000) / 1000)
        peak = max(peak, acc._buffered())
    assert _FLUSH_EVERY - _TICK <= peak <= _FLUSH_EVERY + _TICK  # counted in batches, never unbounded
    assert acc.get().n == 20_000 and acc._buffered() == 0


@pytest.mark.parametrize("regime", ["exact", "binned"])
@pytest.mark.parametrize("labels_dtype", [np.bool_, np.int8, np.uint8, np.int32, np.int64])
def test_small_batches_stored_as_per_event_updates_count_as_the_batch_path(regime, labels_dtype, monkeypatch):
    """Batches of up to 1,024 plain events go to the per-event buffer (flushed first when they do not fit beside
    what it holds); with per-event updates and reads in between, every read and the final state equal those of
    the batch path, and scikit-learn's AUC while exact."""
    from sklearn.metrics import roc_auc_score

    from streameval import _events

    rng = np.random.default_rng(11)
    sizes = [0, 1, 7, 100, 1024, 1025, 3000, 4000, 50, 1024, 90, 1]  # around the limit and the buffer's 4,096
    n = sum(sizes) + len(sizes) * 3
    y = rng.random(n) < 0.4
    s = np.round(rng.random(n), 3) if regime == "exact" else rng.normal(y * 1.0, 1.5)
    s[rng.random(n) < 0.01] = -0.0

    def fed():
        acc, at, reads = se.BinaryAccumulator(threshold=0.41), 0, []
        for size in sizes:
            acc.update_many(y[at : at + size].astype(labels_dtype), s[at : at + size])
            at += size
            for _ in range(3):  # per-event updates between batches
                acc.update(bool(y[at]), float(s[at]))
                at += 1
            r = acc.get()
            reads.append((r.n, r.tp, r.fp, r.tn, r.fn, r.auc, r.brier))
        return acc, reads

    stored, stored_reads = fed()
    monkeypatch.setattr(_events, "SINGLE_EVENTS_UP_TO", -1)  # every batch through the batch path
    counted, counted_reads = fed()
    assert stored_reads == counted_reads
    assert se.to_bytes(stored) == se.to_bytes(counted)
    assert stored.get().is_exact == (regime == "exact")
    if regime == "exact":
        assert stored.get().auc == pytest.approx(roc_auc_score(y, s), abs=1e-12)


@pytest.mark.parametrize(("bad", "value", "message"), [("y", 2, "got 2 at index 150"), ("y", -1, "got -1 at index 150"),
                                                      ("scores", np.nan, "NaN")])  # fmt: skip
def test_a_small_batch_with_a_bad_event_is_refused_whole_with_the_batch_paths_error(bad, value, message):
    """A bad event in a small batch: nothing of the batch is stored, the events held stay as they were, and the
    error is the batch path's (naming the index); the next good batch is counted."""
    rng = np.random.default_rng(3)
    acc = se.BinaryAccumulator()
    for a, b in zip((rng.random(4000) < 0.4).tolist(), rng.random(4000).tolist(), strict=True):
        acc.update(a, b)  # 4,000 held: a batch of 200 does not fit beside them
    before = se.to_bytes(acc)
    y, s = (rng.random(200) < 0.4).astype(np.int64), rng.random(200)
    (y if bad == "y" else s)[150] = value
    with pytest.raises(ValueError, match=message):
        acc.update_many(y, s)
    assert se.to_bytes(acc) == before
    y[150], s[150] = 1, 0.5
    acc.update_many(y, s)
    assert acc.n == 4200


@pytest.mark.parametrize("kind", ["scores", "regression"])
def test_small_batches_of_float_columns_stored_as_per_event_updates_count_as_the_batch_path(kind, monkeypatch):
    """ScoreAccumulator and RegressionAccumulator batches of up to 1,024 plain values go to the per-event buffer
    (flushed first when they do not fit beside what it holds): every read, with per-event updates and reads in
    between, equals the batch path's to 1e-12, and scikit-learn's and numpy's values; a value past 1e150 and a take-out
    pending take the batch path."""
    from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

    from streameval import _events

    rng = np.random.default_rng(12)
    sizes = [0, 1, 7, 100, 1024, 1025, 3000, 4000, 50, 1024, 90, 1]
    n = sum(sizes) + len(sizes) * 3
    y, p = rng.normal(3.0, 2.0, n), rng.normal(3.0, 2.0, n)
    p[200] = -0.0  # plain

    def fed():
        acc = se.ScoreAccumulator() if kind == "scores" else se.RegressionAccumulator()
        at, reads = 0, []
        for i, size in enumerate(sizes):
            columns = (p[at : at + size],) if kind == "scores" else (y[at : at + size], p[at : at + size])
            acc.update_many(*columns)
            at += size
            for _ in range(3):
                acc.update(*((float(p[at]),) if kind == "scores" else (float(y[at]), float(p[at]))))
                at += 1
            if i == 5:  # one taken out: the next batch takes the batch path, after it
                acc.revert(*((float(p[at - 1]),) if kind == "scores" else (float(y[at - 1]), float(p[at - 1]))))
            r = acc.get()
            reads.append(
                [r.n, r.weight, *((r.mean, r.std, r.min, r.max) if kind == "scores" else (r.mse, r.mae, r.r2))]
            )
        return acc, reads, at

    def large():  # values past LARGE_VALUE in a small batch: counted at once, as by the batch path (1e200 refused)
        acc = se.ScoreAccumulator() if kind == "scores" else se.RegressionAccumulator()
        for big in (1e200, 1e151):
            with pytest.raises(ValueError, match="overflow") if big == 1e200 else contextlib.nullcontext():
                acc.update_many(*([np.array([big, 2.0])] if kind == "scores" else [np.array([big, 2.0]), np.ones(2)]))
        return se.to_bytes(acc)

    stored, stored_reads, end = fed()
    stored_large = large()
    monkeypatch.setattr(_events, "SINGLE_EVENTS_UP_TO", -1)  # every batch through the batch path
    _, counted_reads, _ = fed()
    np.testing.assert_allclose(np.array(stored_reads), np.array(counted_reads), rtol=1e-12)
    assert stored_large == large()
    keep = np.ones(end, dtype=bool)
    keep[sum(sizes[:6]) + 6 * 3 - 1] = False  # the event taken out
    r = stored.get()
    if kind == "regression":
        assert r.mse == pytest.approx(mean_squared_error(y[:end][keep], p[:end][keep]), rel=1e-12)
        assert r.mae == pytest.approx(mean_absolute_error(y[:end][keep], p[:end][keep]), rel=1e-12)
        assert r.r2 == pytest.approx(r2_score(y[:end][keep], p[:end][keep]), rel=1e-12)
    else:
        assert (r.mean, r.std) == pytest.approx((np.mean(p[:end][keep]), np.std(p[:end][keep])), rel=1e-12)


@pytest.mark.parametrize("kind", ["scores", "regression"])
def test_a_small_batch_of_float_columns_with_a_bad_value_is_refused_whole_with_the_batch_paths_error(kind):
    rng = np.random.default_rng(4)
    acc = se.ScoreAccumulator() if kind == "scores" else se.RegressionAccumulator()
    for v in rng.random(4000).tolist():
        acc.update(*((v,) if kind == "scores" else (v, v + 1.0)))  # 4,000 held: 200 more do not fit beside them
    before = se.to_bytes(acc)
    for bad in (np.inf, np.nan):
        columns = [rng.random(200) for _ in range(1 if kind == "scores" else 2)]
        columns[-1][150] = bad
        with pytest.raises(ValueError, match=r"at index 150|NaN"):
            acc.update_many(*columns)
        assert se.to_bytes(acc) == before
    columns[-1][150] = 0.5
    acc.update_many(*columns)
    assert acc.n == 4200


@pytest.mark.parametrize("form", ["matrix", "mappings", "labels", "learnt"])
def test_small_multiclass_batches_stored_as_per_event_updates_count_as_the_batch_path(form, monkeypatch):
    """MulticlassAccumulator batches of up to 1,024 unweighted events, once checked, go to the per-event buffer
    (flushed first when they do not fit beside what it holds): with per-event updates and reads in between,
    every read and the final state equal the batch path's, and scikit-learn's confusion matrix."""
    from sklearn.metrics import confusion_matrix

    from streameval import _events

    rng = np.random.default_rng(13)
    classes = ["a", "b", "c", "d"]
    sizes = [0, 1, 7, 100, 1024, 1025, 3000, 4000, 50, 1024, 90, 1]
    n = sum(sizes) + len(sizes) * 2 + 1
    y = rng.integers(0, 4, n)
    p = rng.dirichlet(np.ones(4), n)
    p[rng.random(n) < 0.05] = 0.25  # ties: the first class wins
    pred = p.argmax(axis=1)

    def scores(lo, hi):
        if form == "labels":
            return [classes[j] for j in pred[lo:hi]]
        if form == "mappings":
            return [dict(zip(classes, row, strict=True)) for row in p[lo:hi].tolist()]
        return p[lo:hi]

    def fed():
        acc = se.MulticlassAccumulator(classes=None if form == "learnt" else classes)
        if form == "learnt":  # the classes learnt in their order by a first event
            acc.update("a", {c: 0.25 for c in classes})
        at, reads = 1 if form == "learnt" else 0, []
        for size in sizes:
            acc.update_many([classes[j] for j in y[at : at + size]], scores(at, at + size))
            at += size
            for _ in range(2):
                one = scores(at, at + 1)[0]
                acc.update(classes[y[at]], one if form != "matrix" else dict(zip(classes, one.tolist(), strict=True)))
                at += 1
            r = acc.get()
            reads.append((r.n, r.accuracy, r.confusion_matrix.tolist(), r.macro_auc if form != "labels" else 0.0))
        return acc, reads, at

    stored, stored_reads, end = fed()
    monkeypatch.setattr(_events, "SINGLE_EVENTS_UP_TO", -1)  # every batch through the batch path
    _, counted_reads, _ = fed()
    assert stored_reads == counted_reads
    start = 1 if form == "learnt" else 0
    expected = confusion_matrix(y[start:end], pred[start:end], labels=range(4))
    expected[0, 0] += start  # the first event: "a", its predicted class the first of four tied
    assert stored.get().confusion_matrix.tolist() == expected.tolist()


def test_a_small_multiclass_batch_that_is_refused_changes_nothing():
    rng = np.random.default_rng(5)
    acc = se.MulticlassAccumulator(classes=[0, 1, 2])
    for label, row in zip(rng.integers(0, 3, 4000).tolist(), rng.dirichlet(np.ones(3), 4000).tolist(), strict=True):
        acc.update(label, row)  # 4,000 held: 200 more do not fit beside them
    before = se.to_bytes(acc)
    y, p = rng.integers(0, 3, 200), rng.dirichlet(np.ones(3), 200)
    for bad_y, bad_p, message in ((3, 0.5, "got 3 at index 150"), (1, np.nan, "NaN")):
        y2, p2 = y.copy(), p.copy()
        y2[150], p2[150, 1] = bad_y, bad_p
        with pytest.raises(ValueError, match=message):
            acc.update_many(y2, p2)
        assert se.to_bytes(acc) == before
    acc.update_many(y, p)
    assert acc.n == 4200


@pytest.mark.parametrize("regime", ["exact", "binned"])
def test_small_weighted_batches_stored_as_per_event_updates_count_as_the_batch_path(regime, monkeypatch):
    """Weighted batches of up to 1,024 events go where weighted per-event updates go (batches whose weights are
    all 1 where unit-weight ones go, as the batch path reads them): every read, with per-event updates and reads
    in between, equals the batch path's to 1e-12, and scikit-learn's weighted AUC while exact."""
    from sklearn.metrics import roc_auc_score

    from streameval import _events

    rng = np.random.default_rng(14)
    sizes = [0, 1, 7, 100, 1024, 1025, 3000, 4000, 50, 1024, 90, 1]
    n = sum(sizes) + len(sizes) * 2
    y = rng.random(n) < 0.4
    s = np.round(rng.random(n), 3) if regime == "exact" else rng.normal(y * 1.0, 1.5)
    w = rng.random(n) * 3
    w[rng.random(n) < 0.05] = 0.0
    w[sum(sizes[:3]) + 6 : sum(sizes[:4]) + 6] = 1.0  # the batch of 100: every weight 1

    def fed():
        acc, at, reads = se.BinaryAccumulator(threshold=0.41), 0, []
        for size in sizes:
            acc.update_many(y[at : at + size].astype(np.int64), s[at : at + size], w[at : at + size])
            at += size
            for _ in range(2):
                acc.update(bool(y[at]), float(s[at]), float(w[at]))
                at += 1
            r = acc.get()
            reads.append([r.n, r.positives, r.negatives, r.tp, r.fp, r.tn, r.fn, r.auc, r.brier, r.log_loss])
        return acc, reads

    stored, stored_reads = fed()
    monkeypatch.setattr(_events, "SINGLE_EVENTS_UP_TO", -1)  # every batch through the batch path
    _, counted_reads = fed()
    np.testing.assert_allclose(np.array(stored_reads), np.array(counted_reads), rtol=1e-12)
    if regime == "exact":
        assert stored.get().auc == pytest.approx(roc_auc_score(y, s, sample_weight=w), abs=1e-12)
    ones = se.BinaryAccumulator()
    ones.update_many(y[:50], s[:50], np.ones(50))  # every weight 1: whole counts, as without weights
    plain = se.BinaryAccumulator()
    plain.update_many(y[:50], s[:50])
    assert se.to_bytes(ones) == se.to_bytes(plain)


@pytest.mark.parametrize(("bad", "message"), [(-1.0, "w must be finite and >= 0"), (np.nan, "w must be"),
                                              (np.inf, "w must be finite"), (1e308, "overflow|inf")])  # fmt: skip
def test_a_small_weighted_batch_with_a_bad_weight_is_refused_whole(bad, message):
    rng = np.random.default_rng(6)
    acc = se.BinaryAccumulator()
    for a, b in zip((rng.random(100) < 0.4).tolist(), rng.random(100).tolist(), strict=True):
        acc.update(a, b, 1e306)  # weighted events held, their total near the largest float
    before = se.to_bytes(acc)
    y, s, w = rng.random(200) < 0.4, rng.random(200), rng.random(200)
    w[150] = bad
    with pytest.raises(ValueError, match=message):
        acc.update_many(y, s, w)
    assert se.to_bytes(acc) == before


def test_a_small_weighted_batch_whose_total_overflows_is_refused_by_the_batch_path_with_no_warning():
    acc = se.BinaryAccumulator()
    with pytest.raises(ValueError, match="w"):
        acc.update_many(np.array([1, 0, 1]), np.array([0.2, 0.5, 0.7]), np.array([1e308, 1e308, 1e308]))
    assert acc.n == 0


@pytest.mark.parametrize("regime", ["exact", "binned"])
def test_weighted_per_event_updates_count_as_one_weighted_batch(regime):
    """Events of a weight other than 1 (positional or ``w=``, among unit-weight ones, across the buffer's 4,096
    and reads) count as the same events in one weighted batch, to 1e-12, and as scikit-learn's weighted AUC while
    exact; weights of 0 count nothing."""
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(15)
    n = 10_000
    y = rng.random(n) < 0.4
    s = np.round(rng.random(n), 3) if regime == "exact" else rng.normal(y * 1.0, 1.5)
    w = np.where(rng.random(n) < 0.3, 1.0, rng.random(n) * 4)
    w[rng.random(n) < 0.05] = 0.0
    acc, reads = se.BinaryAccumulator(threshold=0.41), []
    for i, (a, b, c) in enumerate(zip(y.tolist(), s.tolist(), w.tolist(), strict=True)):
        if i % 3:
            acc.update(a, b, c)
        else:
            acc.update(a, b, w=c)
        if i % 2_500 == 2_499:
            reads.append(acc.get().auc)
    batch = se.BinaryAccumulator(threshold=0.41)
    batch.update_many(y, s, w)
    mine, theirs = acc.get(), batch.get()
    np.testing.assert_allclose(
        [mine.n, mine.positives, mine.tp, mine.fp, mine.tn, mine.fn, mine.auc, mine.brier, mine.log_loss],
        [theirs.n, theirs.positives, theirs.tp, theirs.fp, theirs.tn, theirs.fn, theirs.auc, theirs.brier,
         theirs.log_loss],
        rtol=1e-12,
    )  # fmt: skip
    assert mine.is_exact == (regime == "exact")
    if regime == "exact":
        assert mine.auc == pytest.approx(roc_auc_score(y, s, sample_weight=w), abs=1e-12)
        assert reads[0] == pytest.approx(roc_auc_score(y[:2_500], s[:2_500], sample_weight=w[:2_500]), abs=1e-12)


@pytest.mark.parametrize(
    ("make", "event", "bound"),
    [
        (se.BinaryAccumulator, (1, 0.5), 8_000),
        (se.BinaryAccumulator, (1, 0.5, 2.0), 8_000),  # a weight: the buffer of weighted events
        (lambda: se.MulticlassAccumulator(classes=range(5)), (2, {c: 0.2 for c in range(5)}), 40_000),
    ],
)
def test_an_accumulator_with_few_events_holds_a_small_buffer(make, event, bound):
    """The per-event buffers grow with the events they hold: 500 segments of three events each take a few
    kilobytes a segment, where a full buffer each (36 KB for a binary accumulator, 262 KB for 5 classes' scores)
    took hundreds of megabytes for thousands of segments; their events all count."""
    import tracemalloc

    seg = se.Segmented(make)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for segment in range(500):
            for _ in range(3):
                seg.update(segment, *event)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown / 500 < bound
    assert len(seg) == 500 and all(seg[k].get().n == (6.0 if len(event) == 3 else 3) for k in (0, 499))


@pytest.mark.parametrize("given", [True, False])
def test_small_batches_of_integer_labels_and_score_matrices_equal_the_checked_path(given, monkeypatch):
    """Batches of integer labels of known classes and float64 matrices of every class's score go to the per-event
    buffer at once: the state equals, byte for byte after every call, that of the checked path fed the same, and
    both refuse alike. Labels of three integer dtypes, infinite scores, a NaN score, a label not known (learnt, or
    refused when the classes are given), a matrix not C-contiguous, a weight, per-event updates in between."""
    from streameval import multiclass

    rng = np.random.default_rng(21)
    stored = []
    store = multiclass.MulticlassAccumulator._stored_as_single_events

    def noting(self, y, scores, w):  # which batches took the per-event buffer at once
        stored.append(store(self, y, scores, w))
        return stored[-1]

    monkeypatch.setattr(multiclass.MulticlassAccumulator, "_stored_as_single_events", noting)

    def make():
        return se.MulticlassAccumulator(classes=list(range(5)) if given else None)

    fast, slow = make(), make()
    monkeypatch.setattr(slow, "_stored_as_single_events", lambda y, scores, w: False)
    for acc in (fast, slow):
        acc.update(0, {c: 0.2 for c in range(5)})  # the kind of events first: class scores (and, learnt, the classes)
    for step in range(120):
        m = int(rng.choice([1, 3, 10, 64]))
        y = rng.integers(0, 5, m).astype(rng.choice(["int64", "int32", "uint8"]))
        scores = rng.dirichlet(np.ones(len(fast.classes)), m)  # a score for every class known (7 once learnt)
        w = None
        form = step % 8
        if form == 1:
            scores[0, 2] = np.inf
        elif form == 2:
            scores[-1, 0] = np.nan
        elif form == 3:
            y[0] = 7  # not known: learnt, or refused when the classes are given
        elif form == 4:
            scores = np.asfortranarray(scores)
        elif form == 5:
            w = np.full(m, 2.0)
        outcomes = []
        for acc in (fast, slow):
            try:
                acc.update_many(y, scores, w)
                outcomes.append("counted")
            except (TypeError, ValueError) as exc:
                outcomes.append(f"{type(exc).__name__}: {exc}")
        assert outcomes[0] == outcomes[1]
        if step % 7 == 0:  # an event one by one, the same into both
            k = len(fast.classes)
            label, row = (
                int(rng.integers(0, 5)),
                dict(zip(fast.classes, rng.dirichlet(np.ones(k)).tolist(), strict=True)),
            )
            for acc in (fast, slow):
                acc.update(label, row)
        # the saved bytes before compression (level 9 took 35 ms of a 48 ms call on such a state)
        assert se.to_bytes(fast, level=0) == se.to_bytes(slow, level=0), step
    assert fast.to_bytes() == slow.to_bytes()
    assert fast.get().n == slow.get().n > 0
    assert 40 <= sum(stored) < len(stored)  # many at once, the others (NaN, a class not known, ...) checked


FLOAT_KINDS = {
    "regression": (se.RegressionAccumulator, lambda rng, n: (rng.normal(size=n), rng.normal(size=n))),
    "scores": (se.ScoreAccumulator, lambda rng, n: (rng.random(n),)),
}


@pytest.mark.parametrize("kind", list(FLOAT_KINDS))
def test_small_weighted_batches_of_float_arrays_are_stored_and_count_as_the_same_events_one_by_one(kind):
    """Weighted batches of float arrays (values within 1e150, weights in [0, 1e290]) are stored as the same
    events' per-event updates are: the two count the same, and equal one weighted batch to 1e-12."""
    make, columns = FLOAT_KINDS[kind]
    rng = np.random.default_rng(21)
    n = 600
    values, w = columns(rng, n), rng.random(n) * 3
    w[::7] = 1.0
    batched, one_by_one, whole = make(), make(), make()
    for start in range(0, n, 12):
        batched.update_many(*(v[start : start + 12] for v in values), w=w[start : start + 12])
    assert len(batched._buffer) == n  # stored, not counted yet
    for i in range(n):
        one_by_one.update(*(float(v[i]) for v in values), w=float(w[i]))
    whole.update_many(*values, w=w)
    assert batched.to_bytes() == one_by_one.to_bytes()
    a, b = batched.get(), whole.get()
    assert a.weight == pytest.approx(b.weight, rel=1e-12)
    field = "rmse" if kind == "regression" else "mean"
    assert getattr(a, field) == pytest.approx(getattr(b, field), rel=1e-12)


@pytest.mark.parametrize("kind", list(FLOAT_KINDS))
@pytest.mark.parametrize(("bad", "message"), [(-1.0, "w"), (np.nan, "w"), (np.inf, "w"), (1e300, None)])
def test_a_small_weighted_batch_of_float_arrays_with_a_weight_it_cannot_store_is_not_stored(kind, bad, message):
    """A weight below 0, NaN or infinite is refused by name, and nothing changes; one past 1e290 is counted at
    once, as a per-event update of one is: the batch path, not the store."""
    make, columns = FLOAT_KINDS[kind]
    rng = np.random.default_rng(22)
    acc = make()
    acc.update_many(*columns(rng, 5), w=np.full(5, 2.0))
    before = acc.to_bytes()
    values, w = columns(rng, 4), np.array([1.0, 2.0, bad, 0.5])
    if message is None:
        acc.update_many(*values, w=w)
        assert len(acc._buffer) == 0 and acc.get().weight == pytest.approx(10 + 3.5 + bad)
        return
    with pytest.raises(ValueError, match=message):
        acc.update_many(*values, w=w)
    assert acc.to_bytes() == before
