"""The per-datum section of a report: the whole run when it is small, else its extremes and a sample.

Up to :data:`WHOLE_LIMIT` rows (datum x model) the report holds every row. Beyond,
it holds the :data:`EXTREMES` worst and best scored cells of each score (in the
score's direction; lowest and highest for a score without one) and the rows of
:data:`SAMPLE_DATUMS` datums picked by a stable hash of their id, every model of
each (a sample stratified by model: each model is seen on the same datums); the
file says so. Each row carries its texts (each cut at :data:`TEXT_LIMIT`
characters, saying how many were left out), every score with the reason of an
unscored one, and the judge's verdicts with their reasons (at most
:data:`VERDICTS_LIMIT` per row, saying how many more there are).
"""

from __future__ import annotations

import json
from typing import Any, Sequence

import pandas as pd

from ..store import Store

#: Rows (datum x model) up to which the whole run is in the report.
WHOLE_LIMIT = 2000
#: Worst and best cells per score shown beyond that.
EXTREMES = 20
#: Datums of the stratified sample shown beyond that (with every model's row of each).
SAMPLE_DATUMS = 200
#: Characters of one text (query, prediction, reference, verdict item or reason) kept.
TEXT_LIMIT = 2000
#: Verdicts shown per row.
VERDICTS_LIMIT = 30


def cut(text: Any) -> str | None:
    """A text kept to :data:`TEXT_LIMIT` characters, saying how many were left out; None stays None."""
    if text is None or (isinstance(text, float) and text != text):
        return None
    text = str(text)
    if len(text) <= TEXT_LIMIT:
        return text
    return f"{text[:TEXT_LIMIT]}… [{len(text) - TEXT_LIMIT} more characters left out of the report]"


def _direction(score: str) -> str:
    try:
        from ..registry import direction_of

        return direction_of(score)
    except Exception:  # a score no metric declares any more
        return "higher"


def _tag(side: str, score: str) -> str:
    """'worst faithfulness' / 'best ...' (in the score's direction), or 'lowest' / 'highest' without one."""
    direction = _direction(score)
    if direction == "none":
        return f"{'lowest' if side == 'low' else 'highest'} {score}"
    worst = (side == "low") == (direction != "lower")
    return f"{'worst' if worst else 'best'} {score}"


def datum_section(store: Store, run_id: int, run: dict[str, Any], scores: Sequence[str], *,
                  whole_limit: int = WHOLE_LIMIT, extremes: int = EXTREMES,
                  sample_datums: int = SAMPLE_DATUMS) -> dict[str, Any]:
    """The rows the report shows, why each is there, and what the section holds of the run."""
    total = store.report.row_count(run_id)
    tags: dict[tuple[str, str], list[str]] = {}
    if total <= whole_limit:
        mode = "all"
        for key in store.report.all_keys(run_id).itertuples(index=False):
            tags[(str(key.datum_id), str(key.model))] = []
        note = f"Every row of the run ({total} rows, datum x model) is below."
    else:
        mode = "selection"
        picked = store.report.extreme_keys(run_id, extremes)
        ordered = sorted(picked.itertuples(index=False), key=lambda r: (
            list(scores).index(r.score) if r.score in scores else len(scores), r.score,
            not _tag(r.side, r.score).startswith(("worst", "lowest")), r.rank))
        for r in ordered:
            tags.setdefault((str(r.datum_id), str(r.model)), []).append(_tag(r.side, r.score))
        for key in store.report.sample_keys(run_id, sample_datums).itertuples(index=False):
            tags.setdefault((str(key.datum_id), str(key.model)), []).append("sample")
        note = (f"The run has {total} rows (datum x model), more than the {whole_limit} a report holds whole. "
                f"Below: the {extremes} worst and {extremes} best scored cells of each score, and every model's "
                f"rows of {sample_datums} datums picked by a stable hash of their id (a sample stratified by "
                f"model) - {len(tags)} rows. 'textgen-eval' and the dashboard's Explore page show any other row.")
    rows = _rows(store, run_id, list(tags), tags)
    return {"mode": mode, "total_rows": total, "whole_limit": whole_limit, "extremes": extremes,
            "sample_datums": sample_datums, "text_limit": TEXT_LIMIT, "verdicts_limit": VERDICTS_LIMIT,
            "shown": len(rows), "note": note, "scores": list(scores), "models": list(run["models"]), "rows": rows}


def _rows(store: Store, run_id: int, keys: list[tuple[str, str]], tags: dict[tuple[str, str], list[str]]
          ) -> list[dict[str, Any]]:
    if not keys:
        return []
    data, scores, verdicts = store.report.rows(run_id, keys)
    by_key_scores: dict[tuple[str, str], dict[str, Any]] = {}
    for r in scores.itertuples(index=False):
        value = None if pd.isna(r.value) else float(r.value)
        by_key_scores.setdefault((str(r.datum_id), str(r.model)), {})[str(r.score)] = {
            "value": value, "reason": None if value is not None else cut(r.reason) or "(no reason stored)"}
    by_key_verdicts: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in verdicts.itertuples(index=False):
        by_key_verdicts.setdefault((str(r.datum_id), str(r.model)), []).append({
            "metric": r.metric, "step": r.step, "item": cut(r.item), "verdict": cut(r.verdict),
            "reason": cut(r.reason)})
    texts = {(str(r.datum_id), str(r.model)): r for r in data.itertuples(index=False)}
    rows = []
    for key in keys:  # in the order chosen: dataset order, or the selection's
        found = texts.get(key)
        judged = by_key_verdicts.get(key, [])
        rows.append({
            "datum_id": key[0], "model": key[1], "shown_as": tags.get(key, []),
            "query": cut(found.query) if found is not None else None,
            "prediction": cut(found.prediction) if found is not None else None,
            "references": [cut(t) for t in _texts(found.refs)] if found is not None else [],
            "metadata": _metadata(found.metadata) if found is not None else {},
            "scores": by_key_scores.get(key, {}),
            "verdicts": judged[:VERDICTS_LIMIT], "verdicts_left_out": max(0, len(judged) - VERDICTS_LIMIT),
        })
    return rows


def _texts(value: Any) -> list[str]:
    if value is None or isinstance(value, float):
        return []
    return [str(v) for v in list(value) if v is not None]


def _metadata(text: Any) -> dict[str, Any]:
    """The row's metadata as a flat dict of short texts."""
    if not isinstance(text, str) or not text:
        return {}
    try:
        found = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(found, dict):
        return {}
    return {str(k): cut(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)) for k, v in found.items()}
