"""The ``streameval`` command: evaluate CSV or JSON Lines files, merge and report saved states.

    streameval eval FILE... [-] [--kind binary|multiclass|regression|scores|paired] [--label COL] [--score COL[,COL...]]
                    [--classes C,...] [--weight COL] [--time COL] [--threshold T] [--bins SPEC] [--exact-up-to N]
                    [--by COL[,COL...]] [--window N]
                    [--json] [--save STATE] [--save-segments STATE] [--skip-bad]
    streameval merge STATE... -o OUT
    streameval report STATE [--json]
    streameval drift REF CUR [--json]

Files are read as a stream, a chunk of rows at a time, so memory stays flat
whatever their length; ``.gz`` files (or gzip data on standard input) are
decompressed on the fly.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gzip
import io
import json
import math
import re
import sys
import time
import traceback
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from . import io as state_io
from ._validation import check_real, check_time, column_as_numpy, datetime64_seconds, in_another_order
from .averaging import macro, text_columns
from .binary import DEFAULT_EXACT_UP_TO, BinaryAccumulator
from .bins import Bins
from .drift import drift, drift_by_segment
from .join import LabelJoin
from .multiclass import MulticlassAccumulator
from .paired import PairedAccumulator
from .regression import RegressionAccumulator
from .scores import ScoreAccumulator
from .segmented import DEFAULT_MAX_SEGMENTS, Segmented
from .windows import Sliding

CHUNK = 65536
EXIT_BAD_INPUT = 2


class BadRowError(Exception):
    """A row that cannot be evaluated: where it is and what is wrong."""

    def __init__(self, source: str, line: int, message: str) -> None:
        super().__init__(f"{source}:{line}: {message}")
        self.source, self.line, self.message = source, line, message


class UnreadableError(BadRowError):
    """A file that cannot be read as a whole (not Parquet, a column it lacks): no row of it can be skipped."""

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.message}" if self.line > 0 else f"{self.source}: {self.message}"


class UncountableError(Exception):
    """Rows each good alone whose totals the accumulator refuses (weights or sums past the largest float)."""

    def __init__(self, source: str, first: int, last: int, message: str) -> None:
        super().__init__(f"{source}:{first}-{last}: {message}")


def _skipped_or_bad(skip: Problem | None, source: str, line: int, message: str) -> None:
    """A row that is no row of the file's shape (fields of another number, a line that is not a JSON object, a
    field it lacks): BadRowError, or with ``skip`` counted as a bad ``row`` and left out."""
    if skip is None:
        raise BadRowError(source, line, message)
    skip.add("row", f"{source}:{line}: {message}")


# -- reading --------------------------------------------------------------------
class _Counted(io.RawIOBase):
    """A binary file that counts the bytes read from it (the progress bar's position)."""

    def __init__(self, fh: Any) -> None:
        super().__init__()
        self.fh = fh
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self.fh.readinto(buffer)
        self.count += n or 0
        return int(n or 0)

    def close(self) -> None:
        self.fh.close()
        super().close()


def _binary(path: str) -> tuple[_Counted, Any]:
    """A file's bytes, counted as read, and its content (gzip decompressed on the fly)."""
    counted = _Counted(Path(path).open("rb"))  # noqa: SIM115 - closed by whoever reads the content
    buffered = io.BufferedReader(counted, buffer_size=1 << 16)
    if buffered.peek(2)[:2] == b"\x1f\x8b":
        return counted, gzip.GzipFile(fileobj=buffered)
    return counted, buffered


def _open(path: str) -> tuple[str, TextIO, _Counted | None]:
    if path == "-":
        raw = sys.stdin.buffer
        head = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
        stream = gzip.GzipFile(fileobj=raw) if head == b"\x1f\x8b" else raw
        return "<stdin>", io.TextIOWrapper(stream, encoding="utf-8", newline=""), None
    counted, content = _binary(path)
    return path, io.TextIOWrapper(content, encoding="utf-8", newline=""), counted


def _is_jsonl(name: str, forced: str | None) -> bool:
    if forced:
        return forced == "jsonl"
    base = name[:-3] if name.endswith(".gz") else name
    return base.endswith((".jsonl", ".ndjson", ".json"))


def _label_text(v: Any) -> str:
    if v is None:  # a JSON null, a Parquet null: missing, as an empty CSV field is
        return ""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip()


@dataclass
class Rows:
    """One chunk of rows: the raw text of each needed column, and line numbers."""

    source: str
    lines: Any = field(default_factory=list)  # line (or row) numbers: a list, or a numpy array
    cols: dict[str, Any] = field(default_factory=dict)  # lists of values, or pyarrow arrays
    originals: dict[str, Any] = field(default_factory=dict)  # columns as read, where cols holds them converted
    position: int | None = None  # bytes of the file read when the chunk was (None: not known)


def _has_pyarrow() -> bool:
    try:
        import pyarrow.csv
        import pyarrow.json  # noqa: F401
    except ImportError:
        return False
    return True


def _is_parquet(path: str, fmt: str | None) -> bool:
    if fmt:
        return fmt == "parquet"
    if path == "-":
        return False
    if path.endswith((".parquet", ".pq")):
        return True
    with Path(path).open("rb") as fh:
        return fh.read(4) == b"PAR1"


def _parquet_chunks(path: str, columns: list[str], numeric: set[str]) -> Iterator[Rows]:
    """Row groups read a batch at a time (pyarrow); a row's place is its row number in the file, from 1.

    Columns stay pyarrow arrays: numbers as float64 (nulls as NaN), labels and segments as text, as the
    other readers give them (a bool as 1 or 0, a whole float as an integer).
    """
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise SystemExit("streameval: reading Parquet needs pyarrow: pip install 'streameval[cli]'") from None
    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises its own error types for a damaged file
        raise UnreadableError(path, 0, f"not a readable Parquet file: {exc}") from None
    names = pf.schema_arrow.names
    missing = [c for c in columns if c not in names]
    if missing:
        raise UnreadableError(path, 0, f"missing column {missing[0]!r} (the file has {names})")
    twice = [c for c in columns if names.count(c) > 1]
    if twice:  # which of them would be read is anybody's guess
        raise UnreadableError(path, 0, f"column {twice[0]!r} is named {names.count(twice[0])} times in the file")
    start = 1
    size, total = Path(path).stat().st_size, max(pf.metadata.num_rows, 1)
    for batch in pf.iter_batches(batch_size=1 << 20, columns=columns):
        n = batch.num_rows
        rows = Rows(path, lines=np.arange(start, start + n))  # reported as file:row
        rows.cols = {c: _arrow_column(batch.column(c), c in numeric) for c in columns}
        rows.originals = {c: batch.column(c) for c in columns}
        start += n
        rows.position = size * (start - 1) // total  # in proportion to the rows read
        yield rows


def _arrow_column(col: Any, numeric: bool) -> Any:
    """A pyarrow column (Parquet, JSON Lines) as the checks read it: float64 numbers, or text; values as Python
    objects otherwise."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.types as pt

    kind = col.type
    try:
        if numeric and (pt.is_integer(kind) or pt.is_floating(kind)) and not col.null_count:
            return pc.cast(col, pa.float64())
        if not numeric and not col.null_count:
            if pt.is_string(kind) or pt.is_large_string(kind):
                return col
            if pt.is_boolean(kind):
                return pc.cast(pc.cast(col, pa.int8()), pa.string())
            if pt.is_integer(kind):
                return pc.cast(col, pa.string())
            if pt.is_floating(kind) and pc.all(pc.equal(pc.floor(col), col)).as_py():
                return pc.cast(pc.cast(col, pa.int64()), pa.string())
    except pa.ArrowInvalid:
        pass
    if pt.is_map(kind):  # a mapping a row (class scores), as the library reads such a column
        return list(column_as_numpy(col))
    return col.to_pylist()  # anything else (nulls, dates, ...): checked value by value


class IrregularInputError(Exception):
    """The fast CSV reader met something only the exact reader explains (a row of another width, bad text...)."""


class LabelsAsTextError(IrregularInputError):
    """A label column read as whole numbers holds other text (``1.0``, ``True``): the fast reader reads the files
    again with the labels as text."""


def _arrow_csv_chunks(
    path: str,
    fh: Any,
    columns: list[str],
    numeric: set[str],
    integers: frozenset[str] = frozenset(),
    times: frozenset[str] = frozenset(),
) -> Iterator[Rows]:
    """A CSV file parsed by pyarrow in blocks (:func:`_csv_batches`), its needed columns as strings.

    Rows map one to one to the records after the header, so a row's place is
    its record number. Anything irregular (a row of another width, a blank
    line, text that is not UTF-8, a missing column) raises :class:`IrregularInputError`:
    the caller reads the files again with the exact reader, which names the
    line or skips blank ones. Columns in ``integers`` (labels whose texts are
    whole numbers) are parsed as integers, faster than as text; columns in
    ``times`` stay text (numbers or instants: :func:`_times` reads them).
    """
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    with fh:
        try:  # a row of another width fails the parse (no Python handler: pyarrow's threads call no Python code)
            reader = _csv_batches(
                fh,
                parse_options=pa_csv.ParseOptions(ignore_empty_lines=False),
                convert_options=pa_csv.ConvertOptions(
                    include_columns=columns,
                    column_types={
                        c: pa.string()
                        if c in times
                        else pa.float64()
                        if c in numeric
                        else pa.int64()
                        if c in integers
                        else pa.string()
                        for c in columns
                    },
                    strings_can_be_null=False,
                ),
            )
            line = 2  # the first record after the header
            for batch in reader:
                n = batch.num_rows
                if not numeric or any(batch.column(c).null_count for c in numeric):  # an empty number, a blank line
                    raise IrregularInputError(path)
                rows = Rows(path, lines=np.arange(line, line + n))
                rows.cols = {c: batch.column(c) for c in columns}
                line += n
                yield rows
        except (pa.ArrowException, UnicodeDecodeError, EOFError, gzip.BadGzipFile, OSError) as exc:
            if integers and isinstance(exc, pa.ArrowInvalid) and "conversion error to int64" in str(exc):
                raise LabelsAsTextError(path) from exc  # the labels' column is the one read as whole numbers
            raise IrregularInputError(path) from exc


CSV_BLOCK = 8 << 20  # bytes of CSV parsed at once by pyarrow's multithreaded reader


def _csv_batches(fh: Any, parse_options: Any, convert_options: Any) -> Iterator[Any]:
    """The record batches of a CSV stream, its records after the header in order.

    Blocks of ``CSV_BLOCK`` bytes, cut at the end of a line, are parsed by pyarrow's reader on every core (its
    streaming reader parses on one). A line break inside a quoted field is no end of a line, but pyarrow
    takes none (``newlines_in_values`` is off): such a field fails to parse wherever the block is cut, and the
    exact reader reads the file.
    """
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    names = _read_csv_block(fh.readline(), parse_options=parse_options).column_names
    if any(names.count(c) > 1 for c in convert_options.include_columns):  # the exact reader names it
        raise pa.ArrowInvalid("a column read is named twice in the header")
    read_options = pa_csv.ReadOptions(column_names=names, use_threads=True)
    rest = b""
    while True:
        data = fh.read(CSV_BLOCK)
        block = rest + data
        cut = block.rfind(b"\n") + 1 if data else len(block)  # the last block: whatever is left
        block, rest = block[:cut], block[cut:]
        if block:
            yield from _read_csv_block(
                block, read_options=read_options, parse_options=parse_options, convert_options=convert_options
            ).to_batches()
        if not data:
            return


def _read_csv_block(data: bytes, **options: Any) -> Any:
    """``pyarrow.csv.read_csv`` of bytes, returned once pyarrow's threads have let go of the file object it read.

    The threaded reader can drop its last hold on that object in one of its own threads, a moment after the call
    returned or failed. Were the process ending by then, that thread would need the interpreter to free it, and
    pyarrow aborts the process ("terminate called without an active exception"). Four copies of the command run
    side by side on a 4-line file that sent the reading to the exact reader aborted 7 times in 1,200 runs.
    """
    import pyarrow.csv as pa_csv

    source = io.BytesIO(data)
    held = weakref.ref(source)
    try:
        return pa_csv.read_csv(source, **options)
    finally:
        del source
        _wait_until_released(held)


def _wait_until_released(held: weakref.ref[Any], timeout: float = 10.0) -> None:
    """Wait (at most ``timeout`` seconds) until nothing holds the object ``held`` refers to: a file object given
    to a pyarrow reader, held by its threads until they are done with it."""
    deadline = time.monotonic() + timeout
    while held() is not None and time.monotonic() < deadline:
        time.sleep(0.0002)


def _let_go_of_frames(error: BaseException | None) -> None:
    """Clear the variables of the finished frames in the tracebacks of ``error`` and the errors it came from (a
    file object's method that raised holds that object: 10 s waited for a truncated gzip file's reader)."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        traceback.clear_frames(error.__traceback__)
        error = error.__cause__ or error.__context__


class _BlankLineWatch:
    """A binary file that notes whether a blank (or whitespace-only) line passed through it."""

    BLANK = re.compile(rb"\n[ \t\r\f\v]*\n")

    def __init__(self, fh: Any) -> None:
        self.fh = fh
        self.blank = False
        self._tail = b"\n"  # from the last newline read, while what follows it is only whitespace

    def read(self, size: int = -1) -> bytes:
        data = self.fh.read(size)
        if not self.blank and data:
            text = self._tail + data
            self.blank = self.BLANK.search(text) is not None
            rest = text[text.rfind(b"\n") :] if b"\n" in text else text
            self._tail = rest if not rest.strip() else b""
        return data

    def close(self) -> None:
        self.fh.close()

    @property
    def closed(self) -> bool:
        return bool(self.fh.closed)


def _arrow_jsonl_chunks(path: str, fh: Any, columns: list[str], numeric: set[str]) -> Iterator[Rows]:
    """A JSON Lines file parsed by pyarrow's streaming reader; a row's place is its line.

    Anything irregular (a blank line, a missing or null field, a value of another type than a number or text,
    text that is not JSON) raises :class:`IrregularInputError`, and the exact reader takes over.
    """
    import pyarrow as pa
    import pyarrow.json as pa_json
    import pyarrow.types as pt

    with fh:
        watch = _BlankLineWatch(fh)
        held = weakref.ref(watch)
        try:
            reader = pa_json.open_json(watch, read_options=pa_json.ReadOptions(block_size=1 << 20))
            line = 1
            for batch in reader:
                names = batch.schema.names
                if watch.blank or any(c not in names or batch.column(c).null_count for c in columns):
                    raise IrregularInputError(path)
                cols = {}
                for c in columns:
                    kind = batch.column(c).type
                    if not (pt.is_boolean(kind) or pt.is_integer(kind) or pt.is_floating(kind) or pt.is_string(kind)):
                        raise IrregularInputError(path)
                    cols[c] = _arrow_column(batch.column(c), c in numeric)
                n = batch.num_rows
                rows = Rows(path, lines=np.arange(line, line + n))
                rows.cols = cols
                rows.originals = {c: batch.column(c) for c in columns}
                line += n
                yield rows
            if watch.blank:
                raise IrregularInputError(path)
        except (pa.ArrowException, UnicodeDecodeError, EOFError, gzip.BadGzipFile, OSError) as exc:
            raise IrregularInputError(path) from exc
        finally:  # the streaming reader's threads let go of the file object before the file is closed
            reader = None
            del watch
            _let_go_of_frames(sys.exc_info()[1])  # a failed read of the file: its frames hold the file object
            _wait_until_released(held)


def _chunks(
    path: str,
    columns: list[str],
    fmt: str | None,
    fast: bool = False,
    numeric: set[str] | None = None,
    name: str | None = None,
    integers: frozenset[str] = frozenset(),
    times: frozenset[str] = frozenset(),
    skip: Problem | None = None,
) -> Iterator[Rows]:
    """The rows of a file a chunk at a time, each with ``position``: the bytes of the file read so far.

    ``name`` is the file's name in messages (``<stdin>`` for standard input saved to a file first). With
    ``skip``, a row of another shape than the file's is counted there and left out (:func:`_skipped_or_bad`).
    """
    shown = name or path
    try:
        if _is_parquet(path, fmt):
            for rows in _parquet_chunks(path, columns, numeric or set()):
                rows.source = shown
                yield rows
            return
        if fast and path != "-" and _has_pyarrow():
            counted, content = _binary(path)
            if _is_jsonl(path, fmt):
                chunks = _arrow_jsonl_chunks(path, content, columns, numeric or set())
            else:
                chunks = _arrow_csv_chunks(path, content, columns, numeric or set(), integers, times)
            for rows in chunks:
                rows.position, rows.source = counted.count, shown
                yield rows
            return
    except BadRowError as bad:
        raise type(bad)(shown, bad.line, bad.message) from None
    opened, fh, counter = _open(path)
    shown = name or opened
    with fh:
        if _is_jsonl(path, fmt):
            chunks = _jsonl_chunks(shown, fh, columns, skip)
        else:
            chunks = _csv_chunks(shown, fh, columns, skip)
        for rows in chunks:
            rows.position = None if counter is None else counter.count
            yield rows


def _csv_chunks(name: str, fh: TextIO, columns: list[str], skip: Problem | None = None) -> Iterator[Rows]:
    reader = csv.reader(fh)
    try:
        header = next(reader)
    except StopIteration:
        return
    header = [h.strip() for h in header]
    missing = [c for c in columns if c not in header]
    if missing:
        raise UnreadableError(name, 1, f"missing column {missing[0]!r} (the header has {header})")
    twice = [c for c in columns if header.count(c) > 1]
    if twice:  # which of them would be read is anybody's guess
        raise UnreadableError(name, 1, f"column {twice[0]!r} is named {header.count(twice[0])} times in the header")
    idx = [header.index(c) for c in columns]
    width = len(header)
    rows = Rows(name, cols={c: [] for c in columns})
    out = [rows.cols[c] for c in columns]
    line = 1
    for record in reader:
        line += 1
        if not record:
            continue
        if len(record) != width:
            _skipped_or_bad(skip, name, line, f"expected {width} fields, got {len(record)}")
            continue
        rows.lines.append(line)
        for target, i in zip(out, idx, strict=True):
            target.append(record[i])
        if len(rows.lines) >= CHUNK:
            yield rows
            rows = Rows(name, cols={c: [] for c in columns})
            out = [rows.cols[c] for c in columns]
    if rows.lines:
        yield rows


def _jsonl_chunks(name: str, fh: TextIO, columns: list[str], skip: Problem | None = None) -> Iterator[Rows]:
    rows = Rows(name, cols={c: [] for c in columns})
    for line, text in enumerate(fh, start=1):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except ValueError as exc:
            _skipped_or_bad(skip, name, line, f"not JSON: {exc}")
            continue
        if not isinstance(obj, dict):
            _skipped_or_bad(skip, name, line, "a line must hold a JSON object")
            continue
        lacking = [c for c in columns if c not in obj]
        if lacking:
            _skipped_or_bad(skip, name, line, f"missing field {lacking[0]!r}")
            continue
        for c in columns:
            rows.cols[c].append(obj[c])
        rows.lines.append(line)
        if len(rows.lines) >= CHUNK:
            yield rows
            rows = Rows(name, cols={c: [] for c in columns})
    if rows.lines:
        yield rows


def _is_integer(column: Any) -> bool:
    import pyarrow.types as pt

    return bool(pt.is_integer(column.type))


def _is_arrow(values: Any) -> bool:
    return type(values).__module__.startswith("pyarrow")


def _texts(rows: Rows, column: str) -> np.ndarray:
    """A column's values as stripped text (labels, segments); a missing value (null) as the empty text, as an empty
    CSV field reads, whatever the format."""
    values = rows.cols[column]
    if _is_arrow(values):
        import pyarrow as pa
        import pyarrow.compute as pc

        if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
            values = pc.cast(values, pa.string())  # a column read as numbers too (a regression's targets)
        text = pc.fill_null(pc.utf8_trim_whitespace(values), "")
        return np.asarray(text.to_numpy(zero_copy_only=False), dtype=object)
    return np.array([_label_text(v) for v in values])


def _raw(rows: Rows, column: str, i: int) -> Any:
    """The value of row ``i`` of a column as read (for messages)."""
    v = rows.originals.get(column, rows.cols[column])[i]
    return v.as_py() if hasattr(v, "as_py") else v


def _numbers(rows: Rows, column: str, finite: bool, bad: np.ndarray) -> np.ndarray:
    """Column values as floats; sets ``bad`` where a value is not a usable number."""
    values = rows.cols[column]
    if _is_arrow(values):  # parsed by pyarrow: floats already (an empty or bad one sent the file to the exact reader)
        out = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64)
        ok = np.isfinite(out) if finite else ~np.isnan(out)
        bad |= ~ok
        return out
    try:
        out = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        out = np.empty(len(values))
        for i, v in enumerate(values):
            try:
                out[i] = float(v) if not isinstance(v, bool) else math.nan
            except (TypeError, ValueError):
                out[i] = math.nan
    ok = np.isfinite(out) if finite else ~np.isnan(out)
    bad |= ~ok
    return out


def _times(rows: Rows, column: str, bad: np.ndarray) -> np.ndarray:
    """Event times as floats: numbers, or instants (ISO 8601 text, Parquet timestamps and dates) as seconds since
    1970-01-01 UTC, naive ones as UTC, as the library reads them; sets ``bad`` where a value is neither."""
    values = rows.cols[column]
    if _is_arrow(values):
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.types as pt

        if pt.is_string(values.type) or pt.is_large_string(values.type):  # numbers, or instants all alike
            for kind in (pa.float64(), pa.timestamp("ns", tz="UTC"), pa.timestamp("ns")):
                try:
                    values = pc.cast(values, kind)
                    break
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    continue
        if _is_arrow(values) and (pt.is_timestamp(values.type) or pt.is_date(values.type)):
            instants = np.asarray(values.to_numpy(zero_copy_only=False))
            missing = np.isnat(instants)
            out = np.full(instants.size, math.nan)
            out[~missing] = datetime64_seconds(instants[~missing])
            bad |= missing
            return out
        if _is_arrow(values) and (pt.is_floating(values.type) or pt.is_integer(values.type)):
            return _numbers(rows, column, finite=True, bad=bad)
        values = values.to_pylist()  # instants of several forms: one by one
    out = np.empty(len(values))
    for i, v in enumerate(values):
        out[i] = _time_value(v)
    bad |= ~np.isfinite(out)
    return out


def _time_value(value: Any) -> float:
    """One event time (a number, an instant, or either's text) as a float; NaN for anything else."""
    import datetime

    if isinstance(value, str):
        text = value.strip()
        try:
            return float(text)
        except ValueError:
            try:
                value = datetime.datetime.fromisoformat(text)
            except ValueError:
                return math.nan
    if isinstance(value, bool) or value is None:
        return math.nan
    try:
        return check_time("time", value)
    except (TypeError, ValueError):
        return math.nan


@dataclass
class Problem:
    """The first bad row of each kind, and how many there were."""

    counts: dict[str, int] = field(default_factory=dict)
    first: dict[str, str] = field(default_factory=dict)

    def add(self, kind: str, where: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        self.first.setdefault(kind, where)


def _binary_labels(rows: Rows, args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray]:
    """(is_pos, bad) of a chunk's label column: the positive label, and labels that are neither label."""
    integer_labels = _is_arrow(rows.cols[args.label]) and _is_integer(rows.cols[args.label])
    labels = None  # the exact reader's texts, where it made them
    if _is_arrow(rows.cols[args.label]) and not integer_labels:  # text, compared in pyarrow
        import pyarrow.compute as pc

        column = rows.cols[args.label]
        is_pos = np.asarray(pc.equal(column, args.pos_label).to_numpy(zero_copy_only=False), dtype=np.bool_)
        is_neg = np.asarray(pc.equal(column, args.neg_label).to_numpy(zero_copy_only=False), dtype=np.bool_)
        if not (is_pos | is_neg).all():  # labels with spaces around them count as without
            trimmed = pc.utf8_trim_whitespace(column)
            is_pos = np.asarray(pc.equal(trimmed, args.pos_label).to_numpy(zero_copy_only=False), dtype=np.bool_)
            is_neg = np.asarray(pc.equal(trimmed, args.neg_label).to_numpy(zero_copy_only=False), dtype=np.bool_)
    elif integer_labels:  # whole numbers: a label of another text is the exact reader's to name
        codes = np.asarray(rows.cols[args.label].to_numpy(zero_copy_only=False))
        is_pos, is_neg = codes == int(args.pos_label), codes == int(args.neg_label)
        if not (is_pos | is_neg).all():
            raise IrregularInputError(rows.source)
    else:
        labels = _texts(rows, args.label)
        is_pos, is_neg = labels == args.pos_label, labels == args.neg_label
    unmatched = np.flatnonzero(~(is_pos | is_neg))
    if unmatched.size:  # true, false and whole numbers written as floats read as the values JSON and Parquet hold
        is_pos, is_neg = np.array(is_pos, dtype=np.bool_), np.array(is_neg, dtype=np.bool_)
        texts = labels if labels is not None else _texts(rows, args.label)  # the exact reader's, made above
        words = np.char.lower(np.asarray(texts[unmatched], dtype=str))
        numbers = _floats_or_nan(words)
        is_pos[unmatched] = _reads_as(words, numbers, args.pos_label)
        is_neg[unmatched] = _reads_as(words, numbers, args.neg_label)
    return is_pos, ~(is_pos | is_neg)


def _floats_or_nan(words: np.ndarray) -> np.ndarray:
    """Texts as floats, NaN where one is not a number (at once where all are)."""
    try:
        return words.astype(np.float64)
    except ValueError:
        out = np.full(words.size, np.nan)
        for i, word in enumerate(words.tolist()):
            with contextlib.suppress(ValueError):
                out[i] = float(word)
        return out


def _reads_as(words: np.ndarray, numbers: np.ndarray, label: str) -> np.ndarray:
    """Which labels of other texts (stripped, lower case, and as floats) read as ``label`` by their values, as JSON
    and Parquet values do: ``true`` and ``false`` (as pandas writes a column of bools) as ``1`` and ``0``, and a
    whole number written as a float (``1.0``, as pandas writes labels of a column with a missing value) as it."""
    hit = (words == "true") if label == "1" else (words == "false") if label == "0" else np.zeros(words.size, bool)
    try:
        whole = int(label)
    except ValueError:
        return hit
    if str(whole) != label or abs(whole) >= 2**53:  # not a whole number's own text, or past exact floats
        return hit
    return hit | (numbers == whole)


def _check_chunk(rows: Rows, args: argparse.Namespace, skip: Problem | None) -> tuple[Any, ...]:
    """(values, weights, times, segments, keep) of a chunk, or BadRowError on the first bad row. ``values`` are
    the accumulator's first arguments: is_pos and scores (binary), true and predicted values (regression), or
    scores (scores)."""
    n = len(rows.lines)
    bad_label, bad_score = np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.bool_)
    regression = args.kind == "regression"
    score_problem = "is not a finite number" if regression else "is not a number"

    bad_score_text: Callable[[int], str] = lambda i: f"score {_raw(rows, args.score, i)!r} {score_problem}"  # noqa: E731
    if args.kind == "multiclass":
        values, label_problem, bad_score_text = _multiclass_values(rows, args, bad_label, bad_score)
    elif args.kind == "paired":  # the two models' scores
        values, bad_score_text = _score_columns(rows, args.score_columns, bad_score)
    else:
        values = [_numbers(rows, args.score, finite=regression, bad=bad_score)]
    if args.kind in ("binary", "paired"):
        is_pos, bad_label = _binary_labels(rows, args)
        values.insert(0, is_pos)
        label_problem = f"is neither {args.pos_label!r} nor {args.neg_label!r}"
    elif regression:
        values.insert(0, _numbers(rows, args.label, finite=True, bad=bad_label))
        label_problem = "is not a finite number"
    bad_weight = np.zeros(n, dtype=np.bool_)
    weights = None
    if args.weight:
        weights = _numbers(rows, args.weight, finite=True, bad=bad_weight)
        bad_weight |= weights < 0
    bad_time = np.zeros(n, dtype=np.bool_)
    times = _times(rows, args.time, bad=bad_time) if args.time else None
    segments = None
    if args.by:  # one column: its values as text; several: a tuple of them per row (crossed segments)
        parts = [_texts(rows, c).tolist() for c in args.by]
        segments = np.empty(n, dtype=object)
        segments[:] = parts[0] if len(parts) == 1 else list(zip(*parts, strict=True))
    checks = [
        ("label", bad_label, lambda i: f"label {_raw(rows, args.label, i)!r} {label_problem}"),
        ("score", bad_score, bad_score_text),
        ("weight", bad_weight, lambda i: f"weight {_raw(rows, args.weight, i)!r} is not a finite number >= 0"),
        ("time", bad_time, lambda i: f"time {_raw(rows, args.time, i)!r} is neither a finite number nor an instant"),
    ]
    return values, weights, times, segments, _first_problems(rows, checks, skip)


def _score_columns(
    rows: Rows, columns: list[str], bad_score: np.ndarray
) -> tuple[list[np.ndarray], Callable[[int], str]]:
    """A chunk's score columns (a paired one's two models', a multiclass one's classes), their bad rows marked in
    ``bad_score``, with the text of a bad row's scores (naming the column)."""
    bad_each = [np.zeros(len(rows.lines), dtype=np.bool_) for _ in columns]
    values = [_numbers(rows, c, finite=False, bad=bad) for c, bad in zip(columns, bad_each, strict=True)]
    for bad in bad_each:
        bad_score |= bad

    def score_problem(i: int) -> str:
        column = next(c for c, bad in zip(columns, bad_each, strict=True) if bad[i])
        return f"score {_raw(rows, column, i)!r} of {column!r} is not a number"

    return values, score_problem


def _multiclass_values(
    rows: Rows, args: argparse.Namespace, bad_label: np.ndarray, bad_score: np.ndarray
) -> tuple[list[Any], str, Callable[[int], str]]:
    """A multiclass chunk's true classes and its predicted classes (one score column) or class scores (one
    column per class), with what is wrong with a bad label and the text of a bad row's scores."""
    labels = _texts(rows, args.label)
    columns, classes = args.score_columns, args.classes
    column = columns[0]
    if len(columns) == 1 and (classes is not None or _holds_rows(rows.cols[column])):
        return _score_rows(rows, args, labels, bad_label, bad_score)
    if classes is None:  # predicted classes: the classes are learnt from the stream, and any text but none is one
        bad_label |= labels == ""
        if args.score_rows.get("kind") == "rows":
            bad_score |= True  # the column held class scores before: a class alone cannot follow
            return (
                [labels, _texts(rows, column)],
                _MISSING_CLASS,
                lambda i: (
                    f"score {_raw(rows, column, i)!r} is not a mapping class -> score, as the rows before it were"
                ),
            )
        args.score_rows["kind"] = "classes"
        predicted = _texts(rows, column)
        bad_score |= predicted == ""
        return [labels, predicted], _MISSING_CLASS, lambda i: f"score {_raw(rows, column, i)!r} is not a class"
    values, score_problem = _score_columns(rows, columns, bad_score)
    bad_label |= ~np.isin(labels, np.array(classes, dtype=object))
    return [labels, np.column_stack(values)], f"is not one of the classes {classes}", score_problem


_MISSING_CLASS = "is missing: a class must be named"  # an empty or null label of a multiclass file


def _holds_rows(values: Any) -> bool:
    """Whether a column holds class scores a row (mappings class -> score, or sequences), not class names."""
    if _is_arrow(values):
        return False  # text: the readers give mappings and lists as Python values
    return any(isinstance(v, (dict, list, tuple)) for v in values)


def _score_rows(
    rows: Rows, args: argparse.Namespace, labels: np.ndarray, bad_label: np.ndarray, bad_score: np.ndarray
) -> tuple[list[Any], str, Callable[[int], str]]:
    """A multiclass chunk's class scores held in one column, a row's in one value: a mapping class -> score (the
    classes learnt from the stream, a class's name as text), or with ``--classes`` a sequence of their scores in
    that order. A row of anything else is a bad score."""
    column, classes = args.score_columns[0], args.classes
    values = rows.cols[column]
    if _is_arrow(values):
        values = values.to_pylist()
    n = len(values)
    if classes is not None:  # sequences of the classes' scores, in order
        matrix = np.full((n, len(classes)), math.nan)
        for i, v in enumerate(values):
            if isinstance(v, (list, tuple)) and len(v) == len(classes):
                matrix[i] = [_real_or_nan(x) for x in v]
        bad_score |= np.isnan(matrix).any(axis=1)
        bad_label |= ~np.isin(labels, np.array(classes, dtype=object))
        return (
            [labels, matrix],
            f"is not one of the classes {classes}",
            lambda i: (
                f"score {_raw(rows, column, i)!r} is not a list of {len(classes)} numbers, the scores of {classes}"
            ),
        )
    bad_label |= labels == ""
    if args.score_rows.get("kind") == "classes":
        bad_score |= True  # the column held classes before: class scores cannot follow
        return (
            [labels, np.array(values, dtype=object)],
            _MISSING_CLASS,
            lambda i: f"score {_raw(rows, column, i)!r} is not a class, as the column's rows before were",
        )
    args.score_rows["kind"] = "rows"
    mappings = np.empty(n, dtype=object)
    for i, v in enumerate(values):
        if isinstance(v, dict) and v:
            row = {_label_text(k): _real_or_nan(x) for k, x in v.items()}
            if len(row) == len(v) and "" not in row and not any(math.isnan(x) for x in row.values()):
                mappings[i] = row
                continue
        bad_score[i] = True
        mappings[i] = {}

    def problem(i: int) -> str:
        raw = _raw(rows, column, i)
        if isinstance(values[i], (list, tuple)):  # as read (a Parquet map's row is a mapping here)
            return f"score {raw!r} is a list of scores: name their classes, in order, with --classes"
        return f"score {raw!r} is not a mapping class -> score (a number for each class it names)"

    return [labels, mappings], _MISSING_CLASS, problem


def _real_or_nan(v: Any) -> float:
    """A score within a row of class scores as the library reads one (:func:`check_real`), or NaN (a bad row)."""
    try:
        return check_real("score", v)
    except (TypeError, ValueError):
        return math.nan


def _first_problems(rows: Rows, checks: list[tuple[str, np.ndarray, Any]], skip: Problem | None) -> np.ndarray:
    """The rows to keep: all, or BadRowError on the first bad row; with ``skip``, the good ones (the bad counted)."""
    n = len(rows.lines)
    keep = np.ones(n, dtype=np.bool_)
    if skip is None:
        any_bad = np.zeros(n, dtype=np.bool_)
        for _, mask, _ in checks:
            any_bad |= mask
        if any_bad.any():
            i = int(np.argmax(any_bad))  # the first bad row, with the first problem it has
            describe = next(d for _, mask, d in checks if mask[i])
            raise BadRowError(rows.source, rows.lines[i], describe(i))
        return keep
    for kind, mask, describe in checks:
        if not mask.any():
            continue
        for i in np.flatnonzero(mask).tolist():
            if keep[i]:
                skip.add(kind, f"{rows.source}:{rows.lines[i]}: {describe(i)}")
        keep &= ~mask
    return keep


KIND_OPTIONS: dict[str, dict[str, Any]] = {  # the options of one kind of evaluation, with their defaults
    "binary": {"threshold": 0.5, "pos_label": "1", "neg_label": "0", "exact_up_to": DEFAULT_EXACT_UP_TO},
    "multiclass": {"classes": None, "exact_up_to": DEFAULT_EXACT_UP_TO},
    "regression": {},
    "scores": {"exact_up_to": DEFAULT_EXACT_UP_TO},
    "paired": {"threshold": 0.5, "pos_label": "1", "neg_label": "0"},
}
_UNSET = object()  # an option not given (--exact-up-to none is None)


def _resolved(args: argparse.Namespace) -> argparse.Namespace:
    """The arguments with the kind's defaults filled in; an option of another kind refused by name."""
    kind = getattr(args, "kind", "binary")
    filled: dict[str, Any] = {}
    for name in ("threshold", "pos_label", "neg_label", "exact_up_to", "classes"):
        value = getattr(args, name, _UNSET)
        given = value is not _UNSET and (name == "exact_up_to" or value is not None)  # --exact-up-to none: None
        if given and name not in KIND_OPTIONS[kind]:
            raise SystemExit(f"streameval: --{name.replace('_', '-')} is not an option of --kind {kind}")
        filled[name] = value if given else KIND_OPTIONS[kind].get(name)
    # multiclass: one score column of predicted classes, or one a class (named by --classes, else the column);
    # paired: the two models' score columns
    columns = [c for c in args.score.split(",") if c] if kind in ("multiclass", "paired") else [args.score]
    if kind == "paired" and (len(columns) != 2 or columns[0] == columns[1]):
        raise SystemExit(
            f"streameval: --kind paired needs the two models' score columns, --score A,B; got {args.score!r}"
        )
    if filled["threshold"] is not None and math.isnan(filled["threshold"]):
        raise SystemExit("streameval: --threshold must be a number, got nan")
    if filled["pos_label"] is not None and filled["pos_label"].strip() == (filled["neg_label"] or "").strip():
        raise SystemExit(f"streameval: --pos-label and --neg-label must differ, got {filled['pos_label']!r} for both")
    classes = None
    if kind == "multiclass" and (len(columns) > 1 or filled["classes"]):
        classes = [c for c in filled["classes"].split(",") if c] if filled["classes"] else columns
        twice = [c for c in classes if classes.count(c) > 1]
        if twice:
            named = "--classes" if filled["classes"] else "--score"
            raise SystemExit(f"streameval: {named} names the class {twice[0]!r} {classes.count(twice[0])} times")
        if (len(columns) > 1 and len(classes) != len(columns)) or len(classes) < 2:
            raise SystemExit(
                f"streameval: --classes names {len(classes)} classes for {len(columns)} score columns (several "
                "columns: a score a class; one column with --classes: a list of the classes' scores a row)"
            )
        if in_another_order(columns, classes):
            raise SystemExit(  # by position, each column's scores would go to another class
                f"streameval: --classes {','.join(classes)} names the score columns {args.score} in another "
                "order: give the classes in the columns' order, or leave --classes out"
            )
    return argparse.Namespace(**{**vars(args), "kind": kind, **filled, "score_columns": columns, "classes": classes})


# -- evaluating -----------------------------------------------------------------
def _exact_up_to(text: str) -> int | None:
    if text.strip().lower() == "none":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0 or 'none', got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0 or 'none', got {text!r}")
    return value


def _parse_bins(spec: str) -> Bins:
    parts = spec.split(":")
    try:
        if parts[0] == "range_free" and len(parts) <= 2:
            return Bins.range_free(int(parts[1])) if len(parts) == 2 else Bins.range_free()
        if parts[0] == "uniform" and len(parts) == 4:
            return Bins.uniform(float(parts[1]), float(parts[2]), int(parts[3]))
        if parts[0] == "edges" and len(parts) == 2:
            return Bins.from_edges([float(v) for v in parts[1].split(",")])
    except (TypeError, ValueError) as exc:
        raise SystemExit(f"streameval: --bins {spec!r}: {exc}") from None
    raise SystemExit(f"streameval: --bins must be range_free[:M], uniform:LO:HI:N or edges:E1,E2,..., got {spec!r}")


class Progress:
    """A progress bar on standard error (tqdm): bytes read of the files' total, rows, rows/s and the time left.

    Quiet when standard error is not a terminal, or with ``enabled=False``.
    With standard input (whose size is not known) it counts rows only;
    without tqdm installed, a plain line of rows and rate.
    """

    def __init__(self, enabled: bool, total_bytes: int | None) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.start = time.perf_counter()
        self.rows = 0
        self.last = 0.0
        self.done_bytes = 0  # of the files finished
        self.bar: Any = None
        if self.enabled:
            try:
                from tqdm import tqdm  # type: ignore[import-untyped]
            except ImportError:
                return
            self.bar = tqdm(
                total=total_bytes, unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr, disable=None,
                desc="reading", dynamic_ncols=True, leave=True,
            )  # fmt: skip

    def add(self, n: int, source: str, position: int | None) -> None:
        """``n`` more rows of ``source``, of which ``position`` bytes are read so far."""
        self.rows += n
        now = time.perf_counter()
        rate = self.rows / max(now - self.start, 1e-9)
        if self.bar is not None:
            if position is not None:
                self.bar.update(self.done_bytes + position - self.bar.n)
            self.bar.set_postfix_str(f"{self.rows:,} rows, {rate:,.0f} rows/s", refresh=False)
        elif self.enabled and now - self.last > 0.2:
            sys.stderr.write(f"\r{source}: {self.rows:,} rows, {rate:,.0f} rows/s ")
            sys.stderr.flush()
            self.last = now

    def file_done(self, path: str) -> None:
        """A file read to its end."""
        if path != "-":
            self.done_bytes += Path(path).stat().st_size
            if self.bar is not None:
                self.bar.update(self.done_bytes - self.bar.n)

    def done(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            sys.stderr.write("\n")


def _evaluate(args: argparse.Namespace) -> dict[str, Any]:
    """Every file read fast (pyarrow) or, when that meets anything irregular, all of them exactly.

    Standard input is first saved to a temporary file (as much disk as its bytes), so that the exact
    reader can read it again.
    """
    args = _resolved(args)
    if "-" not in args.files or not _has_pyarrow():
        return _evaluate_read(args)
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="streameval-") as tmp:
        spooled = Path(tmp) / "stdin"
        with spooled.open("wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
        files = [str(spooled) if p == "-" else p for p in args.files]
        names = {str(spooled): "<stdin>"}
        return _evaluate_read(argparse.Namespace(**{**vars(args), "files": files}), names)


def _evaluate_read(args: argparse.Namespace, names: dict[str, str] | None = None) -> dict[str, Any]:
    try:
        try:
            return _evaluate_files(args, fast=True, names=names)
        except LabelsAsTextError:  # labels such as 1.0 or True: fast again, the labels read as text (10^6 rows of 1.0:
            return _evaluate_files(args, fast=True, names=names, labels_as_text=True)  # 1.4 s, 3.0 s by the exact one)
    except IrregularInputError:
        return _evaluate_files(args, fast=False, names=names)


def _evaluate_files(
    args: argparse.Namespace, fast: bool, names: dict[str, str] | None = None, labels_as_text: bool = False
) -> dict[str, Any]:
    bins = _parse_bins(args.bins)
    classes = args.classes

    def make() -> Any:
        if args.kind == "regression":
            return RegressionAccumulator(bins=bins)
        if args.kind == "scores":
            return ScoreAccumulator(bins=bins, exact_up_to=args.exact_up_to)
        if args.kind == "multiclass":  # classes given by the score columns; learnt from predicted classes
            return MulticlassAccumulator(classes=classes, bins=bins, exact_up_to=args.exact_up_to)
        if args.kind == "paired":
            return PairedAccumulator(threshold=args.threshold, pos_label=True, neg_label=False)
        return BinaryAccumulator(
            bins=bins, threshold=args.threshold, pos_label=True, neg_label=False, exact_up_to=args.exact_up_to
        )

    args.score_rows = {}  # multiclass, one score column: what its rows hold, once a chunk has shown it
    overall = make()
    segmented = Segmented(make, max_segments=args.max_segments) if args.by else None
    window = Sliding(make, size=args.window) if args.window else None
    skip = Problem() if args.skip_bad else None
    label = None if args.kind == "scores" else args.label  # scores alone: no label column
    columns = list(
        dict.fromkeys(c for c in (label, *args.score_columns, args.weight, args.time, *(args.by or [])) if c)
    )
    # read as numbers: scores (class scores, not predicted classes), a regression's true values, weights, times
    scores = args.score_columns if args.kind != "multiclass" or (classes and len(args.score_columns) > 1) else []
    numeric = {c for c in (*scores, args.weight, args.time) if c} - {*(args.by or [])}
    if args.kind == "regression":
        numeric.add(args.label)
    elif label is not None:  # a label column is read as text
        numeric.discard(args.label)
    sizes = None if "-" in args.files else sum(Path(p).stat().st_size for p in args.files if Path(p).exists())
    progress = Progress(not args.no_progress, sizes)
    rows_read = 0
    try:
        for path in args.files:
            shown = (names or {}).get(path)
            whole = args.kind in ("binary", "paired") and args.pos_label.isdigit() and args.neg_label.isdigit()
            whole = whole and args.label not in numeric and not labels_as_text
            integers = frozenset([args.label]) if whole else frozenset()
            chunks = _chunks(
                path, columns, args.format, fast=fast, numeric=numeric, name=shown, integers=integers,
                times=frozenset([args.time]) if args.time else frozenset(), skip=skip,
            )  # fmt: skip
            for rows in chunks:
                values, weights, times, segs, keep = _check_chunk(rows, args, skip)
                rows_read += len(rows.lines)
                if not keep.all():
                    values = [v[keep] for v in values]
                    weights = None if weights is None else weights[keep]
                    times = None if times is None else times[keep]
                    segs = None if segs is None else segs[keep]
                if times is not None and values[0].size:  # events in time order within a chunk
                    order = np.argsort(times, kind="stable")
                    values = [v[order] for v in values]
                    weights = None if weights is None else weights[order]
                    segs = None if segs is None else segs[order]
                try:  # each row is checked: what is refused here is a total (past the largest float)
                    overall.update_many(*values, weights)
                    if window is not None:
                        window.update_many(*values, weights)
                    if segmented is not None:
                        segmented.update_many(segs, *values, w=weights)
                except ValueError as exc:
                    raise UncountableError(rows.source, int(rows.lines[0]), int(rows.lines[-1]), str(exc)) from None
                progress.add(len(rows.lines), rows.source, rows.position)
            progress.file_done(path)
    finally:
        progress.done()
    rows_read += 0 if skip is None else skip.counts.get("row", 0)  # rows of another shape: read, then left out
    result: dict[str, Any] = {"kind": args.kind, "rows": rows_read, "overall": _metrics(overall.get())}
    if skip is not None:
        result["skipped"] = {"total": sum(skip.counts.values()), "by_reason": skip.counts, "first": skip.first}
    if window is not None:
        result["window"] = {"size": args.window, **_metrics(window.get())}
    if segmented is not None and len(segmented):
        report = segmented.get()
        labels = report.labels()
        in_order = sorted(report.segments, key=labels.__getitem__)
        result["segments"] = {labels[k]: _metrics(report[k]) for k in in_order}
        result["micro"] = _metrics(report.overall)
        summary = macro(segmented).to_dict()
        result["macro"] = {name: {"mean": s["mean"], "std": s["std"]} for name, s in summary.items()}
        compared = COMPARED[args.kind]
        result["comparison"] = {
            m: {
                "worst": labels[report.worst(m)], "min": _clean(report.group_min(m)),
                "max": _clean(report.group_max(m)), "difference": _clean(report.difference(m)),
                "ratio": _clean(report.ratio(m)),
            }
            for m in compared
            if not math.isnan(report.group_min(m))
        }  # fmt: skip
        if args.kind == "binary":  # predictions at the threshold, by segment
            result["fairness"] = {name: _clean(getattr(report, name)) for name in FAIRNESS}
        result["segment_table"] = report.summary(["n", *(compared or MAIN[args.kind][1:])])
    if args.save:
        _save(overall, "--save", args.save)
        result["saved"] = args.save
    if args.save_segments and segmented is not None:
        _save(segmented, "--save-segments", args.save_segments)
        result["saved_segments"] = args.save_segments
    if args.html:
        item = segmented if segmented is not None and len(segmented) else overall
        _write_html(args.html, item, f"streameval eval: {', '.join(args.files)}")
        result["html"] = args.html
    return result


def _clean(v: Any) -> Any:
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return f if math.isfinite(f) else str(f)
    if isinstance(v, np.integer):
        return int(v)
    return v


def _metrics(report: Any) -> dict[str, Any]:
    return {k: _clean(v) for k, v in report.to_dict().items()}


COMPARED = {  # each kind's metrics compared across segments (the worst segment, the spread)
    "binary": ["auc", "average_precision", "precision", "recall", "f1", "fpr", "selection_rate", "brier", "ece"],
    "multiclass": ["accuracy", "macro_f1", "macro_auc"],
    "regression": ["mae", "rmse", "r2"],
    "scores": [],
    "paired": ["a_accuracy", "b_accuracy", "a_f1", "b_f1"],
}
FAIRNESS = ["demographic_parity_difference", "demographic_parity_ratio", "equalized_odds_difference",
            "equalized_odds_ratio", "equal_opportunity_difference"]  # fmt: skip
MAIN = {  # each kind's metrics in the table
    "binary": ["n", "positives", "negatives", "accuracy", "precision", "recall", "f1", "mcc", "auc", "auc_lower",
               "auc_upper", "average_precision", "pr_auc", "eer", "bep"],
    "multiclass": ["n", "accuracy", "kappa", "macro_f1", "mean_f1", "micro_f1", "weighted_f1", "macro_auc",
                   "weighted_auc", "macro_average_precision"],
    "regression": ["n", "mae", "rmse", "mse", "r2", "bias", "mape", "max_error", "median_absolute_error"],
    "scores": ["n", "weight", "mean", "std", "min", "median", "max"],
    "paired": ["n", "positives", "negatives", "a_accuracy", "b_accuracy", "a_precision", "b_precision", "a_recall",
               "b_recall", "a_f1", "b_f1", "mcnemar_b", "mcnemar_c", "mcnemar_statistic", "mcnemar_p_value",
               "mcnemar_p_exact"],
}  # fmt: skip


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _table(result: dict[str, Any]) -> str:
    out = [f"rows read: {result['rows']:,}"]
    if "skipped" in result:
        sk = result["skipped"]
        out.append(f"rows skipped: {sk['total']:,} {sk['by_reason']}")
        for first in sk["first"].values():
            out.append(f"  first: {first}")
    blocks = [("overall", result["overall"])]
    if "window" in result:
        blocks.append((f"last {result['window']['size']:,} events", result["window"]))
    main = MAIN[result.get("kind", "binary")]
    width = max(len(k) for k in main)
    for title, m in blocks:
        out.append("")
        out.append(title)
        out.extend(f"  {k:<{width}}  {_fmt(m[k])}" for k in main if k in m)
    if "segment_table" in result:
        out += ["", "segments (* marks the worst of each metric; overall is every segment merged)"]
        out.extend(f"  {line}".rstrip() for line in result["segment_table"].splitlines())
    if "fairness" in result:
        out += ["", "fairness (predictions at the threshold; Fairlearn's definitions)"]
        fw = max(len(k) for k in result["fairness"])
        out.extend(f"  {k:<{fw}}  {_fmt(v)}" for k, v in result["fairness"].items())
    if "macro" in result:
        out.append("")
        out.append("macro (mean and std over segments)")
        for k in main:
            if k in result["macro"]:
                s = result["macro"][k]
                out.append(f"  {k:<{width}}  {_fmt(s['mean'])}  (std {_fmt(s['std'])})")
    if "saved" in result:
        out.append("")
        out.append(f"state saved to {result['saved']}")
    return "\n".join(out)


# -- commands --------------------------------------------------------------------
def _check_writable(option: str, path: str | None) -> None:
    """Refuse, before any reading, a path a result cannot be written to (a directory, one in a directory that
    does not exist): a long run's result would be lost at its end."""
    if not path:
        return
    try:
        state_io.check_writable(path)
    except IsADirectoryError:
        raise SystemExit(f"streameval: {option} {path} is a directory: give a file's path") from None
    except FileNotFoundError as exc:
        raise SystemExit(
            f"streameval: {option} {path}: there is no directory {exc.filename!r} to write it in"
        ) from None


def _save(acc: Any, option: str, path: str) -> None:
    """Save a state, a failure named by the option that asked for it (a full disk, no permission)."""
    try:
        acc.save(path)
    except OSError as exc:
        raise SystemExit(f"streameval: cannot write {option} {path}: {exc}") from None


def _cmd_eval(args: argparse.Namespace) -> int:
    if args.save_segments and not args.by:
        raise SystemExit("streameval: --save-segments saves the segments of --by: give --by too")
    for option, path in (("--save", args.save), ("--save-segments", args.save_segments), ("--html", args.html)):
        _check_writable(option, path)
    try:
        result = _evaluate(args)
    except UnreadableError as bad:
        print(f"streameval: cannot read {bad}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BadRowError as bad:
        print(f"streameval: bad row at {bad}", file=sys.stderr)
        print("streameval: fix the row, or pass --skip-bad to count and skip bad rows", file=sys.stderr)
        return EXIT_BAD_INPUT
    except UncountableError as bad:
        print(f"streameval: cannot count the rows at {bad}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile) as exc:
        print(f"streameval: cannot read input: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        result.pop("segment_table", None)
    print(json.dumps(result, indent=2) if args.json else _table(result))
    return 0


def _load(path: str) -> Any:
    try:
        return state_io.load(path)
    except state_io.FormatError as exc:
        raise SystemExit(f"streameval: {path}: {exc}") from None
    except OSError as exc:
        raise SystemExit(f"streameval: {path}: {exc}") from None


def _cmd_merge(args: argparse.Namespace) -> int:
    _check_writable("-o", args.output)
    states = [_load(p) for p in args.states]
    kinds = {type(s).__name__ for s in states}
    if len(kinds) != 1:
        raise SystemExit(f"streameval: cannot merge different kinds of state: {sorted(kinds)}")
    if not hasattr(type(states[0]), "merge_all"):
        raise SystemExit(
            f"streameval: cannot merge {kinds.pop()} states: what waits for a label in one cannot be joined with "
            "another's (report each, or merge their accumulators)"
        )
    try:
        merged = type(states[0]).merge_all(states)
    except (TypeError, ValueError) as exc:
        raise SystemExit(f"streameval: cannot merge: {exc}") from None
    _save(merged, "-o", args.output)
    print(f"merged {len(states)} states into {args.output}")
    return 0


def _cmd_drift(args: argparse.Namespace) -> int:
    reference, current = _load(args.reference), _load(args.current)
    if isinstance(reference, Segmented) and not isinstance(current, Segmented):
        raise SystemExit(
            f"streameval: cannot compare {args.reference} and {args.current}: the reference is segmented and the "
            "current state is not (a segmented current state is compared segment by segment, with a plain "
            "reference or with the reference's segment of the same name)"
        )
    try:
        if isinstance(current, Segmented):  # each segment against the reference, or against its own
            names = current.get().labels()
            rows = {names[k]: _drift_values(d) for k, d in drift_by_segment(reference, current).items()}
            print(json.dumps({"segments": rows}, indent=2) if args.json else _drift_table(rows))
            return 0
        values = _drift_values(drift(reference, current))
    except (TypeError, ValueError) as exc:
        raise SystemExit(f"streameval: cannot compare {args.reference} and {args.current}: {exc}") from None
    if args.json:
        print(json.dumps(values, indent=2))
    else:
        width = max(len(k) for k in values)
        print("\n".join(f"{k:<{width}}  {_fmt(v)}" for k, v in values.items()))
    return 0


def _drift_values(report: Any) -> dict[str, Any]:
    """A drift report's fields, as JSON takes them."""
    return {k: _clean(v) for k, v in report.to_dict().items()}


def _drift_table(rows: dict[str, dict[str, Any]]) -> str:
    """The drift of each segment, a row each: its statistics in columns."""
    fields = ["ks", "ks_pvalue", "psi", "js", "wasserstein", "exact", "n_reference", "n_current"]
    return text_columns(
        [["segment", *fields]] + [[name, *(_fmt(row[f]) for f in fields)] for name, row in rows.items()]
    )


def _write_html(path: str, item: Any, title: str) -> None:
    from .html import report_html

    try:
        Path(path).write_text(report_html(item, title=title), encoding="utf-8")
    except ImportError as exc:
        raise SystemExit(f"streameval: --html needs matplotlib: pip install 'streameval[plot]' ({exc})") from None
    except OSError as exc:
        raise SystemExit(f"streameval: cannot write the HTML report {path}: {exc}") from None


def _cmd_report(args: argparse.Namespace) -> int:
    _check_writable("--html", args.html)
    acc = _load(args.state)
    report = acc.get()
    if args.html:
        _write_html(args.html, acc, f"streameval report: {args.state}")  # a join's page has its counts too
        print(f"report written to {args.html}")
        return 0
    metrics = _metrics(report)
    joined = acc.counts() if isinstance(acc, LabelJoin) else None  # pairs matched, what waits, what never came
    if args.json:
        print(json.dumps({"kind": type(acc).__name__, **metrics, **({"join": joined} if joined else {})}, indent=2))
        return 0
    if hasattr(report, "summary"):
        print(report.summary())
    else:
        width = max(len(k) for k in metrics)
        print("\n".join(f"{k:<{width}}  {_fmt(v)}" for k, v in metrics.items()))
    if joined:
        print("\nlabel join  " + ", ".join(f"{k} {v}" for k, v in joined.items()))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``streameval`` command."""
    parser = argparse.ArgumentParser(prog="streameval", description="Streaming, mergeable evaluation metrics.")
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="evaluate labels and scores from CSV or JSON Lines files")
    ev.add_argument("files", nargs="+", metavar="FILE", help="CSV or JSON Lines files (.gz too); - for stdin")
    ev.add_argument(
        "--kind", choices=sorted(KIND_OPTIONS), default="binary",
        help="binary: labels and scores (default); multiclass: true classes and the predicted class, one score "
        "column per class (--score c1,c2,...), or one column holding each row's class scores (JSON objects, a "
        "Parquet map or struct: class -> score; lists, in the order of --classes); regression: true (--label) and "
        "predicted "
        "(--score) values; scores: "
        "scores alone, for drift (no label column); paired: labels and two models' scores (--score A,B), both "
        "models' tables at the threshold and McNemar's test",
    )  # fmt: skip
    ev.add_argument(
        "--classes",
        help="multiclass: the classes of the score columns, in order (default: their names), or of the lists of scores "
        "one --score column holds",
    )
    ev.add_argument("--label", default="label", help="label column (default: label)")
    ev.add_argument("--score", default="score", help="score column (default: score)")
    ev.add_argument("--weight", help="weight column")
    ev.add_argument(
        "--time",
        help="event time column: numbers, or instants (ISO 8601 text, Parquet timestamps; naive ones as UTC); "
        "events are taken in time order within a chunk",
    )
    ev.add_argument("--threshold", type=float, help="decision threshold (binary, paired; default: 0.5)")
    ev.add_argument("--bins", default="range_free", help="range_free[:M], uniform:LO:HI:N or edges:E1,E2,...")
    ev.add_argument(
        "--exact-up-to", type=_exact_up_to, default=_UNSET, metavar="N",
        help=f"keep every distinct score while there are at most N (binary, scores; default {DEFAULT_EXACT_UP_TO}; "
        "0: bins from the start; none: always)",
    )  # fmt: skip
    ev.add_argument(
        "--pos-label",
        help="text of the positive label (binary, paired; default: 1; true and false count as 1 and 0, and a whole "
        "number written as a float, 1.0, as that number, in every format)",
    )
    ev.add_argument("--neg-label", help="text of the negative label (binary, paired; default: 0; false counts as 0)")
    ev.add_argument(
        "--by", type=lambda text: [c for c in text.split(",") if c], action="extend", metavar="COL[,COL...]",
        help="columns whose values split the rows into segments (repeat or separate by commas to cross them)",
    )  # fmt: skip
    ev.add_argument(
        "--max-segments", type=int, default=DEFAULT_MAX_SEGMENTS, metavar="N",
        help=f"with --by, stop at more than N segments (default {DEFAULT_MAX_SEGMENTS:,}; each holds an accumulator)",
    )  # fmt: skip
    ev.add_argument("--window", type=int, help="also report the last N events")
    ev.add_argument(
        "--format", choices=["csv", "jsonl", "parquet"], help="force the input format (default: by name or content)"
    )
    ev.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ev.add_argument("--save", metavar="STATE", help="write the accumulated state to this file")
    ev.add_argument("--save-segments", metavar="STATE", help="with --by, write the segmented state to this file")
    ev.add_argument("--html", metavar="FILE", help="also write the report as one self-contained HTML page")
    ev.add_argument("--skip-bad", action="store_true", help="count and skip bad rows instead of stopping")
    ev.add_argument("--no-progress", action="store_true", help="no progress line on standard error")
    ev.set_defaults(run=_cmd_eval)
    mg = sub.add_parser("merge", help="merge saved states into one")
    mg.add_argument("states", nargs="+", metavar="STATE")
    mg.add_argument("-o", "--output", required=True, metavar="OUT")
    mg.set_defaults(run=_cmd_merge)
    rp = sub.add_parser("report", help="print the report of a saved state")
    rp.add_argument("state", metavar="STATE")
    rp.add_argument("--json", action="store_true")
    rp.add_argument("--html", metavar="FILE", help="write the report as one self-contained HTML page")
    rp.set_defaults(run=_cmd_report)
    dr = sub.add_parser("drift", help="score drift of a saved state against a reference one (KS, Wasserstein, PSI, JS)")
    dr.add_argument("reference", metavar="REF")
    dr.add_argument("current", metavar="CUR")
    dr.add_argument("--json", action="store_true")
    dr.set_defaults(run=_cmd_drift)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    args = build_parser().parse_args(argv)
    if getattr(args, "window", None) is not None and args.window < 1:
        raise SystemExit(f"streameval: --window must be at least 1, got {args.window}")
    if getattr(args, "max_segments", 1) < 1:
        raise SystemExit(f"streameval: --max-segments must be at least 1, got {args.max_segments}")
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
