"""The HTML report: one self-contained page, written by the library and the command, and shown in a real browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import streameval as se

pytest.importorskip("matplotlib")
from streameval.html import report_html

ROOT = Path(__file__).resolve().parent.parent


def _segmented(n=3_000, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.choice(["eu", "us", "apac"], n)
    y = rng.random(n) < 0.3
    s = 1 / (1 + np.exp(-rng.normal(y * 2.0 - 1.0, 1.3)))
    seg = se.Segmented(se.BinaryAccumulator)
    seg.update_many(g, y, s)
    return seg, g, y, s


def _self_contained(page):
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing fetched from anywhere
    assert "<script" not in page


def test_binary_page_has_the_metrics_and_four_pictures():
    _, _, y, s = _segmented()
    acc = se.BinaryAccumulator()
    acc.update_many(y, s)
    page = acc.get().to_html(title="fraud <model>")
    _self_contained(page)
    assert "fraud &lt;model&gt;" in page  # escaped
    assert page.count("data:image/png;base64,") == 4  # ROC, PR, DET, reliability
    assert f"{acc.get().auc:.6g}" in page and f"{acc.get().brier:.6g}" in page


def test_segmented_page_marks_the_worst_segment_and_gives_fairness():
    seg, *_ = _segmented()
    r = seg.get()
    page = r.to_html()
    _self_contained(page)
    worst = r.worst("auc")
    row = next(line for line in re.findall(r"<tr>.*?</tr>", page) if f"<td>{worst}</td>" in line)
    assert f'<td class="worst">{r[worst].auc:.6g}</td>' in row
    assert f"{r.equalized_odds_difference:.6g}" in page and "demographic_parity_ratio" in page


def test_other_kinds_and_metrics_over_time():
    reg = se.RegressionAccumulator()
    reg.update_many([1.0, 2.0, 3.0], [1.5, 2.0, 2.0])
    page = report_html(reg)
    _self_contained(page)
    assert f"<tr><td>mae</td><td>{reg.get().mae:.6g}</td></tr>" in page and "data:image/png" not in page
    for name in ("rmse", "r2", "max_error"):  # every scalar metric of a kind other than binary
        assert f"<tr><td>{name}</td><td>{getattr(reg.get(), name):.6g}</td></tr>" in page
    mon = se.Monitor(se.Sliding(se.BinaryAccumulator, size=500), every=500)
    _, _, y, s = _segmented()
    mon.update_many(y[:1000], s[:1000])
    mon.update_many(y[1000:], s[1000:])
    page = report_html(mon.accumulator, records=mon.to_records())
    assert "Over time" in page and page.count("data:image/png;base64,") >= 5
    rng = np.random.default_rng(4)
    classes = ["a", "b"]
    drawn = [  # each kind's main metrics over time, as many as its records hold (up to four)
        (se.MulticlassAccumulator(classes=classes), lambda: [rng.choice(classes, 50), rng.choice(classes, 50)], 2),
        (se.PairedAccumulator(), lambda: [rng.random(50) < 0.5, rng.random(50) < 0.5, rng.random(50) < 0.5], 3),
        (se.ScoreAccumulator(), lambda: [rng.random(50)], 2),
        (se.RegressionAccumulator(), lambda: [rng.random(50), rng.random(50)], 3),
    ]
    for acc, batch, pictures in drawn:
        name = type(acc).__name__
        monitor = se.Monitor(acc, every=50)
        for _ in range(3):
            monitor.update_many(*batch())
        page = report_html(monitor.accumulator, records=monitor.to_records())
        assert page.count("data:image/png;base64,") == pictures and "Over time" in page, name
    outside = se.BinaryAccumulator()
    outside.update_many([1, 0], [2.0, -1.0])  # scores that are not probabilities: no reliability diagram
    page = report_html(outside)
    assert page.count("data:image/png;base64,") == 3 and "outside [0, 1]" in page


def test_a_multiclass_page_has_each_class_against_the_rest():
    from sklearn import metrics as skm

    rng = np.random.default_rng(6)
    classes = ["cat", "dog", "bird"]
    truth = rng.choice(classes, 400)
    probs = rng.dirichlet([1.0, 1.0, 1.0], 400)
    acc = se.MulticlassAccumulator(classes=classes)
    acc.update_many(truth.tolist(), probs)
    page = report_html(acc)
    _self_contained(page)
    predicted = np.array(classes)[probs.argmax(1)]
    precision, recall, f1, support = skm.precision_recall_fscore_support(truth, predicted, labels=classes)
    for k, c in enumerate(classes):
        auc = skm.roc_auc_score(truth == c, probs[:, k])
        cells = [support[k], precision[k], recall[k], f1[k], auc]
        row = f"<tr><td>{c}</td>" + "".join(f"<td>{v:.6g}</td>" for v in cells)
        assert row in page, (row, page[page.index("<h2>Classes") :][:800])


def test_the_command_writes_pages(tmp_path):
    seg, g, y, s = _segmented()
    csv = tmp_path / "scores.csv"
    rows = zip(y.tolist(), s.tolist(), g.tolist(), strict=True)
    csv.write_text("label,score,region\n" + "".join(f"{int(a)},{b!r},{c}\n" for a, b, c in rows))
    env_cmd = [sys.executable, "-m", "streameval.cli"]
    out = subprocess.run(
        [*env_cmd, "eval", str(csv), "--by", "region", "--html", str(tmp_path / "eval.html"), "--json"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    assert json.loads(out.stdout)["html"] == str(tmp_path / "eval.html")
    assert "Fairness" in (tmp_path / "eval.html").read_text()
    seg.save(tmp_path / "seg.sevl")
    subprocess.run([*env_cmd, "report", str(tmp_path / "seg.sevl"), "--html", str(tmp_path / "report.html")],
                   check=True, cwd=ROOT, capture_output=True)  # fmt: skip
    _self_contained((tmp_path / "report.html").read_text())


def test_the_page_renders_in_a_headless_browser(tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed here (make test installs it where apt-get can)")
    seg, *_ = _segmented()
    page = tmp_path / "report.html"
    page.write_text(seg.get().to_html(title="segments"))
    shot = tmp_path / "report.png"
    common = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
              "--enable-logging=stderr", "--v=0", f"--user-data-dir={tmp_path / 'profile'}"]  # fmt: skip
    done = subprocess.run(
        [*common, "--window-size=1200,2400", f"--screenshot={shot}", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert console == [], console
    assert shot.stat().st_size > 50_000  # a page of tables and pictures, not a blank one
    dom = subprocess.run([*common, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0 and dom.stdout.count("<img") == 4 and "equalized_odds_difference" in dom.stdout


@pytest.mark.parametrize(
    ("call", "exc", "words"),
    [
        (lambda: report_html(3), TypeError, ["item", "int"]),
        (lambda: report_html(se.BinaryAccumulator(), title=5), TypeError, ["title", "5"]),
        (lambda: report_html(se.BinaryAccumulator(), records="x"), TypeError, ["records"]),
    ],
)
def test_bad_arguments_are_named(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    assert all(w in str(info.value) for w in words), str(info.value)


def test_an_unwritable_html_path_is_a_clear_error(tmp_path):
    se.BinaryAccumulator().save(tmp_path / "s.sevl")
    target = tmp_path / "no" / "x.html"  # its folder does not exist
    done = subprocess.run(
        [sys.executable, "-m", "streameval.cli", "report", str(tmp_path / "s.sevl"), "--html", str(target)],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"--html {target}: there is no directory" in done.stderr  # named before the state is read


def test_every_kind_of_report_has_a_summary_and_a_page():
    """As a binary report does: the summary lists every scalar metric with its value (whole numbers as such, others
    to six digits), and to_html is report_html of the report."""
    from streameval.html import report_html

    made = []
    multiclass = se.MulticlassAccumulator()
    multiclass.update_many(["a", "b", "a", "c"], ["a", "b", "b", "c"])
    regression = se.RegressionAccumulator()
    regression.update_many([1.0, 2.0, 4.0], [1.5, 2.0, 3.0])
    scores = se.ScoreAccumulator()
    scores.update_many([0.2, 0.4, 0.9])
    paired = se.PairedAccumulator()
    paired.update_many([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 1, 0])
    for acc in (multiclass, regression, scores, paired):
        report = acc.get()
        lines = [line.split() for line in report.summary().splitlines()]
        assert [name for name, _ in lines] == list(type(report).SCALAR_METRICS)
        for (name, text), value in zip(lines, report.to_dict().values(), strict=True):
            if isinstance(value, (int, np.integer)):
                assert text == str(int(value)), name
            else:
                assert (text == "nan" and np.isnan(value)) or float(text) == pytest.approx(value, rel=5e-6), name
        page, direct = report.to_html(title="model"), report_html(report, title="model")
        written = re.compile(r"Written [^<]* UTC\.")  # the minute each was written
        assert written.sub("", page) == written.sub("", direct) and "model" in page
        made.append(type(report).__name__)
    assert made == ["MulticlassReport", "RegressionReport", "ScoreReport", "PairedReport"]
