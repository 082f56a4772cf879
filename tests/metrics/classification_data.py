"""Random label outputs for the classification tests: bare labels, labels with a confidence, score objects."""

from __future__ import annotations

import json

import numpy as np

from textgen_core.model import Datum

LABELS = ("cat", "dog", "bird", "fish")


def bare(n: int, seed: int, *, confidence: bool = False, labels=LABELS) -> list[Datum]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        gold = labels[rng.integers(len(labels))]
        predicted = gold if rng.random() < 0.6 else labels[rng.integers(len(labels))]
        meta = {"conf": float(np.round(rng.uniform(0.01, 1.0), 2))} if confidence else {}
        rows.append(Datum(f"d{i}", "m", prediction=predicted, references=(gold,), metadata=meta))
    return rows


def scored(n: int, seed: int, *, labels=LABELS, ties: bool = False) -> list[Datum]:
    """Every row scores every label (rounded to 2 decimals when ``ties``, so equal scores are common)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        gold = int(rng.integers(len(labels)))
        logits = rng.normal(size=len(labels))
        logits[gold] += 1.0
        probs = np.exp(logits) / np.exp(logits).sum()
        if ties:
            probs = np.round(probs, 1)
        rows.append(Datum(f"d{i}", "m", prediction=json.dumps(dict(zip(labels, probs.tolist()))),
                          references=(labels[gold],)))
    return rows
