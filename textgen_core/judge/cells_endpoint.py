"""Endpoint metrics that need no verdict: embedding similarity and perplexity."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

from ..model import Cell, Datum
from . import scoring
from .cells import Outcome, has_text, references, unscored
from .steps import Asker


async def semantic_similarity(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    """Cosine of the prediction's embedding with each reference's; the best one counts."""
    refs = references(row)
    if not refs:
        return unscored("no references")
    if not has_text(row.prediction):
        return unscored("empty prediction")
    vectors = await ask.embed([row.prediction, *refs])
    if len(vectors) != len(refs) + 1:
        return unscored(f"the endpoint returned {len(vectors)} embeddings for {len(refs) + 1} texts")
    sims = [scoring.cosine(vectors[0], v) for v in vectors[1:]]
    scored = [(i, s) for i, s in enumerate(sims) if s is not None]
    if not scored:
        return unscored("zero or mismatched embedding vectors")
    best_i, best = max(scored, key=lambda t: t[1])
    details: dict[str, Any] = {"reference": best_i + 1}
    if len(refs) > 1:
        details["per_reference"] = sims
    return Outcome(Cell(best, details))


def parse_logprobs(raw: Any) -> list[float]:
    """Token log-probabilities from a metadata value: a list, a JSON list, or comma/space separated numbers.

    Raises ValueError naming the problem; None items (a first token without a
    log-probability) are dropped.
    """
    if raw is None:
        return []
    if isinstance(raw, str):
        text = raw.strip()
        if not text:
            return []
        raw = json.loads(text) if text.startswith("[") else text.replace(",", " ").split()
    if isinstance(raw, (int, float)) or not hasattr(raw, "__iter__"):
        raise ValueError(f"expected a list of numbers, got {type(raw).__name__}")
    values = []
    for item in raw:
        if item is None:
            continue
        if isinstance(item, bool):
            raise ValueError("expected numbers, got a boolean")
        number = float(item)
        if math.isnan(number) or number > 1e-9:
            raise ValueError(f"{number} is not a log-probability (must be a number <= 0)")
        values.append(number)
    return values


async def perplexity(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    """exp(-mean log p) over the prediction's tokens, from a metadata column or the endpoint."""
    column = params.get("logprobs_column")
    if column:
        try:
            values = parse_logprobs(row.metadata.get(column))
        except (TypeError, ValueError) as exc:
            return unscored(f"column {column!r}: {exc}")
        if not values:
            return unscored(f"no log-probabilities in column {column!r}")
        source = "column"
    else:
        if not has_text(row.prediction):
            return unscored("empty prediction")
        values = [v for v in await ask.prompt_logprobs(row.prediction) if v is not None]
        if not values:
            return unscored("the endpoint returned no log-probabilities")
        source = "endpoint"
    try:
        value = scoring.perplexity(values)
    except OverflowError:
        return unscored("perplexity overflows (log-probabilities too low)")
    return Outcome(Cell(value, {"tokens": len(values), "source": source}))
