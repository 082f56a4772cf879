"""Sentence embeddings on this machine (sentence-transformers): semantic_similarity without an endpoint.

The model is the packaged all-MiniLM-L6-v2 by default, or a local directory
holding a sentence-transformers model; it is loaded once per process. The
cosine and the best-reference rule are the endpoint backend's.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping, Sequence

import numpy as np

from ...model import Cell, Datum
from ..lexical.base import Scorer
from ..lexical.tokenize import TextCache
from .local_models import missing_packages, offline, resolve_model

SCORE = "semantic_similarity"


@lru_cache(maxsize=2)
def load(model: str) -> Any:
    offline()
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(model, device=None, local_files_only=True)


def problems(params: Mapping[str, Any]) -> list[str]:
    """Why the local model cannot be used here (checked before a run)."""
    missing = missing_packages("torch", "sentence_transformers")
    if missing:
        return [missing]
    try:
        resolve_model(params["local_model"])
    except ValueError as exc:
        return [str(exc)]
    return []


def score_rows(rows: Sequence[Datum], params: Mapping[str, Any], cache: TextCache | None = None
               ) -> list[dict[str, Cell]]:
    """Cosine of the prediction's and each reference's embeddings; the best reference counts."""
    out: list[dict[str, Cell]] = [{} for _ in rows]
    texts: list[str] = []
    spans: list[tuple[int, int, int]] = []
    for i, row in enumerate(rows):
        refs = [r for r in row.references if type(r) is str and r.strip()]
        if type(row.prediction) is not str or not row.prediction.strip():
            out[i] = {SCORE: Cell.unscored("empty prediction")}
        elif not refs:
            out[i] = {SCORE: Cell.unscored("no references")}
        else:
            spans.append((i, len(texts), len(texts) + 1 + len(refs)))
            texts.extend((row.prediction, *refs))
    if not texts:
        return out
    model = load(resolve_model(params["local_model"]))
    vectors = np.asarray(model.encode(texts, batch_size=params["batch_size"], convert_to_numpy=True),
                         dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1)
    for i, start, end in spans:
        if norms[start] == 0:
            out[i] = {SCORE: Cell.unscored("zero embedding vector")}
            continue
        sims = [float(np.clip(vectors[start] @ vectors[k] / (norms[start] * norms[k]), -1.0, 1.0))
                if norms[k] > 0 else None for k in range(start + 1, end)]
        known = [(s, k) for k, s in enumerate(sims) if s is not None]
        if not known:
            out[i] = {SCORE: Cell.unscored("zero embedding vector")}
            continue
        best, k = max(known, key=lambda t: t[0])
        details: dict[str, Any] = {"reference": k + 1, "model": params["local_model"]}
        if len(sims) > 1:
            details["per_reference"] = sims
        out[i] = {SCORE: Cell(best, details)}
    return out


SCORER = Scorer(per_chunk=score_rows)
