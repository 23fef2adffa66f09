"""The text table and HTML page of the reports that have no table of their own."""

from __future__ import annotations

from .averaging import metrics_table

__all__ = ["SummaryAndPage"]


class SummaryAndPage:
    """A report's text table and HTML page, for the kinds whose reports have no table of their own (multiclass,
    regression, scores, two models): every scalar metric, one a line.

    Examples
    --------
    >>> import streameval as se
    >>> acc = se.RegressionAccumulator()
    >>> acc.update_many([1.0, 2.0, 4.0], [1.5, 2.0, 3.0])
    >>> acc.get().summary().splitlines()[5].split()
    ['r2', '0.732143']
    >>> acc.get().to_html(title="model").startswith("<!DOCTYPE html>")
    True
    """

    __slots__ = ()

    def summary(self) -> str:
        """Every scalar metric, one a line (:func:`~streameval.averaging.metrics_table`)."""
        return metrics_table(self)

    def to_html(self, title: str | None = None) -> str:
        """This report as one self-contained HTML page (:func:`streameval.html.report_html`)."""
        from .html import report_html

        return report_html(self, title=title)
