"""streameval metrics inside river: progressive validation, ``metrics.Metrics``, ``utils.Rolling``.

Every class here is a river metric: ``update`` / ``revert`` / ``get``,
``bigger_is_better``, ``works_with``, ``requires_labels``, and cloning. They
take every ``y_pred`` river passes: a bool label, a float score, or the dict
of ``predict_proba_one``. Binary metrics keep every distinct score while there
are at most ``exact_up_to`` (8,192) of them, so ROC AUC and friends equal
scikit-learn's on such streams, and then a range-free histogram, accurate to
about 1e-5 whatever the number of events, with one update costing a small
constant.

Examples
--------
>>> from river import datasets, evaluate, linear_model, preprocessing
>>> from streameval import river as se_river
>>> model = preprocessing.StandardScaler() | linear_model.LogisticRegression()
>>> metric = se_river.ROCAUC()
>>> evaluate.progressive_val_score(datasets.Phishing(), model, metric)
ROCAUC: 95.34%
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from river import base as river_base
from river import metrics as river_metrics

from .averaging import metric_value
from .binary import DEFAULT_EXACT_UP_TO, BinaryAccumulator
from .multiclass import MulticlassAccumulator

__all__ = [
    "BEP",
    "ECE",
    "EER",
    "F1",
    "PRAUC",
    "ROCAUC",
    "Adapter",
    "AveragePrecision",
    "Brier",
    "FBeta",
    "LogLoss",
    "MacroF1",
    "MicroF1",
    "Precision",
    "Recall",
]


class _Binary(river_metrics.base.BinaryMetric):
    """A river binary metric backed by a streameval BinaryAccumulator."""

    _name = "auc"
    _bigger = True
    _labels = False

    def __init__(
        self, pos_val: Any = True, threshold: float = 0.5, exact_up_to: int | None = DEFAULT_EXACT_UP_TO
    ) -> None:
        self.pos_val = pos_val
        self.threshold = threshold
        self.exact_up_to = exact_up_to
        self.cm = None  # river's shared confusion matrix is not used
        self._requires_labels = self._labels
        self._acc = BinaryAccumulator(threshold=threshold, pos_label=True, neg_label=False, exact_up_to=exact_up_to)

    @property
    def requires_labels(self) -> bool:
        """Whether river should pass labels (``predict_one``) rather than probabilities."""
        return self._labels

    @property
    def bigger_is_better(self) -> bool:
        """Whether a higher value is better (False for error rates such as the EER)."""
        return self._bigger

    def _score(self, y_pred: Any) -> float:
        if type(y_pred) is float:  # a probability, as river's predict_proba_one gives it for the positive class
            return y_pred
        if isinstance(y_pred, dict):
            return float(y_pred.get(self.pos_val, 0.0))
        if isinstance(y_pred, (bool, np.bool_)) or not isinstance(y_pred, (int, float, np.number)):
            return 1.0 if y_pred == self.pos_val else 0.0  # a label: positive scores 1
        return float(y_pred)

    def update(self, y_true: Any, y_pred: Any, w: float = 1.0) -> None:
        """Count one event."""
        self._acc.update(y_true == self.pos_val, self._score(y_pred), w)

    def revert(self, y_true: Any, y_pred: Any, w: float = 1.0) -> None:
        """Take back an event counted before (``utils.Rolling`` uses this)."""
        self._acc.revert(y_true == self.pos_val, self._score(y_pred), w)

    def get(self) -> float:
        """The current value of the metric."""
        return float(metric_value(self._acc.get(), self._name))

    def works_with(self, model: Any) -> bool:
        """Classifiers."""
        return isinstance(model, river_base.Classifier)

    @property
    def accumulator(self) -> BinaryAccumulator:
        """The streameval accumulator behind the metric (every other metric is there too)."""
        return self._acc


class ROCAUC(_Binary):
    """ROC AUC from a range-free score histogram.

    Examples
    --------
    >>> from streameval import river as se_river
    >>> metric = se_river.ROCAUC()
    >>> for yt, yp in zip([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]):
    ...     metric.update(yt, yp)
    >>> metric.get()
    0.75
    """

    _name = "auc"


class AveragePrecision(_Binary):
    """Average precision (scikit-learn's step-wise sum)."""

    _name = "average_precision"


class PRAUC(_Binary):
    """Area under the PR curve with Davis & Goadrich interpolation."""

    _name = "pr_auc"


class EER(_Binary):
    """Equal error rate (smaller is better)."""

    _name = "eer"
    _bigger = False


class BEP(_Binary):
    """Break-even point of precision and recall."""

    _name = "bep"


class Precision(_Binary):
    """Precision at the threshold (labels or scores: a label True scores 1)."""

    _name = "precision"
    _labels = True


class Recall(_Binary):
    """Recall at the threshold."""

    _name = "recall"
    _labels = True


class F1(_Binary):
    """F1 at the threshold."""

    _name = "f1"
    _labels = True


class FBeta(_Binary):
    """F-beta at the threshold; ``beta > 1`` favours recall."""

    _labels = True

    def __init__(
        self,
        beta: float = 1.0,
        pos_val: Any = True,
        threshold: float = 0.5,
        exact_up_to: int | None = DEFAULT_EXACT_UP_TO,
    ) -> None:
        super().__init__(pos_val=pos_val, threshold=threshold, exact_up_to=exact_up_to)
        self.beta = beta

    def get(self) -> float:
        """F-beta."""
        return float(self._acc.get().fbeta(self.beta))


class LogLoss(_Binary):
    """Binary log loss (cross-entropy) of the probability of ``pos_val``, clipped to ``[eps, 1 - eps]``.

    river's ``metrics.LogLoss`` clips at 1e-15; the two agree on every
    probability between 1e-15 and 1 - 1e-15. Smaller is better.

    Examples
    --------
    >>> from streameval import river as se_river
    >>> metric = se_river.LogLoss()
    >>> for yt, yp in zip([True, False, False, True], [0.9, 0.1, 0.2, 0.65]):
    ...     metric.update(yt, yp)
    >>> round(metric.get(), 6)
    0.216162
    """

    _name = "log_loss"
    _bigger = False
    _fmt = ",.6f"  # a loss, not a percentage


class Brier(_Binary):
    """Brier score: the mean squared difference between the probability of ``pos_val`` and the label (smaller is
    better)."""

    _name = "brier"
    _bigger = False
    _fmt = ",.6f"  # a loss, not a percentage


class ECE(_Binary):
    """Expected calibration error over ``n_bins`` equal-width bins of the probability of ``pos_val`` (smaller is
    better)."""

    _bigger = False
    _fmt = ",.6f"

    def __init__(
        self,
        n_bins: int = 15,
        pos_val: Any = True,
        threshold: float = 0.5,
        exact_up_to: int | None = DEFAULT_EXACT_UP_TO,
    ) -> None:
        super().__init__(pos_val=pos_val, threshold=threshold, exact_up_to=exact_up_to)
        self.n_bins = n_bins

    def get(self) -> float:
        """ECE of the events so far."""
        return float(self._acc.get().ece(self.n_bins))


# the predicted class of a model that cannot predict yet (river's predict_one gives None): a class of its own, wrong
# for every true class, as river's own metrics count it (a missing value is no class label here)
NO_PREDICTION = "<no prediction>"


class _Multiclass(river_metrics.base.MultiClassMetric):
    """A river multiclass metric backed by a streameval MulticlassAccumulator (predicted labels)."""

    _name = "mean_f1"

    def __init__(self) -> None:
        self.cm = None
        self._acc = MulticlassAccumulator()

    @property
    def requires_labels(self) -> bool:
        """Labels: the predicted class."""
        return True

    def _label(self, y_pred: Any) -> Any:
        if y_pred is None or (isinstance(y_pred, dict) and not y_pred):  # a model that cannot predict yet: river
            # counts a class of its own
            return NO_PREDICTION
        return max(y_pred.items(), key=lambda item: item[1])[0] if isinstance(y_pred, dict) else y_pred

    def update(self, y_true: Any, y_pred: Any, w: float = 1.0) -> None:
        """Count one event."""
        self._acc.update(y_true, self._label(y_pred), w)

    def revert(self, y_true: Any, y_pred: Any, w: float = 1.0) -> None:
        """Take back an event counted before."""
        self._acc.revert(y_true, self._label(y_pred), w)

    def get(self) -> float:
        """The current value of the metric (``nan`` before any event)."""
        if not self._acc.classes:
            return math.nan
        return float(getattr(self._acc.get(), self._name))

    @property
    def bigger_is_better(self) -> bool:
        """True."""
        return True


class MacroF1(_Multiclass):
    """Mean over classes of F1 (river's and scikit-learn's macro F1)."""

    _name = "mean_f1"


class MicroF1(_Multiclass):
    """F1 of the summed per-class counts."""

    _name = "micro_f1"


class Adapter(river_metrics.base.Metric):
    """Any streameval accumulator and metric name as a river metric.

    Parameters
    ----------
    metric : str
        A scalar metric of the accumulator's report (``"auc"``, ``"mcc"``,
        ``"kappa"``, ``"mse"``, ...).
    kind : "binary", "multiclass" or "regression"
    bigger_is_better : bool, default True
    **kwargs
        Passed to the accumulator (bins, threshold, classes, ...).

    Examples
    --------
    >>> from streameval import river as se_river
    >>> mcc = se_river.Adapter("mcc")
    >>> for yt, yp in [(True, 0.9), (False, 0.2), (True, 0.7), (False, 0.6)]:
    ...     mcc.update(yt, yp)
    >>> round(mcc.get(), 4)
    0.5774
    """

    _fmt = ",.6f"

    def __init__(self, metric: str = "auc", kind: str = "binary", bigger_is_better: bool = True, **kwargs: Any) -> None:
        from .regression import RegressionAccumulator

        makers = {"binary": BinaryAccumulator, "multiclass": MulticlassAccumulator, "regression": RegressionAccumulator}
        if kind not in makers:
            raise ValueError(f"kind must be one of {sorted(makers)}, got {kind!r}")
        self.metric = metric
        self.kind = kind
        self._bigger = bigger_is_better
        self.kwargs = kwargs
        if kind == "binary":
            kwargs = {"pos_label": True, "neg_label": False, **kwargs}
        self._acc = makers[kind](**kwargs)
        known = type(self._acc.get()).SCALAR_METRICS
        if metric not in known:  # a scalar one: not a curve, not a helper method
            raise ValueError(f"metric {metric!r} is not a metric of {kind} reports (known: {', '.join(known)})")

    @property
    def bigger_is_better(self) -> bool:
        """As given."""
        return self._bigger

    @property
    def requires_labels(self) -> bool:
        """Binary and multiclass adapters take probabilities when river has them."""
        return False

    def _args(self, y_true: Any, y_pred: Any) -> tuple[Any, Any]:
        if self.kind == "binary":
            score = y_pred.get(True, 0.0) if isinstance(y_pred, dict) else float(y_pred)
            return bool(y_true), score
        if self.kind == "multiclass" and y_pred is None:  # a model that cannot predict yet, as river counts it
            return y_true, NO_PREDICTION
        return y_true, y_pred

    def update(self, y_true: Any, y_pred: Any, w: float = 1.0) -> None:
        """Count one event."""
        self._acc.update(*self._args(y_true, y_pred), w)  # w by position: the accumulators' compiled paths take it

    def revert(self, y_true: Any, y_pred: Any, w: float = 1.0) -> None:
        """Take back an event counted before (``utils.Rolling`` uses this)."""
        self._acc.revert(*self._args(y_true, y_pred), w)

    def get(self) -> float:
        """The current value of the metric."""
        return float(metric_value(self._acc.get(), self.metric))  # a method (such as ece) with its defaults

    def works_with(self, model: Any) -> bool:
        """Classifiers for binary and multiclass, regressors for regression."""
        wanted = river_base.Regressor if self.kind == "regression" else river_base.Classifier
        return isinstance(model, wanted)

    def _get_params(self) -> dict[str, Any]:
        return {"metric": self.metric, "kind": self.kind, "bigger_is_better": self._bigger, **self.kwargs}
