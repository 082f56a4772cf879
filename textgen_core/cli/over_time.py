"""`textgen-eval history DATASET` and `textgen-eval leaderboard DATASET`: a named dataset's runs over time."""

from __future__ import annotations

import argparse
import math
from typing import Any

from .main import add_db_argument, open_store


def register(sub: argparse._SubParsersAction) -> None:
    history = sub.add_parser(
        "history", help="every run of a dataset (all its versions) over time: means with intervals, and changes",
        description="Each finished run on any version of DATASET, oldest first: per model and score the mean with "
                    "its interval, and a flag where a run differs from the previous run of that model (paired t "
                    "test on the datums both scored, Holm across every score and run shown).")
    history.add_argument("dataset", help="dataset name (any version's name works)")
    history.add_argument("--score", action="append", default=[], metavar="NAME", help="only this score (repeatable)")
    history.add_argument("--model", action="append", default=[], metavar="M", help="only this model (repeatable)")
    history.add_argument("--confidence", type=float, default=0.95, help="of the intervals (default: %(default)s)")
    history.add_argument("--out", help="also write the table to a file (.csv, .jsonl, .parquet)")
    add_db_argument(history)
    history.set_defaults(handler=_history)

    board = sub.add_parser(
        "leaderboard", help="every model run on a dataset, ranked on a score with rank intervals",
        description="Each model's latest finished run on any version of DATASET with the score: mean, interval, and "
                    "a rank interval from a bootstrap over datums. 'first' is printed only where the rank interval "
                    "is 1-1.")
    board.add_argument("dataset", help="dataset name (any version's name works)")
    board.add_argument("--score", required=True, help="the score to rank on")
    board.add_argument("--model", action="append", default=[], metavar="M", help="only this model (repeatable)")
    board.add_argument("--run", action="append", default=[], metavar="RUN",
                       help="rank only these runs (id or name, repeatable; default: each model's latest run)")
    board.add_argument("--confidence", type=float, default=0.95, help="of the intervals (default: %(default)s)")
    board.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default: %(default)s)")
    board.add_argument("--seed", type=int, default=0, help="of the bootstrap (default: %(default)s)")
    board.add_argument("--out", help="also write the table to a file (.csv, .jsonl, .parquet)")
    add_db_argument(board)
    board.set_defaults(handler=_leaderboard)


def _mean(row: Any) -> str:
    if not math.isfinite(row.ci_low):
        return f"{row.mean:.4f} [{row.interval}]"
    return f"{row.mean:.4f} [{row.ci_low:.4f}, {row.ci_high:.4f}]"


def _history(args: argparse.Namespace) -> int:
    from ..compare.small_sample import RULE
    from ..formatting import text_table
    from ..over_time.history import history

    store = open_store(args, read_only=True)
    frame = history(store, args.dataset, scores=args.score or None, models=args.model or None,
                    confidence=args.confidence)
    attrs = dict(frame.attrs)
    frame.attrs.clear()  # pandas deep-copies attrs on every operation: thousands of rows, thousands of copies
    frame = frame.astype({c: object for c in ("run", "model", "score", "judge", "interval", "flag")})
    print(f"history of {attrs['family']!r}: {frame['run_id'].nunique()} finished run(s), "
          f"{args.confidence:.0%} intervals")
    for score, part in frame.groupby("score", sort=True):
        shown = part.assign(
            when=part["created_at"].map(lambda t: str(t)[:19]), mean_=[_mean(r) for r in part.itertuples()],
            vs=[("" if math.isnan(r.previous_run) else f"run {int(r.previous_run)}") for r in part.itertuples()],
            change=[("" if math.isnan(r.delta) else f"{r.delta:+.4f}") for r in part.itertuples()],
            p=[_p(r) for r in part.itertuples()], judge=part["judge"].fillna(""))
        shown = shown[["run", "when", "version", "judge", "model", "n", "mean_", "unscored", "vs", "change", "p",
                       "flag"]]
        print(f"\n{score}")
        print(text_table(shown.rename(columns={"mean_": "mean [interval]", "p": "p (Holm)", "vs": "against",
                                               "version": "v"})))
    print(f"intervals: {RULE}")
    for note in attrs["notes"]:
        print(f"note: {note}")
    flagged = frame[frame["flag"] != ""]
    print(f"\n{len(flagged)} change(s) flagged" + (":" if len(flagged) else ""))
    for r in flagged.itertuples():
        print(f"  {r.run} ({r.model}, {r.score}): {r.flag} than run {int(r.previous_run)} by {r.delta:+.4f} "
              f"on {int(r.n_paired)} datums (Holm p {r.p_adjusted:.2g})")
    _write(frame, args.out)
    return 0


def _p(row: Any) -> str:
    if isinstance(row.previous_run, float) and not math.isnan(row.previous_run) and math.isnan(row.p_value):
        return "too few"
    return "" if math.isnan(row.p_adjusted) else f"{row.p_adjusted:.3g}"


def _leaderboard(args: argparse.Namespace) -> int:
    from ..compare.small_sample import RULE
    from ..formatting import text_table
    from ..over_time.leaderboard import leaderboard

    store = open_store(args, read_only=True)
    runs = [store.run_names.run_id(r) for r in args.run] or None
    frame = leaderboard(store, args.dataset, args.score, models=args.model or None, runs=runs,
                        confidence=args.confidence, resamples=args.resamples, seed=args.seed)
    print(f"leaderboard of {frame.attrs['family']!r} on {args.score} ({frame.attrs['direction']} is better), "
          f"{args.confidence:.0%} intervals, ranks from {args.resamples} bootstrap resamples of the datums")
    shown = frame.assign(mean_=[_mean(r) for r in frame.itertuples()], judge=frame["judge"].fillna(""),
                         rank_=[("" if math.isnan(r) else int(r)) for r in frame["rank"]])
    shown = shown[["rank_", "model", "standing", "mean_", "n", "run", "version", "judge"]]
    print(text_table(shown.rename(columns={"rank_": "rank", "mean_": "mean [interval]", "version": "v"})))
    print(f"intervals: {RULE}")
    if not (frame["standing"] == "first").any() and frame.attrs["direction"] != "none":
        print("no model is first beyond doubt: the best ranks overlap")
    for note in frame.attrs["notes"]:
        print(f"note: {note}")
    _write(frame, args.out)
    return 0


def _write(frame: Any, out: str | None) -> None:
    if out:
        from ..export import write_table

        print(f"wrote {write_table(frame.reset_index(drop=True), out)} ({len(frame)} rows)")
