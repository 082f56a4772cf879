"""Reading one row's label output: the predicted label, its score(s), the gold label.

A prediction is either a label (``"positive"``) or, when it is a JSON object,
the model's score for each label (``{"positive": 0.8, "negative": 0.2}``). A
confidence column may give the score of a predicted label. Normalisation of
labels (case, surrounding whitespace and punctuation) is off unless asked.
"""

from __future__ import annotations

import json
import math
import unicodedata
from dataclasses import dataclass
from typing import Any, Mapping

from ...model import Datum


@dataclass(frozen=True)
class LabelOutput:
    """What one row says: gold label, the winning label and the (label, score) pairs behind it."""

    gold: str
    winner: str
    #: Label -> score in the order the prediction gave them; None for a bare label without a confidence column.
    scores: dict[str, float] | None
    #: The confidence column's value for a bare label, else None.
    confidence: float | None


def _strip_punctuation(text: str) -> str:
    start, end = 0, len(text)
    while start < end and unicodedata.category(text[start]).startswith("P"):
        start += 1
    while end > start and unicodedata.category(text[end - 1]).startswith("P"):
        end -= 1
    return text[start:end]


def normalize(label: str, params: Mapping[str, Any]) -> str:
    """``label`` with the declared normalisations applied (whitespace, then punctuation, then case)."""
    if params.get("strip_whitespace"):
        label = label.strip()
    if params.get("strip_punctuation"):
        label = _strip_punctuation(label).strip() if params.get("strip_whitespace") else _strip_punctuation(label)
    if params.get("lowercase"):
        label = label.casefold()
    return label


def _number(value: Any) -> float | None:
    """A finite, non-negative float from a number (never from a bool or a string)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


class _TwiceError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _refuse_twice(items: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, refusing a key given twice (json's default keeps the last value silently)."""
    out: dict[str, Any] = {}
    for key, value in items:
        if key in out:
            raise _TwiceError(key)
        out[key] = value
    return out


def blank(text: str) -> bool:
    """True for a text of only whitespace and invisible characters (zero-width spaces, joiners, BOM): a
    label that says nothing, however many characters it has."""
    return all(c.isspace() or unicodedata.category(c) in ("Cf", "Cc") for c in text)


def _scores(text: str, params: Mapping[str, Any]) -> dict[str, float] | str:
    """Label scores of a JSON-object prediction, or the reason they cannot be read."""
    try:
        parsed = json.loads(text, object_pairs_hook=_refuse_twice)
    except _TwiceError as exc:
        return f"label {exc.key!r} has two scores in the prediction's JSON object (a duplicated key is ambiguous)"
    except ValueError as exc:
        return f"the prediction is not a JSON object of label scores ({exc.args[0] if exc.args else exc})"
    if not isinstance(parsed, dict):
        return f"the prediction is JSON but not an object of label scores (a {type(parsed).__name__})"
    if not parsed:
        return "the prediction is an empty object: no label scores"
    scores: dict[str, float] = {}
    for key, value in parsed.items():
        number = _number(value)
        if number is None:
            return f"the score of label {key!r} is {value!r}: scores must be finite numbers >= 0 (not text)"
        label = normalize(key, params)
        if blank(label):
            return f"label {key!r} is empty" + (" after normalisation" if label != key else "")
        if label in scores:
            return f"two scores for label {label!r} (after normalisation)"
        scores[label] = number
    return scores


def _confidence(row: Datum, column: str) -> float | str:
    raw = row.metadata.get(column)
    if raw is None or raw == "":
        return f"no value in the confidence column {column!r}"
    value: Any = raw
    if isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            return f"the confidence column {column!r} holds {raw!r}, not a number"
    number = _number(value)
    if number is None:
        return f"the confidence column {column!r} holds {raw!r}: it must be a finite number >= 0"
    return number


def _column_text(row: Datum, column: str) -> str | None:
    value = row.metadata.get(column)
    if value is None or (isinstance(value, float) and value != value):
        return None
    return value if isinstance(value, str) else str(value)


def read_row(row: Datum, params: Mapping[str, Any]) -> LabelOutput | str:
    """The row's labels, or the reason it cannot be scored. ``prediction_column`` / ``reference_column`` read
    the predicted / gold label from a column of the dataset instead of the prediction / references."""
    prediction_column, reference_column = params.get("prediction_column"), params.get("reference_column")
    if prediction_column:
        text = _column_text(row, prediction_column)
        if text is None:
            return f"no value in the prediction column {prediction_column!r}"
    elif row.prediction is None or type(row.prediction) is not str:
        return "no prediction"
    else:
        text = row.prediction
    if reference_column:
        gold_text = _column_text(row, reference_column)
        if gold_text is None:
            return f"no value in the reference column {reference_column!r}"
    else:
        if not row.references:
            return "no references"
        if len(row.references) > 1:
            return f"a classification row takes one gold label; this row has {len(row.references)} references"
        gold_text = str(row.references[0])
    gold = normalize(gold_text, params)
    if blank(gold):
        return "the gold label is empty"
    form = params.get("prediction_format", "auto")
    if form == "scores" or (form == "auto" and text.lstrip().startswith("{")):
        scores = _scores(text, params)
        if isinstance(scores, str):
            return scores
        values = list(scores.values())
        winner = list(scores)[values.index(max(values))]  # ties: the first label given (numpy argmax's rule)
        return LabelOutput(gold, winner, scores, None)
    label = normalize(text, params)
    if blank(label):  # whitespace only is no label, not the wrong label "   "
        return "the predicted label is empty"
    column = params.get("score_column")
    if column:
        confidence = _confidence(row, column)
        if isinstance(confidence, str):
            return confidence
        return LabelOutput(gold, label, None, confidence)
    return LabelOutput(gold, label, None, None)


def row_details(output: LabelOutput) -> dict[str, Any]:
    """What a cell keeps so that corpus values and the report can be computed from stored cells alone."""
    details: dict[str, Any] = {"gold": output.gold, "label": output.winner}
    if output.scores is not None:
        details["scores"] = output.scores
    elif output.confidence is not None:
        details["score"] = output.confidence
    return details


def from_details(details: Mapping[str, Any]) -> LabelOutput:
    """The row's labels back from a stored cell's details."""
    scores = details.get("scores")
    confidence = details.get("score")
    return LabelOutput(str(details["gold"]), str(details["label"]),
                       dict(scores) if scores is not None else None,  # numbers: written by read_row
                       float(confidence) if confidence is not None else None)


def pairs(output: LabelOutput) -> tuple[list[str], list[float]]:
    """(labels, scores) of the row as valor-lite takes them: a bare label scores 1.0 (or its confidence)."""
    if output.scores is not None:
        return list(output.scores), list(output.scores.values())
    return [output.winner], [1.0 if output.confidence is None else output.confidence]
