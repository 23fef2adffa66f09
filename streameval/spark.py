"""Evaluate Spark DataFrames: one accumulator per partition, merged as a tree.

Each partition's rows reach a Python worker as Arrow record batches
(``mapInArrow``); they are counted there into one accumulator, which leaves
the worker as bytes in the versioned state format. The states of up to 64
partitions are merged on the driver; more are merged by ``treeReduce`` on
the executors, so the driver receives a few states. It never receives a
row. The result equals one process over the same rows: bit for bit without
weights, to rounding of the sums with them.

Requires ``pyspark`` (``pip install 'streameval[spark]'``); this module
imports without it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import column_as_numpy, in_another_order
from .binary import BinaryAccumulator
from .io import from_bytes, to_bytes
from .multiclass import MulticlassAccumulator
from .paired import PairedAccumulator
from .regression import RegressionAccumulator
from .scores import ScoreAccumulator
from .segmented import DEFAULT_MAX_SEGMENTS, Segmented

__all__ = ["DRIVER_MERGES_UP_TO", "KINDS", "evaluate"]

#: The kinds ``evaluate`` builds, by name.
KINDS: dict[str, type] = {
    "binary": BinaryAccumulator,
    "multiclass": MulticlassAccumulator,
    "paired": PairedAccumulator,
    "regression": RegressionAccumulator,
    "scores": ScoreAccumulator,
}

DRIVER_MERGES_UP_TO = 64  # partitions whose states the driver merges itself; more go through treeReduce
BLOCK_ROWS = 1 << 18  # Arrow batches (10,000 rows by default) are gathered into blocks this long
_MARK = "streameval.spark: "  # starts the message of a bad row, so the driver finds it in Spark's traceback


class _BadRowError(ValueError):
    """A row a partition cannot count (raised on a worker)."""


@dataclass(frozen=True)
class _Columns:
    """Which columns a partition reads, and how they become an accumulator's arguments."""

    kind: str
    label: str | None
    score: str | tuple[str, ...]
    weight: str | None
    by: tuple[str, ...]
    score_type: str  # "plain", "list" (array of class scores), "struct", "map" (class -> score) or "columns"

    @property
    def names(self) -> list[str]:
        scores = list(self.score) if isinstance(self.score, tuple) else [self.score]
        label = [] if self.label is None else [self.label]
        weight = [] if self.weight is None else [self.weight]
        return list(dict.fromkeys([*label, *scores, *weight, *self.by]))

    @property
    def argument_columns(self) -> dict[str, str]:
        """The accumulator's argument names, and the column each comes from."""
        score = self.score if isinstance(self.score, str) else ", ".join(self.score)
        if self.kind == "paired":  # the two models' columns
            args = {"pred_a": self.score[0], "pred_b": self.score[1]}
        else:
            args = {"y_pred": score} if self.kind == "regression" else {"scores": score}
        if self.label is not None:
            args["y"] = self.label
        if self.weight is not None:
            args["w"] = self.weight
        return args


def _not_null(column: Any, name: str) -> None:
    if column.null_count:
        import pyarrow.compute as pc

        row = int(pc.index(column.is_null(), True).as_py())
        raise _BadRowError(f"column {name!r} is null at {{row:{row}}}")


def _numbers(column: Any, name: str) -> np.ndarray:
    _not_null(column, name)
    return np.asarray(column.to_numpy(zero_copy_only=False))


def _class_scores(column: Any, cols: _Columns) -> np.ndarray:
    """An array or struct column of class scores as an n x K array."""
    import pyarrow as pa

    name = str(cols.score)
    _not_null(column, name)
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    n = len(column)
    if cols.score_type == "struct":
        fields = [column.field(i) for i in range(column.type.num_fields)]
        for i, f in enumerate(fields):
            _not_null(f, f"{name}.{column.type.field(i).name}")
        return np.column_stack([np.asarray(f.to_numpy(zero_copy_only=False), dtype=np.float64) for f in fields])
    if pa.types.is_fixed_size_list(column.type):
        k = column.type.list_size
    else:
        lengths = np.asarray(column.value_lengths().to_numpy(zero_copy_only=False))
        k = int(lengths[0]) if n else 0
        uneven = np.flatnonzero(lengths != k)
        if uneven.size:
            row = int(uneven[0])
            raise _BadRowError(
                f"column {name!r} holds {int(lengths[row])} class scores at {{row:{row}}} and {k} at "
                "{row:0}: every row needs one score per class"
            )
    values = column.flatten()
    if values.null_count:
        import pyarrow.compute as pc

        row = int(pc.index(values.is_null(), True).as_py()) // max(k, 1)
        raise _BadRowError(f"column {name!r} holds a null class score at {{row:{row}}}")
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64).reshape(n, k)


def _arguments(table: Any, cols: _Columns) -> tuple[list[Any], dict[str, Any], Any]:
    """(positional arguments, keywords, segments or None) of a block of rows."""
    if cols.kind == "paired":  # the two models' predictions: two arguments
        scores = [_numbers(table.column(c), c) for c in cols.score]
    elif cols.score_type in ("list", "struct"):
        scores = [_class_scores(table.column(cols.score), cols)]
    elif cols.score_type == "map":  # a mapping class -> score a row
        column = table.column(cols.score)
        _not_null(column, str(cols.score))
        scores = [column_as_numpy(column)]
    elif cols.score_type == "columns":
        scores = [np.column_stack([_numbers(table.column(c), c) for c in cols.score])]
    else:
        scores = [_numbers(table.column(cols.score), str(cols.score))]
    args = scores if cols.label is None else [_numbers(table.column(cols.label), cols.label), *scores]
    kwargs = {} if cols.weight is None else {"w": _numbers(table.column(cols.weight), cols.weight)}
    segments = None
    if cols.by:
        parts = [_numbers(table.column(c), c) for c in cols.by]
        segments = parts[0] if len(parts) == 1 else list(zip(*(p.tolist() for p in parts), strict=True))
    return args, kwargs, segments


def _count(acc: Any, args: list[Any], kwargs: dict[str, Any], segments: Any) -> None:
    if segments is None:
        acc.update_many(*args, **kwargs)
    else:
        acc.update_many(segments, *args, **kwargs)


def _first_bad_row(make: Callable[[], Any], args: list[Any], kwargs: dict[str, Any], segments: Any) -> int | None:
    """The first row of a refused block: the shortest refused prefix, by bisection on empty accumulators.

    ``None`` when the block alone is accepted (it was refused for what the accumulator held already).
    """

    def refused(k: int) -> bool:
        try:
            _count(make(), [a[:k] for a in args], {n: v[:k] for n, v in kwargs.items()},
                   None if segments is None else segments[:k])  # fmt: skip
        except (TypeError, ValueError):
            return True
        return False

    lo, hi = 0, len(args[0])
    if not refused(hi):
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if refused(mid):
            hi = mid
        else:
            lo = mid
    return hi - 1


def _place(partition: int, row: int) -> str:
    return f"row {row} of partition {partition}"


def _located(exc: Exception, cols: _Columns, partition: int, done: int, table: Any, make: Callable[[], Any],
             block: tuple[list[Any], dict[str, Any], Any] | None) -> str:  # fmt: skip
    """The message of a bad row: the column, the row (and its values) and what is wrong."""
    message = str(exc)
    if isinstance(exc, _BadRowError):  # found while reading the columns: the row is in the message
        return _MARK + re.sub(r"\{row:(\d+)\}", lambda m: _place(partition, done + int(m.group(1))), message)
    row = None if block is None else _first_bad_row(make, *block)
    if row is None:
        return f"{_MARK}partition {partition}, a block of rows from row {done}: {message}"
    column = cols.argument_columns.get(message.split(" ", 1)[0])
    values = ", ".join(f"{c}={table.column(c)[row].as_py()!r}" for c in cols.names)
    named = f"column {column!r}, " if column else ""
    message = re.sub(r" at index \d+|, counting its events from 0", "", message)  # the row is named instead
    return f"{_MARK}{named}{_place(partition, done + row)} ({values}): {message}"


def _count_partition(
    batches: Iterator[Any], cols: _Columns, make: Callable[[], Any], max_segments: int = DEFAULT_MAX_SEGMENTS
) -> Iterator[Any]:
    """The body of ``mapInArrow``: count a partition's batches, yield one row holding its state."""
    import pyarrow as pa
    from pyspark import TaskContext

    context = TaskContext.get()
    partition = context.partitionId() if context is not None else 0
    whole = functools.partial(Segmented, make, max_segments=max_segments) if cols.by else make
    acc = whole()
    done = 0  # rows of the partition counted so far
    pending: list[Any] = []

    def flush() -> None:
        nonlocal done
        table = pa.Table.from_batches(pending).combine_chunks()
        pending.clear()
        block = None
        try:
            block = _arguments(table, cols)
            _count(acc, *block)
        except (TypeError, ValueError) as exc:
            raise _BadRowError(_located(exc, cols, partition, done, table, whole, block)) from None
        done += table.num_rows

    rows = 0
    for batch in batches:
        if batch.num_rows:
            pending.append(batch)
            rows += batch.num_rows
            if rows >= BLOCK_ROWS:
                flush()
                rows = 0
    if pending:
        flush()
    yield pa.RecordBatch.from_arrays([pa.array([to_bytes(acc, level=1)], type=pa.binary())], names=["state"])


def _merge_states(a: bytes, b: bytes) -> bytes:
    merged = from_bytes(a)
    merged += from_bytes(b)
    return to_bytes(merged, level=1)


def _score_type(schema: Any, score: str | tuple[str, ...]) -> str:
    """How a row's score is held: one value, an array, a struct or several columns."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    if isinstance(score, tuple):
        return "columns"
    data_type = schema[score].dataType
    if isinstance(data_type, ArrayType):
        return "list"
    if isinstance(data_type, StructType):
        return "struct"
    if isinstance(data_type, MapType):
        return "map"
    return "plain"


def _options(kind: str, options: dict[str, Any], score_type: str, schema: Any, score: Any) -> dict[str, Any]:
    """The accumulator's options, with the classes a struct column names when none are given."""
    if kind != "multiclass" or score_type in ("plain", "map"):  # a map names the classes of its scores
        return options
    width = len(score) if score_type == "columns" else None
    if score_type == "struct":
        names = [f.name for f in schema[score].dataType.fields]
        width = len(names)
        if options.get("classes") is None:
            return {**options, "classes": names}
        if in_another_order(names, options["classes"]):  # read by position, they would name other fields
            raise ValueError(
                f"classes {list(options['classes'])!r} name the fields of struct column {score!r} in another "
                f"order than its own ({names!r}): give them in the fields' order, or leave classes= out"
            )
    if options.get("classes") is None:
        raise ValueError(
            f"kind='multiclass' with score={score!r} (class scores in order) needs classes=[...], "
            "the class of each position"
        )
    if width is not None and len(list(options["classes"])) != width:
        raise ValueError(f"classes has {len(list(options['classes']))} labels but score {score!r} has {width} fields")
    if score_type == "columns" and in_another_order(score, options["classes"]):
        raise ValueError(  # by position, each column's scores would go to another class
            f"score {list(score)!r} names the classes' columns in another order than classes "
            f"{list(options['classes'])!r}: a column is read as the class at its place; give them in that order"
        )
    return options


def _is_connect(df: Any) -> bool:
    """Whether ``df`` is a Spark Connect DataFrame (a client of a remote session, without RDDs)."""
    return type(df).__module__.startswith("pyspark.sql.connect")


def _missing_module(exc: BaseException) -> str | None:
    """The module a Spark worker's Python could not import, if that is why the job failed."""
    found = re.search(r"ModuleNotFoundError: No module named '([^']+)'", str(exc))
    return found.group(1) if found else None


def _spark_message(exc: BaseException) -> str | None:
    """The bad-row message a worker raised, found in Spark's error text."""
    found = re.search(re.escape(_MARK) + r"[^\n]*", str(exc))
    return found.group(0)[len(_MARK) :] if found else None


def evaluate(
    df: Any,
    label: str | None = "label",
    score: str | Sequence[str] = "score",
    weight: str | None = None,
    by: str | Sequence[str] | None = None,
    kind: str = "binary",
    depth: int = 2,
    max_segments: int = DEFAULT_MAX_SEGMENTS,
    **accumulator_options: Any,
) -> Any:
    """The merged accumulator of a Spark DataFrame's rows.

    Each partition is counted on its executor into one accumulator; the
    accumulators travel as bytes in the state format and are merged by a tree
    reduction (``treeReduce``), so the driver receives a few states and no
    rows. With at most 64 partitions (``DRIVER_MERGES_UP_TO``), and on Spark
    Connect, which has no RDDs, the driver receives one state per partition
    and merges them itself, which is faster than a shuffle stage.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
    label : str or None, default "label"
        The column of true labels (of true values for ``kind="regression"``).
        Not read for ``kind="scores"``.
    score : str or sequence of str, default "score"
        The column of scores (predicted values for regression). For
        ``kind="multiclass"``: an array column of class scores (give
        ``classes=``), a struct column (its fields are the classes unless
        ``classes=`` is given), a map column class -> score (the classes
        learnt, or ``classes=``), several numeric columns, one per class (give
        ``classes=``), or a column of predicted classes.
    weight : str, optional
        A column of event weights (finite, >= 0).
    by : str or sequence of str, optional
        Segment column(s): the result is a :class:`streameval.Segmented`
        accumulator (several columns make crossed segments, tuples).
    kind : {"binary", "multiclass", "paired", "regression", "scores"}, default "binary"
        The accumulator: :class:`~streameval.BinaryAccumulator`,
        :class:`~streameval.MulticlassAccumulator`,
        :class:`~streameval.PairedAccumulator` (``score`` names the two
        models' columns, of labels or, with ``threshold=``, of scores),
        :class:`~streameval.RegressionAccumulator` or
        :class:`~streameval.ScoreAccumulator`.
    depth : int, default 2
        Depth of the merge tree (``treeReduce``'s ``depth``), for DataFrames
        of more than ``DRIVER_MERGES_UP_TO`` partitions.
    max_segments : int, default 10,000
        With ``by``: the most segments (each holds an accumulator), as
        :class:`streameval.Segmented` takes it; a partition or a merge that
        would make more is refused.
    **accumulator_options
        Passed to the accumulator's constructor (``threshold=``,
        ``exact_up_to=``, ``bins=``, ``classes=``...).

    Returns
    -------
    accumulator
        The accumulator of every row, or a ``Segmented`` one with ``by``.

    Raises
    ------
    ValueError
        A missing column, a bad option, or a row that cannot be counted: the
        message names the column, the partition and the row within it, and
        the row's values. Nothing is returned then.

    Examples
    --------
    >>> import os, sys
    >>> from pyspark.sql import SparkSession
    >>> import streameval.spark as ses
    >>> os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers' Python: one with streameval installed
    >>> spark = SparkSession.builder.master("local[1]").getOrCreate()
    >>> df = spark.createDataFrame([(1, 0.9, "eu"), (0, 0.2, "eu"), (1, 0.4, "us"), (0, 0.6, "us")],
    ...                            ["label", "score", "region"])
    >>> ses.evaluate(df).get().auc
    0.75
    >>> ses.evaluate(df, by="region").get().by_group("accuracy")
    {'eu': 1.0, 'us': 0.0}
    >>> spark.stop()
    """
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise ImportError("streameval.spark needs pyspark: pip install 'streameval[spark]'") from None
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
        raise ValueError(f"depth must be an integer >= 1, got {depth!r}")
    if isinstance(score, str):
        score_key: str | tuple[str, ...] = score
    elif isinstance(score, Sequence) and score and all(isinstance(c, str) for c in score):
        score_key = tuple(score)
    else:
        raise TypeError(f"score must be a column name or a list of them, got {score!r}")
    label = None if kind == "scores" else label
    if kind != "scores" and not isinstance(label, str):
        raise TypeError(f"label must be a column name for kind={kind!r}, got {label!r}")
    by_columns = (by,) if isinstance(by, str) else tuple(by or ())
    cols_needed = [label, *([score_key] if isinstance(score_key, str) else score_key), weight, *by_columns]
    present = set(df.columns)
    missing = [c for c in cols_needed if c is not None and c not in present]
    if missing:
        raise ValueError(f"column {missing[0]!r} is not in the DataFrame (columns: {sorted(present)})")
    score_type = _score_type(df.schema, score_key)
    if kind == "paired":
        if score_type != "columns" or len(score_key) != 2:
            raise ValueError(f"kind='paired' needs score=[column of model A, column of model B], got {score!r}")
    elif score_type != "plain" and kind != "multiclass":
        raise ValueError(f"score={score!r} holds several values a row: that is for kind='multiclass', not {kind!r}")
    options = _options(kind, dict(accumulator_options), score_type, df.schema, score_key)
    make: Callable[[], Any] = functools.partial(KINDS[kind], **options)
    try:
        make()  # bad options fail here, on the driver, before any job runs
    except TypeError as exc:
        raise TypeError(f"{KINDS[kind].__name__} options {sorted(options)}: {exc}") from None
    cols = _Columns(kind, label, score_key, weight, by_columns, score_type)
    empty = Segmented(make, max_segments=max_segments) if by_columns else make()  # a bad max_segments: refused here
    states = df.select(*cols.names).mapInArrow(
        functools.partial(_count_partition, cols=cols, make=make, max_segments=max_segments), "state binary"
    )
    try:
        # Spark Connect has no RDDs, and a few states are cheaper to merge on the driver than through a shuffle
        if _is_connect(df) or states.rdd.getNumPartitions() <= DRIVER_MERGES_UP_TO:
            parts = [from_bytes(bytes(row[0])) for row in states.collect()]
            return type(empty).merge_all(parts) if parts else empty
        blob = states.rdd.map(lambda row: bytes(row[0])).treeReduce(_merge_states, depth=depth)
    except ValueError as exc:
        if "empty RDD" not in str(exc):
            raise
        return empty  # a DataFrame with no partitions
    except Exception as exc:  # a worker refused a row: Spark wraps the worker's error in its own
        message = _spark_message(exc)
        if message is not None:
            raise ValueError(message) from None
        module = _missing_module(exc)
        if module is not None:
            raise ImportError(
                f"the Spark workers' Python cannot import {module!r}: install streameval[spark] where the workers "
                "run, or point PYSPARK_PYTHON (before the session starts) at an interpreter that has it"
            ) from None
        raise
    return from_bytes(blob)
