"""QA grade: CORRECT (1) or INCORRECT (0) against the reference answers, in one call."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...model import Cell, Datum
from ..metric import Asker, JudgePlan, Outcome, declare, references
from ..prompting import STRING, Request, fence, labels, messages, strict_object

VERSION = "qa_grade/3"

SYSTEM = """\
Grade an answer to a question against the reference answer(s). Reply with JSON only: a short reason, \
then the grade.
"CORRECT": it gives what a reference gives for what is asked; wording, length and extra detail that \
contradicts nothing do not matter. "INCORRECT": it gives something else, contradicts the reference, \
hedges between answers, or does not answer. With several references, agreeing with any one is CORRECT."""


def request(query: str, refs: Sequence[str], prediction: str) -> Request:
    shown = "\n\n".join(fence(f"Reference answer {i}", r) for i, r in enumerate(refs, start=1))
    user = "\n\n".join([fence("Question", query), shown, fence("Answer", prediction)])
    return Request("qa_grade", VERSION, messages(SYSTEM, user),
                   strict_object({"reason": STRING, "grade": labels("CORRECT", "INCORRECT")}),
                   placeholder={"reason": "", "grade": "CORRECT"})


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    refs = references(row)
    req = request(row.query or "", refs, row.prediction or "")
    answer = await ask.ask(req)
    grade = str(answer.value["grade"])
    return Outcome(Cell(1.0 if grade == "CORRECT" else 0.0, {"grade": grade}),
                   [("qa_grade", 0, "answer", grade, str(answer.value.get("reason", "")), answer.cache_key)])


SPEC = declare(
    "qa_grade", "QA grade", "1 when the judge grades the answer CORRECT against the reference answer(s), 0 when "
    "INCORRECT.", ("query", "prediction", "references"), JudgePlan(score, (request("q", ["r"], "a"),), empty=0.0),
    "CORRECT if the answer agrees with any reference; extra detail is fine unless it contradicts. All "
    "references are shown in one call. No references or no query: unscored. The seed system has no such "
    "metric, so there is nothing to depart from.")
