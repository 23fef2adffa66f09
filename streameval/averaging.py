"""Averaging over shards, folds, repeated runs or classes: micro and macro.

``micro`` sums the counts of several accumulators and reports on the sum;
``macro`` reports on each and summarises every scalar metric across them. Both
work for any accumulator kind whose report lists its scalar metrics in
``SCALAR_METRICS``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .confusion import ratio

__all__ = ["MacroReport", "MetricSummary", "macro", "metric_value", "micro"]


@dataclass(frozen=True)
class MetricSummary:
    """One metric across several members: the values, their mean and sample std.

    ``mean`` and ``std`` (ddof=1) are taken over the members where the value is
    defined; undefined values stay in ``values`` as ``nan`` and are counted by
    ``n_undefined``. ``mean`` is ``nan`` when no member defines the metric,
    ``std`` when fewer than two do.

    Examples
    --------
    >>> from streameval import MetricSummary
    >>> s = MetricSummary.of([0.8, 0.9, float("nan")])
    >>> round(s.mean, 12), round(s.std, 6), s.n_undefined
    (0.85, 0.070711, 1)
    """

    values: tuple[float, ...]
    mean: float
    std: float
    n_undefined: int

    @classmethod
    def of(cls, values: Iterable[float]) -> MetricSummary:
        """Summarise ``values``."""
        vals = tuple(float(v) for v in values)
        arr = np.array(vals, dtype=np.float64)
        ok = arr[~np.isnan(arr)]
        with np.errstate(invalid="ignore", over="ignore"):  # infinite values (e.g. LR+) give nan std
            mean = float(ok.mean()) if ok.size else math.nan
            std = float(ok.std(ddof=1)) if ok.size >= 2 else math.nan
        return cls(values=vals, mean=mean, std=std, n_undefined=int(arr.size - ok.size))

    def __repr__(self) -> str:
        return (
            f"MetricSummary(mean={self.mean:.6g}, std={self.std:.3g}, n={len(self.values)}, "
            f"undefined={self.n_undefined})"
        )


def metric_value(report: Any, name: str) -> Any:
    """A report's scalar metric ``name``; a method (such as ``ece``) is called with its defaults.

    Examples
    --------
    >>> import streameval as se
    >>> from streameval.averaging import metric_value
    >>> acc = se.BinaryAccumulator()
    >>> acc.update_many([1, 0], [0.9, 0.3])
    >>> metric_value(acc.get(), "auc"), round(metric_value(acc.get(), "ece"), 6)
    (1.0, 0.2)
    """
    value = getattr(report, name)
    return value() if callable(value) else value


def metrics_table(report: Any) -> str:
    """Every scalar metric of a report, one a line: its name and its value (whole numbers as such, others to six
    significant digits) — the ``summary()`` of the reports that have no table of their own.

    Examples
    --------
    >>> import streameval as se
    >>> from streameval.averaging import metrics_table
    >>> acc = se.ScoreAccumulator()
    >>> acc.update_many([0.2, 0.4, 0.9])
    >>> print(metrics_table(acc.get()).splitlines()[0])
    n       3
    """
    names = list(type(report).SCALAR_METRICS)
    width = max(map(len, names), default=0)
    lines = []
    for name in names:
        value = metric_value(report, name)
        is_whole = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
        text = str(int(value)) if is_whole else f"{float(value):.6g}"
        lines.append(f"{name:<{width}}  {text}")
    return "\n".join(lines)


def text_columns(rows: list[list[str]]) -> str:
    """Rows of cells as text, each column as wide as its widest cell, two spaces apart (a header is a row).

    Examples
    --------
    >>> from streameval.averaging import text_columns
    >>> print(text_columns([["segment", "ks"], ["eu", "0.04"], ["asia", "0.3"]]))
    segment  ks
    eu       0.04
    asia     0.3
    """
    widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


class MacroReport:
    """Every scalar metric of several reports, summarised across them.

    Attribute access gives a :class:`MetricSummary` for every scalar metric
    of the members (``macro.auc.mean``, ``macro.f1.std``, ``macro.recall.values``).
    For binary members there are also ``macro_precision``, ``macro_recall``,
    ``macro_f1`` (2 P R / (P + R) of the macro averages, the definition in
    Zhou's *Machine Learning* (2.14)) and ``mean_f1`` (the mean of the members'
    F1, scikit-learn's ``average='macro'``), all as floats.

    Examples
    --------
    >>> import streameval as se
    >>> folds = [se.BinaryAccumulator() for _ in range(3)]
    >>> for i, acc in enumerate(folds):
    ...     acc.update_many([1, 1, 0, 0], [0.9, 0.4 + i / 8, 0.6, 0.1])
    >>> m = se.macro(folds)
    >>> [round(v, 4) for v in m.auc.values]
    [0.75, 0.75, 1.0]
    >>> round(m.auc.mean, 4), round(m.auc.std, 4)
    (0.8333, 0.1443)
    >>> m.precision.values, m.recall.values
    ((0.5, 0.6666666666666666, 0.6666666666666666), (0.5, 1.0, 1.0))
    >>> round(m.macro_f1, 4), round(m.mean_f1, 4)
    (0.7051, 0.7)
    """

    def __init__(self, reports: Sequence[Any]) -> None:
        if not reports:
            raise ValueError("macro needs at least one accumulator or report, got none")
        kind = type(reports[0])
        for i, r in enumerate(reports):
            if type(r) is not kind:
                raise TypeError(f"all members must be of one kind, got {kind.__name__} and {type(r).__name__} at {i}")
        self.reports = tuple(reports)
        self.kind = kind
        self._summaries = {
            name: MetricSummary.of(metric_value(r, name) for r in reports) for name in kind.SCALAR_METRICS
        }

    def __getattr__(self, name: str) -> MetricSummary:
        summaries = self.__dict__.get("_summaries", {})
        if name in summaries:
            return summaries[name]
        raise AttributeError(f"{type(self).__name__} has no metric {name!r}; metrics: {sorted(summaries)}")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._summaries))

    @property
    def metrics(self) -> tuple[str, ...]:
        """Names of the summarised metrics."""
        return tuple(self._summaries)

    def _member_mean(self, name: str) -> float:
        if name not in self._summaries:
            raise TypeError(
                f"macro {name} needs members with a binary {name}; {self.kind.__name__} members have "
                f"{sorted(self._summaries)}"
            )
        return self._summaries[name].mean

    @property
    def macro_precision(self) -> float:
        """Mean of the members' precision (over members where it is defined)."""
        return self._member_mean("precision")

    @property
    def macro_recall(self) -> float:
        """Mean of the members' recall."""
        return self._member_mean("recall")

    @property
    def macro_f1(self) -> float:
        """2 macro-P macro-R / (macro-P + macro-R)."""
        p, r = self.macro_precision, self.macro_recall
        return ratio(2 * p * r, p + r)

    @property
    def mean_f1(self) -> float:
        """Mean of the members' F1 (scikit-learn's macro F1)."""
        return self._member_mean("f1")

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """``{metric: {"mean", "std", "values", "n_undefined"}}`` for every metric."""
        return {
            name: {"mean": s.mean, "std": s.std, "values": list(s.values), "n_undefined": s.n_undefined}
            for name, s in self._summaries.items()
        }

    def __repr__(self) -> str:
        return f"MacroReport(kind={self.kind.__name__}, members={len(self.reports)})"


def _reports(items: Iterable[Any]) -> list[Any]:
    out = []
    for i, item in enumerate(items):
        if isinstance(item, type):
            raise TypeError(f"members must be accumulators or reports, got the class {item.__name__} at index {i}")
        if hasattr(item, "get") and callable(item.get) and hasattr(item, "merge"):
            out.append(item.get())
        elif hasattr(type(item), "SCALAR_METRICS"):
            out.append(item)
        else:
            raise TypeError(f"members must be accumulators or reports, got {type(item).__name__} at index {i}")
    return out


def micro(accumulators: Iterable[Any]) -> Any:
    """The report of the summed counts of ``accumulators`` (equal to merging them).

    A window stands for the accumulator of its events now (``accumulator()``), and a monitor or a label join for
    the accumulator it counts into, as :func:`macro` and :func:`~streameval.drift` take them.

    Examples
    --------
    >>> import streameval as se
    >>> a, b = se.BinaryAccumulator(), se.BinaryAccumulator()
    >>> a.update_many([1, 0], [0.9, 0.2])
    >>> b.update_many([1, 0], [0.3, 0.6])
    >>> se.micro([a, b]).auc == (a + b).get().auc
    True
    >>> window = se.Sliding(se.BinaryAccumulator, size=2)
    >>> window.update_many([1, 0, 1], [0.9, 0.2, 0.7])
    >>> se.micro([window, b]).n
    4
    """
    accs = [_counted(item) for item in accumulators]
    if not accs:
        raise ValueError("micro needs at least one accumulator, got none")
    kind = type(accs[0])
    if not hasattr(kind, "merge_all"):
        raise TypeError(f"micro needs accumulators, got {kind.__name__}")
    return kind.merge_all(accs).get()


def _counted(item: Any) -> Any:
    """The accumulator whose counts ``item`` holds: a window's of its events now, a monitor's or a join's own."""
    inner = getattr(item, "accumulator", None)
    if callable(inner) and not hasattr(inner, "get"):  # a window: the accumulator of its events now
        return _counted(inner())
    if inner is not None and hasattr(inner, "get"):  # a monitor, a label join: the one it counts into
        return _counted(inner)
    return item


def macro(items: Iterable[Any]) -> MacroReport:
    """Summaries across accumulators (or their reports) of every scalar metric.

    ``items`` may also be a segmented accumulator (or its report): the
    summaries are then across its segments.

    See :class:`MacroReport`.
    """
    report = items.get() if hasattr(items, "get") and hasattr(items, "merge") else items
    if hasattr(report, "reports") and hasattr(report, "overall"):  # a segmented report: across its segments
        return MacroReport(list(report.reports.values()))
    return MacroReport(_reports(items))
