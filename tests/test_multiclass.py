"""MulticlassAccumulator against scikit-learn, merging with classes in any order, bad input."""

from __future__ import annotations

import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm
from sklearn.preprocessing import label_binarize

import streameval as se

TOL = 1e-12


def _data(n=600, k=4, seed=0, weighted=False):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k)) + 1.2 * np.eye(k)[y]
    scores = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    w = rng.uniform(0, 2, n) if weighted else None
    return y, scores, w


def _exact(y, scores, w=None, classes=None):
    k = scores.shape[1]
    acc = se.MulticlassAccumulator(classes=list(range(k)) if classes is None else classes,
                                   bins=se.Bins.from_edges(np.unique(scores)))  # fmt: skip
    acc.update_many(y, scores, w)
    return acc


@pytest.mark.parametrize("weighted", [False, True])
def test_against_scikit_learn(weighted):
    y, scores, w = _data(weighted=weighted)
    k = scores.shape[1]
    r = _exact(y, scores, w).get()
    pred = scores.argmax(axis=1)
    np.testing.assert_allclose(r.confusion_matrix, skm.confusion_matrix(y, pred, sample_weight=w), atol=1e-9)
    assert r.accuracy == pytest.approx(skm.accuracy_score(y, pred, sample_weight=w), abs=TOL)
    assert r.kappa == pytest.approx(skm.cohen_kappa_score(y, pred, sample_weight=w), abs=TOL)
    for avg in ("macro", "micro", "weighted"):
        p, rc, f, _ = skm.precision_recall_fscore_support(y, pred, average=avg, sample_weight=w, zero_division=np.nan)
        assert getattr(r, f"{avg}_precision") == pytest.approx(p, abs=TOL)
        assert getattr(r, f"{avg}_recall") == pytest.approx(rc, abs=TOL)
        f_name = "mean_f1" if avg == "macro" else f"{avg}_f1"
        assert getattr(r, f_name) == pytest.approx(f, abs=TOL)
    assert r.macro_f1 == pytest.approx(2 * r.macro_precision * r.macro_recall / (r.macro_precision + r.macro_recall))
    for avg in ("macro", "weighted"):
        ref = skm.roc_auc_score(y, scores, multi_class="ovr", average=avg, sample_weight=w)
        assert getattr(r, f"{avg}_auc") == pytest.approx(ref, abs=TOL)
    onehot = label_binarize(y, classes=list(range(k)))
    assert r.micro_auc == pytest.approx(skm.roc_auc_score(onehot, scores, average="micro", sample_weight=w), abs=TOL)
    for avg in ("macro", "micro", "weighted"):
        ref = skm.average_precision_score(onehot, scores, average=avg, sample_weight=w)
        assert getattr(r, f"{avg}_average_precision") == pytest.approx(ref, abs=TOL)
    for c in range(k):
        one = r.report(c)
        assert one.auc == pytest.approx(skm.roc_auc_score(y == c, scores[:, c], sample_weight=w), abs=TOL)
        assert one.recall == pytest.approx(skm.recall_score(y == c, pred == c, sample_weight=w), abs=TOL)


def test_per_event_mappings_sequences_and_batch_agree():
    y, scores, _ = _data(n=300, k=3, seed=1)
    labels = ["a", "b", "c"]
    batch = se.MulticlassAccumulator(classes=labels)
    batch.update_many([labels[i] for i in y], scores)
    events = se.MulticlassAccumulator(classes=labels)
    for i in range(len(y)):
        row = scores[i]
        if i % 2:
            events.update(labels[y[i]], dict(zip(labels, row.tolist(), strict=True)))
        else:
            events.update(labels[y[i]], row.tolist())
    assert events == batch
    mapped = se.MulticlassAccumulator(classes=labels)
    mapped.update_many([labels[i] for i in y], [dict(zip(labels, r.tolist(), strict=True)) for r in scores])
    assert mapped == batch


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    order=st.permutations(["a", "b", "c", "d"]),
    fixed=st.booleans(),
    y_only=st.booleans(),
)
def test_batches_of_score_dicts_equal_their_matrix(seed, order, fixed, y_only):
    """A batch of dicts of exactly the classes (in any key order; tied, whole, bool and infinite scores) counts
    as the matrix of the same scores, as the same dicts read one by one by the checked loop (classes learnt in
    the same order), and as the same events one by one; a label that no dict scores takes the checked loop."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    matrix = np.round(rng.random((n, 4)), 1)  # ties of the highest score
    odd = rng.random((n, 4))
    matrix[odd < 0.05] = 1.0
    matrix[odd > 0.98] = np.inf
    y = [order[i] for i in rng.integers(0, int(rng.integers(1, 5)), n)]  # some classes in the scores alone
    if y_only and not fixed:
        y[-1] = "e"  # a class of the labels alone
    rows = []
    for r in matrix:
        keys = list(order)
        rng.shuffle(keys)
        rows.append({c: (bool(r[order.index(c)]) if r[order.index(c)] == 1.0 and rng.random() < 0.5
                         else int(r[order.index(c)]) if r[order.index(c)] == 0.0 else float(r[order.index(c)]))
                     for c in keys})  # fmt: skip

    def make() -> se.MulticlassAccumulator:
        return se.MulticlassAccumulator(classes=list(order) if fixed else None)

    by_dicts = make()
    by_dicts.update_many(y, rows)
    checked = make()  # mappings that are not dicts: the checked loop
    checked.update_many(y, [types.MappingProxyType(r) for r in rows])
    assert by_dicts == checked and by_dicts.classes == checked.classes
    if fixed:
        by_matrix = make()
        by_matrix.update_many(y, matrix)
        assert by_dicts == by_matrix
    one_by_one = make()
    for label, row in zip(y, rows, strict=True):
        one_by_one.update(label, row)
    assert one_by_one == by_dicts


def test_a_batch_of_score_dicts_with_an_odd_row_is_explained_and_changes_nothing():
    acc = se.MulticlassAccumulator(classes=["a", "b"])
    acc.update_many(["a"], [{"a": 0.7, "b": 0.3}])
    before = acc.to_bytes()
    good = {"a": 0.6, "b": 0.4}
    for odd, error, message in (
        ({"a": float("nan"), "b": 0.4}, ValueError, r"scores\[1\]\['a'\] must not be NaN"),
        ({"a": "0.5", "b": 0.4}, TypeError, r"scores\[1\]\['a'\] must be a real number"),
        ({"a": 0.5}, ValueError, "missing \\['b'\\] at index 1"),
        ({"a": 0.5, "b": 0.2, "c": 0.3}, ValueError, "keys must be classes"),
    ):
        with pytest.raises(error, match=message):
            acc.update_many(["a", "b", "a"], [good, odd, good])
        assert acc.to_bytes() == before


def test_hard_labels_only():
    y = ["x", "y", "z", "x", "y"]
    pred = ["x", "z", "z", "y", "y"]
    acc = se.MulticlassAccumulator()
    acc.update_many(y, pred)
    r = acc.get()
    np.testing.assert_array_equal(r.confusion_matrix, skm.confusion_matrix(y, pred, labels=["x", "y", "z"]))
    assert r.mean_f1 == pytest.approx(skm.f1_score(y, pred, average="macro"))
    assert np.isnan(r.macro_auc) and np.isnan(r.micro_auc)
    with pytest.raises(ValueError, match="labels only"):
        r.report("x")
    with pytest.raises(ValueError, match="either class scores or predicted labels"):
        acc.update("x", {"x": 1.0})


def test_classes_learnt_mid_stream_keep_earlier_counts_right():
    acc = se.MulticlassAccumulator()
    acc.update("a", {"a": 0.9, "b": 0.1})
    acc.update("b", {"a": 0.3, "b": 0.7})
    acc.update("c", {"a": 0.2, "b": 0.2, "c": 0.6})  # c appears: earlier events score 0 for c
    r = acc.get()
    assert r.classes == ("a", "b", "c")
    c = r.report("c")
    assert (c.positives, c.negatives) == (1, 2)
    assert c.auc == 1.0
    explicit = se.MulticlassAccumulator(classes=["a", "b", "c"])
    explicit.update_many(["a", "b", "c"], [[0.9, 0.1, 0.0], [0.3, 0.7, 0.0], [0.2, 0.2, 0.6]])
    assert acc == explicit


events_strategy = st.lists(
    st.tuples(st.sampled_from("pqrs"), st.dictionaries(st.sampled_from("pqrs"), st.floats(0, 1), min_size=1)),
    max_size=25,
)


@settings(deadline=None, max_examples=60)
@given(events_strategy, st.integers(0, 25))
def test_shards_with_classes_in_different_orders_merge_to_one_stream(evs, cut):
    whole = se.MulticlassAccumulator()
    for y, sc in evs:
        whole.update(y, sc)
    a, b = se.MulticlassAccumulator(), se.MulticlassAccumulator()
    for y, sc in evs[:cut]:
        a.update(y, sc)
    for y, sc in evs[cut:]:
        b.update(y, sc)
    assert a + b == whole
    assert b + a == whole
    assert se.MulticlassAccumulator.merge_all([a, b, se.MulticlassAccumulator()]) == whole


@pytest.mark.parametrize(
    ("call", "exc", "words"),
    [
        (lambda a: a.update("z", [0.2, 0.3, 0.5]), ValueError, ["y", "'z'"]),
        (lambda a: a.update("a", [0.2, 0.8]), ValueError, ["scores", "3", "2"]),
        (lambda a: a.update("a", {"a": 0.2, "b": 0.8}), ValueError, ["missing", "'c'"]),
        (lambda a: a.update("a", {"a": 0.2, "b": 0.7, "c": 0.1, "d": 0.0}), ValueError, ["'d'"]),
        (lambda a: a.update("a", [0.2, float("nan"), 0.1]), ValueError, ["scores[1]", "nan"]),
        (lambda a: a.update("a", [0.2, 0.7, 0.1], w=-1), ValueError, ["w", "-1"]),
        (lambda a: a.update(["a"], [0.2, 0.7, 0.1]), TypeError, ["y", "['a']"]),
        (lambda a: a.update_many(["a", "q"], [[0.2, 0.7, 0.1]] * 2), ValueError, ["y", "'q'", "index 1"]),
        (lambda a: a.update_many(["a", "b"], [[0.2, 0.7]] * 2), ValueError, ["shape", "(2, 3)"]),
        (lambda a: a.update_many(["a", "b"], [[0.2, 0.7, np.nan]] * 2), ValueError, ["scores", "nan"]),
        (lambda a: a.update_many(["a"], [[0.2, 0.7, 0.1]] * 2), ValueError, ["scores", "1", "2"]),
    ],
)
def test_bad_input_names_the_argument_and_changes_nothing(call, exc, words):
    acc = se.MulticlassAccumulator(classes=["a", "b", "c"])
    acc.update_many(["a", "b"], [[0.5, 0.3, 0.2], [0.1, 0.6, 0.3]])
    before = acc.copy()
    with pytest.raises(exc) as info:
        call(acc)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert acc == before
    assert acc.get().n == 2


@pytest.mark.parametrize(
    "labels",
    [
        [3, 1, 3, 7, 1, 0],  # ints: read as an int64 array
        [True, 1, 0, False, 1, 0],  # a bool first: kept as the objects (the class learnt is True)
        [2**70, 1, 2**70, 5, 1, 5],  # an int beyond int64
        [1, 2.0, 1, 3, 2.0, 3],  # an int and floats
        ["b", "a", "b", "c", "a", "c"],
    ],
)
@pytest.mark.parametrize("fixed", [False, True])
def test_labels_in_a_list_count_as_the_same_labels_one_by_one(labels, fixed):
    """A list of labels (and of predicted classes) learns the same classes, in the same order and of the same
    values, and counts the same as the events one by one."""
    rng = np.random.default_rng(len(labels))
    predicted = [labels[i] for i in rng.permutation(len(labels))]
    classes = list(dict.fromkeys(labels)) if fixed else None
    batch, one = se.MulticlassAccumulator(classes=classes), se.MulticlassAccumulator(classes=classes)
    batch.update_many(labels, predicted)
    for y, p in zip(labels, predicted, strict=True):
        one.update(y, p)
    assert batch == one
    assert [(c, type(c)) for c in batch.classes] == [(c, type(c)) for c in one.classes]
    assert batch.get().confusion_matrix.tolist() == one.get().confusion_matrix.tolist()
    scores = rng.dirichlet(np.ones(len(batch.classes)), len(labels))
    with_scores, by_event = batch.emptied(), batch.emptied()
    with_scores.update_many(labels, scores)
    for y, row in zip(labels, scores.tolist(), strict=True):
        by_event.update(y, row)
    assert with_scores == by_event


def test_a_sequence_given_while_fewer_classes_were_known_is_a_mapping_of_the_first_classes():
    """With classes learnt from the stream, a score sequence may hold fewer scores than the classes known (one
    given before a class was learnt, counted again or taken out later): it is the mapping of the first classes,
    the others scoring 0 and its predicted class among its own, one by one, in a batch (ragged too) and in
    reverts. Logits (negative scores) show the predicted class is not the 0 of a class it lacks."""
    first = [("a", {"a": -1.0, "b": -2.0}), ("c", {"a": -3.0, "b": -0.5, "c": -1.0})]
    rows = [("a", [-0.2, -0.9]), ("b", [-1.5, -0.1]), ("c", [-2.0, -1.0, -0.3]), ("b", [-0.7, -0.8])]
    as_mappings = [(y, dict(zip("abc", row, strict=False))) for y, row in rows]

    def fed(events, batch=False):
        acc = se.MulticlassAccumulator()
        for y, s in first:
            acc.update(y, s)
        if batch:
            acc.update_many([y for y, _ in events], [s for _, s in events])
        else:
            for y, s in events:
                acc.update(y, s)
        return acc

    want = fed(as_mappings)
    assert want.get().confusion_matrix[0].tolist() == [1 + 1, 0, 0]  # 'a' predicted for [-0.2, -0.9], not 'c'
    assert fed(rows) == want and fed(rows, batch=True) == want and fed(as_mappings, batch=True) == want
    matrix = se.MulticlassAccumulator()
    for y, s in first:
        matrix.update(y, s)
    matrix.update_many(["a", "b"], np.array([[-0.2, -0.9], [-1.5, -0.1]]))  # two columns of three classes
    matrix.update_many(["c", "b"], [[-2.0, -1.0, -0.3], [-0.7, -0.8]])
    assert matrix == want
    taken = fed(rows)
    taken.revert("b", [-1.5, -0.1])
    taken.revert_many(["a", "c"], [[-0.2, -0.9], [-2.0, -1.0, -0.3]])
    assert taken == fed([rows[3]])
    fixed = se.MulticlassAccumulator(classes=["a", "b", "c"])
    with pytest.raises(ValueError, match="one score per class"):
        fixed.update("a", [0.2, 0.8])  # classes given: a sequence holds every one
    with pytest.raises(ValueError, match="shape"):
        fixed.update_many(["a"], [[0.2, 0.8]])


@pytest.mark.parametrize("fixed", [False, True])
def test_a_batch_mixing_mappings_and_sequences_equals_the_events_one_by_one(fixed):
    """Rows of class scores as mappings and as sequences in one batch (a class new to the batch too, with
    learnt classes): taken or refused as the events one by one are, and counted alike."""
    classes = ["a", "b", "c"]
    cases = [
        (["a", "b"], [{"a": 0.2, "b": 0.3, "c": 0.5}, [0.1, 0.2, 0.7]]),
        (["c", "a"], [[0.1, 0.2, 0.7], {"a": 0.2, "b": 0.3, "c": 0.5}]),
        (["b", "a"], [{"a": 0.2, "b": 0.3, "c": 0.5}, [0.1, 0.9]]),  # short: refused with given classes
        (["c", "b", "a"], [[0.3, 0.7], {"a": 0.1, "b": 0.2, "c": 0.7}, [0.6, 0.3, 0.1]]),
    ]
    for ys, rows in cases:
        start = se.MulticlassAccumulator(classes=classes if fixed else None)
        start.update("a", {"a": 0.5, "b": 0.5} if not fixed else {"a": 0.5, "b": 0.3, "c": 0.2})
        batch, one = start.copy(), start.copy()
        outcomes = []
        for target, events in ((batch, [(ys, rows)]), (one, list(zip(ys, rows, strict=True)))):
            feed = target.update_many if target is batch else target.update
            try:
                for y, r in events:
                    feed(y, r)
                outcomes.append(True)
            except ValueError:
                outcomes.append(False)
        assert outcomes[0] == outcomes[1], (ys, rows, outcomes)
        if outcomes[0]:
            assert batch == one and batch.classes == one.classes
        else:
            assert batch == start  # refused: nothing changed


_LABELS = st.sampled_from(["a", "b", "c", "d", 1, 2])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(_LABELS, _LABELS), min_size=1, max_size=12),
    st.lists(
        st.tuples(_LABELS, st.dictionaries(_LABELS, st.floats(0, 1, allow_nan=False), min_size=1, max_size=4)),
        min_size=1,
        max_size=12,
    ),
)
def test_a_batch_learns_its_classes_in_the_order_of_the_events_one_by_one(pairs, mapped):
    """Classes learnt from a batch of predicted classes, or of mappings with other keys, come in the order the
    same events one by one would teach them (each event's label, then its prediction's classes), so that a score
    sequence after the batch means the same for both."""
    for events in (pairs, mapped):
        batch, one = se.MulticlassAccumulator(), se.MulticlassAccumulator()
        batch.update_many([y for y, _ in events], [p for _, p in events])
        for y, p in events:
            one.update(y, p)
        assert batch.classes == one.classes
        assert batch == one


@pytest.mark.parametrize("exact_up_to", [8192, 0])
@pytest.mark.parametrize("as_mappings", [False, True])
def test_revert_many_takes_score_rows_out_in_place(monkeypatch, exact_up_to, as_mappings):
    """Unweighted rows of the known classes leave each class's counts in place (not counted apart, as the
    protocol's default does): the accumulator of the events that stay, exact or binned; a batch one class's
    counts lack is refused, the classes before it given their events back, and nothing changes."""
    y, scores, _ = _data(n=900, k=3, seed=4)
    labels = np.array(["a", "b", "c"], dtype=object)[y]
    rows = [dict(zip("abc", row, strict=True)) for row in scores.tolist()] if as_mappings else scores
    acc = se.MulticlassAccumulator(exact_up_to=exact_up_to)
    acc.update_many(labels.tolist(), rows)
    leaving = np.random.default_rng(2).random(900) < 0.3
    rest = se.MulticlassAccumulator(exact_up_to=exact_up_to)
    rest.update_many(labels[~leaving].tolist(), [rows[i] for i in np.flatnonzero(~leaving)] if as_mappings
                     else scores[~leaving])  # fmt: skip

    def counted_apart(*args, **kwargs):
        raise AssertionError("counted apart")

    with monkeypatch.context() as patched:
        patched.setattr(se.protocol.AccumulatorBase, "revert_many", counted_apart)
        acc.revert_many(labels[leaving].tolist(), [rows[i] for i in np.flatnonzero(leaving)] if as_mappings
                        else scores[leaving])  # fmt: skip
    assert acc == rest
    assert acc.get().per_class[1].auc == rest.get().per_class[1].auc
    # an event of the batch as counted but for class c's score: classes a and b take it out, c cannot
    i = int(np.flatnonzero(~leaving & (scores.argmax(axis=1) != 2))[0])
    changed = scores[i].copy()
    changed[2] = 1e-300  # the same predicted class; a score (and a bin) no event has
    before = acc.to_bytes()
    batch = [dict(zip("abc", changed.tolist(), strict=True))] if as_mappings else changed[None, :]
    with pytest.raises(ValueError, match="cannot take out"):
        acc.revert_many([labels[i]], batch)
    assert acc.to_bytes() == before
    acc.revert_many([labels[i]], [rows[i]] if as_mappings else scores[i : i + 1])  # as counted: it leaves
    assert acc.n == rest.n - 1


@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 4), st.integers(0, 4), st.integers(0, 4)),
                min_size=1, max_size=40), st.data())  # fmt: skip
@settings(max_examples=60, deadline=None)
def test_revert_many_in_place_equals_counting_apart(events, data):
    """Reverting any sub-batch of the events counted gives the counts the protocol's default (counting apart and
    taking out) gives, ties of scores and of the highest score included."""
    y = [e[0] for e in events]
    scores = np.array([e[1:] for e in events], dtype=np.float64) / 4.0
    out = data.draw(st.lists(st.sampled_from(range(len(events))), unique=True, max_size=len(events)))
    acc = se.MulticlassAccumulator(classes=[0, 1, 2], exact_up_to=data.draw(st.sampled_from([8192, 2])))
    acc.update_many(y, scores)
    apart = acc.copy()
    se.protocol.AccumulatorBase.revert_many(apart, [y[i] for i in out], scores[out])
    acc.revert_many([y[i] for i in out], scores[out])
    assert acc == apart


@pytest.mark.parametrize("fixed", [False, True])
def test_score_rows_as_a_column_of_sequences(fixed):
    """Class scores as one column of sequences (a pyarrow list column, a pandas column of arrays or of lists): the
    same counts as the 2-D array, alone and per segment; no class label is a list or an array."""
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    y, scores, _ = _data(n=300, k=3, seed=9)

    def make():
        return se.MulticlassAccumulator(classes=[0, 1, 2] if fixed else None)

    want = make()
    want.update_many(y, scores)
    columns = (pa.array(scores.tolist()), pa.array(scores.tolist(), type=pa.list_(pa.float64(), 3)),
               pd.Series(list(scores)), pd.Series(scores.tolist()))  # fmt: skip
    for column in columns:
        acc = make()
        acc.update_many(y, column)
        assert acc == want
        seg = se.Segmented(make)
        seg.update_many(np.zeros(y.size, dtype=int), y, column)
        assert seg[0] == want
    as_map = pa.array([list(enumerate(row)) for row in scores.tolist()], type=pa.map_(pa.int64(), pa.float64()))
    mapped, as_dicts = make(), make()
    mapped.update_many(y, as_map)  # a pyarrow map column: a mapping class -> score a row
    as_dicts.update_many(y, [dict(enumerate(row)) for row in scores.tolist()])
    assert mapped == as_dicts


def test_a_table_of_scores_by_class_is_read_by_its_column_names():
    """A pandas DataFrame, pyarrow Table or polars DataFrame of class scores names its classes by its columns,
    in any order: the accumulator of the same scores as a matrix in the classes' order, given or learnt, alone,
    segmented, in windows and through a join; a pandas Series is one event's mapping. A frame of unnamed
    columns (0, 1, ...) is a matrix by position; a column of no class, a missing class or a repeated name is
    refused by name, nothing changed."""
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    pl = pytest.importorskip("polars")
    rng = np.random.default_rng(17)
    n, classes = 300, ["a", "b", "c"]
    y = [classes[i] for i in rng.integers(0, 3, n)]
    probs = rng.dirichlet(np.ones(3), n)
    frame = pd.DataFrame(probs, columns=classes)[["c", "a", "b"]]  # not the classes' order
    want = se.MulticlassAccumulator(classes=classes)
    want.update_many(y, probs)

    def report(acc):
        r = acc.get()
        return r.confusion_matrix.tolist(), r.macro_auc, r.micro_auc

    for table in (frame, pa.table(frame), pl.from_pandas(frame)):
        given, learnt = se.MulticlassAccumulator(classes=classes), se.MulticlassAccumulator()
        given.update_many(y, table)
        learnt.update_many(y, table)
        assert report(given) == report(want), type(table)
        assert sorted(learnt.classes) == classes and learnt.get().accuracy == want.get().accuracy
    make = lambda: se.MulticlassAccumulator(classes=classes)  # noqa: E731
    seg = se.Segmented(make)
    seg.update_many(["x"] * n, y, frame)
    sliding, timed = se.Sliding(make, size=1000), se.TimeWindow(make, width=1e6, panes=4)
    sliding.update_many(y, frame)
    timed.update_many(y, frame, t=np.arange(n, dtype=np.float64))
    join = se.LabelJoin(make())
    join.predict_many(range(n), frame)
    join.label_many(range(n), y)
    one_by_one = make()
    for i in range(n):
        one_by_one.update(y[i], frame.iloc[i])
    for acc in (seg["x"], sliding, timed, join, one_by_one):
        assert report(acc) == report(want), acc
    one_by_one.revert_many(y[:100], frame.iloc[:100])
    rest = make()
    rest.update_many(y[100:], probs[100:])
    assert report(one_by_one) == report(rest)
    by_position = make()
    by_position.update_many(y, pd.DataFrame(probs))  # columns 0, 1, 2: positions
    assert report(by_position) == report(want)
    before = want.to_bytes()
    for bad, words in [
        (frame.rename(columns={"c": "d"}), "scores keys must be classes ['a', 'b', 'c'], got 'd' at index 0"),
        (frame[["a", "b"]], "scores must give a score for every class, missing ['c'] at index 0"),
        (pd.DataFrame(probs, columns=["a", "a", "b"]), "scores must name each column once"),
    ]:
        with pytest.raises(ValueError) as refused:
            want.update_many(y, bad)
        assert words in str(refused.value)
    assert want.to_bytes() == before


@pytest.mark.parametrize("weighted", [False, True])
def test_hundreds_of_classes_learnt_one_event_at_a_time_or_in_a_batch_count_as_scikit_learn(weighted):
    """Classes learnt as they come: the matrix grows into room kept for a quarter more classes (classes learnt one
    event at a time copied it at each class: 6,000 classes took 115 s, now 1.9 s), and a flush of a few events
    among many classes adds into the cells it falls in (each cell's events summed in order, as the full tally
    sums them). Per event, in batches, merged, taken out and pickled, the matrix is scikit-learn's."""
    import pickle

    rng = np.random.default_rng(4)
    n, k = 3_000, 400
    y, pred = rng.integers(0, k, n), rng.integers(0, k, n)
    right = rng.random(n) < 0.3
    pred[right] = y[right]  # a third predicted right: the diagonal holds counts too
    w = rng.uniform(0.1, 3.0, n) if weighted else None
    labels = np.unique(np.concatenate([y, pred]))
    want = skm.confusion_matrix(y, pred, labels=labels, sample_weight=w)

    def matrix(acc: se.MulticlassAccumulator) -> np.ndarray:
        order = np.argsort(np.array(acc.classes))
        return acc.get().confusion_matrix[np.ix_(order, order)]

    one = se.MulticlassAccumulator()
    for i in range(n):  # a class at a time, flushed into a matrix of hundreds of classes
        one.update(int(y[i]), int(pred[i]), **({} if w is None else {"w": float(w[i])}))
    batches = se.MulticlassAccumulator()
    for part in np.array_split(np.arange(n), 7):
        batches.update_many(y[part], pred[part], **({} if w is None else {"w": w[part]}))
    first, second = se.MulticlassAccumulator(), se.MulticlassAccumulator()
    half = n // 2
    for acc, part in ((first, slice(0, half)), (second, slice(half, n))):
        acc.update_many(y[part], pred[part], **({} if w is None else {"w": w[part]}))
    merged = first + second
    less = merged - second  # the first half again
    restored = pickle.loads(pickle.dumps(one))
    restored.update(int(y[0]), int(pred[0]), **({} if w is None else {"w": float(w[0])}))
    again = skm.confusion_matrix(
        np.append(y, y[0]), np.append(pred, pred[0]), labels=labels,
        sample_weight=None if w is None else np.append(w, w[0]),
    )  # fmt: skip
    for acc, expected in ((one, want), (batches, want), (merged, want), (restored, again)):
        assert len(acc.classes) == labels.size
        np.testing.assert_allclose(matrix(acc), expected, rtol=1e-12)
    first_weights = None if w is None else w[:half]
    first_want = skm.confusion_matrix(y[:half], pred[:half], labels=labels, sample_weight=first_weights)
    np.testing.assert_allclose(matrix(less), first_want, rtol=1e-12, atol=1e-12)


def test_messages_and_reprs_name_thousands_of_classes_by_the_first_ones_and_their_number():
    """An unknown class among 3,000 fixed ones, scores of the wrong width and the reprs show the first 20 classes
    and how many there are (a message naming them all was 35 KB long); a few classes are shown whole."""
    many = se.MulticlassAccumulator(classes=list(range(3_000)))
    shown = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, ... (3000 in all)]"
    with pytest.raises(ValueError) as refused:
        many.update(5_000, 1)
    assert str(refused.value) == f"y must be one of the classes {shown}, got 5000"
    with pytest.raises(ValueError, match=r"one column per class \[0, 1, .* \(3000 in all\)\]; got \(2, 5\)"):
        many.update_many([0, 1], np.full((2, 5), 0.2))
    many.update_many([0, 1, 2], [0, 2, 2])
    assert repr(many).startswith(f"MulticlassAccumulator(classes={shown}, ")
    assert repr(many.get()).startswith(f"MulticlassReport(classes={shown}, n=3, ")
    few = se.MulticlassAccumulator(classes=["a", "b"])
    with pytest.raises(ValueError, match=r"^y must be one of the classes \['a', 'b'\], got 'c'$"):
        few.update("c", "a")


@pytest.mark.parametrize("then", ["scores", "labels"])
@pytest.mark.parametrize("empty", [([], []), (np.array([]), np.zeros((0, 2))), ([], np.array([]))])
def test_an_empty_batch_fixes_no_kind_of_events(empty, then):
    """An empty batch (as a stream's quiet moment gives) counts nothing and leaves the accumulator free to take
    class scores or predicted classes; scikit-learn's confusion matrix of what follows."""
    from sklearn.metrics import confusion_matrix

    acc = se.MulticlassAccumulator(classes=["a", "b"])
    acc.update_many(*empty)
    y = ["a", "b", "b", "a"]
    if then == "scores":
        acc.update("a", {"a": 0.7, "b": 0.3})
        acc.update_many(y[1:], [{"a": 0.4, "b": 0.6}, {"a": 0.8, "b": 0.2}, {"a": 0.9, "b": 0.1}])
        predicted = ["a", "b", "a", "a"]
    else:
        acc.update("a", "b")
        acc.update_many(y[1:], ["b", "a", "a"])
        predicted = ["b", "b", "a", "a"]
    assert acc.get().confusion_matrix.tolist() == confusion_matrix(y, predicted, labels=["a", "b"]).tolist()
    acc.update_many(*empty)  # and after events of either kind
    assert acc.n == 4


@pytest.mark.parametrize("binned", [False, True])
def test_small_weighted_batches_are_stored_and_counted_as_one_batch(binned):
    """Weighted batches of up to 1,024 events, each weight at most 1e290, are stored with the per-event updates
    and counted with them: the counts of the same events in one batch, and of scikit-learn. A batch holding a
    larger weight is counted at once (after the stored events), as a per-event update of one is."""
    from sklearn.metrics import confusion_matrix

    rng = np.random.default_rng(11)
    n, k = 300, 4
    y, p, w = rng.integers(0, k, n), rng.dirichlet(np.ones(k), n), rng.random(n) * 3
    classes = list(range(k))
    small = se.MulticlassAccumulator(classes=classes, exact_up_to=0 if binned else 8192)
    for start in range(0, n, 10):
        small.update_many(y[start : start + 10], p[start : start + 10], w[start : start + 10])
    assert len(small._buffer) == n  # stored, not counted yet
    whole = se.MulticlassAccumulator(classes=classes, exact_up_to=0 if binned else 8192)
    whole.update_many(y, p, w)
    assert small == whole
    np.testing.assert_allclose(
        small.get().confusion_matrix, confusion_matrix(y, p.argmax(axis=1), sample_weight=w), rtol=1e-12
    )
    small.update_many(y[:2], p[:2], np.array([1.0, 1e291]))  # counted at once, the stored events first
    assert len(small._buffer) == 0
    whole.update_many(y[:2], p[:2], np.array([1.0, 1e291]))
    assert small == whole


@pytest.mark.parametrize(
    "w, message", [([1.0, np.nan], "w"), ([1.0, -2.0], "w"), ([1.0, np.inf], "w"), ([1.0, 1.0, 1.0], "w")]
)
def test_a_small_weighted_batch_of_bad_weights_is_refused_and_changes_nothing(w, message):
    """Weights that may not be stored (NaN, negative, infinite, or another length) go to the checked path, which
    refuses them by name: nothing stored, nothing counted."""
    acc = se.MulticlassAccumulator(classes=[0, 1])
    acc.update_many(np.array([0, 1]), np.array([[0.7, 0.3], [0.2, 0.8]]), np.array([0.5, 2.0]))
    before = acc.to_bytes()
    with pytest.raises(ValueError, match=message):
        acc.update_many(np.array([0, 1]), np.array([[0.6, 0.4], [0.1, 0.9]]), np.array(w))
    assert acc.to_bytes() == before
