"""Answer relevance: share of the answer's statements that are relevant to the query (seed definition)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...model import Cell, Datum
from .extract import DUPLICATES, DUPLICATES_NOTE, SAMPLES, statements
from ..metric import Asker, JudgePlan, Outcome, ask_verdicts, declare
from ..prompting import (Request, fence, keyed_check, messages, numbered, placeholder_verdicts,
                         strict_object, verdict_list)

VERSION = "answer_relevance/3"

SYSTEM = """\
Decide whether each numbered statement of an answer is relevant to the question. Reply with JSON only.
"yes": the statement itself answers the question, or part of it. "no": anything else, including filler, \
off-topic statements and supporting detail that does not answer the question by itself. A wrong \
statement can still be relevant. One verdict per statement: its number in "item", a one-sentence reason, then the verdict."""


def request(query: str, statements: Sequence[str]) -> Request:
    n = len(statements)
    return Request("answer_relevance", VERSION,
                   messages(SYSTEM, fence("Question", query) + "\n\n" + numbered("Statements", statements)),
                   strict_object({"verdicts": verdict_list("yes", "no")}),
                   placeholder={"verdicts": placeholder_verdicts(n, "yes")},
                   check=keyed_check({"verdicts": n}, "statement"))


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    found = await statements(ask, row.prediction or "")
    rows = found.rows("statements.prediction")
    if not found.items:
        return Outcome(Cell.unscored("no statements in the prediction"), rows)
    judged = await ask_verdicts(ask, request(row.query or "", found.items), found.items)
    relevant, total = judged.count("yes", weights=found.weights(params)), found.total(params)
    return Outcome(Cell(relevant / total, {"relevant": relevant, "statements": total}),
                   rows + judged.rows("answer_relevance"))


SPEC = declare(
    "answer_relevance", "Answer relevance", "Share of the answer's statements that are relevant to the query.",
    ("query", "prediction"), JudgePlan(score, (SAMPLES[0], request("q", ["a"])), empty="unscored"),
    "Only statements that answer the query count as relevant; supporting detail, filler and off-topic "
    "statements count against. Questions in the answer count as statements (as in the seed system), so an "
    "answer that ends by asking something back is not more relevant for it. No statements extracted: "
    "unscored (a share of nothing is undefined). No query: unscored. " + DUPLICATES_NOTE,
    params=(DUPLICATES,),
    departures=(
        "No statements extracted: unscored (\"no statements in the prediction\"); the seed system gives 0.0. A "
        "share of nothing is undefined, and a 0 would rank a reply with nothing to judge below an off-topic one.",
        "No query: unscored (\"no query\"); the seed system asks the judge with an empty question and reports "
        "its number. Relevance to no question is not a measurement.",
        "Empty prediction: unscored; the seed system gives 0.0 (no statements). See the rule above."))
