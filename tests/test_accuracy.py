"""Accuracy of the default range-free bins on 10^6 scores of each score family."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest
from conftest import exact_eer
from families import FAMILIES, make_family
from sklearn.metrics import roc_auc_score

import streameval as se

N = 10**6


@pytest.mark.parametrize("family", list(FAMILIES))
def test_default_bins_accuracy_and_memory(family):
    y, s = make_family(family, N, seed=11)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    acc = se.BinaryAccumulator()
    acc.update_many(y, s)
    gc.collect()
    retained = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert retained <= 256 * 1024, retained
    assert acc.nbytes <= 256 * 1024

    r = acc.get()
    exact_auc = roc_auc_score(y, s)
    assert abs(r.auc - exact_auc) <= 1e-5
    assert r.auc_lower <= exact_auc <= r.auc_upper
    p, n = int(y.sum()), int((~y).sum())
    assert abs(r.eer - exact_eer(y, s)) <= max(1e-4, 1.0 / min(p, n))
    # the threshold counts are exact whatever the bins
    pred = s >= 0.5
    assert (r.tp, r.fp) == (int(np.sum(pred & y)), int(np.sum(pred & ~y)))


def test_memory_stays_flat_as_the_stream_grows():
    # memory grows only when scores reach a new octave of the range-free scheme; over a
    # bounded score range it stops growing once every octave was seen
    sizes = []
    acc = se.BinaryAccumulator()
    rng = np.random.default_rng(3)
    for _ in range(20):
        acc.update_many(rng.random(200_000) < 0.3, rng.uniform(1e-3, 1 - 1e-3, 200_000))
        sizes.append(acc.nbytes)
    assert acc.get().n == 4_000_000
    assert sizes[-1] == sizes[1]
    # an unbounded family (normal tails) adds a page only when a new octave appears
    tails = se.BinaryAccumulator()
    grown = []
    for seed in range(10):
        y, s = make_family("logits", 400_000, seed=seed)
        tails.update_many(y, s)
        grown.append(tails.nbytes)
    assert grown[-1] <= 1.1 * grown[2]


def test_probabilities_near_zero_and_one_are_resolved():
    bins = se.Bins.range_free()
    for base in (1e-12, 1 - 1e-12, 1e-6, 1 - 1e-6, 0.3, -7.5, 42.0):
        k = bins.key(base)
        lo, hi = bins.lower_edges([k, k + 1])
        scale = min(abs(base), abs(1 - base)) if 0 <= base < 1 else abs(base)
        scale = abs(base - 1) if base >= 0.5 else scale
        assert lo <= base < hi
        assert hi - lo <= scale * 2.0**-7 * 1.0000001, (base, lo, hi)
