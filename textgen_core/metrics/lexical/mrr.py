"""Reciprocal rank of the first relevant retrieved context; its mean over rows is the MRR."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

from ...model import Cell, Datum
from ..spec import Param
from .base import LexicalSpec, RowFn, Scorer, texts
from .tokenize import TextCache


def labels(raw: Any, delimiter: str) -> list[Any]:
    """The relevance labels of one row: items of a JSON list, a list, a delimited string or one value."""
    if raw is None or (isinstance(raw, float) and math.isnan(raw)):
        return []
    if isinstance(raw, (list, tuple, set, frozenset)):
        return [item for item in raw if item is not None and item != ""]
    if isinstance(raw, bool):
        return []
    if isinstance(raw, (int, float)):
        return [raw]
    text = str(raw).strip()
    if not text:
        return []
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return [item for item in parsed if item is not None and item != ""]
    parts = text.split(delimiter) if delimiter else [text]
    return [part.strip() for part in parts if part.strip()]


def relevant_ranks(contexts: tuple[str, ...], items: list[Any]) -> set[int]:
    """1-based ranks of the relevant contexts: an item naming a context's exact text, else a 1-based position."""
    stripped = [context.strip() for context in contexts]
    ranks: set[int] = set()
    for item in items:
        if isinstance(item, str):
            key = item.strip()
            named = [rank for rank, text in enumerate(stripped, start=1) if text == key]
            if named:
                ranks.update(named)
                continue
            if not key.lstrip("+-").isdigit():
                continue  # names no retrieved context
            item = int(key)
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            continue
        if isinstance(item, float):
            if not item.is_integer():
                continue
            item = int(item)
        if 1 <= item <= len(contexts):
            ranks.add(item)
    return ranks


def row_scorer(params: Mapping[str, Any]) -> RowFn:
    column = params["relevant_column"]
    delimiter = params["delimiter"]

    def score_row(row: Datum, cache: TextCache) -> dict[str, Cell]:
        if not row.contexts:
            return {"reciprocal_rank": Cell.unscored("no retrieved contexts")}
        if not texts(row.contexts):
            return {"reciprocal_rank": Cell.unscored("the contexts are not all text")}
        items = labels(row.metadata.get(column), delimiter)
        if not items:
            return {"reciprocal_rank": Cell.unscored(f"no relevance label in column {column!r}")}
        ranks = relevant_ranks(row.contexts, items)
        if not ranks:
            return {"reciprocal_rank": Cell(0.0, {"rank": None, "relevant": []})}
        first = min(ranks)
        return {"reciprocal_rank": Cell(1.0 / first, {"rank": first, "relevant": sorted(ranks)})}

    return score_row


SPEC = LexicalSpec(
    name="mrr",
    label="Reciprocal rank (MRR)",
    group="lexical",
    description="1 / rank of the first relevant context in the retrieved order, 0 if none is relevant; the mean "
    "over rows is the mean reciprocal rank.",
    needs=("contexts",),
    outputs=lambda _p: ("reciprocal_rank",),
    params=(
        Param(
            "relevant_column", "str", "relevant_contexts",
            "Metadata column naming each row's relevant contexts, as 1-based positions in the retrieved "
            "order or as exact context texts.",
            is_column=True,
        ),
        Param("delimiter", "str", "|", "Separator of several labels given as one string (e.g. 1|3)."),
    ),
    tokenizer=lambda _p: "none",
    score=Scorer(per_row=row_scorer),
    notes="The relevance column may hold a JSON list ([1, 3] or [\"text a\", \"text b\"]), a list, one value "
    "(2 or a context's text) or a delimiter-separated string (1|3). An item equal to a retrieved context's "
    "text (ignoring surrounding whitespace) marks that context; otherwise an integer item is a 1-based "
    "position; items naming no retrieved context are ignored. Reciprocal rank is 1/rank of the first "
    "relevant context, 0 when none of the retrieved ones is relevant. A row without contexts or without a "
    "label is unscored. details.rank is the first relevant rank, details.relevant all of them.",
)
