"""Hallucination: share of the retrieved passages the prediction contradicts (seed definition)."""

from __future__ import annotations

from typing import Any, Mapping

from ...model import Datum
from ..metric import Asker, JudgePlan, Outcome, contexts, declare
from ..prompting import Request, fence
from ._passages import blank_contexts, request as passage_request, share as passage_share

VERSION = "hallucination/3"

SYSTEM = """\
Decide whether the answer contradicts each retrieved passage. Reply with JSON only.
"contradicted": the answer states something in direct conflict with the passage. "not_contradicted": \
anything else, including information the passage does not mention, or an unrelated passage. \
One verdict per passage: its number in "item", a one-sentence reason, then the verdict."""


def request(prediction: str, ctx: list[str]) -> Request:
    return passage_request("hallucination", VERSION, SYSTEM, fence("Answer", prediction), ctx,
                             "contradicted", "not_contradicted")


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    ctx = contexts(row)
    return await passage_share(ask, request(row.prediction or "", ctx), ctx, "contradicted", "contradicted")


SPEC = declare(
    "hallucination", "Hallucination", "Share of the contexts that the prediction contradicts.",
    ("prediction", "contexts"), JudgePlan(score, (request("p", ["c"]),), empty="unscored"),
    "Adding facts a context does not mention is not a contradiction. No contexts: unscored.", direction="lower",
    departures=(
        "No contexts: unscored (\"no contexts\"); the seed system stops with an error instead of a number.",
        "Empty prediction: unscored (\"empty prediction\"); the seed system asks the judge, which finds that "
        "nothing contradicts a passage: 0.0, the best value, for a model that said nothing.",
        blank_contexts("that nothing contradicts, which lowers the score (a contradicted and an empty chunk: "
                       "0.5 there, 1.0 here)")))
