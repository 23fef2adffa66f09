"""Confidence intervals and significance tests computed from counts.

* DeLong and Hanley & McNeil variances of the ROC AUC, from the histogram;
* Wilson intervals for proportions (precision, recall, accuracy, ...);
* McNemar's test for two classifiers on the same stream (``PairedReport``, from ``PairedAccumulator``);
* the paired t-test over k folds or shards.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt

from ._numeric import running_sum, scaled_to_one
from ._report_output import SummaryAndPage
from ._validation import check_real, show
from .averaging import metric_value
from .confusion import ConfusionReport, ratio

__all__ = [
    "Interval",
    "McNemarResult",
    "PairedReport",
    "TTestResult",
    "delong_variance",
    "hanley_mcneil_variance",
    "paired_t_test",
    "wilson_interval",
]


class Interval(NamedTuple):
    """An estimate with the two ends of a confidence interval."""

    estimate: float
    lower: float
    upper: float


def _z(level: float) -> float:
    lv = check_real("level", level)
    if not 0.0 < lv < 1.0:
        raise ValueError(f"level must be between 0 and 1, got {show(level)}")
    return NormalDist().inv_cdf(0.5 + lv / 2.0)


def delong_variance(neg: npt.ArrayLike, pos: npt.ArrayLike) -> float:
    """DeLong's variance of the AUC from a histogram (bins in ascending score order).

    A positive in bin b has placement ``(N_{<b} + n_b / 2) / N``, a negative
    ``(P_{>b} + p_b / 2) / P``; the variance is ``S10 / P + S01 / N`` with
    ``S10`` and ``S01`` the sample variances of the placements. Exact DeLong
    when every bin holds one distinct score.

    Examples
    --------
    >>> from streameval.inference import delong_variance
    >>> round(delong_variance([1, 1, 0, 0], [0, 1, 0, 1]), 6)
    0.03125
    """
    n_b = np.asarray(neg, dtype=np.float64)
    p_b = np.asarray(pos, dtype=np.float64)
    p_total, n_total = float(p_b.sum()), float(n_b.sum())
    if p_total < 2 or n_total < 2:
        return math.nan
    n_below = running_sum(neg) - n_b
    p_above = p_total - running_sum(pos)
    ranks = n_below + n_b / 2.0  # each positive's negatives below it, ties as half
    # each side scaled by a power of two (exact) for the AUC's products: weights of 1e200 still fit
    p_scaled, p_scaled_total = scaled_to_one(p_total, p_b, p_total)
    n_ranks, n_scaled_total = scaled_to_one(n_total, ranks, n_total)
    auc = float(np.dot(p_scaled, n_ranks)) / (p_scaled_total * n_scaled_total)
    v10 = ranks / n_total
    v01 = (p_above + p_b / 2.0) / p_total
    s10 = float(np.dot(p_b, (v10 - auc) ** 2)) / (p_total - 1.0)
    s01 = float(np.dot(n_b, (v01 - auc) ** 2)) / (n_total - 1.0)
    return s10 / p_total + s01 / n_total


def hanley_mcneil_variance(auc: float, positives: float, negatives: float) -> float:
    """Hanley & McNeil's variance of an AUC from the AUC and the class totals.

    Examples
    --------
    >>> from streameval.inference import hanley_mcneil_variance
    >>> round(hanley_mcneil_variance(0.8, 50, 50), 6)
    0.00198
    """
    a, p, n = float(auc), float(positives), float(negatives)
    if p == 0 or n == 0 or math.isnan(a):
        return math.nan
    q1 = a / (2.0 - a)
    q2 = 2.0 * a * a / (1.0 + a)
    return (a * (1.0 - a) + (p - 1.0) * (q1 - a * a) + (n - 1.0) * (q2 - a * a)) / (p * n)


def auc_interval(neg: npt.ArrayLike, pos: npt.ArrayLike, auc: float, level: float, method: str) -> Interval:
    """Normal-approximation interval for the AUC, clipped to [0, 1]."""
    z = _z(level)
    if method == "delong":
        var = delong_variance(neg, pos)
    elif method == "hanley-mcneil":
        var = hanley_mcneil_variance(auc, float(np.sum(pos)), float(np.sum(neg)))
    else:
        raise ValueError(f"method must be 'delong' or 'hanley-mcneil', got {method!r}")
    if math.isnan(var) or math.isnan(auc):
        return Interval(auc, math.nan, math.nan)
    half = z * math.sqrt(max(var, 0.0))
    return Interval(auc, max(0.0, auc - half), min(1.0, auc + half))


def wilson_interval(successes: float, trials: float, level: float = 0.95) -> Interval:
    """Wilson score interval for a proportion ``successes / trials``.

    Examples
    --------
    >>> from streameval.inference import wilson_interval
    >>> [round(v, 4) for v in wilson_interval(15, 20)]
    [0.75, 0.5313, 0.8881]
    """
    z = _z(level)
    k, n = float(successes), float(trials)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan)
    p = k / n
    # the usual form times n: no 1 / n^2, which overflows for weights of 1e-200 (nor k (n - k), for 1e200)
    den = n + z * z
    centre = (k + z * z / 2.0) / den
    half = z * math.sqrt(max(p * (n - k), 0.0) + z * z / 4.0) / den
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half))


# -- McNemar ------------------------------------------------------------------
class McNemarResult(NamedTuple):
    """McNemar's test: discordant counts, chi-square with continuity correction, p-values."""

    b: float  # A right, B wrong
    c: float  # A wrong, B right
    statistic: float
    p_value: float
    p_exact: float


_BINOMIAL_TERMS_UP_TO = 10**7  # terms summed at most: past about 4e12 discordant events, p_exact is nan
_HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)


def _stirling_error(n: int) -> float:
    """``log(n!) - log(sqrt(2 pi n) (n / e)^n)``: its asymptotic series past 15, from ``lgamma`` below."""
    if n <= 15:
        return math.lgamma(n + 1.0) - (n + 0.5) * math.log(n) + n - _HALF_LOG_TWO_PI
    m = 1.0 / (n * n)
    return (1.0 / 12 - m * (1.0 / 360 - m * (1.0 / 1260 - m * (1.0 / 1680 - m / 1188)))) / n


def _deviance(x: float, mean: float) -> float:
    """``x log(x / mean) + mean - x``, by its series where ``x`` is near ``mean`` (no cancellation)."""
    if abs(x - mean) < 0.1 * (x + mean):
        v = (x - mean) / (x + mean)
        total, term = (x - mean) * v, 2.0 * x * v
        v2 = v * v
        for j in range(1, 1000):
            term *= v2
            step = total + term / (2 * j + 1)
            if step == total:
                break
            total = step
        return total
    return x * math.log(x / mean) + mean - x


def _log_binomial_half(n: int, k: int) -> float:
    """``log P(X = k)`` for ``X`` binomial(n, 1/2), to a float's precision at any ``n`` (Loader's saddle point
    form, 2000), where ``lgamma(n + 1) - ...`` loses the digits of ``log(n!)`` (1e-8 at n = 10^7)."""
    if k == 0 or k == n:
        return n * math.log(0.5)
    half = n / 2.0
    return (
        _stirling_error(n) - _stirling_error(k) - _stirling_error(n - k)
        - _deviance(k, half) - _deviance(n - k, half)
        + 0.5 * math.log(n / (2.0 * math.pi * k * (n - k)))
    )  # fmt: skip


def _binomial_two_sided(b: int, c: int) -> float:
    """Twice the binomial(b + c, 1/2) probability of at most min(b, c) (at most 1); ``nan`` past 4e12 events.

    The terms ``P(X = i)`` for ``i <= k = min(b, c) <= n / 2`` grow with ``i``, and below ``k`` they fall at least
    as fast as a normal density of standard deviation ``sqrt(n) / 2``: those more than 10 of them (``5 sqrt(n)``
    terms) below ``k`` add less than ``1e-20`` of ``P(X = k)``, so only the ones above are summed, each from the
    next by the ratio ``i / (n - i + 1)`` (0.7 ms at n = 10^7, where all ``k + 1`` terms took 2.5 s and 162 MB).
    """
    n, k = b + c, min(b, c)
    if n == 0:
        return 1.0
    low = max(0, k - int(5.0 * math.sqrt(n)) - 50)
    if k - low > _BINOMIAL_TERMS_UP_TO:
        return math.nan
    log_top = _log_binomial_half(n, k)
    i = np.arange(k, low, -1, dtype=np.float64)  # log P(X = i - 1) - log P(X = i) = log(i / (n - i + 1))
    logs = np.concatenate(([0.0], np.cumsum(np.log(i) - np.log(n - i + 1.0))))  # P(X = k .. low) over P(X = k)
    tail = math.exp(log_top) * math.fsum(np.exp(logs).tolist())
    return min(1.0, 2.0 * tail)


def mcnemar(b: float, c: float) -> McNemarResult:
    """McNemar's test on the discordant counts ``b`` and ``c``.

    The statistic is ``(|b - c| - 1)**2 / (b + c)`` with one degree of
    freedom; ``p_exact`` is the two-sided binomial test (integer counts only).

    Examples
    --------
    >>> from streameval.inference import mcnemar
    >>> r = mcnemar(10, 2)
    >>> round(r.statistic, 4), round(r.p_value, 4), round(r.p_exact, 4)
    (4.0833, 0.0433, 0.0386)
    """
    total = b + c
    gap = abs(b - c) - 1.0
    stat = gap * ratio(gap, total) if total else math.nan  # gap / total first: gap^2 may pass 1e308
    p = math.erfc(math.sqrt(stat / 2.0)) if not math.isnan(stat) else math.nan
    exact = _binomial_two_sided(int(b), int(c)) if float(b).is_integer() and float(c).is_integer() else math.nan
    return McNemarResult(b, c, stat, p, exact)


_EACH_MODEL = tuple(m for m in ConfusionReport.SCALAR_METRICS if m not in ("n", "positives", "negatives"))
_MCNEMAR = ("b", "c", "statistic", "p_value", "p_exact")  # McNemarResult's fields


@dataclass(frozen=True)
class PairedReport(SummaryAndPage):
    """Two classifiers on the same events: each one's 2x2 table and McNemar's test.

    Its scalar metrics by name (``to_dict()``, a monitor's records,
    :func:`~streameval.macro`) are ``n``, ``positives``, ``negatives``, each
    model's metrics of its table as ``a_<metric>`` and ``b_<metric>``
    (``a_accuracy``, ``b_f1``, ...) and the test's ``mcnemar_b``,
    ``mcnemar_c``, ``mcnemar_statistic``, ``mcnemar_p_value`` and
    ``mcnemar_p_exact``.

    Examples
    --------
    >>> import streameval as se
    >>> acc = se.PairedAccumulator(threshold=0.5)
    >>> acc.update_many([1, 0, 1, 0], [0.9, 0.2, 0.4, 0.6], [0.8, 0.7, 0.6, 0.1])
    >>> r = acc.get()
    >>> r.n, r.a_accuracy, r.b_accuracy, r.mcnemar_b, r.mcnemar_c
    (4, 0.5, 0.75, 1, 2)
    """

    a: ConfusionReport
    b: ConfusionReport
    counts: npt.NDArray[Any]  # [y positive][A predicts positive][B predicts positive]

    SCALAR_METRICS: ClassVar[tuple[str, ...]] = (
        "n", "positives", "negatives",
        *(f"a_{m}" for m in _EACH_MODEL), *(f"b_{m}" for m in _EACH_MODEL),
        *(f"mcnemar_{f}" for f in _MCNEMAR),
    )  # fmt: skip

    @property
    def n(self) -> int | float:
        """Events counted (their weight when weighted)."""
        return self.a.n

    @property
    def positives(self) -> int | float:
        """Actual positives."""
        return self.a.positives

    @property
    def negatives(self) -> int | float:
        """Actual negatives."""
        return self.a.negatives

    def __getattr__(self, name: str) -> Any:
        """``a_<metric>`` and ``b_<metric>``: a model's metric of its table; ``mcnemar_<field>``: the test's."""
        side, _, rest = name.partition("_")
        if side in ("a", "b") and rest in _EACH_MODEL:
            return getattr(self.a if side == "a" else self.b, rest)
        if side == "mcnemar" and rest in _MCNEMAR:
            return getattr(self.mcnemar, rest)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def to_dict(self) -> dict[str, Any]:
        """Every scalar metric by name (counts as numbers, rates as floats)."""
        return {name: getattr(self, name) for name in self.SCALAR_METRICS}

    @functools.cached_property
    def mcnemar(self) -> McNemarResult:
        """McNemar's test of the two error rates (worked out once: its exact p-value sums a term per pair)."""
        c = self.counts
        a_right_b_wrong = c[1, 1, 0] + c[0, 0, 1]
        a_wrong_b_right = c[1, 0, 1] + c[0, 1, 0]
        return mcnemar(count_value(a_right_b_wrong), count_value(a_wrong_b_right))


def count_value(v: Any) -> int | float:
    """A count as a Python number: float for weights, int otherwise."""
    return float(v) if isinstance(v, (float, np.floating)) else int(v)


# -- paired t-test ------------------------------------------------------------
class TTestResult(NamedTuple):
    """Paired t-test: mean difference (A - B), statistic, degrees of freedom, two-sided p-value."""

    mean_difference: float
    statistic: float
    dof: int
    p_value: float


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b) by its continued fraction (modified Lentz)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - _betainc(b, a, 1.0 - x)
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    tiny = 1e-300
    f, c, d = 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            num = 1.0
        elif i % 2 == 0:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + num * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + num / c
        c = c if abs(c) > tiny else tiny
        f *= c * d
        if abs(1.0 - c * d) < 1e-15:
            break
    return math.exp(log_front) * (f - 1.0) / a


def student_t_two_sided(t: float, dof: int) -> float:
    """Two-sided p-value of Student's t with ``dof`` degrees of freedom.

    Examples
    --------
    >>> from streameval.inference import student_t_two_sided
    >>> round(student_t_two_sided(2.262157, 9), 4)
    0.05
    """
    if math.isnan(t) or dof < 1:
        return math.nan
    if math.isinf(t):
        return 0.0
    return _betainc(dof / 2.0, 0.5, dof / (dof + t * t))


def paired_t_test(reports_a: Sequence[Any], reports_b: Sequence[Any], metric: str = "auc") -> TTestResult:
    """Paired t-test of ``metric`` over k folds or shards, model A against model B.

    ``reports_a[i]`` and ``reports_b[i]`` are reports (or accumulators) of the
    two models on fold ``i``; the test uses the k differences of the metric.

    Examples
    --------
    >>> import streameval as se
    >>> a = [se.ConfusionReport(tp=8 + i, fp=2, tn=9, fn=1, threshold=0.5) for i in range(5)]
    >>> b = [se.ConfusionReport(tp=7 + i % 2, fp=3, tn=8, fn=2, threshold=0.5) for i in range(5)]
    >>> r = se.paired_t_test(a, b, metric="accuracy")
    >>> r.dof, round(r.statistic, 3), r.p_value < 0.01
    (4, 20.705, True)
    """
    if len(reports_a) != len(reports_b):
        raise ValueError(
            f"reports_a and reports_b must pair up fold by fold, got {len(reports_a)} and {len(reports_b)}"
        )
    if len(reports_a) < 2:
        raise ValueError(f"paired_t_test needs at least 2 folds, got {len(reports_a)}")

    def value(r: Any, side: str, i: int) -> float:
        rep = r.get() if hasattr(r, "merge") and callable(getattr(r, "get", None)) else r
        if not hasattr(rep, metric):
            raise ValueError(f"metric {metric!r} is not a metric of {type(rep).__name__} ({side}[{i}])")
        return float(metric_value(rep, metric))

    diffs = np.array(
        [
            value(ra, "reports_a", i) - value(rb, "reports_b", i)
            for i, (ra, rb) in enumerate(zip(reports_a, reports_b, strict=True))
        ]
    )
    k = diffs.size
    mean = float(diffs.mean())
    sd = float(diffs.std(ddof=1))
    stat = mean / (sd / math.sqrt(k)) if sd else ratio(mean, 0.0)  # identical folds: nan or +-inf
    return TTestResult(mean, stat, k - 1, student_t_two_sided(stat, k - 1))
