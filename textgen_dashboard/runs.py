"""Runs page: history, a run's name, tags and note, resume of interrupted runs, delete, and export of scores and
verdicts."""

from __future__ import annotations

import functools
import pandas as pd
import streamlit as st

from textgen_core.errors import TextgenError
from textgen_core.formatting import duration_text, plain_table
from textgen_core.registry import all_metrics

from . import data, state
from .add_metrics import add_metrics
from .address import Field, kept
from .pickers import pick_run
from .jobs import start_resume
from .safe_text import plain
from .judge_scale import judge_form
from .run_labels import label_form
from .widgets import job_panel, link, show_table

#: Stored statuses a run can be resumed from (plus "running" when no thread works on it).
RESUMABLE = {"interrupted", "cancelled", "failed"}
INTERRUPTED = "interrupted (no live job)"


#: The page's state in its address: ``?run=3``.
ADDRESS = (Field("run", state.RUNS_SELECTED, "int"),)


def render() -> None:
    """The whole Runs page, the chosen run read from and written to the address."""
    st.title("Runs")
    deleted = st.session_state.pop(state.RUNS_DELETED, None)
    if deleted:
        st.success(deleted)
    with kept(ADDRESS):
        _render()


def _render() -> None:
    runs = history(data.runs(), data.jobs().live_run_ids())
    if runs.empty:
        st.info("No runs yet.")
        link("evaluate", "Evaluate", icon=":material/play_arrow:")
        return
    show_table(runs, hide_index=True, placeholder="–")
    run_id = pick_run(data.runs(), state.RUNS_SELECTED)
    status = str(runs.loc[runs["run_id"] == run_id, "status"].iloc[0])
    _details(run_id)
    label_form(run_id)
    _resume(run_id, status)
    add_metrics(run_id, status)
    _export(run_id)
    _delete(run_id, status)


def history(frame: pd.DataFrame, live: set[int]) -> pd.DataFrame:
    """The store's run list as a table: one text cell per list, tokens summed, stale 'running' flagged."""
    if frame.empty:
        return pd.DataFrame(columns=["run_id", "dataset", "metrics", "status"])
    table = frame.copy()
    table["metrics"] = table["metrics"].map(", ".join)
    table["models"] = table["models"].map(", ".join)
    for column in ("name", "tags", "note"):  # a run's name, tags and note (run_labels: the form that sets them)
        if column not in table:
            table[column] = None
    table["tags"] = table["tags"].map(lambda tags: ", ".join(tags) if isinstance(tags, list) else "")
    table["tokens"] = table["prompt_tokens"].fillna(0).astype(int) + table["completion_tokens"].fillna(0).astype(int)
    stale = (table["status"] == "running") & ~table["run_id"].astype(int).isin(live)
    table.loc[stale, "status"] = INTERRUPTED
    table["duration"] = table["duration_s"].map(duration_text)  # the same text as Home and the CLI
    table["cost"] = table["cost"].map(lambda c: "" if pd.isna(c) else f"{c:.4f}")
    columns = ["run_id", "name", "tags", "dataset", "metrics", "models", "status", "judge_model", "duration", "judge_calls",
               "tokens", "cost", "created_at", "note", "params", "signatures"]
    return plain_table(table[columns])  # no 'None' cells, timestamps to the second


def _details(run_id: int) -> None:
    run = data.run(run_id)
    with st.expander("Parameters, signatures and judge settings"):
        st.json(run["params"], expanded=False)
        for metric, signature in run["signatures"].items():
            st.caption(plain(metric))
            st.code(signature, language=None)
        if run["judge"]:
            st.json(run["judge"], expanded=False)
    if run["error"]:
        st.error(f"Error: {plain(run['error'])}")
    link("results", f"Open the results of run {run_id}", icon=":material/bar_chart:", run_id=run_id)


def _resume(run_id: int, status: str) -> None:
    live = data.jobs().for_run(run_id)
    if live is not None and (live.live or st.session_state.get(state.RUNS_JOB) == live.job_id):
        st.session_state[state.RUNS_JOB] = live.job_id
        st.subheader("Progress")
        job_panel(state.RUNS_JOB)
        if live.live:
            return
    if status not in RESUMABLE and status != INTERRUPTED:
        return
    st.subheader("Resume")
    run = data.run(run_id)
    judge = None
    if run.get("judge") or any(m in all_metrics() and not all_metrics()[m].is_local(run["params"].get(m))
                               for m in run["metrics"]):
        st.caption("This run has judge metrics: give the judge endpoint (its key is never stored).")
        judge, problem = judge_form("runs", run["judge"])
        if problem:
            st.info(plain(problem))
            return
    if st.button("Resume", type="primary", key="runs.resume",
                 help="Finished cells are kept; the rest are computed"):
        job = start_resume(data.jobs(), data.store(), run_id, judge=judge)
        st.session_state[state.RUNS_JOB] = job.job_id
        data.refresh()
        st.rerun()


def _export(run_id: int) -> None:
    st.subheader("Export")
    left, right = st.columns([2, 1])
    table = left.radio("Table", list(data.EXPORT_TABLES), key=state.RUNS_EXPORT_TABLE,
                       format_func=lambda t: data.EXPORT_TABLES[t])
    fmt = right.radio("Format", list(data.EXPORT_FORMATS), key=state.RUNS_EXPORT_FORMAT, format_func=str.upper)
    st.download_button(f"Download {fmt.upper()}", data=functools.partial(data.export_bytes, run_id, table, fmt),
                       file_name=f"run{run_id}_{table}.{fmt}", mime=data.EXPORT_FORMATS[fmt], key="runs.download",
                       on_click="ignore", icon=":material/download:",
                       help="CSV cells that a spreadsheet would run as a formula start with an apostrophe")


def _delete(run_id: int, status: str) -> None:
    with st.expander("Delete this run"):
        busy = run_id in data.jobs().live_run_ids()
        sure = st.checkbox(f"Yes, delete run {run_id} with its scores and verdicts", key=state.RUNS_CONFIRM_DELETE,
                           disabled=busy)
        if st.button("Delete run", disabled=not sure or busy, key="runs.delete"):
            try:
                data.store().delete_run(run_id)
            except TextgenError as exc:
                st.error(plain(str(exc)))
                return
            data.refresh()
            st.session_state.pop(state.RUNS_CONFIRM_DELETE, None)
            st.session_state.pop(state.RUNS_SELECTED, None)
            st.session_state[state.RUNS_DELETED] = f"Deleted run {run_id} with its scores and verdicts."
            st.query_params.pop("run", None)
            st.rerun()

