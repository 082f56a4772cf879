"""Small widgets shared by the dashboard pages.

The metric parameter form is generated from each metric's ``Param``
declarations; nothing here lists a metric or a parameter by hand.
"""

from __future__ import annotations

from typing import Any, Callable

import streamlit as st

from textgen_core.errors import ParameterError, TextgenError
from textgen_core.formatting import duration_text
from textgen_core.metrics.spec import MetricSpec, Param

from .judge_scale import spend_against_cap
from . import data, page_path
from .safe_text import plain
from .words import header_words, name_words


def link(page: str, label: str, icon: str | None = None, run_id: int | None = None,
         params: dict[str, str] | None = None) -> None:
    """A link to another page by name ('results'), to run ``run_id`` when given (``?run=N``, with more
    ``params``); a caption when the page is not in the navigation (one-page tests)."""
    params = ({"run": str(int(run_id))} if run_id is not None else {}) | dict(params or {}) or None
    try:
        st.page_link(page_path(page), label=label, icon=icon, query_params=params)
    except Exception:  # the page runs on its own, outside app.py's st.navigation
        st.caption(f"Open {plain(label)} from the navigation.")


def show_table(frame: Any, *, keep: Any = (), column_config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    """``st.dataframe`` with column headers in words (words.header_words): the one place a page's table gets
    its labels. ``keep``: columns whose names are data (a pivot's models or scores); a header the caller
    configures keeps the caller's label. Selections and tests still read the frame's own column names."""
    columns = frame.data.columns if hasattr(frame, "data") and hasattr(frame, "hide") else frame.columns  # a Styler
    config: dict[str, Any] = dict(header_words(columns, keep))
    for name, given in (column_config or {}).items():
        if isinstance(given, dict) and not given.get("label") and name in config:
            given = {**given, "label": config[name]}
        config[name] = given
    return st.dataframe(frame, column_config=config, **kwargs)


def param_widget(param: Param, key: str, columns: list[str]) -> Any:
    """One input for one parameter, with its declared default, limits and help."""
    label, default, help_text = name_words(param.name), param.default, param.help
    low = param.minimum
    high = param.maximum
    if param.kind == "bool":
        return st.checkbox(label, value=bool(default), key=key, help=help_text)
    if param.kind == "int":
        return st.number_input(label, value=default, step=1, key=key, help=help_text,
                               min_value=None if low is None else int(low),
                               max_value=None if high is None else int(high))
    if param.kind == "float":
        return st.number_input(label, value=None if default is None else float(default), key=key, help=help_text,
                               min_value=None if low is None else float(low),
                               max_value=None if high is None else float(high), format="%g")
    if param.kind == "choice":
        options = list(param.choices)
        index = options.index(default) if default in options else 0
        return st.selectbox(label, options, index=index, key=key, help=help_text, format_func=str)
    if param.kind == "choices":
        chosen = [d for d in (default or ()) if d in param.choices]
        return st.multiselect(label, list(param.choices), default=chosen, key=key, help=help_text)
    if param.kind == "floats":
        text = ", ".join(f"{v:g}" for v in default) if default else ""
        return st.text_input(label, value=text, key=key, help=help_text)
    if param.is_column:
        options = ["", *columns]
        index = options.index(default) if default in options else 0
        picked = st.selectbox(label, options, index=index, key=key, help=help_text,
                              format_func=lambda c: c or "(none)")
        return picked or None
    text = st.text_input(label, value="" if default is None else str(default), key=key, help=help_text)
    return text if text != "" else None


def param_form(spec: MetricSpec, key_of: Callable[[str], str], columns: list[str]) -> tuple[dict[str, Any], list[str]]:
    """Inputs for every parameter of ``spec``; returns (validated values, error messages)."""
    raw = {p.name: param_widget(p, key_of(p.name), columns) for p in spec.params}
    try:
        return spec.resolve(raw), []
    except ParameterError as exc:
        return {}, [str(exc)]


def describe_reasons(reasons: list[str]) -> str:
    """'needs a contexts column; needs ...' for a disabled metric."""
    return "; ".join(reasons)


# -- background jobs ---------------------------------------------------------
def job_panel(job_key: str) -> None:
    """Progress of the job whose id is in ``st.session_state[job_key]``: live counts, Cancel, outcome."""
    job = data.jobs().get(st.session_state.get(job_key))
    if job is None:
        return
    if job.live:
        _live_job(job.job_id)
        return
    run = f"Run {job.run_id}" if job.run_id is not None else "The run"
    if job.status == "finished":
        st.success(f"{run} finished in {run_duration(job)}.{calls_made(job)}")
        link("results", f"See the results of run {job.run_id}", icon=":material/bar_chart:", run_id=job.run_id)
    elif job.status == "interrupted":  # a spending cap stopped it
        st.warning(f"{run} stopped: {plain(job.error or 'interrupted')}. Finished cells are kept; resume it from "
                   "the Runs page (with a higher cap, or none).")
        link("runs", "Runs", icon=":material/history:", run_id=job.run_id)
    elif job.status == "cancelled":
        st.warning(f"{run} was cancelled; finished cells are kept. Resume it from the Runs page.")
        link("runs", "Runs", icon=":material/history:", run_id=job.run_id)
    elif job.status == "refused":  # nothing was changed: the run is as it was
        st.error(f"Not started: {plain(job.error or 'refused')}")
    else:
        st.error(f"{run} failed: {plain(job.error or 'unknown error')}")


def calls_made(job: Any) -> str:
    """' Judge calls made: 309 (12 of them retries or re-asks; 51 asks answered from the cache, not calls).': what
    happened (runs.calls.made_text), from the run's record (this job's part of it) and the job's last progress;
    '' without a judge."""
    from textgen_core.runs.calls import made_text

    if job.run_id is None or job.judge is None:
        return ""
    try:
        made = int(data.run(job.run_id)["judge_calls"] or 0) - int(job.calls_before)
    except TextgenError:  # the run was deleted meanwhile
        return ""
    last = job.progress
    text = made_text(made, last.retries if last else None, last.cached if last else None)
    return f" {text[:1].upper()}{text[1:]}."


def run_duration(job: Any) -> str:
    """The run's stored duration, as the Runs page and the CLI show it; the job's own clock before the run exists."""
    if job.run_id is not None:
        try:
            return duration_text(data.run(job.run_id)["duration_s"]) or duration_text(job.elapsed)
        except TextgenError:  # the run was deleted meanwhile
            pass
    return duration_text(job.elapsed)


@st.fragment(run_every=1.0)
def _live_job(job_id: int) -> None:
    """Polled once a second (each poll redraws the panel in the browser: twice a second cost the journey test
    ~2 CPU-s of Chromium per run); a full rerun once the job ends so the page shows the outcome."""
    job = data.jobs().get(job_id)
    if job is None:
        return
    if not job.live:
        data.refresh()
        st.rerun()
    progress_counts(job.progress, job.elapsed, job.run_id)
    if job.progress is not None:
        spend_against_cap(job.progress.prompt_tokens, job.progress.completion_tokens, job.judge, job.spent_before)
    if st.button("Cancel", key=f"job.cancel.{job_id}", disabled=job.cancel.is_set(),
                 help="Stops after the work in flight; finished cells are kept and the run can be resumed"):
        job.cancel.set()
        st.toast("Cancelling after the work in flight...")


def progress_counts(progress: Any, elapsed: float, run_id: int | None) -> None:
    """A progress bar and the live counts: done, unscored, judge calls made (while judging), in flight, tokens."""
    if progress is None:
        st.progress(0.0, text=f"Starting{f' run {run_id}' if run_id else ''}...")
        return
    st.progress(progress.fraction, text=f"{progress.phase}: {progress.done:,} of {progress.total:,} {progress.unit} "
                                        f"({elapsed:.0f} s)")
    judging = progress.unit == "cells"
    done, unscored, *calls, flight, tokens = st.columns(5 if judging else 4)
    done.metric(f"Done ({progress.unit})", f"{progress.done:,}",
                help=f"The progress counts the {progress.total:,} judge cells this run plans to score "
                     "(datum × model × metric): a cell may take several judge calls, or none when its answer is "
                     "in the cache, so cells are not calls" if judging else
                f"Rows scored of the {progress.total:,} this run plans")
    unscored.metric("Unscored", f"{progress.failed:,}")
    for where in calls:
        where.metric("Judge calls made", f"{progress.calls:,}",
                     help=f"Requests sent so far, retries included ({progress.retries:,} of them); answers from "
                          f"the cache are not calls ({progress.cached:,} so far)")
    flight.metric("In flight", f"{progress.in_flight:,}")
    tokens.metric("Tokens", f"{progress.prompt_tokens + progress.completion_tokens:,}",
                  help=f"{progress.prompt_tokens:,} prompt + {progress.completion_tokens:,} completion; "
                       f"{progress.cached:,} replies from the cache")
