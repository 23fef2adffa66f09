"""The accumulator protocol: what every kind of accumulator offers, and the shared part of it.

Every kind (binary, multiclass, regression, paired, and the kinds added
later) implements :class:`Accumulator`. Windows, averaging, the state format,
river, Dask and the command line use accumulators only through it, so a new
kind works everywhere once it implements the protocol.

A kind subclasses :class:`AccumulatorBase`, which derives the whole protocol
from a few methods the kind defines itself:

* ``copy()``, ``update``, ``update_many``, ``revert``, ``get``, ``n``, ``==``;
* ``to_state()`` and the class method ``from_state(state)``;
* ``_check_mergeable(other)`` (raise when ``other`` cannot be combined),
  ``_merge_in(other, sign)`` (add ``sign`` times ``other``'s counts in place)
  and ``_scale_in(factor)`` (multiply every count in place);
* a class attribute ``kind``: the tag the state format stores (each kind
  registers itself under it).
"""

from __future__ import annotations

import functools
import inspect
import math
import os
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

from . import io
from ._numeric import EventGroups
from ._validation import as_weights, check_real

__all__ = ["Accumulator", "AccumulatorBase"]

A = TypeVar("A", bound="AccumulatorBase")
P = TypeVar("P", bound="Accumulator")


# a total weight below this, times a term of at most 2^20 per unit weight (a Brier or log-loss term, a count), stays
# far below the largest float (2^1024): see AccumulatorBase._can_take
SURELY_FINITE_BELOW = 2.0**1000


@runtime_checkable
class Accumulator(Protocol):
    """What every accumulator kind offers.

    Updating
        ``update(...)`` counts one event, ``update_many(...)`` a batch (all of
        it or, on bad input, none), ``revert(...)`` takes one event counted
        before back out and ``revert_many(...)`` a batch of them (what a
        sliding window does with the events that leave it). The arguments
        are the kind's own (``y, score, w`` for a binary accumulator).
    Reading
        ``get()`` returns a frozen report; ``n`` is the count (or total
        weight) of events.
    Combining
        ``merge(other)`` / ``a + b`` / ``merge_all(...)`` add counts,
        ``subtract(other)`` / ``a - b`` takes out counts added before (what a
        sliding window needs), ``scaled(factor)`` multiplies them (what decay
        needs); ``a += b`` and ``a -= b`` work in place. ``copy()`` and
        ``==`` as usual. ``emptied()`` is a new accumulator with the same
        configuration and no events (a multiclass one keeps the classes it
        learnt, in their order, so that score sequences mean the same).
    State
        ``to_state()`` is a plain mapping of named arrays, numbers and the
        kind's configuration; ``from_state(mapping)`` validates it and
        rebuilds the accumulator (``FormatError`` on anything inconsistent).
        Pickles carry the compact state.
    """

    kind: ClassVar[str]

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Count one event."""

    def update_many(self, *args: Any, **kwargs: Any) -> None:
        """Count a batch of events; all of them or none."""

    def revert(self, *args: Any, **kwargs: Any) -> None:
        """Take back one event counted before."""

    def revert_many(self, *args: Any, **kwargs: Any) -> None:
        """Take back a batch of events counted before; all of them or none."""

    def get(self) -> Any:
        """A frozen report of every metric."""

    @property
    def n(self) -> int | float:
        """Count (or total weight) of the events."""

    def copy(self: P) -> P:
        """An independent accumulator with the same counts."""

    def emptied(self: P) -> P:
        """A new accumulator with this one's configuration (and the classes it learnt, in their order) and no
        events: what a window starts a pane, or counts the events it keeps afresh, with."""

    def merge(self: P, other: P) -> P:
        """A new accumulator holding the counts of both."""

    def subtract(self: P, other: P) -> P:
        """A new accumulator holding this one's counts less ``other``'s."""

    def scaled(self: P, factor: float) -> P:
        """A new accumulator with every count multiplied by ``factor``."""

    def to_state(self) -> dict[str, Any]:
        """The state as named arrays and scalars, with the configuration."""

    @classmethod
    def from_state(cls: type[P], state: Mapping[str, Any]) -> P:
        """The accumulator of a state; ``FormatError`` if it is not valid."""


class AccumulatorBase:
    """The protocol's shared part: combining, saving and pickling, from a few methods per kind.

    Examples
    --------
    >>> import streameval as se
    >>> a, b = se.BinaryAccumulator(), se.BinaryAccumulator()
    >>> a.update_many([1, 0], [0.9, 0.4])
    >>> b.update_many([1, 0], [0.3, 0.6])
    >>> (a + b).get().n, (a + b - b) == a
    (4, True)
    >>> isinstance(a, se.Accumulator)
    True
    """

    kind: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            io.register(cls.kind, cls)

    # -- to define per kind -------------------------------------------------------
    def copy(self: A) -> A:  # pragma: no cover - every kind defines it
        """An independent accumulator with the same counts."""
        raise NotImplementedError

    def to_state(self) -> dict[str, Any]:  # pragma: no cover - every kind defines it
        """The state as named arrays and scalars, with the configuration."""
        raise NotImplementedError

    @classmethod
    def from_state(cls: type[A], state: Mapping[str, Any]) -> A:  # pragma: no cover - every kind defines it
        """The accumulator of a state; ``FormatError`` if it is not valid."""
        raise NotImplementedError

    def _check_mergeable(self, other: Any) -> None:  # pragma: no cover - every kind defines it
        raise NotImplementedError

    def _merge_in(self, other: Any, sign: int) -> None:  # pragma: no cover - every kind defines it
        raise NotImplementedError

    def _scale_in(self, factor: float) -> None:  # pragma: no cover - every kind defines it
        raise NotImplementedError

    def _restore(self, saved: Any) -> None:
        """Take back, in place, the state of ``saved``: a copy of this accumulator made before a change that must
        be undone to the bit (a segment's part of a weighted batch that another segment refused, where taking
        the events back out would leave float sums within rounding of what they were, or float counts where
        there were whole ones). This object stays the one callers hold; ``saved`` is not to be used after.

        Here this object takes the copy's attributes, then makes its per-event buffers afresh (the copy's are
        bound to the copy; events stored in this one's since the copy are the change undone). A kind whose state
        lies elsewhere takes it back its own way.
        """
        vars(self).clear()
        vars(self).update(vars(saved))
        self._reset_buffers()

    def _can_take(self, weight: float) -> bool:
        """Whether events of total weight ``weight``, whatever their values, surely count in without a refusal for
        a total or a sum past the largest float (a segment that surely can is not saved before a weighted batch);
        ``False`` (not known) here, as for a kind whose sums grow with the events' values."""
        return False

    def _reset_buffers(self) -> None:
        """Per-event buffers of this object's own, empty (a kind without them has nothing to do)."""

    def update_many_grouped(self, accumulators: list[Any], groups: EventGroups, *args: Any, **kwargs: Any) -> bool:
        """Count a batch into accumulators of this one's kind and configuration at once, event i into
        ``accumulators[group of i]`` (all of it or none); whether it was counted here.

        A kind counts such a batch in one pass where it can; ``False`` (nothing changed) means the caller
        counts each group's events apart with ``update_many``, which also explains a refusal. ``None`` in
        ``accumulators`` stands for a group with none yet: a kind that counts the batch makes one and puts it in
        its place in the list. This default always says ``False``. :class:`~streameval.Segmented` asks it for
        batches of integer segments.

        Examples
        --------
        >>> import numpy as np
        >>> import streameval as se
        >>> from streameval._numeric import EventGroups
        >>> groups = EventGroups(np.array([0, 1]), 0, np.array([0, 1, -1], dtype=np.int32), 2)
        >>> parts = [se.RegressionAccumulator(), se.RegressionAccumulator()]
        >>> se.RegressionAccumulator().update_many_grouped(parts, groups, [1.0, 2.0], [1.5, 2.0])
        False
        """
        return False

    def revert_many(self, *args: Any, **kwargs: Any) -> None:
        """Take back a batch of events counted before (``update_many``'s arguments); all of them or, on bad
        input or events that were never counted, none.

        This default counts the batch into an empty accumulator of this one's configuration and regime and
        takes that out (``-=``); a kind may take the events out directly.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.RegressionAccumulator()
        >>> acc.update_many([1.0, 2.0, 3.0], [1.5, 2.0, 2.0])
        >>> acc.revert_many([1.0, 3.0], [1.5, 2.0])
        >>> acc.get().n, acc.get().mae
        (1, 0.0)
        """
        gone: Any = self - self  # empty, in this one's regime: its counts come out without a conversion
        gone.update_many(*args, **kwargs)
        self -= gone

    # -- combining ----------------------------------------------------------------
    def check_mergeable(self, other: Any) -> None:
        """Raise as :meth:`merge` would if ``other`` cannot be combined with this one; count nothing.

        ``TypeError`` for another kind, ``ValueError`` when the configurations
        differ or the two hold different kinds of events (such as class scores
        and predicted classes). Windows and segments check with it that a new
        accumulator joins the others before keeping it.

        Examples
        --------
        >>> import streameval as se
        >>> scores, labels = se.MulticlassAccumulator(), se.MulticlassAccumulator()
        >>> scores.update("a", {"a": 0.7, "b": 0.3})
        >>> labels.update("a", "b")
        >>> scores.check_mergeable(labels)
        Traceback (most recent call last):
        ...
        ValueError: cannot merge an accumulator of scores with one of labels
        """
        if not isinstance(other, type(self)):
            raise TypeError(f"cannot merge a {type(self).__name__} with a {type(other).__name__}")
        self._check_mergeable(other)

    def merge(self: A, other: A) -> A:
        """A new accumulator holding the counts of both; neither input changes.

        Raises ``TypeError`` for another kind and ``ValueError`` when the
        configurations differ (bins, threshold, labels, fixed classes).

        Examples
        --------
        >>> import streameval as se
        >>> a, b = se.BinaryAccumulator(), se.BinaryAccumulator()
        >>> a.update_many([1, 0], [0.9, 0.4])
        >>> b.update_many([1, 0], [0.3, 0.6])
        >>> a.merge(b).get().auc
        0.5
        >>> sum([a, b]).get().n
        4
        """
        self._check_mergeable(other)
        new = self.copy()
        new._merge_in(other, 1)
        return new

    @classmethod
    def merge_all(cls: type[A], accumulators: Iterable[A]) -> A:
        """One accumulator holding the counts of all; none of the inputs changes.

        Equal to merging them one by one (and to ``sum(accumulators)``), but
        adds every one into a single copy instead of copying at each step.

        Examples
        --------
        >>> import streameval as se
        >>> shards = [se.BinaryAccumulator() for _ in range(3)]
        >>> for i, acc in enumerate(shards):
        ...     acc.update_many([1, 0], [0.9 - i / 10, 0.2 + i / 10])
        >>> se.BinaryAccumulator.merge_all(shards) == sum(shards)
        True
        """
        accs = list(accumulators)
        if not accs:
            raise ValueError("accumulators must hold at least one accumulator, got none")
        if not isinstance(accs[0], cls):
            raise TypeError(f"can only merge {cls.__name__}s, got {type(accs[0]).__name__} at index 0")
        out = accs[0].copy()
        for acc in accs[1:]:
            out._check_mergeable(acc)
            out._merge_in(acc, 1)
        return out

    def subtract(self: A, other: A) -> A:
        """A new accumulator holding this one's counts less ``other``'s (counts added before).

        Taking out counts that were never added is a ``ValueError``. With
        weights, a count brought within rounding of zero becomes exactly 0.

        Examples
        --------
        >>> import streameval as se
        >>> everything, old = se.BinaryAccumulator(), se.BinaryAccumulator()
        >>> everything.update_many([1, 0, 1, 0], [0.9, 0.4, 0.3, 0.6])
        >>> old.update_many([1, 0], [0.9, 0.4])
        >>> recent = everything.subtract(old)
        >>> recent.get().n, recent.get().auc
        (2, 0.0)
        """
        self._check_mergeable(other)
        if other is self:  # "empty, in this one's regime", as windows and segments ask for it
            return self._less_itself()
        new = self.copy()
        new._merge_in(other, -1)
        return new

    def lost_to_rounding(self) -> bool:
        """Whether taking events out (``subtract``, ``revert``, a window's events leaving) left a sum or spread
        whose digits were mostly lost to rounding: events taken out held nearly all of it (an outlier far from
        the others). ``False`` for exact counts, as here; a :class:`~streameval.Sliding` window then counts its
        events afresh.

        Examples
        --------
        >>> import streameval as se
        >>> acc, outlier = se.RegressionAccumulator(), se.RegressionAccumulator()
        >>> acc.update_many([1.0, 2.0, 1e12], [1.5, 2.5, 1.0])
        >>> outlier.update(1e12, 1.0)
        >>> (acc - outlier).lost_to_rounding(), se.BinaryAccumulator().lost_to_rounding()
        (True, False)
        """
        return False

    def _less_itself(self: A) -> A:
        """This accumulator less itself: no events, in its regime, with its classes and kind of events; a kind
        may make it without copying and taking out its counts."""
        new = self.copy()
        new._merge_in(self, -1)
        return new

    def emptied(self: A) -> A:
        """A new accumulator with this one's configuration (and the classes it learnt, in their order) and no
        events; here this one less itself (a kind may start afresh instead, as the kinds of this package do).

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.RegressionAccumulator()
        >>> acc.update_many([1.0, 2.0], [1.5, 1.5])
        >>> acc.emptied().n, acc.n
        (0, 2)
        """
        return self.subtract(self)

    def scaled(self: A, factor: float) -> A:
        """A new accumulator with every count (weight) multiplied by ``factor`` >= 0.

        Examples
        --------
        >>> import streameval as se
        >>> acc = se.BinaryAccumulator()
        >>> acc.update_many([1, 0], [0.9, 0.4])
        >>> acc.scaled(0.5).get().n
        1.0
        """
        f = check_real("factor", factor, finite=True, nonnegative=True)
        new = self.copy()
        new._scale_in(f)
        return new

    def __add__(self: A, other: Any) -> A:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self.merge(other)

    def __radd__(self: A, other: Any) -> A:
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self.copy()  # sum() starts from 0
        return NotImplemented

    def __iadd__(self: A, other: Any) -> A:
        return self._in_place(other, 1)

    def __sub__(self: A, other: Any) -> A:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self.subtract(other)

    def __isub__(self: A, other: Any) -> A:
        return self._in_place(other, -1)

    def _in_place(self: A, other: Any, sign: int) -> A:
        if not isinstance(other, type(self)):
            return NotImplemented
        self._check_mergeable(other)
        self._merge_in(other, sign)
        return self

    # -- saving -------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of the state (see :func:`streameval.to_dict`)."""
        return io.to_dict(self)

    def to_bytes(self) -> bytes:
        """The compact binary state (see :func:`streameval.to_bytes`)."""
        return io.to_bytes(self)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the state to ``path`` atomically (see :func:`streameval.save`)."""
        io.save(self, path)

    @classmethod
    def _checked(cls: type[A], acc: Any) -> A:
        if not isinstance(acc, cls):
            raise io.FormatError(f"the state holds a {type(acc).__name__}, not a {cls.__name__}")
        return acc

    @classmethod
    def from_dict(cls: type[A], d: dict[str, Any]) -> A:
        """The accumulator in ``d``; ``FormatError`` if it is not a valid state of this kind."""
        return cls._checked(io.from_dict(d))

    @classmethod
    def from_bytes(cls: type[A], blob: bytes) -> A:
        """The accumulator in ``blob``; ``FormatError`` if it is not a valid state of this kind."""
        return cls._checked(io.from_bytes(blob))

    @classmethod
    def load(cls: type[A], path: str | os.PathLike[str]) -> A:
        """The accumulator saved at ``path``."""
        return cls._checked(io.load(path))

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        """Pickle the compact state (the format's bytes), not the in-memory layout."""
        return io.from_bytes, (io.to_bytes(self, level=1),)


@functools.cache
def _weight_place(kind: Any) -> int | None:
    """Where a kind's ``update_many`` takes weights ``w`` among its positional arguments; ``None`` where it takes
    none or by keyword only (read from the keywords), -1 where it may take them anywhere (``*args``)."""
    try:
        params = list(inspect.signature(kind.update_many).parameters.values())[1:]
    except (AttributeError, TypeError, ValueError):
        return -1
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    for place, param in enumerate(params):
        if param.name == "w":  # by keyword only: read from the keywords alone
            return place if param.kind in positional else None
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            return -1
    return None


def batch_weight(kind: type, columns: tuple[Any, ...], kwargs: dict[str, Any], n: int) -> float | None:
    """The total weight of a batch of ``n`` events whose arguments for accumulators of ``kind`` give weights ``w``
    (by keyword or in their place), read as the kinds read them (:func:`~streameval._validation.as_weights`):
    ``None`` without weights or where each is 1 (counted as whole events); inf where it is not known (a kind
    that may take them anywhere, or weights that the kind refuses)."""
    place = _weight_place(kind)
    if place == -1:
        return math.inf
    weights = kwargs.get("w")
    if weights is None and place is not None and place < len(columns):
        weights = columns[place]
    try:
        read = as_weights("w", weights, n)
    except (TypeError, ValueError):
        return math.inf
    return None if read is None else float(read.sum())


def can_take(acc: Any, weight: float) -> bool:
    """Whether an accumulator surely takes events of total weight ``weight`` without a refusal for a sum past the
    largest float (its kind's ``_can_take``; ``False`` for a kind written against the protocol alone)."""
    can = getattr(acc, "_can_take", None)
    return can is not None and bool(can(weight))
