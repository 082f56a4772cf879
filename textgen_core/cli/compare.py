"""`textgen-eval compare` and `agreement`: is one model really better, and does the judge agree with humans?"""

from __future__ import annotations

import argparse
import math

import pandas as pd

from ..compare import compare_models, judge_human_agreement
from ..errors import ParameterError
from ..export import write_table
from ..store import Store
from .main import add_db_argument

#: Column order of `compare --out`: the documented columns first, then the context.
OUT_COLUMNS = ["metric", "n", "baseline_mean", "candidate_mean", "delta", "ci_low", "ci_high", "p_value",
               "wins", "ties", "losses", "p_adjusted", "direction", "baseline", "candidate",
               "missing_baseline", "missing_candidate", "test"]


def register(sub: argparse._SubParsersAction) -> None:
    compare = sub.add_parser("compare", help="compare models on a run: paired deltas, bootstrap intervals, p-values")
    compare.add_argument("run_id", type=int, metavar="RUN")
    compare.add_argument("--baseline", required=True, metavar="MODEL", help="the model the others are compared to")
    compare.add_argument("--candidate", action="append", metavar="MODEL",
                         help="a model to compare with the baseline (repeatable; default: every other model)")
    _add_scores(compare)
    compare.add_argument("--resamples", type=int, default=2000,
                         help="bootstrap resamples and Monte Carlo permutations (default: %(default)s)")
    compare.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    compare.add_argument("--confidence", type=float, default=0.95, help="interval level (default: %(default)s)")
    compare.add_argument("--tie-tolerance", type=float, default=1e-9,
                         help="differences this small count as ties (default: %(default)s)")
    compare.add_argument("--direction", action="append", default=[], metavar="SCORE=higher|lower|none",
                         help="which way a score is better, for scores the metric registry does not declare")
    compare.add_argument("--no-holm", action="store_true", help="do not Holm-adjust the p-values")
    compare.add_argument("--out", metavar="FILE", help="write the table (.csv, .jsonl, .parquet)")
    add_db_argument(compare)
    compare.set_defaults(handler=_compare)

    agree = sub.add_parser("agreement", help="agreement of each score with a human label or score column")
    agree.add_argument("run_id", type=int, metavar="RUN")
    agree.add_argument("--human-column", required=True, metavar="COL", help="metadata column with the human value")
    agree.add_argument("--kind", choices=["label", "score"], default="score",
                       help="score: Spearman and Pearson; label: Cohen's kappa (default: %(default)s)")
    agree.add_argument("--threshold", type=float, default=0.5,
                       help="for labels, a value >= this counts as positive (default: %(default)s)")
    agree.add_argument("--human-threshold", type=float, default=None,
                       help="for numeric human labels on another scale, a value >= this is positive "
                            "(default: --threshold)")
    agree.add_argument("--positive-label", metavar="LABEL", help="for text labels, the human label that is positive")
    _add_scores(agree)
    agree.add_argument("--out", metavar="FILE", help="write the table (.csv, .jsonl, .parquet)")
    add_db_argument(agree)
    agree.set_defaults(handler=_agreement)


def _add_scores(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scores", action="append", metavar="SCORE,...",
                        help="scores to include, comma-separated or repeated (default: all)")


def _scores(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [s for v in values for s in (p.strip() for p in v.split(",")) if s]


def _directions(values: list[str]) -> dict[str, str]:
    directions = {}
    for value in values:
        score, sep, direction = value.partition("=")
        if not sep or not score.strip():
            raise ParameterError(f"--direction takes SCORE=higher|lower|none, got {value!r}")
        directions[score.strip()] = direction.strip()
    return directions


def _compare(args: argparse.Namespace) -> int:
    frame = compare_models(Store(args.db), args.run_id, args.baseline, args.candidate, scores=_scores(args.scores),
                           resamples=args.resamples, seed=args.seed, tie_tolerance=args.tie_tolerance,
                           holm=not args.no_holm, confidence=args.confidence,
                           directions=_directions(args.direction))
    attrs = frame.attrs
    print(f"run {args.run_id}: baseline {args.baseline}; {len(attrs['candidates'])} candidate(s), "
          f"{len(attrs['scores'])} score(s); {attrs['resamples']} resamples, seed {attrs['seed']}")
    print(_table(frame, attrs["confidence"], attrs["holm"]).to_string(index=False))
    print(f"delta = candidate - baseline; {attrs['confidence']:.0%} CI: {attrs['ci_method']}.")
    print("p: two-sided paired permutation test of the mean difference (sign flips), exact when at most 20 "
          "datums differ, else Monte Carlo (see the test column of --out).")
    lower = sorted(frame.loc[frame["direction"] == "lower", "score"].unique())
    print("W/T/L: datums where the candidate is better / tied / worse in each score's direction"
          + (f" (lower is better: {', '.join(lower)})." if lower else "."))
    print("Only datums scored for both models are compared; 'missing' counts the dataset's datums without a "
          "score (baseline/candidate).")
    if attrs["undeclared"]:
        print(f"Direction not declared for {', '.join(attrs['undeclared'])}: counted as higher is better "
              "(set it with --direction SCORE=lower).")
    if attrs["note"]:
        print(attrs["note"])
    if args.out:
        out = frame.rename(columns={"score": "metric"})[OUT_COLUMNS]
        print(f"wrote {write_table(out, args.out)} ({len(out)} rows)")
    return 0


def _table(frame: pd.DataFrame, confidence: float, holm: bool) -> pd.DataFrame:
    shown = pd.DataFrame({
        "candidate": frame["candidate"], "score": frame["score"], "dir": frame["direction"], "n": frame["n"],
        "baseline": frame["baseline_mean"].map(_num), "cand.": frame["candidate_mean"].map(_num),
        "delta": frame["delta"].map(lambda v: _num(v, signed=True)),
        f"{confidence:.0%} CI": [f"[{_num(lo, signed=True)}, {_num(hi, signed=True)}]"
                                 for lo, hi in zip(frame["ci_low"], frame["ci_high"])],
        "p": frame["p_value"].map(_p),
    })
    if holm:
        shown["p (Holm)"] = frame["p_adjusted"].map(_p)
    shown["W/T/L"] = [f"{w}/{t}/{l}" for w, t, l in zip(frame["wins"], frame["ties"], frame["losses"])]
    shown["missing"] = [f"{b}/{c}" for b, c in zip(frame["missing_baseline"], frame["missing_candidate"])]
    return shown


def _num(value: float, signed: bool = False) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:+.4f}" if signed else f"{value:.4f}"


def _p(value: float) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def _agreement(args: argparse.Namespace) -> int:
    frame = judge_human_agreement(Store(args.db), args.run_id, args.human_column, kind=args.kind,
                                  threshold=args.threshold, positive_label=args.positive_label,
                                  scores=_scores(args.scores), human_threshold=args.human_threshold)
    print(frame.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if args.kind == "label":
        human = (f"equal to {args.positive_label!r}" if args.positive_label
                 else f"a number >= {frame.attrs['human_threshold']:g}")
        print(f"Cohen's kappa: a score >= {args.threshold:g} counts as positive; a human value when {human}.")
    else:
        print("Spearman and Pearson correlations (scipy) with two-sided p-values; "
              "expect negative values for lower-is-better scores.")
    print("n: datums with both a score and a human value.")
    if frame.attrs.get("skipped"):
        print(f"{frame.attrs['skipped']} human value(s) could not be read and were left out.")
    if args.out:
        print(f"wrote {write_table(frame, args.out)} ({len(frame)} rows)")
    return 0
