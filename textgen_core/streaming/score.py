"""The work of one chunk, on a pool worker: normalize, score, and turn rows and cells into Arrow.

The parent process only reads the file, hands raw chunks out, and stores what
comes back: everything per row or per cell (normalizing, scoring, JSON of
details, packing corpus statistics) happens in the workers. At most
``workers + 1`` chunks are in flight, so memory stays bounded however long the
file is; results come back in file order. A chunk a stopped run already stored
is normalized again (the dataset checks need its rows) but neither scored nor
sent back as rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection, Mapping, Sequence

import pyarrow as pa

from ..datasets.formats import RawTable
from ..errors import InputError
from ..registry import get_metric
from ..model import TEXT_FIELDS, Cell, Datum
from ..runs.chunk_work import score_chunk
from ..runs.corpus import CorpusPart, add_rows


@dataclass
class ChunkResult:
    """What one chunk gives the parent: its rows and cells as Arrow, and what the dataset checks need."""

    chunk: int = 0  # its number in the file, from 0
    stored: bool = False  # stored before (by the run that stopped): ``data`` and ``cells`` are None
    rows: int = 0
    row_numbers: list[int] = field(default_factory=list)  # the file row of each raw row
    data: pa.Table | None = None  # the data table's columns without dataset_id and row_index
    cells: pa.Table | None = None
    scored: int = 0  # rows scored (those of the chosen models)
    unscored: int = 0
    stats: dict[tuple[str, str], CorpusPart] = field(default_factory=dict)
    models: list[str] = field(default_factory=list)
    filled: set[str] = field(default_factory=set)
    metadata_columns: tuple[str, ...] = ()
    #: references column -> file rows whose reference reads NaN/None/null (the loader's warning)
    null_rows: dict[str, list[int]] = field(default_factory=dict)
    #: a bad-input problem, as (message, file, row, column): raised by the parent
    error: tuple[str, str | None, int | None, str | None] | None = None


def local_spec(name: str) -> Any:
    """The declaration of a metric scored here: looked up among the local metrics first, so a pool worker
    does not import every judge metric (and the judge's client) to find ROUGE."""
    from ..metrics.local import LOCAL_SPECS

    for spec in LOCAL_SPECS:
        if spec.name == name:
            return spec
    return get_metric(name)


def cells_table(run_id: int, rows: Sequence[Datum], metrics: Mapping[str, Mapping[str, Any]],
                scored: Mapping[str, list[dict[str, Cell]]]) -> tuple[pa.Table, int]:
    """(the cells as rows of the scores table, how many are unscored), by the one record rule of evaluate."""
    from ..run_rules import cell_columns
    from ..store.score_writes import column_table

    columns: dict[str, list[Any]] = {name: [] for name in ("datum_id", "model", "metric", "score", "value",
                                                           "details", "reason")}
    for metric, cells in scored.items():
        cell_columns(rows, metric, local_spec(metric).outputs(metrics[metric]), cells, columns)
    return column_table(run_id, columns), columns["value"].count(None)


def work_chunk(chunk: tuple[int, RawTable], mapping: Mapping[str, Any], run_id: int | None,
               metrics: Mapping[str, Mapping[str, Any]], models: Sequence[str] | None,
               finished: Collection[int] = ()) -> ChunkResult:
    """Normalize one numbered raw chunk with the loader's rules, score it unless its number is ``finished``, and
    pack the result (module-level: picklable).

    The cyclic collector runs less often meanwhile: a chunk's rows, cells and their dicts hold no cycles, and at
    the default thresholds its passes took about a quarter of a worker's time (41 -> 29.5 us per row measured).
    """
    from ..gc_tuning import fewer_gc_passes

    with fewer_gc_passes():
        return _work_chunk(chunk, mapping, run_id, metrics, models, finished)


def _work_chunk(chunk: tuple[int, RawTable], mapping: Mapping[str, Any], run_id: int | None,
                metrics: Mapping[str, Mapping[str, Any]], models: Sequence[str] | None,
                finished: Collection[int]) -> ChunkResult:
    from ..datasets.loader import normalize_rows, null_reference_rows
    from ..datasets.mapping import ColumnMapping
    from ..store.stream_sql import data_table

    number, raw = chunk
    chosen = ColumnMapping.from_dict(mapping)
    try:
        rows, metadata_columns = normalize_rows(raw, chosen)
    except InputError as exc:
        return ChunkResult(error=(exc.message, exc.file, exc.row, exc.column))
    stored = number in finished
    data = None if stored else data_table(0, 0, rows).drop_columns(["dataset_id", "row_index"])
    result = ChunkResult(chunk=number, stored=stored, rows=len(rows), row_numbers=raw.row_numbers, data=data,
                         models=list(dict.fromkeys(r.model for r in rows)), metadata_columns=metadata_columns,
                         filled={name for name in TEXT_FIELDS if any(getattr(r, name) for r in rows)},
                         null_rows=null_reference_rows(raw, chosen))
    if run_id is None or not metrics:
        return result
    wanted = [r for r in rows if r.model in models] if models else rows
    result.scored = len(wanted)
    if stored:
        return result
    scored = score_chunk(wanted, metrics)
    result.cells, result.unscored = cells_table(run_id, wanted, metrics, scored)
    models_of = [row.model for row in wanted]
    for metric in metrics:
        add_rows(result.stats, local_spec(metric), models_of, scored[metric], metrics[metric])
    return result
