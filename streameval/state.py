"""Mergeable count states.

:class:`LabelledCounts` holds a count (or total weight) for every *labelled
code*: an integer that a binning scheme gives to each (bin, label) pair. Codes
are grouped in pages of ``PAGE`` and only the pages that ever received an event
are stored, so a range-free scheme with millions of possible codes costs memory
only for the part of the score range a stream actually reaches.

Counts are ``int64`` as long as every event had weight 1; the first event of
another weight turns them into ``float64`` for good (merging an integer and a
float state gives a float state).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from ._compiled import SPEEDUPS
from ._numeric import EventGroups
from ._validation import check_total
from .bins import BLOCK, Bins, Workspace

__all__ = ["PAGE", "LabelledCounts"]

PAGE_BITS = 7
PAGE = 1 << PAGE_BITS
_UNSET = np.int32(-(1 << 30))  # offset of a page that has no storage yet


_NO_WEIGHTS = b""  # the compiled kernels' "no weights"
_SCRATCH = np.zeros(1, dtype=np.uint8)  # a writable buffer for the kernels' arguments that go unused


def _grown(a: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size, dtype=a.dtype)
    out[: a.size] = a
    return out


_FIT_ROOM = 4  # rows past the stored ones that _fit leaves


def _growth(pages: int) -> int:
    """Rows a table of ``pages`` pages grows by: a few hundred pages is typical, so a small step keeps memory
    close to what is used, but geometric for scores spread over thousands of pages, so that growing stays
    linear overall."""
    return max(min(16, max(4, pages // 4)), pages // 16)


class LabelledCounts:
    """Counts per labelled code, stored by page.

    Parameters
    ----------
    n_codes : int
        Codes run from 0 to ``n_codes - 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from streameval.state import LabelledCounts
    >>> c = LabelledCounts(1000)
    >>> flat = c.flat_index(np.array([3, 3, 900]))  # gives storage to the pages of codes 3 and 900
    >>> c.apply(c.tally(flat, None, None), weighted=False)
    >>> codes, counts = c.nonzero()
    >>> codes.tolist(), counts.tolist()
    ([3, 900], [2, 1])
    """

    __slots__ = ("_base", "_counts", "_layout", "_n_stored", "_page_of_row", "_targets", "n_codes")

    def __init__(self, n_codes: int) -> None:
        self.n_codes = int(n_codes)
        n_pages = ((self.n_codes - 1) >> PAGE_BITS) + 1
        # offset in _counts of each page's first code, or _UNSET
        self._base = np.full(n_pages, _UNSET, dtype=np.int32)
        self._page_of_row = np.empty(0, dtype=np.int64)
        self._counts: np.ndarray = np.zeros(0, dtype=np.int64)
        self._n_stored = 0
        self._layout: tuple[Any, ...] | None = None
        self._targets: npt.NDArray[np.int64] | None = None  # see _slot_targets

    # -- properties ---------------------------------------------------------
    @property
    def is_weighted(self) -> bool:
        """Whether counts are float weights rather than integer event counts."""
        return self._counts.dtype.kind == "f"  # int64 or float64; the kind is the cheaper test

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays of this state."""
        return int(self._base.nbytes + self._page_of_row.nbytes + self._counts.nbytes)

    # -- updating -----------------------------------------------------------
    def _reserve(self, pages: npt.NDArray[np.int64]) -> None:
        """Give storage to the pages (unique, currently unset) in ``pages``."""
        n_new = int(pages.size)
        if n_new == 0:
            return
        need = self._n_stored + n_new
        self._make_room(need)
        self._page_of_row[self._n_stored : need] = pages
        self._base[pages] = np.arange(self._n_stored, need, dtype=np.int32) * PAGE
        self._n_stored = need

    def _make_room(self, need: int, pending: int = 0) -> bool:
        """Rows for at least ``need`` pages (new rows hold zeros); ``pending``: events of the batch being
        counted that are still to come. Whether it took more rows than the usual step for them (then
        :meth:`_fit` gives back what the batch leaves unused)."""
        if need <= self._page_of_row.size:
            return False
        # a batch still to count may take a page per 128 of its events at
        # once (64 at most): a new table that a large batch fills stops to
        # grow twice rather than six times (25,000 continuous scores)
        step, for_batch = _growth(need), min(pending // PAGE, PAGE // 2)
        self._resize(need + max(step, for_batch))
        return for_batch > step

    def _fit(self) -> None:
        """Give back the rows a batch left unused, but a few (after :meth:`_make_room` took more for it)."""
        capacity = self._n_stored + _FIT_ROOM
        if self._page_of_row.size > capacity:
            self._resize(capacity)

    def _resize(self, capacity: int) -> None:
        """Rows for ``capacity`` pages, the stored ones kept (new rows hold zeros)."""
        rows = np.empty(capacity, dtype=np.int64)
        rows[: self._n_stored] = self._page_of_row[: self._n_stored]
        counts = np.zeros(capacity * PAGE, dtype=self._counts.dtype)
        counts[: self._n_stored * PAGE] = self._counts[: self._n_stored * PAGE]
        self._page_of_row, self._counts = rows, counts

    def count_compiled(
        self, kernel: Callable[..., tuple[int, bool, int, int, int]], x: npt.NDArray[np.float64],
        labels: np.ndarray, sign: int, threshold_args: tuple[Any, ...], scheme_args: tuple[Any, ...],
        start: int, end: int, sums: np.ndarray | None = None,
    ) -> tuple[int, bool, list[int]]:  # fmt: skip
        """Count scores ``x[start:end]`` with a compiled kernel (``_speedups.count_*``).

        ``labels`` are bools or unsigned 0/1 integers, one per score or one
        for all; ``threshold_args`` and ``scheme_args`` are the kernel's
        threshold and scheme arguments. The kernel gives rows to new pages
        itself; the table grows whenever it runs out. Returns where counting
        stopped, whether bad input (a NaN score, a label other than 0 and 1)
        stopped it, and the kernel's [negatives, positives] at the threshold
        codes. If growing fails, what was counted is taken back out before the
        error propagates. ``sums`` (for ``count_range_free``): the calibration
        sums of the events counted, added in the same pass.
        """

        def run(begin: int, stop: int, s: int) -> tuple[int, bool, int, int]:
            scheme = scheme_args if sums is None or s != sign else (*scheme_args, sums)  # sums of the count alone
            return self._run_kernel(
                kernel, x, labels, self._counts, self.is_weighted, s, threshold_args, begin, stop,
                (_NO_WEIGHTS, _SCRATCH, _SCRATCH, 0), scheme,
            )  # fmt: skip

        above = [0, 0]
        done, took_more = start, False
        try:
            while True:
                done, refused, a_neg, a_pos = run(done, end, sign)
                above[0] += a_neg
                above[1] += a_pos
                if refused or done == end:
                    if took_more:
                        self._fit()
                    return done, refused, above
                took_more |= self._make_room(self._n_stored + 1, end - done)
        except BaseException:  # growing failed: take back what was counted (its pages have rows)
            run(start, done, -sign)
            raise

    def tally_compiled(
        self, kernel: Callable[..., tuple[int, bool, int, int, int]], x: npt.NDArray[np.float64],
        labels: np.ndarray, weights: npt.NDArray[np.float64], threshold_args: tuple[Any, ...],
        scheme_args: tuple[Any, ...],
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.intp]]:  # fmt: skip
        """The tally of checked, weighted events by a compiled kernel, and the events at the threshold codes.

        The sums are those of :meth:`tally` over blocks of ``BLOCK`` events,
        in the same order, so the result is the numpy path's to the bit. Only
        pages get storage here (a logical no-op); :meth:`apply` adds the tally.
        """
        n = x.size
        check = bool(threshold_args[2])
        hits = np.zeros(n if check else 1, dtype=np.uint8)
        part, tally = np.zeros(self._counts.size), np.zeros(self._counts.size)
        done, took_more = 0, False
        while True:
            done, refused, _, _ = self._run_kernel(
                kernel, x, labels, part, True, 1, threshold_args, done, n, (weights, tally, hits, BLOCK), scheme_args
            )
            assert not refused, "checked events were refused"
            if done == n:
                if took_more:
                    self._fit()
                return tally[: self._n_stored * PAGE], np.flatnonzero(hits) if check else np.zeros(0, dtype=np.intp)
            took_more |= self._make_room(self._n_stored + 1, n - done)
            part, tally = _grown(part, self._counts.size), _grown(tally, self._counts.size)

    def _run_kernel(
        self, kernel: Callable[..., tuple[int, bool, int, int, int]], x: npt.NDArray[np.float64],
        labels: np.ndarray, target: np.ndarray, target_float: bool, sign: int, threshold_args: tuple[Any, ...],
        begin: int, end: int, weighting: tuple[Any, ...], scheme_args: tuple[Any, ...],
    ) -> tuple[int, bool, int, int]:  # fmt: skip
        """One call of a compiled kernel on this table; it records the rows it gave to new pages."""
        done, refused, self._n_stored, a_neg, a_pos = kernel(
            x, labels, labels.dtype.itemsize, self._base, self._page_of_row, self._n_stored, target, target_float,
            sign, *threshold_args, begin, end, *weighting, *scheme_args,
        )  # fmt: skip
        return done, refused, a_neg, a_pos

    def to_float(self) -> None:
        """Turn integer counts into float weights, for good."""
        if not self.is_weighted:
            self._counts = self._counts.astype(np.float64)

    def flat_index(self, codes: npt.NDArray[np.int64], ws: Workspace | None = None) -> npt.NDArray[np.int64]:
        """Positions in the flat count array of events with these codes.

        Gives storage to pages not seen before; the counts themselves are not
        touched, so a caller can compute every addition before applying any.
        ``codes`` may be overwritten; the result may be a view into ``ws``.
        """
        n = codes.size
        if ws is None:
            ws = Workspace(n)
        page = np.right_shift(codes, PAGE_BITS, out=ws.j[:n])
        base = np.take(self._base, page, out=ws.i32[:n], mode="wrap")  # pages are always in range
        if n and base.min() < 0:
            new = page[base < 0]
            if new.size * 8 >= self._base.size:  # many codes for the table: a count per page beats sorting them
                self._reserve(np.flatnonzero(np.bincount(new, minlength=self._base.size)))
            else:
                self._reserve(np.unique(new))
            np.take(self._base, page, out=base, mode="wrap")
        flat = np.bitwise_and(codes, PAGE - 1, out=codes)
        flat += base
        return flat

    def tally(
        self, flat: npt.NDArray[np.int64], weights: npt.NDArray[np.float64] | None, into: np.ndarray | None
    ) -> np.ndarray:
        """Add events at positions ``flat`` to a pending tally (not to the state)."""
        size = self._n_stored * PAGE
        part = np.bincount(flat, weights=weights, minlength=size)
        if into is None:
            return part
        if into.size < size or into.dtype != part.dtype:
            grown = np.zeros(size, dtype=np.result_type(into.dtype, part.dtype))
            grown[: into.size] = into
            into = grown
        into[:size] += part
        return into

    def apply(self, tally: np.ndarray, weighted: bool) -> None:
        """Add a tally built by :meth:`tally` to the counts.

        Weights whose total would overflow to ``inf`` are refused with a
        ``ValueError`` before anything changes.
        """
        if weighted:
            with np.errstate(over="ignore"):
                check_total("w", float(self._counts[: self._n_stored * PAGE].sum() + abs(tally).sum()))
            self.to_float()
        self._counts[: tally.size] += tally

    def add_at(self, code: int, amount: int | float) -> None:
        """Add ``amount`` at one code; an integer amount keeps integer counts."""
        base = int(self._base[code >> PAGE_BITS])
        if base < 0:  # a page not stored yet (a revert's page is always stored: no array made for it)
            self._reserve(np.array([code >> PAGE_BITS], dtype=np.int64))
            base = int(self._base[code >> PAGE_BITS])
        if isinstance(amount, float) and not self.is_weighted:
            self.to_float()
        self._counts[base + (code & (PAGE - 1))] += amount

    # -- combining ----------------------------------------------------------
    def copy(self) -> LabelledCounts:
        """An independent copy."""
        new = LabelledCounts.__new__(LabelledCounts)
        new.n_codes = self.n_codes
        new._base = self._base.copy()
        new._page_of_row = self._page_of_row[: self._n_stored].copy()
        new._counts = self._counts[: self._n_stored * PAGE].copy()
        new._n_stored = self._n_stored
        new._layout = None
        new._targets = None
        return new

    def merge_in(self, other: LabelledCounts, sign: int = 1) -> None:
        """Add (``sign=1``) or take out (``sign=-1``) the counts of ``other`` (same number of codes).

        Taking out counts that were never added is a ``ValueError`` and
        changes nothing. With weights, a count that the subtraction brings
        within rounding of zero (``|c| <= 1e-9`` of the count before) is set
        to exactly zero, so that a bin emptied of its events is empty.
        """
        n = other._n_stored
        if n == 0:
            if other.is_weighted:
                self.to_float()
            return
        pages = other._page_of_row[:n]
        theirs = other._counts[: n * PAGE].reshape(n, PAGE)
        if sign < 0:
            stored = self._base[pages] >= 0
            missing = ~stored & theirs.any(axis=1)
            mine = np.zeros(theirs.shape, dtype=self._counts.dtype)
            mine[stored] = self._counts[: self._n_stored * PAGE].reshape(-1, PAGE)[self._base[pages[stored]] // PAGE]
            weighted = self.is_weighted or other.is_weighted
            after = mine - theirs
            if weighted:
                after[np.abs(after) <= 1e-9 * np.abs(mine)] = 0.0
            if missing.any() or (after < 0).any():
                raise ValueError("cannot take out counts that were not added: the result would be negative")
            if weighted:
                self.to_float()
            table = self._counts[: self._n_stored * PAGE].reshape(-1, PAGE)
            table[self._base[pages[stored]] // PAGE] = after[stored]
            return
        if other.is_weighted:
            self.to_float()
        self._reserve(pages[self._base[pages] < 0])
        rows = self._base[pages] // PAGE
        table = self._counts[: self._n_stored * PAGE].reshape(-1, PAGE)
        table[rows] += theirs  # rows are distinct

    def scale_in(self, factor: float) -> None:
        """Multiply every count by ``factor`` (counts become float weights)."""
        self.to_float()
        self._counts *= factor

    def fill(self, codes: npt.NDArray[np.int64], values: np.ndarray) -> None:
        """Set the counts at distinct ``codes`` (a fresh state being loaded); float values make the state weighted."""
        if values.dtype == np.float64:
            self.to_float()
        flat = self.flat_index(codes.copy())
        self._counts[flat] = values

    def any_negative(self) -> bool:
        """Whether some count is below 0 (events taken out that were not counted)."""
        return bool((self._counts[: self._n_stored * PAGE] < 0).any())

    def total(self) -> int | float:
        """The sum of every count."""
        total = self._counts[: self._n_stored * PAGE].sum()
        return float(total) if self.is_weighted else int(total)

    # -- reading ------------------------------------------------------------
    def histogram(self, bins: Bins) -> tuple[npt.NDArray[np.int64], np.ndarray, np.ndarray]:
        """Keys (ascending) of bins holding counts, with their negative and positive counts.

        Where every stored code's key and slot land depends only on which
        pages are stored, so it is worked out once per set of pages and
        reused: a read then costs a few gathers over the stored counts.

        A page may also hold codes that no score produces (with a coarse
        scheme a page spans several octaves, and ``s - 1`` never takes some
        tiny values), and some of those decode to the (bin, label) of a code
        that scores do produce. They hold no count; such codes are summed,
        not assigned, so that a zero never overwrites a count.
        """
        keys, neg, pos, _, _ = self._gathered(bins, -1)
        return keys, neg, pos

    def histogram_split(
        self, bins: Bins, key: int
    ) -> tuple[npt.NDArray[np.int64], np.ndarray, np.ndarray, tuple[int, Any, Any, Any, Any]]:
        """:meth:`histogram`, and how many of its bins have keys up to ``key``, the negatives and positives
        of those bins, then those of the bins above (what a report's 2x2 at a threshold needs)."""
        keys, neg, pos, start, sums = self._gathered(bins, key)
        if sums is None:  # summed here: weights in numpy's order
            sums = (neg[:start].sum(), pos[:start].sum(), neg[start:].sum(), pos[start:].sum())
        return keys, neg, pos, (start, *sums)

    def _gathered(
        self, bins: Bins, key: int
    ) -> tuple[npt.NDArray[np.int64], np.ndarray, np.ndarray, int, tuple[int, int, int, int] | None]:
        """The histogram, how many of its bins have keys up to ``key``, and (compiled, whole counts) the
        negatives and positives up to it and above it; ``None`` where they are not summed."""
        n, compiled = self._n_stored, SPEEDUPS is not None
        if self._layout is None or self._layout[:2] != (n, compiled):
            self._layout = (n, compiled, *self._histogram_layout(bins, compiled))
        uniq = self._layout[2]
        counts = self._counts[: n * PAGE]
        if compiled:  # the same sums, in one pass
            assert SPEEDUPS is not None
            cells, rows = self._layout[3:]
            keys = np.empty(uniq.size, dtype=np.int64)
            neg, pos = np.empty(uniq.size, dtype=counts.dtype), np.empty(uniq.size, dtype=counts.dtype)
            split = np.empty(5, dtype=np.int64)
            weighted = self.is_weighted
            m = SPEEDUPS.gather_bins(counts, weighted, cells, rows, uniq, key, keys, neg, pos, split)
            start, neg_low, pos_low, neg_high, pos_high = split.tolist()
            exact = None if weighted else (neg_low, pos_low, neg_high, pos_high)
            return keys[:m], neg[:m], pos[:m], start, exact  # whole counts: the kernel's sums are exact
        neg_one, pos_one, neg_many, pos_many = self._layout[3:]
        neg = np.zeros(uniq.size, dtype=counts.dtype)
        pos = np.zeros(uniq.size, dtype=counts.dtype)
        neg[neg_one[1]] += counts[neg_one[0]]  # the only code of its (bin, label): each sum starts at 0
        pos[pos_one[1]] += counts[pos_one[0]]
        if neg_many[0].size:
            np.add.at(neg, neg_many[1], counts[neg_many[0]])
        if pos_many[0].size:
            np.add.at(pos, pos_many[1], counts[pos_many[0]])
        present = (neg != 0) | (pos != 0)
        keys = uniq[present]
        return keys, neg[present], pos[present], int(np.searchsorted(keys, key, side="right")), None

    def _slot_targets(self, bins: Bins) -> npt.NDArray[np.int64]:
        """Each stored slot's key * 2 + label, one value per (bin, label), rows in storage order.

        Rows only ever come after the stored ones, so the rows decoded for an earlier layout are kept and
        only new ones are decoded.
        """
        n, known = self._n_stored, self._targets
        done = 0 if known is None else known.size // PAGE
        if known is not None and done == n:
            return known
        codes = ((self._page_of_row[done:n] << PAGE_BITS)[:, None] + np.arange(PAGE)).reshape(-1)
        keys, is_pos = bins.decode(codes)
        new = keys * 2 + is_pos
        self._targets = new if known is None else np.concatenate([known, new])
        return self._targets

    def _histogram_layout(self, bins: Bins, compiled: bool) -> tuple[Any, ...]:
        """Keys of the stored codes' bins, then what the gathering in use reads: each slot's (bin, label) cell and
        each row's block (or -1) for the compiled pass, or for numpy's (from slots, to bins) of each label, split by
        shared targets."""
        target = self._slot_targets(bins)
        if compiled:  # each slot's (bin, label) cell, bin * 2 + label, in one pass
            assert SPEEDUPS is not None
            # a row's slots are a run of ascending or descending targets for the range-free scheme, and the two
            # labels' rows of one range of bins interleave: merging the sorted runs gives argsort's order
            order = np.empty(target.size, dtype=np.int64)
            if not SPEEDUPS.run_order(target, PAGE, order):
                order = np.argsort(target, kind="stable").astype(np.int64, copy=False)
            cells, bin_keys = np.empty(order.size, dtype=np.int32), np.empty(order.size, dtype=np.int64)
            found = SPEEDUPS.layout_cells(target, order, cells, bin_keys)
            # a row whose cells run by steps of 2 (one label, consecutive bins: every row of the range-free scheme)
            # is gathered as a block: its first cell * 2, plus 1 where they run down; -1 for another row
            grid = cells.reshape(-1, PAGE).astype(np.int64)
            step = grid[:, 1] - grid[:, 0]
            regular = ((step == 2) | (step == -2)) & (np.diff(grid, axis=1) == step[:, None]).all(axis=1)
            rows = np.where(regular, grid[:, 0] * 2 + (step < 0), -1)
            return bin_keys[:found], cells, rows
        order = np.argsort(target, kind="stable")
        sorted_target = target[order]
        sorted_keys = sorted_target >> 1
        new_key = np.ones(order.size, dtype=np.bool_)
        np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=new_key[1:])
        to_bin = np.cumsum(new_key) - 1
        lab = (sorted_target & 1).astype(np.bool_)
        new_target = np.ones(order.size, dtype=np.bool_)
        np.not_equal(sorted_target[1:], sorted_target[:-1], out=new_target[1:])
        # a (bin, label) held by one slot: the slot starts its run of targets and the next one starts another
        alone = new_target.copy()
        alone[:-1] &= new_target[1:]
        parts = []
        for in_label in (~lab, lab):
            one, many = np.flatnonzero(in_label & alone), np.flatnonzero(in_label & ~alone)
            parts.append(((order[one], to_bin[one]), (order[many], to_bin[many])))
        (neg_one, neg_many), (pos_one, pos_many) = parts
        return sorted_keys[new_key], neg_one, pos_one, neg_many, pos_many

    def nonzero(self) -> tuple[npt.NDArray[np.int64], np.ndarray]:
        """Codes (ascending) holding a non-zero count, and those counts."""
        n = self._n_stored
        if n == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=self._counts.dtype)
        order = np.argsort(self._page_of_row[:n], kind="stable")
        table = self._counts[: n * PAGE].reshape(n, PAGE)[order]
        codes = (self._page_of_row[:n][order] << PAGE_BITS)[:, None] + np.arange(PAGE)
        mask = table != 0
        return codes[mask], table[mask]

    def take_one(self, code: int, keep: int = 0) -> bool:
        """Take one event out at ``code`` of whole counts where more than ``keep`` are there; whether it did
        (nothing changes where it did not)."""
        base = self._base.item(code >> PAGE_BITS)
        if base < 0:
            return False
        at = base + (code & (PAGE - 1))
        left = self._counts.item(at)
        if left <= keep:
            return False
        self._counts[at] = left - 1
        return True

    def count_at(self, code: int) -> int | float:
        """The count at one code."""
        base = int(self._base[code >> PAGE_BITS])
        if base < 0:
            return 0.0 if self.is_weighted else 0
        value = self._counts[base + (code & (PAGE - 1))]
        return float(value) if self.is_weighted else int(value)

    def same_counts(self, other: LabelledCounts) -> bool:
        """Whether both states hold exactly the same counts at the same codes."""
        a, b = self.nonzero(), other.nonzero()
        return self.is_weighted == other.is_weighted and np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


GROUPED_IN_PLACE_UP_TO = 4096  # groups of one batch counted by count_grouped at most


def count_grouped(
    tables: list[LabelledCounts], groups: EventGroups, x: npt.NDArray[np.float64], labels: np.ndarray,
    threshold_args: tuple[Any, ...], scheme_args: tuple[Any, ...], with_sums: bool,
) -> tuple[list[list[int]], list[tuple[int, int, int, int, int]] | None] | None:  # fmt: skip
    """Count scores ``x`` into whole-count tables of a range-free scheme, event i into ``tables[group of i]``,
    in one compiled pass (:meth:`LabelledCounts.count_compiled` for several tables, at most
    ``GROUPED_IN_PLACE_UP_TO``).

    All of the batch or none of it: the kernel counts it into a scratch table, then adds that to the tables
    once each has the rows its new pages need (given here when they lack them, without counting again).
    Returns each table's [negatives, positives] at the threshold codes and, ``with_sums``, each group's
    calibration sums in the same pass (``(events, positives, outside, brier, log_loss)``, whole units);
    ``None`` (nothing changed) when a NaN score or a label other than 0 and 1 refused the batch.
    """
    assert SPEEDUPS is not None and all(not t.is_weighted for t in tables)
    refused, need, stored, above, sums, scratch = SPEEDUPS.count_grouped_range_free(
        x, labels, labels.dtype.itemsize, *groups.kernel_args(), _kernel_tables(tables), *threshold_args,
        *scheme_args, with_sums,
    )  # fmt: skip
    if refused:
        return None
    if need is not None:  # rows for the new pages, then the counted batch added
        for table, more in zip(tables, need, strict=True):
            table._make_room(table._n_stored + more)
        stored = SPEEDUPS.merge_grouped(*scratch, _kernel_tables(tables), scheme_args[0])
    for table, rows in zip(tables, stored, strict=True):
        table._n_stored = rows
    return [list(part) for part in above], sums


def _kernel_tables(tables: list[LabelledCounts]) -> tuple[tuple[Any, ...], ...]:
    """The grouped kernels' tables: each one's page offsets, rows' pages, counts and rows in use."""
    return tuple((t._base, t._page_of_row, t._counts, t._n_stored) for t in tables)


COLUMN_BLOCK_SCORES = 1 << 14  # scores of a block of rows that count_columns writes out column by column (128 KiB)
COLUMNS_A_PASS = 64  # columns counted in one pass over the matrix: their tables share the cache (64 against 128: 100
# classes 91.4-91.5 against 92.9-94.2 ms, 1,000 classes 204.0-205.2 against 207.6-209.8; 32: 99.9-100.9, 224.8-231.2)


def count_columns(
    tables: list[LabelledCounts], y: npt.NDArray[np.int64], scores: npt.NDArray[np.float64],
    threshold_args: tuple[Any, ...], scheme_args: tuple[Any, ...],
) -> list[list[int]]:  # fmt: skip
    """Count each column c of a matrix of checked scores (no NaN) into ``tables[c]``, whole counts of a
    range-free scheme, each score positive where its row's class ``y`` (indices) is c: one compiled pass over the
    matrix (``count_columns``) for each ``COLUMNS_A_PASS`` columns, instead of a pass per column. A table short of
    rows is given more and the pass resumes where it stopped; if giving them fails, what was counted is taken
    back out before the error propagates. Returns each table's [negatives, positives] at the threshold codes.
    """
    assert SPEEDUPS is not None and all(not t.is_weighted for t in tables)
    n, k = scores.shape
    stored, above = np.empty(k, dtype=np.int64), np.zeros(2 * k, dtype=np.int64)
    stored[:] = [t._n_stored for t in tables]

    def run(first: int, start: tuple[int, int, int], stop: tuple[int, int, int], sign: int) -> tuple[int, int, int]:
        part = tables[first : first + COLUMNS_A_PASS]
        block = max(1, min(1 << 16, COLUMN_BLOCK_SCORES // len(part)))
        held, seen = stored[first : first + len(part)], above[2 * first : 2 * (first + len(part))]
        try:
            return SPEEDUPS.count_columns(
                scores, y, block, first, _kernel_tables(part), sign, *threshold_args, *scheme_args, start, stop,
                held, seen,
            )  # fmt: skip
        finally:
            for table, rows in zip(part, held.tolist(), strict=True):
                table._n_stored = rows

    end, at, grown, done = (n, 0, 0), (0, 0, 0), set(), []
    try:
        for first in range(0, k, COLUMNS_A_PASS):
            at = (0, 0, 0)
            while at != end:
                at = run(first, at, end, 1)
                if at != end:  # a page of column first + at[1] needs a row
                    table = tables[first + at[1]]
                    if table._make_room(table._n_stored + 1, n - at[0]):
                        grown.add(first + at[1])
            done.append(first)
    except BaseException:  # growing failed: take back what was counted (its pages have rows)
        for whole in done:
            run(whole, (0, 0, 0), end, -1)
        run(first, (0, 0, 0), at, -1)
        raise
    for c in grown:
        tables[c]._fit()
    return above.reshape(k, 2).tolist()
