"""The 1-5 rating request shared in shape by coherence and summary coherence."""

from __future__ import annotations

from typing import Any

from ...model import Cell
from ..metric import Asker, Outcome
from ..prompting import STRING, Request, messages, strict_object

SCALE = {"type": "integer", "enum": [1, 2, 3, 4, 5]}
CLOSING = "Reply with JSON only: a short reason, then the score (a whole number from 1 to 5)."


def request(step: str, version: str, system: str, user: str) -> Request:
    return Request(step, version, messages(system, user), strict_object({"reason": STRING, "score": SCALE}),
                   placeholder={"reason": "", "score": 3})


async def rate(ask: Asker, request_: Request, item: str) -> Outcome:
    """The rating as the cell's value (the client has turned 4.0 and "4" into 4)."""
    answer = await ask.ask(request_)
    value: Any = answer.value["score"]
    reason = str(answer.value.get("reason", ""))
    return Outcome(Cell(float(value), {"score": int(value)}),
                   [(request_.step, 0, item, str(int(value)), reason, answer.cache_key)])
