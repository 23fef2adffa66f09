"""BinaryAccumulator: exact counts at a threshold plus a score histogram."""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from . import curves, inference
from ._events import _UNIT, FLUSH_EVERY, EventBuffer, batch_kernel
from ._persist import Mergeable, Persistable
from ._validation import as_labels, as_scores, as_weights, check_no_nan, check_real, check_same_length
from .bins import BLOCK, Bins, Workspace
from .confusion import ConfusionReport
from .state import LabelledCounts

__all__ = ["BinaryAccumulator", "BinaryReport"]

Array = npt.NDArray[np.float64]


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class BinaryReport(ConfusionReport):
    """Every binary metric of an accumulator, frozen at the time of ``get()``.

    The 2x2 rates (``precision``, ``recall``, ``f1``, ``mcc``, ...) come from
    the exact counts at the accumulator's threshold. AUC, average precision,
    EER and the curves come from the score histogram, treating the scores of
    one bin as tied; they are exact when every bin holds one distinct score.

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
    keys: npt.NDArray[np.int64] = field(repr=False)
    neg: Array = field(repr=False)
    pos: Array = field(repr=False)
    pos_label: Any = field(default=1, repr=False)
    neg_label: Any = field(default=0, repr=False)

    SCALAR_METRICS: ClassVar[tuple[str, ...]] = (
        "n", "positives", "negatives", "tp", "fp", "tn", "fn",
        "accuracy", "error_rate", "precision", "recall", "f1", "specificity",
        "fpr", "fnr", "npv", "lr_plus", "lr_minus", "youden", "balanced_accuracy", "mcc",
        "auc", "auc_lower", "auc_upper", "rank_loss", "average_precision", "pr_auc",
        "bep", "eer", "eer_threshold", "eer_rocch", "eer_nearest",
    )  # fmt: skip

    @cached_property
    def edges(self) -> Array:
        """Lower edge of every non-empty bin (ascending): the curve thresholds."""
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
        """Average precision, the step-wise sum of scikit-learn's ``average_precision_score``."""
        return curves.average_precision(self.edges, self.neg, self.pos)

    @cached_property
    def pr_auc(self) -> float:
        """Area under the PR curve with Davis & Goadrich interpolation."""
        return curves.pr_auc(self.edges, self.neg, self.pos)

    @cached_property
    def bep(self) -> float:
        """Break-even point: precision = recall at the cut predicting exactly P positives."""
        return curves.break_even_point(self.edges, self.neg, self.pos)

    @cached_property
    def _eer(self) -> curves.Crossing:
        return curves.eer(self.edges, self.neg, self.pos)

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
        return curves.eer_rocch(self.edges, self.neg, self.pos)

    @property
    def eer_rocch(self) -> float:
        """Equal error rate of the ROC convex hull (ROCCH-EER)."""
        return self._eer_rocch.rate

    @property
    def eer_rocch_threshold(self) -> float:
        """Threshold at the ROCCH-EER, interpolated along the hull segment."""
        return self._eer_rocch.threshold

    @cached_property
    def _eer_nearest(self) -> curves.Crossing:
        return curves.eer_nearest(self.edges, self.neg, self.pos)

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
        return curves.roc_curve(self.edges, self.neg, self.pos)

    def pr_curve(self) -> tuple[Array, Array, Array]:
        """``(precision, recall, thresholds)`` in scikit-learn's layout (thresholds increasing)."""
        return curves.pr_curve(self.edges, self.neg, self.pos)

    def det_curve(self) -> tuple[Array, Array, Array]:
        """``(fpr, fnr, thresholds)`` in scikit-learn's layout; plot on normal-deviate axes."""
        return curves.det_curve(self.edges, self.neg, self.pos)

    # -- queries ------------------------------------------------------------
    @cached_property
    def _points(self) -> curves.OperatingPoints:
        return curves.operating_points(self.edges, self.neg, self.pos)

    def at(self, threshold: float) -> ConfusionReport:
        """The 2x2 table and its rates at another threshold.

        Exact when ``threshold`` is the lower edge of a bin (every curve
        threshold is) or the accumulator's own threshold. Elsewhere the bin
        holding ``threshold`` cannot be split, so the threshold is moved up to
        that bin's upper edge: all of the bin counts as predicted negative.
        The returned report's ``threshold`` is the one actually used.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator(bins=se.Bins.from_edges([0.1, 0.35, 0.4, 0.8]))
        >>> acc.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
        >>> r = acc.get().at(0.35)
        >>> r.tp, r.fp, r.threshold
        (2, 1, 0.35)
        >>> acc.get().at(0.6).threshold
        0.8
        """
        t = check_real("threshold", threshold)
        if t == self.threshold:
            return ConfusionReport(self.tp, self.fp, self.tn, self.fn, self.threshold)
        key = self.bins.key(t)
        edge = float(self.bins.lower_edges([key])[0])
        if edge != t:
            key += 1
            edge = float(self.bins.lower_edges([key])[0]) if key <= self.bins.key_max else math.inf
        start = int(np.searchsorted(self.keys, key, side="left"))
        tp = self.pos[start:].sum()
        fp = self.neg[start:].sum()
        cast = float if self.neg.dtype == np.float64 else int
        tp, fp = cast(tp), cast(fp)
        p, n = self.positives, self.negatives
        return ConfusionReport(tp=tp, fp=fp, tn=n - fp, fn=p - tp, threshold=edge)

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
        return curves.cost_curve(self.edges, self.neg, self.pos)

    def expected_cost(self) -> float:
        """Area under the lower envelope of the cost curve."""
        return curves.expected_cost(self.edges, self.neg, self.pos)

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
            raise ValueError(f"p must be between 0 and 1, got {p!r}")
        c_fn = check_real("cost_fn", cost_fn, finite=True, nonnegative=True)
        c_fp = check_real("cost_fp", cost_fp, finite=True, nonnegative=True)
        if prior * c_fn + (1 - prior) * c_fp == 0:
            raise ValueError(
                f"p, cost_fn and cost_fp give no cost at all: p={p!r}, cost_fn={cost_fn!r}, cost_fp={cost_fp!r}"
            )
        return curves.min_cost(self.edges, self.neg, self.pos, curves.probability_cost(prior, c_fn, c_fp))

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
            raise ValueError(f"p_target must be strictly between 0 and 1, got {p_target!r}")
        cm = check_real("c_miss", c_miss, finite=True)
        cf = check_real("c_fa", c_fa, finite=True)
        if cm <= 0 or cf <= 0:
            raise ValueError(f"c_miss and c_fa must be positive, got {c_miss!r} and {c_fa!r}")
        return curves.min_dcf(self.edges, self.neg, self.pos, p, cm, cf)

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
        }
        if metric not in pairs:
            raise ValueError(f"metric must be one of {sorted(pairs)}, got {metric!r}")
        return inference.wilson_interval(*pairs[metric], level=level)

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
        return {name: getattr(self, name) for name in self.SCALAR_METRICS}

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


def _default_neg_label(pos_label: Any) -> Any:
    if isinstance(pos_label, (bool, np.bool_)):
        return not pos_label
    if pos_label == 1:
        return 0
    if pos_label == 0:
        return 1
    raise ValueError(f"neg_label must be given when pos_label is not 0, 1 or a bool, got pos_label={pos_label!r}")


def _kernel_inputs(x: Array, is_pos: np.ndarray | bool) -> tuple[Array, np.ndarray]:
    """Scores and labels as the compiled kernels read them: contiguous, one label or one per score."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    if isinstance(is_pos, (bool, np.bool_)):
        return x, np.array([is_pos], dtype=np.bool_)
    return x, np.ascontiguousarray(is_pos)


_THRESHOLD_PLACES: dict[tuple[Any, ...], tuple[int, npt.NDArray[np.int64], bool]] = {}


def _threshold_place(bins: Bins, t: float) -> tuple[int, npt.NDArray[np.int64], bool]:
    """The threshold's bin key, its two labelled codes and whether it is the bin's lower edge.

    Remembered per (scheme, threshold): working it out takes longer than the
    rest of building an accumulator, and many accumulators share both.
    """
    index = (bins._identity(), t)
    place = _THRESHOLD_PLACES.get(index)
    if place is None:
        codes = _readonly(bins.labelled_codes([t, t], [False, True]))
        place = (bins.key(t), codes, bins.is_lower_edge(t))
        if len(_THRESHOLD_PLACES) >= 256:
            _THRESHOLD_PLACES.clear()
        _THRESHOLD_PLACES[index] = place
    return place


class BinaryAccumulator(EventBuffer, Mergeable, Persistable):
    """Streaming, mergeable evaluation of a binary classifier's scores.

    The state is a pair of counts per score bin (negatives, positives) and the
    exact 2x2 counts at ``threshold``. Merging two accumulators adds their
    counts, so shards of a stream evaluated apart and merged give the counts
    of the whole stream.

    Parameters
    ----------
    bins : Bins, optional
        The binning scheme; default :meth:`Bins.range_free`, which needs no
        score range.
    threshold : float, default 0.5
        Decision threshold: predicted positive iff ``score >= threshold``.
        The 2x2 counts at it are exact whatever the bins.
    pos_label : default 1
        The label of the positive class.
    neg_label : optional
        The label of the negative class; by default 0 for ``pos_label=1``,
        1 for ``pos_label=0`` and the other bool for a bool. Any other label
        is an error.

    Examples
    --------
    >>> import streameval as se
    >>> acc = se.BinaryAccumulator()
    >>> for y, score in [(1, 0.9), (0, 0.2), (1, 0.4), (0, 0.6)]:
    ...     acc.update(y, score)
    >>> r = acc.get()
    >>> r.tp, r.fp, r.tn, r.fn, r.auc
    (1, 1, 1, 1, 0.75)
    >>> both = acc + acc
    >>> both.get().n
    8
    """

    def __init__(
        self,
        bins: Bins | None = None,
        threshold: float = 0.5,
        pos_label: Any = 1,
        neg_label: Any = None,
    ) -> None:
        if bins is None:
            bins = Bins.range_free()
        if not isinstance(bins, Bins):
            raise TypeError(f"bins must be a streameval Bins, got {bins!r}")
        t = check_real("threshold", threshold)
        try:
            hash(pos_label), hash(neg_label)
            if neg_label is None:
                neg_label = _default_neg_label(pos_label)
            same = bool(pos_label == neg_label)
        except TypeError:
            raise TypeError(
                f"pos_label and neg_label must be hashable scalars, got {pos_label!r} and {neg_label!r}"
            ) from None
        if same:
            raise ValueError(f"pos_label and neg_label must differ, got {pos_label!r} for both")
        self.bins = bins
        self.threshold = t
        self.pos_label = pos_label
        self.neg_label = neg_label
        self._counts = LabelledCounts(2 * bins.n_codes)
        self._t_key, self._t_codes, self._t_is_edge = _threshold_place(bins, t)
        # events of the threshold's bin that score >= threshold: [negatives, positives]
        self._above = np.zeros(2, dtype=np.int64)
        self._reset_buffers()

    # -- per-event path -----------------------------------------------------
    # update(y, score, w=1.0) comes from EventBuffer (compiled, or its Python
    # twin): it stores plain unit-weight events and sends the rest here.
    def _reset_buffers(self) -> None:
        self._set_labels(self.pos_label, self.neg_label)
        self._labels = {self.neg_label: False, self.pos_label: True}
        self._wbuf_score = array("d")
        self._wbuf_weight = array("d")
        self._wbuf_pos = array("b")

    def _buffered(self) -> int:
        """Events stored but not yet counted."""
        return self._n_unit + len(self._wbuf_score)

    def _update_slow(self, y: Any, score: Any, w: Any = _UNIT) -> None:
        """Check one event that is not a plain unit-weight one, then store it."""
        try:
            is_pos = self._labels.get(y)
        except TypeError:
            is_pos = None
        if is_pos is None:
            raise ValueError(
                f"y must be {self.pos_label!r} (positive) or {self.neg_label!r} (negative), got {y!r}"
            ) from None
        s = check_real("score", score)
        weight = check_real("w", w, finite=True, nonnegative=True)
        if weight == 1.0:
            self._push_unit(is_pos, s)
            return
        self._wbuf_score.append(s)
        self._wbuf_weight.append(weight)
        self._wbuf_pos.append(is_pos)
        if len(self._wbuf_score) >= FLUSH_EVERY:
            self._flush()

    # a call of update() with missing or unknown arguments fails in here (both
    # paths): the message names the method the caller called
    _update_slow.__qualname__ = "BinaryAccumulator.update"

    def _flush(self) -> None:
        """Count the buffered per-event updates (a logical no-op)."""
        if self._n_unit:
            scores, labels = self._unit_events()
            self._ingest(np.frombuffer(scores, dtype=np.float64), np.frombuffer(labels, dtype=np.bool_), None)
            self._drop_unit()
        if len(self._wbuf_score):
            self._ingest(
                np.frombuffer(self._wbuf_score, dtype=np.float64).copy(),
                np.frombuffer(self._wbuf_pos, dtype=np.int8).astype(np.bool_),
                np.frombuffer(self._wbuf_weight, dtype=np.float64).copy(),
            )
            self._wbuf_score = array("d")
            self._wbuf_weight = array("d")
            self._wbuf_pos = array("b")

    # -- batch path ---------------------------------------------------------
    def update_many(self, y: npt.ArrayLike, scores: npt.ArrayLike, w: npt.ArrayLike | float | None = None) -> None:
        """Count many events at once; all of them or, on any bad input, none.

        Parameters
        ----------
        y : array-like of labels
        scores : array-like of float, same length
        w : array-like of float, float or None
            Weights (finite, >= 0); a scalar applies to every event.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator()
        >>> acc.update_many([1, 0, 1], [0.9, 0.1, 0.2])
        >>> acc.update_many([1, 2], [0.5, 0.5])
        Traceback (most recent call last):
        ...
        ValueError: y must be 1 (positive) or 0 (negative), got 2 at index 1
        >>> acc.get().n
        3
        """
        x = as_scores("scores", scores, check_nan=False)
        kernel = batch_kernel(self.bins)
        raw = self._raw_labels(y) if kernel is not None else None
        is_pos = raw if raw is not None else as_labels("y", y, self.pos_label, self.neg_label)
        check_same_length(("y", is_pos), ("scores", x))
        weights = as_weights("w", w, x.size)
        # without weights the kernel checks scores and 0/1 labels as it counts; on
        # bad input it takes back what it counted and the plain checks below explain
        if kernel is not None and weights is None and x.size and not self._ingest_compiled(kernel, x, is_pos, 1):
            return
        if raw is not None:
            is_pos = as_labels("y", raw, self.pos_label, self.neg_label)
        check_no_nan("scores", x)
        self._ingest(x, is_pos, weights)

    def _raw_labels(self, y: Any) -> np.ndarray | None:
        """``y`` itself when the compiled kernel can check it (a 1-D bool or integer array of 0/1 labels)."""
        if (
            not isinstance(y, np.ndarray)
            or y.ndim != 1
            or y.dtype.kind not in "biu"
            or not (self.pos_label == 1 and self.neg_label == 0)
        ):
            return None
        return y

    def _ingest(self, x: Array, is_pos: npt.NDArray[np.bool_] | bool, weights: Array | None, sign: int = 1) -> None:
        """Count validated events (``sign=-1`` takes them back out).

        Everything is computed before anything is applied.
        """
        n = x.size
        if n == 0:
            return
        kernel = batch_kernel(self.bins)
        if kernel is not None and weights is None:
            refused = self._ingest_compiled(kernel, x, is_pos, sign)
            assert not refused, "checked events were refused"
            return
        if kernel is not None:  # weights: the compiled pass sums them in numpy's order
            x, labels = _kernel_inputs(x, is_pos)
            weights = np.ascontiguousarray(weights, dtype=np.float64)
            tally, hit = self._counts.tally_compiled(kernel[0], x, labels, weights, self._at_threshold(), kernel[1])
        else:
            tally, hit = self._tally(x, is_pos, weights)
        above = None
        if hit.size:
            ge = x[hit] >= self.threshold
            lab = np.broadcast_to(is_pos, (n,))[hit]
            wt = np.ones(hit.size) if weights is None else weights[hit]
            above = (wt[ge & ~lab].sum(), wt[ge & lab].sum())
        self._counts.apply(tally if sign > 0 else -tally, weights is not None)
        self._add_above(None if above is None else (sign * above[0], sign * above[1]))

    def _add_above(self, above: tuple[Any, Any] | list[int] | None) -> None:
        """Add signed [negatives, positives] of the threshold's bin at or above it (float once counts are)."""
        if self._counts.is_weighted and self._above.dtype != np.float64:
            self._above = self._above.astype(np.float64)
        if above is not None:
            self._above += np.array(above, dtype=self._above.dtype)

    def _tally(
        self, x: Array, is_pos: npt.NDArray[np.bool_] | bool, weights: Array | None
    ) -> tuple[np.ndarray, npt.NDArray[np.intp]]:
        """numpy's path: the tally of validated events, block by block, and the events in the threshold's bin."""
        n = x.size
        single_label = isinstance(is_pos, (bool, np.bool_))
        ws = Workspace(min(BLOCK, n))
        tally = None
        hits = [np.zeros(0, dtype=np.intp)]
        t_neg, t_pos = int(self._t_codes[0]), int(self._t_codes[1])
        for start in range(0, n, BLOCK):
            stop = min(start + BLOCK, n)
            labels = is_pos if single_label else is_pos[start:stop]
            codes = self.bins._labelled_codes(x[start:stop], labels, ws)
            if not self._t_is_edge:
                hit = np.flatnonzero((codes == t_neg) | (codes == t_pos))
                if hit.size:
                    hits.append(hit + start)
            # gives storage to new pages (a logical no-op); counts are not touched yet
            flat = self._counts.flat_index(codes, ws)
            tally = self._counts.tally(flat, None if weights is None else weights[start:stop], tally)
        assert tally is not None
        return tally, np.concatenate(hits)

    def _at_threshold(self) -> tuple[int, int, bool, float]:
        """The compiled kernels' threshold arguments: its two codes, whether to check, the threshold."""
        return int(self._t_codes[0]), int(self._t_codes[1]), not self._t_is_edge, self.threshold

    def _ingest_compiled(
        self, kernel: tuple[Callable[..., Any], tuple[Any, ...]], x: Array, is_pos: np.ndarray | bool, sign: int
    ) -> bool:
        """:meth:`_ingest` of unweighted events in one compiled pass.

        ``kernel`` is the scheme's compiled counting function and its scheme
        arguments (``_events.batch_kernel``). ``is_pos`` may also be
        unchecked integer labels that must be 0 or 1. The kernel refuses a
        NaN score or another label; then, and if anything fails, the events
        counted so far are taken back out, so the state is as before the
        call. Returns whether the input was refused.
        """
        function, scheme_args = kernel
        state = self._counts
        n = x.size
        x, labels = _kernel_inputs(x, is_pos)
        at_threshold = self._at_threshold()
        done, refused = 0, False
        try:
            done, refused, above = state.count_compiled(function, x, labels, sign, at_threshold, scheme_args, 0, n)
        finally:
            if refused and done:
                state.count_compiled(function, x, labels, -sign, at_threshold, scheme_args, 0, done)
        if refused:
            return True
        self._add_above(above)
        return False

    def _revert(self, is_pos: bool, score: Any, w: Any = 1.0) -> None:
        """Take one event counted before back out (river's ``revert``)."""
        s = check_real("score", score)
        weight = check_real("w", w, finite=True, nonnegative=True)
        self._flush()
        self._ingest(np.array([s]), np.array([bool(is_pos)]), None if weight == 1.0 else np.array([weight]), sign=-1)

    def _histogram(self) -> tuple[npt.NDArray[np.int64], np.ndarray, np.ndarray]:
        """Keys (ascending) of non-empty bins with their negatives and positives."""
        return self._counts.histogram(self.bins)

    # -- reading ------------------------------------------------------------
    def get(self) -> BinaryReport:
        """A frozen report of every metric; the accumulated counts do not change.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator()
        >>> acc.update_many([1, 0], [0.9, 0.1])
        >>> acc.get().auc
        1.0
        """
        self._flush()
        keys, neg, pos = self._histogram()
        weighted = self._counts.is_weighted
        cast = float if weighted else int
        start = int(np.searchsorted(keys, self._t_key, side="right"))
        tp = pos[start:].sum()
        fp = neg[start:].sum()
        if self._t_is_edge:
            t_neg = self._counts.count_at(int(self._t_codes[0]))
            t_pos = self._counts.count_at(int(self._t_codes[1]))
        else:
            t_neg, t_pos = self._above[0], self._above[1]
        tp, fp = cast(tp + t_pos), cast(fp + t_neg)
        p, n = cast(pos.sum()), cast(neg.sum())
        return BinaryReport(
            tp=tp,
            fp=fp,
            tn=n - fp,
            fn=p - tp,
            threshold=self.threshold,
            bins=self.bins,
            keys=_readonly(keys),
            neg=_readonly(neg),
            pos=_readonly(pos),
            pos_label=self.pos_label,
            neg_label=self.neg_label,
        )

    @property
    def n(self) -> int | float:
        """Total count (or weight) of events so far.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator()
        >>> acc.update(1, 0.3)
        >>> acc.n
        1
        """
        self._flush()
        total = self._counts.nonzero()[1].sum()
        return float(total) if self._counts.is_weighted else int(total)

    @property
    def nbytes(self) -> int:
        """Bytes held by this accumulator's arrays and buffers."""
        buffers = (self._wbuf_score, self._wbuf_weight, self._wbuf_pos)
        weighted = sum(b.buffer_info()[1] * b.itemsize for b in buffers)
        return self._counts.nbytes + self._above.nbytes + self._unit_nbytes + weighted

    # -- merging ------------------------------------------------------------
    def _check_mergeable(self, other: Any) -> None:
        if not isinstance(other, BinaryAccumulator):
            raise TypeError(f"can only merge a BinaryAccumulator with another, got {type(other).__name__}")
        for name in ("bins", "threshold", "pos_label", "neg_label"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if not (mine == theirs and type(mine) is type(theirs)):
                raise ValueError(f"cannot merge accumulators whose {name} differ: {mine!r} and {theirs!r}")

    def copy(self) -> BinaryAccumulator:
        """An independent accumulator with the same counts."""
        self._flush()
        new = BinaryAccumulator.__new__(BinaryAccumulator)
        new.bins, new.threshold = self.bins, self.threshold
        new.pos_label, new.neg_label = self.pos_label, self.neg_label
        new._t_key, new._t_is_edge, new._t_codes = self._t_key, self._t_is_edge, self._t_codes
        new._counts = self._counts.copy()
        new._above = self._above.copy()
        new._reset_buffers()
        return new

    def _merge_in(self, other: BinaryAccumulator) -> None:
        other._flush()
        self._flush()
        self._counts.merge_in(other._counts)
        if self._counts.is_weighted:
            self._above = self._above.astype(np.float64) + other._above
        else:
            self._above = self._above + other._above

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BinaryAccumulator):
            return NotImplemented
        try:
            self._check_mergeable(other)
        except ValueError:
            return False
        self._flush()
        other._flush()
        return self._counts.same_counts(other._counts) and np.array_equal(self._above, other._above)

    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the counts, not the per-event buffers (which are counted first)."""
        self._flush()
        state = dict(self.__dict__)
        buffers = ("_buf_pos", "_buf_neg", "_route", "_room", "_labels", "_wbuf_score", "_wbuf_weight", "_wbuf_pos")
        for name in buffers:
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset_buffers()

    def __repr__(self) -> str:
        return (
            f"BinaryAccumulator(bins={self.bins!r}, threshold={self.threshold!r}, "
            f"pos_label={self.pos_label!r}, n={self.n})"
        )
