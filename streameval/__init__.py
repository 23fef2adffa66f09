"""streameval: streaming, mergeable evaluation metrics.

State is counts; every metric is a pure function of counts. Accumulators
update per event or per batch, merge by adding counts, and report every
metric without changing their state.
"""

from .binary import BinaryAccumulator, BinaryReport
from .bins import Bins
from .confusion import ConfusionReport

__all__ = ["BinaryAccumulator", "BinaryReport", "Bins", "ConfusionReport"]
__version__ = "0.1.0"
