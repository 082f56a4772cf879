"""Coherence: a 1-5 rating of how well the prediction's sentences form a whole (after the seed's G-Eval)."""

from __future__ import annotations

from typing import Any, Mapping

from ...model import Datum
from ..metric import Asker, JudgePlan, Outcome, declare
from ..prompting import Request, fence
from ..ratings import RATING
from ._rating import CLOSING, rate, request as rating_request

VERSION = "coherence/3"

SYSTEM = f"""\
Rate the coherence of a text from 1 to 5: how well its sentences build on each other in a logical order \
to form a well-structured whole. Judge the text alone, not its truth or its fit to any task.
5: clearly organized, easy to follow. 4: well organized, a minor jump or awkward transition. 3: \
understandable, but the order or links get in the way. 2: mostly disjointed. 1: incoherent.
{CLOSING}"""


def request(prediction: str) -> Request:
    return rating_request("coherence", VERSION, SYSTEM, fence("Text", prediction))


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    return await rate(ask, request(row.prediction or ""), "prediction", params)


SPEC = declare(
    "coherence", "Coherence", "1-5 rating of how well the prediction's sentences form a logical, "
    "well-structured whole; the query is not shown to the judge.", ("prediction",),
    JudgePlan(score, (request("p"),), empty="unscored"),
    "A rating written 4, 4.0 or \"4\" is read as 4; anything else outside 1-5 is re-asked. The seed system has "
    "no such metric (its coherence rating is of a summary against its source: summary_coherence), so there "
    "is nothing to depart from.", value_range=(1.0, 5.0), params=(RATING,))
