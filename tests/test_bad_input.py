"""Bad input: a clear error naming the argument and the value, and an unchanged accumulator."""

from __future__ import annotations

import contextlib
import decimal
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streameval as se


def _fed():
    acc = se.BinaryAccumulator(threshold=0.3)
    acc.update_many([1, 0, 1, 0], [0.9, 0.2, 0.4, 0.35], [1.0, 2.0, 0.5, 1.0])
    for i in range(10):
        acc.update(i % 2, i / 10)
    return acc


def _snapshot(acc):
    r = acc.get()
    return (r.tp, r.fp, r.tn, r.fn, r.edges.tolist(), r.neg.tolist(), r.pos.tolist(), r.calibration)


BATCH_CASES = [
    # (y, scores, w, error type, words the message must contain)
    ([1, 0, 2], [0.1, 0.2, 0.3], None, ValueError, ["y", "2", "index 2"]),
    ([1, 0, "1"], [0.1, 0.2, 0.3], None, ValueError, ["y", "'1'", "index 2"]),
    ([1, 0, 1], [0.1, float("nan"), 0.3], None, ValueError, ["scores", "nan", "index 1"]),
    ([1, 0, 1], [0.1, "a", 0.3], None, TypeError, ["scores"]),
    ([1, 0, 1], [0.1, None, 0.3], None, TypeError, ["scores", "None", "index 1"]),
    ([1, 0, 1], [0.1, 0.2], None, ValueError, ["scores", "3", "2"]),
    ([1, 0], [0.1, 0.2], [1.0, -1.0], ValueError, ["w", "-1.0", "index 1"]),
    ([1, 0], [0.1, 0.2], [1.0, np.inf], ValueError, ["w", "inf", "index 1"]),
    ([1, 0], [0.1, 0.2], [1.0, np.nan], ValueError, ["w", "nan", "index 1"]),
    ([1, 0], [0.1, 0.2], [1.0], ValueError, ["w", "2", "1"]),
    ([1, 0], [0.1, 0.2], ["1.5", "2"], TypeError, ["w", "real numbers", "'1.5'"]),  # text, as per event
    ([1, 0], [0.1, 0.2], np.array([b"1", b"2"]), TypeError, ["w", "real numbers", "b'1'"]),
    ([1, 0], [0.1, 0.2], [1.0, None], TypeError, ["w", "None", "index 1"]),
    ([1, 0], [0.1, 0.2], -2.0, ValueError, ["w", "-2.0"]),
    ([1, 0], 0.5, None, TypeError, ["scores", "scalar", "0.5"]),
    (1, [0.5], None, TypeError, ["y", "scalar"]),
    ([1, 0], [[0.1, 0.2]], None, ValueError, ["scores", "1-D", "(1, 2)"]),
    ([1, 0], [0.1 + 1j, 0.2], None, TypeError, ["scores", "complex"]),
    # numpy's asarray keeps a masked entry's value: counted, it would be an event nobody gave
    (np.ma.array([1, 0, 1], mask=[0, 0, 1]), [0.1, 0.2, 0.3], None, ValueError, ["y", "masked", "index 2"]),
    ([1, 0, 1], np.ma.array([0.1, 0.2, 0.3], mask=[0, 1, 0]), None, ValueError, ["scores", "masked", "index 1"]),
    ([1, 0], [0.1, 0.2], np.ma.array([1.0, 2.0], mask=[1, 0]), ValueError, ["w", "masked", "index 0"]),
    ([1, 0], (v for v in [0.1, 0.2]), None, TypeError, ["scores", "generator", "pass a list"]),
    ([1, 0], {0.1, 0.2}, None, TypeError, ["scores", "pass a list"]),
]


@pytest.mark.parametrize(("y", "s", "w", "exc", "words"), BATCH_CASES)
def test_update_many_rejects_and_changes_nothing(y, s, w, exc, words):
    acc = _fed()
    before = _snapshot(acc)
    with pytest.raises(exc) as info:
        acc.update_many(y, s, w)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert _snapshot(acc) == before


EVENT_CASES = [
    (2, 0.5, 1.0, ValueError, ["y", "2"]),
    ("1", 0.5, 1.0, ValueError, ["y", "'1'"]),
    ([1], 0.5, 1.0, ValueError, ["y", "[1]"]),
    (None, 0.5, 1.0, ValueError, ["y", "None"]),
    (1, float("nan"), 1.0, ValueError, ["score", "nan"]),
    (1, "0.5", 1.0, TypeError, ["score", "'0.5'"]),
    (1, [0.5], 1.0, TypeError, ["score", "[0.5]"]),
    (1, np.array([0.5, 0.6]), 1.0, TypeError, ["score"]),
    (1, None, 1.0, TypeError, ["score", "None"]),
    (1, 0.5, -1.0, ValueError, ["w", "-1.0"]),
    (1, 0.5, float("inf"), ValueError, ["w", "inf"]),
    (1, 0.5, "2", TypeError, ["w", "'2'"]),
    (1, 0.5, [1.0], TypeError, ["w", "[1.0]"]),
]


@pytest.mark.parametrize(("y", "s", "w", "exc", "words"), EVENT_CASES)
def test_update_rejects_and_changes_nothing(y, s, w, exc, words):
    acc = _fed()
    before = _snapshot(acc)
    with pytest.raises(exc) as info:
        acc.update(y, s, w)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert _snapshot(acc) == before
    acc.update(1, 0.5)  # still usable
    assert acc.get().n == before[0] + before[1] + before[2] + before[3] + 1


def test_infinite_scores_are_accepted_and_land_in_the_end_bins():
    acc = se.BinaryAccumulator(bins=se.Bins.uniform(0, 1, 10), exact_up_to=0)
    acc.update_many([1, 0, 1], [np.inf, -np.inf, 0.5])
    acc.update(0, float("inf"))
    r = acc.get()
    assert r.keys.tolist() == [0, 6, 11]
    assert r.tp == 2 and r.fp == 1
    exact = se.BinaryAccumulator(bins=se.Bins.uniform(0, 1, 10))
    exact.update_many([1, 0, 1], [np.inf, -np.inf, 0.5])
    exact.update(0, float("inf"))
    assert exact.get().edges.tolist() == [-np.inf, 0.5, np.inf]
    # positive-negative pairs: (inf, -inf) 1, (inf, inf) 1/2, (0.5, -inf) 1, (0.5, inf) 0
    assert exact.get().tp == 2 and exact.get().fp == 1 and exact.get().auc == 2.5 / 4


def test_an_integer_beyond_the_floats_is_an_infinite_score_one_by_one_and_in_a_batch():
    """``float()`` of an integer beyond the floats overflows: a score is then infinite (as one event's already
    was), whichever path counts it; a weight or a value that must be finite is refused, naming it."""
    big = 10**400
    for make, event in (
        (se.BinaryAccumulator, (1, big)),
        (lambda: se.BinaryAccumulator(exact_up_to=0), (0, -big)),
        (lambda: se.PairedAccumulator(threshold=0.5), (1, big, -big)),
        (lambda: se.MulticlassAccumulator(classes=[0, 1]), (0, [big, 0.2])),
    ):
        one, batch = make(), make()
        one.update(*event)
        batch.update_many(*([v] for v in event))
        assert one == batch and batch.n == 1
    infinite = se.BinaryAccumulator()
    infinite.update_many([1, 0], [float("inf"), -float("inf")])
    beyond = se.BinaryAccumulator()
    beyond.update_many([1, 0], [big, -big])
    assert beyond == infinite
    for call, words in (
        (lambda: se.BinaryAccumulator().update_many([1, 0], [0.5, 0.2], [1, big]), ["w", "too large", "index 1"]),
        (lambda: se.ScoreAccumulator().update_many([0.5, big]), ["scores", "finite", "index 1"]),
        (lambda: se.RegressionAccumulator().update_many([1.0], [big]), ["y_pred", "finite", "index 0"]),
    ):
        with pytest.raises(ValueError) as err:
            call()
        for word in words:
            assert word in str(err.value), (word, str(err.value))


@pytest.mark.parametrize(
    ("kwargs", "exc", "words"),
    [
        ({"threshold": float("nan")}, ValueError, ["threshold", "nan"]),
        ({"threshold": "0.5"}, TypeError, ["threshold", "'0.5'"]),
        ({"bins": [0.1, 0.2]}, TypeError, ["bins"]),
        ({"pos_label": "spam"}, ValueError, ["neg_label", "'spam'"]),
        ({"pos_label": 1, "neg_label": 1}, ValueError, ["pos_label", "neg_label", "1"]),
        ({"pos_label": [1]}, TypeError, ["pos_label"]),
    ],
)
def test_constructor_errors_name_the_argument(kwargs, exc, words):
    with pytest.raises(exc) as info:
        se.BinaryAccumulator(**kwargs)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize(
    ("call", "exc", "words"),
    [
        (lambda: se.Bins.uniform(1.0, 0.0, 10), ValueError, ["lo", "hi"]),
        (lambda: se.Bins.uniform(0.0, 1.0, 0), ValueError, ["n", "0"]),
        (lambda: se.Bins.uniform(0.0, float("inf"), 3), ValueError, ["hi", "inf"]),
        (lambda: se.Bins.uniform(0.0, 1.0, 2.5), TypeError, ["n", "2.5"]),
        (lambda: se.Bins.from_edges([0.0, 0.5, 0.5]), ValueError, ["edges", "strictly increasing", "index 2"]),
        (lambda: se.Bins.from_edges([0.0, np.nan]), ValueError, ["edges", "finite", "index 1"]),
        (lambda: se.Bins.from_edges([]), ValueError, ["edges", "non-empty"]),
        (lambda: se.Bins.from_edges(["a"]), TypeError, ["edges"]),
        (lambda: se.Bins.range_free(0), ValueError, ["mantissa_bits", "0"]),
    ],
)
def test_bins_errors_name_the_argument(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize(
    ("other", "word"),
    [
        (se.BinaryAccumulator(bins=se.Bins.uniform(0, 1, 10)), "bins"),
        (se.BinaryAccumulator(threshold=0.4), "threshold"),
        (se.BinaryAccumulator(pos_label=0), "pos_label"),
        (se.BinaryAccumulator(pos_label=True), "pos_label"),
    ],
)
def test_merge_refuses_different_configurations(other, word):
    acc = se.BinaryAccumulator()
    with pytest.raises(ValueError, match=word):
        acc.merge(other)
    with pytest.raises(TypeError, match="BinaryAccumulator"):
        acc.merge(3)


def test_report_queries_validate_their_arguments():
    acc = _fed()
    r = acc.get()
    with pytest.raises(ValueError, match="metric"):
        r.best_threshold("auc")
    with pytest.raises(ValueError, match="beta"):
        r.fbeta(0)
    with pytest.raises(TypeError, match="threshold"):
        r.at("x")
    with pytest.raises(ValueError, match="cost_fp"):
        r.cost_error(1.0, -1.0)


def test_a_report_made_with_fields_equals_its_constructors_and_refuses_any_other_fields():
    """with_fields (how an accumulator makes its report at every read) gives what the constructor gives, and
    refuses a field too few or too many, naming every field and what it got."""
    import dataclasses

    r = _fed().get()
    values = {f.name: getattr(r, f.name) for f in dataclasses.fields(r)}
    made, constructed = se.BinaryReport.with_fields(**values), se.BinaryReport(**values)
    assert made.to_dict() == constructed.to_dict() == r.to_dict()
    assert made.edges.tolist() == constructed.edges.tolist() and type(made) is se.BinaryReport
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.tp = 3
    short = {k: v for k, v in values.items() if k != "calibration"}
    for bad, word, passed in ((short, "calibration", False), ({**values, "colour": "red"}, "colour", True)):
        with pytest.raises(TypeError, match=r"BinaryReport\.with_fields takes every field, \[") as info:
            se.BinaryReport.with_fields(**bad)
        wanted, got = str(info.value).split(", got ")
        assert (word in wanted, word in got) == (not passed, passed)


def test_labels_other_than_zero_and_one():
    acc = se.BinaryAccumulator(pos_label="spam", neg_label="ham")
    acc.update_many(["spam", "ham", "spam"], [0.9, 0.1, 0.4])
    acc.update("ham", 0.7)
    r = acc.get()
    assert (r.tp, r.fp, r.tn, r.fn) == (1, 1, 1, 1)
    with pytest.raises(ValueError, match="'eggs'"):
        acc.update_many(["spam", "eggs"], [0.1, 0.2])
    bools = se.BinaryAccumulator(pos_label=True)
    bools.update_many(np.array([True, False]), [0.8, 0.2])
    bools.update(1, 0.9)  # 1 == True
    assert bools.get().tp == 2


def _weight_overflow_cases():
    binary = se.BinaryAccumulator()
    multiclass = se.MulticlassAccumulator(classes=["a", "b"])
    regression = se.RegressionAccumulator()
    paired = se.PairedAccumulator(threshold=0.5)
    return [
        (binary, lambda a, w: a.update_many([1, 0, 1], [0.1, 0.2, 0.3], w)),
        (multiclass, lambda a, w: a.update_many(["a", "b", "a"], [[0.1, 0.9]] * 3, w)),
        (regression, lambda a, w: a.update_many([1.0, 2.0, 3.0], [1.5, 2.5, 3.5], w)),
        (paired, lambda a, w: a.update_many([1, 0, 1], [0.1, 0.2, 0.3], [0.3, 0.2, 0.1], w)),
    ]


@pytest.mark.parametrize("case", range(4))
def test_weights_whose_total_overflows_are_refused_and_change_nothing(case):
    acc, feed = _weight_overflow_cases()[case]
    feed(acc, [1.0, 2.0, 0.5])
    before = acc.to_bytes()
    with pytest.raises(ValueError, match="overflow"):
        feed(acc, [1e308, 1e308, 1e308])
    assert acc.to_bytes() == before
    feed(acc, [1e307, 1e307, 1e307])  # large, but the total is finite
    assert np.isfinite(acc.n)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 300), st.floats(0.0, 1023.0))
def test_a_batch_of_weights_is_refused_exactly_when_numpys_sum_overflows(seed, n, top_exponent):
    """A batch's sum is only taken when its count times its largest weight could overflow: the refusals are those
    of the sum itself (numpy's), for batches from far below the largest float to just past it."""
    from streameval._validation import as_weights

    rng = np.random.default_rng(seed)
    w = rng.random(n) * 2.0 ** (top_exponent - rng.integers(0, 3, n))  # each below 2^1023: finite
    with np.errstate(over="ignore"):
        overflows = not np.isfinite(w.sum())
    refused = False
    try:
        as_weights("w", w, n)
    except ValueError as exc:
        assert "overflow" in str(exc)
        refused = True
    assert refused == overflows


PER_EVENT_KINDS = {
    "binary": (se.BinaryAccumulator, (1, 0.3)),
    "multiclass scores": (lambda: se.MulticlassAccumulator(classes=["a", "b"]), ("a", {"a": 0.7, "b": 0.3})),
    "multiclass labels": (lambda: se.MulticlassAccumulator(classes=["a", "b"]), ("a", "b")),
    "regression": (se.RegressionAccumulator, (1.0, 2.0)),
    "scores": (se.ScoreAccumulator, (0.3,)),
    "paired": (lambda: se.PairedAccumulator(threshold=0.5), (1, 0.7, 0.2)),
}


@pytest.mark.parametrize("kind", list(PER_EVENT_KINDS))
@pytest.mark.parametrize("wrapped", ["alone", "segmented"])
def test_per_event_weights_whose_total_overflows_are_refused_at_the_update(kind, wrapped):
    """Refused by the update that overflows, not by every read after it (stored events counted at a read)."""
    make, event = PER_EVENT_KINDS[kind]
    acc = make() if wrapped == "alone" else se.Segmented(make)
    event = event if wrapped == "alone" else ("s", *event)
    acc.update(*event, w=1e308)
    acc.update(*event, w=1e307)
    with pytest.raises(ValueError, match="overflow"):
        acc.update(*event, w=1e308)
    report = acc.get() if wrapped == "alone" else acc.get()["s"]
    weight = report.weight if kind in ("regression", "scores") else report.n
    assert weight == pytest.approx(1.1e308)
    for _ in range(2):  # events after the refusal count, and every read works
        acc.update(*event, w=1e306)
        acc.get()


NEAR_THE_LARGEST_FLOAT = 1.7976931348623e308  # 1.6e295 below it


COUNTED_THERE = {
    "counted": lambda acc: acc,
    "copied": lambda acc: acc.copy(),
    "loaded": lambda acc: type(acc).from_bytes(acc.to_bytes()),
    "merged": lambda acc: acc.emptied() + acc,
}


@pytest.mark.parametrize("kind", list(PER_EVENT_KINDS))
@pytest.mark.parametrize("wrapped", ["alone", "segmented"])
@pytest.mark.parametrize("step", [1e300, 1e296, 1e294, 1.0])
@pytest.mark.parametrize("came", list(COUNTED_THERE))
def test_a_weight_that_takes_a_total_near_the_largest_float_past_it_is_refused_at_the_update(kind, wrapped, step, came):
    """A counted total within a stored event's room of the largest float (counted there, or copied, loaded or
    merged in): the update that passes it is refused and changes nothing, and every read after works (the
    stored weights' room counts what is counted)."""
    make, event = PER_EVENT_KINDS[kind]
    event = (1, 0.9) if kind == "binary" else event  # a log-loss term below 1: its sum stays finite too
    acc = make() if wrapped == "alone" else se.Segmented(make)
    event = event if wrapped == "alone" else ("s", *event)
    acc.update(*event, w=NEAR_THE_LARGEST_FLOAT)
    acc = COUNTED_THERE[came](acc)
    acc.get()
    before = acc.to_bytes()
    overflows = not math.isfinite(NEAR_THE_LARGEST_FLOAT + step)
    with pytest.raises(ValueError, match="overflow") if overflows else contextlib.nullcontext():
        acc.update(*event, w=step)
    if overflows:
        assert acc.to_bytes() == before
    report = acc.get() if wrapped == "alone" else acc.get()["s"]
    weight = report.weight if kind in ("regression", "scores") else report.n
    assert weight == NEAR_THE_LARGEST_FLOAT + (0.0 if overflows else step)


@pytest.mark.parametrize("wrapped", ["alone", "segmented"])
@pytest.mark.parametrize("step", [1e300, 1e296, 1e294])
def test_a_small_weighted_batch_that_takes_a_total_near_the_largest_float_past_it_is_refused(wrapped, step):
    """The same for a small batch of float arrays, which the per-event buffer stores whole."""
    acc = se.BinaryAccumulator() if wrapped == "alone" else se.Segmented(se.BinaryAccumulator)
    one, two = ((), ()) if wrapped == "alone" else ((np.array(["s"]),), (np.array(["s", "s"]),))
    acc.update_many(*one, np.array([1]), np.array([0.8]), np.array([NEAR_THE_LARGEST_FLOAT]))
    acc.get()
    before = acc.to_bytes()
    overflows = not math.isfinite(NEAR_THE_LARGEST_FLOAT + step + 1.0)
    with pytest.raises(ValueError, match="overflow") if overflows else contextlib.nullcontext():
        acc.update_many(*two, np.array([1, 0]), np.array([0.7, 0.4]), np.array([step, 1.0]))
    if overflows:
        assert acc.to_bytes() == before
    report = acc.get() if wrapped == "alone" else acc.get()["s"]
    assert report.n == NEAR_THE_LARGEST_FLOAT + (0.0 if overflows else step + 1.0)


@pytest.mark.parametrize("step, overflows", [(1e300, True), (1e297, False)])
def test_a_weight_that_takes_the_log_loss_sum_near_the_largest_float_past_it_is_refused_at_the_update(step, overflows):
    """The same where the log-loss sum is what lies near the largest float (a term of 36 per unit of weight) while
    the total weight is 36 times below it: 1e300 more of that term passes it, 1e297 does not."""
    one = se.BinaryAccumulator()
    one.update(1, 1e-20, w=2.0)
    term = one.get().log_loss  # of a positive scored 1e-20: -log(eps)
    acc = se.BinaryAccumulator()
    acc.update(1, 1e-20, w=sys.float_info.max / term * (1 - 1e-9))  # the sum 1.8e299 below the largest float
    acc.get()
    before = acc.to_bytes()
    with pytest.raises(ValueError, match="overflow") if overflows else contextlib.nullcontext():
        acc.update(1, 1e-20, w=step)
    if overflows:
        assert acc.to_bytes() == before
    assert acc.get().log_loss == pytest.approx(term)


PROTOCOL_CASES = [
    (lambda a: a.revert(2, 0.5), ValueError, ["y", "2"]),
    (lambda a: a.revert(1, float("nan")), ValueError, ["score", "nan"]),
    (lambda a: a.revert(1, 0.5, -1.0), ValueError, ["w", "-1.0"]),
    (lambda a: a.revert(1, 0.123), ValueError, ["cannot take out"]),
    (lambda a: a.revert_many([1, 2], [0.5, 0.5]), ValueError, ["y", "2", "index 1"]),
    (lambda a: a.revert_many([1, 1], [0.5, float("nan")]), ValueError, ["scores", "NaN", "index 1"]),
    (lambda a: a.revert_many([1, 1], [0.5]), ValueError, ["y", "scores", "2", "1"]),
    (lambda a: a.revert_many([1], [0.5], [-1.0]), ValueError, ["w", "-1.0"]),
    (lambda a: a.revert_many([1], ["x"]), TypeError, ["scores", "'x'"]),
    (lambda a: a.revert_many([1, 1], [0.5, 0.123]), ValueError, ["cannot take out"]),
    (lambda a: a.subtract(se.BinaryAccumulator(threshold=0.5)), ValueError, ["threshold", "0.3", "0.5"]),
    (lambda a: a.subtract(se.RegressionAccumulator()), TypeError, ["BinaryAccumulator", "RegressionAccumulator"]),
    (lambda a: a.scaled(-0.5), ValueError, ["factor", "-0.5"]),
    (lambda a: a.scaled(float("nan")), ValueError, ["factor", "nan"]),
    (lambda a: a.scaled("2"), TypeError, ["factor", "'2'"]),
    (lambda a: se.BinaryAccumulator.from_state({"bins": 1}), se.FormatError, ["state", "fields"]),
    (lambda a: a.update_many_grouped([a], _groups(lookup=np.array([0, 1], dtype=np.int32))), ValueError,
     ["lookup", "ending in -1", "[0, 1]"]),
    (lambda a: a.update_many_grouped([a], _groups(lookup=np.array([0, 3, -1], dtype=np.int32))), ValueError,
     ["lookup", "[-1, 1)", "[ 0,  3, -1]"]),
    (lambda a: a.update_many_grouped([a], _groups(values=np.array([0.5, 1.0]))), TypeError,
     ["values", "signed integers", "0.5"]),
    (lambda a: a.update_many_grouped([a], _groups(count=0)), ValueError, ["count", "0"]),
]  # fmt: skip


def _groups(**fields):
    from streameval._numeric import EventGroups

    given = {"values": np.array([0, 0]), "lo": 0, "lookup": np.array([0, -1], dtype=np.int32), "count": 1}
    return EventGroups(**{**given, **fields})


@pytest.mark.parametrize(("call", "exc", "words"), PROTOCOL_CASES)
def test_protocol_methods_reject_and_change_nothing(call, exc, words):
    acc = _fed()
    before = _snapshot(acc)
    with pytest.raises(exc) as info:
        call(acc)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert _snapshot(acc) == before


def _other_kinds() -> dict[str, se.Accumulator]:
    scores = se.ScoreAccumulator()
    scores.update_many([0.2, 0.5, 0.5])
    regression = se.RegressionAccumulator()
    regression.update_many([1.0, 2.0], [1.5, 2.5])
    classes = se.MulticlassAccumulator(classes=["a", "b"])
    classes.update_many(["a", "b"], [[0.6, 0.4], [0.3, 0.7]])
    paired = se.PairedAccumulator(threshold=0.5)
    paired.update_many([1, 0], [0.7, 0.2], [0.3, 0.1])
    for acc, event in ((scores, (0.7,)), (regression, (3.0, 2.0)), (classes, ("a", {"a": 0.8, "b": 0.2}))):
        acc.update(*event)  # stored, not yet filed: a refusal must not file it either
    return {"scores": scores, "regression": regression, "multiclass": classes, "paired": paired}


REVERT_CASES = [  # the per-event reverts of the other kinds: (kind, event, error type, words)
    ("scores", ("x",), TypeError, ["score", "'x'"]),
    ("scores", (float("nan"),), ValueError, ["score", "NaN"]),
    ("scores", (float("inf"),), ValueError, ["score", "finite", "inf"]),
    ("scores", (10**400,), ValueError, ["score", "too large"]),
    ("scores", (0.5, -1.0), ValueError, ["w", "-1.0"]),
    ("scores", (0.123,), ValueError, ["cannot take out"]),
    ("regression", (10**400, 1.0), ValueError, ["y", "too large"]),
    ("regression", (1.0, float("nan")), ValueError, ["y_pred", "NaN"]),
    ("regression", (1.0, "x"), TypeError, ["y_pred", "'x'"]),
    ("regression", (1.0, 1e6), ValueError, ["cannot take out"]),
    ("multiclass", ("z", {"a": 0.5, "b": 0.5}), ValueError, ["y", "'z'"]),
    ("multiclass", ("a", {"a": float("nan"), "b": 0.5}), ValueError, ["scores['a']", "NaN"]),
    ("multiclass", ("a", {"a": 0.5}), ValueError, ["missing", "'b'"]),
    ("multiclass", ("a", {"a": 0.6, "b": 0.4}, -1.0), ValueError, ["w", "-1.0"]),
    ("multiclass", ("b", {"a": 0.6, "b": 0.4}), ValueError, ["cannot take out"]),
    ("paired", (2, 0.5, 0.5), ValueError, ["y", "2"]),
    ("paired", (1, float("nan"), 0.5), ValueError, ["pred_a", "NaN"]),
    ("paired", (1, 0.7, "x"), TypeError, ["pred_b", "'x'"]),
    ("paired", (0, 0.9, 0.9), ValueError, ["cannot take out"]),
]


@pytest.mark.parametrize(("kind", "event", "exc", "words"), REVERT_CASES)
def test_per_event_reverts_of_every_kind_reject_and_change_nothing(kind, event, exc, words):
    acc = _other_kinds()[kind]
    before = acc.to_bytes()
    with pytest.raises(exc) as info:
        acc.revert(*event)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert acc.to_bytes() == before


def test_spark_without_pyspark_says_how_to_install(monkeypatch):
    import sys

    import streameval.spark as ses  # imports without pyspark

    monkeypatch.setitem(sys.modules, "pyspark", None)  # as if it were not installed
    with pytest.raises(ImportError, match=r"pip install 'streameval\[spark\]'"):
        ses.evaluate(object())


@pytest.mark.parametrize(
    ("points", "exc", "words"),
    [
        ((np.array([np.inf, 0.5]), np.array([0.0, 1.0]), np.array([0.0, 1.0])), TypeError, ["points", "tuple"]),
        ("shared", ValueError, ["points", "3 points", "1 bins"]),
    ],
)
@pytest.mark.parametrize("name", ["eer", "eer_rocch", "pr_auc", "average_precision_bounds", "roc_curve", "min_cost"])
def test_curves_refuse_points_that_are_not_those_of_the_counts(points, exc, words, name):
    from streameval import curves

    edges, neg, pos = np.array([0.1, 0.5]), np.array([2.0, 1.0]), np.array([0.0, 3.0])
    if points == "shared":
        points = curves.operating_points(edges, neg, pos)
        edges, neg, pos = edges[:1], neg[:1], pos[:1]  # the points of other counts
    extra = (0.5,) if name == "min_cost" else ()
    with pytest.raises(exc) as info:
        getattr(curves, name)(edges, neg, pos, *extra, points=points)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


MULTICLASS_REVERT_MANY_CASES = [  # a batch reverted: (y, scores, w, error type, words)
    (["a", "z"], [{"a": 0.6, "b": 0.4}] * 2, None, ValueError, ["y", "'z'"]),
    (["a"], np.array([[float("nan"), 0.5]]), None, ValueError, ["scores", "NaN"]),
    (["a"], np.array([[0.5, 0.3, 0.2]]), None, ValueError, ["shape", "(1, 2)", "(1, 3)"]),
    (["a"], [{"a": 0.6}], None, ValueError, ["missing", "'b'"]),
    (["a"], [{"a": 0.6, "b": 0.4}], [-1.0], ValueError, ["w", "-1.0"]),
    (["b"], [{"a": 0.6, "b": 0.4}], None, ValueError, ["cannot take out"]),  # never counted: its 2x2
    (["a"], np.array([[0.6, 0.39]]), None, ValueError, ["cannot take out"]),  # class a holds it, b does not
    (["a", "a"], [{"a": 0.6, "b": 0.4}] * 2, None, ValueError, ["cannot take out"]),  # counted once
]


@pytest.mark.parametrize(("y", "scores", "w", "exc", "words"), MULTICLASS_REVERT_MANY_CASES)
def test_multiclass_revert_many_rejects_and_changes_nothing(y, scores, w, exc, words):
    acc = _other_kinds()["multiclass"]
    before = acc.to_bytes()
    with pytest.raises(exc) as info:
        acc.revert_many(y, scores, w)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert acc.to_bytes() == before
    acc.revert_many(["a"], [{"a": 0.6, "b": 0.4}])  # as counted: it leaves
    assert acc.n == 2


MISSING = [None, float("nan"), np.float32("nan"), pd.NA, pd.NaT, np.datetime64("NaT"), decimal.Decimal("nan")]


def _multiclass_snapshot(acc):
    return acc.n, acc.classes, acc.get().confusion_matrix.tolist()


@pytest.mark.parametrize("missing", MISSING, ids=repr)
def test_a_missing_value_is_no_class_label_and_changes_nothing(missing):
    """Each NaN would make a class of its own (NaN equals nothing), and None, NA or NaT a class nobody meant: a
    missing true class, predicted class or key of class scores is refused by name (and index), one by one and in
    a batch, with nothing changed."""
    acc = se.MulticlassAccumulator()
    acc.update("a", {"a": 0.7, "b": 0.3})
    before = _multiclass_snapshot(acc)
    labels = se.MulticlassAccumulator()
    labels.update("a", "b")
    labels_before = _multiclass_snapshot(labels)
    calls = [
        (lambda: acc.update(missing, {"a": 0.7, "b": 0.3}), ["y"]),
        (lambda: acc.update("a", {"a": 0.7, missing: 0.3}), ["scores key"]),
        (lambda: acc.update_many(["a", missing], [{"a": 0.5, "b": 0.5}] * 2), ["y", "index 1"]),
        (lambda: acc.update_many(["a", "b"], [{"a": 0.5, "b": 0.5}, {"a": 0.5, missing: 0.5}]), ["index 1"]),
        (lambda: acc.update_many(["a", "b"], [{"a": 0.5, missing: 0.5}] * 2), ["scores key", "index 0"]),
        (lambda: labels.update("a", missing), ["scores"]),
        (lambda: labels.update_many(["a", "b"], ["b", missing]), ["scores", "index 1"]),
        (lambda: labels.update_many(pd.Series(["a", missing], dtype=object), ["a", "b"]), ["y", "index 1"]),
    ]
    for call, words in calls:
        with pytest.raises(ValueError, match="not a missing value") as info:
            call()
        for word in words:
            assert word in str(info.value), (word, str(info.value))
    assert _multiclass_snapshot(acc) == before
    assert _multiclass_snapshot(labels) == labels_before
    with pytest.raises(ValueError, match=r"classes must be a class label, not a missing value.*index 1"):
        se.MulticlassAccumulator(classes=["a", missing])


def test_a_column_of_float_labels_with_nan_is_refused_at_its_first_nan():
    acc = se.MulticlassAccumulator()
    with pytest.raises(ValueError, match="y must be a class label, not a missing value, got nan at index 2"):
        acc.update_many(np.array([1.0, 2.0, np.nan, np.nan]), np.array([1.0, 1.0, 2.0, 2.0]))
    assert acc.n == 0 and acc.classes == ()


@pytest.mark.parametrize("missing", MISSING, ids=repr)
def test_a_missing_segment_is_refused_one_by_one_as_in_a_batch(missing):
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update("eu", 1, 0.9)
    with pytest.raises(ValueError, match="missing value"):
        seg.update(missing, 1, 0.5)
    with pytest.raises(ValueError, match="missing value"):
        seg.update_many(pd.Series(["eu", missing], dtype=object), [1, 0], [0.5, 0.4])
    assert seg.segments == ["eu"] and seg["eu"].n == 1


@pytest.mark.parametrize("missing", MISSING, ids=repr)
def test_a_missing_key_joins_nothing(missing):
    """A prediction and a label without a key would be joined to each other (None, NA), or to nothing ever
    (NaN): refused, one by one and in a batch, with nothing changed."""
    join = se.LabelJoin(se.BinaryAccumulator())
    join.predict("k", 0.8)
    with pytest.raises(ValueError, match="key must not be a missing value"):
        join.predict(missing, 0.5)
    with pytest.raises(ValueError, match="key must not be a missing value"):
        join.label(missing, 1)
    with pytest.raises(ValueError, match=r"key must not be a missing value.*at index 1"):
        join.predict_many(pd.Series(["j", missing], dtype=object), [0.1, 0.2])
    with pytest.raises(ValueError, match=r"key must not be a missing value.*at index 1"):
        join.label_many(["k", missing], [1, 0])
    assert (join.pending, join.matched) == (1, 0)


def test_masked_entries_are_refused_by_every_kind_and_unmasked_arrays_read_as_their_values():
    mask = np.ma.array
    calls = [
        ("y", lambda a: se.BinaryAccumulator().update_many(a([1, 0, 1], mask=[0, 1, 0]), [0.1, 0.2, 0.3])),
        ("y", lambda a: se.MulticlassAccumulator().update_many(a(["a", "b", "a"], mask=[0, 1, 0]), ["a"] * 3)),
        ("scores", lambda a: se.MulticlassAccumulator().update_many(["a"] * 3, a(["a", "b", "a"], mask=[0, 1, 0]))),
        (
            "scores",
            lambda a: se.MulticlassAccumulator(classes=["a", "b"]).update_many(
                ["a"] * 3, a([[0.1, 0.9]] * 3, mask=[[0, 0], [0, 1], [0, 0]])
            ),
        ),
        ("y", lambda a: se.RegressionAccumulator().update_many(a([1.0, 2.0, 3.0], mask=[0, 1, 0]), [1.0] * 3)),
        ("scores", lambda a: se.ScoreAccumulator().update_many(a([1.0, 2.0, 3.0], mask=[0, 1, 0]))),
        ("segments", lambda a: se.Segmented(se.BinaryAccumulator).update_many(a([1, 2, 3], mask=[0, 1, 0]), [1] * 3, [0.5] * 3)),  # noqa: E501
        ("y", lambda a: se.PairedAccumulator().update_many(a([1, 0, 1], mask=[0, 1, 0]), [1, 0, 1], [0, 0, 1])),
        ("t", lambda a: se.TimeWindow(se.BinaryAccumulator, width=10).update_many([1] * 3, [0.5] * 3, t=a([1.0, 2, 3], mask=[0, 1, 0]))),  # noqa: E501
    ]  # fmt: skip
    for name, call in calls:
        with pytest.raises(ValueError, match=f"{name} must not be missing, got a masked entry at index 1"):
            call(mask)
    plain, masked = se.BinaryAccumulator(), se.BinaryAccumulator()
    plain.update_many([1, 0, 1], [0.1, 0.2, 0.3])
    masked.update_many(mask([1, 0, 1], mask=False), mask([0.1, 0.2, 0.3], mask=[0, 0, 0]))
    assert masked == plain


def test_checking_for_masked_arrays_does_not_import_numpy_ma():
    """A process that never made a masked array has none to refuse: its batches are checked without importing
    ``numpy.ma`` (asking numpy for ``np.ma`` imports it, 7-9 ms). Segments too where compiled (the Python twins
    factorize str and object segments with pandas, which imports it)."""
    script = (
        "import sys, numpy as np, streameval as se\n"
        "from streameval._compiled import SPEEDUPS\n"
        "acc = se.BinaryAccumulator()\n"
        "acc.update_many(np.array([1, 0, 1]), np.array([0.9, 0.2, 0.4]))\n"
        "print(acc.get().n, 'numpy.ma' in sys.modules)\n"
        "seg = se.Segmented(se.BinaryAccumulator)\n"
        "seg.update_many(np.array([1, 2, 1]), [1, 0, 0], [0.9, 0.1, 0.3])\n"
        "seg.revert_many(np.array([2]), [0], [0.1])\n"
        "print(seg.n, SPEEDUPS is not None and 'numpy.ma' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["3", "False", "2", "False"]


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: se.Monitor(se.BinaryAccumulator, every=2), ["accumulator", "the class BinaryAccumulator"]),
        (lambda: se.Locked(se.MulticlassAccumulator), ["accumulator", "MulticlassAccumulator()"]),
        (lambda: se.LabelJoin(se.BinaryAccumulator), ["accumulator", "BinaryAccumulator()"]),
        (lambda: se.drift(se.ScoreAccumulator, se.ScoreAccumulator()), ["reference", "ScoreAccumulator()"]),
        (lambda: se.drift_by_segment(se.ScoreAccumulator(), se.Segmented), ["current", "Segmented()"]),
        (
            lambda: se.drift_by_segment(se.ScoreAccumulator, se.Segmented(se.ScoreAccumulator)),
            ["reference", "ScoreAccumulator()"],
        ),
        (
            lambda: se.Monitor(se.BinaryAccumulator(), every=2, drift_reference=se.ScoreAccumulator),
            ["drift_reference", "the class ScoreAccumulator"],
        ),
        (lambda: se.macro([se.BinaryAccumulator(), se.BinaryAccumulator]), ["the class BinaryAccumulator", "index 1"]),
    ],
)
def test_a_class_where_an_accumulator_is_wanted_is_named_at_once(make, words):
    """A window takes a factory (the class); a monitor, a lock, a join, drift and macro take an accumulator made:
    given the class, they say so when made, not with an error about descriptors at the first event."""
    with pytest.raises(TypeError) as info:
        make()
    for word in words:
        assert word in str(info.value), (word, str(info.value))


NUMPY_VALUED = [  # arguments given as numpy scalars (as read from an array or a config parsed by numpy)
    lambda: se.BinaryAccumulator().update(np.int64(2), 0.3),
    lambda: se.Sliding(se.BinaryAccumulator, size=np.int64(0)),
    lambda: se.Decayed(se.BinaryAccumulator, half_life=np.float64(0)),
    lambda: se.Monitor(se.BinaryAccumulator(), every=np.int64(0)),
    lambda: se.Segmented(se.BinaryAccumulator, max_segments=np.int64(0)),
    lambda: se.LabelJoin(se.BinaryAccumulator(), max_pending=np.int64(0)),
    lambda: se.Bins.uniform(np.float64(1), np.float64(0), 10),
    lambda: se.Bins.uniform(0, 1, np.int64(0)),
    lambda: se.Bins.uniform(0, np.float64(np.inf), 10),
    lambda: se.Bins.from_edges([0.5, 0.1]),
    lambda: se.BinaryAccumulator().get().auc_ci(np.float64(2)),
    lambda: se.BinaryAccumulator().get().ece(np.int64(0)),
    lambda: se.BinaryAccumulator().get().fbeta(np.float64(-1)),
    lambda: se.BinaryAccumulator().get().min_cost(np.float64(2)),
    lambda: se.BinaryAccumulator().get().min_dcf(np.float64(0)),
    lambda: se.BinaryAccumulator().get().min_dcf(0.5, c_miss=np.float64(-1)),
    lambda: se.BinaryAccumulator().get().cost_error(np.float64(-1)),
    lambda: se.to_bytes(se.BinaryAccumulator(), level=np.int64(11)),
]


@pytest.mark.parametrize("call", NUMPY_VALUED)
def test_a_numpy_scalar_is_shown_as_its_value(call):
    """numpy 2 writes a scalar's repr as np.float64(2.0): a message shows the value (2.0), as Python's."""
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    assert "np." not in str(info.value), str(info.value)


def test_rates_outside_0_and_1_are_refused_and_a_paired_score_without_threshold_is_explained():
    """No curve point has a recall of 2 or an FPR below 0: asking is a mistake, named (it gave nan); a paired
    accumulator without a threshold reads predictions as labels, and says how to read scores."""
    acc = se.BinaryAccumulator()
    acc.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
    report = acc.get()
    for call, words in [
        (lambda: report.precision_at_recall(2), "min_recall must be between 0 and 1, got 2"),
        (lambda: report.tpr_at_fpr(-0.1), "max_fpr must be between 0 and 1, got -0.1"),
    ]:
        with pytest.raises(ValueError, match=words):
            call()
    assert report.precision_at_recall(1.0) == pytest.approx(2 / 3) and report.tpr_at_fpr(0.0) == 0.5
    paired = se.PairedAccumulator()
    for call in (lambda: paired.update(1, 0.7, 0.2), lambda: paired.update_many([1, 0], [1, 0.7], [0, 0])):
        with pytest.raises(ValueError, match=r"got 0\.7 at index \d.*give threshold= to read scores"):
            call()
    assert paired.n == 0


OVERFLOWING_VALUES = [  # the second event after the first; whether it is finite alone
    ("regression, a spread past 1e154", se.RegressionAccumulator, [(1e160, 1.5e160), (3e160, 2e160)], True),
    ("regression, a mean past the largest float", se.RegressionAccumulator, [(1e308, 1e308), (1.7e308, 1.7e308)], True),
    ("regression, an error past it", se.RegressionAccumulator, [(1.0, 2.0), (-1e308, 1e308)], False),
    ("regression, a percentage error past it", se.RegressionAccumulator, [(1.0, 2.0), (0.0, 1e300)], False),
    ("scores, a spread past 1e154", se.ScoreAccumulator, [(1e300,), (-1e300,)], True),
    ("scores, a mean past the largest float", se.ScoreAccumulator, [(1e308,), (1.7e308,)], True),
]


@pytest.mark.parametrize(
    ("make", "events", "alone_fits"), [c[1:] for c in OVERFLOWING_VALUES], ids=[c[0] for c in OVERFLOWING_VALUES]
)
def test_values_whose_moments_or_sums_overflow_are_refused_so_that_every_state_loads(make, events, alone_fits):
    """Finite values whose means, squares or sums pass the largest float: refused by the call that brings them
    (a batch, an event, a merge), with nothing changed, instead of a state of inf that no load accepts."""
    columns = [list(c) for c in zip(*events, strict=True)]
    acc = make()
    acc.update_many(*[[c[0]] for c in columns])
    before = acc.to_bytes()
    with pytest.raises(ValueError, match="would overflow"):
        acc.update_many(*[[c[1]] for c in columns])
    assert acc.to_bytes() == before
    with pytest.raises(ValueError, match="would overflow"):
        acc.update(*events[1])
    assert acc.to_bytes() == before
    second = make()
    if alone_fits:  # two states each finite, together not
        second.update_many(*[[c[1]] for c in columns])
        assert se.from_bytes(second.to_bytes()) == second
        with pytest.raises(ValueError, match="would overflow"):
            acc.merge(second)
        with pytest.raises(ValueError, match="would overflow"):
            acc += second
        assert acc.to_bytes() == before
    else:
        with pytest.raises(ValueError, match="would overflow"):
            second.update(*events[1])
        assert second.n == 0 and second.get().n == 0
    acc.update(*events[0])  # what fits still counts, and the state loads
    assert acc.n == 2 and se.from_bytes(acc.to_bytes()) == acc


MERGE_OVERFLOW_KINDS = {
    "binary": (se.BinaryAccumulator, lambda a: a.update_many([1, 0], [0.9, 0.1], [1e308, 1.0])),
    "multiclass labels": (
        lambda: se.MulticlassAccumulator(classes=[0, 1]),
        lambda a: a.update_many([1, 0], [1, 0], [1e308, 1.0]),
    ),
    "multiclass scores": (
        lambda: se.MulticlassAccumulator(classes=[0, 1]),
        lambda a: a.update_many([1, 0], [[0.2, 0.8], [0.6, 0.4]], [1e308, 1.0]),
    ),
    "regression": (se.RegressionAccumulator, lambda a: a.update_many([1.0, 2.0], [1.0, 2.5], [1e308, 1.0])),
    "scores": (se.ScoreAccumulator, lambda a: a.update_many([1.0, 2.0], [1e308, 1.0])),
    "paired": (
        lambda: se.PairedAccumulator(threshold=0.5),
        lambda a: a.update_many([1, 0], [0.9, 0.1], [0.2, 0.3], [1e308, 1.0]),
    ),
    "segmented, the second segment": (
        lambda: se.Segmented(se.BinaryAccumulator),
        lambda a: a.update_many(["x", "y"], [1, 0], [0.9, 0.1], w=[1.0, 1e308]),
    ),
}


@pytest.mark.parametrize("kind", list(MERGE_OVERFLOW_KINDS))
def test_a_merge_whose_total_weight_overflows_is_refused_and_changes_nothing(kind):
    """Two states each of a finite total weight, together past the largest float: merged, they held inf counts
    (a Dask evaluation gave n=inf) and their file failed to load; a segmented merge had changed the segments
    before the refused one."""
    make, fill = MERGE_OVERFLOW_KINDS[kind]
    first, second = make(), make()
    fill(first)
    fill(second)
    before = first.to_bytes()
    with pytest.raises(ValueError, match="overflow"):
        first.merge(second)
    with pytest.raises(ValueError, match="overflow"):
        first += second
    assert first.to_bytes() == before
    assert se.from_bytes(first.to_bytes()) == first


def test_weighted_log_loss_sums_that_overflow_are_refused():
    """A log-loss term weighs up to 36 times its weight: ten weights of 1e307 sum to 1e308, their log loss to
    3.6e309, which was nan in a state that then failed to load."""
    acc = se.BinaryAccumulator()
    with pytest.raises(ValueError, match="log-loss sums would overflow"):
        acc.update_many([0] * 10, [1 - 1e-17] * 10, [1e307] * 10)
    with pytest.raises(ValueError, match="log-loss sums would overflow"):
        acc.update(0, 1 - 1e-17, w=1e307)
    assert acc.n == 0
    acc.update_many([0] * 10, [0.5] * 10, [1e306] * 10)  # log 2 each: the sums fit
    assert se.from_bytes(acc.to_bytes()) == acc and acc.get().log_loss == pytest.approx(np.log(2))


DECAYED_EVENT_CASES = [
    # (keywords of the event, error type, words the message must contain)
    ({"t": 5.0, "w": -1.0}, ValueError, ["w", "-1.0"]),
    ({"t": 5.0, "w": -1}, ValueError, ["w", "-1"]),
    ({"t": 5.0, "w": float("nan")}, ValueError, ["w", "nan"]),
    ({"t": 5.0, "w": float("inf")}, ValueError, ["w", "inf"]),
    ({"t": 5.0, "w": 10**400}, ValueError, ["w", "too large"]),
    ({"t": 5.0, "w": "2"}, TypeError, ["w", "'2'"]),
    ({"t": float("nan")}, ValueError, ["t", "NaN"]),
    ({"t": float("-inf"), "w": 2.0}, ValueError, ["t", "inf"]),
    ({"t": 10**400}, ValueError, ["t", "too large"]),
    ({"t": None}, ValueError, ["t", "required"]),
    ({}, ValueError, ["t", "required"]),
    ({"t": 5.0, "x": 1.0}, TypeError, ["x"]),
]


@pytest.mark.parametrize("wrapped", ["alone", "segmented"])
@pytest.mark.parametrize(("kwargs", "exc", "words"), DECAYED_EVENT_CASES)
def test_decayed_by_time_per_event_updates_reject_and_change_nothing(kwargs, exc, words, wrapped):
    """Refused by the per-event path by time, naming the argument and the value; the window's state and clock
    unchanged: the events after it count as in a window that never saw the refusal."""
    make = se.BinaryAccumulator if wrapped == "alone" else (lambda: se.Segmented(se.BinaryAccumulator))
    head = () if wrapped == "alone" else ("eu",)
    windows = [se.Decayed(make, half_life=10.0, by="time") for _ in range(2)]
    for win in windows:
        for i in range(20):
            win.update(*head, i % 2, i / 20, t=float(i) / 4, w=1.0 + i % 3)
    refused, clean = windows
    before = refused.accumulator()
    with pytest.raises(exc) as info:
        refused.update(*head, 1, 0.75, **kwargs)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert refused.accumulator() == before
    for win in windows:
        win.update(*head, 0, 0.6, t=4.5)
    assert refused.accumulator() == clean.accumulator()


@pytest.mark.parametrize("by", ["time", "events"])
@pytest.mark.parametrize("wrapped", ["alone", "segmented"])
def test_a_decayed_weight_is_taken_where_it_fits_at_the_latest_time_and_else_refused(by, wrapped):
    """A window decayed by time or by events stores an event's weight times up to 2 ** 500 (from its reference
    time): a weight that this takes past the largest float is still counted where it fits once the state is rescaled
    to the latest time, whatever the reference; a total past the largest float even there is refused (naming the
    total), nothing changes, and the events after it count as in a window that never saw it."""
    make = se.BinaryAccumulator if wrapped == "alone" else (lambda: se.Segmented(se.BinaryAccumulator))
    head = () if wrapped == "alone" else ("eu",)

    def at(i):
        return {"t": float(i)} if by == "time" else {}

    windows = [se.Decayed(make, half_life=1.0, by=by) for _ in range(2)]
    events = [(i % 2, i / 400, 1.0) for i in range(400)] + [(1, 0.75, 1e200), (0, 0.6, 1.7e308)]
    for win in windows:
        for i, (y, score, w) in enumerate(events):
            win.update(*head, y, score, w=w, **at(i))  # 1e200 at 2 ** 400 from the reference: taken all the same
    ref = se.BinaryAccumulator()  # the explicit weights, decayed to the latest event
    ages = np.arange(len(events), dtype=float) - (len(events) - 1)
    ref.update_many([e[0] for e in events], [e[1] for e in events], [e[2] for e in events] * np.exp2(ages))
    refused, clean = windows
    got = refused.get() if wrapped == "alone" else refused.get()["eu"]
    np.testing.assert_array_equal(got.edges, ref.get().edges)
    for field in ("neg", "pos"):
        np.testing.assert_allclose(getattr(got, field), getattr(ref.get(), field), rtol=1e-12, atol=0)
    before = refused.accumulator()
    with pytest.raises(ValueError, match="would overflow"):  # 0.85e308 + 1.7e308 at the latest time: its total or sums
        refused.update(*head, 1, 0.7, w=1.7e308, **at(len(events)))
    assert refused.accumulator() == before
    for win in windows:
        for i in range(len(events) + 1, len(events) + 5):
            win.update(*head, 0, 0.6, w=2.0, **at(i))
            win.update(*head, 1, 0.7, **at(i))
    got, wanted = refused.get(), clean.get()
    if wrapped == "segmented":
        assert got.segments == wanted.segments
        got, wanted = got["eu"], wanted["eu"]
    for field in ("edges", "neg", "pos"):  # the log of events by count is folded at another time: sums of
        np.testing.assert_allclose(getattr(got, field), getattr(wanted, field), rtol=1e-12, atol=0)  # products
    assert got.brier == pytest.approx(wanted.brier, rel=1e-12)  # may differ in rounding


@pytest.mark.parametrize("threshold", [0.5, 0.65])  # 0.65: a bin of the threshold holds events on both sides
def test_a_binned_revert_of_an_event_never_counted_is_refused_and_changes_nothing(threshold):
    """In the binned regime one event is taken out of its bin in place: where the bin holds none of its label, or
    its page holds none at all, the revert is refused and nothing changes; a counted event leaves its bin."""
    rng = np.random.default_rng(3)
    pos, neg = rng.uniform(0.6, 0.7, 10_000), rng.uniform(0.1, 0.2, 10_000)  # past the exact budget: binned
    acc = se.BinaryAccumulator(threshold=threshold)
    acc.update_many(np.r_[np.ones(pos.size), np.zeros(neg.size)], np.r_[pos, neg])
    assert not acc.get().is_exact
    before = _snapshot(acc)
    # bins of no event in pages that hold events (a page: one octave of 128 bins), then pages of no event
    for y, score in [(0, 0.23), (1, 0.55), (1, 0.72), (0, 0.65), (1, 0.15), (1, 1e6), (0, -3.0)]:
        with pytest.raises(ValueError, match="cannot take out"):
            acc.revert(y, score)
        assert _snapshot(acc) == before
    acc.revert(1, float(pos[0]))
    acc.revert(0, float(neg[0]))
    ref = se.BinaryAccumulator(threshold=threshold)
    ref.update_many(np.r_[np.ones(pos.size - 1), np.zeros(neg.size - 1)], np.r_[pos[1:], neg[1:]])
    assert not ref.get().is_exact
    assert _snapshot(acc) == _snapshot(ref)


WINDOWS_OF_ONE_KIND = {
    "Sliding": lambda: se.Sliding(se.BinaryAccumulator, size=10),
    "Decayed": lambda: se.Decayed(se.BinaryAccumulator, half_life=10),
    "TimeWindow": lambda: se.TimeWindow(se.BinaryAccumulator, 10.0, 2),
    "Monitor": lambda: se.Monitor(se.BinaryAccumulator(), every=2),
}


@pytest.mark.parametrize("name", list(WINDOWS_OF_ONE_KIND))
@pytest.mark.parametrize("first", [1, np.array(1), np.int64(1)])
def test_a_window_refuses_one_value_where_a_batch_takes_a_column(name, first):
    """A window's ``update_many`` given one value, not a column, says which argument and what it got (it read
    the argument's length, and said only that an int has none), and keeps what it held."""
    window = WINDOWS_OF_ONE_KIND[name]()
    t = {"t": [0.0, 1.0]} if name == "TimeWindow" else {}
    window.update_many([1, 0], [0.9, 0.2], **t)
    before = window.get()
    t = {"t": 2.0} if name == "TimeWindow" else {}
    with pytest.raises(TypeError, match=r"update_many takes a column of values an argument, one an event: argument "
                       r"1 is (1|array\(1\))$"):  # fmt: skip
        window.update_many(first, 0.5, **t)
    after = window.get()
    assert (after.n, after.auc, after.tp, after.fp) == (before.n, before.auc, before.tp, before.fp)
