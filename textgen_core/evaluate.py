"""Run metrics over a stored dataset and record every cell in the store.

One entry point for the CLI, the dashboard and the tests: :func:`evaluate`
starts a run, :func:`resume` finishes an interrupted one. Lexical metrics run
in chunks (across processes for large datasets); judge metrics go through
:mod:`textgen_core.judge.engine`. A cell is always written, scored or with the
reason it is not: nothing is silently dropped or averaged in as 0.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from .errors import ParameterError

if TYPE_CHECKING:  # the package imports this module at once: what it needs loads when a run starts
    from .progress import ProgressCallback
    from .store import Store


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
    from .registry import get_metric, resolve_params
    from .runs.loop import score_stored
    from .runs.plan import dataset_fields, plan_run

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
    score_stored(store, run_id, rows, metrics, resolved, judge, progress, cancel, workers, jury=jury)
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
    from .registry import get_metric
    from .run_rules import check_same_judge
    from .runs.loop import score_stored

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
    score_stored(store, run_id, rows, metrics, resolved, judge, progress, cancel, workers,
             already=run.get("duration_s") or 0.0, jury=jury)
    return run_id



def _kind_of_older_run(store: Store, run_id: int) -> str:
    """The kind of a run recorded before runs kept theirs: told by its chunk or block record."""
    from .streaming.record import stream_record

    if stream_record(store, run_id) is not None:
        return "streamed"
    return "ray" if store.block_run(run_id) is not None else "stored"


