"""Figures drawn with the Agg backend hold the curves' data."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import streameval as se  # noqa: E402
from streameval import plot  # noqa: E402


@pytest.fixture()
def reports():
    rng = np.random.default_rng(0)
    out = []
    for shift in (1.0, 2.0):
        y = rng.random(2000) < 0.4
        acc = se.BinaryAccumulator()
        acc.update_many(y, rng.normal(y * shift, 1.0))
        out.append(acc.get())
    yield out
    plt.close("all")


def test_roc_and_pr_plot_the_curves_of_each_report(reports):
    ax = plot.plot_roc(reports, names=["a", "b"])
    lines = ax.get_lines()
    for line, r in zip(lines[:2], reports, strict=True):
        fpr, tpr, _ = r.roc_curve()
        np.testing.assert_array_equal(line.get_xdata(), fpr)
        np.testing.assert_array_equal(line.get_ydata(), tpr)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[1] == f"b: AUC {reports[1].auc:.4f} [{reports[1].auc_lower:.4f}, {reports[1].auc_upper:.4f}]"
    ax = plot.plot_pr(reports[0])
    precision, recall, _ = reports[0].pr_curve()
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), precision)
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), recall)
    with pytest.raises(ValueError, match="one name per report"):
        plot.plot_roc(reports, names=["only one"])


def test_det_uses_normal_deviate_axes(reports):
    ax = plot.plot_det(reports[1])
    fpr, fnr, _ = reports[1].det_curve()
    inv = NormalDist().inv_cdf
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), [inv(min(max(v, 1e-6), 1 - 1e-6)) for v in fnr])
    expected = [inv(min(max(v, 1e-6), 1 - 1e-6)) for v in fpr]
    np.testing.assert_allclose(ax.get_lines()[0].get_xdata(), expected)
    assert [t.get_text() for t in ax.get_xticklabels()][:3] == ["0.1%", "1%", "5%"]


def test_cost_curve_and_metric_over_time(reports):
    ax = plot.plot_cost(reports[0])
    x, y = reports[0].cost_curve()
    envelope = ax.get_lines()[-1]
    np.testing.assert_array_equal(envelope.get_xdata(), x)
    np.testing.assert_array_equal(envelope.get_ydata(), y)
    mon = se.Monitor(se.BinaryAccumulator(), every=100)
    rng = np.random.default_rng(1)
    for _ in range(500):
        mon.update(bool(rng.random() < 0.5), float(rng.random()))
    ax = plot.plot_metric(mon, "f1")
    assert ax.get_lines()[0].get_xdata().tolist() == [100, 200, 300, 400, 500]
    assert ax.get_lines()[0].get_ydata().tolist() == [r["f1"] for r in mon.to_records()]
    with pytest.raises(ValueError, match="not recorded"):
        plot.plot_metric(mon, "nope")
