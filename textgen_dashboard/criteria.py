"""Judge criteria page: write a custom judge metric, see its exact prompt, try it on five rows, save it.

The definition is written in the rubric file's TOML (the same keys as
``--judge-metric FILE``). Trying it calls the judge on five rows of a stored
dataset in a throwaway database: replies and reasons are shown, nothing is
stored. Saving keeps a new version whenever the text changed; a saved metric is
picked in Evaluate like any other, and runs keep the version they used.
"""

from __future__ import annotations

import json
import tomllib
from typing import Any

import streamlit as st

from textgen_core.errors import TextgenError
from textgen_core.judge.metrics.criteria import Criterion, criterion, define, request
from textgen_core.model import Datum

from . import data, state
from .safe_text import plain
from .judge_scale import judge_form
from .widgets import show_table

#: What the editor holds before anything is written or loaded.
EXAMPLE = '''name = "support_tone"
title = "Support tone"
criteria = "Does the reply follow our support tone guide: warm, plain words, no blame on the customer?"
steps = ["Read the reply.", "Check each rule of the guide.", "Rate the reply."]
inputs = ["query", "prediction"]
direction = "higher"

[output]
type = "rating"
min = 1
max = 5
levels = ["cold or blaming", "curt", "neutral", "friendly", "warm, plain and blame-free"]
'''


def render() -> None:
    """The whole page."""
    st.title("Judge criteria")
    st.caption("Write your own judge metric: the criterion in plain words, what the judge sees, and the output "
               "(a rating, labels, or yes/no). The prompt around it is ours: data fenced, a reason before the "
               "verdict, structured output.")
    _saved_picker()
    if state.CRITERIA_TEXT not in st.session_state:
        st.session_state[state.CRITERIA_TEXT] = EXAMPLE
    text = st.text_area("Definition (TOML, the keys of a --judge-metric file)", key=state.CRITERIA_TEXT,
                        height=320)
    defined = _parse(text)
    if defined is None:
        return
    _prompt(defined)
    _trial(defined)
    _save(defined)


def _parse(text: str) -> Criterion | None:
    try:
        return criterion(tomllib.loads(text), "the editor")
    except tomllib.TOMLDecodeError as exc:
        st.error(f"Not valid TOML: {plain(exc)}")
    except TextgenError as exc:
        st.error(plain(exc))
    return None


def _saved_picker() -> None:
    saved = data.store().criteria()  # a few rows: read each time, so a save shows at once
    if saved.empty:
        return
    with st.expander(f"Saved judge metrics ({len(saved)})"):
        show_table(saved[["name", "version", "title", "created_at"]], hide_index=True, width="stretch")
        names = list(saved["name"])
        name = st.selectbox("Open a saved definition", names, key=state.CRITERIA_OPEN)
        if st.button("Open in the editor", key=state.CRITERIA_OPEN_GO):
            found = data.store().load_criterion(name)
            if found is not None:
                st.session_state[state.CRITERIA_TEXT] = to_toml(found[1])
                st.rerun()


def _prompt(defined: Criterion) -> None:
    with st.expander("The exact prompt", expanded=True):
        sample = Datum("sample", "model", "Where is my order?", "Your order left our warehouse today.",
                       ("It shipped today.",), ("Orders ship within a day.",),
                       {column: f"Sample {column}." for column in defined.metadata_columns})
        req = request(defined, sample)
        st.markdown(f"Step {plain(req.step)}, version {plain(req.version)}")  # plain() escapes are literal inside `code`
        st.text("System:\n" + req.messages[0]["content"])
        st.text("User (a sample row):\n" + req.messages[1]["content"])


def _trial(defined: Criterion) -> None:
    st.subheader("Try it on five rows")
    datasets = data.datasets()
    if datasets.empty:
        st.info("Upload a dataset (or load the sample from Home) to try the definition on it.")
        return
    names = dict(zip(datasets["dataset_id"].astype(int), datasets["name"]))
    dataset_id = st.selectbox("Dataset", list(names), key=state.CRITERIA_DATASET, format_func=lambda i: names[i])
    judge, problem = judge_form("criteria")
    if problem:
        st.info(plain(problem))
    tried = st.button("Try on five rows", key=state.CRITERIA_TRY, disabled=judge is None)
    if tried and judge is not None:
        # the judge engine and openai (~1.2 CPU-s) only once asked: Runs and Evaluate import this module too
        from textgen_core.criteria_trial import TRIAL_ROWS, try_criterion

        with st.spinner("Asking the judge..."):
            try:
                rows = data.store().load_dataset(int(dataset_id)).rows[:TRIAL_ROWS]
                st.session_state[state.CRITERIA_RESULT] = (defined.text(), try_criterion(defined, rows, judge))
            except TextgenError as exc:
                st.error(plain(exc))
    shown = st.session_state.get(state.CRITERIA_RESULT)
    if shown is not None:
        text, table = shown
        if text != defined.text():
            st.caption("These replies are for an earlier version of the definition.")
        show_table(table, hide_index=True, width="stretch")
        st.caption("Nothing of this trial is stored: no run, no scores, no cached replies.")


def _save(defined: Criterion) -> None:
    st.subheader("Save")
    if st.button(f"Save {defined.name}", key=state.CRITERIA_SAVE, type="primary"):
        version = data.store().save_criterion(defined.name, defined.title, defined.text())
        data.refresh()
        st.session_state[state.CRITERIA_SAVED] = f"Saved {defined.name} as version {version}."
    message = st.session_state.get(state.CRITERIA_SAVED)
    if message:
        st.success(plain(message) + " Pick it in Evaluate under the judge metrics.")


def to_toml(raw: dict[str, Any]) -> str:
    """A stored definition as the editor's TOML (keys in the rubric file's order)."""
    def value(v: Any) -> str:
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return str(v)
        return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    lines = [f"{key} = {value(raw[key])}" for key in ("name", "title", "criteria", "steps", "inputs", "direction")
             if key in raw]
    lines += ["", "[output]"] + [f"{key} = {value(v)}" for key, v in (raw.get("output") or {}).items()]
    for example in raw.get("examples") or []:  # worked examples (an aligned version's): kept through an edit
        lines += ["", "[[examples]]", f"verdict = {value(example['verdict'])}"]
        lines += [f"note = {value(example['note'])}"] if example.get("note") else []
        lines += ["[examples.inputs]"] + [f"{name} = {value(text)}" for name, text in example["inputs"].items()]
    return "\n".join(lines) + "\n"


def saved_metrics() -> list[Any]:
    """The MetricSpec of every saved definition (latest version), defined in this process for Evaluate."""
    return [define(json.loads(row.definition), f"saved version {row.version}") for row in data.store().criteria().itertuples()]
