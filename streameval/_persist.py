"""Saving and loading methods shared by the accumulators (the format lives in ``io``)."""

from __future__ import annotations

import os
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
