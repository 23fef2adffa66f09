"""streameval: streaming, mergeable evaluation metrics.

State is counts; every metric is a pure function of counts. Accumulators
update per event or per batch, merge by adding counts, and report every
metric without changing their state.

``COMPILED`` tells whether the compiled hot paths are in use (they build at
install when a C compiler is present); without them every result is the same,
only slower.
"""

from typing import TYPE_CHECKING

from ._events import COMPILED
from .averaging import MacroReport, MetricSummary, macro, micro
from .binary import BinaryAccumulator
from .binary_report import BinaryReport
from .bins import Bins
from .confusion import ConfusionReport
from .drift import DriftReport, drift, drift_by_segment
from .inference import PairedReport, paired_t_test
from .io import FormatError, from_bytes, from_dict, load, save, to_bytes, to_dict
from .join import LabelJoin
from .multiclass import MulticlassAccumulator, MulticlassReport
from .paired import PairedAccumulator
from .protocol import Accumulator
from .regression import RegressionAccumulator, RegressionReport
from .score_report import ScoreReport
from .scores import ScoreAccumulator
from .segmented import Segmented, SegmentedReport
from .threads import Locked
from .windows import Decayed, Monitor, Sliding, TimeWindow

__all__ = [
    "COMPILED",
    "Accumulator",
    "BinaryAccumulator",
    "BinaryReport",
    "Bins",
    "ConfusionReport",
    "Decayed",
    "DriftReport",
    "FormatError",
    "LabelJoin",
    "Locked",
    "MacroReport",
    "MetricSummary",
    "Monitor",
    "MulticlassAccumulator",
    "MulticlassReport",
    "PairedAccumulator",
    "PairedReport",
    "RegressionAccumulator",
    "RegressionReport",
    "ScoreAccumulator",
    "ScoreReport",
    "Segmented",
    "SegmentedReport",
    "Sliding",
    "TimeWindow",
    "drift",
    "drift_by_segment",
    "from_bytes",
    "from_dict",
    "load",
    "macro",
    "micro",
    "paired_t_test",
    "save",
    "to_bytes",
    "to_dict",
]
__version__ = "0.1.0"

if TYPE_CHECKING:  # mypy checks that every kind satisfies the accumulator protocol

    def _binary(acc: BinaryAccumulator) -> Accumulator:
        return acc

    def _multiclass(acc: MulticlassAccumulator) -> Accumulator:
        return acc

    def _regression(acc: RegressionAccumulator) -> Accumulator:
        return acc

    def _paired(acc: PairedAccumulator) -> Accumulator:
        return acc

    def _scores(acc: ScoreAccumulator) -> Accumulator:
        return acc

    def _segmented(acc: Segmented) -> Accumulator:
        return acc
