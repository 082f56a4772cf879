"""Classification views of the Results page: per-label scores, the confusion matrix (a cell lists its datums,
which open in Explore), precision-recall and ROC curves per label for each model."""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from . import data
from .pickers import keep_choice
from .state import (RESULTS_CLASS_GOLD, RESULTS_CLASS_HEATMAP, RESULTS_CLASS_MODEL, RESULTS_CLASS_PREDICTED,
                    RESULTS_CLASS_ROWS, RESULTS_OPEN)
from .widgets import show_table

#: The column of gold rows that no label passed the threshold for.
NONE = "(none)"


def classification_section(run_id: int, models: list[str]) -> None:
    """The section; nothing when the run has no scored classification rows for the chosen models."""
    reports = {m: r for m, r in data.classification(run_id).items() if m in models}
    if not any(r.get("rows") for r in reports.values()):
        return
    st.subheader("Classification")
    shown = [m for m, r in reports.items() if r.get("rows")]
    keep_choice(RESULTS_CLASS_MODEL, shown)
    model = st.selectbox("Model", shown, key=RESULTS_CLASS_MODEL)
    report = reports[model]
    st.caption(f"{report['rows']} labelled rows scored, {report['unscored']} unscored (not counted as wrong); "
               f"score threshold {report['threshold']:g}, hardmax {'on' if report['hardmax'] else 'off'}.")
    show_table(per_label(report), hide_index=True, placeholder="–",
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in ("precision", "recall", "f1", "roc_auc")})
    show_table(pd.DataFrame([report["averages"]]), hide_index=True)
    confusion_view(run_id, model, report)
    left, right = st.columns(2)
    with left:
        st.plotly_chart(pr_figure(report), key="results.classification.pr")
    with right:
        if report["roc"]:
            st.plotly_chart(roc_figure(report), key="results.classification.roc")
        else:
            st.info(f"No ROC curve: {report['roc_note'] or 'no label has both positives and negatives'}.")


def per_label(report: Mapping[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(report["per_label"])[["label", "precision", "recall", "f1", "support", "tp", "fp", "fn",
                                             "roc_auc"]]


def confusion_figure(report: Mapping[str, Any]) -> go.Figure:
    labels = list(report["confusion"]["labels"])
    matrix = [row + [missed] for row, missed in zip(report["confusion"]["matrix"], report["confusion"]["unmatched"])]
    figure = go.Figure(go.Heatmap(z=matrix, x=labels + [NONE], y=labels, colorscale="Blues", texttemplate="%{z}",
                                  hovertemplate="gold %{y}, predicted %{x}: %{z} rows<extra></extra>"))
    figure.update_layout(title="Confusion matrix (click a cell for its datums)", xaxis_title="predicted",
                         yaxis_title="gold", yaxis_autorange="reversed", height=220 + 60 * min(len(labels), 20))
    return figure


def confusion_view(run_id: int, model: str, report: Mapping[str, Any]) -> None:
    """The heatmap; a clicked cell (or the two pickers) lists the cell's datums, a picked row opens in Explore."""
    labels = list(report["confusion"]["labels"])
    event = st.plotly_chart(confusion_figure(report), key=RESULTS_CLASS_HEATMAP, on_select="rerun",
                            selection_mode="points")
    points = (event or {}).get("selection", {}).get("points", []) if isinstance(event, Mapping) else []
    if points:
        st.session_state[RESULTS_CLASS_GOLD] = str(points[0].get("y"))
        st.session_state[RESULTS_CLASS_PREDICTED] = str(points[0].get("x"))
    keep_choice(RESULTS_CLASS_GOLD, labels)
    keep_choice(RESULTS_CLASS_PREDICTED, labels + [NONE])
    gold_col, pred_col = st.columns(2)
    gold = gold_col.selectbox("Gold label", labels, key=RESULTS_CLASS_GOLD)
    predicted = pred_col.selectbox("Predicted label", labels + [NONE], key=RESULTS_CLASS_PREDICTED)
    ids = data.classification(run_id, (model, gold, None if predicted == NONE else predicted))
    st.caption(f"{len(ids)} datums with gold {gold!r} and prediction {predicted!r}. Select one to open it in "
               "Explore.")
    show_table(pd.DataFrame({"datum_id": ids[:1000]}), hide_index=True, key=RESULTS_CLASS_ROWS,
                 on_select=lambda: _pick(ids), selection_mode="single-row")


def _pick(datum_ids: list[str]) -> None:
    selected = st.session_state[RESULTS_CLASS_ROWS].selection.rows
    if selected and selected[0] < len(datum_ids):
        st.session_state[RESULTS_OPEN] = datum_ids[selected[0]]


def pr_figure(report: Mapping[str, Any]) -> go.Figure:
    figure = go.Figure()
    for label, points in report["pr_curves"].items():
        figure.add_trace(go.Scatter(x=[p["recall"] for p in points], y=[p["precision"] for p in points],
                                    mode="lines+markers", name=label,
                                    text=[f"threshold {p['threshold']:g}" for p in points],
                                    hovertemplate="%{text}: recall %{x:.3f}, precision %{y:.3f}<extra></extra>"))
    figure.update_layout(title="Precision-recall over score thresholds", xaxis_title="recall",
                         yaxis_title="precision", xaxis_range=[0, 1.02], yaxis_range=[0, 1.02])
    return figure


def roc_figure(report: Mapping[str, Any]) -> go.Figure:
    figure = go.Figure()
    for label, curve in report["roc"].items():
        figure.add_trace(go.Scatter(x=curve["fpr"], y=curve["tpr"], mode="lines", name=f"{label} ({curve['auc']:.3f})"))
    figure.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line={"dash": "dot", "color": "grey"},
                                name="chance"))
    figure.update_layout(title="ROC, one label against the rest (AUC in brackets)", xaxis_title="false positive rate",
                         yaxis_title="true positive rate")
    return figure
