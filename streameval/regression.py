"""RegressionAccumulator: merged moments of targets and errors, and a residual histogram."""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ._codec import FormatError, decode_bins, decode_float, decode_histogram, require_fields
from ._events import FLUSH_EVERY, LARGE_VALUE, LARGE_WEIGHT, FloatEvents, float_columns, small_float_arrays
from ._validation import as_scores, as_weights, check_real, check_same_length, check_sums_finite, check_total
from .bins import Bins
from .histogram import ScoreHistogram
from .protocol import AccumulatorBase
from .regression_report import ExactSum, Moments, QuantileEstimate, RegressionReport

__all__ = ["Moments", "QuantileEstimate", "RegressionAccumulator", "RegressionReport"]


_EPS = float(np.finfo(np.float64).eps)  # scikit-learn's floor on |y| in MAPE
_PLAIN = (float, np.float64, int, bool)  # values a revert takes out without a check of its own (when finite)
_FLOAT_MAX = float(np.finfo(np.float64).max)


class RegressionAccumulator(AccumulatorBase):
    """Streaming, mergeable evaluation of a regressor.

    The state is the total weight, the Chan-merged moments of the target and
    of the error, sums of absolute and absolute percentage errors, the largest
    absolute error, and a range-free histogram of absolute errors for
    quantiles. Merging combines these exactly as one pass would (moments up
    to floating-point rounding).

    Parameters
    ----------
    bins : Bins, optional
        Binning scheme of the absolute errors; default range-free (relative
        width 2**-7, so quantiles come within 0.8% of the exact value).

    Examples
    --------
    >>> import streameval as se
    >>> acc = se.RegressionAccumulator()
    >>> for y, y_pred in [(1.0, 1.5), (2.0, 1.0), (3.0, 3.5)]:
    ...     acc.update(y, y_pred)
    >>> r = acc.get()
    >>> round(r.mse, 6), round(r.bias, 6)
    (0.5, 0.0)
    """

    kind: ClassVar[str] = "regression"

    def __init__(self, bins: Bins | None = None) -> None:
        bins = Bins.checked(bins)
        self.bins = bins
        self._n = 0
        self._y = Moments(0.0, 0.0, 0.0)
        self._e = Moments(0.0, 0.0, 0.0)
        self._sum_abs = ExactSum(0.0)  # of |e| and of |e| / max(|y|, eps), weighted: kept exact through take-outs
        self._sum_ape = ExactSum(0.0)
        self._lost = False  # a take-out left moments whose digits were mostly lost to rounding
        self._max_abs = 0.0
        self._hist = ScoreHistogram(bins)  # absolute errors, all counted as negatives
        self._reset_buffers()

    def _reset_buffers(self) -> None:
        # predictions taken out one by one, (y, y_pred) in turn: out of the counts (and of n) at once, out of the
        # moments, the sums and max_abs at the next filing, once the per-event updates stored before them are in
        self._out = array("d")
        self._buffer = FloatEvents(2, self._flush, self._update_checked)
        self.update = self._buffer.update  # type: ignore[method-assign]  # plain events stored in C

    def update(self, y: float, y_pred: float, w: float = 1.0) -> None:
        """Count one prediction.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.RegressionAccumulator()
        >>> acc.update(2.0, 2.5)
        >>> acc.get().mae
        0.5
        """
        self._buffer.update(y, y_pred, w)

    def _update_checked(self, y: float, y_pred: float, w: float = 1.0) -> None:
        """The per-event path for anything but plain finite floats: check, then store."""
        yv = check_real("y", y, finite=True)
        pv = check_real("y_pred", y_pred, finite=True)
        wv = check_real("w", w, finite=True, nonnegative=True)
        if wv > LARGE_WEIGHT or max(abs(yv), abs(pv)) > LARGE_VALUE:  # counted at once: a refusal is this call's
            self._flush()
            self._ingest(np.array([yv]), np.array([pv]), None if wv == 1.0 else np.array([wv]))
            return
        self._buffer.push(yv, pv, wv)

    _update_checked.__qualname__ = "RegressionAccumulator.update"  # as a wrong call's error says

    def _flush(self) -> None:
        """The per-event updates stored, then the predictions taken out one by one out of the moments and sums,
        as ``-=`` of them would (once they are all counted, whatever their order: a prediction taken out may be
        one of those stored, another of the same absolute error filed before having left the counts)."""
        if len(self._buffer):
            (y, p), w = float_columns(self._buffer)
            self._ingest(y, p, w)  # a refusal (a total weight that overflows) keeps the events buffered
            self._buffer.clear()
        if len(self._out):
            rows = np.frombuffer(self._out, dtype=np.float64).reshape(-1, 2)
            y, p = rows[:, 0].copy(), rows[:, 1].copy()
            self._out = array("d")
            abs_e = np.abs(p - y)
            ape = abs_e / np.maximum(np.abs(y), _EPS)
            self._remove_moments(Moments.of(y), Moments.of(p - y), ExactSum.of(abs_e), ExactSum.of(ape))

    def update_many(self, y: npt.ArrayLike, y_pred: npt.ArrayLike, w: npt.ArrayLike | float | None = None) -> None:
        """Count many predictions; all of them or, on any bad input, none.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.RegressionAccumulator()
        >>> acc.update_many([1.0, 2.0], [1.0, float("inf")])
        Traceback (most recent call last):
        ...
        ValueError: y_pred must be finite, got inf at index 1
        """
        if not len(self._out) and (  # a small batch of plain predictions (and weights): per-event updates
            small_float_arrays(y, y_pred) and self._buffer.push_many(y, y_pred)
            if w is None
            else small_float_arrays(y, y_pred, w) and self._buffer.push_many(y, y_pred, w)
        ):
            return
        yv = as_scores("y", y)
        pv = as_scores("y_pred", y_pred)
        check_same_length(("y", yv), ("y_pred", pv))
        for name, arr in (("y", yv), ("y_pred", pv)):
            bad = np.flatnonzero(~np.isfinite(arr))
            if bad.size:
                raise ValueError(f"{name} must be finite, got {float(arr[bad[0]])!r} at index {bad[0]}")
        weights = as_weights("w", w, yv.size)
        if len(self._out):  # the predictions taken out one by one leave the moments first, as they left the counts
            self._flush()
        self._ingest(yv, pv, weights)

    def _ingest(self, y: np.ndarray, p: np.ndarray, w: np.ndarray | None) -> None:
        if y.size == 0:
            return
        with np.errstate(over="ignore", invalid="ignore"):  # values past 1e154: checked below
            e = p - y
            abs_e = np.abs(e)
            ape = abs_e / np.maximum(np.abs(y), _EPS)
            if w is None:
                sum_abs, sum_ape = ExactSum.of(abs_e), ExactSum.of(ape)
            else:
                sum_abs, sum_ape = ExactSum.of(abs_e, w), ExactSum.of(ape, w)
            y_m = Moments.of(y, w)
            e_m = Moments.of(e, w)
        check_total("w", self._y.weight + y_m.weight)
        added = self._added(y_m, e_m, sum_abs, sum_ape, "y, y_pred")
        self._hist.add(abs_e, False, w)  # checks the total weight first
        # everything computed: apply
        self._n += int(y.size)
        self._y, self._e, self._sum_abs, self._sum_ape = added
        self._max_abs = max(self._max_abs, float(abs_e.max()))

    def _added(
        self, y: Moments, e: Moments, sum_abs: ExactSum, sum_ape: ExactSum, name: str
    ) -> tuple[Moments, Moments, ExactSum, ExactSum]:
        """The moments and sums with these added; ``ValueError`` naming ``name`` where any would not be finite."""
        new_y, new_e = self._y.combine_finite(y, name), self._e.combine_finite(e, name)
        new_abs, new_ape = self._sum_abs.plus(sum_abs), self._sum_ape.plus(sum_ape)
        check_sums_finite(name, new_abs.is_finite() and new_ape.is_finite())
        return new_y, new_e, new_abs, new_ape

    def get(self) -> RegressionReport:
        """A frozen report of every metric; the accumulated state does not change."""
        self._flush()
        keys, counts, _ = self._hist.histogram()
        return RegressionReport(
            n=self._n,
            weight=self._y.weight,
            y=self._y,
            error=self._e,
            sum_abs_error=self._sum_abs.value,
            sum_abs_pct_error=self._sum_ape.value,
            max_error=self._max_abs if self._n else math.nan,
            bins=self.bins,
            abs_error_keys=keys,
            abs_error_counts=counts,
        )

    # -- merging ------------------------------------------------------------
    def copy(self) -> RegressionAccumulator:
        """An independent accumulator with the same state."""
        self._flush()
        new = RegressionAccumulator.__new__(RegressionAccumulator)
        new.bins = self.bins
        new._n, new._y, new._e = self._n, self._y, self._e
        new._sum_abs, new._sum_ape, new._max_abs = self._sum_abs, self._sum_ape, self._max_abs
        new._lost = self._lost
        new._hist = self._hist.copy()
        new._reset_buffers()
        return new

    def emptied(self) -> RegressionAccumulator:
        """A new accumulator of this one's configuration (bins) and no events.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.RegressionAccumulator()
        >>> acc.update(1.0, 1.5)
        >>> acc.emptied().n, acc.n
        (0, 1)
        """
        return RegressionAccumulator(self.bins)

    def _less_itself(self) -> RegressionAccumulator:
        """No events, without copying the counts (unweighted ones start afresh alike; weighted: the general path)."""
        self._flush()  # stored per-event updates may weigh the counts
        return super()._less_itself() if self._hist.is_weighted else self.emptied()

    def _check_mergeable(self, other: Any) -> None:
        if not isinstance(other, RegressionAccumulator):
            raise TypeError(f"can only merge a RegressionAccumulator with another, got {type(other).__name__}")
        if self.bins != other.bins:
            raise ValueError(f"cannot merge accumulators whose bins differ: {self.bins!r} and {other.bins!r}")

    def _merge_in(self, other: RegressionAccumulator, sign: int) -> None:
        other._flush()
        self._flush()
        if sign > 0:
            merged = "the merged targets and predictions"
            added = self._added(other._y, other._e, other._sum_abs, other._sum_ape, merged)
            self._hist.merge_in(other._hist)
            self._n += other._n
            self._y, self._e, self._sum_abs, self._sum_ape = added
            self._max_abs = max(self._max_abs, other._max_abs)
            return
        if other._n > self._n:
            raise ValueError(f"cannot take out {other._n} events from {self._n}: the result would be negative")
        self._hist.merge_in(other._hist, -1)  # checks the counts before anything changes
        self._n -= other._n
        self._remove_moments(other._y, other._e, other._sum_abs, other._sum_ape)

    def _scale_in(self, factor: float) -> None:
        self._flush()
        self._y = self._y.scaled(factor)
        self._e = self._e.scaled(factor)
        self._sum_abs = self._sum_abs.scaled(factor)
        self._sum_ape = self._sum_ape.scaled(factor)
        self._hist.scale_in(factor)

    def revert(self, y: float, y_pred: float, w: float = 1.0) -> None:
        """Take one prediction counted before back out.

        Counts are exact; moments are exact up to the rounding of a float
        subtraction, which is relative to what is taken out. The sums of
        absolute and percentage errors are kept to twice a float's
        precision: taking out a target of 0's percentage error (about
        4.5e15 times its error) leaves the sum of the others, not the
        rounding of that term. ``max_error`` becomes an upper
        bound (the top of the highest non-empty error bin) when the largest
        error is taken out; no bin holds the errors of weight 0, which it then
        leaves out (where only those are left, it stays as it was).

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.RegressionAccumulator()
        >>> acc.update_many([1.0, 2.0, 3.0], [1.5, 2.0, 5.0])
        >>> acc.revert(3.0, 5.0)
        >>> acc.get().n, acc.get().mae
        (2, 0.25)
        """
        plain = type(y) in _PLAIN and type(y_pred) in _PLAIN and type(w) in (float, int) and w == 1
        # finite values a float holds: anything else (inf, NaN, an int beyond a float) the checked path explains
        if plain and abs(y) < _FLOAT_MAX and abs(y_pred) < _FLOAT_MAX and self._take_out_filed(float(y), float(y_pred)):
            return
        one = self.emptied()
        one.update(y, y_pred, w)
        self -= one

    def _take_out_filed(self, y: float, y_pred: float) -> bool:
        """One plain prediction taken out of the counts of absolute errors filed so far, without filing the
        per-event updates stored since (whether they held its error's bin); its moments and sums follow at the
        next filing."""
        if not self._hist.take_out_one(abs(y_pred - y), False):
            return False
        self._n -= 1
        self._out.append(y)
        self._out.append(y_pred)
        if len(self._out) >= 2 * FLUSH_EVERY:
            self._flush()
        return True

    def _remove_moments(self, y: Moments, e: Moments, sum_abs: ExactSum, sum_ape: ExactSum) -> None:
        """The moments, sums and bound of the largest error left once predictions of these moments and sums are
        out of the counts (and of n)."""
        if self._n == 0:
            self._y = self._e = Moments(0.0, 0.0, 0.0)
            self._sum_abs = self._sum_ape = ExactSum(0.0)
            self._max_abs = 0.0
            return
        before = (self._y, self._e)
        self._y = self._y.remove(y)
        self._e = self._e.remove(e)
        self._lost = self._lost or before[0].lost_in(self._y) or before[1].lost_in(self._e)
        if self._n == 1:  # one event has no spread, whatever rounding says
            self._y = Moments(self._y.weight, self._y.mean, 0.0, self._y.mean_lo)
            self._e = Moments(self._e.weight, self._error_of_one(), 0.0)
        self._sum_abs = self._sum_abs.minus(sum_abs)
        self._sum_ape = self._sum_ape.minus(sum_ape)
        # the largest |e| left is not known exactly: at most the top of the highest non-empty bin (none holds
        # predictions of weight 0: where only those are left, the bound stays)
        keys, _, _ = self._hist.histogram()
        if keys.size and keys[-1] < self.bins.key_max:
            self._max_abs = min(self._max_abs, float(self.bins.lower_edges([keys[-1] + 1])[0]))

    def lost_to_rounding(self) -> bool:
        """Whether taking predictions out left moments of targets or errors whose digits were mostly lost to
        rounding (see :meth:`AccumulatorBase.lost_to_rounding`); the sums of absolute and percentage errors stay
        exact."""
        self._flush()
        return self._lost

    def _error_of_one(self) -> float:
        """The error of the one event left: the mean the moments kept, or 0 where its bin of |error| holds no
        error whose square is above 0 (a prediction that was exact: its squared error 0, as counted alone, not a
        rounding of the subtraction)."""
        keys, _, _ = self._hist.histogram()
        if keys.size == 1:
            top = float(self.bins.upper_edges(keys)[0])
            if top * top == 0.0:
                return 0.0
        return self._e.mean

    @property
    def n(self) -> int:
        """Number of predictions counted (whatever their weights)."""
        return self._n + len(self._buffer)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RegressionAccumulator):
            return NotImplemented
        if self.bins != other.bins:
            return False
        self._flush()
        other._flush()
        mine = (self._n, self._y, self._e, self._sum_abs, self._sum_ape, self._max_abs)
        theirs = (other._n, other._y, other._e, other._sum_abs, other._sum_ape, other._max_abs)
        return mine == theirs and self._hist.same(other._hist)

    __hash__ = None  # type: ignore[assignment]

    # -- state --------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        """The state: bins, event count, moments of y and of the error, sums, maximum and the |e| histogram.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.RegressionAccumulator()
        >>> acc.update_many([1.0, 2.0], [1.5, 2.0])
        >>> acc.to_state()["n"], acc.to_state()["sum_abs_error"]
        (2, 0.5)
        >>> se.RegressionAccumulator.from_state(acc.to_state()) == acc
        True
        """
        self._flush()
        keys, neg, _ = self._hist.histogram()
        return {
            "bins": self.bins.to_dict(),
            "n": self._n,
            "y": self._y.to_list(),
            "error": self._e.to_list(),
            "sum_abs_error": self._sum_abs.to_state(),
            "sum_abs_pct_error": self._sum_ape.to_state(),
            "max_abs_error": self._max_abs,
            "weighted": self._hist.is_weighted,
            "abs_error_histogram": {"keys": keys, "neg": neg, "pos": np.zeros(keys.size, dtype=neg.dtype)},
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> RegressionAccumulator:
        """The accumulator of a :meth:`to_state` mapping; ``FormatError`` if anything in it is inconsistent."""
        d = dict(state)
        fields = {"bins", "n", "y", "error", "sum_abs_error", "sum_abs_pct_error", "max_abs_error", "weighted"}
        require_fields(d, "state", fields | {"abs_error_histogram"})
        bins = decode_bins(d["bins"])
        n = d["n"]
        if isinstance(n, np.integer):
            n = int(n)
        if type(n) is not int or n < 0:
            raise FormatError(f"n must be a non-negative integer, got {n!r}")
        moments = [Moments.from_list(name, d[name]) for name in ("y", "error")]
        if moments[0].weight != moments[1].weight:
            raise FormatError("y and error must have the same total weight")
        sum_abs, sum_ape = (ExactSum.from_state(f, d[f]) for f in ("sum_abs_error", "sum_abs_pct_error"))
        max_abs = decode_float("max_abs_error", d["max_abs_error"])
        if not (math.isfinite(max_abs) and max_abs >= 0):
            raise FormatError(f"max_abs_error must be finite and >= 0, got {max_abs!r}")
        weighted = d["weighted"]
        if not isinstance(weighted, bool) or (not weighted and moments[0].weight != n):
            raise FormatError("weighted must be a boolean, and without weights the total weight must equal n")
        _, counts, pos = decode_histogram("abs_error_histogram", d["abs_error_histogram"], bins, weighted)
        if pos.any():
            raise FormatError("abs_error_histogram.pos must be all zero")
        if not math.isclose(float(counts.sum()), moments[0].weight, rel_tol=1e-9):
            raise FormatError(
                f"abs_error_histogram counts {counts.sum().item()!r}, the total weight is {moments[0].weight!r}"
            )
        acc = cls(bins=bins)
        acc._hist.load("abs_error_histogram", d["abs_error_histogram"], weighted)
        acc._n, acc._y, acc._e = n, moments[0], moments[1]
        acc._sum_abs, acc._sum_ape, acc._max_abs = sum_abs, sum_ape, max_abs
        return acc

    def __repr__(self) -> str:
        return f"RegressionAccumulator(bins={self.bins!r}, n={self.n})"
