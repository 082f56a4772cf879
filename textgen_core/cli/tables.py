"""Plain-text tables for the terminal."""

from __future__ import annotations

from typing import Sequence

from ..compare.jury import PANEL_LEGEND, panel_lines, panel_report
from ..compare.pairwise import pairwise_summary
from ..errors import ParameterError
from ..judge.metrics.pairwise_preference import NAME as PAIRWISE
from ..store import Store
from ..summary import judge_warnings, scale_text, summary_table, unscored_lines


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
    print("Each cell: mean [95% interval of the mean] scored/unscored/empty/missing datums. Intervals stay in the "
          "score's range (Wilson for 0/1 scores, else bootstrap percentile, or the t interval clipped to the range "
          "from 1,000 values on); 'too few' below two scored values. "
          "Unscored and missing cells are not in the mean.")
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
