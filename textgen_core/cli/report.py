"""`textgen-eval report RUN`: one self-contained HTML file (or its JSON twin) to send to someone."""

from __future__ import annotations

import argparse
import time

from .main import add_db_argument, open_store


def register(sub: argparse._SubParsersAction) -> None:
    report = sub.add_parser(
        "report", help="write one self-contained HTML file (or JSON) of a run: what was run, means with intervals, "
                       "comparisons, the judge's reliability, and the rows with their verdicts",
        description="Write a report of a stored run that opens offline in any browser and prints to PDF. "
                    "Nothing is judged again: everything is read from the database.")
    report.add_argument("run_id", type=int, metavar="RUN")
    report.add_argument("--compare", metavar="BASELINE[,CANDIDATE...]",
                        help="compare models of the run: the baseline, then candidates (default: every other model)")
    report.add_argument("--calibrate", action="store_true",
                        help="add bias-corrected (PPI++) means, and deltas with --compare, from the run's human labels")
    report.add_argument("--by", metavar="COLUMN", help="slice the summary by a metadata column")
    report.add_argument("--resamples", type=int, default=2000,
                        help="bootstrap resamples and permutations of the comparison (default: %(default)s)")
    report.add_argument("--seed", type=int, default=0, help="random seed of the comparison (default: %(default)s)")
    report.add_argument("--out", required=True, metavar="FILE", help="the file to write (report.html, report.json)")
    report.add_argument("--format", choices=["html", "json"], default=None,
                        help="html or json (default: from the file's extension, else html)")
    add_db_argument(report)
    report.set_defaults(handler=_report)


def _report(args: argparse.Namespace) -> int:
    from ..report import ReportOptions, compare_option, write_report

    baseline, candidates = compare_option(args.compare) if args.compare is not None else (None, None)
    fmt = args.format or ("json" if str(args.out).lower().endswith(".json") else "html")
    options = ReportOptions(baseline=baseline, candidates=candidates, calibrate=args.calibrate, by=args.by,
                            resamples=args.resamples, seed=args.seed)
    store = open_store(args, read_only=True)
    store.get_run(args.run_id)  # an unknown run is one clear error
    started = time.perf_counter()
    path = write_report(store, args.run_id, args.out, options, fmt)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB, {fmt}) in {time.perf_counter() - started:.1f} s")
    return 0
