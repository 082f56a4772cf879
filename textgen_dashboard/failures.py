"""The "Failure modes" section of the Results and Compare pages: a run's stored modes, read, never regrouped.

Numbers come from :func:`textgen_core.failures.stored_modes` (the modes ``textgen-eval failures RUN`` stored):
each mode's size and words, each model's rate with its interval, example cells that open in Explore, and on
Compare the paired difference of each candidate from the baseline with its Holm-adjusted p.
"""

from __future__ import annotations

from functools import partial
from typing import Sequence

import pandas as pd
import streamlit as st

from textgen_core.errors import TextgenError
from textgen_core.failures import FailureModes, stored_modes
from textgen_core.failures.report import method_line

from . import data
from .pickers import open_requested
from .safe_text import plain
from .widgets import show_table

EXAMPLES = 5


def _key(page: str, name: str) -> str:
    """Session-state key of this section on one page ("results.failures.mode")."""
    return f"{page}.failures.{name}"


def _interval(rate: float | None, low: float | None, high: float | None) -> str:
    if rate is None or pd.isna(rate):
        return "–"
    if low is None or pd.isna(low):
        return f"{rate:.1%} (too few)"
    return f"{rate:.1%} [{low:.1%}, {high:.1%}]"


def failure_modes_section(run_id: int, models: Sequence[str], baseline: str | None = None,
                          candidates: Sequence[str] | None = None, *, page: str = "results") -> None:
    """Modes of the run with each model's rate; with a baseline, the paired differences from it."""
    open_requested(run_id, _key(page, "open"))
    st.subheader("Failure modes")
    modes = stored_modes(data.store(), run_id)
    if modes is None:
        st.caption(f"No failure modes stored for this run. `textgen-eval failures {run_id}` groups its failing "
                   "judgements (verdicts against a score, bottom ratings, lowest lexical cells) into named modes "
                   "and stores them; this section then shows them. See docs/failures.md.")
        return
    st.caption(plain(method_line(modes)))
    shown = [m for m in models if m in modes.models]
    rates = modes.rates()
    rates = rates[rates["model"].isin(shown)]
    table = modes.modes[["mode", "name", "size"]].copy()
    table["name"] = [modes.title(int(m)) for m in table["mode"]]  # the judge's name where one is stored
    for model in shown:
        part = rates[rates["model"] == model].set_index("mode")
        table[model] = [_interval(*part.loc[m, ["rate", "low", "high"]]) if m in part.index else "–"
                        for m in table["mode"]]
    if "judge_name" in modes.modes and modes.modes["judge_name"].notna().any():
        table["word name"] = modes.modes["name"].tolist()
    table["words"] = [", ".join(w) for w in modes.modes["words"]]
    show_table(table, hide_index=True, key=_key(page, "table"), placeholder="–",
                 column_config={"size": st.column_config.NumberColumn("judgements")})
    st.caption("Each model's column: the share of its scored cells with a failing judgement in the mode, with a "
               "95% interval by the small-sample rule of docs/statistics.md (exact below 30 cells, Wilson from 30, "
               "'too few' below 2). Unscored cells are neither failures nor counted. "
               "Mode -1 holds the judgements that fit no mode."
               + (f" Names by the judge {plain(str(modes.params['judge_names']['model']))} (`--name-with-judge`); "
                  "'word name' is the mode's distinctive words." if modes.params.get("judge_names") else ""))
    if baseline is not None and candidates:
        _comparison(modes, baseline, [c for c in candidates if c in modes.models])
    _examples(modes, run_id, page)


def _comparison(modes: FailureModes, baseline: str, candidates: list[str]) -> None:
    if baseline not in modes.models or not candidates:
        return
    try:
        frame = modes.compare(baseline, candidates)
    except TextgenError as exc:
        st.error(plain(str(exc)))
        return
    frame = frame.assign(interval=[f"[{lo:+.1%}, {hi:+.1%}]" if lo is not None and not pd.isna(lo) else (note or "–")
                                   for lo, hi, note in zip(frame["low"], frame["high"], frame["note"])])
    number = st.column_config.NumberColumn
    show_table(frame[["candidate", "mode", "name", "baseline_rate", "candidate_rate", "difference", "interval",
                        "p", "p_holm", "flagged", "change", "n"]], hide_index=True, placeholder="–", column_config={
        "baseline_rate": number(f"{baseline}", format="percent"), "candidate_rate": number("candidate",
                                                                                         format="percent"),
        "difference": number("difference", format="percent"), "interval": "95% CI",
        "p": number("p", format="%.2g"), "p_holm": number("Holm p", format="%.2g"), "n": number("paired cells")})
    st.caption(f"Candidate minus {plain(baseline)} on cells scored for both (paired by datum and score): "
               f"Newcombe's paired interval, exact McNemar p; the Holm family is every (candidate, mode), "
               f"{frame.attrs.get('family', 0)} tests; flagged when the Holm p < 0.05. 'new in candidate': the "
               "baseline never failed this way; 'gone in candidate': the candidate never did.")


def _examples(modes: FailureModes, run_id: int, page: str) -> None:
    numbers = modes.modes["mode"].tolist()
    names = {m: modes.title(int(m)) for m in numbers}
    mode = st.selectbox("Examples of mode", numbers, format_func=lambda m: f"{m}: {names[m]}",
                        key=_key(page, "mode"))
    examples = modes.examples(int(mode), EXAMPLES)
    show_table(examples[["datum_id", "model", "unit", "text"]], hide_index=True, key=_key(page, "examples"),
                 on_select=partial(_pick, page, list(examples["datum_id"])), selection_mode="single-row",
                 column_config={"unit": "score", "text": st.column_config.TextColumn("judge's reason / prediction",
                                                                                     width="large")})
    st.caption("Select a row to open the datum in Explore.")


def _pick(page: str, datum_ids: list[str]) -> None:
    selected = st.session_state[_key(page, "examples")].selection.rows
    if selected and selected[0] < len(datum_ids):
        st.session_state[_key(page, "open")] = datum_ids[selected[0]]
