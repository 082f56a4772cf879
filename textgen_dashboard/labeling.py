"""Label page: people give their value of a score cell by cell, on the score's own scale.

Pick a run, a score and how cells are chosen (random, stratified by the judge's
value, or where the judge is least sure first); each cell shows the query, the
prediction, the references, contexts and the judge's reasons; one button (and one
key) per value of the scale, next / previous on N / P. The annotator's name is
kept per browser tab; every label is written to DuckDB at once, so a reload loses
nothing. The judge-against-people report sits below (see :mod:`.label_agreement`).
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd
import streamlit as st

from textgen_core.compare.labels import STRATEGIES, scale_of, select_cells
from textgen_core.summary import scale_text

from . import data
from .address import Field, kept
from .widgets import link, show_table
from .words import number_text
from .label_agreement import agreement_section
from .pickers import keep_choice, open_requested, pick_run, runs_or_hint
from .safe_text import plain
from .state import (LABEL_ANNOTATOR, LABEL_COUNT, LABEL_NOTE, LABEL_OPEN, LABEL_POSITION, LABEL_RUN, LABEL_SAVED,
                    LABEL_SCORE, LABEL_STRATEGY, LABEL_TAB, LABEL_TABS, LABEL_VALUE, label_button)

STRATEGY_LABELS = {"pairs": "pairs (every model on the same datums: for a calibrated comparison)",
                   "random": "random (a uniform sample)", "stratified": "stratified by the judge's value",
                   "disagreement": "disagreement first (the judge least sure; not random)"}


#: The page's state in its address: ``?run=3&score=qa_grade&cells=random&annotator=ana``.
ADDRESS = (Field("run", LABEL_RUN, "int"), Field("score", LABEL_SCORE), Field("cells", LABEL_STRATEGY),
           Field("annotator", LABEL_ANNOTATOR), Field("tab", LABEL_TAB))
TABS = {"label": "Label cells", "agreement": "Judge against people"}


def render() -> None:
    """The whole Label page, its state read from and written to the address (the annotator's name too)."""
    st.title("Label")
    with kept(ADDRESS):
        _render()


def _render() -> None:
    runs = runs_or_hint()
    if runs is None:
        return
    run_id = pick_run(runs, LABEL_RUN, resets=(LABEL_SCORE, LABEL_POSITION))
    open_requested(run_id, LABEL_OPEN)
    counts = data.scored_counts(run_id)
    scores = list(dict.fromkeys(counts["score"]))
    if not scores:
        st.info("This run has no scored cells to label yet.")
        return
    left, middle, right = st.columns([2, 2, 1])
    keep_choice(LABEL_SCORE, scores)
    score = left.selectbox("Score", scores, key=LABEL_SCORE, on_change=_restart)
    run = data.run(run_id)
    strategies = _strategies(len(run["models"]))
    keep_choice(LABEL_STRATEGY, strategies)
    strategy = middle.radio("Cells", strategies, key=LABEL_STRATEGY, format_func=STRATEGY_LABELS.get,
                            horizontal=True, on_change=_restart)
    count = int(right.number_input("How many", min_value=1, max_value=5000, value=50, step=10, key=LABEL_COUNT,
                                   on_change=_restart))
    annotator = st.text_input("Your name (kept for this browser tab)", key=LABEL_ANNOTATOR,
                              placeholder="who is labelling").strip()
    keep_choice(LABEL_TAB, list(TABS), "label")
    # Only the open tab runs: the agreement report bootstraps its intervals, which every label click paid for
    # while it was hidden. The tab is the address's (a link to the agreement tab opens it); a click on a tab
    # makes it the address's tab and reruns the page with it open.
    st.session_state[LABEL_TABS] = TABS[st.session_state[LABEL_TAB]]
    labelling, report = st.tabs(list(TABS.values()), key=LABEL_TABS, on_change=_tab_clicked)
    if labelling.open:
        with labelling:
            if not annotator:
                st.info("Type your name to start: each label records who gave it, and several people may label "
                        "the same cells.")
            else:
                label_cells(run_id, score, strategy, count, annotator)
    if report.open:
        with report:
            agreement_section(run_id, score)


def _tab_clicked() -> None:
    st.session_state[LABEL_TAB] = next(name for name, title in TABS.items()
                                       if title == st.session_state[LABEL_TABS])


def _strategies(models: int) -> list[str]:
    """Ways to pick cells; with two models or more, pairs first (the default): a calibrated comparison needs
    both models labelled on the same datums."""
    return (["pairs"] if models > 1 else []) + [s for s in STRATEGIES if s != "pairs"]


def _restart() -> None:
    st.session_state[LABEL_POSITION] = 0


@st.fragment
def label_cells(run_id: int, score: str, strategy: str, count: int, annotator: str) -> None:
    """The queue of this annotator: progress, the current cell, the value buttons and next / previous.

    A fragment: a value button, Next and Previous rerun only this part of the page (its pickers, tabs and sidebar
    stay as drawn), so each label costs the server and the browser a small redraw instead of the whole page."""
    store = data.store()
    queue = select_cells(store, run_id, score, strategy, count, viewer=annotator)
    mine = store.labels(run_id, score=score, annotator=annotator)
    given = {(d, m): v for d, m, v in zip(mine["datum_id"], mine["model"], mine["value"])}
    done = sum((d, m) in given for d, m in zip(queue["datum_id"], queue["model"]))
    saved = st.session_state.pop(LABEL_SAVED, None)
    if saved:
        st.success(saved)
    st.progress(done / max(len(queue), 1), text=f"{done} of {len(queue)} cells labelled by {plain(annotator)} "
                                                 f"({len(mine)} label{'' if len(mine) == 1 else 's'} of {plain(score)} "
                                                 "by this name in all)")
    if queue.empty:
        st.info("No scored cell of this score to label.")
        return
    if done == len(queue):
        st.success(f"All {len(queue)} cells of this queue are labelled. See how the judge agrees with people:")
        link("label", "Judge against people", icon=":material/fact_check:", run_id=run_id,
             params={"score": score, "annotator": annotator, "tab": "agreement"})
    position = min(int(st.session_state.get(LABEL_POSITION, _first_open(queue, given))), len(queue) - 1)
    st.session_state[LABEL_POSITION] = position
    cell = queue.iloc[position]
    key = (str(cell["datum_id"]), str(cell["model"]))
    st.caption(f"Cell {position + 1} of {len(queue)}: datum {plain(key[0])}, model {plain(key[1])}"
               + (f" · your label: {given[key]:g}" if key in given else ""))
    row = show_cell(run_id, key[0], key[1])
    low, high, values = scale_of(score, queue["judge"].tolist())
    note = st.text_input("Note (optional)", key=LABEL_NOTE)
    probability = None if pd.isna(cell["probability"]) else float(cell["probability"])
    record = (key[0], key[1], score, annotator, note.strip() or None, strategy, probability)
    if values is not None:
        st.caption(f"Your value on {plain(score)}'s scale ({scale_text(score) or 'as the judge gives it'}); "
                   "a key per value, N next, P previous.")
        levels = rubric_levels(data.run(run_id), score)
        for column, value in zip(st.columns(len(values)), values):
            words = levels.get(float(value))
            column.button(f"{value:g} · {words}" if words else f"{value:g}", key=label_button(value),
                          help=words or None, shortcut=f"{value:g}", on_click=_give,
                          args=(run_id, record, value, position, len(queue)), use_container_width=True)
    else:
        with st.form("label.form", border=False):
            st.number_input(f"Your value ({scale_text(score) or 'any number'})", min_value=low, max_value=high,
                            value=None, key=LABEL_VALUE, format="%g")
            st.form_submit_button("Save (Enter)", on_click=_give_typed, args=(run_id, record, position, len(queue)))
    back, forward, explore = st.columns(3)
    back.button("Previous", key="label.previous", shortcut="P", on_click=_move, args=(position - 1, len(queue)),
                disabled=position == 0, use_container_width=True)
    forward.button("Next", key="label.next", shortcut="N", on_click=_move, args=(position + 1, len(queue)),
                   disabled=position >= len(queue) - 1, use_container_width=True)
    if explore.button("Open in Explore", key="label.explore", use_container_width=True):
        st.session_state[LABEL_OPEN] = key[0]
        st.rerun()
    if row is not None:
        show_details(run_id, row, score)


def rubric_levels(run: Mapping[str, Any], score: str) -> dict[float, str]:
    """value -> the rubric's words for it, for a custom rating metric whose definition names its levels."""
    criteria = ((run.get("judge") or {}).get("fingerprint") or {}).get("criteria") or {}
    output = (criteria.get(score) or {}).get("output") or {} if isinstance(criteria, Mapping) else {}
    levels, low = output.get("levels") or [], output.get("min")
    if not levels or low is None:
        return {}
    return {float(low + i): str(text) for i, text in enumerate(levels)}


def _first_open(queue: pd.DataFrame, given: Mapping[tuple[str, str], float]) -> int:
    """Where to resume: the first cell of the queue this annotator has not labelled."""
    for index, key in enumerate(zip(queue["datum_id"], queue["model"])):
        if key not in given:
            return index
    return 0


def _give(run_id: int, record: tuple[Any, ...], value: float, position: int, total: int) -> None:
    """Store one label at once (a reload keeps it) and move on to the next cell."""
    datum_id, model, score, annotator, note, sampling, probability = record
    data.store().write_labels(run_id, [(datum_id, model, score, annotator, value, note, sampling, probability)])
    st.session_state[LABEL_SAVED] = f"Saved {value:g} for datum {plain(datum_id)} of {plain(model)}."
    st.session_state[LABEL_NOTE] = ""
    _move(position + 1, total)


def _give_typed(run_id: int, record: tuple[Any, ...], position: int, total: int) -> None:
    """The form's Save: the typed value, if any, stored like a button's."""
    value = st.session_state.get(LABEL_VALUE)
    if value is not None:
        _give(run_id, record, float(value), position, total)
        st.session_state[LABEL_VALUE] = None


def _move(position: int, total: int) -> None:
    st.session_state[LABEL_POSITION] = max(0, min(position, total - 1))


def show_cell(run_id: int, datum_id: str, model: str) -> Any:
    """The query and the prediction, in view above the value buttons; the row (None when it is gone)."""
    row = next((r for r in data.datum(run_id, datum_id)["rows"] if r.model == model), None)
    if row is None:
        st.warning("This datum is no longer in the run's dataset.")
        return None
    with st.container(border=True):
        st.caption("Query")
        st.text(row.query or "(no query)")
        st.caption(f"Prediction of {plain(model)}")
        st.text(row.prediction or "(empty prediction)")
    return row


def show_details(run_id: int, row: Any, score: str) -> None:
    """References, contexts and the judge's value with its reasons, one click away below the buttons."""
    with st.expander(f"References ({len(row.references)})"):
        for text in row.references:
            st.text(text)
    with st.expander(f"Contexts ({len(row.contexts)})"):
        for text in row.contexts:
            st.text(text)
    view = data.datum(run_id, row.datum_id)
    scores = view["scores"]
    mine = scores[(scores["model"] == row.model) & (scores["score"] == score)]
    judged = "" if mine.empty else number_text(mine["value"].iloc[0])
    with st.expander(f"The judge's value and reasons ({judged or 'unscored'})"):
        verdicts = view["verdicts"]
        metric = mine["metric"].iloc[0] if not mine.empty else score
        reasons = verdicts[(verdicts["model"] == row.model) & (verdicts["metric"] == metric)]
        if reasons.empty:
            st.caption("No reasons stored for this cell.")
        else:
            show_table(reasons[["step", "item", "verdict", "reason"]], hide_index=True, placeholder="–")
