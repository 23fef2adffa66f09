"""A report as one self-contained HTML file: tables and pictures inline, nothing fetched to view it.

Pictures are drawn with matplotlib (the ``plot`` extra) and embedded as PNG
data; the page has no script and loads nothing from the network.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as _dt
import html
import io
import math
from collections.abc import Iterable, Mapping
from typing import Any

from .averaging import metric_value

__all__ = ["report_html"]

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
td.worst { background: #fde2e1; font-weight: 600; }
.pictures { display: flex; flex-wrap: wrap; gap: 1em; }
.pictures img { width: 340px; border: 1px solid #eee; }
.note { color: #666; font-size: 0.85em; }
.wide { overflow-x: auto; }
"""

# the metrics drawn over time, the first four a monitor's records hold: each kind's main ones
OVER_TIME = (
    "auc", "f1", "recall", "precision", "brier",  # binary
    "accuracy", "macro_f1",  # multiclass
    "mae", "rmse", "r2",  # regression
    "a_accuracy", "b_accuracy", "mcnemar_p_value",  # two models
    "mean", "median",  # scores
)  # fmt: skip
MAIN_BINARY = (
    "n", "positives", "negatives", "accuracy", "precision", "recall", "f1", "mcc", "fpr", "selection_rate",
    "auc", "auc_lower", "auc_upper", "average_precision", "pr_auc", "eer", "bep", "brier", "log_loss", "ece",
)  # fmt: skip


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int,)) or (isinstance(value, float) and value.is_integer() and abs(value) < 1e15):
        return f"{value:,.0f}" if isinstance(value, int) or abs(value) >= 1 else f"{value:.6g}"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.6g}"
    return html.escape(str(value))


def _table(header: list[str], rows: Iterable[list[Any]], worst: Mapping[tuple[int, int], bool] | None = None) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        cells = []
        for j, v in enumerate(row):
            mark = ' class="worst"' if worst and worst.get((i, j)) else ""
            cells.append(f"<td{mark}>{_cell(v)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _png(draw: Any) -> str:
    """A picture drawn by ``draw(ax)`` as an inline PNG ``<img>``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4.5))
    try:
        draw(ax)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=80)
    finally:
        plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="" src="data:image/png;base64,{data}">'


def _binary_pictures(report: Any) -> list[str]:
    from . import plot

    out = []
    drawings = [plot.plot_roc, plot.plot_pr, plot.plot_det]
    if report.positives and report.negatives:
        for draw in drawings:
            out.append(_png(lambda ax, draw=draw: draw(report, ax=ax)))
    if report.n:
        with contextlib.suppress(ValueError):  # scores that are not probabilities: no reliability diagram
            out.append(_png(lambda ax: plot.plot_calibration(report, ax=ax)))
    return out


def _scalars(report: Any) -> str:
    if hasattr(report, "roc_curve"):  # a binary report: its main metrics
        names = [m for m in MAIN_BINARY if hasattr(report, m)]
    else:  # every scalar metric of the other kinds
        names = list(type(report).SCALAR_METRICS)
    return _table(["metric", "value"], [[m, metric_value(report, m)] for m in names])


def report_html(item: Any, title: str | None = None, records: list[dict[str, Any]] | None = None) -> str:
    """One self-contained HTML page of a report (or an accumulator, a window, a segmented accumulator).

    Parameters
    ----------
    item : report or accumulator
        Binary reports get ROC, PR, DET and reliability pictures; segmented
        ones a per-segment table with the worst value of each metric marked,
        the spread of each metric and the fairness measures; every kind its
        table of scalar metrics.
    title : str, optional
    records : list of dict, optional
        A ``Monitor``'s records: their metrics over time are drawn too.

    Examples
    --------
    >>> import streameval as se
    >>> from streameval.html import report_html
    >>> acc = se.BinaryAccumulator()
    >>> acc.update_many([1, 0, 1, 0], [0.9, 0.2, 0.6, 0.4])
    >>> page = report_html(acc, title="fraud model")
    >>> page.startswith("<!DOCTYPE html>"), "fraud model" in page, "data:image/png;base64," in page
    (True, True, True)
    """
    report = item.get() if hasattr(item, "get") and not hasattr(type(item), "SCALAR_METRICS") else item
    if not (hasattr(type(report), "SCALAR_METRICS") or hasattr(report, "overall")):
        raise TypeError(f"item must be a report, an accumulator or a window, got {type(item).__name__}")
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a str, got {title!r}")
    if records is not None and (not isinstance(records, list) or not all(isinstance(r, dict) for r in records)):
        raise TypeError("records must be a list of dicts (a Monitor's to_records())")
    title = title or f"streameval report: {type(report).__name__}"
    written = _dt.datetime.now(_dt.timezone.utc)
    parts = [f"<h1>{html.escape(title)}</h1>", f'<p class="note">Written {written:%Y-%m-%d %H:%M} UTC.</p>']
    segmented = hasattr(report, "reports") and hasattr(report, "overall")
    overall = report.overall if segmented else report
    parts += ["<h2>Summary</h2>", _scalars(overall)]
    counts = getattr(item, "counts", None)
    if callable(counts) and callable(getattr(item, "predict", None)):  # a label join: what matched, waits, never came
        parts += ["<h2>Labels</h2>", _table(["count", "value"], [[k, v] for k, v in counts().items()])]
    if hasattr(overall, "calibration_issue") and overall.calibration_issue:
        parts.append(f'<p class="note">{html.escape(overall.calibration_issue)}</p>')
    if hasattr(overall, "f1_per_class"):  # multiclass: each class against the rest
        parts += ["<h2>Classes</h2>", _per_class(overall)]
    if hasattr(overall, "roc_curve"):
        pictures = _binary_pictures(overall)
        if pictures:
            parts += ["<h2>Curves</h2>", '<div class="pictures">', *pictures, "</div>"]
    if segmented and report.reports:
        parts += _segments(report)
    if records:
        parts += _over_time(records)
    body = "\n".join(parts)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n"
    )


def _per_class(report: Any) -> str:
    """Each class's support, precision, recall and F1 and (with scores) its one-vs-rest AUC and AP."""
    columns = {"support": report.support, "precision": report.precision_per_class,
               "recall": report.recall_per_class, "f1": report.f1_per_class}  # fmt: skip
    if report.n and not all(math.isnan(v) for v in report.auc_per_class):
        columns |= {"auc": report.auc_per_class, "average_precision": report.average_precision_per_class}
    rows = [[str(c)] + [values[i] for values in columns.values()] for i, c in enumerate(report.classes)]
    return _table(["class", *columns], rows)


def _segments(report: Any) -> list[str]:
    names = [m for m in report.SUMMARY_METRICS if hasattr(report.overall, m)]
    segments = list(report.reports)
    labels = report.labels()
    rows = [[labels[k]] + [metric_value(report.reports[k], m) for m in names] for k in segments]
    worst: dict[tuple[int, int], bool] = {}
    spread = []
    for j, m in enumerate(names):
        if m in report.NEUTRAL or math.isnan(report.group_min(m)):
            continue
        w = report.worst(m)
        worst[(segments.index(w), j + 1)] = True
        spread.append([m, labels[w], report.group_min(m), report.group_max(m), report.difference(m),
                       report.ratio(m)])  # fmt: skip
    out = ["<h2>Segments</h2>", '<p class="note">The worst value of each metric is marked.</p>',
           '<div class="wide">', _table(["segment", *names], rows, worst), "</div>"]  # fmt: skip
    if spread:
        out += ["<h3>Spread over segments</h3>",
                _table(["metric", "worst", "min", "max", "difference", "ratio"], spread)]  # fmt: skip
    if hasattr(report.overall, "recall"):
        fairness = [
            "demographic_parity_difference", "demographic_parity_ratio", "equalized_odds_difference",
            "equalized_odds_ratio", "equal_opportunity_difference", "equal_opportunity_ratio",
        ]  # fmt: skip
        out += ["<h3>Fairness (Fairlearn's definitions, predictions at the threshold)</h3>",
                _table(["measure", "value"], [[f, getattr(report, f)] for f in fairness])]  # fmt: skip
    return out


def _over_time(records: list[dict[str, Any]]) -> list[str]:
    from . import plot

    shown = [m for m in OVER_TIME if m in records[0]][:4]
    if not shown:  # records of metrics none of which is drawn
        return []
    pictures = [_png(lambda ax, m=m: plot.plot_metric(records, m, ax=ax)) for m in shown]
    return ["<h2>Over time</h2>", '<div class="pictures">', *pictures, "</div>"]
