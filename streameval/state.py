"""Mergeable count states.

:class:`LabelledCounts` holds, for every bin key, the count (or total weight)
of negatives and of positives. Keys are grouped in pages of ``PAGE`` keys and
only the pages that ever received an event are stored, so a range-free scheme
with hundreds of thousands of possible keys costs memory only for the part of
the score range a stream actually reaches.

Counts are ``int64`` as long as every event had weight 1; the first event of
another weight turns them into ``float64`` for good (merging an integer and a
float state gives a float state).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .bins import Workspace

__all__ = ["PAGE", "LabelledCounts"]

PAGE_BITS = 7
PAGE = 1 << PAGE_BITS
_ROW = 2 * PAGE  # one stored page: PAGE negatives, then PAGE positives
_UNSET = np.int32(-(1 << 30))  # base offset of a page that has no storage yet


class LabelledCounts:
    """Counts of negatives and positives per bin key, stored by page.

    Parameters
    ----------
    n_keys : int
        Keys run from 0 to ``n_keys - 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from streameval.state import LabelledCounts
    >>> c = LabelledCounts(1000)
    >>> c.add(np.array([3, 3, 900]), np.array([True, False, True]))
    >>> keys, neg, pos = c.nonempty()
    >>> keys.tolist(), neg.tolist(), pos.tolist()
    ([3, 900], [1, 0], [1, 1])
    """

    __slots__ = ("_base", "_counts", "_n_stored", "_page_of_row", "n_keys")

    def __init__(self, n_keys: int) -> None:
        self.n_keys = int(n_keys)
        n_pages = ((self.n_keys - 1) >> PAGE_BITS) + 1
        # flat offset of each page's negatives in _counts, or _UNSET
        self._base = np.full(n_pages, _UNSET, dtype=np.int32)
        self._page_of_row = np.empty(0, dtype=np.int64)
        self._counts = np.zeros(0, dtype=np.int64)
        self._n_stored = 0

    # -- properties ---------------------------------------------------------
    @property
    def is_weighted(self) -> bool:
        """Whether counts are float weights rather than integer event counts."""
        return self._counts.dtype == np.float64

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays of this state."""
        return int(self._base.nbytes + self._page_of_row.nbytes + self._counts.nbytes)

    @property
    def n_pages_stored(self) -> int:
        """How many pages of ``PAGE`` keys have storage."""
        return self._n_stored

    # -- updating -----------------------------------------------------------
    def _reserve(self, pages: npt.NDArray[np.int64]) -> None:
        """Give storage to the pages (unique, currently unset) in ``pages``."""
        n_new = int(pages.size)
        if n_new == 0:
            return
        need = self._n_stored + n_new
        if need > self._page_of_row.size:
            # pages arrive rarely (at most a few thousand over a stream's life), so
            # grow by a small step and keep memory close to what is used
            capacity = need + min(16, max(4, need // 4))
            rows = np.empty(capacity, dtype=np.int64)
            rows[: self._n_stored] = self._page_of_row[: self._n_stored]
            counts = np.zeros(capacity * _ROW, dtype=self._counts.dtype)
            counts[: self._n_stored * _ROW] = self._counts[: self._n_stored * _ROW]
            self._page_of_row, self._counts = rows, counts
        new_rows = np.arange(self._n_stored, need, dtype=np.int64)
        self._page_of_row[self._n_stored : need] = pages
        self._base[pages] = new_rows * _ROW
        self._n_stored = need

    def _to_float(self) -> None:
        if not self.is_weighted:
            self._counts = self._counts.astype(np.float64)

    def flat_index(
        self, keys: npt.NDArray[np.int64], is_pos: npt.NDArray[np.bool_] | bool, ws: Workspace | None = None
    ) -> npt.NDArray[np.int64]:
        """Positions in the flat count array of events with these keys and labels.

        Gives storage to pages not seen before; the counts themselves are not
        touched, so a caller can compute every addition before applying any.
        With a workspace the result is a view into it.
        """
        n = keys.size
        if ws is None:
            ws = Workspace(n)
        page = np.right_shift(keys, PAGE_BITS, out=ws.j[:n])
        flat = self._base.take(page).astype(np.int64)  # faster than take(out=...) here
        if n and flat.min() < 0:
            self._reserve(np.unique(page[flat < 0]))
            flat = self._base.take(page).astype(np.int64)
        low = np.bitwise_and(keys, PAGE - 1, out=ws.j[:n])
        flat += low
        if isinstance(is_pos, (bool, np.bool_)):
            if is_pos:
                flat += PAGE
        else:
            flat += np.multiply(is_pos, PAGE, out=ws.j[:n])
        return flat

    def tally(
        self, flat: npt.NDArray[np.int64], weights: npt.NDArray[np.float64] | None, into: np.ndarray | None
    ) -> np.ndarray:
        """Add events at positions ``flat`` to a pending tally (not to the state)."""
        size = self._n_stored * _ROW
        if weights is None:
            part = np.bincount(flat, minlength=size)
        else:
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
        """Add a tally built by :meth:`tally` to the counts."""
        if weighted:
            self._to_float()
        self._counts[: tally.size] += tally

    def add(
        self,
        keys: npt.NDArray[np.int64],
        is_pos: npt.NDArray[np.bool_] | bool,
        weights: npt.NDArray[np.float64] | None = None,
    ) -> None:
        """Count events with the given keys, labels and optional weights."""
        flat = self.flat_index(keys, is_pos)
        if flat.size:
            self.apply(self.tally(flat, weights, None), weights is not None)

    # -- combining ----------------------------------------------------------
    def copy(self) -> LabelledCounts:
        """An independent copy."""
        new = LabelledCounts.__new__(LabelledCounts)
        new.n_keys = self.n_keys
        new._base = self._base.copy()
        new._page_of_row = self._page_of_row[: self._n_stored].copy()
        new._counts = self._counts[: self._n_stored * _ROW].copy()
        new._n_stored = self._n_stored
        return new

    def merge_in(self, other: LabelledCounts) -> None:
        """Add the counts of ``other`` (same number of keys) into this state."""
        n = other._n_stored
        if n == 0:
            if other.is_weighted:
                self._to_float()
            return
        pages = other._page_of_row[:n]
        missing = pages[self._base[pages] < 0]
        self._reserve(missing)
        if other.is_weighted:
            self._to_float()
        dest = (self._base[pages] // _ROW)[:, None] * _ROW + np.arange(_ROW)
        src = other._counts[: n * _ROW]
        self._counts[dest.reshape(-1)] += src.astype(self._counts.dtype, copy=False)

    # -- reading ------------------------------------------------------------
    def nonempty(self) -> tuple[npt.NDArray[np.int64], np.ndarray, np.ndarray]:
        """Keys (ascending) of bins holding any count, with their negatives and positives."""
        n = self._n_stored
        if n == 0:
            empty = np.zeros(0, dtype=self._counts.dtype)
            return np.zeros(0, dtype=np.int64), empty, empty.copy()
        order = np.argsort(self._page_of_row[:n], kind="stable")
        table = self._counts[: n * _ROW].reshape(n, 2, PAGE)[order]
        keys = (self._page_of_row[:n][order] << PAGE_BITS)[:, None] + np.arange(PAGE)
        neg, pos = table[:, 0, :], table[:, 1, :]
        mask = (neg != 0) | (pos != 0)
        return keys[mask], neg[mask], pos[mask]

    def totals(self) -> tuple[int | float, int | float]:
        """Total negatives and positives."""
        n = self._n_stored
        table = self._counts[: n * _ROW].reshape(n, 2, PAGE)
        neg, pos = table[:, 0, :].sum(), table[:, 1, :].sum()
        if self.is_weighted:
            return float(neg), float(pos)
        return int(neg), int(pos)

    def count_at(self, key: int) -> tuple[int | float, int | float]:
        """Negatives and positives in one bin."""
        base = self._base[key >> PAGE_BITS]
        if base < 0:
            return (0.0, 0.0) if self.is_weighted else (0, 0)
        off = int(base) + (key & (PAGE - 1))
        neg, pos = self._counts[off], self._counts[off + PAGE]
        if self.is_weighted:
            return float(neg), float(pos)
        return int(neg), int(pos)

    def same_counts(self, other: LabelledCounts) -> bool:
        """Whether both states hold exactly the same counts in the same bins."""
        a, b = self.nonempty(), other.nonempty()
        return all(np.array_equal(x, y) for x, y in zip(a, b, strict=False)) and self.is_weighted == other.is_weighted
