"""A score histogram: (negative, positive) counts per bin, and exact counts at one threshold.

:class:`ScoreHistogram` is the building block of every accumulator kind that
keeps scores: the binary accumulator (one histogram), the multiclass one (one
per class, one-vs-rest), the regression one (absolute errors, all counted as
negatives). It counts validated events with the compiled kernel of its binning
scheme when there is one, and with numpy otherwise, with identical counts.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ._codec import FormatError, decode_counts, decode_histogram, decode_neg_pos, decode_values, require_fields
from ._compiled import SPEEDUPS
from ._numeric import EventGroups
from ._validation import check_total
from .bins import BLOCK, Bins, Workspace
from .state import GROUPED_IN_PLACE_UP_TO, LabelledCounts, count_columns, count_grouped

__all__ = [
    "DEFAULT_EXACT_UP_TO", "ExactCounts", "HashedCounts", "HistogramView", "ScoreHistogram", "batch_kernel",
    "exact_kernel",
]  # fmt: skip

DEFAULT_EXACT_UP_TO = 8192  # distinct scores kept exactly before a histogram turns into bins

Array = npt.NDArray[np.float64]
Kernel = tuple[Callable[..., Any], tuple[Any, ...]]


_PROVE_DISTINCT_UP_TO = 1 << 20  # budgets up to this take the proof of overflow (its table: 16 bits a score)


def batch_kernel(bins: Bins) -> Kernel | None:
    """The compiled counting function of a scheme and its arguments, or ``None`` (numpy's path)."""
    return bins.compiled_kernel()


def exact_kernel() -> bool:
    """Whether the exact regime counts whole counts in the compiled table (else numpy's sorted arrays)."""
    return SPEEDUPS is not None


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _kernel_inputs(x: Array, is_pos: np.ndarray | bool) -> tuple[Array, np.ndarray]:
    """Scores and labels as the compiled kernels read them: contiguous, one label or one per score."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    if isinstance(is_pos, (bool, np.bool_)):
        return x, np.array([is_pos], dtype=np.bool_)
    return x, np.ascontiguousarray(is_pos)


_ThresholdPlace = tuple[int, npt.NDArray[np.int64], bool, tuple[int, int, bool, float]]
_THRESHOLD_PLACES: dict[tuple[Any, ...], _ThresholdPlace] = {}


def _threshold_place(bins: Bins, t: float) -> _ThresholdPlace:
    """The threshold's bin key, its two labelled codes, whether it is the bin's lower edge, and the compiled
    kernels' threshold arguments (the two codes, whether to check a score against it, the threshold).

    Remembered per (scheme, threshold): working it out takes longer than the
    rest of building an accumulator, and many accumulators share both.
    """
    index = (bins.identity(), t)
    place = _THRESHOLD_PLACES.get(index)
    if place is None:
        codes = _readonly(bins.labelled_codes([t, t], [False, True]))
        is_edge = bins.is_lower_edge(t)
        place = (bins.key(t), codes, is_edge, (int(codes[0]), int(codes[1]), not is_edge, t))
        if len(_THRESHOLD_PLACES) >= 256:
            _THRESHOLD_PLACES.clear()
        _THRESHOLD_PLACES[index] = place
    return place


class ExactCounts:
    """Every distinct score with its (negative, positive) counts: the exact regime of a histogram.

    Scores are kept sorted; ``-0.0`` and ``0.0`` are one score (they compare
    equal, as they do for scikit-learn). Integer counts stay integers; the
    first weight makes them floats.
    """

    __slots__ = ("neg", "pos", "values")

    def __init__(self) -> None:
        self.values: Array = np.zeros(0)
        self.neg: np.ndarray = np.zeros(0, dtype=np.int64)
        self.pos: np.ndarray = np.zeros(0, dtype=np.int64)

    @property
    def is_weighted(self) -> bool:
        return self.neg.dtype == np.float64

    @property
    def nbytes(self) -> int:
        return int(self.values.nbytes + self.neg.nbytes + self.pos.nbytes)

    def copy(self) -> ExactCounts:
        new = ExactCounts()
        new.values, new.neg, new.pos = self.values.copy(), self.neg.copy(), self.pos.copy()
        return new

    @staticmethod
    def of(x: Array, is_pos: npt.NDArray[np.bool_] | bool, weights: Array | None) -> ExactCounts:
        """The distinct scores of a batch of validated events with their counts."""
        out = ExactCounts()
        values, inverse = np.unique(x, return_inverse=True)
        inverse = inverse.reshape(-1)
        lab = np.broadcast_to(np.asarray(is_pos, dtype=np.bool_), x.shape)
        pos_w = None if weights is None else np.where(lab, weights, 0.0)
        neg_w = None if weights is None else np.where(lab, 0.0, weights)
        if weights is None:
            out.pos = np.bincount(inverse, weights=lab, minlength=values.size).astype(np.int64)
            out.neg = np.bincount(inverse, minlength=values.size).astype(np.int64) - out.pos
        else:
            out.pos = np.bincount(inverse, weights=pos_w, minlength=values.size)
            out.neg = np.bincount(inverse, weights=neg_w, minlength=values.size)
        out.values = values.astype(np.float64, copy=False)
        out.values[out.values == 0] = 0.0  # -0.0 and 0.0 are one score
        return out.without_empty()

    def without_empty(self) -> ExactCounts:
        keep = (self.neg != 0) | (self.pos != 0)
        if not keep.all():
            self.values, self.neg, self.pos = self.values[keep], self.neg[keep], self.pos[keep]
        return self

    def combined(self, other: ExactCounts, sign: int) -> ExactCounts:
        """These counts plus (or, ``sign=-1``, less) ``other``'s; ``ValueError`` on a count that would go negative.

        ``other``'s new scores are inserted into these sorted ones where they
        belong: one search per score of ``other`` and a pass over these, so a
        small batch into many stored scores costs no sort of them all.
        """
        weighted = self.is_weighted or other.is_weighted
        if not weighted and exact_kernel():  # whole counts: one compiled merge pass
            return self._combined_compiled(other, sign)
        dtype = np.float64 if weighted else np.int64
        at = np.searchsorted(self.values, other.values)  # where each of other's scores is, or goes
        new = np.ones(at.size, dtype=np.bool_)
        inside = at < self.values.size
        new[inside] = self.values[at[inside]] != other.values[inside]
        out = ExactCounts()
        if new.any():
            placed = at[new] + np.arange(int(new.sum()))  # the new scores' places among all
            kept = np.ones(self.values.size + placed.size, dtype=np.bool_)
            kept[placed] = False
            kept_at = np.flatnonzero(kept)  # these scores' places
            out.values = np.empty(kept.size, dtype=np.float64)
            out.values[kept_at], out.values[placed] = self.values, other.values[new]
            out.neg, out.pos = np.zeros(kept.size, dtype=dtype), np.zeros(kept.size, dtype=dtype)
            out.neg[kept_at], out.pos[kept_at] = self.neg, self.pos
        else:
            out.values, out.neg, out.pos = self.values.copy(), self.neg.astype(dtype), self.pos.astype(dtype)
        # other's j-th score lands after the new scores of other before it (both runs are sorted)
        theirs = at + (np.cumsum(new) - new)
        before_neg, before_pos = out.neg[theirs], out.pos[theirs]
        out.neg[theirs] = before_neg + sign * other.neg
        out.pos[theirs] = before_pos + sign * other.pos
        if sign < 0:
            if weighted:  # a count within rounding of zero is zero: an emptied score is gone
                neg, pos = out.neg[theirs], out.pos[theirs]
                neg[np.abs(neg) <= 1e-9 * np.abs(before_neg)] = 0.0
                pos[np.abs(pos) <= 1e-9 * np.abs(before_pos)] = 0.0
                out.neg[theirs], out.pos[theirs] = neg, pos
            if (out.neg < 0).any() or (out.pos < 0).any():
                raise ValueError("cannot take out counts that were not added: the result would be negative")
        return out.without_empty()

    def _combined_compiled(self, other: ExactCounts, sign: int) -> ExactCounts:
        """:meth:`combined` of whole counts in one compiled merge pass (the same scores and counts)."""
        assert SPEEDUPS is not None
        size = self.values.size + other.values.size
        values, neg, pos = np.empty(size), np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64)
        tables = [np.ascontiguousarray(a, dtype=t) for a, t in (
            (self.values, np.float64), (self.neg, np.int64), (self.pos, np.int64),
            (other.values, np.float64), (other.neg, np.int64), (other.pos, np.int64),
        )]  # fmt: skip
        m = SPEEDUPS.combine_exact(*tables, sign, values, neg, pos)
        if m < 0:
            raise ValueError("cannot take out counts that were not added: the result would be negative")
        out = ExactCounts()
        out.values, out.neg, out.pos = values[:m], neg[:m], pos[:m]
        return out

    def with_events(self, x: Array, is_pos: npt.NDArray[np.bool_] | bool) -> ExactCounts:
        """These counts plus a batch of checked unweighted events': :meth:`combined` with :meth:`of`, which
        the compiled module does in one merge pass after a sort of the batch (for whole counts)."""
        if not exact_kernel() or self.is_weighted:
            return self.combined(ExactCounts.of(x, is_pos, None), 1)
        assert SPEEDUPS is not None
        xs, labels = _kernel_inputs(x, is_pos)
        order = np.argsort(xs).astype(np.int64, copy=False)  # equal scores in any order: their counts add
        size = self.values.size + xs.size
        values, neg, pos = np.empty(size), np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64)
        stored = [np.ascontiguousarray(a, dtype=t) for a, t in ((self.values, np.float64), (self.neg, np.int64),
                                                                    (self.pos, np.int64))]  # fmt: skip
        m = SPEEDUPS.merge_exact(*stored, xs, labels, labels.dtype.itemsize, order, values, neg, pos)
        out = ExactCounts()
        out.values, out.neg, out.pos = values[:m], neg[:m], pos[:m]
        return out

    def scaled(self, factor: float) -> ExactCounts:
        """Every count times ``factor``; a score whose counts that takes below the smallest float (0) is gone, as
        a score of weight 0 never enters (a decayed window's oldest scores)."""
        out = ExactCounts()
        out.values = self.values.copy()
        out.neg, out.pos = self.neg.astype(np.float64) * factor, self.pos.astype(np.float64) * factor
        return out.without_empty()

    def same(self, other: ExactCounts) -> bool:
        return (
            self.is_weighted == other.is_weighted
            and np.array_equal(self.values, other.values)
            and np.array_equal(self.neg, other.neg)
            and np.array_equal(self.pos, other.pos)
        )


_EMPTY = np.uint64(0x7FF8DEADBEEFCAFE)  # an empty slot of the compiled table (a NaN pattern: never a score)
_LOAD = 0.8  # the most of a table's slots in use
_ONE_SCORE, _ONE_LABEL = struct.Struct("=d"), (b"\x00", b"\x01")  # one event's score and label for count_exact
_EVENTS_A_SLOT = 4  # a batch with this many events a slot of its exact table is summed by score, not by event


class HashedCounts:
    """The compiled twin of :class:`ExactCounts` for whole counts: a hash table keyed by the scores' bits.

    ``SPEEDUPS.count_exact`` counts batches into it without sorting, and takes
    events back out in place (:meth:`take_out`: a score none of whose events
    is left leaves the table, so ``used`` is the number of scores with events);
    every other operation takes :meth:`sorted`, an :class:`ExactCounts`, so
    both layouts give the same counts and the same results.
    """

    __slots__ = ("counts", "keys", "limit", "used")

    def __init__(self, limit: int | None, expected: int = 0, capacity: int | None = None) -> None:
        self.limit = limit
        capacity = self._capacity(max(expected, 48)) if capacity is None else capacity
        self.keys = np.full(capacity, _EMPTY, dtype=np.uint64)
        self.counts = np.zeros((capacity, 2), dtype=np.int64)  # [negatives, positives] per slot
        self.used = 0

    @property
    def neg(self) -> np.ndarray:
        return self.counts[:, 0]

    @property
    def pos(self) -> np.ndarray:
        return self.counts[:, 1]

    def _capacity(self, distinct: int) -> int:
        """Slots for ``distinct`` scores at a load of at most 0.8, never more than the budget needs."""
        capacity = 64
        while distinct > _LOAD * capacity:
            capacity *= 2
        if self.limit is not None:
            capacity = min(capacity, math.ceil(self.limit / _LOAD) + 1)
        return max(capacity, distinct + 1)

    @property
    def is_weighted(self) -> bool:
        return False

    @property
    def room(self) -> int:
        """How many slots may be in use before the table grows (or the budget is reached)."""
        room = int(_LOAD * self.keys.size)
        if self.limit is not None:
            room = min(room, self.limit)
        return min(room, self.keys.size - 1)

    @property
    def nbytes(self) -> int:
        return int(self.keys.nbytes + self.counts.nbytes)

    @staticmethod
    def of(exact: ExactCounts, limit: int | None, expected: int = 0) -> HashedCounts:
        """The table of whole counts, with room for ``expected`` distinct scores (at most the budget)."""
        out = HashedCounts(limit, max(exact.values.size, expected))
        out._fill(exact)
        return out

    def _fill(self, exact: ExactCounts) -> None:
        if exact.values.size:
            assert SPEEDUPS is not None
            self.used = SPEEDUPS.fill_exact(
                self.keys, self.counts, exact.values, exact.neg.astype(np.int64), exact.pos.astype(np.int64), self.used
            )

    def entries(self) -> ExactCounts:
        """The scores and their counts in the table's order (not sorted; zero counts left in)."""
        taken = self.keys != _EMPTY
        out = ExactCounts()
        out.values = self.keys[taken].view(np.float64)
        out.neg, out.pos = self.counts[:, 0][taken], self.counts[:, 1][taken]  # a column, then the mask: 3x faster
        return out

    def grow(self) -> bool:
        """More slots, when the budget allows more distinct scores than the table holds; whether it grew."""
        if self.limit is not None and self.used >= self.limit:
            return False
        capacity = self._capacity(2 * max(self.used, 32))
        if capacity <= self.keys.size:
            return False
        self._rehash(capacity)
        return True

    def _rehash(self, capacity: int) -> None:
        """The same scores in a table of ``capacity`` slots (as :meth:`_fill` of :meth:`entries`)."""
        assert SPEEDUPS is not None
        bigger = HashedCounts(self.limit, capacity=capacity)
        self.used = SPEEDUPS.rehash_exact(self.keys, self.counts, bigger.keys, bigger.counts)
        self.keys, self.counts = bigger.keys, bigger.counts

    def sorted(self) -> ExactCounts:
        """The same counts as sorted arrays, scores whose counts are both 0 left out (a compiled radix sort of
        the table's scores: what ``np.argsort`` of its entries gives, in a fraction of the time)."""
        assert SPEEDUPS is not None
        out = ExactCounts()
        out.values, out.neg, out.pos = np.empty(self.used), np.empty(self.used, np.int64), np.empty(self.used, np.int64)
        m = SPEEDUPS.sort_exact(self.keys, self.counts, out.values, out.neg, out.pos)
        if m < self.used:  # scores whose events were all taken out
            out.values, out.neg, out.pos = out.values[:m].copy(), out.neg[:m].copy(), out.pos[:m].copy()
        return out

    def take_out(self, x: Array, labels: np.ndarray) -> bool:
        """Take checked events counted before back out, in place; all of them or, where one was not counted
        (a score the table does not hold, or a count already 0), none: whether they were taken out.

        A score none of whose events is left leaves the table: at once for a few events (the scores after it
        in its run move back), after the batch for many (one in-place pass over the slots, ``compact_exact``,
        costs less than a removal per event once the batch has about a third as many events as there are slots:
        at 10,241 slots, removals and compaction took 33-39 and 55-68 ns an event for an eighth, 29-33 and 30-36
        for a quarter, 27 and 24-27 for a third, 22-27 and 17-20 for a half).
        On a refusal the events before are counted back in: the same counts, and as many slots used (a score
        that left takes a slot again, maybe another).
        """
        assert SPEEDUPS is not None
        batch = 3 * x.size >= self.keys.size
        done, refused = self.count(x, labels, 0, sign=-1, keep_slots=batch)
        if refused:
            self.count(x[:done], labels if labels.size == 1 else labels[:done], 0)
        elif batch:
            self.used = SPEEDUPS.compact_exact(self.keys, self.counts)
        return not refused

    def take_out_one(self, score: float, is_pos: bool) -> bool:
        """:meth:`take_out` of one event (a revert, the score a float): whether the table held it."""
        assert SPEEDUPS is not None
        done, _, self.used = SPEEDUPS.count_exact(
            _ONE_SCORE.pack(score), _ONE_LABEL[is_pos], 1, self.keys, self.counts, self.used, self.used, 0, 1, -1
        )
        return bool(done)

    def count(
        self, x: Array, labels: np.ndarray, start: int, sign: int = 1, keep_slots: bool = False
    ) -> tuple[int, bool]:
        """Count ``x[start:]`` (``sign=-1``: take out) until done, a refusal (NaN, another label; taking out, a
        score the table does not hold or a count at 0) or a new score past the budget. Taking out, a score left
        with no events leaves the table, or with ``keep_slots`` keeps its slot for ``compact_exact``.

        Returns where it stopped and whether it was refused.
        """
        assert SPEEDUPS is not None
        done, n = start, x.size
        while True:
            done, refused, self.used = SPEEDUPS.count_exact(
                x, labels, labels.dtype.itemsize, self.keys, self.counts, self.used, self.room, done, n, sign,
                keep_slots,
            )  # fmt: skip
            if refused or done == n or not self.grow():
                return done, bool(refused)


class HistogramView(NamedTuple):
    """What a report is built from: thresholds (ascending), counts at each, and the exact 2x2 at the threshold.

    ``values`` are the distinct scores in the exact regime (``None`` when
    binned); ``keys`` the non-empty bins in the binned regime (``None`` when
    exact), whose edges a report works out only if it needs them.
    """

    values: Array | None
    keys: npt.NDArray[np.int64] | None
    neg: np.ndarray
    pos: np.ndarray
    tp: int | float
    fp: int | float
    tn: int | float
    fn: int | float


def check_exact_up_to(value: Any) -> int | None:
    """``exact_up_to`` as given: a whole number >= 0, or ``None`` for always exact."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"exact_up_to must be a whole number of distinct scores or None, got {value!r}")
    if value < 0:
        raise ValueError(f"exact_up_to must be >= 0, got {value!r}")
    return int(value)


class ScoreHistogram:
    """Counts of negatives and positives per score bin, exact at one threshold.

    While the events have at most ``exact_up_to`` distinct scores, every
    distinct score is kept with its counts (the exact regime); past that, the
    counts go into bins for good (the binned regime), exactly as if they had
    been binned from the first event. In the binned regime, the events of the
    threshold's bin that score at or above the threshold are counted apart,
    so that the 2x2 table at the threshold is exact whatever the bins (with
    ``threshold=-inf``, the lower edge of the lowest bin, nothing needs
    counting apart).

    Parameters
    ----------
    bins : Bins
    threshold : float, default -inf
    exact_up_to : int or None, default 0
        Distinct scores kept exactly before switching to bins; ``None``: always.

    Examples
    --------
    >>> import numpy as np
    >>> import streameval as se
    >>> from streameval.histogram import ScoreHistogram
    >>> h = ScoreHistogram(se.Bins.from_edges([0.0, 0.5, 1.0]), threshold=0.7)
    >>> h.add(np.array([0.2, 0.6, 0.8, 0.9]), np.array([False, True, False, True]), None)
    >>> view = h.read()
    >>> view.keys.tolist(), view.neg.tolist(), view.pos.tolist(), view.tp, view.fp
    ([1, 2], [1, 1], [0, 2], 1, 1)
    """

    __slots__ = (
        "_above", "_counts", "_exact", "_merges", "_t_args", "_t_codes", "_t_is_edge", "_t_key", "bins", "exact_up_to",
        "threshold",
    )  # fmt: skip

    def __init__(self, bins: Bins, threshold: float = -math.inf, exact_up_to: int | None = 0) -> None:
        self.bins = bins
        self.threshold = threshold
        self.exact_up_to = exact_up_to
        self._exact: ExactCounts | HashedCounts | None = None if exact_up_to == 0 else ExactCounts()
        self._counts = LabelledCounts(2 * bins.n_codes if exact_up_to == 0 else 0)  # no page table while exact
        self._t_key, self._t_codes, self._t_is_edge, self._t_args = _threshold_place(bins, threshold)
        # events of the threshold's bin that score >= threshold: [negatives, positives]
        self._above: np.ndarray = np.zeros(2, dtype=np.int64)
        self._merges = 0  # batches merged into sorted exact counts since a report last read them

    # -- properties ---------------------------------------------------------
    @property
    def is_exact(self) -> bool:
        """Whether every distinct score is still kept with its counts (the exact regime)."""
        return self._exact is not None

    @property
    def is_weighted(self) -> bool:
        """Whether counts are float weights rather than integer event counts."""
        return self._exact.is_weighted if self._exact is not None else self._counts.is_weighted

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        exact = self._exact.nbytes if self._exact is not None else 0
        return self._counts.nbytes + self._above.nbytes + exact

    @property
    def compiled(self) -> bool:
        """Whether batches are counted by a compiled kernel."""
        return batch_kernel(self.bins) is not None

    def total(self) -> int | float:
        """Count (or weight) of every event."""
        if self._exact is not None:
            total = self._exact.neg.sum() + self._exact.pos.sum()
            return float(total) if self._exact.is_weighted else int(total)
        return self._counts.total()

    def _fits(self, distinct: int) -> bool:
        return self.exact_up_to is None or distinct <= self.exact_up_to

    def _sorted(self) -> ExactCounts:
        """The exact counts as sorted arrays (a compiled table becomes them); only while exact."""
        if isinstance(self._exact, HashedCounts):
            self._exact = self._exact.sorted()
        assert self._exact is not None
        return self._exact

    def _table(self, batch: int = 0) -> HashedCounts | None:
        """The exact counts as a compiled table, for whole counts when the compiled module is in use.

        A new table has room for a batch of ``batch`` events up to the budget, so a large batch does not
        grow it step by step.

        ``None`` too for the first batch after a report read sorted counts, when it is at most half as large
        as they are: it is merged into them (:meth:`ExactCounts.with_events`), as a table would be filled and
        all of it sorted again at the next report (a monitor's records). The next batch before a report goes
        into a table. Batch and read, in us, merged / into a table: 27 / 30 at 8 scores and 4 events, 32 / 53
        at 250 and 100, 53 / 152 at 1,000 and 100, 84 / 513 at 4,000 and 100, 103 / 1,007 at 8,000 and 1,000.
        """
        if self._exact is None or self._exact.is_weighted or not exact_kernel():
            return None
        if isinstance(self._exact, ExactCounts):
            stored = self._exact.values.size
            if self._merges == 0 and 2 * batch <= stored:
                return None
            expected = min(batch, self.exact_up_to) if self.exact_up_to is not None else 0
            self._exact = HashedCounts.of(self._exact, self.exact_up_to, expected)
        return self._exact

    def _to_bins(self) -> None:
        """Leave the exact regime for good: the counts go into bins, as if binned from the first event."""
        if self._exact is None:
            return
        exact = self._exact.entries() if isinstance(self._exact, HashedCounts) else self._exact  # order does not matter
        self._exact = None
        self._counts = LabelledCounts(2 * self.bins.n_codes)  # the page table exists from the switch on
        parts = [(label, amounts, amounts != 0) for label, amounts in ((False, exact.neg), (True, exact.pos))]
        parts = [part for part in parts if part[2].any()]  # the labels some score has
        if not parts:
            if exact.is_weighted:
                self._counts.to_float()
                self._add_above(None)
            return
        kernel = batch_kernel(self.bins)
        negatives = int(exact.neg.sum()) if not exact.is_weighted else 0
        if kernel is not None and not exact.is_weighted and negatives + exact.pos.sum() <= 4 * exact.values.size:
            # few events a score (as per-event streams of continuous scores leave it): the events themselves,
            # the negatives then the positives, through the unweighted kernel
            x = np.concatenate([np.repeat(exact.values, exact.neg), np.repeat(exact.values, exact.pos)])
            labels = np.zeros(x.size, dtype=np.bool_)
            labels[negatives:] = True
            refused = self._add_compiled(kernel, x, labels, 1)
            assert not refused, "counted scores were refused"
            return
        # each distinct score once per label it has, weighted by its count: the negatives, then the positives
        tally = np.zeros(0)
        above: list[Any] = [0.0, 0.0]
        for label, amounts, some in parts:
            part, hit = self._tally_and_above(exact.values[some], label, amounts[some].astype(np.float64))
            part[: tally.size] += tally  # a (bin, label) slot holds one label: no sum changes order
            tally = part
            if hit is not None:
                above = [above[0] + hit[0], above[1] + hit[1]]
        if not exact.is_weighted:
            tally = np.rint(tally).astype(np.int64)  # whole counts below 2**53 add exactly in floats
        self._counts.apply(tally, exact.is_weighted)
        self._add_above((above[0], above[1]))

    def _leave_for_bins(self, was_empty: bool, done: int) -> int:
        """Leave the exact regime in the middle of a batch whose first ``done`` events the table holds; returns
        where the batch's counting in bins starts.

        A table that was empty before the batch holds only those events: the whole batch is then counted in
        bins from its first event, which gives the same counts as moving the table's distinct scores into
        bins, by the unweighted kernel and without a tally of the table (a fresh accumulator's first 25,000
        continuous scores: 0.13 instead of 0.29 ms).
        """
        if was_empty:
            self._exact = None
            self._counts = LabelledCounts(2 * self.bins.n_codes)
            return 0
        self._to_bins()
        return done

    def _overflows_when_empty(self, x: Array, weights: Array | None = None) -> bool:
        """Whether this batch would take an empty exact table past its budget, proven at once.

        Equal scores set one bit of a table of hashes, so more bits set than the budget proves more distinct
        scores (9 us for 25,000 continuous scores). The batch is then counted whole in bins: the state the
        table would reach when it overflowed, without hashing its first 8,193 scores (a fresh accumulator's
        first 25,000 continuous scores: 105 instead of 130 us), or, weighted, without sorting its first
        16,384 (the first 25,000 weighted: 0.23 instead of 1.9 ms). Weighted, only the scores of weights
        other than 0 count, as only they enter the table; the proof looks at the batch's first
        ``2 * exact_up_to + 64`` events.
        """
        if not self._provable_when_empty(x.size):
            return False
        assert SPEEDUPS is not None and self.exact_up_to is not None
        if weights is not None:  # the events a proof looks at, those of weight 0 left out
            head = slice(0, 2 * self.exact_up_to + 64)
            x = x[head][np.asarray(weights)[head] != 0]
        return bool(SPEEDUPS.more_distinct_than(np.ascontiguousarray(x, dtype=np.float64), self.exact_up_to))

    def _provable_when_empty(self, n: int) -> bool:
        """Whether this is an empty exact table of whole counts whose overflow by ``n`` events can be proven."""
        exact, limit = self._exact, self.exact_up_to
        if SPEEDUPS is None or exact is None or limit is None or n <= limit or limit > _PROVE_DISTINCT_UP_TO:
            return False
        return not (exact.is_weighted or (exact.used if isinstance(exact, HashedCounts) else exact.values.size))

    def binned(self) -> ScoreHistogram:
        """This histogram in the binned regime (itself when it is binned already, else a binned copy)."""
        if self._exact is None:
            return self
        out = self.copy()
        out._to_bins()
        return out

    # -- counting -----------------------------------------------------------
    def add(self, x: Array, is_pos: npt.NDArray[np.bool_] | bool, weights: Array | None) -> None:
        """Count validated events (:meth:`take_out` takes them back out).

        Everything is computed before anything is applied.
        """
        n = x.size
        if n == 0:
            return
        if self._overflows_when_empty(x, weights):
            self._leave_for_bins(True, 0)
        if self._exact is not None:
            table = self._table(n) if weights is None else None
            if table is not None:  # compiled: count into the table until done or past the budget
                xs, labels = _kernel_inputs(x, is_pos)
                was_empty = table.used == 0
                done, refused = table.count(xs, labels, 0)
                assert not refused, "checked events were refused"
                if done == n:
                    return
                # a new score past the budget: bins from now on, the rest counted there (by numpy's path too, as
                # add_checking cannot: it must check, these events were checked)
                done = self._leave_for_bins(was_empty, done)
                x, is_pos = x[done:], is_pos if isinstance(is_pos, (bool, np.bool_)) else is_pos[done:]
                n = x.size
            else:
                if weights is not None:
                    with np.errstate(over="ignore"):
                        check_total("w", float(self.total()) + float(weights.sum()))
                done = self._add_sorted(x, is_pos, weights)
                self._merges += 1
                if done == n:
                    return
                self._to_bins()  # too many distinct scores: bins from now on, the rest counted there
                x = x[done:]
                is_pos = is_pos if isinstance(is_pos, (bool, np.bool_)) else is_pos[done:]
                weights = None if weights is None else weights[done:]
                n = x.size
        kernel = batch_kernel(self.bins)
        if kernel is not None and weights is None:
            refused = self._add_compiled(kernel, x, is_pos, 1)
            assert not refused, "checked events were refused"
            return
        tally, above = self._tally_and_above(x, is_pos, weights)
        self._counts.apply(tally, weights is not None)
        self._add_above(above)

    def take_out(self, x: Array, is_pos: npt.NDArray[np.bool_] | bool, weights: Array | None) -> None:
        """Take validated events counted before back out; ``ValueError``, with nothing changed, where one was not
        counted (a count would go below 0).

        In the exact regime a compiled table takes unweighted events out in place, a search per event; a
        score left with no events leaves it, and no longer counts towards the budget (as in the sorted twin).
        Otherwise the events' counts are made apart and taken out of these (:meth:`merge_in`).
        """
        if x.size == 0:
            return
        if self._exact is not None:
            table = self._table(x.size) if weights is None else None
            if table is None:
                self._exact = self._sorted().combined(ExactCounts.of(x, is_pos, weights), -1)
                self._merges += 1  # as a batch merged in: the next one goes into a table
            else:
                xs, labels = _kernel_inputs(x, is_pos)
                if not table.take_out(xs, labels):
                    raise ValueError("cannot take out counts that were not added: the result would be negative")
            return
        if x.size == 1 and weights is None and not self._counts.is_weighted:  # one event (a revert): its bin
            if not self._took_out_one(float(x[0]), bool(np.asarray(is_pos).reshape(-1)[0])):
                raise ValueError("cannot take out counts that were not added: the result would be negative")
            return
        kernel = batch_kernel(self.bins)
        if kernel is not None and weights is None and not self._counts.is_weighted:
            if not self._take_out_compiled(kernel, x, is_pos):
                raise ValueError("cannot take out counts that were not added: the result would be negative")
            return
        events = ScoreHistogram(self.bins, self.threshold, 0)  # binned from the first event, as these counts are
        events.add(x, is_pos, weights)
        self._merge_binned(events, -1)

    def take_out_one(self, score: float, is_pos: bool) -> bool:
        """Take one unweighted event out of these counts where they hold it, in place; whether they did.

        ``False``, with nothing changed, where they do not hold it (it may wait among the per-event updates not
        yet counted) and where the batch path alone takes it out (weighted binned counts).
        """
        if self._exact is not None:
            if isinstance(self._exact, HashedCounts):
                return self._exact.take_out_one(score, is_pos)
            try:  # sorted counts: merged, or a table again (as a batch would be)
                self.take_out(np.array((score,)), np.array((is_pos,)), None)
            except ValueError:
                return False
            return True
        return not self._counts.is_weighted and self._took_out_one(score, is_pos)

    def _take_out_compiled(self, kernel: Kernel, x: Array, is_pos: npt.NDArray[np.bool_] | bool) -> bool:
        """:meth:`take_out` of unweighted events from whole binned counts by the count kernel with a sign of -1,
        then a check of every count (and of the threshold's bin: its events at or above the threshold no more than
        it holds); where one went below 0, the events are counted back in. Whether they were taken out."""
        above = self._above.copy()
        refused = self._add_compiled(kernel, x, is_pos, -1)
        assert not refused, "checked events were refused"
        over = not self._t_is_edge and any(
            int(self._above[k]) > self._counts.count_at(int(code)) for k, code in enumerate(self._t_codes)
        )
        if not (over or self._counts.any_negative() or (self._above < 0).any()):
            return True
        self._add_compiled(kernel, x, is_pos, 1)  # the same codes: the counts as they were
        self._above = above
        return False

    def _took_out_one(self, score: float, is_pos: bool) -> bool:
        """:meth:`take_out` of one unweighted event in the binned regime: its bin's count, and the count apart
        at or above the threshold in the threshold's bin, each checked first; whether it was taken out (nothing
        changes where it was not)."""
        code = self.bins.labelled_code(score, is_pos)
        if self._t_is_edge or code not in self._t_codes.tolist():  # the usual case: the bin's count alone
            return self._counts.take_one(code)
        label = int(is_pos)
        if score < self.threshold:  # of the bin's events, those counted apart are at or above the threshold
            return self._counts.take_one(code, keep=int(self._above[label]))
        if self._above[label] < 1 or not self._counts.take_one(code):
            return False
        self._above[label] -= 1
        return True

    def _tally_and_above(
        self, x: Array, is_pos: npt.NDArray[np.bool_] | bool, weights: Array | None
    ) -> tuple[np.ndarray, tuple[Any, Any] | None]:
        """The tally of checked events (weighted ones by the compiled pass, which sums in numpy's order, where
        there is one) and their [negatives, positives] at or above the threshold in its bin (``None``: none)."""
        kernel = batch_kernel(self.bins)
        if kernel is not None and weights is not None:
            x, labels = _kernel_inputs(x, is_pos)
            weights = np.ascontiguousarray(weights, dtype=np.float64)
            tally, hit = self._counts.tally_compiled(kernel[0], x, labels, weights, self._at_threshold(), kernel[1])
        else:
            tally, hit = self._tally(x, is_pos, weights)
        if not hit.size:
            return tally, None
        ge = x[hit] >= self.threshold
        lab = np.broadcast_to(is_pos, (x.size,))[hit]
        wt = np.ones(hit.size) if weights is None else weights[hit]
        return tally, (wt[ge & ~lab].sum(), wt[ge & lab].sum())

    def _add_sorted(self, x: Array, is_pos: npt.NDArray[np.bool_] | bool, weights: Array | None) -> int:
        """numpy's exact path: count chunks of the batch while their distinct scores fit; how many were counted.

        Chunks of about the budget's size keep the sorting small: a batch of many distinct scores stops at
        the first chunk that does not fit, not after sorting all of it.
        """
        n = x.size
        step = n if self.exact_up_to is None else max(4096, 2 * self.exact_up_to)
        start = 0
        while start < n:
            stop = min(n, start + step)
            labels = is_pos if isinstance(is_pos, (bool, np.bool_)) else is_pos[start:stop]
            if weights is None:
                both = self._sorted().with_events(x[start:stop], labels)
            else:
                both = self._sorted().combined(ExactCounts.of(x[start:stop], labels, weights[start:stop]), 1)
            if not self._fits(both.values.size):
                return start
            self._exact = both
            start = stop
        return n

    def add_checking_sums(
        self, x: Array, labels: np.ndarray
    ) -> tuple[bool, ExactCounts | tuple[int, int, int, int, int] | None]:
        """:meth:`add_checking`, and what the batch's calibration sums can come from without a pass of their own:

        * counted whole in range-free bins, the sums themselves from the counting pass, as
          ``(events, positives, outside, brier, log_loss)``;
        * into this exact table as it was (no growth, no switch to bins), or into a new one as the first batch,
          with several events a slot, its counts by distinct score: the table's counts after, less those before
          (a pass over the slots, not over the events);
        * otherwise ``None``.
        """
        table = self._exact if isinstance(self._exact, HashedCounts) else None
        empty = isinstance(self._exact, ExactCounts) and not self._exact.is_weighted and self._exact.values.size == 0
        before = None
        if table is not None and x.size >= _EVENTS_A_SLOT * table.keys.size:
            before = table.keys, table.counts.copy()
        sums = np.zeros(7, dtype=np.uint64)
        if not self.add_checking(x, labels, sums):
            return False, None
        if int(sums[6]) == x.size:  # every event summed as it was counted
            brier, log_loss = (int(sums[1]) << 64) | int(sums[0]), (int(sums[3]) << 64) | int(sums[2])
            return True, (x.size, int(sums[5]), int(sums[4]), brier, log_loss)
        if empty and isinstance(self._exact, HashedCounts):  # a new table holds the batch alone
            table = self._exact
            before = (table.keys, np.zeros_like(table.counts)) if x.size >= _EVENTS_A_SLOT * table.keys.size else None
        if table is None or before is None or self._exact is not table or table.keys is not before[0]:
            return True, None
        added = table.counts - before[1]
        at = np.flatnonzero(added.any(axis=1))
        batch = ExactCounts()
        batch.values, batch.neg, batch.pos = table.keys[at].view(np.float64), added[at, 0], added[at, 1]
        return True, batch

    def add_checking(self, x: Array, labels: np.ndarray | bool, sums: np.ndarray | None = None) -> bool:
        """Count unweighted events in one compiled pass that checks them; whether they were counted.

        ``labels`` may be unchecked integer labels that must be 0 or 1. The
        kernel refuses a NaN score or another label; then, and if anything
        fails, what was counted so far is taken back out and ``False`` is
        returned with the state as before. ``False`` too when there is no
        compiled kernel, or while exact no table to count into (see
        :meth:`_table`): the caller checks the events and calls :meth:`add`.

        With ``sums`` (seven uint64 zeros), a batch counted whole in range-free bins adds its calibration sums
        to them in the same pass (``count_range_free``'s layout; its last item counts the events summed).
        """
        if x.size == 0:
            return True
        kernel = batch_kernel(self.bins)
        if kernel is not None and self._overflows_when_empty(x):
            xs, lab = _kernel_inputs(x, labels)
            return self._in_bins_from(kernel, xs, lab, True, 0, sums)  # refused: as before
        if self._exact is not None:
            table = self._table(x.size)
            if table is None:
                return False
            xs, lab = _kernel_inputs(x, labels)
            was_empty = table.used == 0
            done, refused = table.count(xs, lab, 0)
            if done == x.size and not refused:
                return True
            # a new score past the budget: bins from here, the rest there
            if not refused and kernel is not None and self._in_bins_from(kernel, xs, lab, was_empty, done):
                return True
            # refused: take back what was counted; the caller checks the events and explains the refusal
            table.count(xs[:done], lab if lab.size == 1 else lab[:done], 0, sign=-1)
            self._exact = table.sorted()
            return False
        if kernel is None:
            return False
        return not self._add_compiled(kernel, x, labels, 1, sums)

    def _in_bins_from(
        self, kernel: Kernel, xs: Array, labels: np.ndarray, was_empty: bool, done: int, sums: np.ndarray | None = None
    ) -> bool:
        """Leave the exact regime (:meth:`_leave_for_bins`) and count the batch in bins from where that starts,
        checking it; whether it was counted. A refusal puts the exact regime back as it was. ``sums``: as for
        :meth:`add_checking`, where the whole batch is counted in bins."""
        exact, placeholder, above = self._exact, self._counts, self._above.copy()
        start = self._leave_for_bins(was_empty, done)
        rest = labels if labels.size == 1 else labels[start:]
        if not self._add_compiled(kernel, xs[start:], rest, 1, sums if start == 0 else None):
            return True
        self._exact, self._counts, self._above = exact, placeholder, above
        return False

    def add_count(self, score: float, is_pos: bool, amount: int | float) -> None:
        """Add ``amount`` events (or weight) of one score and label (never at the threshold's bin)."""
        if self._exact is not None:
            one = ExactCounts()
            one.values = np.array([score], dtype=np.float64)
            counts = np.array([0, amount] if is_pos else [amount, 0])
            one.neg, one.pos = counts[:1], counts[1:]
            both = self._sorted().combined(one, 1)
            if self._fits(both.values.size):
                self._exact = both
                return
            self._to_bins()
        code = int(self.bins.labelled_codes([score], [is_pos])[0])
        self._counts.add_at(code, amount)
        self._add_above(None)

    def _add_above(self, above: tuple[Any, Any] | list[int] | None) -> None:
        """Add signed [negatives, positives] of the threshold's bin at or above it (float once counts are)."""
        if self._counts.is_weighted and self._above.dtype != np.float64:
            self._above = self._above.astype(np.float64)
        if above is not None and (above[0] or above[1]):  # adding zeros changes nothing
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
            labels = is_pos if single_label else is_pos[start:stop]  # type: ignore[index]
            codes = self.bins.labelled_codes_into(x[start:stop], labels, ws)
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
        return self._t_args

    def _add_compiled(
        self, kernel: Kernel, x: Array, is_pos: np.ndarray | bool, sign: int, sums: np.ndarray | None = None
    ) -> bool:
        """:meth:`add` of unweighted events in one compiled pass; whether the input was refused. ``sums``: the
        events' calibration sums, added in the same pass by the range-free kernel (else left as they are)."""
        function, scheme_args = kernel
        if function is not SPEEDUPS.count_range_free or sign != 1:  # type: ignore[union-attr]
            sums = None
        state = self._counts
        n = x.size
        x, labels = _kernel_inputs(x, is_pos)
        at_threshold = self._at_threshold()
        done, refused = 0, False
        try:
            done, refused, above = state.count_compiled(
                function, x, labels, sign, at_threshold, scheme_args, 0, n, sums
            )
        finally:
            if refused and done:
                state.count_compiled(function, x, labels, -sign, at_threshold, scheme_args, 0, done)
        if refused:
            return True
        self._add_above(above)
        return False

    # -- combining ----------------------------------------------------------
    def copy(self) -> ScoreHistogram:
        """An independent copy."""
        new = ScoreHistogram.__new__(ScoreHistogram)
        new.bins, new.threshold, new.exact_up_to = self.bins, self.threshold, self.exact_up_to
        new._t_key, new._t_codes, new._t_is_edge = self._t_key, self._t_codes, self._t_is_edge
        new._t_args = self._t_args
        new._counts = self._counts.copy()
        new._above = self._above.copy()
        new._exact = None if self._exact is None else self._sorted().copy()
        new._merges = self._merges
        return new

    def merge_in(self, other: ScoreHistogram, sign: int = 1) -> None:
        """Add (or with ``sign=-1`` take out) the counts of a histogram of the same bins, threshold and budget.

        Two exact histograms stay exact while their distinct scores together
        fit the budget; otherwise the result is binned, as if every event had
        been binned from the first. Taking out more than was added raises
        ``ValueError`` and changes nothing.
        """
        if self._exact is not None and other._exact is not None:
            both = self._sorted().combined(other._sorted(), sign)  # a refused subtraction raises here
            if sign < 0 or self._fits(both.values.size):
                self._exact = both
                return
        if self._exact is not None and sign < 0:  # bins only from here on: on a copy, so that a refusal changes nothing
            trial = self.binned()
            trial._merge_binned(other.binned(), sign)
            self._exact, self._counts, self._above = None, trial._counts, trial._above
            return
        self._to_bins()
        self._merge_binned(other.binned(), sign)

    def _merge_binned(self, other: ScoreHistogram, sign: int) -> None:
        above = self._above.astype(np.float64) if other.is_weighted else self._above
        above = above + sign * other._above
        if sign < 0 and (above < -1e-9 * np.abs(self._above)).any():
            raise ValueError("cannot take out counts that were not added: the result would be negative")
        if sign < 0 and not self._t_is_edge:  # the threshold's bin keeps at least its events at or above it
            left = [self._counts.count_at(int(c)) - other._counts.count_at(int(c)) for c in self._t_codes]
            if (above - np.array(left) > 1e-9 * np.maximum(np.abs(self._above), 1)).any():
                raise ValueError("cannot take out counts that were not added: the result would be negative")
        self._counts.merge_in(other._counts, sign)
        self._above = np.maximum(above, 0) if sign < 0 else above
        self._add_above(None)

    def scale_in(self, factor: float) -> None:
        """Multiply every count by ``factor`` (counts become float weights)."""
        if self._exact is not None:
            self._exact = self._sorted().scaled(factor)
        self._counts.scale_in(factor)
        self._above = self._above.astype(np.float64) * factor

    def same(self, other: ScoreHistogram) -> bool:
        """Whether both hold exactly the same counts (in the same regime)."""
        if self._exact is not None or other._exact is not None:
            return self._exact is not None and other._exact is not None and self._sorted().same(other._sorted())
        return self._counts.same_counts(other._counts) and np.array_equal(self._above, other._above)

    # -- reading ------------------------------------------------------------
    def histogram(self) -> tuple[npt.NDArray[np.int64], np.ndarray, np.ndarray]:
        """Keys (ascending) of non-empty bins with their negatives and positives (of the binned regime)."""
        return self.binned()._counts.histogram(self.bins)

    def read(self) -> HistogramView:
        """The thresholds and counts a report is built from (read-only arrays), and the exact 2x2 at the threshold."""
        weighted = self.is_weighted
        cast = float if weighted else int
        if self._exact is not None:
            exact = self._sorted()
            self._merges = 0
            start = int(np.searchsorted(exact.values, self.threshold, side="left"))
            return HistogramView(
                _readonly(exact.values.copy()), None, _readonly(exact.neg.copy()), _readonly(exact.pos.copy()),
                cast(exact.pos[start:].sum()), cast(exact.neg[start:].sum()),
                cast(exact.neg[:start].sum()), cast(exact.pos[:start].sum()),
            )  # fmt: skip
        if self._t_is_edge:  # the threshold's bin and every bin above it predict positive: split below that bin
            keys, neg, pos, (_, tn, fn, fp, tp) = self.binned()._counts.histogram_split(self.bins, self._t_key - 1)
            return HistogramView(
                None, _readonly(keys), _readonly(neg), _readonly(pos), cast(tp), cast(fp), cast(tn), cast(fn)
            )
        keys, neg, pos, (_, neg_below, pos_below, fp, tp) = self.binned()._counts.histogram_split(
            self.bins, self._t_key
        )
        t_neg, t_pos = self._above[0], self._above[1]
        # below the threshold: lower bins, and the threshold's bin less what is at or above it (never below 0)
        tn, fn = neg_below - t_neg, pos_below - t_pos
        if weighted:
            tn, fn = max(tn, 0.0), max(fn, 0.0)
        return HistogramView(
            None, _readonly(keys), _readonly(neg), _readonly(pos),
            cast(tp + t_pos), cast(fp + t_neg), cast(tn), cast(fn),
        )  # fmt: skip

    # -- state --------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        """``{"values", "neg", "pos"}`` in the exact regime, ``{"keys", "neg", "pos"}`` of the non-empty bins else."""
        if self._exact is not None:
            exact = self._sorted()
            return {"values": exact.values.copy(), "neg": exact.neg.copy(), "pos": exact.pos.copy()}
        keys, neg, pos = self.histogram()
        return {"keys": keys, "neg": neg, "pos": pos}

    def above_state(self) -> np.ndarray:
        """[negatives, positives] of the threshold's bin at or above the threshold (zeros while exact)."""
        return self._above.astype(np.float64 if self.is_weighted else np.int64)

    def load(self, where: str, hist: Any, weighted: bool, above: Any = None) -> None:
        """Fill this fresh histogram from a saved ``{"keys", "neg", "pos"}`` or ``{"values", "neg", "pos"}``.

        Raises ``FormatError`` if anything is invalid (the keys of bins of
        another scheme, values that are not strictly increasing, more values
        than the budget, ...).
        """
        if isinstance(hist, dict) and "values" in hist:
            self._load_exact(where, hist, weighted, above)
            return
        if self._exact is not None:  # a binned state: no exact scores, and the page table bins need
            self._exact = None
            self._counts = LabelledCounts(2 * self.bins.n_codes)
        keys, neg, pos = decode_histogram(where, hist, self.bins, weighted)
        if above is not None:
            counts = decode_counts("above", above, weighted)
            if counts.size != 2:
                raise FormatError(f"above must hold 2 counts, got {counts.size}")
            at = np.searchsorted(keys, self._t_key)
            in_bin = (neg[at], pos[at]) if at < keys.size and keys[at] == self._t_key else (0, 0)
            limit = (0, 0) if self._t_is_edge else in_bin
            if counts[0] > limit[0] or counts[1] > limit[1]:
                raise FormatError(f"above {counts.tolist()} exceeds the threshold bin's counts {list(limit)}")
            self._above = counts
        x = self.bins.lower_edges(keys)
        for label, values in ((False, neg), (True, pos)):
            nz = values != 0
            if not nz.any():
                continue
            codes = self.bins.labelled_codes(x[nz], label)
            back, _ = self.bins.decode(codes)
            if not np.array_equal(back, keys[nz]):
                bad = keys[nz][back != keys[nz]][0]
                raise FormatError(f"{where}.keys holds {int(bad)}, which no score reaches in {self.bins!r}")
            self._counts.fill(codes, values[nz])
        if weighted:
            self._counts.to_float()
        self._add_above(None)

    def _load_exact(self, where: str, hist: dict[str, Any], weighted: bool, above: Any) -> None:
        require_fields(hist, where, {"values", "neg", "pos"})
        if self.exact_up_to == 0:
            raise FormatError(f"{where} holds exact scores, but exact_up_to is 0")
        values = decode_values(f"{where}.values", hist["values"])
        neg, pos = decode_neg_pos(where, hist, values.size, "values", "score", weighted)
        if not self._fits(values.size):
            raise FormatError(f"{where} holds {values.size} distinct scores, more than exact_up_to={self.exact_up_to}")
        if above is not None and np.any(decode_counts("above", above, weighted) != 0):
            raise FormatError("above must be [0, 0] in the exact regime")
        exact = ExactCounts()
        exact.values, exact.neg, exact.pos = values, neg, pos
        self._exact = exact
        if weighted:
            self._counts.to_float()
            self._add_above(None)


def add_checking_grouped(
    hists: list[ScoreHistogram], groups: EventGroups, x: Array, labels: np.ndarray, with_sums: bool = False
) -> list[tuple[int, int, int, int, int]] | None:
    """:meth:`ScoreHistogram.add_checking` of a batch whose events go to several histograms (event i to
    ``hists[group of i]``), in one compiled pass; ``None`` if they were not counted, else (``with_sums``) each
    group's calibration sums from the same pass (:func:`state.count_grouped`) or an empty list.

    Only for histograms of one range-free scheme and threshold with whole counts, at most
    ``GROUPED_IN_PLACE_UP_TO`` of them (else ``None`` at once), in the binned regime or empty exact tables that
    their events are proven to take past their budget (at most ``NEW_GROUPS_UP_TO``): these leave for bins first, the
    state they would reach when they overflowed. A NaN score or a label other than 0 and 1 refuses the batch:
    ``None``, with every histogram as before.
    """
    first = hists[0]
    kernel = batch_kernel(first.bins)
    if (
        kernel is None
        or kernel[0] is not SPEEDUPS.count_range_free  # type: ignore[union-attr]
        or len(hists) != groups.count
        or groups.count > GROUPED_IN_PLACE_UP_TO
        or any((h.bins is not first.bins and h.bins != first.bins) or h.threshold != first.threshold for h in hists)
    ):
        return None
    exact = [h._exact is not None for h in hists]
    if any(h._counts.is_weighted for h, e in zip(hists, exact, strict=True) if not e):
        return None
    if any(exact) and not _proven_past_budgets(hists, exact, groups, x):  # a pass over the batch: checked last
        return None
    saved = [(h, h._exact, h._counts) for h, e in zip(hists, exact, strict=True) if e]
    for h, _, _ in saved:
        h._leave_for_bins(True, 0)
    xs, lab = _kernel_inputs(x, labels)
    found = None
    try:
        found = count_grouped([h._counts for h in hists], groups, xs, lab, first._at_threshold(), kernel[1], with_sums)
    finally:
        if found is None:  # refused (or failed): the new tables back as they were
            for h, table, counts in saved:
                h._exact, h._counts = table, counts
    if found is None:
        return None
    above, sums = found
    for h, part in zip(hists, above, strict=True):
        h._add_above(part)
    return [] if sums is None else sums


def add_columns(hists: list[ScoreHistogram], y: npt.NDArray[np.int64], scores: npt.NDArray[np.float64]) -> bool:
    """Count each column c of a C-contiguous matrix of checked scores (no NaN) into ``hists[c]``, positive where
    the row's class index ``y`` is c, in one compiled pass over the matrix (:func:`state.count_columns`); whether
    they were counted (else nothing changed: the caller counts each column apart).

    Only for histograms of one range-free scheme and threshold, in the binned regime with whole counts: one
    class's scores, each taken apart, are what :meth:`ScoreHistogram.add` counts, in the same bins.
    """
    first = hists[0]
    kernel = batch_kernel(first.bins)
    if (
        kernel is None
        or kernel[0] is not SPEEDUPS.count_range_free  # type: ignore[union-attr]
        or scores.ndim != 2
        or len(hists) != scores.shape[1]
        or not scores.flags.c_contiguous
        or any(
            h._exact is not None
            or h._counts.is_weighted
            or (h.bins is not first.bins and h.bins != first.bins)
            or h.threshold != first.threshold
            for h in hists
        )
    ):
        return False
    above = count_columns([h._counts for h in hists], y, scores, first._at_threshold(), kernel[1])
    for h, part in zip(hists, above, strict=True):
        h._add_above(part)
    return True


NEW_GROUPS_UP_TO = 64  # empty exact tables that add_checking_grouped may take into bins in one batch
_PROOF_BYTES_UP_TO = 1 << 24  # and the memory their proof may take (64 default budgets: 1 MiB)


def _proven_past_budgets(hists: list[ScoreHistogram], exact: list[bool], groups: EventGroups, x: Array) -> bool:
    """Whether every histogram marked ``exact`` is an empty exact table whose events in this batch (its group's)
    are proven to take it past its budget, all with one budget, at most ``NEW_GROUPS_UP_TO`` of them."""
    marked = [h for h, e in zip(hists, exact, strict=True) if e]
    limit = marked[0].exact_up_to
    if len(marked) > NEW_GROUPS_UP_TO or any(
        h.exact_up_to != limit or not h._provable_when_empty(x.size) for h in marked
    ):
        return False
    assert limit is not None
    if len(marked) * 2 * limit > _PROOF_BYTES_UP_TO:  # the proof's tables: 16 bits a score of each budget
        return False
    assert SPEEDUPS is not None
    values, width, lo, lookup = groups.kernel_args()
    which = np.array(exact, dtype=np.uint8)
    xs = np.ascontiguousarray(x, dtype=np.float64)
    proven = SPEEDUPS.more_distinct_than_grouped(xs, values, width, lo, lookup, which, limit)
    return all(p for p, e in zip(proven, exact, strict=True) if e)
