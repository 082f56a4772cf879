"""Exact match and token F1 after SQuAD answer normalization.

Normalization (as the SQuAD v1.1 evaluation script does it): lowercase, drop
ASCII punctuation, drop the articles a/an/the, collapse whitespace. Both
metrics take the best reference.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Any, Mapping

from ...model import Cell, Datum
from .base import LexicalSpec, RowFn, Scorer, row_inputs
from .tokenize import TextCache

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NO_PUNCTUATION = {ord(ch): None for ch in string.punctuation}


def normalize(text: str) -> str:
    """SQuAD answer normalization."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_NO_PUNCTUATION)).split())


def _normalized(cache: TextCache, text: str) -> str:
    return cache.memo("squad", text, normalize)  # type: ignore[return-value]


def f1_parts(prediction: list[str], reference: list[str]) -> tuple[float, float, float]:
    """(F1, precision, recall) of two normalized token lists; 0 when nothing is shared."""
    common = Counter(prediction) & Counter(reference)
    same = sum(common.values())
    if same == 0:
        return 0.0, 0.0, 0.0
    precision = same / len(prediction)
    recall = same / len(reference)
    return (2 * precision * recall) / (precision + recall), precision, recall


def exact_match_scorer(params: Mapping[str, Any]) -> RowFn:
    def score_row(row: Datum, cache: TextCache) -> dict[str, Cell]:
        reason = row_inputs(row)
        if reason:
            return {"exact_match": Cell.unscored(reason)}
        prediction = _normalized(cache, row.prediction)  # type: ignore[arg-type]
        for k, reference in enumerate(row.references):
            if _normalized(cache, reference) == prediction:
                return {"exact_match": Cell(1.0, {"reference": k} if len(row.references) > 1 else None)}
        return {"exact_match": Cell(0.0)}

    return score_row


def f1_scorer(params: Mapping[str, Any]) -> RowFn:
    def score_row(row: Datum, cache: TextCache) -> dict[str, Cell]:
        reason = row_inputs(row)
        if reason:
            return {"f1": Cell.unscored(reason)}
        prediction = _normalized(cache, row.prediction).split()  # type: ignore[arg-type]
        best = None
        for k, reference in enumerate(row.references):
            parts = f1_parts(prediction, _normalized(cache, reference).split())
            if best is None or parts[0] > best[0][0]:
                best = (parts, k)
        assert best is not None
        (f1, precision, recall), k = best
        details: dict[str, Any] = {"precision": precision, "recall": recall}
        if len(row.references) > 1:
            details["reference"] = k
        return {"f1": Cell(f1, details)}

    return score_row


_NORMALIZATION = "lowercase, ASCII punctuation removed, articles a/an/the removed, whitespace collapsed"

EXACT_MATCH = LexicalSpec(
    name="exact_match",
    label="Exact match",
    group="lexical",
    description="1 when the normalized prediction equals a normalized reference, else 0 (SQuAD style).",
    needs=("prediction", "references"),
    outputs=lambda _p: ("exact_match",),
    tokenizer=lambda _p: "squad-normalized",
    score=Scorer(per_row=exact_match_scorer),
    notes=f"Normalization as in the SQuAD v1.1 evaluation script: {_NORMALIZATION}. Several references: 1 if "
    "any matches (details.reference is the first). An empty prediction matches only a reference that "
    "normalizes to empty (e.g. 'The.').",
)

TOKEN_F1 = LexicalSpec(
    name="token_f1",
    label="Token F1",
    group="lexical",
    description="Harmonic mean of token precision and recall between the normalized prediction and the best "
    "normalized reference (SQuAD style).",
    needs=("prediction", "references"),
    outputs=lambda _p: ("f1",),
    tokenizer=lambda _p: "squad-normalized",
    score=Scorer(per_row=f1_scorer),
    notes=f"As the SQuAD v1.1 evaluation script: {_NORMALIZATION}; tokens are whitespace-separated; shared "
    "tokens are counted with multiplicity; 0 when no token is shared (so an empty prediction, or an empty "
    "reference, gives 0). Several references: the best F1 (first on ties; details.reference is its index).",
)
