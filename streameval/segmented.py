"""Segmented: one accumulator per segment (region, device, a protected attribute, ...), merged and compared.

A :class:`Segmented` accumulator keeps one accumulator of any kind per
segment value and has the whole accumulator protocol itself: shards with
different segments merge (their union), states save and load, windows and
``Locked`` take it. Its report, :class:`SegmentedReport`, compares the
segments: per-group values of any metric, their spread, and the fairness
measures of Fairlearn (``fairlearn.metrics``) with the same definitions.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import Any, ClassVar, NamedTuple

import numpy as np

from . import io
from ._codec import FormatError, decode_segment, encode_segment, require_fields
from ._compiled import SPEEDUPS
from ._events import SegmentRouter, is_small_batch
from ._numeric import event_groups, object_codes
from ._validation import column_as_numpy, is_missing, is_one_value, show, table_rows, table_tuples, unmasked
from .averaging import metric_value, text_columns
from .protocol import AccumulatorBase, batch_weight, can_take

__all__ = ["Segmented", "SegmentedReport"]

DEFAULT_MAX_SEGMENTS = 10_000
COUNT_APART_UP_TO = 64  # a batch reaching more segments counted before checks itself whole and counts in place
ONE_BY_ONE_UP_TO = 256  # a batch this small of segments counted before goes to them event by event
# the same with keywords of each event's own (a dict a call): as costly as the batch path at about 64 events
# (72-80 against 70-77 us), less at 32 (46-52 against 81-97 us), into 4 segments
ONE_BY_ONE_KEYWORDS_UP_TO = 48
# the columns of a summary, where the report has them, and which way is worse
SUMMARY_METRICS = (
    "n", "auc", "average_precision", "precision", "recall", "f1", "fpr", "selection_rate", "brier", "ece",
    "accuracy", "macro_f1", "mae", "rmse", "r2", "mean", "median",
    "a_accuracy", "b_accuracy", "mcnemar_p_value",  # two models (a paired accumulator's segments)
)  # fmt: skip
SMALLER_IS_BETTER = frozenset(
    {"fpr", "fnr", "error_rate", "brier", "log_loss", "ece", "mce", "eer", "mae", "mse", "rmse", "mape",
     "max_error", "median_absolute_error", "rank_loss"}
)  # fmt: skip
NEUTRAL = frozenset(
    {
        "n",
        "weight",
        "positives",
        "negatives",
        "selection_rate",
        "mean",
        "median",
        "std",
        "min",
        "max",
        "mcnemar_p_value",
    }
)


def segment_key(value: Any) -> Hashable:
    """A segment value as a dict key: numpy scalars as Python ones, tuples element by element.

    ``TypeError`` for a value that is not hashable, ``ValueError`` for NaN
    (it equals nothing, not even itself).
    """
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, tuple):
        return tuple(segment_key(v) for v in value)
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"segment must be hashable (a str, int, tuple, ...), got {show(value)}") from None
    if is_missing(value):
        raise ValueError(
            f"segment must not be {value!r} (a missing value): give missing values a name such as 'unknown'"
        )
    return value


def _factorized(values: Any) -> tuple[list[Hashable], np.ndarray] | None:
    """pandas' hash-based factorization, when pandas is there and the values are plain hashable ones."""
    try:
        import pandas as pd
    except ImportError:
        return None
    try:
        codes, uniques = pd.factorize(values)
    except TypeError:  # unhashable values: the plain path names the first
        return None
    missing = np.flatnonzero(codes < 0)
    if missing.size:
        i = int(missing[0])
        raise ValueError(f"segments must not hold missing values (None, NaN), got one at index {i}")
    return [segment_key(u) for u in uniques], np.asarray(codes)


def _small_integer_codes(values: np.ndarray) -> tuple[list[Hashable], np.ndarray, np.ndarray] | None:
    """The compiled codes of integer segments spread over at most 2^20 values, and the events of each code
    (``None`` otherwise)."""
    if SPEEDUPS is None or values.dtype.kind != "i":
        return None
    values = np.ascontiguousarray(values)
    codes = np.empty(values.size, dtype=np.int32)
    found = SPEEDUPS.small_codes(values, values.dtype.itemsize, codes)
    if found is None:
        return None
    return np.frombuffer(found[0], dtype=np.int64).tolist(), codes, np.frombuffer(found[1], dtype=np.int64)


def _first_appearance(values: np.ndarray) -> tuple[list[Hashable], np.ndarray]:
    """The distinct numbers of a batch in order of first appearance (as pandas and the compiled path give them),
    and each event's index into them."""
    codes, first = _numbered(values)
    return [segment_key(v) for v in values[first]], codes


def _numbered(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each value's code in order of first appearance, and the index of each code's first value."""
    try:
        import pandas as pd
    except ImportError:
        _, first, codes = np.unique(values, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(order.size, dtype=np.int64)
        rank[order] = np.arange(order.size)
        return rank[codes.reshape(-1)], first[order]
    codes, uniques = pd.factorize(values)
    first = np.full(len(uniques), values.size, dtype=np.int64)
    np.minimum.at(first, codes, np.arange(values.size))
    return np.asarray(codes), first


def _fixed_width_codes(values: np.ndarray) -> tuple[list[Hashable], np.ndarray] | None:
    """Codes of numpy strings (``U`` or ``S``) through a hash of their bytes, checked against the strings
    themselves (``None`` when two strings share a hash): no Python string is made but one per segment."""
    n, size = values.size, values.dtype.itemsize
    unit = np.uint64 if size % 8 == 0 else np.uint32 if size % 4 == 0 else np.uint8
    words = np.ascontiguousarray(values).view(unit).reshape(n, size // np.dtype(unit).itemsize)
    hashed = words[:, 0].astype(np.uint64)
    for w in range(1, words.shape[1]):
        hashed *= np.uint64(0x9E3779B97F4A7C15)
        hashed += words[:, w]
    codes, first = _numbered(hashed)
    if not np.array_equal(values, values[first][codes]):
        return None
    return [segment_key(v) for v in values[first]], codes


def _segment_codes(segments: Any) -> tuple[list[Hashable], np.ndarray, np.ndarray | None]:
    """The distinct segments of a batch (in order of first appearance), each event's index into them, and the
    events of each segment when they were counted on the way (else ``None``)."""
    segments = table_tuples(segments)  # a pyarrow or polars table of segment columns: crossed segments
    if SPEEDUPS is not None:  # pandas and pyarrow integers without missing values: as numpy's
        as_numpy = column_as_numpy(segments)
        if isinstance(as_numpy, np.ndarray) and as_numpy.ndim == 1 and as_numpy.dtype.kind == "i":
            segments = as_numpy
    if isinstance(segments, np.ndarray) and segments.ndim == 1:
        small = _small_integer_codes(segments)
        if small is not None:
            return small
        if segments.dtype.kind in "US" and segments.size and segments.dtype.itemsize:
            found = _fixed_width_codes(segments)
            if found is not None:
                return (*found, None)
    return (*_plain_segment_codes(segments), None)


def _object_codes(segments: Any) -> tuple[list[Hashable], np.ndarray] | None:
    """Compiled codes of a list (or an object array) of exact str and int segments, in order of first appearance
    through a dict, as pandas' factorization gives them; ``None`` for anything else."""
    if isinstance(segments, np.ndarray) and segments.ndim == 1 and segments.dtype == object:
        segments = segments.tolist()
    found = object_codes(segments) if type(segments) is list else None
    return None if found is None else ([segment_key(u) for u in found[0]], found[1])


def _plain_segment_codes(segments: Any) -> tuple[list[Hashable], np.ndarray]:
    """:func:`_segment_codes` of anything: pandas' factorization when it is there, else numpy's or a dict's."""
    found = _object_codes(segments)
    if found is not None:
        return found
    if _is_pandas(segments):
        found = _factorized(segments)
        if found is not None:
            return found
    segments = column_as_numpy(segments)
    if isinstance(segments, np.ndarray) and segments.ndim == 1:
        arr = segments
    elif isinstance(segments, (list, tuple)) or (isinstance(segments, np.ndarray) and segments.ndim != 1):
        if isinstance(segments, np.ndarray) and segments.ndim == 0:
            raise TypeError(f"segments must be a 1-D array-like of segment values, got the scalar {show(segments)}")
        items = list(segments)
        arr = np.empty(len(items), dtype=object)  # tuples stay whole (numpy would make them rows)
        for i, v in enumerate(items):
            arr[i] = tuple(v) if isinstance(v, np.ndarray) else v
    elif isinstance(segments, (str, bytes)) or not hasattr(segments, "__len__"):
        raise TypeError(f"segments must be a 1-D array-like of segment values, got {show(segments)}")
    else:
        arr = _object_rows(segments)
    if arr.dtype.kind != "O" or not any(isinstance(v, tuple) for v in arr[:1]):
        found = _factorized(arr)
        if found is not None:
            return found
    if arr.dtype.kind in "biu":
        return _first_appearance(arr)
    if arr.dtype.kind == "f":
        bad = np.flatnonzero(np.isnan(arr))
        if bad.size:
            raise ValueError(f"segments must not be NaN (a missing value), got nan at index {bad[0]}")
        return _first_appearance(arr)
    index: dict[Hashable, int] = {}
    keys: list[Hashable] = []
    codes = np.empty(arr.size, dtype=np.intp)
    for i, v in enumerate(arr.tolist() if arr.dtype.kind in "US" else arr):
        try:
            key = segment_key(v)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{exc} (segments, index {i})") from None
        code = index.get(key)
        if code is None:
            code = index[key] = len(keys)
            keys.append(key)
        codes[i] = code
    return keys, codes


def _is_pandas(value: Any) -> bool:
    return type(value).__module__.startswith("pandas")


class _ListRows(np.ndarray):
    """An object array of the rows a list gave (mappings such as river's ``predict_proba_one``, or sequences of
    class scores of different lengths, as while classes are learnt): each segment gets its rows as a list, as the
    accumulator would get the list itself."""


def _rows(name: str, value: Any, n: int) -> Any:
    """A per-event argument as an array whose rows can be taken (scalars and ``None`` as they are)."""
    if value is None or is_one_value(value):
        return value
    value = column_as_numpy(value)
    if isinstance(value, list) and value and isinstance(value[0], dict):
        arr: np.ndarray = _list_rows(value)
    else:
        try:
            arr = np.asarray(value)
        except ValueError:  # rows of different lengths: kept as they are
            if not isinstance(value, (list, tuple)):
                raise
            arr = _list_rows(value)
    if len(arr) != n:
        raise ValueError(f"{name} must hold one value per segment value ({n}), got {len(arr)}")
    return arr


def _object_rows(values: Any) -> np.ndarray:
    """An object array of the values themselves (numpy would make rows of lists and tuples)."""
    rows = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        rows[i] = v
    return rows


def _list_rows(values: list[Any] | tuple[Any, ...]) -> _ListRows:
    return _object_rows(values).view(_ListRows)


def _small_segment_values(segments: Any, limit: int) -> list[Any] | None:
    """A batch's segment values as a list when there are 1 to ``limit`` of them and they are plain str or int
    values (a numpy array of integers or strings, or a list of exact str and int values); ``None`` for anything
    else (a larger batch is not looked at)."""
    if type(segments) is np.ndarray:
        if segments.ndim != 1 or not 0 < segments.size <= limit or segments.dtype.kind not in "iuU":
            return None
        return segments.tolist()
    if type(segments) is list and 0 < len(segments) <= limit and set(map(type, segments)) <= {str, int}:
        return segments
    return None


def _event_values(value: Any, n: int) -> list[Any] | None:
    """A column's ``n`` values, one an event: of a 1-D numpy array of numbers or bools, or a list; else ``None``."""
    if type(value) is np.ndarray and value.ndim == 1 and value.size == n and value.dtype.kind in "biuf":
        return value.tolist()
    if type(value) is list and len(value) == n:
        return value
    return None


class Segmented(AccumulatorBase):
    """One accumulator per segment, of any kind, with the whole accumulator protocol.

    Parameters
    ----------
    factory : callable
        Returns an empty accumulator (any kind; its configuration is every
        segment's).
    max_segments : int, default 10,000
        A batch or a merge that would make more segments is refused whole.

    Examples
    --------
    >>> import streameval as se
    >>> seg = se.Segmented(se.BinaryAccumulator)
    >>> seg.update("eu", 1, 0.9)
    >>> seg.update_many(["eu", "us", "us", "eu"], [0, 1, 0, 1], [0.2, 0.4, 0.6, 0.7])
    >>> r = seg.get()
    >>> r.segments, r["us"].n, r.overall.n
    (['eu', 'us'], 2, 5)
    >>> r.by_group("recall")
    {'eu': 1.0, 'us': 0.0}
    >>> r.difference("recall")
    1.0
    """

    kind: ClassVar[str] = "segmented"

    def __init__(self, factory: Callable[[], Any], max_segments: int = DEFAULT_MAX_SEGMENTS) -> None:
        if not callable(factory):
            raise TypeError(f"factory must be a callable that returns an empty accumulator, got {factory!r}")
        template = factory()
        if not all(hasattr(template, name) for name in ("update_many", "merge", "get", "copy", "n")):
            raise TypeError(f"factory must return an accumulator, got {type(template).__name__}")
        if template.n:
            raise ValueError(f"factory must return an empty accumulator, got one of n={template.n}")
        if isinstance(max_segments, bool) or not isinstance(max_segments, (int, np.integer)):
            raise TypeError(f"max_segments must be a whole number, got {max_segments!r}")
        if max_segments < 1:
            raise ValueError(f"max_segments must be >= 1, got {show(max_segments)}")
        self.max_segments = int(max_segments)
        self._template = template
        self._segments: dict[Hashable, Any] = {}
        self._like: weakref.ref[Segmented] | None = None  # see _fresh_segment
        self._start_router()

    def _start_router(self) -> None:
        """Per-event updates: an event of a segment named by a str or an int goes straight to its accumulator's
        update (compiled); ``_routes`` holds those updates, added by the checked path and cleared by any other
        change of the segments."""
        self._routes: dict[Hashable, Callable[..., Any]] = {}
        self._router = SegmentRouter(self._update_slow, self._routes)
        self.update = self._router.update  # type: ignore[method-assign]

    def __getstate__(self) -> dict[str, Any]:
        left_out = ("_routes", "_router", "update", "_like", "_checker")  # made again (the checker when needed)
        return {k: v for k, v in self.__dict__.items() if k not in left_out}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._like = None
        self._start_router()

    def _fresh_segment(self, key: Hashable) -> Any:
        """An empty accumulator for a segment new here: where this one was emptied from another that still lives
        and holds the segment, that segment emptied (the classes it learnt, in their order: a score sequence given
        since means the same), else one of the factory's."""
        like = None if self._like is None else self._like()
        source = None if like is None else like._segments.get(key)
        return self._template.copy() if source is None else source.emptied()

    # -- reading the segments ---------------------------------------------------------
    @property
    def segments(self) -> list[Hashable]:
        """The segments counted so far, in order of first appearance."""
        return list(self._segments)

    def __len__(self) -> int:
        return len(self._segments)

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._segments)

    def __getitem__(self, segment: Any) -> Any:
        """The accumulator of ``segment`` (``KeyError`` if it was never counted)."""
        return self._segments[segment_key(segment)]

    def _room(self, new: int) -> None:
        if len(self._segments) + new > self.max_segments:
            raise ValueError(
                f"this would make {len(self._segments) + new} segments, more than max_segments={self.max_segments} "
                "(each holds an accumulator: a larger max_segments allows more)"
            )

    # -- updating -------------------------------------------------------------------
    def update(self, segment: Any, *event: Any, **kwargs: Any) -> None:
        """Count one event of ``segment``: the rest are the segment accumulator's ``update`` arguments.

        Once a segment named by a ``str`` or an ``int`` has an event, its next
        events go straight to its accumulator's ``update`` (compiled): about
        twice a no-op call with the binary accumulator.

        Examples
        --------
        >>> import streameval as se
        >>> seg = se.Segmented(se.RegressionAccumulator)
        >>> seg.update(("eu", "mobile"), 3.0, 2.5)
        >>> seg.segments
        [('eu', 'mobile')]
        """
        self._update_slow(segment, *event, **kwargs)

    def _update_slow(self, segment: Any, *event: Any, **kwargs: Any) -> None:
        """Count one event of a segment that is not routed yet (or not named by a str or an int)."""
        key = segment_key(segment)
        acc = self._segments.get(key)
        if acc is None:
            self._room(1)
            acc = self._fresh_segment(key)
            acc.update(*event, **kwargs)  # a refusal leaves no new segment behind
            self._check_joins([(key, acc)])
            self._segments[key] = acc
        else:
            acc.update(*event, **kwargs)
        if type(segment) is str or type(segment) is int:  # the value is its own key: route its next events
            self._routes[segment] = acc.update

    # a call with a missing segment fails in here: the message names the method the caller called
    _update_slow.__qualname__ = "Segmented.update"

    def update_many(self, segments: Any, *columns: Any, **kwargs: Any) -> None:
        """Count many events: their segments, then the segment accumulators' ``update_many`` arguments.

        All of the events or, on any bad input, none: no segment changes.

        Examples
        --------
        >>> import numpy as np
        >>> import streameval as se
        >>> seg = se.Segmented(se.BinaryAccumulator)
        >>> seg.update_many(np.array([1, 2, 1]), [1, 0, 2], [0.9, 0.1, 0.3])
        Traceback (most recent call last):
        ...
        ValueError: y must be 1 (positive) or 0 (negative), got 2 at index 2 (segment 1)
        >>> len(seg)
        0
        """
        if self._counted_one_by_one(segments, columns, kwargs):
            return
        self._routes.clear()  # the segments change: routes are found again by the checked path
        segments = unmasked("segments", segments)
        if self._counted_in_place(segments, columns, kwargs):
            return
        batch = _by_segment(segments, columns, kwargs)
        keys, codes, cols, kw, n = batch.keys, batch.codes, batch.cols, batch.kw, batch.codes.size
        if n == 0:
            return
        self._room(sum(k not in self._segments for k in keys))
        # with few segments counted before, each segment's events are counted apart, in an empty accumulator in its
        # regime (binned events added to binned counts need no conversion), then added: on bad input no segment
        # has changed. With many, making and adding those costs more than checking the batch whole first and
        # counting each segment's events in place; so it does for a small batch, whose check costs little, where
        # adding a part merges it into each segment's whole table of scores (10 events into 4 segments: 270 us)
        in_place = sum(k in self._segments for k in keys) > COUNT_APART_UP_TO or (
            is_small_batch(n) and hasattr(self._template, "subtract")
        )
        if in_place:
            try:
                self._template.copy().update_many(*cols, **kw)
            except (TypeError, ValueError):  # a segment may take what a fresh accumulator does not (a sequence of
                in_place = False  # scores in the classes it learnt): each segment's events checked by its own
        parts: list[tuple[Hashable, Any, Any]] = []  # (segment, its accumulator or None when new, its events')
        applied: list[tuple[Hashable, Any]] = []  # (segment, what was added: None when new, or its events)
        saved = self._saved_if_weighted(keys, columns, kwargs, n)
        try:
            for key, (args, keywords) in zip(keys, batch.parts, strict=True):
                target = self._segments.get(key)
                if target is not None and in_place:
                    counting = target
                elif target is None:
                    counting = self._fresh_segment(key)
                elif not hasattr(target, "subtract"):
                    counting = self._template.copy()
                else:
                    counting = target - target
                refusal: TypeError | ValueError | None = None
                try:
                    counting.update_many(*args, **keywords)
                except (TypeError, ValueError) as exc:
                    refusal = exc
                if refusal is not None:
                    first = None if in_place else _first_refusal(self._template, cols, kw, n)
                    if first is not None:  # name the batch's first bad event, and its segment
                        at, error = first
                        raise type(error)(f"{error} (segment {show(keys[int(codes[at])])})")
                    raise type(refusal)(f"{refusal} (in segment {show(key)}, counting its events from 0)")
                if counting is target:
                    applied.append((key, (args, keywords)))
                else:
                    parts.append((key, target, counting))
            self._check_joins([(key, part) for key, target, part in parts if target is None])
            for key, target, part in parts:
                if target is None:
                    self._segments[key] = part
                    applied.append((key, None))
                else:
                    target += part  # only a total weight past the largest float can fail here
                    self._segments[key] = target
                    applied.append((key, part))
        except BaseException:
            self._undo(applied, saved)
            raise

    def _saved_if_weighted(
        self, keys: Iterable[Hashable], columns: tuple[Any, ...], kwargs: dict[str, Any], n: int
    ) -> dict[Hashable, Any]:
        """Copies of the segments ``keys`` counted before, when a weighted batch could take one of them past the
        largest float (none for a batch without weights): such a batch may be refused past its check, and taking
        its events back out of the segments it reached would leave float sums within rounding of what they were
        (and float counts where they were whole). A refusal puts these copies back (:meth:`_put_back`). Where
        the kind tells of every one of them that the batch's total weight surely fits (``_can_take``), none
        can refuse and none is copied: a copy files the events stored for it. Weighted batches of 10 events into 4
        segments, against the undo by subtraction before: binary, whose segments tell and are not copied, 29-30
        against 20-21 us (binned segments: the check itself); regression 410 against 114-124, scores 596-615
        against 111-114 (kinds that cannot tell yet: copied every batch). Multiclass segments tell (their total
        weight is all that can overflow, and their stored events' weights are each at most 1e290): into 4
        segments of 5 classes that counted 1,000 events, 0.34-0.35 ms binned and 0.31-0.32 ms exact, against
        1.24-1.32 and 2.16-2.43 ms when they were copied and each segment counted its part at once."""
        weight = batch_weight(type(self._template), columns, kwargs, n)
        if weight is None:
            return {}
        reached = {key: self._segments[key] for key in keys if key in self._segments}
        if all(can_take(acc, weight) for acc in reached.values()):
            return {}
        return {key: acc.copy() for key, acc in reached.items()}

    def _put_back(self, saved: dict[Hashable, Any]) -> None:
        """The segments saved before a refused batch as they were: each accumulator takes its copy's state back
        in place (the object a caller may hold stays the segment's), or, of a kind without that, is replaced."""
        for key, copy in saved.items():
            restore = getattr(self._segments.get(key), "_restore", None)
            if restore is not None:
                restore(copy)
            else:
                self._segments[key] = copy
        self._routes.clear()  # a restored segment's update is its copy's

    def _taken_alone(self, columns: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Whether an accumulator of the segments' configuration takes a small batch whole (it refuses a bad one,
        with nothing changed): a scratch accumulator kept for these checks, which has taken the batches checked
        before and is never read (10 events into 4 segments counted before: 7.6 to 8.5 against 11.9 to 13.1 us
        when each check copied the template, an empty accumulator, as the batch path's check still does). A batch
        it refuses that an empty one takes (its total weight past the largest float) goes the batch path, which
        counts it."""
        checker = self.__dict__.get("_checker")
        if checker is None:
            checker = self._checker = self._template.copy()
        try:
            checker.update_many(*columns, **kwargs)
        except (TypeError, ValueError):
            return False
        return True

    def _counted_one_by_one(self, segments: Any, columns: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Whether a small batch of segments counted before, named by str or int values, was counted event by
        event through their accumulators' ``update`` (10 events into 4 segments: 11.9-12.7 against 44.5-51.6 us,
        str segments 12.7-13.6 against 100.4-107.4; 100 events: 27.1-28.1 against 51.2-66.5 us). Its columns
        give one value an event (1-D numpy arrays of numbers or bools, or lists; keywords one value for all, or
        one an event in a batch of up to ``ONE_BY_ONE_KEYWORDS_UP_TO``). The batch is checked whole first
        (:meth:`_taken_alone`), as the batch path checks a batch it counts in place, and an event a segment still
        refuses takes the events before it back out of their segments (or, where the batch is weighted, puts
        back the segments saved before it: :meth:`_saved_if_weighted`). ``False`` with nothing changed
        otherwise: the batch path counts the batch or explains why not.
        """
        own = [k for k, v in kwargs.items() if not is_one_value(v)]  # keywords of each event's own
        values = _small_segment_values(segments, ONE_BY_ONE_KEYWORDS_UP_TO if own else ONE_BY_ONE_UP_TO)
        if values is None or not columns:
            return False
        n = len(values)
        rows: list[list[Any]] = []  # each column's values, an event each, then each such keyword's
        for column in (*columns, *(kwargs[k] for k in own)):
            row = _event_values(column, n)
            if row is None:
                return False
            rows.append(row)
        fixed = {k: v for k, v in kwargs.items() if k not in own}  # one value for every event
        updates = {}
        for key in set(values):
            # a new segment (the batch path makes it), or a kind written against the batch protocol alone
            update = getattr(self._segments.get(key), "update", None)
            if update is None:
                return False
            updates[key] = functools.partial(update, **fixed) if fixed else update
        if not self._taken_alone(columns, kwargs):
            return False
        saved = self._saved_if_weighted(updates, columns, kwargs, n)
        width, done = len(columns), 0
        try:
            if own:
                for segment, event, given in zip(
                    values, zip(*rows[:width], strict=True), zip(*rows[width:], strict=True), strict=True
                ):
                    updates[segment](*event, **dict(zip(own, given, strict=True)))
                    done += 1
            else:
                for segment, event in zip(values, zip(*rows, strict=True), strict=True):
                    updates[segment](*event)
                    done += 1
        except BaseException as exc:
            # the events counted so far taken back out of their segments, as the batch path takes its parts (or,
            # weighted, the segments put back as they were)
            if saved:
                self._put_back(saved)
            else:
                taken = {k: v if k in fixed else v[:done] for k, v in kwargs.items()}
                batch = _by_segment(segments[:done], tuple(c[:done] for c in columns), taken)
                self._undo(list(zip(batch.keys, batch.parts, strict=True)))
            self._routes.clear()  # a segment taken back may be a new accumulator (a kind without in-place sums)
            if isinstance(exc, (TypeError, ValueError)):
                return False
            raise
        return True

    def _counted_in_place(self, segments: Any, columns: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Whether a batch of small integer segments was counted by the kind in one pass
        (``update_many_grouped``): without coding and grouping its events first (1e6 events in 4 segments:
        3.4-3.7 instead of 6 ms, new or counted before). The kind makes new segments' accumulators; they join in
        order of their first event once the batch is counted. ``False`` with nothing changed otherwise."""
        # a kind without the pass (the base's says no, and a kind written against the protocol alone may lack
        # it): the groups need not be found
        grouped = getattr(type(self._template), "update_many_grouped", AccumulatorBase.update_many_grouped)
        if SPEEDUPS is None or not columns or grouped is AccumulatorBase.update_many_grouped:
            return False
        as_numpy = column_as_numpy(segments)  # pandas and pyarrow integers without missing values: as numpy's
        found = event_groups(as_numpy) if isinstance(as_numpy, np.ndarray) else None
        if found is None:
            return False
        keys, appearing, groups = found
        targets = [self._segments.get(key) for key in keys]  # None for a new segment: the kind makes it
        if len(self._segments) + sum(target is None for target in targets) > self.max_segments:
            return False  # the other path refuses the batch, after its other checks
        if not self._template.update_many_grouped(targets, groups, *columns, **kwargs):
            return False
        made = dict(zip(keys, targets, strict=True))
        for key in appearing:  # new segments in order of their first event, after the segments there were
            self._segments.setdefault(key, made[key])
        return True

    def _check_joins(self, joining: list[tuple[Hashable, Any]], what: str = "new segment") -> None:
        """A ``ValueError`` naming the segment unless each accumulator joining adds up with its segment here, or
        with the segments there are (the same kind of events, such as class scores or predicted classes): every
        segment merges into the overall report."""
        if not joining or not hasattr(self._template, "check_mergeable"):  # a kind written against the protocol
            return
        like = next(iter(self._segments.values()), joining[0][1])
        for key, acc in joining:
            try:
                self._segments.get(key, like).check_mergeable(acc)
            except ValueError as exc:
                raise ValueError(f"{what} {show(key)} cannot join the others: {exc}") from None

    def _undo(self, applied: list[tuple[Hashable, Any]], saved: dict[Hashable, Any] | None = None) -> None:
        """Take a failed batch's events back out of the segments it reached (new ones go; those ``saved`` before
        the batch are put back as they were)."""
        saved = saved or {}
        for key, added in reversed(applied):
            if added is None:
                self._segments.pop(key, None)
                continue
            if key in saved:
                continue
            if isinstance(added, tuple):  # counted in place: its events, counted again to be taken out
                part = self._template.copy()
                part.update_many(*added[0], **added[1])
                added = part
            self._segments[key] -= added
        self._put_back({key: saved[key] for key, _ in applied if key in saved})

    def revert_many(self, segments: Any, *columns: Any, **kwargs: Any) -> None:
        """Take a batch of events counted before back out (:meth:`update_many`'s arguments); all of them or, on bad
        input or an event never counted, none. Each segment's events leave its accumulator by that one's
        ``revert_many``; a segment left with no events goes.

        Examples
        --------
        >>> import streameval as se
        >>> seg = se.Segmented(se.BinaryAccumulator)
        >>> seg.update_many(["eu", "us", "eu"], [1, 0, 0], [0.9, 0.2, 0.4])
        >>> seg.revert_many(["us", "eu"], [0, 0], [0.2, 0.4])
        >>> seg.segments, seg["eu"].n
        (['eu'], 1)
        """
        batch = _by_segment(unmasked("segments", segments), columns, kwargs)
        for key in batch.keys:
            if key not in self._segments:
                raise ValueError(f"cannot take out events of segment {show(key)}: it was never counted")
        self._routes.clear()
        taken: list[tuple[Any, list[Any], dict[str, Any]]] = []  # (accumulator, its events) taken out so far
        saved = self._saved_if_weighted(batch.keys, columns, kwargs, batch.codes.size)  # put back, not counted in
        try:
            for key, (args, keywords) in zip(batch.keys, batch.parts, strict=True):
                self._segments[key].revert_many(*args, **keywords)
                taken.append((self._segments[key], args, keywords))
        except BaseException:
            if saved:
                self._put_back(saved)
                raise
            for acc, args, keywords in reversed(taken):  # counted back in: those segments as they were
                acc.update_many(*args, **keywords)
            raise
        for key in batch.keys:
            if not self._segments[key].n:
                del self._segments[key]

    def revert(self, segment: Any, *event: Any, **kwargs: Any) -> None:
        """Take one event of ``segment`` back out (``ValueError``, and no change, if it was never counted)."""
        key = segment_key(segment)
        acc = self._segments.get(key)
        if acc is None:
            raise ValueError(f"cannot take out an event of segment {show(key)}: it was never counted")
        self._routes.clear()
        acc.revert(*event, **kwargs)
        if not acc.n:
            del self._segments[key]

    # -- reading ------------------------------------------------------------------------
    def get(self) -> SegmentedReport:
        """The reports of every segment and of all of them merged."""
        accs = list(self._segments.values())
        overall = type(self._template).merge_all(accs) if accs else self._template
        return SegmentedReport({k: a.get() for k, a in self._segments.items()}, overall.get())

    @property
    def n(self) -> int | float:
        """Events (or weight) over every segment."""
        return sum((acc.n for acc in self._segments.values()), 0)

    def lost_to_rounding(self) -> bool:
        """Whether a segment's accumulator says so (:meth:`AccumulatorBase.lost_to_rounding`)."""
        return any(acc.lost_to_rounding() for acc in self._segments.values() if hasattr(acc, "lost_to_rounding"))

    def empty_segment(self) -> Any:
        """An empty accumulator of the kind and configuration each new segment starts as (a copy).

        Examples
        --------
        >>> import streameval as se
        >>> seg = se.Segmented(lambda: se.MulticlassAccumulator(classes=["a", "b"]))
        >>> seg.empty_segment().classes, seg.empty_segment().n
        (('a', 'b'), 0)
        """
        return self._template.copy()

    # -- combining ----------------------------------------------------------------------
    def copy(self) -> Segmented:
        """An independent copy."""
        new = self._empty(like=None)  # its new segments start afresh, as this one's do
        new._segments = {k: a.copy() for k, a in self._segments.items()}
        return new

    def emptied(self) -> Segmented:
        """A new segmented accumulator of this one's kind, configuration and ``max_segments``, and no segments.

        A segment that comes to it starts as this one's segment emptied (the classes it learnt, in their order,
        so that a score sequence means the same), as long as this one lives; else as the factory makes it.

        Examples
        --------
        >>> import streameval as se
        >>> seg = se.Segmented(se.BinaryAccumulator, max_segments=5)
        >>> seg.update_many(["a", "b"], [1, 0], [0.9, 0.2])
        >>> fresh = seg.emptied()
        >>> fresh.n, fresh.max_segments
        (0, 5)
        """
        return self._empty(like=weakref.ref(self))  # a segment new there starts as this one's, while this lives

    def _empty(self, like: weakref.ref[Segmented] | None) -> Segmented:
        """No segments, this one's kind, configuration and ``max_segments``; new segments start as ``like``'s."""
        new = Segmented.__new__(Segmented)
        new.max_segments, new._template = self.max_segments, self._template.copy()
        new._segments = {}
        new._like = like
        new._start_router()
        return new

    def _less_itself(self) -> Segmented:
        """No segments: the segments less themselves are empty, and an empty segment is none."""
        return self.emptied()

    def _check_mergeable(self, other: Any) -> None:
        if not isinstance(other, Segmented):
            raise TypeError(f"can only merge a Segmented with another, got {type(other).__name__}")
        # raises unless the segment accumulators merge (a kind written against the protocol alone: by merging)
        getattr(self._template, "check_mergeable", self._template.merge)(other._template)
        # each of other's segments joins its own here, or any of these: checked before anything changes
        self._check_joins(list(other._segments.items()), "segment")

    def _restore(self, saved: Segmented) -> None:
        self._segments = saved._segments  # the copy's accumulators: its own, not shared with it
        self._routes.clear()

    def _merge_in(self, other: Segmented, sign: int) -> None:
        self._routes.clear()
        if sign > 0:
            self._room(sum(k not in self._segments for k in other._segments))
            merged = {}  # every segment's sum first: a refusal (a total weight past the largest float) changes nothing
            for key, acc in other._segments.items():
                mine = self._segments.get(key)
                merged[key] = acc.copy() if mine is None else mine + acc
            self._segments.update(merged)
            return
        result = {}
        for key, acc in other._segments.items():
            mine = self._segments.get(key)
            if mine is None:
                if acc.n:
                    raise ValueError(f"cannot take out segment {show(key)}: it was never counted")
                continue
            result[key] = mine - acc  # a refusal raises before anything changes
        for key, acc in result.items():
            if acc.n:
                self._segments[key] = acc
            else:
                del self._segments[key]

    def _scale_in(self, factor: float) -> None:
        self._routes.clear()
        self._segments = {k: a.scaled(factor) for k, a in self._segments.items()}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Segmented):
            return NotImplemented
        return (
            self.max_segments == other.max_segments
            and io.to_dict(self._template) == io.to_dict(other._template)
            and self._segments.keys() == other._segments.keys()
            and all(a == other._segments[k] for k, a in self._segments.items())
        )

    __hash__ = None  # type: ignore[assignment]

    # -- state ----------------------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        """The state: the empty accumulator every segment starts from, and each segment's state.

        Examples
        --------
        >>> import streameval as se
        >>> seg = se.Segmented(se.ScoreAccumulator)
        >>> seg.update_many([("eu", 1), ("us", 2)], [0.3, 0.8])
        >>> [s["tuple"][0] for s in seg.to_state()["segments"]]
        [{'str': 'eu'}, {'str': 'us'}]
        >>> se.Segmented.from_state(seg.to_state()) == seg
        True
        """
        return {
            "max_segments": self.max_segments,
            "template": io.to_dict(self._template),
            "segments": [encode_segment(k) for k in self._segments],
            "states": [io.to_dict(a) for a in self._segments.values()],
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> Segmented:
        """The accumulator of a :meth:`to_state` mapping; ``FormatError`` if anything in it is inconsistent."""
        d = dict(state)
        require_fields(d, "state", {"max_segments", "template", "segments", "states"})
        template = io.from_dict(d["template"])
        if template.n:
            raise FormatError(f"template must be an empty accumulator, got one of n={template.n}")
        segments, states = d["segments"], d["states"]
        if not isinstance(segments, list) or not isinstance(states, list) or len(segments) != len(states):
            raise FormatError("segments and states must be lists of the same length")
        try:
            out = cls(template.copy, max_segments=d["max_segments"])
        except (TypeError, ValueError) as exc:
            raise FormatError(f"state: {exc}") from None
        if len(segments) > out.max_segments:
            raise FormatError(f"{len(segments)} segments, more than max_segments={out.max_segments}")
        for i, (s, st) in enumerate(zip(segments, states, strict=True)):
            key = decode_segment(f"segments[{i}]", s)
            if key in out._segments:
                raise FormatError(f"segments[{i}] repeats the segment {show(key)}")
            acc = io.from_dict(st)
            try:
                template.merge(acc)
            except (TypeError, ValueError) as exc:
                raise FormatError(f"states[{i}] is not of the template's kind and configuration: {exc}") from None
            out._segments[key] = acc
        return out

    def __repr__(self) -> str:
        return f"Segmented({type(self._template).__name__}, segments={len(self._segments)}, n={self.n})"


class _SegmentBatch(NamedTuple):
    """A batch of events by segment: what :meth:`Segmented.update_many` and ``revert_many`` share."""

    keys: list[Hashable]  # the distinct segments, in order of first appearance
    codes: np.ndarray  # each event's index into keys
    cols: list[Any]  # the accumulators' positional columns, checked for length
    kw: dict[str, Any]  # and keyword columns
    parts: list[tuple[list[Any], dict[str, Any]]]  # each segment's events: its columns and keyword columns


def _by_segment(segments: Any, columns: tuple[Any, ...], kwargs: dict[str, Any]) -> _SegmentBatch:
    """A batch's segments coded, its columns checked for length, and each segment's events as slices of the
    batch reordered so that they are contiguous (none for an empty batch)."""
    keys, codes, counts = _segment_codes(segments)
    n = codes.size
    # a table of named columns (class scores by class) as its rows, as named: cut into segments, a matrix would
    # keep the columns' order, not their names
    cols = [_rows(f"argument {i + 2}", table_rows(c), n) for i, c in enumerate(columns)]
    kw = {k: _rows(k, v, n) for k, v in kwargs.items()}
    if n == 0:
        return _SegmentBatch(keys, codes, cols, kw, [])
    grouped, bounds = _grouped(codes, len(keys), [*cols, *kw.values()], counts)
    grouped_cols, grouped_kw = grouped[: len(cols)], dict(zip(kw, grouped[len(cols) :], strict=True))
    parts = []
    for g in range(len(keys)):
        lo, hi = int(bounds[g]), int(bounds[g + 1])
        parts.append(([_slice(c, lo, hi) for c in grouped_cols], {k: _slice(v, lo, hi) for k, v in grouped_kw.items()}))
    return _SegmentBatch(keys, codes, cols, kw, parts)


def _grouped(
    codes: np.ndarray, groups: int, values: list[Any], counts: np.ndarray | None = None
) -> tuple[list[Any], np.ndarray]:
    """A batch's per-event arguments reordered so that each segment's events are contiguous (in their order),
    and where each segment's events start and end (``groups + 1`` bounds). Scalars pass as they are."""
    if counts is None:
        counts = np.bincount(codes, minlength=groups)
    per_event = [v is not None and np.ndim(v) > 0 for v in values]
    plain = [
        SPEEDUPS is not None and p and isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind in "biuf"
        for v, p in zip(values, per_event, strict=True)
    ]
    for i in [i for i, p in enumerate(plain) if p][16:]:  # the compiled pass takes 16 columns, the sort the rest
        plain[i] = False
    out = list(values)
    if any(plain) and groups < 2**31:  # numbers: one compiled pass over the codes for all the columns
        assert SPEEDUPS is not None
        sources = tuple(np.ascontiguousarray(v) for v, p in zip(values, plain, strict=True) if p)
        targets = tuple(np.empty_like(v) for v in sources)
        SPEEDUPS.group_by_code(
            codes.astype(np.int32, copy=False), np.ascontiguousarray(counts, dtype=np.int64), sources, targets
        )
        done = iter(targets)
        out = [next(done) if p else v for v, p in zip(values, plain, strict=True)]
    else:
        plain = [False] * len(values)
    if any(p and not q for p, q in zip(per_event, plain, strict=True)):  # anything else: by a stable sort
        small = codes.astype(np.int16) if groups < 2**15 else codes  # of small integers: a radix sort, linear
        order = np.argsort(small, kind="stable")
        out = [v[order] if p and not q else o for v, o, p, q in zip(values, out, per_event, plain, strict=True)]
    bounds = np.zeros(groups + 1, dtype=np.int64)
    np.cumsum(counts, out=bounds[1:])
    return out, bounds


def _first_refusal(
    template: Any, cols: list[Any], kw: dict[str, Any], n: int
) -> tuple[int, TypeError | ValueError] | None:
    """The index of a batch's first event that an empty accumulator refuses, and its refusal (``None`` if the
    whole batch is accepted): a bisection on prefixes, about two passes over the batch."""
    refusal: TypeError | ValueError | None = None
    try:
        template.copy().update_many(*cols, **kw)
    except (TypeError, ValueError) as exc:
        refusal = exc
    if refusal is None:
        return None
    accepted, refused = 0, n  # a prefix of `refused` events is refused, one of `accepted` events is not
    while refused - accepted > 1:
        mid = (accepted + refused) // 2
        try:
            template.copy().update_many(
                *[_slice(c, 0, mid) for c in cols], **{k: _slice(v, 0, mid) for k, v in kw.items()}
            )
        except (TypeError, ValueError) as exc:
            refused, refusal = mid, exc
        else:
            accepted = mid
    return refused - 1, refusal


def _slice(value: Any, lo: int, hi: int) -> Any:
    if value is None or np.ndim(value) == 0:
        return value
    return value[lo:hi].tolist() if isinstance(value, _ListRows) else value[lo:hi]


class SegmentedReport:
    """The reports of every segment of a :class:`Segmented` accumulator, and their comparison.

    Metric names are the reports' attribute names (``"recall"``, ``"auc"``,
    ``"selection_rate"``, ``"fpr"``, ``"mae"``, ...); a method such as
    ``ece`` is called with its defaults. Comparisons skip segments where the
    metric is ``nan`` (as pandas does for Fairlearn's ``MetricFrame``).

    Parameters
    ----------
    reports : mapping
        Segment to report.
    overall : report
        The report of every segment's counts merged.
    """

    SUMMARY_METRICS: ClassVar[tuple[str, ...]] = SUMMARY_METRICS  # the columns of summary() and to_html()
    NEUTRAL: ClassVar[frozenset[str]] = NEUTRAL  # metrics with no worse side (counts, selection rate, ...)

    def __init__(self, reports: Mapping[Hashable, Any], overall: Any) -> None:
        self.reports = dict(reports)
        self.overall = overall

    @property
    def segments(self) -> list[Hashable]:
        """The segments, in order of first appearance."""
        return list(self.reports)

    def __getitem__(self, segment: Any) -> Any:
        return self.reports[segment_key(segment)]

    def __len__(self) -> int:
        return len(self.reports)

    # -- one metric across segments ------------------------------------------------
    def by_group(self, metric: str) -> dict[Hashable, Any]:
        """``metric`` of every segment.

        Examples
        --------
        >>> import streameval as se
        >>> seg = se.Segmented(se.BinaryAccumulator)
        >>> seg.update_many(["a", "a", "b", "b"], [1, 0, 1, 0], [0.9, 0.6, 0.4, 0.1])
        >>> seg.get().by_group("selection_rate")
        {'a': 1.0, 'b': 0.0}
        """
        if not hasattr(self.overall, metric):
            names = getattr(type(self.overall), "SCALAR_METRICS", ())
            raise ValueError(f"metric must be a metric of {type(self.overall).__name__} such as {list(names)[:8]}, "
                             f"got {metric!r}")  # fmt: skip
        return {k: metric_value(r, metric) for k, r in self.reports.items()}

    def _values(self, metric: str) -> np.ndarray:
        values = np.array([float(v) for v in self.by_group(metric).values()], dtype=np.float64)
        return values[~np.isnan(values)]

    def group_min(self, metric: str) -> float:
        """The smallest value of ``metric`` over the segments (``nan`` when none has one)."""
        v = self._values(metric)
        return float(v.min()) if v.size else math.nan

    def group_max(self, metric: str) -> float:
        """The largest value of ``metric`` over the segments (``nan`` when none has one)."""
        v = self._values(metric)
        return float(v.max()) if v.size else math.nan

    def difference(self, metric: str) -> float:
        """``group_max - group_min``: Fairlearn's ``MetricFrame.difference()`` (between groups)."""
        return self.group_max(metric) - self.group_min(metric)

    def ratio(self, metric: str) -> float:
        """``group_min / group_max``: Fairlearn's ``MetricFrame.ratio()`` (``nan`` when the largest is 0)."""
        low, high = self.group_min(metric), self.group_max(metric)
        if high == 0 or math.isnan(high):
            return math.nan if low == 0 or math.isnan(low) else math.inf
        return low / high

    def worst(self, metric: str, bigger_is_better: bool | None = None) -> Hashable:
        """The segment where ``metric`` is worst: lowest, or highest for an error (``fpr``, ``brier``, ``mae``, ...).

        ``bigger_is_better`` overrides which way is worse.
        """
        if bigger_is_better is None:
            bigger_is_better = metric not in SMALLER_IS_BETTER
        values = {k: float(v) for k, v in self.by_group(metric).items() if not math.isnan(float(v))}
        if not values:
            raise ValueError(f"no segment has a value of {metric!r}")
        pick = min if bigger_is_better else max
        return pick(values, key=values.__getitem__)

    # -- fairness (binary reports, predictions at the accumulator's threshold) ---------------
    @property
    def demographic_parity_difference(self) -> float:
        """Largest minus smallest selection rate (share predicted positive) over the segments."""
        return self.difference("selection_rate")

    @property
    def demographic_parity_ratio(self) -> float:
        """Smallest over largest selection rate over the segments."""
        return self.ratio("selection_rate")

    @property
    def equalized_odds_difference(self) -> float:
        """The larger of the differences of TPR and of FPR between segments (Fairlearn's worst case)."""
        return max(self.difference("recall"), self.difference("fpr"))

    @property
    def equalized_odds_ratio(self) -> float:
        """The smaller of the ratios of TPR and of FPR between segments (Fairlearn's worst case)."""
        return min(self.ratio("recall"), self.ratio("fpr"))

    @property
    def equal_opportunity_difference(self) -> float:
        """Largest minus smallest TPR (recall) over the segments."""
        return self.difference("recall")

    @property
    def equal_opportunity_ratio(self) -> float:
        """Smallest over largest TPR (recall) over the segments."""
        return self.ratio("recall")

    # -- output ----------------------------------------------------------------------------
    @staticmethod
    def label(segment: Hashable) -> str:
        """A segment as text: the parts of a crossed segment joined by ``/``."""
        return "/".join(map(str, segment)) if isinstance(segment, tuple) else str(segment)

    def labels(self) -> dict[Hashable, str]:
        """Each segment's text, told apart: :meth:`label`'s, or the segment's ``repr`` where that text is empty or
        ``overall`` (the whole's names) or another segment's too (``1`` and ``"1"``; ``("eu", "web")`` and
        ``"eu/web"``), so that no two segments share a name in a table, a dict of metrics or a Prometheus label.

        Examples
        --------
        >>> import streameval as se
        >>> seg = se.Segmented(se.BinaryAccumulator)
        >>> seg.update_many([1, "1", ("eu", "web"), ""], [1, 0, 1, 0], [0.9, 0.2, 0.4, 0.6])
        >>> list(seg.get().labels().values())
        ['1', "'1'", 'eu/web', "''"]
        """
        texts = {k: self.label(k) for k in self.reports}
        seen: dict[str, int] = {}
        for text in texts.values():
            seen[text] = seen.get(text, 0) + 1
        return {k: repr(k) if text in ("", "overall") or seen[text] > 1 else text for k, text in texts.items()}

    def summary(self, metrics: list[str] | None = None) -> str:
        """A table of the segments (the worst value of each metric marked ``*``), then the spread of each metric.

        Examples
        --------
        >>> import streameval as se
        >>> seg = se.Segmented(se.BinaryAccumulator)
        >>> seg.update_many(["a", "a", "b", "b"], [1, 0, 1, 0], [0.9, 0.2, 0.4, 0.6])
        >>> print(seg.get().summary(["n", "auc", "recall"]))
        segment  n  auc   recall
        a        2  1     1
        b        2  0 *  0 *
        overall  4  0.75  0.5
        <BLANKLINE>
        metric  worst  min  max  difference  ratio
        auc     b      0    1    1           0
        recall  b      0    1    1           0
        """
        names = [m for m in (metrics or SUMMARY_METRICS) if hasattr(self.overall, m)]
        labels = self.labels()
        rows = [[labels[k]] + [_cell(metric_value(r, m)) for m in names] for k, r in self.reports.items()]
        for j, m in enumerate(names):
            if m in NEUTRAL or not self.reports:
                continue
            try:
                worst = self.worst(m)
            except ValueError:
                continue
            i = list(self.reports).index(worst)
            rows[i][j + 1] += " *"
        rows.append(["overall"] + [_cell(metric_value(self.overall, m)) for m in names])
        out = text_columns([["segment", *names], *rows])
        spread = [
            [m, labels[self.worst(m)], _cell(self.group_min(m)), _cell(self.group_max(m)),
             _cell(self.difference(m)), _cell(self.ratio(m))]
            for m in names
            if m not in NEUTRAL and not math.isnan(self.group_min(m))
        ]  # fmt: skip
        if spread:
            out += "\n\n" + text_columns([["metric", "worst", "min", "max", "difference", "ratio"], *spread])
        return out

    def to_html(self, title: str | None = None) -> str:
        """This report as one self-contained HTML page: the overall report, the segments and fairness.

        See :func:`streameval.html.report_html`; the pictures need matplotlib.
        """
        from .html import report_html

        return report_html(self, title=title)

    def to_dict(self, metrics: Iterable[str] | None = None) -> dict[str, Any]:
        """The overall metrics, then every segment's as ``"<segment>/<metric>"`` (the segment as :meth:`labels`
        names it); with ``metrics``, those alone (a method such as ``ece`` called with its defaults).

        Examples
        --------
        >>> import streameval as se
        >>> seg = se.Segmented(se.BinaryAccumulator)
        >>> seg.update_many(["eu", "us", "eu"], [1, 0, 0], [0.9, 0.2, 0.4])
        >>> seg.get().to_dict(["n", "auc"])
        {'n': 3, 'auc': 1.0, 'eu/n': 2, 'eu/auc': 1.0, 'us/n': 1, 'us/auc': nan}
        """
        if metrics is None:
            out = dict(self.overall.to_dict())
            for k, label in self.labels().items():
                out.update({f"{label}/{name}": v for name, v in self.reports[k].to_dict().items()})
            return out
        names = list(metrics)
        out = {name: metric_value(self.overall, name) for name in names}
        for k, label in self.labels().items():
            out.update({f"{label}/{name}": metric_value(self.reports[k], name) for name in names})
        return out

    def to_frame(self, metrics: list[str] | None = None) -> Any:
        """A pandas DataFrame: one row per segment (and ``"overall"`` last), one column per metric."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_frame needs pandas: pip install pandas") from None
        names = list(metrics) if metrics is not None else list(type(self.overall).SCALAR_METRICS)
        reports = [*self.reports.values(), self.overall]
        rows = [[metric_value(r, m) for m in names] for r in reports]
        # a segment named "overall" keeps its row, before the whole's
        index = pd.Index([*self.reports, "overall"], tupleize_cols=False, dtype=object)
        return pd.DataFrame(rows, index=index, columns=names)

    def __repr__(self) -> str:
        return f"SegmentedReport(segments={self.segments!r}, overall={self.overall!r})"


def _cell(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}"
    return str(value)
