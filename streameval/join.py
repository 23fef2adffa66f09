"""LabelJoin: predictions now, labels later (or never), each matched pair counted once."""

from __future__ import annotations

import contextlib
import heapq
import math
import os
from collections import OrderedDict
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from . import io
from ._codec import (
    FormatError,
    decode_float,
    decode_label,
    decode_segment,
    encode_label,
    encode_segment,
    require_fields,
)
from ._validation import (
    as_times,
    check_duration,
    check_real,
    check_time,
    column_as_numpy,
    is_missing,
    is_one_value,
    python_values,
    refuse_class,
    show,
    table_rows,
)
from .multiclass import MulticlassAccumulator
from .scores import ScoreAccumulator
from .segmented import Segmented, segment_key
from .windows import Monitor, takes_event_time

__all__ = ["LabelJoin"]

_PREDICTION, _LABEL = 0, 1
_NOTHING = object()  # in a batch's journal: the key held nothing before
# a batch copies what waits and what expired when they hold at most this many entries an event of the batch (a copy
# costs far less an entry than a journal an event), else it journals what it changes
_COPY_UP_TO = 8
_UNIT = 1.0  # predict's default weight, taken without a check


def _decode_classes(where: str, value: Any) -> Any:
    """A multiclass prediction of the state: class scores by class, in a sequence, or a predicted class."""
    if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in ("scores", "sequence", "class"):
        raise FormatError(f"{where} must be a one-entry dict: scores, sequence or class, got {value!r}"[:300])
    ((tag, v),) = value.items()
    if tag == "class":
        return decode_label(f"{where} class", v)
    if not isinstance(v, list):
        raise FormatError(f"{where} {tag} must be a list, got {v!r}"[:300])
    if tag == "sequence":
        return tuple(decode_float(f"{where} sequence", p) for p in v)
    if not all(isinstance(pair, list) and len(pair) == 2 for pair in v):
        raise FormatError(f"{where} scores must be [class, score] pairs, got {v!r}"[:300])
    return {decode_label(f"{where} class", c): decode_float(f"{where} score", p) for c, p in v}


def _missing_key(key: Any) -> ValueError:
    """The refusal of a missing key (None, NaN, NA, NaT): a prediction and a label without a key would be joined
    to each other, or (NaN) to nothing ever."""
    return ValueError(f"key must not be a missing value, got {key!r}: a prediction and its label are joined by key")


def _length(name: str, values: Any) -> int:
    """The length of a batch's column, or a ``TypeError`` naming it."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or not hasattr(values, "__getitem__"):
        raise TypeError(f"{name} must be a sequence, got {type(values).__name__}")
    return len(values)


def _column(name: str, values: Any, n: int, given: bool = False, one: tuple[type, ...] = (str, bytes)) -> Any:
    """A batch's column as a sequence of ``n`` values: ``None`` (not given), one value for all (anything but a
    sequence, or an instance of ``one``), or a sequence of that length (``given``: a sequence, always)."""
    if values is None and not given:
        return None
    if given or (hasattr(values, "__len__") and not isinstance(values, one)):
        if _length(name, values) != n:
            raise ValueError(f"{name} must be as long as keys ({n}), got {len(values)}")
        return _values(values)
    return [values] * n


def _times(t: Any, n: int) -> Any:
    """A batch's times as the calls one by one take them: ``None``, one for all, or ``n`` of them with instants
    read as seconds (a numpy or pandas column of datetimes would give other numbers one by one)."""
    if t is None or is_one_value(t):
        return _column("t", t, n)
    times = as_times("t", t)
    if times.size != n:
        raise ValueError(f"t must be as long as keys ({n}), got {times.size}")
    return times.tolist()


def _values(column: Any) -> Any:
    """A column's values as the calls one by one take them: a pandas or pyarrow column by position, as numpy's
    values (a pyarrow scalar is no number), and a numpy array's as Python's (:func:`python_values`)."""
    values = column_as_numpy(column)
    return python_values(values) if isinstance(values, np.ndarray) else values


def _empty_like(target: Any, holding: bool = False) -> Any:
    """An empty accumulator of ``target``'s kind and configuration (an accumulator, a window over one, a monitor
    of either, a ``Locked`` one), which refuses the labels ``target`` would refuse; with ``holding``, also the
    kind of events it already holds (class scores or predicted classes; a segmented one's, those of its
    segments), so that it takes the predictions ``target`` would take."""
    if isinstance(target, Monitor):
        return _empty_like(target.accumulator, holding)
    if holding and isinstance(target, Segmented):
        segments = [target[k] for k in target.segments]  # every segment holds the same kind of events
        return _empty_like(segments[0], holding) if segments else target.empty_segment()
    if holding and hasattr(target, "subtract"):
        return target - target  # no events, in target's regime and with the kind of events it holds
    if hasattr(target, "emptied"):
        return target.emptied()
    if callable(getattr(target, "accumulator", None)):  # a window: an accumulator of its events
        return _empty_like(target.accumulator(), holding)
    if hasattr(target, "copy") and hasattr(target, "scaled"):
        return target.copy().scaled(0.0)
    raise TypeError(f"accumulator must be an accumulator, a window or a monitor, got {type(target).__name__}")


class LabelJoin:
    """Join predictions and the labels that come after them (or before), by key.

    ``accumulator`` is a :class:`BinaryAccumulator` (or any kind whose
    ``update`` takes ``(y, score)``), a window over one (``Sliding``,
    ``TimeWindow``, ``Decayed``), a ``Monitor`` of either or a ``Locked`` one.
    An accumulator that takes event times (a time window, a decay or a
    monitor by time) counts each pair at its prediction's time ``t``; a
    :class:`Segmented` one (or a window over one) counts it in the segment
    its prediction names (``predict(key, score, segment=...)``). Into a
    :class:`MulticlassAccumulator` (or a ``Segmented`` one of them) a
    prediction is what its ``update`` takes:
    class scores (a mapping, or a sequence in the classes' order) or a
    predicted class; into a :class:`PairedAccumulator` (or a ``Segmented``
    one), the two models' predictions of the event, ``(score_a, score_b)``
    (predicted labels without a threshold). A :class:`ScoreAccumulator`
    counts no labels: a join into one is a ``TypeError``. ``predict(key, score)`` and
    ``label(key, y)`` may come in either order; when
    both have come, the pair is counted once in ``accumulator`` with
    ``accumulator.update(y, score)``. Until then it waits:

    * a prediction without its label is *pending*; its score is in
      ``pending_scores`` (a :class:`ScoreAccumulator`, for drift checks
      before the labels come);
    * with ``ttl``, a prediction older than ``ttl`` (by the event times ``t``)
      *expires*, and a label waiting that long for its prediction becomes an
      *orphan*; times may be instants (datetimes, ``datetime64`` columns),
      read as seconds since 1970-01-01 UTC, and ``ttl`` a duration;
    * a label whose prediction already expired is counted as ``late``; a label
      for a key never seen, or for one expired too long ago to remember, is
      an orphan once it expires (or at once without ``ttl`` when evicted);
    * at most ``max_pending`` keys wait at once: past that, the oldest is
      evicted (a prediction counts as expired, a label as an orphan), so memory
      stays bounded.

    Nothing is dropped silently: ``matched + expired + pending predictions``
    is every prediction, ``matched + orphans + late + pending labels`` every
    label. A key waits for one prediction and one label: a second prediction
    or a second label for a waiting key is a ``ValueError`` that changes
    nothing; after a match the key is free again.

    Examples
    --------
    >>> import streameval as se
    >>> join = se.LabelJoin(se.BinaryAccumulator(), ttl=10.0)
    >>> join.predict("a", 0.9, t=0.0)
    >>> join.predict("b", 0.2, t=1.0)
    >>> join.label("c", 1, t=2.0)  # its prediction is not here yet
    >>> join.label("a", 1, t=3.0)
    >>> join.predict("c", 0.7, t=4.0)
    >>> join.matched, join.pending, join.accumulator.get().n
    (2, 1, 2)
    >>> join.predict("d", 0.5, t=20.0)  # "b" is now older than the ttl
    >>> join.expired, join.pending
    (1, 1)
    """

    def __init__(self, accumulator: Any, ttl: float | None = None, max_pending: int = 1_000_000) -> None:
        refuse_class("accumulator", accumulator)
        if not callable(getattr(accumulator, "update", None)):
            kind = type(accumulator).__name__
            raise TypeError(f"accumulator must be an accumulator, a window or a monitor, got {kind}")
        inner = accumulator.inner if hasattr(type(accumulator), "inner") else accumulator  # a Locked one: its own
        if ttl is not None:
            ttl = check_duration("ttl", ttl)  # a number, or a timedelta (seconds, as instants are read)
        if isinstance(max_pending, bool) or not isinstance(max_pending, (int, np.integer)) or max_pending < 1:
            raise ValueError(f"max_pending must be a whole number >= 1, got {show(max_pending)}")
        self.accumulator = accumulator
        self._probe = _empty_like(inner)  # checks a label that comes before its prediction
        self._timed = takes_event_time(inner)  # a pair is counted at its prediction's time
        self._segmented = isinstance(self._probe, Segmented)  # a prediction comes with its segment
        kind = self._probe.empty_segment() if self._segmented else self._probe  # what counts each pair
        tag = getattr(kind, "kind", None)  # the protocol's tag: which events the kind's update takes
        if tag == "scores":
            raise TypeError(
                "accumulator must count labelled events: a ScoreAccumulator counts scores alone, with no label to "
                "join (give it the predictions directly; a join's pending_scores holds those waiting)"
            )
        self._classes = isinstance(kind, MulticlassAccumulator)  # a prediction is class scores or a class
        # two models' predictions of each event: scores (with a threshold) or predicted labels, checked with a label
        self._paired = tag == "paired"
        self._one_score = not self._classes and not self._paired  # a prediction is one real score
        self._pair_label = kind.pos_label if self._paired else None
        self._pair_scores = self._paired and kind.threshold is not None
        # a multiclass prediction is checked apart from the labels (a label is checked as its own predicted class)
        self._prediction_probe = _empty_like(inner, holding=True) if self._classes else None
        self.ttl = ttl
        self.max_pending = int(max_pending)
        # key -> (what, score or label, t, arrival, weight of a prediction), by arrival
        self._waiting: dict[Hashable, tuple[int, Any, float, int, float]] = {}
        self._deadlines: list[tuple[float, int, Hashable]] = []  # (t, arrival, key) of what waits, for the ttl
        self._arrival = 0
        # recently expired predictions, each with the number of its expiry (their order, to put back after a refusal)
        self._expired_keys: OrderedDict[Hashable, int] = OrderedDict()
        self._expiries = 0
        self._predictions_waiting = 0
        self.matched = self.expired = self.evicted = self.orphans = self.late = 0
        self._latest = -math.inf
        # the pairs a batch completes, counted at its end: each pair's arguments of update, weights, times
        self._batch: tuple[list[tuple[Any, ...]], list[float], list[float]] | None = None
        # in a batch, what each key changed held before it (waiting, then recently expired): put back on a refusal
        self._journal: tuple[dict[Hashable, Any], dict[Hashable, Any]] | None = None

    # -- events ---------------------------------------------------------------
    def _time(self, t: Any) -> float:
        if t is None:
            if self.ttl is not None:
                raise ValueError("t is required when ttl is set")
            if self._timed:
                raise ValueError("t is required: the accumulator counts each pair at its prediction's time")
            return math.nan
        return check_time("t", t)

    def predict(
        self, key: Hashable, score: Any, t: float | None = None, segment: Hashable = None, w: float = _UNIT
    ) -> None:
        """A prediction for ``key`` (counted at once if its label came first); ``segment``: its segment, for a
        :class:`~streameval.Segmented` accumulator (required there, refused elsewhere); ``w``: the event's weight
        (finite, >= 0), counted with the pair."""
        try:  # the plain checks inline (a prediction and its label: 18,238 instructions against 21,562)
            hash(key)
        except TypeError:
            raise TypeError(f"key must be hashable, got {key!r}"[:200]) from None
        if type(key) is not str and type(key) is not int and is_missing(key):
            raise _missing_key(key)
        s = check_real("score", score) if self._one_score else self._checked_score(score)
        weight = _UNIT if w is _UNIT else check_real("w", w, finite=True, nonnegative=True)
        if self._segmented:
            if segment is None:
                raise ValueError("segment is required: the accumulator counts each pair in its segment")
            segment = segment_key(segment)
        elif segment is not None:
            raise ValueError(f"segment is for a Segmented accumulator, got segment={segment!r} for another"[:200])
        if t is None and self.ttl is None and not self._timed:
            when = math.nan  # no time needed
        else:
            when = t if type(t) is float and t - t == 0.0 else self._time(t)  # a finite float as it is
        prediction = (s, segment) if self._segmented else s
        waiting = self._waiting.get(key)
        if waiting is not None and not self._stale(waiting, when):  # it stays through this time's expiries
            if waiting[0] == _PREDICTION:
                raise ValueError(f"key {key!r} already has a prediction waiting for its label"[:200])
            self._match(key, waiting[1], prediction, when, when, weight)  # its label came first (checked then)
            return
        if self.ttl is not None:
            self._advance(when)  # what is older than the ttl at this time leaves first (the key's own included)
        self._wait(key, _PREDICTION, prediction, when, weight)

    def predict_many(self, keys: Any, scores: Any, t: Any = None, segment: Any = None, w: Any = None) -> None:
        """Many predictions, as :meth:`predict` takes them one by one in order; all of them or, on a refusal,
        none (the error names the index).

        ``keys`` and ``scores`` are sequences of one length (``scores`` rows: class scores or classes, or the
        two models' predictions, where :meth:`predict` takes those); ``t``, ``segment`` and ``w`` are each
        ``None``, one value for every prediction, or a sequence of that length (segments in a list or an
        array: a tuple is one crossed segment for every prediction). About as fast as the calls one by one.
        The pairs the batch completes are counted with one ``update_many`` of the accumulator at its end (a
        window or a monitor takes them as it takes a batch).

        Examples
        --------
        >>> import streameval as se
        >>> join = se.LabelJoin(se.BinaryAccumulator())
        >>> join.label_many(["a", "b"], [1, 0])
        >>> join.predict_many(["a", "b", "c"], [0.9, 0.4, 0.2])
        >>> join.matched, join.pending, join.get().auc
        (2, 1, 1.0)
        """
        n = _length("keys", keys)
        keys, scores = _values(keys), _column("scores", table_rows(scores), n, given=True)
        # a tuple is one (crossed) segment for all; one segment a prediction comes in a list or an array
        segments = _column("segment", segment, n, one=(str, bytes, tuple))
        times, weights = _times(t, n), _column("w", w, n)
        predict = self.predict
        with self._batched(n):
            for i in range(n):
                try:
                    if times is None and segments is None and weights is None:
                        predict(keys[i], scores[i])
                    else:
                        predict(
                            keys[i], scores[i], None if times is None else times[i],
                            None if segments is None else segments[i], _UNIT if weights is None else weights[i],
                        )  # fmt: skip
                except (TypeError, ValueError) as exc:
                    raise type(exc)(f"{exc} (at index {i})") from None

    def label_many(self, keys: Any, ys: Any, t: Any = None) -> None:
        """Many labels, as :meth:`label` takes them one by one in order; all of them or, on a refusal, none (the
        error names the index). ``t`` is ``None``, one time for every label, or a sequence of their times; the
        pairs completed are counted as in :meth:`predict_many`.

        Examples
        --------
        >>> import streameval as se
        >>> join = se.LabelJoin(se.BinaryAccumulator())
        >>> join.predict_many([1, 2], [0.8, 0.3])
        >>> join.label_many([2, 1, 3], [0, 1, 1])
        >>> join.matched, join.pending_labels
        (2, 1)
        """
        n = _length("keys", keys)
        keys, ys, times = _values(keys), _column("ys", ys, n, given=True), _times(t, n)
        label = self.label
        with self._batched(n):
            for i in range(n):
                try:
                    label(keys[i], ys[i], None if times is None else times[i])
                except (TypeError, ValueError) as exc:
                    raise type(exc)(f"{exc} (at index {i})") from None

    @contextlib.contextmanager
    def _batched(self, n: int) -> Iterator[None]:
        """A batch of ``n`` events: the pairs it completes are kept, then counted in one ``update_many``; on any
        refusal, everything back as it was before the batch.

        What waits is copied first where it is not much more than the batch (a copy costs less than a journal
        an event); else what the batch changes is journalled key by key (what each key held before its first
        change), so that a batch costs its own events, not a copy of everything that waits (a batch of 2 took
        68 ms with 10^6 predictions waiting); a refusal puts the keys back, in their order.
        """
        saved = (
            self._arrival, self._latest, self._predictions_waiting,
            (self.matched, self.expired, self.evicted, self.orphans, self.late),
        )  # fmt: skip
        copied = None
        if len(self._waiting) + len(self._expired_keys) <= _COPY_UP_TO * n:
            copied = (dict(self._waiting), list(self._deadlines), OrderedDict(self._expired_keys))
        else:
            self._journal = ({}, {})
        self._batch = ([], [], [])
        try:
            yield
            self._count_batch(self._batch)
        except BaseException:
            if copied is not None:
                self._waiting, self._deadlines, self._expired_keys = copied
            else:
                assert self._journal is not None
                self._put_back(*self._journal)
            self._arrival, self._latest, self._predictions_waiting, counts = saved
            self.matched, self.expired, self.evicted, self.orphans, self.late = counts
            raise
        finally:
            self._batch = None
            self._journal = None

    def _put_back(self, waiting: dict[Hashable, Any], expired: dict[Hashable, Any]) -> None:
        """Undo a batch's changes to what waits and what expired: each key as it was, in the order of arrival
        (and of expiry); the deadlines made again from what waits (those of what left are skipped anyway)."""
        for key, before in waiting.items():
            if before is _NOTHING:
                self._waiting.pop(key, None)
            else:
                self._waiting[key] = before
        for key, number in expired.items():
            if number is _NOTHING:
                self._expired_keys.pop(key, None)
            else:
                self._expired_keys[key] = number
        if waiting:
            self._waiting = dict(sorted(self._waiting.items(), key=lambda item: item[1][3]))
            self._deadlines = [(t, arrival, k) for k, (_, _, t, arrival, _) in self._waiting.items()]
            heapq.heapify(self._deadlines)
        if expired:
            self._expired_keys = OrderedDict(sorted(self._expired_keys.items(), key=lambda item: item[1]))

    def _note_waiting(self, key: Hashable) -> None:
        """In a batch, keep what ``key`` waits with (or that it waits for nothing) before its first change."""
        journal = self._journal
        if journal is not None and key not in journal[0]:
            journal[0][key] = self._waiting.get(key, _NOTHING)

    def _note_expired(self, key: Hashable) -> None:
        """In a batch, keep whether ``key`` expired recently (its expiry's number) before its first change."""
        journal = self._journal
        if journal is not None and key not in journal[1]:
            journal[1][key] = self._expired_keys.get(key, _NOTHING)

    def _count_batch(self, batch: tuple[list[tuple[Any, ...]], list[float], list[float]]) -> None:
        """Count the pairs of a batch (their arguments of update, weights and times) in one ``update_many``."""
        pairs, weights, times = batch
        if not pairs:
            return
        keywords: dict[str, Any] = {}
        if any(weight != 1.0 for weight in weights):
            keywords["w"] = weights
        if self._timed:
            keywords["t"] = times
        columns = [[pair[k] for pair in pairs] for k in range(len(pairs[0]))]  # zip(*pairs): 5x slower
        self.accumulator.update_many(*columns, **keywords)

    def _checked_prediction(self, score: Any) -> Any:
        """A multiclass prediction: class scores (a mapping or a sequence in the classes' order) or a predicted
        class, checked as the accumulator checks it; kept as a copy."""
        probe = self._prediction_probe
        assert probe is not None
        if isinstance(score, Mapping):  # checked with a known class as the label: a refusal is the mapping's
            prediction = dict(score)
            if not prediction:
                raise ValueError("score must hold class scores: got an empty mapping")
            probe.update(probe.classes[0] if probe.classes else next(iter(prediction)), prediction)
            return prediction
        if isinstance(score, (Sequence, np.ndarray)) and not isinstance(score, (str, bytes)):
            if probe.classes:  # with classes learnt later, checked when counted
                probe.update(probe.classes[0], score)
            return tuple(check_real("score", v) for v in score)
        probe.update(score, score)  # a predicted class, as its own label
        return score

    def label(self, key: Hashable, y: Any, t: float | None = None) -> None:
        """The label of ``key`` (counted at once if its prediction came first)."""
        try:
            hash(key)
        except TypeError:
            raise TypeError(f"key must be hashable, got {key!r}"[:200]) from None
        if type(key) is not str and type(key) is not int and is_missing(key):
            raise _missing_key(key)
        if t is None and self.ttl is None and not self._timed:
            when = math.nan  # no time needed
        else:
            when = t if type(t) is float and t - t == 0.0 else self._time(t)  # a finite float as it is
        waiting = self._waiting.get(key)
        if waiting is not None and self._stale(waiting, when):
            waiting = None  # it leaves with this time's expiries
        if waiting is not None and waiting[0] == _LABEL:
            raise ValueError(f"key {key!r} already has a label waiting for its prediction"[:200])
        self._check_label(y)  # a label the accumulator would refuse is refused now, not at its match
        if waiting is not None:  # its prediction stays through this time's expiries
            self._match(key, y, waiting[1], waiting[2], when, waiting[4])
            return
        if self.ttl is not None:
            self._advance(when)  # what is older than the ttl at this time leaves first (the key's own included)
        if key in self._expired_keys:  # expired by the ttl, or evicted
            self._note_expired(key)
            del self._expired_keys[key]
            self.late += 1
        else:
            self._wait(key, _LABEL, y, when)
        if self.ttl is not None:
            self._advance(when)  # a label older than the ttl already is an orphan at once

    def _check_label(self, y: Any) -> None:
        """Refuse a label the accumulator would refuse (``ValueError``, ``TypeError``)."""
        if self._one_score and not self._segmented:  # the usual case, without the call below
            self._probe.update(y, 0.5)
        elif self._paired:  # two scores, or the label as both models' predicted label
            self._check_event(y, *((0.5, 0.5) if self._pair_scores else (y, y)))
        else:  # a class label: checked as its own predicted class
            self._check_event(y, y if self._classes else 0.5)

    def _check_event(self, *event: Any) -> None:
        """Count ``event`` in the probe, which refuses what the accumulator would refuse."""
        if self._segmented:
            self._probe.update("label check", *event)  # one segment checks for all
        else:
            self._probe.update(*event)

    def _checked_pair(self, score: Any) -> tuple[Any, Any]:
        """Two models' predictions of one event, checked (with a label the accumulator takes) and kept as a tuple."""
        if isinstance(score, (str, bytes, Mapping)) or not isinstance(score, (Sequence, np.ndarray)) or len(score) != 2:
            raise ValueError(f"score must hold the two models' predictions (a pair), got {score!r}"[:200])
        a, b = score
        if self._pair_scores:
            a, b = check_real("score", a), check_real("score", b)
        self._check_event(self._pair_label, a, b)
        return a, b

    def _checked_waiting(self, what: int, value: Any) -> Any:
        """A waiting label or prediction of a state, checked as ``label`` and ``predict`` check theirs."""
        if what == _LABEL:
            self._check_label(value)
            return value
        if self._segmented:
            return self._checked_score(value[0]), segment_key(value[1])
        return self._checked_score(value)

    def _checked_score(self, score: Any) -> Any:
        """A prediction, checked (and kept as a copy): class scores or a class, two models' predictions, or one
        real score."""
        if self._classes:
            return self._checked_prediction(score)
        if self._paired:
            return self._checked_pair(score)
        return check_real("score", score)

    def _count(self, y: Any, prediction: Any, when: float, weight: float) -> None:
        """Count a matched pair with its weight (in its segment; at its prediction's time, for an accumulator
        that takes times); in a batch, keep it for the batch's end."""
        predicted = prediction[0] if self._segmented else prediction
        event = (y, *predicted) if self._paired else (y, predicted)
        args = (prediction[1], *event) if self._segmented else event
        if self._batch is not None:
            pairs, weights, times = self._batch
            pairs.append(args)
            weights.append(weight)
            times.append(when)
            return
        if weight != 1.0:
            if self._timed:
                self.accumulator.update(*args, t=when, w=weight)
            else:
                self.accumulator.update(*args, w=weight)
        elif self._timed:
            self.accumulator.update(*args, t=when)
        else:
            self.accumulator.update(*args)

    def _match(self, key: Hashable, y: Any, prediction: Any, predicted_at: float, now: float, weight: float) -> None:
        """Count the pair of a key whose other half waits and stays through the expiries at time ``now`` (at
        its prediction's time, with its weight), then let ``now`` expire what it must: counted first, so that a
        pair the accumulator refuses (a score sequence longer than the classes it has learnt) changes nothing."""
        self._count(y, prediction, predicted_at, weight)
        if self.ttl is not None:
            self._advance(now)
        if self._journal is not None:  # in a batch
            self._note_waiting(key)
        if self._waiting.pop(key)[0] == _PREDICTION:
            self._predictions_waiting -= 1
        self.matched += 1

    def _wait(self, key: Hashable, what: int, value: Any, when: float, weight: float = 1.0) -> None:
        self._arrival += 1
        if self._journal is not None:  # in a batch
            self._note_waiting(key)
        self._waiting[key] = (what, value, when, self._arrival, weight)
        self._predictions_waiting += what == _PREDICTION
        if self.ttl is not None:
            heapq.heappush(self._deadlines, (when, self._arrival, key))
            if len(self._deadlines) > 2 * len(self._waiting) + 1024:  # mostly deadlines of what left: rebuilt
                self._deadlines = [(t, arrival, k) for k, (_, _, t, arrival, _) in self._waiting.items()]
                heapq.heapify(self._deadlines)
        while len(self._waiting) > self.max_pending:  # the oldest arrival leaves
            oldest = next(iter(self._waiting))
            self._give_up(oldest)
            self.evicted += 1

    def _give_up(self, key: Hashable) -> None:
        if self._journal is not None:  # in a batch
            self._note_waiting(key)
        what = self._waiting.pop(key)[0]
        if what == _PREDICTION:
            self._predictions_waiting -= 1
            self.expired += 1
            self._expire(key)
        else:
            self.orphans += 1

    def _expire(self, key: Hashable) -> None:
        """Remember that ``key``'s prediction expired (a key that expired before keeps its place), forgetting
        the oldest beyond ``max_pending``."""
        if key not in self._expired_keys:
            self._note_expired(key)
            self._expiries += 1
            self._expired_keys[key] = self._expiries
        while len(self._expired_keys) > self.max_pending:
            oldest = next(iter(self._expired_keys))
            self._note_expired(oldest)
            del self._expired_keys[oldest]

    def _stale(self, waiting: tuple[int, Any, float, int, float], when: float) -> bool:
        """Whether what waits will have left by the ttl once time reaches ``when``."""
        return self.ttl is not None and not math.isnan(when) and waiting[2] < max(self._latest, when) - self.ttl

    def _advance(self, when: float) -> None:
        """Expire what waited longer than the ttl, by the latest event time."""
        if self.ttl is None or when != when:  # no ttl, or no time (NaN)
            return
        if when > self._latest:
            self._latest = when
        horizon = self._latest - self.ttl
        deadlines = self._deadlines
        while deadlines and deadlines[0][0] < horizon:
            _, arrival, key = heapq.heappop(deadlines)
            waiting = self._waiting.get(key)
            if waiting is not None and waiting[3] == arrival:  # not an earlier wait of the same key
                self._give_up(key)

    # -- reading ----------------------------------------------------------------
    def get(self) -> Any:
        """The report of the pairs counted.

        Examples
        --------
        >>> import streameval as se
        >>> join = se.LabelJoin(se.BinaryAccumulator())
        >>> join.predict("a", 0.9)
        >>> join.label("a", 1)
        >>> join.get().n
        1
        """
        return self.accumulator.get()

    @property
    def pending(self) -> int:
        """Predictions waiting for their labels."""
        return self._predictions_waiting

    @property
    def pending_labels(self) -> int:
        """Labels waiting for their predictions."""
        return len(self._waiting) - self.pending

    @property
    def pending_scores(self) -> ScoreAccumulator:
        """The scores of the predictions waiting for their labels (with their weights), as a
        :class:`ScoreAccumulator`."""
        if self._classes or self._paired:
            what = "class scores or classes" if self._classes else "two models' predictions"
            raise TypeError(f"pending_scores: the predictions waiting are {what}, not one score each")
        acc = ScoreAccumulator()
        waiting = [(v, weight) for what, v, _, _, weight in self._waiting.values() if what == _PREDICTION]
        scores = [v[0] if self._segmented else v for v, _ in waiting]
        weights = [weight for _, weight in waiting]
        acc.update_many(scores, None if all(weight == 1.0 for weight in weights) else weights)
        return acc

    def counts(self) -> dict[str, int]:
        """Every count by name."""
        return {
            "matched": self.matched, "pending": self.pending, "pending_labels": self.pending_labels,
            "expired": self.expired, "evicted": self.evicted, "orphans": self.orphans, "late": self.late,
        }  # fmt: skip

    # -- state ------------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        """The accumulator's state (with its kind), the settings, the counts and what waits."""
        waiting = [
            [encode_segment(k), what, self._encode(what, v), t, *([] if weight == 1.0 else [weight])]
            for k, (what, v, t, _, weight) in self._waiting.items()
        ]  # a prediction's weight when it is not 1
        try:
            accumulator = io.to_dict(self.accumulator)
        except TypeError:
            raise TypeError(
                f"a LabelJoin over a {type(self.accumulator).__name__} has no state file (windows and monitors "
                "have none): pickle it instead"
            ) from None
        return {
            "accumulator": accumulator,
            "ttl": self.ttl,
            "max_pending": self.max_pending,
            "counts": [self.matched, self.expired, self.evicted, self.orphans, self.late],
            "latest": self._latest,
            "waiting": waiting,
            "expired_keys": [encode_segment(k) for k in self._expired_keys],
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> LabelJoin:
        """The join of a :meth:`to_state` mapping; ``FormatError`` if anything in it is inconsistent."""
        d = dict(state)
        require_fields(d, "state", {"accumulator", "ttl", "max_pending", "counts", "latest", "waiting", "expired_keys"})
        accumulator = io.from_dict(d["accumulator"])
        ttl = None if d["ttl"] is None else decode_float("ttl", d["ttl"])
        try:
            join = cls(accumulator, ttl=ttl, max_pending=d["max_pending"])
        except (TypeError, ValueError) as exc:
            raise FormatError(f"state: {exc}") from None
        counts = d["counts"]
        if not isinstance(counts, list) or len(counts) != 5 or any(type(c) is not int or c < 0 for c in counts):
            raise FormatError("counts must be 5 whole numbers >= 0")
        join.matched, join.expired, join.evicted, join.orphans, join.late = counts
        join._latest = decode_float("latest", d["latest"])
        if not isinstance(d["waiting"], list) or not isinstance(d["expired_keys"], list):
            raise FormatError("waiting and expired_keys must be lists")
        for i, item in enumerate(d["waiting"]):
            if not isinstance(item, list) or len(item) not in (4, 5) or item[1] not in (_PREDICTION, _LABEL):
                raise FormatError(
                    f"waiting[{i}] must be [key, 0 or 1, value, t] or, a weighted prediction, [key, 0, value, t, w]"
                )
            weight = 1.0
            if len(item) == 5:
                weight = decode_float(f"waiting[{i}] w", item[4])
                if item[1] != _PREDICTION or not (math.isfinite(weight) and weight >= 0):
                    raise FormatError(f"waiting[{i}] w must be a finite weight >= 0 of a prediction, got {item[4]!r}")
            key = decode_segment(f"waiting[{i}] key", item[0])
            value = join._decode(f"waiting[{i}]", item[1], item[2])
            try:  # what the accumulator would refuse when its pair comes is refused here
                value = join._checked_waiting(item[1], value)
            except (TypeError, ValueError) as exc:
                raise FormatError(f"waiting[{i}]: {exc}"[:300]) from None
            join._wait(key, item[1], value, decode_float(f"waiting[{i}] t", item[3]), weight)
        for i, k in enumerate(d["expired_keys"]):
            join._expire(decode_segment(f"expired_keys[{i}]", k))
        return join

    def _encode(self, what: int, value: Any) -> Any:
        """What waits, in the state: a label, a prediction, or a prediction and its segment."""
        if what == _LABEL:
            return encode_label(value)
        if self._segmented:
            return [self._encode_score(value[0]), encode_segment(value[1])]
        return self._encode_score(value)

    def _encode_score(self, score: Any) -> Any:
        """A prediction in the state: a score, two models' (a list of two scores or labels), or (multiclass) a
        one-entry dict of scores, a sequence or a class."""
        if self._paired:
            return list(score) if self._pair_scores else [encode_label(v) for v in score]
        if not self._classes:
            return score
        if isinstance(score, dict):
            return {"scores": [[encode_label(c), float(p)] for c, p in score.items()]}
        if isinstance(score, tuple):
            return {"sequence": list(score)}
        return {"class": encode_label(score)}

    def _decode(self, where: str, what: int, value: Any) -> Any:
        if what == _LABEL:
            return decode_label(f"{where} label", value)
        if not self._segmented:
            return self._decode_score(where, value)
        if not isinstance(value, list) or len(value) != 2:
            raise FormatError(f"{where} must hold [score, segment] for a segmented accumulator, got {value!r}"[:300])
        return self._decode_score(where, value[0]), decode_segment(f"{where} segment", value[1])

    def _decode_score(self, where: str, value: Any) -> Any:
        if self._paired:
            if not isinstance(value, list) or len(value) != 2:
                raise FormatError(f"{where} must hold the two models' predictions, got {value!r}"[:300])
            decode = decode_float if self._pair_scores else decode_label
            return tuple(decode(f"{where} prediction", v) for v in value)
        return _decode_classes(where, value) if self._classes else decode_float(f"{where} score", value)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the state, what waits included, atomically (see :func:`streameval.save`)."""
        io.save(self, path)


io.register("label_join", LabelJoin)
