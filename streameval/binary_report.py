"""BinaryReport: every binary metric, a pure view over a score histogram and the 2x2 counts at a threshold.

A report imports no accumulator: it is computed from counts alone (the curve
and rate functions of ``curves`` and ``confusion``), so any accumulator kind,
a merged state or a loaded file gives the same report for the same counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from . import curves, inference
from ._validation import check_real, show
from .averaging import metric_value
from .bins import Bins
from .calibration import CalibrationBins, CalibrationSums, calibration_bins, calibration_errors, check_probabilities
from .confusion import ConfusionReport

__all__ = ["BinaryReport"]

Array = npt.NDArray[np.float64]


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _within_zero_and_one(edges: Array) -> Array:
    """Ascending bin edges clipped to [0, 1]: as they are when both ends lie in it (probabilities' bins, as a
    rule: a clip of 3,148 edges took 3 us)."""
    if edges.size and edges[0] >= 0.0 and edges[-1] <= 1.0:
        return edges
    return np.clip(edges, 0.0, 1.0)


@dataclass(frozen=True, eq=False)
class BinaryReport(ConfusionReport):
    """Every binary metric of an accumulator, frozen at the time of ``get()``.

    The 2x2 rates (``precision``, ``recall``, ``f1``, ``mcc``, ...) come from
    the exact counts at the accumulator's threshold. AUC, average precision,
    EER and the curves come from the scores' counts: in the exact regime
    (``is_exact``) every distinct score with its counts, so every result is
    scikit-learn's; in the binned regime the score histogram, with the scores
    of one bin tied for ROC quantities and in random order for average
    precision, and bounds that hold the exact values.

    With only one class present, every rate that divides by the missing
    class's total is ``nan`` (AUC, AP, EER, FPR or TPR) and the curves hold
    ``nan`` in that coordinate; nothing is silently 0.

    Examples
    --------
    >>> import streameval as se
    >>> acc = se.BinaryAccumulator(bins=se.Bins.from_edges([0.1, 0.35, 0.4, 0.8]))
    >>> acc.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
    >>> r = acc.get()
    >>> r.auc, r.precision, r.recall
    (0.75, 1.0, 0.5)
    >>> fpr, tpr, thresholds = r.roc_curve()
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """

    bins: Bins = field(repr=False)
    keys: npt.NDArray[np.int64] | None = field(repr=False)
    neg: Array = field(repr=False)
    pos: Array = field(repr=False)
    pos_label: Any = field(default=1, repr=False)
    neg_label: Any = field(default=0, repr=False)
    values: Array | None = field(default=None, repr=False)
    calibration: CalibrationSums | None = field(default=None, repr=False)

    SCALAR_METRICS: ClassVar[tuple[str, ...]] = (
        *ConfusionReport.SCALAR_METRICS,
        "auc", "auc_lower", "auc_upper", "rank_loss",
        "average_precision", "average_precision_lower", "average_precision_upper", "pr_auc",
        "bep", "eer", "eer_threshold", "eer_rocch", "eer_nearest",
        "brier", "log_loss", "ece", "mce",
    )  # fmt: skip

    @property
    def is_exact(self) -> bool:
        """Whether the counts are those of every distinct score (the exact regime) rather than of bins."""
        return self.values is not None

    @cached_property
    def edges(self) -> Array:
        """The curve thresholds, ascending: every distinct score when exact, else every non-empty bin's lower edge."""
        if self.values is not None:
            return self.values
        assert self.keys is not None
        return _readonly(self.bins.lower_edges(self.keys))

    # -- histogram metrics --------------------------------------------------
    @cached_property
    def _auc(self) -> curves.AucBounds:
        return curves.auc_bounds(self.neg, self.pos)

    @property
    def auc(self) -> float:
        """ROC AUC, ties inside a bin counted as half (scikit-learn's ``roc_auc_score``)."""
        return self._auc.auc

    @property
    def auc_lower(self) -> float:
        """Lowest AUC over every ordering of the scores inside bins."""
        return self._auc.lower

    @property
    def auc_upper(self) -> float:
        """Highest AUC over every ordering of the scores inside bins."""
        return self._auc.upper

    @property
    def rank_loss(self) -> float:
        """1 - AUC: the share of (positive, negative) pairs ranked wrongly, ties as half."""
        return 1.0 - self.auc

    @cached_property
    def average_precision(self) -> float:
        """Average precision: scikit-learn's ``average_precision_score`` when exact.

        In the binned regime, the expected value over random orders of the
        events inside each bin (tie-aware AP, McSherry & Najork 2008), which
        ``average_precision_lower`` and ``average_precision_upper`` bound.
        """
        if self.is_exact:
            return curves.average_precision(self.edges, self.neg, self.pos, points=self._points)
        return self._ap.expected

    @cached_property
    def _ap(self) -> curves.ApBounds:
        return curves.average_precision_bounds(self.edges, self.neg, self.pos, points=self._points)

    @property
    def average_precision_lower(self) -> float:
        """Lowest average precision over every way to score the events inside bins (or tied scores): every bin's
        negatives before its positives, one at a time."""
        return self._ap.lower

    @property
    def average_precision_upper(self) -> float:
        """Highest average precision over every way to score the events inside bins (or tied scores), orders and
        ties alike: every bin's positives tied at one score above its negatives (scikit-learn's AP gives a tie
        the precision at its end)."""
        return self._ap.upper

    @cached_property
    def pr_auc(self) -> float:
        """Area under the PR curve with Davis & Goadrich interpolation."""
        return curves.pr_auc(self.edges, self.neg, self.pos, points=self._points)

    @cached_property
    def bep(self) -> float:
        """Break-even point: precision = recall at the cut predicting exactly P positives."""
        return curves.break_even_point(self.edges, self.neg, self.pos, points=self._points)

    @cached_property
    def _equal_error_rates(self) -> tuple[curves.Crossing, curves.Crossing]:
        return curves.equal_error_rates(self.edges, self.neg, self.pos, points=self._points)

    @property
    def _eer(self) -> curves.Crossing:
        return self._equal_error_rates[0]

    @property
    def eer(self) -> float:
        """Equal error rate, where the straight segments of FAR and FRR cross."""
        return self._eer.rate

    @property
    def eer_threshold(self) -> float:
        """Threshold at the equal error rate, interpolated on the same segment."""
        return self._eer.threshold

    @cached_property
    def _eer_rocch(self) -> curves.Crossing:
        return curves.eer_rocch(self.edges, self.neg, self.pos, points=self._points)

    @property
    def eer_rocch(self) -> float:
        """Equal error rate of the ROC convex hull (ROCCH-EER)."""
        return self._eer_rocch.rate

    @property
    def eer_rocch_threshold(self) -> float:
        """Threshold at the ROCCH-EER, interpolated along the hull segment."""
        return self._eer_rocch.threshold

    @property
    def _eer_nearest(self) -> curves.Crossing:
        return self._equal_error_rates[1]

    @property
    def eer_nearest(self) -> float:
        """Mean of FAR and FRR at the threshold where they are closest."""
        return self._eer_nearest.rate

    @property
    def eer_nearest_threshold(self) -> float:
        """The threshold where FAR and FRR are closest."""
        return self._eer_nearest.threshold

    # -- curves -------------------------------------------------------------
    def roc_curve(self) -> tuple[Array, Array, Array]:
        """``(fpr, tpr, thresholds)``, thresholds decreasing from ``+inf``.

        One point per non-empty bin, at its lower edge; equal to scikit-learn's
        ``roc_curve(..., drop_intermediate=False)`` when every bin holds one
        distinct score.
        """
        return curves.roc_curve(self.edges, self.neg, self.pos)  # fresh arrays, not the shared points

    def pr_curve(self) -> tuple[Array, Array, Array]:
        """``(precision, recall, thresholds)`` in scikit-learn's layout (thresholds increasing)."""
        return curves.pr_curve(self.edges, self.neg, self.pos)  # fresh arrays, not the shared points

    def det_curve(self) -> tuple[Array, Array, Array]:
        """``(fpr, fnr, thresholds)`` in scikit-learn's layout; plot on normal-deviate axes."""
        return curves.det_curve(self.edges, self.neg, self.pos)  # fresh arrays, not the shared points

    # -- queries ------------------------------------------------------------
    @cached_property
    def _points(self) -> curves.OperatingPoints:
        """The curve points, computed once and shared by the metrics that walk them (read-only)."""
        pts = curves.operating_points(self.edges, self.neg, self.pos)
        for a in (pts.thresholds, pts.tp, pts.fp):
            _readonly(a)
        return pts

    def at(self, threshold: float) -> ConfusionReport:
        """The 2x2 table and its rates at another threshold.

        Exact at any threshold in the exact regime. In the binned regime,
        exact when ``threshold`` is the lower edge of a bin (every curve
        threshold is) or the accumulator's own threshold; elsewhere the bin
        holding ``threshold`` cannot be split, so the threshold is moved up to
        that bin's upper edge: all of the bin counts as predicted negative.
        The returned report's ``threshold`` is the one actually used.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator(bins=se.Bins.from_edges([0.1, 0.35, 0.4, 0.8]), exact_up_to=0)
        >>> acc.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
        >>> r = acc.get().at(0.35)
        >>> r.tp, r.fp, r.threshold
        (2, 1, 0.35)
        >>> acc.get().at(0.6).threshold
        0.8
        >>> exact = se.BinaryAccumulator()
        >>> exact.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
        >>> exact.get().at(0.6).threshold, exact.get().at(0.6).tp
        (0.6, 1)
        """
        t = check_real("threshold", threshold)
        if t == self.threshold:
            return ConfusionReport(self.tp, self.fp, self.tn, self.fn, self.threshold)
        cast = float if self.neg.dtype == np.float64 else int
        if self.values is not None:
            start = int(np.searchsorted(self.values, t, side="left"))
            tp, fp = cast(self.pos[start:].sum()), cast(self.neg[start:].sum())
            tn, fn = cast(self.neg[:start].sum()), cast(self.pos[:start].sum())  # sums, not differences: no -1e-14
            return ConfusionReport(tp=tp, fp=fp, tn=tn, fn=fn, threshold=t)
        assert self.keys is not None
        key = self.bins.key(t)
        edge = float(self.bins.lower_edges([key])[0])
        if edge != t:
            key += 1
            edge = float(self.bins.lower_edges([key])[0]) if key <= self.bins.key_max else math.inf
        start = int(np.searchsorted(self.keys, key, side="left"))
        tp, fp = cast(self.pos[start:].sum()), cast(self.neg[start:].sum())
        tn, fn = cast(self.neg[:start].sum()), cast(self.pos[:start].sum())
        return ConfusionReport(tp=tp, fp=fp, tn=tn, fn=fn, threshold=edge)

    def best_threshold(self, metric: str = "f1") -> float:
        """The curve threshold (a bin edge) that maximises ``metric``.

        ``metric`` is one of ``"f1"``, ``"youden"``, ``"accuracy"``,
        ``"balanced_accuracy"``, ``"mcc"``. Ties go to the highest threshold.
        ``nan`` when the metric is undefined everywhere.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator(bins=se.Bins.from_edges([0.1, 0.35, 0.4, 0.8]))
        >>> acc.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
        >>> acc.get().best_threshold("f1")
        0.35
        """
        if metric not in _CURVE_METRICS:
            raise ValueError(f"metric must be one of {sorted(_CURVE_METRICS)}, got {metric!r}")
        pts = self._points
        with np.errstate(invalid="ignore", divide="ignore"):
            values = _CURVE_METRICS[metric](pts.tp, pts.fp, pts.positives, pts.negatives)
        if np.isnan(values).all():
            return math.nan
        return float(pts.thresholds[int(np.nanargmax(values))])

    def tpr_at_fpr(self, max_fpr: float) -> float:
        """Highest TPR among the curve points whose FPR is at most ``max_fpr``.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator(bins=se.Bins.from_edges([0.1, 0.35, 0.4, 0.8]))
        >>> acc.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
        >>> acc.get().tpr_at_fpr(0.0), acc.get().tpr_at_fpr(0.5)
        (0.5, 1.0)
        """
        a = check_real("max_fpr", max_fpr)
        if not 0.0 <= a <= 1.0:  # a rate: no curve point could answer another
            raise ValueError(f"max_fpr must be between 0 and 1, got {show(max_fpr)}")
        pts = self._points
        if pts.positives == 0 or pts.negatives == 0:
            return math.nan
        ok = pts.fp / pts.negatives <= a
        return float((pts.tp[ok] / pts.positives).max()) if ok.any() else math.nan

    def precision_at_recall(self, min_recall: float) -> float:
        """Highest precision among the curve points whose recall is at least ``min_recall``.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator(bins=se.Bins.from_edges([0.1, 0.35, 0.4, 0.8]))
        >>> acc.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
        >>> acc.get().precision_at_recall(1.0)
        0.6666666666666666
        """
        r = check_real("min_recall", min_recall)
        if not 0.0 <= r <= 1.0:  # a rate: no curve point could answer another
            raise ValueError(f"min_recall must be between 0 and 1, got {show(min_recall)}")
        pts = self._points
        if pts.positives == 0:
            return math.nan
        tp, fp = pts.tp[1:], pts.fp[1:]
        ok = tp / pts.positives >= r
        return float((tp[ok] / (tp[ok] + fp[ok])).max()) if ok.any() else math.nan

    # -- cost-sensitive evaluation ----------------------------------------
    def cost_curve(self) -> tuple[Array, Array]:
        """Lower envelope of the cost curve as vertices ``(x, normalised cost)``.

        ``x`` is the probability cost ``p cost_fn / (p cost_fn + (1 - p) cost_fp)``
        (``p`` the prior of positives), which folds the prior and both costs
        into one axis; every threshold's line is ``FNR x + FPR (1 - x)``.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator(bins=se.Bins.from_edges([0.1, 0.35, 0.4, 0.8]))
        >>> acc.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
        >>> x, y = acc.get().cost_curve()
        >>> x.tolist(), y.tolist()
        ([0.0, 0.5, 1.0], [0.0, 0.25, 0.0])
        """
        return curves.cost_curve(self.edges, self.neg, self.pos, points=self._points)

    def expected_cost(self) -> float:
        """Area under the lower envelope of the cost curve."""
        return curves.expected_cost(self.edges, self.neg, self.pos, points=self._points)

    def min_cost(self, p: float, cost_fn: float = 1.0, cost_fp: float = 1.0) -> curves.CostPoint:
        """Lowest normalised cost at prior ``p`` and the threshold reaching it.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator(bins=se.Bins.from_edges([0.1, 0.35, 0.4, 0.8]))
        >>> acc.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
        >>> best = acc.get().min_cost(0.5, cost_fn=5.0, cost_fp=1.0)
        >>> round(best.cost, 6), best.threshold
        (0.083333, 0.35)
        """
        prior = check_real("p", p)
        if not 0.0 <= prior <= 1.0:
            raise ValueError(f"p must be between 0 and 1, got {show(p)}")
        c_fn = check_real("cost_fn", cost_fn, finite=True, nonnegative=True)
        c_fp = check_real("cost_fp", cost_fp, finite=True, nonnegative=True)
        if prior * c_fn + (1 - prior) * c_fp == 0:
            raise ValueError(
                f"p, cost_fn and cost_fp give no cost at all: p={p!r}, cost_fn={cost_fn!r}, cost_fp={cost_fp!r}"
            )
        return curves.min_cost(
            self.edges, self.neg, self.pos, curves.probability_cost(prior, c_fn, c_fp), points=self._points
        )

    def min_dcf(self, p_target: float, c_miss: float = 1.0, c_fa: float = 1.0) -> curves.CostPoint:
        """NIST minimum detection cost (normalised) and its threshold.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator(bins=se.Bins.from_edges([0.1, 0.35, 0.4, 0.8]))
        >>> acc.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
        >>> acc.get().min_dcf(0.01)
        CostPoint(cost=0.5, threshold=0.8)
        """
        p = check_real("p_target", p_target)
        if not 0.0 < p < 1.0:
            raise ValueError(f"p_target must be strictly between 0 and 1, got {show(p_target)}")
        cm = check_real("c_miss", c_miss, finite=True)
        cf = check_real("c_fa", c_fa, finite=True)
        if cm <= 0 or cf <= 0:
            raise ValueError(f"c_miss and c_fa must be positive, got {show(c_miss)} and {show(c_fa)}")
        return curves.min_dcf(self.edges, self.neg, self.pos, p, cm, cf, points=self._points)

    # -- inference ----------------------------------------------------------
    def auc_ci(self, level: float = 0.95, method: str = "delong") -> inference.Interval:
        """Confidence interval of the AUC, by DeLong's or Hanley & McNeil's variance.

        DeLong's variance is computed from the histogram (exact when every
        bin holds one distinct score); weights count as frequencies.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator()
        >>> acc.update_many([0, 0, 1, 0, 1, 1], [0.1, 0.3, 0.35, 0.4, 0.8, 0.9])
        >>> ci = acc.get().auc_ci()
        >>> round(ci.estimate, 4), round(ci.lower, 4), round(ci.upper, 4)
        (0.8889, 0.5809, 1.0)
        """
        return inference.auc_interval(self.neg, self.pos, self.auc, level, method)

    def wilson_ci(self, metric: str = "recall", level: float = 0.95) -> inference.Interval:
        """Wilson interval of a proportion of the 2x2 table at the threshold.

        ``metric`` is one of ``precision``, ``recall`` (``tpr``),
        ``specificity`` (``tnr``), ``fpr``, ``fnr``, ``npv``, ``accuracy``.
        """
        pairs = {
            "precision": (self.tp, self.tp + self.fp),
            "recall": (self.tp, self.tp + self.fn),
            "tpr": (self.tp, self.tp + self.fn),
            "specificity": (self.tn, self.tn + self.fp),
            "tnr": (self.tn, self.tn + self.fp),
            "fpr": (self.fp, self.fp + self.tn),
            "fnr": (self.fn, self.fn + self.tp),
            "npv": (self.tn, self.tn + self.fn),
            "accuracy": (self.tp + self.tn, self.n),
            "selection_rate": (self.tp + self.fp, self.n),
        }
        if metric not in pairs:
            raise ValueError(f"metric must be one of {sorted(pairs)}, got {metric!r}")
        return inference.wilson_interval(*pairs[metric], level=level)

    # -- calibration ----------------------------------------------------------
    @cached_property
    def _score_range(self) -> tuple[float, float]:
        """The lowest and highest score the counts allow (``(0, 0)`` with no events)."""
        if self.values is not None:
            return (float(self.values[0]), float(self.values[-1])) if self.values.size else (0.0, 0.0)
        assert self.keys is not None
        if self.keys.size == 0:
            return 0.0, 0.0
        low, high = self.bins.lower_edges(self.keys[[0, -1]]).tolist()  # the edges of the two end bins alone
        return low, high

    @cached_property
    def _range_issue(self) -> str | None:
        return check_probabilities("calibration metrics", self.calibration, *self._score_range)

    @property
    def calibration_issue(self) -> str | None:
        """Why calibration metrics are ``nan`` (scores outside [0, 1], sums not kept), or ``None``.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator()
        >>> acc.update_many([1, 0], [2.5, -1.0])
        >>> acc.get().brier
        nan
        >>> acc.get().calibration_issue
        '2 of 2 events score outside [0, 1]: calibration metrics need probabilities (clip or transform the scores)'
        """
        if self._range_issue is None and self.calibration is None:
            return (
                "no calibration sums were kept for these counts (a state saved in format 1 or 2, a one-vs-rest "
                "report of a multiclass accumulator, an estimate): brier and log_loss are not known; the calibration "
                "curve, ece and mce come from the scores' counts"
            )
        return self._range_issue

    def _mean_term(self, total: float) -> float:
        if self.calibration is None or self.calibration_issue is not None or not self.n:
            return math.nan
        return total / float(self.n)

    @property
    def brier(self) -> float:
        """Brier score: the mean of ``(y - p)**2`` (scikit-learn's ``brier_score_loss``), from exact running sums.

        ``nan`` when a score lies outside [0, 1] (``calibration_issue`` says
        why) and when there are no events.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator(exact_up_to=0)
        >>> acc.update_many([1, 0, 1], [0.9, 0.2, 0.4])
        >>> round(acc.get().brier, 12)
        0.136666666667
        """
        return self._mean_term(math.nan if self.calibration is None else self.calibration.brier_total)

    @property
    def log_loss(self) -> float:
        """Log loss (cross-entropy) with scikit-learn's clipping of ``p`` to ``[eps, 1 - eps]``, from exact sums.

        ``nan`` when a score lies outside [0, 1] and when there are no events.
        """
        return self._mean_term(math.nan if self.calibration is None else self.calibration.log_loss_total)

    def calibration_bins(self, n_bins: int = 10, strategy: str = "uniform") -> CalibrationBins:
        """The non-empty bins of the calibration curve with their counts and edges.

        See :meth:`calibration_curve`; ``ValueError`` when a score lies
        outside [0, 1].
        """
        if self._range_issue is not None:
            raise ValueError(self._range_issue)
        if self.values is not None:
            lo = hi = self.values
        else:
            assert self.keys is not None
            lo, hi = _within_zero_and_one(self.edges), _within_zero_and_one(self.bins.upper_edges(self.keys))
        return calibration_bins(lo, hi, self.neg, self.pos, self.is_exact, n_bins, strategy)

    def calibration_curve(self, n_bins: int = 10, strategy: str = "uniform") -> tuple[Array, Array]:
        """``(prob_true, prob_pred)`` of the non-empty bins: scikit-learn's ``calibration_curve``.

        ``strategy="uniform"`` cuts [0, 1] into ``n_bins`` equal bins;
        ``"quantile"`` puts the edges at the scores' quantiles (numpy's
        linear ``percentile``; weighted: the weighted inverted CDF). A score
        equal to an inner edge goes to the bin below it. Equal to
        scikit-learn while exact; in the binned regime the scores of a bin are
        taken as spread evenly over it, and a bin across an edge is split in
        proportion. ``ValueError`` when a score lies outside [0, 1].

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator()
        >>> acc.update_many([0, 0, 1, 1, 1], [0.1, 0.2, 0.7, 0.8, 0.15])
        >>> prob_true, prob_pred = acc.get().calibration_curve(n_bins=2)
        >>> prob_true.tolist(), prob_pred.round(6).tolist()
        ([0.3333333333333333, 1.0], [0.15, 0.75])
        """
        bins = self.calibration_bins(n_bins, strategy)
        return bins.prob_true, bins.prob_pred

    def _errors(self, n_bins: int) -> tuple[float, float]:
        """(ECE, MCE) over ``n_bins`` uniform bins, computed once per report and number of bins."""
        known = self.__dict__.setdefault("_errors_by_bins", {})  # a frozen report: its own cache, as cached_property
        if type(n_bins) is not int:  # checked (and refused) by calibration_bins, uncached
            known = {}
        if n_bins not in known:
            if self._range_issue is not None:
                known[n_bins] = (math.nan, math.nan)
            else:
                known[n_bins] = calibration_errors(self.calibration_bins(n_bins, "uniform"))
        return known[n_bins]

    def ece(self, n_bins: int = 15) -> float:
        """Expected calibration error: ``sum(count_b / n * |prob_true_b - prob_pred_b|)`` over ``n_bins`` equal bins.

        The bins are those of ``calibration_curve(n_bins, "uniform")``
        (probability of the positive class, not of the predicted class).
        ``nan`` when a score lies outside [0, 1] or there are no events.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator()
        >>> acc.update_many([0, 0, 1, 1, 1], [0.1, 0.2, 0.7, 0.8, 0.15])
        >>> round(acc.get().ece(n_bins=2), 6)
        0.21
        """
        return self._errors(n_bins)[0]

    def mce(self, n_bins: int = 15) -> float:
        """Maximum calibration error: the largest ``|prob_true_b - prob_pred_b|`` over the non-empty bins of
        :meth:`ece`."""
        return self._errors(n_bins)[1]

    # -- output -------------------------------------------------------------
    def to_dict(self) -> dict[str, float]:
        """Every scalar metric by name (counts as numbers, rates as floats).

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator()
        >>> acc.update_many([0, 1, 1], [0.2, 0.7, 0.4])
        >>> d = acc.get().to_dict()
        >>> d["n"], d["tp"], round(d["auc"], 3)
        (3, 1, 1.0)
        """
        return {name: metric_value(self, name) for name in self.SCALAR_METRICS}

    def to_html(self, title: str | None = None) -> str:
        """This report as one self-contained HTML page (tables, ROC, PR, DET and reliability pictures).

        See :func:`streameval.html.report_html`; the pictures need matplotlib.
        """
        from .html import report_html

        return report_html(self, title=title)

    def summary(self) -> str:
        """A short readable table of the main metrics."""
        rows = [
            ("events", f"{self.n:g}  (positives {self.positives:g}, negatives {self.negatives:g})"),
            ("threshold", f"{self.threshold:g}"),
            ("accuracy", f"{self.accuracy:.4f}"),
            ("precision / recall", f"{self.precision:.4f} / {self.recall:.4f}"),
            ("F1", f"{self.f1:.4f}"),
            ("MCC", f"{self.mcc:.4f}"),
            ("ROC AUC", f"{self.auc:.6f}  [{self.auc_lower:.6f}, {self.auc_upper:.6f}]"),
            ("average precision", f"{self.average_precision:.6f}"),
            ("PR AUC", f"{self.pr_auc:.6f}"),
            ("EER", f"{self.eer:.4f} at threshold {self.eer_threshold:.4g}"),
            ("break-even point", f"{self.bep:.4f}"),
            ("Brier / log loss", f"{self.brier:.6f} / {self.log_loss:.6f}"),
            ("ECE / MCE (15 bins)", f"{self.ece():.4f} / {self.mce():.4f}"),
        ]
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)

    def __repr__(self) -> str:
        return (
            f"BinaryReport(n={self.n}, positives={self.positives}, threshold={self.threshold!r}, "
            f"precision={self.precision:.4f}, recall={self.recall:.4f}, f1={self.f1:.4f}, "
            f"auc={self.auc:.6f}, average_precision={self.average_precision:.6f}, eer={self.eer:.4f})"
        )


def _f1(tp: Array, fp: Array, p: float, n: float) -> Array:
    return 2 * tp / (tp + fp + p)


def _youden(tp: Array, fp: Array, p: float, n: float) -> Array:
    return tp / p - fp / n


def _accuracy(tp: Array, fp: Array, p: float, n: float) -> Array:
    return (tp + n - fp) / (p + n)


def _balanced_accuracy(tp: Array, fp: Array, p: float, n: float) -> Array:
    return (tp / p + (n - fp) / n) / 2


def _mcc(tp: Array, fp: Array, p: float, n: float) -> Array:
    fn, tn = p - tp, n - fp
    return (tp * tn - fp * fn) / np.sqrt((tp + fp) * p * n * (tn + fn))


_CURVE_METRICS: dict[str, Callable[[Array, Array, float, float], Array]] = {
    "f1": _f1,
    "youden": _youden,
    "accuracy": _accuracy,
    "balanced_accuracy": _balanced_accuracy,
    "mcc": _mcc,
}
