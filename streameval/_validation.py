"""Input checks shared by the accumulators. Every error names the argument and the value."""

from __future__ import annotations

import datetime
import decimal
import math
import numbers
import sys
from collections.abc import Iterable, Sized
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "as_labels", "as_scores", "as_times", "as_weights", "check_duration", "check_label_pair", "check_no_nan",
    "check_real", "check_same_length", "check_sums_finite", "check_time", "check_total", "is_missing",
    "refuse_class", "show", "unmasked",
]  # fmt: skip


# what a real number may be: decimals too (a Parquet or database DECIMAL column's values), as numpy and
# scikit-learn take them; a decimal is read as the nearest float
_REAL = (numbers.Real, np.bool_, decimal.Decimal)


def show(value: Any) -> str:
    """A value as an error message shows it: a numpy scalar as Python's (``2``, not ``np.int64(2)``), and a long
    text cut at 80 characters."""
    if isinstance(value, np.generic):
        value = value.item()
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def show_many(values: Any, up_to: int = 20) -> str:
    """A list of values as an error message shows it: whole up to ``up_to`` of them, else the first ones and how
    many there are in all (a message naming 6,000 learnt classes was 35 KB long).

    Examples
    --------
    >>> from streameval._validation import show_many
    >>> show_many(["a", "b"])
    "['a', 'b']"
    >>> show_many(range(100), up_to=5)
    '[0, 1, 2, 3, 4, ... (100 in all)]'
    """
    values = list(values)
    if len(values) <= up_to:
        return repr(values)
    return "[" + ", ".join(repr(v) for v in values[:up_to]) + f", ... ({len(values)} in all)]"


def check_real(
    name: str, value: Any, *, finite: bool = False, nonnegative: bool = False, allow_nan: bool = False
) -> float:
    """One real number as a float, or a TypeError / ValueError naming ``name``."""
    if type(value) is float:  # the usual case, without the checks of the abstract number types (5x slower)
        v = value
    else:
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        v = _as_real(name, value, finite)
    if math.isnan(v) and not allow_nan:
        raise ValueError(f"{name} must not be NaN, got {show(value)}")
    if finite and not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {show(value)}")
    if nonnegative and v < 0:
        raise ValueError(f"{name} must be >= 0, got {show(value)}")
    return v


def _as_real(name: str, value: Any, finite: bool) -> float:
    """:func:`check_real`'s conversion of anything but a float (a 0-d array's value already taken)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, _REAL):
        raise TypeError(f"{name} must be a real number, got {show(value)}")
    try:
        return _float(value)
    except OverflowError:  # an integer beyond the floats
        if finite:
            raise ValueError(f"{name} must be finite, got an integer too large for a float ({show(value)})") from None
        return math.inf if value > 0 else -math.inf  # type: ignore[operator]  # only integers overflow float()


def check_label_pair(pos_label: Any, neg_label: Any) -> None:
    """TypeError unless both labels are hashable, ValueError if they are equal."""
    try:
        hash(pos_label), hash(neg_label)
        same = bool(pos_label == neg_label)
    except TypeError:
        raise TypeError(
            f"pos_label and neg_label must be hashable scalars, got {pos_label!r} and {neg_label!r}"
        ) from None
    if same:
        raise ValueError(f"pos_label and neg_label must differ, got {pos_label!r} for both")


def _float(value: Any) -> float:
    """``float(value)`` of a checked real number; a signalling NaN decimal (which ``float`` refuses) is NaN."""
    if isinstance(value, decimal.Decimal) and value.is_snan():
        return math.nan
    return float(value)


# Event times may be instants: datetime.datetime and datetime.date (a pandas Timestamp is one), numpy
# datetime64 and their arrays, pandas and pyarrow timestamp columns. They are read as seconds since
# 1970-01-01 00:00 UTC (naive ones as UTC, as numpy and pandas read them), so widths, half-lives, ttls and
# record intervals are then seconds; those may be durations (datetime.timedelta, pandas Timedelta, numpy
# timedelta64), read as seconds too.
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def _is_missing_instant(value: Any) -> bool:
    """Whether ``value`` is a missing instant or duration: numpy's or pandas' NaT."""
    return type(value).__name__ == "NaTType" or (
        isinstance(value, (np.datetime64, np.timedelta64)) and bool(np.isnat(value))
    )


def refuse_class(name: str, value: Any) -> None:
    """TypeError naming ``name`` where an accumulator is wanted and its class was given (a window takes the class, a
    monitor, a lock or a join takes one made)."""
    if isinstance(value, type):
        raise TypeError(f"{name} must be an accumulator, not the class {value.__name__}: pass one, such as "
                        f"{value.__name__}()")  # fmt: skip


def is_missing(value: Any) -> bool:
    """Whether ``value`` is a missing value rather than a label or a segment: ``None``, a NaN (a float's, numpy's,
    a decimal's), pandas' ``NA`` or a NaT (numpy's or pandas')."""
    if value is None or _is_missing_instant(value) or type(value).__name__ == "NAType":
        return True
    if isinstance(value, (float, np.floating)):
        return bool(math.isnan(value))
    return isinstance(value, decimal.Decimal) and value.is_nan()


def _instant_seconds(value: Any) -> float | None:
    """Seconds since the epoch of an instant (``None`` for anything else)."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return (value - _EPOCH).total_seconds()
    if isinstance(value, datetime.date):
        return float((value - _EPOCH.date()).days * 86400)
    if isinstance(value, np.datetime64):
        return float(datetime64_seconds(np.asarray([value]))[0])
    return None


def datetime64_seconds(instants: np.ndarray) -> npt.NDArray[np.float64]:
    """Seconds since the epoch of datetime64 values (no NaT), each the float nearest to the exact number, as
    ``timedelta.total_seconds`` gives it for whole microseconds: so one instant as a datetime, a Timestamp or
    a datetime64 of any unit is one time (a division of nanoseconds as floats would round twice)."""
    micro = instants.astype("datetime64[us]")
    seconds = (micro - np.datetime64(0, "us")).astype(np.int64) / 1e6  # whole microseconds: exact, then divided
    finer = micro != instants
    if finer.any():  # below a microsecond: nanoseconds divided (they are below 2**63, as floats rounded once)
        nanos = instants[finer].astype("datetime64[ns]")
        seconds[finer] = (nanos - np.datetime64(0, "ns")).astype(np.int64) / 1e9
    return seconds


def check_time(name: str, value: Any) -> float:
    """One event time as a finite float: a real number, or an instant as seconds since 1970-01-01 UTC."""
    if type(value) is not float:
        if _is_missing_instant(value):
            raise ValueError(f"{name} must not be missing, got NaT")
        seconds = _instant_seconds(value)
        if seconds is not None:
            return seconds
    return check_real(name, value, finite=True)


def check_duration(name: str, value: Any) -> float:
    """A positive, finite length of time: a real number, or a duration as seconds."""
    if _is_missing_instant(value):
        raise ValueError(f"{name} must not be missing, got NaT")
    if isinstance(value, datetime.timedelta):
        v = value.total_seconds()
    elif isinstance(value, np.timedelta64):
        v = float(value / np.timedelta64(1, "s"))
    else:
        v = check_real(name, value, finite=True)
    if not v > 0:
        raise ValueError(f"{name} must be positive, got {show(value)}")
    return v


def as_times(name: str, value: Any) -> npt.NDArray[np.float64]:
    """A batch's event times as a 1-D float64 array (not checked for NaN or infinities: the caller's part), with
    instants read as :func:`check_time` reads one; a missing instant (NaT, None among instants) is refused by
    index."""
    if type(value) is np.ndarray and value.dtype == np.float64 and value.ndim == 1 and value.flags.c_contiguous:
        return value  # the usual times, the object the path below returns (0.21 against 0.72 us for 10 of them)
    arr = _one_dimensional(name, column_as_numpy(value))
    if arr.dtype.kind == "M":
        missing = np.isnat(arr)
        if missing.any():
            raise ValueError(f"{name} must not be missing, got NaT at index {int(np.argmax(missing))}")
        return datetime64_seconds(arr)
    if (
        arr.dtype.kind == "O"
        and arr.size
        and any(isinstance(v, (datetime.date, np.datetime64)) or _is_missing_instant(v) for v in arr)
    ):
        out = np.empty(arr.size, dtype=np.float64)
        for i, v in enumerate(arr):
            if v is None or _is_missing_instant(v):
                raise ValueError(f"{name} must not be missing, got {'None' if v is None else 'NaT'} at index {i}")
            seconds = _instant_seconds(v)
            if seconds is None:
                raise TypeError(f"{name} must hold instants or real numbers, not both, got {show(v)} at index {i}")
            out[i] = seconds
        return out
    return as_scores(name, arr, check_nan=False)


def _named_columns(value: Any) -> list[Any] | None:
    """The column names of a table whose columns name what they hold (a pandas DataFrame, unless its columns
    are the positions 0, 1, ..., a pyarrow Table or RecordBatch, a polars DataFrame); ``None`` for anything
    else, a matrix of positions."""
    module = type(value).__module__
    if module.startswith("pandas") and getattr(value, "ndim", 0) == 2:
        names = list(value.columns)
        return None if names == list(range(len(names))) else names  # pd.DataFrame(matrix): positions
    if module.startswith("pyarrow") and hasattr(value, "column_names") and hasattr(value, "num_rows"):
        return list(value.column_names)
    if module.startswith("polars") and hasattr(value, "columns") and hasattr(value, "height"):
        return list(value.columns)
    return None


def _table_columns(value: Any, names: list[Any]) -> list[list[Any]]:
    """The columns of a table :func:`_named_columns` names, as lists of Python values."""
    if hasattr(value, "iloc"):  # pandas
        columns = [value.iloc[:, i].to_numpy() for i in range(len(names))]
    elif type(value).__module__.startswith("pyarrow"):
        columns = [column_as_numpy(value.column(i)) for i in range(len(names))]
    else:  # polars
        columns = [value[name].to_numpy() for name in names]
    return [python_values(np.asarray(c)) for c in columns]


def python_values(column: np.ndarray) -> list[Any]:
    """A column's values as Python's: instants and durations as datetimes and timedeltas where they are whole
    microseconds (numpy gives nanoseconds as integers), else as numpy's own."""
    if column.dtype.kind in "mM":
        micro = column.astype(f"{column.dtype.kind}8[us]")
        return micro.tolist() if bool(np.all(micro == column)) else list(column)
    return column.tolist()


def table_rows(value: Any) -> Any:
    """A table of named columns (class scores by class, say) as its rows, one mapping name -> value each, as a
    list of mappings says it; anything else as it is (a 2-D array, a frame of unnamed columns: by position)."""
    if type(value) is np.ndarray or type(value) is list:  # the usual columns: no names to look for
        return value
    names = _named_columns(value)
    if names is None:
        return value
    if len(set(names)) != len(names):
        raise ValueError(f"scores must name each column once, got the columns {names!r}")
    rows = zip(*_table_columns(value, names), strict=True)
    return [dict(zip(names, row, strict=True)) for row in rows]


def table_tuples(value: Any) -> Any:
    """A pyarrow Table or RecordBatch, or a polars DataFrame, as its rows, one tuple each (crossed segments, as
    a pandas DataFrame's rows are); anything else as it is."""
    names = _named_columns(value)
    if names is None or hasattr(value, "iloc"):
        return value
    return list(zip(*_table_columns(value, names), strict=True))


def row_mapping(value: Any) -> Any:
    """One event's named values (a pandas Series whose index names them) as a mapping; anything else as it is
    (a Series indexed by the positions 0, 1, ...: a sequence)."""
    if type(value).__module__.startswith("pandas") and hasattr(value, "index") and getattr(value, "ndim", 0) == 1:
        index = list(value.index)
        if index == list(range(len(index))):
            return value.to_numpy()
        return dict(zip(index, value.to_numpy().tolist(), strict=True))
    return value


def in_another_order(columns: Any, classes: Any) -> bool:
    """Whether score columns (several) are named as the classes (as text) but listed in another order: read by
    position, a column a class, each column's scores would go to another class."""
    names, labels = [str(c) for c in columns], [str(c) for c in classes]
    return len(names) > 1 and sorted(names) == sorted(labels) and names != labels


def column_as_numpy(value: Any) -> Any:
    """A pandas or pyarrow column as a numpy array (anything else as it is); a pyarrow map column as an object
    array of dicts, one a row (pyarrow gives each row's (key, value) pairs)."""
    if isinstance(value, np.ndarray) or not hasattr(value, "to_numpy"):
        return value
    try:
        arr = value.to_numpy(zero_copy_only=False)  # pyarrow
    except TypeError:
        arr = value.to_numpy()  # pandas
    if _is_arrow_map(value):
        arr = np.asarray(arr, dtype=object)
        for i, pairs in enumerate(arr):
            arr[i] = None if pairs is None else dict(pairs)
    return arr


def _is_arrow_map(value: Any) -> bool:
    """Whether ``value`` is a pyarrow column of maps."""
    if not type(value).__module__.startswith("pyarrow"):
        return False
    import pyarrow.types as pt

    return bool(pt.is_map(value.type))


def is_masked_array(value: Any) -> bool:
    """Whether ``value`` is a numpy masked array. Only where ``numpy.ma`` is imported can there be one: asking
    numpy for ``np.ma`` imports it (7-9 ms, once a process: the first batch of a process that has not imported
    pandas or pyarrow, which import it)."""
    ma = sys.modules.get("numpy.ma")
    return ma is not None and isinstance(value, ma.MaskedArray)


def unmasked(name: str, value: Any) -> Any:
    """A masked array's values where none is masked, or a ValueError naming ``name`` and the first masked entry's
    index (numpy's asarray would keep a masked entry's value and count it); anything else as it is."""
    if not is_masked_array(value):
        return value
    if value.ndim == 0:
        return value.data
    masked = np.flatnonzero(np.ma.getmaskarray(value).reshape(len(value), -1).any(axis=1))
    if masked.size:
        raise ValueError(f"{name} must not be missing, got a masked entry at index {int(masked[0])}")
    return value.data


def _one_dimensional(name: str, value: Any) -> np.ndarray:
    value = unmasked(name, value)
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged nested sequences
        raise ValueError(f"{name} must be a 1-D array-like, could not read it: {exc}") from None
    if arr.ndim == 0:
        if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):  # a generator, a set, a dict...
            raise TypeError(
                f"{name} must be a 1-D array-like (a list, an array, a column), got {show(value)}, which numpy "
                "cannot read as one: pass a list of its values"
            )
        raise TypeError(f"{name} must be a 1-D array-like, got the scalar {show(value)}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}")
    return arr


def as_scores(name: str, value: Any, check_nan: bool = True) -> npt.NDArray[np.float64]:
    """A 1-D float64 array with no NaN (infinities allowed); ``check_nan=False`` leaves NaN to the caller."""
    arr = _one_dimensional(name, value)
    if arr.dtype.kind in "biuf":
        x = np.ascontiguousarray(arr, dtype=np.float64)
    elif arr.dtype.kind == "O":
        x = np.empty(arr.size, dtype=np.float64)
        for i, v in enumerate(arr):
            if isinstance(v, (str, bytes)) or not isinstance(v, _REAL):
                raise TypeError(f"{name} must hold real numbers, got {show(v)} at index {i}")
            try:
                x[i] = _float(v)
            except OverflowError:  # an integer beyond the floats: infinite, as check_real takes one score
                x[i] = math.inf if v > 0 else -math.inf  # type: ignore[operator]  # only integers overflow float()
    else:
        first = arr[0] if arr.size else None
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype} (first value {show(first)})")
    if check_nan:
        check_no_nan(name, x)
    return x


def check_no_nan(name: str, x: npt.NDArray[np.float64]) -> None:
    """ValueError naming ``name`` and the index of the first NaN in ``x``."""
    with np.errstate(invalid="ignore"):
        lowest = x.min() if x.size else 0.0
    if math.isnan(lowest):  # min propagates NaN: one cheap pass when there is none
        nan_at = np.flatnonzero(np.isnan(x))
        if nan_at.size:
            raise ValueError(f"{name} must not be NaN, got nan at index {nan_at[0]}")


def as_labels(name: str, value: Any, pos_label: Any, neg_label: Any) -> npt.NDArray[np.bool_]:
    """A 1-D boolean array (True = positive) from labels that are all pos_label or neg_label."""
    arr = _one_dimensional(name, value)
    if arr.dtype.kind in "US" and not isinstance(value, np.ndarray):
        # numpy turns [1, 0, "1"] into strings; keep each label as it was given
        arr = np.empty(len(value), dtype=object)
        arr[:] = list(value)
    if arr.dtype == np.bool_ and pos_label == 1 and neg_label == 0:
        return arr
    if arr.dtype.kind in "iu" and pos_label == 1 and neg_label == 0 and arr.size and 0 <= arr.min() <= arr.max() <= 1:
        return arr.astype(np.bool_)
    is_pos = _equal(arr, pos_label)
    is_neg = _equal(arr, neg_label)
    bad = ~(is_pos | is_neg)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"{name} must be {pos_label!r} (positive) or {neg_label!r} (negative), got {show(arr[i])} at index {i}"
        )
    return is_pos


def _equal(arr: np.ndarray, label: Any) -> npt.NDArray[np.bool_]:
    if arr.dtype.kind in "biuf" and isinstance(label, (str, bytes)):
        return np.zeros(arr.shape, dtype=np.bool_)
    if arr.dtype.kind in "USO" or isinstance(label, (str, bytes)):
        out = np.fromiter((_same_label(v, label) for v in arr), dtype=np.bool_, count=arr.size)
        return out
    result = arr == label
    if not isinstance(result, np.ndarray) or result.shape != arr.shape:
        return np.zeros(arr.shape, dtype=np.bool_)
    return result


def _same_label(v: Any, label: Any) -> bool:
    if isinstance(v, (str, bytes)) != isinstance(label, (str, bytes)):
        return False
    try:
        return bool(v == label)
    except (TypeError, ValueError):
        return False


def is_one_value(value: Any) -> bool:
    """Whether ``value`` is one value, not a column; a list or tuple is a column without being read (``np.ndim``
    of one converts all of it, as ``np.asarray`` does)."""
    return not isinstance(value, (list, tuple)) and np.ndim(value) == 0


def as_weights(name: str, value: Any, n: int) -> npt.NDArray[np.float64] | None:
    """``None`` when every weight is 1, else a float64 array of finite weights >= 0."""
    if value is None:
        return None
    if is_one_value(value):
        one = check_real(name, value, finite=True, nonnegative=True)
        check_total(name, one * n)
        return None if one == 1.0 else np.full(n, one)
    arr = _one_dimensional(name, value)
    given = arr
    if arr.dtype.kind not in "biuf":  # each value a real number, as for scores (text is none)
        arr = as_scores(name, arr, check_nan=False)
    w = np.ascontiguousarray(arr, dtype=np.float64)
    check_same_length((name, w), n=n)
    if not w.size:
        return None
    lowest, highest = w.min(), w.max()  # two reductions; NaN makes both NaN and fails the test below
    if not (lowest >= 0 and highest < math.inf):
        bad = ~(np.isfinite(w) & (w >= 0))
        i = int(np.argmax(bad))
        if given.dtype.kind == "O" and type(given[i]) is int:  # read as infinite: beyond the floats
            raise ValueError(
                f"{name} must be finite and >= 0, got an integer too large for a float ({show(given[i])}) at index {i}"
            )
        raise ValueError(f"{name} must be finite and >= 0, got {show(w[i])} at index {i}")
    if lowest == highest == 1.0:
        return None
    if float(highest) * w.size > _SUM_IS_FINITE_BELOW:  # else no order of adding them overflows: no sum needed
        with np.errstate(over="ignore"):
            check_total(name, float(w.sum()))
    return w


# n weights of at most h add up to at most n * h, and in floats, in any order, to within a relative 2 * n * eps of
# it (well below 2 for any batch): below this bound a batch's total cannot overflow
_SUM_IS_FINITE_BELOW = 2.0**1022


def check_total(name: str, total: float) -> None:
    """ValueError when a total weight overflows to inf (counts would turn into inf)."""
    check_sums_finite(name, math.isfinite(total), "the total weight", "scale the weights down")


class SumsOverflowError(ValueError):
    """A refusal because a total weight or a sum would pass the largest float (the values themselves are valid: a
    window that stores them scaled may take them at another scale)."""


def check_sums_finite(
    name: str, finite: bool, sums: str = "their means, sums of squares or sums", advice: str = "scale them down"
) -> None:
    """ValueError (:class:`SumsOverflowError`) when ``sums`` (of a batch, of a merge) would overflow to inf: a
    state holds finite ones."""
    if not finite:
        raise SumsOverflowError(f"{name}: {sums} would overflow (more than {np.finfo(np.float64).max:.4g}); {advice}")


def check_same_length(*named: tuple[str, Sized], n: int | None = None) -> None:
    """ValueError naming the arrays whose lengths differ."""
    lengths = [(name, len(a)) for name, a in named]
    expected = n if n is not None else lengths[0][1]
    for name, length in lengths:
        if length != expected:
            listing = ", ".join(f"{nm} has {ln}" for nm, ln in lengths)
            raise ValueError(f"{name} must have {expected} elements like the others, got {length} ({listing})")
