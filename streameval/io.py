"""A versioned state format: JSON-safe dicts, compact bytes, and files written atomically.

This module owns only the envelope: the format name and version, the kind
tag, the checksum and the encoding. What a state holds is each accumulator
kind's own business (its ``to_state`` / ``from_state``); every kind registers
itself here under its tag, so this module imports no accumulator.

Loading checks everything (kind, version, checksum, then the kind's own
checks of types, signs, totals that must agree and bins that exist in the
scheme) and raises :class:`FormatError` on the first problem, before anything
is built. Nothing is unpickled.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ._codec import FormatError, jsonable, require_fields

__all__ = [
    "FORMAT_VERSION", "FormatError", "check_writable", "from_bytes", "from_dict", "load", "register", "save",
    "to_bytes", "to_dict",
]  # fmt: skip

FORMAT_VERSION = 4  # 4: moments may hold the mean's rounding (mean_lo); 3: binary states hold calibration sums;
# 2: exact scores (the exact regime); 1 to 3 still load
_READABLE = (1, 2, 3, 4)
MAGIC = b"SEVL"
_HEADER = struct.Struct("<4sBI")  # magic, version, CRC-32 of the compressed body

_KINDS: dict[str, Any] = {}


def register(kind: str, cls: type) -> None:
    """Make ``cls`` (with ``to_state`` and ``from_state``) the accumulator kind saved under the tag ``kind``."""
    known = _KINDS.get(kind)
    if known is not None and known.__qualname__ != cls.__qualname__:
        raise ValueError(f"kind {kind!r} is already registered to {known.__qualname__}")
    _KINDS[kind] = cls


def _kind_of(acc: Any) -> str:
    for kind, cls in _KINDS.items():
        if type(acc) is cls:
            return kind
    raise TypeError(f"cannot save a {type(acc).__name__}; kinds: {sorted(_KINDS)}")


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
    ('binary', 4, True)
    """
    kind = _kind_of(acc)
    return {"format": "streameval", "version": FORMAT_VERSION, "kind": kind, "state": jsonable(acc.to_state())}


def from_dict(d: Any) -> Any:
    """The accumulator described by ``d``; :class:`FormatError` if anything is off."""
    if not isinstance(d, dict):
        raise FormatError(f"a state must be a dict, got {type(d).__name__}")
    require_fields(d, "the state", {"format", "version", "kind", "state"})
    if d["format"] != "streameval":
        raise FormatError(f"format must be 'streameval', got {d['format']!r}"[:200])
    if type(d["version"]) is not int or d["version"] not in _READABLE:
        raise FormatError(f"version {d['version']!r} is not supported; this reads versions {list(_READABLE)}"[:200])
    if not isinstance(d["kind"], str) or d["kind"] not in _KINDS:
        raise FormatError(f"kind must be one of {sorted(_KINDS)}, got {d['kind']!r}"[:200])
    if not isinstance(d["state"], dict):
        raise FormatError(f"state must be a dict, got {type(d['state']).__name__}")
    try:
        return _KINDS[d["kind"]].from_state(d["state"])
    except FormatError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, OverflowError) as exc:
        raise FormatError(f"invalid {d['kind']} state: {exc}") from None


def _delta(d: Any, encode: bool) -> Any:
    """Delta-encode (or decode) every 'keys' list, which makes the bytes small.

    Only mappings and lists of mappings or lists are walked: a flat list of
    numbers is left as it is, whatever its length.
    """
    if isinstance(d, dict):
        out = {}
        for k, v in d.items():
            if k == "keys" and isinstance(v, list) and set(map(type, v)) <= {int}:
                out[k] = (np.diff(v, prepend=0) if encode else np.cumsum(v)).tolist() if v else []
            else:
                out[k] = _delta(v, encode)
        return out
    if isinstance(d, list) and d and isinstance(d[0], (dict, list)):
        return [_delta(v, encode) for v in d]
    return d


def to_bytes(acc: Any, *, level: int = 9) -> bytes:
    """Compact binary form: a header (magic, version, CRC-32) and compressed JSON.

    ``level`` is zlib's: 0 (stored) to 9 (smallest, the default), or -1 (zlib's default, 6).

    Examples
    --------
    >>> import streameval as se
    >>> acc = se.BinaryAccumulator()
    >>> acc.update_many([1, 0, 1], [0.9, 0.2, 0.7])
    >>> blob = se.to_bytes(acc)
    >>> blob[:4], se.from_bytes(blob) == acc
    (b'SEVL', True)
    """
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not -1 <= level <= 9:
        # zlib's own error names neither the argument nor the value
        shown = level.item() if isinstance(level, np.generic) else level  # 11, not np.int64(11) (io uses _codec alone)
        raise ValueError(f"level must be an integer from -1 to 9 (zlib's levels), got {shown!r}")
    body = json.dumps(_delta(to_dict(acc), True), separators=(",", ":"), allow_nan=False).encode()
    packed = zlib.compress(body, int(level))
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
    if version not in _READABLE:
        raise FormatError(f"version {version} is not supported; this reads versions {list(_READABLE)}")
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


def check_writable(path: str | os.PathLike[str]) -> Path:
    """The directory a file at ``path`` would be written in; ``IsADirectoryError`` where ``path`` is a directory,
    ``FileNotFoundError`` where that directory does not exist (naming the path given, where writing would name a
    temporary file). A command checks its outputs so before reading its input.

    Examples
    --------
    >>> from streameval.io import check_writable
    >>> str(check_writable("state.sevl"))
    '.'
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "path is a directory; save takes a file's path", str(path))
    if not directory.is_dir():
        raise FileNotFoundError(errno.ENOENT, "no directory to save the file in", str(directory))
    return directory


def save(acc: Any, path: str | os.PathLike[str]) -> None:
    """Write ``to_bytes(acc)`` to ``path`` atomically: a temporary file, then a rename.

    A crash half-way leaves the previous file (if any) untouched, and the
    directory is synced after the rename so that the new name survives a
    power cut. An existing file keeps its permission bits; a new one gets the
    usual ones (``0o666`` less the umask), as any other tool would give it.
    """
    target = Path(path)
    blob = to_bytes(acc)
    directory = check_writable(path)
    try:
        keep_mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        keep_mode = None
    tmp = directory / f".{target.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for any new file
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
            fh.flush()
            if keep_mode is not None:
                os.fchmod(fh.fileno(), keep_mode)
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_directory(directory)


def _sync_directory(directory: Path) -> None:
    """fsync a directory so that a rename in it is durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - file systems that do not sync directories
        pass
    finally:
        os.close(fd)


def load(path: str | os.PathLike[str]) -> Any:
    """The accumulator saved at ``path``; :class:`FormatError` if the file is not a valid state."""
    return from_bytes(Path(path).read_bytes())
