"""10-fold cross-validation with one accumulator per fold: micro and macro results.

A logistic regression on scikit-learn's breast cancer data set. Each fold's
held-out scores go into their own BinaryAccumulator; ``se.micro`` reports on
the summed counts, ``se.macro`` on the spread across folds.
"""

from __future__ import annotations

from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import streameval as se


def main() -> None:
    x, y = load_breast_cancer(return_X_y=True)
    folds = []
    for train, test in StratifiedKFold(n_splits=10, shuffle=True, random_state=0).split(x, y):
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(x[train], y[train])
        acc = se.BinaryAccumulator()
        acc.update_many(y[test], model.predict_proba(x[test])[:, 1])
        folds.append(acc)

    micro = se.micro(folds)
    macro = se.macro(folds)
    print(f"10 folds, {micro.n} held-out predictions ({micro.positives} positive)")
    print()
    print(f"{'metric':<18} {'micro':>8} {'macro mean':>11} {'std':>8}   per fold")
    for name in ("auc", "average_precision", "accuracy", "precision", "recall", "f1", "mcc", "eer"):
        s = getattr(macro, name)
        per_fold = " ".join(f"{v:.3f}" for v in s.values)
        print(f"{name:<18} {getattr(micro, name):8.4f} {s.mean:11.4f} {s.std:8.4f}   {per_fold}")
    print()
    print(f"macro F1 from macro P and R (2PR/(P+R)): {macro.macro_f1:.4f}")
    print(f"mean of per-fold F1 (scikit-learn macro): {macro.mean_f1:.4f}")


if __name__ == "__main__":
    main()
