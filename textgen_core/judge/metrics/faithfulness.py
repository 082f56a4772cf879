"""Faithfulness: share of the prediction's claims implied by the passages (seed definition).

Claims are extracted in their own step, then each claim is judged against the
passages; a claim the passages do not mention counts against, as a
contradicted one does.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...model import Cell, Datum
from ..extract import SAMPLES, claims
from ..metric import Asker, JudgePlan, Outcome, ask_verdicts, contexts, declare
from ..prompting import (Request, keyed_check, messages, numbered, passages,
                         placeholder_verdicts, strict_object, verdict_list)

VERSION = "faithfulness/3"

SYSTEM = """\
Check each numbered claim of an answer against the retrieved passages, the only source of truth here \
(ignore outside knowledge). Reply with JSON only.
"yes": the passages state the claim or it follows directly from them. "no": they contradict it or do not \
say it, even if it may be true. One verdict per claim: its number in "item", a one-sentence reason, then the verdict."""


def request(ctx: Sequence[str], claims: Sequence[str]) -> Request:
    n = len(claims)
    return Request("faithfulness", VERSION, messages(SYSTEM, passages(ctx) + "\n\n" + numbered("Claims", claims)),
                   strict_object({"verdicts": verdict_list("yes", "no")}),
                   placeholder={"verdicts": placeholder_verdicts(n, "yes")},
                   check=keyed_check({"verdicts": n}, "claim"))


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    ctx = contexts(row)
    found = await claims(ask, row.prediction or "")
    rows = found.rows("claims")
    if not found.items:
        return Outcome(Cell.unscored("no claims in the prediction"), rows)
    judged = await ask_verdicts(ask, request(ctx, found.items), found.items)
    implied = judged.count("yes")
    return Outcome(Cell(implied / len(found.items), {"implied": implied, "claims": len(found.items)}),
                   rows + judged.rows("faithfulness"))


SPEC = declare(
    "faithfulness", "Faithfulness",
    "Share of the prediction's claims implied by the contexts; claims the contexts contradict or do not "
    "mention count against it.", ("prediction", "contexts"),
    JudgePlan(score, (SAMPLES[1], request(["c"], ["s"])), empty="unscored"),
    "Claims are extracted in their own step (checkable assertions only), then each is judged. No contexts: "
    "unscored.",
    departures="a prediction with no claims is unscored (\"no claims in the prediction\"): a share of nothing "
               "is undefined, and the seed system leaves the case open.")
