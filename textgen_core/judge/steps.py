"""Judge steps shared across metrics, each asked at most once per datum.

A step renders a prompt (see :mod:`textgen_core.judge.prompts`), asks it
through an :class:`Asker` and reads the reply into plain records. The asker
memoizes by request identity, so the statements of a prediction are extracted
once and reused by answer correctness, answer relevance and faithfulness, the
statements of a reference once for answer correctness and context recall, and
the opinions once for bias and toxicity.

Claims for faithfulness are the prediction's statements: both are the atomic,
self-contained assertions of the same text, so a second extraction would cost
one call per datum and give a near-identical list. The faithfulness verdict
has a third label, ``not_a_claim``, for statements that assert nothing
checkable (greetings, offers of help), which are left out of its denominator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence

from . import prompts
from .prompts import Request


class StepFailed(Exception):
    """A step that cannot give a usable result; every cell that needs it is unscored with ``reason``."""

    def __init__(self, reason: str, exchange: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        #: The failed exchange (step, messages, reply...) when a judge call failed, for the exchanges table.
        self.exchange = exchange


@dataclass(frozen=True)
class Answer:
    """A validated reply: its JSON value and the cache key that finds the exchange again."""

    value: Any
    cache_key: str | None


class Asker(Protocol):
    """What steps need from the engine: asking (memoized per datum), embeddings, log-probabilities."""

    async def ask(self, request: Request) -> Answer: ...
    async def embed(self, texts: list[str]) -> list[list[float]]: ...
    async def prompt_logprobs(self, text: str) -> list[float]: ...


@dataclass(frozen=True)
class Extracted:
    """Items a judge extracted from a text (statements or opinions)."""

    items: tuple[str, ...]
    cache_key: str | None


@dataclass(frozen=True)
class Verdict:
    item: str
    label: str
    reason: str


@dataclass(frozen=True)
class Judged:
    """One verdict per known item, aligned with the items that were sent."""

    verdicts: tuple[Verdict, ...]
    cache_key: str | None

    def count(self, *labels: str) -> int:
        return sum(1 for v in self.verdicts if v.label in labels)


def _clean(items: Any) -> tuple[str, ...]:
    """Extracted strings, stripped, empty ones dropped, exact duplicates kept once."""
    seen: dict[str, None] = {}
    for item in items or ():
        text = " ".join(str(item).split())
        if text:
            seen.setdefault(text, None)
    return tuple(seen)


def _aligned(answer: Answer, field: str, items: Sequence[str], *, label: str = "verdict",
             reason: str = "reason") -> Judged:
    """Pair the judge's verdicts with the items we sent, by position."""
    rows = answer.value.get(field) if isinstance(answer.value, dict) else None
    if not isinstance(rows, list) or len(rows) != len(items):
        got = len(rows) if isinstance(rows, list) else "no"
        raise StepFailed(f"the judge returned {got} verdicts for {len(items)} items")
    return Judged(tuple(Verdict(item, str(row[label]), str(row.get(reason, ""))) for item, row in zip(items, rows)),
                  answer.cache_key)


@dataclass(frozen=True)
class Units:
    statements: Extracted
    opinions: Extracted


async def prediction_units(ask: Asker, prediction: str) -> Units:
    """Statements and opinions of the prediction, in one exchange."""
    answer = await ask.ask(prompts.prediction_units(prediction))
    return Units(Extracted(_clean(answer.value.get("statements")), answer.cache_key),
                 Extracted(_clean(answer.value.get("opinions")), answer.cache_key))


async def reference_statements(ask: Asker, reference: str) -> Extracted:
    answer = await ask.ask(prompts.statements(reference))
    return Extracted(_clean(answer.value.get("statements")), answer.cache_key)


@dataclass(frozen=True)
class Comparison:
    """Answer correctness against one reference."""

    answer_side: Judged
    reference_side: Judged


async def answer_correctness(ask: Asker, prediction: str, answer_statements: Sequence[str], reference: str,
                             ref_statements: Sequence[str]) -> Comparison:
    answer = await ask.ask(prompts.answer_correctness(prediction, answer_statements, reference, ref_statements))
    return Comparison(_aligned(answer, "answer_statements", answer_statements),
                      _aligned(answer, "reference_statements", ref_statements))


async def answer_relevance(ask: Asker, query: str, statements: Sequence[str]) -> Judged:
    return _aligned(await ask.ask(prompts.answer_relevance(query, statements)), "verdicts", statements)


@dataclass(frozen=True)
class OpinionVerdicts:
    bias: Judged
    toxicity: Judged


async def opinion_verdicts(ask: Asker, opinions: Sequence[str]) -> OpinionVerdicts:
    answer = await ask.ask(prompts.opinion_verdicts(opinions))
    return OpinionVerdicts(_aligned(answer, "verdicts", opinions, label="biased", reason="bias_reason"),
                           _aligned(answer, "verdicts", opinions, label="toxic", reason="toxicity_reason"))


async def context_precision(ask: Asker, query: str, reference: str, contexts: Sequence[str]) -> Judged:
    return _aligned(await ask.ask(prompts.context_precision(query, reference, contexts)), "verdicts", contexts)


async def context_recall(ask: Asker, contexts: Sequence[str], ref_statements: Sequence[str]) -> Judged:
    return _aligned(await ask.ask(prompts.context_recall(contexts, ref_statements)), "verdicts", ref_statements)


async def context_relevance(ask: Asker, query: str, contexts: Sequence[str]) -> Judged:
    return _aligned(await ask.ask(prompts.context_relevance(query, contexts)), "verdicts", contexts)


async def faithfulness(ask: Asker, contexts: Sequence[str], statements: Sequence[str]) -> Judged:
    return _aligned(await ask.ask(prompts.faithfulness(contexts, statements)), "verdicts", statements)


async def hallucination(ask: Asker, prediction: str, contexts: Sequence[str]) -> Judged:
    return _aligned(await ask.ask(prompts.hallucination(prediction, contexts)), "verdicts", contexts)


@dataclass(frozen=True)
class Rating:
    """A single judgment: a 1-5 score or a grade, with the judge's reason."""

    label: str
    reason: str
    cache_key: str | None


async def coherence(ask: Asker, prediction: str) -> Rating:
    answer = await ask.ask(prompts.coherence(prediction))
    return Rating(str(answer.value["score"]), str(answer.value.get("reason", "")), answer.cache_key)


async def summary_coherence(ask: Asker, source: str, summary: str) -> Rating:
    answer = await ask.ask(prompts.summary_coherence(source, summary))
    return Rating(str(answer.value["score"]), str(answer.value.get("reason", "")), answer.cache_key)


async def qa_grade(ask: Asker, query: str, references: Sequence[str], prediction: str) -> Rating:
    answer = await ask.ask(prompts.qa_grade(query, references, prediction))
    return Rating(str(answer.value["grade"]), str(answer.value.get("reason", "")), answer.cache_key)
