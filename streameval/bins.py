"""Binning schemes: a score becomes an integer bin key.

Every scheme maps each score to an integer *key*; keys are totally ordered in
the same order as the scores, so a higher key never holds a lower score. Bin
``k`` holds the scores ``lower_edge(k) <= s < lower_edge(k + 1)``; the keys a
scheme can produce form the closed range ``[key_min, key_max]``.

Three schemes exist:

* :meth:`Bins.range_free` (the default): logarithmic buckets of fixed relative
  width ``2**-mantissa_bits`` that take any score without configuration. They
  are mirrored around 0.5, so that a probability near 1 is resolved by its
  distance to 1, exactly as a probability near 0 is resolved by its distance
  to 0.
* :meth:`Bins.uniform`: ``n`` equal bins between ``lo`` and ``hi``, plus an
  underflow and an overflow bin.
* :meth:`Bins.from_edges`: bins between given, strictly increasing edges, plus
  an underflow and an overflow bin.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from ._compiled import SPEEDUPS
from ._validation import show

__all__ = ["BLOCK", "Bins", "EdgeBins", "RangeFreeBins", "UniformBins", "Workspace"]

FloatArray = npt.NDArray[np.float64]
KeyArray = npt.NDArray[np.int64]

_MAGNITUDE = np.int64(0x7FFF_FFFF_FFFF_FFFF)
_SIGN = np.int64(-0x8000_0000_0000_0000)
# Scores are turned into keys in blocks of this many values so that the
# intermediate arrays stay in the processor's cache.
BLOCK = 1 << 16


class Workspace:
    """Scratch arrays for one block of work, reused from block to block."""

    __slots__ = ("b", "f", "i", "i32", "j", "k", "u8")

    def __init__(self, n: int) -> None:
        self.f = np.empty(n, dtype=np.float64)
        self.i = np.empty(n, dtype=np.int64)
        self.j = np.empty(n, dtype=np.int64)
        self.k = np.empty(n, dtype=np.int64)
        self.i32 = np.empty(n, dtype=np.int32)
        self.b = np.empty(n, dtype=np.bool_)
        self.u8 = np.empty(n, dtype=np.uint8)


class Bins:
    """A binning scheme: scores to ordered integer keys, and keys back to edges.

    Use the constructors :meth:`range_free`, :meth:`uniform` and
    :meth:`from_edges`. Two schemes are equal when they put every score in the
    same bin; accumulators merge only when their schemes are equal.

    Examples
    --------
    >>> import streameval as se
    >>> bins = se.Bins.uniform(0.0, 1.0, 4)
    >>> bins.keys([-0.5, 0.0, 0.3, 0.25, 1.0]).tolist()
    [0, 1, 2, 2, 5]
    >>> bins.lower_edges([0, 1, 2, 5]).tolist()
    [-inf, 0.0, 0.25, 1.0]
    """

    key_min: int
    key_max: int

    # -- constructors -------------------------------------------------------
    @staticmethod
    def checked(bins: Any) -> Bins:
        """``bins`` when it is a scheme, the default range-free scheme for ``None``; ``TypeError`` otherwise.

        Examples
        --------
        >>> import streameval as se
        >>> se.Bins.checked(None)
        Bins.range_free(mantissa_bits=7)
        """
        if bins is None:
            return Bins.range_free()
        if not isinstance(bins, Bins):
            raise TypeError(f"bins must be a streameval Bins, got {bins!r}")
        return bins

    @staticmethod
    def range_free(mantissa_bits: int = 7) -> RangeFreeBins:
        """Logarithmic buckets of relative width ``2**-mantissa_bits`` over every float.

        Parameters
        ----------
        mantissa_bits : int, default 7
            Resolution: a bucket spans at most a fraction ``2**-mantissa_bits``
            of the distance of its scores to the nearest of 0 and 1 (or to 0
            for scores above 1 and below 0). Between 1 and 12.

        Examples
        --------
        >>> import streameval as se
        >>> bins = se.Bins.range_free()
        >>> k = bins.keys([1e-12, 0.3, 0.5, 0.999999, 40.0]).tolist()
        >>> k == sorted(k) and len(set(k)) == 5
        True
        """
        return RangeFreeBins(mantissa_bits)

    @staticmethod
    def uniform(lo: float, hi: float, n: int) -> UniformBins:
        """``n`` equal bins on ``[lo, hi)``, plus an underflow and an overflow bin.

        Parameters
        ----------
        lo, hi : float
            Finite bounds with ``lo < hi``. Scores below ``lo`` go to the
            underflow bin, scores at or above ``hi`` to the overflow bin.
        n : int
            Number of equal bins, at least 1.

        Examples
        --------
        >>> import streameval as se
        >>> se.Bins.uniform(0.0, 1.0, 1000).n_bins
        1002
        """
        return UniformBins(lo, hi, n)

    @staticmethod
    def from_edges(edges: npt.ArrayLike) -> EdgeBins:
        """Bins between finite, strictly increasing ``edges``.

        Bin ``i`` (for ``i = 1 .. len(edges) - 1``) holds
        ``edges[i-1] <= s < edges[i]``; key 0 holds ``s < edges[0]`` and the
        last key holds ``s >= edges[-1]``. With ``edges = np.unique(scores)``
        every bin holds at most one distinct score, and every metric is exact.

        Examples
        --------
        >>> import streameval as se
        >>> bins = se.Bins.from_edges([0.1, 0.35, 0.4, 0.8])
        >>> bins.keys([0.1, 0.35, 0.4, 0.8, 0.0]).tolist()
        [1, 2, 3, 4, 0]
        """
        return EdgeBins(edges)

    @staticmethod
    def from_dict(spec: dict[str, Any]) -> Bins:
        """The scheme described by ``spec`` (as ``to_dict`` writes it).

        Examples
        --------
        >>> import streameval as se
        >>> se.Bins.from_dict({"kind": "uniform", "lo": 0.0, "hi": 1.0, "n": 4}) == se.Bins.uniform(0, 1, 4)
        True
        """
        if not isinstance(spec, dict):
            raise TypeError(f"spec must be a dict, got {spec!r}")
        kind = spec.get("kind")
        fields = {k: v for k, v in spec.items() if k != "kind"}
        expected = {"range_free": {"mantissa_bits"}, "uniform": {"lo", "hi", "n"}, "edges": {"edges"}}
        if kind not in expected:
            raise ValueError(f"spec['kind'] must be one of {sorted(expected)}, got {kind!r}")
        if set(fields) != expected[kind]:
            raise ValueError(f"a {kind} spec has the fields {sorted(expected[kind])}, got {sorted(fields)}")
        if kind == "range_free":
            return Bins.range_free(fields["mantissa_bits"])
        if kind == "uniform":
            return Bins.uniform(fields["lo"], fields["hi"], fields["n"])
        edges = fields["edges"]
        if not isinstance(edges, list) or not all(
            isinstance(e, (int, float)) and not isinstance(e, bool) for e in edges
        ):
            raise TypeError(f"spec['edges'] must be a list of numbers, got {edges!r}"[:200])
        return Bins.from_edges(edges)

    # -- interface ----------------------------------------------------------
    @property
    def n_bins(self) -> int:
        """Number of keys the scheme can produce."""
        return self.key_max - self.key_min + 1

    def keys(self, scores: npt.ArrayLike) -> KeyArray:
        """Bin keys of ``scores`` (no NaN allowed; the caller validates)."""
        x = np.ascontiguousarray(scores, dtype=np.float64).reshape(-1)
        out = np.empty(x.shape, dtype=np.int64)
        ws = Workspace(min(BLOCK, x.size))
        for start in range(0, x.size, BLOCK):
            stop = start + BLOCK
            out[start:stop] = self._keys_block(x[start:stop], ws)
        return out

    def key(self, score: float) -> int:
        """Bin key of one score."""
        return int(self._keys_block(np.array([float(score)]), Workspace(1))[0])

    def lower_edges(self, keys: npt.ArrayLike) -> FloatArray:
        """The smallest score each bin holds (``-inf`` for the lowest bin)."""
        k = np.asarray(keys, dtype=np.int64)
        return self._lower_edges(k)

    def upper_edges(self, keys: npt.ArrayLike) -> FloatArray:
        """The lower edge of the next bin of each key: every score of the bin is below it (``inf`` for the top).

        Examples
        --------
        >>> import streameval as se
        >>> se.Bins.uniform(0.0, 1.0, 4).upper_edges([1, 2]).tolist()
        [0.25, 0.5]
        """
        top = np.asarray(keys, dtype=np.int64) + 1
        out = np.full(top.shape, math.inf)
        inside = top <= self.key_max
        out[inside] = self._lower_edges(top[inside])
        return out

    # -- storage codes --------------------------------------------------------
    # Counting uses *labelled codes*: integers in [0, 2 * n_codes) that identify
    # a (bin, label) pair one-to-one. They need not be ordered like scores,
    # which lets a scheme compute them with fewer operations than keys;
    # ``decode`` turns them back into (key, is positive).
    @property
    def n_codes(self) -> int:
        """Number of codes per label."""
        return self.n_bins

    def labelled_codes_into(self, x: FloatArray, is_pos: npt.NDArray[np.bool_] | bool, ws: Workspace) -> KeyArray:
        """Labelled codes of one block (no NaN); a view into ``ws``."""
        keys = self._keys_block(x, ws)
        n = x.size
        codes = ws.k[:n]
        codes[...] = keys
        if isinstance(is_pos, (bool, np.bool_)):
            if is_pos:
                codes += self.n_codes
        else:
            codes += np.multiply(is_pos, self.n_codes, out=ws.j[:n])
        return codes

    def labelled_codes(self, scores: npt.ArrayLike, is_pos: npt.ArrayLike) -> KeyArray:
        """Labelled codes of scores (no NaN) with their labels (True = positive)."""
        x = np.ascontiguousarray(scores, dtype=np.float64).reshape(-1)
        lab = np.ascontiguousarray(np.broadcast_to(np.asarray(is_pos, dtype=np.bool_), x.shape))
        ws = Workspace(x.size)
        return self.labelled_codes_into(x, lab, ws).copy()

    def labelled_code(self, score: float, is_pos: bool) -> int:
        """The labelled code of one score (not NaN) with its label: ``labelled_codes([score], [is_pos])[0]``.

        Examples
        --------
        >>> import streameval as se
        >>> bins = se.Bins.range_free()
        >>> bins.labelled_code(0.3, True) == int(bins.labelled_codes([0.3], [True])[0])
        True
        >>> quarters = se.Bins.uniform(0.0, 1.0, 4)
        >>> quarters.labelled_code(0.3, False), quarters.labelled_code(0.3, True)  # the positives' codes follow
        (2, 8)
        """
        return int(self.labelled_codes(np.array([float(score)]), np.array([bool(is_pos)]))[0])

    def decode(self, codes: npt.ArrayLike) -> tuple[KeyArray, npt.NDArray[np.bool_]]:
        """Keys and labels (True = positive) of labelled codes."""
        c = np.asarray(codes, dtype=np.int64)
        is_pos = c >= self.n_codes
        return c - is_pos * self.n_codes, is_pos

    def is_lower_edge(self, score: float) -> bool:
        """Whether ``score`` is the smallest value of its bin."""
        k = self.key(score)
        return bool(self._lower_edges(np.array([k], dtype=np.int64))[0] == score)

    # -- to implement -------------------------------------------------------
    def _keys_block(self, x: FloatArray, ws: Workspace) -> KeyArray:  # pragma: no cover
        """Keys of one block; may return a view into ``ws`` valid until its next use."""
        raise NotImplementedError

    def _lower_edges(self, k: KeyArray) -> FloatArray:  # pragma: no cover
        raise NotImplementedError

    def identity(self) -> tuple[Any, ...]:  # pragma: no cover
        """A hashable value equal for two schemes exactly when they bin every score alike."""
        raise NotImplementedError

    def compiled_kernel(self) -> tuple[Callable[..., tuple[int, bool, int, int, int]], tuple[Any, ...]] | None:
        """The compiled counting function of this scheme and its scheme arguments, or ``None``.

        ``None`` when the compiled module is not in use (see ``streameval.COMPILED``).
        """
        return None

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover
        """A JSON-safe description from which the scheme can be rebuilt."""
        raise NotImplementedError

    # -- comparison ---------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Bins):
            return NotImplemented
        return self.identity() == other.identity()

    def __hash__(self) -> int:
        return hash(self.identity())


class RangeFreeBins(Bins):
    """Range-free logarithmic buckets, mirrored around 0.5.

    Keys come from the bit pattern of a float ``t``: its sign, its exponent and
    the top ``mantissa_bits`` bits of its mantissa, so a bucket spans a
    relative width of at most ``2**-mantissa_bits`` of ``|t|``. For a score
    below 0.5 (negative ones included) ``t`` is the score itself; for a score
    at or above 0.5 it is ``s - 1`` (exact in floating point up to ``2**53``),
    so a probability such as ``1 - 1e-12`` is resolved as finely as ``1e-12``,
    and scores just above 1 are resolved by their distance to 1. ``-inf`` and
    ``+inf`` land in the lowest and highest keys. Every bucket's lower edge is
    a float that the bucket holds, so a threshold at an edge is exact.

    The key space spans about ``6000 * 2**mantissa_bits`` keys, but an
    accumulator stores only the octaves its scores reach.

    Examples
    --------
    >>> import streameval as se
    >>> bins = se.Bins.range_free()
    >>> k = bins.key(0.999)
    >>> lo, hi = bins.lower_edges([k, k + 1]).tolist()
    >>> lo <= 0.999 < hi and hi - lo < 0.001 * 2 ** -6
    True
    """

    def __init__(self, mantissa_bits: int = 7) -> None:
        if isinstance(mantissa_bits, bool) or not isinstance(mantissa_bits, (int, np.integer)):
            raise TypeError(f"mantissa_bits must be an integer, got {mantissa_bits!r}")
        if not 1 <= mantissa_bits <= 12:
            raise ValueError(f"mantissa_bits must be between 1 and 12, got {mantissa_bits!r}")
        m = int(mantissa_bits)
        self.mantissa_bits = m
        self._shift = 52 - m
        self._k_zero = 2047 << m  # added to every key, so that the key of -inf is 0
        # added to the keys of s - 1 for s >= 0.5, so that key(0.5) follows key(prev(0.5))
        self._k_upper = 2 * (1022 << m)
        self.key_min = 0
        self.key_max = self._k_zero + self._k_upper + (2047 << m)
        self._u_shift = np.uint64(self._shift)
        self._tag_shift = 12 + m
        self._pos_code = np.uint64(1 << (13 + m))

    def _keys_block(self, x: FloatArray, ws: Workspace) -> KeyArray:
        n = x.size
        upper = np.greater_equal(x, 0.5, out=ws.b[:n])
        t = np.subtract(x, upper, out=ws.f[:n])  # s - 1 for s >= 0.5: exact (Sterbenz) up to 2**53
        raw = t.view(np.int64)
        sign = np.right_shift(raw, 63, out=ws.j[:n])  # -1 for negative t, else 0
        ordered = np.bitwise_and(raw, _MAGNITUDE, out=ws.i[:n])
        ordered ^= sign
        ordered -= sign  # -|bits| for negative t: an integer monotone in t; -0.0 and 0.0 give 0
        ordered >>= self._shift
        offset = np.multiply(upper, self._k_upper, out=ws.j[:n])
        ordered += offset
        ordered += self._k_zero
        return ordered

    @property
    def n_codes(self) -> int:
        """Codes per label: a region bit above the sign, exponent and top mantissa bits."""
        return 1 << (13 + self.mantissa_bits)

    def labelled_codes_into(self, x: FloatArray, is_pos: npt.NDArray[np.bool_] | bool, ws: Workspace) -> KeyArray:
        # The code of s is the region (s >= 0.5), then the top 12 + m bits of t (the
        # same t as for keys) taken as unsigned after subtracting 1 from negative t:
        # a one-to-one image of the key that needs no sign handling (see decode).
        n = x.size
        upper = np.greater_equal(x, 0.5, out=ws.b[:n])
        t = np.subtract(x, upper, out=ws.f[:n])
        t += 0.0  # -0.0 becomes 0.0: one code for one bin
        raw = t.view(np.int64)
        v = np.right_shift(raw, 63, out=ws.i[:n])
        v += raw  # raw - 1 when t is negative
        codes = np.right_shift(v.view(np.uint64), self._u_shift, out=ws.k[:n].view(np.uint64))
        high = ws.j[:n]
        if is_pos is True or is_pos is False or isinstance(is_pos, np.bool_):
            high[...] = upper
            if is_pos:
                codes += self._pos_code
        else:
            tag = np.left_shift(is_pos.view(np.uint8), 1, out=ws.u8[:n])
            tag |= upper.view(np.uint8)
            high[...] = tag
        high <<= self._tag_shift
        out = codes.view(np.int64)
        out += high
        return out

    def labelled_code(self, score: float, is_pos: bool) -> int:
        """The labelled code of one score: :meth:`labelled_codes_into`'s operations on Python integers (compiled,
        where the batch kernel is: 0.15 against 0.43 us a call)."""
        if SPEEDUPS is not None and self._shift >= 8:
            return int(SPEEDUPS.labelled_code(score, is_pos, self._shift, self._tag_shift))
        upper = score >= 0.5
        t = (score - upper) + 0.0
        raw = struct.unpack("<q", struct.pack("<d", t))[0]
        v = (raw + (raw >> 63)) & 0xFFFF_FFFF_FFFF_FFFF  # raw - 1 when t is negative, as unsigned
        return (v >> self._shift) + ((2 * bool(is_pos) + upper) << self._tag_shift)

    def decode(self, codes: npt.ArrayLike) -> tuple[KeyArray, npt.NDArray[np.bool_]]:
        """Keys and labels of labelled codes.

        Examples
        --------
        >>> import numpy as np, streameval as se
        >>> bins = se.Bins.range_free()
        >>> x = np.array([-3.0, -0.0, 0.2, 0.7, 5.0])
        >>> keys, pos = bins.decode(bins.labelled_codes(x, [True, False, True, False, True]))
        >>> bool(np.array_equal(keys, bins.keys(x))), pos.tolist()
        (True, [True, False, True, False, True])
        """
        m = self.mantissa_bits
        c = np.asarray(codes, dtype=np.int64)
        is_pos = ((c >> (13 + m)) & 1).astype(np.bool_)
        upper = (c >> (12 + m)) & 1
        u = c & ((1 << (12 + m)) - 1)
        top = (1 << (11 + m)) - 1
        ordered = np.where(u > top, top - u, u)  # negative t: -1 - (u - 2**(11+m))
        return ordered + self._k_zero + upper * self._k_upper, is_pos

    def upper_edges(self, keys: npt.ArrayLike) -> FloatArray:
        """The lower edge of the next bin of each key: every score of the bin is below it (``inf`` for the top)."""
        if SPEEDUPS is None:
            return super().upper_edges(keys)
        k = np.ascontiguousarray(keys, dtype=np.int64)
        out = np.empty(k.shape)
        SPEEDUPS.range_free_edges(k, self.mantissa_bits, 1, self.key_max, out)
        return out

    def _lower_edges(self, k: KeyArray) -> FloatArray:
        if SPEEDUPS is not None:  # the same bit operations and float step, compiled
            keys = np.ascontiguousarray(k, dtype=np.int64)
            out = np.empty(keys.shape)
            SPEEDUPS.range_free_edges(keys, self.mantissa_bits, 0, self.key_max, out)
            return out
        k = k.astype(np.int64, copy=True) - self._k_zero
        upper = k >= (1022 << self.mantissa_bits)
        k[upper] -= self._k_upper
        ordered = k << self._shift
        bits = np.where(ordered < 0, _SIGN - ordered, ordered)
        edges = bits.view(np.float64).copy()
        if upper.any():
            idx = np.flatnonzero(upper)
            t = edges[idx]  # the lowest s - 1 of each bucket
            s = t + 1.0  # may round below the bucket: moved up one float where it did
            # s - 1 is the t whose key is the score's (rounded as the key rounds it): below t, below the bucket
            low = (s - 1.0) < t
            s[low] = np.nextafter(s[low], np.inf)
            edges[idx] = s
        return edges

    def identity(self) -> tuple[Any, ...]:
        """``("range_free", mantissa_bits)``."""
        return ("range_free", self.mantissa_bits)

    def compiled_kernel(self) -> tuple[Callable[..., tuple[int, bool, int, int, int]], tuple[Any, ...]] | None:
        """``_speedups.count_range_free`` and this scheme's shifts (``None`` without the compiled module)."""
        if SPEEDUPS is None:
            return None
        return SPEEDUPS.count_range_free, (self._shift, self._tag_shift)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe description of the scheme.

        Examples
        --------
        >>> import streameval as se
        >>> se.Bins.range_free().to_dict()
        {'kind': 'range_free', 'mantissa_bits': 7}
        """
        return {"kind": "range_free", "mantissa_bits": self.mantissa_bits}

    def __repr__(self) -> str:
        return f"Bins.range_free(mantissa_bits={self.mantissa_bits})"


def _finite_float(name: str, value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {show(value)}")
    return v


class UniformBins(Bins):
    """``n`` equal bins on ``[lo, hi)`` plus underflow (key 0) and overflow (key n+1).

    The edges are ``lo + (hi - lo) * (i / n)`` (so ``uniform(0, 1, 10)`` has
    the edge ``0.3``, not ``0.30000000000000004``); a score's key is computed
    arithmetically and then checked against those edges, so the key always
    agrees with the edges exactly.

    Examples
    --------
    >>> import streameval as se
    >>> se.Bins.uniform(0.0, 1.0, 10).keys([0.1, 0.2, 0.3]).tolist()
    [2, 3, 4]
    """

    def __init__(self, lo: float, hi: float, n: int) -> None:
        lo_f = _finite_float("lo", lo)
        hi_f = _finite_float("hi", hi)
        if not lo_f < hi_f:
            raise ValueError(f"lo must be below hi, got lo={show(lo)}, hi={show(hi)}")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"n must be an integer, got {n!r}")
        if n < 1:
            raise ValueError(f"n must be at least 1, got {show(n)}")
        self.lo, self.hi, self.n = lo_f, hi_f, int(n)
        # lo + (hi - lo) * (i / n): with lo = 0 and hi = 1 every edge is i / n correctly rounded
        self.edges = lo_f + (hi_f - lo_f) * (np.arange(self.n + 1) / self.n)
        self.edges[-1] = hi_f
        if not np.all(np.diff(self.edges) > 0):
            raise ValueError(f"n={n!r} is too large for the range [{lo!r}, {hi!r}): edges collide")
        self._scale = self.n / (hi_f - lo_f)
        self._lower = np.concatenate([[-np.inf], self.edges])
        self._upper = np.concatenate([self.edges, [np.nan]])  # nothing is >= nan
        self.key_min = 0
        self.key_max = self.n + 1

    def _keys_block(self, x: FloatArray, ws: Workspace) -> KeyArray:
        with np.errstate(over="ignore", invalid="ignore"):
            guess = (x - self.lo) * self._scale
        np.clip(guess, -1.0, self.n + 1.0, out=guess)
        k = guess.astype(np.int64) + 1  # truncation; clip made it >= 0 after + 1
        np.clip(k, 0, self.n + 1, out=k)
        # the guess may be one off by rounding: bin k holds lower[k] <= s < upper[k]
        below = x < self._lower[k]
        above = x >= self._upper[k]
        k -= below
        k += above
        return k

    def _lower_edges(self, k: KeyArray) -> FloatArray:
        return self._lower[k]

    def identity(self) -> tuple[Any, ...]:
        """``("uniform", lo, hi, n)``."""
        return ("uniform", self.lo, self.hi, self.n)

    def compiled_kernel(self) -> tuple[Callable[..., tuple[int, bool, int, int, int]], tuple[Any, ...]] | None:
        """``_speedups.count_uniform`` and this scheme's range and edges (``None`` without the compiled module)."""
        if SPEEDUPS is None:
            return None
        return SPEEDUPS.count_uniform, (self.lo, self._scale, self.n, self._lower, self._upper)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe description of the scheme."""
        return {"kind": "uniform", "lo": self.lo, "hi": self.hi, "n": self.n}

    def __repr__(self) -> str:
        return f"Bins.uniform({self.lo!r}, {self.hi!r}, {self.n!r})"


class EdgeBins(Bins):
    """Bins between given edges plus underflow (key 0) and overflow (last key).

    Examples
    --------
    >>> import streameval as se
    >>> se.Bins.from_edges([0.0, 0.5, 1.0]).n_bins
    4
    """

    def __init__(self, edges: npt.ArrayLike) -> None:
        try:
            e = np.array(edges, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"edges must be an array of real numbers, got {edges!r}") from None
        if e.ndim != 1 or e.size == 0:
            raise ValueError(f"edges must be a non-empty 1-D array, got shape {e.shape}")
        bad = np.flatnonzero(~np.isfinite(e))
        if bad.size:
            raise ValueError(f"edges must be finite, got {float(e[bad[0]])!r} at index {bad[0]}")
        steps = np.flatnonzero(np.diff(e) <= 0)
        if steps.size:
            i = int(steps[0])
            raise ValueError(
                f"edges must be strictly increasing, got {float(e[i])!r} then {float(e[i + 1])!r} at index {i + 1}"
            )
        e.setflags(write=False)
        self.edges = e
        self._padded = np.concatenate([[-np.inf], e])
        self.key_min = 0
        self.key_max = e.size

    def _keys_block(self, x: FloatArray, ws: Workspace) -> KeyArray:
        return np.searchsorted(self.edges, x, side="right").astype(np.int64, copy=False)

    def _lower_edges(self, k: KeyArray) -> FloatArray:
        return self._padded[k]

    def identity(self) -> tuple[Any, ...]:
        """``("edges", the edges' bytes)``."""
        return ("edges", self.edges.tobytes())

    def compiled_kernel(self) -> tuple[Callable[..., tuple[int, bool, int, int, int]], tuple[Any, ...]] | None:
        """``_speedups.count_edges`` and the edges (``None`` without the compiled module)."""
        if SPEEDUPS is None:
            return None
        return SPEEDUPS.count_edges, (self.edges,)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe description of the scheme."""
        return {"kind": "edges", "edges": self.edges.tolist()}

    def __repr__(self) -> str:
        if self.edges.size <= 6:
            return f"Bins.from_edges({self.edges.tolist()!r})"
        return f"Bins.from_edges(<{self.edges.size} edges from {self.edges[0]!r} to {self.edges[-1]!r}>)"
