"""PairedAccumulator: two classifiers on the same stream, for McNemar's test."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ._codec import FormatError, decode_counts, decode_float, decode_label, encode_label, require_fields
from ._events import CellTally
from ._validation import as_labels, as_scores, as_weights, check_label_pair, check_real, check_same_length, check_total
from .confusion import ConfusionReport
from .inference import PairedReport, count_value
from .protocol import SURELY_FINITE_BELOW, AccumulatorBase

__all__ = ["PairedAccumulator", "PairedReport"]

_PLAIN_LABELS = (int, bool, str)  # labels whose equality a dict lookup decides as the batch path does
_PLAIN_SCORES = (float, int, np.float64)


def _prediction(score: Any, threshold: float) -> int | None:
    """A plain score's prediction (``score >= threshold``, compared as floats); ``None`` for anything else: not
    exactly a float or an int, NaN, or an int beyond float's range (the batch path checks it)."""
    if type(score) not in _PLAIN_SCORES or score != score:
        return None
    try:
        return int(float(score) >= threshold)
    except OverflowError:
        return None


class PairedAccumulator(AccumulatorBase):
    """Two classifiers evaluated on the same stream, for McNemar's test.

    The state is the 2 x 2 x 2 table of counts ``[true label][A's prediction][B's prediction]``.

    Parameters
    ----------
    threshold : float, optional
        Without it, predictions are labels (``pos_label`` / ``neg_label``);
        with it, they are scores and predict positive at ``score >= threshold``.
    pos_label, neg_label : labels of the two classes (default 1 and 0).

    Examples
    --------
    >>> import streameval as se
    >>> acc = se.PairedAccumulator(threshold=0.5)
    >>> acc.update_many([1, 1, 0, 0, 1], [0.9, 0.8, 0.3, 0.6, 0.7], [0.4, 0.9, 0.2, 0.1, 0.3])
    >>> r = acc.get()
    >>> r.a.accuracy, r.b.accuracy, r.mcnemar.b, r.mcnemar.c
    (0.8, 0.6, 2, 1)
    """

    kind: ClassVar[str] = "paired"

    def __init__(self, threshold: float | None = None, pos_label: Any = 1, neg_label: Any = 0) -> None:
        self.threshold = None if threshold is None else check_real("threshold", threshold)
        check_label_pair(pos_label, neg_label)
        self.pos_label, self.neg_label = pos_label, neg_label
        # plain labels (int, bool or str) to their side, for the per-event path; anything else is checked in full
        plain = all(type(v) in _PLAIN_LABELS for v in (pos_label, neg_label))
        self._sides: dict[Any, int] = {neg_label: 0, pos_label: 1} if plain else {}
        # the per-event path: a plain unit-weight event counted in C in its cell of the table of whole counts
        self._cells = CellTally(self._update_checked, self._sides, self.threshold, np.float64)
        self.update = self._cells.update  # type: ignore[method-assign]
        self._counts = np.zeros((2, 2, 2), dtype=np.int64)

    @property
    def _counts(self) -> np.ndarray:
        """The 2 x 2 x 2 table of counts ``[true label][A's prediction][B's prediction]``."""
        return self._table

    @_counts.setter
    def _counts(self, table: np.ndarray) -> None:
        self._table = table
        self._cells.target(table)  # the per-event path counts into it (whole counts), or leaves every event out

    def _predictions(self, name: str, values: Any) -> npt.NDArray[np.bool_]:
        if self.threshold is None:
            try:
                return as_labels(name, values, self.pos_label, self.neg_label)
            except ValueError as exc:  # scores, say: without a threshold predictions are labels
                raise ValueError(
                    f"{exc} (without a threshold, predictions are labels: give threshold= to read scores)"
                ) from None
        return as_scores(name, values) >= self.threshold

    def _tally(self, y: Any, pred_a: Any, pred_b: Any, w: Any) -> np.ndarray:
        truth = as_labels("y", y, self.pos_label, self.neg_label)
        a = self._predictions("pred_a", pred_a)
        b = self._predictions("pred_b", pred_b)
        check_same_length(("y", truth), ("pred_a", a), ("pred_b", b))
        weights = as_weights("w", w, truth.size)
        idx = truth.astype(np.int64) * 4 + a.astype(np.int64) * 2 + b.astype(np.int64)
        tally = np.bincount(idx, weights=weights, minlength=8).reshape(2, 2, 2)
        if weights is not None:
            with np.errstate(over="ignore"):
                check_total("w", float(tally.sum()) + float(self._counts.sum()))
        return tally

    def _add_tally(self, tally: np.ndarray) -> None:
        if tally.dtype == np.float64 and self._counts.dtype != np.float64:
            self._counts = self._counts.astype(np.float64)
        self._counts = self._counts + tally.astype(self._counts.dtype, copy=False)

    def update(self, y: Any, pred_a: Any, pred_b: Any, w: float = 1.0) -> None:
        """Count one event seen by both classifiers.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.PairedAccumulator(threshold=0.5)
        >>> acc.update(1, 0.9, 0.2)
        >>> acc.update(0, 0.7, 0.1, w=2.0)
        >>> r = acc.get()
        >>> r.a.accuracy, r.b.accuracy
        (0.3333333333333333, 0.6666666666666666)
        """
        self._cells.update(y, pred_a, pred_b, w)

    def _update_checked(self, y: Any, pred_a: Any, pred_b: Any, w: float = 1.0) -> None:
        """Every event the compiled path leaves out: a plain one counted in its cell, any other through the
        batch path (which checks it, and explains a refusal)."""
        cell = self._cell(y, pred_a, pred_b, w)
        if cell is not None:
            self._counts[cell] += 1
            return
        self.update_many([y], [pred_a], [pred_b], [check_real("w", w, finite=True, nonnegative=True)])

    def _cell(self, y: Any, pred_a: Any, pred_b: Any, w: Any) -> tuple[int, int, int] | None:
        """The cell of one plain unit-weight event of whole counts, found without arrays; ``None`` for anything
        else (the batch path checks it, and explains a refusal)."""
        if not (type(w) in (float, int) and w == 1) or self._counts.dtype == np.float64:
            return None
        sides = self._sides
        truth = sides.get(y) if type(y) in _PLAIN_LABELS else None
        if self.threshold is None:
            a = sides.get(pred_a) if type(pred_a) in _PLAIN_LABELS else None
            b = sides.get(pred_b) if type(pred_b) in _PLAIN_LABELS else None
        else:
            t = self.threshold
            # compared as floats, as the batch path's arrays are (an int beyond 2**53 rounds first)
            a, b = _prediction(pred_a, t), _prediction(pred_b, t)
        if truth is None or a is None or b is None:
            return None
        return truth, a, b

    def update_many(self, y: Any, pred_a: Any, pred_b: Any, w: Any = None) -> None:
        """Count many events; all of them or, on any bad input, none."""
        self._add_tally(self._tally(y, pred_a, pred_b, w))

    def revert(self, y: Any, pred_a: Any, pred_b: Any, w: float = 1.0) -> None:
        """Take one event counted before back out.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.PairedAccumulator()
        >>> acc.update_many([1, 0], [1, 1], [0, 0])
        >>> acc.revert(0, 1, 0)
        >>> acc.get().a.n
        1
        """
        cell = self._cell(y, pred_a, pred_b, w)
        if cell is not None and self._counts[cell] >= 1:
            self._counts[cell] -= 1
            return
        one = self.emptied()
        one.update(y, pred_a, pred_b, w)
        self -= one

    def get(self) -> PairedReport:
        """Both 2x2 tables and McNemar's test."""
        c = self._counts.copy()
        t = math.nan if self.threshold is None else self.threshold

        def table(axis_other: int) -> ConfusionReport:
            m = c.sum(axis=axis_other)  # [y][prediction]
            return ConfusionReport(
                tp=count_value(m[1, 1]), fp=count_value(m[0, 1]), tn=count_value(m[0, 0]), fn=count_value(m[1, 0]),
                threshold=t,
            )  # fmt: skip

        return PairedReport(a=table(2), b=table(1), counts=c)

    @property
    def n(self) -> int | float:
        """Count (or total weight) of events."""
        return count_value(self._counts.sum())

    # -- combining ----------------------------------------------------------
    def _can_take(self, weight: float) -> bool:
        return float(self._counts.sum()) + weight < SURELY_FINITE_BELOW  # counts alone

    def _restore(self, saved: PairedAccumulator) -> None:
        self._counts = saved._counts  # the whole state; the per-event path counts into it from now on

    def copy(self) -> PairedAccumulator:
        """An independent accumulator with the same counts."""
        new = self.emptied()
        new._counts = self._counts.copy()
        return new

    def emptied(self) -> PairedAccumulator:
        """A new accumulator of this one's configuration (threshold, labels) and no events.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.PairedAccumulator(threshold=0.5)
        >>> acc.update(1, 0.9, 0.2)
        >>> fresh = acc.emptied()
        >>> fresh.n, fresh.threshold
        (0, 0.5)
        """
        return PairedAccumulator(self.threshold, self.pos_label, self.neg_label)

    def _check_mergeable(self, other: Any) -> None:
        if not isinstance(other, PairedAccumulator):
            raise TypeError(f"can only merge a PairedAccumulator with another, got {type(other).__name__}")
        for name in ("threshold", "pos_label", "neg_label"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if not (mine == theirs and type(mine) is type(theirs)):
                raise ValueError(f"cannot merge accumulators whose {name} differ: {mine!r} and {theirs!r}")

    def _merge_in(self, other: PairedAccumulator, sign: int) -> None:
        with np.errstate(over="ignore"):  # a total weight past the largest float: refused here
            counts = self._counts + sign * other._counts
            if sign > 0 and counts.dtype == np.float64:
                check_total("w", float(counts.sum()))
        if sign < 0:
            if counts.dtype == np.float64:
                counts[np.abs(counts) <= 1e-9 * np.abs(self._counts)] = 0.0
            if (counts < 0).any():
                raise ValueError("cannot take out counts that were not added: the result would be negative")
        self._counts = counts

    def _scale_in(self, factor: float) -> None:
        self._counts = self._counts.astype(np.float64) * factor

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PairedAccumulator):
            return NotImplemented
        try:
            self._check_mergeable(other)
        except ValueError:
            return False
        return bool(np.array_equal(self._counts, other._counts)) and self._counts.dtype == other._counts.dtype

    __hash__ = None  # type: ignore[assignment]

    # -- state --------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        """The state: threshold (or null for labels), the two labels and the 8 counts.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.PairedAccumulator()
        >>> acc.update_many([1, 0], [1, 1], [0, 0])
        >>> acc.to_state()["counts"].tolist()
        [0, 0, 1, 0, 0, 0, 1, 0]
        """
        return {
            "threshold": self.threshold,
            "pos_label": encode_label(self.pos_label),
            "neg_label": encode_label(self.neg_label),
            "weighted": self._counts.dtype == np.float64,
            "counts": self._counts.reshape(-1).copy(),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> PairedAccumulator:
        """The accumulator of a :meth:`to_state` mapping; ``FormatError`` if anything in it is inconsistent."""
        d = dict(state)
        require_fields(d, "state", {"threshold", "pos_label", "neg_label", "weighted", "counts"})
        threshold = None if d["threshold"] is None else decode_float("threshold", d["threshold"])
        if threshold is not None and threshold != threshold:
            raise FormatError("threshold must not be nan")
        weighted = d["weighted"]
        if not isinstance(weighted, bool):
            raise FormatError(f"weighted must be true or false, got {weighted!r}")
        counts = decode_counts("counts", d["counts"], weighted)
        if counts.size != 8:
            raise FormatError(f"counts must hold 8 counts, got {counts.size}")
        try:
            acc = cls(threshold, decode_label("pos_label", d["pos_label"]), decode_label("neg_label", d["neg_label"]))
        except (TypeError, ValueError) as exc:
            raise FormatError(f"state: {exc}") from None
        acc._counts = counts.reshape(2, 2, 2)
        return acc

    def __repr__(self) -> str:
        return f"PairedAccumulator(threshold={self.threshold!r}, n={self.n})"
