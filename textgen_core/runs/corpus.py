"""Corpus aggregates on every path: per (metric, model), the sum of the rows' statistics.

The whole-file run, the streamed run (per chunk, in the workers) and the Ray
engine (from the stored cells) all count rows with :func:`add_row`, combine
parts in row order with :func:`join_parts` and turn them into values with
:func:`corpus_aggregates`, by the contract of :mod:`textgen_core.metrics.corpus`.
A corpus scorer of the older form (cells in, value out) gets its cells packed
(:class:`~textgen_core.runs.packed.RowStats`), never the rows: pass@k, which
reads rows, is scored over the whole dataset only and does not come here.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..metrics.corpus import CorpusSum, summed
from ..registry import get_metric
from ..model import Cell
from .packed import RowStats

if TYPE_CHECKING:
    from ..store import Store

#: What a corpus aggregate keeps per (metric, model): the sum of its rows' statistics, or, for a corpus scorer
#: of the older form, the rows' cells packed.
CorpusPart = CorpusSum | RowStats


def new_part(metric: str) -> CorpusPart | None:
    """An empty corpus part for ``metric``; None when it has no corpus value."""
    spec = get_metric(metric)
    if spec.corpus is None:
        return None
    return CorpusSum() if summed(spec) is not None else RowStats()


def add_row(parts: dict[tuple[str, str], CorpusPart], metric: str, model: str, cells: Mapping[str, Cell],
            params: Mapping[str, Any]) -> None:
    """Count one row's cells in the corpus part of (metric, model)."""
    part = parts.get((metric, model))
    if part is None:
        part = new_part(metric)
        if part is None:
            return
        parts[(metric, model)] = part
    if isinstance(part, CorpusSum):
        part.add(summed(get_metric(metric)).stats(cells, params))  # type: ignore[union-attr]
    else:
        part.add(cells)


def add_rows(parts: dict[tuple[str, str], CorpusPart], spec: Any, models: Sequence[str],
             cells: Sequence[Mapping[str, Cell]], params: Mapping[str, Any]) -> None:
    """Count a chunk's rows (``models[i]`` the model of the row scored ``cells[i]``) in the corpus parts of
    ``spec``'s metric: as :func:`add_row` row after row, with the sums taken per column (the same additions in
    the same order) instead of a new list per row."""
    if spec.corpus is None:
        return
    corpus = summed(spec)
    if corpus is None:  # an older-form scorer: the cells, packed
        for model, row in zip(models, cells):
            packed = parts.setdefault((spec.name, model), RowStats())
            packed.add(row)  # type: ignore[arg-type]
        return
    by_model: dict[str, list[Sequence[float]]] = {model: [] for model in models}  # parts in add_row's order
    stats = corpus.stats
    for model, row in zip(models, cells):
        numbers = stats(row, params)
        if numbers is not None:
            by_model[model].append(numbers)
    for model, rows in by_model.items():
        if not rows:
            parts.setdefault((spec.name, model), CorpusSum())
            continue
        width = len(rows[0])
        if any(len(numbers) != width for numbers in rows):
            raise ValueError(f"{spec.name}: row statistics of different lengths in one chunk")
        part = CorpusSum([float(sum(column, 0.0)) for column in zip(*rows)], len(rows),
                         tuple(float(v) for v in rows[-1]))
        if (spec.name, model) in parts:
            parts[(spec.name, model)].extend(part)  # type: ignore[arg-type]
        else:
            parts[(spec.name, model)] = part


def join_parts(parts: dict[tuple[str, str], CorpusPart], later: Mapping[tuple[str, str], CorpusPart]) -> None:
    """Add ``later`` parts (of rows after these, as chunks come in file order) to ``parts``."""
    for key, part in later.items():
        if key in parts:
            parts[key].extend(part)  # type: ignore[arg-type]
        else:
            parts[key] = part


def corpus_aggregates(metrics: Mapping[str, Mapping[str, Any]],
                      stats: Mapping[tuple[str, str], CorpusPart]) -> list[tuple[str, str, float | None, dict]]:
    """(model, score, value, details) of every corpus aggregate: from the sum of the rows' statistics, or for a
    corpus scorer of the older form from the packed cells (never from rows: the streamed path has none)."""
    aggregates = []
    for (metric, model), part in stats.items():
        spec = get_metric(metric)
        if isinstance(part, CorpusSum):
            values = summed(spec).value(part, metrics[metric]) if part.rows else {}  # type: ignore[union-attr]
        else:
            values = spec.corpus([], part, metrics[metric])  # type: ignore[misc, arg-type]
        aggregates.extend((model, score, value, {"metric": metric}) for score, value in values.items())
    return aggregates


def stored_stats(store: Store, run_id: int, dataset_id: int, metrics: Mapping[str, Mapping[str, Any]],
                 below: int | None = None) -> dict[tuple[str, str], CorpusPart]:
    """The corpus parts :func:`corpus_aggregates` needs, from the stored cells in row order (those of rows before
    row index ``below`` when given): for runs stored in several sessions, and the Ray engine."""
    stats: dict[tuple[str, str], CorpusPart] = {}
    for metric in metrics:
        if get_metric(metric).corpus is None:
            continue
        row: dict[str, Cell] = {}
        current: tuple[int, str] | None = None
        cells = store.streams.corpus_cells(run_id, dataset_id, metric, below=below)
        for row_index, model, score, value, details in cells:
            if current is not None and current[0] != row_index:
                add_row(stats, metric, current[1], row, metrics[metric])
                row = {}
            current = (row_index, model)
            row[score] = Cell(value, json.loads(details) if details else None)
        if current is not None:
            add_row(stats, metric, current[1], row, metrics[metric])
    return stats
