"""The run loop: score what a run has not finished, and set its status once.

Every run ends here whatever brought its rows: a stored dataset
(:func:`textgen_core.evaluate.evaluate`, ``resume`` and ``extend``), and the
streamed and Ray sources once their rows are stored. Lexical metrics run in chunks
(across processes for large datasets); judge metrics go through
:mod:`textgen_core.judge.engine` (or :mod:`.jury` for panels). A cell is always
written, scored or with the reason it is not: nothing is silently dropped or
averaged in as 0.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Iterator, Mapping, Sequence

from ..errors import TextgenError
from ..model import Cell, Datum
from ..process_pool import in_order
from ..progress import Progress, ProgressCallback
from ..registry import get_metric
from ..run_rules import cell_records
from ..store import Store
from .chunk_work import score_chunk
from .status import RunSession

#: Below this many rows, lexical scoring stays in-process (a pool costs more than it saves).
POOL_THRESHOLD = 4000
CHUNK_SIZE = 1000


def score_stored(store: Store, run_id: int, rows: list[Datum], metrics: Sequence[str],
                 resolved: Mapping[str, Mapping[str, Any]], judge: Any | None,
                 progress: ProgressCallback | None, cancel: threading.Event | None, workers: int | None,
                 *, already: float = 0.0, jury: Any | None = None) -> None:
    """Score what is not finished yet; the run's duration is ``already`` (earlier sessions) plus this one.

    Lexical metrics whose cells are all stored are not scored again (an extended run scores only the added
    ones); a judge metric's finished cells are skipped by the judge engine (and its cache)."""
    lexical = {m: resolved[m] for m in metrics if get_metric(m).is_local(resolved[m])}
    judged = {m: resolved[m] for m in metrics if m not in lexical}
    with RunSession(store, run_id, already) as session:
        written = store.finished_cells(run_id, with_unscored=True)  # lexical cells are final either way
        pending = {m: p for m, p in lexical.items() if not _all_finished(rows, (m,), written)}
        if pending:
            _run_lexical(store, run_id, rows, pending, progress, cancel, workers)
        if judged and not (cancel and cancel.is_set()):
            refused = _judge(store, run_id, rows, judged, judge, jury, progress, cancel)
            if refused:  # every later call would fail the same way: the run failed, its cells stay unscored
                raise TextgenError(f"the judge endpoint refused: {'; '.join(refused)}. The cells are kept as "
                                   "unscored; fix the judge settings and resume the run.")
        if cancel is not None and cancel.is_set():
            session.end_as("cancelled")
    if progress and session.outcome == "finished":
        progress(Progress("done", len(rows), len(rows)))


def _judge(store: Store, run_id: int, rows: list[Datum], judged: Mapping[str, Mapping[str, Any]], judge: Any,
           jury: Any | None, progress: ProgressCallback | None, cancel: threading.Event | None) -> list[str]:
    """The judge cells not finished yet: one judge once (the engine), or a panel / samples (runs/jury.py)."""
    if jury is not None:
        from .jury import run_jury

        return run_jury(store, run_id, rows, judged, jury, progress=progress, cancel=cancel)
    from ..judge.engine import run_judge_metrics

    return run_judge_metrics(store, run_id, rows, judged, judge, progress=progress, cancel=cancel,
                             skip=store.finished_cells(run_id))


def _all_finished(rows: Sequence[Datum], metrics: Mapping[str, Any], finished: set[tuple[str, str, str]]) -> bool:
    return all((r.datum_id, r.model, m) in finished for r in rows for m in metrics)


def _chunks(rows: Sequence[Datum], size: int) -> Iterator[Sequence[Datum]]:
    for start in range(0, len(rows), size):
        yield rows[start:start + size]


def _run_lexical(store: Store, run_id: int, rows: list[Datum], metrics: Mapping[str, Mapping[str, Any]],
                 progress: ProgressCallback | None, cancel: threading.Event | None, workers: int | None) -> None:
    outputs = {m: get_metric(m).outputs(p) for m, p in metrics.items()}
    all_cells: dict[str, list[dict[str, Cell]]] = {m: [] for m in metrics}
    done = failed = 0
    for batch, scored, advances in _lexical_batches(rows, metrics, workers):
        records = []
        for metric, cells in scored.items():
            all_cells[metric].extend(cells)
            records.extend(cell_records(batch, metric, outputs[metric], cells))
        store.write_cells(run_id, records)
        done += len(batch) if advances else 0
        failed += sum(1 for r in records if r[4] is None)
        if progress:
            progress(Progress("lexical", len(rows), done, failed))
        if cancel is not None and cancel.is_set():
            return
    _write_corpus(store, run_id, rows, metrics, all_cells)


def _lexical_batches(rows: list[Datum], metrics: Mapping[str, Mapping[str, Any]], workers: int | None
                     ) -> Iterator[tuple[Sequence[Datum], dict[str, list[dict[str, Cell]]], bool]]:
    """(rows, cells by metric, whether the batch advances progress). Metrics whose rows depend on each
    other (pass@k grouped by problem) are scored over all rows at once, never split across chunks."""
    whole = {m: p for m, p in metrics.items() if get_metric(m).whole_dataset(p)}
    chunked = {m: p for m, p in metrics.items() if m not in whole}
    if whole:
        yield rows, score_chunk(rows, whole), not chunked
    if chunked:
        for batch, scored in _scored_chunks(rows, chunked, workers):
            yield batch, scored, True


def _scored_chunks(rows: list[Datum], metrics: Mapping[str, Mapping[str, Any]],
                   workers: int | None) -> Iterator[tuple[Sequence[Datum], dict[str, list[dict[str, Cell]]]]]:
    pool_size = (workers or os.cpu_count() or 1) if len(rows) >= POOL_THRESHOLD else 1
    chunks = list(_chunks(rows, CHUNK_SIZE))
    yield from zip(chunks, in_order(chunks, score_chunk, (metrics,), pool_size), strict=True)  # runs its cleanup


def _write_corpus(store: Store, run_id: int, rows: list[Datum], metrics: Mapping[str, Mapping[str, Any]],
                  all_cells: Mapping[str, list[dict[str, Cell]]]) -> None:
    aggregates = []
    models = list(dict.fromkeys(r.model for r in rows))
    for metric, params in metrics.items():
        spec = get_metric(metric)
        if spec.corpus is None:
            continue
        for model in models:
            picked = [(r, c) for r, c in zip(rows, all_cells[metric]) if r.model == model]
            values = spec.corpus([r for r, _ in picked], [c for _, c in picked], params)
            aggregates.extend((model, score, value, {"metric": metric}) for score, value in values.items())
    store.write_aggregates(run_id, aggregates)
