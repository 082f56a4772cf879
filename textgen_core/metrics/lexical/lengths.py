"""Word counts of the answer, the references and the retrieved contexts (whitespace-split words)."""

from __future__ import annotations

from typing import Any, Mapping

from ...model import Cell, Datum
from .base import NO_PREDICTION, NO_REFERENCES, LexicalSpec, RowFn, Scorer, texts
from .tokenize import TextCache

NAMES = ("answer_length", "reference_length", "context_length")


def row_scorer(params: Mapping[str, Any]) -> RowFn:
    def score_row(row: Datum, cache: TextCache) -> dict[str, Cell]:
        if row.prediction is None:
            answer = Cell.unscored(NO_PREDICTION)
        elif type(row.prediction) is not str:
            answer = Cell.unscored("the prediction is not text")
        else:
            answer = Cell(float(len(row.prediction.split())))
        if not row.references:
            reference = Cell.unscored(NO_REFERENCES)
        elif not texts(row.references):
            reference = Cell.unscored("a reference is not text")
        else:
            reference = Cell(sum(len(r.split()) for r in row.references) / len(row.references))
        if not row.contexts:
            context = Cell.unscored("no contexts")
        elif not texts(row.contexts):
            context = Cell.unscored("a context is not text")
        else:
            context = Cell(float(sum(len(c.split()) for c in row.contexts)))
        return {"answer_length": answer, "reference_length": reference, "context_length": context}

    return score_row


SPEC = LexicalSpec(
    name="lengths",
    label="Lengths",
    group="lexical",
    description="Words in the answer, mean words per reference, and total words over the retrieved contexts.",
    needs=("prediction",),
    outputs=lambda _p: NAMES,
    direction="none",
    value_range=(0.0, None),
    tokenizer=lambda _p: "whitespace",
    score=Scorer(per_row=row_scorer),
    notes="A word is a run of non-whitespace characters (str.split()). answer_length counts the prediction's "
    "words (an empty prediction counts 0); reference_length is the mean over the row's references; "
    "context_length sums over its contexts. A length whose input is absent (no prediction, no references, "
    "no contexts) is unscored with that reason.",
)
