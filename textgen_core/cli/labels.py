"""`textgen-eval labels`: bring people's labels in and out, plan how many are needed; and the agreement report."""

from __future__ import annotations

import argparse
import math

import pandas as pd

from ..compare.human_report import (AgreementReport, agreement_report, calibrated_deltas, calibrated_means,
                                   labels_plan)
from ..compare.intervals import TOO_FEW
from ..compare.labels import export_labels, import_labels
from ..compare.small_sample import MIN_LABELS
from ..errors import ParameterError
from ..export import write_table
from ..summary import scale_text
from .main import add_db_argument, open_store


def register(sub: argparse._SubParsersAction) -> None:
    labels = sub.add_parser("labels", help="human labels of a run: import, export, plan how many are needed")
    verbs = labels.add_subparsers(dest="verb", required=True)
    take = verbs.add_parser("import", help="store labels from a file (columns id, model, value; optional "
                                          "score, annotator, note, sampling and probability: each cell's known "
                                          "inclusion probability, for inverse-probability weights); a file "
                                          "written by 'labels export' comes back as it was")
    take.add_argument("run_id", type=int, metavar="RUN")
    take.add_argument("file", metavar="FILE", help=".csv, .jsonl, .json or .parquet")
    take.add_argument("--score", metavar="NAME", help="the score the labels are on (its scale); needed unless the "
                                                      "file has a score column, and fills its empty cells")
    take.add_argument("--annotator", metavar="NAME", help="who labelled (default: the file's annotator column)")
    take.add_argument("--sampling", choices=["import", "random", "disagreement"], default=None,
                      help="how the labelled cells were picked, for rows the file's sampling column does not say: "
                           "import (assumed a uniformly random sample), random, or disagreement (not random: no "
                           "bias-corrected estimate from them) (default: import)")
    add_db_argument(take)
    take.set_defaults(handler=_import)
    out = verbs.add_parser("export", help="write every label of a run to a file")
    out.add_argument("run_id", type=int, metavar="RUN")
    out.add_argument("--out", required=True, metavar="FILE", help=".csv, .jsonl or .parquet")
    add_db_argument(out)
    out.set_defaults(handler=_export)
    plan = verbs.add_parser("plan", help="labels needed for a bias-corrected interval of a given half-width")
    plan.add_argument("run_id", type=int, metavar="RUN")
    plan.add_argument("--score", required=True, metavar="NAME")
    plan.add_argument("--width", required=True, type=float, metavar="HALF",
                      help="the half-width you want (0.02: mean ± 0.02)")
    plan.add_argument("--human-column", metavar="COL", help="a human column of the dataset counted as labels")
    plan.add_argument("--confidence", type=float, default=0.95, help="interval level (default: %(default)s)")
    add_db_argument(plan)
    plan.set_defaults(handler=_plan)


def _import(args: argparse.Namespace) -> int:
    done = import_labels(open_store(args), args.run_id, args.file, args.score, annotator=args.annotator,
                         sampling=args.sampling)
    scores = ", ".join(f"{name} {n}" for name, n in done.scores.items())
    what = f"of {next(iter(done.scores))}" if len(done.scores) == 1 else f"({scores})"
    kinds = ", ".join(f"{kind} {n}" for kind, n in done.samplings.items())
    print(f"stored {done.count} label(s) {what} for run {args.run_id}; sampling: {kinds}"
          + (". 'import' labels are taken as a uniformly random sample of the run's cells; say --sampling "
             "disagreement if they were picked otherwise" if "import" in done.samplings else ""))
    return 0


def _export(args: argparse.Namespace) -> int:
    frame = export_labels(open_store(args, read_only=True), args.run_id)
    print(f"wrote {write_table(frame, args.out)} ({len(frame)} labels)")
    return 0


def _plan(args: argparse.Namespace) -> int:
    frame = labels_plan(open_store(args, read_only=True), args.run_id, args.score, args.width,
                        human_column=args.human_column, confidence=args.confidence)
    shown = pd.DataFrame({
        "model": frame["model"], "score": frame["score"], "labels": frame["n_labels"], "judged": frame["n_judged"],
        "half-width now": [_num(v) if not math.isnan(v) else TOO_FEW for v in frame["half_width_now"]],
        "labels needed": [_count(v) for v in frame["labels_needed"]],
        "lambda": [_num(v) for v in frame["lam_planned"]],
    })
    print(shown.to_string(index=False))
    for model, why in zip(frame["model"], frame["why"]):
        if why:
            print(f"{model}: {why}")
    print(f"labels needed: labelled cells in all (a uniformly random sample) for a {args.confidence:.0%} "
          f"bias-corrected interval of ± {args.width:g}, from the spread of human - lambda x judge over the labels "
          f"so far, at the lambda that needs the fewest; never fewer than {MIN_LABELS}, and no answer before "
          f"{MIN_LABELS} random labels (docs/statistics.md).")
    return 0


def print_agreement(store, run_id: int, scores: list[str] | None, human_column: str | None,
                    out: str | None) -> int:
    """The judge-against-people report of each labelled score, then the calibrated means."""
    names = scores or sorted(set(store.labels(run_id)["score"]))
    if not names:
        raise ParameterError(f"run {run_id} has no labels yet: label in the dashboard, 'textgen-eval labels import', "
                             "or name a human column (--human-column) with --scores")
    tables = []
    for score in names:
        report = agreement_report(store, run_id, score, human_column=human_column)
        _print_report(report)
        tables.append(report.table.assign(score=score, kind=report.kind))
    means = calibrated_means(store, run_id, names, human_column=human_column)
    if not means.empty:
        print("\nBias-corrected means (PPI++) beside the judge-only means:")
        print(_means_table(means).to_string(index=False))
        for note in sorted(set(filter(None, means["note"]))):
            print(f"note: {note}")
        print("judge: the judge's mean with its t interval; calibrated: prediction-powered mean (PPI++, lambda "
              "power-tuned) with its normal interval, from labels sampled at random (or weighted by their known "
              "probabilities).")
    if out:
        frame = pd.concat(tables, ignore_index=True)
        print(f"wrote {write_table(frame, out)} ({len(frame)} rows)")
    return 0


def print_calibrated(store, run_id: int, baseline: str, candidates: list[str], scores: list[str],
                     human_column: str | None) -> None:
    """`compare --calibrate`: the paired differences and means again, corrected by the people's labels."""
    labelled = set(store.labels(run_id)["score"]) if human_column is None else set(scores)
    chosen = [s for s in scores if s in labelled]
    if not chosen:
        print("\ncalibrated: no score of this comparison has human labels yet (label in the dashboard, or "
              "'textgen-eval labels import')")
        return
    deltas = calibrated_deltas(store, run_id, baseline, candidates, chosen, human_column=human_column)
    print("\nBias-corrected paired differences (PPI++ over datums labelled for both models) beside the judge's:")
    print(pd.DataFrame({
        "candidate": deltas["candidate"], "score": deltas["score"],
        "judge delta": _intervals(deltas, "judge_delta", "judge_ci_low", "judge_ci_high"),
        "calibrated delta": _intervals(deltas, "calibrated_delta", "ci_low", "ci_high"),
        "lambda": deltas["lam"].map(_num), "labelled pairs": deltas["n_labels"], "judged pairs": deltas["n_judged"],
    }).to_string(index=False))
    for note in sorted(set(filter(None, deltas["note"]))):
        print(f"note: {note}")
    means = calibrated_means(store, run_id, chosen, human_column=human_column)
    print("Bias-corrected means beside the judge-only means:")
    print(_means_table(means).to_string(index=False))
    for note in sorted(set(filter(None, means["note"]))):
        print(f"note: {note}")


def print_run_calibration(store, run_id: int, specs: list[str]) -> None:
    """`run --calibrate SCORE=COLUMN`: each score's bias-corrected mean from a human column of the dataset (the
    specs were checked when the arguments were parsed, by ``cli.run.calibrate_spec``)."""
    frames = []
    for spec in specs:
        score, _, column = (part.strip() for part in spec.partition("="))
        frames.append(calibrated_means(store, run_id, [score], human_column=column))
    means = pd.concat(frames, ignore_index=True)
    print("Bias-corrected means (PPI++, the human column as labels) beside the judge-only means:")
    print(_means_table(means).to_string(index=False))
    for note in sorted(set(filter(None, means["note"]))):
        print(f"note: {note}")
    print("The human column is taken as a uniformly random sample of the cells it covers; "
          "'textgen-eval agreement RUN --human-column COL --labels' checks the judge against it.")


def _print_report(report: AgreementReport) -> None:
    scale = scale_text(report.score)
    print(f"\n{report.score} ({scale or 'range not declared'}; {report.kind}): judge against "
          f"{len(report.annotators)} annotator(s)")
    stats = [c for c in report.table.columns if c not in ("model", "n") and not c.endswith(("_low", "_high"))]
    shown = pd.DataFrame({"model": report.table["model"], "n": report.table["n"]})
    for name in stats:
        if f"{name}_low" in report.table:
            shown[name] = [f"{_num(v)} [{_num(lo)}, {_num(hi)}]" for v, lo, hi in zip(
                report.table[name], report.table[f"{name}_low"], report.table[f"{name}_high"])]
        else:
            shown[name] = report.table[name].map(_num)
    print(shown.to_string(index=False))
    what = {"binary": "Cohen's kappa (yes/no)", "ordinal": "quadratic-weighted kappa, plain kappa and Spearman",
            "continuous": "Spearman and Kendall's tau-b"}[report.kind]
    print(f"{what}, each with a 95% bootstrap interval over cells; the people's value of a cell is their mean"
          + (", rounded to the scale" if report.kind != "continuous" else "") + ".")
    if not report.confusion.empty:
        print("confusion (rows: judge, columns: people):")
        print(report.confusion.to_string())
    if not report.disagreements.empty:
        top = report.disagreements.head(10)
        print(f"largest disagreements ({len(report.disagreements)} in all, open them in the dashboard's Explore):")
        print(top.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if report.alpha_units:
        print(f"between people: Krippendorff's alpha {_num(report.alpha)} [{_num(report.alpha_low)}, "
              f"{_num(report.alpha_high)}] over {report.alpha_units} cells labelled by two or more")
    for note in report.notes:
        print(f"note: {note}")


def _intervals(frame: pd.DataFrame, value: str, low: str, high: str) -> list[str]:
    """'value [low, high]' for each row of ``frame``; 'value too few' where there is no interval (notes say why)."""
    return [f"{_num(m)} [{_num(lo)}, {_num(hi)}]" if not (math.isnan(lo) or math.isnan(hi)) else
            f"{_num(m)} {TOO_FEW}" for m, lo, hi in zip(frame[value], frame[low], frame[high])]


def _means_table(means: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "model": means["model"], "score": means["score"],
        "judge": _intervals(means, "judge_mean", "judge_ci_low", "judge_ci_high"),
        "calibrated": _intervals(means, "calibrated", "ci_low", "ci_high"),
        "lambda": means["lam"].map(_num), "labels": means["n_labels"], "judged": means["n_judged"],
    })


def _num(value: float) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4f}"


def _count(value: float) -> str:
    if value is None or math.isnan(value):
        return "-"
    return "judge too wide" if math.isinf(value) else str(int(value))
