"""The demo and the benchmark suite run end to end as a user runs them."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT


def _run(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_demo_reports_auc_beside_scikit_learn():
    out = _run("examples/phishing_demo.py")
    assert "exact AUC inside streameval's bounds:          True" in out
    assert out.count("\n   ") >= 5  # a progress row every 250 of the 1,250 events
    diff = float(out.split("|difference| = ")[1].split(")")[0])
    assert diff <= 1e-4


def test_benchmark_suite_runs_quick(tmp_path):
    target = tmp_path / "bench.md"
    _run("benchmarks/run.py", "--quick", "--out", str(target))
    text = target.read_text()
    for heading in ("Per-event update", "Batch update", "Reading a report", "Merging", "Accuracy"):
        assert heading in text
    assert text.count("| True |") == 6  # the exact AUC inside the bounds for every family


def test_kfold_example_prints_micro_and_macro():
    out = _run("examples/kfold.py")
    assert "10 folds, 569 held-out predictions (357 positive)" in out
    auc_row = next(line for line in out.splitlines() if line.startswith("auc "))
    micro, mean, std = (float(v) for v in auc_row.split()[1:4])
    assert 0.95 < micro <= 1.0 and 0.95 < mean <= 1.0 and 0 < std < 0.05
    assert "macro F1 from macro P and R" in out
