"""Benchmarks: speed as ratios measured side by side in one process, and accuracy.

Run with ``make bench``; writes ``docs/benchmarks.md``. Times are medians over
repeated runs; absolute times vary between machines, the ratios hold better.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from families import FAMILIES, make_family  # noqa: E402

import streameval as se  # noqa: E402


def median_time(fn: Callable[[], object], repeat: int = 7) -> float:
    """Median wall time of ``fn()`` in seconds over ``repeat`` runs (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def paired_ratio(
    base: Callable[[], object], other: Callable[[], object], repeat: int = 9
) -> tuple[float, float, float]:
    """Median times of ``base`` and ``other`` run alternately, and the median of their per-pair ratios.

    Alternating the two in each repetition cancels the machine's slow drifts,
    which on a shared machine are larger than the differences measured.
    """
    base()
    other()
    tb, to, ratios = [], [], []
    for _ in range(repeat):
        start = time.perf_counter()
        base()
        mid = time.perf_counter()
        other()
        end = time.perf_counter()
        tb.append(mid - start)
        to.append(end - mid)
        ratios.append((end - mid) / (mid - start))
    return statistics.median(tb), statistics.median(to), statistics.median(ratios)


def noop(y: object, score: object) -> None:
    """The floor of a per-event call."""


def feed(events: list[tuple[object, object]], update: Callable[..., object]) -> None:
    """Call ``update(y, score)`` once per event: the loop every per-event timing runs."""
    for a, b in events:
        update(a, b)


def river_installed() -> bool:
    """Whether river, whose metrics some rows show for scale, is installed."""
    return importlib.util.find_spec("river") is not None


class NoOp:
    """The floor of a per-event method call looked up in the loop."""

    def update(self, y: object, score: object) -> None:
        """Do nothing."""


def pure_python_ratios(per_event_n: int, batch_sizes: list[int]) -> dict[str, float] | None:
    """The headline ratios measured with the Python twins (``STREAMEVAL_PURE_PYTHON=1``) in a fresh process."""
    if not se.COMPILED:
        return None
    env = dict(os.environ, STREAMEVAL_PURE_PYTHON="1")
    cmd = [sys.executable, __file__, "--ratios-json", str(per_event_n), *map(str, batch_sizes)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def headline_ratios(per_event_n: int, batch_sizes: list[int]) -> dict[str, float]:
    out = bench_per_event(per_event_n, [], with_river=False)
    out.update(bench_batch(batch_sizes, [], river_n=0, with_peers=False))
    return out


def bench_per_event(n: int, rows: list[str], with_river: bool = True) -> dict[str, float]:
    rng = np.random.default_rng(0)
    y = (rng.random(n) < 0.3).tolist()
    s = rng.random(n).tolist()
    events = list(zip(y, s, strict=True))

    def loop(update: Callable[[object, object], object]) -> None:
        feed(events, update)

    def loop_attribute(obj: Any) -> None:
        for a, b in events:
            obj.update(a, b)

    t_noop, t_se, ratio = paired_ratio(lambda: loop(noop), lambda: loop(se.BinaryAccumulator().update), repeat=15)
    t_noop_attr, t_se_attr, ratio_attr = paired_ratio(
        lambda: loop_attribute(NoOp()), lambda: loop_attribute(se.BinaryAccumulator()), repeat=15
    )
    out = {"per_event": ratio, "per_event_attribute": ratio_attr}
    rows.append(f"| no-op Python call `f(y, score)` (the floor) | {t_noop / n * 1e9:.0f} ns | 1.0x |")
    rows.append(f"| streameval `update = acc.update; update(y, score)` | {t_se / n * 1e9:.0f} ns | **{ratio:.2f}x** |")
    rows.append(f"| no-op method call `obj.update(y, score)` | {t_noop_attr / n * 1e9:.0f} ns | 1.0x |")
    rows.append(
        f"| streameval `acc.update(y, score)` | {t_se_attr / n * 1e9:.0f} ns | {ratio_attr:.2f}x the no-op method |"
    )
    if not with_river:
        return out
    try:
        from river import metrics
    except ImportError:
        return out
    for label, make in [
        ("river `ROCAUC()` (10 thresholds)", lambda: metrics.ROCAUC()),
        ("river `ROCAUC(n_thresholds=100)`", lambda: metrics.ROCAUC(n_thresholds=100)),
    ]:
        t = median_time(lambda make=make: loop(make().update), repeat=3)
        rows.append(f"| {label} | {t / n * 1e9:.0f} ns | {t / t_noop:.1f}x |")
    return out


def bench_kinds_per_event(n: int, rows: list[str], with_river: bool = True) -> None:
    """Per-event update of the score, regression, multiclass and paired kinds against a no-op call with the same
    arguments."""
    rng = np.random.default_rng(4)
    scores = rng.random(n).tolist()
    truth = (rng.random(n) * 10).tolist()
    predicted = (np.asarray(truth) + rng.normal(0, 1, n)).tolist()
    classes = list(range(5))
    labels = rng.integers(0, 5, n).tolist()
    dicts = [dict(zip(classes, row, strict=True)) for row in rng.dirichlet(np.ones(5), n).tolist()]

    def one(update: Callable[[object], object]) -> None:
        for a in scores:
            update(a)

    def noop_one(a: object) -> None:
        """The floor of a one-argument call."""

    def two(update: Callable[[object, object], object], left: list[Any], right: list[Any]) -> None:
        for a, b in zip(left, right, strict=True):
            update(a, b)

    flags = [v < 0.3 for v in scores]
    paired = list(zip(flags, scores, predicted, strict=True))

    def _join_calls() -> tuple[Callable[[object, object], object], Callable[[object, object], object]]:
        join = se.LabelJoin(se.BinaryAccumulator())
        return join.predict, join.label

    def joined(predict: Callable[[object, object], object], label: Callable[[object, object], object]) -> None:
        for i, score in enumerate(scores):
            predict(i, score)
            if i >= 100:
                label(i - 100, flags[i - 100])

    def noop_three(a: object, b: object, c: object) -> None:
        """The floor of a three-argument call."""

    weighted = list(zip(flags, scores, (rng.random(n) + 0.5).tolist(), strict=True))

    def three(update: Callable[[object, object, object], object], events: list[Any] = paired) -> None:
        for a, b, c in events:
            update(a, b, c)

    cases: list[tuple[str, Callable[[], None], Callable[[], None], str]] = [
        ("`ScoreAccumulator.update(score)`", lambda: one(noop_one), lambda: one(se.ScoreAccumulator().update), "3x"),
        ("`RegressionAccumulator.update(y, y_pred)`", lambda: two(noop, truth, predicted),
         lambda: two(se.RegressionAccumulator().update, truth, predicted), "3x"),
        ("`MulticlassAccumulator.update(y, {class: p})`, 5 classes", lambda: two(noop, labels, dicts),
         lambda: two(se.MulticlassAccumulator(classes=classes).update, labels, dicts), "10x"),
        ("`MulticlassAccumulator.update(y, predicted class)`, 5 classes", lambda: two(noop, labels, labels),
         lambda: two(se.MulticlassAccumulator(classes=classes).update, labels, labels), "-"),
        ("`PairedAccumulator.update(y, score_a, score_b)`", lambda: three(noop_three),
         lambda: three(se.PairedAccumulator(threshold=0.5).update), "-"),
        ("`BinaryAccumulator.update(y, score, w)`, a float weight", lambda: three(noop_three, weighted),
         lambda: three(se.BinaryAccumulator().update, weighted), "-"),
        ("`LabelJoin(BinaryAccumulator())`: `predict(key, score)`, its label 100 events later (two calls an event)",
         lambda: joined(noop, noop), lambda: joined(*_join_calls()), "-"),
        ("`Locked(BinaryAccumulator()).update(y, score)` (a lock taken and given back an event)",
         lambda: two(noop, flags, scores), lambda: two(se.Locked(se.BinaryAccumulator()).update, flags, scores), "-"),
    ]  # fmt: skip
    if with_river:
        try:
            from river import metrics

            from streameval import river as se_river

            cases += [
                ("river `MSE()` (for scale)", lambda: two(noop, truth, predicted),
                 lambda: two(metrics.MSE().update, truth, predicted), "-"),
                ("river `MacroF1()` with predicted labels (for scale)", lambda: two(noop, labels, labels),
                 lambda: two(metrics.MacroF1().update, labels, labels), "-"),
                ("`streameval.river.MacroF1()` with predicted labels (as river passes them)",
                 lambda: two(noop, labels, labels), lambda: two(se_river.MacroF1().update, labels, labels), "-"),
                ("`streameval.river.Adapter('kappa', kind='multiclass')` with the probability dicts",
                 lambda: two(noop, labels, dicts),
                 lambda: two(se_river.Adapter("kappa", kind="multiclass").update, labels, dicts), "-"),
            ]  # fmt: skip
        except ImportError:
            pass
    for name, floor, update, goal in cases:
        _, t, ratio = paired_ratio(floor, update, 7)
        rows.append(f"| {name} | {t / n * 1e9:,.0f} ns | **{ratio:.1f}x** | {goal} |")


def bench_multiclass_batch(rows: list[str], quick: bool) -> None:
    """MulticlassAccumulator.update_many per score against numpy.bincount over as many codes, and its memory."""
    import tracemalloc

    rng = np.random.default_rng(5)
    shapes = [(20_000, 10), (2_000, 100)] if quick else [(1_000_000, 10), (200_000, 100), (50_000, 1_000)]
    for n, k in shapes:
        probs = rng.random((n, k))
        y = rng.integers(0, k, n)
        codes = (probs * 2048).astype(np.int64).ravel()
        t_first = median_time(
            lambda k=k, y=y, probs=probs: se.MulticlassAccumulator(classes=list(range(k))).update_many(y, probs),
            repeat=3,
        )
        warm = se.MulticlassAccumulator(classes=list(range(k)))
        warm.update_many(y, probs)
        # alternately, as the other ratios against bincount: medians of 3 runs of each apart read 0.21 to 0.35
        # for 1,000 classes on one machine
        _, t_more, slower = paired_ratio(
            lambda codes=codes: np.bincount(codes), lambda warm=warm, y=y, probs=probs: warm.update_many(y, probs), 5
        )
        tracemalloc.start()
        se.MulticlassAccumulator(classes=list(range(k))).update_many(y, probs)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rows.append(
            f"| {n:,} x {k:,} | {t_first / (n * k) * 1e9:.1f} ns | {t_more / (n * k) * 1e9:.1f} ns | "
            f"**{1 / slower:.2f}** | {probs.nbytes / 1e6:.0f} MB | {peak / 1e6:.0f} MB |"
        )


def bench_score_batch(n: int, rows: list[str]) -> None:
    """ScoreAccumulator.update_many against BinaryAccumulator.update_many on the same scores, alternately."""
    rng = np.random.default_rng(6)
    scores = rng.random(n)
    labels = rng.random(n) < 0.3
    score_acc, binary_acc = se.ScoreAccumulator(), se.BinaryAccumulator()
    t_binary, t_score, ratio = paired_ratio(
        lambda: binary_acc.update_many(labels, scores), lambda: score_acc.update_many(scores), 9
    )
    rows.append(f"| {n:.0e} | {t_score * 1e3:.1f} ms | {t_binary * 1e3:.1f} ms | **{1 / ratio:.2f}** |")


def bench_batch(sizes: list[int], rows: list[str], river_n: int, with_peers: bool = True) -> dict[str, float]:
    out: dict[str, float] = {}
    bins = se.Bins.range_free()
    for n in sizes:
        y, s = make_family("calibrated", n, seed=1)
        keys = bins.keys(s)

        def run(y=y, s=s) -> None:
            se.BinaryAccumulator().update_many(y, s)

        def limit(keys=keys) -> None:
            np.bincount(keys, minlength=bins.n_bins)

        t_bc, t_se, ratio = paired_ratio(limit, run, repeat=15 if n <= 10**6 else 9)
        rows.append(
            f"| {n:.0e} | streameval `update_many` (bool labels) | {t_se * 1e3:.1f} ms | **{1 / ratio:.2f}** | "
            f"{n / t_se / 1e6:.0f} M/s |"
        )
        out[f"batch_{n}"] = 1 / ratio
        if not with_peers:
            continue
        y64 = y.astype(np.int64)
        _, t_64, ratio_64 = paired_ratio(limit, lambda y64=y64, s=s: se.BinaryAccumulator().update_many(y64, s), 5)
        rows.append(
            f"| {n:.0e} | streameval `update_many` (int64 labels) | {t_64 * 1e3:.1f} ms | {1 / ratio_64:.2f} | "
            f"{n / t_64 / 1e6:.0f} M/s |"
        )
        w = np.full(n, 0.5)
        _, t_w, ratio_w = paired_ratio(limit, lambda y=y, s=s, w=w: se.BinaryAccumulator().update_many(y, s, w), 5)
        rows.append(
            f"| {n:.0e} | streameval `update_many` (weights) | {t_w * 1e3:.1f} ms | {1 / ratio_w:.2f} | "
            f"{n / t_w / 1e6:.0f} M/s |"
        )
        rows.append(
            f"| {n:.0e} | numpy `bincount` (the limit) | {t_bc * 1e3:.1f} ms | 1.00 | {n / t_bc / 1e6:.0f} M/s |"
        )
        try:
            from sklearn.metrics import roc_auc_score
        except ImportError:
            continue
        t_sk = median_time(lambda y=y, s=s: roc_auc_score(y, s), repeat=3)
        rows.append(
            f"| {n:.0e} | scikit-learn exact `roc_auc_score` | {t_sk * 1e3:.0f} ms | {t_bc / t_sk:.3f} | "
            f"{n / t_sk / 1e6:.1f} M/s |"
        )
        if n <= river_n:
            try:
                from river import metrics
            except ImportError:
                continue
            pairs = list(zip(y.tolist(), s.tolist(), strict=True))

            def river_loop(pairs=pairs) -> None:
                m = metrics.ROCAUC()
                for a, b in pairs:
                    m.update(a, b)

            t_rv = median_time(river_loop, repeat=1)
            rows.append(
                f"| {n:.0e} | river `ROCAUC()` in a Python loop | {t_rv * 1e3:.0f} ms | {t_bc / t_rv:.4f} | "
                f"{n / t_rv / 1e6:.2f} M/s |"
            )
    return out


def bench_scaling(rows: list[str]) -> None:
    y, s = make_family("calibrated", 10**7, seed=3)
    for n in (10**4, 10**5, 10**6, 10**7):

        def run(n=n) -> None:
            se.BinaryAccumulator().update_many(y[:n], s[:n])

        t = median_time(run, repeat=5)
        rows.append(f"| {n:.0e} | {t * 1e3:.2f} ms | {t / n * 1e9:.1f} ns |")


def scaling_plot(path: Path, largest: int) -> list[str]:
    """Time against n on log axes: update_many, scikit-learn's roc_auc_score and river's ROCAUC in a loop."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.metrics import roc_auc_score

    y, s = make_family("calibrated", largest, seed=11)
    sizes = [10**k for k in range(3, round(math.log10(largest)) + 1)]
    curves: dict[str, tuple[list[int], list[float]]] = {}

    def measure(label: str, limit: int, fn: Callable[[int], object], repeat: int) -> None:
        ns = [n for n in sizes if n <= limit]
        curves[label] = (ns, [median_time(lambda n=n: fn(n), repeat=repeat) for n in ns])

    measure("streameval update_many", largest, lambda n: se.BinaryAccumulator().update_many(y[:n], s[:n]), 3)
    measure("scikit-learn roc_auc_score (exact)", min(largest, 10**7), lambda n: roc_auc_score(y[:n], s[:n]), 1)
    try:
        from river import metrics
    except ImportError:
        pass
    else:
        pairs = list(zip(y[: 10**5].tolist(), s[: 10**5].tolist(), strict=True))

        def river_loop(n: int) -> None:
            m = metrics.ROCAUC()
            for a, b in pairs[:n]:
                m.update(a, b)

        measure("river ROCAUC() in a Python loop", 10**5, river_loop, 1)
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for label, (ns, ts) in curves.items():
        ax.loglog(ns, ts, marker="o", label=label)
    ax.set(xlabel="events", ylabel="seconds", title="Time against the number of events")
    ax.grid(True, which="major", linewidth=0.5)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    rows = ["| what | " + " | ".join(f"{n:.0e}" for n in sizes) + " |", "|---|" + "---|" * len(sizes)]
    for label, (ns, ts) in curves.items():
        cells = [f"{ts[ns.index(n)] * 1e3:.3g} ms" if n in ns else "" for n in sizes]
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return rows


def bench_memory(rows: list[str]) -> None:
    acc = se.BinaryAccumulator()
    done = 0
    for target in (10**3, 10**5, 10**7):
        while done < target:
            step = min(target - done, 10**6)
            y, s = make_family("calibrated", step, seed=done)
            acc.update_many(y, s)
            done += step
        rows.append(f"| {target:.0e} | {acc.nbytes:,} |")


def bench_get(rows: list[str]) -> None:
    y, s = make_family("calibrated", 10**6, seed=2)
    acc = se.BinaryAccumulator()
    acc.update_many(y, s)
    t = median_time(acc.get, repeat=50)
    full = median_time(lambda: acc.get().to_dict(), repeat=20)
    rows.append(
        f"| range-free (default), {acc.get().keys.size} non-empty bins | {t * 1e6:.0f} us | {full * 1e3:.2f} ms |"
    )
    for n_bins in (10**2, 10**3, 10**4, 10**5):
        acc = se.BinaryAccumulator(bins=se.Bins.uniform(0.0, 1.0, n_bins))
        acc.update_many(y, s)
        t = median_time(acc.get, repeat=20)
        full = median_time(lambda acc=acc: acc.get().to_dict(), repeat=5)
        rows.append(f"| uniform, {n_bins} bins | {t * 1e6:.0f} us | {full * 1e3:.2f} ms |")


def bench_merge(rows: list[str]) -> None:
    rng = np.random.default_rng(5)
    shards = []
    for _ in range(1000):
        y, s = make_family("calibrated", 1000, seed=int(rng.integers(1 << 30)))
        acc = se.BinaryAccumulator()
        acc.update_many(y, s)
        shards.append(acc)
    t_all = median_time(lambda: se.BinaryAccumulator.merge_all(shards), repeat=5)
    t_sum = median_time(lambda: sum(shards), repeat=5)
    rows.append(f"| `BinaryAccumulator.merge_all` of 1,000 shards (1,000 events each) | {t_all * 1e3:.1f} ms |")
    rows.append(f"| `sum()` of the same 1,000 shards | {t_sum * 1e3:.1f} ms |")


def bench_river_accuracy(n: int, rows: list[str]) -> None:
    """|AUC - exact| of streameval and of river's ROCAUC on the same events."""
    from river import metrics
    from sklearn.metrics import roc_auc_score

    streams = {name: make_family(name, n, seed=21) for name in FAMILIES}
    from reference import phishing_scores

    streams["phishing (river LR)"] = phishing_scores()
    for name, (y, s) in streams.items():
        exact = roc_auc_score(y, s)
        acc = se.BinaryAccumulator()
        acc.update_many(y, s)
        cells = [f"{abs(acc.get().auc - exact):.1e}"]
        pairs = list(zip(np.asarray(y).tolist(), np.asarray(s).tolist(), strict=True))
        for thresholds in (10, 100, 1000):
            m = metrics.ROCAUC(n_thresholds=thresholds)
            for a, b in pairs:
                m.update(a, b)
            cells.append(f"{abs(m.get() - exact):.1e}")
        rows.append(f"| {name} | {len(pairs):,} | " + " | ".join(cells) + " |")


def bench_accuracy(n: int, rows: list[str]) -> None:
    from reference import exact_eer
    from sklearn.metrics import roc_auc_score

    for name in FAMILIES:
        y, s = make_family(name, n, seed=11)
        acc = se.BinaryAccumulator()
        acc.update_many(y, s)
        r = acc.get()
        exact = roc_auc_score(y, s)
        p, m = int(y.sum()), int((~y).sum())
        rows.append(
            f"| {name} | {abs(r.auc - exact):.1e} | {r.auc_lower <= exact <= r.auc_upper} | "
            f"{r.auc_upper - r.auc_lower:.1e} | {abs(r.eer - exact_eer(y, s)):.1e} | "
            f"{max(1e-4, 1 / min(p, m)):.0e} | {acc.nbytes / 1024:.0f} KiB |"
        )


def bench_exact_speed(n_events: int, batch_n: int, rows: list[str]) -> dict[str, float]:
    """The exact regime: per event and update_many on 1,000 distinct scores, get() at 8,192 distinct scores."""
    rng = np.random.default_rng(8)
    y = (rng.random(n_events) < 0.3).tolist()
    s = (rng.integers(0, 1000, n_events) / 1000).tolist()
    events = list(zip(y, s, strict=True))

    def loop(update: Callable[[object, object], object]) -> None:
        feed(events, update)

    t_noop, t_exact, per_event = paired_ratio(lambda: loop(noop), lambda: loop(se.BinaryAccumulator().update), 15)
    rows.append(f"| per event, 1,000 distinct scores | {t_exact / n_events * 1e9:.0f} ns | **{per_event:.2f}x** a "
                f"no-op call ({t_noop / n_events * 1e9:.0f} ns) | 1.6x at most |")  # fmt: skip
    yb = rng.random(batch_n) < 0.3
    keys = rng.integers(0, 1000, batch_n)
    sb = keys / 1000.0

    def run() -> None:
        acc = se.BinaryAccumulator()
        acc.update_many(yb, sb)
        assert acc.get().is_exact

    t_bc, t_run, slower = paired_ratio(lambda: np.bincount(keys, minlength=1000), run, 5)
    batch = 1.0 / slower  # throughput against bincount's
    rows.append(f"| `update_many`, {batch_n:.0e} events, 1,000 distinct scores | {t_run * 1e3:.1f} ms | "
                f"**{batch:.2f}** of bincount ({t_bc * 1e3:.1f} ms) | 1/4 at least |")  # fmt: skip
    s2 = np.concatenate([np.arange(8192), rng.integers(0, 8192, 10**6)]) / 8192
    acc = se.BinaryAccumulator()
    acc.update_many(rng.random(s2.size) < 0.3, s2)

    def reads(count: int, before: Callable[[int], object]) -> list[float]:
        """Times of ``acc.get()``, each after ``before(i)``."""
        times = []
        for i in range(count):
            before(i)
            start = time.perf_counter()
            acc.get()
            times.append(time.perf_counter() - start)
        return times

    def two_batches(i: int) -> None:  # the second goes into a table, which the read sorts again
        acc.update_many([i % 2], [(i % 8192) / 8192])
        acc.update_many([1 - i % 2], [((i + 7) % 8192) / 8192])

    # each read after a new event: the first batch after a report, merged into its scores
    one = reads(41, lambda i: acc.update(i % 2, (i % 8192) / 8192))
    again = reads(21, two_batches)
    for what, times in (("after one new event", one), ("after two batches (all sorted again)", again)):
        rows.append(f"| `get()` {what}, 8,192 distinct scores | {statistics.median(times) * 1e6:.0f} us | "
                    f"median of {len(times)}, largest {max(times) * 1e6:.0f} us | 1 ms at most |")  # fmt: skip
    t_get = max(statistics.median(one), statistics.median(again))
    return {"exact_per_event": per_event, "exact_batch": batch, "exact_get_us": t_get * 1e6}


def bench_windows(n: int, rows: list[str]) -> None:
    """Per-event update of each window against a no-op call, on the same events."""
    rng = np.random.default_rng(12)
    events = list(zip((rng.random(n) < 0.3).tolist(), rng.random(n).tolist(), strict=True))

    def loop(update: Callable[..., object], timed: bool = False) -> None:
        if timed:
            for i, (a, b) in enumerate(events):
                update(a, b, t=i * 0.01)
        else:
            feed(events, update)

    makers: list[tuple[str, Callable[[], Callable[..., object]], bool]] = [
        ("`BinaryAccumulator.update` (for scale)", lambda: se.BinaryAccumulator().update, False),
        *[(f"`Sliding`, size {size:,}", lambda size=size: se.Sliding(se.BinaryAccumulator, size=size).update, False)
          for size in (100, 10_000, 10**6)],
        ("`Sliding`, size 4,096 (exact: the default budget holds it)",
         lambda: se.Sliding(se.BinaryAccumulator, size=4096).update, False),
        ("`Sliding`, size 10,000, `exact_up_to=20_000` (exact)", lambda: exact_window(10_000).update, False),
        ("`Sliding`, size 100,000, `exact_up_to=200_000` (exact)", lambda: exact_window(100_000).update, False),
        ("`TimeWindow`, 12 panes", lambda: se.TimeWindow(se.BinaryAccumulator, width=3600.0, panes=12).update, True),
        ("`Decayed`, by events", lambda: se.Decayed(se.BinaryAccumulator, half_life=5_000).update, False),
        ("`Decayed`, by time", lambda: se.Decayed(se.BinaryAccumulator, half_life=600.0, by="time").update, True),
        ("`Monitor`, every 1,000 events", lambda: se.Monitor(se.BinaryAccumulator(), every=1000).update, False),
        ("`Monitor`, every 100,000 events", lambda: se.Monitor(se.BinaryAccumulator(), every=100_000).update, False),
        ("`Monitor`, every 1,000 events, `metrics=['auc', 'accuracy']`",
         lambda: se.Monitor(se.BinaryAccumulator(), every=1000, metrics=["auc", "accuracy"]).update, False),
        ("`Monitor`, every 10,000 events, `metrics=['auc']`",
         lambda: se.Monitor(se.BinaryAccumulator(), every=10_000, metrics=["auc"]).update, False),
        ("`Monitor`, by time, every 10 s (1,000 events), `metrics=['auc', 'accuracy']`",
         lambda: se.Monitor(se.BinaryAccumulator(), every=10.0, by="time", metrics=["auc", "accuracy"]).update, True),
        ("`Monitor` of a `TimeWindow` (12 panes), by time, every 1,000 s (100,000 events)",
         lambda: se.Monitor(se.TimeWindow(se.BinaryAccumulator, width=3600.0, panes=12), every=1000.0,
                            by="time").update, True),
    ]  # fmt: skip
    segments = ["eu", "us", "asia", "africa"]
    names = [segments[i] for i in rng.integers(0, 4, n).tolist()]
    segment_events = list(zip(names, *zip(*events, strict=True), strict=True))

    def noop_segment(segment: object, y: object, score: object) -> None:
        """The floor of a per-event call with a segment."""

    def segment_loop(update: Callable[..., object]) -> None:
        for g, a, b in segment_events:
            update(g, a, b)

    _, t_seg, seg_ratio = paired_ratio(
        lambda: segment_loop(noop_segment), lambda: segment_loop(se.Segmented(se.BinaryAccumulator).update), 5
    )
    _, t_seg_win, seg_win_ratio = paired_ratio(
        lambda: segment_loop(noop_segment),
        lambda: segment_loop(se.Sliding(lambda: se.Segmented(se.BinaryAccumulator), size=10_000).update),
        5,
    )

    def noop_at(y: object, score: object, t: float = 0.0) -> None:
        """The floor of a per-event call with a time."""

    if river_installed():
        from river import metrics, utils

        from streameval import river as se_river

        makers += [
            *[(f"river `RollingROCAUC(window_size={size:,})` (for scale)",
               lambda size=size: metrics.RollingROCAUC(window_size=size).update, False) for size in (10_000, 100_000)],
            ("river `utils.Rolling(streameval.river.ROCAUC, window_size=10,000)` (a `revert` an event)",
             lambda: utils.Rolling(se_river.ROCAUC, window_size=10_000).update, False),
            ("river `utils.Rolling(streameval.river.Adapter, metric='mae', kind='regression', window_size=1,000)` "
             "(target the score, prediction 1 - score)",
             lambda: as_regression(utils.Rolling(se_river.Adapter, window_size=1000, metric="mae", kind="regression")),
             False),
            ("river `utils.Rolling(metrics.MAE, window_size=1,000)` (the same events, for scale)",
             lambda: as_regression(utils.Rolling(metrics.MAE, window_size=1000)), False),
        ]  # fmt: skip
    for name, make, timed in makers:
        floor = noop_at if timed else noop  # the same loop, with the same arguments, calling nothing

        def window(make: Callable[[], Callable[..., object]] = make, timed: bool = timed) -> None:
            loop(make(), timed)

        _, t_window, ratio = paired_ratio(lambda floor=floor, timed=timed: loop(floor, timed), window, 5)
        rows.append(f"| {name} | {t_window / n * 1e9:,.0f} ns | {ratio:.1f}x |")
    rows.append(f"| `Segmented(BinaryAccumulator)`, 4 str segments | {t_seg / n * 1e9:,.0f} ns | {seg_ratio:.1f}x |")
    rows.append(
        f"| `Sliding` of 10,000 events over `Segmented(BinaryAccumulator)`, 4 str segments | "
        f"{t_seg_win / n * 1e9:,.0f} ns | {seg_win_ratio:.1f}x |"
    )
    # class scores: a dict of 5 classes an event, as river's predict_proba_one gives
    classes = list(range(5))
    class_scores = [dict(zip(classes, p, strict=True)) for p in rng.dirichlet(np.ones(5), n).tolist()]
    class_events = list(zip(rng.integers(0, 5, n).tolist(), class_scores, strict=True))

    def class_loop(update: Callable[..., object]) -> None:
        for a, b in class_events:
            update(a, b)

    def five() -> se.MulticlassAccumulator:
        return se.MulticlassAccumulator(classes=classes)

    for name, make in (
        ("`MulticlassAccumulator.update(y, {class: p})`, 5 classes (for scale)", lambda: five().update),
        ("`Sliding`, size 10,000, over it", lambda: se.Sliding(five, size=10_000).update),
        ("`Decayed`, by events, over it", lambda: se.Decayed(five, half_life=5_000).update),
    ):
        _, t_class, class_ratio = paired_ratio(lambda: class_loop(noop), lambda make=make: class_loop(make()), 5)
        rows.append(f"| {name} | {t_class / n * 1e9:,.0f} ns | {class_ratio:.1f}x |")


def as_regression(metric: Any) -> Callable[[object, float], object]:
    """A regression metric's update fed a binary event as (target: the score, prediction: 1 - the score)."""
    update = metric.update

    def feed_one(y: object, score: float) -> object:
        return update(score, 1.0 - score)

    return feed_one


def exact_window(size: int) -> se.Sliding:
    """A sliding window kept exact: a budget of twice its size holds its events and one filing more."""
    return se.Sliding(lambda: se.BinaryAccumulator(exact_up_to=2 * size), size=size)


def window_errors(n: int, size: int) -> str:
    """|AUC - scikit-learn's| on the last ``size`` events of the per-event stream: the exact window and river's."""
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(12)
    y, s = rng.random(n) < 0.3, rng.random(n)
    events = list(zip(y.tolist(), s.tolist(), strict=True))
    window = exact_window(size)
    feed(events, window.update)
    want = roc_auc_score(y[-size:], s[-size:])
    out = f"the exact window of {size:,} events, |AUC - scikit-learn's| = {abs(window.get().auc - want):.1e}"
    if river_installed():
        from river import metrics

        rolling = metrics.RollingROCAUC(window_size=size)
        feed(events, rolling.update)
        out += f"; river's `RollingROCAUC`, {abs(rolling.get() - want):.1e}"
    return out


def record_by_hand(chunks: list[list[tuple[object, object]]], every: int, acc: Any, metrics: list[str] | None) -> None:
    """What a monitor records, done by hand: feed a chunk of events, then, when it is a whole ``every`` events,
    read the report and keep a row."""
    update, rows, time = acc.update, [], 0
    for chunk in chunks:
        for a, b in chunk:
            update(a, b)
        time += len(chunk)
        if len(chunk) < every:
            continue
        report = acc.get()
        row: dict[str, Any] = {"time": time}
        if metrics is None:
            row.update(report.to_dict())
        else:
            row["n"] = report.n
            row.update({name: getattr(report, name) for name in metrics})
        rows.append(row)


def bench_monitor_warm(n: int, warm: int, rows: list[str]) -> None:
    """A monitor's per-event cost once its stream has run a while, against the accumulator it wraps, and the
    same records taken by hand (a loop that reads the report every ``every`` events): the records' own cost."""
    rng = np.random.default_rng(13)
    events = list(zip((rng.random(n) < 0.3).tolist(), rng.random(n).tolist(), strict=True))
    warm_y, warm_s = rng.random(warm) < 0.3, rng.random(warm)

    def warmed_accumulator() -> se.BinaryAccumulator:
        acc = se.BinaryAccumulator()
        acc.update_many(warm_y, warm_s)
        return acc

    def warmed_monitor(every: int, metrics: list[str] | None) -> Callable[..., object]:
        monitor = se.Monitor(se.BinaryAccumulator(), every=every, metrics=metrics)
        monitor.update_many(warm_y, warm_s)
        return monitor.update

    cases = [
        ("every 1,000 events, every metric", 1000, None),
        ("every 1,000 events, `metrics=['auc', 'accuracy']`", 1000, ["auc", "accuracy"]),
        ("every 10,000 events, `metrics=['auc']`", 10_000, ["auc"]),
        ("every 100,000 events, every metric", 100_000, None),
    ]
    repeat = 5
    for name, every, metrics in cases:  # warmed before the timing: each timed loop gets one made beforehand
        accumulators = iter([warmed_accumulator().update for _ in range(2 * repeat + 2)])
        monitors = iter([warmed_monitor(every, metrics) for _ in range(repeat + 1)])
        by_hand = iter([warmed_accumulator() for _ in range(repeat + 1)])
        chunks = [events[start : start + every] for start in range(0, n, every)]  # made before the timing
        t_acc, t_monitor, ratio = paired_ratio(
            lambda accumulators=accumulators: feed(events, next(accumulators)),
            lambda monitors=monitors: feed(events, next(monitors)),
            repeat,
        )

        def by_hand_loop(
            by_hand: Iterator[Any] = by_hand,
            chunks: Any = chunks,
            every: int = every,
            metrics: list[str] | None = metrics,
        ) -> None:
            record_by_hand(chunks, every, next(by_hand), metrics)

        _, t_hand, hand_ratio = paired_ratio(
            lambda accumulators=accumulators: feed(events, next(accumulators)), by_hand_loop, repeat
        )
        rows.append(
            f"| {name} | {t_acc / n * 1e9:,.0f} ns | {t_monitor / n * 1e9:,.0f} ns | **{ratio:.2f}x** "
            f"| {t_hand / n * 1e9:,.0f} ns | {hand_ratio:.2f}x |"
        )


def bench_windows_batch(n: int, rows: list[str]) -> None:
    """update_many of each window against numpy.bincount over as many bin keys, on the same events."""
    y, s = make_family("calibrated", n, seed=5)
    keys = se.Bins.range_free().keys(s)
    codes = np.random.default_rng(1).integers(0, 4, n)
    calls = {"k": 0}

    def later(width: float) -> np.ndarray:
        """Times of the next batch: every call moves ``width`` on (events in time order)."""
        calls["k"] += 1
        return calls["k"] * width + np.arange(n) * (width / n)

    def batches_of_times(width: float, count: int = 9) -> Iterator[np.ndarray]:
        """The times of the next ``count`` batches (one fill, then paired_ratio's 8 calls), made before the timing:
        a stream has its times already, and making them is not the window's work."""
        return iter([later(width) for _ in range(count)])

    within, across = batches_of_times(1.0), batches_of_times(400.0)
    cases: list[tuple[str, Any, Callable[[Any], None]]] = [
        ("`BinaryAccumulator` (for scale)", se.BinaryAccumulator(), lambda a: a.update_many(y, s)),
        *[(f"`Sliding`, size {size:,}", se.Sliding(se.BinaryAccumulator, size=size), lambda a: a.update_many(y, s))
          for size in (10_000, n, 10 * n)],
        ("`TimeWindow`, 12 panes, each batch within one pane", se.TimeWindow(se.BinaryAccumulator, 1200.0, 12),
         lambda a: a.update_many(y, s, t=next(within))),
        ("`TimeWindow`, 12 panes, each batch over 4 new panes", se.TimeWindow(se.BinaryAccumulator, 1200.0, 12),
         lambda a: a.update_many(y, s, t=next(across))),
        ("`Decayed`, by events", se.Decayed(se.BinaryAccumulator, half_life=5_000), lambda a: a.update_many(y, s)),
        ("`Monitor`, every 1,000 events", se.Monitor(se.BinaryAccumulator(), every=1000),
         lambda a: a.update_many(y, s)),
        ("`Segmented`, 4 integer segments", se.Segmented(se.BinaryAccumulator),
         lambda a: a.update_many(codes, y, s)),
    ]  # fmt: skip
    for name, window, feed in cases:
        for _ in range(12 if name.startswith("`Sliding`, size") else 1):  # a full window: events leave
            feed(window)
        _, t_window, ratio = paired_ratio(lambda: np.bincount(keys), lambda w=window, f=feed: f(w), 7)
        rows.append(f"| {name} | {t_window * 1e3:.1f} ms | {t_window / n * 1e9:.1f} ns | **{1 / ratio:.2f}** |")


def bench_small_batches(n: int, rows: list[str]) -> None:
    """``update_many`` of batches of 10 and 100 events against the same events fed one at a time by ``update``."""
    rng = np.random.default_rng(7)
    y, s, w = rng.random(n) < 0.3, rng.random(n), rng.random(n) + 0.5
    target, codes, classes = rng.normal(size=n), rng.integers(0, 4, n), rng.integers(0, 5, n)
    probs = rng.dirichlet(np.ones(5), n)
    yl, sl, wl, tl, cl, kl = y.tolist(), s.tolist(), w.tolist(), target.tolist(), codes.tolist(), classes.tolist()
    pl = [dict(enumerate(row)) for row in probs.tolist()]
    pane = [0.0]

    def in_one_pane(size: int) -> np.ndarray:
        pane[0] += 1.0  # each batch a little later, all of it in the current pane
        return np.full(size, pane[0])

    # (what, make, batch call for events [lo, hi), per-event call for event i)
    kinds: list[tuple[str, Callable[[], Any], Callable[..., None], Callable[..., None]]] = [
        ("`BinaryAccumulator`", se.BinaryAccumulator,
         lambda a, lo, hi: a.update_many(y[lo:hi], s[lo:hi]), lambda a, i: a.update(yl[i], sl[i])),
        ("`BinaryAccumulator`, weighted", se.BinaryAccumulator,
         lambda a, lo, hi: a.update_many(y[lo:hi], s[lo:hi], w[lo:hi]), lambda a, i: a.update(yl[i], sl[i], wl[i])),
        ("`ScoreAccumulator`", se.ScoreAccumulator,
         lambda a, lo, hi: a.update_many(s[lo:hi]), lambda a, i: a.update(sl[i])),
        ("`RegressionAccumulator`", se.RegressionAccumulator,
         lambda a, lo, hi: a.update_many(target[lo:hi], s[lo:hi]), lambda a, i: a.update(tl[i], sl[i])),
        ("`MulticlassAccumulator`, 5 classes", lambda: se.MulticlassAccumulator(classes=range(5)),
         lambda a, lo, hi: a.update_many(classes[lo:hi], probs[lo:hi]), lambda a, i: a.update(kl[i], pl[i])),
        ("`Segmented`, 4 integer segments", lambda: se.Segmented(se.BinaryAccumulator),
         lambda a, lo, hi: a.update_many(codes[lo:hi], y[lo:hi], s[lo:hi]), lambda a, i: a.update(cl[i], yl[i], sl[i])),
        ("`TimeWindow`, 12 panes, a batch in one pane", lambda: se.TimeWindow(se.BinaryAccumulator, 3600.0, 12),
         lambda a, lo, hi: a.update_many(y[lo:hi], s[lo:hi], t=in_one_pane(hi - lo)),
         lambda a, i: a.update(yl[i], sl[i], t=pane[0])),
        ("`Decayed`, by events", lambda: se.Decayed(se.BinaryAccumulator, half_life=5_000),
         lambda a, lo, hi: a.update_many(y[lo:hi], s[lo:hi]), lambda a, i: a.update(yl[i], sl[i])),
        ("`Sliding`, size 10,000", lambda: se.Sliding(se.BinaryAccumulator, size=10_000),
         lambda a, lo, hi: a.update_many(y[lo:hi], s[lo:hi]), lambda a, i: a.update(yl[i], sl[i])),
    ]  # fmt: skip
    for name, make, batch, single in kinds:
        cells = []
        for size in (10, 100):

            def batches(make: Callable[[], Any] = make, batch: Callable[..., None] = batch, size: int = size) -> None:
                acc = make()
                for lo in range(0, n, size):
                    batch(acc, lo, lo + size)

            def singles(make: Callable[[], Any] = make, single: Callable[..., None] = single) -> None:
                acc = make()
                for i in range(n):
                    single(acc, i)

            _, t_batches, ratio = paired_ratio(singles, batches, 5)
            cells += [f"{t_batches / (n // size) * 1e6:.1f} us", f"{t_batches / n * 1e9:.0f} ns", f"{1 / ratio:.2f}"]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")


def bench_average_precision(n: int, rows: list[str]) -> list[float]:
    """AP in the binned regime: the expected value over orders inside bins, its bounds, the exact AP."""
    from sklearn.metrics import average_precision_score

    from streameval import curves

    errors = []
    for name in FAMILIES:
        y, s = make_family(name, n, seed=11)
        acc = se.BinaryAccumulator()
        acc.update_many(y, s)
        r = acc.get()
        exact = average_precision_score(y, s)
        tied = curves.average_precision(r.edges, r.neg, r.pos)  # the step sum as if each bin were one score
        inside = r.average_precision_lower <= exact <= r.average_precision_upper
        errors.append(abs(r.average_precision - exact))
        rows.append(
            f"| {name} | {exact:.6f} | {r.average_precision:.6f} | {r.average_precision_lower:.6f} | "
            f"{r.average_precision_upper:.6f} | {abs(r.average_precision - exact):.1e} | {abs(tied - exact):.1e} | "
            f"{'yes' if inside else 'NO'} |"
        )
    return errors


def bench_error_by_n(sizes: list[int], rows: list[str]) -> None:
    """Largest |AUC - scikit-learn| and |AP - scikit-learn| over streams of each size (calibrated scores)."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    for n in sizes:
        streams = 20 if n <= 10**4 else (5 if n <= 10**5 else 2)
        auc_err, ap_err, exact_count = 0.0, 0.0, 0
        for seed in range(streams):
            y, s = make_family("calibrated", n, seed=100 + seed)
            if y.all() or not y.any():
                continue
            acc = se.BinaryAccumulator()
            acc.update_many(y, s)
            r = acc.get()
            exact_count += r.is_exact
            auc_err = max(auc_err, abs(r.auc - roc_auc_score(y, s)))
            ap_err = max(ap_err, abs(r.average_precision - average_precision_score(y, s)))
        rows.append(f"| {n:,} | {streams} | {exact_count} | {auc_err:.1e} | {ap_err:.1e} |")


def bench_calibration(sizes: list[int], rows: list[str], cost_n: int) -> None:
    """Calibration metrics against scikit-learn on calibrated beta(2, 3) scores, both regimes, and their cost."""
    from sklearn.calibration import calibration_curve
    from sklearn.metrics import brier_score_loss, log_loss

    from streameval.calibration import CalibrationSums

    for n in sizes:
        rng = np.random.default_rng(n)
        p = rng.beta(2, 3, n)
        y = rng.random(n) < p
        ids = np.searchsorted(np.linspace(0, 1, 16)[1:-1], p)
        total, true, pred = (np.bincount(ids, weights=v, minlength=15) for v in (np.ones(n), y, p))
        keep = total > 0
        ece = float(np.sum(np.abs(true[keep] - pred[keep])) / n)
        for regime, budget in (("exact", None), ("binned", 0)):
            acc = se.BinaryAccumulator(exact_up_to=budget)
            acc.update_many(y, p)
            r = acc.get()
            curve = []
            for strategy in ("uniform", "quantile"):
                got, want = r.calibration_curve(10, strategy), calibration_curve(y, p, n_bins=10, strategy=strategy)
                curve.append(max(float(np.abs(g - w).max()) for g, w in zip(got, want, strict=True)))
            rows.append(
                f"| {n:,} | {regime} | {abs(r.brier / brier_score_loss(y, p) - 1):.1e} | "
                f"{abs(r.log_loss / log_loss(y, p) - 1):.1e} | {curve[0]:.1e} | {curve[1]:.1e} | "
                f"{abs(r.ece() - ece):.1e} |"
            )
    y, s = make_family("calibrated", cost_n, seed=1)
    t_sums = median_time(lambda: CalibrationSums.of(s, y, None), repeat=7)
    t_all = median_time(lambda: se.BinaryAccumulator().update_many(y, s), repeat=7)
    rows += [
        "",
        f"The Brier and log-loss sums of a batch of continuous scores, alone: on {cost_n:.0e} events they took "
        f"{t_sums * 1e3:.1f} ms, against {t_all * 1e3:.1f} ms for `update_many`, which sums a batch counted whole "
        "in range-free bins chunk by chunk as it counts it (a batch with four events or more a slot of its exact "
        "table is summed by score, from the table's counts).",
    ]


def bench_segments(n: int, rows: list[str]) -> None:
    """Segmented.update_many against the by-hand way (pandas.factorize, then one accumulator per group)."""
    import pandas as pd

    y, s = make_family("calibrated", n, seed=3)
    bins = se.Bins.range_free()
    keys, _ = pd.factorize(bins.keys(s))
    for groups in (4, 1000):
        rng = np.random.default_rng(groups)
        codes = rng.integers(0, groups, n)
        names = np.array([f"segment-{i}" for i in range(groups)])[codes]
        combined = codes * (int(keys.max()) + 1) + keys

        def by_hand(segments: np.ndarray) -> dict[object, se.BinaryAccumulator]:
            found, uniques = pd.factorize(segments)
            order = np.argsort(found, kind="stable")
            bounds = np.concatenate([[0], np.cumsum(np.bincount(found))])
            out = {}
            for g, u in enumerate(uniques):
                idx = order[bounds[g] : bounds[g + 1]]
                acc = se.BinaryAccumulator()
                acc.update_many(y[idx], s[idx])
                out[u] = acc
            return out

        def ours(segments: np.ndarray) -> None:
            se.Segmented(se.BinaryAccumulator).update_many(segments, y, s)

        steady = se.Segmented(se.BinaryAccumulator)  # its segments exist: each batch adds to them
        steady.update_many(codes, y, s)
        steady.update_many(names, y, s)

        def bincount(combined: np.ndarray = combined) -> None:
            np.bincount(combined)

        cases = [("integer codes", codes), ("strings", names)]
        if groups == 4:  # a stream sorted by segment (a file written segment after segment, say)
            cases.insert(1, ("integer codes, sorted", np.sort(codes)))
        for label, segments in cases:
            t_hand, t_ours, hand_over_ours = paired_ratio(
                lambda segments=segments: by_hand(segments), lambda segments=segments: ours(segments), 5
            )
            _, _, new_over_bincount = paired_ratio(bincount, lambda segments=segments: ours(segments), 5)
            _, t_again, again_over_bincount = paired_ratio(
                bincount, lambda segments=segments, steady=steady: steady.update_many(segments, y, s), 7
            )
            rows.append(
                f"| {groups:,} | {label} | {t_ours * 1e3:.1f} ms | {t_again * 1e3:.1f} ms | {t_hand * 1e3:.1f} ms | "
                f"**{1 / hand_over_ours:.2f}** | {1 / new_over_bincount:.2f} | {1 / again_over_bincount:.2f} |"
            )


def bench_prometheus(rows: list[str], count: int = 100) -> None:
    """One scrape (every metric of every accumulator, rendered as text) with ``count`` accumulators."""
    from prometheus_client import CollectorRegistry, generate_latest

    from streameval.prometheus import MetricsCollector

    for kind, make in (("binary, 10^4 events each", None), ("segmented, 10 segments each", "segmented")):
        models = {}
        for i in range(count):
            y, s = make_family("calibrated", 10_000, seed=i)
            if make is None:
                acc = se.BinaryAccumulator()
                acc.update_many(y, s)
            else:
                acc = se.Segmented(se.BinaryAccumulator)
                acc.update_many(np.arange(y.size) % 10, y, s)
            models[f"model_{i}"] = se.Locked(acc)
        registry = CollectorRegistry()
        registry.register(MetricsCollector(models))
        t = median_time(lambda registry=registry: generate_latest(registry), repeat=5)
        rows.append(f"| {count} accumulators: {kind} | {t * 1e3:.0f} ms | {len(generate_latest(registry)):,} bytes |")


def bench_cli_files(n: int, rows: list[str]) -> None:
    """`streameval eval`'s reading (in the process) against pandas.read_csv + update_many on the same file."""
    import tempfile

    import pandas as pd

    from streameval import cli

    rng = np.random.default_rng(5)
    y, s = make_family("calibrated", n, seed=5)
    frame = pd.DataFrame({"label": y.astype(int), "score": np.round(s, 6), "region": rng.choice(["eu", "us"], n)})
    with tempfile.TemporaryDirectory() as tmp:
        csv_path, pq_path = f"{tmp}/scores.csv", f"{tmp}/scores.parquet"
        frame.to_csv(csv_path, index=False)
        frame.to_parquet(pq_path, row_group_size=1 << 20)

        def ours(path: str) -> None:
            cli._evaluate(cli.build_parser().parse_args(["eval", path, "--no-progress"]))

        def pandas_way() -> None:
            d = pd.read_csv(csv_path)
            se.BinaryAccumulator().update_many(d["label"].to_numpy(), d["score"].to_numpy())

        t_pd, t_csv, ratio = paired_ratio(pandas_way, lambda: ours(csv_path), repeat=7)
        t_pq = median_time(lambda: ours(pq_path), repeat=5)
        rows += [
            f"| CSV, `streameval eval` | {t_csv * 1e3:.0f} ms | {n / t_csv / 1e6:.1f} M | **{1 / ratio:.2f}** |",
            f"| Parquet, `streameval eval` | {t_pq * 1e3:.0f} ms | {n / t_pq / 1e6:.1f} M | {t_pd / t_pq:.2f} |",
            f"| CSV, `pandas.read_csv` + `update_many` | {t_pd * 1e3:.0f} ms | {n / t_pd / 1e6:.1f} M | 1.00 |",
        ]


def bench_threads(n: int, rows: list[str]) -> None:
    """Threads, each feeding its own accumulator n events in 10 batches: events per second against one thread."""
    import threading

    y, s = make_family("calibrated", n, seed=7)
    step = n // 10

    def feed(acc: se.BinaryAccumulator) -> None:
        for i in range(0, n, step):
            acc.update_many(y[i : i + step], s[i : i + step])

    def rate(k: int) -> float:
        threads = [threading.Thread(target=feed, args=(se.BinaryAccumulator(),)) for _ in range(k)]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return k * n / (time.perf_counter() - start)

    ratios: dict[int, list[float]] = {2: [], 3: []}
    ones = []
    for _ in range(7):  # alternated, as the machine's drifts are larger than the differences
        one = rate(1)
        ones.append(one)
        for k in ratios:
            ratios[k].append(rate(k) / one)
    rows.append(f"| 1 | {statistics.median(ones) / 1e6:.0f} M events/s | 1.00 |")
    for k, values in ratios.items():
        rows.append(
            f"| {k} | {statistics.median(ones) * statistics.median(values) / 1e6:.0f} M events/s | "
            f"**{statistics.median(values):.2f}** ({min(values):.2f} to {max(values):.2f}) |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--out", default=str(HERE.parent / "docs" / "benchmarks.md"))
    parser.add_argument("--ratios-json", nargs="+", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--files-rows", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.ratios_json:  # a child process measuring the Python twins
        print(json.dumps(headline_ratios(args.ratios_json[0], args.ratios_json[1:])))
        return
    if args.files_rows:  # a child process measuring the command's readers, as a fresh command runs
        rows: list[str] = []
        bench_cli_files(args.files_rows, rows)
        print(json.dumps(rows))
        return
    quick = args.quick
    per_event_n = 5_000 if quick else 200_000
    batch_sizes = [10**5] if quick else [10**6, 10**7]
    accuracy_n = 10**5 if quick else 10**6
    river_accuracy_n = 500 if quick else 20_000
    window_n = 5_000 if quick else 100_000

    lines = [
        "# Benchmarks",
        "",
        f"Measured by `make bench` (`benchmarks/run.py`) on {platform.machine()} with {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, numpy {np.__version__}. Times are medians of repeated runs in one "
        "process; ratios compare runs made side by side, and hold better across machines than times do.",
        "",
        "Compiled hot paths (`streameval.COMPILED`): "
        + ("**in use** (`streameval._speedups`, built at install)." if se.COMPILED else "**not in use**.")
        + " The last section measures the pure Python twins as well.",
        "",
        f"## Per-event update ({per_event_n:,} events, a Python loop over (y, score) pairs)",
        "",
        "The no-op loop and the streameval loop run alternately, 15 times; the ratio is the median of the "
        "per-pair ratios.",
        "",
        "The accumulators here are the default ones: they start in the exact regime and, on these continuous "
        "scores, leave it at the 8,193rd distinct score, a one-time cost of about 0.3 ms (filling the table and "
        "putting its counts into bins) that these times include.",
        "",
        "| what | per event | vs no-op call |",
        "|---|---|---|",
    ]
    per_event = bench_per_event(per_event_n, lines)
    lines += [
        "",
        "## Batch update against the limit",
        "",
        "The limit is `numpy.bincount` over bin keys computed beforehand; the ratio is its time over the other's "
        "(higher is better, 1 would match it). For streameval the two run alternately and the ratio is the median "
        "of the per-pair ratios.",
        "",
        "| events | what | time | throughput vs bincount | rate |",
        "|---|---|---|---|---|",
    ]
    batch = bench_batch(batch_sizes, lines, river_n=10**5 if quick else 10**6)
    if not quick:
        lines += ["", "## How `update_many` grows with n", "", "| events | time | per event |", "|---|---|---|"]
        bench_scaling(lines)
        image = Path(args.out).parent / "img" / "scaling.png"
        table = scaling_plot(image, 10**8)
        lines += ["", f"![Time against the number of events, log axes](img/{image.name})", "", *table]
    lines += ["", "## Reading a report", "", "| bins | `get()` | `get()` + every scalar metric |", "|---|---|---|"]
    bench_get(lines)
    lines += ["", "## Merging", "", "| what | time |", "|---|---|"]
    bench_merge(lines)
    if not quick:
        lines += ["", "## Memory of one accumulator (calibrated scores)", "", "| events | bytes |", "|---|---|"]
        bench_memory(lines)
    lines += [
        "",
        f"## Accuracy of the default bins ({accuracy_n:,} scores per family)",
        "",
        "| family | \\|AUC - exact\\| | exact AUC in bounds | bound width | \\|EER - exact\\| | EER goal | memory |",
        "|---|---|---|---|---|---|---|",
    ]
    bench_accuracy(accuracy_n, lines)
    try:
        import river  # noqa: F401
    except ImportError:
        pass
    else:
        lines += [
            "",
            f"## Accuracy beside river (\\|AUC - exact\\| on the same events; {river_accuracy_n:,} per family)",
            "",
            "| stream | events | streameval default | river ROCAUC 10 thresholds | 100 | 1000 |",
            "|---|---|---|---|---|---|",
        ]
        bench_river_accuracy(river_accuracy_n, lines)
    lines += [
        "",
        "## The exact regime (at most 8,192 distinct scores)",
        "",
        "| what | time | ratio | goal |",
        "|---|---|---|---|",
    ]
    bench_exact_speed(per_event_n, batch_sizes[-1], lines)
    lines += [
        "",
        f"## Per-event update of the other kinds ({per_event_n:,} events)",
        "",
        "Each loop against the same loop calling a no-op function with the same arguments, alternately; the ratio is "
        "the median of the per-pair ratios.",
        "",
        "| what | per event | vs a no-op call | goal |",
        "|---|---|---|---|",
    ]
    bench_kinds_per_event(per_event_n, lines)
    lines += [
        "",
        "## `ScoreAccumulator.update_many` against `BinaryAccumulator.update_many`",
        "",
        "The same scores, alternately (the binary one with labels); the ratio is the score accumulator's throughput "
        "over the binary one's (goal: at least 1).",
        "",
        "| scores | `ScoreAccumulator` | `BinaryAccumulator` | throughput ratio |",
        "|---|---|---|---|",
    ]
    bench_score_batch(batch_sizes[-1], lines)
    lines += [
        "",
        "## `MulticlassAccumulator.update_many` (uniform random scores)",
        "",
        "Per score: into a fresh accumulator (its exact tables fill, then turn into bins) and into one that has "
        "counted a batch before. The ratio is `numpy.bincount` over as many integer codes against the second, the "
        "two run alternately (the median of 5 pairs). "
        "Memory: the largest extra memory of the first call (tracemalloc).",
        "",
        "| batch | fresh, per score | counted before, per score | vs bincount | batch size | extra memory |",
        "|---|---|---|---|---|---|",
    ]
    bench_multiclass_batch(lines, quick)
    lines += [
        "",
        f"## Windows per event ({window_n:,} events, each window fresh)",
        "",
        "Goals: at most 3x a no-op call; the monitor at most 1.5x the accumulator it wraps (the first row). A "
        "monitor's record computes the metrics it holds: every scalar metric of a binary report of 2,291 bins of "
        "probabilities took 0.19 ms when this text was written (0.21 ms at 3,148 bins, 23 to 26 us for `auc` and "
        "`accuracy`), so recorded every 1,000 events that is about 0.2 us an event. The segmented loop "
        "includes each of its four segments leaving the exact regime at its 8,193rd distinct score (about 0.3 ms "
        "each). The windows marked exact keep every distinct score of their events (a budget of twice their "
        "size holds them and one filing more); river's `RollingROCAUC` is exact too. `utils.Rolling` over a "
        "streameval metric reverts an event for each it counts. The last three rows count a dict of 5 class "
        "scores an event (as river's `predict_proba_one` gives); the windows keep a copy of each dict, so a "
        "caller may fill the same one again, and the sliding window takes its oldest events out in batches of "
        "such dicts.",
        "",
        "| what | per event | vs a no-op call |",
        "|---|---|---|",
    ]
    bench_windows(window_n, lines)
    lines += ["", f"Exact within the window: {window_errors(window_n, 10_000)}."]
    lines += [
        "",
        f"## A monitor that has run a while ({window_n:,} events after 10^6)",
        "",
        "The accumulator and the monitor have each counted 10^6 events first (one batch): the accumulator is in its "
        "binned regime and its bins' layout is known, so a record reads it without working that out again. Each "
        "loop against the same loop on the accumulator alone, alternately (goal: at most 1.5x). By hand: the same "
        "records taken without a monitor, by a loop that feeds the accumulator and reads `get()` and the same metrics "
        "every so many events, against the accumulator alone in another alternated run: what the records cost "
        "whoever takes them.",
        "",
        "| monitor | accumulator | monitor | ratio | by hand | ratio |",
        "|---|---|---|---|---|---|",
    ]
    bench_monitor_warm(window_n, 10**5 if quick else 10**6, lines)
    for batch_n in (10**5, 10**6):
        lines += [
            "",
            f"## Windows' `update_many` (batches of {batch_n:,} events)",
            "",
            "Each window has counted batches before (a sliding window is full, so events leave with each batch); "
            "the ratio is `numpy.bincount` over as many bin keys against the window's batch, alternately "
            "(higher is better; goal: at least 1/4). A sliding window copies each batch it keeps; a batch of 2^16 "
            "events or more that leaves whole is taken out by its own count, events leaving otherwise are counted "
            "again to be taken out. A batch of a time window over new panes counts into new accumulators, which "
            "start exact (a pane's slice past 8,192 distinct scores is then counted whole in bins); the time windows' "
            "times are made before the timing. A monitor's batch ends with a record of every metric.",
            "",
            "| what | per batch | per event | vs bincount |",
            "|---|---|---|---|",
        ]
        bench_windows_batch(batch_n // 10 if quick else batch_n, lines)
    lines += [
        "",
        f"## Small batches ({window_n:,} events in batches of 10 and of 100)",
        "",
        "`update_many` of a small batch stores its events where per-event updates go (without weights or, for the "
        "accumulators themselves, with float64 weights each within what a per-event update stores), a `Segmented` "
        "batch of segments counted before is checked whole and goes to them event by event, a `TimeWindow` batch "
        "in one pane into that pane. Each kind fed the same events in batches "
        "and one at a time by `update`, alternately; the ratio is the loop's time over the batches' (higher is "
        "better: above 1, a batch costs less than its events one by one). Reads are not included.",
        "",
        "| what | per batch of 10 | per event | vs `update` | per batch of 100 | per event | vs `update` |",
        "|---|---|---|---|---|---|---|",
    ]
    bench_small_batches(window_n, lines)
    lines += [
        "",
        f"## Average precision in the binned regime ({accuracy_n:,} scores per family)",
        "",
        "The default AP is the expected value over random orders of the events inside each bin; the bounds put every "
        "bin's negatives first (lower) or tie its positives above them (upper). The last column but one is the step "
        "sum treating each bin as one score, what earlier versions reported.",
        "",
        "| family | exact AP | streameval AP | lower | upper | \\|AP - exact\\| | as if tied | exact in bounds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ap_errors = bench_average_precision(accuracy_n, lines)
    lines += [
        "",
        "## Error against scikit-learn by stream length (calibrated scores, default accumulator)",
        "",
        "Streams with at most 8,192 distinct scores are in the exact regime; longer ones are binned.",
        "",
        "| events | streams | exact regime | largest \\|AUC - sklearn\\| | largest \\|AP - sklearn\\| |",
        "|---|---|---|---|---|",
    ]
    bench_error_by_n([30, 100, 1000, 8000] if quick else [30, 100, 1000, 8000, 10**4, 10**5, 10**6], lines)
    lines += [
        "",
        "## Calibration against scikit-learn (calibrated beta(2, 3) scores)",
        "",
        "Relative error of the Brier score and log loss; largest absolute error of `calibration_curve` (10 bins, "
        "both coordinates) for each strategy; absolute error of the ECE (15 bins) against a direct computation.",
        "",
        "| events | regime | Brier | log loss | curve, uniform | curve, quantile | ECE |",
        "|---|---|---|---|---|---|---|",
    ]
    bench_calibration([20_000] if quick else [20_000, 200_000, 2_000_000], lines, batch_sizes[-1])
    lines += [
        "",
        f"## Segments ({batch_sizes[0]:.0e} events, `Segmented(BinaryAccumulator).update_many`)",
        "",
        "By hand: `pandas.factorize`, a stable sort, one `BinaryAccumulator` per group. The ratio over it is its time "
        "over ours, new segments (higher is better); the last columns are `numpy.bincount` of (segment, bin) codes "
        "computed beforehand over ours (goal with 4 integer segments: 0.3). Each ratio is the median of pairs run "
        "alternately. 'New segments' makes every segment's accumulator; 'counted before' adds to segments that "
        "exist. Integer codes of segments in bins, or new ones whose events prove they leave the exact regime (each "
        "segment's 250,000 continuous scores here), are counted in one compiled pass over the batch (each event into "
        "its segment's bins and calibration sums, added once all of it is counted); otherwise (strings, or segments "
        "that stay exact, as the 1,000 segments' here), with at most 64 segments each segment's events are counted "
        "apart and added, with more the batch is checked whole first and counted in place. The segments of a "
        "batch are read from its first 65,536 events, or from all of them where a later one sampled shows a segment "
        "those lack (the sorted row: the same codes in ascending order).",
        "",
        "| segments | segment values | new segments | counted before | by hand | ours vs by hand "
        "| vs bincount, new | vs bincount, counted before |",
        "|---|---|---|---|---|---|---|---|",
    ]
    bench_segments(batch_sizes[0], lines)
    lines += [
        "",
        f"## Reading files ({batch_sizes[0]:.0e} rows: label, score, region)",
        "",
        "The command's evaluation (in a fresh process, as a command runs) against pandas on the same file, in that "
        "process; the ratio is pandas' time over ours (higher is better; the CSV pair runs alternately, the ratio "
        "is the median of the pairs).",
        "",
        "| what | time | rows a second | vs pandas |",
        "|---|---|---|---|",
    ]
    done = subprocess.run(
        [sys.executable, __file__, "--files-rows", str(batch_sizes[0])], capture_output=True, text=True, check=True
    )
    lines += json.loads(done.stdout.strip().splitlines()[-1])
    lines += [
        "",
        f"## Threads ({batch_sizes[-1]:.0e} events per thread, each its own accumulator)",
        "",
        "The compiled kernels release the GIL while they count. Median of 7 alternated runs (and the range).",
        "",
        "| threads | throughput | vs one thread |",
        "|---|---|---|",
    ]
    bench_threads(batch_sizes[-1], lines)
    lines += ["", "## A Prometheus scrape", "", "| what | one scrape | exposition |", "|---|---|---|"]
    bench_prometheus(lines, 10 if quick else 100)
    twins = pure_python_ratios(per_event_n, batch_sizes)
    if twins is not None:
        mine = {**per_event, **batch}
        lines += [
            "",
            "## Compiled paths against their Python twins",
            "",
            "The same headline ratios, measured again in a fresh process with `STREAMEVAL_PURE_PYTHON=1` (what a "
            "machine without a C compiler at install gets; the results are identical, only the speed differs).",
            "",
            "| ratio | compiled | Python twins |",
            "|---|---|---|",
            f"| per event vs a no-op call (lower is better) | {mine['per_event']:.2f}x | {twins['per_event']:.2f}x |",
            f"| `acc.update` vs a no-op method call | {mine['per_event_attribute']:.2f}x | "
            f"{twins['per_event_attribute']:.2f}x |",
        ]
        for n in batch_sizes:
            key = f"batch_{n}"
            lines.append(f"| `update_many` vs bincount, {n:.0e} events | {mine[key]:.2f} | {twins[key]:.2f} |")
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text)
    print(text)
    print(f"per-event ratio {per_event['per_event']:.2f}; batch throughput vs bincount {batch}")
    print(f"largest |AP - exact| over the families: {max(ap_errors):.1e}")


if __name__ == "__main__":
    main()
