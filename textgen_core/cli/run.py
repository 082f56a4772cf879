"""`textgen-eval run` and `resume`: load, score, store, summarize."""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

from ..catalog import save_or_reuse
from ..errors import InputError, ParameterError, StoreBusy, StoreError
from ..evaluate import evaluate, resume
from ..export import write_table
from ..formatting import duration_text
from ..registry import all_metrics, get_metric
from .metrics import add_judge_metric_argument, define_judge_metrics
from ..model import Dataset
from ..store import Store
from ..summary import wide_scores
from .classification import print_reports
from .main import add_db_argument, open_store
from .progress_bar import ProgressBar
from .labels import calibrate_spec, print_run_calibration
from .tables import UNSCORED_GATE_FAILED, print_summary, unscored_gate


def register(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help="score a data file (or a stored dataset) and store the run")
    run.add_argument("data", help="CSV, JSONL or Parquet file; 'sample' for the bundled sample; or a stored dataset name")
    run.add_argument("--metrics", required=True, help=f"comma-separated: {', '.join(all_metrics())}")
    run.add_argument("--param", action="append", default=[], metavar="METRIC.NAME=VALUE",
                     help="metric parameter, e.g. rouge.use_stemmer=true or bleu.weights=0.5,0.5")
    run.add_argument("--map", action="append", default=[], metavar="FIELD=COLUMN",
                     help="map a field (id, model, query, prediction, references, contexts) to a column; "
                          "several columns separated by commas")
    run.add_argument("--list-format", choices=["auto", "json", "delimiter", "single"], default=None,
                     help="how one references/contexts cell holds several items")
    run.add_argument("--delimiter", default=None, help="item delimiter for --list-format delimiter")
    run.add_argument("--null-references", choices=["keep", "missing"], default=None,
                     help="a reference that reads NaN, None or null: keep it as text (default, with a warning "
                          "naming the rows) or treat it as missing")
    run.add_argument("--wide", action="append", default=[], metavar="MODEL=COLUMN",
                     help="wide format: one prediction column per model")
    run.add_argument("--name", help="name to store the dataset under (default: the file name)")
    run.add_argument("--models", help="comma-separated models to score (default: all)")
    run.add_argument("--out", help="write one row per (datum, model) with one column per score (.csv/.jsonl/.parquet)")
    run.add_argument("--fail-if-unscored-above", type=float, default=None, metavar="FRACTION",
                     help=f"exit {UNSCORED_GATE_FAILED} when a model lacks a score (unscored or missing) on more than "
                          "this fraction of the datums of any score; for CI")
    run.add_argument("--calibrate", action="append", default=[], metavar="SCORE=COLUMN", type=calibrate_spec,
                     help="also report SCORE's bias-corrected mean (PPI++) from the dataset's human COLUMN, beside "
                          "the judge-only mean (repeatable)")
    run.add_argument("--dry-run", action="store_true",
                     help="print the judge call estimate (and its upper bound) and stop; against a local endpoint "
                          "one real call is timed for a time estimate")
    run.add_argument("--no-probe", action="store_true", help="with --dry-run: make no call at all, not even the "
                                                             "timing probe of a local endpoint")
    run.add_argument("--workers", type=int, default=None, help="processes for lexical metrics (default: all cores)")
    run.add_argument("--engine", choices=["local", "ray"], default="local",
                     help="local: this machine, reading big CSV/TSV/Parquet files in chunks; ray: a Ray cluster "
                          "reads and scores the file in blocks (pip install 'textgen-eval[ray]')")
    run.add_argument("--ray-address", default=None, help="Ray cluster to join (default: start a local one)")
    _add_judge_arguments(run)
    add_judge_metric_argument(run)
    add_db_argument(run)
    run.set_defaults(handler=_run)

    again = sub.add_parser("resume", help="finish an interrupted run; finished cells are kept")
    again.add_argument("run_id", type=int)
    _add_judge_arguments(again)
    add_judge_metric_argument(again)
    add_db_argument(again)
    again.set_defaults(handler=_resume)


def _add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    try:
        from .judge_args import add_judge_arguments
    except ImportError:
        return
    add_judge_arguments(parser)


def jury_from_args(args: argparse.Namespace, judge: Any | None) -> Any | None:
    from .judge_args import jury_from_args as read

    return read(args, judge)


def _judge_settings(args: argparse.Namespace) -> Any | None:
    try:
        from .judge_args import judge_settings_from_args
    except ImportError:
        return None
    return judge_settings_from_args(args)


def parse_params(items: list[str]) -> dict[str, dict[str, str]]:
    """['rouge.use_stemmer=true'] -> {'rouge': {'use_stemmer': 'true'}}"""
    params: dict[str, dict[str, str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        metric, dot, name = key.partition(".")
        if not sep or not dot or not metric or not name:
            raise ParameterError(f"--param {item!r}: expected METRIC.NAME=VALUE")
        params.setdefault(get_metric(metric).name, {})[name.strip()] = value
    return params


def _mapping(args: argparse.Namespace, columns: list[str]) -> Any:
    from ..datasets import ColumnMapping, guess_mapping

    guessed = guess_mapping(columns).to_dict()
    for item in args.map:
        field, sep, column = item.partition("=")
        if not sep or field not in {"id", "model", "query", "prediction", "references", "contexts"}:
            raise ParameterError(f"--map {item!r}: expected FIELD=COLUMN with FIELD one of id, model, query, "
                                 "prediction, references, contexts")
        parts = [c.strip() for c in column.split(",") if c.strip()]
        guessed[field] = tuple(parts) if field in {"references", "contexts"} else (parts[0] if parts else None)
    if args.wide:
        guessed["format"] = "wide"
        guessed["wide_predictions"] = dict(item.split("=", 1) for item in args.wide if "=" in item)
    if args.list_format:
        guessed["list_format"] = args.list_format
    if args.delimiter is not None:
        guessed["delimiter"] = args.delimiter
    if getattr(args, "null_references", None):
        guessed["null_references"] = args.null_references
    return ColumnMapping.from_dict(guessed)


def _stored_dataset(store: Store, name: str) -> int:
    """The stored dataset called ``name``; when there is none, say the file is not found either."""
    try:
        return store.dataset_id(name)
    except StoreError:
        raise InputError(f"file not found: {name} (and no stored dataset has that name; "
                         "`textgen-eval datasets` lists them, 'sample' is the bundled sample)") from None


def _load_file(args: argparse.Namespace, required: set[str]) -> Dataset | None:
    """The file (or the bundled sample) read and checked as the Upload page does; None for a stored name."""
    from ..datasets import load_dataset, load_sample

    path = Path(args.data)
    if args.data == "sample" and not path.is_file():
        return load_sample()
    if not path.exists():
        return None
    dataset = load_dataset(path, lambda columns: _mapping(args, columns), name=args.name or path.stem,
                           file_name=path.name, required=required)
    dataset.source = str(path)
    for warning in dataset.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return dataset


def _check_judge(metrics: list[str], judge: Any, params: dict | None = None) -> None:
    judged = [m for m in metrics if not get_metric(m).is_local((params or {}).get(m))]
    if judged and judge is None:
        raise ParameterError(f"{', '.join(judged)} need a judge: give --judge-base-url and --judge-model "
                             "(or TEXTGEN_EVAL_JUDGE_* variables); nothing was stored")


def _check_before_storing(dataset: Dataset, metrics: list[str], params: dict, models: list[str] | None,
                          judge: Any) -> None:
    """Every reason the run would score nothing, raised before the dataset is stored."""
    from ..runs.plan import dataset_fields, plan_run

    unknown = [m for m in models or () if m not in dataset.models]
    if unknown:
        raise ParameterError(f"--models: {', '.join(unknown)} not in the dataset (its models: "
                             f"{', '.join(dataset.models)}); nothing was stored")
    plan_run(metrics, params, dataset_fields(dataset), judge, note="; nothing was stored")


def _run(args: argparse.Namespace) -> int:
    """Score a file or stored dataset; a refused command leaves no database file it created behind."""
    created = args.db != ":memory:" and not Path(args.db).exists()
    try:
        return _score(args)
    except BaseException:
        if created:
            _remove_if_empty(args.db)
        raise


def _remove_if_empty(db: str) -> None:
    """Delete a database file this command created when it holds no dataset (nothing was kept).

    Only while this process holds the file read-write, which no other program can then hold: a file another
    program has open (the dashboard, a reader) is never unlinked under it.
    """
    path = Path(db)
    if not path.exists():
        return
    try:
        Store(path, timeout=0).remove_if_empty()
    except StoreError:
        return  # busy or unreadable: leave it, and let the original error be the one reported


def _score(args: argparse.Namespace) -> int:
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    define_judge_metrics(args, metrics)
    specs = [get_metric(m) for m in metrics]
    params = parse_params(args.param)
    judge = _judge_settings(args)
    jury = jury_from_args(args, judge)  # --samples, --jury-model, --jury-panel (None: one judge, asked once)
    required = {field for spec in specs for field in spec.needs}
    models = [m.strip() for m in args.models.split(",")] if args.models else None
    _check_judge(metrics, judge, params)
    if jury is not None and args.engine == "ray":
        raise ParameterError("--samples and judge panels run on the local engine only: drop --engine ray")
    store = open_store(args)  # nothing is opened or created until the store is first used
    if args.engine == "ray" or (not args.dry_run and Path(args.data).is_file()):
        run_id = _stream(args, store, metrics, params, judge, models)
        if run_id is not None:
            return _report(store, run_id, args.out, args.fail_if_unscored_above, args.calibrate)
    dataset, dataset_id = _load_file(args, required), None
    if dataset is None:  # a stored dataset's name: looked up read-only, so a typo creates no database
        reader = open_store(args, read_only=True)
        dataset_id = _stored_dataset(reader, args.data)
        dataset = reader.load_dataset(dataset_id)
    _check_before_storing(dataset, metrics, params, models, judge)
    if args.dry_run:
        return _dry_run(args, dataset, metrics, params, judge, models, jury)
    if dataset_id is None:
        dataset_id, name, reused = save_or_reuse(store, dataset, args.name or dataset.name)
        print(f"{'using stored' if reused else 'stored'} dataset {name!r} ({len(dataset.rows)} rows)")
    before = _newest_run(store)
    try:
        with ProgressBar(sys.stderr) as bar:
            run_id = evaluate(store, dataset_id, metrics, params, models=models, judge=judge, jury=jury,
                              progress=bar.update, cancel=threading.Event(), workers=args.workers)
    except KeyboardInterrupt:
        started = _newest_run(store)
        if started is not None and started != before:  # name the run to resume, not a placeholder
            print(f"run {started} is kept as interrupted: 'textgen-eval resume {started}' finishes it",
                  file=sys.stderr)
        raise
    return _report(store, run_id, args.out, args.fail_if_unscored_above, args.calibrate)


def _newest_run(store: Store) -> int | None:
    """The id of the newest run in the store (None when there is none or the store cannot say now)."""
    try:
        runs = store.list_runs()
    except Exception:  # noqa: BLE001 - only for a message on the way out
        return None
    return int(runs["run_id"].max()) if len(runs) else None


def _stream(args: argparse.Namespace, store: Store, metrics: list[str], params: dict, judge: Any,
            models: list[str] | None) -> int | None:
    """Score a file chunk by chunk (local) or block by block (Ray); None when it must be read whole."""
    from ..streaming import NotStreamable, stream_file, streamable_metrics

    if args.engine == "ray":
        from ..engines.ray_engine import run_ray

        with ProgressBar(sys.stderr) as bar:
            return run_ray(store, args.data, metrics, params, mapping=lambda columns: _mapping(args, columns),
                           name=args.name, models=models, judge=judge, address=args.ray_address,
                           progress=bar.update)
    if not streamable_metrics(metrics, params):
        return None
    started: list[int] = []
    try:
        with ProgressBar(sys.stderr) as bar:
            streamed = stream_file(store, args.data, metrics, params, mapping=lambda columns: _mapping(args, columns),
                                   name=args.name, file_name=Path(args.data).name, models=models,
                                   progress=bar.update, workers=args.workers, on_start=started.append)
    except NotStreamable:
        return None
    except KeyboardInterrupt:
        if started:
            print(f"run {started[0]} is kept as interrupted: 'textgen-eval resume {started[0]}' finishes it "
                  "(leave the file as it is until then)", file=sys.stderr)
        raise
    print(f"{'using stored' if streamed.reused else 'stored'} dataset {streamed.dataset_name!r} ({streamed.rows} rows)")
    for warning in streamed.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return streamed.run_id


def _resume(args: argparse.Namespace) -> int:
    define_judge_metrics(args, [])  # an edited --judge-metric file is refused by the fingerprint check
    store = open_store(args)
    from .judge_args import jury_from_args, judge_settings_for_resume

    judge = judge_settings_for_resume(args, store.get_run(args.run_id).get("judge"))  # the run's endpoint and model
    jury = jury_from_args(args, judge)  # None: the run's own panel and samples, as it stored them
    with ProgressBar(sys.stderr) as bar:
        run_id = resume(store, args.run_id, judge=judge, progress=bar.update, jury=jury)
    return _report(store, run_id, None)


def _report(store: Store, run_id: int, out: str | None, unscored_above: float | None = None,
            calibrate: list[str] | None = None) -> int:
    try:
        run = store.get_run(run_id)
    except StoreBusy as exc:  # the run ended; only its summary cannot be read now
        print(f"run {run_id} ended, but its summary cannot be read now ({exc}); 'textgen-eval runs' shows it later",
              file=sys.stderr)
        return 2
    print(f"run {run_id} on dataset {run['dataset']!r}: {run['status']} in {duration_text(run['duration_s'])}")
    if run["status"] == "interrupted" and run["error"]:  # e.g. a spending cap: say how to go on
        print(f"stopped: {run['error']}; finished cells are kept, 'textgen-eval resume {run_id}' finishes the run "
              "(with a higher cap, or none)")
    if run["judge_calls"]:
        cost = f", cost {run['cost']:.4f}" if run["cost"] is not None else ""
        print(f"judge: {run['judge_calls']} calls, {run['prompt_tokens']} prompt + "
              f"{run['completion_tokens']} completion tokens{cost}")
    print_summary(store, run_id, _shown_models(store, run_id, run))
    print_reports(store, run_id)
    if calibrate:
        print_run_calibration(store, run_id, calibrate)
    if out:
        path = write_table(wide_scores(store, run_id), out)
        print(f"wrote {path}")
    if run["status"] != "finished":
        return 1
    counts = store.score_counts(run_id)  # counted in SQL: a million-row run's cells are not read back
    cells = int(counts["n_scored"].sum() + counts["n_unscored"].sum())
    if cells and not counts["n_scored"].sum():  # every cell unscored: the run produced nothing (#19.5)
        print(f"error: run {run_id} scored nothing: all {cells} cells are unscored (reasons above)",
              file=sys.stderr)
        return 1
    return unscored_gate(store, run_id, unscored_above) if unscored_above is not None else 0


def _shown_models(store: Store, run_id: int, run: dict) -> list[str] | None:
    """None (all) up to MODELS_SHOWN models; else the best MODELS_SHOWN by the mean of the run's first score
    (:func:`~textgen_core.summary.ranked_models`), announced with how to see the rest."""
    from ..judge.metrics.criteria import restore_run
    from ..summary import MODELS_SHOWN, ranked_models

    models = run["models"]
    if len(models) <= MODELS_SHOWN:
        return None
    restore_run(run)  # a custom judge score ranks in its own direction
    ranked, first = ranked_models(store.scored_counts(run_id), run)
    shown = ranked[:MODELS_SHOWN]
    print(f"{len(models)} models: the summary shows the {len(shown)} best by mean {first}; 'textgen-eval export "
          f"{run_id} --out FILE' writes every model's scores, 'textgen-eval compare {run_id}' compares them")
    return shown


def _probe_time(judge: Any, est: Any) -> None:
    """For a local endpoint, time one real call and say how long the run may take (there time is the cost)."""
    from ..llm.endpoint import is_local
    from ..judge.engine import probe

    if judge.batch or not is_local(judge) or est.first is None:  # a batch takes hours whatever one call takes
        return
    seconds, tokens, failure = probe(judge, est.first)
    if failure is not None:
        print(f"time: the probe call failed after {seconds:.1f} s ({failure}); no time estimate")
        return
    one_slot = est.calls * seconds
    print(f"time: one probe call took {seconds:.1f} s ({tokens} completion tokens): about "
          f"{_duration(one_slot)} for {est.calls} calls on a one-slot server, {_duration(one_slot / judge.concurrency)} "
          f"if it serves --concurrency {judge.concurrency} at once; a reply of --max-tokens {judge.max_tokens} "
          "takes longer")


def _duration(seconds: float) -> str:
    return duration_text(seconds) if seconds >= 1 else f"{seconds:.1f} s"


def _dry_run(args: argparse.Namespace, dataset: Dataset, metrics: list[str], params: dict, judge: Any,
             models: list[str] | None, jury: Any | None = None) -> int:
    """Print what the run would do; nothing is written (the judge cache is read when the file exists)."""
    from ..registry import resolve_params

    judged = [m for m in metrics if not get_metric(m).is_local(params.get(m))]
    rows = [r for r in dataset.rows if not models or r.model in models]
    print(f"{len(rows)} rows, {len(metrics)} metrics ({len(judged)} judged)")
    if not judged:
        print("no judge calls: every chosen metric is computed locally")
        return 0
    if judge is None:
        raise ParameterError("judge metrics need --judge-base-url and --judge-model (or TEXTGEN_EVAL_JUDGE_* variables)")
    from ..judge.engine import estimate

    resolved = resolve_params(metrics, params)
    cache = open_store(args, read_only=True) if Path(args.db).is_file() else Store(":memory:")
    if jury is None:
        est = estimate(rows, {m: resolved[m] for m in judged}, judge, cache)
    else:  # every member x sample is asked: the estimate counts every vote
        from ..runs.jury import estimate_jury

        est = estimate_jury(rows, {m: resolved[m] for m in judged}, jury, cache)
        print(f"panel: {', '.join(jury.names)} x {jury.samples} sample(s); every vote is a judge request")
    if est.dependent:
        print(f"judge calls: {est.calls - est.dependent} to {est.calls} to make, {est.cached} cached "
              f"({est.dependent} are verdicts on extracted items, skipped when an extraction finds none)")
    else:
        print(f"judge calls: {est.calls} to make, {est.cached} cached")
    print(f"estimated tokens: {est.prompt_tokens} prompt + {est.completion_tokens} completion")
    if est.calls:  # a rambling or looping judge writes up to max_tokens every time
        bound = est.bound_cost(judge)
        print(f"at most: {est.completion_bound} completion tokens ({est.calls} calls x --max-tokens "
              f"{judge.max_tokens}){'' if bound is None else f', cost {bound:.6f}'}")
        if not args.no_probe:
            _probe_time(judge, est)
    if est.cost is None:
        print("estimated cost: unknown (set --price-prompt/--price-completion)")
    elif jury is not None:
        print(f"estimated cost: {est.cost:.6f} (each member at its own prices)")
    else:  # direct and Batch API prices side by side
        direct = judge.price(est.prompt_tokens, est.completion_tokens, batch=False)
        batch = judge.price(est.prompt_tokens, est.completion_tokens, batch=True)
        print(f"estimated cost: direct {direct:.6f}, batch {batch:.6f} (Batch API at {judge.batch_discount:g} of the "
              f"price{'; --batch is on' if judge.batch else '; add --batch to use it'})")
    if judge.batch and est.calls:
        rounds = 2 if est.dependent else 1  # verdicts on extracted items wait for the extraction batch
        print(f"batch mode: {rounds} batch round{'s' if rounds > 1 else ''} expected (one more for replies that "
              "must be asked again or requests that failed)")
    return 0
