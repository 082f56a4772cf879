"""Add metrics to a run that finished: the same dataset, the same judge, the same run loop.

The run keeps its dataset (and so its version and its rows), its models and its
cells; the added metrics are checked against the dataset's fields, recorded on
the run with their signatures, and scored by :func:`.loop.score_stored`, which
skips every cell already stored. A judge metric is asked of the run's judge: a
judge that would rule differently from the one that scored the run's judge
metrics is refused, naming what differs. The judge cache makes a question asked
before (in this run or another) free. An extend that stops is finished by
``resume`` (the added metrics are part of the run from the start).
"""

from __future__ import annotations

import threading
from typing import Any, Mapping, Sequence

from ..errors import ParameterError
from ..progress import ProgressCallback
from ..registry import get_metric
from ..run_rules import judge_fingerprint, judge_record, signature
from ..store import Store
from .loop import score_stored
from .plan import dataset_fields, plan_run


def extend(store: Store, run_id: int, metrics: Sequence[str], params: Mapping[str, Mapping[str, Any]] | None = None,
           *, judge: Any | None = None, progress: ProgressCallback | None = None,
           cancel: threading.Event | None = None, workers: int | None = None) -> int:
    """Score ``metrics`` (names, with ``params``) on the finished run ``run_id`` and add them to it; returns
    the run id. ``judge`` (a JudgeSettings) is needed for judge metrics and must rule as the run's judge did.

    Refused, with nothing changed, for an unknown run or metric, a metric the run already has, a run that is
    not finished, a metric the dataset cannot feed, or a judge that differs from the run's.
    """
    run = store.runs.get_run(run_id)  # StoreError: no run with this id
    stored_judge = run.get("judge") or {}
    if stored_judge:  # custom judge metrics of the run are defined as it stored them
        from ..judge.metrics.criteria import restore

        restore((stored_judge.get("fingerprint") or {}).get("criteria"))
    names = list(dict.fromkeys(get_metric(m).name for m in metrics))  # ParameterError names the known metrics
    if not names:
        raise ParameterError("choose at least one metric to add")
    present = [m for m in names if m in run["metrics"]]
    if present:
        hint = "" if run["status"] == "finished" else f"; run {run_id} is {run['status']}: " \
            f"'textgen-eval resume {run_id}' finishes it"
        raise ParameterError(f"run {run_id} already has {', '.join(present)}; nothing was changed{hint}")
    if run["status"] != "finished":
        raise ParameterError(f"run {run_id} is {run['status']}, not finished: resume it first "
                             f"('textgen-eval resume {run_id}'); nothing was changed")
    dataset = store.datasets.load_dataset(run["dataset_id"])
    plan = plan_run(names, params, dataset_fields(dataset), judge, note="; nothing was changed")
    judged = [m for m in plan.metrics if not get_metric(m).is_local(plan.params[m])]
    old_judged = [m for m in run["metrics"] if not get_metric(m).is_local(run["params"].get(m))]
    if judged:
        _check_judge(run_id, stored_judge, judge, old_judged)
    all_metrics = [*run["metrics"], *plan.metrics]
    all_params = {**run["params"], **plan.params}
    signatures = {**run["signatures"], **{m: signature(get_metric(m), plan.params[m], judge) for m in plan.metrics}}
    record = judge_record(judge, [*old_judged, *judged]) if judged else (stored_judge or None)
    store.runs.extend_run(run_id, all_metrics, all_params, signatures, record)
    wanted = set(run["models"] or dataset.models)
    rows = [r for r in dataset.rows if r.model in wanted]
    # only the added metrics: the run's own cells stay as they are (a resume of a stopped extend scores all)
    score_stored(store, run_id, rows, plan.metrics, plan.params, judge, progress, cancel, workers,
                 already=run.get("duration_s") or 0.0)
    return run_id


def _check_judge(run_id: int, stored: Mapping[str, Any], judge: Any | None, old_judged: Sequence[str]) -> None:
    """Refuse a judge that would rule differently from the one that scored the run's judge metrics."""
    if judge is None:
        raise ParameterError("judge metrics need a judge endpoint: give the judge's base URL and model; "
                             "nothing was changed")
    if stored.get("jury"):
        raise ParameterError(f"run {run_id} was judged by a panel or several samples: extend adds metrics asked "
                             "of one judge once; start a new run for this one. Nothing was changed")
    before = stored.get("fingerprint")
    if not before or not old_judged:
        return
    from ..judge.metrics import fingerprint_changes

    changes = fingerprint_changes(before, judge_fingerprint(judge, old_judged))
    if changes:
        raise ParameterError(f"run {run_id} was judged by another judge; adding metrics with this one would mix two "
                             f"judges in one run. What differs: {'; '.join(changes)}. Give the run's judge "
                             "settings (the key, timeout, concurrency and retries may change), or start a new run. "
                             "Nothing was changed")
