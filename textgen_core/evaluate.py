"""Run metrics over a stored dataset and record every cell in the store.

One entry point for the CLI, the dashboard and the tests: :func:`evaluate`
starts a run, :func:`resume` finishes an interrupted one. Lexical metrics run
in chunks (across processes for large datasets); judge metrics go through
:mod:`textgen_core.judge.engine`. A cell is always written, scored or with the
reason it is not: nothing is silently dropped or averaged in as 0.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Iterator, Mapping, Sequence

from .errors import BudgetReached, ParameterError, StoreBusy, TextgenError
from .registry import get_metric, resolve_params
from .model import Cell, Datum
from .process_pool import in_order
from .progress import Progress, ProgressCallback
from .run_rules import cell_records, check_same_judge
from .runs.plan import dataset_fields, plan_run
from .runs.status import clock, end_run, kept_for_resume, stop_run
from .store import Store


#: Below this many rows, lexical scoring stays in-process (a pool costs more than it saves).
POOL_THRESHOLD = 4000
CHUNK_SIZE = 1000


def available_fields(store: Store, dataset_id: int) -> set[str]:
    """Normalized fields with at least one value, plus the dataset's metadata columns (one SQL query)."""
    return store.dataset_fields(dataset_id)



def evaluate(store: Store, dataset_id: int, metrics: Sequence[str],
             params: Mapping[str, Mapping[str, Any]] | None = None, *, models: Sequence[str] | None = None,
             judge: Any | None = None, progress: ProgressCallback | None = None,
             cancel: threading.Event | None = None, workers: int | None = None,
             on_start: Callable[[int], None] | None = None, engine: str = "local",
             ray_address: str | None = None, jury: Any | None = None) -> int:
    """Score ``metrics`` on a stored dataset; returns the run id. ``judge`` is a JudgeSettings or None.

    ``on_start`` hears the run id as soon as the run is registered, before any scoring. ``engine="ray"``
    scores on the Ray cluster at ``ray_address`` (default: a local one). ``jury``: a
    :class:`~textgen_core.runs.panel.Jury` (repeated judging, a panel); its lead is the judge.
    """
    judge, jury = _with_jury(judge, jury, engine)
    if not metrics:
        raise ParameterError("choose at least one metric")
    metrics = list(dict.fromkeys(get_metric(m).name for m in metrics))
    if engine not in ("local", "ray"):
        raise ParameterError(f"engine must be 'local' or 'ray', got {engine!r}")
    if engine == "ray":
        from .engines.ray_engine import check_ray_metrics

        check_ray_metrics(metrics, judge)
    resolved = resolve_params(metrics, params)
    dataset = store.load_dataset(dataset_id)
    chosen = list(models) if models else dataset.models
    unknown = sorted(set(chosen) - set(dataset.models))
    if unknown:
        raise ParameterError(f"models not in the dataset: {', '.join(unknown)}")
    run_id = plan_run(metrics, resolved, dataset_fields(dataset), judge, jury=jury).start(
        store, dataset_id, chosen, "ray" if engine == "ray" else "stored")
    if on_start is not None:
        on_start(run_id)
    if engine == "ray":
        from .engines.ray_engine import evaluate_stored

        evaluate_stored(store, dataset_id, run_id, resolved, models=chosen, judge=judge, address=ray_address,
                        progress=progress, cancel=cancel)
        return run_id
    wanted = set(chosen)  # built once: a set per row is quadratic in models (10,000 models: 19 s)
    rows = [r for r in dataset.rows if r.model in wanted]
    _execute(store, run_id, rows, metrics, resolved, judge, progress, cancel, workers, jury=jury)
    return run_id


def _with_jury(judge: Any | None, jury: Any | None, engine: str) -> tuple[Any | None, Any | None]:
    """(judge, jury): the jury's lead is the judge; a plain jury (one member, one sample) is no jury."""
    if jury is None:
        return judge, None
    if jury.plain:
        return jury.lead, None
    if engine != "local":
        raise ParameterError("--samples and judge panels run on the local engine only: drop --engine ray, or "
                             "run one judge once")
    return jury.lead, jury


def resume(store: Store, run_id: int, *, judge: Any | None = None, progress: ProgressCallback | None = None,
           cancel: threading.Event | None = None, workers: int | None = None, jury: Any | None = None) -> int:
    """Finish an interrupted run: finished cells are kept, the rest are computed. A run judged by a panel or
    several times is resumed with the panel it stored unless ``jury`` gives one (refused if it differs)."""
    run = store.get_run(run_id)
    stored_jury = (run.get("judge") or {}).get("jury")
    if jury is None and stored_jury and judge is not None:
        from .runs.panel import restore as restore_jury

        jury = restore_jury(stored_jury, judge)
    judge, jury = _with_jury(judge if jury is None else jury.lead, jury, "local")
    metrics, resolved = run["metrics"], run["params"]
    if run.get("judge"):  # custom judge metrics not given again are defined as the run stored them
        from .judge.metrics.criteria import restore

        restore((run["judge"].get("fingerprint") or {}).get("criteria"))
    if judge is None and any(not get_metric(m).is_local(resolved[m]) for m in metrics):
        raise ParameterError(f"run {run_id} has judge metrics: give the judge endpoint to resume it")
    check_same_judge(run_id, run.get("judge"), judge, metrics, jury)
    kind = run.get("kind") or _kind_of_older_run(store, run_id)
    if jury is not None and kind != "stored":
        raise ParameterError(f"run {run_id} is a {kind} run: --samples and judge panels run on stored datasets")
    if kind == "streamed":  # from a file in chunks: read again, stored chunks not scored
        from .streaming.run import resume_stream

        return resume_stream(store, run_id, progress=progress, cancel=cancel, workers=workers)
    if kind == "ray":  # scored by the Ray engine: Ray resumes it, skipping finished work
        from .engines.ray_engine import resume_ray

        return resume_ray(store, run_id, judge=judge, progress=progress, cancel=cancel)
    dataset = store.load_dataset(run["dataset_id"])
    wanted = set(run["models"])
    rows = [r for r in dataset.rows if r.model in wanted]
    store.claim_run(run_id)
    _execute(store, run_id, rows, metrics, resolved, judge, progress, cancel, workers,
             already=run.get("duration_s") or 0.0, jury=jury)
    return run_id



def _kind_of_older_run(store: Store, run_id: int) -> str:
    """The kind of a run recorded before runs kept theirs: told by its chunk or block record."""
    from .streaming.record import stream_record

    if stream_record(store, run_id) is not None:
        return "streamed"
    return "ray" if store.block_run(run_id) is not None else "stored"


def _execute(store: Store, run_id: int, rows: list[Datum], metrics: Sequence[str],
             resolved: Mapping[str, Mapping[str, Any]], judge: Any | None,
             progress: ProgressCallback | None, cancel: threading.Event | None, workers: int | None,
             *, already: float = 0.0, jury: Any | None = None) -> None:
    """Score what is not finished yet; the run's duration is ``already`` (earlier sessions) plus this one."""
    started = clock(already)
    lexical = {m: resolved[m] for m in metrics if get_metric(m).is_local(resolved[m])}
    judged = {m: resolved[m] for m in metrics if m not in lexical}
    try:
        written = store.finished_cells(run_id, with_unscored=True)  # lexical cells are final either way
        if lexical and not _all_finished(rows, lexical, written):
            _run_lexical(store, run_id, rows, lexical, progress, cancel, workers)
        if judged and not (cancel and cancel.is_set()):
            refused = _judge(store, run_id, rows, judged, judge, jury, progress, cancel)
            if refused:  # every later call would fail the same way: the run failed, its cells stay unscored
                raise TextgenError(f"the judge endpoint refused: {'; '.join(refused)}. The cells are kept as "
                                   "unscored; fix the judge settings and resume the run.")
    except StoreBusy as exc:  # another program held the file too long: what is stored is kept for a resume
        stop_run(store, run_id, started)
        raise kept_for_resume(exc, run_id) from None
    except KeyboardInterrupt:
        stop_run(store, run_id, started)
        raise
    except BudgetReached as exc:  # the spending cap stopped the run cleanly: what finished is kept
        end_run(store, run_id, "interrupted", started, error=str(exc))
        return
    except Exception as exc:  # recorded on the run, then reported to the caller
        end_run(store, run_id, "failed", started, error=str(exc))
        if isinstance(exc, TextgenError):
            raise
        raise TextgenError(f"run {run_id} failed: {type(exc).__name__}: {exc}") from exc
    status = "cancelled" if cancel is not None and cancel.is_set() else "finished"
    end_run(store, run_id, status, started)
    if progress:
        progress(Progress("done", len(rows), len(rows)))


def _judge(store: Store, run_id: int, rows: list[Datum], judged: Mapping[str, Mapping[str, Any]], judge: Any,
           jury: Any | None, progress: ProgressCallback | None, cancel: threading.Event | None) -> list[str]:
    """The judge cells not finished yet: one judge once (the engine), or a panel / samples (runs/jury.py)."""
    if jury is not None:
        from .runs.jury import run_jury

        return run_jury(store, run_id, rows, judged, jury, progress=progress, cancel=cancel)
    from .judge.engine import run_judge_metrics

    return run_judge_metrics(store, run_id, rows, judged, judge, progress=progress, cancel=cancel,
                             skip=store.finished_cells(run_id))


def _all_finished(rows: Sequence[Datum], metrics: Mapping[str, Any], finished: set[tuple[str, str, str]]) -> bool:
    return all((r.datum_id, r.model, m) in finished for r in rows for m in metrics)


def _chunks(rows: Sequence[Datum], size: int) -> Iterator[Sequence[Datum]]:
    for start in range(0, len(rows), size):
        yield rows[start:start + size]


def _score_chunk(rows: Sequence[Datum], metrics: Mapping[str, Mapping[str, Any]]) -> dict[str, list[dict[str, Cell]]]:
    from .metrics.local import score_local

    return score_local(rows, metrics)



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
        yield rows, _score_chunk(rows, whole), not chunked
    if chunked:
        for batch, scored in _scored_chunks(rows, chunked, workers):
            yield batch, scored, True


def _scored_chunks(rows: list[Datum], metrics: Mapping[str, Mapping[str, Any]],
                   workers: int | None) -> Iterator[tuple[Sequence[Datum], dict[str, list[dict[str, Cell]]]]]:
    pool_size = (workers or os.cpu_count() or 1) if len(rows) >= POOL_THRESHOLD else 1
    chunks = list(_chunks(rows, CHUNK_SIZE))
    yield from zip(chunks, in_order(chunks, _score_chunk, (metrics,), pool_size), strict=True)  # runs its cleanup


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
