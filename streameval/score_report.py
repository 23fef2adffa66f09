"""ScoreReport: the distribution of scores without labels, a pure view over counts and moments."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ._numeric import running_sum
from ._report_output import SummaryAndPage
from ._validation import check_real
from .binary_report import BinaryReport
from .bins import Bins
from .regression_report import Moments, QuantileEstimate

__all__ = ["ScoreReport"]

Array = npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class ScoreReport(SummaryAndPage):
    """Every statistic of a stream of scores, frozen at the time of ``get()``.

    In the exact regime (``is_exact``) the counts are those of every distinct
    score, and quantiles are exact; in the binned regime they are per bin, and
    a quantile comes with the bin edges it lies between. The mean and the
    standard deviation come from running moments, exact in both regimes.
    ``min`` and ``max`` are those of the scores counted; once some are taken
    out (``revert``, subtraction, a window's events leaving) they narrow to
    what the counts left hold: the exact scores, or the end bins' edges
    (outside the scores left). No count holds a score of weight 0: the range
    narrowed leaves those out, and stays as it was where only those are left.

    Examples
    --------
    >>> import streameval as se
    >>> acc = se.ScoreAccumulator()
    >>> acc.update_many([0.2, 0.4, 0.4, 0.9])
    >>> r = acc.get()
    >>> r.n, round(r.mean, 12), r.min, r.max, r.quantile(0.5).value
    (4, 0.475, 0.2, 0.9, 0.4)
    """

    n: int
    moments: Moments = field(repr=False)
    min: float
    max: float
    bins: Bins = field(repr=False)
    keys: npt.NDArray[np.int64] | None = field(repr=False)
    counts: Array = field(repr=False)
    values: Array | None = field(default=None, repr=False)

    SCALAR_METRICS: ClassVar[tuple[str, ...]] = ("n", "weight", "mean", "std", "min", "max", "median")

    @property
    def is_exact(self) -> bool:
        """Whether the counts are those of every distinct score."""
        return self.values is not None

    @property
    def weight(self) -> float:
        """Total weight of the scores (their number without weights)."""
        return self.moments.weight

    @property
    def mean(self) -> float:
        """Weighted mean score; ``nan`` when empty."""
        return self.moments.mean if self.moments.weight else math.nan

    @property
    def std(self) -> float:
        """Weighted standard deviation (population form); ``nan`` when empty."""
        return math.sqrt(self.moments.m2 / self.moments.weight) if self.moments.weight else math.nan

    @cached_property
    def edges(self) -> Array:
        """Lower edges of the non-empty bins, or the distinct scores when exact (ascending)."""
        if self.values is not None:
            return self.values
        assert self.keys is not None
        return self.bins.lower_edges(self.keys)

    @cached_property
    def upper_edges(self) -> Array:
        """Upper edges of the non-empty bins (the distinct scores themselves when exact), clipped to ``max``."""
        if self.values is not None:
            return self.values
        assert self.keys is not None
        return np.minimum(self.bins.upper_edges(self.keys), self.max)

    def quantile(self, q: float) -> QuantileEstimate:
        """The ``q`` quantile: the smallest score whose cumulative weight reaches ``q`` of the total.

        Exact in the exact regime (``lower == value == upper``; numpy's
        ``quantile(..., method="inverted_cdf")``). In the binned regime the
        bounds are the edges of the bin it lies in, clipped to the observed
        range, and ``value`` their middle.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.ScoreAccumulator(exact_up_to=0)
        >>> acc.update_many([0.11, 0.52, 0.53, 0.9])
        >>> est = acc.get().quantile(0.5)
        >>> est.lower <= 0.52 <= est.upper, est.upper - est.lower < 0.01
        (True, True)
        """
        p = check_real("q", q)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"q must be between 0 and 1, got {q!r}")
        if self.counts.size == 0 or self.weight == 0:
            return QuantileEstimate(math.nan, math.nan, math.nan)
        cum = running_sum(self.counts)
        i = min(int(np.searchsorted(cum, p * cum[-1], side="left")), cum.size - 1)
        while i < cum.size - 1 and self.counts[i] == 0:
            i += 1
        if self.values is not None:
            v = float(self.values[i])
            return QuantileEstimate(v, v, v)
        lower = max(float(self.edges[i]), self.min)
        upper = float(self.upper_edges[i])
        return QuantileEstimate((lower + upper) / 2.0, lower, upper)

    @property
    def median(self) -> float:
        """The 0.5 quantile (its estimate in the binned regime)."""
        return self.quantile(0.5).value

    def estimated(self, threshold: float = 0.5) -> BinaryReport:
        """The expected binary report if the scores are calibrated probabilities, before any label comes.

        An event of score ``s`` is a positive with probability ``s``: it counts
        as a positive of weight ``s`` and a negative of weight ``1 - s``. The
        expected TP, FP, TN, FN at ``threshold`` and every rate of them follow,
        with the expected ROC AUC, average precision and curves of those
        weights (NannyML's confidence-based performance estimation, streaming
        and mergeable here). While exact, equal to scikit-learn given those
        weights; in the binned regime each bin's scores are taken at its
        middle. It is only as good as the calibration: see
        ``docs/monitoring.md``.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.ScoreAccumulator()
        >>> acc.update_many([0.9, 0.8, 0.3, 0.1])
        >>> est = acc.get().estimated(0.5)
        >>> round(est.tp, 6), round(est.fp, 6), round(est.precision, 6)
        (1.7, 0.3, 0.85)
        """
        t = check_real("threshold", threshold)
        if self.counts.size and (self.min < 0.0 or self.max > 1.0):
            raise ValueError(
                f"estimated() needs scores that are probabilities in [0, 1], "
                f"got scores from {self.min!r} to {self.max!r}"
            )
        counts = self.counts.astype(np.float64)
        if self.values is not None:
            p = self.values
            above = p >= t
        else:
            p = np.clip((self.edges + self.upper_edges) / 2.0, 0.0, 1.0)
            above = self.edges >= t  # a bin holding the threshold counts below it
        pos, neg = counts * p, counts * (1.0 - p)
        tp, fp = float(pos[above].sum()), float(neg[above].sum())
        fn, tn = float(pos[~above].sum()), float(neg[~above].sum())
        keep = (pos > 0) | (neg > 0)
        return BinaryReport(
            tp=tp, fp=fp, tn=tn, fn=fn, threshold=t, bins=self.bins,
            keys=None if self.keys is None else self.keys[keep], neg=neg[keep], pos=pos[keep],
            pos_label=True, neg_label=False, values=None if self.values is None else self.values[keep],
        )  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """Every scalar statistic by name."""
        return {name: getattr(self, name) for name in self.SCALAR_METRICS}
