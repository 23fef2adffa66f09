"""Columns from dataframes: pandas, polars and pyarrow give the state numpy arrays give."""

from __future__ import annotations

import numpy as np
import pytest

import streameval as se

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")


def _forms(column):
    half = len(column) // 2
    return {
        "pandas": pd.Series(column),
        "polars": pl.Series(column),
        "pyarrow": pa.array(column),
        "pyarrow-chunked": pa.chunked_array([column[:half], column[half:]]),
    }


@pytest.mark.parametrize("form", ["pandas", "polars", "pyarrow", "pyarrow-chunked"])
def test_every_kind_takes_dataframe_columns(form):
    rng = np.random.default_rng(0)
    n = 2_000
    y, s, w = rng.random(n) < 0.3, rng.random(n), rng.uniform(0.5, 2.0, n)
    target, pred = rng.normal(size=n), rng.normal(size=n)
    cls = np.array(["x", "y", "z"])[rng.integers(0, 3, n)]
    region = np.array(["eu", "us"])[rng.integers(0, 2, n)]
    cases = [
        (se.BinaryAccumulator, (y, s), w),
        (se.RegressionAccumulator, (target, pred), w),
        (se.ScoreAccumulator, (s,), w),
        (lambda: se.MulticlassAccumulator(["x", "y", "z"]), (cls, cls), None),  # predicted labels
        (lambda: se.Segmented(se.BinaryAccumulator), (region, y, s), w),
    ]
    for make, columns, weights in cases:
        ref = make()
        ref.update_many(*columns, w=weights)
        got = make()
        got.update_many(*(_forms(c)[form] for c in columns), w=None if weights is None else _forms(weights)[form])
        assert got == ref, (make, form)


def test_float_columns_without_nulls_are_read_in_place():
    s = np.random.default_rng(1).random(1000)
    arrow = pa.array(s)
    assert np.shares_memory(np.asarray(arrow), np.frombuffer(arrow.buffers()[1], dtype=np.float64))
    from streameval._validation import as_scores

    series = pd.Series(s)
    assert np.shares_memory(as_scores("scores", series), series.to_numpy())  # read in place: no copy
    assert np.shares_memory(as_scores("scores", arrow), np.frombuffer(arrow.buffers()[1], dtype=np.float64))


def test_decimals_are_read_as_the_nearest_floats_everywhere_numbers_go():
    """A DECIMAL column (Parquet, a database) gives decimal.Decimal values, or a pyarrow decimal array: read as
    floats, as numpy and scikit-learn read them, per event and in batches, for scores, targets, weights, times,
    class scores and thresholds; a NaN decimal is refused as NaN is."""
    from decimal import Decimal

    rng = np.random.default_rng(5)
    n = 300
    y, s = rng.random(n) < 0.4, rng.random(n)
    t, w = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    dec = [Decimal(v) for v in s]  # each float exactly: the nearest float of each is the float again
    dec_t, dec_w = [Decimal(v) for v in t], [Decimal(v) for v in w]
    classes = list(np.array(["a", "b", "c"])[rng.integers(0, 3, n)])
    rows = [dict(zip("abc", p, strict=True)) for p in rng.dirichlet(np.ones(3), n).tolist()]
    dec_rows = [{k: Decimal(v) for k, v in row.items()} for row in rows]

    def one_by_one(acc, *columns, **keywords):
        for i, event in enumerate(zip(*columns, strict=True)):
            acc.update(*event, **{k: v[i] for k, v in keywords.items()})

    def both(make, feed_float, feed_decimal, read=lambda a: a):
        want, got = make(), make()
        feed_float(want)
        feed_decimal(got)
        assert read(got) == read(want), make

    window = lambda a: a.accumulator()  # noqa: E731
    both(se.BinaryAccumulator, lambda a: a.update_many(y, s, w=w), lambda a: a.update_many(y, dec, w=dec_w))
    both(se.BinaryAccumulator, lambda a: one_by_one(a, y, s, w=w), lambda a: one_by_one(a, y, dec, w=dec_w))
    both(se.RegressionAccumulator, lambda a: a.update_many(t, s), lambda a: a.update_many(dec_t, dec))
    both(se.RegressionAccumulator, lambda a: one_by_one(a, t, s), lambda a: one_by_one(a, dec_t, dec))
    both(se.ScoreAccumulator, lambda a: a.update_many(s), lambda a: a.update_many(dec))
    both(lambda: se.Segmented(se.BinaryAccumulator), lambda a: a.update_many(classes, y, s),
         lambda a: a.update_many(classes, y, dec))  # fmt: skip
    both(se.MulticlassAccumulator, lambda a: one_by_one(a, classes, rows), lambda a: one_by_one(a, classes, dec_rows))
    both(lambda: se.Sliding(se.BinaryAccumulator, size=100), lambda a: one_by_one(a, y, s),
         lambda a: one_by_one(a, y, dec), window)  # fmt: skip
    times = np.arange(n, dtype=np.float64)
    both(lambda: se.TimeWindow(se.BinaryAccumulator, 100.0, 4), lambda a: one_by_one(a, y, s, t=times),
         lambda a: one_by_one(a, y, dec, t=[Decimal(v) for v in times]), window)  # fmt: skip
    assert se.BinaryAccumulator(threshold=Decimal("0.25")) == se.BinaryAccumulator(threshold=0.25)
    arrow = pa.array([str(v) for v in s.round(3)]).cast(pa.decimal128(5, 3))
    both(se.BinaryAccumulator, lambda a: a.update_many(y, s.round(3)), lambda a: a.update_many(y, arrow))

    acc = se.BinaryAccumulator()
    acc.update_many(y, s)
    before = acc.to_bytes()
    for bad in (Decimal("NaN"), Decimal("sNaN")):
        with pytest.raises(ValueError, match=r"score must not be NaN, got Decimal\('s?NaN'\)"):
            acc.update(True, bad)
        with pytest.raises(ValueError, match="scores must not be NaN, got nan at index 1"):
            acc.update_many([True, False], [Decimal("0.5"), bad])
    assert acc.to_bytes() == before
