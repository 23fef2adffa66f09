"""A model scored on a stream, its metrics served to Prometheus at http://127.0.0.1:PORT/metrics.

A river logistic regression learns river's Phishing stream by progressive
validation, over and over, for ``--seconds``; every event is counted in three
accumulators, each behind a lock because the HTTP server scrapes them from
its own thread:

* ``phishing``: every event so far;
* ``phishing`` in a sliding window of the last 500 events (label ``window="sliding"``);
* ``phishing_by_https``: one accumulator per value of the ``https`` feature
  (label ``segment``).

    python examples/prometheus_service.py --port 9464 --seconds 60
    curl -s http://127.0.0.1:9464/metrics | grep streameval_auc
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from river import compose, datasets, linear_model, preprocessing

import streameval as se
from streameval.prometheus import MetricsCollector


def build() -> dict[str, Any]:
    """The accumulators the service serves, by model name (each one locked)."""
    return {
        "phishing": se.Locked(se.BinaryAccumulator()),
        "phishing_last_500": se.Locked(se.Sliding(se.BinaryAccumulator, size=500)),
        "phishing_by_https": se.Locked(se.Segmented(se.BinaryAccumulator)),
    }


def serve(accumulators: dict[str, Any], port: int = 0, addr: str = "127.0.0.1") -> tuple[Any, Any]:
    """Start the /metrics endpoint (port 0: any free one); returns the HTTP server and its thread."""
    registry = CollectorRegistry()
    registry.register(MetricsCollector(accumulators))
    return start_http_server(port, addr=addr, registry=registry)


def score_stream(accumulators: dict[str, Any], seconds: float) -> int:
    """Learn and score the stream, counting every event, until ``seconds`` have passed; events counted."""
    model = compose.Pipeline(preprocessing.StandardScaler(), linear_model.LogisticRegression())
    events = 0
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        for x, y in datasets.Phishing():
            p = model.predict_proba_one(x).get(True, 0.5)
            accumulators["phishing"].update(y, p)
            accumulators["phishing_last_500"].update(y, p)
            accumulators["phishing_by_https"].update("https" if x["https"] > 0.5 else "http", y, p)
            model.learn_one(x, y)
            events += 1
            if time.monotonic() >= stop:
                break
    return events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=9464)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    accumulators = build()
    server, _ = serve(accumulators, args.port)
    print(f"serving http://127.0.0.1:{server.server_port}/metrics for {args.seconds:g} s")
    events = score_stream(accumulators, args.seconds)
    print(f"{events:,} events scored; AUC {accumulators['phishing'].get().auc:.4f}")
    server.shutdown()


if __name__ == "__main__":
    main()
