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
