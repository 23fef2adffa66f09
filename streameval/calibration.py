"""Calibration of probability scores: exact Brier and log-loss sums, calibration curves, ECE and MCE.

:class:`CalibrationSums` is the running state: how many events were counted,
how many scored outside [0, 1], and the sums of their Brier terms
``(y - p)**2`` and log-loss terms ``-log(clip(p if y else 1 - p, eps, 1 - eps))``
(``eps`` is float64's machine epsilon, scikit-learn's clipping). Without
weights each term is rounded to a whole number of units (``2**-52`` for
Brier, ``2**-46`` for log loss) and the sums are Python integers, so sums are
exact: any order of counting, merging or taking out gives the same state,
and the mean differs from scikit-learn's by at most half a unit an event.
With weights the sums are floats of weight times term.

The curve functions are pure functions of a report's score counts: every
distinct score with its counts while exact, else the non-empty bins with
the scores of a bin taken as spread evenly over it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ._codec import FormatError, require_fields
from ._compiled import SPEEDUPS
from ._numeric import running_sum
from ._validation import check_sums_finite, show

__all__ = [
    "BRIER_UNIT",
    "LOG_LOSS_UNIT",
    "CalibrationBins",
    "CalibrationSums",
    "calibration_bins",
    "plus",
    "sums_kernel",
]

Array = npt.NDArray[np.float64]

BRIER_UNIT = 2.0**-52  # a Brier term is a whole number of these (unweighted sums)
LOG_LOSS_UNIT = 2.0**-46  # a log-loss term is a whole number of these; -log(eps) = 36.04 < 2**6
_EPS = float(np.finfo(np.float64).eps)
_MAGIC = 2.0**52
_MAGIC_BITS = np.uint64(0x4330000000000000)
# fdlibm's log: q = 2**k (1 + f), sqrt(2)/2 < 1 + f < sqrt(2), and a polynomial in s = f / (2 + f)
_LG = (
    6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, 2.222219843214978396e-01,
    1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01,
)  # fmt: skip
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10


def sums_kernel() -> bool:
    """Whether batches are summed by the compiled pass (else by its numpy twin, with the same bits)."""
    return SPEEDUPS is not None


def _log(q: Array) -> Array:
    """Natural log of q in [eps, 1 - eps], operation for operation as the compiled pass computes it."""
    u = q.view(np.uint64) + np.uint64(0x3FF0000000000000 - 0x3FE6A09E00000000)
    k = ((u >> np.uint64(52)) | _MAGIC_BITS).view(np.float64) - _MAGIC - 1023.0
    m = ((u & np.uint64(0x000FFFFFFFFFFFFF)) + np.uint64(0x3FE6A09E00000000)).view(np.float64)
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    lg1, lg2, lg3, lg4, lg5, lg6, lg7 = _LG
    t1 = w * (lg2 + w * (lg4 + w * lg6))
    t2 = z * (lg1 + w * (lg3 + w * (lg5 + w * lg7)))
    r = t2 + t1
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def _terms(x: Array, is_pos: npt.NDArray[np.bool_] | bool) -> tuple[Array, Array, npt.NDArray[np.bool_]]:
    """Each event's Brier and log-loss terms (0 outside [0, 1]) and whether it scores outside."""
    lab = np.broadcast_to(np.asarray(is_pos, dtype=np.bool_), x.shape)
    with np.errstate(all="ignore"):
        om = 1.0 - x
        q = np.where(lab, x, om)
        d = np.where(lab, om, x)
        inside = (x >= 0.0) & (x <= 1.0)
        q = np.where(q < _EPS, _EPS, q)
        q = np.where(q > 1.0 - _EPS, 1.0 - _EPS, q)
        brier = np.where(inside, d * d, 0.0)
        log_loss = np.where(inside, -_log(np.ascontiguousarray(q)), 0.0)
    return brier, log_loss, ~inside


def _units(terms: Array, unit: float) -> npt.NDArray[np.int64]:
    """Each term as a whole number of units, rounded to nearest (terms below 2**52 units)."""
    return ((terms * (1.0 / unit) + _MAGIC).view(np.uint64) - _MAGIC_BITS).astype(np.int64)


def _units_sum(terms: Array, unit: float) -> int:
    """The exact sum of the terms rounded to whole units (each below 2**52)."""
    units = _units(terms, unit)
    high, low = units >> 26, units & ((1 << 26) - 1)
    return (int(high.sum()) << 26) + int(low.sum())


def _as_float(total: int | float, unit: float) -> float:
    return total * unit if isinstance(total, int) else float(total)


@dataclass(frozen=True)
class CalibrationSums:
    """The Brier and log-loss sums of counted events (whole units without weights, floats with).

    Examples
    --------
    >>> import numpy as np
    >>> from streameval.calibration import CalibrationSums
    >>> s = CalibrationSums.of(np.array([0.9, 0.2, 0.6]), np.array([True, False, False]), None)
    >>> s.events, s.positives, s.outside, round(s.brier_total, 12), round(s.log_loss_total, 12)
    (3, 1, 0, 0.41, 1.244794798846)
    """

    events: int = 0
    positives: int = 0
    outside: int = 0
    brier: int | float = 0
    log_loss: int | float = 0

    @property
    def is_weighted(self) -> bool:
        """Whether the sums are float sums of weighted terms."""
        return isinstance(self.brier, float)

    @property
    def brier_total(self) -> float:
        """Sum of (weight times) ``(y - p)**2`` over the events scoring in [0, 1]."""
        return _as_float(self.brier, BRIER_UNIT)

    @property
    def log_loss_total(self) -> float:
        """Sum of (weight times) the clipped log loss over the events scoring in [0, 1]."""
        return _as_float(self.log_loss, LOG_LOSS_UNIT)

    @staticmethod
    def of(x: Array, is_pos: npt.NDArray[np.bool_] | bool, weights: Array | None) -> CalibrationSums:
        """The sums of a batch of checked events (scores not NaN, labels 0/1, weights finite and >= 0)."""
        n = int(x.size)
        if n == 0:  # nothing counted: the sums stay whole numbers, as the counts stay integers
            return CalibrationSums()
        if sums_kernel():
            assert SPEEDUPS is not None
            xs = np.ascontiguousarray(x, dtype=np.float64)
            labels = np.ascontiguousarray(np.asarray(is_pos).reshape(-1))
            if labels.dtype.kind not in "biu":
                labels = labels.astype(np.bool_)
            w = None if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
            positives, outside, brier, log_loss = SPEEDUPS.calibration_sums(xs, labels, labels.dtype.itemsize, w)
            return CalibrationSums(n, positives, outside, brier, log_loss)
        lab = np.broadcast_to(np.asarray(is_pos, dtype=np.bool_), x.shape)
        b, ll, out = _terms(x, lab)
        positives, outside = int(lab.sum()), int(out.sum())
        if weights is None:
            return CalibrationSums(n, positives, outside, _units_sum(b, BRIER_UNIT), _units_sum(ll, LOG_LOSS_UNIT))
        with np.errstate(over="ignore"):  # sums past the largest float: refused where they are added
            return CalibrationSums(n, positives, outside, float(np.sum(weights * b)), float(np.sum(weights * ll)))

    @staticmethod
    def of_counts(values: Array, neg: np.ndarray, pos: np.ndarray) -> CalibrationSums | None:
        """The sums of whole counts of distinct scores (``None`` for weights: their events are not known).

        Each score's terms are worked out once and multiplied by its counts: the sums of a pass over the events
        they stand for, in a pass over the scores (compiled, with 128-bit products, where it is in use).

        Examples
        --------
        >>> import numpy as np
        >>> from streameval.calibration import CalibrationSums
        >>> counts = CalibrationSums.of_counts(np.array([0.2, 0.9]), np.array([2, 0]), np.array([1, 3]))
        >>> scores, labels = np.array([0.2, 0.2, 0.2, 0.9, 0.9, 0.9]), np.array([0, 0, 1, 1, 1, 1]) == 1
        >>> counts == CalibrationSums.of(scores, labels, None)
        True
        """
        if neg.dtype.kind == "f" or pos.dtype.kind == "f":
            return None
        if sums_kernel():
            assert SPEEDUPS is not None
            as_int = [np.ascontiguousarray(c, dtype=np.int64) for c in (neg, pos)]
            found = SPEEDUPS.calibration_sums_counts(np.ascontiguousarray(values, dtype=np.float64), *as_int)
            if found is not None:
                positives, outside, brier, log_loss = found
                return CalibrationSums(int(as_int[0].sum()) + positives, positives, outside, brier, log_loss)
        x = np.concatenate([values, values]).astype(np.float64)
        lab = np.concatenate([np.zeros(values.size, np.bool_), np.ones(values.size, np.bool_)])
        counts = np.concatenate([neg, pos]).astype(object)
        b, ll, out = _terms(x, lab)

        def units(terms: Array, unit: float) -> int:
            return int((_units(terms, unit).astype(object) * counts).sum())

        events, positives, outside = int(counts.sum()), int(counts[lab].sum()), int(counts[out].sum())
        return CalibrationSums(events, positives, outside, units(b, BRIER_UNIT), units(ll, LOG_LOSS_UNIT))

    def plus_events(self, x: Array, is_pos: npt.NDArray[np.bool_]) -> CalibrationSums:
        """These sums and those of a batch of checked events of weight 1: ``self.combined(CalibrationSums.of(x,
        is_pos, None))``, in one compiled call when both are whole units and the batch is a per-event buffer's
        (contiguous float64 scores, bool labels).

        Examples
        --------
        >>> import numpy as np
        >>> from streameval.calibration import CalibrationSums
        >>> s = CalibrationSums.of(np.array([0.9]), np.array([True]), None)
        >>> both = s.plus_events(np.array([0.2, 0.6]), np.array([False, False]))
        >>> both == CalibrationSums.of(np.array([0.9, 0.2, 0.6]), np.array([True, False, False]), None)
        True
        """
        if (
            SPEEDUPS is None
            or self.is_weighted
            or x.dtype != np.float64
            or is_pos.dtype != np.bool_
            or not (x.flags.c_contiguous and is_pos.flags.c_contiguous)
            or x.size != is_pos.size
        ):
            return self.combined(CalibrationSums.of(x, is_pos, None))
        positives, outside, brier, log_loss = SPEEDUPS.calibration_sums(x, is_pos, 1, None)
        # combined's sums, added here: through combined a flush of one event took 7.4-8.7 against 6.1 us
        return CalibrationSums(
            self.events + x.size, self.positives + positives, self.outside + outside,
            self.brier + brier, self.log_loss + log_loss,
        )  # fmt: skip

    def combined(self, other: CalibrationSums, sign: int = 1) -> CalibrationSums:
        """These sums plus (``sign=-1``: less) ``other``'s; ``ValueError`` if more events would go out than came in."""
        events, outside = self.events + sign * other.events, self.outside + sign * other.outside
        positives = self.positives + sign * other.positives
        if min(events, positives, outside) < 0:
            raise ValueError("cannot take out calibration sums that were not added: the result would be negative")
        if not (self.is_weighted or other.is_weighted):
            brier, log_loss = self.brier + sign * other.brier, self.log_loss + sign * other.log_loss
            return CalibrationSums(events, positives, outside, brier, log_loss)
        brier = self.brier_total + sign * other.brier_total
        log_loss = self.log_loss_total + sign * other.log_loss_total
        if events == 0 or sign < 0:  # what is left of a float sum after taking out is never below 0
            brier, log_loss = (max(v, 0.0) if events else 0.0 for v in (brier, log_loss))
        finite = math.isfinite(brier) and math.isfinite(log_loss)  # a log-loss term weighs up to 36 times its weight
        check_sums_finite("w", finite, "the weighted Brier or log-loss sums", "scale the weights down")
        return CalibrationSums(events, positives, outside, brier, log_loss)

    def scaled(self, factor: float) -> CalibrationSums:
        """Every term's weight times ``factor`` (the sums become floats; the event counts stay)."""
        brier, log_loss = self.brier_total * factor, self.log_loss_total * factor
        return CalibrationSums(self.events, self.positives, self.outside, brier, log_loss)

    def to_state(self) -> dict[str, Any]:
        """``{"events", "positives", "outside", "brier", "log_loss"}``: sums in whole units, or floats when weighted."""
        return {
            "events": self.events, "positives": self.positives, "outside": self.outside,
            "brier": self.brier, "log_loss": self.log_loss,
        }  # fmt: skip

    @staticmethod
    def from_state(where: str, d: Any, weighted: bool) -> CalibrationSums:
        """The sums of a :meth:`to_state` mapping; ``FormatError`` if anything is off."""
        require_fields(d, where, {"events", "positives", "outside", "brier", "log_loss"})
        events, positives, outside = d["events"], d["positives"], d["outside"]
        counts = (events, positives, outside)
        if any(type(v) is not int or v < 0 for v in counts) or positives > events or outside > events:
            raise FormatError(
                f"{where}: events, positives and outside must be whole numbers >= 0, none above events, got {counts}"
            )
        sums = []
        for name in ("brier", "log_loss"):
            v = d[name]
            if weighted:
                ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
                v = float(v) if ok else v
            else:
                ok = type(v) is int and v >= 0
            if not ok:
                kind = "a finite float >= 0" if weighted else "a whole number of units >= 0"
                raise FormatError(f"{where}.{name} must be {kind}, got {v!r}")
            sums.append(v)
        return CalibrationSums(events, positives, outside, sums[0], sums[1])


# -- curves ---------------------------------------------------------------------------
class CalibrationBins(NamedTuple):
    """The non-empty bins of a calibration curve.

    ``edges`` are every bin's edges (``n_bins + 1``, empty bins included);
    ``counts`` (events or weight), ``prob_true`` (fraction of positives) and
    ``prob_pred`` (mean score) are those of the non-empty bins, in order.
    """

    edges: Array
    counts: Array
    prob_true: Array
    prob_pred: Array


STRATEGIES = ("uniform", "quantile")


def _check_n_bins(n_bins: Any) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)):
        raise TypeError(f"n_bins must be a whole number, got {n_bins!r}")
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {show(n_bins)}")
    return int(n_bins)


def _quantile_edges(lo: Array, hi: Array, counts: Array, q: Array, exact: bool, whole: bool) -> Array:
    """Edges at the quantiles ``q`` of the scores: numpy's ``percentile`` (linear) for whole counts while exact,
    the weighted inverted CDF for weights, and the inverse of the piecewise-linear CDF of the bins."""
    cum = np.cumsum(counts)
    total = cum[-1]
    if exact and whole:  # the sorted events' values at q * (n - 1), linearly between neighbours (numpy's lerp)
        h = q * (total - 1)
        below = np.floor(h)
        t = h - below
        i = np.minimum(below, total - 1).astype(np.int64)
        a = lo[np.searchsorted(cum, i, side="right")]
        b = lo[np.searchsorted(cum, np.minimum(i + 1, total - 1), side="right")]
        diff = b - a
        return np.where(t >= 0.5, b - diff * (1.0 - t), a + diff * t)
    if exact:  # weights: the smallest score whose cumulative weight reaches q of the total
        i = np.minimum(np.searchsorted(cum, q * total, side="left"), cum.size - 1)
        return lo[i]
    target = q * total
    j = np.minimum(np.searchsorted(cum, target, side="left"), cum.size - 1)
    start = cum[j] - counts[j]
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.clip(np.where(counts[j] > 0, (target - start) / counts[j], 0.0), 0.0, 1.0)
    return lo[j] + frac * (hi[j] - lo[j])


def calibration_bins(
    lo: Array, hi: Array, neg: np.ndarray, pos: np.ndarray, exact: bool, n_bins: int = 10, strategy: str = "uniform"
) -> CalibrationBins:
    """The calibration curve of score counts in [0, 1], as scikit-learn's ``calibration_curve`` bins them.

    ``lo``/``hi`` bound each group of scores (``lo == hi``: distinct scores
    while ``exact``); ``neg``/``pos`` are their counts. A score equal to an
    inner edge belongs to the bin below it, the first bin holds 0. In the
    binned regime a bin's scores are taken as spread evenly between its
    edges, and a bin across a calibration edge is split in proportion.
    """
    n_bins = _check_n_bins(n_bins)
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {list(STRATEGIES)}, got {strategy!r}")
    whole = neg.dtype.kind in "iu" and pos.dtype.kind in "iu"
    given = neg + pos  # as given: running sums of whole counts are taken as integers
    if given.size == 0 or given.sum() == 0:
        empty = np.zeros(0)
        return CalibrationBins(_uniform_edges(n_bins).copy(), empty, empty, empty)
    if strategy == "uniform":
        edges = _uniform_edges(n_bins).copy()
    else:
        q = (_uniform_edges(n_bins) * 100) / 100  # numpy's percentile divides by 100 again
        edges = _quantile_edges(lo, hi, given.astype(np.float64), q, exact, whole)
    inner = edges[1:-1]
    if exact:
        total, true, sums = _exact(lo, given, pos, inner)
    else:
        total, true, sums = _spread(lo, hi, given, pos, inner)
    keep = total > 0
    return CalibrationBins(edges, total[keep], true[keep] / total[keep], sums[keep] / total[keep])


def _uniform_edges(n_bins: int) -> Array:
    """``linspace(0, 1, n_bins + 1)``, made once per number of bins up to 1,024 (read-only: callers copy what they
    hand out); more bins are made each time, so that the cache stays small."""
    return _small_uniform_edges(n_bins) if n_bins <= 1024 else np.linspace(0.0, 1.0, n_bins + 1)


@functools.lru_cache(maxsize=64)
def _small_uniform_edges(n_bins: int) -> Array:
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    edges.flags.writeable = False
    return edges


def _compiled_bins(
    kernel: str, scores: tuple[Array, ...], given: Array, given_pos: Array, inner: Array
) -> tuple[Array, Array, Array] | None:
    """Events, positives and sums of scores per calibration bin by the compiled ``kernel`` (``calibration_spread``
    of the groups' bounds, ``calibration_exact`` of distinct scores); ``None`` where the numpy twin runs: without
    the compiled module, for counts that are not int64 or float64, and when the kernel declines the order."""
    kinds = (given.dtype, given_pos.dtype)
    if SPEEDUPS is None or not all(k in (np.int64, np.float64) for k in kinds):
        return None
    out = np.empty((3, inner.size + 1))
    floats = [np.ascontiguousarray(a, dtype=np.float64) for a in scores]
    given_floats, pos_floats = (k == np.float64 for k in kinds)
    counts, positives = np.ascontiguousarray(given), np.ascontiguousarray(given_pos)
    edges = np.ascontiguousarray(inner, dtype=np.float64)
    if not getattr(SPEEDUPS, kernel)(*floats, counts, given_floats, positives, pos_floats, edges, out):
        return None
    return out[0], out[1], out[2]


def _exact(values: Array, given: Array, given_pos: Array, inner: Array) -> tuple[Array, Array, Array]:
    """Per calibration bin: events, positives and the sum of scores of distinct scores ``values`` (ascending).

    ``given`` and ``given_pos`` are their counts as kept; each score goes to the bin ``searchsorted`` gives it,
    its terms added in order (as ``bincount`` adds them).
    """
    compiled = _compiled_bins("calibration_exact", (values,), given, given_pos, inner)  # the same sums
    if compiled is not None:
        return compiled
    counts = given.astype(np.float64)  # the float sum of the two counts, as neg + pos in floats gives it
    ids = np.searchsorted(inner, values, side="left")
    total, true, sums = (
        np.bincount(ids, weights=v, minlength=inner.size + 1).astype(np.float64)
        for v in (counts, given_pos.astype(np.float64), counts * values)
    )
    return total, true, sums


def _spread(lo: Array, hi: Array, given: Array, given_pos: Array, inner: Array) -> tuple[Array, Array, Array]:
    """Per calibration bin: events, positives and the sum of scores, each group spread evenly over [lo, hi].

    ``given`` and ``given_pos`` are the counts as kept (their running sums taken as integers when whole).
    """
    compiled = _compiled_bins("calibration_spread", (lo, hi), given, given_pos, inner)  # the same operations
    if compiled is not None:
        return compiled
    counts = given.astype(np.float64)  # the float sum of the two counts, as neg + pos in floats gives it
    width = hi - lo
    cum = np.zeros((3, lo.size + 1))
    cum[0, 1:], cum[1, 1:] = running_sum(given), running_sum(given_pos)
    pos = given_pos.astype(np.float64, copy=False)
    np.cumsum(counts * (lo + hi) / 2.0, out=cum[2, 1:])
    j = np.searchsorted(hi, inner, side="right")  # groups before j end at or below the edge
    up_to = cum[:, j]
    inside = j < lo.size
    jj = np.minimum(j, lo.size - 1)
    straddles = inside & (lo[jj] < inner) & (width[jj] > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(straddles, (inner - lo[jj]) / np.where(width[jj] > 0, width[jj], 1.0), 0.0)
    part = np.stack([counts[jj] * frac, pos[jj] * frac, counts[jj] * frac * (lo[jj] + inner) / 2.0])
    at_edges = up_to + part
    everything = cum[:, -1:]
    below = np.concatenate([np.zeros((3, 1)), at_edges, everything], axis=1)
    per_bin = np.maximum(np.diff(below, axis=1), 0.0)
    return per_bin[0], per_bin[1], per_bin[2]


def calibration_errors(bins: CalibrationBins) -> tuple[float, float]:
    """ECE (the bins' ``|prob_true - prob_pred|`` weighted by their counts) and MCE (its largest value)."""
    if bins.counts.size == 0:
        return math.nan, math.nan
    gap = np.abs(bins.prob_true - bins.prob_pred)
    return float(np.sum(bins.counts * gap) / np.sum(bins.counts)), float(gap.max())


def check_probabilities(where: str, sums: CalibrationSums | None, low: float, high: float) -> str | None:
    """Why calibration metrics are undefined for these counts, or ``None`` when they are defined."""
    if sums is not None and sums.outside:
        return (
            f"{sums.outside} of {sums.events} events score outside [0, 1]: "
            f"{where} need probabilities (clip or transform the scores)"
        )
    if low < 0.0 or high > 1.0:
        return f"scores range over [{low!r}, {high!r}], outside [0, 1]: {where} need probabilities"
    return None


def plus(a: CalibrationSums | None, b: CalibrationSums | None, sign: int = 1) -> CalibrationSums | None:
    """``a`` plus (``sign=-1``: less) ``b``; ``None`` (not known) when either is not known."""
    return None if a is None or b is None else a.combined(b, sign)


def decode_sums(d: Mapping[str, Any], weighted: bool) -> CalibrationSums | None:
    """The ``calibration`` field of a saved state, or ``None`` when the state predates it."""
    if "calibration" not in d or d["calibration"] is None:
        return None
    return CalibrationSums.from_state("calibration", d["calibration"], weighted)
