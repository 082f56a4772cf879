"""Word error rate through jiwer, so values equal jiwer.wer.

With several references the row keeps the reference giving the lowest WER
(the first on ties); the corpus value is jiwer's corpus WER over those pairs:
all errors over all reference words.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ...model import Cell, Datum
from ..corpus import CorpusSum, SummedCorpus
from .base import LexicalSpec, RowFn, Scorer, row_inputs
from .tokenize import TextCache

_RUNS_OF_SPACE = re.compile(r"\s\s+")


def _words(text: str) -> list[str]:
    """Words as jiwer's default transform gives them: collapse whitespace runs, strip, split on spaces."""
    return [w for w in _RUNS_OF_SPACE.sub(" ", text).strip().split(" ") if w]


def row_scorer(params: Mapping[str, Any]) -> RowFn:
    import jiwer

    def score_row(row: Datum, cache: TextCache) -> dict[str, Cell]:
        reason = row_inputs(row)
        if reason:
            return {"wer": Cell.unscored(reason)}
        best: tuple[float, dict[str, Any]] | None = None
        for k, reference in enumerate(row.references):
            if not _words(reference):
                continue  # WER has no denominator (jiwer returns the insertion count instead)
            out = jiwer.process_words(reference, row.prediction)
            if best is None or out.wer < best[0]:
                details = {
                    "errors": out.substitutions + out.deletions + out.insertions,
                    "reference_words": out.hits + out.substitutions + out.deletions,
                    "substitutions": out.substitutions,
                    "deletions": out.deletions,
                    "insertions": out.insertions,
                    "hits": out.hits,
                }
                if len(row.references) > 1:
                    details["reference"] = k
                best = (float(out.wer), details)
        if best is None:
            return {"wer": Cell.unscored("the reference has no words")}
        return {"wer": Cell(best[0], best[1])}

    return score_row


def corpus_stats(cells: Mapping[str, Cell], params: Mapping[str, Any]) -> tuple[int, int] | None:
    """(errors, reference words) of a scored row with its chosen reference; None for an unscored row."""
    cell = cells.get("wer")
    if cell is None or cell.value is None or not cell.details:
        return None
    return cell.details["errors"], cell.details["reference_words"]


def corpus_value(total: CorpusSum, params: Mapping[str, Any]) -> dict[str, float]:
    """jiwer's corpus WER: total errors over total reference words, with each row's chosen reference."""
    errors, words = total.total
    return {"wer": errors / words} if words else {}


corpus = SummedCorpus(corpus_stats, corpus_value)


SPEC = LexicalSpec(
    name="wer",
    label="Word error rate",
    group="lexical",
    description="Word-level edit distance (substitutions + deletions + insertions) over the reference's word "
    "count, as jiwer computes it; lower is better.",
    needs=("prediction", "references"),
    outputs=lambda _p: ("wer",),
    direction="lower",
    value_range=(0.0, None),
    libraries=("jiwer",),
    tokenizer=lambda _p: "jiwer-default",
    score=Scorer(per_row=row_scorer),
    corpus=corpus,
    notes="Equal to jiwer.wer(reference, prediction) with jiwer's default transform (whitespace runs collapsed, "
    "stripped, split on spaces; case and punctuation count). Several references: the lowest WER (first on "
    "ties; details.reference is its index). A reference without words is skipped (WER is undefined; jiwer "
    "would return the insertion count); a row whose references all lack words is unscored. An empty "
    "prediction gives 1.0. The corpus value is total errors over total reference words (jiwer on all pairs).",
)
