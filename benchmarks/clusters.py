"""Rows per second over one Parquet dataset: one process (pyarrow + update_many), Dask and Spark.

    python benchmarks/clusters.py --rows 10000000 [--files 8] [--out docs/distributed.md]

Writes ``--rows`` rows (label, score) into ``--files`` Parquet files in a
temporary folder, then evaluates them with a BinaryAccumulator:

* one process reading the files with pyarrow, batch by batch, into ``update_many``;
* ``streameval.dask.evaluate`` on a ``distributed.LocalCluster`` of 1 and 2 worker processes;
* ``streameval.spark.evaluate`` on ``local[1]`` and ``local[2]`` sessions.

Each is timed from the call to the merged accumulator (cluster and session start
not included), best of ``--repeat`` runs; every result must equal the one
process's bit for bit. With ``--out``, the table replaces the part of the page
between the markers ``<!-- distributed-benchmark:start/end -->`` for that size.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import streameval as se  # noqa: E402


def write_dataset(folder: Path, rows: int, files: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for i, part in enumerate(np.array_split(np.arange(rows), files)):
        n = part.size
        y = rng.random(n) < 0.3
        score = 1 / (1 + np.exp(-rng.normal(y * 2.0 - 1.0, 1.5)))
        table = pa.table({"label": y.astype(np.int8), "score": score})
        pq.write_table(table, folder / f"part-{i:03d}.parquet", row_group_size=1 << 20)


def one_process(folder: Path) -> se.BinaryAccumulator:
    acc = se.BinaryAccumulator()
    for path in sorted(folder.glob("*.parquet")):
        for batch in pq.ParquetFile(path).iter_batches(batch_size=1 << 20, columns=["label", "score"]):
            acc.update_many(batch.column(0).to_numpy(), batch.column(1).to_numpy())
    return acc


def best_of(repeat: int, run):
    run()  # warm-up, not timed: imports, JIT, worker start
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def dask_runs(folder: Path, workers: int, repeat: int):
    import dask.dataframe as dd
    import distributed

    import streameval.dask as sed

    cluster = distributed.LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    )
    with distributed.Client(cluster):
        frame = dd.read_parquet(str(folder), columns=["label", "score"])
        result = best_of(repeat, lambda: sed.evaluate(frame, label="label", score="score"))
        parts = frame.npartitions
    cluster.close()
    return (*result, parts)


def spark_runs(folder: Path, cores: int, repeat: int):
    from pyspark.sql import SparkSession

    import streameval.spark as ses

    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master(f"local[{cores}]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.files.openCostInBytes", str(128 << 20))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    frame = spark.read.parquet(str(folder))
    parts = frame.rdd.getNumPartitions()
    floor, _ = best_of(repeat, lambda: frame.mapInArrow(_rows_only, "n long").collect())
    result = best_of(repeat, lambda: ses.evaluate(frame))
    spark.stop()
    return (*result, parts, floor)


def _rows_only(batches):
    """A mapInArrow that only counts rows: what Spark's hand-over of Arrow batches costs by itself."""
    yield pa.RecordBatch.from_pydict({"n": [sum(b.num_rows for b in batches)]})


def table(rows: int, results: list[tuple[str, float, int, object]], state_bytes: int, size_mb: float) -> str:
    base = results[0][1]
    lines = [
        f"{rows:,} rows ({size_mb:.0f} MB of Parquet), {platform.machine()}, {os.cpu_count()} cores, "
        f"best of the runs; state of one partition: {state_bytes:,} bytes.",
        "",
        "| how | partitions | seconds | rows/s | vs one process | equal to one process |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, seconds, parts, same in results:
        lines.append(
            f"| {name} | {parts} | {seconds:.2f} | {rows / seconds / 1e6:.1f} M | {base / seconds:.2f}x | {same} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip", default="", help="comma-separated: dask, spark")
    parser.add_argument("--out", help="a page to write the table into, between the markers")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    folder = Path(tempfile.mkdtemp(prefix="streameval-bench-"))
    try:
        write_dataset(folder, args.rows, args.files)
        size_mb = sum(p.stat().st_size for p in folder.glob("*.parquet")) / 1e6
        seconds, whole = best_of(args.repeat, lambda: one_process(folder))
        results = [("one process: pyarrow + update_many", seconds, 1, True)]
        first = sorted(folder.glob("*.parquet"))[0]
        part = se.BinaryAccumulator()
        t = pq.read_table(first)
        part.update_many(t.column("label").to_numpy(), t.column("score").to_numpy())
        state_bytes = len(se.to_bytes(part, level=1))
        if "dask" not in skip:
            for workers in (1, 2):
                seconds, acc, parts = dask_runs(folder, workers, args.repeat)
                results.append((f"Dask LocalCluster, {workers} worker process(es)", seconds, parts, acc == whole))
        if "spark" not in skip:
            for cores in (1, 2):
                seconds, acc, parts, floor = spark_runs(folder, cores, args.repeat)
                results.append((f"Spark local[{cores}]", seconds, parts, acc == whole))
                results.append((f"Spark local[{cores}], a mapInArrow that only counts rows", floor, parts, "-"))
        text = table(args.rows, results, state_bytes, size_mb)
        print(text)
        if args.out:
            page = Path(args.out)
            start = f"<!-- distributed-benchmark:{args.rows}:start -->"
            end = f"<!-- distributed-benchmark:{args.rows}:end -->"
            body = page.read_text()
            if start in body:
                before, rest = body.split(start, 1)
                after = rest.split(end, 1)[1]
                page.write_text(f"{before}{start}\n{text}\n{end}{after}")
            else:
                page.write_text(f"{body.rstrip()}\n\n{start}\n{text}\n{end}\n")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
