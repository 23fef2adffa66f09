"""Reliability: bad input everywhere, threads, pickling, very long streams, fuzzed state files."""

from __future__ import annotations

import json
import pickle
import random
import struct
import subprocess
import sys
import threading
import zlib

import numpy as np
import pytest
from conftest import ROOT

import streameval as se
from streameval import river as se_river
from streameval.io import FormatError

# -- a bad-input matrix over the public entry points --------------------------------


def _binary():
    acc = se.BinaryAccumulator(threshold=0.3)
    acc.update_many([1, 0, 1], [0.9, 0.2, 0.25], [1.0, 2.0, 1.0])
    acc.update(0, 0.7)
    return acc


def _multi():
    acc = se.MulticlassAccumulator(classes=["a", "b"])
    acc.update("a", {"a": 0.8, "b": 0.2})
    return acc


def _regression():
    acc = se.RegressionAccumulator()
    acc.update_many([1.0, 2.0], [1.5, 1.0])
    return acc


def _sliding():
    win = se.Sliding(se.BinaryAccumulator, size=3)
    win.update_many([1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4])
    return win


def _time_window():
    win = se.TimeWindow(se.BinaryAccumulator, width=10.0, panes=2)
    win.update_many([1, 0], [0.1, 0.2], t=[1.0, 2.0])
    return win


def _decayed():
    dec = se.Decayed(se.BinaryAccumulator, half_life=3)
    dec.update_many([1, 0], [0.1, 0.2])
    return dec


def _decayed_by_time():
    dec = se.Decayed(se.BinaryAccumulator, half_life=3.0, by="time")
    dec.update_many([1, 0], [0.1, 0.2], t=[1.0, 2.0])
    return dec


def _paired():
    acc = se.PairedAccumulator(threshold=0.5)
    acc.update_many([1, 0], [0.9, 0.1], [0.2, 0.3])
    return acc


def _river_metric():
    m = se_river.ROCAUC()
    m.update(True, 0.9)
    m.update(False, 0.1)
    return m


def _snapshot(obj):
    if hasattr(obj, "to_bytes"):
        return obj.to_bytes()
    if isinstance(obj, se_river.ROCAUC):
        return obj.accumulator.to_bytes()
    report = obj.get()
    if hasattr(report, "to_dict"):
        return json.dumps(report.to_dict(), default=str, sort_keys=True)
    return repr(report.counts.tolist())


NAN, INF = float("nan"), float("inf")
CASES = [
    # (make, call, exception, words in the message)
    (_binary, lambda a: a.update(1, NAN), ValueError, ["score", "nan"]),
    (_binary, lambda a: a.update("1", 0.5), ValueError, ["y", "'1'"]),
    (_binary, lambda a: a.update(2, 0.5), ValueError, ["y", "2"]),
    (_binary, lambda a: a.update(1, "0.5"), TypeError, ["score", "'0.5'"]),
    (_binary, lambda a: a.update(1, [0.5]), TypeError, ["score"]),
    (_binary, lambda a: a.update(1, 0.5, w=NAN), ValueError, ["w", "nan"]),
    (_binary, lambda a: a.update(1, 0.5, w=-0.0 - 1), ValueError, ["w", "-1.0"]),
    (_binary, lambda a: a.update_many([1, 0], [0.5, NAN]), ValueError, ["scores", "nan", "index 1"]),
    (_binary, lambda a: a.update_many([1, 0], [0.5]), ValueError, ["scores", "2", "1"]),
    (_binary, lambda a: a.update_many([[1, 0]], [[0.5, 0.1]]), ValueError, ["1-D"]),
    (_binary, lambda a: a.update_many([True, "no"], [0.5, 0.1]), ValueError, ["y", "'no'", "index 1"]),
    (_binary, lambda a: a.update_many([1, 0], [0.5, 0.1], [1.0, INF]), ValueError, ["w", "inf", "index 1"]),
    (_binary, lambda a: a.update_many([1, 0], ["a", "b"]), TypeError, ["scores"]),
    (_binary, lambda a: a.merge(se.BinaryAccumulator()), ValueError, ["threshold", "0.3", "0.5"]),
    (_multi, lambda a: a.update("c", {"a": 0.5, "b": 0.5}), ValueError, ["y", "'c'"]),
    (_multi, lambda a: a.update("a", {"a": NAN, "b": 0.5}), ValueError, ["scores['a']", "nan"]),
    (_multi, lambda a: a.update("a", {}), ValueError, ["scores", "missing"]),
    (_multi, lambda a: a.update_many(["a"], [[0.1, 0.2, 0.3]]), ValueError, ["scores", "shape"]),
    (_multi, lambda a: a.update_many(["a", "b"], ["a", "z"]), ValueError, ["scores", "'z'", "index 1"]),
    (_multi, lambda a: a.update_many(["a", "b"], ["a", "b"]), ValueError, ["either class scores", "labels"]),
    (_regression, lambda a: a.update(INF, 1.0), ValueError, ["y", "inf"]),
    (_regression, lambda a: a.update_many([1.0, 2.0], [1.0, NAN]), ValueError, ["y_pred", "nan", "index 1"]),
    (_regression, lambda a: a.update_many([1.0], [1.0], [-1.0]), ValueError, ["w", "-1.0", "index 0"]),
    (_sliding, lambda a: a.update_many([1, 3], [0.1, 0.2]), ValueError, ["y", "3", "index 1"]),
    (_sliding, lambda a: a.update(1, NAN), ValueError, ["score", "nan"]),
    (_time_window, lambda a: a.update_many([1, 0], [0.1, NAN], t=[3.0, 4.0]), ValueError, ["scores", "nan"]),
    (_time_window, lambda a: a.update(1, 0.5, t=INF), ValueError, ["t", "finite"]),
    (_time_window, lambda a: a.update_many([1, 0], [0.1, 0.2], t=[INF, NAN]), ValueError, ["t", "nan", "index 1"]),
    (_time_window, lambda a: a.update_many([1, 0], [0.1, 0.2], t=[3.0, -INF]), ValueError, ["t", "-inf", "index 1"]),
    (
        _decayed_by_time,
        lambda a: a.update_many([1, 0], [0.1, 0.2], t=[3.0, INF]),
        ValueError,
        ["t must be finite, got inf at index 1"],
    ),
    (_decayed_by_time, lambda a: a.update_many([1, 0], [0.1, 0.2], t=[NAN, 3.0]), ValueError, ["t", "nan", "index 0"]),
    (_time_window, lambda a: a.update(1, 0.5, t="now"), TypeError, ["t"]),
    (_decayed, lambda a: a.update_many([1, 0], [0.1, 0.2], t=[1.0, 2.0]), ValueError, ["t", "by='time'"]),
    (_decayed, lambda a: a.update_many([1, 5], [0.1, 0.2]), ValueError, ["y", "5"]),
    (_paired, lambda a: a.update_many([1, 0], [0.9, NAN], [0.1, 0.2]), ValueError, ["pred_a", "nan"]),
    (_paired, lambda a: a.update_many([1, 0], [0.9, 0.1], [0.1]), ValueError, ["pred_b", "2", "1"]),
    (_river_metric, lambda m: m.update(True, NAN), ValueError, ["score", "nan"]),
    (_river_metric, lambda m: m.update(True, {True: NAN, False: 0.5}), ValueError, ["score", "nan"]),
]


@pytest.mark.parametrize(("make", "call", "exc", "words"), CASES)
def test_bad_input_is_refused_with_a_named_argument_and_changes_nothing(make, call, exc, words):
    obj = make()
    before = _snapshot(obj)
    with pytest.raises(exc) as info:
        call(obj)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert _snapshot(obj) == before


@pytest.mark.parametrize(
    ("call", "exc", "words"),
    [
        (lambda: se.macro([]), ValueError, ["at least one"]),
        (lambda: se.macro([se.BinaryAccumulator(), se.RegressionAccumulator()]), TypeError, ["one kind"]),
        (lambda: se.micro([1, 2]), TypeError, ["accumulators", "int"]),
        (lambda: se.from_dict({"format": "streameval"}), FormatError, ["fields"]),
        (lambda: se.from_bytes(b"\x00" * 3), FormatError, ["truncated", "3 bytes"]),
        (lambda: se.load(ROOT / "README.md"), FormatError, ["not a streameval state"]),
        (lambda: se.Sliding(lambda: 3, size=2), TypeError, ["factory", "int"]),
        (lambda: se.TimeWindow(se.BinaryAccumulator, width=-1), ValueError, ["width", "-1"]),
        (lambda: se.Decayed(se.BinaryAccumulator, half_life=0), ValueError, ["half_life", "0"]),
        (lambda: se.Monitor(se.BinaryAccumulator(), every=0), ValueError, ["every", "0"]),
        (lambda: se.Locked(3), TypeError, ["accumulator", "int"]),
        (lambda: se_river.Adapter("auc", kind="tree"), ValueError, ["kind", "'tree'"]),
        (lambda: se.BinaryAccumulator().get().at(NAN), ValueError, ["threshold", "nan"]),
        (lambda: se.BinaryAccumulator().get().auc_ci(level=1.2), ValueError, ["level", "1.2"]),
        (lambda: se.BinaryAccumulator().get().min_cost(1.5), ValueError, ["p", "1.5"]),
        (lambda: se.BinaryAccumulator().get().min_dcf(0.0), ValueError, ["p_target", "0.0"]),
        (lambda: se.RegressionAccumulator().get().abs_error_quantile(2), ValueError, ["q", "2"]),
        (lambda: se.paired_t_test([se.BinaryAccumulator()], [se.BinaryAccumulator()]), ValueError, ["at least 2"]),
    ],
)
def test_other_entry_points_name_the_argument(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_extreme_but_valid_scores_are_counted():
    values = [5e-324, -5e-324, 1e-300, 1e308, -1e308, 1 - 2**-53, 2**-1074 * 3, INF, -INF, 0.0, -0.0]
    for bins in (se.Bins.range_free(), se.Bins.uniform(0, 1, 10), se.Bins.from_edges([-1.0, 0.0, 1.0])):
        acc = se.BinaryAccumulator(bins=bins)
        acc.update_many([i % 2 for i in range(len(values))], values)
        for v in values:
            acc.update(1, v)
        r = acc.get()
        assert r.n == 2 * len(values)
        pred = np.array(values * 2) >= 0.5
        assert r.tp + r.fp == int(pred.sum())
    empty = se.BinaryAccumulator()
    empty.update_many([], [])
    assert empty.get().n == 0


# -- threads and processes ------------------------------------------------------------


def test_eight_threads_on_one_locked_accumulator_count_exactly():
    rng = np.random.default_rng(0)
    n = 10**6
    y = rng.random(n) < 0.3
    s = rng.random(n)
    parts = np.array_split(np.arange(n), 8)
    shared = se.Locked(se.BinaryAccumulator())
    per_thread = [se.BinaryAccumulator() for _ in range(8)]

    def work(k: int) -> None:
        idx = parts[k]
        half = idx[: idx.size // 8]  # one eighth event by event, the rest in batches
        ys, ss = y[half].tolist(), s[half].tolist()
        for a, b in zip(ys, ss, strict=True):
            shared.update(a, b)
            per_thread[k].update(a, b)
        rest = idx[idx.size // 8 :]
        for chunk in np.array_split(rest, 10):
            shared.update_many(y[chunk], s[chunk])
            per_thread[k].update_many(y[chunk], s[chunk])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    reference = se.BinaryAccumulator()
    reference.update_many(y, s)
    assert shared.inner == reference
    assert shared.get().n == n
    assert se.BinaryAccumulator.merge_all(per_thread) == reference


def test_a_locked_method_is_the_accumulators_method_of_the_moment():
    """Locked keeps one wrapper a method name, which looks the method up at each call: a method the accumulator
    binds anew (as a buffer's update) is the one called, under the lock."""

    class Rebinding:
        def __init__(self) -> None:
            self.calls: list[str] = []
            self.update = lambda x: self.calls.append(f"first {x}")

        def get(self) -> list[str]:
            return self.calls

    inner = Rebinding()
    locked = se.Locked(inner)
    update = locked.update
    update(1)
    inner.update = lambda x: inner.calls.append(f"second {x}")
    update(2)
    locked.update(3)
    assert locked.get() == ["first 1", "second 2", "second 3"]
    assert locked.update is update and locked.update.__name__ == "update"


def test_a_locked_accumulator_pickles_a_state_between_two_calls():
    """A pickle (or copy) of a Locked accumulator or window holds its state read under the lock, while threads
    update it, and a lock of its own: each pickle is a prefix of the updates, whole batches only."""
    import copy
    import pickle

    shared = se.Locked(se.BinaryAccumulator())
    window = se.Locked(se.Sliding(se.BinaryAccumulator, size=100))
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            shared.update_many([1, 0, 1], [0.9, 0.2, 0.4])  # three events at a time
            window.update(1, 0.5)

    thread = threading.Thread(target=work)
    thread.start()
    try:
        snaps = [pickle.loads(pickle.dumps(shared)) for _ in range(50)]
        windows = [pickle.loads(pickle.dumps(window)) for _ in range(20)]
    finally:
        stop.set()
        thread.join()
    assert all(isinstance(p, se.Locked) for p in snaps) and snaps[-1].get().n > 0
    for snap in snaps:
        r = snap.get()
        assert r.n % 3 == 0 and r.positives == 2 * r.n // 3 and r.tp == r.n // 3, r  # never half a batch
        snap.update(1, 0.9)  # its own lock, its own counts
    for w in windows:  # every event (1, 0.5) is a true positive at 0.5: a window read between two calls
        r = w.get()
        assert r.n <= 100 and (r.tp, r.fp, r.tn, r.fn) == (r.n, 0, 0, 0)
    twin = copy.copy(shared)
    before = shared.get().n
    twin.update(1, 0.9)
    assert shared.get().n == before and twin.get().n == before + 1


@pytest.mark.parametrize(
    "make", [_binary, _multi, _regression, lambda: se.MulticlassAccumulator(), lambda: se.BinaryAccumulator()]
)
def test_accumulators_pickle_with_identical_results(make):
    acc = make()
    copy = pickle.loads(pickle.dumps(acc))
    assert copy.to_bytes() == acc.to_bytes()
    assert json.dumps(copy.get().to_dict(), default=str) == json.dumps(acc.get().to_dict(), default=str)


# -- very long streams ---------------------------------------------------------------


def test_a_billion_events_keep_exact_counts_and_flat_memory():
    rng = np.random.default_rng(1)
    n = 10**7
    y = rng.random(n) < 0.3
    s = 1 / (1 + np.exp(-rng.normal(y * 2.0 - 1.0, 1.5)))
    one = se.BinaryAccumulator()
    one.update_many(y, s)
    acc = se.BinaryAccumulator()
    sizes = set()
    for _ in range(100):  # 10^9 events
        acc.update_many(y, s)
        sizes.add(acc.nbytes)
    r, r1 = acc.get(), one.get()
    assert r.n == 10**9
    assert np.array_equal(r.neg, 100 * r1.neg) and np.array_equal(r.pos, 100 * r1.pos)
    assert (r.tp, r.fp) == (100 * r1.tp, 100 * r1.fp)
    assert len(sizes) == 1  # memory flat after the first batch
    assert r.auc == pytest.approx(r1.auc, abs=1e-14)


def test_weighted_counts_stay_accurate_over_many_batches():
    rng = np.random.default_rng(2)
    y = rng.random(10**6) < 0.5
    s = rng.random(10**6)
    acc = se.BinaryAccumulator()
    for _ in range(100):  # 10^8 events of weight 0.1
        acc.update_many(y, s, 0.1)
    r = acc.get()
    exact = 100 * int(y.sum()) * 0.1
    assert abs(r.positives - exact) <= 1e-12 * exact


# -- fuzzing the state format ----------------------------------------------------------


def _valid_blobs():
    blobs = [_binary().to_bytes(), _multi().to_bytes(), _regression().to_bytes()]
    hard = se.MulticlassAccumulator()
    hard.update_many([1, 2, 2], [1, 1, 2])
    blobs.append(hard.to_bytes())
    return blobs


def test_a_hundred_thousand_fuzzed_states_give_a_state_or_format_error():
    rng = random.Random(3)
    blobs = _valid_blobs()
    bodies = [zlib.decompress(b[9:]) for b in blobs]
    outcomes = {"ok": 0, "FormatError": 0}
    for i in range(100_000):
        kind = i % 4
        if kind == 0:  # random bytes
            blob = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 64)))
        elif kind == 1:  # a valid state with a few bytes changed (the checksum catches it)
            blob = bytearray(rng.choice(blobs))
            for _ in range(rng.randint(1, 4)):
                blob[rng.randrange(len(blob))] = rng.getrandbits(8)
            blob = bytes(blob)
        elif kind == 2:  # a truncated state
            base = rng.choice(blobs)
            blob = base[: rng.randrange(len(base))]
        else:  # a changed JSON body with a correct checksum: the content checks must catch it
            body = bytearray(rng.choice(bodies))
            for _ in range(rng.randint(1, 3)):
                body[rng.randrange(len(body))] = rng.choice(b'0123456789-.,:[]{}"etnf')
            packed = zlib.compress(bytes(body))
            blob = struct.pack("<4sBI", b"SEVL", 1, zlib.crc32(packed)) + packed
        try:
            se.from_bytes(blob)
            outcomes["ok"] += 1
        except FormatError:
            outcomes["FormatError"] += 1
    assert outcomes["FormatError"] > 90_000


FUZZER = """
import sys, atheris
with atheris.instrument_imports():
    import streameval as se
    from streameval.io import FormatError

def one(data):
    try:
        se.from_bytes(data)
    except FormatError:
        pass

atheris.Setup([sys.argv[0], "-runs=20000", "-seed=1"], one)
atheris.Fuzz()
"""


def test_atheris_fuzzes_from_bytes(tmp_path):
    pytest.importorskip("atheris")
    script = tmp_path / "fuzz.py"
    script.write_text(FUZZER)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=600,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Done 20000 runs" in done.stderr
