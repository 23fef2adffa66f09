"""Saving and loading methods shared by the accumulators (the format lives in ``io``)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, TypeVar

T = TypeVar("T", bound="Persistable")


class Persistable:
    """``to_dict`` / ``from_dict``, ``to_bytes`` / ``from_bytes``, ``save`` / ``load``."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of the state (see :func:`streameval.to_dict`)."""
        from . import io

        return io.to_dict(self)

    def to_bytes(self) -> bytes:
        """The compact binary state (see :func:`streameval.to_bytes`)."""
        from . import io

        return io.to_bytes(self)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the state to ``path`` atomically."""
        from . import io

        io.save(self, path)

    @classmethod
    def _checked(cls: type[T], acc: Any) -> T:
        from .io import FormatError

        if not isinstance(acc, cls):
            raise FormatError(f"the state holds a {type(acc).__name__}, not a {cls.__name__}")
        return acc

    @classmethod
    def from_dict(cls: type[T], d: dict[str, Any]) -> T:
        """The accumulator in ``d``; ``FormatError`` if it is not a valid state of this kind."""
        from . import io

        return cls._checked(io.from_dict(d))

    @classmethod
    def from_bytes(cls: type[T], blob: bytes) -> T:
        """The accumulator in ``blob``; ``FormatError`` if it is not a valid state of this kind."""
        from . import io

        return cls._checked(io.from_bytes(blob))

    @classmethod
    def load(cls: type[T], path: str | os.PathLike[str]) -> T:
        """The accumulator saved at ``path``."""
        from . import io

        return cls._checked(io.load(path))


M = TypeVar("M", bound="Mergeable")


class Mergeable:
    """Merging built on two methods each accumulator defines.

    ``_check_mergeable(other)`` raises when ``other`` cannot be merged in;
    ``_merge_in(other)`` adds ``other``'s counts to this accumulator in place.
    From them come ``merge``, ``merge_all``, ``a + b`` and ``sum([...])``.
    """

    def copy(self: M) -> M:  # pragma: no cover - every accumulator defines it
        raise NotImplementedError

    def _check_mergeable(self, other: Any) -> None:  # pragma: no cover - every accumulator defines it
        raise NotImplementedError

    def _merge_in(self, other: Any) -> None:  # pragma: no cover - every accumulator defines it
        raise NotImplementedError

    def merge(self: M, other: M) -> M:
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
        new._merge_in(other)
        return new

    @classmethod
    def merge_all(cls: type[M], accumulators: Iterable[M]) -> M:
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
            out._merge_in(acc)
        return out

    def __add__(self: M, other: Any) -> M:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self.merge(other)

    def __radd__(self: M, other: Any) -> M:
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self.copy()  # sum() starts from 0
        return NotImplemented
