"""History page: a named dataset's runs over time (all its versions) per score, with intervals and the runs the
change detector flags, and the leaderboard of every model run on it.

The page is an address: ?dataset=, ?score= and ?model= (repeatable) choose what it shows, and the widgets write
them back. The figure is built by :func:`history_figure`, a pure function tests call directly.
"""

from __future__ import annotations

import math
from typing import Sequence

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from textgen_core.compare.small_sample import RULE
from textgen_core.errors import TextgenError
from textgen_core.over_time.history import history
from textgen_core.over_time.leaderboard import leaderboard

from . import data
from .charts import label, model_colors
from .safe_text import plain
from .widgets import show_table

DATASET, SCORE, MODELS, SEEN = "history.dataset", "history.score", "history.models", "history.seen_params"


def render() -> None:
    """The whole History page."""
    st.title("History")
    versions = data.store().versions.versions()
    if versions.empty:
        st.info("No datasets yet: upload one, evaluate it, and its runs appear here over time.")
        return
    families = list(dict.fromkeys(versions["family"]))
    _apply_query_params(families)
    family = st.selectbox("Dataset", families, key=DATASET,
                          format_func=lambda f: f"{f} ({int((versions['family'] == f).sum())} version(s))")
    try:
        every = history(data.store(), family)
    except TextgenError as exc:
        st.info(str(exc))
        _sync_query_params(family, None, [])
        return
    scores = sorted(every["score"].unique())
    if st.session_state.get(SCORE) not in scores:
        st.session_state[SCORE] = scores[0]
    score = st.selectbox("Score", scores, key=SCORE)
    models = sorted(every["model"].unique())
    st.session_state[MODELS] = [m for m in st.session_state.get(MODELS, models) if m in models] or models
    chosen = st.multiselect("Models", models, key=MODELS)
    _sync_query_params(family, score, chosen)
    shown = every[(every["score"] == score) & every["model"].isin(chosen)]
    st.plotly_chart(history_figure(shown, score), key="history.figure")
    st.caption(f"{every.attrs['confidence']:.0%} intervals. {RULE} A ring marks a run that differs from the "
               "previous run of that model: paired t test on the datums both scored, Holm-adjusted over every "
               f"score and run of the model (false alarms held at {every.attrs['alpha']:g}).")
    few = shown[shown["ci_low"].isna()]
    if len(few):
        st.caption(plain("No interval (too few): " + "; ".join(
            f"{r.run}, {r.model}: {r.interval}" for r in few.itertuples())))
    flagged = every[(every["flag"] != "") & every["model"].isin(chosen)]
    st.subheader(f"Changes flagged: {len(flagged)}")
    if len(flagged):
        show_table(flag_table(flagged), hide_index=True, placeholder="–")
    for note in every.attrs["notes"]:
        st.caption(note)
    st.subheader("Leaderboard")
    _leaderboard(family, score)


def flag_table(flagged: pd.DataFrame) -> pd.DataFrame:
    """The flagged runs as a person reads them."""
    return pd.DataFrame({
        "run": flagged["run"], "model": flagged["model"], "score": flagged["score"], "flag": flagged["flag"],
        "against": [f"run {int(r)}" for r in flagged["previous_run"]], "delta": flagged["delta"].round(4),
        "datums": flagged["n_paired"].astype(int), "p (Holm)": flagged["p_adjusted"].map(lambda p: f"{p:.2g}"),
    })


def history_figure(frame: pd.DataFrame, score: str) -> go.Figure:
    """Points with interval bars per model in run order; hover names run, version and judge; flags ringed."""
    figure = go.Figure()
    order = list(dict.fromkeys(frame["run"]))
    colors = model_colors(list(dict.fromkeys(frame["model"])))
    for model, part in frame.groupby("model", sort=False):
        low = (part["mean"] - part["ci_low"]).where(part["ci_low"].notna())
        high = (part["ci_high"] - part["mean"]).where(part["ci_high"].notna())
        hover = [f"{label(r.run)} (run {r.run_id}), version {r.version}<br>judge: {label(r.judge or 'none')}<br>"
                 f"mean {r.mean:.4f} {_interval(r)}, n = {r.n}" + (f"<br><b>{r.flag}</b> than run "
                                                                  f"{int(r.previous_run)}" if r.flag else "")
                 for r in part.itertuples()]
        figure.add_trace(go.Scatter(
            x=[label(r) for r in part["run"]], y=part["mean"], mode="lines+markers", name=label(model),
            marker=dict(color=colors[model], size=9), line=dict(color=colors[model], width=1),
            error_y=dict(type="data", symmetric=False, array=high, arrayminus=low, visible=True),
            hovertext=hover, hoverinfo="text"))
        rings = part[part["flag"] != ""]
        if len(rings):
            figure.add_trace(go.Scatter(
                x=[label(r) for r in rings["run"]], y=rings["mean"], mode="markers", showlegend=False,
                marker=dict(symbol="circle-open", size=20, color="crimson", line=dict(width=2)), hoverinfo="skip",
                name=f"{label(model)} flagged"))
    figure.update_layout(title=f"{label(score)}: mean per run", xaxis_title="run (oldest first)",
                         yaxis_title=label(score), height=420, margin=dict(l=10, r=10, t=40, b=10),
                         legend_title_text="model")
    figure.update_xaxes(categoryorder="array", categoryarray=[label(r) for r in order])
    return figure


def _interval(row) -> str:
    if isinstance(row.ci_low, float) and math.isfinite(row.ci_low):
        return f"[{row.ci_low:.4f}, {row.ci_high:.4f}]"
    return f"({row.interval})"


def _leaderboard(family: str, score: str) -> None:
    try:
        board = leaderboard(data.store(), family, score)
    except TextgenError as exc:
        st.info(str(exc))
        return
    show_table(pd.DataFrame({
        "rank": board["rank"], "model": board["model"], "standing": board["standing"],
        "mean": board["mean"].round(4), "interval": [_interval(r) for r in board.itertuples()],
        "n": board["n"], "run": board["run"], "version": board["version"]}), hide_index=True, placeholder="–")
    st.caption(f"Each model's latest finished run with {score}; ranks from {board.attrs['resamples']} bootstrap "
               "resamples of the datums. 'first' only where the rank interval is 1-1. Intervals of the means: the "
               "same small-sample rule as above.")
    if not (board["standing"] == "first").any():
        st.caption("No model is first beyond doubt: the best ranks overlap.")


def _apply_query_params(families: Sequence[str]) -> None:
    """Adopt ?dataset=, ?score=, ?model= when they changed since last applied (a shared link)."""
    params = (st.query_params.get("dataset"), st.query_params.get("score"), tuple(st.query_params.get_all("model")))
    if params == st.session_state.get(SEEN):
        return
    st.session_state[SEEN] = params
    dataset, score, models = params
    if dataset in families:
        st.session_state[DATASET] = dataset
    if score:
        st.session_state[SCORE] = score
    if models:
        st.session_state[MODELS] = list(models)


def _sync_query_params(family: str, score: str | None, models: Sequence[str]) -> None:
    wanted = {"dataset": family} | ({"score": score} if score else {}) | ({"model": list(models)} if models else {})
    if st.query_params.to_dict() != {k: (v if isinstance(v, str) else v[-1]) for k, v in wanted.items()} or \
            st.query_params.get_all("model") != list(models):
        st.query_params.from_dict(wanted)
    st.session_state[SEEN] = (family, score, tuple(models))
