"""Draw the pictures of the documentation into docs/img/."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import streameval as se
from streameval import plot

IMG = Path(__file__).resolve().parent / "img"


def main() -> None:
    IMG.mkdir(exist_ok=True)
    rng = np.random.default_rng(0)
    reports = []
    for shift in (1.0, 2.0):
        y = rng.random(5000) < 0.3
        acc = se.BinaryAccumulator()
        acc.update_many(y, rng.normal(y * shift, 1.0))
        reports.append(acc.get())
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    plot.plot_roc(reports, names=["weak", "strong"], ax=axes[0])
    plot.plot_pr(reports, names=["weak", "strong"], ax=axes[1])
    plot.plot_det(reports, names=["weak", "strong"], ax=axes[2])
    fig.tight_layout()
    fig.savefig(IMG / "curves.png", dpi=80)
    plt.close(fig)

    mon = se.Monitor(se.Sliding(se.BinaryAccumulator, size=2000), every=500)
    for i in range(20_000):
        drift = i / 20_000
        y = rng.random() < 0.3
        mon.update(y, float(rng.normal(y * (2.0 - 1.5 * drift), 1.0)))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    plot.plot_cost(reports[1], ax=axes[0])
    plot.plot_metric(mon, "auc", ax=axes[1], name="AUC of the last 2,000 events")
    fig.tight_layout()
    fig.savefig(IMG / "cost_and_time.png", dpi=80)
    plt.close(fig)

    p = rng.beta(2, 3, 50_000)
    y = rng.random(p.size) < p
    honest, overconfident = se.BinaryAccumulator(), se.BinaryAccumulator()
    honest.update_many(y, p)
    overconfident.update_many(y, np.clip(0.5 + 1.8 * (p - 0.5), 0, 1))
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    plot.plot_calibration([honest.get(), overconfident.get()], names=["calibrated", "overconfident"], ax=ax)
    fig.tight_layout()
    fig.savefig(IMG / "reliability.png", dpi=80)
    plt.close(fig)
    print(f"pictures written to {IMG}")


if __name__ == "__main__":
    main()
