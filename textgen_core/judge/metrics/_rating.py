"""The 1-5 rating request shared in shape by coherence and summary coherence."""

from __future__ import annotations

from typing import Any, Mapping

from ..metric import Asker, Outcome
from ..prompting import STRING, Request, messages, strict_object
from ..ratings import asking_weights, rating_cell, wants_weights

SCALE = {"type": "integer", "enum": [1, 2, 3, 4, 5]}
CLOSING = "Reply with JSON only: a short reason, then the score (a whole number from 1 to 5)."


def request(step: str, version: str, system: str, user: str) -> Request:
    return Request(step, version, messages(system, user), strict_object({"reason": STRING, "score": SCALE}),
                   placeholder={"reason": "", "score": 3})


async def rate(ask: Asker, request_: Request, item: str, params: Mapping[str, Any]) -> Outcome:
    """The rating as the cell's value (the client has turned 4.0 and "4" into 4), or with ``rating=weighted``
    the probability-weighted rating (:mod:`..ratings`); the verdict is the written rating either way."""
    if wants_weights(params):
        request_ = asking_weights(request_, "score")
    answer = await ask.ask(request_)
    value: Any = int(answer.value["score"])
    reason = str(answer.value.get("reason", ""))
    return Outcome(rating_cell(value, answer, SCALE["enum"], params),
                   [(request_.step, 0, item, str(value), reason, answer.cache_key)])
