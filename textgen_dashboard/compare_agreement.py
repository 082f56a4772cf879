"""Compare page, agreement section: how well each score agrees with a human label or score column.

Numbers come from :func:`textgen_core.compare.judge_human_agreement` through :mod:`.data` (cached).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd
import streamlit as st

from textgen_core.errors import TextgenError

from . import compare_data, data, state
from .pickers import keep_choice
from .safe_text import plain
from .widgets import link, show_table

#: Human labels taken as the positive one when a text column is picked (else the first value).
POSITIVE_WORDS = ("correct", "yes", "true", "pass", "positive", "good", "relevant", "faithful")
KIND_LABELS = {"score": "score: Spearman and Pearson", "label": "label: Cohen's kappa"}
#: The 'better' column: which way each score improves.
ARROWS = {"higher": "↑ higher", "lower": "↓ lower"}


#: Words in a metadata column's name that mark it as a person's label or score; no other column is offered.
HUMAN_WORDS = ("human", "annotat", "rater", "rating", "label", "judgement", "judgment", "gold_score")


def human_columns(columns: Sequence[str]) -> list[str]:
    """The metadata columns named as a person's label or score (a model's predicted label is not one)."""
    def human(name: str) -> bool:
        folded = name.casefold()
        return any(w in folded for w in HUMAN_WORDS) and not folded.startswith(("pred", "model", "judge"))
    return [c for c in columns if human(c)]


def metadata_columns(dataset_id: int) -> list[str]:
    """The metadata columns of a dataset (where a human label or score lives)."""
    datasets = data.datasets()
    row = datasets[datasets["dataset_id"] == dataset_id]
    return list(row["metadata_columns"].iloc[0]) if len(row) else []


def agreement_section(run_id: int, run: Mapping[str, Any], baseline: str, candidates: Sequence[str],
                      scores: Sequence[str]) -> None:
    """Agreement of each chosen score with a human column the user picks among the metadata columns."""
    st.subheader("Agreement with human ratings")
    every = metadata_columns(run["dataset_id"])
    columns = human_columns(every)
    if not columns:
        st.info("No human labels to compare with: this run's dataset has no column named as a person's label or "
                f"score ({', '.join(HUMAN_WORDS)}){' among ' + plain(', '.join(every)) if every else ''}, and a "
                "column such as a category is not a human judgement. Label cells on the Label page (its 'Judge "
                "against people' tab measures agreement), or upload the file again with a column named like "
                "human_score or human_label.")
        link("label", "Label cells of this run", icon=":material/label:", run_id=run_id)
        return
    default = next((c for c in columns if "human" in c.casefold()), columns[0])
    keep_choice(state.COMPARE_HUMAN_COLUMN, columns, default)
    column = st.selectbox("Human column", columns, key=state.COMPARE_HUMAN_COLUMN,
                          help="A metadata column of the dataset holding a person's label or score per row")
    info = compare_data.human_values(run["dataset_id"], column)
    if not info["count"]:
        st.info(f"Column {plain(column)} is empty.")
        return
    settings = agreement_settings(column, info)
    try:
        frame = compare_data.agreement(run_id, column, scores=list(scores), **settings)
    except TextgenError as exc:
        st.warning(plain(str(exc)))
        return
    frame = frame[frame["model"].isin([baseline, *candidates])]
    show_agreement(frame, settings)


def agreement_settings(column: str, info: Mapping[str, Any]) -> dict[str, Any]:
    """Kind and thresholds for one human column; text columns are labels with a positive value."""
    kinds = ["score", "label"] if info["numeric"] else ["label"]
    guess = 0 if info["numeric"] and info["distinct"] > 2 else len(kinds) - 1
    kind = st.radio("Kind", kinds, index=guess, key=state.compare_human(column, "kind"), horizontal=True,
                    format_func=KIND_LABELS.get)
    if kind == "score":
        return {"kind": "score"}
    threshold_col, human_col = st.columns(2)
    threshold = threshold_col.number_input("Score threshold", value=None, format="%g",
                                           key=state.compare_human(column, "threshold"),
                                           placeholder="middle of each score's range",
                                           help="A metric score at or above this counts as positive; empty: the "
                                                "middle of each score's own range (0.5 for 0-1, 3 for 1-5)")
    if info["numeric"]:
        middle = (info["min"] + info["max"]) / 2
        human = human_col.number_input("Human threshold", value=float(middle), format="%g",
                                       key=state.compare_human(column, "human_threshold"),
                                       help="A human value at or above this counts as positive")
        return {"kind": "label", "threshold": threshold, "human_threshold": human}
    values = list(info["values"])
    first = next((i for i, v in enumerate(values) if v.casefold() in POSITIVE_WORDS), 0)
    positive = human_col.selectbox("Positive label", values, index=first,
                                   key=state.compare_human(column, "positive"),
                                   help="The human label that means the same as a score at or above the threshold")
    return {"kind": "label", "threshold": threshold, "positive_label": positive}


def show_agreement(frame: pd.DataFrame, settings: Mapping[str, Any]) -> None:
    number = st.column_config.NumberColumn
    frame = frame.assign(better=[ARROWS.get(d, "none") for d in frame["direction"]])
    if settings["kind"] == "score":
        columns = ["model", "score", "better", "n", "spearman", "spearman_p", "pearson", "pearson_p"]
        config = {"spearman": number("Spearman ρ", format="%.3f"), "spearman_p": number("p (Spearman)", format="%.2g"),
                  "pearson": number("Pearson r", format="%.3f"), "pearson_p": number("p (Pearson)", format="%.2g")}
        note = ("Spearman and Pearson correlations (scipy) with two-sided p-values; expect negative values for "
                "↓ scores.")
    else:
        columns = ["model", "score", "better", "threshold", "n", "kappa", "agreement"]
        config = {"kappa": number("Cohen's κ", format="%.3f"), "agreement": number("raw agreement", format="%.3f")}
        human = (f"equals {plain(settings['positive_label'])}" if settings.get("positive_label") is not None
                 else f"is at least {settings['human_threshold']:g}")
        cuts = ", ".join(f"{score} {cut:g}" for score, cut in frame.attrs.get("thresholds", {}).items())
        note = (f"Cohen's kappa: a score counts as positive at or above its threshold ({cuts}), a human value "
                f"when it {human}.")
    show_table(frame[columns], hide_index=True, column_config=config, placeholder="–")
    skipped = frame.attrs.get("skipped")
    st.caption(note + " n: datums with both a score and a human value; empty where either does not vary."
               + (f" {skipped} human values could not be read and were left out." if skipped else ""))
