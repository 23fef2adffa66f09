"""Benchmarks: speed as ratios measured side by side in one process, and accuracy.

Run with ``make bench``; writes ``docs/benchmarks.md``. Times are medians over
repeated runs; absolute times vary between machines, the ratios hold better.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

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


def noop(y: object, score: object) -> None:
    """The floor of a per-event call."""


def bench_per_event(n: int, rows: list[str]) -> dict[str, float]:
    rng = np.random.default_rng(0)
    y = (rng.random(n) < 0.3).tolist()
    s = rng.random(n).tolist()
    events = list(zip(y, s, strict=True))

    def loop(update: Callable[[object, object], object]) -> None:
        for a, b in events:
            update(a, b)

    t_noop = median_time(lambda: loop(noop))
    t_se = median_time(lambda: loop(se.BinaryAccumulator().update))
    out = {"noop_ns": t_noop / n * 1e9, "streameval_ns": t_se / n * 1e9, "ratio": t_se / t_noop}
    rows.append(f"| no-op Python call (the floor) | {t_noop / n * 1e9:.0f} ns | 1.0x |")
    rows.append(f"| streameval `update(y, score)` | {t_se / n * 1e9:.0f} ns | {t_se / t_noop:.2f}x |")
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


def bench_batch(sizes: list[int], rows: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    bins = se.Bins.range_free()
    for n in sizes:
        y, s = make_family("calibrated", n, seed=1)
        keys = bins.keys(s)
        t_bc = median_time(lambda keys=keys: np.bincount(keys, minlength=bins.n_bins), repeat=5)

        def run(y=y, s=s) -> None:
            se.BinaryAccumulator().update_many(y, s)

        t_se = median_time(run, repeat=5)
        rows.append(
            f"| {n:.0e} | {t_bc * 1e3:.1f} ms | {t_se * 1e3:.1f} ms | {t_bc / t_se:.2f} | "
            f"{n / t_se / 1e6:.0f} M events/s |"
        )
        out[f"ratio_{n}"] = t_bc / t_se
        try:
            from sklearn.metrics import roc_auc_score
        except ImportError:
            continue
        t_sk = median_time(lambda y=y, s=s: roc_auc_score(y, s), repeat=3)
        rows.append(f"| {n:.0e} | (scikit-learn exact `roc_auc_score`) | {t_sk * 1e3:.1f} ms | {t_bc / t_sk:.3f} | |")
    return out


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
    t = median_time(lambda: sum(shards), repeat=3)
    rows.append(f"| `sum()` of 1,000 shard accumulators (1,000 events each) | {t * 1e3:.0f} ms |")


def bench_accuracy(n: int, rows: list[str]) -> None:
    from sklearn.metrics import roc_auc_score, roc_curve

    def exact_eer(y: np.ndarray, s: np.ndarray) -> float:
        fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
        d = 1.0 - tpr - fpr
        zero = np.flatnonzero(d == 0)
        if zero.size:
            return float(fpr[zero[0]])
        i = int(np.flatnonzero(d > 0)[-1])
        lam = d[i] / (d[i] - d[i + 1])
        return float(fpr[i] + lam * (fpr[i + 1] - fpr[i]))

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--out", default=str(HERE.parent / "docs" / "benchmarks.md"))
    args = parser.parse_args()
    per_event_n = 20_000 if args.quick else 200_000
    batch_sizes = [10**5] if args.quick else [10**6, 10**7]
    accuracy_n = 10**5 if args.quick else 10**6

    lines = [
        "# Benchmarks",
        "",
        f"Measured by `make bench` (`benchmarks/run.py`) on {platform.machine()}, Python "
        f"{platform.python_version()}, numpy {np.__version__}. Times are medians of repeated runs "
        "in one process; ratios compare runs made side by side.",
        "",
        f"## Per-event update ({per_event_n:,} events, a Python loop over (y, score) pairs)",
        "",
        "| what | per event | vs no-op call |",
        "|---|---|---|",
    ]
    per_event = bench_per_event(per_event_n, lines)
    lines += [
        "",
        "## Batch update against the limit (`numpy.bincount` over precomputed bin keys)",
        "",
        "| events | bincount | streameval `update_many` | throughput vs bincount | rate |",
        "|---|---|---|---|---|",
    ]
    batch = bench_batch(batch_sizes, lines)
    lines += ["", "## Reading a report", "", "| bins | `get()` | `get()` + every scalar metric |", "|---|---|---|"]
    bench_get(lines)
    lines += ["", "## Merging", "", "| what | time |", "|---|---|"]
    bench_merge(lines)
    lines += [
        "",
        f"## Accuracy of the default bins ({accuracy_n:,} scores per family)",
        "",
        "| family | \\|AUC - exact\\| | exact AUC in bounds | bound width | \\|EER - exact\\| | EER goal | memory |",
        "|---|---|---|---|---|---|---|",
    ]
    bench_accuracy(accuracy_n, lines)
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text)
    print(text)
    print(f"per-event ratio {per_event['ratio']:.2f}; batch throughput vs bincount {batch}")


if __name__ == "__main__":
    main()
