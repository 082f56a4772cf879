"""Perplexity: exp of the mean negative log-probability of the prediction's tokens."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

from ...metrics.spec import Param
from ...model import Cell, Datum
from ..metric import Asker, JudgePlan, Outcome, declare, unscored


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


def perplexity(logprobs: Sequence[float]) -> float:
    """exp of the mean negative natural-log probability per token."""
    if not logprobs:
        raise ValueError("no token log-probabilities")
    return math.exp(-sum(logprobs) / len(logprobs))


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
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
        values = [v for v in await ask.prompt_logprobs(row.prediction or "") if v is not None]
        if not values:
            return unscored("the endpoint returned no log-probabilities")
        source = "endpoint"
    try:
        value = perplexity(values)
    except OverflowError:
        return unscored("perplexity overflows (log-probabilities too low)")
    return Outcome(Cell(value, {"tokens": len(values), "source": source}))


SPEC = declare(
    "perplexity", "Perplexity", "exp of the mean negative log-probability of the prediction's tokens.",
    ("prediction",), JudgePlan(score, api="completions", empty="unscored"),
    "With logprobs_column, reads natural-log token probabilities from that metadata column (a list, a JSON "
    "list or comma/space separated numbers); a row without them, or with a value above 0, is unscored. "
    "Without it, asks the endpoint's completions API for the log-probabilities of the prediction as a prompt "
    "(the text alone, not conditioned on the query); the first token, which has none, is skipped.",
    group="endpoint", direction="lower", value_range=(1.0, None),
    params=(Param("logprobs_column", "str", None,
                  "metadata column with the prediction's token log-probabilities; empty: ask the endpoint",
                  is_column=True),))
