"""The classification metric family, declared once: label outputs against gold labels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ...errors import ParameterError
from ...model import Cell, Datum
from ..lexical.base import LexicalSpec, RowFn, Scorer
from ..lexical.tokenize import TextCache
from ..spec import Param
from .counts import build
from .labels import LabelOutput, from_details, read_row, row_details
from .report import averages

SCORE = "label_correct"
PR_THRESHOLDS = tuple(round(0.05 * k, 2) for k in range(1, 20))


def row_scorer(params: Mapping[str, Any]) -> RowFn:
    threshold = params["score_threshold"]

    def score_row(row: Datum, cache: TextCache) -> dict[str, Cell]:
        output = read_row(row, params)
        if isinstance(output, str):
            return {SCORE: Cell.unscored(output)}
        score = output.scores[output.winner] if output.scores is not None else (
            1.0 if output.confidence is None else output.confidence)
        passed = abs(score) > 1e-8 and score >= threshold
        return {SCORE: Cell(1.0 if passed and output.winner == output.gold else 0.0, row_details(output))}

    return score_row


def scored_outputs(cells: Sequence[Mapping[str, Cell]]) -> list[LabelOutput]:
    """The label outputs of scored cells, in order (unscored rows are left out: missing is not a wrong label)."""
    return [from_details(c[SCORE].details) for c in cells
            if SCORE in c and c[SCORE].value is not None and c[SCORE].details]


def corpus(rows: Sequence[Datum], cells: Sequence[Mapping[str, Cell]], params: Mapping[str, Any]) -> dict[str, float]:
    outputs = scored_outputs(cells)
    return averages(build([""] * len(outputs), outputs), params) if outputs else {}


def _check(params: Mapping[str, Any]) -> None:
    for name in ("prediction_column", "reference_column"):
        if params[name] is not None and not str(params[name]).strip():
            raise ParameterError(f"parameter classification.{name}: name a column, or leave it unset")
    if params["prediction_format"] == "scores" and params["score_column"]:
        raise ParameterError("parameter classification.score_column: a confidence column is for bare labels; "
                             "with prediction_format=scores every prediction carries its own scores")
    for value in params["pr_thresholds"]:
        if not 0.0 <= value <= 1.0:
            raise ParameterError(f"parameter classification.pr_thresholds: {value} is not between 0 and 1")


@dataclass(frozen=True)
class ClassificationSpec(LexicalSpec):
    """Needs a prediction and a reference unless the parameters name the columns holding the two labels (a
    column parameter naming a column the data lacks is refused by the base check)."""

    def missing(self, available_fields: set[str], params: Mapping[str, Any]) -> list[str]:
        given = {field for field, column in (("prediction", "prediction_column"), ("references", "reference_column"))
                 if params.get(column)}
        return super().missing(available_fields | given, params)


SPEC = ClassificationSpec(
    name="classification",
    label="Classification (labels)",
    group="lexical",
    description="The prediction is a label (or a JSON object of label scores) and the reference the gold label: "
    "per-label precision, recall and F1, macro/micro/weighted averages, accuracy, confusion matrix, ROC AUC "
    "(one-vs-rest) and precision-recall curves, counted as valor-lite's classification module counts them.",
    needs=("prediction", "references"),  # or the columns its parameters name: see ClassificationSpec.missing
    outputs=lambda _p: (SCORE,),
    params=(
        Param("prediction_format", "choice", "auto", "auto: a prediction that starts with '{' is a JSON object of "
              "label scores, anything else a label; label: always a label; scores: always a JSON object.",
              choices=("auto", "label", "scores")),
        Param("prediction_column", "str", None, "Column holding the predicted label (any column of the dataset, "
              "such as predicted_category); none: the prediction.", is_column=True),
        Param("reference_column", "str", None, "Column holding the gold label (any column of the dataset, such as "
              "category); none: the reference.", is_column=True),
        Param("score_column", "str", None, "Column holding the confidence of a bare predicted label (a number "
              ">= 0); none: a bare label scores 1.0.", is_column=True),
        Param("score_threshold", "float", 0.0, "A prediction counts when its score is at least this (and not "
              "zero), for the per-label scores, the averages and the confusion matrix.", minimum=0.0, maximum=1.0),
        Param("hardmax", "bool", True, "Only each row's highest-scoring label can count as a prediction (the "
              "first label given on ties); false: every label passing the threshold counts."),
        Param("pr_thresholds", "floats", PR_THRESHOLDS, "Score thresholds of the precision-recall curves and "
              "of the detailed curves."),
        Param("max_examples", "int", 3, "Example datum ids kept per kind of outcome in the detailed curves.",
              minimum=0, maximum=1000),
        Param("strip_whitespace", "bool", False, "Remove whitespace around labels (gold, predicted, score keys)."),
        Param("strip_punctuation", "bool", False, "Remove punctuation around labels ('Positive.' -> 'Positive')."),
        Param("lowercase", "bool", False, "Compare labels without case (Unicode casefold)."),
    ),
    direction="higher",
    value_range=(0.0, 1.0),
    libraries=("numpy",),
    tokenizer=lambda p: "labels" + "".join(f"+{k}" for k in ("strip_whitespace", "strip_punctuation", "lowercase")
                                           if p.get(k)),
    score=Scorer(per_row=row_scorer),
    corpus=corpus,
    check=_check,
    notes="label_correct is 1 when the row's winning label equals the gold label and its score passes "
    "score_threshold (its mean is the accuracy). Corpus values: accuracy, precision/recall/f1 _macro, _micro, "
    "_weighted and roc_auc_mean; per-label scores, the confusion matrix and the curves are in the report "
    "(textgen-eval run prints it; textgen_core.classification_report returns it). Counting follows valor-lite "
    "(a bare label is a pair with score 1.0; a JSON object gives one pair per label; a zero score never counts). "
    "Edge cases: an empty prediction or gold label, several references, a score that is not a number >= 0 "
    "(a number written as text included) or two scores for one label leave the row unscored with the reason, "
    "never counted as wrong. A label never predicted has precision 0 (scikit-learn's zero_division=0). Averages "
    "run over labels seen as gold or as a counted prediction. One class only, or a label without negatives: "
    "its ROC AUC is undefined and left out of the mean. ROC AUC needs every row to score every label. Ties "
    "in scores: the first label given wins the hardmax; equal scores form one ROC step. Departs from the seed "
    "system: valor-lite reports an undefined ROC AUC as 0 and averages it into the mean, we leave it out (missing "
    "is not zero); valor-lite has no macro/micro/weighted averages, these are scikit-learn's; the detailed curves "
    "call a false positive whose label no gold label uses a hallucination (an invented label), the others "
    "misclassifications.",
)
