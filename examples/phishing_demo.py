"""The main job end to end, on river's Phishing stream.

1. A river logistic regression learns the stream by progressive validation:
   each event is scored, counted, then learnt.
2. AUC, EER and F1 are tracked over the whole stream and over a sliding
   window of the last 250 events, printed every 250 events.
3. The full report is printed beside scikit-learn's exact AUC on the same
   scores.
4. The stream is split into 4 shards, evaluated apart and merged: the merge
   equals the whole stream; micro and macro results are printed.
5. The same evaluation runs through ``streameval.dask`` on a local cluster of
   two worker processes.
6. Calibration: Brier score and log loss beside scikit-learn's, the ECE, and
   the drift of the scores between the first and the second half.
7. Segments: the same events per value of the ``https`` feature, compared,
   with Fairlearn's fairness measures.
8. ROC, PR, DET and reliability pictures and a self-contained HTML report are
   written to ``demo-output/``.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from river import compose, datasets, linear_model, preprocessing
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score

import streameval as se

OUT = Path("demo-output")
WINDOW = 250


def progressive_validation() -> tuple[se.BinaryAccumulator, np.ndarray, np.ndarray, se.Segmented]:
    model = compose.Pipeline(preprocessing.StandardScaler(), linear_model.LogisticRegression())
    overall = se.BinaryAccumulator()  # range-free bins, threshold 0.5
    window = se.Sliding(se.BinaryAccumulator, size=WINDOW)
    by_https = se.Segmented(se.BinaryAccumulator)  # one accumulator per value of the https feature
    labels: list[bool] = []
    scores: list[float] = []
    print(f"{'events':>7}  {'AUC':>8}  {'bounds':>19}  {'EER':>6}  {'F1':>6}  |  last {WINDOW}: AUC, EER, F1")
    for i, (x, y) in enumerate(datasets.Phishing(), start=1):
        score = model.predict_proba_one(x).get(True, 0.5)
        overall.update(y, score)
        window.update(y, score)
        by_https.update("https" if x["https"] > 0.5 else "http", y, score)
        labels.append(y)
        scores.append(score)
        model.learn_one(x, y)
        if i % WINDOW == 0:
            r, w = overall.get(), window.get()
            print(
                f"{i:>7}  {r.auc:8.5f}  [{r.auc_lower:.5f}, {r.auc_upper:.5f}]  {r.eer:6.4f}  {r.f1:6.4f}  |  "
                f"{w.auc:.4f}, {w.eer:.4f}, {w.f1:.4f}"
            )
    return overall, np.array(labels), np.array(scores), by_https


def shards(overall: se.BinaryAccumulator, labels: np.ndarray, scores: np.ndarray) -> None:
    parts = []
    for part in np.array_split(np.arange(labels.size), 4):
        acc = se.BinaryAccumulator()
        acc.update_many(labels[part], scores[part])
        parts.append(acc)
    merged = se.BinaryAccumulator.merge_all(parts)
    print(f"4 shards merged equal the whole stream: {merged == overall}")
    micro, macro = se.micro(parts), se.macro(parts)
    print(f"{'metric':<18} {'micro':>8} {'macro mean':>11} {'std':>8}   per shard")
    for name in ("auc", "eer", "f1", "precision", "recall"):
        s = getattr(macro, name)
        per = " ".join(f"{v:.3f}" for v in s.values)
        print(f"{name:<18} {getattr(micro, name):8.4f} {s.mean:11.4f} {s.std:8.4f}   {per}")
    print(f"macro F1 = 2PR/(P+R) of macro P, R: {macro.macro_f1:.4f}; mean of shard F1: {macro.mean_f1:.4f}")


def with_dask(overall: se.BinaryAccumulator, labels: np.ndarray, scores: np.ndarray) -> None:
    import dask.dataframe as dd
    import pandas as pd
    from distributed import Client, LocalCluster

    import streameval.dask as sed

    frame = dd.from_pandas(pd.DataFrame({"label": labels, "score": scores}), npartitions=4)
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster),
    ):
        acc = sed.evaluate(frame, label="label", score="score")
    print(f"streameval.dask on a local cluster (2 workers, 4 partitions): AUC {acc.get().auc:.6f}; "
          f"equal to one process: {acc == overall}")  # fmt: skip


def pictures(report: se.BinaryReport) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from streameval import plot

    OUT.mkdir(exist_ok=True)
    drawings = (
        ("roc", plot.plot_roc),
        ("pr", plot.plot_pr),
        ("det", plot.plot_det),
        ("reliability", plot.plot_calibration),
    )
    for name, draw in drawings:
        fig, ax = plt.subplots(figsize=(5, 4.5))
        draw(report, names=["logistic regression"], ax=ax)
        fig.tight_layout()
        fig.savefig(OUT / f"{name}.png", dpi=90)
        plt.close(fig)
    print(f"pictures: {', '.join(str(OUT / f'{n}.png') for n, _ in drawings)}")


def calibration(overall: se.BinaryAccumulator, labels: np.ndarray, scores: np.ndarray) -> None:
    report = overall.get()
    print(
        f"Brier score {report.brier:.6f} (scikit-learn {brier_score_loss(labels, scores):.6f}); "
        f"log loss {report.log_loss:.6f} (scikit-learn {log_loss(labels, scores):.6f})"
    )
    prob_true, prob_pred = report.calibration_curve(n_bins=5)
    pairs = ", ".join(f"{p:.2f}->{t:.2f}" for p, t in zip(prob_pred, prob_true, strict=True))
    print(f"ECE (15 bins) {report.ece():.4f}, MCE {report.mce():.4f}; reliability (mean score->positives): {pairs}")
    half = len(scores) // 2
    first, second = se.ScoreAccumulator(), se.ScoreAccumulator()
    first.update_many(scores[:half])
    second.update_many(scores[half:])
    d = se.drift(first, second)
    print(f"score drift, first half -> second half: KS {d.ks:.4f} (p = {d.ks_pvalue:.3g}), PSI {d.psi:.4f}")


def main() -> None:
    start = time.perf_counter()
    overall, labels, scores, by_https = progressive_validation()
    report = overall.get()
    exact = roc_auc_score(labels, scores)
    print()
    print(report.summary())
    print()
    print(f"scikit-learn exact ROC AUC on the same scores: {exact:.6f}")
    diff = abs(report.auc - exact)
    print(f"streameval ROC AUC:                            {report.auc:.6f}  (|difference| = {diff:.2e})")
    inside = report.auc_lower - 1e-12 <= exact <= report.auc_upper + 1e-12  # to rounding
    regime = "exact (every distinct score kept)" if report.is_exact else "binned"
    print(f"exact AUC inside streameval's bounds:          {inside}  (regime: {regime})")
    coarse = se.BinaryAccumulator(exact_up_to=0)
    coarse.update_many(labels, scores)
    print(
        f"the same scores binned from the start: AUC {coarse.get().auc:.6f} in "
        f"[{coarse.get().auc_lower:.6f}, {coarse.get().auc_upper:.6f}]"
    )
    print(f"best F1 threshold: {report.best_threshold('f1'):.4f}; TPR at FPR <= 1%: {report.tpr_at_fpr(0.01):.4f}")
    ci = report.auc_ci()
    print(f"95% DeLong interval of the AUC: [{ci.lower:.4f}, {ci.upper:.4f}]")
    print(f"accumulator memory: {overall.nbytes} bytes")
    print()
    shards(overall, labels, scores)
    print()
    with_dask(overall, labels, scores)
    print()
    calibration(overall, labels, scores)
    print()
    segments = by_https.get()
    print("by the https feature (Fairlearn's definitions at the threshold):")
    print(segments.summary(["n", "auc", "recall", "fpr", "selection_rate"]))
    print(f"equalized odds difference {segments.equalized_odds_difference:.4f}, "
          f"demographic parity ratio {segments.demographic_parity_ratio:.4f}")  # fmt: skip
    print()
    pictures(report)
    (OUT / "report.html").write_text(segments.to_html(title="Phishing: logistic regression by https"))
    print(f"HTML report: {OUT / 'report.html'}")
    print(f"done in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
