"""The compiled hot paths give exactly what their pure Python/numpy twins give."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from collections import OrderedDict as _OrderedDict
from unittest import mock

import numpy as np
import pytest
from conftest import ROOT
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import streameval as se
from streameval import _events, histogram

PURE = os.environ.get("STREAMEVAL_PURE_PYTHON", "") not in ("", "0")
needs_compiled = pytest.mark.skipif(not _events.COMPILED, reason="the compiled paths are not in use")

SPECIAL = np.array([
    -np.inf, -1e308, -3.0, -1.0, -5e-324, -0.0, 0.0, 5e-324, 2.2250738585072014e-308, 1e-300, 1e-12,
    0.25, 0.49999999999999994, 0.5, 0.5000000000000001, 0.75, 0.9999999999999999, 1.0, 1.0000000000000002,
    2.0, 2.0**53, 1e300, np.finfo(np.float64).max, np.inf,
])  # fmt: skip


def test_the_compiled_paths_are_built():
    if PURE:
        pytest.skip("STREAMEVAL_PURE_PYTHON asks for the Python twins")
    assert _events.COMPILED, "streameval._speedups did not build: is a C compiler installed?"
    assert se.BinaryAccumulator.update is _events.EventBuffer.update
    assert se.COMPILED is True


def _counted(make, feed, plain):
    """An accumulator fed by ``feed``, with the compiled batch kernel or with the numpy path."""
    acc = make()
    if plain:
        saved, histogram.batch_kernel = histogram.batch_kernel, lambda bins: None
        try:
            feed(acc)
        finally:
            histogram.batch_kernel = saved
    else:
        feed(acc)
    return acc


def _assert_same(make, feed):
    compiled, plain = _counted(make, feed, False), _counted(make, feed, True)
    assert compiled == plain
    assert se.to_bytes(compiled, level=0) == se.to_bytes(plain, level=0)  # the saved state, not compressed
    a, b = compiled.get(), plain.get()
    assert (a.tp, a.fp, a.tn, a.fn) == (b.tp, b.fp, b.tn, b.fn)
    np.testing.assert_array_equal(a.keys, b.keys)
    return compiled


def _scores(seed, n):
    rng = np.random.default_rng(seed)
    parts = [
        rng.random(n),  # probabilities
        rng.normal(0.0, 3.0, n),  # logits
        10.0 ** rng.uniform(-300, 300, n) * rng.choice([-1, 1], n),  # many octaves: many pages
        rng.choice(SPECIAL, n),
    ]
    s = np.concatenate(parts)
    rng.shuffle(s)
    return rng.random(s.size) < 0.4, s


@needs_compiled
@pytest.mark.parametrize("mantissa_bits", [1, 7, 12])
@pytest.mark.parametrize("threshold", [0.5, 0.377, 1e-12, -2.5])
def test_batch_kernel_equals_the_numpy_path(mantissa_bits, threshold):
    y, s = _scores(mantissa_bits, 10_000)
    bins = se.Bins.range_free(mantissa_bits)

    def feed(acc):
        acc.update_many(y, s)
        acc.update_many(y[:999], s[:999])  # a second batch into pages that exist
        acc._hist.add(s[:500], True, None)  # one label for the whole batch
        acc._hist.add(s[500:900], False, None)

    acc = _assert_same(lambda: se.BinaryAccumulator(bins=bins, threshold=threshold), feed)
    assert acc.get().n == y.size + 999 + 900


FIXED_BINS = {
    "uniform": se.Bins.uniform(-2.0, 3.0, 500),
    "uniform_unit": se.Bins.uniform(0.0, 1.0, 10),
    "edges": se.Bins.from_edges(np.linspace(-1, 2, 77)),
    "edges_wide": se.Bins.from_edges(np.sort(np.random.default_rng(0).normal(0, 1e3, 3000))),
}


@needs_compiled
@pytest.mark.parametrize("name", list(FIXED_BINS))
@pytest.mark.parametrize("threshold", [0.5, 0.377, -1.0])
def test_batch_kernel_of_fixed_bins_equals_the_numpy_path(name, threshold):
    y, s = _scores(11, 10_000)
    bins = FIXED_BINS[name]

    def feed(acc):
        acc.update_many(y, s)
        acc._hist.add(s[:500], True, None)
        acc._hist.take_out(s[500:900], y[500:900], None)

    _assert_same(lambda: se.BinaryAccumulator(bins=bins, threshold=threshold), feed)


@needs_compiled
@pytest.mark.parametrize("bins", [se.Bins.range_free(), se.Bins.range_free(12), *FIXED_BINS.values()], ids=repr)
@pytest.mark.parametrize("threshold", [0.5, 0.377])
def test_weighted_batch_kernel_sums_like_the_numpy_path(bins, threshold):
    y, s = _scores(12, 40_000)  # 160,000 events: three blocks, pages arriving inside blocks
    rng = np.random.default_rng(13)
    w = rng.choice([0.1, 1.0, 2.5, 1e-3, 0.0, 7.77], y.size) * rng.random(y.size)

    def feed(acc):
        acc.update_many(y, s, w)
        acc.update_many(y[:5000], s[:5000], 0.3)
        acc._hist.add(s[:70_000], True, w[:70_000])
        acc._hist.take_out(s[:1000], y[:1000], w[:1000])

    acc = _assert_same(lambda: se.BinaryAccumulator(bins=bins, threshold=threshold), feed)
    assert acc.get().n == pytest.approx(w.sum() + 1500.0 + w[:70_000].sum() - w[:1000].sum())


@needs_compiled
def test_batch_kernel_takes_events_back_out_exactly():
    y, s = _scores(3, 20_000)

    def feed(acc):
        acc.update_many(y, s)
        acc._hist.take_out(s[:7000], y[:7000], None)

    _assert_same(lambda: se.BinaryAccumulator(threshold=0.377), feed)
    back = se.BinaryAccumulator(threshold=0.377, exact_up_to=0)
    back.update_many(y, s)
    back._hist.take_out(s, y, None)
    assert back._hist.same(se.BinaryAccumulator(threshold=0.377, exact_up_to=0)._hist)


@needs_compiled
def test_batch_kernel_adds_unit_events_to_weighted_counts():
    y, s = _scores(4, 10_000)

    def feed(acc):
        acc.update_many(y[:100], s[:100], np.full(100, 0.25))
        acc.update_many(y, s)

    acc = _assert_same(lambda: se.BinaryAccumulator(threshold=0.377), feed)
    assert acc.get().n == pytest.approx(y.size + 25.0)


@needs_compiled
@pytest.mark.parametrize("bins", [se.Bins.range_free(), FIXED_BINS["uniform"], FIXED_BINS["edges"]], ids=repr)
@pytest.mark.parametrize("at", [0, 1, 255, 256, 70_000, 119_999])
def test_batch_kernel_refuses_a_nan_and_changes_nothing(at, bins):
    y, s = _scores(5, 30_000)
    s = s.copy()
    s[at] = np.nan
    messages = []
    for plain in (False, True):
        acc = se.BinaryAccumulator(bins=bins, threshold=0.377)
        acc.update_many(y[:50], s[51:101])
        before = acc.to_bytes()

        def feed(a):
            with pytest.raises(ValueError) as info:
                a.update_many(y, s)
            messages.append(str(info.value))

        saved = histogram.batch_kernel
        if plain:
            histogram.batch_kernel = lambda bins: None
        try:
            feed(acc)
        finally:
            histogram.batch_kernel = saved
        assert acc.to_bytes() == before
    assert messages[0] == messages[1] == f"scores must not be NaN, got nan at index {at}"


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),
            st.floats(allow_nan=False) | st.sampled_from(SPECIAL.tolist()),
        ),
        min_size=1,
        max_size=600,
    ),
    st.sampled_from([0.5, 0.377, 0.0, -1e-300, 1.0]),
    st.sampled_from([se.Bins.range_free(), se.Bins.range_free(2), *FIXED_BINS.values()]),
)
def test_batch_kernel_equals_the_numpy_path_on_any_floats(events, threshold, bins):
    y = np.array([e[0] for e in events])
    s = np.array([e[1] for e in events])
    _assert_same(lambda: se.BinaryAccumulator(bins=bins, threshold=threshold), lambda acc: acc.update_many(y, s))


@needs_compiled
def test_kernel_refuses_inconsistent_arguments():
    from streameval import _speedups

    acc = se.BinaryAccumulator(exact_up_to=0)
    state, bins = acc._hist._counts, acc.bins
    x = np.array([0.1, 0.7])
    lab = np.array([1, 0], dtype=np.uint8)
    scratch = np.zeros(1, dtype=np.uint8)
    args = [x, lab, 1, state._base, state._page_of_row, 0, state._counts, False, 1, 0, 0, False, 0.5, 0, 2,
            b"", scratch, scratch, 0, bins._shift, bins._tag_shift]  # fmt: skip
    assert _speedups.count_range_free(*args)[:3] == (0, False, 0)  # no row to give: stops at once
    wrong_values = [(3, state._base[:10]), (1, lab[:1].repeat(3)), (2, 3), (2, 8), (20, 3), (19, 3), (14, 3),
                    (13, -1), (8, 2), (5, 1)]  # fmt: skip
    for index, bad in wrong_values:
        wrong = list(args)
        wrong[index] = bad
        with pytest.raises(ValueError, match="inconsistent arguments"):
            _speedups.count_range_free(*wrong)
    part, tally = np.zeros(0), np.zeros(0)
    weighted = [*args[:6], part, True, 1, *args[9:15], np.ones(2), tally, scratch, 65536, *args[19:]]
    assert _speedups.count_range_free(*weighted)[:3] == (0, False, 0)
    for index, bad in [(15, np.ones(3)), (8, -1), (7, False), (16, np.zeros(8)), (18, 0), (14, 1)]:
        wrong = list(weighted)
        wrong[index] = bad
        with pytest.raises(ValueError, match="inconsistent arguments"):
            _speedups.count_range_free(*wrong)
    uniform = se.Bins.uniform(0.0, 1.0, 10)
    small = se.BinaryAccumulator(bins=uniform, exact_up_to=0)._hist._counts
    ok = [x, lab, 1, small._base, small._page_of_row, 0, small._counts, False, 1, 0, 0, False, 0.5, 0, 2,
          b"", scratch, scratch, 0]  # fmt: skip
    assert _speedups.count_uniform(*ok, 0.0, 10.0, 10, uniform._lower, uniform._upper)[:3] == (0, False, 0)
    with pytest.raises(ValueError, match="inconsistent arguments"):
        _speedups.count_uniform(*ok, 0.0, 10.0, 11, uniform._lower, uniform._upper)  # edges of another n
    with pytest.raises(ValueError, match="inconsistent arguments"):  # a page table too small for the codes
        _speedups.count_edges(*ok, np.linspace(0, 1, 1000))


@needs_compiled
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int16, np.uint32, np.int64, np.uint64])
def test_batch_kernel_reads_integer_labels_like_the_numpy_path(dtype):
    y, s = _scores(6, 5_000)
    labels = y.astype(dtype)
    acc = _assert_same(lambda: se.BinaryAccumulator(threshold=0.377), lambda a: a.update_many(labels, s))
    assert acc.get().positives == int(y.sum())


@needs_compiled
@pytest.mark.parametrize("bad", [2, -1, 255])
@pytest.mark.parametrize("at", [0, 300, 19_999])
def test_batch_kernel_refuses_another_label_and_changes_nothing(bad, at):
    y, s = _scores(7, 5_000)
    labels = y.astype(np.int16)
    labels[at] = bad
    scores = s.copy()
    scores[at + 1 :] = np.nan  # NaN after the bad label: the label is named
    messages = []
    for plain in (False, True):
        acc = se.BinaryAccumulator(threshold=0.377)
        acc.update_many(y[:50], s[:50])
        before = acc.to_bytes()
        saved = histogram.batch_kernel
        if plain:
            histogram.batch_kernel = lambda bins: None
        try:
            with pytest.raises(ValueError) as info:
                acc.update_many(labels, scores)
        finally:
            histogram.batch_kernel = saved
        messages.append(str(info.value))
        assert acc.to_bytes() == before
    assert messages[0] == messages[1] == f"y must be 1 (positive) or 0 (negative), got {bad} at index {at}"


PER_EVENT_SCRIPT = textwrap.dedent(
    """
    import fractions, sys
    import numpy as np
    import streameval as se

    rng = np.random.default_rng(7)
    labels = [1, 0, True, False, np.int64(1), np.int8(0), 1.0, 0.0]
    scores = [lambda: float(rng.random()), lambda: np.float64(rng.normal()), lambda: int(rng.integers(-3, 4)),
              lambda: fractions.Fraction(int(rng.integers(0, 9)), 8), lambda: bool(rng.random() < 0.5),
              lambda: np.array(rng.random()), lambda: float(rng.choice([0.5, -0.0, 1.0, np.inf, -np.inf, 1e-300]))]
    bad = [(2, 0.3, 1.0), ("1", 0.3, 1.0), ([1], 0.3, 1.0), (1, float("nan"), 1.0), (1, "0.3", 1.0), (0, None, 1.0),
           (1, 0.3, -1.0), (1, 0.3, float("inf")), (1, 0.3, "w"), (None, 0.3, 1.0)]
    out = []
    for threshold in (0.5, 0.377):
        acc = se.BinaryAccumulator(threshold=threshold)
        for i in range(30_000):
            kind = rng.integers(0, 20)
            y = labels[int(rng.integers(0, len(labels)))]
            s = scores[int(rng.integers(0, len(scores)))]()
            if kind < 14:
                acc.update(y, s)
            elif kind < 16:
                acc.update(y, s, float(rng.choice([1.0, 2.5, 0.0])))
            elif kind == 16:
                acc.update(y=y, score=s, w=1)
            elif kind == 17:
                acc.update(y, score=s)
            elif kind == 18:
                try:
                    acc.update(*bad[int(rng.integers(0, len(bad)))])
                except (TypeError, ValueError) as exc:
                    out.append(f"{type(exc).__name__}: {exc}")
            elif i % 10 == 0:  # kind 19: a read now and then
                r = acc.get()
                out.append(f"read {r.n} {r.tp} {r.fp} {r.auc!r}")
        for args, kwargs in [((1,), {}), ((1, 0.2), {"weight": 2.0}), ((1, 0.2, 1.0, 4), {})]:
            try:
                acc.update(*args, **kwargs)
            except TypeError as exc:
                out.append(f"TypeError: {exc}")
        out.append(acc.to_bytes().hex())
    sys.stdout.write("\\n".join(out))
    """
)


def _run(code, pure):
    env = dict(os.environ)
    env.pop("STREAMEVAL_PURE_PYTHON", None)
    if pure:
        env["STREAMEVAL_PURE_PYTHON"] = "1"
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _same_in_both_modes(script, messages, lines=0):
    """``script`` run compiled and on the Python twins prints the same, more than ``lines`` lines with each of
    ``messages`` (the refusals it provokes) among them."""
    compiled, pure = _run(script, False), _run(script, True)
    for message in messages:
        assert message in compiled, message
    assert compiled.count("\n") > lines
    assert compiled == pure


@needs_compiled
def test_per_event_path_equals_its_python_twin():
    messages = ("ValueError: y must be 1 (positive) or 0 (negative), got 2",
                "TypeError: BinaryAccumulator.update() missing 1 required positional argument: 'score'")  # fmt: skip
    _same_in_both_modes(PER_EVENT_SCRIPT, messages, lines=100)  # reads and refusals were recorded


FLOAT_EVENTS_SCRIPT = textwrap.dedent(
    """
    import fractions, sys
    import numpy as np
    import streameval as se

    rng = np.random.default_rng(5)
    odd = [0.5, 3, True, np.float64(0.25), np.int64(7), fractions.Fraction(1, 3), float("nan"), float("inf"),
           -float("inf"), "x", None, 10**400, -0.0, 1e308]
    weights = [1.0, 2.5, 0, 1, -1.0, float("nan"), float("inf"), np.float32(0.5), "w"]
    for make, width in ((se.ScoreAccumulator, 1), (se.RegressionAccumulator, 2)):
        acc = make()
        for i in range(9000):
            values = [float(v) for v in rng.normal(0, 2, width)]
            if i % 97 == 0:
                values[i % width] = odd[(i // 97) % len(odd)]
            call = i % 5
            try:
                if call == 0:
                    acc.update(*values)
                elif call == 1:
                    acc.update(*values, w=weights[i % len(weights)])
                elif call == 2:
                    acc.update(*values, weights[(i // 3) % len(weights)])
                elif call == 3:
                    acc.update(*values[:-1])  # one value short
                else:
                    acc.update(*values, 1.0, 2.0)  # one too many
            except (TypeError, ValueError, OverflowError) as exc:
                print(i, type(exc).__name__, exc)
            if i % 1000 == 0:
                print(i, acc.n, se.to_bytes(acc).hex()[-64:])
        print(type(acc).__name__, acc.n, acc.get())
    """
)


@needs_compiled
def test_float_events_path_equals_its_python_twin():
    messages = ("score must not be NaN", "y_pred must be finite", "y must be a real number, got None",
                "w must be >= 0, got -1.0", "score must be finite, got an integer too large",
                "RegressionAccumulator.update() missing 1 required positional argument")  # fmt: skip
    _same_in_both_modes(FLOAT_EVENTS_SCRIPT, messages, lines=200)


CLASS_ROWS_SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as np
    import streameval as se

    rng = np.random.default_rng(6)
    odd = [float("nan"), 1, True, np.float64(0.2), "x", None, float("inf"), -float("inf")]
    weights = [2.5, float("inf"), -1.0, 0.0, np.float64(0.5), 3, float("nan"), "2"]

    def attempt(acc, i, *args, **kwargs):
        try:
            acc.update(*args, **kwargs)
        except (TypeError, ValueError) as exc:
            print(i, type(exc).__name__, exc)
        if i % 1000 == 0:
            print(i, acc.n, acc.classes, se.to_bytes(acc).hex()[-64:])

    for fixed in (True, False):
        acc = se.MulticlassAccumulator(classes=["a", "b", "c"] if fixed else None)
        for i in range(9000):
            p = rng.dirichlet([1.0, 1.0, 1.0]).tolist()
            scores = dict(zip("abc", p))
            y = "abc"[i % 3]
            kind = i % 11
            if kind == 1:
                scores["b"] = odd[(i // 11) % len(odd)]
            elif kind == 2:
                del scores["c"]
            elif kind == 3:
                scores["d"] = 0.5
            elif kind == 4:
                y = ["a"]
            elif kind == 5:
                y = "z"
            elif kind == 6:
                scores = p  # a sequence
            if kind == 7:
                attempt(acc, i, y, scores, w=2.0)
            elif kind == 8:
                attempt(acc, i, y, scores, 1.0)
            elif kind == 10:  # weights: stored in C when a plain float >= 0, else checked
                attempt(acc, i, y, scores, weights[(i // 11) % len(weights)])
            elif kind == 9:
                attempt(acc, i, y)
            else:
                attempt(acc, i, y, scores)
        print(acc.n, acc.classes, acc.get().confusion_matrix.tolist(), acc.get().macro_auc)
    for fixed in (True, False):  # predicted classes: two known classes are stored in C, anything else checked
        labels = se.MulticlassAccumulator(classes=[0, 1, 2, 3] if fixed else None)
        for i in range(6000):
            y, pred = i % 4, (i * 7) % 4
            kind = i % 13
            if kind == 1:
                pred = 9  # a class not known: learnt, or refused
            elif kind == 2:
                y = [1]  # unhashable
            elif kind == 3:
                pred = np.int64(pred)
            elif kind == 4:
                pred = {0: 0.5, 1: 0.5}  # scores, to an accumulator of predicted classes
            elif kind == 5:
                y = True  # equal to the class 1
            elif kind == 6:
                pred = (1,)
            weight = {7: {"w": 2.0}, 8: {"w": weights[(i // 13) % len(weights)]}}.get(kind, {})
            attempt(labels, i, y, pred, **weight)
        print(labels.get().confusion_matrix.tolist(), labels.classes)
    """
)


@needs_compiled
def test_class_rows_path_equals_its_python_twin():
    messages = ("scores['b'] must not be NaN", "must be one of the classes", "missing ['c']",
                "MulticlassAccumulator.update() missing 1 required positional argument",
                "counts labels, got scores", "y must be a hashable class label")  # fmt: skip
    _same_in_both_modes(CLASS_ROWS_SCRIPT, messages)


EVENT_LOG_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import streameval as se

    rng = np.random.default_rng(7)
    # windows of continuous scores, and of rounded ones, with budgets that hold them or not (exact regime)
    windows = ((50, 8192, 17), (3000, 8192, 17), (2500, 6600, 17), (2000, 1200, 3), (20000, 8192, 17))
    for size, budget, digits in windows:
        win = se.Sliding(lambda: se.BinaryAccumulator(pos_label=1, exact_up_to=budget), size=size)
        events = []
        for i in range(12000):
            y, s = bool(rng.random() < 0.3), round(float(rng.random()), digits)
            kind = i % 23
            try:
                if kind == 1:
                    win.update(int(y), s, w=1.5)
                elif kind == 2:
                    win.update(np.int64(y), np.float64(s))
                elif kind == 3:
                    win.update(int(y), s, 2.0)
                elif kind == 4 and i % 3 == 0:
                    win.update(2, s)  # refused: nothing kept
                else:
                    win.update(y, s)
            except ValueError as exc:
                print(i, exc)
            if i % 2997 == 0:
                r = win.get()
                print(i, win.n, r.n, r.tp, r.fp, r.auc, r.is_exact)
        r = win.accumulator().get()  # weighted counts: equal to rounding (filed in other groups)
        print(size, np.round(r.pos, 9).tolist()[-5:], np.round(r.neg, 9).tolist()[-5:], round(r.brier, 12))
    reg = se.Sliding(se.RegressionAccumulator, size=700)
    for i in range(5000):
        reg.update(float(i % 17), float(i % 13)) if i % 5 else reg.update(i % 17, i % 13)
    print(reg.get())
    """
)


@needs_compiled
def test_sliding_event_log_equals_its_python_twin():
    _same_in_both_modes(EVENT_LOG_SCRIPT, ["y must be 1 (positive) or 0 (negative), got 2"], lines=30)


SEGMENT_LOG_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import streameval as se

    rng = np.random.default_rng(8)
    names = ["eu", "us", "asia", "af"]
    for size in (50, 3000, 9000):
        win = se.Sliding(lambda: se.Segmented(se.BinaryAccumulator), size=size)
        for i in range(20000):
            g = "".join(names[int(rng.integers(0, 4))])  # a str made afresh: held by the window alone
            y, s = bool(rng.random() < 0.3), float(round(rng.random(), 3))
            kind = i % 29
            try:
                if kind == 1:
                    win.update(g, int(y), s, w=2.0)
                elif kind == 2:
                    win.update(int(rng.integers(0, 3)), y, s)  # an int segment
                elif kind == 3 and i % 3 == 0:
                    win.update(g, 2, s)  # refused: nothing kept
                elif kind == 4 and i % 5 == 0:
                    win.update(g, y, float("nan"))  # refused
                else:
                    win.update(g, y, s)
            except ValueError as exc:
                print(i, exc)
            if i % 2999 == 0:
                r = win.get()
                print(i, win.n, sorted(map(str, r.segments)), r.overall.n, r.overall.tp, r.overall.auc)
        r = win.accumulator().get()
        print(size, {str(k): round(v.auc, 12) for k, v in zip(r.segments, r.reports.values(), strict=True)})
    """
)


@needs_compiled
def test_sliding_over_segments_equals_its_python_twin():
    """A window over segments named by str: the compiled log keeps the names in a column of its own (holding
    their references), the Python twin in runs of calls; the same reports, refusals and segments."""
    _same_in_both_modes(SEGMENT_LOG_SCRIPT, ["y must be 1 (positive) or 0 (negative), got 2", "NaN"], lines=30)


CLASS_LOG_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import streameval as se

    rng = np.random.default_rng(8)
    for size, fixed in ((50, True), (3000, False), (9000, True)):
        win = se.Sliding(lambda: se.MulticlassAccumulator(classes=["a", "b", "c"] if fixed else None), size=size)
        for i in range(15000):
            p = np.round(rng.dirichlet([1.0, 1.0, 1.0]), 2).tolist()
            y, scores = "abc"[int(rng.integers(0, 3))], dict(zip("abc", p))
            kind = i % 29
            try:
                if kind == 1 and fixed:  # a sequence (aligned with the classes given): a run of calls
                    win.update(y, p)
                elif kind == 2:
                    win.update(y, scores, w=2.0)
                elif kind == 3:
                    win.update("z", scores)  # refused with classes given, learnt otherwise
                elif kind == 4:
                    scores["b"] = float("nan")
                    win.update(y, scores)  # refused
                elif kind == 5:
                    win.update(y, "a")  # a predicted class: refused
                else:
                    win.update(y, scores)
            except (TypeError, ValueError) as exc:
                print(i, type(exc).__name__, exc)
            if i % 2999 == 0:  # a read files the per-event calls
                print(i, win.n, win.get().confusion_matrix.tolist(), round(win.get().macro_auc, 12))
        print(size, win.accumulator().classes, win.accumulator().get().confusion_matrix.tolist())
    """
)


@needs_compiled
def test_sliding_over_class_scores_equals_its_python_twin():
    """A window over multiclass events: the compiled log keeps the dicts of class scores in a column of their own
    (holding their references), the Python twin in runs of calls; the same reports, refusals and classes."""
    _same_in_both_modes(CLASS_LOG_SCRIPT, ["must not be NaN", "either class scores or predicted labels"], lines=30)


@needs_compiled
def test_the_log_lets_go_of_the_dicts_it_held():
    """Every reference the log takes to a dict is given back once the window is gone, with events still in the
    log's typed run or not."""
    import gc

    scores = {"a": 0.7, "b": 0.2, "c": 0.1}
    before = sys.getrefcount(scores)
    win = se.Sliding(se.MulticlassAccumulator, size=3000)
    for i in range(10_000):
        win.update("abc"[i % 3], scores)
    assert win.get().n == 3000
    partial = se.Sliding(se.MulticlassAccumulator, size=3000)
    for _ in range(100):
        partial.update("a", scores)
    del win, partial
    gc.collect()
    assert sys.getrefcount(scores) == before


@needs_compiled
def test_the_log_lets_go_of_the_names_it_held():
    """Every reference the log takes to a str value is given back: once the window is gone, a name's reference
    count is what it was."""
    import gc

    name = "".join(["seg", "ment"])  # not interned: counted here alone
    before = sys.getrefcount(name)
    win = se.Sliding(lambda: se.Segmented(se.BinaryAccumulator), size=3000)
    for i in range(10_000):
        win.update(name, i % 3 == 0, (i % 97) / 97)
    assert win.get()[name].n == 3000
    partial = se.Sliding(lambda: se.Segmented(se.BinaryAccumulator), size=3000)
    for _ in range(100):  # still in the log's typed run when the window goes
        partial.update(name, True, 0.5)
    del win, partial
    gc.collect()
    assert sys.getrefcount(name) == before


PANE_ROUTER_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import streameval as se

    rng = np.random.default_rng(8)
    win = se.TimeWindow(se.BinaryAccumulator, width=50.0, panes=5)
    t = 0.0
    for i in range(20000):
        t += float(rng.exponential(0.02))
        when = t - float(rng.exponential(5.0)) if i % 17 == 0 else t  # some late, some in older panes
        y, s = bool(rng.random() < 0.3), float(rng.random())
        try:
            if i % 29 == 0:
                win.update(y, s, t=when, w=2.0)
            elif i % 23 == 0:
                win.update(y, s, w=[0.5, 3, -1.0, float("nan"), np.float64(1.5), 1e300][i % 6], t=when)
            elif i % 31 == 0:
                win.update(y, s, t=int(when))
            elif i % 37 == 0:
                win.update(y, s, t=float("nan"))
            elif i % 41 == 0:
                win.update(3, s, t=when)
            else:
                win.update(y, s, t=when)
        except (TypeError, ValueError) as exc:
            print(i, type(exc).__name__, exc)
        if i % 500 == 0:
            r = win.get()
            print(i, r.n, r.tp, r.fp, win.n_late, r.auc)
    """
)


@needs_compiled
def test_time_window_router_equals_its_python_twin():
    messages = ["t must not be NaN", "got 3", "w must be >= 0, got -1.0", "w must not be NaN"]
    _same_in_both_modes(PANE_ROUTER_SCRIPT, messages, lines=40)


DECAYED_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import streameval as se

    rng = np.random.default_rng(9)
    dec = se.Decayed(se.BinaryAccumulator, half_life=300)
    for i in range(30000):
        y, s = bool(rng.random() < 0.3), float(rng.random())
        try:
            if i % 29 == 0:
                dec.update(y, s, w=2.0)
            elif i % 31 == 0:
                dec.update(int(y), s)
            elif i % 37 == 0:
                dec.update(y, float("nan"))
            elif i % 41 == 0:
                dec.update(5, s)
            elif i % 43 == 0:
                dec.update(y, s, t=1.0)
            elif i % 997 == 0:
                dec.update_many([y, not y], [s, 1 - s])
            else:
                dec.update(y, s)
        except (TypeError, ValueError) as exc:
            print(i, type(exc).__name__, exc)
        if i % 700 == 0:
            r = dec.get()
            print(i, round(r.n, 9), round(r.tp, 9), round(r.auc, 12))
    # class scores: one dict filled again for each event, learnt classes, odd and refused events among them
    odd_calls = {  # every i-th event (the first that divides i), the call made instead of a plain one
        29: lambda: dec.update(y, scores, w=0.5),
        31: lambda: dec.update(y, {**scores, "b": float("nan")}),
        37: lambda: dec.update("d" if i % 74 else y, {"a": 0.5, "b": 0.5}),
        41: lambda: dec.update(y, [scores[c] for c in "abc"]),
        43: lambda: dec.update(y, "c"),
        997: lambda: dec.update_many([y, "a"], [dict(scores), dict(scores)]),
    }
    for make in (lambda: se.MulticlassAccumulator(classes=["a", "b", "c"]), se.MulticlassAccumulator):
        dec = se.Decayed(make, half_life=500)
        scores = {}
        for i in range(12000):
            y = "abc"[int(rng.integers(0, 3))]
            scores.update(zip("abc", rng.dirichlet([1.0, 1.0, 1.0]).tolist()))
            call = next((f for every, f in odd_calls.items() if i % every == 0), lambda: dec.update(y, scores))
            try:
                call()
            except (TypeError, ValueError) as exc:
                print(i, type(exc).__name__, exc)
            if i % 1500 == 0:
                r = dec.get()
                print(i, r.classes, [round(v, 9) for v in r.confusion_matrix.ravel().tolist()])
    """
)


@needs_compiled
def test_decayed_log_equals_its_python_twin():
    _same_in_both_modes(DECAYED_SCRIPT, ["score must not be NaN", "got 5", "t is only for by='time'"], lines=40)


DECAY_ROUTER_SCRIPT = textwrap.dedent(
    """
    import datetime
    import hashlib
    import pickle
    import numpy as np
    import streameval as se


    def counts(dec):  # the decayed counts to the bit (sums of products, as the Brier score, may differ in rounding)
        r = dec.get()
        parts = [r.overall, *(r[k] for k in r.segments)] if hasattr(r, "segments") else [r]
        if hasattr(r, "confusion_matrix"):
            arrays = [r.confusion_matrix]
        else:
            arrays = [a for part in parts for a in (part.edges, part.pos, part.neg)]
        digest = hashlib.sha1(b"".join(np.ascontiguousarray(a).tobytes() for a in arrays)).hexdigest()
        return [repr(part.n) for part in parts], digest


    rng = np.random.default_rng(11)
    kinds = {
        "binary": (se.BinaryAccumulator, lambda y, s: (y, s)),
        "segments": (lambda: se.Segmented(se.BinaryAccumulator), lambda y, s: (["eu", "us", 7][int(s * 3)], y, s)),
        "classes": (se.MulticlassAccumulator, lambda y, s: ("ab"[int(y)], {"a": s, "b": 1 - s})),
    }
    for kind, (make, event) in kinds.items():
        dec = se.Decayed(make, half_life=40.0, by="time")
        t = 0.0
        for i in range(9000):
            t += float(rng.exponential(1.0))
            if i == 4000:
                t += 40.0 * 600  # 600 half-lives on: the state is rescaled
            elif i == 6000:
                t += 40.0 * 5000  # past 1,024 half-lives: 2 ** age is past the floats, the state rescaled too
            y, s = bool(rng.random() < 0.3), float(rng.random())
            args = event(y, s)
            try:
                if i % 7 == 0:
                    dec.update(*args, t=round(t))  # an int time
                elif i % 11 == 0:
                    dec.update(*args, t=t, w=3)  # an int weight
                elif i % 13 == 0:
                    dec.update(*args, w=0.5, t=t - 30.0)  # keywords the other way round, a late event
                elif i % 17 == 0:
                    dec.update(*args, t=np.float64(t), w=np.float64(2.0))
                elif i % 19 == 0:
                    dec.update(*args, t=t, w=[-1.0, float("nan"), float("inf"), 10**400, True][i % 5])
                elif i % 23 == 0:
                    dec.update(*args, t=[float("nan"), float("inf"), 10**400, None, "x"][i % 5])
                elif i % 29 == 0:
                    dec.update(*args, t=datetime.datetime.fromtimestamp(t, datetime.timezone.utc))
                elif i % 31 == 0:
                    dec.update(*args[:-2], 5, args[-1], t=t)  # a label the state refuses
                elif i % 37 == 0:
                    dec.update(*args)  # no time
                elif i % 41 == 0:
                    dec.update(*args, t=t, w=0.0)
                elif i % 997 == 0:
                    dec.update_many(*([a, a] for a in args), t=[t, t + 1.0])
                    t += 1.0
                elif i % 2999 == 0:
                    dec = pickle.loads(pickle.dumps(dec))
                elif i % 3001 == 0:
                    dec = dec.merge(dec)
                else:
                    dec.update(*args, t=t, w=1.5 if i % 2 else 1.0)
            except (TypeError, ValueError) as exc:
                print(kind, i, type(exc).__name__, exc)
            if i % 500 == 0:
                print(kind, i, counts(dec))
        print(kind, counts(dec))
    """
)


@needs_compiled
def test_decayed_by_time_router_equals_its_python_twin():
    messages = ("w must be", "t must be", "t is required", "got 5")
    _same_in_both_modes(DECAY_ROUTER_SCRIPT, messages, lines=60)


EXTREME_WINDOWS_SCRIPT = textwrap.dedent(
    """
    import numpy as np, streameval as se, math
    rng = np.random.default_rng(5)
    B = se.BinaryAccumulator
    def make(k):  # time windows, decayed ones and monitors by time, of time windows and of a decayed window
        return [lambda: se.TimeWindow(B, width=10.0, panes=3),
                lambda: se.Decayed(B, half_life=2.0, by="time"),
                lambda: se.Decayed(B, half_life=3),
                lambda: se.Monitor(B(), every=7.0, by="time"),
                lambda: se.Monitor(se.TimeWindow(B, width=10.0, panes=3), every=5),
                lambda: se.Monitor(se.Decayed(B, half_life=2.0, by="time"), every=7.0, by="time")][k]()
    timed = [True, True, False, True, True, True]
    for k in range(6):
        win = make(k)
        t = 0.0
        for i in range(3000):
            r = rng.random()
            if r < 0.02: t += float(rng.choice([1e3, 1e5, 1e300, -1e5]))
            elif r < 0.04: t = float(rng.choice([0.0, -0.0, 1e308, -1e308, 5e-324]))
            else: t += float(rng.exponential(0.5))
            y = int(rng.integers(0, 2)); s = float(rng.choice([rng.random(), 0.0, 1.0, 1e-300, -1e300, 1e300, 0.5]))
            kw = {}
            if timed[k]:
                kw["t"] = [t, int(t) if abs(t) < 1e18 else t, np.float64(t)][i % 3]
            if rng.random() < 0.3:
                kw["w"] = float(rng.choice([1.0, 0.0, 2.5, 1e-300, 1e300, 1e308, 3]))
            try:
                if rng.random() < 0.05:
                    win.update_many([y, 1 - y], [s, 0.25], **{k2: [v, v] for k2, v in kw.items()})
                else:
                    win.update(y, s, **kw)
            except (TypeError, ValueError, OverflowError) as exc:
                print(k, i, type(exc).__name__, str(exc)[:120])
            if i % 250 == 0:
                try:
                    rep = win.get()
                    print(k, i, repr(rep.n), rep.tp, rep.fp)
                except (ValueError, OverflowError) as exc:
                    print(k, i, "read", type(exc).__name__, str(exc)[:120])
    """
)


@needs_compiled
def test_windows_fed_extreme_times_weights_and_scores_equal_their_python_twins():
    """Random events with jumps of time up to 1e300, times of 1e308, -0.0 and 5e-324, scores of 1e300, weights from
    1e-300 to 1e308 (a total past the largest float refused), int and numpy forms, batches among them, into time
    windows, decayed windows by time and by events and monitors: the same reports and refusals on both paths."""
    _same_in_both_modes(EXTREME_WINDOWS_SCRIPT, ["would overflow"], lines=100)


SEGMENT_ROUTER_SCRIPT = textwrap.dedent(
    """
    import pickle
    import numpy as np
    import streameval as se

    rng = np.random.default_rng(10)
    seg = se.Segmented(se.BinaryAccumulator, max_segments=6)
    names = ["eu", "us", 3, 4, ("eu", 1), np.int64(3), np.str_("us"), 2.5, True, "new"]
    for i in range(20000):
        y, s = bool(rng.random() < 0.3), float(rng.random())
        name = names[int(rng.integers(0, len(names)))]
        try:
            if i % 29 == 0:
                seg.update(name, y, s, w=2.0)
            elif i % 37 == 0:
                seg.update(name, y, float("nan"))
            elif i % 41 == 0:
                seg.update(name, 5, s)
            elif i % 43 == 0:
                seg.update(name)
            elif i % 47 == 0:
                seg.update(segment=name, y=y, score=s)
            elif i % 53 == 0:
                seg.update([name], y, s)
            elif i % 307 == 0:
                seg.revert(name, y, s)
            elif i % 997 == 0:
                seg.update_many([name, "us"], [y, not y], [s, 1 - s])
            elif i % 1999 == 0:
                seg = pickle.loads(pickle.dumps(seg))
            elif i % 2999 == 0:
                seg += seg.copy()
            else:
                seg.update(name, y, s)
        except (TypeError, ValueError) as exc:
            print(i, type(exc).__name__, exc)
        if i % 700 == 0:
            r = seg.get()
            print(i, r.segments, r.overall.n, [r[k].n for k in r.segments], round(r.overall.auc, 12))
    print(seg.to_bytes().hex())
    """
)


@needs_compiled
def test_segment_router_equals_its_python_twin():
    messages = ("score must not be NaN", "got 5", "max_segments=6", "never counted", "hashable", "missing 2")
    _same_in_both_modes(SEGMENT_ROUTER_SCRIPT, messages, lines=40)


# the end of the monitors' scripts: each event's refusal, then every record (weighted sums, the decayed windows',
# may differ in their last bits: compiled and numpy sum apart)
_MONITOR_RECORDS = """
            except (TypeError, ValueError) as exc:
                print(number, i, type(exc).__name__, exc)
        mon.record_now()
        for row in mon.to_records():
            print(number, {k: round(v, 9) if isinstance(v, float) else v for k, v in row.items()})
"""


MONITOR_SCRIPT = textwrap.dedent(
    """
    import pickle
    import numpy as np
    import streameval as se

    rng = np.random.default_rng(11)

    def binary_event(i):
        return [bool(rng.random() < 0.3), float(rng.random())]

    kinds = [  # (what is monitored, one event's arguments, a bad event's arguments)
        (lambda: se.BinaryAccumulator(), binary_event, lambda: [2, 0.5]),
        (lambda: se.ScoreAccumulator(), lambda i: [float(rng.normal())], lambda: [float("nan")]),
        (lambda: se.MulticlassAccumulator(classes=["a", "b", "c"]),
         lambda i: ["abc"[i % 3], dict(zip("abc", rng.dirichlet([1.0, 1.0, 1.0]).tolist()))],
         lambda: ["z", {"a": 0.2, "b": 0.3, "c": 0.5}]),
        (lambda: se.Sliding(se.BinaryAccumulator, size=700), binary_event, lambda: [1, float("nan")]),
        (lambda: se.Segmented(se.BinaryAccumulator), lambda i: ["eu" if i % 2 else 3, *binary_event(i)],
         lambda: ["eu", 5, 0.5]),
        (lambda: se.Decayed(se.BinaryAccumulator, half_life=400), binary_event, lambda: [1, "x"]),
    ]
    for number, (make, event, bad) in enumerate(kinds):
        mon = se.Monitor(make(), every=250)
        update = mon.update
        for i in range(3000):
            args = event(i)
            try:
                if i % 97 == 0:
                    update(*bad())
                elif i % 89 == 0:
                    update(*args[:-1])  # an argument short
                elif i % 83 == 0 and number != 2:
                    update(*args, w=2.0)
                elif i % 401 == 0:
                    mon.update_many(*[[a] for a in args])
                elif i % 701 == 0:
                    mon = pickle.loads(pickle.dumps(mon))
                    update = mon.update
                else:
                    update(*args)
    """
    + _MONITOR_RECORDS
)


@needs_compiled
def test_monitor_counter_equals_its_python_twin():
    messages = ("got 2", "score must not be NaN", "got 'z'", "got 5", "missing 1 required positional argument")
    _same_in_both_modes(MONITOR_SCRIPT, messages, lines=80)


TIMED_MONITOR_SCRIPT = textwrap.dedent(
    """
    import datetime
    import pickle
    import numpy as np
    import streameval as se

    rng = np.random.default_rng(12)
    B = se.BinaryAccumulator
    kinds = [  # (the monitor, whether its updates carry a segment)
        (lambda: se.Monitor(B(), every=50.0, by="time"), False),
        (lambda: se.Monitor(se.TimeWindow(B, width=120.0, panes=4), every=50.0, by="time"), False),
        (lambda: se.Monitor(se.TimeWindow(B, width=120.0, panes=4), every=300), False),
        (lambda: se.Monitor(se.Decayed(B, half_life=80.0, by="time"), every=50.0, by="time"), False),
        (lambda: se.Monitor(se.Decayed(lambda: se.Segmented(B), half_life=80.0, by="time"), every=300), True),
        (lambda: se.Monitor(se.Segmented(B), every=75.0, by="time", metrics=["auc", "n"]), True),
    ]
    for number, (make, segmented) in enumerate(kinds):
        mon = make()
        update = mon.update
        t = 0.0
        for i in range(3000):
            t += float(rng.exponential(0.2))
            head = ["eu" if i % 3 else 7] if segmented else []
            y, s = bool(rng.random() < 0.3), float(rng.random())
            try:
                if i % 97 == 0:
                    update(*head, 2, s, t=t)  # a label the accumulator refuses
                elif i % 89 == 0:
                    update(*head, y, s)  # no time
                elif i % 83 == 0:
                    update(*head, y, s, t=[float("nan"), None, "x", float("inf")][i % 4])
                elif i % 79 == 0:
                    update(*head, y, s, t=round(t))  # an int time
                elif i % 73 == 0:
                    update(*head, y, s, t=np.float64(t))
                elif i % 71 == 0:
                    update(*head, y, s, t=t - 30.0)  # a late event
                elif i % 67 == 0:
                    update(*head, y, s, t=datetime.datetime.fromtimestamp(t, datetime.timezone.utc))
                elif i % 61 == 0:
                    update(*head, y, s, w=2.0, t=t)
                elif i % 401 == 0:
                    mon.update_many(*[[a] for a in (*head, y, s)], t=[t])
                elif i % 701 == 0:
                    mon = pickle.loads(pickle.dumps(mon))
                    update = mon.update
                else:
                    update(*head, y, s, t=t)
    """
    + _MONITOR_RECORDS
)


@needs_compiled
def test_timed_monitor_counter_equals_its_python_twin():
    """Monitors by time, and by events over windows that take the time: every event's path, compiled and
    Python, gives the same records and refusals."""
    messages = ("got 2", "t is required", "t must not be NaN", "t must be finite")
    _same_in_both_modes(TIMED_MONITOR_SCRIPT, messages, lines=150)


LOCKED_SCRIPT = textwrap.dedent(
    """
    import threading
    import numpy as np
    import streameval as se

    class Odd:
        def __init__(self):
            self.seen = []

        def get(self):
            return list(self.seen)

        def many(self, *args, **kwargs):
            self.seen.append((args, sorted(kwargs.items())))
            return len(args) + len(kwargs)

        def fails(self, x):
            raise ValueError(f"no {x}")

        def unlocks(self, lock, fail):  # the lock released in the call: the release after it fails
            lock.release()
            if fail:
                raise KeyError("inner")

    def free(locked):  # whether another thread can take the lock: released after every call
        got = []

        def take():
            got.append(locked._lock.acquire(timeout=5))
            if got[0]:
                locked._lock.release()

        thread = threading.Thread(target=take)
        thread.start()
        thread.join()
        return got[0]

    odd = se.Locked(Odd())
    for n in (0, 1, 7, 8, 9, 30):
        print(n, odd.many(*range(n)), odd.many(*range(n), **{f"k{i}": i for i in range(n % 5)}), free(odd))
    for call in (lambda: odd.fails(3), lambda: odd.fails(), lambda: odd.fails(1, x=2), lambda: odd.nothing(1)):
        try:
            call()
        except (TypeError, ValueError, AttributeError) as exc:
            print(type(exc).__name__, exc, free(odd))
    for fail in (False, True):
        try:
            odd.unlocks(odd._lock, fail)
        except RuntimeError as exc:
            print(type(exc).__name__, exc, repr(exc.__context__), free(odd))
    print(odd.get()[-3:], odd.many.__name__, odd.fails.__doc__, odd.many is odd.many)

    rng = np.random.default_rng(3)
    acc = se.Locked(se.BinaryAccumulator())
    plain = se.BinaryAccumulator()
    for i in range(2000):
        y, s = bool(rng.random() < 0.4), float(rng.random())
        for target in (acc, plain):
            try:
                if i % 97 == 0:
                    target.update(2, s)
                elif i % 89 == 0:
                    target.update(y, s, w=2.5)
                elif i % 83 == 0:
                    target.update(y, score=s)
                else:
                    target.update(y, s)
            except (TypeError, ValueError) as exc:
                print(i, type(exc).__name__, exc)
    print(acc.inner == plain, acc.get().n, free(acc))
    """
)


@needs_compiled
def test_locked_methods_equal_their_python_twin():
    """Locked's compiled method wrapper: the same results, refusals and lock releases as the Python closure, with
    no argument up to many, keywords, a method missing, and a release that fails after the call."""
    messages = ("ValueError no 3", "missing 1 required positional argument", "has no attribute 'nothing'",
                "RuntimeError cannot release un-acquired lock KeyError('inner') True",
                "9 9 13 True", "y must be 1 (positive) or 0 (negative), got 2", "\nTrue ")  # fmt: skip
    _same_in_both_modes(LOCKED_SCRIPT, messages, lines=20)


PAIRED_SCRIPT = textwrap.dedent(
    """
    import pickle
    import numpy as np
    import streameval as se

    rng = np.random.default_rng(5)
    odd_scores = [0.5, np.float64(0.5), 1, 0, 2**53 + 5, 10**400, True, float("nan"), "0.7", None, np.float32(0.9)]
    odd_labels = [1, 0, True, False, 2, "1", 1.0, None, np.int64(1)]

    def score():
        return float(rng.random()) if rng.random() < 0.8 else odd_scores[int(rng.integers(len(odd_scores)))]

    def label(plain):
        return int(rng.random() < 0.4) if rng.random() < 0.85 else odd_labels[int(rng.integers(len(odd_labels)))]

    for number, make in enumerate([
        lambda: se.PairedAccumulator(threshold=0.5),
        lambda: se.PairedAccumulator(threshold=float(2**53 + 4)),
        lambda: se.PairedAccumulator(),
        lambda: se.PairedAccumulator(pos_label="yes", neg_label="no"),
    ]):
        acc = make()
        for i in range(3000):
            if number == 3:
                y, a, b = ("yes" if rng.random() < 0.5 else "no" for _ in range(3))
                if i % 13 == 0:
                    b = "maybe"
            elif number == 2:
                y, a, b = label(True), label(True), label(True)
            else:
                y, a, b = label(True), score(), score()
            try:
                if i % 211 == 0:
                    acc.update(y, a, b, w=2.0 if i % 422 else 1)
                elif i % 173 == 0:
                    acc.update(y, a, b, [1.0, 1, True, 0.5, -1.0][i % 5])
                elif i % 157 == 0:
                    (acc if i % 314 else make()).revert(y, a, b)  # into a new one: never counted
                elif i % 401 == 0:
                    acc.update_many([y], [a], [b])
                elif i % 503 == 0:
                    acc = pickle.loads(pickle.dumps(acc))
                elif i % 607 == 0:
                    acc = acc.copy() + make()
                elif i % 1009 == 0:
                    acc = type(acc).from_state(acc.to_state())
                else:
                    acc.update(y, a, b)
            except (TypeError, ValueError, OverflowError) as exc:
                print(number, i, type(exc).__name__, exc)
            if i % 250 == 0:
                print(number, i, acc.get().counts.reshape(-1).tolist())
        print(number, acc.get().counts.reshape(-1).tolist(), acc.to_state()["weighted"])
    """
)


@needs_compiled
def test_paired_cell_tally_equals_its_python_twin():
    messages = ("must not be NaN", "got 2", "'maybe'", "not added", "pred_a")
    _same_in_both_modes(PAIRED_SCRIPT, messages, lines=60)


class _Score(float):
    """A float subclass: neither path reads it as a plain score."""


@needs_compiled
@pytest.mark.parametrize("fixed", [True, False])
def test_dict_rows_read_the_matrix_the_numpy_path_reads(fixed):
    from streameval import multiclass

    good = [{"a": 0.25, "b": 0.5, "c": 0.25}, {"c": 0.1, "a": np.float64(0.7), "b": 0.2}]
    odd_values = [1, True, np.float32(0.5), float("nan"), "0.5", None, _Score(0.5), np.int64(1), -0.0, np.inf]
    cases = [good, good * 3, (good[0], good[1]), [], [{"a": 0.1, "b": 0.9}], [{"a": 0.1, "b": 0.8, "d": 0.1}]]
    cases += [
        [*good, {"a": 0.2, "b": 0.3, "c": 0.5, "d": 0.0}],
        [*good, [0.2, 0.3, 0.5]],
        [*good, _OrderedDict(good[0])],
    ]
    cases += [[*good, {**good[0], "b": v}] for v in odd_values]
    compared = 0
    for rows in cases:
        acc = se.MulticlassAccumulator(classes=["a", "b", "c"] if fixed else None)
        new = [] if fixed else ["a"]
        compiled = acc._plain_rows(rows, list(new))
        with mock.patch.object(multiclass, "SPEEDUPS", None):
            plain = acc._plain_rows(rows, list(new))
        assert (compiled is None) == (plain is None), rows
        if compiled is not None:
            compared += 1
            assert compiled[1] == plain[1]
            assert compiled[0].dtype == plain[0].dtype and compiled[0].shape == plain[0].shape
            assert compiled[0].tobytes() == plain[0].tobytes(), rows
    assert compared >= 6


def test_dict_rows_refuses_an_out_of_another_size():
    if not _events.COMPILED:
        pytest.skip("the compiled paths are not in use")
    from streameval._compiled import SPEEDUPS

    with pytest.raises(ValueError, match="len\\(rows\\) x len\\(order\\)"):
        SPEEDUPS.dict_rows([{"a": 0.5}], ["a"], np.float64, np.empty(2))


@needs_compiled
def test_core_tests_pass_on_the_python_twins():
    env = dict(os.environ, STREAMEVAL_PURE_PYTHON="1")
    files = ["tests/test_fast_paths.py", "tests/test_bad_input.py", "tests/test_properties.py"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@needs_compiled
def test_a_pickle_from_the_compiled_path_loads_on_the_python_twins(tmp_path):
    import pickle

    acc = se.BinaryAccumulator(threshold=0.377)
    y, s = _scores(8, 2_000)
    for yi, si in zip(y[:5000].tolist(), s[:5000].tolist(), strict=True):
        acc.update(yi, si)  # some events still in the per-event buffer
    (tmp_path / "acc.pkl").write_bytes(pickle.dumps(acc))
    code = textwrap.dedent(
        f"""
        import pickle, sys
        import streameval as se
        assert not se.COMPILED
        acc = pickle.loads(open({str(tmp_path / "acc.pkl")!r}, "rb").read())
        acc.update(1, 0.25)
        sys.stdout.write(acc.to_bytes().hex())
        """
    )
    acc.update(1, 0.25)
    assert _run(code, pure=True) == acc.to_bytes().hex()


def _weighted_buffer(base):
    """An empty per-event buffer of the compiled or the Python kind (labels 1 and 0), its filings not needed."""

    class Buffer(base):
        def _flush(self):
            raise AssertionError("not filed here")

        def _update_slow(self, y, score, w=1.0):
            raise AssertionError("not called here")

    buffer = Buffer()
    buffer._set_labels(1, 0)
    return buffer


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0, 1, 1, 2, -1]),
            st.sampled_from([0.25, 0.5, 0.9, math.nan, -3.0]),
            st.sampled_from([1.0, 1.0, 2.0, 0.5, 0.0, -1.0, math.nan, math.inf, 1e308]),
        ),
        max_size=12,
    ),
    st.sampled_from(["bool", "int8", "uint16", "int32", "int64"]),
    st.sampled_from([0, 5, 4090]),
    st.sampled_from([0.0, 1e308]),
)
@example([(1, 0.5, 1e308)], "int64", 4090, 1e308)  # fits in number, not beside the total weight held
@example([(1, 0.5, 2.0)] * 7, "bool", 4090, 0.0)  # fits beside the total weight, not in number
def test_small_weighted_batches_are_checked_and_stored_alike_on_both_buffers(events, dtype, held, held_weight):
    """A small weighted batch checked by the buffer itself: stored whole, refused (a label other than 0 and 1,
    a NaN score, a bad weight, a sum past the largest float), not fitting beside the events held (their number
    or their total weight), or every weight 1; the compiled buffer and its Python twin answer and hold alike."""
    labels = np.array([e[0] for e in events], dtype=np.int64)
    if dtype == "bool":
        assume(((labels >= 0) & (labels <= 1)).all())  # a bool array holds only 0 and 1
        labels = labels.astype(bool)
    else:
        labels = labels.astype(dtype)
    scores = np.array([e[1] for e in events], dtype=np.float64)
    weights = np.array([e[2] for e in events], dtype=np.float64)
    answers, held_events = [], []
    for base in (_events.EventBuffer, _events.PyEventBuffer):
        buffer = _weighted_buffer(base)
        for i in range(held):  # events held before the batch: a number and a total weight it must fit beside
            buffer._push_weighted(i % 2 == 0, 0.5, held_weight if i == 0 else 1.0)
        answers.append(buffer._push_weighted_many(labels, labels.dtype.itemsize, scores, weights))
        held_events.append((buffer._n_weighted, buffer._weighted_total, buffer._weighted_events()))
    assert answers[0] == answers[1]
    assert held_events[0] == held_events[1]
    bad = (labels.astype(np.int64) < 0).any() or (labels.astype(np.int64) > 1).any() or np.isnan(scores).any()
    bad_weight = not ((weights >= 0) & (weights < math.inf)).all()
    with np.errstate(over="ignore"):
        total = float(np.cumsum(weights)[-1]) if weights.size else 0.0
    expected = (
        0 if bad_weight
        else 3 if (weights == 1.0).all()
        else 0 if bad or not math.isfinite(total)
        else 2 if held + weights.size > 4096 or not math.isfinite((held_weight + held - 1 if held else 0.0) + total)
        else 1
    )  # fmt: skip
    assert answers[0] == expected
    assert held_events[0][0] == held + (weights.size if expected == 1 else 0)


def test_the_update_example_runs_on_both_paths():
    import doctest

    for update in {_events.EventBuffer.update, _events.PyEventBuffer.update}:
        test = doctest.DocTestParser().get_doctest(update.__doc__, {}, "update", None, 0)
        runner = doctest.DocTestRunner()
        runner.run(test)
        assert (runner.failures, runner.tries) == (0, 5), update.__doc__


# -- the exact regime: the compiled table against numpy's sorted arrays ------------------
def _exactly(make, feed, plain):
    acc = make()
    if plain:
        saved, histogram.exact_kernel = histogram.exact_kernel, lambda: False
        try:
            feed(acc)
        finally:
            histogram.exact_kernel = saved
    else:
        feed(acc)
    return acc


@needs_compiled
@pytest.mark.parametrize("budget", [1, 37, 500, 8192, None])
@pytest.mark.parametrize("distinct", [3, 400, 2000])
def test_exact_table_equals_the_sorted_arrays(budget, distinct):
    rng = np.random.default_rng(distinct)
    n = 6000
    s = rng.choice(np.concatenate([SPECIAL, rng.normal(0, 2, distinct)])[: max(distinct, 3)], n)
    y = rng.random(n) < 0.4

    def feed(acc):
        acc.update_many(y[:1000], s[:1000])
        for i in range(1000, 1500):
            acc.update(bool(y[i]), float(s[i]))
        acc.update_many(y[1500:].astype(np.int8), s[1500:])
        acc.update_many(np.ones(10, dtype=bool), s[:10])  # one label for a batch
        acc.get()

    def make():
        return se.BinaryAccumulator(threshold=0.3, exact_up_to=budget)

    compiled, plain = _exactly(make, feed, False), _exactly(make, feed, True)
    assert compiled == plain
    assert compiled.to_bytes() == plain.to_bytes()
    assert compiled.get().is_exact == (budget is None or np.unique(s + 0.0).size <= budget)
    assert compiled.get().to_dict() == pytest.approx(plain.get().to_dict(), nan_ok=True, abs=0, rel=0)


@needs_compiled
@pytest.mark.parametrize("bad", ["nan", "label"])
@pytest.mark.parametrize("at", [0, 1, 4999])
def test_exact_table_refuses_and_changes_nothing(bad, at):
    rng = np.random.default_rng(3)
    s = np.round(rng.random(5000), 2)
    y = (rng.random(5000) < 0.5).astype(np.int16)
    if bad == "nan":
        s[at] = np.nan
    else:
        y[at] = 2
    messages = []
    for plain in (False, True):
        acc = se.BinaryAccumulator()
        acc.update_many(y[:100] % 2, np.round(rng.random(100), 3))
        before = acc.to_bytes()

        def feed(a):
            with pytest.raises(ValueError) as info:
                a.update_many(y, s)
            messages.append(str(info.value))

        _exactly(lambda acc=acc: acc, feed, plain)
        assert acc.to_bytes() == before and acc.get().is_exact
    assert messages[0] == messages[1]


@needs_compiled
def test_exact_table_grows_and_keeps_the_budget():
    rng = np.random.default_rng(4)
    s = rng.permutation(10_000) / 10_000
    y = rng.random(s.size) < 0.5
    acc = se.BinaryAccumulator(exact_up_to=8192)
    acc.update_many(y[:8192], s[:8192])
    assert acc.get().is_exact and acc.get().edges.size == 8192 and acc.nbytes <= 256 * 1024
    acc.update_many(y[8192:8193], s[8192:8193])  # the 8,193rd distinct score: bins from now on
    binned = se.BinaryAccumulator(exact_up_to=0)
    binned.update_many(y[:8193], s[:8193])
    assert not acc.get().is_exact
    assert acc.get().edges.tolist() == binned.get().edges.tolist()
    assert acc.get().pos.tolist() == binned.get().pos.tolist()


def _multiclass_both_ways(classes, y, scores):
    """The same batch counted by the compiled passes (blocks of rows) and by numpy's (column by column)."""
    from streameval import multiclass

    compiled = se.MulticlassAccumulator(classes=classes)
    compiled.update_many(y, scores)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(multiclass, "SPEEDUPS", None)
        plain = se.MulticlassAccumulator(classes=classes)
        plain.update_many(y, scores)
    return compiled, plain


@needs_compiled
@pytest.mark.parametrize("regime", ["exact", "binned"])
def test_multiclass_blocks_of_rows_equal_counting_each_column(regime):
    """Three blocks of 2^16 rows: the exact tables fill across blocks (or turn into bins inside one)."""
    rng = np.random.default_rng(5)
    n, k = 150_000, 5
    scores = rng.random((n, k))
    if regime == "exact":
        scores = np.round(scores, 3)
    y = rng.integers(0, k, n)
    compiled, plain = _multiclass_both_ways(list(range(k)), y, scores)
    assert compiled == plain
    assert compiled.get().per_class[2].is_exact == (regime == "exact")
    np.testing.assert_array_equal(compiled.get().confusion_matrix, plain.get().confusion_matrix)


_TIED = st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0, np.inf, -np.inf])


@needs_compiled
@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(_TIED, min_size=3, max_size=3), min_size=1, max_size=40),
    st.sampled_from([["a", "b", "c"], ["c", "a", "b"], [2, 0, 1]]),
)
def test_predicted_class_of_tied_scores_equals_numpys(rows, classes):
    """Ties (zeros of either sign, infinities) go to the class first in the fixed label order on both paths."""
    scores = np.array(rows, dtype=np.float64)
    y = [classes[i % 3] for i in range(len(rows))]
    compiled, plain = _multiclass_both_ways(classes, y, scores)
    np.testing.assert_array_equal(compiled.get().confusion_matrix, plain.get().confusion_matrix)
    assert compiled == plain


@needs_compiled
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([13, 127, 128, 137]), st.integers(1, 40))
def test_predicted_class_of_tied_scores_in_long_rows_equals_numpys(seed, k, n):
    """Rows of 128 columns or more are scanned on vectors: ties still go to the class first in label order."""
    rng = np.random.default_rng(seed)
    tied = np.array([0.0, -0.0, 0.25, 0.5, 1.0, np.inf, -np.inf])
    scores = tied[rng.integers(0, tied.size, (n, k))]
    classes = [f"c{j:03d}" for j in rng.permutation(k)]
    y = [classes[i % k] for i in range(n)]
    compiled, plain = _multiclass_both_ways(classes, y, scores)
    np.testing.assert_array_equal(compiled.get().confusion_matrix, plain.get().confusion_matrix)
    assert compiled == plain


@needs_compiled
def test_multiclass_groups_of_classes_over_two_blocks_of_rows_equal_counting_each_column():
    """Past 128 classes, a block takes up to 2^16 rows of 64 classes: 66,000 rows make two blocks of three groups."""
    rng = np.random.default_rng(6)
    n, k = 66_000, 130
    scores = np.round(rng.random((n, k)), 2)  # exact: each class's table fills across the two blocks
    y = rng.integers(0, k, n)
    compiled, plain = _multiclass_both_ways([str(c) for c in range(k)], [str(c) for c in y], scores)
    assert compiled == plain
    assert compiled.get().per_class[129].is_exact


@needs_compiled
def test_score_columns_and_row_argmax_refuse_inconsistent_arguments():
    from streameval._compiled import SPEEDUPS

    scores = np.arange(12, dtype=np.float64)
    out = np.empty(12)
    for args in [(scores, 0, 0, 3, 0, 1, out, 3), (scores, 4, 0, 4, 0, 4, out, 3), (scores, 4, 2, 1, 0, 4, out, 3),
                 (scores, 4, 0, 3, 0, 4, out, 2), (scores, 4, 0, 3, 0, 4, np.empty(5), 3),
                 (scores, 4, 0, 3, 2, 2, out, 3), (scores, 4, 0, 3, 1, 5, out, 3)]:  # fmt: skip
        with pytest.raises(ValueError, match="score_columns"):
            SPEEDUPS.score_columns(*args)
    SPEEDUPS.score_columns(scores, 4, 1, 3, 0, 4, out, 3)
    np.testing.assert_array_equal(out[[0, 1, 3, 4, 6, 7, 9, 10]], [4, 8, 5, 9, 6, 10, 7, 11])
    SPEEDUPS.score_columns(scores, 4, 0, 3, 1, 3, out, 4)  # columns 1 and 2 of rows 0 to 2
    np.testing.assert_array_equal(out[[0, 1, 2, 4, 5, 6]], [1, 5, 9, 2, 6, 10])
    best = np.empty(3, dtype=np.int64)
    for order in [np.array([0, 1, 2]), np.array([0, 1, 2, 4]), np.array([-1, 1, 2, 3]), np.array([0, 1, 1, 3])]:
        with pytest.raises(ValueError, match="row_argmax"):
            SPEEDUPS.row_argmax(scores, order, best)
    SPEEDUPS.row_argmax(scores[::-1].copy(), np.array([3, 2, 1, 0]), best)
    np.testing.assert_array_equal(best, [0, 0, 0])


@needs_compiled
def test_segment_grouping_refuses_inconsistent_arguments_and_groups_in_order():
    from streameval._compiled import SPEEDUPS

    codes = np.array([2, 0, 2, 1, 0], dtype=np.int32)
    counts = np.array([2, 1, 2], dtype=np.int64)
    x = np.arange(5, dtype=np.float64)
    flags = np.array([1, 0, 1, 1, 0], dtype=np.bool_)
    out_x, out_flags = np.empty(5), np.empty(5, dtype=np.bool_)
    SPEEDUPS.group_by_code(codes, counts, (x, flags), (out_x, out_flags))
    assert out_x.tolist() == [1.0, 4.0, 3.0, 0.0, 2.0] and out_flags.tolist() == [False, False, True, True, True]
    out_x[:], out_flags[:] = 0, False  # the other order of the two columns, and columns of other widths
    SPEEDUPS.group_by_code(codes, counts, (flags, x), (out_flags, out_x))
    assert out_x.tolist() == [1.0, 4.0, 3.0, 0.0, 2.0] and out_flags.tolist() == [False, False, True, True, True]
    wide, narrow = np.arange(10, 15, dtype=np.int32), np.arange(20, 25, dtype=np.int16)
    out_wide, out_narrow = np.empty_like(wide), np.empty_like(narrow)
    SPEEDUPS.group_by_code(codes, counts, (wide, x, narrow), (out_wide, out_x, out_narrow))
    assert out_wide.tolist() == [11, 14, 13, 10, 12] and out_narrow.tolist() == [21, 24, 23, 20, 22]
    bad = [
        (codes, counts[:2], (x,), (out_x,)),  # a code past the groups
        (codes, np.array([1, 2, 2]), (x,), (out_x,)),  # more events of a code than its count
        (codes, np.array([2, 1, 3]), (x,), (out_x,)),  # counts past the batch
        (codes, np.array([3, -1, 3]), (x,), (out_x,)),  # a negative count
        (codes, counts, (x,), (np.empty(4),)),
        (codes, counts, (x[:4],), (out_x[:4],)),
        (codes, counts, (x,), ()),
        (codes, counts, (x,) * 17, (out_x,) * 17),
    ]
    for args in bad:
        with pytest.raises(ValueError, match="group_by_code"):
            SPEEDUPS.group_by_code(*args)
    found = np.empty(5, dtype=np.int32)
    distinct, tally = SPEEDUPS.small_codes(np.array([7, -2, 7, 3, 7]), 8, found)
    assert np.frombuffer(distinct, np.int64).tolist() == [7, -2, 3]
    assert np.frombuffer(tally, np.int64).tolist() == [3, 1, 1] and found.tolist() == [0, 1, 0, 2, 0]
    distinct, tally = SPEEDUPS.small_codes(np.array([-5, 100, -5], dtype=np.int8), 1, found[:3])
    assert np.frombuffer(distinct, np.int64).tolist() == [-5, 100] and found[:3].tolist() == [0, 1, 0]
    assert SPEEDUPS.small_codes(np.array([0, 2**20]), 8, np.empty(2, dtype=np.int32)) is None
    with pytest.raises(ValueError, match="small_codes"):
        SPEEDUPS.small_codes(np.array([1, 2]), 8, np.empty(3, dtype=np.int32))


def _both_ways(module, call):
    """``call()`` with ``module``'s compiled kernels, then with its numpy twins."""
    compiled = call()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "SPEEDUPS", None)
        plain = call()
    return compiled, plain


def _hull_both_ways(x, y):
    from streameval import curves

    return _both_ways(curves, lambda: curves._lower_hull(x, y))


@needs_compiled
@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 300), st.sampled_from(["noisy", "collinear", "coarse"]))
def test_lower_hull_equals_the_numpy_passes(seed, n, shape):
    """Noisy ROC points, long straight runs (every cross product near 0) and ties on a coarse grid."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.random(n))
    if shape == "noisy":
        y = 1 - x + rng.normal(0, 0.05, n)
    elif shape == "collinear":
        y = 0.3 - 0.7 * x
    else:
        x, y = np.round(x, 1), np.round(rng.random(n), 1)
    compiled, plain = _hull_both_ways(x, y)
    np.testing.assert_array_equal(compiled, plain)


@needs_compiled
def test_lower_hull_after_64_passes_takes_the_monotone_chain_on_both_paths():
    """A convex chain ending far below: each pass drops only the point next to the end, so 64 passes do not
    settle it and both paths finish with the monotone chain (whose hull is the two ends)."""
    x = np.arange(300, dtype=np.float64)
    y = -np.sqrt(x)
    y[-1] -= 1000.0
    compiled, plain = _hull_both_ways(x, y)
    np.testing.assert_array_equal(compiled, plain)
    assert compiled.tolist() == [0, 299]
    from streameval._compiled import SPEEDUPS

    with pytest.raises(ValueError, match="lower_hull"):
        SPEEDUPS.lower_hull(x, y[:-1], np.empty(x.size, dtype=np.int64))


def _histogram_both_ways(counts, bins, key):
    """``LabelledCounts.histogram_split`` with the compiled gather and with the numpy twin."""
    from streameval import state

    return _both_ways(state, lambda: counts.histogram_split(bins, key))


@pytest.fixture(params=[True, False], ids=["compress", "plain-loop"])
def compaction(request):
    """The gather's compaction on AVX-512's compress, then on the plain loop (where the processor lacks
    AVX-512F, the first is skipped: both would run the plain loop)."""
    from streameval._compiled import SPEEDUPS

    if SPEEDUPS is None:
        pytest.skip("the compiled module is not built")
    before = SPEEDUPS.compress_paths(None)
    if SPEEDUPS.compress_paths(request.param) != request.param:
        SPEEDUPS.compress_paths(before)
        pytest.skip("this processor has no AVX-512F: the compaction runs the plain loop only")
    yield request.param
    SPEEDUPS.compress_paths(before)


@needs_compiled
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from(["range-free", "coarse", "uniform"]),
    st.booleans(),
    st.sampled_from(["low", "middle", "high"]),
)
def test_gather_bins_equals_the_numpy_gathers(compaction, seed, scheme, weighted, where):
    """Keys, counts and the split at a key as the report reads them: from states with pages of empty codes,
    codes sharing a (bin, label) (a coarse scheme), weights summed in storage order, and taken-out counts;
    compacted by AVX-512's compress and by the plain loop."""
    from streameval.bins import RangeFreeBins, UniformBins

    rng = np.random.default_rng(seed)
    make = {
        "range-free": lambda: se.BinaryAccumulator(exact_up_to=0),
        "coarse": lambda: se.BinaryAccumulator(bins=RangeFreeBins(mantissa_bits=1), exact_up_to=0),
        "uniform": lambda: se.BinaryAccumulator(bins=UniformBins(0.0, 1.0, 50), exact_up_to=0),
    }[scheme]
    acc, gone = make(), make()
    n = int(rng.integers(1, 3000))
    y, s = rng.random(n) < 0.4, np.exp(rng.normal(0, 3, n)) if scheme != "uniform" else rng.random(n)
    w = rng.random(n) if weighted else None
    acc.update_many(y, s, w)
    gone.update_many(y[: n // 3], s[: n // 3], None if w is None else w[: n // 3])
    acc -= gone  # zeros where every event left
    counts = acc._hist.binned()._counts
    keys = acc._hist.histogram()[0]
    key = {"low": -1, "middle": int(keys[keys.size // 2]) if keys.size else 0, "high": 2**62}[where]
    compiled, plain = _histogram_both_ways(counts, acc.bins, key)
    for a, b in zip(compiled[:3], plain[:3], strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert compiled[3] == plain[3]
    start, neg_below, pos_below, neg_above, pos_above = compiled[3]
    assert start == int(np.searchsorted(plain[0], key, side="right"))
    np.testing.assert_allclose([neg_below + neg_above, pos_below + pos_above], [plain[1].sum(), plain[2].sum()])
    if not weighted:  # whole counts come back as Python ints, summed exactly
        assert all(type(v) is int for v in compiled[3])


@needs_compiled
@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 3000), st.integers(1, 2**40))
def test_layout_cells_equal_the_ranks_of_the_keys(seed, n, spread):
    """Each slot's cell is its key's rank among the distinct keys, times 2, plus its label: for negative keys
    too, and for (key, label) pairs held by many slots."""
    from streameval._compiled import SPEEDUPS

    rng = np.random.default_rng(seed)
    target = rng.integers(-spread, spread, n) * rng.integers(1, 3, n)  # repeats and gaps
    order = np.argsort(target, kind="stable")
    cells, keys = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int64)
    m = SPEEDUPS.layout_cells(target, order, cells, keys)
    distinct = np.unique(target >> 1)
    np.testing.assert_array_equal(keys[:m], distinct)
    np.testing.assert_array_equal(cells, np.searchsorted(distinct, target >> 1) * 2 + (target & 1))


@needs_compiled
def test_layout_cells_refuses_an_order_that_is_not_each_slot_once_ascending():
    from streameval._compiled import SPEEDUPS

    target = np.array([5, 2, 9, 2], dtype=np.int64)
    cells, keys = np.empty(4, dtype=np.int32), np.empty(4, dtype=np.int64)
    assert SPEEDUPS.layout_cells(target, np.array([1, 3, 0, 2]), cells, keys) == 3
    assert cells.tolist() == [3, 0, 5, 0] and keys[:3].tolist() == [1, 2, 4]
    for order in ([1, 1, 0, 2], [1, 3, 2, 0], [1, 3, 0, 4], [-1, 3, 0, 2]):
        with pytest.raises(ValueError, match="layout_cells"):
            SPEEDUPS.layout_cells(target, np.array(order), cells, keys)
    with pytest.raises(ValueError, match="layout_cells"):
        SPEEDUPS.layout_cells(target, np.array([1, 3, 0]), cells, keys)


def _run_order_applies(target: np.ndarray, page: int) -> bool:
    """Whether the rows of ``target`` are strict runs of distinct targets, at most two of them overlapping at a time
    (the case ``run_order`` takes), worked out apart from the kernel."""
    runs = target.reshape(-1, page)
    steps = np.diff(runs, axis=1)
    if not ((steps > 0).all(axis=1) | (steps < 0).all(axis=1)).all() or np.unique(target).size != target.size:
        return False
    group, reach = 0, None
    for lo, hi in sorted(zip(runs.min(axis=1).tolist(), runs.max(axis=1).tolist(), strict=True)):
        group = group + 1 if reach is not None and lo <= reach else 1
        reach = hi if group == 1 else max(reach, hi)
        if group > 2:
            return False
    return True


def _check_run_order(target: np.ndarray, page: int) -> bool:
    from streameval._compiled import SPEEDUPS

    order = np.empty(target.size, dtype=np.int64)
    applied = SPEEDUPS.run_order(target, page, order)
    assert applied == _run_order_applies(target, page)
    if applied:
        np.testing.assert_array_equal(order, np.argsort(target, kind="stable"))
    return applied


@needs_compiled
@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 5000),
    scale=st.sampled_from([1e-6, 1.0, 1e3]),
    shift=st.sampled_from([0.0, -0.5, -1.0]),
    mantissa_bits=st.sampled_from([3, 7, 12]),
)
def test_run_order_of_a_range_free_table_is_numpys_argsort(seed, n, scale, shift, mantissa_bits):
    """A range-free table's rows are monotone runs (descending for negative scores) whose two labels interleave:
    the runs merged give the stable argsort's order, for scores of one sign or both. With 3 mantissa bits some
    pages' unused slots share targets with others', and the kernel leaves those tables to argsort."""
    from streameval.state import PAGE, LabelledCounts

    bins = se.Bins.range_free(mantissa_bits=mantissa_bits)
    rng = np.random.default_rng(seed)
    x = (rng.random(n) + shift) * scale
    counts = LabelledCounts(2 * bins.n_codes)
    counts.flat_index(bins.labelled_codes(x, rng.random(n) < 0.4))  # gives the codes' pages their rows
    applied = _check_run_order(counts._slot_targets(bins), PAGE)
    assert applied or mantissa_bits == 3


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    rows=st.integers(1, 12),
    page=st.sampled_from([2, 3, 8]),
    spread=st.sampled_from([4, 40, 4000]),
    kind=st.sampled_from(["any", "ranges", "pairs"]),
)
def test_run_order_gives_argsorts_order_or_declines(seed, rows, page, spread, kind):
    """Rows of any targets: monotone or not, overlapping by two, three or none, sharing targets or not; rows
    of ranges of bins as a table has them (one or both labels of each range); pairs of runs that overlap
    without alternating (the merge). Where the kernel gives an order it is the stable argsort's; it declines
    where a row is not a strict run, three runs overlap in a chain or two slots share a target."""
    rng = np.random.default_rng(seed)
    if kind == "any":
        runs = np.sort(rng.choice(spread, (rows, page)), axis=1)  # ascending, maybe with repeats
        if rng.random() < 0.3:
            runs[rng.integers(rows), :] = rng.integers(0, spread, page)  # a row that may not be a run at all
    elif kind == "ranges":  # range r holds keys r * page ... (r + 1) * page - 1: its rows' targets 2 key + label
        starts = rng.choice(rows * 3, rows, replace=False) * page
        labels = ([0], [1], [0, 1])
        runs = np.array([2 * (start + np.arange(page)) + lab for start in starts for lab in labels[rng.integers(3)]])
    else:  # runs of distinct values in pairs that overlap, each pair apart from the others
        size = max(spread, 2) * page  # each pair draws 2 * page distinct values of its own span
        values = np.array([rng.choice(size, 2 * page, replace=False) + r * size for r in range(rows)])
        runs = np.sort(values.reshape(2 * rows, page), axis=1)
    runs = np.where(rng.random((runs.shape[0], 1)) < 0.5, runs, runs[:, ::-1])
    _check_run_order(runs.reshape(-1).astype(np.int64), page)


@needs_compiled
def test_run_order_refuses_inconsistent_arguments():
    from streameval._compiled import SPEEDUPS

    target = np.array([4, 2, 1, 3], dtype=np.int64)
    order = np.empty(4, dtype=np.int64)
    assert SPEEDUPS.run_order(target, 2, order) and order.tolist() == [2, 1, 3, 0]
    for args in ((target, 3, order), (target, 1, order), (target, 2, np.empty(3, dtype=np.int64)),
                 (target[:3], 2, order[:3])):  # fmt: skip
        with pytest.raises(ValueError, match="run_order"):
            SPEEDUPS.run_order(*args)


@needs_compiled
def test_gather_bins_refuses_cells_outside_its_bins():
    """Two rows of 128 slots, one label each, read slot by slot (rows -1) or as blocks: the same bins; a cell, or
    a block's first or last cell, outside the bins refuses them, as do rows not of 128 slots."""
    from streameval._compiled import SPEEDUPS

    counts, keys = np.arange(256, dtype=np.int64), np.arange(128, dtype=np.int64)
    cells = np.concatenate([2 * np.arange(128), 2 * np.arange(128)[::-1] + 1]).astype(np.int32)
    outs = [np.empty(128, dtype=np.int64) for _ in range(3)] + [np.empty(5, dtype=np.int64)]
    for rows in ([-1, -1], [0, 2 * 255 + 1], [-1, 2 * 255 + 1]):  # the second row runs down from cell 255
        assert SPEEDUPS.gather_bins(counts, False, cells, np.array(rows), keys, 9, *outs) == 128
        assert outs[1].tolist() == list(range(128)) and outs[2].tolist() == list(range(255, 127, -1))
        below = (sum(range(10)), sum(range(255, 245, -1)))
        assert outs[3].tolist() == [10, *below, sum(range(128)) - below[0], sum(range(128, 256)) - below[1]]
    bad_cells = cells.copy()
    bad_cells[3] = 256
    for bad in (
        (counts, False, bad_cells, np.array([-1, -1]), keys),  # a cell past the bins
        (counts, False, cells, np.array([2 * 2, -1]), keys),  # a block from cell 2 up ends past the bins
        (counts, False, cells, np.array([2 * 200 + 1, -1]), keys),  # a block from cell 200 down starts below 0
        (counts, False, cells, np.array([-1]), keys),  # not one entry a row
        (counts[:255], False, cells[:255], np.array([-1, -1]), keys),  # not whole rows
    ):
        with pytest.raises(ValueError, match="gather_bins"):
            SPEEDUPS.gather_bins(*bad, 0, *outs)


@needs_compiled
@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 400), st.sampled_from([1, 30, 10**6, 10**9]))
def test_whole_auc_sums_give_the_float_dot_products(seed, n, scale):
    """The exact integer sums give the bounds the float path gives, and large counts (positives times
    negatives past 2**53) go to the float path."""
    from streameval import curves

    rng = np.random.default_rng(seed)
    neg = rng.integers(0, scale + 1, n).astype(np.int64) * (rng.random(n) < 0.7)
    pos = rng.integers(0, scale + 1, n).astype(np.int64) * (rng.random(n) < 0.7)
    compiled, plain = _both_ways(curves, lambda: curves.auc_bounds(neg, pos))
    np.testing.assert_array_equal(np.array(compiled), np.array(plain))
    fits = curves._whole_auc_sums(neg, pos) is not None
    assert fits == (int(neg.sum()) * int(pos.sum()) < 2**53)


@needs_compiled
@settings(max_examples=150, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(0, 3000),
    st.sampled_from([1, 1000, 2**40, 2**52]),
    st.sampled_from([None, -1, 2**53, 2**63 - 1]),
    st.integers(0, 2999),
)
@example(0, 2049, 2**53 - 1, None, 0)  # 2,049 counts of 2**53 - 1 wrap past 2**64 to just below 2**53
def test_auc_sums_are_the_exact_sums_or_none(seed, n, scale, odd, where):
    """The kernel's sums, over blocks of 1,024 bins, equal Python's integers when positives times negatives is
    below 2**53 (each total too), and it gives None otherwise: for a negative count, one of 2**53 or more, or
    totals that would wrap past 2**64 in a block."""
    from streameval._compiled import SPEEDUPS

    rng = np.random.default_rng(seed)
    neg = (rng.integers(0, scale, n, endpoint=True) * (rng.random(n) < 0.8)).astype(np.int64)
    pos = (rng.integers(0, scale, n, endpoint=True) * (rng.random(n) < 0.3)).astype(np.int64)
    if scale == 2**53 - 1:  # every negative count the largest that fits, no positives
        neg[:], pos[:] = scale, 0
    if odd is not None and n:
        (neg if where % 2 else pos)[where % n] = odd
    nl, pl = [int(v) for v in neg], [int(v) for v in pos]
    below, lower = 0, 0
    for a, b in zip(nl, pl, strict=True):
        lower, below = lower + b * below, below + a
    totals = (sum(nl), sum(pl))
    fits = min(nl + pl, default=0) >= 0 and max(totals) < 2**53 and totals[0] * totals[1] < 2**53
    expected = (lower, sum(a * b for a, b in zip(nl, pl, strict=True)), sum(pl), sum(nl)) if fits else None
    assert SPEEDUPS.auc_sums(neg, pos) == expected


@needs_compiled
@settings(max_examples=100, deadline=None)
@given(
    st.integers(0, 2**32 - 1), st.integers(1, 600), st.sampled_from([1, 3, 40, 10**6]), st.sampled_from([5, 64, 4096])
)
def test_average_precision_terms_equal_the_numpy_path(seed, k, scale, block):
    """The compiled digamma terms (one division an argument, bins near the top shifted one by one) with numpy's
    log1p between the passes give the numpy path's bounds to the bit, on sparse and dense whole counts, in
    blocks of bins of any size."""
    from streameval import curves

    rng = np.random.default_rng(seed)
    neg = rng.integers(0, scale + 1, k) * (rng.random(k) < 0.8)
    pos = rng.integers(0, scale + 1, k) * (rng.random(k) < 0.8)
    edges = np.sort(rng.random(k))
    with mock.patch.object(curves, "_AP_BLOCK", block):
        compiled, plain = _both_ways(curves, lambda: curves.average_precision_bounds(edges, neg, pos))
    np.testing.assert_array_equal(np.array(compiled), np.array(plain))
    assert plain.lower - 1e-12 <= plain.expected <= plain.upper + 1e-12 or math.isnan(plain.expected)
    pts = curves.operating_points(edges, neg, pos)  # as a report passes them: of the whole counts
    given, plain = _both_ways(curves, lambda: curves.average_precision_bounds(edges, neg, pos, points=pts))
    np.testing.assert_array_equal(np.array(given), np.array(plain))


@needs_compiled
def test_ap_bins_are_the_bins_with_positives_or_none():
    """The compiled inputs of the AP terms: the bins with positives and the points above them, or None for a
    negative count or 2**53 positives (numpy's path then runs), and a refusal of inconsistent lengths."""
    from streameval import curves
    from streameval._compiled import SPEEDUPS

    neg, pos = np.array([3, 0, 2, 5], dtype=np.int64), np.array([1, 0, 0, 4], dtype=np.int64)
    pts = curves.operating_points(np.arange(4.0), neg, pos)  # tp from the top: 0, 4, 4, 4, 5; fp: 0, 5, 7, 7, 10
    rows = np.full((4, 3), -1.0)
    assert SPEEDUPS.ap_bins(neg, pos, pts.tp, pts.fp, rows) == (2, 5)
    assert rows[:, :2].tolist() == [[1.0, 4.0], [3.0, 5.0], [4.0, 0.0], [11.0, 0.0]]
    with pytest.raises(ValueError, match="ap_bins: rows shorter"):
        SPEEDUPS.ap_bins(neg, pos, pts.tp, pts.fp, np.empty((4, 1)))
    for bad_neg, bad_pos in (([3, -1, 2, 5], [1, 0, 0, 4]), ([3, 0, 2, 5], [1, 0, 2**53 - 4, 4])):
        counts = (np.array(bad_neg, dtype=np.int64), np.array(bad_pos, dtype=np.int64))
        assert SPEEDUPS.ap_bins(*counts, pts.tp, pts.fp, rows) is None
    with pytest.raises(ValueError, match="ap_bins"):
        SPEEDUPS.ap_bins(neg, pos, pts.tp[:-1], pts.fp[:-1], rows)
    big = np.array([0, 2**53], dtype=np.int64)  # past the exact floats: numpy's path, the same bounds
    compiled, plain = _both_ways(curves, lambda: curves.average_precision_bounds(np.arange(2.0), big[::-1], big))
    np.testing.assert_array_equal(np.array(compiled), np.array(plain))


@needs_compiled
def test_ap_terms_refuses_arrays_of_other_lengths():
    from streameval._compiled import SPEEDUPS

    with pytest.raises(ValueError, match="ap_terms"):
        SPEEDUPS.ap_terms(np.ones(2), np.ones(2), np.ones(2), np.ones(1), None, np.empty(10), np.empty(4))


@needs_compiled
@pytest.mark.parametrize("mantissa_bits", [1, 3, 7, 12])
def test_range_free_edges_equal_the_numpy_bit_operations(mantissa_bits):
    """Every key of the coarse schemes (a strided sample of the finest) gives the numpy path's lower and upper
    edges to the bit, the top key's upper edge being +inf."""
    from streameval import bins as bins_module
    from streameval.bins import RangeFreeBins

    scheme = RangeFreeBins(mantissa_bits)
    step = 1 if mantissa_bits <= 7 else 97
    keys = np.arange(scheme.key_min, scheme.key_max + 1, step, dtype=np.int64)
    keys = np.union1d(keys, [scheme.key_max - 1, scheme.key_max])
    lower = _both_ways(bins_module, lambda: scheme.lower_edges(keys))
    upper = _both_ways(bins_module, lambda: scheme.upper_edges(keys))
    for compiled, plain in (lower, upper):
        np.testing.assert_array_equal(compiled.view(np.int64), plain.view(np.int64))
    assert upper[0][-1] == np.inf and upper[0][-2] == lower[0][-1]
    from streameval._compiled import SPEEDUPS

    with pytest.raises(ValueError, match="range_free_edges"):
        SPEEDUPS.range_free_edges(keys[:3], mantissa_bits, 2, scheme.key_max, np.empty(3))


@needs_compiled
@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 500), st.booleans())
def test_operating_points_equal_the_numpy_running_sums(seed, k, weighted):
    """Thresholds and running sums from the top, whole counts summed as integers and weights in cumsum's order."""
    from streameval import curves

    rng = np.random.default_rng(seed)
    edges = np.sort(rng.random(k))
    if weighted:
        neg, pos = rng.exponential(1.0, k) * 1e3, rng.exponential(1.0, k) * (rng.random(k) < 0.5)
    else:
        neg, pos = rng.integers(0, 10**6, k), rng.integers(0, 10**6, k) * (rng.random(k) < 0.5)
    compiled, plain = _both_ways(curves, lambda: curves.operating_points(edges, neg, pos))
    for a, b in zip(compiled[:3], plain[:3], strict=True):
        np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64))
    assert (compiled.positives, compiled.negatives) == (plain.positives, plain.negatives)
    with pytest.raises(ValueError, match="operating_points"):
        curves.SPEEDUPS.operating_points(edges, neg, pos, weighted, *(np.empty(k) for _ in range(3)))


@needs_compiled
@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 500), st.booleans())
def test_pr_auc_equals_the_numpy_segments(seed, k, weighted):
    """Davis & Goadrich's area, compiled with numpy's log1p between the passes: the numpy path's to the bit, with
    empty bins, bins of negatives only and weights."""
    from streameval import curves

    rng = np.random.default_rng(seed)
    edges = np.sort(rng.random(k))
    if weighted:
        neg, pos = rng.exponential(1.0, k) * (rng.random(k) < 0.7), rng.exponential(1.0, k) * (rng.random(k) < 0.5)
    else:
        neg, pos = rng.integers(0, 50, k) * (rng.random(k) < 0.7), rng.integers(0, 50, k) * (rng.random(k) < 0.5)
    compiled, plain = _both_ways(curves, lambda: curves.pr_auc(edges, neg, pos))
    assert compiled == plain or (math.isnan(compiled) and math.isnan(plain))
    for n_logs in (1, 5):  # the points have 2 segments past the first prediction: as many logs, no fewer or more
        with pytest.raises(ValueError, match="pr_auc_terms"):
            curves.SPEEDUPS.pr_auc_terms(np.arange(4.0), np.arange(4.0), np.ones(n_logs), np.empty(3))
    assert curves.SPEEDUPS.pr_auc_terms(np.arange(4.0), np.arange(4.0), np.ones(2), np.empty(3)) == 3


def _calibration_counts(rng, size, counts):
    """Negatives and positives of ``size`` groups: whole, both weighted, or weighted negatives ("mixed")."""
    neg, pos = rng.integers(0, 5, size), rng.integers(0, 5, size)
    if counts != "whole":
        neg = neg * rng.random(size)
        if counts == "weights":
            pos = pos * rng.random(size)
    return neg, pos


def _calibration_edges(rng, n_bins, edges):
    """Inner calibration edges: uniform, random ascending, reversed, or random with a NaN."""
    inner = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
    if edges != "uniform":
        inner = np.sort(rng.random(n_bins - 1))
        if edges == "unsorted":
            inner = inner[::-1].copy()
        if edges == "nan" and inner.size:
            inner[int(rng.integers(0, inner.size))] = np.nan
    return inner


def _calibration_cases(fewest_groups, edge_kinds):
    """Examples of the calibration twin tests: a seed, the groups (or scores), the calibration bins, the counts'
    kind (of :func:`_calibration_counts`) and the edges' (of :func:`_calibration_edges`)."""
    return given(
        st.integers(0, 2**32 - 1),
        st.integers(fewest_groups, 400),
        st.integers(1, 40),
        st.sampled_from(["whole", "weights", "mixed"]),
        st.sampled_from(edge_kinds),
    )


@needs_compiled
@settings(max_examples=120, deadline=None)
@_calibration_cases(1, ["uniform", "random", "unsorted"])
def test_calibration_spread_equals_the_numpy_twin(seed, k, n_bins, counts, edges):
    """Binned groups (some of zero width, some past [0, 1] then clipped, some empty) spread over calibration bins:
    the compiled pass gives the twin's bits, for whole counts, weights, and inner edges in any order."""
    from streameval import calibration

    rng = np.random.default_rng(seed)
    points = rng.uniform(-0.2, 1.2, k + 1)
    coarse = rng.random(k + 1) < 0.2  # some on a coarse grid: groups of zero width, groups ending on an edge
    points[coarse] = np.round(points[coarse], 1)
    points = np.sort(points)
    lo, hi = np.clip(points[:-1], 0, 1), np.clip(points[1:], 0, 1)
    neg, pos = _calibration_counts(rng, k, counts)
    given = neg + pos
    inner = _calibration_edges(rng, n_bins, edges)

    def spread():
        return calibration._spread(lo, hi, given, pos, inner)

    compiled, plain = _both_ways(calibration, spread)
    assert [a.tobytes() for a in compiled] == [a.tobytes() for a in plain]


@needs_compiled
@settings(max_examples=120, deadline=None)
@_calibration_cases(0, ["uniform", "random", "unsorted", "nan"])
def test_calibration_of_distinct_scores_equals_the_numpy_twin(seed, k, n_bins, counts, edges):
    """Distinct scores (some on a calibration edge, some outside [0, 1], -0.0) counted into calibration bins: the
    compiled pass gives the bits of searchsorted and bincount, for whole counts, weights, and inner edges in any
    order (or with a NaN: then the twin runs)."""
    from streameval import calibration

    rng = np.random.default_rng(seed)
    inner = _calibration_edges(rng, n_bins, edges)
    values = np.concatenate([rng.uniform(-0.1, 1.1, k), inner[: int(rng.integers(0, inner.size + 1))], [-0.0]])
    values = np.unique(values[~np.isnan(values)])
    neg, pos = _calibration_counts(rng, values.size, counts)
    compiled, plain = _both_ways(calibration, lambda: calibration._exact(values, neg + pos, pos, inner))
    assert [a.tobytes() for a in compiled] == [a.tobytes() for a in plain]
    with pytest.raises(ValueError, match="calibration_exact"):
        calibration.SPEEDUPS.calibration_exact(values, neg + pos, False, pos[:-1], False, inner, np.empty(3))


@needs_compiled
@settings(max_examples=120, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 9000), st.sampled_from(["sorted", "ties", "one_swap", "bad"]))
def test_time_order_equals_the_numpy_twin(seed, n, shape):
    """Finite and ascending event times: across the compiled pass's blocks of 4,096, with ties, one pair out of
    order anywhere (also across a block's edge), and a NaN or an infinity anywhere."""
    from streameval import _numeric

    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(-1e3, 1e3, n))
    if shape == "ties":
        t = np.round(t)
    elif shape == "one_swap" and n > 1:
        i = int(rng.integers(0, n - 1))
        t[i], t[i + 1] = t[i + 1] + 1.0, t[i]
    elif shape == "bad" and n:
        t[int(rng.integers(0, n))] = rng.choice([np.nan, np.inf, -np.inf])
    compiled, plain = _both_ways(_numeric, lambda: _numeric.finite_and_ascending(t))
    assert compiled == plain


@needs_compiled
@settings(max_examples=150, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 600),
    st.sampled_from(["whole", "weights", "mirrored", "one_class"]),
)
def test_equal_error_rates_equal_the_numpy_twins(seed, k, counts):
    """EER, its nearest-point and convex-hull forms: the compiled pass over the points finds the numpy path's
    indices, so the crossings are the same bits, also where FRR meets FAR exactly at a point (mirrored counts),
    with weights, with empty bins, and without one of the classes (nan)."""
    from streameval import curves

    rng = np.random.default_rng(seed)
    edges = np.sort(rng.random(k))
    neg, pos = rng.integers(0, 4, k), rng.integers(0, 4, k)
    if counts == "weights":
        neg, pos = neg * rng.random(k), pos * rng.random(k)
    elif counts == "mirrored":  # negatives of bin i are the positives of bin k - 1 - i: FRR = FAR at the middle
        pos = neg[::-1].copy()
    elif counts == "one_class":
        pos = np.zeros(k, dtype=neg.dtype)

    def crossings():
        return [tuple(f(edges, neg, pos)) for f in (curves.eer, curves.eer_nearest, curves.eer_rocch)]

    compiled, plain = _both_ways(curves, crossings)
    assert np.array(compiled).tobytes() == np.array(plain).tobytes()


@needs_compiled
@pytest.mark.parametrize("weighted", [False, True])
def test_a_large_batch_into_a_new_table_grows_it_in_few_steps_and_gives_back_the_rest(weighted, monkeypatch):
    from streameval import state

    rng = np.random.default_rng(41)
    n = 25_000
    y, s = rng.random(n) < 0.3, rng.normal(0.0, 3.0, n)  # logits: about 100 pages
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    _assert_same(lambda: se.BinaryAccumulator(exact_up_to=0), lambda a: a.update_many(y, s, w))
    resizes: list[int] = []
    resize = state.LabelledCounts._resize
    monkeypatch.setattr(state.LabelledCounts, "_resize", lambda self, rows: (resizes.append(rows), resize(self, rows)))
    acc = se.BinaryAccumulator(exact_up_to=0)
    acc.update_many(y, s, w)
    table = acc._hist._counts
    assert 64 < table._n_stored <= 128
    # a step of a page per 128 of the batch's events still to count (64 pages at most): two stops, then the fit
    assert resizes == [1 + 64, 66 + 64, table._n_stored + 4]
    assert table._page_of_row.size == table._n_stored + 4
    resizes.clear()
    one = se.BinaryAccumulator(exact_up_to=0)
    for yi, si in zip(y[:2_000], s[:2_000], strict=True):  # events one at a time: the usual small steps
        one.update_many([yi], [si])
    rows = one._hist._counts
    assert rows._page_of_row.size <= rows._n_stored + state._growth(rows._n_stored)
    assert len(resizes) > 5 and all(b - a <= 16 for a, b in zip([0, *resizes], resizes, strict=False))


def _spread_scores(rng, n, k):
    """Scores over many orders of magnitude: each class's binned table takes new pages all through a batch."""
    return rng.normal(size=(n, k)) * 10.0 ** rng.uniform(-30, 30, (n, k))


@needs_compiled
@pytest.mark.parametrize("k", [2, 7, 128])
def test_multiclass_binned_classes_counted_in_one_pass_equal_counting_each_column(k, monkeypatch):
    """Up to 128 classes of binned counts are counted in one pass over the matrix; tables short of rows are given
    more and the pass goes on where it stopped (many times here): the counts of numpy's pass per column."""
    from streameval import histogram, state

    rng = np.random.default_rng(k)
    n = 3_000 if k == 128 else 20_000
    scores, y = _spread_scores(rng, n, k), rng.integers(0, k, n)
    passes, grown = [], []
    count = histogram.count_columns
    monkeypatch.setattr(histogram, "count_columns", lambda *a: (passes.append(1), count(*a))[1])
    make_room = state.LabelledCounts._make_room
    monkeypatch.setattr(state.LabelledCounts, "_make_room", lambda t, *a: (grown.append(1), make_room(t, *a))[1])
    compiled = se.MulticlassAccumulator(classes=list(range(k)), exact_up_to=0)
    compiled.update_many(y[: n // 2], scores[: n // 2])
    compiled.update_many(y[n // 2 :], scores[n // 2 :])  # into tables that hold counts
    assert len(passes) == 2 and len(grown) > 2 * k
    monkeypatch.undo()
    with pytest.MonkeyPatch.context() as patch:
        from streameval import multiclass

        patch.setattr(multiclass, "SPEEDUPS", None)
        plain = se.MulticlassAccumulator(classes=list(range(k)), exact_up_to=0)
        plain.update_many(y, scores)
    assert compiled == plain
    assert se.to_bytes(compiled, level=0) == se.to_bytes(plain, level=0)  # the saved state, not compressed


@needs_compiled
@pytest.mark.parametrize("k", [3, 100])
def test_multiclass_one_pass_of_many_scores_a_slot_equals_counting_each_column(k):
    """Eight scores a slot or more (few distinct scores, a large batch) are counted into 32-bit scratch tables
    first, then added to the counts: the counts of numpy's pass per column, the threshold's too."""
    rng = np.random.default_rng(k)
    n = 40_000 if k == 3 else 12_000
    scores = np.round(rng.random((n, k)), 2)
    y = rng.integers(0, k, n)
    compiled = se.MulticlassAccumulator(classes=list(range(k)), exact_up_to=0)
    for part in (slice(0, 10), slice(10, n)):  # the tables' pages first, then the batch of many scores a slot
        compiled.update_many(y[part], scores[part])
    with pytest.MonkeyPatch.context() as patch:
        from streameval import multiclass

        patch.setattr(multiclass, "SPEEDUPS", None)
        plain = se.MulticlassAccumulator(classes=list(range(k)), exact_up_to=0)
        plain.update_many(y, scores)
    assert compiled.to_bytes() == plain.to_bytes()
    report = compiled.get()
    assert report.per_class[1].tp + report.per_class[1].fn == int((y == 1).sum())


@needs_compiled
@pytest.mark.parametrize("k, failing", [(5, "third"), (100, "last")])
def test_multiclass_one_pass_that_fails_to_grow_a_table_takes_back_what_it_counted(k, failing, monkeypatch):
    """A table that cannot be given more rows mid-pass (the third time, or the last, in the second pass over 64
    columns): the error propagates, and every table is as before."""
    from streameval import state

    rng = np.random.default_rng(3)
    counted = se.MulticlassAccumulator(classes=list(range(k)), exact_up_to=0)
    counted.update_many(rng.integers(0, k, 1000), _spread_scores(rng, 1000, k))
    acc = counted.copy()  # with the rows of a copy, as the one counted below to learn how often they grow
    before = acc.to_bytes()
    y, scores = rng.integers(0, k, 5000), _spread_scores(rng, 5000, k)
    calls = []
    make_room = state.LabelledCounts._make_room
    monkeypatch.setattr(state.LabelledCounts, "_make_room", lambda t, *a: (calls.append(1), make_room(t, *a))[1])
    counted.copy().update_many(y, scores)  # how many times the batch gives tables rows
    fail_at, calls[:] = (3 if failing == "third" else len(calls)), []

    def fails(table, *args):
        calls.append(1)
        if len(calls) == fail_at:
            raise MemoryError("no room")
        return make_room(table, *args)

    monkeypatch.setattr(state.LabelledCounts, "_make_room", fails)
    with pytest.raises(MemoryError):
        acc.update_many(y, scores)
    monkeypatch.undo()
    assert len(calls) == fail_at
    assert acc.to_bytes() == before


@needs_compiled
def test_count_columns_refuses_inconsistent_arguments_and_class_indices_out_of_range():
    from streameval._compiled import SPEEDUPS
    from streameval.histogram import batch_kernel

    acc = se.MulticlassAccumulator(classes=[0, 1], exact_up_to=0)
    acc.update_many([0, 1], [[0.2, 0.8], [0.6, 0.4]])
    before = acc.to_bytes()
    tables = tuple((h._counts._base, h._counts._page_of_row, h._counts._counts, h._counts._n_stored) for h in acc._ovr)
    hist = acc._ovr[0]
    scheme = batch_kernel(hist.bins)[1]
    scores = np.array([[0.2, 0.8], [0.6, 0.4]])
    stored, above = np.empty(2, dtype=np.int64), np.zeros(4, dtype=np.int64)
    good = (
        scores, np.array([0, 1]), 2, 0, tables, 1, *hist._at_threshold(), *scheme, (0, 0, 0), (2, 0, 0), stored, above
    )  # fmt: skip
    for at, bad in [(0, scores[:1]), (1, np.array([0, 2])), (1, np.array([0, -1])), (2, 0), (2, 1 << 17), (3, -1),
                    (3, 1), (5, 0), (12, (1, 0, 0)), (12, (0, 2, 0)), (13, (3, 0, 0)),
                    (14, np.empty(3, dtype=np.int64)), (15, np.zeros(3, dtype=np.int64))]:  # fmt: skip
        args = list(good)
        args[at] = bad
        with pytest.raises(ValueError, match="count_columns"):
            SPEEDUPS.count_columns(*args)
    assert acc.to_bytes() == before
    assert SPEEDUPS.count_columns(*good) == (2, 0, 0)
