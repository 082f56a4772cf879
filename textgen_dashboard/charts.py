"""Plotly figure builders for the Results page: pure functions of small, pre-aggregated DataFrames.

The store bins, counts and samples in SQL; these functions only draw. They import
plotly and pandas, never streamlit, so tests call them directly. Model names are
data: they are HTML-escaped before plotly sees them (plotly renders a subset of HTML
in trace names and hover text).
"""

from __future__ import annotations

import html
from typing import Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

PALETTE: tuple[str, ...] = tuple(qualitative.Plotly)
#: Ticks as people read them: at most 4 decimals, no trailing zeros (never 0.7999999999999999334 or 8.68e-234).
_TICKS = ".4~f"
_LAYOUT = dict(margin=dict(l=10, r=10, t=40, b=10), legend_title_text="model", height=360,
               xaxis_tickformat=_TICKS, yaxis_tickformat=_TICKS)


def label(text: object) -> str:
    """A data value made safe to show as a plotly name or hover text."""
    return html.escape(str(text), quote=False)


def model_colors(models: Sequence[str]) -> dict[str, str]:
    """One stable colour per model, in the order given (the run's model order)."""
    return {model: PALETTE[i % len(PALETTE)] for i, model in enumerate(models)}


def _colors(frame: pd.DataFrame, colors: dict[str, str] | None) -> dict[str, str]:
    models = list(dict.fromkeys(frame["model"])) if "model" in frame else []
    return colors or model_colors(models)


def _empty(title: str) -> go.Figure:
    figure = go.Figure()
    figure.update_layout(title=title, **_LAYOUT)
    figure.add_annotation(text="no scored values", showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    return figure


def histogram_figure(bins: pd.DataFrame, score: str, colors: dict[str, str] | None = None) -> go.Figure:
    """Overlaid bars from pre-binned counts (model, lo, hi, count)."""
    title = f"{label(score)}: distribution"
    if bins.empty:
        return _empty(title)
    colors = _colors(bins, colors)
    figure = go.Figure()
    low, high = float(bins["lo"].min()), float(bins["hi"].max())
    constant = high <= low  # every scored value the same: one bar of a visible width, and a line that says so
    for model, part in bins.groupby("model", sort=False):
        centre = (part["lo"] + part["hi"]) / 2
        width = part["hi"] - part["lo"] if not constant else [max(abs(low) * 0.1, 0.1)] * len(part)
        figure.add_trace(go.Bar(
            x=centre, y=part["count"], width=width, name=label(model), opacity=0.6,
            marker_color=colors.get(model), customdata=part[["lo", "hi"]].to_numpy(),
            hovertemplate="[%{customdata[0]:.4g}, %{customdata[1]:.4g}]: %{y} rows<extra>%{fullData.name}</extra>",
        ))
    figure.update_layout(title=title, barmode="overlay", xaxis_title=label(score), yaxis_title="rows", **_LAYOUT)
    if constant:
        figure.add_annotation(text=f"every scored value is {low:.4g}: nothing to spread", showarrow=False,
                              x=0.5, y=1.0, xref="paper", yref="paper", yanchor="bottom")
    return figure


def box_figure(stats: pd.DataFrame, score: str, colors: dict[str, str] | None = None) -> go.Figure:
    """Box plots from quartiles computed in SQL (model, n, q1, median, q3, mean, lowerfence, upperfence)."""
    title = f"{label(score)}: quartiles, whiskers at 1.5 IQR"
    if stats.empty:
        return _empty(title)
    colors = _colors(stats, colors)
    figure = go.Figure()
    for row in stats.itertuples(index=False):
        name = label(row.model)
        figure.add_trace(go.Box(
            x=[name], q1=[row.q1], median=[row.median], q3=[row.q3], mean=[row.mean],
            lowerfence=[row.lowerfence], upperfence=[row.upperfence], name=name,
            marker_color=colors.get(row.model), boxpoints=False,
            hovertext=[f"n={row.n}"],
        ))
    figure.update_layout(title=title, yaxis_title=label(score), showlegend=False, **_LAYOUT)
    return figure


def violin_figure(sample: pd.DataFrame, score: str, colors: dict[str, str] | None = None) -> go.Figure:
    """Violins of a bounded per-model sample of values (model, value)."""
    title = f"{label(score)}: density (sample)"
    if sample.empty:
        return _empty(title)
    colors = _colors(sample, colors)
    figure = go.Figure()
    for model, part in sample.groupby("model", sort=False):
        name = label(model)
        figure.add_trace(go.Violin(
            x=[name] * len(part), y=part["value"], name=name, line_color=colors.get(model),
            box_visible=True, meanline_visible=True, points=False, spanmode="hard",
        ))
    figure.update_layout(title=title, yaxis_title=label(score), showlegend=False, **_LAYOUT)
    return figure


def length_figure(frame: pd.DataFrame, score: str, colors: dict[str, str] | None = None) -> go.Figure:
    """Mean score per prediction-length bin (model, chars, mean, n, min_chars, max_chars)."""
    title = f"{label(score)} by prediction length"
    if frame.empty:
        return _empty(title)
    colors = _colors(frame, colors)
    figure = go.Figure()
    for model, part in frame.groupby("model", sort=False):
        figure.add_trace(go.Scatter(
            x=part["chars"], y=part["mean"], mode="lines+markers", name=label(model),
            line_color=colors.get(model), customdata=part[["n", "min_chars", "max_chars"]].to_numpy(),
            hovertemplate=("%{customdata[1]}–%{customdata[2]} characters: mean %{y:.4g} "
                           "(n=%{customdata[0]})<extra>%{fullData.name}</extra>"),
        ))
    figure.update_layout(title=title, xaxis_title="prediction length (characters, mean of the bin)",
                         yaxis_title=f"mean {label(score)}", **_LAYOUT)
    return figure


def means_figure(summary: pd.DataFrame, score: str, colors: dict[str, str] | None = None) -> go.Figure:
    """Each model's mean of one score with its 95% confidence interval (rows of run_summary)."""
    title = f"{label(score)}: mean and 95% CI"
    rows = summary[(summary["score"] == score) & (summary["n_scored"] > 0)] if not summary.empty else summary
    if rows.empty:
        return _empty(title)
    colors = _colors(rows, colors)
    high = (rows["ci_high"] - rows["mean"]).fillna(0)
    low = (rows["mean"] - rows["ci_low"]).fillna(0)
    figure = go.Figure(go.Scatter(
        x=rows["mean"], y=[label(m) for m in rows["model"]], mode="markers",
        marker=dict(size=10, color=[colors.get(m) for m in rows["model"]]),
        error_x=dict(type="data", symmetric=False, array=high, arrayminus=low),
        customdata=rows[["n_scored", "n_unscored"]].to_numpy(),
        hovertemplate="mean %{x:.4g} (n=%{customdata[0]}, unscored %{customdata[1]})<extra></extra>",
    ))
    figure.update_layout(title=title, xaxis_title=label(score), **{**_LAYOUT, "height": 180 + 40 * len(rows)})
    return figure
