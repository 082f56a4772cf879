"""Verdict prompts that judge an answer: against a reference, against the question, as a grade."""

from __future__ import annotations

from typing import Sequence

from .common import (STRING, TOKENS_PER_RATING, TOKENS_PER_VERDICT, Request, block, exact_array, labels,
                     messages, numbered, placeholder_items, strict_object)

ANSWER_CORRECTNESS_VERSION = "answer_correctness/1"
ANSWER_RELEVANCE_VERSION = "answer_relevance/1"
QA_GRADE_VERSION = "qa_grade/1"

_CORRECTNESS_SYSTEM = """\
You compare an answer with a reference answer, one statement at a time. Reply with JSON only.

"answer_statements": for each statement of the answer, decide whether the reference backs it.
- "supported": the reference states it, or it follows directly from what the reference states.
- "unsupported": the reference contradicts it, or does not say it.

"reference_statements": for each statement of the reference, decide whether the answer conveys it.
- "present": the answer states it, in any wording.
- "missing": the answer does not state it, or states something else.

Judge meaning, not wording. Copy every statement exactly as given, keep the given order, and give each \
verdict a one-sentence reason before the verdict."""

_RELEVANCE_SYSTEM = """\
You decide, for each statement of an answer, whether it helps answer the question. Reply with JSON only.

- "yes": the statement addresses the question, directly or as supporting detail that bears on it.
- "no": the statement is about something else, or says nothing about the question (filler such as \
greetings, disclaimers or offers of further help).

Judge relevance only: a wrong statement can still be relevant. Copy every statement exactly as given, \
keep the given order, and give a one-sentence reason before each verdict."""

_GRADE_SYSTEM = """\
You grade an answer to a question against one or more reference answers. Reply with JSON only.

- "CORRECT": the answer gives what a reference answer gives for what the question asks. Wording, \
length and extra detail do not matter as long as nothing in the answer contradicts that reference.
- "INCORRECT": the answer gives something else, contradicts the reference, hedges between several \
answers, or does not answer.

When there are several references, the answer is CORRECT if it agrees with any one of them. Give a \
short reason first, then the grade."""


def _statement_item(*verdicts: str) -> dict:
    return strict_object({"statement": STRING, "reason": STRING, "verdict": labels(*verdicts)})


def answer_correctness(prediction: str, prediction_statements: Sequence[str], reference: str,
                       reference_statements: Sequence[str]) -> Request:
    """Both directions of the comparison with one reference: tp/fp from the answer, fn from the reference."""
    user = "\n\n".join([
        block("reference", reference),
        numbered("reference_statements", reference_statements),
        block("answer", prediction),
        numbered("answer_statements", prediction_statements),
    ])
    np, nr = len(prediction_statements), len(reference_statements)
    return Request(
        step="answer_correctness",
        version=ANSWER_CORRECTNESS_VERSION,
        messages=messages(_CORRECTNESS_SYSTEM, user),
        schema=strict_object({
            "answer_statements": exact_array(_statement_item("supported", "unsupported"), np),
            "reference_statements": exact_array(_statement_item("present", "missing"), nr),
        }),
        placeholder={
            "answer_statements": placeholder_items(np, statement="", reason="", verdict="supported"),
            "reference_statements": placeholder_items(nr, statement="", reason="", verdict="present"),
        },
        reply_tokens=10 + TOKENS_PER_VERDICT * (np + nr),
    )


def answer_relevance(query: str, prediction_statements: Sequence[str]) -> Request:
    n = len(prediction_statements)
    return Request(
        step="answer_relevance",
        version=ANSWER_RELEVANCE_VERSION,
        messages=messages(_RELEVANCE_SYSTEM, block("question", query) + "\n\n"
                          + numbered("statements", prediction_statements)),
        schema=strict_object({"verdicts": exact_array(_statement_item("yes", "no"), n)}),
        placeholder={"verdicts": placeholder_items(n, statement="", reason="", verdict="yes")},
        reply_tokens=6 + TOKENS_PER_VERDICT * n,
    )


def qa_grade(query: str, references: Sequence[str], prediction: str) -> Request:
    refs = "\n\n".join(block(f"reference_{i}", ref) for i, ref in enumerate(references, start=1))
    user = "\n\n".join([block("question", query), refs, block("answer", prediction)])
    return Request(
        step="qa_grade",
        version=QA_GRADE_VERSION,
        messages=messages(_GRADE_SYSTEM, user),
        schema=strict_object({"reason": STRING, "grade": labels("CORRECT", "INCORRECT")}),
        placeholder={"reason": "", "grade": "CORRECT"},
        reply_tokens=TOKENS_PER_RATING,
    )
