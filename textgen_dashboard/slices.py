"""Slices on Results and Compare: the run cut by one metadata column.

Results shows each model's mean per slice with its interval (or why there is none); Compare shows the
paired comparison per slice, every slice in one Holm family whose size is shown, so a slice found better
has been paid for the slices looked at. Numbers come from :mod:`textgen_core.compare.slices`, as the CLI's
``summary --by`` and ``compare --by`` give them.
"""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd
import streamlit as st

from textgen_core.errors import TextgenError

from . import data
from .compare_agreement import metadata_columns
from .safe_text import plain
from .words import number_text, verdict_words
from .widgets import show_table

NO_SLICE = "(no slices)"


def pick_slice(run: dict[str, Any], key: str) -> str | None:
    """'Slice by' picker over the run's metadata columns; None when none is picked (or there is none)."""
    columns = metadata_columns(run["dataset_id"])
    if not columns:
        return None
    if st.session_state.get(key) not in columns:
        st.session_state[key] = None
    return st.selectbox("Slice by", columns, index=None, placeholder=NO_SLICE, key=key,
                        help="A metadata column of the dataset: each of its values is one slice of the datums; "
                             "clear it for no slices")


def _interval_text(row: Any) -> str:
    if pd.isna(row.ci_low) or pd.isna(row.ci_high):
        return f"{number_text(row.mean)} (too few: {row.ci_note})" if getattr(row, "ci_note", "") else \
            f"{number_text(row.mean)} (too few)"
    return f"{number_text(row.mean)} [{number_text(row.ci_low)}, {number_text(row.ci_high)}]"


def results_section(run_id: int, column: str, models: Sequence[str], score: str) -> None:
    """Each model's mean of ``score`` per slice of ``column``, with its interval and count."""
    from textgen_core.compare.slices import summary_by  # with the comparison: scipy.stats, once a slice is chosen

    st.subheader(f"{plain(score)} by {plain(column)}")
    try:
        frame = summary_by(data.store(), run_id, column, models=list(models))
    except TextgenError as exc:
        st.warning(plain(str(exc)))
        return
    rows = frame[frame["score"] == score]
    if rows.empty:
        st.info(f"No scored cell of {plain(score)} to slice.")
        return
    table = pd.DataFrame({"slice": rows["slice"], "model": rows["model"], "n": rows["n_scored"],
                          "mean [95% CI]": [_interval_text(r) for r in rows.itertuples()]})
    show_table(table, hide_index=True, placeholder="–")
    st.caption(f"{len(frame.attrs.get('slices', []))} slices, largest first. An interval needs enough scored "
               "values with some spread; below that the cell says 'too few' and why.")


def compare_section(run_id: int, column: str, choice: Any) -> None:
    """The paired comparison per slice of ``column``: one Holm family over every slice, candidate and score."""
    from textgen_core.compare.slices import compare_by

    st.subheader(f"By {plain(column)}")
    try:
        frame = compare_by(data.store(), run_id, choice.baseline, column, choice.candidates, scores=choice.scores,
                           resamples=choice.resamples, seed=choice.seed, tie_tolerance=choice.tie_tolerance,
                           holm=choice.holm)
    except TextgenError as exc:
        st.warning(plain(str(exc)))
        return
    table = pd.DataFrame({
        "slice": frame["slice"], "candidate": frame["candidate"], "score": frame["score"], "n": frame["n"],
        "delta": frame["delta"].map(lambda v: number_text(v)),
        "p": frame["p_value"], "verdict": [verdict_words(v, lo, hi) for v, lo, hi in
                                           zip(frame["verdict"], frame["ci_low"], frame["ci_high"])],
    })
    if choice.holm:
        table.insert(6, "p (Holm)", frame["p_adjusted"])
    show_table(table, hide_index=True, placeholder="–", column_config={
        "p": st.column_config.NumberColumn(format="%.4f"), "p (Holm)": st.column_config.NumberColumn(format="%.4f")})
    family = frame.attrs.get("family", 1)
    st.caption(f"{len(frame.attrs.get('slices', []))} slices; "
               + (f"the Holm family holds {family} comparisons (slices x candidates x scores with a better "
                  "direction), so a slice found better or worse has been paid for every slice looked at."
                  if choice.holm else "no Holm correction: each slice is tested alone."))
