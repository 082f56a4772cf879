"""`textgen-eval compare` and `agreement`: is one model really better, and does the judge agree with humans?"""

from __future__ import annotations

import argparse
import math

import pandas as pd

from ..compare import compare_models, judge_human_agreement
from ..compare.comparison import NO_SCORED_DATUMS
from ..compare.pairwise import pairwise_summary
from ..compare.small_sample import RULE
from ..compare.verdicts import APART, GATES, INCONCLUSIVE, WORSE, fails
from ..errors import ParameterError
from ..export import write_table
from ..summary import scale_text
from .classification import print_comparison
from .compare_runs import add_arguments as add_cross_run_arguments
from .compare_runs import compare_runs, is_cross_run
from .labels import print_agreement, print_calibrated
from .main import add_db_argument, open_store

#: Column order of `compare --out`: the documented columns first, then the context.
OUT_COLUMNS = ["metric", "n", "baseline_mean", "candidate_mean", "delta", "ci_low", "ci_high", "p_value",
               "wins", "ties", "losses", "p_adjusted", "verdict", "why", "mde", "spread", "direction", "family", "baseline",
               "candidate", "scored_baseline", "unscored_baseline", "empty_baseline", "missing_baseline",
               "scored_candidate", "unscored_candidate", "empty_candidate", "missing_candidate", "missingness_p",
               "worst", "sensitivity_delta", "sensitivity_ci_low", "sensitivity_ci_high", "sensitivity_p", "test"]
#: Exit code of `compare --fail-if` when a row fails the gate (2 is a usage or data error).
GATE_FAILED = 3


def register(sub: argparse._SubParsersAction) -> None:
    compare = sub.add_parser("compare", help="compare models on a run: paired deltas, bootstrap intervals, p-values")
    compare.add_argument("run_id", type=int, metavar="RUN", nargs="?",
                         help="the run; without it, --baseline and --candidate are RUN:MODEL (across runs)")
    compare.add_argument("--baseline", required=True, metavar="MODEL",
                         help="the model the others are compared to (RUN:MODEL without a RUN)")
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
    compare.add_argument("--holm-undirected", action="store_true",
                         help="put scores without a better direction (lengths) in the Holm family too")
    compare.add_argument("--plan", type=float, metavar="DIFF",
                         help="a difference you care about: adds n_needed, the datums that detect it at 80%% power")
    compare.add_argument("--fail-if", choices=[WORSE, INCONCLUSIVE], metavar="worse|inconclusive",
                         help=f"exit {GATE_FAILED} when a score is significantly worse after Holm (worse), or also "
                              "when a comparison is inconclusive (inconclusive); for CI")
    compare.add_argument("--out", metavar="FILE", help="write the table (.csv, .jsonl, .parquet)")
    compare.add_argument("--by", metavar="COLUMN",
                         help="compare within each slice of a metadata column (one Holm family over the slices)")
    compare.add_argument("--calibrate", action="store_true",
                         help="also report bias-corrected (PPI++) deltas and means from the run's human labels")
    compare.add_argument("--human-column", metavar="COL", help="with --calibrate: a human column of the dataset "
                                                               "counted as labels")
    add_cross_run_arguments(compare)
    add_db_argument(compare)
    compare.set_defaults(handler=_compare)

    agree = sub.add_parser("agreement", help="agreement of each score with a human label or score column")
    agree.add_argument("run_id", type=int, metavar="RUN")
    agree.add_argument("--human-column", metavar="COL",
                       help="metadata column with the human value (without it: the run's stored labels)")
    agree.add_argument("--labels", action="store_true",
                       help="the full report from stored labels (with --human-column as one more annotator): "
                            "kappa / weighted kappa / Spearman and Kendall with intervals, confusion matrix, "
                            "disagreements, Krippendorff's alpha, bias-corrected means")
    agree.add_argument("--kind", choices=["label", "score"], default="score",
                       help="score: Spearman and Pearson; label: Cohen's kappa (default: %(default)s)")
    agree.add_argument("--threshold", type=float, default=None,
                       help="for labels, a value >= this counts as positive (default: the middle of each score's "
                            "own range: 0.5 for 0-1 scores, 3 for a 1-5 scale)")
    agree.add_argument("--human-threshold", type=float, default=None,
                       help="for numeric human labels on another scale, a value >= this is positive "
                            "(default: the score's threshold)")
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
    if is_cross_run(args):
        return compare_runs(args)
    store = open_store(args, read_only=True)
    if args.by:
        return _compare_by(args, store)
    pairwise = pairwise_summary(store, args.run_id, confidence=args.confidence, seed=args.seed)
    try:
        frame = compare_models(store, args.run_id, args.baseline, args.candidate, scores=_scores(args.scores),
                               resamples=args.resamples, seed=args.seed, tie_tolerance=args.tie_tolerance,
                               holm=not args.no_holm, confidence=args.confidence,
                               directions=_directions(args.direction), holm_undirected=args.holm_undirected,
                               plan=args.plan)
    except ParameterError:
        if pairwise.empty or args.scores:  # scores asked for by name are always answered, never skipped
            raise
        frame = None  # a run of the pairwise judge alone has nothing else to compare
    if frame is not None:
        _print_comparison(args, frame)
    if not pairwise.empty:
        _print_pairwise(pairwise)
    if frame is not None:
        print_comparison(store, args.run_id, args.baseline, frame.attrs["candidates"], resamples=args.resamples,
                         confidence=args.confidence, seed=args.seed)
    if args.calibrate and frame is not None:
        print_calibrated(store, args.run_id, args.baseline, frame.attrs["candidates"], frame.attrs["scores"],
                         args.human_column)
    if args.out:
        if frame is not None:
            out = frame.rename(columns={"score": "metric"})
            out = out[[c for c in OUT_COLUMNS if c in out.columns] + (["n_needed"] if "n_needed" in out else [])]
        else:
            out = pairwise
        print(f"wrote {write_table(out, args.out)} ({len(out)} rows)")
    return _gate(frame, args.fail_if) if frame is not None else 0


def _print_comparison(args: argparse.Namespace, frame: pd.DataFrame) -> None:
    attrs = frame.attrs
    print(f"run {args.run_id}: baseline {args.baseline}; {len(attrs['candidates'])} candidate(s), "
          f"{len(attrs['scores'])} score(s); {attrs['resamples']} resamples, seed {attrs['seed']}")
    family = frame[frame["family"] != APART]
    apart = frame[frame["family"] == APART]
    if not family.empty:
        print(_table(family, attrs["confidence"], attrs["holm"]).to_string(index=False))
    if not apart.empty:
        print("\nScores without a better direction, listed apart (not in the Holm family; unadjusted p):")
        print(_table(apart, attrs["confidence"], False).to_string(index=False))
    _sensitivity(frame)
    _legend(frame, attrs)


def _print_pairwise(summary: pd.DataFrame) -> None:
    confidence = summary.attrs["confidence"]
    shown = pd.DataFrame({
        "candidate": summary["candidate"], "baseline": summary["baseline"],
        "W/T/L": [f"{w}/{t}/{l}" for w, t, l in zip(summary["wins"], summary["ties"], summary["losses"])],
        "flips": summary["order_inconsistent"], "unscored": summary["unscored"],
        "win rate": summary["win_rate"].map(_num),
        f"{confidence:.0%} CI": [_interval(lo, hi) for lo, hi in zip(summary["ci_low"], summary["ci_high"])],
        "flip rate": summary["flip_rate"].map(lambda v: "-" if math.isnan(v) else f"{v:.2f}"),
        "longer preferred": [f"{v:.2f} of {n}" if n else "-" for v, n in
                             zip(summary["longer_preferred"], summary["length_verdicts"])],
    })
    print("\nPairwise preference (the judge asked in both orders; a verdict counts only when both agree):")
    print(shown.to_string(index=False))
    print("W/T/L: pairs the candidate won / tied / lost in both orders; flips: the orders disagreed (counted as "
          "ties). win rate: mean cell (1 win, 0.5 tie or flip, 0 loss) with its interval (the small-sample rule of docs/statistics.md). "
          "longer preferred: share of single-order verdicts that picked the longer answer (length bias near 1).")


def _legend(frame: pd.DataFrame, attrs: dict) -> None:
    alpha = attrs["alpha"]
    scales = [f"{score} {text}" for score in attrs["scores"] if (text := scale_text(score))]
    if scales:
        print("Scales: " + "; ".join(scales) + ".")
    p_used = "p (Holm), Holm-adjusted over the family" if attrs["holm"] else "p, unadjusted"
    print(f"verdict: better / worse when {p_used} < {alpha:g}, in the score's direction; not significant otherwise "
          "(which is not 'no difference': the CI says how large a difference is still possible); inconclusive when "
          "fewer than 2 datums pair up, when the models were scored on different datums "
          f"(exact McNemar p < {alpha:g} on 'has a score'), or a directionless score differs.")
    print(f"delta = candidate - baseline over datums scored for both; {attrs['confidence']:.0%} CI (unadjusted): "
          f"{attrs['ci_method']}.")
    for row in frame.itertuples():
        if row.ci_note:
            print(f"too few, {row.candidate} / {row.score}: {row.ci_note}")
    print("p: two-sided paired sign-flip permutation test: exact when at most 20 datums differ, else Monte Carlo "
          "with enough draws to resolve the family, or its normal approximation for large samples (test column "
          "of --out).")
    print(f"mde: the difference detected with 80% power at alpha {alpha:g} for the observed spread of the paired "
          "differences (paired t power).")
    lower = sorted(frame.loc[frame["direction"] == "lower", "score"].unique())
    print("W/T/L: datums where the candidate is better / tied / worse in each score's direction"
          + (f" (lower is better: {', '.join(lower)})." if lower else "."))
    print("base / cand.: scored/unscored/empty/missing datums of each model (empty: empty predictions; "
          "missing: no cell).")
    if attrs.get("plan") is not None:
        print(f"n needed: datums that detect a difference of {attrs['plan']:g} with 80% power at alpha {alpha:g}, "
              "for each row's observed spread.")
    if attrs["undeclared"]:
        print(f"Direction not declared for {', '.join(attrs['undeclared'])}: counted as higher is better "
              "(set it with --direction SCORE=lower).")
    if attrs["note"]:
        print(attrs["note"])
    for warning in attrs.get("warnings", []):
        print(f"warning: {warning}")


def _sensitivity(frame: pd.DataFrame) -> None:
    """One line per row whose verdict missingness made inconclusive: the comparison with worst values filled in."""
    for row in frame.itertuples():
        if not (row.verdict == INCONCLUSIVE and "different datums" in row.why):
            continue
        print(f"sensitivity {row.candidate} / {row.score}: counting missing and unscored cells as {_num(row.worst)}, "
              f"delta {_num(row.sensitivity_delta, signed=True)} [{_num(row.sensitivity_ci_low, signed=True)}, "
              f"{_num(row.sensitivity_ci_high, signed=True)}], p {_p(row.sensitivity_p)} over "
              f"{row.scored_baseline + row.unscored_baseline + row.missing_baseline} datums ({row.why}).")


def _gate(frame: pd.DataFrame, fail_if: str | None) -> int:
    if fail_if is None:
        return 0
    failing = [f"{r.candidate} / {r.score}: {r.verdict}" for r in frame.itertuples()
               if fails(r.verdict, r.family, fail_if, r.direction)]
    if not failing:
        print(f"gate --fail-if {fail_if}: passed")
        return 0
    print(f"gate --fail-if {fail_if}: FAILED, {GATES[fail_if]} ({'; '.join(failing)})")
    return GATE_FAILED


def _table(frame: pd.DataFrame, confidence: float, holm: bool) -> pd.DataFrame:
    shown = pd.DataFrame({
        "candidate": frame["candidate"], "score": frame["score"], "dir": frame["direction"], "n": frame["n"],
        "baseline": frame["baseline_mean"].map(_num), "cand.": frame["candidate_mean"].map(_num),
        "delta": frame["delta"].map(lambda v: _num(v, signed=True)),
        f"{confidence:.0%} CI": [_interval(lo, hi) for lo, hi in zip(frame["ci_low"], frame["ci_high"])],
        "p": frame["p_value"].map(_p),
    })
    if holm:
        shown["p (Holm)"] = frame["p_adjusted"].map(_p)
    shown["verdict"] = [f"{v}: {w}" if w == NO_SCORED_DATUMS else v for v, w in zip(frame["verdict"], frame["why"])]
    shown["mde"] = frame["mde"].map(_num)
    if "n_needed" in frame:
        shown["n needed"] = frame["n_needed"].map(lambda v: "-" if math.isnan(v) else "more than 1e8"
                                                  if math.isinf(v) else f"{int(v)}")
    shown["W/T/L"] = [f"{w}/{t}/{l}" for w, t, l in zip(frame["wins"], frame["ties"], frame["losses"])]
    for role, title in (("baseline", "base s/u/e/m"), ("candidate", "cand. s/u/e/m")):
        shown[title] = [f"{s}/{u}/{e}/{m}" for s, u, e, m in zip(
            frame[f"scored_{role}"], frame[f"unscored_{role}"], frame[f"empty_{role}"], frame[f"missing_{role}"])]
    return shown


def _compare_by(args: argparse.Namespace, store) -> int:
    """`compare --by COLUMN`: the paired comparison within each slice, one Holm family over all of them."""
    from ..compare.slices import compare_by

    frame = compare_by(store, args.run_id, args.baseline, args.by, args.candidate, scores=_scores(args.scores),
                       resamples=args.resamples, seed=args.seed, tie_tolerance=args.tie_tolerance,
                       holm=not args.no_holm, confidence=args.confidence, directions=_directions(args.direction))
    attrs = frame.attrs
    print(f"run {args.run_id}: baseline {args.baseline}, by {args.by} ({len(attrs['slices'])} slices); "
          f"{attrs['resamples']} resamples, seed {attrs['seed']}")
    shown = _table(frame, attrs["confidence"], attrs["holm"])
    shown.insert(0, args.by, frame["slice"])
    print(shown.drop(columns=[c for c in shown.columns if c.endswith("s/u/e/m")]).to_string(index=False))
    if attrs["holm"]:
        print(f"p (Holm): adjusted over one family of {attrs['family']} comparisons ({len(attrs['slices'])} slices x "
              f"{len(attrs['candidates'])} candidate(s) x the scores with a better direction).")
    print(f"verdict: better / worse when the p used < {attrs['alpha']:g}; not significant otherwise; {RULE}")
    for row in frame.itertuples():
        if row.ci_note:
            print(f"too few, {row.slice} / {row.candidate} / {row.score}: {row.ci_note}")
    for warning in sorted({w for w in frame["warnings"] if w}):
        print(f"warning: {warning}")
    never = attrs.get("never_scored") or []
    if never:
        print(f"not compared by slice, no cell scored: {', '.join(never)} (inconclusive in `compare` without --by)")
    if args.out:
        print(f"wrote {write_table(frame, args.out)} ({len(frame)} rows)")
    if never and args.fail_if == "inconclusive":
        print(f"gate --fail-if inconclusive: FAILED, {GATES['inconclusive']} ({'; '.join(never)}: no scored datums)")
        return GATE_FAILED
    return _gate(frame, args.fail_if)


def _interval(low: float, high: float) -> str:
    if low is None or math.isnan(low) or high is None or math.isnan(high):
        return "too few"
    return f"[{_num(low, signed=True)}, {_num(high, signed=True)}]"


def _num(value: float, signed: bool = False) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:+.4f}" if signed else f"{value:.4f}"


def _p(value: float) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def _agreement(args: argparse.Namespace) -> int:
    if args.labels or args.human_column is None:
        return print_agreement(open_store(args, read_only=True), args.run_id, _scores(args.scores),
                               args.human_column, args.out)
    frame = judge_human_agreement(open_store(args, read_only=True), args.run_id, args.human_column, kind=args.kind,
                                  threshold=args.threshold, positive_label=args.positive_label,
                                  scores=_scores(args.scores), human_threshold=args.human_threshold)
    print(frame.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if args.kind == "label":
        human = (f"equal to {args.positive_label!r}" if args.positive_label
                 else f"a number >= {args.human_threshold:g}" if args.human_threshold is not None
                 else "a number >= the score's threshold")
        cuts = "; ".join(f"{score} >= {cut:g} ({scale_text(score) or 'range not declared'})"
                         for score, cut in frame.attrs["thresholds"].items())
        print(f"Cohen's kappa: a score counts as positive when {cuts}; a human value when {human}.")
    else:
        print("Spearman and Pearson correlations (scipy) with two-sided p-values; "
              "expect negative values for lower-is-better scores.")
    print("n: datums with both a score and a human value.")
    if frame.attrs.get("skipped"):
        print(f"{frame.attrs['skipped']} human value(s) could not be read and were left out.")
    if args.out:
        print(f"wrote {write_table(frame, args.out)} ({len(frame)} rows)")
    return 0
