"""`textgen-eval run`, `resume` and `extend`: the flags, and the three handlers that tie plan, run and print.

The flags become a plan in :mod:`.run_plan`, the plan is carried out in
:mod:`.run_exec`, and what a run stored is printed by :mod:`.run_print`.
Nothing heavy is imported until a command runs (``textgen-eval --help`` stays fast).
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from ..errors import ParameterError, StoreError
from ..store import Store
from .judge_args import add_judge_arguments
from .main import add_db_argument, open_store
from .metrics import add_judge_metric_argument, define_judge_metrics
from .tables import UNSCORED_GATE_FAILED


def register(sub: argparse._SubParsersAction) -> None:
    from ..registry import all_metrics

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
    run.add_argument("--run-name", metavar="TEXT", help="name the run (unique; 'textgen-eval rename' changes it)")
    run.add_argument("--tag", action="append", default=[], metavar="TAG",
                     help="tag the run (repeatable); 'textgen-eval runs --tag TAG' lists tagged runs")
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
    _judge_flags(run)
    run.set_defaults(handler=_run)

    again = sub.add_parser("resume", help="finish an interrupted run; finished cells are kept")
    again.add_argument("run_id", type=int)
    again.add_argument("--workers", type=int, default=None, help="processes for lexical metrics (default: all cores)")
    _judge_flags(again)
    again.set_defaults(handler=_resume)

    more = sub.add_parser("extend", help="add metrics to a finished run (its dataset, its judge; the judge cache makes "
                                         "repeated asks free); 'resume' finishes a stopped extend")
    more.add_argument("run_id", type=int)
    more.add_argument("--metrics", required=True, help="comma-separated metrics to add ('textgen-eval metrics')")
    more.add_argument("--param", action="append", default=[], metavar="METRIC.NAME=VALUE",
                      help="parameter of an added metric, e.g. rouge.use_stemmer=true")
    more.add_argument("--workers", type=int, default=None, help="processes for lexical metrics (default: all cores)")
    _judge_flags(more)
    more.set_defaults(handler=_extend)


def calibrate_spec(text: str) -> str:
    """argparse type of `run --calibrate`: SCORE=COLUMN, checked before anything is scored."""
    score, sep, column = (part.strip() for part in text.partition("="))
    if not sep or not score or not column:
        raise argparse.ArgumentTypeError(f"takes SCORE=COLUMN (a human column of the dataset), got {text!r}")
    return text


def _judge_flags(parser: argparse.ArgumentParser) -> None:
    add_judge_arguments(parser)
    add_judge_metric_argument(parser)
    add_db_argument(parser)


def _run(args: argparse.Namespace) -> int:
    """Score a file or stored dataset; a refused command leaves no database file it created behind."""
    from .progress_bar import ProgressBar
    from .run_exec import execute
    from .run_plan import plan_from_args
    from .run_print import print_report

    created = args.db != ":memory:" and not Path(args.db).exists()
    try:
        plan = plan_from_args(args)
        if plan.run_name and not created and not plan.dry_run:  # a taken name is refused before any scoring
            taken = open_store(args, read_only=True).run_names.run_labels()
            if (taken["name"] == plan.run_name).any():
                raise ParameterError(f"a run is already named {plan.run_name!r}; choose another --run-name")
        bar = ProgressBar(sys.stderr)
        store, run_id = execute(plan, lambda read_only=False: open_store(args, read_only=read_only), args.db, bar)
        if run_id is None:
            return 0
        if plan.run_name or plan.tags:
            store.run_names.label_run(run_id, name=plan.run_name, add_tags=plan.tags)
        return print_report(store, run_id, plan.out, plan.unscored_above, plan.calibrate, bar.last.get("judge"))
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


def _resume(args: argparse.Namespace) -> int:
    from ..evaluate import resume
    from .judge_args import judge_settings_for_resume, jury_from_args
    from .progress_bar import ProgressBar
    from .run_print import print_report

    define_judge_metrics(args, [])  # an edited --judge-metric file is refused by the fingerprint check
    store = open_store(args)
    judge = judge_settings_for_resume(args, store.get_run(args.run_id).get("judge"))  # the run's endpoint and model
    jury = jury_from_args(args, judge)  # None: the run's own panel and samples, as it stored them
    with ProgressBar(sys.stderr) as bar:
        run_id = resume(store, args.run_id, judge=judge, progress=bar.update, jury=jury, workers=args.workers)
    return print_report(store, run_id, None, judged=bar.last.get("judge"))


def _extend(args: argparse.Namespace) -> int:
    """Add metrics to a finished run; the judge is the run's own unless flags change what may change."""
    from ..runs.extend import extend
    from .judge_args import judge_settings_for_resume
    from .progress_bar import ProgressBar
    from .run_plan import metric_names, parse_params
    from .run_print import print_report

    metrics = metric_names(args.metrics)
    define_judge_metrics(args, metrics)
    store = open_store(args)
    judge = judge_settings_for_resume(args, store.get_run(args.run_id).get("judge"))
    with ProgressBar(sys.stderr) as bar:
        run_id = extend(store, args.run_id, metrics, parse_params(args.param), judge=judge, progress=bar.update,
                        cancel=threading.Event(), workers=args.workers)
    return print_report(store, run_id, None, judged=bar.last.get("judge"))
