"""MulticlassReport: every multiclass metric, a pure view over a confusion matrix and per-class reports."""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ._numeric import scaled_to_one
from ._report_output import SummaryAndPage
from ._validation import show, show_many
from .binary_report import BinaryReport
from .confusion import ratio

__all__ = ["MulticlassReport"]


def _ratios(num: np.ndarray, den: np.ndarray) -> npt.NDArray[np.float64]:
    """Elementwise num / den of non-negative counts: nan where both are 0."""
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _nanmean(values: np.ndarray) -> float:
    ok = ~np.isnan(values)
    return float(values[ok].mean()) if ok.any() else math.nan


def _weighted(values: np.ndarray, weights: np.ndarray) -> float:
    ok = ~np.isnan(values) & (weights > 0)
    total = weights[ok].sum()
    return float((values[ok] * weights[ok]).sum() / total) if total > 0 else math.nan


@dataclass(frozen=True, eq=False)
class MulticlassReport(SummaryAndPage):
    """Every multiclass metric of an accumulator, frozen at the time of ``get()``.

    Per-class rates come from the confusion matrix (the prediction is the
    class with the highest score, or the given label; ties go to the class
    first in a fixed order of labels, by type name then ``repr``, so that
    every shard decides alike). Averages over classes
    skip classes whose value is undefined (``nan``), as scikit-learn does with
    ``zero_division=np.nan``; ``weighted_*`` averages weigh classes by support
    (their number of true events).

    Examples
    --------
    >>> import streameval as se
    >>> acc = se.MulticlassAccumulator(classes=["a", "b", "c"])
    >>> acc.update("a", {"a": 0.7, "b": 0.2, "c": 0.1})
    >>> acc.update("b", {"a": 0.5, "b": 0.3, "c": 0.2})
    >>> acc.update("c", [0.1, 0.2, 0.7])
    >>> r = acc.get()
    >>> r.confusion_matrix.tolist()
    [[1, 0, 0], [1, 0, 0], [0, 0, 1]]
    >>> round(r.accuracy, 4), round(r.mean_f1, 4)
    (0.6667, 0.5556)
    """

    classes: tuple[Hashable, ...]
    confusion_matrix: npt.NDArray[Any]
    per_class: tuple[BinaryReport, ...] | None = field(repr=False)
    pooled: BinaryReport | None = field(repr=False)

    SCALAR_METRICS: ClassVar[tuple[str, ...]] = (
        "n", "accuracy", "kappa",
        "macro_precision", "macro_recall", "macro_f1", "mean_f1",
        "micro_precision", "micro_recall", "micro_f1",
        "weighted_precision", "weighted_recall", "weighted_f1",
        "macro_auc", "micro_auc", "weighted_auc",
        "macro_average_precision", "micro_average_precision", "weighted_average_precision",
    )  # fmt: skip

    # -- the table ----------------------------------------------------------
    @property
    def n(self) -> int | float:
        """Total count (or weight) of events."""
        total = self.confusion_matrix.sum()
        return float(total) if self.confusion_matrix.dtype == np.float64 else int(total)

    @cached_property
    def _per_class_counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        cm = self.confusion_matrix.astype(np.float64)
        tp = np.diag(cm)
        fp = cm.sum(axis=0) - tp
        fn = cm.sum(axis=1) - tp
        return tp, fp, fn, cm.sum(axis=1)

    @property
    def support(self) -> npt.NDArray[np.float64]:
        """True events per class (row sums of the confusion matrix)."""
        return self._per_class_counts[3]

    @cached_property
    def precision_per_class(self) -> npt.NDArray[np.float64]:
        """TP / (TP + FP) for every class, in the order of ``classes``."""
        tp, fp, _, _ = self._per_class_counts
        return _ratios(tp, tp + fp)

    @cached_property
    def recall_per_class(self) -> npt.NDArray[np.float64]:
        """TP / (TP + FN) for every class."""
        tp, _, fn, _ = self._per_class_counts
        return _ratios(tp, tp + fn)

    @cached_property
    def f1_per_class(self) -> npt.NDArray[np.float64]:
        """2 TP / (2 TP + FP + FN) for every class."""
        tp, fp, fn, _ = self._per_class_counts
        return _ratios(2 * tp, 2 * tp + fp + fn)

    @property
    def accuracy(self) -> float:
        """Share of events whose predicted class is the true one."""
        return ratio(float(np.trace(self.confusion_matrix)), float(self.n))

    @property
    def kappa(self) -> float:
        """Cohen's kappa: (p_o - p_e) / (1 - p_e)."""
        total = float(self.n)
        if total == 0:
            return math.nan
        cm, total = scaled_to_one(total, self.confusion_matrix.astype(np.float64), total)  # weights of 1e200
        p_o = np.trace(cm) / total
        p_e = float(np.dot(cm.sum(axis=0), cm.sum(axis=1))) / total**2
        return ratio(p_o - p_e, 1.0 - p_e)

    @property
    def macro_precision(self) -> float:
        """Mean over classes of precision."""
        return _nanmean(self.precision_per_class)

    @property
    def macro_recall(self) -> float:
        """Mean over classes of recall."""
        return _nanmean(self.recall_per_class)

    @property
    def macro_f1(self) -> float:
        """2 macro-P macro-R / (macro-P + macro-R): F1 of the macro averages."""
        p, r = self.macro_precision, self.macro_recall
        return ratio(2 * p * r, p + r)

    @property
    def mean_f1(self) -> float:
        """Mean over classes of F1 (scikit-learn's ``average='macro'`` F1)."""
        return _nanmean(self.f1_per_class)

    @property
    def micro_precision(self) -> float:
        """Precision of the summed per-class counts (equal to accuracy here)."""
        tp, fp, _, _ = self._per_class_counts
        return ratio(tp.sum(), tp.sum() + fp.sum())

    @property
    def micro_recall(self) -> float:
        """Recall of the summed per-class counts."""
        tp, _, fn, _ = self._per_class_counts
        return ratio(tp.sum(), tp.sum() + fn.sum())

    @property
    def micro_f1(self) -> float:
        """F1 of the summed per-class counts."""
        tp, fp, fn, _ = self._per_class_counts
        return ratio(2 * tp.sum(), 2 * tp.sum() + fp.sum() + fn.sum())

    @property
    def weighted_precision(self) -> float:
        """Precision averaged over classes weighted by support."""
        return _weighted(self.precision_per_class, self.support)

    @property
    def weighted_recall(self) -> float:
        """Recall averaged over classes weighted by support."""
        return _weighted(self.recall_per_class, self.support)

    @property
    def weighted_f1(self) -> float:
        """F1 averaged over classes weighted by support."""
        return _weighted(self.f1_per_class, self.support)

    # -- scores -------------------------------------------------------------
    def _ovr(self, name: str) -> np.ndarray:
        if self.per_class is None:
            return np.full(len(self.classes), math.nan)
        return np.array([getattr(r, name) for r in self.per_class])

    @property
    def auc_per_class(self) -> npt.NDArray[np.float64]:
        """One-vs-rest ROC AUC of every class (``nan`` with hard labels only)."""
        return self._ovr("auc")

    @property
    def average_precision_per_class(self) -> npt.NDArray[np.float64]:
        """One-vs-rest average precision of every class."""
        return self._ovr("average_precision")

    @property
    def macro_auc(self) -> float:
        """Mean of the one-vs-rest AUCs."""
        return _nanmean(self.auc_per_class)

    @property
    def weighted_auc(self) -> float:
        """One-vs-rest AUCs averaged with class support as weights."""
        return _weighted(self.auc_per_class, self.support)

    @property
    def micro_auc(self) -> float:
        """AUC of all one-vs-rest (positive, negative) pairs pooled together."""
        return self.pooled.auc if self.pooled is not None else math.nan

    @property
    def macro_average_precision(self) -> float:
        """Mean of the one-vs-rest average precisions."""
        return _nanmean(self.average_precision_per_class)

    @property
    def weighted_average_precision(self) -> float:
        """One-vs-rest average precisions weighted by support."""
        return _weighted(self.average_precision_per_class, self.support)

    @property
    def micro_average_precision(self) -> float:
        """Average precision of all one-vs-rest scores pooled together."""
        return self.pooled.average_precision if self.pooled is not None else math.nan

    def report(self, cls: Hashable) -> BinaryReport:
        """The one-vs-rest ``BinaryReport`` of class ``cls``.

        Its 2x2 counts come from the confusion matrix; its histogram from the
        scores of ``cls`` (positive: events of class ``cls``).
        """
        if self.per_class is None:
            raise ValueError("this accumulator counted predicted labels only: there are no one-vs-rest scores")
        try:
            return self.per_class[self.classes.index(cls)]
        except ValueError:
            raise ValueError(f"cls must be one of {show_many(self.classes)}, got {show(cls)}") from None

    def to_dict(self) -> dict[str, float]:
        """Every scalar metric by name."""
        return {name: getattr(self, name) for name in self.SCALAR_METRICS}

    def __repr__(self) -> str:
        return (
            f"MulticlassReport(classes={show_many(self.classes)}, n={self.n}, accuracy={self.accuracy:.4f}, "
            f"mean_f1={self.mean_f1:.4f}, macro_auc={self.macro_auc:.4f})"
        )
