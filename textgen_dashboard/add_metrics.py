"""Runs page, "Add metrics": score more metrics on a finished run, in the background, with the library's extend.

The run keeps its dataset, models and cells (``textgen_core.runs.extend.extend``); a judge metric is asked of a
judge that must rule as the run's judge did, and the judge cache makes a question asked before free. The job is
the Runs page's job (``state.RUNS_JOB``): its progress, Cancel and the link to the run's results are drawn there.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from textgen_core.errors import ParameterError
from textgen_core.metrics.spec import MetricSpec
from textgen_core.registry import all_metrics

from . import data, state
from .criteria import saved_metrics
from .estimate import show_estimate
from .jobs import start_extend
from .judge_scale import judge_form
from .safe_text import plain
from .widgets import describe_reasons, param_form


def add_metrics(run_id: int, status: str) -> None:
    """The "Add metrics" section of a finished run that no job is working on."""
    if status != "finished" or run_id in data.jobs().live_run_ids():
        return
    run = data.run(run_id)
    fields = data.dataset_fields(int(run["dataset_id"]))
    with st.expander("Add metrics to this run", icon=":material/add_chart:"):
        st.caption("Scores more metrics on the same rows, models and judge; the run's own scores stay as they "
                   "are. A question the judge answered before (in any run) comes from the cache, free.")
        specs = addable(run["metrics"], fields)
        if not specs:
            st.info("Every metric this dataset can feed is already in the run.")
            return
        by_name = {spec.name: spec for spec, _ in specs}
        reasons = {spec.name: why for spec, why in specs}
        chosen = st.multiselect("Metrics to add", list(by_name), key=state.RUNS_ADD_METRICS,
                                format_func=lambda name: _option(by_name[name], reasons[name]),
                                help="A metric the dataset cannot feed is listed with the reason and cannot run")
        blocked = [name for name in chosen if reasons[name]]
        for name in blocked:
            st.error(f"{plain(by_name[name].label)} cannot run on this dataset: {plain(reasons[name])}")
        params, errors = _params([by_name[n] for n in chosen if not reasons[n]], sorted(fields))
        judged = [n for n in chosen if n not in blocked and not _local(by_name[n], params.get(n))]
        judge, problem = None, None
        if judged:
            st.markdown("**Judge** (the run's settings: a judge that would rule differently is refused)")
            judge, problem = judge_form("runs-add", run.get("judge") or {})
            if problem:
                st.info(plain(problem))
            else:
                show_estimate(int(run["dataset_id"]), list(run["models"]), {n: params[n] for n in judged}, judge)
        ready = bool(chosen) and not blocked and not errors and not (judged and judge is None)
        if st.button("Add metrics", type="primary", disabled=not ready, key=state.RUNS_ADD_GO,
                     icon=":material/add_chart:"):
            job = start_extend(data.jobs(), data.store(), run_id, chosen, params, judge=judge if judged else None)
            st.session_state[state.RUNS_JOB] = job.job_id
            st.session_state.pop(state.RUNS_ADD_METRICS, None)
            data.refresh()
            st.rerun()


def addable(present: list[str], fields: set[str]) -> list[tuple[MetricSpec, str]]:
    """(metric, why it cannot run or '') of every metric, built-in or saved, the run does not have yet."""
    specs = list(all_metrics().values()) + saved_metrics()
    return [(spec, describe_reasons(spec.missing(fields, {}))) for spec in specs if spec.name not in present]


def _option(spec: MetricSpec, why: str) -> str:
    return f"{spec.label} ({spec.name})" + (f" — unavailable: {why}" if why else "")


def _local(spec: MetricSpec, params: dict[str, Any] | None) -> bool:
    try:
        return spec.is_local(params)
    except ParameterError:  # shown by the parameter form; until fixed it counts as judged
        return False


def _params(specs: list[MetricSpec], columns: list[str]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The parameters of each chosen metric (declared defaults, in a form per metric); errors shown in place."""
    params: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    for spec in specs:
        if not spec.params:
            params[spec.name] = spec.resolve()
            continue
        st.markdown(f"**{plain(spec.label)}**")
        values, problems = param_form(spec, lambda name, metric=spec.name: state.runs_add_param(metric, name),
                                      columns)
        params[spec.name] = values
        errors += problems
        for problem in problems:
            st.error(plain(problem))
    return params, errors
