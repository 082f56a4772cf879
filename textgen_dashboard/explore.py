"""Explore page: find datums by text, model and score, then read one datum in full.

The page state is the run and the datum id, mirrored in the URL (``?run=3&datum=q12``)
so a drill-down can be linked and so Results can open one. Dataset text and judge
replies are shown with ``st.text``, ``st.code`` and ``st.dataframe`` only: never as HTML.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any, Mapping, Sequence

import pandas as pd
import streamlit as st

from textgen_core.compare.word_diff import similarity, word_diff_text
from textgen_core.formatting import plain_table

from . import compare_data, data, panel, score_warnings
from .address import Field, kept
from .pickers import keep_choice, keep_choices, pick_run, runs_or_hint, score_range
from .state import (ANY_SCORE, EXPLORE_DATUM, EXPLORE_DIFF_FIRST, EXPLORE_DIFF_SECOND, EXPLORE_MATCHES,
                    EXPLORE_META, EXPLORE_META_VALUE, EXPLORE_MODELS, EXPLORE_RUN, EXPLORE_SCORE, EXPLORE_TEXT,
                    EXPLORE_UNSCORED, explore_range)
from .safe_text import plain
from .words import name_words, number_text, step_words
from .widgets import show_table

#: The page's state in its address: ``?run=3&datum=q12&search=refund&models=a&score=bleu&unscored=1``.
ADDRESS = (Field("run", EXPLORE_RUN, "int"), Field("datum", EXPLORE_DATUM), Field("search", EXPLORE_TEXT),
           Field("models", EXPLORE_MODELS, "list"), Field("score", EXPLORE_SCORE),
           Field("unscored", EXPLORE_UNSCORED, "bool"), Field("meta", EXPLORE_META), Field("is", EXPLORE_META_VALUE))
#: The metadata picker's first option: no metadata filter.
ANY_COLUMN = "(no metadata filter)"


#: The warnings drawn beside a score here (one-word reasons are what this page shows: no link to itself).
LABEL_WARNINGS = (score_warnings.CONSTANT, score_warnings.FEW_LABELS)


def render(default_run: Any = None) -> None:
    """The whole Explore page; ``default_run`` (e.g. the Results page's run) applies until one is picked."""
    st.title("Explore")
    with kept(ADDRESS):
        _render(default_run)


def _render(default_run: Any) -> None:
    runs = runs_or_hint()
    if runs is None:
        return
    run_id = pick_run(runs, EXPLORE_RUN, default_run, resets=(EXPLORE_MODELS, EXPLORE_SCORE))
    run = data.run(run_id)
    summary = data.summary(run_id)
    matches = search(run_id, run, summary)
    datum_id = pick_datum(matches)
    if datum_id is None:
        st.info("No datum matches these filters.")
        return
    render_datum(run_id, datum_id, run)


def search(run_id: int, run: Mapping[str, Any], summary: pd.DataFrame) -> pd.DataFrame:
    """Filter widgets and the table of matching rows; a selected row becomes the datum shown."""
    text_col, model_col, score_col = st.columns([2, 2, 1])
    text = text_col.text_input("Search text", key=EXPLORE_TEXT, placeholder="id, query, prediction or reference",
                              persist_state="session")
    models = list(run["models"])
    keep_choices(EXPLORE_MODELS, models)
    chosen = model_col.multiselect("Models", models, key=EXPLORE_MODELS, persist_state="session")
    scores = [ANY_SCORE, *dict.fromkeys(summary["score"])] if not summary.empty else [ANY_SCORE]
    keep_choice(EXPLORE_SCORE, scores)
    score = score_col.selectbox("Score", scores, key=EXPLORE_SCORE, persist_state="session")
    score = None if score == ANY_SCORE else score
    low = high = None
    unscored = False
    if score is not None:
        unscored = st.checkbox("Only unscored", key=EXPLORE_UNSCORED, persist_state="session")
        if not unscored:
            low, high = score_range(summary[summary["score"] == score], explore_range(score))
    if score is not None:  # what must be said wherever the score is shown
        score_warnings.show(run_id, score_warnings.run_warnings(run_id), [score], LABEL_WARNINGS)
    metadata = metadata_filter(run)
    matches = data.find_rows(run_id, score=score, models=chosen or models, low=low, high=high,
                             unscored=unscored, text=text, metadata=metadata)
    total = int(matches["n_matches"].iloc[0]) if not matches.empty else 0
    st.caption(f"{total:,} matching {'row' if total == 1 else 'rows'}; showing {len(matches)}. Select a row to open its datum.")
    columns = ["datum_id", "model", *(["reason" if unscored else "value"] if score else []), "query", "prediction"]
    show_table(matches[columns], hide_index=True, key=EXPLORE_MATCHES, height=240, selection_mode="single-row",
                 on_select=partial(_pick_match, list(matches["datum_id"])),
                 column_config={"value": st.column_config.NumberColumn(format="%.4f")}, placeholder="–")
    return matches


def metadata_filter(run: Mapping[str, Any]) -> tuple[str, str] | None:
    """A metadata column of the run's dataset and a value its rows must hold; None: no filter (or no metadata)."""
    found = data.datasets()
    found = found[found["dataset_id"] == int(run["dataset_id"])]
    columns = list(found["metadata_columns"].iloc[0]) if not found.empty else []
    if not columns:
        return None
    left, right = st.columns(2)
    keep_choice(EXPLORE_META, [ANY_COLUMN, *columns])
    column = left.selectbox("Metadata column", [ANY_COLUMN, *columns], key=EXPLORE_META, persist_state="session",
                            help="Keep the rows whose metadata column holds one value (e.g. category = billing)")
    if column == ANY_COLUMN:
        return None
    held = compare_data.human_values(int(run["dataset_id"]), column)
    if held["distinct"] <= len(held["values"]):  # every value listed: pick one
        keep_choice(EXPLORE_META_VALUE, held["values"])
        value = right.selectbox(f"{plain(column)} is", held["values"], key=EXPLORE_META_VALUE, persist_state="session")
    else:  # too many to list: type it
        value = right.text_input(f"{plain(column)} is", key=EXPLORE_META_VALUE, persist_state="session",
                                 placeholder=f"one of {held['distinct']:,} values, as written")
    return None if value is None or str(value) == "" else (column, str(value))


def _pick_match(datum_ids: list[str]) -> None:
    selected = st.session_state[EXPLORE_MATCHES].selection.rows
    if selected and selected[0] < len(datum_ids):
        st.session_state[EXPLORE_DATUM] = datum_ids[selected[0]]


def pick_datum(matches: pd.DataFrame) -> str | None:
    """The datum selectbox: matching ids, plus the current datum when the filters exclude it."""
    ids = list(dict.fromkeys(matches["datum_id"]))
    current = st.session_state.get(EXPLORE_DATUM)
    outside = current is not None and current not in ids
    options = [current, *ids] if outside else ids
    if not options:
        return None
    keep_choice(EXPLORE_DATUM, options)
    suffix = {current: " (outside the filters)"} if outside else {}
    return st.selectbox("Datum", options, key=EXPLORE_DATUM, format_func=lambda d: f"{d}{suffix.get(d, '')}",
                        persist_state="session")


# -- one datum ---------------------------------------------------------------
def render_datum(run_id: int, datum_id: str, run: Mapping[str, Any]) -> None:
    """Query, predictions side by side, references, contexts, then every metric of the datum."""
    view = data.datum(run_id, datum_id)
    rows = view["rows"]
    if not rows:
        st.warning("This run's dataset has no datum with that id.")
        return
    st.header(f"Datum {plain(datum_id)}", divider="gray")
    st.caption("Query")
    st.text(rows[0].query or "(no query)")
    st.subheader("Predictions")
    for start in range(0, len(rows), 3):
        for column, row in zip(st.columns(3), rows[start:start + 3]):
            with column.container(border=True):
                st.markdown(f"**{plain(row.model)}**")
                st.text(row.prediction if row.prediction else "(empty prediction)")
    _texts("References", {r.model: r.references for r in rows})
    _texts("Contexts, in order", {r.model: r.contexts for r in rows})
    if len(rows) >= 2:
        _word_diff({r.model: r.prediction or "" for r in rows})
    metrics = list(dict.fromkeys([*run["metrics"], *view["scores"]["metric"]]))
    warnings = score_warnings.run_warnings(run_id)
    for metric in metrics:
        _metric(metric, view, [r.model for r in rows], run_id, warnings)
    every_run(view, run_id)


def _word_diff(answers: Mapping[str, str]) -> None:
    """Word-level difference between two models' answers, in git's word-diff notation (plain text)."""
    st.subheader("Word differences")
    models = list(answers)
    left, right = st.columns(2)
    keep_choice(EXPLORE_DIFF_FIRST, models, models[0])
    first = left.selectbox("From", models, key=EXPLORE_DIFF_FIRST)
    others = [m for m in models if m != first]
    keep_choice(EXPLORE_DIFF_SECOND, others, others[0])
    second = right.selectbox("To", others, key=EXPLORE_DIFF_SECOND)
    st.code(word_diff_text(answers[first], answers[second]) or "(both empty)", language=None, wrap_lines=True)
    st.caption(f"[-words-] only in {plain(first)}'s answer, {{+words+}} only in {plain(second)}'s; "
               f"{similarity(answers[first], answers[second]):.0%} of the words match in order.")


def _texts(title: str, by_model: Mapping[str, Sequence[str]]) -> None:
    """Numbered texts; listed per model only when the models' rows disagree."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for model, texts in by_model.items():
        groups.setdefault(tuple(texts), []).append(model)
    if not any(groups):
        return
    st.subheader(title)
    for texts, models in groups.items():
        if len(groups) > 1:
            st.caption("for " + plain(", ".join(models)))
        for number, text in enumerate(texts, start=1):
            with st.container(border=True):
                st.caption(f"{number}.")
                st.text(text)


def _metric(metric: str, view: Mapping[str, pd.DataFrame], models: list[str], run_id: int,
            warnings: list[score_warnings.ScoreWarning]) -> None:
    """A metric's scores with unscored reasons and the warnings about them, then per model its verdicts and
    judge exchanges."""
    scores = view["scores"][view["scores"]["metric"] == metric]
    verdicts = view["verdicts"][view["verdicts"]["metric"] == metric]
    exchanges = view["exchanges"]
    if not exchanges.empty:
        exchanges = exchanges[exchanges["metric"] == metric]
    st.subheader(f"Metric: {plain(metric)}")
    table = scores[["model", "score", "value", "reason"]].rename(columns={"reason": "unscored reason"})
    table = table.assign(value=table["value"].map(number_text))
    show_table(plain_table(table), hide_index=True, placeholder="–")  # unscored: '' and its reason, never 'None'
    score_warnings.show(run_id, warnings, set(scores["score"]) | {metric}, LABEL_WARNINGS)
    details = details_table(scores)
    if not details.empty:
        with st.expander(f"Details of {plain(metric)}"):
            show_table(details, hide_index=True, placeholder="–")
    panel.votes_section(view, metric)
    judged = [m for m in models if (verdicts["model"] == m).any()
              or (not exchanges.empty and (exchanges["model"] == m).any())]
    if not judged:
        return
    for model, tab in zip(judged, st.tabs([plain(m) for m in judged])):
        with tab:
            mine = verdicts[verdicts["model"] == model]
            if mine.empty:
                st.caption("No verdicts.")
            else:
                show_table(verdict_table(mine), hide_index=True, placeholder="–")
            logged = []
            if not exchanges.empty:
                logged = exchanges[exchanges["model"] == model].to_dict("records")
                for exchange in logged:
                    _exchange(exchange)
            for key in _cached_keys(mine, logged):
                cached = data.store().judge_cache_get(key)
                if cached is not None:  # a reply that was used: its request and raw reply are in the judge cache
                    _exchange({"step": mine.loc[mine["cache_key"] == key, "step"].iloc[0], "call_index": 0,
                               "status": "ok", "reason": None, "reply": cached["reply"],
                               "messages": (cached["request"] or {}).get("messages")})


def _exchange(exchange: Mapping[str, Any]) -> None:
    """The judge's raw request and reply for one step, collapsed."""
    title = (f"What the judge was asked and answered: {step_words(exchange['step'])}, call "
             f"{int(exchange['call_index']) + 1} ({exchange['status']})")
    with st.expander(plain(title)):
        if _present(exchange.get("reason")):
            st.caption("Unscored because")
            st.text(exchange["reason"])
        for message in _messages(exchange.get("messages")):
            st.caption(plain(message.get("role", "message")))
            st.code(str(message.get("content", "")), language=None, wrap_lines=True)
        st.caption("Reply")
        reply = exchange.get("reply")
        st.code(reply if _present(reply) else "(no reply)", language=None, wrap_lines=True)


def _cached_keys(verdicts: pd.DataFrame, logged: Sequence[Mapping[str, Any]]) -> list[str]:
    """The cache keys of the verdicts whose exchange is not in the run's log (the log keeps failures)."""
    if "cache_key" not in verdicts:
        return []
    seen = {e.get("cache_key") for e in logged}
    return [k for k in dict.fromkeys(verdicts["cache_key"]) if isinstance(k, str) and k and k not in seen]


def verdict_table(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Verdicts as people read them: the step in words, items numbered from 1."""
    return pd.DataFrame({"step": verdicts["step"].map(step_words),
                         "item": [None if pd.isna(i) else int(i) + 1 for i in verdicts["item_index"]],
                         "text": verdicts["item"], "verdict": verdicts["verdict"], "reason": verdicts["reason"]})


def details_table(scores: pd.DataFrame) -> pd.DataFrame:
    """The scores' details (stored as JSON) as rows of model, score, detail and value."""
    rows = []
    for record in scores.to_dict("records"):
        raw = record.get("details")
        try:
            found = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            found = raw
        if isinstance(found, dict):
            items = found.items()
        elif found is None or (isinstance(found, float) and pd.isna(found)):
            continue
        else:
            items = [("details", found)]
        for name, value in items:
            shown = number_text(value) if isinstance(value, (int, float)) else (
                json.dumps(value) if isinstance(value, (list, dict)) else str(value))
            rows.append({"model": record["model"], "score": record["score"], "detail": name_words(name),
                         "value": shown})
    return pd.DataFrame(rows, columns=["model", "score", "detail", "value"])


def every_run(view: Mapping[str, Any], run_id: int) -> None:
    """This datum's scores in every run of its dataset: a metric scored in another run is here too."""
    found = view.get("every_run")
    if found is None or found.empty or found["run_id"].nunique() < 2:
        return
    st.subheader("This datum in every run of its dataset")
    table = found.assign(run=found["run_id"].map(lambda r: f"run {r}" + (" (this one)" if r == run_id else "")),
                         value=found["value"].map(number_text))
    wide = table.pivot_table(index=["run", "model"], columns="score", values="value", aggfunc="first", sort=False)
    show_table(wide.reset_index(), keep=wide.columns, hide_index=True, placeholder="–")  # score names are data
    st.caption("Empty: not scored in that run, or unscored (its reason is in that run's Explore).")


def _present(value: Any) -> bool:
    """A non-empty string (DuckDB hands missing text to pandas as None or NaN)."""
    return isinstance(value, str) and value != ""


def _messages(raw: Any) -> list[Mapping[str, Any]]:
    if not isinstance(raw, (str, list)):
        return []
    try:
        messages = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return [{"role": "request", "content": raw}]
    if isinstance(messages, list):
        return [m if isinstance(m, Mapping) else {"content": m} for m in messages]
    return [] if messages is None else [{"role": "request", "content": json.dumps(messages, indent=2)}]
