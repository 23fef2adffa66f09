"""The Prometheus collector, scraped over real HTTP from the example service while threads update."""

from __future__ import annotations

import importlib.util
import math
import threading
import urllib.request
from pathlib import Path

import numpy as np
import pytest

import streameval as se

prometheus_client = pytest.importorskip("prometheus_client")
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from streameval.prometheus import MetricsCollector  # noqa: E402

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "prometheus_service.py"


def _example():
    spec = importlib.util.spec_from_file_location("prometheus_service", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, s.labels["model"], s.labels["segment"], s.labels["window"])] = s.value
    return samples


def test_scrapes_over_http_while_threads_update_equal_get():
    example = _example()
    accs = example.build()
    server, thread = example.serve(accs, port=0)
    port = server.server_port
    try:

        def feed(seed):
            rng = np.random.default_rng(seed)
            for _ in range(3_000):
                y = bool(rng.random() < 0.4)
                p = float(1 / (1 + np.exp(-rng.normal(2 * y - 1, 1.0))))
                accs["phishing"].update(y, p)
                accs["phishing_last_500"].update(y, p)
                accs["phishing_by_https"].update("https" if rng.random() < 0.3 else "http", y, p)

        workers = [threading.Thread(target=feed, args=(seed,)) for seed in range(3)]
        for w in workers:
            w.start()
        seen = 0
        while any(w.is_alive() for w in workers):
            samples = _scrape(port)  # parses, whatever the moment
            n = samples.get(("streameval_events_total", "phishing", "", ""), 0.0)
            assert n >= seen  # a counter never falls
            seen = n
        for w in workers:
            w.join()
        samples = _scrape(port)
        whole = accs["phishing"].get()
        assert samples[("streameval_events_total", "phishing", "", "")] == whole.n == 9_000
        assert samples[("streameval_auc", "phishing", "", "")] == whole.auc
        assert samples[("streameval_brier", "phishing", "", "")] == whole.brier
        window = accs["phishing_last_500"].get()
        assert samples[("streameval_events_in_window", "phishing_last_500", "", "sliding")] == window.n == 500
        assert samples[("streameval_recall", "phishing_last_500", "", "sliding")] == window.recall
        by = accs["phishing_by_https"].get()
        for segment in ("http", "https"):
            assert samples[("streameval_f1", "phishing_by_https", segment, "")] == by[segment].f1
        assert samples[("streameval_auc", "phishing_by_https", "", "")] == by.overall.auc
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_nan_metrics_are_exposed_as_nan_and_models_can_come_and_go():
    from prometheus_client import CollectorRegistry, generate_latest

    only_positives = se.BinaryAccumulator()
    only_positives.update_many([1, 1], [0.9, 0.4])
    models = {"a": only_positives}
    registry = CollectorRegistry()
    registry.register(MetricsCollector(lambda: models, metrics=("n", "auc", "mae")))
    text = generate_latest(registry).decode()
    auc = [s for f in text_string_to_metric_families(text) for s in f.samples if s.name == "streameval_auc"]
    assert len(auc) == 1 and math.isnan(auc[0].value)
    reg = se.RegressionAccumulator()
    reg.update_many([1.0, 2.0], [1.5, 2.0])
    models["b"] = reg
    text = generate_latest(registry).decode()
    mae = [s for f in text_string_to_metric_families(text) for s in f.samples if s.name == "streameval_mae"]
    assert [(s.labels["model"], s.value) for s in mae] == [("b", 0.25)]


@pytest.mark.parametrize(
    ("kwargs", "exc", "words"),
    [
        ({"accumulators": 3}, TypeError, ["accumulators", "int"]),
        ({"accumulators": {}, "metrics": "auc"}, TypeError, ["metrics", "'auc'"]),
        ({"accumulators": {}, "prefix": "9bad"}, ValueError, ["prefix", "'9bad'"]),
        ({"accumulators": {}, "prefix": "has-dash"}, ValueError, ["prefix", "'has-dash'"]),
    ],
)
def test_bad_arguments_are_named(kwargs, exc, words):
    with pytest.raises(exc) as info:
        MetricsCollector(**kwargs)
    assert all(w in str(info.value) for w in words), str(info.value)


def test_the_example_service_scores_the_stream():
    example = _example()
    accs = example.build()
    events = example.score_stream(accs, seconds=0.5)
    assert events > 100 and accs["phishing"].get().n == events
    assert accs["phishing_last_500"].get().n == min(events, 500)
    assert accs["phishing_by_https"].get().overall.n == events
