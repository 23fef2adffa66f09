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


def test_an_accumulator_stands_for_its_report_and_a_wrong_kind_is_named():
    """An accumulator, a window or a monitor draws as its get(); a monitor's to_pandas() as its records; a report
    of another kind is refused naming the argument and the kind, not with an AttributeError."""
    acc = se.BinaryAccumulator()
    acc.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
    for draw in (plot.plot_roc, plot.plot_pr, plot.plot_det, plot.plot_calibration, plot.plot_cost):
        from_acc, from_report = draw(acc), draw(acc.get())
        assert [line.get_xydata().tolist() for line in from_acc.get_lines()] == [
            line.get_xydata().tolist() for line in from_report.get_lines()
        ]
        plt.close("all")
    window = se.Sliding(se.BinaryAccumulator, size=3)
    window.update_many([0, 1, 0, 1], [0.1, 0.35, 0.4, 0.8])
    fpr, tpr, _ = window.get().roc_curve()
    assert plot.plot_roc(window).get_lines()[0].get_xydata().tolist() == np.column_stack([fpr, tpr]).tolist()
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(["a", "a", "b", "b"], [1, 0, 1, 0], [0.9, 0.2, 0.4, 0.6])
    assert [t.get_text() for t in plot.plot_segments(seg).get_yticklabels()] == ["a", "b"]
    mon = se.Monitor(se.BinaryAccumulator(), every=2)
    for y, s in [(1, 0.9), (0, 0.1), (1, 0.3), (0, 0.6)]:
        mon.update(y, s)
    frame = plot.plot_metric(mon.to_pandas(), "auc").get_lines()[0].get_ydata().tolist()
    assert frame == plot.plot_metric(mon, "auc").get_lines()[0].get_ydata().tolist() == [1.0, 0.75]
    multiclass = se.MulticlassAccumulator()
    multiclass.update_many(["a", "b"], ["a", "b"])
    refusals = [
        (lambda: plot.plot_roc(multiclass), "reports must be a binary report", "MulticlassReport"),
        (lambda: plot.plot_cost(se.RegressionAccumulator()), "report must be a binary report", "RegressionReport"),
        (lambda: plot.plot_segments(acc), "report must be a segmented report", "BinaryReport"),
        (lambda: plot.plot_metric(acc), "records must be a Monitor", "BinaryAccumulator"),
    ]
    for call, words, given in refusals:
        with pytest.raises(TypeError, match=words) as info:
            call()
        assert given in str(info.value)
    plt.close("all")
