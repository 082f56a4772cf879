"""Context relevance: share of the retrieved passages relevant to the query (seed definition)."""

from __future__ import annotations

from typing import Any, Mapping

from ...model import Datum
from ..metric import Asker, JudgePlan, Outcome, contexts, declare
from ..prompting import Request, fence
from ._passages import NOT_MEASURED, blank_contexts, request as passage_request, share as passage_share

VERSION = "context_relevance/3"

SYSTEM = """\
Decide whether each retrieved passage is relevant to the question. Reply with JSON only.
"yes": some part of it helps answer the question, even partly. "no": nothing in it does. One verdict per passage: its number in "item", a one-sentence reason, then the verdict."""


def request(query: str, ctx: list[str]) -> Request:
    return passage_request("context_relevance", VERSION, SYSTEM, fence("Question", query), ctx, "yes", "no")


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    ctx = contexts(row)
    return await passage_share(ask, request(row.query or "", ctx), ctx, "yes", "relevant")


SPEC = declare(
    "context_relevance", "Context relevance", "Share of the contexts relevant to the query.",
    ("query", "contexts"), JudgePlan(score, (request("q", ["c"]),), empty="n/a"),
    "No contexts or no query: unscored.",
    departures=(
        "No contexts: unscored (\"no contexts\"); the seed system gives 0.0. " + NOT_MEASURED,
        "No query: unscored (\"no query\"); the seed system asks the judge with an empty question. Relevance to "
        "no question is not defined.",
        blank_contexts("which the judge rules irrelevant (a relevant and an empty chunk: 0.5 there, 1.0 here)")))
