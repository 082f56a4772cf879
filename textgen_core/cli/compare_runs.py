"""`textgen-eval compare --baseline RUN:MODEL --candidate RUN:MODEL`: a model of one run against a model of another
(the cross-run form of `compare`, see :mod:`textgen_core.compare.across_runs`)."""

from __future__ import annotations

import argparse
import math


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--allow-different-judges", action="store_true",
                        help="with RUN:MODEL sides: compare scores made with different metric parameters, prompt "
                             "versions or judge settings (the difference is printed beside each affected row)")


def is_cross_run(args: argparse.Namespace) -> bool:
    return args.run_id is None


def compare_runs(args: argparse.Namespace) -> int:
    from ..compare.across_runs import compare_across, parse_side
    from ..errors import ParameterError
    from ..formatting import text_table
    from .main import open_store

    if not args.candidate or len(args.candidate) != 1:
        raise ParameterError("without a RUN, compare takes --baseline RUN:MODEL and one --candidate RUN:MODEL "
                             "(e.g. 'textgen-eval compare --baseline 3:prod --candidate 7:prod')")
    store = open_store(args, read_only=True)
    baseline, candidate = parse_side(store, args.baseline), parse_side(store, args.candidate[0])
    scores = [s for v in args.scores or [] for s in (p.strip() for p in v.split(",")) if s] or None
    directions = dict(v.split("=", 1) for v in args.direction if "=" in v)
    frame = compare_across(store, baseline, candidate, scores=scores, resamples=args.resamples, seed=args.seed,
                           tie_tolerance=args.tie_tolerance, holm=not args.no_holm, confidence=args.confidence,
                           directions=directions, allow_different=args.allow_different_judges)
    attrs = frame.attrs
    print(f"baseline {baseline.label} (run {baseline.run_id}) against candidate {candidate.label} "
          f"(run {candidate.run_id}): {len(frame)} score(s); {attrs['resamples']} resamples, seed {attrs['seed']}")
    shown = frame.assign(
        delta_=[_delta(r) for r in frame.itertuples()],
        p=[("" if math.isnan(v) else f"{v:.3g}") for v in (frame["p_adjusted"] if attrs["holm"] else frame["p_value"])],
        wtl=[f"{w}/{t}/{l}" for w, t, l in zip(frame["wins"], frame["ties"], frame["losses"])],
        base=frame["baseline_mean"].map(lambda v: "" if math.isnan(v) else f"{v:.4f}"),
        cand=frame["candidate_mean"].map(lambda v: "" if math.isnan(v) else f"{v:.4f}"))
    columns = ["score", "n", "base", "cand", "delta_", "p", "verdict", "why", "wtl"]
    if (frame["difference"] != "").any():
        columns.append("difference")
    print(text_table(shown[columns].rename(columns={
        "delta_": f"delta [{attrs['confidence']:.0%} CI]", "p": "p (Holm)" if attrs["holm"] else "p",
        "wtl": "W/T/L", "base": "baseline", "cand": "candidate"})))
    if attrs["left_out"]:
        print(f"{attrs['left_out']} datum(s) left out: the same id with another query or references in the two "
              "dataset versions")
    if attrs["allowed_differences"]:
        print("compared despite different settings (--allow-different-judges): "
              + ", ".join(attrs["allowed_differences"]))
    print("Datums pair by id across the runs; the statistics are those of 'textgen-eval compare RUN' (paired "
          "bootstrap interval, sign-flip permutation test, Holm over the scores with a direction).")
    if args.out:
        from ..export import write_table

        print(f"wrote {write_table(frame, args.out)} ({len(frame)} rows)")
    return 0


def _delta(row) -> str:
    if math.isnan(row.delta):
        return ""
    if math.isnan(row.ci_low):
        return f"{row.delta:+.4f} [too few]"
    return f"{row.delta:+.4f} [{row.ci_low:+.4f}, {row.ci_high:+.4f}]"
