"""The Ray engine: Ray Data reads a dataset in blocks and scores it in ``map_batches``.

The file (CSV, TSV, JSON Lines or Parquet; one file or a folder; any filesystem
pyarrow reads, such as s3:// or gs://) is read by Ray Data, every column as
text as the local reader keeps it. Each batch is normalized with the local
loader's rules and scored with the local engine's code, so the cells are the
same to the bit; the driver writes them to the DuckDB store batch by batch, in
file order, each batch in one transaction with the mark that it is finished. A
resumed run skips the finished batches. Ray schedules everything: there is no
scheduler or worker protocol here.

Judge metrics are scored once the rows are stored, in blocks of whole datum
groups, with one request limit per endpoint for the whole cluster
(:mod:`.ray_judge`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import PurePosixPath
from typing import Any, Callable, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ..datasets.formats import RawTable, unbytes, check_header
from ..datasets.loader import check_mapping, check_required, needed_fields, normalize_rows
from ..datasets.mapping import ColumnMapping, guess_mapping
from ..errors import InputError, ParameterError, TextgenError
from ..registry import get_metric, resolve_params
from ..model import Datum
from ..progress import Progress, ProgressCallback
from ..store import Store
from ..runs.status import RunSession
from ..store.score_writes import block_scores
from ..store.stream_sql import DuplicateRow, NewRows
from .ray_judge import JUDGE_BLOCK_ROWS, check_judge_on_ray, score_judge_on_ray, stored_rows
from .ray_read import content_of, files_of, format_of, header_of, json_lines, read_blocks, row_estimate

#: Rows per block (about): the unit Ray schedules, stores in one transaction and skips when resuming.
BLOCK_ROWS = 5000

_CELL = pa.struct([("metric", pa.string()), ("score", pa.string()), ("value", pa.float64()),
                   ("details", pa.string()), ("reason", pa.string())])
_OUT_SCHEMA = pa.schema([
    ("block", pa.string()), ("block_rows", pa.int64()), ("skipped", pa.bool_()),
    ("datum_id", pa.string()), ("model", pa.string()), ("query", pa.string()), ("prediction", pa.string()),
    ("refs", pa.list_(pa.string())), ("contexts", pa.list_(pa.string())), ("metadata", pa.string()),
    ("cells", pa.list_(_CELL)),
    ("error", pa.string()),  # a bad-input message from the worker: [message, file, row, column] as JSON
])


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ParameterError("--engine ray needs Ray: pip install 'textgen-eval[ray]'") from None
    return ray


def connect(address: str | None = None) -> None:
    """Join the cluster at ``address``, or start a local one (once per process)."""
    ray = _ray()
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False, include_dashboard=False)
    ray.data.DataContext.get_current().execution_options.preserve_order = True  # file order, as the local engine


def check_ray_metrics(metrics: Sequence[str], judge: Any | None = None) -> None:
    """Refuse, with the reason, what the Ray engine does not score (pass@k; judge batch mode and caps)."""
    if any(get_metric(m).group != "lexical" for m in metrics):
        check_judge_on_ray(judge)
    from ..judge.metrics.criteria import definition

    custom = [m for m in metrics if definition(m) is not None]
    if custom:  # a worker process does not hold the definitions defined in this one
        raise ParameterError(f"{', '.join(custom)}: custom judge metrics run with --engine local")
    whole = [m for m in metrics if get_metric(m).whole_dataset(resolve_params([m], None)[m])]
    if whole:
        raise ParameterError(f"{', '.join(whole)} group rows across the whole dataset; run them with --engine local")


# -- the work of one batch (runs on a Ray worker) ---------------------------------
def _block_key(rows: Sequence[Datum]) -> str:
    digest = hashlib.sha1()
    for row in rows:
        digest.update(f"{len(row.datum_id)}:{row.datum_id}{len(row.model)}:{row.model}".encode())
    return digest.hexdigest()[:20]


def _datums(batch: pa.Table, mapping: Mapping[str, Any] | None, label: str) -> list[Datum]:
    """The batch's rows, normalized by the local loader (``mapping`` None: rows read from the store)."""
    if mapping is None:
        return stored_rows(batch)
    if batch.column_names == ["text"] and mapping.get("_jsonl"):
        columns, values = json_lines(batch.column("text").to_pylist(), mapping["_jsonl"], label)
    else:
        columns = check_header(list(batch.column_names), label)
        values = [[unbytes(v) for v in row.values()] for row in batch.to_pylist()]
    values = [row for row in values if any(v not in (None, "") and str(v).strip() for v in row)]
    raw = RawTable(columns=columns, rows=values, row_numbers=list(range(1, len(values) + 1)),
                   lines=[None] * len(values), label=label)
    try:
        return normalize_rows(raw, ColumnMapping.from_dict({k: v for k, v in mapping.items() if k != "_jsonl"}))[0]
    except InputError as exc:
        first = values[0] if values else []
        raise InputError(f"{exc.message} (row {exc.row} of the block that starts with {first[:2]})",
                         file=label, column=exc.column) from None


def score_batch(batch: pa.Table, *, mapping: Mapping[str, Any] | None, label: str,
                metrics: Mapping[str, Mapping[str, Any]], finished: frozenset[str]) -> pa.Table:
    """One batch in, the same rows out with their cells (none when the block was finished before)."""
    from ..run_rules import cell_records
    from ..store.dataset_sql import json_text
    from ..runs.chunk_work import score_chunk

    try:
        rows = _datums(batch, mapping, label)
    except InputError as exc:  # Ray passes errors back as text only: send it as data, raised by the driver
        problem = json.dumps([exc.message, exc.file, exc.row, exc.column])
        return pa.Table.from_pylist([{"block": "", "block_rows": 1, "skipped": True, "datum_id": "", "model": "",
                                      "cells": [], "error": problem}], schema=_OUT_SCHEMA)
    key = _block_key(rows)
    skipped = key in finished
    per_row: list[list[dict[str, Any]]] = [[] for _ in rows]
    if not skipped and rows:
        position = {(r.datum_id, r.model): i for i, r in enumerate(rows)}
        for metric, cells in score_chunk(rows, metrics).items():
            outputs = get_metric(metric).outputs(metrics[metric])
            for datum_id, model, _m, score, value, details, reason in cell_records(rows, metric, outputs, cells):
                per_row[position[(datum_id, model)]].append(
                    {"metric": metric, "score": score, "value": value, "details": json_text(details), "reason": reason})
    return pa.Table.from_pydict({
        "block": [key] * len(rows), "block_rows": [len(rows)] * len(rows), "skipped": [skipped] * len(rows),
        "datum_id": [r.datum_id for r in rows], "model": [r.model for r in rows],
        "query": [r.query for r in rows], "prediction": [r.prediction for r in rows],
        "refs": [list(r.references) for r in rows], "contexts": [list(r.contexts) for r in rows],
        "metadata": [json_text(dict(r.metadata)) if r.metadata else None for r in rows],
        "cells": per_row, "error": [None] * len(rows),
    }, schema=_OUT_SCHEMA)


# -- the driver -----------------------------------------------------------------
def run_ray(store: Store, source: str, metrics: Sequence[str], params: Mapping[str, Mapping[str, Any]] | None = None,
            *, mapping: ColumnMapping | Mapping[str, Any] | Callable[[list[str]], ColumnMapping] | None = None,
            name: str | None = None, models: Sequence[str] | None = None, judge: Any | None = None,
            address: str | None = None, progress: ProgressCallback | None = None,
            cancel: threading.Event | None = None, block_rows: int = BLOCK_ROWS) -> int:
    """Read ``source`` with Ray Data, score it on the cluster, store dataset and run; returns the run id."""
    from ..runs.plan import mapped_fields, plan_run

    names = list(dict.fromkeys(get_metric(m).name for m in metrics))
    if not names:
        raise ParameterError("choose at least one metric")
    check_ray_metrics(names, judge)
    resolved = resolve_params(names, params)
    source = str(source)
    filesystem, files = files_of(source)
    fmt = format_of(files, source)
    columns = check_header(header_of(filesystem, files[0], fmt), source)
    header = RawTable(columns=columns, rows=[], row_numbers=[], label=source)
    chosen = guess_mapping(columns) if mapping is None else mapping if isinstance(mapping, ColumnMapping) \
        else mapping(columns) if callable(mapping) else ColumnMapping.from_dict(mapping)
    if not chosen.id:
        raise InputError("the Ray engine needs a datum id column (map one with --map id=COLUMN): rows read in "
                         "parallel blocks have no file row number to stand in for it", file=source)
    check_mapping(header, chosen)
    check_required(header, chosen, needed_fields({f: m for m in names for f in get_metric(m).needs}))
    plan = plan_run(names, resolved, mapped_fields(chosen, columns), judge)
    dataset_name, earlier = store.free_dataset_names(name or PurePosixPath(files[0]).stem)
    dataset_id = store.start_dataset(dataset_name, source, chosen.to_dict())
    run_id = plan.start(store, dataset_id, list(models or []), "ray")
    try:
        store.record_block_run(run_id, source, {**chosen.to_dict(), _CONTENT: content_of(filesystem, files)},
                               block_rows)
        _score(store, run_id, dataset_id, source, resolved, chosen.to_dict(), progress, cancel, address, block_rows,
               new_data=True, models=models, judge=judge)
    except InputError:
        store.delete_dataset(dataset_id, force=True)  # bad input: nothing half-written stays behind
        raise
    if store.get_run(run_id)["status"] == "finished":
        from ..catalog import settle_version

        settle_version(store, dataset_id, earlier)
    return run_id


def resume_ray(store: Store, run_id: int, *, judge: Any | None = None, address: str | None = None,
               progress: ProgressCallback | None = None, cancel: threading.Event | None = None) -> int:
    """Finish a Ray run: blocks already stored are read but not scored again, nor finished judge cells."""
    info = store.block_run(run_id)
    if info is None:
        raise ParameterError(f"run {run_id} was not scored by the Ray engine")
    source, mapping, block_rows = info
    run = store.get_run(run_id)
    if mapping is not None:
        mapping = dict(mapping)
        _check_content(run_id, source, mapping.pop(_CONTENT, None))
    store.claim_run(run_id)
    _score(store, run_id, run["dataset_id"], source if mapping is not None else None, run["params"], mapping,
           progress, cancel, address, block_rows, new_data=mapping is not None, models=run["models"] or None,
           judge=judge)
    return run_id


#: Key of a Ray run's record holding the SHA-256 of each file it read (compared on resume).
_CONTENT = "_content"


def _check_content(run_id: int, source: str, recorded: Mapping[str, str] | None) -> None:
    """Refuse to resume when the files are not those the run read (by content: size and time do not decide)."""
    if recorded is None:  # recorded before contents were kept
        return
    try:
        filesystem, files = files_of(source)
        now = content_of(filesystem, files)
    except (InputError, OSError):
        raise InputError(f"run {run_id} reads this data to finish, and it is gone; nothing was resumed",
                         file=source) from None
    if now != dict(recorded):
        changed = sorted(set(now) ^ set(recorded) | {f for f in now if f in recorded and now[f] != recorded[f]})
        raise InputError(f"the data changed since run {run_id} read it (content differs: {', '.join(changed)}): "
                         "its stored blocks would not match the rest, so nothing was resumed. Score it again with "
                         "'textgen-eval run'", file=source)


def evaluate_stored(store: Store, dataset_id: int, run_id: int, metrics: Mapping[str, Mapping[str, Any]], *,
                    models: Sequence[str] | None = None, judge: Any | None = None, address: str | None = None,
                    progress: ProgressCallback | None = None, cancel: threading.Event | None = None,
                    block_rows: int = BLOCK_ROWS) -> None:
    """Score a stored dataset on Ray for a run :func:`textgen_core.evaluate.evaluate` registered."""
    check_ray_metrics(list(metrics), judge)
    store.record_block_run(run_id, f"dataset:{dataset_id}", None, block_rows)
    _score(store, run_id, dataset_id, None, metrics, None, progress, cancel, address, block_rows,
           new_data=False, models=models, judge=judge)


def _score(store: Store, run_id: int, dataset_id: int, source: str | None, metrics: Mapping[str, Mapping[str, Any]],
           mapping: Mapping[str, Any] | None, progress: ProgressCallback | None, cancel: threading.Event | None,
           address: str | None, block_rows: int, *, new_data: bool, models: Sequence[str] | None,
           judge: Any | None) -> None:
    # Each block is stored in its own operation: the file stays free for the dashboard between blocks.
    already = store.get_run(run_id).get("duration_s") or 0.0
    connect(address)
    ray = _ray()
    metadata_columns: list[str] = []
    if source is None:
        stored = store.data_arrow(dataset_id, models)
        dataset = ray.data.from_arrow([stored.slice(start, block_rows)
                                       for start in range(0, max(1, stored.num_rows), block_rows)])
        label = f"dataset {dataset_id}"
    else:
        filesystem, files = files_of(source)
        fmt = format_of(files, source)
        columns = header_of(filesystem, files[0], fmt)
        blocks = max(1, -(-row_estimate(filesystem, files, fmt) // block_rows))
        dataset = read_blocks(filesystem, files, fmt, columns, blocks)
        used = set(ColumnMapping.from_dict(mapping or {}).columns_used())
        metadata_columns = [c for c in check_header(columns, source) if c not in used]
        label = source
        if fmt == "jsonl":
            mapping = {**(mapping or {}), "_jsonl": columns}  # workers parse the lines: they need the header
    judged = {m: p for m, p in metrics.items() if get_metric(m).group != "lexical"}
    metrics = {m: p for m, p in metrics.items() if m not in judged}
    finished = frozenset(store.finished_blocks(run_id))
    # batch_size=None: each block is one batch, so a block's key is the same on a resumed run
    scored = dataset.map_batches(score_batch, batch_size=None, batch_format="pyarrow", fn_kwargs={
        "mapping": mapping, "label": label, "metrics": dict(metrics), "finished": finished})
    index = done = unscored = skipped = 0
    arrived: dict[str, int] = {}
    seen_models: dict[str, None] = {}
    with RunSession(store, run_id, already) as session:  # the run's status, as every source records it
        try:
            for table in scored.iter_batches(batch_size=None, batch_format="pyarrow"):
                problems = table.column("error").drop_null()
                if len(problems):
                    message, file, row, column = json.loads(problems[0].as_py())
                    raise InputError(message, file=file, row=row, column=column)
                for key, count in zip(*_block_counts(table)):
                    arrived[key] = arrived.get(key, 0) + count
                complete = [k for k, total in _block_totals(table).items() if arrived.get(k) == total]
                fresh = table.filter(pc.invert(table.column("skipped")))
                if fresh.num_rows or complete:
                    try:
                        store.cells.write_cells(
                            run_id, block_scores(run_id, fresh), finished=complete, fresh=not finished,
                            rows=NewRows(dataset_id, index, fresh, keep_stored=bool(finished)) if new_data else None)
                    except DuplicateRow as exc:
                        raise _duplicate(exc, label, mapping) from None
                for model in table.column("model").unique().to_pylist():
                    seen_models.setdefault(model, None)
                index += table.num_rows
                done += table.num_rows
                skipped += table.num_rows - fresh.num_rows
                unscored += sum(1 for cells in fresh.column("cells").to_pylist() for c in cells if c["value"] is None)
                if progress:
                    # the row count is known only at the end; ``cached``: rows of blocks finished before a resume
                    progress(Progress("ray", done, done, unscored, cached=skipped))
                if cancel is not None and cancel.is_set():
                    session.end_as("cancelled")
                    return
        except TextgenError:
            raise
        except Exception as exc:  # a worker's bad-input error arrives wrapped by Ray: raised as itself
            cause = _input_error(exc)
            if cause is not None:
                raise cause from None
            raise
        if new_data:
            store.finish_dataset(dataset_id, index, list(seen_models), metadata_columns)
        chosen = [m for m in seen_models if not models or m in models]
        if new_data:
            store.set_run_models(run_id, chosen)
        store.write_aggregates(run_id, _corpus(store, run_id, dataset_id, metrics))
        if judged and not score_judge_on_ray(store, run_id, dataset_id, judged, judge, models=chosen,
                                             progress=progress, cancel=cancel,
                                             block_rows=min(block_rows, JUDGE_BLOCK_ROWS)):
            session.end_as("cancelled")
            return
    if progress:
        progress(Progress("done", done, done, unscored, cached=skipped))


def _duplicate(exc: DuplicateRow, label: str, mapping: Mapping[str, Any] | None) -> InputError:
    """A (datum id, model) pair read twice, named as the local loader names it (rows count data rows in file
    order; blank rows are not counted)."""
    column = (mapping or {}).get("id") or None
    return InputError(f"datum id {exc.datum_id!r} with model {exc.model!r} appears in data rows "
                      f"{exc.existing_index + 1} and {exc.new_index + 1}; each (datum id, model) pair must be "
                      "unique. Nothing was stored", file=label, row=exc.new_index + 1, column=column)


def _block_counts(table: pa.Table) -> tuple[list[str], list[int]]:
    counts = table.group_by("block").aggregate([("block", "count")])
    return counts.column("block").to_pylist(), counts.column("block_count").to_pylist()


def _block_totals(table: pa.Table) -> dict[str, int]:
    totals = table.group_by("block").aggregate([("block_rows", "max")])
    return dict(zip(totals.column("block").to_pylist(), totals.column("block_rows_max").to_pylist()))


def _input_error(exc: BaseException) -> InputError | None:
    """The InputError a Ray worker raised, found in the chain of errors Ray wraps it in."""
    queue, seen = [exc], set()
    while queue:
        error = queue.pop(0)
        if id(error) in seen:
            continue
        seen.add(id(error))
        if isinstance(error, InputError):
            return error
        queue += [e for e in (getattr(error, "cause", None), error.__cause__, error.__context__)
                  if isinstance(e, BaseException)]
    return None


def _corpus(store: Store, run_id: int, dataset_id: int, metrics: Mapping[str, Mapping[str, Any]]
            ) -> list[tuple[str, str, float | None, dict]]:
    """Corpus aggregates from the stored cells, in row order (resumed blocks included)."""
    from ..runs.corpus import corpus_aggregates, stored_stats

    return corpus_aggregates(metrics, stored_stats(store, run_id, dataset_id, metrics))
