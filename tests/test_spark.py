"""streameval.spark on a real local Spark session (local[2]): every kind equals one process over the same rows."""

from __future__ import annotations

import os
import shutil
import sys

import numpy as np
import pytest

pytest.importorskip("pyarrow")
pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'streameval[spark]'")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import streameval as se  # noqa: E402
import streameval.spark as ses  # noqa: E402

pytestmark = pytest.mark.slow

N = 250_000


def _java_missing() -> bool:
    return shutil.which("java") is None and not os.environ.get("JAVA_HOME")


@pytest.fixture(scope="module")
def spark():
    if _java_missing():
        pytest.skip("Java is not installed (no java on PATH, no JAVA_HOME): Spark cannot start here")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers run this interpreter, with streameval on its path
    session = (
        SparkSession.builder.master("local[2]")
        .appName("streameval-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.files.openCostInBytes", str(128 << 20))  # one partition a Parquet file
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("FATAL")  # a refused row is an expected failure in these tests
    yield session
    session.stop()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """10^6 rows in 8 Parquet files (8 partitions when Spark reads them)."""
    rng = np.random.default_rng(0)
    y = rng.random(N) < 0.3
    p = 1 / (1 + np.exp(-rng.normal(y * 2.0 - 1.0, 1.5)))
    cls = rng.integers(0, 3, N)
    probs = rng.dirichlet([1.0, 1.0, 1.0], N)
    columns = {
        "label": y.astype(np.int64),
        "score": p,
        "weight": rng.uniform(0.5, 2.0, N),
        "region": np.where(rng.random(N) < 0.4, "eu", "us"),
        "tier": rng.integers(0, 2, N),
        "cls": cls,
        "p0": probs[:, 0],
        "p1": probs[:, 1],
        "p2": probs[:, 2],
        "target": rng.normal(10.0, 3.0, N),
    }
    columns["predicted"] = columns["target"] + rng.normal(0.0, 1.0, N)
    table = pa.table(columns)
    flat = pa.array(probs.reshape(-1))
    table = table.append_column("probs", pa.FixedSizeListArray.from_arrays(flat, 3).cast(pa.list_(pa.float64())))
    table = table.append_column("probs_struct", pa.StructArray.from_arrays([pa.array(probs[:, i]) for i in range(3)],
                                                                           names=["a", "b", "c"]))  # fmt: skip
    path = tmp_path_factory.mktemp("spark-parquet")
    for i, part in enumerate(np.array_split(np.arange(N), 8)):
        pq.write_table(table.take(part), path / f"part-{i}.parquet")
    return str(path), columns, probs


@pytest.fixture(scope="module")
def frame(spark, data):
    df = spark.read.parquet(data[0])
    assert df.rdd.getNumPartitions() == 8
    return df


def test_binary_from_parquet_equals_one_process_bit_for_bit(frame, data):
    _, cols, _ = data
    acc = ses.evaluate(frame, label="label", score="score")
    one = se.BinaryAccumulator()
    one.update_many(cols["label"], cols["score"])
    assert acc == one
    assert acc.n == N
    assert acc.get().auc == one.get().auc


def test_the_merge_tree_and_the_driver_merge_agree(frame, data, monkeypatch):
    _, cols, _ = data
    one = se.Segmented(se.BinaryAccumulator)
    one.update_many(cols["region"], cols["label"], cols["score"])
    on_driver = ses.evaluate(frame, by="region")  # 8 partitions: the driver merges their states
    monkeypatch.setattr(ses, "DRIVER_MERGES_UP_TO", 2)
    for depth in (1, 2, 3):
        assert ses.evaluate(frame, by="region", depth=depth) == one == on_driver


def test_weights_and_options(frame, data):
    _, cols, _ = data
    acc = ses.evaluate(frame, weight="weight", threshold=0.3, exact_up_to=0)
    one = se.BinaryAccumulator(threshold=0.3, exact_up_to=0)
    one.update_many(cols["label"], cols["score"], cols["weight"])
    r, ref = acc.get(), one.get()
    assert r.threshold == 0.3 and not r.is_exact
    np.testing.assert_allclose(r.pos, ref.pos, rtol=1e-12)
    np.testing.assert_allclose(r.neg, ref.neg, rtol=1e-12)
    assert r.tp == pytest.approx(ref.tp, rel=1e-12)
    assert r.auc == pytest.approx(ref.auc, abs=1e-12)
    assert r.brier == pytest.approx(ref.brier, rel=1e-12)


def test_boolean_and_text_labels(frame, data):
    _, cols, _ = data
    one = se.BinaryAccumulator()
    one.update_many(cols["label"], cols["score"])
    as_bool = ses.evaluate(frame.selectExpr("label = 1 as label", "score"))
    assert as_bool.get().auc == one.get().auc and as_bool.n == N
    assert (as_bool.get().tp, as_bool.get().fp) == (one.get().tp, one.get().fp)
    as_text = frame.selectExpr("if(label = 1, 'fraud', 'ok') as label", "score")
    named = ses.evaluate(as_text, pos_label="fraud", neg_label="ok")
    assert named.get().auc == one.get().auc and named.get().tp == one.get().tp


def test_segments_one_column_and_crossed(frame, data):
    _, cols, _ = data
    by_region = ses.evaluate(frame, by="region")
    assert isinstance(by_region, se.Segmented)
    one = se.Segmented(se.BinaryAccumulator)
    one.update_many(cols["region"], cols["label"], cols["score"])
    assert sorted(by_region.segments) == ["eu", "us"]
    assert by_region == one
    crossed = ses.evaluate(frame, by=["region", "tier"], weight="weight")
    assert sorted(crossed.segments) == [("eu", 0), ("eu", 1), ("us", 0), ("us", 1)]
    # max_segments as Segmented takes it: 4 crossed segments are refused at 3 (on a worker or the driver), kept at 4
    with pytest.raises(ValueError, match="more than max_segments=3"):
        ses.evaluate(frame, by=["region", "tier"], weight="weight", max_segments=3)
    with pytest.raises(ValueError, match="max_segments must be >= 1, got 0"):
        ses.evaluate(frame, by="region", max_segments=0)
    four = ses.evaluate(frame, by=["region", "tier"], weight="weight", max_segments=4)
    assert four.max_segments == 4 and sorted(four.segments) == sorted(crossed.segments)
    assert all(four[key] == crossed[key] for key in crossed.segments)
    for key in crossed.segments:
        rows = (cols["region"] == key[0]) & (cols["tier"] == key[1])
        ref = se.BinaryAccumulator()
        ref.update_many(cols["label"][rows], cols["score"][rows], cols["weight"][rows])
        assert crossed[key].get().auc == pytest.approx(ref.get().auc, abs=1e-12)
        assert crossed[key].n == pytest.approx(ref.n, rel=1e-12)
    ref = se.Segmented(se.BinaryAccumulator)
    ref.update_many(list(zip(cols["region"], cols["tier"].tolist(), strict=True)), cols["label"], cols["score"],
                    w=cols["weight"])  # fmt: skip
    assert crossed.get().equalized_odds_difference == pytest.approx(ref.get().equalized_odds_difference, abs=1e-12)


def test_multiclass_as_array_struct_columns_and_labels(frame, data):
    _, cols, probs = data
    one = se.MulticlassAccumulator(classes=[0, 1, 2])
    one.update_many(cols["cls"], probs)
    as_array = ses.evaluate(frame, label="cls", score="probs", kind="multiclass", classes=[0, 1, 2])
    assert as_array == one
    as_columns = ses.evaluate(frame, label="cls", score=["p0", "p1", "p2"], kind="multiclass", classes=[0, 1, 2])
    assert as_columns == one
    named = frame.selectExpr("element_at(array('a', 'b', 'c'), cast(cls + 1 as int)) as cls", "probs_struct")
    as_struct = ses.evaluate(named, label="cls", score="probs_struct", kind="multiclass")
    ref = se.MulticlassAccumulator(classes=["a", "b", "c"])
    ref.update_many(np.array(["a", "b", "c"])[cols["cls"]], probs)
    assert as_struct.classes == ("a", "b", "c")
    assert as_struct == ref
    renamed = named.selectExpr("cls", "probs_struct.a as a", "probs_struct.b as b", "probs_struct.c as c")
    assert ses.evaluate(renamed, label="cls", score=["a", "b", "c"], kind="multiclass", classes=["a", "b", "c"]) == ref
    with pytest.raises(ValueError, match=r"score \['b', 'a', 'c'\] names the classes' columns in another order"):
        ses.evaluate(renamed, label="cls", score=["b", "a", "c"], kind="multiclass", classes=["a", "b", "c"])
    # the fields' names in another order: read by position they would be other classes' scores, silently
    with pytest.raises(ValueError, match=r"classes \['b', 'a', 'c'\] name the fields of struct column 'probs_struct'"):
        ses.evaluate(named, label="cls", score="probs_struct", kind="multiclass", classes=["b", "a", "c"])
    predicted = frame.selectExpr("cls", "cast(p0 > 0.5 as long) as guess")
    labels = ses.evaluate(predicted, label="cls", score="guess", kind="multiclass", classes=[0, 1, 2])
    ref = se.MulticlassAccumulator(classes=[0, 1, 2])
    ref.update_many(cols["cls"], (cols["p0"] > 0.5).astype(np.int64))
    assert labels == ref
    as_map = named.selectExpr("cls", "map('a', probs_struct.a, 'b', probs_struct.b, 'c', probs_struct.c) as m")
    learnt = ses.evaluate(as_map, label="cls", score="m", kind="multiclass")
    ref_learnt = se.MulticlassAccumulator()
    ref_learnt.update_many(np.array(["a", "b", "c"])[cols["cls"]], [dict(zip("abc", r, strict=True)) for r in probs])
    assert set(learnt.classes) == {"a", "b", "c"}
    assert learnt.get().macro_auc == pytest.approx(ref_learnt.get().macro_auc, abs=1e-12)
    assert learnt.get().accuracy == ref_learnt.get().accuracy
    assert ses.evaluate(as_map, label="cls", score="m", kind="multiclass", classes=["a", "b", "c"]) == as_struct
    with pytest.raises(ValueError, match="classes="):
        ses.evaluate(frame, label="cls", score="probs", kind="multiclass")
    with pytest.raises(ValueError, match="4 labels"):
        ses.evaluate(frame, label="cls", score="probs_struct", kind="multiclass", classes=[0, 1, 2, 3])


def test_regression_and_scores(frame, data):
    _, cols, _ = data
    reg = ses.evaluate(frame, label="target", score="predicted", kind="regression")
    ref = se.RegressionAccumulator()
    ref.update_many(cols["target"], cols["predicted"])
    got, want = reg.to_state(), ref.to_state()  # counts exactly; float sums (moments) to rounding
    assert got["n"] == want["n"] == N
    for name in ("keys", "neg", "pos"):
        assert np.array_equal(got["abs_error_histogram"][name], want["abs_error_histogram"][name])
    # weight, mean and m2 (a mean's rounding, mean_lo, is there or not as the sums went)
    np.testing.assert_allclose(got["y"][:3] + got["error"][:3], want["y"][:3] + want["error"][:3], rtol=1e-9)
    assert reg.get().rmse == pytest.approx(ref.get().rmse, rel=1e-12)
    assert reg.get().r2 == pytest.approx(ref.get().r2, rel=1e-12)
    assert reg.get().mae == pytest.approx(np.mean(np.abs(cols["target"] - cols["predicted"])), rel=1e-12)
    scores = ses.evaluate(frame, score="score", weight="weight", kind="scores", by="region")
    for name in ("eu", "us"):
        rows = cols["region"] == name
        ref = se.ScoreAccumulator()
        ref.update_many(cols["score"][rows], cols["weight"][rows])
        assert scores[name].get().quantile(0.5) == pytest.approx(ref.get().quantile(0.5), rel=1e-12)
        assert scores[name].n == pytest.approx(ref.n, rel=1e-12)


def test_paired_two_models_columns_and_a_bad_row(frame, data, spark):
    _, cols, _ = data
    paired = ses.evaluate(frame, label="label", score=["score", "p0"], kind="paired", threshold=0.5, by="region")
    for name in ("eu", "us"):
        rows = cols["region"] == name
        ref = se.PairedAccumulator(threshold=0.5)
        ref.update_many(cols["label"][rows], cols["score"][rows], cols["p0"][rows])
        assert paired[name] == ref  # whole counts: bit for bit
    whole = paired.get().overall
    assert whole.a_accuracy == pytest.approx(np.mean((cols["score"] >= 0.5) == cols["label"]), rel=1e-14)
    assert whole.b_accuracy == pytest.approx(np.mean((cols["p0"] >= 0.5) == cols["label"]), rel=1e-14)
    with pytest.raises(ValueError, match=r"kind='paired' needs score=\[column of model A, column of model B\]"):
        ses.evaluate(frame, label="label", score="score", kind="paired")
    bad = spark.createDataFrame([(1, 1, 0), (0, 0, 1), (1, 1, 2)], ["y", "a", "b"]).coalesce(1)
    with pytest.raises(ValueError, match=r"column 'b', row 2 of partition 0 \(y=1, a=1, b=2\)"):
        ses.evaluate(bad, label="y", score=["a", "b"], kind="paired")


def test_empty_partitions_and_an_empty_frame(spark):
    rows = [(1, 0.9), (0, 0.1), (1, 0.8)]
    sparse = spark.createDataFrame(spark.sparkContext.parallelize(rows, 6), ["label", "score"])
    sizes = sparse.rdd.mapPartitions(lambda part: [sum(1 for _ in part)]).collect()
    assert sizes.count(0) == 3 and sum(sizes) == 3  # half the partitions hold no row
    acc = ses.evaluate(sparse)
    ref = se.BinaryAccumulator()
    ref.update_many([1, 0, 1], [0.9, 0.1, 0.8])
    assert acc == ref
    df = sparse
    empty = ses.evaluate(df.limit(0))
    assert empty == se.BinaryAccumulator() and empty.n == 0
    empty_segments = ses.evaluate(df.filter("score > 5"), by="label")
    assert isinstance(empty_segments, se.Segmented) and len(empty_segments) == 0


def _bad_frame(spark, labels, scores=None):
    n = len(labels)
    good = spark.createDataFrame([(i % 2, 0.5) for i in range(40)], ["label", "score"]).repartition(2)
    bad = spark.createDataFrame(list(zip(labels, scores or [0.5] * n, strict=True)), ["label", "score"]).coalesce(1)
    return good.union(bad)


def test_a_partition_of_bad_labels_names_the_column_and_a_row(spark):
    df = _bad_frame(spark, [3, 4, 5])
    with pytest.raises(ValueError) as info:
        ses.evaluate(df)
    message = str(info.value)
    assert "column 'label'" in message and "row 0 of partition 2" in message and "got 3" in message, message
    late = _bad_frame(spark, [1, 0, 1, 7])
    with pytest.raises(ValueError, match=r"column 'label', row 3 of partition 2 \(label=7, score=0.5\)"):
        ses.evaluate(late)
    nulls = _bad_frame(spark, [1, None, 0])
    with pytest.raises(ValueError, match="column 'label' is null at row 1 of partition 2"):
        ses.evaluate(nulls)
    nan = _bad_frame(spark, [1, 0, 1], [0.2, 0.3, float("nan")])
    with pytest.raises(ValueError, match="column 'score', row 2 of partition 2"):
        ses.evaluate(nan)
    segmented = _bad_frame(spark, [1, 1, 9]).withColumn("region", pyspark.sql.functions.lit("eu"))
    with pytest.raises(ValueError, match=r"column 'label', row 2 of partition 2 .*segment 'eu'"):
        ses.evaluate(segmented, by="region")
    # the session is fine afterwards, and a good frame counts as before
    assert ses.evaluate(_bad_frame(spark, [1, 0])).n == 42


def test_uneven_class_scores_are_named(spark):
    df = spark.createDataFrame([(0, [0.5, 0.5]), (1, [0.2, 0.8]), (1, [0.1, 0.2, 0.7])], ["y", "p"]).coalesce(1)
    with pytest.raises(ValueError, match="column 'p' holds 3 class scores at row 2 of partition 0"):
        ses.evaluate(df, label="y", score="p", kind="multiclass", classes=[0, 1])


def test_a_worker_without_streameval_is_explained():
    text = "An exception was thrown from the Python worker:\nModuleNotFoundError: No module named 'pyarrow'\n"
    assert ses._missing_module(RuntimeError(text)) == "pyarrow"
    assert ses._missing_module(RuntimeError("Job aborted")) is None


def test_bad_arguments_are_named_before_any_job(frame):
    with pytest.raises(ValueError, match="'nope'"):
        ses.evaluate(frame, score="nope")
    with pytest.raises(ValueError, match=r"kind must be one of .* 'ranking'"):
        ses.evaluate(frame, kind="ranking")
    with pytest.raises(ValueError, match="depth must be an integer >= 1, got 0"):
        ses.evaluate(frame, depth=0)
    with pytest.raises(TypeError, match=r"score must be a column name .* 3"):
        ses.evaluate(frame, score=3)
    with pytest.raises(TypeError, match="BinaryAccumulator options \\['colour'\\]"):
        ses.evaluate(frame, colour="red")
    with pytest.raises(ValueError, match="threshold"):
        ses.evaluate(frame, threshold=float("nan"))
    with pytest.raises(ValueError, match="for kind='multiclass', not 'binary'"):
        ses.evaluate(frame, score="probs")


CONNECT_SCRIPT = """
import json, os, sys
import numpy as np
import pyarrow as pa, pyarrow.parquet as pq
from pyspark.sql import SparkSession
import streameval as se, streameval.spark as ses

folder = sys.argv[1]
rng = np.random.default_rng(3)
y = rng.random(200_000) < 0.3
s = rng.random(200_000) * 0.7 + 0.3 * y
g = np.where(rng.random(200_000) < 0.5, "a", "b")
for i, part in enumerate(np.array_split(np.arange(y.size), 4)):
    pq.write_table(pa.table({"label": y[part], "score": s[part], "g": g[part]}), f"{folder}/part-{i}.parquet")
spark = SparkSession.builder.remote("local[2]").getOrCreate()
df = spark.read.parquet(folder)
one = se.BinaryAccumulator()
one.update_many(y, s)
seg = se.Segmented(se.BinaryAccumulator)
seg.update_many(g, y, s)
out = {"session": type(spark).__module__, "equal": ses.evaluate(df) == one, "segments": ses.evaluate(df, by="g") == seg}
try:
    ses.evaluate(spark.createDataFrame([(1, 0.5), (5, 0.5)], ["label", "score"]).coalesce(1))
except ValueError as exc:
    out["error"] = str(exc)
spark.stop()
print(json.dumps(out))
"""


def test_spark_connect_merges_on_the_driver(tmp_path):
    """A Spark Connect session (no RDDs), started locally in its own process: same result, same errors."""
    import importlib.util
    import json
    import subprocess

    if _java_missing():
        pytest.skip("Java is not installed (no java on PATH, no JAVA_HOME): Spark cannot start here")
    if importlib.util.find_spec("grpc") is None:
        pytest.skip("Spark Connect's client is not installed: pip install 'pyspark[connect]'")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, "-c", CONNECT_SCRIPT, str(tmp_path)], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["session"].startswith("pyspark.sql.connect")
    assert out["equal"] and out["segments"]
    assert "column 'label', row 1 of partition 0 (label=5, score=0.5)" in out["error"]


def test_decimal_columns_are_read_as_floats(spark):
    """A DecimalType column (as a table of amounts or a database's NUMERIC gives it) reaches the workers as
    pyarrow decimals: read as the nearest floats, for labels and scores, regression targets and weights."""
    from decimal import Decimal

    from pyspark.sql.types import DecimalType, LongType, StructField, StructType

    rng = np.random.default_rng(8)
    n = 5000
    y = (rng.random(n) < 0.4).astype(np.int64)
    score, target, weight = rng.random(n).round(4), rng.normal(50.0, 10.0, n).round(2), rng.uniform(1, 2, n).round(3)
    schema = StructType([
        StructField("label", LongType()), StructField("score", DecimalType(6, 4)),
        StructField("target", DecimalType(8, 2)), StructField("weight", DecimalType(5, 3)),
    ])  # fmt: skip
    rows = [(int(a), Decimal(str(b)), Decimal(str(c)), Decimal(str(d))) for a, b, c, d in
            zip(y, score, target, weight, strict=True)]  # fmt: skip
    df = spark.createDataFrame(rows, schema).repartition(3)
    want = se.BinaryAccumulator()
    want.update_many(y, score, w=weight)
    got = ses.evaluate(df, label="label", score="score", weight="weight")
    assert got.get().auc == pytest.approx(want.get().auc, rel=1e-12)
    assert got.n == want.n == pytest.approx(weight.sum(), rel=1e-12)
    reg = ses.evaluate(df, label="target", score="score", kind="regression")
    ref = se.RegressionAccumulator()
    ref.update_many(target, score)
    assert reg.n == ref.n == n
    assert reg.get().mae == pytest.approx(ref.get().mae, rel=1e-12)
