"""The per-event path of :class:`~streameval.BinaryAccumulator`, compiled when possible.

``update(y, score)`` stores a checked event in a buffer, and a full buffer is
counted as one batch by the accumulator's ``_flush``. The compiled
``streameval._speedups.EventBuffer`` does this in C; :class:`PyEventBuffer`
below is its pure Python twin, used when the extension was not built (no C
compiler at install) or when the environment variable
``STREAMEVAL_PURE_PYTHON=1`` asks for it. Both accept exactly the same input
(anything unusual goes to the accumulator's ``_update_slow``, which checks it
and explains a refusal) and give identical counts.

The same switch selects the compiled batch kernels, one per binning scheme
(``Bins.compiled_kernel()`` gives ``None`` without the extension).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable
from typing import Any

import numpy as np

from ._compiled import SPEEDUPS

__all__ = [
    "COMPILED",
    "FLUSH_EVERY",
    "LARGE_VALUE",
    "LARGE_WEIGHT",
    "SINGLE_EVENTS_UP_TO",
    "CellTally",
    "ClassRows",
    "DecayRouter",
    "EventBuffer",
    "EventCounter",
    "EventLog",
    "FloatEvents",
    "PaneRouter",
    "PyCellTally",
    "PyClassRows",
    "PyDecayRouter",
    "PyEventBuffer",
    "PyEventCounter",
    "PyEventLog",
    "PyFloatEvents",
    "PyPaneRouter",
    "PySegmentRouter",
    "SegmentRouter",
    "float_columns",
    "is_small_batch",
    "log_columns",
    "small_float_arrays",
]

FLUSH_EVERY = 4096  # per-event updates are counted in batches of this size
# a per-event weight above this is counted at once against the total weight (the compiled buffers hand it to the
# checked path): a failed update then changes nothing, where a total that overflowed at the next filing would stop
# every read; FLUSH_EVERY weights below it sum to less than 1e294
LARGE_WEIGHT = 1e290
# the same for a value of a regression's or a score accumulator's event beyond this, refused at once when the
# moments or sums would overflow; FLUSH_EVERY values below it square to less than 1e304
LARGE_VALUE = 1e150
# a weighted event is stored while the stored weights, it included, sum to at most this (the buffer's room, lowered
# by its owner where what it counted is within this of the largest float): past it the owner files them at once
WEIGHTED_ROOM = 1e300
_TICK = 256  # the Python twin checks its buffer every _TICK events (a small int stays cached)
_UNIT = 1.0  # the default weight: identity with it selects the fast path


SINGLE_EVENTS_UP_TO = 1024  # a batch of plain events up to this size is stored as per-event updates


def small_float_arrays(*values: Any) -> bool:
    """Whether ``values`` are 1-D, C-contiguous float64 arrays of one length of at most ``SINGLE_EVENTS_UP_TO``:
    a batch the per-event buffer may store whole (``push_many``), if its values are plain.

    A batch's checks and calls cost 11 to 105 us, whatever its size; stored, its events are counted with the
    per-event updates (``BinaryAccumulator.update_many`` of 10 events: 1.2 to 1.8 against 11 to 14 us, of 100:
    2.0 to 3.0 against 11 to 16, counting included). The limit: the buffer's own call, counting included, took
    9.6 us against the batch path's 25 at 1,000 events, and about as long as it at 3,000.
    """
    size = -1
    for v in values:
        if type(v) is not np.ndarray or v.dtype != np.float64 or v.ndim != 1 or not v.flags.c_contiguous:
            return False
        if size not in (-1, v.size):
            return False
        size = v.size
    return is_small_batch(size)


def is_small_batch(n: int) -> bool:
    """Whether a batch of ``n`` events is small enough for the per-event buffer to store it whole."""
    return n <= SINGLE_EVENTS_UP_TO


class PyEventBuffer:
    """Pure Python twin of the compiled per-event buffer.

    A class using it provides ``_flush()`` (count and empty the buffer) and
    ``_update_slow(y, score, w)`` (check and store anything but a plain
    unit-weight event).
    """

    _buf_pos: array[float]
    _buf_neg: array[float]
    _route: dict[Any, Callable[[float], None]]
    _room: int
    _wscores: array[float]
    _wlabels: array[int]
    _wweights: array[float]
    _wtotal: float
    _weighted_room: float  # the stored weights' room (the compiled update stores a weighted event within it)

    def _set_labels(self, pos_label: Any, neg_label: Any) -> None:
        """Set the two labels and empty the buffer."""
        self._buf_pos = array("d")
        self._buf_neg = array("d")
        self._route = {neg_label: self._buf_neg.append, pos_label: self._buf_pos.append}
        self._room = _TICK
        self._drop_weighted()
        self._weighted_room = WEIGHTED_ROOM

    # events of a weight other than 1, in their order: stored by the checked path (the compiled twin stores plain
    # ones itself), filed by the owner
    def _push_weighted(self, is_pos: bool, score: float, w: float) -> None:
        """Store one checked event of a weight other than 1."""
        if len(self._wscores) >= FLUSH_EVERY:
            raise RuntimeError("the buffer of weighted events is full: file it first")
        self._wscores.append(score)
        self._wlabels.append(bool(is_pos))
        self._wweights.append(w)
        self._wtotal += w

    def _push_weighted_many(self, labels: np.ndarray, width: int, scores: np.ndarray, weights: np.ndarray) -> int:
        """Check a small weighted batch (integer or bool labels, float64 scores and weights) and store it whole:
        1 stored; 0 refused (a label other than 0 and 1, a NaN score, a weight below 0, NaN or infinite, or their
        sum past the largest float); 2 they do not fit beside those stored; 3 every weight is 1. Nothing is stored
        but for 1 (the compiled buffer's checks, in its order)."""
        sizes = (labels.size, weights.size)
        if labels.dtype.itemsize != width or sizes != (scores.size, scores.size) or scores.size > FLUSH_EVERY:
            raise ValueError("_push_weighted_many: inconsistent arguments")
        status, total = 3, 0.0
        for w in weights.tolist():
            if not 0.0 <= w < math.inf:  # NaN fails too
                return 0
            if w != 1.0:
                status = 1
            total += w  # in order, as the events' weights are summed when stored
        if status == 3:
            return 3
        unsigned = labels.view(f"u{width}") if labels.dtype.kind != "b" else labels.view(np.uint8)
        if (unsigned > 1).any() or np.isnan(scores).any() or not math.isfinite(total):
            return 0
        if len(self._wscores) + scores.size > FLUSH_EVERY or not math.isfinite(self._wtotal + total):
            return 2
        for is_pos, score, w in zip((unsigned != 0).tolist(), scores.tolist(), weights.tolist(), strict=True):
            self._push_weighted(is_pos, score, w)
        return 1

    def _drop_last_weighted(self, m: int) -> None:
        """Take the last ``m`` weighted events back (a refused filing), their weights out of the sum one by one."""
        for _ in range(m):
            self._wscores.pop()
            self._wlabels.pop()
            self._wtotal -= self._wweights.pop()

    def _weighted_events(self) -> tuple[bytes, bytes, bytes]:
        """A copy of the stored weighted events: (scores float64 bytes, labels 0/1 bytes, weights float64 bytes)."""
        return self._wscores.tobytes(), self._wlabels.tobytes(), self._wweights.tobytes()

    def _drop_weighted(self) -> None:
        """Empty the weighted events (after they were counted)."""
        self._wscores, self._wlabels, self._wweights = array("d"), array("B"), array("d")
        self._wtotal = 0.0

    @property
    def _n_weighted(self) -> int:
        return len(self._wscores)

    @property
    def _weighted_total(self) -> float:
        return self._wtotal

    @property
    def _weighted_nbytes(self) -> int:
        return sum(b.buffer_info()[1] * b.itemsize for b in (self._wscores, self._wlabels, self._wweights))

    def update(self, y: Any, score: float, w: float = _UNIT) -> None:
        """Count one event.

        Parameters
        ----------
        y : label
            ``pos_label`` or ``neg_label``.
        score : float
            Higher means more likely positive; any real number but NaN.
        w : float, default 1.0
            Weight, finite and >= 0.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator()
        >>> acc.update(1, 0.8)
        >>> acc.update(0, 0.3, w=2.0)
        >>> acc.get().negatives
        2.0
        """
        try:
            if w is _UNIT and type(score) is float and score == score:
                self._route[y](score)
                self._room -= 1
                if self._room:
                    return
                self._tick()
                return
        except (KeyError, TypeError):  # other labels (or unhashable ones) take the checked path
            pass
        self._update_slow(y, score, w)  # type: ignore[attr-defined]

    update.__qualname__ = "BinaryAccumulator.update"  # as the compiled path's errors say

    def _push_unit(self, is_pos: bool, score: float) -> None:
        """Store one checked event of weight 1."""
        (self._buf_pos if is_pos else self._buf_neg).append(score)
        self._room -= 1
        if not self._room:
            self._tick()

    def _push_many(self, labels: np.ndarray, width: int, scores: np.ndarray) -> bool:
        """Store a small batch of unit-weight events (0/1 labels of ``width`` bytes, float64 scores) as per-event
        updates, if every one is plain and they fit in the buffer (after a flush of the events held when they
        do not fit beside them); whether they were stored (else nothing changed)."""
        lab = np.ascontiguousarray(labels).view(f"u{width}")
        if scores.size > FLUSH_EVERY or lab.size != scores.size or (lab > 1).any() or np.isnan(scores).any():
            return False
        if self._n_unit + scores.size > FLUSH_EVERY:
            self._flush()  # type: ignore[attr-defined]
            if self._n_unit + scores.size > FLUSH_EVERY:
                return False
        is_pos = lab == 1
        self._buf_pos.extend(scores[is_pos].tolist())
        self._buf_neg.extend(scores[~is_pos].tolist())
        self._room = min(self._room, max(1, FLUSH_EVERY - self._n_unit))  # a full buffer is filed at the next event
        return True

    def _tick(self) -> None:
        if self._n_unit >= FLUSH_EVERY:
            self._flush()  # type: ignore[attr-defined]
        self._room = _TICK

    @property
    def _n_unit(self) -> int:
        return len(self._buf_pos) + len(self._buf_neg)

    @property
    def _unit_nbytes(self) -> int:
        return sum(b.buffer_info()[1] * b.itemsize for b in (self._buf_pos, self._buf_neg))

    def _unit_events(self) -> tuple[bytes, bytes]:
        """A copy of the stored events: (scores as float64 bytes, labels as uint8 bytes)."""
        n_pos, n_neg = len(self._buf_pos), len(self._buf_neg)
        return self._buf_pos.tobytes() + self._buf_neg.tobytes(), b"\x01" * n_pos + b"\x00" * n_neg

    def _drop_unit(self) -> None:
        """Empty the buffer (after its events were counted)."""
        del self._buf_pos[:]
        del self._buf_neg[:]
        self._room = _TICK


class PyFloatEvents:
    """Pure Python twin of the compiled per-event buffer of float columns.

    ``update(*values, w=1.0)`` hands every call to ``slow`` (the owner's
    checked path), which checks the event and stores it with ``push``; the
    compiled twin stores plain finite floats itself and calls ``slow`` for
    anything else. ``on_full()`` is called when ``FLUSH_EVERY`` events are held.

    Examples
    --------
    >>> from streameval._events import PyFloatEvents, float_columns
    >>> buf = PyFloatEvents(2, lambda: None, lambda *a, w=1.0: buf.push(*map(float, a), float(w)))
    >>> buf.update(1.0, 2.0), buf.update(3, 4, w=0.5)
    (None, None)
    >>> columns, weights = float_columns(buf)
    >>> [c.tolist() for c in columns], weights.tolist(), len(buf)
    ([[1.0, 3.0], [2.0, 4.0]], [1.0, 0.5], 2)
    """

    __slots__ = ("_on_full", "_slow", "_values", "_weights", "weighted", "width")

    def __init__(self, width: int, on_full: Callable[[], None], slow: Callable[..., None]) -> None:
        self.width, self._on_full, self._slow = width, on_full, slow
        self.clear()

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Count one event: the owner's checked path stores it."""
        self._slow(*args, **kwargs)

    def push(self, *values_and_weight: float) -> None:
        """Store one checked event: its values, then its weight."""
        if len(self._weights) >= FLUSH_EVERY:  # only if a flush failed before
            self._on_full()
        *values, w = values_and_weight
        self._values.extend(values)
        self._weights.append(w)
        if w != 1.0:
            self.weighted = True
        if len(self._weights) == FLUSH_EVERY:
            self._on_full()

    def push_many(self, *columns: np.ndarray) -> bool:
        """Store a small batch of events (``width`` float64 columns of one length, then optionally their float64
        weights) as per-event updates, if every value is finite and within ``LARGE_VALUE``, every weight in [0,
        ``LARGE_WEIGHT``] and they fit in the buffer (after a flush of the events held when they do not fit beside
        them); whether they were stored (else nothing changed)."""
        if len(columns) not in (self.width, self.width + 1):
            raise TypeError(f"push_many takes {self.width} columns, then optionally their weights")
        values, weights = columns[: self.width], (columns[self.width] if len(columns) > self.width else None)
        m = values[0].size
        if any(c.size != m for c in columns):
            raise ValueError("push_many: inconsistent arguments")
        if m > FLUSH_EVERY or not all(bool((np.abs(c) <= LARGE_VALUE).all()) for c in values):
            return False
        if weights is not None and not bool(((weights >= 0.0) & (weights <= LARGE_WEIGHT)).all()):
            return False
        if len(self._weights) + m > FLUSH_EVERY:
            self._on_full()
            if len(self._weights) + m > FLUSH_EVERY:
                return False
        self._values.extend(np.column_stack(values).ravel().tolist())
        if weights is None:
            self._weights.extend([1.0] * m)
        else:
            self._weights.extend(weights.tolist())
            self.weighted |= bool((weights != 1.0).any())
        return True

    def arrays(self) -> tuple[bytes, bytes | None]:
        """The values (float64 bytes, row by row) and the weights (``None`` when all are 1)."""
        return self._values.tobytes(), (self._weights.tobytes() if self.weighted else None)

    def clear(self) -> None:
        """Empty the buffer (once its events are counted)."""
        self._values = array("d")
        self._weights = array("d")
        self.weighted = False

    def __len__(self) -> int:
        return len(self._weights)


class PyClassRows:
    """Pure Python twin of the compiled per-event buffer of a MulticlassAccumulator.

    ``update(y, scores, w=1.0)`` hands every call to ``slow`` (the owner's
    checked path), which stores the checked event with ``push``; the compiled
    twin stores a known class with a dict of float scores of exactly the known
    classes itself (predicted class -1: found when the buffer is counted), and
    a known class with a known predicted class where the classes are given as
    ``set_classes(index, None)``.
    """

    __slots__ = ("_on_full", "_pred", "_scores", "_slow", "_weights", "_y", "weighted")

    def __init__(self, on_full: Callable[[], None], slow: Callable[..., None]) -> None:
        self._on_full, self._slow = on_full, slow
        self.clear()

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Count one event: the owner's checked path stores it."""
        self._slow(*args, **kwargs)

    def set_classes(self, index: Any, classes: Any) -> None:
        """The classes the compiled twin's fast path knows (nothing to do here)."""

    def push(self, y: int, pred: int, scores: tuple[float, ...], w: float) -> None:
        """Store one checked event."""
        if len(self._y) >= FLUSH_EVERY:  # only if a flush failed before
            self._on_full()
        self._y.append(y)
        self._pred.append(pred)
        self._scores.extend(scores)
        self._weights.append(w)
        if w != 1.0:
            self.weighted = True
        if len(self._y) == FLUSH_EVERY:
            self._on_full()

    def push_many(
        self, y: np.ndarray, pred: np.ndarray, scores: np.ndarray, k: int, weights: np.ndarray | None = None
    ) -> bool:
        """Store a small batch of checked events (int64 class and predicted class indices, ``k`` float64 scores
        each, float64 weights or ``None`` for weights of 1), if every weight is in [0, ``LARGE_WEIGHT``] (as
        ``update`` stores one event) and they fit in the buffer (after a flush of the events held when they do
        not fit beside them); whether they were."""
        m = y.size
        if weights is not None and weights.size != m:
            raise ValueError("push_many: inconsistent arguments")
        if m > FLUSH_EVERY or (weights is not None and not bool(((weights >= 0.0) & (weights <= LARGE_WEIGHT)).all())):
            return False
        if m and len(self._y) + m > FLUSH_EVERY:
            self._on_full()
            if len(self._y) + m > FLUSH_EVERY:
                return False
        self._y.extend(y.tolist())
        self._pred.extend(pred.tolist())
        self._scores.extend(np.asarray(scores, dtype=np.float64).reshape(-1).tolist())
        if weights is None:
            self._weights.extend([1.0] * m)
        else:
            self._weights.extend(weights.tolist())
            self.weighted |= bool((weights != 1.0).any())
        return True

    def arrays(self) -> tuple[bytes, bytes, bytes, bytes | None]:
        """(class indices, predicted indices, scores row by row, weights or ``None``) as bytes."""
        weights = self._weights.tobytes() if self.weighted else None
        return self._y.tobytes(), self._pred.tobytes(), self._scores.tobytes(), weights

    def clear(self) -> None:
        """Empty the buffer (once its events are counted)."""
        self._y, self._pred = array("q"), array("q")
        self._scores, self._weights = array("d"), array("d")
        self.weighted = False

    def __len__(self) -> int:
        return len(self._y)


class PyEventLog:
    """Pure Python twin of the compiled per-event log of a sliding window.

    ``update(*args, **kwargs)`` hands the event to ``on_odd``, which checks,
    counts and keeps it; the compiled twin counts a call of plain float, int,
    bool and str arguments (and dicts, with ``objects``) with ``count_one`` and
    keeps it in typed columns itself (``take()`` gives them), and hands only
    the others to ``on_odd``.
    ``on_full()`` is called when ``every`` events are pending.
    """

    __slots__ = ("_on_full", "_on_odd", "every", "pending", "typed")

    def __init__(
        self,
        count_one: Callable[..., Any],
        on_full: Callable[[], Any],
        on_odd: Callable[..., Any],
        every: int,
        objects: bool = False,
    ) -> None:
        # count_one and objects (dicts kept in columns too): only the compiled twin's
        self._on_full, self._on_odd, self.every = on_full, on_odd, every
        self.pending = 0
        self.typed = 0  # events in the typed run: none here

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Count one event and keep it (through ``on_odd``)."""
        self._on_odd(*args, **kwargs)
        self.pending += 1
        if self.pending >= self.every:
            self._on_full()

    def take(self) -> list[tuple[str, bytes]]:
        """The typed run (always empty here)."""
        return []

    def reset_pending(self) -> None:
        """Start counting pending events from 0."""
        self.pending = 0

    def keep_many(self, columns: tuple[Any, ...]) -> bool:
        """Keep a batch's events after the typed run, not counted (the compiled twin's): never here, where there
        is no typed run; the owner keeps the batch itself."""
        return False

    def drop_last(self, count: int) -> None:
        """Let the typed run's last ``count`` events go (none here)."""
        if count != 0:
            raise ValueError(f"drop_last: count must be in [0, 0], got {count}")

    def retarget(self, count_one: Callable[..., Any]) -> None:
        """Count the typed events with another update from now on (``on_odd`` counts every event here)."""

    def set_odd(self) -> None:
        """Every event goes to ``on_odd`` (as it always does here)."""


class PyEventCounter:
    """Pure Python twin of the compiled per-event counter of a monitor: every event goes to ``slow``.

    The compiled twin calls ``count_one(*args)`` itself,
    counts the event in ``events`` and calls ``on_due()`` when ``events``
    reaches ``due``; ``slow`` does the same in Python. With ``by_time`` or
    ``pass_time`` the events come with ``t=``: the compiled twin counts an
    event at a finite float or int time (before ``next_time`` by time, when
    records are due by time instead) with ``count_one(*args, t=float(t))``
    (``pass_time``) or ``count_one(*args)``, with its ``w=`` if it has one.
    """

    __slots__ = ("_slow", "due", "events", "next_time")

    def __init__(
        self,
        count_one: Callable[..., Any],
        on_due: Callable[[], Any],
        slow: Callable[..., Any],
        due: int,
        by_time: bool = False,
        pass_time: bool = False,
    ) -> None:
        self._slow, self.due, self.events, self.next_time = slow, due, 0, math.nan

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Count one event through the monitor's own path."""
        self._slow(*args, **kwargs)


class PyCellTally:
    """Pure Python twin of the compiled per-event path of a paired accumulator: every event goes to ``slow``.

    The compiled twin counts a plain unit-weight event (what the accumulator's ``_cell`` finds a cell for) in
    place in the table of whole counts set by ``target``; ``slow`` does the same in Python.
    """

    __slots__ = ("_slow",)

    def __init__(self, slow: Callable[..., Any], sides: dict[Any, int], threshold: float | None, float64: type) -> None:
        self._slow = slow

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Count one event through the accumulator's own path."""
        self._slow(*args, **kwargs)

    def target(self, table: Any) -> None:
        """The table of counts (the compiled twin counts into it)."""


class PyPaneRouter:
    """Pure Python twin of the compiled per-event router of a time window: every event goes to ``slow``."""

    __slots__ = ("_slow",)

    def __init__(self, slow: Callable[..., Any], pane_width: float) -> None:
        self._slow = slow

    def update(self, *args: Any, **kwargs: Any) -> Any:
        """Count one event through the window's own path."""
        return self._slow(*args, **kwargs)

    def point(self, pane: int, update: Callable[..., Any] | None) -> None:
        """The latest pane and its update (the compiled twin calls it directly)."""


def _finite_real(value: Any) -> float | None:
    """A float or an int (exactly those types) as a finite float, or ``None``: what the compiled routers take."""
    if type(value) is float:
        return value if -math.inf < value < math.inf else None
    if type(value) is int:
        try:
            as_float = float(value)
        except OverflowError:
            return None
        return as_float if -math.inf < as_float < math.inf else None
    return None


class PyDecayRouter:
    """Pure Python twin of the compiled per-event router of a window decayed by time.

    It keeps the window's clock (``t_ref``, ``latest``, ``events``). An
    event at a finite float or int time ``t`` with a finite float or int
    weight ``w >= 0`` (keywords, the only ones) that does not take the
    exponent ``(max(latest, t) - t_ref) / half_life`` past ``rescale_at`` goes
    to the state's update (``point``) with weight ``w * 2 ** ((t - t_ref) /
    half_life)`` when that is finite; any other to ``slow``.
    """

    __slots__ = ("_slow", "_target", "events", "half_life", "latest", "rescale_at", "t_ref")

    def __init__(self, slow: Callable[..., Any], half_life: float, rescale_at: float) -> None:
        self._slow: Callable[..., Any] = slow
        self._target: Callable[..., Any] | None = None
        self.half_life, self.rescale_at = float(half_life), float(rescale_at)
        self.t_ref, self.latest, self.events = 0.0, -math.inf, 0

    def update(self, *args: Any, **kwargs: Any) -> Any:
        """Count one event: straight to the state with its decayed weight, or through ``slow``."""
        if self._target is not None and len(args) < 8 and "t" in kwargs and len(kwargs) <= 2:
            t = _finite_real(kwargs["t"])
            w = 1.0 if len(kwargs) == 1 else _finite_real(kwargs.get("w"))
            if t is not None and w is not None and w >= 0.0:
                top = t if t > self.latest else self.latest
                if (top - self.t_ref) / self.half_life <= self.rescale_at:  # then 2 ** age is a float
                    weight = w * 2.0 ** ((t - self.t_ref) / self.half_life)
                    if weight < math.inf:
                        try:
                            result = self._target(*args, w=weight)
                        except ValueError:  # refused by the state: the window's own path decides
                            return self._slow(*args, **kwargs)
                        if t > self.latest:
                            self.latest = t
                        self.events += 1
                        return result
        return self._slow(*args, **kwargs)

    def point(self, update: Callable[..., Any] | None) -> None:
        """The state's update (``None``: every event to ``slow``)."""
        self._target = update


class PySegmentRouter:
    """Pure Python twin of the compiled per-event router of a segmented accumulator.

    ``routes`` maps a segment (exactly a ``str`` or an ``int``) to its
    accumulator's ``update``; the owner keeps it current. Any other event
    goes to ``slow``.
    """

    __slots__ = ("_routes", "_slow")

    def __init__(self, slow: Callable[..., Any], routes: dict[Any, Callable[..., Any]]) -> None:
        self._slow, self._routes = slow, routes

    def update(self, *args: Any, **kwargs: Any) -> Any:
        """Count one event: straight to its segment's update when routed, else through ``slow``."""
        if args and (type(args[0]) is str or type(args[0]) is int):
            target = self._routes.get(args[0])
            if target is not None:
                return target(*args[1:], **kwargs)
        return self._slow(*args, **kwargs)


def log_columns(taken: list[tuple[str, Any]]) -> tuple[Any, ...]:
    """The typed run of an event log as numpy columns: float64, int64 or bool; a column of str (segments' names)
    as their list, which a segmented accumulator codes as it is (an array of the objects cost 18 ns an event to
    fill, 10,000 of 4 names); a column of dicts as their list (what ``update_many`` takes as rows of scores)."""
    kinds = {"f": np.float64, "i": np.int64, "b": np.int64}
    columns: list[Any] = []
    for tag, data in taken:
        if tag in "so":
            columns.append(data)
            continue
        column = np.frombuffer(data, dtype=kinds[tag])
        columns.append(column.astype(np.bool_) if tag == "b" else column.copy())  # astype copies already
    return tuple(columns)


def float_columns(buffer: Any) -> tuple[list[np.ndarray], np.ndarray | None]:
    """A float-events buffer's columns as numpy arrays, and its weights (``None`` when all are 1)."""
    values, weights = buffer.arrays()
    rows = np.frombuffer(values, dtype=np.float64).reshape(-1, int(buffer.width))
    return [rows[:, k].copy() for k in range(rows.shape[1])], (
        None if weights is None else np.frombuffer(weights, dtype=np.float64).copy()
    )


_speedups = SPEEDUPS
#: Whether the compiled hot paths are in use.
COMPILED: bool = _speedups is not None
EventBuffer: type = _speedups.EventBuffer if _speedups is not None else PyEventBuffer
FloatEvents: type = _speedups.FloatEvents if _speedups is not None else PyFloatEvents
ClassRows: type = _speedups.ClassRows if _speedups is not None else PyClassRows
EventLog: type = _speedups.EventLog if _speedups is not None else PyEventLog
PaneRouter: type = _speedups.PaneRouter if _speedups is not None else PyPaneRouter
DecayRouter: type = _speedups.DecayRouter if _speedups is not None else PyDecayRouter
SegmentRouter: type = _speedups.SegmentRouter if _speedups is not None else PySegmentRouter
EventCounter: type = _speedups.EventCounter if _speedups is not None else PyEventCounter
CellTally: type = _speedups.CellTally if _speedups is not None else PyCellTally
if _speedups is not None and _speedups.CAPACITY != FLUSH_EVERY:  # pragma: no cover
    raise ImportError(f"streameval._speedups was built for another version (CAPACITY {_speedups.CAPACITY})")
