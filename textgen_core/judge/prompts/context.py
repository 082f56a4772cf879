"""Verdict prompts over retrieved contexts: precision, recall, relevance, faithfulness, hallucination."""

from __future__ import annotations

from typing import Sequence

from .common import (STRING, TOKENS_PER_VERDICT, Request, block, exact_array, labels, messages, numbered,
                     passages, placeholder_items, strict_object)

CONTEXT_PRECISION_VERSION = "context_precision/1"
CONTEXT_RECALL_VERSION = "context_recall/1"
CONTEXT_RELEVANCE_VERSION = "context_relevance/1"
FAITHFULNESS_VERSION = "faithfulness/1"
HALLUCINATION_VERSION = "hallucination/1"

_PASSAGE_ORDER = "Return one verdict per passage, in the given order, with the passage number."
_STATEMENT_ORDER = "Copy every statement exactly as given and keep the given order."

_PRECISION_SYSTEM = f"""\
You judge which retrieved passages were useful for arriving at a known correct answer to a question. \
Reply with JSON only.

- "yes": the passage holds information that helps produce the reference answer, all of it or part of it.
- "no": it does not.

Judge each passage on its own merits, whatever its position. {_PASSAGE_ORDER} Give a one-sentence reason \
before each verdict."""

_RECALL_SYSTEM = f"""\
You check whether each statement of a reference answer can be attributed to a set of retrieved \
passages. Reply with JSON only.

- "yes": the passages, alone or together, state the statement or directly imply it.
- "no": they do not; a statement that needs knowledge from outside the passages is "no".

{_STATEMENT_ORDER} Give a one-sentence reason before each verdict, naming the supporting passage when \
there is one."""

_RELEVANCE_SYSTEM = f"""\
You judge whether each retrieved passage is relevant to a question. Reply with JSON only.

- "yes": some part of the passage helps answer the question, even partly or indirectly.
- "no": nothing in the passage helps answer it.

{_PASSAGE_ORDER} Give a one-sentence reason before each verdict."""

_FAITHFULNESS_SYSTEM = f"""\
You check the statements of an answer against retrieved passages, which are the only source of truth \
here: ignore what you know from elsewhere. Reply with JSON only.

- "implied": the passages state the statement, or it follows from them directly.
- "not_implied": the passages contradict it, or do not say it. A statement that may well be true but \
cannot be verified from the passages is "not_implied".
- "not_a_claim": the statement asserts nothing that could be checked at all (a greeting, an offer of \
help, a question back to the user). Any factual assertion, even a trivial one, is a claim.

{_STATEMENT_ORDER} Give a one-sentence reason before each verdict."""

_HALLUCINATION_SYSTEM = f"""\
You check whether an answer contradicts each retrieved passage. Reply with JSON only.

- "contradicted": the answer states something that directly conflicts with what the passage says.
- "not_contradicted": anything else, including when the answer adds information the passage does not \
mention, or when the passage is unrelated to the answer.

{_PASSAGE_ORDER} Give a one-sentence reason before each verdict."""


def _passage_verdicts(n: int, *verdicts: str) -> dict:
    item = strict_object({"passage": {"type": "integer"}, "reason": STRING, "verdict": labels(*verdicts)})
    return strict_object({"verdicts": exact_array(item, n)})


def _passage_placeholder(n: int, verdict: str) -> dict:
    return {"verdicts": [{"passage": i, "reason": "", "verdict": verdict} for i in range(1, n + 1)]}


def _statement_verdicts(n: int, *verdicts: str) -> dict:
    item = strict_object({"statement": STRING, "reason": STRING, "verdict": labels(*verdicts)})
    return strict_object({"verdicts": exact_array(item, n)})


def context_precision(query: str, reference: str, contexts: Sequence[str]) -> Request:
    """Usefulness of every context for one reference answer."""
    user = "\n\n".join([block("question", query), block("reference_answer", reference), passages(contexts)])
    n = len(contexts)
    return Request("context_precision", CONTEXT_PRECISION_VERSION, messages(_PRECISION_SYSTEM, user),
                   _passage_verdicts(n, "yes", "no"), _passage_placeholder(n, "yes"),
                   6 + TOKENS_PER_VERDICT * n)


def context_recall(contexts: Sequence[str], reference_statements: Sequence[str]) -> Request:
    user = passages(contexts) + "\n\n" + numbered("reference_statements", reference_statements)
    n = len(reference_statements)
    return Request("context_recall", CONTEXT_RECALL_VERSION, messages(_RECALL_SYSTEM, user),
                   _statement_verdicts(n, "yes", "no"),
                   {"verdicts": placeholder_items(n, statement="", reason="", verdict="yes")},
                   6 + TOKENS_PER_VERDICT * n)


def context_relevance(query: str, contexts: Sequence[str]) -> Request:
    n = len(contexts)
    return Request("context_relevance", CONTEXT_RELEVANCE_VERSION,
                   messages(_RELEVANCE_SYSTEM, block("question", query) + "\n\n" + passages(contexts)),
                   _passage_verdicts(n, "yes", "no"), _passage_placeholder(n, "yes"),
                   6 + TOKENS_PER_VERDICT * n)


def faithfulness(contexts: Sequence[str], prediction_statements: Sequence[str]) -> Request:
    user = passages(contexts) + "\n\n" + numbered("statements", prediction_statements)
    n = len(prediction_statements)
    return Request("faithfulness", FAITHFULNESS_VERSION, messages(_FAITHFULNESS_SYSTEM, user),
                   _statement_verdicts(n, "implied", "not_implied", "not_a_claim"),
                   {"verdicts": placeholder_items(n, statement="", reason="", verdict="implied")},
                   6 + TOKENS_PER_VERDICT * n)


def hallucination(prediction: str, contexts: Sequence[str]) -> Request:
    n = len(contexts)
    return Request("hallucination", HALLUCINATION_VERSION,
                   messages(_HALLUCINATION_SYSTEM, block("answer", prediction) + "\n\n" + passages(contexts)),
                   _passage_verdicts(n, "contradicted", "not_contradicted"),
                   _passage_placeholder(n, "not_contradicted"), 6 + TOKENS_PER_VERDICT * n)
