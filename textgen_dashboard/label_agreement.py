"""Label page, second tab: the judge against people on one score, and how many more labels are needed.

Numbers come from :mod:`textgen_core.compare.human_report`; labels change while
people work, so these reads are not cached (they read only the labelled cells and
one score's values).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pandas as pd
import streamlit as st

from textgen_core.compare.human_report import agreement_report, calibrated_means, labels_plan
from textgen_core.errors import TextgenError

from . import data
from .compare_agreement import metadata_columns
from .pickers import keep_choice
from .safe_text import plain
from .state import LABEL_DISAGREEMENTS, LABEL_HUMAN_COLUMN, LABEL_OPEN, LABEL_WIDTH
from .widgets import show_table

NONE = "(none)"
STATISTICS = {"kappa": "Cohen's κ", "weighted_kappa": "weighted κ (quadratic)", "spearman": "Spearman ρ",
              "kendall": "Kendall τ-b", "agreement": "raw agreement", "mean_gap": "mean |judge - people|"}


def agreement_section(run_id: int, score: str) -> None:
    """Agreement with intervals, the confusion matrix, disagreements (open in Explore), alpha, calibrated means."""
    run = data.run(run_id)
    columns = [NONE, *metadata_columns(run["dataset_id"])]
    keep_choice(LABEL_HUMAN_COLUMN, columns, NONE)
    picked = st.selectbox("Also count a human column of the dataset as labels", columns, key=LABEL_HUMAN_COLUMN)
    column = None if picked == NONE else picked
    store = data.store()
    try:
        report = agreement_report(store, run_id, score, human_column=column)
        means = calibrated_means(store, run_id, [score], human_column=column)
    except TextgenError as exc:
        st.warning(plain(str(exc)))
        return
    if report.table.empty or report.table["n"].max() == 0:
        st.info(f"No labelled cell of {plain(score)} yet: label some on the first tab.")
        return
    st.subheader(f"{plain(score)}: judge against {len(report.annotators)} annotator(s) ({report.kind})")
    shown = report.table.copy()
    for name in [c for c in STATISTICS if c in shown]:
        if f"{name}_low" in shown:
            shown[name] = [interval_text(v, lo, hi) for v, lo, hi in zip(
                shown[name], shown[f"{name}_low"], shown[f"{name}_high"])]
        else:
            shown[name] = shown[name].map(lambda v: "–" if pd.isna(v) else f"{v:.3f}")
    shown = shown[["model", "n", *[c for c in STATISTICS if c in shown]]].rename(columns=STATISTICS)
    show_table(shown, hide_index=True)
    st.caption("Each statistic with a 95% bootstrap interval over cells. The people's value of a cell is their "
               "mean" + (", rounded to the scale." if report.kind != "continuous" else "."))
    if not report.confusion.empty:
        st.caption("Confusion matrix: rows the judge's value, columns the people's")
        confusion = report.confusion.copy()
        confusion.index = [str(v) for v in confusion.index]
        confusion.columns = [str(v) for v in confusion.columns]
        st.dataframe(confusion)
    disagreements(report.disagreements)
    if report.alpha_units:
        st.metric("Krippendorff's alpha between people", f"{report.alpha:.3f}",
                  help=f"95% interval [{report.alpha_low:.3f}, {report.alpha_high:.3f}] over {report.alpha_units} "
                       "cells labelled by two or more people")
        shown = interval_text(report.alpha, report.alpha_low, report.alpha_high)
        st.caption(f"Krippendorff's alpha with its 95% interval: {shown}, over {report.alpha_units} cells "
                   "labelled by two or more people.")
    calibrated_section(means)
    planner(run_id, score, column)
    from .align import improve_section  # here: alignment imports the judge client (openai), which Results and
    improve_section(run_id, score)      # Compare (they import this module for its tables) do not need


def disagreements(frame: pd.DataFrame) -> None:
    st.subheader("Where the judge and people disagree")
    if frame.empty:
        st.caption("No disagreement among the labelled cells.")
        return
    st.caption(f"{len(frame)} cells, largest gap first. Select a row to open it in Explore.")
    show_table(frame, hide_index=True, key=LABEL_DISAGREEMENTS, on_select=partial(_pick, list(frame["datum_id"])),
                 selection_mode="single-row")


def _pick(datum_ids: list[str]) -> None:
    selected = st.session_state[LABEL_DISAGREEMENTS].selection.rows
    if selected and selected[0] < len(datum_ids):
        st.session_state[LABEL_OPEN] = datum_ids[selected[0]]


def calibrated_section(means: pd.DataFrame) -> None:
    """Judge-only and bias-corrected means side by side."""
    st.subheader("Bias-corrected means")
    if means.empty:
        st.caption("No judge-scored cell to correct.")
        return
    show_table(means_table(means), hide_index=True)
    for note in sorted(set(filter(None, means["note"]))):
        st.warning(plain(note))
    st.caption("judge: the mean of the judge's values with its t interval. calibrated: the prediction-powered "
               "mean (PPI++, λ power-tuned) with its 95% interval, from labels sampled at random or weighted by "
               "their known sampling probabilities.")


def means_table(means: pd.DataFrame) -> pd.DataFrame:
    """model, score, judge-only mean [interval], calibrated mean [interval], lambda, labels, judged cells."""
    return pd.DataFrame({
        "model": means["model"], "score": means["score"],
        "judge only": [interval_text(m, lo, hi) for m, lo, hi in zip(
            means["judge_mean"], means["judge_ci_low"], means["judge_ci_high"])],
        "calibrated": [interval_text(m, lo, hi) for m, lo, hi in zip(means["calibrated"], means["ci_low"],
                                                                  means["ci_high"])],
        "λ": means["lam"].map(lambda v: "–" if pd.isna(v) else f"{v:.2f}"),
        "labels": means["n_labels"], "judged": means["n_judged"],
    })


def planner(run_id: int, score: str, column: str | None) -> None:
    st.subheader("How many labels")
    width = st.number_input("Target half-width of the calibrated interval", min_value=0.0001, value=0.05,
                            step=0.01, format="%g", key=LABEL_WIDTH)
    plan = labels_plan(data.store(), run_id, score, float(width), human_column=column)
    plan = plan.assign(labels_needed=[_count(v) for v in plan["labels_needed"]])
    show_table(plan, hide_index=True)
    st.caption("labels needed: random labels for a 95% interval of ± the target, from the spread of people minus "
               "λ × judge over the labels so far (3 at least), at the λ that needs the fewest (λ planned).")


def interval_text(value: Any, low: Any, high: Any) -> str:
    if pd.isna(value):
        return "–"
    if pd.isna(low) or pd.isna(high):
        return f"{value:.3f}"
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def _count(value: float) -> str:
    if pd.isna(value):
        return "3 labels first"
    return "judge too wide" if value == float("inf") else str(int(value))
