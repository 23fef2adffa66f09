"""Numeric helpers shared by the metric modules."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._compiled import SPEEDUPS

__all__ = ["EventGroups", "event_groups", "finite_and_ascending", "object_codes", "running_sum", "scaled_to_one"]


def object_codes(values: list[object]) -> tuple[list[object], npt.NDArray[np.int64]] | None:
    """The distinct values of a list of exact str and int values in order of first appearance, and each value's
    code (the compiled coder, as a dict's ``setdefault`` gives them); ``None`` without the compiled module, for
    an empty list, or when any value is of another type.

    Examples
    --------
    >>> from streameval._numeric import object_codes
    >>> found = object_codes(["eu", "us", "eu", 7])
    >>> found is None or (found[0], found[1].tolist()) == (["eu", "us", 7], [0, 1, 0, 2])
    True
    """
    if SPEEDUPS is None or not values:
        return None
    codes = np.empty(len(values), dtype=np.int64)
    uniques = SPEEDUPS.object_codes(values, codes)
    return None if uniques is None else (uniques, codes)


def running_sum(counts: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``numpy.cumsum`` of counts as float64: whole counts are summed as integers.

    The same values (integer sums below 2**53 are exact either way), about three times faster: a float
    running sum waits on the latency of every add before it (8.8 against 3.1 us for 2,559 counts).

    Examples
    --------
    >>> import numpy as np
    >>> from streameval._numeric import running_sum
    >>> running_sum(np.array([3, 0, 2])).tolist(), running_sum(np.array([0.5, 1.0])).tolist()
    ([3.0, 3.0, 5.0], [0.5, 1.5])
    """
    a = np.asarray(counts)
    if a.dtype.kind in "iu":
        return np.cumsum(a).astype(np.float64)  # small integers accumulate in the platform integer
    return np.cumsum(a, dtype=np.float64)


def scaled_to_one(largest: float, *values: Any) -> tuple[Any, ...]:
    """``values`` times the even power of two that brings ``largest`` into [0.25, 1); unchanged when it is 0 or
    not finite.

    Multiplying by a power of two rounds nothing (unless a value falls below 2**-1022, where it no longer counts
    beside ``largest``), and an even one keeps square roots exact too, so a ratio of products of counts comes
    out to the bit as before, while products of weights as large as 1e200 or as small as 1e-200 no longer
    overflow to ``inf`` or underflow to 0.

    Examples
    --------
    >>> import numpy as np
    >>> from streameval._numeric import scaled_to_one
    >>> a, b = scaled_to_one(3e300, np.array([3e300, 1e300]), 2e300)
    >>> float(a[0] * a[1] / (b * b)) == 3e300 / 2e300 * (1e300 / 2e300)
    True
    """
    if not (math.isfinite(largest) and largest > 0):
        return values
    exponent = -(math.frexp(largest)[1] // 2 * 2)
    return tuple(np.ldexp(v, exponent) if isinstance(v, np.ndarray) else math.ldexp(v, exponent) for v in values)


def finite_and_ascending(x: npt.NDArray[np.float64]) -> tuple[bool, bool]:
    """Whether every value of ``x`` (float64, contiguous) is finite, and whether all are and never fall.

    One compiled pass (11 instead of 27 us for 10^5 event times), or numpy's ``isfinite`` and a comparison of
    neighbours.

    Examples
    --------
    >>> import numpy as np
    >>> from streameval._numeric import finite_and_ascending
    >>> finite_and_ascending(np.array([1.0, 2.0, 2.0])), finite_and_ascending(np.array([2.0, 1.0]))
    ((True, True), (True, False))
    >>> finite_and_ascending(np.array([1.0, np.inf]))
    (False, False)
    """
    if SPEEDUPS is not None:
        finite, ascending = SPEEDUPS.time_order(x)
        return bool(finite), bool(ascending)
    finite = bool(np.isfinite(x).all())
    return finite, finite and bool(np.all(x[1:] >= x[:-1]))


@dataclass(frozen=True)
class EventGroups:
    """Which group each event of a batch is in: group ``lookup[values[i] - lo]`` of ``count``.

    ``values`` are signed integers (a contiguous 1-D array); ``lookup`` (int32) holds -1 for a value of no
    group, and one -1 more at its end. Groups are numbered in ascending order of their values. An event whose
    value has no group makes the compiled grouped count refuse its batch (the caller then counts it otherwise).
    """

    values: npt.NDArray[np.signedinteger]
    lo: int
    lookup: npt.NDArray[np.int32]
    count: int

    def __post_init__(self) -> None:
        values, lookup = self.values, self.lookup
        if not (isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind == "i"):
            raise TypeError(f"values must be a 1-D array of signed integers, got {values!r}")
        if not isinstance(self.count, int) or self.count < 1:
            raise ValueError(f"count must be a positive integer, got {self.count!r}")
        if not (
            isinstance(lookup, np.ndarray)
            and lookup.dtype == np.int32
            and lookup.ndim == 1
            and lookup.size >= 2
            and lookup[-1] == -1
            and lookup.min() >= -1
            and lookup.max() < self.count
        ):
            raise ValueError(
                f"lookup must be an int32 array of groups in [-1, {self.count}) ending in -1, got {lookup!r}"
            )
        object.__setattr__(self, "values", np.ascontiguousarray(values))

    def kernel_args(self) -> tuple[np.ndarray, int, int, np.ndarray]:
        """The compiled kernels' group arguments: the values, their width in bytes, ``lo`` and the lookup."""
        return self.values, self.values.dtype.itemsize, self.lo, self.lookup


GROUPS_FROM = 1 << 16  # event_groups reads this many events: the groups of a batch's start


def event_groups(values: np.ndarray) -> tuple[list[int], list[int], EventGroups] | None:
    """The groups of a batch of integers, from its first ``GROUPS_FROM`` events (from all of them where one of
    eight events sampled after those has a value they lack: values sorted or in blocks): their distinct values
    in ascending order, the same in order of first appearance, and each event's group among them, in one
    compiled pass over those events (an event of another value is known by the count that reads the batch); ``None``
    without the compiled module, without events, or when the values are not signed integers spread over fewer
    than 2^20 values.

    Examples
    --------
    >>> import numpy as np
    >>> from streameval._numeric import event_groups
    >>> found = event_groups(np.array([7, 5, 7, 9]))
    >>> found is None or (found[0], found[1], found[2].count) == ([5, 7, 9], [7, 5, 9], 3)
    True
    """
    if SPEEDUPS is None or not isinstance(values, np.ndarray) or values.ndim != 1 or values.dtype.kind != "i":
        return None
    values = np.ascontiguousarray(values)
    found = SPEEDUPS.group_lookup(values, values.dtype.itemsize, GROUPS_FROM)
    if found is None:
        return None
    distinct, lo, lookup, appearing = found
    keys = np.frombuffer(distinct, dtype=np.int64).tolist()
    if not keys:  # no events
        return None
    groups = EventGroups(values, int(lo), np.frombuffer(lookup, dtype=np.int32), len(keys))
    return keys, np.frombuffer(appearing, dtype=np.int64).tolist(), groups
