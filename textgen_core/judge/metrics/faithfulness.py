"""Faithfulness: share of the prediction's claims implied by the passages (seed definition).

Claims are extracted in their own step, then each claim is judged against the
passages; a claim the passages do not mention counts against, as a
contradicted one does.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...model import Cell, Datum
from ...metrics.spec import Param
from .extract import DUPLICATES, DUPLICATES_NOTE, SAMPLES, claims
from ..metric import Asker, JudgePlan, Outcome, ask_verdicts, contexts, declare
from ..prompting import (Request, keyed_check, messages, numbered, passages,
                         placeholder_verdicts, strict_object, verdict_list)
from ._passages import NOT_MEASURED

VERSION = "faithfulness/4"

SYSTEM = """\
Check each numbered claim of an answer against the retrieved passages, the only source of truth here \
(ignore outside knowledge). Reply with JSON only.
"yes": the passages state the claim or it follows directly from them. Tentative wording added to what the \
passages state ("..., which may attract visitors", "possibly because ...") does not make a claim unfaithful: \
judge what it asserts. "no": the passages contradict the claim or do not say what it asserts, even if it may \
be true. One verdict per claim: its number in "item", a one-sentence reason, then the verdict."""


def request(ctx: Sequence[str], claims: Sequence[str]) -> Request:
    n = len(claims)
    return Request("faithfulness", VERSION, messages(SYSTEM, passages(ctx) + "\n\n" + numbered("Claims", claims)),
                   strict_object({"verdicts": verdict_list("yes", "no")}),
                   placeholder={"verdicts": placeholder_verdicts(n, "yes")},
                   check=keyed_check({"verdicts": n}, "claim"))


NO_CLAIMS = Param(
    "no_claims", "choice", "unscored",
    "a prediction with no checkable claims: 'unscored' (\"no claims in the prediction\"), or 'faithful' (1.0, "
    "the seed system's rule: nothing unfaithful was said).", choices=("unscored", "faithful"))


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    ctx = contexts(row)
    found = await claims(ask, row.prediction or "")
    rows = found.rows("claims")
    if not found.items:
        if params.get("no_claims", "unscored") == "faithful":
            return Outcome(Cell(1.0, {"implied": 0, "claims": 0}), rows)
        return Outcome(Cell.unscored("no claims in the prediction"), rows)
    judged = await ask_verdicts(ask, request(ctx, found.items), found.items)
    implied, total = judged.count("yes", weights=found.weights(params)), found.total(params)
    return Outcome(Cell(implied / total, {"implied": implied, "claims": total}),
                   rows + judged.rows("faithfulness"))


SPEC = declare(
    "faithfulness", "Faithfulness",
    "Share of the prediction's claims implied by the contexts; claims the contexts contradict or do not "
    "mention count against it.", ("prediction", "contexts"),
    JudgePlan(score, (SAMPLES[1], request(["c"], ["s"])), empty="unscored"),
    "Claims are extracted in their own step (checkable assertions only), then each is judged. A claim whose "
    "assertion the passages state stays faithful when it adds tentative wording (\"X, which may attract early "
    "visitors\" with X in a passage: 1.0), as in the seed system's own worked example. No contexts: unscored. "
    + DUPLICATES_NOTE,
    params=(NO_CLAIMS, DUPLICATES),
    departures=(
        "A prediction with no claims is unscored by default (\"no claims in the prediction\"); the seed system "
        "returns 1.0, reasoning that nothing unfaithful was said. A refusal, a greeting or a question back has no "
        "claims and would get the best value, so a model that answers nothing would rank first; no_claims = "
        "'faithful' gives the seed system's 1.0.",
        "No contexts: unscored (\"no contexts\"); the seed system gives 0.0. " + NOT_MEASURED,
        "Empty prediction: unscored (\"empty prediction\"); the seed system extracts no claims from it and gives "
        "1.0, the best value."))
