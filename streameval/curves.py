"""Curves and areas from a labelled score histogram, as pure functions.

Every function takes the non-empty bins in ascending order of score: their
lower edges ``edges``, and the counts (or weights) of negatives ``neg`` and
positives ``pos`` in each. The scores inside one bin are treated as tied.
A threshold ``t`` predicts positive every score ``>= t``; the curve points are
the thresholds at the lower edges of the non-empty bins, from the highest down,
after a first point at ``+inf`` where nothing is predicted positive.

The functions that walk the curve points also take ``points=``: the
:func:`operating_points` of the same counts, computed once by the caller (a
report shares them between its metrics) instead of once per function.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ._compiled import SPEEDUPS
from ._numeric import running_sum, scaled_to_one

__all__ = [
    "ApBounds",
    "AucBounds",
    "Crossing",
    "auc_bounds",
    "average_precision",
    "average_precision_bounds",
    "break_even_point",
    "det_curve",
    "eer",
    "eer_nearest",
    "eer_rocch",
    "equal_error_rates",
    "operating_points",
    "pr_auc",
    "pr_curve",
    "roc_curve",
]

Array = npt.NDArray[np.float64]


class OperatingPoints(NamedTuple):
    """Cumulative counts at every threshold, from ``+inf`` down."""

    thresholds: Array
    tp: Array
    fp: Array
    positives: float
    negatives: float


class AucBounds(NamedTuple):
    """ROC AUC with ties inside bins counted as half, and its bounds."""

    lower: float
    auc: float
    upper: float


class Crossing(NamedTuple):
    """Where two error rates meet: the common rate and the threshold."""

    rate: float
    threshold: float


_FLOAT, _WHOLE = np.dtype(np.float64), np.dtype(np.int64)


def operating_points(edges: Array, neg: Array, pos: Array) -> OperatingPoints:
    """Cumulative (TP, FP) at ``+inf`` and at every bin edge, from high to low.

    Examples
    --------
    >>> import numpy as np
    >>> from streameval.curves import operating_points
    >>> pts = operating_points(np.array([0.1, 0.5]), np.array([2.0, 1.0]), np.array([0.0, 3.0]))
    >>> pts.thresholds.tolist(), pts.tp.tolist(), pts.fp.tolist()
    ([inf, 0.5, 0.1], [0.0, 3.0, 3.0], [0.0, 1.0, 3.0])

    Functions that walk the curve take them as ``points=`` (computed once for several):

    >>> from streameval.curves import eer, pr_auc
    >>> edges, neg, pos = np.array([0.1, 0.5]), np.array([2.0, 1.0]), np.array([0.0, 3.0])
    >>> eer(edges, neg, pos, points=pts) == eer(edges, neg, pos), pr_auc(edges, neg, pos, points=pts)
    (True, 0.75)
    """
    neg_arr, pos_arr = np.asarray(neg), np.asarray(pos)
    counts = {neg_arr.dtype, pos_arr.dtype}
    same_size = neg_arr.ndim == 1 and neg_arr.shape == pos_arr.shape and np.ndim(edges) == 1
    if SPEEDUPS is not None and same_size and neg_arr.size == np.size(edges) and counts in ({_WHOLE}, {_FLOAT}):
        # the same sums in one compiled pass: whole counts as integers, weights in order as cumsum adds them
        size = np.size(edges) + 1
        thresholds, tp, fp = np.empty(size), np.empty(size), np.empty(size)
        SPEEDUPS.operating_points(
            np.ascontiguousarray(edges, dtype=np.float64), np.ascontiguousarray(neg_arr),
            np.ascontiguousarray(pos_arr), neg_arr.dtype == _FLOAT, thresholds, tp, fp,
        )  # fmt: skip
        return OperatingPoints(thresholds, tp, fp, float(tp[-1]), float(fp[-1]))
    thresholds = np.concatenate([[np.inf], np.asarray(edges, dtype=np.float64)[::-1]])
    tp = np.concatenate([[0.0], running_sum(pos_arr[::-1])])
    fp = np.concatenate([[0.0], running_sum(neg_arr[::-1])])
    return OperatingPoints(thresholds, tp, fp, float(tp[-1]), float(fp[-1]))


def _points(edges: Array, neg: Array, pos: Array, points: OperatingPoints | None) -> OperatingPoints:
    """``points`` when given (the caller's, of the same counts), else the operating points of the counts."""
    if points is None:
        return operating_points(edges, neg, pos)
    if not isinstance(points, OperatingPoints):
        raise TypeError(f"points must be the OperatingPoints of the same counts, got {type(points).__name__}")
    if points.tp.size != np.size(edges) + 1:
        raise ValueError(
            f"points must be the OperatingPoints of the same counts: {points.tp.size} points for "
            f"{np.size(edges)} bins (operating_points gives one more than the bins)"
        )
    return points


def _rates(pts: OperatingPoints) -> tuple[Array, Array, Array] | None:
    """(FPR, FNR, thresholds) at every curve point, or None without both classes."""
    if pts.positives == 0 or pts.negatives == 0:
        return None
    return pts.fp / pts.negatives, 1.0 - pts.tp / pts.positives, pts.thresholds


def _div(num: Array | float, den: float) -> Array:
    """Elementwise ``num / den`` for a scalar denominator: nan when it is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(num, dtype=np.float64) / den if den != 0 else np.full(np.shape(num), np.nan)


def roc_curve(
    edges: Array, neg: Array, pos: Array, *, points: OperatingPoints | None = None
) -> tuple[Array, Array, Array]:
    """``(fpr, tpr, thresholds)`` with thresholds decreasing from ``+inf``.

    Matches scikit-learn's ``roc_curve(..., drop_intermediate=False)`` when
    every bin holds one distinct score. With no negatives (no positives) the
    FPR (TPR) is ``nan``.
    """
    pts = _points(edges, neg, pos, points)
    return _div(pts.fp, pts.negatives), _div(pts.tp, pts.positives), pts.thresholds


def auc_bounds(neg: Array, pos: Array) -> AucBounds:
    """ROC AUC counting ties inside a bin as half, with its lower and upper bounds.

    The lower bound orders every bin's positives below its negatives, the
    upper bound above them; the AUC of the unbinned scores lies in between.

    Examples
    --------
    >>> import numpy as np
    >>> from streameval.curves import auc_bounds
    >>> auc_bounds(np.array([1.0, 1.0, 0.0]), np.array([0.0, 1.0, 1.0]))
    AucBounds(lower=0.75, auc=0.875, upper=1.0)
    """
    whole = _whole_auc_sums(neg, pos)
    if whole is not None:  # the same sums, exact
        lower_sum, ties_sum, p_total, n_total = (float(v) for v in whole)
    else:
        neg = np.asarray(neg, dtype=np.float64)
        pos = np.asarray(pos, dtype=np.float64)
        # each side scaled by a power of two (exact): weights of 1e200 or 1e-200 give products that still fit
        (neg,) = scaled_to_one(float(neg.max(initial=0.0)), neg)
        (pos,) = scaled_to_one(float(pos.max(initial=0.0)), pos)
        n_below = running_sum(neg)  # the negatives below each bin: the running sum less the bin's own
        n_below -= neg
        p_total, n_total = float(pos.sum()), float(neg.sum())
        lower_sum, ties_sum = float(np.dot(pos, n_below)), float(np.dot(pos, neg))
    den = p_total * n_total
    if den == 0:
        return AucBounds(math.nan, math.nan, math.nan)
    lower = lower_sum / den
    ties = ties_sum / den
    return AucBounds(lower, lower + ties / 2.0, lower + ties)


def _whole_auc_sums(neg: Array, pos: Array) -> tuple[int, int, int, int] | None:
    """The sums of :func:`auc_bounds` as exact integers, compiled, for whole counts whose product is below 2**53.

    Every float of the plain path (the dot products and their partial sums) is then a whole number below
    2**53, so exact: both give the same bounds. ``None`` where the plain path is used.
    """
    if SPEEDUPS is None:
        return None
    if not (isinstance(neg, np.ndarray) and isinstance(pos, np.ndarray)):
        return None
    if neg.dtype != np.int64 or pos.dtype != np.int64 or neg.ndim != 1 or neg.shape != pos.shape:
        return None
    result: tuple[int, int, int, int] | None = SPEEDUPS.auc_sums(np.ascontiguousarray(neg), np.ascontiguousarray(pos))
    return result


def average_precision(edges: Array, neg: Array, pos: Array, *, points: OperatingPoints | None = None) -> float:
    """Sum over thresholds of (R_k - R_{k-1}) * precision_k (scikit-learn's AP)."""
    pts = _points(edges, neg, pos, points)
    if pts.positives == 0:
        return math.nan
    precision = pts.tp[1:] / (pts.tp[1:] + pts.fp[1:])
    recall_step = np.diff(pts.tp) / pts.positives
    return float(np.dot(recall_step, precision))


class ApBounds(NamedTuple):
    """Average precision when the scores inside each bin come in random order, and over the worst and best orders."""

    lower: float
    expected: float
    upper: float


_AP_BLOCK = 4096  # bins in a block of the compiled AP terms
_DIGAMMA_SHIFT = 12  # psi is shifted up to arguments >= 12, where its asymptotic series is accurate to 1e-15


def _digamma_terms(z: Array) -> tuple[Array, Array, Array]:
    """``(w, shift, tail)`` with ``psi(z) = ln(w) + tail - shift`` for z > 0 (any shape): ``w >= 12``.

    ``psi(z) = psi(z + s) - sum of 1 / (z + i) for i < s`` moves each argument
    below the shift up to it (few do: the top bins); there the asymptotic
    series ``tail = psi(w) - ln(w)`` is accurate to 1e-15.
    """
    w = np.array(z, dtype=np.float64)
    shift = np.zeros(w.shape)
    small = np.flatnonzero(w < _DIGAMMA_SHIFT)
    if small.size:
        start = w.flat[small]
        total, count = np.zeros(small.size), np.zeros(small.size)
        for i in range(_DIGAMMA_SHIFT):  # 1 / (z + i) added in order of i (as the compiled terms add them)
            step = start + i
            low = step < _DIGAMMA_SHIFT
            with np.errstate(divide="ignore"):
                total += np.where(low, 1.0 / step, 0.0)
            count += low
        shift.flat[small] = total
        w.flat[small] = start + count
    r = 1.0 / w  # the one division of each argument
    w2 = r * r
    tail = -0.5 * r - w2 * (1.0 / 12 - w2 * (1.0 / 120 - w2 * (1.0 / 252 - w2 * (1.0 / 240 - w2 * (1.0 / 132)))))
    return w, shift, tail


# the two differences psi(row j) - psi(row i) average precision takes, of the rows N + 1, N + n + 1, N + m + 1
_FIRST, _SECOND = [1, 0], [2, 2]


def _whole_ap_terms(p: Array, n: Array, t: Array, big_n: Array) -> Array:
    """Each bin's lower and expected average-precision term (rows) for whole counts.

    The digamma differences at ``N + 1``, ``N + n + 1`` and ``N + m + 1``;
    compiled, the same operations in the same order, with numpy's ``log1p``
    between the two passes (so both paths agree to the bit).
    """
    if SPEEDUPS is not None:
        p, n, t, big_n = (np.ascontiguousarray(a, dtype=np.float64) for a in (p, n, t, big_n))
        k = p.size
        if k > _AP_BLOCK:  # block by block (log1p is elementwise): buffers of a block, not 13 MB at 85,000 bins
            starts = range(0, k, _AP_BLOCK)
            return np.concatenate(
                [_whole_ap_terms(*(a[i : i + _AP_BLOCK] for a in (p, n, t, big_n))) for i in starts], 1
            )
        ratios, scratch, terms = np.empty((2, k)), np.empty((5, k)), np.empty((2, k))
        SPEEDUPS.ap_terms(p, n, t, big_n, None, scratch, ratios)
        SPEEDUPS.ap_terms(p, n, t, big_n, np.log1p(ratios, out=ratios), scratch, terms)
        return terms
    x = big_n + 1
    m = p + n
    w, shift, tail = _digamma_terms(np.stack([x, x + n, x + m]))
    logs = np.log1p((w[_SECOND] - w[_FIRST]) * (1.0 / w[_FIRST]))
    between = shift[_FIRST] - shift[_SECOND] + logs + tail[_SECOND] - tail[_FIRST]
    # lower: negatives first, precision (T + i) / (N + n + i) for i = 1..p
    lower = p + (t - big_n - n) * between[0]
    b = np.where(m > 1, (p - 1) / np.maximum(m - 1, 1), 0.0)
    expected = p / m * (b * m + (t + 1 - b * x) * between[1])
    return np.stack([lower, expected])


def _whole_ap_bins(neg: Array, pos: Array, pts: OperatingPoints) -> tuple[tuple[Array, ...], float] | None:
    """The bins with positives of whole counts (their positives, negatives, true and predicted positives in
    higher bins, as floats) and the total of positives, compiled; ``None`` where numpy's path runs.

    The floats are the numpy path's: each count converted once, the same additions of the points, and the
    exact total of positives below 2**53 (where every partial float sum is exact too).
    """
    if SPEEDUPS is None:
        return None
    neg, pos = np.asarray(neg), np.asarray(pos)
    if neg.dtype != _WHOLE or pos.dtype != _WHOLE or neg.ndim != 1 or neg.shape != pos.shape:
        return None
    rows = np.empty((4, np.count_nonzero(pos)))  # as long as the bins with positives: the temporaries stay small
    found = SPEEDUPS.ap_bins(
        np.ascontiguousarray(neg), np.ascontiguousarray(pos), np.ascontiguousarray(pts.tp, dtype=np.float64),
        np.ascontiguousarray(pts.fp, dtype=np.float64), rows,
    )  # fmt: skip
    if found is None:
        return None
    k, total = found
    return tuple(rows[:, :k]), float(total)


def average_precision_bounds(
    edges: Array, neg: Array, pos: Array, *, points: OperatingPoints | None = None
) -> ApBounds:
    """Average precision as the expected value over random orders of the events inside each bin, and its bounds.

    A bin with ``p`` positives and ``n`` negatives below ``T`` true and ``N``
    predicted positives holds ``m = p + n`` ranks; the event at rank ``N + k + 1``
    is positive with probability ``p / m``, and then the bin's positives before
    it number ``k (p - 1) / (m - 1)`` on average. Precision at a fixed rank is
    linear in that number, so the expectation is exact (McSherry & Najork,
    ECIR 2008): ``p / m * sum_k (T + 1 + k (p - 1) / (m - 1)) / (N + k + 1)``,
    summed in closed form with the digamma function. ``lower`` puts every bin's
    negatives before its positives, one event at a time; ``upper`` ties all of
    its positives at one score above its negatives (scikit-learn's AP gives a
    tie the precision at its end, more than positives one at a time would get):
    the exact value of the unbinned scores, ties among them or not, lies between
    them. With weights (counts that are not whole numbers) ``lower`` and
    ``expected`` are the limits of many events per bin; ``upper`` holds for any
    events.

    Examples
    --------
    >>> import numpy as np
    >>> from streameval.curves import average_precision_bounds
    >>> b = average_precision_bounds(np.array([0.0]), np.array([1.0]), np.array([1.0]))  # one tie: + - or - +
    >>> round(b.lower, 12), round(b.expected, 12), round(b.upper, 12)
    (0.5, 0.75, 1.0)
    """
    counted = np.asarray(neg).dtype.kind in "iu" and np.asarray(pos).dtype.kind in "iu"  # whole numbers
    found = None
    if counted and SPEEDUPS is not None:  # numpy's path takes the points of the counts as floats
        as_floats = (np.asarray(v, dtype=np.float64) for v in (neg, pos))
        floats = points if points is not None else operating_points(edges, *as_floats)
        found = _whole_ap_bins(neg, pos, _points(edges, neg, pos, floats))
    if found is not None:  # the same arrays and total in one compiled pass
        (p, n, t, big_n), total_p = found
        whole = True
    else:
        neg = np.asarray(neg, dtype=np.float64)
        pos = np.asarray(pos, dtype=np.float64)
        pts = _points(edges, neg, pos, points)
        total_p = float(pos.sum())
        t_above = pts.tp[-2::-1]  # true positives in higher bins
        n_above = t_above + pts.fp[-2::-1]  # predicted positives in higher bins
        keep = np.flatnonzero(pos > 0)  # the bins with positives: indices, 4x faster than a mask for four gathers
        p, n, t, big_n = pos.take(keep), neg.take(keep), t_above.take(keep), n_above.take(keep)
        whole = counted or bool(np.all(p == np.round(p)) and np.all(n == np.round(n)))
    if total_p == 0:
        return ApBounds(math.nan, math.nan, math.nan)
    if whole:
        lower, expected = _whole_ap_terms(p, n, t, big_n)
        lower_total = total_p
    if counted:  # integer counts, below 2**64: products below 2**129 fit a float, and scaling would change no bit
        scaled_total = total_p
    else:  # weights scaled by a power of two (exact): products of weights of 1e200 or 1e-200 still fit
        largest = float(np.max(big_n + n + p, initial=0.0))
        p, n, t, big_n, scaled_total = scaled_to_one(largest, p, n, t, big_n, total_p)
    if not whole:  # with weights, the continuous limit: no event counts itself
        lower = _fluid(t, big_n + n, p, p)
        expected = _fluid(t, big_n, p, p + n)
        lower_total = scaled_total
    # every positive's precision is at most (T + p) / (N + p), reached when the bin's positives tie above its
    # negatives (T <= N: precision grows with the positives above); positives one at a time get less
    upper = p * (t + p) / (big_n + p)
    return ApBounds(
        float(lower.sum() / lower_total),
        float(expected.sum() / lower_total),
        float(min(1.0, upper.sum() / scaled_total)),
    )


def _fluid(t: Array, n0: Array, p: Array, m: Array) -> Array:
    """Integral over u in [0, 1] of p (t + p u) / (n0 + m u) du: positives spread evenly over ``m``."""
    out = np.where(m > 0, p * p / np.where(m > 0, m, 1.0), 0.0)
    start = n0 > 0
    safe_n0 = np.where(start, n0, 1.0)
    safe_m = np.where(m > 0, m, 1.0)
    log_term = np.log1p(safe_m / safe_n0)
    out = out + np.where(start & (m > 0), p * (t - p * n0 / safe_m) / safe_m * log_term, 0.0)
    return out


def pr_curve(
    edges: Array, neg: Array, pos: Array, *, points: OperatingPoints | None = None
) -> tuple[Array, Array, Array]:
    """``(precision, recall, thresholds)`` in scikit-learn's layout.

    Thresholds increase; the last point (precision 1, recall 0) has no
    threshold. Recall is ``nan`` when there are no positives.
    """
    pts = _points(edges, neg, pos, points)
    tp, fp = pts.tp[1:], pts.fp[1:]
    precision = tp / (tp + fp)
    recall = _div(tp, pts.positives)
    return (
        np.concatenate([precision[::-1], [1.0]]),
        np.concatenate([recall[::-1], [0.0]]),
        pts.thresholds[1:][::-1].copy(),
    )


def pr_auc(edges: Array, neg: Array, pos: Array, *, points: OperatingPoints | None = None) -> float:
    """Area under the PR curve with Davis & Goadrich interpolation.

    Between two points A and B the false positives grow in proportion to the
    true positives, so precision follows ``(a + x) / (b + c x)`` along the
    segment; the area is integrated in closed form. The first segment runs
    from recall 0 at the precision of the first non-empty bin.
    """
    pts = _points(edges, neg, pos, points)
    if pts.positives == 0:
        return math.nan
    if SPEEDUPS is not None:  # the same operations compiled, numpy's log1p between the two passes
        tp, fp = np.ascontiguousarray(pts.tp, dtype=np.float64), np.ascontiguousarray(pts.fp, dtype=np.float64)
        out = np.empty(tp.size - 1)
        starts = SPEEDUPS.pr_auc_terms(tp, fp, None, out)
        logs = np.log1p(out[:starts])
        rising = SPEEDUPS.pr_auc_terms(tp, fp, logs, out)
        return float(out[:rising].sum() / pts.positives)
    tp_a, fp_a = pts.tp[:-1], pts.fp[:-1]
    d_tp = np.diff(pts.tp)
    d_fp = np.diff(pts.fp)
    rising = d_tp > 0
    tp_a, fp_a, d_tp, d_fp = tp_a[rising], fp_a[rising], d_tp[rising], d_fp[rising]
    c = 1.0 + d_fp / d_tp  # predicted positives gained per true positive
    b = tp_a + fp_a  # predicted positives at A
    area = d_tp / c
    start = b > 0
    bs, cs = b[start], c[start]
    # integral of (a + x) / (b + c x) dx over [0, d]: d/c + (a c - b)/c^2 * ln(1 + c d / b)
    area[start] += (tp_a[start] * cs - bs) / cs**2 * np.log1p(cs * d_tp[start] / bs)
    return float(area.sum() / pts.positives)


def break_even_point(edges: Array, neg: Array, pos: Array, *, points: OperatingPoints | None = None) -> float:
    """Recall at the cut that predicts exactly P positives, where precision = recall.

    Inside the bin that the cut falls into, true positives grow linearly.
    """
    pts = _points(edges, neg, pos, points)
    p = pts.positives
    if p == 0:
        return math.nan
    predicted = pts.tp + pts.fp
    k = int(np.searchsorted(predicted, p, side="left"))  # first point with >= P predicted
    if predicted[k] == p:
        return float(pts.tp[k] / p)
    above_tp, above_pred = pts.tp[k - 1], predicted[k - 1]
    bin_pos = pts.tp[k] - above_tp
    bin_all = predicted[k] - above_pred
    # scaled by a power of two (exact): weights of 1e200 give a product that still fits
    above_tp, bin_pos, rest, bin_all, p = scaled_to_one(
        float(predicted[k]), above_tp, bin_pos, p - above_pred, bin_all, p
    )
    tp = above_tp + bin_pos * rest / bin_all
    return float(tp / p)


def _segment_crossing(thresholds: Array, far: Array, frr: Array) -> Crossing:
    """Intersect FRR and FAR along the polyline of points ordered by falling threshold."""
    found = _crossing_indices(frr, far, 1.0, 1.0, rates=True)
    if found is not None:  # the same indices in one compiled pass
        crossing = _crossing_found(found, lambda i: (far[i], frr[i]), thresholds)
        if crossing is not None:
            return crossing
    diff = frr - far  # falls from >= 0 towards <= 0
    if diff.size == 0 or np.isnan(diff).all():
        return Crossing(math.nan, math.nan)
    exact = np.flatnonzero(diff == 0)
    if exact.size:
        i = int(exact[0])
        return Crossing(float(far[i]), float(thresholds[i]))
    i = int(np.flatnonzero(diff > 0)[-1])  # last point with FRR above FAR
    j = i + 1
    return _crossing_on(far[i], far[j], diff[i], diff[j], thresholds[i], thresholds[j])


def _crossing_on(far_i: Any, far_j: Any, d_i: Any, d_j: Any, t_i: Any, t_j: Any) -> Crossing:
    """Where FRR - FAR (``d``) falls through 0 on the segment from point i to point j (float64 values)."""
    lam = d_i / (d_i - d_j)
    rate = far_i + lam * (far_j - far_i)
    threshold = t_j if not math.isfinite(t_i) else t_i + lam * (t_j - t_i)
    return Crossing(float(rate), float(threshold))


def _crossing_found(
    found: tuple[int, int, int, bool], rates_at: Callable[[int], tuple[Any, Any]], thresholds: Array
) -> Crossing | None:
    """:func:`_segment_crossing`'s result at the indices :func:`_crossing_indices` found, with ``rates_at(i)``
    giving (FAR, FRR) at point ``i``; ``None`` where the numpy path decides (it refuses a last point above)."""
    zero, i, _, number = found
    if not number:
        return Crossing(math.nan, math.nan)
    if zero >= 0:
        return Crossing(float(rates_at(zero)[0]), float(thresholds[zero]))
    if not 0 <= i < thresholds.size - 1:
        return None
    (far_i, frr_i), (far_j, frr_j) = rates_at(i), rates_at(i + 1)
    return _crossing_on(far_i, far_j, frr_i - far_i, frr_j - far_j, thresholds[i], thresholds[i + 1])


def _rates_at(pts: OperatingPoints, i: int) -> tuple[Any, Any]:
    """(FAR, FRR) at point ``i``: the operations of :func:`_rates` on one point."""
    return pts.fp[i] / pts.negatives, 1.0 - pts.tp[i] / pts.positives


def _crossing_indices(
    a: Array, b: Array, positives: float, negatives: float, rates: bool
) -> tuple[int, int, int, bool] | None:
    """Where FRR - FAR is first 0, where it is last above 0, where ``|FRR - FAR|`` is first smallest, and whether
    it is ever a number, in one compiled pass (``None`` without the compiled module): FRR ``a`` and FAR ``b``
    when ``rates``, else from true and false positives ``a`` and ``b`` as :func:`_rates` computes them."""
    if SPEEDUPS is None:
        return None
    a, b = (np.ascontiguousarray(v, dtype=np.float64) for v in (a, b))
    zero, above, nearest, number = SPEEDUPS.rate_crossing(a, b, float(positives), float(negatives), rates)
    return int(zero), int(above), int(nearest), bool(number)


def eer(edges: Array, neg: Array, pos: Array, *, points: OperatingPoints | None = None) -> Crossing:
    """Equal error rate: where the straight segments of FAR and FRR cross.

    The threshold is interpolated on the same segment (the finite end when
    the segment starts at ``+inf``).
    """
    return equal_error_rates(edges, neg, pos, points=points)[0]


def eer_nearest(edges: Array, neg: Array, pos: Array, *, points: OperatingPoints | None = None) -> Crossing:
    """Mean of FAR and FRR at the threshold where ``|FRR - FAR|`` is smallest."""
    return equal_error_rates(edges, neg, pos, points=points)[1]


def equal_error_rates(
    edges: Array, neg: Array, pos: Array, *, points: OperatingPoints | None = None
) -> tuple[Crossing, Crossing]:
    """:func:`eer` and :func:`eer_nearest` of the same counts, from one pass over the operating points.

    Examples
    --------
    >>> import numpy as np
    >>> from streameval.curves import equal_error_rates
    >>> crossed, nearest = equal_error_rates(np.array([0.1, 0.4, 0.8]), np.array([3, 1, 0]), np.array([0, 1, 2]))
    >>> round(crossed.rate, 6), round(crossed.threshold, 6)  # 1/7, on the segment from 0.8 to 0.4
    (0.142857, 0.571429)
    >>> nearest  # at 0.4: FAR 1/4, FRR 0
    Crossing(rate=0.125, threshold=0.4)
    """
    pts = _points(edges, neg, pos, points)
    if pts.positives == 0 or pts.negatives == 0:
        return Crossing(math.nan, math.nan), Crossing(math.nan, math.nan)
    found = _crossing_indices(pts.tp, pts.fp, pts.positives, pts.negatives, rates=False)
    # the indices of _segment_crossing, without the arrays of rates
    crossed = None if found is None else _crossing_found(found, lambda i: _rates_at(pts, i), pts.thresholds)
    rates = None
    if crossed is None:
        rates = _rates(pts)
        assert rates is not None
        crossed = _segment_crossing(rates[2], rates[0], rates[1])
    if found is not None:
        i = found[2]
        far_i, frr_i = _rates_at(pts, i)
    else:
        assert rates is not None
        far, frr, _ = rates
        i = int(np.argmin(np.abs(frr - far)))
        far_i, frr_i = far[i], frr[i]
    return crossed, Crossing(float((far_i + frr_i) / 2.0), float(pts.thresholds[i]))


def eer_rocch(edges: Array, neg: Array, pos: Array, *, points: OperatingPoints | None = None) -> Crossing:
    """EER of the ROC convex hull (ROCCH-EER, as in the BOSARIS toolkit).

    The hull is taken in (FAR, FRR) space, where it is the lower-left convex
    boundary of the points; the EER is where it crosses FAR = FRR. The
    threshold is interpolated along the hull segment.
    """
    rates = _rates(_points(edges, neg, pos, points))
    if rates is None:
        return Crossing(math.nan, math.nan)
    far, frr, thresholds = rates
    idx = _lower_hull(far, frr)
    return _segment_crossing(thresholds[idx], far[idx], frr[idx])


def _lower_hull(x: Array, y: Array) -> npt.NDArray[np.intp]:
    """Indices of the lower convex hull of points with ``x`` non-decreasing.

    A point on or above the chord between its two neighbours is never a hull
    vertex, so every such point is dropped at once, pass after pass; a long
    run of passes falls back to the sequential monotone chain.
    """
    if SPEEDUPS is not None:  # the same passes, compiled
        out = np.empty(x.size, dtype=np.int64)
        count = SPEEDUPS.lower_hull(np.ascontiguousarray(x, np.float64), np.ascontiguousarray(y, np.float64), out)
        return out[:count].astype(np.intp, copy=False)
    idx = np.arange(x.size)
    px, py = x, y  # the points still in: each pass gathers them once, then works on slices
    for _ in range(64):
        if idx.size < 3:
            return idx
        dx, dy = px[1:] - px[:-1], py[1:] - py[:-1]
        cross = dx[:-1] * (py[2:] - py[:-2]) - dy[:-1] * (px[2:] - px[:-2])  # (b - a) x (c - a) of a, b, c in a row
        keep = cross > 0
        if keep.all():
            return idx
        idx = np.concatenate([idx[:1], idx[1:-1][keep], idx[-1:]])
        px, py = x[idx], y[idx]
    hull: list[int] = []
    for i in idx.tolist():
        while len(hull) >= 2:
            a0, b0 = hull[-2], hull[-1]
            if (x[b0] - x[a0]) * (y[i] - y[a0]) - (y[b0] - y[a0]) * (x[i] - x[a0]) <= 0:
                hull.pop()
            else:
                break
        hull.append(i)
    return np.array(hull, dtype=np.intp)


def det_curve(
    edges: Array, neg: Array, pos: Array, *, points: OperatingPoints | None = None
) -> tuple[Array, Array, Array]:
    """``(fpr, fnr, thresholds)`` in scikit-learn's layout (thresholds increasing).

    As scikit-learn does, the curve starts at the last threshold with no
    false positive and stops at the first with no false negative.
    """
    pts = _points(edges, neg, pos, points)
    if pts.positives == 0 or pts.negatives == 0:
        nan = np.full(pts.thresholds.size, np.nan)
        return nan, nan.copy(), pts.thresholds[::-1].copy()
    first = int(np.searchsorted(pts.fp, pts.fp[0], side="right")) - 1
    last = int(np.searchsorted(pts.tp, pts.tp[-1], side="left")) + 1
    sl = slice(first, last)
    fpr = pts.fp[sl] / pts.negatives
    fnr = (pts.positives - pts.tp[sl]) / pts.positives
    return fpr[::-1].copy(), fnr[::-1].copy(), pts.thresholds[sl][::-1].copy()


class CostPoint(NamedTuple):
    """A minimal cost and the threshold that reaches it."""

    cost: float
    threshold: float


def cost_curve(edges: Array, neg: Array, pos: Array, *, points: OperatingPoints | None = None) -> tuple[Array, Array]:
    """Lower envelope of the cost lines, as vertices ``(x, normalised cost)``.

    Every curve point gives the line ``y = FNR * x + FPR * (1 - x)`` over the
    probability cost ``x`` in [0, 1]; the envelope of the lowest lines is made
    of the points on the ROC convex hull, and is piecewise linear between the
    returned vertices.
    """
    rates = _rates(_points(edges, neg, pos, points))
    if rates is None:
        return np.array([0.0, 1.0]), np.array([np.nan, np.nan])
    fpr, fnr, _ = rates
    idx = _lower_hull(fpr, fnr)
    f, m = fpr[idx], fnr[idx]
    # consecutive hull lines cross at x = dFPR / (dFPR - dFNR)
    d_f, d_m = np.diff(f), np.diff(m)
    keep = d_f - d_m > 0
    cross = d_f[keep] / (d_f[keep] - d_m[keep])
    x = np.concatenate([[0.0], cross, [1.0]])
    lines_f, lines_m = f[np.concatenate([[True], keep])], m[np.concatenate([[True], keep])]
    # the value at every vertex: the line in force from that vertex on (the last one ends at x = 1)
    y = np.empty(x.size)
    y[:-1] = lines_m * x[:-1] + lines_f * (1.0 - x[:-1])
    y[-1] = m[-1]
    new = np.ones(x.size, dtype=np.bool_)  # drop repeated vertices (dominated lines meet at an end)
    new[1:] = (np.diff(x) != 0) | (np.diff(y) != 0)
    return x[new], y[new]


def expected_cost(edges: Array, neg: Array, pos: Array, *, points: OperatingPoints | None = None) -> float:
    """Area under the lower envelope of the cost curve (the expected total cost)."""
    x, y = cost_curve(edges, neg, pos, points=points)
    return float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2.0))


def probability_cost(p: float, cost_fn: float, cost_fp: float) -> float:
    """``x = p cost_fn / (p cost_fn + (1 - p) cost_fp)``."""
    return p * cost_fn / (p * cost_fn + (1.0 - p) * cost_fp)


def min_cost(edges: Array, neg: Array, pos: Array, x: float, *, points: OperatingPoints | None = None) -> CostPoint:
    """Lowest normalised cost ``FNR x + FPR (1 - x)`` over the curve thresholds."""
    rates = _rates(_points(edges, neg, pos, points))
    if rates is None:
        return CostPoint(math.nan, math.nan)
    fpr, fnr, thresholds = rates
    cost = fnr * x + fpr * (1.0 - x)
    i = int(np.argmin(cost))
    return CostPoint(float(cost[i]), float(thresholds[i]))


def min_dcf(
    edges: Array,
    neg: Array,
    pos: Array,
    p_target: float,
    c_miss: float,
    c_fa: float,
    *,
    points: OperatingPoints | None = None,
) -> CostPoint:
    """NIST minimum detection cost, normalised by ``min(c_miss p, c_fa (1 - p))``."""
    rates = _rates(_points(edges, neg, pos, points))
    if rates is None:
        return CostPoint(math.nan, math.nan)
    fpr, fnr, thresholds = rates
    dcf = c_miss * p_target * fnr + c_fa * (1.0 - p_target) * fpr
    i = int(np.argmin(dcf))
    return CostPoint(float(dcf[i] / min(c_miss * p_target, c_fa * (1.0 - p_target))), float(thresholds[i]))
