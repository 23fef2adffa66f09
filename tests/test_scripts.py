"""The demo and the benchmark suite run end to end as a user runs them."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT


def _run(*args: str, cwd=ROOT) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_demo_runs_the_main_job_end_to_end(tmp_path):
    out = _run(str(ROOT / "examples" / "phishing_demo.py"), cwd=tmp_path)
    assert "exact AUC inside streameval's bounds:          True" in out
    rows = [line for line in out.splitlines() if line.strip().split(" ")[0] in {"250", "500", "750", "1000", "1250"}]
    assert len(rows) == 5  # a row every 250 of the 1,250 events, with the sliding window beside
    diff = float(out.split("|difference| = ")[1].split(")")[0])
    assert diff <= 1e-4
    assert "4 shards merged equal the whole stream: True" in out
    assert "equal to one process: True" in out
    for name in ("roc", "pr", "det"):
        assert (tmp_path / "demo-output" / f"{name}.png").stat().st_size > 10_000
    assert float(out.rsplit("done in ", 1)[1].split(" s")[0]) < 60


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
