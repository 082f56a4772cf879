"""Answer correctness: F1 of statements against the reference, best over references (seed definition)."""

from __future__ import annotations

import asyncio
from typing import Any, Mapping, Sequence

from ...model import Datum
from ...metrics.spec import Param
from .extract import DUPLICATES, DUPLICATES_NOTE, Extracted, SAMPLES, statements
from ..metric import Asker, JudgePlan, Outcome, best_reference, declare, judged, ref_step, references
from ..prompting import (Request, keyed_check, messages, numbered, placeholder_verdicts,
                         strict_object, verdict_list)

VERSION = "answer_correctness/4"

SYSTEM = """\
Compare an answer with a reference answer, statement by statement. Reply with JSON only.
"answer_statements": is each answer statement backed by the reference? "supported": the reference states \
it or it follows directly; "unsupported": contradicted or absent.
"reference_statements": what became of each reference statement? "conveyed": the answer says it, in any \
wording; "backs_answer": the answer does not say all of it, but it backs an answer statement you marked \
supported; "missing": neither.
Judge meaning, not wording. One verdict per statement: its number in "item", a one-sentence reason, then the verdict."""


def request(answer_statements: Sequence[str], reference_statements: Sequence[str]) -> Request:
    """Both directions of the comparison with one reference: tp/fp from the answer, fn from the reference."""
    na, nr = len(answer_statements), len(reference_statements)
    user = numbered("Reference statements", reference_statements) + "\n\n" + numbered(
        "Answer statements", answer_statements)
    return Request("answer_correctness", VERSION, messages(SYSTEM, user),
                   strict_object({"answer_statements": verdict_list("supported", "unsupported"),
                                  "reference_statements": verdict_list("conveyed", "backs_answer", "missing")}),
                   placeholder={"answer_statements": placeholder_verdicts(na, "supported"),
                                "reference_statements": placeholder_verdicts(nr, "conveyed")},
                   check=keyed_check({"answer_statements": na, "reference_statements": nr}, "statement"))


def f1(tp: int, fp: int, fn: int) -> float:
    """tp / (tp + 0.5 (fp + fn)); 0 when there is no true positive."""
    return 0.0 if tp <= 0 else tp / (tp + 0.5 * (fp + fn))


#: Reference-statement verdicts that count as false negatives, by ``fn_rule``.
MISSED = {"seed": ("missing",), "conveyed": ("missing", "backs_answer")}

FN_RULE = Param(
    "fn_rule", "choice", "seed",
    "when a reference statement counts as missed (fn): 'seed' (the seed system's rule but for one case, listed under Departs from the seed system) only when the answer "
    "neither conveys it nor has a supported statement it backs; 'conveyed' whenever the answer does not convey "
    "it in full (the reading of the seed document's sentence).", choices=tuple(MISSED))


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    refs = references(row)
    missed = MISSED[params.get("fn_rule", "seed")]
    answer, *ref_units = await asyncio.gather(statements(ask, row.prediction or ""),
                                              *(statements(ask, r) for r in refs))
    rows = answer.rows("statements.prediction")

    async def one(i: int, ref: Extracted) -> dict[str, Any] | None:
        rows.extend(ref.rows(ref_step("statements.reference", i)))
        if not answer.items and not ref.items:
            return None
        if not answer.items or not ref.items:  # nothing can be a true positive
            return {"tp": 0, "fp": answer.total(params), "fn": ref.total(params), "value": 0.0}
        reply = await ask.ask(request(answer.items, ref.items))
        side_a = judged(reply, "answer_statements", answer.items)
        side_r = judged(reply, "reference_statements", ref.items)
        rows.extend(side_a.rows(ref_step("answer_correctness", i)))
        rows.extend(side_r.rows(ref_step("answer_correctness", i), start=len(answer.items)))
        tp = side_a.count("supported", weights=answer.weights(params))
        fp = answer.total(params) - tp
        fn = side_r.count(*missed, weights=ref.weights(params))
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
    "Statements are extracted with the same request as for answer relevance and context recall; questions "
    "count as statements. By default (fn_rule = 'seed') a reference statement is a false negative only when "
    "the answer neither conveys it nor got right a statement it backs, so \"The museum opens at nine.\" "
    "against \"The museum opens at nine on weekdays.\" scores 1.0. The seed document's sentence (fn when a "
    "reference statement is not represented in the answer) reads the other way; fn_rule = 'conveyed' follows "
    "it and scores that answer 0.667. One judge reply serves both rules. " + DUPLICATES_NOTE,
    params=(FN_RULE, DUPLICATES),
    departures=(
        "No references: unscored (\"no references\"); the seed system gives 0.0. With nothing to compare "
        "against, a 0 would count a gap in the dataset as a wrong answer.",
        "No statements on either side for every reference: unscored; the seed system gives 0.0 (no true "
        "positive). Nothing was compared, so there is no correctness to report.",
        "The comparison step does not show the judge the query (the seed system does): statements are "
        "compared by meaning, and the query would only tempt the judge to grade relevance.",
        "With fn_rule = 'seed', a reference statement the answer conveys is never a false negative; the seed "
        "system counts it as one unless it backs an answer statement judged supported. The two differ when the "
        "answer says a reference fact with more detail than the reference has: \"The museum opens at nine on "
        "weekdays. It has a rooftop garden.\" against \"The museum opens at nine. It has a rooftop garden.\" "
        "scores 0.667 here (tp 1, fp 1, fn 0) and 0.5 in the seed system (tp 1, fp 1, fn 1). The extra detail is "
        "one fault, already counted as the unsupported answer statement; counting the reference fact the answer "
        "did state as missed as well would charge it twice. The judge rules on each reference statement by "
        "itself (conveyed, backs a supported statement, missing), not on which answer statement it backs, so "
        "the seed system's rule cannot be read from its reply without a second call per reference."))
