"""Scoring of the retrieval metrics: context precision, recall, relevance; faithfulness; hallucination."""

from __future__ import annotations

import asyncio
from typing import Any, Mapping

from ..model import Cell, Datum
from . import scoring, steps
from .cells import (NO_PREDICTION_STATEMENTS, Outcome, best_reference, contexts, extracted_rows, has_text,
                    judged_rows, prediction_statements, ref_step, references, unscored)
from .steps import Asker


async def context_precision(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    """Verdicts per (context, reference), OR-ed over references, then average precision."""
    ctx, refs = contexts(row), references(row)
    if not ctx:
        return unscored("no contexts")
    if not refs:
        return unscored("no references")
    if not has_text(row.query):
        return unscored("no query")
    judged = await asyncio.gather(*(steps.context_precision(ask, row.query, ref, ctx) for ref in refs))
    rows = [r for i, j in enumerate(judged) for r in judged_rows(ref_step("context_precision", i), j)]
    useful = scoring.any_over([[v.label == "yes" for v in j.verdicts] for j in judged])
    value = scoring.average_precision(useful)
    details = {"verdicts": ["yes" if u else "no" for u in useful], "relevant": sum(useful), "contexts": len(ctx)}
    return Outcome(Cell(value, details), rows)


async def context_recall(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    """Share of reference statements attributable to the contexts; best over references."""
    ctx, refs = contexts(row), references(row)
    if not ctx:
        return unscored("no contexts")
    if not refs:
        return unscored("no references")
    extracted = await asyncio.gather(*(steps.reference_statements(ask, ref) for ref in refs))
    rows = []

    async def one(i: int, items: tuple[str, ...]) -> dict[str, Any] | None:
        if not items:
            return None
        judged = await steps.context_recall(ask, ctx, items)
        rows.extend(judged_rows(ref_step("context_recall", i), judged))
        hits = judged.count("yes")
        return {"attributed": hits, "statements": len(items), "value": hits / len(items)}

    for i, e in enumerate(extracted):
        rows.extend(extracted_rows(ref_step("reference_statements", i), e, "statement"))
    per_ref = await asyncio.gather(*(one(i, e.items) for i, e in enumerate(extracted)))
    return best_reference(list(per_ref), ("attributed", "statements"), rows, "no statements in the reference")


async def context_relevance(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    ctx = contexts(row)
    if not ctx:
        return unscored("no contexts")
    if not has_text(row.query):
        return unscored("no query")
    judged = await steps.context_relevance(ask, row.query, ctx)
    hits = judged.count("yes")
    return Outcome(Cell(hits / len(ctx), {"relevant": hits, "contexts": len(ctx)}),
                   judged_rows("context_relevance", judged))


async def faithfulness(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    """Implied claims / claims; claims not supported by the contexts, unrelated ones included, count against."""
    ctx = contexts(row)
    if not ctx:
        return unscored("no contexts")
    if not has_text(row.prediction):
        return unscored("empty prediction")
    statements, rows = await prediction_statements(ask, row)
    if not statements:
        return Outcome(Cell.unscored(NO_PREDICTION_STATEMENTS), rows)
    judged = await steps.faithfulness(ask, ctx, statements)
    rows += judged_rows("faithfulness", judged)
    implied, remarks = judged.count("implied"), judged.count("not_a_claim")
    claims = len(judged.verdicts) - remarks
    details = {"implied": implied, "claims": claims, "not_a_claim": remarks}
    if claims == 0:
        return Outcome(Cell.unscored("no claims in the prediction (only remarks that assert nothing)", details), rows)
    return Outcome(Cell(implied / claims, details), rows)


async def hallucination(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    """Contradicted contexts / contexts; an empty prediction contradicts nothing."""
    ctx = contexts(row)
    if not ctx:
        return unscored("no contexts")
    if not has_text(row.prediction):
        return Outcome(Cell(0.0, {"contradicted": 0, "contexts": len(ctx), "empty_prediction": True}))
    judged = await steps.hallucination(ask, row.prediction, ctx)
    hits = judged.count("contradicted")
    return Outcome(Cell(hits / len(ctx), {"contradicted": hits, "contexts": len(ctx)}),
                   judged_rows("hallucination", judged))
