"""MulticlassAccumulator: a K x K confusion matrix and one-vs-rest score histograms."""

from __future__ import annotations

import dataclasses
import math
from array import array
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ._events import FLUSH_EVERY
from ._persist import Mergeable, Persistable
from ._validation import as_scores, as_weights, check_real, check_same_length
from .binary import BinaryAccumulator, BinaryReport
from .bins import Bins
from .confusion import ratio

__all__ = ["MulticlassAccumulator", "MulticlassReport"]


def _show(value: Any) -> str:
    text = repr(value.item() if isinstance(value, np.generic) else value)
    return text if len(text) <= 80 else text[:77] + "..."


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
class MulticlassReport:
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
        cm = self.confusion_matrix.astype(np.float64)
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
            raise ValueError(f"cls must be one of {list(self.classes)!r}, got {cls!r}") from None

    def to_dict(self) -> dict[str, float]:
        """Every scalar metric by name."""
        return {name: getattr(self, name) for name in self.SCALAR_METRICS}

    def __repr__(self) -> str:
        return (
            f"MulticlassReport(classes={list(self.classes)!r}, n={self.n}, accuracy={self.accuracy:.4f}, "
            f"mean_f1={self.mean_f1:.4f}, macro_auc={self.macro_auc:.4f})"
        )


class MulticlassAccumulator(Mergeable, Persistable):
    """Streaming, mergeable evaluation of a K-class classifier.

    The state is the K x K confusion matrix (rows true, columns predicted) and,
    when scores are given, one score histogram per class holding that class's
    score of every event, labelled positive when the event is of that class.

    Parameters
    ----------
    classes : sequence of labels, optional
        The classes, in the order score sequences use. Without it, classes are
        learnt from the stream in order of appearance; a class that appears
        late counts every earlier event as a negative with score 0 for it (as
        a missing entry of a mapping means score 0).
    bins : Bins, optional
        The binning scheme of the per-class histograms; default range-free.

    Examples
    --------
    >>> import streameval as se
    >>> acc = se.MulticlassAccumulator()
    >>> acc.update("cat", {"cat": 0.8, "dog": 0.2})
    >>> acc.update("dog", {"cat": 0.4, "dog": 0.6})
    >>> acc.update("bird", {"cat": 0.3, "dog": 0.3, "bird": 0.4})
    >>> r = acc.get()
    >>> r.classes, r.accuracy
    (('cat', 'dog', 'bird'), 1.0)

    Shards merge by class label, whatever order their classes appeared in:

    >>> a, b = se.MulticlassAccumulator(), se.MulticlassAccumulator()
    >>> a.update("x", {"x": 0.9, "y": 0.1})
    >>> b.update("z", {"z": 0.8, "x": 0.2})
    >>> m = a.merge(b)
    >>> m.classes, m.get().confusion_matrix.tolist()
    (('x', 'y', 'z'), [[1, 0, 0], [0, 0, 0], [0, 0, 1]])
    """

    def __init__(self, classes: Iterable[Hashable] | None = None, bins: Bins | None = None) -> None:
        if bins is None:
            bins = Bins.range_free()
        if not isinstance(bins, Bins):
            raise TypeError(f"bins must be a streameval Bins, got {bins!r}")
        self.bins = bins
        self._classes: list[Hashable] = []
        self._index: dict[Hashable, int] = {}
        self._mode: str | None = None  # "scores" or "labels", fixed by the first update
        self._cm: np.ndarray = np.zeros((0, 0), dtype=np.int64)
        self._ovr: list[BinaryAccumulator] = []
        self._fixed = False
        self._reset_buffers()
        if classes is not None:
            if isinstance(classes, (str, bytes)) or not isinstance(classes, Iterable):
                raise TypeError(f"classes must be a sequence of labels, got {classes!r}")
            labels = list(classes)
            for i, label in enumerate(labels):
                try:
                    hash(label)
                except TypeError:
                    raise TypeError(f"classes must hold hashable labels, got {label!r} at index {i}") from None
                if label in self._index:
                    raise ValueError(f"classes must be distinct, got {label!r} twice")
                self._add_class(label)
            if len(labels) < 2:
                raise ValueError(f"classes must hold at least 2 labels, got {labels!r}")
            self._fixed = True

    # -- classes ------------------------------------------------------------
    @property
    def classes(self) -> tuple[Hashable, ...]:
        """The classes in their current order."""
        return tuple(self._classes)

    def _new_ovr(self) -> BinaryAccumulator:
        # threshold -inf is the lower edge of the lowest bin: no threshold tracking
        return BinaryAccumulator(bins=self.bins, threshold=-math.inf, pos_label=True, neg_label=False)

    def _zero_code(self) -> int:
        return int(self.bins.labelled_codes([0.0], [False])[0])

    def _add_class(self, label: Hashable) -> None:
        self._flush()
        k = len(self._classes)
        self._classes.append(label)
        self._index[label] = k
        cm = np.zeros((k + 1, k + 1), dtype=self._cm.dtype)
        cm[:k, :k] = self._cm
        self._cm = cm
        if self._mode == "scores":
            acc = self._new_ovr()
            earlier = self._total()
            if earlier:
                acc._counts.add_at(self._zero_code(), earlier)  # earlier events: negatives with score 0
            self._ovr.append(acc)

    def _set_mode(self, mode: str) -> None:
        if self._mode is None:
            self._mode = mode
            if mode == "scores":
                self._ovr = [self._new_ovr() for _ in self._classes]
        elif self._mode != mode:
            raise ValueError(
                f"this accumulator counts {self._mode}, got {mode}: one accumulator takes either class scores "
                "or predicted labels, not both"
            )

    def _total(self) -> int | float:
        """Events (or total weight) counted so far: the sum of the confusion matrix."""
        total = self._cm.sum()
        return float(total) if self._cm.dtype == np.float64 else int(total)

    def _unknown(self, name: str, label: Any) -> ValueError:
        return ValueError(f"{name} must be one of the classes {self._classes!r}, got {_show(label)}")

    # -- per-event path -----------------------------------------------------
    def _reset_buffers(self) -> None:
        self._buf_y = array("q")
        self._buf_pred = array("q")
        self._buf_scores = array("d")
        self._buf_w = array("d")
        self._buf_weighted = False

    def update(
        self, y: Hashable, scores: Mapping[Hashable, float] | Sequence[float] | Hashable, w: float = 1.0
    ) -> None:
        """Count one event.

        Parameters
        ----------
        y : label
            The true class.
        scores : mapping, sequence or label
            A mapping class -> score (as river's ``predict_proba_one`` gives;
            a class missing from it scores 0 when classes are learnt from the
            stream, and is an error when they were given), a sequence aligned
            with ``classes``, or the predicted class itself.
        w : float, default 1.0
            Weight, finite and >= 0.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.MulticlassAccumulator(classes=[0, 1, 2])
        >>> acc.update(2, [0.1, 0.3, 0.6])
        >>> acc.update(1, {0: 0.5, 1: 0.4, 2: 0.1})
        >>> acc.get().confusion_matrix.tolist()
        [[0, 0, 0], [1, 0, 0], [0, 0, 1]]
        """
        weight = check_real("w", w, finite=True, nonnegative=True)
        try:
            hash(y)
        except TypeError:
            raise TypeError(f"y must be a hashable class label, got {_show(y)}") from None
        new: list[Hashable] = []
        if y not in self._index:
            if self._fixed:
                raise self._unknown("y", y)
            new.append(y)
        if isinstance(scores, Mapping):
            mode = "scores"
            for key in scores:
                if key not in self._index and key not in new:
                    if self._fixed:
                        raise self._unknown("scores key", key)
                    new.append(key)
            order = self._classes + [c for c in new if c not in self._index]
            if self._fixed:
                missing = [c for c in order if c not in scores]
                if missing:
                    raise ValueError(f"scores must give a score for every class, missing {missing!r}")
            row = [check_real(f"scores[{c!r}]", scores.get(c, 0.0)) for c in order]
            if not scores:
                raise ValueError("scores must give at least one class a score, got an empty mapping")
            predicted = _best(scores.items())  # only the classes the mapping lists compete
        elif isinstance(scores, (list, tuple, np.ndarray)):
            mode = "scores"
            values = np.asarray(scores)
            if values.ndim != 1:
                raise ValueError(f"scores must be 1-D, got shape {values.shape}")
            k = len(self._classes) + len(new)
            if values.size != k:
                raise ValueError(
                    f"scores must hold one score per class ({k}: {self._classes + new!r}), got {values.size}"
                )
            row = [check_real(f"scores[{i}]", v) for i, v in enumerate(values.tolist())]
            predicted = _best(zip(self._classes + new, row, strict=True))
        else:
            mode = "labels"
            try:
                hash(scores)
            except TypeError:
                raise TypeError(f"scores must be a mapping, a sequence or a class label, got {_show(scores)}") from None
            if scores not in self._index and scores not in new:
                if self._fixed:
                    raise self._unknown("scores", scores)
                new.append(scores)
            row = []
            predicted = scores
        if self._mode is not None and self._mode != mode:
            self._set_mode(mode)  # raises
        # everything checked: now change state
        self._set_mode(mode)
        for label in new:
            self._add_class(label)
        self._buf_y.append(self._index[y])
        self._buf_pred.append(self._index[predicted])
        if mode == "scores":
            self._buf_scores.extend(row)
        self._buf_w.append(weight)
        if weight != 1.0:
            self._buf_weighted = True
        if len(self._buf_y) >= FLUSH_EVERY:
            self._flush()

    def _flush(self) -> None:
        n = len(self._buf_y)
        if n == 0:
            return
        y_idx = np.frombuffer(self._buf_y, dtype=np.int64).copy()
        pred = np.frombuffer(self._buf_pred, dtype=np.int64).copy()
        w = np.frombuffer(self._buf_w, dtype=np.float64).copy() if self._buf_weighted else None
        if self._mode == "scores":
            scores = np.frombuffer(self._buf_scores, dtype=np.float64).reshape(n, -1).copy()
            self._reset_buffers()
            self._ingest_scores(y_idx, scores, w, pred)
        else:
            self._reset_buffers()
            self._ingest_labels(y_idx, pred, w)

    # -- batch path ---------------------------------------------------------
    def _label_indices(self, name: str, labels: np.ndarray, new: list[Hashable]) -> np.ndarray:
        """Class indices of labels; classes not yet known are appended to ``new`` (or refused)."""
        if labels.dtype.kind == "O":
            uniq, inverse = _unique_objects(labels)
        else:  # in order of first appearance, so that new classes keep the stream's order
            values, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
            order = np.argsort(first, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            uniq, inverse = list(values[order]), rank[inverse.reshape(-1)]
        idx = np.empty(len(uniq), dtype=np.int64)
        for j, label in enumerate(uniq):
            label = label.item() if isinstance(label, np.generic) else label
            if label in self._index:
                idx[j] = self._index[label]
            elif label in new:
                idx[j] = len(self._classes) + new.index(label)
            elif self._fixed:
                first = int(np.flatnonzero(inverse == j)[0])
                raise ValueError(
                    f"{name} must be one of the classes {self._classes!r}, got {_show(label)} at index {first}"
                )
            else:
                new.append(label)
                idx[j] = len(self._classes) + len(new) - 1
        return idx[inverse.reshape(-1)]

    def update_many(self, y: npt.ArrayLike, scores: Any, w: npt.ArrayLike | float | None = None) -> None:
        """Count many events; all of them or, on any bad input, none.

        Parameters
        ----------
        y : array-like of labels
        scores : 2-D array-like, sequence of mappings, or 1-D array-like of labels
            Scores with one column per class (in the order of ``classes``),
            one mapping class -> score per event, or the predicted classes.
        w : array-like of float, float or None

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.MulticlassAccumulator(classes=["a", "b", "c"])
        >>> acc.update_many(["a", "b", "c"], [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.5, 0.1, 0.4]])
        >>> acc.get().accuracy
        0.6666666666666666
        """
        try:
            y_arr = np.asarray(y) if not isinstance(y, (list, tuple)) else _object_array(y)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"y must be a 1-D array-like of labels: {exc}") from None
        if y_arr.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {y_arr.shape}")
        n = y_arr.size
        new: list[Hashable] = []
        y_idx = self._label_indices("y", y_arr, new)
        if isinstance(scores, (list, tuple)) and scores and isinstance(scores[0], Mapping):
            mode = "scores"
            check_same_length(("y", y_arr), ("scores", scores))
            for i, row in enumerate(scores):
                if not isinstance(row, Mapping):
                    raise TypeError(f"scores must hold mappings only, got {_show(row)} at index {i}")
                for key in row:
                    if key not in self._index and key not in new:
                        if self._fixed:
                            raise ValueError(
                                f"scores keys must be classes {self._classes!r}, got {_show(key)} at index {i}"
                            )
                        new.append(key)
            order = self._classes + new
            position = {c: j for j, c in enumerate(order)}
            matrix = np.zeros((n, len(order)))
            predicted_rows = np.empty(n, dtype=np.int64)
            for i, row in enumerate(scores):
                if self._fixed and len(row) != len(order):
                    missing = [c for c in order if c not in row]
                    raise ValueError(f"scores must give a score for every class, missing {missing!r} at index {i}")
                if not row:
                    raise ValueError(f"scores must give at least one class a score, got an empty mapping at index {i}")
                for key, value in row.items():
                    matrix[i, position[key]] = check_real(f"scores[{i}][{key!r}]", value)
                predicted_rows[i] = position[_best(row.items())]
            scores_arr = matrix
        else:
            try:
                scores_arr = np.asarray(scores) if not isinstance(scores, (list, tuple)) else np.array(scores)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"scores must be a 2-D array of scores or a 1-D array of labels: {exc}") from None
            mode = "scores" if scores_arr.ndim == 2 else "labels"
            if scores_arr.ndim not in (1, 2):
                raise ValueError(f"scores must be 1-D (labels) or 2-D (scores), got shape {scores_arr.shape}")
        if mode == "labels":
            check_same_length(("y", y_arr), ("scores", scores_arr))
            if isinstance(scores, (list, tuple)):
                scores_arr = _object_array(scores)
            pred_idx = self._label_indices("scores", scores_arr, new)
        else:
            k = len(self._classes) + len(new)
            if scores_arr.shape != (n, k):
                raise ValueError(
                    f"scores must have shape ({n}, {k}): one row per event, one column per class "
                    f"{self._classes + new!r}; got {scores_arr.shape}"
                )
            flat = as_scores("scores", scores_arr.reshape(-1))
            scores_arr = flat.reshape(n, k)
        weights = as_weights("w", w, n)
        if self._mode is not None and self._mode != mode:
            self._set_mode(mode)  # raises
        # everything checked: now change state
        self._set_mode(mode)
        for label in new:
            self._add_class(label)
        self._flush()
        if n == 0:
            return
        if mode == "scores":
            mapped = isinstance(scores, (list, tuple)) and scores and isinstance(scores[0], Mapping)
            self._ingest_scores(y_idx, scores_arr, weights, predicted_rows if mapped else None)
        else:
            self._ingest_labels(y_idx, pred_idx, weights)

    def _count_confusion(self, y_idx: np.ndarray, pred_idx: np.ndarray, w: np.ndarray | None) -> None:
        k = len(self._classes)
        tally = np.bincount(y_idx * k + pred_idx, weights=w, minlength=k * k).reshape(k, k)
        if w is not None and self._cm.dtype != np.float64:
            self._cm = self._cm.astype(np.float64)
        self._cm += tally.astype(self._cm.dtype, copy=False)

    def _canonical_argmax(self, scores: np.ndarray) -> np.ndarray:
        """Column of the highest score per row; ties go to the class first in the fixed label order."""
        rank = np.empty(len(self._classes), dtype=np.int64)
        rank[sorted(range(len(self._classes)), key=lambda j: _order(self._classes[j]))] = np.arange(rank.size)
        tied = scores == scores.max(axis=1, keepdims=True)
        return np.argmin(np.where(tied, rank[None, :], rank.size), axis=1)

    def _ingest_scores(
        self, y_idx: np.ndarray, scores: np.ndarray, w: np.ndarray | None, pred: np.ndarray | None = None
    ) -> None:
        if pred is None:
            pred = self._canonical_argmax(scores)
        for c, acc in enumerate(self._ovr):
            acc._ingest(np.ascontiguousarray(scores[:, c]), y_idx == c, w)
        self._count_confusion(y_idx, pred, w)

    def _ingest_labels(self, y_idx: np.ndarray, pred_idx: np.ndarray, w: np.ndarray | None) -> None:
        self._count_confusion(y_idx, pred_idx, w)

    # -- reading ------------------------------------------------------------
    def get(self) -> MulticlassReport:
        """A frozen report of every metric; the accumulated counts do not change."""
        self._flush()
        cm = self._cm.copy()
        cm.setflags(write=False)
        per_class = None
        pooled = None
        if self._mode == "scores" and self._ovr:
            total = cm.sum()
            rows, cols = cm.sum(axis=1), cm.sum(axis=0)
            reports = []
            for c, acc in enumerate(self._ovr):
                tp = cm[c, c]
                fp, fn = cols[c] - tp, rows[c] - tp
                cast = float if cm.dtype == np.float64 else int
                reports.append(
                    dataclasses.replace(
                        acc.get(), tp=cast(tp), fp=cast(fp), fn=cast(fn), tn=cast(total - tp - fp - fn),
                        threshold=math.nan,
                    )
                )  # fmt: skip
            per_class = tuple(reports)
            pooled = BinaryAccumulator.merge_all(self._ovr).get()
        return MulticlassReport(classes=tuple(self._classes), confusion_matrix=cm, per_class=per_class, pooled=pooled)

    # -- merging ------------------------------------------------------------
    def copy(self) -> MulticlassAccumulator:
        """An independent accumulator with the same counts."""
        self._flush()
        new = MulticlassAccumulator.__new__(MulticlassAccumulator)
        new.bins = self.bins
        new._classes = list(self._classes)
        new._index = dict(self._index)
        new._mode = self._mode
        new._cm = self._cm.copy()
        new._ovr = [acc.copy() for acc in self._ovr]
        new._fixed = self._fixed
        new._reset_buffers()
        return new

    def _check_mergeable(self, other: Any) -> None:
        if not isinstance(other, MulticlassAccumulator):
            raise TypeError(f"can only merge a MulticlassAccumulator with another, got {type(other).__name__}")
        if self.bins != other.bins:
            raise ValueError(f"cannot merge accumulators whose bins differ: {self.bins!r} and {other.bins!r}")
        if self._mode is not None and other._mode is not None and self._mode != other._mode:
            raise ValueError(f"cannot merge an accumulator of {self._mode} with one of {other._mode}")
        extra = [c for c in other._classes if c not in self._index]
        if extra and self._fixed:
            raise ValueError(f"cannot merge: classes {extra!r} are not among the fixed classes {self._classes!r}")

    def _merge_in(self, other: MulticlassAccumulator) -> None:
        """Add ``other`` in place, matching classes by label."""
        other._flush()
        self._flush()
        if other._mode is not None:
            self._set_mode(other._mode)
        for label in [c for c in other._classes if c not in self._index]:
            self._add_class(label)
        self._fixed = self._fixed and other._fixed
        where = np.array([self._index[c] for c in other._classes], dtype=np.int64)
        if other._cm.dtype == np.float64 and self._cm.dtype != np.float64:
            self._cm = self._cm.astype(np.float64)
        self._cm[np.ix_(where, where)] += other._cm
        if self._mode == "scores":
            for c, label in enumerate(self._classes):
                if label in other._index:
                    if other._ovr:
                        self._ovr[c]._counts.merge_in(other._ovr[other._index[label]]._counts)
                elif other._total():
                    self._ovr[c]._counts.add_at(self._zero_code(), other._total())  # other's events score 0 here

    def __eq__(self, other: object) -> bool:
        """Same classes (in any order), same counts, same histograms."""
        if not isinstance(other, MulticlassAccumulator):
            return NotImplemented
        self._flush()
        other._flush()
        if set(self._index) != set(other._index) or self.bins != other.bins:
            return False
        if (self._mode or "empty") != (other._mode or "empty") and self._total() and other._total():
            return False
        where = np.array([other._index[c] for c in self._classes], dtype=np.int64)
        if not np.array_equal(self._cm, other._cm[np.ix_(where, where)]):
            return False
        if self._mode == "scores" and other._mode == "scores":
            return all(a._counts.same_counts(other._ovr[j]._counts) for a, j in zip(self._ovr, where, strict=True))
        return True

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MulticlassAccumulator(classes={self._classes!r}, bins={self.bins!r}, n={self._total()})"


def _order(label: Any) -> tuple[str, str]:
    """A fixed order of labels of any type, the same in every process: type name, then repr."""
    return type(label).__name__, repr(label)


def _best(items: Iterable[tuple[Any, float]]) -> Any:
    """The label with the highest score; ties go to the label first in the fixed order."""
    best_label, best_score = None, -math.inf
    for label, score in items:
        if best_label is None or score > best_score or (score == best_score and _order(label) < _order(best_label)):
            best_label, best_score = label, score
    return best_label


def _object_array(values: Sequence[Any]) -> np.ndarray:
    arr = np.empty(len(values), dtype=object)
    arr[:] = list(values)
    return arr


def _unique_objects(labels: np.ndarray) -> tuple[list[Any], np.ndarray]:
    """Unique labels in order of first appearance, for object arrays (mixed types)."""
    seen: dict[Any, int] = {}
    inverse = np.empty(labels.size, dtype=np.int64)
    for i, label in enumerate(labels):
        try:
            inverse[i] = seen.setdefault(label, len(seen))
        except TypeError:
            raise TypeError(f"labels must be hashable, got {_show(label)} at index {i}") from None
    return list(seen), inverse
