"""Bias-corrected numbers beside the judge's, on Results and Compare, when people labelled cells of the run.

Labels change while people work, so these reads are not cached; they read only
the labelled cells and the labelled scores' values.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd
import streamlit as st

from textgen_core.compare.human_report import calibrated_deltas, calibrated_means

from . import data, score_warnings
from .label_agreement import interval_text, means_table
from .state import COMPARE_CALIBRATE, RESULTS_CALIBRATE
from .widgets import show_table

CAPTION = ("judge: the judge's own numbers with their t interval; calibrated: the prediction-powered estimate "
           "(PPI++, λ power-tuned) with its 95% interval, corrected by the people's labels. Labels picked by "
           "disagreement are left out: they are not a random sample.")


def labelled_scores(run_id: int) -> list[str]:
    return sorted(set(data.store().labels(run_id)["score"]))


def results_section(run_id: int, models: Sequence[str]) -> None:
    """Results: per labelled score and model, the judge-only mean beside the calibrated one."""
    scores = labelled_scores(run_id)
    if not scores:
        st.caption("No human labels for this run: label cells on the Label page to see bias-corrected means.")
        return
    if not st.toggle("Bias-corrected means (from human labels)", value=True, key=RESULTS_CALIBRATE):
        return
    means = calibrated_means(data.store(), run_id, scores)
    means = means[means["model"].isin(models)]
    show_table(means_table(means), hide_index=True)
    _notes(run_id, means)
    st.caption(CAPTION)


def compare_section(run_id: int, baseline: str, candidates: Sequence[str], scores: Sequence[str]) -> None:
    """Compare: per labelled score and candidate, the judge's paired difference beside the calibrated one."""
    labelled = [s for s in scores if s in set(labelled_scores(run_id))]
    if not labelled:
        return
    if not st.toggle("Bias-corrected differences (from human labels)", value=True, key=COMPARE_CALIBRATE):
        return
    deltas = calibrated_deltas(data.store(), run_id, baseline, candidates, labelled)
    show_table(pd.DataFrame({
        "candidate": deltas["candidate"], "score": deltas["score"],
        "judge delta": [interval_text(m, lo, hi) for m, lo, hi in zip(
            deltas["judge_delta"], deltas["judge_ci_low"], deltas["judge_ci_high"])],
        "calibrated delta": [interval_text(m, lo, hi) for m, lo, hi in zip(
            deltas["calibrated_delta"], deltas["ci_low"], deltas["ci_high"])],
        "labelled pairs": deltas["n_labels"], "judged pairs": deltas["n_judged"],
    }), hide_index=True)
    _notes(run_id, deltas)
    st.caption("delta = candidate - baseline. " + CAPTION + " A calibrated difference needs datums labelled for "
               "both models.")


def _notes(run_id: int, frame: pd.DataFrame) -> None:
    """Each score's notes (too few labels, labels left out), once, with a link to label more of that score."""
    said = dict.fromkeys((str(s), str(n)) for s, n in zip(frame["score"], frame["note"]) if n)
    score_warnings.show(run_id, [score_warnings.ScoreWarning(
        score, score_warnings.FEW_LABELS if "at least" in note else score_warnings.OTHER, f"{score}: {note}")
        for score, note in said])
