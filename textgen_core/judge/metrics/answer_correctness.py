"""Answer correctness: F1 of statements against the reference, best over references (seed definition)."""

from __future__ import annotations

import asyncio
from typing import Any, Mapping, Sequence

from ...model import Datum
from ..extract import Extracted, SAMPLES, statements
from ..metric import Asker, JudgePlan, Outcome, best_reference, declare, judged, ref_step, references
from ..prompting import (Request, keyed_check, messages, numbered, placeholder_verdicts,
                         strict_object, verdict_list)

VERSION = "answer_correctness/3"

SYSTEM = """\
Compare an answer with a reference answer, statement by statement. Reply with JSON only.
"answer_statements": is each answer statement backed by the reference? "supported": the reference states \
it or it follows directly; "unsupported": contradicted or absent.
"reference_statements": is each reference statement conveyed by the answer? "present": in any wording; \
"missing": not stated.
Judge meaning, not wording. One verdict per statement: its number in "item", a one-sentence reason, then the verdict."""


def request(answer_statements: Sequence[str], reference_statements: Sequence[str]) -> Request:
    """Both directions of the comparison with one reference: tp/fp from the answer, fn from the reference."""
    na, nr = len(answer_statements), len(reference_statements)
    user = numbered("Reference statements", reference_statements) + "\n\n" + numbered(
        "Answer statements", answer_statements)
    return Request("answer_correctness", VERSION, messages(SYSTEM, user),
                   strict_object({"answer_statements": verdict_list("supported", "unsupported"),
                                  "reference_statements": verdict_list("present", "missing")}),
                   placeholder={"answer_statements": placeholder_verdicts(na, "supported"),
                                "reference_statements": placeholder_verdicts(nr, "present")},
                   check=keyed_check({"answer_statements": na, "reference_statements": nr}, "statement"))


def f1(tp: int, fp: int, fn: int) -> float:
    """tp / (tp + 0.5 (fp + fn)); 0 when there is no true positive."""
    return 0.0 if tp <= 0 else tp / (tp + 0.5 * (fp + fn))


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    refs = references(row)
    answer, *ref_units = await asyncio.gather(statements(ask, row.prediction or ""),
                                              *(statements(ask, r) for r in refs))
    rows = answer.rows("statements.prediction")

    async def one(i: int, ref: Extracted) -> dict[str, Any] | None:
        rows.extend(ref.rows(ref_step("statements.reference", i)))
        if not answer.items and not ref.items:
            return None
        if not answer.items or not ref.items:  # nothing can be a true positive
            return {"tp": 0, "fp": len(answer.items), "fn": len(ref.items), "value": 0.0}
        reply = await ask.ask(request(answer.items, ref.items))
        side_a = judged(reply, "answer_statements", answer.items)
        side_r = judged(reply, "reference_statements", ref.items)
        rows.extend(side_a.rows(ref_step("answer_correctness", i)))
        rows.extend(side_r.rows(ref_step("answer_correctness", i), start=len(answer.items)))
        tp = side_a.count("supported")
        fp, fn = len(answer.items) - tp, side_r.count("missing")
        return {"tp": tp, "fp": fp, "fn": fn, "value": f1(tp, fp, fn)}

    per_ref = await asyncio.gather(*(one(i, e) for i, e in enumerate(ref_units)))
    return best_reference(list(per_ref), ("tp", "fp", "fn"), rows, "no statements in the prediction or the references")


SPEC = declare(
    "answer_correctness", "Answer correctness",
    "F1 of statements: answer statements backed by the reference (tp) against unbacked ones (fp) and "
    "reference statements the answer misses (fn): tp / (tp + 0.5 (fp + fn)).",
    ("prediction", "references"),
    JudgePlan(score, (SAMPLES[0], request(["a"], ["b"])), empty=0.0),
    "0 when tp is 0. Several references: scored against each, the best counts. A prediction or reference "
    "with no statements gives tp = 0, so 0, without a verdict call; a reference where neither side has "
    "statements is skipped, and if every reference is skipped the cell is unscored. No references: unscored. "
    "Statements are extracted with the same request as for answer relevance and context recall.")
