"""A data file to a stored dataset (and, with metrics, a stored run) in bounded chunks.

Reading, normalizing, storing and scoring go chunk by chunk: the file is never
held whole, and cells are written as they are scored, each write with the
numbers of the chunks it finishes. A problem anywhere in the file leaves nothing
behind (the dataset, marked complete only at the end, is deleted with its run)
and names the file, row and column as the whole-file loader does. A stop signal
keeps what is stored and marks the run interrupted; :func:`resume_stream` reads
the unchanged file again and scores only the chunks not stored. When the rows
turn out identical to a stored dataset, the run moves to it (:func:`~textgen_core.catalog.settle_version`, the
policy of every source).
"""

from __future__ import annotations

import os
import threading
from array import array
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import pyarrow as pa

from ..catalog import StoredVersion, settle_version
from ..datasets.formats import RawTable
from ..datasets.loader import (check_filled, check_mapping, check_required, duplicate_key_error, needed_fields,
                               null_reference_warnings)
from ..datasets.mapping import ColumnMapping, guess_mapping
from ..errors import InputError, ParameterError, StoreBusy, StoreError, TextgenError
from ..gc_tuning import fewer_gc_passes
from ..registry import get_metric, resolve_params
from ..progress import Progress, ProgressCallback
from ..store import Store
from ..store.stream_sql import DuplicateRow, NewRows
from .read import ChunkReader, NotStreamable
from ..process_pool import in_order
from ..runs.status import RunSession, forget_dataset
from .record import check_still, file_state, new_record, stream_record
from ..runs.corpus import CorpusPart, corpus_aggregates, join_parts, stored_stats
from .score import ChunkResult, work_chunk

#: Rows per chunk: large enough that per-chunk costs vanish, small enough that a few chunks in flight stay small.
CHUNK_ROWS = 5000
#: DuckDB's memory limit while a file streams in (its default is 80% of the machine).
DUCKDB_MEMORY = "192MB"
#: DuckDB's threads for the writes of a run scored by pool workers (they keep the cores busy); None: its default.
DUCKDB_THREADS_BESIDE_WORKERS = 1
#: Rows (with their cells) stored per write: one large insert costs DuckDB much less than many small ones (the
#: data table's key index, and each write's checkpoint rewrites the last row group: 120,000 rows per write take
#: a fifth less CPU than 40,000, about DuckDB's row group of 122,880); the file is open only during each write.
ROWS_PER_WRITE = 120_000
#: Chunks handed to the workers beyond one each, at most: they go on scoring while the parent stores a write.
MAX_AHEAD = 16

MappingSource = ColumnMapping | Mapping[str, Any] | Callable[[list[str]], ColumnMapping] | None


@dataclass
class StreamedRun:
    """What a streamed load (and run) stored."""

    dataset_id: int
    dataset_name: str
    rows: int
    reused: bool
    run_id: int | None = None
    #: Problems that did not stop the load (references reading NaN/None/null, with their rows).
    warnings: tuple[str, ...] = ()
    #: Which version of which named dataset the rows are (:func:`~textgen_core.catalog.settle_version`).
    version: StoredVersion | None = None


def streamable_metrics(metrics: Sequence[str], params: Mapping[str, Mapping[str, Any]] | None) -> bool:
    """True when every metric is lexical and scores rows independently (pass@k by problem is not)."""
    resolved = resolve_params([get_metric(m).name for m in metrics], params)
    return all(get_metric(m).is_local(p) and not get_metric(m).whole_dataset(p) for m, p in resolved.items())


def _field_needs(required: Sequence[str], metrics: Sequence[str]) -> dict[str, str]:
    """Field -> the metric that needs it ('' when the caller requires it)."""
    return needed_fields({**{f: "" for f in required}, **{f: m for m in metrics for f in get_metric(m).needs}})


def _mapping(source: MappingSource, columns: list[str]) -> ColumnMapping:
    if source is None:
        return guess_mapping(columns)
    if isinstance(source, ColumnMapping):
        return source
    if callable(source):
        return source(columns)
    return ColumnMapping.from_dict(source)


class _Loader:
    """Stores what the workers send back, in file order; remembers what the dataset-level checks need."""

    def __init__(self, store: Store, dataset_id: int, mapping: ColumnMapping, header: RawTable,
                 run_id: int | None, threads: int | None = None) -> None:
        self.store, self.dataset_id, self.mapping, self.header = store, dataset_id, mapping, header
        self.run_id = run_id
        self.threads = threads  # DuckDB's threads for the writes (None: its default)
        self.row_numbers = array("l")  # file row number of each stored row, for duplicate messages
        self.models: dict[str, None] = {}
        self.filled: set[str] = set()
        self.metadata_columns: tuple[str, ...] = ()
        self.null_rows: dict[str, list[int]] = {}  # references column -> rows reading NaN/None/null
        self.stats: dict[tuple[str, str], CorpusPart] = {}
        self.scored = self.unscored = 0
        self.cached = 0  # rows of chunks a stopped run stored (and scored)
        self.stored_before = 0  # data rows of those chunks
        self._chunks: list[str] = []  # numbers of the buffered chunks
        self._cells: list[pa.Table] = []
        self._data: list[pa.Table] = []
        self._stored = 0  # rows already written to the data table

    def take(self, result: ChunkResult) -> None:
        if result.error is not None:
            message, file, row, column = result.error
            raise InputError(message, file=file, row=row, column=column)
        self.models.update(dict.fromkeys(result.models))
        for column, numbers in result.null_rows.items():
            self.null_rows.setdefault(column, []).extend(numbers)
        self.filled |= result.filled
        self.metadata_columns = result.metadata_columns
        per_raw_row = result.rows // max(1, len(result.row_numbers))  # wide format: one row per model
        if per_raw_row == 1:
            self.row_numbers.extend(result.row_numbers)
        else:
            for number in result.row_numbers:
                self.row_numbers.extend([number] * per_raw_row)
        if result.stored:
            if self._data:  # stored chunks are the first ones: each write holds every chunk before its own
                raise StoreError("the stored chunks of this run are not the first ones of the file")
            self._stored = self.stored_before = len(self.row_numbers)
            self.cached += result.scored
            return
        self._chunks.append(str(result.chunk))
        self._data.append(result.data)
        join_parts(self.stats, result.stats)
        if result.cells is not None:
            self.scored += result.scored
            self.unscored += result.unscored
            self._cells.append(result.cells)
        if len(self.row_numbers) - self._stored >= ROWS_PER_WRITE:
            self.flush()

    def all_stats(self, metrics: Mapping[str, Mapping[str, Any]]) -> dict[tuple[str, str], CorpusPart]:
        """Corpus statistics of every row: read back for the chunks a stopped run stored, then this session's."""
        if not self.stored_before or self.run_id is None:
            return self.stats
        stats = stored_stats(self.store, self.run_id, self.dataset_id, metrics, below=self.stored_before)
        join_parts(stats, self.stats)
        return stats

    def flush(self) -> None:
        """Store the buffered rows and cells: one large insert costs DuckDB far less than many small ones, and
        the file is open only while it writes (the dashboard and other commands can read it in between)."""
        if not self._data:
            return
        with self.store.session(), self.store.streams.memory_limit(DUCKDB_MEMORY, self.threads):
            rows = NewRows(self.dataset_id, self._stored, pa.concat_tables(self._data))
            try:
                if self.run_id is None:  # a plain load: rows without a run
                    self.store.streams.append_rows(rows)
                else:  # a new run's cells are appended (fresh); stored chunks were skipped, not read again
                    self.store.cells.write_cells(self.run_id, pa.concat_tables(self._cells) if self._cells else None,
                                                 rows=rows, finished=self._chunks, fresh=True)
            except DuplicateRow as exc:
                raise duplicate_key_error(self.header, self.mapping, (exc.datum_id, exc.model),
                                 self.row_numbers[exc.existing_index], self.row_numbers[exc.new_index]) from None
        self._stored = len(self.row_numbers)
        self._data, self._cells, self._chunks = [], [], []


def stream_file(store: Store, path: str | Path, metrics: Sequence[str] = (),
                params: Mapping[str, Mapping[str, Any]] | None = None, *, mapping: MappingSource = None,
                name: str | None = None, file_name: str | None = None, required: Sequence[str] = (),
                models: Sequence[str] | None = None, progress: ProgressCallback | None = None,
                cancel: threading.Event | None = None, workers: int | None = None,
                chunk_rows: int | None = None, on_start: Callable[[int], None] | None = None) -> StreamedRun:
    """Store a CSV/TSV/JSON Lines/Parquet file in chunks (of ``chunk_rows``, default CHUNK_ROWS) and, when
    ``metrics`` are given, score it as it goes.

    Raises :class:`NotStreamable` before touching the store when the file or the metrics
    need the whole-file path (a JSON array, pass@k, judge metrics).
    """
    return _stream_file(store, path, metrics, params, mapping=mapping, name=name, file_name=file_name,
                        required=required, models=models, progress=progress, cancel=cancel, workers=workers,
                        chunk_rows=chunk_rows or CHUNK_ROWS, on_start=on_start)


def _stream_file(store: Store, path: str | Path, metrics: Sequence[str],
                 params: Mapping[str, Mapping[str, Any]] | None, *, mapping: MappingSource, name: str | None,
                 file_name: str | None, required: Sequence[str], models: Sequence[str] | None,
                 progress: ProgressCallback | None, cancel: threading.Event | None, workers: int | None,
                 chunk_rows: int, on_start: Callable[[int], None] | None) -> StreamedRun:
    from ..runs.plan import mapped_fields, plan_run

    if metrics and not streamable_metrics(metrics, params):
        raise NotStreamable("judge metrics and pass@k are scored on the whole dataset")
    names = [get_metric(m).name for m in dict.fromkeys(metrics)]
    start = file_state(Path(path)) if Path(path).is_file() else {}
    reader = ChunkReader(path, file_name or str(path))
    header = RawTable(columns=reader.columns, rows=[], row_numbers=[], label=reader.label)
    try:
        chosen = _mapping(mapping, reader.columns)
        needs = _field_needs(required, names)
        check_mapping(header, chosen)
        check_required(header, chosen, needs)
        plan = plan_run(names, params, mapped_fields(chosen, reader.columns)) if names else None
        resolved = plan.params if plan else {}
    except BaseException:
        reader.close()
        raise
    dataset_name, earlier = store.streams.free_dataset_names(name or Path(path).stem)
    dataset_id = store.streams.start_dataset(dataset_name, str(path), chosen.to_dict())
    fill = _Plan(reader, header, chosen, resolved, models, needs, dataset_id, dataset_name, None, earlier, start)
    try:
        if plan is not None:
            fill.run_id = plan.start(store, dataset_id, list(models or []), "streamed")
            new_record(Path(path), reader.label, chosen.to_dict(), models, required, earlier, chunk_rows
                       ).save(store, fill.run_id)
            if on_start is not None:
                on_start(fill.run_id)
    except BaseException:
        reader.close()
        forget_dataset(store, dataset_id)
        raise
    return _fill(store, fill, progress, cancel, workers, chunk_rows)


def resume_stream(store: Store, run_id: int, *, progress: ProgressCallback | None = None,
                  cancel: threading.Event | None = None, workers: int | None = None) -> int:
    """Finish a streamed run that stopped: the file is read again, and only the chunks not stored are scored.

    Refused (nothing changes) when the file changed since the run read it.
    """
    record = stream_record(store, run_id)
    if record is None:
        raise ParameterError(f"run {run_id} was not streamed from a file")
    run = store.runs.get_run(run_id)
    if run["status"] == "finished":
        return run_id
    start = record.check_unchanged(run_id)
    reader = ChunkReader(record.path, record.label)
    try:
        header = RawTable(columns=reader.columns, rows=[], row_numbers=[], label=reader.label)
        chosen = ColumnMapping.from_dict(record.mapping)
        names = list(run["metrics"])
        needs = _field_needs(record.required, names)
        plan = _Plan(reader, header, chosen, {m: run["params"][m] for m in names}, record.models or None, needs,
                     run["dataset_id"], run["dataset"], run_id, record.earlier, start)
        finished = {int(key) for key in store.streams.finished_blocks(run_id)}
        store.runs.claim_run(run_id)
    except BaseException:
        reader.close()
        raise
    _fill(store, plan, progress, cancel, workers, record.chunk_rows, finished, run.get("duration_s") or 0.0)
    return run_id


@dataclass
class _Plan:
    """A streamed load about to fill its dataset (and score its run)."""

    reader: ChunkReader
    header: RawTable
    mapping: ColumnMapping
    metrics: dict[str, dict[str, Any]]
    models: Sequence[str] | None
    needs: dict[str, str]
    dataset_id: int
    dataset_name: str
    run_id: int | None
    earlier: Sequence[str]
    start: dict[str, Any]  # the file's size and modification time before it was read


def _fill(store: Store, plan: _Plan, progress: ProgressCallback | None, cancel: threading.Event | None,
          workers: int | None, chunk_rows: int, finished: set[int] | None = None, already: float = 0.0
          ) -> StreamedRun:
    """Read, store and score the chunks not ``finished``; then the dataset checks, the run's models and corpus
    aggregates. A stop keeps what is stored (the run is interrupted); any other error deletes the dataset."""
    dataset_id, run_id, models = plan.dataset_id, plan.run_id, plan.models
    workers = workers or os.cpu_count() or 1
    loader = _Loader(store, dataset_id, plan.mapping, plan.header, run_id,
                     DUCKDB_THREADS_BESIDE_WORKERS if workers > 1 else None)
    session = nullcontext() if run_id is None else RunSession(store, run_id, already, keeps_failures=False)
    try:
        with session:  # the run's status: a stop keeps what is stored, for 'textgen-eval resume'
            _load_and_score(plan.reader, loader, run_id, plan.metrics, models, progress, cancel, workers,
                            chunk_rows, finished or set())
            check_still(plan.reader.path, plan.reader.label, plan.start)
            check_filled([], plan.header, plan.mapping,
                         {f: why for f, why in plan.needs.items() if f not in loader.filled})
            unknown = sorted(set(models or ()) - set(loader.models))
            if unknown:
                raise ParameterError(f"models not in the dataset: {', '.join(unknown)}")
            n_rows = len(loader.row_numbers)
            store.streams.finish_dataset(dataset_id, n_rows, list(loader.models), loader.metadata_columns)
            if cancel is not None and cancel.is_set():
                raise _Cancelled()
            if run_id is not None:
                store.runs.set_run_models(run_id, [m for m in loader.models if not models or m in models])
                store.cells.write_aggregates(run_id, corpus_aggregates(plan.metrics, loader.all_stats(plan.metrics)))
    except (StoreBusy, KeyboardInterrupt):  # a run keeps what is stored (its session said so); a bare load does not
        if run_id is None:
            forget_dataset(store, dataset_id)
        raise
    except BaseException:
        forget_dataset(store, dataset_id)  # with its run: nothing half-written stays behind
        raise
    finally:
        plan.reader.close()
    stored = settle_version(store, dataset_id, plan.earlier)
    if progress:
        done = loader.scored + loader.cached if run_id is not None else n_rows
        progress(Progress("done", done, done, loader.unscored, cached=loader.cached))
    return StreamedRun(stored.dataset_id, stored.name, n_rows, stored.reused, run_id,
                       null_reference_warnings(plan.reader.label, plan.mapping, loader.null_rows), stored)


class _Cancelled(TextgenError):
    """Cancelled while reading: the partial dataset is not kept."""

    def __init__(self) -> None:
        super().__init__("cancelled while reading the file: nothing was stored")


def _load_and_score(reader: ChunkReader, loader: _Loader, run_id: int | None,
                    metrics: Mapping[str, Mapping[str, Any]], models: Sequence[str] | None,
                    progress: ProgressCallback | None, cancel: threading.Event | None, workers: int,
                    chunk_rows: int, finished: set[int]) -> None:
    def estimate(done: int) -> int:
        """Rows in the whole file, from the share of bytes read so far (exact at the end)."""
        read = len(loader.row_numbers)
        if reader.bytes_read >= reader.size:
            return max(done, read)
        return max(done, read, round(read * reader.size / max(1, reader.bytes_read)))

    def chunks() -> Iterator[tuple[int, RawTable]]:
        for number, raw in enumerate(reader.chunks(chunk_rows)):
            if progress and number == 0:
                progress(Progress("reading", max(1, round(len(raw.rows) * reader.size / max(1, reader.bytes_read))), 0))
            yield number, raw
            if cancel is not None and cancel.is_set():
                return

    phase = "reading" if run_id is None else "lexical"
    args = (loader.mapping.to_dict(), run_id, dict(metrics), models, frozenset(finished))
    ahead = min(MAX_AHEAD, max(1, ROWS_PER_WRITE // chunk_rows))
    with fewer_gc_passes():  # the CSV's rows are lists of strings without cycles
        for result in in_order(chunks(), work_chunk, args, workers, ahead):
            loader.take(result)
            if progress:
                done = len(loader.row_numbers) if run_id is None else loader.scored + loader.cached
                progress(Progress(phase, estimate(done), done, loader.unscored, cached=loader.cached))
    loader.flush()


__all__ = ["CHUNK_ROWS", "NotStreamable", "StreamedRun", "resume_stream", "stream_file", "streamable_metrics"]
