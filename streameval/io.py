"""A versioned state format: JSON-safe dicts, compact bytes, and files written atomically.

Every format carries the kind of accumulator and a version. Loading checks
everything (kind, version, checksum, types, signs, totals that must agree,
bins that exist in the scheme) and raises :class:`FormatError` on the first
problem, before anything is built. Nothing is pickled.
"""

from __future__ import annotations

import json
import math
import os
import struct
import tempfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from .binary import BinaryAccumulator
from .bins import Bins
from .multiclass import MulticlassAccumulator
from .regression import Moments, RegressionAccumulator
from .state import LabelledCounts

__all__ = ["FORMAT_VERSION", "FormatError", "from_bytes", "from_dict", "load", "save", "to_bytes", "to_dict"]

FORMAT_VERSION = 1
MAGIC = b"SEVL"
_HEADER = struct.Struct("<4sBI")  # magic, version, CRC-32 of the compressed body


class FormatError(ValueError):
    """A state (dict, bytes or file) that is not a valid streameval state."""


# -- small encoders -------------------------------------------------------------
def _enc_float(x: float) -> float | str:
    return x if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))


def _dec_float(where: str, v: Any) -> float:
    if isinstance(v, str) and v in ("inf", "-inf", "nan"):
        return float(v)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise FormatError(f"{where} must be a number, got {v!r}"[:300])
    return float(v)


def _enc_label(v: Any) -> dict[str, Any]:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": v}
    if isinstance(v, str):
        return {"str": v}
    if isinstance(v, float) and math.isfinite(v):
        return {"float": v}
    raise TypeError(f"only bool, int, str and finite float labels can be saved, got {v!r}")


def _dec_label(where: str, d: Any) -> Any:
    if not isinstance(d, dict) or len(d) != 1:
        raise FormatError(f"{where} must be a one-entry dict such as {{'int': 1}}, got {d!r}"[:300])
    ((tag, v),) = d.items()
    types = {"bool": bool, "int": int, "str": str, "float": float}
    if tag not in types or type(v) is not types[tag] or (tag == "float" and not math.isfinite(v)):
        raise FormatError(f"{where} holds a label of an unknown or wrong type: {d!r}"[:300])
    return v


def _require(d: Any, where: str, keys: set[str]) -> None:
    if not isinstance(d, dict):
        raise FormatError(f"{where} must be a dict, got {type(d).__name__}")
    missing, extra = keys - set(d), set(d) - keys
    if missing or extra:
        raise FormatError(f"{where} has fields {sorted(d)}; expected {sorted(keys)}")


def _counts(where: str, values: Any, weighted: bool) -> np.ndarray:
    if not isinstance(values, list):
        raise FormatError(f"{where} must be a list, got {type(values).__name__}")
    if weighted:
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            raise FormatError(f"{where} must hold numbers")
        arr = np.array(values, dtype=np.float64)
        if not np.all(np.isfinite(arr)):
            raise FormatError(f"{where} must be finite")
    else:
        if not all(type(v) is int for v in values):
            raise FormatError(f"{where} must hold integers (the state has no weights)")
        if values and min(values) < 0:
            raise FormatError(f"{where} holds a negative count: {min(values)}")
        if values and max(values) >= 2**63:
            raise FormatError(f"{where} holds a count out of range: {max(values)}")
        arr = np.array(values, dtype=np.int64)
    if arr.size and arr.min() < 0:
        raise FormatError(f"{where} holds a negative count: {float(arr.min())!r}")
    return arr


def _bins(d: Any) -> Bins:
    try:
        return Bins.from_dict(d)
    except (TypeError, ValueError) as exc:
        raise FormatError(f"bins: {exc}") from None


# -- histograms -------------------------------------------------------------------
def _enc_hist(keys: np.ndarray, neg: np.ndarray, pos: np.ndarray) -> dict[str, list[Any]]:
    return {"keys": keys.tolist(), "neg": neg.tolist(), "pos": pos.tolist()}


def _dec_hist(where: str, d: Any, bins: Bins, weighted: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    _require(d, where, {"keys", "neg", "pos"})
    keys = d["keys"]
    if not isinstance(keys, list) or not all(type(k) is int for k in keys):
        raise FormatError(f"{where}.keys must be a list of integers")
    if keys and (keys[0] < bins.key_min or keys[-1] > bins.key_max):
        raise FormatError(f"{where}.keys must lie in [{bins.key_min}, {bins.key_max}]")
    k = np.array(keys, dtype=np.int64)
    if k.size > 1 and np.any(np.diff(k) <= 0):
        raise FormatError(f"{where}.keys must be strictly increasing")
    neg = _counts(f"{where}.neg", d["neg"], weighted)
    pos = _counts(f"{where}.pos", d["pos"], weighted)
    if not neg.size == pos.size == k.size:
        raise FormatError(f"{where}: keys, neg and pos must have one entry per bin ({k.size}, {neg.size}, {pos.size})")
    if np.any((neg == 0) & (pos == 0)):
        raise FormatError(f"{where} lists an empty bin")
    return k, neg, pos


def _fill(state: LabelledCounts, bins: Bins, where: str, keys: np.ndarray, neg: np.ndarray, pos: np.ndarray) -> None:
    """Put histogram counts into a fresh state (keys checked to be bins of the scheme)."""
    x = bins.lower_edges(keys)
    if neg.dtype == np.float64 or pos.dtype == np.float64:
        state._to_float()
    for label, values in ((False, neg), (True, pos)):
        nz = values != 0
        if not nz.any():
            continue
        codes = bins.labelled_codes(x[nz], label)
        back, _ = bins.decode(codes)
        if not np.array_equal(back, keys[nz]):
            bad = keys[nz][back != keys[nz]][0]
            raise FormatError(f"{where}.keys holds {int(bad)}, which no score reaches in {bins!r}")
        flat = state.flat_index(codes.copy())
        state._counts[flat] = values[nz]


def _histogram_of(state: LabelledCounts, bins: Bins) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return state.histogram(bins)


# -- per kind -------------------------------------------------------------------
def _binary_to(acc: BinaryAccumulator) -> dict[str, Any]:
    acc._flush()
    keys, neg, pos = _histogram_of(acc._counts, acc.bins)
    return {
        "bins": acc.bins.to_dict(),
        "threshold": _enc_float(acc.threshold),
        "pos_label": _enc_label(acc.pos_label),
        "neg_label": _enc_label(acc.neg_label),
        "weighted": acc._counts.is_weighted,
        "histogram": _enc_hist(keys, neg, pos),
        "above": acc._above.tolist(),
        "totals": {"neg": neg.sum().item(), "pos": pos.sum().item()},
    }


def _binary_from(d: dict[str, Any]) -> BinaryAccumulator:
    _require(d, "state", {"bins", "threshold", "pos_label", "neg_label", "weighted", "histogram", "above", "totals"})
    bins = _bins(d["bins"])
    threshold = _dec_float("threshold", d["threshold"])
    if math.isnan(threshold):
        raise FormatError("threshold must not be nan")
    pos_label, neg_label = _dec_label("pos_label", d["pos_label"]), _dec_label("neg_label", d["neg_label"])
    weighted = d["weighted"]
    if not isinstance(weighted, bool):
        raise FormatError(f"weighted must be true or false, got {weighted!r}")
    keys, neg, pos = _dec_hist("histogram", d["histogram"], bins, weighted)
    _require(d["totals"], "totals", {"neg", "pos"})
    for name, arr in (("neg", neg), ("pos", pos)):
        total = _counts(f"totals.{name}", [d["totals"][name]], weighted)[0]
        if not math.isclose(float(total), float(arr.sum()), rel_tol=1e-12, abs_tol=0.0):
            raise FormatError(f"totals.{name} is {total.item()!r} but the histogram sums to {arr.sum().item()!r}")
    above = _counts("above", d["above"], weighted)
    if above.size != 2:
        raise FormatError(f"above must hold 2 counts, got {above.size}")
    try:
        acc = BinaryAccumulator(bins=bins, threshold=threshold, pos_label=pos_label, neg_label=neg_label)
    except (TypeError, ValueError) as exc:
        raise FormatError(f"state: {exc}") from None
    at = np.searchsorted(keys, acc._t_key)
    in_bin = (neg[at], pos[at]) if at < keys.size and keys[at] == acc._t_key else (0, 0)
    limit = (0, 0) if acc._t_is_edge else in_bin
    if above[0] > limit[0] or above[1] > limit[1]:
        raise FormatError(f"above {above.tolist()} exceeds the threshold bin's counts {list(limit)}")
    _fill(acc._counts, bins, "histogram", keys, neg, pos)
    acc._above = above.astype(np.float64) if weighted else above
    return acc


def _multiclass_to(acc: MulticlassAccumulator) -> dict[str, Any]:
    acc._flush()
    hists = [_enc_hist(*_histogram_of(o._counts, acc.bins)) for o in acc._ovr] if acc._mode == "scores" else []
    return {
        "bins": acc.bins.to_dict(),
        "classes": [_enc_label(c) for c in acc._classes],
        "fixed": acc._fixed,
        "mode": acc._mode,
        "weighted": acc._cm.dtype == np.float64,
        "confusion": acc._cm.tolist(),
        "histograms": hists,
        "n": acc._total(),
    }


def _multiclass_from(d: dict[str, Any]) -> MulticlassAccumulator:
    _require(d, "state", {"bins", "classes", "fixed", "mode", "weighted", "confusion", "histograms", "n"})
    bins = _bins(d["bins"])
    if not isinstance(d["classes"], list):
        raise FormatError("classes must be a list")
    classes = [_dec_label(f"classes[{i}]", c) for i, c in enumerate(d["classes"])]
    if len(set(classes)) != len(classes):
        raise FormatError("classes must be distinct")
    k = len(classes)
    weighted, fixed, mode = d["weighted"], d["fixed"], d["mode"]
    if not isinstance(weighted, bool) or not isinstance(fixed, bool) or mode not in (None, "scores", "labels"):
        raise FormatError("weighted and fixed must be booleans, mode null, 'scores' or 'labels'")
    rows = d["confusion"]
    if not isinstance(rows, list) or len(rows) != k or any(not isinstance(r, list) or len(r) != k for r in rows):
        raise FormatError(f"confusion must be a {k} x {k} list of lists")
    dtype = np.float64 if weighted else np.int64
    cm = np.array([_counts(f"confusion[{i}]", r, weighted) for i, r in enumerate(rows)], dtype=dtype).reshape(k, k)
    n = _counts("n", [d["n"]], weighted)[0]
    if not math.isclose(float(n), float(cm.sum()), rel_tol=1e-12):
        raise FormatError(f"n is {n.item()!r} but the confusion matrix sums to {cm.sum().item()!r}")
    hists = d["histograms"]
    if not isinstance(hists, list) or len(hists) != (k if mode == "scores" else 0):
        raise FormatError(f"histograms must hold one histogram per class in score mode, none otherwise ({k})")
    acc = MulticlassAccumulator(bins=bins)
    acc._mode = mode
    for label in classes:
        acc._add_class(label)
    acc._fixed = fixed
    acc._cm = cm.astype(np.float64) if weighted else cm.astype(np.int64)
    for c, h in enumerate(hists):
        keys, neg, pos = _dec_hist(f"histograms[{c}]", h, bins, weighted)
        if not math.isclose(float(neg.sum() + pos.sum()), float(n), rel_tol=1e-12):
            raise FormatError(f"histograms[{c}] counts {(neg.sum() + pos.sum()).item()!r} events, not n = {n.item()!r}")
        if not math.isclose(float(pos.sum()), float(cm[c].sum()), rel_tol=1e-12):
            raise FormatError(
                f"histograms[{c}] has {pos.sum().item()!r} positives, its confusion row {cm[c].sum().item()!r}"
            )
        _fill(acc._ovr[c]._counts, bins, f"histograms[{c}]", keys, neg, pos)
        if weighted:
            acc._ovr[c]._above = acc._ovr[c]._above.astype(np.float64)
    return acc


def _regression_to(acc: RegressionAccumulator) -> dict[str, Any]:
    acc._flush()
    keys, neg, _ = _histogram_of(acc._hist, acc.bins)
    return {
        "bins": acc.bins.to_dict(),
        "n": acc._n,
        "y": [acc._y.weight, acc._y.mean, acc._y.m2],
        "error": [acc._e.weight, acc._e.mean, acc._e.m2],
        "sum_abs_error": acc._sum_abs,
        "sum_abs_pct_error": acc._sum_ape,
        "max_abs_error": acc._max_abs,
        "weighted": acc._hist.is_weighted,
        "abs_error_histogram": {"keys": keys.tolist(), "neg": neg.tolist(), "pos": [0] * keys.size},
    }


def _regression_from(d: dict[str, Any]) -> RegressionAccumulator:
    fields = {"bins", "n", "y", "error", "sum_abs_error", "sum_abs_pct_error", "max_abs_error", "weighted"}
    _require(d, "state", fields | {"abs_error_histogram"})
    bins = _bins(d["bins"])
    n = d["n"]
    if type(n) is not int or n < 0:
        raise FormatError(f"n must be a non-negative integer, got {n!r}")
    moments = []
    for name in ("y", "error"):
        m = d[name]
        if not isinstance(m, list) or len(m) != 3:
            raise FormatError(f"{name} must be [weight, mean, m2]")
        w, mean, m2 = (_dec_float(f"{name}[{i}]", v) for i, v in enumerate(m))
        if not (math.isfinite(w) and math.isfinite(mean) and math.isfinite(m2)) or w < 0 or m2 < 0:
            raise FormatError(f"{name} must hold a finite weight >= 0, a finite mean and m2 >= 0, got {m!r}")
        moments.append(Moments(w, mean, m2))
    if moments[0].weight != moments[1].weight:
        raise FormatError("y and error must have the same total weight")
    sums = [_dec_float(f, d[f]) for f in ("sum_abs_error", "sum_abs_pct_error", "max_abs_error")]
    if not all(math.isfinite(v) and v >= 0 for v in sums):
        raise FormatError(f"sums and maximum must be finite and >= 0, got {sums!r}")
    weighted = d["weighted"]
    if not isinstance(weighted, bool) or (not weighted and moments[0].weight != n):
        raise FormatError("weighted must be a boolean, and without weights the total weight must equal n")
    keys, counts, pos = _dec_hist("abs_error_histogram", d["abs_error_histogram"], bins, weighted)
    if pos.any():
        raise FormatError("abs_error_histogram.pos must be all zero")
    if not math.isclose(float(counts.sum()), moments[0].weight, rel_tol=1e-9):
        raise FormatError(
            f"abs_error_histogram counts {counts.sum().item()!r}, the total weight is {moments[0].weight!r}"
        )
    acc = RegressionAccumulator(bins=bins)
    acc._n, acc._y, acc._e = n, moments[0], moments[1]
    acc._sum_abs, acc._sum_ape, acc._max_abs = sums
    _fill(acc._hist, bins, "abs_error_histogram", keys, counts, pos)
    return acc


_KINDS: dict[str, tuple[type, Any, Any]] = {
    "binary": (BinaryAccumulator, _binary_to, _binary_from),
    "multiclass": (MulticlassAccumulator, _multiclass_to, _multiclass_from),
    "regression": (RegressionAccumulator, _regression_to, _regression_from),
}


# -- public functions ---------------------------------------------------------------
def to_dict(acc: Any) -> dict[str, Any]:
    """A JSON-safe dict of an accumulator's state, with its kind and the format version.

    Examples
    --------
    >>> import json, streameval as se
    >>> acc = se.BinaryAccumulator()
    >>> acc.update_many([1, 0], [0.9, 0.2])
    >>> d = se.to_dict(acc)
    >>> d["kind"], d["version"], se.from_dict(json.loads(json.dumps(d))) == acc
    ('binary', 1, True)
    """
    for kind, (cls, writer, _) in _KINDS.items():
        if isinstance(acc, cls):
            return {"format": "streameval", "version": FORMAT_VERSION, "kind": kind, "state": writer(acc)}
    raise TypeError(f"cannot save a {type(acc).__name__}; kinds: {sorted(_KINDS)}")


def from_dict(d: Any) -> Any:
    """The accumulator described by ``d``; :class:`FormatError` if anything is off."""
    if not isinstance(d, dict):
        raise FormatError(f"a state must be a dict, got {type(d).__name__}")
    _require(d, "the state", {"format", "version", "kind", "state"})
    if d["format"] != "streameval":
        raise FormatError(f"format must be 'streameval', got {d['format']!r}"[:200])
    if d["version"] != FORMAT_VERSION or type(d["version"]) is not int:
        raise FormatError(f"version {d['version']!r} is not supported; this is version {FORMAT_VERSION}"[:200])
    if d["kind"] not in _KINDS:
        raise FormatError(f"kind must be one of {sorted(_KINDS)}, got {d['kind']!r}"[:200])
    try:
        return _KINDS[d["kind"]][2](d["state"])
    except FormatError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, OverflowError) as exc:
        raise FormatError(f"invalid {d['kind']} state: {exc}") from None


def _delta(d: Any, encode: bool) -> Any:
    """Delta-encode (or decode) every 'keys' list, which makes the bytes small."""
    if isinstance(d, dict):
        out = {}
        for k, v in d.items():
            if k == "keys" and isinstance(v, list) and all(type(x) is int for x in v):
                out[k] = (np.diff(v, prepend=0) if encode else np.cumsum(v)).tolist() if v else []
            else:
                out[k] = _delta(v, encode)
        return out
    if isinstance(d, list):
        return [_delta(v, encode) for v in d]
    return d


def to_bytes(acc: Any) -> bytes:
    """Compact binary form: a header (magic, version, CRC-32) and compressed JSON.

    Examples
    --------
    >>> import streameval as se
    >>> acc = se.BinaryAccumulator()
    >>> acc.update_many([1, 0, 1], [0.9, 0.2, 0.7])
    >>> blob = se.to_bytes(acc)
    >>> blob[:4], se.from_bytes(blob) == acc
    (b'SEVL', True)
    """
    body = json.dumps(_delta(to_dict(acc), True), separators=(",", ":"), allow_nan=False).encode()
    packed = zlib.compress(body, 9)
    return _HEADER.pack(MAGIC, FORMAT_VERSION, zlib.crc32(packed)) + packed


def from_bytes(blob: bytes) -> Any:
    """The accumulator in ``blob``; :class:`FormatError` if anything is off."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise FormatError(f"expected bytes, got {type(blob).__name__}")
    blob = bytes(blob)
    if len(blob) < _HEADER.size:
        raise FormatError(f"truncated: {len(blob)} bytes, fewer than the {_HEADER.size}-byte header")
    magic, version, crc = _HEADER.unpack_from(blob)
    if magic != MAGIC:
        raise FormatError(f"not a streameval state (starts with {magic!r})")
    if version != FORMAT_VERSION:
        raise FormatError(f"version {version} is not supported; this is version {FORMAT_VERSION}")
    packed = blob[_HEADER.size :]
    if zlib.crc32(packed) != crc:
        raise FormatError("checksum mismatch: the state is truncated or altered")
    try:
        body = zlib.decompress(packed)
        d = json.loads(body)
    except (zlib.error, ValueError, RecursionError) as exc:
        raise FormatError(f"cannot decode the state: {exc}") from None
    try:
        d = _delta(d, False)
    except (TypeError, ValueError, OverflowError) as exc:
        raise FormatError(f"cannot decode the state: {exc}") from None
    return from_dict(d)


def save(acc: Any, path: str | os.PathLike[str]) -> None:
    """Write ``to_bytes(acc)`` to ``path`` atomically: a temporary file, then a rename.

    A crash half-way leaves the previous file (if any) untouched.
    """
    target = Path(path)
    blob = to_bytes(acc)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(path: str | os.PathLike[str]) -> Any:
    """The accumulator saved at ``path``; :class:`FormatError` if the file is not a valid state."""
    return from_bytes(Path(path).read_bytes())
