"""streameval.dask on a real distributed.LocalCluster with 2 worker processes over Parquet files."""

from __future__ import annotations

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

import dask  # noqa: E402
import dask.bag as db  # noqa: E402

import streameval as se  # noqa: E402
import streameval.dask as sed  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def parquet(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 1_200_000
    y = rng.random(n) < 0.3
    p = 1 / (1 + np.exp(-rng.normal(y * 2.0 - 1.0, 1.5)))
    frame = pd.DataFrame({
        "label": y.astype(np.int64),
        "score": p,
        "weight": rng.uniform(0.5, 2.0, n),
        "region": np.where(rng.random(n) < 0.4, "eu", "us"),
        "c0": rng.random(n), "c1": rng.random(n), "c2": rng.random(n),
        "cls": rng.integers(0, 3, n),
    })  # fmt: skip
    path = tmp_path_factory.mktemp("parquet")
    for i, part in enumerate(np.array_split(np.arange(n), 8)):
        frame.iloc[part].to_parquet(path / f"part-{i}.parquet")
    return path, frame


def test_dask_dataframe_on_a_local_cluster_equals_one_process(client, parquet):
    path, frame = parquet
    ddf = dd.read_parquet(str(path))
    assert ddf.npartitions == 8
    acc = sed.evaluate(ddf, label="label", score="score")
    one = se.BinaryAccumulator()
    one.update_many(frame["label"].to_numpy(), frame["score"].to_numpy())
    assert acc == one  # bit for bit
    assert acc.get().n == 1_200_000
    weighted = sed.evaluate(ddf, label="label", score="score", weight="weight")
    ref = se.BinaryAccumulator()
    ref.update_many(frame["label"].to_numpy(), frame["score"].to_numpy(), frame["weight"].to_numpy())
    np.testing.assert_allclose(weighted.get().neg, ref.get().neg, rtol=1e-12)
    assert weighted.get().auc == pytest.approx(ref.get().auc, abs=1e-12)


def test_segments_bag_and_other_kinds(client, parquet):
    path, frame = parquet
    ddf = dd.read_parquet(str(path))
    by_region = sed.evaluate(ddf, label="label", score="score", by="region")
    for name in ("eu", "us"):
        sub = frame[frame["region"] == name]
        ref = se.BinaryAccumulator()
        ref.update_many(sub["label"].to_numpy(), sub["score"].to_numpy())
        assert by_region[name] == ref
    assert isinstance(by_region, se.Segmented) and sorted(by_region.segments) == ["eu", "us"]
    one = se.Segmented(se.BinaryAccumulator)
    one.update_many(frame["region"], frame["label"].to_numpy(), frame["score"].to_numpy())
    assert all(by_region[k] == one[k] for k in one.segments)
    crossed = sed.evaluate(ddf, label="label", score="score", by=["region", "label"])
    assert sorted(crossed.segments) == [("eu", 0), ("eu", 1), ("us", 0), ("us", 1)]
    assert crossed.get()[("eu", 1)].n == int(((frame["region"] == "eu") & (frame["label"] == 1)).sum())
    # max_segments as Segmented takes it: 4 crossed segments are refused at 3 (by a partition or a merge), kept at 4
    with pytest.raises(ValueError, match="more than max_segments=3"):
        sed.evaluate(ddf, label="label", score="score", by=["region", "label"], max_segments=3)
    with pytest.raises(ValueError, match="max_segments must be >= 1, got 0"):
        sed.evaluate(ddf, label="label", score="score", by="region", max_segments=0)
    four = sed.evaluate(ddf, label="label", score="score", by=["region", "label"], max_segments=4)
    assert four.max_segments == 4 and sorted(four.segments) == sorted(crossed.segments)
    assert all(four[key] == crossed[key] for key in crossed.segments)
    multi = sed.evaluate(
        ddf, label="cls", score=["c0", "c1", "c2"], accumulator=se.MulticlassAccumulator(classes=[0, 1, 2])
    )
    ref = se.MulticlassAccumulator(classes=[0, 1, 2])
    ref.update_many(frame["cls"].to_numpy(), frame[["c0", "c1", "c2"]].to_numpy())
    assert multi == ref
    small = frame.iloc[:20_000]
    bag = db.from_sequence(list(zip(small["label"].tolist(), small["score"].tolist(), strict=True)), npartitions=5)
    from_bag = sed.evaluate(bag, accumulator=lambda: se.BinaryAccumulator(threshold=0.3))
    ref = se.BinaryAccumulator(threshold=0.3)
    ref.update_many(small["label"].to_numpy(), small["score"].to_numpy())
    assert from_bag == ref
    with pytest.raises(ValueError, match="'nope'"):
        sed.evaluate(ddf, label="label", score="nope")


def test_score_regression_and_paired_accumulators_from_a_frame(client, parquet):
    """Every kind from DataFrame columns: scores alone (no label), true and predicted values, two models'
    columns; the counts equal one process's (the float sums of scores and of weights to 1e-12), with segments too."""
    path, frame = parquet
    ddf = dd.read_parquet(str(path))
    scores = sed.evaluate(ddf, score="score", accumulator=se.ScoreAccumulator)
    ref = se.ScoreAccumulator()
    ref.update_many(frame["score"].to_numpy())
    got, want_report = scores.get(), ref.get()
    np.testing.assert_array_equal(got.keys, want_report.keys)  # the counts exact; the moments are float sums
    np.testing.assert_array_equal(got.counts, want_report.counts)
    for name in ("n", "min", "max", "median"):
        assert getattr(got, name) == getattr(want_report, name)
    assert got.mean == pytest.approx(frame["score"].mean(), rel=1e-13)
    weighted = sed.evaluate(ddf, score="score", accumulator=se.ScoreAccumulator, weight="weight")
    want = np.average(frame["score"], weights=frame["weight"])  # weights summed in another order: not bit for bit
    assert weighted.get().mean == pytest.approx(want, rel=1e-12)
    assert weighted.get().weight == pytest.approx(frame["weight"].sum(), rel=1e-12)
    regression = sed.evaluate(ddf, label="c0", score="c1", accumulator=se.RegressionAccumulator)
    from sklearn import metrics as skm

    truth, predicted = frame["c0"].to_numpy(), frame["c1"].to_numpy()
    got = regression.get()
    assert got.n == truth.size
    assert got.mae == pytest.approx(skm.mean_absolute_error(truth, predicted), rel=1e-12)
    assert got.rmse == pytest.approx(np.sqrt(skm.mean_squared_error(truth, predicted)), rel=1e-12)
    assert got.r2 == pytest.approx(skm.r2_score(truth, predicted), rel=1e-9)
    paired = sed.evaluate(ddf, label="label", score=["c0", "c1"], accumulator=se.PairedAccumulator(threshold=0.5))
    ref = se.PairedAccumulator(threshold=0.5)
    ref.update_many(frame["label"].to_numpy(), frame["c0"].to_numpy(), frame["c1"].to_numpy())
    assert paired == ref and paired.get().a_accuracy == pytest.approx(np.mean((frame["c0"] >= 0.5) == frame["label"]))
    by_region = sed.evaluate(ddf, score="score", accumulator=se.ScoreAccumulator, by="region")
    for name in ("eu", "us"):
        one = se.ScoreAccumulator()
        one.update_many(frame.loc[frame["region"] == name, "score"].to_numpy())
        np.testing.assert_array_equal(by_region[name].get().counts, one.get().counts)
        assert by_region[name].get().n == one.get().n
    with pytest.raises(ValueError, match="label= is not read by a ScoreAccumulator"):
        sed.evaluate(ddf, label="label", score="score", accumulator=se.ScoreAccumulator)
    with pytest.raises(ValueError, match="two models' columns"):
        sed.evaluate(ddf, label="label", score="c0", accumulator=se.PairedAccumulator)
    with pytest.raises(ValueError, match="label= names"):
        sed.evaluate(ddf, score="score")


def test_the_exact_regime_survives_the_merge_tree(client):
    from sklearn.metrics import average_precision_score, brier_score_loss, roc_auc_score

    rng = np.random.default_rng(9)
    n = 40_000
    y = rng.random(n) < 0.3
    s = np.round(1 / (1 + np.exp(-rng.normal(y * 2.0 - 1.0, 1.5))), 3)  # about 1,000 distinct scores
    ddf = dd.from_pandas(pd.DataFrame({"label": y, "score": s}), npartitions=6)
    acc = sed.evaluate(ddf, label="label", score="score", split_every=2)
    r = acc.get()
    assert r.is_exact
    assert r.auc == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert r.average_precision == pytest.approx(average_precision_score(y, s), abs=1e-12)
    one = se.BinaryAccumulator()
    one.update_many(y, s)
    assert acc == one  # the calibration sums too: whole units add up exactly in any merge tree
    assert r.brier == pytest.approx(brier_score_loss(y, s), rel=1e-12)
    coarse = sed.evaluate(ddf, label="label", score="score", accumulator=lambda: se.BinaryAccumulator(exact_up_to=500))
    ref = se.BinaryAccumulator(exact_up_to=0)
    ref.update_many(y, s)
    assert not coarse.get().is_exact
    assert coarse.get().edges.tolist() == ref.get().edges.tolist()
    assert coarse.get().pos.tolist() == ref.get().pos.tolist()


def test_class_scores_held_in_one_column_and_dasks_text_of_them(client):
    """One score column holding each row's class scores (mappings class -> score, or arrays in the order of the
    classes given), kept as objects: the same accumulator as one process. Dask turns object columns into text by
    default; such text is refused by name, not read as predicted classes."""
    import dask

    rng = np.random.default_rng(4)
    n, classes = 3000, ["a", "b", "c"]
    y = [classes[i] for i in rng.integers(0, 3, n)]
    probs = rng.dirichlet(np.ones(3), n)
    rows = [dict(zip(classes, r, strict=True)) for r in probs.tolist()]
    frame = pd.DataFrame({"y": y, "probs": rows, "plist": list(probs)})
    learnt, fixed = se.MulticlassAccumulator(), se.MulticlassAccumulator(classes=classes)
    learnt.update_many(y, rows)
    fixed.update_many(y, probs)
    with dask.config.set({"dataframe.convert-string": False}):
        ddf = dd.from_pandas(frame, npartitions=4)
    assert sed.evaluate(ddf, label="y", score="probs", accumulator=se.MulticlassAccumulator) == learnt
    assert sed.evaluate(ddf, label="y", score="plist", accumulator=se.MulticlassAccumulator(classes=classes)) == fixed
    with dask.config.set({"dataframe.convert-string": True}):
        as_text = dd.from_pandas(frame, npartitions=4)
    with pytest.raises(ValueError, match=r"score column 'probs' holds text such as \"\{'a': .*convert-string"):
        sed.evaluate(as_text, label="y", score="probs", accumulator=se.MulticlassAccumulator)
    columns = dd.from_pandas(pd.DataFrame({"y": y, **{c: probs[:, i] for i, c in enumerate(classes)}}), npartitions=4)
    given = se.MulticlassAccumulator(classes=classes)
    assert sed.evaluate(columns, label="y", score=classes, accumulator=given) == fixed
    with pytest.raises(ValueError, match=r"score= names the classes' columns \['b', 'a', 'c'\] in another order"):
        sed.evaluate(columns, label="y", score=["b", "a", "c"], accumulator=given)


def test_decimals_as_objects_and_dasks_text_of_them(client):
    """Decimal scores kept as objects give the accumulator of their floats; Dask's text of them (its default
    convert-string) is refused by name, with the setting that keeps them, not read as text numbers."""
    from decimal import Decimal

    import dask

    rng = np.random.default_rng(6)
    n = 2000
    y, s = (rng.random(n) < 0.4).astype(np.int64), rng.random(n).round(4)
    frame = pd.DataFrame({"label": y, "score": pd.Series([Decimal(str(v)) for v in s], dtype=object)})
    want = se.BinaryAccumulator()
    want.update_many(y, s)
    with dask.config.set({"dataframe.convert-string": False}):
        ddf = dd.from_pandas(frame, npartitions=4)
    assert sed.evaluate(ddf, label="label", score="score") == want
    with dask.config.set({"dataframe.convert-string": True}):
        as_text = dd.from_pandas(frame, npartitions=4)
    refused = r"score column 'score' holds text such as '0\.\d+', not numbers: .*convert-string"
    with pytest.raises(ValueError, match=refused):
        sed.evaluate(as_text, label="label", score="score")
    with pytest.raises(ValueError, match=refused):
        sed.evaluate(as_text, score="score", accumulator=se.ScoreAccumulator)
    words = dd.from_pandas(frame.assign(score=s, w=["heavy"] * n), npartitions=4)  # weights of text: named w
    with pytest.raises(
        TypeError, match=r"the row labelled \d+ \(.*w='heavy'\): w must hold real numbers, got 'heavy'$"
    ):
        sed.evaluate(words, label="label", score="score", weight="w")


def test_a_refused_row_is_named_by_its_partition_and_its_label_in_the_frame():
    """The accumulator names a row's position within its partition; the frame's reader needs the row's label in
    the frame's index (and its values): a NaN score in the last partition, a negative weight, a missing segment."""
    y = np.array([1, 0, 1, 0, 1, 0, 1, 0])
    frame = pd.DataFrame(
        {"y": y, "s": np.linspace(0.1, 0.8, 8), "w": np.ones(8), "g": ["a", "b"] * 4}, index=np.arange(100, 108)
    )
    cases = [
        (frame.assign(s=frame.s.where(frame.index != 106)), {}, "partition 3, the row labelled 106 (y=1, s=nan): "
         "scores must not be NaN, got nan"),
        (frame.assign(w=frame.w.where(frame.index != 103, -2.0)), {"weight": "w"}, "partition 1, the row labelled "
         "103 (y=0, s=0.4, w=-2.0): w must be finite and >= 0, got -2.0"),
        (frame.assign(g=frame.g.where(frame.index != 105)), {"by": "g"}, "partition 2, the row labelled 105 (y=0, "
         "s=0.6, g=<NA>): segments must not hold missing values (None, NaN), got one"),
    ]  # fmt: skip
    with dask.config.set(scheduler="synchronous"):
        for data, options, message in cases:
            with pytest.raises((TypeError, ValueError)) as info:
                sed.evaluate(dd.from_pandas(data, npartitions=4), label="y", score="s", **options)
            assert str(info.value) == message
