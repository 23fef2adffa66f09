"""The six score families of the accuracy goals, generated reproducibly."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["FAMILIES", "make_family"]


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def calibrated(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Sigmoid of two overlapping normals, 30% positives."""
    y = rng.random(n) < 0.3
    z = rng.normal(np.where(y, 1.0, -1.0), 1.5)
    return y, _sigmoid(z)


def rare_positives(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """0.1% positives; most negative scores below 1e-3 (fraud-like)."""
    y = rng.random(n) < 0.001
    z = rng.normal(np.where(y, -2.0, -10.0), 2.0)
    return y, _sigmoid(z)


def near_one(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities piled near 1: most scores above 0.999."""
    y = rng.random(n) < 0.5
    z = rng.normal(np.where(y, 12.0, 9.5), 1.5)
    return y, _sigmoid(z)


def logits(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Unbounded margins / logits in +-50."""
    y = rng.random(n) < 0.4
    z = rng.normal(np.where(y, 4.0, -4.0), 12.0)
    return y, np.clip(z, -50.0, 50.0)


def cosine(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Cosine similarities in [-1, 1] (speaker-verification style)."""
    y = rng.random(n) < 0.1
    z = rng.normal(np.where(y, 0.6, 0.05), np.where(y, 0.15, 0.2))
    return y, np.clip(z, -1.0, 1.0)


def rounded(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Calibrated probabilities rounded to 2 decimals (many ties)."""
    y, s = calibrated(rng, n)
    return y, np.round(s, 2)


FAMILIES: dict[str, Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]]] = {
    "calibrated": calibrated,
    "rare_positives": rare_positives,
    "near_one": near_one,
    "logits": logits,
    "cosine": cosine,
    "rounded": rounded,
}


def make_family(name: str, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Labels (bool) and scores (float64) of family ``name``."""
    return FAMILIES[name](np.random.default_rng(seed), n)
