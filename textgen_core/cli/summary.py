"""`textgen-eval summary RUN`: the closing summary of a stored run, printed again."""

from __future__ import annotations

import argparse

from .main import add_db_argument, open_store
from .tables import print_summary


def register(sub: argparse._SubParsersAction) -> None:
    summary = sub.add_parser("summary", help="print a stored run's summary: means with intervals, why cells are "
                                             "unscored, warnings, and a judge panel's agreement")
    summary.add_argument("run_id", type=int)
    summary.add_argument("--models", nargs="+", help="only these models (default: all)")
    summary.add_argument("--by", metavar="COLUMN", help="each model's mean per slice of a metadata column")
    add_db_argument(summary)
    summary.set_defaults(handler=_summary)


def _summary(args: argparse.Namespace) -> int:
    store = open_store(args, read_only=True)
    store.get_run(args.run_id)  # an unknown run is one clear error
    if args.by:
        return _summary_by(store, args)
    print_summary(store, args.run_id, args.models)
    return 0


def _summary_by(store, args: argparse.Namespace) -> int:
    """`summary RUN --by COLUMN`: per score, a row per slice and a column per model."""
    from ..compare.small_sample import RULE
    from ..compare.slices import summary_by

    frame = summary_by(store, args.run_id, args.by, models=args.models)
    if frame.empty:
        print("no scores")
        return 0
    frame["cell"] = [f"{m:.4f} {'too few' if lo != lo else f'[{lo:.4f}, {hi:.4f}]'} n={n}"
                     for m, lo, hi, n in zip(frame["mean"], frame["ci_low"], frame["ci_high"], frame["n_scored"])]
    order = frame.attrs["slices"]
    for score, part in frame.groupby("score", sort=False):
        table = part.pivot(index="slice", columns="model", values="cell").reindex(
            [s for s in order if s in set(part["slice"])]).fillna("-")
        table.index.name, table.columns.name = f"{score} by {args.by}", None
        print(table.to_string() + "\n")
    print(f"Each cell: mean [95% interval of the mean] n=scored datums of the slice. {RULE}")
    for row in frame.itertuples():
        if row.ci_note:
            print(f"too few, {row.slice} / {row.model} / {row.score}: {row.ci_note}")
    return 0
