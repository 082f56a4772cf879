"""`textgen-eval failures RUN`: why answers fail, the run's failing judgements grouped into named modes."""

from __future__ import annotations

import argparse

from .judge_args import add_judge_arguments
from .main import add_db_argument, open_store

#: Judge settings without a flag here: --seed is the grouping's seed, and naming never goes through batches.
NAMING_SKIP = frozenset({"seed", "batch", "batch_discount", "batch_poll", "batch_wait"})


def register(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser(
        "failures", help="group a run's failing judgements into named failure modes, with each model's rate and "
                         "a paired comparison between models (stored; a second call reads them)",
        description="Failing judgements: verdicts that count against a score (no, unsupported, missing, "
                    "contradicted, INCORRECT, a biased or toxic opinion), ratings at the bottom of the scale, "
                    "labels named with --label, and for lexical scores the predictions of each model's lowest "
                    "cells. Unscored cells are never failures. See docs/failures.md.")
    cmd.add_argument("run_id", type=int)
    cmd.add_argument("--score", nargs="+", metavar="NAME", help="scores to read (default: every judge metric of "
                                                                "the run, else every score)")
    cmd.add_argument("--models", help="BASELINE,CANDIDATE[,...]: compare each candidate with the baseline")
    cmd.add_argument("--by", metavar="COLUMN", help="rates within each value of a metadata column")
    cmd.add_argument("--label", nargs="+", default=[], metavar="LABEL", help="verdict labels that count as failures")
    cmd.add_argument("--bottom", type=int, default=1, help="ratings at or below this count as failures (default 1)")
    cmd.add_argument("--lowest", type=float, default=0.1,
                     help="lexical scores: the share of each model's lowest cells read (default 0.1, at most 0.5)")
    cmd.add_argument("--seed", type=int, default=0)
    cmd.add_argument("--min-size", type=int, help="smallest mode (default: 5%% of the distinct texts, 5 to 500)")
    cmd.add_argument("--alpha", type=float, default=0.05, help="flag when the Holm-adjusted p is below (0.05)")
    cmd.add_argument("--regroup", action="store_true", help="group again even when stored modes answer the request")
    cmd.add_argument("--name-with-judge", action="store_true",
                     help="one judge call per mode for a short human name from its words and example reasons, "
                          "stored beside the word name; estimated first, under --max-calls/--max-cost (with what "
                          "the run spent), added to the run's usage, cached (naming again makes no call)")
    cmd.add_argument("--dry-run", action="store_true", help="with --name-with-judge: print the naming estimate "
                                                            "and ask nothing")
    add_db_argument(cmd)
    add_judge_arguments(cmd, panel=False, skip=NAMING_SKIP)
    cmd.set_defaults(handler=_failures)


def _failures(args: argparse.Namespace) -> int:
    from ..errors import ParameterError
    from ..failures import FailureRule, TooFewFailures, comparison_lines, mode_lines, modes_for

    if args.min_size is not None and args.min_size < 2:
        raise ParameterError(f"--min-size must be at least 2, got {args.min_size}")
    if not 0 < args.alpha < 1:
        raise ParameterError(f"--alpha must be between 0 and 1, got {args.alpha}")
    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else []
    if args.models is not None and len(models) < 2:
        raise ParameterError(f"--models takes BASELINE,CANDIDATE[,...] (two or more), got {args.models!r}")
    judge = _naming_judge(args)
    store = open_store(args)
    rule = FailureRule(bottom=args.bottom, labels=tuple(args.label), lowest=args.lowest)
    store.get_run(args.run_id)  # an unknown run is one clear error
    by = store.failures.datum_slices(args.run_id, args.by) if args.by else None  # a bad column fails before grouping
    try:
        modes, reused = modes_for(store, args.run_id, scores=args.score, rule=rule, seed=args.seed,
                                  min_size=args.min_size, regroup=args.regroup)
    except TooFewFailures as exc:
        print(exc)
        return 0
    if judge is not None:
        modes = _name(store, args.run_id, modes, judge, args.dry_run)
    if models:
        table = modes.compare(models[0], models[1:], alpha=args.alpha)
    print("\n".join(mode_lines(modes, by=by)))
    if models:
        print("\n".join(comparison_lines(table, models[0], args.alpha)))
    print(f"\n{'read the stored modes' if reused else 'grouped and stored'} (--regroup groups again)")
    return 0


def _naming_judge(args: argparse.Namespace) -> object | None:
    """The judge that names the modes (None without --name-with-judge); one clear error when none is set."""
    from ..errors import ParameterError
    from .judge_args import judge_settings_from_args

    if not args.name_with_judge:
        if args.dry_run:
            raise ParameterError("--dry-run estimates the naming calls of --name-with-judge; give both")
        return None
    judge = judge_settings_from_args(args, NAMING_SKIP)
    if judge is None:
        raise ParameterError("--name-with-judge needs a judge: --judge-base-url and --judge-model (or the "
                             "TEXTGEN_EVAL_JUDGE_* variables)")
    return judge


def _name(store: object, run_id: int, modes: object, judge: object, dry_run: bool) -> object:
    """Print the naming estimate, then (unless a dry run) name the modes and say what it cost."""
    from ..failures.judge_names import estimate, name_modes

    est = estimate(modes, judge, store)  # type: ignore[arg-type]
    cost = "" if est.cost is None else f", cost {est.cost:.6f}"
    print(f"judge names: {est.modes} mode(s), {est.calls} call(s) to make, {est.cached} cached; estimated tokens "
          f"{est.prompt_tokens} prompt + {est.completion_tokens} completion{cost}")
    if dry_run:
        return modes
    named, naming = name_modes(store, run_id, modes, judge)  # type: ignore[arg-type]
    kept = len(naming.notes)
    print(f"judge names: {naming.calls} call(s) made, {naming.cached} cached"
          + (f"; {kept} mode(s) keep their word name (why: below)" if kept else "") + "\n")
    return named
