"""The streameval command, driven as a user drives it."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streameval as se


def _cli(*args: str, stdin: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "streameval.cli", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def _in_process(*args: str) -> subprocess.CompletedProcess[str]:
    """The command run in this process (its exit status, standard output and error), as ``_cli`` runs it in
    another: for the many short runs of the tests of refusals, without starting Python each time."""
    import contextlib
    import io

    from streameval import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(list(args))
        except SystemExit as exc:  # as Python prints a SystemExit's text, and exits with 1 (or its number)
            if isinstance(exc.code, str):
                print(exc.code, file=err)
            status = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(list(args), status, out.getvalue(), err.getvalue())


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.3
    s = np.round(1 / (1 + np.exp(-rng.normal(y * 2 - 1, 1.5))), 6)
    region = np.where(rng.random(n) < 0.5, "eu", "us")
    w = np.round(rng.uniform(0.5, 2.0, n), 3)
    return y, s, region, w


def _write_csv(path, y, s, region, w):
    with open(path, "w") as fh:
        fh.write("label,score,region,weight\n")
        rows = zip(y.tolist(), s.tolist(), region.tolist(), w.tolist(), strict=True)
        fh.writelines(f"{int(a)},{b!r},{c},{d!r}\n" for a, b, c, d in rows)


def test_eval_csv_table_and_json_match_the_library(tmp_path):
    y, s, region, w = _data(3000)
    path = tmp_path / "scores.csv"
    _write_csv(path, y, s, region, w)
    out = json.loads(_cli("eval", str(path), "--json", "--weight", "weight").stdout)
    acc = se.BinaryAccumulator(pos_label=True, neg_label=False)
    acc.update_many(y, s, w)
    r = acc.get()
    assert out["rows"] == 3000
    assert out["overall"]["auc"] == pytest.approx(r.auc, abs=1e-15)
    assert out["overall"]["tp"] == pytest.approx(r.tp)
    from sklearn.metrics import brier_score_loss  # the scores are probabilities: calibration is reported too

    assert out["overall"]["brier"] == pytest.approx(brier_score_loss(y, s, sample_weight=w), rel=1e-12)
    assert out["overall"]["ece"] == pytest.approx(r.ece(), abs=1e-15)
    table = _cli("eval", str(path)).stdout
    assert "rows read: 3,000" in table
    plain = se.BinaryAccumulator()
    plain.update_many(y, s)
    assert f"{plain.get().auc:.6g}" in table


def test_segments_micro_macro_and_window(tmp_path):
    y, s, region, w = _data(4000, seed=1)
    path = tmp_path / "scores.csv"
    _write_csv(path, y, s, region, w)
    out = json.loads(_cli("eval", str(path), "--by", "region", "--window", "500", "--json").stdout)
    accs = {}
    for name in ("eu", "us"):
        acc = se.BinaryAccumulator()
        acc.update_many(y[region == name], s[region == name])
        accs[name] = acc
        assert out["segments"][name]["auc"] == pytest.approx(acc.get().auc, abs=1e-15)
    assert out["micro"]["auc"] == pytest.approx(se.micro(list(accs.values())).auc, abs=1e-15)
    m = se.macro(list(accs.values()))
    assert out["macro"]["f1"]["mean"] == pytest.approx(m.f1.mean) and out["macro"]["f1"]["std"] == pytest.approx(
        m.f1.std
    )
    last = se.BinaryAccumulator()
    last.update_many(y[-500:], s[-500:])
    assert out["window"]["auc"] == pytest.approx(last.get().auc, abs=1e-15) and out["window"]["n"] == 500


def test_max_segments_is_an_option_and_its_refusal_says_how_to_allow_more(tmp_path):
    """--by over a column of many values (a user id, say) stops at more than --max-segments (10,000 by default,
    the library's), naming the number and the setting; a larger one counts them all, each segment as the
    library counts its rows."""
    n = 60
    rng = np.random.default_rng(8)
    y, s = rng.random(n) < 0.5, np.round(rng.random(n), 4)
    users = np.array([f"u{i % 6}" for i in range(n)])
    path = tmp_path / "users.csv"
    _write_csv(path, y, s, users, np.ones(n))
    refused = _in_process("eval", str(path), "--by", "region", "--max-segments", "5")
    assert refused.returncode != 0
    assert "this would make 6 segments, more than max_segments=5" in refused.stderr
    assert "a larger max_segments allows more" in refused.stderr
    out = json.loads(_cli("eval", str(path), "--by", "region", "--max-segments", "6", "--json").stdout)
    assert sorted(out["segments"]) == [f"u{i}" for i in range(6)]
    for name in ("u0", "u5"):
        acc = se.BinaryAccumulator()
        acc.update_many(y[users == name], s[users == name])
        report = acc.get()
        assert out["segments"][name]["n"] == 10 and out["segments"][name]["accuracy"] == report.accuracy
        assert out["segments"][name]["brier"] == pytest.approx(report.brier, rel=1e-12)
    bad = _in_process("eval", str(path), "--by", "region", "--max-segments", "0")
    assert bad.returncode != 0 and "--max-segments must be at least 1, got 0" in bad.stderr


def test_crossed_segments_comparison_fairness_and_the_marked_table(tmp_path):
    fairlearn_metrics = pytest.importorskip("fairlearn.metrics")
    y, s, region, _ = _data(3000, seed=3)
    device = np.where(np.random.default_rng(4).random(3000) < 0.3, "mobile", "web")
    path = tmp_path / "scores.csv"
    with open(path, "w") as fh:
        fh.write("label,score,region,device\n")
        fh.writelines(f"{int(a)},{b!r},{c},{d}\n" for a, b, c, d in zip(y, s.tolist(), region, device, strict=True))
    out = json.loads(
        _cli("eval", str(path), "--by", "region,device", "--json", "--save-segments", str(tmp_path / "seg.sevl")).stdout
    )
    assert sorted(out["segments"]) == ["eu/mobile", "eu/web", "us/mobile", "us/web"]
    crossed = np.array([f"{a}/{b}" for a, b in zip(region, device, strict=True)])
    pred = s >= 0.5
    want = fairlearn_metrics.equalized_odds_difference(y, pred, sensitive_features=crossed)
    assert out["fairness"]["equalized_odds_difference"] == pytest.approx(want, abs=1e-12)
    aucs = {k: v["auc"] for k, v in out["segments"].items()}
    assert out["comparison"]["auc"]["worst"] == min(aucs, key=aucs.get)
    assert out["comparison"]["auc"]["difference"] == pytest.approx(max(aucs.values()) - min(aucs.values()), abs=1e-15)
    seg = se.load(tmp_path / "seg.sevl")
    assert seg.segments and seg.get()[("eu", "web")].n == int(((region == "eu") & (device == "web")).sum())
    table = _cli("eval", str(path), "--by", "region", "--by", "device").stdout
    worst_row = next(line for line in table.splitlines() if line.strip().startswith(out["comparison"]["auc"]["worst"]))
    assert "*" in worst_row and "equalized_odds_difference" in table
    report = _cli("report", str(tmp_path / "seg.sevl")).stdout
    assert "worst" in report and "eu/web" in report


def test_jsonl_gzip_and_stdin(tmp_path):
    y, s, _, _ = _data(1000, seed=2)
    path = tmp_path / "scores.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        for a, b in zip(y, s, strict=True):
            fh.write(json.dumps({"is_fraud": bool(a), "p": float(b)}) + "\n")
    out = json.loads(_cli("eval", str(path), "--label", "is_fraud", "--score", "p", "--json").stdout)
    acc = se.BinaryAccumulator()
    acc.update_many(y, s)
    assert out["overall"]["auc"] == pytest.approx(acc.get().auc, abs=1e-15)
    csv_text = "label,score\n" + "".join(f"{int(a)},{b!r}\n" for a, b in zip(y.tolist(), s.tolist(), strict=True))
    piped = json.loads(_cli("eval", "-", "--json", stdin=csv_text.encode()).stdout)
    assert piped["overall"] == out["overall"]


def test_bad_rows_stop_with_file_line_and_value_or_are_counted(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("label,score\n1,0.9\n0,abc\n2,0.3\n1,nan\n0,0.1\n")
    done = _cli("eval", str(path), check=False)
    assert done.returncode == 2
    assert f"{path}:3: score 'abc' is not a number" in done.stderr
    skipped = json.loads(_cli("eval", str(path), "--skip-bad", "--json").stdout)
    assert skipped["skipped"]["total"] == 3
    assert skipped["skipped"]["by_reason"] == {"label": 1, "score": 2}
    assert skipped["overall"]["n"] == 2
    missing = _cli("eval", str(path), "--score", "prob", check=False)
    assert missing.returncode == 2 and "missing column 'prob'" in missing.stderr


def test_three_shards_saved_merged_and_reported_equal_one_pass(tmp_path):
    y, s, region, w = _data(6000, seed=3)
    whole = tmp_path / "all.csv"
    _write_csv(whole, y, s, region, w)
    states = []
    for k, part in enumerate(np.array_split(np.arange(6000), 3)):
        shard = tmp_path / f"shard{k}.csv"
        _write_csv(shard, y[part], s[part], region[part], w[part])
        states.append(str(tmp_path / f"shard{k}.sevl"))
        _cli("eval", str(shard), "--save", states[-1])
    merged = str(tmp_path / "merged.sevl")
    _cli("merge", *states, "-o", merged)
    report = json.loads(_cli("report", merged, "--json").stdout)
    one = json.loads(_cli("eval", str(whole), "--json").stdout)["overall"]
    assert report["kind"] == "BinaryAccumulator"
    for key, value in one.items():
        assert report[key] == value, key
    assert "ROC AUC" in _cli("report", merged).stdout
    (tmp_path / "junk.sevl").write_bytes(b"not a state")
    bad = _cli("report", str(tmp_path / "junk.sevl"), check=False)
    assert bad.returncode != 0 and "not a streameval state" in bad.stderr


def test_ten_million_rows_in_constant_memory(tmp_path):
    rng = np.random.default_rng(4)
    y = rng.random(10**6) < 0.3
    s = rng.random(10**6)
    block = "".join(f"{int(a)},{b:.6f}\n" for a, b in zip(y.tolist(), s.tolist(), strict=True)).encode()
    small, big = tmp_path / "small.csv", tmp_path / "big.csv"
    small.write_bytes(b"label,score\n" + block)
    with open(big, "wb") as fh:
        fh.write(b"label,score\n")
        for _ in range(10):
            fh.write(block)
    probe = (
        "import sys, resource; from streameval.cli import main; "
        "main(['eval', sys.argv[1], '--json', '--no-progress']); "
        "print('peak', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)"
    )
    peaks = {}
    for name, path in (("small", small), ("big", big)):
        done = subprocess.run(
            [sys.executable, "-c", probe, str(path)],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        peaks[name] = int(done.stderr.split("peak")[1])  # KiB on Linux
        rows = json.loads(done.stdout)["rows"]
        assert rows == (10**6 if name == "small" else 10**7)
    assert peaks["big"] - peaks["small"] < 16 * 1024, peaks  # ten times the rows, < 16 MiB more


def test_exact_up_to_chooses_the_regime(tmp_path):
    from sklearn.metrics import average_precision_score, roc_auc_score

    y, s, region, w = _data(400, seed=4)
    path = tmp_path / "scores.csv"
    _write_csv(path, y, s, region, w)
    exact = json.loads(_cli("eval", str(path), "--json").stdout)["overall"]
    assert exact["auc"] == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert exact["average_precision"] == pytest.approx(average_precision_score(y, s), abs=1e-12)
    binned = json.loads(_cli("eval", str(path), "--json", "--exact-up-to", "0").stdout)["overall"]
    ref = se.BinaryAccumulator(exact_up_to=0)
    ref.update_many(y, s)
    assert binned["auc"] == pytest.approx(ref.get().auc, abs=1e-15) and binned["auc_lower"] < binned["auc_upper"]
    state = tmp_path / "all.sevl"
    _cli("eval", str(path), "--exact-up-to", "none", "--save", str(state))
    assert se.load(state).exact_up_to is None and se.load(state).get().is_exact
    bad = _cli("eval", str(path), "--exact-up-to", "-3", check=False)
    assert bad.returncode == 2 and "--exact-up-to" in bad.stderr and "-3" in bad.stderr


def test_drift_between_two_saved_score_states(tmp_path):
    from scipy.stats import ks_2samp

    rng = np.random.default_rng(5)
    ref, cur = np.round(rng.random(2000), 3), np.round(rng.random(1500) ** 1.5, 3)
    for name, scores in (("ref", ref), ("cur", cur)):
        acc = se.ScoreAccumulator()
        acc.update_many(scores)
        acc.save(tmp_path / f"{name}.sevl")
    out = json.loads(_cli("drift", str(tmp_path / "ref.sevl"), str(tmp_path / "cur.sevl"), "--json").stdout)
    assert out["ks"] == pytest.approx(ks_2samp(ref, cur).statistic, abs=1e-12) and out["exact"] is True
    table = _cli("drift", str(tmp_path / "ref.sevl"), str(tmp_path / "cur.sevl")).stdout
    assert "psi" in table and "wasserstein" in table
    labelled = se.BinaryAccumulator()
    labelled.update_many(rng.random(cur.size) < cur, cur)  # a binary state: the drift of its scores
    labelled.save(tmp_path / "binary.sevl")
    out = json.loads(_cli("drift", str(tmp_path / "ref.sevl"), str(tmp_path / "binary.sevl"), "--json").stdout)
    assert out["ks"] == pytest.approx(ks_2samp(ref, cur).statistic, abs=1e-12)
    se.RegressionAccumulator().save(tmp_path / "regression.sevl")
    bad = _cli("drift", str(tmp_path / "ref.sevl"), str(tmp_path / "regression.sevl"), check=False)
    assert bad.returncode != 0 and "ScoreAccumulator" in bad.stderr


def test_drift_of_each_segment_of_a_saved_segmented_state(tmp_path):
    """A segmented current state: each segment against a plain reference, or against the reference's segment of
    the same name, as the library's drift_by_segment gives them; a segment the reference lacks is named."""
    rng = np.random.default_rng(6)
    for name, n, shift in (("ref", 3000, 0.0), ("cur", 2000, 0.3)):
        region = rng.choice(["eu", "us"], n)
        score = np.round(np.clip(rng.random(n) + shift * (region == "us"), 0, 1), 4)
        path = tmp_path / f"{name}.csv"
        path.write_text("score,region\n" + "".join(f"{s},{r}\n" for s, r in zip(score, region, strict=True)))
        _cli("eval", str(path), "--kind", "scores", "--save", str(tmp_path / f"{name}.sevl"), "--no-progress")
        _cli("eval", str(path), "--kind", "scores", "--by", "region", "--save-segments",
             str(tmp_path / f"{name}-by.sevl"), "--no-progress")  # fmt: skip
    ref, ref_by, cur = (se.load(tmp_path / f) for f in ("ref.sevl", "ref-by.sevl", "cur-by.sevl"))
    for reference, want in ((ref, se.drift_by_segment(ref, cur)), (ref_by, se.drift_by_segment(ref_by, cur))):
        file = "ref.sevl" if reference is ref else "ref-by.sevl"
        out = json.loads(_cli("drift", str(tmp_path / file), str(tmp_path / "cur-by.sevl"), "--json").stdout)
        assert set(out["segments"]) == {"eu", "us"}
        for g in ("eu", "us"):
            assert out["segments"][g]["ks"] == want[g].ks and out["segments"][g]["n_current"] == want[g].n_current
    table = _cli("drift", str(tmp_path / "ref.sevl"), str(tmp_path / "cur-by.sevl")).stdout.splitlines()
    assert table[0].split()[:3] == ["segment", "ks", "ks_pvalue"] and {row.split()[0] for row in table[1:]} == {
        "eu", "us"}  # fmt: skip
    more = se.load(tmp_path / "cur-by.sevl")
    more.update_many(["asia"], [0.5])
    more.save(tmp_path / "more.sevl")
    bad = _cli("drift", str(tmp_path / "ref-by.sevl"), str(tmp_path / "more.sevl"), check=False)
    assert bad.returncode != 0 and "['asia']" in bad.stderr and "Traceback" not in bad.stderr
    bad = _cli("drift", str(tmp_path / "ref-by.sevl"), str(tmp_path / "cur.sevl"), check=False)
    assert bad.returncode != 0 and "the reference is segmented" in bad.stderr


def test_report_and_merge_of_every_kind_of_saved_state(tmp_path):
    """``report`` prints every scalar metric of a saved state of each kind (a paired one among them), and
    ``merge`` of two copies reports the doubled counts."""
    from sklearn import metrics as skm

    rng = np.random.default_rng(8)
    y, s = rng.random(300) < 0.4, rng.random(300)
    kinds = {
        "scores": (se.ScoreAccumulator(), (s,), "mean", float(np.mean(s))),
        "regression": (se.RegressionAccumulator(), (s, s * 0.9), "mae", float(skm.mean_absolute_error(s, s * 0.9))),
        "multiclass": (
            se.MulticlassAccumulator(classes=["a", "b"]),
            (np.where(y, "a", "b").tolist(), np.stack([s, 1 - s], 1)),
            "accuracy",
            float(skm.accuracy_score(np.where(y, "a", "b"), np.where(s >= 0.5, "a", "b"))),
        ),
        "paired": (
            se.PairedAccumulator(threshold=0.5),
            (y, s, 1 - s),
            "b_accuracy",
            float(skm.accuracy_score(y, (1 - s) >= 0.5)),
        ),
    }
    for name, (acc, columns, metric, want) in kinds.items():
        acc.update_many(*columns)
        acc.save(tmp_path / f"{name}.sevl")
        out = json.loads(_cli("report", str(tmp_path / f"{name}.sevl"), "--json").stdout)
        assert out["kind"] == type(acc).__name__ and out["n"] == 300
        assert out[metric] == pytest.approx(want, rel=1e-12), name
        assert metric in _cli("report", str(tmp_path / f"{name}.sevl")).stdout
        both = tmp_path / f"{name}2.sevl"
        _cli("merge", str(tmp_path / f"{name}.sevl"), str(tmp_path / f"{name}.sevl"), "-o", str(both))
        assert json.loads(_cli("report", str(both), "--json").stdout)["n"] == 600


def test_regression_and_scores_kinds_from_csv_and_json_lines(tmp_path):
    """--kind regression (true and predicted values) and --kind scores (scores alone), with weights, segments,
    a window and a saved state, against scikit-learn and numpy on the same rows; drift of the saved scores."""
    from scipy.stats import ks_2samp
    from sklearn import metrics as skm

    rng = np.random.default_rng(21)
    n = 3000
    truth = np.round(rng.normal(10.0, 3.0, n), 3)
    predicted = np.round(truth + rng.normal(0.0, 1.0, n), 3)
    region = rng.choice(["eu", "us"], n)
    w = np.round(rng.uniform(0.5, 2.0, n), 3)
    lines = ["target,pred,region,w"] + [
        f"{a},{b},{c},{d}" for a, b, c, d in zip(truth, predicted, region, w, strict=True)
    ]
    (tmp_path / "reg.csv").write_text("\n".join(lines) + "\n")
    out = json.loads(_cli("eval", str(tmp_path / "reg.csv"), "--kind", "regression", "--label", "target", "--score",
                          "pred", "--by", "region", "--window", "500", "--json", "--no-progress").stdout)  # fmt: skip
    assert out["kind"] == "regression" and out["rows"] == n
    assert out["overall"]["mae"] == pytest.approx(skm.mean_absolute_error(truth, predicted), rel=1e-12)
    assert out["overall"]["r2"] == pytest.approx(skm.r2_score(truth, predicted), rel=1e-10)
    assert out["window"]["rmse"] == pytest.approx(np.sqrt(skm.mean_squared_error(truth[-500:], predicted[-500:])))
    for name in ("eu", "us"):
        mine = region == name
        assert out["segments"][name]["mae"] == pytest.approx(skm.mean_absolute_error(truth[mine], predicted[mine]))
    assert set(out["comparison"]) == {"mae", "rmse", "r2"} and "fairness" not in out
    weighted = json.loads(_cli("eval", str(tmp_path / "reg.csv"), "--kind", "regression", "--label", "target",
                               "--score", "pred", "--weight", "w", "--json", "--no-progress").stdout)  # fmt: skip
    assert weighted["overall"]["mae"] == pytest.approx(skm.mean_absolute_error(truth, predicted, sample_weight=w))
    table = _cli("eval", str(tmp_path / "reg.csv"), "--kind", "regression", "--label", "target", "--score", "pred",
                 "--no-progress").stdout  # fmt: skip
    assert f"mae                    {skm.mean_absolute_error(truth, predicted):.6g}" in table

    scores, current = np.round(rng.random(n), 4), np.round(rng.random(n) ** 1.3, 4)
    for name, values in (("ref", scores), ("cur", current)):
        rows = [json.dumps({"score": float(v), "region": str(r)}) for v, r in zip(values, region, strict=True)]
        (tmp_path / f"{name}.jsonl").write_text("\n".join(rows) + "\n")
        saved = str(tmp_path / f"{name}.sevl")
        got = json.loads(_cli("eval", str(tmp_path / f"{name}.jsonl"), "--kind", "scores", "--save", saved, "--by",
                              "region", "--json", "--no-progress").stdout)  # fmt: skip
        assert got["overall"]["mean"] == pytest.approx(values.mean(), rel=1e-12)
        assert got["overall"]["median"] == np.quantile(values, 0.5, method="inverted_cdf")
        assert got["segments"]["eu"]["n"] == int((region == "eu").sum())
    drift = json.loads(_cli("drift", str(tmp_path / "ref.sevl"), str(tmp_path / "cur.sevl"), "--json").stdout)
    assert drift["ks"] == pytest.approx(ks_2samp(scores, current).statistic, abs=1e-12)


def test_multiclass_kind_from_class_score_columns_or_predicted_classes(tmp_path):
    """--kind multiclass: one score column per class (named by the columns, or --classes), or one column of
    predicted classes; against a multiclass accumulator fed the same values and scikit-learn."""
    from sklearn import metrics as skm

    rng = np.random.default_rng(22)
    n, classes = 2000, np.array(["cat", "dog", "bird"])
    truth = rng.choice(classes, n)
    probs = np.round(rng.dirichlet([2.0, 1.0, 1.0], n), 4)
    predicted = classes[probs.argmax(1)]
    region = np.where(np.arange(n) % 3 == 0, "eu", "us")
    lines = ["y,cat,dog,bird,pred,region"] + [
        f"{truth[i]},{probs[i, 0]},{probs[i, 1]},{probs[i, 2]},{predicted[i]},{region[i]}" for i in range(n)
    ]
    (tmp_path / "mc.csv").write_text("\n".join(lines) + "\n")
    out = json.loads(_cli("eval", str(tmp_path / "mc.csv"), "--kind", "multiclass", "--label", "y", "--score",
                          "cat,dog,bird", "--by", "region", "--save", str(tmp_path / "mc.sevl"), "--json",
                          "--no-progress").stdout)  # fmt: skip
    direct = se.MulticlassAccumulator(classes=list(classes))
    direct.update_many(truth.tolist(), probs)
    assert se.load(tmp_path / "mc.sevl") == direct
    want = np.mean([skm.roc_auc_score(truth == c, probs[:, k]) for k, c in enumerate(classes)])  # one-vs-rest
    assert out["overall"]["macro_auc"] == pytest.approx(want, abs=1e-12)
    eu = region == "eu"
    assert out["segments"]["eu"]["accuracy"] == pytest.approx(skm.accuracy_score(truth[eu], predicted[eu]))
    assert set(out["comparison"]) == {"accuracy", "macro_f1", "macro_auc"}
    renamed = json.loads(_cli("eval", str(tmp_path / "mc.csv"), "--kind", "multiclass", "--label", "pred", "--score",
                              "cat,dog,bird", "--classes", "cat,dog,bird", "--json").stdout)  # fmt: skip
    assert renamed["overall"]["accuracy"] == 1.0  # the predicted class is the top score's
    hard = json.loads(_cli("eval", str(tmp_path / "mc.csv"), "--kind", "multiclass", "--label", "y", "--score", "pred",
                           "--json", "--no-progress").stdout)  # fmt: skip
    assert hard["overall"]["accuracy"] == pytest.approx(skm.accuracy_score(truth, predicted), abs=1e-15)
    assert hard["overall"]["mean_f1"] == pytest.approx(skm.f1_score(truth, predicted, average="macro"), abs=1e-12)
    lines[5] = "fox,0.2,0.3,0.5,bird,eu"
    lines[9] = "cat,0.2,x,0.5,bird,eu"
    argv = ["--kind", "multiclass", "--label", "y", "--score", "cat,dog,bird"]
    skipped = _bad_rows_named_then_skipped(tmp_path, lines, argv, "bad.csv:6: label 'fox' is not one of the classes")
    assert skipped["overall"]["n"] == n - 2
    assert "score 'x' of 'dog' is not a number" in skipped["skipped"]["first"]["score"]


def test_multiclass_class_scores_held_in_one_column(tmp_path):
    """One --score column whose rows each hold the class scores: mappings class -> score (JSON Lines objects, a
    Parquet map or struct column; the classes learnt) or, with --classes, lists of the classes' scores (JSON Lines
    arrays, a Parquet list column); the same state as the library fed the same rows, segments and a window too. A
    list without --classes, a row of another kind, and a class name after mappings are bad rows, named or
    skipped."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(5)
    n, classes = 300, ["cat", "dog", "bird"]
    truth = [classes[i] for i in rng.integers(0, 3, n)]
    probs = np.round(rng.dirichlet([2.0, 1.0, 1.0], n), 4)
    region = ["eu" if i % 3 else "us" for i in range(n)]
    mappings = [dict(zip(classes, row, strict=True)) for row in probs.tolist()]
    (tmp_path / "mc.jsonl").write_text("".join(
        json.dumps({"y": truth[i], "probs": mappings[i], "plist": probs[i].tolist(), "region": region[i]}) + "\n"
        for i in range(n)
    ))  # fmt: skip
    pq.write_table(pa.table({
        "y": truth, "plist": pa.array(probs.tolist()), "region": region,
        "pmap": pa.array([list(m.items()) for m in mappings], type=pa.map_(pa.string(), pa.float64())),
        "pstruct": pa.StructArray.from_arrays([pa.array(probs[:, k]) for k in range(3)], names=classes),
    }), tmp_path / "mc.parquet")  # fmt: skip
    learnt = se.MulticlassAccumulator()
    learnt.update_many(truth, mappings)
    fixed = se.MulticlassAccumulator(classes=classes)
    fixed.update_many(truth, probs)
    base = ["--kind", "multiclass", "--label", "y", "--json", "--no-progress"]
    for name, argv, want in [
        ("mc.jsonl", ["--score", "probs"], learnt),
        ("mc.parquet", ["--score", "pmap"], learnt),
        ("mc.parquet", ["--score", "pstruct"], learnt),
        ("mc.jsonl", ["--score", "plist", "--classes", "cat,dog,bird"], fixed),
        ("mc.parquet", ["--score", "plist", "--classes", "cat,dog,bird"], fixed),
    ]:
        state = tmp_path / "state.sevl"
        out = json.loads(_cli("eval", str(tmp_path / name), *base, *argv, "--by", "region", "--window", "100",
                              "--save", str(state)).stdout)  # fmt: skip
        assert se.load(state) == want, (name, argv)
        assert out["overall"]["macro_auc"] == want.get().macro_auc
        eu = se.MulticlassAccumulator(classes=classes)
        eu.update_many([t for t, r in zip(truth, region, strict=True) if r == "eu"], probs[np.array(region) == "eu"])
        assert out["segments"]["eu"]["accuracy"] == eu.get().accuracy
        last = se.MulticlassAccumulator(classes=classes)
        last.update_many(truth[-100:], probs[-100:])
        assert out["window"]["accuracy"] == last.get().accuracy
    listed = _cli("eval", str(tmp_path / "mc.jsonl"), *base, "--score", "plist", check=False)
    assert listed.returncode == 2 and "mc.jsonl:1: score [" in listed.stderr and "--classes" in listed.stderr
    rows = (tmp_path / "mc.jsonl").read_text().splitlines()
    rows[3] = json.dumps({"y": "cat", "probs": "dog", "plist": [0.1, 0.9], "region": "eu"})  # a class, not scores
    rows[7] = json.dumps({"y": "dog", "probs": {"cat": "x"}, "plist": [0.1, "x", 0.9], "region": "eu"})
    (tmp_path / "bad.jsonl").write_text("\n".join(rows) + "\n")
    for argv, first in [
        (["--score", "probs"], "bad.jsonl:4: score 'dog' is not a mapping class -> score"),
        (["--score", "plist", "--classes", "cat,dog,bird"], "bad.jsonl:4: score [0.1, 0.9] is not a list of 3"),
    ]:
        bad = _cli("eval", str(tmp_path / "bad.jsonl"), *base, *argv, check=False)
        assert bad.returncode == 2 and first in bad.stderr, bad.stderr
        skipped = json.loads(_cli("eval", str(tmp_path / "bad.jsonl"), *base, *argv, "--skip-bad").stdout)
        assert skipped["skipped"]["by_reason"] == {"score": 2} and skipped["overall"]["n"] == n - 2


def _bad_rows_named_then_skipped(tmp_path, lines, argv, first_error):
    """``lines`` (a bad label and a bad score among them) refused at the first, named; then, with --skip-bad,
    both counted and skipped: the result."""
    (tmp_path / "bad.csv").write_text("\n".join(lines) + "\n")
    bad = _cli("eval", str(tmp_path / "bad.csv"), *argv, check=False)
    assert bad.returncode == 2 and first_error in bad.stderr, bad.stderr
    skipped = json.loads(_cli("eval", str(tmp_path / "bad.csv"), *argv, "--skip-bad", "--json", "--no-progress").stdout)
    assert skipped["skipped"]["by_reason"] == {"label": 1, "score": 1}
    return skipped


def test_paired_kind_from_two_score_columns(tmp_path):
    """--kind paired: labels and two models' score columns, with segments, a window, weights and a saved state,
    against a paired accumulator fed the same values, scikit-learn's accuracy and scipy's McNemar (binomial)."""
    from scipy.stats import binomtest
    from sklearn import metrics as skm

    rng = np.random.default_rng(23)
    n = 3000
    y = (rng.random(n) < 0.4).astype(int)
    a = np.round(np.clip(0.3 * y + 0.7 * rng.random(n), 0, 1), 4)
    b = np.round(np.clip(0.2 * y + 0.8 * rng.random(n), 0, 1), 4)
    region = rng.choice(["eu", "us"], n)
    w = np.round(rng.uniform(0.5, 2.0, n), 3)
    lines = ["y,model_a,model_b,region,w"] + [
        f"{t},{p},{q},{r},{v}" for t, p, q, r, v in zip(y, a, b, region, w, strict=True)
    ]
    (tmp_path / "ab.csv").write_text("\n".join(lines) + "\n")
    saved = str(tmp_path / "ab.sevl")
    out = json.loads(_cli("eval", str(tmp_path / "ab.csv"), "--kind", "paired", "--label", "y", "--score",
                          "model_a,model_b", "--threshold", "0.45", "--by", "region", "--window", "500", "--save",
                          saved, "--json", "--no-progress").stdout)  # fmt: skip
    direct = se.PairedAccumulator(threshold=0.45, pos_label=True, neg_label=False)  # as the command reads labels
    direct.update_many(y == 1, a, b)
    assert se.load(saved) == direct and out["kind"] == "paired" and out["rows"] == n
    assert out["overall"]["a_accuracy"] == pytest.approx(skm.accuracy_score(y, a >= 0.45), abs=1e-15)
    assert out["overall"]["b_f1"] == pytest.approx(skm.f1_score(y, b >= 0.45), abs=1e-12)
    right_a, right_b = (a >= 0.45) == y, (b >= 0.45) == y
    only_a, only_b = int((right_a & ~right_b).sum()), int((~right_a & right_b).sum())
    assert (out["overall"]["mcnemar_b"], out["overall"]["mcnemar_c"]) in ((only_a, only_b), (only_b, only_a))
    exact = binomtest(min(only_a, only_b), only_a + only_b, 0.5).pvalue
    assert out["overall"]["mcnemar_p_exact"] == pytest.approx(exact, rel=1e-9)
    last = slice(n - 500, n)
    assert out["window"]["a_accuracy"] == pytest.approx(skm.accuracy_score(y[last], a[last] >= 0.45), abs=1e-15)
    eu = region == "eu"
    assert out["segments"]["eu"]["b_accuracy"] == pytest.approx(skm.accuracy_score(y[eu], b[eu] >= 0.45))
    assert set(out["comparison"]) == {"a_accuracy", "b_accuracy", "a_f1", "b_f1"} and "fairness" not in out
    weighted = json.loads(_cli("eval", str(tmp_path / "ab.csv"), "--kind", "paired", "--label", "y", "--score",
                               "model_a,model_b", "--weight", "w", "--json", "--no-progress").stdout)  # fmt: skip
    want = skm.accuracy_score(y, a >= 0.5, sample_weight=w)
    assert weighted["overall"]["a_accuracy"] == pytest.approx(want, rel=1e-12)
    table = _cli("eval", str(tmp_path / "ab.csv"), "--kind", "paired", "--label", "y", "--score", "model_a,model_b",
                 "--no-progress").stdout  # fmt: skip
    assert f"a_accuracy         {skm.accuracy_score(y, a >= 0.5):.6g}" in table and "mcnemar_p_value" in table
    lines[7] = "1,0.5,x,eu,1.0"
    lines[9] = "2,0.5,0.5,eu,1.0"
    argv = ["--kind", "paired", "--label", "y", "--score", "model_a,model_b"]
    skipped = _bad_rows_named_then_skipped(tmp_path, lines, argv, "bad.csv:8: score 'x' of 'model_b' is not a number")
    assert skipped["overall"]["n"] == n - 2
    report = _cli("report", saved).stdout
    assert "mcnemar_p_value" in report


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--kind", "regression", "--threshold", "0.3"], ["--threshold", "--kind regression"]),
        (["--kind", "regression", "--pos-label", "yes"], ["--pos-label", "--kind regression"]),
        (["--kind", "regression", "--exact-up-to", "none"], ["--exact-up-to", "--kind regression"]),
        (["--kind", "scores", "--neg-label", "no"], ["--neg-label", "--kind scores"]),
        (["--kind", "gauss"], ["--kind", "'gauss'"]),
        (["--classes", "a,b"], ["--classes", "--kind binary"]),
        (["--kind", "multiclass", "--score", "a,b", "--classes", "a,b,c"], ["--classes", "3 classes", "2 score"]),
        (["--kind", "multiclass", "--score", "probs", "--classes", "a"], ["--classes", "1 classes", "a list"]),
        (["--kind", "paired"], ["--kind paired", "--score A,B", "'score'"]),
        (["--kind", "paired", "--score", "a,b,c"], ["--kind paired", "'a,b,c'"]),
        (["--kind", "paired", "--score", "a,a"], ["--kind paired", "'a,a'"]),
        (["--kind", "paired", "--score", "a,b", "--exact-up-to", "10"], ["--exact-up-to", "--kind paired"]),
        (["--kind", "paired", "--score", "a,b", "--classes", "a,b"], ["--classes", "--kind paired"]),
    ],
)
def test_an_option_of_another_kind_is_refused_by_name(tmp_path, argv, words):
    (tmp_path / "x.csv").write_text("label,score\n1.5,0.5\n")
    done = _cli("eval", str(tmp_path / "x.csv"), *argv, check=False)
    assert done.returncode != 0 and all(word in done.stderr for word in words), done.stderr


def test_a_bad_value_of_regression_or_scores_is_named_or_skipped(tmp_path):
    (tmp_path / "bad.csv").write_text("label,score\n1.5,2.0\n2.5,inf\nx,3.0\n4.0,4.5\n")
    done = _cli("eval", str(tmp_path / "bad.csv"), "--kind", "regression", check=False)
    assert done.returncode == 2 and "bad.csv:3: score 'inf' is not a finite number" in done.stderr, done.stderr
    skipped = json.loads(_cli("eval", str(tmp_path / "bad.csv"), "--kind", "regression", "--skip-bad", "--json",
                              "--no-progress").stdout)  # fmt: skip
    assert skipped["overall"]["n"] == 2 and skipped["skipped"]["by_reason"] == {"label": 1, "score": 1}
    assert skipped["overall"]["mae"] == pytest.approx(0.5)
    scores = json.loads(_cli("eval", str(tmp_path / "bad.csv"), "--kind", "scores", "--score", "label", "--skip-bad",
                             "--json", "--no-progress").stdout)  # fmt: skip
    assert scores["overall"]["n"] == 3 and scores["skipped"]["by_reason"] == {"score": 1}


def test_report_of_a_saved_label_join_gives_its_counts_and_merge_refuses_it(tmp_path):
    join = se.LabelJoin(se.BinaryAccumulator(), ttl=10.0)
    for i, (y, s) in enumerate([(1, 0.9), (0, 0.3), (1, 0.6), (0, 0.8)]):
        join.predict(i, s, t=float(i))
        if i % 2 == 0:
            join.label(i, y, t=float(i) + 0.5)
    join.label("never predicted", 1, t=4.0)
    join.save(tmp_path / "join.sevl")
    out = json.loads(_cli("report", str(tmp_path / "join.sevl"), "--json").stdout)
    assert out["kind"] == "LabelJoin" and out["join"] == join.counts() and out["n"] == join.get().n == 2
    assert out["join"]["pending"] == 2 and out["join"]["pending_labels"] == 1
    table = _cli("report", str(tmp_path / "join.sevl")).stdout
    assert "label join  matched 2, pending 2, pending_labels 1" in table
    _cli("report", str(tmp_path / "join.sevl"), "--html", str(tmp_path / "join.html"))
    page = (tmp_path / "join.html").read_text()
    assert "<h2>Labels</h2>" in page and "<tr><td>pending_labels</td><td>1</td></tr>" in page
    assert "<tr><td>matched</td><td>2</td></tr>" in page
    refused = _cli("merge", str(tmp_path / "join.sevl"), str(tmp_path / "join.sevl"), "-o", "x", check=False)
    assert refused.returncode != 0 and "cannot merge LabelJoin states" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_parquet_is_read_by_row_groups_and_a_bad_row_is_named_by_its_row(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    y, s, region, w = _data(5000, seed=5)
    frame = pd.DataFrame({"label": y.astype(int), "score": s, "region": region, "weight": w})
    frame.to_parquet(tmp_path / "scores.parquet", row_group_size=1000)
    out = json.loads(
        _cli("eval", str(tmp_path / "scores.parquet"), "--by", "region", "--weight", "weight", "--json").stdout
    )
    acc = se.BinaryAccumulator(pos_label=True, neg_label=False)
    acc.update_many(y, s, w)
    assert out["rows"] == 5000 and out["overall"]["auc"] == pytest.approx(acc.get().auc, abs=1e-15)
    (tmp_path / "no_suffix").write_bytes((tmp_path / "scores.parquet").read_bytes())  # found by its magic bytes
    assert json.loads(_cli("eval", str(tmp_path / "no_suffix"), "--json").stdout)["rows"] == 5000
    for label in (y, y.astype(float)):  # bool and whole-float labels read as 1 and 0, as in the other formats
        frame.assign(label=label).to_parquet(tmp_path / "typed.parquet", row_group_size=1000)
        typed = json.loads(_cli("eval", str(tmp_path / "typed.parquet"), "--weight", "weight", "--json").stdout)
        assert typed["overall"] == out["overall"]
    frame.loc[2500, "score"] = None
    frame.to_parquet(tmp_path / "bad.parquet", row_group_size=1000)
    bad = _cli("eval", str(tmp_path / "bad.parquet"), check=False)
    assert bad.returncode == 2 and "bad.parquet:2501" in bad.stderr and "score" in bad.stderr
    skipped = json.loads(_cli("eval", str(tmp_path / "bad.parquet"), "--skip-bad", "--json").stdout)
    assert skipped["skipped"]["total"] == 1 and skipped["overall"]["n"] == 4999


TRICKY = {
    "clean": "label,score,region\n1,0.9,eu\n0,0.2,us\n1,0.4,eu\n",
    "blank line": "label,score,region\n1,0.9,eu\n\n0,0.2,us\n",
    "spaces": "label,score,region\n 1 ,0.9,eu\n0, 0.2 ,us\n",
    "wide row": "label,score,region\n1,0.9,eu\n0,0.2,us,extra\n",
    "empty score": "label,score,region\n1,0.9,eu\n0,,us\n",
    "bad score": "label,score,region\n1,0.9,eu\n0,abc,us\n",
    "bad label": "label,score,region\n1,0.9,eu\n2,0.3,us\n",
    "quoted newline": 'label,score,region\n1,0.9,"e\nu"\n0,0.2,us\n',
    "missing column": "label,region\n1,eu\n",
    "not utf-8": "label,score,region\n1,0.9,\xe9u\n",
}


TRICKY_JSONL = {
    "json clean": '{"label": 1, "score": 0.9, "region": "eu"}\n{"label": 0, "score": 0.2, "region": "us"}\n',
    "json bools and floats": '{"label": true, "score": 1, "region": 3.0}\n{"label": false, "score": 0.2, "region": 4.0}\n',  # noqa: E501
    "json blank line": '{"label": 1, "score": 0.9, "region": "eu"}\n  \n{"label": 0, "score": 0.2, "region": "us"}\n',
    "json missing field": '{"label": 1, "score": 0.9, "region": "eu"}\n{"label": 0, "region": "us"}\n',
    "json null": '{"label": 1, "score": null, "region": "eu"}\n',
    "json text score": '{"label": 1, "score": "0.9", "region": "eu"}\n{"label": 0, "score": "x", "region": "us"}\n',
    "json bad label": '{"label": 1, "score": 0.9, "region": "eu"}\n{"label": 7, "score": 0.2, "region": "us"}\n',
    "json date segment": '{"label": 1, "score": 0.9, "region": "2024-01-01"}\n',
    "json not json": '{"label": 1, "score": 0.9, "region": "eu"}\nnot json\n',
}
# read by pyarrow to the end; a CSV label other than the two whole numbers is the exact reader's to name
FAST = ("clean", "spaces", "quoted newline", "json clean", "json bools and floats", "json bad label", "json text score")


@pytest.mark.parametrize("name", sorted(TRICKY) + sorted(TRICKY_JSONL))
@pytest.mark.parametrize("skip_bad", [False, True])
def test_the_fast_reader_gives_what_the_exact_reader_gives(tmp_path, monkeypatch, name, skip_bad):
    """pyarrow reads clean CSV and JSON Lines files; anything irregular sends the files to the exact reader, so
    every result, every error message and every count of skipped rows is the same."""
    from streameval import cli

    text = TRICKY.get(name) or TRICKY_JSONL[name]
    path = tmp_path / ("in.jsonl" if name in TRICKY_JSONL else "in.csv")
    path.write_bytes(text.encode("latin-1") if name == "not utf-8" else text.encode())
    argv = ["eval", str(path), "--by", "region", "--no-progress"] + (["--skip-bad"] if skip_bad else [])

    def run():
        try:
            return cli._evaluate(cli.build_parser().parse_args(argv))
        except (cli.BadRowError, UnicodeDecodeError) as exc:
            return f"{type(exc).__name__}: {exc}"

    readers = []
    real = cli._evaluate_files

    def spy(args, fast, names=None):
        readers.append(fast)
        return real(args, fast, names)

    monkeypatch.setattr(cli, "_evaluate_files", spy)
    fast = run()
    assert readers == ([True] if name in FAST else [True, False]), readers  # pyarrow reads FAST ones to the end
    monkeypatch.setattr(cli, "_has_pyarrow", lambda: False)
    exact = run()
    assert fast == exact


def test_progress_bar_on_a_terminal_shows_bytes_rows_and_rate(tmp_path):
    """Under a pseudo-terminal the bar (tqdm) shows the bytes read of the total; piped, standard error stays quiet."""
    import fcntl
    import os
    import pty
    import struct
    import termios

    pytest.importorskip("tqdm")
    y, s, region, w = _data(50_000, seed=6)
    path = tmp_path / "scores.csv"
    _write_csv(path, y, s, region, w)
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))  # a terminal 160 columns wide
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "streameval.cli", "eval", str(path), "--json"],
        stdout=subprocess.PIPE, stderr=follower, env=env, timeout=120,
    )  # fmt: skip
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert done.returncode == 0 and json.loads(done.stdout)["rows"] == 50_000
    text = seen.decode(errors="replace")
    size = path.stat().st_size
    assert "100%" in text and "50,000 rows" in text and "rows/s" in text, text[-500:]
    assert f"{size / 1024 / 1024:.2f}M" in text or f"{size / 1024:.0f}k" in text, text[-500:]
    quiet = _cli("eval", str(path))
    assert quiet.stderr == ""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"label,score\n1,0.9\n2,0.3\n", "<stdin>:3: label '2'"),  # read by pyarrow: the label is ours to check
        (b"label,score\n1,0.9\n0,0.3,9\n", "<stdin>:3: expected 2 fields"),  # irregular: the exact reader
    ],
)
def test_standard_input_is_saved_then_read_like_a_file_and_named_stdin(text, message):
    bad = _cli("eval", "-", stdin=text, check=False)
    assert bad.returncode == 2 and message in bad.stderr, bad.stderr
    good = json.loads(_cli("eval", "-", "--json", stdin=b"label,score\n1,0.9\n0,0.3\n").stdout)
    assert good["rows"] == 2 and good["overall"]["auc"] == 1.0


def test_time_column_of_instants_orders_the_events_as_their_seconds(tmp_path):
    """--time may hold instants: ISO 8601 text (with a zone or naive, as UTC; one form or several in a file),
    Parquet timestamps with or without a zone, JSON Lines text. The window of the last events by time is the
    one numbers of seconds give; a time that is neither is a bad row, named."""
    import datetime as dt

    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(9)
    n = 3000
    y, s = (rng.random(n) < 0.4).astype(int), np.round(rng.random(n), 4)
    secs = rng.permutation(n) * 60.0 + 1_770_000_000.0  # out of order: the order comes from the times
    at = [dt.datetime.fromtimestamp(v, dt.timezone.utc) for v in secs]
    zoned = [t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in at]
    naive = [t.strftime("%Y-%m-%d %H:%M:%S") for t in at]
    frame = pd.DataFrame({"label": y, "score": s})
    files = {
        "seconds.csv": frame.assign(ts=secs),
        "zoned.csv": frame.assign(ts=zoned),
        "mixed.csv": frame.assign(ts=[a if i % 3 else b for i, (a, b) in enumerate(zip(zoned, naive, strict=True))]),
        "naive.parquet": frame.assign(ts=pd.to_datetime(secs, unit="s")),
        "zoned.parquet": frame.assign(ts=pd.to_datetime(secs, unit="s", utc=True)),
        "zoned.jsonl": frame.assign(ts=zoned),
    }
    last = np.argsort(secs, kind="stable")[-200:]
    want = se.BinaryAccumulator()
    want.update_many(y[last], s[last])
    for name, data in files.items():
        path = tmp_path / name
        if name.endswith(".csv"):
            data.to_csv(path, index=False)
        elif name.endswith(".parquet"):
            data.to_parquet(path)
        else:
            data.to_json(path, orient="records", lines=True)
        out = json.loads(_cli("eval", str(path), "--time", "ts", "--window", "200", "--json", "--no-progress").stdout)
        assert out["window"]["n"] == 200 and out["window"]["auc"] == pytest.approx(want.get().auc, abs=1e-15), name
    (tmp_path / "bad.csv").write_text("label,score,ts\n1,0.9,2026-01-01T00:00:00Z\n0,0.2,yesterday\n")
    bad = _cli("eval", str(tmp_path / "bad.csv"), "--time", "ts", check=False)
    assert bad.returncode == 2 and "bad.csv:3: time 'yesterday' is neither a finite number nor an instant" in bad.stderr


@pytest.mark.parametrize("block", [64, 1000, 1 << 24])
def test_csv_read_in_blocks_equals_the_library_wherever_blocks_are_cut(tmp_path, monkeypatch, capsys, block):
    """The fast reader parses blocks of CSV_BLOCK bytes cut at line ends. Small blocks cut the file everywhere:
    lines across blocks, CRLF endings, no final line break, quoted segments late in the file, gzip; the result
    is the library's on the same rows, read by the fast reader alone. A line break inside a quoted field (which
    a block may be cut at) and a bad row late in the file go to the exact reader: the same result, and the bad
    row named by its line."""
    from streameval import cli

    monkeypatch.setattr(cli, "CSV_BLOCK", block)

    def no_exact_reader(*args):
        raise AssertionError("the exact reader read the file: the fast one gave up")

    exact_reader = cli._csv_chunks
    monkeypatch.setattr(cli, "_csv_chunks", no_exact_reader)
    rng = np.random.default_rng(12)
    n = 3000
    y, s = (rng.random(n) < 0.3).astype(int), np.round(rng.random(n), 5)
    region = np.where(rng.random(n) < 0.5, "eu", "us").astype(object)
    region[2500:] = np.where(y[2500:] == 1, "north, east", "eu")  # quoted from row 2500 on
    lines = [f"{a},{b},{c!r}" if "," not in c else f'{a},{b},"{c}"' for a, b, c in zip(y, s, region, strict=True)]
    lines = [line.replace("'", "") for line in lines]
    want = se.Segmented(se.BinaryAccumulator)
    want.update_many(list(region), y, s)

    def evaluate(path, *extra):
        assert cli.main(["eval", str(path), "--by", "region", "--json", "--no-progress", *extra]) == 0
        return json.loads(capsys.readouterr().out)

    for name, text in [
        ("plain.csv", "label,score,region\n" + "\n".join(lines) + "\n"),
        ("crlf.csv", "label,score,region\r\n" + "\r\n".join(lines)),  # and no final line break
    ]:
        (tmp_path / name).write_bytes(text.encode())
        out = evaluate(tmp_path / name)
        assert out["rows"] == n and out["overall"]["auc"] == pytest.approx(want.get().overall.auc, abs=1e-15), name
        assert out["segments"]["north, east"]["n"] == want["north, east"].n
    with gzip.open(tmp_path / "plain.csv.gz", "wt") as fh:
        fh.write("label,score,region\n" + "\n".join(lines[:2000]) + "\n")
    head = se.BinaryAccumulator()
    head.update_many(y[:2000], s[:2000])
    assert evaluate(tmp_path / "plain.csv.gz")["overall"]["auc"] == pytest.approx(head.get().auc, abs=1e-15)
    monkeypatch.setattr(cli, "_csv_chunks", exact_reader)  # from here the fast reader gives up
    broken = [*lines[:2900], '1,0.5,"north\nwest"']  # a line break in a quoted field, late in the file
    (tmp_path / "broken.csv").write_text("label,score,region\n" + "\n".join(broken) + "\n")
    whole = se.BinaryAccumulator()
    whole.update_many([*y[:2900], 1], [*s[:2900], 0.5])
    out = evaluate(tmp_path / "broken.csv")
    assert out["rows"] == 2901 and out["overall"]["auc"] == pytest.approx(whole.get().auc, abs=1e-15)
    assert out["segments"]["north\nwest"]["n"] == 1
    bad = [*lines[:1999], "7,0.5,eu", *lines[2000:2400]]  # record 2000 is line 2001
    (tmp_path / "bad.csv").write_text("label,score,region\n" + "\n".join(bad) + "\n")
    status = cli.main(["eval", str(tmp_path / "bad.csv"), "--no-progress"])
    assert status == 2 and "bad.csv:2001: label '7'" in capsys.readouterr().err


def test_class_score_columns_named_as_the_classes_in_another_order_are_refused(tmp_path):
    """--score cat,dog with --classes dog,cat: read by position, each column's scores would go to the other
    class; refused by name. The columns' own order, or no --classes, reads them by name."""
    (tmp_path / "mc.csv").write_text("y,cat,dog\ncat,0.9,0.1\ndog,0.2,0.8\ncat,0.4,0.6\n")
    path = str(tmp_path / "mc.csv")
    refused = _cli("eval", path, "--kind", "multiclass", "--label", "y", "--score", "cat,dog", "--classes", "dog,cat",
                   check=False)  # fmt: skip
    assert refused.returncode != 0 and "--classes dog,cat names the score columns cat,dog in another order" in (
        refused.stderr
    )
    for extra in ([], ["--classes", "cat,dog"]):
        out = json.loads(_cli("eval", path, "--kind", "multiclass", "--label", "y", "--score", "cat,dog", "--json",
                              "--no-progress", *extra).stdout)  # fmt: skip
        assert out["overall"]["accuracy"] == pytest.approx(2 / 3)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.one_of(
            st.tuples(st.integers(0, 1), st.floats(0, 1, width=32), st.sampled_from(["a", "b", '"c, d"'])).map(
                lambda r: f"{r[0]},{r[1]!r},{r[2]}"
            ),
            st.sampled_from(["", "1,0.5", "7,0.5,a", "1,abc,b", '1,0.5,"x\ny"']),
        ),
        max_size=40,
    ),
    crlf=st.booleans(),
    final_break=st.booleans(),
    block=st.sampled_from([1, 7, 64, 1 << 20]),
)
def test_csv_blocks_read_what_the_exact_reader_reads(tmp_path, monkeypatch, capsys, rows, crlf, final_break, block):
    """Random CSV files (blank lines, short rows, bad labels and scores, quoted commas and line breaks, CRLF, no
    final line break) cut into blocks of a few bytes: the command prints what its exact reader prints, and a file
    of well-formed rows is read by the blocks alone."""
    from streameval import cli

    break_ = "\r\n" if crlf else "\n"
    path = tmp_path / "random.csv"
    path.write_bytes((break_.join(["label,score,g", *rows]) + (break_ if final_break else "")).encode())

    def printed() -> tuple[int, str]:
        status = cli.main(["eval", str(path), "--json", "--no-progress", "--by", "g", "--skip-bad"])
        return status, capsys.readouterr().out

    def refuse(name, *args, **kwargs):
        raise cli.IrregularInputError(name)
        yield

    exact_reads: list[int] = []
    exact_reader = cli._csv_chunks
    with monkeypatch.context() as patch:  # each example patches afresh (hypothesis runs many in one test)
        patch.setattr(cli, "CSV_BLOCK", block)
        patch.setattr(cli, "_csv_chunks", lambda *args: exact_reads.append(1) or exact_reader(*args))
        fast = printed()
        odd = {"", "1,0.5", "7,0.5,a", "1,abc,b", '1,0.5,"x\ny"'}
        assert exact_reads == [] or not rows or any(row in odd for row in rows)  # well-formed: the blocks alone
        patch.setattr(cli, "_arrow_csv_chunks", refuse)
        assert printed() == fast


def test_class_score_rows_hold_what_the_library_takes_as_numbers(tmp_path):
    """A row's class scores are read as the library reads a score: decimals (a Parquet list of DECIMAL) count,
    as the library counts them (text stays a bad row: the test of one column of class scores)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(19)
    n, classes = 200, ["cat", "dog"]
    truth = [classes[i] for i in rng.integers(0, 2, n)]
    first = np.round(rng.random(n), 3)
    rows = [[f"{p:.3f}", f"{1 - p:.3f}"] for p in first]
    decimals = pa.array(rows).cast(pa.list_(pa.decimal128(4, 3)))
    pq.write_table(pa.table({"y": truth, "probs": decimals}), tmp_path / "dec.parquet")
    want = se.MulticlassAccumulator(classes=classes)
    want.update_many(truth, [[float(a), float(b)] for a, b in rows])
    argv = ["--kind", "multiclass", "--label", "y", "--score", "probs", "--classes", "cat,dog", "--no-progress"]
    out = json.loads(_cli("eval", str(tmp_path / "dec.parquet"), *argv, "--json").stdout)
    assert out["rows"] == n and out["overall"]["macro_auc"] == want.get().macro_auc
    assert out["overall"]["accuracy"] == want.get().accuracy


def test_a_missing_class_is_a_bad_row_and_a_missing_segment_reads_alike_in_every_format(tmp_path):
    """An empty CSV field, a JSON null and a Parquet null are the same missing value: a multiclass label or
    predicted class missing is a bad row (not the class '' nor 'None'), and a missing segment is the segment ""
    whatever the format."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    (tmp_path / "mc.csv").write_text("label,score\na,a\n,b\nb,b\nb,\n")
    rows = [{"label": "a", "score": "a"}, {"label": None, "score": "b"}, {"label": "b", "score": "b"}]
    rows.append({"label": "b", "score": None})
    (tmp_path / "mc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pq.write_table(pa.table({"label": [r["label"] for r in rows], "score": [r["score"] for r in rows]}),
                   tmp_path / "mc.parquet")  # fmt: skip
    for name, shown in [("mc.csv", "''"), ("mc.jsonl", "None"), ("mc.parquet", "None")]:
        bad = _in_process("eval", str(tmp_path / name), "--kind", "multiclass", "--no-progress")
        assert bad.returncode == 2, bad.stderr
        assert f"{name}:{3 if name == 'mc.csv' else 2}: label {shown} is missing: a class must be named" in bad.stderr
        out = json.loads(_in_process("eval", str(tmp_path / name), "--kind", "multiclass", "--skip-bad", "--json",
                                     "--no-progress", "--save", str(tmp_path / "mc.state")).stdout)  # fmt: skip
        assert out["skipped"]["by_reason"] == {"label": 1, "score": 1}, name
        assert se.load(tmp_path / "mc.state").classes == ("a", "b"), name
    (tmp_path / "seg.csv").write_text("label,score,region\n1,0.5,eu\n0,0.2,\n1,0.3,us\n")
    segs = [{"label": 1, "score": 0.5, "region": "eu"}, {"label": 0, "score": 0.2, "region": None}]
    segs.append({"label": 1, "score": 0.3, "region": "us"})
    (tmp_path / "seg.jsonl").write_text("".join(json.dumps(r) + "\n" for r in segs))
    pq.write_table(pa.Table.from_pylist(segs), tmp_path / "seg.parquet")
    for name in ["seg.csv", "seg.jsonl", "seg.parquet"]:
        out = json.loads(_in_process("eval", str(tmp_path / name), "--by", "region", "--json", "--no-progress").stdout)
        assert sorted(out["segments"]) == ["''", "eu", "us"], name  # the segment "", named apart from the whole's ""
        assert out["segments"]["''"]["n"] == 1, name


@pytest.mark.parametrize("form", ["bools", "floats"])
def test_labels_written_as_bools_or_as_floats_read_alike_in_every_format(tmp_path, form, monkeypatch):
    """pandas writes a column of bool labels as True/False and one of labels with a missing value as 1.0/0.0; JSON
    and Parquet hold them as true/false and 1.0/0.0, which read as 1 and 0. In CSV text they read alike now (they
    were bad rows: "label '1.0' is neither '1' nor '0'"), by both CSV readers; 2.0 and yes are still neither."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from streameval import cli

    rng = np.random.default_rng(14)
    n = 200
    y, s = rng.random(n) < 0.4, np.round(rng.random(n), 4)
    values = y.tolist() if form == "bools" else y.astype(float).tolist()
    spellings = {  # other ways to write the same label, in one row of 7
        ("bools", True): [" true", "TRUE", "True"], ("bools", False): ["false ", "FALSE", "False"],
        ("floats", True): ["1e0", " 1.00", "1.0"], ("floats", False): ["0e5", " 0.00", "0.0"],
    }  # fmt: skip
    texts = [spellings[form, bool(v)][i % 3] if i % 7 == 0 else str(v) for i, v in enumerate(values)]
    (tmp_path / "l.csv").write_text(
        "label,score\n" + "".join(f"{t},{v!r}\n" for t, v in zip(texts, s.tolist(), strict=True))
    )
    (tmp_path / "l.jsonl").write_text(
        "".join(json.dumps({"label": v, "score": p}) + "\n" for v, p in zip(values, s.tolist(), strict=True))
    )
    pq.write_table(pa.table({"label": values, "score": s}), tmp_path / "l.parquet")
    want = se.BinaryAccumulator()
    want.update_many(y, s)
    for name in ("l.csv", "l.jsonl", "l.parquet"):
        for reader in ("fast", "exact"):
            if reader == "exact":  # the CSV reader of the exact path, as files pyarrow cannot parse take
                monkeypatch.setattr(cli, "_has_pyarrow", lambda: False)
            else:  # labels that are not whole numbers' text: read fast again as text, not by the exact reader
                monkeypatch.setattr(cli, "_csv_chunks", lambda *a, **k: pytest.fail("the exact reader read it"))
            out = json.loads(_in_process("eval", str(tmp_path / name), "--json", "--no-progress").stdout)
            monkeypatch.undo()
            assert out["overall"]["n"] == n and out["overall"]["positives"] == int(y.sum()), (name, reader)
            assert out["overall"]["auc"] == pytest.approx(want.get().auc, abs=1e-15), (name, reader)
    (tmp_path / "bad.csv").write_text("label,score\n1.0,0.4\n2.0,0.5\nyes,0.6\nFalse,0.1\n")
    bad = _in_process("eval", str(tmp_path / "bad.csv"), "--no-progress")
    assert bad.returncode == 2 and "bad.csv:3: label '2.0' is neither '1' nor '0'" in bad.stderr
    out = json.loads(_in_process("eval", str(tmp_path / "bad.csv"), "--json", "--no-progress", "--skip-bad").stdout)
    assert out["skipped"]["by_reason"] == {"label": 2} and out["overall"]["n"] == 2


def test_skip_bad_skips_rows_of_another_shape_too(tmp_path):
    """--skip-bad counts and skips every bad row: one with more fields than the header, a line that is not a JSON
    object or lacks a field, as it does a bad label; without it, the first stops the run, named."""
    (tmp_path / "w.csv").write_text("label,score\n1,0.9\n0,0.2,5\n1,0.4\n0,0.1\n")
    (tmp_path / "w.jsonl").write_text(
        '{"label": 1, "score": 0.9}\nnot json\n{"label": 0}\n[1, 0.2]\n{"label": 1, "score": 0.4}\n'
        '{"label": 0, "score": 0.1}\n'
    )
    for name, first, skipped in [("w.csv", "w.csv:3: expected 2 fields, got 3", 1),
                                 ("w.jsonl", "w.jsonl:2: not JSON", 3)]:  # fmt: skip
        bad = _in_process("eval", str(tmp_path / name), "--no-progress")
        assert bad.returncode == 2 and first in bad.stderr and "--skip-bad" in bad.stderr, bad.stderr
        out = json.loads(_in_process("eval", str(tmp_path / name), "--skip-bad", "--json", "--no-progress").stdout)
        assert out["skipped"]["by_reason"] == {"row": skipped} and first in out["skipped"]["first"]["row"]
        assert out["rows"] == 3 + skipped and out["overall"]["n"] == 3
        acc = se.BinaryAccumulator()
        acc.update_many([1, 1, 0], [0.9, 0.4, 0.1])
        assert out["overall"]["auc"] == acc.get().auc


def test_a_file_that_cannot_be_read_is_named_without_advice_to_skip_rows(tmp_path):
    """A missing column, a column named twice (which one would be read?) or a file that is not Parquet fails the
    file as a whole: the message says so, and does not offer --skip-bad, which could not help."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    (tmp_path / "ok.csv").write_text("label,score\n1,0.9\n0,0.2\n")
    (tmp_path / "twice.csv").write_text("label,score,score\n1,0.9,0.1\n0,0.2,0.3\n")
    pq.write_table(pa.Table.from_arrays([pa.array([1, 0]), pa.array([0.9, 0.2]), pa.array([0.1, 0.3])],
                                        names=["label", "score", "score"]), tmp_path / "twice.parquet")  # fmt: skip
    (tmp_path / "junk.parquet").write_bytes(b"junk")
    cases = [
        (["ok.csv", "--by", "region"], "cannot read {}ok.csv:1: missing column 'region'"),
        (["twice.csv"], "cannot read {}twice.csv:1: column 'score' is named 2 times in the header"),
        (["twice.parquet"], "cannot read {}twice.parquet: column 'score' is named 2 times in the file"),
        (["junk.parquet"], "cannot read {}junk.parquet: not a readable Parquet file"),
    ]
    for argv, message in cases:
        done = _in_process("eval", str(tmp_path / argv[0]), *argv[1:], "--no-progress", "--skip-bad")
        assert done.returncode == 2 and message.format(str(tmp_path) + os.sep) in done.stderr, done.stderr
        assert "--skip-bad" not in done.stderr
    ok = _in_process("eval", str(tmp_path / "twice.csv"), "--score", "label", "--label", "label", "--json",
                     "--no-progress")  # fmt: skip
    assert ok.returncode == 0, ok.stderr  # a column named twice that is not read is no matter


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--threshold", "nan"], "--threshold must be a number, got nan"),
        (["--pos-label", "1", "--neg-label", "1"], "--pos-label and --neg-label must differ, got '1' for both"),
        (["--kind", "multiclass", "--score", "score", "--classes", "a,b,a"], "--classes names the class 'a' 2 times"),
        (["--kind", "multiclass", "--score", "p,q,p"], "--score names the class 'p' 2 times"),
        (["--by", "region", "--max-segments", "-3"], "--max-segments must be at least 1, got -3"),
    ],
)
def test_options_the_library_would_refuse_are_named_before_reading(tmp_path, argv, message):
    (tmp_path / "ok.csv").write_text("label,score\n1,0.9\n0,0.2\n")
    done = _in_process("eval", str(tmp_path / "ok.csv"), *argv, "--no-progress")
    assert done.returncode != 0 and f"streameval: {message}" in done.stderr and "Traceback" not in done.stderr


def test_a_result_that_cannot_be_written_is_named_before_anything_is_read(tmp_path):
    """--save, --save-segments, --html and merge's -o naming a directory, or a file in a directory that does not
    exist, are refused by option before the input is read (a long run's result would be lost at its end), and
    --save-segments without --by, which would save nothing, too."""
    (tmp_path / "ok.csv").write_text("label,score,region\n1,0.9,eu\n0,0.2,us\n")
    data, nowhere = str(tmp_path / "ok.csv"), str(tmp_path / "none" / "out")
    _in_process("eval", data, "--save", str(tmp_path / "b.sevl"), "--no-progress")
    cases = [
        (["eval", data, "--save", str(tmp_path)], f"--save {tmp_path} is a directory"),
        (["eval", data, "--by", "region", "--save-segments", nowhere], f"--save-segments {nowhere}: there is no"),
        (["eval", data, "--html", nowhere], f"--html {nowhere}: there is no directory"),
        (["eval", data, "--save-segments", str(tmp_path / "s.sevl")], "--save-segments saves the segments of --by"),
        (["merge", str(tmp_path / "b.sevl"), "-o", nowhere], f"-o {nowhere}: there is no directory"),
        (["merge", str(tmp_path / "b.sevl"), "-o", str(tmp_path)], f"-o {tmp_path} is a directory"),
        (["report", str(tmp_path / "b.sevl"), "--html", nowhere], f"--html {nowhere}: there is no directory"),
    ]
    for argv, message in cases:
        done = _in_process(*argv)
        assert done.returncode != 0 and f"streameval: {message}" in done.stderr, (argv, done.stderr)
        assert "Traceback" not in done.stderr and "rows read" not in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.sevl", "ok.csv"]


def test_rows_whose_totals_overflow_stop_the_command_with_where_and_why(tmp_path):
    """Rows each good alone whose total weight or sums pass the largest float: the accumulator refuses their
    batch; the command says which rows and why, with the exit status of bad input (it raised a traceback)."""
    weights = tmp_path / "weights.csv"
    weights.write_text("label,score,w\n1,0.5,1e308\n0,0.2,1e308\n1,0.7,1e308\n")
    targets = tmp_path / "targets.jsonl"
    targets.write_text('{"y": 1.0, "p": 1.5}\n{"y": 2.0, "p": 2.5}\n{"y": 1e300, "p": -1e300}\n')
    regression = ("eval", str(targets), "--kind", "regression", "--label", "y", "--score", "p")
    for args, where, why in (
        (("eval", str(weights), "--weight", "w"), f"{weights}:2-4", "total weight would overflow"),
        (("eval", str(weights), "--weight", "w", "--by", "label"), f"{weights}:2-4", "total weight would overflow"),
        (regression, f"{targets}:1-3", "would overflow"),
        ((*regression, "--window", "2"), f"{targets}:1-3", "would overflow"),
    ):
        for extra in ((), ("--skip-bad",)):
            done = _in_process(*args, *extra, "--no-progress", "--save", str(tmp_path / "state.bin"))
            assert done.returncode == 2 and not done.stdout
            assert f"cannot count the rows at {where}: " in done.stderr and why in done.stderr
            assert "Traceback" not in done.stderr and not (tmp_path / "state.bin").exists()


def test_segments_by_the_label_column_in_every_format(tmp_path):
    """``--by label``: the label column read as integers (the fast path for digit labels) was also read as the
    segments' text, which pyarrow refused for CSV (a traceback). Every format gives the library's segments."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    positive, s, _, _ = _data(300, seed=4)
    y = positive.astype(np.int64)
    (tmp_path / "rows.csv").write_text(
        "label,score\n" + "".join(f"{a},{float(b)!r}\n" for a, b in zip(y, s, strict=True))
    )
    rows = [json.dumps({"label": int(a), "score": float(b)}) for a, b in zip(y, s, strict=True)]
    (tmp_path / "rows.jsonl").write_text("\n".join(rows) + "\n")
    pq.write_table(pa.table({"label": y, "score": s}), tmp_path / "rows.parquet")
    expected = se.Segmented(se.BinaryAccumulator)
    expected.update_many(y, y, s)
    want = expected.get()
    for name in ("rows.csv", "rows.jsonl", "rows.parquet"):
        done = _in_process("eval", str(tmp_path / name), "--by", "label", "--json", "--no-progress")
        assert done.returncode == 0, done.stderr
        segments = json.loads(done.stdout)["segments"]
        assert sorted(segments) == ["0", "1"]
        for key in (0, 1):
            assert segments[str(key)]["n"] == want[key].n
            assert segments[str(key)]["accuracy"] == pytest.approx(want[key].accuracy)


def test_segments_by_a_regressions_target_column_in_every_format(tmp_path):
    """``--by`` the column a regression reads as its targets (numbers): its values reached the segments' text
    reader as numbers, and pyarrow refused them in every format (a traceback). Each segment is its value's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(8)
    y = rng.integers(0, 4, 200).astype(np.float64) / 2  # 0.0, 0.5, 1.0, 1.5
    pred = np.round(y + rng.normal(0, 0.3, 200), 3)
    pairs = list(zip(y.tolist(), pred.tolist(), strict=True))
    (tmp_path / "rows.csv").write_text("y,p\n" + "".join(f"{a!r},{b!r}\n" for a, b in pairs))
    rows = [json.dumps({"y": a, "p": b}) for a, b in pairs]
    (tmp_path / "rows.jsonl").write_text("\n".join(rows) + "\n")
    pq.write_table(pa.table({"y": y, "p": pred}), tmp_path / "rows.parquet")
    outputs = []
    for name in ("rows.csv", "rows.jsonl", "rows.parquet"):
        args = ("eval", str(tmp_path / name), "--kind", "regression", "--label", "y", "--score", "p", "--by", "y")
        done = _in_process(*args, "--json", "--no-progress")
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads(done.stdout)["segments"])
    assert outputs[0] == outputs[1] == outputs[2]
    by_value = {float(name): metrics for name, metrics in outputs[0].items()}  # named as numbers: "0", "0.5"
    assert sorted(by_value) == [0.0, 0.5, 1.0, 1.5]
    for value, metrics in by_value.items():
        alone = se.RegressionAccumulator()
        alone.update_many(y[y == value], pred[y == value])
        assert metrics["n"] == alone.n and metrics["mae"] == pytest.approx(alone.get().mae)


def _held_late(real: Callable[..., Any], held: list[Any]) -> Callable[..., Any]:
    """``real`` (a pyarrow reader), whose file object a thread keeps for 0.2 s after the call: as pyarrow's own
    threads may, after a threaded read returned or failed. ``held`` gets a weak reference to each file object."""

    def late(source: Any, *args: Any, **kwargs: Any) -> Any:
        held.append(weakref.ref(source))
        # the thread lets go of its arguments when it is done
        threading.Thread(target=lambda kept: time.sleep(0.2), args=(source,)).start()
        try:
            return real(source, *args, **kwargs)
        finally:  # as pyarrow's reader, which is not Python code: a failed read's frame holds no file object
            del source

    return late


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_the_fast_readers_return_once_pyarrow_lets_go_of_their_file_objects(tmp_path, monkeypatch, fmt):
    """A pyarrow reader's threads can hold the file object it reads a moment after the read: were the process
    ending then, pyarrow would abort it ("terminate called without an active exception"). The readers return
    once nothing holds it: for a good file, one that sends the reading to the exact reader, and a truncated
    gzip file (the failed read's frames held the file object: the wait ran out after 10 s)."""
    pa_csv = pytest.importorskip("pyarrow.csv")
    pa_json = pytest.importorskip("pyarrow.json")
    from streameval import cli

    held: list[Any] = []
    released_in_time: list[bool] = []

    def wait(ref: Any, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + 2.0
        while ref() is not None and time.monotonic() < deadline:
            time.sleep(0.001)
        released_in_time.append(ref() is None)

    monkeypatch.setattr(cli, "_wait_until_released", wait, raising=False)
    if fmt == "csv":
        monkeypatch.setattr(pa_csv, "read_csv", _held_late(pa_csv.read_csv, held))
        good, bad = "label,score\n1,0.5\n0,0.25\n", "label,score\n1,0.5\n0\n"
        reader = cli._arrow_csv_chunks
    else:
        monkeypatch.setattr(pa_json, "open_json", _held_late(pa_json.open_json, held))
        good, bad = '{"label": 1, "score": 0.5}\n{"label": 0, "score": 0.25}\n', '{"label": 1, "score": 0.5}\n\n'
        reader = cli._arrow_jsonl_chunks
    whole = gzip.compress((good * 500).encode())
    for data, opened in ((good.encode(), open), (bad.encode(), open), (whole[: len(whole) // 2], gzip.open)):
        path = tmp_path / f"in.{fmt}"
        path.write_bytes(data)
        try:
            with opened(path, "rb") as fh:
                rows = list(reader(str(path), fh, ["label", "score"], {"score"}))
            assert data == good.encode() and sum(r.lines.size for r in rows) == 2
        except cli.IrregularInputError:
            assert data != good.encode()
        except EOFError:  # the CSV reader reads the blocks itself: pyarrow never sees the truncated stream
            assert fmt == "csv" and opened is gzip.open
        assert released_in_time and all(released_in_time), "a file object was still held after the read"
        released_in_time.clear()
        held.clear()
