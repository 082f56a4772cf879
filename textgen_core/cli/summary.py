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
    add_db_argument(summary)
    summary.set_defaults(handler=_summary)


def _summary(args: argparse.Namespace) -> int:
    store = open_store(args, read_only=True)
    store.get_run(args.run_id)  # an unknown run is one clear error
    print_summary(store, args.run_id, args.models)
    return 0
