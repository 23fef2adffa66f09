"""Score drift between a reference and a current distribution: KS, Wasserstein-1, PSI, Jensen–Shannon.

Every statistic is a pure function of two :class:`~streameval.ScoreReport`
objects (the distributions of two :class:`~streameval.ScoreAccumulator`,
or of windows over them). While both are exact (every distinct score kept),
KS and Wasserstein-1 equal scipy's on the raw scores. In the binned regime KS
comes with certified bounds and Wasserstein-1 takes each bin's scores as
spread evenly over the bin.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._numeric import running_sum
from ._validation import refuse_class
from .score_report import ScoreReport
from .segmented import Segmented
from .threads import Locked

__all__ = ["DRIFT_FIELDS", "DriftReport", "drift", "drift_by_segment", "drift_record", "kolmogorov_sf"]

Array = npt.NDArray[np.float64]
PSI_FLOOR = 1e-4  # proportions below it are raised to it in the PSI
DECILES = np.arange(1, 10) / 10.0
DRIFT_FIELDS = ("ks", "ks_pvalue", "psi", "js", "wasserstein")  # the drift a monitor's record holds


@dataclass(frozen=True)
class DriftReport:
    """How far the current scores have moved from the reference ones.

    ``ks`` is the two-sample Kolmogorov–Smirnov statistic (largest gap
    between the two CDFs); ``ks_lower`` and ``ks_upper`` hold the exact value
    (all three equal while both sides are exact). ``ks_pvalue`` is its
    asymptotic p-value. ``wasserstein`` is the area between the CDFs. ``psi``
    and ``js`` compare the proportions of the two sides in 10 bins cut at the
    reference's deciles: the population stability index (rule of thumb:
    < 0.1 stable, 0.1–0.25 moderate, > 0.25 shifted) and the Jensen–Shannon
    distance (base 2, between 0 and 1).
    """

    ks: float
    ks_lower: float
    ks_upper: float
    ks_pvalue: float
    wasserstein: float
    psi: float
    js: float
    exact: bool
    n_reference: int
    n_current: int

    def to_dict(self) -> dict[str, Any]:
        """Every field by name."""
        return dict(self.__dict__)


def kolmogorov_sf(x: float) -> float:
    """P(K > x) for the Kolmogorov distribution (scipy's ``kstwobign.sf``).

    Examples
    --------
    >>> from streameval.drift import kolmogorov_sf
    >>> round(kolmogorov_sf(1.36), 4)
    0.0495
    """
    if x <= 0:
        return 1.0
    if x < 1.0:  # the series in exp(-(2k-1)^2 pi^2 / (8 x^2)) converges fast here
        s = sum(math.exp(-((2 * k - 1) ** 2) * math.pi**2 / (8 * x * x)) for k in range(1, 8))
        return 1.0 - math.sqrt(2 * math.pi) / x * s
    return 2.0 * sum((-1) ** (k - 1) * math.exp(-2.0 * k * k * x * x) for k in range(1, 101))


def _inner(side: Any, name: str) -> Any:
    """``side``, or the accumulator it holds: a window's now, a monitor's, a lock's (a copy read under it)."""
    refuse_class(name, side)
    for _ in range(4):  # a lock of a monitor of a window at most: each holds the next
        inner = getattr(side, "accumulator", None)
        if callable(inner):  # a window (through a lock: under it): its accumulator now
            side = inner()
        elif inner is not None:  # a monitor
            side = inner
        elif isinstance(side, Locked):
            side = side.copy()
        else:
            break
    return side


def _report(side: Any, name: str) -> ScoreReport:
    if isinstance(side, ScoreReport):
        return side
    side = _inner(side, name)
    if hasattr(side, "scores") and callable(side.scores):  # a binary accumulator: the scores of all its events
        side = side.scores()
    report = side.get() if hasattr(side, "get") else None
    if not isinstance(report, ScoreReport):
        advice = ": drift_by_segment compares each segment" if isinstance(side, Segmented) else ""
        raise TypeError(
            f"{name} must be a ScoreAccumulator or a BinaryAccumulator, a window, monitor or Locked of one, or a "
            f"ScoreReport, got {type(side).__name__}{advice}"
        )
    return report


def drift(reference: Any, current: Any) -> DriftReport:
    """Drift statistics of ``current`` against ``reference``.

    Parameters
    ----------
    reference, current : ScoreAccumulator, BinaryAccumulator (its scores), window, monitor or Locked, or ScoreReport
        A window, monitor or ``Locked`` of a score or binary accumulator is read through. With the same bins
        when either is binned.

    Examples
    --------
    >>> import streameval as se
    >>> ref, cur = se.ScoreAccumulator(), se.ScoreAccumulator()
    >>> ref.update_many([0.1, 0.2, 0.2, 0.5])
    >>> cur.update_many([0.2, 0.3, 0.9])
    >>> d = se.drift(ref, cur)
    >>> round(d.ks, 6), round(d.wasserstein, 6), d.exact
    (0.416667, 0.216667, True)
    """
    r, c = _report(reference, "reference"), _report(current, "current")
    if r.weight == 0 or c.weight == 0:
        raise ValueError(f"both sides need scores: reference has {r.n}, current has {c.n}")
    if r.is_exact and c.is_exact:
        grid, lo, hi, fr, fc = _exact_grid(r, c)
    else:
        if r.bins != c.bins:
            raise ValueError(f"binned distributions must share their bins, got {r.bins!r} and {c.bins!r}")
        grid, lo, hi, fr, fc = _binned_grid(r, c, min(r.min, c.min), max(r.max, c.max))
    exact = r.is_exact and c.is_exact
    gap = np.abs(fr - fc)  # at the end of every cell
    ks_lower = float(gap.max())
    fr0, fc0 = np.concatenate([[0.0], fr[:-1]]), np.concatenate([[0.0], fc[:-1]])
    ks_upper = ks_lower if exact else float(max(ks_lower, np.abs(fr - fc0).max(), np.abs(fr0 - fc).max()))
    effective = r.n * c.n / (r.n + c.n)
    return DriftReport(
        ks=ks_lower,
        ks_lower=ks_lower,
        ks_upper=ks_upper,
        ks_pvalue=kolmogorov_sf(math.sqrt(effective) * ks_lower),
        wasserstein=_wasserstein(lo, hi, fr0, fc0, fr, fc, exact),
        psi=_psi(*_decile_proportions(grid, fr, fc)),
        js=_js(*_decile_proportions(grid, fr, fc)),
        exact=exact,
        n_reference=r.n,
        n_current=c.n,
    )


def drift_by_segment(reference: Any, current: Any) -> dict[Hashable, DriftReport]:
    """:func:`drift` of each segment of ``current`` against ``reference``, by segment.

    Parameters
    ----------
    reference : ScoreAccumulator, BinaryAccumulator, window over one, ScoreReport, or Segmented of them
        One distribution every segment is compared with, or a ``Segmented`` (or a window over one) whose
        segment of the same name is each segment's reference.
    current : Segmented of ScoreAccumulator or BinaryAccumulator, or a window, monitor or Locked of one

    Returns
    -------
    dict
        Each segment of ``current`` (in order of first appearance) to its :class:`DriftReport`.
        ``ValueError`` naming the segment where one has no scores (its events all of weight 0), or no
        reference segment: give one distribution to compare every segment with it.

    Examples
    --------
    >>> import streameval as se
    >>> ref = se.ScoreAccumulator()
    >>> ref.update_many([0.1, 0.2, 0.3, 0.4])
    >>> cur = se.Segmented(se.ScoreAccumulator)
    >>> cur.update_many(["eu", "eu", "us", "us"], [0.1, 0.3, 0.8, 0.9])
    >>> {segment: d.ks for segment, d in se.drift_by_segment(ref, cur).items()}
    {'eu': 0.25, 'us': 1.0}
    """
    segments = _inner(current, "current")
    if not isinstance(segments, Segmented):
        raise TypeError(
            "current must be a Segmented accumulator, or a window, monitor or Locked of one, "
            f"got {type(current).__name__}"
        )
    held = reference if isinstance(reference, ScoreReport) else _inner(reference, "reference")
    by_segment = held if isinstance(held, Segmented) else None
    one = None if by_segment is not None else _report(held, "reference")  # read once, not per segment
    if by_segment is not None:
        theirs = set(by_segment.segments)
        missing = [segment for segment in segments if segment not in theirs]
        if missing:
            raise ValueError(
                f"segments {missing!r} of current have no segment in reference: give one distribution as the "
                "reference to compare every segment with it"
            )
    out: dict[Hashable, DriftReport] = {}
    for segment in segments:
        try:
            out[segment] = drift(one if by_segment is None else by_segment[segment], segments[segment])
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{exc} (segment {segment!r})") from None
    return out


def drift_record(reference: Any, current: Any, labels: Mapping[Hashable, str] | None = None) -> dict[str, float]:
    """The drift fields of a monitor's record: ``drift_<field>`` of ``current``'s scores against ``reference``
    for each of :data:`DRIFT_FIELDS`, ``nan`` while either side has no scores.

    For a :class:`~streameval.Segmented` ``current`` (or a window over one), those of all its segments' scores
    together, then each segment's as ``"<label>/drift_<field>"``, with ``labels`` (segment to its text, as
    :meth:`~streameval.SegmentedReport.labels` gives them; default ``str``). ``TypeError`` where a side is not
    a distribution of scores.

    Examples
    --------
    >>> import streameval as se
    >>> from streameval.drift import drift_record
    >>> ref, cur = se.ScoreAccumulator(), se.Segmented(se.ScoreAccumulator)
    >>> ref.update_many([0.1, 0.2, 0.3, 0.4])
    >>> cur.update_many(["eu", "us"], [0.2, 0.9])
    >>> {k: v for k, v in drift_record(ref, cur).items() if k.endswith("drift_ks")}
    {'drift_ks': 0.5, 'eu/drift_ks': 0.5, 'us/drift_ks': 1.0}
    """
    reference = _report(reference, "reference")  # read once, not per part
    segments = _inner(current, "current")
    parts: list[tuple[str, Any]] = [("", segments)]
    if isinstance(segments, Segmented):
        accumulators = [segments[k] for k in segments]
        parts = [("", type(accumulators[0]).merge_all(accumulators) if accumulators else None)]
        names = labels if labels is not None else {k: str(k) for k in segments}
        parts += [(f"{names[k]}/", segments[k]) for k in segments]
    out: dict[str, float] = {}
    for prefix, side in parts:
        try:
            moved = drift(reference, side).to_dict() if side is not None else None
        except ValueError:  # no scores on a side yet
            moved = None
        out.update({f"{prefix}drift_{name}": math.nan if moved is None else moved[name] for name in DRIFT_FIELDS})
    return out


def _cdf_on(values: Array, counts: Array, grid: Array) -> Array:
    """The CDF (share of the weight at or below) at each grid point."""
    cum = np.concatenate([[0.0], running_sum(counts)])
    return cum[np.searchsorted(values, grid, side="right")] / cum[-1]


def _exact_grid(r: ScoreReport, c: ScoreReport) -> tuple[Array, Array, Array, Array, Array]:
    """Every distinct score of either side, and both CDFs there; a cell runs from one score to the next."""
    assert r.values is not None and c.values is not None
    grid = np.union1d(r.values, c.values)
    fr, fc = _cdf_on(r.values, r.counts, grid), _cdf_on(c.values, c.counts, grid)
    return grid, grid, grid, fr, fc


def _binned_grid(r: ScoreReport, c: ScoreReport, low: float, high: float) -> tuple[Array, Array, Array, Array, Array]:
    """Every non-empty bin of either side (keys), its edges clipped to the scores' range, both CDFs at its end."""
    keys_r, counts_r = _as_bins(r)
    keys_c, counts_c = _as_bins(c)
    keys = np.union1d(keys_r, keys_c)
    fr = _cdf_on(keys_r.astype(np.float64), counts_r, keys.astype(np.float64))
    fc = _cdf_on(keys_c.astype(np.float64), counts_c, keys.astype(np.float64))
    lo = np.maximum(r.bins.lower_edges(keys), low)
    top = keys + 1
    hi = np.full(keys.size, high)
    inside = top <= r.bins.key_max
    hi[inside] = np.minimum(r.bins.lower_edges(top[inside]), high)
    return hi, lo, hi, fr, fc


def _as_bins(report: ScoreReport) -> tuple[npt.NDArray[np.int64], np.ndarray]:
    """The report's counts per bin (an exact report's scores put into their bins)."""
    if report.values is None:
        assert report.keys is not None
        return report.keys, report.counts
    keys = report.bins.keys(report.values)
    uniq, inverse = np.unique(keys, return_inverse=True)
    counts = np.bincount(inverse.reshape(-1), weights=report.counts.astype(np.float64), minlength=uniq.size)
    return uniq.astype(np.int64), counts


def _wasserstein(lo: Array, hi: Array, fr0: Array, fc0: Array, fr: Array, fc: Array, exact: bool) -> float:
    """Area between the CDFs: constant between cells, and linear inside a bin (scores spread evenly)."""
    d_end = fr - fc
    between = float(np.sum(np.abs(d_end[:-1]) * np.maximum(lo[1:] - hi[:-1], 0.0)))
    if exact:
        return between
    d0, d1, width = fr0 - fc0, d_end, np.maximum(hi - lo, 0.0)
    same_sign = d0 * d1 >= 0
    total = np.abs(d0) + np.abs(d1)
    inside = np.where(
        same_sign, width * total / 2.0, width * (d0 * d0 + d1 * d1) / (2.0 * np.where(total > 0, total, 1.0))
    )
    return between + float(inside.sum())


def _decile_proportions(grid: Array, fr: Array, fc: Array) -> tuple[Array, Array]:
    """Shares of each side in the 10 bins cut at the reference's deciles (the first grid point reaching each)."""
    cuts = np.minimum(np.searchsorted(fr, DECILES - 1e-12, side="left"), fr.size - 1)
    r_at, c_at = fr[cuts], fc[cuts]
    r = np.diff(np.concatenate([[0.0], r_at, [1.0]]))
    c = np.diff(np.concatenate([[0.0], c_at, [1.0]]))
    return np.maximum(r, 0.0), np.maximum(c, 0.0)


def _psi(r: Array, c: Array) -> float:
    rf, cf = np.maximum(r, PSI_FLOOR), np.maximum(c, PSI_FLOOR)
    return float(np.sum((cf - rf) * np.log(cf / rf)))


def _js(r: Array, c: Array) -> float:
    m = (r + c) / 2.0

    def kl(p: Array) -> float:
        nz = p > 0
        return float(np.sum(p[nz] * np.log2(p[nz] / m[nz])))

    return math.sqrt(max(0.0, (kl(r) + kl(c)) / 2.0))
