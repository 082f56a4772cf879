"""Scoring several lexical metrics in one pass over a chunk of rows."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...errors import ParameterError
from ...gc_tuning import fewer_gc_passes
from ...model import Cell, Datum
from .base import LexicalSpec, Scorer
from .tokenize import TextCache


def _specs() -> dict[str, LexicalSpec]:
    from . import SPECS

    return {spec.name: spec for spec in SPECS}  # type: ignore[misc]


def score_lexical(
    rows: Sequence[Datum], selected: Mapping[str, Mapping[str, Any]]
) -> dict[str, list[dict[str, Cell]]]:
    """Score ``rows`` with every metric in ``selected`` ({metric name: parameters}).

    Each text is tokenized once per tokenizer and its n-gram counts are built
    once, however many metrics share them. Module-level and fed only picklable
    values, so a process pool can run it on chunks of rows.
    """
    specs = _specs()
    unknown = [name for name in selected if name not in specs]
    if unknown:
        raise ParameterError(f"not lexical metrics: {', '.join(unknown)}; lexical metrics: {', '.join(specs)}")
    jobs = [(specs[name].score, specs[name].resolve(params)) for name, params in selected.items()]
    return dict(zip(selected, run(rows, jobs)))  # type: ignore[arg-type]


def run(rows: Sequence[Datum], jobs: Sequence[tuple[Scorer, Mapping[str, Any]]]) -> list[list[dict[str, Cell]]]:
    """Cells of each (scorer, resolved parameters) job, rows outermost so a row's tokens are shared."""
    rows = list(rows)
    cache = TextCache(_repeated(rows))
    results: list[list[dict[str, Cell]]] = [[] for _ in jobs]
    per_row = [(results[i], scorer.per_row(params)) for i, (scorer, params) in enumerate(jobs) if scorer.per_row]
    with fewer_gc_passes():
        if per_row:
            for row in rows:
                for out, score_row in per_row:
                    out.append(score_row(row, cache))
                cache.next_row()
        for i, (scorer, params) in enumerate(jobs):
            if scorer.per_chunk is not None:
                results[i] = scorer.per_chunk(rows, params, cache)
    return results


def _repeated(rows: Sequence[Datum]) -> set[str]:
    """Texts that occur more than once among the rows' predictions and references."""
    seen: set[str] = set()
    repeated: set[str] = set()
    for row in rows:
        for text in (row.prediction, *row.references):
            if type(text) is not str:
                continue
            if text in seen:
                repeated.add(text)
            else:
                seen.add(text)
    return repeated
