"""Context recall: share of the reference's statements the passages support, best reference (seed definition)."""

from __future__ import annotations

import asyncio
from typing import Any, Mapping, Sequence

from ...model import Datum
from .extract import DUPLICATES, DUPLICATES_NOTE, SAMPLES, Extracted, statements
from ..metric import (Asker, JudgePlan, Outcome, ask_verdicts, best_reference, contexts, declare, ref_step,
                      references)
from ..prompting import (Request, keyed_check, messages, numbered, passages,
                         placeholder_verdicts, strict_object, verdict_list)
from ._passages import NOT_MEASURED

VERSION = "context_recall/3"

SYSTEM = """\
Can each numbered statement of a reference answer be attributed to the retrieved passages? Reply with \
JSON only.
"yes": the passages, alone or together, state it or directly imply it. "no": they do not, including when \
it needs outside knowledge. One verdict per statement: its number in "item", a one-sentence reason, then the verdict."""


def request(ctx: Sequence[str], statements: Sequence[str]) -> Request:
    n = len(statements)
    return Request("context_recall", VERSION,
                   messages(SYSTEM, passages(ctx) + "\n\n" + numbered("Reference statements", statements)),
                   strict_object({"verdicts": verdict_list("yes", "no")}),
                   placeholder={"verdicts": placeholder_verdicts(n, "yes")},
                   check=keyed_check({"verdicts": n}, "statement"))


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    ctx, refs = contexts(row), references(row)
    extracted = await asyncio.gather(*(statements(ask, ref) for ref in refs))
    rows = [r for i, e in enumerate(extracted) for r in e.rows(ref_step("statements.reference", i))]

    async def one(i: int, found: Extracted) -> dict[str, Any] | None:
        if not found.items:
            return None
        judged = await ask_verdicts(ask, request(ctx, found.items), found.items)
        rows.extend(judged.rows(ref_step("context_recall", i)))
        hits, total = judged.count("yes", weights=found.weights(params)), found.total(params)
        return {"attributed": hits, "statements": total, "value": hits / total}

    per_ref = await asyncio.gather(*(one(i, e) for i, e in enumerate(extracted)))
    return best_reference(list(per_ref), ("attributed", "statements"), rows, "no statements in the reference")


SPEC = declare(
    "context_recall", "Context recall", "Share of the reference's statements that the contexts support.",
    ("references", "contexts"), JudgePlan(score, (SAMPLES[0], request(["c"], ["s"])), empty="n/a"),
    "Several references: the best share counts. A reference with no statements is skipped; if none has "
    "statements the cell is unscored. No contexts or no references: unscored. The reference statements are "
    "the same request as answer correctness's. " + DUPLICATES_NOTE,
    params=(DUPLICATES,),
    departures=(
        "No contexts or no references: unscored (\"no contexts\", \"no references\"); the seed system gives 0.0 "
        "(1.0 when both are missing). " + NOT_MEASURED,
        "A reference with no statements is skipped, and with none left the cell is unscored; the seed system "
        "stops with a division by zero instead of a number."))
