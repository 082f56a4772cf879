"""`textgen-eval run`: carry out a :class:`~.run_plan.RunCommand` (read the data, store it, score it).

The engine is one choice, made here at the top: a file the local engine can read
in chunks is streamed (unless ``--calibrate`` reads a human column: then it is read whole, and the column is
checked before anything is stored), ``--engine ray`` hands the file to Ray, anything else (a
JSON array, judge metrics, pass@k, a stored dataset's name, the sample) is read
whole and scored by :func:`textgen_core.evaluate.evaluate`. All three paths end in
the run loop of :mod:`textgen_core.runs`; this module only chooses and reports
what it stored. Printing the result is :mod:`.run_print`'s.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Callable

from ..errors import InputError, ParameterError, StoreError
from ..model import Dataset
from ..store import Store
from .progress_bar import ProgressBar
from .run_plan import RunCommand


def execute(plan: RunCommand, open_store: Callable[..., Store], db: str,
            bar: ProgressBar | None = None) -> tuple[Store, int | None]:
    """(the store of ``db``, the run id); the run id is None for ``--dry-run`` (nothing stored, the estimate
    printed). ``open_store(read_only=...)`` opens ``db``; ``bar`` draws the progress (and keeps its last
    judge snapshot for the summary)."""
    bar = bar or ProgressBar(sys.stderr)
    store = open_store()  # nothing is opened or created until the store is first used
    if plan.engine == "ray" or (not plan.dry_run and not plan.calibrate and Path(plan.data).is_file()):
        run_id = _stream(plan, store, bar)
        if run_id is not None:
            return store, run_id
    dataset, dataset_id = _load_file(plan), None
    if dataset is None:  # a stored dataset's name: looked up read-only, so a typo creates no database
        reader = open_store(read_only=True)
        dataset_id = _stored_dataset(reader, plan.data)
        dataset = reader.load_dataset(dataset_id)
    _check_before_storing(dataset, plan)
    if plan.dry_run:
        from .run_print import print_dry_run

        print_dry_run(plan, dataset, lambda: open_store(read_only=True) if Path(db).is_file() else Store(":memory:"))
        return store, None
    if dataset_id is None:
        from ..catalog import store_version

        stored = store_version(store, dataset, plan.name or dataset.name)
        dataset_id = stored.dataset_id
        print(stored.describe(len(dataset.rows)))
    return store, _evaluate(plan, store, dataset_id, bar)


def _evaluate(plan: RunCommand, store: Store, dataset_id: int, bar: ProgressBar) -> int:
    from ..evaluate import evaluate

    started: list[int] = []
    try:
        with bar:
            return evaluate(store, dataset_id, plan.metrics, plan.params, models=plan.models, judge=plan.judge,
                            jury=plan.jury, progress=bar.update, cancel=threading.Event(), workers=plan.workers,
                            on_start=started.append)
    except KeyboardInterrupt:
        say_kept(started)
        raise


def say_kept(started: list[int], extra: str = "") -> None:
    """On a stop: name the run to resume (``started`` holds its id once it was registered)."""
    if started:
        print(f"run {started[0]} is kept as interrupted: 'textgen-eval resume {started[0]}' finishes it{extra}",
              file=sys.stderr)


def _stored_dataset(store: Store, name: str) -> int:
    """The stored dataset called ``name``; when there is none, say the file is not found either."""
    try:
        return store.dataset_id(name)
    except StoreError:
        raise InputError(f"file not found: {name} (and no stored dataset has that name; "
                         "`textgen-eval datasets` lists them, 'sample' is the bundled sample)") from None


def _load_file(plan: RunCommand) -> Dataset | None:
    """The file (or the bundled sample) read and checked as the Upload page does; None for a stored name."""
    from ..datasets import load_dataset, load_sample

    path = Path(plan.data)
    if plan.data == "sample" and not path.is_file():
        return load_sample()
    if not path.exists():
        return None
    dataset = load_dataset(path, plan.columns.mapping, name=plan.name or path.stem, file_name=path.name,
                           required=plan.required)
    dataset.source = str(path)
    for warning in dataset.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return dataset


def _check_before_storing(dataset: Dataset, plan: RunCommand) -> None:
    """Every reason the run would score nothing (or could not calibrate), raised before the dataset is stored
    and before any scoring or judge call."""
    from ..registry import get_metric
    from ..runs.plan import dataset_fields, plan_run

    unknown = [m for m in plan.models or () if m not in dataset.models]
    if unknown:
        raise ParameterError(f"--models: {', '.join(unknown)} not in the dataset (its models: "
                             f"{', '.join(dataset.models)}); nothing was stored")
    run = plan_run(plan.metrics, plan.params, dataset_fields(dataset), plan.judge, note="; nothing was stored")
    if plan.calibrate:
        from ..compare.labels import check_human_column

        scores = [s for m in run.metrics for s in get_metric(m).outputs(run.params[m])]
        for spec in plan.calibrate:
            score, _, column = (part.strip() for part in spec.partition("="))
            try:
                check_human_column(dataset, score, column, scores)
            except ParameterError as exc:
                raise ParameterError(f"--calibrate {spec}: {exc}; nothing was stored or scored") from None


def _stream(plan: RunCommand, store: Store, bar: ProgressBar) -> int | None:
    """Score a file chunk by chunk (local) or block by block (Ray); None when it must be read whole."""
    from ..streaming import NotStreamable, stream_file, streamable_metrics

    if plan.engine == "ray":
        from ..engines.ray_engine import run_ray

        with bar:
            return run_ray(store, plan.data, plan.metrics, plan.params, mapping=plan.columns.mapping,
                           name=plan.name, models=plan.models, judge=plan.judge, address=plan.ray_address,
                           progress=bar.update)
    if not streamable_metrics(plan.metrics, plan.params):
        return None
    started: list[int] = []
    try:
        with bar:
            streamed = stream_file(store, plan.data, plan.metrics, plan.params, mapping=plan.columns.mapping,
                                   name=plan.name, file_name=Path(plan.data).name, models=plan.models,
                                   progress=bar.update, workers=plan.workers, on_start=started.append)
    except NotStreamable:
        return None
    except KeyboardInterrupt:
        say_kept(started, " (leave the file as it is until then)")
        raise
    if streamed.version is not None:
        print(streamed.version.describe(streamed.rows))
    for warning in streamed.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return streamed.run_id
