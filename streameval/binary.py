"""BinaryAccumulator: exact counts at a threshold plus a score histogram."""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ._codec import (
    FormatError,
    decode_bins,
    decode_count,
    decode_float,
    decode_label,
    encode_label,
    require_fields,
)
from ._events import _UNIT, FLUSH_EVERY, WEIGHTED_ROOM, EventBuffer, small_float_arrays
from ._numeric import EventGroups
from ._validation import (
    as_labels,
    as_scores,
    as_weights,
    check_label_pair,
    check_no_nan,
    check_real,
    check_same_length,
    check_total,
    is_masked_array,
    show,
)
from .binary_report import BinaryReport
from .bins import Bins
from .calibration import CalibrationSums, decode_sums, plus
from .histogram import (
    DEFAULT_EXACT_UP_TO,
    NEW_GROUPS_UP_TO,
    ExactCounts,
    ScoreHistogram,
    add_checking_grouped,
    check_exact_up_to,
)
from .protocol import SURELY_FINITE_BELOW, AccumulatorBase
from .regression_report import Moments
from .scores import ScoreAccumulator

__all__ = ["DEFAULT_EXACT_UP_TO", "BinaryAccumulator", "BinaryReport"]

Array = npt.NDArray[np.float64]


def _default_neg_label(pos_label: Any) -> Any:
    if isinstance(pos_label, (bool, np.bool_)):
        return not pos_label
    if pos_label == 1:
        return 0
    if pos_label == 0:
        return 1
    raise ValueError(f"neg_label must be given when pos_label is not 0, 1 or a bool, got pos_label={pos_label!r}")


_LARGEST_FLOAT = sys.float_info.max
# per unit of weight, an event's Brier term is at most 1 and its log-loss term at most -log(eps) = 36.04
_LOG_LOSS_TERM_UP_TO = 37.0


class BinaryAccumulator(EventBuffer, AccumulatorBase):
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
    exact_up_to : int or None, default 8192
        While the stream has at most this many distinct scores, every distinct
        score is kept with its counts and every result equals scikit-learn's
        (``get().is_exact``). Past it, the counts go into ``bins`` for good,
        exactly as if they had been binned from the first event. ``0`` bins
        from the first event; ``None`` keeps every distinct score, so memory
        grows with them (31 to 50 bytes each while counting, 24 once read).

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

    kind: ClassVar[str] = "binary"

    def __init__(
        self,
        bins: Bins | None = None,
        threshold: float = 0.5,
        pos_label: Any = 1,
        neg_label: Any = None,
        exact_up_to: int | None = DEFAULT_EXACT_UP_TO,
    ) -> None:
        bins = Bins.checked(bins)
        t = check_real("threshold", threshold)
        if neg_label is None:
            check_label_pair(pos_label, None)
            neg_label = _default_neg_label(pos_label)
        check_label_pair(pos_label, neg_label)
        self.bins = bins
        self.threshold = t
        self.pos_label = pos_label
        self.neg_label = neg_label
        self.exact_up_to = check_exact_up_to(exact_up_to)
        self._hist = ScoreHistogram(bins, t, self.exact_up_to)
        self._sums: CalibrationSums | None = CalibrationSums()  # None: loaded from a state that did not keep them
        self._reset_buffers()

    # -- per-event path -----------------------------------------------------
    # update(y, score, w=1.0) comes from EventBuffer (compiled, or its Python
    # twin): it stores plain unit-weight events and sends the rest here.
    def _reset_buffers(self) -> None:
        self._set_labels(self.pos_label, self.neg_label)
        self._mind_the_room()  # what is counted may be near the largest float (a copy, a restored state)
        self._labels = {self.neg_label: False, self.pos_label: True}
        # events reverted one by one: out of the counts at once, their calibration terms taken out of the sums at
        # the next filing (a batch of them, by the compiled pass)
        self._out_score = array("d")
        self._out_pos = array("b")

    def _buffered(self) -> int:
        """Events stored but not yet counted."""
        return self._n_unit + self._n_weighted

    def _is_pos(self, y: Any, name: str = "y") -> bool:
        try:
            is_pos = self._labels.get(y)
        except TypeError:
            is_pos = None
        if is_pos is None:
            raise ValueError(
                f"{name} must be {self.pos_label!r} (positive) or {self.neg_label!r} (negative), got {show(y)}"
            ) from None
        return is_pos

    def _update_slow(self, y: Any, score: Any, w: Any = _UNIT) -> None:
        """Check one event that is not a plain unit-weight one, then store it."""
        is_pos = self._is_pos(y)
        s = check_real("score", score)
        weight = check_real("w", w, finite=True, nonnegative=True)
        if weight == 1.0:
            self._push_unit(is_pos, s)
            return
        if not math.isfinite(self._weighted_total + weight):  # count what is stored, so that the check sees the total
            self._flush()
        self._push_weighted(is_pos, s, weight)
        self._file_weighted_if_full(1)

    def _file_weighted_if_full(self, added: int) -> None:
        """File the stored events once the weighted ones fill their buffer or their weights pass the buffer's
        room (the compiled ``update`` stores none past it: it comes here); where filing refuses them (the total
        weight or the sums overflow), the last ``added`` are taken back and the others kept."""
        if self._n_weighted >= FLUSH_EVERY or self._weighted_total > self._weighted_room:
            try:
                self._flush()
            except ValueError:  # the total weight overflows: refuse these events, keep the others
                self._drop_last_weighted(added)
                raise

    # a call of update() with missing or unknown arguments fails in here (both
    # paths): the message names the method the caller called
    _update_slow.__qualname__ = "BinaryAccumulator.update"

    def _flush(self) -> None:
        """Count the buffered per-event updates (a logical no-op)."""
        if self._n_unit:
            scores, labels = self._unit_events()
            self._count(np.frombuffer(scores, dtype=np.float64), np.frombuffer(labels, dtype=np.bool_), None)
            self._drop_unit()
        if self._n_weighted:
            scores, labels, weights = self._weighted_events()  # copies already: read in place
            self._count(
                np.frombuffer(scores, dtype=np.float64),
                np.frombuffer(labels, dtype=np.bool_),
                np.frombuffer(weights, dtype=np.float64),
            )
            self._drop_weighted()
        if len(self._out_score):
            self._file_taken_out()

    def _file_taken_out(self) -> None:
        """Take the calibration terms of the events reverted one by one out of the sums (their counts are out)."""
        x = np.frombuffer(self._out_score, dtype=np.float64)
        is_pos = np.frombuffer(self._out_pos, dtype=np.int8).astype(np.bool_)
        if self._sums is not None:
            self._sums = plus(self._sums, CalibrationSums.of(x, is_pos, None), -1)
        self._out_score = array("d")
        self._out_pos = array("b")

    def _count(self, x: np.ndarray, is_pos: np.ndarray, weights: np.ndarray | None) -> None:
        """Count checked events: their scores, then (once that succeeded) their calibration sums."""
        if weights is None:  # one compiled call for a per-event buffer's events
            sums = None if self._sums is None else self._sums.plus_events(x, is_pos)
        else:
            sums = plus(self._sums, CalibrationSums.of(x, is_pos, weights))
        self._hist.add(x, is_pos, weights)
        self._sums = sums
        if weights is not None:  # whole events move a total or sum near the largest float by less than its spacing
            self._mind_the_room()

    def _mind_the_room(self) -> None:
        """Set the stored weights' room (at most ``WEIGHTED_ROOM``) from what is counted: stored weights that sum
        to at most it, counted in, take neither the total weight nor the sums past the largest float (their terms
        at most 1 and 37 per unit of weight, with a margin of 2). Whole counts are far from it: the full room."""
        if not self._hist.is_weighted:
            self._weighted_room = WEIGHTED_ROOM
            return
        left = _LARGEST_FLOAT - float(self._hist.total())
        if self._sums is not None:
            brier, log_loss = self._sums.brier_total, self._sums.log_loss_total
            left = min(left, _LARGEST_FLOAT - brier, (_LARGEST_FLOAT - log_loss) / _LOG_LOSS_TERM_UP_TO)
        self._weighted_room = min(WEIGHTED_ROOM, max(left / 2, 0.0))

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
        if self._stored_as_single_events(y, scores, w):
            return
        x = as_scores("scores", scores, check_nan=False)
        compiled = self._hist.compiled
        raw = self._raw_labels(y) if compiled else None
        is_pos = raw if raw is not None else as_labels("y", y, self.pos_label, self.neg_label)
        check_same_length(("y", is_pos), ("scores", x))
        weights = as_weights("w", w, x.size)
        # without weights the kernel checks scores and 0/1 labels as it counts; on
        # bad input it takes back what it counted and the plain checks below explain
        if compiled and weights is None:
            counted, found = self._hist.add_checking_sums(x, is_pos)
            if counted:  # checked 0/1 labels now: summed as counted, by score, or in a pass of their own
                by_score = None
                if isinstance(found, ExactCounts):  # the batch's counts by distinct score
                    by_score = CalibrationSums.of_counts(found.values, found.neg, found.pos)
                summed = CalibrationSums(*found) if isinstance(found, tuple) else by_score
                self._sums = plus(self._sums, CalibrationSums.of(x, is_pos, None) if summed is None else summed)
                return
        if raw is not None:
            is_pos = as_labels("y", raw, self.pos_label, self.neg_label)
        check_no_nan("scores", x)
        self._count(x, is_pos, weights)

    def _stored_as_single_events(self, y: Any, scores: Any, w: Any) -> bool:
        """A small batch of a 0/1 label array, a float64 score array and no weights or a float64 array of them (see
        :func:`~streameval._events.small_float_arrays`), every event plain, stored as per-event updates; whether
        it was (else nothing changed, and the batch path counts it or explains a refusal).

        Weighted (10 events into an exact table: 105 against 9 us; into bins: 42 against 11), they go where
        per-event updates of a weight other than 1 go, checked there in one compiled call (10 events: 2.2 to 3.2
        against 9.8 to 13.5 us when numpy checked them here), unless every weight is 1, as the batch path reads
        them.
        """
        if not (small_float_arrays(scores) if w is None else small_float_arrays(scores, w)):
            return False
        labels = self._raw_labels(y)
        if labels is None or labels.size != scores.size or not labels.flags.c_contiguous:
            return False
        width = labels.dtype.itemsize
        if w is not None:
            stored = self._push_weighted_many(labels, width, scores, w)
            if stored == 2:  # they do not fit beside those stored: those filed first
                self._flush()
                stored = self._push_weighted_many(labels, width, scores, w)
            if stored == 1:
                self._file_weighted_if_full(scores.size)
            if stored != 3:
                return stored == 1
        return bool(self._push_many(labels, width, scores))

    def update_many_grouped(
        self, accumulators: list[Any], groups: EventGroups, y: Any, scores: Any, w: Any = None
    ) -> bool:
        """Count a batch into binary accumulators of this one's configuration at once, event i into
        ``accumulators[group of i]`` (all of it or none); whether it was counted here.

        One compiled pass counts every event into its accumulator's bins and sums its calibration terms: what
        :class:`~streameval.Segmented` does with a batch of integer segments. ``None`` in ``accumulators``
        stands for a group with none yet: an empty one of this configuration is made for it, in bins when its
        events here prove that they take it past ``exact_up_to`` distinct scores (as they would), and put in its
        place in the list once the batch is counted. ``False``, with nothing changed, where that pass does not
        apply: without the compiled module, with weights, with labels that are not a 0/1 array of integers or
        bools, with a scheme other than the range-free one, while a given accumulator is still exact, for a new
        group whose events prove nothing (or more than 64 new groups), with more than 4,096 groups, and on any
        bad input. The caller then counts each group's events apart with ``update_many``, which explains a
        refusal.

        Examples
        --------
        >>> import numpy as np
        >>> import streameval as se
        >>> from streameval._numeric import EventGroups
        >>> groups = EventGroups(np.array([7, 5, 7]), 5, np.array([0, -1, 1, -1], dtype=np.int32), 2)
        >>> a, b = se.BinaryAccumulator(exact_up_to=0), se.BinaryAccumulator(exact_up_to=0)
        >>> counted = a.update_many_grouped([a, b], groups, np.array([1, 0, 0]), np.array([0.9, 0.2, 0.4]))
        >>> (a.get().n, b.get().n) if counted else (1, 2)
        (1, 2)
        """
        if w is not None or len(accumulators) != groups.count:
            return False
        given = [acc for acc in accumulators if acc is not None]
        if len({id(acc) for acc in given}) != len(given) or groups.count - len(given) > NEW_GROUPS_UP_TO:
            return False
        for acc in given:
            if not isinstance(acc, BinaryAccumulator) or acc._hist.is_exact:
                return False
            try:
                self._check_mergeable(acc)
            except (TypeError, ValueError):
                return False
        raw = self._raw_labels(y)
        try:
            x = as_scores("scores", scores, check_nan=False)
        except (TypeError, ValueError):
            return False
        if raw is None or raw.size != x.size or groups.values.size != x.size:
            return False
        for acc in given:
            acc._flush()  # a logical no-op: per-event updates counted first
        targets = [self.emptied() if acc is None else acc for acc in accumulators]
        # the bins and the calibration sums in one pass: the batch is read once
        sums = add_checking_grouped([acc._hist for acc in targets], groups, x, raw, with_sums=True)
        if sums is None:
            return False
        for acc, part in zip(targets, sums, strict=True):
            if part[0]:  # events of this group in the batch (a group without any: its sums as they are)
                acc._sums = plus(acc._sums, CalibrationSums(*part))
        accumulators[:] = targets
        return True

    def emptied(self) -> BinaryAccumulator:
        """A new accumulator of this one's configuration (bins, threshold, labels, budget) and no events.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator(threshold=0.3)
        >>> acc.update_many([1, 0], [0.9, 0.1])
        >>> fresh = acc.emptied()
        >>> fresh.n, fresh.threshold
        (0, 0.3)
        """
        return BinaryAccumulator(self.bins, self.threshold, self.pos_label, self.neg_label, self.exact_up_to)

    def _less_itself(self) -> BinaryAccumulator:
        """No events, in this one's regime (binned where it is: its events' counts come out of it without a
        conversion), without copying its counts (10^6 binned events: 33 us, against 81 for the copy taken out of
        itself)."""
        self._flush()  # stored per-event updates may weigh the counts or take them into bins
        if self._sums is None or self._hist.is_weighted:  # what these carry over: the general path
            return super()._less_itself()
        new = self.emptied()
        if not self._hist.is_exact:
            new._hist = new._hist.binned()
        return new

    def _raw_labels(self, y: Any) -> np.ndarray | None:
        """``y`` itself when the compiled kernel can check it (a 1-D bool or integer array of 0/1 labels)."""
        if (
            not isinstance(y, np.ndarray)
            or is_masked_array(y)  # as_labels refuses a masked entry
            or y.ndim != 1
            or y.dtype.kind not in "biu"
            or not (self.pos_label == 1 and self.neg_label == 0)
        ):
            return None
        return y

    def revert(self, y: Any, score: float, w: float = 1.0) -> None:
        """Take one event counted before back out (river's ``revert``, ``utils.Rolling``).

        Taking out an event that was never counted is a ``ValueError`` and
        changes nothing.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator()
        >>> acc.update_many([1, 0, 1], [0.9, 0.2, 0.4])
        >>> acc.revert(1, 0.4)
        >>> acc.get().n, acc.get().auc
        (2, 1.0)
        """
        is_pos = self._is_pos(y)
        plain = type(score) in (float, np.float64) and score == score and type(w) in (float, int) and w == 1
        # a plain event: out of the counts filed so far at once, if they hold it; its calibration terms are taken
        # out with the next filing's
        if plain and self._hist.take_out_one(score, is_pos):
            self._out_score.append(score)
            self._out_pos.append(is_pos)
            if len(self._out_score) >= FLUSH_EVERY:
                self._file_taken_out()
            return
        s = check_real("score", score)
        weight = check_real("w", w, finite=True, nonnegative=True)
        self._take_out(np.array([s]), np.array([is_pos]), None if weight == 1.0 else np.array([weight]))

    def revert_many(self, y: npt.ArrayLike, scores: npt.ArrayLike, w: npt.ArrayLike | float | None = None) -> None:
        """Take a batch of events counted before back out (:meth:`update_many`'s arguments); all of them or, on
        bad input or an event that was never counted, none.

        In the exact regime the events leave the table of distinct scores in place (a score left with no
        events stops counting towards ``exact_up_to``), which is what keeps a sliding window exact.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator()
        >>> acc.update_many([1, 0, 1, 0], [0.9, 0.2, 0.4, 0.6])
        >>> acc.revert_many([1, 0], [0.9, 0.2])
        >>> acc.get().n, acc.get().auc
        (2, 0.0)
        >>> acc.revert_many([1], [0.9])
        Traceback (most recent call last):
        ...
        ValueError: cannot take out counts that were not added: the result would be negative
        >>> acc.get().n
        2
        """
        x = as_scores("scores", scores)
        is_pos = as_labels("y", y, self.pos_label, self.neg_label)
        check_same_length(("y", is_pos), ("scores", x))
        self._take_out(x, is_pos, as_weights("w", w, x.size))

    def _take_out(self, x: np.ndarray, is_pos: np.ndarray, weights: np.ndarray | None) -> None:
        """Take checked events out: their calibration sums and their counts (which refuse events not counted).

        Counts add up, so events filed before are taken out with the per-event updates since still stored (a
        revert of an old event after new ones: no filing of one event each time); only where that is refused,
        since the events may be among those stored, are they filed first and the events taken out again.
        """
        try:
            self._take_out_counted(x, is_pos, weights)
        except ValueError:
            if not self._buffered():
                raise
            self._flush()
            self._take_out_counted(x, is_pos, weights)

    def _take_out_counted(self, x: np.ndarray, is_pos: np.ndarray, weights: np.ndarray | None) -> None:
        """Take checked events out of the counts filed so far; ``ValueError``, nothing changed, if they lack one."""
        sums = plus(self._sums, CalibrationSums.of(x, is_pos, weights), -1)
        self._hist.take_out(x, is_pos, weights)
        self._sums = sums

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
        view = self._hist.read()
        return BinaryReport.with_fields(
            tp=view.tp,
            fp=view.fp,
            tn=view.tn,
            fn=view.fn,
            threshold=self.threshold,
            bins=self.bins,
            keys=view.keys,
            neg=view.neg,
            pos=view.pos,
            pos_label=self.pos_label,
            neg_label=self.neg_label,
            values=view.values,
            calibration=self._sums,
        )

    def scores(self, label: Any = None) -> ScoreAccumulator:
        """The :class:`ScoreAccumulator` of the scores of every event (or of one class's events, ``label``).

        It has the same bins and budget and feeds :func:`streameval.drift`,
        :meth:`ScoreReport.estimated` and the windows. Its counts, quantiles
        and range are those of this accumulator; its mean and standard
        deviation are exact while exact and, in the binned regime, those of
        every score at its bin's middle (within half a bin's width).

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator()
        >>> acc.update_many([1, 0, 1, 0], [0.9, 0.2, 0.6, 0.4])
        >>> acc.scores().get().median, acc.scores(label=1).get().n, round(acc.scores(label=0).get().mean, 6)
        (0.4, 2, 0.3)
        """
        keep = None if label is None else self._is_pos(label, "label")
        report = self.get()
        counts = report.neg + report.pos if keep is None else report.pos if keep else report.neg
        weighted = counts.dtype.kind == "f"
        sums = self._sums
        if sums is not None:
            events = {None: sums.events, True: sums.positives, False: sums.events - sums.positives}[keep]
        elif not weighted:
            events = int(counts.sum())
        else:
            raise ValueError("this accumulator was loaded from a state that did not keep its number of events")
        nz = counts != 0
        if report.values is not None:
            low = high = mid = report.values[nz]
            histogram = {"values": mid, "neg": counts[nz], "pos": np.zeros_like(counts[nz])}
        else:
            assert report.keys is not None
            keys = report.keys[nz]
            low, high = self.bins.lower_edges(keys), self.bins.upper_edges(keys)
            low, high = np.where(np.isfinite(low), low, high), np.where(np.isfinite(high), high, low)
            mid = (low + high) / 2.0
            histogram = {"keys": keys, "neg": counts[nz], "pos": np.zeros_like(counts[nz])}
        if not np.isfinite(mid).all():
            raise ValueError("scores() needs finite scores; this accumulator counted infinite ones")
        moments = Moments.of(mid, counts[nz].astype(np.float64))
        state = {
            "bins": self.bins.to_dict(),
            "exact_up_to": self.exact_up_to,
            "n": events,
            "moments": moments.to_list(),
            "range": [float(low[0]), float(high[-1])] if mid.size else [math.inf, -math.inf],
            "weighted": weighted,
            "histogram": histogram,
        }
        return ScoreAccumulator.from_state(state)

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
        return self._hist.total()

    @property
    def nbytes(self) -> int:
        """Bytes held by this accumulator's arrays and buffers."""
        taken_out = sum(b.buffer_info()[1] * b.itemsize for b in (self._out_score, self._out_pos))
        return self._hist.nbytes + self._unit_nbytes + self._weighted_nbytes + taken_out

    # -- combining ----------------------------------------------------------
    def _check_mergeable(self, other: Any) -> None:
        if not isinstance(other, BinaryAccumulator):
            raise TypeError(f"can only merge a BinaryAccumulator with another, got {type(other).__name__}")
        for name in ("bins", "threshold", "pos_label", "neg_label", "exact_up_to"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine is theirs:  # the same object (segments and panes share their template's): equal
                continue
            if not (mine == theirs and type(mine) is type(theirs)):
                raise ValueError(f"cannot merge accumulators whose {name} differ: {mine!r} and {theirs!r}")

    def copy(self) -> BinaryAccumulator:
        """An independent accumulator with the same counts."""
        self._flush()
        new = BinaryAccumulator.__new__(BinaryAccumulator)
        new.bins, new.threshold = self.bins, self.threshold
        new.pos_label, new.neg_label = self.pos_label, self.neg_label
        new.exact_up_to = self.exact_up_to
        new._hist = self._hist.copy()
        new._sums = self._sums
        new._reset_buffers()
        return new

    def _can_take(self, weight: float) -> bool:
        # within the stored weights' room (what is counted stays below the largest float, its sums too, with that
        # much more: _mind_the_room): no pass over the table (10 weighted events into 4 segments: 23-24 against 36 us
        # binned, 42 exact)
        if self._n_unit + self._weighted_total + weight <= self._weighted_room:
            return True
        # a weight's Brier term is at most 1 and its log-loss term at most -log(eps) = 36.04: far below the largest
        # float, neither sum can pass it
        counted = float(self._hist.total()) if self._hist.is_weighted else 2.0**64  # whole counts: below 2^64
        return counted + self._n_unit + self._weighted_total + weight < SURELY_FINITE_BELOW

    def _merge_in(self, other: BinaryAccumulator, sign: int) -> None:
        other._flush()
        self._flush()
        if sign > 0:  # a total weight that stays finite, as a batch's
            check_total("w", float(self._hist.total()) + float(other._hist.total()))
        sums = plus(self._sums, other._sums, sign)
        self._hist.merge_in(other._hist, sign)
        self._sums = sums
        self._mind_the_room()

    def _scale_in(self, factor: float) -> None:
        self._flush()
        self._hist.scale_in(factor)
        self._sums = None if self._sums is None else self._sums.scaled(factor)
        self._mind_the_room()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BinaryAccumulator):
            return NotImplemented
        try:
            self._check_mergeable(other)
        except ValueError:
            return False
        self._flush()
        other._flush()
        return self._sums == other._sums and self._hist.same(other._hist)

    __hash__ = None  # type: ignore[assignment]

    # -- state --------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        """The state: configuration, the histogram of non-empty bins and the counts at the threshold.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator(bins=se.Bins.uniform(0, 1, 4), exact_up_to=0)
        >>> acc.update_many([1, 0, 1], [0.9, 0.2, 0.8])
        >>> state = acc.to_state()
        >>> state["histogram"]["keys"].tolist(), state["histogram"]["pos"].tolist(), state["totals"]
        ([1, 4], [0, 2], {'neg': 1, 'pos': 2})
        >>> se.BinaryAccumulator.from_state(state) == acc
        True
        >>> exact = se.BinaryAccumulator()
        >>> exact.update_many([1, 0, 1], [0.9, 0.2, 0.9])
        >>> exact.to_state()["histogram"]["values"].tolist(), exact.to_state()["histogram"]["pos"].tolist()
        ([0.2, 0.9], [0, 2])
        """
        self._flush()
        hist = self._hist.to_state()
        return {
            "bins": self.bins.to_dict(),
            "threshold": self.threshold,
            "pos_label": encode_label(self.pos_label),
            "neg_label": encode_label(self.neg_label),
            "exact_up_to": self.exact_up_to,
            "weighted": self._hist.is_weighted,
            "histogram": hist,
            "above": self._hist.above_state(),
            "totals": {"neg": hist["neg"].sum().item(), "pos": hist["pos"].sum().item()},
            "calibration": None if self._sums is None else self._sums.to_state(),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> BinaryAccumulator:
        """The accumulator of a :meth:`to_state` mapping; ``FormatError`` if anything in it is inconsistent."""
        d = dict(state)
        fields = {"bins", "threshold", "pos_label", "neg_label", "weighted", "histogram", "above", "totals"}
        if "exact_up_to" not in d:  # format version 1: binned, with today's default budget for what comes next
            d["exact_up_to"] = DEFAULT_EXACT_UP_TO
            if isinstance(d.get("histogram"), dict) and "values" in d["histogram"]:
                raise FormatError("histogram holds exact values but the state has no exact_up_to")
        if "calibration" not in d:  # format versions 1 and 2 kept no calibration sums
            d["calibration"] = None
        require_fields(d, "state", fields | {"exact_up_to", "calibration"})
        exact_up_to = d["exact_up_to"]
        if exact_up_to is not None and (type(exact_up_to) is not int or exact_up_to < 0):
            raise FormatError(f"exact_up_to must be a whole number >= 0 or null, got {exact_up_to!r}")
        bins = decode_bins(d["bins"])
        threshold = decode_float("threshold", d["threshold"])
        if threshold != threshold:
            raise FormatError("threshold must not be nan")
        pos_label, neg_label = decode_label("pos_label", d["pos_label"]), decode_label("neg_label", d["neg_label"])
        weighted = d["weighted"]
        if not isinstance(weighted, bool):
            raise FormatError(f"weighted must be true or false, got {weighted!r}")
        try:
            acc = cls(bins=bins, threshold=threshold, pos_label=pos_label, neg_label=neg_label, exact_up_to=exact_up_to)
        except (TypeError, ValueError) as exc:
            raise FormatError(f"state: {exc}") from None
        acc._hist.load("histogram", d["histogram"], weighted, above=d["above"])
        view = acc._hist.read()
        neg, pos = view.neg, view.pos
        require_fields(d["totals"], "totals", {"neg", "pos"})
        for name, arr in (("neg", neg), ("pos", pos)):
            total = decode_count(f"totals.{name}", d["totals"][name], weighted)
            if not np.isclose(float(total), float(arr.sum()), rtol=1e-12, atol=0.0):
                raise FormatError(f"totals.{name} is {total!r} but the histogram sums to {arr.sum().item()!r}")
        acc._sums = decode_sums(d, weighted)
        if acc._sums is None and view.values is not None:  # saved before the sums were kept: exact scores give them
            acc._sums = CalibrationSums.of_counts(view.values, view.neg, view.pos)
        elif acc._sums is not None and not weighted:
            counted = (acc._sums.events, acc._sums.positives)
            if counted != (int(neg.sum() + pos.sum()), int(pos.sum())):
                raise FormatError(
                    f"calibration counts {counted[0]} events, {counted[1]} positive, but the histogram counts "
                    f"{int(neg.sum() + pos.sum())}, {int(pos.sum())} positive"
                )
        acc._mind_the_room()
        return acc

    def __repr__(self) -> str:
        return (
            f"BinaryAccumulator(bins={self.bins!r}, threshold={self.threshold!r}, "
            f"pos_label={self.pos_label!r}, exact_up_to={self.exact_up_to!r}, n={self.n})"
        )
