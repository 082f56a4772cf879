"""Plotly figures of the Compare page, coloured by the core's verdicts: pure functions, no streamlit.

Deltas are candidate - baseline, raw: for a lower-is-better score a negative delta is
an improvement. The verdict (better / worse / no difference / inconclusive, from
:mod:`textgen_core.compare.verdicts`) reads each score's direction, so the colours
mean the same thing for BLEU and for WER. Model names,
score names and datum ids are data: they are HTML-escaped before plotly sees them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from textgen_core.compare.verdicts import BETTER, INCONCLUSIVE, NO_DIFFERENCE, WORSE

from .charts import label

DIFFERENT = "differs"
#: Marker colour of each verdict (and of per-datum outcomes: better, worse, tie).
COLORS = {BETTER: "#1a9850", WORSE: "#d73027", NO_DIFFERENCE: "#8c8c8c", INCONCLUSIVE: "#e08214",
          DIFFERENT: "#4575b4", "tie": "#8c8c8c"}
#: Cell backgrounds of the table: light enough to read on the light and the dark theme.
BACKGROUNDS = {BETTER: "rgba(26, 152, 80, 0.28)", WORSE: "rgba(215, 48, 39, 0.28)",
               INCONCLUSIVE: "rgba(224, 130, 20, 0.22)"}
ARROWS = {"higher": "↑", "lower": "↓", "none": "·"}
BETTER_WAY = {"higher": "↑ higher is better", "lower": "↓ lower is better"}
#: Points drawn at most in a per-datum scatter; beyond, the largest differences and an even sample.
MAX_POINTS = 20_000
_ROW_PX = 34


def outcomes(diffs: np.ndarray, direction: str, tolerance: float) -> np.ndarray:
    """Per datum: 'better', 'worse' or 'tie' for the candidate, counted as compare_models counts wins."""
    oriented = -np.asarray(diffs, dtype=float) if direction == "lower" else np.asarray(diffs, dtype=float)
    return np.where(np.abs(oriented) <= tolerance, "tie", np.where(oriented > 0, BETTER, WORSE))


def _empty(title: str, text: str, height: int = 300) -> go.Figure:
    figure = go.Figure()
    figure.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=40, b=10))
    figure.add_annotation(text=text, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    return figure


def forest_figure(frame: pd.DataFrame) -> go.Figure:
    """Each (score, candidate) delta with its interval, one panel per score, coloured by the row's verdict."""
    confidence = frame.attrs.get("confidence", 0.95)
    title = f"delta (candidate − baseline) with {confidence:.0%} CI (unadjusted)"
    if frame.empty:
        return _empty(title, "nothing to compare")
    frame = frame.assign(_kind=frame["verdict"], _name=[label(c) for c in frame["candidate"]])
    scores = list(dict.fromkeys(frame["score"]))
    sizes = [int((frame["score"] == s).sum()) for s in scores]
    gap = 80
    height = 110 + sum(_ROW_PX * n + 20 for n in sizes) + gap * (len(scores) - 1)
    directions = frame.groupby("score", sort=False)["direction"].first()
    titles = [f"{label(s)} ({BETTER_WAY.get(directions[s], 'no better direction')})" for s in scores]
    figure = make_subplots(rows=len(scores), cols=1, subplot_titles=titles, row_heights=sizes,
                           vertical_spacing=gap / height if len(scores) > 1 else 0.0)
    # Traces, axes and zero lines are gathered and handed to the figure in one call each: plotly validates the whole
    # figure on every add_trace / add_vline / update_yaxes, so per-panel calls made this chart cost ~0.3 CPU-s
    # per Compare rerun at six scores.
    traces, rows, axes, zero_lines = [], [], {}, []
    shown: set[str] = set()
    for row, score in enumerate(scores, start=1):
        panel = frame[frame["score"] == score]
        for kind, part in panel.groupby("_kind", sort=False):
            delta = part["delta"].to_numpy(dtype=float)  # plain arrays: plotly checks a Series more slowly
            traces.append(go.Scatter(
                x=delta, y=part["_name"].to_numpy(), mode="markers", name=kind, legendgroup=kind,
                showlegend=kind not in shown, marker=dict(size=11, color=COLORS[kind]),
                error_x=dict(type="data", symmetric=False,
                             array=_zero_nan(part["ci_high"].to_numpy(dtype=float) - delta),
                             arrayminus=_zero_nan(delta - part["ci_low"].to_numpy(dtype=float)), thickness=2,
                             color=COLORS[kind]),
                customdata=np.column_stack([part["ci_low"], part["ci_high"], part["p_value"], part["n"]]),
                hovertemplate=("delta %{x:+.4g} [%{customdata[0]:+.4g}, %{customdata[1]:+.4g}], "
                               "p=%{customdata[2]:.3g}, n=%{customdata[3]}<extra>%{fullData.name}</extra>"),
            ))
            rows.append(row)
            shown.add(kind)
        suffix = "" if row == 1 else str(row)  # make_subplots names a one-column grid's axes x, x2, x3...
        zero_lines.append(dict(type="line", x0=0, x1=0, xref=f"x{suffix}", y0=0, y1=1, yref=f"y{suffix} domain",
                               line=dict(dash="dot", color="#888")))
        axes[f"yaxis{suffix}"] = dict(autorange="reversed", categoryorder="array",
                                      categoryarray=list(dict.fromkeys(panel["_name"])))
    figure.add_traces(traces, rows=rows, cols=[1] * len(rows))
    figure.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=90, b=10), shapes=zero_lines,
                         legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0, xanchor="left",
                                     title_text="candidate is"), **axes)
    return figure


def _zero_nan(values: np.ndarray) -> np.ndarray:
    """An error bar of no length where the interval is missing."""
    return np.where(np.isnan(values), 0.0, values)


def largest_first(values: np.ndarray, k: int, *, later_first: bool = False) -> np.ndarray:
    """Positions of the ``k`` largest values, largest first, equal values in position order (reversed with
    ``later_first``): what a stable sort of everything gives, from a partition and a sort of the few."""
    values = np.asarray(values, dtype=float)
    n = values.size
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    if k < n and not np.isnan(values).any():
        picked = np.flatnonzero(values >= np.partition(values, n - k)[n - k])
    else:  # NaN counts as the smallest value
        picked = np.arange(n)
        values = np.where(np.isnan(values), -np.inf, values)
    order = np.lexsort((-picked if later_first else picked, -values[picked]))
    return picked[order][:k]


def thin(pairs: pd.DataFrame, limit: int = MAX_POINTS) -> pd.DataFrame:
    """At most ``limit`` pairs: the largest |diff| first (a tenth of the budget), then an even sample."""
    if len(pairs) <= limit:
        return pairs
    top = largest_first(pairs["diff"].abs().to_numpy(), limit // 10, later_first=True)
    others = np.ones(len(pairs), dtype=bool)
    others[top] = False
    rest = np.flatnonzero(others)  # what np.setdiff1d gives, without sorting half a million indices
    keep = np.concatenate([top, rest[np.linspace(0, len(rest) - 1, limit - len(top)).astype(int)]])
    return pairs.iloc[np.sort(keep)]


def scatter_figure(pairs: pd.DataFrame, score: str, baseline: str, candidate: str, direction: str,
                   tolerance: float) -> go.Figure:
    """Baseline against candidate per datum (datum_id, baseline, candidate, diff), with the diagonal."""
    title = f"{label(score)}: {label(candidate)} against {label(baseline)} per datum"
    if pairs.empty:
        return _empty(title, "no datum is scored for both models", height=460)
    shown = thin(pairs)
    kinds = outcomes(shown["diff"].to_numpy(), direction, tolerance)
    names = {BETTER: f"{label(candidate)} better", WORSE: f"{label(candidate)} worse", "tie": "tie"}
    trace = go.Scattergl if len(shown) > 2000 else go.Scatter
    figure = go.Figure()
    for kind in (BETTER, WORSE, "tie"):
        part = shown[kinds == kind]
        if part.empty:
            continue
        color = COLORS[kind] if direction != "none" else COLORS[DIFFERENT]
        figure.add_trace(trace(
            x=part["baseline"], y=part["candidate"], mode="markers", name=f"{names[kind]} ({len(part)})",
            marker=dict(color=color, size=7, opacity=0.7),
            text=np.array([label(d) for d in part["datum_id"]], dtype=str),  # an array: plotly checks it at once
            hovertemplate="%{text}: %{x:.4g} → %{y:.4g}<extra></extra>",
        ))
    low = float(min(pairs["baseline"].min(), pairs["candidate"].min()))
    high = float(max(pairs["baseline"].max(), pairs["candidate"].max()))
    pad = (high - low) * 0.03 or 0.5
    figure.add_trace(go.Scatter(x=[low - pad, high + pad], y=[low - pad, high + pad], mode="lines",
                                line=dict(color="#888", dash="dash"), name="equal", hoverinfo="skip"))
    figure.update_layout(title=title, height=460, margin=dict(l=10, r=10, t=40, b=10),
                         xaxis_title=f"{label(baseline)} (baseline)", yaxis_title=f"{label(candidate)} (candidate)",
                         legend=dict(orientation="h", yanchor="bottom", y=-0.3))
    figure.update_xaxes(range=[low - pad, high + pad])
    figure.update_yaxes(range=[low - pad, high + pad])
    return figure
