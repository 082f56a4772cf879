"""Context relevance: share of the retrieved passages relevant to the query (seed definition)."""

from __future__ import annotations

from typing import Any, Mapping

from ...model import Cell, Datum
from ..metric import Asker, JudgePlan, Outcome, ask_verdicts, contexts, declare
from ..prompting import Request, fence
from . import _passages

VERSION = "context_relevance/3"

SYSTEM = """\
Decide whether each retrieved passage is relevant to the question. Reply with JSON only.
"yes": some part of it helps answer the question, even partly. "no": nothing in it does. One verdict per passage: its number in "item", a one-sentence reason, then the verdict."""


def request(query: str, ctx: list[str]) -> Request:
    return _passages.request("context_relevance", VERSION, SYSTEM, fence("Question", query), ctx, "yes", "no")


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    ctx = contexts(row)
    judged = await ask_verdicts(ask, request(row.query or "", ctx), ctx)
    hits = judged.count("yes")
    return Outcome(Cell(hits / len(ctx), {"relevant": hits, "contexts": len(ctx)}), judged.rows("context_relevance"))


SPEC = declare(
    "context_relevance", "Context relevance", "Share of the contexts relevant to the query.",
    ("query", "contexts"), JudgePlan(score, (request("q", ["c"]),), empty="n/a"),
    "No contexts or no query: unscored.")
