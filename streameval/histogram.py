"""A score histogram: (negative, positive) counts per bin, and exact counts at one threshold.

:class:`ScoreHistogram` is the building block of every accumulator kind that
keeps scores: the binary accumulator (one histogram), the multiclass one (one
per class, one-vs-rest), the regression one (absolute errors, all counted as
negatives). It counts validated events with the compiled kernel of its binning
scheme when there is one, and with numpy otherwise, with identical counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from ._codec import FormatError, decode_counts, decode_histogram
from .bins import BLOCK, Bins, Workspace
from .state import LabelledCounts

__all__ = ["ScoreHistogram", "batch_kernel"]

Array = npt.NDArray[np.float64]
Kernel = tuple[Callable[..., Any], tuple[Any, ...]]


def batch_kernel(bins: Bins) -> Kernel | None:
    """The compiled counting function of a scheme and its arguments, or ``None`` (numpy's path)."""
    return bins.compiled_kernel()


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


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
    index = (bins.identity(), t)
    place = _THRESHOLD_PLACES.get(index)
    if place is None:
        codes = _readonly(bins.labelled_codes([t, t], [False, True]))
        place = (bins.key(t), codes, bins.is_lower_edge(t))
        if len(_THRESHOLD_PLACES) >= 256:
            _THRESHOLD_PLACES.clear()
        _THRESHOLD_PLACES[index] = place
    return place


class ScoreHistogram:
    """Counts of negatives and positives per score bin, exact at one threshold.

    The events of the threshold's bin that score at or above the threshold
    are counted apart, so that the 2x2 table at the threshold is exact
    whatever the bins (with ``threshold=-inf``, the lower edge of the lowest
    bin, nothing needs counting apart).

    Parameters
    ----------
    bins : Bins
    threshold : float, default -inf

    Examples
    --------
    >>> import numpy as np
    >>> import streameval as se
    >>> from streameval.histogram import ScoreHistogram
    >>> h = ScoreHistogram(se.Bins.from_edges([0.0, 0.5, 1.0]), threshold=0.7)
    >>> h.add(np.array([0.2, 0.6, 0.8, 0.9]), np.array([False, True, False, True]), None)
    >>> keys, neg, pos, tp, fp = h.read()
    >>> keys.tolist(), neg.tolist(), pos.tolist(), tp, fp
    ([1, 2], [1, 1], [0, 2], 1, 1)
    """

    __slots__ = ("_above", "_counts", "_t_codes", "_t_is_edge", "_t_key", "bins", "threshold")

    def __init__(self, bins: Bins, threshold: float = -math.inf) -> None:
        self.bins = bins
        self.threshold = threshold
        self._counts = LabelledCounts(2 * bins.n_codes)
        self._t_key, self._t_codes, self._t_is_edge = _threshold_place(bins, threshold)
        # events of the threshold's bin that score >= threshold: [negatives, positives]
        self._above: np.ndarray = np.zeros(2, dtype=np.int64)

    # -- properties ---------------------------------------------------------
    @property
    def is_weighted(self) -> bool:
        """Whether counts are float weights rather than integer event counts."""
        return self._counts.is_weighted

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        return self._counts.nbytes + self._above.nbytes

    @property
    def compiled(self) -> bool:
        """Whether batches are counted by a compiled kernel."""
        return batch_kernel(self.bins) is not None

    def total(self) -> int | float:
        """Count (or weight) of every event."""
        return self._counts.total()

    # -- counting -----------------------------------------------------------
    def add(self, x: Array, is_pos: npt.NDArray[np.bool_] | bool, weights: Array | None, sign: int = 1) -> None:
        """Count validated events (``sign=-1`` takes them back out).

        Everything is computed before anything is applied.
        """
        n = x.size
        if n == 0:
            return
        kernel = batch_kernel(self.bins)
        if kernel is not None and weights is None:
            refused = self._add_compiled(kernel, x, is_pos, sign)
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

    def add_checking(self, x: Array, labels: np.ndarray | bool) -> bool:
        """Count unweighted events in one compiled pass that checks them; whether they were counted.

        ``labels`` may be unchecked integer labels that must be 0 or 1. The
        kernel refuses a NaN score or another label; then, and if anything
        fails, what was counted so far is taken back out and ``False`` is
        returned with the state as before. ``False`` too when there is no
        compiled kernel: the caller checks the events and calls :meth:`add`.
        """
        kernel = batch_kernel(self.bins)
        if kernel is None or x.size == 0:
            return x.size == 0
        return not self._add_compiled(kernel, x, labels, 1)

    def add_count(self, score: float, is_pos: bool, amount: int | float) -> None:
        """Add ``amount`` events (or weight) of one score and label (never at the threshold's bin)."""
        code = int(self.bins.labelled_codes([score], [is_pos])[0])
        self._counts.add_at(code, amount)
        self._add_above(None)

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
        return int(self._t_codes[0]), int(self._t_codes[1]), not self._t_is_edge, self.threshold

    def _add_compiled(self, kernel: Kernel, x: Array, is_pos: np.ndarray | bool, sign: int) -> bool:
        """:meth:`add` of unweighted events in one compiled pass; whether the input was refused."""
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

    # -- combining ----------------------------------------------------------
    def copy(self) -> ScoreHistogram:
        """An independent copy."""
        new = ScoreHistogram.__new__(ScoreHistogram)
        new.bins, new.threshold = self.bins, self.threshold
        new._t_key, new._t_codes, new._t_is_edge = self._t_key, self._t_codes, self._t_is_edge
        new._counts = self._counts.copy()
        new._above = self._above.copy()
        return new

    def merge_in(self, other: ScoreHistogram, sign: int = 1) -> None:
        """Add (or with ``sign=-1`` take out) the counts of a histogram of the same bins and threshold.

        Taking out more than was added raises ``ValueError`` and changes nothing.
        """
        above = self._above.astype(np.float64) if other.is_weighted else self._above
        above = above + sign * other._above
        if sign < 0 and (above < -1e-9 * np.abs(self._above)).any():
            raise ValueError("cannot take out counts that were not added: the result would be negative")
        self._counts.merge_in(other._counts, sign)
        self._above = np.maximum(above, 0) if sign < 0 else above
        self._add_above(None)

    def scale_in(self, factor: float) -> None:
        """Multiply every count by ``factor`` (counts become float weights)."""
        self._counts.scale_in(factor)
        self._above = self._above.astype(np.float64) * factor

    def same(self, other: ScoreHistogram) -> bool:
        """Whether both hold exactly the same counts."""
        return self._counts.same_counts(other._counts) and np.array_equal(self._above, other._above)

    # -- reading ------------------------------------------------------------
    def histogram(self) -> tuple[npt.NDArray[np.int64], np.ndarray, np.ndarray]:
        """Keys (ascending) of non-empty bins with their negatives and positives."""
        return self._counts.histogram(self.bins)

    def read(self) -> tuple[npt.NDArray[np.int64], np.ndarray, np.ndarray, int | float, int | float]:
        """``(keys, neg, pos, tp, fp)``: the histogram (read-only arrays) and the exact counts at the threshold."""
        keys, neg, pos = self.histogram()
        cast = float if self.is_weighted else int
        start = int(np.searchsorted(keys, self._t_key, side="right"))
        tp = pos[start:].sum()
        fp = neg[start:].sum()
        if self._t_is_edge:
            t_neg = self._counts.count_at(int(self._t_codes[0]))
            t_pos = self._counts.count_at(int(self._t_codes[1]))
        else:
            t_neg, t_pos = self._above[0], self._above[1]
        return _readonly(keys), _readonly(neg), _readonly(pos), cast(tp + t_pos), cast(fp + t_neg)

    # -- state --------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        """``{"keys", "neg", "pos"}`` arrays of the non-empty bins."""
        keys, neg, pos = self.histogram()
        return {"keys": keys, "neg": neg, "pos": pos}

    def above_state(self) -> np.ndarray:
        """[negatives, positives] of the threshold's bin at or above the threshold."""
        return self._above.copy()

    def load(self, where: str, hist: Any, weighted: bool, above: Any = None) -> None:
        """Fill this fresh histogram from a saved ``{"keys", "neg", "pos"}`` (and ``above``).

        Raises ``FormatError`` if anything is invalid.
        """
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
