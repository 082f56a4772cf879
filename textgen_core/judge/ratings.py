"""Probability-weighted ratings (G-Eval): a rating cell's value from the judge's token probabilities.

A judge that writes "4" on a 1-5 scale was perhaps 60% sure of 4 and 30% of 3. Asked with log-probabilities,
the endpoint says so at the rating's token; the weighted rating is the mean of the scale's values weighted by
those probabilities, renormalised over the scale's tokens present (as G-Eval, deepeval and Opik compute it).
The rating the judge wrote stays the verdict; the ``rating`` parameter decides which of the two is the cell's
value. Where the endpoint gives no usable probabilities the cell keeps the written rating, with the reason
in its details (``weighted_unavailable``), which ``textgen-eval run`` counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from ..llm.logprobs import TOP_LOGPROBS
from ..metrics.spec import Param
from ..model import Cell
from .metric import Answer
from .prompting import Request

#: The one declaration of the parameter, shared by every rating metric (built-in and custom).
RATING = Param(
    "rating", "choice", "chosen",
    "which value a rating cell takes: chosen (the rating the judge wrote) or weighted (G-Eval: the mean of the "
    "scale's ratings weighted by the judge's token probabilities at the rating, asked with logprobs and "
    f"top_logprobs={TOP_LOGPROBS}); an endpoint without log-probabilities keeps the chosen rating, with the "
    "reason in the cell's details", choices=("chosen", "weighted"))

#: The details key of a cell that asked for a weighted rating and kept the chosen one.
UNAVAILABLE = "weighted_unavailable"


@dataclass(frozen=True)
class Weighted:
    """A weighted rating: the value, each scale value's renormalised probability, and how much probability
    the scale's tokens held before renormalising (``coverage``; 1 when the alternatives are all ratings)."""

    value: float
    probabilities: dict[str, float]
    coverage: float


def wants_weights(params: Mapping[str, Any]) -> bool:
    return params.get("rating") == "weighted"


def asking_weights(request: Request, field: str) -> Request:
    """``request`` asking for the log-probabilities at ``field``'s value (a different request: its own cache key)."""
    return replace(request, logprobs_field=field)


def _norm(token: str) -> str:
    """A token as a rating: "5", " 5", "\\"5" and "5 " all read as "5"."""
    return token.strip(' \t\r\n":')


def weigh(found: Any, scale: Sequence[int]) -> Weighted | str:
    """The weighted rating from :func:`~textgen_core.llm.logprobs.field_alternatives`' result, or why not.

    Tokens that read as the same rating add up ("5" and " 5"); tokens that are no rating of the scale are left
    out and the rest renormalised. On a scale with two-digit ratings a lone digit could begin one ("1" of
    "10"), so the alternatives are only read when the tokens show whole two-digit ratings.
    """
    if isinstance(found, str):
        return found
    if not isinstance(found, Mapping) or not isinstance(found.get("top"), list):
        return "the endpoint returned no log-probabilities"
    values = {str(v): v for v in scale}
    pairs = [(str(t), lp) for t, lp in found["top"]]
    if found.get("token") is not None and str(found["token"]) not in {t for t, _ in pairs}:
        pairs.append((str(found["token"]), found.get("logprob")))  # the chosen token, when not among the top
    if any(len(text) > 1 for text in values) and not any(len(_norm(t)) > 1 and _norm(t) in values for t, _ in pairs):
        return (f"on a {min(scale)}-{max(scale)} scale a single digit may begin a two-digit rating, and the "
                "judge's tokens show no whole two-digit rating to tell them apart")
    mass: dict[str, float] = {}
    for token, logprob in pairs:
        rating = _norm(token)
        if rating in values:
            mass[rating] = mass.get(rating, 0.0) + (0.0 if logprob is None else math.exp(logprob))
    total = math.fsum(mass.values())
    if not mass:
        return (f"none of the scale's ratings ({min(scale)}-{max(scale)}) is among the {len(pairs)} most likely "
                "tokens at the rating")
    if not total > 0:
        return "every rating token at the rating has probability 0"
    probabilities = {r: p / total for r, p in sorted(mass.items(), key=lambda kv: values[kv[0]])}
    value = math.fsum(values[r] * p for r, p in probabilities.items())
    return Weighted(value, probabilities, total)


def rating_cell(rating: int, answer: Answer, scale: Sequence[int], params: Mapping[str, Any],
                field: str = "score") -> Cell:
    """The cell of a rating: its value is the written rating, or (``rating=weighted``) the weighted one, the
    written rating kept in the details either way."""
    details: dict[str, Any] = {field: rating}
    if not wants_weights(params):
        return Cell(float(rating), details)
    weighted = weigh(answer.logprobs, scale)
    if isinstance(weighted, str):
        return Cell(float(rating), details | {UNAVAILABLE: weighted})
    details |= {"weighted": weighted.value, "probabilities": weighted.probabilities, "coverage": weighted.coverage}
    ignored = answer.logprobs.get("ignored") if isinstance(answer.logprobs, Mapping) else 0
    if ignored:  # NaN, text or a probability above 1 among the alternatives: left out, and said
        details["ignored_alternatives"] = ignored
    return Cell(weighted.value, details)
