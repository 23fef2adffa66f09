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


def test_a_label_join_exposes_its_counts_over_http_while_a_thread_feeds_it():
    """A Locked LabelJoin into a sliding window: each scrape's join counts come from one moment (every
    prediction is matched, expired or pending), and the last scrape equals the join's counts and report."""
    from prometheus_client import CollectorRegistry, start_http_server
    from sklearn.metrics import roc_auc_score

    join = se.Locked(se.LabelJoin(se.Sliding(se.BinaryAccumulator, size=200), ttl=50.0))
    registry = CollectorRegistry()
    registry.register(MetricsCollector({"fraud": join}, metrics=("n", "auc")))
    server, thread = start_http_server(0, addr="127.0.0.1", registry=registry)
    rng = np.random.default_rng(3)
    n = 4000
    y, s = rng.random(n) < 0.3, rng.random(n)
    delay = rng.exponential(30.0, n)  # some labels come after the ttl, some never
    comes = rng.random(n) < 0.9
    events = sorted([(float(i), 0, i) for i in range(n)] + [(i + delay[i], 1, i) for i in np.flatnonzero(comes)])
    made = {"predictions": 0}

    def feed():
        for t, kind, i in events:
            if kind == 0:
                made["predictions"] += 1  # before the call: a scrape never sees more predictions than made
                join.predict(int(i), float(s[i]), t=t)
            else:
                join.label(int(i), bool(y[i]), t=t)

    key = ("fraud", "", "sliding")
    try:
        worker = threading.Thread(target=feed)
        worker.start()
        while worker.is_alive():
            samples = _scrape(server.server_port)
            if ("streameval_join_matched_total", *key) in samples:
                seen = sum(samples[(name, *key)] for name in (
                    "streameval_join_matched_total", "streameval_join_expired_total",
                    "streameval_join_pending_predictions"))  # fmt: skip
                assert seen <= made["predictions"]
        worker.join()
        samples = _scrape(server.server_port)
        counts = join.counts()
        assert counts["matched"] + counts["expired"] + counts["pending"] == n
        names = {"matched": "join_matched_total", "expired": "join_expired_total", "late": "join_late_labels_total",
                 "orphans": "join_orphan_labels_total", "pending": "join_pending_predictions",
                 "pending_labels": "join_pending_labels", "evicted": "join_evicted_total"}  # fmt: skip
        for count, name in names.items():
            assert samples[(f"streameval_{name}", *key)] == counts[count], count
        assert counts["late"] > 0 and counts["expired"] > counts["late"]  # labels after the ttl, and never
        window = join.get()
        assert samples[("streameval_events_in_window", *key)] == window.n == 200
        assert samples[("streameval_auc", *key)] == window.auc
        matched = [i for t, kind, i in events if kind == 1 and t - i <= 50.0]  # matched in label order
        last = np.array(matched[-200:])
        assert window.auc == pytest.approx(roc_auc_score(y[last], s[last]), abs=1e-15)
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
    recorded = se.Monitor(se.Sliding(se.BinaryAccumulator, size=2), every=1)  # a monitor: its window's labels
    recorded.update_many([1, 0, 1], [0.9, 0.2, 0.4])
    models["c"] = recorded
    samples = [s for f in text_string_to_metric_families(generate_latest(registry).decode()) for s in f.samples]
    inside = [s for s in samples if s.labels["model"] == "c" and s.name == "streameval_events_in_window"]
    assert [(s.labels["window"], s.value) for s in inside] == [("sliding", 2.0)]
    pair = se.PairedAccumulator(threshold=0.5)  # two models: each one's accuracy and McNemar's, by default
    pair.update_many([1, 0, 1, 0], [0.9, 0.2, 0.4, 0.6], [0.8, 0.7, 0.6, 0.1])
    default = CollectorRegistry()
    default.register(MetricsCollector({"pair": pair, "one": only_positives}))
    samples = {s.name: s for f in text_string_to_metric_families(generate_latest(default).decode()) for s in f.samples
               if s.labels["model"] == "pair"}  # fmt: skip
    assert samples["streameval_a_accuracy"].value == 0.5 and samples["streameval_b_accuracy"].value == 0.75
    assert samples["streameval_mcnemar_p_value"].value == pair.get().mcnemar.p_value


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


def test_no_two_segments_share_labels_nor_one_the_wholes():
    """The segment "" would have the whole's labels, 1 and "1" (or ("eu", "web") and "eu/web") each other's:
    Prometheus keeps one sample of a series. Each is labelled apart (its repr), with its own count, and a report's
    dict of metrics keeps every segment's."""
    from prometheus_client import CollectorRegistry, generate_latest

    seg = se.Segmented(se.BinaryAccumulator)
    names = ["", "eu", "eu", 1, "1", "1", ("eu", "web"), "eu/web"]
    seg.update_many(names, [1, 0, 1, 0, 1, 0, 1, 0], [0.9, 0.2, 0.4, 0.1, 0.2, 0.3, 0.3, 0.4])
    registry = CollectorRegistry()
    registry.register(MetricsCollector({"m": seg}, metrics=("n",)))
    samples = [s for f in text_string_to_metric_families(generate_latest(registry).decode()) for s in f.samples]
    counts = {s.labels["segment"]: s.value for s in samples if s.name == "streameval_events_total"}
    assert counts == {"": 8, "''": 1, "eu": 2, "1": 1, "'1'": 2, "('eu', 'web')": 1, "'eu/web'": 1}
    flat = seg.get().to_dict()
    assert (flat["1/n"], flat["'1'/n"], flat["''/n"], flat["eu/n"]) == (1, 2, 1, 2)
