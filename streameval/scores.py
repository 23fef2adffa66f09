"""ScoreAccumulator: the distribution of scores whose labels have not come (or never will)."""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ._codec import FormatError, decode_bins, decode_float, require_fields
from ._events import FLUSH_EVERY, LARGE_VALUE, LARGE_WEIGHT, FloatEvents, float_columns, small_float_arrays
from ._validation import as_scores, as_weights, check_no_nan, check_real, check_total
from .bins import Bins
from .histogram import DEFAULT_EXACT_UP_TO, ScoreHistogram, check_exact_up_to
from .protocol import AccumulatorBase
from .regression_report import Moments
from .score_report import ScoreReport

__all__ = ["ScoreAccumulator", "ScoreReport"]


def _range(x: npt.NDArray[np.float64]) -> tuple[float, float]:
    """The smallest and largest score (NaN for both if one is NaN; (inf, -inf) when empty)."""
    if x.size == 0:
        return math.inf, -math.inf
    with np.errstate(invalid="ignore"):
        return float(x.min()), float(x.max())


class ScoreAccumulator(AccumulatorBase):
    """Streaming, mergeable distribution of scores, without labels.

    The state is the scores' counts (every distinct score while there are at
    most ``exact_up_to`` of them, then bins, as for :class:`BinaryAccumulator`),
    the running moments and the smallest and largest score. It feeds
    :func:`streameval.drift` and every window.

    Parameters
    ----------
    bins : Bins, optional
        Binning scheme past the exact regime; default range-free.
    exact_up_to : int or None, default 8192

    Examples
    --------
    >>> import streameval as se
    >>> acc = se.ScoreAccumulator()
    >>> for s in [0.1, 0.7, 0.7, 0.3]:
    ...     acc.update(s)
    >>> r = acc.get()
    >>> r.n, round(r.mean, 6), r.quantile(0.75).value
    (4, 0.45, 0.7)
    """

    kind: ClassVar[str] = "scores"

    def __init__(self, bins: Bins | None = None, exact_up_to: int | None = DEFAULT_EXACT_UP_TO) -> None:
        bins = Bins.checked(bins)
        self.bins = bins
        self.exact_up_to = check_exact_up_to(exact_up_to)
        self._hist = ScoreHistogram(bins, exact_up_to=self.exact_up_to)  # every score counted as a negative
        self._n = 0
        self._moments = Moments(0.0, 0.0, 0.0)
        self._min, self._max = math.inf, -math.inf
        self._lost = False  # a take-out left moments whose digits were mostly lost to rounding
        self._reset_buffers()

    def _reset_buffers(self) -> None:
        # scores taken out one by one: out of the counts (and of n) at once, out of the moments and the range at the
        # next filing, once the per-event updates stored before them are in
        self._out = array("d")
        self._buffer = FloatEvents(1, self._flush, self._update_checked)
        self.update = self._buffer.update  # type: ignore[method-assign]  # plain events stored in C

    # -- updating -----------------------------------------------------------
    def update(self, score: float, w: float = 1.0) -> None:
        """Count one score (finite) with weight ``w`` (finite, >= 0).

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.ScoreAccumulator()
        >>> acc.update(0.5, w=2.0)
        >>> acc.get().weight
        2.0
        """
        self._buffer.update(score, w)

    def _update_checked(self, score: float, w: float = 1.0) -> None:
        """The per-event path for anything but plain finite floats: check, then store."""
        s = check_real("score", score, finite=True)
        weight = check_real("w", w, finite=True, nonnegative=True)
        if weight > LARGE_WEIGHT or abs(s) > LARGE_VALUE:  # counted at once: a refusal is this call's
            self._flush()
            self._ingest(np.array([s]), None if weight == 1.0 else np.array([weight]))
            return
        self._buffer.push(s, weight)

    _update_checked.__qualname__ = "ScoreAccumulator.update"  # as a wrong call's error says

    def _flush(self) -> None:
        """The per-event updates stored, then the scores taken out one by one out of the moments and the range,
        as ``-=`` of them would (once they are all counted, whatever their order: a score taken out may be one
        of those stored, an equal score filed before having left the counts)."""
        if len(self._buffer):
            (s,), w = float_columns(self._buffer)
            self._ingest(s, w)  # a refusal (a total weight that overflows) keeps the events buffered
            self._buffer.clear()
        if len(self._out):
            out = np.frombuffer(self._out, dtype=np.float64).copy()
            self._out = array("d")
            self._remove_moments(Moments.of(out))

    def update_many(self, scores: npt.ArrayLike, w: npt.ArrayLike | float | None = None) -> None:
        """Count many scores; all of them or, on bad input, none.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.ScoreAccumulator()
        >>> acc.update_many([0.2, float("inf")])
        Traceback (most recent call last):
        ...
        ValueError: scores must be finite, got inf at index 1
        """
        if not len(self._out) and (  # a small batch of plain scores (and weights): per-event updates
            small_float_arrays(scores) and self._buffer.push_many(scores)
            if w is None
            else small_float_arrays(scores, w) and self._buffer.push_many(scores, w)
        ):
            return
        x = as_scores("scores", scores, check_nan=False)
        low, high = _range(x)
        if x.size and not (math.isfinite(low) and math.isfinite(high)):  # one NaN makes both NaN: check only then
            check_no_nan("scores", x)
            bad = np.flatnonzero(~np.isfinite(x))
            raise ValueError(f"scores must be finite, got {float(x[bad[0]])!r} at index {bad[0]}")
        weights = as_weights("w", w, x.size)
        if len(self._out):  # the scores taken out one by one leave the moments first, as they left the counts
            self._flush()
        self._ingest(x, weights, (low, high))

    def _ingest(
        self, x: npt.NDArray[np.float64], w: npt.NDArray[np.float64] | None, span: tuple[float, float] | None = None
    ) -> None:
        if x.size == 0:
            return
        low, high = span if span is not None else _range(x)
        with np.errstate(over="ignore", invalid="ignore"):  # scores past 1e154: refused below
            moments = Moments.of(x, w)
        check_total("w", self._moments.weight + moments.weight)
        combined = self._moments.combine_finite(moments, "scores")
        self._hist.add(x, False, w)  # the first change; everything is checked
        self._n += int(x.size)
        self._moments = combined
        self._min, self._max = min(self._min, low), max(self._max, high)

    def revert(self, score: float, w: float = 1.0) -> None:
        """Take one score counted before back out; ``ValueError`` (and no change) if it never was.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.ScoreAccumulator()
        >>> acc.update_many([0.2, 0.4, 0.9])
        >>> acc.revert(0.9)
        >>> acc.get().max, acc.get().n
        (0.4, 2)
        """
        plain = type(score) in (float, np.float64) and type(w) in (float, int) and w == 1 and math.isfinite(score)
        if plain and self._take_out_filed(float(score)):
            return
        one = self.emptied()
        one.update(score, w)
        self -= one

    def _take_out_filed(self, score: float) -> bool:
        """One plain score taken out of the counts filed so far, without filing the per-event updates stored since
        (whether they held it, or one of its bin); its moments and the range follow at the next filing."""
        if not self._hist.take_out_one(score, False):
            return False
        self._n -= 1
        self._out.append(score)
        if len(self._out) >= FLUSH_EVERY:
            self._flush()
        return True

    def _remove_moments(self, taken: Moments) -> None:
        """The moments and the range left once scores of moments ``taken`` are out of the counts (and of n)."""
        if self._n == 0:
            self._moments, self._min, self._max = Moments(0.0, 0.0, 0.0), math.inf, -math.inf
            return
        before, self._moments = self._moments, self._moments.remove(taken)
        self._lost = self._lost or before.lost_in(self._moments)
        if self._n == 1:
            self._moments = Moments(self._moments.weight, self._moments.mean, 0.0, self._moments.mean_lo)
        report = self._report()  # the range left: exact scores, or the edges of the end bins
        if report.edges.size:  # else only scores of weight 0 are left, which no bin holds: the range stays
            self._min = max(self._min, float(report.edges[0]))
            self._max = min(self._max, float(report.upper_edges[-1]))

    def lost_to_rounding(self) -> bool:
        """Whether taking scores out left moments whose digits were mostly lost to rounding (see
        :meth:`AccumulatorBase.lost_to_rounding`)."""
        self._flush()
        return self._lost

    # -- reading ------------------------------------------------------------
    def get(self) -> ScoreReport:
        """A frozen report; the counts do not change."""
        self._flush()
        return self._report()

    def _report(self) -> ScoreReport:
        """The report of the scores filed so far."""
        view = self._hist.read()
        return ScoreReport(
            n=self._n,
            moments=self._moments,
            min=self._min if self._n else math.nan,
            max=self._max if self._n else math.nan,
            bins=self.bins,
            keys=view.keys,
            counts=view.neg,
            values=view.values,
        )

    @property
    def n(self) -> int:
        """Number of scores counted (whatever their weights)."""
        return self._n + len(self._buffer)

    # -- combining ----------------------------------------------------------
    def copy(self) -> ScoreAccumulator:
        """An independent accumulator with the same state."""
        self._flush()
        new = ScoreAccumulator.__new__(ScoreAccumulator)
        new.bins, new.exact_up_to = self.bins, self.exact_up_to
        new._hist = self._hist.copy()
        new._n, new._moments, new._min, new._max = self._n, self._moments, self._min, self._max
        new._lost = self._lost
        new._reset_buffers()
        return new

    def emptied(self) -> ScoreAccumulator:
        """A new accumulator of this one's configuration (bins, budget) and no scores.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.ScoreAccumulator(exact_up_to=10)
        >>> acc.update_many([0.2, 0.7])
        >>> fresh = acc.emptied()
        >>> fresh.n, fresh.exact_up_to
        (0, 10)
        """
        return ScoreAccumulator(self.bins, self.exact_up_to)

    def _less_itself(self) -> ScoreAccumulator:
        """No scores, in this one's regime, without copying its counts (unweighted; weighted: the general path)."""
        self._flush()  # stored per-event updates may weigh the counts or take them into bins
        if self._hist.is_weighted:
            return super()._less_itself()
        new = self.emptied()
        if not self._hist.is_exact:
            new._hist = new._hist.binned()
        return new

    def _check_mergeable(self, other: Any) -> None:
        if not isinstance(other, ScoreAccumulator):
            raise TypeError(f"can only merge a ScoreAccumulator with another, got {type(other).__name__}")
        for name in ("bins", "exact_up_to"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                raise ValueError(f"cannot merge accumulators whose {name} differ: {mine!r} and {theirs!r}")

    def _merge_in(self, other: ScoreAccumulator, sign: int) -> None:
        other._flush()
        self._flush()
        if sign > 0:
            combined = self._moments.combine_finite(other._moments, "the merged scores")
            self._hist.merge_in(other._hist)
            self._n += other._n
            self._moments = combined
            self._min, self._max = min(self._min, other._min), max(self._max, other._max)
            return
        if other._n > self._n:
            raise ValueError(f"cannot take out {other._n} scores from {self._n}: the result would be negative")
        self._hist.merge_in(other._hist, -1)  # checks the counts before anything changes
        self._n -= other._n
        self._remove_moments(other._moments)

    def _scale_in(self, factor: float) -> None:
        self._flush()
        self._hist.scale_in(factor)
        self._moments = self._moments.scaled(factor)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ScoreAccumulator):
            return NotImplemented
        if self.bins != other.bins or self.exact_up_to != other.exact_up_to:
            return False
        self._flush()
        other._flush()
        mine = (self._n, self._moments, self._min, self._max)
        return mine == (other._n, other._moments, other._min, other._max) and self._hist.same(other._hist)

    __hash__ = None  # type: ignore[assignment]

    # -- state --------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        """The state: bins, budget, count, moments, range and the scores' counts.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.ScoreAccumulator()
        >>> acc.update_many([0.2, 0.2, 0.7])
        >>> acc.to_state()["histogram"]["values"].tolist(), acc.to_state()["histogram"]["neg"].tolist()
        ([0.2, 0.7], [2, 1])
        >>> se.ScoreAccumulator.from_state(acc.to_state()) == acc
        True
        """
        self._flush()
        return {
            "bins": self.bins.to_dict(),
            "exact_up_to": self.exact_up_to,
            "n": self._n,
            "moments": self._moments.to_list(),
            "range": [self._min, self._max],
            "weighted": self._hist.is_weighted,
            "histogram": self._hist.to_state(),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> ScoreAccumulator:
        """The accumulator of a :meth:`to_state` mapping; ``FormatError`` if anything in it is inconsistent."""
        d = dict(state)
        require_fields(d, "state", {"bins", "exact_up_to", "n", "moments", "range", "weighted", "histogram"})
        exact_up_to, n, weighted = d["exact_up_to"], d["n"], d["weighted"]
        if exact_up_to is not None and (type(exact_up_to) is not int or exact_up_to < 0):
            raise FormatError(f"exact_up_to must be a whole number >= 0 or null, got {exact_up_to!r}")
        if isinstance(n, np.integer):
            n = int(n)
        if type(n) is not int or n < 0 or not isinstance(weighted, bool):
            raise FormatError(f"n must be a whole number >= 0 and weighted a boolean, got {n!r} and {weighted!r}")
        moments = Moments.from_list("moments", d["moments"])
        weight = moments.weight
        r = d["range"]
        if not isinstance(r, (list, tuple)) or len(r) != 2:
            raise FormatError("range must be [min, max]")
        low, high = (decode_float(f"range[{i}]", v) for i, v in enumerate(r))
        if n and not (math.isfinite(low) and math.isfinite(high) and low <= high):
            raise FormatError(f"range must be a finite [min, max], got {r!r}")
        acc = cls(bins=decode_bins(d["bins"]), exact_up_to=exact_up_to)
        acc._hist.load("histogram", d["histogram"], weighted)
        total = acc._hist.total()
        if not math.isclose(float(total), weight, rel_tol=1e-9, abs_tol=1e-300) or (not weighted and total != n):
            raise FormatError(f"the histogram counts {total!r}, the moments weigh {weight!r} and n is {n}")
        acc._n, acc._moments = n, moments
        acc._min, acc._max = (low, high) if n else (math.inf, -math.inf)
        return acc

    def __repr__(self) -> str:
        return f"ScoreAccumulator(bins={self.bins!r}, exact_up_to={self.exact_up_to!r}, n={self.n})"
