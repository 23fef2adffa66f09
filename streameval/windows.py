"""Windows over accumulators: the last N events, a time window of panes, exponential decay.

Each wrapper behaves like an accumulator: ``update``, ``update_many``, ``get``
and, where the result is well defined, ``merge``. ``Monitor`` records a
report every k events or every t units of event time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from ._validation import as_labels, as_scores, as_weights, check_real, check_same_length
from .binary import BinaryAccumulator
from .multiclass import MulticlassAccumulator
from .regression import Moments, RegressionAccumulator
from .state import LabelledCounts

__all__ = ["Decayed", "Monitor", "Sliding", "TimeWindow"]

Factory = Callable[[], Any]


def _positive(name: str, value: Any) -> float:
    v = check_real(name, value, finite=True)
    if v <= 0:
        raise ValueError(f"{name} must be positive, got {value!r}")
    return v


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value!r}")
    return int(value)


def _make(factory: Factory) -> Any:
    if not callable(factory):
        raise TypeError(f"factory must be a callable that returns an empty accumulator, got {factory!r}")
    acc = factory()
    if not hasattr(acc, "merge") or not hasattr(acc, "get"):
        raise TypeError(f"factory must return an accumulator, got {type(acc).__name__}")
    return acc


# -- Sliding ---------------------------------------------------------------------
class Sliding:
    """Exactly the last ``size`` events of a binary stream.

    Keeps each event's labelled bin code (a small integer) in a ring, and its
    weight when weights are used, so that the oldest event is removed exactly
    when a new one arrives: memory is O(size) integers, not raw scores.

    Parameters
    ----------
    factory : callable
        Returns an empty :class:`BinaryAccumulator` (its bins, threshold and
        labels are used).
    size : int
        Number of events in the window.

    Examples
    --------
    >>> import streameval as se
    >>> win = se.Sliding(se.BinaryAccumulator, size=3)
    >>> win.update_many([1, 0, 1, 1, 0], [0.9, 0.1, 0.2, 0.8, 0.7])
    >>> r = win.get()
    >>> r.n, r.tp, r.fp, r.fn
    (3, 1, 1, 1)
    """

    def __init__(self, factory: Factory, size: int) -> None:
        acc = _make(factory)
        if not isinstance(acc, BinaryAccumulator):
            raise TypeError(
                f"Sliding supports BinaryAccumulator, got {type(acc).__name__}; "
                "for other kinds use TimeWindow (panes) or Decayed"
            )
        self.size = _count("size", size)
        self._acc = acc
        self._events = LabelledCounts(acc._counts.n_codes)  # events per code, to zero emptied weights exactly
        self._codes = np.zeros(self.size, dtype=np.int32)
        self._weights: np.ndarray | None = None
        self._above = np.zeros(self.size, dtype=np.bool_)
        self._head = 0  # where the next event goes
        self._filled = 0

    @property
    def n(self) -> int:
        """Events in the window."""
        return self._filled

    def update(self, y: Any, score: float, w: float = 1.0) -> None:
        """Add one event; the oldest leaves once the window is full."""
        self.update_many([y], [check_real("score", score)], [check_real("w", w, finite=True, nonnegative=True)])

    def update_many(self, y: npt.ArrayLike, scores: npt.ArrayLike, w: npt.ArrayLike | float | None = None) -> None:
        """Add many events in order; all of them or, on bad input, none."""
        acc = self._acc
        x = as_scores("scores", scores)
        is_pos = as_labels("y", y, acc.pos_label, acc.neg_label)
        check_same_length(("y", is_pos), ("scores", x))
        weights = as_weights("w", w, x.size)
        if x.size == 0:
            return
        if x.size > self.size:  # only the last `size` events can stay
            x, is_pos = x[-self.size :], is_pos[-self.size :]
            weights = None if weights is None else weights[-self.size :]
        codes = acc.bins.labelled_codes(x, is_pos)
        above = np.zeros(x.size, dtype=np.bool_)
        if not acc._t_is_edge:
            above = np.isin(codes, acc._t_codes) & (x >= acc.threshold)
        if weights is not None and self._weights is None:
            self._weights = np.ones(self.size)
        m = x.size
        evict = max(0, self._filled + m - self.size)
        old = (self._head - self._filled + np.arange(evict)) % self.size  # ring slots of the oldest events
        self._apply(self._codes[old].astype(np.int64), self._slot_weights(old), self._above[old], sign=-1)
        self._apply(codes, weights, above, sign=+1)
        slots = (self._head + np.arange(m)) % self.size
        self._codes[slots] = codes
        self._above[slots] = above
        if self._weights is not None:
            self._weights[slots] = 1.0 if weights is None else weights
        self._head = int((self._head + m) % self.size)
        self._filled = min(self.size, self._filled + m)

    def _slot_weights(self, slots: np.ndarray) -> np.ndarray | None:
        return None if self._weights is None else self._weights[slots]

    def _apply(self, codes: np.ndarray, weights: np.ndarray | None, above: np.ndarray, sign: int) -> None:
        if codes.size == 0:
            return
        acc = self._acc
        state = acc._counts
        tally = state.tally(state.flat_index(codes.copy()), weights, None)
        events = self._events.tally(self._events.flat_index(codes.copy()), None, None)
        state.apply(sign * tally, weights is not None)
        self._events.apply(sign * events, False)
        if sign < 0 and state.is_weighted:  # no rounding residue where no event is left
            left = np.unique(codes)
            empty = left[self._events._counts[self._events.flat_index(left.copy())] == 0]
            state._counts[state.flat_index(empty.copy())] = 0.0
        if above.any():
            pos = (codes >= acc.bins.n_codes)[above]
            wt = np.ones(int(above.sum())) if weights is None else weights[above]
            delta = np.array([wt[~pos].sum(), wt[pos].sum()])
            if state.is_weighted:
                acc._above = acc._above.astype(np.float64) + sign * delta
            else:
                acc._above = acc._above + sign * delta.astype(np.int64)
        elif state.is_weighted and acc._above.dtype != np.float64:
            acc._above = acc._above.astype(np.float64)

    def get(self) -> Any:
        """The report of the events in the window."""
        return self._acc.get()

    def merge(self, other: Any) -> Any:
        """Not defined: "the last N events" of two streams has no order to follow."""
        raise TypeError("Sliding windows cannot be merged: the last N events of two streams are not defined")

    __add__ = merge


# -- TimeWindow ------------------------------------------------------------------
class TimeWindow:
    """The events of the last ``width`` units of event time, as a ring of panes.

    Time is cut into panes of ``width / panes``; the window is the sum of the
    ``panes`` most recent panes up to the latest event time seen (so it spans
    between ``width - width / panes`` and ``width``). Events already older than
    the window when they arrive are counted in ``n_late`` and left out.
    Windows with the same pane grid merge pane by pane (shards of one stream).

    Parameters
    ----------
    factory : callable
        Returns an empty accumulator of any kind.
    width : float
        Window length in the units of the event times.
    panes : int, default 10
        Panes per window.

    Examples
    --------
    >>> import streameval as se
    >>> win = se.TimeWindow(se.BinaryAccumulator, width=10.0, panes=5)
    >>> win.update_many([1, 0, 1, 0], [0.9, 0.2, 0.4, 0.6], t=[0.0, 3.0, 11.0, 12.5])
    >>> win.get().n  # panes of width 2: the window holds panes 2..6, times 4 to 14
    2
    >>> win.update(1, 0.7, t=1.0)  # arrives too late for the window
    >>> win.get().n, win.n_late
    (2, 1)
    """

    def __init__(self, factory: Factory, width: float, panes: int = 10) -> None:
        self._factory = factory
        self._empty = _make(factory)
        self.width = _positive("width", width)
        self.panes = _count("panes", panes)
        self.pane_width = self.width / self.panes
        self._ring: dict[int, Any] = {}
        self._latest: int | None = None
        self.n_late = 0

    def _pane_of(self, t: np.ndarray) -> np.ndarray:
        return np.floor(t / self.pane_width).astype(np.int64)

    def _times(self, t: Any, n: int) -> np.ndarray:
        times = np.atleast_1d(as_scores("t", np.atleast_1d(t)))
        if times.size != n:
            raise ValueError(f"t must have one time per event ({n}), got {times.size}")
        bad = np.flatnonzero(~np.isfinite(times))
        if bad.size:
            raise ValueError(f"t must be finite, got {times[bad[0]]!r} at index {bad[0]}")
        return times

    def update(self, *args: Any, t: float, **kwargs: Any) -> None:
        """Count one event at time ``t`` (the other arguments go to the accumulator)."""
        times = self._times([t], 1)
        pane = int(self._pane_of(times)[0])
        fresh = self._factory()
        fresh.update(*args, **kwargs)  # checks the event before anything changes
        self._add({pane: fresh})

    def update_many(self, *args: Any, t: npt.ArrayLike, **kwargs: Any) -> None:
        """Count many events with times ``t``; all of them or, on bad input, none."""
        n = len(args[0]) if args else 0
        times = self._times(t, n)
        panes = self._pane_of(times)
        fresh: dict[int, Any] = {}
        for p in np.unique(panes):
            sel = np.flatnonzero(panes == p)
            part = [_take(a, sel) for a in args]
            extra = {k: (_take(v, sel) if np.ndim(v) else v) for k, v in kwargs.items()}
            acc = self._factory()
            acc.update_many(*part, **extra)
            fresh[int(p)] = acc
        self._add(fresh)

    def _add(self, fresh: dict[int, Any]) -> None:
        if not fresh:
            return
        latest = max(fresh) if self._latest is None else max(self._latest, max(fresh))
        oldest = latest - self.panes + 1
        # late: already outside the window when it arrived (events that leave the window because
        # later events of the same batch advance the time are not late, just expired)
        before = -math.inf if self._latest is None else self._latest - self.panes + 1
        for p, acc in fresh.items():
            if p < before:
                self.n_late += int(_events(acc))
            elif p >= oldest:
                if p in self._ring:
                    self._ring[p]._check_mergeable(acc)
                    self._ring[p]._merge_in(acc)  # the window owns its panes: add in place
                else:
                    self._ring[p] = acc
        self._latest = latest
        for p in [p for p in self._ring if p < oldest]:
            del self._ring[p]

    def get(self) -> Any:
        """The report of the window's events."""
        if not self._ring:
            return self._factory().get()
        return type(self._empty).merge_all(list(self._ring.values())).get()

    def merge(self, other: TimeWindow) -> TimeWindow:
        """Pane-by-pane sum of two windows with the same grid (shards of one stream)."""
        if not isinstance(other, TimeWindow):
            raise TypeError(f"can only merge a TimeWindow with another, got {type(other).__name__}")
        if (self.width, self.panes) != (other.width, other.panes):
            raise ValueError(
                f"cannot merge windows with different pane grids: width {self.width!r} / {self.panes} panes "
                f"and width {other.width!r} / {other.panes} panes"
            )
        new = TimeWindow(self._factory, self.width, self.panes)
        new._ring = {p: acc.copy() for p, acc in self._ring.items()}
        new._latest = self._latest
        new.n_late = self.n_late + other.n_late
        new._add({p: acc.copy() for p, acc in other._ring.items()})
        return new

    __add__ = merge


def _take(values: Any, sel: np.ndarray) -> Any:
    """The selected events of an argument, keeping lists as lists (mappings stay mappings)."""
    if isinstance(values, (list, tuple)):
        return [values[i] for i in sel.tolist()]
    return np.asarray(values)[sel]


def _events(acc: Any) -> float:
    if isinstance(acc, BinaryAccumulator):
        return acc.n
    rep = acc.get()
    return rep.n


# -- Decayed ---------------------------------------------------------------------
def _scale(acc: Any, factor: float) -> None:
    """Multiply every count (weight) of an accumulator by ``factor``, in place."""
    if isinstance(acc, BinaryAccumulator):
        acc._flush()
        acc._counts._to_float()
        acc._counts._counts *= factor
        acc._above = acc._above.astype(np.float64) * factor
    elif isinstance(acc, MulticlassAccumulator):
        acc._flush()
        acc._cm = acc._cm.astype(np.float64) * factor
        for one in acc._ovr:
            _scale(one, factor)
    elif isinstance(acc, RegressionAccumulator):
        acc._flush()
        acc._y = Moments(acc._y.weight * factor, acc._y.mean, acc._y.m2 * factor)
        acc._e = Moments(acc._e.weight * factor, acc._e.mean, acc._e.m2 * factor)
        acc._sum_abs *= factor
        acc._sum_ape *= factor
        acc._hist._to_float()
        acc._hist._counts *= factor
    else:
        raise TypeError(f"cannot decay a {type(acc).__name__}")


class Decayed:
    """Exponentially decayed counts: an event ``half_life`` old weighs one half.

    Age is measured in events (``by="events"``, the default) or in event
    time (``by="time"``: pass ``t=`` to every update). Internally an event is
    stored with weight ``w * 2**((t - t_ref) / half_life)`` and the state is
    rescaled when that exponent grows large, so counts stay finite and
    accurate over any number of events.

    Examples
    --------
    >>> import streameval as se
    >>> dec = se.Decayed(se.BinaryAccumulator, half_life=2)
    >>> dec.update_many([1, 0, 1], [0.9, 0.4, 0.8])
    >>> round(dec.get().n, 6)  # weights 0.5, 0.7071, 1
    2.207107
    """

    _RESCALE_AT = 500.0  # rescale when stored weights reach 2**500

    def __init__(self, factory: Factory, half_life: float, by: str = "events") -> None:
        self._factory = factory
        self._acc = _make(factory)
        _scale(self._acc, 1.0)  # refuses kinds that cannot decay
        self.half_life = _positive("half_life", half_life)
        if by not in ("events", "time"):
            raise ValueError(f"by must be 'events' or 'time', got {by!r}")
        self.by = by
        self._t_ref = 0.0
        self._latest = -math.inf
        self._clock = 0  # events seen, the time when by="events"

    def _times(self, t: Any, n: int) -> np.ndarray:
        if self.by == "events":
            if t is not None:
                raise ValueError("t is only for by='time'; with by='events' age is counted in events")
            return self._clock + np.arange(n, dtype=np.float64)
        if t is None:
            raise ValueError("t is required with by='time'")
        times = np.atleast_1d(as_scores("t", np.atleast_1d(t)))
        if times.size != n:
            raise ValueError(f"t must have one time per event ({n}), got {times.size}")
        if not np.all(np.isfinite(times)):
            raise ValueError("t must be finite")
        return times

    def update(self, *args: Any, t: float | None = None, w: float = 1.0, **kwargs: Any) -> None:
        """Count one event (at time ``t`` when ``by="time"``)."""
        self.update_many(*([a] for a in args), t=None if t is None else [t], w=[w], **kwargs)

    def update_many(self, *args: Any, t: Any = None, w: Any = None, **kwargs: Any) -> None:
        """Count many events; all of them or, on bad input, none."""
        n = len(args[0]) if args else 0
        times = self._times(t, n)
        weights = as_weights("w", w, n)
        base = np.ones(n) if weights is None else weights
        top = max(self._latest, float(times.max())) if n else self._latest
        t_ref = self._t_ref
        if n and (top - t_ref) / self.half_life > self._RESCALE_AT:
            t_ref = top  # rescale the stored state to this reference after the update checks pass
        decayed = base * np.exp2((times - t_ref) / self.half_life)
        fresh = self._factory()
        fresh.update_many(*args, w=decayed, **kwargs)  # checks everything before the state changes
        if t_ref != self._t_ref:
            _scale(self._acc, 2.0 ** ((self._t_ref - t_ref) / self.half_life))
            self._t_ref = t_ref
        self._acc._merge_in(fresh)  # in place: no copy of the state per update
        self._latest = top
        self._clock += n

    def get(self) -> Any:
        """The report with weights as seen at the latest event (that event weighs its own weight)."""
        view = self._acc.copy()
        if math.isfinite(self._latest):
            _scale(view, 2.0 ** ((self._t_ref - self._latest) / self.half_life))
        return view.get()

    def merge(self, other: Decayed) -> Decayed:
        """Both decayed streams as one (same half-life and clock kind)."""
        if not isinstance(other, Decayed):
            raise TypeError(f"can only merge a Decayed with another, got {type(other).__name__}")
        if (self.half_life, self.by) != (other.half_life, other.by):
            raise ValueError("cannot merge decayed accumulators with different half_life or by")
        new = Decayed(self._factory, self.half_life, self.by)
        ref = max(self._t_ref, other._t_ref)
        a, b = self._acc.copy(), other._acc.copy()
        _scale(a, 2.0 ** ((self._t_ref - ref) / self.half_life))
        _scale(b, 2.0 ** ((other._t_ref - ref) / self.half_life))
        new._acc = a.merge(b)
        new._t_ref = ref
        new._latest = max(self._latest, other._latest)
        new._clock = max(self._clock, other._clock)
        return new

    __add__ = merge


# -- Monitor ---------------------------------------------------------------------
class Monitor:
    """Records an accumulator's report every ``every`` events or units of event time.

    Parameters
    ----------
    accumulator : accumulator or window
    every : int or float
        Events between records (``by="events"``) or event time between them
        (``by="time"``: pass ``t=`` to updates; it is also passed on to a
        time-based window).
    by : "events" or "time"

    A batch from ``update_many`` counts as one step: the record is taken after
    the batch, at the last boundary it crossed.

    Examples
    --------
    >>> import streameval as se
    >>> mon = se.Monitor(se.BinaryAccumulator(), every=2)
    >>> for y, s in [(1, 0.9), (0, 0.1), (1, 0.3), (0, 0.6)]:
    ...     mon.update(y, s)
    >>> [(r["time"], r["n"], r["auc"]) for r in mon.to_records()]
    [(2, 2, 1.0), (4, 4, 0.75)]
    """

    def __init__(self, accumulator: Any, every: float, by: str = "events") -> None:
        if not hasattr(accumulator, "get"):
            raise TypeError(f"accumulator must be an accumulator or window, got {type(accumulator).__name__}")
        if by not in ("events", "time"):
            raise ValueError(f"by must be 'events' or 'time', got {by!r}")
        self.by = by
        self.every = _count("every", every) if by == "events" else _positive("every", every)
        self.accumulator = accumulator
        self._events = 0
        self._next: float | None = None
        self._records: list[dict[str, Any]] = []

    def _pass_time(self) -> bool:
        return isinstance(self.accumulator, TimeWindow) or (
            isinstance(self.accumulator, Decayed) and self.accumulator.by == "time"
        )

    def update(self, *args: Any, t: float | None = None, **kwargs: Any) -> None:
        """Update the accumulator with one event, then record if a boundary was reached."""
        if self.by == "time" and t is None:
            raise ValueError("t is required when the monitor records by time")
        if self._pass_time():
            kwargs["t"] = t
        self.accumulator.update(*args, **kwargs)
        self._after(1, None if t is None else (float(t), float(t)))

    def update_many(self, *args: Any, t: Any = None, **kwargs: Any) -> None:
        """Update the accumulator with a batch, then record if a boundary was crossed."""
        if self.by == "time" and t is None:
            raise ValueError("t is required when the monitor records by time")
        if self._pass_time():
            kwargs["t"] = t
        self.accumulator.update_many(*args, **kwargs)
        n = len(args[0]) if args else 0
        times = None if t is None else np.asarray(t, dtype=np.float64)
        self._after(n, None if times is None or times.size == 0 else (float(times.min()), float(times.max())))

    def _after(self, n: int, span: tuple[float, float] | None) -> None:
        before = self._events
        self._events += n
        if self.by == "events":
            if self._events // self.every > before // self.every:
                self._record(self._events // self.every * self.every)
            return
        if span is None:
            return
        first, t = span
        if self._next is None:
            self._next = (math.floor(first / self.every) + 1) * self.every
        if t >= self._next:
            boundary = math.floor(t / self.every) * self.every
            self._record(boundary)
            self._next = boundary + self.every

    def _record(self, time: float) -> None:
        report = self.accumulator.get()
        row: dict[str, Any] = {"time": time}
        row.update(report.to_dict())
        self._records.append(row)

    def record_now(self, time: float | None = None) -> None:
        """Take a record now (for instance at the end of a stream)."""
        self._record(self._events if time is None else time)

    def to_records(self) -> list[dict[str, Any]]:
        """The recorded rows: ``time`` and every scalar metric."""
        return [dict(r) for r in self._records]

    def to_pandas(self) -> Any:
        """The records as a pandas DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_pandas needs pandas: pip install pandas; to_records() needs nothing") from None
        return pd.DataFrame.from_records(self.to_records())

    def __iter__(self) -> Iterable[dict[str, Any]]:
        return iter(self.to_records())
