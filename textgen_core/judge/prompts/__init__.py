"""Our judge prompts and their strict JSON schemas, one versioned builder per step."""

from .answer import ANSWER_CORRECTNESS_VERSION, ANSWER_RELEVANCE_VERSION, QA_GRADE_VERSION, answer_correctness, answer_relevance, qa_grade
from .common import Request
from .context import (CONTEXT_PRECISION_VERSION, CONTEXT_RECALL_VERSION, CONTEXT_RELEVANCE_VERSION,
                      FAITHFULNESS_VERSION, HALLUCINATION_VERSION, context_precision, context_recall,
                      context_relevance, faithfulness, hallucination)
from .extract import PREDICTION_UNITS_VERSION, STATEMENTS_VERSION, prediction_units, statements
from .opinions import OPINION_VERDICTS_VERSION, opinion_verdicts
from .rating import COHERENCE_VERSION, SUMMARY_COHERENCE_VERSION, coherence, summary_coherence

#: Step name -> prompt version; a change of wording bumps the version, which changes the cache key.
PROMPT_VERSIONS: dict[str, str] = {
    "prediction_units": PREDICTION_UNITS_VERSION,
    "reference_statements": STATEMENTS_VERSION,
    "answer_correctness": ANSWER_CORRECTNESS_VERSION,
    "answer_relevance": ANSWER_RELEVANCE_VERSION,
    "qa_grade": QA_GRADE_VERSION,
    "opinion_verdicts": OPINION_VERDICTS_VERSION,
    "context_precision": CONTEXT_PRECISION_VERSION,
    "context_recall": CONTEXT_RECALL_VERSION,
    "context_relevance": CONTEXT_RELEVANCE_VERSION,
    "faithfulness": FAITHFULNESS_VERSION,
    "hallucination": HALLUCINATION_VERSION,
    "coherence": COHERENCE_VERSION,
    "summary_coherence": SUMMARY_COHERENCE_VERSION,
}

__all__ = [
    "PROMPT_VERSIONS", "Request", "answer_correctness", "answer_relevance", "coherence", "context_precision",
    "context_recall", "context_relevance", "faithfulness", "hallucination", "opinion_verdicts",
    "prediction_units", "qa_grade", "statements", "summary_coherence",
]
