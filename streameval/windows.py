"""Windows over accumulators: the last N events, a time window of panes, exponential decay.

Each wrapper behaves like an accumulator: ``update``, ``update_many``, ``get``
and, where the result is well defined, ``merge``. ``Monitor`` records a
report every k events or every t units of event time. They use accumulators
only through the protocol (``update``, ``update_many``, ``+=``, ``-=``,
``scaled``, ``copy``, ``emptied``, ``get``), so they work with every kind.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from ._events import (
    FLUSH_EVERY,
    DecayRouter,
    EventCounter,
    EventLog,
    PaneRouter,
    is_small_batch,
    log_columns,
)
from ._numeric import finite_and_ascending
from ._validation import (
    SumsOverflowError,
    as_times,
    as_weights,
    check_duration,
    check_no_nan,
    check_real,
    check_time,
    is_one_value,
    refuse_class,
    show,
    table_rows,
)
from .averaging import metric_value
from .drift import drift, drift_record
from .protocol import can_take
from .segmented import SegmentedReport

__all__ = ["Decayed", "Monitor", "Sliding", "TimeWindow"]

Factory = Callable[[], Any]


def _positive(name: str, value: Any) -> float:
    v = check_real(name, value, finite=True)
    if v <= 0:
        raise ValueError(f"{name} must be positive, got {show(value)}")
    return v


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {show(value)}")
    return int(value)


def _make(factory: Factory) -> Any:
    if not callable(factory):
        raise TypeError(f"factory must be a callable that returns an empty accumulator, got {factory!r}")
    acc = factory()
    if not hasattr(acc, "merge") or not hasattr(acc, "get"):
        raise TypeError(f"factory must return an accumulator, got {type(acc).__name__}")
    return acc


class _Fresh:
    """A window's factory in its pickle: copies of an empty accumulator the factory made, so that a window made
    with a lambda (which pickle cannot write) pickles, and loads with the same configuration."""

    __slots__ = ("empty",)

    def __init__(self, empty: Any) -> None:
        self.empty = empty

    def __call__(self) -> Any:
        return self.empty.copy()


def _pickled_factory(factory: Factory, empty: Any = None) -> _Fresh:
    """What a window's pickle keeps of its factory (see :class:`_Fresh`): copies of ``empty``, an accumulator
    with no events it made, or of one made now."""
    if isinstance(factory, _Fresh):
        return factory
    return _Fresh(_make(factory) if empty is None else empty)


def _counted_afresh(like: Any, fresh: Callable[[], Any], count: Callable[[Any], None]) -> Any:
    """A new accumulator that takes the events ``count`` counts into it: first one like ``like`` with no events
    (the protocol's ``emptied``: the classes it learnt kept, in their order, so that score sequences given since
    mean the same), else ``fresh()`` (which learns its classes again, as the stream gave them: sequences given
    while fewer classes were known). Either must also add to ``like`` (the same kind of events: class scores or
    predicted classes), else it refuses too. The first refusal is raised when both refuse the events.
    """
    makers = [like.emptied] if like is not None and hasattr(like, "emptied") else []
    refused: Exception | None = None
    for make in [*makers, fresh]:
        acc = make()
        try:
            count(acc)
            if like is not None and hasattr(like, "check_mergeable"):
                like.check_mergeable(acc)  # a ValueError where the two do not add up
        except (TypeError, ValueError) as exc:
            refused = refused or exc
            continue
        return acc
    assert refused is not None
    raise refused


# -- Sliding ---------------------------------------------------------------------
_SETTLE_EVERY = 4096  # per-event updates are filed (and old events taken out) in groups of this many


def _column(values: list[Any]) -> Any:
    """A column of per-event values as a compact array when they are all plain floats, ints or bools (anything
    else, such as segments' names, as the list, as a log's str column is kept)."""
    kinds = set(map(type, values))
    if len(kinds) == 1:
        (kind,) = kinds
        dtype = {float: np.float64, bool: np.bool_, int: np.int64}.get(kind)
        if dtype is not None:
            try:
                return np.array(values, dtype=dtype)
            except OverflowError:  # ints beyond int64 stay as they are
                pass
    return values


def _batch_length(args: tuple[Any, ...]) -> int:
    """How many events a batch's arguments hold: its first argument's length (0 without arguments), or a
    ``TypeError`` naming that argument and its value where it is one value, not a column of them.

    Examples
    --------
    >>> import streameval as se
    >>> se.Sliding(se.BinaryAccumulator, size=10).update_many(1, 0.5)
    Traceback (most recent call last):
    ...
    TypeError: update_many takes a column of values an argument, one an event: argument 1 is 1
    """
    if not args:
        return 0
    try:
        return len(args[0])
    except TypeError:
        raise TypeError(
            f"update_many takes a column of values an argument, one an event: argument 1 is {show(args[0])}"
        ) from None


def _kept(value: Any) -> Any:
    """One event's argument as the window keeps it: a copy of a dict, list or array (such as class scores, which
    the caller may fill again for the next event); anything else as it is."""
    if type(value) in _SHARED:
        return value
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    if isinstance(value, np.ndarray):
        return value.copy()
    return value


_SHARED = frozenset({float, int, bool, str, bytes, type(None), tuple, np.float64, np.int64, np.bool_})


def _copyable(value: Any) -> bool:
    """Whether :func:`_kept` keeps a copy of a batch's argument, or it is a value that cannot change (a table,
    which the caller may change later, is not)."""
    return type(value) in _SHARED or isinstance(value, (dict, list, np.ndarray))


def _cut(values: Any, start: int, stop: int | None = None) -> Any:
    """Events ``start:stop`` of one argument of a batch, as an independent copy (scalars pass as they are; the
    rows of a list, such as dicts of class scores, copied too)."""
    if type(values) is np.ndarray and values.ndim and values.dtype != object:  # the usual column: a copy
        return values[start:stop].copy()
    if is_one_value(values):  # a scalar such as w=None: as it is
        return values
    if isinstance(values, np.ndarray) or hasattr(values, "to_numpy"):  # numpy, pandas and friends
        part = (values if isinstance(values, np.ndarray) else np.asarray(values.to_numpy()))[start:stop].copy()
        if part.dtype == object:  # objects such as dicts of class scores: each one copied too
            for i, value in enumerate(part.flat):
                part.flat[i] = _kept(value)
        return part
    part = list(values)[start:stop]
    if part and isinstance(part[0], (dict, list, np.ndarray)):  # rows such as dicts of class scores: copied too
        return [_kept(v) for v in part]
    return part  # scalars (a batch mixing rows in is refused before it is kept)


class _Batch:
    """Events of the window, as the arguments of one ``update_many`` call (columns, keyword columns), and, for a
    large batch, an accumulator of exactly its events (``counted``): when the whole batch leaves, that is taken
    out instead of counting its events again."""

    __slots__ = ("args", "counted", "kwargs", "n")

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any], n: int, counted: Any = None) -> None:
        self.args, self.kwargs, self.n, self.counted = args, kwargs, n, counted

    def part(self, start: int, stop: int | None) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return tuple(_cut(a, start, stop) for a in self.args), {k: _cut(v, start, stop) for k, v in self.kwargs.items()}

    def view(self, start: int, stop: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Events ``start:stop`` without copying arrays (for counting only)."""
        cut = slice(start, stop)
        return tuple(_take(a, cut) for a in self.args), {k: _take(v, cut) for k, v in self.kwargs.items()}


_KEEP_COUNTED_FROM = 1 << 16  # a batch of at least this many events keeps an accumulator of its own events


def _joined(runs: list[_Batch]) -> list[_Batch]:
    """Consecutive runs of alike columns (numpy arrays of one dtype and row shape, lists, one scalar) joined into
    one batch each: the events leave by one ``revert_many`` a batch (1,000 batches of 10 events filed, one call
    instead of a thousand)."""
    out: list[_Batch] = []
    group: list[_Batch] = []
    for batch in runs:
        if group and not _joinable(group[-1], batch):
            out.append(_join(group))
            group = []
        group.append(batch)
    if group:
        out.append(_join(group))
    return out


def _joinable(a: _Batch, b: _Batch) -> bool:
    if (
        a.counted is not None
        or b.counted is not None
        or len(a.args) != len(b.args)
        or a.kwargs.keys() != b.kwargs.keys()
    ):
        return False
    pairs = [*zip(a.args, b.args, strict=True), *((a.kwargs[k], b.kwargs[k]) for k in a.kwargs)]
    return all(_alike(x, y) for x, y in pairs)


def _alike(x: Any, y: Any) -> bool:
    """Whether two columns of batches join: arrays of one dtype and row shape, lists, or one and the same scalar."""
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.ndim and y.ndim:
        return x.dtype == y.dtype and x.shape[1:] == y.shape[1:]
    if isinstance(x, list) and isinstance(y, list):
        return True
    if not (is_one_value(x) and is_one_value(y)) or type(x) is not type(y):
        return False
    return x is y or bool(x == y)


def _join(group: list[_Batch]) -> _Batch:
    if len(group) == 1:
        return group[0]
    args = tuple(_joined_column([b.args[i] for b in group]) for i in range(len(group[0].args)))
    kwargs = {k: _joined_column([b.kwargs[k] for b in group]) for k in group[0].kwargs}
    return _Batch(args, kwargs, sum(b.n for b in group))


def _joined_column(parts: list[Any]) -> Any:
    first = parts[0]
    if isinstance(first, np.ndarray) and first.ndim:
        return np.concatenate(parts)
    if isinstance(first, list):
        return [value for part in parts for value in part]
    return first  # one scalar for every event


class Sliding:
    """Exactly the last ``size`` events, for any accumulator kind.

    The window keeps its events (as compact columns: scores and labels as
    arrays; a copy of each dict, list or array of class scores, so a caller
    may fill the same one again for the next event), counts each arriving
    event at once, and takes the oldest ones
    back out with the accumulator's ``revert_many`` when they leave (or, when
    more leave than stay, counts the staying ones afresh): the report is
    always that of the last ``size`` events, whatever the kind. Per-event
    updates cost about one accumulator update; old events are taken out in
    groups, filed 4,096 at a time (as many as the window holds up to 16,384),
    with batches of up to 1,024 events (alike ones leave by one call).

    A binary window stays exact (every distinct score kept) while its events
    and those of one filing more have at most ``exact_up_to`` distinct scores:
    up to 4,096 events by default, and any size with a budget twice as large
    (``lambda: BinaryAccumulator(exact_up_to=2 * size)``). Scores none of
    whose events is left give their place up.

    Parameters
    ----------
    factory : callable
        Returns an empty accumulator of any kind (its configuration is used).
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
    >>> reg = se.Sliding(se.RegressionAccumulator, size=2)
    >>> for y, y_pred in [(1.0, 9.0), (2.0, 2.5), (3.0, 3.5)]:
    ...     reg.update(y, y_pred)
    >>> reg.get().mae
    0.5
    """

    def __init__(self, factory: Factory, size: int) -> None:
        acc = _make(factory)
        if not hasattr(acc, "subtract"):
            raise TypeError(
                f"Sliding needs an accumulator that can take events out (subtract), got {type(acc).__name__}"
            )
        self.size = _count("size", size)
        self._factory = factory
        self._acc = acc  # counts every event held, and the per-event ones not yet filed
        self._batches: deque[_Batch] = deque()
        self._held = 0  # events in _batches
        # per-event updates not yet filed, as runs of calls alike: the positional arguments of each call in
        # `_run`, the keyword arguments (when any) in `_run_keywords`, and the filed runs before it
        self._run: list[tuple[Any, ...]] = []
        self._run_keywords: list[dict[str, Any]] = []
        self._run_shape: tuple[Any, ...] | None = None  # the calls of the run: see _call_shape
        self._runs: list[_Batch] = []
        self._batched = 0  # events of small batches among the runs (filed with the per-event updates)
        # per-event updates: counted by the accumulator's update, then kept by the log (plain float, int, bool
        # and str arguments, and dicts such as class scores, in compiled typed columns; any other call in the runs
        # above, through _keep_odd). A dict is kept by reference, as in the runs, until its event leaves.
        self._log = EventLog(acc.update, self._settle, self._keep_odd, self._settle_every(), objects=True)
        self.update = self._log.update  # type: ignore[method-assign]

    @property
    def n(self) -> int:
        """Events in the window."""
        return min(self.size, self._held + self._log.pending + self._batched)

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Count one event (the accumulator's ``update`` arguments); the oldest leaves once the window is full."""
        self._log.update(*args, **kwargs)

    def _settle_every(self) -> int:
        """Per-event updates filed at a time: 4,096, or up to 16,384 for longer windows (fewer, larger filings).

        A short window (fewer events than a filing) counts its staying events afresh at each filing, so the
        events counted since the last one are dropped: it files one event before the accumulators' per-event
        buffers are full, and those events are never counted into tables, only checked as they arrive.
        """
        if self.size < FLUSH_EVERY - 1:
            return FLUSH_EVERY - 1
        return max(_SETTLE_EVERY, min(4 * _SETTLE_EVERY, self.size))

    def __getstate__(self) -> dict[str, Any]:
        self._settle()  # the per-event updates filed: a logical no-op
        state = {k: v for k, v in self.__dict__.items() if k not in ("_log", "update")}
        state["_factory"] = _pickled_factory(self._factory)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._batched = 0  # pickled settled: no small batch waits (and older pickles lack the field)
        self.__dict__.update(state)
        self._log = EventLog(self._acc.update, self._settle, self._keep_odd, self._settle_every(), objects=True)
        self.update = self._log.update  # type: ignore[method-assign]

    def _keep_odd(self, *args: Any, **kwargs: Any) -> None:
        """Count and keep an event that the log's typed columns do not hold, after the log's run."""
        self._acc.update(*args, **kwargs)  # checks the event before anything changes
        if self._log.typed:  # the log's typed run first (after it, the log sends every event here until filed)
            self._close_log()
        self._log.set_odd()  # until the next filing, so that the runs keep the events' order
        shape = _call_shape(args, kwargs)
        args = tuple(_kept(a) for a in args)  # the caller may fill a dict, list or array again for the next event
        kwargs = {k: _kept(v) for k, v in kwargs.items()}
        if self._run and shape == self._run_shape:  # called like the run so far: the same batch
            self._run.append(args)
            if kwargs:
                self._run_keywords.append(kwargs)
            return
        self._close_run()
        self._run, self._run_shape = [args], shape
        self._run_keywords = [kwargs] if kwargs else []

    def _close_log(self) -> None:
        """The log's typed run as one batch of columns."""
        columns = log_columns(self._log.take())
        if columns:
            self._runs.append(_Batch(columns, {}, len(columns[0])))

    def update_many(self, *args: Any, **kwargs: Any) -> None:
        """Count many events in order (the accumulator's ``update_many`` arguments); all of them or none."""
        args = tuple(table_rows(a) for a in args)  # a table of named columns: its rows, as named (kept so)
        n = _batch_length(args)
        first = max(0, n - self.size)
        if n < self.size and is_small_batch(n) and not kwargs and self._log.keep_many(args):
            # plain arrays kept in the log's columns, as its per-event updates are (a copy of their values), then
            # counted; old events leave with those (10 events: 3.1-3.2 against 10.1-10.7 us kept as a batch of
            # their own)
            try:
                self._acc.update_many(*args)  # all or nothing
            except BaseException:
                self._log.drop_last(n)
                raise
            if self._log.pending + self._batched >= self._settle_every():
                self._settle()
            return
        if first:  # only the last `size` events can stay: check the others (in the window's regime), then drop them
            head = _Batch(args, kwargs, n).part(0, first)
            (self._acc - self._acc).update_many(*head[0], **head[1])
        columns, keywords = _Batch(args, kwargs, n).part(first, None)
        if n - first == self.size:  # every event held leaves: the window is this batch's last `size` events
            fresh = self._acc - self._acc  # empty, in the window's regime
            fresh.update_many(*columns, **keywords)  # all or nothing
            self._file_singles()
            self._batches = deque([_Batch(columns, keywords, self.size)])
            self._held = self.size
            self._acc = fresh
            self._log.retarget(fresh.update)
            return
        if not first and is_small_batch(n):  # filed with the per-event updates: old events leave then, in groups
            self._acc.update_many(*columns, **keywords)  # all or nothing
            self._close_log()  # the per-event updates before it, in order
            self._close_run()
            if n:
                self._runs.append(_Batch(columns, keywords, n))
                self._batched += n
            if self._log.pending + self._batched >= self._settle_every():
                self._settle()
            return
        counted = None
        if n - first >= _KEEP_COUNTED_FROM and self.size > n - first:  # it may leave whole: keep its own count
            counted = self._acc - self._acc  # empty, in the window's regime
            counted.update_many(*columns, **keywords)  # all or nothing
            self._acc += counted
        else:
            self._acc.update_many(*columns, **keywords)  # all or nothing
        self._file_singles()
        if n - first:
            self._batches.append(_Batch(columns, keywords, n - first, counted))
            self._held += n - first
        self._evict()

    def _close_run(self) -> None:
        """The current run of per-event calls as one batch of columns."""
        if self._run:
            args = tuple(_column(list(col)) for col in zip(*self._run, strict=True))
            names = self._run_keywords[0].keys() if self._run_keywords else ()
            kwargs = {k: _column([kw[k] for kw in self._run_keywords]) for k in names}
            self._runs.append(_Batch(args, kwargs, len(self._run)))
        self._run, self._run_keywords, self._run_shape = [], [], None

    def _file_singles(self) -> None:
        """File the per-event updates, in order, as batches of consecutive events called alike."""
        self._close_log()
        self._close_run()
        for batch in _joined(self._runs):
            self._batches.append(batch)
            self._held += batch.n
        self._runs = []
        self._batched = 0
        self._log.reset_pending()

    def _settle(self) -> None:
        self._file_singles()
        self._evict()

    def _evict(self) -> None:
        """Take the events beyond the last ``size`` back out of the accumulator."""
        excess = self._held - self.size
        if excess <= 0:
            return
        if excess > self.size:  # more events leave than stay (a short window): the events that stay counted afresh
            self._count_afresh(excess)
            return
        # the events leaving taken out (revert_many: in the exact regime, in place in the table of scores)
        try:
            for oldest, take in _leaving(self._batches, excess):
                if take == oldest.n and oldest.counted is not None:
                    self._acc -= oldest.counted  # a whole batch leaves: its own count, not its events counted again
                else:
                    args, kwargs = oldest.view(0, take)
                    self._acc.revert_many(*args, **kwargs)
                _drop_first(self._batches, take)
                self._held -= take
        except ValueError:  # weights far apart: a count rounded below what leaves it, the others' held before it
            self._count_afresh(self._held - self.size)
            return
        if getattr(self._acc, "lost_to_rounding", None) and self._acc.lost_to_rounding():
            self._count_afresh(0)  # an outlier left with most of the spread: the rest anew

    def _count_afresh(self, leaving: int) -> None:
        """The window's events but its oldest ``leaving`` ones, counted into a new accumulator."""
        batches = deque(self._batches)  # the window changes once they are counted
        for _, take in _leaving(batches, leaving):
            _drop_first(batches, take)

        def count(staying: Any) -> None:
            for batch in batches:
                staying.update_many(*batch.args, **batch.kwargs)

        # score sequences keep the order of the classes learnt (or, from a factory's, the stream's own)
        staying = _counted_afresh(self._acc, lambda: _make(self._factory), count)
        self._batches, self._held, self._acc = batches, sum(batch.n for batch in batches), staying
        self._log.retarget(staying.update)

    def accumulator(self) -> Any:
        """An accumulator of exactly the events in the window (a copy)."""
        self._settle()
        return self._acc.copy()

    def get(self) -> Any:
        """The report of the events in the window."""
        self._settle()
        return self._acc.get()

    def merge(self, other: Any) -> Any:
        """Not defined: "the last N events" of two streams has no order to follow."""
        raise TypeError("Sliding windows cannot be merged: the last N events of two streams are not defined")

    __add__ = merge


def _leaving(batches: deque[_Batch], excess: int) -> list[tuple[_Batch, int]]:
    """The batches the oldest ``excess`` events are in, oldest first, with how many of each one's first events
    leave."""
    left, i = [], 0
    while excess > 0:
        take = min(excess, batches[i].n)
        left.append((batches[i], take))
        excess -= take
        i += 1
    return left


def _drop_first(batches: deque[_Batch], take: int) -> None:
    """Drop the first ``take`` events of the oldest batch (the whole batch when it has no more)."""
    oldest = batches[0]
    if take == oldest.n:
        batches.popleft()
    else:
        args, kwargs = oldest.part(take, oldest.n)
        batches[0] = _Batch(args, kwargs, oldest.n - take)


def _call_shape(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """What a window's per-event calls share to be filed as one batch: as many arguments, the same keywords, and
    mappings at the same places (a batch's column is of mappings, such as class scores, or of none)."""
    return (
        tuple(isinstance(a, Mapping) for a in args),
        tuple(kwargs),
        tuple(isinstance(v, Mapping) for v in kwargs.values()),
    )


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
    width : float or timedelta
        Window length in the units of the event times. Event times may be
        instants (``datetime``, pandas ``Timestamp``, numpy ``datetime64`` and
        columns of them), read as seconds since 1970-01-01 UTC (naive ones as
        UTC); the width is then in seconds, and may be a duration
        (``timedelta``, pandas ``Timedelta``, numpy ``timedelta64``).
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

    The last hour of a stream of timestamps:

    >>> from datetime import datetime, timedelta
    >>> hour = se.TimeWindow(se.BinaryAccumulator, width=timedelta(hours=1), panes=6)
    >>> hour.update(1, 0.8, t=datetime(2026, 5, 1, 9, 0))
    >>> hour.update(0, 0.3, t=datetime(2026, 5, 1, 10, 30))  # the 9:00 event has left the window
    >>> hour.get().n
    1
    """

    def __init__(self, factory: Factory, width: float, panes: int = 10) -> None:
        self._factory = factory
        self._empty = _make(factory)
        self.width = check_duration("width", width)
        self.panes = _count("panes", panes)
        self.pane_width = self.width / self.panes
        self._ring: dict[int, Any] = {}
        self._latest: int | None = None
        self.n_late = 0
        # per-event updates: one of the latest pane goes straight to that pane's update (compiled), others here
        self._router = PaneRouter(self._update_routed, self.pane_width)
        self.update = self._router.update  # type: ignore[method-assign]

    def __getstate__(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("_router", "update")}
        state["_factory"] = _pickled_factory(self._factory, self._empty)  # the empty accumulator it holds
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._router = PaneRouter(self._update_routed, self.pane_width)
        self.update = self._router.update  # type: ignore[method-assign]
        self._point_router()

    def _point_router(self) -> None:
        """Route events of the latest pane straight to its accumulator."""
        newest = None if self._latest is None else self._ring.get(self._latest)
        self._router.point(self._latest, None if newest is None else newest.update)

    def _check_reach(self, *times: float) -> None:
        """A ``ValueError`` where a time is too far from 0 to number its pane (``t / pane_width`` past the
        largest float: panes of width 1e-321 and a time of 1)."""
        for when in times:
            if not math.isfinite(when / self.pane_width):
                raise ValueError(
                    f"t={when!r} is too far from 0 for panes of width {self.pane_width!r} (width {self.width!r} / "
                    f"{self.panes} panes): its pane's number, t / pane width, is past the largest float"
                )

    def _pane_of(self, t: np.ndarray) -> np.ndarray:
        """The panes of times, as whole floats: ``math.floor(t / pane_width)`` of each, without a 64-bit integer to
        overflow (a time of 1e300 has a pane; ``int`` of one is the pane a per-event update finds)."""
        return np.floor(t / self.pane_width)

    def update(self, *args: Any, t: float, **kwargs: Any) -> None:
        """Count one event at time ``t`` (the other arguments go to the accumulator)."""
        self._router.update(*args, t=t, **kwargs)

    def _update_routed(self, *args: Any, t: float, **kwargs: Any) -> None:
        """An event that is not of the latest pane (or not plain): found its pane here."""
        when = check_time("t", t)
        self._check_reach(when)
        pane = math.floor(when / self.pane_width)
        current = self._ring.get(pane)
        if current is not None:  # the pane is in the window: count the event there (checked first)
            current.update(*args, **kwargs)
            return
        newest = None if self._latest is None else self._ring.get(self._latest)
        fresh = _counted_afresh(newest, self._empty.copy, lambda acc: acc.update(*args, **kwargs))  # checked first
        self._add({pane: (fresh, 1)})

    def update_many(self, *args: Any, t: npt.ArrayLike, **kwargs: Any) -> None:
        """Count many events with times ``t``; all of them or, on bad input, none."""
        args = tuple(table_rows(a) for a in args)  # a table of named columns: its rows (cut into panes so)
        n = _batch_length(args)
        times, ascending = _event_times(t, n)
        if n:
            low, high = _time_span(times, ascending)
            self._check_reach(low, high)
            pane = math.floor(low / self.pane_width)
            current = self._ring.get(pane)
            if current is not None and pane == math.floor(high / self.pane_width):
                # every event in one pane of the window (a stream's batch, as a rule): counted into it in place, all
                # or nothing, where counting it apart and adding the part merges it into the pane's whole table of
                # scores (10 events: 74 to 108 us)
                current.update_many(*args, **kwargs)
                return
        fresh: dict[int, tuple[Any, int]] = {}
        # the pane before (in time): a new pane starts with the classes it learnt, in their order
        before = None if self._latest is None else self._ring.get(self._latest)
        for p, part, extra, events in self._by_pane(times, ascending, args, kwargs):
            current = self._ring.get(p)
            # empty; for a pane that exists, in that pane's regime (binned events added to binned counts need no
            # conversion); for a new one, the pane before emptied (its classes learnt kept) or a copy of the empty
            # accumulator made at the start
            if current is not None and hasattr(current, "subtract"):
                acc = current - current
                acc.update_many(*part, **extra)
            else:

                def count(acc: Any, part: list[Any] = part, extra: dict[str, Any] = extra) -> None:
                    acc.update_many(*part, **extra)

                acc = _counted_afresh(before, self._empty.copy, count)
            fresh[p] = (acc, events)
            before = acc if self._latest is None or p >= self._latest else before
        self._add(fresh)

    def _by_pane(
        self, times: np.ndarray, ascending: bool, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Iterator[tuple[int, list[Any], dict[str, Any], int]]:
        """Each pane of a batch with its events' arguments (in time order, slices of the batch: no copies)."""
        if times.size > 1 and ascending:  # in time order, the usual case
            first, last = math.floor(times[0] / self.pane_width), math.floor(times[-1] / self.pane_width)
            # a pane's first event: floor(t / width) is monotone in t, so the events of a pane are contiguous
            for p, start, stop in self._pane_runs(times, first, last):
                cut = slice(start, stop)
                yield p, [_take(a, cut) for a in args], {k: _take(v, cut) for k, v in kwargs.items()}, stop - start
            return
        panes = self._pane_of(times)
        for p in np.unique(panes):
            sel = np.flatnonzero(panes == p)
            yield int(p), [_take(a, sel) for a in args], {k: _take(v, sel) for k, v in kwargs.items()}, int(sel.size)

    def _pane_runs(self, times: np.ndarray, first: int, last: int) -> Iterator[tuple[int, int, int]]:
        """Each pane of sorted times that holds events, with its first and its last event's index plus one: the
        panes from ``first`` up to ``last`` looked at one by one when they are few, else the panes of the events
        (a batch may span any number of panes: one event at time 0 and the next now, say)."""
        if last - first > 64:  # many panes: where the events' pane changes, however many panes between
            panes = self._pane_of(times)
            starts = [0, *(np.flatnonzero(panes[1:] != panes[:-1]) + 1).tolist(), times.size]
            for start, stop in itertools.pairwise(starts):
                yield int(panes[start]), start, stop
            return
        edges = [0, *self._pane_starts(times, first, last), times.size]
        for p, start, stop in zip(range(first, last + 1), edges[:-1], edges[1:], strict=True):
            if stop > start:
                yield p, start, stop

    def _pane_starts(self, times: np.ndarray, first: int, last: int) -> list[int]:
        """The index of the first event of each pane after ``first`` up to ``last`` (sorted times, a few panes)."""
        # where each pane's start time falls, kept when the events on either side are in the panes below and
        # from p (the rounding of t / width can move a pane's first event by an event or so): else a bisection
        guesses = np.searchsorted(times, np.arange(first + 1, last + 1) * self.pane_width, side="left").tolist()
        starts: list[int] = []
        for p, i in zip(range(first + 1, last + 1), guesses, strict=True):
            below = i == 0 or math.floor(times[i - 1] / self.pane_width) < p
            if below and (i == times.size or math.floor(times[i] / self.pane_width) >= p):
                starts.append(i)
                continue
            lo, hi = starts[-1] if starts else 0, times.size  # the first index whose pane is >= p
            while lo < hi:
                mid = (lo + hi) // 2
                if math.floor(times[mid] / self.pane_width) >= p:
                    hi = mid
                else:
                    lo = mid + 1
            starts.append(lo)
        return starts

    def _add(self, fresh: dict[int, tuple[Any, int]]) -> None:
        """Add accumulators (with their numbers of events) to their panes; late ones only count as late."""
        if not fresh:
            return
        latest = max(fresh) if self._latest is None else max(self._latest, max(fresh))
        oldest = latest - self.panes + 1
        # late: already outside the window when it arrived (events that leave the window because
        # later events of the same batch advance the time are not late, just expired)
        before = -math.inf if self._latest is None else self._latest - self.panes + 1
        # where a pane that exists could refuse its part (a total weight past the largest float), every such pane
        # is summed first, as a new accumulator, so that a refusal comes before any pane changes (added to in
        # place, a pane after another could refuse); else they are added to in place
        reached = [(p, acc) for p, (acc, _) in fresh.items() if p >= oldest and p in self._ring]
        weight = sum(acc.n for _, acc in reached)
        summed = {} if all(can_take(self._ring[p], weight) for p, _ in reached) else {
            p: self._ring[p].merge(acc) for p, acc in reached
        }  # fmt: skip
        for p, (acc, events) in fresh.items():
            if p < before:
                self.n_late += events
            elif p >= oldest:
                if p in summed:
                    self._ring[p] = summed[p]
                elif p in self._ring:
                    self._ring[p] += acc  # the window owns its panes: add in place
                else:
                    self._ring[p] = acc
        self._latest = latest
        # the panes that left: none is older than the window before (nothing was there when there was no window),
        # so by their numbers from there, or, past a jump of more panes than the ring holds, by a look at every
        # pane (86,400 panes of a second, each looked at: 0.21 ms an event that opened a pane)
        if before != -math.inf and oldest - before <= len(self._ring):  # compared, not a range's len (2^63)
            for p in range(int(before), oldest):
                self._ring.pop(p, None)
        elif before != -math.inf:
            for p in [p for p in self._ring if p < oldest]:
                del self._ring[p]
        self._point_router()

    def accumulator(self) -> Any:
        """An accumulator of the window's events (its panes merged)."""
        if not self._ring:
            return self._factory()
        return type(self._empty).merge_all(list(self._ring.values()))

    def get(self) -> Any:
        """The report of the window's events."""
        return self.accumulator().get()

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
        new._add({p: (acc.copy(), 0) for p, acc in other._ring.items()})
        return new

    __add__ = merge


def _event_times(t: Any, n: int) -> tuple[np.ndarray, bool]:
    """A batch's event times, checked (one per event, finite), and whether they never fall."""
    times = as_times("t", [t] if is_one_value(t) else t)
    if times.size != n:
        raise ValueError(f"t must have one time per event ({n}), got {times.size}")
    finite, ascending = finite_and_ascending(times)
    if not finite:
        check_no_nan("t", times)
        bad = np.flatnonzero(~np.isfinite(times))
        raise ValueError(f"t must be finite, got {float(times[bad[0]])!r} at index {bad[0]}")
    return times, ascending


def _time_span(times: np.ndarray, ascending: bool) -> tuple[float, float]:
    """The earliest and the latest of checked event times (at least one): the ends of times that never fall,
    without a pass over them (10^6 times: two passes of 0.25 ms in all), else their least and largest."""
    if ascending:
        return float(times[0]), float(times[-1])
    return float(times.min()), float(times.max())


def _take(values: Any, sel: np.ndarray | slice) -> Any:
    """The selected events of an argument (scalars as they are), keeping lists as lists (mappings stay mappings)."""
    if is_one_value(values):  # a scalar such as w=None: as it is
        return values
    if isinstance(values, (list, tuple)):
        return list(values[sel]) if isinstance(sel, slice) else [values[i] for i in sel.tolist()]
    return np.asarray(values)[sel]


# -- Decayed ---------------------------------------------------------------------
_FOLD_EVERY = 16384  # Decayed's plain per-event updates counted as one batch this often (or when read)
_CATCH_UP = 4096  # events of batches kept for Decayed's checker between two per-event updates (else a new copy)
_POWER_STEP = 1024  # a batch's first decay factors, each by exp2; the rest by doubling runs of them (_powers_of_two)
_DOUBLING_UP_TO = 1000.0  # half-lives of arguments and span within which the doubling's numbers stay normal


def _powers_of_two(start: float, n: int, half_life: float) -> npt.NDArray[np.float64]:
    """``2 ** ((start + i) / half_life)`` for ``i`` in ``range(n)``: ``exp2`` of the first ``_POWER_STEP``, then
    each run of powers so far times the power that moves it on by its length (doubling the run each time).

    About ``log2(n / _POWER_STEP)`` contiguous multiplications of the array (10^6 events: 0.19 against 0.53 ms
    as a coarse power times a fine one, and 1.03 for ``exp2`` of each); within 1e-13 of the power of the rounded
    argument, itself as far from the true power once ``(start + i) / half_life`` is rounded. Every power and
    factor of the doubling is a normal float while the arguments, and the batch's span, stay within
    ``_DOUBLING_UP_TO`` half-lives; past that (a batch over more than a thousand half-lives) a factor would
    overflow, or a power that fell to zero would stay there, and the powers are a coarse power times a fine one.
    """
    head = min(n, _POWER_STEP)
    if n > head and max(abs(start), abs(start + n - 1), n - 1) / half_life > _DOUBLING_UP_TO:
        coarse = np.exp2((start + np.arange(-(-n // _POWER_STEP), dtype=np.float64) * _POWER_STEP) / half_life)
        fine = np.exp2(np.arange(_POWER_STEP, dtype=np.float64) / half_life)
        return np.multiply.outer(coarse, fine).reshape(-1)[:n]
    powers = np.empty(n, dtype=np.float64)
    first = powers[:head]
    first[:] = np.arange(head, dtype=np.float64)
    first += start
    first /= half_life
    np.exp2(first, out=first)
    done = head
    while done < n:
        more = min(done, n - done)
        np.multiply(powers[:more], 2.0 ** (done / half_life), out=powers[done : done + more])
        done += more
    return powers


def _router_field(name: str, kind: Callable[[Any], Any]) -> Any:
    """A field of a window kept by its per-event router (read as ``kind``)."""

    def read(self: Any) -> Any:
        return kind(getattr(self._router, name))

    def write(self: Any, value: Any) -> None:
        setattr(self._router, name, value)

    return property(read, write)


class Decayed:
    """Exponentially decayed counts: an event ``half_life`` old weighs one half.

    Age is measured in events (``by="events"``, the default) or in event
    time (``by="time"``: pass ``t=`` to every update; instants are read as
    seconds since 1970-01-01 UTC, as :class:`TimeWindow` reads them, and
    ``half_life`` may then be a duration). Internally an event is
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
        acc = _make(factory)
        if not hasattr(acc, "scaled"):
            raise TypeError(f"Decayed needs an accumulator whose counts can be scaled, got {type(acc).__name__}")
        if by not in ("events", "time"):
            raise ValueError(f"by must be 'events' or 'time', got {by!r}")
        # by time, a duration may be given (a timedelta: seconds, as instants are read); by events, a count
        self.half_life = check_duration("half_life", half_life) if by == "time" else _positive("half_life", half_life)
        self.by = by
        self._log: Any = None
        self._start_log()
        self._acc = acc

    # The clock lives in the per-event router, which counts most events by time without a Python call: the time
    # at which a stored weight is the event's own, the latest event's time and the events seen (the time when
    # by="events"). The router holds the state's update, set with the state.
    _t_ref = _router_field("t_ref", float)
    _latest = _router_field("latest", float)
    _clock = _router_field("events", int)

    @property
    def _acc(self) -> Any:
        return self._state

    @_acc.setter
    def _acc(self, acc: Any) -> None:
        self._state = acc
        self._router.point(acc.update if self.by == "time" else None)

    def _start_log(self) -> None:
        # Per-event updates are checked at once by a scratch accumulator (it counts them too, but is never read):
        # a copy of the state (its classes, segments, the kind of events it takes) made when first needed, it then
        # sees every per-event update, so whatever it takes the state takes when they are added. Small batches
        # counted meanwhile are kept (copies of their arguments) and counted into it before the next per-event
        # update, rather than copying the state again: a batch and an event in turn copied a decayed window of
        # 1,000 segments each time (11.3 ms a pair).
        self._checker: Any = None
        self._unchecked: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self._unchecked_events = 0
        # by time, an event at a float or int time with a float or int weight (finite, >= 0) that does not rescale
        # the state goes from the router (compiled) to the state's update with its decayed weight, without the
        # checked path's checks of t and w; anything else to the checked path
        self._router = DecayRouter(self._update_checked, self.half_life, self._RESCALE_AT)
        if self.by == "events":  # plain per-event updates kept in compiled columns
            self._log = EventLog(self._check_first, self._fold, self._update_checked, _FOLD_EVERY, objects=True)
            self.update = self._log.update  # type: ignore[method-assign]
        else:
            self.update = self._router.update  # type: ignore[method-assign]

    def _count_one(self, args: tuple[Any, ...], when: float, weight: float, kwargs: dict[str, Any]) -> None:
        """One checked event into the state itself, with its decayed weight (the state's ``update`` checks it
        against every event so far: a refusal changes nothing; an accumulator made apart for these events would
        not know what the state learnt in its parts, a segment's classes: a score sequence in their order)."""
        decayed = weight * 2.0 ** ((when - self._t_ref) / self.half_life)
        if decayed == math.inf:  # a weight near the largest float, stored from an earlier reference time
            raise SumsOverflowError(f"w: a weight of {weight!r} decayed from the reference time would overflow")
        if len(args) == 2 and not kwargs:  # (y, score) and the like: a direct call (*args costs 0.2 us)
            self._acc.update(args[0], args[1], w=decayed)
        else:
            self._acc.update(*args, w=decayed, **kwargs)
        if when > self._latest:
            self._latest = when
        self._clock += 1

    def _checking(self) -> Any:
        """The scratch accumulator that checks per-event updates (made from the state when there is none, or
        brought up to date with the small batches counted since it last checked one)."""
        unchecked, self._unchecked, self._unchecked_events = self._unchecked, [], 0
        if self._checker is not None and unchecked:
            try:  # what the state took, the checker takes: it learns their classes and segments
                for args, kwargs in unchecked:
                    self._checker.update_many(*args, **kwargs)
            except (TypeError, ValueError):  # a total it keeps apart (weights not decayed): a copy instead
                self._checker = None
        if self._checker is None:  # a copy of the state: its classes, segments and kinds of events (never read)
            self._checker = self._acc.copy()
        if self._log is not None:
            self._log.retarget(self._checker.update)
        return self._checker

    def _check_first(self, *args: Any, **kwargs: Any) -> None:
        """The log's first event since the state changed without the checker (a batch): checked by a new one."""
        self._checking().update(*args, **kwargs)

    def _state_changed(self, args: tuple[Any, ...] = (), w: Any = None, kwargs: dict[str, Any] | None = None) -> None:
        """A batch the checker did not see was counted: kept for it when small (at most ``_CATCH_UP`` events
        since it last checked, of arguments it can copy), else the next per-event update makes it again."""
        n = len(args[0]) if args and hasattr(args[0], "__len__") else 0
        keep = self._checker is not None and n > 0 and self._unchecked_events + n <= _CATCH_UP
        keep = keep and all(_copyable(a) for a in (*args, w, *(kwargs or {}).values()))
        if keep:
            extra = {k: _kept(v) for k, v in (kwargs or {}).items()}
            if w is not None:
                extra["w"] = _kept(w)
            self._unchecked.append((tuple(_kept(a) for a in args), extra))
            self._unchecked_events += n
        else:
            self._checker = None
            self._unchecked, self._unchecked_events = [], 0
        if self._log is not None:
            self._log.retarget(self._check_first)

    _CLOCK = ("_acc", "_t_ref", "_latest", "_clock")  # kept by the router, saved as fields

    def __getstate__(self) -> dict[str, Any]:
        self._fold()  # a logical no-op
        # the checker is made again
        left_out = ("_log", "_checker", "_unchecked", "_unchecked_events", "update", "_router", "_state")
        state = {k: v for k, v in self.__dict__.items() if k not in left_out}
        state.update({name: getattr(self, name) for name in self._CLOCK})
        state["_factory"] = _pickled_factory(self._factory)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        clock = {name: state.pop(name) for name in self._CLOCK}
        self.__dict__.update(state)
        self._log = None
        self._start_log()
        for name, value in clock.items():
            setattr(self, name, value)

    def _times(self, t: Any, n: int) -> tuple[np.ndarray, bool]:
        """The checked event times of a batch (``by="time"``), and whether they never fall."""
        if t is None:
            raise ValueError("t is required with by='time'")
        return _event_times(t, n)

    def update(self, *args: Any, t: float | None = None, w: float = 1.0, **kwargs: Any) -> None:
        """Count one event (at time ``t`` when ``by="time"``).

        The event is checked at once against every event before it, then
        counted into the state with its decayed weight. With
        ``by="events"`` plain events (float, int, bool and str arguments, and
        dicts such as class scores, kept as copies) are kept in compiled
        columns instead and counted as one batch when the window is read or
        every 16,384 events.
        """
        self._update_checked(*args, t=t, w=w, **kwargs)

    def _update_checked(self, *args: Any, t: float | None = None, w: float = 1.0, **kwargs: Any) -> None:
        """Count one event into the state (after the log's events, which come first)."""
        self._fold()
        if self.by == "events":
            if t is not None:
                raise ValueError("t is only for by='time'; with by='events' age is counted in events")
            when = float(self._clock)
        else:
            if t is None:
                raise ValueError("t is required with by='time'")
            when = check_time("t", t)
        weight = check_real("w", w, finite=True, nonnegative=True)
        # rare: the stored weights would pass 2 ** _RESCALE_AT, and the batch path rescales the state
        if (max(self._latest, when) - self._t_ref) / self.half_life > self._RESCALE_AT:
            self.update_many(*([a] for a in args), t=None if t is None else [t], w=[w], **kwargs)
            return
        if self._log is not None:  # the checker of the log's events sees every event (by time there is none)
            self._checking().update(*args, w=weight, **kwargs)
        try:
            self._count_one(args, when, weight, kwargs)
        except (TypeError, ValueError) as refusal:
            if self._log is not None:  # what the checker took, the state refused: the checker made again from the
                self._state_changed()  # state when next needed (the batch below then keeps none)
            if not isinstance(refusal, SumsOverflowError):
                raise
            # stored weights are the events' own times up to 2 ** 500 (from the reference time): a weight, a total
            # or a sum past the largest float there may fit once the state is rescaled to the latest time, as the
            # batch path does then (its refusal, if it refuses, stands)
            self.update_many(*([a] for a in args), t=None if t is None else [t], w=[w], **kwargs)

    def _fold(self) -> None:
        """Count the events kept in the log as one batch, at the clock they arrived (a logical no-op)."""
        if self._log is None:
            return
        columns = log_columns(self._log.take())
        self._log.reset_pending()
        if columns:
            self._count_many(columns, None, None, {})

    def update_many(self, *args: Any, t: Any = None, w: Any = None, **kwargs: Any) -> None:
        """Count many events; all of them or, on bad input, none."""
        n = _batch_length(args)
        plain = self._log is not None and t is None and w is None and not kwargs and is_small_batch(n)
        if plain and self._log.keep_many(args):  # plain arrays kept with the per-event updates, checked as they are
            try:  # (10 events: 2.3-2.5 against 7.0-7.1 us counted as a batch of their own, folds included)
                self._checking().update_many(*args)
            except BaseException:
                self._log.drop_last(n)
                raise
            if self._log.pending >= _FOLD_EVERY:
                self._fold()
            return
        self._fold()
        self._count_many(args, t, w, kwargs)  # the batch whole to the state: a table is the accumulator's to read
        self._state_changed(args, w, kwargs)

    def _count_many(self, args: tuple[Any, ...], t: Any, w: Any, kwargs: dict[str, Any]) -> None:
        n = _batch_length(args)
        weights = as_weights("w", w, n)
        if self.by == "events":  # the times are the clock and the events after it: no array of them
            if t is not None:
                raise ValueError("t is only for by='time'; with by='events' age is counted in events")
            top = max(self._latest, float(self._clock + n - 1)) if n else self._latest
            times = None
        else:
            times, ascending = self._times(t, n)
            top = max(self._latest, _time_span(times, ascending)[1]) if n else self._latest
        t_ref = self._t_ref
        if n and (top - t_ref) / self.half_life > self._RESCALE_AT:
            t_ref = top  # rescale the stored state to this reference after the update checks pass
        try:
            self._count_decayed(args, times, weights, kwargs, n, t_ref)
        except SumsOverflowError:
            # stored weights are the events' own times up to 2 ** 500: a weight, a total or a sum past the largest
            # float at this reference may fit at the latest time (every stored count scaled down to it); a refusal
            # there stands
            if not n or t_ref == top:
                raise
            self._count_decayed(args, times, weights, kwargs, n, top)
        self._latest = top
        self._clock += n

    def _count_decayed(
        self, args: tuple[Any, ...], times: np.ndarray | None, weights: np.ndarray | None, kwargs: dict[str, Any],
        n: int, t_ref: float,
    ) -> None:  # fmt: skip
        """A checked batch counted with its weights decayed to ``t_ref`` (the state rescaled to it first, when it is
        another reference); all or nothing."""
        if times is None:  # by events: w * 2**((t - t_ref) / half_life), in place from here
            decayed = _powers_of_two(self._clock - t_ref, n, self.half_life)
        else:
            decayed = times - t_ref
            decayed /= self.half_life
            np.exp2(decayed, out=decayed)
        if weights is not None:
            with np.errstate(over="ignore"):
                decayed *= weights
            if not np.isfinite(decayed).all():  # a weight near the largest float, stored from an earlier reference
                raise SumsOverflowError("w: weights decayed from the reference time would overflow")
        if t_ref == self._t_ref:  # the usual case: straight into the state (all or nothing)
            self._acc.update_many(*args, w=decayed, **kwargs)
        else:  # a rescale: the state rescaled (a new accumulator), the batch counted into it (all or nothing: the
            # state is replaced only then), as what the state learnt takes it (a segment's classes)
            rescaled = self._acc.scaled(2.0 ** ((self._t_ref - t_ref) / self.half_life))
            rescaled.update_many(*args, w=decayed, **kwargs)
            self._acc = rescaled
            self._t_ref = t_ref

    def accumulator(self) -> Any:
        """An accumulator of the decayed counts as seen at the latest event (that event weighs its own weight)."""
        self._fold()
        if not math.isfinite(self._latest):
            return self._acc.copy()
        return self._acc.scaled(2.0 ** ((self._t_ref - self._latest) / self.half_life))

    def get(self) -> Any:
        """The report with weights as seen at the latest event (that event weighs its own weight)."""
        return self.accumulator().get()

    def merge(self, other: Decayed) -> Decayed:
        """Both decayed streams as one (same half-life and clock kind)."""
        if not isinstance(other, Decayed):
            raise TypeError(f"can only merge a Decayed with another, got {type(other).__name__}")
        if (self.half_life, self.by) != (other.half_life, other.by):
            raise ValueError("cannot merge decayed accumulators with different half_life or by")
        self._fold()
        other._fold()
        new = Decayed(self._factory, self.half_life, self.by)
        ref = max(self._t_ref, other._t_ref)
        a = self._acc.scaled(2.0 ** ((self._t_ref - ref) / self.half_life))
        b = other._acc.scaled(2.0 ** ((other._t_ref - ref) / self.half_life))
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
    every : int, float or timedelta
        Events between records (``by="events"``) or event time between them
        (``by="time"``: pass ``t=`` to updates; it is also passed on to a
        time-based window). Times may be instants, read as seconds since
        1970-01-01 UTC, as :class:`TimeWindow` reads them; ``every`` is then
        in seconds, or a duration, and each record's ``time`` is in seconds.
    by : "events" or "time"
    drift_reference : ScoreAccumulator, BinaryAccumulator, window or ScoreReport, optional
        With it (and score accumulators or windows over them to monitor),
        every record also holds the drift of the current scores against this
        fixed reference: ``drift_ks``, ``drift_ks_pvalue``, ``drift_psi``,
        ``drift_js``, ``drift_wasserstein`` (``nan`` while there are no
        current scores); of a ``Segmented`` one, those of all its scores,
        then each segment's as ``"<segment>/drift_ks"``, ... See
        :func:`streameval.drift`.
    metrics : sequence of str, optional
        The metrics each record holds (with ``time`` and ``n``); default
        every scalar metric of the report. Of a ``Segmented`` accumulator,
        the whole's, then each segment's as ``"<segment>/<metric>"``. A record computes the metrics it
        holds: a few of them cost far less than all (every metric of a
        binary report of 2,291 bins of probabilities took 0.19 ms on a
        2-core x86-64 machine, ``auc`` and ``accuracy`` 24 µs).

    Notes
    -----
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

    def __init__(
        self,
        accumulator: Any,
        every: float,
        by: str = "events",
        drift_reference: Any = None,
        metrics: Iterable[str] | None = None,
    ) -> None:
        if drift_reference is not None:
            refuse_class("drift_reference", drift_reference)
            drift(drift_reference, drift_reference)  # refuses what is not a score distribution, or an empty one
        self.drift_reference = drift_reference
        refuse_class("accumulator", accumulator)
        if not hasattr(accumulator, "get"):
            raise TypeError(f"accumulator must be an accumulator or window, got {type(accumulator).__name__}")
        if drift_reference is not None:  # said now, not at the first record, once a batch is counted
            try:
                drift_record(drift_reference, accumulator)
            except TypeError as exc:
                raise TypeError(f"with a drift_reference, accumulator must hold scores: {exc}") from None
        if by not in ("events", "time"):
            raise ValueError(f"by must be 'events' or 'time', got {by!r}")
        self.by = by
        self.every = _count("every", every) if by == "events" else check_duration("every", every)
        self.accumulator = accumulator
        self.metrics = self._checked_metrics(metrics)
        self._records: list[dict[str, Any]] = []
        self._count_one = accumulator.update
        self._time_kw = takes_event_time(accumulator)  # passed on to a window that takes them
        self._start_counter(0, self.every if by == "events" else None)

    def _checked_metrics(self, metrics: Iterable[str] | None) -> tuple[str, ...] | None:
        if metrics is None:
            return None
        if isinstance(metrics, str):
            metrics = [metrics]
        names = list(metrics)
        known = self.accumulator.get().to_dict()
        for name in names:
            if not isinstance(name, str) or name not in known:
                raise ValueError(f"metrics must name metrics of the report, got {name!r} (known: {sorted(known)})")
        return tuple(names)

    def _start_counter(self, events: int, due: float | None, next_time: float | None = None) -> None:
        """The per-event path in C: the accumulator's update (with the time passed on to a window that takes it)
        and a count; by events, a comparison with the next count at which to record; by time, an event before the
        next record's time (once known) is only counted."""
        by_time = self.by == "time"
        self._counter = EventCounter(
            self._count_one, self._due, self._update_checked, sys.maxsize, by_time, self._time_kw
        )
        self._counter.events = events
        self._next_count = math.inf if due is None else due
        self._next = next_time
        self.update = self._counter.update  # type: ignore[method-assign]

    @property
    def _next(self) -> float | None:
        """By time, the time of the next record (``None`` before the first event)."""
        when = float(self._counter.next_time)
        return None if math.isnan(when) else when

    @_next.setter
    def _next(self, value: float | None) -> None:
        self._counter.next_time = math.nan if value is None else value

    @property
    def _events(self) -> int:
        return int(self._counter.events)

    @_events.setter
    def _events(self, value: int) -> None:
        self._counter.events = value

    @property
    def _next_count(self) -> float:
        due = self._counter.due
        return math.inf if due == sys.maxsize else due

    @_next_count.setter
    def _next_count(self, value: float) -> None:
        self._counter.due = sys.maxsize if value == math.inf else int(value)

    def _due(self) -> None:
        self._after(0, None)

    def __getstate__(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("_counter", "update", "_count_one")}
        state["_counter_state"] = (self._events, None if self._next_count == math.inf else self._next_count)
        state["_next"] = self._next
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        events, due = state.pop("_counter_state")
        next_time = state.pop("_next", None)
        self.__dict__.update(state)
        self._count_one = self.accumulator.update
        self._start_counter(events, due, next_time)

    def update(self, *args: Any, t: float | None = None, **kwargs: Any) -> None:
        """Update the accumulator with one event, then record if a boundary was reached."""
        if t is None and not kwargs:
            self._counter.update(*args)
        else:
            self._update_checked(*args, t=t, **kwargs)

    def _update_checked(self, *args: Any, t: float | None = None, **kwargs: Any) -> None:
        if t is None and not kwargs and not self._time_kw and self.by == "events":  # the common case
            self._count_one(*args)
            self._events += 1
            if self._events >= self._next_count:
                self._after(0, None)
            return
        if self.by == "time" and t is None:
            raise ValueError("t is required when the monitor records by time")
        when = None if t is None else check_time("t", t)  # checked before anything is counted
        if self._time_kw:
            kwargs["t"] = when  # read once: the window takes the seconds as it would have read them
        self._count_one(*args, **kwargs)
        self._after(1, None if when is None else (when, when))

    def update_many(self, *args: Any, t: Any = None, **kwargs: Any) -> None:
        """Update the accumulator with a batch, then record if a boundary was crossed."""
        if self.by == "time" and t is None:
            raise ValueError("t is required when the monitor records by time")
        n = _batch_length(args)
        times, ascending = (None, True) if t is None else _event_times(t, n)  # checked before anything is counted
        if self._time_kw:
            kwargs["t"] = times  # read once: the window takes the seconds as it would have read them
        self.accumulator.update_many(*args, **kwargs)
        self._after(n, None if times is None or times.size == 0 else _time_span(times, ascending))

    def _after(self, n: int, span: tuple[float, float] | None) -> None:
        self._events += n
        if self.by == "events":
            if self._events >= self._next_count:  # a boundary reached or crossed: record at the last one
                self._record(self._events // self.every * self.every)
                self._next_count = (self._events // self.every + 1) * self.every
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
        segmented = isinstance(report, SegmentedReport)
        if self.metrics is None:
            row.update(report.to_dict())
        else:  # a segmented one: the whole's, then each segment's as "<segment>/<metric>"
            names = ("n", *self.metrics)
            row.update(report.to_dict(names) if segmented else {name: metric_value(report, name) for name in names})
        if self.drift_reference is not None:  # a binary one: its scores; a segmented one: each segment's too
            row.update(drift_record(self.drift_reference, self.accumulator, report.labels() if segmented else None))
        self._records.append(row)

    def record_now(self, time: float | None = None) -> None:
        """Take a record now (for instance at the end of a stream)."""
        self._record(self._events if time is None else time)

    def get(self) -> Any:
        """The report of the accumulator or window it records.

        Examples
        --------
        >>> import streameval as se
        >>> mon = se.Monitor(se.BinaryAccumulator(), every=10)
        >>> mon.update_many([1, 0], [0.9, 0.2])
        >>> mon.get().auc
        1.0
        """
        return self.accumulator.get()

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


def takes_event_time(target: Any) -> bool:
    """Whether ``target``'s ``update`` takes the event time ``t=``: a time window, a decay by time, or a monitor
    by time or of either.

    Examples
    --------
    >>> import streameval as se
    >>> takes_event_time(se.Monitor(se.TimeWindow(se.BinaryAccumulator, width=60.0), every=100))
    True
    >>> takes_event_time(se.Sliding(se.BinaryAccumulator, size=100))
    False
    """
    if isinstance(target, Monitor):
        return target.by == "time" or takes_event_time(target.accumulator)
    return isinstance(target, TimeWindow) or (isinstance(target, Decayed) and target.by == "time")
