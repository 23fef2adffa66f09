"""Evaluate data that outgrows one machine: one accumulator per partition, merged as a tree.

Only accumulators (a few hundred KiB at most) travel between workers and to
the client; rows never leave the workers that hold them. The same call runs
on a laptop's threads, a ``distributed.LocalCluster`` or a multi-machine
cluster: connect a ``distributed.Client`` to the cluster's scheduler first
(``Client("tcp://scheduler:8786")``) and call ``evaluate`` as usual.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ._validation import in_another_order
from .binary import BinaryAccumulator
from .segmented import DEFAULT_MAX_SEGMENTS, Segmented

__all__ = ["evaluate"]


def _factory(accumulator: Any) -> Callable[[], Any]:
    if accumulator is None:
        return BinaryAccumulator
    if isinstance(accumulator, type) or (callable(accumulator) and not hasattr(accumulator, "merge")):
        return accumulator
    if hasattr(accumulator, "merge") and hasattr(accumulator, "get"):
        prototype = copy.deepcopy(accumulator)
        return lambda: copy.deepcopy(prototype)
    raise TypeError(f"accumulator must be an accumulator, its class or a factory, got {accumulator!r}")


def _frame_partition(
    part: Any,
    make: Callable[[], Any],
    kind: str | None,
    label: str | None,
    score: Any,
    weight: str | None,
    by: list[str] | None,
    number: int = 0,
    max_segments: int = DEFAULT_MAX_SEGMENTS,
) -> Any:
    """Partition ``number`` of a frame counted; a refusal names the partition and the row (its label in the frame's
    index, and its values), where the accumulator's message names its position within the partition."""
    try:
        weights = None if weight is None else part[weight].to_numpy()  # checked by the accumulator, named w
        if label is None:  # scores alone
            columns = [part[score].to_numpy()]
            _check_not_text_of_numbers(score, columns[0])
        elif isinstance(score, str):
            columns = [part[label].to_numpy(), part[score].to_numpy()]
            if kind == "multiclass":
                _check_not_text_of_rows(score, columns[1])
            else:
                _check_not_text_of_numbers(score, columns[1])
        elif kind == "paired":  # the two models' columns
            columns = [part[label].to_numpy(), part[score[0]].to_numpy(), part[score[1]].to_numpy()]
        else:  # one column per class
            columns = [part[label].to_numpy(), part[list(score)].to_numpy()]
        if by is None:
            acc = make()
            acc.update_many(*columns, weights)  # the weights by position, as every kind takes them
            return acc
        seg = Segmented(make, max_segments=max_segments)
        keys = part[by[0]] if len(by) == 1 else list(part[by].itertuples(index=False, name=None))
        seg.update_many(keys, *columns, w=weights)
        return seg
    except (TypeError, ValueError) as exc:
        raise type(exc)(_located(str(exc), part, number, [label, score, weight, by])) from None


def _located(message: str, part: Any, number: int, names: list[Any]) -> str:
    """A refusal's message with its row named as the frame names it: a position within the partition means
    nothing to whoever reads the frame (a segment's own count from 0 is left as it is)."""
    found = re.search(r" at index (\d+)", message)
    if found is None or "counting its events from 0" in message or int(found.group(1)) >= len(part):
        return f"partition {number}: {message}"
    row = int(found.group(1))
    columns = [c for name in names if name is not None for c in ([name] if isinstance(name, str) else name)]
    values = ", ".join(f"{c}={_plain(part[c].iloc[row])!r}" for c in dict.fromkeys(columns))
    message = message[: found.start()] + message[found.end() :]
    return f"partition {number}, the row labelled {_plain(part.index[row])!r} ({values}): {message}"


def _plain(value: Any) -> Any:
    """A numpy scalar as Python's (shown as 15, not np.int64(15))."""
    return value.item() if isinstance(value, np.generic) else value


def _check_columns_in_class_order(columns: list[Any], classes: list[Any]) -> None:
    """Refuse score columns named as the classes but in another order (:func:`in_another_order`)."""
    if in_another_order(columns, classes):
        raise ValueError(
            f"score= names the classes' columns {columns!r} in another order than the classes {classes!r}: "
            "a column is read as the class at its place; give them in the classes' order"
        )


def _check_not_text_of_rows(name: str, values: np.ndarray) -> None:
    """Refuse a column of class scores that Dask turned into text (its ``dataframe.convert-string``): read as
    predicted classes, each row's text would be a class."""
    first = values[0] if values.size else None
    if isinstance(first, str) and first[:1] in "{[" and first[-1:] in "}]":
        raise ValueError(
            f"score column {name!r} holds text such as {first[:60]!r}: Dask turned its class scores into text "
            "(set dask.config.set({'dataframe.convert-string': False}) before making the frame, or give one "
            "column per class)"
        )


def _check_not_text_of_numbers(name: str, values: np.ndarray) -> None:
    """Refuse a score column whose numbers are text, naming Dask's ``dataframe.convert-string`` as the likely
    cause: it turns a pandas column of Python objects (decimals, say) into their text."""
    first = values[0] if values.size else None
    if isinstance(first, str):
        try:
            float(first)
        except ValueError:
            return  # not a number's text: the accumulator's own error names it
        raise ValueError(
            f"score column {name!r} holds text such as {first[:60]!r}, not numbers: Dask turns a column of Python "
            "objects (decimals, say) into text (set dask.config.set({'dataframe.convert-string': False}) before "
            "making the frame, or make the column float)"
        )


def _bag_partition(items: Any, make: Callable[[], Any]) -> Any:
    rows = list(items)
    acc = make()
    if rows:
        cols = list(zip(*rows, strict=True))
        acc.update_many(*cols)
    return acc


def _combine(parts: list[Any]) -> Any:
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    return type(parts[0]).merge_all(parts)


def evaluate(
    data: Any,
    label: str | None = None,
    score: Any = None,
    weight: str | None = None,
    by: str | list[str] | None = None,
    accumulator: Any = None,
    split_every: int = 8,
    max_segments: int = DEFAULT_MAX_SEGMENTS,
) -> Any:
    """The merged accumulator of a Dask DataFrame (or a Dask Bag of ``(y, score[, w])`` tuples).

    Parameters
    ----------
    data : dask.dataframe.DataFrame or dask.bag.Bag
    label, score : str
        Column names (DataFrame only): true labels (true values for a
        ``RegressionAccumulator``; none for a ``ScoreAccumulator``) and
        scores. ``score`` may be a list of columns: one per class for a
        ``MulticlassAccumulator``, the two models' for a ``PairedAccumulator``.
    weight : str, optional
        Weight column.
    by : str or list of str, optional
        Segment column(s): the result is a :class:`streameval.Segmented`
        accumulator (several columns make crossed segments, tuples).
    accumulator : accumulator, class or factory, optional
        What to evaluate with (default ``BinaryAccumulator``); an accumulator
        given here is used as an empty prototype of its configuration.
    split_every : int, default 8
        Fan-in of the merge tree.
    max_segments : int, default 10,000
        With ``by``: the most segments (each holds an accumulator), as
        :class:`streameval.Segmented` takes it; a partition or a merge that
        would make more is refused.

    Examples
    --------
    >>> import dask, pandas as pd, dask.dataframe as dd
    >>> import streameval as se, streameval.dask as sed
    >>> frame = dd.from_pandas(pd.DataFrame({"y": [1, 0, 1, 0], "p": [0.9, 0.2, 0.4, 0.6]}), npartitions=2)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     acc = sed.evaluate(frame, label="y", score="p")
    >>> acc.get().auc
    0.75
    """
    import dask
    import dask.bag as db

    make = _factory(accumulator)
    if isinstance(data, db.Bag):
        if label is not None or score is not None or by is not None:
            raise ValueError("a Bag holds (y, score[, w]) tuples: label, score and by are for DataFrames")
        parts = [dask.delayed(_bag_partition)(p, make) for p in data.to_delayed()]
    else:
        prototype = make()
        kind = getattr(prototype, "kind", None)  # the protocol's tag of the kind: which columns its update_many takes
        if score is None:
            raise ValueError("score= names the DataFrame's score column(s)")
        if kind == "scores":
            if label is not None:
                raise ValueError(f"label= is not read by a ScoreAccumulator (scores alone), got {label!r}")
            if not isinstance(score, str):
                raise ValueError(f"score= names one column for a ScoreAccumulator, got {score!r}")
        elif label is None:
            raise ValueError("label= names the DataFrame's label column (or true values, for regression)")
        if kind == "paired" and (isinstance(score, str) or len(list(score)) != 2):
            raise ValueError(f"score= names the two models' columns for a PairedAccumulator, got {score!r}")
        if kind == "multiclass" and not isinstance(score, str):
            _check_columns_in_class_order(list(score), list(getattr(prototype, "classes", ()) or ()))
        columns = set(data.columns)
        by = [by] if isinstance(by, str) else (None if by is None else list(by))
        wanted = [label, weight, *(by or [])] + ([score] if isinstance(score, str) else list(score))
        missing = [c for c in wanted if c is not None and c not in columns]
        if missing:
            raise ValueError(f"column {missing[0]!r} is not in the frame (columns: {sorted(map(str, columns))})")
        parts = [
            dask.delayed(_frame_partition)(p, make, kind, label, score, weight, by, number, max_segments)
            for number, p in enumerate(data.to_delayed())
        ]
    if split_every < 2:
        raise ValueError(f"split_every must be at least 2, got {split_every!r}")
    empty = Segmented(make, max_segments=max_segments) if by else make()  # a bad max_segments: refused here
    while len(parts) > 1:  # a tree of merges: nothing but accumulators moves
        parts = [dask.delayed(_combine)(parts[i : i + split_every]) for i in range(0, len(parts), split_every)]
    if not parts:
        return empty
    (result,) = dask.compute(parts[0])
    return empty if result is None else result
