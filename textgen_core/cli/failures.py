"""`textgen-eval failures RUN`: why answers fail, the run's failing judgements grouped into named modes."""

from __future__ import annotations

import argparse

from .main import add_db_argument, open_store


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
    add_db_argument(cmd)
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
    if models:
        table = modes.compare(models[0], models[1:], alpha=args.alpha)
    print("\n".join(mode_lines(modes, by=by)))
    if models:
        print("\n".join(comparison_lines(table, models[0], args.alpha)))
    print(f"\n{'read the stored modes' if reused else 'grouped and stored'} (--regroup groups again)")
    return 0
