"""Metrics on the dashboards teams already watch: a Prometheus collector (the ``prometheus`` extra).

:class:`MetricsCollector` is a ``prometheus_client`` custom collector: each
scrape reads the current report of every accumulator it was given and
exposes one metric family per metric, labelled with the model's name, the
segment (for a :class:`~streameval.Segmented` one, as
:meth:`~streameval.SegmentedReport.labels` names it: ``''`` for the segment
``""``, since the whole's is empty; ``1`` and ``'1'`` for ``1`` and ``"1"``)
and the window (the window's class, empty for a plain accumulator).

Scrapes run on the HTTP server's thread. When other threads update the
accumulators, give the collector :class:`~streameval.Locked` ones: each
scrape then reads a report under the lock, between two updates.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .averaging import metric_value
from .join import LabelJoin
from .windows import Monitor

try:
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError("streameval.prometheus needs prometheus-client: pip install 'streameval[prometheus]'") from exc

__all__ = ["DEFAULT_METRICS", "MetricsCollector"]

DEFAULT_METRICS = (
    "n", "positives", "negatives", "auc", "average_precision", "precision", "recall", "f1", "fpr", "eer",
    "selection_rate", "brier", "log_loss", "ece", "accuracy", "macro_f1", "mae", "rmse", "r2", "mean", "median",
    "a_accuracy", "b_accuracy", "mcnemar_p_value",
)  # fmt: skip
# a label join's counts (LabelJoin.counts()): counters, but for what waits, a gauge
JOIN_COUNTS = {
    "matched": ("join_matched", "Predictions matched with their labels and counted."),
    "expired": ("join_expired", "Predictions whose labels did not come within the ttl (or evicted)."),
    "evicted": ("join_evicted", "Predictions or labels evicted past max_pending."),
    "orphans": ("join_orphan_labels", "Labels whose predictions never came."),
    "late": ("join_late_labels", "Labels that came after their predictions expired."),
    "pending": ("join_pending_predictions", "Predictions waiting for their labels."),
    "pending_labels": ("join_pending_labels", "Labels waiting for their predictions."),
}
# counts of events: counters (their name gets _total) on a plain accumulator, gauges in a window (they fall)
COUNTS = {"n": "events", "positives": "positives", "negatives": "negatives"}


class MetricsCollector:
    """A Prometheus collector of the metrics of named accumulators.

    Parameters
    ----------
    accumulators : mapping or callable
        Model name to an accumulator, a window, a ``Segmented``, a
        ``Monitor``, a :class:`~streameval.LabelJoin` (its counts too: pairs matched, labels
        late or orphaned, what waits) or a ``Locked`` of one; or a callable
        returning such a mapping at each scrape (for models that come and go).
    metrics : sequence of str
        Report attribute names to expose, where a report has them (a method
        such as ``ece`` is called with its defaults).
    prefix : str, default "streameval"
        The first part of every metric name.

    Examples
    --------
    >>> import streameval as se
    >>> from prometheus_client import CollectorRegistry, generate_latest
    >>> from streameval.prometheus import MetricsCollector
    >>> acc = se.BinaryAccumulator()
    >>> acc.update_many([1, 0, 1], [0.9, 0.2, 0.4])
    >>> registry = CollectorRegistry()
    >>> registry.register(MetricsCollector({"fraud": acc}, metrics=("n", "auc")))
    >>> print(generate_latest(registry).decode().strip())
    # HELP streameval_events_total Events counted (their weight when weighted).
    # TYPE streameval_events_total counter
    streameval_events_total{model="fraud",segment="",window=""} 3.0
    # HELP streameval_auc auc of the events counted (streameval report attribute).
    # TYPE streameval_auc gauge
    streameval_auc{model="fraud",segment="",window=""} 1.0
    """

    LABELS = ("model", "segment", "window")

    def __init__(
        self,
        accumulators: Mapping[str, Any] | Callable[[], Mapping[str, Any]],
        metrics: tuple[str, ...] | list[str] = DEFAULT_METRICS,
        prefix: str = "streameval",
    ) -> None:
        if not callable(accumulators) and not isinstance(accumulators, Mapping):
            raise TypeError(f"accumulators must map model names to accumulators, got {type(accumulators).__name__}")
        if isinstance(metrics, str) or not all(isinstance(m, str) for m in metrics):
            raise TypeError(f"metrics must be a sequence of metric names, got {metrics!r}")
        if not prefix or not prefix.replace("_", "a").isalnum() or prefix[0].isdigit():
            raise ValueError(f"prefix must be a Prometheus name (letters, digits, _), got {prefix!r}")
        self.accumulators = accumulators
        self.metrics = tuple(metrics)
        self.prefix = prefix

    def _rows(
        self, joins: list[tuple[tuple[str, str, str], dict[str, int]]]
    ) -> Iterator[tuple[tuple[str, str, str], Any, bool]]:
        """(labels, report, counts only grow) of every model, segment and whole; a label join's counts go to
        ``joins``."""
        models = self.accumulators() if callable(self.accumulators) else self.accumulators
        for name, acc in models.items():
            inner = acc.inner if hasattr(acc, "inner") else acc  # a Locked one: its class names the window
            joined = isinstance(inner, LabelJoin)
            if joined:  # the window is that of the accumulator the join counts into
                inner = inner.accumulator
            if isinstance(inner, Monitor):  # and of the accumulator a monitor records
                inner = inner.accumulator
            window = type(inner).__name__.lower() if callable(getattr(inner, "accumulator", None)) else ""
            if joined:
                joins.append(((str(name), "", window), acc.counts()))  # through a Locked one: under its lock
            report = acc.get()
            monotonic = not window
            if hasattr(report, "reports") and hasattr(report, "overall"):  # segmented
                yield (str(name), "", window), report.overall, monotonic
                for segment, text in report.labels().items():
                    yield (str(name), text, window), report.reports[segment], monotonic
            else:
                yield (str(name), "", window), report, monotonic

    def collect(self) -> Iterator[Any]:
        """One metric family per metric, with a sample per model, segment and window (called at each scrape)."""
        joins: list[tuple[tuple[str, str, str], dict[str, int]]] = []
        rows = list(self._rows(joins))
        yield from self._join_families(joins)
        for metric in self.metrics:
            samples = [(labels, r, mono) for labels, r, mono in rows if hasattr(r, metric)]
            if not samples:
                continue
            if metric in COUNTS:
                base = f"{self.prefix}_{COUNTS[metric]}"
                help_text = {"n": "Events counted (their weight when weighted).",
                             "positives": "Positive events counted.",
                             "negatives": "Negative events counted."}[metric]  # fmt: skip
                counter = CounterMetricFamily(base, help_text, labels=self.LABELS)
                gauge = GaugeMetricFamily(f"{base}_in_window", help_text + " In the window now.", labels=self.LABELS)
                for labels, r, mono in samples:
                    (counter if mono else gauge).add_metric(labels, float(metric_value(r, metric)))
                yield from (f for f in (counter, gauge) if f.samples)
                continue
            family = GaugeMetricFamily(
                f"{self.prefix}_{metric}", f"{metric} of the events counted (streameval report attribute).",
                labels=self.LABELS,
            )  # fmt: skip
            for labels, r, _ in samples:
                family.add_metric(labels, _number(metric_value(r, metric)))
            yield family

    def _join_families(self, joins: list[tuple[tuple[str, str, str], dict[str, int]]]) -> Iterator[Any]:
        """A label join's counts: pairs matched and what never matched (counters), what waits (gauges)."""
        if not joins:
            return
        for count, (name, help_text) in JOIN_COUNTS.items():
            kind = GaugeMetricFamily if count.startswith("pending") else CounterMetricFamily
            family = kind(f"{self.prefix}_{name}", help_text, labels=self.LABELS)
            for labels, counts in joins:
                family.add_metric(labels, float(counts[count]))
            yield family


def _number(value: Any) -> float:
    """A metric as a float: NaN stays NaN (exposed, not dropped)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan
