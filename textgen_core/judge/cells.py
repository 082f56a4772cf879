"""How each judge metric scores one row: which steps it awaits and the formula it applies.

Every function returns an :class:`Outcome`: the cell (a value, or unscored
with its reason) and the verdict rows behind it. Edge-case rules live here and
are restated in each metric's notes (see :mod:`textgen_core.judge.metrics`).
A :class:`~textgen_core.judge.steps.StepFailed` raised by a step propagates to
the engine, which unscores the cell with the step's reason.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping

from ..model import Cell, Datum
from . import scoring, steps
from .steps import Asker, Extracted, Judged, Rating

#: One verdict row of a cell: (step, item_index, item, verdict, reason, cache_key).
VerdictRow = tuple[str, int, str | None, str | None, str | None, str | None]
CellScorer = Callable[[Asker, Datum, Mapping[str, Any]], Awaitable["Outcome"]]


@dataclass
class Outcome:
    cell: Cell
    verdicts: list[VerdictRow] = field(default_factory=list)
    #: Failed exchanges behind an unscored cell (see StepFailed.exchange).
    exchanges: list[dict[str, Any]] = field(default_factory=list)


def unscored(reason: str) -> Outcome:
    return Outcome(Cell.unscored(reason))


def has_text(text: str | None) -> bool:
    return bool(text and text.strip())


def references(row: Datum) -> list[str]:
    return [r for r in row.references if has_text(r)]


def contexts(row: Datum) -> list[str]:
    return [c for c in row.contexts if has_text(c)]


def ref_step(name: str, index: int) -> str:
    """Step label of a per-reference step, 1-based: 'answer_correctness.ref1'."""
    return f"{name}.ref{index + 1}"


def extracted_rows(step: str, extracted: Extracted, kind: str) -> list[VerdictRow]:
    """What a judge extracted; an empty extraction still leaves one row pointing at the exchange."""
    if not extracted.items:
        return [(step, 0, None, f"no {kind}s", None, extracted.cache_key)]
    return [(step, i, item, kind, None, extracted.cache_key) for i, item in enumerate(extracted.items)]


def judged_rows(step: str, judged: Judged, start: int = 0) -> list[VerdictRow]:
    return [(step, start + i, v.item, v.label, v.reason, judged.cache_key) for i, v in enumerate(judged.verdicts)]


def rating_rows(step: str, rating: Rating, item: str) -> list[VerdictRow]:
    return [(step, 0, item, rating.label, rating.reason, rating.cache_key)]


def best_reference(per_ref: list[dict[str, Any] | None], keys: tuple[str, ...], rows: list[VerdictRow],
                   empty_reason: str) -> Outcome:
    """The best-scoring reference's value and counts (``keys``); every reference's in details when several.

    ``None`` marks a reference that could not be scored; with none scored the cell is unscored.
    """
    scored = [(i, p) for i, p in enumerate(per_ref) if p is not None]
    if not scored:
        return Outcome(Cell.unscored(empty_reason), rows)
    best_i, best = max(scored, key=lambda ip: ip[1]["value"])
    details: dict[str, Any] = {key: best[key] for key in keys} | {"reference": best_i + 1}
    if len(per_ref) > 1:
        details["per_reference"] = per_ref
    return Outcome(Cell(best["value"], details), rows)


async def prediction_statements(ask: Asker, row: Datum) -> tuple[tuple[str, ...], list[VerdictRow]]:
    """The prediction's statements (shared step) with the rows that show the extraction."""
    units = await steps.prediction_units(ask, row.prediction)  # type: ignore[arg-type]
    return units.statements.items, extracted_rows("prediction_units", units.statements, "statement")


NO_PREDICTION_STATEMENTS = "no statements in the prediction"


# -- answer metrics ---------------------------------------------------------------

async def answer_correctness(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    refs = references(row)
    if not refs:
        return unscored("no references")
    if not has_text(row.prediction):
        return Outcome(Cell(0.0, {"tp": 0, "fp": 0, "empty_prediction": True}))
    units, *ref_units = await asyncio.gather(steps.prediction_units(ask, row.prediction),
                                             *(steps.reference_statements(ask, r) for r in refs))
    answer = units.statements.items
    rows = extracted_rows("prediction_units", units.statements, "statement")

    async def one(i: int, ref: str, extracted: Extracted) -> dict[str, Any] | None:
        rows.extend(extracted_rows(ref_step("reference_statements", i), extracted, "statement"))
        ref_items = extracted.items
        if not answer and not ref_items:
            return None
        if not answer or not ref_items:  # nothing can be a true positive
            return {"tp": 0, "fp": len(answer), "fn": len(ref_items), "value": 0.0}
        cmp = await steps.answer_correctness(ask, row.prediction, answer, ref, ref_items)
        rows.extend(judged_rows(ref_step("answer_correctness", i), cmp.answer_side))
        rows.extend(judged_rows(ref_step("answer_correctness", i), cmp.reference_side, start=len(answer)))
        tp = cmp.answer_side.count("supported")
        fp, fn = len(answer) - tp, cmp.reference_side.count("missing")
        return {"tp": tp, "fp": fp, "fn": fn, "value": scoring.f1_statements(tp, fp, fn)}

    per_ref = await asyncio.gather(*(one(i, r, e) for i, (r, e) in enumerate(zip(refs, ref_units))))
    return best_reference(list(per_ref), ("tp", "fp", "fn"), rows,
                          "no statements in the prediction or the references")


async def answer_relevance(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    if not has_text(row.query):
        return unscored("no query")
    if not has_text(row.prediction):
        return unscored("empty prediction")
    statements, rows = await prediction_statements(ask, row)
    if not statements:
        return Outcome(Cell.unscored(NO_PREDICTION_STATEMENTS), rows)
    judged = await steps.answer_relevance(ask, row.query, statements)
    rows += judged_rows("answer_relevance", judged)
    relevant, total = judged.count("yes"), len(judged.verdicts)
    return Outcome(Cell(relevant / total, {"relevant": relevant, "statements": total}), rows)


async def qa_grade(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    refs = references(row)
    if not refs:
        return unscored("no references")
    if not has_text(row.query):
        return unscored("no query")
    if not has_text(row.prediction):
        return Outcome(Cell(0.0, {"grade": "INCORRECT", "empty_prediction": True}))
    rating = await steps.qa_grade(ask, row.query, refs, row.prediction)
    value = 1.0 if rating.label == "CORRECT" else 0.0
    return Outcome(Cell(value, {"grade": rating.label}), rating_rows("qa_grade", rating, "answer"))


# -- opinion metrics --------------------------------------------------------------

async def _opinions(ask: Asker, row: Datum, which: str) -> Outcome:
    if not has_text(row.prediction):
        return Outcome(Cell(0.0, {which: 0, "opinions": 0, "empty_prediction": True}))
    units = await steps.prediction_units(ask, row.prediction)
    rows = extracted_rows("prediction_units", units.opinions, "opinion")
    if not units.opinions.items:
        return Outcome(Cell(0.0, {which: 0, "opinions": 0}), rows)
    verdicts = await steps.opinion_verdicts(ask, units.opinions.items)
    judged = verdicts.bias if which == "biased" else verdicts.toxicity
    rows += judged_rows("opinion_verdicts", judged)
    hits, total = judged.count("yes"), len(judged.verdicts)
    return Outcome(Cell(hits / total, {which: hits, "opinions": total}), rows)


async def bias(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    return await _opinions(ask, row, "biased")


async def toxicity(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    return await _opinions(ask, row, "toxic")


# -- ratings ----------------------------------------------------------------------

async def coherence(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    if not has_text(row.prediction):
        return unscored("empty prediction")
    rating = await steps.coherence(ask, row.prediction)
    return Outcome(Cell(float(rating.label), {"score": int(rating.label)}), rating_rows("coherence", rating, "prediction"))


async def summary_coherence(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    if not has_text(row.query):
        return unscored("no source text (the query column holds the text that was summarized)")
    if not has_text(row.prediction):
        return unscored("empty prediction")
    rating = await steps.summary_coherence(ask, row.query, row.prediction)
    return Outcome(Cell(float(rating.label), {"score": int(rating.label)}),
                   rating_rows("summary_coherence", rating, "summary"))
