"""`textgen-eval run` and `resume`: load, score, store, summarize."""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

from ..catalog import save_or_reuse
from ..errors import InputError, ParameterError, StoreError
from ..evaluate import evaluate, resume
from ..export import write_table
from ..formatting import duration_text
from ..metrics.registry import all_metrics, get_metric
from ..store import Store
from ..summary import wide_scores
from .main import add_db_argument
from .progress_bar import ProgressBar
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
    run.add_argument("--wide", action="append", default=[], metavar="MODEL=COLUMN",
                     help="wide format: one prediction column per model")
    run.add_argument("--name", help="name to store the dataset under (default: the file name)")
    run.add_argument("--models", help="comma-separated models to score (default: all)")
    run.add_argument("--out", help="write one row per (datum, model) with one column per score (.csv/.jsonl/.parquet)")
    run.add_argument("--fail-if-unscored-above", type=float, default=None, metavar="FRACTION",
                     help=f"exit {UNSCORED_GATE_FAILED} when a model lacks a score (unscored or missing) on more than "
                          "this fraction of the datums of any score; for CI")
    run.add_argument("--dry-run", action="store_true", help="print the judge call estimate and stop")
    run.add_argument("--workers", type=int, default=None, help="processes for lexical metrics (default: all cores)")
    _add_judge_arguments(run)
    add_db_argument(run)
    run.set_defaults(handler=_run)

    again = sub.add_parser("resume", help="finish an interrupted run; finished cells are kept")
    again.add_argument("run_id", type=int)
    _add_judge_arguments(again)
    add_db_argument(again)
    again.set_defaults(handler=_resume)


def _add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    try:
        from .judge_args import add_judge_arguments
    except ImportError:
        return
    add_judge_arguments(parser)


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
    return ColumnMapping.from_dict(guessed)


def _stored_dataset(store: Store, name: str) -> int:
    """The stored dataset called ``name``; when there is none, say the file is not found either."""
    try:
        return store.dataset_id(name)
    except StoreError:
        raise InputError(f"file not found: {name} (and no stored dataset has that name; "
                         "`textgen-eval datasets` lists them, 'sample' is the bundled sample)") from None


def _load_into_store(args: argparse.Namespace, store: Store, required: set[str]) -> int:
    from ..datasets import load_dataset, load_sample, read_table

    path = Path(args.data)
    if args.data == "sample" and not path.is_file():
        dataset = load_sample()
    elif path.exists():
        table = read_table(path)
        dataset = load_dataset(table, _mapping(args, list(table.columns)), name=args.name or path.stem,
                               file_name=path.name, required=required)
        dataset.source = str(path)
    else:
        return _stored_dataset(store, args.data)
    dataset_id, name, reused = save_or_reuse(store, dataset, args.name or dataset.name)
    print(f"{'using stored' if reused else 'stored'} dataset {name!r} ({len(dataset.rows)} rows)")
    return dataset_id


def _run(args: argparse.Namespace) -> int:
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    specs = [get_metric(m) for m in metrics]
    params = parse_params(args.param)
    judge = _judge_settings(args)
    required = {field for spec in specs for field in spec.needs}
    store = Store(args.db)
    dataset_id = _load_into_store(args, store, required)
    models = [m.strip() for m in args.models.split(",")] if args.models else None
    if args.dry_run:
        return _dry_run(store, dataset_id, metrics, params, judge, models)
    with ProgressBar(sys.stderr) as bar:
        run_id = evaluate(store, dataset_id, metrics, params, models=models, judge=judge,
                          progress=bar.update, cancel=threading.Event(), workers=args.workers)
    return _report(store, run_id, args.out, args.fail_if_unscored_above)


def _resume(args: argparse.Namespace) -> int:
    store = Store(args.db)
    with ProgressBar(sys.stderr) as bar:
        run_id = resume(store, args.run_id, judge=_judge_settings(args), progress=bar.update)
    return _report(store, run_id, None)


def _report(store: Store, run_id: int, out: str | None, unscored_above: float | None = None) -> int:
    run = store.get_run(run_id)
    print(f"run {run_id} on dataset {run['dataset']!r}: {run['status']} in {duration_text(run['duration_s'])}")
    if run["judge_calls"]:
        cost = f", cost {run['cost']:.4f}" if run["cost"] is not None else ""
        print(f"judge: {run['judge_calls']} calls, {run['prompt_tokens']} prompt + "
              f"{run['completion_tokens']} completion tokens{cost}")
    print_summary(store, run_id)
    if out:
        path = write_table(wide_scores(store, run_id), out)
        print(f"wrote {path}")
    if run["status"] != "finished":
        return 1
    return unscored_gate(store, run_id, unscored_above) if unscored_above is not None else 0


def _dry_run(store: Store, dataset_id: int, metrics: list[str], params: dict, judge: Any, models: list[str] | None) -> int:
    from ..metrics.registry import resolve_params

    judged = [m for m in metrics if get_metric(m).group != "lexical"]
    dataset = store.load_dataset(dataset_id)
    rows = [r for r in dataset.rows if not models or r.model in models]
    print(f"{len(rows)} rows, {len(metrics)} metrics ({len(judged)} judged)")
    if not judged:
        print("no judge calls: every chosen metric is computed locally")
        return 0
    if judge is None:
        raise ParameterError("judge metrics need --judge-base-url and --judge-model (or TEXTGEN_EVAL_JUDGE_* variables)")
    from ..judge.engine import estimate

    resolved = resolve_params(metrics, params)
    est = estimate(rows, {m: resolved[m] for m in judged}, judge, store)
    if est.dependent:
        print(f"judge calls: {est.calls - est.dependent} to {est.calls} to make, {est.cached} cached "
              f"({est.dependent} are verdicts on extracted items, skipped when an extraction finds none)")
    else:
        print(f"judge calls: {est.calls} to make, {est.cached} cached")
    print(f"estimated tokens: {est.prompt_tokens} prompt + {est.completion_tokens} completion")
    print("estimated cost: " + (f"{est.cost:.4f}" if est.cost is not None else "unknown (set --price-prompt/--price-completion)"))
    return 0
