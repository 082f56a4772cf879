"""Home page: where the database lives, what it holds, and a one-click sample evaluation."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from textgen_core.datasets import SAMPLE_NAME, load_sample
from textgen_core.errors import TextgenError
from textgen_core.registry import all_metrics

from . import data, state
from .jobs import start_evaluation
from .safe_text import plain
from .widgets import job_panel, link

#: Metrics of the one-click sample run, those that exist in this version, in this order.
SAMPLE_METRICS = ("rouge", "bleu", "token_f1", "exact_match", "lengths")


def render() -> None:
    """The whole Home page."""
    st.title("textgen-eval")
    st.write("Evaluate LLM text generation: upload model outputs, score them with lexical and "
             "judge metrics (an LLM judge model), and compare models, with every score and verdict kept in one "
             "DuckDB file.")
    n_datasets, n_runs = data.counts()
    left, middle, right = st.columns([1, 1, 3])
    left.metric("Datasets", n_datasets)
    middle.metric("Runs", n_runs)
    right.caption("Database")
    right.code(data.db_path(), language=None)
    _sample_section(first_start=n_datasets == 0)
    st.subheader("Next")
    if n_runs:
        link("results", "Read the results of a run", icon=":material/bar_chart:")
        link("compare", "Compare models, with intervals and tests", icon=":material/compare_arrows:")
    link("upload", "Upload your own outputs", icon=":material/upload_file:")
    link("evaluate", "Choose metrics and run them", icon=":material/play_arrow:")
    link("runs", "See every run, resume or export it", icon=":material/history:")


def sample_metrics() -> list[str]:
    """The lexical metrics of the sample run that this version declares."""
    declared = all_metrics()
    picked = [m for m in SAMPLE_METRICS if m in declared]
    return picked or [name for name, spec in declared.items() if spec.group == "lexical"]


def _sample_section(first_start: bool) -> None:
    label = "Load the sample dataset and run lexical metrics"
    if first_start:
        st.info("The database is empty. One click loads a small QA dataset (two models, references and "
                "contexts) and scores it with lexical metrics - no API key needed.")
        clicked = st.button(label, type="primary", key="home.sample")
    else:
        with st.expander("Sample dataset"):
            clicked = st.button(label, key="home.sample")
    if clicked:
        _start_sample()
    job_panel(state.HOME_SAMPLE_JOB)


def _start_sample() -> None:
    """Score the sample, unless a finished or running run already holds these very scores: then say so."""
    metrics = sample_metrics()
    try:
        db = data.store()
        existing = data.datasets()
        match = existing.loc[existing["name"] == SAMPLE_NAME, "dataset_id"]
        dataset_id = int(match.iloc[0]) if len(match) else db.save_dataset(load_sample(), SAMPLE_NAME)
    except TextgenError as exc:
        st.error(plain(str(exc)))
        return
    same = same_sample_run(data.runs(), dataset_id, metrics)
    if same is not None:
        st.session_state.pop(state.HOME_SAMPLE_JOB, None)
        st.session_state[state.RESULTS_RUN] = same
        st.info(f"Run {same} already scores the sample with {', '.join(metrics)}: nothing new to compute. "
                "Its results are on the Results page; the Runs page can delete it to score again.")
        link("results", f"See the results of run {same}", icon=":material/bar_chart:", run_id=same)
        return
    job = start_evaluation(data.jobs(), db, dataset_id, metrics, label="sample run")
    st.session_state[state.HOME_SAMPLE_JOB] = job.job_id
    data.refresh()


def same_sample_run(runs: pd.DataFrame, dataset_id: int, metrics: list[str]) -> int | None:
    """The newest run of ``dataset_id`` with exactly ``metrics`` at their defaults, finished or still running."""
    declared = all_metrics()
    defaults = json.loads(json.dumps({m: declared[m].resolve() for m in metrics}, default=list))
    for row in runs.itertuples():  # newest first
        if (int(row.dataset_id) == dataset_id and list(row.metrics) == list(metrics)
                and row.status in ("finished", "running") and json.loads(row.params or "{}") == defaults):
            return int(row.run_id)
    return None


def database_ready() -> bool:
    """Open the database; on failure (locked by another process, unreadable) say so and how to fix it."""
    try:
        data.store().check()
    except TextgenError as exc:
        st.error(f"{plain(str(exc))}\n\nThe dashboard opens the file only while it reads or writes, so a CLI "
                 "command can share it; this error means the file is unreadable or another program kept it "
                 "busy. Refresh to try again, or start the dashboard on another file with "
                 "`textgen-eval --db OTHER.duckdb dashboard`.")
        return False
    return True


def render_sidebar() -> None:
    """Shown on every page: the database file and a refresh of cached reads."""
    with st.sidebar:
        st.caption(f"Database: {plain(data.db_path())}")
        if st.button("Refresh", key="app.refresh", help="Read the database again (drops cached reads)"):
            data.refresh(resources=True)
            st.rerun()
