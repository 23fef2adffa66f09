"""Progressive validation of a river model on the Phishing stream, evaluated by streameval.

Each event is first scored by the model, then counted by a BinaryAccumulator,
then learnt. A short report is printed every 250 events and a full one at the
end, beside scikit-learn's exact ROC AUC computed on the same scores.
"""

from __future__ import annotations

import time

from river import compose, datasets, linear_model, preprocessing
from sklearn.metrics import roc_auc_score

import streameval as se


def main() -> None:
    model = compose.Pipeline(preprocessing.StandardScaler(), linear_model.LogisticRegression())
    acc = se.BinaryAccumulator()  # range-free bins, threshold 0.5, positive label True/1
    labels: list[bool] = []
    scores: list[float] = []
    start = time.perf_counter()
    print(f"{'events':>7}  {'AUC':>8}  {'bounds':>19}  {'F1':>6}  {'EER':>6}")
    for i, (x, y) in enumerate(datasets.Phishing(), start=1):
        score = model.predict_proba_one(x).get(True, 0.5)
        acc.update(y, score)
        labels.append(y)
        scores.append(score)
        model.learn_one(x, y)
        if i % 250 == 0:
            r = acc.get()
            print(f"{i:>7}  {r.auc:8.5f}  [{r.auc_lower:.5f}, {r.auc_upper:.5f}]  {r.f1:6.4f}  {r.eer:6.4f}")
    elapsed = time.perf_counter() - start

    report = acc.get()
    exact = roc_auc_score(labels, scores)
    print()
    print(report.summary())
    print()
    print(f"scikit-learn exact ROC AUC on the same scores: {exact:.6f}")
    diff = abs(report.auc - exact)
    print(f"streameval ROC AUC:                            {report.auc:.6f}  (|difference| = {diff:.2e})")
    inside = report.auc_lower <= exact <= report.auc_upper
    print(f"exact AUC inside streameval's bounds:          {inside}")
    print(f"best F1 threshold: {report.best_threshold('f1'):.4f}; TPR at FPR <= 1%: {report.tpr_at_fpr(0.01):.4f}")
    print(f"accumulator memory: {acc.nbytes} bytes; {report.n} events in {elapsed:.2f} s (model included)")


if __name__ == "__main__":
    main()
