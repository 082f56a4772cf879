"""Small widgets shared by the dashboard pages.

The metric parameter form is generated from each metric's ``Param``
declarations; nothing here lists a metric or a parameter by hand.
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Mapping

import streamlit as st

from textgen_core.errors import ParameterError, TextgenError
from textgen_core.formatting import duration_text
from textgen_core.judge.settings import (DEFAULT_BASE_URL, ENV_API_KEY, ENV_BASE_URL, ENV_MODEL, ENV_OPENAI_API_KEY,
                                         SETTING_HELP, JudgeSettings)
from textgen_core.metrics.spec import MetricSpec, Param

from .judge_scale import scale_inputs, spend_against_cap
from . import data, page_path
from .safe_text import plain
from .state import judge_key


def link(page: str, label: str, icon: str | None = None) -> None:
    """A link to another page by name ('results'); a caption when it is not in the navigation (one-page tests)."""
    try:
        st.page_link(page_path(page), label=label, icon=icon)
    except Exception:  # the page runs on its own, outside app.py's st.navigation
        st.caption(f"Open {plain(label)} from the navigation.")


def param_widget(param: Param, key: str, columns: list[str]) -> Any:
    """One input for one parameter, with its declared default, limits and help."""
    label, default, help_text = param.name, param.default, param.help
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
        st.success(f"{run} finished in {run_duration(job)}.")
        link("results", "See the results", icon="📊")
    elif job.status == "interrupted":  # a spending cap stopped it
        st.warning(f"{run} stopped: {plain(job.error or 'interrupted')}. Finished cells are kept; resume it from "
                   "the Runs page (with a higher cap, or none).")
        link("runs", "Runs", icon="🗂️")
    elif job.status == "cancelled":
        st.warning(f"{run} was cancelled; finished cells are kept. Resume it from the Runs page.")
        link("runs", "Runs", icon="🗂️")
    else:
        st.error(f"{run} failed: {plain(job.error or 'unknown error')}")


def run_duration(job: Any) -> str:
    """The run's stored duration, as the Runs page and the CLI show it; the job's own clock before the run exists."""
    if job.run_id is not None:
        try:
            return duration_text(data.run(job.run_id)["duration_s"]) or duration_text(job.elapsed)
        except TextgenError:  # the run was deleted meanwhile
            pass
    return duration_text(job.elapsed)


@st.fragment(run_every=0.5)
def _live_job(job_id: int) -> None:
    """Polled twice a second; a full rerun once the job ends so the page shows the outcome."""
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
    """A progress bar and the live counts: done, unscored, in flight, tokens."""
    if progress is None:
        st.progress(0.0, text=f"Starting{f' run {run_id}' if run_id else ''}...")
        return
    st.progress(progress.fraction, text=f"{progress.phase}: {progress.done:,} of {progress.total:,} "
                                        f"({elapsed:.0f} s)")
    done, unscored, flight, tokens = st.columns(4)
    done.metric("Done", f"{progress.done:,}")
    unscored.metric("Unscored", f"{progress.failed:,}")
    flight.metric("In flight", f"{progress.in_flight:,}")
    tokens.metric("Tokens", f"{progress.prompt_tokens + progress.completion_tokens:,}",
                  help=f"{progress.prompt_tokens:,} prompt + {progress.completion_tokens:,} completion; "
                       f"{progress.cached:,} replies from the cache")


# -- judge settings ------------------------------------------------------------
_SECRET_NAMES = (ENV_API_KEY, ENV_OPENAI_API_KEY)


def _configured(*names: str) -> tuple[str, str]:
    """(value, where it came from) of the first of ``names`` set in st.secrets, else in the environment."""
    try:
        if st.secrets.load_if_toml_exists():
            for name in names:
                value = st.secrets.get(name)
                if isinstance(value, str) and value.strip():
                    return value.strip(), f"secrets ({name})"
    except Exception:  # an unreadable secrets file: fall back to the environment
        pass
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value, f"the environment ({name})"
    return "", ""


def _stored_key() -> tuple[str, str]:
    """(API key, where it came from) from st.secrets or the environment; ('', '') when none."""
    return _configured(*_SECRET_NAMES)


def judge_form(page: str, defaults: Mapping[str, Any] | None = None) -> tuple[JudgeSettings | None, str | None]:
    """Judge endpoint inputs; returns (settings, None) or (None, what is missing or wrong).

    The key is typed into a password input or read from secrets/environment; it is
    never put into any other widget, never shown, and only ``public()`` is stored.
    """
    given = dict(defaults or {})
    key = lambda name: judge_key(page, name)  # noqa: E731
    tip = SETTING_HELP
    left, right = st.columns(2)
    with left:
        base_url = st.text_input("Base URL", value=given.get("base_url") or _configured(ENV_BASE_URL)[0]
                                 or DEFAULT_BASE_URL, key=key("base_url"), help=tip["base_url"])
        model = st.text_input("Judge model", value=given.get("model") or _configured(ENV_MODEL)[0],
                              key=key("model"), help=tip["model"])
        typed = st.text_input("API key", type="password", key=key("api_key"), help=tip["api_key"],
                              placeholder="leave empty to use secrets or the environment")
        stored, source = _stored_key()
        st.caption("Key: typed above." if typed else f"Key: from {source}." if source else "Key: none (fine for "
                   "local endpoints that need none).")
        embedding = st.text_input("Embedding model", value=given.get("embedding_model") or "",
                                  key=key("embedding_model"), help=tip["embedding_model"])
    with right:
        concurrency = st.number_input("Concurrency", min_value=1, max_value=256, step=1, key=key("concurrency"),
                                      value=int(given.get("concurrency") or 16), help=tip["concurrency"])
        temperature = st.number_input("Temperature", min_value=0.0, max_value=2.0, step=0.1, key=key("temperature"),
                                      value=float(given.get("temperature") or 0.0), help=tip["temperature"])
        seed = st.number_input("Seed", value=None if given.get("seed") is None else int(given["seed"]), step=1, key=key("seed"), help=tip["seed"])
        prompt_price = st.number_input("Price per 1M prompt tokens", min_value=0.0, key=key("price_prompt"),
                                       value=_float(given.get("price_prompt_per_million")), help=tip["price_prompt_per_million"])
        completion_price = st.number_input("Price per 1M completion tokens", min_value=0.0, key=key("price_completion"),
                                           value=_float(given.get("price_completion_per_million")),
                                           help=tip["price_completion_per_million"])
    scale = scale_inputs(key, given, tip)
    if not model.strip():
        return None, "set the judge model (and base URL) to run judge or endpoint metrics"
    try:
        settings = JudgeSettings(
            base_url=base_url.strip(), model=model.strip(), api_key=(typed or stored).strip(),
            temperature=float(temperature), seed=None if seed is None else int(seed),
            max_tokens=int(given.get("max_tokens") or 1024), concurrency=int(concurrency),
            retries=int(given.get("retries") if given.get("retries") is not None else 4),
            price_prompt_per_million=prompt_price, price_completion_per_million=completion_price,
            embedding_model=embedding.strip() or None, **scale)
    except ParameterError as exc:
        return None, str(exc)
    return settings, None


def _float(value: Any) -> float | None:
    return None if value is None else float(value)
