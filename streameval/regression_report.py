"""RegressionReport: every regression metric, a pure view over merged moments and an absolute-error histogram."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt

from ._codec import FormatError, decode_float
from ._report_output import SummaryAndPage
from ._validation import check_real, check_sums_finite, show
from .bins import Bins
from .confusion import ratio

__all__ = ["ExactSum", "Moments", "QuantileEstimate", "RegressionReport"]


_BLOCK = 1 << 15  # values a block when the moments of a batch are taken
_LOST_SHARE = 2.0**-20  # a spread left below this share of the one before a take-out: its digits lost to rounding


def _times_over(a: float, b: float, c: float) -> float:
    """``a * b / c``; ``a * (b / c)`` where ``a * b`` overflows (weights past 1e154) or falls below the normal
    floats, where it loses digits or becomes 0 (weights below 1e-154)."""
    product = a * b
    return a * (b / c) if product == math.inf or product < sys.float_info.min else product / c


def _two_sum(a: float, b: float) -> tuple[float, float]:
    """``a + b`` as a float and what its rounding left out (Knuth's TwoSum: the pair is exactly ``a + b``)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@dataclass(frozen=True)
class ExactSum:
    """A sum of terms >= 0 kept to twice a float's precision, ``hi + lo`` (``lo``: what rounding ``hi`` left out).

    Terms of very different sizes (the percentage error of a target of 0 is about 4.5e15 times the error) then
    leave the small ones' digits in the sum: once the large one is taken back out (a window's event leaving),
    what is left is the sum of the small ones, not the rounding of the large one. A batch's terms are summed by
    Rump's extraction: each term's part on a grid common to all (2^-53 of a power of two above twice the count
    times the largest term) sums without rounding, and the parts below the grid plainly.

    Examples
    --------
    >>> from streameval.regression_report import ExactSum
    >>> import numpy as np
    >>> both = ExactSum.of(np.array([4.5e15, 0.1])).plus(ExactSum.of(np.array([0.2])))
    >>> both.minus(ExactSum.of(np.array([4.5e15]))).value == 0.1 + 0.2
    True
    """

    hi: float
    lo: float = 0.0

    @classmethod
    def of(cls, terms: npt.NDArray[np.float64], weights: npt.NDArray[np.float64] | None = None) -> ExactSum:
        """The sum of a batch of finite terms >= 0, each times its weight where ``weights`` are given (``inf``
        where it overflows: refused by the caller). A block of the batch at a time: no batch-sized temporary."""
        if terms.size == 0:
            return cls(0.0)
        largest = float(terms.max()) * (1.0 if weights is None else float(weights.max()))  # of the products, or above
        exponent = math.frexp(largest)[1] + terms.size.bit_length() + 1 if 0.0 < largest < math.inf else 0
        if not 0 < exponent <= 1000:  # nothing above 0, or a grid near the largest float: the plain sum
            return cls(float(terms.sum() if weights is None else np.dot(terms, weights)))
        grid = math.ldexp(1.0, exponent)
        hi = lo = 0.0  # hi: multiples of the grid's unit below 2^53 of them, summed without rounding
        block = np.empty(min(terms.size, _BLOCK))
        part = np.empty_like(block)
        for start in range(0, terms.size, _BLOCK):
            size = min(_BLOCK, terms.size - start)
            b, q = block[:size], part[:size]
            if weights is None:
                b[:] = terms[start : start + size]
            else:
                np.multiply(terms[start : start + size], weights[start : start + size], out=b)
            np.add(b, grid, out=q)
            q -= grid  # each term on the grid
            hi += float(q.sum())
            b -= q  # what lies below the grid, exactly
            lo += float(b.sum())
        return cls(*_two_sum(hi, lo))

    @property
    def value(self) -> float:
        """The sum, rounded to a float."""
        return self.hi + self.lo

    def is_finite(self) -> bool:
        """Whether both parts are finite."""
        return math.isfinite(self.hi) and math.isfinite(self.lo)

    def plus(self, other: ExactSum) -> ExactSum:
        """Both sums."""
        hi, lo = _two_sum(self.hi, other.hi)
        return ExactSum(*_two_sum(hi, lo + (self.lo + other.lo)))

    def minus(self, other: ExactSum) -> ExactSum:
        """This sum less ``other`` (a part of it): 0 where rounding would leave it below 0."""
        less = self.plus(ExactSum(-other.hi, -other.lo))
        return less if less.hi > 0.0 else ExactSum(0.0)

    def scaled(self, factor: float) -> ExactSum:
        """Every term times ``factor``."""
        return ExactSum(*_two_sum(self.hi * factor, self.lo * factor))

    def to_state(self) -> float | list[float]:
        """``hi``, or ``[hi, lo]`` where ``lo`` is not 0: the form a state holds."""
        return [self.hi, self.lo] if self.lo else self.hi

    @classmethod
    def from_state(cls, name: str, value: Any) -> ExactSum:
        """The sum a state holds as a number or ``[hi, lo]`` (states saved before ``lo`` hold a number);
        ``FormatError`` naming ``name`` for anything else, or a sum that is not finite and >= 0."""
        parts = value if isinstance(value, (list, tuple)) else [value]
        if len(parts) not in (1, 2):
            raise FormatError(f"{name} must be a number or [hi, lo], got {value!r}")
        hi = decode_float(f"{name}[0]", parts[0])
        lo = decode_float(f"{name}[1]", parts[1]) if len(parts) == 2 else 0.0
        out = cls(hi, lo)
        if not out.is_finite() or hi < 0 or out.value < 0 or (lo and not abs(lo) <= math.ulp(hi)):
            raise FormatError(f"{name} must be finite and >= 0, its lo part within a unit of hi's, got {value!r}")
        return out


@dataclass(frozen=True)
class Moments:
    """Total weight, weighted mean and sum of squared deviations of one quantity.

    Two summaries combine with the parallel formulas of Chan, Golub and LeVeque,
    which never sum raw squares of large numbers. The mean is kept to twice a
    float's precision, ``mean + mean_lo`` (``mean_lo``: what rounding ``mean`` left
    out): the difference of two parts' means, which the formulas square, then
    stays exact where the values are large next to their spread (epoch
    milliseconds, 1.7e12, that vary by units), as it would not from two rounded means.

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
    mean_lo: float = 0.0

    def is_finite(self) -> bool:
        """Whether every field is finite, as a state's must be."""
        return all(map(math.isfinite, (self.weight, self.mean, self.m2, self.mean_lo)))

    def to_list(self) -> list[float]:
        """``[weight, mean, m2]``, and ``mean_lo`` where it is not 0: the form a state holds."""
        return [self.weight, self.mean, self.m2] + ([self.mean_lo] if self.mean_lo else [])

    @classmethod
    def from_list(cls, name: str, values: Any) -> Moments:
        """The moments of a state's ``[weight, mean, m2]`` or ``[weight, mean, m2, mean_lo]`` (states saved before
        ``mean_lo`` hold three); ``FormatError`` naming ``name`` for anything else."""
        if not isinstance(values, (list, tuple)) or len(values) not in (3, 4):
            raise FormatError(f"{name} must be [weight, mean, m2] or [weight, mean, m2, mean_lo]")
        w, mean, m2, *lo = (decode_float(f"{name}[{i}]", v) for i, v in enumerate(values))
        moments = cls(w, mean, m2, lo[0] if lo else 0.0)
        if not moments.is_finite() or w < 0 or m2 < 0:
            raise FormatError(f"{name} must hold a finite weight >= 0, a finite mean and m2 >= 0, got {values!r}")
        if moments.mean_lo and not abs(moments.mean_lo) <= math.ulp(mean):
            raise FormatError(f"{name}: mean_lo must be within a unit in the last place of the mean, got {values!r}")
        return moments

    @classmethod
    def of(cls, x: npt.ArrayLike, w: npt.ArrayLike | None = None) -> Moments:
        """Moments of a batch, by two passes over it."""
        values = np.asarray(x, dtype=np.float64)
        if values.size == 0:
            return cls(0.0, 0.0, 0.0)
        if values.size == 1:  # one value: its own mean, no spread (w x / w can miss x by a rounding)
            total = 1.0 if w is None else float(np.asarray(w, dtype=np.float64).reshape(-1)[0])
            return cls(total, float(values.reshape(-1)[0]) if total else 0.0, 0.0)
        if w is None:
            mean = float(values.mean())
            flat = values.reshape(-1)
            block = np.empty(min(flat.size, _BLOCK))  # deviations a cache-sized block at a time: no n-sized temporary
            m2 = residual = 0.0
            for start in range(0, flat.size, _BLOCK):
                part = block[: min(_BLOCK, flat.size - start)]
                np.subtract(flat[start : start + _BLOCK], mean, out=part)
                m2 += float(np.dot(part, part))
                residual += float(part.sum())
            return cls._centred(float(values.size), mean, m2, residual)
        weights = np.asarray(w, dtype=np.float64)
        total = float(weights.sum())
        if total == 0:
            return cls(0.0, 0.0, 0.0)
        mean = float(np.dot(weights, values) / total)
        deviations = values - mean
        return cls._centred(total, mean, float(np.dot(weights, deviations**2)), float(np.dot(weights, deviations)))

    @classmethod
    def _centred(cls, total: float, mean: float, m2: float, residual: float) -> Moments:
        """The moments of values whose deviations from a rounded ``mean`` sum to ``residual`` (weighted) and square
        to ``m2``: the true mean is ``mean + residual / total``, and the squares about it ``m2`` less
        ``residual^2 / total``."""
        lo = residual / total
        if not math.isfinite(lo):
            return cls(total, mean, m2)
        hi, lo = _two_sum(mean, lo)
        return cls(total, hi, max(m2 - residual * (residual / total), 0.0), lo)

    def combine(self, other: Moments) -> Moments:
        """The moments of both sets together."""
        if other.weight == 0:
            return self
        if self.weight == 0:
            return other
        total = self.weight + other.weight
        delta = (other.mean - self.mean) + (other.mean_lo - self.mean_lo)
        mean, lo = _two_sum(self.mean, delta * (other.weight / total) + self.mean_lo)
        m2 = self.m2 + other.m2 + delta * delta * _times_over(self.weight, other.weight, total)
        return Moments(total, mean, m2, lo)

    def combine_finite(self, other: Moments, name: str) -> Moments:
        """:meth:`combine`, or ``ValueError`` naming ``name`` where the result would not be finite (a state's must)."""
        both = self.combine(other)
        check_sums_finite(name, both.is_finite())
        return both

    def remove(self, other: Moments) -> Moments:
        """The moments of this set less ``other`` (a part of it): :meth:`combine` solved backwards.

        Examples
        --------
        >>> from streameval.regression import Moments
        >>> Moments.of([1.0, 2.0, 6.0]).remove(Moments.of([6.0])) == Moments.of([1.0, 2.0])
        True
        """
        if other.weight == 0:
            return self
        rest = self.weight - other.weight
        if rest <= 1e-12 * self.weight:
            return Moments(0.0, 0.0, 0.0)
        # the rest's mean is the whole's moved away from the part's: (W m - w o) / (W - w) = m + w (m - o) / (W - w)
        apart = (self.mean - other.mean) + (self.mean_lo - other.mean_lo)
        mean, lo = _two_sum(self.mean, apart * (other.weight / rest) + self.mean_lo)
        delta = apart * (self.weight / rest)  # the rest's mean less the part's
        m2 = self.m2 - other.m2 - delta * delta * _times_over(rest, other.weight, self.weight)
        if m2 <= 1e-10 * self.m2:  # within rounding of what was there: no spread is left that can be told apart
            m2 = 0.0
        return Moments(rest, mean, m2, lo)

    def lost_in(self, rest: Moments) -> bool:
        """Whether ``rest``, this set less a part of it (:meth:`remove`), lost most of its spread's digits to
        rounding: the part held all but a 2^-20 share of this set's squared deviations (an outlier a thousand
        times the others' spread), so that rounding of this set's sum can be as large as what is left.

        Examples
        --------
        >>> from streameval.regression import Moments
        >>> whole, outlier = Moments.of([1.0, 2.0, 3.0, 1e6]), Moments.of([1e6])
        >>> whole.lost_in(whole.remove(outlier)), whole.lost_in(whole.remove(Moments.of([3.0])))
        (True, False)
        """
        return rest.weight > 0 and self.m2 > 0 and rest.m2 < _LOST_SHARE * self.m2

    def scaled(self, factor: float) -> Moments:
        """Every weight multiplied by ``factor`` (the mean stays)."""
        return Moments(self.weight * factor, self.mean, self.m2 * factor, self.mean_lo)


class QuantileEstimate(NamedTuple):
    """A quantile read off a histogram: an estimate and bounds the exact value lies in."""

    value: float
    lower: float
    upper: float


@dataclass(frozen=True, eq=False)
class RegressionReport(SummaryAndPage):
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
        mean = self.error.mean
        return self.error.m2 + self.error.weight * (mean * mean)  # inf past 1e308, where ** raises OverflowError

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
            raise ValueError(f"q must be between 0 and 1, got {show(q)}")
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
