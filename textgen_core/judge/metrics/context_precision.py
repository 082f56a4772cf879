"""Context precision: are the passages useful for the reference answer ranked first? (seed definition)"""

from __future__ import annotations

import asyncio
from typing import Any, Mapping, Sequence

from ...model import Cell, Datum
from ..metric import Asker, JudgePlan, Outcome, ask_verdicts, contexts, declare, ref_step, references
from ..prompting import Request, fence
from ._passages import NOT_MEASURED, blank_contexts, request as passage_request

VERSION = "context_precision/3"

SYSTEM = """\
Decide which retrieved passages are useful for arriving at the reference answer to the question. Reply \
with JSON only.
"yes": the passage holds information that helps produce the reference answer, wholly or partly. "no": it \
does not. Judge each passage on its own, whatever its position. One verdict per passage: its number in "item", a one-sentence reason, then the verdict."""


def request(query: str, reference: str, ctx: list[str]) -> Request:
    head = fence("Question", query) + "\n\n" + fence("Reference answer", reference)
    return passage_request("context_precision", VERSION, SYSTEM, head, ctx, "yes", "no")


def average_precision(relevant: Sequence[bool]) -> float:
    """Mean of precision@k over the useful positions k; 0 when none is.

    >>> average_precision([True, False, False, True])
    0.75
    >>> average_precision([False, True, False, True])
    0.5
    """
    hits, total = 0, 0.0
    for k, useful in enumerate(relevant, start=1):
        if useful:
            hits += 1
            total += hits / k
    return 0.0 if hits == 0 else total / hits


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    ctx, refs = contexts(row), references(row)
    judged = await asyncio.gather(*(ask_verdicts(ask, request(row.query or "", ref, ctx), ctx) for ref in refs))
    rows = [r for i, j in enumerate(judged) for r in j.rows(ref_step("context_precision", i))]
    useful = [any(j.labels[k] == "yes" for j in judged) for k in range(len(ctx))]
    details = {"verdicts": ["yes" if u else "no" for u in useful], "relevant": sum(useful), "contexts": len(ctx)}
    return Outcome(Cell(average_precision(useful), details), rows)


SPEC = declare(
    "context_precision", "Context precision",
    "Are the contexts useful for the reference answer ranked first? Mean of precision@k over the useful "
    "positions k.", ("query", "references", "contexts"),
    JudgePlan(score, (request("q", "r", ["c"]),), empty="n/a"),
    "One verdict per (context, reference); a context is useful if it is useful for any reference. 0 when no "
    "context is useful. Order matters: [yes, no, no, yes] = 0.75, [no, yes, no, yes] = 0.5. No contexts, no "
    "references or no query: unscored.",
    departures=(
        "No contexts or no references: unscored (\"no contexts\", \"no references\"); the seed system gives 0.0 "
        "(1.0 when both are missing). " + NOT_MEASURED,
        "No query: unscored (\"no query\"); the seed system asks the judge with an empty question. Usefulness "
        "for answering no question is not defined.",
        blank_contexts("rules it not useful and so lowers the score (a useful chunk then an empty one: 1.0 here "
                       "as there, an empty one first: 0.5 there, 1.0 here)")))
