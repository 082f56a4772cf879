"""Plain-text tables for the terminal."""

from __future__ import annotations

from typing import Sequence

from ..compare.jury import PANEL_LEGEND, panel_lines, panel_report
from ..compare.pairwise import pairwise_summary
from ..compare.small_sample import RULE
from ..errors import ParameterError
from ..judge.metrics.pairwise_preference import NAME as PAIRWISE
from ..store import Store
from ..summary import judge_warnings, jury_summary, scale_text, summary_table, unscored_lines, unstable_cells


#: Exit code of `run --fail-if-unscored-above` when the gate fails (as `compare --fail-if`).
UNSCORED_GATE_FAILED = 3


def unscored_gate(store: Store, run_id: int, fraction: float) -> int:
    """0, or :data:`UNSCORED_GATE_FAILED` when any (model, score) lacks a score on more than ``fraction`` of datums."""
    if not 0.0 <= fraction <= 1.0:
        raise ParameterError(f"--fail-if-unscored-above takes a fraction between 0 and 1, got {fraction!r}")
    counts = store.score_counts(run_id)
    baselines = set(pairwise_summary(store, run_id, resamples=1)["baseline"])
    counts = counts[~((counts["score"] == PAIRWISE) & counts["model"].isin(baselines))]  # unscored by design
    counts["share"] = (counts["n_unscored"] + counts["n_missing"]) / counts["n_datums"].where(counts["n_datums"] > 0)
    over = counts[counts["share"].fillna(0) > fraction]
    if over.empty:
        print(f"gate --fail-if-unscored-above {fraction:g}: passed")
        return 0
    worst = over.sort_values("share", ascending=False, kind="stable").head(5)
    listed = "; ".join(f"{r.model} / {r.score}: {r.share:.1%} ({r.n_unscored} unscored, {r.n_missing} missing)"
                       for r in worst.itertuples())
    print(f"gate --fail-if-unscored-above {fraction:g}: FAILED, {len(over)} score(s) over the limit: {listed}")
    return UNSCORED_GATE_FAILED


def print_summary(store: Store, run_id: int, models: Sequence[str] | None = None) -> None:
    """The run's summary table (of ``models`` when given, default all), legend, reasons and warnings."""
    table = summary_table(store, run_id, models)
    if table.empty:
        print("no scores")
        return
    print(table.to_string())
    print("Each cell: mean [95% interval of the mean] scored/unscored/empty/missing datums. " + RULE + " "
          "Unscored and missing cells are not in the mean.")
    for reason in table.attrs.get("too_few", []):
        print(f"too few, {reason}")
    scales = [f"{score} {text}" for score in table.index if (text := scale_text(str(score)))]
    if scales:
        print("Scales: " + "; ".join(scales) + ".")
    for score, line in unscored_lines(store, run_id).items():
        print(f"why unscored, {score}: {line}")
    for warning in judge_warnings(store, run_id):
        print(f"warning: {warning}")
    panel = panel_lines(panel_report(store, run_id))
    if panel:
        print("\n".join([*panel, PANEL_LEGEND]))
    print_jury(store, run_id)


def print_jury(store: Store, run_id: int) -> None:
    """A panel or repeated run: per score, each model's unstable cells and (a panel) each member's mean."""
    unstable = unstable_cells(store, run_id)
    for score, part in unstable.groupby("score", sort=True):
        print(f"unstable cells, {score}: " + ", ".join(f"{r.model} {r.unstable} of {r.scored} scored"
                                                      for r in part.itertuples()) + " (their votes disagree)")
    members = jury_summary(store, run_id)
    if members["judge"].nunique() < 2:
        return
    for (score, model), part in members.groupby(["score", "model"], sort=True):
        print(f"per judge, {score}, {model}: " + ", ".join(
            f"{r.judge} {'-' if r.mean != r.mean else f'{r.mean:.4g}'} ({r.n_scored} votes"
            f"{f', {r.n_unscored} unscored' if r.n_unscored else ''})" for r in part.itertuples()))
