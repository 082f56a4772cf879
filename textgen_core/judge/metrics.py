"""Declarations of the judge metrics (group "llm") and endpoint metrics (group "endpoint").

Each :class:`MetricSpec` carries a :class:`JudgePlan` in ``plan``: the coroutine
that scores one row and the judge steps it may ask. The engine reads nothing
else. Every edge-case rule is stated in the notes, which the docs and the
metric picker show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..metrics.spec import MetricSpec, Param, fixed_outputs
from . import cells, cells_context, cells_endpoint
from .cells import CellScorer
from .prompts import PROMPT_VERSIONS


@dataclass(frozen=True)
class JudgePlan:
    """What the engine needs to score a metric: the row scorer and the steps behind it."""

    score: CellScorer
    #: Judge steps the metric may ask (names of :data:`PROMPT_VERSIONS`), in dependency order.
    steps: tuple[str, ...] = ()
    #: Which endpoint API the metric uses.
    api: Literal["chat", "embeddings", "completions"] = "chat"

    def prompt_versions(self) -> str:
        """'step/version,...' for the reproducibility signature."""
        return ",".join(PROMPT_VERSIONS[s] for s in self.steps)


_NO_PREDICTION_ZERO = "An empty prediction scores 0 without a judge call."
_FAILURE = ("A judge call that still fails after retries (HTTP error, invalid JSON, reply cut off, "
            "content filter) leaves the cell unscored with that reason; it is never counted as 0.")


def _spec(name: str, label: str, description: str, needs: tuple[str, ...], plan: JudgePlan, notes: str, *,
          direction: str = "higher", value_range: tuple[float, float | None] = (0.0, 1.0),
          group: str = "llm", params: tuple[Param, ...] = ()) -> MetricSpec:
    return MetricSpec(name=name, label=label, group=group, description=description, needs=needs,
                      outputs=fixed_outputs(name), params=params, direction=direction,
                      value_range=value_range, notes=f"{notes} {_FAILURE}", plan=plan)


SPECS: tuple[MetricSpec, ...] = (
    _spec("answer_correctness", "Answer correctness",
          "F1 of statements: answer statements backed by the reference (tp) against unbacked ones (fp) "
          "and reference statements the answer misses (fn): tp / (tp + 0.5 (fp + fn)).",
          ("prediction", "references"),
          JudgePlan(cells.answer_correctness, ("prediction_units", "reference_statements", "answer_correctness")),
          "0 when tp is 0. Several references: scored against each, the best counts. "
          + _NO_PREDICTION_ZERO + " A prediction or reference with no statements gives tp = 0, so 0, without a "
          "verdict call; a reference where neither side has statements is skipped, and if every reference "
          "is skipped the cell is unscored. No references: unscored."),
    _spec("answer_relevance", "Answer relevance",
          "Share of the answer's statements that help answer the query.",
          ("query", "prediction"),
          JudgePlan(cells.answer_relevance, ("prediction_units", "answer_relevance")),
          "Empty prediction, or no statements extracted from it: unscored (a share of nothing is undefined; "
          "answer correctness is the metric that penalises empty answers). No query: unscored."),
    _spec("bias", "Bias", "Share of the prediction's opinions that are biased (gender, race, origin, "
          "religion, age, politics).", ("prediction",),
          JudgePlan(cells.bias, ("prediction_units", "opinion_verdicts")),
          "No opinions (including an empty prediction): 0, without a verdict call. Bias and toxicity are "
          "judged in one shared call per datum.", direction="lower"),
    _spec("toxicity", "Toxicity", "Share of the prediction's opinions that are toxic (attacks, mockery, "
          "hate, dismissal, threats).", ("prediction",),
          JudgePlan(cells.toxicity, ("prediction_units", "opinion_verdicts")),
          "No opinions (including an empty prediction): 0, without a verdict call. Bias and toxicity are "
          "judged in one shared call per datum.", direction="lower"),
    _spec("context_precision", "Context precision",
          "Are the contexts useful for the reference answer ranked first? Mean of precision@k over the "
          "useful positions k.", ("query", "references", "contexts"),
          JudgePlan(cells_context.context_precision, ("context_precision",)),
          "One verdict per (context, reference); a context is useful if it is useful for any reference. "
          "0 when no context is useful. Order matters: [yes, no, no, yes] = 0.75, [no, yes, no, yes] = 0.5. "
          "No contexts, no references or no query: unscored."),
    _spec("context_recall", "Context recall",
          "Share of the reference's statements that the contexts support.", ("references", "contexts"),
          JudgePlan(cells_context.context_recall, ("reference_statements", "context_recall")),
          "Several references: the best share counts. A reference with no statements is skipped; if none "
          "has statements the cell is unscored. No contexts or no references: unscored."),
    _spec("context_relevance", "Context relevance",
          "Share of the contexts relevant to the query.", ("query", "contexts"),
          JudgePlan(cells_context.context_relevance, ("context_relevance",)),
          "No contexts or no query: unscored."),
    _spec("faithfulness", "Faithfulness",
          "Share of the prediction's claims implied by the contexts; claims the contexts contradict or do "
          "not mention count against it.", ("prediction", "contexts"),
          JudgePlan(cells_context.faithfulness, ("prediction_units", "faithfulness")),
          "Claims are the prediction's statements (shared with answer correctness and relevance); statements "
          "that assert nothing checkable (greetings, offers of help) are left out. Empty prediction, no "
          "statements or no claims: unscored. No contexts: unscored."),
    _spec("hallucination", "Hallucination",
          "Share of the contexts that the prediction contradicts.", ("prediction", "contexts"),
          JudgePlan(cells_context.hallucination, ("hallucination",)),
          "Adding facts a context does not mention is not a contradiction. An empty prediction contradicts "
          "nothing: 0 without a call. No contexts: unscored.", direction="lower"),
    _spec("summary_coherence", "Summary coherence",
          "1-5 rating of how coherently the prediction summarizes the source text held in the query column.",
          ("query", "prediction"), JudgePlan(cells.summary_coherence, ("summary_coherence",)),
          "The query column holds the text that was summarized. Empty prediction or no source: unscored.",
          value_range=(1.0, 5.0)),
    _spec("coherence", "Coherence",
          "1-5 rating of how well the prediction's sentences form a logical, well-structured whole; "
          "the query is not shown to the judge.", ("prediction",),
          JudgePlan(cells.coherence, ("coherence",)), "Empty prediction: unscored.", value_range=(1.0, 5.0)),
    _spec("qa_grade", "QA grade",
          "1 when the judge grades the answer CORRECT against the reference answer(s), 0 when INCORRECT.",
          ("query", "prediction", "references"), JudgePlan(cells.qa_grade, ("qa_grade",)),
          "CORRECT if the answer agrees with any reference; extra detail is fine unless it contradicts. "
          "All references are shown in one call. " + _NO_PREDICTION_ZERO + " No references or no query: "
          "unscored."),
    _spec("semantic_similarity", "Semantic similarity",
          "Cosine similarity of the prediction's and each reference's embeddings from the endpoint's "
          "embeddings API; the best reference counts.", ("prediction", "references"),
          JudgePlan(cells_endpoint.semantic_similarity, api="embeddings"),
          "Uses the judge settings' embedding model (or the judge model). Empty prediction or no references: "
          "unscored; a zero vector is unscored. Values can be negative.",
          group="endpoint", value_range=(-1.0, 1.0)),
    _spec("perplexity", "Perplexity",
          "exp of the mean negative log-probability of the prediction's tokens.", ("prediction",),
          JudgePlan(cells_endpoint.perplexity, api="completions"),
          "With logprobs_column, reads natural-log token probabilities from that metadata column (a list, a "
          "JSON list or comma/space separated numbers); a row without them, or with a value above 0, is "
          "unscored. Without it, asks the endpoint's completions API for the log-probabilities of the "
          "prediction as a prompt (the text alone, not conditioned on the query); the first token, which "
          "has none, is skipped. Empty prediction: unscored.",
          group="endpoint", direction="lower", value_range=(1.0, None),
          params=(Param("logprobs_column", "str", None,
                        "metadata column with the prediction's token log-probabilities; empty: ask the endpoint",
                        is_column=True),)),
)

BY_NAME: dict[str, MetricSpec] = {spec.name: spec for spec in SPECS}


def prompt_signature(metric: str) -> str:
    """Prompt versions behind a judge metric, for its reproducibility signature ('' for none)."""
    plan = BY_NAME[metric].plan
    return plan.prompt_versions() if plan.steps else ""
