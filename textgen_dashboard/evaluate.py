"""Evaluate page: dataset and models, metrics by group with their parameters, judge, estimate, Run.

The metric list and every parameter input come from the MetricSpec declarations;
a metric that cannot run on the chosen dataset is shown disabled with the reason.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from textgen_core.errors import ParameterError
from textgen_core.runs.panel import Jury
from textgen_core.judge.settings import JudgeSettings
from textgen_core.registry import all_metrics, get_metric
from textgen_core.metrics.spec import MetricSpec
from textgen_core.runs.plan import plan_problems

from . import data, panel, state
from .criteria import saved_metrics
from .estimate import show_estimate
from .jobs import start_evaluation
from .safe_text import plain
from .judge_scale import judge_form
from .widgets import describe_reasons, job_panel, link, param_form

GROUPS = {"lexical": "Lexical (computed locally)", "llm": "Judge (an LLM judge model scores each row)",
          "endpoint": "Endpoint-based (embeddings, log-probabilities)"}


def render() -> None:
    """The whole Evaluate page."""
    st.title("Evaluate")
    datasets = data.datasets()
    if datasets.empty:
        st.info("No datasets yet: upload one, or load the sample from Home.")
        link("upload", "Upload", icon=":material/upload_file:")
        return
    dataset_id, models = _dataset_picker(datasets)
    fields = data.dataset_fields(dataset_id)
    chosen, params, errors = _metric_picker(fields)
    judged = [m for m in chosen if not _local(m, params)]
    judge, judge_problem, jury = None, None, None
    if judged:
        st.subheader("Judge")
        judge, judge_problem = judge_form("evaluate")
        jury, jury_problem = panel.jury_form(judge)
        judge_problem = judge_problem or jury_problem
        if judge is not None and not jury_problem:
            show_estimate(dataset_id, models, {m: params[m] for m in judged if m in params}, judge, jury)
    problems = [judge_problem] if judged and judge_problem else []
    if chosen and not errors:
        problems += plan_problems(chosen, params, fields, judge if judged else None)
    _run_section(dataset_id, models, chosen, params, judge, problems, blocked=bool(errors), jury=jury)


def _local(metric: str, params: dict) -> bool:
    """True when the metric runs here without a judge (lexical, or an endpoint metric's local backend)."""
    try:
        return get_metric(metric).is_local(params.get(metric))
    except ParameterError:  # shown by the parameter form; until fixed the metric counts as judged
        return False


def _dataset_picker(datasets: Any) -> tuple[int, list[str]]:
    names = dict(zip(datasets["dataset_id"].astype(int), datasets["name"]))
    preselect = st.session_state.pop(state.EVAL_PRESELECT, None)
    by_name = {name: i for i, name in names.items()}
    if preselect in by_name:
        st.session_state[state.EVAL_DATASET] = by_name[preselect]
    elif st.session_state.get(state.EVAL_DATASET) not in names:
        st.session_state[state.EVAL_DATASET] = next(reversed(names))
    dataset_id = st.selectbox("Dataset", list(names), key=state.EVAL_DATASET, format_func=lambda i: names[i])
    row = datasets.loc[datasets["dataset_id"] == dataset_id].iloc[0]
    available = [str(m) for m in row["models"]]
    picked = st.session_state.get(state.EVAL_MODELS)
    if picked is None or not set(picked) <= set(available):
        st.session_state[state.EVAL_MODELS] = available
    models = st.multiselect("Models", available, key=state.EVAL_MODELS)
    st.caption(f"{int(row['n_rows']):,} rows; fields: {plain(', '.join(sorted(data.dataset_fields(dataset_id)))) or 'none'}")
    return dataset_id, models


def _metric_picker(fields: set[str]) -> tuple[list[str], dict[str, dict[str, Any]], list[str]]:
    """Checkbox per metric (disabled with the reason when it cannot run); parameters of the chosen ones."""
    chosen: list[str] = []
    params: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    columns = sorted(fields)
    specs = list(all_metrics().values()) + saved_metrics()  # saved custom judge metrics with the judge ones
    for group, title in GROUPS.items():
        members = [s for s in specs if s.group == group]
        if not members:
            continue
        st.subheader(title)
        picked = []
        for start in range(0, len(members), 3):  # one st.columns per row: a caption stays under its checkbox
            row = members[start:start + 3]
            picked += [spec for spec, cell in zip(row, st.columns(3)) if _metric_row(spec, fields, cell)]
        for spec in picked:
            chosen.append(spec.name)
            params[spec.name], problems = _params(spec, columns)
            errors += problems
    return chosen, params, errors


def _metric_row(spec: MetricSpec, fields: set[str], where: Any) -> bool:
    """One metric's checkbox in ``where`` (a column); disabled, with the reason, when it cannot run."""
    reasons = spec.missing(fields, {})
    key = state.eval_metric(spec.name)
    if reasons:
        st.session_state[key] = False
    help_text = f"{spec.description} {spec.notes}".strip()
    checked = where.checkbox(f"{spec.label} (`{spec.name}`)", key=key, disabled=bool(reasons), help=help_text)
    if reasons:
        where.caption(f"Unavailable: {plain(describe_reasons(reasons))}")
    return bool(checked)


def _params(spec: MetricSpec, columns: list[str]) -> tuple[dict[str, Any], list[str]]:
    if not spec.params:
        return spec.resolve(), []
    with st.expander(f"{spec.label} parameters"):
        values, problems = param_form(spec, lambda name: state.eval_param(spec.name, name), columns)
        for problem in problems:
            st.error(plain(problem))
    return values, problems


def _run_section(dataset_id: int, models: list[str], chosen: list[str], params: dict[str, dict[str, Any]],
                 judge: JudgeSettings | None, problems: list[str], *, blocked: bool = False,
                 jury: Jury | None = None) -> None:
    """Run button (enabled when nothing is missing or wrong) and the job's progress.

    ``blocked`` means a parameter error is already shown next to its input.
    """
    st.subheader("Run")
    job = data.jobs().get(st.session_state.get(state.EVAL_JOB))
    busy = job is not None and job.live
    if not chosen:
        st.info("Choose at least one metric.")
    if not models:
        st.info("Choose at least one model.")
    for problem in problems:
        st.error(plain(problem))
    ready = bool(chosen and models and not problems and not blocked and not busy)
    if st.button("Run", type="primary", disabled=not ready, key="evaluate.run"):
        judged = any(not _local(m, params) for m in chosen)
        job = start_evaluation(data.jobs(), data.store(), dataset_id, chosen, params, models=models,
                               judge=judge if judged else None, jury=jury if judged else None,
                               label=f"evaluate {', '.join(chosen)}")
        st.session_state[state.EVAL_JOB] = job.job_id
        data.refresh()
    job_panel(state.EVAL_JOB)
