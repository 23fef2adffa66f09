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

from array import array
from collections.abc import Callable
from typing import Any

import numpy as np

from ._compiled import SPEEDUPS

__all__ = ["COMPILED", "FLUSH_EVERY", "EventBuffer", "EventColumns", "PyEventBuffer"]

FLUSH_EVERY = 4096  # per-event updates are counted in batches of this size
_TICK = 256  # the Python twin checks its buffer every _TICK events (a small int stays cached)
_UNIT = 1.0  # the default weight: identity with it selects the fast path


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

    def _set_labels(self, pos_label: Any, neg_label: Any) -> None:
        """Set the two labels and empty the buffer."""
        self._buf_pos = array("d")
        self._buf_neg = array("d")
        self._route = {neg_label: self._buf_neg.append, pos_label: self._buf_pos.append}
        self._room = _TICK

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


class EventColumns:
    """Checked per-event values buffered as typed columns, with their weights, until counted as one batch.

    Examples
    --------
    >>> from streameval._events import EventColumns
    >>> buf = EventColumns("d", "d")
    >>> buf.append((1.0, 2.0), 1.0), buf.append((3.0, 4.0), 0.5)
    (False, False)
    >>> columns, weights = buf.arrays()
    >>> buf.clear()
    >>> [c.tolist() for c in columns], weights.tolist(), len(buf)
    ([[1.0, 3.0], [2.0, 4.0]], [1.0, 0.5], 0)
    """

    __slots__ = ("_columns", "_typecodes", "_weights", "weighted")

    def __init__(self, *typecodes: str) -> None:
        self._typecodes = typecodes
        self.clear()

    def clear(self) -> None:
        """Empty the buffer (once its events are counted)."""
        self._columns = [array(code) for code in self._typecodes]
        self._weights = array("d")
        self.weighted = False

    def __len__(self) -> int:
        return len(self._weights)

    def append(self, values: tuple[Any, ...], w: float) -> bool:
        """Store one event's values and weight; whether the buffer is full (``FLUSH_EVERY`` events)."""
        for column, value in zip(self._columns, values, strict=True):
            column.append(value)
        self._weights.append(w)
        if w != 1.0:
            self.weighted = True
        return len(self._weights) >= FLUSH_EVERY

    def arrays(self) -> tuple[list[np.ndarray], np.ndarray | None]:
        """Copies of the buffered columns as numpy arrays, and the weights (``None`` when all are 1)."""
        columns = [np.frombuffer(c, dtype=np.dtype(c.typecode)).copy() for c in self._columns]
        weights = np.frombuffer(self._weights, dtype=np.float64).copy() if self.weighted else None
        return columns, weights


_speedups = SPEEDUPS
#: Whether the compiled hot paths are in use.
COMPILED: bool = _speedups is not None
EventBuffer: type = _speedups.EventBuffer if _speedups is not None else PyEventBuffer
if _speedups is not None and _speedups.CAPACITY != FLUSH_EVERY:  # pragma: no cover
    raise ImportError(f"streameval._speedups was built for another version (CAPACITY {_speedups.CAPACITY})")
