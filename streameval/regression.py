"""RegressionAccumulator: merged moments of targets and errors, and a residual histogram."""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt

from ._events import FLUSH_EVERY
from ._persist import Mergeable, Persistable
from ._validation import as_scores, as_weights, check_real, check_same_length
from .bins import Bins
from .confusion import ratio
from .state import LabelledCounts

__all__ = ["Moments", "QuantileEstimate", "RegressionAccumulator", "RegressionReport"]

_EPS = float(np.finfo(np.float64).eps)  # scikit-learn's floor on |y| in MAPE


@dataclass(frozen=True)
class Moments:
    """Total weight, weighted mean and sum of squared deviations of one quantity.

    Two summaries combine with the parallel formulas of Chan, Golub and LeVeque,
    which never sum raw squares of large numbers.

    Examples
    --------
    >>> from streameval.regression import Moments
    >>> a, b = Moments.of([1e9 + 1, 1e9 + 2]), Moments.of([1e9 + 3])
    >>> both = a.combine(b)
    >>> both.mean - 1e9, both.m2
    (2.0, 2.0)
    """

    weight: float
    mean: float
    m2: float

    @classmethod
    def of(cls, x: npt.ArrayLike, w: npt.ArrayLike | None = None) -> Moments:
        """Moments of a batch, by two passes over it."""
        values = np.asarray(x, dtype=np.float64)
        if values.size == 0:
            return cls(0.0, 0.0, 0.0)
        if w is None:
            mean = float(values.mean())
            return cls(float(values.size), mean, float(np.sum((values - mean) ** 2)))
        weights = np.asarray(w, dtype=np.float64)
        total = float(weights.sum())
        if total == 0:
            return cls(0.0, 0.0, 0.0)
        mean = float(np.dot(weights, values) / total)
        return cls(total, mean, float(np.dot(weights, (values - mean) ** 2)))

    def combine(self, other: Moments) -> Moments:
        """The moments of both sets together."""
        if other.weight == 0:
            return self
        if self.weight == 0:
            return other
        total = self.weight + other.weight
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.weight / total)
        m2 = self.m2 + other.m2 + delta * delta * (self.weight * other.weight / total)
        return Moments(total, mean, m2)


class QuantileEstimate(NamedTuple):
    """A quantile read off a histogram: an estimate and bounds the exact value lies in."""

    value: float
    lower: float
    upper: float


@dataclass(frozen=True, eq=False)
class RegressionReport:
    """Every regression metric of an accumulator, frozen at the time of ``get()``.

    Error ``e = y_pred - y``. Weighted means use the event weights.

    Examples
    --------
    >>> import streameval as se
    >>> acc = se.RegressionAccumulator()
    >>> acc.update_many([3.0, -0.5, 2.0, 7.0], [2.5, 0.0, 2.0, 8.0])
    >>> r = acc.get()
    >>> r.mse, r.mae, round(r.r2, 6), r.max_error
    (0.375, 0.5, 0.948608, 1.0)
    """

    n: int
    weight: float
    y: Moments = field(repr=False)
    error: Moments = field(repr=False)
    sum_abs_error: float = field(repr=False)
    sum_abs_pct_error: float = field(repr=False)
    max_error: float
    bins: Bins = field(repr=False)
    abs_error_keys: npt.NDArray[np.int64] = field(repr=False)
    abs_error_counts: np.ndarray = field(repr=False)

    SCALAR_METRICS: ClassVar[tuple[str, ...]] = (
        "n", "mse", "rmse", "mae", "mape", "r2", "explained_variance", "bias",
        "error_variance", "error_std", "error_sample_std", "max_error", "median_absolute_error",
    )  # fmt: skip

    @property
    def sse(self) -> float:
        """Weighted sum of squared errors, from the error moments."""
        return self.error.m2 + self.error.weight * self.error.mean**2

    @property
    def mse(self) -> float:
        """Mean squared error."""
        return ratio(self.sse, self.weight)

    @property
    def rmse(self) -> float:
        """Root mean squared error."""
        return math.sqrt(self.mse) if not math.isnan(self.mse) else math.nan

    @property
    def mae(self) -> float:
        """Mean absolute error."""
        return ratio(self.sum_abs_error, self.weight)

    @property
    def mape(self) -> float:
        """Mean of |e| / max(|y|, machine epsilon), as scikit-learn computes it."""
        return ratio(self.sum_abs_pct_error, self.weight)

    @property
    def r2(self) -> float:
        """1 - SSE / SST; ``nan`` for a constant target predicted exactly, ``-inf`` if not exactly."""
        return 1.0 - ratio(self.sse, self.y.m2) if self.weight else math.nan

    @property
    def explained_variance(self) -> float:
        """1 - Var(e) / Var(y)."""
        return 1.0 - ratio(self.error.m2, self.y.m2) if self.weight else math.nan

    @property
    def bias(self) -> float:
        """Mean error (positive: predictions too high)."""
        return self.error.mean if self.weight else math.nan

    @property
    def error_variance(self) -> float:
        """Variance of the error around its mean (population form, divided by the total weight)."""
        return ratio(self.error.m2, self.weight)

    @property
    def error_std(self) -> float:
        """Standard deviation of the error (population form)."""
        v = self.error_variance
        return math.sqrt(v) if not math.isnan(v) else math.nan

    @property
    def error_sample_std(self) -> float:
        """Sample standard deviation of the error (divided by total weight - 1)."""
        v = ratio(self.error.m2, self.weight - 1) if self.weight > 1 else math.nan
        return math.sqrt(v) if not math.isnan(v) else math.nan

    def abs_error_quantile(self, q: float) -> QuantileEstimate:
        """The ``q`` quantile of |e| from the residual histogram, with bounds.

        The quantile is the smallest |e| whose cumulative weight reaches
        ``q`` times the total; ``lower`` and ``upper`` are the edges of the
        bins it can lie in (for an even count, ``numpy.median`` averages two
        values, which the bounds hold as well). ``value`` is the middle of the
        bounds.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.RegressionAccumulator()
        >>> acc.update_many([0.0] * 5, [0.1, -0.2, 0.3, -0.4, 0.5])
        >>> est = acc.get().abs_error_quantile(0.5)
        >>> est.lower <= 0.3 <= est.upper, round(est.upper / est.lower, 3) <= 1.008
        (True, True)
        """
        p = check_real("q", q)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"q must be between 0 and 1, got {q!r}")
        counts = self.abs_error_counts.astype(np.float64)
        if counts.size == 0 or counts.sum() == 0:
            return QuantileEstimate(math.nan, math.nan, math.nan)
        cum = np.cumsum(counts)
        target = p * cum[-1]
        lo = int(np.searchsorted(cum, target, side="left"))
        hi = int(np.searchsorted(cum, target, side="right"))
        lo, hi = min(lo, cum.size - 1), min(hi, cum.size - 1)
        keys = self.abs_error_keys
        lower = float(self.bins.lower_edges([keys[lo]])[0])
        top = keys[hi] + 1
        upper = float(self.bins.lower_edges([top])[0]) if top <= self.bins.key_max else math.inf
        lower = max(lower, 0.0)
        upper = min(upper, self.max_error)
        return QuantileEstimate((lower + upper) / 2.0, lower, upper)

    @property
    def median_absolute_error(self) -> float:
        """Median of |e|, estimated from the residual histogram (see ``abs_error_quantile``)."""
        return self.abs_error_quantile(0.5).value

    def to_dict(self) -> dict[str, float]:
        """Every scalar metric by name."""
        return {name: getattr(self, name) for name in self.SCALAR_METRICS}


class RegressionAccumulator(Mergeable, Persistable):
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

    def __init__(self, bins: Bins | None = None) -> None:
        if bins is None:
            bins = Bins.range_free()
        if not isinstance(bins, Bins):
            raise TypeError(f"bins must be a streameval Bins, got {bins!r}")
        self.bins = bins
        self._n = 0
        self._y = Moments(0.0, 0.0, 0.0)
        self._e = Moments(0.0, 0.0, 0.0)
        self._sum_abs = 0.0
        self._sum_ape = 0.0
        self._max_abs = 0.0
        self._hist = LabelledCounts(2 * bins.n_codes)
        self._reset_buffers()

    def _reset_buffers(self) -> None:
        self._buf_y = array("d")
        self._buf_p = array("d")
        self._buf_w = array("d")
        self._buf_weighted = False

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
        yv = check_real("y", y, finite=True)
        pv = check_real("y_pred", y_pred, finite=True)
        wv = check_real("w", w, finite=True, nonnegative=True)
        self._buf_y.append(yv)
        self._buf_p.append(pv)
        self._buf_w.append(wv)
        if wv != 1.0:
            self._buf_weighted = True
        if len(self._buf_y) >= FLUSH_EVERY:
            self._flush()

    def _flush(self) -> None:
        if not len(self._buf_y):
            return
        y = np.frombuffer(self._buf_y, dtype=np.float64).copy()
        p = np.frombuffer(self._buf_p, dtype=np.float64).copy()
        w = np.frombuffer(self._buf_w, dtype=np.float64).copy() if self._buf_weighted else None
        self._reset_buffers()
        self._ingest(y, p, w)

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
        yv = as_scores("y", y)
        pv = as_scores("y_pred", y_pred)
        check_same_length(("y", yv), ("y_pred", pv))
        for name, arr in (("y", yv), ("y_pred", pv)):
            bad = np.flatnonzero(~np.isfinite(arr))
            if bad.size:
                raise ValueError(f"{name} must be finite, got {float(arr[bad[0]])!r} at index {bad[0]}")
        weights = as_weights("w", w, yv.size)
        self._ingest(yv, pv, weights)

    def _ingest(self, y: np.ndarray, p: np.ndarray, w: np.ndarray | None) -> None:
        if y.size == 0:
            return
        e = p - y
        abs_e = np.abs(e)
        ape = abs_e / np.maximum(np.abs(y), _EPS)
        if w is None:
            sum_abs, sum_ape = math.fsum(abs_e), math.fsum(ape)
        else:
            sum_abs, sum_ape = math.fsum(abs_e * w), math.fsum(ape * w)
        y_m = Moments.of(y, w)
        e_m = Moments.of(e, w)
        codes = self.bins.labelled_codes(abs_e, False)
        flat = self._hist.flat_index(codes)
        tally = self._hist.tally(flat, w, None)
        # everything computed: apply
        self._hist.apply(tally, w is not None)
        self._n += int(y.size)
        self._y = self._y.combine(y_m)
        self._e = self._e.combine(e_m)
        self._sum_abs += sum_abs
        self._sum_ape += sum_ape
        self._max_abs = max(self._max_abs, float(abs_e.max()))

    def get(self) -> RegressionReport:
        """A frozen report of every metric; the accumulated state does not change."""
        self._flush()
        codes, counts = self._hist.nonzero()
        keys, _ = self.bins.decode(codes)
        order = np.argsort(keys, kind="stable")
        return RegressionReport(
            n=self._n,
            weight=self._y.weight,
            y=self._y,
            error=self._e,
            sum_abs_error=self._sum_abs,
            sum_abs_pct_error=self._sum_ape,
            max_error=self._max_abs if self._n else math.nan,
            bins=self.bins,
            abs_error_keys=keys[order],
            abs_error_counts=counts[order],
        )

    # -- merging ------------------------------------------------------------
    def copy(self) -> RegressionAccumulator:
        """An independent accumulator with the same state."""
        self._flush()
        new = RegressionAccumulator.__new__(RegressionAccumulator)
        new.bins = self.bins
        new._n, new._y, new._e = self._n, self._y, self._e
        new._sum_abs, new._sum_ape, new._max_abs = self._sum_abs, self._sum_ape, self._max_abs
        new._hist = self._hist.copy()
        new._reset_buffers()
        return new

    def _check_mergeable(self, other: Any) -> None:
        if not isinstance(other, RegressionAccumulator):
            raise TypeError(f"can only merge a RegressionAccumulator with another, got {type(other).__name__}")
        if self.bins != other.bins:
            raise ValueError(f"cannot merge accumulators whose bins differ: {self.bins!r} and {other.bins!r}")

    def _merge_in(self, other: RegressionAccumulator) -> None:
        other._flush()
        self._flush()
        self._n += other._n
        self._y = self._y.combine(other._y)
        self._e = self._e.combine(other._e)
        self._sum_abs += other._sum_abs
        self._sum_ape += other._sum_ape
        self._max_abs = max(self._max_abs, other._max_abs)
        self._hist.merge_in(other._hist)

    def __repr__(self) -> str:
        return f"RegressionAccumulator(bins={self.bins!r}, n={self._n + len(self._buf_y)})"
