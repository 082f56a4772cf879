"""Results page: one run's statistics per model and score, its distributions, and rows to drill into.

Every number comes from the store (SQL aggregates, binned and sampled in DuckDB)
through :mod:`ui.data`; this module only lays out widgets, tables and figures.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pandas as pd
import streamlit as st

from textgen_core.registry import direction_of
from textgen_core.summary import scale_text

from . import calibrated, charts, data, panel, score_warnings, slices
from .address import Field, kept
from .classification import classification_section
from .failures import failure_modes_section
from .pairwise import pairwise_section
from .report_button import report_button
from .pickers import (MANY_MODELS, keep_choice, keep_choices, many_models, open_requested, pick_run, runs_or_hint,
                      score_range)
from .state import (RESULTS_CHART, RESULTS_MODELS, RESULTS_OPEN, RESULTS_ROWS, RESULTS_RUN, RESULTS_SCORE,
                    RESULTS_SLICE, RESULTS_UNSCORED, results_range)
from .widgets import show_table

CHARTS = ("Histogram", "Box", "Violin")
#: The summary's columns, counts and the reason they are unscored before the spread: visible at 1400 px.
SUMMARY_COLUMNS = ["model", "score", "better", "scale", "mean", "ci_low", "ci_high", "n_scored", "n_unscored", "why",
                   "n_empty", "n_missing", "median", "std", "ci_method", "metric"]
ARROWS = {"higher": "↑ higher", "lower": "↓ lower", "none": ""}


#: The page's state in its address: ``?run=3&models=a&score=bleu&chart=Box&unscored=1``.
ADDRESS = (Field("run", RESULTS_RUN, "int"), Field("models", RESULTS_MODELS, "list"), Field("score", RESULTS_SCORE),
           Field("chart", RESULTS_CHART), Field("unscored", RESULTS_UNSCORED, "bool"), Field("slice", RESULTS_SLICE))


def render() -> None:
    """The whole Results page, its state read from and written to the address."""
    st.title("Results")
    with kept(ADDRESS):
        _render()


def _render() -> None:
    runs = runs_or_hint()
    if runs is None:
        return
    run_id = pick_run(runs, RESULTS_RUN, resets=(RESULTS_MODELS, RESULTS_SCORE))
    open_requested(run_id, RESULTS_OPEN)
    run = data.run(run_id)
    if run["status"] != "finished":
        st.info(f"Run status: {run['status']}. Figures cover the cells stored so far.")
    if len(run["models"]) > MANY_MODELS:  # its best few by default, every figure over the chosen ones only
        models = all_models = many_models(RESULTS_MODELS, run, data.scored_counts(run_id))
        summary = data.summary(run_id, models) if models else pd.DataFrame()
    else:
        summary = data.summary(run_id)
        if summary.empty:
            st.info("This run has no scores yet.")
            return
        present = set(summary["model"])
        all_models = list(dict.fromkeys(m for m in run["models"] if m in present))
        keep_choices(RESULTS_MODELS, all_models)
        models = st.multiselect("Models", all_models, key=RESULTS_MODELS, persist_state="session")
    if not models:
        st.warning("Pick at least one model.")
        return
    if summary.empty:
        st.info("This run has no scores yet.")
        return
    shown = summary_table(summary[summary["model"].isin(models)], run["metrics"], all_models)
    why, warnings = data.review(run_id)
    summary_section(shown.assign(why=[why.get(s, "") for s in shown["score"]]), data.aggregates(run_id), models)
    report_button(run_id)
    score_warnings.show(run_id, [score_warnings.parse(w) for w in warnings] +
                        score_warnings.few_labels(score_warnings.label_counts(run_id)))
    panel.results_section(run_id, models, summary)
    calibrated.results_section(run_id, models)
    pairwise_section(run_id)
    failure_modes_section(run_id, models)
    if "classification" in run["metrics"]:
        classification_section(run_id, models)
    scores = list(dict.fromkeys(shown["score"]))
    keep_choice(RESULTS_SCORE, scores)
    score = st.selectbox("Score", scores, key=RESULTS_SCORE, persist_state="session")
    column = slices.pick_slice(run, RESULTS_SLICE)
    if column:
        slices.results_section(run_id, column, models, score)
    low, high = score_range(shown[shown["score"] == score], results_range(score))
    colors = charts.model_colors(all_models)
    charts_section(run_id, score, models, low, high, colors, shown)
    rows_section(run_id, score, models, low, high)


def summary_table(summary: pd.DataFrame, metrics: list[str], models: list[str]) -> pd.DataFrame:
    """Summary rows in the run's metric and model order, with each score's better direction."""
    table = summary.copy()
    table.insert(3, "better", [ARROWS.get(direction_of(s), "") for s in table["score"]])
    table.insert(4, "scale", [scale_text(s) for s in table["score"]])
    metric_rank = {name: i for i, name in enumerate(metrics)}
    model_rank = {name: i for i, name in enumerate(models)}
    table["_m"] = table["metric"].map(lambda m: metric_rank.get(m, len(metrics)))
    table["_o"] = table["model"].map(lambda m: model_rank.get(m, len(models)))
    return table.sort_values(["_m", "score", "_o"], kind="stable").drop(columns=["_m", "_o"]).reset_index(drop=True)


def summary_section(summary: pd.DataFrame, aggregates: pd.DataFrame, models: list[str]) -> None:
    st.subheader("Summary")
    number = st.column_config.NumberColumn
    table = summary[SUMMARY_COLUMNS]
    show_table(table, hide_index=True, height=min(600, 38 + 35 * len(table)), column_config={
        "scale": st.column_config.TextColumn("scale", width="small"),
        "why": st.column_config.TextColumn("why unscored", width="large"),
        "mean": number("mean", format="%.4f"), "median": number("median", format="%.4f"),
        "std": number("std", format="%.4f"), "ci_low": number("95% CI low", format="%.4f"),
        "ci_high": number("95% CI high", format="%.4f"), "ci_method": st.column_config.TextColumn("interval"),
        "n_scored": number("scored"), "n_unscored": number("unscored"), "n_empty": number("empty"),
        "n_missing": number("missing"),
    }, placeholder="–")
    st.caption("Means are over scored cells only. Per model and score: scored + unscored + missing (no cell) = "
               "the dataset's datums; empty counts empty predictions, whatever the metric made of them. The "
               "interval stays in the score's range: Wilson for 0/1 scores, else bootstrap percentile (the t interval "
               "clipped to the range from 1,000 values on); "
               "'too few' below two scored values. why unscored: the reasons of the unscored cells, grouped; the "
               "pairwise preference's baseline is unscored by design, not a failure.")
    corpus = aggregates[aggregates["model"].isin(models)] if not aggregates.empty else aggregates
    if not corpus.empty:
        st.caption("Corpus-level scores (computed over all of a model's rows, not averaged)")
        # the score as a column of its own: an index column is drawn narrow and clipped "precision_macro",
        # "precision_micro" and "precision_weighted" into three identical "precisio" rows (issue 28)
        table = corpus.pivot(index="score", columns="model", values="value").reset_index()
        show_table(table, keep=models, hide_index=True, placeholder="–",
                   column_config={"score": st.column_config.TextColumn("Corpus score", width="medium"),
                                  **{m: number(format="%.4f") for m in models}})


def charts_section(run_id: int, score: str, models: list[str], low: float | None, high: float | None,
                   colors: dict[str, str], summary: pd.DataFrame) -> None:
    st.subheader("Distributions")
    keep_choice(RESULTS_CHART, CHARTS)
    kind = st.radio("Chart", CHARTS, horizontal=True, key=RESULTS_CHART, persist_state="session")
    left, right = st.columns(2)
    with left:
        st.plotly_chart(distribution_figure(kind, run_id, score, models, low, high, colors), key="results.dist")
    with right:
        length = data.distribution("length", run_id, score, models=models, low=low, high=high, size=12)
        st.plotly_chart(charts.length_figure(length, score, colors), key="results.length")
    st.plotly_chart(charts.means_figure(summary, score, colors), key="results.means")


def distribution_figure(kind: str, run_id: int, score: str, models: list[str], low: float | None,
                        high: float | None, colors: dict[str, str]) -> Any:
    """The chosen distribution figure, from SQL-binned counts, SQL quartiles or a bounded sample."""
    bounds = {"models": models, "low": low, "high": high}
    if kind == "Box":
        return charts.box_figure(data.distribution("box", run_id, score, **bounds), score, colors)
    if kind == "Violin":
        sample = data.distribution("sample", run_id, score, size=2000, **bounds)
        return charts.violin_figure(sample, score, colors)
    return charts.histogram_figure(data.distribution("histogram", run_id, score, size=30, **bounds), score, colors)


def rows_section(run_id: int, score: str, models: list[str], low: float | None, high: float | None) -> None:
    st.subheader("Rows")
    direction = direction_of(score)
    unscored = st.checkbox("Only unscored rows", key=RESULTS_UNSCORED, persist_state="session")
    order = "desc" if direction == "lower" else "asc"
    rows = data.find_rows(run_id, score=score, models=models, low=low, high=high, unscored=unscored, order=order)
    total = int(rows["n_matches"].iloc[0]) if not rows.empty else 0
    what = "unscored" if unscored else "worst first" if direction != "none" else "lowest first"
    st.caption(f"{total:,} {'row' if total == 1 else 'rows'}, {what}; showing {len(rows)}. Select a row to open it in Explore.")
    columns = ["datum_id", "model", "reason" if unscored else "value", "query", "prediction"]
    show_table(rows[columns], hide_index=True, key=RESULTS_ROWS, on_select=partial(_pick, list(rows["datum_id"])),
                 selection_mode="single-row", column_config={"value": st.column_config.NumberColumn(format="%.4f")},
                 placeholder="–")


def _pick(datum_ids: list[str]) -> None:
    """Selection callback of the rows table: remember the datum to open."""
    selected = st.session_state[RESULTS_ROWS].selection.rows
    if selected and selected[0] < len(datum_ids):
        st.session_state[RESULTS_OPEN] = datum_ids[selected[0]]

