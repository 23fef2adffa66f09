"""Figures of the curves with matplotlib (the optional ``plot`` extra).

Every function draws on a given ``ax`` (or a new one), takes one report or a
list of them (compared on one axes) with optional names, and returns the axes.
An accumulator or a window stands for its report (its ``get()``).
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

import numpy as np

from .averaging import metric_value

__all__ = ["plot_calibration", "plot_cost", "plot_det", "plot_metric", "plot_pr", "plot_roc", "plot_segments"]


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("streameval.plot needs matplotlib: pip install 'streameval[plot]'") from None
    return plt.figure().add_subplot()


def _report(item: Any, name: str, needs: str, kind: str) -> Any:
    """``item`` as a report that has ``needs`` (an accumulator or a window: its ``get()``), or a TypeError naming
    the argument ``name``, the kind of report wanted and what was given."""
    if not hasattr(item, needs) and callable(getattr(item, "get", None)) and not isinstance(item, type):
        item = item.get()
    if not hasattr(item, needs):
        raise TypeError(f"{name} must be {kind} (or an accumulator whose get() gives one), got {type(item).__name__}")
    return item


def _many(
    reports: Any, names: Sequence[str] | None, needs: str = "roc_curve", kind: str = "a binary report"
) -> list[tuple[Any, str | None]]:
    items = list(reports) if isinstance(reports, (list, tuple)) else [reports]
    if names is not None and len(names) != len(items):
        raise ValueError(f"names must give one name per report ({len(items)}), got {len(names)}")
    items = [_report(item, "reports", needs, kind) for item in items]
    return list(zip(items, names if names is not None else [None] * len(items), strict=True))


def plot_roc(reports: Any, names: Sequence[str] | None = None, ax: Any = None) -> Any:
    """ROC curves, with the AUC and its bounds in the legend.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import streameval as se
    >>> from streameval.plot import plot_roc
    >>> acc = se.BinaryAccumulator()
    >>> acc.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
    >>> ax = plot_roc(acc.get(), names=["model"])
    >>> ax.get_legend().get_texts()[0].get_text()
    'model: AUC 0.7500 [0.7500, 0.7500]'
    """
    ax = _axes(ax)
    for report, name in _many(reports, names):
        fpr, tpr, _ = report.roc_curve()
        text = f"AUC {report.auc:.4f} [{report.auc_lower:.4f}, {report.auc_upper:.4f}]"
        ax.plot(fpr, tpr, label=f"{name}: {text}" if name else text)
    ax.plot([0, 1], [0, 1], linestyle=":", color="grey", linewidth=0.8)
    ax.set(xlabel="false positive rate", ylabel="true positive rate", xlim=(0, 1), ylim=(0, 1.01), title="ROC")
    ax.legend(loc="lower right")
    return ax


def plot_pr(reports: Any, names: Sequence[str] | None = None, ax: Any = None) -> Any:
    """Precision-recall curves (steps), with the average precision in the legend."""
    ax = _axes(ax)
    for report, name in _many(reports, names, "pr_curve"):
        precision, recall, _ = report.pr_curve()
        text = f"AP {report.average_precision:.4f}"
        ax.step(recall, precision, where="post", label=f"{name}: {text}" if name else text)
    ax.set(xlabel="recall", ylabel="precision", xlim=(0, 1), ylim=(0, 1.01), title="Precision-recall")
    ax.legend(loc="lower left")
    return ax


_TICKS = [0.001, 0.01, 0.05, 0.2, 0.5, 0.8, 0.95, 0.99]


def _probit(p: np.ndarray) -> np.ndarray:
    inv = NormalDist().inv_cdf
    return np.array([inv(v) for v in np.clip(p, 1e-6, 1 - 1e-6)])


def plot_det(reports: Any, names: Sequence[str] | None = None, ax: Any = None) -> Any:
    """DET curves on normal-deviate axes, with the EER in the legend.

    The plotted coordinates are the normal quantiles of FPR and FNR (rates
    are clipped to [1e-6, 1 - 1e-6]); ticks show the rates themselves.
    """
    ax = _axes(ax)
    for report, name in _many(reports, names, "det_curve"):
        fpr, fnr, _ = report.det_curve()
        text = f"EER {report.eer:.4f}"
        ax.plot(_probit(fpr), _probit(fnr), label=f"{name}: {text}" if name else text)
    ticks = _probit(np.array(_TICKS))
    labels = [f"{100 * t:g}%" for t in _TICKS]
    ax.set_xticks(ticks, labels)
    ax.set_yticks(ticks, labels)
    ax.set(xlabel="false acceptance rate", ylabel="false rejection rate", title="DET")
    lim = (ticks[0], ticks[-1])
    ax.set_xlim(*lim)
    ax.set_ylim(*lim)
    ax.legend(loc="upper right")
    return ax


def plot_cost(report: Any, ax: Any = None, max_lines: int = 200) -> Any:
    """Cost lines of the thresholds (at most ``max_lines`` of them) and their lower envelope."""
    report = _report(report, "report", "cost_curve", "a binary report")
    ax = _axes(ax)
    fpr, tpr, _ = report.roc_curve()
    fnr = 1.0 - tpr
    step = max(1, len(fpr) // max_lines)
    for f, m in zip(fpr[::step], fnr[::step], strict=True):
        ax.plot([0, 1], [f, m], color="lightgrey", linewidth=0.6)
    x, y = report.cost_curve()
    ax.plot(x, y, color="C3", linewidth=2, label=f"lower envelope (area {report.expected_cost():.4f})")
    ax.set(xlabel="probability cost PC(+)", ylabel="normalised expected cost", xlim=(0, 1), ylim=(0, 1),
           title="Cost curve")  # fmt: skip
    ax.legend(loc="upper right")
    return ax


def plot_calibration(
    reports: Any, names: Sequence[str] | None = None, ax: Any = None, n_bins: int = 10, strategy: str = "uniform"
) -> Any:
    """Reliability diagrams: the fraction of positives against the mean score of each bin, with the diagonal.

    The points are those of ``report.calibration_curve(n_bins, strategy)``;
    the legend gives the Brier score and the ECE (``n_bins`` equal bins).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import streameval as se
    >>> from streameval.plot import plot_calibration
    >>> acc = se.BinaryAccumulator()
    >>> acc.update_many([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.9])
    >>> ax = plot_calibration(acc.get(), n_bins=2)
    >>> ax.get_lines()[1].get_ydata().tolist()
    [0.0, 1.0]
    """
    ax = _axes(ax)
    ax.plot([0, 1], [0, 1], linestyle=":", color="grey", linewidth=0.8, label="perfectly calibrated")
    for report, name in _many(reports, names, "calibration_curve"):
        prob_true, prob_pred = report.calibration_curve(n_bins, strategy)
        text = f"Brier {report.brier:.4f}, ECE ({n_bins} bins) {report.ece(n_bins):.4f}"
        ax.plot(prob_pred, prob_true, marker="o", label=f"{name}: {text}" if name else text)
    ax.set(xlabel="mean score in the bin", ylabel="fraction of positives", xlim=(0, 1), ylim=(0, 1.01),
           title="Reliability diagram")  # fmt: skip
    ax.legend(loc="lower right")
    return ax


def plot_metric(records: Any, metric: str = "auc", ax: Any = None, name: str | None = None) -> Any:
    """A metric over time from a ``Monitor`` (or its records).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import streameval as se
    >>> from streameval.plot import plot_metric
    >>> mon = se.Monitor(se.BinaryAccumulator(), every=2)
    >>> for y, s in [(1, 0.9), (0, 0.1), (1, 0.3), (0, 0.6)]:
    ...     mon.update(y, s)
    >>> plot_metric(mon, "auc").get_lines()[0].get_ydata().tolist()
    [1.0, 0.75]
    """
    if hasattr(records, "columns") and hasattr(records, "to_dict"):  # a monitor's to_pandas()
        rows = records.to_dict("records")
    elif callable(getattr(records, "to_records", None)):  # a monitor
        rows = records.to_records()
    elif isinstance(records, (list, tuple)) and all(isinstance(r, dict) for r in records):
        rows = list(records)
    else:
        raise TypeError(f"records must be a Monitor, its to_records() or its to_pandas(), got {type(records).__name__}")
    ax = _axes(ax)
    if rows and metric not in rows[0]:
        raise ValueError(f"metric {metric!r} is not recorded; recorded: {sorted(rows[0])}")
    ax.plot([r["time"] for r in rows], [r[metric] for r in rows], marker=".", label=name or metric)
    ax.set(xlabel="time", ylabel=metric, title=f"{metric} over time")
    ax.legend(loc="best")
    return ax


WILSON_METRICS = ("precision", "recall", "tpr", "specificity", "tnr", "fpr", "fnr", "npv", "accuracy", "selection_rate")


def plot_segments(report: Any, metric: str = "auc", level: float = 0.95, ax: Any = None) -> Any:
    """A forest plot: ``metric`` of every segment with its confidence interval, and the overall value.

    The intervals are DeLong's for ``"auc"`` and Wilson's for the rates of
    the 2x2 table (precision, recall, FPR, selection rate, ...); other
    metrics are drawn without one. The worst segment is drawn in red.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import streameval as se
    >>> from streameval.plot import plot_segments
    >>> seg = se.Segmented(se.BinaryAccumulator)
    >>> seg.update_many(["a", "a", "a", "b", "b", "b"], [1, 0, 1, 1, 0, 0], [0.9, 0.2, 0.7, 0.4, 0.6, 0.1])
    >>> ax = plot_segments(seg.get(), "recall")
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['a', 'b']
    """
    report = _report(report, "report", "reports", "a segmented report")
    ax = _axes(ax)
    reports = report.reports
    if not reports:
        raise ValueError("the segmented report has no segments to draw")
    names = report.labels()
    labels = [names[k] for k in reports]
    values = [float(v) for v in report.by_group(metric).values()]
    lows, highs = [], []
    for r in reports.values():
        if metric == "auc":
            ci = r.auc_ci(level)
            lo, hi = ci.lower, ci.upper
        elif metric in WILSON_METRICS:
            ci = r.wilson_ci(metric, level)
            lo, hi = ci.lower, ci.upper
        else:
            lo = hi = float("nan")
        lows.append(lo)
        highs.append(hi)
    v, lo_a, hi_a = np.array(values), np.array(lows), np.array(highs)
    err = np.vstack([np.nan_to_num(v - lo_a), np.nan_to_num(hi_a - v)])
    y = np.arange(len(labels))[::-1]
    worst = labels.index(names[report.worst(metric)]) if not np.isnan(v).all() else -1
    colors = ["C3" if i == worst else "C0" for i in range(len(labels))]
    for i in range(len(labels)):
        ax.errorbar(v[i], y[i], xerr=err[:, i : i + 1], fmt="o", color=colors[i], capsize=3)
    overall = float(metric_value(report.overall, metric))
    ax.axvline(overall, linestyle=":", color="grey", label=f"overall {overall:.4g}")
    ax.set_yticks(y, labels)
    ax.set(xlabel=metric, title=f"{metric} by segment ({100 * level:g}% intervals)")
    ax.legend(loc="best")
    return ax
