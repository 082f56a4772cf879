"""Perplexity: exp of the mean negative log-probability of the prediction's tokens."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

from ...model import Cell, Datum
from ..spec import Param
from . import EndpointPlan, PromptLogprobs, declare


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


def request(row: Datum, params: Mapping[str, Any]) -> PromptLogprobs | Cell:
    """The prediction's log-probabilities from the endpoint, or the cell at once when a column holds them."""
    column = params.get("logprobs_column")
    if not column:
        return PromptLogprobs(row.prediction or "")
    try:
        values = parse_logprobs(row.metadata.get(column))
    except (TypeError, ValueError) as exc:
        return Cell.unscored(f"column {column!r}: {exc}")
    if not values:
        return Cell.unscored(f"no log-probabilities in column {column!r}")
    return _cell(values, "column")


def score(row: Datum, params: Mapping[str, Any], reply: Sequence[float | None]) -> Cell:
    values = [v for v in reply if v is not None]
    if not values:
        return Cell.unscored("the endpoint returned no log-probabilities")
    return _cell(values, "endpoint")


def _cell(values: list[float], source: str) -> Cell:
    try:
        value = perplexity(values)
    except OverflowError:
        return Cell.unscored("perplexity overflows (log-probabilities too low)")
    return Cell(value, {"tokens": len(values), "source": source})


SPEC = declare(
    "perplexity", "Perplexity", "exp of the mean negative log-probability of the prediction's tokens.",
    ("prediction",), EndpointPlan(request, score),
    "With logprobs_column, reads natural-log token probabilities from that metadata column (a list, a JSON "
    "list or comma/space separated numbers); a row without them, or with a value above 0, is unscored. "
    "Without it, asks the endpoint's completions API for the log-probabilities of the prediction as a prompt "
    "(the text alone, not conditioned on the query); the first token, which has none, is skipped.",
    direction="lower", value_range=(1.0, None),
    params=(Param("logprobs_column", "str", None,
                  "metadata column with the prediction's token log-probabilities; empty: ask the endpoint",
                  is_column=True),))
